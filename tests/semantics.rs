//! Semantics of the one-word monitor (paper 000, sections 4.3-4.4): reentry,
//! wait and notify, timeouts, panics, leaked guards, `try_lock`, the payload,
//! the `Monitor` trait and the rules of `Synchronized`.
//!
//! Shared state that a test reads "under the monitor" is kept in atomics
//! accessed with `Relaxed`: every access happens while holding the monitor,
//! so the monitor alone orders them, as it would a plain field.
//!
//! Apart from the 20 ms timed wait, no test depends on timing for its
//! verdict: threads wait for each other by polling a condition with a
//! generous deadline (only reached if the crate is broken).

mod common;
use common::Watchdog;
use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering::Relaxed};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use metalock::{Instant, Monitor, MonitorGuard, MultiUseWord, Synchronized};

/// How long a test waits for something the crate should make happen at once;
/// reaching it means a hang, never a slow machine.
const PATIENCE: Duration = Duration::from_secs(30);

/// Polls `condition` (typically evaluated under the monitor) until it holds;
/// panics with `what` after [`PATIENCE`].
fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

/// How long a test may run before its watchdog declares it hung.
const HANG: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------------------
// Reentrancy
// ---------------------------------------------------------------------------

#[test]
fn reentrancy_to_depth_100() {
    let _watchdog = Watchdog::arm(HANG);
    const PAYLOAD: usize = 0xAB_CDEF;
    let word = MultiUseWord::with_payload(PAYLOAD);
    let mut guards = Vec::new();
    for level in 1..=100 {
        guards.push(word.lock());
        assert_eq!(guards.last().unwrap().depth(), level);
        assert!(word.is_locked());
        assert!(word.is_held_by_current_thread());
        assert_eq!(word.payload(), PAYLOAD);
    }
    // Every guard of the same thread reports the common depth.
    assert!(guards.iter().all(|g| g.depth() == 100));
    // Another thread can neither enter nor see itself as the owner.
    thread::scope(|s| {
        s.spawn(|| {
            assert!(word.try_lock().is_none());
            assert!(word.is_locked());
            assert!(!word.is_held_by_current_thread());
            assert_eq!(word.payload(), PAYLOAD);
        })
        .join()
        .unwrap();
    });
    for level in (1..=100).rev() {
        assert_eq!(guards.last().unwrap().depth(), level);
        drop(guards.pop());
        assert_eq!(word.is_locked(), level > 1);
        assert_eq!(word.is_held_by_current_thread(), level > 1);
        assert_eq!(word.payload(), PAYLOAD);
    }
    assert!(!word.is_locked());
    // Released for real: another thread enters.
    thread::scope(|s| {
        s.spawn(|| assert_eq!(word.try_lock().expect("free").depth(), 1))
            .join()
            .unwrap();
    });
    assert_eq!(word.payload(), PAYLOAD);
}

#[test]
fn guards_may_be_dropped_in_any_order() {
    let _watchdog = Watchdog::arm(HANG);
    const PAYLOAD: usize = 0x77;
    let word = MultiUseWord::with_payload(PAYLOAD);
    let a = word.lock();
    let b = word.lock();
    let c = word.lock();
    drop(a);
    assert_eq!(b.depth(), 2);
    drop(c);
    assert_eq!(b.depth(), 1);
    assert!(word.is_held_by_current_thread());
    drop(b);
    assert!(!word.is_locked());
    assert_eq!(word.payload(), PAYLOAD);
}

#[test]
fn one_thread_holds_many_monitors_at_once() {
    let _watchdog = Watchdog::arm(HANG);
    // More monitors than the first batch of lock records (8), held at the
    // same time, so the thread's free list must be refilled; released in
    // an interleaved order.
    let words: Vec<MultiUseWord> = (0..100)
        .map(|i| MultiUseWord::with_payload(i * 3))
        .collect();
    let mut guards: Vec<Option<MonitorGuard<'_>>> = words.iter().map(|w| Some(w.lock())).collect();
    for (i, w) in words.iter().enumerate() {
        assert!(w.is_held_by_current_thread());
        assert_eq!(w.payload(), i * 3);
    }
    for i in (0..100).step_by(2).chain((1..100).step_by(2)) {
        guards[i] = None;
        assert!(!words[i].is_locked());
        assert_eq!(words[i].payload(), i * 3);
    }
    for (i, w) in words.iter().enumerate() {
        assert!(!w.is_locked());
        assert_eq!(w.payload(), i * 3);
    }
}

// ---------------------------------------------------------------------------
// Wait and notify
// ---------------------------------------------------------------------------

#[test]
fn wait_releases_the_lock_fully_and_restores_the_depth() {
    let _watchdog = Watchdog::arm(HANG);
    const PAYLOAD: usize = 0x3000_0003;
    let word = MultiUseWord::with_payload(PAYLOAD);
    let entered = AtomicBool::new(false);
    thread::scope(|s| {
        let g1 = word.lock();
        let g2 = word.lock();
        let mut g3 = word.lock();
        assert_eq!(g3.depth(), 3);
        // The other thread can only get in while the owner, at depth 3,
        // is inside `wait`: that proves the wait released all three levels.
        let other = s.spawn(|| {
            let g = word.lock();
            assert_eq!(g.depth(), 1, "the waiter's levels must not leak to us");
            assert!(word.is_held_by_current_thread());
            assert_eq!(word.payload(), PAYLOAD);
            entered.store(true, Relaxed);
            assert!(g.notify_one(), "the owner is waiting");
        });
        while !entered.load(Relaxed) {
            g3.wait();
        }
        assert_eq!(g3.depth(), 3);
        assert_eq!(g1.depth(), 3);
        assert!(word.is_held_by_current_thread());
        assert_eq!(word.payload(), PAYLOAD);
        drop(g3);
        assert_eq!(g2.depth(), 2);
        drop(g2);
        assert_eq!(g1.depth(), 1);
        drop(g1);
        other.join().unwrap();
    });
    assert!(!word.is_locked());
    assert_eq!(word.payload(), PAYLOAD);
}

/// What the notify tests keep under the monitor.
#[derive(Default)]
struct Wakeups {
    word: MultiUseWord,
    /// Waiters registered and not yet gone.
    waiting: AtomicUsize,
    /// Notifications handed out and not yet consumed.
    permits: AtomicUsize,
    /// Every return from `wait`, notified or not.
    returns: AtomicUsize,
    /// Returns that found no permit: a waiter woke without a notification.
    spurious: AtomicUsize,
    /// Waiters that consumed a permit and left.
    woken: AtomicUsize,
}

