//! Every uncontended operation takes its fast path: no meta-lock, and on
//! every enter and exit of an unowned monitor the one compare-and-swap of
//! the extra-fast path (paper 000, section 5.2). A change that sends one of
//! them through the meta-lock stays correct, so only the counters of the
//! `stats` feature show it: this test reads them around each operation
//! shape, of every kind of monitor. (The slow enter's spin, when it takes
//! a free monitor at its first look, does so with the same compare-and-swap
//! and counts the same: the counters cannot tell it, and it costs a call,
//! not a meta-lock.) One test in this binary: the counters are
//! process-wide.
// A model checker's build (`--cfg loom`, feature `shuttle`) has no `stats`;
// the meta-lock-only and swap-only backends have no extra-fast path.
#![cfg(all(
    feature = "stats",
    not(any(
        loom,
        feature = "shuttle",
        feature = "meta-lock-only",
        feature = "swap-only"
    ))
))]

use metalock::stats::{self, Snapshot};
use metalock::{
    Condition, Monitor, MonitorGuard, MultiUseWord, RawMonitor, ReentrantSynchronized,
    Synchronized, SynchronizedGuard,
};
use std::cell::Cell;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

const ROUNDS: u64 = 10;

/// Runs `shape` `ROUNDS` times and checks that no meta-lock was taken, no
/// enter went on to the slow path, and the extra-fast path counted `hits`
/// enters and exits per round and never missed.
#[track_caller]
fn fast(name: &str, hits: u64, mut shape: impl FnMut()) {
    let before = stats::snapshot();
    for _ in 0..ROUNDS {
        shape();
    }
    let s: Snapshot = stats::snapshot().since(&before);
    assert_eq!(s.get_meta_lock, 0, "{name}: took a meta-lock: {s:?}");
    assert_eq!(
        (s.extra_fast_hits, s.extra_fast_misses),
        (hits * ROUNDS, 0),
        "{name}: {hits} extra-fast enters and exits per round, no miss: {s:?}"
    );
    // The slow enter's spin takes a free monitor with the same one
    // compare-and-swap, but counts the spin.
    assert_eq!(
        (s.spins_won, s.spins_lost, s.blocking_enters),
        (0, 0, 0),
        "{name}: went past the fast path: {s:?}"
    );
}

/// Four monitors, each entered inside the one before and left in reverse:
/// the thread holds records out, so each enter after the first takes the
/// nested form of the fast path.
macro_rules! nested4 {
    ($name:expr, $objects:expr, $lock:expr) => {
        fast($name, 8, || {
            let [a, b, c, d] = &$objects;
            let a = $lock(a);
            let b = $lock(b);
            let c = $lock(c);
            let d = $lock(d);
            drop((d, c, b, a));
        })
    };
}

