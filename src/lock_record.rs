//! Lock records (paper 000, Fig. 3): one thread's participation in one
//! object's synchronization. A record holds the recursion count, the payload
//! displaced from the word, the link of the object's queue and the
//! waiting-for-notify flag. The per-thread free lists that records come from
//! are the execution environment's (see `exec_env`).

use core::ptr;
#[cfg(all(feature = "diagnostics", not(metalock_model)))]
use core::sync::atomic::AtomicUsize as CoreAtomicUsize;

use crate::primitive::{AtomicUsize, Ordering, UnsafeCell};
use crate::sys::Instant;
use crate::word::POINTER_MASK;

/// `LockRecord::wait_state`: the record owns the monitor or waits to enter
/// it as a contender.
pub(crate) const NOT_WAITING: usize = 0;
/// `LockRecord::wait_state`: a waiter that was notified, now in the
/// monitor's queue to enter. Any value above it is the address of the word
/// or condition (at least 4-aligned) whose wait set the record waits in.
pub(crate) const NOTIFIED: usize = 1;

/// One thread's participation in one object's synchronization.
///
/// Invariants:
/// - allocated in batches, or part of an execution environment (its hot
///   record), never returned to the allocator (under loom: not before the
///   model execution that allocated them has ended), so a pointer to a
///   record stays valid; 16-aligned, so a pointer to it leaves
///   the word's four tag bits free;
/// - `owner` is the address of the execution environment whose free list the
///   record belongs to. It changes only while the record is in no queue, in
///   no word and on no free list (donated by a thread that exits while it
///   still holds a monitor, then taken by another thread), and the new owner
///   writes it before it installs the record anywhere. So a thread that reads
///   it through a word it loaded with Acquire sees the owner that installed
///   the record there, or a later one that is not the reader;
/// - `count` is touched only by the owner's thread, and `free_next` too,
///   except by a thread that takes a donated list (which holds it on no
///   other thread's free list) before it makes the records its own;
/// - `queue` links the record in an object's queue of threads waiting to
///   enter, or in the list of a wait table's stripe while the record waits
///   for a notification; it and `wait_state` are touched only under the
///   meta-lock of that object, or the lock of that stripe, or by the owner
///   while the record is in neither;
/// - `last`, while the record heads an object's queue (the owner's record
///   of a LOCKED word, the first of a WAITERS word's) and `queue` is not
///   null, points at the last record of that queue, so that a thread joins
///   the queue without walking it; otherwise it means nothing. It is
///   touched under that object's meta-lock only;
/// - `last_notified`, while the record owns a LOCKED word, is null or the
///   notified waiter that a notify queued last behind it during this hold:
///   in its queue, with only notified waiters and records passed over too
///   long ahead of it, so that the next notify starts its walk there. It is
///   touched under that object's meta-lock (or read by the owner's thread
///   once nothing refers to the record), and is null whenever the record
///   owns no monitor (the owner clears it as it gives the monitor up, under
///   the meta-lock);
/// - `passed_over` is touched under that meta-lock while the record waits in
///   a queue to enter (not while it heads one as the monitor's owner's), or
///   has just been taken out of it by an exit that still holds the meta-lock
///   and has not yet signalled the owner; otherwise only by the owner's
///   thread;
/// - `displaced` is written under that meta-lock, or by the owner before the
///   record is published, or by the owner's thread while the record owns a
///   LOCKED word (`set_payload`), and is atomic so that the owner's fused
///   unlock and the owner's `payload` may read it without the meta-lock (the
///   unlock only uses the value if the word proves nobody else wrote it
///   since). The owner's write may race another thread's under the
///   meta-lock: both store a whole NEUTRAL form that keeps the fair bit, and
///   the other's sets the word's summary bit, so the owner's unlock then
///   reads the displaced form again under the meta-lock.
#[repr(align(16))]
#[derive(Debug)]
pub(crate) struct LockRecord {
    owner: AtomicUsize,
    count: UnsafeCell<usize>,
    displaced: AtomicUsize,
    queue: UnsafeCell<*mut LockRecord>,
    last: UnsafeCell<*mut LockRecord>,
    last_notified: UnsafeCell<*mut LockRecord>,
    /// `NOT_WAITING`, `NOTIFIED`, or the address of the word or condition
    /// the record waits on.
    wait_state: UnsafeCell<usize>,
    /// How a contender has fared after invitations in its current enter.
    passed_over: UnsafeCell<PassedOver>,
    free_next: UnsafeCell<*mut LockRecord>,
    /// Feature `diagnostics`: the address of the word a guard holds through
    /// this record (0 if none) and the depth, written only by the owner's
    /// thread (atomics so that thread dumps may read them), read by thread
    /// dumps.
    #[cfg(all(feature = "diagnostics", not(metalock_model)))]
    pub(crate) diag_word: CoreAtomicUsize,
    #[cfg(all(feature = "diagnostics", not(metalock_model)))]
    pub(crate) diag_depth: CoreAtomicUsize,
}

