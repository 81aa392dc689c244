//! Monitors for values that embed no word (paper 002): the monitor of a
//! value is found by its address in a table, with a per-thread cache in
//! front, and runs the same meta-lock and monitor protocol as an embedded
//! word: a table entry is a [`MultiUseWord`].
//!
//! The key is the address: two references to one place share a monitor,
//! and so do a value and its first field (they start at one address).
//! Zero-sized values have no storage of their own; distinct ones may share
//! an address, and then a monitor, which is sound (monitors are reentrant)
//! but may serialize code that did not mean to share. The monitor of an
//! address lives only while some thread holds, enters or waits on it (and,
//! a little longer, while recently used in some thread's cache); see
//! `table` for the reclamation.

mod cache;
mod table;

use core::marker::PhantomData;
use core::time::Duration;

use self::cache::Pin;
use crate::guard::{AsMonitorGuard, MonitorGuard, WaitTimeoutResult, sealed, wait_while_until};
use crate::interrupt::Interrupted;
use crate::monitor::WaitSet;
use crate::sys::Instant;
use crate::word::MultiUseWord;

/// The key of a value: the address of its first byte.
#[inline(always)]
fn key_of<T: ?Sized>(value: &T) -> usize {
    (value as *const T).cast::<u8>() as usize
}

/// Enters the monitor of `value`, which need not embed anything: the monitor
/// is found by the value's address. Reentrant; the guard has the methods of
/// [`MonitorGuard`], and borrows `value`, which can then neither move nor
/// die while its monitor is held or waited on.
///
/// ```
/// let readings: Vec<f64> = vec![1.0, 2.0]; // a type metalock does not own
/// std::thread::scope(|s| {
///     for _ in 0..2 {
///         s.spawn(|| {
///             let guard = metalock::lock(&readings);
///             assert_eq!(guard.depth(), 1);
///         });
///     }
/// });
/// assert!(!metalock::is_locked(&readings));
/// ```
///
/// Two references to one place share the monitor, and so do a value and
/// its first field; zero-sized values may share one with other values at
/// their address.
///
/// Pass the value, not a reference to it: in a method on `&self`,
/// `metalock::lock(self)` is Java's `synchronized (this)`, while
/// `metalock::lock(&self)` locks the local variable that holds the
/// reference, a different place in every call, which excludes nothing.
#[inline]
#[track_caller]
pub fn lock<T: ?Sized>(value: &T) -> KeyedGuard<'_> {
    let (pin, word) = cache::pin(key_of(value));
    // SAFETY: the pin keeps the word alive, and the guard drops its monitor
    // guard before the pin (field order). The `'static` is never seen
    // outside: the guard's `monitor` is private, the `MonitorRef` of
    // `AsMonitorGuard` is opaque, and no method returns the word.
    let word: &'static MultiUseWord = unsafe { word.as_ref() };
    KeyedGuard::new(word.lock(), pin)
}

/// Enters the monitor of `value` if it is free or already the calling
/// thread's; see [`lock`].
///
/// ```
/// let name = String::from("shared");
/// let guard = metalock::lock(&name);
/// std::thread::scope(|s| {
///     s.spawn(|| assert!(metalock::try_lock(&name).is_none()));
/// });
/// assert!(metalock::try_lock(&name).is_some()); // reentrant
/// drop(guard);
/// ```
#[inline]
#[track_caller]
pub fn try_lock<T: ?Sized>(value: &T) -> Option<KeyedGuard<'_>> {
    let (pin, word) = cache::pin(key_of(value));
    // SAFETY: as in `lock`.
    let word: &'static MultiUseWord = unsafe { word.as_ref() };
    word.try_lock().map(|monitor| KeyedGuard::new(monitor, pin))
}

