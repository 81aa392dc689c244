//! Interruptible waits: an interrupt ends a wait with `Err(Interrupted)`,
//! the monitor held again at the same depth; one set before the call ends
//! it at once; a notify is never lost to an interrupt (JLS 17.2.4).

mod common;
use common::Watchdog;
#[cfg(target_os = "linux")]
use common::blocked::Tid;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use metalock::{
    Condition, Instant, Interrupted, MultiUseWord, Synchronized, SynchronizedGuard,
    WaitTimeoutResult,
};

/// Long enough never to expire on a loaded machine: a wait that reaches it
/// means a lost wake-up, which the assertions then report.
const NEVER: Duration = Duration::from_secs(60);

#[test]
fn a_pending_interrupt_ends_the_wait_at_once_and_is_cleared() {
    let word = MultiUseWord::new();
    let outer = word.lock();
    let mut inner = word.lock();
    metalock::interrupt_handle().interrupt();
    assert_eq!(inner.wait_interruptibly(), Err(Interrupted));
    assert_eq!(inner.depth(), 2);
    assert!(
        !metalock::interrupted(),
        "reporting the interrupt clears it"
    );
    metalock::interrupt_handle().interrupt();
    assert_eq!(inner.wait_for_interruptibly(NEVER), Err(Interrupted));
    drop(inner);
    drop(outer);
    assert!(!word.is_locked());
}

#[test]
fn an_interrupt_wakes_a_waiter_which_holds_the_monitor_again() {
    for _ in 0..50 {
        let counter = Synchronized::new(0_u32);
        thread::scope(|s| {
            let (tx, rx) = mpsc::channel();
            let counter = &counter;
            let waiter = s.spawn(move || {
                tx.send(metalock::interrupt_handle()).unwrap();
                let mut guard = counter.lock();
                let result = guard.wait_for_interruptibly(NEVER);
                *guard += 1;
                result
            });
            let handle = rx.recv().unwrap();
            handle.interrupt();
            assert_eq!(waiter.join().unwrap(), Err(Interrupted));
            assert!(!handle.is_interrupted());
        });
        assert_eq!(*counter.lock(), 1);
    }
}

#[test]
fn plain_waits_ignore_interrupts_and_timed_ones_time_out() {
    let word = MultiUseWord::new();
    let mut guard = word.lock();
    metalock::interrupt_handle().interrupt();
    assert!(guard.wait_for(Duration::from_millis(5)).timed_out());
    assert!(
        metalock::interrupted(),
        "a plain wait leaves the flag alone"
    );
    let result = guard.wait_for_interruptibly(Duration::from_millis(5));
    assert!(result.unwrap().timed_out());
}

/// `Condition::wait_while_interruptibly` sees the guard's value, returns
/// `Err` once an interrupt ends a wait in progress (the value reachable
/// again), and `Ok` at once where the condition is false (the interrupt
/// stays pending).
#[test]
fn a_condition_wait_while_is_interruptible() {
    let queue = Synchronized::new(Vec::<u32>::new());
    let not_empty = Condition::new();
    let checks = AtomicUsize::new(0);
    thread::scope(|s| {
        let (tx, rx) = mpsc::channel();
        let (queue, not_empty) = (&queue, &not_empty);
        let checks = &checks;
        let waiter = s.spawn(move || {
            tx.send(metalock::interrupt_handle()).unwrap();
            let mut guard = queue.lock();
            let ended = not_empty.wait_while_interruptibly(&mut guard, |queue| {
                checks.fetch_add(1, Relaxed);
                queue.is_empty()
            });
            guard.push(1);
            ended
        });
        let handle = rx.recv().unwrap();
        // The condition was checked under the monitor, which only the wait
        // releases: once it is free, the waiter waits, and the interrupt
        // ends a wait in progress.
        while checks.load(Relaxed) == 0 || queue.try_lock().is_none() {
            thread::yield_now();
        }
        handle.interrupt();
        assert_eq!(waiter.join().unwrap(), Err(Interrupted));
        assert_eq!(checks.load(Relaxed), 1, "no wake-up before the interrupt");
    });
    let mut guard = queue.lock();
    metalock::interrupt_handle().interrupt();
    let ended = not_empty.wait_while_interruptibly(&mut guard, |queue| queue.is_empty());
    assert_eq!(ended, Ok(()));
    assert!(metalock::interrupted());
    assert_eq!(*guard, [1]);
}

