//! Monitors for values that embed no word (paper 002): the monitor of a
//! value is found by its address, and runs the same meta-lock and monitor
//! protocol as an embedded word.
//!
//! Two ways to find it. First the address's *home*, a word in a fixed table
//! at the hash of the address (`crate::monitor::home`), which serves one
//! address at a time and is rekeyed, in the compare-and-swap that locks it,
//! once idle: the uncontended lock costs what an embedded word's does, at
//! any number of addresses. When the home serves another address at the
//! time (two addresses with one hash in use at once), the address's monitor
//! is an entry of the overflow table (`table`), reference-counted and
//! reclaimed once unused. An address never has two monitors: a home keeps
//! its key while overflow entries of its addresses exist, and those are
//! made and dropped under the home's meta-lock.
//!
//! The key is the address: two references to one place share a monitor,
//! and so do a value and the field at its offset 0 (the first field under
//! `#[repr(C)]`; Rust may reorder the fields of other structs). The keyed
//! monitor is not the monitor of a word the value embeds: `lock(&sync)` and
//! `sync.lock()` on a `Synchronized` exclude nothing from each other.
//! Zero-sized values have no storage of their own; distinct ones may share
//! an address, and then a monitor, which is sound (monitors are reentrant)
//! but may serialize code that did not mean to share.

mod table;

use core::marker::PhantomData;
use core::num::NonZeroUsize;
use core::ptr::NonNull;
use core::time::Duration;

use self::table::{NoRoom, Reserved, table};
use crate::exec_env::ExecEnv;
use crate::guard::{
    AsMonitorGuard, MonitorGuard, WaitTimeoutResult, deadline_after, sealed, wait_while_until,
};
use crate::interrupt::Interrupted;
use crate::monitor::WaitSet;
use crate::monitor::home::{self, Home, Keyed, Patience};
use crate::sys::Instant;
use crate::word::{LOCKED, MultiUseWord, state};

/// The key of a value: the address of its first byte.
#[inline(always)]
fn key_of<T: ?Sized>(value: &T) -> NonZeroUsize {
    let key = (value as *const T).cast::<u8>() as usize;
    NonZeroUsize::new(key).unwrap_or_else(|| unreachable!("a reference is never null"))
}

/// Enters the monitor of `key`, waiting as `patience` allows.
#[inline(always)]
#[track_caller]
fn enter(key: NonZeroUsize, patience: Patience) -> Option<KeyedGuard<'static>> {
    let (home, bits) = home::locate(key.get());
    let ee = ExecEnv::current();
    if let Some(record) = home.enter_fast(ee, bits) {
        return Some(KeyedGuard::new(
            MonitorGuard::new(home.word(), record),
            None,
        ));
    }
    enter_slow(ee, home, key, bits, patience)
}

/// `enter` through the home's meta-lock, and on to the overflow table if
/// the home serves another address.
#[cold]
#[track_caller]
fn enter_slow(
    ee: &'static ExecEnv,
    home: &'static Home,
    key: NonZeroUsize,
    bits: usize,
    patience: Patience,
) -> Option<KeyedGuard<'static>> {
    // Making room in the table allocates, and an allocator that locks
    // monitors could otherwise release a detached EE between two tries.
    // SAFETY: `ee` is the calling thread's EE.
    let kept = unsafe { ee.keep_bound_if_detached() };
    // Dropped after the home's meta-lock: it may give back a word.
    let mut reserved = Reserved::none();
    loop {
        let found = home.enter_slow(ee, bits, patience, || {
            let acquired = table().acquire(key.get(), &mut reserved);
            if let Ok((_, true)) = acquired {
                home.count_overflow(true);
            }
            acquired.map(|(word, _)| word)
        });
        return match found {
            Keyed::Entered(record) => Some(KeyedGuard::new(
                MonitorGuard::new(home.word(), record),
                None,
            )),
            Keyed::GaveUp => {
                drop(reserved);
                drop(kept);
                // SAFETY: `ee` is the calling thread's EE.
                unsafe { ee.release_if_idle_and_detached() };
                None
            }
            Keyed::Elsewhere(Ok(word)) => {
                // The word's own enter keeps and releases the EE as needed.
                drop(reserved);
                drop(kept);
                enter_overflow(key, word, patience)
            }
            // Allocated with no lock held, then tried again: the home may
            // even be free for the key by then.
            Keyed::Elsewhere(Err(NoRoom)) => {
                table().make_room(key.get(), &mut reserved);
                continue;
            }
        };
    }
}

/// Enters the monitor of `key` in the overflow table, `word`, to which a
/// reference was taken.
#[cold]
#[track_caller]
fn enter_overflow(
    key: NonZeroUsize,
    word: NonNull<MultiUseWord>,
    patience: Patience,
) -> Option<KeyedGuard<'static>> {
    let overflow = Overflow(key);
    // SAFETY: the reference `overflow` holds keeps the word alive, and the
    // guard drops its monitor guard before it (field order); if the enter
    // gives up, `overflow` gives the reference back. The `'static` is never
    // seen outside: the guard's `monitor` is private, the `MonitorRef` of
    // `AsMonitorGuard` is opaque, and no method returns the word.
    let word: &'static MultiUseWord = unsafe { word.as_ref() };
    let monitor = match patience {
        Patience::Until(None) => Some(word.lock()),
        Patience::Until(Some(deadline)) => word.try_lock_until(deadline),
        Patience::None => word.try_lock(),
    }?;
    Some(KeyedGuard::new(monitor, Some(overflow)))
}

