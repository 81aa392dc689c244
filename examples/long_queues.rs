//! Long queues on one monitor, metalock against parking_lot in the same run:
//!
//! - `notify_all` herd: W threads wait on one monitor; each round one
//!   `notify_all` wakes them all, and every one returns from its wait and
//!   waits again for the next round. Printed: the time from the notify to
//!   the last return, the median step between two returns next to each
//!   other in time (it tells a herd that runs steadily from one whose steps
//!   are short but stalled for long), and how long the `notify_all` call
//!   itself held the monitor (`Synchronized` + `wait_while` against
//!   `parking_lot::Mutex` + `Condvar`);
//! - `notify_one` herd: the same, but each round is W `notify_one` calls
//!   under one hold of the monitor (a semaphore releasing W permits); and
//!   again with a contender queued behind the notified waiters (it blocks
//!   on the monitor just before the calls), which each call queues its
//!   waiter ahead of until the contender has been passed over too long;
//! - deep queue: T threads each lock one monitor R times and hold it for
//!   20 µs, so that nearly all of them sleep in its queue at once;
//! - many monitors: T threads each wait on a monitor of their own, and one
//!   thread notifies them one by one, the last to wait first. Printed: the
//!   mean time of a `notify_one` call, which finds its waiter among the
//!   others that share its stripe of the wait table.
//!
//! The herds and the deep queue once walked the queue for every thread that
//! joined it, under the meta-lock (time quadratic in the queue's length);
//! many monitors walked past more waiters of other monitors while the table
//! had fewer stripes. Medians of 5 rounds (many monitors: of 3); run `cargo
//! run --release --example long_queues` (about 30 s), or pass the number of
//! threads: `-- 3000`.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Barrier, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use metalock::{MultiUseWord, Synchronized};

// Only the CPU's name is needed here.
#[allow(dead_code)]
#[path = "../benches/common/measure.rs"]
mod measure;

const ROUNDS: usize = 5;

/// One lock under test: its monitor and what the herd needs of it.
trait Herd: Send + Sync + 'static {
    const NAME: &'static str;
    fn new() -> Self;
    /// Waits until the round is at least `round`.
    fn wait_for_round(&self, round: u64, waiting: &AtomicUsize);
    /// Locks and unlocks: returns once a waiter that counted itself under
    /// the monitor has released it in its wait.
    fn lock_and_unlock(&self);
    /// Starts `round` with a `notify_all`, or if not `all` with `ones`
    /// calls of `notify_one`, running `before` under the monitor first;
    /// returns how long the notify calls took.
    fn start_round(&self, round: u64, all: bool, ones: usize, before: &dyn Fn()) -> Duration;
}

impl Herd for Synchronized<u64> {
    const NAME: &'static str = "metalock Synchronized";
    fn new() -> Self {
        Synchronized::new(0)
    }
    fn lock_and_unlock(&self) {
        drop(self.lock());
    }
    fn wait_for_round(&self, round: u64, waiting: &AtomicUsize) {
        let mut guard = self.lock();
        waiting.fetch_add(1, SeqCst);
        guard.wait_while(|current| *current < round);
    }
    fn start_round(&self, round: u64, all: bool, ones: usize, before: &dyn Fn()) -> Duration {
        let mut guard = self.lock();
        *guard = round;
        before();
        let start = Instant::now();
        if all {
            guard.notify_all();
        } else {
            for _ in 0..ones {
                guard.notify_one();
            }
        }
        start.elapsed()
    }
}

impl Herd for (parking_lot::Mutex<u64>, parking_lot::Condvar) {
    const NAME: &'static str = "parking_lot Mutex + Condvar";
    fn new() -> Self {
        (parking_lot::Mutex::new(0), parking_lot::Condvar::new())
    }
    fn lock_and_unlock(&self) {
        drop(self.0.lock());
    }
    fn wait_for_round(&self, round: u64, waiting: &AtomicUsize) {
        let mut guard = self.0.lock();
        waiting.fetch_add(1, SeqCst);
        while *guard < round {
            self.1.wait(&mut guard);
        }
    }
    fn start_round(&self, round: u64, all: bool, ones: usize, before: &dyn Fn()) -> Duration {
        let mut guard = self.0.lock();
        *guard = round;
        before();
        let start = Instant::now();
        if all {
            self.1.notify_all();
        } else {
            for _ in 0..ones {
                self.1.notify_one();
            }
        }
        start.elapsed()
    }
}

