#![cfg(loom)]
//! Loom models of the two blocking primitives under every slow path: the
//! internal lock (`SwapMutex`: swaps and a wait-on-address, waking one
//! waiter per contended release) and the parker (`SwapParker`: a one-token
//! state word). The crate's other models replace both with loom's mutex and
//! condition variable; these run the shipped algorithms on an emulated
//! futex (`ModelFutex`), so that a lost wake-up shows as a deadlock and a
//! missing ordering as a data race on a loom cell.
//!
//! Run with:
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release --test loom_primitives`

use std::sync::Arc as StdArc;
use std::time::{Duration, Instant};

mod common;
use common::{builder, explore};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::thread;
use metalock::__test_hooks::{ModelFutex, SwapMutex, SwapParker};

type Mutex = SwapMutex<UnsafeCell<usize>, StdArc<ModelFutex>>;
type Parker = SwapParker<StdArc<ModelFutex>>;

/// A fresh emulated futex; with `spurious`, its first untimed wait that
/// would block returns at once.
fn futex(spurious: bool) -> StdArc<ModelFutex> {
    StdArc::new(if spurious {
        ModelFutex::with_spurious_wakeup()
    } else {
        ModelFutex::new()
    })
}

/// Explores `model` on a plain emulated futex and on one that wakes a
/// waiter spuriously once.
fn explore_both(name: &str, model: fn(bool)) {
    for spurious in [false, true] {
        let name = format!("{name} (spurious wake-up: {spurious})");
        explore(&name, builder(3), move || model(spurious));
    }
}

fn bump(mutex: &Mutex) {
    // SAFETY: the cell is only touched under the mutex, and loom reports any
    // access the mutex does not order.
    mutex.with(|cell| cell.with_mut(|n| unsafe { *n += 1 }));
}

/// Three threads take the lock once each: two of them can block while it is
/// held, and each contended release wakes one waiter only, which must pass
/// the wake on at its own release. Loom checks that the increments are
/// ordered (mutual exclusion) and that nobody sleeps for good.
#[test]
fn three_threads_share_the_internal_lock() {
    explore_both("three_threads_share_the_internal_lock", |spurious| {
        let mutex = Arc::new(Mutex::with_futex(UnsafeCell::new(0), futex(spurious)));
        let others: Vec<_> = (0..2)
            .map(|_| {
                let mutex = mutex.clone();
                thread::spawn(move || bump(&mutex))
            })
            .collect();
        bump(&mutex);
        for other in others {
            other.join().unwrap();
        }
        // SAFETY: every other thread is joined.
        mutex.with(|cell| cell.with(|n| assert_eq!(unsafe { *n }, 3)));
    });
}

/// The lock taken twice by each of two threads, so that a thread blocks,
/// is woken, and later blocks again behind the other: the CONTENDED state
/// must survive every hand-over.
#[test]
fn two_threads_take_the_internal_lock_twice() {
    explore_both("two_threads_take_the_internal_lock_twice", |spurious| {
        let mutex = Arc::new(Mutex::with_futex(UnsafeCell::new(0), futex(spurious)));
        let other = {
            let mutex = mutex.clone();
            thread::spawn(move || {
                bump(&mutex);
                bump(&mutex);
            })
        };
        bump(&mutex);
        bump(&mutex);
        other.join().unwrap();
        // SAFETY: the other thread is joined.
        mutex.with(|cell| cell.with(|n| assert_eq!(unsafe { *n }, 4)));
    });
}

/// The owner parks until the flags of two unparkers are set (as the crate
/// parks until its signal is set, reading it with Acquire): a token is
/// never lost, or the owner would sleep for good, also when the second
/// unpark comes while the first token is being taken.
#[test]
fn unparks_from_two_threads_are_never_lost() {
    explore_both("unparks_from_two_threads_are_never_lost", |spurious| {
        let parker = Arc::new(Parker::with_futex(futex(spurious)));
        let flags = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        let unparkers: Vec<_> = (0..2)
            .map(|i| {
                let (parker, flags) = (parker.clone(), flags.clone());
                thread::spawn(move || {
                    // Release pairs with the owner's Acquire load.
                    flags[i].store(true, Ordering::Release);
                    parker.unpark();
                })
            })
            .collect();
        while !flags.iter().all(|flag| flag.load(Ordering::Acquire)) {
            parker.park(None);
        }
        for unparker in unparkers {
            unparker.join().unwrap();
        }
    });
}

/// A timed park races an unpark. A park that returns without a timeout
/// took the token, and the unparker's write before its unpark is visible
/// (the parker's own Acquire, with no flag to order it); one that reports a
/// timeout left the token for the untimed park after it.
#[test]
fn a_timed_park_races_an_unpark() {
    explore_both("a_timed_park_races_an_unpark", |spurious| {
        let parker = Arc::new(Parker::with_futex(futex(spurious)));
        let cell = Arc::new(UnsafeCell::new(0_usize));
        let unparker = {
            let (parker, cell) = (parker.clone(), cell.clone());
            thread::spawn(move || {
                // SAFETY: read by the owner only once it took the token.
                cell.with_mut(|n| unsafe { *n = 7 });
                parker.unpark();
            })
        };
        let deadline = Instant::now() + Duration::from_secs(1);
        if parker.park(Some(deadline)) {
            // Timed out: the token is still to come, or still there.
            while parker.park(None) {}
        }
        // SAFETY: the token taken was the unparker's (nobody else unparks,
        // and an untimed park returns only with a token); loom reports the
        // read if the park's Acquire did not order the write.
        cell.with(|n| assert_eq!(unsafe { *n }, 7));
        unparker.join().unwrap();
    });
}
