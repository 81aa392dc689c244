//! `RawMonitor` under `lock_api`: code generic over `lock_api::RawMutex`
//! runs on it, and everything `lock_api::Mutex` builds on the raw traits
//! works (mapped and `Arc` guards, timed and fair unlocks, `bump`); its
//! guards wait on a `Condition`, directly or as `lock_api::Condvar`'s raw
//! condition variable.
// `RawMonitor` is not built under the model checkers (`--cfg loom`, feature
// `shuttle`).
#![cfg(not(any(loom, feature = "shuttle")))]

mod common;

#[cfg(target_os = "linux")]
use common::blocked::Tid;
use common::{Watchdog, panics};
use lock_api::{ArcMutexGuard, MappedMutexGuard, MutexGuard, RawMutex};
use metalock::{Condition, Interrupted, RawMonitor};
use std::collections::VecDeque;
use std::sync::Arc;
#[cfg(target_os = "linux")]
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::thread;
use std::time::{Duration, Instant};

type Mutex<T> = lock_api::Mutex<RawMonitor, T>;

/// Written against the trait only, as a library generic over its lock would
/// be: threads add to a shared total under the lock.
fn add_up<R: RawMutex + Send + Sync + 'static>(threads: usize, per_thread: usize) -> usize {
    let total = Arc::new(lock_api::Mutex::<R, (usize, usize)>::new((0, 0)));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let total = Arc::clone(&total);
            thread::spawn(move || {
                for _ in 0..per_thread {
                    let mut guard = total.lock();
                    // Two fields updated apart: a torn pair would show.
                    guard.0 += 1;
                    thread::yield_now();
                    guard.1 += 1;
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    let (a, b) = *total.lock();
    assert_eq!(a, b);
    a
}

#[test]
fn a_function_generic_over_raw_mutex_runs_with_raw_monitor() {
    assert_eq!(add_up::<RawMonitor>(4, 2_000), 8_000);
    // The same function, on parking_lot's raw mutex, for comparison.
    assert_eq!(add_up::<parking_lot::RawMutex>(4, 2_000), 8_000);
}

#[test]
fn try_lock_and_timed_lock() {
    let m = Mutex::new(1);
    let guard = m.lock();
    assert!(m.is_locked());
    thread::scope(|s| {
        s.spawn(|| {
            assert!(m.try_lock().is_none());
            assert!(m.try_lock_for(Duration::from_millis(10)).is_none());
        });
    });
    // The owner's own try_lock finds it locked: not reentrant.
    assert!(m.try_lock().is_none());
    // `RawMutexTimed`: a failed timed try returns no earlier than its
    // deadline, even the owner's, which can only fail (a lower bound on
    // the time, the contract, not a measure of speed).
    let start = Instant::now();
    assert!(m.try_lock_for(Duration::from_millis(5)).is_none());
    assert!(start.elapsed() >= Duration::from_millis(5));
    let deadline = Instant::now() + Duration::from_millis(5);
    assert!(m.try_lock_until(deadline).is_none());
    assert!(Instant::now() >= deadline);
    drop(guard);
    assert!(!m.is_locked());
    *m.try_lock_for(Duration::from_millis(10)).unwrap() += 1;
    assert_eq!(*m.lock(), 2);
}

#[test]
#[should_panic(expected = "not reentrant")]
fn a_relock_by_the_owner_panics() {
    let m = Mutex::new(0);
    let _first = m.lock();
    let _second = m.lock();
}

/// A token unlocks only the monitor whose lock issued it: another
/// monitor's token is refused with a message, and both stay held.
#[test]
#[should_panic(expected = "a RawMonitor token must come from the same RawMonitor")]
fn unlock_with_another_monitors_token_panics() {
    let (a, b) = (RawMonitor::INIT, RawMonitor::INIT);
    let _token_a = a.lock();
    let token_b = b.lock();
    // SAFETY: the contract is broken on purpose (b's token for a), which
    // the crate checks before it changes anything.
    unsafe { a.unlock(token_b) };
}

/// A timeout past what the clock can hold would be a `lock`: the owner's
/// panics, naming the call, rather than wait for itself for ever.
#[test]
#[should_panic(
    expected = "RawMonitor::try_lock_for(18446744073709551615.999999999s) by the thread that \
                holds it: it is not reentrant"
)]
fn an_endless_timed_relock_by_the_owner_panics() {
    let m = Mutex::new(0);
    let _first = m.lock();
    let _second = m.try_lock_for(Duration::MAX);
}

