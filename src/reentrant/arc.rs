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
use crate::word::MultiUseWord;

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
    pub fn lock_arc(self: &Arc<Self>) -> ArcReentrantSynchronizedGuard<T> {
        self.arc_guard(|word| Some(word.lock()))
            .expect("an untimed lock always enters")
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
    pub fn try_lock_arc(self: &Arc<Self>) -> Option<ArcReentrantSynchronizedGuard<T>> {
        self.arc_guard(MultiUseWord::try_lock)
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
    pub fn try_lock_arc_for(
        self: &Arc<Self>,
        timeout: Duration,
    ) -> Option<ArcReentrantSynchronizedGuard<T>> {
        self.arc_guard(|word| word.try_lock_for(timeout))
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
    pub fn try_lock_arc_until(
        self: &Arc<Self>,
        deadline: Instant,
    ) -> Option<ArcReentrantSynchronizedGuard<T>> {
        self.arc_guard(|word| word.try_lock_until(deadline))
    }

    fn arc_guard(
        self: &Arc<Self>,
        enter: impl FnOnce(&'static MultiUseWord) -> Option<MonitorGuard<'static>>,
    ) -> Option<ArcReentrantSynchronizedGuard<T>> {
        let sync = Arc::clone(self);
        // SAFETY: the `Arc` clone is stored beside the guard, which is
        // dropped first (see Drop), so the word stays alive and in place
        // while the guard borrows it; if `enter` fails or panics, no guard
        // outlives the clone.
        let word: &'static MultiUseWord = unsafe { &*core::ptr::from_ref(&sync.word) };
        let monitor = enter(word)?;
        Some(ArcReentrantSynchronizedGuard {
            monitor: ManuallyDrop::new(monitor),
            sync,
        })
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
/// `ReentrantSynchronized` that `sync` points to, whose word it borrows;
/// it is dropped before `sync`.
#[must_use = "the monitor is released as soon as the guard is dropped"]
pub struct ArcReentrantSynchronizedGuard<T: ?Sized> {
    monitor: ManuallyDrop<MonitorGuard<'static>>,
    sync: Arc<ReentrantSynchronized<T>>,
}

impl<T: ?Sized> ArcReentrantSynchronizedGuard<T> {
    /// The monitor, lent to a wait that checks the depth rule, and the
    /// value its condition sees.
    fn parts(&mut self) -> (OneLevelDeep<'_, 'static>, &T) {
        (OneLevelDeep(&mut self.monitor), &self.sync.value)
    }

    reentrant_guard_methods!("ArcReentrantSynchronizedGuard");

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
        drop(Self::into_arc_fair(self));
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
        let (monitor, sync) = guard.into_parts();
        drop(monitor);
        sync
    }

    /// As [`into_arc`](Self::into_arc), releasing the level as
    /// [`unlock_fair`](Self::unlock_fair) does.
    pub fn into_arc_fair(guard: Self) -> Arc<ReentrantSynchronized<T>> {
        let (monitor, sync) = guard.into_parts();
        monitor.unlock_fair();
        sync
    }

    /// The guard's parts, for its owner to release the monitor before the
    /// `Arc` goes (the invariant).
    fn into_parts(self) -> (MonitorGuard<'static>, Arc<ReentrantSynchronized<T>>) {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped, so the monitor guard and the Arc
        // are each taken out once; the caller drops the monitor guard first.
        unsafe {
            (
                ManuallyDrop::take(&mut this.monitor),
                core::ptr::read(&this.sync),
            )
        }
    }
}

impl<T: ?Sized> Drop for ArcReentrantSynchronizedGuard<T> {
    fn drop(&mut self) {
        // SAFETY: dropped once, here, before `sync` (the invariant).
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
    fn __monitor_guard(&self) -> guard::sealed::MonitorRef<'_> {
        waits::check_wait_depth(self.monitor.depth());
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
