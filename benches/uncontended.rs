//! Uncontended locking, the paper's Fig. 9 method (section 6.3.1): a
//! lock/unlock pair with a trivial body (one increment), cycling over 1, 4096
//! and 524288 objects, next to the same loop without locking. The cost of
//! synchronization is `time - baseline time`; criterion reports both, per
//! pair (one criterion iteration is one pair).
//!
//! Groups:
//! - `uncontended/{1,4096,524288}`: baseline, metalock raw word
//!   (`MultiUseWord::lock`), metalock `Synchronized<u64>`, metalock keyed
//!   (`metalock::lock(&object)`, an object with no word), parking_lot
//!   `Mutex`, std `Mutex`, and two floors: a spin lock acquired and released
//!   by one CAS each (`cas_floor`), and the same released by one fetch-sub
//!   and a bit test (`sub_floor`), as parking_lot 0.13 unlocks; a monitor
//!   word cannot be released without a compare.
//! - `nested`: four objects locked one inside another, each bumped, then
//!   unlocked in the reverse order (time per pair): the raw word, keyed
//!   and `Synchronized` enter the inner three with lock records from the
//!   thread's free list, not its first record.
//! - `recursive`: lock, lock, increment, unlock, unlock on one object:
//!   baseline, metalock raw word, parking_lot `ReentrantMutex`, and a spin
//!   lock with owner and count (one CAS in, one CAS out). `Synchronized`,
//!   `Mutex` and std's `Mutex` are not reentrant.
//! - `owner_check`: why a one-word monitor pays for a recursive enter that
//!   a lock with a separate owner field does not. Three CAS-lock pairs: bare;
//!   with a load of the word the lock's CAS just wrote (what metalock's
//!   recursion check must read, the owner living only in that word); and
//!   with an owner field stored, loaded and cleared (parking_lot's
//!   `ReentrantMutex`). On a 2-core Xeon VM (the README's machine before
//!   2026-11-23) the load of the word just compare-and-swapped cost 4-8 ns,
//!   the owner field 0-2 ns.
//!
//! - `distinct/{1,2}`: 1 or 2 threads, each locking an object of its own
//!   (raw word, keyed, parking_lot): with nothing shared on the path, a
//!   pair takes as long with 2 threads as with 1 (keyed monitors: homes on
//!   lines of their own).
//!
//! The cost of the `diagnostics` feature is this suite run twice, against
//! a saved baseline:
//! `cargo bench --bench uncontended -- 'uncontended/' --save-baseline off`,
//! then `cargo bench --features diagnostics --bench uncontended --
//! 'uncontended/' --baseline off` (criterion prints the change per row).
//!
//! `examples/compare.rs` runs a short version and subtracts the baseline.

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkGroup, Criterion, Throughput, measurement::WallTime};

mod common;
use common::locks::{
    Baseline, CounterLock, MetaKeyed, MetaReentrant, MetaSync, MetaWord, PlMutex, PlReentrant,
    RecursiveLock, ReentrantSpinLock, SpinLock, StdMutex, SubFloor,
};
use common::measure::scale;
use common::uncontended::{self, NESTED_DEPTH, OBJECT_COUNTS};

fn cycling<L: CounterLock>(group: &mut BenchmarkGroup<'_, WallTime>, n: usize) {
    let objects = uncontended::objects::<L>(n);
    group.bench_function(L::NAME, |b| {
        b.iter_custom(|pairs| uncontended::cycle(&objects, pairs));
    });
}

fn uncontended(c: &mut Criterion) {
    for n in OBJECT_COUNTS {
        let mut group = c.benchmark_group(format!("uncontended/{n}"));
        group.throughput(Throughput::Elements(1));
        cycling::<Baseline>(&mut group, n);
        cycling::<MetaWord>(&mut group, n);
        cycling::<MetaSync>(&mut group, n);
        cycling::<MetaKeyed>(&mut group, n);
        cycling::<PlMutex>(&mut group, n);
        cycling::<StdMutex>(&mut group, n);
        cycling::<SpinLock>(&mut group, n);
        cycling::<SubFloor>(&mut group, n);
        group.finish();
    }
}

fn nested_one<L: CounterLock>(group: &mut BenchmarkGroup<'_, WallTime>) {
    let objects = uncontended::objects::<L>(NESTED_DEPTH);
    group.bench_function(L::NAME, |b| {
        // Whole nests only: the time is scaled back to the pairs asked for.
        b.iter_custom(|pairs| {
            let ran = pairs.next_multiple_of(NESTED_DEPTH as u64);
            scale(uncontended::nested(&objects, ran), pairs, ran)
        });
    });
}

