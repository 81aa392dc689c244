//! Guards that own an `Arc` of their [`Synchronized`]: `'static`, so they
//! can be kept in a struct or returned from a function, as parking_lot's
//! `ArcMutexGuard`, and they keep every wait and notify method.

use alloc::sync::Arc;
use core::fmt;
use core::mem::ManuallyDrop;
use core::ops::{Deref, DerefMut};
use core::time::Duration;

use super::Synchronized;
use crate::exec_env::ExecEnv;
use crate::guard::{
    self, AsMonitorGuard, MonitorGuard, WaitTimeoutResult, deadline_after, wait_while_until,
};
use crate::monitor::WaitSet;
use crate::sys::Instant;

impl<T: ?Sized> Synchronized<T> {
    /// As [`lock`](Self::lock), for a `Synchronized` in an `Arc`: the guard
    /// holds a clone of the `Arc`, so it borrows nothing.
    ///
    /// ```
    /// use metalock::{ArcSynchronizedGuard, Synchronized};
    /// use std::sync::Arc;
    ///
    /// struct Session {
    ///     state: ArcSynchronizedGuard<Vec<u32>>,
    /// }
    ///
    /// let shared = Arc::new(Synchronized::new(Vec::new()));
    /// let mut session = Session { state: shared.lock_arc() };
    /// session.state.push(1);
    /// drop(session);
    /// assert_eq!(*shared.lock(), [1]);
    /// ```
    #[track_caller]
    pub fn lock_arc(self: &Arc<Self>) -> ArcSynchronizedGuard<T> {
        let sync = Arc::clone(self);
        let record = sync.word.enter::<false>(ExecEnv::current());
        ArcSynchronizedGuard::new(sync, record)
    }

    /// As [`try_lock`](Self::try_lock), returning an
    /// [`ArcSynchronizedGuard`].
    pub fn try_lock_arc(self: &Arc<Self>) -> Option<ArcSynchronizedGuard<T>> {
        guard::try_entered(|ee| self.word.try_enter::<false>(ee))
            .map(|record| ArcSynchronizedGuard::new(Arc::clone(self), record))
    }
}

/// A [`SynchronizedGuard`](super::SynchronizedGuard) that owns a clone of the `Arc` its
/// `Synchronized` lives in ([`Synchronized::lock_arc`]). Same rules: not
/// `Send`, released when dropped, and the same `wait` and `notify` methods.
///
/// Invariant: `monitor` owns, at depth 1, the monitor of the
/// `Synchronized` that `sync` points to, whose word it borrows; it is
/// dropped before `sync`.
#[must_use = "the monitor is released as soon as the guard is dropped"]
pub struct ArcSynchronizedGuard<T: ?Sized> {
    monitor: ManuallyDrop<MonitorGuard<'static>>,
    sync: Arc<Synchronized<T>>,
}

impl<T: ?Sized> ArcSynchronizedGuard<T> {
    fn new(sync: Arc<Synchronized<T>>, record: &'static crate::lock_record::LockRecord) -> Self {
        // SAFETY: `sync`, stored beside the guard, keeps the word alive and
        // in place until the guard is dropped, first (see Drop).
        let word: &'static crate::word::MultiUseWord = unsafe { &*core::ptr::from_ref(&sync.word) };
        Self {
            monitor: ManuallyDrop::new(MonitorGuard::new(word, record)),
            sync,
        }
    }

    /// The `Synchronized` this guard holds.
    pub fn synchronized(guard: &Self) -> &Arc<Synchronized<T>> {
        &guard.sync
    }

    /// See [`SynchronizedGuard::wait`](super::SynchronizedGuard::wait).
    #[track_caller]
    pub fn wait(&mut self) {
        self.monitor.wait();
    }

    /// See [`SynchronizedGuard::wait_for`](super::SynchronizedGuard::wait_for).
    #[track_caller]
    pub fn wait_for(&mut self, timeout: Duration) -> WaitTimeoutResult {
        self.monitor.wait_for(timeout)
    }

    /// See [`SynchronizedGuard::wait_until`](super::SynchronizedGuard::wait_until).
    #[track_caller]
    pub fn wait_until(&mut self, deadline: Instant) -> WaitTimeoutResult {
        self.monitor.wait_until(deadline)
    }

    /// See [`SynchronizedGuard::wait_while`](super::SynchronizedGuard::wait_while).
    #[track_caller]
    pub fn wait_while(&mut self, condition: impl FnMut(&mut T) -> bool) {
        wait_while_until(self, WaitSet::Monitor, condition, None);
    }

    /// See [`SynchronizedGuard::wait_while_for`](super::SynchronizedGuard::wait_while_for).
    #[track_caller]
    pub fn wait_while_for(
        &mut self,
        condition: impl FnMut(&mut T) -> bool,
        timeout: Duration,
    ) -> WaitTimeoutResult {
        wait_while_until(self, WaitSet::Monitor, condition, deadline_after(timeout))
    }

    /// See [`SynchronizedGuard::wait_while_until`](super::SynchronizedGuard::wait_while_until).
    #[track_caller]
    pub fn wait_while_until(
        &mut self,
        condition: impl FnMut(&mut T) -> bool,
        deadline: Instant,
    ) -> WaitTimeoutResult {
        wait_while_until(self, WaitSet::Monitor, condition, Some(deadline))
    }

    /// See [`SynchronizedGuard::notify_one`](super::SynchronizedGuard::notify_one).
    pub fn notify_one(&self) -> bool {
        self.monitor.notify_one()
    }

    /// See [`SynchronizedGuard::notify_all`](super::SynchronizedGuard::notify_all).
    pub fn notify_all(&self) -> usize {
        self.monitor.notify_all()
    }

    /// See [`SynchronizedGuard::unlocked`](super::SynchronizedGuard::unlocked).
    pub fn unlocked<U>(guard: &mut Self, f: impl FnOnce() -> U) -> U {
        guard.monitor.unlocked(false, f)
    }

    /// See [`SynchronizedGuard::unlock_fair`](super::SynchronizedGuard::unlock_fair).
    pub fn unlock_fair(self) {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped, so the monitor guard and the Arc
        // are each taken out once, the monitor released before the Arc.
        let (monitor, sync) = unsafe {
            (
                ManuallyDrop::take(&mut this.monitor),
                core::ptr::read(&this.sync),
            )
        };
        monitor.unlock_fair();
        drop(sync);
    }
}

impl<T: ?Sized> Drop for ArcSynchronizedGuard<T> {
    fn drop(&mut self) {
        // SAFETY: dropped once, here, before `sync` (the invariant).
        unsafe { ManuallyDrop::drop(&mut self.monitor) };
    }
}

impl<T: ?Sized> guard::sealed::Sealed for ArcSynchronizedGuard<T> {
    fn __monitor_guard(&self) -> guard::sealed::MonitorRef<'_> {
        guard::sealed::MonitorRef(&self.monitor)
    }
}

impl<T: ?Sized> AsMonitorGuard for ArcSynchronizedGuard<T> {
    type Target = T;

    fn __target(&mut self) -> &mut T {
        self
    }
}

impl<T: ?Sized> Deref for ArcSynchronizedGuard<T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: the guard owns the monitor (the invariant), so no other
        // access to the value exists while the guard is borrowed.
        self.sync.value.with(|value| unsafe { &*value })
    }
}

impl<T: ?Sized> DerefMut for ArcSynchronizedGuard<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and `&mut self` makes this access unique.
        self.sync.value.with_mut(|value| unsafe { &mut *value })
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for ArcSynchronizedGuard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}
