//! A global allocator that locks a monitor (but not for the allocations of
//! that lock itself), in a build without `std`: a thread's first lock
//! allocates its execution environment, and the allocator's lock inside
//! that allocation binds one first. The outer bind then finds the thread
//! bound, gives its own environment back, and the thread goes on with one;
//! the same after `release_current_thread`, whose later binds are detached.
//!
//! One test: the allocator is process-wide.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use metalock::MultiUseWord;
use metalock::platform::release_current_thread;
use metalock_no_std_platform::install;

/// Locks `LOCKED_BY_ALLOCATOR` on every allocation of a thread that set
/// `ARMED`, except the allocations of that lock itself.
struct LockingAllocator;

static LOCKED_BY_ALLOCATOR: MultiUseWord = MultiUseWord::new();
static LOCKS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    // Const, without destructors: usable from the allocator.
    static ARMED: Cell<bool> = const { Cell::new(false) };
    static IN_HOOK: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: every request goes to `System`; the hook only locks and unlocks
// a monitor before it.
unsafe impl GlobalAlloc for LockingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ARMED.with(Cell::get) && !IN_HOOK.with(|h| h.replace(true)) {
            drop(LOCKED_BY_ALLOCATOR.lock());
            LOCKS.fetch_add(1, SeqCst);
            IN_HOOK.with(|h| h.set(false));
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: LockingAllocator = LockingAllocator;

#[test]
fn a_bind_inside_the_first_bind_leaves_the_thread_one_environment() {
    install();
    let (outer, inner) = (MultiUseWord::new(), MultiUseWord::new());
    std::thread::scope(|s| {
        s.spawn(|| {
            for round in 0..2 {
                ARMED.with(|a| a.set(true));
                let locks = LOCKS.load(SeqCst);
                // Nested, so that the thread takes records beyond its first.
                let first = outer.lock();
                let second = inner.lock();
                ARMED.with(|a| a.set(false));
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
                        LOCKS.load(SeqCst) > locks,
                        "the allocator locked inside the first bind"
                    );
                }
                // Later binds are detached, and given back once idle.
                release_current_thread();
            }
        });
    });
}