// SAFETY: records are shared between threads by design (queues, the wait
// table, guards); each `UnsafeCell` field is touched only by the owner's
// thread or under the meta-lock or stripe lock the invariant above names,
// and the rest are atomics.
unsafe impl Sync for LockRecord {}
// SAFETY: as for `Sync`; which thread a record belongs to is its `owner`
// field, not the thread holding a reference.
unsafe impl Send for LockRecord {}

const _: () = assert!(core::mem::align_of::<LockRecord>() > !POINTER_MASK);

/// The lock record a LOCKED or WAITERS word points at.
#[inline(always)]
pub(crate) fn record_of(bits: usize) -> *mut LockRecord {
    (bits & POINTER_MASK) as *mut LockRecord
}

/// `PassedOver::times` of a notified waiter that was woken to re-contend and
/// lost the monitor: it goes back first in the queue (behind the records
/// passed over too long only) and the exit that finds it first hands it the
/// monitor, so that a notified waiter blocks again at most once.
pub(crate) const HAND_OVER_NEXT: u32 = u32::MAX;

/// How often, and since when, a thread invited to re-contend for a monitor
/// lost it to another thread, or was overtaken by notified waiters, during
/// one enter (the eventual-fairness bookkeeping of `monitor`). The preset,
/// `default()`, is never.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PassedOver {
    /// The first such loss.
    pub(crate) since: Option<Instant>,
    /// How many.
    pub(crate) times: u32,
}

impl LockRecord {
    /// A record with its free-list presets (count 1, no queue, not waiting,
    /// never passed over), belonging to the environment at `owner`.
    pub(crate) fn new(owner: usize) -> Self {
        Self {
            owner: AtomicUsize::new(owner),
            count: UnsafeCell::new(1),
            displaced: AtomicUsize::new(0),
            queue: UnsafeCell::new(ptr::null_mut()),
            last: UnsafeCell::new(ptr::null_mut()),
            last_notified: UnsafeCell::new(ptr::null_mut()),
            wait_state: UnsafeCell::new(NOT_WAITING),
            passed_over: UnsafeCell::new(PassedOver::default()),
            free_next: UnsafeCell::new(ptr::null_mut()),
            #[cfg(all(feature = "diagnostics", not(metalock_model)))]
            diag_word: CoreAtomicUsize::new(0),
            #[cfg(all(feature = "diagnostics", not(metalock_model)))]
            diag_depth: CoreAtomicUsize::new(1),
        }
    }

    /// The address of the owner's execution environment.
    #[inline(always)]
    pub(crate) fn owner(&self) -> usize {
        // Relaxed: see the invariant; a reader that needs the owner to be
        // current has ordered the record's installation before its read.
        self.owner.load(Ordering::Relaxed)
    }

