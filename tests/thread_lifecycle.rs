//! Locking at the edges of a thread's life: from thread-local destructors
//! (before and after the crate's own per-thread state is torn down) and
//! from threads that Rust did not start (created with `pthread_create`).
// Under a model checker (`--cfg loom`, feature `shuttle`) the crate's
// constructors are not `const` and its primitives run only inside a model.
#![cfg(not(any(loom, feature = "shuttle")))]

use metalock::__test_hooks::exec_envs_allocated;
use metalock::{MonitorGuard, MultiUseWord, Synchronized};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

static WORD: MultiUseWord = MultiUseWord::with_payload(0x77);
/// The foreign threads' own word: the tests run at once, and each checks
/// that its word ends unlocked.
static FOREIGN_WORD: MultiUseWord = MultiUseWord::with_payload(0x78);
static COUNTER: Synchronized<u64> = Synchronized::new(0);
static DESTRUCTOR_LOCKS: AtomicUsize = AtomicUsize::new(0);

/// Locks both statics from its destructor, which runs while the thread's
/// thread-locals are being destroyed.
struct LocksOnDrop;

impl Drop for LocksOnDrop {
    fn drop(&mut self) {
        let outer = WORD.lock();
        let inner = WORD.lock();
        assert_eq!(inner.depth(), 2);
        drop((inner, outer));
        *COUNTER.lock() += 1;
        DESTRUCTOR_LOCKS.fetch_add(1, Ordering::SeqCst);
    }
}

thread_local! {
    static LOCKS_ON_DROP: LocksOnDrop = const { LocksOnDrop };
}

#[test]
fn locking_from_thread_local_destructors() {
    let before = DESTRUCTOR_LOCKS.load(Ordering::SeqCst);
    let threads: Vec<_> = (0..8)
        .map(|i| {
            thread::spawn(move || {
                // Half the threads register the destructor before their first
                // lock (so it runs after the crate's per-thread state is torn
                // down), half after.
                if i % 2 == 0 {
                    LOCKS_ON_DROP.with(|_| ());
                    drop(WORD.lock());
                } else {
                    drop(WORD.lock());
                    LOCKS_ON_DROP.with(|_| ());
                }
            })
        })
        .collect();
    for t in threads {
        t.join()
            .expect("a thread that locks in a destructor exits cleanly");
    }
    assert_eq!(DESTRUCTOR_LOCKS.load(Ordering::SeqCst) - before, 8);
    assert!(!WORD.is_locked());
    assert_eq!(WORD.payload(), 0x77);
    assert!(*COUNTER.lock() >= 8);
}

#[cfg(unix)]
#[test]
fn locking_from_a_thread_rust_did_not_start() {
    extern "C" fn foreign_thread(_: *mut libc::c_void) -> *mut libc::c_void {
        for _ in 0..1000 {
            *COUNTER.lock() += 1;
        }
        let guard = FOREIGN_WORD.lock();
        assert_eq!(FOREIGN_WORD.payload(), 0x78);
        drop(guard);
        std::ptr::null_mut()
    }

    let before = *COUNTER.lock();
    let mut ids = Vec::new();
    for _ in 0..4 {
        let mut id: libc::pthread_t = 0;
        // SAFETY: `id` is a valid out-pointer, default attributes (null) are
        // allowed, and `foreign_thread` has the C signature pthread expects.
        let rc = unsafe {
            libc::pthread_create(
                &mut id,
                std::ptr::null(),
                foreign_thread,
                std::ptr::null_mut(),
            )
        };
        assert_eq!(rc, 0, "pthread_create failed");
        ids.push(id);
    }
    for id in ids {
        // SAFETY: `id` is a joinable thread created above, joined once.
        let rc = unsafe { libc::pthread_join(id, std::ptr::null_mut()) };
        assert_eq!(rc, 0, "pthread_join failed");
    }
    assert!(*COUNTER.lock() >= before + 4000);
    assert!(!FOREIGN_WORD.is_locked());
}

