//! A wait whose deadline has already passed returns without the spin a
//! waiter runs before it parks: it asks the platform for no yield. One
//! test in this binary: the platform's counts are process-wide.

use metalock::{Condition, MultiUseWord};
use metalock_no_std_platform::{YIELDS, install};
use std::sync::atomic::Ordering;
use std::time::Duration;

#[test]
fn a_wait_out_of_time_returns_without_yielding() {
    install();
    let word = MultiUseWord::new();
    let condition = Condition::new();
    let mut guard = word.lock();
    let yields = YIELDS.load(Ordering::SeqCst);
    assert!(guard.wait_for(Duration::ZERO).timed_out());
    let past = metalock::Instant::now();
    assert!(guard.wait_until(past).timed_out());
    assert!(condition.wait_for(&mut guard, Duration::ZERO).timed_out());
    assert!(condition.wait_until(&mut guard, past).timed_out());
    assert_eq!(
        YIELDS.load(Ordering::SeqCst) - yields,
        0,
        "a wait out of time yielded before it gave up"
    );
    assert_eq!(guard.depth(), 1);
}