impl Wakeups {
    fn with_payload(payload: usize) -> Self {
        Self {
            word: MultiUseWord::with_payload(payload),
            ..Self::default()
        }
    }

    /// A waiter: registers and waits until it gets a permit. Every return
    /// from `wait` is counted, so a wake-up without notification shows in
    /// `returns` (and in `spurious`) even though the loop tolerates it.
    fn waiter(&self) {
        let mut g = self.word.lock();
        self.waiting.fetch_add(1, Relaxed);
        loop {
            g.wait();
            self.returns.fetch_add(1, Relaxed);
            if self.permits.load(Relaxed) > 0 {
                self.permits.fetch_sub(1, Relaxed);
                self.woken.fetch_add(1, Relaxed);
                self.waiting.fetch_sub(1, Relaxed);
                break;
            }
            self.spurious.fetch_add(1, Relaxed);
        }
        assert_eq!(g.depth(), 1);
    }

    /// Polls, under the monitor, until `condition` holds.
    fn until(&self, what: &str, condition: impl Fn(&Self) -> bool) {
        eventually(what, || {
            let _g = self.word.lock();
            condition(self)
        });
    }
}

#[test]
fn notify_one_wakes_exactly_one_of_four_waiters() {
    let _watchdog = Watchdog::arm(HANG);
    const N: usize = 4;
    const PAYLOAD: usize = 0xFEED;
    let st = Wakeups::with_payload(PAYLOAD);
    thread::scope(|s| {
        let waiters: Vec<_> = (0..N).map(|_| s.spawn(|| st.waiter())).collect();
        // `waiting` is raised under the monitor right before `wait`, so once
        // we see N under the monitor, all N are in the queue.
        st.until("all waiters waiting", |st| st.waiting.load(Relaxed) == N);
        {
            let g = st.word.lock();
            assert!(g.notify_one(), "four threads are waiting");
            st.permits.store(1, Relaxed);
        }
        st.until("the notified waiter returns", |st| {
            st.woken.load(Relaxed) >= 1
        });
        // Give any wrongly woken waiter time to show up.
        thread::sleep(Duration::from_millis(150));
        // Read the counts, then release every waiter before judging them,
        // so that a failure does not leave waiters blocked forever.
        let (returns, spurious, woken, waiting, marked) = {
            let g = st.word.lock();
            let counts = (
                st.returns.load(Relaxed),
                st.spurious.load(Relaxed),
                st.woken.load(Relaxed),
                st.waiting.load(Relaxed),
                g.notify_all(),
            );
            st.permits.store(N - st.woken.load(Relaxed), Relaxed);
            counts
        };
        for w in waiters {
            w.join().unwrap();
        }
        assert_eq!(returns, 1, "exactly one wait returned after one notify_one");
        assert_eq!(spurious, 0, "a waiter returned without a notification");
        assert_eq!(woken, 1);
        assert_eq!(waiting, N - 1);
        assert_eq!(marked, N - 1, "the three others were still waiting");
    });
    assert_eq!(st.returns.load(Relaxed), N);
    assert_eq!(st.woken.load(Relaxed), N);
    assert_eq!(st.spurious.load(Relaxed), 0);
    assert_eq!(st.permits.load(Relaxed), 0);
    assert!(!st.word.is_locked());
    assert_eq!(st.word.payload(), PAYLOAD);
}

/// `notify_one` wakes the thread that has waited longest, so that a steady
/// stream of new waiters cannot starve an early one.
#[test]
fn notify_one_wakes_waiters_in_the_order_they_waited() {
    let _watchdog = Watchdog::arm(HANG);
    const N: usize = 4;
    let word = MultiUseWord::new();
    let waiting = AtomicUsize::new(0);
    let notified = AtomicUsize::new(0);
    let order = std::sync::Mutex::new(Vec::new());
    thread::scope(|s| {
        for i in 0..N {
            s.spawn({
                let (word, waiting, notified, order) = (&word, &waiting, &notified, &order);
                move || {
                    let mut g = word.lock();
                    waiting.store(waiting.load(Relaxed) + 1, Relaxed);
                    // Returns only once a notification was meant for us:
                    // each `notify_one` below raises `notified` by one.
                    while order.lock().unwrap().len() >= notified.load(Relaxed) {
                        g.wait();
                    }
                    order.lock().unwrap().push(i);
                }
            });
            // Thread i waits before thread i + 1 starts.
            eventually("the waiter is waiting", || {
                let _g = word.lock();
                waiting.load(Relaxed) == i + 1
            });
        }
        for n in 1..=N {
            {
                let g = word.lock();
                notified.store(n, Relaxed);
                assert!(g.notify_one());
            }
            eventually("the notified waiter returns", || {
                order.lock().unwrap().len() == n
            });
        }
    });
    assert_eq!(*order.lock().unwrap(), (0..N).collect::<Vec<_>>());
}

/// `notify_all` queues its waiters behind each other in the order they
/// waited, all ahead of a thread already queued to enter, and they run in
/// that order (one notify queues them in a single walk of the queue).
#[cfg(target_os = "linux")]
#[test]
fn notify_all_queues_its_waiters_in_order_ahead_of_a_contender() {
    waiters_run_in_order_ahead_of_a_contender(0, true);
}

/// So do `notify_one` calls under one hold of the monitor: those made
/// before the contender queues take the queue's end (the queue holds
/// notified waiters only), the later ones go in behind the notified
/// waiters, ahead of the contender.
#[cfg(target_os = "linux")]
#[test]
fn notify_one_calls_queue_their_waiters_in_order_ahead_of_a_contender() {
    waiters_run_in_order_ahead_of_a_contender(3, false);
}

