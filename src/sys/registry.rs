//! The registration of a `no_std` platform: written once, read on every
//! call through [`get`].

use super::Platform;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU32, Ordering};
use core::time::Duration;

/// The registered platform.
///
/// Invariant: written once, by the caller of `set_platform` that won
/// `CLAIMED`, before it sets `PUBLISHED`; read only after `PUBLISHED` is
/// seen set (Acquire). A cell and a flag rather than a pointer in an
/// atomic: the reference is fat, and boxing it to make it thin would
/// allocate, which a global allocator that locks monitors cannot do before
/// there is a platform.
struct Slot(UnsafeCell<Option<&'static dyn Platform>>);

// SAFETY: the one write happens before every read (the invariant above).
unsafe impl Sync for Slot {}

static PLATFORM: Slot = Slot(UnsafeCell::new(None));
/// Set by the first `set_platform`, by a swap (every backend has one).
static CLAIMED: AtomicU32 = AtomicU32::new(0);
/// Set, and woken, once `PLATFORM` is written: what `get` checks, and where
/// later callers of `set_platform` block until then.
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
    // Relaxed: the claim only decides who writes; `PUBLISHED` publishes.
    if crate::arch::swap_u32(&CLAIMED, 1, Ordering::Relaxed) != 0 {
        // The winner publishes right after its claim, but may be preempted
        // there: block rather than spin, so that on a priority-scheduled
        // uniprocessor it gets to run. Timed, in short steps, as the
        // winner wakes through its own platform, which may not be ours.
        // Unmarked (here and below): a registration runs outside the
        // protocol, perhaps before the platform's threads have slots.
        let fenced = super::Fenced {
            platform,
            marked: false,
        };
        // Acquire: as in `get`.
        while PUBLISHED.load(Ordering::Acquire) == 0 {
            match fenced.now().checked_add(Duration::from_micros(100)) {
                Some(deadline) => fenced.wait(&PUBLISHED, 0, Some(deadline)),
                None => fenced.yield_now(),
            }
        }
        return Err(PlatformAlreadySet);
    }
    // SAFETY: the claim makes this the only write, and nobody reads before
    // `PUBLISHED` is set below (`Slot`'s invariant).
    unsafe { *PLATFORM.0.get() = Some(platform) };
    // Release pairs with the Acquire loads in `get` and above: a thread
    // that sees the flag sees the platform.
    PUBLISHED.store(1, Ordering::Release);
    let fenced = super::Fenced {
        platform,
        marked: false,
    };
    fenced.wake(&PUBLISHED);
    Ok(())
}

#[inline]
pub(crate) fn get() -> super::Fenced {
    // Acquire pairs with the Release store in `set_platform`.
    let platform = if PUBLISHED.load(Ordering::Acquire) != 0 {
        // SAFETY: read once published, so after the one write (`Slot`'s
        // invariant).
        unsafe { *PLATFORM.0.get() }
    } else {
        None
    };
    super::Fenced {
        platform: platform.expect(
            "metalock: no platform registered; without the `std` feature call \
             metalock::platform::set_platform before the first lock",
        ),
        marked: true,
    }
}
