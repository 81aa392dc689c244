//! Monitors found by address (paper 002's monitor table, protocol half): a
//! fixed array of words, where the word at the hash of an address, its
//! *home*, serves the monitor of whichever address used it last. The key
//! rides in the word's payload, so locking an address whose home is idle is
//! the extra-fast path of an embedded word: one compare-and-swap that checks
//! the key and takes the monitor at once, whether the home last served this
//! address or another (then the compare-and-swap rekeys it). No lookup
//! structure, no reference count, no lock: the cost does not depend on how
//! many addresses are in use. The keyed API (`crate::keyed`) is the other
//! half.
//!
//! # The payload of a home
//!
//! `key << KEY_SHIFT | PINNED | OVERFLOW` (the key without the bits the
//! home's place stands for, see `locate`), displaced into the lock record
//! like any payload while the monitor is in use. A home changes key only
//! while it is NEUTRAL, without `OVERFLOW` and without pins: in the
//! compare-and-swap that locks it for the new key (which expects both bits
//! clear), or under its meta-lock (which may find `PINNED` set after the
//! last pin ended, and clears it).
//! - `PINNED`: threads are committed to the current key without holding or
//!   queueing on the monitor where the word shows it: a thread queued to
//!   enter may be invited out of the queue (the word can be NEUTRAL while it
//!   wakes), and a waiter waits in the wait table keyed by the word's
//!   address while the word is NEUTRAL. Such threads count themselves in
//!   `pins`, which only grows under the meta-lock (which sets the bit at the
//!   same time); the bit is cleared, under the meta-lock, only once `pins`
//!   is back to zero. So every path that installs on a NEUTRAL word in the
//!   monitor protocol finds the key it came for.
//! - `OVERFLOW`: some address whose home this is has its monitor elsewhere
//!   (`crate::keyed`'s overflow table), because the home served another
//!   address when it came. While such entries exist (`overflows`, changed
//!   only under the meta-lock) the home keeps its key, so that no address
//!   ever has two monitors.
//!
//! Lock order: a home's meta-lock, then the overflow table's shard lock
//! (the `elsewhere` closures run under the meta-lock); an overflow entry's
//! meta-lock is taken with neither held. The meta-lock's rule that the protocols allocate
//! before they take it (`crate::meta_lock`) holds here too: the table
//! makes an entry only from memory allocated beforehand, and frees after
//! the meta-lock (`crate::keyed::table`, "Allocation"); its panics are
//! raised after the meta-lock is released.
//!
//! The enter is in `enter`, the queries of a home's word in `query`; the
//! table, the pins and the overflow marks are here.

mod enter;
mod query;

use crate::exec_env::ExecEnv;
use crate::exec_env::interrupt::Interrupt;
use crate::lock_record::{LockRecord, record_of};
use crate::meta_lock::{MetaLock, hooks};
use crate::primitive::{AtomicU32, Ordering};
use crate::sys::Instant;
use crate::word::{LOCKED, MultiUseWord, NEUTRAL, QUEUE_SUMMARY, WAITERS, state};

use super::owner_is;
use super::try_enter::Until;

/// In a home's NEUTRAL form: some address of this home has its monitor in
/// the overflow table.
const OVERFLOW: usize = 1 << 3;
/// In a home's NEUTRAL form: threads count themselves in `pins`.
const PINNED: usize = 1 << 4;
/// Where the key starts in a home's NEUTRAL form.
const KEY_SHIFT: u32 = 5;
#[cfg(not(metalock_swap_only))]
const FLAGS: usize = OVERFLOW | PINNED;

/// Homes in the table: a power of two. 16 bytes each (256 KiB), touched only
/// where used; enough that the addresses a program holds at once rarely
/// share a home, and four to a cache line, so that two threads locking
/// distinct addresses rarely share a line.
#[cfg(not(metalock_model))]
const HOMES: usize = 1 << 14;
/// Homes under the model checkers, taken by addresses in the order of
/// their first use (an address varies between runs; that order does not),
/// so that a user's model of distinct values meets distinct homes, as a
/// real run mostly does. The crate's own models put every address in the
/// first (`share_one_home`): they meet rekeying, pinning and the overflow
/// table on every run.
#[cfg(metalock_model)]
const HOMES: usize = 4;

/// One home: the word, and its counts (see the module docs).
///
/// Invariant: `pins` grows only under the word's meta-lock, which then sets
/// `PINNED` in the word's NEUTRAL form, and `PINNED` is cleared only when
/// `pins` is zero; `overflows` is the number of overflow entries of this
/// home's addresses, changes only under the meta-lock, and `OVERFLOW` is
/// set in the NEUTRAL form while it is non-zero. The word is the first
/// field: a home and its word share an address.
#[repr(C, align(16))]
#[derive(Debug)]
pub(crate) struct Home {
    word: MultiUseWord,
    pins: AtomicU32,
    overflows: AtomicU32,
}

