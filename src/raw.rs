//! [`RawMonitor`]: the word's monitor as a `lock_api` raw mutex, so that
//! `lock_api::Mutex<metalock::RawMonitor, T>` (and code generic over
//! `lock_api::RawMutex`) runs on metalock's protocol. Feature `lock_api`.

use core::fmt;
use core::marker::PhantomData;
use core::time::Duration;

use crate::condition::Condition;
use crate::exec_env::ExecEnv;
use crate::guard::{AbortOnUnwind, AsMonitorGuard, deadline_after, sealed, try_entered};
use crate::lock_record::LockRecord;
use crate::sys::Instant;
use crate::word::MultiUseWord;

/// One word that implements [`lock_api::RawMutex`], [`lock_api::RawMutexFair`]
/// and [`lock_api::RawMutexTimed`] with metalock's monitor protocol: the
/// extra-fast path when uncontended, the meta-lock and its queue otherwise.
///
/// Not reentrant, as `RawMutex`'s contract requires: `lock` by the thread
/// that holds it panics instead of handing out a second `&mut`, `try_lock`
/// returns `None`, and `try_lock_for` and `try_lock_until` return `None`
/// once their time has run out, as `RawMutexTimed` asks of a failed try
/// (waiting for itself, the thread can only fail; a timeout too long for
/// the clock panics, naming that timeout). `lock_api::MutexGuard` of it waits
/// on a [`Condition`](crate::Condition), as parking_lot's `MutexGuard`
/// waits on its `Condvar` (and, as there, mapped and `Arc` guards do not);
/// the monitor's own wait set is out of its reach. Where
/// metalock differs from parking_lot's `Mutex`: a fair monitor
/// ([`new_fair`](Self::new_fair)) hands over on every unlock.
///
/// ```
/// use std::time::Duration;
///
/// type Mutex<T> = lock_api::Mutex<metalock::RawMonitor, T>;
///
/// let m = Mutex::new(vec![1]);
/// m.lock().push(2);
/// let guard = m.try_lock_for(Duration::from_millis(5)).unwrap();
/// assert_eq!(*guard, [1, 2]);
/// lock_api::MutexGuard::unlock_fair(guard);
/// ```
///
/// Invariant: `word` is only ever entered non-reentrantly, and each token
/// names the record that owns it.
#[derive(Debug, Default)]
pub struct RawMonitor {
    word: MultiUseWord,
}

impl RawMonitor {
    /// An unlocked monitor. `const`, so that a `lock_api::Mutex` built on it
    /// can be a `static`.
    ///
    /// ```
    /// use metalock::RawMonitor;
    ///
    /// static HITS: lock_api::Mutex<RawMonitor, u32> =
    ///     lock_api::Mutex::from_raw(RawMonitor::new(), 0);
    ///
    /// std::thread::scope(|s| {
    ///     for _ in 0..4 {
    ///         s.spawn(|| *HITS.lock() += 1);
    ///     }
    /// });
    /// assert_eq!(*HITS.lock(), 4);
    /// ```
    pub const fn new() -> Self {
        Self {
            word: MultiUseWord::new(),
        }
    }

    /// An unlocked fair monitor: every unlock hands it to the first thread
    /// of its entry queue, as `unlock_fair` does. `lock_api::Mutex::new`
    /// starts from `RawMutex::INIT`, a plain monitor; build a fair mutex
    /// with `Mutex::from_raw`.
    ///
    /// ```
    /// use metalock::RawMonitor;
    ///
    /// let queue = lock_api::Mutex::from_raw(RawMonitor::new_fair(), Vec::new());
    /// queue.lock().push(1);
    /// assert_eq!(queue.into_inner(), [1]);
    /// ```
    pub const fn new_fair() -> Self {
        Self {
            word: MultiUseWord::new_fair(),
        }
    }