/// Medians over the herd's rounds: (notify to last return, notify calls,
/// step between two returns next to each other in time). Each round is one
/// `notify_all`, or if not `all` one `notify_one` per waiter; with
/// `contender`, a thread blocks on the monitor before the notify calls.
fn herd<H: Herd>(waiters: usize, all: bool, contender: bool) -> (Duration, Duration, Duration) {
    let lock = Arc::new(H::new());
    let waiting = Arc::new(AtomicUsize::new(0));
    let returned = Arc::new(AtomicUsize::new(0));
    let (all_back, rx) = mpsc::channel();
    let threads: Vec<_> = (0..waiters)
        .map(|_| {
            let (lock, waiting, returned) = (lock.clone(), waiting.clone(), returned.clone());
            let all_back = all_back.clone();
            thread::spawn(move || {
                // Each thread keeps its own stamps: a shared log would be
                // one more lock in the herd.
                let mut returns = Vec::with_capacity(ROUNDS);
                for round in 1..=ROUNDS {
                    lock.wait_for_round(round as u64, &waiting);
                    returns.push(Instant::now());
                    if returned.fetch_add(1, SeqCst) + 1 == waiters * round {
                        all_back.send(()).unwrap();
                    }
                }
                returns
            })
        })
        .collect();
    let (mut total, mut notify) = (Vec::new(), Vec::new());
    for round in 1..=ROUNDS {
        // Each waiter counts itself under the monitor before it waits, so
        // once all have, the notify below finds them all waiting.
        while waiting.load(SeqCst) < waiters * round {
            thread::sleep(Duration::from_millis(1));
        }
        let queued = std::cell::Cell::new(None);
        let before = || {
            if contender {
                let lock = lock.clone();
                queued.set(Some(thread::spawn(move || lock.lock_and_unlock())));
                // Long enough for it to spin, give up and block.
                thread::sleep(Duration::from_millis(5));
            }
        };
        let start = Instant::now();
        notify.push(lock.start_round(round as u64, all, waiters, &before));
        rx.recv().unwrap();
        total.push(start.elapsed());
        if let Some(queued) = queued.take() {
            queued.join().unwrap();
        }
    }
    let mut rounds: Vec<Vec<Instant>> = (0..ROUNDS).map(|_| Vec::with_capacity(waiters)).collect();
    for thread in threads {
        for (round, at) in rounds.iter_mut().zip(thread.join().unwrap()) {
            round.push(at);
        }
    }
    let steps = rounds
        .iter_mut()
        .flat_map(|round| {
            round.sort();
            round
                .windows(2)
                .map(|pair| pair[1] - pair[0])
                .collect::<Vec<_>>()
        })
        .collect();
    (median(total), median(notify), median(steps))
}

/// Time for `threads` threads to run `locked` `rounds` times each, from
/// when the first of them started; `locked` calls the work it is given
/// (20 µs) with the monitor held.
fn deep_queue(threads: usize, rounds: usize, locked: impl Fn(&dyn Fn()) + Sync) -> Duration {
    let hold = || {
        let entered = Instant::now();
        while entered.elapsed() < Duration::from_micros(20) {}
    };
    let start = Barrier::new(threads);
    let spans: Vec<(Instant, Instant)> = thread::scope(|s| {
        let threads: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    start.wait();
                    let began = Instant::now();
                    for _ in 0..rounds {
                        locked(&hold);
                    }
                    (began, Instant::now())
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|thread| thread.join().unwrap())
            .collect()
    });
    // From the first thread past the barrier to the last one done: a clock
    // read by a coordinating thread would start when the scheduler got to
    // it among all the threads the barrier released, often tens of
    // milliseconds late.
    let first = spans.iter().map(|span| span.0).min().unwrap();
    let last = spans.iter().map(|span| span.1).max().unwrap();
    last - first
}

