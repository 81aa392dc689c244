//! [`Condition`]: more wait sets for a monitor than its own, so that a
//! notify reaches only the threads that can proceed.

#[cfg(feature = "std")]
mod interruptible;

use core::fmt;
use core::time::Duration;

use crate::guard::sealed::Token;
use crate::guard::{AsMonitorGuard, WaitTimeoutResult, deadline_after, wait_while_until};
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
    /// If other threads wait on this condition with another monitor, or if
    /// `guard` is a `ReentrantSynchronizedGuard` (or its `Arc` form) below
    /// the thread's outermost level of its monitor (the other waits panic in both cases
    /// too, before anything is released).
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
        guard
            .__monitor_guard(Token::IN_CRATE)
            .wait_on(self.wait_set(), None);
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
                .__monitor_guard(Token::IN_CRATE)
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
                .__monitor_guard(Token::IN_CRATE)
                .wait_on(self.wait_set(), Some(deadline)),
        )
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

    /// How many threads wait on this condition now (a snapshot, for
    /// monitoring, as Java's `ReentrantLock.getWaitQueueLength(Condition)`):
    /// not yet notified, timed out or interrupted. One load when nobody may
    /// wait in the condition's stripe of the wait table, else a walk of the
    /// stripe's waiters under its lock. Needs no monitor. Code that the
    /// crate runs while it holds a stripe or a meta-lock may stop the
    /// process if it calls this, as with a wait: whenever some thread may
    /// wait in the stripe.
    ///
    /// ```
    /// use metalock::{Condition, Synchronized};
    ///
    /// let ready = Synchronized::new(false);
    /// let set = Condition::new();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| set.wait_while(&mut ready.lock(), |ready| !*ready));
    ///     while set.wait_set_length() == 0 {
    ///         std::thread::yield_now();
    ///     }
    ///     *ready.lock() = true;
    ///     assert_eq!(set.notify_all(), 1);
    /// });
    /// assert_eq!(set.wait_set_length(), 0);
    /// ```
    pub fn wait_set_length(&self) -> usize {
        self.word.waiting()
    }

    /// Whether some thread waits on this condition now (a snapshot, as
    /// Java's `ReentrantLock.hasWaiters(condition)`, without needing the
    /// monitor): whether [`wait_set_length`](Self::wait_set_length) is
    /// above 0, read as it reads, but its walk of the stripe stops at the
    /// first waiter on this condition. Code that the crate runs while it
    /// holds a wait-table stripe or a meta-lock may stop the process if it
    /// calls this, whenever some thread may wait in the stripe.
    ///
    /// ```
    /// use metalock::{Condition, Synchronized};
    ///
    /// let ready = Synchronized::new(false);
    /// let set = Condition::new();
    /// assert!(!set.has_waiters());
    /// std::thread::scope(|s| {
    ///     s.spawn(|| set.wait_while(&mut ready.lock(), |ready| !*ready));
    ///     while !set.has_waiters() {
    ///         std::thread::yield_now();
    ///     }
    ///     *ready.lock() = true;
    ///     set.notify_all();
    /// });
    /// assert!(!set.has_waiters());
    /// ```
    pub fn has_waiters(&self) -> bool {
        self.word.has_waiting()
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
