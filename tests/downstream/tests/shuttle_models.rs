//! The models of `models.rs`, with shuttle's randomized schedulers instead
//! of loom's exhaustive search: for programs too big for loom. Built with
//! the `shuttle` feature, metalock's primitives are shuttle's. The correct
//! consumer passes; shuttle finds both planted bugs (each model must fail).
#![cfg(feature = "shuttle")]

use metalock_downstream::Queue;
use shuttle::sync::Arc;
use shuttle::thread;

/// Schedules tried per model, by each of the two schedulers.
const ITERATIONS: usize = 2_000;

/// Runs `model` under shuttle's random and PCT schedulers and returns the
/// message it failed with, if any.
fn failure_of(model: impl Fn() + Sync + Send + Clone + 'static) -> Option<String> {
    failure_message(std::panic::catch_unwind(std::panic::AssertUnwindSafe(
        || {
            shuttle::check_random(model.clone(), ITERATIONS);
            shuttle::check_pct(model, ITERATIONS, 3);
        },
    )))
}

include!("common/models.rs");
