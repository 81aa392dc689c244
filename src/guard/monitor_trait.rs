//! The [`Monitor`] trait: the methods of [`MultiUseWord`] that enter its
//! monitor (`word`), for any type that embeds a word.

#[cfg(target_has_atomic = "ptr")]
use alloc::sync::Arc;
use core::time::Duration;

#[cfg(target_has_atomic = "ptr")]
use super::ArcMonitorGuard;
use super::MonitorGuard;
use crate::sys::Instant;
use crate::word::MultiUseWord;

/// Any type that embeds a [`MultiUseWord`] gets a monitor by implementing
/// this one method.
///
/// ```
/// use metalock::{Monitor, MultiUseWord};
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
/// let account = Account { word: MultiUseWord::new(), id: 7 };
/// let id = account.synchronized(|guard| {
///     assert_eq!(guard.depth(), 1);
///     account.id
/// });
/// assert_eq!(id, 7);
/// ```
pub trait Monitor {
    /// The word that holds this object's monitor.
    ///
    /// ```
    /// use metalock::{Monitor, MultiUseWord};
    ///
    /// struct Tagged {
    ///     word: MultiUseWord,
    /// }
    ///
    /// impl Monitor for Tagged {
    ///     fn multi_use_word(&self) -> &MultiUseWord {
    ///         &self.word
    ///     }
    /// }
    ///
    /// let tagged = Tagged { word: MultiUseWord::with_payload(7) };
    /// let _guard = tagged.lock();
    /// assert!(tagged.multi_use_word().is_held_by_current_thread());
    /// assert_eq!(tagged.multi_use_word().payload(), 7);
    /// ```
    fn multi_use_word(&self) -> &MultiUseWord;

