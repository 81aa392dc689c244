//! A thread's interrupt flag (paper 000, section 2.1: the third way a wait
//! ends, besides a notification and a timeout; Java's `Thread.interrupt`).
//!
//! The flag lives apart from the execution environment, in an allocation
//! that handles share: an EE goes to another thread when its own exits, and
//! an interrupt sent after that must not reach the new thread.

use alloc::sync::Arc;

use super::ExecEnv;
use crate::primitive::{AtomicUsize, Ordering, SysMutex};

/// One thread's interrupt flag, and where to wake it while it waits
/// interruptibly.
///
/// Invariant: `pending` mirrors `state.pending`, and is stored to only under
/// the lock, so that a waiter can poll it with a load; `state.sleeper` is
/// the EE of the owning thread while it parks in an interruptible wait, and
/// `None` otherwise (it is registered after the wait's spin, which polls
/// `pending` instead).
#[derive(Debug)]
pub(crate) struct Interrupt {
    state: SysMutex<State>,
    pending: AtomicUsize,
}

#[derive(Debug)]
struct State {
    pending: bool,
    sleeper: Option<&'static ExecEnv>,
}

crate::primitive::thread_local! {
    static CURRENT: Arc<Interrupt> = Arc::new(Interrupt::new());
}

impl Interrupt {
    fn new() -> Self {
        Self {
            state: SysMutex::new(State {
                pending: false,
                sleeper: None,
            }),
            pending: AtomicUsize::new(0),
        }
    }

    /// The calling thread's flag; a fresh one nobody else sees once the
    /// thread's thread-locals are being destroyed (a lock or wait in a late
    /// destructor).
    pub(crate) fn current() -> Arc<Self> {
        CURRENT
            .try_with(Arc::clone)
            .unwrap_or_else(|_| Arc::new(Self::new()))
    }

    /// The calling thread's flag; `None` once the thread's thread-locals
    /// are being destroyed, when no handle can reach the thread any more.
    /// (Returned rather than passed to a closure, so that a `#[track_caller]`
    /// wait reports its caller's location through it.)
    pub(crate) fn current_if_alive() -> Option<Arc<Self>> {
        CURRENT.try_with(Arc::clone).ok()
    }

    /// Clears the calling thread's flag; whether it was set (`false` once
    /// the thread's thread-locals are being destroyed). Takes no reference
    /// to the flag, so a lock's fast path pays no reference count.
    pub(crate) fn take_current() -> bool {
        CURRENT
            .try_with(|interrupt| interrupt.take())
            .unwrap_or(false)
    }

    /// Sets the flag and wakes the thread if it sleeps interruptibly.
    pub(crate) fn interrupt(&self) {
        self.state.with(|state| {
            state.pending = true;
            // Release pairs with the Acquire load of `is_pending`.
            self.pending.store(1, Ordering::Release);
            if let Some(ee) = state.sleeper {
                ee.parker.unpark();
            }
        });
    }

    /// Whether the flag is set (a snapshot).
    #[inline]
    pub(crate) fn is_pending(&self) -> bool {
        // Acquire pairs with the Release store of `interrupt`.
        self.pending.load(Ordering::Acquire) != 0
    }

    /// Clears the flag; whether it was set.
    pub(crate) fn take(&self) -> bool {
        if !self.is_pending() {
            return false;
        }
        self.state.with(|state| {
            // Relaxed: under the lock, which orders it.
            self.pending.store(0, Ordering::Relaxed);
            core::mem::replace(&mut state.pending, false)
        })
    }

    /// Registers `ee`, the owning thread's, as asleep until the returned
    /// registration drops; an `interrupt` from then on unparks it. Whether
    /// the flag is set already: an interrupt before the registration is seen
    /// here, one after it unparks the sleeper.
    pub(crate) fn sleep_as(&self, ee: &'static ExecEnv) -> (Sleeping<'_>, bool) {
        let pending = self.state.with(|state| {
            state.sleeper = Some(ee);
            state.pending
        });
        (Sleeping(self), pending)
    }
}

/// An interruptible sleep in progress; dropping it ends the registration.
#[derive(Debug)]
pub(crate) struct Sleeping<'a>(&'a Interrupt);

impl Drop for Sleeping<'_> {
    fn drop(&mut self) {
        self.0.state.with(|state| state.sleeper = None);
    }
}
