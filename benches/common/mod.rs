//! Helpers shared by `benches/uncontended.rs`, `benches/contended.rs` and
//! `examples/compare.rs`: the lock wrappers that put metalock and its peers
//! behind one interface, the CAS spin-lock floor, and the measurement loops
//! (uncontended cycling, contention with CPU time and fairness, bounded
//! buffer, ping-pong).
//!
//! Every lock guards a `u64` payload, handed to the workload as a `&Cell<u64>`
//! so that every wrapper (including the reentrant ones, whose bodies may
//! alias) exposes the same safe interface at no cost. All lock objects and
//! the baseline object are 16 bytes, so cycling over N of them touches the
//! same memory whatever the lock.
#![allow(dead_code)]

use std::cell::Cell;
use std::collections::VecDeque;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Barrier, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use metalock::{MultiUseWord, Synchronized};

// ---------------------------------------------------------------------------
// The workloads' bodies.

/// The trivial body of the uncontended benchmarks: one increment that the
/// compiler cannot fold across iterations.
#[inline(always)]
pub fn bump(value: &Cell<u64>) {
    value.set(black_box(value.get()) + 1);
}

/// Dependent steps inside the contended critical section.
pub const CS_STEPS: u32 = 8;
/// Dependent steps between two contended lock operations.
pub const THINK_STEPS: u32 = 16;

/// The short critical section of the contended benchmarks (a few ns).
#[inline(always)]
pub fn critical_section(value: &Cell<u64>) {
    let mut v = value.get();
    for _ in 0..CS_STEPS {
        v = black_box(v).wrapping_add(1);
    }
    value.set(v);
}

/// The work a contending thread does outside the lock.
#[inline(always)]
pub fn think() {
    let mut v = 0_u64;
    for _ in 0..THINK_STEPS {
        v = black_box(v).wrapping_add(1);
    }
    black_box(v);
}

// ---------------------------------------------------------------------------
// Lock wrappers.

/// A lock guarding a `u64`, entered once per `with`.
pub trait CounterLock: Sized {
    /// Column / benchmark name.
    const NAME: &'static str;
    /// A new unlocked object holding `value`.
    fn new(value: u64) -> Self;
    /// Locks, runs `f` on the payload, unlocks.
    fn with<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R;
}

/// A lock entered twice per `with_recursive`: lock, lock, body, unlock,
/// unlock.
pub trait RecursiveLock: Sized {
    /// Column / benchmark name.
    const NAME: &'static str;
    /// A new unlocked object holding `value`.
    fn new_recursive(value: u64) -> Self;
    /// Locks twice, runs `f` on the payload, unlocks twice.
    fn with_recursive<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R;
}

/// The unsynchronized baseline: the same 16-byte object, no lock.
pub struct Baseline {
    _word: usize,
    value: Cell<u64>,
}

impl CounterLock for Baseline {
    const NAME: &'static str = "baseline";
    fn new(value: u64) -> Self {
        Self {
            _word: 0,
            value: Cell::new(value),
        }
    }
    #[inline(always)]
    fn with<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        f(&self.value)
    }
}

impl RecursiveLock for Baseline {
    const NAME: &'static str = "baseline";
    fn new_recursive(value: u64) -> Self {
        <Self as CounterLock>::new(value)
    }
    #[inline(always)]
    fn with_recursive<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        f(&self.value)
    }
}

/// An object with a raw metalock monitor (`MultiUseWord::lock`) next to its
/// field, as a Java object has.
pub struct MetaWord {
    word: MultiUseWord,
    value: Cell<u64>,
}

// SAFETY: `value` is only reached inside `with`/`with_recursive`, while the
// calling thread owns `word`'s monitor; the monitor's enter (Acquire) and
// exit (Release) order those accesses between threads, and the `&Cell` handed
// to the body is not `Send` and cannot outlive the call. Two accesses on one
// thread (reentry) are fine for a `Cell`.
unsafe impl Sync for MetaWord {}

impl CounterLock for MetaWord {
    const NAME: &'static str = "metalock_word";
    fn new(value: u64) -> Self {
        Self {
            word: MultiUseWord::new(),
            value: Cell::new(value),
        }
    }
    #[inline(always)]
    fn with<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        let _guard = self.word.lock();
        f(&self.value)
    }
}

