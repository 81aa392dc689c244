//! The swap on x86 and x86_64: `xchg` with a memory operand.
//!
//! `xchg reg, [mem]` is atomic without a `lock` prefix (the processor
//! asserts the lock itself) and is a full barrier: no load or store moves
//! across it, so it is sequentially consistent (Intel SDM, volume 3A,
//! "Locked Atomic Operations" and "Memory Ordering"). It leaves the flags
//! alone.

use core::arch::asm;

// `swap_usize` names whole registers, 64 bits on x86_64: `build.rs` keeps
// x32 (32-bit pointers) off the assembly.
#[cfg(target_arch = "x86_64")]
const _: () = assert!(
    usize::BITS == 64,
    "x86_64 assembly swap on a 32-bit-pointer target"
);

/// Atomically writes `value` to `*ptr` and returns the previous value.
///
/// # Safety
/// `ptr` is valid, aligned, and accessed only atomically by others.
#[inline(always)]
pub(super) unsafe fn swap_usize(ptr: *mut usize, value: usize) -> usize {
    let previous: usize;
    // SAFETY: the caller guarantees `ptr`.
    unsafe {
        asm!(
            // previous = *ptr; *ptr = value; atomically, full barrier.
            "xchg {value}, [{ptr}]",
            ptr = in(reg) ptr,
            value = inout(reg) value => previous,
            // No `nomem`/`readonly`: the instruction orders memory, so the
            // compiler must not move memory accesses across it either.
            options(nostack, preserves_flags),
        );
    }
    previous
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
            // The 32-bit form: `{value:e}` names the register's low half.
            "xchg {value:e}, dword ptr [{ptr}]",
            ptr = in(reg) ptr,
            value = inout(reg) value => previous,
            // As in `swap_usize`.
            options(nostack, preserves_flags),
        );
    }
    previous
}
