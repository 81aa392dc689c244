//! The overflow table: the monitors of addresses that found their home
//! (`crate::monitor::home`) serving another address, found by hashing the
//! address into shards of maps. Each entry is a word of its own, run by the
//! same monitor protocol.
//!
//! # Reclamation
//!
//! Each entry counts its references: one per guard or operation that
//! reached it. Every thread inside the monitor protocol on an entry's word
//! (holding it, queued to enter, waiting, notifying) holds one, so when the
//! count reaches zero nobody can reach the word, which is NEUTRAL: the entry
//! leaves the table and its word is recycled. One thread touches a word
//! without a reference: a `Condition`'s notifier that does not hold the
//! monitor moves waiters into the word's queue; it does so under the
//! condition's wait-table stripe, which a waiter (holding a reference) must
//! take to leave, so the word outlives that too. A change to `wait` must
//! keep it so. Counts change only under the entry's shard lock, which is
//! also what a lookup holds, so no entry is freed while a thread can still
//! find it. A reference count in the entry fits here because every reader
//! already announces itself (it is about to enter the monitor, which it
//! must anyway); epochs or hazard pointers would add a second announcement
//! to the path, and would keep the memory of an idle entry until a later
//! collection. The table shrinks as entries leave, so its size follows the
//! number of overflowing monitors in use, not the number ever used.
//!
//! # Concurrency
//!
//! The table is split into shards by the address's hash, each with its own
//! lock, on its own cache line. Lock order: a home's meta-lock, then a
//! shard lock (entries are made and dropped under the meta-lock of their
//! address's home, see `crate::keyed`), then an entry's meta-lock (`inspect`
//! runs under the shard lock, and may wait for that meta-lock there). No
//! holder of an entry's meta-lock takes a shard lock or a home's meta-lock,
//! so the order has no cycle; a change that made one would deadlock.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::hash::{BuildHasherDefault, Hasher};
use core::ptr::NonNull;
use std::collections::HashMap;

use crossbeam_utils::CachePadded;

use crate::primitive::{Ordering, SysMutex};
use crate::word::{MultiUseWord, NEUTRAL};

/// Shards of the table: a power of two, a few times the core counts the
/// crate expects, so that two threads rarely meet in one.
const SHARDS: usize = 64;

/// Recycled words a shard keeps, so that a miss of the cache neither
/// allocates nor frees in the common case.
const RECYCLED_PER_SHARD: usize = 8;

/// Multiplies by 2^64 / phi (Fibonacci hashing): consecutive addresses land
/// far apart, and the high bits are the best mixed.
#[inline(always)]
pub(super) fn hash(key: usize) -> u64 {
    (key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// A hasher for keys already hashed by [`hash`].
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, _: &[u8]) {
        unreachable!("the table hashes addresses only");
    }

    fn write_usize(&mut self, key: usize) {
        // The map takes its bucket from the low bits and its tag from the
        // top ones: the low bits of an aligned address's product are zero
        // and the top ones chose the shard, so both get the middle bits.
        self.0 = hash(key).rotate_left(32);
    }
}

/// A table entry's word, on a cache line of its own: a contended keyed
/// monitor must not share its line with whatever the allocator put next
/// to it (an embedded word shares only with its own object). One line, not
/// crossbeam's two: entries are many, and adjacent-line prefetch pairing
/// is the lesser cost.
#[repr(C, align(64))]
struct EntryWord(MultiUseWord);

/// A table entry: the word, boxed so that its address stays put while the
/// map moves its slots, and its reference count.
struct Slot {
    word: NonNull<MultiUseWord>,
    refs: usize,
}

/// One shard: its entries by address, and recycled words.
///
/// Invariant: every `Slot::word` and every word in `recycled` came from
/// `fresh_word` and is owned by this shard; a recycled word is NEUTRAL
/// with payload 0.
struct Shard {
    entries: HashMap<usize, Slot, BuildHasherDefault<KeyHasher>>,
    recycled: Vec<NonNull<MultiUseWord>>,
}

// SAFETY: the words a shard points at are owned by it (invariant) and only
// reached under its lock or through a reference the lock handed out.
unsafe impl Send for Shard {}

/// The table: shards of entries.
pub(super) struct Table {
    shards: [CachePadded<SysMutex<Shard>>; SHARDS],
}

impl core::fmt::Debug for Table {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Table").finish_non_exhaustive()
    }
}

#[cfg(not(metalock_model))]
static TABLE: Table = Table {
    shards: [const {
        CachePadded::new(SysMutex::new(Shard {
            entries: HashMap::with_hasher(BuildHasherDefault::new()),
            recycled: Vec::new(),
        }))
    }; SHARDS],
};

#[cfg(metalock_model)]
crate::primitive::lazy_static! {
    static ref TABLE: Table = Table {
        shards: core::array::from_fn(|_| {
            CachePadded::new(SysMutex::new(Shard {
                entries: HashMap::with_hasher(BuildHasherDefault::new()),
                recycled: Vec::new(),
            }))
        }),
    };
}

