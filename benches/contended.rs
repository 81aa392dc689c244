//! Contended locking and waiting.
//!
//! Groups (one criterion iteration is one operation, so the reported time is
//! wall time per operation and the throughput operations per second):
//! - `contended/{2,4,16}`: one object contended by T threads, each running a
//!   short critical section (a few dependent increments) and a little work
//!   outside it: metalock raw word, metalock `Synchronized`, parking_lot
//!   `Mutex`, std `Mutex`, the CAS spin-lock floor. CPU time per operation
//!   (getrusage) and fairness (max/min operations per thread) are not
//!   criterion outputs: a separate fixed-duration round per lock measures
//!   them, and a table is printed after each group.
//! - `bounded_buffer/{1,4}`: items moved through a buffer of capacity 16 by 1
//!   and 4 producer/consumer pairs; metalock uses one monitor
//!   (`Synchronized<VecDeque>`, `wait_while` + `notify_all`), the peers a
//!   Mutex and two Condvars.
//! - `ping_pong`: round trips between two threads taking turns through a
//!   flag under the monitor (peers: Mutex + Condvar); the time is the
//!   round-trip latency.

use std::time::Duration;

use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput, measurement::WallTime};

mod common;
use common::{
    BoundedBuffer, CounterLock, MetaBuffer, MetaPingPong, MetaSync, MetaWord, PAIR_COUNTS,
    PingPong, PlBuffer, PlMutex, PlPingPong, SpinLock, StdBuffer, StdMutex, StdPingPong,
    THREAD_COUNTS,
};

/// Duration of the CPU-time/fairness round per (lock, threads): long enough
/// for the scheduler to even out threads over the cores (see `compare`).
fn side_round() -> Duration {
    if common::bench_mode() {
        Duration::from_millis(500)
    } else {
        Duration::from_millis(10)
    }
}

fn contended_one<L: CounterLock + Sync>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    threads: usize,
    table: &mut Vec<String>,
) {
    let lock = L::new(0);
    let mut side_done = false;
    group.bench_function(L::NAME, |b| {
        if !side_done {
            side_done = true;
            let stats = common::timed_contention(&lock, threads, side_round());
            table.push(common::contention_row(L::NAME, threads, &stats));
        }
        b.iter_custom(|ops| common::contended_ops(&lock, threads, ops));
    });
}

fn contended(c: &mut Criterion) {
    for threads in THREAD_COUNTS {
        let mut group = c.benchmark_group(format!("contended/{threads}"));
        group.sampling_mode(SamplingMode::Flat);
        group.throughput(Throughput::Elements(1));
        let mut table = Vec::new();
        contended_one::<MetaWord>(&mut group, threads, &mut table);
        contended_one::<MetaSync>(&mut group, threads, &mut table);
        contended_one::<PlMutex>(&mut group, threads, &mut table);
        contended_one::<StdMutex>(&mut group, threads, &mut table);
        contended_one::<SpinLock>(&mut group, threads, &mut table);
        group.finish();
        if !table.is_empty() {
            println!(
                "\ncontended/{threads}: fixed {:?} rounds (throughput, process CPU per op, fairness)",
                side_round()
            );
            println!("{}", common::contention_header());
            for row in &table {
                println!("{row}");
            }
            println!();
        }
    }
}

fn buffer_one<B: BoundedBuffer>(group: &mut BenchmarkGroup<'_, WallTime>, pairs: usize) {
    group.bench_function(B::NAME, |b| {
        b.iter_custom(|items| common::buffer_transfer::<B>(pairs, items));
    });
}

fn bounded_buffer(c: &mut Criterion) {
    for pairs in PAIR_COUNTS {
        let mut group = c.benchmark_group(format!("bounded_buffer/{pairs}"));
        group.sampling_mode(SamplingMode::Flat);
        group.throughput(Throughput::Elements(1));
        buffer_one::<MetaBuffer>(&mut group, pairs);
        buffer_one::<PlBuffer>(&mut group, pairs);
        buffer_one::<StdBuffer>(&mut group, pairs);
        group.finish();
    }
}

fn ping_pong_one<P: PingPong>(group: &mut BenchmarkGroup<'_, WallTime>) {
    group.bench_function(P::NAME, |b| {
        b.iter_custom(common::ping_pong::<P>);
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

fn main() {
    let mut c = common::criterion();
    contended(&mut c);
    bounded_buffer(&mut c);
    ping_pong(&mut c);
    c.final_summary();
}