    /// Whether the monitor is fair.
    ///
    /// ```
    /// use metalock::RawMonitor;
    ///
    /// assert!(RawMonitor::new_fair().is_fair());
    /// assert!(!RawMonitor::new().is_fair());
    /// ```
    pub fn is_fair(&self) -> bool {
        self.word.is_fair()
    }

    /// The monitor a `lock_api` guard of this raw mutex holds, for a wait:
    /// lock_api keeps the token (and its record) to itself, so the record is
    /// found through the word.
    #[track_caller]
    fn monitor_ref(&self) -> sealed::MonitorRef<'_> {
        sealed::MonitorRef {
            word: &self.word,
            record: self.word.current_thread_record().expect(NOT_HELD),
        }
    }

    #[inline(always)]
    fn token(&self, record: &'static LockRecord) -> RawMonitorToken {
        #[cfg(feature = "diagnostics")]
        crate::guard::note_held(&self.word, record, true);
        RawMonitorToken {
            record,
            not_send: PhantomData,
        }
    }
}

/// What a locked [`RawMonitor`] hands its `lock_api` guard: the lock record
/// that owns the monitor. Not `Send`: the monitor belongs to the thread that
/// locked it, so `lock_api`'s guards stay on that thread too.
///
/// Code that uses the raw mutex directly holds the token and gives it back
/// to unlock:
///
/// ```
/// use lock_api::RawMutex;
/// use metalock::{RawMonitor, RawMonitorToken};
///
/// let raw = RawMonitor::new();
/// let token: RawMonitorToken = raw.lock();
/// assert!(raw.try_lock().is_none()); // not reentrant
/// // SAFETY: `token` is the one `lock` returned, on this thread.
/// unsafe { raw.unlock(token) };
/// assert!(!raw.is_locked());
/// ```
pub struct RawMonitorToken {
    record: &'static LockRecord,
    not_send: PhantomData<*mut ()>,
}

impl fmt::Debug for RawMonitorToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawMonitorToken").finish_non_exhaustive()
    }
}

// SAFETY: a shared token gives access to nothing (its `Debug` reads no
// field); unlocking takes the token by value, on the thread that owns it
// (the token is not `Send`).
unsafe impl Sync for RawMonitorToken {}

// SAFETY: mutual exclusion is the monitor's (enter/exit); entering acquires
// (the fused compare-and-swap or the meta-lock's Acquire) and exiting
// releases. `lock` never returns holding anything when it panics (the
// reentrancy panic fires before the enter), and a forgotten token leaves
// the monitor locked, which is safe.
unsafe impl lock_api::RawMutex for RawMonitor {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Self::new();

    type Guard = RawMonitorToken;

    #[inline]
    #[track_caller]
    fn lock(&self) -> RawMonitorToken {
        self.token(self.word.enter::<false>(ExecEnv::current()))
    }

    #[inline]
    fn try_lock(&self) -> Option<RawMonitorToken> {
        try_entered!(|ee| self.word.try_enter::<false>(ee)).map(|record| self.token(record))
    }

    #[inline]
    unsafe fn unlock(&self, token: RawMonitorToken) {
        #[cfg(feature = "diagnostics")]
        crate::guard::note_held(&self.word, token.record, false);
        // SAFETY: the caller holds the monitor with `token` on this thread
        // (`unlock`'s contract); its record owns it (the type's invariant).
        unsafe { self.word.exit::<false>(token.record) };
    }

    fn is_locked(&self) -> bool {
        self.word.is_locked()
    }
}

// SAFETY: as for `RawMutex`; a fair exit hands the monitor over under the
// meta-lock, with the same Release. `bump` either keeps the monitor or
// enters it again, and aborts if that enter unwinds.
unsafe impl lock_api::RawMutexFair for RawMonitor {
    #[inline]
    unsafe fn unlock_fair(&self, token: RawMonitorToken) {
        #[cfg(feature = "diagnostics")]
        crate::guard::note_held(&self.word, token.record, false);
        // SAFETY: as in `unlock`.
        unsafe { self.word.exit::<true>(token.record) };
    }

