//! [`Condition`]: more wait sets for a monitor than its own, so that a
//! notify reaches only the threads that can proceed.

use core::fmt;
use core::time::Duration;

#[cfg(feature = "std")]
use crate::guard::wait_while_interruptibly_until;
use crate::guard::{AsMonitorGuard, WaitTimeoutResult, deadline_after, wait_while_until};
#[cfg(feature = "std")]
use crate::interrupt::Interrupted;
use crate::monitor::{ConditionWord, WaitSet};
use crate::sys::Instant;

/// A condition variable for a monitor, in one word: a wait set of its own,
/// so that a bounded buffer can wake producers and consumers separately
/// (Java's `Lock.newCondition()`, parking_lot's `Condvar`).
///
/// A wait releases every level of the monitor the guard holds and comes back
/// at the same depth, like the monitor's own `wait`. A notify reaches only
/// this condition's waiters, the one that has waited longest first; a
/// notified waiter joins the monitor's entry queue, ahead of the threads
/// that wait to enter (but behind those passed over too long), and
/// re-contends when the monitor is released; if a thread that was running
/// takes it first, the waiter is handed the monitor by the release that
/// finds it first in the queue, so it blocks again at most once.
/// Notifications are not remembered: a notify with nobody
/// waiting costs one load and does nothing. `notify_*` may be called with
/// or without holding the monitor.
///
/// A condition belongs to one monitor at a time: waiting on it with a
/// second monitor while threads wait on it with a first one panics. Once
/// nobody waits, it may be used with another monitor.
///
/// ```
/// use metalock::{Condition, Synchronized};
/// use std::collections::VecDeque;
///
/// struct Buffer {
///     items: Synchronized<VecDeque<u32>>,
///     not_empty: Condition,
///     not_full: Condition,
/// }
///
/// const CAPACITY: usize = 4;
///
/// let buffer = Buffer {
///     items: Synchronized::new(VecDeque::new()),
///     not_empty: Condition::new(),
///     not_full: Condition::new(),
/// };
/// std::thread::scope(|s| {
///     s.spawn(|| {
///         for i in 0..100 {
///             let mut items = buffer.items.lock();
///             buffer.not_full.wait_while(&mut items, |items| items.len() == CAPACITY);
///             items.push_back(i);
///             buffer.not_empty.notify_one();
///         }
///     });
///     let mut sum = 0;
///     for _ in 0..100 {
///         let mut items = buffer.items.lock();
///         buffer.not_empty.wait_while(&mut items, |items| items.is_empty());
///         sum += items.pop_front().unwrap();
///         buffer.not_full.notify_one();
///     }
///     assert_eq!(sum, 4950);
/// });
/// ```
///
/// Unlike parking_lot's `Condvar`, the guard's monitor may be reentrant (a
/// word's or a keyed one) and a wait restores its depth; unlike std's, there
/// is no poisoning.
pub struct Condition {
    word: ConditionWord,
}

// One word, except with shuttle's atomics, which carry more.
#[cfg(not(feature = "shuttle"))]
const _: () = assert!(core::mem::size_of::<Condition>() == core::mem::size_of::<usize>());

impl Condition {
    /// A condition nobody waits on. `const`, so that a condition can be a
    /// `static` beside the monitor it goes with.
    ///
    /// ```
    /// use metalock::{Condition, Synchronized};
    ///
    /// static CONFIG: Synchronized<Option<&str>> = Synchronized::new(None);
    /// static LOADED: Condition = Condition::new();
    ///
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         *CONFIG.lock() = Some("debug");
    ///         LOADED.notify_all();
    ///     });
    ///     let mut config = CONFIG.lock();
    ///     LOADED.wait_while(&mut config, |config| config.is_none());
    ///     assert_eq!(*config, Some("debug"));
    /// });
    /// ```
    #[cfg(not(metalock_model))]
    pub const fn new() -> Self {
        Self {
            word: ConditionWord::new(),
        }
    }

    /// A condition nobody waits on.
    #[cfg(metalock_model)]
    pub fn new() -> Self {
        Self {
            word: ConditionWord::new(),
        }
    }

    /// Releases the monitor `guard` holds, at every level, blocks until a
    /// notify of this condition reaches this thread, and comes back owning
    /// the monitor at the same depth. Call it in a loop that re-checks the
    /// condition, or use [`wait_while`](Self::wait_while).
    ///
    /// # Panics
    ///
    /// If other threads wait on this condition with another monitor.
    ///
    /// ```
    /// use metalock::{Condition, Synchronized};
    ///
    /// let flag = Synchronized::new(false);
    /// let set = Condition::new();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         *flag.lock() = true;
    ///         set.notify_all();
    ///     });
    ///     let mut guard = flag.lock();
    ///     while !*guard {
    ///         set.wait(&mut guard);
    ///     }
    /// });
    /// ```
    #[track_caller]
    pub fn wait<G: AsMonitorGuard + ?Sized>(&self, guard: &mut G) {
        guard.__monitor_guard().wait_on(self.wait_set(), None);
    }

    /// As [`wait`](Self::wait), giving up after `timeout`.
    ///
    /// ```
    /// use metalock::{Condition, Synchronized};
    /// use std::time::Duration;
    ///
    /// let value = Synchronized::new(0);
    /// let changed = Condition::new();
    /// let mut guard = value.lock();
    /// assert!(changed.wait_for(&mut guard, Duration::from_millis(1)).timed_out());
    /// ```
    #[track_caller]
    pub fn wait_for<G: AsMonitorGuard + ?Sized>(
        &self,
        guard: &mut G,
        timeout: Duration,
    ) -> WaitTimeoutResult {
        WaitTimeoutResult(
            guard
                .__monitor_guard()
                .wait_on(self.wait_set(), deadline_after(timeout)),
        )
    }

