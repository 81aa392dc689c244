//! Where a yield takes long, as it does on a processor that other runnable
//! threads share, a timed wait's spin still ends at its deadline: the
//! short budget's yields stop there as the lone waiter's longer spin does
//! (README, "Contention policy"); and a lone waiter's longer spin ends at
//! its own bound when the deadline is further away. One test in this binary: the platform's
//! counts are process-wide.

use metalock::MultiUseWord;
use metalock_no_std_platform::{WAITS, YIELD_DELAY_MICROS, YIELDS, install};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// How long each of the platform's yields takes in this test.
const YIELD_MICROS: usize = 1_000;

/// The timeout of the timed waits: three yields long.
const TIMEOUT: Duration = Duration::from_millis(3);

/// A timeout far beyond a lone waiter's spin (30 µs from its start).
const LONG_TIMEOUT: Duration = Duration::from_millis(200);

/// How long the waiter may take to park before the test gives up on it.
const STUCK: Duration = Duration::from_secs(30);

/// The yields a wait of `timeout` on `word` asks for, with each yield
/// taking [`YIELD_MICROS`].
fn yields_of_a_timed_wait(word: &MultiUseWord, timeout: Duration) -> usize {
    let mut guard = word.lock();
    YIELD_DELAY_MICROS.store(YIELD_MICROS, Ordering::SeqCst);
    let yields = YIELDS.load(Ordering::SeqCst);
    let timed_out = guard.wait_for(timeout).timed_out();
    let spun = YIELDS.load(Ordering::SeqCst) - yields;
    YIELD_DELAY_MICROS.store(0, Ordering::SeqCst);
    assert!(timed_out, "nobody notifies it");
    spun
}

#[test]
fn a_spin_of_slow_yields_ends_at_the_deadline() {
    install();
    let word = MultiUseWord::new();
    // Alone in its stripe: the short budget's 7 yields, then 60 more.
    let lone = yields_of_a_timed_wait(&word, TIMEOUT);
    // Far from its deadline, the lone waiter's longer spin still ends at
    // its own bound, 30 µs from the spin's start, which its first yield
    // outlasts: the short budget's 7 yields, and at most one more.
    let lone_long = yields_of_a_timed_wait(&word, LONG_TIMEOUT);
    let released = AtomicBool::new(false);
    // Counted first, checked once the waiter is gone: a failed check inside
    // the scope would leave it waiting, and the scope with it.
    let (parked, shared) = thread::scope(|s| {
        let waits = WAITS.load(Ordering::SeqCst);
        s.spawn(|| {
            let mut guard = word.lock();
            while !released.load(Ordering::SeqCst) {
                guard.wait();
            }
        });
        // Only the waiter's park waits on the platform.
        let started = Instant::now();
        while WAITS.load(Ordering::SeqCst) == waits && started.elapsed() < STUCK {
            std::hint::spin_loop();
        }
        let parked = WAITS.load(Ordering::SeqCst) != waits;
        // Beside the parked waiter in its stripe: the short budget only.
        let shared = yields_of_a_timed_wait(&word, TIMEOUT);
        released.store(true, Ordering::SeqCst);
        word.lock().notify_all();
        (parked, shared)
    });
    assert!(parked, "the waiter never parked (did its thread panic?)");
    assert!(
        lone_long <= 8,
        "a lone wait of {LONG_TIMEOUT:?} asked for {lone_long} yields of {YIELD_MICROS} µs: its \
         spin outlasted its own bound"
    );
    for (spun, waiter) in [(lone, "lone"), (shared, "stripe-sharing")] {
        assert!(
            spun <= 3,
            "a {waiter} wait of {TIMEOUT:?} asked for {spun} yields of {YIELD_MICROS} µs: its \
             spin outlasted its deadline"
        );
    }
}