/// As [`try_lock`], waiting at most `timeout` for another thread to
/// release the monitor of `value`.
///
/// ```
/// use std::time::Duration;
///
/// let config = String::from("v1");
/// let guard = metalock::lock(&config);
/// std::thread::scope(|s| {
///     s.spawn(|| assert!(metalock::try_lock_for(&config, Duration::from_millis(10)).is_none()));
/// });
/// drop(guard);
/// assert!(metalock::try_lock_for(&config, Duration::from_millis(10)).is_some());
/// ```
#[track_caller]
pub fn try_lock_for<T: ?Sized>(value: &T, timeout: Duration) -> Option<KeyedGuard<'_>> {
    let (pin, word) = cache::pin(key_of(value));
    // SAFETY: as in `lock`.
    let word: &'static MultiUseWord = unsafe { word.as_ref() };
    word.try_lock_for(timeout)
        .map(|monitor| KeyedGuard::new(monitor, pin))
}

/// Whether some thread holds the monitor of `value` now (a snapshot). Makes
/// no table entry for a value nobody synchronizes on.
///
/// ```
/// let value = 5_u8;
/// assert!(!metalock::is_locked(&value));
/// let _guard = metalock::lock(&value);
/// assert!(metalock::is_locked(&value));
/// ```
pub fn is_locked<T: ?Sized>(value: &T) -> bool {
    cache::inspect(key_of(value), MultiUseWord::is_locked).unwrap_or(false)
}

/// Whether the calling thread holds the monitor of `value`.
///
/// ```
/// let value = [0_u32; 4];
/// let guard = metalock::lock(&value);
/// assert!(metalock::is_held_by_current_thread(&value));
/// std::thread::scope(|s| {
///     s.spawn(|| assert!(!metalock::is_held_by_current_thread(&value)));
/// });
/// drop(guard);
/// ```
pub fn is_held_by_current_thread<T: ?Sized>(value: &T) -> bool {
    cache::inspect(key_of(value), MultiUseWord::is_held_by_current_thread).unwrap_or(false)
}

/// Runs `f` inside the monitor of `value`, like Java's `synchronized (value)`
/// block; the monitor is released however `f` ends.
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
///
/// let hits = AtomicU32::new(0);
/// let total = metalock::synchronized(&hits, |_guard| {
///     hits.fetch_add(1, Relaxed) + 1
/// });
/// assert_eq!(total, 1);
/// ```
#[track_caller]
pub fn synchronized<T: ?Sized, R>(value: &T, f: impl FnOnce(&mut KeyedGuard<'_>) -> R) -> R {
    let mut guard = lock(value);
    f(&mut guard)
}

/// The key of every table entry, by the address of its word (for the
/// thread dump).
#[cfg(feature = "diagnostics")]
pub(crate) fn keys_by_word() -> std::collections::HashMap<usize, usize> {
    table::table().keys_by_word()
}

/// How many monitors the table holds now: one per address some thread
/// holds, enters or waits on, plus the few each thread keeps cached. It
/// does not grow with the number of values ever locked.
///
/// ```
/// let values: Vec<u64> = (0..10_000).collect();
/// for value in &values {
///     drop(metalock::lock(value));
/// }
/// // At most the calling thread's cache (1024 slots) and other threads',
/// // whatever the count locked.
/// assert!(metalock::keyed_monitors() <= 1024 + 64);
/// ```
pub fn keyed_monitors() -> usize {
    table::table().len()
}

/// One level of ownership of the monitor of a value (see [`lock`]); the
/// same methods as [`MonitorGuard`]. Dropping it leaves that level, on
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
/// Invariant: `monitor` holds the word that `pin` keeps alive, and is
/// dropped first (field order); `'a` borrows the value whose address is the
/// key, so the value outlives the guard.
#[must_use = "the monitor is released as soon as the guard is dropped"]
pub struct KeyedGuard<'a> {
    monitor: MonitorGuard<'static>,
    pin: Pin,
    /// Borrows the value; neither `Send` nor `Sync`, and the compiler's
    /// error names this guard.
    _value: PhantomData<(&'a (), *const KeyedGuard<'static>)>,
}

impl KeyedGuard<'_> {
    #[inline(always)]
    fn new(monitor: MonitorGuard<'static>, pin: Pin) -> Self {
        Self {
            monitor,
            pin,
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
        let Self { monitor, pin, .. } = self;
        monitor.unlock_fair();
        drop(pin);
    }
}

impl sealed::Sealed for KeyedGuard<'_> {
    fn __monitor_guard(&self) -> sealed::MonitorRef<'_> {
        sealed::MonitorRef(&self.monitor)
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
