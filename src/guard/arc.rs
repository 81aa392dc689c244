//! [`ArcMonitorGuard`]: a guard of the monitor of an object in an `Arc`,
//! which owns a clone of that `Arc`, so it borrows nothing (`'static` when
//! the object is), as `ArcSynchronizedGuard` does for `Synchronized`.

use alloc::sync::Arc;
use core::fmt;
use core::mem::ManuallyDrop;
use core::ops::Deref;

use super::unlocked::check_depth_one;
use super::{AsMonitorGuard, MonitorGuard, sealed};
use crate::word::MultiUseWord;

/// A [`MonitorGuard`] that owns a clone of the `Arc` its object lives in
/// ([`Monitor::lock_arc`](super::Monitor::lock_arc)): it can be kept in a
/// struct or returned from a function. Same rules: not `Send`, one level of
/// a reentrant monitor, released when dropped, and the same `wait` and
/// `notify` methods, which come before methods of `T` with the same names
/// (`(*guard).wait()` calls `T`'s). It derefs to `&T`, which the `Arc`
/// gives anyway; what the monitor protects is up to `T`, as with any
/// embedded word.
///
/// ```
/// use metalock::{ArcMonitorGuard, Monitor, MultiUseWord};
/// use std::sync::Arc;
///
/// struct Account {
///     word: MultiUseWord,
///     id: u32,
/// }
///
/// impl Monitor for Account {
///     fn multi_use_word(&self) -> &MultiUseWord {
///         &self.word
///     }
/// }
///
/// fn open(id: u32) -> ArcMonitorGuard<Account> {
///     let account = Arc::new(Account { word: MultiUseWord::new(), id });
///     account.lock_arc() // the guard keeps the account alive
/// }
///
/// let guard = open(7);
/// assert_eq!(guard.id, 7);
/// assert!(guard.is_held_by_current_thread());
/// ```
///
/// Invariant: `monitor` holds one level of the monitor of a word reached
/// through `object` (so it lives and stays in place while `object` does,
/// and its `'static` holds only that long); it is dropped before `object`
/// and never lent out of the guard.
#[must_use = "the monitor is released as soon as the guard is dropped"]
pub struct ArcMonitorGuard<T: ?Sized> {
    monitor: ManuallyDrop<MonitorGuard<'static>>,
    object: Arc<T>,
}

impl<T: ?Sized> ArcMonitorGuard<T> {
    /// Wraps `monitor`, a guard of the word that `object`'s
    /// `multi_use_word` gave (the `lock_arc` forms call it, never the
    /// trait's other methods, which an implementation may override).
    pub(super) fn new(object: Arc<T>, monitor: MonitorGuard<'_>) -> Self {
        let monitor = ManuallyDrop::new(monitor);
        // SAFETY: the word was reached through `object`, stored beside the
        // guard, which keeps it alive and in place until the guard is
        // dropped, first (see Drop). The guard is moved, not dropped.
        let word: &'static MultiUseWord = unsafe { &*core::ptr::from_ref(monitor.word) };
        Self {
            monitor: ManuallyDrop::new(MonitorGuard {
                word,
                record: monitor.record,
                _not_send_or_sync: core::marker::PhantomData,
            }),
            object,
        }
    }

    /// The `Arc` this guard holds. An associated function, so that it
    /// cannot clash with a method of `T`.
    ///
    /// ```
    /// use metalock::{ArcMonitorGuard, Monitor, MultiUseWord};
    /// use std::sync::Arc;
    ///
    /// let word = Arc::new(MultiUseWord::new());
    /// let guard = word.lock_arc();
    /// assert!(Arc::ptr_eq(ArcMonitorGuard::object(&guard), &word));
    /// ```
    pub fn object(guard: &Self) -> &Arc<T> {
        &guard.object
    }

    /// The word this guard holds (see [`MonitorGuard::word`]). An
    /// associated function, so that it cannot clash with a method of `T`.
    ///
    /// ```
    /// use metalock::{ArcMonitorGuard, Monitor, MultiUseWord};
    /// use std::sync::Arc;
    ///
    /// let word = Arc::new(MultiUseWord::with_payload(3));
    /// let guard = word.lock_arc();
    /// assert_eq!(ArcMonitorGuard::word(&guard).payload(), 3);
    /// ```
    pub fn word(guard: &Self) -> &MultiUseWord {
        guard.monitor.word
    }

    /// How many levels the calling thread holds the monitor at (see
    /// [`MonitorGuard::depth`]).
    ///
    /// ```
    /// use metalock::{Monitor, MultiUseWord};
    /// use std::sync::Arc;
    ///
    /// let word = Arc::new(MultiUseWord::new());
    /// let outer = word.lock_arc();
    /// assert_eq!(word.lock_arc().depth(), 2); // reentrant, as the word is
    /// assert_eq!(outer.depth(), 1);
    /// ```
    pub fn depth(&self) -> usize {
        self.monitor.depth()
    }

    /// See [`MonitorGuard::notify_one`].
    pub fn notify_one(&self) -> bool {
        self.monitor.notify_one()
    }

