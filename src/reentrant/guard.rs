//! [`ReentrantSynchronizedGuard`]: one level of a `ReentrantSynchronized`'s
//! monitor, lending `&T`, with the monitor's wait and notify.

use core::fmt;
use core::ops::Deref;

use crate::guard::{self, AsMonitorGuard, MonitorGuard};

use super::ReentrantSynchronized;
use super::waits::{self, OneLevelDeep, reentrant_guard_methods};

/// One level of ownership of a
/// [`ReentrantSynchronized`](crate::ReentrantSynchronized)'s monitor:
/// `Deref` to the value, and [`MonitorGuard`]'s methods, whose `wait_while`
/// conditions see `&T`. Dropping it releases its level, on every exit,
/// panics included.
///
/// It waits only one level deep, through the thread's outermost guard (a
/// wait deeper panics before it releases anything, as does a `Condition`'s
/// wait with it): below an outer guard, a method of the value may still be
/// running on this thread (`outer.with(|| inner.wait())`), and a wait there
/// would let another thread reach the value in the middle of it, which a
/// value that is not `Sync` (the reason to use this type) must never see.
/// One level deep the wait borrows the only guard mutably, so no reference
/// to the value lives across it.
///
/// ```
/// use metalock::ReentrantSynchronized;
/// use std::cell::Cell;
/// use std::panic::{AssertUnwindSafe, catch_unwind};
///
/// let ready = ReentrantSynchronized::new(Cell::new(false));
/// std::thread::scope(|s| {
///     s.spawn(|| {
///         let guard = ready.lock();
///         guard.set(true);
///         guard.notify_all();
///     });
///     let mut guard = ready.lock();
///     {
///         let mut inner = ready.lock();
///         let refused = catch_unwind(AssertUnwindSafe(|| inner.wait()));
///         assert!(refused.is_err(), "two levels deep: refused");
///     }
///     guard.wait_while(|ready| !ready.get());
///     assert_eq!(guard.depth(), 1);
/// });
/// ```
///
/// Invariant: `monitor` owns the monitor of `sync`.
#[must_use = "the monitor is released as soon as the guard is dropped"]
pub struct ReentrantSynchronizedGuard<'a, T: ?Sized> {
    pub(super) monitor: MonitorGuard<'a>,
    pub(super) sync: &'a ReentrantSynchronized<T>,
}

impl<'a, T: ?Sized> ReentrantSynchronizedGuard<'a, T> {
    /// The monitor, lent to a wait that checks the depth rule, and the
    /// value its condition sees.
    fn parts(&mut self) -> (OneLevelDeep<'_, 'a>, &'a T) {
        (
            OneLevelDeep {
                monitor: &mut self.monitor,
                guard: Self::GUARD,
            },
            &self.sync.value,
        )
    }

    reentrant_guard_methods!("ReentrantSynchronizedGuard", "lock", "", "");

    /// The `ReentrantSynchronized` this guard holds (lock_api's
    /// `ReentrantMutexGuard::remutex`). An associated function, so that it
    /// cannot clash with a method of `T`.
    ///
    /// ```
    /// use metalock::{ReentrantSynchronized, ReentrantSynchronizedGuard};
    ///
    /// let value = ReentrantSynchronized::new(0);
    /// let guard = value.lock();
    /// assert!(std::ptr::eq(ReentrantSynchronizedGuard::synchronized(&guard), &value));
    /// ```
    pub fn synchronized(guard: &Self) -> &'a ReentrantSynchronized<T> {
        guard.sync
    }

    /// Releases this level, handing the monitor to the first queued thread
    /// if that frees it (see [`MonitorGuard::unlock_fair`]).
    pub fn unlock_fair(self) {
        self.monitor.unlock_fair();
    }
}

impl<T: ?Sized> Deref for ReentrantSynchronizedGuard<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        &self.sync.value
    }
}

impl<T: ?Sized> guard::sealed::Sealed for ReentrantSynchronizedGuard<'_, T> {
    /// Only a `Condition`'s waits ask: one level deep only, as the guard's
    /// own.
    #[track_caller]
    fn __monitor_guard(&self, _: guard::sealed::Token) -> guard::sealed::MonitorRef<'_> {
        waits::check_wait_depth(self.monitor.depth(), Self::GUARD);
        self.monitor.monitor_ref()
    }
}

/// A [`Condition`](crate::Condition)'s `wait_while` sees nothing (`()`), as
/// with a `MonitorGuard`: the guard lends only `&T`, and the condition gets
/// `&mut`.
impl<T: ?Sized> AsMonitorGuard for ReentrantSynchronizedGuard<'_, T> {
    type Target = ();

    fn __target(&mut self) -> &mut () {
        self.monitor.__target()
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for ReentrantSynchronizedGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for ReentrantSynchronizedGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}
