//! The registration of a `no_std` platform: written once, read on every
//! call through [`get`].

use super::Platform;
use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use core::time::Duration;

/// Points at a `&'static dyn Platform` (a thin pointer to the fat one),
/// null until `set_platform` stores it; written once.
static PLATFORM: AtomicPtr<&'static dyn Platform> = AtomicPtr::new(core::ptr::null_mut());
/// Set by the first `set_platform`, by a swap (every backend has one).
static CLAIMED: AtomicU32 = AtomicU32::new(0);
/// Set, and woken, once `PLATFORM` is stored: where later callers block
/// until then.
static PUBLISHED: AtomicU32 = AtomicU32::new(0);

/// Why [`set_platform`] refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlatformAlreadySet;

impl core::fmt::Display for PlatformAlreadySet {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(
            "metalock: a platform is already registered; set_platform may succeed only once",
        )
    }
}

/// Registers the platform the crate runs on. Call it once, before the
/// first lock; later calls are refused, and return once the first
/// call's platform is in place, so that the crate runs either way.
pub fn set_platform(platform: &'static dyn Platform) -> Result<(), PlatformAlreadySet> {
    // A thin pointer to the fat one, made before the claim so that the
    // claim and the store are a few instructions apart.
    let boxed = alloc::boxed::Box::new(platform);
    // Relaxed: the claim only decides who stores; the store publishes.
    if crate::arch::swap_u32(&CLAIMED, 1, Ordering::Relaxed) != 0 {
        // Acquire: as in `get`. The winner stores right after its claim,
        // but may be preempted there: block rather than spin, so that on a
        // priority-scheduled uniprocessor it gets to run. Timed, in short
        // steps, as the winner wakes through its own platform, which may
        // not be ours.
        let fenced = super::Fenced(platform);
        while PLATFORM.load(Ordering::Acquire).is_null() {
            match fenced.now().checked_add(Duration::from_micros(100)) {
                Some(deadline) => fenced.wait(&PUBLISHED, 0, Some(deadline)),
                None => fenced.yield_now(),
            }
        }
        return Err(PlatformAlreadySet);
    }
    // Leaked: it is never replaced. Release pairs with the Acquire load
    // in `get`: a thread that sees the pointer sees the platform it
    // points to.
    PLATFORM.store(alloc::boxed::Box::into_raw(boxed), Ordering::Release);
    // Relaxed: the callers waiting here read `PLATFORM`, not this flag.
    PUBLISHED.store(1, Ordering::Relaxed);
    super::Fenced(platform).wake(&PUBLISHED);
    Ok(())
}

#[inline]
pub(crate) fn get() -> super::Fenced {
    // Acquire pairs with the Release store in `set_platform`.
    let ptr = PLATFORM.load(Ordering::Acquire);
    assert!(
        !ptr.is_null(),
        "metalock: no platform registered; without the `std` feature call \
         metalock::platform::set_platform before the first lock"
    );
    // SAFETY: a non-null pointer came from the leaked box of
    // `set_platform` and is never changed or freed.
    super::Fenced(unsafe { *ptr })
}
