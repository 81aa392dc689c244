//! A thread's first block allocates nothing once the thread has used a
//! monitor. Off 64-bit Linux (and under `--cfg metalock_portable_parker`)
//! threads block through `parking_lot_core`, which sets up a thread's
//! parking data, and makes or grows its table of threads, on the thread's
//! first park. That park can come under a meta-lock (a keyed home's, on a
//! contended shard lock), where a global allocator that locks monitors
//! would need a second meta-lock and stop the process. So the crate makes
//! the set-up when it binds the thread's execution environment, before any
//! lock. The futex platform has nothing to set up.
//!
//! One test: the allocator and `parking_lot_core`'s table are process-wide,
//! and the table must not exist before the test's threads start.
// Under a model checker (`--cfg loom`, feature `shuttle`) the crate's
// primitives run only inside a model.
#![cfg(not(any(loom, feature = "shuttle")))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::{Barrier, Mutex};
use std::thread;
use std::time::Duration;

use metalock::MultiUseWord;

/// Counts the calling thread's allocations while it sets `COUNTING`.
struct CountingAllocator;

thread_local! {
    // Const, without destructors: usable from inside the allocator.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static COUNTED: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every request goes to `System` unchanged; the count only reads
// and writes the calling thread's cells.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            COUNTED.with(|c| c.set(c.get() + 1));
        }
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Enough threads alive at once to grow `parking_lot_core`'s table of
/// threads several times over.
const THREADS: usize = 24;

#[test]
fn a_threads_first_park_allocates_nothing() {
    static WORDS: [MultiUseWord; THREADS] = [const { MultiUseWord::new() }; THREADS];
    let all_bound = Barrier::new(THREADS);
    // One bind at a time: a bind that met another on the pools' lock would
    // park there, uncounted, and set the thread up before the counted park.
    let one_bind = Mutex::new(());
    let counts: Vec<usize> = thread::scope(|s| {
        let threads: Vec<_> = WORDS
            .iter()
            .map(|word| {
                let (all_bound, one_bind) = (&all_bound, &one_bind);
                s.spawn(move || {
                    let mut guard = {
                        let _one = one_bind.lock().unwrap();
                        word.lock()
                    };
                    // Every thread has bound its environment, and none has
                    // blocked yet.
                    all_bound.wait();
                    COUNTING.with(|c| c.set(true));
                    // Nobody notifies: the wait blocks until its time runs
                    // out, the thread's first park.
                    let timed_out = guard.wait_for(Duration::from_millis(5)).timed_out();
                    COUNTING.with(|c| c.set(false));
                    assert!(timed_out, "nobody notifies the word");
                    COUNTED.with(Cell::get)
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert!(
        counts.iter().all(|&count| count == 0),
        "a thread's first park allocated (allocations per thread: {counts:?})"
    );
}
