//! Guards that own an `Arc` of their [`Synchronized`]: `'static` when `T` is, so
//! they can be kept in a struct or returned from a function, as parking_lot's
//! `ArcMutexGuard`, and they keep every wait and notify method.

use alloc::sync::Arc;
use core::fmt;
use core::mem::ManuallyDrop;
use core::ops::{Deref, DerefMut};
use core::time::Duration;

use super::Synchronized;
use crate::exec_env::ExecEnv;
use crate::guard::{self, AsMonitorGuard, MonitorGuard, deadline_after};
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
    ///
    /// ```
    /// use metalock::Synchronized;
    /// use std::sync::Arc;
    ///
    /// let shared = Arc::new(Synchronized::new(0));
    /// let held = shared.try_lock_arc().unwrap();
    /// assert!(shared.try_lock_arc().is_none()); // not reentrant
    /// drop(held);
    /// assert!(shared.try_lock_arc().is_some());
    /// ```
    pub fn try_lock_arc(self: &Arc<Self>) -> Option<ArcSynchronizedGuard<T>> {
        guard::try_entered!(|ee| self.word.try_enter::<false>(ee))
            .map(|record| ArcSynchronizedGuard::new(Arc::clone(self), record))
    }

    /// As [`try_lock_for`](Self::try_lock_for), returning an
    /// [`ArcSynchronizedGuard`].
    ///
    /// ```
    /// use metalock::Synchronized;
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// let shared = Arc::new(Synchronized::new(0));
    /// let held = shared.lock_arc();
    /// let other = Arc::clone(&shared);
    /// std::thread::spawn(move || {
    ///     assert!(other.try_lock_arc_for(Duration::from_millis(10)).is_none());
    /// })
    /// .join()
    /// .unwrap();
    /// drop(held);
    /// *shared.try_lock_arc_for(Duration::from_millis(10)).unwrap() += 1;
    /// assert_eq!(*shared.lock(), 1);
    /// ```
    pub fn try_lock_arc_for(
        self: &Arc<Self>,
        timeout: Duration,
    ) -> Option<ArcSynchronizedGuard<T>> {
        match deadline_after(timeout) {
            Some(deadline) => self.try_lock_arc_until(deadline),
            // As in `try_lock_for`: no deadline, but the owner gets `None`.
            None if self.is_held_by_current_thread() => None,
            None => Some(self.lock_arc()),
        }
    }

    /// As [`try_lock_until`](Self::try_lock_until), returning an
    /// [`ArcSynchronizedGuard`].
    ///
    /// ```
    /// use metalock::{Instant, Synchronized};
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// let shared = Arc::new(Synchronized::new(0));
    /// let held = shared.lock_arc();
    /// let other = Arc::clone(&shared);
    /// std::thread::spawn(move || {
    ///     let deadline = Instant::now() + Duration::from_millis(10);
    ///     assert!(other.try_lock_arc_until(deadline).is_none());
    /// })
    /// .join()
    /// .unwrap();
    /// drop(held);
    /// *shared.try_lock_arc_until(Instant::now()).unwrap() += 1;
    /// assert_eq!(*shared.lock(), 1);
    /// ```
    pub fn try_lock_arc_until(
        self: &Arc<Self>,
        deadline: Instant,
    ) -> Option<ArcSynchronizedGuard<T>> {
        guard::try_entered!(|ee| self.word.try_enter_until::<false>(ee, deadline))
            .map(|record| ArcSynchronizedGuard::new(Arc::clone(self), record))
    }

    /// As [`lock_interruptibly`](Self::lock_interruptibly), returning an
    /// [`ArcSynchronizedGuard`].
    ///
    /// ```
    /// use metalock::{Interrupted, Synchronized};
    /// use std::sync::Arc;
    ///
    /// let shared = Arc::new(Synchronized::new(0));
    /// metalock::interrupt_handle().interrupt();
    /// assert!(matches!(shared.lock_arc_interruptibly(), Err(Interrupted)));
    /// *shared.lock_arc_interruptibly().unwrap() += 1;
    /// assert_eq!(*shared.lock(), 1);
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn lock_arc_interruptibly(
        self: &Arc<Self>,
    ) -> Result<ArcSynchronizedGuard<T>, crate::Interrupted> {
        let record = self.enter_interruptibly()?;
        Ok(ArcSynchronizedGuard::new(Arc::clone(self), record))
    }

    /// As [`try_lock_for_interruptibly`](Self::try_lock_for_interruptibly),
    /// returning an [`ArcSynchronizedGuard`].
    ///
    /// ```
    /// use metalock::Synchronized;
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// let shared = Arc::new(Synchronized::new(0));
    /// let held = shared.lock_arc();
    /// let other = Arc::clone(&shared);
    /// std::thread::spawn(move || {
    ///     let entered = other.try_lock_arc_for_interruptibly(Duration::from_millis(10));
    ///     assert!(entered.unwrap().is_none()); // timed out
    /// })
    /// .join()
    /// .unwrap();
    /// drop(held);
    /// ```
    #[cfg(feature = "std")]
    pub fn try_lock_arc_for_interruptibly(
        self: &Arc<Self>,
        timeout: Duration,
    ) -> Result<Option<ArcSynchronizedGuard<T>>, crate::Interrupted> {
        let entered = self.enter_interruptibly_for(timeout)?;
        Ok(entered.map(|record| ArcSynchronizedGuard::new(Arc::clone(self), record)))
    }

    /// As [`try_lock_until_interruptibly`](Self::try_lock_until_interruptibly),
    /// returning an [`ArcSynchronizedGuard`].
    ///
    /// ```
    /// use metalock::{Instant, Synchronized};
    /// use std::sync::Arc;
    ///
    /// let shared = Arc::new(Synchronized::new(0));
    /// let entered = shared.try_lock_arc_until_interruptibly(Instant::now());
    /// *entered.unwrap().unwrap() += 1; // free: entered though the deadline passed
    /// ```
    #[cfg(feature = "std")]
    pub fn try_lock_arc_until_interruptibly(
        self: &Arc<Self>,
        deadline: Instant,
    ) -> Result<Option<ArcSynchronizedGuard<T>>, crate::Interrupted> {
        let entered = self.enter_interruptibly_until(deadline)?;
        Ok(entered.map(|record| ArcSynchronizedGuard::new(Arc::clone(self), record)))
    }
}

