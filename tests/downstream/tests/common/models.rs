// The models both checkers run (`models.rs` with loom, `shuttle_models.rs`
// with shuttle), included into each: `Arc`, `thread` and `failure_of` (run
// a model under the checker, return the message it failed with) come from
// the including file, which runs the model with `failure_message` below.

/// The message a checker's run failed with, if it failed.
fn failure_message(run: std::thread::Result<()>) -> Option<String> {
    run.err().map(|panic| {
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
fn finds_a_wait_guarded_by_if() {
    let failure = failure_of(|| two_consumers(Queue::take_trusting_the_wake_up))
        .expect("the checker must find the consumer that trusts its wake-up");
    assert!(failure.contains("the wait needed a loop"), "{failure}");
}

#[test]
fn finds_a_check_then_act_across_two_critical_sections() {
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
    .expect("the checker must find the lost update");
    assert!(failure.contains("an update was lost"), "{failure}");
}
