//! What a caught panic says.

// Each test file that includes this module uses part of it.
#![allow(dead_code)]

use std::any::Any;

/// The message of a panic payload (a `String` or a `&str`), or "" for any
/// other payload.
pub fn message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or_default()
}
