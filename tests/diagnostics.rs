//! The thread dump and deadlock detection (feature `diagnostics`): a
//! 3-thread lock-order cycle is found exactly once, and so are a cycle of
//! keyed monitors and one through a wait (a notified waiter entering again
//! a monitor its notifier keeps); a thread waiting for a notification, or entering with a
//! deadline, is never part of a deadlock; the dump lists held monitors
//! with their depths and who blocks on what, never crediting a thread with
//! the holds of one whose execution environment it took over; taking a
//! dump binds nothing to the thread that takes it; and a panic hook sees a
//! thread whose relock or wait is refused holding its monitors, not blocked;
//! and a cycle through a `lock_interruptibly` is reported, then broken by
//! an interrupt; a thread entering a monitor (a word's or a keyed one) that
//! an exited thread left held (a leaked guard) is reported with that
//! thread, and one entering it with a deadline is not; nor is one behind a
//! late thread-local destructor's hold, and a cycle through such a
//! destructor is reported once.
//!
//! The deadlocked threads never end (they are left blocked when the test
//! binary exits), so every check on `deadlocks()` is in one test.
// A model checker's build (`--cfg loom`, feature `shuttle`) has no
// `diagnostics`.
#![cfg(not(any(loom, feature = "shuttle")))]

use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::thread;
use std::time::{Duration, Instant};

mod common;

use common::Watchdog;
use metalock::diagnostics::{self, BlockKind};
use metalock::{MultiUseWord, Synchronized};

/// How long a test polls for a state the threads reach at once; reaching it
/// means the detector missed it.
const PATIENCE: Duration = Duration::from_secs(30);

fn address(word: &MultiUseWord) -> usize {
    word as *const MultiUseWord as usize
}

fn leak<T>(value: T) -> &'static T {
    Box::leak(Box::new(value))
}

