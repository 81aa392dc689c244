#![cfg(loom)]
//! Loom models of the monitor (paper 000, sections 4.3-4.4): enter and exit
//! with two and three threads, timed enters that give up (each way one
//! settles is reached, and from between two queued contenders), wait and
//! notify without lost wake-ups, notifies in one hold that start their
//! walk at the waiter queued last (and a notifier that then waits), a
//! timed wait racing a notification (and a fair monitor's hand-over), a
//! notified waiter that loses once and
//! is handed the monitor next (and one that goes back ahead of the waiter a
//! `notify_one` loop queued last, and three that go back in turn), a
//! contender that loses going back behind a
//! notified waiter, two invited contenders that lose going back in order,
//! a timed contender passed over that gives up or is handed the monitor,
//! a payload set while a timed contender gives up (from a WAITERS head
//! with or without a record behind it), guards that let a
//! contender in while unlocked, eventual fairness and fair releases, a
//! timed interruptible wait racing a notify and an interrupt, and an
//! interruptible enter interrupted in a queue. Hook events
//! (`common/events.rs`) show that the models reach the paths they name.
//!
//! Under loom a timed park never blocks: it reports a timeout unless the
//! thread was already unparked, so a timed wait may time out at any point
//! of a model and every such point is explored.
//!
//! Run with:
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release --test loom_monitor`

use std::time::Duration;

use loom::cell::UnsafeCell;
use loom::model::Builder;
use loom::sync::Arc;
use loom::thread;
use metalock::{MonitorGuard, MultiUseWord};

#[path = "common/events.rs"]
mod events;
#[path = "common/interrupt_race.rs"]
mod interrupt_race;
use events::{
    Events, GiveUp, Outcomes, a_park_woke_early, events, settled_in_every_way,
    spins_saw_a_notify_and_an_interrupt,
};
use interrupt_race::{InterruptRace, assert_notify_or_interrupt};

const PAYLOAD: usize = 0x5A5;

/// A word and data only touched under its monitor; loom checks that the
/// monitor orders every access.
struct Shared {
    word: MultiUseWord,
    counter: UnsafeCell<usize>,
    flag: UnsafeCell<bool>,
}

// SAFETY: `counter` and `flag` are only accessed through the methods below,
// which require a guard of `word`'s monitor: one thread at a time, and loom
// reports any access the monitor does not order.
unsafe impl Sync for Shared {}

impl Shared {
    fn new() -> Arc<Self> {
        Self::with_word(MultiUseWord::with_payload(PAYLOAD))
    }

    /// With a fair monitor.
    fn fair() -> Arc<Self> {
        Self::with_word(MultiUseWord::fair_with_payload(PAYLOAD))
    }

    fn with_word(word: MultiUseWord) -> Arc<Self> {
        Arc::new(Self {
            word,
            counter: UnsafeCell::new(0),
            flag: UnsafeCell::new(false),
        })
    }

    fn check(&self, guard: &MonitorGuard<'_>) {
        assert!(core::ptr::eq(guard.word(), &self.word));
    }

    fn bump(&self, guard: &MonitorGuard<'_>) {
        self.check(guard);
        // SAFETY: the guard proves we own the monitor.
        self.counter.with_mut(|c| unsafe { *c += 1 });
    }

    fn take(&self, guard: &MonitorGuard<'_>) {
        self.check(guard);
        // SAFETY: as in `bump`.
        self.counter.with_mut(|c| unsafe { *c -= 1 });
    }

    fn counter(&self, guard: &MonitorGuard<'_>) -> usize {
        self.check(guard);
        // SAFETY: as in `bump`.
        self.counter.with(|c| unsafe { *c })
    }

    fn set_flag(&self, guard: &MonitorGuard<'_>) {
        self.check(guard);
        // SAFETY: as in `bump`.
        self.flag.with_mut(|f| unsafe { *f = true });
    }

    fn flag(&self, guard: &MonitorGuard<'_>) -> bool {
        self.check(guard);
        // SAFETY: as in `bump`.
        self.flag.with(|f| unsafe { *f })
    }

    /// The final checks, once every thread is joined.
    fn check_final(&self, counter: usize) {
        assert!(!self.word.is_locked());
        assert_eq!(self.word.payload(), PAYLOAD);
        let g = self.word.lock();
        assert_eq!(self.counter(&g), counter);
    }

    /// As `check_final`, for a fair monitor: it stayed fair.
    fn check_final_fair(&self, counter: usize) {
        assert!(self.word.is_fair());
        self.check_final(counter);
    }
}

/// Spawns a model thread that runs `f` on its own handle of `shared`.
fn spawn<T: Send + 'static>(
    shared: &Arc<Shared>,
    f: impl FnOnce(&Shared) -> T + Send + 'static,
) -> thread::JoinHandle<T> {
    let shared = Arc::clone(shared);
    thread::spawn(move || f(&shared))
}

/// Spawns a timed contender: `try_lock_for(timeout)`, then, if it got the
/// monitor (at depth 1), a bump; the thread returns the bumps it made.
fn spawn_timed(shared: &Arc<Shared>, timeout: Duration) -> thread::JoinHandle<usize> {
    spawn(shared, move |shared| {
        let Some(g) = shared.word.try_lock_for(timeout) else {
            return 0;
        };
        assert_eq!(g.depth(), 1);
        shared.bump(&g);
        1
    })
}

/// A timed contender spawned between two blocking ones, each of which
/// increments the counter once it gets in; they may queue in that order
/// behind the owner.
struct TimedBetweenTwo {
    first: thread::JoinHandle<()>,
    timed: thread::JoinHandle<usize>,
    last: thread::JoinHandle<()>,
}

impl TimedBetweenTwo {
    fn spawn(shared: &Arc<Shared>) -> Self {
        let blocking = |shared: &Shared| {
            let g = shared.word.lock();
            shared.bump(&g);
        };
        let first = spawn(shared, blocking);
        let timed = spawn_timed(shared, Duration::from_secs(1));
        let last = spawn(shared, blocking);
        Self { first, timed, last }
    }

    /// Joins the three; how many got in.
    fn join(self) -> usize {
        self.first.join().unwrap();
        self.last.join().unwrap();
        2 + self.timed.join().unwrap()
    }
}

/// A builder for models with two threads: `LOOM_MAX_PREEMPTIONS` if set,
/// else a bound of 3 (an unbounded search does not finish).
fn two_threads() -> Builder {
    let mut builder = Builder::new();
    builder.preemption_bound = builder.preemption_bound.or(Some(3));
    swap_only_limits(&mut builder);
    builder
}

/// A builder for models with three threads: `LOOM_MAX_PREEMPTIONS` if set,
/// else a bound of 2.
fn three_threads() -> Builder {
    let mut builder = Builder::new();
    builder.preemption_bound = builder.preemption_bound.or(Some(2));
    swap_only_limits(&mut builder);
    builder
}

/// The swap-only backend's test-and-set meta-lock adds branches to an
/// execution for every retry, so those models get room for more branches.
fn swap_only_limits(builder: &mut Builder) {
    if cfg!(metalock_swap_only) {
        builder.max_branches = 10_000;
    }
}

/// Runs `model` under `builder` and prints how many executions loom
/// explored, so that a model that explores next to nothing shows.
fn explore(name: &str, builder: Builder, model: impl Fn() + Sync + Send + 'static) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let executions = std::sync::Arc::new(AtomicUsize::new(0));
    let count = std::sync::Arc::clone(&executions);
    let bound = builder.preemption_bound;
    let started = std::time::Instant::now();
    builder.check(move || {
        metalock::__test_hooks::start_crate_model_execution();
        count.fetch_add(1, Ordering::Relaxed);
        model();
    });
    println!(
        "{name}: {} executions in {:?} (preemption bound {:?})",
        executions.load(Ordering::Relaxed),
        started.elapsed(),
        bound,
    );
}

#[test]
fn enter_exit_two_threads() {
    explore("enter_exit_two_threads", two_threads(), || {
        let shared = Shared::new();
        let other = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                // Recursive, released in creation order.
                let outer = shared.word.lock();
                let inner = shared.word.lock();
                assert_eq!(inner.depth(), 2);
                shared.bump(&inner);
                drop(outer);
                assert_eq!(inner.depth(), 1);
                shared.bump(&inner);
                drop(inner);
                // Again, after a release that may have found a contender.
                let g = shared.word.lock();
                shared.bump(&g);
            })
        };
        for _ in 0..2 {
            let g = shared.word.lock();
            assert_eq!(g.depth(), 1);
            shared.bump(&g);
        }
        other.join().unwrap();
        shared.check_final(5);
    });
}

#[test]
fn enter_exit_three_threads() {
    explore("enter_exit_three_threads", three_threads(), || {
        let shared = Shared::new();
        let others: Vec<_> = (0..2)
            .map(|_| {
                let shared = Arc::clone(&shared);
                thread::spawn(move || {
                    let g = shared.word.lock();
                    shared.bump(&g);
                })
            })
            .collect();
        {
            let g = shared.word.lock();
            shared.bump(&g);
        }
        for t in others {
            t.join().unwrap();
        }
        shared.check_final(3);
    });
}

/// A builder for the eventual-fairness models: `LOOM_MAX_PREEMPTIONS` if
/// it is 3 or more, else 3. The hand-over takes a bound of 3 (an invited
/// contender that loses the fused CAS looks at the word again before it
/// re-contends through the meta-lock, and the thread passing it over must be
/// preempted there too), and a lower one would leave the models' assertion
/// that some execution took it nothing to check.
fn hand_over_models() -> Builder {
    at_least(two_threads(), 3)
}

/// `builder` with a preemption bound of at least `bound`.
fn at_least(mut builder: Builder, bound: usize) -> Builder {
    builder.preemption_bound = builder.preemption_bound.map(|b| b.max(bound));
    builder
}

/// `builder` with a preemption bound of at most `bound`: for models whose
/// search one bound deeper takes minutes (times each backend and parker CI
/// runs it on), and with `at_least`, for a model that needs one bound
/// whatever the run's.
fn at_most(mut builder: Builder, bound: usize) -> Builder {
    builder.preemption_bound = builder.preemption_bound.map(|b| b.min(bound));
    builder
}

/// Eventual fairness: a contender that an exit invited and that then lost
/// the monitor to a re-entering thread twice is handed the monitor by the
/// next exit (under loom the time bound counts as passed, so the models
/// also see a contender passed over once invited again). Asserts mutual
/// exclusion throughout, and that some execution had an invited contender
/// lose and some took the hand-over path.
#[test]
fn passed_over_contender_is_handed_the_monitor() {
    let before = events();
    explore(
        "passed_over_contender_is_handed_the_monitor",
        hand_over_models(),
        || {
            let shared = Shared::new();
            let other = {
                let shared = Arc::clone(&shared);
                thread::spawn(move || {
                    let g = shared.word.lock();
                    shared.bump(&g);
                })
            };
            for _ in 0..3 {
                let g = shared.word.lock();
                shared.bump(&g);
            }
            other.join().unwrap();
            shared.check_final(4);
        },
    );
    let after = events();
    let (passed_over, handed_over) = (
        after.passed_over - before.passed_over,
        after.handed_over - before.handed_over,
    );
    println!(
        "passed_over_contender_is_handed_the_monitor: {passed_over} contenders passed over, \
         {handed_over} hand-overs"
    );
    assert!(passed_over > 0, "no invited contender lost the monitor");
    assert!(handed_over > 0, "no execution handed the monitor over");
}

/// A waiting owner hands the monitor to a contender passed over twice: the
/// hand-over inside `wait`, where the waiter's own record goes behind the
/// heir. The contender is what the waiter waits for.
#[test]
fn wait_hands_the_monitor_to_a_passed_over_contender() {
    let hand_overs_before = events().handed_over;
    explore(
        "wait_hands_the_monitor_to_a_passed_over_contender",
        hand_over_models(),
        || {
            let shared = Shared::new();
            let other = {
                let shared = Arc::clone(&shared);
                thread::spawn(move || {
                    let g = shared.word.lock();
                    shared.set_flag(&g);
                    g.notify_all();
                })
            };
            for _ in 0..2 {
                let g = shared.word.lock();
                shared.bump(&g);
            }
            let mut g = shared.word.lock();
            while !shared.flag(&g) {
                g.wait();
            }
            assert_eq!(g.depth(), 1);
            drop(g);
            other.join().unwrap();
            shared.check_final(2);
        },
    );
    let handed_over = events().handed_over - hand_overs_before;
    println!("wait_hands_the_monitor_to_a_passed_over_contender: {handed_over} hand-overs");
    assert!(handed_over > 0, "no execution handed the monitor over");
}

/// `unlock_fair` hands the monitor to a queued contender (either thread may
/// be the one queued): mutual exclusion throughout, and some execution took
/// the hand-over path.
#[test]
fn unlock_fair_hands_the_monitor_over() {
    let hand_overs_before = events().handed_over;
    explore("unlock_fair_hands_the_monitor_over", two_threads(), || {
        let shared = Shared::new();
        let other = spawn(&shared, |shared| {
            let g = shared.word.lock();
            shared.bump(&g);
            g.unlock_fair();
        });
        for _ in 0..2 {
            let g = shared.word.lock();
            shared.bump(&g);
            g.unlock_fair();
        }
        other.join().unwrap();
        shared.check_final(3);
    });
    let handed_over = events().handed_over - hand_overs_before;
    println!("unlock_fair_hands_the_monitor_over: {handed_over} hand-overs");
    assert!(handed_over > 0, "no execution handed the monitor over");
}

/// A fair monitor with a waiter, a contender that also rewrites the payload
/// (which must keep the monitor fair) and a notifier: every release hands
/// over, the waiter comes back once notified, and the monitor stays fair.
#[test]
fn fair_monitor_wait_notify_and_contender() {
    fair_wait_notify_and_contender("fair_monitor_wait_notify_and_contender", 0);
}

/// The same with the wait spinning one round before it parks, as waits do
/// outside the model checkers (`spin_waits`): asserts too that some
/// execution handed the monitor to the waiter while it spun.
#[test]
fn a_spinning_waiter_is_handed_a_fair_monitor() {
    let name = "a_spinning_waiter_is_handed_a_fair_monitor";
    let before = events();
    fair_wait_notify_and_contender(name, 1);
    let [invited, handed_over, _] = events().ended_in_spin_since(&before);
    println!("{name}: spins that saw an invitation {invited}, a hand-over {handed_over}");
    assert!(handed_over > 0, "{name}: no spin saw a hand-over");
}

/// The model of the two above, the wait spinning `spin` rounds.
fn fair_wait_notify_and_contender(name: &'static str, spin: u32) {
    let hand_overs_before = events().handed_over;
    explore(name, three_threads(), move || {
        let _spinning = metalock::__test_hooks::spin_waits(spin);
        let shared = Shared::fair();
        let waiter = spawn(&shared, |shared| wait_for_flag(shared, 1));
        let contender = spawn(&shared, |shared| {
            let g = shared.word.lock();
            shared.word.set_payload(PAYLOAD);
            shared.bump(&g);
        });
        {
            let g = shared.word.lock();
            shared.set_flag(&g);
            g.notify_one();
        }
        waiter.join().unwrap();
        contender.join().unwrap();
        shared.check_final_fair(2);
    });
    let handed_over = events().handed_over - hand_overs_before;
    println!("{name}: {handed_over} hand-overs");
    assert!(handed_over > 0, "no execution handed the monitor over");
}

#[test]
fn try_lock_races_enter() {
    explore("try_lock_races_enter", two_threads(), || {
        let shared = Shared::new();
        let other = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                let g = shared.word.lock();
                shared.bump(&g);
            })
        };
        let got = match shared.word.try_lock() {
            Some(g) => {
                assert_eq!(g.depth(), 1);
                shared.bump(&g);
                1
            }
            None => 0,
        };
        other.join().unwrap();
        shared.check_final(1 + got);
    });
}

/// A timed enter whose time may run out at any point (under loom a timed
/// park reports a timeout at once) racing an owner's exit: either it gets
/// the monitor, or it leaves the queue without taking an invitation or a
/// hand-over with it, and the payload survives either way.
#[test]
fn timed_enter_races_exit() {
    explore("timed_enter_races_exit", two_threads(), || {
        let shared = Shared::new();
        let held = shared.word.lock();
        let timed = spawn_timed(&shared, Duration::from_secs(1));
        shared.bump(&held);
        drop(held);
        let got = timed.join().unwrap();
        shared.check_final(1 + got);
    });
}

/// Two contenders queued behind an owner, one of them timed: the timed one
/// may give up as the first of a WAITERS queue (its record carrying the
/// displaced payload) after the exit invited the other, or behind it. The
/// other always gets the monitor; nobody is left queued.
#[test]
fn timed_enter_gives_up_in_a_queue() {
    two_contenders_one_timed(
        "timed_enter_gives_up_in_a_queue",
        Duration::from_secs(1),
        &[
            GiveUp::LeftTheQueueAndTookIt,
            GiveUp::LeftTheQueue,
            GiveUp::InvitedAndTookIt,
            GiveUp::InvitedAndGaveUp,
        ],
    );
}

/// As `timed_enter_gives_up_in_a_queue`, the timed contender's deadline
/// passed before it queues (a zero timeout): invited first, with the other
/// contender still queued behind it, it must take the monitor rather than
/// drop the invitation, or the other would sleep for ever.
#[test]
fn timed_enter_invited_late_ahead_of_a_queue() {
    two_contenders_one_timed(
        "timed_enter_invited_late_ahead_of_a_queue",
        Duration::ZERO,
        &[GiveUp::LeftTheQueue, GiveUp::InvitedAndTookIt],
    );
}

/// The body of the two models above: an owner, a blocking contender and a
/// contender timed by `timeout`; asserts that the timed enters settled in
/// each of `ways` in some execution, and that some meta-lock hand-off park
/// woke early and parked again.
fn two_contenders_one_timed(name: &'static str, timeout: Duration, ways: &[GiveUp]) {
    let before = events();
    explore(name, three_threads(), move || {
        let shared = Shared::new();
        let held = shared.word.lock();
        let blocking = spawn(&shared, |shared| {
            let g = shared.word.lock();
            shared.bump(&g);
        });
        let timed = spawn_timed(&shared, timeout);
        shared.bump(&held);
        drop(held);
        blocking.join().unwrap();
        let got = timed.join().unwrap();
        shared.check_final(2 + got);
    });
    let after = events();
    settled_in_every_way(name, &after, &before, ways);
    // A hand-off park that returns early, as on a token an exit's unpark
    // left in a contender that took the monitor or gave up before it
    // parked (a spurious return counts too).
    a_park_woke_early(name, &after, &before);
}

/// A timed contender among two blocking ones behind an owner: it may give up
/// from between two queued contenders, neither the head (the walk in
/// `unlink` past a record that is not the head, and a queue whose last
/// record stays), as well as from the places the models above reach. Both
/// blocking contenders get the monitor; nobody is left queued (with debug
/// assertions, the queue's head knows its last record after every change).
/// Asserts that some execution left from between two, which takes a
/// preemption bound of 3 (193,384 executions, 24 s, 431 of them between
/// two); four threads, so never more (CI's bound-4 steps skip it). An
/// `unlink` that dropped the records behind it there failed this model and
/// `set_payload_races_a_timed_head_giving_up_before_a_contender` only.
#[test]
fn timed_enter_gives_up_between_two_contenders() {
    let before = events();
    explore(
        "timed_enter_gives_up_between_two_contenders",
        at_most(at_least(three_threads(), 3), 3),
        || {
            let shared = Shared::new();
            let held = shared.word.lock();
            let contenders = TimedBetweenTwo::spawn(&shared);
            shared.bump(&held);
            drop(held);
            let got_in = contenders.join();
            shared.check_final(1 + got_in);
        },
    );
    let after = events();
    let between = after.left_between_two - before.left_between_two;
    println!("timed_enter_gives_up_between_two_contenders: left from between two {between} times");
    assert!(
        between > 0,
        "no timed enter left from between two contenders"
    );
    settled_in_every_way(
        "timed_enter_gives_up_between_two_contenders",
        &after,
        &before,
        &[GiveUp::LeftTheQueue, GiveUp::LeftTheQueueAndTookIt],
    );
}

/// A timed enter invited after its deadline (a zero timeout: the deadline
/// is behind it once it queues), while the owner that invited it locks
/// again at once: it takes the monitor if the invitation still finds it
/// free, else gives up then and there, never spinning or queueing again (so
/// it is never passed over).
#[test]
fn timed_enter_invited_after_its_deadline() {
    let before = events();
    explore(
        "timed_enter_invited_after_its_deadline",
        two_threads(),
        || {
            let shared = Shared::new();
            let held = shared.word.lock();
            let timed = spawn_timed(&shared, Duration::ZERO);
            shared.bump(&held);
            drop(held);
            let again = shared.word.lock();
            shared.bump(&again);
            drop(again);
            let got = timed.join().unwrap();
            shared.check_final(2 + got);
        },
    );
    let after = events();
    assert_eq!(
        after.passed_over, before.passed_over,
        "a timed enter invited after its deadline queued again"
    );
    settled_in_every_way(
        "timed_enter_invited_after_its_deadline",
        &after,
        &before,
        &[GiveUp::InvitedAndTookIt, GiveUp::InvitedAndGaveUp],
    );
}

/// A timed contender next to a waiter that the owner notifies: the
/// notified waiter is queued ahead of contenders, and a timed contender that
/// gives up must leave it its invitation or hand-over.
#[test]
fn timed_enter_with_a_notified_waiter() {
    explore(
        "timed_enter_with_a_notified_waiter",
        three_threads(),
        || {
            let shared = Shared::new();
            let waiter = spawn(&shared, |shared| {
                let mut g = shared.word.lock();
                while !shared.flag(&g) {
                    g.wait();
                }
                shared.bump(&g);
            });
            let timed = spawn_timed(&shared, Duration::from_secs(1));
            {
                let g = shared.word.lock();
                shared.set_flag(&g);
                g.notify_all();
            }
            waiter.join().unwrap();
            let got = timed.join().unwrap();
            shared.check_final(1 + got);
        },
    );
}

/// A fair monitor hands over on every release: a timed contender may be the
/// heir (also as its park times out, on the signal alone), or give up with
/// a blocking contender queued behind or ahead of it.
#[test]
fn fair_monitor_with_a_timed_contender() {
    let before = events();
    explore(
        "fair_monitor_with_a_timed_contender",
        three_threads(),
        || {
            let shared = Shared::fair();
            let held = shared.word.lock();
            let timed = spawn_timed(&shared, Duration::from_secs(1));
            let blocking = spawn(&shared, |shared| {
                let g = shared.word.lock();
                shared.bump(&g);
            });
            shared.bump(&held);
            drop(held);
            blocking.join().unwrap();
            let got = timed.join().unwrap();
            shared.check_final_fair(2 + got);
        },
    );
    settled_in_every_way(
        "fair_monitor_with_a_timed_contender",
        &events(),
        &before,
        &[GiveUp::HandedOver, GiveUp::LeftTheQueue],
    );
    assert!(
        events().handed_over_as_a_timed_park_ended > before.handed_over_as_a_timed_park_ended,
        "fair_monitor_with_a_timed_contender: no hand-over landed as a timed park timed out"
    );
}

/// A timed contender that exits invite and a re-entering owner passes over,
/// once or twice: it goes back into the queue with its deadline, and its
/// time may run out there (it leaves the queue), once invited again (it
/// takes the monitor or gives up), or after an exit handed it the monitor
/// for having been passed over too long (a hand-over on a monitor that is
/// not fair, which the timed contender keeps, whether its park timed out
/// or not). Every critical section counts and nobody is left queued;
/// asserts that each of those ways was reached after a loss. Under loom a
/// timed park times out at once unless an unpark came first, so every
/// invitation of the timed contender after the first needs two more
/// preemptions: the hand-over takes a bound of 6 (391,137 executions, 22 s),
/// which the model sets whatever the run's bound.
#[test]
fn a_passed_over_timed_contender_gives_up_or_is_handed_over() {
    const NAME: &str = "a_passed_over_timed_contender_gives_up_or_is_handed_over";
    type Reached = Vec<((usize, bool, Option<GiveUp>), usize)>;
    let reached = std::sync::Arc::new(std::sync::Mutex::new(Reached::new()));
    let record = std::sync::Arc::clone(&reached);
    explore(NAME, at_most(at_least(two_threads(), 6), 6), move || {
        let start = events();
        let shared = Shared::new();
        let held = shared.word.lock();
        let timed = spawn_timed(&shared, Duration::from_secs(1));
        shared.bump(&held);
        drop(held);
        for _ in 0..3 {
            let g = shared.word.lock();
            shared.bump(&g);
        }
        let got = timed.join().unwrap();
        shared.check_final(4 + got);
        let end = events();
        let settled = end.gave_up_since(&start);
        let way = settled.iter().find(|&&(_, n)| n > 0).map(|&(way, _)| way);
        let key = (
            end.passed_over - start.passed_over,
            end.handed_over > start.handed_over,
            way,
        );
        let mut record = record.lock().unwrap();
        match record.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += 1,
            None => record.push((key, 1)),
        }
    });
    let reached = reached.lock().unwrap();
    println!("{NAME}: (times passed over, handed over, settled) -> executions: {reached:?}");
    let after_a_loss = |handed_over: bool, way: Option<GiveUp>| {
        reached
            .iter()
            .any(|&((losses, h, w), _)| losses > 0 && h == handed_over && w == way)
    };
    for (handed_over, way) in [
        (false, Some(GiveUp::LeftTheQueue)),
        (false, Some(GiveUp::InvitedAndGaveUp)),
        (false, Some(GiveUp::InvitedAndTookIt)),
        (true, Some(GiveUp::HandedOver)),
        (true, None),
    ] {
        assert!(
            after_a_loss(handed_over, way),
            "{NAME}: no execution passed the timed contender over and then \
             (handed over: {handed_over}) settled as {way:?}"
        );
    }
}

/// `set_payload` after the owner's exit, racing two contenders, one timed:
/// the exit invites one of them and may leave the other at the head of a
/// WAITERS queue, whose record then carries the displaced payload:
/// `set_payload` writes the payload there, and a timed enter that gives up
/// from there must pass it on to the word. The payload written is the
/// word's at the end, however the timed enter settled; asserts that each
/// of the four ways it can settle here was reached, and that in some
/// execution `set_payload` wrote a WAITERS head and the timed enter left
/// the queue (a `set_payload` that wrote a WAITERS word's head record only
/// when LOCKED failed this model and
/// `set_payload_races_a_timed_head_giving_up_before_a_contender` only).
#[test]
fn set_payload_races_a_timed_enter_giving_up() {
    const NAME: &str = "set_payload_races_a_timed_enter_giving_up";
    let before = events();
    let outcomes = Outcomes::new(["set a WAITERS head's payload and left the queue"]);
    let record = outcomes.clone();
    explore(NAME, three_threads(), move || {
        let start = events();
        let shared = Shared::new();
        let held = shared.word.lock();
        let blocking = spawn(&shared, |shared| {
            let g = shared.word.lock();
            shared.bump(&g);
        });
        let timed = spawn_timed(&shared, Duration::from_secs(1));
        shared.bump(&held);
        drop(held);
        shared.word.set_payload(PAYLOAD + 1);
        blocking.join().unwrap();
        let got = timed.join().unwrap();
        assert_eq!(shared.word.payload(), PAYLOAD + 1);
        shared.word.set_payload(PAYLOAD);
        shared.check_final(2 + got);
        let end = events();
        let left = end.gave_up_since(&start).iter().any(|&(way, n)| {
            n > 0 && matches!(way, GiveUp::LeftTheQueue | GiveUp::LeftTheQueueAndTookIt)
        });
        if left && end.payload_set_at_head > start.payload_set_at_head {
            record.record(0);
        }
    });
    settled_in_every_way(
        NAME,
        &events(),
        &before,
        &[
            GiveUp::LeftTheQueueAndTookIt,
            GiveUp::LeftTheQueue,
            GiveUp::InvitedAndTookIt,
            GiveUp::InvitedAndGaveUp,
        ],
    );
    outcomes.assert_reached(NAME, &[0]);
}

/// `set_payload` after the owner's exit, racing a timed contender that
/// gives up from the head of a WAITERS queue with a record behind it: two
/// blocking contenders and the timed one between them queue behind the
/// owner, whose exit invites the first and leaves the timed one at the
/// head of the rest, carrying the displaced payload; giving up, it passes
/// the payload on to the last. The payload written is the word's at the
/// end, whichever of the two records it was written into; asserts that
/// in some execution `set_payload` wrote the timed contender's record
/// before it left the head (told apart by the hook counts around the
/// `set_payload` call; the meta-lock orders the two). The other order
/// cannot be had here: a timed contender that leaves a WAITERS head takes
/// the monitor under the same meta-lock, as nobody owns it. An `unlink` that did not pass the payload on
/// failed this model and `timed_enter_gives_up_between_two_contenders`, a
/// `set_payload` that skipped a WAITERS head this one and
/// `set_payload_races_a_timed_enter_giving_up`. Four threads: capped at
/// bound 2, which reaches both (6,543 executions, under a second; bound 3
/// explored 518,312 in 53 s for nothing more asserted).
#[test]
fn set_payload_races_a_timed_head_giving_up_before_a_contender() {
    const NAME: &str = "set_payload_races_a_timed_head_giving_up_before_a_contender";
    let outcomes = Outcomes::new(["set the timed head's payload, then it left"]);
    let record = outcomes.clone();
    explore(NAME, at_most(three_threads(), 2), move || {
        let start = events();
        let shared = Shared::new();
        let held = shared.word.lock();
        let contenders = TimedBetweenTwo::spawn(&shared);
        shared.bump(&held);
        drop(held);
        let before_set = events();
        shared.word.set_payload(PAYLOAD + 1);
        let after_set = events();
        let got_in = contenders.join();
        assert_eq!(shared.word.payload(), PAYLOAD + 1);
        shared.word.set_payload(PAYLOAD);
        shared.check_final(1 + got_in);
        // One timed contender leaves a head once at most.
        let left = |events: &Events| events.left_a_waiters_head - start.left_a_waiters_head;
        if after_set.payload_set_at_head > before_set.payload_set_at_head
            && left(&after_set) == 0
            && left(&events()) == 1
        {
            record.record(0);
        }
    });
    outcomes.assert_reached(NAME, &[0]);
}

/// A guard releases its monitor and enters it again while another thread
/// contends: `MonitorGuard::bump` hands the monitor to a queued contender
/// (or, seeing none queued, keeps it), `unlocked` releases it and
/// `unlocked_fair` hands it over, or releases it if nobody is queued.
/// Every increment is ordered by the monitor and the guard holds it again
/// at depth 1 after each; asserts that the contender got in during each of
/// the three in some execution, and that some execution handed the monitor
/// over during the `bump`, the model's first release: the contender, never
/// invited before, cannot have been passed over, so only a fair release
/// hands it over there (a `bump` that released unfairly, as `unlocked`
/// does, failed this model and the two of a notified waiter in
/// `loom_condition` only).
#[test]
fn a_guard_lets_a_contender_in_while_it_is_unlocked() {
    const NAME: &str = "a_guard_lets_a_contender_in_while_it_is_unlocked";
    let outcomes = Outcomes::new([
        "let the contender in during bump",
        "let it in during unlocked",
        "let it in during unlocked_fair",
        "let it in after the guard's drop",
        "handed the monitor over during bump",
    ]);
    let record = outcomes.clone();
    explore(NAME, two_threads(), move || {
        let shared = Shared::new();
        let mut g = shared.word.lock();
        let contender = spawn(&shared, |shared| {
            let g = shared.word.lock();
            shared.bump(&g);
        });
        shared.bump(&g);
        let hand_overs = events().handed_over;
        MonitorGuard::bump(&mut g);
        if events().handed_over > hand_overs {
            record.record(4);
        }
        assert_eq!(g.depth(), 1);
        let after_bump = shared.counter(&g);
        MonitorGuard::unlocked(&mut g, || ());
        assert_eq!(g.depth(), 1);
        let after_unlocked = shared.counter(&g);
        MonitorGuard::unlocked_fair(&mut g, || ());
        assert_eq!(g.depth(), 1);
        let after_unlocked_fair = shared.counter(&g);
        drop(g);
        contender.join().unwrap();
        shared.check_final(2);
        // The contender's increment came in one of the three, or after.
        let got_in = [after_bump, after_unlocked, after_unlocked_fair]
            .iter()
            .position(|&n| n == 2)
            .unwrap_or(3);
        record.record(got_in);
    });
    outcomes.assert_reached(NAME, &[0, 1, 2, 4]);
}

#[test]
fn set_payload_races_enter_exit() {
    explore("set_payload_races_enter_exit", two_threads(), || {
        let shared = Shared::new();
        let other = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                let g = shared.word.lock();
                shared.bump(&g);
            })
        };
        shared.word.set_payload(PAYLOAD + 1);
        assert_eq!(shared.word.payload(), PAYLOAD + 1);
        other.join().unwrap();
        assert!(!shared.word.is_locked());
        assert_eq!(shared.word.payload(), PAYLOAD + 1);
    });
}

/// The waiter of the no-lost-wake-up models: waits, at `depth`, until the
/// flag is set, and checks that the wait restores the depth.
fn wait_for_flag(shared: &Shared, depth: usize) {
    let mut guards: Vec<MonitorGuard<'_>> = (0..depth).map(|_| shared.word.lock()).collect();
    let g = guards.last_mut().unwrap();
    while !shared.flag(g) {
        g.wait();
        assert_eq!(g.depth(), depth);
    }
    shared.bump(g);
}

#[test]
fn wait_notify_one_no_lost_wakeup() {
    explore("wait_notify_one_no_lost_wakeup", two_threads(), || {
        let shared = Shared::new();
        let waiter = {
            let shared = Arc::clone(&shared);
            // At depth 2: the wait must release both levels for the
            // notifier to get in.
            thread::spawn(move || wait_for_flag(&shared, 2))
        };
        {
            let g = shared.word.lock();
            assert_eq!(g.depth(), 1);
            shared.set_flag(&g);
            g.notify_one();
        }
        waiter.join().unwrap();
        shared.check_final(1);
    });
}

#[test]
fn notify_all_two_waiters() {
    explore("notify_all_two_waiters", three_threads(), || {
        let shared = Shared::new();
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let shared = Arc::clone(&shared);
                thread::spawn(move || wait_for_flag(&shared, 1))
            })
            .collect();
        {
            let g = shared.word.lock();
            shared.set_flag(&g);
            assert!(g.notify_all() <= 2);
        }
        for w in waiters {
            w.join().unwrap();
        }
        shared.check_final(2);
    });
}

#[test]
fn notify_with_a_competing_enter() {
    // The notified waiter is invited when the notifier leaves, but a third
    // thread may take the monitor first; its exit must invite the waiter
    // again.
    explore("notify_with_a_competing_enter", three_threads(), || {
        notify_beside_a_competitor(1)
    });
}

/// A waiter waits for the flag, a competitor enters `enters` times, and the
/// main thread sets the flag and notifies once; everyone's increments
/// count.
fn notify_beside_a_competitor(enters: usize) {
    let shared = Shared::new();
    let waiter = spawn(&shared, |shared| wait_for_flag(shared, 1));
    let competitor = spawn(&shared, move |shared| {
        for _ in 0..enters {
            let g = shared.word.lock();
            shared.bump(&g);
        }
    });
    {
        let g = shared.word.lock();
        shared.set_flag(&g);
        g.notify_one();
    }
    waiter.join().unwrap();
    competitor.join().unwrap();
    shared.check_final(1 + enters);
}

/// A notified waiter loses the monitor at most once: invited by the
/// notifier's exit, it may lose to a thread that barged in (here one that
/// enters twice), and then queues ahead of the contenders to be handed the
/// monitor by the next exit that reaches it. Asserts per execution that the
/// waiter lost at most once, and that when it lost it was handed the
/// monitor (the one hand-over of an execution where no contender was
/// passed over, which could be another heir); and over all executions that
/// it did lose in some (at a preemption bound of 3 or more).
#[test]
fn a_notified_waiter_that_loses_is_handed_the_monitor_next() {
    let before = events();
    explore(
        "a_notified_waiter_that_loses_is_handed_the_monitor_next",
        at_least(three_threads(), 3),
        || {
            let at_start = events();
            notify_beside_a_competitor(2);
            let now = events();
            let lost = now.notified_lost - at_start.notified_lost;
            assert!(lost <= 1, "a notified waiter lost {lost} times");
            let handed_over = now.handed_over - at_start.handed_over;
            if lost == 1 {
                assert!(
                    handed_over > 0,
                    "a notified waiter that lost was not handed the monitor"
                );
            }
            if now.passed_over == at_start.passed_over {
                assert_eq!(handed_over, lost, "a hand-over to nobody who lost");
            }
        },
    );
    let lost = events().notified_lost - before.notified_lost;
    println!("a_notified_waiter_that_loses_is_handed_the_monitor_next: lost in {lost} executions");
    assert!(lost > 0, "no execution had the notified waiter lose");
}

/// A contender that an exit invited and that lost the monitor goes back to
/// its place, first among the contenders but behind a waiter notified
/// since: the main thread releases and re-enters (inviting the contender,
/// which may still be on its way), then notifies the waiter. Asserts mutual
/// exclusion and, with debug assertions, the queue's invariants at every
/// change of the queue (the contender's return checks that no notified
/// waiter is behind it), and that some execution had the contender go back
/// behind a record it does not pass (here the notified waiter: the
/// contender is the only thread that can lose after an invitation).
#[test]
fn a_contender_that_lost_goes_back_behind_a_notified_waiter() {
    let before = events();
    explore(
        "a_contender_that_lost_goes_back_behind_a_notified_waiter",
        at_least(three_threads(), 3),
        || {
            let shared = Shared::new();
            let waiter = spawn(&shared, |shared| wait_for_flag(shared, 1));
            let contender = spawn(&shared, |shared| {
                let g = shared.word.lock();
                shared.bump(&g);
            });
            drop(shared.word.lock());
            {
                let g = shared.word.lock();
                shared.set_flag(&g);
                g.notify_one();
            }
            waiter.join().unwrap();
            contender.join().unwrap();
            shared.check_final(2);
        },
    );
    let behind = events().requeued_behind - before.requeued_behind;
    println!(
        "a_contender_that_lost_goes_back_behind_a_notified_waiter: went back behind {behind} times"
    );
    assert!(
        behind > 0,
        "no contender that lost went back behind a notified waiter"
    );
}

/// Two contenders invited by successive exits both lose to the thread that
/// invited them, which enters again each time: each goes back to its
/// place, and the second back goes behind the first if the first lost
/// before it did (an older claim; a contender passed over twice is handed
/// the monitor). Asserts mutual exclusion, and with debug assertions the
/// queue's invariants at every change (that no contender goes back ahead
/// of one that lost before it, too); and that some execution had a
/// contender go back behind one that had lost before it (938 executions
/// of 115,886 at bound 3; 224 s at bound 4, which CI skips). A requeue
/// that ignored the older claim failed this model.
#[test]
fn two_invited_contenders_lose_and_go_back_in_order() {
    let before = events();
    explore(
        "two_invited_contenders_lose_and_go_back_in_order",
        at_least(three_threads(), 3),
        || {
            let shared = Shared::new();
            let held = shared.word.lock();
            let contender = |shared: &Shared| {
                let g = shared.word.lock();
                shared.bump(&g);
            };
            let first = spawn(&shared, contender);
            let second = spawn(&shared, contender);
            shared.bump(&held);
            drop(held);
            for _ in 0..2 {
                let g = shared.word.lock();
                shared.bump(&g);
            }
            first.join().unwrap();
            second.join().unwrap();
            shared.check_final(5);
        },
    );
    let behind = events().requeued_behind_a_loser - before.requeued_behind_a_loser;
    println!(
        "two_invited_contenders_lose_and_go_back_in_order: went back behind a loser {behind} times"
    );
    assert!(
        behind > 0,
        "no contender that lost went back behind one that lost before it"
    );
}

/// An interruptible contender that its owner interrupts and then lets in:
/// it reports the interrupt (flag cleared) having left the queue, or having
/// been invited and finding the monitor free takes it (flag still set), or
/// enters first; the interrupt stays pending exactly when it entered.
/// Asserts that the give-up paths the interrupt takes were explored.
#[test]
fn an_interruptible_enter_races_an_interrupt_and_an_exit() {
    interrupted_contender(
        "an_interruptible_enter_races_an_interrupt_and_an_exit",
        Contender::Interruptible,
        two_threads(),
        &[GiveUp::LeftTheQueue, GiveUp::InvitedAndTookIt],
    );
}

/// As the model above, through `try_lock_for_interruptibly`, whose time
/// may also run out at any point (under loom a timed park may time out at
/// once): it enters (flag still set), reports the interrupt (flag cleared),
/// or reports the timeout with the interrupt still pending (read after the
/// timeout, or sent after it). Asserts that all three endings, and the
/// give-up paths, were explored.
#[test]
fn a_timed_interruptible_enter_races_an_interrupt_its_timeout_and_an_exit() {
    interrupted_contender(
        "a_timed_interruptible_enter_races_an_interrupt_its_timeout_and_an_exit",
        Contender::TimedInterruptible,
        two_threads(),
        &[GiveUp::LeftTheQueue, GiveUp::InvitedAndTookIt],
    );
}

/// An interruptible contender that its owner interrupts while it keeps the
/// monitor: the interrupt alone must end the enter (`Interrupted`, flag
/// cleared), wherever it finds the contender, asleep in the queue
/// included (a contender the interrupt does not unpark deadlocks here).
#[test]
fn an_interrupt_wakes_a_queued_contender() {
    explore(
        "an_interrupt_wakes_a_queued_contender",
        two_threads(),
        || {
            let shared = Shared::new();
            let race = InterruptRace::new();
            let held = shared.word.lock();
            let interruptible = {
                let race = race.clone();
                spawn(&shared, move |shared| {
                    race.publish_handle();
                    let result = shared.word.lock_interruptibly().map(drop);
                    (result, race.pending_after_the_wait())
                })
            };
            race.interrupt_then_notify(|| false);
            let (result, pending) = interruptible.join().unwrap();
            assert_eq!((result, pending), (Err(metalock::Interrupted), false));
            shared.bump(&held);
            drop(held);
            shared.check_final(1);
        },
    );
}

/// As `an_interruptible_enter_races_an_interrupt_and_an_exit`, with a
/// blocking contender beside the interrupted one: whichever of the four
/// ways the interrupted one settles (each asserted explored), the other
/// gets the monitor and nobody is left queued.
#[test]
fn an_interrupted_contender_leaves_the_queue_whole() {
    interrupted_contender(
        "an_interrupted_contender_leaves_the_queue_whole",
        Contender::InterruptibleBesideABlockingOne,
        three_threads(),
        &[
            GiveUp::LeftTheQueueAndTookIt,
            GiveUp::LeftTheQueue,
            GiveUp::InvitedAndTookIt,
            GiveUp::InvitedAndGaveUp,
        ],
    );
}

/// `queue_length` races a contender queueing, and the owner's exit: the
/// owner waits until the query counts its contender (a fast path that
/// missed a queue would spin it out of loom's budget), then lets it in; 0
/// once it has let go (its one contender handed the monitor or invited out
/// of the queue) and after; `has_queued_threads` agrees.
#[test]
fn queue_length_races_a_contender_and_an_exit() {
    explore(
        "queue_length_races_a_contender_and_an_exit",
        two_threads(),
        || {
            let shared = Shared::new();
            let held = shared.word.lock();
            let contender = spawn(&shared, |shared| {
                let g = shared.word.lock();
                shared.bump(&g);
            });
            while shared.word.queue_length() == 0 {
                thread::yield_now();
            }
            assert_eq!(shared.word.queue_length(), 1);
            assert!(shared.word.has_queued_threads());
            shared.bump(&held);
            drop(held);
            assert_eq!(shared.word.queue_length(), 0);
            contender.join().unwrap();
            assert_eq!(shared.word.queue_length(), 0);
            assert!(!shared.word.has_queued_threads());
            shared.check_final(2);
        },
    );
}

/// `queue_length`, then `has_queued_threads`, race a timed contender that
/// may give up and unlink its record (under loom its park may time out at
/// once): 0 or 1 while the owner holds the monitor, 0 after. A look at the
/// queue outside the meta-lock races the unlink, which loom reports.
/// Asserts that some execution counted the contender, and that some saw it
/// queued.
#[test]
fn queue_length_races_a_timed_contender_giving_up() {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    static COUNTED: AtomicUsize = AtomicUsize::new(0);
    static SEEN: AtomicUsize = AtomicUsize::new(0);
    explore(
        "queue_length_races_a_timed_contender_giving_up",
        two_threads(),
        || {
            let shared = Shared::new();
            let held = shared.word.lock();
            let timed = spawn_timed(&shared, Duration::from_secs(1));
            let queued = shared.word.queue_length();
            assert!(queued <= 1);
            COUNTED.fetch_add(queued, Relaxed);
            SEEN.fetch_add(usize::from(shared.word.has_queued_threads()), Relaxed);
            shared.bump(&held);
            drop(held);
            let bumps = timed.join().unwrap();
            assert_eq!(shared.word.queue_length(), 0);
            shared.check_final(1 + bumps);
        },
    );
    assert!(
        COUNTED.load(Relaxed) > 0,
        "no execution counted the contender"
    );
    assert!(SEEN.load(Relaxed) > 0, "no execution saw the contender");
}

/// `wait_set_length` races a timed waiter that may time out and leave the
/// wait set (under loom its park may time out at once), then the owner's
/// notify: 0 or 1 before, 0 once the notify (or the timeout) took the
/// waiter out, with the owner still holding the monitor; the second look
/// is `has_waiters`. Asserts that some execution counted the waiter, and
/// that some saw it.
#[test]
fn wait_set_length_races_a_timed_waiter_and_a_notify() {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    static COUNTED: AtomicUsize = AtomicUsize::new(0);
    static SEEN: AtomicUsize = AtomicUsize::new(0);
    explore(
        "wait_set_length_races_a_timed_waiter_and_a_notify",
        two_threads(),
        || {
            let shared = Shared::new();
            let waiter = spawn(&shared, |shared| {
                let mut g = shared.word.lock();
                shared.bump(&g);
                let _ = g.wait_for(Duration::from_secs(1));
                assert_eq!(g.depth(), 1);
            });
            let waiting = shared.word.wait_set_length();
            assert!(waiting <= 1);
            COUNTED.fetch_add(waiting, Relaxed);
            SEEN.fetch_add(usize::from(shared.word.has_waiters()), Relaxed);
            let held = shared.word.lock();
            held.notify_all();
            assert_eq!(shared.word.wait_set_length(), 0);
            assert!(!shared.word.has_waiters());
            shared.bump(&held);
            drop(held);
            waiter.join().unwrap();
            assert_eq!(shared.word.wait_set_length(), 0);
            shared.check_final(2);
        },
    );
    assert!(COUNTED.load(Relaxed) > 0, "no execution counted the waiter");
    assert!(SEEN.load(Relaxed) > 0, "no execution saw the waiter");
}

/// A word's `wait_set_length` and `has_waiters` count its own waiters
/// only: under the crate's models every word's wait set is in one stripe
/// of the wait table, where another word's timed waiter waits here (in
/// real runs two words rarely share one). A look that took any waiter of
/// the stripe for the word's answers for the wrong word. Asserts that some
/// execution saw the other word's waiter.
#[test]
fn wait_queries_skip_another_words_waiter() {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    static SEEN: AtomicUsize = AtomicUsize::new(0);
    explore(
        "wait_queries_skip_another_words_waiter",
        two_threads(),
        || {
            let shared = Shared::new();
            let other = Shared::new();
            let waiter = spawn(&other, |other| {
                let mut g = other.word.lock();
                let _ = g.wait_for(Duration::from_secs(1));
            });
            assert!(!shared.word.has_waiters());
            SEEN.fetch_add(usize::from(other.word.has_waiters()), Relaxed);
            assert_eq!(shared.word.wait_set_length(), 0);
            waiter.join().unwrap();
        },
    );
    assert!(SEEN.load(Relaxed) > 0, "no execution saw the other waiter");
}

/// The contenders of the models above.
#[derive(Clone, Copy, PartialEq)]
enum Contender {
    /// `lock_interruptibly`.
    Interruptible,
    /// `lock_interruptibly`, beside a thread blocked in `lock`.
    InterruptibleBesideABlockingOne,
    /// `try_lock_for_interruptibly`.
    TimedInterruptible,
}

/// The body of the models above: an owner, an interruptible contender (and
/// a blocking one beside it); the owner interrupts the interruptible one,
/// then releases. A timed contender's three endings are each asserted
/// explored.
fn interrupted_contender(
    name: &'static str,
    contender: Contender,
    builder: Builder,
    ways: &[GiveUp],
) {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    /// Per model (the models of one binary run at once): executions that
    /// entered, reported the interrupt, timed out.
    static ENDINGS: [[AtomicUsize; 3]; 3] = [const { [const { AtomicUsize::new(0) }; 3] }; 3];
    let endings = &ENDINGS[contender as usize];
    let before = events();
    explore(name, builder, move || {
        let shared = Shared::new();
        let race = InterruptRace::new();
        let held = shared.word.lock();
        let blocking = (contender == Contender::InterruptibleBesideABlockingOne).then(|| {
            spawn(&shared, |shared| {
                let g = shared.word.lock();
                shared.bump(&g);
            })
        });
        let interruptible = {
            let race = race.clone();
            spawn(&shared, move |shared| {
                race.publish_handle();
                let entered = match contender {
                    Contender::TimedInterruptible => shared
                        .word
                        .try_lock_for_interruptibly(Duration::from_secs(1)),
                    _ => shared.word.lock_interruptibly().map(Some),
                };
                let ending = match entered {
                    Ok(Some(g)) => {
                        assert_eq!(g.depth(), 1);
                        shared.bump(&g);
                        0
                    }
                    Err(metalock::Interrupted) => 1,
                    Ok(None) => 2,
                };
                (ending, race.pending_after_the_wait())
            })
        };
        race.interrupt_then_notify(|| false);
        shared.bump(&held);
        drop(held);
        let (ending, pending) = interruptible.join().unwrap();
        assert_eq!(pending, ending != 1, "ending {ending}, pending {pending}");
        endings[ending].fetch_add(1, Relaxed);
        let others = blocking.map_or(0, |blocking| {
            blocking.join().unwrap();
            1
        });
        shared.check_final(1 + usize::from(ending == 0) + others);
    });
    settled_in_every_way(name, &events(), &before, ways);
    let seen = endings.each_ref().map(|ending| ending.load(Relaxed));
    println!("{name}: entered, interrupted, timed out: {seen:?}");
    let expected = match contender {
        Contender::TimedInterruptible => 3,
        _ => 2,
    };
    assert!(
        seen[..expected].iter().all(|&n| n > 0),
        "{name}: not every ending explored: {seen:?}"
    );
}

/// A timed interruptible wait races a notify, an interrupt and its own
/// timeout (under loom a timed park may time out at any point): it returns
/// notified exactly when the notify reached it, and the interrupt stays
/// pending exactly when it does not report it (JLS 17.2.4; a wait whose
/// time ran out may report an interrupt that came while it re-entered).
#[test]
fn a_timed_interruptible_wait_races_a_notify_and_an_interrupt() {
    interruptible_wait_races(
        "a_timed_interruptible_wait_races_a_notify_and_an_interrupt",
        0,
    );
}

/// The same race with the wait spinning one round before it parks, as
/// waits do outside the model checkers (`spin_waits`): asserted, as above,
/// that the notify and the interrupt are each reported exactly once, and
/// that some execution saw the signal in the spin and some the interrupt
/// (which the spin leaves pending for the wait to report). A planted spin
/// that takes the interrupt when it sees it (so that the wait reports a
/// timeout) fails this model and
/// `condition_notify_races_an_interrupt_of_a_spinning_waiter`, and passes
/// every other model (none but these reaches the spin).
#[test]
fn a_spinning_waiter_races_a_notify_and_an_interrupt() {
    let name = "a_spinning_waiter_races_a_notify_and_an_interrupt";
    let before = events();
    interruptible_wait_races(name, 1);
    spins_saw_a_notify_and_an_interrupt(name, &before);
}

/// The race of the two models above, the wait spinning `spin` rounds.
fn interruptible_wait_races(name: &'static str, spin: u32) {
    explore(name, two_threads(), move || {
        let _spinning = metalock::__test_hooks::spin_waits(spin);
        let word = Arc::new(MultiUseWord::new());
        let race = InterruptRace::new();
        let waiter = {
            let (word, race) = (word.clone(), race.clone());
            thread::spawn(move || {
                race.publish_handle();
                let result = word
                    .lock()
                    .wait_for_interruptibly(Duration::from_secs(1))
                    .map(|result| result.timed_out());
                (result, race.pending_after_the_wait())
            })
        };
        let notified = race.interrupt_then_notify(|| word.lock().notify_one());
        let (result, pending) = waiter.join().unwrap();
        assert_notify_or_interrupt(notified, result, pending);
    });
}

#[test]
fn waiting_summary_is_set_again_by_the_next_wait() {
    // The notify that marks the last waiter clears the word's waiting
    // summary, and a notify that finds it clear skips the meta-lock. The
    // waiter's second wait must set it again, through whatever exits and
    // enters the competitor causes in between, or the second notification
    // is skipped and the waiter sleeps forever.
    explore(
        "waiting_summary_is_set_again_by_the_next_wait",
        three_threads(),
        || {
            let shared = Shared::new();
            let waiter = {
                let shared = Arc::clone(&shared);
                thread::spawn(move || {
                    let mut g = shared.word.lock();
                    for round in 1..=2 {
                        while shared.counter(&g) < round {
                            g.wait();
                        }
                    }
                })
            };
            let competitor = {
                let shared = Arc::clone(&shared);
                thread::spawn(move || drop(shared.word.lock()))
            };
            for _ in 0..2 {
                let g = shared.word.lock();
                shared.bump(&g);
                g.notify_all();
            }
            waiter.join().unwrap();
            competitor.join().unwrap();
            shared.check_final(2);
        },
    );
}

#[test]
fn notify_one_twice_two_waiters() {
    notify_one_twice("notify_one_twice_two_waiters", false);
}

/// Both notifications under one hold: in the executions where both threads
/// wait first, the second finds a queue that ends with the first's waiter
/// and takes its end without a walk, checked against the walk in debug
/// builds (a planted panic there fails this model).
#[test]
fn notify_one_twice_in_one_hold() {
    notify_one_twice("notify_one_twice_in_one_hold", true);
}

/// Each waiter takes one permit; each notify_one hands out one. Every
/// waiter must return, whichever of them each notification marks.
fn notify_one_twice(name: &str, one_hold: bool) {
    explore(name, three_threads(), move || {
        let shared = Shared::new();
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let shared = Arc::clone(&shared);
                thread::spawn(move || {
                    let mut g = shared.word.lock();
                    // The counter is the number of permits left.
                    while shared.counter(&g) == 0 {
                        g.wait();
                    }
                    shared.take(&g);
                })
            })
            .collect();
        if one_hold {
            let g = shared.word.lock();
            for _ in 0..2 {
                shared.bump(&g);
                g.notify_one();
            }
        } else {
            for _ in 0..2 {
                let g = shared.word.lock();
                shared.bump(&g);
                g.notify_one();
            }
        }
        for w in waiters {
            w.join().unwrap();
        }
        shared.check_final(0);
    });
}

/// Two `notify_one` calls under one hold with a contender queued: the
/// second starts its walk at the waiter the first queued (the owner's
/// `last_notified`), not at the owner. Asserts, in the executions where it
/// did, that both waiters entered before the contender (notified waiters go
/// ahead of contenders); with debug assertions, at every notify, that the
/// walk starts in the owner's queue with no contender ahead of it, which
/// also catches a `last_notified` left over from an earlier hold of the
/// record; and over all executions that the walk from the waiter happened.
/// Four threads: at a preemption bound of 2 at most (8,583 executions,
/// 12 of them walking from the waiter; 459,591 and 82 s at bound 3).
#[test]
fn notify_one_twice_in_one_hold_with_a_contender() {
    use loom::sync::Mutex;
    let before = events();
    explore(
        "notify_one_twice_in_one_hold_with_a_contender",
        at_most(three_threads(), 2),
        || {
            let shared = Shared::new();
            let order = Arc::new(Mutex::new(Vec::new()));
            let mut threads: Vec<_> = (0..2)
                .map(|_| {
                    let order = Arc::clone(&order);
                    spawn(&shared, move |shared| {
                        let mut g = shared.word.lock();
                        while shared.counter(&g) == 0 {
                            g.wait();
                        }
                        shared.take(&g);
                        order.lock().unwrap().push("waiter");
                    })
                })
                .collect();
            let at_start = events();
            {
                let g = shared.word.lock();
                let order = Arc::clone(&order);
                threads.push(spawn(&shared, move |shared| {
                    let g = shared.word.lock();
                    shared.check(&g);
                    order.lock().unwrap().push("contender");
                }));
                for _ in 0..2 {
                    shared.bump(&g);
                    g.notify_one();
                }
            }
            for t in threads {
                t.join().unwrap();
            }
            if events().from_last_notified > at_start.from_last_notified {
                assert_eq!(*order.lock().unwrap(), ["waiter", "waiter", "contender"]);
            }
            shared.check_final(0);
        },
    );
    let walks = events().from_last_notified - before.from_last_notified;
    println!("notify_one_twice_in_one_hold_with_a_contender: {walks} walks from the last notified");
    assert!(walks > 0, "no notify walked from the waiter queued last");
}

/// A notified waiter that lost the monitor goes back first while the
/// owner's `notify_one` loop has queued a waiter since: the requeue lands
/// ahead of the waiter the loop queued last (the owner's `last_notified`),
/// and the loop's next walk starts there, past it. The main thread
/// notifies one of three waiters and leaves, inviting it, then barges back
/// in, queues a contender behind it and notifies the other two, one at a
/// time. Asserts mutual exclusion, with debug assertions the walk's start
/// at every notify and the queue's links at every change, and, in the
/// executions where the lost waiter went back between the two notifies
/// and the second walked past it, that the waiters entered in the order
/// they waited, all before the contender; and over all executions that
/// this happened. Five threads: at a preemption bound of 1 at most
/// (464,899 executions, 102 of them in that case, 61 s on a 2-vCPU AMD
/// EPYC of family 25; 468,158 on the shipped parker; 11,385 and 16,773
/// without the extra-fast path, on `meta-lock-only` and `swap-only`). A
/// planted `requeue_first` that queues the waiter behind the loop's last
/// waiter fails it, and passes the two models nearest to it
/// (`notify_one_twice_in_one_hold_with_a_contender`,
/// `a_notified_waiter_that_loses_is_handed_the_monitor_next`).
#[test]
fn a_notified_waiter_goes_back_ahead_of_a_notify_loops_last_waiter() {
    use loom::sync::Mutex;
    const NAME: &str = "a_notified_waiter_goes_back_ahead_of_a_notify_loops_last_waiter";
    let outcomes = Outcomes::new(["went back between two notifies and was walked past"]);
    let record = outcomes.clone();
    explore(NAME, at_most(three_threads(), 1), move || {
        let shared = Shared::new();
        let waits = Arc::new(Mutex::new(Vec::new()));
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut threads: Vec<_> = (0..3)
            .map(|i| {
                let (waits, order) = (Arc::clone(&waits), Arc::clone(&order));
                spawn(&shared, move |shared| {
                    let mut g = shared.word.lock();
                    if shared.counter(&g) == 0 {
                        waits.lock().unwrap().push(i);
                    }
                    while shared.counter(&g) == 0 {
                        g.wait();
                    }
                    shared.take(&g);
                    order.lock().unwrap().push(i);
                })
            })
            .collect();
        // The waiters may run up to their waits here with no preemption
        // spent (loom prefers the threads that yielded least), which
        // leaves the bound's one for the lost waiter's return.
        thread::yield_now();
        {
            let g = shared.word.lock();
            shared.bump(&g);
            g.notify_one();
        }
        let at_start = events();
        {
            let g = shared.word.lock();
            let order = Arc::clone(&order);
            threads.push(spawn(&shared, move |shared| {
                let g = shared.word.lock();
                shared.check(&g);
                order.lock().unwrap().push(3);
            }));
            for _ in 0..2 {
                shared.bump(&g);
                g.notify_one();
            }
        }
        for t in threads {
            t.join().unwrap();
        }
        let now = events();
        // Only the second notify can walk from a waiter queued last, and
        // only the lost waiter can be passed over too long ahead of it. If
        // it went back before the first notify, with the contender
        // queued, it overtook the contender, the first notify overtook it
        // again, and the second, finding it passed over too long, rightly
        // queued its waiter behind it: the order below holds only when the
        // waiter went back after the first notify.
        if now.from_last_notified_past_a_passed_over
            > at_start.from_last_notified_past_a_passed_over
            && now.notified_lost_ahead_of_last_notified
                > at_start.notified_lost_ahead_of_last_notified
        {
            record.record(0);
            let mut expected = waits.lock().unwrap().clone();
            expected.push(3);
            assert_eq!(*order.lock().unwrap(), expected);
        }
        shared.check_final(0);
    });
    outcomes.assert_reached(NAME, &[0]);
}

/// Three notified waiters that lost the monitor go back first in turn,
/// each behind those passed over too long ahead of it (the last walks past
/// two), and enter in that order. The main thread notifies one waiter per
/// hold, three times, each exit inviting its waiter, then takes the
/// monitor again and yields before any of them is back. Asserts mutual
/// exclusion, with debug assertions the queue's links at every change,
/// and, in the executions where all three lost under that last hold, that
/// they entered in the order they went back, each handed the monitor
/// (three hand-overs); and over all executions that this happened. At
/// preemption bound 0, where the yields make every switch it needs and
/// its 294 executions are the orders in which the blocked threads resume
/// (one preemption more takes 1.9 million, 221 s); at 1 without the
/// extra-fast path (16,669 executions on `meta-lock-only`, 22,251 on
/// `swap-only`, 2-3 s). A planted `requeue_first` that puts the waiter
/// first, ahead of those passed over too long, fails it and no other model
/// of the monitor or conditions.
#[test]
fn three_notified_waiters_lose_and_go_back_first_in_turn() {
    use loom::sync::Mutex;
    const NAME: &str = "three_notified_waiters_lose_and_go_back_first_in_turn";
    let outcomes = Outcomes::new(["all three lost under one hold"]);
    let record = outcomes.clone();
    // With the extra-fast path each switch multiplies the executions.
    let bound = match cfg!(any(metalock_swap_only, feature = "meta-lock-only")) {
        true => 1,
        false => 0,
    };
    explore(NAME, at_most(three_threads(), bound), move || {
        let shared = Shared::new();
        let order = Arc::new(Mutex::new(Vec::new()));
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let order = Arc::clone(&order);
                spawn(&shared, move |shared| {
                    let mut g = shared.word.lock();
                    while shared.counter(&g) == 0 {
                        g.wait();
                    }
                    shared.take(&g);
                    order.lock().unwrap().push(thread::current().id());
                })
            })
            .collect();
        // As in the model above: the waiters reach their waits here, and
        // below the invited ones come back, with no preemption spent.
        thread::yield_now();
        for _ in 0..3 {
            let g = shared.word.lock();
            shared.bump(&g);
            g.notify_one();
        }
        events::take_losers();
        let at_start = events();
        let lost = {
            let g = shared.word.lock();
            thread::yield_now();
            shared.check(&g);
            events().notified_lost - at_start.notified_lost
        };
        for w in waiters {
            w.join().unwrap();
        }
        if lost == 3 {
            record.record(0);
            assert_eq!(*order.lock().unwrap(), events::take_losers());
            assert_eq!(events().handed_over - at_start.handed_over, 3);
        }
        shared.check_final(0);
    });
    outcomes.assert_reached(NAME, &[0]);
}

/// A notify followed by a wait in the same hold (a hand-off of turns): the
/// notifier's record gives the monitor up by waiting, and must drop the
/// waiter it queued last with it (its `last_notified`), or its next hold,
/// after the wait, starts from a stale one (debug assertions check the
/// presets at the extra-fast exit and the walk's start at every notify).
/// The counter says whose turn it is: 0 the main thread's, 1 the other's.
#[test]
fn notify_then_wait_in_one_hold() {
    explore("notify_then_wait_in_one_hold", two_threads(), || {
        let shared = Shared::new();
        let other = spawn(&shared, |shared| {
            let mut g = shared.word.lock();
            while shared.counter(&g) == 0 {
                g.wait();
            }
            shared.take(&g);
            g.notify_one();
        });
        {
            let mut g = shared.word.lock();
            shared.bump(&g);
            g.notify_one();
            while shared.counter(&g) == 1 {
                g.wait();
            }
        }
        other.join().unwrap();
        shared.check_final(0);
    });
}

#[test]
fn timed_wait_races_notify() {
    explore("timed_wait_races_notify", two_threads(), || {
        let shared = Shared::new();
        let waiter = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                let mut g = shared.word.lock();
                let result = g.wait_for(Duration::from_secs(1));
                assert_eq!(g.depth(), 1);
                shared.bump(&g);
                result.timed_out()
            })
        };
        let notified = {
            let g = shared.word.lock();
            g.notify_one()
        };
        let timed_out = waiter.join().unwrap();
        // A notification reaches exactly the waiter it marked: the wait
        // reports "not timed out" if and only if notify_one marked it.
        assert_eq!(
            !timed_out, notified,
            "timed_out = {timed_out}, notify_one returned {notified}"
        );
        shared.check_final(1);
    });
}

#[test]
fn timed_wait_races_notify_and_enter() {
    // As `timed_wait_races_notify`, with a third thread entering: a waiter
    // that timed out (or was notified) must re-contend for a monitor that
    // may be held, and still be invited back in.
    explore("timed_wait_races_notify_and_enter", three_threads(), || {
        let shared = Shared::new();
        let waiter = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                let mut g = shared.word.lock();
                let result = g.wait_for(Duration::from_secs(1));
                assert_eq!(g.depth(), 1);
                shared.bump(&g);
                result.timed_out()
            })
        };
        let competitor = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                let g = shared.word.lock();
                shared.bump(&g);
            })
        };
        let notified = {
            let g = shared.word.lock();
            g.notify_one()
        };
        let timed_out = waiter.join().unwrap();
        competitor.join().unwrap();
        assert_eq!(
            !timed_out, notified,
            "timed_out = {timed_out}, notify_one returned {notified}"
        );
        shared.check_final(2);
    });
}

/// A timed waiter on a fair monitor, and a notifier whose release hands it
/// the monitor: the hand-over's signal may land between the waiter's timed
/// park reporting a timeout (under loom, at once unless an unpark came
/// first) and its look at the signal, and the waiter then owns the monitor
/// on that signal alone, so the signal's load must order the notifier's
/// critical section before the waiter's (the counter it reads). The
/// waiter reports a notification exactly when `notify_one` marked it; some
/// execution reaches the late signal.
#[test]
fn a_timed_waiter_is_handed_the_monitor_as_its_park_times_out() {
    const NAME: &str = "a_timed_waiter_is_handed_the_monitor_as_its_park_times_out";
    let before = events();
    explore(NAME, two_threads(), || {
        let shared = Shared::fair();
        let waiter = spawn(&shared, |shared| {
            let mut g = shared.word.lock();
            let result = g.wait_for(Duration::from_secs(1));
            assert_eq!(g.depth(), 1);
            shared.bump(&g);
            !result.timed_out()
        });
        let marked = {
            let g = shared.word.lock();
            shared.bump(&g);
            g.notify_one()
        };
        let notified = waiter.join().unwrap();
        assert_eq!(
            notified, marked,
            "the waiter reports notified = {notified}, notify_one marked {marked}"
        );
        shared.check_final_fair(2);
    });
    let late =
        events().handed_over_as_a_timed_park_ended - before.handed_over_as_a_timed_park_ended;
    println!("{NAME}: {late} hand-overs read after a timed park's timeout");
    assert!(
        late > 0,
        "{NAME}: no hand-over landed as a timed park timed out"
    );
}

#[test]
fn two_timed_waiters_one_notify_one() {
    // Two waiters whose time may run out at any point, one notify_one: the
    // waiters that report "not timed out" are exactly the one notify_one
    // says it marked, or none if it marked nobody.
    explore("two_timed_waiters_one_notify_one", three_threads(), || {
        let shared = Shared::new();
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                spawn(&shared, |shared| {
                    let mut g = shared.word.lock();
                    let result = g.wait_for(Duration::from_secs(1));
                    assert_eq!(g.depth(), 1);
                    shared.bump(&g);
                    !result.timed_out()
                })
            })
            .collect();
        let marked = {
            let g = shared.word.lock();
            g.notify_one()
        };
        let notified = waiters
            .into_iter()
            .map(|w| w.join().unwrap())
            .filter(|&n| n)
            .count();
        assert_eq!(
            notified,
            usize::from(marked),
            "{notified} waiters report a notification, notify_one marked {marked}"
        );
        shared.check_final(2);
    });
}

#[test]
fn depth_two_timed_waiter_with_a_competitor_notify_all() {
    // A waiter at depth 2 whose time may run out, a competitor that enters
    // once, and a notify_all: the waiter comes back at depth 2 either way,
    // reports a notification exactly when notify_all counted it, and every
    // critical section is exclusive.
    explore(
        "depth_two_timed_waiter_with_a_competitor_notify_all",
        three_threads(),
        || {
            let shared = Shared::new();
            let waiter = spawn(&shared, |shared| {
                let outer = shared.word.lock();
                let mut inner = shared.word.lock();
                let result = inner.wait_for(Duration::from_secs(1));
                assert_eq!(inner.depth(), 2);
                shared.bump(&inner);
                drop(inner);
                assert_eq!(outer.depth(), 1);
                !result.timed_out()
            });
            let competitor = spawn(&shared, |shared| {
                let g = shared.word.lock();
                assert_eq!(g.depth(), 1);
                shared.bump(&g);
            });
            let marked = {
                let g = shared.word.lock();
                g.notify_all()
            };
            let notified = waiter.join().unwrap();
            competitor.join().unwrap();
            assert_eq!(
                usize::from(notified),
                marked,
                "the waiter reports notified = {notified}, notify_all marked {marked}"
            );
            shared.check_final(2);
        },
    );
}
