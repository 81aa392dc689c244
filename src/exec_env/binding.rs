//! How a thread finds its execution environment: thread-locals (`std`'s, or
//! the model checker's), or the slot a `no_std` platform provides.

#[cfg(any(feature = "std", metalock_model))]
pub(super) use thread_locals::{current, current_if_bound, unbind};

#[cfg(all(metalock_model, feature = "__test-hooks"))]
pub use thread_locals::end_thread;

#[cfg(all(not(feature = "std"), not(metalock_model)))]
pub use platform_threads::release_current_thread;
#[cfg(all(not(feature = "std"), not(metalock_model)))]
pub(super) use platform_threads::{current, current_if_bound, unbind};

#[cfg(any(not(metalock_model), feature = "__test-hooks"))]
use super::{ExecEnv, global};

/// A thread's exit cleanup: its EE goes back to the pool, or, if a guard
/// still holds one of its records, is detached, with its free records
/// donated.
///
/// # Safety
/// `ee` is the calling thread's EE, not detached.
#[cfg(any(not(metalock_model), feature = "__test-hooks"))]
unsafe fn on_thread_exit(ee: &'static ExecEnv) {
    // SAFETY: `ee` is this thread's EE (caller's contract).
    unsafe {
        if ee.has_records_out() {
            // A guard is still out: forgotten, or kept by a thread-local
            // that is destroyed later. The unlock that returns the last
            // record releases the EE.
            ee.detach();
        } else {
            unbind(ee);
            global::push_env(ee);
        }
    }
}

/// Binding of EEs to threads through two thread-locals: a plain cell for
/// the hot path (no destructor, so, where std keeps thread-locals natively,
/// as on every tier-1 target, it can be read at any point of the thread's
/// life, including other thread-locals' destructors) and the
/// thread's exit: a guard whose destructor is the exit cleanup, or, under
/// the model checkers, a flag that `end_thread` sets. (Loom takes all of a
/// thread's thread-locals before it destroys any, so a destructor could
/// not read the cell; and it destroys the main thread's after the
/// execution's statics, the pools among them.)
///
/// Taking an EE may allocate, and a global allocator that locks monitors
/// then binds one for the thread first: `bind` keeps that one and returns
/// the other to the pool, instead of leaking it.
#[cfg(any(feature = "std", metalock_model))]
mod thread_locals {
    use super::super::{ExecEnv, global};
    use core::cell::Cell;
    use core::ptr;

    #[cfg(not(metalock_model))]
    crate::primitive::thread_local! {
        static CURRENT: Cell<*const ExecEnv> = const { Cell::new(ptr::null()) };
        static EXIT_GUARD: ExitGuard = const { ExitGuard };
        /// How many binds the thread is inside (`NESTED_ALLOCATIONS`).
        static BINDS: Cell<u8> = const { Cell::new(0) };
    }

    // The model checkers' thread-locals take no `const` initializer.
    #[cfg(metalock_model)]
    crate::primitive::thread_local! {
        static CURRENT: Cell<*const ExecEnv> = Cell::new(ptr::null());
        static ENDED: Cell<bool> = Cell::new(false);
    }

    #[cfg(not(metalock_model))]
    struct ExitGuard;

    #[cfg(not(metalock_model))]
    impl Drop for ExitGuard {
        fn drop(&mut self) {
            let Some(ee) = current_if_bound() else {
                return;
            };
            // Which monitors stay held, for `diagnostics::deadlocks`; a
            // thread that holds none leaves nothing to report.
            // SAFETY: `ee` is this thread's EE.
            #[cfg(feature = "diagnostics")]
            if unsafe { ee.has_records_out() } {
                ee.diag.exited(crate::exec_env::diag::Diag::words_held(ee));
            }
            // SAFETY: `ee` is this thread's EE, not detached: the guard's
            // destructor runs once, and only an exit cleanup, or a bind after
            // it, detaches an EE.
            unsafe { super::on_thread_exit(ee) };
        }
    }

    /// Runs the calling thread's exit cleanup, as the end of a thread does
    /// outside the model checkers; a model thread calls it where the thread
    /// would end, so that the threads after it reuse its EE and lock
    /// records. Synchronizing afterwards binds a detached EE, as a late
    /// thread-local destructor does. Not part of the API.
    #[cfg(all(metalock_model, feature = "__test-hooks"))]
    pub fn end_thread() {
        assert!(
            global::thread_exits_modelled(),
            "metalock: call __test_hooks::model_thread_exits() before a model that ends threads"
        );
        ENDED.with(|ended| ended.set(true));
        if let Some(ee) = current_if_bound() {
            // SAFETY: `ee` is this thread's EE; an EE bound after the
            // thread ended is detached and goes back by itself.
            unsafe {
                if !ee.is_detached() {
                    super::on_thread_exit(ee);
                }
            }
        }
    }

