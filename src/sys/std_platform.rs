//! The platform of `std` targets: the futex on 64-bit Linux,
//! `parking_lot_core` elsewhere.

use core::sync::atomic::AtomicU32;

use super::{Instant, Platform};

/// The platform of every `std` target: threads block on the futex system
/// call on 64-bit Linux, and through `parking_lot_core`'s address-keyed
/// parking lot elsewhere (on 32-bit Linux the classic call and
/// `libc::timespec` disagree on some targets about the width of time).
///
/// The crate uses it without being told; it is public so that code written
/// against [`Platform`] can run on it.
///
/// ```
/// use metalock::platform::{Platform, StdPlatform};
/// use std::sync::atomic::AtomicU32;
///
/// let word = AtomicU32::new(1);
/// StdPlatform.wait(&word, 0, None); // not 0: returns at once
/// StdPlatform.wait(&word, 1, Some(StdPlatform.now())); // deadline passed
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct StdPlatform;

// SAFETY: the futex compares `*word` with `expected` and sleeps atomically
// with respect to a wake on the same address, and `parking_lot_core::park`
// validates `*word == expected` under the bucket lock that `unpark_all`
// and `unpark_one` take, so either way a wake that follows a change of the value is never
// missed; `std::time::Instant` is monotonic. The thread slot is not used with
// std.
unsafe impl Platform for StdPlatform {
    #[cfg(metalock_futex)]
    fn wait(&self, word: &AtomicU32, expected: u32, deadline: Option<Instant>) {
        let timeout = match deadline {
            None => None,
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return;
                }
                Some(libc::timespec {
                    tv_sec: left.as_secs().min(libc::time_t::MAX as u64) as libc::time_t,
                    tv_nsec: left.subsec_nanos() as _,
                })
            }
        };
        let timeout = timeout
            .as_ref()
            .map_or(core::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: the variadic arguments match the kernel's futex ABI (the
        // word's address, a `c_int` operation, a `u32` value, a timespec
        // pointer; none narrower than `int`); `word` is a live, aligned
        // 32-bit atomic for the whole call, and `timeout` is null or points
        // at a timespec on our stack, of the layout this 64-bit target's
        // call reads. The futex only reads the word; an error (the value
        // changed, a signal, the timeout) is a return the caller treats as
        // spurious.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                expected,
                timeout,
            );
        }
    }

    #[cfg(metalock_futex)]
    fn wake(&self, word: &AtomicU32) {
        futex_wake(word, i32::MAX);
    }

    #[cfg(metalock_futex)]
    fn wake_one(&self, word: &AtomicU32) {
        futex_wake(word, 1);
    }

    #[cfg(not(metalock_futex))]
    fn wait(&self, word: &AtomicU32, expected: u32, deadline: Option<Instant>) {
        use core::sync::atomic::Ordering;
        let key = word as *const AtomicU32 as usize;
        // SAFETY: the key is the address of a live `AtomicU32`, which no
        // other live parking_lot primitive can share (each parks on its own
        // address); the closures neither panic nor call back into the
        // parking lot.
        unsafe {
            parking_lot_core::park(
                key,
                // Relaxed: the parker's own swaps order the data.
                || word.load(Ordering::Relaxed) == expected,
                || {},
                |_, _| {},
                parking_lot_core::DEFAULT_PARK_TOKEN,
                deadline,
            );
        }
    }

    #[cfg(not(metalock_futex))]
    fn wake(&self, word: &AtomicU32) {
        let key = word as *const AtomicU32 as usize;
        // SAFETY: see `wait`: the key is a live atomic's address.
        unsafe {
            parking_lot_core::unpark_all(key, parking_lot_core::DEFAULT_UNPARK_TOKEN);
        }
    }

    #[cfg(not(metalock_futex))]
    fn wake_one(&self, word: &AtomicU32) {
        let key = word as *const AtomicU32 as usize;
        // SAFETY: see `wait`; the callback neither panics nor calls back
        // into the parking lot.
        unsafe {
            parking_lot_core::unpark_one(key, |_| parking_lot_core::DEFAULT_UNPARK_TOKEN);
        }
    }

    fn yield_now(&self) {
        std::thread::yield_now();
    }

    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// Has `parking_lot_core` set up the calling thread's parking data now,
/// while the thread holds none of the crate's locks, rather than on its
/// first park: that allocates (the data, and the table of threads as it
/// grows), and the first park may come under a meta-lock, where a global
/// allocator that locks monitors would need a second one and stop the
/// process. A park whose
/// validation fails sets the data up and returns at once. The futex
/// platform has none to set up.
///
/// What stays `parking_lot_core`'s: it grows its table under its own
/// bucket locks, so an allocator that blocks there on a contended monitor
/// hangs (it is not reentrant); and a thread past the destruction of its
/// thread-locals gets fresh data on every park.
#[cfg(all(feature = "std", not(metalock_futex), not(metalock_model)))]
#[cold]
pub(crate) fn prepare_thread() {
    let key = 0_u8;
    // SAFETY: the key is the address of a local of this frame, which no
    // other user of the parking lot parks on, and the park returns without
    // parking (validation fails); the closures neither panic nor call back
    // into the parking lot.
    unsafe {
        parking_lot_core::park(
            &key as *const u8 as usize,
            || false,
            || {},
            |_, _| {},
            parking_lot_core::DEFAULT_PARK_TOKEN,
            None,
        );
    }
}

/// Wakes at most `count` threads blocked in a futex wait on `word`.
#[cfg(metalock_futex)]
fn futex_wake(word: &AtomicU32, count: i32) {
    // SAFETY: the variadic arguments match the kernel's futex ABI (the
    // word's address, a `c_int` operation, an `int` count); `word` is a
    // live, aligned 32-bit atomic; waking has no other effect on memory.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            count,
        );
    }
}