/// The timed forms of `Condition::wait_while_interruptibly`: an interrupt
/// ends a wait in progress, and without one the time runs out with the
/// condition still true.
#[test]
fn a_condition_timed_wait_while_is_interruptible() {
    let queue = Synchronized::new(Vec::<u32>::new());
    let not_empty = Condition::new();
    let checks = AtomicUsize::new(0);
    thread::scope(|s| {
        let (tx, rx) = mpsc::channel();
        let (queue, not_empty, checks) = (&queue, &not_empty, &checks);
        let waiter = s.spawn(move || {
            tx.send(metalock::interrupt_handle()).unwrap();
            let mut guard = queue.lock();
            let deadline = Instant::now() + Duration::from_secs(60);
            not_empty.wait_while_until_interruptibly(
                &mut guard,
                |queue| {
                    checks.fetch_add(1, Relaxed);
                    queue.is_empty()
                },
                deadline,
            )
        });
        let handle = rx.recv().unwrap();
        while checks.load(Relaxed) == 0 || queue.try_lock().is_none() {
            thread::yield_now();
        }
        handle.interrupt();
        assert_eq!(waiter.join().unwrap(), Err(Interrupted));
    });
    let mut guard = queue.lock();
    let timeout = Duration::from_millis(5);
    let ended =
        not_empty.wait_while_for_interruptibly(&mut guard, |queue| queue.is_empty(), timeout);
    assert!(ended.unwrap().timed_out());
    assert!(queue.is_held_by_current_thread());
}

/// A `Condition` wait is interruptible too, and a waiter that reports the
/// interrupt leaves the condition free for another monitor.
#[test]
fn a_condition_wait_is_interruptible() {
    let first = MultiUseWord::new();
    let second = MultiUseWord::new();
    let condition = Condition::new();
    let waiting = AtomicBool::new(false);
    thread::scope(|s| {
        let (tx, rx) = mpsc::channel();
        let (first, condition, waiting) = (&first, &condition, &waiting);
        let waiter = s.spawn(move || {
            tx.send(metalock::interrupt_handle()).unwrap();
            let _outer = first.lock();
            let mut guard = first.lock();
            waiting.store(true, Relaxed);
            let result = condition.wait_for_interruptibly(&mut guard, NEVER);
            (result, guard.depth(), first.is_held_by_current_thread())
        });
        let handle = rx.recv().unwrap();
        // The waiter set the flag and waited in one hold of the monitor: it
        // is in the wait set, and the condition bound to `first`.
        while !{
            let _held = first.lock();
            waiting.load(Relaxed)
        } {
            thread::yield_now();
        }
        handle.interrupt();
        assert_eq!(waiter.join().unwrap(), (Err(Interrupted), 2, true));
        assert!(!handle.is_interrupted());
    });
    assert!(!first.is_locked());
    // Nobody waits on it any more: another monitor may use it.
    let mut guard = second.lock();
    assert!(
        condition
            .wait_for(&mut guard, Duration::from_millis(1))
            .timed_out()
    );
}

