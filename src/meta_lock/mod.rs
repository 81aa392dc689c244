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
//! operations never nest them, and a thread that asks for one while it
//! holds or waits for another (code run under a meta-lock: a platform
//! callback that uses a word needing one) stops the process with a message
//! before its swap (`note_taken`; with the `__test-hooks` feature,
//! `check_not_in_seam` refuses nesting from the test seam with a panic that
//! unwinds). So a thread is in at most
//! one hand-off as predecessor (a release does not return before its
//! hand-off ends) and at most one as successor (it blocks until its hand-off
//! ends). A thread that waits as successor may already be named as
//! predecessor by the thread that swapped in behind it on the same word;
//! the two roles share `meta_lock_bits` and the parker, at different
//! times: the thread receives bits only while it waits as successor, and
//! its own successor reads them only after the thread's later release
//! publishes `BITS_FOR_GRAB`. The thread that arrives first spins for a
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
//! hand-off, the bits are written Relaxed before a Release store of
//! `got_meta_lock_slow`, or before the AcqRel compare-and-swap that writes
//! `handoff = BITS_FOR_GRAB`, which the receiving side reads with Acquire
//! (its own compare-and-swap's failure ordering).
//!
//! The loom models check the swap's Release half only where the
//! predecessor's EE is new: the successor's compare-and-swap on
//! `pred.handoff` must come after that atomic's initialisation
//! (`a_predecessor_comes_back_while_its_successor_takes_the_bits` fails
//! without the Release). They cannot check the rest: loom lets a
//! compare-and-swap, even a failed one, read only the newest store, where
//! the memory model lets a failed one read an older value. Without that
//! Release a successor's compare-and-swap on `pred.handoff` could read the
//! value from the predecessor's previous hand-off instead of the reset to
//! `IDLE`: its last successor's address, which stops the process ("two
//! successors"), or `BITS_FOR_GRAB`, which hands it stale bits, so that two
//! threads would hold the meta-lock. Keep it.
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
//! meta-lock (a debug assertion) aborts too, rather than wedge the word,
//! though only after the panic hook ran; the meta-lock's own checks stop
//! the process with a message, which with `std` runs no panic machinery
//! (without it the message goes through the panic handler, see
//! `sys::abort_with`).

#[cfg(not(metalock_swap_only))]
mod handoff;
/// Observation points on the hand-off and monitor slow paths, so that tests
/// can drive and see each case of the race. Compiled to nothing without the
/// `__test-hooks` feature, which only the crate's own tests enable; not part
/// of the API.
pub mod hooks;
#[cfg(metalock_swap_only)]
mod swap_only;

use core::marker::PhantomData;

use crate::exec_env::ExecEnv;
use crate::word::MultiUseWord;

/// The meta-lock of one word, held by the calling thread since the swap that
/// returned it (or queued for it, inside `get_meta_lock`).
///
/// Invariant: until [`release`](Self::release) consumes it, the word is BUSY
/// and the meta-lock belongs to the thread of `ee` or to the threads queued
/// behind it, which only this thread's release lets go on. Dropping a
/// `MetaLock` any other way (an unwind, or a bug that lets it go out of
/// scope) aborts the process (see "The rule" in the module docs). Neither
/// `Send` nor `Sync`: the release writes thread-owned fields of `ee` and
/// parks on its parker, so it must run on the thread that took it.
#[must_use = "a meta-lock is released only by `release`"]
pub(crate) struct MetaLock<'a> {
    word: &'a MultiUseWord,
    ee: &'a ExecEnv,
    /// The word's value before the meta-lock was taken: the object's
    /// synchronization state, never BUSY.
    pub(crate) bits: usize,
    not_send: PhantomData<*const ()>,
}

impl Drop for MetaLock<'_> {
    #[cold]
    fn drop(&mut self) {
        crate::sys::abort_unwound();
    }
}

impl<'a> MetaLock<'a> {
    /// The proof that the thread of `ee` took `word`'s meta-lock with the
    /// swap that returned `bits` (or is queued for it).
    #[inline(always)]
    fn new(word: &'a MultiUseWord, ee: &'a ExecEnv, bits: usize) -> Self {
        Self {
            word,
            ee,
            bits,
            not_send: PhantomData,
        }
    }

