//! Waiting through a guard: [`MonitorGuard`]'s wait methods, the wait loop
//! behind every `wait_while`, and [`AsMonitorGuard`], what a `Condition`
//! waits with.

use core::time::Duration;

use super::{MonitorGuard, WaitTimeoutResult, deadline_after};
#[cfg(all(feature = "stats", not(metalock_model)))]
use crate::exec_env::ExecEnv;
#[cfg(feature = "std")]
use crate::exec_env::interrupt::Interrupt;
#[cfg(feature = "std")]
use crate::interrupt::Interrupted;
use crate::monitor::{WaitEnd, WaitSet};
use crate::sys::Instant;

impl MonitorGuard<'_> {
    /// Releases the monitor fully, whatever the depth, blocks until another
    /// thread notifies, then re-enters at the same depth. A notified waiter
    /// re-contends when the monitor is released, and if a running thread
    /// takes it first, is handed it by the release that finds it first in
    /// the queue: it blocks again at most once. Like every condition wait, call it in a loop that
    /// re-checks the condition, or use [`wait_while`](Self::wait_while).
    ///
    /// ```
    /// use metalock::MultiUseWord;
    /// use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    ///
    /// let word = MultiUseWord::new();
    /// let done = AtomicBool::new(false);
    /// let _outer = word.lock();
    /// let mut guard = word.lock();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         // Gets in while the owner waits: `wait` released both levels.
    ///         let guard = word.lock();
    ///         done.store(true, Relaxed);
    ///         guard.notify_one();
    ///     });
    ///     while !done.load(Relaxed) {
    ///         guard.wait();
    ///     }
    /// });
    /// assert_eq!(guard.depth(), 2);
    /// ```
    #[track_caller]
    pub fn wait(&mut self) {
        self.monitor_ref().wait_on(WaitSet::Monitor, None);
    }

    /// As [`wait`](Self::wait), giving up after `timeout`.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    /// use std::time::Duration;
    ///
    /// let word = MultiUseWord::new();
    /// let _outer = word.lock();
    /// let mut guard = word.lock();
    /// // Nobody notifies: the wait gives up, and the monitor is held again.
    /// assert!(guard.wait_for(Duration::from_millis(1)).timed_out());
    /// assert_eq!(guard.depth(), 2);
    /// ```
    #[track_caller]
    pub fn wait_for(&mut self, timeout: Duration) -> WaitTimeoutResult {
        WaitTimeoutResult(
            self.monitor_ref()
                .wait_on(WaitSet::Monitor, deadline_after(timeout)),
        )
    }

    /// As [`wait`](Self::wait), giving up at `deadline`.
    ///
    /// ```
    /// use metalock::{Instant, MultiUseWord};
    /// use std::time::Duration;
    ///
    /// let word = MultiUseWord::new();
    /// let mut guard = word.lock();
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// assert!(guard.wait_until(deadline).timed_out());
    /// assert!(word.is_held_by_current_thread());
    /// ```
    #[track_caller]
    pub fn wait_until(&mut self, deadline: Instant) -> WaitTimeoutResult {
        WaitTimeoutResult(self.monitor_ref().wait_on(WaitSet::Monitor, Some(deadline)))
    }

    /// As [`wait`](Self::wait), but an interrupt of the calling thread
    /// ([`InterruptHandle::interrupt`](crate::InterruptHandle::interrupt))
    /// ends it too, with `Err(Interrupted)`, clearing the thread's flag; a
    /// flag set before the call ends it at once, and a timed wait whose time
    /// ran out reports an interrupt that came while it was getting the
    /// monitor back (as HotSpot's does). Either way the monitor is
    /// held again at the same depth. A waiter that a notify reached returns
    /// `Ok` even if an interrupt came too, leaving the flag set; one that
    /// returns `Err` left before any notify took it, so a notify always
    /// reaches some waiter (JLS 17.2.4).
    ///
    /// ```
    /// use metalock::{Interrupted, MultiUseWord};
    ///
    /// let word = MultiUseWord::new();
    /// metalock::interrupt_handle().interrupt();
    /// let mut guard = word.lock();
    /// assert_eq!(guard.wait_interruptibly(), Err(Interrupted));
    /// assert_eq!(guard.depth(), 1);
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_interruptibly(&mut self) -> Result<(), Interrupted> {
        self.monitor_ref()
            .wait_interruptibly_on(WaitSet::Monitor, None)
            .map(drop)
    }

    /// As [`wait_interruptibly`](Self::wait_interruptibly), giving up after
    /// `timeout`.
    ///
    /// ```
    /// use metalock::{Interrupted, MultiUseWord};
    /// use std::time::Duration;
    ///
    /// let word = MultiUseWord::new();
    /// let mut guard = word.lock();
    /// // Neither a notify nor an interrupt: the time runs out.
    /// assert!(guard.wait_for_interruptibly(Duration::from_millis(1)).unwrap().timed_out());
    /// // A pending interrupt ends the wait at once.
    /// metalock::interrupt_handle().interrupt();
    /// assert_eq!(guard.wait_for_interruptibly(Duration::from_secs(60)), Err(Interrupted));
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_for_interruptibly(
        &mut self,
        timeout: Duration,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        self.monitor_ref()
            .wait_interruptibly_on(WaitSet::Monitor, deadline_after(timeout))
    }

    /// As [`wait_interruptibly`](Self::wait_interruptibly), giving up at
    /// `deadline`.
    ///
    /// ```
    /// use metalock::{Instant, Interrupted, MultiUseWord};
    /// use std::time::Duration;
    ///
    /// let word = MultiUseWord::new();
    /// let mut guard = word.lock();
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// metalock::interrupt_handle().interrupt();
    /// assert_eq!(guard.wait_until_interruptibly(deadline), Err(Interrupted));
    /// // The interrupt was consumed: the next wait runs until the deadline.
    /// assert!(guard.wait_until_interruptibly(deadline).unwrap().timed_out());
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_until_interruptibly(
        &mut self,
        deadline: Instant,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        self.monitor_ref()
            .wait_interruptibly_on(WaitSet::Monitor, Some(deadline))
    }

    /// Waits while `condition` holds, re-checking it after every wake-up.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    /// use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    ///
    /// let word = MultiUseWord::new();
    /// let ready = AtomicBool::new(false);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         let guard = word.lock();
    ///         ready.store(true, Relaxed);
    ///         guard.notify_all();
    ///     });
    ///     let mut guard = word.lock();
    ///     guard.wait_while(|| !ready.load(Relaxed));
    /// });
    /// ```
    #[track_caller]
    pub fn wait_while(&mut self, mut condition: impl FnMut() -> bool) {
        wait_while_until(self, WaitSet::Monitor, |()| condition(), None);
    }

    /// As [`wait_while`](Self::wait_while), giving up after `timeout`; timed
    /// out if the condition still held when the time ran out.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    /// use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    /// use std::time::Duration;
    ///
    /// let word = MultiUseWord::new();
    /// let ready = AtomicBool::new(false);
    /// let mut guard = word.lock();
    /// // Nobody sets the flag: timed out with the condition still true.
    /// let result = guard.wait_while_for(|| !ready.load(Relaxed), Duration::from_millis(1));
    /// assert!(result.timed_out());
    /// ready.store(true, Relaxed);
    /// // The condition is false: it returns at once.
    /// assert!(!guard.wait_while_for(|| !ready.load(Relaxed), Duration::from_millis(1)).timed_out());
    /// ```
    #[track_caller]
    pub fn wait_while_for(
        &mut self,
        mut condition: impl FnMut() -> bool,
        timeout: Duration,
    ) -> WaitTimeoutResult {
        let deadline = deadline_after(timeout);
        wait_while_until(self, WaitSet::Monitor, |()| condition(), deadline)
    }

    /// As [`wait_while`](Self::wait_while), giving up at `deadline`; timed
    /// out if the condition still held then.
    ///
    /// ```
    /// use metalock::{Instant, MultiUseWord};
    /// use std::time::Duration;
    ///
    /// let word = MultiUseWord::new();
    /// let mut queue = vec![1];
    /// let mut guard = word.lock();
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// assert!(!guard.wait_while_until(|| queue.is_empty(), deadline).timed_out());
    /// queue.clear();
    /// assert!(guard.wait_while_until(|| queue.is_empty(), deadline).timed_out());
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
    /// A condition that no longer holds returns `Ok` at once, interrupt
    /// pending or not (Java's `while (cond) wait();`).
    ///
    /// ```
    /// use metalock::{Interrupted, MultiUseWord};
    ///
    /// let word = MultiUseWord::new();
    /// let mut guard = word.lock();
    /// metalock::interrupt_handle().interrupt();
    /// assert_eq!(guard.wait_while_interruptibly(|| false), Ok(()));
    /// assert_eq!(guard.wait_while_interruptibly(|| true), Err(Interrupted));
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_while_interruptibly(
        &mut self,
        mut condition: impl FnMut() -> bool,
    ) -> Result<(), Interrupted> {
        wait_while_interruptibly_until(self, WaitSet::Monitor, |()| condition(), None).map(drop)
    }

    /// As [`wait_while_interruptibly`](Self::wait_while_interruptibly),
    /// giving up after `timeout`: `Ok`, timed out if the condition still
    /// held when the time ran out, or `Err` once an interrupt ends a wait
    /// (Java's `Condition::awaitNanos` in its loop).
    ///
    /// ```
    /// use metalock::{Interrupted, MultiUseWord};
    /// use std::time::Duration;
    ///
    /// let word = MultiUseWord::new();
    /// let mut guard = word.lock();
    /// let result = guard.wait_while_for_interruptibly(|| true, Duration::from_millis(1));
    /// assert!(result.unwrap().timed_out());
    /// metalock::interrupt_handle().interrupt();
    /// let result = guard.wait_while_for_interruptibly(|| true, Duration::from_secs(60));
    /// assert_eq!(result, Err(Interrupted));
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_while_for_interruptibly(
        &mut self,
        mut condition: impl FnMut() -> bool,
        timeout: Duration,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        let deadline = deadline_after(timeout);
        wait_while_interruptibly_until(self, WaitSet::Monitor, |()| condition(), deadline)
    }

    /// As [`wait_while_interruptibly`](Self::wait_while_interruptibly),
    /// giving up at `deadline`: `Ok`, timed out if the condition still held
    /// then, or `Err` once an interrupt ends a wait.
    ///
    /// ```
    /// use metalock::{Instant, Interrupted, MultiUseWord};
    /// use std::time::Duration;
    ///
    /// let word = MultiUseWord::new();
    /// let mut guard = word.lock();
    /// let deadline = Instant::now() + Duration::from_millis(1);
    /// metalock::interrupt_handle().interrupt();
    /// assert_eq!(guard.wait_while_until_interruptibly(|| true, deadline), Err(Interrupted));
    /// // The interrupt was consumed: this one runs until the deadline.
    /// assert!(guard.wait_while_until_interruptibly(|| true, deadline).unwrap().timed_out());
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn wait_while_until_interruptibly(
        &mut self,
        mut condition: impl FnMut() -> bool,
        deadline: Instant,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        wait_while_interruptibly_until(self, WaitSet::Monitor, |()| condition(), Some(deadline))
    }
}

