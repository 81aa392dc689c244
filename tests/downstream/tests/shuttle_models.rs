//! The models of `models.rs`, with shuttle's randomized schedulers instead
//! of loom's exhaustive search: for programs too big for loom. Built with
//! the `shuttle` feature, metalock's primitives are shuttle's. The correct
//! consumer passes; shuttle finds both planted bugs (each model must fail).
#![cfg(feature = "shuttle")]

use shuttle::sync::Arc;
use shuttle::thread;
use metalock_downstream::Queue;

/// Schedules tried per model, by each of the two schedulers.
const ITERATIONS: usize = 2_000;

/// Runs `model` under shuttle's random and PCT schedulers and returns the
/// message it failed with, if any.
fn failure_of(model: impl Fn() + Sync + Send + Clone + 'static) -> Option<String> {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        shuttle::check_random(model.clone(), ITERATIONS);
        shuttle::check_pct(model, ITERATIONS, 3);
    }));
    result.err().map(|panic| {
        panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

/// Two consumers and a producer of two items.
fn two_consumers(take: fn(&Queue) -> u32) {
    let queue = Arc::new(Queue::new());
    let consumers: Vec<_> = (0..2)
        .map(|_| {
            let queue = Arc::clone(&queue);
            thread::spawn(move || take(&queue))
        })
        .collect();
    queue.put(1);
    queue.put(2);
    let mut taken: Vec<u32> = consumers.into_iter().map(|c| c.join().unwrap()).collect();
    taken.sort_unstable();
    assert_eq!(taken, [1, 2]);
}

#[test]
fn waiting_in_a_loop_is_correct() {
    assert_eq!(failure_of(|| two_consumers(Queue::take)), None);
}

#[test]
fn shuttle_finds_a_wait_guarded_by_if() {
    let failure = failure_of(|| two_consumers(Queue::take_trusting_the_wake_up))
        .expect("shuttle must find the consumer that trusts its wake-up");
    assert!(failure.contains("the wait needed a loop"), "{failure}");
}

#[test]
fn shuttle_finds_a_check_then_act_across_two_critical_sections() {
    let failure = failure_of(|| {
        let queue = Arc::new(Queue::new());
        queue.put(0);
        let other = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.bump_first_across_two_locks())
        };
        queue.bump_first_across_two_locks();
        other.join().unwrap();
        assert_eq!(queue.snapshot(), [2], "an update was lost");
    })
    .expect("shuttle must find the lost update");
    assert!(failure.contains("an update was lost"), "{failure}");
}
