//! Monitor operations on the multi-use word: enter, exit, wait and notify
//! (paper 000, sections 4.3-4.4, Fig. 6-8), and the extra-fast path that
//! fuses the meta-lock and the monitor when nobody contends (section 5.2).
//!
//! # Data structure
//!
//! A LOCKED word points at the owner's lock record, the head of the object's
//! entry queue; behind it are the records of threads waiting to enter, in
//! arrival order, except that notified waiters join ahead of contenders. A
//! WAITERS word points at the head of such a queue while nobody owns the
//! monitor. The head record holds the payload displaced from the word.
//! Threads waiting for a notification are not in the queue: they wait in the
//! wait table (`wait_table`), so that the word of a monitor waited on can be
//! NEUTRAL, and a notify moves them into the queue. Every change to the
//! queue, the records in it or the word happens under the object's
//! meta-lock, except the two extra-fast compare-and-swaps (NEUTRAL to LOCKED
//! with an empty queue and back) and the owner's changes to its own
//! recursion count; the queue summary bit of a LOCKED word makes the fused
//! unlock fail when a thread queued.
//!
//! # Policy
//!
//! As in the paper, a releasing thread does not hand the monitor over: it
//! invites the first thread of the queue that waits to enter, and that thread
//! re-contends with new arrivals (renouncement). One departure: the invited
//! thread's record leaves the queue with the invitation, not when it finally
//! gets the monitor. While it wakes up, the queue is often empty and the object
//! back to NEUTRAL, so the threads that are running keep the extra-fast path
//! instead of all going through the meta-lock behind a thread that is not
//! running yet (with the paper's order, a queue that formed once under
//! contention tended to stay, and every operation paid for the meta-lock). The
//! invited thread re-contends like a newcomer and, if it loses, goes back to
//! its place at the front of the contenders (`queue::requeue_invited`).
//! Renouncement alone lets a thread lose again and again (starve) while others
//! barge in through the extra-fast path, so a thread that was invited and lost
//! counts its losses and notes since when; the exit that invites it after a
//! second loss, once the first is [`FAIR_AFTER`] ago, hands it the monitor
//! instead. Paper 001 sets out the trade: hand-over costs throughput (a context
//! switch per transfer), renouncement costs fairness; the crate renounces by
//! default and hands over only to a thread that is starving (eventual
//! fairness). A notified waiter, moved into the queue, re-contends when an exit
//! invites it, and if it loses once goes back first in the queue and is
//! handed the monitor by the exit that finds it first; a
//! waiter whose time runs out first leaves the wait table itself. Contenders
//! spin briefly (`SpinWait`) before queueing behind an owner nobody else waits
//! for, and again after an invitation; they do not spin once queued. How long
//! is learned per monitor (`profile`): a monitor whose spins nearly always lose
//! keeps only the spin hints and skips the yields.

mod condition;
mod enter;
mod exit;
#[cfg(feature = "std")]
pub(crate) mod home;
#[cfg(not(feature = "std"))]
mod home {
    //! Without `std` there are no keyed monitors, so no word is a home.
    use crate::word::MultiUseWord;

    pub(crate) enum Home {}

    impl Home {
        pub(crate) fn pin_for_wait(&self, _: usize) -> usize {
            match *self {}
        }

        pub(crate) fn unpin(&self) {
            match *self {}
        }
    }

    pub(crate) fn home_with(_: &MultiUseWord) -> Option<&'static Home> {
        None
    }
}
mod notify;
mod park_marks;
mod policy;
#[cfg(not(metalock_swap_only))]
mod profile;
mod queue;
mod try_enter;
mod wait;
mod wait_table;

pub(crate) use condition::ConditionWord;
#[cfg(all(metalock_model, feature = "__test-hooks", feature = "std"))]
pub use home::share_one_home;
#[cfg(all(metalock_model, feature = "__test-hooks"))]
pub use policy::{SpinningWaits, spin_waits};
/// For the queue length of a keyed overflow entry, read under a shard lock.
#[cfg(feature = "std")]
pub(crate) use queue::shows_no_queue;
pub(crate) use wait::{WaitEnd, WaitSet};
#[cfg(all(metalock_model, feature = "__test-hooks"))]
pub use wait_table::{share_one_stripe, words_share_a_stripe};

/// Creates this execution's wait table, and homes (`model::start_execution`).
#[cfg(loom)]
pub(crate) fn create_model_statics() {
    wait_table::create_stripes();
    #[cfg(feature = "std")]
    home::create_homes();
}

