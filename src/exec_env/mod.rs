//! Execution environments: the per-thread state of the algorithm (paper 000,
//! Fig. 1).
//!
//! # Ownership protocol
//!
//! An execution environment (EE) is bound to one thread at a time. Its fields
//! fall in three groups:
//!
//! - *hand-off fields* (`handoff`, `meta_lock_bits`, `got_meta_lock_slow`),
//!   atomics shared with the thread's meta-lock predecessor and successor
//!   (see `meta_lock`);
//! - *monitor fields* (`monitor_signal`, `wake_stamp`, `parker`), written
//!   by threads that wake this one;
//! - *thread-owned fields* (the lock-record free list and its counters), only
//!   ever touched by the bound thread.
//!
//! # Lifetime
//!
//! A BUSY word, a hand-off partner or a lock record may name an EE after its
//! thread has moved on, so EEs are never freed (under loom: not before the
//! model execution ends, see `global`). When a thread exits, its EE goes
//! back to a global pool with its free list of lock records, and the next
//! new thread takes it from there.
//!
//! A thread may still synchronize after its exit cleanup ran: a thread-local
//! destructor that runs later locks a monitor, or releases a guard it kept.
//! Its EE is then *detached*: nothing at the thread's end will give it back,
//! so the thread gives it back itself as soon as it holds no lock record
//! (the unlock that returns the last record, or the end of an operation that
//! took none), and binds one again from the pool if it synchronizes once
//! more. A thread that exits while it holds a monitor (a guard leaked with
//! `mem::forget`) keeps its EE detached for good, because a record in some
//! word names it as owner and another thread must not inherit that monitor.
//! So an EE gives its free records to a global pool as it detaches (at the
//! exit cleanup, or bound after it), and only the EE and the records still
//! out stay behind.

mod binding;
#[cfg(all(feature = "stats", not(metalock_model)))]
pub(crate) mod counters;
#[cfg(all(feature = "diagnostics", not(metalock_model)))]
pub(crate) mod diag;
mod free_list;
mod global;
#[cfg(feature = "std")]
pub(crate) mod interrupt;

/// Without `std` no thread can be interrupted: no value of this type exists,
/// and the waits take `None`.
#[cfg(not(feature = "std"))]
pub(crate) mod interrupt {
    use super::ExecEnv;

    #[derive(Debug)]
    pub(crate) enum Interrupt {}

    impl Interrupt {
        pub(crate) fn is_pending(&self) -> bool {
            match *self {}
        }

        pub(crate) fn take(&self) -> bool {
            match *self {}
        }

        pub(crate) fn sleep_as(&self, _: &'static ExecEnv) -> ((), bool) {
            match *self {}
        }
    }
}

use crossbeam_utils::CachePadded;

use crate::lock_record::LockRecord;
#[cfg(not(metalock_swap_only))]
use crate::primitive::AtomicBool;
#[cfg(not(metalock_model))]
use crate::primitive::AtomicU32;
use crate::primitive::{AtomicUsize, Parker, UnsafeCell};
#[cfg(not(metalock_swap_only))]
use crate::word::BUSY;
use crate::word::POINTER_MASK;

#[cfg(all(metalock_model, feature = "__test-hooks"))]
pub use binding::end_thread;
#[cfg(all(not(feature = "std"), not(metalock_model)))]
pub use binding::release_current_thread;
pub use free_list::lock_records_allocated;
#[cfg(all(any(feature = "stats", feature = "diagnostics"), not(metalock_model)))]
pub(crate) use global::all_envs;
#[cfg(loom)]
pub(crate) use global::create_model_statics;
#[cfg(feature = "__test-hooks")]
pub use global::exec_envs_allocated;
#[cfg(all(feature = "diagnostics", not(metalock_model)))]
pub(crate) use global::for_each_batched_record;
#[cfg(all(metalock_model, feature = "__test-hooks"))]
pub use global::{donated_records_taken, model_thread_exits, stale_wakeups_taken};

