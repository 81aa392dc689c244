//! The lock wrappers: metalock and its peers behind one interface, and the
//! spin-lock floors.
//!
//! Every lock guards a `u64` payload, handed to the workload as a `&Cell<u64>`
//! so that every wrapper (including the reentrant ones, whose bodies may
//! alias) exposes the same safe interface at no cost. The objects the
//! uncontended loop cycles over, the baseline's included, are 16 bytes on
//! 64-bit Linux (checked at compile time below, outside the model
//! checkers; std's mutex is larger on some other systems), so cycling over
//! N of them touches the same memory whatever the lock; the reentrant
//! locks, used one at a time, may be larger.

use std::cell::Cell;
use std::sync::PoisonError;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::thread;

use metalock::{MultiUseWord, ReentrantSynchronized, Synchronized};

// Not under the model checkers, whose atomics are larger.
#[cfg(all(target_pointer_width = "64", not(any(loom, feature = "shuttle"))))]
const _: () = {
    use std::mem::size_of;
    assert!(size_of::<Baseline>() == 16);
    assert!(size_of::<MetaWord>() == 16);
    assert!(size_of::<MetaSync>() == 16);
    assert!(size_of::<MetaKeyed>() == 16);
    assert!(size_of::<PlMutex>() == 16);
    // std's mutex is a futex word on Linux, larger elsewhere (a boxed
    // pthread mutex on Apple targets).
    #[cfg(target_os = "linux")]
    assert!(size_of::<StdMutex>() == 16);
    assert!(size_of::<SpinLock>() == 16);
    assert!(size_of::<SubFloor>() == 16);
};

/// A lock guarding a `u64`, entered once per `with`.
pub trait CounterLock: Sized {
    /// Column / benchmark name.
    const NAME: &'static str;
    /// A new unlocked object holding `value`.
    fn new(value: u64) -> Self;
    /// Locks, runs `f` on the payload, unlocks.
    fn with<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R;
}

/// A lock entered twice per `with_recursive`: lock, lock, body, unlock,
/// unlock.
pub trait RecursiveLock: Sized {
    /// Column / benchmark name.
    const NAME: &'static str;
    /// A new unlocked object holding `value`.
    fn new_recursive(value: u64) -> Self;
    /// Locks twice, runs `f` on the payload, unlocks twice.
    fn with_recursive<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R;
}

/// The unsynchronized baseline: the same 16-byte object, no lock.
pub struct Baseline {
    _word: usize,
    value: Cell<u64>,
}

impl CounterLock for Baseline {
    const NAME: &'static str = "baseline";
    fn new(value: u64) -> Self {
        Self {
            _word: 0,
            value: Cell::new(value),
        }
    }
    #[inline(always)]
    fn with<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        f(&self.value)
    }
}

impl RecursiveLock for Baseline {
    const NAME: &'static str = "baseline";
    fn new_recursive(value: u64) -> Self {
        <Self as CounterLock>::new(value)
    }
    #[inline(always)]
    fn with_recursive<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        f(&self.value)
    }
}

/// An object with a raw metalock monitor (`MultiUseWord::lock`) next to its
/// field, as a Java object has.
pub struct MetaWord {
    word: MultiUseWord,
    value: Cell<u64>,
}

// SAFETY: `value` is only reached inside `with`/`with_recursive`, while the
// calling thread owns `word`'s monitor; the monitor's enter (Acquire) and
// exit (Release) order those accesses between threads, and the `&Cell` handed
// to the body is not `Send` and cannot outlive the call. Two accesses on one
// thread (reentry) are fine for a `Cell`.
unsafe impl Sync for MetaWord {}

impl CounterLock for MetaWord {
    const NAME: &'static str = "metalock_word";
    fn new(value: u64) -> Self {
        Self {
            word: MultiUseWord::new(),
            value: Cell::new(value),
        }
    }
    #[inline(always)]
    fn with<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        let _guard = self.word.lock();
        f(&self.value)
    }
}

impl RecursiveLock for MetaWord {
    const NAME: &'static str = "metalock_word";
    fn new_recursive(value: u64) -> Self {
        <Self as CounterLock>::new(value)
    }
    #[inline(always)]
    fn with_recursive<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        let _outer = self.word.lock();
        let _inner = self.word.lock();
        f(&self.value)
    }
}

/// `metalock::Synchronized<u64>`.
pub struct MetaSync(Synchronized<u64>);

impl CounterLock for MetaSync {
    const NAME: &'static str = "metalock_sync";
    fn new(value: u64) -> Self {
        Self(Synchronized::new(value))
    }
    #[inline(always)]
    fn with<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        let mut guard = self.0.lock();
        f(Cell::from_mut(&mut *guard))
    }
}

