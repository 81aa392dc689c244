//! The monitor API of the word: [`MonitorGuard`], the methods of
//! [`MultiUseWord`] that enter the monitor (`word`), and the [`Monitor`]
//! trait that gives them to any type embedding a word (`monitor_trait`). The
//! protocol they drive is in `monitor`; the guard's wait methods, the wait
//! loop behind every `wait_while` and the sealed [`AsMonitorGuard`] are in
//! `waiting`; releasing the monitor while a closure runs is in `unlocked`;
//! the guard that owns an `Arc` of its object is in `arc`.

#[cfg(target_has_atomic = "ptr")]
mod arc;
mod monitor_trait;
mod unlocked;
mod waiting;
mod word;

#[cfg(target_has_atomic = "ptr")]
pub use arc::ArcMonitorGuard;
pub use monitor_trait::Monitor;
/// For `RawMonitor::bump`, which enters again through lock_api's guard.
#[cfg(any(feature = "std", feature = "lock_api"))]
pub(crate) use unlocked::AbortOnUnwind;
/// For the keyed guard, which enters again by its own path, and the
/// reentrant value's guard, which names itself.
pub(crate) use unlocked::check_depth_one;
pub use waiting::AsMonitorGuard;
pub(crate) use waiting::sealed;
#[cfg(feature = "std")]
pub(crate) use waiting::wait_while_interruptibly_until;
pub(crate) use waiting::wait_while_until;

use core::marker::PhantomData;
#[cfg(target_has_atomic = "ptr")]
use core::mem::ManuallyDrop;
use core::time::Duration;

use crate::exec_env::ExecEnv;
#[cfg(feature = "std")]
use crate::exec_env::interrupt::Interrupt;
#[cfg(feature = "std")]
use crate::interrupt::Interrupted;
use crate::lock_record::LockRecord;
use crate::sys::{self, Instant};
use crate::word::MultiUseWord;

/// Whether a timed wait returned because its time ran out.
///
/// ```
/// use metalock::{MultiUseWord, WaitTimeoutResult};
/// use std::time::Duration;
///
/// let word = MultiUseWord::new();
/// let mut guard = word.lock();
/// // Nobody notifies: the wait ends when its time runs out.
/// let result: WaitTimeoutResult = guard.wait_for(Duration::from_millis(1));
/// assert!(result.timed_out());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitTimeoutResult(pub(crate) bool);

impl WaitTimeoutResult {
    /// `true` if the wait ended because the time ran out before a
    /// notification reached this thread.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    /// use std::time::Duration;
    ///
    /// let word = MultiUseWord::new();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         let mut guard = word.lock();
    ///         // Waits in slices of 10 ms until a notification comes.
    ///         while guard.wait_for(Duration::from_millis(10)).timed_out() {}
    ///     });
    ///     // Retries until the notification reaches the waiter.
    ///     while !word.lock().notify_one() {
    ///         std::thread::yield_now();
    ///     }
    /// });
    /// ```
    #[must_use]
    pub const fn timed_out(self) -> bool {
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
/// ```
/// use metalock::MultiUseWord;
/// use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
///
/// let word = MultiUseWord::new();
/// let ready = AtomicBool::new(false);
/// std::thread::scope(|s| {
///     s.spawn(|| {
///         let mut guard = word.lock();
///         // Relaxed: the monitor orders the flag.
///         while !ready.load(Relaxed) {
///             guard.wait();
///         }
///     });
///     let guard = word.lock();
///     ready.store(true, Relaxed);
///     guard.notify_all();
/// });
/// ```
///
/// Invariant: `record` is the calling thread's lock record that owns the
/// monitor of `word`, with a count of at least one level for this guard.
#[must_use = "the monitor is released as soon as the guard is dropped"]
pub struct MonitorGuard<'a> {
    word: &'a MultiUseWord,
    record: &'static LockRecord,
    /// Neither `Send` nor `Sync`, and the compiler's error says which guard
    /// (`*const MonitorGuard` cannot be sent between threads safely).
    _not_send_or_sync: PhantomData<*const MonitorGuard<'static>>,
}

impl<'a> MonitorGuard<'a> {
    /// The guard's lock record, for unit tests that set its count.
    #[cfg(all(test, feature = "std", not(metalock_model)))]
    pub(crate) fn record(&self) -> &'static LockRecord {
        self.record
    }

