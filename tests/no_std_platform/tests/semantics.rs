//! Monitor semantics with metalock built without `std`, through the
//! `StdThreads` platform.

use metalock::{MultiUseWord, Synchronized, lock_records_allocated};
use metalock_no_std_platform::{in_the_future, install};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

#[test]
fn mutual_exclusion_across_threads() {
    install();
    let counter = Arc::new(Synchronized::new(0_u64));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let counter = Arc::clone(&counter);
            thread::spawn(move || {
                for _ in 0..20_000 {
                    *counter.lock() += 1;
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(*counter.lock(), 80_000);
}

#[test]
fn reentrancy_and_payload() {
    install();
    let word = MultiUseWord::with_payload(0xabc);
    let guards: Vec<_> = (0..10).map(|_| word.lock()).collect();
    assert_eq!(guards[9].depth(), 10);
    assert_eq!(word.payload(), 0xabc);
    word.set_payload(0xdef);
    drop(guards);
    assert!(!word.is_locked());
    assert_eq!(word.payload(), 0xdef);
}

#[test]
fn wait_notify_between_threads() {
    install();
    let ready = Arc::new(Synchronized::new(false));
    let waiter = {
        let ready = Arc::clone(&ready);
        thread::spawn(move || {
            let mut guard = ready.lock();
            guard.wait_while(|ready| !*ready);
        })
    };
    loop {
        let mut guard = ready.lock();
        if guard.notify_one() {
            *guard = true;
            break;
        }
        drop(guard);
        thread::sleep(Duration::from_millis(1));
    }
    waiter.join().unwrap();
}

#[test]
fn timed_waits_use_the_platform_clock() {
    install();
    let word = MultiUseWord::new();
    let mut guard = word.lock();
    let before = metalock::Instant::now();
    assert!(guard.wait_for(Duration::from_millis(20)).timed_out());
    let waited = metalock::Instant::now().saturating_duration_since(before);
    assert!(waited >= Duration::from_millis(20), "{waited:?}");
    assert!(
        guard
            .wait_until(in_the_future(Duration::from_millis(5)))
            .timed_out()
    );
    assert_eq!(guard.depth(), 1);
}

#[test]
fn exiting_threads_recycle_their_environments() {
    install();
    let word = Arc::new(MultiUseWord::new());
    // Warm up: one thread's worth of lock records exists afterwards.
    let spawn_and_lock = |word: &Arc<MultiUseWord>| {
        let word = Arc::clone(word);
        thread::spawn(move || drop(word.lock())).join().unwrap();
    };
    spawn_and_lock(&word);
    let before = lock_records_allocated();
    for _ in 0..200 {
        spawn_and_lock(&word);
    }
    // Sequential threads reuse the pooled environment and its records; other
    // tests of this binary run in parallel, hence the slack.
    let grown = lock_records_allocated() - before;
    assert!(grown <= 8 * 16, "{grown} records allocated for 200 threads");
}

#[test]
fn contended_monitor_with_waiters_and_timeouts() {
    install();
    let shared = Arc::new(Synchronized::new(0_u32));
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let (shared, stop) = (Arc::clone(&shared), Arc::clone(&stop));
            thread::spawn(move || {
                let mut rounds = 0;
                while !stop.load(Ordering::Relaxed) && rounds < 2_000 {
                    let mut guard = shared.lock();
                    *guard += 1;
                    if i % 2 == 0 {
                        let _ = guard.wait_for(Duration::from_micros(50));
                    } else {
                        guard.notify_all();
                    }
                    rounds += 1;
                }
                rounds
            })
        })
        .collect();
    let total: u32 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    stop.store(true, Ordering::Relaxed);
    assert_eq!(*shared.lock(), total);
}
