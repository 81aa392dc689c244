//! Monitor operations on the multi-use word: enter, exit, wait and notify
//! (paper 000, sections 4.3-4.4, Fig. 6-8), and the extra-fast path that
//! fuses the meta-lock and the monitor when nobody contends (section 5.2).
//!
//! # Data structure
//!
//! A LOCKED word points at the owner's lock record, the head of the object's
//! queue; behind it are the records of threads waiting to enter and of
//! threads waiting for a notification, in arrival order. A WAITERS word points
//! at the head of such a queue while nobody owns the monitor. The head record
//! holds the payload displaced from the word. Every change to the queue, the
//! records in it or the word happens under the object's meta-lock, except the
//! two extra-fast compare-and-swaps (NEUTRAL to LOCKED with an empty queue and
//! back) and the owner's changes to its own recursion count. Besides the
//! queue summary that the fused unlock needs, the word keeps a waiting
//! summary: whether the queue may hold a thread waiting for a notification,
//! so that a notify with only contenders queued needs no meta-lock.
//!
//! # Policy
//!
//! As in the paper, a releasing thread does not hand the monitor over: it
//! invites the first thread of the queue that waits to enter, and that
//! thread re-contends with new arrivals (renouncement). One departure: the
//! invited thread's record leaves the queue with the invitation, not when it
//! finally gets the monitor. While it wakes up, the queue is often empty and
//! the object back to NEUTRAL, so the threads that are running keep the
//! extra-fast path instead of all going through the meta-lock behind a
//! thread that is not running yet (with the paper's order, a queue that
//! formed once under contention tended to stay, and every operation paid for
//! the meta-lock). The invited thread re-contends like a newcomer and queues
//! again if it loses. Renouncement alone lets a thread lose again and again
//! (starve) while others barge in through the extra-fast path, so a thread
//! that was invited and lost counts its losses and notes since when; the
//! exit that invites it after a second loss, once the first is
//! [`FAIR_AFTER`] ago, hands it the monitor instead. Paper 001 sets out the
//! trade: hand-over costs throughput (a context switch per transfer),
//! renouncement costs fairness; the crate
//! renounces by default and hands over only to a thread that is starving
//! (eventual fairness). A notification only clears a waiter's flag; the waiter
//! re-contends when an exit invites it, or when its time runs out, in which
//! case it takes its record out of the queue itself. Contenders spin briefly
//! (`SpinWait`) before queueing behind an owner nobody else waits for, and
//! again after an invitation; they do not spin once queued.

use core::marker::PhantomData;
use core::ptr;
use core::time::Duration;

use crate::exec_env::ExecEnv;
use crate::lock_record::{LockRecord, PassedOver};
use crate::meta_lock::hooks;
use crate::platform::{self, Instant};
use crate::primitive::Ordering;
#[cfg(not(metalock_swap_only))]
use crate::primitive::SpinWait;
use crate::word::{
    LOCKED, MultiUseWord, NEUTRAL, QUEUE_SUMMARY, WAITERS, WAITING_SUMMARY, record_of, state,
};

/// Whether lock and unlock of an uncontended object use the fused
/// single-compare-and-swap paths of section 5.2, and recursive enter and exit
/// skip the meta-lock. Off with the `meta-lock-only` feature, which runs every
/// operation through the meta-lock as in the paper's "without extra fast"
/// measurements, and with the swap-only backend, which has no
/// compare-and-swap.
pub(crate) const EXTRA_FAST: bool = cfg!(not(any(feature = "meta-lock-only", metalock_swap_only)));

/// `ExecEnv::monitor_signal`: nothing since the thread last queued.
pub(crate) const SIGNAL_NONE: usize = 0;
/// `ExecEnv::monitor_signal`: an exit took the thread's record out of the
/// queue and invites it to re-contend.
const SIGNAL_INVITED: usize = 1;
/// `ExecEnv::monitor_signal`: an exit made the thread's record the owner.
const SIGNAL_HANDED_OVER: usize = 2;

/// How long an invited thread may keep losing the monitor to others before
/// an exit hands the monitor to it instead of releasing it: the bound on
/// starvation, traded against the throughput that a hand-over to a thread
/// that is not running yet costs (parking_lot makes a similar trade every
/// half millisecond on average).
const FAIR_AFTER: Duration = Duration::from_micros(500);

/// The word of a LOCKED object whose monitor `record` owns, queue empty.
#[inline(always)]
fn locked_bits(record: &LockRecord) -> usize {
    record as *const LockRecord as usize | LOCKED
}