impl RecursiveLock for MetaWord {
    const NAME: &'static str = "metalock_word";
    fn new_recursive(value: u64) -> Self {
        <Self as CounterLock>::new(value)
    }
    #[inline(always)]
    fn with_recursive<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        let _outer = self.word.lock();
        let _inner = self.word.lock();
        f(&self.value)
    }
}

/// `metalock::Synchronized<u64>`.
pub struct MetaSync(Synchronized<u64>);

impl CounterLock for MetaSync {
    const NAME: &'static str = "metalock_sync";
    fn new(value: u64) -> Self {
        Self(Synchronized::new(value))
    }
    #[inline(always)]
    fn with<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        let mut guard = self.0.lock();
        f(Cell::from_mut(&mut *guard))
    }
}

/// `parking_lot::Mutex<u64>`.
pub struct PlMutex(parking_lot::Mutex<u64>);

impl CounterLock for PlMutex {
    const NAME: &'static str = "parking_lot";
    fn new(value: u64) -> Self {
        Self(parking_lot::Mutex::new(value))
    }
    #[inline(always)]
    fn with<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        let mut guard = self.0.lock();
        f(Cell::from_mut(&mut *guard))
    }
}

/// `parking_lot::ReentrantMutex<Cell<u64>>`.
pub struct PlReentrant(parking_lot::ReentrantMutex<Cell<u64>>);

impl RecursiveLock for PlReentrant {
    const NAME: &'static str = "parking_lot_reentrant";
    fn new_recursive(value: u64) -> Self {
        Self(parking_lot::ReentrantMutex::new(Cell::new(value)))
    }
    #[inline(always)]
    fn with_recursive<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        let _outer = self.0.lock();
        let inner = self.0.lock();
        f(&inner)
    }
}

/// `std::sync::Mutex<u64>`.
pub struct StdMutex(std::sync::Mutex<u64>);

impl CounterLock for StdMutex {
    const NAME: &'static str = "std";
    fn new(value: u64) -> Self {
        Self(std::sync::Mutex::new(value))
    }
    #[inline(always)]
    fn with<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        let mut guard = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        f(Cell::from_mut(&mut *guard))
    }
}

/// The floor: a spin lock acquired by one compare-and-swap and released by
/// one compare-and-swap when uncontended. Under contention it spins on a
/// plain load and yields the CPU after a while, so that 16 threads on 2 cores
/// do not burn whole time slices behind a preempted holder.
pub struct SpinLock {
    locked: AtomicBool,
    value: Cell<u64>,
}

// SAFETY: `value` is only reached inside `with`, between a successful
// acquiring CAS (Acquire) and the releasing CAS (Release), so one thread at a
// time touches it and the accesses are ordered; the `&Cell` is not `Send` and
// cannot outlive the call.
unsafe impl Sync for SpinLock {}

/// Spins on a busy lock this many times before yielding.
const SPINS_BEFORE_YIELD: u32 = 64;

impl SpinLock {
    #[inline(always)]
    fn acquire(&self) {
        while self
            .locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            wait_while_set(&self.locked);
        }
    }

    #[inline(always)]
    fn release(&self) {
        let released =
            self.locked
                .compare_exchange(true, false, Ordering::Release, Ordering::Relaxed);
        debug_assert!(released.is_ok(), "spin lock released while free");
    }
}

#[cold]
fn wait_while_set(flag: &AtomicBool) {
    let mut spins = 0;
    while flag.load(Ordering::Relaxed) {
        if spins < SPINS_BEFORE_YIELD {
            spins += 1;
            std::hint::spin_loop();
        } else {
            thread::yield_now();
        }
    }
}

impl CounterLock for SpinLock {
    const NAME: &'static str = "cas_floor";
    fn new(value: u64) -> Self {
        Self {
            locked: AtomicBool::new(false),
            value: Cell::new(value),
        }
    }
    #[inline(always)]
    fn with<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        self.acquire();
        let result = f(&self.value);
        self.release();
        result
    }
}

/// The recursive floor: a spin lock with an owner and a count; the first
/// level takes one CAS and the last release one CAS, inner levels only touch
/// the owner's count.
pub struct ReentrantSpinLock {
    /// 0 or the owning thread's id.
    owner: AtomicUsize,
    /// Levels held; touched only by the owner.
    count: Cell<usize>,
    value: Cell<u64>,
}

// SAFETY: `count` and `value` are only touched by the thread whose id is in
// `owner`, set by an Acquire CAS and cleared by a Release CAS, so one thread
// at a time touches them and the accesses are ordered.
unsafe impl Sync for ReentrantSpinLock {}

