//! A misuse panics at the user's line, not inside the crate: the public
//! functions that can panic are `#[track_caller]` down to the check. One
//! test in this binary: it swaps the process's panic hook.

use metalock::{MultiUseWord, Synchronized};
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

/// The file and line `f` panicked at.
fn panic_location(f: impl FnOnce()) -> (String, u32) {
    let seen = Arc::new(Mutex::new(None));
    let hook_seen = Arc::clone(&seen);
    let previous = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        let location = info.location().unwrap();
        *hook_seen.lock().unwrap() = Some((location.file().to_string(), location.line()));
    }));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    panic::set_hook(previous);
    assert!(result.is_err(), "it panicked");
    seen.lock().unwrap().take().unwrap()
}

#[test]
fn misuse_panics_point_at_the_callers_line() {
    let value = Synchronized::new(0);
    let _held = value.lock();
    let (file, line) = panic_location(|| {
        let _again = value.lock();
    });
    assert_eq!((file.as_str(), line), (file!(), line!() - 2));

    let (file, line) = panic_location(|| {
        let _ = MultiUseWord::with_payload(usize::MAX);
    });
    assert_eq!((file.as_str(), line), (file!(), line!() - 2));

    let word = MultiUseWord::new();
    let (file, line) = panic_location(|| word.set_payload(usize::MAX));
    assert_eq!((file.as_str(), line), (file!(), line!() - 1));

    let arc = Arc::new(Synchronized::new(()));
    let _held = arc.lock_arc();
    let (file, _) = panic_location(|| {
        let _again = arc.lock_arc();
    });
    assert_eq!(file, file!());
}
