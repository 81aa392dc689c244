//! A global allocator that locks a monitor on every allocation, its own
//! lock's included, in a build without `std`: a thread's first lock binds
//! an execution environment, whose allocation locks, which binds one... The
//! crate stops the process with a message naming the rule instead of
//! recursing until the stack overflows (which a microcontroller may not
//! even detect). Checked in a child process, which must abort within a
//! deadline.
//!
//! Here the allocator stops locking two allocations deep, where a real one
//! would go on: the crate's stop comes at its third nested bind, and the
//! panic that carries the message then allocates (under std's runtime; a
//! `no_std` panic handler need not), which must not lock again, or the
//! crate's second stop would only spin.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};

use metalock::MultiUseWord;
use metalock_no_std_platform::{aborts_in_child, install};

/// Locks `WORD` on every allocation once `ARMED`, those of that lock itself
/// included, up to two allocations deep.
struct RecursiveAllocator;

static WORD: MultiUseWord = MultiUseWord::new();
static ARMED: AtomicBool = AtomicBool::new(false);

thread_local! {
    // Const, without destructors: usable from the allocator.
    static DEPTH: Cell<u8> = const { Cell::new(0) };
}

// SAFETY: every request goes to `System`; the hook only locks and unlocks
// a monitor before it.
unsafe impl GlobalAlloc for RecursiveAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let depth = DEPTH.with(Cell::get);
        if ARMED.load(SeqCst) && depth < 2 {
            DEPTH.with(|d| d.set(depth + 1));
            drop(WORD.lock());
            DEPTH.with(|d| d.set(depth));
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

#[test]
fn an_allocator_that_locks_for_its_own_lock_aborts_with_a_message() {
    if !aborts_in_child(
        "an_allocator_that_locks_for_its_own_lock_aborts_with_a_message",
        "must not lock them again while it runs for its own lock",
    ) {
        return;
    }
    install();
    // The spawn allocates before the thread runs: armed inside it, so that
    // its first lock is the first thing it does through the crate.
    std::thread::scope(|s| {
        s.spawn(|| {
            ARMED.store(true, SeqCst);
            drop(WORD.lock());
        });
    });
    eprintln!("UNREACHABLE: the first lock returned");
}
