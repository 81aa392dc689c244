//! [`ArcSynchronizedGuard`]'s wait and notify methods, which forward to its
//! monitor guard (see `SynchronizedGuard`'s for the semantics).

use core::time::Duration;

use super::ArcSynchronizedGuard;
#[cfg(feature = "std")]
use crate::guard::wait_while_interruptibly_until;
use crate::guard::{WaitTimeoutResult, deadline_after, wait_while_until};
#[cfg(feature = "std")]
use crate::interrupt::Interrupted;
use crate::monitor::WaitSet;
use crate::sys::Instant;

impl<T: ?Sized> ArcSynchronizedGuard<T> {
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

    /// See [`SynchronizedGuard::wait_while_interruptibly`](super::SynchronizedGuard::wait_while_interruptibly).
    ///
    /// ```
    /// use metalock::{Interrupted, Synchronized};
    /// use std::sync::Arc;
    ///
    /// let jobs = Arc::new(Synchronized::new(Vec::<u32>::new()));
    /// let mut guard = jobs.lock_arc();
    /// metalock::interrupt_handle().interrupt();
    /// assert_eq!(guard.wait_while_interruptibly(|jobs| jobs.is_empty()), Err(Interrupted));
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_while_interruptibly(
        &mut self,
        condition: impl FnMut(&mut T) -> bool,
    ) -> Result<(), Interrupted> {
        wait_while_interruptibly_until(self, WaitSet::Monitor, condition, None).map(drop)
    }

    /// See [`SynchronizedGuard::wait_while_for_interruptibly`](super::SynchronizedGuard::wait_while_for_interruptibly).
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_while_for_interruptibly(
        &mut self,
        condition: impl FnMut(&mut T) -> bool,
        timeout: Duration,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        wait_while_interruptibly_until(self, WaitSet::Monitor, condition, deadline_after(timeout))
    }

    /// See [`SynchronizedGuard::wait_while_until_interruptibly`](super::SynchronizedGuard::wait_while_until_interruptibly).
    ///
    /// ```
    /// use metalock::{Instant, Interrupted, Synchronized};
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// let jobs = Arc::new(Synchronized::new(Vec::<u32>::new()));
    /// let mut guard = jobs.lock_arc();
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// let ended = guard.wait_while_until_interruptibly(|jobs| jobs.is_empty(), deadline);
    /// assert!(ended.unwrap().timed_out());
    /// metalock::interrupt_handle().interrupt();
    /// let ended = guard.wait_while_until_interruptibly(|jobs| jobs.is_empty(), deadline);
    /// assert_eq!(ended, Err(Interrupted));
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_while_until_interruptibly(
        &mut self,
        condition: impl FnMut(&mut T) -> bool,
        deadline: Instant,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        wait_while_interruptibly_until(self, WaitSet::Monitor, condition, Some(deadline))
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
}
