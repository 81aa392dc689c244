//! Semantics of `Condition`: several wait sets on one monitor.
//!
//! - a wait releases every level of the monitor and restores the depth;
//! - a notify reaches only its condition's waiters, the longest-waiting
//!   first, with or without the notifier holding the monitor;
//! - a notified waiter comes back owning the monitor at its depth, also when
//!   other threads barge in;
//! - no notify is lost, also racing timeouts: the waiters a notify says it
//!   marked are exactly those that return notified;
//! - one condition used with two monitors at once is a clear panic;
//! - a notify with nobody waiting does nothing and binds no thread state;
//! - a lone waiter's longer spin ends: it parks, and stays off the CPU
//!   (the kernel's count of its context switches says so).
//!
//! Shared state read "under the monitor" is kept in atomics accessed with
//! `Relaxed`: the monitor orders them. No verdict depends on timing: threads
//! wait for each other by polling with a generous deadline.
// Under a model checker (`--cfg loom`, feature `shuttle`) the crate's
// constructors are not `const` and its primitives run only inside a model.
#![cfg(not(any(loom, feature = "shuttle")))]

mod common;

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::thread;
use std::time::Duration;

use common::{Watchdog, panics};
use metalock::__test_hooks::thread_has_exec_env;
use metalock::{Condition, Instant, MultiUseWord, Synchronized};

const HANG: Duration = Duration::from_secs(120);
const PATIENCE: Duration = Duration::from_secs(30);

/// Polls `condition` until it holds; panics with `what` after `PATIENCE`.
fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn wait_releases_every_level_and_restores_the_depth() {
    let _watchdog = Watchdog::arm(HANG);
    let word = MultiUseWord::with_payload(0x3c);
    let condition = Condition::new();
    let entered = AtomicBool::new(false);
    thread::scope(|s| {
        let g1 = word.lock();
        let g2 = word.lock();
        let mut g3 = word.lock();
        s.spawn(|| {
            // Only possible while the owner, at depth 3, waits.
            let g = word.lock();
            assert_eq!(g.depth(), 1);
            entered.store(true, Relaxed);
            assert!(condition.notify_one());
        });
        while !entered.load(Relaxed) {
            condition.wait(&mut g3);
        }
        assert_eq!(g3.depth(), 3);
        assert!(word.is_held_by_current_thread());
        drop((g3, g2, g1));
    });
    assert!(!word.is_locked());
    assert_eq!(word.payload(), 0x3c);
}

/// Two conditions on one monitor, a waiter on each: notifying one reaches
/// only its waiter; the other stays asleep.
#[test]
fn a_notify_reaches_only_its_conditions_waiters() {
    let _watchdog = Watchdog::arm(HANG);
    let value = Synchronized::new((0_u32, 0_u32));
    let (a, b) = (Condition::new(), Condition::new());
    let waiting = AtomicUsize::new(0);
    let returned_a = AtomicBool::new(false);
    let returned_b = AtomicBool::new(false);
    thread::scope(|s| {
        s.spawn(|| {
            let mut g = value.lock();
            waiting.fetch_add(1, Relaxed);
            a.wait_while(&mut g, |(on_a, _)| *on_a == 0);
            returned_a.store(true, Relaxed);
        });
        s.spawn(|| {
            let mut g = value.lock();
            waiting.fetch_add(1, Relaxed);
            b.wait_while(&mut g, |(_, on_b)| *on_b == 0);
            returned_b.store(true, Relaxed);
        });
        eventually("both wait", || {
            let _g = value.lock();
            waiting.load(Relaxed) == 2
        });
        {
            let mut g = value.lock();
            g.1 = 1;
            // Both conditions hold for their waiters now, but only b is
            // notified: a's waiter must not even wake.
            g.0 = 1;
            assert!(b.notify_one());
        }
        eventually("b's waiter returns", || returned_b.load(Relaxed));
        thread::sleep(Duration::from_millis(50));
        assert!(!returned_a.load(Relaxed), "a notify on b woke a's waiter");
        assert!(a.notify_one());
    });
    assert!(returned_a.load(Relaxed));
}

/// notify_one reaches the thread that has waited longest on the condition.
#[test]
fn notify_one_reaches_the_longest_waiting_first() {
    let _watchdog = Watchdog::arm(HANG);
    const N: usize = 4;
    let word = MultiUseWord::new();
    let condition = Condition::new();
    let waiting = AtomicUsize::new(0);
    let notified = AtomicUsize::new(0);
    let order = std::sync::Mutex::new(Vec::new());
    thread::scope(|s| {
        for i in 0..N {
            s.spawn({
                let (word, condition, waiting, notified, order) =
                    (&word, &condition, &waiting, &notified, &order);
                move || {
                    let mut g = word.lock();
                    waiting.store(waiting.load(Relaxed) + 1, Relaxed);
                    while order.lock().unwrap().len() >= notified.load(Relaxed) {
                        condition.wait(&mut g);
                    }
                    order.lock().unwrap().push(i);
                }
            });
            eventually("the waiter is waiting", || {
                let _g = word.lock();
                waiting.load(Relaxed) == i + 1
            });
        }
        for n in 1..=N {
            {
                let _g = word.lock();
                notified.store(n, Relaxed);
                assert!(condition.notify_one());
            }
            eventually("the notified waiter returns", || {
                order.lock().unwrap().len() == n
            });
        }
    });
    assert_eq!(*order.lock().unwrap(), (0..N).collect::<Vec<_>>());
}

