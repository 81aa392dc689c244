//! Picks the `src/arch` backend.
//!
//! - `cfg(metalock_swap_only)`: the target has no pointer-width
//!   compare-and-swap, or the `swap-only` feature asks for that backend on a
//!   target that has one.
//! - `cfg(metalock_asm_swap)`: the swap-only backend runs and has an
//!   inline-assembly swap for this target. Without it, the swap-only backend
//!   uses `core`'s swap (a target with a compare-and-swap); a target with
//!   neither stops the build with a message.
//! - `cfg(metalock_model)`: a model checker's build, `--cfg loom` or the
//!   `shuttle` feature: the primitives are the checker's (`src/primitive.rs`
//!   picks which), and whatever must not outlive one model execution does
//!   not.
//! - `cfg(metalock_futex)`: `StdPlatform` blocks on the futex system call
//!   (64-bit Linux), else on `parking_lot_core`; `--cfg
//!   metalock_portable_parker` picks the latter on Linux too, so that the
//!   other targets' path runs in CI (Cargo.toml picks the dependency by
//!   the same rule).
//! - `cfg(metalock_model_swap_parker)`, given by hand with `--cfg loom` and
//!   the test hooks: the models park on the parker that ships
//!   (`SwapParker`, on an emulated futex) instead of the checker's
//!   condition variable.

use std::env;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(metalock_swap_only)");
    println!("cargo::rustc-check-cfg=cfg(metalock_asm_swap)");
    println!("cargo::rustc-check-cfg=cfg(metalock_model)");
    println!("cargo::rustc-check-cfg=cfg(metalock_futex)");
    println!("cargo::rustc-check-cfg=cfg(metalock_portable_parker)");
    println!("cargo::rustc-check-cfg=cfg(metalock_model_swap_parker)");
    println!("cargo::rerun-if-changed=build.rs");

    let loom = env::var_os("CARGO_CFG_LOOM").is_some();
    if loom || env::var_os("CARGO_FEATURE_SHUTTLE").is_some() {
        println!("cargo::rustc-cfg=metalock_model");
    }

    let list = |name: &str| env::var(name).unwrap_or_default();
    let portable = env::var_os("CARGO_CFG_METALOCK_PORTABLE_PARKER").is_some();
    if list("CARGO_CFG_TARGET_OS") == "linux"
        && list("CARGO_CFG_TARGET_POINTER_WIDTH") == "64"
        && !portable
    {
        println!("cargo::rustc-cfg=metalock_futex");
    }
    let has_ptr_cas = list("CARGO_CFG_TARGET_HAS_ATOMIC")
        .split(',')
        .any(|w| w == "ptr");
    let swap_only = env::var_os("CARGO_FEATURE_SWAP_ONLY").is_some() || !has_ptr_cas;
    if swap_only {
        println!("cargo::rustc-cfg=metalock_swap_only");
    }

    // The assembly swap, only where its instruction is right on every CPU
    // the target covers (x86 always). Any other target with a
    // compare-and-swap that the feature sends to the swap-only backend
    // takes `core`'s swap instead, which the compiler lowers with the
    // barriers the target needs. (The ARM target features `v6`, `v7` and
    // `thumb-mode` are unstable: a stable compiler leaves them out of
    // `CARGO_CFG_TARGET_FEATURE`, but the targets in question are tier 3
    // or custom specs, built with a nightly compiler, which lists them.)
    let arch = list("CARGO_CFG_TARGET_ARCH");
    let target = list("TARGET");
    let asm_swap = match arch.as_str() {
        // `xchg`: locked and a full barrier on every x86. Not on x32
        // (`x86_64` with 32-bit pointers), where the assembly's 64-bit
        // register operands would exchange 8 bytes of a 4-byte word.
        "x86" => true,
        "x86_64" => list("CARGO_CFG_TARGET_POINTER_WIDTH") == "64",
        // SPARC V8 (`sparc`, not `sparc64`): `swap` exists, `cas` does not.
        // V7 has no `swap` either, and no cfg tells it from V8: the docs
        // require V8.
        "sparc" => !has_ptr_cas,
        // ARMv5 and earlier, in ARM state: `swp` exists, `ldrex`/`strex` do
        // not (ARMv6 deprecates `swp`, ARMv7 kernels trap it, Thumb has none).
        "arm" => {
            let features = list("CARGO_CFG_TARGET_FEATURE");
            let later = features
                .split(',')
                .any(|f| matches!(f, "thumb-mode" | "v6" | "v6k" | "v7" | "v8"));
            !has_ptr_cas && !target.starts_with("thumb") && !later
        }
        _ => false,
    };
    if swap_only && asm_swap {
        println!("cargo::rustc-cfg=metalock_asm_swap");
    }
    // Such targets are tier 3, built with a nightly compiler, which shows
    // this (unstable) list to build scripts: without it the build would stop
    // on the first missing `AtomicUsize` instead of on the cause.
    let has_ptr_load_store = list("CARGO_CFG_TARGET_HAS_ATOMIC_LOAD_STORE")
        .split(',')
        .any(|w| w == "ptr");
    if !has_ptr_cas && asm_swap && !has_ptr_load_store {
        panic!(
            "metalock: the target {target} has no atomic types at all (max-atomic-width 0), and \
             the swap-only backend needs pointer-width atomic loads and stores besides its \
             assembly swap: build for a target spec that has them without a compare-and-swap \
             (\"max-atomic-width\": 32, \"atomic-cas\": false), as in metalock's tests/targets/"
        );
    }
    if !has_ptr_cas && !asm_swap {
        panic!(
            "metalock: the target {target} has no pointer-width compare-and-swap, and metalock \
             has no assembly swap for it (only for x86, SPARC V8 and later, and ARMv5 or earlier \
             in ARM state): the swap-only backend needs an atomic swap"
        );
    }
}
