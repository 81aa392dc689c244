//! Java-style monitors for the price of one machine word.
//!
//! Every object that embeds a [`MultiUseWord`] gets a monitor: a reentrant
//! lock with [`wait`](MonitorGuard::wait), [`notify_one`](MonitorGuard::notify_one)
//! and [`notify_all`](MonitorGuard::notify_all), with timeouts, as every Java
//! object has one. [`Synchronized<T>`] is the everyday wrapper: a value
//! reachable only through its monitor.
//!
//! ```
//! use metalock::Synchronized;
//!
//! let counter = Synchronized::new(0_u64);
//! std::thread::scope(|s| {
//!     for _ in 0..4 {
//!         s.spawn(|| {
//!             for _ in 0..1000 {
//!                 *counter.lock() += 1;
//!             }
//!         });
//!     }
//! });
//! assert_eq!(*counter.lock(), 4000);
//! ```
//!
//! # How it works
//!
//! The crate implements the meta-lock of Agesen et al., *An Efficient
//! Meta-lock for Implementing Ubiquitous Synchronization* (OOPSLA '99). The
//! word's two low bits hold the lock state and the third a flag (a fair
//! monitor's, or a summary of the queue); the rest hold the user's payload
//! while nobody synchronizes on the object, or a pointer to a lock record
//! (into which the payload is displaced) while somebody does. A short
//! *meta-lock*, taken by one atomic swap and released by one
//! compare-and-swap, guards every change to that state; contended meta-lock
//! acquisitions are handed off in FIFO order, with no more than a bounded
//! spin of a few microseconds before a waiting thread blocks. An
//! uncontended lock and unlock each take a single compare-and-swap (with
//! the `swap-only` backend, or `meta-lock-only`, every operation goes
//! through the meta-lock instead; on `swap-only` the meta-lock is a
//! test-and-set whose waiters yield and sleep with back-off, not a FIFO
//! hand-off).
//!
//! | module | paper 000 |
//! |---|---|
//! | `word` | the multi-use word, Fig. 2 |
//! | `meta_lock` | get/release meta-lock and the hand-off, section 4.2, Fig. 5, 11, 12 |
//! | `monitor` | enter, exit, wait, notify, sections 4.3-4.4, Fig. 6-8; extra-fast path, 5.2 |
//! | `lock_record` | lock records, Fig. 3 |
//! | `exec_env` | execution environments and their free lists of records, Fig. 1, section 5.1 |
//! | `keyed` | the monitor table for values without a word, paper 002 |
//!
//! # Features
//!
//! - `std` (default): thread-locals, `std::time::Instant`, and blocking on
//!   the futex system call on 64-bit Linux, through `parking_lot_core`
//!   elsewhere. Without it the crate is `#![no_std]` + `alloc` and a
//!   [`platform::Platform`] must be registered.
//! - `stats`: per-thread counters of meta-lock acquisitions, hand-offs,
//!   extra-fast hits and misses, blocking enters, waits, notifies and lock
//!   records allocated, summed by `stats::snapshot()` (paper 000, Tables 2
//!   and 3), and monitor hand-overs. Zero cost when off.
//! - `lock_api`: `RawMonitor`, a raw mutex for `lock_api::Mutex`
//!   (`RawMutex`, `RawMutexFair`, `RawMutexTimed`); not reentrant, as that
//!   contract requires.
//! - `serde`: `Serialize` (under the monitor) and `Deserialize` (into an
//!   unlocked one) for `Synchronized` and `ReentrantSynchronized`.
//! - `meta-lock-only`: every operation goes through the meta-lock (the
//!   paper's "without extra fast" configuration), to reproduce its
//!   comparisons.
//! - `diagnostics`: `diagnostics::snapshot()` (a thread dump) and
//!   `diagnostics::deadlocks()`; nothing of it is built without the
//!   feature. It implies `std`.
//! - `swap-only`: the backend of section 5.4 (a test-and-set meta-lock,
//!   no compare-and-swap, so no extra-fast path) on any target; targets
//!   without a pointer-width compare-and-swap get it anyway.
//! - `shuttle`: the crate's primitives become shuttle's, for model-checking
//!   a program with shuttle's schedulers (as `--cfg loom` does for loom); a
//!   model build only, implying `std`. Under either model checker there is
//!   no `RawMonitor`, `stats` or `diagnostics` (a model's threads and their
//!   environments last one execution, so there is nothing process-wide to
//!   count or list). Under `--cfg loom`, `metalock::model` runs a user's loom
//!   model with the crate's statics created first in each execution.
//!
//! # Values without a word, and interrupts
//!
//! With `std`, `metalock::lock(&value)` gives any value a monitor, found by its
//! address in a table of words (paper 002), and every guard that can wait
//! has `wait_interruptibly` and friends, which an `InterruptHandle` ends
//! (paper 000, section 2.1), as it ends a `lock_interruptibly`.
#![cfg_attr(not(feature = "std"), no_std)]
#![cfg_attr(
    all(
        target_arch = "sparc",
        metalock_asm_swap,
        not(any(metalock_model, miri))
    ),
    feature(asm_experimental_arch)
)]
#![warn(missing_docs, missing_debug_implementations)]

