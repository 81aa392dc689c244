//! Keyed monitors (`metalock::lock(&value)`): what the key is, the homes
//! and the overflow table under load, and stress tests with exact
//! counters; the `Arc` guard of `metalock::lock_arc`. The
//! semantics they share with the other kinds are in `kinds.rs`; memory
//! after a million objects in `keyed_memory.rs`.

mod common;
use common::Watchdog;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering::Relaxed};
use std::thread;
use std::time::Duration;

use metalock::{ArcKeyedGuard, Condition, Instant};

const HANG: Duration = Duration::from_secs(120);

#[test]
fn the_key_is_the_address() {
    #[repr(C)]
    struct Pair {
        first: u64,
        second: u64,
    }
    let pair = Pair {
        first: 1,
        second: 2,
    };
    let guard = metalock::lock(&pair);
    // Another reference to the same place, and the first field, which
    // starts there, share the monitor; the second field does not.
    let again = &pair;
    assert!(metalock::is_held_by_current_thread(again));
    assert!(metalock::is_held_by_current_thread(&pair.first));
    assert!(!metalock::is_locked(&pair.second));
    assert_eq!(metalock::lock(&pair.first).depth(), 2);
    thread::scope(|s| {
        s.spawn(|| {
            assert!(metalock::try_lock(&pair.first).is_none());
            assert!(metalock::try_lock(&pair.second).is_some());
        });
    });
    drop(guard);
    assert!(!metalock::is_locked(&pair));
}

#[test]
fn zero_sized_values_of_one_address_share_a_monitor() {
    let a = ();
    let b = ();
    // Zero-sized locals usually share one dangling address (not promised).
    if !std::ptr::eq(&a, &b) {
        return;
    }
    // One address: one monitor, reentrant.
    let _first = metalock::lock(&a);
    assert!(metalock::is_held_by_current_thread(&b));
    assert_eq!(metalock::lock(&b).depth(), 2);
}

#[test]
fn a_condition_works_with_a_keyed_guard() {
    let _watchdog = Watchdog::arm(HANG);
    let items = AtomicU64::new(0);
    let nonempty = Condition::new();
    let waiting = AtomicU64::new(0);
    thread::scope(|s| {
        s.spawn(|| {
            let mut guard = metalock::lock(&items);
            waiting.store(1, Relaxed);
            nonempty.wait_while(&mut guard, |_| items.load(Relaxed) == 0);
            items.store(items.load(Relaxed) - 1, Relaxed);
        });
        // The waiter waits (it released the monitor only by waiting).
        loop {
            let guard = metalock::lock(&items);
            if waiting.load(Relaxed) == 1 {
                items.store(1, Relaxed);
                assert!(nonempty.notify_one(), "the waiter waits on the condition");
                break;
            }
            drop(guard);
            thread::yield_now();
        }
    });
    assert_eq!(items.load(Relaxed), 0);
}

/// More monitors held at once than there are homes (16,384), so that some
/// addresses find their home serving another and take an overflow entry,
/// and give it back (the count that returns is checked in
/// `keyed_memory.rs`, alone in its process).
#[test]
fn many_monitors_held_at_once() {
    let values: Vec<u64> = (0..20_000).collect();
    let guards: Vec<_> = values.iter().map(metalock::lock).collect();
    assert!(metalock::keyed_monitors() >= values.len());
    thread::scope(|s| {
        s.spawn(|| {
            assert!(values.iter().all(metalock::is_locked));
            assert!(
                values
                    .iter()
                    .all(|value| metalock::try_lock(value).is_none())
            );
        });
    });
    drop(guards);
    assert!(values.iter().all(|value| !metalock::is_locked(value)));
}

#[test]
fn unlock_fair_try_lock_for_and_until() {
    let value = 7_i32;
    let guard = metalock::lock(&value);
    thread::scope(|s| {
        s.spawn(|| {
            assert!(metalock::try_lock_for(&value, Duration::from_millis(5)).is_none());
            let deadline = metalock::Instant::now() + Duration::from_millis(5);
            assert!(metalock::try_lock_until(&value, deadline).is_none());
            assert!(metalock::Instant::now() >= deadline);
        });
    });
    // Its hand-over to a queued thread: `kinds::keyed::fair_releases_hand_over`.
    guard.unlock_fair();
    assert!(!metalock::is_locked(&value));
    assert!(metalock::try_lock_for(&value, Duration::from_millis(5)).is_some());
    assert!(metalock::try_lock_until(&value, metalock::Instant::now()).is_some());
}