/// Six threads wait on one monitor, one after the other. Its owner makes
/// `ones_first` `notify_one` calls, lets a contender queue, then notifies
/// the rest (`notify_all` if `then_all`, else one call each), and releases
/// the monitor: the waiters run in the order they waited, then the
/// contender.
#[cfg(target_os = "linux")]
fn waiters_run_in_order_ahead_of_a_contender(ones_first: usize, then_all: bool) {
    let _watchdog = Watchdog::arm(HANG);
    const N: usize = 6;
    let word = MultiUseWord::new();
    let waiting = AtomicUsize::new(0);
    let released = AtomicBool::new(false);
    let order = std::sync::Mutex::new(Vec::new());
    let contender = common::blocked::Tid::default();
    let notify_took = thread::scope(|s| {
        for i in 0..N {
            s.spawn({
                let (word, waiting, released, order) = (&word, &waiting, &released, &order);
                move || {
                    let mut g = word.lock();
                    waiting.store(waiting.load(Relaxed) + 1, Relaxed);
                    while !released.load(Relaxed) {
                        g.wait();
                    }
                    order.lock().unwrap().push(i);
                }
            });
            // Thread i waits before thread i + 1 starts.
            eventually("the waiter is waiting", || {
                let _g = word.lock();
                waiting.load(Relaxed) == i + 1
            });
        }
        let g = word.lock();
        released.store(true, Relaxed);
        for _ in 0..ones_first {
            assert!(g.notify_one());
        }
        s.spawn(|| {
            contender.publish();
            let _g = word.lock();
            order.lock().unwrap().push(N);
        });
        assert!(contender.wait_until_blocked(), "the contender queued");
        let start = std::time::Instant::now();
        match then_all {
            true => assert_eq!(g.notify_all(), N - ones_first),
            false => (ones_first..N).for_each(|_| assert!(g.notify_one())),
        }
        start.elapsed()
    });
    let order = order.into_inner().unwrap();
    let waiters: Vec<usize> = order.iter().copied().filter(|&i| i < N).collect();
    assert_eq!(waiters, (0..N).collect::<Vec<_>>());
    // The contender, overtaken by each waiter, counts as passed over too
    // long once that began half a millisecond ago, and the waiters queued
    // after that go behind it: only a slower notify lets it run earlier.
    if notify_took < Duration::from_micros(500) {
        assert_eq!(order[N], N, "the contender ran before a notified waiter");
    }
}

#[test]
fn notify_all_wakes_every_waiter() {
    let _watchdog = Watchdog::arm(HANG);
    const N: usize = 4;
    const PAYLOAD: usize = 0xA11;
    let st = Wakeups::with_payload(PAYLOAD);
    thread::scope(|s| {
        let waiters: Vec<_> = (0..N).map(|_| s.spawn(|| st.waiter())).collect();
        st.until("all waiters waiting", |st| st.waiting.load(Relaxed) == N);
        {
            // From depth 2: notify works at any depth.
            let _outer = st.word.lock();
            let g = st.word.lock();
            assert_eq!(g.notify_all(), N);
            st.permits.store(N, Relaxed);
            // Marked waiters are no longer waiting for a notification.
            assert_eq!(g.notify_all(), 0);
            assert!(!g.notify_one());
        }
        for w in waiters {
            w.join().unwrap();
        }
    });
    assert_eq!(st.returns.load(Relaxed), N);
    assert_eq!(st.woken.load(Relaxed), N);
    assert_eq!(st.spurious.load(Relaxed), 0);
    assert!(!st.word.is_locked());
    assert_eq!(st.word.payload(), PAYLOAD);
}

#[test]
fn notify_before_anyone_waits_is_not_remembered() {
    let _watchdog = Watchdog::arm(HANG);
    const PAYLOAD: usize = 0xDEAD;
    let word = MultiUseWord::with_payload(PAYLOAD);
    {
        let g = word.lock();
        assert!(!g.notify_one(), "nobody waits");
        assert_eq!(g.notify_all(), 0);
    }
    // A later waiter on another thread is not woken by it: its timed wait
    // ends by timeout, reported as such.
    thread::scope(|s| {
        s.spawn(|| {
            let mut g = word.lock();
            assert!(g.wait_for(Duration::from_millis(30)).timed_out());
            assert_eq!(g.depth(), 1);
        })
        .join()
        .unwrap();
    });
    // Nor a waiter on the notifying thread itself.
    {
        let mut g = word.lock();
        assert!(!g.notify_one());
        assert!(g.wait_for(Duration::from_millis(30)).timed_out());
        assert_eq!(g.depth(), 1);
    }
    assert!(!word.is_locked());
    assert_eq!(word.payload(), PAYLOAD);
}

#[test]
fn timed_wait_of_20ms_times_out() {
    let _watchdog = Watchdog::arm(HANG);
    const PAYLOAD: usize = 0x20;
    const TIMEOUT: Duration = Duration::from_millis(20);
    let word = MultiUseWord::with_payload(PAYLOAD);
    let _outer = word.lock();
    let mut g = word.lock();

    let start = Instant::now();
    let result = g.wait_for(TIMEOUT);
    let elapsed = start.elapsed();
    assert!(result.timed_out());
    assert!(elapsed >= TIMEOUT, "returned after {elapsed:?}");
    assert_eq!(g.depth(), 2);
    assert!(word.is_held_by_current_thread());
    assert_eq!(word.payload(), PAYLOAD);

    let start = Instant::now();
    let result = g.wait_until(start + TIMEOUT);
    let elapsed = start.elapsed();
    assert!(result.timed_out());
    assert!(elapsed >= TIMEOUT, "returned after {elapsed:?}");
    assert_eq!(g.depth(), 2);
    assert_eq!(word.payload(), PAYLOAD);
}

#[test]
fn timed_wait_with_expired_deadline_times_out_and_restores_depth() {
    let _watchdog = Watchdog::arm(HANG);
    const PAYLOAD: usize = 0x0;
    let word = MultiUseWord::with_payload(PAYLOAD);
    let _a = word.lock();
    let _b = word.lock();
    let mut g = word.lock();
    assert!(g.wait_for(Duration::ZERO).timed_out());
    assert_eq!(g.depth(), 3);
    let past = Instant::now();
    assert!(g.wait_until(past).timed_out());
    assert_eq!(g.depth(), 3);
    assert!(word.is_held_by_current_thread());
    assert_eq!(word.payload(), PAYLOAD);
}

#[test]
fn notified_timed_wait_reports_no_timeout() {
    let _watchdog = Watchdog::arm(HANG);
    const PAYLOAD: usize = 0x1234;
    let word = MultiUseWord::with_payload(PAYLOAD);
    let waiting = AtomicBool::new(false);
    let notified = AtomicBool::new(false);
    thread::scope(|s| {
        let waiter = s.spawn(|| {
            let mut g = word.lock();
            waiting.store(true, Relaxed);
            // Long enough never to expire unless the notification is lost.
            let result = g.wait_for(PATIENCE);
            assert!(!result.timed_out(), "the notification was lost");
            assert!(notified.load(Relaxed));
        });
        eventually("waiter waiting", || {
            let g = word.lock();
            if waiting.load(Relaxed) {
                assert!(g.notify_one());
                notified.store(true, Relaxed);
                true
            } else {
                false
            }
        });
        waiter.join().unwrap();
    });
    assert!(!word.is_locked());
    assert_eq!(word.payload(), PAYLOAD);
}

