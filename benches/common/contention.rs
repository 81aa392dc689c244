//! Contention: one object, T threads, each looping { lock; critical section
//! on the protected value; unlock; work outside the lock }.
//!
//! Two ways to measure the same loop: [`contended_ops`] runs an amount of
//! work and returns its time (criterion's `iter_custom`), and
//! [`timed_contention`] runs for a fixed time and returns throughput, CPU
//! time and fairness ([`RoundStats`]). The sweep ([`sweep_cell`]) runs the
//! latter for each lock of [`SWEEP_LOCKS`], interleaved.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::locks::{CounterLock, MetaKeyed, MetaSync, MetaWord, PlFairMutex, PlMutex, StdMutex};
use super::measure::{RoundStats, Rounds, Summary, interleaved, scale, timed_round, timed_threads};
use super::work::Workload;

/// Least work per timed multi-threaded run, so that starting the threads
/// stays negligible even when criterion asks for a few iterations (warm-up,
/// `--quick`); the time is scaled back to the work asked for.
pub const MIN_CONTENDED_OPS: u64 = 20_000;

/// The contended object, on cache lines of its own (128 bytes, as adjacent-
/// line prefetchers pair 64-byte lines): what the threads fight over is the
/// lock's line, not a line it happens to share with the round's stop flag or
/// a neighbouring allocation.
#[repr(align(128))]
pub struct Padded<T>(pub T);

/// One iteration of a contending thread; `i` only keeps the outside work's
/// input opaque.
#[inline(always)]
fn contend<L: CounterLock>(lock: &L, workload: &Workload, i: u64) {
    lock.with(|value| workload.critical_section(value));
    workload.outside(i);
}

/// The time of `ops` iterations by `threads` threads contending for `lock`
/// (at least [`MIN_CONTENDED_OPS`] are run, and the time scaled). The
/// threads draw on one count instead of a share each: with fixed shares an
/// unfair lock's favoured threads finish first and leave the end of the
/// run to fewer contenders, which flatters a barging lock against a fair
/// one. Here every thread contends until the count is done, give or take
/// one batch each.
pub fn contended_ops<L: CounterLock + Sync>(
    lock: &L,
    threads: usize,
    workload: &Workload,
    ops: u64,
) -> Duration {
    /// Iterations between two looks at the shared count: rare enough that
    /// its cache line costs nothing beside the lock's.
    const BATCH: u64 = 64;
    let target = ops.max(MIN_CONTENDED_OPS);
    let done = Padded(AtomicU64::new(0));
    let (elapsed, _) = timed_threads(threads, |_| {
        let mut i = 0;
        loop {
            for _ in 0..BATCH {
                contend(lock, workload, i);
                i += 1;
            }
            // Relaxed: a count, read again after the threads are joined.
            if done.0.fetch_add(BATCH, Ordering::Relaxed) + BATCH >= target {
                break;
            }
        }
    });
    scale(elapsed, ops, done.0.into_inner())
}

/// Lets `threads` threads contend for `lock` for `length`, each counting
/// its iterations until the stop flag.
pub fn timed_contention<L: CounterLock + Sync>(
    lock: &L,
    threads: usize,
    workload: &Workload,
    length: Duration,
) -> RoundStats {
    timed_round(threads, length, |_, stop| {
        let mut ops = 0;
        while !stop.load(Ordering::Relaxed) {
            contend(lock, workload, ops);
            ops += 1;
        }
        ops
    })
}

/// A lock of the sweep, its type erased so that the sweep can interleave a
/// list of them (the measuring loop stays monomorphised per type).
#[derive(Clone, Copy)]
pub struct LockKind {
    /// The short name of benchmark ids and the CSV (`CounterLock::NAME`).
    pub name: &'static str,
    /// The name for people, as in the code: `parking_lot::Mutex`.
    pub label: &'static str,
    round: fn(usize, &Workload, Duration) -> RoundStats,
}

impl LockKind {
    const fn of<L: CounterLock + Sync>(label: &'static str) -> Self {
        Self {
            name: L::NAME,
            label,
            round: fresh_round::<L>,
        }
    }

    /// One fixed-duration round of `threads` threads on a fresh object.
    pub fn round(&self, threads: usize, workload: &Workload, length: Duration) -> RoundStats {
        (self.round)(threads, workload, length)
    }
}

/// [`timed_contention`] on a new object, so that no round inherits another's
/// state (a queue, a lock record, a line in some cache).
fn fresh_round<L: CounterLock + Sync>(
    threads: usize,
    workload: &Workload,
    length: Duration,
) -> RoundStats {
    let lock = Padded(L::new(0));
    timed_contention(&lock.0, threads, workload, length)
}

/// The locks of the contention sweep, in their order in every table.
pub const SWEEP_LOCKS: [LockKind; 6] = [
    LockKind::of::<MetaWord>("metalock word"),
    LockKind::of::<MetaSync>("metalock Synchronized"),
    LockKind::of::<PlMutex>("parking_lot::Mutex"),
    LockKind::of::<PlFairMutex>("parking_lot::FairMutex"),
    LockKind::of::<StdMutex>("std::sync::Mutex"),
    LockKind::of::<MetaKeyed>("metalock keyed"),
];
/// Position of the raw-word monitor in [`SWEEP_LOCKS`].
pub const SWEEP_WORD: usize = 0;
/// Position of `Synchronized` in [`SWEEP_LOCKS`].
pub const SWEEP_SYNC: usize = 1;
/// Position of `parking_lot::Mutex`, the reference, in [`SWEEP_LOCKS`].
pub const SWEEP_PL: usize = 2;
/// Position of `parking_lot::FairMutex` in [`SWEEP_LOCKS`].
pub const SWEEP_FAIR: usize = 3;
/// Position of `std::sync::Mutex` in [`SWEEP_LOCKS`].
pub const SWEEP_STD: usize = 4;
/// Position of the keyed monitor (`metalock::lock(&object)`) in
/// [`SWEEP_LOCKS`].
pub const SWEEP_KEYED: usize = 5;

/// One cell of the sweep: `rounds.count` rounds of each of `locks`,
/// interleaved from round `first` of the order (see [`interleaved`]; vary
/// it by cell), each on a fresh object; the medians per lock, in the order
/// of `locks`.
pub fn sweep_cell(
    locks: &[LockKind],
    threads: usize,
    workload: &Workload,
    rounds: Rounds,
    first: usize,
) -> Vec<Summary> {
    interleaved(locks, rounds.count, 0, first, |lock| {
        lock.round(threads, workload, rounds.length)
    })
    .iter()
    .map(|samples| Summary::of(samples))
    .collect()
}
