//! A global allocator that locks monitors. The crate allocates lock records
//! on a thread's first nested lock, so such an allocator runs a lock and an
//! unlock in the middle of another lock, on the same execution environment.
//! In a thread-local destructor that runs after the crate's exit cleanup the
//! environment is detached: bound only while the thread holds a record. The
//! nested unlock must not take the environment for idle and give it back to
//! the pool while the outer lock still uses it (another thread could then
//! bind it too). And a thread's first lock, which takes an environment
//! (allocating one when the pool is empty), must not leak the environment
//! that the allocator's lock binds for the thread meanwhile.
//!
//! Nor may the crate allocate or free under a lock of its own that such an
//! allocator's locks take again: the keyed overflow table's shard locks and
//! homes' meta-locks, and, with `diagnostics`, the pools' lock, which a
//! lock that needs a batch of records takes. The allocator counts what it
//! is asked for under any of the crate's internal locks or a meta-lock:
//! nothing may be (the crate counts them in debug builds only).
//!
//! One test: the allocator is process-wide.
// Under a model checker (`--cfg loom`, feature `shuttle`) the crate's
// constructors are not `const` and its primitives run only inside a model.
#![cfg(not(any(loom, feature = "shuttle")))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use metalock::__test_hooks::{exec_envs_allocated, locks_held, thread_has_exec_env};
use metalock::MultiUseWord;

/// Locks `LOCKED_BY_ALLOCATOR` on every allocation of a thread in its late
/// destructor (`IN_LATE`) or in its first lock (`IN_FIRST`), except the
/// allocations of that lock itself. On every allocation and free of a
/// thread that set `RELOCK`, locks again the next `RELOCK_SPAN` of the
/// keyed values it holds, and locks `LOCKED_BY_ALLOCATOR`.
struct LockingAllocator;

static LOCKED_BY_ALLOCATOR: MultiUseWord = MultiUseWord::new();
static OUTER: MultiUseWord = MultiUseWord::new();
/// Locks the allocator ran in the late destructors.
static NESTED_LOCKS: AtomicUsize = AtomicUsize::new(0);
/// Late destructors whose lock returned without an environment bound.
static LOST_ENVIRONMENT: AtomicUsize = AtomicUsize::new(0);
static LATE_RAN: AtomicUsize = AtomicUsize::new(0);
static ARMED: AtomicBool = AtomicBool::new(false);
/// Times the allocator locked held keyed values again.
static RELOCKS: AtomicUsize = AtomicUsize::new(0);
const RELOCK_SPAN: usize = 200;

thread_local! {
    // Const, without destructors: usable from any destructor.
    static IN_LATE: Cell<bool> = const { Cell::new(false) };
    static IN_FIRST: Cell<bool> = const { Cell::new(false) };
    static IN_HOOK: Cell<bool> = const { Cell::new(false) };
    static LATE: Late = const { Late };
    static RELOCK: Cell<Option<&'static [u64]>> = const { Cell::new(None) };
    static RELOCK_NEXT: Cell<usize> = const { Cell::new(0) };
}

/// Allocations and frees, by any thread, under one of the crate's internal
/// locks or a meta-lock (counted in debug builds).
static UNDER_A_LOCK: AtomicUsize = AtomicUsize::new(0);

/// What the allocator does before it allocates (`alloc`) or frees.
fn hook(alloc: bool) {
    if locks_held() != 0 {
        UNDER_A_LOCK.fetch_add(1, SeqCst);
    }
    let late_or_first =
        alloc && ARMED.load(SeqCst) && (IN_LATE.with(Cell::get) || IN_FIRST.with(Cell::get));
    let relock = RELOCK.with(Cell::get);
    if !late_or_first && relock.is_none() || IN_HOOK.with(|h| h.replace(true)) {
        return;
    }
    if late_or_first {
        drop(LOCKED_BY_ALLOCATOR.lock());
        NESTED_LOCKS.fetch_add(1, SeqCst);
    }
    if let Some(held) = relock {
        let next = RELOCK_NEXT.with(|n| n.replace(n.get() + RELOCK_SPAN));
        for i in next..next + RELOCK_SPAN {
            drop(metalock::lock(&held[i % held.len()]));
        }
        drop(LOCKED_BY_ALLOCATOR.lock());
        RELOCKS.fetch_add(1, SeqCst);
    }
    IN_HOOK.with(|h| h.set(false));
}

// SAFETY: forwards to `System`; the hook only locks and unlocks monitors.
unsafe impl GlobalAlloc for LockingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        hook(true);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        hook(false);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: LockingAllocator = LockingAllocator;

/// Registered before the crate's exit cleanup, so destroyed after it.
struct Late;

impl Drop for Late {
    fn drop(&mut self) {
        IN_LATE.with(|l| l.set(true));
        let guard = OUTER.lock();
        if !thread_has_exec_env() {
            LOST_ENVIRONMENT.fetch_add(1, SeqCst);
        }
        drop(guard);
        IN_LATE.with(|l| l.set(false));
        LATE_RAN.fetch_add(1, SeqCst);
    }
}

