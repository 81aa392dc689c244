//! The spin of a waiter that shares its stripe, seen from the platform: it
//! yields the short budget before it parks, only spin hints once its set's
//! waits of that kind stayed parked a millisecond or more (until the exit
//! that wakes them), and yields again once such a park ends sooner; the
//! lone waiters' mark of the same set and this one do not stop each other's
//! yields (README, "Contention policy"). One test in this binary: the
//! platform's counts are process-wide.

use metalock::MultiUseWord;
use metalock_no_std_platform::{
    SHORT_SPIN_YIELDS, WAITS, YIELDS, install, spun_long, start_spin_record, with_partner,
};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Well past the policy's `LONG_PARK_SHARED` (1 ms).
const LONG: Duration = Duration::from_millis(20);

/// Past every threshold of a lone waiter whose notifies reached no waiter
/// (15 µs, or 100 µs unstamped), and short of `LONG_PARK_SHARED` where a
/// sleep of 300 µs ends soon.
const MEDIUM: Duration = Duration::from_micros(300);

/// How long a thread may take to park, or a turn to end, before the test
/// gives up on it.
const STUCK: Duration = Duration::from_secs(30);

/// Tries, for the steps whose waits must end soon after they park: on a
/// busy machine the first waiter can take a millisecond and more to wake
/// and pass the monitor on, and a park that long keeps the mark.
const TRIES: usize = 200;

/// Spins until `done`, or panics with `stuck` after [`STUCK`].
fn spin_until(done: impl Fn() -> bool, stuck: &str) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < STUCK, "{stuck}");
        std::hint::spin_loop();
    }
}

/// A wait's spin: the yields it asked for, and whether it spun longer than
/// the short budget (`spun_long`).
type Spin = (usize, bool);

/// Starts one wait of a partner thread, and waits until it has parked.
/// Returns its spin meanwhile (nothing else in the process yields or
/// parks: this thread spins with hints, the other partner is parked or
/// idle, and the monitor is free while its waiters wait).
fn parked(go: &mpsc::Sender<()>) -> Spin {
    let (waits, yields) = (WAITS.load(Ordering::SeqCst), YIELDS.load(Ordering::SeqCst));
    start_spin_record();
    go.send(()).unwrap();
    // Only a park waits on the platform: the partner's lock is free.
    spin_until(
        || WAITS.load(Ordering::SeqCst) != waits,
        "a waiter never parked (did its thread panic?)",
    );
    let spun = YIELDS.load(Ordering::SeqCst) - yields;
    (spun, spun_long(spun))
}

/// Waits for a partner's turn to end.
fn turn_ended(done: &mpsc::Receiver<()>) {
    done.recv_timeout(STUCK)
        .expect("a waiter's turn never ended (a notify missed it?)");
}

/// One round: the first partner waits on `word` alone in its stripe, the
/// second behind it (sharing the stripe), both are notified once the second
/// has parked and `park` has passed. Returns the spin of the first and the
/// yields of the second.
fn round(
    word: &MultiUseWord,
    first: (&mpsc::Sender<()>, &mpsc::Receiver<()>),
    second: (&mpsc::Sender<()>, &mpsc::Receiver<()>),
    park: Duration,
) -> (Spin, usize) {
    let spun = (parked(first.0), parked(second.0).0);
    thread::sleep(park);
    word.lock().notify_all();
    turn_ended(first.1);
    turn_ended(second.1);
    spun
}

/// One wait of the first partner alone, notified as soon as it has parked.
/// Returns its spin.
fn lone_wait(word: &MultiUseWord, first: (&mpsc::Sender<()>, &mpsc::Receiver<()>)) -> Spin {
    let spun = parked(first.0);
    word.lock().notify_all();
    turn_ended(first.1);
    spun
}

/// Runs `round` up to [`TRIES`] times, until the second waiter yields the
/// short budget again; returns every round's spins.
fn until_short_spin(mut round: impl FnMut() -> (Spin, usize)) -> Vec<(Spin, usize)> {
    let mut spun = Vec::new();
    while spun.len() < TRIES
        && spun
            .last()
            .is_none_or(|&(_, second)| second != SHORT_SPIN_YIELDS)
    {
        spun.push(round());
    }
    spun
}

#[test]
fn a_waiter_that_shares_its_stripe_stops_yielding_where_its_waits_park_long() {
    install();
    let word = MultiUseWord::new();
    // Timed, so that a notify that missed a waiter fails the test (the
    // turn's panic ends its partner loop) rather than hanging it.
    let turn = || {
        let timed_out = word.lock().wait_for(STUCK).timed_out();
        assert!(!timed_out, "a waiter was never notified");
    };
    with_partner(turn, |go_first, done_first| {
        with_partner(turn, |go_second, done_second| {
            let round = |park| {
                round(
                    &word,
                    (go_first, done_first),
                    (go_second, done_second),
                    park,
                )
            };
            // A fresh monitor: the short budget, then parks that last.
            let ((lone, long), shared) = round(LONG);
            assert!(
                long,
                "a lone waiter spins longer than the short budget: {lone} yields"
            );
            assert_eq!(
                shared, SHORT_SPIN_YIELDS,
                "a waiter that shares its stripe yields the short budget"
            );
            // Those parks marked the set for both kinds. Brief lone waits
            // clear the lone waiters' mark only (tried again where the
            // notify came late): a lone waiter spins long again while the
            // other mark is still set, and the other waiter, next, spins
            // hints only.
            let cleared = (0..TRIES)
                .map(|_| lone_wait(&word, (go_first, done_first)))
                .any(|(_, long)| long);
            assert!(
                cleared,
                "brief lone waits never brought the long spin back beside the mark of waiters \
                 that share their stripe"
            );
            let (_, after_long) = round(Duration::ZERO);
            assert_eq!(
                after_long, 0,
                "a wait after parks of {LONG:?} still yielded"
            );
            // A park that ends soon clears the mark (tried again where the
            // first waiter passed the monitor on late).
            let again = until_short_spin(|| round(Duration::ZERO));
            assert_eq!(
                again.last().map(|&(_, shared)| shared),
                Some(SHORT_SPIN_YIELDS),
                "waits that park briefly never brought the yields back: {again:?}"
            );
            // With the lone waiters' mark set (parks of a few hundred
            // microseconds) and this one clear, the lone waiter parks at
            // once and the other still yields (tried again where a wake-up
            // came late).
            let after_medium = until_short_spin(|| {
                round(MEDIUM);
                round(Duration::ZERO)
            });
            assert_eq!(
                after_medium
                    .last()
                    .map(|&((lone, _), shared)| (lone, shared)),
                Some((0, SHORT_SPIN_YIELDS)),
                "parks of {MEDIUM:?} did not mark the lone waiter's set, or stopped the yields \
                 of a waiter that shares its stripe: {after_medium:?}"
            );
        });
    });
}
