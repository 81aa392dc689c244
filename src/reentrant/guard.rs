//! [`ReentrantSynchronizedGuard`]: one level of a `ReentrantSynchronized`'s
//! monitor, lending `&T`, with the monitor's wait and notify.

use core::fmt;
use core::ops::Deref;
use core::time::Duration;

#[cfg(feature = "std")]
use crate::guard::wait_while_interruptibly_until;
use crate::guard::{
    self, AsMonitorGuard, MonitorGuard, WaitTimeoutResult, check_depth_one, deadline_after,
    wait_while_until,
};
#[cfg(feature = "std")]
use crate::interrupt::Interrupted;
use crate::monitor::WaitSet;
use crate::sys::Instant;

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
/// Invariant: `monitor` owns the monitor of the `ReentrantSynchronized`
/// whose value `value` is.
#[must_use = "the monitor is released as soon as the guard is dropped"]
pub struct ReentrantSynchronizedGuard<'a, T: ?Sized> {
    pub(super) monitor: MonitorGuard<'a>,
    pub(super) value: &'a T,
}

/// Panics unless a `ReentrantSynchronizedGuard` that is to wait is the
/// thread's only one of its monitor (see the type's docs).
#[track_caller]
fn check_wait_depth(depth: usize) {
    if depth != 1 {
        panic!(
            "metalock: a ReentrantSynchronizedGuard waits only one level deep, and this thread \
             holds the monitor {depth} levels deep: an outer level may be inside a method of the \
             value, which another thread would reach during the wait; wait through the \
             outermost guard"
        );
    }
}

