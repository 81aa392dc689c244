//! Atomic operations, per kind of target.
//!
//! This is the only module that issues read-modify-write instructions on the
//! multi-use word, and the only one that may contain inline assembly. Each
//! backend exposes the same small interface:
//!
//! - `Word`: the atomic cell behind a `MultiUseWord`, with `load`, `store`,
//!   `swap`, and (CAS backend only) `compare_exchange`;
//! - `swap_u32`: an atomic swap on an `AtomicU32`, for the parker's state and
//!   the crate's few internal test-and-set locks.
//!
//! | backend | selected when | swap | compare-and-swap |
//! |---|---|---|---|
//! | `cas` | the target has pointer-width compare-and-swap (default) | `core`/loom | `core`/loom |
//! | `swap_only` | no pointer-width CAS, or the `swap-only` feature | inline asm: `xchg` (x86, x86_64), `swap` (SPARC V8), `swp` (ARMv5 and earlier); `core`/loom elsewhere and under loom or Miri | none: never used |
//!
//! `build.rs` sets `cfg(metalock_swap_only)` for the second row. Adding a
//! backend means adding a file here and an arm below.

#[cfg(not(metalock_swap_only))]
mod cas;
#[cfg(not(metalock_swap_only))]
pub(crate) use cas::Word;
#[cfg(all(not(metalock_swap_only), not(metalock_model)))]
pub(crate) use cas::swap_u32;

#[cfg(metalock_swap_only)]
mod swap_only;
#[cfg(metalock_swap_only)]
pub(crate) use swap_only::Word;
#[cfg(all(metalock_swap_only, not(metalock_model)))]
pub(crate) use swap_only::swap_u32;
