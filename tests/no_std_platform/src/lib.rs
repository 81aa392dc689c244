//! A `metalock::platform::Platform` built from std threads, for testing the
//! crate compiled without its `std` feature. A real no_std user writes the
//! same four pieces on top of their RTOS: a wait-on-address, a clock, a
//! per-thread slot and a thread-exit hook.

use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use metalock::Instant;
use metalock::platform::{self, Platform};
use std::sync::{Condvar, Mutex, OnceLock, mpsc};
use std::time::Duration;

/// When set, the platform's clock panics: what a buggy `no_std` platform
/// callback does, for the test that the crate then aborts instead of
/// wedging.
pub static PANIC_IN_NOW: AtomicBool = AtomicBool::new(false);

/// A function the platform's `wake` runs once, taken out when it runs: for
/// the test that a callback which uses the crate stops the process with a
/// message instead of waiting for itself.
pub static ON_WAKE: std::sync::Mutex<Option<fn()>> = std::sync::Mutex::new(None);

/// A function the platform's `now` runs once, taken out when it runs: for
/// the test that a clock which locks a monitor (an RTOS's tick counter
/// kept in a `Synchronized`, say) stops the process with a message instead
/// of locking in the middle of its thread's own enter or wait.
pub static ON_NOW: std::sync::Mutex<Option<fn()>> = std::sync::Mutex::new(None);

/// Calls of the platform's `wait` since the process began: for the tests
/// that check when the crate blocks.
pub static WAITS: AtomicUsize = AtomicUsize::new(0);

/// Calls of the platform's `yield_now` since the process began: for the
/// tests that check how much the crate yields.
pub static YIELDS: AtomicUsize = AtomicUsize::new(0);

/// Microseconds the platform's `wait` sleeps before it returns: a machine
/// that wakes a blocked thread late, for the test that the wait policy does
/// not count the waiter's own wake-up as time it waited.
pub static WAKE_DELAY_MICROS: AtomicUsize = AtomicUsize::new(0);

/// Microseconds the platform's `yield_now` sleeps: a processor that other
/// runnable threads share, where a yield runs one of them for a while, for
/// the test that a waiter's spin still ends in time.
pub static YIELD_DELAY_MICROS: AtomicUsize = AtomicUsize::new(0);

/// Microseconds each yield past the first [`SHORT_SPIN_YIELDS`] since
/// [`start_spin_record`] sleeps: a lone waiter's long yields made slow and
/// its short budget left fast, for the test that a spin its notify ends
/// after long yields marks its set, timed waits (whose bound counts from
/// the spin's start) included.
pub static LONG_YIELD_DELAY_MICROS: AtomicUsize = AtomicUsize::new(0);

/// When set, each of the first [`SHORT_SPIN_YIELDS`] yields since
/// [`start_spin_record`] returns at once: a short budget that a busy
/// machine's time slices do not stretch past a timed wait's lone bound (30
/// µs from the spin's start), for the test of what that wait's long yields
/// learn.
pub static SHORT_YIELDS_AT_ONCE: AtomicBool = AtomicBool::new(false);

/// When set, each yield past the first [`SHORT_SPIN_YIELDS`] since
/// [`start_spin_record`] spins on the clock for [`BUSY_YIELD`] instead of
/// yielding: a waiter that does not give up its processor at each long
/// yield (the scheduler's tick may still preempt it), for the tests that
/// time a spin its notify ends (a yield to another runnable thread
/// stretches it by a time slice).
pub static BUSY_LONG_YIELDS: AtomicBool = AtomicBool::new(false);

/// How long a busy yield ([`BUSY_LONG_YIELDS`]) spins.
pub const BUSY_YIELD: Duration = Duration::from_micros(1);

/// Yields since [`start_spin_record`], for [`LONG_YIELD_DELAY_MICROS`] and
/// [`SHORT_YIELDS_AT_ONCE`].
static SPIN_YIELDS: AtomicUsize = AtomicUsize::new(0);

/// Microseconds from the platform clock's origin to the first `yield_now`
/// and to the first `wait` since [`start_spin_record`], `u64::MAX` while
/// there is none: how long a waiter's spin lasted, for [`spun_long`].
static FIRST_YIELD_MICROS: AtomicU64 = AtomicU64::new(u64::MAX);
static FIRST_WAIT_MICROS: AtomicU64 = AtomicU64::new(u64::MAX);

/// The yields of `SpinWait`'s short budget (10 rounds, the first three of
/// spin hints), which every waiter that spins asks for unless a deadline
/// stops it.
pub const SHORT_SPIN_YIELDS: usize = 7;

