//! The seam between the algorithm and the operating system: the
//! [`Platform`] trait, the `std` platform, the registration of a `no_std`
//! one, and [`Fenced`], the only way the crate calls it. Public as
//! `metalock::platform`.

#[cfg(all(test, feature = "std", not(metalock_model)))]
pub(crate) mod panic_hook;
#[cfg(not(feature = "std"))]
mod registry;
#[cfg(feature = "std")]
mod std_platform;

#[cfg(feature = "std")]
pub use std_platform::StdPlatform;
#[cfg(all(feature = "std", not(metalock_futex), not(metalock_model)))]
pub(crate) use std_platform::prepare_thread;

use core::ptr::NonNull;
use core::sync::atomic::{AtomicU32, AtomicUsize};
#[cfg(not(feature = "std"))]
use core::time::Duration;

/// A point on the platform's monotonic clock.
///
/// With `std` this is [`std::time::Instant`].
#[cfg(feature = "std")]
pub use std::time::Instant;

/// A point on the platform's monotonic clock: the time elapsed since an
/// arbitrary, fixed origin chosen by the [`Platform`].
#[cfg(not(feature = "std"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(Duration);

#[cfg(not(feature = "std"))]
impl Instant {
    /// Builds an instant `since_origin` after the platform clock's origin.
    pub const fn from_duration_since_origin(since_origin: Duration) -> Self {
        Self(since_origin)
    }

    /// The current time of the registered platform's clock. (It does not
    /// mark the thread's slot, so a platform callback may call it, as long
    /// as the platform's `now` does not.)
    ///
    /// # Panics
    ///
    /// If no platform has been registered with [`set_platform`].
    pub fn now() -> Self {
        let outside = Fenced {
            marked: false,
            ..get()
        };
        outside.now()
    }

    /// `self + duration`, or `None` if that overflows.
    pub fn checked_add(&self, duration: Duration) -> Option<Self> {
        self.0.checked_add(duration).map(Self)
    }

    /// Time from `earlier` to `self`, zero if `earlier` is later.
    pub fn saturating_duration_since(&self, earlier: Self) -> Duration {
        self.0.saturating_sub(earlier.0)
    }
}

/// Microseconds from a process-wide origin to `at`, wrapping every 71
/// minutes: a point on the clock that fits an `AtomicU32`, for the wait
/// policy's wake-up stamps, which subtract two such points (a park of 71
/// minutes or more may read as a short one: a wrong hint for one wait). An
/// instant before the origin counts as the origin.
#[cfg(not(metalock_model))]
pub(crate) fn micros(at: Instant) -> u32 {
    // With std the origin is a second before the first instant converted
    // (so that one read just before it, on another thread, still converts);
    // without, the platform clock's own.
    #[cfg(feature = "std")]
    let origin = {
        static ORIGIN: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        *ORIGIN.get_or_init(|| {
            at.checked_sub(core::time::Duration::from_secs(1))
                .unwrap_or(at)
        })
    };
    #[cfg(not(feature = "std"))]
    let origin = Instant::from_duration_since_origin(Duration::ZERO);
    // Truncated on purpose: stamps wrap, and only their differences are
    // read.
    at.saturating_duration_since(origin).as_micros() as u32
}

