//! What a caught panic says.

// Each test file that includes this module uses part of it.
#![allow(dead_code)]

use std::any::Any;
use std::fmt::Debug;
use std::thread;

/// The message of a panic payload (a `String` or a `&str`), or "" for any
/// other payload.
pub fn message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or_default()
}

/// Asserts that `result` (of `catch_unwind` or a join) is a panic whose
/// message contains `expected`.
#[track_caller]
pub fn assert_panicked_with<T: Debug>(result: thread::Result<T>, expected: &str) {
    let payload = result.expect_err(expected);
    let message = message(&*payload);
    assert!(message.contains(expected), "unexpected panic: {message}");
}
