//! `RawMonitor` under `lock_api`: code generic over `lock_api::RawMutex`
//! runs on it, and everything `lock_api::Mutex` builds on the raw traits
//! works (mapped and `Arc` guards, timed and fair unlocks, `bump`).
// `RawMonitor` is not built under the model checkers (`--cfg loom`, feature
// `shuttle`).
#![cfg(not(any(loom, feature = "shuttle")))]

mod common;

use common::Watchdog;
#[cfg(target_os = "linux")]
use common::blocked::Tid;
use lock_api::{ArcMutexGuard, MappedMutexGuard, MutexGuard, RawMutex};
use metalock::RawMonitor;
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

/// A timeout past what the clock can hold is a `lock`: the owner's panics
/// rather than wait for itself for ever.
#[test]
#[should_panic(expected = "not reentrant")]
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