/// An object that embeds nothing, locked through the monitor table:
/// `metalock::lock(&object)`. Padded to the 16 bytes of the other objects.
pub struct MetaKeyed {
    value: Cell<u64>,
    _pad: u64,
}

// SAFETY: `value` is only reached inside `with`, while the calling thread
// owns the object's keyed monitor, whose enter and exit order the accesses
// (as for `MetaWord`).
unsafe impl Sync for MetaKeyed {}

impl CounterLock for MetaKeyed {
    const NAME: &'static str = "metalock_keyed";
    fn new(value: u64) -> Self {
        Self {
            value: Cell::new(value),
            _pad: 0,
        }
    }
    #[inline(always)]
    fn with<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        let _guard = metalock::lock(self);
        f(&self.value)
    }
}

/// `parking_lot::Mutex<u64>`.
pub struct PlMutex(parking_lot::Mutex<u64>);

impl CounterLock for PlMutex {
    const NAME: &'static str = "parking_lot";
    fn new(value: u64) -> Self {
        Self(parking_lot::Mutex::new(value))
    }
    #[inline(always)]
    fn with<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        let mut guard = self.0.lock();
        f(Cell::from_mut(&mut *guard))
    }
}

/// `parking_lot::FairMutex<u64>`: every contended unlock hands the lock to
/// the longest-waiting thread, the fair end of the trade-off whose other end
/// (a woken thread competes again with newcomers) `Mutex` and metalock take.
pub struct PlFairMutex(parking_lot::FairMutex<u64>);

impl CounterLock for PlFairMutex {
    const NAME: &'static str = "parking_lot_fair";
    fn new(value: u64) -> Self {
        Self(parking_lot::FairMutex::new(value))
    }
    #[inline(always)]
    fn with<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        let mut guard = self.0.lock();
        f(Cell::from_mut(&mut *guard))
    }
}

/// `metalock::ReentrantSynchronized<Cell<u64>>`, the word's peer of
/// `parking_lot::ReentrantMutex<Cell<u64>>`.
pub struct MetaReentrant(ReentrantSynchronized<Cell<u64>>);

impl CounterLock for MetaReentrant {
    const NAME: &'static str = "metalock_reentrant";
    fn new(value: u64) -> Self {
        Self(ReentrantSynchronized::new(Cell::new(value)))
    }
    #[inline(always)]
    fn with<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        f(&self.0.lock())
    }
}

impl RecursiveLock for MetaReentrant {
    const NAME: &'static str = "metalock_reentrant";
    fn new_recursive(value: u64) -> Self {
        Self(ReentrantSynchronized::new(Cell::new(value)))
    }
    #[inline(always)]
    fn with_recursive<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        let _outer = self.0.lock();
        let inner = self.0.lock();
        f(&inner)
    }
}

/// `parking_lot::ReentrantMutex<Cell<u64>>`.
pub struct PlReentrant(parking_lot::ReentrantMutex<Cell<u64>>);

impl CounterLock for PlReentrant {
    const NAME: &'static str = "parking_lot_reentrant";
    fn new(value: u64) -> Self {
        Self(parking_lot::ReentrantMutex::new(Cell::new(value)))
    }
    #[inline(always)]
    fn with<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        f(&self.0.lock())
    }
}

impl RecursiveLock for PlReentrant {
    const NAME: &'static str = "parking_lot_reentrant";
    fn new_recursive(value: u64) -> Self {
        Self(parking_lot::ReentrantMutex::new(Cell::new(value)))
    }
    #[inline(always)]
    fn with_recursive<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        let _outer = self.0.lock();
        let inner = self.0.lock();
        f(&inner)
    }
}

/// `std::sync::Mutex<u64>`.
pub struct StdMutex(std::sync::Mutex<u64>);

impl CounterLock for StdMutex {
    const NAME: &'static str = "std";
    fn new(value: u64) -> Self {
        Self(std::sync::Mutex::new(value))
    }
    #[inline(always)]
    fn with<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        let mut guard = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        f(Cell::from_mut(&mut *guard))
    }
}

/// The floor of the uncontended benchmarks: a spin lock acquired by one
/// compare-and-swap and released by one compare-and-swap, or, with
/// `RELEASE_BY_SUB` ([`SubFloor`]), by one fetch-sub whose old value it
/// tests, as parking_lot 0.13 unlocks (on x86 a `lock xadd` and a bit test
/// in place of a `lock cmpxchg`). A monitor word cannot be released that
/// way (another thread's meta-lock swap may have replaced it), so the
/// second floor measures what that release alone is worth.
/// It is only measured uncontended; should two threads ever meet on it, the
/// loser spins on a plain load and then yields the CPU, so that it never
/// burns whole time slices behind a preempted holder.
pub struct SpinLock<const RELEASE_BY_SUB: bool = false> {
    /// 1 while held, else 0.
    locked: AtomicU8,
    value: Cell<u64>,
}

