//! The monitor semantics every kind of monitor shares, in one test body run
//! against each: the embedded word (`MultiUseWord`), `Synchronized<T>`,
//! `ReentrantSynchronized<T>`, keyed (`metalock::lock(&value)`), and each
//! through an `Arc`, locked by its `lock_arc` forms.
//! Reentrancy is checked where the kind has it (not `Synchronized`, whose
//! re-lock panics by design: see `semantics.rs`), and so are `unlocked` and
//! `bump` one level and two deep; every fair release hands the monitor
//! over (Linux only: it needs a thread seen asleep in the queue).
//!
//! Counters read "under the monitor" are atomics accessed with `Relaxed`:
//! the monitor alone orders them, as it would a plain field.

mod common;
use common::Watchdog;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use common::kinds::{Guard, InArc, Keyed, KeyedInArc, Kind};
use metalock::{
    Condition, Instant, Interrupted, MultiUseWord, ReentrantSynchronized, Synchronized,
};

const HANG: Duration = Duration::from_secs(120);
/// A timeout that only a lost wake-up reaches.
const NEVER: Duration = Duration::from_secs(60);

fn mutual_exclusion<K: Kind>() {
    const THREADS: u64 = 4;
    const ROUNDS: u64 = 5_000;
    let monitor = K::make();
    let counter = AtomicU64::new(0);
    thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                for _ in 0..ROUNDS {
                    let _guard = monitor.lock();
                    // A read-modify-write in two steps: lost updates show.
                    let value = counter.load(Relaxed);
                    counter.store(value + 1, Relaxed);
                }
            });
        }
    });
    assert_eq!(counter.load(Relaxed), THREADS * ROUNDS);
    assert!(!monitor.is_locked());
}

fn ownership_and_reentrancy<K: Kind>() {
    let monitor = K::make();
    assert!(!monitor.is_locked());
    let mut guards = vec![monitor.lock()];
    if K::REENTRANT {
        for level in 2..=10 {
            guards.push(monitor.lock());
            assert_eq!(guards.last().unwrap().depth(), level);
        }
    }
    assert!(monitor.is_locked());
    assert!(monitor.is_held_by_current_thread());
    thread::scope(|s| {
        s.spawn(|| {
            assert!(monitor.is_locked());
            assert!(!monitor.is_held_by_current_thread());
            assert!(monitor.try_lock().is_none());
        });
    });
    while guards.len() > 1 {
        guards.pop();
        assert!(monitor.is_held_by_current_thread());
    }
    drop(guards);
    assert!(!monitor.is_locked());
    assert!(!monitor.is_held_by_current_thread());
    thread::scope(|s| {
        s.spawn(|| assert!(monitor.try_lock().is_some()));
    });
}

fn wait_and_notify<K: Kind>() {
    let monitor = K::make();
    let waiting = AtomicUsize::new(0);
    let ready = AtomicUsize::new(0);
    assert!(!monitor.lock().notify_one(), "nobody waits: not remembered");
    thread::scope(|s| {
        s.spawn(|| {
            let mut guard = monitor.lock();
            let depth = guard.depth();
            waiting.store(1, Relaxed);
            while ready.load(Relaxed) == 0 {
                assert!(!guard.wait_for(NEVER).timed_out(), "lost notify");
            }
            assert_eq!(guard.depth(), depth);
        });
        loop {
            let guard = monitor.lock();
            // Set under the monitor, which the waiter releases only by
            // waiting: once it is set, the waiter waits, and the notify
            // must reach it.
            if waiting.load(Relaxed) == 1 {
                ready.store(1, Relaxed);
                assert!(guard.notify_one(), "a waiter was not notified");
                break;
            }
            drop(guard);
            thread::sleep(Duration::from_millis(1));
        }
    });
}

fn notify_all_reaches_every_waiter<K: Kind>() {
    const WAITERS: usize = 4;
    let monitor = K::make();
    let waiting = AtomicUsize::new(0);
    let go = AtomicUsize::new(0);
    thread::scope(|s| {
        for _ in 0..WAITERS {
            s.spawn(|| {
                let mut guard = monitor.lock();
                waiting.store(waiting.load(Relaxed) + 1, Relaxed);
                while go.load(Relaxed) == 0 {
                    guard.wait();
                }
            });
        }
        loop {
            let guard = monitor.lock();
            // Counted under the monitor, which a waiter releases only by
            // waiting: all counted ones wait.
            if waiting.load(Relaxed) == WAITERS {
                go.store(1, Relaxed);
                assert_eq!(guard.notify_all(), WAITERS);
                break;
            }
            drop(guard);
            thread::sleep(Duration::from_millis(1));
        }
    });
}