#[test]
fn wait_for_duration_max_waits_without_deadline() {
    let _watchdog = Watchdog::arm(HANG);
    // A timeout too large for the clock is a wait without deadline, not an
    // overflow.
    let word = MultiUseWord::with_payload(0x3);
    let waiting = AtomicBool::new(false);
    thread::scope(|s| {
        let waiter = s.spawn(|| {
            let mut g = word.lock();
            waiting.store(true, Relaxed);
            while waiting.load(Relaxed) {
                assert!(!g.wait_for(Duration::MAX).timed_out());
            }
        });
        eventually("waiter waiting", || {
            let g = word.lock();
            let ready = waiting.swap(false, Relaxed);
            if ready {
                assert!(g.notify_one());
            }
            ready
        });
        waiter.join().unwrap();
    });
    assert!(!word.is_locked());
    assert_eq!(word.payload(), 0x3);
}

#[test]
fn notified_waiter_returns_only_after_the_notifier_releases() {
    let _watchdog = Watchdog::arm(HANG);
    // A notification marks the waiter; it does not hand the monitor over.
    const PAYLOAD: usize = 0x4E;
    let word = MultiUseWord::with_payload(PAYLOAD);
    let waiting = AtomicBool::new(false);
    let notified = AtomicBool::new(false);
    let notifier_done = AtomicBool::new(false);
    thread::scope(|s| {
        let waiter = s.spawn(|| {
            let mut g = word.lock();
            waiting.store(true, Relaxed);
            while !notified.load(Relaxed) {
                g.wait();
            }
            assert!(
                notifier_done.load(Relaxed),
                "returned from wait while the notifier held the monitor"
            );
            assert_eq!(g.depth(), 1);
        });
        eventually("waiter waiting", || {
            let g = word.lock();
            if !waiting.load(Relaxed) {
                return false;
            }
            notified.store(true, Relaxed);
            assert!(g.notify_one());
            // Keep the monitor a while after notifying: the waiter must
            // not return before we leave.
            thread::sleep(Duration::from_millis(50));
            assert!(word.is_held_by_current_thread());
            notifier_done.store(true, Relaxed);
            true
        });
        waiter.join().unwrap();
    });
    assert!(!word.is_locked());
    assert_eq!(word.payload(), PAYLOAD);
}

#[test]
fn timed_out_waiter_reacquires_the_monitor_before_returning() {
    let _watchdog = Watchdog::arm(HANG);
    // The deadline passes while another thread holds the monitor: the wait
    // reports the timeout only once it owns the monitor again. A machine so
    // slow that the holder gets in only after the wait ended proves nothing:
    // the round is run again with a longer wait.
    for wait_ms in [100, 400, 1_600] {
        if holder_in_during_a_timed_out_wait(Duration::from_millis(wait_ms)) {
            return;
        }
        println!("the holder did not get in during a wait of {wait_ms} ms: again");
    }
    panic!("the holder never got in during the wait");
}

/// One round of the test above: whether the holder got in during the wait.
fn holder_in_during_a_timed_out_wait(wait: Duration) -> bool {
    const PAYLOAD: usize = 0x71;
    const NOT_YET: usize = 0;
    const WAITING: usize = 1;
    const RETURNED: usize = 2;
    let word = MultiUseWord::with_payload(PAYLOAD);
    let phase = AtomicUsize::new(NOT_YET);
    // Both set in one critical section of the holder.
    let holder_in = AtomicBool::new(false);
    let holder_done = AtomicBool::new(false);
    let concluded = thread::scope(|s| {
        let waiter = s.spawn(|| {
            let _outer = word.lock();
            let mut g = word.lock();
            phase.store(WAITING, Relaxed);
            let result = g.wait_for(wait);
            assert!(result.timed_out());
            assert_eq!(
                holder_in.load(Relaxed),
                holder_done.load(Relaxed),
                "returned from wait while another thread held the monitor"
            );
            phase.store(RETURNED, Relaxed);
            assert_eq!(g.depth(), 2);
            assert!(word.is_held_by_current_thread());
            holder_in.load(Relaxed)
        });
        eventually("waiter waiting or back", || {
            let _g = word.lock();
            match phase.load(Relaxed) {
                NOT_YET => false,
                WAITING => {
                    holder_in.store(true, Relaxed);
                    // Hold the monitor well past the waiter's deadline.
                    thread::sleep(wait * 2);
                    holder_done.store(true, Relaxed);
                    true
                }
                _ => true,
            }
        });
        waiter.join().unwrap()
    });
    assert!(!word.is_locked());
    assert_eq!(word.payload(), PAYLOAD);
    concluded
}

// ---------------------------------------------------------------------------
// Panics and leaked guards
// ---------------------------------------------------------------------------

#[test]
fn panic_inside_a_guard_releases_the_monitor() {
    let _watchdog = Watchdog::arm(HANG);
    const PAYLOAD: usize = 0xBAD;
    let word = MultiUseWord::with_payload(PAYLOAD);

    // On another thread, at depth 2.
    let result = thread::scope(|s| {
        s.spawn(|| {
            let _g1 = word.lock();
            let _g2 = word.lock();
            panic!("deliberate panic inside the monitor");
        })
        .join()
    });
    assert!(result.is_err());
    assert!(!word.is_locked());
    assert_eq!(word.payload(), PAYLOAD);
    thread::scope(|s| {
        s.spawn(|| {
            let g = word.try_lock().expect("the panicking thread released it");
            assert_eq!(g.depth(), 1);
        })
        .join()
        .unwrap();
    });

    // On this thread, inside `Monitor::synchronized`.
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        word.synchronized(|g| {
            let _inner = g.word().lock();
            panic!("deliberate panic inside synchronized");
        })
    }));
    assert!(result.is_err());
    assert!(!word.is_locked());
    assert!(!word.is_held_by_current_thread());
    thread::scope(|s| {
        s.spawn(|| {
            let g = word.lock();
            assert_eq!(g.depth(), 1);
        })
        .join()
        .unwrap();
    });
    assert_eq!(word.payload(), PAYLOAD);
}

#[test]
fn panic_inside_a_synchronized_guard_releases_it_without_poisoning() {
    let _watchdog = Watchdog::arm(HANG);
    let value = Synchronized::new(10_u32);
    let result = thread::scope(|s| {
        s.spawn(|| {
            let mut g = value.lock();
            *g += 1;
            panic!("deliberate panic inside Synchronized");
        })
        .join()
    });
    assert!(result.is_err());
    assert!(!value.is_locked());
    thread::scope(|s| {
        s.spawn(|| assert_eq!(*value.try_lock().expect("released"), 11))
            .join()
            .unwrap();
    });
}

