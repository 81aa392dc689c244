//! Monitors for values you don't own: accounts kept as plain
//! `std::sync::atomic::AtomicI64`s, a type with no room for a word, get
//! Java-style monitors through `metalock::lock(&value)`.
//!
//! - a transfer locks both accounts (in address order, so no two transfers
//!   deadlock) so that the check of the balance and both updates are one
//!   atomic step;
//! - a withdrawal that cannot be served yet waits on the account's monitor
//!   until a deposit notifies it;
//! - a withdrawal that will never be served is stopped with an interrupt.
//!
//! ```text
//! cargo run --release --example foreign_values
//! ```

use std::sync::atomic::{AtomicI64, Ordering::Relaxed};
use std::sync::mpsc;
use std::thread;

use metalock::Interrupted;

/// Moves `amount` from `from` to `to` if `from` has it; both monitors are
/// held across the check and the updates. Relaxed: the monitors order every
/// access to a balance.
fn transfer(from: &AtomicI64, to: &AtomicI64, amount: i64) -> bool {
    let (first, second) = if (from as *const AtomicI64) < (to as *const AtomicI64) {
        (from, to)
    } else {
        (to, from)
    };
    let first_guard = metalock::lock(first);
    let second_guard = metalock::lock(second);
    if from.load(Relaxed) < amount {
        return false;
    }
    from.store(from.load(Relaxed) - amount, Relaxed);
    to.store(to.load(Relaxed) + amount, Relaxed);
    // Withdrawals waiting on `to` may now be served.
    let to_guard = if std::ptr::eq(first, to) {
        &first_guard
    } else {
        &second_guard
    };
    to_guard.notify_all();
    true
}

/// Waits until `account` holds `amount`, then takes it; `Err` if the
/// thread is interrupted first.
fn withdraw(account: &AtomicI64, amount: i64) -> Result<(), Interrupted> {
    let mut guard = metalock::lock(account);
    while account.load(Relaxed) < amount {
        guard.wait_interruptibly()?;
    }
    account.store(account.load(Relaxed) - amount, Relaxed);
    Ok(())
}

fn main() {
    let accounts: Vec<AtomicI64> = (0..8).map(|_| AtomicI64::new(1_000)).collect();
    let total = || accounts.iter().map(|a| a.load(Relaxed)).sum::<i64>();

    // Four threads move money around; the total never changes.
    thread::scope(|s| {
        for t in 0..4_usize {
            let accounts = &accounts;
            s.spawn(move || {
                for i in 0..20_000_usize {
                    let from = &accounts[(t + i) % accounts.len()];
                    let to = &accounts[(t * 3 + i * 7 + 1) % accounts.len()];
                    if !std::ptr::eq(from, to) {
                        transfer(from, to, (i % 50) as i64);
                    }
                }
            });
        }
    });
    let audited = accounts.iter().fold(0, |sum, account| {
        // Reading under the monitor: no transfer is half done.
        let _guard = metalock::lock(account);
        sum + account.load(Relaxed)
    });
    assert_eq!(audited, 8_000);
    println!("after 80000 transfers: total {} (was 8000)", total());

    // A withdrawal that waits for a deposit, and one that is interrupted.
    // From an account of its own: what the transfers above left in any one
    // account depends on how they interleaved, and may be less than 300.
    let checking = AtomicI64::new(300);
    let savings = AtomicI64::new(0);
    let (tx, rx) = mpsc::channel();
    thread::scope(|s| {
        let (checking, savings) = (&checking, &savings);
        let patient = s.spawn(move || withdraw(savings, 300));
        let hopeless = s.spawn(move || {
            tx.send(metalock::interrupt_handle()).unwrap();
            withdraw(savings, 1_000_000)
        });
        assert!(transfer(checking, savings, 300), "checking holds 300");
        assert_eq!(patient.join().unwrap(), Ok(()));
        rx.recv().unwrap().interrupt();
        assert_eq!(hopeless.join().unwrap(), Err(Interrupted));
    });
    println!(
        "a waiting withdrawal of 300 was served by a transfer; an impossible one was \
         interrupted; savings now {}",
        savings.load(Relaxed)
    );
    println!(
        "keyed monitors in use: {} (nothing grows with the values ever locked)",
        metalock::keyed_monitors()
    );
}