#[test]
fn uncontended_operations_take_no_meta_lock() {
    // Warm-up: the thread's execution environment and records exist, and
    // each keyed value below has been seen once.
    let word = MultiUseWord::with_payload(0x5a);
    let words: [MultiUseWord; 4] = Default::default();
    let sync = Synchronized::new(0_u64);
    let syncs: [Synchronized<u64>; 4] = Default::default();
    let reentrant = ReentrantSynchronized::new(Cell::new(0_u64));
    let fair = MultiUseWord::new_fair();
    let arc = Arc::new(Synchronized::new(0_u64));
    let arc_word = Arc::new(MultiUseWord::new());
    let values = [0_u64; 4];
    let condition = Condition::new();
    let raw = lock_api::Mutex::<RawMonitor, u64>::new(0);
    for w in words.iter().chain([&word, &fair]) {
        drop(w.lock());
    }
    for v in &values {
        drop(metalock::lock(v));
    }

    // The word, its recursion, and the other ways in.
    fast("word lock", 2, || drop(word.lock()));
    fast("word recursion, 3 deep", 2, || {
        let outer = word.lock();
        let inner = word.lock();
        let innermost = word.lock();
        assert_eq!(innermost.depth(), 3);
        drop((innermost, inner, outer));
    });
    fast("word try_lock", 2, || drop(word.try_lock().unwrap()));
    fast("word try_lock_for", 2, || {
        drop(word.try_lock_for(Duration::from_secs(60)).unwrap())
    });
    fast("word try_lock_until", 2, || {
        let deadline = Instant::now() + Duration::from_secs(60);
        drop(word.try_lock_until(deadline).unwrap())
    });
    fast("word lock_interruptibly", 2, || {
        drop(word.lock_interruptibly().unwrap())
    });
    fast("fair word lock", 2, || drop(fair.lock()));
    fast("unlock_fair with nobody queued", 2, || {
        word.lock().unlock_fair()
    });
    fast("Monitor::synchronized", 2, || {
        word.synchronized(|guard| assert_eq!(guard.depth(), 1))
    });
    fast("lock_arc", 2, || drop(arc_word.lock_arc()));
    fast("unlocked, then locked again", 4, || {
        let mut guard = word.lock();
        MonitorGuard::unlocked(&mut guard, || assert!(!word.is_locked()));
    });
    fast("bump with nobody queued", 2, || {
        let mut guard = word.lock();
        MonitorGuard::bump(&mut guard);
    });
    fast("Synchronized unlocked and bump", 4, || {
        let mut guard = sync.lock();
        SynchronizedGuard::unlocked(&mut guard, || ());
        SynchronizedGuard::bump(&mut guard);
    });
    nested4!("four words nested", words, MultiUseWord::lock);

    // Reading the monitor's state, owned or not, and notifying nobody.
    fast("queries of an unowned word", 0, || {
        assert!(!word.is_locked() && !word.is_held_by_current_thread());
        assert_eq!((word.queue_length(), word.wait_set_length()), (0, 0));
        assert!(!word.has_queued_threads() && !word.has_waiters());
    });
    fast("queries and notifies by the owner", 2, || {
        let guard = word.lock();
        assert!(word.is_locked() && word.is_held_by_current_thread());
        assert_eq!((word.queue_length(), word.wait_set_length()), (0, 0));
        assert!(!word.has_queued_threads() && !word.has_waiters());
        assert!(!guard.notify_one());
        assert_eq!(guard.notify_all(), 0);
        assert!(!condition.notify_one());
        assert_eq!(condition.notify_all(), 0);
        assert!(!condition.has_waiters());
    });
    fast("payload read and written while owned", 2, || {
        let _guard = word.lock();
        word.set_payload(word.payload() + 1);
    });
    fast("payload read and written two levels deep", 2, || {
        let _outer = word.lock();
        let _inner = word.lock();
        word.set_payload(word.payload() + 1);
    });
    // The unlocks kept each value.
    assert_eq!(word.payload(), 0x5a + 2 * ROUNDS as usize);

    // A try on a monitor another thread holds fails at one load: no
    // meta-lock, which would send the owner's unlock through it too.
    let (held, release) = (Barrier::new(2), Barrier::new(2));
    std::thread::scope(|s| {
        s.spawn(|| {
            let _guards = (
                word.lock(),
                sync.lock(),
                reentrant.lock(),
                metalock::lock(&values[0]),
                raw.lock(),
            );
            held.wait();
            release.wait();
        });
        held.wait();
        let before = stats::snapshot();
        for _ in 0..ROUNDS {
            assert!(word.try_lock().is_none());
            assert!(sync.try_lock().is_none());
            assert!(reentrant.try_lock().is_none());
            assert!(raw.try_lock().is_none());
            // A poller that holds a monitor itself reads the owner's
            // record too, to tell whether it is its own.
            let _mine = words[0].lock();
            assert!(word.try_lock().is_none());
        }
        let s = stats::snapshot().since(&before);
        release.wait();
        assert_eq!(
            (s.get_meta_lock, s.extra_fast_misses),
            (0, 0),
            "a failed try_lock: {s:?}"
        );
    });

    // Synchronized and its guards.
    fast("Synchronized lock", 2, || *sync.lock() += 1);
    fast("Synchronized try_lock", 2, || {
        *sync.try_lock().unwrap() += 1
    });
    fast("Synchronized lock_arc", 2, || *arc.lock_arc() += 1);
    fast("Synchronized mapped guard", 2, || {
        let mapped = SynchronizedGuard::map(sync.lock(), |v| v);
        drop(mapped);
    });
    nested4!("four Synchronized nested", syncs, Synchronized::lock);
    fast("Synchronized inside a word", 4, || {
        let _outer = word.lock();
        *sync.lock() += 1;
    });

    // ReentrantSynchronized, one level and recursively.
    fast("ReentrantSynchronized lock", 2, || {
        let guard = reentrant.lock();
        guard.set(guard.get() + 1);
    });
    fast("ReentrantSynchronized recursion", 2, || {
        let outer = reentrant.lock();
        let inner = reentrant.lock();
        inner.set(outer.get() + 1);
    });

    // Keyed monitors: the exits count; the enters take the home's one
    // compare-and-swap, which the counters do not see, so the meta-lock
    // count is what shows a slow enter.
    fast("keyed lock", 1, || drop(metalock::lock(&values[0])));
    fast("keyed recursion", 1, || {
        let outer = metalock::lock(&values[0]);
        let inner = metalock::lock(&values[0]);
        drop((inner, outer));
    });
    fast("keyed try_lock", 1, || {
        drop(metalock::try_lock(&values[1]).unwrap())
    });
    fast("keyed synchronized", 1, || {
        metalock::synchronized(&values[2], |guard| assert_eq!(guard.depth(), 1))
    });
    fast("keyed queries", 0, || {
        assert!(!metalock::is_locked(&values[3]));
        assert_eq!(metalock::queue_length(&values[3]), 0);
        assert!(!metalock::has_waiters(&values[3]));
    });
    fast("four keyed nested", 4, || {
        let a = metalock::lock(&values[0]);
        let b = metalock::lock(&values[1]);
        let c = metalock::lock(&values[2]);
        let d = metalock::lock(&values[3]);
        drop((d, c, b, a));
    });

    // A home serves the next address again once an overflow through it
    // has ended, and once a wait (which pins it to its address) has: two
    // addresses of one 8-byte granule share a home. The first lock after
    // each rekeys the home through its meta-lock.
    let granule = Granule([0; 8]);
    let (a, b) = (&granule.0[0], &granule.0[1]);
    {
        let _a = metalock::lock(a);
        drop(metalock::lock(b)); // an overflow entry
    }
    drop(metalock::lock(b));
    fast("keyed lock after an overflow ended", 1, || {
        drop(metalock::lock(b))
    });
    {
        let mut guard = metalock::lock(a);
        assert!(guard.wait_for(Duration::from_millis(1)).timed_out());
    }
    drop(metalock::lock(b));
    fast("keyed lock after a wait ended", 1, || {
        drop(metalock::lock(b))
    });
}

/// Eight bytes that share one home.
#[repr(align(8))]
struct Granule([u8; 8]);