// SAFETY: `value` is only reached inside `with`, between a successful
// acquiring CAS (Acquire) and the releasing CAS or fetch-sub (Release), so one
// thread at a time touches it and the accesses are ordered; the `&Cell` is
// not `Send` and cannot outlive the call.
unsafe impl<const RELEASE_BY_SUB: bool> Sync for SpinLock<RELEASE_BY_SUB> {}

/// Spins on a busy lock this many times before yielding.
const SPINS_BEFORE_YIELD: u32 = 64;

impl<const RELEASE_BY_SUB: bool> SpinLock<RELEASE_BY_SUB> {
    #[inline(always)]
    fn acquire(&self) {
        while self
            .locked
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            wait_while_set(&self.locked);
        }
    }

    #[inline(always)]
    fn release(&self) {
        if RELEASE_BY_SUB {
            // Tested as parking_lot tests its parked bit: with the old value
            // unused, or only compared with 1, x86 gets a `lock dec`, which
            // is not what parking_lot runs (and measured 0.3 ns cheaper).
            if self.locked.fetch_sub(1, Ordering::Release) & 1 == 0 {
                released_while_free();
            }
        } else {
            let released = self
                .locked
                .compare_exchange(1, 0, Ordering::Release, Ordering::Relaxed);
            debug_assert!(released.is_ok(), "spin lock released while free");
        }
    }
}

/// The spin lock released by a fetch-sub.
pub type SubFloor = SpinLock<true>;

#[cold]
fn released_while_free() -> ! {
    panic!("spin lock released while free");
}

#[cold]
fn wait_while_set(flag: &AtomicU8) {
    let mut spins = 0;
    while flag.load(Ordering::Relaxed) != 0 {
        if spins < SPINS_BEFORE_YIELD {
            spins += 1;
            std::hint::spin_loop();
        } else {
            thread::yield_now();
        }
    }
}

impl<const RELEASE_BY_SUB: bool> CounterLock for SpinLock<RELEASE_BY_SUB> {
    const NAME: &'static str = if RELEASE_BY_SUB {
        "sub_floor"
    } else {
        "cas_floor"
    };
    fn new(value: u64) -> Self {
        Self {
            locked: AtomicU8::new(0),
            value: Cell::new(value),
        }
    }
    #[inline(always)]
    fn with<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        self.acquire();
        let result = f(&self.value);
        self.release();
        result
    }
}

/// The recursive floor: a spin lock with an owner and a count; the first
/// level takes one CAS and the last release one CAS, inner levels only touch
/// the owner's count.
pub struct ReentrantSpinLock {
    /// 0 or the owning thread's id.
    owner: AtomicUsize,
    /// Levels held; touched only by the owner.
    count: Cell<usize>,
    value: Cell<u64>,
}

// SAFETY: `count` and `value` are only touched by the thread whose id is in
// `owner`, set by an Acquire CAS and cleared by a Release CAS, so one thread
// at a time touches them and the accesses are ordered.
unsafe impl Sync for ReentrantSpinLock {}

/// A non-zero id, unique among live threads.
#[inline(always)]
fn thread_id() -> usize {
    thread_local!(static ID: u8 = const { 0 });
    ID.with(|id| id as *const u8 as usize)
}

impl ReentrantSpinLock {
    #[inline(always)]
    fn acquire(&self) {
        let me = thread_id();
        if self.owner.load(Ordering::Relaxed) == me {
            self.count.set(self.count.get() + 1);
            return;
        }
        while self
            .owner
            .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            let mut spins = 0;
            while self.owner.load(Ordering::Relaxed) != 0 {
                if spins < SPINS_BEFORE_YIELD {
                    spins += 1;
                    std::hint::spin_loop();
                } else {
                    thread::yield_now();
                }
            }
        }
        self.count.set(1);
    }

    #[inline(always)]
    fn release(&self) {
        let count = self.count.get() - 1;
        self.count.set(count);
        if count == 0 {
            let released =
                self.owner
                    .compare_exchange(thread_id(), 0, Ordering::Release, Ordering::Relaxed);
            debug_assert!(released.is_ok(), "reentrant spin lock not ours");
        }
    }
}

impl RecursiveLock for ReentrantSpinLock {
    const NAME: &'static str = "cas_floor_reentrant";
    fn new_recursive(value: u64) -> Self {
        Self {
            owner: AtomicUsize::new(0),
            count: Cell::new(0),
            value: Cell::new(value),
        }
    }
    #[inline(always)]
    fn with_recursive<R>(&self, f: impl FnOnce(&Cell<u64>) -> R) -> R {
        self.acquire();
        self.acquire();
        let result = f(&self.value);
        self.release();
        self.release();
        result
    }
}
