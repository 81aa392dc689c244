//! Knowing that a thread sleeps in a monitor's queue, not merely that it is
//! about to queue: a test that checks what a release does to a queued thread
//! (a fair hand-over, a bump, a timed enter giving up from the queue) waits
//! for this first. Linux only: the kernel's view of the thread, in `/proc`.

// Each test file that includes this module uses part of it.
#![allow(dead_code)]

use std::sync::atomic::{AtomicI32, Ordering::SeqCst};
use std::thread;
use std::time::Duration;

/// The kernel id of a thread, published by the thread itself.
#[derive(Default)]
pub struct Tid(AtomicI32);

impl Tid {
    /// Publishes the calling thread's id, once its execution environment is
    /// bound (by a lock of a word of its own), so that binding one, which
    /// may wait for a lock of the crate's, is not taken for queueing.
    pub fn publish(&self) {
        drop(metalock::MultiUseWord::new().lock());
        // SAFETY: `gettid` has no preconditions and cannot fail.
        self.0.store(unsafe { libc::gettid() }, SeqCst);
    }

    /// Waits until the thread has published its id, then until it has slept
    /// (state `S`) at 20 checks in a row, 1 ms apart: parked, not yielding
    /// between spins. False if the thread ended first.
    #[must_use]
    pub fn wait_until_blocked(&self) -> bool {
        let tid = self.get();
        let mut asleep = 0;
        while asleep < 20 {
            thread::sleep(Duration::from_millis(1));
            asleep = match state(tid) {
                Some('S') => asleep + 1,
                Some('R' | 'D') => 0,
                _ => return false,
            };
        }
        true
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

/// Runs `release` while another thread sleeps in a monitor's queue. That
/// thread runs `queued`, which enters the monitor (held by the caller) and
/// then calls the `hold` it is given, which returns once `release` has
/// called its `let_go`. The thread is joined before `release`'s result is
/// returned.
pub fn with_a_thread_queued<R>(
    queued: impl FnOnce(&dyn Fn()) + Send,
    release: impl FnOnce(&dyn Fn()) -> R,
) -> R {
    let tid = Tid::default();
    let done = std::sync::atomic::AtomicBool::new(false);
    thread::scope(|s| {
        let thread = s.spawn(|| {
            tid.publish();
            queued(&|| {
                while !done.load(SeqCst) {
                    thread::sleep(Duration::from_millis(1));
                }
            });
        });
        assert!(
            tid.wait_until_blocked(),
            "the thread ended before it queued"
        );
        let result = release(&|| done.store(true, SeqCst));
        thread.join().unwrap();
        result
    })
}

/// The state letter of the thread `tid` of this process (`S` asleep, `R`
/// running, ...), `None` once it is gone.
pub fn state(tid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // The state follows the `)` that closes the command name.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.trim_start().chars().next()
}

/// How many times the thread `tid` of this process has left the CPU, of
/// its own accord or not: a thread that sleeps in one blocking call adds
/// none, one that polls with sleeps adds one per poll (a yield counts only
/// when another thread takes the CPU).
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
