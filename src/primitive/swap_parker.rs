//! The crate's parker, built from swaps alone.

use super::futex::{Futex, swap};
use super::{AtomicU32, Ordering};
use crate::sys::Instant;

const EMPTY: u32 = 0;
const NOTIFIED: u32 = 1;
const PARKED: u32 = 2;

/// A one-token parker on a wait-on-address primitive `F`, built from swaps
/// alone so that it also runs where there is no compare-and-swap.
///
/// Invariant: only the thread that owns the execution environment
/// containing this parker calls `park`; any thread may call `unpark`.
/// `park` returns only after a swap that read NOTIFIED (with Acquire, so
/// the unparker's earlier writes are visible), after the deadline, or
/// spuriously with the state reset: a token may be dropped only when its
/// writes are already visible to the caller's re-check.
#[derive(Debug)]
pub struct SwapParker<F> {
    state: AtomicU32,
    futex: F,
}

impl<F> SwapParker<F> {
    const_unless_loom! {
        /// A parker without a token, blocking through `futex`.
        pub fn with_futex(futex: F) -> Self {
            Self {
                state: AtomicU32::new(EMPTY),
                futex,
            }
        }
    }
}

impl<F: Futex> SwapParker<F> {
    /// Blocks until the token is available or `deadline` passes. Returns
    /// `true` only when the deadline passed without a token.
    pub fn park(&self, deadline: Option<Instant>) -> bool {
        loop {
            // Acquire (here and below) pairs with the Release swap in
            // `unpark`. After a NOTIFIED here the reset's Acquire would do
            // alone (it reads this swap's PARKED, which continues the
            // unparker's release sequence; loom passes every model with
            // this one Relaxed), but each swap that can take a token orders
            // by itself, so that neither leans on the other.
            if swap(&self.state, PARKED, Ordering::Acquire) == NOTIFIED {
                // Reset; a second token that raced in is absorbed with its
                // writes visible (Acquire), see the invariant.
                swap(&self.state, EMPTY, Ordering::Acquire);
                return false;
            }
            self.futex.wait(&self.state, PARKED, deadline);
            if swap(&self.state, EMPTY, Ordering::Acquire) == NOTIFIED {
                return false;
            }
            if deadline.is_some_and(|deadline| self.futex.passed(deadline)) {
                return true;
            }
        }
    }

    /// Makes the token available, waking the owner if it is parked.
    #[inline]
    pub fn unpark(&self) {
        self.unpark_then(|| {});
    }

    /// As `unpark`, running `after_swap` once the token is in the state and
    /// before the owner is woken (the model parker mirrors the state there).
    #[inline]
    pub(crate) fn unpark_then(&self, after_swap: impl FnOnce()) {
        // Release pairs with the Acquire swaps in `park`.
        let was = swap(&self.state, NOTIFIED, Ordering::Release);
        after_swap();
        if was == PARKED {
            // One thread at most blocks here (the invariant), so waking one
            // is enough, and it ends the kernel's scan of the address's
            // hash bucket at that thread, where waking all scans the whole
            // bucket for more: with 3,000 threads asleep in one process,
            // the scan had 25% of the CPU samples of a `notify_all` herd
            // (`examples/long_queues.rs`'), 14% waking one.
            self.futex.wake_one(&self.state);
        }
    }
}
