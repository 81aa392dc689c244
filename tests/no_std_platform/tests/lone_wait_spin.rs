//! A lone waiter's spin seen from the platform: a waiter alone in its
//! stripe yields the long budget before it parks, parks without spinning
//! once a wait of its monitor stayed parked long (until the exit that wakes
//! it: 15 µs, or a millisecond after the waiter's notify reached another
//! waiter) or a notify ended its spin after yields that long (in a timed
//! wait too, whose bound counts from its spin's start), and yields again
//! once a park ends sooner, the lag of the waiter's last late wake-up
//! counted in (README, "Contention policy"). One test in this binary: the
//! platform's counts are process-wide.

use metalock::MultiUseWord;
use metalock_no_std_platform::{
    BUSY_LONG_YIELDS, LONG_YIELD_DELAY_MICROS, SHORT_SPIN_YIELDS, SHORT_YIELDS_AT_ONCE, WAITS,
    WAKE_DELAY_MICROS, YIELDS, install, spun_long, start_spin_record, with_partner,
};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Well past the policy's `LONG_PARK_PAIRED` (1 ms).
const LONG: Duration = Duration::from_millis(20);

/// Past the policy's `LONG_PARK_UNPAIRED` (15 µs) with its
/// `WAKE_UP_ALLOWANCE` (85 µs), and short of its `LONG_PARK_PAIRED` where
/// a sleep of 400 µs ends soon.
const MEDIUM: Duration = Duration::from_micros(400);

/// How late the platform wakes a waiter in the step that checks a late
/// wake-up: past every threshold of the policy but `LONG_PARK_PAIRED`.
const LATE_WAKE_MICROS: usize = 400;

/// A park after a late wake-up, in the step that checks the next wait
/// counts the lag: short of the policy's `LONG_PARK_UNPAIRED` (15 µs) with
/// the notify's own few microseconds, and past it with the 10 µs of lag
/// the policy counts in at most.
const AFTER_LATE_WAKE: Duration = Duration::from_micros(5);

/// Rounds of the late wake-up steps.
const LATE_WAKE_ROUNDS: usize = 5;

/// How long a thread may take to park, or a turn to end, before the test
/// gives up on it.
const STUCK: Duration = Duration::from_secs(30);

/// Tries, for the waits that must end soon after they park: on a busy
/// machine the notifying thread can take 15 µs and more to notify, and a
/// park that long keeps the mark (5 µs, after a park its waiter woke from
/// late: the policy counts up to 10 µs of that lag in).
const TRIES: usize = 200;

/// Tries for the timed-out wait's step, the first with a timed wait of
/// [`LONG`], each next one twice as long.
const TIMED_TRIES: u32 = 6;

/// A wait's spin: the yields it asked for, and whether it spun longer than
/// the short budget (`spun_long`).
type Spin = (usize, bool);