    /// Gives the record to another owner: a donated record to the thread that
    /// takes it, or an EE's hot record to the EE once it has its address.
    ///
    /// # Safety
    /// Called by the new owner's thread, which took the record from the pool
    /// of donated records, or before the EE that holds the record is
    /// published: it is in no queue, no word and on no free list.
    pub(crate) unsafe fn set_owner(&self, owner: usize) {
        // Other threads read it through a word this thread publishes later,
        // with Release, once it installs the record. Release here too for
        // the thread dump, which reads records without a word: it pairs
        // with the Acquire of `owner_for_dump`.
        self.owner.store(owner, Ordering::Release);
    }

    /// The owner, read by a thread dump, which reaches the record through
    /// no word: Acquire pairs with `set_owner`'s Release, so that a dump
    /// that sees a new owner sees the old owner's notes cleared (they were,
    /// before the record was donated).
    #[cfg(all(feature = "diagnostics", not(metalock_model)))]
    pub(crate) fn owner_for_dump(&self) -> usize {
        self.owner.load(Ordering::Acquire)
    }

    /// # Safety
    /// Called by the owner's thread (invariant of the type).
    #[inline(always)]
    pub(crate) unsafe fn count(&self) -> usize {
        // SAFETY: the caller is the owner's thread.
        self.count.with(|c| unsafe { *c })
    }

    /// # Safety
    /// Called by the owner's thread (invariant of the type).
    #[inline(always)]
    pub(crate) unsafe fn set_count(&self, count: usize) {
        // SAFETY: the caller is the owner's thread.
        self.count.with_mut(|c| unsafe { *c = count })
    }

    #[inline(always)]
    pub(crate) fn displaced(&self) -> usize {
        // Relaxed: ordered by the meta-lock, or checked by the word's
        // compare-and-swap in the fused unlock.
        self.displaced.load(Ordering::Relaxed)
    }

    /// The displaced form as the user's payload reads it. Acquire pairs with
    /// `publish_displaced`'s Release: the owner's thread reads it without
    /// the meta-lock, and a payload set by the owner's thread without the
    /// meta-lock is read by others under it.
    #[inline]
    pub(crate) fn published_displaced(&self) -> usize {
        self.displaced.load(Ordering::Acquire)
    }

    /// Writes the user's new payload into the displaced form (`set_payload`
    /// while the record owns a LOCKED word or heads a queue). Release pairs with
    /// `published_displaced`'s Acquire.
    #[inline]
    pub(crate) fn publish_displaced(&self, bits: usize) {
        self.displaced.store(bits, Ordering::Release)
    }

    #[inline(always)]
    pub(crate) fn set_displaced(&self, bits: usize) {
        // Relaxed: published by the meta-lock release or the fused lock's
        // Release/Acquire compare-and-swap.
        self.displaced.store(bits, Ordering::Relaxed)
    }

    /// # Safety
    /// As the type's invariant says for `queue`: the meta-lock of the object
    /// whose queue holds `self`, the lock of the stripe whose list does, or
    /// the owner's thread while the record is in neither.
    #[inline]
    pub(crate) unsafe fn queue(&self) -> *mut LockRecord {
        // SAFETY: exclusive access (caller's contract).
        self.queue.with(|q| unsafe { *q })
    }

    /// # Safety
    /// As for [`queue`](Self::queue), or the record is not yet published.
    #[inline]
    pub(crate) unsafe fn set_queue(&self, next: *mut LockRecord) {
        // SAFETY: the meta-lock gives exclusive access.
        self.queue.with_mut(|q| unsafe { *q = next })
    }

    /// The last record of the queue this record heads, if that queue is
    /// not empty (see the type's invariant).
    ///
    /// # Safety
    /// As for [`queue`](Self::queue).
    #[inline]
    pub(crate) unsafe fn last(&self) -> *mut LockRecord {
        // SAFETY: the meta-lock gives exclusive access.
        self.last.with(|l| unsafe { *l })
    }

    /// # Safety
    /// As for [`queue`](Self::queue).
    #[inline]
    pub(crate) unsafe fn set_last(&self, last: *mut LockRecord) {
        // SAFETY: the meta-lock gives exclusive access.
        self.last.with_mut(|l| unsafe { *l = last })
    }