/// A [`SynchronizedGuard`](super::SynchronizedGuard) that owns a clone of the `Arc` its
/// `Synchronized` lives in ([`Synchronized::lock_arc`]). Same rules: not
/// `Send`, released when dropped, and the same `wait` and `notify` methods,
/// which come before methods of `T` with the same names (`(*guard).wait()`
/// calls `T`'s).
///
/// ```
/// use metalock::{ArcSynchronizedGuard, Synchronized};
/// use std::sync::Arc;
///
/// fn open() -> ArcSynchronizedGuard<Vec<u32>> {
///     let log = Arc::new(Synchronized::new(vec![1]));
///     log.lock_arc() // the guard keeps the `Synchronized` alive
/// }
///
/// let mut log = open();
/// log.push(2);
/// assert_eq!(*log, [1, 2]);
/// ```
///
/// Invariant: `monitor` owns, at depth 1, the monitor of the
/// `Synchronized` that `sync` points to, whose word it borrows (its
/// `'static` holds only while `sync` lives); it is dropped before `sync`,
/// and never lent out of the guard.
#[must_use = "the monitor is released as soon as the guard is dropped"]
pub struct ArcSynchronizedGuard<T: ?Sized> {
    pub(super) monitor: ManuallyDrop<MonitorGuard<'static>>,
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

    /// The `Synchronized` this guard holds. An associated function, so that
    /// it cannot clash with a method of `T`.
    ///
    /// ```
    /// use metalock::{ArcSynchronizedGuard, Synchronized};
    /// use std::sync::Arc;
    ///
    /// let shared = Arc::new(Synchronized::new(0));
    /// let guard = shared.lock_arc();
    /// let sync = ArcSynchronizedGuard::synchronized(&guard);
    /// assert!(Arc::ptr_eq(sync, &shared));
    /// assert!(sync.is_held_by_current_thread());
    /// ```
    pub fn synchronized(guard: &Self) -> &Arc<Synchronized<T>> {
        &guard.sync
    }

    /// See [`SynchronizedGuard::unlocked`](super::SynchronizedGuard::unlocked).
    ///
    /// ```
    /// use metalock::{ArcSynchronizedGuard, Synchronized};
    /// use std::sync::Arc;
    ///
    /// let log = Arc::new(Synchronized::new(Vec::new()));
    /// let mut guard = log.lock_arc();
    /// guard.push("before");
    /// ArcSynchronizedGuard::unlocked(&mut guard, || {
    ///     // Another thread gets in meanwhile.
    ///     std::thread::scope(|s| {
    ///         s.spawn(|| log.lock().push("other"));
    ///     });
    /// });
    /// guard.push("after");
    /// assert_eq!(*guard, ["before", "other", "after"]);
    /// ```
    pub fn unlocked<U>(guard: &mut Self, f: impl FnOnce() -> U) -> U {
        guard.monitor.release_while::<false, U>(false, f)
    }

