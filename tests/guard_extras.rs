//! The guard API parking_lot users expect, on `Synchronized`: mapped guards,
//! `Arc` guards that keep wait and notify, `unlocked`, `bump`, `data_ptr`,
//! `Display`, the way back from a guard to its `Synchronized` or `Arc`,
//! `try_map_or_err` and `leak`; and on an object that embeds a word, the
//! `Arc` guard of `Monitor::lock_arc`.

mod common;
use common::Watchdog;
use metalock::{
    ArcMonitorGuard, ArcSynchronizedGuard, Condition, Instant, Interrupted, Monitor, MultiUseWord,
    Synchronized, SynchronizedGuard,
};
use std::panic::{self, AssertUnwindSafe};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Barrier, mpsc};
use std::thread;
use std::time::Duration;

#[test]
fn mapped_guards_narrow_and_release() {
    let pair = Synchronized::new((vec![1, 2, 3], String::new()));
    let mut items = SynchronizedGuard::map(pair.lock(), |pair| &mut pair.0);
    items.push(4);
    let mut last = metalock::MappedSynchronizedGuard::map(items, |items| items.last_mut().unwrap());
    *last = 40;
    assert!(pair.is_locked());
    drop(last);
    assert!(!pair.is_locked());

    let missing = SynchronizedGuard::try_map(pair.lock(), |pair| pair.0.get_mut(10));
    let guard = missing.expect_err("no tenth item");
    assert_eq!(guard.0, [1, 2, 3, 40]);
    drop(guard);

    let name = SynchronizedGuard::try_map(pair.lock(), |pair| Some(&mut pair.1)).unwrap();
    assert!(pair.is_held_by_current_thread());
    name.unlock_fair();
    assert!(!pair.is_locked());

    // A panic in the mapping function releases the monitor.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = SynchronizedGuard::map(pair.lock(), |_| -> &mut u8 { panic!("mapping") });
    }));
    assert!(result.is_err());
    assert!(!pair.is_locked());
}

#[test]
fn guards_display_their_value_and_lead_back_to_their_lock() {
    let name = Synchronized::new(String::from("ada"));
    let guard = name.lock();
    assert_eq!(format!("{guard}"), "ada");
    assert!(std::ptr::eq(SynchronizedGuard::synchronized(&guard), &name));
    let first = SynchronizedGuard::map(guard, |name| &mut name[..1]);
    assert_eq!(format!("{first:>3}"), "  a");
    // A mapped guard may be shared with other threads for reading.
    thread::scope(|s| {
        s.spawn(|| assert_eq!(&*first, "a"));
    });
    drop(first);

    let shared = Arc::new(Synchronized::new(7_u32));
    let guard = shared.lock_arc();
    assert_eq!(guard.to_string(), "7");
    let sync = ArcSynchronizedGuard::into_arc(guard);
    assert!(Arc::ptr_eq(&sync, &shared) && !shared.is_locked());
    let guard = shared.lock_arc();
    thread::scope(|s| {
        let other = s.spawn(|| *shared.lock() += 1);
        let sync = ArcSynchronizedGuard::into_arc_fair(guard);
        other.join().unwrap();
        assert_eq!(*sync.lock(), 8);
    });
}

#[test]
fn try_map_or_err_gives_the_error_and_leak_keeps_the_monitor() {
    let pair = Synchronized::new((vec![1], 0_u8));
    let (guard, error) =
        SynchronizedGuard::try_map_or_err(pair.lock(), |pair| pair.0.get_mut(4).ok_or("none"))
            .unwrap_err();
    assert_eq!(error, "none");
    let items = SynchronizedGuard::try_map_or_err(guard, |pair| Ok::<_, ()>(&mut pair.0)).unwrap();
    let (items, index) =
        metalock::MappedSynchronizedGuard::try_map_or_err(items, |items| items.get_mut(1).ok_or(1))
            .unwrap_err();
    assert_eq!((index, items.len()), (1, 1));
    drop(items);
    assert!(!pair.is_locked());

    let leaked = SynchronizedGuard::leak(pair.lock());
    leaked.1 = 7;
    assert!(pair.is_held_by_current_thread());
    assert!(pair.try_lock().is_none());
    thread::scope(|s| {
        s.spawn(|| {
            assert!(pair.is_locked() && !pair.is_held_by_current_thread());
            assert!(pair.try_lock_for(Duration::from_millis(2)).is_none());
        });
    });
    assert_eq!(leaked.1, 7);
}

