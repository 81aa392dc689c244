//! A thread dump and deadlock detection (feature `diagnostics`), as a Java
//! thread dump prints "Found one Java-level deadlock".
//!
//! [`snapshot`] lists every thread that uses monitors: its name and id, the
//! monitors its guards hold (address, depth), and the monitor it is
//! entering or waiting on, since when and, when entering, which thread owns
//! it. [`deadlocks`] returns the cycles of threads blocked entering
//! monitors that the next thread of the cycle owns. Neither stops, wakes or
//! otherwise disturbs a thread: they read what each thread publishes about
//! itself and the words it blocks on, and take no meta-lock. (A thread that
//! starts or stops blocking meanwhile may wait for the few loads a snapshot
//! makes of it, under its small lock.)
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
//! record; with it off, none of this is built.

mod display;

use std::string::String;
use std::thread::ThreadId;
use std::time::{Duration, Instant};
use std::vec::Vec;

use std::collections::HashMap;

use crate::exec_env::{all_envs, for_each_batched_record};
use crate::lock_record::LockRecord;
use crate::lock_record::record_of;
use crate::word::{LOCKED, MultiUseWord, state};
use core::sync::atomic::Ordering;

/// One monitor a thread holds.
///
/// ```
/// use metalock::{MultiUseWord, diagnostics};
///
/// let word = MultiUseWord::new();
/// let _outer = word.lock();
/// let _inner = word.lock();
/// let dump = diagnostics::snapshot();
/// let held = dump.current_thread().unwrap().holds()[0];
/// assert_eq!(held.monitor, &word as *const MultiUseWord as usize);
/// assert_eq!(held.depth, 2);
/// assert_eq!(held.key, None); // an embedded word, not a keyed monitor
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeldMonitor {
    /// The address of the monitor's word.
    pub monitor: usize,
    /// How many levels the thread holds it at.
    pub depth: usize,
    /// For a keyed monitor (`metalock::lock(&value)`): the value's address.
    pub key: Option<usize>,
}

/// Whether a blocked thread enters a monitor or waits on it.
///
/// ```
/// use metalock::Synchronized;
/// use metalock::diagnostics::{self, BlockKind};
///
/// let go = Synchronized::new(false);
/// std::thread::scope(|s| {
///     let id = s.spawn(|| go.lock().wait_while(|go| !*go)).thread().id();
///     // Polls the dump until the thread is seen blocked.
///     let kind = loop {
///         let dump = diagnostics::snapshot();
///         match dump.threads().iter().find(|t| t.id() == id).and_then(|t| t.blocked_on()) {
///             Some(blocked) => break blocked.kind,
///             None => std::thread::yield_now(),
///         }
///     };
///     assert_eq!(kind, BlockKind::Waiting);
///     let mut guard = go.lock();
///     *guard = true;
///     guard.notify_all();
/// });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockKind {
    /// In `lock` (or `try_lock_for`), or back from a `wait` (notified, or
    /// out of time): waiting for another thread to release the monitor.
    Entering,
    /// In a `wait`: waiting for a notification (or a timeout, or an
    /// interrupt). Never part of a deadlock cycle: a notify may still come.
    Waiting,
}

/// The monitor a thread is blocked on.
///
/// ```
/// use metalock::MultiUseWord;
/// use metalock::diagnostics::{self, BlockKind};
///
/// let word = MultiUseWord::new();
/// let guard = word.lock();
/// std::thread::scope(|s| {
///     let id = s.spawn(|| drop(word.lock())).thread().id();
///     // Polls the dump until the thread is seen entering, its owner read.
///     let blocked = loop {
///         let dump = diagnostics::snapshot();
///         let thread = dump.threads().iter().find(|t| t.id() == id);
///         match thread.and_then(|t| t.blocked_on()) {
///             Some(blocked) if blocked.owner.is_some() => break blocked.clone(),
///             _ => std::thread::yield_now(),
///         }
///     };
///     assert_eq!(blocked.kind, BlockKind::Entering);
///     assert_eq!(blocked.monitor, &word as *const MultiUseWord as usize);
///     assert_eq!(blocked.owner, Some(std::thread::current().id()));
///     drop(guard);
/// });
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockedOn {
    /// The address of the monitor's word.
    pub monitor: usize,
    /// Entering or waiting.
    pub kind: BlockKind,
    /// The enter gives up at a deadline (`try_lock_for`, `try_lock_until`),
    /// or the wait ends at one: a timed enter goes on whatever the owner
    /// does, so it is never part of a deadlock cycle.
    pub timed: bool,
    /// How long the thread had been blocked when the snapshot was taken.
    pub for_: Duration,
    /// When entering: the thread that owned the monitor then, if it could
    /// be read (a monitor between two owners has none).
    pub owner: Option<ThreadId>,
    /// For a keyed monitor (`metalock::lock(&value)`): the value's address.
    pub key: Option<usize>,
    episode: u64,
    owner_ee: Option<usize>,
}