/// A condition waited on with a second monitor panics, unless an
/// interrupt is pending: that ends the wait first, as Java's `await` checks
/// the interrupt before anything else.
#[test]
fn a_pending_interrupt_ends_a_condition_wait_before_its_monitor_is_checked() {
    let first = Synchronized::new(false); // the waiter may go
    let other = MultiUseWord::new();
    let condition = Condition::new();
    let waiting = AtomicBool::new(false);
    thread::scope(|s| {
        s.spawn(|| {
            let mut go = first.lock();
            // Relaxed (here and below): written and read under the monitor
            // of `first`, whose release and enter order them.
            waiting.store(true, Relaxed);
            condition.wait_while(&mut go, |go| !*go);
        });
        // The waiter set the flag and waited in one hold of the monitor.
        while !{
            let _held = first.lock();
            waiting.load(Relaxed)
        } {
            thread::yield_now();
        }
        let mut guard = other.lock();
        metalock::interrupt_handle().interrupt();
        assert_eq!(
            condition.wait_for_interruptibly(&mut guard, NEVER),
            Err(Interrupted)
        );
        assert!(!metalock::interrupted(), "the interrupt was reported");
        drop(guard);
        *first.lock() = true;
        condition.notify_all();
    });
}

/// Each interrupt of a waiter that sleeps (or still spins) in an
/// interruptible wait ends that wait with `Err(Interrupted)`, once, and
/// leaves the flag clear: timed and untimed, on the monitor's wait set and
/// on a condition. An interrupt cleared without being reported leaves the
/// untimed wait asleep (the watchdog) and the timed one timing out.
#[test]
fn every_interrupt_of_a_waiter_is_reported_once() {
    const ROUNDS: u32 = 100;
    let _watchdog = Watchdog::arm(Duration::from_secs(300));
    let started = Synchronized::new(0_u32); // waits started
    let condition = Condition::new();
    thread::scope(|s| {
        let (tx, rx) = mpsc::channel();
        let (started, condition) = (&started, &condition);
        let waiter = s.spawn(move || {
            tx.send(metalock::interrupt_handle()).unwrap();
            let mut guard = started.lock();
            for round in 0..4 * ROUNDS {
                *guard += 1;
                let result = match round % 4 {
                    0 => guard.wait_interruptibly().map(|()| false),
                    1 => guard
                        .wait_for_interruptibly(NEVER)
                        .map(|end| end.timed_out()),
                    2 => condition.wait_interruptibly(&mut guard).map(|()| false),
                    _ => condition
                        .wait_for_interruptibly(&mut guard, NEVER)
                        .map(|end| end.timed_out()),
                };
                assert_eq!(result, Err(Interrupted), "round {round}");
                assert!(!metalock::interrupted(), "round {round}: reported twice");
            }
        });
        let handle = rx.recv().unwrap();
        for round in 1..=4 * ROUNDS {
            // The waiter counted the round and waited in one hold of the
            // monitor: it is in the wait set now.
            while *started.lock() < round {
                thread::yield_now();
            }
            // Half the time while it may still spin, half once it parked.
            if round % 2 == 0 {
                thread::sleep(Duration::from_millis(1));
            }
            handle.interrupt();
        }
        waiter.join().unwrap();
    });
}

/// Where the waiters of `notify_races_an_interrupt` wait.
#[derive(Clone, Copy)]
enum Set<'a> {
    /// The monitor's own wait set, notified under the monitor.
    Monitor,
    /// A condition, notified without the monitor except when the test
    /// holds it anyway.
    Condition(&'a Condition),
}

impl Set<'_> {
    fn wait_interruptibly(
        self,
        guard: &mut SynchronizedGuard<'_, u32>,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        match self {
            Set::Monitor => guard.wait_for_interruptibly(NEVER),
            Set::Condition(condition) => condition.wait_for_interruptibly(guard, NEVER),
        }
    }

    fn wait(self, guard: &mut SynchronizedGuard<'_, u32>) -> WaitTimeoutResult {
        match self {
            Set::Monitor => guard.wait_for(NEVER),
            Set::Condition(condition) => condition.wait_for(guard, NEVER),
        }
    }

    /// Notifies one waiter, holding the monitor through `held` if given,
    /// or taking it for the monitor's own wait set.
    fn notify_one(
        self,
        state: &Synchronized<u32>,
        held: Option<&SynchronizedGuard<'_, u32>>,
    ) -> bool {
        match (self, held) {
            (Set::Monitor, Some(guard)) => guard.notify_one(),
            (Set::Monitor, None) => state.lock().notify_one(),
            (Set::Condition(condition), _) => condition.notify_one(),
        }
    }
}

