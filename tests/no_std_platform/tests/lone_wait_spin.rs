//! A lone waiter's spin seen from the platform: a waiter alone in its
//! stripe yields the long budget before it parks, parks without spinning
//! once a wait of its monitor stayed parked long (100 µs, or a millisecond
//! after the waiter's notify reached another waiter), and yields again once a park
//! ends sooner (README, "Contention policy"). One test in this binary: the
//! platform's counts are process-wide.

use metalock::MultiUseWord;
use metalock_no_std_platform::{WAITS, YIELDS, install, with_partner};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// The yields of `SpinWait`'s short budget, which every waiter spins
/// (10 rounds, the first three of spin hints).
const SHORT_SPIN_YIELDS: usize = 7;

/// Well past the policy's `LONG_PARK_PAIRED` (1 ms).
const LONG: Duration = Duration::from_millis(20);

/// Past the policy's `LONG_PARK_UNPAIRED` (100 µs), and short of its
/// `LONG_PARK_PAIRED` on a machine that wakes the waiter soon.
const MEDIUM: Duration = Duration::from_micros(400);

/// How long a thread may take to park, or a turn to end, before the test
/// gives up on it.
const STUCK: Duration = Duration::from_secs(30);

/// Tries, for the waits that must end soon after they park: a wake-up on a
/// busy machine can take 100 µs and more, and a park that long keeps the
/// mark.
const TRIES: usize = 200;

/// Runs `wait` (which returns a wait's yields) up to [`TRIES`] times, until
/// a wait yields more than the short budget; returns every count.
fn until_long_spin(mut wait: impl FnMut() -> usize) -> Vec<usize> {
    let mut spun = Vec::new();
    while spun.len() < TRIES && spun.last().is_none_or(|&n| n <= SHORT_SPIN_YIELDS) {
        spun.push(wait());
    }
    spun
}

/// Spins until `done`, or panics with `stuck` after [`STUCK`].
fn spin_until(done: impl Fn() -> bool, stuck: &str) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < STUCK, "{stuck}");
        std::hint::spin_loop();
    }
}

/// Notifies a third thread waiting on `gate`: the calling thread's notify
/// reaches a waiter, as each of a pair that waits in turn does.
fn notify_a_waiter(gate: &MultiUseWord) {
    let waiting = AtomicBool::new(false);
    thread::scope(|s| {
        s.spawn(|| {
            let mut guard = gate.lock();
            waiting.store(true, Ordering::SeqCst);
            // Released only by the wait: the notify below finds us waiting
            // (if it did not, the timeout lets the assert below end the test).
            guard.wait_for(STUCK);
        });
        spin_until(
            || waiting.load(Ordering::SeqCst),
            "the third thread never waited",
        );
        assert!(gate.lock().notify_one(), "the notify missed the waiter");
    });
}

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
    spin_until(
        || WAITS.load(Ordering::SeqCst) != waits,
        "the waiter never parked (did its thread panic?)",
    );
    let spun = YIELDS.load(Ordering::SeqCst) - yields;
    thread::sleep(parked);
    word.lock().notify_one();
    turn_ended(done);
    spun
}

/// Waits for the waiter thread's turn to end.
fn turn_ended(done: &mpsc::Receiver<()>) {
    done.recv_timeout(STUCK)
        .expect("the waiter's turn never ended (a notify missed it?)");
}

/// One wait of the waiter thread on `word` right after its notify reached
/// another waiter (`paired` tells its turn to notify first): notified once
/// the waiter has parked and `parked` has passed. `before_wait` is where the turn leaves the
/// platform's wait count before the waiter's own wait.
fn one_paired_wait(
    word: &MultiUseWord,
    (go, done): (&mpsc::Sender<()>, &mpsc::Receiver<()>),
    (paired, before_wait): (&AtomicBool, &AtomicUsize),
    parked: Duration,
) {
    before_wait.store(usize::MAX, Ordering::SeqCst);
    paired.store(true, Ordering::SeqCst);
    go.send(()).unwrap();
    spin_until(
        || before_wait.load(Ordering::SeqCst) != usize::MAX,
        "the waiter never notified the third thread",
    );
    let waits = before_wait.load(Ordering::SeqCst);
    spin_until(
        || WAITS.load(Ordering::SeqCst) != waits,
        "the waiter never parked (did its thread panic?)",
    );
    thread::sleep(parked);
    word.lock().notify_one();
    turn_ended(done);
    paired.store(false, Ordering::SeqCst);
}