/// A non-zero id, unique among live threads.
#[inline(always)]
fn thread_id() -> usize {
    thread_local!(static ID: u8 = const { 0 });
    ID.with(|id| id as *const u8 as usize)
}

impl ReentrantSpinLock {
    #[inline(always)]
    fn acquire(&self) {
        let me = thread_id();
        if self.owner.load(Ordering::Relaxed) == me {
            self.count.set(self.count.get() + 1);
            return;
        }
        while self
            .owner
            .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            let mut spins = 0;
            while self.owner.load(Ordering::Relaxed) != 0 {
                if spins < SPINS_BEFORE_YIELD {
                    spins += 1;
                    std::hint::spin_loop();
                } else {
                    thread::yield_now();
                }
            }
        }
        self.count.set(1);
    }

    #[inline(always)]
    fn release(&self) {
        let count = self.count.get() - 1;
        self.count.set(count);
        if count == 0 {
            let released =
                self.owner
                    .compare_exchange(thread_id(), 0, Ordering::Release, Ordering::Relaxed);
            debug_assert!(released.is_ok(), "reentrant spin lock not ours");
        }
    }
}

impl RecursiveLock for ReentrantSpinLock {
    const NAME: &'static str = "cas_floor_reentrant";
    fn new_recursive(value: u64) -> Self {
        Self {
            owner: AtomicUsize::new(0),
            count: Cell::new(0),
            value: Cell::new(value),
        }
    }
    #[inline(always)]
    fn with_recursive<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        self.acquire();
        self.acquire();
        let result = f(&self.value);
        self.release();
        self.release();
        result
    }
}

// ---------------------------------------------------------------------------
// Uncontended: the paper's Fig. 9 method.

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

// ---------------------------------------------------------------------------
// Contended: one object, T threads.

/// Thread counts of the contended benchmarks.
pub const THREAD_COUNTS: [usize; 3] = [2, 4, 16];

/// `elapsed`, the time of `done` units of work, scaled to `wanted` units.
pub fn scale(elapsed: Duration, wanted: u64, done: u64) -> Duration {
    if done == 0 || wanted == done {
        return elapsed;
    }
    elapsed.mul_f64(wanted as f64 / done as f64)
}

/// Runs `body(i)` for `i` in `0..threads`, one thread each, released
/// together by a barrier, and returns the results and the time from the
/// first thread's start to the last thread's end (measured by the threads
/// themselves, so thread creation and the wake-up from the barrier are not
/// counted).
pub fn timed_threads<R: Send>(
    threads: usize,
    body: impl Fn(usize) -> R + Sync,
) -> (Duration, Vec<R>) {
    let barrier = Barrier::new(threads);
    let outcomes: Vec<(Instant, Instant, R)> = thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (body, barrier) = (&body, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    let start = Instant::now();
                    let result = body(i);
                    (start, Instant::now(), result)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("benchmark thread panicked"))
            .collect()
    });
    let first = outcomes.iter().map(|o| o.0).min().expect("no threads");
    let last = outcomes.iter().map(|o| o.1).max().expect("no threads");
    (
        last.duration_since(first),
        outcomes.into_iter().map(|o| o.2).collect(),
    )
}

/// Least work per timed multi-threaded run, so that starting the threads
/// stays negligible even when criterion asks for a few iterations (warm-up,
/// `--quick`); the time is scaled back to the work asked for.
pub const MIN_CONTENDED_OPS: u64 = 20_000;
/// As [`MIN_CONTENDED_OPS`], for the bounded buffer (items).
pub const MIN_BUFFER_ITEMS: u64 = 2_000;
/// As [`MIN_CONTENDED_OPS`], for ping-pong (round trips).
pub const MIN_ROUND_TRIPS: u64 = 200;

/// The time of `ops` lock/critical-section/unlock operations split evenly
/// over `threads` threads contending for `lock` (at least
/// [`MIN_CONTENDED_OPS`] are run, and the time scaled).
pub fn contended_ops<L: CounterLock + Sync>(lock: &L, threads: usize, ops: u64) -> Duration {
    let per_thread = ops.max(MIN_CONTENDED_OPS).div_ceil(threads as u64);
    let (elapsed, _) = timed_threads(threads, |_| {
        for _ in 0..per_thread {
            lock.with(critical_section);
            think();
        }
    });
    scale(elapsed, ops, per_thread * threads as u64)
}

