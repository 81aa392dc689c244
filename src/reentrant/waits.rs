//! The methods both reentrant guards share
//! ([`ReentrantSynchronizedGuard`](super::ReentrantSynchronizedGuard) and
//! [`ArcReentrantSynchronizedGuard`](super::ArcReentrantSynchronizedGuard)):
//! waits, notifies and releases while a closure runs, and the depth rule
//! that lets them wait one level deep only.

#[cfg(feature = "std")]
use crate::guard::wait_while_interruptibly_until;
use crate::guard::{AsMonitorGuard, MonitorGuard, WaitTimeoutResult, sealed, wait_while_until};
#[cfg(feature = "std")]
use crate::interrupt::Interrupted;
use crate::monitor::WaitSet;
use crate::sys::Instant;

/// Panics unless a reentrant guard that is to wait is the thread's only one
/// of its monitor: below an outer guard, a method of the value may be
/// running, which another thread would reach during the wait.
#[track_caller]
pub(super) fn check_wait_depth(depth: usize, guard: &str) {
    if depth != 1 {
        panic!(
            "metalock: {guard} waits only one level deep, and this thread holds the monitor \
             {depth} levels deep: an outer level may be inside a method of the value, which \
             another thread would reach during the wait; wait through the outermost guard"
        );
    }
}

/// A reentrant guard's monitor lent to one wait, which checks the depth
/// rule only when it is about to release the monitor (a `wait_while`
/// whose condition is already false returns at any depth); with the
/// guard's type name, for the panic.
pub(super) struct OneLevelDeep<'g, 'a> {
    pub(super) monitor: &'g mut MonitorGuard<'a>,
    pub(super) guard: &'static str,
}

impl<'g, 'a> OneLevelDeep<'g, 'a> {
    /// The monitor guard, for a wait that releases it whatever happens.
    #[track_caller]
    pub(super) fn checked(self) -> &'g mut MonitorGuard<'a> {
        check_wait_depth(self.monitor.depth(), self.guard);
        self.monitor
    }
}

impl sealed::Sealed for OneLevelDeep<'_, '_> {
    #[track_caller]
    fn __monitor_guard(&self, _: sealed::Token) -> sealed::MonitorRef<'_> {
        check_wait_depth(self.monitor.depth(), self.guard);
        self.monitor.monitor_ref()
    }
}

impl AsMonitorGuard for OneLevelDeep<'_, '_> {
    type Target = ();

    fn __target(&mut self) -> &mut () {
        self.monitor.__target()
    }
}

/// A reentrant guard's `wait_while` until `deadline` (none: untimed), its
/// condition seeing the value.
#[track_caller]
pub(super) fn wait_while_by<T: ?Sized>(
    (mut monitor, value): (OneLevelDeep<'_, '_>, &T),
    mut condition: impl FnMut(&T) -> bool,
    deadline: Option<Instant>,
) -> WaitTimeoutResult {
    wait_while_until(
        &mut monitor,
        WaitSet::Monitor,
        |()| condition(value),
        deadline,
    )
}

/// As [`wait_while_by`], each wait interruptible.
#[cfg(feature = "std")]
#[track_caller]
pub(super) fn wait_while_interruptibly_by<T: ?Sized>(
    (mut monitor, value): (OneLevelDeep<'_, '_>, &T),
    mut condition: impl FnMut(&T) -> bool,
    deadline: Option<Instant>,
) -> Result<WaitTimeoutResult, Interrupted> {
    let condition = |_: &mut ()| condition(value);
    wait_while_interruptibly_until(&mut monitor, WaitSet::Monitor, condition, deadline)
}

