//! A thread dump and deadlock detection (feature `diagnostics`), as a Java
//! thread dump prints "Found one Java-level deadlock".
//!
//! [`snapshot`] lists every thread that uses monitors: its name and id, the
//! monitors its guards hold (address, depth), and the monitor it is
//! entering or waiting on, since when and, when entering, which thread owns
//! it. [`deadlocks`] returns the cycles of threads blocked entering
//! monitors that the next thread of the cycle owns, and the threads blocked
//! entering a monitor that a thread which has exited left held (through
//! guards leaked with `mem::forget`). Neither stops, wakes or
//! otherwise disturbs a thread: they read what each thread publishes about
//! itself and the words it blocks on, and take no meta-lock. (A thread that
//! starts or stops blocking meanwhile may wait for the few loads a snapshot
//! makes of it, under its small lock; so may a thread that notifies it,
//! while holding the monitor and the stripe of the wait table, so a
//! snapshot preempted there delays that monitor and stripe until it runs.
//! A snapshot also copies the keyed overflow table, one shard at a time
//! under the shard's lock, which a keyed enter takes under a home's
//! meta-lock: a snapshot preempted there delays that home's monitors too.)
//!
//! ```
//! use metalock::MultiUseWord;
//!
//! let word = MultiUseWord::new();
//! let guard = word.lock();
//! let dump = metalock::diagnostics::snapshot();
//! let me = dump.current_thread().expect("this thread holds a monitor");
//! assert_eq!(me.holds()[0].monitor, &word as *const MultiUseWord as usize);
//! println!("{dump}");
//! drop(guard);
//! assert!(metalock::diagnostics::deadlocks().is_empty());
//! ```
//!
//! Addresses are those of the words: an embedded `MultiUseWord`, the word
//! inside a `Synchronized` or `RawMonitor`, or a keyed monitor's table
//! entry, whose value's address the dump shows too. With the
//! feature on, each guard notes its monitor in its lock record (a plain
//! store when it locks and one when it unlocks), and a snapshot reads every
//! record; with it off, none of this is built. An enter that goes to the
//! meta-lock also notes that it blocks: two small lock and unlock pairs and
//! a clock read. On the compare-and-swap backend that is an enter whose
//! spin failed; on the swap-only backend and with `meta-lock-only`, every
//! enter.

mod display;
mod dump;
mod search;
#[cfg(test)]
mod tests;

pub use dump::{BlockKind, BlockedOn, Deadlock, HeldMonitor, Snapshot, ThreadDump};

use std::string::String;
use std::thread::ThreadId;
use std::time::Instant;
use std::vec::Vec;

use std::collections::HashMap;

use crate::exec_env::all_envs;
use crate::exec_env::diag::for_each_note;
use crate::lock_record::record_of;
use crate::word::{LOCKED, MultiUseWord, state};
use core::sync::atomic::Ordering;

/// Reads the threads that use monitors.
///
/// ```
/// use metalock::{MultiUseWord, diagnostics};
///
/// let word = MultiUseWord::new();
/// let _outer = word.lock();
/// let _inner = word.lock();
/// let me = std::thread::current().id();
/// std::thread::scope(|s| {
///     s.spawn(|| {
///         // Read from another thread, without stopping this one.
///         let dump = diagnostics::snapshot();
///         let holder = dump.threads().iter().find(|t| t.id() == me).unwrap();
///         assert_eq!(holder.holds()[0].depth, 2);
///     });
/// });
/// ```
pub fn snapshot() -> Snapshot {
    let keys = crate::keyed::keys_by_word();
    // Lock records name their thread by EE, and an EE passes to another
    // thread when its thread exits. Each EE's binding is read before the
    // records and again at the end: an EE rebound in between may show one
    // thread's holds under the other, so the dump leaves out its holds and
    // the ownership read through it.
    let bound_before: HashMap<usize, u64> = all_envs()
        .map(|ee| (ee.as_owner(), ee.diag.binding()))
        .collect();
    let held = held_by_thread();
    let now = Instant::now();
    let mut threads = Vec::new();
    let mut bindings = Vec::new();
    for ee in all_envs() {
        let observed = ee.diag.observe(|word| {
            // SAFETY: `observe` calls this under the lock that keeps the
            // blocked word alive (the blocked thread borrows it until it
            // clears its state under that lock).
            unsafe { owner_of(&*(word as *const MultiUseWord)) }
        });
        let Some(mut observed) = observed else {
            continue;
        };
        bindings.push((ee, observed.binding));
        // A keyed enter on a home that serves another value waits for
        // nobody there: it goes on to the overflow table.
        if let Some(blocked) = observed.blocked
            && blocked
                .key
                .is_some_and(|key| keys.get(&blocked.word) != Some(&key))
        {
            observed.blocked_owner = None;
        }
        let mut holds: Vec<HeldMonitor> = held
            .get(&ee.as_owner())
            .into_iter()
            .flatten()
            // A wait releases the monitor it waits on, and a thread back
            // from a wait has not entered it yet (no other thread blocks on
            // a monitor it holds).
            .filter(|&&(word, _)| observed.blocked.is_none_or(|blocked| blocked.word != word))
            .map(|&(word, depth)| HeldMonitor {
                monitor: word,
                depth,
                key: keys.get(&word).copied(),
            })
            .collect();
        holds.sort_by_key(|held| held.monitor);
        threads.push(ThreadDump {
            id: observed.thread.id,
            name: observed.thread.name.as_deref().map(String::from),
            held_at_exit: observed.thread.held_at_exit.clone(),
            holds,
            blocked: observed.blocked.map(|blocked| BlockedOn {
                monitor: blocked.word,
                kind: if blocked.waiting {
                    BlockKind::Waiting
                } else {
                    BlockKind::Entering
                },
                timed: blocked.timed,
                for_: now.saturating_duration_since(blocked.since),
                owner: None,
                key: blocked.key.or_else(|| keys.get(&blocked.word).copied()),
                episode: blocked.episode,
                owner_ee: observed.blocked_owner,
            }),
            ee: ee.as_owner(),
        });
    }
    let mut ids: Vec<(usize, ThreadId)> = Vec::new();
    for (thread, (ee, binding)) in threads.iter_mut().zip(bindings) {
        // An EE made after the first read has been bound once since.
        let before = bound_before.get(&thread.ee).copied().unwrap_or(1);
        if before == binding && ee.diag.binding() == binding {
            ids.push((thread.ee, thread.id));
        } else {
            thread.holds.clear();
        }
    }
    for thread in &mut threads {
        if let Some(blocked) = &mut thread.blocked {
            blocked.owner = blocked
                .owner_ee
                .and_then(|ee| ids.iter().find(|(e, _)| *e == ee).map(|&(_, id)| id));
        }
    }
    Snapshot { threads }
}

