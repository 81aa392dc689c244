//! `Synchronized<T>`: a value reachable only through its monitor.
//!
//! # Why this is sound
//!
//! A guard hands out `&mut T`, so at any moment at most one live guard may
//! exist for a `Synchronized`, and nobody else may read the value while one
//! does. Java monitors are reentrant and `wait` releases every level, which
//! would break both: a second guard on the owner's thread would alias the
//! first, and a `wait` through one guard would let another thread in while a
//! sibling guard still hands out `&mut T`. The rules that rule this out:
//!
//! 1. **No reentry.** [`Synchronized::lock`] by the thread that holds the
//!    monitor panics, and [`Synchronized::try_lock`] returns `None`. So a
//!    thread holds a `Synchronized` at depth 1, through exactly one guard.
//! 2. **The word stays private.** `Synchronized` neither implements
//!    [`Monitor`](crate::Monitor) nor exposes its word, so the reentrant raw
//!    monitor cannot be used to reach depth 2 behind the guard's back.
//! 3. **Waiting borrows the guard.** `wait*` take `&mut self`, so no
//!    reference obtained from the guard lives across the wait, while the
//!    monitor belongs to other threads.
//! 4. **Guards stay home.** Guards are not `Send`, nor `Sync`: the monitor
//!    is owned by the thread that entered it, and only that thread can release
//!    it or reach the value through it. (A mapped guard, which cannot wait
//!    or notify, is `Sync` when its part is: shared, it lends only `&U`.)
//! 5. **A forgotten guard keeps the value locked.** After `mem::forget` the
//!    monitor stays owned; a later `lock` on the same thread panics by rule 1
//!    instead of handing out a second `&mut T`.
//!
//! The raw [`MultiUseWord`] monitor gives no access to data, so it keeps the
//! full Java semantics: reentrant, and `wait` at any depth.
//!
//! What the type system rules out does not compile:
//!
//! ```compile_fail,E0277
//! // The monitor guard inside a guard is out of reach: the method that
//! // returns it asks for a token that no safe code outside the crate can
//! // make (no constructor, no `Default`).
//! fn reach<G: metalock::AsMonitorGuard>(guard: &G) {
//!     let _ = guard.__monitor_guard(Default::default());
//! }
//! ```
//!
//! ```compile_fail,E0277
//! let s = metalock::Synchronized::new(0);
//! let guard = s.lock();
//! std::thread::scope(|scope| {
//!     scope.spawn(move || drop(guard)); // guards are not Send
//! });
//! ```
//!
//! ```compile_fail,E0499
//! let s = metalock::Synchronized::new(0);
//! let mut guard = s.lock();
//! let value: &mut i32 = &mut guard;
//! guard.wait(); // `value` would outlive the release of the monitor
//! *value += 1;
//! ```
//!
//! ```compile_fail,E0277
//! fn shared<T: Sync>(_: &T) {}
//! let s = metalock::Synchronized::new(0);
//! let guard = s.lock();
//! shared(&guard); // guards are not Sync
//! ```

// `Arc` needs a pointer-width compare-and-swap, which swap-only targets
// lack.
#[cfg(target_has_atomic = "ptr")]
mod arc;
#[cfg(target_has_atomic = "ptr")]
mod arc_waiting;
mod mapped;
mod timed;
mod value_guard;
mod waiting;

#[cfg(target_has_atomic = "ptr")]
pub use arc::ArcSynchronizedGuard;
pub use mapped::MappedSynchronizedGuard;
pub use value_guard::SynchronizedGuard;

use core::fmt;

use crate::exec_env::ExecEnv;
use crate::guard::{self, MonitorGuard};
use crate::lock_record::LockRecord;
use crate::primitive::UnsafeCell;
use crate::word::MultiUseWord;