    /// Enters the object's monitor; see [`MultiUseWord::lock`].
    ///
    /// ```
    /// use metalock::{Monitor, MultiUseWord};
    ///
    /// fn depth_inside(object: &impl Monitor) -> usize {
    ///     object.lock().depth()
    /// }
    ///
    /// let word = MultiUseWord::new(); // a word is a `Monitor` too
    /// assert_eq!(depth_inside(&word), 1);
    /// let _guard = word.lock();
    /// assert_eq!(depth_inside(&word), 2);
    /// ```
    #[track_caller]
    fn lock(&self) -> MonitorGuard<'_> {
        self.multi_use_word().lock()
    }

    /// Enters the object's monitor if it is free or already ours; see
    /// [`MultiUseWord::try_lock`].
    ///
    /// ```
    /// use metalock::{Monitor, MultiUseWord};
    ///
    /// fn enter_twice(object: &impl Monitor) -> Option<usize> {
    ///     let _outer = object.lock();
    ///     object.try_lock().map(|inner| inner.depth())
    /// }
    ///
    /// assert_eq!(enter_twice(&MultiUseWord::new()), Some(2));
    /// ```
    #[track_caller]
    fn try_lock(&self) -> Option<MonitorGuard<'_>> {
        self.multi_use_word().try_lock()
    }

    /// Runs `f` inside the object's monitor, like Java's `synchronized`
    /// block; the monitor is released however `f` ends.
    ///
    /// ```
    /// use metalock::{Monitor, MultiUseWord};
    /// use std::time::Duration;
    ///
    /// let word = MultiUseWord::new();
    /// let timed_out = word.synchronized(|guard| guard.wait_for(Duration::from_millis(1)));
    /// assert!(timed_out.timed_out());
    /// assert!(!word.is_locked()); // released when `f` returned
    /// ```
    fn synchronized<R>(&self, f: impl FnOnce(&mut MonitorGuard<'_>) -> R) -> R {
        let mut guard = self.lock();
        f(&mut guard)
    }

    /// Enters the object's monitor, waiting at most `timeout`; see
    /// [`MultiUseWord::try_lock_for`].
    ///
    /// ```
    /// use metalock::{Monitor, MultiUseWord};
    /// use std::time::Duration;
    ///
    /// fn busy(object: &(impl Monitor + Sync)) -> bool {
    ///     std::thread::scope(|s| {
    ///         s.spawn(|| object.try_lock_for(Duration::from_millis(1)).is_none())
    ///             .join()
    ///             .unwrap()
    ///     })
    /// }
    ///
    /// let word = MultiUseWord::new();
    /// assert!(!busy(&word));
    /// let _guard = word.lock();
    /// assert!(busy(&word));
    /// ```
    #[track_caller]
    fn try_lock_for(&self, timeout: Duration) -> Option<MonitorGuard<'_>> {
        self.multi_use_word().try_lock_for(timeout)
    }

    /// Enters the object's monitor, waiting at most until `deadline`; see
    /// [`MultiUseWord::try_lock_until`].
    ///
    /// ```
    /// use metalock::{Instant, Monitor, MultiUseWord};
    ///
    /// fn depth_by(object: &impl Monitor, deadline: Instant) -> Option<usize> {
    ///     object.try_lock_until(deadline).map(|guard| guard.depth())
    /// }
    ///
    /// assert_eq!(depth_by(&MultiUseWord::new(), Instant::now()), Some(1));
    /// ```
    #[track_caller]
    fn try_lock_until(&self, deadline: Instant) -> Option<MonitorGuard<'_>> {
        self.multi_use_word().try_lock_until(deadline)
    }

    /// Enters the object's monitor unless the thread is interrupted first;
    /// see [`MultiUseWord::lock_interruptibly`].
    ///
    /// ```
    /// use metalock::{Interrupted, Monitor, MultiUseWord};
    ///
    /// metalock::interrupt_handle().interrupt();
    /// let word = MultiUseWord::new();
    /// assert!(matches!(word.lock_interruptibly(), Err(Interrupted))); // set before
    /// assert!(Monitor::lock_interruptibly(&word).is_ok()); // and cleared
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    fn lock_interruptibly(&self) -> Result<MonitorGuard<'_>, crate::Interrupted> {
        self.multi_use_word().lock_interruptibly()
    }

    /// Enters the object's monitor, waiting at most `timeout`, unless the
    /// thread is interrupted first; see
    /// [`MultiUseWord::try_lock_for_interruptibly`].
    ///
    /// ```
    /// use metalock::{Interrupted, Monitor, MultiUseWord};
    /// use std::time::Duration;
    ///
    /// fn try_for(object: &impl Monitor) -> Result<bool, Interrupted> {
    ///     Ok(object.try_lock_for_interruptibly(Duration::from_millis(1))?.is_some())
    /// }
    ///
    /// let word = MultiUseWord::new();
    /// assert_eq!(try_for(&word), Ok(true));
    /// metalock::interrupt_handle().interrupt();
    /// assert_eq!(try_for(&word), Err(Interrupted));
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    fn try_lock_for_interruptibly(
        &self,
        timeout: Duration,
    ) -> Result<Option<MonitorGuard<'_>>, crate::Interrupted> {
        self.multi_use_word().try_lock_for_interruptibly(timeout)
    }

    /// Enters the object's monitor, waiting at most until `deadline`,
    /// unless the thread is interrupted first; see
    /// [`MultiUseWord::try_lock_until_interruptibly`].
    ///
    /// ```
    /// use metalock::{Instant, Monitor, MultiUseWord};
    ///
    /// let word = MultiUseWord::new();
    /// let entered = Monitor::try_lock_until_interruptibly(&word, Instant::now());
    /// assert!(entered.unwrap().is_some());
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    fn try_lock_until_interruptibly(
        &self,
        deadline: Instant,
    ) -> Result<Option<MonitorGuard<'_>>, crate::Interrupted> {
        self.multi_use_word().try_lock_until_interruptibly(deadline)
    }

    /// As [`lock`](Self::lock), for an object in an `Arc`: the guard holds
    /// a clone of the `Arc`, so it borrows nothing and can be kept in a
    /// struct or returned.
    ///
    /// ```
    /// use metalock::{ArcMonitorGuard, Monitor, MultiUseWord};
    /// use std::sync::Arc;
    ///
    /// struct Session {
    ///     held: ArcMonitorGuard<MultiUseWord>,
    /// }
    ///
    /// let word = Arc::new(MultiUseWord::new());
    /// let session = Session { held: word.lock_arc() };
    /// assert!(word.is_held_by_current_thread());
    /// drop(session);
    /// assert!(!word.is_locked());
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    #[track_caller]
    fn lock_arc(self: &Arc<Self>) -> ArcMonitorGuard<Self> {
        ArcMonitorGuard::new(Arc::clone(self), self.multi_use_word().lock())
    }

    /// As [`try_lock`](Self::try_lock), returning an [`ArcMonitorGuard`].
    ///
    /// ```
    /// use metalock::{Monitor, MultiUseWord};
    /// use std::sync::Arc;
    ///
    /// let word = Arc::new(MultiUseWord::new());
    /// let outer = word.try_lock_arc().unwrap();
    /// assert_eq!(word.try_lock_arc().unwrap().depth(), 2); // reentrant
    /// # drop(outer);
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    #[track_caller]
    fn try_lock_arc(self: &Arc<Self>) -> Option<ArcMonitorGuard<Self>> {
        let monitor = self.multi_use_word().try_lock()?;
        Some(ArcMonitorGuard::new(Arc::clone(self), monitor))
    }

    /// As [`try_lock_for`](Self::try_lock_for), returning an
    /// [`ArcMonitorGuard`].
    ///
    /// ```
    /// use metalock::{Monitor, MultiUseWord};
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// let word = Arc::new(MultiUseWord::new());
    /// let held = word.lock_arc();
    /// let other = Arc::clone(&word);
    /// std::thread::spawn(move || {
    ///     assert!(other.try_lock_arc_for(Duration::from_millis(10)).is_none());
    /// })
    /// .join()
    /// .unwrap();
    /// drop(held);
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    #[track_caller]
    fn try_lock_arc_for(self: &Arc<Self>, timeout: Duration) -> Option<ArcMonitorGuard<Self>> {
        let monitor = self.multi_use_word().try_lock_for(timeout)?;
        Some(ArcMonitorGuard::new(Arc::clone(self), monitor))
    }

    /// As [`try_lock_until`](Self::try_lock_until), returning an
    /// [`ArcMonitorGuard`].
    ///
    /// ```
    /// use metalock::{Instant, Monitor, MultiUseWord};
    /// use std::sync::Arc;
    ///
    /// let word = Arc::new(MultiUseWord::new());
    /// // Free: entered though the deadline has passed.
    /// assert!(word.try_lock_arc_until(Instant::now()).is_some());
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    #[track_caller]
    fn try_lock_arc_until(self: &Arc<Self>, deadline: Instant) -> Option<ArcMonitorGuard<Self>> {
        let monitor = self.multi_use_word().try_lock_until(deadline)?;
        Some(ArcMonitorGuard::new(Arc::clone(self), monitor))
    }

    /// As [`lock_interruptibly`](Self::lock_interruptibly), returning an
    /// [`ArcMonitorGuard`].
    ///
    /// ```
    /// use metalock::{Interrupted, Monitor, MultiUseWord};
    /// use std::sync::Arc;
    ///
    /// let word = Arc::new(MultiUseWord::new());
    /// metalock::interrupt_handle().interrupt();
    /// assert!(matches!(word.lock_arc_interruptibly(), Err(Interrupted)));
    /// assert!(word.lock_arc_interruptibly().is_ok()); // the flag was cleared
    /// ```
    #[cfg(all(feature = "std", target_has_atomic = "ptr"))]
    #[track_caller]
    fn lock_arc_interruptibly(
        self: &Arc<Self>,
    ) -> Result<ArcMonitorGuard<Self>, crate::Interrupted> {
        let monitor = self.multi_use_word().lock_interruptibly()?;
        Ok(ArcMonitorGuard::new(Arc::clone(self), monitor))
    }

    /// As [`try_lock_for_interruptibly`](Self::try_lock_for_interruptibly),
    /// returning an [`ArcMonitorGuard`].
    ///
    /// ```
    /// use metalock::{Monitor, MultiUseWord};
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// let word = Arc::new(MultiUseWord::new());
    /// let entered = word.try_lock_arc_for_interruptibly(Duration::from_millis(1));
    /// assert_eq!(entered.unwrap().unwrap().depth(), 1);
    /// ```
    #[cfg(all(feature = "std", target_has_atomic = "ptr"))]
    #[track_caller]
    fn try_lock_arc_for_interruptibly(
        self: &Arc<Self>,
        timeout: Duration,
    ) -> Result<Option<ArcMonitorGuard<Self>>, crate::Interrupted> {
        let entered = self.multi_use_word().try_lock_for_interruptibly(timeout)?;
        Ok(entered.map(|monitor| ArcMonitorGuard::new(Arc::clone(self), monitor)))
    }

    /// As [`try_lock_until_interruptibly`](Self::try_lock_until_interruptibly),
    /// returning an [`ArcMonitorGuard`].
    ///
    /// ```
    /// use metalock::{Instant, Monitor, MultiUseWord};
    /// use std::sync::Arc;
    ///
    /// let word = Arc::new(MultiUseWord::new());
    /// let entered = word.try_lock_arc_until_interruptibly(Instant::now());
    /// assert!(entered.unwrap().is_some());
    /// ```
    #[cfg(all(feature = "std", target_has_atomic = "ptr"))]
    #[track_caller]
    fn try_lock_arc_until_interruptibly(
        self: &Arc<Self>,
        deadline: Instant,
    ) -> Result<Option<ArcMonitorGuard<Self>>, crate::Interrupted> {
        let entered = self
            .multi_use_word()
            .try_lock_until_interruptibly(deadline)?;
        Ok(entered.map(|monitor| ArcMonitorGuard::new(Arc::clone(self), monitor)))
    }

    /// How many threads are queued to enter the object's monitor now; see
    /// [`MultiUseWord::queue_length`].
    ///
    /// ```
    /// use metalock::{Monitor, MultiUseWord};
    ///
    /// fn contended(object: &impl Monitor) -> bool {
    ///     object.queue_length() > 0
    /// }
    ///
    /// assert!(!contended(&MultiUseWord::new()));
    /// ```
    fn queue_length(&self) -> usize {
        self.multi_use_word().queue_length()
    }

    /// How many threads wait in the object's own wait set now; see
    /// [`MultiUseWord::wait_set_length`].
    ///
    /// ```
    /// use metalock::{Monitor, MultiUseWord};
    ///
    /// fn awaited(object: &impl Monitor) -> bool {
    ///     object.wait_set_length() > 0
    /// }
    ///
    /// assert!(!awaited(&MultiUseWord::new()));
    /// ```
    fn wait_set_length(&self) -> usize {
        self.multi_use_word().wait_set_length()
    }

    /// Whether threads are queued to enter the object's monitor now; see
    /// [`MultiUseWord::has_queued_threads`].
    ///
    /// ```
    /// use metalock::{Monitor, MultiUseWord};
    ///
    /// fn contended(object: &impl Monitor) -> bool {
    ///     object.has_queued_threads()
    /// }
    ///
    /// assert!(!contended(&MultiUseWord::new()));
    /// ```
    fn has_queued_threads(&self) -> bool {
        self.multi_use_word().has_queued_threads()
    }

    /// Whether some thread waits in the object's own wait set now; see
    /// [`MultiUseWord::has_waiters`].
    ///
    /// ```
    /// use metalock::{Monitor, MultiUseWord};
    ///
    /// fn awaited(object: &impl Monitor) -> bool {
    ///     object.has_waiters()
    /// }
    ///
    /// assert!(!awaited(&MultiUseWord::new()));
    /// ```
    fn has_waiters(&self) -> bool {
        self.multi_use_word().has_waiters()
    }

    /// Whether some thread holds the object's monitor now; see
    /// [`MultiUseWord::is_locked`].
    ///
    /// ```
    /// use metalock::{Monitor, MultiUseWord};
    ///
    /// fn locked(object: &impl Monitor) -> bool {
    ///     object.is_locked()
    /// }
    ///
    /// let word = MultiUseWord::new();
    /// let guard = word.lock();
    /// assert!(locked(&word));
    /// drop(guard);
    /// assert!(!locked(&word));
    /// ```
    fn is_locked(&self) -> bool {
        self.multi_use_word().is_locked()
    }

    /// Whether the calling thread holds the object's monitor; see
    /// [`MultiUseWord::is_held_by_current_thread`].
    ///
    /// ```
    /// use metalock::{Monitor, MultiUseWord};
    ///
    /// fn mine(object: &impl Monitor) -> bool {
    ///     object.is_held_by_current_thread()
    /// }
    ///
    /// let word = MultiUseWord::new();
    /// let _guard = word.lock();
    /// assert!(mine(&word));
    /// ```
    fn is_held_by_current_thread(&self) -> bool {
        self.multi_use_word().is_held_by_current_thread()
    }
}

impl Monitor for MultiUseWord {
    fn multi_use_word(&self) -> &MultiUseWord {
        self
    }
}
