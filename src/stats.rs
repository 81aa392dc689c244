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
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::exec_env::all_envs;

/// Totals of the synchronization events of all threads so far. Its
/// `Display` is a table of the counts, one per line.
///
/// ```
/// use metalock::stats;
///
/// let table = stats::snapshot().to_string();
/// assert!(table.lines().any(|line| line.starts_with("getMetaLock ")));
/// ```
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
    /// Waits that released the monitor: `wait`, its timed and interruptible
    /// forms, on the monitor's wait set or a `Condition`, and each round of
    /// a `wait_while`. A wait that an interrupt pending at the call ends at
    /// once is not counted.
    pub waits: u64,
    /// Calls of `notify_one` and `notify_all` on a monitor, and on a
    /// `Condition` that had a waiter bound (a condition's notify with
    /// nobody waiting costs one load and is not counted).
    pub notifies: u64,
    /// Exits that handed the monitor to the first queued thread instead of
    /// releasing it: to a thread passed over for too long or a notified
    /// waiter that lost once (eventual fairness), by `unlock_fair`, and at
    /// every exit of a fair monitor that finds a thread queued.
    pub hand_overs: u64,
    /// Wake-ups in a `wait_while` after which the condition still held, so
    /// that the thread waited again: each one a context switch for nothing.
    /// With one condition per kind of waiter and one thread of each kind
    /// there are none; with several, a running thread can take what a
    /// notified waiter was woken for.
    pub futile_wakeups: u64,
    /// Threads an exit woke to re-contend for a monitor (renouncement) that
    /// lost it to another thread and went back to sleep, notified waiters
    /// included (a notified waiter that lost once is handed the monitor when
    /// it is first in the queue again, so it counts here at most once per
    /// notify).
    pub wake_to_block: u64,
    /// Spins of a thread that found the monitor owned and took it before
    /// the spin's budget ran out, so that it did not queue.
    pub spins_won: u64,
    /// Spins that ended without the monitor: out of budget, or a queue
    /// formed while the thread spun (then the thread queued). A spin that
    /// ends because the word went through the meta-lock (an owner about to
    /// wait, say) counts as neither won nor lost. A monitor
    /// whose spins nearly always lose stops yielding in them (see the
    /// README's policy section).
    pub spins_lost: u64,
    /// Lock records taken from the global allocator (Table 2).
    pub lock_records_allocated: u64,
}

/// Sums the counters of every thread that has synchronized so far.
///
/// ```
/// use metalock::{Synchronized, stats};
/// use std::time::Duration;
///
/// let value = Synchronized::new(0);
/// let before = stats::snapshot();
/// let mut guard = value.lock();
/// assert!(guard.wait_for(Duration::from_millis(1)).timed_out());
/// drop(guard);
/// assert_eq!(stats::snapshot().waits, before.waits + 1);
/// ```
pub fn snapshot() -> Snapshot {
    let mut total = Snapshot::default();
    for env in all_envs() {
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
        total.futile_wakeups += get(&s.futile_wakeups);
        total.wake_to_block += get(&s.wake_to_block);
        total.spins_won += get(&s.spins_won);
        total.spins_lost += get(&s.spins_lost);
        total.lock_records_allocated += get(&s.lock_records_allocated);
    }
    total
}

impl Snapshot {
    /// The counts that happened between `earlier` and `self`: what the code
    /// run in between cost.
    ///
    /// ```
    /// use metalock::{Synchronized, stats};
    ///
    /// let value = Synchronized::new(0);
    /// let before = stats::snapshot();
    /// let guard = value.lock();
    /// guard.notify_all();
    /// drop(guard);
    /// let delta = stats::snapshot().since(&before);
    /// assert_eq!((delta.notifies, delta.waits), (1, 0));
    /// ```
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
            futile_wakeups: self.futile_wakeups - earlier.futile_wakeups,
            wake_to_block: self.wake_to_block - earlier.wake_to_block,
            spins_won: self.spins_won - earlier.spins_won,
            spins_lost: self.spins_lost - earlier.spins_lost,
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
        writeln!(f, "futile wake-ups        {:>14}", self.futile_wakeups)?;
        writeln!(f, "wake-to-block          {:>14}", self.wake_to_block)?;
        writeln!(f, "spins won              {:>14}", self.spins_won)?;
        writeln!(f, "spins lost             {:>14}", self.spins_lost)?;
        write!(
            f,
            "lock records allocated {:>14}",
            self.lock_records_allocated
        )
    }
}
