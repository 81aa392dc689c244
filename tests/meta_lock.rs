//! Tests of the meta-lock alone (paper 000, section 4.2, Fig. 11-12), through
//! the `__with_meta_lock` test seam and the hand-off hooks: mutual exclusion,
//! both outcomes of the hand-off race, FIFO order, release on panic, and the
//! payload that a NEUTRAL word carries.
//!
//! The hand-off hook is global and the tests of this binary run in parallel,
//! so every test takes `LOCK` first: a test that only counts events must not
//! see another test's hand-offs.
// Under a model checker (`--cfg loom`, feature `shuttle`) the crate's
// constructors are not `const` and its primitives run only inside a model.
#![cfg(not(any(loom, feature = "shuttle")))]

use std::cell::UnsafeCell;
use std::hint::black_box;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex, MutexGuard, PoisonError};
use std::thread;

use metalock::__test_hooks::{HandoffEvent, set_handoff_hook};
use metalock::MultiUseWord;

// ---------------------------------------------------------------------------
// Harness: serialization, hook installation, event counters.
// ---------------------------------------------------------------------------

static LOCK: Mutex<()> = Mutex::new(());

/// Serializes the tests of this binary; a test that panicked (some do on
/// purpose) leaves the mutex poisoned, which is harmless here.
fn serial() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Installs a hand-off hook and removes it when dropped, also when the test
/// fails. Declare it after the `serial()` guard so that it drops first.
struct Hook;

impl Hook {
    fn install(hook: fn(HandoffEvent)) -> Self {
        reset_events();
        set_handoff_hook(Some(hook));
        Hook
    }
}

impl Drop for Hook {
    fn drop(&mut self) {
        set_handoff_hook(None);
    }
}

static QUEUED: AtomicUsize = AtomicUsize::new(0);
static SUCCESSOR_WON: AtomicUsize = AtomicUsize::new(0);
static PREDECESSOR_WON: AtomicUsize = AtomicUsize::new(0);

fn reset_events() {
    QUEUED.store(0, Ordering::SeqCst);
    SUCCESSOR_WON.store(0, Ordering::SeqCst);
    PREDECESSOR_WON.store(0, Ordering::SeqCst);
}

fn count(event: HandoffEvent) {
    let counter = match event {
        HandoffEvent::SuccessorQueued => &QUEUED,
        HandoffEvent::SuccessorWon => &SUCCESSOR_WON,
        HandoffEvent::PredecessorWon => &PREDECESSOR_WON,
        // Monitor-level events: these tests run the meta-lock alone.
        _ => return,
    };
    counter.fetch_add(1, Ordering::SeqCst);
}

/// The hook of the tests that only observe.
fn count_events(event: HandoffEvent) {
    count(event);
}

/// `(SuccessorQueued, SuccessorWon, PredecessorWon)` seen since the hook was
/// installed.
fn events() -> (usize, usize, usize) {
    (
        QUEUED.load(Ordering::SeqCst),
        SUCCESSOR_WON.load(Ordering::SeqCst),
        PREDECESSOR_WON.load(Ordering::SeqCst),
    )
}

/// A value guarded by nothing but the meta-lock of `word`.
struct Guarded<T> {
    word: MultiUseWord,
    value: UnsafeCell<T>,
}

// SAFETY: `value` is only reached through `Guarded::with`, which holds the
// meta-lock of `word` for the whole access, and `into_inner`, which owns the
// `Guarded`; `T: Send` because the value moves between threads.
unsafe impl<T: Send> Sync for Guarded<T> {}

impl<T> Guarded<T> {
    fn new(word: MultiUseWord, value: T) -> Self {
        Self {
            word,
            value: UnsafeCell::new(value),
        }
    }

    /// Runs `f` on the value under the meta-lock.
    fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        self.word.__with_meta_lock(|| {
            // SAFETY: we hold the meta-lock of `word` until `f` returns, and
            // every access to `value` goes through here, so this is the only
            // reference. A nested `with` on the same word panics in
            // `get_meta_lock` before it could create a second one.
            f(unsafe { &mut *self.value.get() })
        })
    }

    fn into_inner(self) -> T {
        self.value.into_inner()
    }
}