#[test]
fn mapped_arc_fair_and_bump() {
    let _watchdog = Watchdog::arm(Duration::from_secs(120));
    let m = Arc::new(Mutex::new((String::from("a"), 0_u32)));

    let mut name: MappedMutexGuard<'_, RawMonitor, String> =
        MutexGuard::map(m.lock(), |pair| &mut pair.0);
    name.push('b');
    drop(name);

    let mut owned: ArcMutexGuard<RawMonitor, (String, u32)> = m.lock_arc();
    owned.1 += 1;
    #[cfg(target_os = "linux")]
    {
        // `bump` lets a thread that sleeps in the queue in, and comes back
        // only after it left.
        let tid = Arc::new(Tid::default());
        let bumped = {
            let (m, tid) = (Arc::clone(&m), Arc::clone(&tid));
            thread::spawn(move || {
                tid.publish();
                m.lock().1 += 10;
            })
        };
        assert!(
            tid.wait_until_blocked(),
            "the thread ended before it queued"
        );
        ArcMutexGuard::bump(&mut owned);
        assert_eq!(owned.1, 11, "bump did not let the queued thread in");
        bumped.join().unwrap();

        // `unlock_fair` hands the monitor to the queued thread: it is that
        // thread's before it even runs.
        let tid = Arc::new(Tid::default());
        let done = Arc::new(AtomicBool::new(false));
        let handed = {
            let (m, tid, done) = (Arc::clone(&m), Arc::clone(&tid), Arc::clone(&done));
            thread::spawn(move || {
                tid.publish();
                let mut guard = m.lock();
                guard.1 += 100;
                while !done.load(SeqCst) {
                    thread::sleep(Duration::from_millis(1));
                }
            })
        };
        assert!(
            tid.wait_until_blocked(),
            "the thread ended before it queued"
        );
        ArcMutexGuard::unlock_fair(owned);
        let taken_back = m.try_lock().is_some();
        done.store(true, SeqCst);
        assert!(!taken_back, "unlock_fair let the releasing thread back in");
        handed.join().unwrap();
    }
    #[cfg(not(target_os = "linux"))]
    {
        owned.1 += 110;
        ArcMutexGuard::bump(&mut owned);
        ArcMutexGuard::unlock_fair(owned);
    }

    let guard = m.lock();
    assert_eq!(guard.0, "ab");
    assert_eq!(guard.1, 111);
    MutexGuard::unlocked_fair(&mut { guard }, || {});
    assert!(!m.is_locked());
}

/// With nobody queued, `bump` keeps the monitor: another thread's
/// `try_lock` fails before and after it. A token's `Debug` shows nothing of
/// the crate's records.
#[test]
fn bump_without_a_queue_keeps_the_monitor() {
    let raw = RawMonitor::new();
    let mut token = raw.lock();
    assert_eq!(format!("{token:?}"), "RawMonitorToken { .. }");
    let taken_by_another =
        || thread::scope(|s| s.spawn(|| raw.try_lock().is_some()).join().unwrap());
    assert!(!taken_by_another());
    // SAFETY: `token` is the one `lock` returned, on this thread.
    unsafe { lock_api::RawMutexFair::bump(&raw, &mut token) };
    assert!(!taken_by_another());
    assert!(raw.is_locked());
    // SAFETY: as above; `bump` kept it valid.
    unsafe { raw.unlock(token) };
    assert!(!raw.is_locked());
}

#[test]
fn a_fair_raw_monitor() {
    let m = lock_api::Mutex::<RawMonitor, u32>::from_raw(RawMonitor::new_fair(), 0);
    // SAFETY: only reads the fairness flag; the raw lock is not used.
    assert!(unsafe { m.raw() }.is_fair());
    thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..250 {
                    *m.lock() += 1;
                }
            });
        }
    });
    assert_eq!(*m.lock(), 1_000);
}