fn timed_wait_keeps_the_depth<K: Kind>() {
    let monitor = K::make();
    let _outer = K::DEEP_WAITS.then(|| monitor.lock());
    let mut guard = monitor.lock();
    let depth = guard.depth();
    let started = Instant::now();
    assert!(guard.wait_for(Duration::from_millis(5)).timed_out());
    assert!(Instant::now() >= started + Duration::from_millis(5));
    assert_eq!(guard.depth(), depth);
    assert!(monitor.is_held_by_current_thread());
}

fn interrupt_ends_a_wait<K: Kind>() {
    let monitor = K::make();
    let waiting = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    thread::scope(|s| {
        let waiter = s.spawn(|| {
            tx.send(metalock::interrupt_handle()).unwrap();
            let _outer = K::DEEP_WAITS.then(|| monitor.lock());
            let mut guard = monitor.lock();
            let depth = guard.depth();
            waiting.store(1, Relaxed);
            let result = guard.wait_for_interruptibly(NEVER);
            assert_eq!(guard.depth(), depth);
            result
        });
        let handle = rx.recv().unwrap();
        // Seen under the monitor, which the waiter releases only by
        // waiting: the interrupt wakes a sleeping waiter, not one that has
        // yet to start.
        while waiting.load(Relaxed) == 0 || monitor.try_lock().is_none() {
            thread::yield_now();
        }
        handle.interrupt();
        assert_eq!(waiter.join().unwrap(), Err(Interrupted));
    });
    assert!(!monitor.is_locked());
}

/// `lock_interruptibly`: an interrupt set before returns `Interrupted` at
/// once, cleared, even with the monitor free; one that comes while the
/// thread waits for the monitor wakes it with `Interrupted`, cleared, and
/// leaves the queue whole; without one it enters (one level deeper for the
/// holder of a reentrant kind).
fn interrupt_ends_a_lock<K: Kind>() {
    let monitor = K::make();
    metalock::interrupt_handle().interrupt();
    assert!(matches!(monitor.lock_interruptibly(), Err(Interrupted)));
    assert!(!metalock::interrupted() && !monitor.is_locked());
    let held = monitor.lock_interruptibly().expect("no interrupt");
    assert_eq!(held.depth(), 1);
    if K::REENTRANT {
        let inner = monitor.lock_interruptibly().expect("the holder enters");
        assert_eq!(inner.depth(), 2);
    }
    let (tx, rx) = mpsc::channel();
    let started = AtomicUsize::new(0);
    thread::scope(|s| {
        let blocked = s.spawn(|| {
            tx.send(metalock::interrupt_handle()).unwrap();
            started.store(1, Relaxed);
            let result = monitor.lock_interruptibly().map(drop);
            (result, metalock::interrupted())
        });
        let handle = rx.recv().unwrap();
        while started.load(Relaxed) == 0 {
            thread::yield_now();
        }
        // Most likely asleep in the queue by then; an interrupt that comes
        // earlier ends the lock the same way. One that never wakes it
        // hangs the test until its watchdog.
        thread::sleep(Duration::from_millis(20));
        handle.interrupt();
        assert_eq!(blocked.join().unwrap(), (Err(Interrupted), false));
    });
    assert!(monitor.is_held_by_current_thread());
    drop(held);
    thread::scope(|s| {
        s.spawn(|| {
            let guard = monitor.lock_interruptibly().expect("no interrupt");
            assert_eq!(guard.depth(), 1);
        });
    });
    assert!(!monitor.is_locked());
}