// ---------------------------------------------------------------------------
// Mutual exclusion.
// ---------------------------------------------------------------------------

/// 8 threads x 100k increments of a plain `u64` guarded only by the
/// meta-lock: any overlap of two critical sections loses increments (and the
/// `inside` flag catches it directly).
#[test]
fn mutual_exclusion_stress() {
    const THREADS: u64 = 8;
    const INCREMENTS: u64 = 100_000;
    let _serial = serial();
    let _hook = Hook::install(count_events);

    let counter = Guarded::new(MultiUseWord::with_payload(0x1234), 0_u64);
    let inside = AtomicBool::new(false);
    thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                for _ in 0..INCREMENTS {
                    counter.with(|c| {
                        assert!(
                            !inside.swap(true, Ordering::Relaxed),
                            "two threads inside the meta-lock"
                        );
                        *c += 1;
                        inside.store(false, Ordering::Relaxed);
                    });
                }
            });
        }
    });

    let (queued, succ_won, pred_won) = events();
    println!(
        "stress: {queued} contended acquisitions ({succ_won} successor won, \
         {pred_won} predecessor won)"
    );
    // Every thread that found the word BUSY resolved its race exactly once.
    assert_eq!(queued, succ_won + pred_won);
    assert_eq!(counter.word.payload(), 0x1234);
    assert!(format!("{:?}", counter.word).contains("NEUTRAL"));
    assert_eq!(counter.into_inner(), THREADS * INCREMENTS);
}

/// The meta-lock of one word does not exclude the meta-lock of another.
#[test]
fn distinct_words_do_not_exclude_each_other() {
    let _serial = serial();
    let _hook = Hook::install(count_events);

    let held = MultiUseWord::with_payload(1);
    let other = Guarded::new(MultiUseWord::with_payload(2), 0_u32);
    held.__with_meta_lock(|| {
        thread::scope(|s| {
            s.spawn(|| other.with(|v| *v += 1));
        });
    });
    assert_eq!(events(), (0, 0, 0));
    assert_eq!(held.payload(), 1);
    assert_eq!(other.word.payload(), 2);
    assert_eq!(other.into_inner(), 1);
}

/// A word in a `static` (`with_payload` is `const`) works like any other.
#[test]
fn static_word() {
    static WORD: MultiUseWord = MultiUseWord::with_payload(77);
    let _serial = serial();

    let total = AtomicUsize::new(0);
    thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..1000 {
                    WORD.__with_meta_lock(|| total.fetch_add(1, Ordering::Relaxed));
                }
            });
        }
    });
    assert_eq!(total.load(Ordering::Relaxed), 4000);
    assert_eq!(WORD.payload(), 77);
}

// ---------------------------------------------------------------------------
// Payload.
// ---------------------------------------------------------------------------

/// A few values of every shape, plus pseudo-random ones (xorshift, fixed
/// seed) of every width.
fn payload_samples() -> Vec<usize> {
    let max = MultiUseWord::MAX_PAYLOAD;
    let mut samples = vec![
        0,
        1,
        2,
        7,
        8,
        0x5555_5555 & max,
        max,
        max - 1,
        max >> 1,
        1 << (MultiUseWord::PAYLOAD_BITS - 1),
    ];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..200 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let width = i % MultiUseWord::PAYLOAD_BITS as usize + 1;
        // Truncation to the pointer width is the point.
        samples.push((x as usize) & (max >> (MultiUseWord::PAYLOAD_BITS as usize - width)));
    }
    samples
}

#[test]
fn payload_round_trips() {
    let _serial = serial();
    for p in payload_samples() {
        assert!(p <= MultiUseWord::MAX_PAYLOAD);
        let word = MultiUseWord::with_payload(p);
        assert_eq!(word.payload(), p, "with_payload({p:#x})");
        let q = MultiUseWord::MAX_PAYLOAD - p;
        word.set_payload(q);
        assert_eq!(word.payload(), q, "set_payload({q:#x})");
        word.set_payload(p);
        assert_eq!(word.payload(), p, "set_payload({p:#x})");
        assert_eq!(word.__with_meta_lock(|| 42), 42);
        assert_eq!(word.payload(), p, "payload after the meta-lock");
    }
}

