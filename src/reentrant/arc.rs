//! Guards that own an `Arc` of their [`ReentrantSynchronized`]: `'static`
//! when `T` is, so they can be kept in a struct or returned from a
//! function, as parking_lot's `ArcReentrantMutexGuard`.

use alloc::sync::Arc;
use core::fmt;
use core::mem::ManuallyDrop;
use core::ops::Deref;
use core::time::Duration;

use crate::guard::{self, AsMonitorGuard, MonitorGuard};
use crate::sys::Instant;

use super::ReentrantSynchronized;
use super::waits::{self, OneLevelDeep, reentrant_guard_methods};

impl<T: ?Sized> ReentrantSynchronized<T> {
    /// As [`lock`](Self::lock), for a `ReentrantSynchronized` in an `Arc`:
    /// the guard holds a clone of the `Arc`, so it borrows nothing.
    ///
    /// ```
    /// use metalock::{ArcReentrantSynchronizedGuard, ReentrantSynchronized};
    /// use std::cell::Cell;
    /// use std::sync::Arc;
    ///
    /// struct Session {
    ///     hits: ArcReentrantSynchronizedGuard<Cell<u32>>,
    /// }
    ///
    /// let shared = Arc::new(ReentrantSynchronized::new(Cell::new(0)));
    /// let session = Session { hits: shared.lock_arc() };
    /// session.hits.set(1);
    /// assert_eq!(shared.lock().get(), 1); // the same thread, one level deeper
    /// ```
    #[track_caller]
    pub fn lock_arc(self: &Arc<Self>) -> ArcReentrantSynchronizedGuard<T> {
        // SAFETY: a guard of this `ReentrantSynchronized`'s word.
        unsafe { self.arc_guard(self.word.lock()) }
    }

    /// As [`try_lock`](Self::try_lock), returning an
    /// [`ArcReentrantSynchronizedGuard`].
    ///
    /// ```
    /// use metalock::ReentrantSynchronized;
    /// use std::sync::Arc;
    ///
    /// let shared = Arc::new(ReentrantSynchronized::new(0));
    /// let held = shared.try_lock_arc().unwrap();
    /// assert_eq!(shared.try_lock_arc().unwrap().depth(), 2); // reentrant
    /// let other = Arc::clone(&shared);
    /// std::thread::spawn(move || assert!(other.try_lock_arc().is_none()))
    ///     .join()
    ///     .unwrap();
    /// drop(held);
    /// ```
    #[track_caller]
    pub fn try_lock_arc(self: &Arc<Self>) -> Option<ArcReentrantSynchronizedGuard<T>> {
        let monitor = self.word.try_lock()?;
        // SAFETY: a guard of this `ReentrantSynchronized`'s word.
        Some(unsafe { self.arc_guard(monitor) })
    }

    /// As [`try_lock_for`](Self::try_lock_for), returning an
    /// [`ArcReentrantSynchronizedGuard`].
    ///
    /// ```
    /// use metalock::ReentrantSynchronized;
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// let shared = Arc::new(ReentrantSynchronized::new(0));
    /// let held = shared.lock_arc();
    /// let other = Arc::clone(&shared);
    /// std::thread::spawn(move || {
    ///     assert!(other.try_lock_arc_for(Duration::from_millis(10)).is_none());
    /// })
    /// .join()
    /// .unwrap();
    /// drop(held);
    /// ```
    #[track_caller]
    pub fn try_lock_arc_for(
        self: &Arc<Self>,
        timeout: Duration,
    ) -> Option<ArcReentrantSynchronizedGuard<T>> {
        let monitor = self.word.try_lock_for(timeout)?;
        // SAFETY: a guard of this `ReentrantSynchronized`'s word.
        Some(unsafe { self.arc_guard(monitor) })
    }

    /// As [`try_lock_until`](Self::try_lock_until), returning an
    /// [`ArcReentrantSynchronizedGuard`].
    ///
    /// ```
    /// use metalock::{Instant, ReentrantSynchronized};
    /// use std::sync::Arc;
    ///
    /// let shared = Arc::new(ReentrantSynchronized::new(0));
    /// assert!(shared.try_lock_arc_until(Instant::now()).is_some()); // free
    /// ```
    #[track_caller]
    pub fn try_lock_arc_until(
        self: &Arc<Self>,
        deadline: Instant,
    ) -> Option<ArcReentrantSynchronizedGuard<T>> {
        let monitor = self.word.try_lock_until(deadline)?;
        // SAFETY: a guard of this `ReentrantSynchronized`'s word.
        Some(unsafe { self.arc_guard(monitor) })
    }

