//! The crate's internal lock, built from swaps alone.

use super::futex::{Futex, swap};
use super::{AtomicU32, Ordering};

const UNLOCKED: u32 = 0;
const LOCKED: u32 = 1;
/// Locked, and a thread may be blocked waiting for it.
const CONTENDED: u32 = 2;

/// A lock around `T` built from swaps alone (every backend has a swap), on
/// which a thread that finds it taken blocks through `F` (the platform's
/// wait-on-address) instead of spinning: on a priority-scheduled
/// uniprocessor a spinning waiter would never let a preempted holder run.
///
/// A thread that takes it with a swap that read CONTENDED keeps the state at
/// CONTENDED, so a blocked thread is always woken by some release: whoever
/// overwrites CONTENDED with LOCKED swaps CONTENDED back before it can hold
/// the lock (Drepper's mutex, "Futexes Are Tricky", on swaps).
///
/// Invariant: `data` is accessed only by the thread whose swap moved the
/// state away from UNLOCKED, until its releasing swap.
#[derive(Debug)]
pub struct SwapMutex<T, F> {
    state: AtomicU32,
    futex: F,
    data: core::cell::UnsafeCell<T>,
}

// SAFETY: the lock hands `data` to one thread at a time (invariant), so
// sharing the mutex shares `T` only as moving it would; `F` is shared as is.
unsafe impl<T: Send, F: Sync> Sync for SwapMutex<T, F> {}

impl<T, F> SwapMutex<T, F> {
    const_unless_loom! {
        /// An unlocked mutex around `data`, blocking through `futex`.
        pub fn with_futex(data: T, futex: F) -> Self {
            Self {
                state: AtomicU32::new(UNLOCKED),
                futex,
                data: core::cell::UnsafeCell::new(data),
            }
        }
    }
}

impl<T, F: Futex> SwapMutex<T, F> {
    /// Runs `f` with the lock held, and releases it on every way out: the
    /// crate raises its panics after `f` returns (the panic hook is user
    /// code), but an unwind out of `f` must still not leave every later
    /// user of the lock blocked.
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        /// Releases the lock when dropped.
        struct Unlock<'a, T, F: Futex>(&'a SwapMutex<T, F>);

        impl<T, F: Futex> Drop for Unlock<'_, T, F> {
            fn drop(&mut self) {
                self.0.unlock();
            }
        }

        // Acquire (here and in `lock_contended`) pairs with the Release
        // swap of the previous holder's `unlock`.
        if swap(&self.state, LOCKED, Ordering::Acquire) != UNLOCKED {
            self.lock_contended();
        }
        let _unlock = Unlock(self);
        #[cfg(all(feature = "__test-hooks", feature = "std", not(metalock_model)))]
        let _held = super::held::Held::new();
        // SAFETY: we hold the lock (invariant) until `_unlock` drops.
        f(unsafe { &mut *self.data.get() })
    }

    #[cold]
    fn lock_contended(&self) {
        while swap(&self.state, CONTENDED, Ordering::Acquire) != UNLOCKED {
            self.futex.wait(&self.state, CONTENDED, None);
        }
    }

    fn unlock(&self) {
        // Release pairs with the Acquire swap of the next holder.
        // One waiter: it swaps CONTENDED back in, so that its own unlock
        // wakes the next (waking all would only make them contend again,
        // and a portable parker gathers more than 8 on the heap).
        if swap(&self.state, UNLOCKED, Ordering::Release) == CONTENDED {
            self.futex.wake_one(&self.state);
        }
    }
}