/// The shortest spin, from its first yield to its park, that shows the
/// lone waiter's time bound ended it: the policy's `LONE_WAITER_SPIN` (30
/// µs), less what the spin hints and clock reads before the first yield may
/// take.
pub const LONE_SPIN_SHOWN: Duration = Duration::from_micros(25);

/// Forgets the first yield and the first wait recorded, and the yields
/// counted: call it before the wait whose spin [`spun_long`] reads, or
/// whose long yields [`LONG_YIELD_DELAY_MICROS`] slows.
pub fn start_spin_record() {
    FIRST_YIELD_MICROS.store(u64::MAX, Ordering::SeqCst);
    FIRST_WAIT_MICROS.store(u64::MAX, Ordering::SeqCst);
    SPIN_YIELDS.store(0, Ordering::SeqCst);
}

/// Whether the one waiter that yielded and parked since
/// [`start_spin_record`], asking for `yields` yields, spun longer than the
/// short budget: more yields than [`SHORT_SPIN_YIELDS`], or a spin the
/// lone waiter's time bound ended, which lasted [`LONE_SPIN_SHOWN`] or more
/// and may hold fewer yields where each runs another thread for a while.
pub fn spun_long(yields: usize) -> bool {
    let first_yield = FIRST_YIELD_MICROS.load(Ordering::SeqCst);
    let first_wait = FIRST_WAIT_MICROS.load(Ordering::SeqCst);
    let bounded = first_yield != u64::MAX
        && first_wait != u64::MAX
        && first_wait.saturating_sub(first_yield) >= LONE_SPIN_SHOWN.as_micros() as u64;
    yields > SHORT_SPIN_YIELDS || (yields > 0 && bounded)
}

/// A global allocator that locks [`LOCKED_BY_ALLOCATOR`] on every
/// allocation of a thread that armed it ([`arm_locking_allocator`]), except
/// the allocations of that lock itself: what a `no_std` program whose
/// allocator synchronizes through the crate does. A test binary installs
/// it with `#[global_allocator]`.
pub struct LockingAllocator;

/// The monitor [`LockingAllocator`] locks.
pub static LOCKED_BY_ALLOCATOR: metalock::MultiUseWord = metalock::MultiUseWord::new();

/// Locks [`LockingAllocator`] has taken since the process began.
pub static ALLOCATOR_LOCKS: AtomicUsize = AtomicUsize::new(0);