/// A value of type `T` protected by a one-word monitor: reach it through
/// [`lock`](Self::lock), and use the guard's `wait` and `notify` methods to
/// coordinate with other threads, as with a Java `synchronized` object.
///
/// ```
/// use metalock::Synchronized;
/// use std::{sync::Arc, thread};
///
/// let queue = Arc::new(Synchronized::new(Vec::new()));
/// let consumer = {
///     let queue = Arc::clone(&queue);
///     thread::spawn(move || {
///         let mut items = queue.lock();
///         items.wait_while(|items| items.is_empty());
///         items.pop().unwrap()
///     })
/// };
/// {
///     let mut items = queue.lock();
///     items.push(42);
///     items.notify_all();
/// }
/// assert_eq!(consumer.join().unwrap(), 42);
/// ```
///
/// Unlike the raw [`MultiUseWord`] monitor it is not reentrant: see the
/// [module documentation](mod@crate::synchronized) for the rules that keep it
/// sound.
///
/// As in Java, and unlike `std::sync::Mutex`, there is no poisoning: a
/// panic while a guard lives (in the caller's code, a `map` closure or a
/// `wait_while` condition) releases the monitor, and the next owner sees the
/// value as the panic left it.
///
/// Invariant: `value` is only accessed by the thread that owns `word`'s
/// monitor, through its single guard, or through `&mut self`.
pub struct Synchronized<T: ?Sized> {
    word: MultiUseWord,
    value: UnsafeCell<T>,
}

// SAFETY: moving a `Synchronized` to another thread moves the value.
unsafe impl<T: ?Sized + Send> Send for Synchronized<T> {}
// SAFETY: sharing it lets other threads reach the value only through the
// monitor, one thread at a time; the value moves between threads, so it must
// be Send, as for `std::sync::Mutex`.
unsafe impl<T: ?Sized + Send> Sync for Synchronized<T> {}

impl<T> Synchronized<T> {
    const_unless_loom! {
        /// Wraps `value`, unlocked.
        ///
        /// ```
        /// use metalock::Synchronized;
        ///
        /// // `const`: a `Synchronized` can be a `static`.
        /// static HITS: Synchronized<u32> = Synchronized::new(0);
        ///
        /// std::thread::scope(|s| {
        ///     for _ in 0..4 {
        ///         s.spawn(|| *HITS.lock() += 1);
        ///     }
        /// });
        /// assert_eq!(*HITS.lock(), 4);
        /// ```
        pub fn new(value: T) -> Self {
            Self {
                word: MultiUseWord::new(),
                value: UnsafeCell::new(value),
            }
        }
    }

    const_unless_loom! {
        /// Wraps `value` in a fair monitor, unlocked: every release hands the
        /// monitor to the first thread of its entry queue (see
        /// [`MultiUseWord::new_fair`]), like `parking_lot::FairMutex`.
        ///
        /// ```
        /// use metalock::Synchronized;
        ///
        /// let fifo = Synchronized::new_fair(Vec::<u32>::new());
        /// assert!(fifo.is_fair());
        /// fifo.lock().push(1);
        /// ```
        pub fn new_fair(value: T) -> Self {
            Self {
                word: MultiUseWord::new_fair(),
                value: UnsafeCell::new(value),
            }
        }
    }

    /// Unwraps the value.
    ///
    /// ```
    /// let names = metalock::Synchronized::new(vec!["a"]);
    /// assert_eq!(names.into_inner(), ["a"]);
    /// ```
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }
}