impl MultiUseWord {
    /// Enters the monitor, blocking while another thread owns it. Reentrant:
    /// the owner may enter again; each guard releases one level.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    ///
    /// let word = MultiUseWord::with_payload(42);
    /// let outer = word.lock();
    /// let inner = word.lock();
    /// assert_eq!(inner.depth(), 2);
    /// drop(inner);
    /// drop(outer);
    /// assert!(!word.is_locked());
    /// assert_eq!(word.payload(), 42);
    /// ```
    #[inline(always)]
    pub fn lock(&self) -> MonitorGuard<'_> {
        let ee = ExecEnv::current();
        let record = self.enter::<true>(ee);
        MonitorGuard::new(self, record)
    }

    /// Enters the monitor if that needs no waiting for another thread's
    /// monitor: it is free, or the calling thread owns it already.
    #[inline]
    pub fn try_lock(&self) -> Option<MonitorGuard<'_>> {
        let ee = ExecEnv::current();
        self.try_enter::<true>(ee)
            .map(|record| MonitorGuard::new(self, record))
    }

    /// Enters the monitor; `REENTRANT == false` refuses (panics) when the
    /// calling thread owns it already.
    #[inline(always)]
    pub(crate) fn enter<const REENTRANT: bool>(&self, ee: &ExecEnv) -> &'static LockRecord {
        match self.try_enter_fast::<REENTRANT>(ee) {
            Some(record) => record,
            None => self.enter_slow::<REENTRANT>(ee),
        }
    }

    /// Enters the monitor if it is free, or ours and `REENTRANT`.
    #[inline]
    pub(crate) fn try_enter<const REENTRANT: bool>(
        &self,
        ee: &ExecEnv,
    ) -> Option<&'static LockRecord> {
        self.try_enter_fast::<REENTRANT>(ee)
            .or_else(|| self.try_enter_slow::<REENTRANT>(ee))
    }

    /// Whether some thread owns the monitor now (a snapshot).
    pub fn is_locked(&self) -> bool {
        self.inspect(|bits| state(bits) == LOCKED)
    }

    /// Whether the calling thread owns the monitor.
    pub fn is_held_by_current_thread(&self) -> bool {
        let ee = ExecEnv::current();
        self.inspect(|bits| owner_is(bits, ee))
    }

    /// Runs `f` on the word's non-BUSY value, taking the meta-lock only when
    /// the word is BUSY.
    fn inspect<R>(&self, f: impl Fn(usize) -> R) -> R {
        // Acquire pairs with the Release of whatever wrote the word, so a
        // record it points at is initialised.
        let bits = self.word.load(Ordering::Acquire);
        if state(bits) != crate::word::BUSY {
            return f(bits);
        }
        let ee = ExecEnv::current();
        let bits = self.get_meta_lock(ee);
        let result = f(bits);
        self.release_meta_lock(ee, bits);
        result
    }

    /// The extra-fast enter: NEUTRAL to LOCKED in one compare-and-swap, or a
    /// recursive enter by the owner without any atomic read-modify-write.
    #[inline(always)]
    fn try_enter_fast<const REENTRANT: bool>(&self, ee: &ExecEnv) -> Option<&'static LockRecord> {
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
            // Usually the monitor is the one last entered: comparing the word
            // with that record's address keeps the count off the chain of
            // reading the record the word points at, then its owner.
            // SAFETY: `ee` is the calling thread's EE.
            let last = unsafe { ee.last_taken_lock_record() };
            let mine = if bits & !(QUEUE_SUMMARY | WAITING_SUMMARY) == last as usize | LOCKED {
                last
            } else if owner_is(bits, ee) {
                record_of(bits)
            } else {
                ptr::null()
            };
            // SAFETY: a LOCKED word pointing at a record of ours means we
            // own the monitor, and it cannot change hands while we do;
            // records live forever.
            if let Some(record) = unsafe { mine.as_ref() } {
                // SAFETY: the count is ours (owner-only field).
                unsafe { record.set_count(record.count() + 1) };
                return Some(record);
            }
            #[cfg(not(metalock_swap_only))]
            if state(bits) == NEUTRAL {
                return self.fused_lock(ee, bits);
            }
            return None;
        }
        #[cfg(not(metalock_swap_only))]
        return self.fused_lock_guessing(ee);
        #[cfg(metalock_swap_only)]
        None
    }

    /// The extra-fast lock without a load first: guesses the word's NEUTRAL
    /// value and compare-and-swaps at once. Under contention a load then a
    /// compare-and-swap moves the cache line twice (profiled: the load's
    /// miss was a fifth of the contended cycles), a compare-and-swap alone
    /// once. The guess is the payload the thread's next free record
    /// displaced last time: right when a thread locks the same object
    /// again, and for every object whose payload is 0 (every
    /// `Synchronized`). A wrong guess fails and returns the word, as the
    /// load would have, and a NEUTRAL word is then tried once more.
    #[cfg(not(metalock_swap_only))]
    #[inline(always)]
    fn fused_lock_guessing(&self, ee: &ExecEnv) -> Option<&'static LockRecord> {
        // SAFETY: `ee` is the calling thread's EE.
        let record = unsafe { ee.peek_lock_record() };
        let guess = record.displaced();
        // AcqRel on success: as in `fused_install`. Acquire on failure: the
        // returned word may point at a record whose owner we read.
        match self.word.compare_exchange(
            guess,
            locked_bits(record),
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => {
                // SAFETY: `record` is still the head of our free list.
                unsafe { ee.take_lock_record(record) };
                count!(ee, extra_fast_hits);
                Some(record)
            }
            Err(bits) if state(bits) == NEUTRAL => self.fused_lock(ee, bits),
            Err(_) => None,
        }
    }

    /// The extra-fast lock (section 5.2): NEUTRAL to LOCKED in one
    /// compare-and-swap from `neutral`, with a pre-initialised record.
    #[cfg(not(metalock_swap_only))]
    #[inline(always)]
    fn fused_lock(&self, ee: &ExecEnv, neutral: usize) -> Option<&'static LockRecord> {
        // SAFETY: `ee` is the calling thread's EE.
        let record = unsafe { ee.peek_lock_record() };
        if !self.fused_install(record, neutral) {
            // The record stays on the free list; its displaced payload is
            // overwritten by the next use.
            return None;
        }
        // SAFETY: `record` is still the head of our free list.
        unsafe { ee.take_lock_record(record) };
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
    /// little) while an owner that nobody queues behind holds the monitor,
    /// in case it leaves soon: a short critical section then costs no sleep
    /// and wake-up, and no meta-lock. Gives up at once when there is a
    /// queue, so that a thread does not spin past threads that already
    /// sleep. Installs `record` if given (a thread re-contending with its
    /// own record), else a fresh one.
    #[cfg(not(metalock_swap_only))]
    fn spin_then_fused_lock(
        &self,
        ee: &ExecEnv,
        record: Option<&'static LockRecord>,
    ) -> Option<&'static LockRecord> {
        // The owner check reads the owner's record, a line the owner writes
        // when it unlocks, so only a thread that may own the monitor looks:
        // one that holds some record and is not re-contending with its own.
        // SAFETY: `ee` is the calling thread's EE.
        let might_own = record.is_none() && unsafe { ee.has_records_out() };
        let mut spin = SpinWait::default();
        loop {
            // Acquire: `owner_is` below reads the record the word points at,
            // which another thread may have just allocated and published
            // with a Release.
            let bits = self.word.load(Ordering::Acquire);
            if state(bits) == NEUTRAL {
                match record {
                    None => {
                        if let Some(record) = self.fused_lock(ee, bits) {
                            return Some(record);
                        }
                    }
                    Some(record) => {
                        if self.fused_install(record, bits) {
                            count!(ee, extra_fast_hits);
                            return Some(record);
                        }
                    }
                }
            } else if state(bits) != LOCKED
                || bits & QUEUE_SUMMARY != 0
                || (might_own && owner_is(bits, ee))
            {
                return None;
            }
            if !spin.spin() {
                return None;
            }
        }
    }

    /// monitorEnter through the meta-lock (Fig. 6, left). Out of line, so
    /// that the extra-fast path inlines into callers.
    #[cfg_attr(not(feature = "meta-lock-only"), cold, inline(never))]
    fn enter_slow<const REENTRANT: bool>(&self, ee: &ExecEnv) -> &'static LockRecord {
        #[cfg(not(metalock_swap_only))]
        if EXTRA_FAST && let Some(record) = self.spin_then_fused_lock(ee, None) {
            return record;
        }
        count!(ee, extra_fast_misses);
        let bits = self.get_meta_lock(ee);
        if state(bits) == LOCKED {
            // SAFETY: a LOCKED word points at the owner's live record.
            let owner = unsafe { &*record_of(bits) };
            if ptr::eq(owner.owner(), ee) {
                self.release_meta_lock(ee, bits);
                assert!(REENTRANT, "{REENTERED}");
                // SAFETY: the count is ours (owner-only field).
                unsafe { owner.set_count(owner.count() + 1) };
                return owner;
            }
        }
        // SAFETY: we hold the meta-lock at `bits`, not owned by us, and `ee`
        // is the calling thread's EE.
        unsafe {
            let record = ee.alloc_lock_record();
            self.acquire_held(ee, record, bits, None)
        }
    }

    /// Makes `record` the owner of a monitor that nobody owns: NEUTRAL to
    /// LOCKED, or WAITERS to LOCKED with `record` in front of the queue.
    /// Releases the meta-lock.
    ///
    /// # Safety
    /// We hold the meta-lock at `bits` (NEUTRAL or WAITERS); `record` is ours
    /// and in no queue.
    unsafe fn install(&self, ee: &ExecEnv, record: &LockRecord, bits: usize) {
        if state(bits) == NEUTRAL {
            record.set_displaced(bits);
            // SAFETY: `record` is in no queue.
            unsafe { record.set_queue(ptr::null_mut()) };
            self.release_meta_lock(ee, locked_bits(record));
        } else {
            debug_assert_eq!(state(bits), WAITERS);
            let first = record_of(bits);
            // SAFETY: we hold the meta-lock; WAITERS points at the head,
            // which holds the displaced payload.
            unsafe {
                record.set_queue(first);
                record.set_displaced((*first).displaced());
            }
            let summaries = QUEUE_SUMMARY | (bits & WAITING_SUMMARY);
            self.release_meta_lock(ee, locked_bits(record) | summaries);
        }
    }

    /// Enters the monitor with `record` (ours, in no queue), starting with
    /// the meta-lock held at `bits`. While another thread owns the monitor
    /// (Fig. 7, monitorEnterSlow), queues the record, sleeps until an exit
    /// invites this thread (which takes the record out of the queue again),
    /// and re-contends like a newcomer. A thread that was invited and lost
    /// counts it in its record's `passed_over`; see `passed_over_too_long`
    /// for when the exit that invites it next hands it the monitor instead.
    /// `invited_at` is `Some` if the caller got here by an invitation: the
    /// time, read before the meta-lock was taken, so that the clock is not
    /// read while others wait for the meta-lock.
    ///
    /// # Safety
    /// We hold the meta-lock at `bits`, which another thread may own but we
    /// do not; `record` is ours and in no queue; `ee` is ours.
    unsafe fn acquire_held(
        &self,
        ee: &ExecEnv,
        record: &'static LockRecord,
        mut bits: usize,
        mut invited_at: Option<Instant>,
    ) -> &'static LockRecord {
        loop {
            if state(bits) != LOCKED {
                // SAFETY: caller's contract; the record is in no queue.
                unsafe {
                    record.set_passed_over(PassedOver::default());
                    self.install(ee, record, bits);
                }
                return record;
            }
            if let Some(now) = invited_at {
                // SAFETY: the record is in no queue, and the meta-lock we
                // hold orders this with the exits that read it once queued.
                unsafe {
                    let passed_over = record.passed_over();
                    record.set_passed_over(PassedOver {
                        since: passed_over.since.or(Some(now)),
                        times: passed_over.times.saturating_add(1),
                    });
                }
                hooks::fire(hooks::HandoffEvent::ContenderPassedOver);
            }
            count!(ee, blocking_enters);
            // SAFETY: we hold the meta-lock; LOCKED points at the head.
            unsafe { append_to_queue(&*record_of(bits), record) };
            // Relaxed: every earlier signal to this thread was already read
            // by it (with Acquire in `await_invitation` or `wait`, or under
            // this meta-lock), so coherence orders this reset after it, and
            // the next signal comes from an exit that sees our record in the
            // queue, under this meta-lock.
            ee.monitor_signal.store(SIGNAL_NONE, Ordering::Relaxed);
            self.release_meta_lock(ee, bits | QUEUE_SUMMARY);
            if self.await_invitation(ee) == SIGNAL_HANDED_OVER {
                return record;
            }
            #[cfg(not(metalock_swap_only))]
            if EXTRA_FAST && self.spin_then_fused_lock(ee, Some(record)).is_some() {
                // SAFETY: the invitation took the record out of the queue.
                unsafe { record.set_passed_over(PassedOver::default()) };
                return record;
            }
            invited_at = Some(platform::get().now());
            bits = self.get_meta_lock(ee);
        }
    }

    /// Sleeps until an exit invites this thread, having taken its record
    /// out of the queue, or hands it the monitor; returns which. No spinning
    /// here: the thread spun before it queued (`spin_then_fused_lock`), and
    /// more spinning only takes the processor from the owner it waits for.
    fn await_invitation(&self, ee: &ExecEnv) -> usize {
        loop {
            // Acquire pairs with the Release store of the inviting exit: the
            // queue change it made is visible.
            let signal = ee.monitor_signal.load(Ordering::Acquire);
            if signal != SIGNAL_NONE {
                return signal;
            }
            ee.parker.park(None);
        }
    }

    /// The non-blocking part of `try_lock`, through the meta-lock.
    #[cold]
    fn try_enter_slow<const REENTRANT: bool>(&self, ee: &ExecEnv) -> Option<&'static LockRecord> {
        count!(ee, extra_fast_misses);
        let bits = self.get_meta_lock(ee);
        if state(bits) != LOCKED {
            // SAFETY: we hold the meta-lock at `bits`, NEUTRAL or WAITERS;
            // the record is fresh; `ee` is ours.
            unsafe {
                let record = ee.alloc_lock_record();
                self.install(ee, record, bits);
                return Some(record);
            }
        }
        // SAFETY: a LOCKED word points at the owner's live record.
        let owner = unsafe { &*record_of(bits) };
        let mine = REENTRANT && ptr::eq(owner.owner(), ee);
        if mine {
            // SAFETY: the count is ours (owner-only field).
            unsafe { owner.set_count(owner.count() + 1) };
        }
        self.release_meta_lock(ee, bits);
        mine.then_some(owner)
    }

    /// Leaves one level of the monitor that `record` owns.
    #[inline(always)]
    fn exit(&self, record: &'static LockRecord) {
        // SAFETY: the guard that calls us lives on the owner's thread.
        let count = unsafe { record.count() };
        if EXTRA_FAST && count > 1 {
            // SAFETY: owner-only field.
            unsafe { record.set_count(count - 1) };
            return;
        }
        #[cfg(not(metalock_swap_only))]
        if EXTRA_FAST {
            // SAFETY: EEs live forever; the owner's thread is calling.
            let ee = unsafe { &*record.owner() };
            // SAFETY: the record is ours and taken back below if the word
            // still refers to it (see `push_lock_record`).
            unsafe { ee.push_lock_record(record) };
            // Release pairs with the Acquire of the next enter; Relaxed on
            // failure, as the slow path re-reads the word under the
            // meta-lock. Fails when a thread queued or the payload changed:
            // the summary bit is set.
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
                // waits for a notification and every enter ends with its
                // `passed_over` cleared: the presets hold.
                // SAFETY: nothing refers to the record any more.
                #[cfg(debug_assertions)]
                unsafe {
                    record.debug_assert_presets()
                };
                count!(ee, extra_fast_hits);
                return;
            }
            // SAFETY: pushed above, no list change since.
            unsafe { ee.take_lock_record(record) };
        }
        self.exit_slow(record);
    }

    /// monitorExit through the meta-lock (Fig. 6 right, Fig. 7 right).
    #[cfg_attr(not(feature = "meta-lock-only"), cold, inline(never))]
    fn exit_slow(&self, record: &'static LockRecord) {
        // SAFETY: EEs live forever; the owner's thread is calling.
        let ee = unsafe { &*record.owner() };
        count!(ee, extra_fast_misses);
        let bits = self.get_meta_lock(ee);
        self.check_owner(ee, bits, record, "unlock");
        // SAFETY: we hold the meta-lock and own the monitor through `record`.
        unsafe {
            let count = record.count();
            if count > 1 {
                record.set_count(count - 1);
                self.release_meta_lock(ee, bits);
                return;
            }
            let mut rest = record.queue();
            match take_first_contender(&mut rest) {
                Some(heir) if passed_over_too_long(heir) => {
                    let waiting = bits & WAITING_SUMMARY;
                    let bits = make_heir(heir, rest, record.displaced(), waiting);
                    self.release_and_signal(ee, bits, heir, SIGNAL_HANDED_OVER);
                }
                invited => {
                    let release = match rest.as_ref() {
                        None => record.displaced(),
                        Some(head) => {
                            head.set_displaced(record.displaced());
                            rest as usize | WAITERS | (bits & WAITING_SUMMARY)
                        }
                    };
                    self.release_and_invite(ee, release, invited);
                }
            }
            ee.recycle_lock_record(record);
        }
    }

    /// monitorExitSlow (Fig. 7, right): releases the meta-lock with
    /// `release_bits` and wakes `invited`, a thread whose record the caller
    /// took out of the queue, to re-contend. Unlike the paper, the invited
    /// thread leaves the queue at once: while it wakes up, the queue may be
    /// empty and the object back to NEUTRAL, so other threads keep the
    /// extra-fast path instead of queueing behind a thread that is not
    /// running yet.
    fn release_and_invite(&self, ee: &ExecEnv, release_bits: usize, invited: Option<&LockRecord>) {
        match invited {
            Some(invited) => self.release_and_signal(ee, release_bits, invited, SIGNAL_INVITED),
            None => self.release_meta_lock(ee, release_bits),
        }
    }

    /// Gives `signal` to the thread of `record`, releases the meta-lock
    /// with `release_bits`, then wakes that thread.
    fn release_and_signal(
        &self,
        ee: &ExecEnv,
        release_bits: usize,
        record: &LockRecord,
        signal: usize,
    ) {
        // SAFETY: EEs live forever.
        let target = unsafe { &*record.owner() };
        // Release pairs with the Acquire loads in `await_invitation` and
        // `wait`.
        target.monitor_signal.store(signal, Ordering::Release);
        self.release_meta_lock(ee, release_bits);
        if signal == SIGNAL_HANDED_OVER {
            count!(ee, hand_overs);
            hooks::fire(hooks::HandoffEvent::MonitorHandedOver);
        }
        target.parker.unpark();
    }

    /// Panics, releasing the meta-lock first, unless `record` owns the
    /// monitor in `bits`. Guards make this impossible from safe code; it
    /// guards the crate's own invariants.
    #[inline]
    fn check_owner(&self, ee: &ExecEnv, bits: usize, record: &LockRecord, op: &str) {
        if state(bits) != LOCKED || !ptr::eq(record_of(bits), record) {
            self.release_meta_lock(ee, bits);
            panic!("metalock: {op} by a thread that does not own the monitor");
        }
    }

    /// monitorWait (Fig. 8, left). Returns whether the deadline passed before
    /// a notification.
    fn wait(&self, record: &'static LockRecord, deadline: Option<Instant>) -> bool {
        // SAFETY: EEs live forever; the owner's thread is calling.
        let ee = unsafe { &*record.owner() };
        count!(ee, waits);
        let bits = self.get_meta_lock(ee);
        self.check_owner(ee, bits, record, "wait");
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
                    self.release_and_signal(ee, bits, heir, SIGNAL_HANDED_OVER);
                }
                invited => self.release_and_invite(
                    ee,
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
        let invited_at = (signal == SIGNAL_INVITED).then(|| platform::get().now());
        let bits = self.get_meta_lock(ee);
        // SAFETY: we hold the meta-lock. An invitation took our record out
        // of the queue (and came only after a notification cleared our
        // flag); otherwise the time ran out and the record is still queued.
        unsafe {
            // Relaxed: written under the meta-lock we hold.
            let signal = ee.monitor_signal.load(Ordering::Relaxed);
            debug_assert_ne!(signal, SIGNAL_HANDED_OVER);
            let timed_out = record.waiting_for_notify();
            record.set_waiting_for_notify(false);
            let (bits, invited_at) = if signal == SIGNAL_INVITED {
                // An invitation that came while we took the meta-lock has
                // no time: this enter does not count as a loss yet.
                (bits, invited_at)
            } else {
                (remove_from_queue(bits, record), None)
            };
            self.acquire_held(ee, record, bits, invited_at);
            timed_out
        }
    }

    /// notifyOneOrAll (Fig. 8, right). Returns how many waiters it marked.
    fn notify(&self, record: &'static LockRecord, all: bool) -> usize {
        // SAFETY: EEs live forever; the owner's thread is calling.
        let ee = unsafe { &*record.owner() };
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
        let bits = self.get_meta_lock(ee);
        self.check_owner(ee, bits, record, "notify");
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
        let release = if marked == waiting {
            bits & !WAITING_SUMMARY
        } else {
            bits
        };
        self.release_meta_lock(ee, release);
        marked
    }
}

