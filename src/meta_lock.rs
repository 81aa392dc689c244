//! The meta-lock (paper 000, section 4.2, Fig. 5, Fig. 11-12): exclusive
//! access to an object's synchronization data for the length of one monitor
//! operation.
//!
//! `get_meta_lock` swaps `my EE | BUSY` into the word. If the old word was not
//! BUSY, the caller holds the meta-lock and the old word is the object's
//! synchronization state. Otherwise the old word names the predecessor: the
//! thread that swapped just before. Threads therefore get the meta-lock in the
//! order of their swaps.
//!
//! `release_meta_lock(bits)` compare-and-swaps `my EE | BUSY` back to `bits`,
//! the *release bits*. If that fails, a successor has swapped in behind us and
//! the release bits must reach it: the *hand-off*.
//!
//! # Hand-off
//!
//! The successor knows its predecessor (from the word it swapped out); the
//! predecessor does not know its successor. They meet in the predecessor's
//! execution environment, whose `handoff` field takes the place of the
//! paper's `metaLockMutex`, `succEE` and `bitsForGrab`:
//!
//! | `pred.handoff` | meaning |
//! |---|---|
//! | `IDLE` | no hand-off in progress |
//! | `BITS_FOR_GRAB` | predecessor won the race: release bits wait in `pred.meta_lock_bits` |
//! | address of an EE | successor won the race: it waits for the bits in its own EE |
//!
//! Both race to move `pred.handoff` away from `IDLE` with one
//! compare-and-swap:
//!
//! - **Case 1, successor wins**: it writes its EE there and blocks until
//!   `got_meta_lock_slow` is set in its own EE. The predecessor's
//!   compare-and-swap then fails, it finds the successor, stores the release
//!   bits in the successor's `meta_lock_bits`, resets its own `handoff`, and
//!   sets and signals `got_meta_lock_slow`.
//! - **Case 2, predecessor wins**: it has stored the bits in its own
//!   `meta_lock_bits`, writes `BITS_FOR_GRAB`, and blocks until `handoff` is
//!   `IDLE` again. The successor's compare-and-swap fails, it takes the bits,
//!   writes `IDLE` and signals the predecessor. The predecessor waits because
//!   its `meta_lock_bits` must stay put until they are taken.
//!
//! Invariant: a thread holds at most one meta-lock at a time. The crate's
//! operations never nest them (and with the `__test-hooks` feature,
//! `check_not_in_seam` refuses nesting from the test seam that runs code
//! under a meta-lock). So a thread is in at most
//! one hand-off as predecessor (a release does not return before its
//! hand-off ends) and at most one as successor (it blocks until its hand-off
//! ends). The two roles use disjoint fields, because a thread that waits as
//! successor may already be named as predecessor by the thread that swapped
//! in behind it on the same word. The thread that arrives first spins for a
//! bounded few microseconds (`spin_briefly_until`: the other side is
//! usually running and a few instructions away), then blocks on its parker;
//! nobody spins longer.
//!
//! # Memory orderings
//!
//! The swap is AcqRel: Acquire to see the synchronization data the previous
//! holder released, Release so that a successor that reads our EE from the
//! word sees our `handoff` reset from our previous hand-off. The releasing
//! compare-and-swap is Release, pairing with the next swap's Acquire. In a
//! hand-off, the bits are written Relaxed before a Release store of the flag
//! (`got_meta_lock_slow`, or `handoff = BITS_FOR_GRAB`) that the receiving
//! side reads with Acquire.
//!
//! # The rule: nothing unwinds while a meta-lock is held
//!
//! A thread that unwinds between its swap and its release would leave the
//! word BUSY, naming a thread that never hands the bits on: its successor
//! parks forever, and so does every later operation on the object. So no
//! user code and nothing that can panic runs while a thread holds a
//! meta-lock or waits in its hand-off: the protocols above check their
//! arguments and allocate before they take it, and raise their panics after
//! they release it. What cannot be kept out, the platform's callbacks (its
//! clock, blocking and waking, which a `no_std` user writes), is fenced
//! twice: the crate calls the platform only through `platform::Fenced`,
//! which aborts the process with a message if a callback unwinds, and
//! [`MetaLock`], the proof of holding the meta-lock, aborts the same way if
//! an unwind drops it instead of `release`, as parking_lot_core aborts on an
//! unwind in the middle of its protocol. So a bug that panics under a
//! meta-lock (a debug assertion) aborts too, rather than wedge the word.

