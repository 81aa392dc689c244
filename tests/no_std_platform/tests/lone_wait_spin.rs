//! A lone waiter's spin seen from the platform: a waiter alone in its
//! stripe yields the long budget before it parks, parks without spinning
//! once a wait of its monitor stayed parked a millisecond or more, and
//! yields again once a park ends sooner (README, "Contention policy"). One test in
//! this binary: the platform's counts are process-wide.

use metalock::MultiUseWord;
use metalock_no_std_platform::{WAITS, YIELDS, install, with_partner};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// The yields of `SpinWait`'s short budget, which every waiter spins
/// (10 rounds, the first three of spin hints).
const SHORT_SPIN_YIELDS: usize = 7;

/// Well past the policy's `LONG_PARK` (1 ms).
const LONG: Duration = Duration::from_millis(20);

/// How long a waiter may take to park before the test gives up on it.
const STUCK: Duration = Duration::from_secs(30);

/// Tries, for the waits that end soon after they park: a wake-up on a busy
/// machine can take a millisecond, and a park that long keeps the mark.
const TRIES: usize = 50;

/// One wait of the waiter thread on `word`: notified once the waiter has
/// parked and `parked` has passed. Returns the yields it asked for before
/// it parked (nothing else in the process yields meanwhile: this thread
/// spins with hints, and the monitor is free while the waiter waits).
fn one_wait(
    word: &MultiUseWord,
    go: &mpsc::Sender<()>,
    done: &mpsc::Receiver<()>,
    parked: Duration,
) -> usize {
    let (waits, yields) = (WAITS.load(Ordering::SeqCst), YIELDS.load(Ordering::SeqCst));
    go.send(()).unwrap();
    // Only the waiter's park waits on the platform: its lock is free.
    let started = Instant::now();
    while WAITS.load(Ordering::SeqCst) == waits {
        assert!(
            started.elapsed() < STUCK,
            "the waiter never parked (did its thread panic?)"
        );
        std::hint::spin_loop();
    }
    let spun = YIELDS.load(Ordering::SeqCst) - yields;
    thread::sleep(parked);
    word.lock().notify_one();
    done.recv().unwrap();
    spun
}

#[test]
fn a_lone_waiter_stops_yielding_where_its_waits_park_long() {
    install();
    let word = MultiUseWord::new();
    let turn = || {
        let mut guard = word.lock();
        guard.wait();
    };
    with_partner(turn, |go, done| {
        let word = &word;
        // A fresh monitor: the long spin, then a park that lasts.
        let first = one_wait(word, go, done, LONG);
        assert!(
            first > SHORT_SPIN_YIELDS,
            "a lone waiter yields more than the short budget: {first} yields"
        );
        // That park marked the monitor: the next lone waiter parks without
        // spinning.
        let after_long = one_wait(word, go, done, Duration::ZERO);
        assert_eq!(after_long, 0, "a wait after a long park still yielded");
        // A park that ends soon clears the mark (tried again where the
        // machine woke the waiter late).
        let again: Vec<usize> = (0..TRIES)
            .map(|_| one_wait(word, go, done, Duration::ZERO))
            .collect();
        assert!(
            again.iter().any(|&spun| spun > SHORT_SPIN_YIELDS),
            "waits that park briefly never brought the long spin back: {again:?}"
        );
        // And a long park marks it again.
        one_wait(word, go, done, LONG);
        assert_eq!(one_wait(word, go, done, Duration::ZERO), 0);
    });
}
