//! The one place where the crate picks its concurrency primitives.
//!
//! Everything in `src/` takes atomics, cells, thread-locals and blocking from
//! here. Under `--cfg loom` they come from [loom], and with the `shuttle`
//! feature from [shuttle] (both are `cfg(metalock_model)`), so the crate's
//! own models and the models of users who embed a `MultiUseWord` see every
//! interleaving the checker explores; in a normal build they are the `core`
//! atomics, a zero-cost `UnsafeCell` wrapper with loom's closure API, and a
//! parker built on the platform's wait-on-address primitive.
//!
//! [loom]: https://docs.rs/loom
//! [shuttle]: https://docs.rs/shuttle

/// The model checker of a `metalock_model` build.
#[cfg(loom)]
use loom as model;
#[cfg(all(metalock_model, not(loom)))]
use shuttle as model;

#[cfg(all(metalock_model, not(metalock_swap_only)))]
pub(crate) use model::sync::atomic::AtomicBool;
#[cfg(metalock_model)]
pub(crate) use model::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

#[cfg(all(not(metalock_model), not(metalock_swap_only)))]
pub(crate) use core::sync::atomic::AtomicBool;
#[cfg(not(metalock_model))]
pub(crate) use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// Loom checks every access to a cell; shuttle has no cells of its own, and
/// takes the `core` wrapper below.
#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

#[cfg(metalock_model)]
pub(crate) use model::thread_local;

