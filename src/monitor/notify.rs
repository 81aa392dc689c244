//! notifyOneOrAll (paper 000, Fig. 8, right): a notify moves the waiters
//! it reaches from the wait table into the monitor's queue, to enter (see
//! `wait`).

use super::exit::release_to_queue;
use super::park_marks;
use super::queue::insert_notified;
use super::wait::WaitSet;
use super::wait_table::{Waiting, stripe};
use crate::exec_env::ExecEnv;
use crate::lock_record::{LockRecord, NOTIFIED, record_of};
use crate::meta_lock::hooks;
use crate::word::{LOCKED, MultiUseWord, NEUTRAL, QUEUE_SUMMARY, state};

impl MultiUseWord {
    /// notifyOneOrAll (Fig. 8, right) on the monitor's own wait set. Returns
    /// how many waiters it reached.
    ///
    /// Called on the owner's thread (by its guard), with `record` owning the
    /// monitor. Costs one load when nobody may wait in the word's stripe.
    pub(crate) fn notify(&self, record: &'static LockRecord, all: bool) -> usize {
        // SAFETY: the record's owner is the calling thread's EE.
        let ee = unsafe { ExecEnv::of_owner(record.owner()) };
        count!(ee, notifies);
        let key = self.wait_key(WaitSet::Monitor);
        let stripe = stripe(key, false);
        if !stripe.may_have_waiters() {
            return 0;
        }
        // SAFETY: we own the monitor, so the word is alive; `ee` is ours,
        // as the stripe's lock requires.
        unsafe {
            stripe.with(ee, |waiting| {
                self.move_waiters(ee, waiting, key, all, Some(record))
            })
        }
    }

    /// Moves the records that wait on `key` (the longest-waiting one, or
    /// all) from the locked stripe into this monitor's queue, to enter;
    /// returns how many. If nobody owns the monitor, invites the first of
    /// them and wakes it at once, under the stripe (it may have been handed
    /// the monitor); a `notify_all` that finds the word NEUTRAL queues the
    /// others behind it first, where each exit invites the next (on a fair
    /// monitor, hands it over). One that finds threads queued (WAITERS)
    /// invites its waiters one at a time, ahead of them, each next one
    /// finding the monitor owned by then, and queuing, or still free, and
    /// invited too.
    ///
    /// `notifier` is the caller's record where it must own the monitor (a
    /// notify of the monitor's own wait set), which debug builds check once
    /// a waiter is there to move (the meta-lock is taken only then).
    ///
    /// # Safety
    /// `waiting` is the locked stripe of `key`, whose waiters wait in this
    /// word's monitor; the word is alive (the caller owns the monitor, or a
    /// waiter that cannot leave without the stripe keeps it alive); `ee` is
    /// the calling thread's.
    pub(super) unsafe fn move_waiters(
        &self,
        ee: &ExecEnv,
        waiting: &mut Waiting<'_>,
        key: usize,
        all: bool,
        notifier: Option<&LockRecord>,
    ) -> usize {
        // The waiters to move enter from now on (the owner may keep them
        // out for good): noted before the meta-lock, as a thread's
        // diagnostics lock is not taken under one. Their threads are still in
        // their waits, which borrow the word, and cannot leave the stripe we
        // hold, so these are the records the loop below takes.
        #[cfg(all(feature = "diagnostics", not(metalock_model)))]
        waiting.for_oldest(key, if all { usize::MAX } else { 1 }, |waiter| {
            // SAFETY: a waiting record's owner is a live EE.
            unsafe { ExecEnv::of_owner(waiter.owner()) }
                .diag
                .enter_again(self as *const MultiUseWord as usize);
        });
        let mut notified = 0;
        let mut held = None;
        // Whether a waiter went into an owner's queue under the meta-lock
        // we still hold (a LOCKED word stays so, with that owner).
        let mut queued = false;
        while let Some(waiter) = waiting.take_oldest(key) {
            let lock = held.get_or_insert_with(|| self.get_meta_lock(ee));
            let bits = lock.bits;
            // Under the meta-lock, so the check adds no atomic operation
            // (and no interleaving for the model checkers).
            debug_assert!(
                notifier
                    .is_none_or(|notifier| state(bits) == LOCKED
                        && core::ptr::eq(record_of(bits), notifier)),
                "a notify of a monitor's own wait set by a thread that does not own it"
            );
            // SAFETY: we hold the meta-lock; the waiter's record is out of
            // every queue and list; LOCKED points at the owner's record,
            // which heads the queue, and the waiter a notify queued last in
            // this hold, if any, is in that queue behind notified waiters
            // and contenders passed over too long only (the record's
            // invariant).
            unsafe {
                if state(bits) == LOCKED {
                    // From there: a loop of `notify_one` calls under one hold
                    // with a contender queued walked past every waiter
                    // notified before until the contender was passed over
                    // too long (300 calls took 6 times parking_lot's).
                    let owner = &*record_of(bits);
                    let after = owner.last_notified().as_ref().unwrap_or(owner);
                    insert_notified(owner, after, waiter);
                    owner.set_last_notified(waiter as *const LockRecord as *mut LockRecord);
                    lock.bits = bits | QUEUE_SUMMARY;
                    queued = true;
                } else {
                    debug_assert!(!queued, "a LOCKED word changed under its meta-lock");
                    // Nobody owns the monitor: put the waiter first and let
                    // the exit logic invite it. Invited, it leaves the queue
                    // at once and contends like a newcomer, so the queue's
                    // head keeps its place and its count of being passed
                    // over (`insert_notified` counts overtaking in a queue).
                    let queue = waiter as *const LockRecord as *mut LockRecord;
                    let (displaced, last) = if state(bits) == NEUTRAL {
                        waiter.set_queue(core::ptr::null_mut());
                        // A `notify_all` queues the rest behind it, under
                        // this one hold: each exit then invites the next,
                        // as when the notifier owns the monitor. Invited
                        // one by one, as the meta-lock is taken again for
                        // each, they all woke at once, from the notifier's
                        // CPU, even where there was none to run them.
                        let mut last = waiter;
                        if all {
                            while let Some(next) = waiting.take_oldest(key) {
                                next.set_queue(core::ptr::null_mut());
                                next.set_wait_state(NOTIFIED);
                                last.set_queue(next as *const LockRecord as *mut LockRecord);
                                last = next;
                                notified += 1;
                            }
                            if !core::ptr::eq(last, waiter) {
                                hooks::fire(hooks::HandoffEvent::NotifiedQueuedBehindInvited);
                            }
                        }
                        (bits, last as *const LockRecord as *mut LockRecord)
                    } else {
                        let head = record_of(bits);
                        waiter.set_queue(head);
                        hooks::fire(hooks::HandoffEvent::NotifiedAheadOfQueue);
                        let last = match (*head).queue().is_null() {
                            true => head,
                            false => (*head).last(),
                        };
                        ((*head).displaced(), last)
                    };
                    waiter.set_displaced(displaced);
                    if let Some(lock) = held.take() {
                        drop(release_to_queue(lock, queue, last, displaced, false));
                    }
                }
            }
            notified += 1;
            if !all {
                break;
            }
        }
        if let Some(lock) = held {
            let bits = lock.bits;
            lock.release(bits);
        }
        if notified > 0 {
            // SAFETY: `ee` is the calling thread's (the caller's contract).
            unsafe { park_marks::note_reached_waiters(ee) };
        }
        notified
    }
}
