//! Enters that do not wait indefinitely: `try_lock`, which never waits for
//! another thread's monitor, and the timed and interruptible enters, which
//! wait in the queue like `lock` until their deadline or an interrupt and
//! then take their record out again.

use super::queue::unlink;
use super::{EXTRA_FAST, enter_again, owner_is};
use crate::exec_env::interrupt::Interrupt;
use crate::exec_env::{ExecEnv, SIGNAL_HANDED_OVER, SIGNAL_NONE};
use crate::lock_record::{LockRecord, PassedOver, record_of};
use crate::meta_lock::hooks::{self, GiveUp, HandoffEvent};
use crate::primitive::Ordering;
use crate::sys::{self, Instant};
use crate::word::{LOCKED, MultiUseWord, state};

/// How long a blocking enter waits for another thread's monitor: until
/// `deadline`, if any, and until `interrupt` is set, if given; with
/// neither, until it enters.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Until<'i> {
    pub(crate) deadline: Option<Instant>,
    pub(crate) interrupt: Option<&'i Interrupt>,
}

impl<'i> Until<'i> {
    /// `lock`'s: never gives up.
    pub(crate) const FOREVER: Until<'static> = Until {
        deadline: None,
        interrupt: None,
    };

    /// Gives up at `deadline`, if any.
    pub(crate) fn deadline(deadline: Option<Instant>) -> Self {
        Self {
            deadline,
            interrupt: None,
        }
    }

    /// Whether the enter must give up now: the interrupt came, or the time
    /// ran out.
    pub(super) fn is_over(&self) -> bool {
        self.interrupt.is_some_and(Interrupt::is_pending)
            || self
                .deadline
                .is_some_and(|deadline| sys::get().now() >= deadline)
    }
}

