//! Loom models of the extra-fast path (paper 000, section 5.2) racing the
//! meta-lock protocol: a fused lock against a slow enqueue (also one nested
//! in another monitor's hold), a fused unlock against an enqueue (which
//! must make the unlock fail over to the slow path through the
//! queue-summary bit), a fused unlock against a payload change, a
//! payload that publishes what its setter wrote before it, and the owner's
//! reads and writes of its payload, which take no meta-lock.
#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::thread;
use metalock::MultiUseWord;

struct Object {
    word: MultiUseWord,
    counter: UnsafeCell<u32>,
}

// SAFETY: `counter` is only accessed while holding the monitor of `word`;
// loom checks that every access is ordered.
unsafe impl Sync for Object {}
// SAFETY: as for `Sync`.
unsafe impl Send for Object {}

impl Object {
    fn new(payload: usize) -> Arc<Self> {
        Arc::new(Self {
            word: MultiUseWord::with_payload(payload),
            counter: UnsafeCell::new(0),
        })
    }

    fn increment(&self) {
        let _guard = self.word.lock();
        // SAFETY: the monitor is held.
        self.counter.with_mut(|c| unsafe { *c += 1 });
    }

    fn count(&self) -> u32 {
        let _guard = self.word.lock();
        // SAFETY: the monitor is held.
        self.counter.with(|c| unsafe { *c })
    }
}

/// Two threads lock an unlocked object at once: one wins the fused
/// compare-and-swap, the other enqueues behind it through the meta-lock, and
/// the winner's fused unlock must then fail and invite it.
#[test]
fn fused_lock_races_slow_enqueue() {
    loom::model(|| {
        metalock::__test_hooks::start_crate_model_execution();
        let object = Object::new(7);
        let other = Arc::clone(&object);
        let t = thread::spawn(move || other.increment());
        object.increment();
        t.join().unwrap();
        assert_eq!(object.count(), 2);
        assert_eq!(object.word.payload(), 7);
        assert!(!object.word.is_locked());
    });
}

/// The owner entered recursively through the fast path; a contender queues
/// while the owner unwinds both levels.
#[test]
fn recursive_fast_exit_races_enqueue() {
    loom::model(|| {
        metalock::__test_hooks::start_crate_model_execution();
        let object = Object::new(3);
        let other = Arc::clone(&object);
        let t = thread::spawn(move || other.increment());
        {
            let outer = object.word.lock();
            let inner = object.word.lock();
            assert_eq!(inner.depth(), 2);
            // SAFETY: the monitor is held.
            object.counter.with_mut(|c| unsafe { *c += 1 });
            drop(inner);
            drop(outer);
        }
        t.join().unwrap();
        assert_eq!(object.count(), 2);
        assert_eq!(object.word.payload(), 3);
    });
}

/// A thread that holds one monitor locks a second through the fused path,
/// with a record from its free list (not its first), while another thread
/// locks the second: the nested lock and unlock race the other's fused lock
/// or its enqueue, and both payloads survive.
#[test]
fn nested_fused_lock_races_slow_enqueue() {
    loom::model(|| {
        metalock::__test_hooks::start_crate_model_execution();
        let outer = Object::new(1);
        let inner = Object::new(2);
        let other = Arc::clone(&inner);
        let t = thread::spawn(move || other.increment());
        {
            let held = outer.word.lock();
            inner.increment();
            assert_eq!(held.depth(), 1);
        }
        t.join().unwrap();
        assert_eq!(inner.count(), 2);
        assert_eq!((outer.word.payload(), inner.word.payload()), (1, 2));
        assert!(!outer.word.is_locked() && !inner.word.is_locked());
    });
}

/// A payload change while the owner holds the monitor through the fast
/// path must survive the owner's unlock, which must not put the old payload
/// back.
#[test]
fn fused_unlock_races_set_payload() {
    loom::model(|| {
        metalock::__test_hooks::start_crate_model_execution();
        let object = Object::new(5);
        let other = Arc::clone(&object);
        let t = thread::spawn(move || other.word.set_payload(9));
        object.increment();
        t.join().unwrap();
        assert_eq!(object.word.payload(), 9);
        assert!(!object.word.is_locked());
    });
}

/// try_lock against a fused lock: exactly the successful attempts count.
#[test]
fn try_lock_races_fused_lock() {
    loom::model(|| {
        metalock::__test_hooks::start_crate_model_execution();
        let object = Object::new(1);
        let other = Arc::clone(&object);
        let t = thread::spawn(move || {
            let guard = other.word.try_lock();
            if guard.is_some() {
                // SAFETY: the monitor is held.
                other.counter.with_mut(|c| unsafe { *c += 1 });
            }
            u32::from(guard.is_some())
        });
        object.increment();
        let tried = t.join().unwrap();
        assert_eq!(object.count(), 1 + tried);
        assert_eq!(object.word.payload(), 1);
    });
}

/// A word whose payload publishes `note`, which no monitor guards.
struct Published {
    word: MultiUseWord,
    note: UnsafeCell<u32>,
}

// SAFETY: `note` is written once, before `set_payload(9)`, and read only
// after `payload()` returned 9: the payload's Release and Acquire order
// the two, and loom checks it.
unsafe impl Sync for Published {}
// SAFETY: as for `Sync`.
unsafe impl Send for Published {}