use core::time::Duration;

use crate::exec_env::{ExecEnv, SIGNAL_HANDED_OVER};
use crate::lock_record::{LockRecord, record_of};
use crate::meta_lock::hooks;
use crate::primitive::Ordering;
use crate::word::{BUSY, LOCKED, MultiUseWord, QUEUE_SUMMARY, state};

/// Whether lock and unlock of an uncontended object use the fused
/// single-compare-and-swap paths of section 5.2, and recursive enter and exit
/// skip the meta-lock. Off with the `meta-lock-only` feature, which runs every
/// operation through the meta-lock as in the paper's "without extra fast"
/// measurements, and with the swap-only backend, which has no
/// compare-and-swap.
pub(crate) const EXTRA_FAST: bool = cfg!(not(any(feature = "meta-lock-only", metalock_swap_only)));

/// How long after its first loss an invited thread may keep losing the
/// monitor to others before an exit hands the monitor to it instead of
/// releasing it: the bound on starvation (plus its wait behind the
/// threads queued ahead of it), traded against the throughput that a
/// hand-over to a thread that is not running yet costs. A thread that loses
/// goes back to the front of the contenders (`queue::requeue_invited`), so
/// the losses that count are the first contender's, close to parking_lot's
/// trade: a timer per bucket (0-1 ms) makes the next unlock after it runs
/// out hand over to whichever thread is first.
const FAIR_AFTER: Duration = Duration::from_micros(500);

/// The panic message of a non-reentrant enter by the owner.
pub(crate) const REENTERED: &str = "metalock: a Synchronized (or RawMonitor) was locked by the \
    thread that already holds it (through a live guard, or one leaked with mem::forget); it is \
    not reentrant, because two guards would give two `&mut` to the same value";

/// The word of a LOCKED object whose monitor `record` owns, queue empty.
#[inline(always)]
fn locked_bits(record: &LockRecord) -> usize {
    record as *const LockRecord as usize | LOCKED
}

/// `ee`'s monitor signal, read after its timed park reported that the
/// time ran out: an exit may have stored it just before its unpark, and
/// the thread then takes it (invited, or handed the monitor) as if woken.
fn signal_after_timed_park(ee: &ExecEnv) -> usize {
    // Acquire pairs with the Release store of the exit that signals us: its
    // changes, and those of every owner before it, are visible.
    let signal = ee.monitor_signal.load(Ordering::Acquire);
    if signal == SIGNAL_HANDED_OVER {
        hooks::fire(hooks::HandoffEvent::HandedOverAsATimedParkEnded);
    }
    signal
}

/// Whether `bits` is LOCKED by a record of `ee`.
#[inline(always)]
pub(crate) fn owner_is(bits: usize, ee: &ExecEnv) -> bool {
    // SAFETY: a LOCKED word points at a live record (records outlive every
    // word that names them).
    state(bits) == LOCKED && unsafe { (*record_of(bits)).owner() } == ee.as_owner()
}