/// The panic message of a non-reentrant enter by the owner.
pub(crate) const REENTERED: &str = "metalock: Synchronized::lock called by the thread that \
    already holds it; a Synchronized is not reentrant, because two guards would give two \
    `&mut` to the same value";

/// Whether `bits` is LOCKED by a record of `ee`.
#[inline(always)]
fn owner_is(bits: usize, ee: &ExecEnv) -> bool {
    // SAFETY: a LOCKED word points at a live record; `owner` is immutable.
    state(bits) == LOCKED && ptr::eq(unsafe { (*record_of(bits)).owner() }, ee)
}

/// Appends `record` to the queue headed by `head` (FIFO).
///
/// # Safety
/// The caller holds the meta-lock of the object whose queue `head` heads.
unsafe fn append_to_queue(head: &LockRecord, record: &LockRecord) {
    let record = record as *const LockRecord as *mut LockRecord;
    let mut last = head;
    // SAFETY: caller's contract; queued records live forever.
    unsafe {
        while let Some(next) = last.queue().as_ref() {
            last = next;
        }
        last.set_queue(record);
    }
}

/// Removes `record` from the queue headed by `head`, where it is not first.
///
/// # Safety
/// As for [`append_to_queue`].
unsafe fn unlink_from_queue(head: *mut LockRecord, record: &LockRecord) {
    // SAFETY: caller's contract; queued records live forever.
    unsafe {
        let mut prev = &*head;
        loop {
            let next = prev.queue();
            assert!(
                !next.is_null(),
                "metalock: lock record missing from its queue"
            );
            if ptr::eq(next, record) {
                prev.set_queue(record.queue());
                return;
            }
            prev = &*next;
        }
    }
}