/// What the crate needs from the system it runs on.
///
/// # Safety
///
/// An implementation promises that:
/// - `wait` returns only after `wake` (or `wake_one`) was called on the same
///   address, after `deadline` passed, or spuriously; it never blocks
///   forever once a `wake` on that address has happened after the value
///   changed, nor, if it is the only thread waiting there, once a
///   `wake_one` has, and it returns soon after `deadline` passes (timed
///   locks and waits end there, and the swap-only backend's back-off waits
///   on a word nobody wakes);
/// - `wake_one`, if the platform overrides it, wakes at least one thread
///   blocked in `wait` on that same address if there is one (a thread
///   waiting on another address does not count); the crate's internal locks
///   and its parker, through which every blocked thread of the crate is
///   woken, rely on it;
/// - `now` is monotonic: it never returns an instant earlier than one it
///   returned before, on any thread; and it keeps advancing, without
///   wrapping, for as long as the program runs (a clock that stops or
///   wraps leaves a timed lock or wait blocked past its deadline);
/// - `current_thread_slot` (only used without `std`) returns a pointer to a
///   slot that belongs to the calling thread alone, starts at zero, and stays
///   valid for as long as that thread runs; the thread's exit path calls
///   `release_current_thread` once it no longer synchronizes.
///
/// Beyond safety, two rules. No callback calls a metalock function (locks,
/// waits, notifies, releases a guard, reads a payload; `Instant::now` is
/// the exception, unless the platform's own `now` calls it), directly or
/// through code it calls, such as a global allocator: the crate calls them
/// in the middle of its protocol, while it holds or waits for a meta-lock
/// or a stripe of its wait table, or while its thread is parked or
/// spinning in an enter or a wait with its lock record queued. Without
/// `std`, a callback that locks, waits or notifies stops the process with
/// a message saying so (the crate marks the thread's slot while one of
/// its calls runs); one that only releases a guard it kept, or asks
/// whether its thread holds a monitor, is not caught.
/// And the crate is called from thread context only, not from an interrupt
/// or signal handler: a handler would get the interrupted thread's slot,
/// and enter that thread's monitors as if it were that thread.
///
/// The simplest sound platform never blocks: a `wait` that returns at once
/// is a spurious wake-up, which the contract allows, and since the crate
/// re-checks its condition after every wait, it then spins where it would
/// sleep. Such a platform needs a scheduler that time-slices: on a
/// priority-scheduled uniprocessor a spinning waiter would never let a
/// lower-priority holder run, so there `wait` must block.
/// A `no_std` platform also implements
/// [`current_thread_slot`](Self::current_thread_slot), and is registered with
/// `set_platform` before the first lock.
///
/// ```
/// use metalock::platform::{Instant, Platform};
/// use std::sync::atomic::{AtomicU32, Ordering};
///
/// struct Spin;
///
/// // SAFETY: `wait` never blocks, so it cannot miss a wake; `Instant` is
/// // monotonic.
/// unsafe impl Platform for Spin {
///     fn wait(&self, _: &AtomicU32, _: u32, _: Option<Instant>) {}
///     fn wake(&self, _: &AtomicU32) {}
///     fn yield_now(&self) {
///         std::thread::yield_now();
///     }
///     fn now(&self) -> Instant {
///         Instant::now() // an RTOS reads its tick counter here
///     }
/// }
///
/// let platform: &'static dyn Platform = &Spin; // what `set_platform` takes
/// let flag = AtomicU32::new(0);
/// std::thread::scope(|s| {
///     s.spawn(|| {
///         flag.store(1, Ordering::Release);
///         platform.wake(&flag);
///     });
///     // As the crate does: re-check after every return from `wait`.
///     while flag.load(Ordering::Acquire) == 0 {
///         platform.wait(&flag, 0, None);
///     }
/// });
/// ```
pub unsafe trait Platform: Sync {
    /// Blocks the calling thread while `*word == expected`, until `wake` is
    /// called on `word`, `deadline` passes, or spuriously. Returns at once if
    /// the value is not `expected`.
    ///
    /// Callers re-check what they wait for after every return, and give up
    /// by the clock rather than by what `wait` returned:
    ///
    /// ```
    /// use metalock::platform::{Instant, Platform, StdPlatform};
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::time::Duration;
    ///
    /// /// Whether `word` moved off `old` before `deadline`.
    /// fn changed(p: &impl Platform, word: &AtomicU32, old: u32, deadline: Instant) -> bool {
    ///     loop {
    ///         if word.load(Ordering::Acquire) != old {
    ///             return true;
    ///         }
    ///         if p.now() >= deadline {
    ///             return false;
    ///         }
    ///         p.wait(word, old, Some(deadline)); // may return spuriously
    ///     }
    /// }
    ///
    /// let word = AtomicU32::new(0);
    /// let soon = || StdPlatform.now() + Duration::from_millis(1);
    /// assert!(!changed(&StdPlatform, &word, 0, soon()));
    /// word.store(1, Ordering::Release);
    /// assert!(changed(&StdPlatform, &word, 0, soon()));
    /// ```
    fn wait(&self, word: &AtomicU32, expected: u32, deadline: Option<Instant>);

    /// Wakes every thread blocked in `wait` on `word`. The waker changes the
    /// value first, so that a thread about to block sees it and returns.
    ///
    /// ```
    /// use metalock::platform::{Platform, StdPlatform};
    /// use std::sync::atomic::{AtomicU32, Ordering};
    ///
    /// let flag = AtomicU32::new(0);
    /// std::thread::scope(|s| {
    ///     for _ in 0..2 {
    ///         s.spawn(|| {
    ///             while flag.load(Ordering::Acquire) == 0 {
    ///                 StdPlatform.wait(&flag, 0, None);
    ///             }
    ///         });
    ///     }
    ///     flag.store(1, Ordering::Release);
    ///     StdPlatform.wake(&flag); // both waiters
    /// });
    /// ```
    fn wake(&self, word: &AtomicU32);

