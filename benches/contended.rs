//! Contended locking and waiting.
//!
//! Groups (one criterion iteration is one operation, so the reported time is
//! wall time per operation and the throughput operations per second):
//! - `contended/cs=C,outside=O`: one object contended by T threads
//!   (benchmark ids `LOCK/T`, T in 2, 4, 16, 32), each looping { lock;
//!   critical section of ~C on the protected value; unlock; ~O of work
//!   outside }, for five cells of the sweep `examples/compare.rs` runs
//!   whole ([`CELLS`]; all sixteen with `METALOCK_BENCH_ALL_CELLS=1`):
//!   metalock raw word, metalock `Synchronized`, the
//!   keyed monitor (`metalock::lock(&value)`), parking_lot `Mutex` and
//!   `FairMutex`, std `Mutex`. Work lengths are on
//!   a scale calibrated at start-up (`common::work::Calibration`). CPU time
//!   per operation (getrusage), voluntary context switches and fairness
//!   (max/min operations and CPU time per thread) are not criterion
//!   outputs: after each group, fixed-duration rounds of the locks that
//!   ran, interleaved, measure them, and a table is printed.
//! - `bounded_buffer/P_pairs`: items moved by P producer/consumer pairs
//!   (P in 1, 4) through a buffer of capacity 1, 16 and 256 (benchmark ids
//!   `IMPL/capacity`); metalock with one monitor's own wait set
//!   (`Synchronized<VecDeque>`, `wait_while` + `notify_all`), with two
//!   conditions (`notify_one`), and with two conditions through
//!   `lock_api::Mutex<RawMonitor, _>`; the peers a Mutex and two Condvars.
//! - `ping_pong`: round trips between two threads taking turns through a
//!   flag under the monitor (peers: Mutex + Condvar); the time is the
//!   round-trip latency.
//! - `idle_notify`: a condition's `notify_one` with nobody waiting
//!   (metalock's `Condition`, parking_lot's and std's `Condvar`).
//!
//! `cargo bench --bench contended` took 10 min 15 s once built on a 2-vCPU
//! AMD EPYC VM (2026-11-23): 121 benchmarks then (156 now, 120 of them
//! contended) at ~3.9 s each with criterion's analysis and HTML plots (6.5
//! minutes for the 100 contended ones then), and side tables of 3 rounds.
//! The side tables now run 5 cells x 4 thread counts x 6 locks x 6 rounds
//! of 500 ms, 6 minutes: about 14 minutes in all.
//! `cargo bench --bench contended -- cs=20ns,outside=200ns` runs one cell.

use std::time::Duration;

use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput, measurement::WallTime,
};

mod common;
use common::contention::{self, LockKind, Padded, SWEEP_LOCKS};
use common::locks::{CounterLock, MetaKeyed, MetaSync, MetaWord, PlFairMutex, PlMutex, StdMutex};
use common::measure::{self, Rounds, Summary};
use common::wait_notify::{
    self, BUFFER_CAPACITIES, BoundedBuffer, MetaBuffer, MetaCondBuffer, MetaPingPong, PAIR_COUNTS,
    PingPong, PlBuffer, PlPingPong, StdBuffer, StdPingPong,
};
use common::work::{Calibration, WORK_NS, Workload};

/// Thread counts of the contended groups: 32 is 16 contenders per core
/// here, where a preempted lock holder is the rule rather than the
/// exception.
const THREAD_COUNTS: [usize; 4] = [2, 4, 16, 32];

/// The cells of the sweep benchmarked here, (critical section, outside
/// work) in ns: all sixteen at four thread counts take most of an hour,
/// and run only with `METALOCK_BENCH_ALL_CELLS=1` (see [`cells`]). Each
/// stands for a regime:
/// - none/none: nothing but the lock, whose hand-off between threads (or a
///   thread's run of uncontended reacquisitions) decides everything;
/// - 20 ns/200 ns: a short section, moderate contention, the common case
///   (and the cell `examples/plot.rs` draws by default);
/// - 200 ns/20 ns: the lock is nearly always held, a queue forms, and
///   threads block and are woken;
/// - 20 ns/2 µs: light contention, occasional collisions on a mostly free
///   lock;
/// - 2 µs/2 µs: long holds, where a waiter that spins instead of blocking
///   burns CPU time (the side table's CPU/op).
const CELLS: [(u32, u32); 5] = [(0, 0), (20, 200), (200, 20), (20, 2_000), (2_000, 2_000)];

/// [`CELLS`], or with `METALOCK_BENCH_ALL_CELLS=1` in the environment the
/// whole sweep of `compare` (every pair of [`WORK_NS`]).
fn cells() -> Vec<(u32, u32)> {
    if std::env::var_os("METALOCK_BENCH_ALL_CELLS").is_some_and(|v| v == "1") {
        WORK_NS
            .iter()
            .flat_map(|&outside| WORK_NS.map(|cs| (cs, outside)))
            .collect()
    } else {
        CELLS.to_vec()
    }
}

/// The side table's rounds: long enough for the scheduler to even out
/// 4 threads on 2 cores (at 150 ms one thread often kept a core to itself
/// for a whole round, and max/min measured that placement more than the
/// lock), and as many as the locks, so that each runs first once.
fn side_rounds() -> Rounds {
    if common::bench_mode() {
        Rounds {
            count: SWEEP_LOCKS.len(),
            length: Duration::from_millis(500),
        }
    } else {
        Rounds {
            count: 1,
            length: Duration::from_millis(10),
        }
    }
}