    #[inline(always)]
    pub(crate) fn new(word: &'a MultiUseWord, record: &'static LockRecord) -> Self {
        #[cfg(all(feature = "diagnostics", not(metalock_model)))]
        note_held(word, record, true);
        Self {
            word,
            record,
            _not_send_or_sync: PhantomData,
        }
    }

    /// The word this guard holds.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    ///
    /// let word = MultiUseWord::with_payload(3);
    /// let guard = word.lock();
    /// assert!(std::ptr::eq(guard.word(), &word));
    /// assert_eq!(guard.word().payload(), 3);
    /// ```
    pub fn word(&self) -> &'a MultiUseWord {
        self.word
    }

    /// The monitor this guard holds, as waits and conditions take it.
    #[inline]
    pub(crate) fn monitor_ref(&self) -> sealed::MonitorRef<'a> {
        sealed::MonitorRef {
            word: self.word,
            record: self.record,
        }
    }

    /// How many levels the calling thread holds the monitor at.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    ///
    /// let word = MultiUseWord::new();
    /// let outer = word.lock();
    /// assert_eq!(outer.depth(), 1);
    /// let inner = word.lock();
    /// // Every guard of the owner sees the same depth.
    /// assert_eq!((outer.depth(), inner.depth()), (2, 2));
    /// drop(inner);
    /// assert_eq!(outer.depth(), 1);
    /// ```
    pub fn depth(&self) -> usize {
        // SAFETY: the guard is on the owner's thread.
        unsafe { self.record.count() }
    }

    /// Marks the thread that has waited longest on this monitor as notified:
    /// it joins the entry queue, ahead of the threads that wait to enter
    /// (but behind those passed over too long), and re-contends when this
    /// thread releases the monitor (see [`wait`](Self::wait)). Returns
    /// `false` if nobody was waiting: notifications are not remembered.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    /// use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    ///
    /// let word = MultiUseWord::new();
    /// assert!(!word.lock().notify_one()); // nobody waits: not remembered
    /// let woken = AtomicBool::new(false);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| word.lock().wait_while(|| !woken.load(Relaxed)));
    ///     // Retries until the notification reaches the waiter.
    ///     loop {
    ///         let guard = word.lock();
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
        self.word.notify(self.record, false) != 0
    }

    /// Marks every thread waiting on this monitor as notified, and returns
    /// how many there were; each gets the monitor in turn.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    /// use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    ///
    /// let word = MultiUseWord::new();
    /// let arrived = AtomicUsize::new(0);
    /// std::thread::scope(|s| {
    ///     for _ in 0..3 {
    ///         s.spawn(|| {
    ///             let mut guard = word.lock();
    ///             arrived.fetch_add(1, Relaxed);
    ///             guard.wait_while(|| arrived.load(Relaxed) != 0);
    ///         });
    ///     }
    ///     // Once all three wait, wakes them together.
    ///     loop {
    ///         let guard = word.lock();
    ///         if arrived.load(Relaxed) == 3 {
    ///             arrived.store(0, Relaxed);
    ///             assert_eq!(guard.notify_all(), 3);
    ///             break;
    ///         }
    ///         drop(guard);
    ///         std::thread::yield_now();
    ///     }
    /// });
    /// ```
    pub fn notify_all(&self) -> usize {
        self.word.notify(self.record, true)
    }

    /// Releases this level of the monitor like dropping the guard, but if it
    /// is the last level and threads are queued to enter, hands the monitor
    /// to the first of them instead of letting any thread take it
    /// (parking_lot's `unlock_fair`). A plain release lets running threads
    /// barge in ahead of a thread that is waking up, which is faster; a fair
    /// one makes the queue's order the order of ownership.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    ///
    /// let word = MultiUseWord::new();
    /// let guard = word.lock();
    /// guard.unlock_fair();
    /// assert!(!word.is_locked());
    /// ```
    #[inline]
    pub fn unlock_fair(self) {
        let this = core::mem::ManuallyDrop::new(self);
        #[cfg(all(feature = "diagnostics", not(metalock_model)))]
        note_held(this.word, this.record, false);
        // SAFETY: the guard's invariant; it is not dropped after this.
        unsafe { this.word.exit::<true>(this.record) };
    }
}

