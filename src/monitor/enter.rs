//! monitorEnter (paper 000, Fig. 6 left, Fig. 7 left) and its extra-fast
//! path (section 5.2).

use core::ptr;

#[cfg(not(metalock_swap_only))]
use super::profile::Profile;
use super::queue::{append_to_queue, requeue_first, requeue_invited};
use super::try_enter::Until;
use super::{EXTRA_FAST, REENTERED, enter_again, locked_bits, owner_is, signal_after_timed_park};
use crate::exec_env::interrupt::Interrupt;
use crate::exec_env::{ExecEnv, SIGNAL_HANDED_OVER, SIGNAL_NONE};
use crate::lock_record::{HAND_OVER_NEXT, LockRecord, PassedOver, record_of};
use crate::meta_lock::{MetaLock, hooks};
use crate::primitive::Ordering;
use crate::sys::{self, Instant};

/// How a thread comes to `acquire_held`.
#[derive(Clone, Copy, Debug)]
pub(super) enum Entry {
    /// A newcomer.
    Fresh,
    /// Invited by an exit to re-contend; the time, read before the
    /// meta-lock was taken (so that this path does not read the clock while
    /// others wait for the meta-lock), counts if it loses.
    Invited(Instant),
    /// A notified waiter woken to re-contend: if it loses, it queues first
    /// again, behind the records passed over too long only, and the exit
    /// that finds it first hands it the monitor.
    Notified,
}
use crate::word::{LOCKED, MultiUseWord, NEUTRAL, QUEUE_SUMMARY, WAITERS, state};

impl MultiUseWord {
    /// Enters the monitor, blocking while another thread owns it;
    /// `REENTRANT == false` refuses (panics) when the calling thread owns it
    /// already.
    #[inline(always)]
    #[track_caller]
    pub(crate) fn enter<const REENTRANT: bool>(&self, ee: &'static ExecEnv) -> &'static LockRecord {
        match self.try_enter_fast::<REENTRANT>(ee) {
            Some(record) => record,
            None => self.enter_slow::<REENTRANT>(ee),
        }
    }

    /// The extra-fast enter: NEUTRAL to LOCKED in one compare-and-swap, or a
    /// recursive enter by the owner without any atomic read-modify-write.
    #[inline(always)]
    #[track_caller]
    pub(super) fn try_enter_fast<const REENTRANT: bool>(
        &self,
        ee: &'static ExecEnv,
    ) -> Option<&'static LockRecord> {
        if !EXTRA_FAST {
            return None;
        }
        // SAFETY: `ee` is the calling thread's EE.
        if REENTRANT && unsafe { ee.has_records_out() } {
            // The thread may own this monitor already: look before trying a
            // compare-and-swap, which would fail and cost as much as a lock.
            // A thread that holds no record cannot, and skips the look.
            // Acquire: see `inspect`.
            let bits = self.word.load(Ordering::Acquire);
            // A NEUTRAL word has no owner: lock it at once (a thread that
            // nests distinct monitors comes here).
            #[cfg(not(metalock_swap_only))]
            if state(bits) == NEUTRAL {
                return self.fused_lock::<true>(ee, bits);
            }
            // Usually the monitor is the one last entered: comparing the word
            // with that record's address keeps the count off the chain of
            // reading the record the word points at, then its owner.
            // SAFETY: `ee` is the calling thread's EE.
            let last = unsafe { ee.last_taken_lock_record() };
            let hot = ee.hot_record() as *const LockRecord;
            let masked = bits & !QUEUE_SUMMARY;
            let mine = if masked == hot as usize | LOCKED {
                hot
            } else if masked == last as usize | LOCKED {
                last
            } else if owner_is(bits, ee) {
                record_of(bits)
            } else {
                ptr::null()
            };
            // SAFETY: a LOCKED word pointing at a record of ours means we
            // own the monitor, and it cannot change hands while we do;
            // records outlive every word that names them.
            if let Some(record) = unsafe { mine.as_ref() } {
                // SAFETY: ours, and no meta-lock is held.
                unsafe { enter_again(record) };
                return Some(record);
            }
            return None;
        }
        #[cfg(not(metalock_swap_only))]
        {
            // SAFETY: `ee` is the calling thread's EE.
            let record = unsafe { ee.peek_lock_record() };
            self.fused_lock_guessing(ee, record)
        }
        #[cfg(metalock_swap_only)]
        None
    }

