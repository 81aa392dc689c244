//! The swap on ARMv5 and earlier: `swp Rd, Rm, [Rn]`.
//!
//! Before ARMv6 there is no `ldrex`/`strex`, hence no compare-and-swap; `swp`
//! loads `[Rn]` into `Rd` and stores `Rm` there atomically (ARM Architecture
//! Reference Manual, ARMv5 edition, instruction SWP). These cores are uniprocessors without
//! a weak memory model visible to software, and the assembly is a compiler
//! barrier, so the swap is ordered like a sequentially consistent operation.
//! `Rd` must differ from `Rn` and `Rm` from `Rn`: `previous` is a plain
//! (early-clobber) output, so the compiler never shares its register with an
//! input. `swp` exists in ARM state only; `build.rs` leaves Thumb builds on
//! the `core` swap.
//!
//! Compiled only for ARMv5 targets, which are not installed on the
//! development machine: this file is reviewed, not built, there.

use core::arch::asm;

/// Atomically writes `value` to `*ptr` and returns the previous value.
///
/// # Safety
/// `ptr` is valid, 4-aligned, and accessed only atomically by others.
#[inline(always)]
pub(super) unsafe fn swap_usize(ptr: *mut usize, value: usize) -> usize {
    // SAFETY: `usize` is `u32` on 32-bit ARM; the caller guarantees `ptr`.
    unsafe { swap_u32(ptr.cast::<u32>(), value as u32) as usize }
}

/// Atomically writes `value` to `*ptr` and returns the previous value.
///
/// # Safety
/// As for [`swap_usize`].
#[inline(always)]
pub(super) unsafe fn swap_u32(ptr: *mut u32, value: u32) -> u32 {
    let previous: u32;
    // SAFETY: the caller guarantees `ptr`.
    unsafe {
        asm!(
            // previous = [ptr]; [ptr] = value; atomically.
            "swp {previous}, {value}, [{ptr}]",
            previous = out(reg) previous,
            value = in(reg) value,
            ptr = in(reg) ptr,
            // No `nomem`: the swap orders memory. `swp` leaves the flags
            // alone.
            options(nostack, preserves_flags),
        );
    }
    previous
}
