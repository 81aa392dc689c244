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
//!
//! Under loom there is no cache: every lock takes its own reference and
//! every unlock gives it back, so the models reach insertion and
//! reclamation racing each other on every operation (and loom's statics,
//! the table among them, are gone before a model's main thread runs its
//! thread-local destructors, where a cache would give its references back).

#[cfg(not(metalock_model))]
use alloc::boxed::Box;
#[cfg(not(metalock_model))]
use core::cell::Cell;
#[cfg(not(metalock_model))]
use core::ptr;
use core::ptr::NonNull;

#[cfg(not(metalock_model))]
use super::table::hash;
use super::table::table;
use crate::word::MultiUseWord;

/// Slots per thread: a power of two. Each costs 24 bytes, plus the entry it
/// keeps alive in the table (24 KiB and at most 1024 entries per thread).
#[cfg(not(metalock_model))]
const SLOTS: usize = 1024;

/// The slot of `key`: the top bits of its hash, the best mixed (the low
/// bits of a multiple of an aligned address are fixed).
#[cfg(not(metalock_model))]
#[inline(always)]
fn slot_index(key: usize) -> usize {
    (hash(key) >> (u64::BITS - SLOTS.trailing_zeros())) as usize
}

/// One slot: an address, the word of its table entry (null while empty),
/// and how many guards of this thread came through it.
#[cfg(not(metalock_model))]
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
#[cfg(not(metalock_model))]
#[derive(Debug)]
struct Cache {
    slots: [CacheSlot; SLOTS],
}

/// Added to `pins` of a slot still pinned when the owner's destructor ran:
/// the last pin of the slot gives its reference back.
#[cfg(not(metalock_model))]
const ORPHANED: usize = 1 << (usize::BITS - 1);

/// `CURRENT` once the thread's cache was given back (its thread-locals are
/// being destroyed): keyed locks take their own references from then on.
#[cfg(not(metalock_model))]
const RETIRED: *const Cache = ptr::without_provenance(1);

/// Owns the calling thread's cache (null until the first keyed lock); its
/// destructor, at the thread's exit, gives the references back.
#[cfg(not(metalock_model))]
struct CacheOwner(Cell<*mut Cache>);

#[cfg(not(metalock_model))]
impl Drop for CacheOwner {
    fn drop(&mut self) {
        let cache = self.0.get();
        CURRENT.with(|current| current.set(RETIRED));
        if cache.is_null() {
            return;
        }
        // SAFETY: the cache is this thread's (invariant of `Cache`), made by
        // `attach`.
        let slots = unsafe { &(*cache).slots };
        let mut pinned = false;
        for slot in slots {
            if slot.word.get().is_null() {
                continue;
            }
            if slot.pins.get() == 0 {
                table().release(slot.key.get());
                slot.word.set(ptr::null());
            } else {
                slot.pins.set(slot.pins.get() | ORPHANED);
                pinned = true;
            }
        }
        // A guard still pins a slot (forgotten, or kept by a thread-local
        // destroyed later): its pointer into the cache must stay valid, so
        // the cache is leaked; the last pin of each such slot, marked
        // ORPHANED, gives its reference back.
        if !pinned {
            // SAFETY: made by `Box::into_raw` in `attach`, and nothing
            // points into it any more.
            drop(unsafe { Box::from_raw(cache) });
        }
    }
}

#[cfg(not(metalock_model))]
crate::primitive::thread_local! {
    /// The hot path's view of the cache: a plain, const-initialised cell
    /// with no destructor, so reading it is one thread-local load, at any
    /// point of the thread's life. Null before the first keyed lock,
    /// [`RETIRED`] after the owner's destructor.
    static CURRENT: Cell<*const Cache> = const { Cell::new(ptr::null()) };
    static OWNER: CacheOwner = const { CacheOwner(Cell::new(ptr::null_mut())) };
}