/// Concurrent `set_payload`s and `payload`s on a word whose meta-lock is
/// contended: every read sees a value some thread wrote, and the final value
/// is one of the last writes.
#[test]
fn payload_under_contention() {
    const ROUNDS: usize = 5_000;
    let _serial = serial();
    let _hook = Hook::install(count_events);

    let word = MultiUseWord::with_payload(0);
    let critical = AtomicUsize::new(0);
    thread::scope(|s| {
        for t in 1..=2_usize {
            let word = &word;
            s.spawn(move || {
                for i in 0..ROUNDS {
                    word.set_payload((t << 20) | i);
                }
            });
        }
        s.spawn(|| {
            for _ in 0..ROUNDS {
                let p = word.payload();
                let (writer, round) = (p >> 20, p & 0xf_ffff);
                assert!(
                    p == 0 || ((writer == 1 || writer == 2) && round < ROUNDS),
                    "{p:#x}"
                );
            }
        });
        s.spawn(|| {
            for _ in 0..ROUNDS {
                word.__with_meta_lock(|| critical.fetch_add(1, Ordering::Relaxed));
            }
        });
    });
    let last = word.payload();
    assert!(
        last == (1 << 20) | (ROUNDS - 1) || last == (2 << 20) | (ROUNDS - 1),
        "{last:#x}"
    );
    assert_eq!(critical.load(Ordering::Relaxed), ROUNDS);
    let (queued, succ_won, pred_won) = events();
    assert_eq!(queued, succ_won + pred_won);
}

#[test]
#[should_panic(expected = "PAYLOAD_BITS")]
fn with_payload_too_wide_panics() {
    let _serial = serial();
    let _ = MultiUseWord::with_payload(black_box(MultiUseWord::MAX_PAYLOAD + 1));
}

#[test]
#[should_panic(expected = "PAYLOAD_BITS")]
fn with_payload_usize_max_panics() {
    let _serial = serial();
    let _ = MultiUseWord::with_payload(black_box(usize::MAX));
}

#[test]
#[should_panic(expected = "PAYLOAD_BITS")]
fn set_payload_too_wide_panics() {
    let _serial = serial();
    let word = MultiUseWord::with_payload(5);
    word.set_payload(black_box(MultiUseWord::MAX_PAYLOAD + 1));
}

/// A rejected `set_payload` leaves the word as it was.
#[test]
fn set_payload_too_wide_leaves_word_unchanged() {
    let _serial = serial();
    let word = MultiUseWord::with_payload(5);
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        word.set_payload(black_box(1 << MultiUseWord::PAYLOAD_BITS));
    }));
    assert!(result.is_err());
    assert_eq!(word.payload(), 5);
}

#[test]
fn word_layout_and_constants() {
    let _serial = serial();
    assert_eq!(
        std::mem::size_of::<MultiUseWord>(),
        std::mem::size_of::<usize>()
    );
    const { assert!(MultiUseWord::PAYLOAD_BITS >= usize::BITS - 3) };
    const { assert!(MultiUseWord::PAYLOAD_BITS < usize::BITS) };
    assert_eq!(
        MultiUseWord::MAX_PAYLOAD,
        usize::MAX >> (usize::BITS - MultiUseWord::PAYLOAD_BITS)
    );
    fn send_sync<T: Send + Sync>() {}
    send_sync::<MultiUseWord>();
}

#[test]
fn default_and_debug() {
    let _serial = serial();
    assert_eq!(MultiUseWord::default().payload(), 0);
    assert_eq!(MultiUseWord::new().payload(), 0);

    let word = MultiUseWord::with_payload(424_242);
    let debug = format!("{word:?}");
    assert!(debug.contains("NEUTRAL"), "{debug}");
    assert!(debug.contains("424242"), "{debug}");
    // Taking and releasing the meta-lock leaves the word as it was.
    word.__with_meta_lock(|| ());
    assert_eq!(format!("{word:?}"), debug);
}

