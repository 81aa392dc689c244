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
//! monitor moves waiters into the word's queue, under the condition's
//! wait-table stripe. A waiter still in the stripe cannot leave without
//! that stripe; one it moved leaves only after it takes the monitor, which
//! it reaches through the word's meta-lock or the word itself, after the
//! notifier's last access to the word: the release of that meta-lock. So
//! the word outlives the notify. A change to `wait`, or a notifier that
//! touched the word after that release, must keep it so. Counts change only under the entry's shard lock, which is
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
//! address's home, see `crate::keyed`). An entry's meta-lock is taken with
//! neither held: a reader of a BUSY entry takes a reference
//! ([`Table::inspect`]) and waits for the meta-lock after the shard
//! lock, so that no thread waits there with a shard lock, which the
//! holders of homes' meta-locks queue on. No holder of an entry's meta-lock
//! takes a shard lock or a home's meta-lock, so the order has no cycle; a
//! change that made one would deadlock.
//!
//! # Allocation
//!
//! Nothing is allocated or freed under a shard lock or a home's meta-lock:
//! a global allocator may lock monitors, and one that locked a keyed value
//! overflowing into the same shard, or of the same home, would wait on its
//! own thread. [`Table::acquire`] makes an entry only from a word reserved
//! for the caller or a spare, and a map with room for one more, and
//! otherwise says [`NoRoom`]: the caller releases its locks, calls
//! [`Table::make_room`], and tries again. The word `make_room` finds is
//! the caller's alone (a [`Reserved`]), so a try fails again only if the
//! map filled up meanwhile (and the next `make_room` grows it). A
//! release hands what it frees, and a map to shrink, to its caller as a
//! [`Leftover`], dropped once no lock is held. A map changes size by
//! moving its entries into one allocated outside the lock.

use core::hash::{BuildHasherDefault, Hasher};
use core::ptr::NonNull;
use std::collections::HashMap;

use crossbeam_utils::CachePadded;

use crate::primitive::{Ordering, SysMutex};
use crate::word::{MultiUseWord, NEUTRAL};

mod memory;

pub(super) use self::memory::{Leftover, Misuse, NoRoom, Reserved};
use self::memory::{fresh_word, full, map_with, sparse, swap_maps};

/// Shards of the table: a power of two, a few times the core counts the
/// crate expects, so that two threads rarely meet in one. Under the model
/// checkers one, as for the homes and the wait table's stripes: the shard
/// of an address must not differ between a model's executions, where
/// allocations land at different addresses.
#[cfg(not(metalock_model))]
const SHARDS: usize = 64;
#[cfg(metalock_model)]
const SHARDS: usize = 1;

/// Spare words a shard keeps, so that making and reclaiming entries
/// neither allocates nor frees in the common case.
const SPARES_PER_SHARD: usize = 8;

/// The smallest map a shard allocates.
const MIN_CAPACITY: usize = 8;

/// The capacity above which a map mostly empty shrinks.
const SHRINK_ABOVE: usize = 64;

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

type Map = HashMap<usize, Slot, BuildHasherDefault<KeyHasher>>;

/// One shard: its entries by address, and spare words for new entries.
///
/// Invariant: every `Slot::word` and every word in `spares` came from
/// `fresh_word` and is owned by this shard; a spare word is NEUTRAL with
/// payload 0.
struct Shard {
    entries: Map,
    spares: Spares,
}

// SAFETY: the words a shard points at are owned by it (invariant) and only
// reached under its lock or through a reference the lock handed out.
unsafe impl Send for Shard {}

impl Shard {
    const fn new() -> Self {
        Self {
            entries: HashMap::with_hasher(BuildHasherDefault::new()),
            spares: Spares {
                words: [None; SPARES_PER_SHARD],
                len: 0,
            },
        }
    }
}

/// A shard's spare words: a stack of fixed size, so that keeping one never
/// allocates.
///
/// Invariant: `words[..len]` are `Some`, the rest `None`.
struct Spares {
    words: [Option<NonNull<MultiUseWord>>; SPARES_PER_SHARD],
    len: usize,
}