impl MultiUseWord {
    /// Enters the monitor if it is free, or ours and `REENTRANT`.
    #[inline]
    #[track_caller]
    pub(crate) fn try_enter<const REENTRANT: bool>(
        &self,
        ee: &'static ExecEnv,
    ) -> Option<&'static LockRecord> {
        // A try looks before it swaps: a monitor another thread owns fails
        // it at this load. The fast path's compare-and-swap would take the
        // owner's line from it, and the slow path's meta-lock would send the
        // owner's unlock through the meta-lock too: a thread polling
        // `try_lock` slowed every hold it polled. Part of the extra-fast
        // path: without it every operation goes through the meta-lock.
        if EXTRA_FAST {
            // Acquire: `owner_is` reads the record the word points at, which
            // only a thread that holds some record may own.
            let bits = self.word.load(Ordering::Acquire);
            // SAFETY: `ee` is the calling thread's EE.
            let might_own = REENTRANT && unsafe { ee.has_records_out() };
            if state(bits) == LOCKED && !(might_own && owner_is(bits, ee)) {
                return None;
            }
        }
        // The fast path's compare-and-swap from its guess, not from the value
        // just loaded: from that value it waits for the load, and a try and
        // unlock of a free word measured 0.4-0.9 ns slower (against 4.95).
        // A match, not a closure: an overflow's panic reports the caller.
        match self.try_enter_fast::<REENTRANT>(ee) {
            Some(record) => Some(record),
            None => self.try_enter_slow::<REENTRANT>(ee),
        }
    }

    /// Enters the monitor, giving up at `deadline` if another thread still
    /// owns it then; `REENTRANT` as for `enter`.
    #[inline]
    #[track_caller]
    pub(crate) fn try_enter_until<const REENTRANT: bool>(
        &self,
        ee: &'static ExecEnv,
        deadline: Instant,
    ) -> Option<&'static LockRecord> {
        // A match, not a closure, as in `try_enter`.
        match self.try_enter_fast::<REENTRANT>(ee) {
            Some(record) => Some(record),
            None => self.enter_slow_until::<REENTRANT>(ee, Until::deadline(Some(deadline))),
        }
    }

    /// Enters the monitor, giving up if the calling thread's interrupt flag
    /// is set while another thread owns it (the flag stays set for the
    /// caller to clear), or at `deadline` if any; `REENTRANT` as for
    /// `enter`. A thread whose flag is gone (in a late thread-local
    /// destructor) waits as `enter`, or `try_enter_until`.
    #[cfg(feature = "std")]
    #[inline]
    #[track_caller]
    pub(crate) fn enter_interruptibly<const REENTRANT: bool>(
        &self,
        ee: &'static ExecEnv,
        deadline: Option<Instant>,
    ) -> Option<&'static LockRecord> {
        // A match, not a closure: a relock's panic reports the caller.
        match self.try_enter_fast::<REENTRANT>(ee) {
            Some(record) => Some(record),
            None => self.enter_interruptibly_slow::<REENTRANT>(ee, deadline),
        }
    }

    /// The blocking part of `enter_interruptibly`.
    #[cfg(feature = "std")]
    #[cold]
    #[track_caller]
    fn enter_interruptibly_slow<const REENTRANT: bool>(
        &self,
        ee: &'static ExecEnv,
        deadline: Option<Instant>,
    ) -> Option<&'static LockRecord> {
        // Cloned before any meta-lock (a first use would allocate; the
        // caller's check of the flag has made it already).
        let interrupt = Interrupt::current_if_alive();
        let until = Until {
            deadline,
            interrupt: interrupt.as_deref(),
        };
        self.enter_slow_until::<REENTRANT>(ee, until)
    }

    /// A timed or interruptible enter whose time ran out (or interrupt came)
    /// while `record` was queued, or that an invitation reached after that:
    /// takes the record out of the
    /// queue, unless an exit reached it first. Owns the monitor if an exit
    /// handed it over or if nobody owns it now (an invitation may have
    /// passed over the queue to this thread, which must not be dropped);
    /// else returns the record to the free list, and leaves a detached EE it
    /// made idle to the caller to release.
    ///
    /// # Safety
    /// `record` is ours, queued on this word by `acquire_held_until` or
    /// taken out of that queue by an exit that signalled us.
    #[cold]
    pub(super) unsafe fn give_up(
        &self,
        ee: &'static ExecEnv,
        record: &'static LockRecord,
    ) -> Option<&'static LockRecord> {
        let mut held = self.get_meta_lock(ee);
        let bits = held.bits;
        // Relaxed: an exit signals under the meta-lock we now hold.
        let queued = match ee.monitor_signal.load(Ordering::Relaxed) {
            SIGNAL_HANDED_OVER => {
                held.release(bits);
                hooks::fire(HandoffEvent::TimedEnterSettled(GiveUp::HandedOver));
                return Some(record);
            }
            SIGNAL_NONE => {
                // SAFETY: still queued, and we hold the meta-lock.
                held.bits = unsafe { unlink(bits, record) };
                true
            }
            _ => false,
        };
        // SAFETY: we hold the meta-lock; the record is ours and in no queue.
        unsafe {
            record.set_passed_over(PassedOver::default());
            if state(held.bits) != LOCKED {
                self.install(held, record);
                hooks::fire(HandoffEvent::TimedEnterSettled(match queued {
                    true => GiveUp::LeftTheQueueAndTookIt,
                    false => GiveUp::InvitedAndTookIt,
                }));
                return Some(record);
            }
            let bits = held.bits;
            held.release(bits);
            hooks::fire(HandoffEvent::TimedEnterSettled(match queued {
                true => GiveUp::LeftTheQueue,
                false => GiveUp::InvitedAndGaveUp,
            }));
            // A detached EE left idle is not released here: the callers
            // still use it (diagnostics, `release_if_idle_and_detached`),
            // and one released here could be bound by another thread by
            // then. Every caller that gives up releases it last.
            let _idle_and_detached = ee.recycle_lock_record(record);
        }
        None
    }

    /// The non-blocking part of `try_lock`, through the meta-lock.
    #[cold]
    #[track_caller]
    fn try_enter_slow<const REENTRANT: bool>(
        &self,
        ee: &'static ExecEnv,
    ) -> Option<&'static LockRecord> {
        count!(ee, extra_fast_misses);
        // SAFETY: `ee` is the calling thread's EE.
        let record = unsafe { ee.peek_lock_record() };
        let held = self.get_meta_lock(ee);
        let bits = held.bits;
        if state(bits) != LOCKED {
            // SAFETY: we hold the meta-lock at `bits`, NEUTRAL or WAITERS;
            // `record` came from `peek_lock_record`, nothing taken since.
            unsafe {
                ee.take_lock_record(record);
                self.install(held, record);
            }
            return Some(record);
        }
        let mine = REENTRANT && owner_is(bits, ee);
        held.release(bits);
        if !mine {
            return None;
        }
        // SAFETY: a LOCKED word points at the owner's live record, ours;
        // the meta-lock is released.
        unsafe {
            let owner = &*record_of(bits);
            enter_again(owner);
            Some(owner)
        }
    }
}
