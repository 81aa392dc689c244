//! What a snapshot reports: each thread, the monitors it holds, the one it
//! blocks on, and the cycles among them. `mod.rs` reads them from the
//! threads; `display` prints them.

use std::string::String;
use std::sync::Arc;
use std::thread::ThreadId;
use std::time::Duration;
use std::vec::Vec;

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
    /// For a monitor of the overflow table it is read apart from the rest
    /// of the snapshot, so an entry reclaimed and reused for another
    /// address in between can show that address.
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
    /// For a monitor of the overflow table it is read apart from the rest
    /// of the snapshot, so an entry reclaimed and reused for another
    /// address in between can show that address.
    pub key: Option<usize>,
    pub(super) episode: u64,
    pub(super) owner_ee: Option<usize>,
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
    pub(super) id: ThreadId,
    pub(super) name: Option<String>,
    /// The words it held as it exited, once it has (`None` while it runs).
    pub(super) held_at_exit: Option<Arc<[usize]>>,
    pub(super) holds: Vec<HeldMonitor>,
    pub(super) blocked: Option<BlockedOn>,
    pub(super) ee: usize,
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
        self.held_at_exit.is_some()
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

    pub(super) fn label(&self) -> String {
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
    pub(super) threads: Vec<ThreadDump>,
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
}

/// A cycle of threads each blocked entering a monitor the next one owns:
/// none of them can go on; or a thread blocked entering a monitor that a
/// thread which has exited still holds, and that thread
/// ([`held_by_exited_thread`](Deadlock::held_by_exited_thread)). Its `Display`
/// names the threads and monitors.
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
    pub(super) threads: Vec<ThreadDump>,
    /// A thread behind a monitor an exited thread left held, not a cycle.
    pub(super) held_by_exited: bool,
}

impl Deadlock {
    /// The threads of a cycle, each waiting for a monitor that the next
    /// one (the first, after the last) holds; or, when
    /// [`held_by_exited_thread`](Self::held_by_exited_thread), the thread
    /// blocked entering and the exited thread that holds its monitor.
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

    /// Whether this is a thread blocked entering a monitor that a thread
    /// which has exited held as it exited, through guards it leaked
    /// (`mem::forget`): [`threads`](Self::threads) are then the blocked
    /// thread and the exited one, which blocks on nothing. A monitor that
    /// a thread-local destructor of that thread locks after its exit
    /// cleanup is not reported (the destructor may still release it), nor
    /// one that such a destructor leaks; a guard kept in a thread-local
    /// still unlocks as the thread-local is destroyed, after the exit
    /// cleanup, so its monitor may be reported until then.
    ///
    /// ```
    /// use metalock::{MultiUseWord, diagnostics};
    ///
    /// static WORD: MultiUseWord = MultiUseWord::new();
    ///
    /// std::thread::spawn(|| std::mem::forget(WORD.lock())).join().unwrap();
    /// // This thread would block for good: nothing will release WORD.
    /// std::thread::spawn(|| drop(WORD.lock()));
    /// let deadlock = loop {
    ///     match diagnostics::deadlocks().pop() {
    ///         Some(deadlock) => break deadlock,
    ///         None => std::thread::yield_now(),
    ///     }
    /// };
    /// assert!(deadlock.held_by_exited_thread());
    /// assert!(deadlock.threads()[1].has_exited());
    /// println!("{deadlock}");
    /// ```
    pub fn held_by_exited_thread(&self) -> bool {
        self.held_by_exited
    }
}