std::thread_local! {
    // Const, without destructors: usable from the allocator.
    static ARMED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static IN_HOOK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Makes [`LockingAllocator`] lock (or not) on the calling thread's
/// allocations.
pub fn arm_locking_allocator(armed: bool) {
    ARMED.with(|a| a.set(armed));
}

// SAFETY: every request goes to `System`; the hook only locks and unlocks
// a monitor before it.
unsafe impl std::alloc::GlobalAlloc for LockingAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if ARMED.with(std::cell::Cell::get) && !IN_HOOK.with(|h| h.replace(true)) {
            drop(LOCKED_BY_ALLOCATOR.lock());
            ALLOCATOR_LOCKS.fetch_add(1, Ordering::SeqCst);
            IN_HOOK.with(|h| h.set(false));
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { std::alloc::System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
}

/// Wait-on-address through one global mutex and condition variable: a waiter
/// checks the value under the mutex, a waker takes the mutex before
/// notifying, so no wake-up falls between the check and the sleep.
pub struct StdThreads {
    lock: Mutex<()>,
    condvar: Condvar,
    origin: OnceLock<std::time::Instant>,
}

static PLATFORM: StdThreads = StdThreads {
    lock: Mutex::new(()),
    condvar: Condvar::new(),
    origin: OnceLock::new(),
};

std::thread_local! {
    static SLOT: AtomicUsize = const { AtomicUsize::new(0) };
    static EXIT_HOOK: ExitHook = const { ExitHook };
}

/// Gives the thread's execution environment back when the thread ends.
struct ExitHook;

impl Drop for ExitHook {
    fn drop(&mut self) {
        platform::release_current_thread();
    }
}

impl StdThreads {
    fn origin(&self) -> std::time::Instant {
        *self.origin.get_or_init(std::time::Instant::now)
    }

    /// Writes the clock into `first` unless it holds a time already.
    fn record_first(&self, first: &AtomicU64) {
        if first.load(Ordering::SeqCst) == u64::MAX {
            let now = self.origin().elapsed().as_micros() as u64;
            let _ = first.compare_exchange(u64::MAX, now, Ordering::SeqCst, Ordering::SeqCst);
        }
    }
}

// SAFETY: `wait` re-checks the value under the mutex that `wake` takes before
// notifying, so a wake after a change is never missed; `now` derives from
// std's monotonic clock; each thread's slot is its own thread-local, valid
// until the thread ends, and `ExitHook` releases it on the way out.
unsafe impl Platform for StdThreads {
    fn wait(&self, word: &AtomicU32, expected: u32, deadline: Option<Instant>) {
        // Before the count, which tells a test that the thread parked.
        self.record_first(&FIRST_WAIT_MICROS);
        WAITS.fetch_add(1, Ordering::SeqCst);
        let delay = WAKE_DELAY_MICROS.load(Ordering::SeqCst);
        if delay != 0 {
            std::thread::sleep(Duration::from_micros(delay as u64));
        }
        let guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        // Relaxed: the parker's own swaps order the data.
        if word.load(Ordering::Relaxed) != expected {
            return;
        }
        match deadline {
            None => drop(self.condvar.wait(guard)),
            Some(deadline) => {
                let left = deadline.saturating_duration_since(self.now());
                if !left.is_zero() {
                    drop(self.condvar.wait_timeout(guard, left));
                }
            }
        }
    }

    fn wake(&self, _word: &AtomicU32) {
        let hook = ON_WAKE.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(hook) = hook {
            hook();
        }
        drop(self.lock.lock().unwrap_or_else(|e| e.into_inner()));
        self.condvar.notify_all();
    }

    fn yield_now(&self) {
        self.record_first(&FIRST_YIELD_MICROS);
        YIELDS.fetch_add(1, Ordering::SeqCst);
        let long = SPIN_YIELDS.fetch_add(1, Ordering::SeqCst) >= SHORT_SPIN_YIELDS;
        if !long && SHORT_YIELDS_AT_ONCE.load(Ordering::SeqCst) {
            return;
        }
        if long && BUSY_LONG_YIELDS.load(Ordering::SeqCst) {
            let started = std::time::Instant::now();
            while started.elapsed() < BUSY_YIELD {
                std::hint::spin_loop();
            }
            return;
        }
        let long_delay = match long {
            true => LONG_YIELD_DELAY_MICROS.load(Ordering::SeqCst),
            false => 0,
        };
        match YIELD_DELAY_MICROS.load(Ordering::SeqCst).max(long_delay) {
            0 => std::thread::yield_now(),
            delay => std::thread::sleep(Duration::from_micros(delay as u64)),
        }
    }

    fn now(&self) -> Instant {
        // Relaxed: a test switch with no data attached.
        if PANIC_IN_NOW.load(Ordering::Relaxed) {
            panic!("the platform's clock failed");
        }
        let hook = ON_NOW.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(hook) = hook {
            hook();
        }
        Instant::from_duration_since_origin(self.origin().elapsed())
    }

    fn current_thread_slot(&self) -> NonNull<AtomicUsize> {
        // Registers the exit hook the first time the thread asks; fails
        // harmlessly once the hook itself is being destroyed.
        let _ = EXIT_HOOK.try_with(|_| ());
        SLOT.with(|slot| NonNull::from(slot))
    }
}

/// Runs `test` beside a partner thread, which runs `turn` once for each
/// message `test` sends on `go` and answers on `done` after each: the
/// shape of the tests that watch one thread's spin through the platform's
/// counts, turn by turn.
pub fn with_partner(
    turn: impl Fn() + Send,
    test: impl FnOnce(&mpsc::Sender<()>, &mpsc::Receiver<()>),
) {
    let (go, go_rx) = mpsc::channel();
    let (done_tx, done) = mpsc::channel();
    let (_unpin, partners) = affinity::pin_apart();
    std::thread::scope(|s| {
        s.spawn(move || {
            if let Some(cpu) = partners {
                affinity::pin(cpu);
            }
            while go_rx.recv().is_ok() {
                turn();
                done_tx.send(()).unwrap();
            }
        });
        test(&go, &done);
        // Ends the partner's loop.
        drop(go);
    });
}

/// Processors for [`with_partner`]'s threads. The tests that time a
/// thread's spin or park from another thread need the two on different
/// processors: the scheduler tends to keep two threads that wake each
/// other in turn on one, where the watching thread sees the other park
/// only once that one has stopped running (7-20 µs later on a 2-vCPU
/// virtual machine, against 1-2 µs from the other processor), which
/// stretches every park the test times past the policy's thresholds.
#[cfg(target_os = "linux")]
mod affinity {
    use std::cell::Cell;

    std::thread_local! {
        /// The calling thread's processors before its outermost
        /// `with_partner` pinned it, and how many `with_partner`s it is in.
        static PINNED: Cell<(Option<libc::cpu_set_t>, usize)> = const { Cell::new((None, 0)) };
    }

    /// Gives the calling thread its processors back once its outermost
    /// `with_partner` ends.
    pub struct Unpin(());

    impl Drop for Unpin {
        fn drop(&mut self) {
            match PINNED.get() {
                (Some(original), 1) => {
                    PINNED.set((None, 0));
                    set(&original);
                }
                (original, depth) => PINNED.set((original, depth - 1)),
            }
        }
    }

    /// Pins the calling thread to the processor it runs on, and returns a
    /// processor for its partner to [`pin`] itself to: another of those the
    /// calling thread was allowed, the next one for each `with_partner`
    /// nested in another, never the calling thread's (a test thread that
    /// spins for a second partner must not share a processor with it). With
    /// fewer than two processors allowed, pins nothing.
    pub fn pin_apart() -> (Unpin, Option<usize>) {
        let (original, depth) = PINNED.get();
        let allowed = original.or_else(get);
        PINNED.set((allowed, depth + 1));
        let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
            // SAFETY: `CPU_ISSET` reads the set within its size.
            .filter(|&cpu| allowed.is_some_and(|set| unsafe { libc::CPU_ISSET(cpu, &set) }))
            .collect();
        if cpus.len() < 2 {
            return (Unpin(()), None);
        }
        // SAFETY: no arguments; the processor the calling thread runs on.
        let running = usize::try_from(unsafe { libc::sched_getcpu() });
        let own = cpus.iter().position(|&cpu| Ok(cpu) == running).unwrap_or(0);
        if depth == 0 {
            pin(cpus[own]);
        }
        let others = cpus.len() - 1;
        (
            Unpin(()),
            Some(cpus[(own + 1 + depth % others) % cpus.len()]),
        )
    }

    /// Pins the calling thread to `cpu`.
    pub fn pin(cpu: usize) {
        // SAFETY: `cpu_set_t` is plain bits, valid zeroed, and `cpu` is
        // below `CPU_SETSIZE` (it came from a set).
        let one = unsafe {
            let mut one: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut one);
            one
        };
        set(&one);
    }

    /// The calling thread's processors, if the system says.
    fn get() -> Option<libc::cpu_set_t> {
        // SAFETY: as in `pin`; the call writes only the set passed with
        // its size, for the calling thread (0).
        unsafe {
            let mut allowed: libc::cpu_set_t = std::mem::zeroed();
            let size = std::mem::size_of::<libc::cpu_set_t>();
            (libc::sched_getaffinity(0, size, &mut allowed) == 0).then_some(allowed)
        }
    }

    /// Limits the calling thread to `cpus`; says so if the system refuses,
    /// as the timing tests may then fail for the reason pinning avoids.
    fn set(cpus: &libc::cpu_set_t) {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: the call reads only the set passed with its size, for the
        // calling thread (0).
        if unsafe { libc::sched_setaffinity(0, size, cpus) } != 0 {
            eprintln!(
                "metalock_no_std_platform: sched_setaffinity failed ({}); the thread is not pinned",
                std::io::Error::last_os_error()
            );
        }
    }
}

/// Without processor affinity, [`with_partner`]'s threads go where the
/// scheduler puts them.
#[cfg(not(target_os = "linux"))]
mod affinity {
    pub struct Unpin(());

    pub fn pin_apart() -> (Unpin, Option<usize>) {
        (Unpin(()), None)
    }

    pub fn pin(_: usize) {}
}

/// Registers the platform (once per process; later calls do nothing).
pub fn install() {
    let _ = register();
}

/// Registers the platform, and says whether this call was the first.
pub fn register() -> Result<(), platform::PlatformAlreadySet> {
    platform::set_platform(&PLATFORM)
}

/// `Instant::now()` of the installed platform plus `d`.
pub fn in_the_future(d: Duration) -> Instant {
    Instant::now().checked_add(d).expect("deadline overflow")
}

/// The environment variable that tells a test it runs as the child of
/// [`aborts_in_child`].
const CHILD: &str = "METALOCK_NO_STD_PLATFORM_CHILD";

/// For a test that must abort the process: in the test, returns `false`
/// after running the test binary again on `test` alone and checking that it
/// aborted (SIGABRT on Unix) within 30 s, with `message` and not
/// "UNREACHABLE" on its standard error; in that child, returns `true`, and
/// the test goes on to abort.
pub fn aborts_in_child(test: &str, message: &str) -> bool {
    use std::process::{Command, Stdio};
    if std::env::var_os(CHILD).is_some() {
        return true;
    }
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture"])
        .env(CHILD, "1")
        .stderr(Stdio::piped())
        .spawn()
        .expect("the test binary runs again");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("the child hung instead of aborting");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "the child survived:\n{stderr}");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(output.status.signal(), Some(6), "not aborted:\n{stderr}");
    }
    assert!(
        stderr.contains(message),
        "no message on standard error:\n{stderr}"
    );
    assert!(!stderr.contains("UNREACHABLE"), "{stderr}");
    false
}
