//! Unit tests of the keyed enters: the caller's line of a recursion
//! count's overflow.

use alloc::sync::Arc;
use core::ptr;
use std::time::Duration;

use crate::sys::Instant;
use crate::sys::panic_hook::panic_location;

/// Every keyed enter of a held value panics at its caller's line when the
/// count would overflow, in the value's home and in an overflow entry
/// (a value whose home serves another address held at the time).
#[test]
fn recursion_count_overflow_panics_at_the_callers_line() {
    // Two addresses of one 8-byte granule share a home: with the second
    // held, the first's monitor is an overflow entry. (An `Arc`'s value
    // follows two counters, so it is at least 4-aligned and both bytes
    // lie in one granule.)
    let pair = Arc::new([0_u8; 2]);
    let lone = Arc::new(0_u64);
    let far = Instant::now() + Duration::from_secs(60);
    let neighbour = super::lock(&pair[1]);
    check(&lone, far, false);
    check(&pair, far, true);
    drop(neighbour);
    assert!(!super::is_locked(&*pair) && !super::is_locked(&*lone));
}

/// The fifteen enters of `value`'s monitor, held at `usize::MAX` levels,
/// in its home or in an overflow entry.
fn check<T>(value: &Arc<T>, far: Instant, overflow: bool) {
    let guard = super::lock(&**value);
    let home = crate::monitor::home::locate(super::key_of(&**value).get()).0;
    assert_eq!(!ptr::eq(guard.monitor.word(), home.word()), overflow);
    // SAFETY: the guard's record is this thread's, and the count is the
    // owner's field.
    unsafe { guard.monitor.record().set_count(usize::MAX) };
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
    let long = Duration::from_secs(60);
    let lines = [
        lines!(super::lock(&**value)),
        lines!(super::try_lock(&**value)),
        lines!(super::try_lock_for(&**value, long)),
        lines!(super::try_lock_until(&**value, far)),
        lines!(super::lock_interruptibly(&**value)),
        lines!(super::try_lock_for_interruptibly(&**value, long)),
        lines!(super::try_lock_until_interruptibly(&**value, far)),
        lines!(super::synchronized(&**value, |_| ())),
        lines!(super::lock_arc(value)),
        lines!(super::try_lock_arc(value)),
        lines!(super::try_lock_arc_for(value, long)),
        lines!(super::try_lock_arc_until(value, far)),
        lines!(super::lock_arc_interruptibly(value)),
        lines!(super::try_lock_arc_for_interruptibly(value, long)),
        lines!(super::try_lock_arc_until_interruptibly(value, far)),
    ];
    // SAFETY: as above.
    unsafe { guard.monitor.record().set_count(1) };
    drop(guard);
    for ((file, at), line) in lines {
        assert_eq!((file.as_str(), at), (file!(), line));
    }
}

/// A keyed relock refused at `usize::MAX` levels on the home's slow path
/// (the home in another thread's meta-lock as it looks) shows the panic
/// hook, where dumps are taken on failure, a thread that holds its monitor
/// and blocks on nothing, as the fast path and the word's slow path do.
#[cfg(feature = "diagnostics")]
#[test]
fn a_relock_refused_on_the_slow_path_is_not_blocked_in_the_panic_hook() {
    use crate::diagnostics::{BlockKind, snapshot};
    use std::panic::{self, AssertUnwindSafe};
    use std::sync::Mutex;

    let value = 0_u64;
    let guard = super::lock(&value);
    let home = crate::monitor::home::locate(super::key_of(&value).get()).0;
    // SAFETY: the guard's record is this thread's, and the count is the
    // owner's field.
    unsafe { guard.monitor.record().set_count(usize::MAX) };
    let me = std::thread::current().id();
    let seen = Arc::new(Mutex::new(None));
    let hook_seen = Arc::clone(&seen);
    std::thread::scope(|s| {
        let (inside, told) = std::sync::mpsc::channel();
        s.spawn(move || {
            home.word().__with_meta_lock(|| {
                inside.send(()).unwrap();
                // Held until the relock, sent to the slow path, blocks on it.
                while !snapshot().threads().iter().any(|thread| {
                    thread.id() == me
                        && thread.blocked_on().map(|b| b.kind) == Some(BlockKind::Entering)
                }) {
                    std::thread::yield_now();
                }
            });
        });
        told.recv().unwrap();
        let relock = crate::sys::panic_hook::with_panic_hook(
            move |_| {
                let dump = snapshot();
                let thread = dump.current_thread().expect("this thread is in the dump");
                let state = (thread.holds().len(), thread.blocked_on().map(|b| b.kind));
                *hook_seen.lock().unwrap() = Some(state);
            },
            || panic::catch_unwind(AssertUnwindSafe(|| drop(super::lock(&value)))),
        );
        assert!(relock.is_err(), "a relock past usize::MAX levels panics");
    });
    assert_eq!(
        *seen.lock().unwrap(),
        Some((1, None)),
        "(held, block) in the hook"
    );
    // SAFETY: as above.
    unsafe { guard.monitor.record().set_count(1) };
    drop(guard);
    assert!(!super::is_locked(&value));
}
