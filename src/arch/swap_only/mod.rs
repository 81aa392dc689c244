//! Backend for targets with an atomic swap but no compare-and-swap (paper
//! 000, section 5.4), also forced on any target by the `swap-only` feature.
//!
//! Only `load`, `store` and `swap` exist here, so the meta-lock runs its
//! test-and-set variant and the extra-fast path is off (see `meta_lock` and
//! `monitor`). The swap is one atomic instruction of inline assembly
//! (between two `stbar`s on SPARC) on the targets that lack CAS, and on x86
//! so that the backend runs on ordinary hosts; on a target with CAS that
//! the feature sends here, and under loom or Miri, which cannot see into
//! assembly, it is the `core` (or loom) swap. `build.rs` decides, and stops
//! a target that has neither. Loads and stores are `core`'s: on ARMv5 and
//! SPARC V8, LLVM calls `__atomic_load_4` / `__atomic_store_4` for them,
//! which the program's runtime provides (the README, "Portability: backends
//! and platforms").

use crate::primitive::{AtomicUsize, Ordering};

#[cfg(all(
    metalock_asm_swap,
    not(any(metalock_model, miri)),
    any(target_arch = "x86", target_arch = "x86_64")
))]
#[path = "x86.rs"]
mod imp;

#[cfg(all(
    metalock_asm_swap,
    not(any(metalock_model, miri)),
    target_arch = "sparc"
))]
#[path = "sparc.rs"]
mod imp;

#[cfg(all(metalock_asm_swap, not(any(metalock_model, miri)), target_arch = "arm"))]
#[path = "arm.rs"]
mod imp;

/// The atomic cell behind a `MultiUseWord`.
///
/// Invariant: exactly one `usize` wide; it is only ever loaded, stored and
/// swapped, never compared-and-swapped.
#[derive(Debug)]
#[repr(transparent)]
pub(crate) struct Word(AtomicUsize);

impl Word {
    #[cfg(not(metalock_model))]
    #[inline]
    pub(crate) const fn new(bits: usize) -> Self {
        Self(AtomicUsize::new(bits))
    }

    #[cfg(metalock_model)]
    pub(crate) fn new(bits: usize) -> Self {
        Self(AtomicUsize::new(bits))
    }

    #[inline(always)]
    pub(crate) fn load(&self, order: Ordering) -> usize {
        self.0.load(order)
    }

    /// Stores `bits`. Under loom, a swap: loom orders a plain store only
    /// partially against other threads' swaps (a vector clock), so a swap
    /// that happens after the store may still read an older value, which
    /// real hardware's single modification order rules out; a swap keeps the
    /// release in the chain of read-modify-writes.
    #[inline(always)]
    pub(crate) fn store(&self, bits: usize, order: Ordering) {
        #[cfg(metalock_model)]
        self.0.swap(bits, order);
        #[cfg(not(metalock_model))]
        self.0.store(bits, order)
    }

    /// Swaps in `bits`. The assembly versions are sequentially consistent,
    /// which covers every `order`.
    #[inline(always)]
    pub(crate) fn swap(&self, bits: usize, order: Ordering) -> usize {
        #[cfg(all(metalock_asm_swap, not(any(metalock_model, miri))))]
        {
            let _ = order;
            // SAFETY: the pointer comes from a live atomic, is aligned, and
            // is only accessed atomically (load, store, or this swap).
            unsafe { imp::swap_usize(self.0.as_ptr(), bits) }
        }
        #[cfg(not(all(metalock_asm_swap, not(any(metalock_model, miri)))))]
        {
            self.0.swap(bits, order)
        }
    }
}

/// An atomic swap on a 32-bit cell; sequentially consistent in assembly.
/// Not under loom, whose models use loom's own primitives instead.
#[cfg(not(metalock_model))]
#[inline(always)]
pub(crate) fn swap_u32(cell: &core::sync::atomic::AtomicU32, value: u32, order: Ordering) -> u32 {
    #[cfg(all(metalock_asm_swap, not(any(metalock_model, miri))))]
    {
        let _ = order;
        // SAFETY: as in `Word::swap`.
        unsafe { imp::swap_u32(cell.as_ptr(), value) }
    }
    #[cfg(not(all(metalock_asm_swap, not(any(metalock_model, miri)))))]
    {
        cell.swap(value, order)
    }
}