use crate::exec_env::ExecEnv;
use crate::primitive::Ordering;
#[cfg(not(metalock_swap_only))]
use crate::primitive::spin_briefly_until;
use crate::sys::AbortOnDrop;
use crate::word::{BUSY, MultiUseWord, state};

/// `ExecEnv::handoff`: no hand-off in progress.
#[cfg(not(metalock_swap_only))]
const IDLE: usize = 0;
/// `ExecEnv::handoff`: the predecessor won; the bits are in its EE.
#[cfg(not(metalock_swap_only))]
const BITS_FOR_GRAB: usize = 1;

/// The meta-lock of one word, held by the calling thread since the swap that
/// returned it (or queued for it, inside `get_meta_lock`).
///
/// Invariant: until [`release`](Self::release) consumes it, the word is BUSY
/// and the meta-lock belongs to the thread of `ee` or to the threads queued
/// behind it, which only this thread's release lets go on. Dropping a
/// `MetaLock` any other way, which only an unwind can do, aborts the process
/// (see "The rule" in the module docs).
#[must_use = "a meta-lock is released only by `release`"]
pub(crate) struct MetaLock<'a> {
    word: &'a MultiUseWord,
    ee: &'a ExecEnv,
    /// The word's value before the meta-lock was taken: the object's
    /// synchronization state, never BUSY.
    pub(crate) bits: usize,
}

impl Drop for MetaLock<'_> {
    #[cold]
    fn drop(&mut self) {
        crate::sys::abort_unwound();
    }
}

#[cfg(not(metalock_swap_only))]
impl MultiUseWord {
    /// Takes the meta-lock (Fig. 11): one swap, and the hand-off if the word
    /// was BUSY.
    #[inline]
    pub(crate) fn get_meta_lock<'a>(&'a self, ee: &'a ExecEnv) -> MetaLock<'a> {
        check_not_in_seam(ee);
        count!(ee, get_meta_lock);
        // AcqRel (see "Memory orderings"): Acquire pairs with the previous
        // holder's releasing compare-and-swap; Release publishes our reset
        // `handoff` to the thread that will name us as predecessor.
        let bits = self.word.swap(ee.busy_bits(), Ordering::AcqRel);
        let mut held = MetaLock {
            word: self,
            ee,
            bits,
        };
        if state(bits) == BUSY {
            // Queued behind the thread `bits` names: `held` already fences
            // the hand-off, whose blocking runs platform code.
            held.bits = get_meta_lock_slow(ee, bits);
        }
        count_held(true);
        held
    }
}

#[cfg(not(metalock_swap_only))]
impl MetaLock<'_> {
    /// Releases the meta-lock, leaving `release_bits` (never BUSY) as the
    /// word's value (Fig. 11): one compare-and-swap, and the hand-off if a
    /// successor swapped in behind us.
    #[inline]
    pub(crate) fn release(self, release_bits: usize) {
        debug_assert_ne!(state(release_bits), BUSY);
        count_held(false);
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
        core::mem::forget(self);
    }
}

impl MetaLock<'_> {
    /// The holder's execution environment, for its event counters.
    #[cfg(all(feature = "stats", not(metalock_model)))]
    #[inline]
    pub(crate) fn ee(&self) -> &ExecEnv {
        self.ee
    }

    /// Releases the meta-lock with `release_bits`, then runs `wake` (the
    /// wake-up of a thread the release signalled), still fenced: an unwind
    /// out of `wake` would leave that thread asleep for good.
    #[inline]
    pub(crate) fn release_then(self, release_bits: usize, wake: impl FnOnce()) {
        let fence = AbortOnDrop;
        self.release(release_bits);
        wake();
        core::mem::forget(fence);
    }
}

