//! A global allocator that locks a monitor (but not for the allocations of
//! that lock itself), in a build without `std`: a thread's first lock
//! allocates its execution environment, and the allocator's lock inside
//! that allocation binds one first. The outer bind then finds the thread
//! bound, gives its own environment back, and the thread goes on with one;
//! the same after `release_current_thread`, whose later binds are detached.
//!
//! One test: the allocator is process-wide.

use std::sync::atomic::Ordering::SeqCst;

use metalock::MultiUseWord;
use metalock::platform::release_current_thread;
use metalock_no_std_platform::{ALLOCATOR_LOCKS, LockingAllocator, arm_locking_allocator, install};

#[global_allocator]
static ALLOCATOR: LockingAllocator = LockingAllocator;

#[test]
fn a_bind_inside_the_first_bind_leaves_the_thread_one_environment() {
    install();
    let (outer, inner) = (MultiUseWord::new(), MultiUseWord::new());
    std::thread::scope(|s| {
        s.spawn(|| {
            for round in 0..2 {
                arm_locking_allocator(true);
                let locks = ALLOCATOR_LOCKS.load(SeqCst);
                // Nested, so that the thread takes records beyond its first.
                let first = outer.lock();
                let second = inner.lock();
                arm_locking_allocator(false);
                assert!(
                    outer.is_held_by_current_thread() && inner.is_held_by_current_thread(),
                    "round {round}"
                );
                assert_eq!(second.depth(), 1);
                drop(second);
                drop(first);
                assert!(!outer.is_locked() && !inner.is_locked(), "round {round}");
                if round == 0 {
                    assert!(
                        ALLOCATOR_LOCKS.load(SeqCst) > locks,
                        "the allocator locked inside the first bind"
                    );
                }
                // Later binds are detached, and given back once idle.
                release_current_thread();
            }
        });
    });
}
