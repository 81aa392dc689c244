//! A platform callback that notifies while the crate holds the wait-table
//! stripe of the same condition (here `wake`, run as a notify without the
//! monitor hands the monitor to the waiter) stops the process with a
//! message; it used to wait for itself on the stripe's lock, silently.
//! Checked in a child process, which must abort within a deadline.

use metalock::{Condition, MultiUseWord};
use metalock_no_std_platform::{ON_WAKE, aborts_in_child, install};
use std::time::Duration;

static WORD: MultiUseWord = MultiUseWord::new();
static READY: Condition = Condition::new();

#[test]
fn a_callback_that_notifies_under_the_stripe_aborts_with_a_message() {
    if !aborts_in_child(
        "a_callback_that_notifies_under_the_stripe_aborts_with_a_message",
        "metalock: a thread asked for a wait-table stripe while it holds one",
    ) {
        return;
    }
    install();
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut guard = WORD.lock();
            READY.wait(&mut guard);
        });
        // Parked by now (a waiter spins for microseconds), so the notify's
        // hand-over wakes it through the platform.
        std::thread::sleep(Duration::from_millis(200));
        *ON_WAKE.lock().unwrap() = Some(|| {
            READY.notify_one();
        });
        READY.notify_one();
        eprintln!("UNREACHABLE: the callback's notify returned");
        std::process::exit(0);
    });
}
