//! The guard of a keyed monitor: the methods of `MonitorGuard`, plus the
//! reference to the overflow entry, if any, that keeps the word alive.

use core::marker::PhantomData;
use core::num::NonZeroUsize;
use core::ptr;

use super::enter::Overflow;
use crate::guard::{AbortOnUnwind, AsMonitorGuard, MonitorGuard, check_depth_one, sealed};
use crate::monitor::home::Patience;

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
    pub(super) monitor: MonitorGuard<'static>,
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
    pub(super) fn release_while<U>(&mut self, fair: bool, f: impl FnOnce() -> U) -> U {
        /// Enters again when dropped: after `f`, or while it unwinds.
        struct Reenter<'g, 'a> {
            guard: &'g mut KeyedGuard<'a>,
            key: NonZeroUsize,
        }

        impl Drop for Reenter<'_, '_> {
            fn drop(&mut self) {
                let entering = AbortOnUnwind;
                let Some(fresh) = super::enter::enter(self.key, Patience::Until(None)) else {
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
    fn __monitor_guard(&self, _: sealed::Token) -> sealed::MonitorRef<'_> {
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