    /// Wakes one thread blocked in `wait` on `word`, if any (waking more is
    /// correct, only slower). The crate's internal locks wake their next
    /// holder with it, so that a release wakes one waiter, not all of them
    /// to contend again, and its parker the one thread that blocks on it.
    /// The default calls [`wake`](Self::wake).
    ///
    /// ```
    /// use metalock::platform::{Platform, StdPlatform};
    /// use std::sync::atomic::{AtomicU32, Ordering};
    ///
    /// let tickets = AtomicU32::new(0);
    /// std::thread::scope(|s| {
    ///     for _ in 0..2 {
    ///         s.spawn(|| loop {
    ///             // Acquire pairs with the Release `fetch_add` below; the
    ///             // failed exchange's Relaxed is followed by this load again.
    ///             let left = tickets.load(Ordering::Acquire);
    ///             if left == 0 {
    ///                 StdPlatform.wait(&tickets, 0, None);
    ///             } else if tickets
    ///                 .compare_exchange(left, left - 1, Ordering::AcqRel, Ordering::Relaxed)
    ///                 .is_ok()
    ///             {
    ///                 break;
    ///             }
    ///         });
    ///     }
    ///     for _ in 0..2 {
    ///         tickets.fetch_add(1, Ordering::Release);
    ///         StdPlatform.wake_one(&tickets); // one ticket, one waiter
    ///     }
    /// });
    /// ```
    fn wake_one(&self, word: &AtomicU32) {
        self.wake(word);
    }

    /// Offers the processor to another thread: the crate calls it while it
    /// spins briefly before blocking, so that the thread it waits for can
    /// run even on a single core.
    ///
    /// ```
    /// use metalock::platform::{Platform, StdPlatform};
    /// use std::sync::atomic::{AtomicBool, Ordering};
    ///
    /// let ready = AtomicBool::new(false);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| ready.store(true, Ordering::Release));
    ///     while !ready.load(Ordering::Acquire) {
    ///         StdPlatform.yield_now();
    ///     }
    /// });
    /// ```
    fn yield_now(&self);

    /// The current time of a monotonic clock, from which the crate computes
    /// the deadlines of timed locks and waits.
    ///
    /// ```
    /// use metalock::platform::{Platform, StdPlatform};
    ///
    /// let earlier = StdPlatform.now();
    /// assert!(StdPlatform.now() >= earlier); // never goes back
    /// ```
    fn now(&self) -> Instant;

    /// The calling thread's word of storage for its execution environment
    /// (a field of the RTOS's thread control block, a thread-local).
    ///
    /// Only called when the crate is built without `std`, where there are no
    /// thread-locals of the crate's own, and around every other callback the
    /// protocol makes there (the crate marks the slot while one runs; not
    /// around those of `set_platform` and `Instant::now`). The default
    /// panics.
    ///
    /// A platform with thread-locals of its own can keep the slot in one
    /// without a destructor, which stays valid as long as the thread runs:
    ///
    /// ```
    /// use core::ptr::NonNull;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// fn current_thread_slot() -> NonNull<AtomicUsize> {
    ///     std::thread_local!(static SLOT: AtomicUsize = const { AtomicUsize::new(0) });
    ///     SLOT.with(|slot| NonNull::from(slot))
    /// }
    ///
    /// let slot = current_thread_slot();
    /// assert_eq!(current_thread_slot(), slot); // the same for the thread's life
    /// // SAFETY: the slot is the calling thread's, alive while it runs.
    /// assert_eq!(unsafe { slot.as_ref() }.load(Ordering::Relaxed), 0);
    /// let other = std::thread::spawn(|| current_thread_slot().as_ptr() as usize);
    /// assert_ne!(other.join().unwrap(), slot.as_ptr() as usize);
    /// ```
    fn current_thread_slot(&self) -> NonNull<AtomicUsize> {
        panic!(
            "metalock: this Platform does not implement current_thread_slot, which is \
             required without the `std` feature"
        )
    }
}