/// `try_lock_for_interruptibly` and `try_lock_until_interruptibly`: an
/// interrupt set before returns `Interrupted` at once, cleared, even with
/// the monitor free; a free monitor is entered even with no time left (one
/// level deeper for the holder of a reentrant kind; `None` at once for the
/// holder of `Synchronized`, whatever the timeout, but `Interrupted`
/// first for any holder whose flag is set); another thread's
/// monitor times out as `Ok(None)`, leaving no flag, or ends with
/// `Interrupted`, cleared, when an interrupt comes while the thread waits,
/// with or without a deadline the clock can hold.
fn interrupt_ends_a_timed_lock<K: Kind>() {
    let monitor = K::make();
    let past = Instant::now();
    for timeout in [Duration::ZERO, NEVER, Duration::MAX] {
        metalock::interrupt_handle().interrupt();
        let tried = monitor.try_lock_for_interruptibly(timeout);
        assert!(matches!(tried, Err(Interrupted)));
        assert!(!metalock::interrupted() && !monitor.is_locked());
    }
    metalock::interrupt_handle().interrupt();
    assert!(matches!(
        monitor.try_lock_until_interruptibly(past),
        Err(Interrupted)
    ));
    assert!(!metalock::interrupted() && !monitor.is_locked());
    let held = monitor
        .try_lock_until_interruptibly(past)
        .unwrap()
        .expect("free");
    assert_eq!(held.depth(), 1);
    for timeout in [Duration::ZERO, Duration::MAX] {
        let inner = monitor
            .try_lock_for_interruptibly(timeout)
            .expect("no interrupt");
        assert_eq!(inner.map(|inner| inner.depth()), K::REENTRANT.then_some(2));
        // The holder too: the flag is checked first.
        metalock::interrupt_handle().interrupt();
        let tried = monitor.try_lock_for_interruptibly(timeout);
        assert!(matches!(tried, Err(Interrupted)));
        assert!(!metalock::interrupted());
    }
    let (tx, rx) = mpsc::channel();
    let started = AtomicUsize::new(0);
    thread::scope(|s| {
        let blocked = s.spawn(|| {
            let short = Duration::from_millis(5);
            let timed_out = monitor
                .try_lock_for_interruptibly(short)
                .map(|g| g.is_none());
            assert_eq!(timed_out, Ok(true));
            let timed_out = monitor
                .try_lock_until_interruptibly(past)
                .map(|g| g.is_none());
            assert_eq!(timed_out, Ok(true));
            assert!(!metalock::interrupted());
            tx.send(metalock::interrupt_handle()).unwrap();
            let mut results = Vec::new();
            for timeout in [NEVER, Duration::MAX] {
                started.fetch_add(1, Relaxed);
                let result = monitor
                    .try_lock_for_interruptibly(timeout)
                    .map(|g| g.is_some());
                results.push((result, metalock::interrupted()));
            }
            results
        });
        let handle = rx.recv().unwrap();
        for round in 1..=2 {
            while started.load(Relaxed) < round {
                thread::yield_now();
            }
            // Most likely asleep in the queue by then (see
            // `interrupt_ends_a_lock`).
            thread::sleep(Duration::from_millis(20));
            handle.interrupt();
        }
        let ended = blocked.join().unwrap();
        assert_eq!(
            ended,
            [(Err(Interrupted), false), (Err(Interrupted), false)]
        );
    });
    assert!(monitor.is_held_by_current_thread());
    drop(held);
    thread::scope(|s| {
        s.spawn(|| {
            let guard = monitor.try_lock_for_interruptibly(NEVER).unwrap();
            assert_eq!(guard.map(|guard| guard.depth()), Some(1));
        });
    });
    assert!(!monitor.is_locked());
}

/// `queue_length`: the threads blocked entering (plain, timed and
/// interruptible) count, a waiter in the wait set does not until a notify
/// moves it into the queue, the holder entering again never does, a timed
/// contender that gave up does not, and all are gone once the holder lets
/// them in; `has_queued_threads` says whether it is above 0 wherever the
/// queue is still.
fn queue_length_counts_the_threads_entering<K: Kind>() {
    let monitor = K::make();
    let waiting = AtomicUsize::new(0);
    let reaches = |n: usize| {
        let started = Instant::now();
        while monitor.queue_length() != n {
            assert!(
                Instant::now() < started + NEVER,
                "the queue never reached {n}: {}",
                monitor.queue_length()
            );
            thread::yield_now();
        }
    };
    thread::scope(|s| {
        s.spawn(|| {
            let mut guard = monitor.lock();
            waiting.store(1, Relaxed);
            while waiting.load(Relaxed) == 1 {
                guard.wait();
            }
        });
        while waiting.load(Relaxed) == 0 || monitor.try_lock().is_none() {
            thread::yield_now();
        }
        // A failed assert below must not leave the waiter asleep, which the
        // scope would wait for: let it go, once `held` is dropped.
        let _release_waiter = OnUnwind(|| {
            waiting.store(2, Relaxed);
            monitor.lock().notify_all();
        });
        let held = monitor.lock();
        assert!(!monitor.has_queued_threads(), "a waiter is not queued");
        // A timed contender that gave up may leave the word's queue summary
        // set: the queries look at the queue itself.
        s.spawn(|| {
            let timeout = Duration::from_millis(1);
            assert!(
                monitor
                    .try_lock_for_interruptibly(timeout)
                    .unwrap()
                    .is_none()
            );
        })
        .join()
        .unwrap();
        assert_eq!(
            (monitor.queue_length(), monitor.has_queued_threads()),
            (0, false),
            "a contender that gave up is not queued"
        );
        if K::REENTRANT {
            let inner = monitor.lock();
            assert_eq!((inner.depth(), monitor.queue_length()), (2, 0));
            assert!(!monitor.has_queued_threads());
        }
        s.spawn(|| drop(monitor.lock()));
        s.spawn(|| assert!(monitor.try_lock_for_interruptibly(NEVER).unwrap().is_some()));
        s.spawn(|| assert!(monitor.lock_interruptibly().is_ok()));
        reaches(3);
        assert!(monitor.has_queued_threads());
        waiting.store(2, Relaxed);
        assert_eq!(held.notify_all(), 1);
        reaches(4);
        assert!(monitor.has_queued_threads());
        drop(held);
    });
    assert_eq!(monitor.queue_length(), 0);
    assert!(!monitor.has_queued_threads());
}