#[test]
fn cycles_are_found_once_and_waiters_and_timed_enters_never() {
    // The cycle: thread i holds words[i] and enters words[i + 1].
    let words: &'static [MultiUseWord; 3] = leak([(); 3].map(|()| MultiUseWord::new()));
    let barrier = leak(Barrier::new(3));
    for i in 0..3 {
        thread::Builder::new()
            .name(format!("cycle-{i}"))
            .spawn(move || {
                let _first = words[i].lock();
                barrier.wait();
                let _second = words[(i + 1) % 3].lock();
                unreachable!("a deadlocked thread went on");
            })
            .unwrap();
    }
    // Not a deadlock: D holds `held` and waits for a notification on
    // `waited`; E enters `held`, owned by D, and blocks: D can still be
    // notified, so E is not stuck for good.
    let held = leak(MultiUseWord::new());
    let waited = leak(Synchronized::new(false));
    let d = thread::Builder::new()
        .name("waiter-d".into())
        .spawn(move || {
            let _held = held.lock();
            let mut go = waited.lock();
            go.wait_while(|go| !*go);
        })
        .unwrap();
    let started = Instant::now();
    // E starts once D holds `held`.
    while !held.is_locked() {
        thread::yield_now();
    }
    let e = thread::Builder::new()
        .name("enterer-e".into())
        .spawn(move || drop(held.lock()))
        .unwrap();
    // Not a deadlock either: F holds `x` and enters `y` with a deadline (an
    // hour), G holds `y` and enters `x`; F goes on when its time runs out.
    let (x, y) = (leak(MultiUseWord::new()), leak(MultiUseWord::new()));
    let both_hold = leak(Barrier::new(2));
    thread::Builder::new()
        .name("timed-f".into())
        .spawn(move || {
            let _x = x.lock();
            both_hold.wait();
            let _y = y.try_lock_for(Duration::from_secs(3600));
        })
        .unwrap();
    thread::Builder::new()
        .name("plain-g".into())
        .spawn(move || {
            let _y = y.lock();
            both_hold.wait();
            let _x = x.lock();
        })
        .unwrap();
    // Nor with keyed monitors: R holds `r` and enters `s` with a deadline
    // and interruptibly, S holds `s` and enters `r`.
    let (r, s): (&'static u64, &'static u64) = (leak(3), leak(4));
    let keyed_pair_holds = leak(Barrier::new(2));
    thread::Builder::new()
        .name("keyed-timed-r".into())
        .spawn(move || {
            let _r = metalock::lock(r);
            keyed_pair_holds.wait();
            let _s = metalock::try_lock_for_interruptibly(s, Duration::from_secs(3600));
        })
        .unwrap();
    thread::Builder::new()
        .name("keyed-plain-s".into())
        .spawn(move || {
            let _s = metalock::lock(s);
            keyed_pair_holds.wait();
            let _r = metalock::lock(r);
        })
        .unwrap();
    // A deadlock of keyed monitors: M locks `u` then `v`, N `v` then `u`.
    let (u, v): (&'static u64, &'static u64) = (leak(1), leak(2));
    let keyed_both_hold = leak(Barrier::new(2));
    for (name, first, second) in [("keyed-m", u, v), ("keyed-n", v, u)] {
        thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let _first = metalock::lock(first);
                keyed_both_hold.wait();
                let _second = metalock::lock(second);
                unreachable!("a deadlocked thread went on");
            })
            .unwrap();
    }
    // A deadlock through a wait: H holds `p` and waits on `q`; K locks `q`,
    // notifies H and, still holding `q`, enters `p`. H, notified, enters
    // `q` again, which K keeps.
    let p = leak(MultiUseWord::new());
    let q = leak(Synchronized::new(false));
    thread::Builder::new()
        .name("reenter-h".into())
        .spawn(move || {
            let _p = p.lock();
            q.lock().wait_while(|go| !*go);
            unreachable!("a deadlocked thread went on");
        })
        .unwrap();
    // K starts once H waits.
    while !diagnostics::snapshot().threads().iter().any(|t| {
        t.name() == Some("reenter-h")
            && t.blocked_on().is_some_and(|b| b.kind == BlockKind::Waiting)
    }) {
        assert!(started.elapsed() < PATIENCE, "H never waited");
        thread::sleep(Duration::from_millis(1));
    }
    thread::Builder::new()
        .name("notifier-k".into())
        .spawn(move || {
            let mut go = q.lock();
            *go = true;
            go.notify_all();
            let _p = p.lock();
            unreachable!("a deadlocked thread went on");
        })
        .unwrap();

    // Wait until the dump shows everybody blocked.
    let dump = loop {
        let dump = diagnostics::snapshot();
        let blocked = |name: &str, kind| {
            dump.threads()
                .iter()
                .any(|t| t.name() == Some(name) && t.blocked_on().is_some_and(|b| b.kind == kind))
        };
        if (0..3).all(|i| blocked(&format!("cycle-{i}"), BlockKind::Entering))
            && blocked("waiter-d", BlockKind::Waiting)
            && [
                "enterer-e",
                "timed-f",
                "plain-g",
                "reenter-h",
                "notifier-k",
                "keyed-m",
                "keyed-n",
                "keyed-timed-r",
                "keyed-plain-s",
            ]
            .iter()
            .all(|name| blocked(name, BlockKind::Entering))
        {
            break dump;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "threads never blocked:\n{dump}"
        );
        thread::sleep(Duration::from_millis(1));
    };
    println!("{dump}");
    let named = |name: &str| {
        dump.threads()
            .iter()
            .find(|t| t.name() == Some(name))
            .unwrap()
    };
    // E is entering the word D holds, and the dump says so.
    let d_dump = named("waiter-d");
    let e_blocked = named("enterer-e").blocked_on().unwrap();
    assert_eq!(e_blocked.monitor, address(held));
    assert_eq!(e_blocked.owner, Some(d_dump.id()));
    assert!(
        d_dump
            .holds()
            .iter()
            .any(|h| h.monitor == address(held) && h.depth == 1)
    );

    assert!(named("timed-f").blocked_on().unwrap().timed);
    assert!(!named("plain-g").blocked_on().unwrap().timed);
    assert!(named("keyed-timed-r").blocked_on().unwrap().timed);
    assert!(!named("keyed-plain-s").blocked_on().unwrap().timed);
    // H is back from its wait, entering `q`, which K owns; and no longer
    // listed as holding it.
    let h_dump = named("reenter-h");
    let h_blocked = h_dump.blocked_on().unwrap();
    assert_eq!(h_blocked.owner, Some(named("notifier-k").id()));
    assert!(
        h_dump
            .holds()
            .iter()
            .all(|h| h.monitor != h_blocked.monitor)
    );

    let deadlocks = diagnostics::deadlocks();
    assert_eq!(deadlocks.len(), 3, "exactly three cycles: {deadlocks:?}");
    let names = |deadlock: &diagnostics::Deadlock| {
        let mut names: Vec<_> = deadlock
            .threads()
            .iter()
            .map(|t| t.name().unwrap().to_owned())
            .collect();
        names.sort();
        names
    };
    let mut pairs: Vec<_> = deadlocks
        .iter()
        .filter(|d| d.threads().len() == 2)
        .map(names)
        .collect();
    pairs.sort();
    assert_eq!(
        pairs,
        [["keyed-m", "keyed-n"], ["notifier-k", "reenter-h"]],
        "a keyed cycle and one through a wait"
    );
    let three = deadlocks.iter().find(|d| d.threads().len() == 3).unwrap();
    let cycle = three.threads();
    for (i, thread) in cycle.iter().enumerate() {
        assert!(thread.name().unwrap().starts_with("cycle-"));
        let next = &cycle[(i + 1) % 3];
        let blocked = thread.blocked_on().unwrap();
        assert_eq!(blocked.kind, BlockKind::Entering);
        assert_eq!(blocked.owner, Some(next.id()));
        assert!(next.holds().iter().any(|h| h.monitor == blocked.monitor));
    }
    let text = three.to_string();
    println!("{text}");
    assert!(text.starts_with("Found one metalock deadlock (3 threads)"));
    assert_eq!(text.matches("waits to enter").count(), 3);

    // Release D, then E gets `held`: neither was ever reported.
    {
        let mut go = waited.lock();
        *go = true;
        go.notify_all();
    }
    d.join().unwrap();
    e.join().unwrap();

    // A deadlock that an interrupt breaks: F holds `r` and enters `s`
    // interruptibly, G holds `s` and enters `r`. Reported as any other;
    // interrupted, F gives up and lets `r` go, and both finish.
    let (r, s) = (leak(MultiUseWord::new()), leak(MultiUseWord::new()));
    let interruptible_both_hold = leak(Barrier::new(2));
    let (tx, rx) = std::sync::mpsc::channel();
    let f = thread::Builder::new()
        .name("interruptible-f".into())
        .spawn(move || {
            tx.send(metalock::interrupt_handle()).unwrap();
            let _r = r.lock();
            interruptible_both_hold.wait();
            assert!(matches!(s.lock_interruptibly(), Err(metalock::Interrupted)));
        })
        .unwrap();
    let g = thread::Builder::new()
        .name("blocking-g".into())
        .spawn(move || {
            let _s = s.lock();
            interruptible_both_hold.wait();
            drop(r.lock());
        })
        .unwrap();
    let handle = rx.recv().unwrap();
    let with_f = loop {
        let found = diagnostics::deadlocks().into_iter().find(|d| {
            d.threads()
                .iter()
                .any(|t| t.name() == Some("interruptible-f"))
        });
        if let Some(deadlock) = found {
            break deadlock;
        }
        assert!(started.elapsed() < PATIENCE, "F and G's cycle never found");
        thread::sleep(Duration::from_millis(1));
    };
    assert_eq!(with_f.threads().len(), 2, "{with_f}");
    handle.interrupt();
    f.join().unwrap();
    g.join().unwrap();
    assert_eq!(
        diagnostics::deadlocks().len(),
        3,
        "still only the three cycles (F and G's broken)"
    );

    // X exits holding `orphan` and the keyed monitor of `keyed_orphan`
    // through leaked guards: Y, entering the first, and K, the second, are
    // blocked for good, and each reported with X; Z, entering `orphan` with
    // a deadline, is not.
    let orphan = leak(MultiUseWord::new());
    let keyed_orphan = leak(0_u64);
    let x = thread::Builder::new()
        .name("leaker-x".into())
        .spawn(move || {
            std::mem::forget(orphan.lock());
            std::mem::forget(metalock::lock(keyed_orphan));
        })
        .unwrap();
    let x_id = x.thread().id();
    x.join().unwrap();
    thread::Builder::new()
        .name("stuck-keyed-k".into())
        .spawn(move || drop(metalock::lock(keyed_orphan)))
        .unwrap();
    for (name, timed) in [("stuck-y", false), ("timed-z", true)] {
        thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                if timed {
                    assert!(orphan.try_lock_for(Duration::from_secs(3600)).is_none());
                } else {
                    drop(orphan.lock());
                }
            })
            .unwrap();
    }
    let behind_x = |first: &str| loop {
        let found = diagnostics::deadlocks()
            .into_iter()
            .find(|d| d.held_by_exited_thread() && d.threads()[0].name() == Some(first));
        if let Some(deadlock) = found {
            break deadlock;
        }
        assert!(started.elapsed() < PATIENCE, "{first} behind X never found");
        thread::sleep(Duration::from_millis(1));
    };
    let keyed = behind_x("stuck-keyed-k");
    let k_blocked = keyed.threads()[0].blocked_on().unwrap();
    assert_eq!(
        (k_blocked.key, k_blocked.owner),
        (Some(keyed_orphan as *const u64 as usize), Some(x_id))
    );
    let behind_x = behind_x("stuck-y");
    let [y_dump, x_dump] = behind_x.threads() else {
        panic!("Y and X only: {behind_x}");
    };
    assert_eq!(y_dump.name(), Some("stuck-y"));
    let y_blocked = y_dump.blocked_on().unwrap();
    assert_eq!(
        (y_blocked.monitor, y_blocked.owner),
        (address(orphan), Some(x_id))
    );
    assert_eq!(x_dump.id(), x_id);
    assert!(x_dump.has_exited() && x_dump.blocked_on().is_none());
    let text = behind_x.to_string();
    println!("{text}");
    assert!(text.contains("which has exited"), "{text}");
    // Z blocks too before the count.
    while !diagnostics::snapshot()
        .threads()
        .iter()
        .any(|t| t.name() == Some("timed-z") && t.blocked_on().is_some_and(|b| b.timed))
    {
        assert!(started.elapsed() < PATIENCE, "Z never blocked");
        thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(
        diagnostics::deadlocks().len(),
        5,
        "the three cycles, Y and K behind X, never Z"
    );
    late_destructors(started);
    assert_eq!(
        diagnostics::deadlocks().len(),
        6,
        "and the cycle through a late destructor"
    );
}