/// A thread that holds the monitor of one value, locking another value of
/// the same home (one 8-byte granule), enters a monitor of its own: the
/// home's word names the thread's record, but for the other key, so the
/// enter must not count as a recursion, in either order of the two locks.
/// A wait on the second releases the second only.
#[test]
fn another_value_of_a_held_home_is_not_a_recursion() {
    let _watchdog = Watchdog::arm(HANG);
    #[repr(align(8))]
    struct Granule([u8; 8]);
    let granule = Granule([0; 8]);
    let bytes = (&granule.0[2], &granule.0[3]);
    for (held, other) in [bytes, (bytes.1, bytes.0)] {
        let outer = metalock::lock(held);
        assert!(!metalock::is_held_by_current_thread(other));
        assert!(!metalock::is_locked(other));
        let mut inner = metalock::lock(other);
        assert_eq!(
            inner.depth(),
            1,
            "the other value's enter counted as a recursion"
        );
        assert_eq!(metalock::try_lock(other).map(|g| g.depth()), Some(2));
        assert_eq!(metalock::lock(held).depth(), 2);
        assert_eq!(outer.depth(), 1);
        let (waiting, done) = (AtomicU8::new(0), AtomicU8::new(0));
        thread::scope(|s| {
            s.spawn(|| {
                assert!(metalock::try_lock(held).is_none());
                // Entered once `inner` waits, which releases `other` only.
                let guard = metalock::lock(other);
                assert_eq!(waiting.load(Relaxed), 1);
                assert!(!metalock::is_held_by_current_thread(held));
                assert!(metalock::try_lock(held).is_none());
                done.store(1, Relaxed);
                assert!(guard.notify_one());
            });
            waiting.store(1, Relaxed);
            inner.wait_while(|| done.load(Relaxed) == 0);
        });
        assert_eq!(inner.depth(), 1);
        assert_eq!(outer.depth(), 1);
        drop(outer);
        assert!(!metalock::is_held_by_current_thread(held));
        assert!(metalock::is_held_by_current_thread(other));
        thread::scope(|s| {
            s.spawn(|| {
                assert!(metalock::try_lock(held).is_some());
                assert!(metalock::try_lock(other).is_none());
            });
        });
        drop(inner);
        assert!(!metalock::is_locked(held) && !metalock::is_locked(other));
    }
}

/// `unlocked` on a guard of an overflow entry (its home served another
/// address): released meanwhile, with the home freed too, the guard finds
/// the monitor again by the address, wherever it is then. (The count of
/// keyed monitors is global, and other tests here run at the same time, so
/// it is not checked; nor is the entry: a parallel test's value holding
/// the home would send both bytes to the overflow table, where the guard
/// must find its monitor again all the same. The loom model
/// `keyed_unlocked_enters_again_by_address` covers the home's change for
/// certain.)
#[test]
fn unlocked_finds_the_monitor_again_by_its_address() {
    let _watchdog = Watchdog::arm(HANG);
    #[repr(align(8))]
    struct Granule([u8; 8]);
    let granule = Granule([0; 8]);
    let (first, second) = (&granule.0[0], &granule.0[1]);
    let held_first = metalock::lock(first);
    // One granule, one home: the second byte's monitor is an overflow entry
    // (unless another test's value holds the home).
    let mut guard = metalock::lock(second);
    metalock::KeyedGuard::unlocked(&mut guard, move || {
        drop(held_first);
        assert!(!metalock::is_locked(second));
    });
    assert!(metalock::is_held_by_current_thread(second));
    assert!(!metalock::is_locked(first));
    thread::scope(|s| {
        s.spawn(|| {
            assert!(metalock::try_lock(second).is_none());
            assert!(metalock::try_lock(first).is_some());
        });
    });
    drop(guard);
    assert!(!metalock::is_locked(second));
}

#[test]
fn synchronized_runs_inside_the_monitor() {
    let value = String::from("x");
    let depth = metalock::synchronized(&value, |guard| {
        assert!(metalock::is_held_by_current_thread(&value));
        guard.depth()
    });
    assert_eq!(depth, 1);
    assert!(!metalock::is_locked(&value));
}