/// A static of one model execution, dropped with it. Loom orders every
/// access of one after its creation: created in the middle of a thread's
/// work, it orders that work before every later use of the crate by any
/// thread, an edge the crate does not have (its statics are `const` in a
/// normal build), which can hide a data race of the user's code.
/// `model::start_execution` creates them all before the model's threads
/// start; one created without it is noted (`created_in_execution`).
#[cfg(metalock_model)]
macro_rules! lazy_static {
    ($(#[$attr:meta])* static ref $name:ident: $t:ty = $init:expr;) => {
        #[cfg(loom)]
        loom::lazy_static! {
            $(#[$attr])* static ref $name: $t = {
                $crate::primitive::created_in_execution();
                $init
            };
        }
        #[cfg(not(loom))]
        shuttle::lazy_static! {
            $(#[$attr])* static ref $name: $t = $init;
        }
    };
}
#[cfg(metalock_model)]
pub(crate) use lazy_static;

/// Under the model checkers, the place of `address` in `seen`, the order in
/// which an execution first used its addresses, adding it if new: how the
/// models pick a home or a stripe, the same in every execution, where
/// addresses differ. The checker does not see this bookkeeping: it only
/// names a table's entries.
#[cfg(metalock_model)]
pub(crate) fn first_use(seen: &std::sync::Mutex<std::vec::Vec<usize>>, address: usize) -> usize {
    let mut seen = seen.lock().unwrap();
    match seen.iter().position(|&used| used == address) {
        Some(nth) => nth,
        None => {
            seen.push(address);
            seen.len() - 1
        }
    }
}

#[cfg(loom)]
std::thread_local! {
    /// Whether `creating_statics` runs on this OS thread, which runs every
    /// thread of a loom model.
    static CREATING_STATICS: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

/// Runs `create`, which creates the crate's statics of this execution.
#[cfg(loom)]
pub(crate) fn creating_statics(create: impl FnOnce()) {
    CREATING_STATICS.set(true);
    create();
    CREATING_STATICS.set(false);
}

/// Tells the user, once per process, that a static was created outside
/// `model::start_execution`, by whichever thread used it first. Written to
/// the process's stderr itself, which the test harness does not capture: a
/// passing model is where a hidden race matters.
#[cfg(loom)]
pub(crate) fn created_in_execution() {
    use std::io::Write;
    static TOLD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    // Relaxed: the flag orders nothing; only its swap's atomicity matters.
    if !CREATING_STATICS.get() && !TOLD.swap(true, std::sync::atomic::Ordering::Relaxed) {
        let _ = writeln!(
            std::io::stderr(),
            "metalock: a loom execution created metalock's statics outside \
             metalock::model::start_execution, on first use: loom then orders the work of the \
             thread that used metalock first before every later use of metalock by any thread, \
             which can hide a data race; call metalock::model::start_execution() first in each \
             execution, or run the model with metalock::model::check"
        );
    }
}

#[cfg(all(not(metalock_model), feature = "std"))]
pub(crate) use std::thread_local;

/// `core::cell::UnsafeCell` with loom's access API, so that code written
/// against loom's checked cell compiles unchanged in a normal build.
#[cfg(not(loom))]
#[derive(Debug)]
#[repr(transparent)]
pub(crate) struct UnsafeCell<T: ?Sized>(core::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> Self {
        Self(core::cell::UnsafeCell::new(value))
    }

    #[inline(always)]
    pub(crate) fn into_inner(self) -> T {
        self.0.into_inner()
    }
}

#[cfg(not(loom))]
impl<T: ?Sized> UnsafeCell<T> {
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// Offers the processor to another thread.
#[cfg(all(metalock_swap_only, not(metalock_model)))]
pub(crate) fn yield_now() {
    crate::sys::get().yield_now();
}

/// Under the model checkers, a switch to another model thread: a spin
/// round of a wait in an execution that asks waits to spin
/// (`monitor::spin_waits`).
#[cfg(all(metalock_model, feature = "__test-hooks"))]
pub(crate) use model::thread::yield_now as model_yield_now;

/// Under loom, the swap-only meta-lock's retry loop: a thread that finds the
/// meta-lock taken blocks until some meta-lock is released, then tries
/// again, where the real loop yields and sleeps in rounds. A failed retry
/// swaps BUSY over BUSY and changes nothing, so only the attempts after a
/// release matter, and these the model still explores in every order; a
/// spinning retry loop instead gives loom infinitely long schedules (a
/// retrier scheduled again and again while the holder never runs).
#[cfg(all(metalock_model, metalock_swap_only))]
pub(crate) mod releases;

/// A bounded spin before blocking: a few rounds of exponentially more spin
/// hints, then a few yields, then `spin` says stop. Short, because a
/// `pause` costs up to ~140 cycles on recent x86 and a waiter that spins too
/// long only burns the core the owner needs; the yields let a thread that
/// was woken onto this core run. Under loom it stops at once: spinning would
/// only hide the other model threads.
#[derive(Debug)]
pub(crate) struct SpinWait {
    round: u32,
    limit: u32,
}

impl Default for SpinWait {
    fn default() -> Self {
        Self::with_limit(Self::ROUNDS)
    }
}

impl SpinWait {
    /// Rounds of spin hints (2, 4, 8 hints) before the yields start.
    pub(crate) const SPIN_ROUNDS: u32 = 3;
    /// Rounds in all, spins and yields, at most.
    pub(crate) const ROUNDS: u32 = 10;

    /// A spin of at most `limit` rounds (at most `ROUNDS`).
    pub(crate) const fn with_limit(limit: u32) -> Self {
        Self {
            round: 0,
            limit: if limit < Self::ROUNDS {
                limit
            } else {
                Self::ROUNDS
            },
        }
    }

    /// Whether this spin has waited a round: a thread that takes the
    /// monitor at its first look learns nothing about spinning from it.
    #[cfg(not(metalock_swap_only))]
    #[inline]
    pub(crate) fn waited(&self) -> bool {
        self.round > 0
    }

    /// Whether this spin may run the whole budget, yields included.
    #[cfg(all(not(metalock_swap_only), not(metalock_model)))]
    #[inline]
    pub(crate) fn is_full(&self) -> bool {
        self.limit == Self::ROUNDS
    }

    /// Whether the next round yields (`false` once the budget is spent).
    #[cfg(not(metalock_model))]
    #[inline]
    pub(crate) fn yields_next(&self) -> bool {
        self.round >= Self::SPIN_ROUNDS && self.round < self.limit
    }

    /// Waits one round; `false` once the budget is spent.
    #[inline]
    pub(crate) fn spin(&mut self) -> bool {
        if cfg!(metalock_model) || self.round >= self.limit {
            return false;
        }
        self.round += 1;
        if self.round <= Self::SPIN_ROUNDS {
            for _ in 0..1_u32 << self.round {
                core::hint::spin_loop();
            }
        } else {
            #[cfg(not(metalock_model))]
            crate::sys::get().yield_now();
        }
        true
    }
}

/// Spins on `done` for a bounded few microseconds (at most
/// [`BRIEF_SPINS`] spin hints) before a caller blocks: for meta-lock
/// hand-offs, where the other side is a running thread a few instructions
/// away and blocking would cost a sleep and a wake-up each time. Returns
/// whether `done` held. Under loom it only checks once, as `SpinWait` does.
#[cfg(not(metalock_swap_only))]
#[inline]
pub(crate) fn spin_briefly_until(mut done: impl FnMut() -> bool) -> bool {
    if !cfg!(metalock_model) {
        for _ in 0..BRIEF_SPINS {
            if done() {
                return true;
            }
            core::hint::spin_loop();
        }
    }
    done()
}

/// The budget of [`spin_briefly_until`]: with `pause` at 40-140 cycles on
/// x86, a few microseconds, less than a sleep and a wake-up.
#[cfg(not(metalock_swap_only))]
pub(crate) const BRIEF_SPINS: u32 = 64;

/// The algorithms of the internal lock and the parker, generic over how
/// they block (`futex`): the platform's wait-on-address in a normal build;
/// under loom an emulation, for their own models, while the crate's other
/// models take the checker's mutex and condition variable below (and, with
/// `--cfg metalock_model_swap_parker`, the parker on the emulation).
#[cfg(any(not(metalock_model), all(loom, feature = "__test-hooks")))]
mod futex;
#[cfg(any(not(metalock_model), all(loom, feature = "__test-hooks")))]
mod swap_mutex;
#[cfg(any(not(metalock_model), all(loom, feature = "__test-hooks")))]
mod swap_parker;

/// Counts the crate's locks the calling thread holds, internal locks and
/// meta-locks, so that its tests can tell that nothing is allocated or
/// freed under one (a global allocator may lock monitors, and its lock may
/// need that lock again). Debug builds only: the benchmarks, which the
/// dev-dependency builds with `__test-hooks` too, are release builds and
/// must not pay for it.
#[cfg(all(not(metalock_model), feature = "__test-hooks", feature = "std"))]
pub mod held;

#[cfg(all(loom, feature = "__test-hooks"))]
pub use futex::ModelFutex;
#[cfg(all(loom, feature = "__test-hooks"))]
pub use swap_mutex::SwapMutex;
#[cfg(all(loom, feature = "__test-hooks"))]
pub use swap_parker::SwapParker;

/// A small blocking lock for the crate's own tables: the pools of execution
/// environments and donated lock records (taken when a thread starts, exits
/// or refills its free list), the locks of condition variables and the
/// shards of the keyed monitors' overflow table. Taken under a meta-lock in
/// one place only, a shard under the meta-lock of its addresses' home
/// (`monitor::home`); and a thread waits for a meta-lock while it holds one
/// in one place only, a wait-table stripe while a notify moves waiters into
/// a monitor's queue (`monitor::wait_table`), and no holder of a meta-lock
/// waits for a stripe. In a normal build, a `SwapMutex` on the platform.
#[cfg(not(metalock_model))]
pub(crate) type SysMutex<T> = swap_mutex::SwapMutex<T, futex::PlatformFutex>;

#[cfg(not(metalock_model))]
impl<T> SysMutex<T> {
    pub(crate) const fn new(data: T) -> Self {
        Self::with_futex(data, futex::PlatformFutex)
    }
}

#[cfg(metalock_model)]
pub(crate) use sys_mutex::SysMutex;

/// In a model build, the checker's mutex, so that the models see every
/// interleaving of the locks the crate takes.
#[cfg(metalock_model)]
mod sys_mutex {
    use super::model::sync::Mutex;

    /// A lock around `T` (see the version of normal builds).
    #[derive(Debug)]
    pub(crate) struct SysMutex<T>(Mutex<T>);

    impl<T> SysMutex<T> {
        pub(crate) fn new(data: T) -> Self {
            Self(Mutex::new(data))
        }

        pub(crate) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
            f(&mut self.0.lock().unwrap())
        }
    }
}

/// A one-token parker, the blocking primitive of every slow path.
///
/// `unpark` makes the token available; `park` consumes it, blocking until it
/// is there. A token that arrives before the `park` is not lost. `park` may
/// also return spuriously, so every caller parks in a loop that re-checks its
/// own condition: this is what makes a stale `unpark` (aimed at a thread that
/// has moved on) harmless. In a normal build, a `SwapParker` on the
/// platform.
#[cfg(not(metalock_model))]
pub(crate) type Parker = swap_parker::SwapParker<futex::PlatformFutex>;

#[cfg(not(metalock_model))]
impl Parker {
    pub(crate) const fn new() -> Self {
        Self::with_futex(futex::PlatformFutex)
    }
}

#[cfg(all(
    metalock_model,
    not(all(loom, feature = "__test-hooks", metalock_model_swap_parker))
))]
pub(crate) use parker::Parker;

