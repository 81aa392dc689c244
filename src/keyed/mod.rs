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
//! an address, and then a monitor (every `&()`, `&[]` or unit-struct
//! literal of one alignment has the same address, process-wide), which is
//! sound (monitors are reentrant) but may serialize code that did not mean
//! to share. Values that share a monitor share its wait set as well: a
//! `notify_one` meant for one can wake a waiter of the other, so they need
//! `notify_all`, or a [`Condition`](crate::Condition) each.

#[cfg(target_has_atomic = "ptr")]
mod arc;
mod enter;
mod guard;
mod table;
#[cfg(all(test, feature = "std", not(metalock_model)))]
mod tests;
mod waiting;

#[cfg(target_has_atomic = "ptr")]
pub use self::arc::{
    ArcKeyedGuard, lock_arc, lock_arc_interruptibly, try_lock_arc, try_lock_arc_for,
    try_lock_arc_for_interruptibly, try_lock_arc_until, try_lock_arc_until_interruptibly,
};
use self::enter::{enter, inspect};
pub use self::guard::KeyedGuard;
#[cfg(loom)]
pub(crate) use self::table::create_table;

use core::num::NonZeroUsize;
use core::time::Duration;

use self::table::table;
use crate::exec_env::ExecEnv;
use crate::guard::{
    deadline_after, entered_or_interrupted, interrupted_before, timed_out_or_interrupted,
};
use crate::monitor::home::{self, Patience};
use crate::sys::Instant;
use crate::word::{LOCKED, state};

/// The key of a value: the address of its first byte.
#[inline(always)]
fn key_of<T: ?Sized>(value: &T) -> NonZeroUsize {
    let key = (value as *const T).cast::<u8>() as usize;
    NonZeroUsize::new(key).unwrap_or_else(|| unreachable!("a reference is never null"))
}

/// Enters the monitor of `value`, which need not embed anything: the monitor
/// is found by the value's address. Reentrant; the guard has the methods of
/// [`MonitorGuard`](crate::MonitorGuard), and borrows `value`, which can
/// then neither move nor die while its monitor is held or waited on. A guard leaked with
/// `mem::forget` ends the borrow but keeps the monitor held: a value later
/// put at the same address finds it held by this thread for good.
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
/// zero-sized values may share one with other values at their address
/// (every `&()`, `&[]` or unit-struct literal of one alignment has the same
/// address, process-wide). Values that share a monitor share its wait set:
/// a `notify_one` meant for one can wake a waiter of the other. It
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

/// As [`lock`], unless the calling thread is interrupted before it
/// enters: then [`Interrupted`](crate::Interrupted), the flag cleared (see
/// [`MultiUseWord::lock_interruptibly`](crate::MultiUseWord::lock_interruptibly)).
///
/// ```
/// use metalock::Interrupted;
///
/// let name = String::from("shared");
/// let guard = metalock::lock(&name);
/// let (tx, rx) = std::sync::mpsc::channel();
/// std::thread::scope(|s| {
///     let blocked = s.spawn(|| {
///         tx.send(metalock::interrupt_handle()).unwrap();
///         metalock::lock_interruptibly(&name).map(drop)
///     });
///     rx.recv().unwrap().interrupt();
///     assert_eq!(blocked.join().unwrap(), Err(Interrupted));
/// });
/// drop(guard);
/// ```
#[track_caller]
pub fn lock_interruptibly<T: ?Sized>(value: &T) -> Result<KeyedGuard<'_>, crate::Interrupted> {
    if interrupted_before() {
        return Err(crate::Interrupted);
    }
    entered_or_interrupted(enter(key_of(value), Patience::Interruptibly(None)))
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

