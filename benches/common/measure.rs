//! Measuring: resource usage, timed thread runs (criterion's fixed amounts
//! of work), fixed-duration rounds (the sweeps' tables), interleaving and
//! medians.

use std::fmt;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// CPU time and voluntary context switches (a thread blocking: a futex wait,
/// a sleep) used so far, by the process or by one thread.
#[derive(Clone, Copy, Debug, Default)]
pub struct Usage {
    /// User + system time.
    pub cpu: Duration,
    /// `ru_nvcsw`.
    pub voluntary_switches: u64,
}

impl Usage {
    /// The whole process's usage, every thread included.
    #[cfg(unix)]
    pub fn process() -> Self {
        getrusage(libc::RUSAGE_SELF)
    }

    /// The whole process's usage: not measured on this platform.
    #[cfg(not(unix))]
    pub fn process() -> Self {
        Self::default()
    }

    /// The calling thread's usage.
    #[cfg(target_os = "linux")]
    pub fn thread() -> Self {
        getrusage(libc::RUSAGE_THREAD)
    }

    /// The calling thread's usage: not measured on this platform.
    #[cfg(not(target_os = "linux"))]
    pub fn thread() -> Self {
        Self::default()
    }

    /// What was used between `earlier` and `self`.
    fn since(self, earlier: Self) -> Self {
        Self {
            cpu: self.cpu.saturating_sub(earlier.cpu),
            voluntary_switches: self
                .voluntary_switches
                .saturating_sub(earlier.voluntary_switches),
        }
    }
}

#[cfg(unix)]
fn getrusage(who: libc::c_int) -> Usage {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: `usage` is valid for writes of one `rusage`, which is all
    // getrusage writes, and `who` is one of the `RUSAGE_*` constants.
    let rc = unsafe { libc::getrusage(who, usage.as_mut_ptr()) };
    assert_eq!(rc, 0, "getrusage failed");
    // SAFETY: getrusage returned 0, so it filled in `usage`.
    let usage = unsafe { usage.assume_init() };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Usage {
        cpu: tv(usage.ru_utime) + tv(usage.ru_stime),
        voluntary_switches: usage.ru_nvcsw as u64,
    }
}

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
/// counted). For criterion's `iter_custom`, which asks for an amount of work.
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

/// The number and length of the fixed-duration rounds of a measurement.
#[derive(Clone, Copy, Debug)]
pub struct Rounds {
    /// Rounds per lock (per cell, in a sweep).
    pub count: usize,
    /// Length of one round.
    pub length: Duration,
}

impl fmt::Display for Rounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = if self.count == 1 { "" } else { "s" };
        write!(f, "{} round{plural} of {:?}", self.count, self.length)
    }
}

/// What one fixed-duration round measured.
#[derive(Clone, Debug)]
pub struct RoundStats {
    /// Units of work each thread completed: operations, items received,
    /// round trips. A thread that only serves others (a producer, the
    /// answering side of ping-pong) counts none, so that the total is the
    /// work done once.
    pub units: Vec<u64>,
    /// Wall time from the threads' release to the last one's end.
    pub wall: Duration,
    /// Process CPU time (user + system, every thread) over the round.
    pub cpu: Duration,
    /// The CPU time each thread got (zero where not measured).
    pub thread_cpu: Vec<Duration>,
    /// Voluntary context switches of the round's threads, that is how often
    /// they blocked (zero where not measured).
    pub voluntary_switches: u64,
}

impl RoundStats {
    /// All threads' units.
    pub fn total(&self) -> u64 {
        self.units.iter().sum()
    }

    /// Units per second, all threads together.
    pub fn per_sec(&self) -> f64 {
        self.total() as f64 / self.wall.as_secs_f64()
    }

    /// CPU nanoseconds per unit, all threads together.
    pub fn cpu_ns_per_unit(&self) -> f64 {
        self.cpu.as_nanos() as f64 / self.total().max(1) as f64
    }

    /// Voluntary context switches per unit.
    pub fn switches_per_unit(&self) -> f64 {
        self.voluntary_switches as f64 / self.total().max(1) as f64
    }

    /// Fairness: most units by one thread over fewest by one thread (1 is
    /// perfectly fair; infinite if a thread starved). Meaningful where every
    /// thread does the same work.
    pub fn max_over_min(&self) -> f64 {
        spread(self.units.iter().map(|&n| n as f64))
    }

    /// The same spread of the CPU time the scheduler gave each thread: on
    /// fewer cores than threads, no lock can make the operations fairer
    /// than this without holding back the threads that run most.
    pub fn cpu_max_over_min(&self) -> f64 {
        spread(self.thread_cpu.iter().map(Duration::as_secs_f64))
    }
}

