//! Lock records (paper 000, Fig. 3) and their per-thread free lists (5.1).
//!
//! A lock record represents one thread synchronizing on one object: it holds
//! the recursion count, the payload displaced from the word, the link of the
//! object's queue and the waiting-for-notify flag. Each thread takes records
//! from its own free list, pre-initialised (owner set, count 1, queue empty),
//! refilled from the global allocator in exponentially growing batches; a
//! thread returns the record to its list when it leaves the monitor.

use core::ptr;

use crate::exec_env::ExecEnv;
use crate::platform::Instant;
use crate::primitive::{AtomicUsize, Ordering, UnsafeCell};

/// Records a thread gets the first time its free list runs dry; each further
/// refill doubles.
pub(crate) const FIRST_BATCH: usize = 8;

/// One thread's participation in one object's synchronization.
///
/// Invariants:
/// - allocated in batches that are never returned to the allocator, so a
///   pointer to a record stays valid forever; 16-aligned, so a pointer to it
///   leaves the word's four tag bits free;
/// - `owner` never changes after allocation;
/// - `count` and `free_next` are touched only by the owner's thread;
/// - `queue` and `waiting_for_notify` are touched only under the meta-lock of
///   the object whose queue holds the record;
/// - `passed_over` is touched under that meta-lock while the record is in a
///   queue, or has just been taken out of it by an exit that still holds the
///   meta-lock and has not yet signalled the owner; otherwise only by the
///   owner's thread;
/// - `displaced` is written under that meta-lock, or by the owner before the
///   record is published, and is atomic so that the owner's fused unlock may
///   read it without the meta-lock (it only uses the value if the word proves
///   nobody wrote it since).
#[repr(align(16))]
#[derive(Debug)]
pub(crate) struct LockRecord {
    owner: *const ExecEnv,
    count: UnsafeCell<usize>,
    displaced: AtomicUsize,
    queue: UnsafeCell<*mut LockRecord>,
    waiting_for_notify: UnsafeCell<bool>,
    /// How a contender has fared after invitations in its current enter.
    passed_over: UnsafeCell<PassedOver>,
    free_next: UnsafeCell<*mut LockRecord>,
}

const _: () = assert!(core::mem::align_of::<LockRecord>() > !crate::word::POINTER_MASK);

/// How often, and since when, a thread invited to re-contend for a monitor
/// lost it to another thread, during one enter (the eventual-fairness
/// bookkeeping of `monitor`). The preset, `default()`, is never.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PassedOver {
    /// The first such loss.
    pub(crate) since: Option<Instant>,
    /// How many.
    pub(crate) times: u32,
}

/// Lock records taken from the global allocator, by all threads (paper 000,
/// Table 2).
static RECORDS_ALLOCATED: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// How many lock records all threads together have taken from the global
/// allocator so far (the figure of paper 000, Table 2). Each thread that
/// synchronizes takes a first batch of 8, and a new batch, twice the last,
/// only when it holds or waits on more monitors at once than it has records;
/// records are recycled through the thread's free list and, when it exits,
/// handed with its execution environment to the next new thread. So the
/// figure is about 8 per thread alive at a time, more for threads that hold
/// many monitors at once, and it does not grow with the number of
/// operations.
pub fn lock_records_allocated() -> usize {
    // Relaxed: a statistic with no data attached.
    RECORDS_ALLOCATED.load(core::sync::atomic::Ordering::Relaxed)
}

impl LockRecord {
    fn new(owner: &ExecEnv) -> Self {
        Self {
            owner,
            count: UnsafeCell::new(1),
            displaced: AtomicUsize::new(0),
            queue: UnsafeCell::new(ptr::null_mut()),
            waiting_for_notify: UnsafeCell::new(false),
            passed_over: UnsafeCell::new(PassedOver::default()),
            free_next: UnsafeCell::new(ptr::null_mut()),
        }
    }