// ---------------------------------------------------------------------------
// The hand-off (Fig. 12) and FIFO order. The swap-only meta-lock of section
// 5.4 (`cfg(metalock_swap_only)`) has neither: its waiters poll, in no order.
// ---------------------------------------------------------------------------

#[cfg(not(metalock_swap_only))]
mod handoff {
    use super::*;
    use std::cell::Cell;
    use std::sync::atomic::AtomicI32;
    use std::time::{Duration, Instant};

    /// Polls `done` until it holds. The deadline is only there to turn a hang of
    /// a broken build into a failure; no test asserts how long anything takes.
    fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !done() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            thread::sleep(Duration::from_millis(1));
        }
    }

    // -----------------------------------------------------------------------
    // The two outcomes of the hand-off race (Fig. 12).
    // -----------------------------------------------------------------------

    /// Case 1: the successor reaches the holder's EE while the holder still holds
    /// the meta-lock, blocks, and gets the bits from the holder's release.
    #[test]
    fn successor_wins() {
        let _serial = serial();
        let _hook = Hook::install(count_events);

        let word = MultiUseWord::with_payload(0xabc);
        let ran = AtomicBool::new(false);
        thread::scope(|s| {
            word.__with_meta_lock(|| {
                s.spawn(|| word.__with_meta_lock(|| ran.store(true, Ordering::SeqCst)));
                wait_until("SuccessorWon", || SUCCESSOR_WON.load(Ordering::SeqCst) == 1);
                // The successor is committed to waiting for our release.
                assert!(!ran.load(Ordering::SeqCst));
                assert_eq!(events(), (1, 1, 0));
            });
            // Leaving the scope joins the successor, which needs the hand-off.
        });
        assert!(ran.load(Ordering::SeqCst));
        assert_eq!(events(), (1, 1, 0), "case 2 fired on a case-1 hand-off");
        assert_eq!(word.payload(), 0xabc);
    }

    thread_local! {
        /// Set on the thread that the case-2 hook holds back.
        static HELD_BACK: Cell<bool> = const { Cell::new(false) };
    }

    /// Lets the held-back successor race its predecessor.
    static GO: AtomicBool = AtomicBool::new(false);

    /// Counts events and holds the `HELD_BACK` thread between its swap and its
    /// race until `GO`.
    fn hold_back_successor(event: HandoffEvent) {
        count(event);
        if event == HandoffEvent::SuccessorQueued && HELD_BACK.with(Cell::get) {
            while !GO.load(Ordering::SeqCst) {
                thread::sleep(Duration::from_millis(1));
            }
        }
    }

    /// Runs a closure when dropped, also on unwinding.
    struct OnDrop<F: FnMut()>(F);

    impl<F: FnMut()> Drop for OnDrop<F> {
        fn drop(&mut self) {
            (self.0)();
        }
    }

    /// Whether the thread `tid` of this process is blocked (state `S`).
    #[cfg(target_os = "linux")]
    fn thread_is_blocked(tid: i32) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat"))
            .expect("cannot read /proc/self/task/<tid>/stat");
        // The state follows the `)` that closes the command name.
        let rest = &stat[stat.rfind(')').expect("malformed stat") + 1..];
        rest.trim_start().starts_with('S')
    }

    /// The kernel's id of the calling thread (0 where there is no /proc).
    fn current_tid() -> i32 {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: `gettid` has no preconditions and cannot fail.
            unsafe { libc::gettid() }
        }
        #[cfg(not(target_os = "linux"))]
        {
            0
        }
    }

    /// Returns once the predecessor thread `tid` has blocked in its release.
    /// It spins (never blocks) until told to release, and the release blocks
    /// nowhere but in the case-2 wait, so a thread seen blocked for a while is
    /// there.
    fn wait_until_blocked_in_release(tid: i32) {
        #[cfg(target_os = "linux")]
        {
            let mut seen = 0;
            wait_until("the predecessor to block in its release", || {
                seen = if thread_is_blocked(tid) { seen + 1 } else { 0 };
                seen >= 20
            });
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = tid;
            thread::sleep(Duration::from_millis(200));
        }
    }

    /// Case 2: the successor swaps, but is held back (by the hook) before it
    /// races; the holder releases meanwhile, finds the successor's swap, wins the
    /// race, leaves the bits in its EE and blocks until the successor grabs them.
    #[test]
    fn predecessor_wins() {
        let _serial = serial();
        GO.store(false, Ordering::SeqCst);
        let _hook = Hook::install(hold_back_successor);

        let word = MultiUseWord::with_payload(0xdef);
        let holding = AtomicBool::new(false);
        let release = AtomicBool::new(false);
        let holder_tid = AtomicI32::new(0);
        let released = AtomicBool::new(false);
        let ran = AtomicBool::new(false);
        thread::scope(|s| {
            // If an assertion below fails, let both threads finish so that
            // the scope can join them and report the failure.
            let _unblock = OnDrop(|| {
                release.store(true, Ordering::SeqCst);
                GO.store(true, Ordering::SeqCst);
            });
            let holder = s.spawn(|| {
                holder_tid.store(current_tid(), Ordering::SeqCst);
                word.__with_meta_lock(|| {
                    holding.store(true, Ordering::SeqCst);
                    // Spin rather than block, so that blocking means the release.
                    while !release.load(Ordering::SeqCst) {
                        thread::yield_now();
                    }
                });
                released.store(true, Ordering::SeqCst);
            });
            wait_until("the holder", || holding.load(Ordering::SeqCst));

            let successor = s.spawn(|| {
                HELD_BACK.with(|h| h.set(true));
                word.__with_meta_lock(|| ran.store(true, Ordering::SeqCst));
            });
            wait_until("SuccessorQueued", || QUEUED.load(Ordering::SeqCst) == 1);
            assert_eq!(events(), (1, 0, 0));

            release.store(true, Ordering::SeqCst);
            wait_until_blocked_in_release(holder_tid.load(Ordering::SeqCst));
            // The predecessor cannot finish its release without the successor.
            assert!(!released.load(Ordering::SeqCst));
            assert!(!ran.load(Ordering::SeqCst));

            GO.store(true, Ordering::SeqCst);
            successor.join().unwrap();
            holder.join().unwrap();
        });
        assert!(ran.load(Ordering::SeqCst));
        assert!(released.load(Ordering::SeqCst));
        assert_eq!(events(), (1, 0, 1), "expected exactly one case-2 hand-off");
        assert_eq!(word.payload(), 0xdef);
    }

    /// A panic in the critical section releases the meta-lock on unwinding, and
    /// hands it to a successor that is already waiting.
    #[test]
    fn panic_releases_meta_lock_to_waiting_successor() {
        let _serial = serial();
        let _hook = Hook::install(count_events);

        let word = MultiUseWord::with_payload(9);
        let ran = AtomicBool::new(false);
        thread::scope(|s| {
            let result = panic::catch_unwind(AssertUnwindSafe(|| {
                word.__with_meta_lock(|| {
                    s.spawn(|| word.__with_meta_lock(|| ran.store(true, Ordering::SeqCst)));
                    wait_until("SuccessorWon", || SUCCESSOR_WON.load(Ordering::SeqCst) == 1);
                    panic!("boom in the critical section");
                })
            }));
            assert!(result.is_err());
        });
        assert!(ran.load(Ordering::SeqCst));
        assert_eq!(events(), (1, 1, 0));
        assert_eq!(word.payload(), 9);
        // And it is still a working meta-lock.
        assert_eq!(word.__with_meta_lock(|| 5), 5);
    }

    /// Asking again for a meta-lock the thread holds is reported, not a silent
    /// self-deadlock, and the outer release still restores the word.
    #[test]
    fn reacquiring_held_meta_lock_panics_and_word_recovers() {
        let _serial = serial();
        let word = MultiUseWord::with_payload(31);
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            word.__with_meta_lock(|| word.__with_meta_lock(|| ()));
        }));
        let message = result.expect_err("nested acquisition must panic");
        assert_already_holds(&*message);
        assert_eq!(word.payload(), 31);
        assert_eq!(word.__with_meta_lock(|| 1), 1);
    }

    // -----------------------------------------------------------------------
    // FIFO.
    // -----------------------------------------------------------------------

    /// Threads that swap in a known order get the meta-lock in that order: each
    /// is spawned only after the previous one has queued.
    #[test]
    fn fifo_order() {
        const THREADS: usize = 6;
        let _serial = serial();
        let _hook = Hook::install(count_events);

        let order = Guarded::new(MultiUseWord::with_payload(3), Vec::new());
        thread::scope(|s| {
            order.with(|first| {
                first.push(usize::MAX);
                for i in 0..THREADS {
                    let order = &order;
                    s.spawn(move || order.with(|v| v.push(i)));
                    wait_until("SuccessorQueued", || QUEUED.load(Ordering::SeqCst) == i + 1);
                }
                // Each successor raced a predecessor that was still waiting
                // itself, so all of them won (case 1) and sit in one chain.
                wait_until("every SuccessorWon", || {
                    SUCCESSOR_WON.load(Ordering::SeqCst) == THREADS
                });
                assert_eq!(events(), (THREADS, THREADS, 0));
            });
        });
        let mut expected = vec![usize::MAX];
        expected.extend(0..THREADS);
        assert_eq!(order.word.payload(), 3);
        assert_eq!(order.into_inner(), expected);
        // Each release found its successor already in its EE.
        assert_eq!(events(), (THREADS, THREADS, 0));
    }

    /// While the meta-lock is held the word holds the holder's EE, not the
    /// payload; `payload` and `set_payload` from another thread then go through
    /// the meta-lock, wait their turn and see or change the real payload.
    #[test]
    fn payload_access_waits_for_meta_lock_holder() {
        let _serial = serial();
        let _hook = Hook::install(count_events);

        let word = MultiUseWord::with_payload(100);
        thread::scope(|s| {
            let reader = word.__with_meta_lock(|| {
                let reader = s.spawn(|| word.payload());
                wait_until("the reader's SuccessorWon", || {
                    SUCCESSOR_WON.load(Ordering::SeqCst) == 1
                });
                reader
            });
            assert_eq!(reader.join().unwrap(), 100);

            word.__with_meta_lock(|| {
                s.spawn(|| word.set_payload(200));
                wait_until("the writer's SuccessorWon", || {
                    SUCCESSOR_WON.load(Ordering::SeqCst) == 2
                });
            });
        });
        assert_eq!(events(), (2, 2, 0));
        assert_eq!(word.payload(), 200);
    }
}