/// A notify from a thread that does not hold the monitor, while nobody
/// holds it, hands the monitor to the waiter at once; while a third thread
/// holds it, that thread's exit does.
#[test]
fn notify_without_holding_the_monitor() {
    let _watchdog = Watchdog::arm(HANG);
    let value = Synchronized::new(false);
    let condition = Condition::new();
    for third_holds_it in [false, true] {
        let waiting = AtomicBool::new(false);
        let returned = AtomicBool::new(false);
        let (locked, release) = (AtomicBool::new(false), AtomicBool::new(false));
        thread::scope(|s| {
            s.spawn(|| {
                let mut g = value.lock();
                waiting.store(true, Relaxed);
                condition.wait_while(&mut g, |ready| !*ready);
                *g = false;
                returned.store(true, Relaxed);
            });
            eventually("the waiter waits", || {
                let _g = value.lock();
                waiting.load(Relaxed)
            });
            *value.lock() = true;
            if third_holds_it {
                s.spawn(|| {
                    let _g = value.lock();
                    locked.store(true, Relaxed);
                    while !release.load(Relaxed) {
                        thread::sleep(Duration::from_millis(1));
                    }
                });
                eventually("the third thread holds it", || locked.load(Relaxed));
            }
            // This thread holds nothing.
            assert!(!value.is_held_by_current_thread());
            assert!(condition.notify_one());
            if third_holds_it {
                thread::sleep(Duration::from_millis(20));
                assert!(
                    !returned.load(Relaxed),
                    "the waiter ran inside another's hold"
                );
                release.store(true, Relaxed);
            }
            eventually("the waiter returns", || returned.load(Relaxed));
        });
    }
}

/// A `notify_all` by a thread that does not hold the monitor counts every
/// waiter it reached, as one by the holder does: the free monitor goes to
/// the oldest, and the rest follow it.
#[test]
fn notify_all_without_holding_the_monitor_counts_every_waiter() {
    let _watchdog = Watchdog::arm(HANG);
    let word = MultiUseWord::new();
    let condition = Condition::new();
    thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| condition.wait(&mut word.lock()));
        }
        eventually("three threads wait", || condition.wait_set_length() == 3);
        assert!(!word.is_locked());
        assert_eq!(condition.notify_all(), 3, "notify_all counts the waiters");
    });
    assert!(!word.is_locked());
}

/// With threads barging in all along, every notified wait comes back owning
/// the monitor at its depth, and each notify_all reaches exactly the
/// waiters it counted.
#[test]
fn notified_waiters_come_back_owning_the_monitor_while_others_barge() {
    let _watchdog = Watchdog::arm(HANG);
    const WAITERS: usize = 4;
    const ROUNDS: usize = 200;
    let word = MultiUseWord::new();
    let condition = Condition::new();
    let generation = AtomicUsize::new(0);
    let waiting = AtomicUsize::new(0);
    let returned = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let marked = thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while !stop.load(Relaxed) {
                    drop(word.lock());
                }
            });
        }
        for _ in 0..WAITERS {
            s.spawn(|| {
                for _ in 0..ROUNDS {
                    let mut g = word.lock();
                    let seen = generation.load(Relaxed);
                    waiting.fetch_add(1, Relaxed);
                    while generation.load(Relaxed) == seen {
                        condition.wait(&mut g);
                        assert!(word.is_held_by_current_thread());
                        assert_eq!(g.depth(), 1);
                    }
                    returned.fetch_add(1, Relaxed);
                }
            });
        }
        let mut marked = 0;
        while returned.load(Relaxed) < WAITERS * ROUNDS {
            let g = word.lock();
            if waiting.load(Relaxed) > 0 {
                generation.fetch_add(1, Relaxed);
                let n = condition.notify_all();
                assert_eq!(n, waiting.swap(0, Relaxed), "notify_all counts the waiters");
                marked += n;
            }
            drop(g);
            thread::yield_now();
        }
        stop.store(true, Relaxed);
        marked
    });
    assert_eq!(marked, WAITERS * ROUNDS);
    assert!(!word.is_locked());
}

