//! A short version of the benchmark suite (`benches/`), without criterion:
//! plain `Instant` timing and fixed-duration rounds, interleaved across the
//! locks, medians.
//!
//! ```text
//! cargo run --release --example compare            # about 60 s on 2 cores
//! cargo run --release --example compare -- --full  # about 16 minutes
//! ```
//!
//! Prints, in order:
//! 1. a Markdown table, ready to paste into the README: uncontended, nested
//!    and recursive lock/unlock pairs (with the CAS spin-lock floor; under the
//!    table, that floor released by a fetch-sub as parking_lot's), the
//!    bounded buffer at capacities 1, 16, 256 with 1 and 4 producer/consumer
//!    pairs (items/s, CPU time and voluntary context switches per item), and
//!    ping-pong (round trip, its CPU time and context switches);
//! 2. the contention sweep: one object, 2, 4 and 16 threads, each looping
//!    { lock; critical section; unlock; work outside } with none, ~20 ns,
//!    ~200 ns or ~2 µs of work inside and outside (a calibrated scale), for
//!    metalock's raw word and `Synchronized`, parking_lot's `Mutex` and
//!    `FairMutex`, and std's `Mutex`. Per thread count, heat-map grids of
//!    the two metalock locks against `parking_lot::Mutex` (rows: work
//!    outside, columns: critical section), then one table of the peers'
//!    absolute figures. Every figure of every lock and cell also goes to
//!    `target/contention-sweep.csv` (`examples/plot.rs` draws it).
//!
//! The default mode's rounds are short (2 of 60 ms per lock and cell) and
//! its figures noisy; `--full` runs 6 rounds of 500 ms, the figures to
//! quote. Figures from a busy machine are noisy; compare columns of one run,
//! not runs of different machines.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use std::{fs, io};

#[path = "../benches/common/mod.rs"]
mod common;
use common::contention::{
    self, SWEEP_FAIR, SWEEP_KEYED, SWEEP_LOCKS, SWEEP_PL, SWEEP_STD, SWEEP_SYNC, SWEEP_WORD,
};
use common::locks::{
    Baseline, CounterLock, MetaKeyed, MetaReentrant, MetaSync, MetaWord, PlMutex, PlReentrant,
    RecursiveLock, ReentrantSpinLock, SpinLock, StdMutex, SubFloor,
};
use common::measure::{
    RoundStats, Rounds, Summary, cpu_model, interleaved, line_round_trip, median, round_trip_label,
};
use common::uncontended::{self, NESTED_DEPTH, OBJECT_COUNTS};
use common::wait_notify::{
    self, BUFFER_CAPACITIES, BoundedBuffer, MetaBuffer, MetaCondBuffer, MetaPingPong, PAIR_COUNTS,
    PingPong, PlBuffer, PlPingPong, StdBuffer, StdPingPong,
};
use common::wake::{self, FEED_PERIODS, PARKED_AFTER, Wake};
use common::work::{Calibration, WORK_NS, Workload, work_label};

/// Uncontended: pairs per timed run, and runs per lock (after one warm-up).
const UNCONTENDED_PAIRS: u64 = 1_000_000;
const UNCONTENDED_REPS: usize = 15;

/// The fixed-duration rounds of the default mode, per lock and sweep cell
/// and per wait/notify row: the whole run stays under 90 s on 2 cores, at
/// the price of noise (at 60 ms the scheduler's placement of 4 threads
/// on 2 cores can decide a round's max/min).
const QUICK_ROUNDS: Rounds = Rounds {
    count: 2,
    length: Duration::from_millis(60),
};
/// The rounds of `--full`: long enough for the scheduler to even out the
/// threads over the cores, and enough of them for a median; as many as the
/// sweep's locks, so that each runs first once in every cell.
const FULL_ROUNDS: Rounds = Rounds {
    count: 6,
    length: Duration::from_millis(500),
};

/// Thread counts of the sweep.
const THREAD_COUNTS: [usize; 3] = [2, 4, 16];

/// Where the sweep's figures go, for `examples/plot.rs` and spreadsheets.
const CSV_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/contention-sweep.csv");

// ---------------------------------------------------------------------------
// The Markdown table.

/// Columns: metalock raw word, metalock Synchronized, metalock keyed,
/// parking_lot, std, floor.
const COLUMNS: usize = 6;
const WORD: usize = 0;
const SYNC: usize = 1;
const KEYED: usize = 2;
const PL: usize = 3;
const STD: usize = 4;
const FLOOR: usize = 5;
/// Measured beside the columns and printed under the table.
const FOOTNOTE: usize = COLUMNS;

/// Whether smaller is better for a row.
#[derive(Clone, Copy)]
enum Better {
    Lower,
    Higher,
}

impl Better {
    /// Whether `ratio`, metalock over its peer, is at least as good.
    fn met(self, ratio: f64) -> bool {
        match self {
            Better::Lower => ratio <= 1.0,
            Better::Higher => ratio >= 1.0,
        }
    }
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
    /// apply) over parking_lot; none where parking_lot's figure is 0.
    fn ratio(&self) -> Option<f64> {
        let metalock = self.values[SYNC].or(self.values[WORD])?;
        let peer = self.values[PL].filter(|&v| v != 0.0)?;
        Some(metalock / peer)
    }
}