/// Runs its closure when dropped during a panic: to wake threads that a
/// failed assert would leave asleep in a scope.
struct OnUnwind<F: FnMut()>(F);

impl<F: FnMut()> Drop for OnUnwind<F> {
    fn drop(&mut self) {
        if thread::panicking() {
            (self.0)();
        }
    }
}

/// `wait_set_length`: the threads inside a wait of any kind count until a
/// timeout, an interrupt or a notify takes them out of the wait set (a
/// notified one counts in the queue then), and a condition's waiters are
/// the condition's, not the monitor's; `has_waiters` and
/// `has_queued_threads` say whether each count is above 0 wherever the
/// counts are still.
fn wait_set_length_counts_the_waiters<K: Kind>() {
    let monitor = K::make();
    let condition = Condition::new();
    let (handle_tx, handle) = mpsc::channel();
    let reaches = |count: &dyn Fn() -> usize, n: usize| {
        let started = Instant::now();
        while count() != n {
            assert!(
                Instant::now() < started + NEVER,
                "never {n} waiters: {}",
                count()
            );
            thread::yield_now();
        }
    };
    assert_eq!(
        (monitor.wait_set_length(), condition.wait_set_length()),
        (0, 0)
    );
    // Whether the monitor has waiters, the condition has, and the monitor
    // has threads queued.
    let has = || {
        (
            monitor.has_waiters(),
            condition.has_waiters(),
            monitor.has_queued_threads(),
        )
    };
    assert_eq!(has(), (false, false, false));
    thread::scope(|s| {
        // As in the test above: a failed assert wakes the waiters.
        let _release_waiters = OnUnwind(|| {
            monitor.lock().notify_all();
            condition.notify_all();
        });
        s.spawn(|| monitor.lock().wait());
        s.spawn(|| assert!(!monitor.lock().wait_for(NEVER).timed_out()));
        s.spawn(|| {
            assert!(
                !monitor
                    .lock()
                    .wait_for_interruptibly(NEVER)
                    .unwrap()
                    .timed_out()
            )
        });
        let interrupted = s.spawn(|| {
            handle_tx.send(metalock::interrupt_handle()).unwrap();
            assert_eq!(monitor.lock().wait_interruptibly(), Err(Interrupted));
        });
        s.spawn(|| condition.wait(&mut monitor.lock()));
        reaches(&|| monitor.wait_set_length(), 4);
        reaches(&|| condition.wait_set_length(), 1);
        assert_eq!(has(), (true, true, false));
        let timed_out = s.spawn(|| {
            monitor
                .lock()
                .wait_for(Duration::from_millis(1))
                .timed_out()
        });
        assert!(timed_out.join().unwrap());
        assert_eq!(monitor.wait_set_length(), 4, "a timed-out waiter left");
        handle.recv().unwrap().interrupt();
        interrupted.join().unwrap();
        assert_eq!(monitor.wait_set_length(), 3, "an interrupted waiter left");
        let held = monitor.lock();
        assert!(held.notify_one());
        assert_eq!((monitor.wait_set_length(), monitor.queue_length()), (2, 1));
        assert_eq!(has(), (true, true, true));
        assert_eq!(held.notify_all(), 2);
        assert_eq!((monitor.wait_set_length(), monitor.queue_length()), (0, 3));
        assert_eq!(condition.wait_set_length(), 1);
        assert_eq!(has(), (false, true, true));
        assert!(condition.notify_one());
        assert_eq!(
            (condition.wait_set_length(), monitor.queue_length()),
            (0, 4)
        );
        assert_eq!(has(), (false, false, true));
        drop(held);
    });
    assert_eq!((monitor.wait_set_length(), monitor.queue_length()), (0, 0));
    assert_eq!(has(), (false, false, false));
}

