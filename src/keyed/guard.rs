//! The guard of a keyed monitor: the methods of `MonitorGuard`, plus the
//! reference to the overflow entry, if any, that keeps the word alive.

use core::marker::PhantomData;
use core::num::NonZeroUsize;
use core::ptr;
use core::time::Duration;

use super::Overflow;
use crate::guard::{
    AbortOnUnwind, AsMonitorGuard, MonitorGuard, WaitTimeoutResult, check_depth_one, sealed,
    wait_while_until,
};
use crate::interrupt::Interrupted;
use crate::monitor::WaitSet;
use crate::monitor::home::Patience;
use crate::sys::Instant;

/// One level of ownership of the monitor of a value (see [`lock`](crate::lock)); the
/// same methods as [`MonitorGuard`] but `word()` (a home's word serves
/// other values over time). Dropping it leaves that level, on
/// every exit from its scope, panics included. Neither `Send` nor `Sync`.
///
/// ```
/// use metalock::KeyedGuard;
///
/// let totals = vec![0_u64; 4];
/// let guard: KeyedGuard<'_> = metalock::lock(&totals);
/// assert_eq!(guard.depth(), 1);
/// // The guard borrows `totals`: it can move again once the guard is gone.
/// drop(guard);
/// let moved = totals;
/// assert!(!metalock::is_locked(&moved));
/// ```
///
/// Invariant: `monitor` holds the word of the key's home, static, or of
/// its overflow entry, which `overflow` keeps alive (an entry for `key`)
/// and which is dropped after `monitor` (field order); `'a` borrows the
/// value whose address is `key`, so the value outlives the guard.
#[must_use = "the monitor is released as soon as the guard is dropped"]
pub struct KeyedGuard<'a> {
    monitor: MonitorGuard<'static>,
    overflow: Option<Overflow>,
    /// The value's address, to find its monitor again after `unlocked`.
    key: NonZeroUsize,
    /// Borrows the value; neither `Send` nor `Sync`, and the compiler's
    /// error names this guard.
    _value: PhantomData<(&'a (), *const KeyedGuard<'static>)>,
}

