//! A lock-order inversion, found and printed by the `diagnostics` feature:
//! two threads each hold one account and wait for the other's. One of them
//! enters its second account with `lock_interruptibly`, so the main thread,
//! once the detector has found the cycle, breaks it with an interrupt: that
//! transfer backs off and the other completes.
//!
//! ```text
//! cargo run --example deadlock --features diagnostics
//! ```

#[cfg(not(feature = "shuttle"))]
use {
    metalock::{Synchronized, diagnostics},
    std::sync::{Barrier, mpsc},
    std::thread,
    std::time::Duration,
};

/// A model checker's build has no `diagnostics` (see the crate's features).
#[cfg(feature = "shuttle")]
fn main() {
    eprintln!("deadlock: feature `shuttle` builds no `diagnostics`; run it without `shuttle`");
}

#[cfg(not(feature = "shuttle"))]
fn main() {
    let checking = Synchronized::new(100_i64);
    let savings = Synchronized::new(500_i64);
    let both_hold_one = Barrier::new(2);
    let (handles, interruptible) = mpsc::channel();
    thread::scope(|s| {
        // Two transfers that lock their accounts in opposite orders; the
        // first can be told to give up its second lock.
        for (name, from, to, can_back_off) in [
            ("transfer checking->savings", &checking, &savings, true),
            ("transfer savings->checking", &savings, &checking, false),
        ] {
            let (barrier, handles) = (&both_hold_one, handles.clone());
            thread::Builder::new()
                .name(name.into())
                .spawn_scoped(s, move || {
                    let mut from = from.lock();
                    barrier.wait();
                    let mut to = if can_back_off {
                        handles.send(metalock::interrupt_handle()).unwrap();
                        match to.lock_interruptibly() {
                            Ok(to) => to,
                            Err(metalock::Interrupted) => {
                                println!("{name}: interrupted, backs off");
                                return;
                            }
                        }
                    } else {
                        to.lock()
                    };
                    *from -= 10;
                    *to += 10;
                    println!("{name}: done");
                })
                .expect("spawning a thread");
        }
        let handle = interruptible.recv().unwrap();
        loop {
            let deadlocks = diagnostics::deadlocks();
            if !deadlocks.is_empty() {
                println!("{}", diagnostics::snapshot());
                for deadlock in deadlocks {
                    println!("{deadlock}");
                }
                handle.interrupt();
                break;
            }
            thread::sleep(Duration::from_millis(10));
        }
    });
    let (checking, savings) = (checking.into_inner(), savings.into_inner());
    println!("checking {checking}, savings {savings}");
    assert_eq!(
        (checking, savings),
        (110, 490),
        "one transfer, the other backed off"
    );
}
