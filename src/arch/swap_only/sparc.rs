//! The swap on SPARC V8: `swap [address], %rd`.
//!
//! SPARC V8 has `swap` and `ldstub` but no `cas` (added in V9); V7 has only
//! `ldstub`, so a V7 CPU traps on this file's instruction, and the crate
//! needs V8 or later there. `swap` exchanges a register with a 32-bit word
//! atomically (The SPARC Architecture Manual, Version 8, instruction SWAP).
//! Under Total Store Order an atomic load-store is not reordered with
//! earlier stores or later loads and stores. Partial Store Order lets stores
//! pass stores, also the store half of a load-store, so the swap sits
//! between two `stbar`s: earlier stores are seen before it (release), and
//! later stores after it (acquire; loads stay in order under both models).
//! Under TSO a `stbar` orders nothing new. Pointers and `usize` are 32 bits
//! wide here.
//!
//! Built for a target spec with 32-bit atomics and no compare-and-swap
//! (`tests/targets/sparc-swap-only.json`; SPARC assembly needs a nightly
//! compiler, `asm_experimental_arch`); not run: there is no such CPU on the
//! development machine.

use core::arch::asm;

// `swap_usize` narrows to 32 bits.
const _: () = assert!(usize::BITS == 32);

/// Atomically writes `value` to `*ptr` and returns the previous value.
///
/// # Safety
/// `ptr` is valid, 4-aligned, and accessed only atomically by others.
#[inline(always)]
pub(super) unsafe fn swap_usize(ptr: *mut usize, value: usize) -> usize {
    // SAFETY: `usize` is `u32` here (asserted above); the caller guarantees
    // `ptr`.
    unsafe { swap_u32(ptr.cast::<u32>(), value as u32) as usize }
}

/// Atomically writes `value` to `*ptr` and returns the previous value.
///
/// # Safety
/// As for [`swap_usize`].
#[inline(always)]
pub(super) unsafe fn swap_u32(ptr: *mut u32, value: u32) -> u32 {
    let mut exchanged = value;
    // SAFETY: the caller guarantees `ptr`.
    unsafe {
        asm!(
            // {exchanged} <-> [ptr], atomically, between store barriers.
            "stbar",
            "swap [{ptr}], {exchanged}",
            "stbar",
            ptr = in(reg) ptr,
            exchanged = inout(reg) exchanged,
            // No `nomem`: the swap orders memory (see the module docs).
            // Neither instruction touches the condition codes.
            options(nostack, preserves_flags),
        );
    }
    exchanged
}
