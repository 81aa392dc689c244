//! monitorExit (paper 000, Fig. 6 right, Fig. 7 right) and its extra-fast
//! path (section 5.2).

use core::ptr;

use super::EXTRA_FAST;
#[cfg(not(metalock_swap_only))]
use super::locked_bits;
use super::park_marks;
use super::queue::{debug_assert_ends_at, make_heir, passed_over_too_long};
use crate::exec_env::{ExecEnv, SIGNAL_HANDED_OVER, SIGNAL_INVITED};
use crate::lock_record::{LockRecord, NOT_WAITING, record_of};
use crate::meta_lock::{MetaLock, hooks};
use crate::primitive::Ordering;
use crate::sys::AbortOnDrop;
use crate::word::{FAIR, LOCKED, MultiUseWord, WAITERS, state};

impl MultiUseWord {
    /// Leaves one level of the monitor that `record` owns. Leaving the last
    /// level with threads queued to enter invites the first of them, or
    /// hands it the monitor: on `FAIR_UNLOCK`, on a fair monitor, or when
    /// that thread was passed over too long (see `release_to_queue`).
    ///
    /// # Safety
    /// `record` is the calling thread's and owns this monitor (a guard's or
    /// a token's, with a level of its own): the count is written without
    /// the meta-lock.
    #[inline(always)]
    pub(crate) unsafe fn exit<const FAIR_UNLOCK: bool>(&self, record: &'static LockRecord) {
        // SAFETY: caller's contract: the owner's thread.
        let count = unsafe { record.count() };
        if EXTRA_FAST && count > 1 {
            // SAFETY: owner-only field.
            unsafe { record.set_count(count - 1) };
            return;
        }
        #[cfg(not(metalock_swap_only))]
        if EXTRA_FAST {
            // SAFETY: the record's owner is the calling thread's EE.
            let ee = unsafe { ExecEnv::of_owner(record.owner()) };
            // SAFETY: the record is ours and taken back below if the word
            // still refers to it (see `push_lock_record`).
            let released_last = unsafe { ee.push_lock_record(record) };
            // Release pairs with the Acquire of the next enter; Relaxed on
            // failure, as the slow path re-reads the word under the
            // meta-lock. Fails when a thread queued or the payload changed
            // (the summary bit is set), or while a thread holds the
            // meta-lock (the word is BUSY).
            if self
                .word
                .compare_exchange(
                    locked_bits(record),
                    record.displaced(),
                    Ordering::Release,
                    Ordering::Relaxed,
                )
                .is_ok()
            {
                // The word no longer refers to the record and its queue was
                // empty (clear summary bit), the count is 1, an owner never
                // waits for a notification, its `passed_over` is the
                // default (the enters that count losses clear it as they
                // end), and no notify queued a waiter behind it in this hold
                // (that sets the summary bit), so `last_notified` is null:
                // the presets hold.
                // SAFETY: nothing refers to the record any more.
                #[cfg(debug_assertions)]
                unsafe {
                    record.debug_assert_presets()
                };
                count!(ee, extra_fast_hits);
                if released_last {
                    // SAFETY: detached and idle, on its own thread.
                    unsafe { ee.release_detached() };
                }
                return;
            }
            // SAFETY: pushed above, no list change since.
            unsafe { ee.take_lock_record(record) };
        }
        self.exit_slow(record, FAIR_UNLOCK);
    }

    /// monitorExit through the meta-lock (Fig. 6 right, Fig. 7 right).
    #[cfg_attr(not(feature = "meta-lock-only"), cold, inline(never))]
    fn exit_slow(&self, record: &'static LockRecord, fair: bool) {
        // SAFETY: the record's owner is the calling thread's EE.
        let ee = unsafe { ExecEnv::of_owner(record.owner()) };
        count!(ee, extra_fast_misses);
        let held = self.get_meta_lock(ee);
        let bits = held.bits;
        let Some(held) = check_owner(held, record) else {
            not_owned(Unowned::Unlock)
        };
        // SAFETY: we hold the meta-lock and own the monitor through `record`.
        unsafe {
            let count = record.count();
            if count > 1 {
                record.set_count(count - 1);
                held.release(bits);
                return;
            }
            record.set_last_notified(ptr::null_mut());
            drop(release_to_queue(
                held,
                record.queue(),
                record.last(),
                record.displaced(),
                fair,
            ));
            if ee.recycle_lock_record(record) {
                ee.release_detached();
            }
        }
    }
}