// Loom's threads, cells and thread-locals are std's: the first error of
// such a build says so, ahead of those of the `std` paths it reaches.
#[cfg(all(loom, not(feature = "std")))]
compile_error!(
    "metalock under `--cfg loom` needs its `std` feature (on by default): loom's threads, \
     cells and thread-locals are std's; build the models without `--no-default-features`"
);

extern crate alloc;

/// Counts an event in the calling thread's execution environment; nothing
/// at all without the `stats` feature.
macro_rules! count {
    ($ee:expr, $field:ident) => {
        count!($ee, $field, 1)
    };
    ($ee:expr, $field:ident, $n:expr) => {
        #[cfg(all(feature = "stats", not(metalock_model)))]
        $crate::exec_env::counters::add(&$ee.stats.$field, $n);
    };
}

/// Declares a function `const`, except under loom, whose atomics and cells
/// have no `const` constructors: one body for both.
macro_rules! const_unless_loom {
    ($(#[$attr:meta])* $vis:vis fn $name:ident($($args:tt)*) -> $ret:ty $body:block) => {
        $(#[$attr])*
        #[cfg(not(metalock_model))]
        $vis const fn $name($($args)*) -> $ret $body

        $(#[$attr])*
        #[cfg(metalock_model)]
        $vis fn $name($($args)*) -> $ret $body
    };
}

// The modules form layers; each imports only from the layers before it:
//
// 1. platform and primitives: `arch` (the target's atomics), `primitive`
//    (the loom facade, whose parker and internal lock block through `sys`),
//    `sys` (the platform seam);
// 2. `word`: the word's layout;
// 3. `lock_record`;
// 4. `exec_env`: execution environments and their free lists;
// 5. `meta_lock`;
// 6. `monitor` (the protocol: enter, exit, wait, notify) and `payload`;
// 7. the public API: `interrupt`, `guard`, `synchronized`, `reentrant`,
//    `keyed` (the monitor table, a second way to find a word), `condition`,
//    `raw`, `stats`, `diagnostics`, `platform`.
mod arch;
#[cfg(all(doctest, feature = "std", target_has_atomic = "ptr"))]
mod compile_fail;
mod condition;
#[cfg(all(feature = "diagnostics", not(metalock_model)))]
pub mod diagnostics;
mod exec_env;
mod guard;
#[cfg(feature = "std")]
mod interrupt;
#[cfg(feature = "std")]
mod keyed;
mod lock_record;
mod meta_lock;
#[cfg(loom)]
pub mod model;
mod monitor;
mod payload;
mod primitive;
#[cfg(all(feature = "lock_api", not(metalock_model)))]
mod raw;
mod reentrant;
#[cfg(all(feature = "stats", not(metalock_model)))]
pub mod stats;
pub mod synchronized;
mod sys;
mod word;

pub mod platform {
    //! The seam between the algorithm and the operating system.
    //!
    //! Everything the crate needs from the system goes through a [`Platform`]:
    //! blocking the current thread on an address until another thread wakes it
    //! (with an optional deadline), yielding, a monotonic clock and, without
    //! `std`, the current thread's execution-environment slot. With the default
    //! `std` feature the crate supplies `StdPlatform` and nothing needs
    //! configuring; with `default-features = false` a user registers a
    //! `&'static dyn Platform` once with `set_platform` before the first lock,
    //! and calls `release_current_thread` from each thread's exit path.
    #[cfg(all(not(feature = "std"), not(metalock_model)))]
    pub use crate::exec_env::release_current_thread;
    #[cfg(feature = "std")]
    pub use crate::sys::StdPlatform;
    pub use crate::sys::{Instant, Platform};
    #[cfg(not(feature = "std"))]
    pub use crate::sys::{PlatformAlreadySet, set_platform};
}

pub use condition::Condition;
pub use exec_env::lock_records_allocated;
#[cfg(target_has_atomic = "ptr")]
pub use guard::ArcMonitorGuard;
pub use guard::{AsMonitorGuard, Monitor, MonitorGuard, WaitTimeoutResult};
#[cfg(feature = "std")]
pub use interrupt::{InterruptHandle, Interrupted, interrupt_handle, interrupted};
#[cfg(all(feature = "std", target_has_atomic = "ptr"))]
pub use keyed::{
    ArcKeyedGuard, lock_arc, lock_arc_interruptibly, try_lock_arc, try_lock_arc_for,
    try_lock_arc_for_interruptibly, try_lock_arc_until, try_lock_arc_until_interruptibly,
};
#[cfg(feature = "std")]
pub use keyed::{
    KeyedGuard, has_queued_threads, has_waiters, is_held_by_current_thread, is_locked,
    keyed_monitors, lock, lock_interruptibly, queue_length, synchronized, try_lock, try_lock_for,
    try_lock_for_interruptibly, try_lock_until, try_lock_until_interruptibly, wait_set_length,
};
#[cfg(all(feature = "lock_api", not(metalock_model)))]
pub use raw::{RawMonitor, RawMonitorToken};
#[cfg(target_has_atomic = "ptr")]
pub use reentrant::ArcReentrantSynchronizedGuard;
pub use reentrant::{
    MappedReentrantSynchronizedGuard, ReentrantSynchronized, ReentrantSynchronizedGuard,
};
#[cfg(target_has_atomic = "ptr")]
pub use synchronized::ArcSynchronizedGuard;
pub use synchronized::{MappedSynchronizedGuard, Synchronized, SynchronizedGuard};
pub use sys::Instant;
pub use word::MultiUseWord;

/// Test seams: hooks on the hand-off and monitor slow paths, the count of
/// execution environments and of internal locks held, a keyed home's pins,
/// the calling thread's execution environment, running code under a
/// meta-lock (`MultiUseWord::__with_meta_lock`), and under the model
/// checkers the end of a thread and its donated records. Only with the
/// `__test-hooks` feature, which the crate's own tests enable; not part of
/// the API.
#[cfg(feature = "__test-hooks")]
#[doc(hidden)]
pub mod __test_hooks {
    #[cfg(metalock_model)]
    pub use crate::exec_env::{
        StrayUnpark, donated_records_taken, end_thread, model_thread_exits, stale_wakeups_taken,
    };
    pub use crate::exec_env::{exec_envs_allocated, thread_exec_env, thread_has_exec_env};
    #[cfg(metalock_model)]
    pub use crate::meta_lock::hooks::SpinEnd;
    pub use crate::meta_lock::hooks::{GiveUp, HandoffEvent, set_handoff_hook};
    #[cfg(metalock_model)]
    pub use crate::monitor::share_one_home;
    #[cfg(metalock_model)]
    pub use crate::monitor::{SpinningWaits, share_one_stripe, spin_waits, words_share_a_stripe};

    /// Starts an execution of the crate's own models: the statics first
    /// (`model::start_execution`), then every keyed address in one home and
    /// every word's waits in one stripe, so that the models meet rekeying,
    /// the overflow table and shared stripes on every run.
    #[cfg(loom)]
    pub fn start_crate_model_execution() {
        crate::model::start_execution();
        share_one_home();
        words_share_a_stripe();
    }
    #[cfg(feature = "std")]
    pub use crate::keyed::home_pins;
    #[cfg(all(feature = "std", not(metalock_model)))]
    pub use crate::primitive::held::locks_held;
    /// The internal lock and parker the crate ships, on an emulated futex,
    /// for their loom models (`loom_tests/primitives.rs`).
    #[cfg(loom)]
    pub use crate::primitive::{ModelFutex, SwapMutex, SwapParker};
}

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