impl Home {
    #[cfg(not(metalock_model))]
    const fn new() -> Self {
        Self {
            word: MultiUseWord::new(),
            pins: AtomicU32::new(0),
            overflows: AtomicU32::new(0),
        }
    }

    #[cfg(metalock_model)]
    fn new() -> Self {
        Self {
            word: MultiUseWord::new(),
            pins: AtomicU32::new(0),
            overflows: AtomicU32::new(0),
        }
    }
}

#[cfg(not(metalock_model))]
static TABLE: [Home; HOMES] = [const { Home::new() }; HOMES];

/// One model execution's homes, and the addresses that have used them, in
/// order: a home's index comes from that order, which the checker does
/// not see.
#[cfg(metalock_model)]
struct ModelHomes {
    homes: [Home; HOMES],
    seen: std::sync::Mutex<std::vec::Vec<usize>>,
    /// Every address in the first home (`share_one_home`).
    one_home: std::sync::atomic::AtomicBool,
}

#[cfg(metalock_model)]
crate::primitive::lazy_static! {
    static ref MODEL_HOMES: ModelHomes = ModelHomes {
        homes: core::array::from_fn(|_| Home::new()),
        seen: std::sync::Mutex::new(std::vec::Vec::new()),
        one_home: std::sync::atomic::AtomicBool::new(false),
    };
}

/// The table of homes.
#[cfg(not(metalock_model))]
#[inline(always)]
fn table() -> &'static [Home; HOMES] {
    &TABLE
}

#[cfg(metalock_model)]
fn table() -> &'static [Home; HOMES] {
    &MODEL_HOMES.homes
}

/// Under the model checkers, the index of `key`'s home: its place in the
/// order of first use, or the first home (`share_one_home`).
#[cfg(metalock_model)]
fn model_index(key: usize) -> usize {
    let homes = &*MODEL_HOMES;
    // Relaxed: set by the execution's main thread before any keyed lock;
    // the checker does not see it.
    if homes.one_home.load(std::sync::atomic::Ordering::Relaxed) {
        return 0;
    }
    crate::primitive::first_use(&homes.seen, key) % HOMES
}

/// Under the model checkers, puts every address of the current execution
/// in one home, as the table does now and then outside them. Called at the
/// start of an execution, before any keyed lock.
#[cfg(all(metalock_model, feature = "__test-hooks"))]
pub fn share_one_home() {
    // Relaxed: see `model_index`.
    MODEL_HOMES
        .one_home
        .store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Creates this execution's homes (`model::start_execution`).
#[cfg(loom)]
pub(crate) fn create_homes() {
    let _ = core::ops::Deref::deref(&MODEL_HOMES);
}

/// The key bits of a home's NEUTRAL form.
#[inline(always)]
fn key_part(neutral: usize) -> usize {
    neutral & !((1 << KEY_SHIFT) - 1)
}

/// Bits of an address's granule that its home's place in the table stands
/// for: none under the model checkers, whose homes carry whole addresses.
#[cfg(not(metalock_model))]
const INDEX_BITS: u32 = HOMES.trailing_zeros();
#[cfg(metalock_model)]
const INDEX_BITS: u32 = 0;

// The carried key is `usize::BITS - INDEX_BITS + KEY_SHIFT` bits wide: it
// fits in the word when the index stands for at least `KEY_SHIFT` bits.
#[cfg(not(metalock_model))]
const _: () = assert!(INDEX_BITS >= KEY_SHIFT);

/// The home of `key`, and the key as that home carries it (its NEUTRAL
/// form, flags clear).
///
/// The home is the address's 8-byte granule, with the bits above the
/// table's range folded in. Not a scattering hash: values next to each
/// other get homes next to each other, so a program that walks its values
/// walks the homes in order too (measured: a scattering hash cost a cache
/// miss per lock when cycling over 4096 values, 1.7x parking_lot against
/// 1.25x). Values in one granule share a home, and so do some values far
/// apart (the folding maps many regions onto one range); values a
/// power-of-two stride of up to 2 GiB apart keep distinct homes while there
/// are no more of them than homes (wider strides fold onto fewer). Sharing
/// a home is correct either way: it costs the overflow table only while
/// both values' monitors are in use at once.
///
/// The home carries the address without the granule bits its index stands
/// for (`key_at` puts them back): two addresses of one home that agree on
/// the rest are one address. So every address fits in the payload, on
/// 32-bit targets and with tagged pointers too (under the model checkers,
/// whose homes carry whole addresses, addresses below 2^59 on 64-bit
/// targets, checked).
#[inline(always)]
#[track_caller]
pub(crate) fn locate(key: usize) -> (&'static Home, usize) {
    // Under the model checkers no index bits stand in for the address, and
    // the top `KEY_SHIFT` bits would not fit: refuse such an address loudly
    // rather than let two addresses share a monitor.
    #[cfg(metalock_model)]
    assert!(
        key.leading_zeros() >= KEY_SHIFT,
        "metalock: under a model checker, keyed monitors need addresses below 2^{}",
        usize::BITS - KEY_SHIFT
    );
    let granule = key >> 3;
    let high = granule >> INDEX_BITS;
    #[cfg(not(metalock_model))]
    let index = (granule ^ high ^ high >> INDEX_BITS) & (HOMES - 1);
    #[cfg(metalock_model)]
    let index = model_index(key);
    let bits = (high << 3 | key & 0b111) << KEY_SHIFT;
    (&table()[index], bits)
}

/// The address that the key bits `neutral` stand for in the home at
/// `index`: `locate` backwards.
#[cfg(all(any(test, feature = "diagnostics"), not(metalock_model)))]
fn key_at(index: usize, neutral: usize) -> usize {
    let carried = neutral >> KEY_SHIFT;
    let high = carried >> 3;
    let low = (index ^ high ^ high >> INDEX_BITS) & (HOMES - 1);
    (high << INDEX_BITS | low) << 3 | carried & 0b111
}

/// The home whose word `word` is, if it is one (its monitor may serve
/// several addresses over time, so a wait pins it).
#[inline]
pub(crate) fn home_with(word: &MultiUseWord) -> Option<&'static Home> {
    let table: &'static [Home] = &table()[..];
    let at = word as *const MultiUseWord as usize;
    let start = table.as_ptr() as usize;
    let offset = at.wrapping_sub(start);
    if offset < core::mem::size_of_val(table) {
        // In range, and a word is the first field of its home, so the
        // offset is a whole number of homes.
        Some(&table[offset / core::mem::size_of::<Home>()])
    } else {
        None
    }
}

