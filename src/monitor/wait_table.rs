//! Where waiting threads wait: a fixed table of stripes, each a small
//! blocking lock over a FIFO list of the lock records of the threads that
//! wait on a monitor's own wait set or on a condition, keyed by the address
//! of the word or the condition (as parking_lot hashes an address to a
//! bucket).
//!
//! Waiters stay out of the monitor's queue, which holds only the threads
//! that wait to enter: while threads wait for a notification, the monitor's
//! word can still be NEUTRAL and its uncontended lock and unlock keep their
//! single compare-and-swap. A notify moves a waiter's record from its stripe
//! into the monitor's queue.
//!
//! Lock order: stripe, then meta-lock. No thread waits for a stripe while it
//! holds a meta-lock or another stripe; code the crate runs there that asks
//! for one stops the process with a message.

use core::ptr;

use crossbeam_utils::CachePadded;

use crate::exec_env::ExecEnv;
use crate::lock_record::{LockRecord, NOT_WAITING};
use crate::primitive::{AtomicUsize, Ordering, SysMutex};

/// What a thread that asks for a stripe while it holds one, or a meta-lock,
/// stops with.
const NESTED: &str = "metalock: a thread asked for a wait-table stripe while it holds one or a \
    meta-lock (code that the crate runs while it waits or notifies, a global allocator or a \
    platform callback, waited on or notified a metalock monitor or condition): it could wait \
    for itself forever";

/// The waiting records of one stripe, oldest first, linked through their
/// `queue` field.
///
/// Invariant: every record in the list has `wait_state` equal to the key
/// it waits on, and its thread is inside a wait that borrows the monitor
/// (so the monitor is alive while its record is here).
#[derive(Debug)]
pub(super) struct WaitList {
    head: *mut LockRecord,
    tail: *mut LockRecord,
    len: usize,
}

// SAFETY: the records belong to waiting threads and are only touched under
// the stripe's lock, which hands the list to one thread at a time.
unsafe impl Send for WaitList {}

/// One stripe: its lock and a count of the records in its list, readable
/// without the lock.
///
/// Invariant: `waiting` equals the list's `len`, and is only stored to,
/// under the lock (never read-modify-written: loom's exploration sees a
/// store race a reader's load only when the writer does not load it first).
#[derive(Debug)]
pub(super) struct Stripe {
    list: SysMutex<WaitList>,
    waiting: AtomicUsize,
}

impl Stripe {
    #[cfg(not(metalock_model))]
    const fn new() -> Self {
        Self {
            list: SysMutex::new(WaitList {
                head: ptr::null_mut(),
                tail: ptr::null_mut(),
                len: 0,
            }),
            waiting: AtomicUsize::new(0),
        }
    }

    #[cfg(metalock_model)]
    fn new() -> Self {
        Self {
            list: SysMutex::new(WaitList {
                head: ptr::null_mut(),
                tail: ptr::null_mut(),
                len: 0,
            }),
            waiting: AtomicUsize::new(0),
        }
    }

    /// Whether some record may wait in this stripe: one load, for a notify
    /// that may have nobody to reach. A record that started waiting before
    /// the caller last synchronized with it (through the monitor) is seen:
    /// a waiter is counted before it releases the monitor.
    #[inline]
    pub(super) fn may_have_waiters(&self) -> bool {
        // Relaxed: a waiter's count is stored before it releases the
        // monitor, so a caller ordered after that release (through the
        // monitor) reads that count or a later one (coherence), which still
        // counts the waiter unless it left. Nothing is read on the strength
        // of this load: a non-zero count leads to the stripe's lock.
        self.waiting.load(Ordering::Relaxed) != 0
    }

    /// Runs `f` with the stripe's lock held, on the thread of `ee`; stops
    /// the process if that thread holds a stripe or a meta-lock already
    /// (code that the crate runs there, a platform callback or a global
    /// allocator, waited or notified).
    ///
    /// # Safety
    /// `ee` is the calling thread's EE: its flags are read and written as
    /// the thread's own.
    pub(super) unsafe fn with<R>(&self, ee: &ExecEnv, f: impl FnOnce(&mut Waiting<'_>) -> R) -> R {
        // SAFETY: thread-owned fields of the calling thread's EE (the
        // caller's contract).
        let nested = ee.stripe_held.with(|held| unsafe { *held })
            || ee.meta_lock_held.with(|held| unsafe { *held }) != 0;
        if nested {
            crate::sys::abort_with(NESTED);
        }
        /// Clears the flag on every way out, an unwind included (see
        /// `SysMutex::with`).
        struct Held<'a>(&'a ExecEnv);

        impl Drop for Held<'_> {
            fn drop(&mut self) {
                // SAFETY: a thread-owned field, dropped on its thread.
                self.0.stripe_held.with_mut(|held| unsafe { *held = false });
            }
        }

