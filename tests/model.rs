//! Model-based tests: random single-thread sequences of enter, exit, try,
//! payload and zero-timeout wait operations on a few words, checked after
//! every step against a reference model that keeps, per word, the depth the
//! calling thread holds it at and the payload.
//!
//! Guards are dropped in any order, not just the reverse of their creation;
//! one operation also checks, from another thread, that the word is free
//! exactly when the model says so.

mod common;
use common::Watchdog;
use std::thread;
use std::time::Duration;

use metalock::{Instant, MonitorGuard, MultiUseWord};
use proptest::prelude::*;
use proptest::test_runner::TestRunner;

/// Words per test case: operations on several words interleave, so that a
/// thread holds several monitors (and lock records) at once.
const WORDS: usize = 3;

#[derive(Debug, Clone)]
enum Op {
    /// `lock` word `w` and keep the guard.
    Lock(usize),
    /// Drop the guard at `index % guards.len()`, if any.
    Unlock(usize),
    /// `try_lock` word `w` (always succeeds on one thread) and keep the guard.
    TryLock(usize),
    SetPayload(usize, usize),
    GetPayload(usize),
    /// `wait_for(Duration::ZERO)` through the guard at `index % len`.
    WaitZero(usize),
    /// `wait_until` a deadline already past, through a guard.
    WaitUntilPast(usize),
    /// `notify_one` and `notify_all` through a guard: nobody waits.
    Notify(usize),
    /// From another thread: `try_lock` is `Some` iff the model's depth is 0.
    OtherThreadTryLock(usize),
}

