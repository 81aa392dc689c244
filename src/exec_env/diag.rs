//! What a thread is doing with monitors, for the thread dump and deadlock
//! detection of the `diagnostics` feature: which thread it is, the monitors
//! its guards hold, and the monitor it blocks on (entering or waiting) and
//! since when. Kept in the thread's execution environment.
//!
//! The blocked state changes only on slow paths (a thread about to block),
//! under a small lock that a snapshot also takes, so that the word a
//! snapshot reads through it stays alive while it reads: the thread clears
//! its state, under the lock, before it returns from the enter or wait that
//! borrows the word. The list of held monitors changes on every guard, so
//! the owner writes it with plain (relaxed atomic) stores, two per lock and
//! one per unlock, and a reader copies it until two copies agree.

use std::string::String;
use std::thread::ThreadId;
use std::time::Instant;

use crate::primitive::{AtomicUsize, Ordering, SysMutex};

/// Held monitors a thread lists by address (the list fills one cache line);
/// deeper nesting is counted.
pub(crate) const HELD_SLOTS: usize = 7;

/// A thread as a dump names it.
#[derive(Clone, Debug)]
pub(crate) struct ThreadInfo {
    pub(crate) id: ThreadId,
    pub(crate) name: Option<String>,
    /// The thread ran its exit cleanup while its guards still held
    /// monitors (leaked guards): it is gone, its monitors stay held.
    pub(crate) exited: bool,
}

/// The monitor a thread blocks on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Blocked {
    /// The address of the word.
    pub(crate) word: usize,
    /// Waiting for a notification (else entering).
    pub(crate) waiting: bool,
    pub(crate) since: Instant,
    /// Counts the thread's blocking episodes: the same episode seen twice
    /// means the thread blocked all the time in between.
    pub(crate) episode: u64,
}

#[derive(Debug, Default)]
struct State {
    thread: Option<ThreadInfo>,
    blocked: Option<Blocked>,
    episodes: u64,
}

/// One thread's diagnostic state.
///
/// Invariants: `state.blocked` names a word that stays alive until it is
/// cleared (the blocked thread borrows it); `list` is written only by the
/// thread; `list.slots[..min(list.len, HELD_SLOTS)]` are the
/// addresses of the words its live guards hold, oldest first (addresses
/// only: a reader never dereferences them).
#[derive(Debug)]
pub(crate) struct Diag {
    state: SysMutex<State>,
    list: HeldList,
}

/// The held list, on a cache line of its own: every lock and unlock writes
/// it, and nothing else there may slow that down.
#[derive(Debug)]
#[repr(C, align(64))]
struct HeldList {
    len: AtomicUsize,
    slots: [AtomicUsize; HELD_SLOTS],
}

/// What a snapshot reads of one thread.
#[derive(Clone, Debug)]
pub(crate) struct Observed {
    pub(crate) thread: ThreadInfo,
    pub(crate) blocked: Option<Blocked>,
    /// The EE address (lock records' `owner`) of the owner of the blocked
    /// word, read while the word was blocked on.
    pub(crate) blocked_owner: Option<usize>,
    /// Held words, oldest first, and how many more than the listed ones.
    pub(crate) held: Vec<usize>,
    pub(crate) held_more: usize,
}

impl Diag {
    pub(crate) fn new() -> Self {
        Self {
            state: SysMutex::new(State::default()),
            list: HeldList {
                len: AtomicUsize::new(0),
                slots: core::array::from_fn(|_| AtomicUsize::new(0)),
            },
        }
    }

    /// The EE was bound to the calling thread.
    pub(crate) fn bind(&self) {
        let current = std::thread::current();
        let info = ThreadInfo {
            id: current.id(),
            name: current.name().map(String::from),
            exited: false,
        };
        self.state.with(|state| state.thread = Some(info));
    }

    /// The EE's thread ran its exit cleanup.
    pub(crate) fn exited(&self) {
        self.state.with(|state| {
            if let Some(thread) = &mut state.thread {
                thread.exited = true;
            }
        });
    }

