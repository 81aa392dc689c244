//! `ReentrantSynchronized<T>`: a value shared with the thread that holds a
//! reentrant monitor. The semantics it shares with the other kinds
//! (reentrancy, waits at depth, `unlocked`, `bump`) run in `kinds.rs`;
//! here, what is its own:
//!
//! - a value that is not `Sync` (a `Cell`) is shared between threads through
//!   it, with no lost update, at any depth;
//! - a wait two levels deep releases both, while the outer guard's `&T`
//!   lives, and that reference sees what another thread stored meanwhile;
//! - a `Condition` waits with its guard;
//! - its `Debug` never waits for the monitor.

mod common;

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::thread;
use std::time::Duration;

use common::Watchdog;
use metalock::{Condition, ReentrantSynchronized, ReentrantSynchronizedGuard};

const HANG: Duration = Duration::from_secs(120);

#[test]
fn a_cell_is_shared_between_threads_with_no_lost_update() {
    const THREADS: u64 = 4;
    const ROUNDS: u64 = 10_000;
    let _watchdog = Watchdog::arm(HANG);
    let count = ReentrantSynchronized::new(Cell::new(0_u64));
    let increment = |count: &ReentrantSynchronized<Cell<u64>>| {
        let count = count.lock();
        count.set(count.get() + 1);
    };
    thread::scope(|s| {
        for t in 0..THREADS {
            let count = &count;
            s.spawn(move || {
                for round in 0..ROUNDS {
                    if (round + t) % 3 == 0 {
                        let outer = count.lock();
                        increment(count);
                        outer.set(outer.get() + 1);
                    } else {
                        increment(count);
                    }
                }
            });
        }
    });
    let expected: u64 = (0..THREADS)
        .map(|t| ROUNDS + (0..ROUNDS).filter(|r| (r + t) % 3 == 0).count() as u64)
        .sum();
    assert_eq!(count.into_inner().get(), expected);
}

#[test]
fn a_wait_two_levels_deep_releases_both_while_the_outer_reference_lives() {
    let _watchdog = Watchdog::arm(HANG);
    let value = ReentrantSynchronized::new(Cell::new(0));
    let waiting = AtomicBool::new(false);
    thread::scope(|s| {
        s.spawn(|| {
            // Once the waiter waits, the monitor is free: both levels went.
            while !waiting.load(Relaxed) || value.try_lock().is_none() {
                thread::yield_now();
            }
            let guard = value.lock();
            assert_eq!(guard.depth(), 1);
            guard.set(42);
            guard.notify_all();
        });
        let outer = value.lock();
        let seen: &Cell<i32> = &outer;
        let mut inner = value.lock();
        waiting.store(true, Relaxed);
        inner.wait_while(|value| value.get() == 0);
        assert_eq!(inner.depth(), 2);
        assert_eq!(
            seen.get(),
            42,
            "the outer reference sees the other thread's store"
        );
        drop(inner);
        assert_eq!(outer.depth(), 1);
    });
    assert!(!value.is_locked());
}

#[test]
fn a_condition_waits_with_its_guard() {
    let _watchdog = Watchdog::arm(HANG);
    let queue = ReentrantSynchronized::new(Cell::new(None::<u32>));
    let filled = Condition::new();
    let waiting = AtomicBool::new(false);
    thread::scope(|s| {
        s.spawn(|| {
            let outer = queue.lock();
            let mut guard = queue.lock();
            waiting.store(true, Relaxed);
            while guard.get().is_none() {
                filled.wait(&mut guard);
            }
            assert_eq!((guard.depth(), outer.take()), (2, Some(7)));
        });
        // Seen under the monitor, which the waiter releases only by
        // waiting: the notify finds it in the condition's wait set.
        loop {
            let guard = queue.lock();
            if waiting.load(Relaxed) {
                guard.set(Some(7));
                assert!(filled.notify_one());
                break;
            }
            drop(guard);
            thread::yield_now();
        }
    });
    assert_eq!(queue.lock().get(), None);
}

#[test]
fn debug_never_waits_for_the_monitor() {
    let value = ReentrantSynchronized::new(5);
    let guard = value.lock();
    // The holder's own Debug re-enters.
    assert_eq!(format!("{value:?}"), "ReentrantSynchronized { value: 5 }");
    thread::scope(|s| {
        s.spawn(|| {
            assert_eq!(
                format!("{value:?}"),
                "ReentrantSynchronized { value: <locked> }"
            );
        });
    });
    assert_eq!(format!("{guard:?} {guard}"), "5 5");
    let mut guard = guard;
    ReentrantSynchronizedGuard::bump(&mut guard);
    assert_eq!(*guard, 5);
}