/// Most over fewest of `values` (infinite if the fewest is 0).
fn spread(values: impl Iterator<Item = f64> + Clone) -> f64 {
    let max = values.clone().fold(0.0, f64::max);
    let min = values.fold(f64::INFINITY, f64::min);
    if min > 0.0 { max / min } else { f64::INFINITY }
}

/// Runs `body(i, stop)` for `i` in `0..threads`, one thread each, released
/// together by a barrier; after `length` the stop flag is set, and each body
/// returns how many units of work it did once it has wound down (a body
/// that may block must make sure every thread it could block on sees the
/// flag). Measures the wall time from the first thread's start to the last
/// thread's end, by the threads' own clocks (as `timed_threads`), the
/// process CPU time, and each thread's CPU time and voluntary context
/// switches from its release to its end.
pub fn timed_round(
    threads: usize,
    length: Duration,
    body: impl Fn(usize, &AtomicBool) -> u64 + Sync,
) -> RoundStats {
    let barrier = Barrier::new(threads + 1);
    let stop = AtomicBool::new(false);
    let (per_thread, wall, process) = thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (body, barrier, stop) = (&body, &barrier, &stop);
                s.spawn(move || {
                    barrier.wait();
                    let before = Usage::thread();
                    let start = Instant::now();
                    let units = body(i, stop);
                    let end = Instant::now();
                    (units, Usage::thread().since(before), start, end)
                })
            })
            .collect();
        let before = Usage::process();
        barrier.wait();
        thread::sleep(length);
        stop.store(true, Ordering::Relaxed);
        let per_thread: Vec<(u64, Usage, Instant, Instant)> = handles
            .into_iter()
            .map(|h| h.join().expect("benchmark thread panicked"))
            .collect();
        // The threads' own clocks: with more threads than CPUs, this one
        // may run long after the barrier let them go (39-118 ms at 16
        // threads on 2 vCPUs), and its own start made throughput up to
        // 1.55x too high.
        let first = per_thread.iter().map(|t| t.2).min().expect("no threads");
        let last = per_thread.iter().map(|t| t.3).max().expect("no threads");
        (
            per_thread,
            last.duration_since(first),
            Usage::process().since(before),
        )
    });
    RoundStats {
        units: per_thread.iter().map(|t| t.0).collect(),
        wall,
        cpu: process.cpu,
        thread_cpu: per_thread.iter().map(|t| t.1.cpu).collect(),
        voluntary_switches: per_thread.iter().map(|t| t.1.voluntary_switches).sum(),
    }
}

/// The medians over rounds of what [`RoundStats`] measures.
#[derive(Clone, Copy, Debug)]
pub struct Summary {
    /// Rounds summarised.
    pub rounds: usize,
    /// Units per second.
    pub per_sec: f64,
    /// Process CPU nanoseconds per unit.
    pub cpu_ns_per_unit: f64,
    /// Most over fewest units per thread.
    pub max_over_min: f64,
    /// Most over least CPU time per thread.
    pub cpu_max_over_min: f64,
    /// Voluntary context switches per unit.
    pub switches_per_unit: f64,
}

impl Summary {
    /// The median of each figure over `rounds`, taken separately.
    pub fn of(rounds: &[RoundStats]) -> Self {
        let metric =
            |f: fn(&RoundStats) -> f64| median(&mut rounds.iter().map(f).collect::<Vec<_>>());
        Self {
            rounds: rounds.len(),
            per_sec: metric(RoundStats::per_sec),
            cpu_ns_per_unit: metric(RoundStats::cpu_ns_per_unit),
            max_over_min: metric(RoundStats::max_over_min),
            cpu_max_over_min: metric(RoundStats::cpu_max_over_min),
            switches_per_unit: metric(RoundStats::switches_per_unit),
        }
    }
}

/// Runs `run` on every entry of `runs`, `warm_ups + rounds` times,
/// interleaved (round 1 of every entry, then round 2 of every entry, ...)
/// so that drifting machine load, frequency or placement hits every entry
/// alike, each round in the order of [`round_order`] from round `first`
/// on. A `parking_lot::Mutex`-against-itself control of the sweep's cells
/// with nothing inside or outside the lock measured the first of two 2-4%
/// slower than the second: over a number of rounds that is a multiple of
/// the entries, every entry runs first, and in every other position,
/// equally often, and callers that run fewer rounds vary `first` (by cell)
/// so that it evens out over a run. Returns the last `rounds` samples per
/// entry, in the order of `runs`; the first `warm_ups` rounds are
/// discarded.
pub fn interleaved<R, T>(
    runs: &[R],
    rounds: usize,
    warm_ups: usize,
    first: usize,
    mut run: impl FnMut(&R) -> T,
) -> Vec<Vec<T>> {
    let mut samples: Vec<Vec<T>> = runs.iter().map(|_| Vec::with_capacity(rounds)).collect();
    for round in 0..warm_ups + rounds {
        for position in 0..runs.len() {
            let entry = round_order(runs.len(), first + round, position);
            let sample = run(&runs[entry]);
            if round >= warm_ups {
                samples[entry].push(sample);
            }
        }
    }
    samples
}