/// Runs a try-enter `attempt` with the calling thread's EE bound to the
/// name given, `try_entered!(|ee| word.try_enter::<true>(ee))`; when it
/// fails, gives back an EE the thread bound only for it. (What the attempt
/// runs that may lock monitors, a refill or a slow path, keeps the EE bound
/// itself, so that the extra-fast try pays nothing for it.) A macro, not a
/// function taking a closure, so that a panic inside the attempt reports
/// the location of a `#[track_caller]` caller (a closure cannot carry it).
macro_rules! try_entered {
    (|$ee:ident| $attempt:expr) => {{
        let $ee = $crate::exec_env::ExecEnv::current();
        $crate::guard::released_unless($ee, $attempt)
    }};
}
pub(crate) use try_entered;

/// The twelve waits of a guard that holds another guard in `$field`,
/// forwarded to it; `$inner` names that guard's type, whose methods have
/// the semantics and examples (the `Arc` guards of a word and of a keyed
/// value).
#[cfg(target_has_atomic = "ptr")]
macro_rules! forward_waits {
    ($field:ident, $inner:literal) => {
        $crate::guard::forward_waits!(@each $field, $inner;
            fn wait();
            fn wait_for(timeout: core::time::Duration) -> $crate::WaitTimeoutResult;
            fn wait_until(deadline: $crate::Instant) -> $crate::WaitTimeoutResult;
            fn wait_while(condition: impl FnMut() -> bool);
            fn wait_while_for(
                condition: impl FnMut() -> bool,
                timeout: core::time::Duration
            ) -> $crate::WaitTimeoutResult;
            fn wait_while_until(
                condition: impl FnMut() -> bool,
                deadline: $crate::Instant
            ) -> $crate::WaitTimeoutResult;
            #[cfg(feature = "std")]
            fn wait_interruptibly() -> Result<(), $crate::Interrupted>;
            #[cfg(feature = "std")]
            fn wait_for_interruptibly(
                timeout: core::time::Duration
            ) -> Result<$crate::WaitTimeoutResult, $crate::Interrupted>;
            #[cfg(feature = "std")]
            fn wait_until_interruptibly(
                deadline: $crate::Instant
            ) -> Result<$crate::WaitTimeoutResult, $crate::Interrupted>;
            #[cfg(feature = "std")]
            fn wait_while_interruptibly(
                condition: impl FnMut() -> bool
            ) -> Result<(), $crate::Interrupted>;
            #[cfg(feature = "std")]
            fn wait_while_for_interruptibly(
                condition: impl FnMut() -> bool,
                timeout: core::time::Duration
            ) -> Result<$crate::WaitTimeoutResult, $crate::Interrupted>;
            #[cfg(feature = "std")]
            fn wait_while_until_interruptibly(
                condition: impl FnMut() -> bool,
                deadline: $crate::Instant
            ) -> Result<$crate::WaitTimeoutResult, $crate::Interrupted>;
        );
    };
    (@each $field:ident, $inner:literal;
        $($(#[$attr:meta])* fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?;)*) => {$(
        #[doc = concat!("See [`", $inner, "::", stringify!($name), "`].")]
        $(#[$attr])*
        #[track_caller]
        pub fn $name(&mut self, $($arg: $ty),*) $(-> $ret)? {
            self.$field.$name($($arg),*)
        }
    )*};
}
#[cfg(target_has_atomic = "ptr")]
pub(crate) use forward_waits;

/// `entered`, an attempt of `ee`'s thread; when it failed, gives back an
/// EE the thread bound only for it (see `try_entered!`).
#[inline]
pub(crate) fn released_unless(
    ee: &'static ExecEnv,
    entered: Option<&'static LockRecord>,
) -> Option<&'static LockRecord> {
    if entered.is_none() {
        // SAFETY: `ee` is the calling thread's EE.
        unsafe { ee.release_if_idle_and_detached() };
    }
    entered
}

/// The start of a `lock_interruptibly`, as Java's `lockInterruptibly`:
/// whether the thread's interrupt flag was set before the call (then
/// cleared, and the caller returns `Interrupted` without entering).
#[cfg(feature = "std")]
#[inline]
pub(crate) fn interrupted_before() -> bool {
    Interrupt::take_current()
}

/// The end of a `lock_interruptibly`: an interruptible enter gives up
/// (`None`, the flag still set) only when an interrupt came while it
/// waited, reported here, the flag cleared.
#[cfg(feature = "std")]
#[inline]
pub(crate) fn entered_or_interrupted<R>(entered: Option<R>) -> Result<R, Interrupted> {
    entered.ok_or_else(|| {
        Interrupt::take_current();
        Interrupted
    })
}

/// The end of a timed `try_lock_*_interruptibly`: an enter that gave up
/// reports the interrupt if one came (the flag cleared), else that the
/// time ran out. An interrupt that came as the time ran out wins, as in a
/// timed interruptible wait.
#[cfg(feature = "std")]
#[inline]
pub(crate) fn timed_out_or_interrupted<R>(entered: Option<R>) -> Result<Option<R>, Interrupted> {
    match entered {
        Some(entered) => Ok(Some(entered)),
        None if Interrupt::take_current() => Err(Interrupted),
        None => Ok(None),
    }
}

/// Takes an owning guard apart: releases `monitor` (handing the monitor
/// over if `fair`), then moves out `owner`, which kept its word alive.
///
/// # Safety
/// Both are fields of a guard that is never dropped and never used again;
/// `monitor` borrows a word that `owner` keeps in place.
#[cfg(target_has_atomic = "ptr")]
pub(crate) unsafe fn release_owned<O>(
    monitor: &mut ManuallyDrop<MonitorGuard<'static>>,
    owner: &O,
    fair: bool,
) -> O {
    // SAFETY: the caller's contract: each field is taken out once, and the
    // monitor guard goes first, while `owner`, returned, keeps its word.
    let (monitor, owner) = unsafe { (ManuallyDrop::take(monitor), core::ptr::read(owner)) };
    match fair {
        true => monitor.unlock_fair(),
        false => drop(monitor),
    }
    owner
}

/// The deadline `timeout` from now; `None` (no deadline) if that is too far
/// to represent.
pub(crate) fn deadline_after(timeout: Duration) -> Option<Instant> {
    sys::get().now().checked_add(timeout)
}

impl sealed::Sealed for MonitorGuard<'_> {
    fn __monitor_guard(&self, _: sealed::Token) -> sealed::MonitorRef<'_> {
        self.monitor_ref()
    }
}