/// An interrupt that races the holder's release: the contender either
/// enters, and then its flag stays set (the interrupt came before the
/// release it entered by), or reports the interrupt with the flag cleared;
/// the monitor stays whole either way. Every other round the contender
/// enters through `try_lock_for_interruptibly`, with a timeout that only a
/// lost wake-up reaches.
fn an_interrupt_racing_a_release<K: Kind>() {
    const ROUNDS: usize = 200;
    let monitor = K::make();
    for round in 0..ROUNDS {
        let held = monitor.lock();
        let (tx, rx) = mpsc::channel();
        thread::scope(|s| {
            let contender = s.spawn(|| {
                tx.send(metalock::interrupt_handle()).unwrap();
                let entered = match round % 2 {
                    0 => monitor.lock_interruptibly(),
                    _ => monitor
                        .try_lock_for_interruptibly(NEVER)
                        .map(|guard| guard.expect("the holder released it")),
                };
                match entered {
                    Ok(guard) => {
                        drop(guard);
                        assert!(metalock::interrupted(), "entered: the flag stays set");
                    }
                    Err(Interrupted) => {
                        assert!(!metalock::interrupted(), "reported: the flag is cleared");
                    }
                }
            });
            rx.recv().unwrap().interrupt();
            drop(held);
            contender.join().unwrap();
        });
        assert!(!monitor.is_locked());
    }
}

/// `wait_while_interruptibly`: a condition already false returns `Ok` with
/// an interrupt pending (which stays pending); notifies that leave the
/// condition true keep it waiting, an interrupt ends it with the monitor
/// held again at the same depth, and a notify that makes the condition
/// false ends it with `Ok`.
fn interrupt_ends_a_wait_while<K: Kind>() {
    let monitor = K::make();
    {
        let mut guard = monitor.lock();
        metalock::interrupt_handle().interrupt();
        assert_eq!(guard.wait_while_interruptibly(|| false), Ok(()));
        assert!(metalock::interrupted(), "the interrupt stays pending");
    }
    let (waits, done, reported) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    );
    let (tx, rx) = mpsc::channel();
    thread::scope(|s| {
        let waiter = s.spawn(|| {
            tx.send(metalock::interrupt_handle()).unwrap();
            let _outer = K::DEEP_WAITS.then(|| monitor.lock());
            let mut guard = monitor.lock();
            let depth = guard.depth();
            let ended = guard.wait_while_interruptibly(|| {
                waits.fetch_add(1, Relaxed);
                done.load(Relaxed) == 0
            });
            assert_eq!(guard.depth(), depth);
            assert!(monitor.is_held_by_current_thread());
            reported.store(1, Relaxed);
            let then = guard.wait_while_interruptibly(|| done.load(Relaxed) == 0);
            (ended, then)
        });
        let handle = rx.recv().unwrap();
        // Two futile wake-ups: each notify finds the waiter waiting (it
        // releases the monitor only by waiting), which checks again.
        for seen in 1..=2 {
            loop {
                let guard = monitor.lock();
                if waits.load(Relaxed) == seen {
                    assert_eq!(guard.notify_all(), 1);
                    break;
                }
                drop(guard);
                thread::yield_now();
            }
        }
        while waits.load(Relaxed) < 3 || monitor.try_lock().is_none() {
            thread::yield_now();
        }
        handle.interrupt();
        // Once the interrupt was reported (a notify before that could end
        // the wait as notified, the interrupt left pending), a notify with
        // the condition false ends the next wait.
        while reported.load(Relaxed) == 0 {
            thread::yield_now();
        }
        let guard = monitor.lock();
        done.store(1, Relaxed);
        guard.notify_all();
        drop(guard);
        let (ended, then) = waiter.join().unwrap();
        assert_eq!(ended, Err(Interrupted));
        assert_eq!(then, Ok(()));
    });
    assert!(!monitor.is_locked());
}