/// Mean time of a `notify_one` call when `threads` threads each wait on a
/// monitor of their own, notified in the reverse of the order they began
/// to wait (the last-come waiter of a stripe is the last its walk finds).
/// The waiters start one at a time, each once the one before waits.
fn many_monitors<H: Herd>(threads: usize) -> Duration {
    let locks: Arc<Vec<H>> = Arc::new((0..threads).map(|_| H::new()).collect());
    let waiting = Arc::new(AtomicUsize::new(0));
    let waiters: Vec<_> = (0..threads)
        .map(|i| {
            let waiter = thread::spawn({
                let (locks, waiting) = (locks.clone(), waiting.clone());
                move || locks[i].wait_for_round(1, &waiting)
            });
            // Waiter i waits (it counts itself under its monitor, which
            // its wait then releases) before waiter i + 1 starts.
            while waiting.load(SeqCst) <= i {
                thread::yield_now();
            }
            locks[i].lock_and_unlock();
            waiter
        })
        .collect();
    let notify: Duration = locks
        .iter()
        .rev()
        .map(|lock| lock.start_round(1, false, 1, &|| ()))
        .sum();
    for waiter in waiters {
        waiter.join().unwrap();
    }
    notify / threads as u32
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let threads: usize = std::env::args()
        .nth(1)
        .map_or(1000, |n| n.parse().expect("a number of threads"));
    println!(
        "{threads} threads on {}, {} CPUs",
        measure::cpu_model(),
        thread::available_parallelism().map_or(0, usize::from)
    );
    type ParkingLot = (parking_lot::Mutex<u64>, parking_lot::Condvar);
    for (all, contender, herd_name, call) in [
        (true, false, "notify_all herd", "notify_all call"),
        (false, false, "notify_one herd", "notify_one calls"),
        (
            false,
            true,
            "notify_one herd, a contender queued",
            "notify_one calls",
        ),
    ] {
        let (ml, ml_notify, ml_step) = herd::<Synchronized<u64>>(threads, all, contender);
        let (pl, pl_notify, pl_step) = herd::<ParkingLot>(threads, all, contender);
        println!(
            "{herd_name}: last return {:.2} ms ({}) / {:.2} ms ({}) = {:.2}; median step {:.1} / {:.1} µs; {call} {:.3} / {:.3} ms",
            ms(ml),
            <Synchronized<u64> as Herd>::NAME,
            ms(pl),
            <ParkingLot as Herd>::NAME,
            ml.as_secs_f64() / pl.as_secs_f64(),
            ml_step.as_secs_f64() * 1e6,
            pl_step.as_secs_f64() * 1e6,
            ms(ml_notify),
            ms(pl_notify)
        );
    }
    let (mut ml, mut pl) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        ml.push(many_monitors::<Synchronized<u64>>(threads));
        pl.push(many_monitors::<ParkingLot>(threads));
    }
    let (ml, pl) = (median(ml), median(pl));
    println!(
        "many monitors, one waiter each: notify_one {:.2} µs (metalock) / {:.2} µs (parking_lot) = {:.2}",
        ml.as_secs_f64() * 1e6,
        pl.as_secs_f64() * 1e6,
        ml.as_secs_f64() / pl.as_secs_f64()
    );
    let word = MultiUseWord::new();
    let mutex = parking_lot::Mutex::new(());
    let (mut ml, mut pl) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        ml.push(deep_queue(threads, 10, |work| {
            let _guard = word.lock();
            work();
        }));
        pl.push(deep_queue(threads, 10, |work| {
            let _guard = mutex.lock();
            work();
        }));
    }
    let (ml, pl) = (median(ml), median(pl));
    println!(
        "deep queue, 10 x 20 us each: {:.1} ms (metalock word) / {:.1} ms (parking_lot Mutex) = {:.2}; at least {:.1} ms",
        ms(ml),
        ms(pl),
        ml.as_secs_f64() / pl.as_secs_f64(),
        threads as f64 * 10.0 * 0.02
    );
}