/// Thread-local destructors that run after the crate's exit cleanup (their
/// thread-locals were made before the thread's first lock): one that holds
/// a monitor a while is not a leak, so W, entering it meanwhile, is not
/// reported; one that blocks entering a monitor V holds, while V enters the
/// one the thread leaked, closes a cycle, reported once (not also as V
/// behind an exited thread).
fn late_destructors(started: Instant) {
    static HELD_LATE: MultiUseWord = MultiUseWord::new();
    static LEAKED_2: MultiUseWord = MultiUseWord::new();
    static HOLDING: AtomicBool = AtomicBool::new(false);
    static RELEASE: AtomicBool = AtomicBool::new(false);
    struct HoldsLate;
    impl Drop for HoldsLate {
        fn drop(&mut self) {
            let _held = HELD_LATE.lock();
            HOLDING.store(true, SeqCst);
            while !RELEASE.load(SeqCst) {
                thread::sleep(Duration::from_millis(1));
            }
        }
    }
    thread_local! { static HOLDS_LATE: HoldsLate = const { HoldsLate }; }
    thread::Builder::new()
        .name("late-holder".into())
        .spawn(|| {
            HOLDS_LATE.with(|_| ());
            std::mem::forget(LEAKED_2.lock());
        })
        .unwrap();
    while !HOLDING.load(SeqCst) {
        assert!(
            started.elapsed() < PATIENCE,
            "the late destructor never held"
        );
        thread::sleep(Duration::from_millis(1));
    }
    let w = thread::Builder::new()
        .name("behind-late-w".into())
        .spawn(|| drop(HELD_LATE.lock()))
        .unwrap();
    let w_id = w.thread().id();
    let w_entering = || {
        diagnostics::snapshot().threads().iter().any(|t| {
            t.id() == w_id
                && t.blocked_on()
                    .is_some_and(|b| b.monitor == address(&HELD_LATE) && b.owner.is_some())
        })
    };
    while !w_entering() {
        assert!(started.elapsed() < PATIENCE, "W never blocked");
        thread::sleep(Duration::from_millis(1));
    }
    let with_w = |d: &diagnostics::Deadlock| d.threads().iter().any(|t| t.id() == w_id);
    assert!(
        !diagnostics::deadlocks().iter().any(with_w),
        "a late hold reported"
    );
    RELEASE.store(true, SeqCst);
    w.join().unwrap();

    static LEAKED_3: MultiUseWord = MultiUseWord::new();
    static HELD_BY_V: MultiUseWord = MultiUseWord::new();
    static BOTH_HOLD: Barrier = Barrier::new(2);
    struct BlocksLate;
    impl Drop for BlocksLate {
        fn drop(&mut self) {
            drop(HELD_BY_V.lock());
        }
    }
    thread_local! { static BLOCKS_LATE: BlocksLate = const { BlocksLate }; }
    thread::Builder::new()
        .name("late-blocker".into())
        .spawn(|| {
            BLOCKS_LATE.with(|_| ());
            std::mem::forget(LEAKED_3.lock());
            BOTH_HOLD.wait();
        })
        .unwrap();
    thread::Builder::new()
        .name("holder-v".into())
        .spawn(|| {
            let _held = HELD_BY_V.lock();
            BOTH_HOLD.wait();
            drop(LEAKED_3.lock());
        })
        .unwrap();
    let with_v =
        |d: &diagnostics::Deadlock| d.threads().iter().any(|t| t.name() == Some("holder-v"));
    let found = loop {
        let found: Vec<_> = diagnostics::deadlocks()
            .into_iter()
            .filter(with_v)
            .collect();
        if !found.is_empty() {
            break found;
        }
        assert!(started.elapsed() < PATIENCE, "the late cycle never found");
        thread::sleep(Duration::from_millis(1));
    };
    assert_eq!(found.len(), 1, "reported once: {found:?}");
    assert!(!found[0].held_by_exited_thread(), "a cycle: {}", found[0]);
    assert_eq!(found[0].threads().len(), 2);
}

