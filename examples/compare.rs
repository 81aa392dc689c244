//! A short version of the benchmark suite (`benches/`), without criterion:
//! plain `Instant` timing, several repetitions interleaved across the locks,
//! medians. Prints one Markdown table comparing metalock with parking_lot,
//! std and a CAS spin-lock floor, ready to paste into the README.
//!
//! ```text
//! cargo run --release --example compare
//! ```
//!
//! Takes well under a minute on 2 cores. Figures from a busy machine are
//! noisy; compare columns of one run, not runs of different machines.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[path = "../benches/common/mod.rs"]
mod common;
use common::{
    Baseline, BoundedBuffer, ContentionStats, CounterLock, MetaBuffer, MetaPingPong, MetaSync,
    MetaWord, OBJECT_COUNTS, PAIR_COUNTS, PingPong, PlBuffer, PlMutex, PlPingPong, PlReentrant,
    RecursiveLock, ReentrantSpinLock, SpinLock, StdBuffer, StdMutex, StdPingPong, THREAD_COUNTS,
    median,
};

/// Columns: metalock raw word, metalock Synchronized, parking_lot, std, floor.
const COLUMNS: usize = 5;
const WORD: usize = 0;
const SYNC: usize = 1;
const PL: usize = 2;
const STD: usize = 3;
const FLOOR: usize = 4;

/// Uncontended: pairs per timed run, and runs per lock (after one warm-up).
const UNCONTENDED_PAIRS: u64 = 1_000_000;
const UNCONTENDED_REPS: usize = 15;
/// Contended: length of one fixed-duration round, and rounds per lock. Long
/// enough for the scheduler to even out 4 threads on 2 cores: in rounds of
/// 150 ms one thread often kept a core to itself for the whole round, and
/// max/min operations per thread measured that placement (up to 4-7 for
/// every lock) more than the lock.
const CONTENDED_ROUND: Duration = Duration::from_millis(500);
const CONTENDED_REPS: usize = 3;
/// Bounded buffer: items per producer/consumer pair, and runs per buffer.
const BUFFER_ITEMS_PER_PAIR: u64 = 20_000;
const BUFFER_REPS: usize = 5;
/// Ping-pong: round trips per run, and runs per implementation.
const PING_PONG_ROUND_TRIPS: u64 = 10_000;
const PING_PONG_REPS: usize = 3;

/// Whether smaller is better for a row.
#[derive(Clone, Copy, PartialEq)]
enum Better {
    Lower,
    Higher,
}

struct Row {
    scenario: String,
    unit: &'static str,
    better: Better,
    values: [Option<f64>; COLUMNS],
}

impl Row {
    fn new(scenario: impl Into<String>, unit: &'static str, better: Better) -> Self {
        Self {
            scenario: scenario.into(),
            unit,
            better,
            values: [None; COLUMNS],
        }
    }

    /// metalock (Synchronized, or the raw word where Synchronized does not
    /// apply) over parking_lot.
    fn ratio(&self) -> Option<f64> {
        let metalock = self.values[SYNC].or(self.values[WORD])?;
        let peer = self.values[PL]?;
        Some(metalock / peer)
    }
}

/// A timed run of one column, boxed so that different lock types share a
/// list; the generic measurement loop inside is monomorphised per type.
type Run<'a, T> = (usize, Box<dyn Fn() -> T + 'a>);