/// Threads lock and wait on many keyed objects at random; every object's
/// counter, changed only under its monitor, must come out exact, and every
/// hand-shake through wait/notify must complete.
#[test]
fn stress_many_threads_many_objects() {
    let _watchdog = Watchdog::arm(HANG);
    const THREADS: usize = 6;
    const OBJECTS: usize = 600;
    const ROUNDS: usize = 20_000;
    let counters: Vec<AtomicU64> = (0..OBJECTS).map(|_| AtomicU64::new(0)).collect();
    // Token passing on a keyed object: each producer's token must be
    // consumed, through wait/notify.
    let tokens = AtomicU64::new(0);
    thread::scope(|s| {
        for t in 0..THREADS {
            let counters = &counters;
            let tokens = &tokens;
            s.spawn(move || {
                let mut x = t as u64 * 0x9E37_79B9 + 1;
                for round in 0..ROUNDS {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let a = &counters[x as usize % OBJECTS];
                    let b = &counters[(x >> 32) as usize % OBJECTS];
                    let _outer = metalock::lock(a);
                    a.store(a.load(Relaxed) + 1, Relaxed);
                    if round % 4 == 0 {
                        // Nested: a then b; the same object again is reentrant.
                        // Always in address order, so no deadlock.
                        if (a as *const AtomicU64) <= (b as *const AtomicU64) {
                            let _inner = metalock::lock(b);
                            b.store(b.load(Relaxed) + 1, Relaxed);
                        } else {
                            drop(_outer);
                            let _first = metalock::lock(b);
                            let _second = metalock::lock(a);
                            b.store(b.load(Relaxed) + 1, Relaxed);
                        }
                    }
                }
                // Half the threads produce tokens, half consume them.
                for _ in 0..200 {
                    let mut guard = metalock::lock(tokens);
                    if t % 2 == 0 {
                        tokens.store(tokens.load(Relaxed) + 1, Relaxed);
                        guard.notify_one();
                    } else {
                        while tokens.load(Relaxed) == 0 {
                            guard.wait();
                        }
                        tokens.store(tokens.load(Relaxed) - 1, Relaxed);
                    }
                }
            });
        }
    });
    let total: u64 = counters.iter().map(|c| c.load(Relaxed)).sum();
    let expected = THREADS * ROUNDS + THREADS * ROUNDS.div_ceil(4);
    assert_eq!(total, expected as u64);
    assert_eq!(tokens.load(Relaxed), 0);
    assert!(counters.iter().all(|c| !metalock::is_locked(c)));
}

/// Sixteen addresses in two 8-byte granules, so two homes: most locks find
/// the home serving another address (the overflow table), homes are rekeyed
/// between addresses all the time, and threads wait and notify on addresses
/// whose home others lock. Each address guards a counter updated by a load
/// and a store, which loses updates unless its monitor excludes.
#[test]
fn stress_addresses_that_share_homes() {
    let _watchdog = Watchdog::arm(HANG);
    const THREADS: usize = 6;
    const ROUNDS: usize = 20_000;
    #[repr(align(16))]
    struct Bytes([AtomicU8; 16]);
    let keys = Bytes(std::array::from_fn(|_| AtomicU8::new(0)));
    let keys = &keys.0;
    let counters: Vec<AtomicU64> = (0..16).map(|_| AtomicU64::new(0)).collect();
    let counters = &counters;
    let tokens = AtomicU64::new(0);
    let tokens = &tokens;
    thread::scope(|s| {
        for t in 0..THREADS {
            s.spawn(move || {
                let mut x = t as u64 * 0x9E37_79B9 + 1;
                for _ in 0..ROUNDS {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let (i, j) = (x as usize % 16, (x >> 32) as usize % 16);
                    let (first, second) = (i.min(j), i.max(j));
                    let _outer = metalock::lock(&keys[first]);
                    let _inner = metalock::lock(&keys[second]);
                    assert!(metalock::is_held_by_current_thread(&keys[first]));
                    assert!(metalock::is_held_by_current_thread(&keys[second]));
                    for index in [first, second] {
                        let counter = &counters[index];
                        counter.store(counter.load(Relaxed) + 1, Relaxed);
                    }
                }
                // Tokens passed through the monitor of keys[0], whose home
                // the other threads keep locking for other addresses (in
                // index order, as above).
                for round in 0..200 {
                    let mut guard = metalock::lock(&keys[0]);
                    let _neighbour = metalock::lock(&keys[1 + round % 7]);
                    if t % 2 == 0 {
                        tokens.store(tokens.load(Relaxed) + 1, Relaxed);
                        guard.notify_one();
                    } else {
                        drop(_neighbour);
                        while tokens.load(Relaxed) == 0 {
                            guard.wait();
                        }
                        tokens.store(tokens.load(Relaxed) - 1, Relaxed);
                    }
                }
            });
        }
    });
    let total: u64 = counters.iter().map(|c| c.load(Relaxed)).sum();
    assert_eq!(total, (THREADS * ROUNDS * 2) as u64);
    assert_eq!(tokens.load(Relaxed), 0);
    assert!(keys.iter().all(|key| !metalock::is_locked(key)));
}

