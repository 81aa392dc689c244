//! Loom models of the meta-lock: mutual exclusion, both hand-off cases, a
//! thread that goes through several hand-offs, a predecessor that takes the
//! meta-lock again, of the same word or of another, while its successor
//! still takes the bits, and the payload.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release --test loom_meta_lock`.
//!
//! The two-thread models explore every interleaving; the three-thread models
//! and the one with repeated hand-offs are bounded (see [`bounded`]). Every
//! model that can hand off counts the outcomes of the race over all its
//! executions and fails unless it explored both; the models with more than
//! one hand-off per thread also fail unless some park returned on a token
//! an earlier hand-off left behind, and unless some thread swapped in behind
//! one that still waited for its own hand-off.
#![cfg(loom)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use metalock::__test_hooks::{HandoffEvent, set_handoff_hook};
use metalock::MultiUseWord;

// ---------------------------------------------------------------------------
// Harness.
// ---------------------------------------------------------------------------

/// The hand-off hook is global and the models of this binary run in
/// parallel; every model takes this lock so that the event counts of one are
/// not polluted by another.
static LOCK: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Events of the current execution. Loom runs the executions of a model one
/// after the other, so plain (`core`) atomics reset at the start of each
/// execution count that execution alone.
static QUEUED: AtomicUsize = AtomicUsize::new(0);
static SUCCESSOR_WON: AtomicUsize = AtomicUsize::new(0);
static PREDECESSOR_WON: AtomicUsize = AtomicUsize::new(0);
/// Threads between their swap onto a BUSY word and the end of their
/// hand-off: the ones that swapped last but one holding the meta-lock.
static WAITING: AtomicUsize = AtomicUsize::new(0);

