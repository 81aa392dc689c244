//! What `interrupt_stress.rs` and `interrupt_churn.rs` share: the monitors
//! of every kind, each with a condition and a counter, one worker's
//! operations and tally, the interrupter, and the checks.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::thread;
use std::time::Duration;

use crate::common::kinds::{Guard, Keyed, Kind};
use crate::common::rng::Rng;
use metalock::keyed_monitors;
use metalock::{Condition, InterruptHandle, Interrupted, MultiUseWord};
use metalock::{ReentrantSynchronized, Synchronized};

/// Monitors of each kind.
const PER_KIND: usize = 2;
const MONITORS: usize = 4 * PER_KIND;
/// Two per monitor: number `2 * m` is monitor `m`'s own, `2 * m + 1` its
/// condition's.
const WAIT_SETS: usize = 2 * MONITORS;
pub const HANG: Duration = Duration::from_secs(240);

/// A monitor of kind `K`, a condition used only with it, and a counter
/// updated only under it.
struct Monitor<K> {
    monitor: K,
    condition: Condition,
    counter: AtomicU64,
}

impl<K: Kind> Monitor<K> {
    fn new() -> Self {
        Self::of(K::make())
    }

    fn of(monitor: K) -> Self {
        Self {
            monitor,
            condition: Condition::new(),
            counter: AtomicU64::new(0),
        }
    }
}

pub struct Shared {
    words: Vec<Monitor<MultiUseWord>>,
    synchronized: Vec<Monitor<Synchronized<()>>>,
    keyed: Vec<Monitor<Keyed>>,
    reentrant: Vec<Monitor<ReentrantSynchronized<()>>>,
    /// The interrupt handles of the workers still running, by seed.
    handles: Mutex<Vec<(u64, InterruptHandle)>>,
    /// The handles of the workers that have exited, by seed.
    retired: Mutex<Vec<(u64, InterruptHandle)>>,
}

impl Shared {
    pub fn new() -> Self {
        Shared {
            words: (0..PER_KIND).map(|_| Monitor::new()).collect(),
            synchronized: (0..PER_KIND).map(|_| Monitor::new()).collect(),
            keyed: (0..PER_KIND)
                .map(|i| Monitor::of(Keyed::at(&GRANULE.0[i])))
                .collect(),
            reentrant: (0..PER_KIND).map(|_| Monitor::new()).collect(),
            handles: Mutex::new(Vec::new()),
            retired: Mutex::new(Vec::new()),
        }
    }
}

/// The bytes the keyed monitors lock: one 8-byte granule, so one home,
/// and whichever byte finds it serving another takes an overflow entry.
#[repr(align(8))]
struct Granule([u8; 8]);
static GRANULE: Granule = Granule([0; 8]);

/// What one worker did.
#[derive(Default)]
pub struct Tally {
    /// The worker's seed, which names its interrupt handle.
    pub seed: u64,
    /// Per wait set: waiters its notifies reached.
    reached: [u64; WAIT_SETS],
    /// Per wait set: its waits that returned notified.
    pub notified: [u64; WAIT_SETS],
    /// Per monitor: increments.
    increments: [u64; MONITORS],
    /// Waits and enters that reported an interrupt.
    pub interrupted: u64,
    /// Of those, enters (`lock_interruptibly`, `try_lock_for_interruptibly`).
    pub enters_interrupted: u64,
    /// Interruptible waits that returned notified.
    pub notified_interruptibly: u64,
    /// The interrupt flag, set when the worker ended.
    pub pending_at_end: bool,
}

/// How a wait ended.
enum End {
    Notified,
    TimedOut,
    Interrupted,
}

