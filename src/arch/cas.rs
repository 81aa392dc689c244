//! Backend for targets with a pointer-width compare-and-swap: the `core`
//! atomics, or loom's under `--cfg loom`.

use crate::primitive::{AtomicUsize, Ordering};

/// The atomic cell behind a `MultiUseWord`.
///
/// Invariant: it is exactly one `usize` wide, so that the word embedded in a
/// user's type costs one machine word.
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

    #[inline(always)]
    pub(crate) fn store(&self, bits: usize, order: Ordering) {
        self.0.store(bits, order)
    }

    #[inline(always)]
    pub(crate) fn swap(&self, bits: usize, order: Ordering) -> usize {
        self.0.swap(bits, order)
    }

    #[inline(always)]
    pub(crate) fn compare_exchange(
        &self,
        current: usize,
        new: usize,
        success: Ordering,
        failure: Ordering,
    ) -> Result<usize, usize> {
        self.0.compare_exchange(current, new, success, failure)
    }
}

/// An atomic swap on a 32-bit cell.
/// Not under loom, whose models use loom's own primitives instead.
#[cfg(not(metalock_model))]
#[inline(always)]
pub(crate) fn swap_u32(cell: &core::sync::atomic::AtomicU32, value: u32, order: Ordering) -> u32 {
    cell.swap(value, order)
}
