//! What the loom model files share: a builder, and a runner that prints
//! how many executions loom explored, so that a model that explores next to
//! nothing shows.

use loom::model::Builder;

/// A builder for the models: `LOOM_MAX_PREEMPTIONS` if set, else `bound`.
pub fn builder(bound: usize) -> Builder {
    let mut builder = Builder::new();
    builder.preemption_bound = builder.preemption_bound.or(Some(bound));
    if cfg!(metalock_swap_only) {
        // Every retry of the test-and-set meta-lock adds branches.
        builder.max_branches = 10_000;
    }
    builder
}

/// A builder for the models whose search at `bound` reaches all they
/// assert: `bound`, or `LOOM_MAX_PREEMPTIONS` if lower; a deeper run of
/// theirs costs far more and asserts nothing more.
// Not every model file caps a model.
#[allow(dead_code)]
pub fn capped(bound: usize) -> Builder {
    let mut capped = builder(bound);
    capped.preemption_bound = capped.preemption_bound.map(|b| b.min(bound));
    capped
}

/// A builder for a model that reaches what it asserts only at `bound`,
/// whatever `LOOM_MAX_PREEMPTIONS` says: a lower bound would leave its
/// assertion nothing to check, a higher one costs far more.
// Not every model file pins a model.
#[allow(dead_code)]
pub fn pinned(bound: usize) -> Builder {
    let mut pinned = builder(bound);
    pinned.preemption_bound = Some(bound);
    pinned
}

/// Runs `model` under `builder` and prints how many executions loom
/// explored.
pub fn explore(name: &str, builder: Builder, model: impl Fn() + Sync + Send + 'static) {
    run(
        name,
        builder,
        metalock::__test_hooks::start_crate_model_execution,
        model,
    );
}

/// As `explore`, but as a user's model runs (`metalock::model`): distinct
/// objects get homes and wait-table stripes of their own.
// Not every model file runs one.
#[allow(dead_code)]
pub fn explore_as_a_user(name: &str, builder: Builder, model: impl Fn() + Sync + Send + 'static) {
    run(name, builder, metalock::model::start_execution, model);
}

/// Runs `model` under `builder`, `start` first in each execution, and
/// prints how many executions loom explored.
fn run(name: &str, builder: Builder, start: fn(), model: impl Fn() + Sync + Send + 'static) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let executions = std::sync::Arc::new(AtomicUsize::new(0));
    let count = std::sync::Arc::clone(&executions);
    let bound = builder.preemption_bound;
    builder.check(move || {
        start();
        count.fetch_add(1, Ordering::Relaxed);
        model();
    });
    println!(
        "{name}: {} executions (preemption bound {bound:?})",
        executions.load(Ordering::Relaxed)
    );
}