/// A timed run of one column, boxed so that different lock types share a
/// list; the generic measurement loop inside is monomorphised per type.
type Run<'a, T> = (usize, Box<dyn Fn() -> T + 'a>);

/// Every run of `runs` `reps` times, interleaved across the runs, after
/// `warm_ups` rounds whose samples are dropped. Each call starts the
/// order one entry further on, so that where `reps` is not a multiple of
/// the runs (4 columns over 6 rounds: two of them would run first twice,
/// the others once, in every row), the rows of a table share out the
/// first places (going first cost 2-4% in the control run).
fn run_interleaved<T>(runs: &[Run<'_, T>], reps: usize, warm_ups: usize) -> Vec<Vec<T>> {
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    // Relaxed: a counter that orders nothing, on the one measuring thread.
    let first = CALLS.fetch_add(1, Ordering::Relaxed);
    interleaved(runs, reps, warm_ups, first, |(_, run)| run())
}

fn ns_per(d: Duration, n: u64) -> f64 {
    d.as_nanos() as f64 / n as f64
}

/// Sync cost per pair (time minus baseline time of the same repetition,
/// medians over repetitions), for `runs` whose entry 0 is the baseline,
/// into `row`'s columns; a run of column `FOOTNOTE` goes to `footnote`
/// instead. Returns the baseline's median time per iteration.
fn sync_costs(runs: &[Run<'_, Duration>], row: &mut Row, footnote: &mut Option<f64>) -> f64 {
    let samples = run_interleaved(runs, UNCONTENDED_REPS, 1);
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
        let cost = Some(median(&mut costs));
        match *column {
            FOOTNOTE => *footnote = cost,
            column => row.values[column] = cost,
        }
    }
    median(&mut base.clone())
}

fn cycling_run<L: CounterLock>(column: usize, objects: &[L]) -> Run<'_, Duration> {
    (
        column,
        Box::new(move || uncontended::cycle(objects, UNCONTENDED_PAIRS)),
    )
}

fn nested_run<L: CounterLock>(column: usize, objects: &[L]) -> Run<'_, Duration> {
    (
        column,
        Box::new(move || uncontended::nested(objects, UNCONTENDED_PAIRS)),
    )
}

fn recursive_run<L: RecursiveLock>(column: usize, object: &L) -> Run<'_, Duration> {
    (
        column,
        Box::new(move || uncontended::recursive(object, UNCONTENDED_PAIRS)),
    )
}

/// The uncontended, nested and recursive rows; `baselines` gets the loop's own
/// time per object count, and `sub_floors` the cost of the spin lock
/// released by a fetch-sub (ns, in the order of `OBJECT_COUNTS`).
fn uncontended(rows: &mut Vec<Row>, baselines: &mut Vec<String>, sub_floors: &mut Vec<String>) {
    for n in OBJECT_COUNTS {
        let base = uncontended::objects::<Baseline>(n);
        let word = uncontended::objects::<MetaWord>(n);
        let sync = uncontended::objects::<MetaSync>(n);
        let keyed = uncontended::objects::<MetaKeyed>(n);
        let pl = uncontended::objects::<PlMutex>(n);
        let std = uncontended::objects::<StdMutex>(n);
        let floor = uncontended::objects::<SpinLock>(n);
        let sub_floor = uncontended::objects::<SubFloor>(n);
        let runs = [
            cycling_run(usize::MAX, &base),
            cycling_run(WORD, &word),
            cycling_run(SYNC, &sync),
            cycling_run(KEYED, &keyed),
            cycling_run(PL, &pl),
            cycling_run(STD, &std),
            cycling_run(FLOOR, &floor),
            cycling_run(FOOTNOTE, &sub_floor),
        ];
        let objects = if n == 1 { "object" } else { "objects" };
        let mut row = Row::new(
            format!("uncontended pair, {n} {objects}"),
            "ns ↓",
            Better::Lower,
        );
        let mut sub_floor_ns = None;
        let base_ns = sync_costs(&runs, &mut row, &mut sub_floor_ns);
        baselines.push(format!("{n}: {base_ns:.2} ns"));
        if let Some(ns) = sub_floor_ns {
            sub_floors.push(format!("{ns:.2}"));
        }
        rows.push(row);
    }

    let base = uncontended::objects::<Baseline>(NESTED_DEPTH);
    let word = uncontended::objects::<MetaWord>(NESTED_DEPTH);
    let sync = uncontended::objects::<MetaSync>(NESTED_DEPTH);
    let keyed = uncontended::objects::<MetaKeyed>(NESTED_DEPTH);
    let pl = uncontended::objects::<PlMutex>(NESTED_DEPTH);
    let std = uncontended::objects::<StdMutex>(NESTED_DEPTH);
    let floor = uncontended::objects::<SpinLock>(NESTED_DEPTH);
    let runs = [
        nested_run(usize::MAX, &base),
        nested_run(WORD, &word),
        nested_run(SYNC, &sync),
        nested_run(KEYED, &keyed),
        nested_run(PL, &pl),
        nested_run(STD, &std),
        nested_run(FLOOR, &floor),
    ];
    let mut row = Row::new(
        format!("nested pair, {NESTED_DEPTH} objects held at once"),
        "ns ↓",
        Better::Lower,
    );
    let base_ns = sync_costs(&runs, &mut row, &mut None);
    baselines.push(format!("nested: {base_ns:.2} ns"));
    rows.push(row);

    let base = uncontended::objects::<Baseline>(1);
    let word = uncontended::objects::<MetaWord>(1);
    let reentrant = uncontended::objects::<MetaReentrant>(1);
    let pl = uncontended::objects::<PlReentrant>(1);
    let runs = [
        cycling_run(usize::MAX, &base),
        cycling_run(WORD, &word),
        cycling_run(SYNC, &reentrant),
        cycling_run(PL, &pl),
    ];
    let mut row = Row::new("reentrant pair, one level²", "ns ↓", Better::Lower);
    sync_costs(&runs, &mut row, &mut None);
    rows.push(row);

    let base = Baseline::new_recursive(0);
    let word = MetaWord::new_recursive(0);
    let reentrant = MetaReentrant::new_recursive(0);
    let pl = PlReentrant::new_recursive(0);
    let floor = ReentrantSpinLock::new_recursive(0);
    let runs = [
        recursive_run(usize::MAX, &base),
        recursive_run(WORD, &word),
        recursive_run(SYNC, &reentrant),
        recursive_run(PL, &pl),
        recursive_run(FLOOR, &floor),
    ];
    let mut row = Row::new(
        "recursive pair (lock, lock, unlock, unlock)²",
        "ns ↓",
        Better::Lower,
    );
    let base_ns = sync_costs(&runs, &mut row, &mut None);
    baselines.push(format!("recursive: {base_ns:.2} ns"));
    rows.push(row);
}