/// One thread in a [`Snapshot`].
///
/// ```
/// use metalock::MultiUseWord;
/// use metalock::diagnostics::{self, ThreadDump};
///
/// let word = MultiUseWord::new();
/// let _guard = word.lock();
/// let dump = diagnostics::snapshot();
/// let me: &ThreadDump = dump.current_thread().unwrap();
/// assert_eq!(me.id(), std::thread::current().id());
/// assert!(!me.has_exited());
/// assert_eq!(me.holds().len(), 1);
/// assert!(me.blocked_on().is_none());
/// ```
#[derive(Clone, Debug)]
pub struct ThreadDump {
    id: ThreadId,
    name: Option<String>,
    exited: bool,
    holds: Vec<HeldMonitor>,
    blocked: Option<BlockedOn>,
    ee: usize,
}

impl ThreadDump {
    /// The thread's id.
    ///
    /// ```
    /// use metalock::{MultiUseWord, diagnostics};
    ///
    /// let word = MultiUseWord::new();
    /// let _guard = word.lock();
    /// let me = std::thread::current().id();
    /// let dump = diagnostics::snapshot();
    /// assert!(dump.threads().iter().any(|t| t.id() == me && t.holds().len() == 1));
    /// ```
    pub fn id(&self) -> ThreadId {
        self.id
    }

    /// The thread's name, if it has one.
    ///
    /// ```
    /// use metalock::{MultiUseWord, diagnostics};
    ///
    /// let word = MultiUseWord::new();
    /// std::thread::scope(|s| {
    ///     std::thread::Builder::new()
    ///         .name("worker".into())
    ///         .spawn_scoped(s, || {
    ///             let _guard = word.lock();
    ///             let dump = diagnostics::snapshot();
    ///             assert_eq!(dump.current_thread().unwrap().name(), Some("worker"));
    ///         })
    ///         .unwrap();
    /// });
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Whether the thread has exited while its guards (leaked) still hold
    /// monitors.
    ///
    /// ```
    /// use metalock::{MultiUseWord, diagnostics};
    ///
    /// static WORD: MultiUseWord = MultiUseWord::new();
    ///
    /// std::thread::scope(|s| {
    ///     let leaker = s.spawn(|| std::mem::forget(WORD.lock()));
    ///     let id = leaker.thread().id();
    ///     leaker.join().unwrap();
    ///     let dump = diagnostics::snapshot();
    ///     let gone = dump.threads().iter().find(|t| t.id() == id).unwrap();
    ///     assert!(gone.has_exited());
    ///     assert_eq!(gone.holds()[0].monitor, &WORD as *const MultiUseWord as usize);
    /// });
    /// assert!(WORD.is_locked()); // for good: its guard was leaked
    /// ```
    pub fn has_exited(&self) -> bool {
        self.exited
    }

    /// The monitors the thread holds, by address (not the one it waits on,
    /// which a wait releases).
    ///
    /// ```
    /// use metalock::{MultiUseWord, diagnostics};
    ///
    /// let word = MultiUseWord::new();
    /// let value = String::from("keyed");
    /// let _first = word.lock();
    /// let _second = metalock::lock(&value);
    /// let dump = diagnostics::snapshot();
    /// let holds = dump.current_thread().unwrap().holds();
    /// let word_address = &word as *const MultiUseWord as usize;
    /// assert!(holds.iter().any(|held| held.monitor == word_address));
    /// assert!(holds.iter().any(|held| held.key == Some(&value as *const String as usize)));
    /// ```
    pub fn holds(&self) -> &[HeldMonitor] {
        &self.holds
    }

