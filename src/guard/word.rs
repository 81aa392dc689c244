//! The methods of [`MultiUseWord`] that enter its monitor (the [`Monitor`]
//! trait, in `monitor_trait`, gives them to any type embedding a word).

use core::time::Duration;

use super::{MonitorGuard, deadline_after, try_entered};
#[cfg(feature = "std")]
use super::{
    entered_or_interrupted, interrupted_before, released_unless, timed_out_or_interrupted,
};
use crate::exec_env::ExecEnv;
use crate::sys::Instant;
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
    #[track_caller]
    pub fn lock(&self) -> MonitorGuard<'_> {
        let ee = ExecEnv::current();
        let record = self.enter::<true>(ee);
        MonitorGuard::new(self, record)
    }

    /// Enters the monitor if that needs no waiting for another thread's
    /// monitor: it is free, or the calling thread owns it already.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    ///
    /// let word = MultiUseWord::new();
    /// let _guard = word.lock();
    /// let again = word.try_lock().expect("the owner may enter again");
    /// assert_eq!(again.depth(), 2);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| assert!(word.try_lock().is_none()));
    /// });
    /// ```
    #[inline]
    #[track_caller]
    pub fn try_lock(&self) -> Option<MonitorGuard<'_>> {
        try_entered!(|ee| self.try_enter::<true>(ee)).map(|record| MonitorGuard::new(self, record))
    }

    /// Enters the monitor, waiting at most `timeout` for another thread to
    /// release it; `None` if it still holds it then. Reentrant, as
    /// [`lock`](Self::lock). A waiting thread queues like `lock`'s and
    /// leaves the queue when its time runs out.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    /// use std::time::Duration;
    ///
    /// let word = MultiUseWord::new();
    /// let guard = word.lock();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| assert!(word.try_lock_for(Duration::from_millis(10)).is_none()));
    /// });
    /// drop(guard);
    /// assert!(word.try_lock_for(Duration::from_millis(10)).is_some());
    /// ```
    #[inline]
    #[track_caller]
    pub fn try_lock_for(&self, timeout: Duration) -> Option<MonitorGuard<'_>> {
        match deadline_after(timeout) {
            Some(deadline) => self.try_lock_until(deadline),
            None => Some(self.lock()),
        }
    }

    /// As [`try_lock_for`](Self::try_lock_for), giving up at `deadline`.
    ///
    /// ```
    /// use metalock::{Instant, MultiUseWord};
    /// use std::time::Duration;
    ///
    /// let word = MultiUseWord::new();
    /// let guard = word.lock();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         let deadline = Instant::now() + Duration::from_millis(10);
    ///         assert!(word.try_lock_until(deadline).is_none());
    ///     });
    /// });
    /// drop(guard);
    /// // A free monitor is entered even when the deadline has passed.
    /// assert!(word.try_lock_until(Instant::now()).is_some());
    /// ```
    #[inline]
    #[track_caller]
    pub fn try_lock_until(&self, deadline: Instant) -> Option<MonitorGuard<'_>> {
        try_entered!(|ee| self.try_enter_until::<true>(ee, deadline))
            .map(|record| MonitorGuard::new(self, record))
    }

    /// Enters the monitor as [`lock`](Self::lock) does, unless the calling
    /// thread is interrupted ([`InterruptHandle::interrupt`](crate::InterruptHandle::interrupt))
    /// before it enters: an interrupt already set, or one that comes while
    /// it waits for another thread to release the monitor, returns
    /// [`Interrupted`](crate::Interrupted) with the flag cleared and the
    /// monitor not entered (Java's `Lock.lockInterruptibly`). One that comes
    /// as the monitor is released may find it entered: then it returns the
    /// guard, and the flag stays set. Reentrant, as `lock`. A thread
    /// blocked in a deadlock that [`diagnostics`](crate#features) reports
    /// can be freed this way. In a thread-local destructor that runs after
    /// the crate's own, where the thread's flag is gone (see
    /// [`interrupt_handle`](crate::interrupt_handle)), it waits as `lock`.
    ///
    /// ```
    /// use metalock::{Interrupted, MultiUseWord};
    ///
    /// let word = MultiUseWord::new();
    /// let held = word.lock();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// std::thread::scope(|s| {
    ///     let blocked = s.spawn(|| {
    ///         tx.send(metalock::interrupt_handle()).unwrap();
    ///         word.lock_interruptibly().map(drop)
    ///     });
    ///     rx.recv().unwrap().interrupt();
    ///     assert_eq!(blocked.join().unwrap(), Err(Interrupted));
    /// });
    /// drop(held);
    /// ```
    #[cfg(feature = "std")]
    #[inline]
    #[track_caller]
    pub fn lock_interruptibly(&self) -> Result<MonitorGuard<'_>, crate::Interrupted> {
        if interrupted_before() {
            return Err(crate::Interrupted);
        }
        let ee = ExecEnv::current();
        let entered = released_unless(ee, self.enter_interruptibly::<true>(ee, None));
        entered_or_interrupted(entered).map(|record| MonitorGuard::new(self, record))
    }

    /// Enters the monitor as [`try_lock_for`](Self::try_lock_for) does,
    /// unless the calling thread is interrupted first, as
    /// [`lock_interruptibly`](Self::lock_interruptibly) (Java's
    /// `Lock.tryLock(time, unit)`): `Ok(Some(guard))` entered, `Ok(None)` if
    /// another thread still holds the monitor after `timeout`, and
    /// [`Interrupted`](crate::Interrupted), the flag cleared, for an
    /// interrupt set before the call or one that comes while the thread
    /// waits (also as its time runs out). One that comes as the monitor is
    /// released may find it entered: then the guard, and the flag stays set;
    /// one that comes after the time ran out stays set too. In a
    /// thread-local destructor that runs after the crate's own, where the
    /// flag is gone, it waits as `try_lock_for`.
    ///
    /// ```
    /// use metalock::{Interrupted, MultiUseWord};
    /// use std::time::Duration;
    ///
    /// let word = MultiUseWord::new();
    /// let held = word.lock();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         let timeout = Duration::from_millis(10);
    ///         assert!(word.try_lock_for_interruptibly(timeout).unwrap().is_none());
    ///         metalock::interrupt_handle().interrupt();
    ///         assert_eq!(word.try_lock_for_interruptibly(timeout).map(|_| ()), Err(Interrupted));
    ///     });
    /// });
    /// drop(held);
    /// assert!(word.try_lock_for_interruptibly(Duration::ZERO).unwrap().is_some());
    /// ```
    #[cfg(feature = "std")]
    #[inline]
    #[track_caller]
    pub fn try_lock_for_interruptibly(
        &self,
        timeout: Duration,
    ) -> Result<Option<MonitorGuard<'_>>, crate::Interrupted> {
        self.enter_interruptibly_until(deadline_after(timeout))
    }

    /// As [`try_lock_for_interruptibly`](Self::try_lock_for_interruptibly),
    /// giving up at `deadline`.
    ///
    /// ```
    /// use metalock::{Instant, MultiUseWord};
    ///
    /// let word = MultiUseWord::new();
    /// // A free monitor is entered even when the deadline has passed.
    /// let guard = word.try_lock_until_interruptibly(Instant::now()).unwrap();
    /// assert_eq!(guard.map(|guard| guard.depth()), Some(1));
    /// ```
    #[cfg(feature = "std")]
    #[inline]
    #[track_caller]
    pub fn try_lock_until_interruptibly(
        &self,
        deadline: Instant,
    ) -> Result<Option<MonitorGuard<'_>>, crate::Interrupted> {
        self.enter_interruptibly_until(Some(deadline))
    }

    /// The two timed interruptible enters; no deadline waits as
    /// `lock_interruptibly`.
    #[cfg(feature = "std")]
    #[inline]
    #[track_caller]
    fn enter_interruptibly_until(
        &self,
        deadline: Option<Instant>,
    ) -> Result<Option<MonitorGuard<'_>>, crate::Interrupted> {
        if interrupted_before() {
            return Err(crate::Interrupted);
        }
        let ee = ExecEnv::current();
        let entered = released_unless(ee, self.enter_interruptibly::<true>(ee, deadline));
        timed_out_or_interrupted(entered)
            .map(|entered| entered.map(|record| MonitorGuard::new(self, record)))
    }

    /// How many threads are queued to enter the monitor now (a snapshot, as
    /// Java's `ReentrantLock.getQueueLength`, for monitoring): threads that
    /// queued in `lock` or a timed or interruptible enter, and notified
    /// waiters moved into the queue to enter again. Not counted: the
    /// waiters still in the wait set, a contender still spinning before it
    /// queues, and a thread that a release just invited out of the queue on
    /// its way to the monitor (if it loses, it queues again). One load when
    /// the word shows no queue; else it walks the queue under the word's
    /// meta-lock, which every enter and exit of the monitor waits for
    /// meanwhile: poll it sparingly on a monitor with a long queue, or poll
    /// [`has_queued_threads`](Self::has_queued_threads), whose time under
    /// the meta-lock does not grow with the queue.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    ///
    /// let word = MultiUseWord::new();
    /// let held = word.lock();
    /// assert_eq!(word.queue_length(), 0);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| drop(word.lock()));
    ///     while word.queue_length() == 0 {
    ///         std::thread::yield_now(); // the other thread has not queued yet
    ///     }
    ///     drop(held); // lets it in
    /// });
    /// assert_eq!(word.queue_length(), 0);
    /// ```
    pub fn queue_length(&self) -> usize {
        self.queued()
    }

    /// How many threads wait in the monitor's own wait set now (a snapshot,
    /// for monitoring, as Java's `ReentrantLock.getWaitQueueLength`):
    /// threads inside a `wait` of any kind, not yet notified, timed out or
    /// interrupted. A notified waiter has left the wait set for the queue
    /// ([`queue_length`](Self::queue_length) counts it); waiters on a
    /// [`Condition`](crate::Condition) are counted by
    /// [`Condition::wait_set_length`](crate::Condition::wait_set_length).
    /// One load when nobody may wait in the monitor's stripe of the wait
    /// table (on any word or condition that hashes there); else it walks
    /// the stripe's waiters under its lock, which waits and notifies in
    /// that stripe wait for meanwhile.
    ///
    /// Unlike Java's, it needs no ownership of the monitor. Code that the
    /// crate runs while it holds a wait-table stripe or a meta-lock (a
    /// global allocator, a platform callback) may stop the process if it
    /// calls this, as it would with a wait or a notify: whenever some
    /// thread may wait in the stripe.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    ///
    /// let word = MultiUseWord::new();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| word.lock().wait());
    ///     while word.wait_set_length() == 0 {
    ///         std::thread::yield_now(); // the other thread waits soon
    ///     }
    ///     let guard = word.lock();
    ///     assert_eq!(word.wait_set_length(), 1);
    ///     guard.notify_one(); // the waiter leaves the wait set for the queue
    ///     assert_eq!(word.wait_set_length(), 0);
    /// });
    /// ```
    pub fn wait_set_length(&self) -> usize {
        self.waiting()
    }

    /// Whether threads are queued to enter the monitor now (a snapshot, as
    /// Java's `ReentrantLock.hasQueuedThreads`): whether
    /// [`queue_length`](Self::queue_length) is above 0, counting the same
    /// threads, without walking the queue. One load when the word shows no
    /// queue; else the word's meta-lock, held for one read (the owner's
    /// record's link to the queue) whatever the queue's length. Every
    /// enter and exit of the monitor waits for that meta-lock meanwhile,
    /// and a word can show a queue it no longer has (a timed contender
    /// gave up, a payload was set while the monitor was held) until its
    /// owner leaves: polling it still costs the monitor something.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    ///
    /// let word = MultiUseWord::new();
    /// let held = word.lock();
    /// assert!(!word.has_queued_threads());
    /// std::thread::scope(|s| {
    ///     s.spawn(|| drop(word.lock()));
    ///     while !word.has_queued_threads() {
    ///         std::thread::yield_now(); // the other thread has not queued yet
    ///     }
    ///     assert_eq!(word.queue_length(), 1); // it stays queued while held
    ///     drop(held);
    /// });
    /// assert!(!word.has_queued_threads());
    /// ```
    pub fn has_queued_threads(&self) -> bool {
        self.has_queue()
    }

    /// Whether some thread waits in the monitor's own wait set now (a
    /// snapshot, as Java's `ReentrantLock.hasWaiters` for a condition,
    /// without needing the monitor): whether
    /// [`wait_set_length`](Self::wait_set_length) is above 0, counting the
    /// same threads. One load when nobody may wait in the monitor's stripe
    /// of the wait table; else it walks the stripe under its lock, as
    /// `wait_set_length` does, but stops at the first waiter of this
    /// monitor (waiters of other objects in the stripe are walked past, and
    /// with none of its own the walk is as long). The rule there for code
    /// that the crate runs under its locks applies.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    ///
    /// let word = MultiUseWord::new();
    /// assert!(!word.has_waiters());
    /// std::thread::scope(|s| {
    ///     s.spawn(|| word.lock().wait());
    ///     while !word.has_waiters() {
    ///         std::thread::yield_now(); // the other thread waits soon
    ///     }
    ///     word.lock().notify_all(); // it leaves the wait set for the queue
    ///     assert!(!word.has_waiters());
    /// });
    /// ```
    pub fn has_waiters(&self) -> bool {
        self.has_waiting()
    }

    /// Whether some thread owns the monitor now (a snapshot).
    ///
    /// ```
    /// use metalock::MultiUseWord;
    ///
    /// let word = MultiUseWord::new();
    /// assert!(!word.is_locked());
    /// let guard = word.lock();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| assert!(word.is_locked())); // whichever thread owns it
    /// });
    /// drop(guard);
    /// assert!(!word.is_locked());
    /// ```
    pub fn is_locked(&self) -> bool {
        self.is_owned()
    }

    /// Whether the calling thread owns the monitor.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    ///
    /// let word = MultiUseWord::new();
    /// let guard = word.lock();
    /// assert!(word.is_held_by_current_thread());
    /// std::thread::scope(|s| {
    ///     s.spawn(|| assert!(!word.is_held_by_current_thread()));
    /// });
    /// drop(guard);
    /// assert!(!word.is_held_by_current_thread());
    /// ```
    pub fn is_held_by_current_thread(&self) -> bool {
        self.is_owned_by_current_thread()
    }

    /// A guard for a level of the monitor that the calling thread entered
    /// and no guard stands for any more (its guard was forgotten with
    /// `mem::forget`): how code whose enters and exits are not scoped (an
    /// interpreter's `monitorenter` and `monitorexit`, a JNI-style
    /// `MonitorEnter` / `MonitorExit`) gets a guard back, as lock_api's
    /// `Mutex::make_guard_unchecked`.
    ///
    /// # Panics
    ///
    /// If the calling thread does not hold the monitor (Java's
    /// `IllegalMonitorStateException`).
    ///
    /// # Safety
    ///
    /// If the calling thread holds the monitor, it holds more levels of it
    /// than it has live guards of it: each guard releases one level when
    /// dropped, and one released twice would leave a guard that claims a
    /// monitor the thread no longer owns. (A thread that holds none is
    /// refused with the panic above.)
    ///
    /// ```
    /// use metalock::MultiUseWord;
    ///
    /// let word = MultiUseWord::new();
    /// // monitorenter: the level outlives the guard.
    /// core::mem::forget(word.lock());
    /// assert!(word.is_held_by_current_thread());
    /// // monitorexit. SAFETY: the level's guard was forgotten above.
    /// drop(unsafe { word.make_guard_unchecked() });
    /// assert!(!word.is_locked());
    /// ```
    #[track_caller]
    pub unsafe fn make_guard_unchecked(&self) -> MonitorGuard<'_> {
        match self.current_thread_record() {
            Some(record) => MonitorGuard::new(self, record),
            None => panic!("{NOT_HELD}"),
        }
    }

    /// Releases a level of the monitor whose guard the calling thread
    /// forgot: `drop` of [`make_guard_unchecked`](Self::make_guard_unchecked)'s
    /// guard (lock_api's `Mutex::force_unlock`).
    ///
    /// # Panics
    ///
    /// If the calling thread does not hold the monitor, before anything
    /// changes.
    ///
    /// # Safety
    ///
    /// As [`make_guard_unchecked`](Self::make_guard_unchecked)'s.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    ///
    /// let word = MultiUseWord::new();
    /// core::mem::forget(word.lock());
    /// core::mem::forget(word.lock());
    /// // SAFETY: both levels' guards were forgotten.
    /// unsafe { word.force_unlock() };
    /// assert!(word.is_held_by_current_thread());
    /// unsafe { word.force_unlock() };
    /// assert!(!word.is_locked());
    /// ```
    #[track_caller]
    pub unsafe fn force_unlock(&self) {
        // SAFETY: the caller's contract.
        drop(unsafe { self.make_guard_unchecked() });
    }

    /// As [`force_unlock`](Self::force_unlock), handing the monitor to the
    /// first thread of its entry queue if the level was the last (see
    /// [`MonitorGuard::unlock_fair`]).
    ///
    /// # Panics
    ///
    /// If the calling thread does not hold the monitor, before anything
    /// changes.
    ///
    /// # Safety
    ///
    /// As [`make_guard_unchecked`](Self::make_guard_unchecked)'s.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    ///
    /// let word = MultiUseWord::new();
    /// core::mem::forget(word.lock());
    /// // SAFETY: the level's guard was forgotten.
    /// unsafe { word.force_unlock_fair() };
    /// assert!(!word.is_locked());
    /// ```
    #[track_caller]
    pub unsafe fn force_unlock_fair(&self) {
        // SAFETY: the caller's contract.
        unsafe { self.make_guard_unchecked() }.unlock_fair();
    }
}

/// The panic message of a forced unlock, or an unchecked guard, by a thread
/// that does not hold the monitor.
const NOT_HELD: &str = "metalock: force_unlock (or make_guard_unchecked) by a thread that does \
    not hold the monitor (Java's IllegalMonitorStateException); nothing was released";
