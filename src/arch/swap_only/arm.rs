//! The swap on ARMv5 and earlier: `swp Rd, Rm, [Rn]`.
//!
//! Before ARMv6 there is no `ldrex`/`strex`, hence no compare-and-swap; `swp`
//! loads `[Rn]` into `Rd` and stores `Rm` there atomically (ARM Architecture
//! Reference Manual, ARMv5 edition, instruction SWP). These cores are
//! uniprocessors without a weak memory model visible to software, and the
//! assembly is a compiler barrier, so the swap is ordered like a sequentially
//! consistent operation. Code built for them and run on an ARMv6 or later
//! multiprocessor loses that (ARMv7 kernels trap `swp` anyway). `Rn` must
//! differ from `Rd` and `Rm`, which may be one register: the value goes in
//! and the previous value comes out in one `inout` register, which the
//! compiler never shares with the pointer's input. `swp` exists in ARM state
//! only; `build.rs` leaves Thumb builds on the `core` swap.
//!
//! Built for a target spec with 32-bit atomics and no compare-and-swap
//! (`tests/targets/armv5te-swap-only.json`, with a nightly compiler); not run:
//! there is no such CPU on the development machine.

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
    let previous: u32;
    // SAFETY: the caller guarantees `ptr`.
    unsafe {
        asm!(
            // previous = [ptr]; [ptr] = value; atomically.
            "swp {exchanged}, {exchanged}, [{ptr}]",
            exchanged = inout(reg) value => previous,
            ptr = in(reg) ptr,
            // No `nomem`: the swap orders memory. `swp` leaves the flags
            // alone.
            options(nostack, preserves_flags),
        );
    }
    previous
}
