//! An unwind while a thread holds a meta-lock, or waits in its hand-off,
//! would leave the word BUSY for good and wedge every thread that uses the
//! object. The crate runs no user code there; what it cannot keep out (a
//! platform callback, here a test hook standing in for one) aborts the
//! process with a message instead. Checked in a child process: the test
//! runs itself again (`tests/common/child.rs`).
// Under a model checker (`--cfg loom`, feature `shuttle`) the crate's
// constructors are not `const` and its primitives run only inside a model.
#![cfg(not(any(loom, feature = "shuttle")))]

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use metalock::__test_hooks::{HandoffEvent, set_handoff_hook};
use metalock::{Condition, MultiUseWord};

#[path = "common/child.rs"]
mod child;
use child::{child_aborts_saying, is_child};

/// In a child: this thread keeps re-entering `word`, holding it 200 µs each
/// time, while another thread contends, so that the contender is invited
/// and loses the monitor again and again, until eventual fairness hands it
/// over; the hook set before ends the process on the event it waits for.
/// If that never comes, says `never` and exits cleanly, which the parent
/// reports as a failure.
fn contend_until_the_hook_ends_it(word: &MultiUseWord, never: &str) -> ! {
    let stop = AtomicBool::new(false);
    thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                drop(word.lock());
            }
        });
        for _ in 0..10_000_000 {
            let guard = word.lock();
            thread::sleep(Duration::from_micros(200));
            drop(guard);
        }
        stop.store(true, Ordering::Relaxed);
    });
    eprintln!("{never}");
    std::process::exit(0);
}

/// In the child: a thread queues for a meta-lock another thread holds, and
/// the hook panics right there, between its swap and its hand-off.
#[test]
#[cfg_attr(
    feature = "swap-only",
    ignore = "the test-and-set meta-lock has no queue of successors: a thread waiting for \
              it holds nothing an unwind could wedge, and no hand-off event fires"
)]
fn panic_while_queued_for_a_meta_lock() {
    if !is_child() {
        let stderr = child_aborts_saying(
            "panic_while_queued_for_a_meta_lock",
            "metalock: a panic unwound in the middle of the locking protocol",
        );
        assert!(
            !stderr.contains("UNREACHABLE"),
            "the child got past the unwind:\n{stderr}"
        );
        return;
    }
    static WORD: MultiUseWord = MultiUseWord::with_payload(7);
    static HOLDING: AtomicBool = AtomicBool::new(false);
    fn panic_when_queued(event: HandoffEvent) {
        if event == HandoffEvent::SuccessorQueued {
            panic!("a platform callback panics under the meta-lock");
        }
    }
    set_handoff_hook(Some(panic_when_queued));
    thread::scope(|s| {
        s.spawn(|| {
            WORD.__with_meta_lock(|| {
                HOLDING.store(true, Ordering::SeqCst);
                thread::sleep(Duration::from_secs(5));
            })
        });
        while !HOLDING.load(Ordering::SeqCst) {
            thread::yield_now();
        }
        // Swaps in behind the holder, then the hook panics.
        let _ = std::panic::catch_unwind(|| drop(WORD.lock()));
        eprintln!("UNREACHABLE: the unwind was caught and the word is wedged");
        std::process::exit(0);
    });
}

/// In the child: the monitor hands itself to a thread passed over too long,
/// and the hook panics in the wake-up that follows the release.
#[test]
fn panic_while_waking_an_heir() {
    if !is_child() {
        child_aborts_saying(
            "panic_while_waking_an_heir",
            "metalock: a panic unwound in the middle of the locking protocol",
        );
        return;
    }
    static WORD: MultiUseWord = MultiUseWord::new();
    fn panic_on_hand_over(event: HandoffEvent) {
        if event == HandoffEvent::MonitorHandedOver {
            panic!("a platform callback panics while waking the heir");
        }
    }
    set_handoff_hook(Some(panic_on_hand_over));
    // The hook panics once the eventual fairness rule hands the contender
    // the monitor.
    contend_until_the_hook_ends_it(&WORD, "no hand-over happened");
}

