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
/// Each thread counts in a `usize`: where that has 32 bits, every total is
/// modulo 2<sup>32</sup>, and [`since`](Self::since) is exact as long as
/// fewer than 2<sup>32</sup> events of a kind came in between.
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
        // The counters wrap, so on 32 bits the sums are taken modulo 2^32
        // below (the sum of the residues is the residue of the sum).
        total.get_meta_lock = wrap(total.get_meta_lock + get(&s.get_meta_lock));
        total.get_meta_lock_slow = wrap(total.get_meta_lock_slow + get(&s.get_meta_lock_slow));
        total.extra_fast_hits = wrap(total.extra_fast_hits + get(&s.extra_fast_hits));
        total.extra_fast_misses = wrap(total.extra_fast_misses + get(&s.extra_fast_misses));
        total.blocking_enters = wrap(total.blocking_enters + get(&s.blocking_enters));
        total.waits = wrap(total.waits + get(&s.waits));
        total.notifies = wrap(total.notifies + get(&s.notifies));
        total.hand_overs = wrap(total.hand_overs + get(&s.hand_overs));
        total.futile_wakeups = wrap(total.futile_wakeups + get(&s.futile_wakeups));
        total.wake_to_block = wrap(total.wake_to_block + get(&s.wake_to_block));
        total.spins_won = wrap(total.spins_won + get(&s.spins_won));
        total.spins_lost = wrap(total.spins_lost + get(&s.spins_lost));
        total.lock_records_allocated =
            wrap(total.lock_records_allocated + get(&s.lock_records_allocated));
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
    ///
    /// # Panics
    ///
    /// Where `usize` has 64 bits, if `earlier` counts more than `self`: it
    /// was taken later.
    pub fn since(&self, earlier: &Snapshot) -> Snapshot {
        let delta = |later: u64, earlier: u64| match usize::BITS {
            64 => later.checked_sub(earlier).expect(
                "Snapshot::since: the `earlier` snapshot counts more than this one: it was \
                 taken later",
            ),
            _ => wrap(later.wrapping_sub(earlier)),
        };
        Snapshot {
            get_meta_lock: delta(self.get_meta_lock, earlier.get_meta_lock),
            get_meta_lock_slow: delta(self.get_meta_lock_slow, earlier.get_meta_lock_slow),
            extra_fast_hits: delta(self.extra_fast_hits, earlier.extra_fast_hits),
            extra_fast_misses: delta(self.extra_fast_misses, earlier.extra_fast_misses),
            blocking_enters: delta(self.blocking_enters, earlier.blocking_enters),
            waits: delta(self.waits, earlier.waits),
            notifies: delta(self.notifies, earlier.notifies),
            hand_overs: delta(self.hand_overs, earlier.hand_overs),
            futile_wakeups: delta(self.futile_wakeups, earlier.futile_wakeups),
            wake_to_block: delta(self.wake_to_block, earlier.wake_to_block),
            spins_won: delta(self.spins_won, earlier.spins_won),
            spins_lost: delta(self.spins_lost, earlier.spins_lost),
            lock_records_allocated: delta(
                self.lock_records_allocated,
                earlier.lock_records_allocated,
            ),
        }
    }
}

/// `count` modulo the range of a thread's counter (`usize`).
fn wrap(count: u64) -> u64 {
    count & usize::MAX as u64
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec_env::counters::add;

    #[test]
    fn a_thread_counter_wraps_instead_of_panicking() {
        let counter = AtomicUsize::new(usize::MAX);
        add(&counter, 2);
        // Relaxed: one thread, nothing to pair with.
        assert_eq!(counter.load(Ordering::Relaxed), 1);
    }

    #[test]
    #[cfg_attr(
        target_pointer_width = "64",
        should_panic(expected = "the `earlier` snapshot counts more than this one")
    )]
    fn since_names_snapshots_given_in_the_wrong_order() {
        let earlier = Snapshot {
            waits: 3,
            ..Snapshot::default()
        };
        let later = Snapshot {
            waits: 1,
            ..Snapshot::default()
        };
        // On 32 bits the counts are residues: 2^32 - 2 waits in between.
        assert_eq!(later.since(&earlier).waits, u64::from(u32::MAX) - 1);
    }
}