/// A thread that holds a meta-lock through the seam and asks for another
/// one, on another word or through a monitor operation, is refused with a
/// panic before it swaps: the hand-off relies on one meta-lock per thread.
/// Both words keep working and keep their payloads.
#[test]
fn nesting_a_second_meta_lock_is_refused_before_the_swap() {
    let _serial = serial();
    let w1 = MultiUseWord::with_payload(11);
    let w2 = MultiUseWord::with_payload(22);
    for attempt in 0..2 {
        // A word that another thread holds has its payload read under its
        // meta-lock (its owner reads it in its own lock record).
        let (held, release) = (Barrier::new(2), Barrier::new(2));
        let result = thread::scope(|s| {
            if attempt == 1 {
                s.spawn(|| {
                    let _guard = w1.lock();
                    held.wait();
                    release.wait();
                });
                held.wait();
            }
            let result = panic::catch_unwind(AssertUnwindSafe(|| {
                w2.__with_meta_lock(|| match attempt {
                    0 => w1.__with_meta_lock(|| ()),
                    _ => drop(w1.payload()),
                });
            }));
            if attempt == 1 {
                release.wait();
            }
            result
        });
        let message = result.expect_err("a second meta-lock must be refused");
        assert_already_holds(&*message);
    }
    assert_eq!((w1.payload(), w2.payload()), (11, 22));
    assert!(!w1.is_locked() && !w2.is_locked());
    assert_eq!(w1.__with_meta_lock(|| 1), 1);
}

/// Asserts that a caught panic is the "already holds a meta-lock" refusal.
fn assert_already_holds(payload: &(dyn std::any::Any + Send)) {
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or_default();
    assert!(
        message.contains("already holds"),
        "unexpected panic: {message}"
    );
}
