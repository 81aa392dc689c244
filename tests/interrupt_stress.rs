//! Interrupts at scale: 96 threads share eight monitors, two of each kind
//! (embedded word, `Synchronized`, `ReentrantSynchronized`, and keyed on two
//! bytes of one 8-byte granule, so of one home: either byte takes an
//! overflow entry while the other holds the home). They wait on a monitor's own wait set or on a
//! `Condition` of its own, plainly or interruptibly, timed or not, while
//! another thread interrupts them at random. Checks, wait set by wait set:
//! - the waiters the notifies reached equal the waits that returned
//!   notified: an interrupt never takes a notify away (metalock's rule,
//!   stricter than Java's: a waiter a notify reached returns notified, the
//!   interrupt left pending; one that reports an interrupt had left the
//!   wait set before any notify could reach it) and never passes for one;
//! - the waits that reported an interrupt, and the interrupts still pending
//!   when a thread ends, are at most the interrupts sent;
//! - counters updated under each monitor lose no update, and every wait
//!   restores the depth;
//! - every thread finishes before the watchdog: an untimed interruptible
//!   wait ends by a notify, or by an interrupt, which keeps coming until
//!   every thread is done.
//!
//! `interrupt_churn.rs` runs the same operations with threads exiting and
//! replaced (the code both share is in `interrupt_stress/shared.rs`).

mod common;
#[path = "interrupt_stress/shared.rs"]
mod shared;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::thread;

use common::Watchdog;
use shared::{HANG, Shared, Tally, check, interrupter, worker};

const THREADS: usize = 96;
const OPS_PER_THREAD: usize = 8_000;

#[test]
fn interrupts_and_notifies_at_scale() {
    let _watchdog = Watchdog::arm(HANG);
    let shared = Arc::new(Shared::new());
    let done = AtomicBool::new(false);
    let (tallies, sent) = thread::scope(|s| {
        let interrupter = s.spawn(|| interrupter(&shared, &done));
        let workers: Vec<_> = (0..THREADS as u64)
            .map(|t| {
                let shared = &shared;
                s.spawn(move || worker(shared, 1 + t, OPS_PER_THREAD))
            })
            .collect();
        // Every worker joined before the interrupter stops, also if one
        // failed (its panic is raised after).
        let joined: Vec<_> = workers.into_iter().map(|w| w.join()).collect();
        done.store(true, Relaxed);
        let tallies: Vec<Tally> = joined.into_iter().map(Result::unwrap).collect();
        (tallies, interrupter.join().unwrap())
    });
    let total = check(&shared, &tallies, &sent);
    let pending = tallies.iter().filter(|t| t.pending_at_end).count();
    println!(
        "{THREADS} threads x {OPS_PER_THREAD} ops: {} notified returns ({} interruptible), \
         {} interrupts reported ({} by enters), {pending} pending at the end, {} sent, \
         at most {} keyed monitors in use",
        total.notified.iter().sum::<u64>(),
        total.notified_interruptibly,
        total.interrupted,
        total.enters_interrupted,
        sent.total(),
        sent.keyed
    );
}
