//! [`Condition`]'s interruptible waits (feature `std`).

use core::time::Duration;

use super::Condition;
use crate::guard::sealed::Token;
use crate::guard::{
    AsMonitorGuard, WaitTimeoutResult, deadline_after, wait_while_interruptibly_until,
};
use crate::interrupt::Interrupted;
use crate::sys::Instant;

impl Condition {
    /// As [`wait`](Self::wait), but an interrupt of the calling thread ends
    /// it too (see
    /// [`MonitorGuard::wait_interruptibly`](crate::MonitorGuard::wait_interruptibly)):
    /// `Err(Interrupted)` when the interrupt ended the wait, with the
    /// monitor held at the same depth either way and the flag cleared; an
    /// interrupt pending at the call ends it at once, and a timed wait whose
    /// time ran out reports an interrupt that came while it was getting the
    /// monitor back.
    /// A waiter that a notify of this condition reached returns `Ok` even if
    /// an interrupt came too, leaving the flag set; one that returns `Err`
    /// left before any notify took it, so the notify reached another waiter
    /// (JLS 17.2.4). Java's `Condition.await`.
    ///
    /// # Panics
    ///
    /// If other threads wait on this condition with another monitor, and no
    /// interrupt is pending: a pending interrupt ends the wait before it
    /// looks at the condition (as Java's `await` checks the interrupt
    /// first).
    ///
    /// ```
    /// use metalock::{Condition, Interrupted, Synchronized};
    ///
    /// let jobs = Synchronized::new(Vec::<u32>::new());
    /// let posted = Condition::new();
    /// std::thread::scope(|s| {
    ///     let (tx, rx) = std::sync::mpsc::channel();
    ///     let (jobs, posted) = (&jobs, &posted);
    ///     let worker = s.spawn(move || {
    ///         tx.send(metalock::interrupt_handle()).unwrap();
    ///         let mut jobs = jobs.lock();
    ///         while jobs.is_empty() {
    ///             posted.wait_interruptibly(&mut jobs)?; // told to stop
    ///         }
    ///         Ok(jobs.pop())
    ///     });
    ///     rx.recv().unwrap().interrupt();
    ///     assert_eq!(worker.join().unwrap(), Err(Interrupted));
    /// });
    /// ```
    #[track_caller]
    pub fn wait_interruptibly<G: AsMonitorGuard + ?Sized>(
        &self,
        guard: &mut G,
    ) -> Result<(), Interrupted> {
        guard
            .__monitor_guard(Token::IN_CRATE)
            .wait_interruptibly_on(self.wait_set(), None)
            .map(drop)
    }

    /// As [`wait_interruptibly`](Self::wait_interruptibly), giving up after
    /// `timeout`.
    ///
    /// ```
    /// use metalock::{Condition, Interrupted, Synchronized};
    /// use std::time::Duration;
    ///
    /// let value = Synchronized::new(0);
    /// let changed = Condition::new();
    /// let mut guard = value.lock();
    /// // Neither a notify nor an interrupt: the time runs out.
    /// let result = changed.wait_for_interruptibly(&mut guard, Duration::from_millis(1));
    /// assert!(result.unwrap().timed_out());
    /// // A pending interrupt ends the wait at once.
    /// metalock::interrupt_handle().interrupt();
    /// let result = changed.wait_for_interruptibly(&mut guard, Duration::from_secs(60));
    /// assert_eq!(result, Err(Interrupted));
    /// ```
    #[track_caller]
    pub fn wait_for_interruptibly<G: AsMonitorGuard + ?Sized>(
        &self,
        guard: &mut G,
        timeout: Duration,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        guard
            .__monitor_guard(Token::IN_CRATE)
            .wait_interruptibly_on(self.wait_set(), deadline_after(timeout))
    }

