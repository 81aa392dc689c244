//! [`ReentrantSynchronized`]: a value behind a reentrant monitor, shared
//! with the thread that holds it, as a Java object whose `synchronized`
//! methods call each other.

#[cfg(target_has_atomic = "ptr")]
mod arc;
mod guard;
mod mapped;
mod waits;

#[cfg(target_has_atomic = "ptr")]
pub use arc::ArcReentrantSynchronizedGuard;
pub use guard::ReentrantSynchronizedGuard;
pub use mapped::MappedReentrantSynchronizedGuard;

use core::fmt;
use core::time::Duration;

use crate::guard::MonitorGuard;
use crate::sys::Instant;
use crate::word::MultiUseWord;

/// A value of type `T` behind a reentrant one-word monitor: the thread that
/// holds it may lock it again, and each guard lends `&T`, as
/// `parking_lot::ReentrantMutex` does. Mutate through a `Cell`, `RefCell` or
/// atomic inside; for `&mut T` and no reentrancy there is
/// [`Synchronized`](crate::Synchronized).
///
/// ```
/// use metalock::ReentrantSynchronized;
/// use std::cell::Cell;
///
/// struct Account {
///     balance: Cell<i64>,
/// }
///
/// fn deposit(account: &ReentrantSynchronized<Account>, amount: i64) {
///     let account = account.lock();
///     account.balance.set(account.balance.get() + amount);
/// }
///
/// fn transfer_in(account: &ReentrantSynchronized<Account>, amounts: &[i64]) {
///     let held = account.lock(); // the whole batch at once...
///     for &amount in amounts {
///         deposit(account, amount); // ...and each deposit locks again
///     }
///     assert_eq!(held.depth(), 1);
/// }
///
/// let account = ReentrantSynchronized::new(Account { balance: Cell::new(0) });
/// std::thread::scope(|s| {
///     s.spawn(|| transfer_in(&account, &[10, 20]));
///     s.spawn(|| deposit(&account, 5));
/// });
/// assert_eq!(account.lock().balance.get(), 35);
/// ```
///
/// A guard waits only one level deep, through the thread's outermost guard
/// of the monitor: deeper, an outer level may be inside a method of the
/// value, which another thread would reach during the wait (see
/// [`ReentrantSynchronizedGuard`]).
///
/// Invariant: `value` is reached only through a guard, by the thread that
/// holds `word`'s monitor (or, through a shared mapped guard, by another
/// thread, and then only a part that is `Sync`), or through `&mut self`; a
/// guard releases the monitor to another thread only when it is the
/// holder's only guard, and mutably borrowed (a wait), or consumed.
pub struct ReentrantSynchronized<T: ?Sized> {
    word: MultiUseWord,
    value: T,
}

// `Send` comes with `T: Send` (the fields). Sharing lets one thread at a time
// reach `&T`, the holder of the monitor; a `T` that is not `Sync` (a `Cell`)
// is then used by one thread at a time, as `parking_lot::ReentrantMutex`
// allows.
// SAFETY: `&T` is reached only under the monitor (the invariant; the one
// exception, a mapped guard shared with another thread, shares a part that
// is `Sync`), and every `&T` of one holder ends before the next holder's
// first: a wait releases the monitor only through the holder's only guard,
// borrowed mutably, so no `&T` (nor a method of `T` running on `&T`) lives
// across it. T: Send lets the value pass from one thread to the next.
unsafe impl<T: ?Sized + Send> Sync for ReentrantSynchronized<T> {}

impl<T> ReentrantSynchronized<T> {
    const_unless_loom! {
        /// Wraps `value`, unlocked.
        ///
        /// ```
        /// use metalock::ReentrantSynchronized;
        /// use std::cell::Cell;
        ///
        /// static HITS: ReentrantSynchronized<Cell<u32>> = ReentrantSynchronized::new(Cell::new(0));
        /// let hits = HITS.lock();
        /// hits.set(hits.get() + 1);
        /// assert_eq!(HITS.lock().get(), 1); // a second level, same thread
        /// ```
        pub fn new(value: T) -> Self {
            Self {
                word: MultiUseWord::new(),
                value,
            }
        }
    }

