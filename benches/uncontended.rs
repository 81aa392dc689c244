//! Uncontended locking, the paper's Fig. 9 method (section 6.3.1): a
//! lock/unlock pair with a trivial body (one increment), cycling over 1, 4096
//! and 524288 objects, next to the same loop without locking. The cost of
//! synchronization is `time - baseline time`; criterion reports both, per
//! pair (one criterion iteration is one pair).
//!
//! Groups:
//! - `uncontended/{1,4096,524288}`: baseline, metalock raw word
//!   (`MultiUseWord::lock`), metalock `Synchronized<u64>`, parking_lot
//!   `Mutex`, std `Mutex`, and the floor (a spin lock acquired and released by
//!   one CAS each).
//! - `recursive`: lock, lock, increment, unlock, unlock on one object:
//!   baseline, metalock raw word, parking_lot `ReentrantMutex`, and a spin
//!   lock with owner and count (one CAS in, one CAS out). `Synchronized`,
//!   `Mutex` and std's `Mutex` are not reentrant.
//!
//! `examples/compare.rs` runs a short version and subtracts the baseline.

use criterion::{BenchmarkGroup, Criterion, Throughput, measurement::WallTime};

mod common;
use common::{
    Baseline, CounterLock, MetaSync, MetaWord, OBJECT_COUNTS, PlMutex, PlReentrant, RecursiveLock,
    ReentrantSpinLock, SpinLock, StdMutex,
};

fn cycling<L: CounterLock>(group: &mut BenchmarkGroup<'_, WallTime>, n: usize) {
    let objects = common::objects::<L>(n);
    group.bench_function(L::NAME, |b| {
        b.iter_custom(|pairs| common::cycle(&objects, pairs));
    });
}

fn uncontended(c: &mut Criterion) {
    for n in OBJECT_COUNTS {
        let mut group = c.benchmark_group(format!("uncontended/{n}"));
        group.throughput(Throughput::Elements(1));
        cycling::<Baseline>(&mut group, n);
        cycling::<MetaWord>(&mut group, n);
        cycling::<MetaSync>(&mut group, n);
        cycling::<PlMutex>(&mut group, n);
        cycling::<StdMutex>(&mut group, n);
        cycling::<SpinLock>(&mut group, n);
        group.finish();
    }
}

fn recursive_one<L: RecursiveLock>(group: &mut BenchmarkGroup<'_, WallTime>) {
    let object = L::new_recursive(0);
    group.bench_function(L::NAME, |b| {
        b.iter_custom(|pairs| common::recursive(&object, pairs));
    });
}

fn recursive(c: &mut Criterion) {
    let mut group = c.benchmark_group("recursive");
    group.throughput(Throughput::Elements(1));
    recursive_one::<Baseline>(&mut group);
    recursive_one::<MetaWord>(&mut group);
    recursive_one::<PlReentrant>(&mut group);
    recursive_one::<ReentrantSpinLock>(&mut group);
    group.finish();
}

fn main() {
    let mut c = common::criterion();
    uncontended(&mut c);
    recursive(&mut c);
    c.final_summary();
}