/// How a keyed enter through a home ended.
#[derive(Debug)]
pub(crate) enum Keyed<R> {
    /// The calling thread owns the home's monitor for the key.
    Entered(&'static LockRecord),
    /// Gave up: the monitor is another thread's (`try_lock`), or the
    /// deadline passed, or the interrupt came.
    GaveUp,
    /// The key's monitor lives elsewhere; what `elsewhere` returned, run
    /// under the home's meta-lock.
    Elsewhere(R),
}

/// How long a keyed enter may wait.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Patience {
    /// Never for another thread (`try_lock`).
    None,
    /// Until the deadline, if any.
    Until(Option<Instant>),
    /// Until the calling thread's interrupt flag is set, or the deadline,
    /// if any.
    Interruptibly(Option<Instant>),
}

impl Patience {
    /// How long a queued enter waits, `interrupt` being the calling
    /// thread's flag for `Interruptibly`. `None` never queues: it waits
    /// for nobody.
    pub(crate) fn until(self, interrupt: Option<&Interrupt>) -> Until<'_> {
        match self {
            Patience::None => Until::FOREVER,
            Patience::Until(deadline) => Until::deadline(deadline),
            Patience::Interruptibly(deadline) => Until {
                deadline,
                interrupt,
            },
        }
    }
}

/// The NEUTRAL form of the word held at `held.bits`: the word itself, or the
/// payload displaced into the first record.
fn neutral_form(held: &MetaLock<'_>) -> usize {
    let bits = held.bits;
    if state(bits) == NEUTRAL {
        bits
    } else {
        // SAFETY: a LOCKED or WAITERS word points at the first record of
        // the queue, which holds the displaced payload and is not recycled
        // while we hold the meta-lock.
        unsafe { (*record_of(bits)).displaced() }
    }
}

/// Replaces the NEUTRAL form of the word held at `held.bits` with
/// `neutral`, for the release of `held`.
fn set_neutral_form(held: &mut MetaLock<'_>, neutral: usize) {
    let bits = held.bits;
    match state(bits) {
        NEUTRAL => held.bits = neutral,
        s => {
            // SAFETY: as in `neutral_form`.
            let head = unsafe { &*record_of(bits) };
            if s == LOCKED {
                // The owner's fused unlock must not restore the old form.
                held.bits = bits | QUEUE_SUMMARY;
            } else {
                debug_assert_eq!(s, WAITERS);
                if (head.displaced() ^ neutral) & OVERFLOW != 0 {
                    hooks::fire(hooks::HandoffEvent::OverflowMarkAtAQueuesHead(
                        neutral & OVERFLOW != 0,
                    ));
                }
            }
            head.set_displaced(neutral);
        }
    }
}

