//! Interrupts with thread churn: the operations of `interrupt_stress.rs`
//! (every kind of monitor, conditions, plain and interruptible waits, an
//! interrupter) for `METALOCK_SOAK_SECS` (CI: 60 s; 2 s by default), with
//! 32 workers at a time, each exiting after a few hundred to a few thousand
//! operations and replaced at once, so that execution environments and
//! their lock records pass to new threads all along, while the interrupter
//! also interrupts the handles of workers that have exited. Alone in its
//! binary, so that the pools start empty. On top of `interrupt_stress`'s
//! checks, thread by thread: the interrupts a worker reported or left
//! pending are at most those sent to its own handle (an interrupt of an
//! exited thread never reaches the thread that took its environment); and
//! at the end no keyed monitor is left in use, and the lock records and
//! environments allocated stay bounded by the threads alive at once.

mod common;
#[path = "interrupt_stress/shared.rs"]
mod shared;

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::thread;
use std::time::{Duration, Instant};

use common::Watchdog;
use common::rng::Rng;
use metalock::__test_hooks::exec_envs_allocated;
use metalock::{keyed_monitors, lock_records_allocated};
use shared::{HANG, Shared, Tally, check, interrupter, worker};

#[test]
fn interrupts_and_notifies_with_thread_churn() {
    const LIVE: usize = 32;
    let secs: u64 = std::env::var("METALOCK_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    let _watchdog = Watchdog::arm(Duration::from_secs(secs) + HANG);
    let shared = Shared::new();
    let records_before = lock_records_allocated();
    let envs_before = exec_envs_allocated();
    let done = AtomicBool::new(false);
    let end = Instant::now() + Duration::from_secs(secs);
    let mut threads_run = 0_u64;
    let (tallies, sent) = thread::scope(|s| {
        let interrupter = s.spawn(|| interrupter(&shared, &done));
        let mut rng = Rng(0xc4u64 << 32 | 1);
        let mut live: Vec<thread::ScopedJoinHandle<'_, Tally>> = Vec::new();
        let mut joined = Vec::new();
        while Instant::now() < end {
            let (finished, running): (Vec<_>, Vec<_>) =
                live.into_iter().partition(|w| w.is_finished());
            live = running;
            joined.extend(finished.into_iter().map(|w| w.join()));
            while live.len() < LIVE {
                threads_run += 1;
                let (shared, seed) = (&shared, threads_run);
                let ops = 200 + rng.below(2_000) as usize;
                live.push(s.spawn(move || worker(shared, seed, ops)));
            }
            thread::sleep(Duration::from_millis(1));
        }
        // Every worker joined before the interrupter stops, which keeps the
        // untimed interruptible waits ending.
        joined.extend(live.into_iter().map(|w| w.join()));
        done.store(true, Relaxed);
        let tallies: Vec<Tally> = joined.into_iter().map(Result::unwrap).collect();
        (tallies, interrupter.join().unwrap())
    });
    let total = check(&shared, &tallies, &sent);
    assert_eq!(keyed_monitors(), 0, "keyed monitors left in use");
    let records = lock_records_allocated() - records_before;
    let envs = exec_envs_allocated() - envs_before;
    println!(
        "churn: {secs} s, {threads_run} threads, {} notified returns, {} interrupts reported ({} by enters), \
         {} sent ({} to workers that had exited), {records} lock records and \
         {envs} environments allocated",
        total.notified.iter().sum::<u64>(),
        total.interrupted,
        total.enters_interrupted,
        sent.total(),
        sent.to_exited
    );
    assert!(
        sent.to_exited > 0,
        "no interrupt reached an exited worker's handle"
    );
    // The live workers, and a few more while exited ones finish their
    // thread-local destructors (`is_finished` comes before them).
    let alive = LIVE + 4;
    assert!(
        envs <= alive,
        "{envs} environments for {alive} live threads"
    );
    // Each environment's first batch of 8 records is all its worker needs:
    // it holds at most two monitors at once (a reentered one is one record).
    assert!(
        records <= 8 * envs,
        "{records} lock records for {envs} environments"
    );
}