    /// The EE belongs to no thread any more.
    pub(crate) fn unbind(&self) {
        self.state.with(|state| *state = State::default());
        // Relaxed: read by snapshots only, which skip an unbound EE.
        self.list.len.store(0, Ordering::Relaxed);
    }

    /// The thread blocks on `word` until the returned scope ends.
    pub(crate) fn block(&self, word: usize, waiting: bool) -> BlockedScope<'_> {
        self.state.with(|state| {
            state.episodes += 1;
            state.blocked = Some(Blocked {
                word,
                waiting,
                since: Instant::now(),
                episode: state.episodes,
            });
        });
        BlockedScope(self)
    }

    /// A guard of the thread now holds `word` (one level).
    #[inline(always)]
    pub(crate) fn push_held(&self, word: usize) {
        // Relaxed (every load and store of the list): this thread alone
        // writes it, and a reader only needs a copy it read twice alike
        // (see `read_held`).
        let len = self.list.len.load(Ordering::Relaxed);
        if let Some(slot) = self.list.slots.get(len) {
            slot.store(word, Ordering::Relaxed);
        }
        self.list.len.store(len + 1, Ordering::Relaxed);
    }

    /// A guard of the thread released `word` (one level): the newest entry
    /// of it leaves the list.
    #[inline(always)]
    pub(crate) fn pop_held(&self, word: usize) {
        // Relaxed: as in `push_held`.
        let len = self.list.len.load(Ordering::Relaxed);
        let last = len.wrapping_sub(1);
        // Guards mostly drop in reverse order: the newest entry is `word`.
        if last >= HELD_SLOTS || self.list.slots[last].load(Ordering::Relaxed) == word {
            self.list.len.store(last, Ordering::Relaxed);
        } else {
            self.pop_held_unordered(word, len);
        }
    }

    #[cold]
    fn pop_held_unordered(&self, word: usize, len: usize) {
        if len == 0 {
            return;
        }
        let listed = len.min(HELD_SLOTS);
        // Relaxed: as in `push_held`.
        if let Some(at) = (0..listed)
            .rev()
            .find(|&i| self.list.slots[i].load(Ordering::Relaxed) == word)
        {
            for i in at..listed - 1 {
                let next = self.list.slots[i + 1].load(Ordering::Relaxed);
                self.list.slots[i].store(next, Ordering::Relaxed);
            }
        }
        self.list.len.store(len - 1, Ordering::Relaxed);
    }

    /// A copy of the held list, by another thread: read until two reads in a
    /// row agree, so that it is a list the thread had (or, if it changes
    /// faster than it can be read, the last read).
    fn read_held(&self) -> (Vec<usize>, usize) {
        let read = || {
            // Relaxed: see `push_held`.
            let len = self.list.len.load(Ordering::Relaxed);
            let held: Vec<usize> = self.list.slots[..len.min(HELD_SLOTS)]
                .iter()
                .map(|slot| slot.load(Ordering::Relaxed))
                .collect();
            (held, len.saturating_sub(HELD_SLOTS))
        };
        let mut last = read();
        for _ in 0..100 {
            let again = read();
            if again == last {
                break;
            }
            last = again;
        }
        last
    }

    /// What the thread is doing, if the EE belongs to a thread; `owner_of`
    /// reads the owner of the blocked word while it is safe to.
    pub(crate) fn observe(
        &self,
        owner_of: impl FnOnce(usize) -> Option<usize>,
    ) -> Option<Observed> {
        let (thread, blocked, blocked_owner) = self.state.with(|state| {
            let thread = state.thread.clone()?;
            let owner = state
                .blocked
                .filter(|blocked| !blocked.waiting)
                .and_then(|blocked| owner_of(blocked.word));
            Some((thread, state.blocked, owner))
        })?;
        let (held, held_more) = self.read_held();
        Some(Observed {
            thread,
            blocked,
            blocked_owner,
            held,
            held_more,
        })
    }
}

/// A blocking episode in progress; dropping it ends it.
#[derive(Debug)]
pub(crate) struct BlockedScope<'a>(&'a Diag);

impl Drop for BlockedScope<'_> {
    fn drop(&mut self) {
        self.0.state.with(|state| state.blocked = None);
    }
}
