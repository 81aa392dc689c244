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
use core::sync::atomic::Ordering;

use crate::exec_env::all_envs;
use crate::exec_env::counters::{ThreadStats, with_counters};

/// Declares `Snapshot`, one `u64` per counter, and the per-counter helpers
/// that `snapshot`, `since` and `Display` are written with.
macro_rules! declare_snapshot {
    ($($(#[$doc:meta])* $field:ident $label:literal;)*) => {
        /// Totals of the synchronization events of all threads so far. Its
        /// `Display` is a table of the counts, one per line.
        ///
        /// Each thread counts in a `usize`: where that has 32 bits, every
        /// total is modulo 2<sup>32</sup>, and [`since`](Self::since) is
        /// exact as long as fewer than 2<sup>32</sup> events of a kind came
        /// in between.
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
            $($(#[$doc])* pub $field: u64,)*
        }

        impl Snapshot {
            /// Adds one thread's counters, modulo the range of a thread's
            /// counter (the sum of the residues is the residue of the sum).
            fn add(&mut self, counters: &ThreadStats) {
                // Relaxed: counters carry no data; a snapshot needs no
                // ordering.
                $(self.$field = wrap(
                    self.$field
                        .wrapping_add(counters.$field.load(Ordering::Relaxed) as u64),
                );)*
            }

            /// Each count of `self` combined with the same count of `other`.
            fn zip_with(&self, other: &Snapshot, f: impl Fn(u64, u64) -> u64) -> Snapshot {
                Snapshot {
                    $($field: f(self.$field, other.$field),)*
                }
            }

            /// Each count with its label in the table.
            fn rows(&self) -> impl Iterator<Item = (&'static str, u64)> {
                [$(($label, self.$field)),*].into_iter()
            }
        }
    };
}
with_counters!(declare_snapshot);

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
        total.add(&env.stats);
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
        self.zip_with(earlier, |later, earlier| match usize::BITS {
            64 => later.checked_sub(earlier).expect(
                "Snapshot::since: the `earlier` snapshot counts more than this one: it was \
                 taken later",
            ),
            _ => wrap(later.wrapping_sub(earlier)),
        })
    }
}

/// `count` modulo the range of a thread's counter (`usize`).
fn wrap(count: u64) -> u64 {
    count & usize::MAX as u64
}

impl fmt::Display for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (row, (label, count)) in self.rows().enumerate() {
            if row > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{label:<22} {count:>14}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use core::sync::atomic::AtomicUsize;

    use super::*;
    use crate::exec_env::counters::add;

    #[test]
    fn the_table_has_one_aligned_line_per_counter() {
        let snapshot = Snapshot {
            get_meta_lock: 1,
            get_meta_lock_slow: 2,
            extra_fast_hits: 3,
            extra_fast_misses: 4,
            blocking_enters: 5,
            waits: 6,
            notifies: 7,
            hand_overs: 8,
            futile_wakeups: 9,
            wake_to_block: 10,
            spins_won: 11,
            spins_lost: 12,
            lock_records_allocated: u64::from(u32::MAX),
        };
        let expected = "\
getMetaLock                         1
getMetaLockSlow                     2
extra-fast hits                     3
extra-fast misses                   4
blocking enters                     5
waits                               6
notifies                            7
hand-overs                          8
futile wake-ups                     9
wake-to-block                      10
spins won                          11
spins lost                         12
lock records allocated     4294967295";
        assert_eq!(snapshot.to_string(), expected);
    }

    #[test]
    fn since_subtracts_every_counter() {
        let mut later = Snapshot::default();
        let earlier = Snapshot::default();
        for (n, count) in [
            &mut later.get_meta_lock,
            &mut later.lock_records_allocated,
            &mut later.spins_lost,
        ]
        .into_iter()
        .enumerate()
        {
            *count = n as u64 + 1;
        }
        let delta = later.since(&earlier);
        assert_eq!(delta, later);
        assert_eq!(later.since(&later), Snapshot::default());
    }

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