fn count(event: HandoffEvent) {
    let counter = match event {
        HandoffEvent::SuccessorQueued => {
            // Acquisitions follow the swaps' order, so a thread that swaps
            // while one is waiting names a waiting thread as predecessor.
            if WAITING.fetch_add(1, Ordering::Relaxed) > 0 {
                TOTAL_BEHIND_A_WAITER.fetch_add(1, Ordering::Relaxed);
            }
            &QUEUED
        }
        HandoffEvent::SuccessorGotIt => {
            WAITING.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        HandoffEvent::SuccessorWon => &SUCCESSOR_WON,
        HandoffEvent::PredecessorWon => &PREDECESSOR_WON,
        HandoffEvent::WokeEarly => &TOTAL_WOKE_EARLY,
        // Monitor-level events: these tests run the meta-lock alone.
        _ => return,
    };
    counter.fetch_add(1, Ordering::Relaxed);
}

/// Outcomes of the race added up over all the executions of a model.
static TOTAL_SUCCESSOR_WON: AtomicUsize = AtomicUsize::new(0);
static TOTAL_PREDECESSOR_WON: AtomicUsize = AtomicUsize::new(0);
/// Parks that returned before the hand-off they waited for was done (a
/// token left by an earlier unpark), over all the executions of a model.
static TOTAL_WOKE_EARLY: AtomicUsize = AtomicUsize::new(0);
/// Threads that swapped while their predecessor still waited for its own
/// hand-off, over all the executions of a model.
static TOTAL_BEHIND_A_WAITER: AtomicUsize = AtomicUsize::new(0);
static EXECUTIONS: AtomicUsize = AtomicUsize::new(0);

/// Installs the counting hook for the length of a model (the model's closure
/// must be `'static`, hence the statics).
struct Events;

impl Events {
    fn install() -> Self {
        TOTAL_SUCCESSOR_WON.store(0, Ordering::Relaxed);
        TOTAL_PREDECESSOR_WON.store(0, Ordering::Relaxed);
        TOTAL_WOKE_EARLY.store(0, Ordering::Relaxed);
        TOTAL_BEHIND_A_WAITER.store(0, Ordering::Relaxed);
        EXECUTIONS.store(0, Ordering::Relaxed);
        set_handoff_hook(Some(count));
        Events
    }

    /// Call first thing in an execution.
    fn begin() {
        QUEUED.store(0, Ordering::Relaxed);
        SUCCESSOR_WON.store(0, Ordering::Relaxed);
        PREDECESSOR_WON.store(0, Ordering::Relaxed);
        WAITING.store(0, Ordering::Relaxed);
    }

    /// Call last thing in an execution, after joining every thread: each
    /// thread that found the word BUSY lost or won its race exactly once.
    fn end() {
        let queued = QUEUED.load(Ordering::Relaxed);
        let succ = SUCCESSOR_WON.load(Ordering::Relaxed);
        let pred = PREDECESSOR_WON.load(Ordering::Relaxed);
        assert_eq!(
            queued,
            succ + pred,
            "a queued thread did not resolve its race exactly once"
        );
        assert_eq!(
            WAITING.load(Ordering::Relaxed),
            0,
            "a queued thread did not end its hand-off"
        );
        TOTAL_SUCCESSOR_WON.fetch_add(succ, Ordering::Relaxed);
        TOTAL_PREDECESSOR_WON.fetch_add(pred, Ordering::Relaxed);
        EXECUTIONS.fetch_add(1, Ordering::Relaxed);
    }

    /// Prints the totals of the model, and checks that it explored both
    /// outcomes of the hand-off race. (The swap-only meta-lock of section
    /// 5.4 has no hand-off, hence no events.)
    fn assert_both_cases(&self, model: &str) {
        let succ = TOTAL_SUCCESSOR_WON.load(Ordering::Relaxed);
        let pred = TOTAL_PREDECESSOR_WON.load(Ordering::Relaxed);
        let executions = EXECUTIONS.load(Ordering::Relaxed);
        let early = TOTAL_WOKE_EARLY.load(Ordering::Relaxed);
        println!(
            "{model}: {executions} executions, hand-offs: {succ} in case 1, {pred} in case 2, \
             {early} parks woken early"
        );
        if cfg!(metalock_swap_only) {
            assert_eq!((succ, pred), (0, 0));
        } else {
            assert!(succ > 0, "{model}: case 1 (successor wins) never explored");
            assert!(
                pred > 0,
                "{model}: case 2 (predecessor wins) never explored"
            );
        }
    }

    /// Checks that some execution of the model had a thread come back
    /// from its park before its part of a hand-off was done, on a token
    /// that an earlier hand-off left in its parker, and park again (call
    /// after `assert_both_cases`, which prints the count).
    fn assert_a_park_woke_early(&self, model: &str) {
        let early = TOTAL_WOKE_EARLY.load(Ordering::Relaxed);
        if !cfg!(metalock_swap_only) {
            assert!(early > 0, "{model}: no park woken early was explored");
        }
    }

    /// Checks that some execution of the model had a thread swap in
    /// behind one that was still waiting for its own hand-off, so that the
    /// waiting thread was a successor and a named predecessor at once
    /// (call after `assert_both_cases`).
    fn assert_a_chain(&self, model: &str) {
        let behind = TOTAL_BEHIND_A_WAITER.load(Ordering::Relaxed);
        println!("{model}: {behind} threads swapped in behind a waiting one");
        if !cfg!(metalock_swap_only) {
            assert!(
                behind > 0,
                "{model}: no thread swapped in behind one still waiting for its hand-off"
            );
        }
    }

    /// Prints the number of executions of the model.
    fn report(&self, model: &str) {
        let executions = EXECUTIONS.load(Ordering::Relaxed);
        println!("{model}: {executions} executions");
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        set_handoff_hook(None);
    }
}

/// A model small enough to explore every interleaving (no preemption bound;
/// `LOOM_MAX_PREEMPTIONS` does not weaken it).
fn exhaustive() -> loom::model::Builder {
    explore(None)
}

/// A model explored up to `bound` preemptions, which keeps it to seconds.
/// `LOOM_MAX_PREEMPTIONS` may raise the bound for a deeper run, not lower
/// it: these models are cheap at their own bound, and a global
/// `LOOM_MAX_PREEMPTIONS=2` would leave them far less thorough.
fn bounded(bound: usize) -> loom::model::Builder {
    explore(Some(bound))
}

fn explore(bound: Option<usize>) -> loom::model::Builder {
    let mut builder = loom::model::Builder::new();
    let env = builder.preemption_bound;
    builder.preemption_bound = if cfg!(metalock_swap_only) {
        // The test-and-set meta-lock of section 5.4 retries until it gets
        // in, so no contended model is finite without a bound:
        // `LOOM_MAX_PREEMPTIONS`, or 2, and each retry adds branches.
        builder.max_branches = 10_000;
        Some(env.unwrap_or(2))
    } else {
        bound.map(|bound| env.map_or(bound, |env| env.max(bound)))
    };
    builder
}

struct Shared {
    word: MultiUseWord,
    counter: UnsafeCell<usize>,
}

// SAFETY: `counter` is only accessed under the meta-lock of `word` (or by the
// model's main thread after joining every other thread).
unsafe impl Sync for Shared {}

impl Shared {
    fn new(payload: usize) -> Arc<Self> {
        Arc::new(Shared {
            word: MultiUseWord::with_payload(payload),
            counter: UnsafeCell::new(0),
        })
    }

    fn count(&self) -> usize {
        // SAFETY: called after every other thread was joined; loom checks it.
        self.counter.with(|c| unsafe { *c })
    }
}

fn increment(shared: &Shared) {
    shared.word.__with_meta_lock(|| {
        // SAFETY: the meta-lock excludes the other threads; loom checks it.
        shared.counter.with_mut(|c| unsafe { *c += 1 });
    });
}

// ---------------------------------------------------------------------------
// Mutual exclusion and hand-off coverage.
// ---------------------------------------------------------------------------

/// Two threads, one acquisition each. This small model explores every
/// interleaving of the hand-off, so it must reach both cases of the race.
#[test]
fn two_threads_mutual_exclusion() {
    let _serial = serial();
    let events = Events::install();
    exhaustive().check(|| {
        metalock::__test_hooks::start_crate_model_execution();
        Events::begin();
        let shared = Shared::new(5);
        let other = Arc::clone(&shared);
        let t = thread::spawn(move || increment(&other));
        increment(&shared);
        t.join().unwrap();
        assert_eq!(shared.count(), 2);
        assert_eq!(shared.word.payload(), 5);
        Events::end();
    });
    events.assert_both_cases("two threads");
}

/// Three threads on one word, the main one taking the meta-lock
/// `main_takes` times and the others once each; `model` asserts both
/// cases of the race, a park woken early and a chain (a thread named as
/// predecessor while it still waits for its own hand-off).
fn three_threads(model: &'static str, bound: usize, main_takes: usize) {
    let _serial = serial();
    let events = Events::install();
    bounded(bound).check(move || {
        metalock::__test_hooks::start_crate_model_execution();
        Events::begin();
        let shared = Shared::new(6);
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let other = Arc::clone(&shared);
                thread::spawn(move || increment(&other))
            })
            .collect();
        for _ in 0..main_takes {
            increment(&shared);
        }
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(shared.count(), 2 + main_takes);
        assert_eq!(shared.word.payload(), 6);
        Events::end();
    });
    events.assert_both_cases(model);
    events.assert_a_park_woke_early(model);
    events.assert_a_chain(model);
}