    /// As [`lock_interruptibly`](Self::lock_interruptibly), returning an
    /// [`ArcReentrantSynchronizedGuard`]: by the holder too, one level
    /// deeper (unless its flag is set).
    ///
    /// ```
    /// use metalock::{Interrupted, ReentrantSynchronized};
    /// use std::sync::Arc;
    ///
    /// let shared = Arc::new(ReentrantSynchronized::new(0));
    /// let outer = shared.lock_arc_interruptibly().unwrap();
    /// let inner = shared.lock_arc_interruptibly().unwrap();
    /// assert_eq!(inner.depth(), 2);
    /// metalock::interrupt_handle().interrupt();
    /// assert!(matches!(shared.lock_arc_interruptibly(), Err(Interrupted)));
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn lock_arc_interruptibly(
        self: &Arc<Self>,
    ) -> Result<ArcReentrantSynchronizedGuard<T>, crate::Interrupted> {
        let monitor = self.word.lock_interruptibly()?;
        // SAFETY: a guard of this `ReentrantSynchronized`'s word.
        Ok(unsafe { self.arc_guard(monitor) })
    }

    /// As [`try_lock_for_interruptibly`](Self::try_lock_for_interruptibly),
    /// returning an [`ArcReentrantSynchronizedGuard`].
    ///
    /// ```
    /// use metalock::ReentrantSynchronized;
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// let shared = Arc::new(ReentrantSynchronized::new(0));
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
    #[track_caller]
    pub fn try_lock_arc_for_interruptibly(
        self: &Arc<Self>,
        timeout: Duration,
    ) -> Result<Option<ArcReentrantSynchronizedGuard<T>>, crate::Interrupted> {
        let entered = self.word.try_lock_for_interruptibly(timeout)?;
        // SAFETY: a guard of this `ReentrantSynchronized`'s word.
        Ok(entered.map(|monitor| unsafe { self.arc_guard(monitor) }))
    }

    /// As [`try_lock_until_interruptibly`](Self::try_lock_until_interruptibly),
    /// returning an [`ArcReentrantSynchronizedGuard`].
    ///
    /// ```
    /// use metalock::{Instant, ReentrantSynchronized};
    /// use std::sync::Arc;
    ///
    /// let shared = Arc::new(ReentrantSynchronized::new(0));
    /// let entered = shared.try_lock_arc_until_interruptibly(Instant::now());
    /// assert_eq!(entered.unwrap().unwrap().depth(), 1);
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn try_lock_arc_until_interruptibly(
        self: &Arc<Self>,
        deadline: Instant,
    ) -> Result<Option<ArcReentrantSynchronizedGuard<T>>, crate::Interrupted> {
        let entered = self.word.try_lock_until_interruptibly(deadline)?;
        // SAFETY: a guard of this `ReentrantSynchronized`'s word.
        Ok(entered.map(|monitor| unsafe { self.arc_guard(monitor) }))
    }

    /// The `Arc` guard of `monitor`.
    ///
    /// # Safety
    /// `monitor` is a guard of `self.word`.
    unsafe fn arc_guard(
        self: &Arc<Self>,
        monitor: MonitorGuard<'_>,
    ) -> ArcReentrantSynchronizedGuard<T> {
        // SAFETY: `monitor` borrows the word of the `ReentrantSynchronized`
        // that the `Arc` clone stored beside it keeps alive and in place;
        // the guard drops it first and never lends it out (the type's
        // invariant), so no use of the `'static` outlives the word.
        let monitor =
            unsafe { core::mem::transmute::<MonitorGuard<'_>, MonitorGuard<'static>>(monitor) };
        ArcReentrantSynchronizedGuard {
            monitor: ManuallyDrop::new(monitor),
            sync: Arc::clone(self),
        }
    }
}

/// A [`ReentrantSynchronizedGuard`](super::ReentrantSynchronizedGuard)
/// that owns a clone of the `Arc` its `ReentrantSynchronized` lives in
/// ([`ReentrantSynchronized::lock_arc`]). Same rules: one level of the
/// monitor, `&T` only, not `Send`, released when dropped, and the same
/// wait and notify methods, which wait one level deep only (see
/// [`ReentrantSynchronizedGuard`](super::ReentrantSynchronizedGuard)).
///
/// ```
/// use metalock::{ArcReentrantSynchronizedGuard, ReentrantSynchronized};
/// use std::cell::Cell;
/// use std::sync::Arc;
///
/// let ready = Arc::new(ReentrantSynchronized::new(Cell::new(false)));
/// let setter = Arc::clone(&ready);
/// let mut guard: ArcReentrantSynchronizedGuard<_> = ready.lock_arc();
/// let thread = std::thread::spawn(move || {
///     let guard = setter.lock();
///     guard.set(true);
///     guard.notify_all();
/// });
/// guard.wait_while(|ready| !ready.get());
/// drop(guard);
/// thread.join().unwrap();
/// ```
///
/// Invariant: `monitor` owns a level of the monitor of the
/// `ReentrantSynchronized` that `sync` points to, whose word it borrows
/// (its `'static` is a lie that holds only while `sync` lives); it is
/// dropped before `sync`, and never lent out of the guard, whose methods
/// use it only while `self` is borrowed.
#[must_use = "the monitor is released as soon as the guard is dropped"]
pub struct ArcReentrantSynchronizedGuard<T: ?Sized> {
    monitor: ManuallyDrop<MonitorGuard<'static>>,
    sync: Arc<ReentrantSynchronized<T>>,
}