    const_unless_loom! {
        /// Wraps `value` in a fair monitor, unlocked (see
        /// [`MultiUseWord::new_fair`]).
        ///
        /// ```
        /// let fifo = metalock::ReentrantSynchronized::new_fair(0);
        /// assert!(fifo.is_fair());
        /// ```
        pub fn new_fair(value: T) -> Self {
            Self {
                word: MultiUseWord::new_fair(),
                value,
            }
        }
    }

    /// Unwraps the value.
    ///
    /// ```
    /// let names = metalock::ReentrantSynchronized::new(vec!["a"]);
    /// assert_eq!(names.into_inner(), ["a"]);
    /// ```
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T: ?Sized> ReentrantSynchronized<T> {
    /// Enters the monitor, blocking while another thread holds it; the
    /// thread that holds it enters one level deeper at once.
    ///
    /// ```
    /// use metalock::ReentrantSynchronized;
    ///
    /// let value = ReentrantSynchronized::new(1);
    /// let outer = value.lock();
    /// let inner = value.lock();
    /// assert_eq!((*outer, *inner, inner.depth()), (1, 1, 2));
    /// ```
    #[inline]
    #[track_caller]
    pub fn lock(&self) -> ReentrantSynchronizedGuard<'_, T> {
        self.guard(self.word.lock())
    }

    fn guard<'a>(&'a self, monitor: MonitorGuard<'a>) -> ReentrantSynchronizedGuard<'a, T> {
        ReentrantSynchronizedGuard {
            monitor,
            sync: self,
        }
    }

