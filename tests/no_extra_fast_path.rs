//! Without the extra-fast path (`meta-lock-only`, the swap-only backend)
//! every operation on a monitor goes through the meta-lock, as the README
//! and the payload and `try_lock` docs say: the owner's own payload read
//! and write, and a `try_lock` that fails on a monitor another thread
//! holds, included. Only the `stats` counters show the path taken. One
//! test in this binary: the counters are process-wide.
// A model checker's build (`--cfg loom`, feature `shuttle`) has no `stats`.
#![cfg(all(
    feature = "stats",
    any(feature = "meta-lock-only", feature = "swap-only"),
    not(any(loom, feature = "shuttle"))
))]

use metalock::stats::{self, Snapshot};
use metalock::{MultiUseWord, RawMonitor, Synchronized};
use std::sync::Barrier;

const ROUNDS: u64 = 10;

/// The counters over `ROUNDS` runs of `shape`.
fn count(mut shape: impl FnMut()) -> Snapshot {
    let before = stats::snapshot();
    for _ in 0..ROUNDS {
        shape();
    }
    stats::snapshot().since(&before)
}

#[test]
fn every_operation_takes_the_meta_lock() {
    let word = MultiUseWord::with_payload(0x5a);
    let sync = Synchronized::new(0_u64);
    let raw = lock_api::Mutex::<RawMonitor, u64>::new(0);

    // lock, payload read, payload write, unlock: four meta-locks.
    let s = count(|| {
        let _guard = word.lock();
        word.set_payload(word.payload() + 1);
    });
    assert_eq!(
        (s.get_meta_lock, s.extra_fast_hits),
        (4 * ROUNDS, 0),
        "the owner's payload: {s:?}"
    );
    assert_eq!(word.payload(), 0x5a + ROUNDS as usize);

    let (held, release) = (Barrier::new(2), Barrier::new(2));
    std::thread::scope(|s| {
        s.spawn(|| {
            let _guards = (word.lock(), sync.lock(), raw.lock());
            held.wait();
            release.wait();
        });
        held.wait();
        let tries = count(|| {
            assert!(word.try_lock().is_none());
            assert!(sync.try_lock().is_none());
            assert!(raw.try_lock().is_none());
        });
        release.wait();
        assert_eq!(
            (tries.get_meta_lock, tries.extra_fast_hits),
            (3 * ROUNDS, 0),
            "a failed try_lock: {tries:?}"
        );
    });
}