/// wakeupEE: takes the first record of the chain starting at `*first` that
/// waits to enter (rather than for a notification) out of the chain, and
/// returns it; `*first` becomes the chain's new start.
///
/// # Safety
/// As for [`append_to_queue`].
unsafe fn take_first_contender(first: &mut *mut LockRecord) -> Option<&'static LockRecord> {
    let mut prev: Option<&LockRecord> = None;
    let mut q = *first;
    // SAFETY: caller's contract; records live forever.
    unsafe {
        while let Some(r) = q.as_ref() {
            if !r.waiting_for_notify() {
                let next = r.queue();
                match prev {
                    None => *first = next,
                    Some(p) => p.set_queue(next),
                }
                r.set_queue(ptr::null_mut());
                return Some(r);
            }
            prev = Some(r);
            q = r.queue();
        }
    }
    None
}

/// Whether `record`, a contender just taken out of a queue, has lost the
/// monitor to other threads after invitations at least twice, the first
/// time `FAIR_AFTER` ago or more. Under loom the time counts as passed, so
/// that the models see this same rule (a contender passed over once invited
/// again, one passed over twice handed the monitor) without the clock.
///
/// # Safety
/// The caller holds the meta-lock of the object whose queue held `record`.
unsafe fn passed_over_too_long(record: &LockRecord) -> bool {
    // SAFETY: caller's contract (the record's invariant).
    let passed_over = unsafe { record.passed_over() };
    match passed_over.since {
        Some(since) if passed_over.times >= 2 => {
            cfg!(loom) || platform::get().now().saturating_duration_since(since) >= FAIR_AFTER
        }
        _ => false,
    }
}

