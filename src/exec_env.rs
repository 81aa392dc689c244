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
//! still has lock records out (a guard leaked with `mem::forget`) is retired
//! instead: a lock record in some queue names it as owner, and handing it to
//! another thread would make that thread the owner of a monitor it never
//! entered.

use core::ptr;

use crossbeam_utils::CachePadded;

use crate::lock_record::LockRecord;
use crate::primitive::{AtomicBool, AtomicUsize, Parker, UnsafeCell};
use crate::word::BUSY;

/// The per-thread state of the meta-lock and monitor protocols.
///
/// Invariants: allocated once, cache-padded (so at least 8-aligned, leaving
/// the low three bits of its address free for the word's tags), and never
/// deallocated. The thread-owned fields are accessed only by the thread the
/// EE is bound to.
#[derive(Debug)]
pub(crate) struct ExecEnv {
    /// Predecessor side of the meta-lock hand-off: `IDLE`, `BITS_FOR_GRAB`,
    /// or the address of the successor's EE (see `meta_lock`).
    pub(crate) handoff: AtomicUsize,
    /// Release bits travelling through a hand-off.
    pub(crate) meta_lock_bits: AtomicUsize,
    /// Successor side: set by the predecessor when `meta_lock_bits` of this
    /// EE holds the release bits.
    pub(crate) got_meta_lock_slow: AtomicBool,
    /// Set by a monitor exit that invites this thread to re-contend.
    pub(crate) monitor_signal: AtomicBool,
    /// Where this thread blocks.
    pub(crate) parker: Parker,
    /// Thread-owned: first free lock record.
    pub(crate) free_records: UnsafeCell<*mut LockRecord>,
    /// Thread-owned: lock records taken from the free list and not returned.
    pub(crate) records_out: UnsafeCell<usize>,
    /// Thread-owned: size of the next refill of the free list.
    pub(crate) next_batch: UnsafeCell<usize>,
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

const _: () = assert!(core::mem::align_of::<CachePadded<ExecEnv>>() > !crate::word::POINTER_MASK);

impl ExecEnv {
    fn new() -> Self {
        Self {
            handoff: AtomicUsize::new(0),
            meta_lock_bits: AtomicUsize::new(0),
            got_meta_lock_slow: AtomicBool::new(false),
            monitor_signal: AtomicBool::new(false),
            parker: Parker::new(),
            free_records: UnsafeCell::new(ptr::null_mut()),
            records_out: UnsafeCell::new(0),
            next_batch: UnsafeCell::new(crate::lock_record::FIRST_BATCH),
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
    #[inline(always)]
    pub(crate) fn busy_bits(&self) -> usize {
        self as *const ExecEnv as usize | BUSY
    }

    /// The calling thread's EE, created (or taken from the pool) on first use.
    #[inline]
    pub(crate) fn current() -> &'static ExecEnv {
        binding::current()
    }

    /// Whether the EE has lock records out; read when its thread exits.
    #[cfg(not(loom))]
    fn has_records_out(&self) -> bool {
        // SAFETY: thread-owned field, read by the exiting bound thread.
        self.records_out.with(|n| unsafe { *n } != 0)
    }
}

#[cfg(not(loom))]
mod pool {
    use super::ExecEnv;
    use crate::primitive::{AtomicBool, Ordering};
    use core::ptr;
    use crossbeam_utils::Backoff;

    /// A stack of EEs whose threads exited, guarded by a test-and-set lock.
    /// The lock is only taken when a thread starts or exits, so it is held
    /// for a few instructions and a spin with back-off is enough.
    struct Pool {
        locked: AtomicBool,
        head: crate::primitive::UnsafeCell<*const ExecEnv>,
    }

    // SAFETY: `head` and the `pool_next` links are only accessed while
    // `locked` is held.
    unsafe impl Sync for Pool {}

    static POOL: Pool = Pool {
        locked: AtomicBool::new(false),
        head: crate::primitive::UnsafeCell::new(ptr::null()),
    };

    fn with_lock<R>(f: impl FnOnce(&crate::primitive::UnsafeCell<*const ExecEnv>) -> R) -> R {
        let backoff = Backoff::new();
        // Acquire pairs with the Release store below: the previous holder's
        // writes to the stack are visible.
        while POOL
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            backoff.snooze();
        }
        let result = f(&POOL.head);
        POOL.locked.store(false, Ordering::Release);
        result
    }

    pub(super) fn pop() -> Option<&'static ExecEnv> {
        with_lock(|head| {
            // SAFETY: the pool lock is held; EEs in the pool live forever.
            head.with_mut(|head| unsafe {
                let ee = (*head).as_ref()?;
                *head = ee.pool_next.with(|next| *next);
                Some(ee)
            })
        })
    }

    pub(super) fn push(ee: &'static ExecEnv) {
        with_lock(|head| {
            // SAFETY: the pool lock is held, and `ee` belongs to no thread.
            head.with_mut(|head| unsafe {
                ee.pool_next.with_mut(|next| *next = *head);
                *head = ee;
            })
        })
    }
}

/// Takes an EE for a new thread: from the pool if one is there.
#[cfg(not(loom))]
fn acquire_env() -> &'static ExecEnv {
    pool::pop().unwrap_or_else(ExecEnv::allocate)
}

/// Gives back the EE of an exiting thread, or retires it if lock records
/// still name it (see the module docs).
#[cfg(not(loom))]
fn release_env(ee: &'static ExecEnv) {
    if !ee.has_records_out() {
        pool::push(ee);
    }
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
            let ee = CURRENT.with(|c| c.replace(ptr::null()));
            // SAFETY: CURRENT only ever holds EEs from `acquire_env`, which
            // live forever.
            if let Some(ee) = unsafe { ee.as_ref() } {
                release_env(ee);
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
        let slot = crate::platform::get().current_thread_slot();
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
        let slot = crate::platform::get().current_thread_slot();
        let ee = slot.swap(0, Ordering::Relaxed) as *const ExecEnv;
        // SAFETY: as in `current`.
        if let Some(ee) = unsafe { ee.as_ref() } {
            release_env(ee);
        }
    }
}

#[cfg(all(not(feature = "std"), not(loom)))]
pub(crate) use binding::release_current_thread;
