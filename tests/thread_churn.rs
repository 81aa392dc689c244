//! Execution environments and lock records stay bounded by the number of
//! threads alive at the same time, on every path a thread can take through
//! its life: a normal exit, an exit that leaves a forgotten guard behind
//! (also from a thread-local destructor after the exit cleanup), a
//! thread-local destructor that locks before or after the crate's own exit
//! cleanup, a guard kept by a thread-local and released after that cleanup, a
//! failed `try_lock` after it, a timed lock that gives up after it, a thread
//! that never locks, a thread started outside Rust, and a thread that
//! panics.
//!
//! Each test churns thousands of threads, at most `WAVE` alive at once, and
//! checks what the crate allocated against that: the pool recycles an
//! exited thread's environment, with its free list, for the next thread.
// Under a model checker (`--cfg loom`, feature `shuttle`) the crate's
// constructors are not `const` and its primitives run only inside a model.
#![cfg(not(any(loom, feature = "shuttle")))]

use std::cell::{Cell, RefCell};
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

use metalock::__test_hooks::exec_envs_allocated;
use metalock::{MonitorGuard, MultiUseWord, Synchronized, lock_records_allocated};

/// Threads churned per test.
const THREADS: usize = 2_000;
/// Threads alive at the same time.
const WAVE: usize = 4;
/// Slack for the test harness's own threads.
const SLACK: usize = 2;

static WORD: MultiUseWord = MultiUseWord::with_payload(0x5a);
static COUNTER: Synchronized<u64> = Synchronized::new(0);

/// The counters are process-wide: one test at a time.
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the crate has allocated so far.
#[derive(Clone, Copy, Debug)]
struct Allocated {
    envs: usize,
    records: usize,
}

fn allocated() -> Allocated {
    Allocated {
        envs: exec_envs_allocated(),
        records: lock_records_allocated(),
    }
}

/// Runs `body` on `THREADS` threads, `WAVE` at a time, and returns what the
/// crate allocated meanwhile.
fn churn(body: impl Fn(usize) + Sync) -> Allocated {
    let before = allocated();
    for wave in 0..THREADS / WAVE {
        thread::scope(|s| {
            let threads: Vec<_> = (0..WAVE)
                .map(|i| {
                    let body = &body;
                    s.spawn(move || body(wave * WAVE + i))
                })
                .collect();
            // An explicit join waits for the thread's end, thread-local
            // destructors included; the scope's implicit one does not.
            for t in threads {
                t.join().unwrap();
            }
        });
    }
    let after = allocated();
    Allocated {
        envs: after.envs - before.envs,
        records: after.records - before.records,
    }
}

/// The bound for threads that give everything back: an environment and a
/// first batch of 8 records per thread alive at once.
fn assert_bounded_by_live_threads(path: &str, grown: Allocated) {
    let live = WAVE + SLACK;
    println!("{path}: {grown:?} over {THREADS} threads");
    assert!(
        grown.envs <= live,
        "{path}: {} environments allocated for {THREADS} threads, {WAVE} at a time",
        grown.envs
    );
    assert!(
        grown.records <= 8 * live,
        "{path}: {} lock records allocated for {THREADS} threads, {WAVE} at a time",
        grown.records
    );
}

/// One word per churned thread, living as long as the threads may hold them.
fn leaked_words() -> &'static [MultiUseWord] {
    (0..THREADS)
        .map(|_| MultiUseWord::new())
        .collect::<Vec<_>>()
        .leak()
}

/// Locks as a thread typically does: a recursive enter on a word, and a
/// `Synchronized`.
fn lock_a_little() {
    let outer = WORD.lock();
    let inner = WORD.lock();
    assert_eq!(inner.depth(), 2);
    drop((inner, outer));
    *COUNTER.lock() += 1;
}

#[test]
fn normal_exit() {
    let _serial = serial();
    let grown = churn(|_| lock_a_little());
    assert_bounded_by_live_threads("normal exit", grown);
}

#[test]
fn thread_that_panics() {
    let _serial = serial();
    // The panics are the test's own: keep them off the output.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let grown = churn(|_| {
        let result = std::panic::catch_unwind(|| {
            let _guard = WORD.lock();
            let _counter = COUNTER.lock();
            panic!("boom while holding two monitors");
        });
        assert!(result.is_err());
        // The unwind released both.
        assert!(!WORD.is_held_by_current_thread());
        lock_a_little();
    });
    std::panic::set_hook(default_hook);
    assert_bounded_by_live_threads("panic", grown);
}

