//! Stress: 32 threads on (at most) 2 cores, 64 objects (every fourth fair),
//! a random mix of enter, recursive enter, try and timed enter, exit and
//! fair exit, timed wait, notify and payload operations.
//!
//! Checks, for a bounded number of operations:
//! - per-object counters, incremented only under the monitor through an
//!   `UnsafeCell`, equal the increments the threads made (mutual exclusion);
//! - every thread finishes before a watchdog deadline (no deadlock, and every
//!   waiter returns: each wait has a short timeout, so a waiter that never
//!   returns is a lost invitation to re-enter, not a missing notification);
//! - every waiter a notify marked reports "not timed out", and no other
//!   waiter does: the number of marks equals the number of notified returns,
//!   object by object (no lost notification, no invented one);
//! - depth and payload are intact after every operation;
//! - lock records taken from the allocator stay bounded, and a second round
//!   of threads, which reuses the pooled execution environments, takes none.
//!
//! A second test runs producers and consumers with *untimed* waits, where a
//! lost wake-up can only show as a hang, caught by the same watchdog.

mod common;

use common::Watchdog;
use common::watched::run_watched;
use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

use metalock::{Instant, MonitorGuard, MultiUseWord, lock_records_allocated};

const THREADS: usize = 32;
const OBJECTS: usize = 64;
/// Half the operations pick one of the first few objects, so that waits
/// meet notifies.
const HOT_OBJECTS: usize = 4;
const OPS_PER_THREAD: usize = 3_000;
/// How long all threads of a round may take before the test declares a hang.
const WATCHDOG: Duration = Duration::from_secs(60);
/// The whole test, rounds and checks between them.
const HANG: Duration = Duration::from_secs(300);
/// The low bits of a payload identify the object; a thread that holds the
/// monitor may put its tag in the high bits, and must remove it on exit.
const ID_MASK: usize = 0xFFFF_FFFF;

/// An object with a monitor and a counter only touched under it.
struct Object {
    word: MultiUseWord,
    counter: UnsafeCell<u64>,
}

// SAFETY: `counter` is only accessed through `Object::bump`, by the thread
// that holds `word`'s monitor, which excludes every other thread.
unsafe impl Sync for Object {}

impl Object {
    /// Every fourth object is fair: each of its exits hands it to the
    /// thread queued longest, if any.
    fn new(id: usize) -> Self {
        Self {
            word: if id % 4 == 3 {
                MultiUseWord::fair_with_payload(id)
            } else {
                MultiUseWord::with_payload(id)
            },
            counter: UnsafeCell::new(0),
        }
    }

    /// Increments the counter; `guard` proves the calling thread holds the
    /// monitor.
    fn bump(&self, guard: &MonitorGuard<'_>) {
        assert!(std::ptr::eq(guard.word(), &self.word));
        // SAFETY: the guard proves the calling thread owns the monitor, so no
        // other thread touches the counter, and no reference to it outlives
        // this statement.
        unsafe { *self.counter.get() += 1 };
    }

    fn counter(&self) -> u64 {
        let _g = self.word.lock();
        // SAFETY: read under the monitor, as in `bump`.
        unsafe { *self.counter.get() }
    }
}

/// xorshift64*: deterministic per thread, no dependency.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() >> 33) as usize % n
    }
}

/// What one thread did, per object.
#[derive(Default)]
struct Tally {
    increments: Vec<u64>,
    /// Waiters marked by this thread's notify_one / notify_all.
    marked: Vec<u64>,
    /// This thread's waits that reported "not timed out".
    notified_returns: Vec<u64>,
    waits: u64,
}

impl Tally {
    fn new() -> Self {
        Self {
            increments: vec![0; OBJECTS],
            marked: vec![0; OBJECTS],
            notified_returns: vec![0; OBJECTS],
            waits: 0,
        }
    }
}

/// Checks the payload of an object whose monitor the caller may or may not
/// hold: the object's id must be intact whatever tag a holder added.
fn check_payload(objects: &[Object], i: usize) {
    let payload = objects[i].word.payload();
    assert_eq!(payload & ID_MASK, i, "payload of object {i}: {payload:#x}");
}

