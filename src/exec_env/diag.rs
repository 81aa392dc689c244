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

use core::cell::Cell;
use core::marker::PhantomData;
use core::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::ThreadId;
use std::time::Instant;
use std::vec::Vec;

use super::ExecEnv;
use crate::lock_record::LockRecord;
use crate::primitive::SysMutex;

crate::primitive::thread_local! {
    /// The calling thread's id, saved when an EE is bound to it: `const` and
    /// without a destructor, so readable to the last of the thread's
    /// thread-local destructors.
    static THREAD_ID: Cell<Option<ThreadId>> = const { Cell::new(None) };
}

/// A thread as a dump names it.
#[derive(Clone, Debug)]
pub(crate) struct ThreadInfo {
    pub(crate) id: ThreadId,
    /// Shared, so that copying it under the state's lock allocates nothing
    /// (a global allocator may lock monitors, and block on this lock).
    pub(crate) name: Option<Arc<str>>,
    /// Once the thread ran its exit cleanup while its guards still held
    /// monitors (leaked guards): the words they held then. Those monitors
    /// stay held for good (but for a guard kept in a thread-local destroyed
    /// after that cleanup), unlike one that a later thread-local destructor
    /// of the thread locks. `None` while the thread runs.
    pub(crate) held_at_exit: Option<Arc<[usize]>>,
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
    /// means the thread blocked all the time in between (an episode put
    /// back after a nested one gets a new number).
    pub(crate) episode: u64,
}

#[derive(Debug, Default)]
struct State {
    thread: Option<ThreadInfo>,
    blocked: Option<Blocked>,
    episodes: u64,
    /// Counts the threads the EE was bound to.
    binds: u64,
    /// The word whose wait set a notify (or the wait's own end) left, so
    /// that the thread now enters it again, until that wait's scope ends.
    /// A wait shown while an inner episode ran is put back as an enter.
    reentering: Option<usize>,
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
    /// Which binding of the EE this is ([`Diag::binding`]).
    pub(crate) binding: u64,
    pub(crate) blocked: Option<Blocked>,
    /// The EE address (lock records' `owner`) of the owner of the blocked
    /// word, read while the word was blocked on.
    pub(crate) blocked_owner: Option<usize>,
}

/// Every guard's note of the word it holds (see `guard::note_held`), as
/// `f(owner, word, record)`, from the hot records of `ees` and every record
/// batch. Read while the threads run: each note as its owner last wrote it.
pub(crate) fn for_each_note(
    ees: impl IntoIterator<Item = &'static ExecEnv>,
    mut f: impl FnMut(usize, usize, &'static LockRecord),
) {
    let mut note = |record: &'static LockRecord| {
        // The owner before and after the note: a record that changed hands
        // in between (donated by an exited thread) may pair its old owner's
        // note with its new owner, and is left out.
        let owner = record.owner_for_dump();
        // Acquire: see `guard::note_held`; it also keeps the second read of
        // the owner after this one.
        let word = record.diag_word.load(Ordering::Acquire);
        if word != 0 && record.owner() == owner {
            f(owner, word, record);
        }
    };
    for ee in ees {
        note(ee.hot_record());
    }
    super::for_each_batched_record(note);
}

impl Diag {
    pub(crate) fn new() -> Self {
        Self {
            state: SysMutex::new(State::default()),
        }
    }

    /// The EE was bound to the calling thread; `late` if after the
    /// thread's exit cleanup, in its thread-local destructors.
    pub(crate) fn bind(&self, late: bool) {
        let info = if late {
            // So late std's handle of the thread may be gone already (a
            // global allocator that locks, called for the handle's own
            // free), and `thread::current` would panic there: the id an
            // earlier bind saved, if any, and no name. Without an id the
            // dump leaves the thread out.
            THREAD_ID.with(Cell::get).map(|id| ThreadInfo {
                id,
                name: None,
                held_at_exit: None,
            })
        } else {
            let current = std::thread::current();
            THREAD_ID.with(|id| id.set(Some(current.id())));
            Some(ThreadInfo {
                id: current.id(),
                name: current.name().map(Arc::from),
                held_at_exit: None,
            })
        };
        // Whatever is replaced is dropped, and may be freed, after the lock.
        drop(self.state.with(|state| {
            state.binds += 1;
            core::mem::replace(&mut state.thread, info)
        }));
    }

    /// Which binding of the EE is current: a snapshot that reads the same
    /// before and after reading the EE's lock records knows that they were
    /// one thread's all along.
    pub(crate) fn binding(&self) -> u64 {
        self.state.with(|state| state.binds)
    }