/// One operation on `m`, monitor number `monitor`: lock (twice, sometimes,
/// where `K` waits at any depth; the inner lock now and then interruptible,
/// with or without a timeout, and then skipping the rest if it did not
/// enter), bump the counter, then wait, notify, or neither, on its own wait
/// set or its condition's.
fn operate<K: Kind>(m: &Monitor<K>, monitor: usize, rng: &mut Rng, tally: &mut Tally) {
    let _outer = (K::DEEP_WAITS && rng.below(4) == 0).then(|| m.monitor.lock());
    let entered = match rng.below(8) {
        0 => m.monitor.lock_interruptibly().map(Some),
        1 => m
            .monitor
            .try_lock_for_interruptibly(Duration::from_micros(50 + rng.below(500))),
        _ => Ok(Some(m.monitor.lock())),
    };
    let mut guard = match entered {
        Ok(Some(guard)) => guard,
        Ok(None) => return,
        Err(Interrupted) => {
            tally.interrupted += 1;
            tally.enters_interrupted += 1;
            return;
        }
    };
    let depth = guard.depth();
    // A read-modify-write in two steps, so that a lost update shows;
    // Relaxed, as the monitor alone orders it (its enter acquires what the
    // last exit released).
    m.counter.store(m.counter.load(Relaxed) + 1, Relaxed);
    tally.increments[monitor] += 1;
    let on_condition = rng.below(2) == 1;
    let set = 2 * monitor + on_condition as usize;
    match rng.below(6) {
        0..=2 => {
            let timeout = Duration::from_micros(100 + rng.below(1_000));
            let variant = rng.below(3);
            let end = match (variant, on_condition) {
                (0, false) => timed(guard.wait_for(timeout).timed_out()),
                (0, true) => timed(m.condition.wait_for(&mut guard, timeout).timed_out()),
                (1, false) => interruptible(guard.wait_for_interruptibly(timeout)),
                (1, true) => interruptible(m.condition.wait_for_interruptibly(&mut guard, timeout)),
                (_, false) => untimed(guard.wait_interruptibly()),
                (_, true) => untimed(m.condition.wait_interruptibly(&mut guard)),
            };
            match end {
                End::Notified => {
                    tally.notified[set] += 1;
                    tally.notified_interruptibly += (variant > 0) as u64;
                }
                End::TimedOut => {}
                End::Interrupted => tally.interrupted += 1,
            }
            assert_eq!(guard.depth(), depth, "a wait restores the depth");
        }
        3 | 4 => {
            let all = rng.below(3) == 0;
            tally.reached[set] += match (all, on_condition) {
                (false, false) => guard.notify_one() as u64,
                (false, true) => m.condition.notify_one() as u64,
                (true, false) => guard.notify_all() as u64,
                (true, true) => m.condition.notify_all() as u64,
            };
        }
        _ => {}
    }
}

fn timed(timed_out: bool) -> End {
    if timed_out {
        End::TimedOut
    } else {
        End::Notified
    }
}

fn interruptible(result: Result<metalock::WaitTimeoutResult, Interrupted>) -> End {
    match result {
        Ok(result) => timed(result.timed_out()),
        Err(Interrupted) => End::Interrupted,
    }
}

fn untimed(result: Result<(), Interrupted>) -> End {
    match result {
        Ok(()) => End::Notified,
        Err(Interrupted) => End::Interrupted,
    }
}

pub fn worker(shared: &Shared, seed: u64, ops: usize) -> Tally {
    let handles = &shared.handles;
    let handle = metalock::interrupt_handle();
    handles.lock().unwrap().push((seed, handle.clone()));
    let mut rng = Rng(seed);
    let mut tally = Tally {
        seed,
        ..Tally::default()
    };
    for _ in 0..ops {
        let i = rng.below(PER_KIND as u64) as usize;
        match rng.below(4) {
            0 => operate(&shared.words[i], i, &mut rng, &mut tally),
            1 => operate(&shared.synchronized[i], PER_KIND + i, &mut rng, &mut tally),
            2 => operate(&shared.keyed[i], 2 * PER_KIND + i, &mut rng, &mut tally),
            _ => operate(&shared.reentrant[i], 3 * PER_KIND + i, &mut rng, &mut tally),
        }
    }
    handles.lock().unwrap().retain(|&(of, _)| of != seed);
    tally.pending_at_end = metalock::interrupted();
    shared.retired.lock().unwrap().push((seed, handle));
    tally
}