fn pick(rng: &mut Rng) -> usize {
    if rng.below(2) == 0 {
        rng.below(HOT_OBJECTS)
    } else {
        rng.below(OBJECTS)
    }
}

/// A timed wait on `guard`, counting its outcome; the depth is restored.
fn timed_wait(rng: &mut Rng, guard: &mut MonitorGuard<'_>, i: usize, tally: &mut Tally) {
    let depth = guard.depth();
    let timeout = Duration::from_millis(1 + rng.below(3) as u64);
    let result = if rng.below(4) == 0 {
        guard.wait_until(Instant::now() + timeout)
    } else {
        guard.wait_for(timeout)
    };
    tally.waits += 1;
    if !result.timed_out() {
        tally.notified_returns[i] += 1;
    }
    assert_eq!(guard.depth(), depth, "wait restores the depth");
    assert!(guard.word().is_held_by_current_thread());
}

fn notify(rng: &mut Rng, guard: &MonitorGuard<'_>, i: usize, tally: &mut Tally) {
    if rng.below(3) == 0 {
        tally.marked[i] += guard.notify_all() as u64;
    } else if guard.notify_one() {
        tally.marked[i] += 1;
    }
}

fn worker(objects: &[Object], seed: u64) -> Tally {
    let mut rng = Rng::new(seed);
    let mut tally = Tally::new();
    for _ in 0..OPS_PER_THREAD {
        let i = pick(&mut rng);
        let obj = &objects[i];
        match rng.below(100) {
            // Enter, increment, exit; a fair exit one time in five.
            0..=29 => {
                let g = obj.word.lock();
                assert_eq!(g.depth(), 1);
                obj.bump(&g);
                tally.increments[i] += 1;
                if rng.below(5) == 0 {
                    g.unlock_fair();
                }
            }
            // Recursive enter to depth 2..=4, increment at every level,
            // sometimes wait at the deepest one, exit in any order.
            30..=49 => {
                let levels = 2 + rng.below(3);
                let mut guards = Vec::with_capacity(levels);
                for level in 1..=levels {
                    let g = obj.word.lock();
                    assert_eq!(g.depth(), level);
                    obj.bump(&g);
                    tally.increments[i] += 1;
                    guards.push(g);
                }
                if rng.below(3) == 0 {
                    timed_wait(&mut rng, guards.last_mut().unwrap(), i, &mut tally);
                }
                while !guards.is_empty() {
                    let g = guards.swap_remove(rng.below(guards.len()));
                    drop(g);
                }
            }
            // Timed wait.
            50..=64 => {
                let mut g = obj.word.lock();
                obj.bump(&g);
                tally.increments[i] += 1;
                timed_wait(&mut rng, &mut g, i, &mut tally);
                obj.bump(&g);
                tally.increments[i] += 1;
            }
            // Notify one or all.
            65..=79 => {
                let g = obj.word.lock();
                obj.bump(&g);
                tally.increments[i] += 1;
                notify(&mut rng, &g, i, &mut tally);
            }
            // Two objects, entered in index order (no deadlock), with a
            // wait or a notify on the inner one.
            80..=87 => {
                let j = pick(&mut rng);
                let (a, b) = (i.min(j), i.max(j));
                let ga = objects[a].word.lock();
                let mut gb = objects[b].word.lock();
                objects[a].bump(&ga);
                objects[b].bump(&gb);
                tally.increments[a] += 1;
                tally.increments[b] += 1;
                if rng.below(2) == 0 {
                    timed_wait(&mut rng, &mut gb, b, &mut tally);
                } else {
                    notify(&mut rng, &gb, b, &mut tally);
                }
                if rng.below(2) == 0 {
                    drop(ga);
                    drop(gb);
                } else {
                    drop(gb);
                    drop(ga);
                }
            }
            // try_lock, or a timed enter that may give up from the queue:
            // increment only if we got in.
            88..=93 => {
                let timeout = Duration::from_micros(rng.below(200) as u64);
                let g = match rng.below(3) {
                    0 => obj.word.try_lock(),
                    1 => obj.word.try_lock_for(timeout),
                    _ => obj.word.try_lock_until(Instant::now() + timeout),
                };
                if let Some(g) = g {
                    assert_eq!(g.depth(), 1);
                    obj.bump(&g);
                    tally.increments[i] += 1;
                }
            }
            // Payload: tag it under the monitor, check, restore before exit.
            94..=97 => {
                let g = obj.word.lock();
                let tag = ((seed as usize + 1) << 32) | i;
                obj.word.set_payload(tag);
                assert_eq!(obj.word.payload(), tag);
                obj.bump(&g);
                tally.increments[i] += 1;
                obj.word.set_payload(i);
                assert_eq!(obj.word.payload(), i);
            }
            // Read the payload without the monitor.
            _ => check_payload(objects, i),
        }
    }
    tally
}