impl sealed::MonitorRef<'_> {
    /// Waits on `set`; whether `deadline` passed first. Takes `&self`: the
    /// public waits take the guard by `&mut`, which is what keeps references
    /// into a `Synchronized` value from living across the wait.
    #[track_caller]
    pub(crate) fn wait_on(&self, set: WaitSet<'_>, deadline: Option<Instant>) -> bool {
        self.word.wait(self.record, deadline, set, None) == WaitEnd::TimedOut
    }

    /// Waits on `set` until notified, `deadline`, or an interrupt of the
    /// calling thread. Takes `&self`, as `wait_on`.
    #[cfg(feature = "std")]
    #[track_caller]
    pub(crate) fn wait_interruptibly_on(
        &self,
        set: WaitSet<'_>,
        deadline: Option<Instant>,
    ) -> Result<WaitTimeoutResult, Interrupted> {
        let interrupt = Interrupt::current_if_alive();
        let end = self
            .word
            .wait(self.record, deadline, set, interrupt.as_deref());
        match end {
            WaitEnd::Notified => Ok(WaitTimeoutResult(false)),
            WaitEnd::TimedOut => Ok(WaitTimeoutResult(true)),
            WaitEnd::Interrupted => Err(Interrupted),
        }
    }
}

/// The wait loop behind every `wait_while`: waits on `set` while `condition`
/// holds for the guard's target, until `deadline`. Timed out if the
/// condition still held when the time ran out. A wake-up after which the
/// condition still holds is a futile one (counted with the `stats`
/// feature): with one condition per kind of waiter there are none.
#[track_caller]
pub(crate) fn wait_while_until<G: AsMonitorGuard + ?Sized>(
    guard: &mut G,
    set: WaitSet<'_>,
    condition: impl FnMut(&mut G::Target) -> bool,
    deadline: Option<Instant>,
) -> WaitTimeoutResult {
    wait_while_in(guard, set, condition, deadline, false)
        .unwrap_or_else(|| unreachable!("only an interruptible wait is interrupted"))
}

