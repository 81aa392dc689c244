//! monitorWait and notifyOneOrAll (paper 000, Fig. 8).

use super::exit::{check_owner, release_and_invite, release_and_signal};
use super::queue::{make_heir, passed_over_too_long, remove_from_queue, take_first_contender};
use super::{EXTRA_FAST, locked_bits};
use crate::exec_env::{ExecEnv, SIGNAL_HANDED_OVER, SIGNAL_INVITED, SIGNAL_NONE};
use crate::lock_record::LockRecord;
use crate::primitive::Ordering;
use crate::sys::{self, Instant};
use crate::word::{MultiUseWord, QUEUE_SUMMARY, WAITERS, WAITING_SUMMARY};

impl MultiUseWord {
    /// monitorWait (Fig. 8, left): releases every level of the monitor that
    /// `record` owns, sleeps until notified (or `deadline`), and re-enters at
    /// the same depth. Returns whether the deadline passed before a
    /// notification.
    ///
    /// Called on the owner's thread (by its guard).
    pub(crate) fn wait(&self, record: &'static LockRecord, deadline: Option<Instant>) -> bool {
        // SAFETY: the record's owner is the calling thread's EE.
        let ee = unsafe { ExecEnv::of_owner(record.owner()) };
        count!(ee, waits);
        let held = check_owner(self.get_meta_lock(ee), record, "wait");
        // SAFETY: we hold the meta-lock and own the monitor. Our record stays
        // at the head of the queue, keeping its count and the payload, and
        // the first thread waiting to enter is invited.
        unsafe {
            record.set_waiting_for_notify(true);
            let mut rest = record.queue();
            let invited = take_first_contender(&mut rest);
            record.set_queue(rest);
            // Relaxed: see `acquire_held`.
            ee.monitor_signal.store(SIGNAL_NONE, Ordering::Relaxed);
            match invited {
                Some(heir) if passed_over_too_long(heir) => {
                    let queue = record as *const LockRecord as *mut LockRecord;
                    let bits = make_heir(heir, queue, record.displaced(), WAITING_SUMMARY);
                    count!(ee, hand_overs);
                    release_and_signal(held, bits, heir, SIGNAL_HANDED_OVER);
                }
                invited => release_and_invite(
                    held,
                    record as *const LockRecord as usize | WAITERS | WAITING_SUMMARY,
                    invited,
                ),
            }
        }
        let mut signal;
        loop {
            // Acquire: see `await_invitation`.
            signal = ee.monitor_signal.load(Ordering::Acquire);
            if signal != SIGNAL_NONE || ee.parker.park(deadline) {
                break;
            }
        }
        // A waiting record is never handed the monitor: hand-over goes only
        // to a record passed over in this enter, and every enter, the one
        // before this wait included, ends with that cleared. A notified
        // waiter is invited, and handed the monitor only later, in
        // `acquire_held`, if it keeps losing.
        debug_assert_ne!(signal, SIGNAL_HANDED_OVER);
        let invited_at = (signal == SIGNAL_INVITED).then(|| sys::get().now());
        let mut held = self.get_meta_lock(ee);
        // SAFETY: we hold the meta-lock. An invitation took our record out
        // of the queue (and came only after a notification cleared our
        // flag); otherwise the time ran out and the record is still queued.
        unsafe {
            // Relaxed: written under the meta-lock we hold.
            let signal = ee.monitor_signal.load(Ordering::Relaxed);
            debug_assert_ne!(signal, SIGNAL_HANDED_OVER);
            let timed_out = record.waiting_for_notify();
            record.set_waiting_for_notify(false);
            let invited_at = if signal == SIGNAL_INVITED {
                // An invitation that came while we took the meta-lock has
                // no time: this enter does not count as a loss yet.
                invited_at
            } else {
                held.bits = remove_from_queue(held.bits, record);
                None
            };
            self.acquire_held(ee, record, held, invited_at);
            timed_out
        }
    }

    /// notifyOneOrAll (Fig. 8, right). Returns how many waiters it marked.
    ///
    /// Called on the owner's thread (by its guard), with `record` owning the
    /// monitor.
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
        let mut marked = 0;
        // Waiters sit in the queue newest first (a thread that waits keeps
        // its record in front, and the next owner's goes before it), so the
        // last waiting record is the one that has waited longest: that is
        // the one `notify_one` marks, so that new waiters cannot starve it.
        // That walks the whole queue, which is no longer than the number of
        // threads.
        let mut oldest = None;
        let mut waiting = 0;
        // SAFETY: we hold the meta-lock; the queue's records are ours to
        // change.
        unsafe {
            let mut q = record.queue();
            while let Some(r) = q.as_ref() {
                if r.waiting_for_notify() {
                    waiting += 1;
                    if all {
                        r.set_waiting_for_notify(false);
                        marked += 1;
                    } else {
                        oldest = Some(r);
                    }
                }
                q = r.queue();
            }
            if let Some(r) = oldest {
                r.set_waiting_for_notify(false);
                marked = 1;
            }
        }
        // Once every waiter is marked, the next notify (until a thread
        // waits again) needs no meta-lock.
        let bits = held.bits;
        let release = if marked == waiting {
            bits & !WAITING_SUMMARY
        } else {
            bits
        };
        held.release(release);
        marked
    }
}