/// Two waiters, A (interruptible, first in the wait set) and B; one thread
/// notifies once while another interrupts A. Either A returns notified with
/// its interrupt still pending, or A reports the interrupt and the notify
/// reached B: never both lost. On the monitor's wait set and on a
/// condition.
#[test]
fn a_notify_is_never_lost_to_an_interrupt() {
    let _watchdog = Watchdog::arm(Duration::from_secs(600));
    let condition = Condition::new();
    for set in [Set::Monitor, Set::Condition(&condition)] {
        notify_races_an_interrupt(set);
    }
}

fn notify_races_an_interrupt(set: Set<'_>) {
    let (mut notified, mut interrupted) = (0, 0);
    for round in 0..200 {
        let state = Synchronized::new(0_u32); // waiters that started waiting
        #[cfg(target_os = "linux")]
        let queued = Tid::default();
        thread::scope(|s| {
            let (tx, rx) = mpsc::channel();
            let state = &state;
            let a = s.spawn(move || {
                tx.send(metalock::interrupt_handle()).unwrap();
                let mut guard = state.lock();
                *guard += 1;
                set.wait_interruptibly(&mut guard)
            });
            let handle = rx.recv().unwrap();
            // B queues behind A in the wait set.
            while *state.lock() < 1 {
                thread::yield_now();
            }
            let b = s.spawn(move || {
                let mut guard = state.lock();
                *guard += 1;
                set.wait(&mut guard).timed_out()
            });
            while *state.lock() < 2 {
                thread::yield_now();
            }
            // Four orders, so that both outcomes occur (how often is up to
            // the scheduler; the assertions hold for every order).
            match round % 4 {
                // Racing from another thread.
                0 => {
                    let interrupter = s.spawn({
                        let handle = handle.clone();
                        move || handle.interrupt()
                    });
                    assert!(set.notify_one(state, None));
                    interrupter.join().unwrap();
                }
                // Interrupt first, and give A time to leave the wait set.
                1 => {
                    handle.interrupt();
                    thread::sleep(Duration::from_millis(1));
                    assert!(set.notify_one(state, None));
                }
                // Notify first while a third thread sleeps in the monitor's
                // queue, and interrupt: A, invited, finds the queue on the
                // word and re-enters through the meta-lock, not the spin.
                #[cfg(target_os = "linux")]
                3 => {
                    let guard = state.lock();
                    let queued = &queued;
                    let c = s.spawn(move || {
                        queued.publish();
                        drop(state.lock());
                    });
                    assert!(queued.wait_until_blocked(), "C never queued");
                    assert!(set.notify_one(state, Some(&guard)));
                    handle.interrupt();
                    drop(guard);
                    c.join().unwrap();
                }
                // Notify first, interrupt while A is on its way back in.
                _ => {
                    let guard = state.lock();
                    assert!(set.notify_one(state, Some(&guard)));
                    handle.interrupt();
                    drop(guard);
                }
            }
            let a_result = a.join().unwrap();
            let still_pending = handle.is_interrupted();
            match a_result {
                Ok(timeout) => {
                    notified += 1;
                    assert!(!timeout.timed_out());
                    assert!(
                        still_pending,
                        "round {round}: a notified waiter keeps the interrupt"
                    );
                    assert!(set.notify_one(state, None), "round {round}: B still waits");
                }
                Err(Interrupted) => {
                    interrupted += 1;
                    assert!(!still_pending);
                }
            }
            assert!(
                !b.join().unwrap(),
                "round {round}: B was notified, not timed out"
            );
        });
    }
    println!("A returned notified {notified} times, interrupted {interrupted} times");
}