#[test]
fn forgotten_guard_on_an_exited_thread_leaves_the_object_locked() {
    let _watchdog = Watchdog::arm(HANG);
    const PAYLOAD: usize = 0xF0F0;
    // Leaked on purpose: the monitor stays held forever.
    let leaked: &'static MultiUseWord = Box::leak(Box::new(MultiUseWord::with_payload(PAYLOAD)));
    thread::spawn(move || {
        let outer = leaked.lock();
        let inner = leaked.lock();
        mem::forget(inner);
        mem::forget(outer);
    })
    .join()
    .unwrap();

    assert!(leaked.is_locked());
    assert!(!leaked.is_held_by_current_thread());
    assert!(leaked.try_lock().is_none());
    assert_eq!(leaked.payload(), PAYLOAD);

    // Other objects keep working, on this thread and on new threads (which
    // may take pooled execution environments: none of them may be the exited
    // owner's, or that thread would think it owns the leaked monitor).
    let word = MultiUseWord::with_payload(PAYLOAD + 1);
    let counter = AtomicUsize::new(0);
    thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                assert!(leaked.is_locked());
                assert!(!leaked.is_held_by_current_thread());
                assert!(leaked.try_lock().is_none());
                assert_eq!(leaked.payload(), PAYLOAD);
                for _ in 0..200 {
                    let _g = word.lock();
                    let _g2 = word.lock();
                    let v = counter.load(Relaxed);
                    counter.store(v + 1, Relaxed);
                }
            });
        }
    });
    assert_eq!(counter.load(Relaxed), 1600);
    assert!(!word.is_locked());
    assert_eq!(word.payload(), PAYLOAD + 1);

    // And the leaked object is still locked, its payload intact.
    assert!(leaked.is_locked());
    assert!(leaked.try_lock().is_none());
    assert_eq!(leaked.payload(), PAYLOAD);
    // The payload can still be replaced while it is held.
    leaked.set_payload(PAYLOAD + 2);
    assert_eq!(leaked.payload(), PAYLOAD + 2);
    assert!(leaked.is_locked());
}

/// A word moved away while a forgotten guard keeps it locked leaves its old
/// address to a fresh word: entering that one must really lock it, not be
/// taken for a recursive enter of the moved word (whose record the owner
/// entered last).
#[test]
fn a_fresh_word_at_the_address_of_a_moved_locked_word_is_not_ours() {
    let _watchdog = Watchdog::arm(HANG);
    let mut slot = MultiUseWord::with_payload(1);
    mem::forget(slot.lock());
    let moved = mem::replace(&mut slot, MultiUseWord::with_payload(2));
    assert!(moved.is_held_by_current_thread());
    assert!(!slot.is_locked());
    let outer = slot.lock();
    assert_eq!(outer.depth(), 1);
    let inner = slot.lock();
    assert_eq!(inner.depth(), 2);
    thread::scope(|s| {
        s.spawn(|| assert!(slot.try_lock().is_none()))
            .join()
            .unwrap();
    });
    drop(inner);
    drop(outer);
    assert!(!slot.is_locked());
    assert_eq!(slot.payload(), 2);
    thread::scope(|s| {
        s.spawn(|| assert!(slot.try_lock().is_some()))
            .join()
            .unwrap();
    });
    assert!(moved.is_held_by_current_thread());
    assert_eq!(moved.payload(), 1);
}

#[test]
fn forgotten_synchronized_guard_on_an_exited_thread_leaves_it_locked() {
    let _watchdog = Watchdog::arm(HANG);
    let leaked: &'static Synchronized<u8> = Box::leak(Box::new(Synchronized::new(7)));
    thread::spawn(move || mem::forget(leaked.lock()))
        .join()
        .unwrap();
    assert!(leaked.is_locked());
    assert!(!leaked.is_held_by_current_thread());
    assert!(leaked.try_lock().is_none());
    assert!(format!("{leaked:?}").contains("<locked>"));
    thread::scope(|s| {
        s.spawn(|| assert!(leaked.try_lock().is_none()))
            .join()
            .unwrap();
    });
}

// ---------------------------------------------------------------------------
// try_lock, ownership queries, the Monitor trait, the payload
// ---------------------------------------------------------------------------

#[test]
fn try_lock_semantics() {
    let _watchdog = Watchdog::arm(HANG);
    const PAYLOAD: usize = 0x7;
    let word = MultiUseWord::with_payload(PAYLOAD);
    let outer = word.try_lock().expect("free: Some");
    assert_eq!(outer.depth(), 1);
    let inner = word.try_lock().expect("the owner re-enters: Some");
    assert_eq!(inner.depth(), 2);
    thread::scope(|s| {
        s.spawn(|| {
            assert!(word.try_lock().is_none(), "held by another thread: None");
        })
        .join()
        .unwrap();
    });
    drop(inner);
    drop(outer);
    thread::scope(|s| {
        s.spawn(|| assert_eq!(word.try_lock().expect("free again").depth(), 1))
            .join()
            .unwrap();
    });
    assert!(!word.is_locked());
    assert_eq!(word.payload(), PAYLOAD);
}

#[test]
fn try_lock_succeeds_while_the_owner_waits() {
    let _watchdog = Watchdog::arm(HANG);
    const PAYLOAD: usize = 0x99;
    let word = MultiUseWord::with_payload(PAYLOAD);
    let ready = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    thread::scope(|s| {
        let owner = s.spawn(|| {
            let mut g = word.lock();
            ready.store(true, Relaxed);
            while !done.load(Relaxed) {
                g.wait();
            }
            assert_eq!(g.depth(), 1);
        });
        // `ready` is set under the monitor, which the owner keeps until it
        // waits: once we see it, the owner waits and, not notified, stays
        // waiting. Nobody owns the monitor then.
        eventually("owner waiting", || {
            let _g = word.lock();
            ready.load(Relaxed)
        });
        assert!(!word.is_locked(), "the only holder waits: nobody owns it");
        assert!(!word.is_held_by_current_thread());
        assert_eq!(word.payload(), PAYLOAD);
        let g = word.try_lock().expect("free while the owner waits");
        assert_eq!(g.depth(), 1);
        done.store(true, Relaxed);
        assert_eq!(g.notify_all(), 1);
        drop(g);
        owner.join().unwrap();
    });
    assert!(!word.is_locked());
    assert_eq!(word.payload(), PAYLOAD);
}