/// Waits for the predecessor named by `pred_bits` to hand over the release
/// bits (Fig. 12, left).
#[cfg(not(metalock_swap_only))]
#[cold]
fn get_meta_lock_slow(ee: &ExecEnv, pred_bits: usize) -> usize {
    // SAFETY: a BUSY word names the EE that swapped it in.
    let pred = unsafe { ExecEnv::of_busy(pred_bits) };
    // The crate never nests meta-locks (and the test seam refuses to before
    // the swap), but what it calls under one, a platform callback or a
    // global allocator the platform calls, could lock a monitor of the same
    // word: waiting for ourselves would hang silently, so stop with a
    // message instead (the panic aborts: `held` in `get_meta_lock` fences
    // this).
    if core::ptr::eq(pred, ee) {
        panic!("{SELF_NESTED}");
    }
    count!(ee, get_meta_lock_slow);
    hooks::fire(hooks::HandoffEvent::SuccessorQueued);
    let me = ee as *const ExecEnv as usize;
    // AcqRel: Release publishes our EE to the predecessor; Acquire (also on
    // failure) pairs with the predecessor's Release when it won the race, so
    // its `meta_lock_bits` are visible.
    match pred
        .handoff
        .compare_exchange(IDLE, me, Ordering::AcqRel, Ordering::Acquire)
    {
        Ok(_) => {
            hooks::fire(hooks::HandoffEvent::SuccessorWon);
            // Case 1: the predecessor will put the bits in our EE.
            // Acquire pairs with the predecessor's Release store of the flag.
            let got = || ee.got_meta_lock_slow.load(Ordering::Acquire);
            if !spin_briefly_until(got) {
                while !got() {
                    ee.parker.park(None);
                }
            }
            ee.got_meta_lock_slow.store(false, Ordering::Relaxed);
            ee.meta_lock_bits.load(Ordering::Relaxed)
        }
        Err(BITS_FOR_GRAB) => {
            hooks::fire(hooks::HandoffEvent::PredecessorWon);
            // Case 2: the bits wait in the predecessor's EE.
            // Relaxed: ordered by the Acquire of the failed compare-exchange
            // that read BITS_FOR_GRAB.
            let bits = pred.meta_lock_bits.load(Ordering::Relaxed);
            // Release: our read of the bits happens before the predecessor
            // reuses its EE.
            pred.handoff.store(IDLE, Ordering::Release);
            pred.parker.unpark();
            bits
        }
        Err(other) => unreachable!("metalock: two successors for one predecessor ({other:#x})"),
    }
}