/// As [`wait_while_until`], each wait interruptible: `Err` once an interrupt
/// ends one (a condition that no longer holds returns before any wait, as
/// Java's `while (cond) c.await();` does, pending interrupt or not).
#[cfg(feature = "std")]
#[track_caller]
pub(crate) fn wait_while_interruptibly_until<G: AsMonitorGuard + ?Sized>(
    guard: &mut G,
    set: WaitSet<'_>,
    condition: impl FnMut(&mut G::Target) -> bool,
    deadline: Option<Instant>,
) -> Result<WaitTimeoutResult, Interrupted> {
    wait_while_in(guard, set, condition, deadline, true).ok_or(Interrupted)
}

/// The loop of both: `None` if an interrupt ended an `interruptible` wait.
#[track_caller]
fn wait_while_in<G: AsMonitorGuard + ?Sized>(
    guard: &mut G,
    set: WaitSet<'_>,
    mut condition: impl FnMut(&mut G::Target) -> bool,
    deadline: Option<Instant>,
    interruptible: bool,
) -> Option<WaitTimeoutResult> {
    let mut woken = false;
    while condition(guard.__target()) {
        if woken {
            #[cfg(all(feature = "stats", not(metalock_model)))]
            {
                let record = guard.__monitor_guard(sealed::Token::IN_CRATE).record;
                // SAFETY: the guard's record belongs to the calling thread.
                let ee = unsafe { ExecEnv::of_owner(record.owner()) };
                count!(ee, futile_wakeups);
            }
        }
        woken = true;
        let monitor = guard.__monitor_guard(sealed::Token::IN_CRATE);
        #[cfg(feature = "std")]
        let timed_out = match interruptible {
            true => monitor.wait_interruptibly_on(set, deadline).ok()?.0,
            false => monitor.wait_on(set, deadline),
        };
        #[cfg(not(feature = "std"))]
        let timed_out = {
            debug_assert!(!interruptible, "no interrupts without std");
            monitor.wait_on(set, deadline)
        };
        if timed_out {
            return Some(WaitTimeoutResult(condition(guard.__target())));
        }
    }
    Some(WaitTimeoutResult(false))
}