fn nested(c: &mut Criterion) {
    let mut group = c.benchmark_group("nested");
    group.throughput(Throughput::Elements(1));
    nested_one::<Baseline>(&mut group);
    nested_one::<MetaWord>(&mut group);
    nested_one::<MetaSync>(&mut group);
    nested_one::<MetaKeyed>(&mut group);
    nested_one::<PlMutex>(&mut group);
    nested_one::<StdMutex>(&mut group);
    nested_one::<SpinLock>(&mut group);
    group.finish();
}

fn recursive_one<L: RecursiveLock>(group: &mut BenchmarkGroup<'_, WallTime>) {
    let object = L::new_recursive(0);
    group.bench_function(L::NAME, |b| {
        b.iter_custom(|pairs| uncontended::recursive(&object, pairs));
    });
}

fn recursive(c: &mut Criterion) {
    let mut group = c.benchmark_group("recursive");
    group.throughput(Throughput::Elements(1));
    recursive_one::<Baseline>(&mut group);
    recursive_one::<MetaWord>(&mut group);
    recursive_one::<MetaReentrant>(&mut group);
    recursive_one::<PlReentrant>(&mut group);
    recursive_one::<ReentrantSpinLock>(&mut group);
    group.finish();
}

/// A CAS lock word next to an owner field, on one cache line, as in a
/// lock that keeps its owner apart from its state.
#[repr(C, align(64))]
struct OwnerCheckLock {
    word: AtomicUsize,
    owner: AtomicUsize,
}

/// What happens between the lock's CAS and the unlock's, besides the body.
#[derive(Clone, Copy)]
enum OwnerCheck {
    None,
    ReadTheWord,
    OwnerField,
}

/// `pairs` CAS-lock pairs on `lock`, each with `check` after the lock.
/// Relaxed is enough here: one thread, and the figure is the instruction
/// cost, not an ordering.
#[inline(never)]
fn owner_check_pairs(lock: &OwnerCheckLock, check: OwnerCheck, pairs: u64) -> Duration {
    let me = black_box(1);
    let mut held = 0u64;
    let start = Instant::now();
    for _ in 0..pairs {
        let locked = lock
            .word
            .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed);
        assert!(locked.is_ok(), "owner_check: the lock is single-threaded");
        let ours = match check {
            OwnerCheck::None => true,
            OwnerCheck::ReadTheWord => lock.word.load(Ordering::Relaxed) == me,
            OwnerCheck::OwnerField => {
                lock.owner.store(me, Ordering::Relaxed);
                let ours = lock.owner.load(Ordering::Relaxed) == me;
                lock.owner.store(0, Ordering::Relaxed);
                ours
            }
        };
        held += u64::from(ours);
        let unlocked = lock
            .word
            .compare_exchange(me, 0, Ordering::Release, Ordering::Relaxed);
        assert!(unlocked.is_ok(), "owner_check: the lock is single-threaded");
    }
    let elapsed = start.elapsed();
    assert_eq!(held, pairs);
    elapsed
}

fn owner_check(c: &mut Criterion) {
    let mut group = c.benchmark_group("owner_check");
    group.throughput(Throughput::Elements(1));
    let lock = OwnerCheckLock {
        word: AtomicUsize::new(0),
        owner: AtomicUsize::new(0),
    };
    for (name, check) in [
        ("cas_pair", OwnerCheck::None),
        ("cas_pair_reading_the_word", OwnerCheck::ReadTheWord),
        ("cas_pair_with_owner_field", OwnerCheck::OwnerField),
    ] {
        group.bench_function(name, |b| {
            b.iter_custom(|pairs| owner_check_pairs(&lock, check, pairs));
        });
    }
    group.finish();
}

fn distinct_one<L: CounterLock + Sync>(group: &mut BenchmarkGroup<'_, WallTime>, threads: usize) {
    group.bench_function(L::NAME, |b| {
        b.iter_custom(|pairs| {
            // At least 10,000 pairs, so that starting the threads stays
            // negligible; the time is scaled back to the pairs asked for.
            let ran = pairs.max(10_000);
            scale(uncontended::distinct_objects::<L>(threads, ran), pairs, ran)
        });
    });
}

/// Each thread on an object of its own: the time per pair per thread is the
/// same for 1 and 2 threads when nothing shared is on the path.
fn distinct(c: &mut Criterion) {
    for threads in [1, 2] {
        let mut group = c.benchmark_group(format!("distinct/{threads}"));
        group.throughput(Throughput::Elements(threads as u64));
        distinct_one::<MetaWord>(&mut group, threads);
        distinct_one::<MetaKeyed>(&mut group, threads);
        distinct_one::<PlMutex>(&mut group, threads);
        group.finish();
    }
}

fn main() {
    let mut c = common::criterion();
    uncontended(&mut c);
    nested(&mut c);
    recursive(&mut c);
    owner_check(&mut c);
    distinct(&mut c);
    c.final_summary();
}
