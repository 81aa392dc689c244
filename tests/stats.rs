//! The `stats` feature counts what paper 000 reports in Tables 2 and 3.
//! One test in this binary: the counters are process-wide.
// A model checker's build (`--cfg loom`, feature `shuttle`) has no `stats`.
#![cfg(all(feature = "stats", not(any(loom, feature = "shuttle"))))]

use metalock::{MultiUseWord, stats};
use std::sync::{Arc, Barrier};
use std::time::Duration;

#[test]
fn counters_follow_the_operations() {
    let word = MultiUseWord::new();

    let before = stats::snapshot();
    for _ in 0..10 {
        drop(word.lock());
    }
    let uncontended = stats::snapshot().since(&before);
    if cfg!(any(feature = "meta-lock-only", feature = "swap-only")) {
        assert_eq!(uncontended.extra_fast_hits, 0);
        assert_eq!(uncontended.get_meta_lock, 20);
    } else {
        assert_eq!(uncontended.extra_fast_hits, 20, "{uncontended:?}");
        assert_eq!(uncontended.get_meta_lock, 0, "{uncontended:?}");
    }

    let before = stats::snapshot();
    {
        let mut guard = word.lock();
        assert!(guard.wait_for(Duration::from_millis(1)).timed_out());
        assert!(!guard.notify_one());
    }
    let waited = stats::snapshot().since(&before);
    assert_eq!(waited.waits, 1);
    assert_eq!(waited.notifies, 1);

    // A second thread blocks on the monitor while this one holds it.
    let word = Arc::new(MultiUseWord::new());
    let barrier = Arc::new(Barrier::new(2));
    let before = stats::snapshot();
    let guard = word.lock();
    let contender = {
        let (word, barrier) = (Arc::clone(&word), Arc::clone(&barrier));
        std::thread::spawn(move || {
            barrier.wait();
            drop(word.lock());
        })
    };
    barrier.wait();
    while stats::snapshot().since(&before).blocking_enters == 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    // The contender counts its blocking enter while it still holds the
    // meta-lock; looking at the word waits for its release.
    assert!(word.is_locked());
    // A queued contender is no waiter: the notify finds nobody to mark
    // without the meta-lock.
    let before_notify = stats::snapshot();
    assert_eq!(guard.notify_all(), 0);
    let notified = stats::snapshot().since(&before_notify);
    assert_eq!(notified.get_meta_lock, 0, "{notified:?}");
    drop(guard);
    contender.join().unwrap();
    let contended = stats::snapshot().since(&before);
    assert_eq!(contended.blocking_enters, 1, "{contended:?}");
    assert!(contended.extra_fast_misses >= 2, "{contended:?}");
    if !cfg!(any(feature = "meta-lock-only", feature = "swap-only")) {
        // The contender's spin lost to the held monitor; invited after the
        // release, it found the monitor free at its first look, which is
        // no spin won.
        assert_eq!(
            (contended.spins_lost, contended.spins_won),
            (1, 0),
            "{contended:?}"
        );
    }
    // Each of the two threads has at least its environment's hot record.
    assert!(stats::snapshot().lock_records_allocated >= 2);

    // A bounded buffer with one condition per kind of waiter and one
    // producer and one consumer: a notify reaches only a thread that can
    // proceed, and only that thread's kind could undo what it was notified
    // for, so no waiter ever wakes to find its condition still false. (With
    // several consumers one may take the item another was notified for.)
    let before = stats::snapshot();
    let moved = bounded_buffer_with_two_conditions(1, 50_000);
    let buffer = stats::snapshot().since(&before);
    assert_eq!(moved, 50_000);
    assert_eq!(buffer.futile_wakeups, 0, "{buffer:?}");
    println!("{}", stats::snapshot());
}

/// Moves `items` items per pair through a buffer of 4 slots with `pairs`
/// producers and consumers, waiting on `not_full` and `not_empty`; returns
/// the items consumed.
fn bounded_buffer_with_two_conditions(pairs: usize, items: usize) -> usize {
    use metalock::{Condition, Synchronized};
    use std::collections::VecDeque;

    let queue = Synchronized::new(VecDeque::new());
    let (not_full, not_empty) = (Condition::new(), Condition::new());
    std::thread::scope(|s| {
        for _ in 0..pairs {
            s.spawn(|| {
                for i in 0..items {
                    let mut q = queue.lock();
                    not_full.wait_while(&mut q, |q| q.len() == 4);
                    q.push_back(i);
                    not_empty.notify_one();
                }
            });
        }
        let consumers: Vec<_> = (0..pairs)
            .map(|_| {
                s.spawn(|| {
                    for _ in 0..items {
                        let mut q = queue.lock();
                        not_empty.wait_while(&mut q, |q| q.is_empty());
                        q.pop_front().unwrap();
                        not_full.notify_one();
                    }
                    items
                })
            })
            .collect();
        consumers.into_iter().map(|c| c.join().unwrap()).sum()
    })
}
