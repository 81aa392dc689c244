//! [`KeyedGuard`]'s wait and notify methods, which forward to its monitor
//! guard (see `MonitorGuard`'s for the semantics).

use core::time::Duration;

use super::KeyedGuard;
use crate::guard::{WaitTimeoutResult, wait_while_interruptibly_until, wait_while_until};
use crate::interrupt::Interrupted;
use crate::monitor::WaitSet;
use crate::sys::Instant;

impl KeyedGuard<'_> {
    /// Releases the monitor fully, waits for a notify, and re-enters at the
    /// same depth; see [`MonitorGuard::wait`](crate::MonitorGuard::wait).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    ///
    /// let ready = AtomicBool::new(false);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         let guard = metalock::lock(&ready);
    ///         ready.store(true, Relaxed);
    ///         guard.notify_all();
    ///     });
    ///     let mut guard = metalock::lock(&ready);
    ///     while !ready.load(Relaxed) {
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
    /// use std::time::Duration;
    ///
    /// let value = vec![1, 2];
    /// let mut guard = metalock::lock(&value);
    /// // Nobody notifies: the wait gives up, and the monitor is held again.
    /// assert!(guard.wait_for(Duration::from_millis(1)).timed_out());
    /// assert!(metalock::is_held_by_current_thread(&value));
    /// ```
    #[track_caller]
    pub fn wait_for(&mut self, timeout: Duration) -> WaitTimeoutResult {
        self.monitor.wait_for(timeout)
    }

    /// As [`wait`](Self::wait), giving up at `deadline`.
    ///
    /// ```
    /// use metalock::Instant;
    /// use std::time::Duration;
    ///
    /// let value = 0_u8;
    /// let _outer = metalock::lock(&value);
    /// let mut guard = metalock::lock(&value);
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// assert!(guard.wait_until(deadline).timed_out());
    /// assert_eq!(guard.depth(), 2);
    /// ```
    #[track_caller]
    pub fn wait_until(&mut self, deadline: Instant) -> WaitTimeoutResult {
        self.monitor.wait_until(deadline)
    }

    /// As [`wait`](Self::wait), but an interrupt of the calling thread ends
    /// it too; see [`MonitorGuard::wait_interruptibly`](crate::MonitorGuard::wait_interruptibly).
    ///
    /// ```
    /// use metalock::Interrupted;
    ///
    /// let inbox = Vec::<u32>::new();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// std::thread::scope(|s| {
    ///     let waiter = s.spawn(|| {
    ///         tx.send(metalock::interrupt_handle()).unwrap();
    ///         metalock::lock(&inbox).wait_interruptibly()
    ///     });
    ///     rx.recv().unwrap().interrupt();
    ///     assert_eq!(waiter.join().unwrap(), Err(Interrupted));
    /// });
    /// ```
    #[track_caller]
    pub fn wait_interruptibly(&mut self) -> Result<(), Interrupted> {
        self.monitor.wait_interruptibly()
    }

    /// As [`wait_interruptibly`](Self::wait_interruptibly), giving up after
    /// `timeout`.
    ///
    /// ```
    /// use metalock::Interrupted;
    /// use std::time::Duration;
    ///
    /// let value = 0_u8;
    /// let mut guard = metalock::lock(&value);
    /// assert!(guard.wait_for_interruptibly(Duration::from_millis(1)).unwrap().timed_out());
    /// // A pending interrupt ends the wait at once.
    /// metalock::interrupt_handle().interrupt();
    /// assert_eq!(guard.wait_for_interruptibly(Duration::from_secs(60)), Err(Interrupted));
    /// ```
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
    /// use metalock::{Instant, Interrupted};
    /// use std::time::Duration;
    ///
    /// let value = 0_u8;
    /// let mut guard = metalock::lock(&value);
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// metalock::interrupt_handle().interrupt();
    /// assert_eq!(guard.wait_until_interruptibly(deadline), Err(Interrupted));
    /// // The interrupt was consumed: the next wait runs until the deadline.
    /// assert!(guard.wait_until_interruptibly(deadline).unwrap().timed_out());
    /// ```
    #[track_caller]
    pub fn wait_until_interruptibly(
        &mut self,
        deadline: Instant,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        self.monitor.wait_until_interruptibly(deadline)
    }

    /// Waits while `condition` holds, re-checking it after every wake-up.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
    ///
    /// let done = AtomicU32::new(0);
    /// std::thread::scope(|s| {
    ///     for _ in 0..2 {
    ///         s.spawn(|| {
    ///             let guard = metalock::lock(&done);
    ///             done.fetch_add(1, Relaxed);
    ///             guard.notify_all();
    ///         });
    ///     }
    ///     let mut guard = metalock::lock(&done);
    ///     guard.wait_while(|| done.load(Relaxed) < 2);
    /// });
    /// assert_eq!(done.into_inner(), 2);
    /// ```
    #[track_caller]
    pub fn wait_while(&mut self, mut condition: impl FnMut() -> bool) {
        wait_while_until(self, WaitSet::Monitor, |()| condition(), None);
    }

    /// As [`wait_while`](Self::wait_while), giving up after `timeout`.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let mut queue = Vec::<u32>::new();
    /// let mut guard = metalock::lock(&queue);
    /// assert!(guard.wait_while_for(|| queue.is_empty(), Duration::from_millis(1)).timed_out());
    /// drop(guard);
    /// queue.push(1);
    /// let mut guard = metalock::lock(&queue);
    /// assert!(!guard.wait_while_for(|| queue.is_empty(), Duration::from_millis(1)).timed_out());
    /// ```
    #[track_caller]
    pub fn wait_while_for(
        &mut self,
        mut condition: impl FnMut() -> bool,
        timeout: Duration,
    ) -> WaitTimeoutResult {
        let deadline = crate::guard::deadline_after(timeout);
        wait_while_until(self, WaitSet::Monitor, |()| condition(), deadline)
    }

    /// As [`wait_while`](Self::wait_while), giving up at `deadline`.
    ///
    /// ```
    /// use metalock::Instant;
    /// use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    /// use std::time::Duration;
    ///
    /// let ready = AtomicBool::new(false);
    /// let mut guard = metalock::lock(&ready);
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// let result = guard.wait_while_until(|| !ready.load(Relaxed), deadline);
    /// assert!(result.timed_out()); // nobody set the flag
    /// ```
    #[track_caller]
    pub fn wait_while_until(
        &mut self,
        mut condition: impl FnMut() -> bool,
        deadline: Instant,
    ) -> WaitTimeoutResult {
        wait_while_until(self, WaitSet::Monitor, |()| condition(), Some(deadline))
    }

    /// As [`wait_while`](Self::wait_while), each wait as
    /// [`wait_interruptibly`](Self::wait_interruptibly): `Err` once an
    /// interrupt ends one, with the monitor held again at the same depth.
    ///
    /// ```
    /// let queue = Vec::<u32>::new();
    /// let mut guard = metalock::lock(&queue);
    /// metalock::interrupt_handle().interrupt();
    /// let ended = guard.wait_while_interruptibly(|| queue.is_empty());
    /// assert_eq!(ended, Err(metalock::Interrupted));
    /// assert_eq!(guard.depth(), 1);
    /// ```
    #[track_caller]
    pub fn wait_while_interruptibly(
        &mut self,
        mut condition: impl FnMut() -> bool,
    ) -> Result<(), Interrupted> {
        wait_while_interruptibly_until(self, WaitSet::Monitor, |()| condition(), None).map(drop)
    }

    /// As [`wait_while_interruptibly`](Self::wait_while_interruptibly),
    /// giving up after `timeout`: `Ok`, timed out if the condition still
    /// held when the time ran out, or `Err` once an interrupt ends a wait.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let queue = Vec::<u32>::new();
    /// let mut guard = metalock::lock(&queue);
    /// let ended = guard.wait_while_for_interruptibly(|| queue.is_empty(), Duration::from_millis(1));
    /// assert!(ended.unwrap().timed_out());
    /// ```
    #[track_caller]
    pub fn wait_while_for_interruptibly(
        &mut self,
        mut condition: impl FnMut() -> bool,
        timeout: Duration,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        let deadline = crate::guard::deadline_after(timeout);
        wait_while_interruptibly_until(self, WaitSet::Monitor, |()| condition(), deadline)
    }

    /// As [`wait_while_interruptibly`](Self::wait_while_interruptibly),
    /// giving up at `deadline`: `Ok`, timed out if the condition still held
    /// then, or `Err` once an interrupt ends a wait.
    ///
    /// ```
    /// use metalock::{Instant, Interrupted};
    /// use std::time::Duration;
    ///
    /// let queue = Vec::<u32>::new();
    /// let mut guard = metalock::lock(&queue);
    /// let deadline = Instant::now() + Duration::from_secs(60);
    /// metalock::interrupt_handle().interrupt();
    /// let ended = guard.wait_while_until_interruptibly(|| queue.is_empty(), deadline);
    /// assert_eq!(ended, Err(Interrupted));
    /// ```
    #[track_caller]
    pub fn wait_while_until_interruptibly(
        &mut self,
        mut condition: impl FnMut() -> bool,
        deadline: Instant,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        wait_while_interruptibly_until(self, WaitSet::Monitor, |()| condition(), Some(deadline))
    }

    /// Marks the longest waiter as notified; `false` if nobody waited. See
    /// [`MonitorGuard::notify_one`](crate::MonitorGuard::notify_one).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    ///
    /// let woken = AtomicBool::new(false);
    /// assert!(!metalock::lock(&woken).notify_one()); // nobody waits: not remembered
    /// std::thread::scope(|s| {
    ///     s.spawn(|| metalock::lock(&woken).wait_while(|| !woken.load(Relaxed)));
    ///     // Retries until the notification reaches the waiter.
    ///     loop {
    ///         let guard = metalock::lock(&woken);
    ///         if guard.notify_one() {
    ///             woken.store(true, Relaxed);
    ///             break;
    ///         }
    ///         drop(guard);
    ///         std::thread::yield_now();
    ///     }
    /// });
    /// ```
    pub fn notify_one(&self) -> bool {
        self.monitor.notify_one()
    }

    /// Marks every waiter as notified; how many there were.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    ///
    /// let arrived = AtomicUsize::new(0);
    /// std::thread::scope(|s| {
    ///     for _ in 0..2 {
    ///         s.spawn(|| {
    ///             let mut guard = metalock::lock(&arrived);
    ///             arrived.fetch_add(1, Relaxed);
    ///             guard.wait_while(|| arrived.load(Relaxed) != 0);
    ///         });
    ///     }
    ///     // Once both wait, wakes them together.
    ///     loop {
    ///         let guard = metalock::lock(&arrived);
    ///         if arrived.load(Relaxed) == 2 {
    ///             arrived.store(0, Relaxed);
    ///             assert_eq!(guard.notify_all(), 2);
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
