//! Bank transfers between accounts that are their own monitors, as Java
//! objects are: each `Account` embeds a `MultiUseWord` and implements
//! `metalock::Monitor`.
//!
//! A transfer locks both accounts in address order, so two opposite
//! transfers can never each hold one account and wait for the other. Many
//! threads transfer at random while an auditor repeatedly locks every account
//! (also in address order) and checks that no money was created or lost. The
//! account methods lock the account themselves, and call each other while
//! holding it: the monitor is reentrant.
//!
//! Run it with:
//!
//! ```text
//! cargo run --release --example bank_transfer
//! ```

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use metalock::{Monitor, MonitorGuard, MultiUseWord};

const ACCOUNTS: usize = 16;
const INITIAL_BALANCE: i64 = 1_000;
const THREADS: u64 = 8;
const TRANSFERS_PER_THREAD: u64 = 250_000;

struct Account {
    word: MultiUseWord,
    id: usize,
    /// Guarded by `word`'s monitor.
    balance: Cell<i64>,
}

// SAFETY: the only non-`Sync` field is `balance`. Apart from `new`, before
// any other thread can see the account, it is touched only by
// `balance_locked` and `set_balance_locked`, which demand a guard of this
// account's monitor; so every shared access is made by the thread that holds
// the monitor, which at most one thread does at a time. Entering the monitor
// synchronizes with the previous owner's exit, so each owner sees the last
// owner's writes.
unsafe impl Sync for Account {}

impl Monitor for Account {
    fn multi_use_word(&self) -> &MultiUseWord {
        &self.word
    }
}

impl Account {
    fn new(id: usize, balance: i64) -> Self {
        Self {
            word: MultiUseWord::new(),
            id,
            balance: Cell::new(balance),
        }
    }

    /// `guard` proves the caller holds this account's monitor, which is
    /// what makes reading the `Cell` from several threads sound.
    fn balance_locked(&self, guard: &MonitorGuard<'_>) -> i64 {
        self.check_guard(guard);
        self.balance.get()
    }

    /// As `balance_locked`.
    fn set_balance_locked(&self, guard: &MonitorGuard<'_>, balance: i64) {
        self.check_guard(guard);
        self.balance.set(balance);
    }

    /// A guard of another account's monitor proves nothing about this one.
    fn check_guard(&self, guard: &MonitorGuard<'_>) {
        assert!(
            std::ptr::eq(guard.word(), &self.word),
            "account {}: guard belongs to another monitor",
            self.id
        );
    }

    /// The balance; locks the account, whether or not the caller holds it
    /// already.
    fn balance(&self) -> i64 {
        let guard = self.lock();
        self.balance_locked(&guard)
    }

    /// Adds `amount` (which may be negative) and returns the depth at which
    /// this thread held the monitor while doing so.
    fn deposit(&self, amount: i64) -> usize {
        let guard = self.lock();
        let balance = self.balance_locked(&guard) + amount;
        assert!(balance >= 0, "account {} overdrawn", self.id);
        self.set_balance_locked(&guard, balance);
        guard.depth()
    }

    /// Takes `amount` out if the balance covers it. The check and the update
    /// must be one atomic step, so this holds the monitor across both and
    /// calls `balance` and `deposit`, which lock it again: without
    /// reentrancy this would deadlock on itself. Returns the depth `deposit`
    /// ran at, or `None` if the funds were insufficient.
    fn withdraw(&self, amount: i64) -> Option<usize> {
        let _guard = self.lock();
        (self.balance() >= amount).then(|| self.deposit(-amount))
    }
}

/// Locks `accounts` in address order; the guards release them when dropped.
/// Every thread that holds several accounts takes them in the same global
/// order, so no cycle of threads each waiting for the next can form.
fn lock_in_address_order<'a>(accounts: &[&'a Account]) -> Vec<MonitorGuard<'a>> {
    let mut ordered = accounts.to_vec();
    ordered.sort_by_key(|account| *account as *const Account as usize);
    ordered.into_iter().map(|account| account.lock()).collect()
}

/// Moves `amount` from `from` to `to` if `from` can afford it. Returns the
/// deepest reentrant hold it made, or `None` if it was refused.
fn transfer(from: &Account, to: &Account, amount: i64) -> Option<usize> {
    // A self-transfer locks the same monitor twice, which reentrancy allows.
    let _guards = lock_in_address_order(&[from, to]);
    let depth = from.withdraw(amount)?;
    to.deposit(amount);
    Some(depth)
}