#[test]
fn arc_guards_are_static_and_keep_wait_and_notify() {
    let shared = Arc::new(Synchronized::new(Vec::<u32>::new()));
    let not_empty = Arc::new(Condition::new());
    let consumer = {
        let (shared, not_empty) = (Arc::clone(&shared), Arc::clone(&not_empty));
        thread::spawn(move || {
            // 'static: returned from a closure that owns nothing borrowed.
            let lock = move || shared.lock_arc();
            let mut items: ArcSynchronizedGuard<Vec<u32>> = lock();
            not_empty.wait_while(&mut items, |items| items.is_empty());
            let first = items.remove(0);
            items.wait_while(|items| items.is_empty());
            (first, items.pop().unwrap())
        })
    };
    let mut items = shared.lock_arc();
    items.push(7);
    not_empty.notify_one();
    drop(items);
    loop {
        let mut items = shared.lock_arc();
        if items.is_empty() {
            items.push(8);
            items.notify_all();
            break;
        }
        drop(items);
        thread::yield_now();
    }
    assert_eq!(consumer.join().unwrap(), (7, 8));

    let held = shared.lock_arc();
    assert!(Arc::ptr_eq(
        ArcSynchronizedGuard::synchronized(&held),
        &shared
    ));
    thread::scope(|s| {
        s.spawn(|| assert!(shared.try_lock_arc().is_none()));
    });
    held.unlock_fair();
    assert!(shared.try_lock_arc().is_some());
    // The guard kept the Synchronized alive on its own.
    let guard = Arc::new(Synchronized::new(5)).lock_arc();
    assert_eq!(*guard, 5);
}

#[test]
fn timed_arc_locks_give_up_and_the_holder_gets_none_at_once() {
    let _watchdog = Watchdog::arm(Duration::from_secs(120));
    let shared = Arc::new(Synchronized::new(0));
    let held = shared.lock_arc();
    thread::scope(|s| {
        s.spawn(|| {
            let deadline = Instant::now() + Duration::from_millis(5);
            assert!(shared.try_lock_arc_for(Duration::from_millis(5)).is_none());
            assert!(shared.try_lock_arc_until(deadline).is_none());
            assert!(Instant::now() >= deadline, "gave up before its deadline");
        });
    });
    // The holder would wait for itself: `None` at once, whatever the time
    // given (the watchdog catches a wait).
    assert!(shared.try_lock_arc_for(Duration::MAX).is_none());
    let far = Instant::now() + Duration::from_secs(3600);
    assert!(shared.try_lock_arc_until(far).is_none());
    drop(held);
    *shared.try_lock_arc_for(Duration::MAX).unwrap() += 1;
    *shared.try_lock_arc_until(far).unwrap() += 1;
    assert_eq!(*shared.lock(), 2);
}

#[test]
fn unlocked_lets_others_in_and_locks_again() {
    let value = Synchronized::new(0);
    let mut guard = value.lock();
    *guard = 1;
    let seen = SynchronizedGuard::unlocked(&mut guard, || {
        assert!(!value.is_locked());
        thread::scope(|s| {
            s.spawn(|| *value.lock() += 10);
        });
        *value.lock()
    });
    assert_eq!(seen, 11);
    assert!(value.is_held_by_current_thread());
    *guard += 100;

    // A panic in the closure: the guard locks again while unwinding.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        SynchronizedGuard::unlocked_fair(&mut guard, || panic!("in the closure"));
    }));
    assert!(result.is_err());
    assert!(value.is_held_by_current_thread());
    assert_eq!(*guard, 111);
    drop(guard);
    assert!(!value.is_locked());
}

/// One bump hands the monitor to the thread queued for it, which runs
/// before the bumping thread has it back (a bump that only invited the
/// queued thread would usually take the monitor straight back).
#[test]
fn one_bump_hands_the_monitor_to_the_queued_thread() {
    let _watchdog = Watchdog::arm(Duration::from_secs(120));
    let value = Synchronized::new(0_u32);
    let mut guard = value.lock();
    let seen = thread::scope(|s| {
        s.spawn(|| *value.lock() += 1);
        while !value.has_queued_threads() {
            thread::sleep(Duration::from_millis(1));
        }
        SynchronizedGuard::bump(&mut guard);
        // Released before the check, so that a failure does not leave the
        // queued thread (and the scope) waiting for good.
        let seen = *guard;
        drop(guard);
        seen
    });
    assert_eq!(
        seen, 1,
        "the queued thread did not get the monitor in that bump"
    );
}

