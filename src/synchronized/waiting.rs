//! [`SynchronizedGuard`]'s wait and notify methods: its monitor's, with
//! `wait_while`'s condition seeing the value.

use core::time::Duration;

use super::SynchronizedGuard;
#[cfg(feature = "std")]
use crate::guard::wait_while_interruptibly_until;
use crate::guard::{WaitTimeoutResult, deadline_after, wait_while_until};
#[cfg(feature = "std")]
use crate::interrupt::Interrupted;
use crate::monitor::WaitSet;
use crate::sys::Instant;

impl<T: ?Sized> SynchronizedGuard<'_, T> {
    /// Releases the monitor, blocks until another thread notifies, and
    /// re-enters. Call it in a loop that re-checks the condition, or use
    /// [`wait_while`](Self::wait_while).
    ///
    /// ```
    /// use metalock::Synchronized;
    ///
    /// let flag = Synchronized::new(false);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         let mut set = flag.lock();
    ///         *set = true;
    ///         set.notify_all();
    ///     });
    ///     let mut guard = flag.lock();
    ///     while !*guard {
    ///         guard.wait();
    ///     }
    /// });
    /// ```
    #[track_caller]
    pub fn wait(&mut self) {
        self.monitor.wait();
    }

    /// As [`wait`](Self::wait), giving up after `timeout`.
    ///
    /// ```
    /// use metalock::Synchronized;
    /// use std::time::Duration;
    ///
    /// let inbox = Synchronized::new(Vec::<u32>::new());
    /// let mut guard = inbox.lock();
    /// // Nothing arrives: the wait gives up, and the monitor is held again.
    /// assert!(guard.wait_for(Duration::from_millis(1)).timed_out());
    /// assert!(guard.is_empty());
    /// assert!(inbox.is_held_by_current_thread());
    /// ```
    #[track_caller]
    pub fn wait_for(&mut self, timeout: Duration) -> WaitTimeoutResult {
        self.monitor.wait_for(timeout)
    }

    /// As [`wait`](Self::wait), giving up at `deadline`.
    ///
    /// ```
    /// use metalock::{Instant, Synchronized};
    /// use std::time::Duration;
    ///
    /// let inbox = Synchronized::new(Vec::<u32>::new());
    /// let mut guard = inbox.lock();
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// while guard.is_empty() {
    ///     if guard.wait_until(deadline).timed_out() {
    ///         break;
    ///     }
    /// }
    /// assert!(guard.is_empty()); // nobody sent anything
    /// ```
    #[track_caller]
    pub fn wait_until(&mut self, deadline: Instant) -> WaitTimeoutResult {
        self.monitor.wait_until(deadline)
    }

    /// As [`wait`](Self::wait), but an interrupt of the calling thread ends
    /// it too; see [`MonitorGuard::wait_interruptibly`](crate::MonitorGuard::wait_interruptibly).
    ///
    /// ```
    /// use metalock::{Interrupted, Synchronized};
    ///
    /// let jobs = Synchronized::new(Vec::<u32>::new());
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// std::thread::scope(|s| {
    ///     let worker = s.spawn(|| -> Result<Option<u32>, Interrupted> {
    ///         tx.send(metalock::interrupt_handle()).unwrap();
    ///         let mut jobs = jobs.lock();
    ///         while jobs.is_empty() {
    ///             jobs.wait_interruptibly()?;
    ///         }
    ///         Ok(jobs.pop())
    ///     });
    ///     rx.recv().unwrap().interrupt();
    ///     assert_eq!(worker.join().unwrap(), Err(Interrupted));
    /// });
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_interruptibly(&mut self) -> Result<(), Interrupted> {
        self.monitor.wait_interruptibly()
    }

    /// As [`wait_interruptibly`](Self::wait_interruptibly), giving up after
    /// `timeout`.
    ///
    /// ```
    /// use metalock::{Interrupted, Synchronized};
    /// use std::time::Duration;
    ///
    /// let value = Synchronized::new(0);
    /// let mut guard = value.lock();
    /// assert!(guard.wait_for_interruptibly(Duration::from_millis(1)).unwrap().timed_out());
    /// // A pending interrupt ends the wait at once, and is cleared.
    /// metalock::interrupt_handle().interrupt();
    /// assert_eq!(guard.wait_for_interruptibly(Duration::from_secs(60)), Err(Interrupted));
    /// assert!(!metalock::interrupted());
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_for_interruptibly(
        &mut self,
        timeout: Duration,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        self.monitor.wait_for_interruptibly(timeout)
    }

    /// As [`wait_interruptibly`](Self::wait_interruptibly), giving up at
    /// `deadline`.
    ///
    /// ```
    /// use metalock::{Instant, Interrupted, Synchronized};
    /// use std::time::Duration;
    ///
    /// let value = Synchronized::new(0);
    /// let mut guard = value.lock();
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// metalock::interrupt_handle().interrupt();
    /// assert_eq!(guard.wait_until_interruptibly(deadline), Err(Interrupted));
    /// assert!(guard.wait_until_interruptibly(deadline).unwrap().timed_out());
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_until_interruptibly(
        &mut self,
        deadline: Instant,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        self.monitor.wait_until_interruptibly(deadline)
    }

    /// Waits while `condition` holds for the value, re-checking it after
    /// every wake-up.
    ///
    /// ```
    /// use metalock::Synchronized;
    ///
    /// let count = Synchronized::new(0);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         for _ in 0..3 {
    ///             let mut count = count.lock();
    ///             *count += 1;
    ///             count.notify_all();
    ///         }
    ///     });
    ///     let mut guard = count.lock();
    ///     guard.wait_while(|count| *count < 3);
    ///     assert_eq!(*guard, 3);
    /// });
    /// ```
    #[track_caller]
    pub fn wait_while(&mut self, condition: impl FnMut(&mut T) -> bool) {
        wait_while_until(self, WaitSet::Monitor, condition, None);
    }

    /// As [`wait_while`](Self::wait_while), giving up after `timeout`. The
    /// result is timed out if the condition still held when time ran out.
    ///
    /// ```
    /// use metalock::Synchronized;
    /// use std::time::Duration;
    ///
    /// let queue = Synchronized::new(Vec::<u32>::new());
    /// let mut guard = queue.lock();
    /// // Nothing arrives: timed out, with the condition still true.
    /// assert!(guard.wait_while_for(|q| q.is_empty(), Duration::from_millis(1)).timed_out());
    /// guard.push(1);
    /// // The condition is false: it returns at once.
    /// assert!(!guard.wait_while_for(|q| q.is_empty(), Duration::from_millis(1)).timed_out());
    /// ```
    #[track_caller]
    pub fn wait_while_for(
        &mut self,
        condition: impl FnMut(&mut T) -> bool,
        timeout: Duration,
    ) -> WaitTimeoutResult {
        wait_while_until(self, WaitSet::Monitor, condition, deadline_after(timeout))
    }

    /// As [`wait_while`](Self::wait_while), giving up at `deadline`.
    ///
    /// ```
    /// use metalock::{Instant, Synchronized};
    /// use std::time::Duration;
    ///
    /// let stock = Synchronized::new(0_u32);
    /// let mut guard = stock.lock();
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// let result = guard.wait_while_until(|stock| *stock == 0, deadline);
    /// assert!(result.timed_out());
    /// assert_eq!(*guard, 0);
    /// ```
    #[track_caller]
    pub fn wait_while_until(
        &mut self,
        condition: impl FnMut(&mut T) -> bool,
        deadline: Instant,
    ) -> WaitTimeoutResult {
        wait_while_until(self, WaitSet::Monitor, condition, Some(deadline))
    }

    /// As [`wait_while`](Self::wait_while), each wait as
    /// [`wait_interruptibly`](Self::wait_interruptibly): `Err` once an
    /// interrupt ends one, with the monitor held again. A condition that no
    /// longer holds returns `Ok` at once, interrupt pending or not.
    ///
    /// ```
    /// use metalock::{Interrupted, Synchronized};
    ///
    /// let jobs = Synchronized::new(Vec::<u32>::new());
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// std::thread::scope(|s| {
    ///     let worker = s.spawn(|| {
    ///         tx.send(metalock::interrupt_handle()).unwrap();
    ///         let mut jobs = jobs.lock();
    ///         jobs.wait_while_interruptibly(|jobs| jobs.is_empty())
    ///     });
    ///     // No job comes: the worker is told to stop instead.
    ///     rx.recv().unwrap().interrupt();
    ///     assert_eq!(worker.join().unwrap(), Err(Interrupted));
    /// });
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_while_interruptibly(
        &mut self,
        condition: impl FnMut(&mut T) -> bool,
    ) -> Result<(), Interrupted> {
        wait_while_interruptibly_until(self, WaitSet::Monitor, condition, None).map(drop)
    }

    /// As [`wait_while_interruptibly`](Self::wait_while_interruptibly),
    /// giving up after `timeout`: `Ok`, timed out if the condition still
    /// held when the time ran out, or `Err` once an interrupt ends a wait.
    ///
    /// ```
    /// use metalock::Synchronized;
    /// use std::time::Duration;
    ///
    /// let jobs = Synchronized::new(Vec::<u32>::new());
    /// let mut guard = jobs.lock();
    /// let ended = guard.wait_while_for_interruptibly(|jobs| jobs.is_empty(), Duration::from_millis(1));
    /// assert!(ended.unwrap().timed_out());
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_while_for_interruptibly(
        &mut self,
        condition: impl FnMut(&mut T) -> bool,
        timeout: Duration,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        wait_while_interruptibly_until(self, WaitSet::Monitor, condition, deadline_after(timeout))
    }

    /// As [`wait_while_interruptibly`](Self::wait_while_interruptibly),
    /// giving up at `deadline`: `Ok`, timed out if the condition still held
    /// then, or `Err` once an interrupt ends a wait.
    ///
    /// ```
    /// use metalock::{Instant, Interrupted, Synchronized};
    /// use std::time::Duration;
    ///
    /// let jobs = Synchronized::new(Vec::<u32>::new());
    /// let mut guard = jobs.lock();
    /// let deadline = Instant::now() + Duration::from_secs(60);
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

    /// Marks the thread that has waited longest as notified; `false` if none
    /// waited.
    ///
    /// ```
    /// use metalock::Synchronized;
    ///
    /// let queue = Synchronized::new(Vec::<u32>::new());
    /// assert!(!queue.lock().notify_one()); // nobody waits: not remembered
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         let mut items = queue.lock();
    ///         items.wait_while(|items| items.is_empty());
    ///         assert_eq!(items.pop(), Some(1));
    ///     });
    ///     let mut guard = queue.lock();
    ///     guard.push(1);
    ///     guard.notify_one();
    /// });
    /// ```
    pub fn notify_one(&self) -> bool {
        self.monitor.notify_one()
    }

    /// Marks every waiting thread as notified; returns how many.
    ///
    /// ```
    /// use metalock::Synchronized;
    ///
    /// let arrived = Synchronized::new(0);
    /// std::thread::scope(|s| {
    ///     for _ in 0..3 {
    ///         s.spawn(|| {
    ///             let mut arrived = arrived.lock();
    ///             *arrived += 1;
    ///             arrived.wait_while(|arrived| *arrived != 0);
    ///         });
    ///     }
    ///     // Once all three wait, wakes them together.
    ///     loop {
    ///         let mut guard = arrived.lock();
    ///         if *guard == 3 {
    ///             *guard = 0;
    ///             assert_eq!(guard.notify_all(), 3);
    ///             break;
    ///         }
    ///         drop(guard);
    ///         std::thread::yield_now();
    ///     }
    /// });
    /// ```
    pub fn notify_all(&self) -> usize {
        self.monitor.notify_all()
    }
}