/// Timed waits racing notify_one: every waiter a notify_one said it marked
/// returns not timed out, and every other one times out.
#[test]
fn timed_waits_racing_notifies_lose_no_notification() {
    let _watchdog = Watchdog::arm(HANG);
    const THREADS: usize = 4;
    const ROUNDS: usize = 500;
    let word = MultiUseWord::new();
    let condition = Condition::new();
    let notified_returns = AtomicUsize::new(0);
    let marked = AtomicUsize::new(0);
    thread::scope(|s| {
        for t in 0..THREADS {
            let (word, condition, notified_returns, marked) =
                (&word, &condition, &notified_returns, &marked);
            s.spawn(move || {
                for i in 0..ROUNDS {
                    if (i + t) % 2 == 0 {
                        let mut g = word.lock();
                        let timeout = Duration::from_micros(((i * 7 + t) % 50) as u64);
                        if !condition.wait_for(&mut g, timeout).timed_out() {
                            notified_returns.fetch_add(1, Relaxed);
                        }
                    } else {
                        let _g = word.lock();
                        marked.fetch_add(usize::from(condition.notify_one()), Relaxed);
                    }
                }
            });
        }
    });
    // Some of the thousand notifies found a waiter (else the equality below
    // would check nothing), and each of those ended a wait as notified.
    assert!(marked.load(Relaxed) > 0, "no notify ever found a waiter");
    assert_eq!(marked.load(Relaxed), notified_returns.load(Relaxed));
}

#[test]
fn a_condition_used_with_two_monitors_at_once_panics() {
    let _watchdog = Watchdog::arm(HANG);
    let (first, second) = (MultiUseWord::new(), MultiUseWord::new());
    let condition = Condition::new();
    let waiting = AtomicBool::new(false);
    thread::scope(|s| {
        s.spawn(|| {
            let mut g = first.lock();
            waiting.store(true, Relaxed);
            while waiting.load(Relaxed) {
                condition.wait(&mut g);
            }
        });
        eventually("a thread waits with the first monitor", || {
            let _g = first.lock();
            waiting.load(Relaxed)
        });
        let mut g = second.lock();
        let result = panic::catch_unwind(AssertUnwindSafe(|| condition.wait(&mut g)));
        panics::assert_panicked_with(result, "a condition belongs to one monitor at a time");
        // The refused wait released nothing.
        assert!(second.is_held_by_current_thread());
        assert_eq!(g.depth(), 1);
        drop(g);
        let _g = first.lock();
        waiting.store(false, Relaxed);
        assert!(condition.notify_one());
    });
    // Nobody waits any more: the condition may serve the second monitor.
    let mut g = second.lock();
    assert!(
        condition
            .wait_for(&mut g, Duration::from_millis(1))
            .timed_out()
    );
}

#[test]
fn a_notify_with_nobody_waiting_does_nothing() {
    static CONDITION: Condition = Condition::new();
    thread::spawn(|| {
        assert!(!CONDITION.notify_one());
        assert_eq!(CONDITION.notify_all(), 0);
        // It did not even bind an execution environment: one load.
        assert!(!thread_has_exec_env());
    })
    .join()
    .unwrap();
    assert_eq!(
        std::mem::size_of::<Condition>(),
        std::mem::size_of::<usize>()
    );
}

/// The raw word's monitor guard waits on a condition too.
#[test]
fn conditions_with_the_raw_word() {
    let _watchdog = Watchdog::arm(HANG);
    let word = MultiUseWord::new();
    let condition = Condition::new();
    let ready = AtomicBool::new(false);
    thread::scope(|s| {
        s.spawn(|| {
            let _g = word.lock();
            ready.store(true, Relaxed);
            condition.notify_all();
        });
        let mut g = word.lock();
        condition.wait_while(&mut g, |()| !ready.load(Relaxed));
        let result =
            condition.wait_while_for(&mut g, |()| ready.load(Relaxed), Duration::from_millis(1));
        assert!(result.timed_out());
    });
}

/// A waiter that finds no other in its stripe of the wait table spins
/// longer before it parks (`policy` in the monitor), but its spin ends:
/// left waiting with no notify coming, it sleeps in the kernel and stays
/// off the CPU, both on a monitor's own wait set and on a condition.
#[cfg(target_os = "linux")]
#[test]
fn a_lone_waiter_parks_once_its_spin_ends() {
    use common::blocked::{Tid, context_switches, state};

    let _watchdog = Watchdog::arm(HANG);
    for on_condition in [false, true] {
        let value = Synchronized::new(false);
        let condition = Condition::new();
        let tid = Tid::default();
        let switches = thread::scope(|s| {
            s.spawn(|| {
                tid.publish();
                let mut guard = value.lock();
                while !*guard {
                    if on_condition {
                        condition.wait(&mut guard);
                    } else {
                        guard.wait();
                    }
                }
            });
            let tid = tid.get();
            // Asleep at 20 checks in a row, 1 ms apart.
            let deadline = Instant::now() + PATIENCE;
            let mut asleep = 0;
            while asleep < 20 && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(1));
                asleep = if state(tid) == Some('S') {
                    asleep + 1
                } else {
                    0
                };
            }
            let switches = (asleep == 20).then(|| {
                let before = context_switches(tid);
                thread::sleep(Duration::from_millis(100));
                context_switches(tid) - before
            });
            // Ended either way, so that a waiter still spinning fails the
            // assertion below rather than hangs the scope.
            let mut guard = value.lock();
            *guard = true;
            if on_condition {
                condition.notify_all();
            } else {
                guard.notify_all();
            }
            switches
        });
        let switches = switches.expect("the lone waiter never slept: its spin did not end");
        // A thread asleep in one blocking call all along adds none.
        assert!(
            switches <= 1,
            "a lone waiter left the CPU {switches} times in 100 ms: still spinning?"
        );
    }
}