/// parking_lot's `Mutex` + `Condvar` shape on `RawMonitor`: producers and
/// consumers of a bounded buffer wait on two `Condition`s through lock_api's
/// guards, on a plain and on a fair monitor; every item arrives once.
#[test]
fn a_bounded_buffer_through_lock_api_guards_and_conditions() {
    const PAIRS: u64 = 3;
    const ITEMS: u64 = 3_000;
    const CAPACITY: usize = 2;
    let _watchdog = Watchdog::arm(Duration::from_secs(120));
    for raw in [RawMonitor::new(), RawMonitor::new_fair()] {
        let buffer = lock_api::Mutex::from_raw(raw, VecDeque::new());
        let (not_full, not_empty) = (Condition::new(), Condition::new());
        let sum = thread::scope(|s| {
            for p in 0..PAIRS {
                let (buffer, not_full, not_empty) = (&buffer, &not_full, &not_empty);
                s.spawn(move || {
                    for i in 0..ITEMS {
                        let mut items = buffer.lock();
                        // The condition sees the value through the guard.
                        not_full.wait_while(&mut items, |items| items.len() == CAPACITY);
                        items.push_back(p * ITEMS + i);
                        not_empty.notify_one();
                    }
                });
            }
            let consumers: Vec<_> = (0..PAIRS)
                .map(|_| {
                    let (buffer, not_full, not_empty) = (&buffer, &not_full, &not_empty);
                    s.spawn(move || {
                        let mut sum = 0;
                        for _ in 0..ITEMS {
                            let mut items = buffer.lock();
                            // Untimed, so that a lost notify hangs (and the
                            // watchdog reports it).
                            while items.is_empty() {
                                not_empty.wait(&mut items);
                            }
                            sum += items.pop_front().unwrap();
                            not_full.notify_all();
                        }
                        sum
                    })
                })
                .collect();
            consumers
                .into_iter()
                .map(|c| c.join().unwrap())
                .sum::<u64>()
        });
        let n = PAIRS * ITEMS;
        assert_eq!(sum, n * (n - 1) / 2, "an item was lost or taken twice");
        assert!(buffer.lock().is_empty());
        assert!(!buffer.is_locked());
    }
}

/// Every way a wait through a lock_api guard ends (time out, deadline,
/// interrupt, notify) comes back holding the mutex: another thread cannot
/// take it, and the guard's unlock then frees it.
#[test]
fn waits_through_lock_api_guards_come_back_holding_the_mutex() {
    let _watchdog = Watchdog::arm(Duration::from_secs(120));
    let m = Mutex::new(0_u32);
    let changed = Condition::new();
    let held_by_another = |m: &Mutex<u32>| {
        thread::scope(|s| {
            s.spawn(|| m.is_locked() && m.try_lock().is_none())
                .join()
                .unwrap()
        })
    };

    let mut guard = m.lock();
    assert!(
        changed
            .wait_for(&mut guard, Duration::from_millis(1))
            .timed_out()
    );
    assert!(held_by_another(&m));
    let deadline = metalock::Instant::now() + Duration::from_millis(1);
    assert!(changed.wait_until(&mut guard, deadline).timed_out());
    assert!(held_by_another(&m));
    let result = changed.wait_while_for(&mut guard, |n| *n == 0, Duration::from_millis(1));
    assert!(result.timed_out());
    assert!(held_by_another(&m));

    // An interrupt set before the wait ends it at once, and clears the flag.
    metalock::interrupt_handle().interrupt();
    assert_eq!(changed.wait_interruptibly(&mut guard), Err(Interrupted));
    assert!(!metalock::interrupted());
    assert!(held_by_another(&m));
    *guard += 1;
    drop(guard);
    assert!(!m.is_locked());

    // An interrupt from another thread ends a wait that nothing notifies.
    let (handles, handle) = std::sync::mpsc::channel();
    thread::scope(|s| {
        s.spawn(|| {
            let mut guard = m.lock();
            handles.send(metalock::interrupt_handle()).unwrap();
            let end = changed.wait_for_interruptibly(&mut guard, Duration::from_secs(60));
            assert_eq!(end, Err(Interrupted));
            assert!(held_by_another(&m));
            *guard += 1;
        });
        let handle = handle.recv().unwrap();
        // The waiter holds the mutex from before it sent the handle until
        // its wait releases it: once it is free, the waiter waits.
        drop(m.lock());
        handle.interrupt();
    });
    assert_eq!(*m.lock(), 2);

    // A notify ends the wait of a thread that waits for the value to move.
    thread::scope(|s| {
        s.spawn(|| {
            let mut guard = m.lock();
            changed.wait_while(&mut guard, |n| *n == 2);
            assert!(held_by_another(&m));
            assert_eq!(*guard, 3);
        });
        loop {
            let mut guard = m.lock();
            if changed.notify_one() {
                *guard = 3;
                break;
            }
            drop(guard);
            thread::yield_now();
        }
    });
    assert!(!m.is_locked());
}

