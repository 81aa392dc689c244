//! Monitors driven by bytecode, whose enters and exits are not scoped: a
//! toy interpreter runs `monitorenter` / `monitorexit` / `wait` /
//! `notifyAll` on objects that embed a `MultiUseWord`, as a JVM's
//! interpreter would. An enter forgets its guard; an exit gives the level
//! back with `force_unlock`; a wait gets a guard for the held levels with
//! `make_guard_unchecked` and forgets it again. An exit by a thread that
//! does not hold the monitor is refused, as Java's
//! `IllegalMonitorStateException`.
//!
//! Run with `cargo run --release --example interpreter`; it checks what it
//! prints.

use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::thread;

use metalock::MultiUseWord;

/// A heap object: a monitor word and one field.
#[derive(Default)]
struct Object {
    word: MultiUseWord,
    field: AtomicU64,
}

/// The bytecodes, each naming an object by its index in the heap.
#[derive(Clone, Copy, Debug)]
enum Op {
    MonitorEnter(usize),
    MonitorExit(usize),
    /// `field += 1`, as a load and a store: lost updates would show.
    Increment(usize),
    /// `while (field < n) wait();`
    WaitUntilAtLeast(usize, u64),
    NotifyAll(usize),
}

/// Runs `code` on `heap`. Every `MonitorEnter` must be matched by a
/// `MonitorExit` of the same object on this thread (what a bytecode
/// verifier would check); waits and notifies run while it is held.
fn interpret(heap: &[Object], code: &[Op]) {
    for &op in code {
        match op {
            Op::MonitorEnter(object) => mem::forget(heap[object].word.lock()),
            // SAFETY: the levels this thread holds were entered by
            // `MonitorEnter`, whose guards are forgotten; a thread that holds
            // none panics before anything changes.
            Op::MonitorExit(object) => unsafe { heap[object].word.force_unlock() },
            Op::Increment(object) => {
                let field = &heap[object].field;
                field.store(field.load(Relaxed) + 1, Relaxed);
            }
            Op::WaitUntilAtLeast(object, n) => {
                // SAFETY: as for `MonitorExit`; the guard is forgotten again
                // below, so the level stays the bytecode's.
                let mut guard = unsafe { heap[object].word.make_guard_unchecked() };
                guard.wait_while(|| heap[object].field.load(Relaxed) < n);
                mem::forget(guard);
            }
            Op::NotifyAll(object) => {
                // SAFETY: as for `WaitUntilAtLeast`.
                let guard = unsafe { heap[object].word.make_guard_unchecked() };
                guard.notify_all();
                mem::forget(guard);
            }
        }
    }
}

fn main() {
    const THREADS: u64 = 4;
    const ROUNDS: usize = 10_000;
    let heap: Vec<Object> = (0..2).map(|_| Object::default()).collect();
    // Each round enters object 0 twice (a synchronized method calling
    // another), bumps its field, and exits both levels.
    let round = [
        Op::MonitorEnter(0),
        Op::MonitorEnter(0),
        Op::Increment(0),
        Op::MonitorExit(0),
        Op::MonitorExit(0),
    ];
    let worker: Vec<Op> = round
        .iter()
        .cycle()
        .take(round.len() * ROUNDS)
        .copied()
        .chain([
            // Then each worker checks in on object 1 and notifies.
            Op::MonitorEnter(1),
            Op::Increment(1),
            Op::NotifyAll(1),
            Op::MonitorExit(1),
        ])
        .collect();
    let waiter = [
        Op::MonitorEnter(1),
        Op::WaitUntilAtLeast(1, THREADS),
        Op::MonitorExit(1),
    ];
    thread::scope(|s| {
        s.spawn(|| interpret(&heap, &waiter));
        for _ in 0..THREADS {
            s.spawn(|| interpret(&heap, &worker));
        }
    });
    let total = heap[0].field.load(Relaxed);
    assert_eq!(total, THREADS * ROUNDS as u64, "lost updates");
    assert_eq!(heap[1].field.load(Relaxed), THREADS);
    assert!(heap.iter().all(|object| !object.word.is_locked()));

    // A `monitorexit` of an object this thread does not hold.
    panic::set_hook(Box::new(|_| {}));
    let refused = panic::catch_unwind(AssertUnwindSafe(|| {
        interpret(&heap, &[Op::MonitorExit(0)]);
    }));
    let _ = panic::take_hook();
    let message = refused.expect_err("an unbalanced exit is refused");
    let message = message
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| message.downcast_ref::<&str>().copied())
        .unwrap_or_default();
    assert!(
        message.contains("IllegalMonitorStateException"),
        "{message}"
    );
    println!(
        "{THREADS} threads x {ROUNDS} rounds of enter, enter, increment, exit, exit: {total}; \
         the waiter saw all {THREADS} check-ins; an unbalanced monitorexit was refused"
    );
}