/// Process CPU time (user + system, all threads) so far.
#[cfg(unix)]
pub fn cpu_time() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: `usage` is valid for writes of one `rusage`, which is all
    // getrusage writes.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    assert_eq!(rc, 0, "getrusage failed");
    // SAFETY: getrusage returned 0, so it filled in `usage`.
    let usage = unsafe { usage.assume_init() };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Process CPU time: not measured on this platform.
#[cfg(not(unix))]
pub fn cpu_time() -> Duration {
    Duration::ZERO
}

/// The calling thread's CPU time (user + system) so far.
#[cfg(target_os = "linux")]
pub fn thread_cpu_time() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: as in `cpu_time`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr()) };
    assert_eq!(rc, 0, "getrusage failed");
    // SAFETY: getrusage returned 0, so it filled in `usage`.
    let usage = unsafe { usage.assume_init() };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// A thread's CPU time: not measured on this platform.
#[cfg(not(target_os = "linux"))]
pub fn thread_cpu_time() -> Duration {
    Duration::ZERO
}

/// Most over fewest of `values` (infinite if the fewest is 0).
fn spread(values: impl Iterator<Item = f64> + Clone) -> f64 {
    let max = values.clone().fold(0.0, f64::max);
    let min = values.fold(f64::INFINITY, f64::min);
    if min > 0.0 { max / min } else { f64::INFINITY }
}

/// The outcome of a fixed-duration contention round.
#[derive(Clone, Debug)]
pub struct ContentionStats {
    /// Operations completed by each thread.
    pub ops: Vec<u64>,
    /// Wall time of the round.
    pub wall: Duration,
    /// Process CPU time spent during the round.
    pub cpu: Duration,
    /// CPU time each thread got during the round (zero where not measured).
    pub thread_cpu: Vec<Duration>,
}

impl ContentionStats {
    /// All threads' operations.
    pub fn total_ops(&self) -> u64 {
        self.ops.iter().sum()
    }

    /// Operations per second, all threads together.
    pub fn ops_per_sec(&self) -> f64 {
        self.total_ops() as f64 / self.wall.as_secs_f64()
    }

    /// CPU nanoseconds per operation, all threads together.
    pub fn cpu_ns_per_op(&self) -> f64 {
        self.cpu.as_nanos() as f64 / self.total_ops().max(1) as f64
    }

    /// Fairness: most operations by one thread over fewest by one thread
    /// (1 is perfectly fair; infinite if a thread starved).
    pub fn max_over_min(&self) -> f64 {
        spread(self.ops.iter().map(|&n| n as f64))
    }

    /// The same spread of the CPU time the scheduler gave each thread: on
    /// fewer cores than threads, no lock can make the operations fairer
    /// than this without holding back the threads that run most.
    pub fn cpu_max_over_min(&self) -> f64 {
        spread(self.thread_cpu.iter().map(Duration::as_secs_f64))
    }
}

/// Lets `threads` threads contend for `lock` for `duration`, each counting
/// its operations until a stop flag, and measures wall and process CPU time.
pub fn timed_contention<L: CounterLock + Sync>(
    lock: &L,
    threads: usize,
    duration: Duration,
) -> ContentionStats {
    let barrier = Barrier::new(threads + 1);
    let stop = AtomicBool::new(false);
    let (ops, start, cpu_start) = thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    let cpu_start = thread_cpu_time();
                    let mut ops = 0_u64;
                    while !stop.load(Ordering::Relaxed) {
                        lock.with(critical_section);
                        think();
                        ops += 1;
                    }
                    (ops, thread_cpu_time() - cpu_start)
                })
            })
            .collect();
        let cpu_start = cpu_time();
        barrier.wait();
        let start = Instant::now();
        thread::sleep(duration);
        stop.store(true, Ordering::Relaxed);
        let per_thread: Vec<(u64, Duration)> = handles
            .into_iter()
            .map(|h| h.join().expect("contending thread panicked"))
            .collect();
        (per_thread, start, cpu_start)
    });
    ContentionStats {
        ops: ops.iter().map(|&(n, _)| n).collect(),
        wall: start.elapsed(),
        cpu: cpu_time() - cpu_start,
        thread_cpu: ops.iter().map(|&(_, cpu)| cpu).collect(),
    }
}

