//! A misuse panics at the user's line, not inside the crate: the public
//! functions that can panic are `#[track_caller]` down to the check. One
//! test in this binary: it swaps the process's panic hook.

use metalock::{ArcMonitorGuard, Condition, Monitor, MultiUseWord, Synchronized};
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::time::Duration;

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
        let _again = value.lock_interruptibly();
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
    let (file, line) = panic_location(|| {
        let _again = arc.lock_arc_interruptibly();
    });
    assert_eq!((file.as_str(), line), (file!(), line!() - 2));

    // An `Arc` guard of a word, two levels deep, released for a closure.
    let word = Arc::new(MultiUseWord::new());
    let _outer = word.lock_arc();
    let mut inner = word.lock_arc();
    let (file, line) = panic_location(|| ArcMonitorGuard::unlocked(&mut inner, || ()));
    assert_eq!((file.as_str(), line), (file!(), line!() - 1));

    // A condition waited on with a second monitor while a thread waits on
    // it with a first: every wait, interruptible or not, panics at its line.
    let first = Synchronized::new(0_u8); // 1: waiting, 2: done
    let other = Synchronized::new(());
    let condition = Condition::new();
    let (plain, interruptible) = std::thread::scope(|s| {
        s.spawn(|| {
            let mut state = first.lock();
            *state = 1;
            condition.wait_while(&mut state, |state| *state != 2);
        });
        // The waiter set 1 and waited in one hold of the monitor.
        while *first.lock() != 1 {
            std::thread::yield_now();
        }
        let plain = panic_location(|| {
            condition.wait_for(&mut other.lock(), Duration::from_secs(60));
        });
        let plain_line = line!() - 2;
        let interruptible = panic_location(|| {
            let _ = condition.wait_for_interruptibly(&mut other.lock(), Duration::from_secs(60));
        });
        let interruptible_line = line!() - 2;
        // Released before the checks, which would otherwise leave it waiting.
        *first.lock() = 2;
        condition.notify_all();
        ((plain, plain_line), (interruptible, interruptible_line))
    });
    for ((file, line), expected) in [plain, interruptible] {
        assert_eq!((file.as_str(), line), (file!(), expected));
    }
}
