//! The [`Monitor`] trait: the methods of [`MultiUseWord`] that enter its
//! monitor (`word`), for any type that embeds a word.

use core::time::Duration;

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
