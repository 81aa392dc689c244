//! Knowing that a thread sleeps in a monitor's queue, not merely that it is
//! about to queue: a test that checks what a release does to a queued thread
//! (a fair hand-over, a bump, a timed enter giving up from the queue) waits
//! for this first. Linux only: the kernel's view of the thread, in `/proc`.
//! No verdict depends on how long anything takes; the polling only decides
//! when to look.

// Each test file that includes this module uses part of it.
#![allow(dead_code)]

use std::sync::atomic::{AtomicI32, Ordering::SeqCst};
use std::thread;
use std::time::Duration;

/// The kernel id of a thread, published by the thread itself.
#[derive(Default)]
pub struct Tid(AtomicI32);

impl Tid {
    /// Publishes the calling thread's id.
    pub fn publish(&self) {
        // SAFETY: `gettid` has no preconditions and cannot fail.
        self.0.store(unsafe { libc::gettid() }, SeqCst);
    }

    /// Waits until the thread has published its id, then until it has slept
    /// (state `S`) at 20 checks in a row, 1 ms apart: parked, not yielding
    /// between spins.
    pub fn wait_until_blocked(&self) {
        let tid = self.get();
        let mut asleep = 0;
        while asleep < 20 {
            thread::sleep(Duration::from_millis(1));
            asleep = if is_blocked(tid) { asleep + 1 } else { 0 };
        }
    }

    /// The id, once published.
    pub fn get(&self) -> i32 {
        loop {
            match self.0.load(SeqCst) {
                0 => thread::yield_now(),
                tid => return tid,
            }
        }
    }
}

/// Whether the thread `tid` of this process sleeps (state `S`).
pub fn is_blocked(tid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat"))
        .expect("cannot read /proc/self/task/<tid>/stat");
    // The state follows the `)` that closes the command name.
    let rest = &stat[stat.rfind(')').expect("malformed stat") + 1..];
    rest.trim_start().starts_with('S')
}

/// How many times the thread `tid` of this process has left the CPU, of
/// its own accord or not: a thread that sleeps in one blocking call adds
/// none, one that polls with sleeps or yields adds one per poll.
pub fn context_switches(tid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status"))
        .expect("cannot read /proc/self/task/<tid>/status");
    ["voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"]
        .iter()
        .map(|field| {
            let line = status
                .lines()
                .find(|line| line.starts_with(field))
                .expect("no context switch count in status");
            line[field.len()..]
                .trim()
                .parse::<u64>()
                .expect("malformed count")
        })
        .sum()
}