    /// As [`lock`](Self::lock), unless the calling thread is interrupted
    /// before it enters (see [`MultiUseWord::lock_interruptibly`]): then
    /// [`Interrupted`](crate::Interrupted), the flag cleared.
    ///
    /// ```
    /// use metalock::{Interrupted, ReentrantSynchronized};
    ///
    /// let value = ReentrantSynchronized::new(0);
    /// let outer = value.lock_interruptibly().unwrap();
    /// metalock::interrupt_handle().interrupt();
    /// assert!(matches!(value.lock_interruptibly(), Err(Interrupted))); // set before
    /// assert_eq!(value.lock_interruptibly().unwrap().depth(), 2);
    /// ```
    #[cfg(feature = "std")]
    #[inline]
    #[track_caller]
    pub fn lock_interruptibly(
        &self,
    ) -> Result<ReentrantSynchronizedGuard<'_, T>, crate::Interrupted> {
        self.word
            .lock_interruptibly()
            .map(|monitor| self.guard(monitor))
    }

    /// Enters the monitor if it is free or the calling thread holds it;
    /// `None` if another thread holds it.
    ///
    /// ```
    /// let value = metalock::ReentrantSynchronized::new(1);
    /// let outer = value.lock();
    /// assert_eq!(value.try_lock().unwrap().depth(), 2); // reentrant
    /// std::thread::scope(|s| {
    ///     s.spawn(|| assert!(value.try_lock().is_none()));
    /// });
    /// drop(outer);
    /// ```
    #[inline]
    pub fn try_lock(&self) -> Option<ReentrantSynchronizedGuard<'_, T>> {
        self.word.try_lock().map(|monitor| self.guard(monitor))
    }

    /// Enters the monitor, waiting at most `timeout` for another thread to
    /// release it; `None` if it still holds it then.
    ///
    /// ```
    /// use metalock::ReentrantSynchronized;
    /// use std::time::Duration;
    ///
    /// let value = ReentrantSynchronized::new(0);
    /// let held = value.lock();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| assert!(value.try_lock_for(Duration::from_millis(10)).is_none()));
    /// });
    /// assert!(value.try_lock_for(Duration::from_millis(10)).is_some()); // the holder's
    /// drop(held);
    /// ```
    pub fn try_lock_for(&self, timeout: Duration) -> Option<ReentrantSynchronizedGuard<'_, T>> {
        self.word
            .try_lock_for(timeout)
            .map(|monitor| self.guard(monitor))
    }

    /// As [`try_lock_for`](Self::try_lock_for), giving up at `deadline`.
    ///
    /// ```
    /// use metalock::{Instant, ReentrantSynchronized};
    ///
    /// let value = ReentrantSynchronized::new(0);
    /// assert!(value.try_lock_until(Instant::now()).is_some()); // free
    /// ```
    pub fn try_lock_until(&self, deadline: Instant) -> Option<ReentrantSynchronizedGuard<'_, T>> {
        self.word
            .try_lock_until(deadline)
            .map(|monitor| self.guard(monitor))
    }

    /// As [`try_lock_for`](Self::try_lock_for), unless the calling thread is
    /// interrupted first; see
    /// [`MultiUseWord::try_lock_for_interruptibly`].
    ///
    /// ```
    /// use metalock::{Interrupted, ReentrantSynchronized};
    /// use std::time::Duration;
    ///
    /// let value = ReentrantSynchronized::new(0);
    /// let outer = value.lock();
    /// let timeout = Duration::from_millis(10);
    /// let inner = value.try_lock_for_interruptibly(timeout).unwrap().unwrap();
    /// assert_eq!(inner.depth(), 2); // the holder's, at once
    /// metalock::interrupt_handle().interrupt();
    /// assert!(matches!(value.try_lock_for_interruptibly(timeout), Err(Interrupted)));
    /// ```
    #[cfg(feature = "std")]
    #[inline]
    #[track_caller]
    pub fn try_lock_for_interruptibly(
        &self,
        timeout: Duration,
    ) -> Result<Option<ReentrantSynchronizedGuard<'_, T>>, crate::Interrupted> {
        let entered = self.word.try_lock_for_interruptibly(timeout)?;
        Ok(entered.map(|monitor| self.guard(monitor)))
    }

    /// As [`try_lock_for_interruptibly`](Self::try_lock_for_interruptibly),
    /// giving up at `deadline`.
    ///
    /// ```
    /// use metalock::{Instant, ReentrantSynchronized};
    ///
    /// let value = ReentrantSynchronized::new(0);
    /// let entered = value.try_lock_until_interruptibly(Instant::now()).unwrap();
    /// assert!(entered.is_some()); // free
    /// ```
    #[cfg(feature = "std")]
    #[inline]
    #[track_caller]
    pub fn try_lock_until_interruptibly(
        &self,
        deadline: Instant,
    ) -> Result<Option<ReentrantSynchronizedGuard<'_, T>>, crate::Interrupted> {
        let entered = self.word.try_lock_until_interruptibly(deadline)?;
        Ok(entered.map(|monitor| self.guard(monitor)))
    }

    /// Whether the monitor is fair (made by [`new_fair`](Self::new_fair)).
    ///
    /// ```
    /// assert!(!metalock::ReentrantSynchronized::new(0).is_fair());
    /// ```
    pub fn is_fair(&self) -> bool {
        self.word.is_fair()
    }

    /// How many threads are queued to enter the monitor now (a snapshot,
    /// for monitoring); see [`MultiUseWord::queue_length`].
    ///
    /// ```
    /// let value = metalock::ReentrantSynchronized::new(0);
    /// let _outer = value.lock();
    /// let _inner = value.lock(); // the holder never queues
    /// assert_eq!(value.queue_length(), 0);
    /// ```
    pub fn queue_length(&self) -> usize {
        self.word.queue_length()
    }

    /// How many threads wait in the monitor's own wait set now (a
    /// snapshot, for monitoring); see [`MultiUseWord::wait_set_length`].
    ///
    /// ```
    /// let value = metalock::ReentrantSynchronized::new(0);
    /// let mut guard = value.lock();
    /// assert!(guard.wait_for(std::time::Duration::ZERO).timed_out());
    /// assert_eq!(value.wait_set_length(), 0); // it left on timing out
    /// ```
    pub fn wait_set_length(&self) -> usize {
        self.word.wait_set_length()
    }

    /// Whether threads are queued to enter the monitor now (a snapshot,
    /// its cost not growing with the queue); see
    /// [`MultiUseWord::has_queued_threads`].
    ///
    /// ```
    /// let value = metalock::ReentrantSynchronized::new(0);
    /// let _outer = value.lock();
    /// let _inner = value.lock(); // the holder never queues
    /// assert!(!value.has_queued_threads());
    /// ```
    pub fn has_queued_threads(&self) -> bool {
        self.word.has_queued_threads()
    }

    /// Whether some thread waits in the monitor's own wait set now (a
    /// snapshot); see [`MultiUseWord::has_waiters`].
    ///
    /// ```
    /// let value = metalock::ReentrantSynchronized::new(0);
    /// let mut guard = value.lock();
    /// assert!(guard.wait_for(std::time::Duration::ZERO).timed_out());
    /// assert!(!value.has_waiters()); // it left on timing out
    /// ```
    pub fn has_waiters(&self) -> bool {
        self.word.has_waiters()
    }

    /// Whether some thread holds the monitor now (a snapshot).
    ///
    /// ```
    /// let value = metalock::ReentrantSynchronized::new(0);
    /// let guard = value.lock();
    /// assert!(value.is_locked());
    /// drop(guard);
    /// assert!(!value.is_locked());
    /// ```
    pub fn is_locked(&self) -> bool {
        self.word.is_locked()
    }

    /// Whether the calling thread holds the monitor.
    ///
    /// ```
    /// let value = metalock::ReentrantSynchronized::new(0);
    /// let guard = value.lock();
    /// assert!(value.is_held_by_current_thread());
    /// std::thread::scope(|s| {
    ///     s.spawn(|| assert!(!value.is_held_by_current_thread()));
    /// });
    /// drop(guard);
    /// ```
    pub fn is_held_by_current_thread(&self) -> bool {
        self.word.is_held_by_current_thread()
    }

    /// The value, through `&mut self`: no other reference exists, so no
    /// lock is taken.
    ///
    /// ```
    /// let mut value = metalock::ReentrantSynchronized::new(1);
    /// *value.get_mut() += 1;
    /// assert_eq!(*value.lock(), 2);
    /// ```
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.value
    }

    /// A raw pointer to the value, for code that synchronizes access
    /// itself; reading through it is sound only under the monitor or
    /// `&mut self`, as through a guard. `*const`: the value is lent as `&T`
    /// only, so writing through it is undefined behaviour unless `T`'s own
    /// interior mutability allows it.
    ///
    /// ```
    /// use metalock::ReentrantSynchronized;
    /// use std::cell::Cell;
    ///
    /// let value = ReentrantSynchronized::new(Cell::new(1));
    /// let guard = value.lock();
    /// // SAFETY: this thread holds the monitor.
    /// unsafe { (*value.data_ptr()).set(2) };
    /// assert_eq!(guard.get(), 2);
    /// ```
    pub fn data_ptr(&self) -> *const T {
        &self.value
    }
}