    /// Hands the monitor to the first queued thread and enters again, as
    /// lock_api's default does, but only when the word shows a queue:
    /// otherwise it keeps the monitor, with no atomic read-modify-write.
    #[inline]
    unsafe fn bump(&self, token: &mut RawMonitorToken) {
        if !self.word.may_have_queued_threads() {
            return;
        }
        let held = RawMonitorToken {
            record: token.record,
            not_send: PhantomData,
        };
        // SAFETY: the caller holds the monitor with `token`, and `held` names
        // the same record; `token` is written again before anyone uses it.
        unsafe { lock_api::RawMutexFair::unlock_fair(self, held) };
        // lock_api's rule: an unwind must leave the monitor held, so an
        // enter that unwinds aborts instead.
        let entering = AbortOnUnwind;
        *token = lock_api::RawMutex::lock(self);
        core::mem::forget(entering);
    }
}

/// `try_lock_for` by the holder with a timeout the clock cannot hold: it
/// would wait for itself for ever.
#[cold]
#[track_caller]
fn endless_try_by_holder(timeout: Duration) -> ! {
    panic!(
        "metalock: RawMonitor::try_lock_for({timeout:?}) by the thread that holds it: it is not \
         reentrant, and a timeout too long for the clock would wait for itself for ever"
    )
}

// SAFETY: as for `RawMutex`; a timed enter that gives up holds nothing.
unsafe impl lock_api::RawMutexTimed for RawMonitor {
    type Duration = Duration;
    type Instant = Instant;

    #[inline]
    #[track_caller]
    fn try_lock_for(&self, timeout: Duration) -> Option<RawMonitorToken> {
        match deadline_after(timeout) {
            Some(deadline) => self.try_lock_until(deadline),
            // No deadline the clock can hold: as `lock`, which the owner
            // would wait in for itself for ever.
            None if self.word.is_owned_by_current_thread() => endless_try_by_holder(timeout),
            None => Some(lock_api::RawMutex::lock(self)),
        }
    }

    #[inline]
    fn try_lock_until(&self, deadline: Instant) -> Option<RawMonitorToken> {
        let entered = try_entered!(|ee| self.word.try_enter_until::<false>(ee, deadline));
        // The protocol refuses the owner at once; `RawMutexTimed` has a
        // failed try return no earlier than its deadline.
        if entered.is_none() && self.word.is_held_by_current_thread() {
            crate::sys::get().sleep_until(deadline);
        }
        entered.map(|record| self.token(record))
    }
}

/// The panic message of a `lock_api` guard of a `RawMonitor` that a
/// `Condition` waits through on a thread that does not hold the monitor:
/// a guard made unchecked, or one released behind its back, through
/// lock_api's `unsafe` raw access. (No other thread reaches the guard's
/// monitor: a `Condition` takes the guard by `&mut`, which cannot leave
/// its thread, and no safe code outside the crate can make the token
/// `__monitor_guard` asks for.)
const NOT_HELD: &str = "metalock: a lock_api guard of a RawMonitor was used to wait on a thread \
    that does not hold the RawMonitor (a guard made unchecked, or released behind its back, \
    through lock_api's unsafe raw access)";

impl<T: ?Sized> sealed::Sealed for lock_api::MutexGuard<'_, RawMonitor, T> {
    #[track_caller]
    fn __monitor_guard(&self, _: sealed::Token) -> sealed::MonitorRef<'_> {
        // SAFETY: `raw()` asks that operations on the raw lock keep every
        // guard and reference to the data valid. This only reads the word;
        // the one operation a `MonitorRef` allows is a wait, made by the
        // crate's `Condition` on the owner's thread while it borrows this
        // guard by `&mut`, so neither the guard nor a reference to the data
        // is used while the lock is released, and the wait re-enters with the
        // same record, so the guard's token names the owning record again
        // (`RawMonitor`'s invariant) when the wait returns.
        let raw = unsafe { lock_api::MutexGuard::mutex(self).raw() };
        raw.monitor_ref()
    }
}

