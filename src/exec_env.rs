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
//! - *monitor fields* (`monitor_signal`, `parker`), written by threads that
//!   wake this one;
//! - *thread-owned fields* (the lock-record free list and its counters), only
//!   ever touched by the bound thread.
//!
//! # Lifetime
//!
//! A BUSY word, a hand-off partner or a lock record may name an EE after its
//! thread has moved on, so EEs are never freed. When a thread exits, its EE
//! goes back to a global pool with its free list of lock records, and the
//! next new thread takes it from there. An EE whose thread exits while it
//! still has lock records out (a guard leaked with `mem::forget`, or a
//! monitor still held while its thread-locals are destroyed) is retired
//! instead: a lock record in some queue names it as owner, and handing it to
//! another thread would make that thread the owner of a monitor it never
//! entered. A retired EE stays bound to its thread until the thread ends, so
//! a later thread-local destructor that re-enters such a monitor is still
//! its owner.

use core::ptr;

use crossbeam_utils::CachePadded;

use crate::lock_record::LockRecord;
#[cfg(not(metalock_swap_only))]
use crate::primitive::AtomicBool;
use crate::primitive::{AtomicUsize, Parker, UnsafeCell};
#[cfg(not(metalock_swap_only))]
use crate::word::BUSY;

/// The per-thread state of the meta-lock and monitor protocols.
///
/// Invariants: allocated once, cache-padded (so at least 16-aligned, leaving
/// the low four bits of its address free for the word's tags), and never
/// deallocated. The thread-owned fields are accessed only by the thread the
/// EE is bound to.
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
    /// hands it the monitor (`monitor::SIGNAL_*`).
    pub(crate) monitor_signal: AtomicUsize,
    /// Where this thread blocks.
    pub(crate) parker: Parker,
    /// Starts the thread-owned fields on the next cache-line block
    /// (zero-sized, aligned as crossbeam pads for the target).
    thread_owned_block: CachePadded<()>,
    /// Thread-owned: first free lock record.
    pub(crate) free_records: UnsafeCell<*mut LockRecord>,
    /// Thread-owned: lock records taken from the free list and not returned
    /// (held, queued, or waiting). Zero means the thread owns no monitor, so
    /// the extra-fast path need not look for a recursive enter.
    pub(crate) records_out: UnsafeCell<usize>,
    /// Thread-owned: the record last taken from the free list, the first
    /// guess of a recursive enter (see `MultiUseWord::try_enter_fast`).
    pub(crate) last_taken: UnsafeCell<*const LockRecord>,
    /// Thread-owned: size of the next refill of the free list.
    pub(crate) next_batch: UnsafeCell<usize>,
    /// Thread-owned: the thread runs user code under a meta-lock (the test
    /// seam `__with_meta_lock`), so it must not take another one.
    pub(crate) in_meta_lock_seam: UnsafeCell<bool>,
    /// Event counters of the threads bound to this EE.
    #[cfg(all(feature = "stats", not(loom)))]
    pub(crate) stats: crate::stats::ThreadStats,
    /// Link in the list of all EEs that statistics walk.
    #[cfg(all(feature = "stats", not(loom)))]
    pub(crate) stats_next: core::sync::atomic::AtomicPtr<ExecEnv>,
    /// Link in the global pool, under the pool's lock.
    #[cfg(not(loom))]
    pool_next: UnsafeCell<*const ExecEnv>,
}

// SAFETY: the atomics are shared; the `UnsafeCell` fields are either owned by
// the bound thread (free list, counters) or by the pool lock (`pool_next`),
// as the type's invariants state.
unsafe impl Sync for ExecEnv {}
// SAFETY: as for `Sync`; raw pointers to lock records do not tie the EE to a
// thread, the binding protocol does.
unsafe impl Send for ExecEnv {}