        // SAFETY: as above.
        ee.stripe_held.with_mut(|held| unsafe { *held = true });
        let _held = Held(ee);
        self.list.with(|list| {
            f(&mut Waiting {
                list,
                waiting: &self.waiting,
            })
        })
    }
}

/// A stripe's list, locked.
pub(super) struct Waiting<'a> {
    list: &'a mut WaitList,
    waiting: &'a AtomicUsize,
}

impl Waiting<'_> {
    fn count(&mut self, delta: isize) {
        self.list.len = self.list.len.wrapping_add_signed(delta);
        // Relaxed: read under the lock, or by `may_have_waiters` (see
        // there).
        self.waiting.store(self.list.len, Ordering::Relaxed);
    }

    /// Whether one record waits in this stripe, whatever its key.
    pub(super) fn is_alone(&self) -> bool {
        self.list.len == 1
    }

    /// Adds `record`, which waits on `key`, at the end of the list.
    ///
    /// # Safety
    /// `record` is the calling thread's and in no list, and in no queue but
    /// the one whose meta-lock the caller holds and releases next without
    /// reading the record's link; its thread waits (borrowing the monitor)
    /// until it leaves the list.
    pub(super) unsafe fn push(&mut self, record: &LockRecord, key: usize) {
        let record = record as *const LockRecord as *mut LockRecord;
        // SAFETY: caller's contract; the list's records are ours to link
        // under the lock.
        unsafe {
            (*record).set_wait_state(key);
            (*record).set_queue(ptr::null_mut());
            match self.list.tail.as_ref() {
                None => self.list.head = record,
                Some(tail) => tail.set_queue(record),
            }
        }
        self.list.tail = record;
        self.count(1);
    }

    /// Takes the record that has waited longest on `key` out of the list.
    pub(super) fn take_oldest(&mut self, key: usize) -> Option<&'static LockRecord> {
        let mut prev: *mut LockRecord = ptr::null_mut();
        let mut q = self.list.head;
        // SAFETY: the list's records are live (records outlive every list
        // and queue) and ours under the lock.
        unsafe {
            while let Some(r) = q.as_ref() {
                if r.wait_state() == key {
                    self.unlink(prev, r);
                    return Some(r);
                }
                prev = q;
                q = r.queue();
            }
        }
        None
    }

    /// Takes `record` out of the list if it is still there: it still waits,
    /// not yet moved out by a notify. Whether it was.
    ///
    /// Only the list's links are read: once a notify moved the record into
    /// a monitor's queue, its own fields are that monitor's.
    pub(super) fn remove(&mut self, record: &LockRecord) -> bool {
        let mut prev: *mut LockRecord = ptr::null_mut();
        let mut q = self.list.head;
        // SAFETY: as in `take_oldest`.
        unsafe {
            while let Some(r) = q.as_ref() {
                if ptr::eq(r, record) {
                    self.unlink(prev, r);
                    return true;
                }
                prev = q;
                q = r.queue();
            }
        }
        false
    }

    /// Calls `f` on the records that wait on `key`, oldest first: the
    /// first `most` of them, those that `take_oldest` would take next.
    #[cfg(all(feature = "diagnostics", not(metalock_model)))]
    pub(super) fn for_oldest(&self, key: usize, most: usize, f: impl FnMut(&LockRecord)) {
        self.waiting_on(key).take(most).for_each(f);
    }

    /// Whether some record waits on `key`.
    pub(super) fn has(&self, key: usize) -> bool {
        self.waiting_on(key).next().is_some()
    }

    /// How many records wait on `key`.
    pub(super) fn count_of(&self, key: usize) -> usize {
        self.waiting_on(key).count()
    }

    /// The records that wait on `key`, oldest first.
    fn waiting_on(&self, key: usize) -> impl Iterator<Item = &LockRecord> {
        // SAFETY: the list's records are live (records outlive every list
        // and queue), and their links and keys ours to read under the lock,
        // which `&self` holds while the iterator lives.
        let next = |record: &&LockRecord| unsafe { record.queue().as_ref() };
        // SAFETY: as `next`.
        let waits_on_key = move |record: &&LockRecord| unsafe { record.wait_state() } == key;
        // SAFETY: as `next`.
        core::iter::successors(unsafe { self.list.head.as_ref() }, next).filter(waits_on_key)
    }

    /// Unlinks `record`, which follows `prev` (null: it is the head); it no
    /// longer waits.
    ///
    /// # Safety
    /// `record` is in the list, right after `prev`.
    unsafe fn unlink(&mut self, prev: *mut LockRecord, record: &LockRecord) {
        // SAFETY: caller's contract; records are ours under the lock.
        unsafe {
            let next = record.queue();
            match prev.as_ref() {
                None => self.list.head = next,
                Some(prev) => prev.set_queue(next),
            }
            if ptr::eq(self.list.tail, record) {
                self.list.tail = prev;
            }
            record.set_queue(ptr::null_mut());
            record.set_wait_state(NOT_WAITING);
        }
        self.count(-1);
    }
}