/// The calling thread's cache, made on its first use; `None` once it was
/// given back.
#[cfg(not(metalock_model))]
#[inline(always)]
fn current() -> Option<&'static Cache> {
    let mut cache = CURRENT.with(Cell::get);
    if cache.is_null() {
        cache = attach();
    }
    // SAFETY: a cache other than null and RETIRED is the thread's, alive
    // until its owner's destructor sets RETIRED (or for ever, leaked).
    (cache != RETIRED).then(|| unsafe { &*cache })
}

/// Makes the calling thread's cache and registers its owner, unless the
/// thread's thread-locals are already being destroyed.
#[cfg(not(metalock_model))]
#[cold]
fn attach() -> *const Cache {
    let cache = Box::into_raw(Box::new(Cache {
        slots: core::array::from_fn(|_| CacheSlot {
            key: Cell::new(0),
            word: Cell::new(ptr::null()),
            pins: Cell::new(0),
        }),
    }));
    let current = if OWNER.try_with(|owner| owner.0.set(cache)).is_ok() {
        cache.cast_const()
    } else {
        // SAFETY: just made, and no one else saw it.
        drop(unsafe { Box::from_raw(cache) });
        RETIRED
    };
    CURRENT.with(|c| c.set(current));
    current
}

/// How a guard keeps its entry alive.
///
/// Invariant: `Cached` points at a slot of the calling thread's cache (or
/// of its leaked remains) that this pin counts in its `pins`; `Owned` holds one table reference to the
/// entry of its key. Either way the word stays valid until the pin drops,
/// on the thread that made it.
#[derive(Debug)]
pub(super) enum Pin {
    #[cfg(not(metalock_model))]
    Cached(NonNull<CacheSlot>),
    Owned(usize),
}

impl Drop for Pin {
    #[inline]
    fn drop(&mut self) {
        match *self {
            // SAFETY: the slot is in this thread's cache, which outlives
            // every pin (invariants).
            #[cfg(not(metalock_model))]
            Pin::Cached(slot) => unsafe {
                let slot = slot.as_ref();
                let pins = slot.pins.get() - 1;
                slot.pins.set(pins);
                if pins == ORPHANED {
                    orphan_released(slot);
                }
            },
            Pin::Owned(key) => table().release(key),
        }
    }
}

/// Reaches the word of `key`, through the cache when it can: the word is
/// valid as long as the returned pin lives.
#[inline]
pub(super) fn pin(key: usize) -> (Pin, NonNull<MultiUseWord>) {
    #[cfg(metalock_model)]
    let cached: Option<Option<(Pin, NonNull<MultiUseWord>)>> = None;
    #[cfg(not(metalock_model))]
    let cached = current().map(|cache| {
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
        Some(Some(pinned)) => pinned,
        // The slot is pinned by another address, or the thread's
        // thread-locals are being destroyed.
        _ => (Pin::Owned(key), table().acquire(key)),
    }
}

/// The last pin of a slot orphaned by the owner's destructor: gives the
/// slot's reference back.
#[cfg(not(metalock_model))]
#[cold]
fn orphan_released(slot: &CacheSlot) {
    table().release(slot.key.get());
    slot.word.set(ptr::null());
    slot.pins.set(0);
}

/// Points an unpinned `slot` at the entry of `key`, giving back the
/// reference it held.
#[cfg(not(metalock_model))]
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
    #[cfg(metalock_model)]
    let cached: Option<*const MultiUseWord> = None;
    #[cfg(not(metalock_model))]
    let cached = {
        let cache = CURRENT.with(Cell::get);
        // SAFETY: as in `current`; a query makes no cache.
        (!cache.is_null() && cache != RETIRED)
            .then(|| unsafe { &(*cache).slots[slot_index(key)] })
            .filter(|slot| slot.key.get() == key && !slot.word.get().is_null())
            .map(|slot| slot.word.get())
    };
    match cached {
        // SAFETY: the slot holds a reference to the entry, and `f` runs on
        // this thread before anything can refill it.
        Some(word) => Some(f(unsafe { &*word })),
        None => table().inspect(key, f),
    }
}