#[test]
fn is_held_by_current_thread() {
    let _watchdog = Watchdog::arm(HANG);
    let word = MultiUseWord::new();
    assert!(!word.is_held_by_current_thread());
    assert!(!word.is_locked());
    let g = word.lock();
    assert!(word.is_held_by_current_thread());
    assert!(word.is_locked());
    let g2 = word.lock();
    assert!(word.is_held_by_current_thread());
    thread::scope(|s| {
        s.spawn(|| {
            assert!(!word.is_held_by_current_thread());
            assert!(word.is_locked());
        })
        .join()
        .unwrap();
    });
    drop(g2);
    assert!(word.is_held_by_current_thread());
    drop(g);
    assert!(!word.is_held_by_current_thread());
    assert!(!word.is_locked());
    assert_eq!(word.payload(), 0);
}

/// A user type with a monitor, as every Java object has one.
struct Account {
    word: MultiUseWord,
    /// Updated by a plain load and store: only the monitor keeps the
    /// read-modify-write from losing updates.
    balance: AtomicI64,
}

impl Monitor for Account {
    fn multi_use_word(&self) -> &MultiUseWord {
        &self.word
    }
}

fn deposit<M: Monitor>(monitor: &M, balance: &AtomicI64, amount: i64) {
    monitor.synchronized(|g| {
        assert_eq!(g.depth(), 1);
        let b = balance.load(Relaxed);
        thread::yield_now();
        balance.store(b + amount, Relaxed);
    });
}

#[test]
fn monitor_trait_on_a_user_struct() {
    let _watchdog = Watchdog::arm(HANG);
    const PAYLOAD: usize = 0xACC;
    let account = Account {
        word: MultiUseWord::with_payload(PAYLOAD),
        balance: AtomicI64::new(0),
    };
    thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..250 {
                    deposit(&account, &account.balance, 2);
                }
            });
        }
    });
    assert_eq!(account.balance.load(Relaxed), 2000);

    // The trait's lock, try_lock and nested synchronized.
    let depth = account.synchronized(|g| {
        assert!(account.multi_use_word().is_held_by_current_thread());
        let inner = Monitor::lock(&account);
        let again = Monitor::try_lock(&account).expect("reentrant");
        assert_eq!(again.depth(), 3);
        drop(again);
        drop(inner);
        account.synchronized(|g2| g2.depth()) + g.depth()
    });
    assert_eq!(depth, 3);
    thread::scope(|s| {
        let g = Monitor::lock(&account);
        s.spawn(|| assert!(Monitor::try_lock(&account).is_none()))
            .join()
            .unwrap();
        drop(g);
    });

    // wait and notify through the trait's guard.
    let ready = AtomicBool::new(false);
    thread::scope(|s| {
        let waiter = s.spawn(|| {
            account.synchronized(|g| {
                while !ready.load(Relaxed) {
                    g.wait();
                }
                account.balance.load(Relaxed)
            })
        });
        account.synchronized(|g| {
            account.balance.store(-5, Relaxed);
            ready.store(true, Relaxed);
            g.notify_all();
        });
        assert_eq!(waiter.join().unwrap(), -5);
    });
    assert!(!account.word.is_locked());
    assert_eq!(account.multi_use_word().payload(), PAYLOAD);
}

#[test]
fn set_payload_while_locked() {
    set_payload_in_every_state(MultiUseWord::with_payload(1));
}

/// The fair bit lives next to the payload; no payload change may lose it.
#[test]
fn set_payload_keeps_a_fair_monitor_fair() {
    let word = MultiUseWord::fair_with_payload(1);
    assert!(word.is_fair());
    assert_eq!(
        format!("{word:?}"),
        r#"MultiUseWord { state: "NEUTRAL", payload: 1, fair: true }"#
    );
    set_payload_in_every_state(word);
    let word = MultiUseWord::new_fair();
    assert_eq!(word.payload(), 0);
    assert!(word.is_fair());
    assert!(!MultiUseWord::with_payload(MultiUseWord::MAX_PAYLOAD).is_fair());
}

fn set_payload_in_every_state(word: MultiUseWord) {
    let _watchdog = Watchdog::arm(HANG);
    let fair = word.is_fair();
    {
        let g = word.lock();
        word.set_payload(2);
        assert_eq!(word.payload(), 2);
        assert_eq!(word.is_fair(), fair);
        assert_eq!(g.depth(), 1);
    }
    assert_eq!(word.is_fair(), fair);
    assert!(!word.is_locked());
    assert_eq!(word.payload(), 2);

    // At depth 2, released in two steps.
    {
        let outer = word.lock();
        let inner = word.lock();
        word.set_payload(3);
        assert_eq!(word.payload(), 3);
        drop(inner);
        assert_eq!(word.payload(), 3);
        drop(outer);
    }
    assert!(!word.is_locked());
    assert_eq!(word.payload(), 3);

    // By another thread while this one holds the monitor.
    {
        let _g = word.lock();
        thread::scope(|s| {
            s.spawn(|| {
                assert_eq!(word.payload(), 3);
                word.set_payload(4);
                assert_eq!(word.payload(), 4);
                assert_eq!(word.is_fair(), fair);
            })
            .join()
            .unwrap();
        });
        assert_eq!(word.payload(), 4);
    }
    assert_eq!(word.payload(), 4);

    // By the owner (in its own lock record, without the meta-lock) while
    // another thread is queued to enter: the exit that lets that thread in
    // passes the new payload on.
    {
        let g = word.lock();
        thread::scope(|s| {
            let contender = s.spawn(|| {
                let _g = word.lock();
                word.payload()
            });
            while !word.has_queued_threads() {
                thread::sleep(Duration::from_millis(1));
            }
            assert_eq!(word.payload(), 4);
            word.set_payload(6);
            assert_eq!(word.payload(), 6);
            drop(g);
            assert_eq!(contender.join().unwrap(), 6);
        });
    }
    assert_eq!((word.payload(), word.is_fair()), (6, fair));

    // Extremes of the payload's range, and a wait in between.
    {
        let mut g = word.lock();
        word.set_payload(MultiUseWord::MAX_PAYLOAD);
        assert!(g.wait_for(Duration::ZERO).timed_out());
        assert_eq!(word.payload(), MultiUseWord::MAX_PAYLOAD);
        word.set_payload(0);
        assert_eq!(word.payload(), 0);
        word.set_payload(MultiUseWord::MAX_PAYLOAD);
    }
    assert!(!word.is_locked());
    assert_eq!(word.payload(), MultiUseWord::MAX_PAYLOAD);

    assert_eq!(word.is_fair(), fair);

    // And unlocked.
    word.set_payload(5);
    assert_eq!(word.payload(), 5);
    assert_eq!(word.is_fair(), fair);
    assert!(!word.is_locked());
}