/// Serialises the tests of this file, so that the lock-record figures of one
/// are not disturbed by the threads of another.
static SERIAL: Mutex<()> = Mutex::new(());

/// One round: THREADS workers under the watchdog, and the checks. Returns
/// the lock records taken from the allocator during the round.
fn round(objects: &Arc<Vec<Object>>, seed_base: u64, expected: &mut [u64]) -> usize {
    let records_before = lock_records_allocated();
    let started = Instant::now();
    let jobs = (0..THREADS)
        .map(|t| {
            let objects = Arc::clone(objects);
            let job: Box<dyn FnOnce() -> Tally + Send> =
                Box::new(move || worker(&objects, seed_base + t as u64));
            job
        })
        .collect();
    let tallies = run_watched("stress", WATCHDOG, jobs);
    let elapsed = started.elapsed();

    let mut marked = vec![0_u64; OBJECTS];
    let mut notified = vec![0_u64; OBJECTS];
    let mut waits = 0;
    for tally in &tallies {
        for i in 0..OBJECTS {
            expected[i] += tally.increments[i];
            marked[i] += tally.marked[i];
            notified[i] += tally.notified_returns[i];
        }
        waits += tally.waits;
    }
    for (i, obj) in objects.iter().enumerate() {
        assert!(!obj.word.is_locked(), "object {i} left locked");
        assert_eq!(obj.word.payload(), i, "payload of object {i}");
        assert_eq!(obj.counter(), expected[i], "counter of object {i}");
        assert_eq!(
            marked[i], notified[i],
            "object {i}: waiters marked by notify vs waits that returned notified"
        );
    }
    // Across the objects some notify found a waiter, else the equalities
    // above checked nothing.
    assert!(
        marked.iter().sum::<u64>() > 0,
        "no notify ever found a waiter"
    );
    let records = lock_records_allocated() - records_before;
    println!(
        "stress round (seed {seed_base}): {THREADS} threads x {OPS_PER_THREAD} ops in \
         {elapsed:?}, {waits} timed waits, {} notified, lock records allocated: {records} \
         (total {})",
        notified.iter().sum::<u64>(),
        lock_records_allocated()
    );
    records
}

#[test]
fn stress_32_threads_64_objects() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _watchdog = Watchdog::arm(HANG);
    let objects: Arc<Vec<Object>> = Arc::new((0..OBJECTS).map(Object::new).collect());
    // Bind this thread's execution environment now, so that the checks
    // between the rounds do not take one of the pooled ones.
    drop(objects[0].word.lock());
    let mut expected = vec![0_u64; OBJECTS];

    let first = round(&objects, 1, &mut expected);
    // Each thread holds at most two monitors at a time, so its first batch
    // of records (8) should do; allow a lot of slack before calling it a
    // leak.
    assert!(
        first <= THREADS * 64,
        "{first} lock records allocated by {THREADS} threads: records leak"
    );

    // New threads take the exited threads' execution environments from the
    // pool, with their free lists: no record needs allocating.
    let second = round(&objects, 1_000, &mut expected);
    println!("lock records allocated: first round {first}, second round {second}");
    assert_eq!(
        second, 0,
        "the second round's threads should reuse the pooled records"
    );
}

/// An unbounded queue guarded by a monitor.
struct Queue {
    word: MultiUseWord,
    items: UnsafeCell<VecDeque<u64>>,
}

// SAFETY: `items` is only accessed through `push`, `pop` and `len`, by the
// thread that holds `word`'s monitor.
unsafe impl Sync for Queue {}

impl Queue {
    fn new() -> Self {
        Self {
            word: MultiUseWord::with_payload(0x0_0EE0),
            items: UnsafeCell::new(VecDeque::new()),
        }
    }

