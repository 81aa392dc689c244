//! Many threads under one deadline, pinned to two cores.

// Each test file that includes this module uses part of it.
#![allow(dead_code)]

use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Runs `jobs` on threads of their own, pinned to two cores, and returns
/// their results in job order; panics if they do not all finish within
/// `watchdog`, or with the panic of a job that failed.
pub fn run_watched<T: Send + 'static>(
    what: &str,
    watchdog: Duration,
    jobs: Vec<Box<dyn FnOnce() -> T + Send>>,
) -> Vec<T> {
    let cpus = two_cpus();
    let count = jobs.len();
    let deadline = Instant::now() + watchdog;
    let (tx, rx) = mpsc::channel();
    let handles: Vec<_> = jobs
        .into_iter()
        .enumerate()
        .map(|(t, job)| {
            let tx = tx.clone();
            thread::Builder::new()
                .name(format!("{what}-{t}"))
                .spawn(move || {
                    pin(&cpus);
                    let result = job();
                    tx.send((t, result)).unwrap();
                })
                .unwrap()
        })
        .collect();
    drop(tx);

    // The watchdog: every thread must report before the deadline.
    let mut results: Vec<Option<T>> = (0..count).map(|_| None).collect();
    for received in 0..count {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((t, result)) => results[t] = Some(result),
            Err(err) => {
                // A job that panicked dropped its sender without sending:
                // surface its panic rather than a watchdog message.
                for h in handles.into_iter().filter(|h| h.is_finished()) {
                    if let Err(panic) = h.join() {
                        std::panic::resume_unwind(panic);
                    }
                }
                let stuck: Vec<usize> = (0..count).filter(|&t| results[t].is_none()).collect();
                panic!(
                    "{what}: watchdog ({err:?}): only {received} of {count} threads finished \
                     within {watchdog:?} (stuck: {stuck:?}): deadlock or lost wake-up"
                );
            }
        }
    }
    for h in handles {
        h.join().unwrap();
    }
    results.into_iter().map(Option::unwrap).collect()
}

/// On Linux, the CPUs this thread may run on, cut to the first two, so that
/// 32 threads share 2 cores even on a bigger machine.
#[cfg(target_os = "linux")]
fn two_cpus() -> Option<libc::cpu_set_t> {
    // SAFETY: `cpu_set_t` is plain data, valid when zeroed.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable `cpu_set_t` of the size we pass.
    let rc = unsafe { libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return None;
    }
    // SAFETY: as above: zeroed plain data.
    let mut two: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let mut n = 0;
    for cpu in 0..libc::CPU_SETSIZE as usize {
        // SAFETY: `cpu` is below CPU_SETSIZE; `set` and `two` are valid.
        unsafe {
            if n < 2 && libc::CPU_ISSET(cpu, &set) {
                libc::CPU_SET(cpu, &mut two);
                n += 1;
            }
        }
    }
    (n > 0).then_some(two)
}

#[cfg(target_os = "linux")]
fn pin(set: &Option<libc::cpu_set_t>) {
    if let Some(set) = set {
        // SAFETY: `set` is a valid `cpu_set_t`; pid 0 is the calling thread.
        // Failing to pin only loses the 2-core setting, so the result is
        // ignored.
        let _ = unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), set) };
    }
}

#[cfg(not(target_os = "linux"))]
fn two_cpus() -> Option<()> {
    None
}

#[cfg(not(target_os = "linux"))]
fn pin(_: &Option<()>) {}
