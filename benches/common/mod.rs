//! Helpers shared by `benches/uncontended.rs`, `benches/contended.rs` and
//! `examples/compare.rs` (which includes this module by path):
//!
//! - [`locks`]: the lock wrappers that put metalock and its peers behind one
//!   interface, and the CAS spin-lock floors;
//! - [`work`]: the workloads' bodies, on a work scale calibrated at start-up;
//! - [`measure`]: resource usage, timed thread runs, fixed-duration rounds,
//!   interleaving and medians;
//! - [`uncontended`]: the paper's Fig. 9 loops;
//! - [`contention`]: one object contended by T threads, and the sweep over
//!   thread counts and work lengths;
//! - [`wait_notify`]: the bounded buffer and ping-pong;
//! - [`wake`]: how a waiting thread wakes: latency, and CPU per wake-up.

// Each of the three targets that include this module uses a different part
// of it, so every target sees some of it unused.
#![allow(dead_code)]

pub mod contention;
pub mod locks;
pub mod measure;
pub mod uncontended;
pub mod wait_notify;
pub mod wake;
pub mod work;

use std::time::Duration;

/// Whether the process runs as a real benchmark (`cargo bench`), as opposed
/// to criterion's test mode (`cargo test --benches`, `cargo bench -- --test`)
/// or listing (`--list`).
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

/// The criterion settings both benches share: small samples, so that the
/// whole suite stays within minutes on 2 cores; and 10,000 bootstrap
/// resamples instead of 100,000, because the HTML report draws a density of
/// each resampled statistic and with 100,000 those plots took ~5 s per
/// benchmark here, more than the measurement itself.
pub fn criterion() -> criterion::Criterion {
    criterion::Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .nresamples(10_000)
        .configure_from_args()
}
