use core::cell::Cell;

std::thread_local! {
    // Const, without a destructor: readable from an allocator at any
    // point of a thread's life.
    static HELD: Cell<usize> = const { Cell::new(0) };
    // Whether the thread runs code under an overflow shard's lock.
    static UNDER_SHARD: Cell<bool> = const { Cell::new(false) };
}

/// What a meta-lock asked for under an overflow shard's lock stops with.
const META_LOCK_UNDER_SHARD: &str = "metalock: a meta-lock asked for under an overflow shard's \
    lock (the order is a home's meta-lock, then a shard; an entry's meta-lock is taken with \
    neither held)";

/// Runs `f`, which the keyed table runs under an overflow shard's lock,
/// so that `check_no_shard` sees it. Debug builds only.
#[inline(always)]
pub(crate) fn under_shard<R>(f: impl FnOnce() -> R) -> R {
    if !cfg!(debug_assertions) {
        return f();
    }
    UNDER_SHARD.with(|under| under.set(true));
    let found = f();
    UNDER_SHARD.with(|under| under.set(false));
    found
}

/// Stops the process if the calling thread asks for a meta-lock under an
/// overflow shard's lock: a thread that holds that meta-lock may wait for
/// the shard (a home's meta-lock, then its shard, is the lock order), a
/// deadlock that only a rare interleaving shows. Debug builds only.
#[inline(always)]
pub(crate) fn check_no_shard() {
    if cfg!(debug_assertions) && UNDER_SHARD.with(Cell::get) {
        crate::sys::abort_with(META_LOCK_UNDER_SHARD);
    }
}

/// The calling thread took a lock (`taken`) or released one.
#[inline(always)]
pub(crate) fn count(taken: bool) {
    if cfg!(debug_assertions) {
        HELD.with(|held| {
            held.set(if taken {
                held.get() + 1
            } else {
                held.get() - 1
            })
        });
    }
}

/// One internal lock held, until dropped.
pub(crate) struct Held;

impl Held {
    pub(crate) fn new() -> Self {
        count(true);
        Self
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        count(false);
    }
}

/// How many of the crate's locks the calling thread holds: internal
/// locks (pools, overflow shards, wait-table stripes, interrupt and
/// diagnostic states) and meta-locks. Always 0 in release builds. Not
/// part of the API.
pub fn locks_held() -> usize {
    HELD.with(Cell::get)
}