#[test]
fn thread_that_never_locks() {
    let _serial = serial();
    let grown = churn(|_| {
        // Asking whether it holds a monitor does not bind an environment.
        assert!(!WORD.is_held_by_current_thread());
    });
    println!("never locks: {grown:?}");
    assert_eq!(grown.envs, 0);
    assert_eq!(grown.records, 0);
}

/// Locks from its destructor, which runs while the thread's thread-locals
/// are destroyed.
struct LocksOnDrop;

impl Drop for LocksOnDrop {
    fn drop(&mut self) {
        lock_a_little();
    }
}

thread_local! {
    static LOCKS_ON_DROP: LocksOnDrop = const { LocksOnDrop };
}

#[test]
fn thread_local_destructor_that_locks_after_the_exit_cleanup() {
    let _serial = serial();
    let grown = churn(|_| {
        // Registered before the first lock, so destroyed after the crate's
        // exit cleanup: its lock binds an environment again.
        LOCKS_ON_DROP.with(|_| ());
        lock_a_little();
    });
    assert_bounded_by_live_threads("destructor locks after the exit cleanup", grown);
}

#[test]
fn thread_local_destructor_that_locks_before_the_exit_cleanup() {
    let _serial = serial();
    let grown = churn(|_| {
        lock_a_little();
        LOCKS_ON_DROP.with(|_| ());
    });
    assert_bounded_by_live_threads("destructor locks before the exit cleanup", grown);
}

thread_local! {
    /// A guard kept across the thread's exit cleanup (registered before the
    /// thread's first lock, so destroyed after that cleanup).
    static KEPT: RefCell<Option<MonitorGuard<'static>>> = const { RefCell::new(None) };
}

#[test]
fn guard_released_by_a_thread_local_after_the_exit_cleanup() {
    let _serial = serial();
    let words = leaked_words();
    let grown = churn(|i| {
        KEPT.with(|kept| {
            *kept.borrow_mut() = Some(words[i].lock());
        });
        lock_a_little();
    });
    assert_bounded_by_live_threads("guard released after the exit cleanup", grown);
    assert!(words.iter().all(|w| !w.is_locked()));
}

thread_local! {
    static TRIES_ON_DROP: TriesOnDrop = const { TriesOnDrop };
}

/// A word the test keeps locked on the main thread.
static HELD: MultiUseWord = MultiUseWord::new();

/// Fails a `try_lock` from its destructor, after the exit cleanup: an
/// operation that takes no lock record.
struct TriesOnDrop;

impl Drop for TriesOnDrop {
    fn drop(&mut self) {
        assert!(HELD.try_lock().is_none());
        assert!(!HELD.is_held_by_current_thread());
    }
}

#[test]
fn failed_try_lock_after_the_exit_cleanup() {
    let _serial = serial();
    let _held = HELD.lock();
    let grown = churn(|_| {
        TRIES_ON_DROP.with(|_| ());
        lock_a_little();
    });
    assert_bounded_by_live_threads("failed try_lock after the exit cleanup", grown);
}

thread_local! {
    static TIMES_OUT_ON_DROP: TimesOutOnDrop = const { TimesOutOnDrop };
}

/// A value whose keyed monitor the test keeps locked on the main thread.
static HELD_VALUE: u64 = 0;

/// Two values in one 8-byte granule, so of one home: the main thread holds
/// both, the first in the home, the second in the overflow table.
#[repr(align(8))]
struct Pair([u32; 2]);
static HELD_PAIR: Pair = Pair([0, 0]);

/// Queues for monitors the main thread holds, from its destructor after the
/// exit cleanup, until timed locks give up: each takes a record, bound to
/// an environment for it alone, and gives both back as it leaves the queue.
/// And tries the overflow entry of a keyed value, which must give the
/// environment back too.
struct TimesOutOnDrop;

impl Drop for TimesOutOnDrop {
    fn drop(&mut self) {
        let patience = Duration::from_micros(200);
        assert!(HELD.try_lock_for(patience).is_none());
        assert!(metalock::try_lock_for(&HELD_VALUE, patience).is_none());
        assert!(metalock::try_lock(&HELD_PAIR.0[1]).is_none());
        assert!(metalock::try_lock_for(&HELD_PAIR.0[1], patience).is_none());
        assert!(!metalock::__test_hooks::thread_has_exec_env());
    }
}

