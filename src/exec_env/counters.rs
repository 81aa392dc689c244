//! Each thread's counters of the events paper 000 reports in Tables 2 and 3
//! (feature `stats`); `crate::stats` sums them.
//!
//! The counters are listed once, in `with_counters`, with the docs and the
//! label of each: the per-thread counters here and `stats::Snapshot`, its
//! sums, differences and table are all generated from that list.

use core::sync::atomic::{AtomicUsize, Ordering};

/// Calls the macro `$then` with the list of counters: for each, its docs
/// (those of the `stats::Snapshot` field), its field name and its label in
/// the `Display` table.
macro_rules! with_counters {
    ($then:ident) => {
        $then! {
            /// Meta-lock acquisitions (Table 3, "#getMetaLock").
            get_meta_lock "getMetaLock";
            /// Acquisitions that found the meta-lock BUSY and went through the
            /// hand-off (Table 3, "#getMetaLockSlow").
            get_meta_lock_slow "getMetaLockSlow";
            /// Locks and unlocks done by the extra-fast single compare-and-swap.
            extra_fast_hits "extra-fast hits";
            /// Locks and unlocks that tried or could not try the extra-fast path and
            /// fell back to the meta-lock protocol.
            extra_fast_misses "extra-fast misses";
            /// Monitor enters that blocked because another thread owned the monitor.
            blocking_enters "blocking enters";
            /// Waits: `wait`, its timed and interruptible forms, on the monitor's
            /// wait set or a `Condition`, and each round of a `wait_while`. A wait
            /// that an interrupt pending at the call ends at once is not counted;
            /// one refused before it released the monitor (a `Condition` bound to
            /// another monitor) is.
            waits "waits";
            /// Calls of `notify_one` and `notify_all` on a monitor, and on a
            /// `Condition` that had a waiter bound (a condition's notify with
            /// nobody waiting costs one load and is not counted).
            notifies "notifies";
            /// Exits that handed the monitor to the first queued thread instead of
            /// releasing it: to a thread passed over for too long or a notified
            /// waiter that lost once (eventual fairness), by `unlock_fair`, and at
            /// every exit of a fair monitor that finds a thread queued.
            hand_overs "hand-overs";
            /// Wake-ups in a `wait_while` after which the condition still held, so
            /// that the thread waited again: each one a context switch for nothing.
            /// With one condition per kind of waiter and one thread of each kind
            /// there are none; with several, a running thread can take what a
            /// notified waiter was woken for.
            futile_wakeups "futile wake-ups";
            /// Threads an exit woke to re-contend for a monitor (renouncement) that
            /// lost it to another thread and went back to sleep, notified waiters
            /// included (a notified waiter that lost once is handed the monitor when
            /// it is first in the queue again, so it counts here at most once per
            /// notify).
            wake_to_block "wake-to-block";
            /// Spins of a thread that found the monitor owned and took it before
            /// the spin's budget ran out, so that it did not queue.
            spins_won "spins won";
            /// Spins that ended without the monitor: out of budget, or a queue
            /// formed while the thread spun (then the thread queued). A spin that
            /// ends because the word went through the meta-lock (an owner about to
            /// wait, say) counts as neither won nor lost. A monitor
            /// whose spins nearly always lose stops yielding in them (see the
            /// README's policy section).
            spins_lost "spins lost";
            /// Lock records taken from the global allocator (Table 2).
            lock_records_allocated "lock records allocated";
        }
    };
}
pub(crate) use with_counters;

/// Declares `ThreadStats` with one `AtomicUsize` per counter.
macro_rules! declare_thread_stats {
    ($($(#[$doc:meta])* $field:ident $label:literal;)*) => {
        /// What one thread has counted.
        ///
        /// Invariant: only the thread bound to the owning EE writes the
        /// counters; any thread may read them (Relaxed) for a snapshot.
        #[derive(Debug, Default)]
        pub(crate) struct ThreadStats {
            $(pub(crate) $field: AtomicUsize,)*
        }

        impl ThreadStats {
            pub(crate) const fn new() -> Self {
                Self {
                    $($field: AtomicUsize::new(0),)*
                }
            }
        }
    };
}
with_counters!(declare_thread_stats);

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