/// One row of the contention table the benches print.
pub fn contention_row(name: &str, threads: usize, stats: &ContentionStats) -> String {
    format!(
        "{name:<16} {threads:>3} {:>10.2} {:>10.1} {:>9.2} {:>9.2}  {:?}",
        stats.ops_per_sec() / 1e6,
        stats.cpu_ns_per_op(),
        stats.max_over_min(),
        stats.cpu_max_over_min(),
        stats.ops,
    )
}

/// The header of the contention table the benches print.
pub fn contention_header() -> String {
    format!(
        "{:<16} {:>3} {:>10} {:>10} {:>9} {:>9}  ops per thread",
        "lock", "thr", "Mops/s", "CPU ns/op", "max/min", "cpu m/m"
    )
}

// ---------------------------------------------------------------------------
// Bounded buffer.

/// Capacity of the bounded buffer.
pub const BUFFER_CAPACITY: usize = 16;

/// Producer/consumer pair counts of the bounded-buffer benchmarks.
pub const PAIR_COUNTS: [usize; 2] = [1, 4];

/// A blocking bounded buffer of `u64`s.
pub trait BoundedBuffer: Sync + Sized {
    /// Column / benchmark name.
    const NAME: &'static str;
    /// An empty buffer of capacity [`BUFFER_CAPACITY`].
    fn new() -> Self;
    /// Appends `item`, waiting while the buffer is full.
    fn put(&self, item: u64);
    /// Removes the oldest item, waiting while the buffer is empty.
    fn take(&self) -> u64;
}

/// metalock: one monitor for both conditions, Java style (`wait` in a loop,
/// `notify_all`).
pub struct MetaBuffer(Synchronized<VecDeque<u64>>);

impl BoundedBuffer for MetaBuffer {
    const NAME: &'static str = "metalock_sync";
    fn new() -> Self {
        Self(Synchronized::new(VecDeque::with_capacity(BUFFER_CAPACITY)))
    }
    fn put(&self, item: u64) {
        let mut queue = self.0.lock();
        queue.wait_while(|q| q.len() >= BUFFER_CAPACITY);
        queue.push_back(item);
        queue.notify_all();
    }
    fn take(&self) -> u64 {
        let mut queue = self.0.lock();
        queue.wait_while(|q| q.is_empty());
        let item = queue.pop_front().expect("non-empty");
        queue.notify_all();
        item
    }
}

/// parking_lot: a Mutex and two Condvars.
pub struct PlBuffer {
    queue: parking_lot::Mutex<VecDeque<u64>>,
    not_full: parking_lot::Condvar,
    not_empty: parking_lot::Condvar,
}

impl BoundedBuffer for PlBuffer {
    const NAME: &'static str = "parking_lot";
    fn new() -> Self {
        Self {
            queue: parking_lot::Mutex::new(VecDeque::with_capacity(BUFFER_CAPACITY)),
            not_full: parking_lot::Condvar::new(),
            not_empty: parking_lot::Condvar::new(),
        }
    }
    fn put(&self, item: u64) {
        let mut queue = self.queue.lock();
        while queue.len() >= BUFFER_CAPACITY {
            self.not_full.wait(&mut queue);
        }
        queue.push_back(item);
        self.not_empty.notify_one();
    }
    fn take(&self) -> u64 {
        let mut queue = self.queue.lock();
        while queue.is_empty() {
            self.not_empty.wait(&mut queue);
        }
        let item = queue.pop_front().expect("non-empty");
        self.not_full.notify_one();
        item
    }
}

/// std: a Mutex and two Condvars.
pub struct StdBuffer {
    queue: std::sync::Mutex<VecDeque<u64>>,
    not_full: std::sync::Condvar,
    not_empty: std::sync::Condvar,
}

impl BoundedBuffer for StdBuffer {
    const NAME: &'static str = "std";
    fn new() -> Self {
        Self {
            queue: std::sync::Mutex::new(VecDeque::with_capacity(BUFFER_CAPACITY)),
            not_full: std::sync::Condvar::new(),
            not_empty: std::sync::Condvar::new(),
        }
    }
    fn put(&self, item: u64) {
        let queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        let mut queue = self
            .not_full
            .wait_while(queue, |q| q.len() >= BUFFER_CAPACITY)
            .unwrap_or_else(PoisonError::into_inner);
        queue.push_back(item);
        self.not_empty.notify_one();
    }
    fn take(&self) -> u64 {
        let queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        let mut queue = self
            .not_empty
            .wait_while(queue, |q| q.is_empty())
            .unwrap_or_else(PoisonError::into_inner);
        let item = queue.pop_front().expect("non-empty");
        self.not_full.notify_one();
        item
    }
}