impl<T: ?Sized> Synchronized<T> {
    /// Enters the monitor, blocking while another thread holds it, and
    /// returns the guard through which the value is reached.
    ///
    /// # Panics
    ///
    /// If the calling thread holds this monitor already (a `Synchronized` is
    /// not reentrant; see the module documentation).
    ///
    /// ```
    /// use metalock::Synchronized;
    /// use std::panic::{AssertUnwindSafe, catch_unwind};
    ///
    /// let names = Synchronized::new(vec!["a"]);
    /// let mut guard = names.lock();
    /// guard.push("b");
    /// // Locking again on the same thread would alias the value: it panics.
    /// assert!(catch_unwind(AssertUnwindSafe(|| drop(names.lock()))).is_err());
    /// drop(guard);
    /// assert_eq!(*names.lock(), ["a", "b"]);
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn lock(&self) -> SynchronizedGuard<'_, T> {
        self.guard(self.word.enter::<false>(ExecEnv::current()))
    }

    /// The guard of `record`, which owns this monitor at depth 1.
    #[inline(always)]
    fn guard(&self, record: &'static LockRecord) -> SynchronizedGuard<'_, T> {
        SynchronizedGuard {
            monitor: MonitorGuard::new(&self.word, record),
            sync: self,
        }
    }

    /// Enters the monitor if it is free; `None` if another thread holds it or
    /// the calling thread does.
    ///
    /// ```
    /// let value = metalock::Synchronized::new(1);
    /// let held = value.try_lock().unwrap();
    /// assert!(value.try_lock().is_none()); // not reentrant
    /// drop(held);
    /// ```
    #[inline]
    pub fn try_lock(&self) -> Option<SynchronizedGuard<'_, T>> {
        guard::try_entered!(|ee| self.word.try_enter::<false>(ee)).map(|record| self.guard(record))
    }

    /// Whether the monitor is fair (made by [`new_fair`](Self::new_fair)).
    ///
    /// ```
    /// use metalock::Synchronized;
    ///
    /// assert!(Synchronized::new_fair(0).is_fair());
    /// assert!(!Synchronized::new(0).is_fair());
    /// ```
    pub fn is_fair(&self) -> bool {
        self.word.is_fair()
    }

    /// How many threads are queued to enter the monitor now (a snapshot,
    /// for monitoring); see [`MultiUseWord::queue_length`].
    ///
    /// ```
    /// let jobs = metalock::Synchronized::new(Vec::<u32>::new());
    /// let held = jobs.lock();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| jobs.lock().push(1));
    ///     while jobs.queue_length() == 0 {
    ///         std::thread::yield_now();
    ///     }
    ///     drop(held);
    /// });
    /// assert_eq!(jobs.queue_length(), 0);
    /// ```
    pub fn queue_length(&self) -> usize {
        self.word.queue_length()
    }

    /// How many threads wait in the monitor's own wait set now (a
    /// snapshot, for monitoring); see [`MultiUseWord::wait_set_length`].
    ///
    /// ```
    /// let jobs = metalock::Synchronized::new(Vec::<u32>::new());
    /// std::thread::scope(|s| {
    ///     s.spawn(|| jobs.lock().wait_while(|jobs| jobs.is_empty()));
    ///     while jobs.wait_set_length() == 0 {
    ///         std::thread::yield_now();
    ///     }
    ///     let mut guard = jobs.lock();
    ///     guard.push(1);
    ///     guard.notify_all();
    /// });
    /// assert_eq!(jobs.wait_set_length(), 0);
    /// ```
    pub fn wait_set_length(&self) -> usize {
        self.word.wait_set_length()
    }

    /// Whether threads are queued to enter the monitor now (a snapshot,
    /// its cost not growing with the queue); see
    /// [`MultiUseWord::has_queued_threads`].
    ///
    /// ```
    /// let jobs = metalock::Synchronized::new(Vec::<u32>::new());
    /// let held = jobs.lock();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| jobs.lock().push(1));
    ///     while !jobs.has_queued_threads() {
    ///         std::thread::yield_now();
    ///     }
    ///     drop(held);
    /// });
    /// assert!(!jobs.has_queued_threads());
    /// ```
    pub fn has_queued_threads(&self) -> bool {
        self.word.has_queued_threads()
    }

    /// Whether some thread waits in the monitor's own wait set now (a
    /// snapshot); see [`MultiUseWord::has_waiters`].
    ///
    /// ```
    /// let jobs = metalock::Synchronized::new(Vec::<u32>::new());
    /// std::thread::scope(|s| {
    ///     s.spawn(|| jobs.lock().wait_while(|jobs| jobs.is_empty()));
    ///     while !jobs.has_waiters() {
    ///         std::thread::yield_now();
    ///     }
    ///     let mut guard = jobs.lock();
    ///     guard.push(1);
    ///     guard.notify_all();
    /// });
    /// assert!(!jobs.has_waiters());
    /// ```
    pub fn has_waiters(&self) -> bool {
        self.word.has_waiters()
    }

    /// Whether some thread holds the monitor now (a snapshot).
    ///
    /// ```
    /// use metalock::Synchronized;
    ///
    /// let value = Synchronized::new(0);
    /// assert!(!value.is_locked());
    /// let guard = value.lock();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| assert!(value.is_locked())); // whichever thread holds it
    /// });
    /// drop(guard);
    /// assert!(!value.is_locked());
    /// ```
    pub fn is_locked(&self) -> bool {
        self.word.is_locked()
    }

    /// Whether the calling thread holds the monitor.
    ///
    /// ```
    /// use metalock::Synchronized;
    ///
    /// let value = Synchronized::new(0);
    /// let guard = value.lock();
    /// assert!(value.is_held_by_current_thread());
    /// std::thread::scope(|s| {
    ///     s.spawn(|| assert!(!value.is_held_by_current_thread()));
    /// });
    /// drop(guard);
    /// assert!(!value.is_held_by_current_thread());
    /// ```
    pub fn is_held_by_current_thread(&self) -> bool {
        self.word.is_held_by_current_thread()
    }

    /// The value, without locking: `&mut self` proves nobody else can reach
    /// it.
    ///
    /// ```
    /// let mut value = metalock::Synchronized::new(1);
    /// *value.get_mut() += 1;
    /// assert_eq!(*value.lock(), 2);
    /// ```
    pub fn get_mut(&mut self) -> &mut T {
        // SAFETY: `&mut self` excludes every guard and every other access.
        self.value.with_mut(|value| unsafe { &mut *value })
    }

    /// A raw pointer to the value, without locking (as parking_lot's
    /// `Mutex::data_ptr`). Reading or writing through it is sound only
    /// while this thread holds the monitor or no other thread can reach the
    /// `Synchronized`, and while no reference to the value that a guard or
    /// `get_mut` gave is in use (the access must not alias it); that is the
    /// caller's to ensure.
    ///
    /// ```
    /// use metalock::Synchronized;
    ///
    /// let value = Synchronized::new(5);
    /// let guard = value.lock();
    /// // SAFETY: we hold the monitor.
    /// assert_eq!(unsafe { *value.data_ptr() }, 5);
    /// drop(guard);
    /// ```
    pub fn data_ptr(&self) -> *mut T {
        self.value.with_mut(|value| value)
    }
}

impl<T: Default> Default for Synchronized<T> {
    fn default() -> Self {
        Self::new(T::default())
    }
}

impl<T> From<T> for Synchronized<T> {
    fn from(value: T) -> Self {
        Self::new(value)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Synchronized<T> {
    /// Shows the value if the monitor is free, else `<locked>` (this thread's
    /// or another's). It never waits for the monitor, only, as `try_lock`
    /// does, for the meta-lock of its word when another thread is in the
    /// middle of an operation on it: a few instructions, or a hand-off.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Synchronized");
        match self.try_lock() {
            Some(guard) => d.field("value", &&*guard),
            None => d.field("value", &format_args!("<locked>")),
        };
        d.finish()
    }
}

/// Serializes the value under the monitor, as parking_lot's `Mutex` does:
/// it blocks while another thread holds the monitor, and panics if the
/// calling thread does (a `Synchronized` is not reentrant).
#[cfg(feature = "serde")]
impl<T: ?Sized + serde::Serialize> serde::Serialize for Synchronized<T> {
    #[track_caller]
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.lock().serialize(serializer)
    }
}

/// Deserializes the value and wraps it, unlocked.
#[cfg(feature = "serde")]
impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Synchronized<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Synchronized::new)
    }
}