/// Runs every entry of `runs` `reps` times, interleaved (rep by rep) so that
/// drifting machine load hits every column alike, after one untimed warm-up
/// round. Returns the samples per entry.
fn interleaved<T>(runs: &[Run<'_, T>], reps: usize) -> Vec<Vec<T>> {
    let mut samples: Vec<Vec<T>> = runs.iter().map(|_| Vec::with_capacity(reps)).collect();
    for rep in 0..=reps {
        for (i, (_, run)) in runs.iter().enumerate() {
            let sample = run();
            if rep > 0 {
                samples[i].push(sample);
            }
        }
    }
    samples
}

fn ns_per(d: Duration, n: u64) -> f64 {
    d.as_nanos() as f64 / n as f64
}

/// Sync cost per pair (time minus baseline time of the same repetition,
/// medians over repetitions), for `runs` whose entry 0 is the baseline.
fn sync_costs(runs: &[Run<'_, Duration>], row: &mut Row) -> f64 {
    let samples = interleaved(runs, UNCONTENDED_REPS);
    let base: Vec<f64> = samples[0]
        .iter()
        .map(|&d| ns_per(d, UNCONTENDED_PAIRS))
        .collect();
    for ((column, _), times) in runs.iter().zip(&samples).skip(1) {
        let mut costs: Vec<f64> = times
            .iter()
            .zip(&base)
            .map(|(&d, b)| ns_per(d, UNCONTENDED_PAIRS) - b)
            .collect();
        row.values[*column] = Some(median(&mut costs));
    }
    median(&mut base.clone())
}

fn cycling_run<'a, L: CounterLock>(column: usize, objects: &'a [L]) -> Run<'a, Duration> {
    (
        column,
        Box::new(move || common::cycle(objects, UNCONTENDED_PAIRS)),
    )
}

fn uncontended(rows: &mut Vec<Row>, baselines: &mut Vec<String>) {
    for n in OBJECT_COUNTS {
        let base = common::objects::<Baseline>(n);
        let word = common::objects::<MetaWord>(n);
        let sync = common::objects::<MetaSync>(n);
        let pl = common::objects::<PlMutex>(n);
        let std = common::objects::<StdMutex>(n);
        let floor = common::objects::<SpinLock>(n);
        let runs = [
            cycling_run(usize::MAX, &base),
            cycling_run(WORD, &word),
            cycling_run(SYNC, &sync),
            cycling_run(PL, &pl),
            cycling_run(STD, &std),
            cycling_run(FLOOR, &floor),
        ];
        let objects = if n == 1 { "object" } else { "objects" };
        let mut row = Row::new(
            format!("uncontended pair, {n} {objects}"),
            "ns ↓",
            Better::Lower,
        );
        let base_ns = sync_costs(&runs, &mut row);
        baselines.push(format!("{n}: {base_ns:.2} ns"));
        rows.push(row);
    }

    fn recursive_run<L: RecursiveLock>(column: usize, object: &L) -> Run<'_, Duration> {
        (
            column,
            Box::new(move || common::recursive(object, UNCONTENDED_PAIRS)),
        )
    }
    let base = Baseline::new_recursive(0);
    let word = MetaWord::new_recursive(0);
    let pl = PlReentrant::new_recursive(0);
    let floor = ReentrantSpinLock::new_recursive(0);
    let runs = [
        recursive_run(usize::MAX, &base),
        recursive_run(WORD, &word),
        recursive_run(PL, &pl),
        recursive_run(FLOOR, &floor),
    ];
    let mut row = Row::new(
        "recursive pair (lock, lock, unlock, unlock)²",
        "ns ↓",
        Better::Lower,
    );
    let base_ns = sync_costs(&runs, &mut row);
    baselines.push(format!("recursive: {base_ns:.2} ns"));
    rows.push(row);
}

fn contention_run<'a, L: CounterLock + Sync>(
    column: usize,
    lock: &'a L,
    threads: usize,
) -> Run<'a, ContentionStats> {
    (
        column,
        Box::new(move || common::timed_contention(lock, threads, CONTENDED_ROUND)),
    )
}