/// `set_payload` publishes what its thread wrote before it to a thread
/// whose `payload` reads the new value, as a Release store and an Acquire
/// load would, in every lock state: a third thread holding the monitor
/// meanwhile makes the write, the read, or both go through the displaced
/// payload instead of the word.
#[test]
fn a_payload_publishes_what_its_setter_wrote_before() {
    loom::model(|| {
        metalock::__test_hooks::start_crate_model_execution();
        let shared = Arc::new(Published {
            word: MultiUseWord::with_payload(1),
            note: UnsafeCell::new(0),
        });
        let setter = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                // SAFETY: nobody reads `note` before the payload is 9.
                shared.note.with_mut(|n| unsafe { *n = 42 });
                shared.word.set_payload(9);
            })
        };
        let locker = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || drop(shared.word.lock()))
        };
        if shared.word.payload() == 9 {
            // SAFETY: the payload 9 was set after the note's write.
            assert_eq!(shared.note.with(|n| unsafe { *n }), 42);
        }
        setter.join().unwrap();
        locker.join().unwrap();
        assert_eq!(shared.word.payload(), 9);
    });
}

/// The owner reads and sets the payload in its own record, without the
/// meta-lock; once it has, another thread sets it again (through the
/// meta-lock while the owner holds the monitor, in the word after): the
/// later value survives the owner's unlock, which must not put back the
/// value it read before that set.
#[test]
fn the_owners_payload_then_another_setters() {
    loom::model(|| {
        metalock::__test_hooks::start_crate_model_execution();
        let object = Object::new(1);
        let set = Arc::new(AtomicBool::new(false));
        let t = {
            let (object, set) = (Arc::clone(&object), Arc::clone(&set));
            thread::spawn(move || {
                // A thread that has locked something has an execution
                // environment, which a record can name as its owner: the
                // owner check must compare, not only find none.
                drop(MultiUseWord::new().lock());
                while !set.load(Ordering::Acquire) {
                    thread::yield_now();
                }
                object.word.set_payload(9);
                object.word.payload()
            })
        };
        {
            let guard = object.word.lock();
            assert_eq!(object.word.payload(), 1);
            object.word.set_payload(5);
            assert_eq!(object.word.payload(), 5);
            set.store(true, Ordering::Release);
            assert!(matches!(object.word.payload(), 5 | 9));
            assert_eq!(guard.depth(), 1);
        }
        assert_eq!(t.join().unwrap(), 9);
        assert_eq!(object.word.payload(), 9);
        assert!(!object.word.is_locked());
    });
}

/// The owner's payload publishes both ways: an owner that reads a value
/// set by a thread that does not hold the monitor sees what that thread
/// wrote before, and a thread that reads a value the owner set without the
/// meta-lock (through the meta-lock while the owner holds the monitor, or
/// in the word after) sees what the owner wrote before.
#[test]
fn the_owners_payload_publishes_both_ways() {
    loom::model(|| {
        metalock::__test_hooks::start_crate_model_execution();
        let shared = Arc::new(Published {
            word: MultiUseWord::with_payload(1),
            note: UnsafeCell::new(0),
        });
        let other = Arc::clone(&shared);
        let setter = thread::spawn(move || {
            // SAFETY: nobody reads `note` before the payload is 9.
            other.note.with_mut(|n| unsafe { *n = 42 });
            other.word.set_payload(9);
        });
        {
            let _guard = shared.word.lock();
            if shared.word.payload() == 9 {
                // SAFETY: the payload 9 was set after the note's write.
                assert_eq!(shared.note.with(|n| unsafe { *n }), 42);
            }
        }
        setter.join().unwrap();
        let shared = Arc::new(Published {
            word: MultiUseWord::with_payload(1),
            note: UnsafeCell::new(0),
        });
        let owner = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                let _guard = shared.word.lock();
                // SAFETY: nobody reads `note` before the payload is 9.
                shared.note.with_mut(|n| unsafe { *n = 42 });
                shared.word.set_payload(9);
            })
        };
        if shared.word.payload() == 9 {
            // SAFETY: the payload 9 was set after the note's write.
            assert_eq!(shared.note.with(|n| unsafe { *n }), 42);
        }
        owner.join().unwrap();
        assert_eq!(shared.word.payload(), 9);
    });
}

/// `try_lock` on a monitor nobody owns but with a queue (WAITERS: an exit
/// invited the first of two queued contenders, which has not taken it yet)
/// takes it, as `try_lock` fails only while another thread owns the
/// monitor: some execution barges in ahead of both contenders. (A try
/// that gave up on a WAITERS word passed every other test.)
#[test]
fn try_lock_takes_a_free_monitor_with_a_queue() {
    use std::sync::atomic::{AtomicUsize, Ordering as StdOrdering};
    static BARGED: AtomicUsize = AtomicUsize::new(0);
    let mut builder = loom::model::Builder::new();
    // Three threads and a polled queue: a bound of 1 explores the barging
    // in a few seconds (deeper bounds ran past ten minutes).
    builder.preemption_bound = Some(1);
    builder.check(|| {
        metalock::__test_hooks::start_crate_model_execution();
        let object = Object::new(3);
        let held = object.word.lock();
        let contenders: Vec<_> = (0..2)
            .map(|_| {
                let object = Arc::clone(&object);
                thread::spawn(move || object.increment())
            })
            .collect();
        while object.word.queue_length() < 2 {
            thread::yield_now();
        }
        drop(held);
        let entered = object.word.try_lock().map(|guard| {
            // SAFETY: the monitor is held.
            let entered = object.counter.with(|c| unsafe { *c });
            drop(guard);
            entered
        });
        if entered == Some(0) {
            BARGED.fetch_add(1, StdOrdering::Relaxed);
        }
        for contender in contenders {
            contender.join().unwrap();
        }
        assert_eq!(object.count(), 2);
        assert_eq!(object.word.payload(), 3);
    });
    assert!(
        BARGED.load(StdOrdering::Relaxed) > 0,
        "no try_lock took the monitor while both contenders were queued"
    );
}