    /// Registers the thread's exit cleanup for the EE being bound; `false`
    /// if the cleanup has already run, or can run no more: the EE must then
    /// be detached.
    fn register_exit() -> bool {
        // Touching the guard registers its destructor. That fails once the
        // thread's thread-locals are being destroyed and the guard is gone
        // (a lock taken in a late destructor).
        #[cfg(not(metalock_model))]
        return EXIT_GUARD.try_with(|_| ()).is_ok();
        #[cfg(metalock_model)]
        return !ENDED.with(Cell::get);
    }

    #[inline]
    pub(crate) fn current_if_bound() -> Option<&'static ExecEnv> {
        // SAFETY: CURRENT only ever holds null or EEs from `acquire_env`,
        // which live as long as a thread may use them.
        unsafe { CURRENT.with(Cell::get).as_ref() }
    }

    #[inline]
    pub(crate) fn current() -> &'static ExecEnv {
        match current_if_bound() {
            Some(ee) => ee,
            None => bind(),
        }
    }

    #[cold]
    fn bind() -> &'static ExecEnv {
        // Binding allocates (an EE, parking data), which an allocator that
        // locks monitors turns into locks: never under one of the crate's.
        #[cfg(all(feature = "__test-hooks", not(metalock_model)))]
        debug_assert_eq!(
            crate::primitive::held::locks_held(),
            0,
            "metalock: an execution environment was bound under a lock of the crate"
        );
        let ee = {
            #[cfg(not(metalock_model))]
            let _binding = Binding::enter();
            global::acquire_env()
        };
        if let Some(bound) = current_if_bound() {
            // SAFETY: `ee` came from `acquire_env` just now: bound to no
            // thread, no record out.
            unsafe { global::push_env(ee) };
            return bound;
        }
        CURRENT.with(|c| c.set(ee));
        // An EE bound after the exit cleanup is detached from the start, and
        // released as soon as it holds no record. It gives its free records
        // away now: no exit cleanup will, should the thread end holding a
        // monitor.
        let late = !register_exit();
        #[cfg(all(feature = "diagnostics", not(metalock_model)))]
        ee.diag.bind(late);
        if late {
            // SAFETY: `ee` is this thread's EE, just bound.
            unsafe { ee.detach() };
        }
        // After the binding: an allocator that locks monitors finds it.
        // A late EE is kept bound meanwhile: a lock and unlock there would
        // otherwise find it detached and idle, and release it before we
        // return it. (An attached one is not: counted busy, its locks
        // there would skip the hot record and allocate a batch.)
        #[cfg(not(any(metalock_futex, metalock_model)))]
        {
            // SAFETY: `ee` is this thread's EE, just bound.
            let _kept = unsafe { ee.keep_bound_if_detached() };
            crate::sys::prepare_thread();
        }
        ee
    }

    /// A bind in progress on the calling thread, counted in `BINDS` until
    /// it drops; past `NESTED_ALLOCATIONS` the process stops.
    #[cfg(not(metalock_model))]
    struct Binding;

    #[cfg(not(metalock_model))]
    impl Binding {
        fn enter() -> Self {
            // `const` and without a destructor: never destroyed, so usable
            // in any thread-local destructor.
            let depth = BINDS.with(Cell::get);
            if depth >= super::super::NESTED_ALLOCATIONS {
                crate::sys::abort_with(super::super::RECURSIVE_ALLOCATOR_ENV);
            }
            BINDS.with(|binds| binds.set(depth + 1));
            Self
        }
    }

    #[cfg(not(metalock_model))]
    impl Drop for Binding {
        fn drop(&mut self) {
            BINDS.with(|binds| binds.set(binds.get() - 1));
        }
    }

    /// Forgets the calling thread's EE, which is `ee`.
    pub(crate) fn unbind(ee: &ExecEnv) {
        debug_assert!(current_if_bound().is_some_and(|bound| ptr::eq(bound, ee)));
        #[cfg(all(feature = "diagnostics", not(metalock_model)))]
        ee.diag.unbind();
        CURRENT.with(|c| c.set(ptr::null()));
    }
}

