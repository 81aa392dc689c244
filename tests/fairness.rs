//! Eventual fairness: a thread that an exit invited to re-contend, and that
//! then lost the monitor to another thread, is handed the monitor by an exit
//! once it has lost twice and the first loss is older than the crate's
//! bound (half a millisecond), instead of re-contending forever. Until
//! then it keeps its place in the queue, ahead of the threads that queued
//! after it.
//!
//! `unlock_fair`, and every release of a fair monitor, hand the monitor to
//! the first queued thread. Notifies under one hold queue each waiter
//! behind the one notified before, ahead of the contenders, without a walk
//! from the owner.
//!
//! The test observes the crate through its hand-off hooks (process-wide,
//! hence this file of its own, whose tests run one at a time: the other
//! tests' fair releases fire the hook too). Sleeps only make the
//! passed-over time long enough; no verdict depends on how long anything
//! takes.
#![cfg(not(loom))]

mod common;
use common::Watchdog;
#[cfg(target_os = "linux")]
use common::blocked::Tid;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

use metalock::__test_hooks::{HandoffEvent, set_handoff_hook};
use metalock::{MonitorGuard, MultiUseWord};

static PASSED_OVER: AtomicUsize = AtomicUsize::new(0);
static HANDED_OVER: AtomicUsize = AtomicUsize::new(0);
static FROM_LAST_NOTIFIED: AtomicUsize = AtomicUsize::new(0);

fn count(event: HandoffEvent) {
    match event {
        HandoffEvent::ContenderPassedOver => PASSED_OVER.fetch_add(1, SeqCst),
        HandoffEvent::MonitorHandedOver => HANDED_OVER.fetch_add(1, SeqCst),
        HandoffEvent::NotifiedFromLastNotified => FROM_LAST_NOTIFIED.fetch_add(1, SeqCst),
        _ => 0,
    };
}

/// The hook and its counters are process-wide: one test at a time.
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Counts hand-off events while it lives, failed test or not.
struct Counting;

impl Counting {
    fn start() -> Self {
        set_handoff_hook(Some(count));
        Counting
    }
}

impl Drop for Counting {
    fn drop(&mut self) {
        set_handoff_hook(None);
    }
}

/// Longer than the crate's fairness bound.
const STARVED: Duration = Duration::from_millis(5);

#[test]
fn a_contender_passed_over_too_long_is_handed_the_monitor() {
    let _serial = serial();
    let _watchdog = Watchdog::arm(Duration::from_secs(60));
    let _counting = Counting::start();
    let word = Arc::new(MultiUseWord::with_payload(9));
    // Each round: a contender blocks behind us; we release and at once
    // re-enter, so that the invited contender, still waking up, loses and
    // queues again (passed over), twice. Should the contender win instead
    // (we were descheduled in between), it leaves, and the next round starts
    // afresh.
    for _round in 0..100 {
        let mut guard = word.lock();
        let done = Arc::new(AtomicBool::new(false));
        let release = Arc::new(AtomicBool::new(false));
        let passed_over_before = PASSED_OVER.load(SeqCst);
        let contender = {
            let (word, done, release) =
                (Arc::clone(&word), Arc::clone(&done), Arc::clone(&release));
            thread::spawn(move || {
                let guard = word.lock();
                assert_eq!(guard.depth(), 1);
                done.store(true, SeqCst);
                // Once passed over twice, it got here by the hand-over: hold
                // the monitor until the test has seen that it is ours.
                if PASSED_OVER.load(SeqCst) >= passed_over_before + 2 {
                    while !release.load(SeqCst) {
                        thread::sleep(Duration::from_millis(1));
                    }
                }
            })
        };
        for _ in 0..200 {
            // Long enough for the contender to give up spinning and queue.
            thread::sleep(Duration::from_millis(1));
            if PASSED_OVER.load(SeqCst) >= passed_over_before + 2 || done.load(SeqCst) {
                break;
            }
            drop(guard);
            guard = word.lock();
        }
        if done.load(SeqCst) || PASSED_OVER.load(SeqCst) < passed_over_before + 2 {
            drop(guard);
            contender.join().unwrap();
            continue;
        }
        // The contender waits in the queue, passed over twice; let it
        // starve past the bound, then release: the exit must hand the
        // monitor over.
        thread::sleep(STARVED);
        let handed_over_before = HANDED_OVER.load(SeqCst);
        drop(guard);
        assert_eq!(HANDED_OVER.load(SeqCst), handed_over_before + 1);
        // The monitor is the contender's now, whether or not it runs yet.
        assert!(word.try_lock().is_none());
        assert!(word.is_locked());
        release.store(true, SeqCst);
        contender.join().unwrap();
        assert!(done.load(SeqCst));
        assert!(!word.is_locked());
        assert_eq!(word.payload(), 9);
        return;
    }
    panic!("in 100 rounds the contender was never passed over twice");
}