/// One wait of the waiter thread that nobody notifies (`timed` asks its
/// turn for it): it runs out of time after [`LONG`]. Returns the yields it
/// asked for (nothing else in the process yields meanwhile).
fn one_timed_out_wait(
    (go, done): (&mpsc::Sender<()>, &mpsc::Receiver<()>),
    timed: &AtomicBool,
) -> usize {
    let yields = YIELDS.load(Ordering::SeqCst);
    timed.store(true, Ordering::SeqCst);
    go.send(()).unwrap();
    turn_ended(done);
    timed.store(false, Ordering::SeqCst);
    YIELDS.load(Ordering::SeqCst) - yields
}

#[test]
fn a_lone_waiter_stops_yielding_where_its_waits_park_long() {
    install();
    let (word, gate) = (MultiUseWord::new(), MultiUseWord::new());
    let (paired, before_wait) = (AtomicBool::new(false), AtomicUsize::new(0));
    let timed = AtomicBool::new(false);
    let turn = || {
        if paired.load(Ordering::SeqCst) {
            notify_a_waiter(&gate);
            before_wait.store(WAITS.load(Ordering::SeqCst), Ordering::SeqCst);
        }
        let mut guard = word.lock();
        if timed.load(Ordering::SeqCst) {
            assert!(guard.wait_for(LONG).timed_out(), "nobody notifies it");
        } else {
            guard.wait();
        }
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
        let again = until_long_spin(|| one_wait(word, go, done, Duration::ZERO));
        assert!(
            again.iter().any(|&spun| spun > SHORT_SPIN_YIELDS),
            "waits that park briefly never brought the long spin back: {again:?}"
        );
        // A waiter whose notifies reached no waiter is marked by a park of
        // hundreds of microseconds.
        one_wait(word, go, done, MEDIUM);
        assert_eq!(
            one_wait(word, go, done, Duration::ZERO),
            0,
            "a park of {MEDIUM:?} did not mark the set"
        );
        // One whose notify reached a waiter is not, so that a pair parking
        // in turn keeps spinning: such a park clears the mark (tried again
        // where the machine woke the waiter late).
        let after_paired = until_long_spin(|| {
            one_wait(word, go, done, LONG);
            one_paired_wait(word, (go, done), (&paired, &before_wait), MEDIUM);
            one_wait(word, go, done, Duration::ZERO)
        });
        assert!(
            after_paired.iter().any(|&spun| spun > SHORT_SPIN_YIELDS),
            "a park of {MEDIUM:?} after a notify that reached a waiter marked the set: \
             {after_paired:?}"
        );
        // But a park of a millisecond or more marks it.
        one_paired_wait(word, (go, done), (&paired, &before_wait), LONG);
        assert_eq!(
            one_wait(word, go, done, Duration::ZERO),
            0,
            "a park of {LONG:?} after a notify that reached a waiter did not mark the set"
        );
        // A wait that ran out of time learns as a notified one does (tried
        // again where the set was still marked when it began).
        let timed_out = until_long_spin(|| {
            one_wait(word, go, done, Duration::ZERO);
            one_timed_out_wait((go, done), &timed)
        });
        assert!(
            timed_out.iter().any(|&spun| spun > SHORT_SPIN_YIELDS),
            "timed waits never began on a clear mark: {timed_out:?}"
        );
        assert_eq!(
            one_wait(word, go, done, Duration::ZERO),
            0,
            "a wait that ran out of time after a park of {LONG:?} did not mark the set"
        );
    });
}