    /// See [`MonitorGuard::notify_all`].
    ///
    /// ```
    /// use metalock::{Monitor, MultiUseWord};
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    ///
    /// let word = Arc::new(MultiUseWord::new());
    /// let ready = Arc::new(AtomicBool::new(false));
    /// let waiter = {
    ///     let (word, ready) = (Arc::clone(&word), Arc::clone(&ready));
    ///     std::thread::spawn(move || {
    ///         let mut guard = word.lock_arc();
    ///         // Relaxed: the monitor orders the flag.
    ///         guard.wait_while(|| !ready.load(Relaxed));
    ///     })
    /// };
    /// let guard = word.lock_arc();
    /// ready.store(true, Relaxed);
    /// guard.notify_all();
    /// drop(guard);
    /// waiter.join().unwrap();
    /// ```
    pub fn notify_all(&self) -> usize {
        self.monitor.notify_all()
    }

    /// See [`MonitorGuard::unlock_fair`].
    ///
    /// ```
    /// use metalock::{Monitor, MultiUseWord};
    /// use std::sync::Arc;
    ///
    /// let word = Arc::new(MultiUseWord::new());
    /// word.lock_arc().unlock_fair();
    /// assert!(!word.is_locked());
    /// ```
    pub fn unlock_fair(self) {
        drop(self.release(true));
    }

    /// See [`MonitorGuard::unlocked`]; the same rule (the guard holds the
    /// only level).
    ///
    /// # Panics
    /// If the thread holds the monitor at a depth other than 1, before it
    /// releases anything.
    ///
    /// ```
    /// use metalock::{ArcMonitorGuard, Monitor, MultiUseWord};
    /// use std::sync::Arc;
    ///
    /// let word = Arc::new(MultiUseWord::new());
    /// let mut guard = word.lock_arc();
    /// ArcMonitorGuard::unlocked(&mut guard, || assert!(!word.is_locked()));
    /// assert!(word.is_held_by_current_thread());
    /// ```
    #[track_caller]
    pub fn unlocked<U>(guard: &mut Self, f: impl FnOnce() -> U) -> U {
        check_depth_one(guard.depth(), "ArcMonitorGuard::unlocked");
        guard.monitor.release_while::<true, U>(false, f)
    }

    /// See [`MonitorGuard::unlocked_fair`]; the same rule as
    /// [`unlocked`](Self::unlocked).
    ///
    /// # Panics
    /// As [`unlocked`](Self::unlocked).
    #[track_caller]
    pub fn unlocked_fair<U>(guard: &mut Self, f: impl FnOnce() -> U) -> U {
        check_depth_one(guard.depth(), "ArcMonitorGuard::unlocked_fair");
        guard.monitor.release_while::<true, U>(true, f)
    }

    /// See [`MonitorGuard::bump`].
    pub fn bump(guard: &mut Self) {
        guard.monitor.bump_as::<true>();
    }

    /// Releases this level of the monitor and returns the guard's `Arc`
    /// (lock_api's `ArcMutexGuard::into_arc`).
    ///
    /// ```
    /// use metalock::{ArcMonitorGuard, Monitor, MultiUseWord};
    /// use std::sync::Arc;
    ///
    /// let word = Arc::new(MultiUseWord::new());
    /// let object = ArcMonitorGuard::into_arc(word.lock_arc());
    /// assert!(Arc::ptr_eq(&object, &word) && !object.is_locked());
    /// ```
    pub fn into_arc(guard: Self) -> Arc<T> {
        guard.release(false)
    }

    /// As [`into_arc`](Self::into_arc), releasing the level as
    /// [`unlock_fair`](Self::unlock_fair) does.
    pub fn into_arc_fair(guard: Self) -> Arc<T> {
        guard.release(true)
    }

    /// Releases the level (handing the monitor over if `fair` and it is the
    /// last), then gives the `Arc` back.
    fn release(self, fair: bool) -> Arc<T> {
        let mut this = ManuallyDrop::new(self);
        let this = &mut *this;
        // SAFETY: the guard is never dropped nor used again, and `monitor`
        // borrows a word `object` keeps (the type's invariant).
        unsafe { super::release_owned(&mut this.monitor, &this.object, fair) }
    }
}

impl<T: ?Sized> ArcMonitorGuard<T> {
    crate::guard::forward_waits!(monitor, "MonitorGuard");
}

impl<T: ?Sized> Drop for ArcMonitorGuard<T> {
    fn drop(&mut self) {
        // SAFETY: dropped once, here, before `object` (the invariant).
        unsafe { ManuallyDrop::drop(&mut self.monitor) };
    }
}

impl<T: ?Sized> sealed::Sealed for ArcMonitorGuard<T> {
    fn __monitor_guard(&self, _: sealed::Token) -> sealed::MonitorRef<'_> {
        self.monitor.monitor_ref()
    }
}

impl<T: ?Sized> AsMonitorGuard for ArcMonitorGuard<T> {
    type Target = ();

    fn __target(&mut self) -> &mut () {
        self.monitor.__target()
    }
}

impl<T: ?Sized> Deref for ArcMonitorGuard<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.object
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for ArcMonitorGuard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArcMonitorGuard")
            .field("object", &&*self.object)
            .field("depth", &self.depth())
            .finish()
    }
}
