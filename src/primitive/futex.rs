//! How the crate's internal lock (`SwapMutex`) and parker (`SwapParker`)
//! block: on the platform's wait-on-address primitive in a normal build,
//! and under loom on an emulation of it, so that the models in
//! `loom_tests/primitives.rs` check the two algorithms the crate ships.

use super::{AtomicU32, Ordering};
use crate::sys::Instant;

/// A wait-on-address primitive (a futex).
///
/// Invariant of an implementation: `wait` returns only after a wake on the
/// same address, once the deadline passed, spuriously, or at once if the
/// word no longer holds `expected`; and a wake of an address that follows a
/// change of the word reaches a wait there that found `expected`, if there
/// is one (the guarantee of the `Platform` contract).
pub trait Futex {
    /// Blocks while `word` holds `expected`, until a wake of its address or
    /// `deadline`.
    fn wait(&self, word: &AtomicU32, expected: u32, deadline: Option<Instant>);
    /// Wakes one thread blocked in `wait` on `word`, if there is one.
    fn wake_one(&self, word: &AtomicU32);
    /// Whether `deadline` has passed.
    fn passed(&self, deadline: Instant) -> bool;
}

/// The platform's wait-on-address primitive, through its fence.
#[cfg(not(metalock_model))]
#[derive(Debug, Clone, Copy)]
pub(crate) struct PlatformFutex;

#[cfg(not(metalock_model))]
impl Futex for PlatformFutex {
    #[inline]
    fn wait(&self, word: &AtomicU32, expected: u32, deadline: Option<Instant>) {
        crate::sys::get().wait(word, expected, deadline);
    }

    #[inline]
    fn wake_one(&self, word: &AtomicU32) {
        crate::sys::get().wake_one(word);
    }

    #[inline]
    fn passed(&self, deadline: Instant) -> bool {
        crate::sys::get().now() >= deadline
    }
}

/// An atomic swap of a `u32` state word: the backend's (every backend has
/// one), or the model checker's.
#[inline(always)]
pub(super) fn swap(word: &AtomicU32, value: u32, order: Ordering) -> u32 {
    #[cfg(not(metalock_model))]
    {
        crate::arch::swap_u32(word, value, order)
    }
    #[cfg(metalock_model)]
    {
        word.swap(value, order)
    }
}

#[cfg(loom)]
pub use model::ModelFutex;

#[cfg(loom)]
mod model {
    use alloc::sync::Arc;
    use alloc::vec::Vec;
    use core::sync::atomic::AtomicBool;

    use super::{AtomicU32, Futex, Instant, Ordering};
    use loom::sync::{Condvar, Mutex};

    /// A futex emulated with loom's mutex and condition variable, for the
    /// models of the crate's internal lock and parker; no stronger than the
    /// `Platform` contract, so that the models miss nothing a real futex
    /// could do.
    ///
    /// Invariant: `queue` holds, in arrival order, the address and ticket of
    /// every untimed `wait` that found its word at `expected` and has not
    /// been woken; a wake takes the first entry of its address out and
    /// notifies the condition variable, and a waiter returns once its own
    /// ticket is gone. The word is checked again and the entry made under
    /// the lock that every wake takes, so a wake that follows a change of
    /// the word reaches a waiter that saw the old value (the first), as a
    /// kernel futex's does. What the contract allows besides is explored
    /// too: a wait first reads the word with no ordering and may return at
    /// once; a timed wait returns at once (its timeout fires at the worst
    /// moment, as the crate's model parker's does) and the first deadline
    /// asked about has not passed yet, so that a caller loops; and with
    /// `with_spurious_wakeup`, the first untimed wait that would block
    /// returns at once instead.
    #[derive(Debug, Default)]
    pub struct ModelFutex {
        waiters: Mutex<Waiters>,
        woken: Condvar,
        /// A spurious return is still to come (`with_spurious_wakeup`).
        spurious: AtomicBool,
        /// A deadline was asked about once already.
        asked: AtomicBool,
    }

    #[derive(Debug, Default)]
    struct Waiters {
        next_ticket: usize,
        queue: Vec<(usize, usize)>,
    }

    impl ModelFutex {
        /// An emulated futex with nobody waiting.
        pub fn new() -> Self {
            Self::default()
        }

        /// As `new`, with one spurious return from an untimed wait.
        pub fn with_spurious_wakeup() -> Self {
            Self {
                spurious: AtomicBool::new(true),
                ..Self::default()
            }
        }
    }

    // The flags are plain atomics, not loom's: loom runs a model's threads
    // one at a time, and a fresh futex per execution starts them afresh.
    impl Futex for Arc<ModelFutex> {
        fn wait(&self, word: &AtomicU32, expected: u32, deadline: Option<Instant>) {
            // Relaxed: a changed word may be seen with nothing ordered, as a
            // real futex promises no ordering either.
            if deadline.is_some() || word.load(Ordering::Relaxed) != expected {
                return;
            }
            let mut waiters = self.waiters.lock().unwrap();
            // SeqCst, as the kernel's check of the word is fully ordered.
            // Relaxed on the flag: it orders nothing (see the impl's
            // comment), it only spends the one spurious return.
            if word.load(Ordering::SeqCst) != expected
                || self
                    .spurious
                    .swap(false, core::sync::atomic::Ordering::Relaxed)
            {
                return;
            }
            let ticket = waiters.next_ticket;
            waiters.next_ticket += 1;
            waiters
                .queue
                .push((word as *const AtomicU32 as usize, ticket));
            while waiters.queue.iter().any(|&(_, queued)| queued == ticket) {
                waiters = self.woken.wait(waiters).unwrap();
            }
        }

        fn wake_one(&self, word: &AtomicU32) {
            let address = word as *const AtomicU32 as usize;
            let mut waiters = self.waiters.lock().unwrap();
            if let Some(first) = waiters
                .queue
                .iter()
                .position(|&(waiting_on, _)| waiting_on == address)
            {
                waiters.queue.remove(first);
            }
            drop(waiters);
            self.woken.notify_all();
        }

        fn passed(&self, _: Instant) -> bool {
            // Relaxed: a flag that orders nothing (see the impl's comment).
            self.asked.swap(true, core::sync::atomic::Ordering::Relaxed)
        }
    }
}