    /// The monitor the thread is blocked on, if any.
    ///
    /// ```
    /// use metalock::{MultiUseWord, diagnostics};
    ///
    /// let word = MultiUseWord::new();
    /// let guard = word.lock();
    /// std::thread::scope(|s| {
    ///     let id = s.spawn(|| drop(word.lock())).thread().id();
    ///     // Polls the dump until the thread is seen blocked.
    ///     let monitor = loop {
    ///         let dump = diagnostics::snapshot();
    ///         let thread = dump.threads().iter().find(|t| t.id() == id);
    ///         match thread.and_then(|t| t.blocked_on()) {
    ///             Some(blocked) => break blocked.monitor,
    ///             None => std::thread::yield_now(),
    ///         }
    ///     };
    ///     assert_eq!(monitor, &word as *const MultiUseWord as usize);
    ///     drop(guard);
    /// });
    /// ```
    pub fn blocked_on(&self) -> Option<&BlockedOn> {
        self.blocked.as_ref()
    }

    fn label(&self) -> String {
        match &self.name {
            Some(name) => format!("\"{name}\" ({:?})", self.id),
            None => format!("{:?}", self.id),
        }
    }
}

/// What every thread that uses monitors was doing; its `Display` is a
/// thread dump.
///
/// ```
/// use metalock::{MultiUseWord, diagnostics};
///
/// let word = MultiUseWord::new();
/// let _guard = word.lock();
/// let text = diagnostics::snapshot().to_string();
/// println!("{text}");
/// assert!(text.starts_with("metalock thread dump:"));
/// assert!(text.contains("(depth 1)"));
/// ```
#[derive(Clone, Debug)]
pub struct Snapshot {
    threads: Vec<ThreadDump>,
}

impl Snapshot {
    /// Every thread that uses monitors.
    ///
    /// ```
    /// use metalock::{MultiUseWord, Synchronized, diagnostics};
    ///
    /// let word = MultiUseWord::new();
    /// let value = Synchronized::new(0);
    /// let _guard = word.lock();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         let _value = value.lock();
    ///         // Both threads hold a monitor: both are listed.
    ///         let dump = diagnostics::snapshot();
    ///         let holders = dump.threads().iter().filter(|t| !t.holds().is_empty());
    ///         assert_eq!(holders.count(), 2);
    ///     });
    /// });
    /// ```
    pub fn threads(&self) -> &[ThreadDump] {
        &self.threads
    }

    /// The calling thread's entry, if it uses monitors.
    ///
    /// ```
    /// use metalock::{MultiUseWord, diagnostics};
    ///
    /// let word = MultiUseWord::new();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         // A thread that never used a monitor is not listed.
    ///         assert!(diagnostics::snapshot().current_thread().is_none());
    ///         let _guard = word.lock();
    ///         let dump = diagnostics::snapshot();
    ///         assert_eq!(dump.current_thread().unwrap().holds().len(), 1);
    ///     });
    /// });
    /// ```
    pub fn current_thread(&self) -> Option<&ThreadDump> {
        let me = std::thread::current().id();
        self.threads.iter().find(|thread| thread.id == me)
    }

    /// The cycles of entering threads in this snapshot, each starting at the
    /// thread with the lowest index (so each cycle once).
    fn cycles(&self) -> Vec<Vec<usize>> {
        let next = |i: usize| -> Option<usize> {
            let blocked = self.threads[i].blocked.as_ref()?;
            if blocked.kind != BlockKind::Entering || blocked.timed {
                return None;
            }
            let owner = blocked.owner?;
            self.threads
                .iter()
                .position(|t| t.id == owner && t.id != self.threads[i].id)
        };
        let mut cycles = Vec::new();
        for start in 0..self.threads.len() {
            let mut path = vec![start];
            let mut at = start;
            while let Some(n) = next(at) {
                if n == start {
                    if path.iter().all(|&i| i >= start) {
                        cycles.push(path.clone());
                    }
                    break;
                }
                if path.contains(&n) || path.len() > self.threads.len() {
                    break;
                }
                path.push(n);
                at = n;
            }
        }
        cycles
    }
}