/// The three rows of a wait/notify scenario, from the medians per column:
/// units per second (in millions, or as a latency in µs), CPU time per unit
/// and voluntary context switches per unit.
fn wait_notify_rows(
    scenario: &str,
    latency: bool,
    runs: &[Run<'_, RoundStats>],
    rounds: Rounds,
) -> [Row; 3] {
    let samples = run_interleaved(runs, rounds.count, 0);
    let mut speed = if latency {
        Row::new(format!("{scenario}: round trip"), "µs ↓", Better::Lower)
    } else {
        Row::new(format!("{scenario}: items/s"), "M/s ↑", Better::Higher)
    };
    let per = if latency { "round trip" } else { "item" };
    let mut cpu = Row::new(format!("{scenario}: CPU per {per}"), "µs ↓", Better::Lower);
    let mut switches = Row::new(
        format!("{scenario}: context switches per {per}³"),
        "count ↓",
        Better::Lower,
    );
    for ((column, _), stats) in runs.iter().zip(&samples) {
        let summary = Summary::of(stats);
        speed.values[*column] = Some(if latency {
            1e6 / summary.per_sec
        } else {
            summary.per_sec / 1e6
        });
        cpu.values[*column] = Some(summary.cpu_ns_per_unit / 1e3);
        switches.values[*column] = Some(summary.switches_per_unit);
    }
    [speed, cpu, switches]
}

fn buffer_run<B: BoundedBuffer>(
    column: usize,
    capacity: usize,
    pairs: usize,
    length: Duration,
) -> Run<'static, RoundStats> {
    (
        column,
        Box::new(move || wait_notify::timed_buffer::<B>(capacity, pairs, length)),
    )
}

fn bounded_buffer(rows: &mut Vec<Row>, rounds: Rounds) {
    for capacity in BUFFER_CAPACITIES {
        for pairs in PAIR_COUNTS {
            let runs = [
                buffer_run::<MetaBuffer>(WORD, capacity, pairs, rounds.length),
                buffer_run::<MetaCondBuffer>(SYNC, capacity, pairs, rounds.length),
                buffer_run::<PlBuffer>(PL, capacity, pairs, rounds.length),
                buffer_run::<StdBuffer>(STD, capacity, pairs, rounds.length),
            ];
            let label = if pairs == 1 { "pair" } else { "pairs" };
            let scenario = format!("bounded buffer ({capacity}), {pairs} {label}");
            rows.extend(wait_notify_rows(&scenario, false, &runs, rounds));
        }
    }
}

/// A condition's `notify_one` with nobody waiting (the word monitor's own
/// notify needs a guard, so only the Synchronized column, with a
/// `Condition`, and the peers' Condvars), `notifies` calls per timed run.
fn idle_notify(rows: &mut Vec<Row>, notifies: u64) {
    let runs: [Run<'static, Duration>; 3] = [
        (
            SYNC,
            Box::new(move || wait_notify::idle_notify_metalock(notifies)),
        ),
        (
            PL,
            Box::new(move || wait_notify::idle_notify_parking_lot(notifies)),
        ),
        (
            STD,
            Box::new(move || wait_notify::idle_notify_std(notifies)),
        ),
    ];
    let samples = run_interleaved(&runs, UNCONTENDED_REPS, 1);
    let mut row = Row::new(
        "condition notify_one, nobody waiting",
        "ns ↓",
        Better::Lower,
    );
    for ((column, _), times) in runs.iter().zip(&samples) {
        let mut ns: Vec<f64> = times.iter().map(|&d| ns_per(d, notifies)).collect();
        row.values[*column] = Some(median(&mut ns));
    }
    rows.push(row);
}