/// The timed `wait_while_*_interruptibly`: a condition already false
/// returns `Ok`, not timed out, interrupt pending or not; a pending
/// interrupt ends the wait of a true one (and is cleared); with neither a
/// notify nor an interrupt the time runs out with the depth kept; a notify
/// that makes the condition false ends it before its deadline, not timed
/// out; an interrupt ends a wait in progress.
fn timed_wait_while_interruptibly<K: Kind>() {
    let monitor = K::make();
    let _outer = K::DEEP_WAITS.then(|| monitor.lock());
    let mut guard = monitor.lock();
    let depth = guard.depth();
    metalock::interrupt_handle().interrupt();
    let quick = guard.wait_while_for_interruptibly(|| false, NEVER);
    assert!(!quick.unwrap().timed_out());
    let deadline = Instant::now() + NEVER;
    assert_eq!(
        guard.wait_while_until_interruptibly(|| true, deadline),
        Err(Interrupted)
    );
    assert!(
        !metalock::interrupted(),
        "the reported interrupt is cleared"
    );
    let started = Instant::now();
    let out = guard.wait_while_for_interruptibly(|| true, Duration::from_millis(5));
    assert!(out.unwrap().timed_out());
    assert!(Instant::now() >= started + Duration::from_millis(5));
    assert_eq!(guard.depth(), depth);
    drop(guard);
    drop(_outer);

    let (waits, done) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let (tx, rx) = mpsc::channel();
    thread::scope(|s| {
        let waiter = s.spawn(|| {
            tx.send(metalock::interrupt_handle()).unwrap();
            let mut guard = monitor.lock();
            let deadline = Instant::now() + NEVER;
            let notified = guard.wait_while_until_interruptibly(
                || {
                    waits.fetch_add(1, Relaxed);
                    done.load(Relaxed) == 0
                },
                deadline,
            );
            let interrupted = guard.wait_while_for_interruptibly(
                || {
                    waits.fetch_add(1, Relaxed);
                    true
                },
                NEVER,
            );
            assert!(monitor.is_held_by_current_thread());
            (notified, interrupted)
        });
        let handle = rx.recv().unwrap();
        // The waiter releases the monitor only by waiting: a condition seen
        // checked under the monitor is a waiter asleep.
        loop {
            let guard = monitor.lock();
            if waits.load(Relaxed) == 1 {
                done.store(1, Relaxed);
                assert_eq!(guard.notify_all(), 1);
                break;
            }
            drop(guard);
            thread::yield_now();
        }
        while waits.load(Relaxed) < 3 || monitor.try_lock().is_none() {
            thread::yield_now();
        }
        handle.interrupt();
        let (notified, interrupted) = waiter.join().unwrap();
        assert!(!notified.unwrap().timed_out());
        assert_eq!(interrupted, Err(Interrupted));
    });
    assert!(!monitor.is_locked());
}

/// A timed `wait_while_*_interruptibly` whose condition clears without a
/// notification ends by its deadline, but reports the condition, not the
/// clock: not timed out. Should the clearing thread get in only after the
/// deadline (a slow machine), the round proves nothing and runs again with
/// a longer wait.
fn timed_wait_while_interruptibly_reports_a_condition_cleared_by_the_deadline<K: Kind>() {
    let monitor = K::make();
    for wait_ms in [50, 400, 3_200] {
        let (checked, cleared) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let (result, seen_cleared) = thread::scope(|s| {
            let waiter = s.spawn(|| {
                let mut guard = monitor.lock();
                let deadline = Instant::now() + Duration::from_millis(wait_ms);
                let condition = || {
                    checked.store(1, Relaxed);
                    cleared.load(Relaxed) == 0
                };
                let result = if wait_ms == 400 {
                    guard.wait_while_until_interruptibly(condition, deadline)
                } else {
                    let timeout = Duration::from_millis(wait_ms);
                    guard.wait_while_for_interruptibly(condition, timeout)
                };
                (result, cleared.load(Relaxed) == 1)
            });
            // Seen under the monitor, which the waiter releases only by
            // waiting: it waits, and nothing will notify it.
            while checked.load(Relaxed) == 0 || monitor.try_lock().is_none() {
                thread::yield_now();
            }
            let guard = monitor.lock();
            cleared.store(1, Relaxed);
            drop(guard);
            waiter.join().unwrap()
        });
        let result = result.expect("no interrupt was sent");
        if seen_cleared && !result.timed_out() {
            return;
        }
        assert!(
            !seen_cleared,
            "reported a timeout though the condition had cleared"
        );
        assert!(
            result.timed_out(),
            "returned before the deadline with the condition held"
        );
        println!("the clearing thread got in after a wait of {wait_ms} ms: again");
    }
    panic!("the clearing thread never got in before the deadline");
}

fn a_panic_releases<K: Kind>() {
    let monitor = K::make();
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        let _guard = monitor.lock();
        panic!("inside the monitor");
    }));
    assert!(result.is_err());
    assert!(!monitor.is_locked());
    thread::scope(|s| {
        s.spawn(|| assert!(monitor.try_lock().is_some()));
    });
}