/// Runs `f` on how many threads wait on the word or condition at `address`
/// now: under the stripe's lock when some thread may wait in that stripe
/// (so `f` may check, under a meta-lock, which monitor those waiters wait
/// in), else after one load, on 0. Stops the process, as `Stripe::with`,
/// if the calling thread holds a stripe or a meta-lock and must take the
/// stripe.
pub(super) fn with_waiting_on<R>(address: usize, condition: bool, f: impl FnOnce(usize) -> R) -> R {
    read_waiters_of(
        address,
        condition,
        0,
        |waiting, key| waiting.count_of(key),
        f,
    )
}

/// `with_waiting_on` on whether any thread waits there, the walk stopping
/// at the first.
pub(super) fn with_any_waiting_on<R>(
    address: usize,
    condition: bool,
    f: impl FnOnce(bool) -> R,
) -> R {
    read_waiters_of(
        address,
        condition,
        false,
        |waiting, key| waiting.has(key),
        f,
    )
}

/// Runs `f` on `read` of the waiters of `address`, under the stripe's lock
/// when some thread may wait in that stripe, else on `none`.
fn read_waiters_of<T, R>(
    address: usize,
    condition: bool,
    none: T,
    read: impl FnOnce(&Waiting<'_>, usize) -> T,
    f: impl FnOnce(T) -> R,
) -> R {
    let stripe = stripe(address, condition);
    if !stripe.may_have_waiters() {
        return f(none);
    }
    ExecEnv::with_current(|ee| {
        // SAFETY: `ee` is the calling thread's (`with_current`).
        unsafe { stripe.with(ee, |waiting| f(read(waiting, address))) }
    })
}

/// The stripe of the word or condition at `address` (`condition` says
/// which).
#[cfg(not(metalock_model))]
pub(super) fn stripe(address: usize, condition: bool) -> &'static Stripe {
    let _ = condition;
    // The policy's hash, in 64 bits on every target: a `usize` product
    // truncated the constant on 32-bit ones, and a shift by 3 dropped a
    // significant bit of their 4-aligned words.
    &STRIPES[super::slot_of(address, STRIPE_COUNT)]
}

/// Under the model checkers, the stripes are taken in the order in which an
/// execution first uses its words and conditions (the stripe of an address
/// must not differ between a model's executions, where allocations land at
/// different addresses), so that a user's model of distinct objects meets
/// distinct stripes, as a real run mostly does. The crate's own models keep
/// one stripe for the words' own wait sets and two for the conditions', in
/// turn (`words_share_a_stripe`): a condition's waits and notifies still
/// run beside the monitor's own, and beside another condition's; or every
/// word and condition in one (`share_one_stripe`).
#[cfg(metalock_model)]
pub(super) fn stripe(address: usize, condition: bool) -> &'static Stripe {
    use std::sync::atomic::Ordering::Relaxed;
    let table = &*STRIPES;
    // Relaxed (both flags): set by the execution's own thread before any
    // stripe is used; the checker does not see them.
    let words_in_one = table.words_in_one.load(Relaxed);
    if table.one_stripe.load(Relaxed) || (words_in_one && !condition) {
        return &table.stripes[0];
    }
    let nth = crate::primitive::first_use(&table.seen, address);
    if words_in_one {
        &table.stripes[1 + nth % 2]
    } else {
        &table.stripes[nth % STRIPE_COUNT]
    }
}

/// How many stripes; a power of two outside the models. Words and
/// conditions that share a stripe serialize their waits and notifies, and
/// a notify walks past the other keys' waiters in its stripe's list: with
/// thousands of waiting threads, 64 stripes made a `notify_one` 2.6-3.9x
/// parking_lot's (8,000 waiters on as many monitors, 2.4-3.3 µs), 1,024
/// about as fast as parking_lot's (0.91-1.18x, `examples/long_queues.rs`).
/// Hosted, 1,024 (128 KiB on x86-64, touched only where used, as the keyed
/// homes); without `std`, where memory may be scarce and threads few, 64.
#[cfg(all(not(metalock_model), feature = "std"))]
const STRIPE_COUNT: usize = 1024;
#[cfg(all(not(metalock_model), not(feature = "std")))]
const STRIPE_COUNT: usize = 64;
#[cfg(metalock_model)]
const STRIPE_COUNT: usize = 3;