/// As [`try_lock`], waiting at most until `deadline` for another thread to
/// release the monitor of `value`.
///
/// ```
/// use metalock::Instant;
/// use std::time::Duration;
///
/// let config = String::from("v1");
/// let guard = metalock::lock(&config);
/// let deadline = Instant::now() + Duration::from_millis(10);
/// std::thread::scope(|s| {
///     s.spawn(|| assert!(metalock::try_lock_until(&config, deadline).is_none()));
/// });
/// drop(guard);
/// assert!(metalock::try_lock_until(&config, Instant::now()).is_some());
/// ```
#[track_caller]
pub fn try_lock_until<T: ?Sized>(value: &T, deadline: Instant) -> Option<KeyedGuard<'_>> {
    enter(key_of(value), Patience::Until(Some(deadline)))
}

/// As [`try_lock_for`], unless the calling thread is interrupted first, as
/// [`lock_interruptibly`] (Java's `Lock.tryLock(time, unit)`; see
/// [`MultiUseWord::try_lock_for_interruptibly`](crate::MultiUseWord::try_lock_for_interruptibly)):
/// `Ok(None)` if another thread still holds the monitor after `timeout`,
/// [`Interrupted`](crate::Interrupted), the flag cleared, for an interrupt
/// set before the call or one that comes while the thread waits.
///
/// ```
/// use metalock::Interrupted;
/// use std::time::Duration;
///
/// let jobs = vec![1, 2, 3];
/// metalock::interrupt_handle().interrupt();
/// let tried = metalock::try_lock_for_interruptibly(&jobs, Duration::from_millis(10));
/// assert!(matches!(tried, Err(Interrupted)));
/// let tried = metalock::try_lock_for_interruptibly(&jobs, Duration::from_millis(10));
/// assert_eq!(tried.unwrap().map(|guard| guard.depth()), Some(1));
/// ```
#[track_caller]
pub fn try_lock_for_interruptibly<T: ?Sized>(
    value: &T,
    timeout: Duration,
) -> Result<Option<KeyedGuard<'_>>, crate::Interrupted> {
    enter_interruptibly_until(key_of(value), deadline_after(timeout))
}

/// As [`try_lock_for_interruptibly`], giving up at `deadline`.
///
/// ```
/// use metalock::Instant;
///
/// let jobs = vec![1, 2, 3];
/// let guard = metalock::lock(&jobs);
/// std::thread::scope(|s| {
///     s.spawn(|| {
///         let tried = metalock::try_lock_until_interruptibly(&jobs, Instant::now());
///         assert!(tried.unwrap().is_none()); // held, and the time is up
///     });
/// });
/// drop(guard);
/// ```
#[track_caller]
pub fn try_lock_until_interruptibly<T: ?Sized>(
    value: &T,
    deadline: Instant,
) -> Result<Option<KeyedGuard<'_>>, crate::Interrupted> {
    enter_interruptibly_until(key_of(value), Some(deadline))
}

/// The two timed interruptible enters; no deadline waits as
/// `lock_interruptibly`.
#[track_caller]
fn enter_interruptibly_until(
    key: NonZeroUsize,
    deadline: Option<Instant>,
) -> Result<Option<KeyedGuard<'static>>, crate::Interrupted> {
    if interrupted_before() {
        return Err(crate::Interrupted);
    }
    timed_out_or_interrupted(enter(key, Patience::Interruptibly(deadline)))
}

/// How many threads are queued to enter the monitor of `value` now (a
/// snapshot, for monitoring; see
/// [`MultiUseWord::queue_length`](crate::MultiUseWord::queue_length)). Makes
/// no table entry for a value nobody synchronizes on. The monitor of a held
/// value is read under its home's meta-lock (its word's, for a value whose
/// home served another address, through a reference to the table entry).
///
/// ```
/// let orders = vec![10, 20];
/// let held = metalock::lock(&orders);
/// std::thread::scope(|s| {
///     s.spawn(|| drop(metalock::lock(&orders)));
///     while metalock::queue_length(&orders) == 0 {
///         std::thread::yield_now();
///     }
///     drop(held);
/// });
/// assert_eq!(metalock::queue_length(&orders), 0);
/// ```
pub fn queue_length<T: ?Sized>(value: &T) -> usize {
    enter::queue_length(key_of(value))
}

