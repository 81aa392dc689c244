//! Releasing a held monitor while a closure runs: [`MonitorGuard`]'s
//! `unlocked`, `unlocked_fair` and `bump` (parking_lot's names), and the
//! release-and-enter-again that `Synchronized`'s guards share with them.

use crate::exec_env::ExecEnv;
use crate::sys;

use super::MonitorGuard;
#[cfg(all(feature = "diagnostics", not(metalock_model)))]
use super::note_held;

impl MonitorGuard<'_> {
    /// Releases the monitor while `f` runs, and enters it again before
    /// returning, also if `f` panics (parking_lot's
    /// `ReentrantMutexGuard::unlocked`). An associated function, called as
    /// `MonitorGuard::unlocked(&mut guard, f)`, as on the other guards.
    ///
    /// A guard of it that `f` leaves alive (returned, stored elsewhere or
    /// forgotten) keeps its level: the guard enters again on top of it,
    /// reentrantly.
    ///
    /// # Panics
    /// If the thread holds the monitor at a depth other than 1: its outer
    /// guards would go on as if they held a monitor released under them
    /// (parking_lot's reentrant guard would release nothing). Panics before
    /// it releases anything.
    ///
    /// ```
    /// use metalock::{MonitorGuard, MultiUseWord};
    ///
    /// let word = MultiUseWord::new();
    /// let mut guard = word.lock();
    /// let other = MonitorGuard::unlocked(&mut guard, || {
    ///     std::thread::scope(|s| s.spawn(|| word.try_lock().is_some()).join().unwrap())
    /// });
    /// assert!(other, "the monitor was free while the closure ran");
    /// assert_eq!(guard.depth(), 1);
    /// ```
    #[track_caller]
    pub fn unlocked<U>(guard: &mut Self, f: impl FnOnce() -> U) -> U {
        check_depth_one(guard.depth(), "MonitorGuard::unlocked");
        guard.release_while::<true, U>(false, f)
    }

    /// As [`unlocked`](Self::unlocked), handing the monitor to the first
    /// thread of its entry queue when it releases it (see
    /// [`unlock_fair`](Self::unlock_fair)).
    ///
    /// ```
    /// use metalock::{MonitorGuard, MultiUseWord};
    ///
    /// let word = MultiUseWord::new();
    /// let mut guard = word.lock();
    /// MonitorGuard::unlocked_fair(&mut guard, || assert!(!word.is_locked()));
    /// assert!(word.is_held_by_current_thread());
    /// ```
    #[track_caller]
    pub fn unlocked_fair<U>(guard: &mut Self, f: impl FnOnce() -> U) -> U {
        check_depth_one(guard.depth(), "MonitorGuard::unlocked_fair");
        guard.release_while::<true, U>(true, f)
    }

    /// Hands the monitor to the first thread of its entry queue, if any, and
    /// enters it again behind that thread (parking_lot's
    /// `ReentrantMutexGuard::bump`). Does nothing when the thread holds the
    /// monitor more than one level deep (it cannot release it then, as
    /// parking_lot's reentrant guard does not), or when the word shows no
    /// queued thread. That sign is a hint: it can outlast the queue (a
    /// thread that gave up, a notify or a payload change during this hold,
    /// another value's monitor leaving a keyed home for the overflow table)
    /// or come from a thread in the middle of an operation on the word. The
    /// guard then leaves and enters again with nobody to hand to, and a
    /// thread that comes meanwhile may take the monitor first.
    ///
    /// ```
    /// use metalock::{MonitorGuard, MultiUseWord};
    /// use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    ///
    /// let word = MultiUseWord::new();
    /// let ran = AtomicBool::new(false);
    /// let mut guard = word.lock();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         let _turn = word.lock();
    ///         // Relaxed: the monitor orders the flag.
    ///         ran.store(true, Relaxed);
    ///     });
    ///     // Keeps the monitor, but lets the other thread have its turn
    ///     // once it queues.
    ///     while !ran.load(Relaxed) {
    ///         MonitorGuard::bump(&mut guard);
    ///         std::thread::yield_now();
    ///     }
    /// });
    /// ```
    pub fn bump(guard: &mut Self) {
        guard.bump_as::<true>();
    }

    /// Whether `bump` has a thread to let in and may release: threads are
    /// queued, and the guard holds the only level.
    pub(crate) fn should_bump(&self) -> bool {
        self.word.may_have_queued_threads() && self.depth() == 1
    }

    /// `bump` for a guard that enters again as `release_while` does.
    pub(crate) fn bump_as<const REENTRANT: bool>(&mut self) {
        if self.should_bump() {
            self.release_while::<REENTRANT, ()>(true, || ());
        }
    }

    /// Leaves the monitor, runs `f`, and enters it again, also when `f`
    /// unwinds; for guards of depth 1. `fair` hands the monitor to the first
    /// queued thread on leaving.
    ///
    /// If `f` leaves the monitor held by this thread (a guard of it still
    /// alive when `f` ends: returned, stored elsewhere, or forgotten), a
    /// `REENTRANT` guard enters again on top of that level. Any other
    /// (`Synchronized`'s) could only hand out a second `&mut` to the value,
    /// and its record is already released, so that it can neither panic nor
    /// go on: the process aborts with a message.
    pub(crate) fn release_while<const REENTRANT: bool, U>(
        &mut self,
        fair: bool,
        f: impl FnOnce() -> U,
    ) -> U {
        /// Enters again when dropped: after `f`, or while it unwinds.
        struct Reenter<'g, 'a, const REENTRANT: bool>(&'g mut MonitorGuard<'a>);

        impl<const REENTRANT: bool> Drop for Reenter<'_, '_, REENTRANT> {
            fn drop(&mut self) {
                let guard = &mut *self.0;
                let entering = AbortOnUnwind;
                if !REENTRANT && guard.word.is_owned_by_current_thread() {
                    sys::abort_with(UNLOCKED_LEFT_HELD);
                }
                guard.record = guard.word.enter::<REENTRANT>(ExecEnv::current());
                core::mem::forget(entering);
                #[cfg(all(feature = "diagnostics", not(metalock_model)))]
                note_held(guard.word, guard.record, true);
            }
        }

        debug_assert_eq!(self.depth(), 1);
        #[cfg(all(feature = "diagnostics", not(metalock_model)))]
        note_held(self.word, self.record, false);
        // SAFETY: the guard's invariant: its record, on its thread, owns
        // the monitor with this guard's level.
        unsafe {
            if fair {
                self.word.exit::<true>(self.record);
            } else {
                self.word.exit::<false>(self.record);
            }
        }
        // Until it enters again, `self.record` is stale, and only `Reenter`
        // can reach `self`.
        let _reenter = Reenter::<REENTRANT>(self);
        f()
    }
}