/// Makes `heir`, a contender taken out of the queue, the owner of a monitor
/// whose exiting owner displaced `displaced`, with `rest` queued behind it;
/// returns the word's new value. `waiting` is the `WAITING_SUMMARY` of
/// `rest`.
///
/// # Safety
/// As for [`passed_over_too_long`]; `rest` is the rest of that queue.
unsafe fn make_heir(
    heir: &LockRecord,
    rest: *mut LockRecord,
    displaced: usize,
    waiting: usize,
) -> usize {
    // SAFETY: caller's contract.
    unsafe {
        heir.set_queue(rest);
        heir.set_displaced(displaced);
        heir.set_passed_over(PassedOver::default());
    }
    let summaries = if rest.is_null() {
        0
    } else {
        QUEUE_SUMMARY | waiting
    };
    locked_bits(heir) | summaries
}

/// Takes `record` out of the queue of a word whose value under the
/// meta-lock is `bits`, and returns the word's new value: a waiter whose
/// time ran out leaves the queue before it re-contends.
///
/// # Safety
/// The caller holds the meta-lock at `bits` (LOCKED by another thread, or
/// WAITERS), and `record` is in the queue.
unsafe fn remove_from_queue(bits: usize, record: &LockRecord) -> usize {
    let head = record_of(bits);
    // SAFETY: caller's contract; records live forever.
    unsafe {
        let bits = if ptr::eq(head, record) {
            debug_assert_eq!(state(bits), WAITERS, "an owner is never queued");
            match record.queue().as_ref() {
                None => record.displaced(),
                Some(next) => {
                    next.set_displaced(record.displaced());
                    next as *const LockRecord as usize | WAITERS | (bits & WAITING_SUMMARY)
                }
            }
        } else {
            unlink_from_queue(head, record);
            bits
        };
        record.set_queue(ptr::null_mut());
        bits
    }
}