#[test]
fn the_dump_lists_what_a_thread_holds() {
    let a = MultiUseWord::new();
    let b = Synchronized::new(0);
    let value = String::from("keyed");
    let outer = a.lock();
    let inner = a.lock();
    let sync = b.lock();
    let keyed = metalock::lock(&value);
    let dump = diagnostics::snapshot();
    let me = dump.current_thread().expect("this thread uses monitors");
    assert!(me.blocked_on().is_none());
    let holds = me.holds();
    assert_eq!(holds.len(), 3, "{dump}");
    let a_held = holds.iter().find(|h| h.monitor == address(&a)).unwrap();
    assert_eq!(a_held.depth, 2);
    assert_eq!(holds.iter().filter(|h| h.depth == 1).count(), 2);
    assert!(
        holds
            .iter()
            .any(|h| h.key == Some(&value as *const String as usize))
    );
    assert!(dump.to_string().contains("(depth 2)"));
    drop(keyed);
    drop(inner);
    sync.unlock_fair();
    drop(outer);
    let dump = diagnostics::snapshot();
    assert!(
        dump.current_thread().is_none_or(|me| me.holds().is_empty()),
        "{dump}"
    );
}

#[test]
fn a_dump_binds_nothing_to_its_thread() {
    // A keyed monitor in use: the dump reads which value its home serves.
    let value = String::from("held");
    let _held = metalock::lock(&value);
    thread::spawn(|| {
        let dump = diagnostics::snapshot();
        assert!(dump.current_thread().is_none(), "{dump}");
        assert!(!metalock::__test_hooks::thread_has_exec_env());
    })
    .join()
    .unwrap();
}

