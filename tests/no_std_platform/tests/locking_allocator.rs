//! A global allocator that locks a monitor, in a build without `std`: the
//! platform's registration must not allocate, since the allocator's lock
//! needs the platform that is being registered (it allocated once, and the
//! lock inside that allocation panicked with "no platform registered").
//!
//! One test: the allocator is process-wide.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use metalock::MultiUseWord;

/// Locks `WORD` on every allocation of a thread that set `ARMED`, except
/// the allocations of that lock itself.
struct LockingAllocator;

static WORD: MultiUseWord = MultiUseWord::new();
static LOCKS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    // Const, without destructors: usable from the allocator.
    static ARMED: Cell<bool> = const { Cell::new(false) };
    static IN_HOOK: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: every request goes to `System`; the hook only locks and unlocks
// a monitor around it.
unsafe impl GlobalAlloc for LockingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ARMED.with(Cell::get) && !IN_HOOK.with(|h| h.replace(true)) {
            drop(WORD.lock());
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
fn registration_does_not_allocate_under_an_allocator_that_locks() {
    ARMED.with(|a| a.set(true));
    let registered = metalock_no_std_platform::register();
    let boxed = Box::new(7_u64);
    ARMED.with(|a| a.set(false));
    assert_eq!(registered, Ok(()), "this test registers the platform first");
    assert_eq!(*boxed, 7);
    assert!(
        LOCKS.load(SeqCst) >= 1,
        "the allocator locked after registration"
    );
}