/// Registers `L`'s benchmark of `workload` at `threads`, and records in
/// `ran` whether criterion ran it (a filter may skip it).
fn contended_one<L: CounterLock + Sync>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    threads: usize,
    workload: &Workload,
    ran: &mut Vec<(usize, &'static str)>,
) {
    let lock = Padded(L::new(0));
    let mut first = true;
    group.bench_function(BenchmarkId::new(L::NAME, threads), |b| {
        if first {
            first = false;
            ran.push((threads, L::NAME));
        }
        b.iter_custom(|ops| contention::contended_ops(&lock.0, threads, workload, ops));
    });
}

fn contended(c: &mut Criterion, calibration: &Calibration) {
    for (cs_ns, outside_ns) in cells() {
        let workload = calibration.workload(cs_ns, outside_ns);
        let name = format!("contended/{}", workload.label());
        let mut group = c.benchmark_group(&name);
        group.sampling_mode(SamplingMode::Flat);
        group.throughput(Throughput::Elements(1));
        let mut ran = Vec::new();
        for threads in THREAD_COUNTS {
            contended_one::<MetaWord>(&mut group, threads, &workload, &mut ran);
            contended_one::<MetaSync>(&mut group, threads, &workload, &mut ran);
            contended_one::<MetaKeyed>(&mut group, threads, &workload, &mut ran);
            contended_one::<PlMutex>(&mut group, threads, &workload, &mut ran);
            contended_one::<PlFairMutex>(&mut group, threads, &workload, &mut ran);
            contended_one::<StdMutex>(&mut group, threads, &workload, &mut ran);
        }
        group.finish();
        side_table(&name, calibration, &workload, &ran);
    }
}

/// Prints CPU time per operation, voluntary context switches and fairness
/// for the (threads, lock) benchmarks that ran, measured in fixed-duration
/// rounds interleaved across the locks of each thread count.
fn side_table(
    name: &str,
    calibration: &Calibration,
    workload: &Workload,
    ran: &[(usize, &'static str)],
) {
    if ran.is_empty() {
        return;
    }
    let rounds = side_rounds();
    println!(
        "\n{name}: {rounds} per lock, interleaved (medians); {}, {} CPUs; {calibration}",
        measure::cpu_model(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
    );
    println!(
        "{:<24} {:>3} {:>9} {:>10} {:>9} {:>8} {:>8}",
        "lock", "thr", "Mops/s", "CPU ns/op", "csw/op", "max/min", "cpu m/m"
    );
    for (first, threads) in THREAD_COUNTS.into_iter().enumerate() {
        let locks: Vec<LockKind> = SWEEP_LOCKS
            .into_iter()
            .filter(|lock| ran.contains(&(threads, lock.name)))
            .collect();
        if locks.is_empty() {
            continue;
        }
        let summaries = contention::sweep_cell(&locks, threads, workload, rounds, first);
        for (lock, s) in locks.iter().zip(&summaries) {
            println!("{}", side_row(lock, threads, s));
        }
    }
    println!();
}

fn side_row(lock: &LockKind, threads: usize, s: &Summary) -> String {
    format!(
        "{:<24} {threads:>3} {:>9.2} {:>10.1} {:>9.3} {:>8.2} {:>8.2}",
        lock.label,
        s.per_sec / 1e6,
        s.cpu_ns_per_unit,
        s.switches_per_unit,
        s.max_over_min,
        s.cpu_max_over_min,
    )
}

fn buffer_one<B: BoundedBuffer>(group: &mut BenchmarkGroup<'_, WallTime>, pairs: usize) {
    for capacity in BUFFER_CAPACITIES {
        group.bench_function(BenchmarkId::new(B::NAME, capacity), |b| {
            b.iter_custom(|items| wait_notify::buffer_transfer::<B>(capacity, pairs, items));
        });
    }
}

fn bounded_buffer(c: &mut Criterion) {
    for pairs in PAIR_COUNTS {
        let mut group = c.benchmark_group(format!("bounded_buffer/{pairs}_pairs"));
        group.sampling_mode(SamplingMode::Flat);
        group.throughput(Throughput::Elements(1));
        buffer_one::<MetaBuffer>(&mut group, pairs);
        buffer_one::<MetaCondBuffer>(&mut group, pairs);
        #[cfg(not(feature = "shuttle"))]
        buffer_one::<wait_notify::LockApiBuffer>(&mut group, pairs);
        buffer_one::<PlBuffer>(&mut group, pairs);
        buffer_one::<StdBuffer>(&mut group, pairs);
        group.finish();
    }
}

fn ping_pong_one<P: PingPong>(group: &mut BenchmarkGroup<'_, WallTime>) {
    group.bench_function(P::NAME, |b| {
        b.iter_custom(wait_notify::ping_pong::<P>);
    });
}

fn ping_pong(c: &mut Criterion) {
    let mut group = c.benchmark_group("ping_pong");
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(1));
    ping_pong_one::<MetaPingPong>(&mut group);
    ping_pong_one::<PlPingPong>(&mut group);
    ping_pong_one::<StdPingPong>(&mut group);
    group.finish();
}

/// A condition's `notify_one` with nobody waiting: one criterion iteration
/// is one call.
fn idle_notify(c: &mut Criterion) {
    let mut group = c.benchmark_group("idle_notify");
    group.throughput(Throughput::Elements(1));
    group.bench_function("metalock_condition", |b| {
        b.iter_custom(wait_notify::idle_notify_metalock);
    });
    group.bench_function("parking_lot", |b| {
        b.iter_custom(wait_notify::idle_notify_parking_lot);
    });
    group.bench_function("std", |b| b.iter_custom(wait_notify::idle_notify_std));
    group.finish();
}

fn main() {
    let calibration = Calibration::measure();
    let mut c = common::criterion();
    contended(&mut c, &calibration);
    bounded_buffer(&mut c);
    ping_pong(&mut c);
    idle_notify(&mut c);
    c.final_summary();
}
