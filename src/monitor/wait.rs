//! monitorWait and notifyOneOrAll (paper 000, Fig. 8), on the monitor's own
//! wait set or on a condition (see `condition`).
//!
//! A waiter's record stays in the monitor's queue, marked with the wait set
//! it waits on. A notify marks it notified: from then on it waits to enter,
//! and the exit that reaches it hands it the monitor (`release_to_queue`),
//! so a notified waiter wakes owning the monitor, at its old depth, and
//! never wakes only to block again. A waiter whose time runs out first
//! takes its record out of the queue and enters like any contender.

use super::condition::ConditionWord;
use super::exit::{check_owner, release_to_queue};
use super::queue::{mark_notified, remove_from_queue};
use super::{EXTRA_FAST, locked_bits};
use crate::exec_env::{ExecEnv, SIGNAL_HANDED_OVER, SIGNAL_NONE};
use crate::lock_record::{LockRecord, NOT_WAITING, NOTIFIED, WAITING, record_of};
use crate::meta_lock::MetaLock;
use crate::primitive::Ordering;
use crate::sys::Instant;
use crate::word::{MultiUseWord, NEUTRAL, QUEUE_SUMMARY, WAITING_SUMMARY, state};

/// Which wait set a thread waits on.
#[derive(Clone, Copy, Debug)]
pub(crate) enum WaitSet<'a> {
    /// The monitor's own (Java's `wait` and `notify`).
    Monitor,
    /// A condition variable's.
    Condition(&'a ConditionWord),
}

impl WaitSet<'_> {
    /// What a waiting record's `wait_state` holds.
    fn state(self) -> usize {
        match self {
            WaitSet::Monitor => WAITING,
            WaitSet::Condition(condition) => condition.id(),
        }
    }

    /// Runs `f` with the locks a change to this wait set takes before the
    /// meta-lock: the condition's stripe, or none.
    fn locked<R>(self, f: impl FnOnce() -> R) -> R {
        match self {
            WaitSet::Monitor => f(),
            WaitSet::Condition(condition) => condition.with_stripe(f),
        }
    }
}

/// The panic message of a condition used with two monitors at once.
pub(crate) const BOUND_ELSEWHERE: &str = "metalock: a Condition was waited on with a monitor \
    while other threads wait on it with another; a condition belongs to one monitor at a time";

/// How a waiter whose time ran out finds its record.
enum AfterTimeout<'a> {
    /// Handed the monitor meanwhile: it owns it.
    Owner,
    /// Notified meanwhile: it waits to be handed the monitor.
    Notified,
    /// Still waiting: its record left the queue, and the thread holds the
    /// meta-lock to enter like a contender.
    TimedOut(MetaLock<'a>),
}

impl MultiUseWord {
    /// monitorWait (Fig. 8, left): releases every level of the monitor that
    /// `record` owns, waits on `set` until notified (or `deadline`), and
    /// comes back owning the monitor at the same depth. Returns whether the
    /// deadline passed before a notification.
    ///
    /// Called on the owner's thread (by its guard).
    ///
    /// # Panics
    ///
    /// If `set` is a condition other threads wait on with another monitor,
    /// before releasing anything.
    #[track_caller]
    pub(crate) fn wait(
        &self,
        record: &'static LockRecord,
        deadline: Option<Instant>,
        set: WaitSet<'_>,
    ) -> bool {
        // SAFETY: the record's owner is the calling thread's EE.
        let ee = unsafe { ExecEnv::of_owner(record.owner()) };
        count!(ee, waits);
        if set.locked(|| self.start_waiting(ee, record, set)).is_err() {
            panic!("{BOUND_ELSEWHERE}");
        }
        if self.sleep_until_handed_over(ee, deadline) {
            return false;
        }
        let after = set.locked(|| self.leave_after_timeout(ee, record, set));
        match after {
            AfterTimeout::Owner => false,
            AfterTimeout::Notified => {
                self.sleep_until_handed_over(ee, None);
                false
            }
            AfterTimeout::TimedOut(held) => {
                // SAFETY: we hold the meta-lock; the record is ours and out
                // of the queue.
                unsafe { self.acquire_held(ee, record, held, None) };
                true
            }
        }
    }