impl Spares {
    fn pop(&mut self) -> Option<NonNull<MultiUseWord>> {
        self.len = self.len.checked_sub(1)?;
        self.words[self.len].take()
    }

    /// Keeps `word`, or hands it back if the stack is full.
    fn push(&mut self, word: NonNull<MultiUseWord>) -> Option<NonNull<MultiUseWord>> {
        let Some(free) = self.words.get_mut(self.len) else {
            return Some(word);
        };
        *free = Some(word);
        self.len += 1;
        None
    }
}

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
impl Table {
    const fn new() -> Self {
        Self {
            shards: [const { CachePadded::new(SysMutex::new(Shard::new())) }; SHARDS],
        }
    }
}

#[cfg(not(metalock_model))]
static TABLE: Table = Table::new();

#[cfg(metalock_model)]
crate::primitive::lazy_static! {
    static ref TABLE: Table = Table {
        shards: core::array::from_fn(|_| CachePadded::new(SysMutex::new(Shard::new()))),
    };
}

/// Creates this execution's overflow table (`model::start_execution`).
#[cfg(loom)]
pub(crate) fn create_table() {
    let _ = core::ops::Deref::deref(&TABLE);
}

/// The process's table.
#[inline]
pub(super) fn table() -> &'static Table {
    &TABLE
}

impl Table {
    fn shard(&self, key: usize) -> &SysMutex<Shard> {
        // The top bits: the best mixed, and not the ones the map uses first.
        &self.shards[hash(key)
            .checked_shr(u64::BITS - SHARDS.trailing_zeros())
            .unwrap_or(0) as usize]
    }

    /// Checks, in debug builds, that `reserved` holds no word or one for the
    /// shard of `key`. Called before the home's meta-lock, under which
    /// [`acquire`](Self::acquire) uses the word and nothing may unwind.
    #[inline]
    pub(super) fn debug_assert_reserved_for(&self, key: usize, reserved: &Reserved) {
        debug_assert!(
            reserved
                .0
                .is_none_or(|(_, of)| core::ptr::eq(of, self.shard(key))),
            "a word reserved for another shard"
        );
    }

    /// Takes a reference to the entry of `key`, making it if there is none
    /// (then `true`) from the word `reserved` holds or a spare. The word
    /// stays valid until the matching [`release`](Self::release).
    /// Allocates nothing: [`NoRoom`] if making the entry would.
    pub(super) fn acquire(
        &self,
        key: usize,
        reserved: &mut Reserved,
    ) -> Result<(NonNull<MultiUseWord>, bool), NoRoom> {
        self.shard(key).with(|shard| {
            if let Some(slot) = shard.entries.get_mut(&key) {
                slot.refs += 1;
                return Ok((slot.word, false));
            }
            if shard.entries.len() >= shard.entries.capacity() {
                return Err(NoRoom);
            }
            let reserved = reserved.0.take().map(|(word, _)| word);
            let word = reserved.or_else(|| shard.spares.pop()).ok_or(NoRoom)?;
            // No allocation: the map has room (checked above).
            shard.entries.insert(key, Slot { word, refs: 1 });
            Ok((word, true))
        })
    }

    /// Makes room for one more entry in the shard of `key`, after
    /// [`NoRoom`], allocating with no lock held: a word for `reserved` (a
    /// spare if the shard has one), and a larger map if its map is full.
    #[cold]
    pub(super) fn make_room(&'static self, key: usize, reserved: &mut Reserved) {
        let shard = self.shard(key);
        let need_word = reserved.0.is_none();
        let (spare, capacity) = shard.with(|shard| {
            let spare = if need_word { shard.spares.pop() } else { None };
            (spare, full(&shard.entries))
        });
        if need_word {
            reserved.0 = Some((spare.unwrap_or_else(fresh_word), shard));
        }
        if let Some(mut fresh) = map_with(capacity) {
            shard.with(|shard| swap_maps(&mut shard.entries, &mut fresh, full, 1));
        }
    }

