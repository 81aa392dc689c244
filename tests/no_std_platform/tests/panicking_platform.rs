//! A platform callback that panics in the middle of the protocol (here the
//! clock, read while a timed wait blocks) aborts the process with a message
//! instead of unwinding through it. Checked in a child process.

use metalock::MultiUseWord;
use metalock_no_std_platform::{PANIC_IN_NOW, aborts_in_child, in_the_future, install};
use std::sync::atomic::Ordering;
use std::time::Duration;

#[test]
fn a_panicking_clock_aborts_with_a_message() {
    if !aborts_in_child(
        "a_panicking_clock_aborts_with_a_message",
        "metalock: a panic unwound in the middle of the locking protocol",
    ) {
        return;
    }
    install();
    let word = MultiUseWord::new();
    let mut guard = word.lock();
    let deadline = in_the_future(Duration::from_millis(20));
    PANIC_IN_NOW.store(true, Ordering::Relaxed);
    // The parker reads the clock once the platform's wait returns.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        guard.wait_until(deadline);
    }));
    eprintln!("UNREACHABLE: the clock's panic unwound through the wait");
}