/// Without `std`, the platform keeps each thread's EE in the slot it
/// provides, and tells the crate when a thread exits
/// (`release_current_thread`).
#[cfg(all(not(feature = "std"), not(metalock_model)))]
mod platform_threads {
    use super::super::{ExecEnv, global};
    use crate::sys::IN_CALLBACK;
    use core::sync::atomic::{AtomicUsize, Ordering};

    /// The slot's value once `release_current_thread` has run: like an
    /// empty slot, but a later bind is detached.
    const RELEASED: usize = 1;
    /// Added to an empty or `RELEASED` slot for each bind the thread is
    /// inside (`NESTED_ALLOCATIONS`).
    const BINDING: usize = 2;
    /// Slot values below this are marks, not EEs: the binding's below
    /// `IN_CALLBACK`, which the platform layer writes while a callback runs.
    const MARKS: usize = crate::sys::SLOT_MARKS;
    const _: () = assert!(
        RELEASED + BINDING * (super::super::NESTED_ALLOCATIONS as usize + 1) <= IN_CALLBACK
    );
    const _: () = assert!(MARKS <= core::mem::align_of::<ExecEnv>());

    fn slot() -> &'static AtomicUsize {
        // SAFETY: the platform's contract: the slot is this thread's and
        // valid while it runs.
        unsafe { crate::sys::get().current_thread_slot().as_ref() }
    }

    #[inline]
    pub(crate) fn current_if_bound() -> Option<&'static ExecEnv> {
        // Relaxed: the slot belongs to this thread alone.
        match slot().load(Ordering::Relaxed) {
            marks if marks < MARKS => None,
            // SAFETY: the slot holds marks or an EE from `acquire_env`,
            // which lives forever.
            ee => Some(unsafe { &*(ee as *const ExecEnv) }),
        }
    }

    #[inline]
    pub(crate) fn current() -> &'static ExecEnv {
        match current_if_bound() {
            Some(ee) => ee,
            None => bind(),
        }
    }

    #[cold]
    fn bind() -> &'static ExecEnv {
        let slot = slot();
        // Relaxed (here and below): the slot belongs to this thread alone.
        let marks = slot.load(Ordering::Relaxed);
        if marks == IN_CALLBACK {
            crate::sys::abort_with(crate::sys::CALLBACK_USED_CRATE);
        }
        if marks / BINDING >= usize::from(super::super::NESTED_ALLOCATIONS) {
            crate::sys::abort_with(super::super::RECURSIVE_ALLOCATOR_ENV);
        }
        // Counted until the slot takes an EE, here or in a bind inside.
        slot.store(marks + BINDING, Ordering::Relaxed);
        let _marked = Marked { slot, marks };
        let released = marks & RELEASED != 0;
        let ee = global::acquire_env();
        if let Some(bound) = current_if_bound() {
            // SAFETY: as in the `std` binding.
            unsafe { global::push_env(ee) };
            return bound;
        }
        slot.store(ee as *const ExecEnv as usize, Ordering::Relaxed);
        if released {
            // SAFETY: `ee` is this thread's EE, just bound.
            unsafe { ee.detach() };
        }
        ee
    }

    /// A bind's marks in the calling thread's slot: put back as they were
    /// when it drops, unless an EE took the slot (only an allocation that
    /// unwinds leaves them).
    struct Marked {
        slot: &'static AtomicUsize,
        marks: usize,
    }

    impl Drop for Marked {
        fn drop(&mut self) {
            // Relaxed: the slot belongs to this thread alone.
            if self.slot.load(Ordering::Relaxed) < MARKS {
                self.slot.store(self.marks, Ordering::Relaxed);
            }
        }
    }

    /// Forgets the calling thread's EE; later binds are detached.
    pub(crate) fn unbind(_ee: &ExecEnv) {
        // Relaxed: the slot belongs to this thread alone.
        slot().store(RELEASED, Ordering::Relaxed);
    }

    /// Gives the calling thread's execution environment, with its free list
    /// of lock records, back to the pool for the next new thread. Call it
    /// from the platform's thread-exit path: without `std` the crate cannot
    /// see threads end. If the thread still holds a monitor, the environment
    /// stays with it until it releases the last one; a monitor it never
    /// releases (a forgotten guard) keeps the environment and that monitor's
    /// lock record for good. A thread that synchronizes again afterwards
    /// takes an environment from the pool and gives it back as soon as it
    /// holds no monitor.
    pub fn release_current_thread() {
        let Some(ee) = current_if_bound() else {
            return;
        };
        // SAFETY: `ee` is this thread's EE; a detached one was released
        // already, and goes back once it holds no record.
        unsafe {
            if !ee.is_detached() {
                super::on_thread_exit(ee);
            }
        }
    }
}
