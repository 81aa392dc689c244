//! Condition variables on a monitor: more wait sets than the monitor's own,
//! so that a notify reaches only the threads that wait for that condition
//! (the protocol half; `crate::condition` is the API).
//!
//! A thread waiting on a condition waits in the wait table (`wait_table`)
//! under the condition's address, like one waiting on the monitor's own wait
//! set under the word's. A notify moves the waiter into the monitor's queue
//! of threads waiting to enter (see `wait`).
//!
//! # The condition's word, and why a notifier may touch the monitor
//!
//! A notify may come from a thread that does not hold the monitor, so it
//! must find the monitor through the condition, and the monitor must be
//! alive while it uses it. The condition's word holds the address of the
//! monitor's word while some thread waits on the condition, zero otherwise;
//! a condition used with two monitors at once is refused. The word changes
//! only under the lock of the condition's stripe of the wait table, and so
//! does the list of its waiters: the one who takes the last waiter out
//! clears the word. So a notifier that holds the stripe and finds the word
//! set knows that a waiter is still inside its wait, holding a borrow of
//! the monitor: the monitor's word is alive.

use super::wait_table::{Waiting, stripe, with_any_waiting_on, with_waiting_on};
use crate::arch::Word;
use crate::exec_env::ExecEnv;
use crate::primitive::Ordering;
use crate::word::MultiUseWord;

/// The word of a condition variable.
///
/// Invariant: zero while no lock record waits on the condition, else the
/// address of the `MultiUseWord` of the monitor its waiters wait in; it
/// changes only under the lock of the condition's stripe. Its own address is
/// the condition's key in the wait table.
#[derive(Debug)]
pub(crate) struct ConditionWord {
    /// The word's cell: it needs only load, store and swap, which every
    /// backend has.
    bound: Word,
}

/// Under the model checkers a condition's stripe follows the order in
/// which an execution first used its address (`wait_table::stripe`): a
/// condition made later at the same address must not inherit it, or its
/// stripe would depend on where the allocator puts it.
#[cfg(metalock_model)]
impl Drop for ConditionWord {
    fn drop(&mut self) {
        super::wait_table::forget_condition(self.id());
    }
}

/// Why `bind` refused: the condition has waiters on another monitor.
#[derive(Debug)]
pub(crate) struct BoundElsewhere;

impl ConditionWord {
    #[cfg(not(metalock_model))]
    pub(crate) const fn new() -> Self {
        Self {
            bound: Word::new(0),
        }
    }

    #[cfg(metalock_model)]
    pub(crate) fn new() -> Self {
        Self {
            bound: Word::new(0),
        }
    }

    /// The condition's key in the wait table.
    #[inline]
    pub(crate) fn id(&self) -> usize {
        self as *const ConditionWord as usize
    }

    /// Binds the condition to `word` for a thread that starts waiting;
    /// refuses if it is bound to another.
    ///
    /// The caller holds the condition's stripe, and the meta-lock of
    /// `word`, whose monitor it owns.
    pub(super) fn bind(&self, word: &MultiUseWord) -> Result<(), BoundElsewhere> {
        let word = word as *const MultiUseWord as usize;
        // One swap rather than a load and a store: only threads holding the
        // stripe change the word, so swapping back a refused binding is as
        // good, and a single read-modify-write is what lets loom see this
        // write race with a notify's first load. Relaxed: read under the
        // stripe, or by a notify's first load (see `notify`).
        match self.bound.swap(word, Ordering::Relaxed) {
            0 => Ok(()),
            bound if bound == word => Ok(()),
            bound => {
                self.bound.store(bound, Ordering::Relaxed);
                Err(BoundElsewhere)
            }
        }
    }

    /// Unbinds the condition once none of its waiters is left in the locked
    /// stripe `waiting`, its own.
    pub(super) fn unbind_unless_waited_on(&self, waiting: &Waiting<'_>) {
        if !waiting.has(self.id()) {
            // Relaxed: as in `bind`.
            self.bound.store(0, Ordering::Relaxed);
        }
    }

    /// How many threads wait on the condition now (a snapshot).
    pub(crate) fn waiting(&self) -> usize {
        with_waiting_on(self.id(), true, |waiting| waiting)
    }

    /// Whether some thread waits on the condition now (`waiting() > 0`,
    /// stopping at the first waiter found).
    pub(crate) fn has_waiting(&self) -> bool {
        with_any_waiting_on(self.id(), true, |any| any)
    }

    /// Notifies the condition's waiter that has waited longest, or all its
    /// waiters, and returns how many: they move into the monitor's queue to
    /// enter, and if nobody owns the monitor the first is invited at once.
    ///
    /// Costs one load when nobody waits on the condition.
    #[inline]
    pub(crate) fn notify(&self, all: bool) -> usize {
        // Relaxed: a waiter binds the condition before it releases the
        // monitor's meta-lock, so a notifier ordered after that release
        // (through the monitor) reads the binding or a later value
        // (coherence), which is 0 only once no waiter is left. Nothing is
        // read on the strength of this load: a binding leads to the
        // stripe's lock, under which it is read again.
        if self.bound.load(Ordering::Relaxed) == 0 {
            return 0;
        }
        self.notify_waiters(all)
    }

    /// The part of `notify` that has waiters to reach.
    #[cold]
    #[inline(never)]
    fn notify_waiters(&self, all: bool) -> usize {
        ExecEnv::with_current(|ee| {
            count!(ee, notifies);
            let notify = |waiting: &mut Waiting<'_>| {
                // Relaxed: written only under the stripe we hold.
                let bound = self.bound.load(Ordering::Relaxed);
                if bound == 0 {
                    return 0;
                }
                // SAFETY: a bound condition has a waiter in our stripe,
                // inside its wait and holding a borrow of the monitor; it
                // cannot leave without the stripe we hold, so the word is
                // alive (see the module docs).
                let word = unsafe { &*(bound as *const MultiUseWord) };
                // No notifier record: a condition may be notified by a
                // thread that does not own the monitor.
                // SAFETY: the stripe is the condition's and locked; the
                // word is alive; `ee` is the calling thread's.
                let notified = unsafe { word.move_waiters(ee, waiting, self.id(), all, None) };
                self.unbind_unless_waited_on(waiting);
                notified
            };
            // SAFETY: `ee` is the calling thread's (`with_current`).
            unsafe { stripe(self.id(), true).with(ee, notify) }
        })
    }
}
