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
