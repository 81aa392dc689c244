#![cfg(loom)]
//! Loom models of conditions (`metalock::Condition`): a notify on one
//! condition never reaches another's waiter, a notify racing a waiter whose
//! time runs out is delivered exactly when it says so (with and without the
//! notifier holding the monitor), a notify racing an interrupt of the
//! waiter it would reach is never lost, and a bounded buffer with two
//! conditions, two producers and two consumers neither loses an item nor
//! hangs; a condition rebound from one monitor to another between two
//! waits is notified exactly as it says; a notified waiter gets in while
//! its notifier's guard (borrowed or owning its `Arc`) is bumped, unlocked
//! or unlocked fairly; a
//! condition's waits and notifies run beside the monitor's own, on another
//! stripe and in the same; a
//! `notify_all` without the monitor releases two waiters, on a plain and on
//! a fair monitor; a notify without the monitor that finds it free with a
//! thread still queued puts the waiter ahead of it (one waiter, and two of
//! one `notify_all`); and a wait refused
//! because its condition is bound to another monitor changes nothing, the
//! binding included, whether the first waiter times out or is notified
//! meanwhile.
//!
//! Under loom a timed park never blocks: it reports a timeout unless the
//! thread was already unparked, so a timed wait may time out at any point.
//!
//! Run with:
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release --test loom_condition`

use std::ops::DerefMut;
use std::time::Duration;

mod common;
use common::{builder, capped, explore};
#[path = "common/events.rs"]
mod events;
use loom::model::Builder;
use loom::sync::{Arc, Mutex};
use loom::thread;
use metalock::{ArcSynchronizedGuard, Condition, Interrupted, Synchronized, SynchronizedGuard};

/// A value and two conditions on its monitor.
struct Shared {
    value: Synchronized<usize>,
    a: Condition,
    b: Condition,
}

fn shared() -> Arc<Shared> {
    Arc::new(Shared {
        value: Synchronized::new(0),
        a: Condition::new(),
        b: Condition::new(),
    })
}

#[test]
fn notify_on_b_does_not_wake_a_waiter_on_a() {
    // A waiter on A (timed) and one on B (untimed, waiting for the value to
    // change); the notifier changes the value and notifies B only. B's
    // waiter must return; A's must time out, never notified. In one stripe,
    // so that B's notify walks past A's waiter (each condition has a stripe
    // of its own in the models otherwise).
    explore(
        "notify_on_b_does_not_wake_a_waiter_on_a",
        builder(3),
        || {
            metalock::__test_hooks::share_one_stripe();
            let shared = shared();
            let on_a = {
                let shared = Arc::clone(&shared);
                thread::spawn(move || {
                    let mut g = shared.value.lock();
                    shared.a.wait_for(&mut g, Duration::from_secs(1))
                })
            };
            let on_b = {
                let shared = Arc::clone(&shared);
                thread::spawn(move || {
                    let mut g = shared.value.lock();
                    shared.b.wait_while(&mut g, |v| *v == 0);
                })
            };
            {
                let mut g = shared.value.lock();
                *g = 1;
                shared.b.notify_one();
            }
            on_b.join().unwrap();
            let a = on_a.join().unwrap();
            assert!(a.timed_out(), "a notify on B woke the waiter on A");
            assert!(!shared.value.is_locked());
        },
    );
}

/// A waiter whose time may run out at any point against a notify_one that
/// holds the monitor or not: the waiter reports "notified" exactly when the
/// notify says it reached a waiter.
fn timed_waiter_races_notify(holding: bool) {
    let shared = shared();
    let waiter = {
        let shared = Arc::clone(&shared);
        thread::spawn(move || {
            let mut g = shared.value.lock();
            let result = shared.a.wait_for(&mut g, Duration::from_secs(1));
            *g += 1;
            !result.timed_out()
        })
    };
    let marked = if holding {
        let _g = shared.value.lock();
        shared.a.notify_one()
    } else {
        shared.a.notify_one()
    };
    let notified = waiter.join().unwrap();
    assert_eq!(
        notified, marked,
        "notified = {notified}, notify_one = {marked}"
    );
    assert_eq!(*shared.value.lock(), 1);
}

#[test]
fn notify_holding_the_monitor_races_a_timed_out_waiter() {
    explore(
        "notify_holding_the_monitor_races_a_timed_out_waiter",
        builder(3),
        || timed_waiter_races_notify(true),
    );
}

#[test]
fn notify_without_the_monitor_races_a_timed_out_waiter() {
    explore(
        "notify_without_the_monitor_races_a_timed_out_waiter",
        builder(3),
        || timed_waiter_races_notify(false),
    );
}

/// Executions whose `notify_all` reached both waiters, per fairness (plain
/// atomics: loom runs a model's executions one after the other).
static REACHED_BOTH: [std::sync::atomic::AtomicUsize; 2] = [
    std::sync::atomic::AtomicUsize::new(0),
    std::sync::atomic::AtomicUsize::new(0),
];

/// `notify_all` on a condition by a thread that does not hold the monitor,
/// with two waiters: nobody else locks, so when both wait the notifier finds
/// the word NEUTRAL, invites the first (on a fair monitor, hands it the
/// monitor) and queues the second behind it under the same hold of the
/// meta-lock. Each waiter returns once (a waiter left behind sleeps for
/// ever, which loom reports as a deadlock), and some execution queues the
/// second behind the first. The WAITERS branch, which moves waiters one
/// meta-lock hold at a time, is modelled with one waiter only
/// (`notify_without_the_monitor_ahead_of_a_free_queue`).
fn notify_all_without_the_monitor(fair: bool) {
    let value = if fair {
        Synchronized::new_fair(0)
    } else {
        Synchronized::new(0)
    };
    let shared = Arc::new(Shared {
        value,
        a: Condition::new(),
        b: Condition::new(),
    });
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                let mut g = shared.value.lock();
                shared.a.wait_while(&mut g, |v| *v == 0);
                *g += 1;
            })
        })
        .collect();
    *shared.value.lock() = 1;
    let reached = shared.a.notify_all();
    assert!(reached <= 2);
    if reached == 2 {
        REACHED_BOTH[usize::from(fair)].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    for waiter in waiters {
        waiter.join().unwrap();
    }
    assert_eq!(*shared.value.lock(), 3);
}

#[test]
fn notify_all_without_the_monitor_releases_two_waiters() {
    let before = events::events();
    explore(
        "notify_all_without_the_monitor_releases_two_waiters",
        builder(2),
        || notify_all_without_the_monitor(false),
    );
    assert!(REACHED_BOTH[0].load(std::sync::atomic::Ordering::Relaxed) > 0);
    assert!(events::events().queued_behind_invited > before.queued_behind_invited);
}

#[test]
fn notify_all_without_a_fair_monitor_releases_two_waiters() {
    let before = events::events();
    explore(
        "notify_all_without_a_fair_monitor_releases_two_waiters",
        builder(2),
        || notify_all_without_the_monitor(true),
    );
    assert!(REACHED_BOTH[1].load(std::sync::atomic::Ordering::Relaxed) > 0);
    assert!(events::events().queued_behind_invited > before.queued_behind_invited);
}

/// A notify on a condition by a thread that does not hold the monitor,
/// while the monitor is free but the second of two contenders is still
/// queued (the exit just before invited the first, which has not come back
/// yet): the waiter goes ahead of it and is invited at once. Nobody sleeps
/// for ever (loom would report the deadlock), each contender adds its 4
/// once and the waiter its 1 before and after the wait, and some execution
/// takes that path (`NotifiedAheadOfQueue`). A fair monitor never gets
/// there: its releases hand the monitor over rather than invite.
#[test]
fn notify_without_the_monitor_ahead_of_a_free_queue() {
    const NAME: &str = "notify_without_the_monitor_ahead_of_a_free_queue";
    explore(NAME, builder(2), || notify_without_the_monitor(1));
    let ahead = AHEAD[0].load(std::sync::atomic::Ordering::Relaxed);
    println!("{NAME}: {ahead} executions put the waiter ahead of a free queue");
    assert!(
        ahead > 0,
        "{NAME}: no notify found a free monitor with a queue"
    );
}

/// As `notify_without_the_monitor_ahead_of_a_free_queue`, with two waiters
/// and a `notify_all`: the notify moves them one at a time, and each finds
/// the monitor free with a contender still queued (each goes ahead of the
/// queue and is invited at once), or owned by then (it queues behind the
/// owner). Asserts the same, and that some execution put both waiters
/// ahead of a free queue. Five threads: at a preemption bound of 1 (21,602
/// executions, 3,188 with both ahead); at bound 2 it passed by hand
/// (3,934,423 executions, 492 s on the 2-vCPU AMD EPYC), too long for CI.
#[test]
fn notify_all_without_the_monitor_ahead_of_a_free_queue() {
    const NAME: &str = "notify_all_without_the_monitor_ahead_of_a_free_queue";
    explore(NAME, capped(1), || notify_without_the_monitor(2));
    let both = AHEAD[1].load(std::sync::atomic::Ordering::Relaxed);
    println!("{NAME}: both waiters put ahead of a free queue in {both} executions");
    assert!(
        both > 0,
        "{NAME}: no notify put two waiters ahead of a free queue"
    );
}

/// Executions of the models above in which every waiter went ahead of a
/// free queue, by number of waiters (1 or 2).
static AHEAD: [std::sync::atomic::AtomicUsize; 2] =
    [const { std::sync::atomic::AtomicUsize::new(0) }; 2];

/// The body of the models above: `waiters` threads wait on a condition,
/// and the main thread, holding the monitor, starts two contenders, sets
/// the flag, releases the monitor and notifies all of them without it.
/// Nobody sleeps for ever (loom would report the deadlock), each contender
/// adds its 4 once and each waiter its 1 before and after the wait; counts
/// the execution in `AHEAD` if a notify put every waiter ahead of a free
/// queue (`NotifiedAheadOfQueue`).
fn notify_without_the_monitor(waiters: usize) {
    const FLAG: usize = 1 << 8;
    let shared = shared();
    let at_start = events::events();
    let waiting: Vec<_> = (0..waiters)
        .map(|_| {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                let mut g = shared.value.lock();
                *g += 1;
                shared.a.wait_while(&mut g, |v| *v & FLAG == 0);
                *g += 1;
            })
        })
        .collect();
    // The waiters wait once their counts show under the monitor.
    while *shared.value.lock() < waiters {
        thread::yield_now();
    }
    let mut g = shared.value.lock();
    let contenders: Vec<_> = (0..2)
        .map(|_| {
            let shared = Arc::clone(&shared);
            thread::spawn(move || *shared.value.lock() += 4)
        })
        .collect();
    *g |= FLAG;
    drop(g);
    assert_eq!(shared.a.notify_all(), waiters);
    for thread in waiting.into_iter().chain(contenders) {
        thread.join().unwrap();
    }
    assert_eq!(*shared.value.lock(), FLAG + 2 * waiters + 8);
    if events::events().notified_ahead - at_start.notified_ahead == waiters {
        AHEAD[waiters - 1].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

std::thread_local! {
    /// Whether the test on this thread expects refused waits (loom runs a
    /// model's threads on the test's own thread).
    static EXPECTS_REFUSALS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether `payload`, a panic's, is that of a wait refused because its
/// condition is bound to another monitor.
fn is_refusal(payload: &(dyn std::any::Any + Send)) -> bool {
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied());
    message.is_some_and(|m| m.contains("a condition belongs to one monitor at a time"))
}

/// Runs `model` under `explore` with the refused waits' panics unprinted
/// (the model expects them); every other panic, and every panic of the
/// other tests, prints as before.
fn explore_expecting_refusals(name: &str, model: impl Fn() + Sync + Send + 'static) {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !(EXPECTS_REFUSALS.with(std::cell::Cell::get) && is_refusal(info.payload())) {
                previous(info);
            }
        }));
    });
    EXPECTS_REFUSALS.with(|expects| expects.set(true));
    explore(name, builder(2), model);
    EXPECTS_REFUSALS.with(|expects| expects.set(false));
}

/// A timed wait on `condition` with `g`'s monitor: `Some(notified)`, or
/// `None` if it was refused because the condition is bound to another
/// monitor; any other panic goes on.
fn refusable_wait(condition: &Condition, g: &mut SynchronizedGuard<'_, usize>) -> Option<bool> {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        condition.wait_for(g, Duration::from_secs(1))
    }));
    match result {
        Ok(result) => Some(!result.timed_out()),
        Err(panic) if is_refusal(&*panic) => None,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// A wait on a condition that another thread waits on with another monitor
/// is refused with a panic, and changes nothing: threads A and B each wait
/// on the condition with their own value's monitor, timed (under loom a
/// timed wait may time out at any point), while the main thread notifies
/// once without either monitor. The second to wait is refused while the
/// first waits, else it waits too; a refused thread still owns its monitor,
/// once (one release frees it). The notify reaches at most one wait,
/// exactly when it says so, and some executions take each way (one wait
/// refused, none).
#[test]
fn a_wait_refused_for_another_monitor_races_a_timeout_and_a_notify() {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    const NAME: &str = "a_wait_refused_for_another_monitor_races_a_timeout_and_a_notify";
    // Executions in which no wait was refused, and in which one was.
    static WAYS: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];
    explore_expecting_refusals(NAME, || {
        let condition = Arc::new(Condition::new());
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let condition = Arc::clone(&condition);
                thread::spawn(move || {
                    let value = Synchronized::new(0_usize);
                    let mut g = value.lock();
                    let end = refusable_wait(&condition, &mut g);
                    assert!(value.is_held_by_current_thread());
                    drop(g);
                    assert!(!value.is_locked());
                    end
                })
            })
            .collect();
        let marked = condition.notify_one();
        let ends: Vec<_> = waiters.into_iter().map(|w| w.join().unwrap()).collect();
        let notified = ends.iter().filter(|&&end| end == Some(true)).count();
        let refused = ends.iter().filter(|end| end.is_none()).count();
        assert_eq!(notified, usize::from(marked), "{ends:?}");
        assert!(refused <= 1, "{ends:?}");
        WAYS[refused].fetch_add(1, Relaxed);
    });
    let ways = [WAYS[0].load(Relaxed), WAYS[1].load(Relaxed)];
    println!(
        "{NAME}: a wait refused in {} executions, none in {}",
        ways[1], ways[0]
    );
    assert!(ways.iter().all(|&n| n > 0), "{NAME}: a way never taken");
}

/// A refused wait leaves the condition bound as it was: while A waits on
/// the condition with its value's monitor (untimed, so it waits until the
/// main thread's notify), B's two waits with another monitor are both
/// refused (a binding left to B's monitor would accept the second), and
/// the main thread's one notify reaches A.
#[test]
fn a_refused_wait_leaves_the_binding_as_it_was() {
    explore_expecting_refusals("a_refused_wait_leaves_the_binding_as_it_was", || {
        let condition = Arc::new(Condition::new());
        let value = Arc::new(Synchronized::new(0_usize));
        let a = {
            let (condition, value) = (Arc::clone(&condition), Arc::clone(&value));
            thread::spawn(move || {
                let mut g = value.lock();
                *g += 1;
                condition.wait_while(&mut g, |v| *v < 2);
            })
        };
        // A waits once its count shows under its monitor.
        while *value.lock() == 0 {
            thread::yield_now();
        }
        let b = {
            let condition = Arc::clone(&condition);
            thread::spawn(move || {
                let other = Synchronized::new(0_usize);
                let mut g = other.lock();
                for _ in 0..2 {
                    let end = refusable_wait(&condition, &mut g);
                    assert_eq!(end, None, "a wait with a second monitor was accepted");
                    assert!(other.is_held_by_current_thread());
                }
            })
        };
        b.join().unwrap();
        *value.lock() = 2;
        assert!(condition.notify_one(), "A waits");
        a.join().unwrap();
    });
}

#[test]
fn two_conditions_two_producers_two_consumers() {
    // A buffer of one slot; two producers put one item each, two consumers
    // take one each, waiting on `not_full` and `not_empty` with notify_one.
    // A lost or misdirected notification hangs a thread (loom reports the
    // deadlock); every item is taken exactly once.
    explore(
        "two_conditions_two_producers_two_consumers",
        builder(2),
        || {
            let shared = Arc::new(Shared {
                value: Synchronized::new(0),
                a: Condition::new(), // not_full
                b: Condition::new(), // not_empty
            });
            let put = |shared: &Shared, item: usize| {
                let mut slot = shared.value.lock();
                shared.a.wait_while(&mut slot, |slot| *slot != 0);
                *slot = item;
                shared.b.notify_one();
            };
            let take = |shared: &Shared| {
                let mut slot = shared.value.lock();
                shared.b.wait_while(&mut slot, |slot| *slot == 0);
                let item = std::mem::take(&mut *slot);
                shared.a.notify_one();
                item
            };
            let producer = {
                let shared = Arc::clone(&shared);
                thread::spawn(move || put(&shared, 1))
            };
            let consumers: Vec<_> = (0..2)
                .map(|_| {
                    let shared = Arc::clone(&shared);
                    thread::spawn(move || take(&shared))
                })
                .collect();
            put(&shared, 2);
            producer.join().unwrap();
            let mut items: Vec<usize> = consumers.into_iter().map(|c| c.join().unwrap()).collect();
            items.sort_unstable();
            assert_eq!(items, [1, 2]);
        },
    );
}

/// A notify on a condition, without the monitor, races an interrupt of the
/// waiter it would reach (JLS 17.2.4): waiter A waits interruptibly, B
/// plainly; the main thread interrupts A and notifies once. If A reports
/// the interrupt, the notify must have reached B (else B sleeps for ever,
/// which loom reports as a deadlock); if A returns notified, its interrupt
/// is still pending and a second notify releases B.
#[test]
fn condition_notify_races_an_interrupt() {
    condition_notify_races("condition_notify_races_an_interrupt", 0, builder(2));
}

/// The same race with the waits spinning one round before they park, as
/// waits do outside the model checkers (`spin_waits`); asserts too that
/// some execution saw a signal, and some A's interrupt, in a spin. Capped
/// at bound 2 (31,515 executions, 3 s; 1,137,511 at bound 3), which reaches
/// both and fails the planted spin that takes the interrupt (see
/// `a_spinning_waiter_races_a_notify_and_an_interrupt`).
#[test]
fn condition_notify_races_an_interrupt_of_a_spinning_waiter() {
    let name = "condition_notify_races_an_interrupt_of_a_spinning_waiter";
    let before = events::events();
    condition_notify_races(name, 1, capped(2));
    events::spins_saw_a_notify_and_an_interrupt(name, &before);
}

/// The race of the two models above, the waits spinning `spin` rounds.
fn condition_notify_races(name: &'static str, spin: u32, builder: Builder) {
    explore(name, builder, move || {
        let _spinning = metalock::__test_hooks::spin_waits(spin);
        let shared = shared();
        let handle = Arc::new(Mutex::new(None));
        let a = {
            let (shared, handle) = (Arc::clone(&shared), Arc::clone(&handle));
            thread::spawn(move || {
                *handle.lock().unwrap() = Some(metalock::interrupt_handle());
                let mut g = shared.value.lock();
                *g += 1;
                let result = shared.a.wait_interruptibly(&mut g);
                (result, metalock::interrupted())
            })
        };
        let b = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                let mut g = shared.value.lock();
                *g += 1;
                shared.a.wait(&mut g);
            })
        };
        // Both wait once both counted themselves under the monitor.
        while *shared.value.lock() < 2 {
            thread::yield_now();
        }
        let handle = handle.lock().unwrap().take().unwrap();
        handle.interrupt();
        assert!(shared.a.notify_one(), "A or B waits");
        match a.join().unwrap() {
            (Ok(()), pending) => {
                assert!(pending, "a notified waiter keeps the interrupt");
                assert!(shared.a.notify_one(), "B still waits");
            }
            (Err(Interrupted), pending) => assert!(!pending),
        }
        b.join().unwrap();
    });
}

/// A notifier that lets its guard go while the waiter it notified contends:
/// after `notify_one` under the monitor, `SynchronizedGuard::bump` hands the
/// monitor to the waiter if the word shows it queued, `unlocked` releases
/// it (the waiter, queued ahead of any contender, may get in then), and
/// `unlocked_fair` hands it over or releases it. The waiter may also not
/// have waited yet and come as a contender. Each increment is ordered by the
/// monitor; asserts that the waiter got in during each of the three in some
/// execution, and that some execution handed the monitor over during the
/// `bump`, the first release after the notify (a `bump` that released
/// unfairly failed this model, the `Arc` guard's below and
/// `a_guard_lets_a_contender_in_while_it_is_unlocked` only).
#[test]
fn a_notified_waiter_gets_in_while_the_notifier_is_unlocked() {
    notified_waiter_gets_in_while_unlocked::<Borrowed>(
        "a_notified_waiter_gets_in_while_the_notifier_is_unlocked",
    );
}

/// The same with the notifier's guard an `ArcSynchronizedGuard`
/// (`lock_arc`), whose `bump`, `unlocked` and `unlocked_fair` are its own
/// (an unfair `bump` planted there failed this model only).
#[test]
fn a_notified_waiter_gets_in_while_an_arc_guard_is_unlocked() {
    notified_waiter_gets_in_while_unlocked::<Owning>(
        "a_notified_waiter_gets_in_while_an_arc_guard_is_unlocked",
    );
}

/// The guards of a `Synchronized`, as the notifier of
/// `notified_waiter_gets_in_while_unlocked` uses them.
trait LetsOthersIn: DerefMut<Target = usize> {
    fn bump(&mut self);
    fn unlocked(&mut self);
    fn unlocked_fair(&mut self);
}

impl LetsOthersIn for SynchronizedGuard<'_, usize> {
    fn bump(&mut self) {
        SynchronizedGuard::bump(self);
    }
    fn unlocked(&mut self) {
        SynchronizedGuard::unlocked(self, || ());
    }
    fn unlocked_fair(&mut self) {
        SynchronizedGuard::unlocked_fair(self, || ());
    }
}

impl LetsOthersIn for ArcSynchronizedGuard<usize> {
    fn bump(&mut self) {
        ArcSynchronizedGuard::bump(self);
    }
    fn unlocked(&mut self) {
        ArcSynchronizedGuard::unlocked(self, || ());
    }
    fn unlocked_fair(&mut self) {
        ArcSynchronizedGuard::unlocked_fair(self, || ());
    }
}

/// How the notifier of `notified_waiter_gets_in_while_unlocked` locks: a
/// guard that borrows the `Synchronized` or one that owns its `Arc`.
trait NotifierLock: 'static {
    type Guard<'a>: LetsOthersIn;
    fn lock(value: &std::sync::Arc<Synchronized<usize>>) -> Self::Guard<'_>;
}

/// `Synchronized::lock`.
struct Borrowed;

impl NotifierLock for Borrowed {
    type Guard<'a> = SynchronizedGuard<'a, usize>;
    fn lock(value: &std::sync::Arc<Synchronized<usize>>) -> Self::Guard<'_> {
        value.lock()
    }
}

/// `Synchronized::lock_arc`.
struct Owning;

impl NotifierLock for Owning {
    type Guard<'a> = ArcSynchronizedGuard<usize>;
    fn lock(value: &std::sync::Arc<Synchronized<usize>>) -> Self::Guard<'_> {
        value.lock_arc()
    }
}

/// The body of the two models above, the notifier locking as `L` does.
fn notified_waiter_gets_in_while_unlocked<L: NotifierLock>(name: &'static str) {
    let outcomes = events::Outcomes::new([
        "let the waiter in during bump",
        "let it in during unlocked",
        "let it in during unlocked_fair",
        "let it in after the guard's drop",
        "handed the monitor over during bump",
    ]);
    let record = outcomes.clone();
    explore(name, builder(3), move || {
        // A std `Arc`, as `lock_arc` takes; the model's own sync is in the
        // `Synchronized` and the `Condition`.
        let value = std::sync::Arc::new(Synchronized::new(0_usize));
        let condition = Arc::new(Condition::new());
        let waiter = {
            let (value, condition) = (std::sync::Arc::clone(&value), Arc::clone(&condition));
            thread::spawn(move || {
                let mut g = value.lock();
                condition.wait_while(&mut g, |v| *v == 0);
                *g += 10;
            })
        };
        let mut g = L::lock(&value);
        *g = 1;
        condition.notify_one();
        let hand_overs = events::events().handed_over;
        g.bump();
        if events::events().handed_over > hand_overs {
            record.record(4);
        }
        let after_bump = *g;
        g.unlocked();
        let after_unlocked = *g;
        g.unlocked_fair();
        let after_unlocked_fair = *g;
        assert!(value.is_held_by_current_thread());
        drop(g);
        waiter.join().unwrap();
        assert_eq!(*value.lock(), 11);
        let got_in = [after_bump, after_unlocked, after_unlocked_fair]
            .iter()
            .position(|&n| n == 11)
            .unwrap_or(3);
        record.record(got_in);
    });
    outcomes.assert_reached(name, &[0, 1, 2, 4]);
}

/// A condition moves from one monitor to another while a notify that does
/// not hold either races both waits: the waiter waits on the condition with
/// the monitor of one value, then with another's. Each wait may time out
/// at any point; the notify reaches at most one of them, and exactly when
/// it says it did, so the binding it read (under the stripe) is the one the
/// waiter it moved waits with, and a wait that ended unbinds the condition
/// for the next. Some executions must have the notify reach each wait.
#[test]
fn a_condition_rebound_to_another_monitor_races_a_notify() {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    static REACHED: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];
    explore(
        "a_condition_rebound_to_another_monitor_races_a_notify",
        builder(3),
        || {
            let condition = Arc::new(Condition::new());
            let waiter = {
                let condition = Arc::clone(&condition);
                thread::spawn(move || {
                    let mut notified = [false; 2];
                    // Both alive throughout, so that they have two
                    // addresses: two monitors.
                    let values = [Synchronized::new(0_usize), Synchronized::new(0_usize)];
                    for (reached, value) in notified.iter_mut().zip(&values) {
                        let mut g = value.lock();
                        *reached = !condition
                            .wait_for(&mut g, Duration::from_secs(1))
                            .timed_out();
                        *g += 1;
                        drop(g);
                        assert!(!value.is_locked());
                    }
                    notified
                })
            };
            let marked = condition.notify_one();
            let notified = waiter.join().unwrap();
            let count = notified.iter().filter(|&&n| n).count();
            assert_eq!(
                count,
                usize::from(marked),
                "notified {notified:?}, notify_one = {marked}"
            );
            for (wait, counter) in notified.iter().zip(&REACHED) {
                counter.fetch_add(usize::from(*wait), Relaxed);
            }
        },
    );
    let reached = REACHED.each_ref().map(|n| n.load(Relaxed));
    println!("a_condition_rebound_to_another_monitor_races_a_notify: notified waits {reached:?}");
    assert!(
        reached.iter().all(|&n| n > 0),
        "the notify never reached one of the waits: {reached:?}"
    );
}

/// A condition's wait set and its monitor's own, on two stripes under the
/// model checkers, used at once: one thread waits on the condition, another
/// on the monitor itself, both timed, while the main thread notifies the
/// condition without the monitor and the monitor's own wait set with it.
/// Each waiter returns notified exactly when its notify says it reached a
/// waiter.
#[test]
fn a_condition_and_its_monitors_own_wait_set_at_once() {
    own_wait_set_and_condition("a_condition_and_its_monitors_own_wait_set_at_once", false);
}

/// The same in one stripe, as a word and a condition may share one of the
/// 64 outside the models: each notify and each waiter leaving on its
/// timeout walks past the other set's waiter, and counts only its own.
#[test]
fn a_condition_and_its_monitors_own_wait_set_in_one_stripe() {
    own_wait_set_and_condition(
        "a_condition_and_its_monitors_own_wait_set_in_one_stripe",
        true,
    );
}

fn own_wait_set_and_condition(name: &'static str, one_stripe: bool) {
    explore(name, builder(3), move || {
        if one_stripe {
            metalock::__test_hooks::share_one_stripe();
        }
        let shared = shared();
        let on_condition = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                let mut g = shared.value.lock();
                !shared
                    .a
                    .wait_for(&mut g, Duration::from_secs(1))
                    .timed_out()
            })
        };
        let on_monitor = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                let mut g = shared.value.lock();
                !g.wait_for(Duration::from_secs(1)).timed_out()
            })
        };
        let condition_reached = shared.a.notify_one();
        let monitor_reached = shared.value.lock().notify_one();
        assert_eq!(on_condition.join().unwrap(), condition_reached);
        assert_eq!(on_monitor.join().unwrap(), monitor_reached);
        assert!(!shared.value.is_locked());
    });
}
