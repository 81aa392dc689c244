//! Each thread's free list of lock records (paper 000, section 5.1): records
//! pre-initialised (owner set, count 1, queue empty), refilled in
//! exponentially growing batches; a thread returns a record to its list when
//! it leaves the monitor.

use core::ptr;

use super::{DETACHED, ExecEnv, NESTED_ALLOCATIONS, RECURSIVE_ALLOCATOR, global};
use crate::lock_record::LockRecord;

/// Records a thread gets the first time its free list runs dry; each further
/// refill doubles. With the EE's hot record, 8 at first.
pub(super) const FIRST_BATCH: usize = 7;

/// How many lock records all threads together have taken from the global
/// allocator so far (the figure of paper 000, Table 2).
///
/// Each thread that synchronizes binds an execution environment with a record
/// of its own and an empty free list; the first batch of 7 comes when it first
/// holds or waits on two monitors at once, and a new batch, twice the last,
/// only when it holds or waits on more monitors at once than it has records
/// (a thread that locks in a thread-local destructor after its exit cleanup
/// gives its free list away and takes records one at a time). Records are
/// recycled through the thread's free list and, when it
/// exits, handed with its environment to the next new thread, on every path a
/// thread can take (exiting normally or by a panic, locking from thread-local
/// destructors, threads started outside Rust). So the figure is at most about 8
/// per thread alive at the same time (1 for a thread that never holds two
/// monitors at once), more for threads that hold many monitors at once (a free
/// list keeps the most records its environment ever needed, for the next thread
/// too), and does not grow with the number of operations or of threads started
/// over time; a thread that exits while holding a monitor (a guard leaked with
/// `mem::forget`) keeps only the records that monitor still uses.
///
/// ```
/// use metalock::{Synchronized, lock_records_allocated};
///
/// let counters: Vec<_> = (0..64).map(Synchronized::new).collect();
/// // One monitor at a time: the thread's records are reused.
/// for counter in &counters {
///     *counter.lock() += 1;
/// }
/// let reused = lock_records_allocated();
/// for counter in &counters {
///     *counter.lock() += 1;
/// }
/// assert_eq!(lock_records_allocated(), reused);
/// // 64 monitors at once: a record for each.
/// let held: Vec<_> = counters.iter().map(|counter| counter.lock()).collect();
/// assert!(lock_records_allocated() >= held.len());
/// ```
pub fn lock_records_allocated() -> usize {
    global::records_allocated()
}