impl<'a, T: ?Sized> ReentrantSynchronizedGuard<'a, T> {
    /// The monitor guard to wait through, one level deep only.
    #[track_caller]
    fn waiting(&mut self) -> &mut MonitorGuard<'a> {
        check_wait_depth(self.monitor.depth());
        &mut self.monitor
    }

    /// How many levels the calling thread holds (see
    /// [`MonitorGuard::depth`]).
    ///
    /// ```
    /// let value = metalock::ReentrantSynchronized::new(());
    /// let outer = value.lock();
    /// assert_eq!(value.lock().depth(), 2);
    /// assert_eq!(outer.depth(), 1);
    /// ```
    pub fn depth(&self) -> usize {
        self.monitor.depth()
    }

    /// See [`MonitorGuard::wait`]: releases the monitor, waits for a
    /// notification, and takes it back.
    ///
    /// # Panics
    ///
    /// Below the thread's outermost guard of the monitor (see the type's
    /// docs), before anything is released; so do the other waits (a
    /// `wait_while` only if it is to wait: one whose condition is already
    /// false returns at once, at any depth).
    #[track_caller]
    pub fn wait(&mut self) {
        self.waiting().wait();
    }

    /// See [`MonitorGuard::wait_for`].
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let value = metalock::ReentrantSynchronized::new(0);
    /// assert!(value.lock().wait_for(Duration::from_millis(1)).timed_out());
    /// ```
    #[track_caller]
    pub fn wait_for(&mut self, timeout: Duration) -> WaitTimeoutResult {
        self.waiting().wait_for(timeout)
    }

    /// See [`MonitorGuard::wait_until`].
    #[track_caller]
    pub fn wait_until(&mut self, deadline: Instant) -> WaitTimeoutResult {
        self.waiting().wait_until(deadline)
    }

    /// See [`MonitorGuard::wait_interruptibly`].
    ///
    /// ```
    /// let value = metalock::ReentrantSynchronized::new(0);
    /// metalock::interrupt_handle().interrupt();
    /// assert_eq!(value.lock().wait_interruptibly(), Err(metalock::Interrupted));
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_interruptibly(&mut self) -> Result<(), Interrupted> {
        self.waiting().wait_interruptibly()
    }

    /// See [`MonitorGuard::wait_for_interruptibly`].
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_for_interruptibly(
        &mut self,
        timeout: Duration,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        self.waiting().wait_for_interruptibly(timeout)
    }

    /// See [`MonitorGuard::wait_until_interruptibly`].
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_until_interruptibly(
        &mut self,
        deadline: Instant,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        self.waiting().wait_until_interruptibly(deadline)
    }

    /// Waits while `condition` holds for the value, re-checking it after
    /// every wake-up (see [`MonitorGuard::wait_while`]).
    #[track_caller]
    pub fn wait_while(&mut self, mut condition: impl FnMut(&T) -> bool) {
        let value = self.value;
        wait_while_until(self, WaitSet::Monitor, |()| condition(value), None);
    }

    /// As [`wait_while`](Self::wait_while), giving up after `timeout`; timed
    /// out if the condition still held when the time ran out.
    ///
    /// ```
    /// use std::cell::Cell;
    /// use std::time::Duration;
    ///
    /// let count = metalock::ReentrantSynchronized::new(Cell::new(0));
    /// let mut guard = count.lock();
    /// let result = guard.wait_while_for(|count| count.get() == 0, Duration::from_millis(1));
    /// assert!(result.timed_out());
    /// ```
    #[track_caller]
    pub fn wait_while_for(
        &mut self,
        mut condition: impl FnMut(&T) -> bool,
        timeout: Duration,
    ) -> WaitTimeoutResult {
        let value = self.value;
        wait_while_until(
            self,
            WaitSet::Monitor,
            |()| condition(value),
            deadline_after(timeout),
        )
    }

    /// As [`wait_while`](Self::wait_while), giving up at `deadline`.
    #[track_caller]
    pub fn wait_while_until(
        &mut self,
        mut condition: impl FnMut(&T) -> bool,
        deadline: Instant,
    ) -> WaitTimeoutResult {
        let value = self.value;
        wait_while_until(
            self,
            WaitSet::Monitor,
            |()| condition(value),
            Some(deadline),
        )
    }

    /// As [`wait_while`](Self::wait_while), each wait interruptible (see
    /// [`MonitorGuard::wait_while_interruptibly`]).
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_while_interruptibly(
        &mut self,
        mut condition: impl FnMut(&T) -> bool,
    ) -> Result<(), Interrupted> {
        let value = self.value;
        wait_while_interruptibly_until(self, WaitSet::Monitor, |()| condition(value), None)
            .map(drop)
    }

    /// As [`wait_while_interruptibly`](Self::wait_while_interruptibly),
    /// giving up after `timeout`.
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_while_for_interruptibly(
        &mut self,
        mut condition: impl FnMut(&T) -> bool,
        timeout: Duration,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        let value = self.value;
        let deadline = deadline_after(timeout);
        wait_while_interruptibly_until(self, WaitSet::Monitor, |()| condition(value), deadline)
    }

    /// As [`wait_while_interruptibly`](Self::wait_while_interruptibly),
    /// giving up at `deadline`.
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_while_until_interruptibly(
        &mut self,
        mut condition: impl FnMut(&T) -> bool,
        deadline: Instant,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        let value = self.value;
        let deadline = Some(deadline);
        wait_while_interruptibly_until(self, WaitSet::Monitor, |()| condition(value), deadline)
    }

    /// See [`MonitorGuard::notify_one`].
    pub fn notify_one(&self) -> bool {
        self.monitor.notify_one()
    }

    /// See [`MonitorGuard::notify_all`].
    pub fn notify_all(&self) -> usize {
        self.monitor.notify_all()
    }

    /// Releases this level, handing the monitor to the first queued thread
    /// if that frees it (see [`MonitorGuard::unlock_fair`]).
    pub fn unlock_fair(self) {
        self.monitor.unlock_fair();
    }

    /// Releases the monitor while `f` runs, and enters it again before
    /// returning, also if `f` panics; one level deep only, deeper it panics
    /// (see [`MonitorGuard::unlocked`]). An associated function, so that it
    /// cannot clash with a method of `T`.
    ///
    /// ```
    /// use metalock::{ReentrantSynchronized, ReentrantSynchronizedGuard};
    ///
    /// let value = ReentrantSynchronized::new(1);
    /// let mut guard = value.lock();
    /// ReentrantSynchronizedGuard::unlocked(&mut guard, || {
    ///     assert!(!value.is_held_by_current_thread());
    /// });
    /// assert_eq!(*guard, 1);
    /// ```
    #[track_caller]
    pub fn unlocked<U>(guard: &mut Self, f: impl FnOnce() -> U) -> U {
        check_depth_one(guard.depth(), "ReentrantSynchronizedGuard::unlocked");
        MonitorGuard::unlocked(&mut guard.monitor, f)
    }

    /// As [`unlocked`](Self::unlocked), handing the monitor to the first
    /// queued thread.
    #[track_caller]
    pub fn unlocked_fair<U>(guard: &mut Self, f: impl FnOnce() -> U) -> U {
        check_depth_one(guard.depth(), "ReentrantSynchronizedGuard::unlocked_fair");
        MonitorGuard::unlocked_fair(&mut guard.monitor, f)
    }

    /// Gives the first queued thread a turn, if any, and takes the monitor
    /// back; a no-op deeper than one level (see [`MonitorGuard::bump`]).
    pub fn bump(guard: &mut Self) {
        MonitorGuard::bump(&mut guard.monitor);
    }
}

impl<T: ?Sized> Deref for ReentrantSynchronizedGuard<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        self.value
    }
}

impl<T: ?Sized> guard::sealed::Sealed for ReentrantSynchronizedGuard<'_, T> {
    /// Only a `Condition`'s waits ask: one level deep only, as the guard's
    /// own.
    #[track_caller]
    fn __monitor_guard(&self) -> guard::sealed::MonitorRef<'_> {
        check_wait_depth(self.monitor.depth());
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
        fmt::Debug::fmt(self.value, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for ReentrantSynchronizedGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.value, f)
    }
}