#[test]
fn bump_lets_a_queued_thread_in() {
    let value = Synchronized::new(Vec::new());
    let mut guard = value.lock();
    // Nobody queued: nothing happens.
    SynchronizedGuard::bump(&mut guard);
    let started = Barrier::new(2);
    thread::scope(|s| {
        s.spawn(|| {
            started.wait();
            value.lock().push("other");
        });
        started.wait();
        guard.push("first");
        // The other thread can only get in through a bump: we hold the
        // monitor throughout. Bump until it has (once it queues, a bump hands
        // it the monitor), for at least a second.
        for _ in 0..1_000 {
            SynchronizedGuard::bump(&mut guard);
            if guard.len() == 2 {
                break;
            }
            thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(
            *guard,
            ["first", "other"],
            "no bump let the queued thread in"
        );
        guard.push("after");
        drop(guard);
    });
    assert_eq!(*value.lock(), ["first", "other", "after"]);
}

#[test]
fn data_ptr_points_at_the_value() {
    let value = Synchronized::new([1_u8; 4]);
    let guard = value.lock();
    // SAFETY: this thread holds the monitor.
    unsafe { (*value.data_ptr())[0] = 9 };
    assert_eq!(guard[0], 9);
}

const CHILD: &str = "METALOCK_GUARD_EXTRAS_CHILD";

/// Runs the test `name` again in a child process and asserts that it fails
/// saying `message` on standard error.
fn child_fails_saying(name: &str, message: &str) {
    let output = Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("the test binary runs again");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains(message),
        "the message names the rule: {stderr}"
    );
}

/// A closure of `unlocked` that returns a guard of the same value: locking
/// again would alias the value, so the process aborts with a message.
/// Checked in a child process.
#[test]
fn unlocked_closure_that_keeps_the_monitor_aborts() {
    if std::env::var_os(CHILD).is_some() {
        let value = Synchronized::new(0);
        let mut guard = value.lock();
        let inner = SynchronizedGuard::unlocked(&mut guard, || value.lock());
        drop(inner);
        return;
    }
    child_fails_saying(
        "unlocked_closure_that_keeps_the_monitor_aborts",
        "SynchronizedGuard::unlocked",
    );
}

/// As above, through `ArcSynchronizedGuard::unlocked` and a forgotten
/// guard: the message names that function too.
#[test]
fn arc_unlocked_closure_that_forgets_a_guard_aborts() {
    if std::env::var_os(CHILD).is_some() {
        let value = Arc::new(Synchronized::new(0));
        let mut guard = value.lock_arc();
        ArcSynchronizedGuard::unlocked(&mut guard, || std::mem::forget(value.lock_arc()));
        return;
    }
    child_fails_saying(
        "arc_unlocked_closure_that_forgets_a_guard_aborts",
        "ArcSynchronizedGuard::unlocked",
    );
}

#[test]
#[should_panic(expected = "not reentrant")]
fn lock_arc_interruptibly_by_the_holder_panics() {
    let value = Arc::new(Synchronized::new(0));
    let _held = value.lock_arc();
    let _again = value.lock_arc_interruptibly();
}

#[test]
#[should_panic(expected = "not reentrant")]
fn lock_arc_by_the_holder_panics() {
    let value = Arc::new(Synchronized::new(0));
    let _held = value.lock_arc();
    let _again = value.lock_arc();
}