/// A cycle of threads each blocked entering a monitor the next one owns:
/// none of them can go on. Its `Display` names the threads and monitors.
///
/// ```
/// # use metalock::{MultiUseWord, diagnostics};
/// # use std::sync::Barrier;
/// # static A: MultiUseWord = MultiUseWord::new();
/// # static B: MultiUseWord = MultiUseWord::new();
/// # static BOTH_HOLD_ONE: Barrier = Barrier::new(2);
/// # for (first, second) in [(&A, &B), (&B, &A)] {
/// #     std::thread::spawn(move || {
/// #         let _first = first.lock();
/// #         BOTH_HOLD_ONE.wait();
/// #         let _second = second.lock();
/// #     });
/// # }
/// // Two threads lock words `A` and `B` in opposite orders, and block.
/// let deadlock = loop {
///     match diagnostics::deadlocks().pop() {
///         Some(deadlock) => break deadlock,
///         None => std::thread::yield_now(),
///     }
/// };
/// println!("{deadlock}");
/// assert!(deadlock.to_string().starts_with("Found one metalock deadlock (2 threads)"));
/// // The threads stay blocked; the process ends without them.
/// ```
#[derive(Clone, Debug)]
pub struct Deadlock {
    threads: Vec<ThreadDump>,
}

impl Deadlock {
    /// The threads of the cycle, each waiting for a monitor that the next
    /// one (the first, after the last) holds.
    ///
    /// ```
    /// # use metalock::{MultiUseWord, diagnostics};
    /// # use std::sync::Barrier;
    /// # static A: MultiUseWord = MultiUseWord::new();
    /// # static B: MultiUseWord = MultiUseWord::new();
    /// # static BOTH_HOLD_ONE: Barrier = Barrier::new(2);
    /// # for (first, second) in [(&A, &B), (&B, &A)] {
    /// #     std::thread::spawn(move || {
    /// #         let _first = first.lock();
    /// #         BOTH_HOLD_ONE.wait();
    /// #         let _second = second.lock();
    /// #     });
    /// # }
    /// // Two threads lock words `A` and `B` in opposite orders, and block.
    /// let deadlock = loop {
    ///     match diagnostics::deadlocks().pop() {
    ///         Some(deadlock) => break deadlock,
    ///         None => std::thread::yield_now(),
    ///     }
    /// };
    /// let threads = deadlock.threads();
    /// assert_eq!(threads.len(), 2);
    /// for (i, thread) in threads.iter().enumerate() {
    ///     let next = &threads[(i + 1) % threads.len()];
    ///     assert_eq!(thread.blocked_on().unwrap().owner, Some(next.id()));
    /// }
    /// ```
    pub fn threads(&self) -> &[ThreadDump] {
        &self.threads
    }
}

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
            exited: observed.thread.exited,
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
/// once. A cycle is reported only if two snapshots in a row see every
/// thread of it in the same blocking episode (so it was blocked all the
/// time in between, and owned what it owned: a deadlock, not a passing
/// state); threads that wait for a notification are never part of one.
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
    let cycles = first.cycles();
    if cycles.is_empty() {
        return Vec::new();
    }
    let second = snapshot();
    cycles
        .into_iter()
        .filter(|cycle| {
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
        .map(|cycle| Deadlock {
            threads: cycle.iter().map(|&i| first.threads[i].clone()).collect(),
        })
        .collect()
}

/// What every thread's guards hold, by EE address (lock records' owner):
/// (word address, depth) of every record that notes a word, the EEs' hot
/// records and every allocated batch. Read while the threads run: a
/// snapshot, each pair as its owner last wrote it.
fn held_by_thread() -> HashMap<usize, Vec<(usize, usize)>> {
    let mut held: HashMap<usize, Vec<(usize, usize)>> = HashMap::new();
    let mut note = |record: &LockRecord| {
        // Acquire: see `guard::note_held`.
        let word = record.diag_word.load(Ordering::Acquire);
        if word != 0 {
            let depth = record.diag_depth.load(Ordering::Relaxed).max(1);
            held.entry(record.owner()).or_default().push((word, depth));
        }
    };
    for ee in all_envs() {
        note(ee.hot_record());
    }
    for_each_batched_record(note);
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
    // SAFETY: a LOCKED word points at a live record (records are never
    // freed).
    (state(bits) == LOCKED).then(|| unsafe { (*record_of(bits)).owner() })
}