/// Spawns a thread that locks `word` and notes `name` in `order` once it
/// holds it; returns once the thread sleeps in the monitor's queue.
#[cfg(target_os = "linux")]
fn queue_contender(
    word: &Arc<MultiUseWord>,
    order: &Arc<Mutex<Vec<&'static str>>>,
    name: &'static str,
) -> thread::JoinHandle<()> {
    let tid = Arc::new(Tid::default());
    let thread = {
        let (word, order, tid) = (Arc::clone(word), Arc::clone(order), Arc::clone(&tid));
        thread::spawn(move || {
            tid.publish();
            let _guard = word.lock();
            order.lock().unwrap().push(name);
        })
    };
    assert!(tid.wait_until_blocked(), "{name} ended before it queued");
    thread
}

#[cfg(target_os = "linux")]
#[test]
fn a_contender_that_lost_keeps_its_place_ahead_of_later_ones() {
    let _serial = serial();
    let _watchdog = Watchdog::arm(Duration::from_secs(60));
    let _counting = Counting::start();
    let word = Arc::new(MultiUseWord::with_payload(5));
    // Each round: two contenders queue behind us; we release and at once
    // re-enter, so that the first, invited and still waking up, loses and
    // queues again. Should it win instead (we were descheduled in between),
    // the next round starts afresh.
    for _round in 0..100 {
        let guard = word.lock();
        let order = Arc::new(Mutex::new(Vec::new()));
        let first = queue_contender(&word, &order, "first");
        let second = queue_contender(&word, &order, "second");
        let passed_over_before = PASSED_OVER.load(SeqCst);
        drop(guard);
        let guard = word.lock();
        if !order.lock().unwrap().is_empty() {
            drop(guard);
            first.join().unwrap();
            second.join().unwrap();
            continue;
        }
        // The first was invited and cannot win while we hold the monitor:
        // wait until it has queued again (the hook fires under the
        // meta-lock that our release takes next, so it is linked by then).
        while PASSED_OVER.load(SeqCst) == passed_over_before {
            thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(PASSED_OVER.load(SeqCst), passed_over_before + 1);
        // Passed over once only: this release invites the first queued
        // thread, which must be the one that lost, not the one behind it.
        drop(guard);
        first.join().unwrap();
        second.join().unwrap();
        assert_eq!(*order.lock().unwrap(), ["first", "second"]);
        return;
    }
    panic!("in 100 rounds the first contender never lost once");
}

/// Locks `word`, waits until a contender has queued behind and sleeps, then
/// lets `release` release the guard and checks that the contender owns the
/// monitor at once: the releasing thread cannot take it back, though the
/// contender may not run yet (after a plain release it usually could).
#[cfg(target_os = "linux")]
fn assert_release_hands_over(word: MultiUseWord, release: impl FnOnce(MonitorGuard<'_>)) {
    let _serial = serial();
    let _watchdog = Watchdog::arm(Duration::from_secs(60));
    let word = Arc::new(word);
    let guard = word.lock();
    let tid = Arc::new(Tid::default());
    let done = Arc::new(AtomicBool::new(false));
    let contender = {
        let (word, tid, done) = (Arc::clone(&word), Arc::clone(&tid), Arc::clone(&done));
        thread::spawn(move || {
            tid.publish();
            let _guard = word.lock();
            // Keep the monitor until the test has seen that it is ours.
            while !done.load(SeqCst) {
                thread::sleep(Duration::from_millis(1));
            }
        })
    };
    assert!(
        tid.wait_until_blocked(),
        "the contender ended before it queued"
    );
    release(guard);
    let taken_back = word.try_lock().is_some();
    let locked = word.is_locked();
    done.store(true, SeqCst);
    assert!(!taken_back, "the release let the releasing thread back in");
    assert!(locked);
    contender.join().unwrap();
    assert!(!word.is_locked());
}

#[cfg(target_os = "linux")]
#[test]
fn unlock_fair_hands_the_monitor_to_the_queued_thread() {
    assert_release_hands_over(MultiUseWord::with_payload(3), |g| g.unlock_fair());
}

#[cfg(target_os = "linux")]
#[test]
fn a_fair_monitor_hands_over_on_every_release() {
    assert_release_hands_over(MultiUseWord::fair_with_payload(3), |g| drop(g));
}

/// A loop of `notify_one` calls under one hold, with a contender queued,
/// queues each waiter behind the one notified before it, found through the
/// owner's record rather than by a walk from the owner (which made such a
/// loop quadratic): the second and third notifies start there. Their order
/// is checked by the crate's debug assertions and by the semantics tests;
/// only the hook shows where the walk began.
#[test]
fn notifies_under_one_hold_continue_from_the_last_notified() {
    let _serial = serial();
    let _watchdog = Watchdog::arm(Duration::from_secs(60));
    let word = MultiUseWord::new();
    thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| word.lock().wait());
        }
        while word.wait_set_length() < 3 {
            thread::sleep(Duration::from_millis(1));
        }
        let guard = word.lock();
        s.spawn(|| drop(word.lock()));
        while word.queue_length() < 1 {
            thread::sleep(Duration::from_millis(1));
        }
        let _counting = Counting::start();
        FROM_LAST_NOTIFIED.store(0, SeqCst);
        for _ in 0..3 {
            assert!(guard.notify_one());
        }
        let from_last = FROM_LAST_NOTIFIED.load(SeqCst);
        drop(guard);
        assert_eq!(
            from_last, 2,
            "notifies that started at the waiter notified last"
        );
    });
}
