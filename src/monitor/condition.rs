//! Condition variables on a monitor: more wait sets than the monitor's own,
//! so that a notify reaches only the threads that wait for that condition
//! (the protocol half; `crate::condition` is the API).
//!
//! A thread waiting on a condition is a lock record in the monitor's queue,
//! like one waiting on the monitor's own wait set, marked with the
//! condition's address. A notify marks the condition's waiters as notified
//! where they are: they wait to enter from then on, and the exit that
//! reaches one hands it the monitor, so it wakes only to run.
//!
//! # The condition's word, and why a notifier may touch the monitor
//!
//! A notify may come from a thread that does not hold the monitor, so it
//! must find the monitor through the condition, and the monitor must be
//! alive while it uses it. The condition's word holds the address of the
//! monitor's word while some thread waits on the condition, zero otherwise;
//! a condition used with two monitors at once is refused. The word changes
//! only under two locks: the monitor's meta-lock and the condition's
//! *stripe*, one of a fixed array of small blocking locks picked by the
//! condition's address (as parking_lot hashes an address to a bucket). A
//! waiter leaves the wait set (notified, or its time ran out) only under
//! both, and the one who removes the last waiter clears the word. So a
//! notifier that holds the stripe and finds the word set knows that a
//! waiter is still inside its wait, holding a borrow of the monitor: the
//! monitor's word is alive.
//!
//! Lock order: stripe, then meta-lock. No thread waits for a stripe while it
//! holds a meta-lock.

use crossbeam_utils::CachePadded;

use super::exit::release_to_queue;
use super::queue::mark_notified;
use crate::arch::Word;
use crate::exec_env::ExecEnv;
use crate::lock_record::{LockRecord, WAITING, record_of};
use crate::primitive::{Ordering, SysMutex};
use crate::word::{MultiUseWord, NEUTRAL, WAITERS, WAITING_SUMMARY, state};

/// The word of a condition variable.
///
/// Invariant: zero while no lock record waits on the condition, else the
/// address of the `MultiUseWord` in whose queue its waiters are; it changes
/// only while the thread holds both the condition's stripe and that word's
/// meta-lock. Its own address is the condition's identity in a record's
/// `wait_state`: at least 4-aligned, so above `WAITING`.
#[derive(Debug)]
pub(crate) struct ConditionWord {
    /// The word's cell: it needs only load, store and swap, which every
    /// backend has.
    bound: Word,
}

const _: () = assert!(core::mem::align_of::<ConditionWord>() > WAITING);

/// Why `bind` refused: the condition has waiters on another monitor.
#[derive(Debug)]
pub(crate) struct BoundElsewhere;

impl ConditionWord {
    #[cfg(not(loom))]
    pub(crate) const fn new() -> Self {
        Self {
            bound: Word::new(0),
        }
    }

    #[cfg(loom)]
    pub(crate) fn new() -> Self {
        Self {
            bound: Word::new(0),
        }
    }

    /// The condition's identity in a record's `wait_state`.
    #[inline]
    pub(crate) fn id(&self) -> usize {
        self as *const ConditionWord as usize
    }

    /// Runs `f` with the condition's stripe held.
    pub(super) fn with_stripe<R>(&self, f: impl FnOnce() -> R) -> R {
        stripes::of(self.id()).with(|()| f())
    }

    /// Binds the condition to `word`, whose meta-lock the caller holds, for
    /// a thread that starts waiting; refuses if it is bound to another.
    ///
    /// The caller holds the stripe and `word`'s meta-lock.
    pub(super) fn bind(&self, word: &MultiUseWord) -> Result<(), BoundElsewhere> {
        let word = word as *const MultiUseWord as usize;
        // One swap rather than a load and a store: only threads holding the
        // stripe change the word, so swapping back a refused binding is as
        // good, and a single read-modify-write is what lets loom see this
        // write race with a notify's first load. Relaxed: read under the
        // stripe, or by a notify's first load, whose Acquire pairs with the
        // release of the monitor's meta-lock that follows.
        match self.bound.swap(word, Ordering::Relaxed) {
            0 => Ok(()),
            bound if bound == word => Ok(()),
            bound => {
                self.bound.store(bound, Ordering::Relaxed);
                Err(BoundElsewhere)
            }
        }
    }

