//! Atomic access to the multi-use word, per kind of target.
//!
//! This is the only module that issues atomic instructions on the word. Each
//! backend is one file exposing the same `Word` type with `load`, `store`,
//! `swap` and `compare_exchange`; a backend for another kind of target is a
//! new file and one more arm below.
//!
//! | backend | selected when | word operations |
//! |---|---|---|
//! | `cas` | the target has pointer-width compare-and-swap (the default) | `core` (or loom) atomics |

mod cas;

pub(crate) use cas::Word;