impl ExecEnv {
    /// The EE's hot record (see its field): the one the extra-fast lock
    /// uses when the thread holds no record.
    #[inline(always)]
    pub(crate) fn hot_record(&'static self) -> &'static LockRecord {
        &self.hot_record
    }

    /// Whether `record` is this EE's hot record.
    #[inline(always)]
    fn is_hot(&self, record: &LockRecord) -> bool {
        ptr::eq(record, &self.hot_record)
    }

    /// The record the thread enters its next monitor with, pre-initialised
    /// (owner: this EE, count 1, empty queue, not waiting): the hot record
    /// while the thread holds none, else the first of its free list, left
    /// on the list. The fused lock fills it in and takes it only once its
    /// compare-and-swap succeeded, so that nothing but the displaced payload
    /// is stored before the locked instruction; and a slow path peeks before
    /// it takes a meta-lock, so that it never allocates while holding one.
    ///
    /// # Safety
    /// `self` is the calling thread's EE, and the thread holds no meta-lock
    /// (a refill allocates).
    #[inline(always)]
    pub(crate) unsafe fn peek_lock_record(&'static self) -> &'static LockRecord {
        // SAFETY: caller's contract; past the check `has_records_out` holds,
        // as `peek_free_record` needs.
        unsafe {
            if !self.has_records_out() {
                return &self.hot_record;
            }
            self.peek_free_record()
        }
    }

    /// `peek_lock_record` once `has_records_out` holds (a record out, or the
    /// EE detached): the first of the free list, refilled if empty, without
    /// the look at the count that a nested enter has just made.
    ///
    /// # Safety
    /// `self` is the calling thread's EE, `has_records_out` holds, and the
    /// thread holds no meta-lock (a refill allocates).
    #[inline(always)]
    pub(crate) unsafe fn peek_free_record(&'static self) -> &'static LockRecord {
        // SAFETY: the free list is owned by the calling thread, every record
        // on it lives as long as the EE, and `refill` gets an empty list and
        // no meta-lock held (caller's contract).
        unsafe {
            debug_assert!(self.has_records_out());
            let mut head = self.free_records.with(|h| *h);
            if head.is_null() {
                head = self.refill();
                self.free_records.with_mut(|h| *h = head);
            }
            &*head
        }
    }

    /// Takes `record`, the head of the free list or the hot record, for use.
    ///
    /// # Safety
    /// `self` is the calling thread's EE and `record` came from
    /// `peek_lock_record` or `push_lock_record`, with no list change and no
    /// record taken since.
    #[inline(always)]
    pub(crate) unsafe fn take_lock_record(&self, record: &LockRecord) {
        // SAFETY: caller's contract; thread-owned fields.
        unsafe {
            if self.is_hot(record) {
                self.records_out.with_mut(|n| *n += 1);
                return;
            }
            self.take_free_record(record);
        }
    }

    /// `take_lock_record` of a record known not to be the hot one.
    ///
    /// # Safety
    /// `self` is the calling thread's EE and `record` is the head of its
    /// free list (from a peek, or put back by `push_lock_record`), with no
    /// list change and no record taken since.
    #[inline(always)]
    pub(crate) unsafe fn take_free_record(&self, record: &LockRecord) {
        // SAFETY: caller's contract; thread-owned fields.
        unsafe {
            debug_assert!(ptr::eq(self.free_records.with(|h| *h), record));
            let next = record.free_next();
            self.free_records.with_mut(|h| *h = next);
            self.records_out.with_mut(|n| *n += 1);
            self.last_taken.with_mut(|last| *last = record);
        }
    }

    /// The record last taken from the free list (null before the first, and
    /// after the free list was donated); the hot record does not count.
    ///
    /// # Safety
    /// `self` is the calling thread's EE.
    #[inline(always)]
    pub(crate) unsafe fn last_taken_lock_record(&self) -> *const LockRecord {
        // SAFETY: thread-owned field (caller's contract).
        self.last_taken.with(|last| unsafe { *last })
    }

    /// Puts back a record this thread allocated, restoring its presets.
    /// Returns whether the EE is now detached with no record out, and must
    /// be released (`release_detached`).
    ///
    /// # Safety
    /// `self` is the calling thread's EE and owns `record`, and no word or
    /// queue refers to `record` any more.
    #[inline]
    pub(crate) unsafe fn recycle_lock_record(&self, record: &LockRecord) -> bool {
        // SAFETY: the record is unreachable from any object, so its fields
        // are ours.
        unsafe {
            record.reset_presets();
            self.push_lock_record(record)
        }
    }

    /// Puts `record` on the free list (the hot record: puts it back) without
    /// touching its other fields. Returns whether the EE is now detached
    /// with no record out.
    ///
    /// The fused unlock puts its record back *before* its compare-and-swap
    /// and takes it again (`take_lock_record`) if that fails: measured on
    /// x86-64, a store between an unlock's locked instruction and the next
    /// lock's costs about as much as a third of the pair, one before the
    /// unlock's costs nothing. On another x86-64 (AMD family 26) putting it
    /// back after the compare-and-swap made the uncontended pair 2% cheaper
    /// but, with two to four threads locking back to back, 5-10% slower:
    /// the work between an unlock and the thread's next lock is a window in
    /// which a spinning thread takes the monitor away.
    ///
    /// # Safety
    /// `self` is the calling thread's EE and owns `record`, which is on no
    /// free list. Either no word or queue refers to `record` any more and
    /// its presets hold (count 1, empty queue, not waiting, not passed
    /// over), or the caller takes it back with `take_lock_record` before
    /// anything else on this thread uses the free list.
    #[inline(always)]
    pub(crate) unsafe fn push_lock_record(&self, record: &LockRecord) -> bool {
        debug_assert_eq!(record.owner(), self.as_owner());
        // SAFETY: the free list, the record's link and the counter are owned
        // by the calling thread (caller's contract).
        unsafe {
            if self.is_hot(record) {
                return self.records_out.with_mut(|n| {
                    *n -= 1;
                    *n == DETACHED
                });
            }
            let head = self.free_records.with(|h| *h);
            record.set_free_next(head);
            self.free_records
                .with_mut(|h| *h = record as *const LockRecord as *mut LockRecord);
            self.records_out.with_mut(|n| {
                *n -= 1;
                *n == DETACHED
            })
        }
    }

    /// Keeps the EE counted as holding a record until the returned value
    /// is dropped, while code runs that may lock and unlock monitors on it
    /// (a global allocator, also one the platform calls outside a
    /// meta-lock): a detached EE that holds none would otherwise look idle
    /// to that unlock, and go back to the pool under the operation that
    /// runs the code, for another thread to bind.
    ///
    /// # Safety
    /// `self` is the calling thread's EE, and the value is dropped on this
    /// thread.
    #[inline]
    pub(crate) unsafe fn keep_bound(&self) -> KeepBound<'_> {
        // SAFETY: thread-owned field (caller's contract).
        self.records_out.with_mut(|out| unsafe { *out += 1 });
        KeepBound(self)
    }

    /// [`keep_bound`](Self::keep_bound) if the EE is detached: an attached
    /// EE never goes back to the pool from an unlock.
    ///
    /// # Safety
    /// As for `keep_bound`.
    #[inline(always)]
    pub(crate) unsafe fn keep_bound_if_detached(&self) -> Option<KeepBound<'_>> {
        // SAFETY: thread-owned field (caller's contract).
        if self.records_out.with(|out| unsafe { *out }) >= DETACHED {
            // SAFETY: caller's contract.
            Some(unsafe { self.keep_bound() })
        } else {
            None
        }
    }

    /// Gives every record on the free list to the pool of donated records.
    ///
    /// # Safety
    /// `self` is the calling thread's EE.
    pub(super) unsafe fn donate_free_records(&self) {
        // SAFETY: thread-owned fields (caller's contract).
        unsafe {
            let head = self.free_records.with(|h| *h);
            self.free_records.with_mut(|h| *h = ptr::null_mut());
            // A donated record may become another thread's: it must not
            // pass for ours in a recursive enter.
            self.last_taken.with_mut(|last| *last = ptr::null());
            // The next thread to bind this EE starts small again: were it
            // to take a grown batch from the pool, it would leave other
            // threads nothing to take there, and they would allocate.
            self.next_batch.with_mut(|b| *b = FIRST_BATCH);
            global::donate_records(head);
        }
    }

    /// Fills the empty free list (from donated records if there are any,
    /// else with a new batch) and returns its first record.
    ///
    /// # Safety
    /// `self` is the calling thread's EE, its free list is empty, and the
    /// thread holds no meta-lock.
    #[cold]
    unsafe fn refill(&'static self) -> *mut LockRecord {
        // A detached EE takes one record at a time, and does not grow its
        // batches: its thread may end holding a monitor, and the EE with
        // every record it keeps then stays behind for good.
        // SAFETY: thread-owned field (caller's contract).
        let detached = self.records_out.with(|out| unsafe { *out }) >= DETACHED;
        // Kept bound through the whole refill: taking donated records may
        // wait for the pools' lock in the platform, and allocating calls
        // the allocator, either of which may lock and unlock monitors on
        // this EE; if it is detached and holds nothing else, such an unlock
        // would take it for idle and release it under us.
        // SAFETY: `self` is the calling thread's EE (caller's contract).
        let _kept = unsafe { self.keep_bound() };
        let n = match detached {
            true => 1,
            // SAFETY: thread-owned counter.
            false => self.next_batch.with(|b| unsafe { *b }),
        };
        let (first, last) = match global::take_donated_records(self.as_owner(), n) {
            Some(taken) => taken,
            None => {
                if !detached {
                    // SAFETY: thread-owned counter.
                    self.next_batch
                        .with_mut(|b| unsafe { *b = n.saturating_mul(2) });
                }
                let first = {
                    // SAFETY: as above, and kept bound until this drops.
                    let _allocating = unsafe { self.allocating() };
                    global::allocate_records(self.as_owner(), n)
                };
                count!(self, lock_records_allocated, n);
                // Links through pointers derived from `first` alone, so
                // that no later reference to an element invalidates the
                // pointer the free list keeps (Stacked/Tree Borrows).
                for i in 1..n {
                    // SAFETY: `first` points at `n` fresh records, not
                    // shared yet.
                    unsafe { (*first.add(i - 1)).set_free_next(first.add(i)) };
                }
                // SAFETY: as above; `n` is at least 1.
                (first, unsafe { first.add(n - 1) })
            }
        };
        // A lock in the platform or the allocator may have refilled the
        // list meanwhile: the new records go in front of what it left.
        // SAFETY: thread-owned field; `last` ends the records just taken,
        // which are this thread's alone.
        unsafe {
            let refilled_meanwhile = self.free_records.with(|h| *h);
            (*last).set_free_next(refilled_meanwhile);
        }
        first
    }
}

impl ExecEnv {
    /// Counts an allocation for a lock (a refill of the free list, room in
    /// the keyed overflow table) as in progress on the calling thread until
    /// the returned guard drops, however it ends; stops the process past
    /// [`NESTED_ALLOCATIONS`], where a global allocator that locks for its
    /// own allocations would recurse without end.
    ///
    /// # Safety
    /// `self` is the calling thread's EE, and stays bound to it while the
    /// guard lives.
    pub(crate) unsafe fn allocating(&self) -> Allocating<'_> {
        // SAFETY: thread-owned field (the contract).
        let depth = self.allocating.with(|d| unsafe { *d });
        if depth >= NESTED_ALLOCATIONS {
            crate::sys::abort_with(RECURSIVE_ALLOCATOR);
        }
        // SAFETY: as above.
        self.allocating.with_mut(|d| unsafe { *d = depth + 1 });
        Allocating(self)
    }
}

/// An allocation for a lock in progress on its EE's thread
/// ([`ExecEnv::allocating`]).
#[must_use]
pub(crate) struct Allocating<'a>(&'a ExecEnv);

impl Drop for Allocating<'_> {
    fn drop(&mut self) {
        // SAFETY: thread-owned field; counted up by `allocating` on this
        // thread, whose EE this still is (its contract).
        self.0.allocating.with_mut(|d| unsafe { *d -= 1 });
    }
}

/// An EE kept bound (see [`ExecEnv::keep_bound`]); dropping it, on the
/// EE's thread, ends that, however the code in between ends.
#[must_use]
pub(crate) struct KeepBound<'a>(&'a ExecEnv);

impl Drop for KeepBound<'_> {
    fn drop(&mut self) {
        // SAFETY: thread-owned field; made by `keep_bound` on this thread
        // (its contract).
        self.0.records_out.with_mut(|out| unsafe { *out -= 1 });
    }
}
