//! What a thread is doing with monitors, for the thread dump and deadlock
//! detection of the `diagnostics` feature: which thread it is, the monitors
//! its guards hold, and the monitor it blocks on (entering or waiting) and
//! since when. Kept in the thread's execution environment.
//!
//! The blocked state changes only on slow paths (a thread about to block),
//! under a small lock that a snapshot also takes, so that the word a
//! snapshot reads through it stays alive while it reads: the thread clears
//! its state, under the lock, before it returns from the enter or wait that
//! borrows the word. What a thread's guards hold changes on every lock, so
//! it is kept in the lock records instead (`LockRecord::diag_word`), with
//! plain stores.

use std::sync::Arc;
use std::thread::ThreadId;
use std::time::Instant;

use crate::primitive::SysMutex;

/// A thread as a dump names it.
#[derive(Clone, Debug)]
pub(crate) struct ThreadInfo {
    pub(crate) id: ThreadId,
    /// Shared, so that copying it under the state's lock allocates nothing
    /// (a global allocator may lock monitors, and block on this lock).
    pub(crate) name: Option<Arc<str>>,
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
    /// An enter that gives up at a deadline (or at once), or a wait that
    /// ends at one: an enter that goes on whatever the owner does is never
    /// part of a deadlock.
    pub(crate) timed: bool,
    /// For a keyed enter on a home: the value's address. Until the thread
    /// finds under the home's meta-lock which value the home serves, it
    /// blocks on the home; if that is another value's, it goes on to the
    /// overflow table, and that value's owner is not what it waits for.
    pub(crate) key: Option<usize>,
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

/// One thread's diagnostic state: which thread it is, and what it blocks
/// on. (What its guards hold is in its lock records: `LockRecord::diag_word`.)
///
/// Invariant: `state.blocked` names a word that stays alive until it is
/// cleared (the blocked thread borrows it).
#[derive(Debug)]
pub(crate) struct Diag {
    state: SysMutex<State>,
}

/// What a snapshot reads of one thread.
#[derive(Clone, Debug)]
pub(crate) struct Observed {
    pub(crate) thread: ThreadInfo,
    pub(crate) blocked: Option<Blocked>,
    /// The EE address (lock records' `owner`) of the owner of the blocked
    /// word, read while the word was blocked on.
    pub(crate) blocked_owner: Option<usize>,
}

impl Diag {
    pub(crate) fn new() -> Self {
        Self {
            state: SysMutex::new(State::default()),
        }
    }

    /// The EE was bound to the calling thread.
    pub(crate) fn bind(&self) {
        let current = std::thread::current();
        let info = ThreadInfo {
            id: current.id(),
            name: current.name().map(Arc::from),
            exited: false,
        };
        // Whatever is replaced is dropped, and may be freed, after the lock.
        drop(self.state.with(|state| state.thread.replace(info)));
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
        // Freed after the lock, as in `bind`.
        drop(self.state.with(core::mem::take));
    }

    /// The thread blocks on `word` until the returned scope ends; `timed`
    /// and `key` as in [`Blocked`].
    pub(crate) fn block(
        &self,
        word: usize,
        waiting: bool,
        timed: bool,
        key: Option<usize>,
    ) -> BlockedScope<'_> {
        self.start_episode(word, waiting, timed, key);
        BlockedScope(self)
    }

    /// A thread blocked waiting on `word` left its wait set (notified, or
    /// out of time) and now enters `word` again, as long as its owner
    /// keeps it: a new episode, within the wait's scope.
    pub(crate) fn enter_again(&self, word: usize) {
        self.start_episode(word, false, false, None);
    }

    fn start_episode(&self, word: usize, waiting: bool, timed: bool, key: Option<usize>) {
        self.state.with(|state| {
            state.episodes += 1;
            state.blocked = Some(Blocked {
                word,
                waiting,
                timed,
                key,
                since: Instant::now(),
                episode: state.episodes,
            });
        });
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
        Some(Observed {
            thread,
            blocked,
            blocked_owner,
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