/// Whether a timed wait returned because its time ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitTimeoutResult(pub(crate) bool);

impl WaitTimeoutResult {
    /// `true` if the wait ended because the time ran out before a
    /// notification reached this thread.
    #[must_use]
    pub fn timed_out(&self) -> bool {
        self.0
    }
}

/// One level of ownership of a monitor; dropping it leaves that level.
///
/// Dropping happens on every exit from the scope, panics included, so a
/// monitor is never left held by accident (synchronization lifting, paper
/// 004). The guard is neither `Send` nor `Sync`: a monitor belongs to the
/// thread that entered it.
///
/// Invariant: `record` is the calling thread's lock record that owns the
/// monitor of `word`, with a count of at least one level for this guard.
#[must_use = "the monitor is released as soon as the guard is dropped"]
pub struct MonitorGuard<'a> {
    word: &'a MultiUseWord,
    record: &'static LockRecord,
    _not_send_or_sync: PhantomData<*const ()>,
}

impl<'a> MonitorGuard<'a> {
    pub(crate) fn new(word: &'a MultiUseWord, record: &'static LockRecord) -> Self {
        Self {
            word,
            record,
            _not_send_or_sync: PhantomData,
        }
    }

    /// The word this guard holds.
    pub fn word(&self) -> &'a MultiUseWord {
        self.word
    }

    /// How many levels the calling thread holds the monitor at.
    pub fn depth(&self) -> usize {
        // SAFETY: the guard is on the owner's thread.
        unsafe { self.record.count() }
    }

    /// Releases the monitor fully, whatever the depth, blocks until another
    /// thread notifies, then re-enters at the same depth. Like every
    /// condition wait, call it in a loop that re-checks the condition.
    pub fn wait(&mut self) {
        self.word.wait(self.record, None);
    }

    /// As [`wait`](Self::wait), giving up after `timeout`.
    pub fn wait_for(&mut self, timeout: Duration) -> WaitTimeoutResult {
        let deadline = platform::get().now().checked_add(timeout);
        WaitTimeoutResult(self.word.wait(self.record, deadline))
    }

    /// As [`wait`](Self::wait), giving up at `deadline`.
    pub fn wait_until(&mut self, deadline: Instant) -> WaitTimeoutResult {
        WaitTimeoutResult(self.word.wait(self.record, Some(deadline)))
    }

    /// Marks the thread that has waited longest on this monitor as notified;
    /// it returns from its wait once it has the monitor again. Returns
    /// `false` if nobody was waiting: notifications are not remembered.
    pub fn notify_one(&self) -> bool {
        self.word.notify(self.record, false) != 0
    }

    /// Marks every thread waiting on this monitor as notified and returns
    /// how many there were.
    pub fn notify_all(&self) -> usize {
        self.word.notify(self.record, true)
    }
}