/// Threads come and go, each holding a word of its own until a dump has
/// run, and each new thread takes over the execution environment of one
/// that ended: a dump taken meanwhile never shows a thread holding another
/// thread's word.
#[test]
fn a_dump_never_credits_one_thread_with_another_threads_holds() {
    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

    let _watchdog = Watchdog::arm(Duration::from_secs(300));
    // Many idle environments first, so that a dump takes long enough for
    // threads to end and start while it runs.
    const IDLE: usize = 3_000;
    // The idle threads wait for the gate, which opens once all have locked
    // (or no more could start).
    let gate = std::sync::RwLock::new(());
    let closed = gate.write().unwrap();
    let locked = AtomicUsize::new(0);
    thread::scope(|s| {
        let mut spawned = 0;
        for _ in 0..IDLE {
            let (gate, locked) = (&gate, &locked);
            let thread = thread::Builder::new().spawn_scoped(s, move || {
                let word = MultiUseWord::new();
                let _guard = word.lock();
                locked.fetch_add(1, SeqCst);
                drop(gate.read());
            });
            if thread.is_err() {
                // Fewer idle environments: a weaker test, not a failure.
                break;
            }
            spawned += 1;
        }
        while locked.load(SeqCst) < spawned {
            thread::sleep(Duration::from_millis(1));
        }
        drop(closed);
    });

    const THREADS: usize = 4_000;
    // One thread in `CHECKED` holds its word until a dump has seen it.
    const CHECKED: usize = 100;
    let words: Vec<MultiUseWord> = (0..THREADS).map(|_| MultiUseWord::new()).collect();
    let owner_of: Mutex<HashMap<usize, thread::ThreadId>> = Mutex::new(HashMap::new());
    let done = AtomicBool::new(false);
    let (started, finished) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let seen_holding = AtomicUsize::new(0);
    thread::scope(|s| {
        s.spawn(|| {
            while !done.load(SeqCst) {
                started.fetch_add(1, SeqCst);
                let dump = diagnostics::snapshot();
                let owner_of = owner_of.lock().unwrap();
                for thread in dump.threads() {
                    for held in thread.holds() {
                        if let Some(&owner) = owner_of.get(&held.monitor) {
                            assert_eq!(owner, thread.id(), "{dump}");
                            seen_holding.fetch_add(1, SeqCst);
                        }
                    }
                }
                drop(owner_of);
                finished.fetch_add(1, SeqCst);
            }
        });
        for (pair, words) in words.chunks(2).enumerate() {
            let workers: Vec<_> = words
                .iter()
                .map(|word| {
                    let (owner_of, started, finished) = (&owner_of, &started, &finished);
                    s.spawn(move || {
                        owner_of
                            .lock()
                            .unwrap()
                            .insert(address(word), thread::current().id());
                        let _guard = word.lock();
                        if pair * 2 % CHECKED == 0 {
                            // Hold until a dump that started after the lock
                            // has finished: it must have seen this hold.
                            let after = started.load(SeqCst) + 1;
                            while finished.load(SeqCst) < after {
                                thread::sleep(Duration::from_micros(100));
                            }
                        } else {
                            for _ in 0..2_000 {
                                std::hint::spin_loop();
                            }
                        }
                    })
                })
                .collect();
            for worker in workers {
                worker.join().unwrap();
            }
        }
        done.store(true, SeqCst);
    });
    assert!(
        seen_holding.load(SeqCst) >= THREADS / CHECKED,
        "a dump missed a thread holding its word"
    );
}