/// Three threads, one acquisition each: hand-off chains of length two, where
/// a thread is successor and then predecessor, and is named as predecessor
/// while it still waits for its own hand-off (asserted reached).
#[test]
fn three_threads_mutual_exclusion() {
    three_threads("three threads", 5, 1);
}

/// Two threads, two acquisitions each: a thread's EE serves in a second
/// hand-off after its first one, so its `handoff` field must be back to idle
/// (and seen so by the next successor), and a releasing thread swaps again
/// behind the successor it is still handing the meta-lock to (asserted
/// reached).
#[test]
fn repeated_handoffs() {
    let _serial = serial();
    let events = Events::install();
    bounded(5).check(|| {
        metalock::__test_hooks::start_crate_model_execution();
        Events::begin();
        let shared = Shared::new(7);
        let other = Arc::clone(&shared);
        let t = thread::spawn(move || {
            increment(&other);
            increment(&other);
        });
        increment(&shared);
        increment(&shared);
        t.join().unwrap();
        assert_eq!(shared.count(), 4);
        assert_eq!(shared.word.payload(), 7);
        Events::end();
    });
    events.assert_both_cases("repeated hand-offs");
    events.assert_a_chain("repeated hand-offs");
    events.assert_a_park_woke_early("repeated hand-offs");
}