    /// The extra-fast lock without a load first, with `record` (from
    /// `peek_lock_record`): guesses the word's NEUTRAL
    /// value and compare-and-swaps at once. Under contention a load then a
    /// compare-and-swap moves the cache line twice (profiled: the load's
    /// miss was a fifth of the contended cycles), a compare-and-swap alone
    /// once. The guess is the payload the record displaced last time: right
    /// when a thread locks the same object again, and for every object whose
    /// payload is 0 (every `Synchronized`). A wrong guess fails and returns
    /// the word, as the load would have, and a NEUTRAL word is then tried
    /// once more.
    #[cfg(not(metalock_swap_only))]
    #[inline(always)]
    fn fused_lock_guessing(
        &self,
        ee: &'static ExecEnv,
        record: &'static LockRecord,
    ) -> Option<&'static LockRecord> {
        let guess = record.displaced();
        // AcqRel on success: as in `fused_install`. Relaxed on failure: the
        // returned word is only compared here, by `fused_lock`'s own
        // compare-and-swap, or not at all (the slow path loads the word again,
        // with Acquire, before it reads a record it points at).
        match self.word.compare_exchange(
            guess,
            locked_bits(record),
            Ordering::AcqRel,
            Ordering::Relaxed,
        ) {
            Ok(_) => {
                // SAFETY: `record` came from `peek_lock_record`, nothing
                // taken since.
                unsafe { ee.take_lock_record(record) };
                count!(ee, extra_fast_hits);
                Some(record)
            }
            Err(bits) if state(bits) == NEUTRAL => self.fused_lock::<false>(ee, bits),
            Err(_) => None,
        }
    }

    /// The extra-fast lock (section 5.2): NEUTRAL to LOCKED in one
    /// compare-and-swap from `neutral`, with a pre-initialised record.
    /// `NESTED`: `has_records_out` is known to hold (the thread has just
    /// looked), so the record is the first of its free list, and neither
    /// the peek nor the take looks at the count again.
    #[cfg(not(metalock_swap_only))]
    #[inline(always)]
    fn fused_lock<const NESTED: bool>(
        &self,
        ee: &'static ExecEnv,
        neutral: usize,
    ) -> Option<&'static LockRecord> {
        // SAFETY: `ee` is the calling thread's EE, which holds no meta-lock
        // here; `NESTED` only when `has_records_out` holds.
        let record = unsafe {
            if NESTED {
                ee.peek_free_record()
            } else {
                ee.peek_lock_record()
            }
        };
        if !self.fused_install(record, neutral) {
            // The record stays unused; its displaced payload is overwritten
            // by the next use.
            return None;
        }
        // SAFETY: `record` came from the peek above, nothing taken since.
        unsafe {
            if NESTED {
                ee.take_free_record(record)
            } else {
                ee.take_lock_record(record)
            }
        };
        count!(ee, extra_fast_hits);
        Some(record)
    }

    /// NEUTRAL to LOCKED by `record` (ours, in no queue) in one
    /// compare-and-swap from `neutral`.
    #[cfg(not(metalock_swap_only))]
    #[inline(always)]
    fn fused_install(&self, record: &LockRecord, neutral: usize) -> bool {
        record.set_displaced(neutral);
        // AcqRel: Acquire pairs with the Release of the previous unlock (the
        // critical section before it happens before ours); Release publishes
        // the record's displaced payload to meta-lock holders.
        self.word
            .compare_exchange(
                neutral,
                locked_bits(record),
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_ok()
    }

    /// Before going through the meta-lock, spins a little (then yields a
    /// little, unless the monitor's profile says its spins nearly always
    /// lose) while another thread owns the monitor, in case it leaves
    /// soon: a short critical section then costs no sleep and wake-up, and
    /// no meta-lock. A newcomer gives up at once when there is a queue, so
    /// that it does not spin past threads that already sleep; a thread that
    /// an exit invited (`record` given: it re-contends with its own record)
    /// was the first of the queue, left it with the invitation, and spins
    /// past the rest. Installs `record` if given, else a fresh one.
    #[cfg(not(metalock_swap_only))]
    pub(super) fn spin_then_fused_lock(
        &self,
        ee: &'static ExecEnv,
        record: Option<&'static LockRecord>,
    ) -> Option<&'static LockRecord> {
        // The owner check reads the owner's record, a line the owner writes
        // when it unlocks, so only a thread that may own the monitor looks:
        // one that holds some record and is not re-contending with its own.
        // SAFETY: `ee` is the calling thread's EE.
        let might_own = record.is_none() && unsafe { ee.has_records_out() };
        let profile = Profile::of(self);
        let mut spin = profile.spin();
        loop {
            // Acquire: `owner_is` below reads the record the word points at,
            // which another thread may have just allocated and published
            // with a Release.
            let bits = self.word.load(Ordering::Acquire);
            if state(bits) == NEUTRAL {
                let took = match record {
                    None => self.fused_lock::<false>(ee, bits),
                    Some(record) if self.fused_install(record, bits) => {
                        count!(ee, extra_fast_hits);
                        Some(record)
                    }
                    Some(_) => None,
                };
                if let Some(record) = took {
                    profile.spin_won(&spin, ee);
                    return Some(record);
                }
                // Lost to another thread: look again at once, as a new owner
                // is no reason to spend the budget.
                continue;
            } else if state(bits) != LOCKED
                || (record.is_none() && bits & QUEUE_SUMMARY != 0)
                || (might_own && owner_is(bits, ee))
            {
                // Only a queue that formed (LOCKED) decides the spin: a word
                // in the meta-lock (BUSY) or free with a queue (WAITERS) is
                // for the meta-lock path to settle.
                if state(bits) == LOCKED {
                    profile.spin_lost(&spin, ee);
                }
                return None;
            }
            if !spin.spin() {
                profile.spin_lost(&spin, ee);
                return None;
            }
        }
    }

    /// monitorEnter through the meta-lock (Fig. 6, left). Out of line, so
    /// that the extra-fast path inlines into callers.
    #[cfg_attr(not(feature = "meta-lock-only"), cold, inline(never))]
    #[track_caller]
    fn enter_slow<const REENTRANT: bool>(&self, ee: &'static ExecEnv) -> &'static LockRecord {
        match self.enter_slow_until::<REENTRANT>(ee, Until::FOREVER) {
            Some(record) => record,
            None => unreachable!("an enter without a deadline gave up"),
        }
    }

    /// The blocking part of `enter`, and of the timed and interruptible
    /// enters (in `try_enter`), which give up as `until` says.
    #[inline]
    #[track_caller]
    pub(super) fn enter_slow_until<const REENTRANT: bool>(
        &self,
        ee: &'static ExecEnv,
        until: Until<'_>,
    ) -> Option<&'static LockRecord> {
        // Waiting runs the platform, whose allocations (outside a meta-lock)
        // may lock monitors.
        // SAFETY: `ee` is the calling thread's EE.
        let _kept = unsafe { ee.keep_bound_if_detached() };
        #[cfg(not(metalock_swap_only))]
        if EXTRA_FAST && let Some(record) = self.spin_then_fused_lock(ee, None) {
            return Some(record);
        }
        count!(ee, extra_fast_misses);
        // Allocates, if the free list is empty, before the meta-lock.
        // SAFETY: `ee` is the calling thread's EE.
        let record = unsafe { ee.peek_lock_record() };
        // Blocked from here, not during the spin or the allocation: a
        // thread dump must not show a thread that runs an allocator (which
        // may hold another monitor meanwhile) as blocked on this one.
        #[cfg(all(feature = "diagnostics", not(metalock_model)))]
        let _blocked = ee.diag.block(
            self as *const MultiUseWord as usize,
            false,
            until.deadline.is_some(),
            None,
        );
        let held = self.get_meta_lock(ee);
        let bits = held.bits;
        if owner_is(bits, ee) {
            held.release(bits);
            if !REENTRANT && until.deadline.is_some() {
                // The time would run out waiting for ourselves: as try_lock.
                return None;
            }
            // The panic hook is user code: it must not see this thread
            // blocked on a monitor it owns.
            #[cfg(all(feature = "diagnostics", not(metalock_model)))]
            drop(_blocked);
            assert!(REENTRANT, "{REENTERED}");
            // SAFETY: a LOCKED word points at the owner's live record, ours;
            // the meta-lock is released.
            unsafe {
                let owner = &*record_of(bits);
                enter_again(owner);
                return Some(owner);
            }
        }
        // SAFETY: we hold the meta-lock at `bits`, not owned by us, and
        // `record` came from `peek_lock_record`, nothing taken since.
        unsafe {
            ee.take_lock_record(record);
            self.acquire_held_until(ee, record, held, Entry::Fresh, until)
        }
    }

    /// Makes `record` the owner of a monitor that nobody owns: NEUTRAL to
    /// LOCKED, or WAITERS to LOCKED with `record` in front of the queue.
    /// Releases the meta-lock.
    ///
    /// # Safety
    /// `held` is the meta-lock of this word, at NEUTRAL or WAITERS; `record`
    /// is ours and in no queue.
    pub(super) unsafe fn install(&self, held: MetaLock<'_>, record: &LockRecord) {
        // SAFETY: we hold the meta-lock, and the record is ours.
        let kept = unsafe { record.last_notified() };
        debug_assert!(
            kept.is_null(),
            "a record kept a notified waiter from an earlier hold"
        );
        let bits = held.bits;
        if state(bits) == NEUTRAL {
            record.set_displaced(bits);
            // SAFETY: `record` is in no queue.
            unsafe { record.set_queue(ptr::null_mut()) };
            held.release(locked_bits(record));
        } else {
            debug_assert_eq!(state(bits), WAITERS);
            let first = record_of(bits);
            // SAFETY: we hold the meta-lock; WAITERS points at the head,
            // which holds the displaced payload.
            unsafe {
                record.set_queue(first);
                record.set_last(match (*first).queue().is_null() {
                    true => first,
                    false => (*first).last(),
                });
                record.set_displaced((*first).displaced());
            }
            held.release(locked_bits(record) | QUEUE_SUMMARY);
        }
    }

    /// Enters the monitor with `record` (ours, in no queue), starting with
    /// the meta-lock `held`. While another thread owns the monitor (Fig. 7,
    /// monitorEnterSlow), queues the record, sleeps until an exit invites
    /// this thread (which takes the record out of the queue again) or hands
    /// it the monitor, and re-contends like a newcomer. How it got here
    /// decides where it queues and what a loss counts for (see
    /// `passed_over_too_long`): `entry` says.
    ///
    /// # Safety
    /// `held` is the meta-lock of this word, which another thread may own
    /// but we do not; `record` is ours and in no queue; `ee` is ours.
    pub(super) unsafe fn acquire_held<'a>(
        &'a self,
        ee: &'static ExecEnv,
        record: &'static LockRecord,
        held: MetaLock<'a>,
        entry: Entry,
    ) -> &'static LockRecord {
        // SAFETY: caller's contract.
        match unsafe { self.acquire_held_until(ee, record, held, entry, Until::FOREVER) } {
            Some(record) => record,
            None => unreachable!("an enter without a deadline gave up"),
        }
    }

    /// `acquire_held` that gives up as `until` says: then it takes the
    /// record out of the queue (or, invited after the deadline or the
    /// interrupt, does not queue it again), returns it to the free list and
    /// returns `None`.
    ///
    /// # Safety
    /// As for `acquire_held`.
    pub(super) unsafe fn acquire_held_until<'a>(
        &'a self,
        ee: &'static ExecEnv,
        record: &'static LockRecord,
        mut held: MetaLock<'a>,
        mut entry: Entry,
        until: Until<'_>,
    ) -> Option<&'static LockRecord> {
        loop {
            let bits = held.bits;
            if state(bits) != LOCKED {
                // SAFETY: caller's contract; the record is in no queue.
                unsafe {
                    record.set_passed_over(PassedOver::default());
                    self.install(held, record);
                }
                return Some(record);
            }
            // SAFETY: the record is in no queue, and the meta-lock we hold
            // orders this with the exits that read it once queued; LOCKED
            // points at the owner's record, the queue's head.
            unsafe {
                let owner = &*record_of(bits);
                match entry {
                    Entry::Fresh => append_to_queue(owner, record),
                    Entry::Invited(now) => {
                        let passed_over = record.passed_over();
                        record.set_passed_over(PassedOver {
                            since: passed_over.since.or(Some(now)),
                            times: passed_over.times.saturating_add(1),
                        });
                        count!(ee, wake_to_block);
                        hooks::fire(hooks::HandoffEvent::ContenderPassedOver);
                        requeue_invited(owner, record);
                    }
                    Entry::Notified => {
                        // A notified waiter that lost once goes back to its
                        // place, first (behind the records passed over too
                        // long), and the exit that finds it first hands it
                        // the monitor.
                        record.set_passed_over(PassedOver {
                            since: None,
                            times: HAND_OVER_NEXT,
                        });
                        count!(ee, wake_to_block);
                        hooks::fire(hooks::HandoffEvent::NotifiedWaiterLost);
                        requeue_first(owner, record);
                    }
                }
            }
            count!(ee, blocking_enters);
            // Relaxed: every earlier signal to this thread was already read
            // by it (with Acquire in `await_invitation` or `wait`, or under
            // this meta-lock), so coherence orders this reset after it, and
            // the next signal comes from an exit that sees our record in the
            // queue, under this meta-lock.
            ee.monitor_signal.store(SIGNAL_NONE, Ordering::Relaxed);
            held.release(bits | QUEUE_SUMMARY);
            match self.await_invitation(ee, until) {
                SIGNAL_HANDED_OVER => return Some(record),
                // SAFETY: our record, queued by us above.
                SIGNAL_NONE => return unsafe { self.give_up(ee, record) },
                _ => {}
            }
            // Invited after its time ran out or its interrupt came (the park
            // woke late, or the invitation beat them): take the monitor if
            // it is free, as the invitation asks, but neither spin nor queue
            // again.
            if until.is_over() {
                // SAFETY: our record, taken out of the queue by the exit
                // that invited us.
                return unsafe { self.give_up(ee, record) };
            }
            #[cfg(not(metalock_swap_only))]
            if EXTRA_FAST && self.spin_then_fused_lock(ee, Some(record)).is_some() {
                // SAFETY: the record now heads the queue as the owner's, no
                // longer waiting in it, so `passed_over` is this thread's
                // alone (`LockRecord`'s invariant).
                unsafe { record.set_passed_over(PassedOver::default()) };
                return Some(record);
            }
            if !matches!(entry, Entry::Notified) {
                entry = Entry::Invited(sys::get().now());
            }
            held = self.get_meta_lock(ee);
        }
    }

    /// Sleeps until an exit invites this thread, having taken its record
    /// out of the queue, or hands it the monitor, or until `until` gives up;
    /// returns the signal (`SIGNAL_NONE` if the time ran out or the
    /// interrupt came first). No spinning here: the thread spun before it
    /// queued (`spin_then_fused_lock`), and more spinning only takes the
    /// processor from the owner it waits for.
    fn await_invitation(&self, ee: &'static ExecEnv, until: Until<'_>) -> usize {
        // Acquire (here and below) pairs with the Release store of the
        // inviting exit: the queue change it made is visible.
        let signal = || ee.monitor_signal.load(Ordering::Acquire);
        // From here an interrupt unparks us; one already set ends the wait.
        let _sleeping = match until.interrupt.map(|interrupt| interrupt.sleep_as(ee)) {
            Some((_, true)) => return signal(),
            sleeping => sleeping,
        };
        loop {
            let signal = signal();
            if signal != SIGNAL_NONE || until.interrupt.is_some_and(Interrupt::is_pending) {
                return signal;
            }
            if ee.parker.park(until.deadline) {
                return signal_after_timed_park(ee);
            }
        }
    }
}
