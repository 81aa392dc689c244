//! The monitor API of the word: [`MonitorGuard`], the [`Monitor`] trait, and
//! the methods of [`MultiUseWord`] that enter the monitor. The protocol they
//! drive is in `monitor`.

use core::marker::PhantomData;
use core::time::Duration;

use crate::exec_env::ExecEnv;
use crate::lock_record::LockRecord;
use crate::sys::{self, Instant};
use crate::word::MultiUseWord;

impl MultiUseWord {
    /// Enters the monitor, blocking while another thread owns it. Reentrant:
    /// the owner may enter again; each guard releases one level.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    ///
    /// let word = MultiUseWord::with_payload(42);
    /// let outer = word.lock();
    /// let inner = word.lock();
    /// assert_eq!(inner.depth(), 2);
    /// drop(inner);
    /// drop(outer);
    /// assert!(!word.is_locked());
    /// assert_eq!(word.payload(), 42);
    /// ```
    #[inline(always)]
    pub fn lock(&self) -> MonitorGuard<'_> {
        let ee = ExecEnv::current();
        let record = self.enter::<true>(ee);
        MonitorGuard::new(self, record)
    }

    /// Enters the monitor if that needs no waiting for another thread's
    /// monitor: it is free, or the calling thread owns it already.
    #[inline]
    pub fn try_lock(&self) -> Option<MonitorGuard<'_>> {
        let ee = ExecEnv::current();
        match self.try_enter::<true>(ee) {
            Some(record) => Some(MonitorGuard::new(self, record)),
            None => {
                // SAFETY: `ee` is the calling thread's EE.
                unsafe { ee.release_if_idle_and_detached() };
                None
            }
        }
    }

    /// Whether some thread owns the monitor now (a snapshot).
    pub fn is_locked(&self) -> bool {
        self.is_owned()
    }

    /// Whether the calling thread owns the monitor.
    pub fn is_held_by_current_thread(&self) -> bool {
        self.is_owned_by_current_thread()
    }
}

/// Whether a timed wait returned because its time ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitTimeoutResult(pub(crate) bool);

impl WaitTimeoutResult {
    /// `true` if the wait ended because the time ran out before a
    /// notification reached this thread.
    #[must_use]
    pub fn timed_out(&self) -> bool {
        self.0
    }
}

/// One level of ownership of a monitor; dropping it leaves that level.
///
/// Dropping happens on every exit from the scope, panics included, so a
/// monitor is never left held by accident (synchronization lifting, paper
/// 004). The guard is neither `Send` nor `Sync`: a monitor belongs to the
/// thread that entered it.
///
/// Invariant: `record` is the calling thread's lock record that owns the
/// monitor of `word`, with a count of at least one level for this guard.
#[must_use = "the monitor is released as soon as the guard is dropped"]
pub struct MonitorGuard<'a> {
    word: &'a MultiUseWord,
    record: &'static LockRecord,
    _not_send_or_sync: PhantomData<*const ()>,
}

impl<'a> MonitorGuard<'a> {
    pub(crate) fn new(word: &'a MultiUseWord, record: &'static LockRecord) -> Self {
        Self {
            word,
            record,
            _not_send_or_sync: PhantomData,
        }
    }

    /// The word this guard holds.
    pub fn word(&self) -> &'a MultiUseWord {
        self.word
    }

    /// How many levels the calling thread holds the monitor at.
    pub fn depth(&self) -> usize {
        // SAFETY: the guard is on the owner's thread.
        unsafe { self.record.count() }
    }

    /// Releases the monitor fully, whatever the depth, blocks until another
    /// thread notifies, then re-enters at the same depth. Like every
    /// condition wait, call it in a loop that re-checks the condition.
    pub fn wait(&mut self) {
        self.word.wait(self.record, None);
    }

    /// As [`wait`](Self::wait), giving up after `timeout`.
    pub fn wait_for(&mut self, timeout: Duration) -> WaitTimeoutResult {
        let deadline = sys::get().now().checked_add(timeout);
        WaitTimeoutResult(self.word.wait(self.record, deadline))
    }

    /// As [`wait`](Self::wait), giving up at `deadline`.
    pub fn wait_until(&mut self, deadline: Instant) -> WaitTimeoutResult {
        WaitTimeoutResult(self.word.wait(self.record, Some(deadline)))
    }

    /// Marks the thread that has waited longest on this monitor as notified;
    /// it returns from its wait once it has the monitor again. Returns
    /// `false` if nobody was waiting: notifications are not remembered.
    pub fn notify_one(&self) -> bool {
        self.word.notify(self.record, false) != 0
    }

    /// Marks every thread waiting on this monitor as notified and returns
    /// how many there were.
    pub fn notify_all(&self) -> usize {
        self.word.notify(self.record, true)
    }
}