/// A reference to the overflow entry of an address; dropping it gives the
/// reference back, under the meta-lock of the address's home.
#[derive(Debug)]
struct Overflow(NonZeroUsize);

impl Drop for Overflow {
    fn drop(&mut self) {
        let key = self.0.get();
        let (home, _) = home::locate(key);
        let released = home.with_meta_lock(|| {
            let released = table().release(key);
            let removed = match &released {
                Ok(leftover) => leftover.is_some(),
                Err(misuse) => misuse.removed_entry(),
            };
            if removed {
                home.count_overflow(false);
            }
            released
        });
        // Dropped here, with no lock held: it may free memory.
        let leftover = released.unwrap_or_else(|misuse| misuse.raise());
        drop(leftover);
    }
}

/// Runs `f` on the word value of the monitor of `key` if it has one in use
/// or idle in its home; `None` if not. Makes no table entry.
fn inspect<R>(key: NonZeroUsize, f: impl Fn(usize) -> R) -> Option<R> {
    let (home, bits) = home::locate(key.get());
    match home.inspect(bits, &f) {
        Ok(found) => Some(found),
        Err(false) => None,
        Err(true) => table().inspect(key.get(), |word| word.inspect(&f)),
    }
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
/// the field at its offset 0 (the first field under `#[repr(C)]`);
/// zero-sized values may share one with other values at their address. It
/// is not the monitor of a word the value embeds: `metalock::lock(&sync)`
/// and `sync.lock()` on a [`Synchronized`](crate::Synchronized) exclude
/// nothing from each other.
///
/// Pass the value, not a reference to it: in a method on `&self`,
/// `metalock::lock(self)` is Java's `synchronized (this)`, while
/// `metalock::lock(&self)` locks the local variable that holds the
/// reference, a different place in every call, which excludes nothing.
// Always inlined, as the word's `lock`: left to the compiler it was a call,
// and with nothing to do inside or outside the lock the keyed monitor ran
// at 0.67-0.69x the throughput of an embedded word whose data is on another
// line (`examples/second_line`), against 0.84-0.91x inlined.
#[inline(always)]
#[track_caller]
pub fn lock<T: ?Sized>(value: &T) -> KeyedGuard<'_> {
    match enter(key_of(value), Patience::Until(None)) {
        Some(guard) => guard,
        None => unreachable!("a lock without a deadline gave up"),
    }
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
    enter(key_of(value), Patience::None)
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
    enter(key_of(value), Patience::Until(deadline_after(timeout)))
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
    inspect(key_of(value), |bits| state(bits) == LOCKED).unwrap_or(false)
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
    let Some(ee) = ExecEnv::current_if_bound() else {
        return false; // a thread with no EE bound holds nothing
    };
    inspect(key_of(value), |bits| home::owned_by(bits, ee)).unwrap_or(false)
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
#[cfg(all(feature = "diagnostics", not(metalock_model)))]
pub(crate) fn keys_by_word() -> std::collections::HashMap<usize, usize> {
    let mut keys = table().keys_by_word();
    for home in home::homes() {
        if let Some(key) = home.key_in_use() {
            keys.insert(home.word() as *const MultiUseWord as usize, key);
        }
    }
    keys
}

/// How many keyed monitors are in use now: held or entered (a snapshot;
/// an idle home, which serves the last address that used it, costs no
/// memory of its own and does not count, and neither does a home whose
/// monitor is only waited on). It does not grow with the number of values
/// ever locked.
///
/// ```
/// let values: Vec<u64> = (0..10_000).collect();
/// for value in &values {
///     drop(metalock::lock(value));
/// }
/// // None in use, whatever the count locked.
/// assert_eq!(metalock::keyed_monitors(), 0);
/// ```
pub fn keyed_monitors() -> usize {
    table().len() + home::homes().iter().filter(|home| home.in_use()).count()
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
/// Invariant: `monitor` holds the word of the key's home, static, or of
/// its overflow entry, which `overflow` keeps alive and which is dropped
/// after `monitor` (field order); `'a` borrows the value whose address is
/// the key, so the value outlives the guard.
#[must_use = "the monitor is released as soon as the guard is dropped"]
pub struct KeyedGuard<'a> {
    monitor: MonitorGuard<'static>,
    overflow: Option<Overflow>,
    /// Borrows the value; neither `Send` nor `Sync`, and the compiler's
    /// error names this guard.
    _value: PhantomData<(&'a (), *const KeyedGuard<'static>)>,
}

impl KeyedGuard<'_> {
    #[inline(always)]
    fn new(monitor: MonitorGuard<'static>, overflow: Option<Overflow>) -> Self {
        Self {
            monitor,
            overflow,
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