#[test]
fn interruptible_arc_locks_end_at_an_interrupt_or_their_deadline() {
    let _watchdog = Watchdog::arm(Duration::from_secs(120));
    let shared = Arc::new(Synchronized::new(0));
    // A pending interrupt refuses each before it enters, and is cleared.
    common::refused_when_interrupted(&[
        &|| matches!(shared.lock_arc_interruptibly(), Err(Interrupted)),
        &|| {
            matches!(
                shared.try_lock_arc_for_interruptibly(Duration::MAX),
                Err(Interrupted)
            )
        },
        &|| {
            matches!(
                shared.try_lock_arc_until_interruptibly(Instant::now()),
                Err(Interrupted)
            )
        },
    ]);
    let held = shared.lock_arc_interruptibly().unwrap();
    // The holder: a pending interrupt first, then `None` at once from the
    // timed ones, which would wait for itself (the watchdog catches a wait).
    common::refused_when_interrupted(&[
        &|| matches!(shared.lock_arc_interruptibly(), Err(Interrupted)),
        &|| {
            matches!(
                shared.try_lock_arc_for_interruptibly(Duration::MAX),
                Err(Interrupted)
            )
        },
    ]);
    let far = Instant::now() + Duration::from_secs(3600);
    for timeout in [Duration::MAX, Duration::from_secs(3600)] {
        assert!(
            shared
                .try_lock_arc_for_interruptibly(timeout)
                .unwrap()
                .is_none()
        );
    }
    assert!(
        shared
            .try_lock_arc_until_interruptibly(far)
            .unwrap()
            .is_none()
    );
    thread::scope(|s| {
        s.spawn(|| {
            let deadline = Instant::now() + Duration::from_millis(5);
            let entered = shared.try_lock_arc_until_interruptibly(deadline);
            assert!(entered.unwrap().is_none());
            assert!(Instant::now() >= deadline, "gave up before its deadline");
            let entered = shared.try_lock_arc_for_interruptibly(Duration::from_millis(5));
            assert!(entered.unwrap().is_none());
        });
    });
    // Interrupted while queued behind the holder.
    for timed in [false, true] {
        let (handle_tx, handle) = mpsc::channel();
        thread::scope(|s| {
            let contender = s.spawn(|| {
                handle_tx.send(metalock::interrupt_handle()).unwrap();
                match timed {
                    false => shared.lock_arc_interruptibly().map(drop),
                    true => shared
                        .try_lock_arc_for_interruptibly(Duration::from_secs(60))
                        .map(drop),
                }
            });
            let handle = handle.recv().unwrap();
            while shared.queue_length() == 0 {
                thread::yield_now();
            }
            handle.interrupt();
            assert!(matches!(contender.join().unwrap(), Err(Interrupted)));
        });
    }
    drop(held);
    *shared
        .try_lock_arc_for_interruptibly(Duration::MAX)
        .unwrap()
        .unwrap() += 1;
    // `'static`: it outlives the borrow it was made from.
    let guard: ArcSynchronizedGuard<i32> = {
        let shared = Arc::clone(&shared);
        shared
            .try_lock_arc_until_interruptibly(far)
            .unwrap()
            .unwrap()
    };
    drop(guard);
    assert_eq!(*shared.lock(), 1);
}

/// An object whose word is boxed apart from it, and which checks, when it
/// is freed, that its monitor was released first.
struct Ledger {
    word: Box<MultiUseWord>,
    /// Read and written under the monitor only (`Relaxed`: it orders them).
    entries: AtomicUsize,
    freed: Arc<AtomicBool>,
}

impl Ledger {
    fn new(freed: &Arc<AtomicBool>) -> Arc<Self> {
        Arc::new(Ledger {
            word: Box::new(MultiUseWord::new()),
            entries: AtomicUsize::new(0),
            freed: Arc::clone(freed),
        })
    }
}

impl Monitor for Ledger {
    fn multi_use_word(&self) -> &MultiUseWord {
        &self.word
    }
}

impl Drop for Ledger {
    fn drop(&mut self) {
        assert!(!self.word.is_locked(), "freed while its monitor is held");
        self.freed.store(true, Relaxed);
    }
}