static HELD_ACROSS_TEARDOWN: MultiUseWord = MultiUseWord::with_payload(5);

/// Holds a guard until the thread's thread-locals are destroyed, then
/// re-enters the same monitor from its destructor: the thread must still be
/// the owner, although the crate's own per-thread teardown ran before.
struct HoldsUntilTeardown(RefCell<Option<MonitorGuard<'static>>>);

impl Drop for HoldsUntilTeardown {
    fn drop(&mut self) {
        assert!(HELD_ACROSS_TEARDOWN.is_held_by_current_thread());
        let again = HELD_ACROSS_TEARDOWN.lock();
        assert_eq!(again.depth(), 2);
        drop(again);
        self.0.borrow_mut().take();
    }
}

thread_local! {
    static HOLDER: HoldsUntilTeardown = const { HoldsUntilTeardown(RefCell::new(None)) };
}

#[test]
fn a_monitor_held_across_teardown_is_still_ours_in_later_destructors() {
    let (done_tx, done_rx) = mpsc::channel();
    thread::spawn(move || {
        let exiting = thread::spawn(|| {
            // Registered before the crate's exit guard, so destroyed after it.
            HOLDER.with(|_| ());
            let guard = HELD_ACROSS_TEARDOWN.lock();
            HOLDER.with(|holder| *holder.0.borrow_mut() = Some(guard));
        });
        // `join` returns once the thread's locals are destroyed.
        let _ = done_tx.send(exiting.join().is_ok());
    });
    let joined = done_rx.recv_timeout(Duration::from_secs(60));
    assert_eq!(
        joined,
        Ok(true),
        "the exiting thread hung or panicked re-entering its own monitor"
    );
    assert!(!HELD_ACROSS_TEARDOWN.is_locked());
    assert_eq!(HELD_ACROSS_TEARDOWN.payload(), 5);
}

/// What a late destructor and the test thread share, reached only under
/// the keyed monitor of `LATE_WAIT` (the atomics only make it `Sync`).
struct LateWait {
    waiting: AtomicBool,
    released: AtomicBool,
}

static LATE_WAIT: LateWait = LateWait {
    waiting: AtomicBool::new(false),
    released: AtomicBool::new(false),
};

/// Enters the keyed monitor of `LATE_WAIT` twice and waits on it, from a
/// destructor that runs after the crate's own per-thread teardown.
struct WaitsOnDrop;

impl Drop for WaitsOnDrop {
    fn drop(&mut self) {
        let outer = metalock::lock(&LATE_WAIT);
        let mut inner = metalock::lock(&LATE_WAIT);
        LATE_WAIT.waiting.store(true, Ordering::SeqCst);
        while !LATE_WAIT.released.load(Ordering::SeqCst) {
            inner.wait();
        }
        assert_eq!(inner.depth(), 2, "a wait gives the depth back");
        LATE_WAIT.waiting.store(false, Ordering::SeqCst);
        LATE_WAIT.released.store(false, Ordering::SeqCst);
        drop((inner, outer));
    }
}

thread_local! {
    static WAITS_ON_DROP: WaitsOnDrop = const { WaitsOnDrop };
}

/// A keyed lock, a reentrant one and a wait (so a park, and a contended
/// enter when it wakes) from a destructor that runs after the crate's
/// per-thread teardown, on a detached execution environment. Each thread's
/// environment must go back to the pool afterwards: were it kept, every
/// thread would take a new one.
#[test]
fn keyed_locks_and_waits_from_late_destructors() {
    const THREADS: usize = 60;
    let before = exec_envs_allocated();
    for _ in 0..THREADS {
        let waiter = thread::spawn(|| {
            // Registered before the crate's exit guard, so destroyed after.
            WAITS_ON_DROP.with(|_| ());
            drop(WORD.lock());
        });
        // Only a thread inside the wait lets this lock in with `waiting` set.
        loop {
            let guard = metalock::lock(&LATE_WAIT);
            if LATE_WAIT.waiting.load(Ordering::SeqCst) {
                LATE_WAIT.released.store(true, Ordering::SeqCst);
                guard.notify_all();
                break;
            }
            drop(guard);
            thread::sleep(Duration::from_millis(1));
        }
        waiter
            .join()
            .expect("a thread that waits in a late destructor exits cleanly");
    }
    assert!(!metalock::is_locked(&LATE_WAIT));
    // The other tests of this binary, which may run meanwhile, have at most
    // 14 threads of their own alive at once, and the harness a few more.
    let taken = exec_envs_allocated() - before;
    assert!(
        taken < THREADS / 2,
        "{taken} environments taken for {THREADS} threads one after another"
    );
}

static GIVE_UP_WORD: MultiUseWord = MultiUseWord::new();
static GIVE_UP_SYNCHRONIZED: Synchronized<()> = Synchronized::new(());
static GIVE_UP_KEYED: u64 = 0;
/// Which enter the late destructors make: an index into `GIVE_UPS`.
static GIVE_UP: AtomicUsize = AtomicUsize::new(0);

/// An enter, by name, that returns whether it gave up.
type GiveUp = (&'static str, fn() -> bool);

/// The enters that give up, on the three monitors the test's main thread
/// holds: timed, and timed and interruptible (whose flag is gone in a late
/// destructor: it waits as the timed one).
const GIVE_UPS: [GiveUp; 4] = [
    ("try_lock_for", || {
        GIVE_UP_WORD
            .try_lock_for(Duration::from_millis(1))
            .is_none()
    }),
    ("try_lock_for_interruptibly", || {
        let tried = GIVE_UP_WORD.try_lock_for_interruptibly(Duration::from_millis(1));
        matches!(tried, Ok(None))
    }),
    ("Synchronized::try_lock_for_interruptibly", || {
        let tried = GIVE_UP_SYNCHRONIZED.try_lock_for_interruptibly(Duration::from_millis(1));
        matches!(tried, Ok(None))
    }),
    ("keyed try_lock_for_interruptibly", || {
        let tried = metalock::try_lock_for_interruptibly(&GIVE_UP_KEYED, Duration::from_millis(1));
        matches!(tried, Ok(None))
    }),
];

/// Makes the enter `GIVE_UP` names from a destructor that runs after the
/// crate's own per-thread teardown.
struct GivesUpOnDrop;

impl Drop for GivesUpOnDrop {
    fn drop(&mut self) {
        let (name, enter) = GIVE_UPS[GIVE_UP.load(Ordering::SeqCst)];
        assert!(enter(), "{name} entered a monitor another thread holds");
    }
}

thread_local! {
    static GIVES_UP_ON_DROP: GivesUpOnDrop = const { GivesUpOnDrop };
}

/// Timed and interruptible enters that give up, from a late destructor, on
/// a detached execution environment: each thread's environment must go
/// back to the pool afterwards (see
/// `keyed_locks_and_waits_from_late_destructors`), after each kind of
/// enter alone.
#[test]
fn enters_that_give_up_in_late_destructors_give_back_their_environment() {
    const THREADS: usize = 30;
    let held = (
        GIVE_UP_WORD.lock(),
        GIVE_UP_SYNCHRONIZED.lock(),
        metalock::lock(&GIVE_UP_KEYED),
    );
    for (i, (name, _)) in GIVE_UPS.iter().enumerate() {
        GIVE_UP.store(i, Ordering::SeqCst);
        let before = exec_envs_allocated();
        for _ in 0..THREADS {
            thread::spawn(|| {
                // Registered before the crate's exit guard, so destroyed
                // after.
                GIVES_UP_ON_DROP.with(|_| ());
                drop(WORD.lock());
            })
            .join()
            .expect("a thread that gives up enters in a late destructor exits cleanly");
        }
        // As in `keyed_locks_and_waits_from_late_destructors`.
        let taken = exec_envs_allocated() - before;
        assert!(
            taken < THREADS / 2,
            "{name}: {taken} environments taken for {THREADS} threads one after another"
        );
    }
    drop(held);
}
