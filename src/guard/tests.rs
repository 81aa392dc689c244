//! Unit tests of the guards: the recursion count's overflow, and the
//! caller's line its panic reports.

use super::*;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::thread;

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

/// Where the panic of `f` on the calling thread was raised (file, line),
/// caught without being printed. Tests that swap the process's panic hook
/// take turns, so that each finds its own in place.
pub(crate) fn panic_location(f: impl FnOnce()) -> (std::string::String, u32) {
    use alloc::sync::Arc;
    use std::sync::Mutex;
    static HOOK: Mutex<()> = Mutex::new(());
    let _turn = HOOK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let me = thread::current().id();
    let seen = Arc::new(Mutex::new(None));
    let previous = Arc::new(std::panic::take_hook());
    let (hook_seen, forward) = (Arc::clone(&seen), Arc::clone(&previous));
    std::panic::set_hook(Box::new(move |info| match info.location() {
        Some(at) if thread::current().id() == me => {
            *hook_seen.lock().unwrap() = Some((at.file().into(), at.line()));
        }
        _ => forward(info),
    }));
    let result = catch_unwind(AssertUnwindSafe(f));
    // Dropping our hook gives back the only other reference to `previous`.
    drop(std::panic::take_hook());
    match Arc::try_unwrap(previous) {
        Ok(previous) => std::panic::set_hook(previous),
        Err(_) => unreachable!("the replaced panic hook is still shared"),
    }
    assert!(result.is_err(), "no panic");
    let location = seen.lock().unwrap().take();
    location.expect("the panic hook saw no location")
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