/// Every keyed operation at once on sixteen addresses of two homes: lock,
/// `try_lock`, `try_lock_for` giving up, recursion across two addresses of
/// one home, timed waits on the monitor and on a `Condition`, notifies from
/// holders and from threads that hold nothing. Each counter is updated by a
/// load and a store under its address's monitor, and counted atomically
/// beside it: the two agree only if the monitor excluded.
#[test]
fn stress_every_operation_on_shared_homes() {
    let _watchdog = Watchdog::arm(HANG);
    const THREADS: usize = 8;
    const ROUNDS: usize = 30_000;
    #[repr(align(16))]
    struct Bytes([AtomicU8; 16]);
    let keys = Bytes(std::array::from_fn(|_| AtomicU8::new(0)));
    let keys = &keys.0;
    let counters: Vec<AtomicU64> = (0..16).map(|_| AtomicU64::new(0)).collect();
    let counted: Vec<AtomicU64> = (0..16).map(|_| AtomicU64::new(0)).collect();
    let conditions: Vec<Condition> = (0..16).map(|_| Condition::new()).collect();
    let (counters, counted, conditions) = (&counters, &counted, &conditions);
    let bump = |i: usize| {
        assert!(
            metalock::is_held_by_current_thread(&keys[i]),
            "key {i} not held"
        );
        let counter = &counters[i];
        let value = counter.load(Relaxed);
        std::hint::spin_loop();
        counter.store(value + 1, Relaxed);
        counted[i].fetch_add(1, Relaxed);
    };
    let short = Duration::from_micros(50);
    thread::scope(|s| {
        for t in 0..THREADS {
            s.spawn(move || {
                let mut x = t as u64 * 0x9E37_79B9 + 7;
                for _ in 0..ROUNDS {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let (i, j) = (x as usize % 16, (x >> 8) as usize % 16);
                    match (x >> 20) % 8 {
                        0 => {
                            let _guard = metalock::lock(&keys[i]);
                            bump(i);
                        }
                        1 => {
                            if let Some(_guard) = metalock::try_lock(&keys[i]) {
                                bump(i);
                            }
                        }
                        2 => {
                            if let Some(_guard) = metalock::try_lock_for(&keys[i], short / 2) {
                                bump(i);
                            }
                        }
                        3 => {
                            // i, j, i again, in index order.
                            let (a, b) = (i.min(j), i.max(j));
                            let first = metalock::lock(&keys[a]);
                            let second = metalock::lock(&keys[b]);
                            let again = metalock::lock(&keys[a]);
                            bump(a);
                            bump(b);
                            drop(first);
                            bump(a);
                            drop(second);
                            drop(again);
                        }
                        4 => {
                            let mut guard = metalock::lock(&keys[i]);
                            bump(i);
                            let _ = guard.wait_for(short);
                            bump(i);
                        }
                        5 => {
                            let guard = metalock::lock(&keys[i]);
                            bump(i);
                            guard.notify_all();
                        }
                        6 => {
                            let mut guard = metalock::lock(&keys[i]);
                            let _ = conditions[i].wait_for(&mut guard, short);
                            bump(i);
                        }
                        _ => {
                            conditions[i].notify_all();
                            if let Some(_guard) = metalock::try_lock_for(&keys[j], short / 10) {
                                bump(j);
                            }
                        }
                    }
                }
            });
        }
    });
    for i in 0..16 {
        assert_eq!(
            counters[i].load(Relaxed),
            counted[i].load(Relaxed),
            "key {i}"
        );
        assert!(!metalock::is_locked(&keys[i]));
    }
}