const _: () = assert!(core::mem::align_of::<ExecEnv>() > !crate::word::POINTER_MASK);
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
            monitor_signal: AtomicUsize::new(crate::monitor::SIGNAL_NONE),
            parker: Parker::new(),
            thread_owned_block: CachePadded::new(()),
            free_records: UnsafeCell::new(ptr::null_mut()),
            records_out: UnsafeCell::new(0),
            last_taken: UnsafeCell::new(ptr::null()),
            next_batch: UnsafeCell::new(crate::lock_record::FIRST_BATCH),
            in_meta_lock_seam: UnsafeCell::new(false),
            #[cfg(all(feature = "stats", not(loom)))]
            stats: crate::stats::ThreadStats::new(),
            #[cfg(all(feature = "stats", not(loom)))]
            stats_next: core::sync::atomic::AtomicPtr::new(ptr::null_mut()),
            #[cfg(not(loom))]
            pool_next: UnsafeCell::new(ptr::null()),
        }
    }

    /// A fresh EE that lives forever.
    fn allocate() -> &'static ExecEnv {
        let padded: &'static CachePadded<ExecEnv> =
            alloc::boxed::Box::leak(alloc::boxed::Box::new(CachePadded::new(ExecEnv::new())));
        #[cfg(all(feature = "stats", not(loom)))]
        crate::stats::register(padded);
        padded
    }

    /// The word a thread swaps in to take the meta-lock: `self | BUSY`.
    #[cfg(not(metalock_swap_only))]
    #[inline(always)]
    pub(crate) fn busy_bits(&self) -> usize {
        self as *const ExecEnv as usize | BUSY
    }

    /// The calling thread's EE, created (or taken from the pool) on first use.
    #[inline]
    pub(crate) fn current() -> &'static ExecEnv {
        binding::current()
    }

    /// Whether some of the EE's lock records are not on its free list (in a
    /// queue, or held through a forgotten guard).
    ///
    /// # Safety
    /// `self` is the calling thread's EE.
    #[inline(always)]
    pub(crate) unsafe fn has_records_out(&self) -> bool {
        // SAFETY: thread-owned field, read by the bound thread (caller's
        // contract).
        self.records_out.with(|n| unsafe { *n }) != 0
    }
}

/// A test-and-set lock for the crate's rare global bookkeeping (the EE pool,
/// the statistics list, the lock-record counter): taken when a thread starts
/// or exits or refills its free list, and held for a few instructions, so a
/// spin with back-off is enough. Built on a swap, which every backend has.
pub(crate) fn with_global_lock<R>(f: impl FnOnce() -> R) -> R {
    use core::sync::atomic::{AtomicU32, Ordering};

    static LOCKED: AtomicU32 = AtomicU32::new(0);

    struct Unlock;
    impl Drop for Unlock {
        fn drop(&mut self) {
            // Release pairs with the Acquire swap of the next holder.
            LOCKED.store(0, Ordering::Release);
        }
    }

    let backoff = crossbeam_utils::Backoff::new();
    // Acquire pairs with the Release store in `Unlock`.
    while crate::arch::swap_u32(&LOCKED, 1, Ordering::Acquire) != 0 {
        backoff.snooze();
    }
    let _unlock = Unlock;
    f()
}

#[cfg(not(loom))]
mod pool {
    use super::{ExecEnv, with_global_lock};
    use core::cell::Cell;
    use core::ptr;

    /// The stack of EEs whose threads exited, linked through `pool_next`.
    struct Head(Cell<*const ExecEnv>);

    // SAFETY: the head and the `pool_next` links are only accessed under the
    // global lock.
    unsafe impl Sync for Head {}

    static HEAD: Head = Head(Cell::new(ptr::null()));

    pub(super) fn pop() -> Option<&'static ExecEnv> {
        with_global_lock(|| {
            // SAFETY: the global lock is held; EEs in the pool live forever.
            let ee = unsafe { HEAD.0.get().as_ref() }?;
            // SAFETY: as above.
            HEAD.0.set(ee.pool_next.with(|next| unsafe { *next }));
            Some(ee)
        })
    }

    pub(super) fn push(ee: &'static ExecEnv) {
        with_global_lock(|| {
            // SAFETY: the global lock is held, and `ee` belongs to no thread.
            ee.pool_next
                .with_mut(|next| unsafe { *next = HEAD.0.get() });
            HEAD.0.set(ee);
        })
    }
}

/// Takes an EE for a new thread: from the pool if one is there.
#[cfg(not(loom))]
fn acquire_env() -> &'static ExecEnv {
    pool::pop().unwrap_or_else(ExecEnv::allocate)
}