/// xorshift64: deterministic per thread, and enough to spread transfers
/// over the accounts without a dependency.
fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn main() {
    let accounts: Vec<Account> = (0..ACCOUNTS)
        .map(|id| Account::new(id, INITIAL_BALANCE))
        .collect();
    let expected_total = ACCOUNTS as i64 * INITIAL_BALANCE;

    println!("bank transfer: {ACCOUNTS} accounts, each its own one-word monitor");

    // Reentrancy, on its own first: `withdraw` holds the monitor and calls
    // `deposit`, which enters it again.
    let depth = accounts[0]
        .withdraw(1)
        .expect("a fresh account covers a withdrawal of 1");
    assert_eq!(depth, 2);
    accounts[0].deposit(1);
    println!(
        "  reentrancy: withdraw() holds account 0 and calls deposit(), which locks it at depth {depth}"
    );

    let done = AtomicBool::new(false);
    let audits = AtomicUsize::new(0);
    let start = Instant::now();
    let (completed, refused, deepest) = std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let accounts = &accounts;
                s.spawn(move || {
                    let mut rng = 0x9E37_79B9_7F4A_7C15 ^ (t + 1);
                    let (mut completed, mut refused, mut deepest) = (0_u64, 0_u64, 0);
                    for _ in 0..TRANSFERS_PER_THREAD {
                        let r = next_random(&mut rng);
                        let from = &accounts[r as usize % ACCOUNTS];
                        let to = &accounts[(r >> 16) as usize % ACCOUNTS];
                        // Up to a third of a starting balance, so some
                        // transfers drain an account and later ones are
                        // refused.
                        let amount = ((r >> 32) % (INITIAL_BALANCE as u64 / 3)) as i64 + 1;
                        match transfer(from, to, amount) {
                            Some(depth) => {
                                completed += 1;
                                deepest = deepest.max(depth);
                            }
                            None => refused += 1,
                        }
                    }
                    (completed, refused, deepest)
                })
            })
            .collect();

        // The auditor holds every account at once, so the total it sees is
        // a consistent snapshot even while transfers run.
        s.spawn(|| {
            let all: Vec<&Account> = accounts.iter().collect();
            while !done.load(Ordering::Relaxed) {
                let guards = lock_in_address_order(&all);
                let total: i64 = all.iter().map(|account| account.balance()).sum();
                drop(guards);
                assert_eq!(total, expected_total, "money was created or lost");
                audits.fetch_add(1, Ordering::Relaxed);
                std::thread::yield_now();
            }
        });

        let totals = workers
            .into_iter()
            .map(|h| h.join().expect("a transfer thread panicked"))
            .fold((0, 0, 0), |(c, r, d), (c2, r2, d2)| {
                (c + c2, r + r2, d.max(d2))
            });
        done.store(true, Ordering::Relaxed);
        totals
    });
    let elapsed = start.elapsed();

    let balances: Vec<i64> = accounts.iter().map(Account::balance).collect();
    let total: i64 = balances.iter().sum();
    assert_eq!(total, expected_total, "money was created or lost");
    assert_eq!(completed + refused, THREADS * TRANSFERS_PER_THREAD);

    println!(
        "  {THREADS} threads x {TRANSFERS_PER_THREAD} random transfers, both accounts locked in address order"
    );
    println!("  completed {completed}, refused for insufficient funds {refused}");
    println!(
        "  deepest reentrant hold in a transfer: depth {deepest} (a self-transfer locks the account twice, then withdraw() and deposit() each lock it again)"
    );
    println!(
        "  {} audits, each holding all {ACCOUNTS} accounts at once, saw the total conserved",
        audits.load(Ordering::Relaxed)
    );
    println!("  final balances: {balances:?}");
    println!("  total: {total} = {ACCOUNTS} x {INITIAL_BALANCE} (conserved)");
    println!(
        "  elapsed: {:.3} s ({:.0} transfers/s), lock records allocated: {}",
        elapsed.as_secs_f64(),
        (THREADS * TRANSFERS_PER_THREAD) as f64 / elapsed.as_secs_f64(),
        metalock::lock_records_allocated()
    );
}
