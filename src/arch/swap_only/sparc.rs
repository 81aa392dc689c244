//! The swap on SPARC V8: `swap [address], %rd`.
//!
//! SPARC V8 has `swap` and `ldstub` but no `cas` (added in V9). `swap`
//! exchanges a register with a 32-bit word atomically (The SPARC
//! Architecture Manual, Version 8, instruction SWAP). Under the Total Store
//! Order model that SPARC systems run, an atomic load-store counts as both a
//! load and a store: it is not reordered with earlier stores or later loads,
//! which gives the acquire and release ordering the meta-lock needs (Manual,
//! chapter "Memory Model"). Pointers and `usize` are 32 bits wide here.
//!
//! Compiled only for `target_arch = "sparc"`, which is not installed on the
//! development machine: this file is reviewed, not built, there; SPARC asm
//! also needs a nightly compiler (`asm_experimental_arch`).

use core::arch::asm;

/// Atomically writes `value` to `*ptr` and returns the previous value.
///
/// # Safety
/// `ptr` is valid, 4-aligned, and accessed only atomically by others.
#[inline(always)]
pub(super) unsafe fn swap_usize(ptr: *mut usize, value: usize) -> usize {
    // SAFETY: `usize` is `u32` on SPARC V8; the caller guarantees `ptr`.
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
            // {exchanged} <-> [ptr], atomically.
            "swap [{ptr}], {exchanged}",
            ptr = in(reg) ptr,
            exchanged = inout(reg) exchanged,
            // No `nomem`: the swap orders memory (see the module docs).
            // `swap` leaves the condition codes alone.
            options(nostack, preserves_flags),
        );
    }
    exchanged
}
