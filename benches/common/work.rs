//! The workloads' bodies, and the work scale they are measured in.
//!
//! Work is a chain of dependent additions, each through `black_box` (so the
//! compiler can neither fold the chain nor vectorise it): its length in time
//! depends on the machine only through the latency of one such step, which
//! [`Calibration::measure`] finds once at start-up. Work lengths are then
//! given in nanoseconds and turned into step counts, so a sweep means the
//! same thing on a 2 GHz VM and on a 5 GHz desktop.

use std::cell::Cell;
use std::fmt;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The work lengths of the contention sweep, inside and outside the lock:
/// none, ~20 ns (a few field updates), ~200 ns (a small map operation),
/// ~2 µs (a long critical section, or a thread mostly busy elsewhere).
pub const WORK_NS: [u32; 4] = [0, 20, 200, 2_000];

/// A work length as a short ASCII label, usable in benchmark ids and file
/// names: `none`, `20ns`, `200ns`, `2us`.
pub fn work_label(ns: u32) -> String {
    match ns {
        0 => "none".to_string(),
        ns if ns >= 1_000 && ns % 1_000 == 0 => format!("{}us", ns / 1_000),
        ns => format!("{ns}ns"),
    }
}

/// The trivial body of the uncontended benchmarks: one increment that the
/// compiler cannot fold across iterations.
#[inline(always)]
pub fn bump(value: &Cell<u64>) {
    value.set(black_box(value.get()) + 1);
}

/// `steps` dependent additions to `v`. Never inlined, so that calibration
/// and the workloads run the very same machine code; the call costs about
/// one step more per piece of work, within the "~" of the scale.
#[inline(never)]
pub fn spin(mut v: u64, steps: u32) -> u64 {
    for _ in 0..steps {
        v = black_box(v).wrapping_add(1);
    }
    v
}

/// How long one step of [`spin`] takes on this machine.
#[derive(Clone, Copy, Debug)]
pub struct Calibration {
    steps_per_ns: f64,
}

/// Length of one calibration window: long enough that the clock's
/// resolution is noise, short enough that most windows run without being
/// preempted on a loaded machine.
const CALIBRATION_WINDOW: Duration = Duration::from_millis(1);
/// Calibration windows; the fastest is kept, the others having more likely
/// been preempted (a preempted window makes steps look slower). Fewer,
/// longer windows were all preempted under load: on a loaded 2-vCPU
/// machine, three of 20 ms gave 0.276-0.368 ns per step in ten tries, a
/// hundred of 1 ms 0.286 ns each time.
const CALIBRATION_WINDOWS: usize = 100;
/// Steps between two reads of the clock while calibrating (~5 µs).
const CALIBRATION_CHUNK: u32 = 2_000;

impl Calibration {
    /// Counts the steps that fit in [`CALIBRATION_WINDOW`], keeping the
    /// fastest of [`CALIBRATION_WINDOWS`] windows.
    pub fn measure() -> Self {
        let mut best = 0.0_f64;
        let mut v = 0;
        for _ in 0..CALIBRATION_WINDOWS {
            let start = Instant::now();
            let mut steps = 0_u64;
            while start.elapsed() < CALIBRATION_WINDOW {
                v = spin(v, CALIBRATION_CHUNK);
                steps += u64::from(CALIBRATION_CHUNK);
            }
            let rate = steps as f64 / start.elapsed().as_nanos() as f64;
            best = best.max(rate);
        }
        black_box(v);
        Self { steps_per_ns: best }
    }

    /// How much slower one step is by `later` than by `self` (0.05 for 5%
    /// slower, negative if faster): a work scale that moved during a run
    /// changed what its cells mean.
    pub fn drift(&self, later: &Self) -> f64 {
        self.steps_per_ns / later.steps_per_ns - 1.0
    }

    /// The steps of [`spin`] that take about `ns` nanoseconds (0 for 0).
    pub fn steps(&self, ns: u32) -> u32 {
        (f64::from(ns) * self.steps_per_ns).round() as u32
    }

    /// A loop body with about `cs_ns` of work in the critical section and
    /// `outside_ns` outside it.
    pub fn workload(&self, cs_ns: u32, outside_ns: u32) -> Workload {
        Workload {
            cs_ns,
            outside_ns,
            cs_steps: self.steps(cs_ns),
            outside_steps: self.steps(outside_ns),
        }
    }
}

impl fmt::Display for Calibration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "work scale: 1 step = {:.2} ns (fastest of {CALIBRATION_WINDOWS} windows of \
             {CALIBRATION_WINDOW:?});",
            1.0 / self.steps_per_ns
        )?;
        let mut sep = "";
        for ns in WORK_NS.into_iter().filter(|&ns| ns > 0) {
            write!(f, "{sep} {} = {} steps", work_label(ns), self.steps(ns))?;
            sep = ",";
        }
        Ok(())
    }
}

/// The body of a contending thread's loop: `critical_section` under the
/// lock, then `outside` before the next lock.
#[derive(Clone, Copy, Debug)]
pub struct Workload {
    /// The nominal critical-section length.
    pub cs_ns: u32,
    /// The nominal length of the work between two locks.
    pub outside_ns: u32,
    cs_steps: u32,
    outside_steps: u32,
}

impl Workload {
    /// `cs=20ns,outside=200ns`: no spaces, so it serves as a benchmark id
    /// and a command-line filter.
    pub fn label(&self) -> String {
        format!(
            "cs={},outside={}",
            work_label(self.cs_ns),
            work_label(self.outside_ns)
        )
    }

    /// The work under the lock. It reads, advances and writes back the
    /// protected value, so it cannot be hoisted out of the lock, and with no
    /// steps it is a single increment.
    #[inline(always)]
    pub fn critical_section(&self, value: &Cell<u64>) {
        let v = value.get().wrapping_add(1);
        value.set(if self.cs_steps == 0 {
            v
        } else {
            spin(v, self.cs_steps)
        });
    }

    /// The work between two locks; `seed` only keeps the chain's input
    /// opaque.
    #[inline(always)]
    pub fn outside(&self, seed: u64) {
        if self.outside_steps > 0 {
            black_box(spin(seed, self.outside_steps));
        }
    }
}