/// In the child: code that the crate runs under a meta-lock (a hook standing
/// in for a global allocator or a platform callback) locks a monitor on the
/// same word. Waiting for itself would hang; the crate stops with a
/// message. (Before, only a debug build said so; a release build hung, or,
/// with another thread queued behind, stopped on an unrelated message.)
#[test]
fn a_monitor_locked_under_its_own_meta_lock() {
    if !is_child() {
        child_aborts_saying(
            "a_monitor_locked_under_its_own_meta_lock",
            "metalock: a thread asked for a meta-lock it already holds",
        );
        return;
    }
    static WORD: MultiUseWord = MultiUseWord::new();
    // Fires under the word's meta-lock: a thread invited to re-contend lost
    // the monitor and queues again.
    fn lock_again(event: HandoffEvent) {
        if event == HandoffEvent::ContenderPassedOver {
            drop(WORD.lock());
        }
    }
    set_handoff_hook(Some(lock_again));
    // The hook locks the word again once an invited contender loses.
    contend_until_the_hook_ends_it(&WORD, "no contender was passed over");
}

/// In the child: code that the crate runs under a meta-lock (a hook standing
/// in for a platform callback) locks a contended monitor on another word.
/// Its meta-lock would share the thread's hand-off state with the one held,
/// and a successor of either could be handed the other's bits; the crate
/// stops with a message before it asks for the second.
#[test]
fn a_contended_monitor_locked_under_another_meta_lock() {
    if !is_child() {
        child_aborts_saying(
            "a_contended_monitor_locked_under_another_meta_lock",
            "metalock: a thread asked for a meta-lock while it holds or waits for another",
        );
        return;
    }
    static WORD: MultiUseWord = MultiUseWord::new();
    static OTHER: MultiUseWord = MultiUseWord::new();
    // Fires under WORD's meta-lock; OTHER is held by the thread below, so
    // the lock takes the meta-lock path.
    fn lock_other(event: HandoffEvent) {
        if event == HandoffEvent::ContenderPassedOver {
            drop(OTHER.lock());
        }
    }
    let held = std::sync::Barrier::new(2);
    thread::scope(|s| {
        s.spawn(|| {
            let _guard = OTHER.lock();
            held.wait();
            thread::sleep(Duration::from_secs(600));
        });
        held.wait();
        set_handoff_hook(Some(lock_other));
        contend_until_the_hook_ends_it(&WORD, "no contender was passed over");
    });
}

/// In the child: code that the crate runs under a stripe of its wait table
/// (a hook standing in for a platform callback or a global allocator)
/// notifies a condition that has a waiter. Should both share the stripe,
/// the thread would wait for the stripe's lock it holds; the crate stops
/// with a message before it asks for a stripe, whichever it is.
#[test]
fn a_condition_notified_under_a_stripe() {
    if !is_child() {
        child_aborts_saying(
            "a_condition_notified_under_a_stripe",
            "metalock: a thread asked for a wait-table stripe while it holds one",
        );
        return;
    }
    static WORD: MultiUseWord = MultiUseWord::new();
    static OTHER: MultiUseWord = MultiUseWord::new();
    static WAKE: Condition = Condition::new();
    static OTHER_WAKE: Condition = Condition::new();
    // Fires under WAKE's stripe, as its `notify_all` finds the monitor
    // free and queues the second waiter behind the first.
    fn notify_other(event: HandoffEvent) {
        if event == HandoffEvent::NotifiedQueuedBehindInvited {
            OTHER_WAKE.notify_one();
        }
    }
    thread::scope(|s| {
        s.spawn(|| OTHER_WAKE.wait(&mut OTHER.lock()));
        for _ in 0..2 {
            s.spawn(|| WAKE.wait(&mut WORD.lock()));
        }
        while OTHER_WAKE.wait_set_length() < 1 || WAKE.wait_set_length() < 2 {
            thread::sleep(Duration::from_millis(1));
        }
        set_handoff_hook(Some(notify_other));
        WAKE.notify_all();
        eprintln!("the notify_all under the stripe never fired the hook");
        std::process::exit(0);
    });
}