/// What the process prints before it aborts when a panic unwinds out of a
/// platform callback, or out of the crate's protocol (see `Fenced`).
const UNWOUND: &str = "metalock: a panic unwound in the middle of the locking protocol (out of \
    a platform callback, or while this thread held a meta-lock or was waking a thread it \
    handed a monitor to); an object's word would stay BUSY or a thread would sleep forever, so \
    the process aborts";

/// What the process stops with when a platform callback uses the crate.
#[cfg(not(feature = "std"))]
pub(crate) const CALLBACK_USED_CRATE: &str = "metalock: a platform callback called a metalock \
    function (locked, waited on or notified a monitor), directly or through code it calls; the \
    crate calls its platform in the middle of its own protocol, where such a call would reuse \
    the thread's queued lock record or its armed wake-up, so no callback may use the crate (see \
    Platform)";

/// Values of a thread's slot (`Platform::current_thread_slot`) below this
/// are marks, not the address of the thread's execution environment: the
/// binding's (`exec_env`) and [`IN_CALLBACK`].
#[cfg(not(feature = "std"))]
pub(crate) const SLOT_MARKS: usize = 16;

/// The slot's value while one of the thread's platform callbacks runs: a
/// callback that uses the crate finds no execution environment, and the
/// bind it turns to stops the process (`CALLBACK_USED_CRATE`).
#[cfg(not(feature = "std"))]
pub(crate) const IN_CALLBACK: usize = SLOT_MARKS - 1;

/// Aborts the process with the `UNWOUND` message: what an unwind in the
/// middle of the protocol does instead of wedging a word or a thread.
#[cold]
#[inline(never)]
pub(crate) fn abort_unwound() -> ! {
    abort_with(UNWOUND)
}

/// Prints `message` and aborts the process: for a misuse that the crate
/// detects but cannot survive soundly, and that must not unwind.
#[cold]
pub(crate) fn abort_with(message: &str) -> ! {
    #[cfg(feature = "std")]
    {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{message}");
        std::process::abort();
    }
    #[cfg(not(feature = "std"))]
    {
        /// A panic cannot unwind out of an `extern "C"` function: the
        /// runtime aborts instead, after the panic handler saw the message.
        extern "C" fn abort_with_message(message: &&str) -> ! {
            panic!("{}", message)
        }
        /// Set by the first abort. The panic handler is user code that may
        /// use the crate again (log through a locked device, say) and meet
        /// the same misuse: `core` counts no panics, so a second abort
        /// would recurse until the stack overflows. It stops there instead,
        /// and spins: it calls no platform callback, which may be the one
        /// whose panic brought the first abort, or may not block where the
        /// panic handler runs (a panic there would recurse again).
        static ABORTING: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);
        // Relaxed: only which call came first matters.
        if crate::arch::swap_u32(&ABORTING, 1, core::sync::atomic::Ordering::Relaxed) != 0 {
            loop {
                core::hint::spin_loop();
            }
        }
        abort_with_message(&message)
    }
}

/// Aborts if dropped: a guard that an unwind drops, and every other path
/// forgets.
pub(crate) struct AbortOnDrop;

impl Drop for AbortOnDrop {
    #[cold]
    fn drop(&mut self) {
        abort_unwound();
    }
}

/// Runs `f`, aborting the process if it unwinds.
#[inline(always)]
fn abort_on_unwind<R>(f: impl FnOnce() -> R) -> R {
    let fence = AbortOnDrop;
    let result = f();
    core::mem::forget(fence);
    result
}

/// The platform as the crate calls it: every callback fenced, so that a
/// panic out of one (a `no_std` user's clock or blocking primitive) aborts
/// the process with a message instead of unwinding through the middle of the
/// protocol, where it would leave a word BUSY or a thread asleep for good;
/// and, without `std`, the calls the protocol makes marked, so that a
/// callback that locks, waits or notifies stops the process with a message
/// instead of running in the middle of its own thread's protocol. The crate
/// reaches its platform through this alone.
#[derive(Clone, Copy)]
pub(crate) struct Fenced {
    platform: &'static dyn Platform,
    /// Whether the calls mark the thread's slot: those of the protocol
    /// (`get`), not those of a registration or of `Instant::now`, which
    /// run outside it and may come before the thread has a slot.
    #[cfg(not(feature = "std"))]
    marked: bool,
}