impl KeyedGuard<'_> {
    #[inline(always)]
    pub(super) fn new(
        monitor: MonitorGuard<'static>,
        overflow: Option<Overflow>,
        key: NonZeroUsize,
    ) -> Self {
        Self {
            monitor,
            overflow,
            key,
            _value: PhantomData,
        }
    }

    /// How many levels the calling thread holds the monitor at.
    ///
    /// ```
    /// let value = 7_u32;
    /// let outer = metalock::lock(&value);
    /// let inner = metalock::lock(&value); // reentrant
    /// assert_eq!(inner.depth(), 2);
    /// drop(inner);
    /// assert_eq!(outer.depth(), 1);
    /// ```
    pub fn depth(&self) -> usize {
        self.monitor.depth()
    }

    /// Releases the monitor fully, waits for a notify, and re-enters at the
    /// same depth; see [`MonitorGuard::wait`].
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
    /// it too; see [`MonitorGuard::wait_interruptibly`].
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

    /// Marks the longest waiter as notified; `false` if nobody waited. See
    /// [`MonitorGuard::notify_one`].
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

    /// Releases this level, handing the monitor to the first queued thread
    /// if it was the last; see [`MonitorGuard::unlock_fair`].
    ///
    /// ```
    /// let value = 1_u8;
    /// let outer = metalock::lock(&value);
    /// let inner = metalock::lock(&value);
    /// inner.unlock_fair(); // one level: still held
    /// assert!(metalock::is_held_by_current_thread(&value));
    /// outer.unlock_fair();
    /// assert!(!metalock::is_locked(&value));
    /// ```
    pub fn unlock_fair(self) {
        let Self {
            monitor, overflow, ..
        } = self;
        monitor.unlock_fair();
        drop(overflow);
    }

    /// Releases the monitor while `f` runs, and enters it again before
    /// returning, also if `f` panics; see [`MonitorGuard::unlocked`], whose
    /// rules it follows (depth 1, or a panic). Meanwhile the value's monitor
    /// may be found in another place (its home rekeyed, an overflow entry
    /// reclaimed): the guard finds it again by the value's address.
    ///
    /// ```
    /// use metalock::KeyedGuard;
    ///
    /// let jobs = vec![1, 2, 3];
    /// let mut guard = metalock::lock(&jobs);
    /// let free = KeyedGuard::unlocked(&mut guard, || {
    ///     std::thread::scope(|s| s.spawn(|| !metalock::is_locked(&jobs)).join().unwrap())
    /// });
    /// assert!(free);
    /// assert!(metalock::is_held_by_current_thread(&jobs));
    /// ```
    #[track_caller]
    pub fn unlocked<U>(guard: &mut Self, f: impl FnOnce() -> U) -> U {
        check_depth_one(guard.depth(), "KeyedGuard::unlocked");
        guard.release_while(false, f)
    }

    /// As [`unlocked`](Self::unlocked), handing the monitor to the first
    /// thread of its entry queue when it releases it; see
    /// [`MonitorGuard::unlocked_fair`].
    ///
    /// ```
    /// use metalock::KeyedGuard;
    ///
    /// let total = 0_u64;
    /// let mut guard = metalock::lock(&total);
    /// KeyedGuard::unlocked_fair(&mut guard, || assert!(!metalock::is_locked(&total)));
    /// assert_eq!(guard.depth(), 1);
    /// ```
    #[track_caller]
    pub fn unlocked_fair<U>(guard: &mut Self, f: impl FnOnce() -> U) -> U {
        check_depth_one(guard.depth(), "KeyedGuard::unlocked_fair");
        guard.release_while(true, f)
    }

    /// Hands the monitor to the first thread of its entry queue, if any, and
    /// enters it again behind that thread; does nothing when the monitor is
    /// held more than one level deep, or when its word shows no queued
    /// thread, a hint that may be stale (see [`MonitorGuard::bump`]).
    ///
    /// ```
    /// use metalock::KeyedGuard;
    /// use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    ///
    /// let ran = AtomicBool::new(false);
    /// let mut guard = metalock::lock(&ran);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         let _turn = metalock::lock(&ran);
    ///         // Relaxed: the monitor orders the flag.
    ///         ran.store(true, Relaxed);
    ///     });
    ///     while !ran.load(Relaxed) {
    ///         KeyedGuard::bump(&mut guard);
    ///         std::thread::yield_now();
    ///     }
    /// });
    /// ```
    pub fn bump(guard: &mut Self) {
        if guard.monitor.should_bump() {
            guard.release_while(true, || ());
        }
    }

    /// Leaves the monitor (and its overflow entry, if any), runs `f`, and
    /// enters the monitor of `key` again from scratch, also when `f`
    /// unwinds. If `f` leaves the monitor held, the guard enters again on
    /// top of that level.
    fn release_while<U>(&mut self, fair: bool, f: impl FnOnce() -> U) -> U {
        /// Enters again when dropped: after `f`, or while it unwinds.
        struct Reenter<'g, 'a> {
            guard: &'g mut KeyedGuard<'a>,
            key: NonZeroUsize,
        }

        impl Drop for Reenter<'_, '_> {
            fn drop(&mut self) {
                let entering = AbortOnUnwind;
                let Some(fresh) = super::enter(self.key, Patience::Until(None)) else {
                    unreachable!("a lock without a deadline gave up")
                };
                core::mem::forget(entering);
                // SAFETY: the guard was moved out by `release_while`, which
                // made this `Reenter` before anything could unwind; writing
                // over it drops nothing.
                unsafe { ptr::write(self.guard, fresh) };
            }
        }

        debug_assert_eq!(self.depth(), 1);
        // SAFETY: `Reenter` writes a guard back before anything else can
        // reach `*self` (it holds the only borrow of it), on every path out
        // of this function, unwinding included; if entering again unwinds,
        // `AbortOnUnwind` stops the process before the caller could drop
        // the moved-out guard a second time.
        let held = unsafe { ptr::read(self) };
        let key = held.key;
        let reenter = Reenter { guard: self, key };
        if fair {
            held.unlock_fair();
        } else {
            drop(held);
        }
        let result = f();
        drop(reenter);
        result
    }
}

impl sealed::Sealed for KeyedGuard<'_> {
    fn __monitor_guard(&self) -> sealed::MonitorRef<'_> {
        self.monitor.monitor_ref()
    }
}

impl AsMonitorGuard for KeyedGuard<'_> {
    type Target = ();

    fn __target(&mut self) -> &mut () {
        // A zero-sized value: leaking it allocates nothing.
        alloc::boxed::Box::leak(alloc::boxed::Box::new(()))
    }
}

impl core::fmt::Debug for KeyedGuard<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("KeyedGuard")
            .field("depth", &self.depth())
            .finish_non_exhaustive()
    }
}