/// Hands `release_bits` to the thread that swapped in after us (Fig. 12,
/// right).
#[cfg(not(metalock_swap_only))]
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
            let taken = || ee.handoff.load(Ordering::Acquire) == IDLE;
            if !spin_briefly_until(taken) {
                while !taken() {
                    ee.parker.park(None);
                }
            }
        }
        Err(succ) => {
            // Case 1: the successor is blocked in its own EE.
            // SAFETY: the successor wrote its EE's address; EEs outlive
            // every hand-off, and it stays blocked until we set its flag.
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

/// The test-and-set meta-lock of section 5.4, for targets with a swap but no
/// compare-and-swap: swap in the bare BUSY sentinel; if the old word was
/// BUSY too, somebody holds the meta-lock, so yield and retry, then sleep with
/// exponential back-off. Release is a plain store of the release bits. There
/// is no hand-off, hence no FIFO order, and a waiting thread polls instead of
/// blocking until it is handed the meta-lock.
#[cfg(metalock_swap_only)]
impl MultiUseWord {
    /// Takes the meta-lock.
    #[inline]
    pub(crate) fn get_meta_lock<'a>(&'a self, ee: &'a ExecEnv) -> MetaLock<'a> {
        check_not_in_seam(ee);
        let word = self as *const MultiUseWord as usize;
        // SAFETY: a thread-owned field of the calling thread's EE.
        let first_held = ee.meta_lock_held.with(|held| unsafe { *held });
        // As in the compare-and-swap backend's `get_meta_lock_slow`, but
        // before the swap, and for the first meta-lock the thread holds (the
        // crate holds one at a time; code it runs under one, such as a
        // platform callback, may take others). The panic aborts, as there:
        // it must not unwind into that code.
        if first_held == word {
            let _fence = AbortOnDrop;
            panic!("{SELF_NESTED}");
        }
        count!(ee, get_meta_lock);
        // AcqRel: Acquire pairs with the Release store of the previous
        // holder; the swap publishes nothing, but AcqRel costs nothing more
        // for the sequentially consistent assembly swaps.
        let bits = self.word.swap(BUSY, Ordering::AcqRel);
        let mut held = MetaLock {
            word: self,
            ee,
            bits,
        };
        if state(bits) == BUSY {
            count!(ee, get_meta_lock_slow);
            held.bits = self.get_meta_lock_contended();
        }
        if first_held == 0 {
            // SAFETY: as above.
            ee.meta_lock_held.with_mut(|held| unsafe { *held = word });
        }
        count_held(true);
        held
    }

    #[cfg(not(metalock_model))]
    #[cold]
    fn get_meta_lock_contended(&self) -> usize {
        let platform = crate::sys::get();
        let mut round = 0_u32;
        loop {
            if round < YIELD_ROUNDS {
                crate::primitive::yield_now();
            } else {
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

#[cfg(metalock_swap_only)]
impl MetaLock<'_> {
    /// Releases the meta-lock by storing `release_bits` (never BUSY).
    #[inline]
    pub(crate) fn release(self, release_bits: usize) {
        debug_assert_ne!(state(release_bits), BUSY);
        count_held(false);
        let word = self.word as *const MultiUseWord as usize;
        // SAFETY: a thread-owned field of the calling thread's EE (a
        // meta-lock is released by the thread that took it).
        self.ee.meta_lock_held.with_mut(|held| unsafe {
            if *held == word {
                *held = 0;
            }
        });
        // Release pairs with the Acquire of the next holder's swap.
        self.word.word.store(release_bits, Ordering::Release);
        #[cfg(metalock_model)]
        crate::primitive::releases::released();
        core::mem::forget(self);
    }
}

/// Failed test-and-set rounds that yield before the back-off starts sleeping.
#[cfg(all(metalock_swap_only, not(metalock_model)))]
const YIELD_ROUNDS: u32 = 4;

/// Sleeps 10 us * 2^`step`, at most about 1 ms, through the platform's
/// timed wait on a private address that nobody wakes.
#[cfg(all(metalock_swap_only, not(metalock_model)))]
fn sleep(platform: crate::sys::Fenced, step: u32) {
    let micros = 10_u64 << step.min(7);
    let now = platform.now();
    if let Some(deadline) = now.checked_add(core::time::Duration::from_micros(micros)) {
        let never_woken = core::sync::atomic::AtomicU32::new(0);
        platform.wait(&never_woken, 0, Some(deadline));
    }
}

/// What a thread that asks for a meta-lock it already holds stops with
/// (both backends).
const SELF_NESTED: &str = "metalock: a thread asked for a meta-lock it already holds (code that \
    the crate runs under a meta-lock, a global allocator or a platform callback, locked a monitor \
    on the same word): it would wait for itself forever";

/// Counts a meta-lock taken (`taken`) or released, for the tests that
/// check that nothing allocates under one (`primitive::held`).
#[inline(always)]
fn count_held(taken: bool) {
    #[cfg(all(feature = "__test-hooks", feature = "std", not(metalock_model)))]
    crate::primitive::held::count(taken);
    #[cfg(not(all(feature = "__test-hooks", feature = "std", not(metalock_model))))]
    let _ = taken;
}

/// Refuses a second meta-lock to a thread that runs test code under one
/// (the `__with_meta_lock` seam). Checked before the swap, so the refusal
/// leaves every word's swap order intact.
#[cfg(feature = "__test-hooks")]
#[inline(always)]
fn check_not_in_seam(ee: &ExecEnv) {
    // SAFETY: a thread-owned field of the calling thread's EE.
    let in_seam = ee.in_meta_lock_seam.with(|s| unsafe { *s });
    assert!(
        !in_seam,
        "metalock: this thread already holds a meta-lock (inside __with_meta_lock) and asked \
         for another; a thread holds at most one meta-lock at a time"
    );
}

/// Without the test seam nothing runs under a meta-lock that could ask for
/// another.
#[cfg(not(feature = "__test-hooks"))]
#[inline(always)]
fn check_not_in_seam(_ee: &ExecEnv) {}

/// Observation points on the hand-off and monitor slow paths, so that tests
/// can drive and see each case of the race. Compiled to nothing without the
/// `__test-hooks` feature, which only the crate's own tests enable; not part
/// of the API.
pub mod hooks {
    /// A point on the hand-off slow path.
    #[cfg_attr(metalock_swap_only, allow(dead_code))]
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum HandoffEvent {
        /// A thread swapped and found the meta-lock BUSY; it is about to race
        /// its predecessor.
        SuccessorQueued,
        /// Case 1: the successor reached the predecessor's EE first.
        SuccessorWon,
        /// Case 2: the predecessor reached its EE first.
        PredecessorWon,
        /// A thread invited to re-contend for a monitor lost it to another
        /// thread, and queues again.
        ContenderPassedOver,
        /// An exit handed the monitor to a thread passed over for too long
        /// instead of releasing it (eventual fairness).
        MonitorHandedOver,
    }

    #[cfg(feature = "__test-hooks")]
    static HOOK: core::sync::atomic::AtomicPtr<()> =
        core::sync::atomic::AtomicPtr::new(core::ptr::null_mut());

    /// Calls `hook` at every hand-off event, on the thread where it happens;
    /// `None` removes it. The hook may run while the thread holds or waits
    /// for a meta-lock, where a panic aborts the process, so it must not
    /// touch any monitor and should not panic (the abort is what the
    /// unwinding tests check).
    #[cfg(feature = "__test-hooks")]
    pub fn set_handoff_hook(hook: Option<fn(HandoffEvent)>) {
        let ptr = hook.map_or(core::ptr::null_mut(), |f| f as *mut ());
        // Release pairs with the Acquire in `fire`.
        HOOK.store(ptr, core::sync::atomic::Ordering::Release);
    }

    #[inline(always)]
    pub(crate) fn fire(event: HandoffEvent) {
        #[cfg(feature = "__test-hooks")]
        {
            // Acquire pairs with the Release in `set_handoff_hook`.
            let ptr = HOOK.load(core::sync::atomic::Ordering::Acquire);
            if !ptr.is_null() {
                // SAFETY: a non-null value was stored from a
                // `fn(HandoffEvent)`.
                let hook: fn(HandoffEvent) = unsafe { core::mem::transmute(ptr) };
                hook(event);
            }
        }
        #[cfg(not(feature = "__test-hooks"))]
        let _ = event;
    }
}

#[cfg(feature = "__test-hooks")]
impl MultiUseWord {
    /// Runs `f` while holding the word's meta-lock, releasing it with the
    /// bits unchanged however `f` ends (the one place where code runs under
    /// a meta-lock and may unwind without aborting). A test seam for the
    /// meta-lock alone, not part of the API.
    ///
    /// # Panics
    ///
    /// Any metalock operation from inside `f`, on any word, panics before
    /// taking a second meta-lock: a thread holds at most one.
    #[doc(hidden)]
    pub fn __with_meta_lock<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Release<'a> {
            held: Option<MetaLock<'a>>,
            ee: &'a ExecEnv,
        }
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                // SAFETY: thread-owned field of our EE.
                self.ee
                    .in_meta_lock_seam
                    .with_mut(|s| unsafe { *s = false });
                if let Some(held) = self.held.take() {
                    let bits = held.bits;
                    held.release(bits);
                }
            }
        }
        let ee = ExecEnv::current();
        let held = self.get_meta_lock(ee);
        // SAFETY: thread-owned field of our EE.
        ee.in_meta_lock_seam.with_mut(|s| unsafe { *s = true });
        let _release = Release {
            held: Some(held),
            ee,
        };
        f()
    }
}
