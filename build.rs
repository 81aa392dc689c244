//! Picks the `src/arch` backend.
//!
//! - `cfg(metalock_swap_only)`: the target has no pointer-width
//!   compare-and-swap, or the `swap-only` feature asks for that backend on a
//!   target that has one.
//! - `cfg(metalock_asm_swap)`: the swap-only backend has an inline-assembly
//!   swap for this architecture.
//! - `cfg(metalock_model)`: a model checker's build, `--cfg loom` or the
//!   `shuttle` feature: the primitives are the checker's (`src/primitive.rs`
//!   picks which), and whatever must not outlive one model execution does
//!   not.
//! - `cfg(metalock_futex)`: `StdPlatform` blocks on the futex system call
//!   (64-bit Linux), else on `parking_lot_core`; `--cfg
//!   metalock_portable_parker` picks the latter on Linux too, so that the
//!   other targets' path runs in CI (Cargo.toml picks the dependency by
//!   the same rule).

use std::env;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(metalock_swap_only)");
    println!("cargo::rustc-check-cfg=cfg(metalock_asm_swap)");
    println!("cargo::rustc-check-cfg=cfg(metalock_model)");
    println!("cargo::rustc-check-cfg=cfg(metalock_futex)");
    println!("cargo::rustc-check-cfg=cfg(metalock_portable_parker)");
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
    let forced = env::var_os("CARGO_FEATURE_SWAP_ONLY").is_some();
    if forced || !has_ptr_cas {
        println!("cargo::rustc-cfg=metalock_swap_only");
    }

    let arch = list("CARGO_CFG_TARGET_ARCH");
    let features = list("CARGO_CFG_TARGET_FEATURE");
    let has = |f: &str| features.split(',').any(|x| x == f);
    let asm_swap = match arch.as_str() {
        "x86" | "x86_64" => true,
        // SPARC V8 (`sparc`, not `sparc64`): `swap` exists, `cas` does not.
        "sparc" => true,
        // ARMv5 and earlier, in ARM state: `swp` exists, `ldrex`/`strex` do
        // not (ARMv6 deprecates `swp`).
        "arm" => !has("v6") && !has("thumb-mode"),
        _ => false,
    };
    if asm_swap {
        println!("cargo::rustc-cfg=metalock_asm_swap");
    }
}