/// Whether the calling thread has an execution environment bound. Not part
/// of the API.
#[cfg(feature = "__test-hooks")]
pub fn thread_has_exec_env() -> bool {
    thread_exec_env().is_some()
}

/// The address of the calling thread's execution environment, if it has
/// one bound: a thread that gets the same address as one before it reuses
/// that thread's EE. Not part of the API.
#[cfg(feature = "__test-hooks")]
pub fn thread_exec_env() -> Option<usize> {
    ExecEnv::current_if_bound().map(ExecEnv::as_owner)
}

/// A thread's parker, for a model to unpark with no reason, as a wake-up
/// that outlived its reason does: wherever the thread parks next, it must
/// take the token as spurious. Not part of the API.
#[cfg(all(metalock_model, feature = "__test-hooks"))]
#[derive(Clone, Copy, Debug)]
pub struct StrayUnpark(&'static ExecEnv);

#[cfg(all(metalock_model, feature = "__test-hooks"))]
impl StrayUnpark {
    /// The calling thread's parker (its EE is bound if it had none).
    pub fn of_current_thread() -> Self {
        Self(ExecEnv::current())
    }

    /// Makes a token available to the thread, waking it if it is parked.
    pub fn unpark(self) {
        self.0.parker.unpark();
    }

    /// Whether the token is still pending, read without the checker seeing
    /// the read.
    pub fn pending(self) -> bool {
        self.0.parker.unpark_pending_unseen()
    }
}

/// `monitor_signal`: nothing since the thread last queued or started a wait.
pub(crate) const SIGNAL_NONE: usize = 0;
/// `monitor_signal`: an exit took the thread's record out of the queue and
/// invites it to re-contend.
pub(crate) const SIGNAL_INVITED: usize = 1;
/// `monitor_signal`: an exit made the thread's record the owner.
pub(crate) const SIGNAL_HANDED_OVER: usize = 2;

/// How deep a thread's allocations for the crate (an EE when it binds one;
/// lock records when it refills its free list, room in the keyed overflow
/// table) may run inside one another.
/// A global allocator that locks monitors runs a lock inside such an
/// allocation, and that lock may allocate once more; a third level means
/// the allocator locks for its own allocations too, and each would ask
/// for the next without end (a stack overflow, or a batch size that
/// overflows), so the crate stops there with a message.
const NESTED_ALLOCATIONS: u8 = 2;

/// Why the process stops when a thread's allocations of lock records or of
/// keyed overflow room run past [`NESTED_ALLOCATIONS`].
const RECURSIVE_ALLOCATOR: &str = "metalock: a global allocator locked a monitor while it \
    allocated for a lock it had taken itself (lock records, or room in the keyed overflow \
    table), so that each allocation asked for the next without end: an allocator that locks \
    monitors must not lock them again while it runs for its own lock (guard it with a \
    thread-local flag)";

/// Why the process stops when binding an EE runs past
/// [`NESTED_ALLOCATIONS`]. (Not checked under the model checkers, whose
/// allocator locks no monitor.)
#[cfg(not(metalock_model))]
const RECURSIVE_ALLOCATOR_ENV: &str = "metalock: a global allocator locked a monitor while it \
    allocated a thread's execution environment for a lock it had taken itself, so that each \
    allocation asked for the next without end: an allocator that locks monitors must not lock \
    them again while it runs for its own lock (guard it with a thread-local flag)";

/// The bias `records_out` carries while the EE is detached: non-zero, so
/// that a detached thread always looks for a recursive enter, and equal to
/// it exactly when the detached thread holds no record.
const DETACHED: usize = 1 << (usize::BITS - 1);

/// The per-thread state of the meta-lock and monitor protocols.
///
/// Invariants: allocated once, cache-padded (so at least 16-aligned, leaving
/// the low four bits of its address free for the word's tags), and never
/// deallocated while a word, record or other EE may name it. The
/// thread-owned fields are accessed only by the thread the EE is bound to.
///
/// Layout: the fields other threads write (hand-off, signal, parker) come
/// first, and the rest, led by the thread-owned ones that every extra-fast
/// lock and unlock writes, start a cache-line block of their own, so that a
/// thread waking or handing off to this one does not take that line away
/// from it.
#[derive(Debug)]
#[repr(C)]
pub(crate) struct ExecEnv {
    /// Predecessor side of the meta-lock hand-off: `IDLE`, `BITS_FOR_GRAB`,
    /// or the address of the successor's EE (see `meta_lock`).
    #[cfg(not(metalock_swap_only))]
    pub(crate) handoff: AtomicUsize,
    /// Release bits travelling through a hand-off.
    #[cfg(not(metalock_swap_only))]
    pub(crate) meta_lock_bits: AtomicUsize,
    /// Successor side: set by the predecessor when `meta_lock_bits` of this
    /// EE holds the release bits.
    #[cfg(not(metalock_swap_only))]
    pub(crate) got_meta_lock_slow: AtomicBool,
    /// Set by a monitor exit that invites this thread to re-contend, or
    /// hands it the monitor (`SIGNAL_*`).
    pub(crate) monitor_signal: AtomicUsize,
    /// The wait policy's wake-up stamp: zero, or asked for by a wait of
    /// this thread that learns, as it parks, and then written by the exit
    /// that wakes it (see `monitor::park_marks`).
    #[cfg(not(metalock_model))]
    pub(crate) wake_stamp: AtomicU32,
    /// Where this thread blocks.
    pub(crate) parker: Parker,
    /// Starts the thread-owned fields on the next cache-line block
    /// (zero-sized, aligned as crossbeam pads for the target).
    thread_owned_block: CachePadded<()>,
    /// The record the thread enters with when it holds no record at all
    /// (the common case: one monitor at a time), in the EE's own
    /// lines and on no free list, so that such a lock and unlock take and
    /// return it with one store each. Its owner is this EE (set once the EE
    /// has its address, before it is published).
    hot_record: LockRecord,
    /// Thread-owned: first free lock record.
    free_records: UnsafeCell<*mut LockRecord>,
    /// Thread-owned: lock records taken from the free list and not returned
    /// (held, queued, or waiting), plus [`DETACHED`] while detached. Zero
    /// means the thread owns no monitor, so the extra-fast path need not look
    /// for a recursive enter.
    records_out: UnsafeCell<usize>,
    /// Thread-owned: the record last taken from the free list, the first
    /// guess of a recursive enter (see `monitor::try_enter_fast`).
    last_taken: UnsafeCell<*const LockRecord>,
    /// Thread-owned: size of the next refill of the free list.
    next_batch: UnsafeCell<usize>,
    /// Thread-owned: the thread runs test code under a meta-lock (the
    /// `__with_meta_lock` seam), and may not take another.
    #[cfg(feature = "__test-hooks")]
    pub(crate) in_meta_lock_seam: UnsafeCell<bool>,
    /// Thread-owned: the address of the word whose meta-lock the thread
    /// holds or waits for, zero if none. A thread holds at most one (the
    /// hand-off fields above serve one meta-lock at a time), and this is how
    /// it tells, before its swap, that code run under one asks for another.
    pub(crate) meta_lock_held: UnsafeCell<usize>,
    /// Thread-owned: the thread holds a stripe of the wait table. Code the
    /// crate runs there (a platform callback) that asks for one would wait
    /// for itself, silently, if the two keys shared the stripe.
    pub(crate) stripe_held: UnsafeCell<bool>,
    /// Thread-owned: the thread's notify reached a waiter since the thread's
    /// last lone wait began, a hint for the wait policy (a pooled EE may
    /// bring it to its next thread: one wait learns less then).
    #[cfg(not(metalock_model))]
    reached_a_waiter: UnsafeCell<bool>,
    /// Thread-owned: how late, in microseconds, the thread ran after the
    /// exit that woke it from its last stamped lone park, zero once a wait
    /// took it: a hint for the wait policy (`monitor::park_marks`; a
    /// pooled EE may bring it to its next thread, whose first lone wait
    /// then counts up to `park_marks::CARRIED_LAG_MAX_MICROS` too many).
    #[cfg(not(metalock_model))]
    wake_lag: UnsafeCell<u32>,
    /// Thread-owned: how many of the crate's allocations for a lock the
    /// thread is inside ([`ExecEnv::allocating`]).
    allocating: UnsafeCell<u8>,
    /// Thread-owned: the NEUTRAL form in which the thread's last keyed lock
    /// found its address's home, if the home was keyed for it, else zero:
    /// the next keyed lock's guess (`monitor::home`).
    pub(crate) keyed_guess: UnsafeCell<usize>,
    /// This thread's event counters (feature `stats`).
    #[cfg(all(feature = "stats", not(metalock_model)))]
    pub(crate) stats: counters::ThreadStats,
    /// What the thread does with monitors (feature `diagnostics`).
    #[cfg(all(feature = "diagnostics", not(metalock_model)))]
    pub(crate) diag: diag::Diag,
    /// The next EE in the list of all EEs, set once before this one is
    /// published there and never changed.
    #[cfg(all(any(feature = "stats", feature = "diagnostics"), not(metalock_model)))]
    all_next: core::sync::atomic::AtomicPtr<ExecEnv>,
    /// Link in the pool of EEs whose threads exited (under the global lock).
    pool_next: UnsafeCell<*const ExecEnv>,
}

// SAFETY: the atomics are shared; the `UnsafeCell` fields are either owned by
// the bound thread (free list, counters) or by the global lock (`pool_next`),
// as the type's invariants state.
unsafe impl Sync for ExecEnv {}
// SAFETY: as for `Sync`; raw pointers to lock records do not tie the EE to a
// thread, the binding protocol does.
unsafe impl Send for ExecEnv {}

const _: () = assert!(core::mem::align_of::<ExecEnv>() > !POINTER_MASK);
const _: () = assert!(core::mem::size_of::<CachePadded<()>>() == 0);

impl ExecEnv {
    fn new() -> Self {
        Self {
            #[cfg(not(metalock_swap_only))]
            handoff: AtomicUsize::new(0),
            #[cfg(not(metalock_swap_only))]
            meta_lock_bits: AtomicUsize::new(0),
            #[cfg(not(metalock_swap_only))]
            got_meta_lock_slow: AtomicBool::new(false),
            monitor_signal: AtomicUsize::new(SIGNAL_NONE),
            #[cfg(not(metalock_model))]
            wake_stamp: AtomicU32::new(0),
            parker: Parker::new(),
            thread_owned_block: CachePadded::new(()),
            hot_record: LockRecord::new(0),
            free_records: UnsafeCell::new(core::ptr::null_mut()),
            records_out: UnsafeCell::new(0),
            last_taken: UnsafeCell::new(core::ptr::null()),
            next_batch: UnsafeCell::new(free_list::FIRST_BATCH),
            #[cfg(feature = "__test-hooks")]
            in_meta_lock_seam: UnsafeCell::new(false),
            meta_lock_held: UnsafeCell::new(0),
            stripe_held: UnsafeCell::new(false),
            #[cfg(not(metalock_model))]
            reached_a_waiter: UnsafeCell::new(false),
            #[cfg(not(metalock_model))]
            wake_lag: UnsafeCell::new(0),
            allocating: UnsafeCell::new(0),
            keyed_guess: UnsafeCell::new(0),
            #[cfg(all(feature = "stats", not(metalock_model)))]
            stats: counters::ThreadStats::new(),
            #[cfg(all(feature = "diagnostics", not(metalock_model)))]
            diag: diag::Diag::new(),
            #[cfg(all(any(feature = "stats", feature = "diagnostics"), not(metalock_model)))]
            all_next: core::sync::atomic::AtomicPtr::new(core::ptr::null_mut()),
            pool_next: UnsafeCell::new(core::ptr::null()),
        }
    }

    /// Finishes a fresh EE at its final address: its hot record's owner.
    ///
    /// # Safety
    /// Called once, before the EE is published to any thread.
    pub(super) unsafe fn settle(&self) {
        // SAFETY: the EE is not published yet (caller's contract).
        unsafe { self.hot_record.set_owner(self.as_owner()) };
    }

    /// The calling thread's EE, bound (from the pool, or new) on first use.
    /// An EE bound after the thread's exit cleanup is detached.
    #[inline]
    pub(crate) fn current() -> &'static ExecEnv {
        binding::current()
    }

    /// The calling thread's EE, if it has one bound.
    #[inline]
    pub(crate) fn current_if_bound() -> Option<&'static ExecEnv> {
        binding::current_if_bound()
    }

    /// Notes that this EE's thread's notify reached a waiter (see
    /// `reached_a_waiter`).
    ///
    /// # Safety
    /// Called on the thread the EE is bound to.
    #[cfg(not(metalock_model))]
    #[inline]
    pub(crate) unsafe fn note_reached_a_waiter(&self) {
        // SAFETY: a thread-owned field, on its thread (caller's contract).
        self.reached_a_waiter
            .with_mut(|reached| unsafe { *reached = true });
    }

    /// Whether this EE's thread's notify reached a waiter since the last
    /// call; clears the note.
    ///
    /// # Safety
    /// Called on the thread the EE is bound to.
    #[cfg(not(metalock_model))]
    #[inline]
    pub(crate) unsafe fn take_reached_a_waiter(&self) -> bool {
        // SAFETY: a thread-owned field, on its thread (caller's contract).
        self.reached_a_waiter
            .with_mut(|reached| unsafe { core::mem::replace(&mut *reached, false) })
    }

    /// Replaces this EE's thread's wake-up lag (see `wake_lag`) with `lag`,
    /// and returns the one before.
    ///
    /// # Safety
    /// Called on the thread the EE is bound to.
    #[cfg(not(metalock_model))]
    #[inline]
    pub(crate) unsafe fn replace_wake_lag(&self, lag: u32) -> u32 {
        // SAFETY: a thread-owned field, on its thread (caller's contract).
        self.wake_lag
            .with_mut(|held| unsafe { core::mem::replace(&mut *held, lag) })
    }

    /// Runs `f` with the calling thread's EE, for an operation that hands no
    /// lock record out: if the EE is detached and holds no record afterwards,
    /// it goes back to the pool, and not before (code `f` runs may lock and
    /// unlock monitors: a global allocator that `f`, or the platform outside
    /// a meta-lock, calls).
    /// However `f` ends: a panic that `f` raises (a misuse it reports) and
    /// the caller catches must not leave a detached EE bound for good.
    #[inline]
    pub(crate) fn with_current<R>(f: impl FnOnce(&'static ExecEnv) -> R) -> R {
        /// Releases the EE, if detached and idle, when dropped.
        struct ReleaseIfIdle(&'static ExecEnv);
        impl Drop for ReleaseIfIdle {
            fn drop(&mut self) {
                // SAFETY: the calling thread's EE (made in `with_current`,
                // dropped on its thread).
                unsafe { self.0.release_if_idle_and_detached() };
            }
        }
        let ee = Self::current();
        let _release = ReleaseIfIdle(ee);
        // SAFETY: `ee` is the calling thread's EE. Dropped before `_release`.
        let _kept = unsafe { ee.keep_bound_if_detached() };
        f(ee)
    }

    /// The EE a lock record names as its owner.
    ///
    /// # Safety
    /// `owner` is a record's `owner()`: the address of an EE, which lives as
    /// long as records may name it (type invariant).
    #[inline(always)]
    pub(crate) unsafe fn of_owner(owner: usize) -> &'static ExecEnv {
        // SAFETY: caller's contract.
        unsafe { &*(owner as *const ExecEnv) }
    }

    /// This EE as a lock record's owner.
    #[inline(always)]
    pub(crate) fn as_owner(&self) -> usize {
        self as *const ExecEnv as usize
    }

    /// The EE a BUSY word names.
    ///
    /// # Safety
    /// `bits` is a BUSY word of the CAS backend, which names the EE that
    /// swapped it in; EEs outlive every word that names them.
    #[cfg(not(metalock_swap_only))]
    #[inline(always)]
    pub(crate) unsafe fn of_busy(bits: usize) -> &'static ExecEnv {
        // SAFETY: caller's contract.
        unsafe { &*((bits & POINTER_MASK) as *const ExecEnv) }
    }

    /// The word a thread swaps in to take the meta-lock: `self | BUSY`.
    #[cfg(not(metalock_swap_only))]
    #[inline(always)]
    pub(crate) fn busy_bits(&self) -> usize {
        self as *const ExecEnv as usize | BUSY
    }

    /// Whether some of the EE's lock records are not on its free list (in a
    /// queue, or held through a guard), or the EE is detached.
    ///
    /// # Safety
    /// `self` is the calling thread's EE.
    #[inline(always)]
    pub(crate) unsafe fn has_records_out(&self) -> bool {
        // SAFETY: thread-owned field, read by the bound thread (caller's
        // contract).
        self.records_out.with(|n| unsafe { *n }) != 0
    }

    /// Whether the EE is detached (see the module docs).
    ///
    /// # Safety
    /// `self` is the calling thread's EE.
    #[cfg(any(
        all(not(feature = "std"), not(metalock_model)),
        all(metalock_model, feature = "__test-hooks")
    ))]
    unsafe fn is_detached(&self) -> bool {
        // SAFETY: thread-owned field (caller's contract).
        self.records_out.with(|n| unsafe { *n }) >= DETACHED
    }

    /// Detaches the EE from the thread's exit cleanup (see the module docs),
    /// giving its free records to the global pool first: a detached EE never
    /// comes back if its thread ends holding a monitor.
    ///
    /// # Safety
    /// `self` is the calling thread's EE, not yet detached.
    unsafe fn detach(&self) {
        // SAFETY: thread-owned fields (caller's contract).
        unsafe {
            self.donate_free_records();
            self.records_out.with_mut(|n| {
                debug_assert!(*n < DETACHED);
                *n += DETACHED;
            });
        }
    }

    /// Gives a detached EE that holds no lock record back to the pool.
    ///
    /// # Safety
    /// `self` is the calling thread's EE.
    #[inline]
    pub(crate) unsafe fn release_if_idle_and_detached(&'static self) {
        // SAFETY: thread-owned field (caller's contract).
        if self.records_out.with(|n| unsafe { *n }) == DETACHED {
            // SAFETY: caller's contract; idle and detached, just checked.
            unsafe { self.release_detached() };
        }
    }

    /// Unbinds a detached EE that holds no lock record from the calling
    /// thread and returns it to the pool.
    ///
    /// # Safety
    /// `self` is the calling thread's EE, detached, with no record out.
    #[cold]
    pub(crate) unsafe fn release_detached(&'static self) {
        // SAFETY: thread-owned field (caller's contract).
        self.records_out.with_mut(|n| unsafe {
            debug_assert_eq!(*n, DETACHED);
            *n = 0;
        });
        binding::unbind(self);
        // SAFETY: unbound above and idle: it belongs to no thread.
        unsafe { global::push_env(self) };
    }
}