    #[inline(always)]
    pub(crate) fn owner(&self) -> *const ExecEnv {
        self.owner
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

    #[inline(always)]
    pub(crate) fn set_displaced(&self, bits: usize) {
        // Relaxed: published by the meta-lock release or the fused lock's
        // Release/Acquire compare-and-swap.
        self.displaced.store(bits, Ordering::Relaxed)
    }

    /// # Safety
    /// The caller holds the meta-lock of the object whose queue holds `self`.
    #[inline]
    pub(crate) unsafe fn queue(&self) -> *mut LockRecord {
        // SAFETY: the meta-lock gives exclusive access.
        self.queue.with(|q| unsafe { *q })
    }

    /// # Safety
    /// As for [`queue`](Self::queue), or the record is not yet published.
    #[inline]
    pub(crate) unsafe fn set_queue(&self, next: *mut LockRecord) {
        // SAFETY: the meta-lock gives exclusive access.
        self.queue.with_mut(|q| unsafe { *q = next })
    }

    /// # Safety
    /// As for [`queue`](Self::queue).
    #[inline]
    pub(crate) unsafe fn waiting_for_notify(&self) -> bool {
        // SAFETY: the meta-lock gives exclusive access.
        self.waiting_for_notify.with(|w| unsafe { *w })
    }

    /// # Safety
    /// As for [`queue`](Self::queue).
    #[inline]
    pub(crate) unsafe fn set_waiting_for_notify(&self, waiting: bool) {
        // SAFETY: the meta-lock gives exclusive access.
        self.waiting_for_notify
            .with_mut(|w| unsafe { *w = waiting })
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

    /// Checks the presets that a record on the free list must hold.
    ///
    /// # Safety
    /// Called by the owner's thread, with no word or queue referring to the
    /// record.
    #[cfg(all(debug_assertions, not(metalock_swap_only)))]
    pub(crate) unsafe fn debug_assert_presets(&self) {
        // SAFETY: caller's contract: the record is ours alone.
        unsafe {
            debug_assert_eq!(self.count(), 1);
            debug_assert!(self.queue().is_null());
            debug_assert!(!self.waiting_for_notify());
            debug_assert_eq!(self.passed_over(), PassedOver::default());
        }
    }
}

impl ExecEnv {
    /// A pre-initialised lock record from this thread's free list (owner:
    /// this EE, count 1, empty queue, not waiting).
    ///
    /// # Safety
    /// `self` is the calling thread's EE.
    #[inline]
    pub(crate) unsafe fn alloc_lock_record(&self) -> &'static LockRecord {
        // SAFETY: caller's contract.
        unsafe {
            let record = self.peek_lock_record();
            self.take_lock_record(record);
            record
        }
    }

    /// The record `alloc_lock_record` would return, left on the free list:
    /// the fused lock fills it in and takes it only once its
    /// compare-and-swap succeeded, so that nothing but the displaced payload
    /// is stored before the locked instruction.
    ///
    /// # Safety
    /// `self` is the calling thread's EE.
    #[inline(always)]
    pub(crate) unsafe fn peek_lock_record(&self) -> &'static LockRecord {
        // SAFETY: the free list is owned by the calling thread, and every
        // record on it lives forever.
        unsafe {
            let mut head = self.free_records.with(|h| *h);
            if head.is_null() {
                head = self.refill();
                self.free_records.with_mut(|h| *h = head);
            }
            &*head
        }
    }

    /// Takes `record`, the head of the free list, off it.
    ///
    /// # Safety
    /// `self` is the calling thread's EE and `record` came from
    /// `peek_lock_record` with no list change since, or from
    /// `push_lock_record` with no list change since.
    #[inline(always)]
    pub(crate) unsafe fn take_lock_record(&self, record: &LockRecord) {
        // SAFETY: caller's contract; thread-owned fields.
        unsafe {
            debug_assert!(ptr::eq(self.free_records.with(|h| *h), record));
            let next = record.free_next.with(|n| *n);
            self.free_records.with_mut(|h| *h = next);
            self.records_out.with_mut(|n| *n += 1);
            self.last_taken.with_mut(|last| *last = record);
        }
    }