    fn check(&self, guard: &MonitorGuard<'_>) {
        assert!(std::ptr::eq(guard.word(), &self.word));
    }

    fn push(&self, guard: &MonitorGuard<'_>, item: u64) {
        self.check(guard);
        // SAFETY: the guard proves we own the monitor (see `Object::bump`);
        // the reference ends with the statement.
        unsafe { (*self.items.get()).push_back(item) };
    }

    fn pop(&self, guard: &MonitorGuard<'_>) -> Option<u64> {
        self.check(guard);
        // SAFETY: as in `push`.
        unsafe { (*self.items.get()).pop_front() }
    }

    fn len(&self, guard: &MonitorGuard<'_>) -> usize {
        self.check(guard);
        // SAFETY: as in `push`.
        unsafe { (*self.items.get()).len() }
    }
}

/// Marks the end of the stream for one consumer.
const POISON: u64 = u64::MAX;

/// Producers and consumers with *untimed* waits: a lost notification or a
/// lost invitation to re-enter leaves a consumer (or producer) blocked
/// forever, which the watchdog reports.
///
/// 1. Unbounded queue, only consumers wait, one `notify_one` per item (the
///    classic Java pattern that is correct with `notify`).
/// 2. A queue bounded to one item, producers and consumers both waiting on
///    the same monitor, woken with `notify_all`.
#[test]
fn no_lost_wakeup_with_untimed_waits() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _watchdog = Watchdog::arm(HANG);
    const PRODUCERS: usize = 8;
    const CONSUMERS: usize = 8;
    const ITEMS: u64 = 2_000;

    for bounded in [false, true] {
        let queue = Arc::new(Queue::new());
        // Puts `item` in the queue, waiting for room if it is bounded.
        let put = move |queue: &Queue, item: u64| {
            let mut g = queue.word.lock();
            while bounded && queue.len(&g) >= 1 {
                g.wait();
            }
            queue.push(&g, item);
            if bounded {
                g.notify_all();
            } else {
                g.notify_one();
            }
        };
        let producers_done = Arc::new(Barrier::new(PRODUCERS + 1));
        let mut jobs: Vec<Box<dyn FnOnce() -> (u64, u64) + Send>> = Vec::new();
        for p in 0..PRODUCERS as u64 {
            let queue = Arc::clone(&queue);
            let done = Arc::clone(&producers_done);
            jobs.push(Box::new(move || {
                for k in 0..ITEMS {
                    put(&queue, p * ITEMS + k);
                }
                done.wait();
                (0, 0)
            }));
        }
        // The poison pills, once every producer is done.
        {
            let queue = Arc::clone(&queue);
            jobs.push(Box::new(move || {
                producers_done.wait();
                for _ in 0..CONSUMERS {
                    put(&queue, POISON);
                }
                (0, 0)
            }));
        }
        for _ in 0..CONSUMERS {
            let queue = Arc::clone(&queue);
            jobs.push(Box::new(move || {
                let (mut count, mut sum) = (0, 0);
                loop {
                    let mut g = queue.word.lock();
                    let item = loop {
                        match queue.pop(&g) {
                            Some(item) => break item,
                            None => g.wait(),
                        }
                    };
                    if bounded {
                        g.notify_all();
                    }
                    if item == POISON {
                        return (count, sum);
                    }
                    count += 1;
                    sum += item;
                }
            }));
        }

        let started = Instant::now();
        let results = run_watched(
            if bounded { "bounded" } else { "unbounded" },
            WATCHDOG,
            jobs,
        );
        let (count, sum) = results
            .iter()
            .fold((0, 0), |(c, s), &(c1, s1)| (c + c1, s + s1));
        let n = PRODUCERS as u64 * ITEMS;
        assert_eq!(count, n, "every item consumed once");
        assert_eq!(sum, n * (n - 1) / 2, "every item consumed once");
        assert!(!queue.word.is_locked());
        assert_eq!(queue.word.payload(), 0x0_0EE0);
        println!(
            "{} queue: {n} items through {PRODUCERS} producers and {CONSUMERS} consumers \
             in {:?}",
            if bounded { "bounded" } else { "unbounded" },
            started.elapsed()
        );
    }
}
