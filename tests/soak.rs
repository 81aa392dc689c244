//! A bounded soak: 32 threads at a time mix lock, fair unlock, try_lock,
//! timed enters, reentry, timed and untimed waits, notify_one and notify_all
//! on a few objects (one of them fair), and exit and get replaced all along
//! (thread churn). At the end:
//!
//! - every object's counter equals the increments its critical sections
//!   made (no lost update, no overlap: a flag set inside every critical
//!   section is never found set on entry);
//! - every notification is accounted for: the waiters that `notify_one` and
//!   `notify_all` said they marked equal the waits that returned notified
//!   (an untimed wait returns only when notified; a timed one says whether it
//!   was);
//! - lock records and execution environments stayed bounded by the threads
//!   alive at once.
//!
//! `METALOCK_SOAK_SECS` sets the length (CI: 120 s); the default is short so
//! that `cargo test` stays quick.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::thread;
use std::time::{Duration, Instant};

use common::Watchdog;
use common::rng::Rng;
use metalock::__test_hooks::exec_envs_allocated;
use metalock::{MonitorGuard, MultiUseWord, lock_records_allocated};

const LIVE_THREADS: usize = 32;
const OBJECTS: usize = 4;

/// One object: its monitor and what its critical sections touch.
struct Object {
    word: MultiUseWord,
    /// Incremented by load and store, only under the monitor: a lost update
    /// shows as a count below the tally.
    counter: AtomicU64,
    /// Set for the length of every critical section.
    inside: AtomicBool,
}

impl Object {
    fn new(fair: bool) -> Self {
        Self {
            word: if fair {
                MultiUseWord::new_fair()
            } else {
                MultiUseWord::new()
            },
            counter: AtomicU64::new(0),
            inside: AtomicBool::new(false),
        }
    }

    fn critical_section(&self, guard: &MonitorGuard<'_>) {
        assert!(std::ptr::eq(guard.word(), &self.word));
        assert!(!self.inside.swap(true, Relaxed), "two threads inside");
        self.counter.store(self.counter.load(Relaxed) + 1, Relaxed);
        self.inside.store(false, Relaxed);
    }
}

/// What one thread did.
#[derive(Default)]
struct Tally {
    increments: [u64; OBJECTS],
    /// Waiters that notify_one and notify_all said they marked.
    marked: u64,
    /// Waits that returned notified.
    notified: u64,
    ops: u64,
}

struct Shared {
    objects: Vec<Object>,
    stop: AtomicBool,
    /// Threads in an untimed wait, so that the shutdown can wake them.
    untimed_waiters: AtomicUsize,
}

fn worker(shared: &Shared, seed: u64) -> Tally {
    let mut rng = Rng(seed | 1);
    let mut tally = Tally::default();
    let ops = 200 + rng.below(2_000);
    for _ in 0..ops {
        if shared.stop.load(Relaxed) {
            break;
        }
        tally.ops += 1;
        let i = rng.below(OBJECTS as u64) as usize;
        let object = &shared.objects[i];
        match rng.below(100) {
            // Plain lock, sometimes reentered.
            0..=39 => {
                let outer = object.word.lock();
                object.critical_section(&outer);
                tally.increments[i] += 1;
                if rng.below(4) == 0 {
                    let inner = object.word.lock();
                    assert_eq!(inner.depth(), 2);
                    object.critical_section(&inner);
                    tally.increments[i] += 1;
                }
                if rng.below(5) == 0 {
                    outer.unlock_fair();
                }
            }
            // A try, or a timed enter that may give up from the queue.
            40..=54 => {
                let timeout = Duration::from_micros(rng.below(300));
                let guard = match rng.below(3) {
                    0 => object.word.try_lock(),
                    1 => object.word.try_lock_for(timeout),
                    _ => object.word.try_lock_until(Instant::now() + timeout),
                };
                if let Some(guard) = guard {
                    object.critical_section(&guard);
                    tally.increments[i] += 1;
                }
            }
            // Timed waits, at depth 1 or 2.
            55..=69 => {
                let outer = object.word.lock();
                let _inner = (rng.below(2) == 0).then(|| object.word.lock());
                let depth = outer.depth();
                let mut guard = outer;
                let result = if rng.below(2) == 0 {
                    guard.wait_for(Duration::from_micros(rng.below(2_000)))
                } else {
                    guard.wait_until(Instant::now() + Duration::from_micros(rng.below(2_000)))
                };
                assert_eq!(guard.depth(), depth, "a wait restores the depth");
                if !result.timed_out() {
                    tally.notified += 1;
                }
                object.critical_section(&guard);
                tally.increments[i] += 1;
            }
            // Untimed waits: returns only once notified.
            70..=74 => {
                let mut guard = object.word.lock();
                if !shared.stop.load(Relaxed) {
                    shared.untimed_waiters.fetch_add(1, Relaxed);
                    guard.wait();
                    shared.untimed_waiters.fetch_sub(1, Relaxed);
                    tally.notified += 1;
                }
                object.critical_section(&guard);
                tally.increments[i] += 1;
            }
            75..=89 => {
                let guard = object.word.lock();
                tally.marked += u64::from(guard.notify_one());
                object.critical_section(&guard);
                tally.increments[i] += 1;
            }
            _ => {
                let guard = object.word.lock();
                tally.marked += guard.notify_all() as u64;
                object.critical_section(&guard);
                tally.increments[i] += 1;
            }
        }
    }
    tally
}