/// The cycles of threads blocked entering monitors held by each other, each
/// once; and each thread blocked entering a monitor that a thread which has
/// exited held as it exited (it leaked the guards: nothing will release the
/// monitor), paired with that thread ([`Deadlock::held_by_exited_thread`]).
/// Either is reported only if two snapshots in a row see every
/// thread of it in the same blocking episode (so it was blocked all the
/// time in between, and owned what it owned: a deadlock, not a passing
/// state); threads that wait for a notification, or enter with a deadline,
/// are never part of one.
///
/// ```
/// use metalock::{MultiUseWord, diagnostics};
/// use std::sync::Barrier;
///
/// static A: MultiUseWord = MultiUseWord::new();
/// static B: MultiUseWord = MultiUseWord::new();
/// static BOTH_HOLD_ONE: Barrier = Barrier::new(2);
///
/// assert!(diagnostics::deadlocks().is_empty());
/// // A lock-order inversion: the two threads never return.
/// for (first, second) in [(&A, &B), (&B, &A)] {
///     std::thread::spawn(move || {
///         let _first = first.lock();
///         BOTH_HOLD_ONE.wait();
///         let _second = second.lock();
///     });
/// }
/// while diagnostics::deadlocks().is_empty() {
///     std::thread::yield_now();
/// }
/// assert_eq!(diagnostics::deadlocks()[0].threads().len(), 2);
/// ```
pub fn deadlocks() -> Vec<Deadlock> {
    let first = snapshot();
    let cycles = first.cycles().into_iter().map(|cycle| (cycle, false));
    let behind = first
        .behind_exited_owners()
        .into_iter()
        .map(|pair| (pair, true));
    let found: Vec<_> = cycles.chain(behind).collect();
    if found.is_empty() {
        return Vec::new();
    }
    let second = snapshot();
    found
        .into_iter()
        .filter(|(cycle, _)| {
            cycle.iter().all(|&i| {
                let before = &first.threads[i];
                second.threads.iter().any(|after| {
                    after.id == before.id
                        && after
                            .blocked
                            .as_ref()
                            .map(|b| (b.monitor, b.episode, b.owner))
                            == before
                                .blocked
                                .as_ref()
                                .map(|b| (b.monitor, b.episode, b.owner))
                })
            })
        })
        .map(|(cycle, held_by_exited)| Deadlock {
            threads: cycle.iter().map(|&i| first.threads[i].clone()).collect(),
            held_by_exited,
        })
        .collect()
}

/// What every thread's guards hold, by EE address (lock records' owner):
/// (word address, depth) of every note (`exec_env::diag::for_each_note`).
fn held_by_thread() -> HashMap<usize, Vec<(usize, usize)>> {
    let mut held: HashMap<usize, Vec<(usize, usize)>> = HashMap::new();
    for_each_note(all_envs(), |owner, word, record| {
        // Relaxed: a note leaves the depth at 1 before it clears the word,
        // and a reused record's first note is the Release store that
        // `for_each_note` read, so this reads 1 or a newer depth of that note.
        let depth = record.diag_depth.load(Ordering::Relaxed).max(1);
        held.entry(owner).or_default().push((word, depth));
    });
    held
}

/// The EE address (a lock record's owner) of the thread that owns `word`,
/// if one read of the word tells: a BUSY word, in the middle of an
/// operation, does not. It runs under the observed thread's lock, which
/// that thread takes as it stops blocking: it must not wait. (A deadlock's
/// words are BUSY only while another thread queues on them.)
fn owner_of(word: &MultiUseWord) -> Option<usize> {
    // Acquire pairs with the Release of whatever wrote the word, so the
    // record it points at is initialised.
    let bits = word.word.load(Ordering::Acquire);
    if state(bits) != LOCKED {
        return None;
    }
    // SAFETY: a LOCKED word points at a live record (records are never
    // freed). Its owner may have exited the monitor since and the record
    // passed to another thread: the word, read again after the owner (the
    // Acquire of `owner_for_dump` keeps that order), rejects such a read. A
    // record that came back to this word meanwhile names its new owner,
    // which owns the monitor.
    let owner = unsafe { (*record_of(bits)).owner_for_dump() };
    (word.word.load(Ordering::Acquire) == bits).then_some(owner)
}
