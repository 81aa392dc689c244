//! loom models of `Queue`, through metalock's loom build: the correct
//! consumer passes; loom finds both planted bugs (each model must fail).
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use metalock_downstream::Queue;

/// Runs `model` under loom and returns the message it failed with, if any.
fn failure_of(model: impl Fn() + Sync + Send + 'static) -> Option<String> {
    failure_message(std::panic::catch_unwind(std::panic::AssertUnwindSafe(
        || {
            let mut builder = loom::model::Builder::new();
            builder.preemption_bound = Some(3);
            builder.check(model);
        },
    )))
}

include!("common/models.rs");