impl AsMonitorGuard for MonitorGuard<'_> {
    type Target = ();

    fn __target(&mut self) -> &mut () {
        // A zero-sized value: leaking it allocates nothing.
        alloc::boxed::Box::leak(alloc::boxed::Box::new(()))
    }
}

impl Drop for MonitorGuard<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        #[cfg(all(feature = "diagnostics", not(metalock_model)))]
        note_held(self.word, self.record, false);
        // SAFETY: the guard's invariant.
        unsafe { self.word.exit::<false>(self.record) };
    }
}

/// Notes in `record`, for thread dumps, that a guard of it now holds
/// (`held`) or no longer holds one level of `word`: one plain store when
/// it locks and one when it unlocks (the depth too on recursive levels),
/// and a load of the count, which nothing stored just before.
#[cfg(all(feature = "diagnostics", not(metalock_model)))]
#[inline(always)]
pub(crate) fn note_held(word: &MultiUseWord, record: &LockRecord, held: bool) {
    use core::sync::atomic::Ordering::{Relaxed, Release};
    // SAFETY: guards live on their owner's thread, whose field the count is.
    let count = unsafe { record.count() };
    // Relaxed: thread dumps read these as a snapshot of what the thread
    // holds. Except the word noted: its Release pairs with the dump's
    // Acquire load, so that a dump that sees it sees the record's owner as
    // of the note or a later one (a record donated by an exited thread
    // names its new owner before that owner notes a word in it); the dump
    // reads the owner before and after, and drops a record that changed
    // hands in between.
    if held {
        record
            .diag_word
            .store(word as *const MultiUseWord as usize, Release);
        if count != 1 {
            record.diag_depth.store(count, Relaxed);
        }
    } else if count <= 1 {
        record.diag_word.store(0, Relaxed);
    } else {
        record.diag_depth.store(count - 1, Relaxed);
    }
}

impl core::fmt::Debug for MonitorGuard<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("MonitorGuard")
            .field("depth", &self.depth())
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, feature = "std", not(metalock_model)))]
mod tests;