/// `lock_api::Condvar<Condition>`: the generic condition variable waits
/// with lock_api's guards of a `RawMonitor`, counts the waiters its notifies
/// reach exactly (no spurious wake-ups), times out, and refuses a second
/// mutex while waiters of the first remain.
#[test]
fn lock_api_condvar_on_a_condition() {
    let _watchdog = Watchdog::arm(Duration::from_secs(120));
    type Condvar = lock_api::Condvar<Condition>;
    static CHANGED: Condvar = Condvar::new();
    let state = Mutex::new((0_usize, false));
    thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                let mut guard = state.lock();
                guard.0 += 1;
                CHANGED.wait_while(&mut guard, |(_, go)| !*go);
                guard.0 -= 1;
            });
        }
        // Each waiter counts itself in and waits in one hold of the mutex.
        let mut guard = state.lock();
        while guard.0 < 3 {
            drop(guard);
            thread::yield_now();
            guard = state.lock();
        }
        // Counted exactly: a notified waiter waits no more, even before it
        // runs again.
        assert!(CHANGED.notify_one(), "a waiter waits");
        assert_eq!(CHANGED.notify_all(), 2);
        assert_eq!(CHANGED.notify_all(), 0);
        guard.1 = true;
    });
    assert_eq!(*state.lock(), (0, true));
    assert!(!CHANGED.notify_one());

    let mut guard = state.lock();
    let started = Instant::now();
    assert!(
        CHANGED
            .wait_for(&mut guard, Duration::from_millis(5))
            .timed_out()
    );
    assert!(started.elapsed() >= Duration::from_millis(5));
    let deadline = metalock::Instant::now() + Duration::from_millis(1);
    assert!(CHANGED.wait_until(&mut guard, deadline).timed_out());
    assert!(state.is_locked());
    drop(guard);

    // One monitor at a time, as through `Condition`'s own methods.
    let other = Mutex::new(false);
    let refused = thread::scope(|s| {
        s.spawn(|| {
            let mut guard = other.lock();
            *guard = true;
            CHANGED.wait_while(&mut guard, |waiting| *waiting);
        });
        while !*other.lock() {
            thread::yield_now();
        }
        let mut guard = state.lock();
        let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            CHANGED.wait_for(&mut guard, Duration::from_millis(1))
        }));
        drop(guard);
        *other.lock() = false;
        CHANGED.notify_all();
        refused
    });
    panics::assert_panicked_with(refused, "a condition belongs to one monitor at a time");
}

/// A condition belongs to one monitor at a time, whichever guard waits on
/// it: a `RawMonitor` mutex's guard while a `Synchronized`'s waits panics,
/// as two words would, and leaves the mutex to its guard.
#[test]
fn a_condition_refuses_a_second_monitor_through_a_lock_api_guard() {
    let _watchdog = Watchdog::arm(Duration::from_secs(120));
    // (the waiter waits, the waiter may leave)
    let first = metalock::Synchronized::new((false, false));
    let second = Mutex::new(());
    let condition = Condition::new();
    let (refused, held) = thread::scope(|s| {
        s.spawn(|| {
            let mut guard = first.lock();
            guard.0 = true;
            condition.wait_while(&mut guard, |(_, leave)| !*leave);
        });
        // The waiter holds `first` from setting the flag until its wait
        // releases it: once the flag shows, it waits on the condition.
        while !first.lock().0 {
            thread::yield_now();
        }
        let mut guard = second.lock();
        let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            condition.wait_for(&mut guard, Duration::from_millis(1))
        }));
        let held = second.is_locked();
        drop(guard);
        first.lock().1 = true;
        condition.notify_all();
        (refused, held)
    });
    panics::assert_panicked_with(refused, "a condition belongs to one monitor at a time");
    assert!(held, "the refused wait released the mutex");
    assert!(!second.is_locked());
}

/// A `Condition` wait through a lock_api guard of a `RawMonitor` that the
/// thread does not hold (made by lock_api's `unsafe` raw access against
/// its contract, on purpose: a guard made unchecked with another mutex's
/// token) panics with a message naming that, before it touches the
/// monitor. No other thread can reach a guard's monitor: the method behind
/// the waits asks for a token only the crate makes.
#[test]
fn a_wait_through_a_lock_api_guard_of_a_monitor_not_held_panics() {
    let (m, other) = (Mutex::new(0_u32), Mutex::new(()));
    // SAFETY: `raw` hands out the raw mutex, whose token locks `other`
    // (left locked for good: the token is forgotten with the guard).
    let token = unsafe { other.raw() }.lock();
    // SAFETY: breaks `make_guard_unchecked`'s rule (`m` is not locked) for
    // the test; the guard is forgotten below, never dropped, and its value
    // is never read.
    let mut guard = unsafe { m.make_guard_unchecked(token) };
    let refused =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| condition_wait(&mut guard)));
    panics::assert_panicked_with(refused, "does not hold the RawMonitor");
    std::mem::forget(guard);
    assert!(!m.is_locked());
    assert!(other.is_locked());
    assert_eq!(*m.lock(), 0);

    fn condition_wait(guard: &mut MutexGuard<'_, RawMonitor, u32>) {
        let _ = Condition::new().wait_for(guard, Duration::from_millis(1));
    }
}