/// What a panic hook (user code, where dumps are taken on failure) sees of
/// a thread whose relock of a `Synchronized`, or whose wait on a
/// `Condition` bound to another monitor, is refused: the monitors it holds,
/// and no block (it only unwinds). The hook is process-wide: it forwards
/// every other thread's panic to the hook before it.
#[test]
fn a_panic_hook_sees_a_refused_relock_or_wait_as_not_blocked() {
    let _watchdog = Watchdog::arm(4 * PATIENCE);
    use std::panic::{self, AssertUnwindSafe};
    use std::sync::{Arc, Mutex};

    const NAME: &str = "refused relock and wait";
    let seen = Arc::new(Mutex::new(Vec::new()));
    let previous: Arc<dyn Fn(&panic::PanicHookInfo<'_>) + Send + Sync> =
        Arc::from(panic::take_hook());
    let (record, forward) = (Arc::clone(&seen), Arc::clone(&previous));
    panic::set_hook(Box::new(move |info| {
        if thread::current().name() != Some(NAME) {
            return forward(info);
        }
        let dump = diagnostics::snapshot();
        let me = dump
            .current_thread()
            .expect("the panicking thread is in the dump");
        let state = (me.holds().len(), me.blocked_on().map(|b| b.kind));
        record.lock().unwrap().push(state);
    }));

    let (value, other) = (Synchronized::new(0), Synchronized::new(0));
    let condition = metalock::Condition::new();
    let bound = Barrier::new(2);
    thread::scope(|s| {
        // Binds `condition` to `other` while it waits.
        s.spawn(|| {
            let mut guard = other.lock();
            bound.wait();
            let _ = condition.wait_for(&mut guard, PATIENCE);
        });
        let refused = thread::Builder::new()
            .name(NAME.into())
            .spawn_scoped(s, || {
                let _held = value.lock();
                let relock = panic::catch_unwind(AssertUnwindSafe(|| drop(value.lock())));
                assert!(relock.is_err(), "a relock of a Synchronized panics");
                bound.wait();
                // The waiter binds the condition under `other`'s monitor,
                // which its wait releases.
                while other.try_lock().is_none() {
                    thread::yield_now();
                }
                let third = Synchronized::new(0);
                let mut guard = third.lock();
                let wait = panic::catch_unwind(AssertUnwindSafe(|| condition.wait(&mut guard)));
                assert!(wait.is_err(), "a condition bound elsewhere panics");
            })
            .unwrap();
        // Both panics seen, or the thread ended early (a failed assert; the
        // check below says what the hook saw).
        while seen.lock().unwrap().len() < 2 && !refused.is_finished() {
            thread::yield_now();
        }
        condition.notify_all();
    });
    drop(panic::take_hook());
    panic::set_hook(Box::new(move |info| previous(info)));
    assert_eq!(
        *seen.lock().unwrap(),
        [(1, None), (2, None)],
        "(monitors held, block) in the panic hook: the relock's, then the wait's"
    );
}
