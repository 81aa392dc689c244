//! Timed enters (`try_lock_for`, `try_lock_until`): they give up when the
//! time runs out, succeed when the owner leaves in time, keep the reentrancy
//! rules of their lock, and leave no record queued when they give up.

mod common;

use common::Watchdog;
#[cfg(target_os = "linux")]
use common::blocked::Tid;
use metalock::{MultiUseWord, Synchronized};
use std::sync::Barrier;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::thread;
use std::time::{Duration, Instant};

const PAYLOAD: usize = 0x2B_5A5;

/// Gives a thread the time to queue behind the monitor's owner. No timing
/// is asserted; the sleeps only make the interesting interleavings likely.
fn let_them_queue() {
    thread::sleep(Duration::from_millis(20));
}

#[test]
fn gives_up_while_another_thread_holds_the_monitor() {
    let word = MultiUseWord::with_payload(PAYLOAD);
    let guard = word.lock();
    thread::scope(|s| {
        s.spawn(|| {
            let started = Instant::now();
            assert!(word.try_lock_for(Duration::from_millis(30)).is_none());
            assert!(started.elapsed() >= Duration::from_millis(30));
            assert!(word.try_lock_until(Instant::now()).is_none());
        });
    });
    drop(guard);
    assert!(!word.is_locked());
    assert_eq!(word.payload(), PAYLOAD);
}

#[test]
fn enters_when_the_owner_leaves_in_time() {
    let counter = Synchronized::new(0_u32);
    let held = counter.lock();
    let ready = Barrier::new(2);
    thread::scope(|s| {
        s.spawn(|| {
            ready.wait();
            let mut guard = counter
                .try_lock_for(Duration::from_secs(60))
                .expect("the owner left long before the deadline");
            *guard += 1;
        });
        ready.wait();
        let_them_queue();
        drop(held);
    });
    assert_eq!(*counter.lock(), 1);
}

#[test]
fn reentrancy_rules_are_those_of_the_lock() {
    let word = MultiUseWord::new();
    let outer = word.lock();
    let inner = word
        .try_lock_for(Duration::from_millis(1))
        .expect("the owner re-enters at once");
    assert_eq!(inner.depth(), 2);
    drop(inner);
    drop(outer);

    // A Synchronized is not reentrant: its owner gets None at once, as from
    // try_lock, instead of waiting for itself.
    let value = Synchronized::new(());
    let held = value.lock();
    let started = Instant::now();
    assert!(value.try_lock_for(Duration::from_secs(60)).is_none());
    assert!(started.elapsed() < Duration::from_secs(60));
    drop(held);
    assert!(value.try_lock_for(Duration::ZERO).is_some());
}

/// A timeout too long to add to the clock waits like `lock`.
#[test]
fn an_endless_timeout_waits_like_lock() {
    let word = MultiUseWord::new();
    let guard = word.try_lock_for(Duration::MAX).unwrap();
    assert_eq!(guard.depth(), 1);
    // Not for the owner of a Synchronized: None, as from any try.
    let value = Synchronized::new(());
    let held = value.try_lock_for(Duration::MAX).unwrap();
    assert!(value.try_lock_for(Duration::MAX).is_none());
    drop(held);
}

/// Contenders that give up in every position of the queue (first, middle,
/// last, first of a queue nobody owns) while blocking contenders and a
/// waiter go on: exact counts, the payload intact, nobody left behind.
#[test]
fn timed_contenders_give_up_anywhere_in_the_queue() {
    let _watchdog = Watchdog::arm(Duration::from_secs(120));
    const THREADS: usize = 8;
    const ROUNDS: usize = 2_000;
    let word = MultiUseWord::with_payload(PAYLOAD);
    let counter = AtomicUsize::new(0);
    let entered = AtomicUsize::new(0);
    let gave_up = AtomicUsize::new(0);
    thread::scope(|s| {
        for t in 0..THREADS {
            let (word, counter, entered, gave_up) = (&word, &counter, &entered, &gave_up);
            s.spawn(move || {
                for i in 0..ROUNDS {
                    let guard = if t % 4 == 0 {
                        Some(word.lock())
                    } else {
                        // From nothing to tens of microseconds, so that
                        // some give up at once and some after queueing.
                        word.try_lock_for(Duration::from_micros((i % 7) as u64 * 8))
                    };
                    let Some(guard) = guard else {
                        gave_up.fetch_add(1, Relaxed);
                        continue;
                    };
                    // Relaxed: the monitor orders these.
                    let before = counter.load(Relaxed);
                    if i % 5 == 0 {
                        // Long enough for a queue to form behind us.
                        thread::sleep(Duration::from_micros(30));
                    }
                    counter.store(before + 1, Relaxed);
                    entered.fetch_add(1, Relaxed);
                    drop(guard);
                }
            });
        }
    });
    let entered = entered.load(Relaxed);
    assert_eq!(counter.load(Relaxed), entered);
    assert_eq!(entered + gave_up.load(Relaxed), THREADS * ROUNDS);
    assert!(
        entered >= THREADS / 4 * ROUNDS,
        "every blocking enter got in"
    );
    assert!(!word.is_locked());
    assert_eq!(word.payload(), PAYLOAD);
}

