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
use crate::guard::{
    self, AsMonitorGuard, MonitorGuard, WaitTimeoutResult, deadline_after, wait_while_until,
};
#[cfg(feature = "std")]
use crate::interrupt::Interrupted;
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
        guard::try_entered(|ee| self.word.try_enter::<false>(ee))
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
        guard::try_entered(|ee| self.word.try_enter_until::<false>(ee, deadline))
            .map(|record| ArcSynchronizedGuard::new(Arc::clone(self), record))
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

    /// See [`SynchronizedGuard::wait`](super::SynchronizedGuard::wait).
    ///
    /// ```
    /// use metalock::Synchronized;
    /// use std::sync::Arc;
    ///
    /// let ready = Arc::new(Synchronized::new(false));
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         let mut guard = ready.lock_arc();
    ///         while !*guard {
    ///             guard.wait();
    ///         }
    ///     });
    ///     let mut guard = ready.lock_arc();
    ///     *guard = true;
    ///     guard.notify_all();
    /// });
    /// ```
    #[track_caller]
    pub fn wait(&mut self) {
        self.monitor.wait();
    }

    /// See [`SynchronizedGuard::wait_for`](super::SynchronizedGuard::wait_for).
    ///
    /// ```
    /// use metalock::Synchronized;
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// let shared = Arc::new(Synchronized::new(0));
    /// let mut guard = shared.lock_arc();
    /// assert!(guard.wait_for(Duration::from_millis(1)).timed_out());
    /// ```
    #[track_caller]
    pub fn wait_for(&mut self, timeout: Duration) -> WaitTimeoutResult {
        self.monitor.wait_for(timeout)
    }

    /// See [`SynchronizedGuard::wait_until`](super::SynchronizedGuard::wait_until).
    ///
    /// ```
    /// use metalock::{Instant, Synchronized};
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// let shared = Arc::new(Synchronized::new(0));
    /// let mut guard = shared.lock_arc();
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// assert!(guard.wait_until(deadline).timed_out());
    /// ```
    #[track_caller]
    pub fn wait_until(&mut self, deadline: Instant) -> WaitTimeoutResult {
        self.monitor.wait_until(deadline)
    }

    /// See [`SynchronizedGuard::wait_interruptibly`](super::SynchronizedGuard::wait_interruptibly).
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_interruptibly(&mut self) -> Result<(), Interrupted> {
        self.monitor.wait_interruptibly()
    }

    /// See [`SynchronizedGuard::wait_for_interruptibly`](super::SynchronizedGuard::wait_for_interruptibly).
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_for_interruptibly(
        &mut self,
        timeout: Duration,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        self.monitor.wait_for_interruptibly(timeout)
    }

    /// See [`SynchronizedGuard::wait_until_interruptibly`](super::SynchronizedGuard::wait_until_interruptibly).
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_until_interruptibly(
        &mut self,
        deadline: Instant,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        self.monitor.wait_until_interruptibly(deadline)
    }

    /// See [`SynchronizedGuard::wait_while`](super::SynchronizedGuard::wait_while).
    ///
    /// ```
    /// use metalock::Synchronized;
    /// use std::sync::Arc;
    ///
    /// let jobs = Arc::new(Synchronized::new(Vec::new()));
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         let mut jobs = jobs.lock_arc();
    ///         jobs.wait_while(|jobs| jobs.is_empty());
    ///         assert_eq!(jobs.pop(), Some("job"));
    ///     });
    ///     let mut guard = jobs.lock_arc();
    ///     guard.push("job");
    ///     guard.notify_one();
    /// });
    /// ```
    #[track_caller]
    pub fn wait_while(&mut self, condition: impl FnMut(&mut T) -> bool) {
        wait_while_until(self, WaitSet::Monitor, condition, None);
    }

    /// See [`SynchronizedGuard::wait_while_for`](super::SynchronizedGuard::wait_while_for).
    ///
    /// ```
    /// use metalock::Synchronized;
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// let queue = Arc::new(Synchronized::new(Vec::<u32>::new()));
    /// let mut guard = queue.lock_arc();
    /// let result = guard.wait_while_for(|q| q.is_empty(), Duration::from_millis(1));
    /// assert!(result.timed_out());
    /// ```
    #[track_caller]
    pub fn wait_while_for(
        &mut self,
        condition: impl FnMut(&mut T) -> bool,
        timeout: Duration,
    ) -> WaitTimeoutResult {
        wait_while_until(self, WaitSet::Monitor, condition, deadline_after(timeout))
    }

    /// See [`SynchronizedGuard::wait_while_until`](super::SynchronizedGuard::wait_while_until).
    ///
    /// ```
    /// use metalock::{Instant, Synchronized};
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// let queue = Arc::new(Synchronized::new(vec![1]));
    /// let mut guard = queue.lock_arc();
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// // The condition is already false: no wait at all.
    /// assert!(!guard.wait_while_until(|q| q.is_empty(), deadline).timed_out());
    /// ```
    #[track_caller]
    pub fn wait_while_until(
        &mut self,
        condition: impl FnMut(&mut T) -> bool,
        deadline: Instant,
    ) -> WaitTimeoutResult {
        wait_while_until(self, WaitSet::Monitor, condition, Some(deadline))
    }

    /// See [`SynchronizedGuard::notify_one`](super::SynchronizedGuard::notify_one).
    ///
    /// ```
    /// use metalock::Synchronized;
    /// use std::sync::Arc;
    ///
    /// let shared = Arc::new(Synchronized::new(()));
    /// assert!(!shared.lock_arc().notify_one()); // nobody waits: not remembered
    /// std::thread::scope(|s| {
    ///     s.spawn(|| shared.lock_arc().wait());
    ///     while !shared.lock_arc().notify_one() {
    ///         std::thread::yield_now(); // the waiter is not waiting yet
    ///     }
    /// });
    /// ```
    pub fn notify_one(&self) -> bool {
        self.monitor.notify_one()
    }

    /// See [`SynchronizedGuard::notify_all`](super::SynchronizedGuard::notify_all).
    ///
    /// ```
    /// use metalock::Synchronized;
    /// use std::sync::Arc;
    ///
    /// let done = Arc::new(Synchronized::new(false));
    /// std::thread::scope(|s| {
    ///     for _ in 0..3 {
    ///         s.spawn(|| done.lock_arc().wait_while(|done| !*done));
    ///     }
    ///     let mut guard = done.lock_arc();
    ///     *guard = true;
    ///     // Threads not waiting yet see `true` and never wait.
    ///     assert!(guard.notify_all() <= 3);
    /// });
    /// ```
    pub fn notify_all(&self) -> usize {
        self.monitor.notify_all()
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