    /// The notified waiter queued last behind this owner in its current
    /// hold, or null (see the type's invariant).
    ///
    /// # Safety
    /// The caller holds the meta-lock of the word this record owns, or the
    /// record is its own (no word or queue refers to it).
    #[inline]
    pub(crate) unsafe fn last_notified(&self) -> *mut LockRecord {
        // SAFETY: the meta-lock, or the record being the caller's alone,
        // gives exclusive access.
        self.last_notified.with(|l| unsafe { *l })
    }

    /// # Safety
    /// The caller holds the meta-lock of the word this record owns.
    #[inline]
    pub(crate) unsafe fn set_last_notified(&self, waiter: *mut LockRecord) {
        // SAFETY: the meta-lock gives exclusive access.
        self.last_notified.with_mut(|l| unsafe { *l = waiter })
    }

    /// # Safety
    /// As for [`queue`](Self::queue).
    #[inline]
    pub(crate) unsafe fn wait_state(&self) -> usize {
        // SAFETY: the meta-lock gives exclusive access.
        self.wait_state.with(|w| unsafe { *w })
    }

    /// # Safety
    /// As for [`queue`](Self::queue).
    #[inline]
    pub(crate) unsafe fn set_wait_state(&self, state: usize) {
        // SAFETY: the meta-lock gives exclusive access.
        self.wait_state.with_mut(|w| unsafe { *w = state })
    }

    /// # Safety
    /// As the type's invariant says for `passed_over`.
    #[inline]
    pub(crate) unsafe fn passed_over(&self) -> PassedOver {
        // SAFETY: exclusive access (caller's contract).
        self.passed_over.with(|p| unsafe { *p })
    }

    /// # Safety
    /// As the type's invariant says for `passed_over`.
    #[inline]
    pub(crate) unsafe fn set_passed_over(&self, passed_over: PassedOver) {
        // SAFETY: exclusive access (caller's contract).
        self.passed_over.with_mut(|p| unsafe { *p = passed_over })
    }

    /// The next record on the owner's free list.
    ///
    /// # Safety
    /// Called by the owner's thread, or by a thread that holds the record on
    /// no free list of any other thread (invariant of the type).
    #[inline(always)]
    pub(crate) unsafe fn free_next(&self) -> *mut LockRecord {
        // SAFETY: caller's contract.
        self.free_next.with(|n| unsafe { *n })
    }

    /// # Safety
    /// As for [`free_next`](Self::free_next).
    #[inline(always)]
    pub(crate) unsafe fn set_free_next(&self, next: *mut LockRecord) {
        // SAFETY: caller's contract.
        self.free_next.with_mut(|n| unsafe { *n = next })
    }

    /// Restores the presets a record on a free list holds (count 1, empty
    /// queue, not waiting, never passed over; `last_notified` is null
    /// already, as the owner cleared it when it gave the monitor up).
    ///
    /// # Safety
    /// Called by the owner's thread, with no word or queue referring to the
    /// record.
    #[inline]
    pub(crate) unsafe fn reset_presets(&self) {
        // SAFETY: caller's contract: the record is ours alone.
        unsafe {
            self.set_count(1);
            self.set_queue(ptr::null_mut());
            self.set_wait_state(NOT_WAITING);
            self.set_passed_over(PassedOver::default());
        }
    }

    /// Checks the presets that a record on the free list must hold.
    ///
    /// # Safety
    /// As for [`reset_presets`](Self::reset_presets).
    #[cfg(all(debug_assertions, not(metalock_swap_only)))]
    pub(crate) unsafe fn debug_assert_presets(&self) {
        // SAFETY: caller's contract: the record is ours alone.
        unsafe {
            debug_assert_eq!(self.count(), 1);
            debug_assert!(self.queue().is_null());
            debug_assert!(self.last_notified().is_null());
            debug_assert_eq!(self.wait_state(), NOT_WAITING);
            debug_assert_eq!(self.passed_over(), PassedOver::default());
        }
    }
}
