//! [`SynchronizedGuard`]: the value of a `Synchronized`, and its monitor's
//! wait and notify, for as long as the guard lives.

use core::fmt;
use core::ops::{Deref, DerefMut};

use super::Synchronized;
use crate::guard::{self, AsMonitorGuard, MonitorGuard};

/// Exclusive access to the value of a [`Synchronized`], and to its monitor's
/// `wait` and `notify`. Dropping the guard releases the monitor, on every
/// exit from its scope, panics included.
///
/// The monitor's methods (`wait`, `wait_for`, `wait_until`, their
/// `_interruptibly` and `_while` forms, `notify_one`, `notify_all`,
/// `unlock_fair`) are the guard's own, so they come before methods of `T`
/// with the same names: with a `Synchronized<std::process::Child>`,
/// `guard.wait()` waits on the monitor, and the child's is
/// `(*guard).wait()`.
///
/// ```
/// use metalock::Synchronized;
///
/// let jobs = Synchronized::new(Vec::new());
/// std::thread::scope(|s| {
///     s.spawn(|| {
///         let mut jobs = jobs.lock();
///         jobs.wait_while(|jobs| jobs.is_empty());
///         assert_eq!(jobs.pop(), Some("job"));
///     });
///     let mut guard = jobs.lock();
///     guard.push("job");
///     guard.notify_one();
/// });
/// ```
///
/// Invariant: `monitor` owns the monitor of `sync`, at depth 1.
#[must_use = "the monitor is released as soon as the guard is dropped"]
pub struct SynchronizedGuard<'a, T: ?Sized> {
    pub(super) monitor: MonitorGuard<'a>,
    pub(super) sync: &'a Synchronized<T>,
}

impl<'a, T: ?Sized> SynchronizedGuard<'a, T> {
    /// Releases the monitor, handing it to the first thread queued to enter
    /// if there is one (see [`MonitorGuard::unlock_fair`]).
    ///
    /// ```
    /// use metalock::Synchronized;
    ///
    /// let value = Synchronized::new(1);
    /// let mut guard = value.lock();
    /// *guard += 1;
    /// guard.unlock_fair();
    /// assert_eq!(*value.lock(), 2);
    /// ```
    #[inline]
    pub fn unlock_fair(self) {
        self.monitor.unlock_fair();
    }

    /// Releases the monitor while `f` runs, and locks it again before
    /// returning, also if `f` panics (parking_lot's `MutexGuard::unlocked`).
    /// An associated function, called as `SynchronizedGuard::unlocked(&mut
    /// guard, f)`, so that it cannot clash with a method of `T`.
    ///
    /// `f` must not leave this monitor held (a guard of it still alive when
    /// `f` ends: returned, stored elsewhere, or forgotten): the process then
    /// aborts with a message, as re-entering would alias the value.
    ///
    /// ```
    /// use metalock::{Synchronized, SynchronizedGuard};
    ///
    /// let jobs = Synchronized::new(vec![1, 2]);
    /// let mut guard = jobs.lock();
    /// let job = guard.pop().unwrap();
    /// // Run the job without blocking the queue.
    /// let result = SynchronizedGuard::unlocked(&mut guard, || {
    ///     assert!(!jobs.is_held_by_current_thread());
    ///     job * 10
    /// });
    /// guard.push(result);
    /// assert_eq!(*guard, [1, 20]);
    /// ```
    pub fn unlocked<U>(guard: &mut Self, f: impl FnOnce() -> U) -> U {
        guard.monitor.release_while::<false, U>(false, f)
    }

    /// As [`unlocked`](Self::unlocked), handing the monitor to the first
    /// thread of its entry queue when it releases it (see
    /// [`unlock_fair`](Self::unlock_fair)).
    ///
    /// ```
    /// use metalock::{Synchronized, SynchronizedGuard};
    ///
    /// let counter = Synchronized::new(0);
    /// let mut guard = counter.lock();
    /// *guard += 1;
    /// SynchronizedGuard::unlocked_fair(&mut guard, || {
    ///     // The monitor is free meanwhile: another thread gets in.
    ///     std::thread::scope(|s| {
    ///         s.spawn(|| *counter.lock() += 10);
    ///     });
    /// });
    /// *guard += 1;
    /// assert_eq!(*guard, 12);
    /// ```
    pub fn unlocked_fair<U>(guard: &mut Self, f: impl FnOnce() -> U) -> U {
        guard.monitor.release_while::<false, U>(true, f)
    }

    /// Hands the monitor to the first thread of its entry queue, if any, and
    /// locks it again behind that thread (parking_lot's `MutexGuard::bump`); does
    /// nothing when its word shows no queued thread, a hint that may be stale
    /// (see [`MonitorGuard::bump`](crate::MonitorGuard::bump)).
    ///
    /// ```
    /// use metalock::{Synchronized, SynchronizedGuard};
    ///
    /// let turns = Synchronized::new(Vec::new());
    /// let mut guard = turns.lock();
    /// guard.push("main");
    /// std::thread::scope(|s| {
    ///     s.spawn(|| turns.lock().push("worker"));
    ///     // Keeps the monitor, but lets the worker have its turn once it queues.
    ///     while guard.len() < 2 {
    ///         SynchronizedGuard::bump(&mut guard);
    ///         std::thread::yield_now();
    ///     }
    /// });
    /// assert_eq!(*guard, ["main", "worker"]);
    /// ```
    pub fn bump(guard: &mut Self) {
        guard.monitor.bump_as::<false>();
    }

    /// The `Synchronized` this guard holds (lock_api's `MutexGuard::mutex`).
    /// An associated function, so that it cannot clash with a method of `T`.
    ///
    /// ```
    /// use metalock::{Synchronized, SynchronizedGuard};
    ///
    /// let counter = Synchronized::new(0);
    /// let guard = counter.lock();
    /// assert!(std::ptr::eq(SynchronizedGuard::synchronized(&guard), &counter));
    /// assert!(SynchronizedGuard::synchronized(&guard).is_held_by_current_thread());
    /// ```
    pub fn synchronized(guard: &Self) -> &'a Synchronized<T> {
        guard.sync
    }
}

impl<T: ?Sized> guard::sealed::Sealed for SynchronizedGuard<'_, T> {
    fn __monitor_guard(&self, _: guard::sealed::Token) -> guard::sealed::MonitorRef<'_> {
        self.monitor.monitor_ref()
    }
}

impl<T: ?Sized> AsMonitorGuard for SynchronizedGuard<'_, T> {
    type Target = T;

    fn __target(&mut self) -> &mut T {
        self
    }
}

impl<T: ?Sized> Deref for SynchronizedGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: the guard owns the monitor (type invariant), so no other
        // access to the value exists while the guard is borrowed.
        self.sync.value.with(|value| unsafe { &*value })
    }
}

impl<T: ?Sized> DerefMut for SynchronizedGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and `&mut self` makes this access unique.
        self.sync.value.with_mut(|value| unsafe { &mut *value })
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for SynchronizedGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for SynchronizedGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}