#[test]
fn an_allocator_that_locks_monitors() {
    // The count the allocator reads sees a meta-lock held (debug builds,
    // which count).
    assert_eq!(locks_held(), 0);
    #[cfg(debug_assertions)]
    MultiUseWord::new().__with_meta_lock(|| assert_eq!(locks_held(), 1));
    assert_eq!(locks_held(), 0);
    a_lock_inside_an_allocation_of_a_lock_keeps_the_environment();
    keyed_locks_allocate_under_no_lock_of_the_crate();
    assert_eq!(
        UNDER_A_LOCK.load(SeqCst),
        0,
        "memory allocated or freed under an internal lock or a meta-lock of the crate"
    );
}

/// Aborts the process, naming `what`, unless the returned sender is dropped
/// within `limit`: a thread waiting on itself never returns.
fn watchdog(what: &'static str, limit: Duration) -> mpsc::Sender<()> {
    let (done, wait) = mpsc::channel::<()>();
    thread::spawn(move || {
        if let Err(mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(limit) {
            // Not `eprintln!`, which the test harness captures and the
            // abort would lose.
            let _ = writeln!(
                std::io::stderr(),
                "{what}: no progress in {limit:?}, a thread waits on itself"
            );
            std::process::abort();
        }
    });
    done
}

/// A thread holds more keyed values than there are homes, so many of them
/// live in the overflow table, and then locks and unlocks more values, most
/// of which overflow too: their entries are made and freed, and records
/// allocated, while the allocator locks the held values again and a word.
/// Allocating under a home's meta-lock aborted (the same meta-lock taken
/// again), under a shard lock it hung, and so did the record batch list of
/// `diagnostics` under the pools' lock.
fn keyed_locks_allocate_under_no_lock_of_the_crate() {
    const HELD: usize = 20_000;
    const MORE: usize = 2_000;
    let held: &'static [u64] = Vec::leak(vec![0; HELD]);
    let more = vec![0_u64; MORE];
    let guards: Vec<_> = held.iter().map(metalock::lock).collect();
    let watchdog = watchdog("keyed locks under the allocator", Duration::from_secs(60));
    RELOCK.with(|r| r.set(Some(held)));
    for _ in 0..2 {
        let more_guards: Vec<_> = more.iter().map(metalock::lock).collect();
        assert!(more.iter().all(metalock::is_held_by_current_thread));
        // More than there are homes: thousands are entries of the table.
        assert_eq!(metalock::keyed_monitors(), HELD + MORE);
        // The dump reads the table's keys, shard by shard.
        #[cfg(feature = "diagnostics")]
        {
            let dump = metalock::diagnostics::snapshot();
            let keyed = dump.current_thread().unwrap().holds().iter();
            assert_eq!(keyed.filter(|held| held.key.is_some()).count(), HELD + MORE);
        }
        drop(more_guards);
    }
    RELOCK.with(|r| r.set(None));
    drop(watchdog);
    assert!(RELOCKS.load(SeqCst) > 0, "the allocator never locked again");
    assert!(held.iter().all(metalock::is_held_by_current_thread));
    drop(guards);
    assert_eq!(metalock::keyed_monitors(), 0);
}

fn a_lock_inside_an_allocation_of_a_lock_keeps_the_environment() {
    const THREADS: usize = 50;
    ARMED.store(true, SeqCst);

    // The process's first lock: no environment in the pool, so taking one
    // allocates, and the allocator's lock binds one for the thread first.
    // Both must come back: two threads alive at once then take both from
    // the pool and allocate none.
    let before = exec_envs_allocated();
    thread::spawn(|| {
        IN_FIRST.with(|f| f.set(true));
        drop(MultiUseWord::new().lock());
        IN_FIRST.with(|f| f.set(false));
    })
    .join()
    .unwrap();
    assert!(
        NESTED_LOCKS.load(SeqCst) > 0,
        "the allocator never ran inside a first lock"
    );
    let both_bound = Barrier::new(2);
    thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                drop(MultiUseWord::new().lock());
                both_bound.wait();
            });
        }
    });
    assert_eq!(
        exec_envs_allocated() - before,
        2,
        "an environment taken during a first lock was leaked"
    );

    for _ in 0..THREADS {
        thread::spawn(|| {
            LATE.with(|_| ());
            // Binds the environment and registers the exit cleanup, after
            // `LATE`.
            drop(MultiUseWord::new().lock());
        })
        .join()
        .unwrap();
    }
    ARMED.store(false, SeqCst);
    assert_eq!(LATE_RAN.load(SeqCst), THREADS);
    assert!(
        NESTED_LOCKS.load(SeqCst) > 0,
        "the allocator never ran inside a late lock"
    );
    assert_eq!(
        LOST_ENVIRONMENT.load(SeqCst),
        0,
        "a nested unlock gave the environment back under the outer lock"
    );
    assert!(!OUTER.is_locked() && !LOCKED_BY_ALLOCATOR.is_locked());
}