/// The time to move `items` items in total through a fresh buffer of type
/// `B` with `pairs` producer/consumer pairs (at least [`MIN_BUFFER_ITEMS`]
/// are moved, and the time scaled).
pub fn buffer_transfer<B: BoundedBuffer>(pairs: usize, items: u64) -> Duration {
    let per_pair = items.max(MIN_BUFFER_ITEMS).div_ceil(pairs as u64);
    let buffer = B::new();
    let (elapsed, sums) = timed_threads(2 * pairs, |i| {
        if i < pairs {
            let first = i as u64 * per_pair;
            for item in first..first + per_pair {
                buffer.put(item);
            }
            0
        } else {
            (0..per_pair).map(|_| buffer.take()).sum::<u64>()
        }
    });
    let moved = per_pair * pairs as u64;
    let sum: u64 = sums.iter().sum();
    assert_eq!(sum, moved * (moved - 1) / 2, "{}: items lost", B::NAME);
    scale(elapsed, items, moved)
}

// ---------------------------------------------------------------------------
// Ping-pong.

/// Two threads taking turns through a monitor or Mutex + Condvar.
pub trait PingPong: Sync + Sized {
    /// Column / benchmark name.
    const NAME: &'static str;
    /// Turn: side `false` first.
    fn new() -> Self;
    /// Waits until it is `side`'s turn, hands the turn to the other side and
    /// wakes it.
    fn play(&self, side: bool);
}

/// metalock: the turn flag in a `Synchronized`, `wait` + `notify_one`.
pub struct MetaPingPong(Synchronized<bool>);

impl PingPong for MetaPingPong {
    const NAME: &'static str = "metalock_sync";
    fn new() -> Self {
        Self(Synchronized::new(false))
    }
    fn play(&self, side: bool) {
        let mut turn = self.0.lock();
        turn.wait_while(|turn| *turn != side);
        *turn = !side;
        turn.notify_one();
    }
}

/// parking_lot: Mutex + Condvar.
pub struct PlPingPong(parking_lot::Mutex<bool>, parking_lot::Condvar);

impl PingPong for PlPingPong {
    const NAME: &'static str = "parking_lot";
    fn new() -> Self {
        Self(parking_lot::Mutex::new(false), parking_lot::Condvar::new())
    }
    fn play(&self, side: bool) {
        let mut turn = self.0.lock();
        while *turn != side {
            self.1.wait(&mut turn);
        }
        *turn = !side;
        self.1.notify_one();
    }
}

/// std: Mutex + Condvar.
pub struct StdPingPong(std::sync::Mutex<bool>, std::sync::Condvar);

impl PingPong for StdPingPong {
    const NAME: &'static str = "std";
    fn new() -> Self {
        Self(std::sync::Mutex::new(false), std::sync::Condvar::new())
    }
    fn play(&self, side: bool) {
        let turn = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut turn = self
            .1
            .wait_while(turn, |turn| *turn != side)
            .unwrap_or_else(PoisonError::into_inner);
        *turn = !side;
        self.1.notify_one();
    }
}

/// The time of `round_trips` round trips (each side moves once per round
/// trip) on a fresh `P` (at least [`MIN_ROUND_TRIPS`] are played, and the
/// time scaled).
pub fn ping_pong<P: PingPong>(round_trips: u64) -> Duration {
    let played = round_trips.max(MIN_ROUND_TRIPS);
    let game = P::new();
    let (elapsed, _) = timed_threads(2, |side| {
        for _ in 0..played {
            game.play(side == 1);
        }
    });
    scale(elapsed, round_trips, played)
}

// ---------------------------------------------------------------------------
// Misc.

/// Whether the process runs as a real benchmark (`cargo bench`), as opposed
/// to criterion's test mode (`cargo test --benches`, `cargo bench -- --test`).
pub fn bench_mode() -> bool {
    let mut bench = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--bench" => bench = true,
            "--test" | "--list" => return false,
            _ => {}
        }
    }
    bench
}

/// The median of `values` (which it sorts); NaN if empty.
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// The criterion settings both benches share: small samples, so that the
/// whole suite stays within a few minutes on 2 cores.
pub fn criterion() -> criterion::Criterion {
    criterion::Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args()
}