/// `lock_api::Mutex<RawMonitor, T>`'s guard waits on a
/// [`Condition`](crate::Condition), as parking_lot's `MutexGuard` waits on
/// its `Condvar`; the condition sees the value.
///
/// ```
/// use metalock::{Condition, RawMonitor};
///
/// type Mutex<T> = lock_api::Mutex<RawMonitor, T>;
///
/// let queue = Mutex::new(Vec::new());
/// let not_empty = Condition::new();
/// std::thread::scope(|s| {
///     s.spawn(|| {
///         queue.lock().push(7);
///         not_empty.notify_one();
///     });
///     let mut guard = queue.lock();
///     not_empty.wait_while(&mut guard, |queue| queue.is_empty());
///     assert_eq!(guard.pop(), Some(7));
/// });
/// ```
impl<T: ?Sized> AsMonitorGuard for lock_api::MutexGuard<'_, RawMonitor, T> {
    type Target = T;

    fn __target(&mut self) -> &mut T {
        self
    }
}

/// A [`Condition`] is lock_api's raw condition variable of a [`RawMonitor`],
/// so that `lock_api::Condvar<metalock::Condition>` (and code generic over
/// `lock_api::RawCondvar`) waits with `lock_api::Mutex<RawMonitor, T>`.
///
/// No spurious wake-ups: a wait ends when a notify reaches it, or (timed)
/// when its time ran out first, so `notify_one` and `notify_all` count
/// exactly the waiters they reach. One condition serves one monitor at a
/// time: a wait with another monitor while threads wait with the first
/// panics before it releases anything.
///
/// ```
/// use metalock::{Condition, RawMonitor};
///
/// type Mutex<T> = lock_api::Mutex<RawMonitor, T>;
/// type Condvar = lock_api::Condvar<Condition>;
///
/// let ready = Mutex::new(false);
/// let changed = Condvar::new();
/// std::thread::scope(|s| {
///     s.spawn(|| {
///         *ready.lock() = true;
///         changed.notify_all();
///     });
///     let mut guard = ready.lock();
///     changed.wait_while(&mut guard, |ready| !*ready);
///     assert!(*guard);
/// });
/// ```
// SAFETY: a wait releases the monitor and joins the wait set in one hold of
// the set's stripe, which every notify takes, so no notify falls between
// the release and the wait; it re-enters with the token's record, so the
// token names the owner again when the wait returns (`RawMonitor`'s
// invariant). It panics only before it releases anything (a token whose
// record does not own the monitor, a condition bound to another monitor);
// past that point a failure aborts.
unsafe impl lock_api::RawCondvar for Condition {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Self::new();

    type RawMutex = RawMonitor;

    #[inline]
    #[track_caller]
    unsafe fn wait(&self, mutex: &RawMonitor, token: &mut RawMonitorToken) {
        let monitor = sealed::MonitorRef {
            word: &mutex.word,
            record: token.record,
        };
        monitor.wait_on(self.wait_set(), None);
    }

    #[inline]
    fn notify_one(&self) -> bool {
        Condition::notify_one(self)
    }

    #[inline]
    fn notify_all(&self) -> usize {
        Condition::notify_all(self)
    }
}

// SAFETY: as for `RawCondvar`; a wait whose time runs out leaves the wait set
// and re-enters before it returns.
unsafe impl lock_api::RawCondvarTimed for Condition {
    fn checked_duration_to_instant(timeout: &Duration) -> Option<Instant> {
        deadline_after(*timeout)
    }

    #[inline]
    #[track_caller]
    unsafe fn wait_until(
        &self,
        mutex: &RawMonitor,
        token: &mut RawMonitorToken,
        deadline: &Instant,
    ) -> bool {
        let monitor = sealed::MonitorRef {
            word: &mutex.word,
            record: token.record,
        };
        monitor.wait_on(self.wait_set(), Some(*deadline))
    }
}
