//! Each thread's counters of the events paper 000 reports in Tables 2 and 3
//! (feature `stats`); `crate::stats` sums them.

use core::sync::atomic::{AtomicUsize, Ordering};

/// What one thread has counted.
///
/// Invariant: only the thread bound to the owning EE writes the counters;
/// any thread may read them (Relaxed) for a snapshot.
#[derive(Debug, Default)]
pub(crate) struct ThreadStats {
    pub(crate) get_meta_lock: AtomicUsize,
    pub(crate) get_meta_lock_slow: AtomicUsize,
    pub(crate) extra_fast_hits: AtomicUsize,
    pub(crate) extra_fast_misses: AtomicUsize,
    pub(crate) blocking_enters: AtomicUsize,
    pub(crate) waits: AtomicUsize,
    pub(crate) notifies: AtomicUsize,
    pub(crate) hand_overs: AtomicUsize,
    pub(crate) futile_wakeups: AtomicUsize,
    pub(crate) wake_to_block: AtomicUsize,
    pub(crate) spins_won: AtomicUsize,
    pub(crate) spins_lost: AtomicUsize,
    pub(crate) lock_records_allocated: AtomicUsize,
}

impl ThreadStats {
    pub(crate) const fn new() -> Self {
        Self {
            get_meta_lock: AtomicUsize::new(0),
            get_meta_lock_slow: AtomicUsize::new(0),
            extra_fast_hits: AtomicUsize::new(0),
            extra_fast_misses: AtomicUsize::new(0),
            blocking_enters: AtomicUsize::new(0),
            waits: AtomicUsize::new(0),
            notifies: AtomicUsize::new(0),
            hand_overs: AtomicUsize::new(0),
            futile_wakeups: AtomicUsize::new(0),
            wake_to_block: AtomicUsize::new(0),
            spins_won: AtomicUsize::new(0),
            spins_lost: AtomicUsize::new(0),
            lock_records_allocated: AtomicUsize::new(0),
        }
    }
}

/// Adds `n` to one of the calling thread's counters.
#[inline(always)]
pub(crate) fn add(counter: &AtomicUsize, n: usize) {
    // Relaxed load and store: the owning thread is the only writer (type
    // invariant), and snapshots need no ordering with the data. Wrapping: a
    // 32-bit counter can run out within minutes, and some counts are taken
    // under a meta-lock, where an overflow panic would abort the process.
    counter.store(
        counter.load(Ordering::Relaxed).wrapping_add(n),
        Ordering::Relaxed,
    );
}
