//! The meta-lock on targets with a swap but no compare-and-swap (and any
//! target with the `swap-only` feature).

use super::{MetaLock, check_not_in_seam, note_released, note_taken};
use crate::exec_env::ExecEnv;
use crate::primitive::Ordering;
use crate::word::{BUSY, MultiUseWord, state};

/// The test-and-set meta-lock of section 5.4, for targets with a swap but no
/// compare-and-swap: swap in the bare BUSY sentinel; if the old word was
/// BUSY too, somebody holds the meta-lock, so yield and retry, then sleep with
/// exponential back-off. Release is a plain store of the release bits. There
/// is no hand-off, hence no FIFO order, and a waiting thread polls instead of
/// blocking until it is handed the meta-lock.
impl MultiUseWord {
    /// Takes the meta-lock.
    #[inline]
    pub(crate) fn get_meta_lock<'a>(&'a self, ee: &'a ExecEnv) -> MetaLock<'a> {
        check_not_in_seam(ee);
        note_taken(ee, self);
        count!(ee, get_meta_lock);
        // AcqRel: Acquire pairs with the Release store of the previous
        // holder; the swap publishes nothing, but AcqRel costs nothing more
        // for the sequentially consistent assembly swaps.
        let bits = self.word.swap(BUSY, Ordering::AcqRel);
        let mut held = MetaLock::new(self, ee, bits);
        if state(bits) == BUSY {
            count!(ee, get_meta_lock_slow);
            held.bits = self.get_meta_lock_contended();
        }
        held
    }

    #[cfg(not(metalock_model))]
    #[cold]
    fn get_meta_lock_contended(&self) -> usize {
        let platform = crate::sys::get();
        let mut round = 0_u32;
        loop {
            // A yield every round: a platform whose wait returns at once
            // (allowed) would otherwise leave the loop spinning.
            crate::primitive::yield_now();
            if round >= YIELD_ROUNDS {
                sleep(platform, round - YIELD_ROUNDS);
            }
            round = round.saturating_add(1);
            // AcqRel: as in `get_meta_lock`.
            let bits = self.word.swap(BUSY, Ordering::AcqRel);
            if state(bits) != BUSY {
                return bits;
            }
        }
    }

    /// Under loom a retry waits for a release instead of polling (see
    /// `primitive::releases`).
    #[cfg(metalock_model)]
    #[cold]
    fn get_meta_lock_contended(&self) -> usize {
        crate::primitive::releases::retry_after_release(|| {
            // AcqRel: as in `get_meta_lock`.
            let bits = self.word.swap(BUSY, Ordering::AcqRel);
            (state(bits) != BUSY).then_some(bits)
        })
    }
}

impl MetaLock<'_> {
    /// Releases the meta-lock by storing `release_bits` (never BUSY).
    #[inline]
    pub(crate) fn release(self, release_bits: usize) {
        Self::debug_check_release_bits(release_bits);
        // Release pairs with the Acquire of the next holder's swap.
        self.word.word.store(release_bits, Ordering::Release);
        #[cfg(metalock_model)]
        crate::primitive::releases::released();
        note_released(self.ee);
        core::mem::forget(self);
    }
}

/// Failed test-and-set rounds that only yield, before the back-off also
/// sleeps.
#[cfg(not(metalock_model))]
const YIELD_ROUNDS: u32 = 4;

/// Sleeps about 10 us * 2^`step`, at most 1.28 ms, through the
/// platform's timed wait on a private address that nobody wakes (one wait:
/// a back-off need not be exact).
#[cfg(not(metalock_model))]
fn sleep(platform: crate::sys::Fenced, step: u32) {
    let micros = 10_u64 << step.min(7);
    let now = platform.now();
    if let Some(deadline) = now.checked_add(core::time::Duration::from_micros(micros)) {
        let never_woken = core::sync::atomic::AtomicU32::new(0);
        platform.wait(&never_woken, 0, Some(deadline));
    }
}
