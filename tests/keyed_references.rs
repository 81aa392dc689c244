//! Every way out of a keyed guard gives back what it took: after each step,
//! on two values of one home (so the second is an overflow entry while the
//! first holds the home), no keyed monitor is left in use and no thread is
//! pinned to the home. Alone in its binary: `keyed_monitors` counts the
//! whole process's.

mod common;
use common::Watchdog;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::thread;
use std::time::Duration;

use metalock::{Interrupted, KeyedGuard};

/// Two bytes of one 8-byte granule, so of one home.
#[repr(align(8))]
struct Granule([u8; 8]);

/// A wait that no notify ends; long enough for a loaded machine.
const SHORT: Duration = Duration::from_millis(2);
/// A deadline only a lost wake-up reaches.
const HANG: Duration = Duration::from_secs(60);

/// No keyed monitor in use, and no thread pinned to the home of `value`
/// (a pin left over would tie the home to one address for good).
#[track_caller]
fn none_in_use(value: &u8, step: &str) {
    assert_eq!(
        metalock::keyed_monitors(),
        0,
        "a keyed monitor is still in use after: {step}"
    );
    assert_eq!(
        metalock::__test_hooks::home_pins(value),
        0,
        "the home is still pinned after: {step}"
    );
}

#[test]
fn every_exit_of_a_home_and_an_overflow_guard_gives_back_its_monitor() {
    let _watchdog = Watchdog::arm(Duration::from_secs(120));
    let granule = Granule([0; 8]);
    let (home, other) = (&granule.0[0], &granule.0[1]);

    {
        let _home = metalock::lock(home);
        let entry = metalock::lock(other);
        let again = metalock::lock(other);
        assert_eq!(again.depth(), 2);
        assert_eq!(metalock::keyed_monitors(), 2);
        drop(again);
        drop(entry);
        assert_eq!(metalock::keyed_monitors(), 1);
    }
    none_in_use(home, "a lock, a recursive lock and their release");

    {
        let _home = metalock::lock(home);
        let _entry = metalock::lock(other);
        thread::scope(|s| {
            s.spawn(|| {
                assert!(metalock::try_lock(other).is_none());
                assert!(metalock::try_lock_for(other, SHORT).is_none());
                assert!(metalock::try_lock(home).is_none());
                assert!(metalock::try_lock_for(home, SHORT).is_none());
                for value in [other, home] {
                    let tried = metalock::try_lock_for_interruptibly(value, SHORT);
                    assert!(matches!(tried, Ok(None)), "timed out");
                    metalock::interrupt_handle().interrupt();
                    let tried = metalock::try_lock_for_interruptibly(value, SHORT);
                    assert!(matches!(tried, Err(Interrupted)));
                }
            });
        });
        assert_eq!(metalock::keyed_monitors(), 2);
    }
    none_in_use(
        home,
        "try_lock, try_lock_for and try_lock_for_interruptibly that fail",
    );

    {
        let _home = metalock::lock(home);
        let _entry = metalock::lock(other);
        thread::scope(|s| {
            s.spawn(|| {
                metalock::interrupt_handle().interrupt();
                assert!(matches!(
                    metalock::lock_interruptibly(other),
                    Err(Interrupted)
                ));
                // Interrupted while queued (most likely) on the entry, then
                // on the home, without and with a deadline.
                for (value, timed) in [(other, false), (home, false), (other, true), (home, true)] {
                    let handle = metalock::interrupt_handle();
                    thread::scope(|s| {
                        s.spawn(move || {
                            thread::sleep(5 * SHORT);
                            handle.interrupt();
                        });
                        let entered = match timed {
                            false => metalock::lock_interruptibly(value).map(Some),
                            true => metalock::try_lock_for_interruptibly(value, HANG),
                        };
                        assert!(matches!(entered, Err(Interrupted)));
                    });
                }
            });
        });
        assert_eq!(metalock::keyed_monitors(), 2);
    }
    none_in_use(
        home,
        "lock_interruptibly and try_lock_for_interruptibly interrupted, on an overflow entry \
         and on the home",
    );

    {
        let held = metalock::lock(home);
        let entry = metalock::lock(other);
        assert_eq!(metalock::queue_length(other), 0);
        assert_eq!(
            metalock::wait_set_length(other),
            0,
            "an entry nobody waits on"
        );
        assert!(!metalock::has_queued_threads(other));
        // A timed contender that gave up may leave the entry's queue
        // summary set: the queries look at the queue itself.
        thread::scope(|s| {
            s.spawn(|| assert!(metalock::try_lock_for(other, SHORT).is_none()));
        });
        assert_eq!(
            (
                metalock::queue_length(other),
                metalock::has_queued_threads(other)
            ),
            (0, false),
            "a contender that gave up on an overflow entry is not queued"
        );
        thread::scope(|s| {
            s.spawn(|| drop(metalock::lock(other)));
            while metalock::queue_length(other) == 0 {
                thread::yield_now();
            }
            assert!(metalock::has_queued_threads(other));
            assert_eq!(metalock::queue_length(home), 0);
            assert!(!metalock::has_queued_threads(home));
            drop(entry);
        });
        assert_eq!(metalock::queue_length(other), 0);
        assert!(!metalock::has_queued_threads(other));
        drop(held);
        assert_eq!(metalock::queue_length(other), 0, "no entry made");
        assert!(!metalock::has_queued_threads(other), "no entry made");
    }
    none_in_use(
        home,
        "queue_length and has_queued_threads of an overflow entry with a queue, and of none",
    );

    {
        let reaches = |value: &u8, n: usize| {
            let started = std::time::Instant::now();
            while metalock::wait_set_length(value) != n {
                assert!(started.elapsed() < HANG, "never {n} waiters");
                thread::yield_now();
            }
        };
        assert_eq!(metalock::wait_set_length(other), 0);
        thread::scope(|s| {
            s.spawn(|| metalock::lock(home).wait());
            reaches(home, 1);
            assert!(metalock::has_waiters(home));
            assert_eq!(
                (
                    metalock::wait_set_length(other),
                    metalock::has_waiters(other)
                ),
                (0, false),
                "the home's waiter is not other's"
            );
            // The home, waited on, keeps its address: `other` overflows.
            s.spawn(|| metalock::lock(other).wait());
            reaches(other, 1);
            // The entry (a home only waited on does not count).
            assert_eq!(metalock::keyed_monitors(), 1);
            assert_eq!(
                metalock::wait_set_length(home),
                1,
                "the entry's waiter is not the home's"
            );
            assert!(metalock::has_waiters(other));
            assert_eq!(metalock::lock(other).notify_all(), 1);
            assert!(!metalock::has_waiters(other));
            assert!(metalock::has_waiters(home), "the home's waiter stays");
            assert_eq!(metalock::lock(home).notify_all(), 1);
        });
        assert_eq!(metalock::wait_set_length(other), 0, "no entry made");
        assert!(!metalock::has_waiters(other), "no entry made");
    }
    none_in_use(
        home,
        "wait_set_length and has_waiters of a home and an overflow entry waited on",
    );

    {
        let _home = metalock::lock(home);
        let entry = metalock::lock_interruptibly(other).expect("free");
        assert_eq!(entry.depth(), 1);
    }
    none_in_use(home, "lock_interruptibly that enters an overflow entry");

    {
        let _home = metalock::lock(home);
        let entry = metalock::try_lock(other).expect("free");
        let again = metalock::try_lock_for(other, SHORT).expect("ours");
        drop(again);
        drop(entry);
    }
    none_in_use(home, "try_lock and try_lock_for that succeed");

    {
        let held = metalock::lock(home);
        let mut entry = metalock::lock(other);
        KeyedGuard::unlocked(&mut entry, || assert!(!metalock::is_locked(other)));
        KeyedGuard::unlocked_fair(&mut entry, || ());
        KeyedGuard::bump(&mut entry);
        // The home freed meanwhile: the guard comes back to it, not to an
        // entry.
        let mut held = Some(held);
        KeyedGuard::unlocked(&mut entry, || drop(held.take()));
        assert_eq!(metalock::keyed_monitors(), 1);
        assert!(metalock::is_held_by_current_thread(other));
    }
    none_in_use(home, "unlocked, unlocked_fair and bump");

    {
        let _home = metalock::lock(home);
        let mut entry = metalock::lock(other);
        let unwound = panic::catch_unwind(AssertUnwindSafe(|| {
            KeyedGuard::unlocked(&mut entry, || panic!("inside unlocked"));
        }));
        assert!(unwound.is_err());
        assert!(metalock::is_held_by_current_thread(other));
        let _outer = metalock::lock(other);
        let refused = panic::catch_unwind(AssertUnwindSafe(|| {
            KeyedGuard::unlocked(&mut entry, || ());
        }));
        assert!(refused.is_err(), "unlocked two levels deep panics");
    }
    none_in_use(home, "a panic inside unlocked, and unlocked refused");

    {
        let _home = metalock::lock(home);
        let mut entry = metalock::lock(other);
        assert!(entry.wait_for(SHORT).timed_out());
        assert!(entry.wait_while_for(|| true, SHORT).timed_out());
        metalock::interrupt_handle().interrupt();
        assert_eq!(entry.wait_for_interruptibly(SHORT), Err(Interrupted));
        metalock::interrupt_handle().interrupt();
        assert_eq!(entry.wait_while_interruptibly(|| true), Err(Interrupted));
        let ended = entry.wait_while_for_interruptibly(|| true, SHORT);
        assert!(ended.unwrap().timed_out());
        metalock::interrupt_handle().interrupt();
        let deadline = metalock::Instant::now() + SHORT;
        let ended = entry.wait_while_until_interruptibly(|| true, deadline);
        assert_eq!(ended, Err(Interrupted));
    }
    none_in_use(home, "timed and interrupted waits of an overflow guard");

    {
        let mut held = metalock::lock(home);
        let done = AtomicBool::new(false);
        thread::scope(|s| {
            s.spawn(|| {
                drop(metalock::lock(other));
                let waiter = metalock::lock(home);
                done.store(true, Relaxed);
                waiter.notify_all();
            });
            let waited = held.wait_while_for(|| !done.load(Relaxed), Duration::from_secs(60));
            assert!(!waited.timed_out());
        });
    }
    none_in_use(
        home,
        "a wait on the home while another thread locks its other value",
    );

    let unwound = panic::catch_unwind(|| {
        let _home = metalock::lock(home);
        let _entry = metalock::lock(other);
        panic!("holding both");
    });
    assert!(unwound.is_err());
    none_in_use(home, "a panic holding both");
}
