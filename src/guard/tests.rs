//! Unit tests of the guards: the recursion count's overflow, and the
//! caller's line its panic reports.

use super::*;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::thread;

use crate::sys::panic_hook::panic_location;

fn message(payload: Box<dyn core::any::Any + Send>) -> std::string::String {
    match payload.downcast::<std::string::String>() {
        Ok(s) => *s,
        Err(payload) => payload
            .downcast::<&str>()
            .map(|s| (*s).into())
            .unwrap_or_default(),
    }
}

/// The recursion count is checked: one level past `usize::MAX` panics,
/// after the meta-lock is released, and leaves the monitor held at the
/// depth it had, usable by its owner and closed to others.
#[test]
fn recursion_count_overflow_panics_and_keeps_the_monitor() {
    let word = MultiUseWord::new();
    let guard = word.lock();
    // SAFETY: the guard's record is this thread's, and the count is the
    // owner's field.
    unsafe { guard.record.set_count(usize::MAX) };
    for attempt in ["lock", "try_lock"] {
        let result = catch_unwind(AssertUnwindSafe(|| match attempt {
            "lock" => drop(word.lock()),
            _ => drop(word.try_lock()),
        }));
        let text = message(result.expect_err("one level past usize::MAX must panic"));
        assert!(text.contains("levels deep"), "{attempt}: {text}");
        assert_eq!(guard.depth(), usize::MAX);
        assert!(word.is_held_by_current_thread());
    }
    thread::scope(|s| {
        s.spawn(|| assert!(word.try_lock().is_none()));
    });
    // SAFETY: as above.
    unsafe { guard.record.set_count(1) };
    drop(guard);
    assert!(!word.is_locked());
    thread::scope(|s| {
        s.spawn(|| assert_eq!(word.lock().depth(), 1));
    });
}

/// Every enter of a word panics at its caller's line when the count
/// would overflow: `#[track_caller]` down to the check, through
/// `try_entered!` and the `Monitor` trait's `lock_arc` forms.
#[test]
fn recursion_count_overflow_panics_at_the_callers_line() {
    use alloc::sync::Arc;
    use std::time::Duration;

    let word = Arc::new(MultiUseWord::new());
    let guard = word.lock();
    // SAFETY: the guard's record is this thread's, and the count is the
    // owner's field.
    unsafe { guard.record.set_count(usize::MAX) };
    let far = Instant::now() + Duration::from_secs(60);
    /// Where the enter `$enter` panicked, and the line it is on.
    macro_rules! lines {
        ($enter:expr) => {
            (
                panic_location(|| {
                    let _ = $enter;
                }),
                line!(),
            )
        };
    }
    let lines = [
        lines!(word.lock()),
        lines!(word.try_lock()),
        lines!(word.try_lock_for(Duration::from_secs(60))),
        lines!(word.try_lock_until(far)),
        lines!(word.lock_interruptibly()),
        lines!(word.try_lock_for_interruptibly(Duration::from_secs(60))),
        lines!(word.try_lock_until_interruptibly(far)),
        lines!(Monitor::lock(&*word)),
        lines!(Monitor::try_lock(&*word)),
        lines!(word.lock_arc()),
        lines!(word.try_lock_arc()),
        lines!(word.try_lock_arc_for(Duration::from_secs(60))),
        lines!(word.try_lock_arc_until(far)),
        lines!(word.lock_arc_interruptibly()),
        lines!(word.try_lock_arc_for_interruptibly(Duration::from_secs(60))),
        lines!(word.try_lock_arc_until_interruptibly(far)),
    ];
    // SAFETY: as above.
    unsafe { guard.record.set_count(1) };
    drop(guard);
    for ((file, at), line) in lines {
        assert_eq!((file.as_str(), at), (file!(), line));
    }
}