/// `is_locked` on a value whose monitor is an overflow entry, from threads
/// that have no execution environment yet, while the entry's word is often
/// BUSY (its waiter is notified again and again through a `Condition`, by
/// threads that hold nothing) and its home idle, keyed to another value:
/// reading a BUSY word takes its meta-lock, so such a thread binds an
/// environment, which must happen before the overflow table's shard lock
/// (binding allocates, and a debug build checks that no lock of the crate
/// is held then). It bound under the shard lock before.
#[test]
fn reading_an_overflow_entry_binds_before_the_shard_lock() {
    let _watchdog = Watchdog::arm(HANG);
    /// Two values in one 8-byte granule, so of one home.
    #[repr(align(8))]
    struct Pair([u32; 2]);
    let pair = Pair([0, 0]);
    let (home_value, overflow_value) = (&pair.0[0], &pair.0[1]);
    let (waiting, stop) = (&AtomicU8::new(0), &AtomicU8::new(0));
    let condition = &Condition::new();
    thread::scope(|s| {
        let home = metalock::lock(home_value);
        // Keeps the overflow entry alive, and its word busy, waiting on it.
        s.spawn(move || {
            let mut guard = metalock::lock(overflow_value);
            waiting.store(1, Relaxed);
            while stop.load(Relaxed) == 0 {
                condition.wait(&mut guard);
            }
        });
        while {
            let _entry = metalock::lock(overflow_value);
            waiting.load(Relaxed) == 0
        } {
            thread::yield_now();
        }
        // Idle, and kept for `home_value` while the entry exists; nothing
        // below enters the home's meta-lock but the readers.
        drop(home);
        for _ in 0..2 {
            s.spawn(move || {
                while stop.load(Relaxed) == 0 {
                    condition.notify_all();
                }
            });
        }
        let failed = (0..300)
            // A new thread, whose calls into the crate are these: until
            // one binds an environment, each may be the one that does.
            .filter(|_| {
                s.spawn(move || {
                    for _ in 0..1000 {
                        metalock::is_locked(overflow_value);
                        if metalock::__test_hooks::thread_has_exec_env() {
                            break;
                        }
                    }
                })
                .join()
                .is_err()
            })
            .count();
        // Under the monitor: the waiter reads the flag and waits in one
        // hold of it, so it sees the flag or gets the notify.
        let guard = metalock::lock(overflow_value);
        stop.store(1, Relaxed);
        drop(guard);
        condition.notify_all();
        assert_eq!(failed, 0, "threads that bound under a lock");
    });
    assert!(!metalock::is_locked(overflow_value));
}

/// A value that checks, when it is freed, that its keyed monitor was
/// released first.
struct Checked(Arc<AtomicBool>);

impl Drop for Checked {
    fn drop(&mut self) {
        assert!(
            !metalock::is_locked(self),
            "freed while its monitor is held"
        );
        self.0.store(true, Relaxed);
    }
}