#[cfg(not(metalock_model))]
static STRIPES: [CachePadded<Stripe>; STRIPE_COUNT] =
    [const { CachePadded::new(Stripe::new()) }; STRIPE_COUNT];

/// Under the model checkers, forgets the condition at `address`, dropped:
/// its place in the order of first use stays taken.
#[cfg(metalock_model)]
pub(super) fn forget_condition(address: usize) {
    let mut seen = STRIPES.seen.lock().unwrap();
    if let Some(used) = seen.iter_mut().find(|used| **used == address) {
        // No word or condition is at address 0.
        *used = 0;
    }
}

/// One model execution's stripes, and the addresses it has used them for,
/// in order (with `words_in_one`, the conditions' only): one static, so
/// that finding a condition's stripe orders nothing that finding a word's
/// does not.
#[cfg(metalock_model)]
struct ModelStripes {
    stripes: std::vec::Vec<CachePadded<Stripe>>,
    seen: std::sync::Mutex<std::vec::Vec<usize>>,
    /// Every word and condition in stripe 0 ([`share_one_stripe`]).
    one_stripe: std::sync::atomic::AtomicBool,
    /// Every word in stripe 0, conditions in 1 and 2
    /// ([`words_share_a_stripe`]).
    words_in_one: std::sync::atomic::AtomicBool,
}

#[cfg(metalock_model)]
crate::primitive::lazy_static! {
    static ref STRIPES: ModelStripes = ModelStripes {
        stripes: (0..STRIPE_COUNT).map(|_| CachePadded::new(Stripe::new())).collect(),
        seen: std::sync::Mutex::new(std::vec::Vec::new()),
        one_stripe: std::sync::atomic::AtomicBool::new(false),
        words_in_one: std::sync::atomic::AtomicBool::new(false),
    };
}

/// Creates this execution's stripes (`model::start_execution`).
#[cfg(loom)]
pub(super) fn create_stripes() {
    let _ = core::ops::Deref::deref(&STRIPES);
}

/// Under the model checkers, puts every word of the current execution in
/// one stripe and its conditions in two others, in turn, as the crate's
/// own models run: waits on several words meet in one stripe's list.
/// Called at the start of an execution, before any wait.
#[cfg(all(metalock_model, feature = "__test-hooks"))]
pub fn words_share_a_stripe() {
    // Relaxed: see `stripe`.
    STRIPES
        .words_in_one
        .store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Under the model checkers, puts every word and condition of the current
/// execution in one stripe, as the stripes do now and then outside them: a
/// stripe's list then holds waiters of other keys, which its walks must
/// pass over. Called at the start of an execution, before any wait.
#[cfg(all(metalock_model, feature = "__test-hooks"))]
pub fn share_one_stripe() {
    // Relaxed: see `stripe`.
    STRIPES
        .one_stripe
        .store(true, std::sync::atomic::Ordering::Relaxed);
}

#[cfg(all(test, not(metalock_model)))]
mod tests {
    use super::*;

    /// A stripe's list holds the waiters of several keys (words and
    /// conditions hash together): its walks count, find and take each key's
    /// own, whatever sits between them.
    #[test]
    fn walks_pass_over_other_keys_waiters() {
        let records: [LockRecord; 4] = core::array::from_fn(|_| LockRecord::new(0));
        let mut list = WaitList {
            head: ptr::null_mut(),
            tail: ptr::null_mut(),
            len: 0,
        };
        let count = AtomicUsize::new(0);
        let mut waiting = Waiting {
            list: &mut list,
            waiting: &count,
        };
        let (word, condition, nobody) = (0x1000, 0x2008, 0x3010);
        for (record, key) in records.iter().zip([word, condition, word, condition]) {
            // SAFETY: the records are this test's, in no list or queue, and
            // no thread waits on them.
            unsafe { waiting.push(record, key) };
        }
        assert_eq!(waiting.count_of(word), 2);
        assert_eq!(waiting.count_of(condition), 2);
        assert_eq!(waiting.count_of(nobody), 0);
        assert!(!waiting.has(nobody));
        let oldest = waiting.take_oldest(condition).unwrap();
        assert!(ptr::eq(oldest, &records[1]));
        assert!(waiting.remove(&records[2]));
        assert_eq!(
            (waiting.count_of(word), waiting.count_of(condition)),
            (1, 1)
        );
        assert_eq!(count.load(Ordering::Relaxed), 2);
    }
}
