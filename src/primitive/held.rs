use core::cell::Cell;

std::thread_local! {
    // Const, without a destructor: readable from an allocator at any
    // point of a thread's life.
    static HELD: Cell<usize> = const { Cell::new(0) };
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
