//! A global allocator that locks a monitor on every allocation, its own
//! lock's included, asks the crate for an allocation inside each one it
//! makes: without end, a stack overflow or a batch size that overflows (a
//! panic inside the allocator). The crate stops the process instead, with
//! a message naming the rule: such an allocator must not lock again while it
//! runs for its own lock. (One that keeps that rule is
//! `tests/allocator_locks.rs`.) Each test runs in a child process
//! (`tests/common/child.rs`), where the allocator locks only on the thread
//! that armed it.
// Under a model checker (`--cfg loom`, feature `shuttle`) the crate's
// constructors are not `const` and its primitives run only inside a model.
#![cfg(not(any(loom, feature = "shuttle")))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::thread;

use metalock::MultiUseWord;

#[path = "common/child.rs"]
mod child;
use child::{child_aborts_saying, is_child};

/// What the allocator locks on every allocation of a thread, with no guard
/// against the allocations of that lock itself.
#[derive(Clone, Copy)]
enum Hook {
    Nothing,
    /// `LOCKED_BY_ALLOCATOR`.
    Word,
    /// The keyed monitor of `GRANULE.0[1]`.
    Keyed,
}

struct RecursiveAllocator;

static LOCKED_BY_ALLOCATOR: MultiUseWord = MultiUseWord::new();

/// Eight addresses of one home: while one is held, the others' monitors go
/// to the keyed overflow table.
#[repr(align(8))]
struct Granule([u8; 8]);
static GRANULE: Granule = Granule([0; 8]);

thread_local! {
    // Const, without destructors: usable from the allocator.
    static HOOK: Cell<Hook> = const { Cell::new(Hook::Nothing) };
}

// SAFETY: every call goes on to `System` with the same arguments.
unsafe impl GlobalAlloc for RecursiveAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match HOOK.with(Cell::get) {
            Hook::Nothing => {}
            Hook::Word => drop(LOCKED_BY_ALLOCATOR.lock()),
            Hook::Keyed => drop(metalock::lock(&GRANULE.0[1])),
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
    HOOK.with(|hook| hook.set(Hook::Word));
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
    // Armed inside the thread, whose first lock is the first thing it does
    // through the crate.
    let word = MultiUseWord::new();
    thread::scope(|s| {
        s.spawn(|| {
            HOOK.with(|hook| hook.set(Hook::Word));
            drop(word.lock());
        });
    });
    eprintln!("the first lock returned");
}

/// A keyed lock of an address whose home serves another makes room in the
/// overflow table, allocating.
#[test]
fn keyed_overflow_room_for_the_allocators_own_lock() {
    if !is_child() {
        let stderr = child_aborts_saying("keyed_overflow_room_for_the_allocators_own_lock", RULE);
        assert!(stderr.contains("keyed overflow table"), "{stderr}");
        return;
    }
    // Records enough for the locks below, taken while the allocator is idle.
    let words: Vec<MultiUseWord> = (0..4).map(|_| MultiUseWord::new()).collect();
    drop(words.iter().map(MultiUseWord::lock).collect::<Vec<_>>());
    let _home = metalock::lock(&GRANULE.0[0]);
    HOOK.with(|hook| hook.set(Hook::Keyed));
    let _overflow = metalock::lock(&GRANULE.0[2]);
    eprintln!("the keyed lock returned");
}