impl Fenced {
    /// Runs `callback`, aborting if it unwinds. Without `std`, in a marked
    /// call, the calling thread's slot reads `IN_CALLBACK` meanwhile: the
    /// crate calls its platform while the thread is parked or spinning in
    /// an enter or a wait, its lock record queued and its parker armed, and
    /// a lock there would reuse both. (With `std` the platform is the
    /// crate's own, which calls nothing of it.)
    #[inline(always)]
    fn call<R>(self, callback: impl FnOnce(&'static dyn Platform) -> R) -> R {
        #[cfg(not(feature = "std"))]
        if self.marked {
            return abort_on_unwind(|| {
                // SAFETY: the platform's contract: the slot is this
                // thread's, and valid while it runs.
                let slot = unsafe { self.platform.current_thread_slot().as_ref() };
                let _mark = CallbackMark::set(slot);
                callback(self.platform)
            });
        }
        abort_on_unwind(|| callback(self.platform))
    }

    #[cfg(not(metalock_model))]
    #[inline]
    pub(crate) fn wait(self, word: &AtomicU32, expected: u32, deadline: Option<Instant>) {
        self.call(|platform| platform.wait(word, expected, deadline))
    }

    #[cfg(all(not(metalock_model), not(feature = "std")))]
    #[inline]
    pub(crate) fn wake(self, word: &AtomicU32) {
        self.call(|platform| platform.wake(word))
    }

    #[cfg(not(metalock_model))]
    #[inline]
    pub(crate) fn wake_one(self, word: &AtomicU32) {
        self.call(|platform| platform.wake_one(word))
    }

    #[cfg(not(metalock_model))]
    #[inline]
    pub(crate) fn yield_now(self) {
        self.call(|platform| platform.yield_now())
    }

    #[inline]
    pub(crate) fn now(self) -> Instant {
        self.call(|platform| platform.now())
    }

    /// Blocks until `deadline`, in timed waits on a private address that
    /// nobody wakes.
    #[cfg(all(feature = "lock_api", not(metalock_model)))]
    pub(crate) fn sleep_until(self, deadline: Instant) {
        let never_woken = AtomicU32::new(0);
        while self.now() < deadline {
            self.wait(&never_woken, 0, Some(deadline));
        }
    }

    /// The calling thread's slot (only without `std`), for the binding:
    /// called before the protocol starts, or after it ends (a detached EE
    /// given back once its last monitor is released), so its panics unwind
    /// normally. One in the give-back leaves that EE bound to the thread,
    /// out of the pool: a leak, nothing unsound. (A marked call also asks
    /// for the slot, inside its fence.)
    #[cfg(not(feature = "std"))]
    #[inline]
    pub(crate) fn current_thread_slot(self) -> NonNull<AtomicUsize> {
        self.platform.current_thread_slot()
    }
}

/// `IN_CALLBACK` in the thread's slot while it lives; the slot's value
/// before it put back when it drops, also when the callback unwinds, so
/// that the panic handler the abort then calls finds the thread as it was.
/// (With `panic = "abort"` the handler runs at the panic, the mark still
/// set: a handler that locks a monitor then stops on the mark.)
#[cfg(not(feature = "std"))]
struct CallbackMark {
    slot: &'static AtomicUsize,
    saved: usize,
}

#[cfg(not(feature = "std"))]
impl CallbackMark {
    #[inline(always)]
    fn set(slot: &'static AtomicUsize) -> Self {
        use core::sync::atomic::Ordering::Relaxed;
        // Relaxed (here and in `drop`): the slot belongs to this thread
        // alone.
        let saved = slot.load(Relaxed);
        if saved == IN_CALLBACK {
            // A callback made the crate call its platform: a lock or
            // notify that found no EE to bind would have stopped in the
            // bind; this is one that reached the platform first.
            abort_with(CALLBACK_USED_CRATE);
        }
        slot.store(IN_CALLBACK, Relaxed);
        Self { slot, saved }
    }
}

#[cfg(not(feature = "std"))]
impl Drop for CallbackMark {
    #[inline(always)]
    fn drop(&mut self) {
        self.slot
            .store(self.saved, core::sync::atomic::Ordering::Relaxed);
    }
}

/// The platform in use.
#[cfg(feature = "std")]
#[inline]
pub(crate) fn get() -> Fenced {
    Fenced {
        platform: &StdPlatform,
    }
}

#[cfg(not(feature = "std"))]
pub(crate) use registry::get;
#[cfg(not(feature = "std"))]
pub use registry::{PlatformAlreadySet, set_platform};
