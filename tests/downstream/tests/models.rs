//! loom models of `Queue`, through metalock's loom build: the correct
//! consumer passes; loom finds both planted bugs (each model must fail),
//! and a data race of the test's own that metalock's statics, created on
//! first use, would hide.
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use metalock_downstream::Queue;

/// Runs `model` under loom, with metalock's statics created before it in
/// every execution, and returns the message it failed with, if any.
fn failure_of(model: impl Fn() + Sync + Send + 'static) -> Option<String> {
    failure_message(std::panic::catch_unwind(std::panic::AssertUnwindSafe(
        || {
            let mut builder = loom::model::Builder::new();
            builder.preemption_bound = Some(3);
            builder.check(move || {
                metalock::model::start_execution();
                model();
            });
        },
    )))
}

include!("common/models.rs");

/// A write published by a relaxed flag races the read of the thread that
/// sees the flag, whatever each thread does with metalock in between on an
/// object of its own (`touch` with its queue and its value). Had the
/// writer's lock created metalock's statics (no `start_execution`), loom
/// would order the write before the reader's lock and miss the race; so
/// would one keyed home, or one wait stripe, shared by the two objects.
fn a_write_published_by_a_relaxed_flag(touch: fn(&Queue, &u64)) {
    let failure = failure_of(move || {
        use loom::sync::atomic::{AtomicBool, Ordering::Relaxed};
        let data = Arc::new(loom::cell::UnsafeCell::new(0));
        let ready = Arc::new(AtomicBool::new(false));
        let objects = Arc::new([(Queue::new(), 0_u64), (Queue::new(), 0_u64)]);
        let writer = {
            let (data, ready, objects) =
                (Arc::clone(&data), Arc::clone(&ready), Arc::clone(&objects));
            thread::spawn(move || {
                // SAFETY: not sound on purpose: the write no lock orders
                // before the read, which the model must report.
                data.with_mut(|d| unsafe { *d = 1 });
                touch(&objects[0].0, &objects[0].1);
                // Relaxed: the planted bug; it publishes nothing.
                ready.store(true, Relaxed);
            })
        };
        // Relaxed: pairs with nothing, as the store.
        while !ready.load(Relaxed) {
            thread::yield_now();
        }
        touch(&objects[1].0, &objects[1].1);
        // SAFETY: not sound on purpose: the read the model must report.
        let _ = data.with(|d| unsafe { *d });
        writer.join().unwrap();
    })
    .expect("loom must find the write that only a relaxed flag publishes");
    assert!(failure.contains("Causality violation"), "{failure}");
}

#[test]
fn finds_a_write_published_by_a_relaxed_flag() {
    a_write_published_by_a_relaxed_flag(|queue, _| queue.put(1));
}

#[test]
fn finds_a_write_published_by_a_relaxed_flag_past_keyed_locks() {
    a_write_published_by_a_relaxed_flag(|_, value| drop(metalock::lock(value)));
}

#[test]
fn finds_a_write_published_by_a_relaxed_flag_past_timed_waits() {
    a_write_published_by_a_relaxed_flag(|queue, _| {
        assert_eq!(queue.take_within(std::time::Duration::from_millis(1)), None);
    });
}

/// `metalock::model::check` runs a model as `loom::model` does.
#[test]
fn check_runs_the_model_in_every_execution() {
    let executions = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = std::sync::Arc::clone(&executions);
    metalock::model::check(move || {
        // Relaxed: a tally, read after `check` returns.
        count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let queue = Arc::new(Queue::new());
        let other = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.put(1))
        };
        queue.put(2);
        other.join().unwrap();
        let mut items = queue.snapshot();
        items.sort_unstable();
        assert_eq!(items, [1, 2]);
    });
    assert!(executions.load(std::sync::atomic::Ordering::Relaxed) > 1);
}
