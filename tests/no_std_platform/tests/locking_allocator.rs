//! A global allocator that locks a monitor, in a build without `std`: the
//! platform's registration must not allocate, since the allocator's lock
//! needs the platform that is being registered (it allocated once, and the
//! lock inside that allocation panicked with "no platform registered").
//!
//! One test: the allocator is process-wide.

use std::sync::atomic::Ordering::SeqCst;

use metalock_no_std_platform::{ALLOCATOR_LOCKS, LockingAllocator, arm_locking_allocator};

#[global_allocator]
static ALLOCATOR: LockingAllocator = LockingAllocator;

#[test]
fn registration_does_not_allocate_under_an_allocator_that_locks() {
    arm_locking_allocator(true);
    let registered = metalock_no_std_platform::register();
    let boxed = Box::new(7_u64);
    arm_locking_allocator(false);
    assert_eq!(registered, Ok(()), "this test registers the platform first");
    assert_eq!(*boxed, 7);
    assert!(
        ALLOCATOR_LOCKS.load(SeqCst) >= 1,
        "the allocator locked after registration"
    );
}