impl<T: ?Sized> ArcReentrantSynchronizedGuard<T> {
    /// The monitor, lent to a wait that checks the depth rule, and the
    /// value its condition sees.
    fn parts(&mut self) -> (OneLevelDeep<'_, 'static>, &T) {
        (
            OneLevelDeep {
                monitor: &mut self.monitor,
                guard: Self::GUARD,
            },
            &self.sync.value,
        )
    }

    reentrant_guard_methods!(
        "ArcReentrantSynchronizedGuard",
        "lock_arc",
        "std::sync::Arc::new(",
        ")"
    );

    /// The `ReentrantSynchronized` this guard holds. An associated
    /// function, so that it cannot clash with a method of `T`.
    ///
    /// ```
    /// use metalock::{ArcReentrantSynchronizedGuard, ReentrantSynchronized};
    /// use std::sync::Arc;
    ///
    /// let shared = Arc::new(ReentrantSynchronized::new(0));
    /// let guard = shared.lock_arc();
    /// assert!(Arc::ptr_eq(ArcReentrantSynchronizedGuard::synchronized(&guard), &shared));
    /// ```
    pub fn synchronized(guard: &Self) -> &Arc<ReentrantSynchronized<T>> {
        &guard.sync
    }

    /// Releases this level, handing the monitor to the first queued thread
    /// if that frees it (see [`MonitorGuard::unlock_fair`]).
    ///
    /// ```
    /// use metalock::ReentrantSynchronized;
    /// use std::sync::Arc;
    ///
    /// let shared = Arc::new(ReentrantSynchronized::new(0));
    /// shared.lock_arc().unlock_fair();
    /// assert!(!shared.is_locked());
    /// ```
    pub fn unlock_fair(self) {
        drop(self.release(true));
    }

    /// Releases this level and returns the guard's `Arc` (lock_api's
    /// `ArcReentrantMutexGuard::into_arc`). An associated function, so
    /// that it cannot clash with a method of `T`.
    ///
    /// ```
    /// use metalock::{ArcReentrantSynchronizedGuard, ReentrantSynchronized};
    /// use std::sync::Arc;
    ///
    /// let shared = Arc::new(ReentrantSynchronized::new(1));
    /// let sync = ArcReentrantSynchronizedGuard::into_arc(shared.lock_arc());
    /// assert!(Arc::ptr_eq(&sync, &shared) && !sync.is_locked());
    /// ```
    pub fn into_arc(guard: Self) -> Arc<ReentrantSynchronized<T>> {
        guard.release(false)
    }

    /// As [`into_arc`](Self::into_arc), releasing the level as
    /// [`unlock_fair`](Self::unlock_fair) does.
    pub fn into_arc_fair(guard: Self) -> Arc<ReentrantSynchronized<T>> {
        guard.release(true)
    }

    /// Releases this level (handing the monitor over if `fair`), then gives
    /// the `Arc` back.
    fn release(self, fair: bool) -> Arc<ReentrantSynchronized<T>> {
        let mut this = ManuallyDrop::new(self);
        let this = &mut *this;
        // SAFETY: the guard is never dropped nor used again, and `monitor`
        // borrows the word `sync` keeps (the type's invariant).
        unsafe { guard::release_owned(&mut this.monitor, &this.sync, fair) }
    }
}

impl<T: ?Sized> Drop for ArcReentrantSynchronizedGuard<T> {
    fn drop(&mut self) {
        // SAFETY: dropped once, here, before `sync` (the type's invariant).
        unsafe { ManuallyDrop::drop(&mut self.monitor) };
    }
}

impl<T: ?Sized> Deref for ArcReentrantSynchronizedGuard<T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        &self.sync.value
    }
}

impl<T: ?Sized> guard::sealed::Sealed for ArcReentrantSynchronizedGuard<T> {
    /// Only a `Condition`'s waits ask: one level deep only, as the guard's
    /// own.
    #[track_caller]
    fn __monitor_guard(&self, _: guard::sealed::Token) -> guard::sealed::MonitorRef<'_> {
        waits::check_wait_depth(self.monitor.depth(), Self::GUARD);
        self.monitor.monitor_ref()
    }
}

/// A [`Condition`](crate::Condition)'s `wait_while` sees nothing (`()`), as
/// with a [`ReentrantSynchronizedGuard`](super::ReentrantSynchronizedGuard).
impl<T: ?Sized> AsMonitorGuard for ArcReentrantSynchronizedGuard<T> {
    type Target = ();

    fn __target(&mut self) -> &mut () {
        self.monitor.__target()
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for ArcReentrantSynchronizedGuard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for ArcReentrantSynchronizedGuard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}
