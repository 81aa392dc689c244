//! The per-thread cache in front of the monitor table (paper 002): a small
//! direct-mapped array of the entries the thread used last, each slot
//! holding one table reference, so that locking an object the thread
//! locked recently touches no shared memory but the object's own word.
//!
//! A guard *pins* the slot it came through (a plain per-thread count), and
//! a pinned slot is never refilled: the reference it holds keeps the
//! guard's word alive. When the slot an address maps to is pinned by
//! another address, the lock takes a reference of its own from the table
//! instead.

use alloc::boxed::Box;
use core::cell::Cell;
use core::ptr::{self, NonNull};

use super::table::{hash, table};

/// The slot of `key`: the top bits of its hash, the best mixed (the low
/// bits of a multiple of an aligned address are fixed).
#[inline(always)]
fn slot_index(key: usize) -> usize {
    // One slot (under loom): no bits.
    hash(key)
        .checked_shr(u64::BITS - SLOTS.trailing_zeros())
        .unwrap_or(0) as usize
}
use crate::word::MultiUseWord;

/// Slots per thread: a power of two. Each costs 24 bytes, plus the entry it
/// keeps alive in the table (24 KiB and at most 1024 entries per thread). One under loom, so that the models also reach
/// eviction and reclamation with two objects.
const SLOTS: usize = if cfg!(loom) { 1 } else { 1024 };

/// One slot: an address, the word of its table entry (null while empty),
/// and how many guards of this thread came through it.
#[derive(Debug)]
pub(super) struct CacheSlot {
    key: Cell<usize>,
    word: Cell<*const MultiUseWord>,
    pins: Cell<usize>,
}

/// A thread's cache.
///
/// Invariant: a slot whose `word` is non-null holds one table reference to
/// the entry of `key`; `pins` counts the live guards that reach `word`
/// through the slot. Only its thread touches it.
#[derive(Debug)]
struct Cache {
    slots: [CacheSlot; SLOTS],
}

/// Owns the calling thread's cache; its destructor, at the thread's exit,
/// gives the references back.
struct CacheOwner(NonNull<Cache>);

impl Drop for CacheOwner {
    fn drop(&mut self) {
        // SAFETY: the cache is this thread's (invariant of `Cache`).
        let cache = unsafe { self.0.as_ref() };
        let mut pinned = false;
        for slot in &cache.slots {
            if slot.word.get().is_null() {
                continue;
            }
            if slot.pins.get() == 0 {
                table().release(slot.key.get());
                slot.word.set(ptr::null());
            } else {
                pinned = true;
            }
        }
        // A guard still pins a slot (forgotten, or kept by a thread-local
        // destroyed later): its pointer into the cache must stay valid, so
        // the cache is leaked, with the references of the pinned slots.
        if !pinned {
            // SAFETY: made by `Box::leak` in `new_owner`, and nothing
            // points into it any more.
            drop(unsafe { Box::from_raw(self.0.as_ptr()) });
        }
    }
}

crate::primitive::thread_local! {
    static CACHE: CacheOwner = new_owner();
}

fn new_owner() -> CacheOwner {
    let cache = Cache {
        slots: core::array::from_fn(|_| CacheSlot {
            key: Cell::new(0),
            word: Cell::new(ptr::null()),
            pins: Cell::new(0),
        }),
    };
    CacheOwner(NonNull::from(Box::leak(Box::new(cache))))
}

/// How a guard keeps its entry alive.
///
/// Invariant: `Cached` points at a slot of the calling thread's cache that
/// this pin counts in its `pins`; `Owned` holds one table reference to the
/// entry of its key. Either way the word stays valid until the pin drops,
/// on the thread that made it.
#[derive(Debug)]
pub(super) enum Pin {
    Cached(NonNull<CacheSlot>),
    Owned(usize),
}

impl Drop for Pin {
    #[inline]
    fn drop(&mut self) {
        match *self {
            // SAFETY: the slot is in this thread's cache, which outlives
            // every pin (invariants).
            Pin::Cached(slot) => unsafe {
                let pins = &slot.as_ref().pins;
                pins.set(pins.get() - 1);
            },
            Pin::Owned(key) => table().release(key),
        }
    }
}

/// Reaches the word of `key`, through the cache when it can: the word is
/// valid as long as the returned pin lives.
#[inline]
pub(super) fn pin(key: usize) -> (Pin, NonNull<MultiUseWord>) {
    let cached = CACHE.try_with(|owner| {
        // SAFETY: the cache is this thread's.
        let cache = unsafe { owner.0.as_ref() };
        let slot = &cache.slots[slot_index(key)];
        if slot.key.get() != key || slot.word.get().is_null() {
            if slot.pins.get() != 0 {
                return None;
            }
            refill(slot, key);
        }
        slot.pins.set(slot.pins.get() + 1);
        // SAFETY: a filled slot's word is non-null.
        let word = unsafe { NonNull::new_unchecked(slot.word.get().cast_mut()) };
        Some((Pin::Cached(NonNull::from(slot)), word))
    });
    match cached {
        Ok(Some(pinned)) => pinned,
        // The slot is pinned by another address, or the thread's
        // thread-locals are being destroyed.
        _ => (Pin::Owned(key), table().acquire(key)),
    }
}

/// Points an unpinned `slot` at the entry of `key`, giving back the
/// reference it held.
#[cold]
fn refill(slot: &CacheSlot, key: usize) {
    let word = table().acquire(key);
    if !slot.word.get().is_null() {
        table().release(slot.key.get());
    }
    slot.key.set(key);
    slot.word.set(word.as_ptr());
}

/// Runs `f` on the word of `key` if this thread's cache or the table has
/// one, without making an entry.
pub(super) fn inspect<R>(key: usize, f: impl FnOnce(&MultiUseWord) -> R) -> Option<R> {
    let cached = CACHE
        .try_with(|owner| {
            // SAFETY: the cache is this thread's.
            let cache = unsafe { owner.0.as_ref() };
            let slot = &cache.slots[slot_index(key)];
            (slot.key.get() == key).then(|| slot.word.get())
        })
        .ok()
        .flatten()
        .filter(|word| !word.is_null());
    match cached {
        // SAFETY: the slot holds a reference to the entry, and `f` runs on
        // this thread before anything can refill it.
        Some(word) => Some(f(unsafe { &*word })),
        None => table().inspect(key, f),
    }
}