#[cfg(all(
    metalock_model,
    not(all(loom, feature = "__test-hooks", metalock_model_swap_parker))
))]
mod parker {
    use super::model::sync::{Condvar, Mutex};
    use crate::sys::Instant;

    /// In a model build the token lives in the checker's mutex with a
    /// condition variable, whose semantics it models exactly (its thread park does not keep a
    /// token for a thread that is blocked elsewhere). A timed park models the
    /// timeout firing at the worst moment: it never blocks and reports a
    /// timeout unless the token is there.
    ///
    /// Invariant: only the thread that owns the EE parks on it.
    #[derive(Debug)]
    pub(crate) struct Parker {
        token: Mutex<bool>,
        condvar: Condvar,
        /// A copy of the token that the checker does not see, so that a
        /// model can count the wake-ups a reused EE brings to its next
        /// thread without ordering anything.
        #[cfg(feature = "__test-hooks")]
        shadow: std::sync::atomic::AtomicBool,
    }

    impl Parker {
        pub(crate) fn new() -> Self {
            Self {
                token: Mutex::new(false),
                condvar: Condvar::new(),
                #[cfg(feature = "__test-hooks")]
                shadow: std::sync::atomic::AtomicBool::new(false),
            }
        }

        pub(crate) fn park(&self, deadline: Option<Instant>) -> bool {
            let mut token = self.token.lock().unwrap();
            if deadline.is_none() {
                while !*token {
                    token = self.condvar.wait(token).unwrap();
                }
            }
            // SeqCst (here and below): a plain `std` atomic, outside the
            // model, written under the token's lock.
            #[cfg(feature = "__test-hooks")]
            self.shadow
                .store(false, std::sync::atomic::Ordering::SeqCst);
            !core::mem::replace(&mut *token, false)
        }