fn payload() -> impl Strategy<Value = usize> {
    prop_oneof![
        Just(0),
        Just(MultiUseWord::MAX_PAYLOAD),
        0..1024_usize,
        0..=MultiUseWord::MAX_PAYLOAD,
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let w = 0..WORDS;
    let index = any::<usize>();
    prop_oneof![
        6 => w.clone().prop_map(Op::Lock),
        6 => index.prop_map(Op::Unlock),
        2 => w.clone().prop_map(Op::TryLock),
        3 => (w.clone(), payload()).prop_map(|(w, p)| Op::SetPayload(w, p)),
        2 => w.clone().prop_map(Op::GetPayload),
        2 => index.prop_map(Op::WaitZero),
        1 => index.prop_map(Op::WaitUntilPast),
        1 => index.prop_map(Op::Notify),
        1 => w.prop_map(Op::OtherThreadTryLock),
    ]
}

/// The reference model of one word, as seen by the calling thread.
#[derive(Debug, Clone, Copy)]
struct Model {
    depth: usize,
    payload: usize,
}

/// Checks every word and every guard against the model.
fn check(words: &[MultiUseWord], models: &[Model], guards: &[(usize, MonitorGuard<'_>)]) {
    for (w, (word, model)) in words.iter().zip(models).enumerate() {
        assert_eq!(word.is_locked(), model.depth > 0, "is_locked of word {w}");
        assert_eq!(
            word.is_held_by_current_thread(),
            model.depth > 0,
            "is_held_by_current_thread of word {w}"
        );
        assert_eq!(word.payload(), model.payload, "payload of word {w}");
        let held = guards.iter().filter(|(gw, _)| *gw == w).count();
        assert_eq!(held, model.depth, "guards of word {w}");
    }
    for (w, guard) in guards {
        assert_eq!(guard.depth(), models[*w].depth, "depth of word {w}");
        assert!(std::ptr::eq(guard.word(), &words[*w]));
    }
}

fn run(initial: [usize; WORDS], ops: &[Op]) {
    let words: Vec<MultiUseWord> = initial
        .iter()
        .map(|&p| MultiUseWord::with_payload(p))
        .collect();
    let mut models: Vec<Model> = initial
        .iter()
        .map(|&payload| Model { depth: 0, payload })
        .collect();
    let mut guards: Vec<(usize, MonitorGuard<'_>)> = Vec::new();
    check(&words, &models, &guards);

    for op in ops {
        match *op {
            Op::Lock(w) => {
                let g = words[w].lock();
                models[w].depth += 1;
                guards.push((w, g));
            }
            Op::Unlock(index) => {
                if !guards.is_empty() {
                    let (w, g) = guards.swap_remove(index % guards.len());
                    drop(g);
                    models[w].depth -= 1;
                }
            }
            Op::TryLock(w) => {
                let g = words[w]
                    .try_lock()
                    .expect("free, or held by this thread: try_lock succeeds");
                models[w].depth += 1;
                guards.push((w, g));
            }
            Op::SetPayload(w, payload) => {
                words[w].set_payload(payload);
                models[w].payload = payload;
            }
            Op::GetPayload(w) => assert_eq!(words[w].payload(), models[w].payload),
            Op::WaitZero(index) => {
                if !guards.is_empty() {
                    let len = guards.len();
                    let (w, g) = &mut guards[index % len];
                    assert!(g.wait_for(Duration::ZERO).timed_out());
                    assert_eq!(g.depth(), models[*w].depth, "wait restores the depth");
                }
            }
            Op::WaitUntilPast(index) => {
                if !guards.is_empty() {
                    let len = guards.len();
                    let (w, g) = &mut guards[index % len];
                    assert!(g.wait_until(Instant::now()).timed_out());
                    assert_eq!(g.depth(), models[*w].depth, "wait restores the depth");
                }
            }
            Op::Notify(index) => {
                if !guards.is_empty() {
                    let (_, g) = &guards[index % guards.len()];
                    assert!(!g.notify_one(), "nobody waits");
                    assert_eq!(g.notify_all(), 0, "nobody waits");
                }
            }
            Op::OtherThreadTryLock(w) => {
                let word = &words[w];
                let model = models[w];
                thread::scope(|s| {
                    s.spawn(|| {
                        assert!(!word.is_held_by_current_thread());
                        assert_eq!(word.is_locked(), model.depth > 0);
                        assert_eq!(word.payload(), model.payload);
                        let g = word.try_lock();
                        assert_eq!(
                            g.is_some(),
                            model.depth == 0,
                            "try_lock from another thread"
                        );
                        if let Some(g) = g {
                            assert_eq!(g.depth(), 1);
                        }
                    })
                    .join()
                    .unwrap();
                });
            }
        }
        check(&words, &models, &guards);
    }

    // Release what is left, in the order it is in, and check once more.
    while let Some((w, g)) = guards.pop() {
        drop(g);
        models[w].depth -= 1;
        check(&words, &models, &guards);
    }
    for (word, model) in words.iter().zip(&models) {
        assert!(!word.is_locked());
        assert_eq!(word.payload(), model.payload);
    }
}

/// How long a test may run before its watchdog declares it hung.
const HANG: Duration = Duration::from_secs(300);

/// Runs `strategy` through `test` for `cases` cases, shrinking a failure to
/// a minimal sequence. No failure file is written: a failing case is printed
/// in the panic message.
fn check_cases<S: Strategy>(cases: u32, strategy: S, test: impl Fn(S::Value))
where
    S::Value: std::fmt::Debug,
{
    let _watchdog = Watchdog::arm(HANG);
    let config = ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = TestRunner::new(config);
    if let Err(err) = runner.run(&strategy, |value| {
        test(value);
        Ok(())
    }) {
        panic!("{err}");
    }
}

/// Random sequences on three words agree with the model.
#[test]
fn single_thread_sequences_agree_with_the_model() {
    check_cases(
        512,
        (
            [payload(), payload(), payload()],
            prop::collection::vec(op(), 0..80),
        ),
        |(initial, ops)| run(initial, &ops),
    );
}

/// Deep nesting on one word: long runs of locks, then unlocks in random
/// order, with waits in between.
#[test]
fn deep_nesting_on_one_word_agrees_with_the_model() {
    let ops = prop::collection::vec(
        prop_oneof![
            4 => Just(Op::Lock(0)),
            3 => any::<usize>().prop_map(Op::Unlock),
            1 => any::<usize>().prop_map(Op::WaitZero),
            1 => payload().prop_map(|p| Op::SetPayload(0, p)),
            1 => Just(Op::OtherThreadTryLock(0)),
        ],
        0..200,
    );
    check_cases(256, (payload(), ops), |(initial, ops)| {
        run([initial, 0, MultiUseWord::MAX_PAYLOAD], &ops);
    });
}