    /// See [`SynchronizedGuard::unlocked_fair`](super::SynchronizedGuard::unlocked_fair).
    ///
    /// ```
    /// use metalock::{ArcSynchronizedGuard, Synchronized};
    /// use std::sync::Arc;
    ///
    /// let value = Arc::new(Synchronized::new(0));
    /// let mut guard = value.lock_arc();
    /// ArcSynchronizedGuard::unlocked_fair(&mut guard, || assert!(!value.is_locked()));
    /// *guard += 1;
    /// drop(guard);
    /// assert_eq!(*value.lock(), 1);
    /// ```
    pub fn unlocked_fair<U>(guard: &mut Self, f: impl FnOnce() -> U) -> U {
        guard.monitor.release_while::<false, U>(true, f)
    }

    /// See [`SynchronizedGuard::bump`](super::SynchronizedGuard::bump).
    ///
    /// ```
    /// use metalock::{ArcSynchronizedGuard, Synchronized};
    /// use std::sync::Arc;
    ///
    /// let turns = Arc::new(Synchronized::new(Vec::new()));
    /// let mut guard = turns.lock_arc();
    /// guard.push("main");
    /// std::thread::scope(|s| {
    ///     s.spawn(|| turns.lock().push("worker"));
    ///     while guard.len() < 2 {
    ///         ArcSynchronizedGuard::bump(&mut guard);
    ///         std::thread::yield_now();
    ///     }
    /// });
    /// assert_eq!(*guard, ["main", "worker"]);
    /// ```
    pub fn bump(guard: &mut Self) {
        guard.monitor.bump_as::<false>();
    }

    /// See [`SynchronizedGuard::unlock_fair`](super::SynchronizedGuard::unlock_fair).
    ///
    /// ```
    /// use metalock::Synchronized;
    /// use std::sync::Arc;
    ///
    /// let value = Arc::new(Synchronized::new(1));
    /// let mut guard = value.lock_arc();
    /// *guard += 1;
    /// guard.unlock_fair();
    /// assert_eq!(*value.lock(), 2);
    /// ```
    pub fn unlock_fair(self) {
        drop(self.release(true));
    }

    /// Releases the monitor and returns the guard's `Arc` (lock_api's
    /// `ArcMutexGuard::into_arc`). An associated function, so that it
    /// cannot clash with a method of `T`.
    ///
    /// ```
    /// use metalock::{ArcSynchronizedGuard, Synchronized};
    /// use std::sync::Arc;
    ///
    /// let shared = Arc::new(Synchronized::new(1));
    /// let guard = shared.lock_arc();
    /// let sync = ArcSynchronizedGuard::into_arc(guard);
    /// assert!(Arc::ptr_eq(&sync, &shared) && !sync.is_locked());
    /// ```
    pub fn into_arc(guard: Self) -> Arc<Synchronized<T>> {
        guard.release(false)
    }

    /// As [`into_arc`](Self::into_arc), releasing the monitor as
    /// [`unlock_fair`](Self::unlock_fair) does.
    ///
    /// ```
    /// use metalock::{ArcSynchronizedGuard, Synchronized};
    /// use std::sync::Arc;
    ///
    /// let shared = Arc::new(Synchronized::new(1));
    /// let sync = ArcSynchronizedGuard::into_arc_fair(shared.lock_arc());
    /// assert_eq!(*sync.lock(), 1);
    /// ```
    pub fn into_arc_fair(guard: Self) -> Arc<Synchronized<T>> {
        guard.release(true)
    }

    /// Releases the monitor (handing it over if `fair`), then gives the
    /// `Arc` back.
    fn release(self, fair: bool) -> Arc<Synchronized<T>> {
        let mut this = ManuallyDrop::new(self);
        let this = &mut *this;
        // SAFETY: the guard is never dropped nor used again, and `monitor`
        // borrows the word `sync` keeps (the type's invariant).
        unsafe { guard::release_owned(&mut this.monitor, &this.sync, fair) }
    }
}

impl<T: ?Sized> Drop for ArcSynchronizedGuard<T> {
    fn drop(&mut self) {
        // SAFETY: dropped once, here, before `sync` (the invariant).
        unsafe { ManuallyDrop::drop(&mut self.monitor) };
    }
}

impl<T: ?Sized> guard::sealed::Sealed for ArcSynchronizedGuard<T> {
    fn __monitor_guard(&self, _: guard::sealed::Token) -> guard::sealed::MonitorRef<'_> {
        self.monitor.monitor_ref()
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

impl<T: ?Sized + fmt::Display> fmt::Display for ArcSynchronizedGuard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}