        pub(crate) fn unpark(&self) {
            let mut token = self.token.lock().unwrap();
            *token = true;
            #[cfg(feature = "__test-hooks")]
            self.shadow.store(true, std::sync::atomic::Ordering::SeqCst);
            drop(token);
            self.condvar.notify_one();
        }

        /// Whether an unpark is pending, read without the checker seeing
        /// the read.
        #[cfg(feature = "__test-hooks")]
        pub(crate) fn unpark_pending_unseen(&self) -> bool {
            self.shadow.load(std::sync::atomic::Ordering::SeqCst)
        }
    }
}

#[cfg(all(loom, feature = "__test-hooks", metalock_model_swap_parker))]
pub(crate) use shipped_parker::Parker;

#[cfg(all(metalock_model_swap_parker, not(all(loom, feature = "__test-hooks"))))]
compile_error!(
    "metalock: --cfg metalock_model_swap_parker needs --cfg loom and the `__test-hooks` feature \
     (the crate's own loom models); elsewhere it would be ignored"
);

/// With `--cfg metalock_model_swap_parker` (loom, test hooks), the parker
/// of normal builds, `SwapParker`, on an emulated futex, so that the
/// models check the protocols on the parker that ships, not only on the
/// checker's condition variable.
#[cfg(all(loom, feature = "__test-hooks", metalock_model_swap_parker))]
mod shipped_parker {
    use alloc::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};

    use super::futex::ModelFutex;
    use super::swap_parker::SwapParker;
    use crate::sys::Instant;

    /// `SwapParker` on a futex of its own.
    ///
    /// Invariant: `shadow` is set right after the swap of an `unpark`, and
    /// cleared when `park` returns, right after its last swap, with no
    /// checker operation in between either time. Only the owner parks, so
    /// whenever it is not inside `park` the shadow says whether a token is
    /// pending.
    #[derive(Debug)]
    pub(crate) struct Parker {
        inner: SwapParker<Arc<ModelFutex>>,
        /// A copy of "a token is pending" that the checker does not see
        /// (as in the condition-variable parker).
        shadow: AtomicBool,
    }

    impl Parker {
        pub(crate) fn new() -> Self {
            Self {
                inner: SwapParker::with_futex(Arc::new(ModelFutex::new())),
                shadow: AtomicBool::new(false),
            }
        }

        pub(crate) fn park(&self, deadline: Option<Instant>) -> bool {
            let timed_out = self.inner.park(deadline);
            // SeqCst: a plain `std` atomic outside the model. Whether the
            // park took the token or timed out, its last swap left EMPTY.
            self.shadow.store(false, SeqCst);
            timed_out
        }

        pub(crate) fn unpark(&self) {
            self.inner.unpark_then(|| self.shadow.store(true, SeqCst));
        }

        /// Whether an unpark is pending, read without the checker seeing
        /// the read.
        pub(crate) fn unpark_pending_unseen(&self) -> bool {
            self.shadow.load(SeqCst)
        }
    }
}

#[cfg(all(test, not(metalock_model)))]
mod tests {
    use super::SysMutex;
    use std::panic::AssertUnwindSafe;

    #[test]
    fn a_panic_under_a_sys_mutex_releases_it() {
        let mutex = SysMutex::new(0_u32);
        let unwound = std::panic::catch_unwind(AssertUnwindSafe(|| {
            mutex.with(|n| {
                *n += 1;
                panic!("a check under the lock");
            })
        }));
        assert!(unwound.is_err());
        // Taken again at once: a lock left held would block here forever.
        assert_eq!(mutex.with(|n| *n), 1);
    }
}