/// How many threads wait in the monitor of `value`'s own wait set now (a
/// snapshot, for monitoring; see
/// [`MultiUseWord::wait_set_length`](crate::MultiUseWord::wait_set_length)).
/// Makes no table entry for a value nobody synchronizes on. A value whose
/// home serves it is read under the wait-table stripe's lock when some
/// thread may wait in the stripe, and under the home's meta-lock when the
/// home is in use; one whose home served another address, at its table
/// entry, under the shard's lock when nobody may wait in the entry's stripe,
/// else through a reference to the entry. Code that the crate runs while it holds a
/// wait-table stripe or a meta-lock may stop the process if it calls this
/// (see the word's).
///
/// ```
/// let inbox = vec![0_u8; 4];
/// std::thread::scope(|s| {
///     s.spawn(|| metalock::lock(&inbox).wait());
///     while metalock::wait_set_length(&inbox) == 0 {
///         std::thread::yield_now();
///     }
///     metalock::lock(&inbox).notify_all();
/// });
/// assert_eq!(metalock::wait_set_length(&inbox), 0);
/// ```
pub fn wait_set_length<T: ?Sized>(value: &T) -> usize {
    enter::wait_set_length(key_of(value))
}

/// Whether threads are queued to enter the monitor of `value` now (a
/// snapshot, its cost not growing with the queue; see
/// [`MultiUseWord::has_queued_threads`](crate::MultiUseWord::has_queued_threads)),
/// read where [`queue_length`] reads. Makes no table entry for a value
/// nobody synchronizes on.
///
/// ```
/// let orders = vec![10, 20];
/// let held = metalock::lock(&orders);
/// std::thread::scope(|s| {
///     s.spawn(|| drop(metalock::lock(&orders)));
///     while !metalock::has_queued_threads(&orders) {
///         std::thread::yield_now();
///     }
///     drop(held);
/// });
/// assert!(!metalock::has_queued_threads(&orders));
/// ```
pub fn has_queued_threads<T: ?Sized>(value: &T) -> bool {
    enter::has_queued_threads(key_of(value))
}

/// Whether some thread waits in the monitor of `value`'s own wait set now
/// (a snapshot; see
/// [`MultiUseWord::has_waiters`](crate::MultiUseWord::has_waiters)), read
/// where [`wait_set_length`] reads, with the same rule for code that the
/// crate runs under its locks. Makes no table entry for a value nobody
/// synchronizes on.
///
/// ```
/// let inbox = vec![0_u8; 4];
/// std::thread::scope(|s| {
///     s.spawn(|| metalock::lock(&inbox).wait());
///     while !metalock::has_waiters(&inbox) {
///         std::thread::yield_now();
///     }
///     metalock::lock(&inbox).notify_all();
/// });
/// assert!(!metalock::has_waiters(&inbox));
/// ```
pub fn has_waiters<T: ?Sized>(value: &T) -> bool {
    enter::has_waiters(key_of(value))
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
            keys.insert(home.word() as *const crate::MultiUseWord as usize, key);
        }
    }
    keys
}

/// The threads pinned now to the home of `value`'s address (queued to
/// enter it or waiting on it, where the word may not show them); a test
/// seam (`__test_hooks::home_pins`). A count left once every such thread
/// is done is a leaked pin, which ties the home to one address.
#[cfg(feature = "__test-hooks")]
pub fn home_pins<T: ?Sized>(value: &T) -> u32 {
    home::locate(key_of(value).get()).0.pins()
}

/// How many keyed monitors are in use now: held or entered, or for an
/// instant in their meta-lock (a snapshot, which may count a monitor being
/// released twice). An idle home, which serves the last address that used
/// it, costs no memory of its own and does not count, and neither does a
/// home whose monitor is only waited on; a monitor in the overflow table,
/// for an address whose home served another, counts while any thread
/// holds, enters or waits on it. It does not grow with the number of values
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