/// The entry that runs at `position` of round `round` among `entries`: a
/// Williams design (the sequence 0, 1, n-1, 2, n-2, ... shifted by the
/// round), so that over `entries` consecutive rounds each entry runs once
/// in each position, and, for an even number of entries, once right after
/// each other entry.
pub fn round_order(entries: usize, round: usize, position: usize) -> usize {
    let base = match position {
        0 => 0,
        odd if odd % 2 == 1 => odd.div_ceil(2),
        even => entries - even / 2,
    };
    (base + round) % entries
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

/// Round trips in one batch of [`line_round_trip`].
const ROUND_TRIPS: u64 = 50_000;
/// Batches of [`line_round_trip`]; the median is kept.
const ROUND_TRIP_BATCHES: usize = 5;

/// A cache line of its own (and its adjacent-line prefetch partner's).
#[repr(align(128))]
struct OwnLine(AtomicU64);

/// How long one cache line takes to go from one thread to another and
/// back: two threads take turns writing one atomic, each spinning until it
/// sees the other's write. Every contended figure moves with it, a keyed
/// monitor's (two lines per hand-off) the most. On this VM it moved
/// between about 70 and 800 ns from one minute to the next, presumably as
/// the host placed the two virtual CPUs; the threads are not pinned, so on
/// a larger machine it is the round trip of whichever two CPUs they got.
/// `None` with fewer than two CPUs, where the threads would only take turns
/// by preemption.
pub fn line_round_trip() -> Option<Duration> {
    if thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return None;
    }
    let line = OwnLine(AtomicU64::new(0));
    // Spins until `line` holds `value`, yielding every few microseconds so
    // that a partner preempted on a busy machine gets to run.
    let await_value = |value: u64| {
        let mut spins = 0_u32;
        // Relaxed (every access to `line`): the value is the whole message;
        // the scope's spawn and join order the reset between batches.
        while line.0.load(Ordering::Relaxed) != value {
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(1 << 12) {
                thread::yield_now();
            }
        }
    };
    let mut batches: Vec<f64> = (0..ROUND_TRIP_BATCHES)
        .map(|_| {
            line.0.store(0, Ordering::Relaxed);
            thread::scope(|s| {
                s.spawn(|| {
                    for i in 0..=ROUND_TRIPS {
                        await_value(2 * i + 1);
                        line.0.store(2 * i + 2, Ordering::Relaxed);
                    }
                });
                // The clock starts after a first round trip, once the
                // partner runs.
                line.0.store(1, Ordering::Relaxed);
                await_value(2);
                let start = Instant::now();
                for i in 1..=ROUND_TRIPS {
                    line.0.store(2 * i + 1, Ordering::Relaxed);
                    await_value(2 * i + 2);
                }
                start.elapsed().as_nanos() as f64 / ROUND_TRIPS as f64
            })
        })
        .collect();
    Some(Duration::from_nanos(median(&mut batches) as u64))
}

/// A figure of [`line_round_trip`] for people.
pub fn round_trip_label(round_trip: Option<Duration>) -> String {
    round_trip.map_or_else(
        || "not measured (one CPU)".to_string(),
        |t| format!("{} ns", t.as_nanos()),
    )
}

/// The machine's CPU, as figures must name it: the model name, family and
/// model of the first CPU in `/proc/cpuinfo` (a virtual machine's model name
/// may be as short as "AMD EPYC", which the family and model then pin down).
pub fn cpu_model() -> String {
    let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
        return "unknown CPU".to_string();
    };
    let field = |name: &str| {
        info.lines()
            .find(|line| line.split(':').next().map(str::trim) == Some(name))
            .and_then(|line| line.split_once(':'))
            .map(|(_, value)| value.trim().to_string())
    };
    match (field("model name"), field("cpu family"), field("model")) {
        (Some(name), Some(family), Some(model)) => {
            format!("{name} (family {family}, model {model})")
        }
        (Some(name), ..) => name,
        _ => "unknown CPU".to_string(),
    }
}
