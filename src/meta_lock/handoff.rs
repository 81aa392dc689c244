//! The meta-lock of section 4.2 on targets with compare-and-swap: one swap
//! to get it, one compare-and-swap to release it, and the FIFO hand-off
//! through the predecessor's execution environment when the
//! compare-and-swap fails (Fig. 11-12, described in `meta_lock`'s docs).

use super::hooks::{self, HandoffEvent};
use super::{MetaLock, check_not_in_seam, note_released, note_taken};
use crate::exec_env::ExecEnv;
use crate::primitive::{Ordering, spin_briefly_until};
use crate::word::{BUSY, MultiUseWord, state};

/// `ExecEnv::handoff`: no hand-off in progress.
const IDLE: usize = 0;
/// `ExecEnv::handoff`: the predecessor won; the bits are in its EE.
const BITS_FOR_GRAB: usize = 1;

impl MultiUseWord {
    /// Takes the meta-lock (Fig. 11): one swap, and the hand-off if the word
    /// was BUSY.
    #[inline]
    pub(crate) fn get_meta_lock<'a>(&'a self, ee: &'a ExecEnv) -> MetaLock<'a> {
        check_not_in_seam(ee);
        note_taken(ee, self);
        count!(ee, get_meta_lock);
        // AcqRel (see "Memory orderings" in `meta_lock`'s docs): Acquire
        // pairs with the previous holder's releasing compare-and-swap;
        // Release publishes our reset `handoff` to the thread that will name
        // us as predecessor (load-bearing; loom checks it only for a new EE).
        let bits = self.word.swap(ee.busy_bits(), Ordering::AcqRel);
        let mut held = MetaLock::new(self, ee, bits);
        if state(bits) == BUSY {
            // Queued behind the thread `bits` names: `held` already fences
            // the hand-off, whose blocking runs platform code.
            held.bits = get_meta_lock_slow(ee, bits);
        }
        held
    }
}

impl MetaLock<'_> {
    /// Releases the meta-lock, leaving `release_bits` (never BUSY) as the
    /// word's value (Fig. 11): one compare-and-swap, and the hand-off if a
    /// successor swapped in behind us.
    #[inline]
    pub(crate) fn release(self, release_bits: usize) {
        Self::debug_check_release_bits(release_bits);
        // Release pairs with the next swap's Acquire. Relaxed on failure:
        // the hand-off's own atomics order what follows.
        if self
            .word
            .word
            .compare_exchange(
                self.ee.busy_bits(),
                release_bits,
                Ordering::Release,
                Ordering::Relaxed,
            )
            .is_err()
        {
            release_meta_lock_slow(self.ee, release_bits);
        }
        note_released(self.ee);
        core::mem::forget(self);
    }
}

/// Waits, on the calling thread whose EE is `ee`, until `done`: the other
/// thread's part of a hand-off. It spins briefly (the other thread is
/// between two of its instructions, usually) and then parks, again after
/// each return that comes before its part (a token an earlier hand-off
/// left, or a spurious return).
fn wait_for_part(ee: &ExecEnv, done: impl Fn() -> bool) {
    if !spin_briefly_until(&done) {
        ee.parker.park(None);
        while !done() {
            hooks::fire(HandoffEvent::WokeEarly);
            ee.parker.park(None);
        }
    }
}