    /// Checks, in debug builds, that the release bits are not BUSY: stops
    /// the process with a message rather than a panic, whose hook is user
    /// code that must not run under a meta-lock (without `std` the message
    /// still goes through the panic handler, as every abort of the crate's).
    #[inline(always)]
    fn debug_check_release_bits(release_bits: usize) {
        if cfg!(debug_assertions) && crate::word::state(release_bits) == crate::word::BUSY {
            crate::sys::abort_with("metalock: a meta-lock released with BUSY bits (a bug)");
        }
    }

    /// The holder's execution environment, for its event counters.
    #[cfg(all(feature = "stats", not(metalock_model)))]
    #[inline]
    pub(crate) fn ee(&self) -> &ExecEnv {
        self.ee
    }
}

/// What a thread that asks for a meta-lock it already holds stops with.
const SELF_NESTED: &str = "metalock: a thread asked for a meta-lock it already holds (code that \
    the crate runs under a meta-lock, a global allocator or a platform callback, used a metalock \
    word, monitor or condition, here the same word): it would wait for itself forever";

/// What a thread that asks for a meta-lock while it holds another stops
/// with.
const NESTED: &str = "metalock: a thread asked for a meta-lock while it holds or waits for \
    another (code that the crate runs under a meta-lock, a global allocator or a platform \
    callback, used a metalock word, monitor or condition): a thread holds one meta-lock at a \
    time, so such code must call no metalock function";

/// Marks `word`'s meta-lock as the one the thread of `ee` holds or waits
/// for, before the swap; stops the process if the thread holds one already.
/// The crate never nests meta-locks, but code it runs under one (a platform
/// callback, a global allocator that callback uses) could use a word that
/// takes one: lock a contended monitor, read the payload of an object
/// another thread holds (or any locked object's, with `meta-lock-only` or
/// the swap-only backend), notify. On the same word the thread would wait for
/// itself; on another, the two hand-offs would share the thread's hand-off
/// fields, and a successor of one could be handed the other's bits.
#[inline(always)]
fn note_taken(ee: &ExecEnv, word: &MultiUseWord) {
    #[cfg(all(feature = "__test-hooks", feature = "std", not(metalock_model)))]
    crate::primitive::held::check_no_shard();
    let word = word as *const MultiUseWord as usize;
    // SAFETY: a thread-owned field of the calling thread's EE.
    let held = ee.meta_lock_held.with(|held| unsafe { *held });
    if held != 0 {
        nested(held == word);
    }
    // SAFETY: as above.
    ee.meta_lock_held.with_mut(|held| unsafe { *held = word });
    count_held(true);
}

/// Stops the process on a nested meta-lock without unwinding. With `std`,
/// without a panic either: the panic hook is user code, which must not run
/// while this thread holds a meta-lock. Without `std` the message goes
/// through the panic handler, and a handler that meets the misuse again
/// stops there (`sys::abort_with`).
#[cold]
#[inline(never)]
fn nested(same_word: bool) -> ! {
    crate::sys::abort_with(if same_word { SELF_NESTED } else { NESTED })
}

/// Marks the thread of `ee` as holding no meta-lock, once its release (and
/// any hand-off) is over.
#[inline(always)]
fn note_released(ee: &ExecEnv) {
    count_held(false);
    // SAFETY: a thread-owned field of the calling thread's EE (a meta-lock
    // is released by the thread that took it).
    ee.meta_lock_held.with_mut(|held| unsafe { *held = 0 });
}

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

#[cfg(feature = "__test-hooks")]
impl MultiUseWord {
    /// Runs `f` while holding the word's meta-lock, releasing it with the
    /// bits unchanged however `f` ends (the one place where code runs under
    /// a meta-lock and may unwind without aborting). A test seam for the
    /// meta-lock alone, not part of the API.
    ///
    /// # Panics
    ///
    /// Any metalock operation from inside `f` that needs a meta-lock, on any
    /// word, panics before taking it: a thread holds at most one. (An
    /// uncontended lock or unlock of another word, one compare-and-swap,
    /// takes none and succeeds.)
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