/// monitorExitSlow (Fig. 7, right): releases a monitor whose owner gives it
/// up, leaving `queue` behind (head first, null if none, `last` its last
/// record), with `displaced` the payload of its NEUTRAL form, and releases
/// the meta-lock; returns the wake-up owed to the thread it signalled. The
/// next owner is the thread it hands the monitor to, or else whoever takes
/// it first: the invited thread or a newcomer.
///
/// The first thread of the queue (notified waiters join it ahead of the
/// contenders not yet passed over too long) is invited to re-contend with
/// newcomers (renouncement): while it wakes up, the threads that are running
/// keep the monitor busy instead of waiting for a thread that is not running
/// yet. (A hand-over to every notified waiter measured 2 to 250 times slower
/// on a bounded buffer: each transfer waited for a thread to wake.) Unlike
/// the paper, the invited thread leaves the queue at once: while it wakes up,
/// the queue may be empty and the object back to NEUTRAL, so the running
/// threads keep the extra-fast path. A first thread passed over too long
/// (eventual fairness; a notified waiter, after losing once) is handed the
/// monitor instead, and so is the first thread when the release is `fair`
/// (`unlock_fair`) or the monitor is (its displaced payload carries the
/// `FAIR` bit).
///
/// Every such exit invites, even while a thread invited by an earlier one is
/// still waking. A bit in the word that kept the rest of the queue asleep until
/// that thread came back was tried: a `notify_all` herd of 1,000 waiters that
/// each wait again at once (`examples/long_queues.rs`'s, in a probe that also
/// stamped every return) took about 4 times as long (the median of six runs'
/// medians, 31 against 7.3 ms), its median step from one waiter's return to the
/// next 23-34 µs instead of 3-7 µs, on a 2-vCPU KVM guest where a thread woken
/// onto an idle vCPU waited 40-50 µs to run. Two threads on their way overlap
/// those waits; one at a time pays each in full.
///
/// # Safety
/// `held` is the meta-lock of the word whose queue `queue` is, whose owner
/// gives the monitor up (nothing else links `queue` any more); `last` is
/// the last record of `queue`, and `displaced` the word's NEUTRAL form.
pub(super) unsafe fn release_to_queue(
    held: MetaLock<'_>,
    queue: *mut LockRecord,
    last: *mut LockRecord,
    displaced: usize,
    fair: bool,
) -> Wake {
    // SAFETY: we hold the meta-lock of the queue's word (caller's contract).
    unsafe {
        debug_assert_ends_at(queue, last);
        let Some(first) = queue.as_ref() else {
            held.release(displaced);
            return Wake::NONE;
        };
        let rest = first.queue();
        if fair || displaced & FAIR != 0 || passed_over_too_long(first) {
            let bits = make_heir(first, rest, last, displaced);
            count!(held.ee(), hand_overs);
            return release_and_signal(held, bits, first, SIGNAL_HANDED_OVER);
        }
        first.set_queue(ptr::null_mut());
        first.set_wait_state(NOT_WAITING);
        let bits = match rest.as_ref() {
            None => displaced,
            Some(head) => {
                head.set_displaced(displaced);
                head.set_last(last);
                rest as usize | WAITERS
            }
        };
        release_and_signal(held, bits, first, SIGNAL_INVITED)
    }
}

/// Gives `signal` to the thread of `record` and releases the meta-lock with
/// `release_bits`; returns the wake-up of that thread.
fn release_and_signal(
    held: MetaLock<'_>,
    release_bits: usize,
    record: &LockRecord,
    signal: usize,
) -> Wake {
    // SAFETY: a queued record's owner is a live EE.
    let target = unsafe { ExecEnv::of_owner(record.owner()) };
    // Release pairs with the Acquire loads in `await_invitation` and `wait`.
    target.monitor_signal.store(signal, Ordering::Release);
    held.release(release_bits);
    Wake {
        target: Some(target),
        handed_over: signal == SIGNAL_HANDED_OVER,
    }
}

/// The wake-up that a release owes the thread it invited or handed the
/// monitor to, whose signal is already stored: it runs when this is
/// dropped. A wait, which releases the monitor under its wait-table stripe,
/// drops it once the stripe is released, as parking_lot wakes a thread
/// outside its queue's lock: the wake is a system call, of microseconds and
/// more with thousands of threads asleep, and the next thread to wait on
/// the monitor needs that stripe. Woken under it, the 3,000 waiters of
/// `examples/long_queues.rs`' `notify_all` herd blocked on their stripe
/// about 6,100 times in 7 rounds, and 1,200-1,400 times woken after it
/// (Intel Xeon, 2 vCPUs).
///
/// Invariant: `target`, if any, is an EE (EEs are never freed) whose
/// thread has been signalled; dropped, even by an unwind, this wakes it. A
/// wake that comes late is one that comes early on another thread of the
/// EE: every park loop absorbs a stale token, as after an immediate wake
/// whose thread moved on first.
#[must_use = "dropped at once it wakes the thread now; keep it until the caller's locks are released"]
pub(super) struct Wake {
    target: Option<&'static ExecEnv>,
    handed_over: bool,
}

impl Wake {
    /// No thread to wake.
    pub(super) const NONE: Wake = Wake {
        target: None,
        handed_over: false,
    };
}

impl Drop for Wake {
    fn drop(&mut self) {
        if let Some(target) = self.target {
            // An unwind out of the hook would leave the thread asleep for
            // good.
            let fence = AbortOnDrop;
            if self.handed_over {
                hooks::fire(hooks::HandoffEvent::MonitorHandedOver);
            }
            park_marks::stamp_wake(target);
            target.parker.unpark();
            core::mem::forget(fence);
        }
    }
}

/// Returns `held` if `record` owns the monitor at `held.bits`; else
/// releases the meta-lock and returns `None`. Guards make a `None`
/// impossible from safe code; it guards the crate's own invariants.
#[inline]
pub(super) fn check_owner<'a>(held: MetaLock<'a>, record: &LockRecord) -> Option<MetaLock<'a>> {
    let bits = held.bits;
    if state(bits) != LOCKED || !ptr::eq(record_of(bits), record) {
        held.release(bits);
        return None;
    }
    Some(held)
}

/// The operation [`not_owned`] refuses.
#[derive(Clone, Copy, Debug)]
pub(super) enum Unowned {
    Unlock,
    Wait,
}

/// The panic of an operation whose [`check_owner`] failed, raised once the
/// caller holds no lock of the crate (the panic hook is user code).
#[cold]
#[track_caller]
pub(super) fn not_owned(op: Unowned) -> ! {
    // Only an unlock takes its record from the caller (a RawMonitor token);
    // a wait uses the guard's own, or the one the word names as the calling
    // thread's (a wait through a lock_api guard).
    match op {
        Unowned::Unlock => panic!(
            "metalock: unlock of a monitor that the calling thread does not own through the \
             given lock record (a RawMonitor token must come from the same RawMonitor's lock)"
        ),
        Unowned::Wait => panic!("metalock: wait of a monitor that the calling thread does not own"),
    }
}