/// A fair release of a guard.
#[cfg(target_os = "linux")]
#[derive(Clone, Copy, Debug)]
enum FairRelease {
    /// `unlock_fair`.
    Unlock,
    /// `unlocked_fair`.
    Unlocked,
    /// An `Arc` guard's `into_arc_fair`.
    IntoArc,
}

/// The fair releases (`unlock_fair`, `unlocked_fair`, and an `Arc`
/// guard's `into_arc_fair`) hand the monitor to a thread asleep in its
/// queue: right after the release the monitor is held, not by the
/// releasing thread, which cannot take it back.
#[cfg(target_os = "linux")]
fn fair_releases_hand_over<K: Kind>() {
    use FairRelease::*;
    let monitor = K::make();
    assert_eq!(
        <K::Guard<'_> as Guard>::owns_arc(),
        <K::Guard<'_> as Guard>::INTO_ARC_FAIR,
        "{} owns an Arc exactly when guard_impl! gives it into_arc_fair",
        std::any::type_name::<K::Guard<'_>>()
    );
    let releases: &[FairRelease] = if <K::Guard<'_> as Guard>::INTO_ARC_FAIR {
        &[Unlock, Unlocked, IntoArc]
    } else {
        &[Unlock, Unlocked]
    };
    // Handed over: held by the queued thread, which waits for `let_go`.
    let is_handed_over = || {
        let taken_back = monitor.try_lock().is_some();
        !taken_back && monitor.is_locked() && !monitor.is_held_by_current_thread()
    };
    for &release in releases {
        let mut guard = Some(monitor.lock());
        let handed_over = common::blocked::with_a_thread_queued(
            |hold| {
                let _turn = monitor.lock();
                hold();
            },
            |let_go| {
                let handed_over = match release {
                    Unlock => {
                        guard.take().unwrap().unlock_fair();
                        is_handed_over()
                    }
                    IntoArc => {
                        guard.take().unwrap().into_arc_fair();
                        is_handed_over()
                    }
                    Unlocked => {
                        let handed_over = guard.as_mut().unwrap().unlocked_fair(|| {
                            let handed_over = is_handed_over();
                            let_go();
                            handed_over
                        });
                        guard = None; // the queued thread may still need the monitor
                        handed_over
                    }
                };
                let_go();
                handed_over
            },
        );
        assert!(
            handed_over,
            "the fair {release:?} did not hand the monitor over"
        );
    }
    assert!(!monitor.is_locked());
}

fn unlocked_and_bump<K: Kind>() {
    let monitor = K::make();
    let mut guard = monitor.lock();
    let entered = guard.unlocked(|| {
        assert!(!monitor.is_locked());
        thread::scope(|s| s.spawn(|| monitor.try_lock().is_some()).join().unwrap())
    });
    assert!(entered, "the monitor was free while the closure ran");
    assert!(monitor.is_held_by_current_thread());
    assert_eq!(guard.depth(), 1);

    // A panic in the closure: the guard enters again while unwinding.
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        guard.unlocked_fair(|| panic!("in the closure"));
    }));
    assert!(result.is_err());
    assert!(monitor.is_held_by_current_thread());
    assert_eq!(guard.depth(), 1);

    // Nobody queued: `bump` returns holding the monitor.
    guard.bump();
    assert_eq!(guard.depth(), 1);
    // Somebody queued: `bump` gives it a turn, and takes the monitor back.
    let turns = AtomicUsize::new(0);
    thread::scope(|s| {
        s.spawn(|| {
            let _turn = monitor.lock();
            turns.fetch_add(1, Relaxed);
        });
        while turns.load(Relaxed) == 0 {
            guard.bump();
            thread::yield_now();
        }
    });
    assert!(monitor.is_held_by_current_thread());
    assert_eq!(guard.depth(), 1);

    if K::REENTRANT {
        // Two levels deep: `unlocked` refuses before it releases anything,
        // and `bump` does nothing.
        let mut inner = monitor.lock();
        let refused = panic::catch_unwind(AssertUnwindSafe(|| inner.unlocked(|| ())));
        let payload = refused.expect_err("unlocked two levels deep must panic");
        let text = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .unwrap_or_default();
        assert!(text.contains("one level deep, not 2"), "{text}");
        // With a thread asleep in the queue, `bump` two levels deep leaves
        // it there. (Releasing there would only leave one level, which lets
        // nobody in; debug builds catch it with the release's depth check.)
        #[cfg(target_os = "linux")]
        {
            let entered = AtomicUsize::new(0);
            common::blocked::with_a_thread_queued(
                |_| {
                    let _turn = monitor.lock();
                    entered.fetch_add(1, Relaxed);
                },
                |_| {
                    inner.bump();
                    assert_eq!(
                        entered.load(Relaxed),
                        0,
                        "bump two levels deep let a thread in"
                    );
                    assert_eq!(inner.depth(), 2);
                    drop(inner);
                    drop(guard);
                },
            );
            assert_eq!(entered.load(Relaxed), 1);
            guard = monitor.lock();
        }
        #[cfg(not(target_os = "linux"))]
        drop(inner);

        // A guard the closure returns keeps its level: the guard enters
        // again on top of it.
        let kept = guard.unlocked(|| monitor.lock());
        assert_eq!(guard.depth(), 2);
        drop(kept);
        assert_eq!(guard.depth(), 1);
    }
    drop(guard);
    assert!(!monitor.is_locked());
}