/// Panics, naming `what`, unless a guard's monitor is held at `depth` 1.
#[track_caller]
pub(crate) fn check_depth_one(depth: usize, what: &str) {
    if depth != 1 {
        panic!(
            "metalock: {what} needs the monitor held one level deep, not {depth}: the thread's \
             outer guards of it would go on as if they held a monitor released under them"
        );
    }
}

/// Aborts the process if dropped: held while a guard whose record is
/// stale enters again, where any unwind (a recursion count overflowed by
/// guards the closure leaked, a keyed lookup's allocation failing) would
/// leave that guard to release a record it no longer holds.
pub(crate) struct AbortOnUnwind;

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        sys::abort_with(REENTER_UNWOUND);
    }
}

/// What the process prints when the closure of `unlocked` left the monitor
/// held.
const UNLOCKED_LEFT_HELD: &str = "metalock: the closure given to SynchronizedGuard::unlocked \
    (or unlocked_fair, or ArcSynchronizedGuard::unlocked or unlocked_fair) left a guard of the \
    same Synchronized alive (returned, stored elsewhere or forgotten), so the monitor is still \
    held when the outer guard must re-enter it; two guards would give two `&mut` to the \
    value, so the process aborts";

/// What the process prints when entering again after `unlocked` panicked.
const REENTER_UNWOUND: &str = "metalock: a guard could not enter its monitor again after \
    unlocked (or bump) released it, and unwinding would release it a second time, so the \
    process aborts";
