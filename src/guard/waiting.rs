//! The wait loop behind every `wait_while`, and [`AsMonitorGuard`], what a
//! `Condition` waits with.

use super::{MonitorGuard, WaitTimeoutResult};
#[cfg(all(feature = "stats", not(metalock_model)))]
use crate::exec_env::ExecEnv;
use crate::monitor::WaitSet;
use crate::sys::Instant;

/// The wait loop behind every `wait_while`: waits on `set` while `condition`
/// holds for the guard's target, until `deadline`. Timed out if the
/// condition still held when the time ran out. A wake-up after which the
/// condition still holds is a futile one (counted with the `stats`
/// feature): with one condition per kind of waiter there are none.
#[track_caller]
pub(crate) fn wait_while_until<G: AsMonitorGuard + ?Sized>(
    guard: &mut G,
    set: WaitSet<'_>,
    mut condition: impl FnMut(&mut G::Target) -> bool,
    deadline: Option<Instant>,
) -> WaitTimeoutResult {
    let mut woken = false;
    while condition(guard.__target()) {
        if woken {
            #[cfg(all(feature = "stats", not(metalock_model)))]
            {
                let record = guard.__monitor_guard().0.record;
                // SAFETY: the guard's record belongs to the calling thread.
                let ee = unsafe { ExecEnv::of_owner(record.owner()) };
                count!(ee, futile_wakeups);
            }
        }
        woken = true;
        if guard.__monitor_guard().0.wait_on(set, deadline) {
            return WaitTimeoutResult(condition(guard.__target()));
        }
    }
    WaitTimeoutResult(false)
}

/// A guard that can wait: [`MonitorGuard`], [`SynchronizedGuard`]; what
/// [`Condition`]'s methods take. Sealed: the crate's guards implement it.
///
/// [`SynchronizedGuard`]: crate::SynchronizedGuard
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
    /// `SynchronizedGuard`, nothing (`()`) for a `MonitorGuard`.
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
    use super::MonitorGuard;

    /// Keeps [`AsMonitorGuard`](super::AsMonitorGuard) to the crate's
    /// guards.
    pub trait Sealed {
        /// The monitor guard inside, opaque outside the crate.
        fn __monitor_guard(&self) -> MonitorRef<'_>;
    }

    /// The monitor guard inside a guard, with nothing a user can call: a
    /// user who reached a `Synchronized`'s word could enter it a second time
    /// and `wait` through that, releasing the monitor while the outer guard
    /// still lends out the value (rule 2 of `synchronized`). A generic bound
    /// on `AsMonitorGuard` makes `__monitor_guard` callable from anywhere,
    /// so it is the returned type that stays closed.
    #[derive(Debug)]
    pub struct MonitorRef<'a>(pub(crate) &'a MonitorGuard<'a>);
}
