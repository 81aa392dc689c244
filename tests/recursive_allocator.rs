//! A global allocator that locks a monitor on every allocation, its own
//! lock's included, asks the crate for an allocation inside each one it
//! makes: without end, a stack overflow or a batch size that overflows (a
//! panic inside the allocator). The crate stops the process instead, with
//! a message naming the rule: such an allocator must not lock again while it
//! runs for its own lock. (One that keeps that rule is
//! `tests/allocator_locks.rs`.) Each test runs in a child process
//! (`tests/common/child.rs`); the allocator locks only in the child, once
//! armed.
// Under a model checker (`--cfg loom`, feature `shuttle`) the crate's
// constructors are not `const` and its primitives run only inside a model.
#![cfg(not(any(loom, feature = "shuttle")))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::thread;

use metalock::MultiUseWord;

#[path = "common/child.rs"]
mod child;
use child::{child_aborts_saying, is_child};

/// Locks `LOCKED_BY_ALLOCATOR` on every allocation once `ARMED`, with no
/// guard against the allocations of that lock itself.
struct RecursiveAllocator;

static LOCKED_BY_ALLOCATOR: MultiUseWord = MultiUseWord::new();
static ARMED: AtomicBool = AtomicBool::new(false);

// SAFETY: every call goes on to `System` with the same arguments.
unsafe impl GlobalAlloc for RecursiveAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ARMED.load(SeqCst) {
            drop(LOCKED_BY_ALLOCATOR.lock());
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
static ALLOCATOR: RecursiveAllocator = RecursiveAllocator;

const RULE: &str = "must not lock them again while it runs for its own lock";

/// A thread's first nested lock refills its free list of lock records.
#[test]
fn lock_records_for_the_allocators_own_lock() {
    if !is_child() {
        let stderr = child_aborts_saying("lock_records_for_the_allocators_own_lock", RULE);
        assert!(stderr.contains("lock records"), "{stderr}");
        return;
    }
    let (outer, inner) = (MultiUseWord::new(), MultiUseWord::new());
    // Bound, with its first records, while the allocator is idle.
    drop(outer.lock());
    ARMED.store(true, SeqCst);
    let _outer = outer.lock();
    let _inner = inner.lock();
    eprintln!("the nested lock returned");
}

/// A new thread's first lock binds an execution environment, allocating
/// one when the pool has none to give.
#[test]
fn an_environment_for_the_allocators_own_lock() {
    if !is_child() {
        let stderr = child_aborts_saying("an_environment_for_the_allocators_own_lock", RULE);
        assert!(stderr.contains("execution environment"), "{stderr}");
        return;
    }
    // The spawn allocates before the thread runs: armed inside it, so the
    // thread's first lock is the first thing it does through the crate.
    let word = MultiUseWord::new();
    thread::scope(|s| {
        s.spawn(|| {
            ARMED.store(true, SeqCst);
            drop(word.lock());
        });
    });
    eprintln!("the first lock returned");
}
