//! `ReentrantSynchronized<T>`: a value shared with the thread that holds a
//! reentrant monitor. The semantics it shares with the other kinds
//! (reentrancy, waits at depth, `unlocked`, `bump`) run in `kinds.rs`;
//! here, what is its own:
//!
//! - a value that is not `Sync` (a `Cell`) is shared between threads through
//!   it, with no lost update, at any depth;
//! - a wait below the thread's outermost guard, where a method of the value
//!   may be running, panics before it releases anything;
//! - a `Condition` waits with its guard;
//! - its `Debug` never waits for the monitor.

mod common;

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::thread;
use std::time::Duration;

use metalock::Instant;

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

/// Below the outermost guard a method of the value may be running (here
/// `with`, whose closure waits): every wait there panics before it
/// releases anything, so no other thread reaches the value meanwhile; a
/// `wait_while` whose condition is already false returns at once.
#[test]
fn a_wait_below_the_outermost_guard_panics_before_releasing() {
    struct Value(Cell<u32>);
    impl Value {
        fn with<R>(&self, f: impl FnOnce() -> R) -> R {
            self.0.set(1); // an invariant broken for the duration of `f`
            let result = f();
            self.0.set(0);
            result
        }
    }
    let _watchdog = Watchdog::arm(HANG);
    let value = ReentrantSynchronized::new(Value(Cell::new(0)));
    let condition = Condition::new();
    let outer = value.lock();
    type Wait<'a, 'v> = &'a dyn Fn(&mut ReentrantSynchronizedGuard<'v, Value>);
    // Each would return at once if it waited (a deadline passed, an
    // interrupt pending), or, for the four untimed plain waits, hang until
    // the watchdog: a wait that skipped the check fails either way.
    // The result, which a refused wait never returns.
    fn ignore<R>(_: R) {}
    let past = Instant::now();
    let zero = Duration::ZERO;
    let interrupt = || metalock::interrupt_handle().interrupt();
    let waits: [(&str, Wait<'_, '_>); 24] = [
        ("wait", &|g| g.wait()),
        ("wait_for", &|g| ignore(g.wait_for(zero))),
        ("wait_until", &|g| ignore(g.wait_until(past))),
        ("wait_interruptibly", &|g| {
            interrupt();
            ignore(g.wait_interruptibly())
        }),
        ("wait_for_interruptibly", &|g| {
            ignore(g.wait_for_interruptibly(zero))
        }),
        ("wait_until_interruptibly", &|g| {
            ignore(g.wait_until_interruptibly(past))
        }),
        ("wait_while", &|g| g.wait_while(|_| true)),
        ("wait_while_for", &|g| {
            ignore(g.wait_while_for(|_| true, zero))
        }),
        ("wait_while_until", &|g| {
            ignore(g.wait_while_until(|_| true, past))
        }),
        ("wait_while_interruptibly", &|g| {
            interrupt();
            ignore(g.wait_while_interruptibly(|_| true))
        }),
        ("wait_while_for_interruptibly", &|g| {
            ignore(g.wait_while_for_interruptibly(|_| true, zero))
        }),
        ("wait_while_until_interruptibly", &|g| {
            ignore(g.wait_while_until_interruptibly(|_| true, past))
        }),
        ("Condition::wait", &|g| condition.wait(g)),
        ("Condition::wait_for", &|g| {
            ignore(condition.wait_for(g, zero))
        }),
        ("Condition::wait_until", &|g| {
            ignore(condition.wait_until(g, past))
        }),
        ("Condition::wait_interruptibly", &|g| {
            interrupt();
            ignore(condition.wait_interruptibly(g))
        }),
        ("Condition::wait_for_interruptibly", &|g| {
            ignore(condition.wait_for_interruptibly(g, zero))
        }),
        ("Condition::wait_until_interruptibly", &|g| {
            ignore(condition.wait_until_interruptibly(g, past))
        }),
        ("Condition::wait_while", &|g| {
            condition.wait_while(g, |_| true)
        }),
        ("Condition::wait_while_for", &|g| {
            ignore(condition.wait_while_for(g, |_| true, zero))
        }),
        ("Condition::wait_while_until", &|g| {
            ignore(condition.wait_while_until(g, |_| true, past))
        }),
        ("Condition::wait_while_interruptibly", &|g| {
            interrupt();
            ignore(condition.wait_while_interruptibly(g, |_| true))
        }),
        ("Condition::wait_while_for_interruptibly", &|g| {
            ignore(condition.wait_while_for_interruptibly(g, |_| true, zero))
        }),
        ("Condition::wait_while_until_interruptibly", &|g| {
            ignore(condition.wait_while_until_interruptibly(g, |_| true, past))
        }),
    ];
    for (what, wait) in waits {
        let refused = outer.with(|| {
            let mut inner = value.lock();
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| wait(&mut inner)))
        });
        let payload = refused.expect_err(what);
        let text = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .unwrap_or_default();
        assert!(text.contains("waits only one level deep"), "{what}: {text}");
        thread::scope(|s| {
            s.spawn(|| assert!(value.try_lock().is_none(), "{what} released the monitor"));
        });
        assert_eq!(outer.depth(), 1);
        // The refused wait leaves a pending interrupt pending.
        metalock::interrupted();
    }
    let mut inner = value.lock();
    inner.wait_while(|_| false);
    assert!(!inner.wait_while_for(|_| false, Duration::ZERO).timed_out());
    condition.wait_while(&mut inner, |_| false);
    assert_eq!(inner.depth(), 2);
}

#[test]
fn a_condition_waits_with_its_guard() {
    let _watchdog = Watchdog::arm(HANG);
    let queue = ReentrantSynchronized::new(Cell::new(None::<u32>));
    let filled = Condition::new();
    let waiting = AtomicBool::new(false);
    thread::scope(|s| {
        s.spawn(|| {
            let mut guard = queue.lock();
            waiting.store(true, Relaxed);
            while guard.get().is_none() {
                filled.wait(&mut guard);
            }
            assert_eq!((guard.depth(), guard.take()), (1, Some(7)));
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