#[test]
fn arc_monitor_guards_own_their_object_and_keep_wait_and_notify() {
    let _watchdog = Watchdog::arm(Duration::from_secs(120));
    // The guard is the object's last owner: released, then freed, on drop.
    let freed = Arc::new(AtomicBool::new(false));
    let guard: ArcMonitorGuard<Ledger> = Ledger::new(&freed).lock_arc();
    guard.entries.fetch_add(1, Relaxed);
    assert!(guard.is_held_by_current_thread() && !freed.load(Relaxed));
    drop(guard);
    assert!(freed.load(Relaxed));

    // A 'static guard, two levels deep over a borrowed one, waits on a
    // condition, then wakes a waiter of the monitor's own set.
    let freed = Arc::new(AtomicBool::new(false));
    let ledger = Ledger::new(&freed);
    let grown = Arc::new(Condition::new());
    let waiter = {
        let (ledger, grown) = (Arc::clone(&ledger), Arc::clone(&grown));
        thread::spawn(move || {
            let outer = ledger.lock();
            let lock = || ledger.lock_arc();
            let mut guard: ArcMonitorGuard<Ledger> = lock();
            grown.wait_while(&mut guard, |()| ledger.entries.load(Relaxed) == 0);
            let depth = guard.depth();
            guard.entries.fetch_add(10, Relaxed);
            guard.notify_all();
            drop((guard, outer));
            depth
        })
    };
    let mut guard = ledger.lock_arc();
    guard.entries.store(1, Relaxed);
    grown.notify_all();
    guard.wait_while(|| ledger.entries.load(Relaxed) < 11);
    assert_eq!(guard.depth(), 1);
    drop(guard);
    assert_eq!(waiter.join().unwrap(), 2, "the wait restored both levels");

    // The way back to the Arc, fair or not, and what Debug shows.
    let guard = ledger.lock_arc();
    assert!(Arc::ptr_eq(ArcMonitorGuard::object(&guard), &ledger));
    assert!(std::ptr::eq(ArcMonitorGuard::word(&guard), &*ledger.word));
    let back = ArcMonitorGuard::into_arc(guard);
    assert!(Arc::ptr_eq(&back, &ledger) && !ledger.is_locked());
    drop(back);
    let back = ArcMonitorGuard::into_arc_fair(ledger.lock_arc());
    assert!(!back.is_locked());
    back.lock_arc().unlock_fair();
    assert!(!ledger.is_locked());
    let word = Arc::new(MultiUseWord::with_payload(5));
    let guard = word.lock_arc();
    let shown = format!("{guard:?}");
    assert!(shown.starts_with("ArcMonitorGuard { object: ") && shown.ends_with("depth: 1 }"));
    drop(guard);
    drop((back, ledger));
    assert!(
        freed.load(Relaxed),
        "the last guard dropped, then the last Arc"
    );
}

#[test]
fn arc_monitor_guard_unlocked_lets_others_in_one_level_deep_only() {
    let word = Arc::new(MultiUseWord::new());
    let mut guard = word.lock_arc();
    let got_in = ArcMonitorGuard::unlocked(&mut guard, || {
        thread::scope(|s| s.spawn(|| word.try_lock().is_some()).join().unwrap())
    });
    assert!(got_in && guard.depth() == 1);
    ArcMonitorGuard::unlocked_fair(&mut guard, || assert!(!word.is_locked()));
    ArcMonitorGuard::bump(&mut guard); // nobody queued: keeps the monitor
    assert!(word.is_held_by_current_thread());

    // Two levels deep: a panic naming the guard, before anything is released.
    let mut inner = word.lock_arc();
    let unwound = panic::catch_unwind(AssertUnwindSafe(|| {
        ArcMonitorGuard::unlocked(&mut inner, || ())
    }));
    let message = *unwound.unwrap_err().downcast::<String>().unwrap();
    assert!(message.contains("ArcMonitorGuard::unlocked needs the monitor held one level deep"));
    assert_eq!((guard.depth(), inner.depth()), (2, 2));
    drop((inner, guard));
    assert!(!word.is_locked());
}

/// The timed `Arc` enters of a word wait for a holder that lets go in time.
#[test]
fn timed_arc_monitor_enters_wait_for_the_holder() {
    let _watchdog = Watchdog::arm(Duration::from_secs(120));
    let word = Arc::new(MultiUseWord::new());
    for until in [false, true] {
        let (held, is_held) = mpsc::channel();
        let holder = {
            let word = Arc::clone(&word);
            thread::spawn(move || {
                let guard = word.lock_arc();
                held.send(()).unwrap();
                thread::sleep(Duration::from_millis(50));
                drop(guard);
            })
        };
        is_held.recv().unwrap();
        let entered = if until {
            word.try_lock_arc_until(Instant::now() + Duration::from_secs(30))
        } else {
            word.try_lock_arc_for(Duration::from_secs(30))
        };
        assert_eq!(entered.expect("entered once the holder let go").depth(), 1);
        holder.join().unwrap();
    }
}