/// A guard that can wait: [`MonitorGuard`], [`SynchronizedGuard`],
/// [`ReentrantSynchronizedGuard`] (one level deep only, as
/// `ArcReentrantSynchronizedGuard`), and where they exist
/// `ArcMonitorGuard`, `ArcSynchronizedGuard`, `KeyedGuard`,
/// `ArcKeyedGuard`, and lock_api's `MutexGuard` of a `RawMonitor`
/// (feature `lock_api`); what [`Condition`]'s methods take. Sealed: only those implement it.
///
/// [`SynchronizedGuard`]: crate::SynchronizedGuard
/// [`ReentrantSynchronizedGuard`]: crate::ReentrantSynchronizedGuard
/// [`Condition`]: crate::Condition
///
/// ```
/// use metalock::{AsMonitorGuard, Condition, MultiUseWord, Synchronized};
/// use std::time::Duration;
///
/// /// Waits for `changed` with whichever guard the caller holds.
/// fn pause<G: AsMonitorGuard>(changed: &Condition, guard: &mut G) -> bool {
///     changed.wait_for(guard, Duration::from_millis(1)).timed_out()
/// }
///
/// let changed = Condition::new();
/// let word = MultiUseWord::new();
/// assert!(pause(&changed, &mut word.lock()));
/// let value = Synchronized::new(0);
/// assert!(pause(&changed, &mut value.lock()));
/// ```
pub trait AsMonitorGuard: sealed::Sealed {
    /// What the condition of a `wait_while` sees: the protected value of a
    /// `SynchronizedGuard` (or of a lock_api guard), nothing (`()`) for a
    /// `MonitorGuard` or an `ArcMonitorGuard`.
    ///
    /// ```
    /// use metalock::{Condition, MultiUseWord, Synchronized};
    ///
    /// let changed = Condition::new();
    /// // Through a `SynchronizedGuard`, the condition sees the value...
    /// let value = Synchronized::new(1);
    /// let mut guard = value.lock();
    /// changed.wait_while(&mut guard, |value: &mut i32| *value == 0);
    /// assert_eq!(*guard, 1);
    /// // ...through a `MonitorGuard`, nothing.
    /// let word = MultiUseWord::new();
    /// changed.wait_while(&mut word.lock(), |_: &mut ()| false);
    /// ```
    type Target: ?Sized;