#[test]
fn arc_keyed_guards_lock_the_value_and_own_it() {
    let _watchdog = Watchdog::arm(HANG);
    // The value's monitor, not the `Arc` handle's; the guard is the last
    // owner: released, then freed.
    let freed = Arc::new(AtomicBool::new(false));
    let value = Arc::new(Checked(Arc::clone(&freed)));
    let guard: ArcKeyedGuard<Checked> = metalock::lock_arc(&value);
    assert!(metalock::is_held_by_current_thread(&*value) && !metalock::is_locked(&value));
    assert!(Arc::ptr_eq(ArcKeyedGuard::value(&guard), &value));
    drop(value);
    assert!(!freed.load(Relaxed));
    drop(guard);
    assert!(freed.load(Relaxed));

    // A 'static guard in another thread, two levels deep over a borrowed
    // one, waits on a condition; the main thread's waits on the monitor's
    // own set; both through `Arc` guards.
    let count = Arc::new(AtomicU64::new(0));
    let grown = Arc::new(Condition::new());
    let waiter = {
        let (count, grown) = (Arc::clone(&count), Arc::clone(&grown));
        thread::spawn(move || {
            let outer = metalock::lock(&*count);
            let lock = || metalock::lock_arc(&count);
            let mut guard: ArcKeyedGuard<AtomicU64> = lock();
            grown.wait_while(&mut guard, |()| count.load(Relaxed) == 0);
            let depth = guard.depth();
            guard.fetch_add(10, Relaxed);
            guard.notify_all();
            drop((guard, outer));
            depth
        })
    };
    let mut guard = metalock::lock_arc(&count);
    guard.store(1, Relaxed);
    grown.notify_all();
    guard.wait_while(|| count.load(Relaxed) < 11);
    drop(guard);
    assert_eq!(waiter.join().unwrap(), 2, "the wait restored both levels");

    // The way back to the `Arc`, fair or not, and the depth rule of
    // `unlocked`, which panics naming the guard before releasing anything.
    let back = ArcKeyedGuard::into_arc(metalock::lock_arc(&count));
    assert!(Arc::ptr_eq(&back, &count) && !metalock::is_locked(&*count));
    drop(ArcKeyedGuard::into_arc_fair(metalock::lock_arc(&count)));
    metalock::lock_arc(&count).unlock_fair();
    assert!(!metalock::is_locked(&*count));
    let mut outer = metalock::lock_arc(&count);
    let got_in = ArcKeyedGuard::unlocked(&mut outer, || {
        thread::scope(|s| {
            s.spawn(|| metalock::try_lock(&*count).is_some())
                .join()
                .unwrap()
        })
    });
    assert!(got_in);
    ArcKeyedGuard::unlocked_fair(&mut outer, || assert!(!metalock::is_locked(&*count)));
    ArcKeyedGuard::bump(&mut outer); // nobody queued: keeps the monitor
    let mut inner = metalock::lock_arc(&count);
    let unwound = panic::catch_unwind(AssertUnwindSafe(|| {
        ArcKeyedGuard::unlocked(&mut inner, || ())
    }));
    let message = *unwound.unwrap_err().downcast::<String>().unwrap();
    assert!(message.contains("ArcKeyedGuard::unlocked needs the monitor held one level deep"));
    assert_eq!((outer.depth(), inner.depth()), (2, 2));
    assert!(format!("{inner:?}").starts_with("ArcKeyedGuard { value: "));
    drop((inner, outer));
    assert!(!metalock::is_locked(&*count));
}

/// The timed `Arc` enters of a keyed value wait for a holder that lets go
/// in time.
#[test]
fn timed_arc_keyed_enters_wait_for_the_holder() {
    let _watchdog = Watchdog::arm(HANG);
    let value = Arc::new(7_u64);
    for until in [false, true] {
        let (held, is_held) = std::sync::mpsc::channel();
        let holder = {
            let value = Arc::clone(&value);
            thread::spawn(move || {
                let guard = metalock::lock_arc(&value);
                held.send(()).unwrap();
                thread::sleep(Duration::from_millis(50));
                drop(guard);
            })
        };
        is_held.recv().unwrap();
        let entered = if until {
            metalock::try_lock_arc_until(&value, Instant::now() + Duration::from_secs(30))
        } else {
            metalock::try_lock_arc_for(&value, Duration::from_secs(30))
        };
        assert_eq!(entered.expect("entered once the holder let go").depth(), 1);
        holder.join().unwrap();
    }
}

/// The timed `Arc` enters give up at their deadline, and lock the value,
/// not the handle passed.
#[test]
fn timed_arc_keyed_enters_give_up() {
    let _watchdog = Watchdog::arm(HANG);
    let value = Arc::new(7_u64);
    let held = metalock::lock_arc(&value);
    let other = Arc::clone(&value);
    thread::spawn(move || {
        let start = std::time::Instant::now();
        assert!(metalock::try_lock_arc_for(&other, Duration::from_millis(20)).is_none());
        let deadline = Instant::now() + Duration::from_millis(20);
        assert!(metalock::try_lock_arc_until(&other, deadline).is_none());
        // Neither gave up before its deadline.
        assert!(start.elapsed() >= Duration::from_millis(40));
    })
    .join()
    .unwrap();
    let mut inner = metalock::lock_arc(&value);
    let unwound = panic::catch_unwind(AssertUnwindSafe(|| {
        ArcKeyedGuard::unlocked_fair(&mut inner, || ())
    }));
    let message = *unwound.unwrap_err().downcast::<String>().unwrap();
    assert!(
        message.contains("ArcKeyedGuard::unlocked_fair needs"),
        "{message}"
    );
    drop((inner, held));
}