/// The timed enter that gives up leaves its environment to its caller to
/// release: released inside, it went back to the pool while the caller
/// still read it, and another thread's could then be released instead.
#[test]
fn timed_lock_that_gives_up_after_the_exit_cleanup() {
    let _serial = serial();
    let _held = HELD.lock();
    let _held_value = metalock::lock(&HELD_VALUE);
    let _held_pair = HELD_PAIR.0.each_ref().map(metalock::lock);
    let grown = churn(|_| {
        TIMES_OUT_ON_DROP.with(|_| ());
        lock_a_little();
    });
    assert_bounded_by_live_threads("timed lock gives up after the exit cleanup", grown);
}

#[test]
fn exit_with_a_forgotten_guard() {
    let _serial = serial();
    let words = leaked_words();
    let grown = churn(|i| {
        lock_a_little();
        std::mem::forget(words[i].lock());
    });
    println!("forgotten guard: {grown:?} over {THREADS} threads");
    // Each such thread keeps its environment (a record in a locked word
    // names it as owner) and the one record still out; the rest of its free
    // list goes to the next threads.
    let live = WAVE + SLACK;
    assert!(grown.envs <= THREADS + live, "{grown:?}");
    assert!(grown.records <= THREADS + 8 * live, "{grown:?}");
    // The monitors stay held by the exited threads.
    assert!(
        words
            .iter()
            .all(|w| w.is_locked() && w.try_lock().is_none())
    );
}

/// Locks, and forgets a guard of the word it was given, when destroyed.
struct ForgetsOnDrop(Cell<Option<&'static MultiUseWord>>);

impl Drop for ForgetsOnDrop {
    fn drop(&mut self) {
        lock_a_little();
        if let Some(word) = self.0.get() {
            std::mem::forget(word.lock());
        }
    }
}

thread_local! {
    static FORGETS_ON_DROP: ForgetsOnDrop = const { ForgetsOnDrop(Cell::new(None)) };
}

#[test]
fn forgotten_guard_after_the_exit_cleanup() {
    let _serial = serial();
    let words = leaked_words();
    let grown = churn(|i| {
        // Registered before the first lock, so destroyed after the crate's
        // exit cleanup: it binds an environment from the pool, whose free
        // list holds the 8 records of a thread that held two monitors at
        // once, and keeps that environment for good.
        FORGETS_ON_DROP.with(|forgets| forgets.0.set(Some(&words[i])));
        let two = (WORD.lock(), COUNTER.lock());
        drop(two);
    });
    println!("forgotten guard after the exit cleanup: {grown:?} over {THREADS} threads");
    // Only the environment, with its own record, and the record still out
    // stay behind (a detached environment takes its records from the free
    // list): two records per thread. The free list it bound with goes to the
    // next threads; kept, it would be 8 per thread.
    let live = WAVE + SLACK;
    assert!(grown.envs <= THREADS + live, "{grown:?}");
    assert!(grown.records <= 2 * THREADS + 8 * live, "{grown:?}");
    assert!(words.iter().all(MultiUseWord::is_locked));
}

#[cfg(unix)]
#[test]
fn threads_started_outside_rust() {
    let _serial = serial();

    extern "C" fn run(_: *mut libc::c_void) -> *mut libc::c_void {
        lock_a_little();
        std::ptr::null_mut()
    }

    let before = allocated();
    for _ in 0..THREADS / WAVE {
        let mut threads = [0 as libc::pthread_t; WAVE];
        for t in &mut threads {
            // SAFETY: `run` has the signature pthread_create expects and
            // uses no argument; `t` is valid for the thread id.
            let rc =
                unsafe { libc::pthread_create(t, std::ptr::null(), run, std::ptr::null_mut()) };
            assert_eq!(rc, 0, "pthread_create");
        }
        for t in threads {
            // SAFETY: `t` is a joinable thread we created.
            assert_eq!(unsafe { libc::pthread_join(t, std::ptr::null_mut()) }, 0);
        }
    }
    let after = allocated();
    let grown = Allocated {
        envs: after.envs - before.envs,
        records: after.records - before.records,
    };
    assert_bounded_by_live_threads("threads started outside Rust", grown);
}