/// `depth`, the twelve waits, the two notifies, `unlocked`,
/// `unlocked_fair` and `bump` of a reentrant guard of a
/// `ReentrantSynchronized<T>`, expanded in its `impl` block: `$guard` is
/// its name (in panic messages and examples), `$lock` the method that
/// makes it, and `$open` / `$close` what wraps a `ReentrantSynchronized`
/// for that method (an `Arc::new(`, `)`), in the examples. The guard provides
/// `fn parts(&mut self) -> (OneLevelDeep<'_, '_>, &T)` and a `monitor`
/// field that derefs to its `MonitorGuard`.
macro_rules! reentrant_guard_methods {
    ($guard:literal, $lock:literal, $open:literal, $close:literal) => {
        /// The guard's name, in panic messages.
        const GUARD: &'static str = $guard;

        /// How many levels the calling thread holds (see
        /// [`MonitorGuard::depth`](crate::MonitorGuard::depth)).
        ///
        /// ```
        #[doc = concat!("let value = ", $open, "metalock::ReentrantSynchronized::new(())", $close, ";")]
        #[doc = concat!("let outer = value.", $lock, "();")]
        #[doc = concat!("assert_eq!(value.", $lock, "().depth(), 2);")]
        /// assert_eq!(outer.depth(), 1);
        /// ```
        pub fn depth(&self) -> usize {
            self.monitor.depth()
        }

        /// Releases the monitor, waits for a notification, and takes it
        /// back (see [`MonitorGuard::wait`](crate::MonitorGuard::wait)).
        ///
        /// # Panics
        ///
        /// Below the thread's outermost guard of the monitor (see the
        /// type's docs), before anything is released; so do the other
        /// waits (a `wait_while` only if it is to wait: one whose
        /// condition is already false returns at once, at any depth).
        #[track_caller]
        pub fn wait(&mut self) {
            self.parts().0.checked().wait();
        }

        /// See [`MonitorGuard::wait_for`](crate::MonitorGuard::wait_for).
        ///
        /// ```
        /// use std::time::Duration;
        ///
        #[doc = concat!("let value = ", $open, "metalock::ReentrantSynchronized::new(0)", $close, ";")]
        #[doc = concat!("let mut guard = value.", $lock, "();")]
        /// assert!(guard.wait_for(Duration::from_millis(1)).timed_out());
        /// ```
        #[track_caller]
        pub fn wait_for(&mut self, timeout: ::core::time::Duration) -> $crate::WaitTimeoutResult {
            self.parts().0.checked().wait_for(timeout)
        }

        /// See [`MonitorGuard::wait_until`](crate::MonitorGuard::wait_until).
        #[track_caller]
        pub fn wait_until(&mut self, deadline: $crate::sys::Instant) -> $crate::WaitTimeoutResult {
            self.parts().0.checked().wait_until(deadline)
        }

        /// See
        /// [`MonitorGuard::wait_interruptibly`](crate::MonitorGuard::wait_interruptibly).
        ///
        /// ```
        #[doc = concat!("let value = ", $open, "metalock::ReentrantSynchronized::new(0)", $close, ";")]
        /// metalock::interrupt_handle().interrupt();
        #[doc = concat!("let mut guard = value.", $lock, "();")]
        /// assert_eq!(guard.wait_interruptibly(), Err(metalock::Interrupted));
        /// ```
        #[cfg(feature = "std")]
        #[track_caller]
        pub fn wait_interruptibly(&mut self) -> Result<(), $crate::Interrupted> {
            self.parts().0.checked().wait_interruptibly()
        }

        /// See
        /// [`MonitorGuard::wait_for_interruptibly`](crate::MonitorGuard::wait_for_interruptibly).
        #[cfg(feature = "std")]
        #[track_caller]
        pub fn wait_for_interruptibly(
            &mut self,
            timeout: ::core::time::Duration,
        ) -> Result<$crate::WaitTimeoutResult, $crate::Interrupted> {
            self.parts().0.checked().wait_for_interruptibly(timeout)
        }

        /// See
        /// [`MonitorGuard::wait_until_interruptibly`](crate::MonitorGuard::wait_until_interruptibly).
        #[cfg(feature = "std")]
        #[track_caller]
        pub fn wait_until_interruptibly(
            &mut self,
            deadline: $crate::sys::Instant,
        ) -> Result<$crate::WaitTimeoutResult, $crate::Interrupted> {
            self.parts().0.checked().wait_until_interruptibly(deadline)
        }

        /// Waits while `condition` holds for the value, re-checking it
        /// after every wake-up (see
        /// [`MonitorGuard::wait_while`](crate::MonitorGuard::wait_while)).
        #[track_caller]
        pub fn wait_while(&mut self, condition: impl FnMut(&T) -> bool) {
            $crate::reentrant::waits::wait_while_by(self.parts(), condition, None);
        }

        /// As [`wait_while`](Self::wait_while), giving up after `timeout`;
        /// timed out if the condition still held when the time ran out.
        ///
        /// ```
        /// use std::cell::Cell;
        /// use std::time::Duration;
        ///
        #[doc = concat!("let count = ", $open, "metalock::ReentrantSynchronized::new(Cell::new(0))", $close, ";")]
        #[doc = concat!("let mut guard = count.", $lock, "();")]
        /// let result = guard.wait_while_for(|count| count.get() == 0, Duration::from_millis(1));
        /// assert!(result.timed_out());
        /// ```
        #[track_caller]
        pub fn wait_while_for(
            &mut self,
            condition: impl FnMut(&T) -> bool,
            timeout: ::core::time::Duration,
        ) -> $crate::WaitTimeoutResult {
            let deadline = $crate::guard::deadline_after(timeout);
            $crate::reentrant::waits::wait_while_by(self.parts(), condition, deadline)
        }

        /// As [`wait_while`](Self::wait_while), giving up at `deadline`.
        #[track_caller]
        pub fn wait_while_until(
            &mut self,
            condition: impl FnMut(&T) -> bool,
            deadline: $crate::sys::Instant,
        ) -> $crate::WaitTimeoutResult {
            $crate::reentrant::waits::wait_while_by(self.parts(), condition, Some(deadline))
        }

        /// As [`wait_while`](Self::wait_while), each wait interruptible
        /// (see
        /// [`MonitorGuard::wait_while_interruptibly`](crate::MonitorGuard::wait_while_interruptibly)).
        #[cfg(feature = "std")]
        #[track_caller]
        pub fn wait_while_interruptibly(
            &mut self,
            condition: impl FnMut(&T) -> bool,
        ) -> Result<(), $crate::Interrupted> {
            $crate::reentrant::waits::wait_while_interruptibly_by(self.parts(), condition, None)
                .map(drop)
        }

        /// As [`wait_while_interruptibly`](Self::wait_while_interruptibly),
        /// giving up after `timeout`.
        #[cfg(feature = "std")]
        #[track_caller]
        pub fn wait_while_for_interruptibly(
            &mut self,
            condition: impl FnMut(&T) -> bool,
            timeout: ::core::time::Duration,
        ) -> Result<$crate::WaitTimeoutResult, $crate::Interrupted> {
            let deadline = $crate::guard::deadline_after(timeout);
            $crate::reentrant::waits::wait_while_interruptibly_by(self.parts(), condition, deadline)
        }

        /// As [`wait_while_interruptibly`](Self::wait_while_interruptibly),
        /// giving up at `deadline`.
        #[cfg(feature = "std")]
        #[track_caller]
        pub fn wait_while_until_interruptibly(
            &mut self,
            condition: impl FnMut(&T) -> bool,
            deadline: $crate::sys::Instant,
        ) -> Result<$crate::WaitTimeoutResult, $crate::Interrupted> {
            let deadline = Some(deadline);
            $crate::reentrant::waits::wait_while_interruptibly_by(self.parts(), condition, deadline)
        }

        /// See [`MonitorGuard::notify_one`](crate::MonitorGuard::notify_one).
        pub fn notify_one(&self) -> bool {
            self.monitor.notify_one()
        }

        /// See [`MonitorGuard::notify_all`](crate::MonitorGuard::notify_all).
        pub fn notify_all(&self) -> usize {
            self.monitor.notify_all()
        }

        /// Releases the monitor while `f` runs, and enters it again before
        /// returning, also if `f` panics; one level deep only, deeper it
        /// panics (see
        /// [`MonitorGuard::unlocked`](crate::MonitorGuard::unlocked)). An
        /// associated function, so that it cannot clash with a method of
        /// `T`.
        ///
        /// ```
        #[doc = concat!("let value = ", $open, "metalock::ReentrantSynchronized::new(1)", $close, ";")]
        #[doc = concat!("let mut guard = value.", $lock, "();")]
        #[doc = concat!("metalock::", $guard, "::unlocked(&mut guard, || {")]
        ///     assert!(!value.is_held_by_current_thread());
        /// });
        /// assert_eq!(*guard, 1);
        /// ```
        #[track_caller]
        pub fn unlocked<U>(guard: &mut Self, f: impl FnOnce() -> U) -> U {
            $crate::guard::check_depth_one(guard.depth(), concat!($guard, "::unlocked"));
            $crate::MonitorGuard::unlocked(&mut guard.monitor, f)
        }

        /// As [`unlocked`](Self::unlocked), handing the monitor to the
        /// first queued thread.
        #[track_caller]
        pub fn unlocked_fair<U>(guard: &mut Self, f: impl FnOnce() -> U) -> U {
            $crate::guard::check_depth_one(guard.depth(), concat!($guard, "::unlocked_fair"));
            $crate::MonitorGuard::unlocked_fair(&mut guard.monitor, f)
        }

        /// Gives the first queued thread a turn, if any, and takes the
        /// monitor back; a no-op deeper than one level (see
        /// [`MonitorGuard::bump`](crate::MonitorGuard::bump)).
        pub fn bump(guard: &mut Self) {
            $crate::MonitorGuard::bump(&mut guard.monitor);
        }
    };
}

pub(super) use reentrant_guard_methods;