    /// As [`wait_interruptibly`](Self::wait_interruptibly), giving up at
    /// `deadline`.
    ///
    /// ```
    /// use metalock::{Condition, Instant, Interrupted, Synchronized};
    /// use std::time::Duration;
    ///
    /// let value = Synchronized::new(0);
    /// let changed = Condition::new();
    /// let mut guard = value.lock();
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// metalock::interrupt_handle().interrupt();
    /// assert_eq!(changed.wait_until_interruptibly(&mut guard, deadline), Err(Interrupted));
    /// // The interrupt was consumed: the next wait runs until the deadline.
    /// assert!(changed.wait_until_interruptibly(&mut guard, deadline).unwrap().timed_out());
    /// ```
    #[track_caller]
    pub fn wait_until_interruptibly<G: AsMonitorGuard + ?Sized>(
        &self,
        guard: &mut G,
        deadline: Instant,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        guard
            .__monitor_guard(Token::IN_CRATE)
            .wait_interruptibly_on(self.wait_set(), Some(deadline))
    }

    /// As [`wait_while`](Self::wait_while), each wait as
    /// [`wait_interruptibly`](Self::wait_interruptibly): `Err` once an
    /// interrupt ends one, with the monitor held again at the same depth.
    /// A condition that no longer holds returns `Ok` at once, interrupt
    /// pending or not.
    ///
    /// ```
    /// use metalock::{Condition, Interrupted, Synchronized};
    ///
    /// let queue = Synchronized::new(Vec::<u32>::new());
    /// let not_empty = Condition::new();
    /// let mut guard = queue.lock();
    /// metalock::interrupt_handle().interrupt();
    /// let ended = not_empty.wait_while_interruptibly(&mut guard, |q| q.is_empty());
    /// assert_eq!(ended, Err(Interrupted));
    /// ```
    #[track_caller]
    pub fn wait_while_interruptibly<G, F>(
        &self,
        guard: &mut G,
        condition: F,
    ) -> Result<(), Interrupted>
    where
        G: AsMonitorGuard + ?Sized,
        F: FnMut(&mut G::Target) -> bool,
    {
        wait_while_interruptibly_until(guard, self.wait_set(), condition, None).map(drop)
    }

    /// As [`wait_while_interruptibly`](Self::wait_while_interruptibly),
    /// giving up after `timeout`: `Ok`, timed out if the condition still
    /// held when the time ran out, or `Err` once an interrupt ends a wait
    /// (Java's `Condition::awaitNanos` in its loop).
    ///
    /// ```
    /// use metalock::{Condition, Synchronized};
    /// use std::time::Duration;
    ///
    /// let queue = Synchronized::new(Vec::<u32>::new());
    /// let not_empty = Condition::new();
    /// let mut guard = queue.lock();
    /// let timeout = Duration::from_millis(1);
    /// let ended = not_empty.wait_while_for_interruptibly(&mut guard, |q| q.is_empty(), timeout);
    /// assert!(ended.unwrap().timed_out());
    /// ```
    #[track_caller]
    pub fn wait_while_for_interruptibly<G, F>(
        &self,
        guard: &mut G,
        condition: F,
        timeout: Duration,
    ) -> Result<WaitTimeoutResult, Interrupted>
    where
        G: AsMonitorGuard + ?Sized,
        F: FnMut(&mut G::Target) -> bool,
    {
        wait_while_interruptibly_until(guard, self.wait_set(), condition, deadline_after(timeout))
    }

    /// As [`wait_while_interruptibly`](Self::wait_while_interruptibly),
    /// giving up at `deadline`: `Ok`, timed out if the condition still held
    /// then, or `Err` once an interrupt ends a wait.
    ///
    /// ```
    /// use metalock::{Condition, Instant, Interrupted, Synchronized};
    /// use std::time::Duration;
    ///
    /// let queue = Synchronized::new(Vec::<u32>::new());
    /// let not_empty = Condition::new();
    /// let mut guard = queue.lock();
    /// let deadline = Instant::now() + Duration::from_secs(60);
    /// metalock::interrupt_handle().interrupt();
    /// let ended = not_empty.wait_while_until_interruptibly(&mut guard, |q| q.is_empty(), deadline);
    /// assert_eq!(ended, Err(Interrupted));
    /// ```
    #[track_caller]
    pub fn wait_while_until_interruptibly<G, F>(
        &self,
        guard: &mut G,
        condition: F,
        deadline: Instant,
    ) -> Result<WaitTimeoutResult, Interrupted>
    where
        G: AsMonitorGuard + ?Sized,
        F: FnMut(&mut G::Target) -> bool,
    {
        wait_while_interruptibly_until(guard, self.wait_set(), condition, Some(deadline))
    }
}
