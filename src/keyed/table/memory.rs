//! The overflow table's memory, made and freed with none of its locks held
//! (see "Allocation" in the parent module): entry words, maps sized
//! outside the lock, the word a thread reserves for its next entry, and
//! what a release leaves to free once its caller holds no lock.

use alloc::boxed::Box;
use core::hash::BuildHasherDefault;
use core::ptr::NonNull;
use std::collections::HashMap;

use super::{EntryWord, MIN_CAPACITY, Map, SHRINK_ABOVE, Shard};
use crate::primitive::SysMutex;
use crate::word::MultiUseWord;

/// A word for a new entry, as the shard invariant wants it: the pointer
/// from `Box::into_raw`, cast to its first (`repr(C)`) field, so that it
/// keeps the provenance of the whole allocation for `Box::from_raw`.
pub(super) fn fresh_word() -> NonNull<MultiUseWord> {
    let entry = Box::into_raw(Box::new(EntryWord(MultiUseWord::new())));
    // SAFETY: `Box::into_raw` never returns null.
    unsafe { NonNull::new_unchecked(entry.cast::<MultiUseWord>()) }
}

/// Frees a word.
///
/// # Safety
/// `word` came from `fresh_word`, and nothing can reach it any more.
pub(super) unsafe fn free_word(word: NonNull<MultiUseWord>) {
    // SAFETY: `fresh_word`'s pointer, with the provenance of the whole
    // `EntryWord`; unreachable (caller's contract).
    drop(unsafe { Box::from_raw(word.as_ptr().cast::<EntryWord>()) });
}

/// A map of at least `capacity` entries, allocated with no lock held.
pub(super) fn map_with(capacity: Option<usize>) -> Option<Map> {
    capacity.map(|capacity| HashMap::with_capacity_and_hasher(capacity, BuildHasherDefault::new()))
}

/// Moves the entries of `entries` into `fresh` and swaps the two maps, if
/// `wanted` still asks for a new map (another thread may have changed the
/// map since `fresh` was sized) and `fresh` holds them all and `room` more:
/// no insert allocates. `fresh` is left with the map to free after the
/// lock.
pub(super) fn swap_maps(
    entries: &mut Map,
    fresh: &mut Map,
    wanted: fn(&Map) -> Option<usize>,
    room: usize,
) {
    if wanted(entries).is_some() && fresh.capacity() >= entries.len() + room {
        for (key, slot) in entries.drain() {
            fresh.insert(key, slot);
        }
        core::mem::swap(entries, fresh);
    }
}

/// A map that is full: it needs a larger one for another entry.
pub(super) fn full(entries: &Map) -> Option<usize> {
    (entries.len() >= entries.capacity()).then(|| (2 * entries.len()).max(MIN_CAPACITY))
}

/// A map that is mostly empty: it shrinks, so that the table follows the
/// number of entries in use.
pub(super) fn sparse(entries: &Map) -> Option<usize> {
    let capacity = entries.capacity();
    (capacity > SHRINK_ABOVE && entries.len() * 8 < capacity).then(|| entries.len() * 2)
}

/// `acquire` found no entry and could not make one without allocating.
#[derive(Debug)]
pub(in crate::keyed) struct NoRoom;

/// A word set aside for one thread's next `acquire`, where no other thread
/// can take it, with the shard it came for. Dropped unused, it goes to that
/// shard's spares (or is freed if they are full), so it is dropped with no
/// lock held.
///
/// Invariant: the word, if any, came from `fresh_word` or the shard's
/// spares, is NEUTRAL with payload 0, and nothing else reaches it.
pub(in crate::keyed) struct Reserved(
    pub(super) Option<(NonNull<MultiUseWord>, &'static SysMutex<Shard>)>,
);

impl Reserved {
    /// No word reserved yet.
    pub(in crate::keyed) fn none() -> Self {
        Self(None)
    }

    /// Whether a word is reserved.
    pub(in crate::keyed) fn is_some(&self) -> bool {
        self.0.is_some()
    }
}

impl Drop for Reserved {
    fn drop(&mut self) {
        let Some((word, shard)) = self.0.take() else {
            return;
        };
        if let Some(unwanted) = shard.with(|shard| shard.spares.push(word)) {
            // SAFETY: ours alone (invariant), and made by `fresh_word`.
            unsafe { free_word(unwanted) };
        }
    }
}

/// What the release of an entry leaves to do once its caller holds no
/// lock (see "Allocation" above). Dropping it frees the entry's word if
/// the shard kept no spare of it, and shrinks the shard's map if mostly
/// empty.
#[must_use = "dropped under a lock, it would free memory there"]
pub(in crate::keyed) struct Leftover {
    pub(super) shard: &'static SysMutex<Shard>,
    pub(super) word: Option<NonNull<MultiUseWord>>,
    pub(super) shrink: bool,
}

impl Drop for Leftover {
    fn drop(&mut self) {
        if let Some(word) = self.word.take() {
            // SAFETY: the word of a reclaimed entry, out of the table and
            // not kept as a spare: nothing reaches it.
            unsafe { free_word(word) };
        }
        if self.shrink {
            let capacity = self.shard.with(|shard| sparse(&shard.entries));
            if let Some(mut fresh) = map_with(capacity) {
                // An empty map shrinks to none at all.
                self.shard
                    .with(|shard| swap_maps(&mut shard.entries, &mut fresh, sparse, 0));
            }
        }
    }
}

/// A release that broke the table's invariants: of a key with no entry
/// (`bits` is `None`), or of the last reference to a word still in use
/// (the entry stays, so that its address keeps one monitor).
#[derive(Debug)]
pub(in crate::keyed) struct Misuse {
    pub(super) bits: Option<usize>,
}

impl Misuse {
    /// Panics with what went wrong.
    #[cold]
    pub(in crate::keyed) fn raise(self) -> ! {
        match self.bits {
            None => panic!("metalock: a keyed monitor released more often than acquired"),
            Some(bits) => panic!(
                "metalock: the last reference to a keyed monitor in use was given back (word \
                 {bits:#x}); its entry is kept"
            ),
        }
    }
}