impl Drop for MonitorGuard<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.word.exit(self.record);
    }
}

impl core::fmt::Debug for MonitorGuard<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("MonitorGuard")
            .field("depth", &self.depth())
            .finish_non_exhaustive()
    }
}

/// Any type that embeds a [`MultiUseWord`] gets a monitor by implementing
/// this one method.
///
/// ```
/// use metalock::{Monitor, MultiUseWord};
///
/// struct Account {
///     word: MultiUseWord,
///     id: u32,
/// }
///
/// impl Monitor for Account {
///     fn multi_use_word(&self) -> &MultiUseWord {
///         &self.word
///     }
/// }
///
/// let account = Account { word: MultiUseWord::new(), id: 7 };
/// let id = account.synchronized(|guard| {
///     assert_eq!(guard.depth(), 1);
///     account.id
/// });
/// assert_eq!(id, 7);
/// ```
pub trait Monitor {
    /// The word that holds this object's monitor.
    fn multi_use_word(&self) -> &MultiUseWord;

    /// Enters the object's monitor; see [`MultiUseWord::lock`].
    fn lock(&self) -> MonitorGuard<'_> {
        self.multi_use_word().lock()
    }

    /// Enters the object's monitor if it is free or already ours; see
    /// [`MultiUseWord::try_lock`].
    fn try_lock(&self) -> Option<MonitorGuard<'_>> {
        self.multi_use_word().try_lock()
    }

    /// Runs `f` inside the object's monitor, like Java's `synchronized`
    /// block; the monitor is released however `f` ends.
    fn synchronized<R>(&self, f: impl FnOnce(&mut MonitorGuard<'_>) -> R) -> R {
        let mut guard = self.lock();
        f(&mut guard)
    }
}

impl Monitor for MultiUseWord {
    fn multi_use_word(&self) -> &MultiUseWord {
        self
    }
}
