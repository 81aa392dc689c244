//! A platform callback that uses the crate stops the process with a
//! message: one that notifies while the crate holds the wait-table stripe
//! of the same condition (here `wake`, run as a notify without the monitor
//! hands the monitor to the waiter) used to wait for itself on the stripe's
//! lock, silently; a clock that locks a monitor, read while its thread
//! waits, used to lock with the waiter's own record and parker (in
//! contended runs, assertions, hangs or a crash). Each is checked in a
//! child process, which must abort within a deadline.

use metalock::{Condition, MultiUseWord};
use metalock_no_std_platform::{ON_NOW, ON_WAKE, WAITS, aborts_in_child, install};
use std::sync::atomic::Ordering;
use std::time::Duration;

static WORD: MultiUseWord = MultiUseWord::new();
static READY: Condition = Condition::new();
static TICKS: MultiUseWord = MultiUseWord::new();

#[test]
fn a_callback_that_notifies_under_the_stripe_aborts_with_a_message() {
    if !aborts_in_child(
        "a_callback_that_notifies_under_the_stripe_aborts_with_a_message",
        "metalock: a platform callback called a metalock function",
    ) {
        return;
    }
    install();
    let waits = WAITS.load(Ordering::SeqCst);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut guard = WORD.lock();
            READY.wait(&mut guard);
        });
        // The waiter alone counts platform waits here: once it has, it is
        // parked, so the notify's hand-over wakes it through the platform.
        while WAITS.load(Ordering::SeqCst) == waits {
            std::thread::yield_now();
        }
        *ON_WAKE.lock().unwrap() = Some(|| {
            READY.notify_one();
        });
        READY.notify_one();
        eprintln!("UNREACHABLE: the callback's notify returned");
        std::process::exit(0);
    });
}

#[test]
fn a_clock_that_locks_a_monitor_aborts_with_a_message() {
    if !aborts_in_child(
        "a_clock_that_locks_a_monitor_aborts_with_a_message",
        "metalock: a platform callback called a metalock function",
    ) {
        return;
    }
    install();
    /// The clock's lock, once the wait has released `WORD` (its record in
    /// the wait set, spinning or about to park); before that (the wait's
    /// deadline is read first), it waits for the next read. Uncontended:
    /// the lock itself would pass, only the rule stops it.
    fn lock_ticks_in_the_wait() {
        if WORD.is_locked() {
            *ON_NOW.lock().unwrap() = Some(lock_ticks_in_the_wait);
            return;
        }
        drop(TICKS.lock());
    }
    let mut guard = WORD.lock();
    *ON_NOW.lock().unwrap() = Some(lock_ticks_in_the_wait);
    let _ = guard.wait_for(Duration::from_millis(50));
    eprintln!("UNREACHABLE: the clock's lock returned");
    std::process::exit(0);
}