/// What the interrupter did.
pub struct Sent {
    /// Interrupts sent, by the seed of the worker whose handle took them.
    pub to: HashMap<u64, u64>,
    /// Of those, interrupts sent to workers that had exited.
    pub to_exited: u64,
    /// The most keyed monitors seen in use at once.
    pub keyed: usize,
}

impl Sent {
    pub fn total(&self) -> u64 {
        self.to.values().sum()
    }
}

/// Interrupts a running worker, at random, every 50 µs or so until
/// `done`, and every fourth time one that has exited, if any has; counts
/// what it sent, and the most keyed monitors it saw in use at once (two:
/// an overflow entry beside the home), looked at every 16th round (the
/// count scans the homes).
pub fn interrupter(shared: &Shared, done: &AtomicBool) -> Sent {
    let mut rng = Rng(0x5eed);
    let mut sent = Sent {
        to: HashMap::new(),
        to_exited: 0,
        keyed: 0,
    };
    for round in 0_u64.. {
        // Relaxed: a stop flag; nothing is read on its strength (the
        // results travel through the joins).
        if done.load(Relaxed) {
            break;
        }
        if round % 16 == 0 {
            sent.keyed = sent.keyed.max(keyed_monitors());
        }
        let handles = match round % 4 {
            3 => shared.retired.lock().unwrap(),
            _ => shared.handles.lock().unwrap(),
        };
        if !handles.is_empty() {
            let (seed, handle) = &handles[rng.below(handles.len() as u64) as usize];
            handle.interrupt();
            *sent.to.entry(*seed).or_default() += 1;
            sent.to_exited += u64::from(round % 4 == 3);
        }
        drop(handles);
        thread::sleep(Duration::from_micros(50));
    }
    sent
}

/// The checks both tests make of the workers' tallies.
pub fn check(shared: &Shared, tallies: &[Tally], sent: &Sent) -> Tally {
    let mut total = Tally::default();
    for tally in tallies {
        for set in 0..WAIT_SETS {
            total.reached[set] += tally.reached[set];
            total.notified[set] += tally.notified[set];
        }
        for monitor in 0..MONITORS {
            total.increments[monitor] += tally.increments[monitor];
        }
        total.interrupted += tally.interrupted;
        total.enters_interrupted += tally.enters_interrupted;
        total.notified_interruptibly += tally.notified_interruptibly;
        let to_it = sent.to.get(&tally.seed).copied().unwrap_or(0);
        assert!(
            tally.interrupted + u64::from(tally.pending_at_end) <= to_it,
            "worker {}: {} interrupts reported and {} pending, but {to_it} sent to it",
            tally.seed,
            tally.interrupted,
            tally.pending_at_end
        );
    }
    let counters = (shared.words.iter().map(|m| &m.counter))
        .chain(shared.synchronized.iter().map(|m| &m.counter))
        .chain(shared.keyed.iter().map(|m| &m.counter))
        .chain(shared.reentrant.iter().map(|m| &m.counter));
    // Relaxed: every worker that wrote a counter has been joined.
    for (i, counter) in counters.enumerate() {
        assert_eq!(
            counter.load(Relaxed),
            total.increments[i],
            "monitor {i}: lost updates"
        );
    }
    for set in 0..WAIT_SETS {
        assert_eq!(
            total.reached[set], total.notified[set],
            "wait set {set}: waiters the notifies reached vs waits that returned notified"
        );
    }
    // Else the checks above checked little.
    assert!(
        total.notified_interruptibly > 0,
        "no interruptible wait was notified"
    );
    assert!(
        total.interrupted > total.enters_interrupted,
        "no wait reported an interrupt"
    );
    assert!(
        total.enters_interrupted > 0,
        "no interruptible enter reported an interrupt"
    );
    assert!(
        sent.keyed >= 2,
        "the keyed monitors never used an overflow entry"
    );
    total
}