    /// Joins `set` and releases the monitor, under the meta-lock (and the
    /// condition's stripe, which the caller holds); refuses a condition
    /// bound to another monitor, releasing nothing.
    fn start_waiting(
        &self,
        ee: &'static ExecEnv,
        record: &'static LockRecord,
        set: WaitSet<'_>,
    ) -> Result<(), ()> {
        let held = check_owner(self.get_meta_lock(ee), record, "wait");
        let bits = held.bits;
        let mut waiting = bits & WAITING_SUMMARY;
        match set {
            WaitSet::Monitor => waiting = WAITING_SUMMARY,
            WaitSet::Condition(condition) => {
                if condition.bind(self).is_err() {
                    held.release(bits);
                    return Err(());
                }
            }
        }
        // SAFETY: we hold the meta-lock and own the monitor. Our record stays
        // at the head of the queue, keeping its count and the payload, and
        // the rest of the queue gets the monitor.
        unsafe {
            record.set_wait_state(set.state());
            // Relaxed: see `acquire_held`.
            ee.monitor_signal.store(SIGNAL_NONE, Ordering::Relaxed);
            let queue = record as *const LockRecord as *mut LockRecord;
            release_to_queue(held, queue, record.displaced(), waiting);
        }
        Ok(())
    }

    /// Sleeps until an exit hands this thread the monitor, or `deadline`
    /// passes; returns whether it was handed the monitor. A waiter is never
    /// invited to re-contend: it is handed the monitor once notified.
    fn sleep_until_handed_over(&self, ee: &ExecEnv, deadline: Option<Instant>) -> bool {
        loop {
            // Acquire pairs with the Release store of the exit that handed
            // us the monitor: its changes, and those of every owner before
            // it, are visible.
            let signal = ee.monitor_signal.load(Ordering::Acquire);
            debug_assert!(signal == SIGNAL_NONE || signal == SIGNAL_HANDED_OVER);
            if signal == SIGNAL_HANDED_OVER {
                return true;
            }
            if ee.parker.park(deadline) {
                // Timed out; a hand-over may still have raced in.
                // Acquire: as above.
                return ee.monitor_signal.load(Ordering::Acquire) == SIGNAL_HANDED_OVER;
            }
        }
    }

    /// What a waiter whose time ran out does under the meta-lock (and the
    /// condition's stripe, which the caller holds): nothing if a notify or a
    /// hand-over came first, else it leaves the queue and the wait set.
    fn leave_after_timeout(
        &self,
        ee: &'static ExecEnv,
        record: &'static LockRecord,
        set: WaitSet<'_>,
    ) -> AfterTimeout<'_> {
        let mut held = self.get_meta_lock(ee);
        // Relaxed: a hand-over writes it under the meta-lock we now hold.
        if ee.monitor_signal.load(Ordering::Relaxed) == SIGNAL_HANDED_OVER {
            let bits = held.bits;
            held.release(bits);
            return AfterTimeout::Owner;
        }
        // SAFETY: we hold the meta-lock; our record is in the queue, waiting
        // or notified.
        unsafe {
            if record.wait_state() == NOTIFIED {
                let bits = held.bits;
                held.release(bits);
                return AfterTimeout::Notified;
            }
            debug_assert_eq!(record.wait_state(), set.state());
            held.bits = remove_from_queue(held.bits, record);
            record.set_wait_state(NOT_WAITING);
            if let WaitSet::Condition(condition) = set {
                let bits = held.bits;
                let first = if state(bits) == NEUTRAL {
                    core::ptr::null_mut()
                } else {
                    record_of(bits)
                };
                condition.unbind_if_no_waiters(first);
            }
        }
        AfterTimeout::TimedOut(held)
    }

    /// notifyOneOrAll (Fig. 8, right) on the monitor's own wait set. Returns
    /// how many waiters it marked.
    ///
    /// Called on the owner's thread (by its guard), with `record` owning the
    /// monitor: its exit hands the monitor to the notified waiters in turn.
    pub(crate) fn notify(&self, record: &'static LockRecord, all: bool) -> usize {
        // SAFETY: the record's owner is the calling thread's EE.
        let ee = unsafe { ExecEnv::of_owner(record.owner()) };
        count!(ee, notifies);
        // Relaxed: we own the monitor, so other threads only set the queue
        // summary or keep the word's bits (under the meta-lock, where BUSY
        // sends us to the slow path below), and only an owner clears the
        // waiting summary. Coherence shows us the word we wrote when we
        // entered, or a later value; an heir that was handed the monitor
        // wrote nothing, but its Acquire of the signal follows the exiting
        // owner's swap to BUSY, so it too sees that BUSY value or a later one.
        if EXTRA_FAST && self.word.load(Ordering::Relaxed) & !QUEUE_SUMMARY == locked_bits(record) {
            return 0;
        }
        let held = check_owner(self.get_meta_lock(ee), record, "notify");
        // SAFETY: we hold the meta-lock; the queue's records are ours to
        // change.
        let (marked, still_waiting) = unsafe { mark_notified(record.queue(), WAITING, all) };
        // Once every waiter is marked, the next notify (until a thread
        // waits again) needs no meta-lock.
        let bits = held.bits;
        let release = if still_waiting == 0 {
            bits & !WAITING_SUMMARY
        } else {
            bits
        };
        held.release(release);
        marked
    }
}
