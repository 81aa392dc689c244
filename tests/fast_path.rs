//! The extra-fast path (paper 000, section 5.2) and the meta-lock protocol
//! interoperate: a thread that locked with the fused compare-and-swap, a
//! second thread that queues behind it (setting the queue-summary bit), and
//! the fused unlock that must then fail over to the slow path and invite the
//! queued thread. With `--features stats` the test also checks, through the
//! counters, that each step took the path it should. One test per binary:
//! the counters are process-wide.
// Under a model checker (`--cfg loom`, feature `shuttle`) the crate's
// primitives run only inside a model, and there is no `stats`.
#![cfg(not(any(loom, feature = "shuttle")))]

use metalock::MultiUseWord;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

#[test]
fn fused_unlock_fails_over_when_a_thread_queued() {
    let word = Arc::new(MultiUseWord::with_payload(0x1234));
    #[cfg(feature = "stats")]
    let before = metalock::stats::snapshot();

    let guard = word.lock();
    #[cfg(feature = "stats")]
    if !cfg!(any(feature = "meta-lock-only", feature = "swap-only")) {
        let s = metalock::stats::snapshot().since(&before);
        assert_eq!(
            s.extra_fast_hits, 1,
            "the first lock is one fused CAS: {s:?}"
        );
        assert_eq!(s.get_meta_lock, 0, "{s:?}");
    }

    let entered = Arc::new(AtomicBool::new(false));
    let contender = {
        let (word, entered) = (Arc::clone(&word), Arc::clone(&entered));
        thread::spawn(move || {
            let guard = word.lock();
            entered.store(true, Ordering::SeqCst);
            assert_eq!(word.payload(), 0x1234);
            drop(guard);
        })
    };

    // Wait until the contender has given up spinning and queued.
    #[cfg(feature = "stats")]
    while metalock::stats::snapshot().since(&before).blocking_enters == 0 {
        thread::sleep(Duration::from_millis(1));
    }
    #[cfg(not(feature = "stats"))]
    thread::sleep(Duration::from_millis(100));
    assert!(!entered.load(Ordering::SeqCst), "the monitor is still ours");

    #[cfg(feature = "stats")]
    let before_unlock = metalock::stats::snapshot();
    drop(guard);
    contender
        .join()
        .expect("the queued thread acquired and released");
    assert!(entered.load(Ordering::SeqCst));

    #[cfg(feature = "stats")]
    if !cfg!(any(feature = "meta-lock-only", feature = "swap-only")) {
        let s = metalock::stats::snapshot().since(&before_unlock);
        // Our unlock failed over (a miss) through the meta-lock, and invited
        // the contender, whose re-entry may take it once more. (That the
        // owner's payload read takes none, `uncontended_paths` checks.)
        assert!(s.extra_fast_misses >= 1, "{s:?}");
        assert!((1..=2).contains(&s.get_meta_lock), "{s:?}");
    }

    // Back to NEUTRAL with the payload: the next lock is fused again.
    assert!(!word.is_locked());
    assert_eq!(word.payload(), 0x1234);
    #[cfg(feature = "stats")]
    let before_again = metalock::stats::snapshot();
    drop(word.lock());
    #[cfg(feature = "stats")]
    if !cfg!(any(feature = "meta-lock-only", feature = "swap-only")) {
        let s = metalock::stats::snapshot().since(&before_again);
        assert_eq!(s.extra_fast_hits, 2, "fused lock and unlock: {s:?}");
    }
}