impl<T: Default> Default for ReentrantSynchronized<T> {
    fn default() -> Self {
        Self::new(T::default())
    }
}

impl<T> From<T> for ReentrantSynchronized<T> {
    fn from(value: T) -> Self {
        Self::new(value)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for ReentrantSynchronized<T> {
    /// Shows the value if the monitor is free or held by the calling
    /// thread, `<locked>` otherwise: formatting never waits for it.
    ///
    /// ```
    /// let value = metalock::ReentrantSynchronized::new(7);
    /// assert_eq!(format!("{value:?}"), "ReentrantSynchronized { value: 7 }");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ReentrantSynchronized");
        match self.try_lock() {
            Some(guard) => d.field("value", &&*guard),
            None => d.field("value", &format_args!("<locked>")),
        };
        d.finish()
    }
}

/// Serializes the value under the monitor: it blocks while another thread
/// holds the monitor, and enters one level deeper if the calling thread
/// does.
#[cfg(feature = "serde")]
impl<T: ?Sized + serde::Serialize> serde::Serialize for ReentrantSynchronized<T> {
    #[track_caller]
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.lock().serialize(serializer)
    }
}

/// Deserializes the value and wraps it, unlocked.
#[cfg(feature = "serde")]
impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for ReentrantSynchronized<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(ReentrantSynchronized::new)
    }
}