#[test]
fn set_payload_while_the_owner_waits() {
    let _watchdog = Watchdog::arm(HANG);
    let word = MultiUseWord::with_payload(10);
    let waiting = AtomicBool::new(false);
    thread::scope(|s| {
        let waiter = s.spawn(|| {
            let mut g = word.lock();
            waiting.store(true, Relaxed);
            while waiting.load(Relaxed) {
                g.wait();
            }
            assert_eq!(word.payload(), 11);
            word.set_payload(12);
        });
        eventually("waiter waiting", || {
            let g = word.lock();
            if waiting.load(Relaxed) {
                // Set without the monitor's queue being empty: the payload
                // lives in the first lock record of the queue.
                drop(g);
                word.set_payload(11);
                let g = word.lock();
                assert_eq!(word.payload(), 11);
                waiting.store(false, Relaxed);
                assert!(g.notify_one());
                true
            } else {
                false
            }
        });
        waiter.join().unwrap();
    });
    assert!(!word.is_locked());
    assert_eq!(word.payload(), 12);
}

#[test]
#[should_panic(expected = "PAYLOAD_BITS")]
fn set_payload_wider_than_the_word_panics() {
    let _watchdog = Watchdog::arm(HANG);
    let word = MultiUseWord::new();
    word.set_payload(MultiUseWord::MAX_PAYLOAD + 1);
}

#[test]
#[should_panic(expected = "PAYLOAD_BITS")]
fn with_payload_wider_than_the_word_panics() {
    let _watchdog = Watchdog::arm(HANG);
    let _ = MultiUseWord::with_payload(MultiUseWord::MAX_PAYLOAD + 1);
}

#[test]
#[should_panic(expected = "PAYLOAD_BITS")]
fn fair_with_payload_wider_than_the_word_panics() {
    let _watchdog = Watchdog::arm(HANG);
    let _ = MultiUseWord::fair_with_payload(MultiUseWord::MAX_PAYLOAD + 1);
}

// ---------------------------------------------------------------------------
// Synchronized
// ---------------------------------------------------------------------------

#[test]
#[should_panic(expected = "not reentrant")]
fn synchronized_relock_by_the_holder_panics() {
    let _watchdog = Watchdog::arm(HANG);
    let value = Synchronized::new(1);
    let _g = value.lock();
    let _again = value.lock();
}

#[test]
#[should_panic(expected = "not reentrant")]
fn synchronized_interruptible_relock_by_the_holder_panics() {
    let _watchdog = Watchdog::arm(HANG);
    let value = Synchronized::new(1);
    let _g = value.lock();
    let _again = value.lock_interruptibly();
}

#[test]
#[should_panic(expected = "not reentrant")]
fn synchronized_lock_after_a_forgotten_guard_panics() {
    let _watchdog = Watchdog::arm(HANG);
    let value = Synchronized::new(1);
    mem::forget(value.lock());
    assert!(value.is_held_by_current_thread());
    let _g = value.lock();
}

#[test]
fn synchronized_try_lock_is_none_for_the_holder() {
    let _watchdog = Watchdog::arm(HANG);
    let value = Synchronized::new(String::from("x"));
    let mut g = value.try_lock().expect("free");
    assert!(
        value.try_lock().is_none(),
        "not reentrant, even with try_lock"
    );
    assert!(value.is_held_by_current_thread());
    assert!(value.is_locked());
    g.push('y');
    thread::scope(|s| {
        s.spawn(|| {
            assert!(value.try_lock().is_none());
            assert!(!value.is_held_by_current_thread());
        })
        .join()
        .unwrap();
    });
    drop(g);
    assert!(!value.is_locked());
    assert_eq!(*value.try_lock().unwrap(), "xy");
}