    /// The EE's thread ran its exit cleanup, its guards holding the words
    /// `held` (see `words_held`).
    pub(crate) fn exited(&self, held: Arc<[usize]>) {
        // A list left unstored is dropped, and may be freed, after the lock,
        // as in `bind`.
        let mut held = Some(held);
        self.state.with(|state| {
            if let Some(thread) = &mut state.thread {
                thread.held_at_exit = held.take();
            }
        });
        drop(held);
    }

    /// The words that `ee`'s records hold now: read by its own thread as it
    /// runs its exit cleanup, so every note is its own and current. Walks
    /// every record batch, only at the exit of a thread that holds a monitor.
    pub(crate) fn words_held(ee: &'static ExecEnv) -> Arc<[usize]> {
        let mut words = Vec::new();
        for_each_note([ee], |owner, word, _| {
            if owner == ee.as_owner() {
                words.push(word);
            }
        });
        words.into()
    }

    /// The EE belongs to no thread any more. The counts go on: an episode
    /// or a binding is never seen twice.
    pub(crate) fn unbind(&self) {
        // Freed after the lock, as in `bind`.
        drop(self.state.with(|state| {
            state.blocked = None;
            state.reentering = None;
            state.thread.take()
        }));
    }

    /// The thread blocks on `word` until the returned scope ends; `timed`
    /// and `key` as in [`Blocked`]. Should the thread block again within
    /// the scope (code the crate runs there locks a monitor), the end of
    /// the inner scope puts the outer episode back.
    pub(crate) fn block(
        &self,
        word: usize,
        waiting: bool,
        timed: bool,
        key: Option<usize>,
    ) -> BlockedScope<'_> {
        let (outer, binding, episode) = self.state.with(|state| {
            let outer = start_episode(state, word, waiting, timed, key);
            (outer, state.binds, state.episodes)
        });
        BlockedScope {
            diag: self,
            outer,
            binding,
            episode,
            waited_on: waiting.then_some(word),
            _not_send: PhantomData,
        }
    }

    /// A thread blocked waiting on `word` left its wait set (notified, or
    /// out of time) and now enters `word` again, as long as its owner
    /// keeps it: a new episode, within the wait's scope (which ends it). If
    /// the thread is blocked in an inner episode meanwhile (code the crate
    /// runs in the wait locked a monitor), that one goes on showing, and
    /// its end puts the wait back as this enter.
    pub(crate) fn enter_again(&self, word: usize) {
        self.state.with(|state| {
            state.reentering = Some(word);
            if state
                .blocked
                .is_some_and(|blocked| blocked.waiting && blocked.word == word)
            {
                start_episode(state, word, false, false, None);
            }
        });
    }

    /// What the thread is doing, if the EE belongs to a thread; `owner_of`
    /// reads the owner of the blocked word while it is safe to.
    pub(crate) fn observe(
        &self,
        owner_of: impl FnOnce(usize) -> Option<usize>,
    ) -> Option<Observed> {
        let (thread, binding, blocked, blocked_owner) = self.state.with(|state| {
            let thread = state.thread.clone()?;
            let owner = state
                .blocked
                .filter(|blocked| !blocked.waiting)
                .and_then(|blocked| owner_of(blocked.word));
            Some((thread, state.binds, state.blocked, owner))
        })?;
        Some(Observed {
            thread,
            binding,
            blocked,
            blocked_owner,
        })
    }
}

/// Starts an episode in `state`; returns the one it replaces.
fn start_episode(
    state: &mut State,
    word: usize,
    waiting: bool,
    timed: bool,
    key: Option<usize>,
) -> Option<Blocked> {
    state.episodes += 1;
    state.blocked.replace(Blocked {
        word,
        waiting,
        timed,
        key,
        since: Instant::now(),
        episode: state.episodes,
    })
}

/// A blocking episode in progress, on the thread that blocks; dropping it
/// ends it, and puts back the episode it interrupted, if any, under a new
/// number (the thread did not block all the time in between).
///
/// Invariant: `outer` names a word that the thread borrows until this
/// scope's own drop, if the EE is still at `binding`.
#[derive(Debug)]
pub(crate) struct BlockedScope<'a> {
    diag: &'a Diag,
    outer: Option<Blocked>,
    binding: u64,
    /// This scope's episode. A later one found at the end was started
    /// within the scope: by `enter_again`, or by an inner scope's end.
    episode: u64,
    /// The word, if this scope is a wait's.
    waited_on: Option<usize>,
    _not_send: PhantomData<*const ()>,
}