    /// What a condition sees. Not part of the API.
    #[doc(hidden)]
    fn __target(&mut self) -> &mut Self::Target;
}

pub(crate) mod sealed {
    use crate::lock_record::LockRecord;
    use crate::word::MultiUseWord;

    /// Keeps [`AsMonitorGuard`](super::AsMonitorGuard) to the crate's
    /// guards and `lock_api`'s guards of a `RawMonitor`.
    pub trait Sealed {
        /// The monitor the guard holds, for the crate only: a generic bound
        /// on `AsMonitorGuard` names this method anywhere, but only the
        /// crate can make the `Token` it asks for.
        fn __monitor_guard(&self, token: Token) -> MonitorRef<'_>;
    }

    /// What a call of `Sealed::__monitor_guard` shows it comes from the
    /// crate with: its field is private to the crate.
    #[derive(Clone, Copy, Debug)]
    pub struct Token(());

    impl Token {
        pub(crate) const IN_CRATE: Token = Token(());
    }

    /// The monitor a guard holds, with nothing a user can call, in case one
    /// ever reaches it: a user who reached a `Synchronized`'s word could
    /// enter it a second time and `wait` through that, releasing the
    /// monitor while the outer guard still lends out the value (rule 2 of
    /// `synchronized`).
    ///
    /// Invariant: made by the thread that owns the monitor of `word` through
    /// `record`; a wait through it re-enters with the same record, so that
    /// holds again when the wait returns.
    #[derive(Debug)]
    pub struct MonitorRef<'a> {
        pub(crate) word: &'a MultiUseWord,
        pub(crate) record: &'static LockRecord,
    }
}