fn contended(rows: &mut Vec<Row>) {
    for threads in THREAD_COUNTS {
        let word = MetaWord::new(0);
        let sync = MetaSync::new(0);
        let pl = PlMutex::new(0);
        let std = StdMutex::new(0);
        let floor = SpinLock::new(0);
        let runs = [
            contention_run(WORD, &word, threads),
            contention_run(SYNC, &sync, threads),
            contention_run(PL, &pl, threads),
            contention_run(STD, &std, threads),
            contention_run(FLOOR, &floor, threads),
        ];
        let samples = interleaved(&runs, CONTENDED_REPS);
        let mut throughput = Row::new(
            format!("contended, {threads} threads: throughput"),
            "Mops/s ↑",
            Better::Higher,
        );
        let mut cpu = Row::new(
            format!("contended, {threads} threads: CPU per op"),
            "ns ↓",
            Better::Lower,
        );
        let mut fairness = Row::new(
            format!("contended, {threads} threads: max/min ops per thread"),
            "ratio ↓",
            Better::Lower,
        );
        let mut scheduled = Row::new(
            format!("contended, {threads} threads: max/min CPU time per thread³"),
            "ratio ↓",
            Better::Lower,
        );
        for ((column, _), stats) in runs.iter().zip(&samples) {
            let metric = |f: fn(&ContentionStats) -> f64| {
                Some(median(&mut stats.iter().map(f).collect::<Vec<_>>()))
            };
            throughput.values[*column] = metric(|s| s.ops_per_sec() / 1e6);
            cpu.values[*column] = metric(ContentionStats::cpu_ns_per_op);
            fairness.values[*column] = metric(ContentionStats::max_over_min);
            if cfg!(target_os = "linux") {
                scheduled.values[*column] = metric(ContentionStats::cpu_max_over_min);
            }
        }
        rows.extend([throughput, cpu, fairness, scheduled]);
    }
}

fn buffer_run<B: BoundedBuffer>(column: usize, pairs: usize) -> Run<'static, Duration> {
    (
        column,
        Box::new(move || common::buffer_transfer::<B>(pairs, BUFFER_ITEMS_PER_PAIR * pairs as u64)),
    )
}

fn bounded_buffer(rows: &mut Vec<Row>) {
    for pairs in PAIR_COUNTS {
        let runs = [
            buffer_run::<MetaBuffer>(SYNC, pairs),
            buffer_run::<PlBuffer>(PL, pairs),
            buffer_run::<StdBuffer>(STD, pairs),
        ];
        let samples = interleaved(&runs, BUFFER_REPS);
        let label = if pairs == 1 { "pair" } else { "pairs" };
        let mut row = Row::new(
            format!("bounded buffer (16), {pairs} producer/consumer {label}"),
            "M items/s ↑",
            Better::Higher,
        );
        let items = BUFFER_ITEMS_PER_PAIR * pairs as u64;
        for ((column, _), times) in runs.iter().zip(&samples) {
            let mut rates: Vec<f64> = times
                .iter()
                .map(|d| items as f64 / d.as_secs_f64() / 1e6)
                .collect();
            row.values[*column] = Some(median(&mut rates));
        }
        rows.push(row);
    }
}

fn ping_pong_run<P: PingPong>(column: usize) -> Run<'static, Duration> {
    (
        column,
        Box::new(|| common::ping_pong::<P>(PING_PONG_ROUND_TRIPS)),
    )
}

fn ping_pong(rows: &mut Vec<Row>) {
    let runs = [
        ping_pong_run::<MetaPingPong>(SYNC),
        ping_pong_run::<PlPingPong>(PL),
        ping_pong_run::<StdPingPong>(STD),
    ];
    let samples = interleaved(&runs, PING_PONG_REPS);
    let mut row = Row::new("wait/notify ping-pong, round trip", "µs ↓", Better::Lower);
    for ((column, _), times) in runs.iter().zip(&samples) {
        let mut latencies: Vec<f64> = times
            .iter()
            .map(|&d| ns_per(d, PING_PONG_ROUND_TRIPS) / 1e3)
            .collect();
        row.values[*column] = Some(median(&mut latencies));
    }
    rows.push(row);
}

/// `v` with 3 significant digits or so.
fn fmt_value(v: Option<f64>) -> String {
    match v {
        None => "—".to_string(),
        Some(v) if v.is_infinite() => "∞".to_string(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
    }
}

/// UTC date and time of now, `YYYY-MM-DD HH:MM`.
fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil from days (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':'))
                .map(|(_, model)| model.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string())
}

