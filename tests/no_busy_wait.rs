//! The meta-lock never busy-waits (paper 000, section 4.2): threads queued on
//! a held meta-lock block, so while the holder sleeps the process burns
//! (almost) no CPU, and each of them stays off the CPU: a thread that polled
//! with sleeps or yields would burn little CPU but leave it once per poll.
//!
//! CPU time is measured for the whole process, so this binary holds exactly
//! one test. Linux only: the threads' context switches are read from `/proc`.
//!
//! The swap-only meta-lock of section 5.4 (`cfg(metalock_swap_only)`) polls
//! with back-off by design, so the property is not claimed for it.
#![cfg(all(target_os = "linux", not(metalock_swap_only)))]

mod common;

use common::Watchdog;
use common::blocked::{Tid, context_switches};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use metalock::__test_hooks::{HandoffEvent, set_handoff_hook};
use metalock::MultiUseWord;

/// Threads queued on the meta-lock.
const WAITERS: usize = 8;
/// How long the holder keeps the meta-lock while we measure.
const WINDOW: Duration = Duration::from_millis(100);
/// 10% of one core over `WINDOW`.
const CPU_BUDGET: Duration = Duration::from_millis(10);

/// Threads that reached the point where they wait for the holder.
static COMMITTED: AtomicUsize = AtomicUsize::new(0);

fn count_waiters(event: HandoffEvent) {
    // Either outcome of the race ends in a blocking wait; with the holder
    // still holding, it is `SuccessorWon`.
    if event != HandoffEvent::SuccessorQueued {
        COMMITTED.fetch_add(1, Ordering::SeqCst);
    }
}

/// Removes the hook however the test ends.
struct Hook;

impl Drop for Hook {
    fn drop(&mut self) {
        set_handoff_hook(None);
    }
}

/// User + system CPU time of the whole process.
fn process_cpu_time() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: `usage` is valid for writes of a `rusage`, and RUSAGE_SELF is a
    // valid `who`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    assert_eq!(rc, 0, "getrusage failed");
    // SAFETY: getrusage succeeded, so it filled `usage`.
    let usage = unsafe { usage.assume_init() };
    let to_duration = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    to_duration(usage.ru_utime) + to_duration(usage.ru_stime)
}

#[test]
fn blocked_waiters_burn_no_cpu() {
    let _watchdog = Watchdog::arm(Duration::from_secs(120));
    set_handoff_hook(Some(count_waiters));
    let _hook = Hook;

    let word = MultiUseWord::with_payload(17);
    let ran = AtomicUsize::new(0);
    let measured = AtomicBool::new(false);
    let tids: Vec<Tid> = (0..WAITERS).map(|_| Tid::default()).collect();
    thread::scope(|s| {
        let (cpu, switches) = word.__with_meta_lock(|| {
            for tid in &tids {
                let (word, ran, measured) = (&word, &ran, &measured);
                s.spawn(move || {
                    tid.publish();
                    word.__with_meta_lock(|| {
                        // Nobody gets in before the holder is done.
                        assert!(measured.load(Ordering::SeqCst));
                        ran.fetch_add(1, Ordering::SeqCst);
                    })
                });
            }
            let deadline = Instant::now() + Duration::from_secs(60);
            while COMMITTED.load(Ordering::SeqCst) < WAITERS {
                assert!(Instant::now() < deadline, "the waiters never queued");
                thread::sleep(Duration::from_millis(1));
            }
            // Let the last of them get from the hook into the kernel.
            for tid in &tids {
                assert!(tid.wait_until_blocked(), "a waiter ended before it queued");
            }

            let switches_before: Vec<u64> =
                tids.iter().map(|t| context_switches(t.get())).collect();
            let before = process_cpu_time();
            thread::sleep(WINDOW);
            let cpu = process_cpu_time() - before;
            let switches: Vec<u64> = tids
                .iter()
                .zip(switches_before)
                .map(|(t, before)| context_switches(t.get()) - before)
                .collect();
            measured.store(true, Ordering::SeqCst);
            (cpu, switches)
        });
        println!(
            "{WAITERS} threads blocked on the meta-lock for {WINDOW:?}: \
             process CPU time {cpu:?} (budget {CPU_BUDGET:?}), \
             context switches per thread {switches:?}"
        );
        assert!(
            cpu < CPU_BUDGET,
            "{WAITERS} blocked threads burned {cpu:?} of CPU in {WINDOW:?}: busy-waiting?"
        );
        // A thread asleep in one blocking call all along adds none.
        assert!(
            switches.iter().all(|&n| n <= 1),
            "blocked threads left the CPU {switches:?} times in {WINDOW:?}: polling?"
        );
    });
    assert_eq!(ran.load(Ordering::SeqCst), WAITERS);
    assert_eq!(word.payload(), 17);
}
