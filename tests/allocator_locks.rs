//! A global allocator that locks monitors. The crate allocates lock records
//! on a thread's first nested lock, so such an allocator runs a lock and an
//! unlock in the middle of another lock, on the same execution environment.
//! In a thread-local destructor that runs after the crate's exit cleanup the
//! environment is detached: bound only while the thread holds a record. The
//! nested unlock must not take the environment for idle and give it back to
//! the pool while the outer lock still uses it (another thread could then
//! bind it too). And a thread's first lock, which takes an environment
//! (allocating one when the pool is empty), must not leak the environment
//! that the allocator's lock binds for the thread meanwhile.
//!
//! One test: the allocator is process-wide.
// Under a model checker (`--cfg loom`, feature `shuttle`) the crate's
// constructors are not `const` and its primitives run only inside a model.
#![cfg(not(any(loom, feature = "shuttle")))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::thread;

use metalock::__test_hooks::{exec_envs_allocated, thread_has_exec_env};
use metalock::MultiUseWord;

/// Locks `LOCKED_BY_ALLOCATOR` on every allocation of a thread in its late
/// destructor (`IN_LATE`) or in its first lock (`IN_FIRST`), except the
/// allocations of that lock itself.
struct LockingAllocator;

static LOCKED_BY_ALLOCATOR: MultiUseWord = MultiUseWord::new();
static OUTER: MultiUseWord = MultiUseWord::new();
/// Locks the allocator ran in the late destructors.
static NESTED_LOCKS: AtomicUsize = AtomicUsize::new(0);
/// Late destructors whose lock returned without an environment bound.
static LOST_ENVIRONMENT: AtomicUsize = AtomicUsize::new(0);
static LATE_RAN: AtomicUsize = AtomicUsize::new(0);
static ARMED: AtomicBool = AtomicBool::new(false);

thread_local! {
    // Const, without destructors: usable from any destructor.
    static IN_LATE: Cell<bool> = const { Cell::new(false) };
    static IN_FIRST: Cell<bool> = const { Cell::new(false) };
    static IN_HOOK: Cell<bool> = const { Cell::new(false) };
    static LATE: Late = const { Late };
}

// SAFETY: forwards to `System`; the hook only locks and unlocks a monitor.
unsafe impl GlobalAlloc for LockingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let hooked = IN_LATE.with(Cell::get) || IN_FIRST.with(Cell::get);
        if ARMED.load(SeqCst) && hooked && !IN_HOOK.with(|h| h.replace(true)) {
            drop(LOCKED_BY_ALLOCATOR.lock());
            NESTED_LOCKS.fetch_add(1, SeqCst);
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

/// Registered before the crate's exit cleanup, so destroyed after it.
struct Late;

impl Drop for Late {
    fn drop(&mut self) {
        IN_LATE.with(|l| l.set(true));
        let guard = OUTER.lock();
        if !thread_has_exec_env() {
            LOST_ENVIRONMENT.fetch_add(1, SeqCst);
        }
        drop(guard);
        IN_LATE.with(|l| l.set(false));
        LATE_RAN.fetch_add(1, SeqCst);
    }
}

#[test]
fn a_lock_inside_an_allocation_of_a_lock_keeps_the_environment() {
    const THREADS: usize = 50;
    ARMED.store(true, SeqCst);

    // The process's first lock: no environment in the pool, so taking one
    // allocates, and the allocator's lock binds one for the thread first.
    // Both must come back: two threads alive at once then take both from
    // the pool and allocate none.
    let before = exec_envs_allocated();
    thread::spawn(|| {
        IN_FIRST.with(|f| f.set(true));
        drop(MultiUseWord::new().lock());
        IN_FIRST.with(|f| f.set(false));
    })
    .join()
    .unwrap();
    assert!(
        NESTED_LOCKS.load(SeqCst) > 0,
        "the allocator never ran inside a first lock"
    );
    let both_bound = Barrier::new(2);
    thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                drop(MultiUseWord::new().lock());
                both_bound.wait();
            });
        }
    });
    assert_eq!(
        exec_envs_allocated() - before,
        2,
        "an environment taken during a first lock was leaked"
    );

    for _ in 0..THREADS {
        thread::spawn(|| {
            LATE.with(|_| ());
            // Binds the environment and registers the exit cleanup, after
            // `LATE`.
            drop(MultiUseWord::new().lock());
        })
        .join()
        .unwrap();
    }
    ARMED.store(false, SeqCst);
    assert_eq!(LATE_RAN.load(SeqCst), THREADS);
    assert!(
        NESTED_LOCKS.load(SeqCst) > 0,
        "the allocator never ran inside a late lock"
    );
    assert_eq!(
        LOST_ENVIRONMENT.load(SeqCst),
        0,
        "a nested unlock gave the environment back under the outer lock"
    );
    assert!(!OUTER.is_locked() && !LOCKED_BY_ALLOCATOR.is_locked());
}