/// Gives back the EE of an exiting thread and returns `true`, or returns
/// `false` if lock records still name it (see the module docs): it is then
/// retired, and stays the thread's identity for whatever the thread does
/// until it ends (a thread-local destructor that re-enters a monitor the
/// thread still holds must still be its owner).
#[cfg(not(loom))]
fn release_env(ee: &'static ExecEnv) -> bool {
    // SAFETY: called by the exiting thread the EE is bound to.
    let free = !unsafe { ee.has_records_out() };
    if free {
        pool::push(ee);
    }
    free
}

/// Binding of EEs to `std` threads through two thread-locals: a plain cell
/// for the hot path (no destructor, so it can be read at any point of the
/// thread's life, including other thread-locals' destructors) and a guard
/// whose destructor returns the EE to the pool.
#[cfg(all(feature = "std", not(loom)))]
mod binding {
    use super::{ExecEnv, acquire_env, release_env};
    use core::cell::Cell;
    use core::ptr;

    crate::primitive::thread_local! {
        static CURRENT: Cell<*const ExecEnv> = const { Cell::new(ptr::null()) };
        static EXIT_GUARD: ExitGuard = const { ExitGuard };
    }

    struct ExitGuard;

    impl Drop for ExitGuard {
        fn drop(&mut self) {
            let ee = CURRENT.with(Cell::get);
            // SAFETY: CURRENT only ever holds EEs from `acquire_env`, which
            // live forever.
            if let Some(ee) = unsafe { ee.as_ref() } {
                // Unbind only what went back to the pool: the pool may hand
                // it to another thread at once.
                if release_env(ee) {
                    CURRENT.with(|c| c.set(ptr::null()));
                }
            }
        }
    }

    #[inline]
    pub(super) fn current() -> &'static ExecEnv {
        let ee = CURRENT.with(Cell::get);
        // SAFETY: as in `ExitGuard::drop`.
        match unsafe { ee.as_ref() } {
            Some(ee) => ee,
            None => bind(),
        }
    }

    #[cold]
    fn bind() -> &'static ExecEnv {
        let ee = acquire_env();
        CURRENT.with(|c| c.set(ee));
        // Touching the guard registers its destructor. This fails once the
        // thread's thread-locals are being destroyed and the guard is gone
        // (a lock taken in a late destructor): the EE then stays bound until
        // the thread ends and is never reused, a bounded cost per such thread.
        let _ = EXIT_GUARD.try_with(|_| ());
        ee
    }
}

/// Under loom every model thread gets a fresh EE that is never reused: loom's
/// objects belong to one execution and must not outlive it in a pool.
#[cfg(loom)]
mod binding {
    use super::ExecEnv;

    crate::primitive::thread_local! {
        static CURRENT: &'static ExecEnv = ExecEnv::allocate();
    }

    pub(super) fn current() -> &'static ExecEnv {
        CURRENT.with(|ee| *ee)
    }
}

/// Without `std`, the platform keeps each thread's EE in the slot it provides.
#[cfg(all(not(feature = "std"), not(loom)))]
mod binding {
    use super::{ExecEnv, acquire_env, release_env};
    use core::sync::atomic::Ordering;

    #[inline]
    pub(super) fn current() -> &'static ExecEnv {
        // SAFETY: the platform's contract: the slot is this thread's and
        // valid while it runs.
        let slot = unsafe { crate::platform::get().current_thread_slot().as_ref() };
        // Relaxed: the slot belongs to this thread alone.
        let ee = slot.load(Ordering::Relaxed) as *const ExecEnv;
        // SAFETY: the slot holds zero or an EE from `acquire_env`.
        match unsafe { ee.as_ref() } {
            Some(ee) => ee,
            None => {
                let ee = acquire_env();
                slot.store(ee as *const ExecEnv as usize, Ordering::Relaxed);
                ee
            }
        }
    }

    /// See [`crate::platform::release_current_thread`].
    pub(crate) fn release_current_thread() {
        // SAFETY: as in `current`.
        let slot = unsafe { crate::platform::get().current_thread_slot().as_ref() };
        // Relaxed: the slot belongs to this thread alone.
        let ee = slot.load(Ordering::Relaxed) as *const ExecEnv;
        // SAFETY: as in `current`.
        if let Some(ee) = unsafe { ee.as_ref() } {
            // As with std: unbind only what went back to the pool.
            if release_env(ee) {
                slot.store(0, Ordering::Relaxed);
            }
        }
    }
}

#[cfg(all(not(feature = "std"), not(loom)))]
pub(crate) use binding::release_current_thread;