impl Drop for BlockedScope<'_> {
    fn drop(&mut self) {
        let outer = self.outer.take();
        self.diag.state.with(|state| {
            // Another thread's EE now, or an episode this scope did not
            // start (nor `enter_again` within it): nothing here is ours to
            // end or put back.
            if state.binds != self.binding {
                return;
            }
            if self.waited_on.is_some() && state.reentering == self.waited_on {
                state.reentering = None;
            }
            let ours = state
                .blocked
                .is_some_and(|blocked| blocked.episode >= self.episode);
            if !ours {
                return;
            }
            let reentering = state.reentering;
            state.blocked = outer.map(|outer| {
                state.episodes += 1;
                Blocked {
                    episode: state.episodes,
                    // A wait that was left meanwhile is an enter now.
                    waiting: outer.waiting && reentering != Some(outer.word),
                    ..outer
                }
            });
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocked_word(diag: &Diag) -> Option<usize> {
        diag.observe(|_| None)
            .and_then(|observed| observed.blocked)
            .map(|blocked| blocked.word)
    }

    #[test]
    fn an_inner_blocking_episode_gives_the_outer_one_back() {
        let diag = Diag::new();
        diag.bind(false);
        let outer = diag.block(0x100, true, false, None);
        let episode = diag.observe(|_| None).unwrap().blocked.unwrap().episode;
        {
            let _inner = diag.block(0x200, false, false, None);
            assert_eq!(blocked_word(&diag), Some(0x200));
        }
        let back = diag.observe(|_| None).unwrap().blocked.unwrap();
        assert_eq!((back.word, back.waiting), (0x100, true));
        assert!(back.episode > episode, "a restored episode kept its number");
        drop(outer);
        assert_eq!(blocked_word(&diag), None);
    }

    /// A notify that reaches a waiter blocked in an inner episode leaves
    /// that episode showing, and turns the wait it puts back into an enter
    /// (else a deadlock through that enter would go unseen).
    #[test]
    fn a_notify_during_an_inner_episode_puts_the_wait_back_as_an_enter() {
        let diag = Diag::new();
        diag.bind(false);
        let wait = diag.block(0x100, true, false, None);
        {
            let _inner = diag.block(0x200, false, false, None);
            diag.enter_again(0x100);
            assert_eq!(blocked_word(&diag), Some(0x200));
        }
        let back = diag.observe(|_| None).unwrap().blocked.unwrap();
        assert_eq!((back.word, back.waiting), (0x100, false));
        drop(wait);
        assert_eq!(blocked_word(&diag), None);
        let next = diag.block(0x100, true, false, None);
        {
            let _inner = diag.block(0x200, false, false, None);
        }
        let back = diag.observe(|_| None).unwrap().blocked.unwrap();
        assert_eq!(
            (back.word, back.waiting),
            (0x100, true),
            "a notify outlived its wait"
        );
        drop(next);
    }

    #[test]
    fn a_notify_turns_the_wait_into_an_enter() {
        let diag = Diag::new();
        diag.bind(false);
        let wait = diag.block(0x100, true, false, None);
        diag.enter_again(0x100);
        let entering = diag.observe(|_| None).unwrap().blocked.unwrap();
        assert_eq!((entering.word, entering.waiting), (0x100, false));
        drop(wait);
        assert_eq!(blocked_word(&diag), None);
    }

    #[test]
    fn a_scope_ends_nothing_after_its_environment_was_rebound() {
        let diag = Diag::new();
        diag.bind(false);
        let scope = diag.block(0x100, false, false, None);
        diag.unbind();
        diag.bind(false);
        let other = diag.block(0x300, false, false, None);
        drop(scope);
        assert_eq!(blocked_word(&diag), Some(0x300));
        drop(other);
        assert_eq!(blocked_word(&diag), None);
    }

    #[test]
    fn bindings_and_episodes_are_never_seen_twice() {
        let diag = Diag::new();
        let episode = |diag: &Diag| {
            let _scope = diag.block(0x100, false, false, None);
            diag.observe(|_| None).unwrap().blocked.unwrap().episode
        };
        diag.bind(false);
        let (first_binding, first_episode) = (diag.binding(), episode(&diag));
        diag.unbind();
        assert!(diag.observe(|_| None).is_none());
        diag.bind(false);
        assert!(diag.binding() > first_binding);
        assert!(episode(&diag) > first_episode);
    }

    /// A bind late in a thread's exit names the thread by the id an
    /// earlier bind saved, without asking `thread::current`; a thread that
    /// never bound before is left out of the dump.
    #[test]
    fn a_late_bind_reuses_the_saved_id() {
        std::thread::Builder::new()
            .name("late".into())
            .spawn(|| {
                let diag = Diag::new();
                diag.bind(true);
                assert!(
                    diag.observe(|_| None).is_none(),
                    "an unknown thread was named"
                );
                diag.bind(false);
                let named = diag.observe(|_| None).unwrap().thread;
                assert_eq!(named.name.as_deref(), Some("late"));
                diag.unbind();
                diag.bind(true);
                let late = diag.observe(|_| None).unwrap().thread;
                assert_eq!((late.id, late.name), (std::thread::current().id(), None));
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