    /// Unbinds the condition once its last waiter has left the queue
    /// starting at `first`.
    ///
    /// # Safety
    /// The caller holds the stripe and the meta-lock of the word whose queue
    /// that is.
    pub(super) unsafe fn unbind_if_no_waiters(&self, first: *mut LockRecord) {
        // SAFETY: caller's contract.
        if !unsafe { super::queue::has_waiters(first, self.id()) } {
            // Relaxed: as in `bind`.
            self.bound.store(0, Ordering::Relaxed);
        }
    }

    /// Marks the condition's waiter that has waited longest, or all its
    /// waiters, as notified, and returns how many. If nobody owns the
    /// monitor, hands it to the first thread that waits to enter, so that a
    /// notified waiter does not wait for an exit that will not come.
    ///
    /// Costs one load when nobody waits on the condition.
    pub(crate) fn notify(&self, all: bool) -> usize {
        // Acquire pairs with the meta-lock release that followed the
        // binding, so that a notifier ordered after a waiter's registration
        // (through the monitor) sees it.
        if self.bound.load(Ordering::Acquire) == 0 {
            return 0;
        }
        ExecEnv::with_current(|ee| {
            count!(ee, notifies);
            self.with_stripe(|| {
                // Relaxed: written only under the stripe we hold.
                let bound = self.bound.load(Ordering::Relaxed);
                if bound == 0 {
                    return 0;
                }
                // SAFETY: a bound condition has a waiter in the monitor's
                // queue, inside its wait and holding a borrow of the
                // monitor; it cannot leave without the stripe we hold, so
                // the word is alive (see the module docs).
                let word = unsafe { &*(bound as *const MultiUseWord) };
                let held = word.get_meta_lock(ee);
                let bits = held.bits;
                debug_assert_ne!(state(bits), NEUTRAL, "a bound condition has a waiter");
                let first = record_of(bits);
                // SAFETY: we hold the stripe and the meta-lock.
                unsafe {
                    let (marked, still_waiting) = mark_notified(first, self.id(), all);
                    if still_waiting == 0 {
                        // Relaxed: as in `bind`.
                        self.bound.store(0, Ordering::Relaxed);
                    }
                    if state(bits) == WAITERS && marked > 0 {
                        let displaced = (*first).displaced();
                        release_to_queue(held, first, displaced, bits & WAITING_SUMMARY);
                    } else {
                        held.release(bits);
                    }
                    marked
                }
            })
        })
    }
}

/// The stripes: a fixed array of blocking locks, one picked per condition
/// by its address.
mod stripes {
    use super::*;

    /// How many; a power of two. Conditions that share a stripe only
    /// serialize their waits and notifies, briefly. Under loom one: the
    /// stripe of an address must not differ between a model's executions,
    /// where allocations land at different addresses.
    #[cfg(not(loom))]
    const STRIPES: usize = 64;
    #[cfg(loom)]
    const STRIPES: usize = 1;

    #[cfg(not(loom))]
    static LOCKS: [CachePadded<SysMutex<()>>; STRIPES] =
        [const { CachePadded::new(SysMutex::new(())) }; STRIPES];

    #[cfg(loom)]
    loom::lazy_static! {
        static ref LOCKS: std::vec::Vec<CachePadded<SysMutex<()>>> =
            (0..STRIPES).map(|_| CachePadded::new(SysMutex::new(()))).collect();
    }

    /// The stripe of the condition at `address`.
    pub(super) fn of(address: usize) -> &'static SysMutex<()> {
        // Fibonacci hashing of the address, without its alignment bits; the
        // top bits index the array.
        let hash = (address >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15_u64 as usize);
        &LOCKS[hash
            .checked_shr(usize::BITS - STRIPES.trailing_zeros())
            .unwrap_or(0)]
    }
}