/// A word for a new entry, as the shard invariant wants it: the pointer
/// from `Box::into_raw`, cast to its first (`repr(C)`) field, so that it
/// keeps the provenance of the whole allocation for `Box::from_raw`.
fn fresh_word() -> NonNull<MultiUseWord> {
    let entry = Box::into_raw(Box::new(EntryWord(MultiUseWord::new())));
    // SAFETY: `Box::into_raw` never returns null.
    unsafe { NonNull::new_unchecked(entry.cast::<MultiUseWord>()) }
}

/// A release that broke the table's invariants: of a key with no entry
/// (`bits` is `None`), or of the last reference to a word still in use.
#[derive(Debug)]
pub(super) struct Misuse {
    bits: Option<usize>,
}

impl Misuse {
    /// Panics with what went wrong.
    #[cold]
    pub(super) fn raise(self) -> ! {
        match self.bits {
            None => panic!("metalock: a keyed monitor released more often than acquired"),
            Some(bits) => panic!("metalock: reclaimed a keyed monitor in use (word {bits:#x})"),
        }
    }
}

/// The process's table.
#[inline]
pub(super) fn table() -> &'static Table {
    &TABLE
}

impl Table {
    fn shard(&self, key: usize) -> &SysMutex<Shard> {
        // The top bits: the best mixed, and not the ones the map uses first.
        &self.shards[(hash(key) >> (u64::BITS - SHARDS.trailing_zeros())) as usize]
    }

    /// Takes a reference to the entry of `key`, making it if there is none
    /// (then `true`). The word stays valid until the matching
    /// [`release`](Self::release).
    pub(super) fn acquire(&self, key: usize) -> (NonNull<MultiUseWord>, bool) {
        self.shard(key).with(|shard| {
            let Shard { entries, recycled } = shard;
            let mut made = false;
            let slot = entries.entry(key).or_insert_with(|| {
                made = true;
                Slot {
                    word: recycled.pop().unwrap_or_else(fresh_word),
                    refs: 0,
                }
            });
            slot.refs += 1;
            (slot.word, made)
        })
    }

    /// Gives back a reference `acquire` took; the last one reclaims the
    /// entry (then `Ok(true)`). A misuse is returned, not raised: the
    /// caller holds a meta-lock, under which nothing may unwind, and
    /// raises it with [`Misuse::raise`] once released.
    pub(super) fn release(&self, key: usize) -> Result<bool, Misuse> {
        // Checked after the shard lock is released too: a panic under it
        // would leave the shard locked (`SysMutex::with` must not unwind).
        let released = self.shard(key).with(|shard| {
            let Some(slot) = shard.entries.get_mut(&key) else {
                return Err(None);
            };
            slot.refs -= 1;
            if slot.refs > 0 {
                return Ok(false);
            }
            let word = slot.word;
            shard.entries.remove(&key);
            // One load, and the loom models' witness that no thread was
            // still inside the monitor. Relaxed: the shard lock orders every
            // access of the threads that held references.
            // SAFETY: the shard owns the word (invariant), and with no
            // reference left no thread can reach it.
            let bits = unsafe { word.as_ref() }.word.load(Ordering::Relaxed);
            if bits != NEUTRAL {
                // Leaked rather than recycled: something still uses it.
                return Err(Some(bits));
            }
            if shard.recycled.len() < RECYCLED_PER_SHARD {
                shard.recycled.push(word);
            } else {
                // SAFETY: as above; made by `fresh_word`.
                drop(unsafe { Box::from_raw(word.as_ptr().cast::<EntryWord>()) });
            }
            let capacity = shard.entries.capacity();
            if capacity > 64 && shard.entries.len() * 8 < capacity {
                shard.entries.shrink_to(shard.entries.len() * 2);
            }
            Ok(true)
        });
        released.map_err(|bits| Misuse { bits })
    }

    /// Runs `f` on the word of `key` if it has an entry (under its shard's
    /// lock, which keeps the entry alive), without making one.
    pub(super) fn inspect<R>(&self, key: usize, f: impl FnOnce(&MultiUseWord) -> R) -> Option<R> {
        self.shard(key).with(|shard| {
            shard
                .entries
                .get(&key)
                // SAFETY: the entry is in the table, whose lock we hold, so
                // it is not reclaimed under us.
                .map(|slot| f(unsafe { slot.word.as_ref() }))
        })
    }

    /// The key of every entry, by the address of its word.
    #[cfg(all(feature = "diagnostics", not(metalock_model)))]
    pub(super) fn keys_by_word(&self) -> HashMap<usize, usize> {
        let mut keys = HashMap::new();
        for shard in &self.shards {
            shard.with(|shard| {
                for (&key, slot) in &shard.entries {
                    keys.insert(slot.word.as_ptr() as usize, key);
                }
            });
        }
        keys
    }

    /// How many entries the table holds: one per overflowing address some
    /// thread holds, enters or waits on.
    pub(super) fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|shard| shard.with(|shard| shard.entries.len()))
            .sum()
    }
}