fn main() {
    let started = std::time::Instant::now();
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let header = format!(
        "metalock compare — {} — {cpus} CPUs, {} — {} {}",
        utc_now(),
        cpu_model(),
        std::env::consts::OS,
        std::env::consts::ARCH,
    );
    eprintln!("{header}\nmeasuring (well under a minute)...");

    let mut rows = Vec::new();
    let mut baselines = Vec::new();
    eprintln!("  uncontended and recursive pairs");
    uncontended(&mut rows, &mut baselines);
    eprintln!("  contended");
    contended(&mut rows);
    eprintln!("  bounded buffer");
    bounded_buffer(&mut rows);
    eprintln!("  ping-pong");
    ping_pong(&mut rows);

    println!("{header}\n");
    println!(
        "| scenario | unit | metalock word | metalock Synchronized | parking_lot | std | CAS floor | metalock/parking_lot |"
    );
    println!("|---|---|--:|--:|--:|--:|--:|--:|");
    for row in &rows {
        let ratio = row.ratio().map(|r| {
            let hint = match (row.better, r) {
                (Better::Lower, r) if r <= 1.0 => " (better)",
                (Better::Higher, r) if r >= 1.0 => " (better)",
                _ => "",
            };
            format!("{}{hint}", fmt_value(Some(r)))
        });
        let cells: Vec<String> = row.values.iter().map(|v| fmt_value(*v)).collect();
        println!(
            "| {} | {} | {} | {} |",
            row.scenario,
            row.unit,
            cells.join(" | "),
            ratio.unwrap_or_else(|| "—".to_string()),
        );
    }
    println!();
    println!(
        "↓ lower is better, ↑ higher is better. metalock/parking_lot divides the metalock \
         Synchronized column (the raw word where Synchronized does not apply) by parking_lot: \
         below 1 is better for metalock on ↓ rows, above 1 on ↑ rows; \"(better)\" marks where \
         metalock wins."
    );
    println!(
        "Uncontended rows are the cost of synchronization, time minus the time of the same loop \
         without locking (paper 000, Fig. 9), per lock/unlock pair with an increment as body, \
         cycling over N 16-byte objects; baseline loop per iteration: {}.",
        baselines.join(", ")
    );
    println!(
        "² recursive: parking_lot is ReentrantMutex, the floor a spin lock with owner and count; \
         Synchronized, Mutex and std's Mutex are not reentrant."
    );
    println!(
        "Contended: one object, a critical section of {} dependent increments and {} outside, \
         {CONTENDED_REPS} rounds of {CONTENDED_ROUND:?}; CPU per op is process user+system time \
         (getrusage) over all operations; max/min compares the busiest and the least busy thread.",
        common::CS_STEPS,
        common::THINK_STEPS,
    );
    println!(
        "³ the same spread of the CPU time each thread got (getrusage RUSAGE_THREAD, Linux \
         only): with more threads than cores, the scheduler's share bounds how even the \
         operations can be, whatever the lock."
    );
    println!(
        "Bounded buffer: metalock uses one monitor (wait_while + notify_all), the peers a Mutex \
         and two Condvars. Ping-pong: two threads flip a turn flag under the lock and wake each \
         other (metalock notify_one, peers Condvar::notify_one). CAS floor: a spin lock acquired \
         and released by one compare-and-swap each. Medians of {UNCONTENDED_REPS} runs \
         (uncontended, {UNCONTENDED_PAIRS} pairs each), {CONTENDED_REPS} (contended), \
         {BUFFER_REPS} ({BUFFER_ITEMS_PER_PAIR} items per pair) and {PING_PONG_REPS} \
         ({PING_PONG_ROUND_TRIPS} round trips), interleaved across the columns."
    );
    eprintln!("done in {:.1} s", started.elapsed().as_secs_f64());
}