macro_rules! semantics {
    ($($name:ident: $kind:ty),* $(,)?) => {$(
        mod $name {
            use super::*;

            #[test]
            fn mutual_exclusion() {
                let _watchdog = Watchdog::arm(HANG);
                super::mutual_exclusion::<$kind>();
            }

            #[test]
            fn ownership_and_reentrancy() {
                let _watchdog = Watchdog::arm(HANG);
                super::ownership_and_reentrancy::<$kind>();
            }

            #[test]
            fn wait_and_notify() {
                let _watchdog = Watchdog::arm(HANG);
                super::wait_and_notify::<$kind>();
            }

            #[test]
            fn notify_all_reaches_every_waiter() {
                let _watchdog = Watchdog::arm(HANG);
                super::notify_all_reaches_every_waiter::<$kind>();
            }

            #[test]
            fn timed_wait_keeps_the_depth() {
                let _watchdog = Watchdog::arm(HANG);
                super::timed_wait_keeps_the_depth::<$kind>();
            }

            #[test]
            fn interrupt_ends_a_wait() {
                let _watchdog = Watchdog::arm(HANG);
                super::interrupt_ends_a_wait::<$kind>();
            }

            #[test]
            fn interrupt_ends_a_lock() {
                let _watchdog = Watchdog::arm(HANG);
                super::interrupt_ends_a_lock::<$kind>();
            }

            #[test]
            fn interrupt_ends_a_timed_lock() {
                let _watchdog = Watchdog::arm(HANG);
                super::interrupt_ends_a_timed_lock::<$kind>();
            }

            #[test]
            fn queue_length_counts_the_threads_entering() {
                let _watchdog = Watchdog::arm(HANG);
                super::queue_length_counts_the_threads_entering::<$kind>();
            }

            #[test]
            fn wait_set_length_counts_the_waiters() {
                let _watchdog = Watchdog::arm(HANG);
                super::wait_set_length_counts_the_waiters::<$kind>();
            }

            #[test]
            fn an_interrupt_racing_a_release() {
                let _watchdog = Watchdog::arm(HANG);
                super::an_interrupt_racing_a_release::<$kind>();
            }

            #[test]
            fn interrupt_ends_a_wait_while() {
                let _watchdog = Watchdog::arm(HANG);
                super::interrupt_ends_a_wait_while::<$kind>();
            }

            #[test]
            fn timed_wait_while_interruptibly() {
                let _watchdog = Watchdog::arm(HANG);
                super::timed_wait_while_interruptibly::<$kind>();
            }

            #[test]
            fn timed_wait_while_interruptibly_reports_a_condition_cleared_by_the_deadline() {
                let _watchdog = Watchdog::arm(HANG);
                super::timed_wait_while_interruptibly_reports_a_condition_cleared_by_the_deadline::<
                    $kind,
                >();
            }

            #[cfg(target_os = "linux")]
            #[test]
            fn fair_releases_hand_over() {
                let _watchdog = Watchdog::arm(HANG);
                super::fair_releases_hand_over::<$kind>();
            }

            #[test]
            fn a_panic_releases() {
                let _watchdog = Watchdog::arm(HANG);
                super::a_panic_releases::<$kind>();
            }

            #[test]
            fn unlocked_and_bump() {
                let _watchdog = Watchdog::arm(HANG);
                super::unlocked_and_bump::<$kind>();
            }
        }
    )*};
}

semantics!(
    word: MultiUseWord,
    synchronized: Synchronized<()>,
    reentrant: ReentrantSynchronized<()>,
    keyed: Keyed,
    word_in_arc: InArc<MultiUseWord>,
    synchronized_in_arc: InArc<Synchronized<()>>,
    reentrant_in_arc: InArc<ReentrantSynchronized<()>>,
    keyed_in_arc: KeyedInArc,
);