impl Drop for MonitorGuard<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.word.exit(self.record);
    }
}

impl core::fmt::Debug for MonitorGuard<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("MonitorGuard")
            .field("depth", &self.depth())
            .finish_non_exhaustive()
    }
}

/// Any type that embeds a [`MultiUseWord`] gets a monitor by implementing
/// this one method.
///
/// ```
/// use metalock::{Monitor, MultiUseWord};
///
/// struct Account {
///     word: MultiUseWord,
///     id: u32,
/// }
///
/// impl Monitor for Account {
///     fn multi_use_word(&self) -> &MultiUseWord {
///         &self.word
///     }
/// }
///
/// let account = Account { word: MultiUseWord::new(), id: 7 };
/// let id = account.synchronized(|guard| {
///     assert_eq!(guard.depth(), 1);
///     account.id
/// });
/// assert_eq!(id, 7);
/// ```
pub trait Monitor {
    /// The word that holds this object's monitor.
    fn multi_use_word(&self) -> &MultiUseWord;

    /// Enters the object's monitor; see [`MultiUseWord::lock`].
    fn lock(&self) -> MonitorGuard<'_> {
        self.multi_use_word().lock()
    }

    /// Enters the object's monitor if it is free or already ours; see
    /// [`MultiUseWord::try_lock`].
    fn try_lock(&self) -> Option<MonitorGuard<'_>> {
        self.multi_use_word().try_lock()
    }

    /// Runs `f` inside the object's monitor, like Java's `synchronized`
    /// block; the monitor is released however `f` ends.
    fn synchronized<R>(&self, f: impl FnOnce(&mut MonitorGuard<'_>) -> R) -> R {
        let mut guard = self.lock();
        f(&mut guard)
    }
}

impl Monitor for MultiUseWord {
    fn multi_use_word(&self) -> &MultiUseWord {
        self
    }
}

#[cfg(all(test, feature = "std", not(loom)))]
mod tests {
    use super::*;
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::thread;

    fn message(payload: Box<dyn core::any::Any + Send>) -> std::string::String {
        match payload.downcast::<std::string::String>() {
            Ok(s) => *s,
            Err(payload) => payload
                .downcast::<&str>()
                .map(|s| (*s).into())
                .unwrap_or_default(),
        }
    }

    /// The recursion count is checked: one level past `usize::MAX` panics,
    /// after the meta-lock is released, and leaves the monitor held at the
    /// depth it had, usable by its owner and closed to others.
    #[test]
    fn recursion_count_overflow_panics_and_keeps_the_monitor() {
        let word = MultiUseWord::new();
        let guard = word.lock();
        // SAFETY: the guard's record is this thread's, and the count is the
        // owner's field.
        unsafe { guard.record.set_count(usize::MAX) };
        for attempt in ["lock", "try_lock"] {
            let result = catch_unwind(AssertUnwindSafe(|| match attempt {
                "lock" => drop(word.lock()),
                _ => drop(word.try_lock()),
            }));
            let text = message(result.expect_err("one level past usize::MAX must panic"));
            assert!(text.contains("levels deep"), "{attempt}: {text}");
            assert_eq!(guard.depth(), usize::MAX);
            assert!(word.is_held_by_current_thread());
        }
        thread::scope(|s| {
            s.spawn(|| assert!(word.try_lock().is_none()));
        });
        // SAFETY: as above.
        unsafe { guard.record.set_count(1) };
        drop(guard);
        assert!(!word.is_locked());
        thread::scope(|s| {
            s.spawn(|| assert_eq!(word.lock().depth(), 1));
        });
    }
}