/// Runs `wait` up to [`TRIES`] times, until a wait spins longer than the
/// short budget; returns every spin.
fn until_long_spin(mut wait: impl FnMut() -> Spin) -> Vec<Spin> {
    let mut spun: Vec<Spin> = Vec::new();
    while spun.len() < TRIES && spun.last().is_none_or(|&(_, long)| !long) {
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
/// parked and `parked` has passed (spun on the clock under a millisecond,
/// which a sleep would outlast). Returns its spin before it parked
/// (nothing else in the process yields meanwhile: this thread spins with
/// hints, and the monitor is free while the waiter waits).
fn one_wait(
    word: &MultiUseWord,
    go: &mpsc::Sender<()>,
    done: &mpsc::Receiver<()>,
    parked: Duration,
) -> Spin {
    let (waits, yields) = (WAITS.load(Ordering::SeqCst), YIELDS.load(Ordering::SeqCst));
    start_spin_record();
    go.send(()).unwrap();
    // Only the waiter's park waits on the platform: its lock is free.
    spin_until(
        || WAITS.load(Ordering::SeqCst) != waits,
        "the waiter never parked (did its thread panic?)",
    );
    let spun = YIELDS.load(Ordering::SeqCst) - yields;
    let long = spun_long(spun);
    if parked < Duration::from_millis(1) {
        let parked_at = Instant::now();
        while parked_at.elapsed() < parked {
            std::hint::spin_loop();
        }
    } else {
        thread::sleep(parked);
    }
    word.lock().notify_one();
    turn_ended(done);
    (spun, long)
}

/// Past the policy's `LONG_PARK_UNPAIRED` (15 µs): how long the waiter
/// yields past the short budget before [`one_signalled_wait`] notifies it
/// in the step that checks a long spin marks the set.
const SPUN_LONG: Duration = Duration::from_micros(20);

/// How long each yield past the short budget sleeps in that step: so that
/// the waiter still spins [`SPUN_LONG`] after its first such yield, however
/// fast the machine's yields are.
const SLOW_YIELD_MICROS: usize = 100;

/// One wait of the waiter thread on `word`, timed (for [`STUCK`]) where
/// `timed` is set in it, notified while it spins, once it has yielded past
/// the short budget and `spun` has passed since. Returns whether the notify
/// ended its spin, that is whether it never parked (if it did, the step
/// tries again).
fn one_signalled_wait(
    word: &MultiUseWord,
    (go, done): (&mpsc::Sender<()>, &mpsc::Receiver<()>),
    timed: Option<&AtomicBool>,
    spun: Duration,
) -> bool {
    let (waits, yields) = (WAITS.load(Ordering::SeqCst), YIELDS.load(Ordering::SeqCst));
    let parked = || WAITS.load(Ordering::SeqCst) != waits;
    timed.inspect(|timed| timed.store(true, Ordering::SeqCst));
    // Where the long yields keep the processor, the short ones return at
    // once too: the waiter then leaves its processor to nobody while it
    // spins.
    SHORT_YIELDS_AT_ONCE.store(
        timed.is_some() || BUSY_LONG_YIELDS.load(Ordering::SeqCst),
        Ordering::SeqCst,
    );
    start_spin_record();
    go.send(()).unwrap();
    spin_until(
        || YIELDS.load(Ordering::SeqCst) - yields > SHORT_SPIN_YIELDS || parked(),
        "the waiter never yielded (did its thread panic?)",
    );
    let long_yields = Instant::now();
    while long_yields.elapsed() < spun && !parked() {
        std::hint::spin_loop();
    }
    word.lock().notify_one();
    turn_ended(done);
    timed.inspect(|timed| timed.store(false, Ordering::SeqCst));
    SHORT_YIELDS_AT_ONCE.store(false, Ordering::SeqCst);
    !parked()
}

/// The steps of a spin that its notify ends, for waits that `timed` makes
/// timed where given: it marks the set if its yields lasted as long as a
/// park that marks it, and leaves it clear if not. A timed wait's bound
/// counts from its spin's start, so its short budget's yields return at
/// once here; where every waiter still parked before its notify (a busy
/// machine that ran other threads meanwhile), the timed steps cannot tell,
/// and say so.
fn signalled_steps(
    word: &MultiUseWord,
    (go, done): (&mpsc::Sender<()>, &mpsc::Receiver<()>),
    timed: Option<&AtomicBool>,
    timed_out: &AtomicU64,
) {
    let kind = if timed.is_some() { "timed" } else { "untimed" };
    let cannot_tell = |step: &str| {
        eprintln!("{kind} {step} step skipped: every waiter parked before its notify");
    };
    // A spin that its notify ended soon leaves the set clear (tried again
    // where the mark was still set, or a yield ran long). The wait before
    // it ends in its spin too, so that it carries no wake-up lag in: a
    // parked waiter woken 10 µs late (common where an idle vCPU halts)
    // would leave a timed spin 5 µs from its start to mark the set...
    let mut after_soon = Vec::new();
    for _ in 0..TRIES {
        fresh_start(word, (go, done), timed_out);
        BUSY_LONG_YIELDS.store(true, Ordering::SeqCst);
        let soon = one_signalled_wait(word, (go, done), None, Duration::ZERO)
            && one_signalled_wait(word, (go, done), timed, Duration::ZERO);
        BUSY_LONG_YIELDS.store(false, Ordering::SeqCst);
        if soon {
            after_soon.push(one_wait(word, go, done, Duration::ZERO).0);
            if after_soon.last() != Some(&0) {
                break;
            }
        }
    }
    if timed.is_some() && after_soon.is_empty() {
        cannot_tell("soon");
    } else {
        assert!(
            after_soon.last().is_some_and(|&n| n > 0),
            "{kind} spins that a notify ended soon marked the set: {after_soon:?}"
        );
    }
    // ...and one that it ended after yields as long as a park that marks
    // the set marks it too (tried again where the waiter parked before the
    // notify).
    LONG_YIELD_DELAY_MICROS.store(SLOW_YIELD_MICROS, Ordering::SeqCst);
    let mut spun_out = false;
    for _ in 0..TRIES {
        fresh_start(word, (go, done), timed_out);
        spun_out = one_signalled_wait(word, (go, done), timed, SPUN_LONG);
        if spun_out {
            break;
        }
    }
    LONG_YIELD_DELAY_MICROS.store(0, Ordering::SeqCst);
    if timed.is_some() && !spun_out {
        cannot_tell("long");
        return;
    }
    assert!(
        spun_out,
        "the {kind} waiter always parked before {SPUN_LONG:?} of yields"
    );
    assert_eq!(
        one_wait(word, go, done, Duration::ZERO).0,
        0,
        "a {kind} spin that a notify ended after {SPUN_LONG:?} of yields did not mark the set"
    );
}

/// The timeout of the waits that [`fresh_start`] lets run out: past the
/// few microseconds a wait takes to start its spin, short of the lone
/// waiter's 30 µs bound, so that a wait on a clear set ends at its deadline
/// in its spin's park, at once.
const NO_LAG_TIMEOUT: Duration = Duration::from_micros(20);

/// Leaves the waiter's set clear and no wake-up lag for its next wait to
/// count: a wait that runs out of time takes the lag and leaves none (its
/// park is unstamped), a brief park with no lag counted clears the set
/// (woken 400 µs late on purpose, so that a lag the next waits failed to
/// take would show), and a second wait that runs out takes that lag,
/// spinning on the clear set until its deadline and leaving it clear (its
/// park returns at once). Where the machine delays one of them the next wait may still
/// start marked, and the caller tries again.
fn fresh_start(
    word: &MultiUseWord,
    (go, done): (&mpsc::Sender<()>, &mpsc::Receiver<()>),
    timed: &AtomicU64,
) {
    one_timed_out_wait((go, done), timed, NO_LAG_TIMEOUT);
    WAKE_DELAY_MICROS.store(LATE_WAKE_MICROS, Ordering::SeqCst);
    one_wait(word, go, done, Duration::ZERO);
    WAKE_DELAY_MICROS.store(0, Ordering::SeqCst);
    one_timed_out_wait((go, done), timed, NO_LAG_TIMEOUT);
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

/// One wait of the waiter thread that nobody notifies (`timed`, in
/// microseconds, asks its turn for it): it runs out of time after
/// `timeout`. Returns its spin (nothing else in the process yields or
/// parks meanwhile).
fn one_timed_out_wait(
    (go, done): (&mpsc::Sender<()>, &mpsc::Receiver<()>),
    timed: &AtomicU64,
    timeout: Duration,
) -> Spin {
    let yields = YIELDS.load(Ordering::SeqCst);
    let micros = u64::try_from(timeout.as_micros()).expect("a timeout of a few seconds");
    timed.store(micros, Ordering::SeqCst);
    start_spin_record();
    go.send(()).unwrap();
    turn_ended(done);
    timed.store(0, Ordering::SeqCst);
    let spun = YIELDS.load(Ordering::SeqCst) - yields;
    (spun, spun_long(spun))
}

#[test]
fn a_lone_waiter_stops_yielding_where_its_waits_park_long() {
    install();
    let (word, gate) = (MultiUseWord::new(), MultiUseWord::new());
    let (paired, before_wait) = (AtomicBool::new(false), AtomicUsize::new(0));
    let (timed, timed_notified) = (AtomicU64::new(0), AtomicBool::new(false));
    let turn = || {
        if paired.load(Ordering::SeqCst) {
            notify_a_waiter(&gate);
            before_wait.store(WAITS.load(Ordering::SeqCst), Ordering::SeqCst);
        }
        let mut guard = word.lock();
        let timeout = timed.load(Ordering::SeqCst);
        if timeout != 0 {
            let timeout = Duration::from_micros(timeout);
            assert!(guard.wait_for(timeout).timed_out(), "nobody notifies it");
        } else if timed_notified.load(Ordering::SeqCst) {
            assert!(!guard.wait_for(STUCK).timed_out(), "the test notifies it");
        } else {
            guard.wait();
        }
    };
    with_partner(turn, |go, done| {
        let word = &word;
        // A fresh monitor: the long spin, then a park that lasts.
        let (first, long) = one_wait(word, go, done, LONG);
        assert!(
            long,
            "a lone waiter spins longer than the short budget: {first} yields"
        );
        // That park marked the monitor: the next lone waiter parks without
        // spinning.
        let (after_long, _) = one_wait(word, go, done, Duration::ZERO);
        assert_eq!(after_long, 0, "a wait after a long park still yielded");
        // A park that ends soon clears the mark (tried again where the
        // notify came late).
        let again = until_long_spin(|| one_wait(word, go, done, Duration::ZERO));
        assert!(
            again.iter().any(|&(_, long)| long),
            "waits that park briefly never brought the long spin back: {again:?}"
        );
        // A waiter whose notifies reached no waiter is marked by a park of
        // hundreds of microseconds.
        one_wait(word, go, done, MEDIUM);
        assert_eq!(
            one_wait(word, go, done, Duration::ZERO).0,
            0,
            "a park of {MEDIUM:?} did not mark the set"
        );
        // A park counts until the exit that wakes the waiter, not until the
        // waiter runs: a marked waiter woken late after a notify that came
        // soon clears the mark (tried again where the notify itself came
        // late). But the next wait counts that lag, which shortened it: a
        // park a little too short to mark the set marks it after a late
        // wake-up (every round: a slow notify may mark it without the lag).
        for _ in 0..LATE_WAKE_ROUNDS {
            one_wait(word, go, done, LONG);
            WAKE_DELAY_MICROS.store(LATE_WAKE_MICROS, Ordering::SeqCst);
            let woken_late = until_long_spin(|| one_wait(word, go, done, Duration::ZERO));
            assert!(
                woken_late.iter().any(|&(_, long)| long),
                "waits woken {LATE_WAKE_MICROS} µs late after an early notify kept the set \
                 marked: {woken_late:?}"
            );
            one_wait(word, go, done, AFTER_LATE_WAKE);
            WAKE_DELAY_MICROS.store(0, Ordering::SeqCst);
            assert_eq!(
                one_wait(word, go, done, Duration::ZERO).0,
                0,
                "a park of {AFTER_LATE_WAKE:?} after a wake-up {LATE_WAKE_MICROS} µs late did \
                 not mark the set"
            );
        }
        // With no lag carried in (the wait before ended in its spin), such
        // a park leaves the set clear (tried again where a notify came late).
        let mut no_lag = Vec::new();
        for _ in 0..TRIES {
            fresh_start(word, (go, done), &timed);
            if one_signalled_wait(word, (go, done), None, Duration::ZERO) {
                one_wait(word, go, done, AFTER_LATE_WAKE);
                no_lag.push(one_wait(word, go, done, Duration::ZERO).0);
                if no_lag.last() != Some(&0) {
                    break;
                }
            }
        }
        assert!(
            no_lag.last().is_some_and(|&n| n > 0),
            "parks of {AFTER_LATE_WAKE:?} with no wake-up lag carried in marked the set: \
             {no_lag:?}"
        );
        // One whose notify reached a waiter is not, so that a pair parking
        // in turn keeps spinning: such a park clears the mark (tried again
        // where the notify came late).
        let after_paired = until_long_spin(|| {
            one_wait(word, go, done, LONG);
            one_paired_wait(word, (go, done), (&paired, &before_wait), MEDIUM);
            one_wait(word, go, done, Duration::ZERO)
        });
        assert!(
            after_paired.iter().any(|&(_, long)| long),
            "a park of {MEDIUM:?} after a notify that reached a waiter marked the set: \
             {after_paired:?}"
        );
        // But a park of a millisecond or more marks it.
        one_paired_wait(word, (go, done), (&paired, &before_wait), LONG);
        assert_eq!(
            one_wait(word, go, done, Duration::ZERO).0,
            0,
            "a park of {LONG:?} after a notify that reached a waiter did not mark the set"
        );
        // A wait that ran out of time learns as a notified one does (tried
        // again where the set was still marked when it began, and with
        // twice the time where its yields, each a time slice on a busy
        // machine, ran out its time before it parked).
        let mut after_timed_out = Vec::new();
        for timeout in (0..TIMED_TRIES).map(|doubled| LONG * 2_u32.pow(doubled)) {
            let timed_out = until_long_spin(|| {
                one_wait(word, go, done, Duration::ZERO);
                one_timed_out_wait((go, done), &timed, timeout)
            });
            assert!(
                timed_out.iter().any(|&(_, long)| long),
                "timed waits never began on a clear mark: {timed_out:?}"
            );
            after_timed_out.push(one_wait(word, go, done, Duration::ZERO).0);
            if after_timed_out.last() == Some(&0) {
                break;
            }
        }
        assert_eq!(
            after_timed_out.last(),
            Some(&0),
            "waits that ran out of time after parks of {LONG:?} and longer did not mark the \
             set: {after_timed_out:?}"
        );
        // A spin that its notify ends after long yields marks the set,
        // an untimed wait's (whose bound counts from its first long yield)
        // and a timed one's (from its spin's start).
        signalled_steps(word, (go, done), None, &timed);
        signalled_steps(word, (go, done), Some(&timed_notified), &timed);
    });
}