    /// As [`wait`](Self::wait), giving up at `deadline`.
    ///
    /// ```
    /// use metalock::{Condition, Instant, Synchronized};
    /// use std::time::Duration;
    ///
    /// let value = Synchronized::new(0);
    /// let changed = Condition::new();
    /// let mut guard = value.lock();
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// assert!(changed.wait_until(&mut guard, deadline).timed_out());
    /// ```
    #[track_caller]
    pub fn wait_until<G: AsMonitorGuard + ?Sized>(
        &self,
        guard: &mut G,
        deadline: Instant,
    ) -> WaitTimeoutResult {
        WaitTimeoutResult(
            guard
                .__monitor_guard()
                .wait_on(self.wait_set(), Some(deadline)),
        )
    }

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
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_interruptibly<G: AsMonitorGuard + ?Sized>(
        &self,
        guard: &mut G,
    ) -> Result<(), Interrupted> {
        guard
            .__monitor_guard()
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
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_for_interruptibly<G: AsMonitorGuard + ?Sized>(
        &self,
        guard: &mut G,
        timeout: Duration,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        guard
            .__monitor_guard()
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
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_until_interruptibly<G: AsMonitorGuard + ?Sized>(
        &self,
        guard: &mut G,
        deadline: Instant,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        guard
            .__monitor_guard()
            .wait_interruptibly_on(self.wait_set(), Some(deadline))
    }

    /// Waits while `condition` holds for the guard's value (`&mut ()` for a
    /// `MonitorGuard`), re-checking it after every wake-up.
    ///
    /// ```
    /// use metalock::{Condition, Synchronized};
    ///
    /// let count = Synchronized::new(0);
    /// let reached = Condition::new();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         for _ in 0..3 {
    ///             *count.lock() += 1;
    ///             reached.notify_all();
    ///         }
    ///     });
    ///     let mut guard = count.lock();
    ///     reached.wait_while(&mut guard, |count| *count < 3);
    ///     assert_eq!(*guard, 3);
    /// });
    /// ```
    #[track_caller]
    pub fn wait_while<G, F>(&self, guard: &mut G, condition: F)
    where
        G: AsMonitorGuard + ?Sized,
        F: FnMut(&mut G::Target) -> bool,
    {
        wait_while_until(guard, self.wait_set(), condition, None);
    }

    /// As [`wait_while`](Self::wait_while), giving up after `timeout`; timed
    /// out if the condition still held when the time ran out.
    ///
    /// ```
    /// use metalock::{Condition, Synchronized};
    /// use std::time::Duration;
    ///
    /// let queue = Synchronized::new(Vec::<u32>::new());
    /// let not_empty = Condition::new();
    /// let mut guard = queue.lock();
    /// let result = not_empty.wait_while_for(&mut guard, |q| q.is_empty(), Duration::from_millis(1));
    /// assert!(result.timed_out());
    /// ```
    #[track_caller]
    pub fn wait_while_for<G, F>(
        &self,
        guard: &mut G,
        condition: F,
        timeout: Duration,
    ) -> WaitTimeoutResult
    where
        G: AsMonitorGuard + ?Sized,
        F: FnMut(&mut G::Target) -> bool,
    {
        wait_while_until(guard, self.wait_set(), condition, deadline_after(timeout))
    }

    /// As [`wait_while`](Self::wait_while), giving up at `deadline`.
    ///
    /// ```
    /// use metalock::{Condition, Instant, Synchronized};
    /// use std::time::Duration;
    ///
    /// let queue = Synchronized::new(vec![1]);
    /// let not_empty = Condition::new();
    /// let mut guard = queue.lock();
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// // The condition is already false: no wait at all.
    /// assert!(!not_empty.wait_while_until(&mut guard, |q| q.is_empty(), deadline).timed_out());
    /// ```
    #[track_caller]
    pub fn wait_while_until<G, F>(
        &self,
        guard: &mut G,
        condition: F,
        deadline: Instant,
    ) -> WaitTimeoutResult
    where
        G: AsMonitorGuard + ?Sized,
        F: FnMut(&mut G::Target) -> bool,
    {
        wait_while_until(guard, self.wait_set(), condition, Some(deadline))
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
    #[cfg(feature = "std")]
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

    /// Notifies the thread that has waited longest on this condition: it
    /// joins the monitor's entry queue (see [`Condition`]). Returns whether
    /// there was one; with nobody waiting this costs one load.
    ///
    /// ```
    /// use metalock::Condition;
    ///
    /// let condition = Condition::new();
    /// assert!(!condition.notify_one()); // nobody waits: not remembered
    /// ```
    #[inline]
    pub fn notify_one(&self) -> bool {
        self.word.notify(false) != 0
    }

    /// Notifies every thread waiting on this condition, and returns how
    /// many; each gets the monitor in turn.
    ///
    /// ```
    /// use metalock::Condition;
    ///
    /// let condition = Condition::new();
    /// assert_eq!(condition.notify_all(), 0);
    /// ```
    #[inline]
    pub fn notify_all(&self) -> usize {
        self.word.notify(true)
    }

    pub(crate) fn wait_set(&self) -> WaitSet<'_> {
        WaitSet::Condition(&self.word)
    }
}

impl Default for Condition {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Condition").finish_non_exhaustive()
    }
}