/// The producer's pauses in one run of a slow-feed row, in all: its items
/// come [`FEED_PERIODS`] apart, and each sleep (not a spin) oversleeps a
/// little.
const FEED_RUN: Duration = Duration::from_millis(200);

/// The label of a feed period: microseconds below a millisecond.
fn period_label(period: Duration) -> String {
    match period.as_millis() {
        0 => format!("{} µs", period.as_micros()),
        ms => format!("{ms} ms"),
    }
}

/// The items of one run of a slow-feed row.
fn feed_items(period: Duration) -> u64 {
    (FEED_RUN.as_micros() / period.as_micros()) as u64
}

/// A consumer fed an item every `period`: its CPU per item, every
/// column, `rounds.count` runs interleaved, medians.
fn slow_feed(rows: &mut Vec<Row>, rounds: Rounds, period: Duration) {
    let items = feed_items(period);
    fn run<B: BoundedBuffer>(
        column: usize,
        period: Duration,
        items: u64,
    ) -> Run<'static, Duration> {
        (
            column,
            Box::new(move || wake::slow_feed::<B>(period, items)),
        )
    }
    let runs = [
        run::<MetaBuffer>(WORD, period, items),
        run::<MetaCondBuffer>(SYNC, period, items),
        run::<PlBuffer>(PL, period, items),
        run::<StdBuffer>(STD, period, items),
    ];
    let samples = run_interleaved(&runs, rounds.count, 0);
    let mut row = Row::new(
        format!(
            "consumer fed every {}: its CPU per item⁴",
            period_label(period)
        ),
        "µs ↓",
        Better::Lower,
    );
    for ((column, _), times) in runs.iter().zip(&samples) {
        let mut us: Vec<f64> = times.iter().map(|d| d.as_secs_f64() * 1e6).collect();
        row.values[*column] = Some(median(&mut us));
    }
    rows.push(row);
}

/// Pairs per thread of a run of the distinct-objects row.
const DISTINCT_PAIRS: u64 = 10_000_000;

/// Two threads locking an object each (no shared line on the path): the
/// throughput of 2 threads over that of 1, medians of interleaved runs.
fn distinct_objects(rows: &mut Vec<Row>) {
    fn runs<L: CounterLock + Sync>(column: usize) -> [Run<'static, Duration>; 2] {
        [1, 2].map(|threads| -> Run<'static, Duration> {
            (
                column,
                Box::new(move || uncontended::distinct_objects::<L>(threads, DISTINCT_PAIRS)),
            )
        })
    }
    let runs: Vec<Run<'static, Duration>> = [
        runs::<MetaWord>(WORD),
        runs::<MetaSync>(SYNC),
        runs::<MetaKeyed>(KEYED),
        runs::<PlMutex>(PL),
        runs::<StdMutex>(STD),
    ]
    .into_iter()
    .flatten()
    .collect();
    let samples = run_interleaved(&runs, 7, 1);
    let mut row = Row::new(
        "distinct objects: 2 threads' throughput over 1 thread's",
        "× ↑",
        Better::Higher,
    );
    for (pair, times) in runs.chunks(2).zip(samples.chunks(2)) {
        let one = median(
            &mut times[0]
                .iter()
                .map(Duration::as_secs_f64)
                .collect::<Vec<_>>(),
        );
        let two = median(
            &mut times[1]
                .iter()
                .map(Duration::as_secs_f64)
                .collect::<Vec<_>>(),
        );
        row.values[pair[0].0] = Some(2.0 * one / two);
    }
    rows.push(row);
}

/// Wake-ups measured per kind in the wake-latency rows.
const WAKE_SAMPLES: usize = 2_000;

/// From waking a thread in `wait_interruptibly` (a notify, or an
/// interrupt) to its return with the monitor, once parked and once while
/// it still spins: the Synchronized column only, the peers having no
/// interrupts. Returns interrupt over notify for the parked waiter.
fn wake_latency(rows: &mut Vec<Row>) -> f64 {
    let mut parked_medians = [0.0; 2];
    for (parked, state) in [(true, "parked"), (false, "spinning")] {
        for (i, (wake, name)) in [(Wake::Notify, "notify_one"), (Wake::Interrupt, "interrupt")]
            .into_iter()
            .enumerate()
        {
            let mut us: Vec<f64> = wake::wake_latencies(wake, parked, WAKE_SAMPLES)
                .iter()
                .map(|d| d.as_secs_f64() * 1e6)
                .collect();
            let median = median(&mut us);
            if parked {
                parked_medians[i] = median;
            }
            let mut row = Row::new(
                format!("wake to return from wait_interruptibly, {name}, waiter {state}"),
                "µs ↓",
                Better::Lower,
            );
            row.values[SYNC] = Some(median);
            rows.push(row);
        }
    }
    parked_medians[1] / parked_medians[0]
}

fn ping_pong_run<P: PingPong>(column: usize, length: Duration) -> Run<'static, RoundStats> {
    (
        column,
        Box::new(move || wait_notify::timed_ping_pong::<P>(length)),
    )
}

