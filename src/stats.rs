//! Counters of the synchronization events that paper 000 reports in Tables 2
//! and 3, for any program (feature `stats`).
//!
//! Each thread counts in its own execution environment with plain
//! load-and-store updates (no read-modify-write, no shared cache line), and
//! [`snapshot`] sums the counters of every execution environment ever
//! created. Since environments are recycled rather than freed, the totals
//! include exited threads, and they include live threads up to their latest
//! update. Without the feature the counting compiles to nothing.

use core::fmt;
use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use crate::exec_env::ExecEnv;

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
            lock_records_allocated: AtomicUsize::new(0),
        }
    }
}

/// Adds `n` to one of the calling thread's counters.
#[inline(always)]
pub(crate) fn add(counter: &AtomicUsize, n: usize) {
    // Relaxed load and store: the owning thread is the only writer (type
    // invariant), and snapshots need no ordering with the data.
    counter.store(counter.load(Ordering::Relaxed) + n, Ordering::Relaxed);
}

/// Every EE ever created, linked through `ExecEnv::stats_next`. Pushed under
/// the global lock, read without it: an EE's link is set before the EE is
/// published and never changes.
static ALL_ENVS: AtomicPtr<ExecEnv> = AtomicPtr::new(core::ptr::null_mut());

/// Links a new, never-freed EE into the list that [`snapshot`] walks.
pub(crate) fn register(ee: &'static ExecEnv) {
    crate::exec_env::with_global_lock(|| {
        // Relaxed: writers are serialized by the lock.
        ee.stats_next
            .store(ALL_ENVS.load(Ordering::Relaxed), Ordering::Relaxed);
        // Release pairs with the Acquire in `snapshot`, which then sees the
        // EE's initialised fields and its `stats_next`.
        ALL_ENVS.store(ee as *const ExecEnv as *mut ExecEnv, Ordering::Release);
    });
}

/// Totals of the synchronization events of all threads so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Snapshot {
    /// Meta-lock acquisitions (Table 3, "#getMetaLock").
    pub get_meta_lock: u64,
    /// Acquisitions that found the meta-lock BUSY and went through the
    /// hand-off (Table 3, "#getMetaLockSlow").
    pub get_meta_lock_slow: u64,
    /// Locks and unlocks done by the extra-fast single compare-and-swap.
    pub extra_fast_hits: u64,
    /// Locks and unlocks that tried or could not try the extra-fast path and
    /// fell back to the meta-lock protocol.
    pub extra_fast_misses: u64,
    /// Monitor enters that blocked because another thread owned the monitor.
    pub blocking_enters: u64,
    /// Calls of `wait`, `wait_for` and `wait_until`.
    pub waits: u64,
    /// Calls of `notify_one` and `notify_all`.
    pub notifies: u64,
    /// Exits that handed the monitor to a thread passed over for too long
    /// instead of releasing it (eventual fairness).
    pub hand_overs: u64,
    /// Lock records taken from the global allocator (Table 2).
    pub lock_records_allocated: u64,
}

/// Sums the counters of every thread that has synchronized so far.
pub fn snapshot() -> Snapshot {
    let mut total = Snapshot::default();
    // Acquire pairs with the Release push in `register`.
    let mut ee = ALL_ENVS.load(Ordering::Acquire);
    // SAFETY: the list holds EEs that are never freed, each published by
    // `register` before it became reachable.
    while let Some(env) = unsafe { ee.as_ref() } {
        let s = &env.stats;
        // Relaxed: counters carry no data; a snapshot needs no ordering.
        let get = |c: &AtomicUsize| c.load(Ordering::Relaxed) as u64;
        total.get_meta_lock += get(&s.get_meta_lock);
        total.get_meta_lock_slow += get(&s.get_meta_lock_slow);
        total.extra_fast_hits += get(&s.extra_fast_hits);
        total.extra_fast_misses += get(&s.extra_fast_misses);
        total.blocking_enters += get(&s.blocking_enters);
        total.waits += get(&s.waits);
        total.notifies += get(&s.notifies);
        total.hand_overs += get(&s.hand_overs);
        total.lock_records_allocated += get(&s.lock_records_allocated);
        // Relaxed: a link is set before its EE is published (the Acquire
        // on the head) and never changes.
        ee = env.stats_next.load(Ordering::Relaxed);
    }
    total
}

impl Snapshot {
    /// The counts that happened between `earlier` and `self`.
    pub fn since(&self, earlier: &Snapshot) -> Snapshot {
        Snapshot {
            get_meta_lock: self.get_meta_lock - earlier.get_meta_lock,
            get_meta_lock_slow: self.get_meta_lock_slow - earlier.get_meta_lock_slow,
            extra_fast_hits: self.extra_fast_hits - earlier.extra_fast_hits,
            extra_fast_misses: self.extra_fast_misses - earlier.extra_fast_misses,
            blocking_enters: self.blocking_enters - earlier.blocking_enters,
            waits: self.waits - earlier.waits,
            notifies: self.notifies - earlier.notifies,
            hand_overs: self.hand_overs - earlier.hand_overs,
            lock_records_allocated: self.lock_records_allocated - earlier.lock_records_allocated,
        }
    }
}

impl fmt::Display for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "getMetaLock            {:>14}", self.get_meta_lock)?;
        writeln!(f, "getMetaLockSlow        {:>14}", self.get_meta_lock_slow)?;
        writeln!(f, "extra-fast hits        {:>14}", self.extra_fast_hits)?;
        writeln!(f, "extra-fast misses      {:>14}", self.extra_fast_misses)?;
        writeln!(f, "blocking enters        {:>14}", self.blocking_enters)?;
        writeln!(f, "waits                  {:>14}", self.waits)?;
        writeln!(f, "notifies               {:>14}", self.notifies)?;
        writeln!(f, "hand-overs             {:>14}", self.hand_overs)?;
        write!(
            f,
            "lock records allocated {:>14}",
            self.lock_records_allocated
        )
    }
}
