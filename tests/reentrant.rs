//! `ReentrantSynchronized<T>`: a value shared with the thread that holds a
//! reentrant monitor. The semantics it shares with the other kinds
//! (reentrancy, waits at depth, `unlocked`, `bump`) run in `kinds.rs`;
//! here, what is its own:
//!
//! - a value that is not `Sync` (a `Cell`) is shared between threads through
//!   it, with no lost update, at any depth;
//! - a wait below the thread's outermost guard, where a method of the value
//!   may be running, panics before it releases anything, through a borrowed
//!   or an `Arc` guard;
//! - a mapped guard holds its level, and `Arc` guards share the value, wait
//!   and unlock as the borrowed guard;
//! - a `Condition` waits with its guard;
//! - its `Debug` never waits for the monitor.

mod common;

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::thread;
use std::time::Duration;

use metalock::{Instant, Interrupted};

use common::Watchdog;
use metalock::{
    ArcReentrantSynchronizedGuard, Condition, MappedReentrantSynchronizedGuard,
    ReentrantSynchronized, ReentrantSynchronizedGuard,
};

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

/// A value whose `with` breaks its invariant while its closure runs.
struct Value(Cell<u32>);

impl Value {
    fn with<R>(&self, f: impl FnOnce() -> R) -> R {
        self.0.set(1);
        let result = f();
        self.0.set(0);
        result
    }
}

/// The result, which a refused wait never returns.
fn ignore<R>(_: R) {}

/// Below the outermost guard a method of the value may be running (here
/// `with`, whose closure waits): every wait there, the guard's twelve and
/// a `Condition`'s twelve, panics before it releases anything, so no other
/// thread reaches the value meanwhile; a `wait_while` whose condition is
/// already false returns at once. `$lock` enters the monitor of `$value`
/// (a borrowed or an `Arc` guard), `$guard` is its guard's type.
macro_rules! every_wait_is_refused_at_depth_two {
    ($value:expr, $lock:expr, $guard:ty) => {{
        let _watchdog = Watchdog::arm(HANG);
        let value = $value;
        let lock = $lock;
        let condition = Condition::new();
        let outer = lock(&value);
        type Wait<'a> = &'a dyn Fn(&mut $guard);
        // Each would return at once if it waited (a deadline passed, an
        // interrupt pending), or, for the four untimed plain waits, hang
        // until the watchdog: a wait that skipped the check fails either way.
        let past = Instant::now();
        let zero = Duration::ZERO;
        let interrupt = || metalock::interrupt_handle().interrupt();
        let waits: [(&str, Wait<'_>); 24] = [
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
                let mut inner = lock(&value);
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
        let mut inner = lock(&value);
        inner.wait_while(|_| false);
        assert!(!inner.wait_while_for(|_| false, Duration::ZERO).timed_out());
        condition.wait_while(&mut inner, |_| false);
        assert_eq!(inner.depth(), 2);
    }};
}

#[test]
fn a_wait_below_the_outermost_guard_panics_before_releasing() {
    every_wait_is_refused_at_depth_two!(
        ReentrantSynchronized::new(Value(Cell::new(0))),
        ReentrantSynchronized::<Value>::lock,
        ReentrantSynchronizedGuard<'_, Value>
    );
}

#[test]
fn an_arc_guard_below_the_outermost_panics_before_releasing() {
    every_wait_is_refused_at_depth_two!(
        Arc::new(ReentrantSynchronized::new(Value(Cell::new(0)))),
        ReentrantSynchronized::<Value>::lock_arc,
        ArcReentrantSynchronizedGuard<Value>
    );
}

/// A mapped guard holds its level: the monitor stays with the thread until
/// the last of its guards, mapped or not, is gone; a failed `try_map`
/// gives the guard back still holding.
#[test]
fn a_mapped_guard_holds_its_level() {
    let _watchdog = Watchdog::arm(HANG);
    let record = ReentrantSynchronized::new((Cell::new(0), vec![1, 2, 3]));
    let held_elsewhere = |record: &ReentrantSynchronized<_>| {
        thread::scope(|s| s.spawn(|| record.try_lock().is_none()).join().unwrap())
    };
    let count = ReentrantSynchronizedGuard::map(record.lock(), |r| &r.0);
    let items = ReentrantSynchronizedGuard::try_map(record.lock(), |r| r.1.get(1)).unwrap();
    let missing = ReentrantSynchronizedGuard::try_map(record.lock(), |r| r.1.get(9)).unwrap_err();
    assert_eq!((*items, missing.depth()), (2, 3));
    let (missing, error) =
        ReentrantSynchronizedGuard::try_map_or_err(missing, |r| r.1.get(9).ok_or("none"))
            .unwrap_err();
    assert_eq!((error, missing.depth()), ("none", 3));
    drop(missing);
    let first = MappedReentrantSynchronizedGuard::map(
        ReentrantSynchronizedGuard::map(record.lock(), |r| &r.1),
        |items| &items[0],
    );
    count.set(*first + *items);
    assert!(held_elsewhere(&record));
    drop(items);
    first.unlock_fair();
    assert!(held_elsewhere(&record), "one level left");
    drop(count);
    assert!(!held_elsewhere(&record));
    assert_eq!(record.lock().0.get(), 3);
    // A panic in `map`'s closure releases the level.
    let outer = record.lock();
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        ReentrantSynchronizedGuard::map(record.lock(), |_| -> &u8 { panic!("in map") })
    }));
    assert!(unwound.is_err());
    assert_eq!(outer.depth(), 1);
    drop(outer);
    assert!(!record.is_locked());
    // A mapped guard of a `Sync` part is `Sync`, whatever the rest.
    fn shared<T: Sync>(_: &T) {}
    shared(&ReentrantSynchronizedGuard::map(record.lock(), |r| &r.1));
}