    /// Gives back a reference `acquire` took; the last one reclaims the
    /// entry (then `Some`, to be dropped once the caller holds no lock). A
    /// misuse is returned, not raised: the caller holds a meta-lock, under
    /// which nothing may unwind, and raises it with [`Misuse::raise`] once
    /// released.
    pub(super) fn release(&'static self, key: usize) -> Result<Option<Leftover>, Misuse> {
        let shard = self.shard(key);
        // Raised by the caller, after its meta-lock: nothing may unwind
        // under a meta-lock.
        let released = shard.with(|shard| {
            let Some(slot) = shard.entries.get_mut(&key) else {
                return Err(None);
            };
            // An entry kept after a misuse may have no reference left to
            // give back: that is a misuse again, raised after the meta-lock.
            let Some(refs) = slot.refs.checked_sub(1) else {
                return Err(None);
            };
            slot.refs = refs;
            if refs > 0 {
                return Ok(None);
            }
            let word = slot.word;
            // One load, and the loom models' witness that no thread was
            // still inside the monitor. Relaxed: the shard lock orders every
            // access of the threads that held references.
            // SAFETY: the shard owns the word (invariant), and with no
            // reference left no thread can reach it.
            let bits = unsafe { word.as_ref() }.word.load(Ordering::Relaxed);
            if bits != NEUTRAL {
                // Kept, not recycled: something still uses it, and the key
                // must go on finding it (a fresh word would be a second
                // monitor for the same address).
                return Err(Some(bits));
            }
            shard.entries.remove(&key);
            Ok(Some((
                shard.spares.push(word),
                sparse(&shard.entries).is_some(),
            )))
        });
        match released {
            Ok(reclaimed) => Ok(reclaimed.map(|(word, shrink)| Leftover {
                shard,
                word,
                shrink,
            })),
            Err(bits) => Err(Misuse { bits }),
        }
    }

    /// Runs `f` on the word and its value of the entry of `key`, if it has
    /// one, without making one: under the shard's lock (which keeps the
    /// entry alive) unless the word is BUSY. A BUSY word's value needs its
    /// meta-lock, which nobody may wait for under a shard lock, and so may
    /// what `f` wants (`None`): then a reference to the entry is taken
    /// instead, and returned, for the caller to read the word with no lock
    /// held and give the reference back with [`release`](Self::release).
    pub(super) fn inspect<R>(
        &self,
        key: usize,
        f: impl Fn(&MultiUseWord, usize) -> Option<R>,
    ) -> Option<Result<R, NonNull<MultiUseWord>>> {
        self.shard(key).with(|shard| {
            let slot = shard.entries.get_mut(&key)?;
            // SAFETY: the entry is in the table, whose lock we hold, so it
            // is not reclaimed under us.
            let word = unsafe { slot.word.as_ref() };
            let found = under_shard(|| word.inspect_unless_busy(|bits| f(word, bits)));
            Some(found.flatten().ok_or_else(|| {
                slot.refs += 1;
                slot.word
            }))
        })
    }

    /// The key of every entry, by the address of its word. Room is made
    /// before each shard's lock, for the count seen under an earlier one;
    /// if the shard grew meanwhile, it is asked again.
    #[cfg(all(feature = "diagnostics", not(metalock_model)))]
    pub(super) fn keys_by_word(&self) -> HashMap<usize, usize> {
        let mut keys = HashMap::new();
        for shard in &self.shards {
            loop {
                keys.reserve(shard.with(|shard| shard.entries.len()));
                let copied = shard.with(|shard| {
                    if keys.capacity() - keys.len() < shard.entries.len() {
                        return false;
                    }
                    for (&key, slot) in &shard.entries {
                        keys.insert(slot.word.as_ptr() as usize, key);
                    }
                    true
                });
                if copied {
                    break;
                }
            }
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

/// Runs `f`, code run under a shard's lock, marked so for the crate's
/// tests, which stop the process if it asks for a meta-lock
/// (`primitive::held`).
#[inline(always)]
fn under_shard<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(all(feature = "__test-hooks", feature = "std", not(metalock_model)))]
    return crate::primitive::held::under_shard(f);
    #[cfg(not(all(feature = "__test-hooks", feature = "std", not(metalock_model))))]
    f()
}

#[cfg(all(test, not(metalock_model)))]
mod tests;
