//! Loom models of code that uses metalock (`--cfg loom` only).
//!
//! In a normal build the crate's tables (execution environments, the wait
//! table, homes, the keyed table) are `const` statics that no thread
//! creates. Under loom they live for one execution and are created when
//! first used, and loom orders every later access of one after its
//! creation: created by a model thread in the middle of its work, such a
//! table orders that work before every later use of metalock by any thread,
//! an edge the real program does not have, which can hide a data race of
//! the code under test. Create them first, on the model's main thread, with
//! [`start_execution`], or run the model with [`check`].
//!
//! Keyed monitors' homes (4) and the wait table's stripes (3) go to
//! addresses in the order of their first use in the execution, so that
//! distinct objects get distinct ones until they run out, as in a real run;
//! a model of more shares them, and threads that meet in one are ordered
//! through it. On the `swap-only` backend a retry of a taken meta-lock
//! waits for any release.
//!
//! ```ignore
//! #[test]
//! fn no_lost_update() {
//!     metalock::model::check(|| {
//!         let counter = loom::sync::Arc::new(metalock::Synchronized::new(0));
//!         // spawn, lock, join, assert as with loom::model
//!     });
//! }
//! ```

/// Creates metalock's statics of the current loom execution on the calling
/// thread. Call it first in the model's closure, before the model spawns, in
/// every execution (`loom::model::Builder::check(|| { start_execution(); ... })`);
/// created there they order nothing a spawn does not. Once they exist, later
/// calls in the same execution do nothing.
pub fn start_execution() {
    crate::primitive::creating_statics(|| {
        crate::exec_env::create_model_statics();
        crate::monitor::create_model_statics();
        crate::keyed::create_table();
        #[cfg(metalock_swap_only)]
        crate::primitive::releases::create_releases();
    });
}

/// Runs `model` as `loom::model` does (its builder's defaults, read from the
/// `LOOM_*` variables), with [`start_execution`] first in every execution.
pub fn check<F>(model: F)
where
    F: Fn() + Sync + Send + 'static,
{
    loom::model(move || {
        start_execution();
        model();
    });
}