/// Three threads, the main one taking the meta-lock twice: a predecessor
/// that won its release's race (case 2) takes the meta-lock again, and a
/// third thread may name it as predecessor, while its first successor has
/// yet to take the bits: the predecessor's wait for that (its `handoff`
/// back to idle) is what keeps the third thread from reading those bits
/// and the first successor from waiting on it for good. (Without the wait,
/// this model deadlocks or breaks the count; the models above do not
/// notice.)
#[test]
fn a_predecessor_comes_back_while_its_successor_takes_the_bits() {
    three_threads("a predecessor comes back", 3, 2);
}

/// Two words and three threads: the main thread takes the meta-lock of `a`
/// and then of `b`, one other thread takes `a`'s and the third `b`'s. A
/// predecessor that won its release's race on `a` goes on to `b` and may
/// release that with a successor behind it, writing its EE's bits again:
/// its successor on `a` must have read the bits meant for it before it
/// let the predecessor go.
#[test]
fn a_predecessor_moves_on_to_another_word() {
    let _serial = serial();
    let events = Events::install();
    bounded(5).check(|| {
        metalock::__test_hooks::start_crate_model_execution();
        Events::begin();
        let a = Shared::new(1);
        let b = Shared::new(2);
        let (a2, b3) = (Arc::clone(&a), Arc::clone(&b));
        let t2 = thread::spawn(move || increment(&a2));
        let t3 = thread::spawn(move || increment(&b3));
        increment(&a);
        increment(&b);
        t2.join().unwrap();
        t3.join().unwrap();
        assert_eq!((a.count(), b.count()), (2, 2));
        assert_eq!((a.word.payload(), b.word.payload()), (1, 2));
        Events::end();
    });
    events.assert_both_cases("a predecessor moves on");
}

/// Two words, taken in opposite orders (never both at once): a thread is
/// predecessor on one word, then successor on the other, and the roles of
/// the two threads swap.
#[test]
fn two_words_crossing() {
    let _serial = serial();
    let events = Events::install();
    exhaustive().check(|| {
        metalock::__test_hooks::start_crate_model_execution();
        Events::begin();
        let a = Shared::new(1);
        let b = Shared::new(2);
        let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
        let t = thread::spawn(move || {
            increment(&b2);
            increment(&a2);
        });
        increment(&a);
        increment(&b);
        t.join().unwrap();
        assert_eq!((a.count(), b.count()), (2, 2));
        assert_eq!((a.word.payload(), b.word.payload()), (1, 2));
        Events::end();
    });
    events.assert_both_cases("two words");
}

// ---------------------------------------------------------------------------
// Payload.
// ---------------------------------------------------------------------------

/// `payload` and `set_payload` racing a meta-lock holder: they go through the
/// meta-lock while the word is BUSY and through the word otherwise, and the
/// payload is never lost or torn.
#[test]
fn payload_preserved() {
    let _serial = serial();
    let events = Events::install();
    exhaustive().check(|| {
        metalock::__test_hooks::start_crate_model_execution();
        Events::begin();
        let shared = Shared::new(5);
        let other = Arc::clone(&shared);
        let t = thread::spawn(move || increment(&other));
        let seen = shared.word.payload();
        shared.word.set_payload(9);
        let after = shared.word.payload();
        t.join().unwrap();
        assert_eq!(seen, 5);
        assert_eq!(after, 9);
        assert_eq!(shared.word.payload(), 9);
        assert_eq!(shared.count(), 1);
        Events::end();
    });
    events.report("payload preserved");
}

/// A writer, a reader and a meta-lock holder: the reader sees the old or the
/// new payload, and the holder's release (which restores the bits it took)
/// never undoes the write.
#[test]
fn payload_three_threads() {
    let _serial = serial();
    let events = Events::install();
    bounded(4).check(|| {
        metalock::__test_hooks::start_crate_model_execution();
        Events::begin();
        let shared = Shared::new(3);
        let holder = Arc::clone(&shared);
        let writer = Arc::clone(&shared);
        let h = thread::spawn(move || increment(&holder));
        let w = thread::spawn(move || writer.word.set_payload(4));
        let seen = shared.word.payload();
        assert!(seen == 3 || seen == 4, "torn payload {seen}");
        h.join().unwrap();
        w.join().unwrap();
        assert_eq!(shared.word.payload(), 4);
        assert_eq!(shared.count(), 1);
        Events::end();
    });
    events.report("payload, three threads");
}