fn ping_pong(rows: &mut Vec<Row>, rounds: Rounds) {
    let runs = [
        ping_pong_run::<MetaPingPong>(SYNC, rounds.length),
        ping_pong_run::<PlPingPong>(PL, rounds.length),
        ping_pong_run::<StdPingPong>(STD, rounds.length),
    ];
    rows.extend(wait_notify_rows("ping-pong", true, &runs, rounds));
}

/// `v` in about 5 characters: 3 significant digits, powers of ten for the
/// very large and very small (a starved thread's max/min), `∞`, `—`.
fn fmt_value(v: Option<f64>) -> String {
    match v {
        None => "—".to_string(),
        Some(v) if v.is_infinite() => "∞".to_string(),
        Some(v) if v.abs() >= 99_999.5 || (v != 0.0 && v.abs() < 0.01) => format!("{v:.1e}"),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
    }
}

fn print_table(rows: &[Row]) {
    println!(
        "| scenario | unit | metalock word | metalock Synchronized | metalock keyed | parking_lot | std | CAS floor | metalock/parking_lot |"
    );
    println!("|---|---|--:|--:|--:|--:|--:|--:|--:|");
    for row in rows {
        let ratio = row.ratio().map(|r| {
            let hint = if row.better.met(r) { " (better)" } else { "" };
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
}

// ---------------------------------------------------------------------------
// The contention sweep.

/// One cell of the sweep: the medians of every lock of [`SWEEP_LOCKS`], in
/// that order.
struct SweepCell {
    threads: usize,
    workload: Workload,
    locks: Vec<Summary>,
}

/// The sweep's cells, and the cache-line round trip between two threads
/// before each thread count's cells and after the last (what moves every
/// contended figure on a VM, see [`line_round_trip`]).
struct Sweep {
    cells: Vec<SweepCell>,
    round_trips: Vec<Option<Duration>>,
}

/// Runs the whole sweep: every thread count, every critical section, every
/// outside work; each cell's rounds interleaved across the locks.
fn sweep(calibration: &Calibration, rounds: Rounds) -> Sweep {
    let mut cells = Vec::new();
    let mut round_trips = Vec::new();
    for threads in THREAD_COUNTS {
        round_trips.push(line_round_trip());
        eprintln!(
            "  contention sweep, {threads} threads ({} cells)",
            WORK_NS.len() * WORK_NS.len()
        );
        for outside_ns in WORK_NS {
            for cs_ns in WORK_NS {
                let workload = calibration.workload(cs_ns, outside_ns);
                // Each cell starts the order one round further on.
                let locks =
                    contention::sweep_cell(&SWEEP_LOCKS, threads, &workload, rounds, cells.len());
                cells.push(SweepCell {
                    threads,
                    workload,
                    locks,
                });
            }
        }
    }
    round_trips.push(line_round_trip());
    Sweep { cells, round_trips }
}

/// A heat map of one figure over the cells of one thread count: rows are
/// the work outside the lock, columns the critical section.
struct Grid {
    title: String,
    cells: Vec<Vec<String>>,
    footer: String,
}

/// Width of a grid's row labels (`outside`).
const LABEL_WIDTH: usize = 8;

impl Grid {
    /// `cell` of every (outside, critical section) pair at `threads`.
    fn new(
        title: String,
        cells: &[SweepCell],
        threads: usize,
        mut cell: impl FnMut(&SweepCell) -> String,
    ) -> Self {
        let rows = WORK_NS
            .iter()
            .map(|&outside_ns| {
                WORK_NS
                    .iter()
                    .map(|&cs_ns| {
                        let found = cells.iter().find(|c| {
                            c.threads == threads
                                && c.workload.cs_ns == cs_ns
                                && c.workload.outside_ns == outside_ns
                        });
                        found.map_or_else(|| "—".to_string(), &mut cell)
                    })
                    .collect()
            })
            .collect();
        Self {
            title,
            cells: rows,
            footer: String::new(),
        }
    }

    /// The ratio of `lock`'s `metric` to `reference`'s, marked `*` where it
    /// misses `better` than `target`, with the misses and the geometric
    /// mean in the footer.
    fn ratios(
        title: &str,
        cells: &[SweepCell],
        threads: usize,
        (lock, reference): (usize, usize),
        metric: fn(&Summary) -> f64,
        (better, target): (Better, f64),
    ) -> Self {
        let (mut misses, mut log_sum, mut count) = (0, 0.0, 0);
        let mut grid = Self::new(title.to_string(), cells, threads, |cell| {
            let ratio = metric(&cell.locks[lock]) / metric(&cell.locks[reference]);
            // Judged as shown, to two decimals: a 0.997 printed as 1.00 is
            // not marked as a miss.
            let met = better.met((ratio * 100.0).round() / 100.0 / target);
            if ratio.is_finite() && ratio > 0.0 {
                log_sum += ratio.ln();
                count += 1;
            }
            misses += usize::from(!met);
            format!(
                "{:>5}{}",
                fmt_value(Some(ratio)),
                if met { ' ' } else { '*' }
            )
        });
        let mean = if count > 0 {
            fmt_value(Some((log_sum / f64::from(count)).exp()))
        } else {
            "—".to_string()
        };
        let cells = WORK_NS.len() * WORK_NS.len();
        // A cell where either lock did nothing (a ratio of 0 or infinity,
        // or none) has no logarithm: it is left out of the mean.
        let left_out = match cells - count as usize {
            0 => String::new(),
            n => format!(" ({n} cells without a finite ratio left out)"),
        };
        grid.footer = format!("misses {misses}/{cells}, geomean {mean}{left_out}");
        grid
    }

    /// The lines of the grid, each `self.width()` characters wide.
    fn lines(&self) -> Vec<String> {
        let width = self.column_width();
        let mut lines = vec![self.title.clone()];
        let mut header = format!("{:<LABEL_WIDTH$}", "out\\cs");
        for ns in WORK_NS {
            write!(header, "{:>width$}", work_label(ns)).expect("writing to a String");
        }
        lines.push(header);
        for (outside_ns, row) in WORK_NS.iter().zip(&self.cells) {
            let mut line = format!("{:<LABEL_WIDTH$}", work_label(*outside_ns));
            for cell in row {
                write!(line, "{cell:>width$}").expect("writing to a String");
            }
            lines.push(line);
        }
        if !self.footer.is_empty() {
            lines.push(self.footer.clone());
        }
        let total = self.width();
        lines
            .into_iter()
            .map(|line| format!("{line:<total$}"))
            .collect()
    }

    fn column_width(&self) -> usize {
        let widest = self.cells.iter().flatten().map(|c| c.chars().count());
        widest.max().unwrap_or(0).max(5) + 1
    }

    fn width(&self) -> usize {
        let grid = LABEL_WIDTH + WORK_NS.len() * self.column_width();
        let text = [&self.title, &self.footer].map(|t| t.chars().count());
        grid.max(text[0]).max(text[1])
    }
}

/// Prints `grids` side by side.
fn print_side_by_side(grids: &[Grid]) {
    let columns: Vec<Vec<String>> = grids.iter().map(Grid::lines).collect();
    let height = columns.iter().map(Vec::len).max().unwrap_or(0);
    for i in 0..height {
        let parts: Vec<&str> = columns
            .iter()
            .map(|lines| lines.get(i).map_or("", String::as_str))
            .collect();
        println!("  {}", parts.join("    ").trim_end());
    }
    println!();
}

fn throughput(s: &Summary) -> f64 {
    s.per_sec
}

fn cpu_per_op(s: &Summary) -> f64 {
    s.cpu_ns_per_unit
}

fn print_grids(sweep: &Sweep) {
    let cells = &sweep.cells[..];
    for (i, threads) in THREAD_COUNTS.into_iter().enumerate() {
        println!(
            "{threads} threads: ratio to parking_lot::Mutex; * misses the target \
             (throughput < 1.0, CPU/op > 1.0)\n\
             cache-line round trip between two threads: {} before these cells, {} after\n",
            round_trip_label(sweep.round_trips[i]),
            round_trip_label(sweep.round_trips[i + 1]),
        );
        let ratio_pair = |what: &str, metric: fn(&Summary) -> f64, better| {
            [(SWEEP_WORD, "metalock word"), (SWEEP_SYNC, "Synchronized")].map(|(lock, name)| {
                let title = format!("{what}, {name}");
                let locks = (lock, SWEEP_PL);
                Grid::ratios(&title, cells, threads, locks, metric, (better, 1.0))
            })
        };
        print_side_by_side(&ratio_pair("throughput", throughput, Better::Higher));
        print_side_by_side(&ratio_pair("CPU per op", cpu_per_op, Better::Lower));
        // The keyed monitor against the word it finds: the cost of finding
        // it (target: within 10%).
        let keyed = (SWEEP_KEYED, SWEEP_WORD);
        print_side_by_side(&[
            Grid::ratios(
                "throughput, keyed / word (* below 0.90)",
                cells,
                threads,
                keyed,
                throughput,
                (Better::Higher, 0.9),
            ),
            Grid::ratios(
                "CPU per op, keyed / word (* above 1.10)",
                cells,
                threads,
                keyed,
                cpu_per_op,
                (Better::Lower, 1.1),
            ),
        ]);
        let fairness = Grid::new(
            "max/min ops per thread: word / Synchronized / parking_lot::Mutex".to_string(),
            cells,
            threads,
            |cell| {
                [SWEEP_WORD, SWEEP_SYNC, SWEEP_PL]
                    .map(|lock| fmt_value(Some(cell.locks[lock].max_over_min)))
                    .join("/")
            },
        );
        print_side_by_side(&[fairness]);
    }
}

/// The absolute medians of the peers, every cell.
fn print_absolute(cells: &[SweepCell]) {
    let peers = [SWEEP_PL, SWEEP_FAIR, SWEEP_STD];
    println!(
        "Absolute figures of the peers (medians): Mops/s, CPU ns per op, max/min ops per thread"
    );
    let mut header = format!("{:>3} {:>6} {:>7} ", "thr", "cs", "outside");
    let mut units = format!("{:19}", "");
    for lock in peers {
        write!(header, "| {:<23}", SWEEP_LOCKS[lock].label).expect("writing to a String");
        write!(units, "| {:>6} {:>7} {:>7} ", "Mops/s", "ns/op", "max/min")
            .expect("writing to a String");
    }
    println!("{}\n{}", header.trim_end(), units.trim_end());
    for cell in cells {
        let w = &cell.workload;
        let mut line = format!(
            "{:>3} {:>6} {:>7} ",
            cell.threads,
            work_label(w.cs_ns),
            work_label(w.outside_ns)
        );
        for lock in peers {
            let s = &cell.locks[lock];
            write!(
                line,
                "| {:>6} {:>7} {:>7} ",
                fmt_value(Some(s.per_sec / 1e6)),
                fmt_value(Some(s.cpu_ns_per_unit)),
                fmt_value(Some(s.max_over_min)),
            )
            .expect("writing to a String");
        }
        println!("{}", line.trim_end());
    }
    println!();
}

/// Writes every figure of every lock and cell to `path`, one line per
/// (cell, lock).
fn write_csv(path: &str, machine: &str, sweep: &Sweep) -> io::Result<()> {
    // Where the figures come from, as comment lines (`plot` shows them).
    let mut round_trips = String::new();
    for (threads, round_trip) in THREAD_COUNTS.iter().zip(&sweep.round_trips) {
        write!(
            round_trips,
            "{} before {threads} threads, ",
            round_trip_label(*round_trip)
        )
        .expect("writing to a String");
    }
    let last = sweep.round_trips.last().copied().flatten();
    let mut csv = format!(
        "# {machine}\n\
         # cache-line round trip between two threads: {round_trips}{} after\n\
         threads,cs_ns,outside_ns,lock,rounds,throughput_ops_per_s,cpu_ns_per_op,\
         max_min_ops,max_min_cpu,voluntary_switches_per_op\n",
        round_trip_label(last)
    );
    for cell in &sweep.cells {
        for (lock, s) in SWEEP_LOCKS.iter().zip(&cell.locks) {
            writeln!(
                csv,
                "{},{},{},{},{},{:.0},{:.2},{:.4},{:.4},{:.5}",
                cell.threads,
                cell.workload.cs_ns,
                cell.workload.outside_ns,
                lock.name,
                s.rounds,
                s.per_sec,
                s.cpu_ns_per_unit,
                s.max_over_min,
                s.cpu_max_over_min,
                s.switches_per_unit,
            )
            .expect("writing to a String");
        }
    }
    if let Some(dir) = std::path::Path::new(path).parent() {
        fs::create_dir_all(dir)?;
    }
    fs::write(path, csv)
}

// ---------------------------------------------------------------------------
// The run.

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

/// How long the fixed-duration measurements run.
#[derive(Clone, Copy)]
enum Mode {
    Default,
    Full,
}

impl Mode {
    /// The mode the command line asks for (exits on `--help` or a mistake).
    fn from_args() -> Self {
        let mut mode = Mode::Default;
        for arg in std::env::args().skip(1) {
            match arg.as_str() {
                "--full" => mode = Mode::Full,
                "-h" | "--help" => {
                    println!(
                        "usage: compare [--full]\n\n{}\n{}",
                        Mode::Default.describe(),
                        Mode::Full.describe()
                    );
                    std::process::exit(0);
                }
                other => {
                    eprintln!("compare: unknown argument {other:?}\nusage: compare [--full]");
                    std::process::exit(2);
                }
            }
        }
        mode
    }

    fn rounds(self) -> Rounds {
        match self {
            Mode::Default => QUICK_ROUNDS,
            Mode::Full => FULL_ROUNDS,
        }
    }

    /// Calls of `notify_one` per timed run of the idle-notify row: std's
    /// makes a system call each time, so that the full count would take a
    /// third of the default mode's time.
    fn idle_notifies(self) -> u64 {
        match self {
            Mode::Default => 1_000_000,
            Mode::Full => 10_000_000,
        }
    }

    /// The mode, its rounds, and how long it takes.
    fn describe(self) -> String {
        match self {
            Mode::Default => format!(
                "default, {QUICK_ROUNDS} per lock, per sweep cell and per wait/notify row \
                 (about 60 s; short rounds, noisy figures: --full runs {FULL_ROUNDS}, \
                 about 16 minutes)"
            ),
            Mode::Full => format!(
                "--full, {FULL_ROUNDS} per lock, per sweep cell and per wait/notify row (about \
                 16 minutes)"
            ),
        }
    }
}

/// The 1, 5 and 15 minute load averages: a busy machine skews every figure.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|avg| avg.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".to_string())
}

fn main() {
    let mode = Mode::from_args();
    let rounds = mode.rounds();
    let started = Instant::now();
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let command: Vec<String> = std::env::args().collect();
    let calibration = Calibration::measure();
    let date = utc_now();
    let header = format!(
        "metalock compare — {date} — {cpus} CPUs, {} — {} {}\ncommand: {}\n\
         load average before the run: {}; cache-line round trip between two threads: {}\n\
         mode: {}\n{calibration}",
        cpu_model(),
        std::env::consts::OS,
        std::env::consts::ARCH,
        command.join(" "),
        load_average(),
        round_trip_label(line_round_trip()),
        mode.describe(),
    );
    eprintln!("{header}\nmeasuring...");

    let mut rows = Vec::new();
    let mut baselines = Vec::new();
    let mut sub_floors = Vec::new();
    eprintln!("  uncontended and recursive pairs");
    uncontended(&mut rows, &mut baselines, &mut sub_floors);
    distinct_objects(&mut rows);
    let sweep = sweep(&calibration, rounds);
    let drift = format!(
        "work scale measured again after the sweep: one step {:+.1}% slower",
        100.0 * calibration.drift(&Calibration::measure())
    );
    eprintln!("  bounded buffer");
    bounded_buffer(&mut rows, rounds);
    idle_notify(&mut rows, mode.idle_notifies());
    eprintln!("  ping-pong");
    ping_pong(&mut rows, rounds);
    eprintln!("  slow feed");
    for period in FEED_PERIODS {
        slow_feed(&mut rows, rounds, period);
    }
    eprintln!("  wake-up latency");
    let interrupt_over_notify = wake_latency(&mut rows);
    let machine = format!(
        "{}, {cpus} CPUs, run of {date}\n# {calibration}\n# {drift}",
        cpu_model()
    );
    let csv = write_csv(CSV_PATH, &machine, &sweep);

    println!("{header}\n{drift}\n");
    print_table(&rows);
    println!();
    println!(
        "↓ lower is better, ↑ higher is better. metalock/parking_lot divides the metalock \
         Synchronized column (the raw word where Synchronized does not apply) by parking_lot: \
         \"(better)\" marks where metalock is at least as good."
    );
    println!(
        "Uncontended rows are the cost of synchronization, time minus the time of the same loop \
         without locking (paper 000, Fig. 9), per lock/unlock pair with an increment as body, \
         cycling over N 16-byte objects, or in the nested row {NESTED_DEPTH} of them locked one \
         inside another and unlocked in reverse; baseline loop per pair: {}. Medians of \
         {UNCONTENDED_REPS} runs of {UNCONTENDED_PAIRS} pairs, interleaved across the columns. \
         The CAS floor released by a fetch-sub instead, as parking_lot 0.13 unlocks (a monitor \
         word's release must compare): {} ns at 1 / 4096 / 524288 objects.",
        baselines.join(", "),
        sub_floors.join(" / ")
    );
    println!(
        "² reentrant and recursive: the metalock Synchronized column is ReentrantSynchronized (a \
         Cell inside), parking_lot is ReentrantMutex (a Cell inside), one object; the recursive \
         floor is a spin lock with owner and count; std's Mutex is not reentrant. CAS floor: a spin lock acquired and released by one \
         compare-and-swap each."
    );
    println!(
        "Bounded buffer (capacity), producer/consumer pairs: in the metalock word column one \
         monitor's own wait set (wait_while + notify_all, Java's way), in the Synchronized \
         column a Synchronized with two Conditions, not_full and not_empty (notify_one), as the \
         peers use a Mutex and two Condvars (notify_one). Ping-pong: two threads flip a turn \
         flag under the lock and wake each other (notify_one). {rounds} per column, \
         interleaved, medians; CPU is process user+system time (getrusage). Idle notify: \
         {} calls, medians of {UNCONTENDED_REPS} runs.",
        mode.idle_notifies()
    );
    println!(
        "Distinct objects: each of 1 or 2 threads runs {DISTINCT_PAIRS} pairs on an object of its \
         own (128-byte aligned), 7 runs interleaved, medians; 2.0 is perfect scaling. Wake to \
         return: a thread waits in wait_interruptibly on a Synchronized; the clock runs from the \
         notify_one (under the monitor, released at once) or the interrupt to its return, \
         {WAKE_SAMPLES} wake-ups each, medians; the waiter is woken {} µs after it started to \
         wait (parked) or as soon as it is seen waiting (spinning); interrupt over notify, \
         parked: {:.2}.",
        PARKED_AFTER.as_micros(),
        interrupt_over_notify
    );
    println!(
        "³ voluntary context switches (getrusage ru_nvcsw) of the benchmark's threads, that is \
         how often a thread blocked, per item or round trip."
    );
    println!(
        "⁴ a producer sleeps the period before each put into a buffer of the bounded-buffer \
         rows' kind (capacity 16), or spins on the clock below 100 µs, {} ({} ms of pauses \
         per run), a consumer takes them, \
         waiting alone each time; the consumer thread's user+system time (getrusage) per item, \
         {} runs per column, interleaved, medians.",
        FEED_PERIODS
            .map(|period| format!(
                "{} items every {}",
                feed_items(period),
                period_label(period)
            ))
            .join(" or "),
        FEED_RUN.as_millis(),
        rounds.count
    );
    println!();
    println!(
        "Contention sweep: one object, T threads each looping {{ lock; critical section (cs) on \
         the protected value; unlock; work outside }}; {rounds} per lock and cell, interleaved \
         across the locks, medians. Throughput is operations per second of all threads, CPU per \
         op the process's user+system time (getrusage) over all operations, max/min the busiest \
         thread's operations over the least busy one's.\n"
    );
    print_grids(&sweep);
    print_absolute(&sweep.cells);
    match csv {
        Ok(()) => println!("Every figure of every lock and cell: {CSV_PATH}"),
        Err(e) => println!("Could not write {CSV_PATH}: {e}"),
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!("Measured in {elapsed:.0} s.");
    eprintln!("done in {elapsed:.1} s");
}