/// The slot of `address` in a table of `slots` (a power of two) kept
/// beside the words, since every payload bit of a word is the user's (the
/// policy's marks, the wait table's stripes): a multiplicative hash, which
/// spreads neighbouring words or conditions, often contended or waited on
/// together, over different slots.
#[cfg(not(metalock_model))]
#[inline]
fn slot_of(address: usize, slots: usize) -> usize {
    let hash = ((address >> 2) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (hash >> (u64::BITS - slots.trailing_zeros())) as usize
}

/// One more level of a monitor the calling thread owns through `record`.
///
/// # Safety
/// `record` is the calling thread's and owns the monitor; the thread holds
/// no meta-lock (the overflow panics).
#[inline(always)]
#[track_caller]
unsafe fn enter_again(record: &LockRecord) {
    // SAFETY: the count is the owner's (caller's contract).
    unsafe {
        match record.count().checked_add(1) {
            Some(count) => record.set_count(count),
            None => recursion_overflow(),
        }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn recursion_overflow() -> ! {
    panic!(
        "metalock: a thread entered one monitor {} levels deep, the most a recursion count \
         holds; the monitor is left held at that depth",
        usize::MAX
    )
}

impl MultiUseWord {
    /// Whether some thread owns the monitor now (a snapshot).
    pub(crate) fn is_owned(&self) -> bool {
        self.inspect(|bits| state(bits) == LOCKED)
    }

    /// Whether the calling thread owns the monitor.
    pub(crate) fn is_owned_by_current_thread(&self) -> bool {
        self.current_thread_record().is_some()
    }

    /// The calling thread's lock record that owns the monitor, if it does:
    /// how a guard that does not keep its record (`lock_api`'s) finds it.
    pub(crate) fn current_thread_record(&self) -> Option<&'static LockRecord> {
        // A thread with no EE bound owns nothing.
        let ee = ExecEnv::current_if_bound()?;
        self.inspect(|bits| {
            // SAFETY: a LOCKED word points at a record, and record batches
            // are never returned to the allocator (`LockRecord`'s first
            // invariant; under loom, not before the execution ends, and
            // nothing of an execution outlives it), so the reference may be
            // `'static`.
            owner_is(bits, ee).then(|| unsafe { &*record_of(bits) })
        })
    }

    /// Whether threads may be queued to enter: a hint for `bump`, true when
    /// the queue summary is set or a thread is in the middle of an
    /// operation on the word.
    pub(crate) fn may_have_queued_threads(&self) -> bool {
        // Relaxed: a hint, read by the owner, that orders nothing; whatever
        // follows takes the meta-lock if it matters.
        let bits = self.word.load(Ordering::Relaxed);
        state(bits) == BUSY || (state(bits) == LOCKED && bits & QUEUE_SUMMARY != 0)
    }

    /// How many threads are queued to enter the monitor now (a snapshot,
    /// see `queue::queued_at`); takes the meta-lock unless the word shows
    /// no queue.
    pub(crate) fn queued(&self) -> usize {
        self.read_queue(queue::queued_at, 0)
    }

    /// Whether threads are queued to enter the monitor now (`queued() > 0`
    /// without the walk, see `queue::has_queue_at`); takes the meta-lock
    /// unless the word shows no queue.
    pub(crate) fn has_queue(&self) -> bool {
        self.read_queue(queue::has_queue_at, false)
    }

    /// `at` on the word's value under its meta-lock, or `none` if the word
    /// shows no queue.
    ///
    /// `at` may rely on `queue::queued_at`'s contract.
    fn read_queue<R>(&self, at: unsafe fn(usize) -> R, none: R) -> R {
        // Relaxed: nothing is read through a word that shows no queue; one
        // that shows one is read again under its meta-lock.
        if queue::shows_no_queue(self.word.load(Ordering::Relaxed)) {
            return none;
        }
        ExecEnv::with_current(|ee| {
            let held = self.get_meta_lock(ee);
            let bits = held.bits;
            // SAFETY: we hold the meta-lock at `bits`.
            let found = unsafe { at(bits) };
            held.release(bits);
            found
        })
    }

    /// How many threads wait in the monitor's own wait set now (a snapshot):
    /// not yet notified, not yet timed out or interrupted.
    pub(crate) fn waiting(&self) -> usize {
        wait_table::with_waiting_on(self.wait_key(WaitSet::Monitor), false, |waiting| waiting)
    }

    /// Whether some thread waits in the monitor's own wait set now
    /// (`waiting() > 0`, stopping at the first waiter found).
    pub(crate) fn has_waiting(&self) -> bool {
        wait_table::with_any_waiting_on(self.wait_key(WaitSet::Monitor), false, |any| any)
    }

    /// Whether some thread may wait in the monitor's stripe of the wait
    /// table, on this word or another (one load, which takes no lock).
    #[cfg(feature = "std")]
    pub(crate) fn may_have_waiters(&self) -> bool {
        wait_table::stripe(self.wait_key(WaitSet::Monitor), false).may_have_waiters()
    }

    /// Runs `f` on the word's non-BUSY value, taking the meta-lock only when
    /// the word is BUSY.
    pub(crate) fn inspect<R>(&self, f: impl Fn(usize) -> R) -> R {
        if let Some(found) = self.inspect_unless_busy(&f) {
            return found;
        }
        ExecEnv::with_current(|ee| {
            let held = self.get_meta_lock(ee);
            let bits = held.bits;
            held.release(bits);
            f(bits)
        })
    }

    /// Runs `f` on the word's value unless it is BUSY (`None`).
    #[inline]
    pub(crate) fn inspect_unless_busy<R>(&self, f: impl Fn(usize) -> R) -> Option<R> {
        // Acquire pairs with the Release of whatever wrote the word, so a
        // record it points at is initialised.
        let bits = self.word.load(Ordering::Acquire);
        (state(bits) != BUSY).then(|| f(bits))
    }
}
