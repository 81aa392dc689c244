//! The contention profile seen from the platform: a monitor whose spins
//! always lose stops asking the system for yields, explores a full spin now
//! and then, and spins fully again once such a spin wins (README,
//! "Contention policy"). One test in this binary: the platform's counts are
//! process-wide.
//!
//! The swap-only build has no spin before it queues.
#![cfg(not(feature = "swap-only"))]

use metalock::MultiUseWord;
use metalock_no_std_platform::{WAITS, YIELDS, install, with_partner};
use std::sync::atomic::Ordering;
use std::sync::mpsc;

/// Contended acquisitions watched in each phase.
const ROUNDS: usize = 300;

/// Spins lost with the hints only before one explores with the full budget
/// (README: "one full spin after every eight lost").
const EXPLORE_AFTER: usize = 8;

/// How a contender's spin ended, seen by the holder.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Spin {
    /// The contender queued and blocked after a spin without yields.
    LostWithoutYields,
    /// The contender queued and blocked after yielding.
    LostAfterYields,
    /// The contender yielded, and the holder then let the monitor go.
    Yielded,
}

/// One contended acquisition: this thread holds `word` while `contender`
/// tries to take it, until the contender blocks (`release_on_yield`: or
/// yields, whichever comes first).
fn round(
    word: &MultiUseWord,
    go: &mpsc::Sender<()>,
    done: &mpsc::Receiver<()>,
    release_on_yield: bool,
) -> Spin {
    let guard = word.lock();
    let (waits, yields) = (WAITS.load(Ordering::SeqCst), YIELDS.load(Ordering::SeqCst));
    go.send(()).unwrap();
    let spin = loop {
        // The contender's yields come before its wait in its program order.
        let blocked = WAITS.load(Ordering::SeqCst) != waits;
        let yielded = YIELDS.load(Ordering::SeqCst) != yields;
        match (blocked, yielded) {
            (true, false) => break Spin::LostWithoutYields,
            (true, true) => break Spin::LostAfterYields,
            (false, true) if release_on_yield => break Spin::Yielded,
            _ => std::hint::spin_loop(),
        }
    };
    drop(guard);
    done.recv().unwrap();
    spin
}

#[test]
fn the_yields_stop_where_spins_lose_and_return_where_they_win() {
    install();
    let word = MultiUseWord::new();
    with_partner(
        || drop(word.lock()),
        |go, done| {
            let word = &word;
            // Every spin loses: the holder lets go only once the contender has
            // blocked, so each round is one lost spin and nothing else, and the
            // sequence is exact: full spins while the credit lasts, then spin
            // hints only, with one full spin after every `EXPLORE_AFTER` lost.
            let lost: Vec<Spin> = (0..ROUNDS).map(|_| round(word, go, done, false)).collect();
            let credit = lost
                .iter()
                .position(|&s| s == Spin::LostWithoutYields)
                .unwrap_or_else(|| panic!("the yields never stopped: {lost:?}"));
            assert!(
                credit >= 32,
                "the yields stopped after {credit} lost spins: {lost:?}"
            );
            assert!(
                lost[..credit].iter().all(|&s| s == Spin::LostAfterYields),
                "a fresh monitor spins fully until its credit runs out: {lost:?}"
            );
            for (i, &spin) in lost[credit..].iter().enumerate() {
                let explores = i % (EXPLORE_AFTER + 1) == EXPLORE_AFTER;
                let expected = if explores {
                    Spin::LostAfterYields
                } else {
                    Spin::LostWithoutYields
                };
                assert_eq!(
                    spin,
                    expected,
                    "lost spin {} after the credit ran out: {lost:?}",
                    i + 1
                );
            }

            // The holder lets go as soon as the contender yields: an exploring
            // spin wins, and the full spins come back. This phase leans on the
            // scheduler: a holder that does not run while the contender yields
            // six more times turns a win into a loss, which costs one credit
            // where a win earns seven, so only the tail is checked.
            let won: Vec<Spin> = (0..ROUNDS).map(|_| round(word, go, done, true)).collect();
            let tail = &won[ROUNDS - 20..];
            assert!(
                tail.iter().all(|&s| s != Spin::LostWithoutYields),
                "spins that win kept no credit: {won:?}"
            );
        },
    );
}
