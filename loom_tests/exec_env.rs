#![cfg(loom)]
//! Loom models of execution-environment reuse (paper 000, section 5.1): a
//! thread that ends gives its EE and lock records to the threads after it,
//! while the threads it synchronized with may still reach them.
//!
//! A model thread ends by calling `__test_hooks::end_thread`, the cleanup a
//! thread's exit runs outside the model checkers: its EE goes back to the
//! pool, or, while a guard still holds one of its records, is detached and
//! its free records are donated. (Every model here first calls
//! `model_thread_exits`, so that all executions take the pools' lock.)
//! Each model asserts, through the EE's address and the test seams' counts
//! (refills from donated records, EEs taken with an unpark still pending),
//! that its executions reach every way the reuse can go: an EE reused while a
//! partner may still wake or hand off to it, and with a wake-up meant for its
//! last thread; a waiter's EE and hot record reused while a notify races; the
//! keyed guess an EE keeps; the records of a thread that ends holding a
//! monitor, or after nested enters, and its owner check of a donated one; a
//! timed enter from a detached EE that gives up; an EE reused before a
//! meta-lock successor's unpark reaches it; and one reused while an
//! interrupt meant for its last thread is sent. One more model unparks a
//! thread with no reason at any point, as a wake-up that outlived its
//! reason does.
//!
//! Run with:
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release --test loom_exec_env`

use std::time::Duration;

use std::cell::Cell;

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use metalock::__test_hooks::{
    StrayUnpark, donated_records_taken, end_thread, model_thread_exits, stale_wakeups_taken,
    thread_exec_env, thread_has_exec_env,
};
use metalock::{MonitorGuard, MultiUseWord};

mod common;
use common::{builder, capped, pinned};
#[path = "common/events.rs"]
mod events;
use events::{GiveUp, UnparkDebts, a_park_woke_early, events, settled_in_every_way};

/// `common::explore`, for models whose threads end.
fn explore(name: &str, builder: loom::model::Builder, model: impl Fn() + Sync + Send + 'static) {
    model_thread_exits();
    common::explore(name, builder, model);
}

std::thread_local! {
    /// Executions of the model running on this test's thread (loom runs a
    /// model's threads as coroutines on it) that reached a path the model
    /// names, so that it can assert that some did.
    static REACHED: Cell<[usize; 4]> = const { Cell::new([0; 4]) };
}

/// Counts an execution that reached path `i` of the model.
fn reached(i: usize) {
    REACHED.with(|reached| {
        let mut counts = reached.get();
        counts[i] += 1;
        reached.set(counts);
    });
}

/// Prints how many executions of model `name` reached each of its paths,
/// asserts that some reached each, and starts the counts again.
fn reached_every_path(name: &str, paths: &[&str]) {
    let counts = REACHED.with(Cell::take);
    for (path, count) in paths.iter().zip(counts) {
        println!("{name}: {count} executions {path}");
        assert!(count > 0, "{name}: no execution {path}");
    }
}

/// A word and a counter only touched under its monitor; loom checks that
/// the monitor orders every access, also across a reused EE.
struct Shared {
    word: MultiUseWord,
    counter: UnsafeCell<usize>,
}

// SAFETY: `counter` is only touched under `word`'s monitor (`bump`,
// `check_final`) or, in the keyed model, under its own keyed monitor
// (`keyed_bump`, `keyed_read`), never both in one model; loom reports any
// access the monitor does not order.
unsafe impl Sync for Shared {}

impl Shared {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            word: MultiUseWord::new(),
            counter: UnsafeCell::new(0),
        })
    }

    fn bump(&self, guard: &MonitorGuard<'_>) {
        assert!(core::ptr::eq(guard.word(), &self.word));
        // SAFETY: the guard proves we own the monitor.
        self.counter.with_mut(|c| unsafe { *c += 1 });
    }

    fn count(&self, guard: &MonitorGuard<'_>) -> usize {
        assert!(core::ptr::eq(guard.word(), &self.word));
        // SAFETY: as in `bump`.
        self.counter.with(|c| unsafe { *c })
    }

    fn lock_and_bump(&self) {
        let guard = self.word.lock();
        self.bump(&guard);
    }

    /// Once every thread is joined: unlocked, and every bump seen.
    fn check_final(&self, counter: usize) {
        assert!(!self.word.is_locked());
        let _guard = self.word.lock();
        // SAFETY: as in `bump`.
        assert_eq!(self.counter.with(|c| unsafe { *c }), counter);
    }
}

/// What a thread of `spawn_ending` returns.
struct Ended<T> {
    /// The address of the EE it ended with.
    ee: usize,
    /// The unparks meta-lock successors owed once it had ended (a model
    /// in which only its successors can owe one then reads them).
    debts: UnparkDebts,
    /// What its body returned.
    result: T,
}

/// Spawns a model thread that runs `f` on `shared` and then ends, holding
/// no record (`end_thread`).
fn spawn_ending<T: Send + 'static>(
    shared: &Arc<Shared>,
    f: impl FnOnce(&Shared) -> T + Send + 'static,
) -> thread::JoinHandle<Ended<T>> {
    let shared = Arc::clone(shared);
    thread::spawn(move || {
        let result = f(&shared);
        let ee = thread_exec_env().expect("bound by a lock");
        end_thread();
        let debts = UnparkDebts::now();
        assert!(!thread_has_exec_env(), "back to the pool");
        Ended { ee, debts, result }
    })
}

/// A thread nests a lock and a try-lock of a second monitor inside a first
/// while another thread enters the second, then ends holding nothing:
/// every record its nested enters took (through the fused lock, or the
/// slow path with the record peeked for it) came back, so its EE goes back
/// to the pool.
#[test]
fn a_thread_that_nested_enters_gives_back_every_record() {
    explore(
        "a_thread_that_nested_enters_gives_back_every_record",
        builder(2),
        || {
            let (outer, inner) = (Arc::new(MultiUseWord::new()), Arc::new(MultiUseWord::new()));
            let other = {
                let inner = Arc::clone(&inner);
                thread::spawn(move || drop(inner.lock()))
            };
            let nesting = {
                let (outer, inner) = (Arc::clone(&outer), Arc::clone(&inner));
                thread::spawn(move || {
                    {
                        let _held = outer.lock();
                        drop(inner.lock());
                        drop(inner.try_lock());
                    }
                    end_thread();
                    assert!(!thread_has_exec_env(), "a nested enter kept a record out");
                })
            };
            nesting.join().unwrap();
            other.join().unwrap();
            assert!(!outer.is_locked() && !inner.is_locked());
        },
    );
}

/// A thread contends with a partner and ends, and the main thread takes its
/// EE while the partner may still be handing it the meta-lock or the
/// monitor, or unparking it: such an unpark reaches the EE's next thread
/// (the model asserts that some executions hand one over). That thread's
/// timed wait, which nobody notifies, must still time out, and the monitor
/// must exclude as before. (In the executions where the partner binds only
/// after the end, it takes the EE itself.)
#[test]
fn an_ended_threads_env_serves_the_next_thread_while_a_partner_wakes_it() {
    explore(
        "an_ended_threads_env_serves_the_next_thread_while_a_partner_wakes_it",
        builder(2),
        || {
            let shared = Shared::new();
            let ending = spawn_ending(&shared, Shared::lock_and_bump);
            let partner = {
                let shared = Arc::clone(&shared);
                thread::spawn(move || {
                    for _ in 0..2 {
                        shared.lock_and_bump();
                    }
                    (thread_exec_env(), stale_wakeups_taken())
                })
            };
            let ended = ending.join().unwrap().ee;
            let mut guard = shared.word.lock();
            let main = thread_exec_env();
            let stale = stale_wakeups_taken();
            assert!(guard.wait_for(Duration::from_secs(1)).timed_out());
            shared.bump(&guard);
            drop(guard);
            let (partner, partner_stale) = partner.join().unwrap();
            if stale + partner_stale > 0 {
                reached(2);
            }
            // The partner takes the EE if it binds after the end, else the
            // main thread does.
            match [main, partner].iter().position(|&ee| ee == Some(ended)) {
                Some(taker) => reached(taker),
                None => panic!("the EE was not reused"),
            }
            shared.check_final(4);
        },
    );
    reached_every_path(
        "an_ended_threads_env_serves_the_next_thread_while_a_partner_wakes_it",
        &[
            "gave the EE to the main thread",
            "gave it to the partner",
            "gave it with an unpark still pending",
        ],
    );
}

/// A thread ends right after a meta-lock hand-off whose race it won as
/// predecessor (case 2 of Fig. 12: its successor takes the bits from its
/// EE, then unparks it), before that successor, a partner setting the
/// word's payload, has unparked it: the late unpark reaches its EE in the
/// pool, or bound to the main thread, which takes it. The main thread's
/// timed wait, which nobody notifies, must still time out, the payload
/// and the monitor's counter must come out as set. The model asserts that
/// some executions end the thread with the unpark owed, and some give its
/// EE to the main thread while it still is (the meta-lock's reads of a
/// predecessor's EE stop at the bits; the unpark is the one late touch).
/// Both take five preemptions (the ending thread is preempted holding the
/// meta-lock and between its two steps of the race, the partner between
/// its swap and its step, and between its step and the unpark), so the
/// model runs at that bound; on the swap-only backend, which hands nothing
/// off, at 2, asserting the rest.
#[test]
fn an_ended_predecessors_env_takes_its_successors_late_unpark() {
    events();
    explore(
        "an_ended_predecessors_env_takes_its_successors_late_unpark",
        if cfg!(metalock_swap_only) {
            capped(2)
        } else {
            pinned(5)
        },
        || {
            let shared = Shared::new();
            let ending = spawn_ending(&shared, Shared::lock_and_bump);
            let partner = {
                let shared = Arc::clone(&shared);
                // The first sets the summary bit, so that the unlock goes
                // through the meta-lock, which the second queues behind.
                thread::spawn(move || (1..=2).for_each(|payload| shared.word.set_payload(payload)))
            };
            let Ended {
                ee: ended, debts, ..
            } = ending.join().unwrap();
            // Only the partner can owe an unpark at the end (the main thread
            // takes no meta-lock before it), and only to the ending thread;
            // it owes one at a time, so while it pays none that one is owed.
            if debts.owed() {
                reached(0);
            }
            // Binds an EE with no meta-lock taken, which would wait for the
            // partner (and so for its unpark).
            drop(MultiUseWord::new().lock());
            if debts.owed()
                && thread_exec_env() == Some(ended)
                && UnparkDebts::now().paid == debts.paid
            {
                reached(1);
            }
            let mut guard = shared.word.lock();
            assert!(guard.wait_for(Duration::from_secs(1)).timed_out());
            shared.bump(&guard);
            drop(guard);
            partner.join().unwrap();
            assert_eq!(shared.word.payload(), 2);
            shared.check_final(2);
        },
    );
    let paths = [
        "ended the thread while its meta-lock successor owed it an unpark",
        "gave its EE to the main thread while that unpark was owed",
    ];
    reached_every_path(
        "an_ended_predecessors_env_takes_its_successors_late_unpark",
        if cfg!(metalock_swap_only) {
            &[]
        } else {
            &paths
        },
    );
}

/// A thread waits interruptibly, with a timeout, while a thread it spawned
/// interrupts it, and ends; the main thread takes its EE, maybe before the
/// interrupt is sent or its unpark arrives. The interrupt is the ended
/// thread's: the main thread's own interruptible wait, which nobody
/// notifies or interrupts, must time out, and its flag stay clear (the
/// flag lives apart from the EE, in an allocation the handles share). The
/// model asserts that some executions end the first wait by the interrupt
/// and some by the timeout, and that some give the EE to the main thread
/// with the interrupt's unpark still pending, and some before the
/// interrupt was sent.
#[test]
fn an_interrupt_races_its_threads_end_and_the_next_thread() {
    explore(
        "an_interrupt_races_its_threads_end_and_the_next_thread",
        builder(2),
        || {
            let shared = Shared::new();
            let ending = spawn_ending(&shared, |shared| {
                let handle = metalock::interrupt_handle();
                let interrupter = {
                    let handle = handle.clone();
                    thread::spawn(move || handle.interrupt())
                };
                let mut guard = shared.word.lock();
                let interrupted = guard
                    .wait_for_interruptibly(Duration::from_secs(1))
                    .is_err();
                shared.bump(&guard);
                (handle, interrupter, interrupted)
            });
            let Ended {
                ee: ended,
                result: (handle, interrupter, interrupted),
                ..
            } = ending.join().unwrap();
            reached(usize::from(interrupted));
            let mut guard = shared.word.lock();
            // The interrupter binds no EE.
            assert_eq!(thread_exec_env(), Some(ended));
            if stale_wakeups_taken() > 0 {
                reached(2);
            }
            if !handle.is_interrupted() {
                reached(3);
            }
            let ended = guard
                .wait_for_interruptibly(Duration::from_secs(1))
                .expect("the interrupt was the ended thread's");
            assert!(ended.timed_out());
            shared.bump(&guard);
            drop(guard);
            interrupter.join().unwrap();
            assert!(!metalock::interrupted());
            shared.check_final(2);
        },
    );
    reached_every_path(
        "an_interrupt_races_its_threads_end_and_the_next_thread",
        &[
            "ended the first wait by its timeout",
            "by the interrupt",
            "gave the EE to the main thread with an unpark still pending",
            "gave it before the interrupt was sent",
        ],
    );
}

/// A waiter ends, and the EE it waited with, and its hot record, serve a
/// waiter after it on the same monitor while a notification races them
/// both: exactly the waiter the notification marked reports it.
#[test]
fn an_ended_waiters_env_serves_the_next_waiter_while_a_notify_races() {
    explore(
        "an_ended_waiters_env_serves_the_next_waiter_while_a_notify_races",
        builder(2),
        || {
            let shared = Shared::new();
            let ending = spawn_ending(&shared, timed_wait);
            let notifier = {
                let shared = Arc::clone(&shared);
                thread::spawn(move || {
                    let guard = shared.word.lock();
                    shared.bump(&guard);
                    guard.notify_one()
                })
            };
            let Ended {
                ee: ended,
                result: first_notified,
                ..
            } = ending.join().unwrap();
            let second_notified = timed_wait(&shared);
            if stale_wakeups_taken() > 0 {
                reached(2);
            }
            let notified = notifier.join().unwrap();
            assert_eq!(
                usize::from(first_notified) + usize::from(second_notified),
                usize::from(notified),
                "notify_one returned {notified}; the waiters reported \
                 {first_notified} and {second_notified}"
            );
            if thread_exec_env() == Some(ended) {
                reached(usize::from(second_notified));
            }
            shared.check_final(3);
        },
    );
    reached_every_path(
        "an_ended_waiters_env_serves_the_next_waiter_while_a_notify_races",
        &[
            "gave the EE to a waiter that timed out",
            "to one that was notified",
            "gave it with an unpark still pending",
        ],
    );
}

/// Waits on `shared`'s monitor, under a timeout that a model may take at
/// any point; returns whether the wait was notified.
fn timed_wait(shared: &Shared) -> bool {
    let mut guard = shared.word.lock();
    let notified = !guard.wait_for(Duration::from_secs(1)).timed_out();
    shared.bump(&guard);
    notified
}

/// A thread ends after a keyed lock, and the guess its EE keeps of the home
/// it found (`keyed_guess`) serves the next thread while another thread may
/// rekey that home (the crate's models put every address in one home): the
/// guess is only ever a guess.
#[test]
fn an_ended_threads_keyed_guess_serves_the_next_thread() {
    explore(
        "an_ended_threads_keyed_guess_serves_the_next_thread",
        builder(2),
        || {
            let x = Shared::new();
            let y = Shared::new();
            let ending = spawn_ending(&x, keyed_bump);
            let rekeying = {
                let y = Arc::clone(&y);
                thread::spawn(move || {
                    keyed_bump(&y);
                    thread_exec_env()
                })
            };
            let ended = ending.join().unwrap().ee;
            keyed_bump(&x);
            let main = thread_exec_env();
            let rekeying = rekeying.join().unwrap();
            match [main, rekeying].iter().position(|&ee| ee == Some(ended)) {
                Some(taker) => reached(taker),
                None => panic!("the EE was not reused"),
            }
            assert_eq!(keyed_read(&x), 2);
            assert_eq!(keyed_read(&y), 1);
        },
    );
    reached_every_path(
        "an_ended_threads_keyed_guess_serves_the_next_thread",
        &[
            "gave the EE to the thread that locks x again",
            "to the one that locks y",
        ],
    );
}

/// Adds one to `shared`'s counter under the keyed monitor of the counter
/// (not the embedded word's).
fn keyed_bump(shared: &Shared) {
    let _guard = metalock::lock(&shared.counter);
    // SAFETY: under the counter's keyed monitor.
    shared.counter.with_mut(|c| unsafe { *c += 1 });
    // After the increment, so that the check's Acquire load orders nothing
    // the lock did not.
    assert!(metalock::is_held_by_current_thread(&shared.counter));
}

fn keyed_read(shared: &Shared) -> usize {
    let _guard = metalock::lock(&shared.counter);
    // SAFETY: under the counter's keyed monitor.
    shared.counter.with(|c| unsafe { *c })
}

/// A thread ends while it holds a monitor: its EE is detached and its free
/// records (one of them used a moment before on another monitor, `b`) are
/// donated, so a contender that needs a second record may take that one and
/// become its owner. The ended thread then releases the monitor, which
/// gives its EE back, and locks `b` once more from a detached EE, as a late
/// thread-local destructor does: the record it used there last, now
/// perhaps the contender's, must not pass for its own.
#[test]
fn a_thread_that_ends_holding_a_monitor_donates_its_free_records() {
    ends_holding_a_monitor_and_donates(
        "a_thread_that_ends_holding_a_monitor_donates_its_free_records",
        false,
    );
}

/// As `a_thread_that_ends_holding_a_monitor_donates_its_free_records`,
/// with `b`'s counter locked by its keyed monitor (the home's fast paths,
/// whose owner checks read the record the home points at).
#[test]
fn a_thread_that_ends_holding_a_monitor_donates_a_keyed_record() {
    ends_holding_a_monitor_and_donates(
        "a_thread_that_ends_holding_a_monitor_donates_a_keyed_record",
        true,
    );
}

/// A thread whose last keyed lock noted the home's form (`keyed_guess`)
/// ends while it holds a monitor, donating its free records, and locks
/// `b`'s counter by its keyed monitor once more before it releases that
/// monitor: its guess fails while a contender holds the home with the
/// donated record the ended thread used there before, and the owner check
/// that follows must read the record's new owner, not the ended thread's.
/// Capped at bound 2 (26,020 executions; 448,187 at 3, 48 s), where a
/// planted Relaxed failure ordering of the guess fails it.
#[test]
fn an_ended_thread_guesses_a_keyed_home_held_with_its_donated_record() {
    const NAME: &str = "an_ended_thread_guesses_a_keyed_home_held_with_its_donated_record";
    explore(NAME, capped(2), || {
        let [a, b, c] = [Shared::new(), Shared::new(), Shared::new()];
        let ending = {
            let (a, b) = (Arc::clone(&a), Arc::clone(&b));
            thread::spawn(move || {
                // The second finds the home keyed for `b` and notes it.
                keyed_bump(&b);
                keyed_bump(&b);
                let held = a.word.lock();
                keyed_bump(&b);
                end_thread();
                keyed_bump(&b);
                a.bump(&held);
            })
        };
        let contender = spawn_donation_contender(&b, &c, keyed_bump);
        join_donation(ending, contender);
        a.check_final(1);
        assert_eq!(keyed_read(&b), 5);
        c.check_final(1);
    });
    reached_every_path(NAME, &DONATION_PATHS);
}

/// A thread that ends while it holds a monitor donates its free records,
/// and then, still running (as in a late thread-local destructor), sets the
/// payload of `b`'s word, which the contender may hold with the record the
/// ended thread used there before. The owner check must read that record's
/// new owner, not the ended thread's, or the set skips the meta-lock and
/// the contender's unlock may put back the old payload. A planted Relaxed
/// first load in `set_payload` fails it (bound 2).
#[test]
fn an_ended_thread_sets_a_payload_held_with_its_donated_record() {
    const NAME: &str = "an_ended_thread_sets_a_payload_held_with_its_donated_record";
    explore(NAME, capped(2), || {
        let [a, b, c] = [Shared::new(), Shared::new(), Shared::new()];
        let ending = {
            let (a, b) = (Arc::clone(&a), Arc::clone(&b));
            thread::spawn(move || {
                let held = a.word.lock();
                b.lock_and_bump();
                end_thread();
                b.word.set_payload(7);
                a.bump(&held);
            })
        };
        let contender = spawn_donation_contender(&b, &c, Shared::lock_and_bump);
        join_donation(ending, contender);
        a.check_final(1);
        b.check_final(2);
        assert_eq!(
            b.word.payload(),
            7,
            "the set survives the contender's unlock"
        );
        c.check_final(1);
    });
    reached_every_path(NAME, &DONATION_PATHS);
}

/// The body of the two donation models: `b` locked by its word, or by its
/// counter's keyed monitor.
fn ends_holding_a_monitor_and_donates(name: &'static str, keyed: bool) {
    let lock_and_bump: fn(&Shared) = match keyed {
        true => keyed_bump,
        false => Shared::lock_and_bump,
    };
    explore(name, builder(2), move || {
        let [a, b, c] = [Shared::new(), Shared::new(), Shared::new()];
        let ending = {
            let (a, b) = (Arc::clone(&a), Arc::clone(&b));
            thread::spawn(move || {
                let held = a.word.lock();
                lock_and_bump(&b);
                end_thread();
                assert!(thread_has_exec_env(), "detached while a guard is out");
                a.bump(&held);
                drop(held);
                assert!(!thread_has_exec_env(), "released with its last record");
                lock_and_bump(&b);
                assert!(!thread_has_exec_env(), "a late lock binds a detached EE");
            })
        };
        let contender = spawn_donation_contender(&b, &c, lock_and_bump);
        join_donation(ending, contender);
        a.check_final(1);
        match keyed {
            true => assert_eq!(keyed_read(&b), 3),
            false => b.check_final(3),
        }
        c.check_final(1);
    });
    reached_every_path(name, &DONATION_PATHS);
}

/// Where a donation model's contender got its second record.
const DONATION_PATHS: [&str; 2] = [
    "allocated the contender's second record",
    "took a donated one",
];

/// A donation model's contender: it holds `c`'s monitor (its hot record),
/// so that `lock_and_bump` on `b` takes a second record, from its free list
/// refilled, maybe with one the ended thread donated; returns how many
/// donated records it took.
fn spawn_donation_contender(
    b: &Arc<Shared>,
    c: &Arc<Shared>,
    lock_and_bump: fn(&Shared),
) -> thread::JoinHandle<usize> {
    let (b, c) = (Arc::clone(b), Arc::clone(c));
    thread::spawn(move || {
        let outer = c.word.lock();
        c.bump(&outer);
        lock_and_bump(&b);
        donated_records_taken()
    })
}

/// Joins a donation model's two threads and counts the path its
/// contender's second record came by.
fn join_donation(ending: thread::JoinHandle<()>, contender: thread::JoinHandle<usize>) {
    ending.join().unwrap();
    let donated = contender.join().unwrap();
    assert!(donated <= 1, "at most one refill");
    reached(donated);
}

/// A thread past its end (as in a late thread-local destructor) makes a
/// timed enter, from a detached EE, on a monitor the main thread holds at
/// first, while a new thread binds an EE from the pool and locks that
/// monitor too: under loom the timed park times out at once, so the enter
/// takes the monitor or gives up, queued or invited. Either way the
/// detached EE is the enter's until it returns and is given back after (a
/// late lock then binds one again); the monitor ends free, and excludes as
/// before. The model asserts each way it settles, and that some meta-lock
/// hand-off park woke early. (It fails if a failed timed enter leaves the
/// detached EE bound.)
#[test]
fn an_ended_threads_timed_enter_gives_up_from_a_detached_env() {
    const NAME: &str = "an_ended_threads_timed_enter_gives_up_from_a_detached_env";
    let before = events();
    explore(NAME, builder(3), || {
        let shared = Shared::new();
        let held = shared.word.lock();
        let late = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                let other = Shared::new();
                other.lock_and_bump();
                end_thread();
                assert!(!thread_has_exec_env(), "back to the pool");
                let got = match shared.word.try_lock_for(Duration::from_secs(1)) {
                    Some(guard) => {
                        assert!(thread_has_exec_env(), "detached while a guard is out");
                        shared.bump(&guard);
                        1
                    }
                    None => 0,
                };
                assert!(!thread_has_exec_env(), "a timed enter kept a detached EE");
                other.lock_and_bump();
                assert!(!thread_has_exec_env(), "a late lock kept a detached EE");
                other.check_final(2);
                got
            })
        };
        shared.bump(&held);
        drop(held);
        // A new thread binds an EE from the pool, perhaps while the timed
        // enter still uses the detached one.
        let next = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || shared.lock_and_bump())
        };
        let got = late.join().unwrap();
        next.join().unwrap();
        shared.check_final(2 + got);
    });
    let after = events();
    a_park_woke_early(NAME, &after, &before);
    settled_in_every_way(
        NAME,
        &after,
        &before,
        &[
            GiveUp::LeftTheQueue,
            GiveUp::InvitedAndTookIt,
            GiveUp::InvitedAndGaveUp,
        ],
    );
}

/// Another thread unparks the main thread at any point, with no reason:
/// wherever the token reaches it (parked in its wait, in the meta-lock's
/// hand-off, queued to enter again, in its timed wait, or not at all), the
/// untimed wait still ends only once notified, the timed wait, which
/// nobody notifies, still times out, and the monitor excludes as before.
/// Asserts that some executions took the token in a park and some left it
/// pending.
#[test]
fn a_stray_unpark_is_taken_as_spurious_wherever_it_lands() {
    const NAME: &str = "a_stray_unpark_is_taken_as_spurious_wherever_it_lands";
    explore(NAME, builder(2), || {
        let shared = Shared::new();
        let main = StrayUnpark::of_current_thread();
        let mut guard = shared.word.lock();
        // Enters once the wait lets the monitor go, so its notify finds
        // the waiter.
        let notifier = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                let guard = shared.word.lock();
                shared.bump(&guard);
                guard.notify_one();
            })
        };
        let stray = thread::spawn(move || main.unpark());
        guard.wait();
        assert_eq!(shared.count(&guard), 1, "the wait ended before the notify");
        assert!(guard.wait_for(Duration::from_secs(1)).timed_out());
        shared.bump(&guard);
        drop(guard);
        notifier.join().unwrap();
        stray.join().unwrap();
        shared.check_final(2);
        reached(usize::from(main.pending()));
    });
    reached_every_path(NAME, &["took the stray token in a park", "left it pending"]);
}