    /// The record last taken from the free list (null before the first).
    ///
    /// # Safety
    /// `self` is the calling thread's EE.
    #[inline(always)]
    pub(crate) unsafe fn last_taken_lock_record(&self) -> *const LockRecord {
        // SAFETY: thread-owned field (caller's contract).
        self.last_taken.with(|last| unsafe { *last })
    }

    /// Puts back a record this thread allocated, restoring its presets.
    ///
    /// # Safety
    /// `self` is the calling thread's EE and owns `record`, and no word or
    /// queue refers to `record` any more.
    #[inline]
    pub(crate) unsafe fn recycle_lock_record(&self, record: &LockRecord) {
        // SAFETY: the record is unreachable from any object, so its fields
        // are ours.
        unsafe {
            record.set_count(1);
            record.set_queue(ptr::null_mut());
            record.set_waiting_for_notify(false);
            record.set_passed_over(PassedOver::default());
            self.push_lock_record(record);
        }
    }

    /// Puts `record` on the free list without touching its other fields.
    ///
    /// The fused unlock puts its record back *before* its compare-and-swap
    /// and takes it again (`take_lock_record`) if that fails: measured on
    /// x86-64, a store between an unlock's locked instruction and the next
    /// lock's costs about as much as a third of the pair, one before the
    /// unlock's costs nothing.
    ///
    /// # Safety
    /// `self` is the calling thread's EE and owns `record`, which is on no
    /// free list. Either no word or queue refers to `record` any more and
    /// its presets hold (count 1, empty queue, not waiting, not passed
    /// over), or the caller takes it back with `take_lock_record` before
    /// anything else on this thread uses the free list.
    #[inline(always)]
    pub(crate) unsafe fn push_lock_record(&self, record: &LockRecord) {
        debug_assert!(ptr::eq(record.owner, self));
        // SAFETY: the free list, the record's link and the counter are owned
        // by the calling thread (caller's contract).
        unsafe {
            let head = self.free_records.with(|h| *h);
            record.free_next.with_mut(|n| *n = head);
            self.free_records
                .with_mut(|h| *h = record as *const LockRecord as *mut LockRecord);
            self.records_out.with_mut(|n| *n -= 1);
        }
    }

    /// Allocates the next batch and returns its first record.
    ///
    /// # Safety
    /// `self` is the calling thread's EE.
    #[cold]
    unsafe fn refill(&self) -> *mut LockRecord {
        // SAFETY: thread-owned counter.
        let n = self.next_batch.with(|b| unsafe { *b });
        // SAFETY: thread-owned counter.
        self.next_batch
            .with_mut(|b| unsafe { *b = n.saturating_mul(2) });
        let first = alloc::vec::Vec::leak(
            (0..n)
                .map(|_| LockRecord::new(self))
                .collect::<alloc::vec::Vec<_>>(),
        )
        .as_mut_ptr();
        // Under the global lock because the count must not depend on a
        // read-modify-write instruction (the swap-only backend has none);
        // Relaxed: a statistic with no data attached.
        crate::exec_env::with_global_lock(|| {
            let total = RECORDS_ALLOCATED.load(core::sync::atomic::Ordering::Relaxed);
            RECORDS_ALLOCATED.store(total + n, core::sync::atomic::Ordering::Relaxed);
        });
        count!(self, lock_records_allocated, n);
        // Links through pointers derived from `first` alone, so that no
        // later reference to an element invalidates the pointer the free
        // list keeps (Stacked/Tree Borrows).
        for i in 1..n {
            // SAFETY: `first` points at `n` fresh records, not shared yet.
            unsafe {
                let next = first.add(i);
                (*first.add(i - 1)).free_next.with_mut(|p| *p = next);
            }
        }
        first
    }
}