/// Timed contenders that sleep in the queue, first, in the middle and last
/// (deadlines in that order), give up from there, while the blocking
/// contenders queued between them stay; then every blocking contender gets
/// in, and the payload is intact.
#[cfg(target_os = "linux")]
#[test]
fn timed_contenders_give_up_from_the_queue() {
    let _watchdog = Watchdog::arm(Duration::from_secs(120));
    // The queue is formed and checked before the first deadline; on a
    // machine too slow for that, the round proves nothing and is run again
    // with more time.
    for margin_ms in [500, 2_000, 8_000] {
        let word = MultiUseWord::with_payload(PAYLOAD);
        let guard = word.lock();
        let start = Instant::now();
        let deadline = |i: u64| start + Duration::from_millis(margin_ms + 100 * i);
        let entered = AtomicUsize::new(0);
        // In queue order: timed, blocking, timed, blocking, timed.
        let tids: Vec<Tid> = (0..5).map(|_| Tid::default()).collect();
        let queued = thread::scope(|s| {
            let mut queued = true;
            let mut timed = Vec::new();
            for (i, tid) in tids.iter().enumerate() {
                let (word, entered) = (&word, &entered);
                let thread = s.spawn(move || {
                    tid.publish();
                    if i % 2 == 0 {
                        word.try_lock_until(deadline(i as u64 / 2)).map(drop)
                    } else {
                        drop(word.lock());
                        entered.fetch_add(1, Relaxed);
                        Some(())
                    }
                });
                // A timed contender that ended first leaves the round
                // without a verdict.
                queued &= tid.wait_until_blocked();
                if i % 2 == 0 {
                    timed.push(thread);
                }
            }
            queued &= Instant::now() < deadline(0);
            for thread in timed {
                assert!(
                    thread.join().unwrap().is_none(),
                    "a timed contender got the monitor its owner kept"
                );
            }
            assert_eq!(entered.load(Relaxed), 0);
            drop(guard);
            queued
        });
        assert_eq!(entered.load(Relaxed), 2, "a blocking contender was lost");
        assert!(!word.is_locked());
        assert_eq!(word.payload(), PAYLOAD);
        if queued {
            return;
        }
        println!("the queue formed after {margin_ms} ms: again with more time");
    }
    panic!("the queue never formed before the first deadline");
}

/// Contenders enter in the order they queued, also when the last of them
/// gave up and another queued after it: the queue's head, which appends
/// without walking the queue, takes the record before the one that left as
/// the last (else the newcomer would hang off a record in no queue).
#[cfg(target_os = "linux")]
#[test]
fn a_contender_queues_behind_the_last_after_it_gave_up() {
    let _watchdog = Watchdog::arm(Duration::from_secs(120));
    let word = MultiUseWord::with_payload(PAYLOAD);
    let guard = word.lock();
    let order = std::sync::Mutex::new(Vec::new());
    let tids: Vec<Tid> = (0..4).map(|_| Tid::default()).collect();
    let timed_tid = Tid::default();
    thread::scope(|s| {
        let enter = |i: usize| {
            let (word, order, tid) = (&word, &order, &tids[i]);
            s.spawn(move || {
                tid.publish();
                let _guard = word.lock();
                order.lock().unwrap().push(i);
            });
            assert!(tids[i].wait_until_blocked(), "contender {i} queued");
        };
        enter(0);
        enter(1);
        // The last one queues, then gives up.
        let timed = s.spawn(|| {
            timed_tid.publish();
            word.try_lock_for(Duration::from_secs(1)).map(drop)
        });
        assert!(timed_tid.wait_until_blocked(), "the timed contender queued");
        assert!(timed.join().unwrap().is_none());
        enter(2);
        enter(3);
        drop(guard);
    });
    assert_eq!(*order.lock().unwrap(), [0, 1, 2, 3]);
    assert!(!word.is_locked());
    assert_eq!(word.payload(), PAYLOAD);
}

/// Giving up returns the record: a thread that times out again and again
/// does not allocate more records.
#[test]
fn giving_up_returns_the_record() {
    let word = MultiUseWord::new();
    let guard = word.lock();
    thread::scope(|s| {
        s.spawn(|| {
            assert!(word.try_lock_for(Duration::from_micros(50)).is_none());
            let allocated = metalock::lock_records_allocated();
            for _ in 0..1_000 {
                assert!(word.try_lock_for(Duration::from_micros(20)).is_none());
            }
            // Other tests of this binary may allocate meanwhile, but not a
            // thousand records.
            assert!(metalock::lock_records_allocated() < allocated + 100);
        });
    });
    drop(guard);
}