/// Waits for the predecessor named by `pred_bits` to hand over the release
/// bits (Fig. 12, left).
#[cold]
fn get_meta_lock_slow(ee: &ExecEnv, pred_bits: usize) -> usize {
    // SAFETY: a BUSY word names the EE that swapped it in, and EEs are
    // never freed (they go back to a pool), so the reference stays valid
    // however long the predecessor takes.
    let pred = unsafe { ExecEnv::of_busy(pred_bits) };
    // Not ours: a thread never asks for a meta-lock it holds (`note_taken`).
    // Checked without a panic, whose hook is user code (see "The rule").
    if cfg!(debug_assertions) && core::ptr::eq(pred, ee) {
        crate::sys::abort_with("metalock: a thread queued behind itself for a meta-lock (a bug)");
    }
    count!(ee, get_meta_lock_slow);
    hooks::fire(HandoffEvent::SuccessorQueued);
    let me = ee as *const ExecEnv as usize;
    // AcqRel: Release publishes our EE to the predecessor; Acquire (also on
    // failure) pairs with the predecessor's Release when it won the race, so
    // its `meta_lock_bits` are visible.
    match pred
        .handoff
        .compare_exchange(IDLE, me, Ordering::AcqRel, Ordering::Acquire)
    {
        Ok(_) => {
            hooks::fire(HandoffEvent::SuccessorWon);
            // Case 1: the predecessor will put the bits in our EE.
            // Acquire pairs with the predecessor's Release store of the flag.
            wait_for_part(ee, || ee.got_meta_lock_slow.load(Ordering::Acquire));
            // Relaxed: only this thread reads its flag, and the next
            // predecessor to set it learns of us through our compare-and-
            // swap on its `handoff` (AcqRel), which comes after this store.
            ee.got_meta_lock_slow.store(false, Ordering::Relaxed);
            // Relaxed: ordered by the Acquire load of the flag above.
            let bits = ee.meta_lock_bits.load(Ordering::Relaxed);
            hooks::fire(HandoffEvent::SuccessorGotIt);
            bits
        }
        Err(BITS_FOR_GRAB) => {
            hooks::fire(HandoffEvent::PredecessorWon);
            // Case 2: the bits wait in the predecessor's EE.
            // Relaxed: ordered by the Acquire of the failed compare-exchange
            // that read BITS_FOR_GRAB.
            let bits = pred.meta_lock_bits.load(Ordering::Relaxed);
            // Release: our read of the bits happens before the predecessor
            // reuses its EE.
            pred.handoff.store(IDLE, Ordering::Release);
            pred.parker.unpark();
            hooks::fire(HandoffEvent::SuccessorGotIt);
            bits
        }
        // Only one thread swaps in right behind a predecessor, and its
        // `handoff` is back to IDLE before it swaps again. Stopped without
        // a panic, whose hook is user code (see "The rule").
        Err(_) => {
            crate::sys::abort_with("metalock: two successors for one meta-lock predecessor (a bug)")
        }
    }
}

/// Hands `release_bits` to the thread that swapped in after us (Fig. 12,
/// right).
#[cold]
fn release_meta_lock_slow(ee: &ExecEnv, release_bits: usize) {
    // Relaxed: published by the AcqRel compare-exchange below.
    ee.meta_lock_bits.store(release_bits, Ordering::Relaxed);
    // AcqRel: Release publishes `meta_lock_bits` to a successor that loses
    // the race; Acquire (also on failure) pairs with the successor's Release
    // when it won, so its EE is ours to write.
    match ee
        .handoff
        .compare_exchange(IDLE, BITS_FOR_GRAB, Ordering::AcqRel, Ordering::Acquire)
    {
        Ok(_) => {
            // Case 2: wait until the successor has taken the bits; it is
            // between its swap and its compare-and-swap, so usually a spin
            // is enough.
            // Acquire pairs with the successor's Release store of IDLE.
            wait_for_part(ee, || ee.handoff.load(Ordering::Acquire) == IDLE);
        }
        Err(succ) => {
            // Case 1: the successor is blocked in its own EE.
            // SAFETY: the successor wrote its EE's address, and EEs are
            // never freed; it waits (spinning or parked) for its flag, so
            // the EE is still its own while we write its fields.
            let succ = unsafe { &*(succ as *const ExecEnv) };
            // Relaxed: published by the Release store of the flag below.
            succ.meta_lock_bits.store(release_bits, Ordering::Relaxed);
            // Relaxed: only this thread reads its `handoff` before its next
            // swap, which is a Release that orders this store for whoever
            // names us as predecessor next.
            ee.handoff.store(IDLE, Ordering::Relaxed);
            // Release pairs with the successor's Acquire load of the flag.
            succ.got_meta_lock_slow.store(true, Ordering::Release);
            succ.parker.unpark();
        }
    }
}