impl Home {
    /// The home's word.
    #[inline(always)]
    pub(crate) fn word(&'static self) -> &'static MultiUseWord {
        &self.word
    }

    /// Pins the home for a thread that is about to wait on its monitor,
    /// which it owns: adds `PINNED` to `neutral`, the NEUTRAL form the wait
    /// leaves in the word. Called under the meta-lock.
    pub(crate) fn pin_for_wait(&self, neutral: usize) -> usize {
        // Relaxed: under the meta-lock, as in `enter_slow`.
        self.pins.fetch_add(1, Ordering::Relaxed);
        neutral | PINNED
    }

    /// Ends a pin.
    pub(crate) fn unpin(&self) {
        // Release pairs with the Acquire of `enter_slow`: whatever we did
        // on the home happens before it is rekeyed.
        self.pins.fetch_sub(1, Ordering::Release);
    }

    /// The threads pinned to the home's key now, for the crate's tests: a
    /// pin that outlives its thread's wait or enter ties the home to one
    /// address for good, which no other behaviour shows at once.
    #[cfg(feature = "__test-hooks")]
    pub(crate) fn pins(&self) -> u32 {
        // Relaxed: a test reads it once the threads it asks about are done
        // (joined), which orders their decrements before the load.
        self.pins.load(Ordering::Relaxed)
    }

    /// Counts an overflow entry of this home made (`made`) or removed. Only
    /// under the meta-lock: inside `elsewhere` of `enter_slow`, or `f` of
    /// `with_meta_lock`, which clears `OVERFLOW` once the last one is gone.
    pub(crate) fn count_overflow(&self, made: bool) {
        // Relaxed, and a load and a store: under the meta-lock, which
        // orders every change.
        let count = self.overflows.load(Ordering::Relaxed);
        self.overflows
            .store(if made { count + 1 } else { count - 1 }, Ordering::Relaxed);
    }

    /// Runs `f` under the home's meta-lock (for a change to the overflow
    /// table of one of its addresses), then clears `OVERFLOW` if no
    /// overflow entry of the home is left.
    pub(crate) fn with_meta_lock<R>(&'static self, f: impl FnOnce() -> R) -> R {
        ExecEnv::with_current(|ee| {
            let mut held = self.word.get_meta_lock(ee);
            let result = f();
            // Relaxed: under the meta-lock.
            if self.overflows.load(Ordering::Relaxed) == 0 {
                let neutral = neutral_form(&held);
                if neutral & OVERFLOW != 0 {
                    set_neutral_form(&mut held, neutral & !OVERFLOW);
                }
            }
            let bits = held.bits;
            held.release(bits);
            result
        })
    }
}

/// Every home, for counts and the thread dump.
pub(crate) fn homes() -> &'static [Home] {
    &table()[..]
}

/// Whether `is_owned_by` holds of the word value `bits` for `ee`: the
/// calling thread owns the monitor.
pub(crate) fn owned_by(bits: usize, ee: &ExecEnv) -> bool {
    owner_is(bits, ee)
}

#[cfg(all(test, not(metalock_model)))]
mod tests {
    use super::*;

    /// Every address fits and comes back from its home, tagged pointers and
    /// the top of the address space included, and two addresses of one
    /// home never carry the same bits.
    #[test]
    fn a_home_carries_any_address_exactly() {
        let stride = 1_usize << (3 + INDEX_BITS);
        let mut keys = vec![1, 8, 9, 0x7fff_ffff, usize::MAX, usize::MAX - 7];
        let mut bases = vec![0x1000_usize, 0x5555_1230, usize::MAX / 3];
        #[cfg(target_pointer_width = "64")]
        bases.push(0x5555_0000_1230);
        for base in bases {
            keys.extend((0..8).map(|i| base.wrapping_add(i * stride)));
            keys.extend((0..8).map(|i| base.wrapping_add(i)));
        }
        #[cfg(target_pointer_width = "64")]
        keys.extend([0xf000_0000_0000_1238_usize, 0x0a00_7fff_dead_bee8]);
        let table = TABLE.as_ptr() as usize;
        let mut seen = std::collections::HashMap::new();
        for &key in &keys {
            let (home, bits) = locate(key);
            let index = (home as *const Home as usize - table) / core::mem::size_of::<Home>();
            assert_eq!(key_at(index, bits), key, "{key:#x}");
            assert_eq!(key_part(bits), bits);
            if let Some(other) = seen.insert((index, bits), key) {
                assert_eq!(
                    other, key,
                    "{other:#x} and {key:#x} share a home and its bits"
                );
            }
        }
    }
}