#[test]
fn soak_mixed_operations_with_thread_churn() {
    let secs: u64 = std::env::var("METALOCK_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let _watchdog = Watchdog::arm(Duration::from_secs(secs + 60));
    let shared = Shared {
        objects: (0..OBJECTS)
            .map(|i| Object::new(i == OBJECTS - 1))
            .collect(),
        stop: AtomicBool::new(false),
        untimed_waiters: AtomicUsize::new(0),
    };
    let records_before = lock_records_allocated();
    let envs_before = exec_envs_allocated();
    let end = Instant::now() + Duration::from_secs(secs);
    let mut total = Tally::default();
    let mut threads_run = 0_u64;
    let add = |total: &mut Tally, t: Tally| {
        for (sum, n) in total.increments.iter_mut().zip(t.increments) {
            *sum += n;
        }
        total.marked += t.marked;
        total.notified += t.notified;
        total.ops += t.ops;
    };
    thread::scope(|s| {
        let mut live: Vec<thread::ScopedJoinHandle<'_, Tally>> = Vec::new();
        let mut seed = 0x5eed_u64;
        while Instant::now() < end {
            // Replace every thread that finished.
            let (done, running): (Vec<_>, Vec<_>) = live.into_iter().partition(|h| h.is_finished());
            live = running;
            for h in done {
                add(&mut total, h.join().expect("a soak thread failed"));
            }
            while live.len() < LIVE_THREADS {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let shared = &shared;
                let thread_seed = seed;
                live.push(s.spawn(move || worker(shared, thread_seed)));
                threads_run += 1;
            }
            thread::sleep(Duration::from_millis(1));
        }
        shared.stop.store(true, Relaxed);
        // Wake the untimed waiters; their returns count as notified, and
        // these notify_all calls as marking them.
        while live.iter().any(|h| !h.is_finished()) {
            for object in &shared.objects {
                let guard = object.word.lock();
                total.marked += guard.notify_all() as u64;
            }
            thread::sleep(Duration::from_millis(1));
        }
        for h in live {
            add(&mut total, h.join().expect("a soak thread failed"));
        }
    });
    assert_eq!(shared.untimed_waiters.load(Relaxed), 0);
    for (object, &expected) in shared.objects.iter().zip(&total.increments) {
        assert!(!object.word.is_locked());
        assert_eq!(
            object.counter.load(Relaxed),
            expected,
            "lost or extra update"
        );
    }
    assert_eq!(
        total.marked, total.notified,
        "notifications marked vs waits that returned notified"
    );
    let records = lock_records_allocated() - records_before;
    let envs = exec_envs_allocated() - envs_before;
    println!(
        "soak: {secs} s, {threads_run} threads, {} operations, {} notifications, {records} lock \
         records and {envs} environments allocated",
        total.ops, total.marked
    );
    // Each live thread holds at most two records at once (a reentered
    // monitor is one record): one first batch of 8 each, plus the harness.
    let live = LIVE_THREADS + 4;
    assert!(envs <= live, "{envs} environments for {live} live threads");
    assert!(
        records <= 8 * live,
        "{records} lock records for {live} live threads"
    );
}