/// `lock_arc` guards of one value (and the interruptible forms), at two
/// levels and mixed with borrowed guards, on four threads: no lost update,
/// and the guards outlive the `Arc` they came from.
#[test]
fn arc_guards_share_a_cell_between_threads() {
    const THREADS: u64 = 4;
    const ROUNDS: u64 = 5_000;
    let _watchdog = Watchdog::arm(HANG);
    let count = Arc::new(ReentrantSynchronized::new(Cell::new(0_u64)));
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let count = Arc::clone(&count);
            thread::spawn(move || {
                for round in 0..ROUNDS {
                    let outer = match round % 2 {
                        0 => count.lock_arc(),
                        _ => count.lock_arc_interruptibly().expect("no interrupt"),
                    };
                    outer.set(outer.get() + 1);
                    let inner = match round % 6 {
                        0 => count.try_lock_arc().expect("the holder enters"),
                        1 => count.try_lock_arc_for(Duration::ZERO).expect("the holder"),
                        2 => count.lock_arc_interruptibly().expect("no interrupt"),
                        3 => count
                            .try_lock_arc_for_interruptibly(Duration::ZERO)
                            .unwrap()
                            .unwrap(),
                        4 => count
                            .try_lock_arc_until_interruptibly(Instant::now())
                            .unwrap()
                            .unwrap(),
                        _ => count.lock_arc(),
                    };
                    assert_eq!(inner.depth(), 2);
                    inner.set(inner.get() + 1);
                    let borrowed = count.lock();
                    borrowed.set(borrowed.get() + 1);
                    let count = ArcReentrantSynchronizedGuard::into_arc(inner);
                    assert!(count.is_held_by_current_thread());
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let last = {
        let count = Arc::clone(&count);
        count.lock_arc()
    };
    assert_eq!(last.get(), 3 * THREADS * ROUNDS);
    assert!(Arc::ptr_eq(
        ArcReentrantSynchronizedGuard::synchronized(&last),
        &count
    ));
    drop(last);
    assert!(!count.is_locked());
}

/// An `Arc` guard waits one level deep for another thread's notify, and
/// gives up at its deadline; `unlocked` lets another thread in.
#[test]
fn an_arc_guard_waits_and_unlocks() {
    let _watchdog = Watchdog::arm(HANG);
    let flag = Arc::new(ReentrantSynchronized::new(Cell::new(false)));
    let mut guard = flag.lock_arc();
    assert!(guard.wait_for(Duration::from_millis(1)).timed_out());
    thread::scope(|s| {
        s.spawn(|| {
            let guard = flag.lock();
            guard.set(true);
            assert!(guard.notify_one(), "the waiter is in the wait set");
        });
        guard.wait_while(|flag| !flag.get());
    });
    assert_eq!((guard.get(), guard.depth()), (true, 1));
    let entered = ArcReentrantSynchronizedGuard::unlocked(&mut guard, || {
        thread::scope(|s| s.spawn(|| flag.try_lock().is_some()).join().unwrap())
    });
    assert!(entered && flag.is_held_by_current_thread());
    // `bump` lets a queued thread in: it sets the flag back under the
    // monitor, which this thread sees once it has the monitor again.
    thread::scope(|s| {
        s.spawn(|| flag.lock().set(false));
        while guard.get() {
            ArcReentrantSynchronizedGuard::bump(&mut guard);
            thread::yield_now();
        }
    });
    let deadline = Instant::now() + Duration::from_millis(1);
    assert!(
        guard
            .wait_while_until(|flag| !flag.get(), deadline)
            .timed_out()
    );
    {
        let _inner = flag.lock_arc();
        let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            ArcReentrantSynchronizedGuard::unlocked(&mut guard, || ());
        }));
        assert!(refused.is_err(), "unlocked two levels deep panics");
    }
    thread::scope(|s| {
        s.spawn(|| {
            let deadline = Instant::now() + Duration::from_millis(1);
            assert!(flag.try_lock_arc_until(deadline).is_none());
            assert!(flag.try_lock_arc_for(Duration::from_millis(1)).is_none());
        });
    });
    guard.unlock_fair();
    assert!(!flag.is_locked());
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

/// The interruptible `Arc` enters: a pending interrupt refuses each before
/// it enters, by the holder too, and is cleared; one that comes while a
/// contender queues ends its enter; a timed one gives up at its deadline.
#[test]
fn interruptible_arc_locks_end_at_an_interrupt_or_their_deadline() {
    let _watchdog = Watchdog::arm(HANG);
    let shared = Arc::new(ReentrantSynchronized::new(0));
    let held = shared.lock_arc();
    common::refused_when_interrupted(&[
        &|| matches!(shared.lock_arc_interruptibly(), Err(Interrupted)),
        &|| {
            matches!(
                shared.try_lock_arc_for_interruptibly(Duration::MAX),
                Err(Interrupted)
            )
        },
        &|| {
            matches!(
                shared.try_lock_arc_until_interruptibly(Instant::now()),
                Err(Interrupted)
            )
        },
    ]);
    let (handle_tx, handle) = std::sync::mpsc::channel();
    thread::scope(|s| {
        s.spawn(|| {
            let deadline = Instant::now() + Duration::from_millis(5);
            let entered = shared.try_lock_arc_until_interruptibly(deadline);
            assert!(entered.unwrap().is_none());
            assert!(Instant::now() >= deadline, "gave up before its deadline");
            handle_tx.send(metalock::interrupt_handle()).unwrap();
            let entered = shared.try_lock_arc_for_interruptibly(Duration::from_secs(60));
            assert!(matches!(entered, Err(Interrupted)));
        });
        let handle = handle.recv().unwrap();
        while shared.queue_length() == 0 {
            thread::yield_now();
        }
        handle.interrupt();
    });
    drop(held);
    assert_eq!(shared.lock_arc_interruptibly().unwrap().depth(), 1);
}
