//! Uncontended: the paper's Fig. 9 method (section 6.3.1), lock/unlock pairs
//! with a trivial body, one thread.

use std::time::{Duration, Instant};

use super::contention::Padded;
use super::locks::{CounterLock, RecursiveLock};
use super::measure::timed_threads;
use super::work::bump;

/// Object counts of the uncontended benchmarks (powers of two).
pub const OBJECT_COUNTS: [usize; 3] = [1, 4096, 524_288];

/// `n` objects of type `L`.
pub fn objects<L: CounterLock>(n: usize) -> Vec<L> {
    (0..n as u64).map(L::new).collect()
}

/// Runs `pairs` lock/bump/unlock pairs cycling over `objects` (whose length
/// is a power of two) and returns the time taken.
#[inline(never)]
pub fn cycle<L: CounterLock>(objects: &[L], pairs: u64) -> Duration {
    assert!(objects.len().is_power_of_two());
    let mask = objects.len() - 1;
    let start = Instant::now();
    for i in 0..pairs as usize {
        objects[i & mask].with(bump);
    }
    start.elapsed()
}

/// Runs `pairs` recursive pairs (lock, lock, bump, unlock, unlock) on one
/// object and returns the time taken.
#[inline(never)]
pub fn recursive<L: RecursiveLock>(object: &L, pairs: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..pairs {
        object.with_recursive(bump);
    }
    start.elapsed()
}

/// Objects held at once by `nested`.
pub const NESTED_DEPTH: usize = 4;

/// Runs `pairs` (a multiple of `NESTED_DEPTH`) lock/bump/unlock pairs in
/// nests of the `NESTED_DEPTH` objects of `objects`: each locked inside
/// the one before, all bumped, then unlocked in the reverse order, as
/// nested scopes do; returns the time taken. A thread that holds one
/// monitor enters the next with another lock record than its first.
#[inline(never)]
pub fn nested<L: CounterLock>(objects: &[L], pairs: u64) -> Duration {
    const { assert!(NESTED_DEPTH == 4, "nested: the nest below is four deep") };
    assert_eq!(pairs % NESTED_DEPTH as u64, 0, "nested: whole nests only");
    let [a, b, c, d] = objects else {
        panic!("nested: {NESTED_DEPTH} objects, got {}", objects.len());
    };
    let start = Instant::now();
    for _ in 0..pairs / NESTED_DEPTH as u64 {
        a.with(|x| {
            b.with(|y| {
                c.with(|z| {
                    d.with(|w| {
                        for value in [x, y, z, w] {
                            bump(value);
                        }
                    })
                })
            })
        });
    }
    start.elapsed()
}

/// The time of `threads` threads each running `pairs` lock/bump/unlock
/// pairs on an object of its own (on cache lines of its own): with no
/// shared line on the path, 2 threads on 2 cores take the time of 1.
pub fn distinct_objects<L: CounterLock + Sync>(threads: usize, pairs: u64) -> Duration {
    let objects: Vec<Padded<L>> = (0..threads as u64).map(|i| Padded(L::new(i))).collect();
    let (elapsed, _) = timed_threads(threads, |i| {
        let object = &objects[i].0;
        for _ in 0..pairs {
            object.with(bump);
        }
    });
    elapsed
}