#[test]
fn synchronized_debug_shows_locked_while_held() {
    let _watchdog = Watchdog::arm(HANG);
    let value = Synchronized::new(5_u32);
    assert_eq!(format!("{value:?}"), "Synchronized { value: 5 }");
    {
        let g = value.lock();
        // Formatting on the holder's thread does not block or re-enter.
        let shown = format!("{value:?}");
        assert!(shown.contains("<locked>"), "{shown}");
        assert!(value.is_held_by_current_thread(), "still held after Debug");
        assert_eq!(format!("{g:?}"), "5");
    }
    // Held by another thread.
    let (held_tx, held_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    thread::scope(|s| {
        let value = &value;
        let holder = s.spawn(move || {
            let _g = value.lock();
            held_tx.send(()).unwrap();
            release_rx.recv().unwrap();
        });
        held_rx.recv().unwrap();
        let shown = format!("{value:?}");
        assert!(shown.contains("<locked>"), "{shown}");
        release_tx.send(()).unwrap();
        holder.join().unwrap();
    });
    assert_eq!(format!("{value:?}"), "Synchronized { value: 5 }");
}

/// State for the `wait_while` tests.
#[derive(Debug, Default)]
struct Mailbox {
    items: Vec<u32>,
    /// Set by the consumer's condition, so the producer knows it checks.
    consumer_checked: bool,
}

impl Mailbox {
    /// The consumer's condition: waits while empty, and says it checked.
    fn checked_empty(&mut self) -> bool {
        self.consumer_checked = true;
        self.items.is_empty()
    }
}

#[test]
fn synchronized_wait_while() {
    let _watchdog = Watchdog::arm(HANG);
    let mailbox = Synchronized::new(Mailbox::default());
    thread::scope(|s| {
        let consumer = s.spawn(|| {
            let mut g = mailbox.lock();
            g.wait_while(Mailbox::checked_empty);
            g.items.pop().unwrap()
        });
        eventually("consumer waiting", || {
            let mut g = mailbox.lock();
            if g.consumer_checked {
                // The consumer found the box empty and waits: it cannot
                // hold the monitor without having waited.
                g.items.push(42);
                assert!(g.notify_one());
                true
            } else {
                false
            }
        });
        assert_eq!(consumer.join().unwrap(), 42);
    });
    assert!(mailbox.lock().items.is_empty());
}

#[test]
fn synchronized_wait_while_for_times_out_while_the_condition_holds() {
    let _watchdog = Watchdog::arm(HANG);
    let value = Synchronized::new(0_u32);
    let mut g = value.lock();
    let result = g.wait_while_for(|v| *v == 0, Duration::from_millis(20));
    assert!(result.timed_out());
    assert_eq!(*g, 0);
    assert!(value.is_held_by_current_thread());
    // A condition that is false from the start returns at once, not timed
    // out, even with no time at all.
    assert!(!g.wait_while_for(|v| *v == 1, Duration::ZERO).timed_out());
}

#[test]
fn synchronized_wait_while_for_returns_when_the_condition_clears() {
    let _watchdog = Watchdog::arm(HANG);
    let mailbox = Synchronized::new(Mailbox::default());
    thread::scope(|s| {
        let consumer = s.spawn(|| {
            let mut g = mailbox.lock();
            let result = g.wait_while_for(Mailbox::checked_empty, PATIENCE);
            assert!(!result.timed_out());
            g.items.pop().unwrap()
        });
        eventually("consumer waiting", || {
            let mut g = mailbox.lock();
            if g.consumer_checked {
                g.items.push(7);
                assert_eq!(g.notify_all(), 1);
                true
            } else {
                false
            }
        });
        assert_eq!(consumer.join().unwrap(), 7);
    });
}

#[test]
fn synchronized_wait_while_for_is_not_timed_out_if_the_condition_cleared_by_the_deadline() {
    let _watchdog = Watchdog::arm(HANG);
    // The condition clears without any notification: the wait ends by its
    // deadline, but the result reports the condition, not the clock. Should
    // the producer get in only after the deadline (a slow machine), the
    // round proves nothing and is run again with a longer wait.
    for wait_ms in [50, 400, 3_200] {
        let mailbox = Synchronized::new(Mailbox::default());
        let (timed_out, items) = thread::scope(|s| {
            let consumer = s.spawn(|| {
                let mut g = mailbox.lock();
                let result =
                    g.wait_while_for(Mailbox::checked_empty, Duration::from_millis(wait_ms));
                (result.timed_out(), g.items.len())
            });
            eventually("consumer waiting", || {
                let mut g = mailbox.lock();
                if g.consumer_checked {
                    g.items.push(1);
                    true
                } else {
                    false
                }
            });
            consumer.join().unwrap()
        });
        if items == 1 {
            assert!(
                !timed_out,
                "reported a timeout though the condition had cleared"
            );
            return;
        }
        assert!(
            timed_out,
            "returned before the deadline with the condition held"
        );
        println!("the producer got in after a wait of {wait_ms} ms: again");
    }
    panic!("the producer never got in before the deadline");
}

#[test]
fn synchronized_wait_notify_without_waiters() {
    let _watchdog = Watchdog::arm(HANG);
    let value = Synchronized::new(());
    let mut g = value.lock();
    assert!(!g.notify_one());
    assert_eq!(g.notify_all(), 0);
    assert!(g.wait_for(Duration::from_millis(5)).timed_out());
    assert!(g.wait_until(Instant::now()).timed_out());
    assert!(value.is_held_by_current_thread());
}

#[test]
fn synchronized_is_one_word() {
    let _watchdog = Watchdog::arm(HANG);
    assert_eq!(mem::size_of::<Synchronized<()>>(), mem::size_of::<usize>());
    assert_eq!(mem::size_of::<MultiUseWord>(), mem::size_of::<usize>());
}

#[test]
fn synchronized_conversions() {
    let _watchdog = Watchdog::arm(HANG);
    let mut value: Synchronized<Vec<u8>> = Synchronized::default();
    value.get_mut().push(1);
    assert_eq!(*value.lock(), [1]);
    assert_eq!(value.into_inner(), [1]);
    let value = Synchronized::from(3_i8);
    assert!(!value.is_locked());
    assert_eq!(value.into_inner(), 3);
    // Unsized values.
    let boxed: Box<Synchronized<[u8]>> = Box::new(Synchronized::new([1, 2, 3]));
    assert_eq!(boxed.lock().len(), 3);
    assert_eq!(format!("{boxed:?}"), "Synchronized { value: [1, 2, 3] }");
}

#[test]
fn synchronized_counter_under_contention() {
    let _watchdog = Watchdog::arm(HANG);
    let counter = Synchronized::new(0_u64);
    thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..500 {
                    let mut g = counter.lock();
                    let v = *g;
                    thread::yield_now();
                    *g = v + 1;
                }
            });
        }
    });
    assert_eq!(counter.into_inner(), 4000);
}

/// Enters and exits that are not scoped, as an interpreter's `monitorenter`
/// and `monitorexit`: a forgotten guard's level is given back with
/// `force_unlock` (or `force_unlock_fair`), or turned back into a guard that
/// can wait; a thread that does not hold the monitor is refused before
/// anything changes.
#[test]
fn unscoped_enters_and_exits() {
    let _watchdog = Watchdog::arm(PATIENCE * 4);
    /// `monitorenter`.
    fn enter(word: &MultiUseWord) {
        mem::forget(word.lock());
    }
    /// `monitorexit`.
    fn exit(word: &MultiUseWord) {
        // SAFETY: every level this thread holds here was entered by
        // `enter`, which forgot its guard (a thread that holds none panics).
        unsafe { word.force_unlock() };
    }
    let word = MultiUseWord::with_payload(9);
    enter(&word);
    enter(&word);
    let kept = word.lock();
    assert_eq!(kept.depth(), 3);
    exit(&word);
    assert_eq!(kept.depth(), 2);
    drop(kept);
    thread::scope(|s| {
        s.spawn(|| {
            assert!(word.try_lock().is_none());
            let refused = panic::catch_unwind(|| exit(&word));
            common::panics::assert_panicked_with(refused, "IllegalMonitorStateException");
            assert!(word.is_locked() && !word.is_held_by_current_thread());
        });
    });
    // A forgotten level's guard waits like any other, at the thread's depth.
    let done = AtomicBool::new(false);
    thread::scope(|s| {
        s.spawn(|| {
            let guard = word.lock();
            done.store(true, Relaxed);
            guard.notify_all();
        });
        // SAFETY: one level entered by `enter` has no guard.
        let mut guard = unsafe { word.make_guard_unchecked() };
        guard.wait_while(|| !done.load(Relaxed));
        assert_eq!(guard.depth(), 1);
        drop(guard);
    });
    assert!(!word.is_locked());
    assert_eq!(word.payload(), 9);
    enter(&word);
    // SAFETY: as in `exit`.
    unsafe { word.force_unlock_fair() };
    assert!(!word.is_locked());
    let refused = panic::catch_unwind(|| exit(&word));
    common::panics::assert_panicked_with(refused, "does not hold the monitor");
}
