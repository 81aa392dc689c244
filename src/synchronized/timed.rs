//! The enters of [`Synchronized`] that may give up: after a time, or at
//! an interrupt.

use core::time::Duration;

use super::{Synchronized, SynchronizedGuard};
#[cfg(feature = "std")]
use crate::exec_env::ExecEnv;
use crate::guard::{self, deadline_after};
#[cfg(feature = "std")]
use crate::lock_record::LockRecord;
use crate::sys::Instant;

impl<T: ?Sized> Synchronized<T> {
    /// As [`lock`](Self::lock), unless the calling thread is interrupted
    /// before it enters (see
    /// [`MultiUseWord::lock_interruptibly`](crate::MultiUseWord::lock_interruptibly)):
    /// then [`Interrupted`](crate::Interrupted), the flag cleared. Locking again
    /// on the thread that holds it panics, as `lock` (unless the flag is
    /// set: that returns `Interrupted` first).
    ///
    /// ```
    /// use metalock::{Interrupted, Synchronized};
    ///
    /// let jobs = Synchronized::new(0);
    /// metalock::interrupt_handle().interrupt();
    /// assert!(matches!(jobs.lock_interruptibly(), Err(Interrupted)));
    /// *jobs.lock_interruptibly().unwrap() += 1;
    /// ```
    #[cfg(feature = "std")]
    #[inline]
    #[track_caller]
    pub fn lock_interruptibly(&self) -> Result<SynchronizedGuard<'_, T>, crate::Interrupted> {
        self.enter_interruptibly().map(|record| self.guard(record))
    }

    /// Enters the monitor, waiting at most `timeout` for another thread to
    /// release it; `None` if it still holds it then, or if the calling
    /// thread holds it (as [`try_lock`](Self::try_lock), at once).
    ///
    /// ```
    /// use metalock::Synchronized;
    /// use std::time::Duration;
    ///
    /// let counter = Synchronized::new(0);
    /// let held = counter.lock();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| assert!(counter.try_lock_for(Duration::from_millis(10)).is_none()));
    /// });
    /// drop(held);
    /// *counter.try_lock_for(Duration::from_millis(10)).unwrap() += 1;
    /// assert_eq!(*counter.lock(), 1);
    /// ```
    #[inline]
    pub fn try_lock_for(&self, timeout: Duration) -> Option<SynchronizedGuard<'_, T>> {
        match deadline_after(timeout) {
            Some(deadline) => self.try_lock_until(deadline),
            // A timeout past what the clock can hold: no deadline, except
            // that the owner gets `None` at once, as from any try.
            None if self.is_held_by_current_thread() => None,
            None => Some(self.lock()),
        }
    }

    /// As [`try_lock_for`](Self::try_lock_for), giving up at `deadline`.
    ///
    /// ```
    /// use metalock::{Instant, Synchronized};
    /// use std::time::Duration;
    ///
    /// let value = Synchronized::new(0);
    /// let held = value.lock();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         let deadline = Instant::now() + Duration::from_millis(10);
    ///         assert!(value.try_lock_until(deadline).is_none());
    ///     });
    /// });
    /// drop(held);
    /// *value.try_lock_until(Instant::now()).unwrap() += 1;
    /// assert_eq!(*value.lock(), 1);
    /// ```
    #[inline]
    pub fn try_lock_until(&self, deadline: Instant) -> Option<SynchronizedGuard<'_, T>> {
        guard::try_entered!(|ee| self.word.try_enter_until::<false>(ee, deadline))
            .map(|record| self.guard(record))
    }

    /// As [`try_lock_for`](Self::try_lock_for), unless the calling thread is
    /// interrupted first (see
    /// [`MultiUseWord::try_lock_for_interruptibly`](crate::MultiUseWord::try_lock_for_interruptibly)):
    /// `Ok(None)` if another thread still holds the monitor after `timeout`,
    /// or if the calling thread holds it (at once), and
    /// [`Interrupted`](crate::Interrupted), the flag cleared, for an
    /// interrupt set before the call or one that comes while the thread
    /// waits.
    ///
    /// ```
    /// use metalock::{Interrupted, Synchronized};
    /// use std::time::Duration;
    ///
    /// let jobs = Synchronized::new(0);
    /// let held = jobs.lock();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         let timeout = Duration::from_millis(10);
    ///         assert!(jobs.try_lock_for_interruptibly(timeout).unwrap().is_none());
    ///         metalock::interrupt_handle().interrupt();
    ///         assert!(matches!(jobs.try_lock_for_interruptibly(timeout), Err(Interrupted)));
    ///     });
    /// });
    /// drop(held);
    /// ```
    #[cfg(feature = "std")]
    #[inline]
    pub fn try_lock_for_interruptibly(
        &self,
        timeout: Duration,
    ) -> Result<Option<SynchronizedGuard<'_, T>>, crate::Interrupted> {
        let entered = self.enter_interruptibly_for(timeout)?;
        Ok(entered.map(|record| self.guard(record)))
    }

    /// As [`try_lock_for_interruptibly`](Self::try_lock_for_interruptibly),
    /// giving up at `deadline`.
    ///
    /// ```
    /// use metalock::{Instant, Synchronized};
    ///
    /// let value = Synchronized::new(0);
    /// *value.try_lock_until_interruptibly(Instant::now()).unwrap().unwrap() += 1;
    /// assert_eq!(*value.lock(), 1);
    /// ```
    #[cfg(feature = "std")]
    #[inline]
    pub fn try_lock_until_interruptibly(
        &self,
        deadline: Instant,
    ) -> Result<Option<SynchronizedGuard<'_, T>>, crate::Interrupted> {
        let entered = self.enter_interruptibly_until(deadline)?;
        Ok(entered.map(|record| self.guard(record)))
    }

    /// The enter of `lock_interruptibly`, for the borrowed and the `Arc`
    /// guards: the record of the calling thread, which owns the monitor.
    #[cfg(feature = "std")]
    #[inline]
    #[track_caller]
    pub(super) fn enter_interruptibly(&self) -> Result<&'static LockRecord, crate::Interrupted> {
        if guard::interrupted_before() {
            return Err(crate::Interrupted);
        }
        let ee = ExecEnv::current();
        let entered = guard::released_unless(ee, self.word.enter_interruptibly::<false>(ee, None));
        guard::entered_or_interrupted(entered)
    }

    /// The enter of `try_lock_for_interruptibly`, as `enter_interruptibly`.
    #[cfg(feature = "std")]
    pub(super) fn enter_interruptibly_for(
        &self,
        timeout: Duration,
    ) -> Result<Option<&'static LockRecord>, crate::Interrupted> {
        match deadline_after(timeout) {
            Some(deadline) => self.enter_interruptibly_until(deadline),
            // As `try_lock_for`: the owner gets `None` at once (once the
            // flag is checked, as every interruptible enter does first).
            None if guard::interrupted_before() => Err(crate::Interrupted),
            None if self.is_held_by_current_thread() => Ok(None),
            None => self.enter_interruptibly().map(Some),
        }
    }

    /// The enter of `try_lock_until_interruptibly`, as `enter_interruptibly`.
    #[cfg(feature = "std")]
    pub(super) fn enter_interruptibly_until(
        &self,
        deadline: Instant,
    ) -> Result<Option<&'static LockRecord>, crate::Interrupted> {
        if guard::interrupted_before() {
            return Err(crate::Interrupted);
        }
        let ee = ExecEnv::current();
        let entered = self.word.enter_interruptibly::<false>(ee, Some(deadline));
        let entered = guard::released_unless(ee, entered);
        guard::timed_out_or_interrupted(entered)
    }
}
