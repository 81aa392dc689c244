//! Waiting and notifying: a bounded buffer (producers and consumers) and
//! ping-pong (two threads taking turns), metalock's monitor (with its own
//! wait set, or with two conditions, also through lock_api's guards)
//! against a Mutex with Condvars; and the cost of a notify that finds
//! nobody waiting.
//!
//! Each comes in two forms: an amount of work timed for criterion
//! ([`buffer_transfer`], [`ping_pong`]) and a fixed-duration round for the
//! tables ([`timed_buffer`], [`timed_ping_pong`]), whose threads wind down
//! by a protocol that never leaves one waiting for good.

use std::collections::VecDeque;
use std::sync::PoisonError;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use metalock::{Condition, Synchronized};

use super::measure::{RoundStats, scale, timed_round, timed_threads};

/// Capacities of the bounded-buffer benchmarks: 1 (every item is a
/// hand-off, a put waits for a take), 16 (some slack), 256 (threads run long
/// stretches before the buffer fills or drains and they must wait).
pub const BUFFER_CAPACITIES: [usize; 3] = [1, 16, 256];

/// Producer/consumer pair counts of the bounded-buffer benchmarks.
pub const PAIR_COUNTS: [usize; 2] = [1, 4];

/// Least work per criterion run of the bounded buffer (items) and of
/// ping-pong (round trips), so that starting the threads stays negligible;
/// the time is scaled back to the work asked for.
pub const MIN_BUFFER_ITEMS: u64 = 2_000;
/// See [`MIN_BUFFER_ITEMS`].
pub const MIN_ROUND_TRIPS: u64 = 200;

/// A blocking bounded buffer of `u64`s.
pub trait BoundedBuffer: Sync + Sized {
    /// Column / benchmark name.
    const NAME: &'static str;
    /// An empty buffer holding at most `capacity` items.
    fn new(capacity: usize) -> Self;
    /// Appends `item`, waiting while the buffer is full.
    fn put(&self, item: u64);
    /// Removes the oldest item, waiting while the buffer is empty.
    fn take(&self) -> u64;
}

/// metalock: one monitor for both conditions, Java style (`wait` in a loop,
/// `notify_all`).
pub struct MetaBuffer {
    queue: Synchronized<VecDeque<u64>>,
    capacity: usize,
}

impl BoundedBuffer for MetaBuffer {
    const NAME: &'static str = "metalock_sync";
    fn new(capacity: usize) -> Self {
        Self {
            queue: Synchronized::new(VecDeque::with_capacity(capacity)),
            capacity,
        }
    }
    fn put(&self, item: u64) {
        let mut queue = self.queue.lock();
        queue.wait_while(|q| q.len() >= self.capacity);
        queue.push_back(item);
        queue.notify_all();
    }
    fn take(&self) -> u64 {
        let mut queue = self.queue.lock();
        queue.wait_while(|q| q.is_empty());
        let item = queue.pop_front().expect("non-empty");
        queue.notify_all();
        item
    }
}

/// metalock with two conditions, written as the Mutex + two Condvars
/// versions are: `not_full` and `not_empty`, `notify_one`.
pub struct MetaCondBuffer {
    queue: Synchronized<VecDeque<u64>>,
    not_full: Condition,
    not_empty: Condition,
    capacity: usize,
}

impl BoundedBuffer for MetaCondBuffer {
    const NAME: &'static str = "metalock_conditions";
    fn new(capacity: usize) -> Self {
        Self {
            queue: Synchronized::new(VecDeque::with_capacity(capacity)),
            not_full: Condition::new(),
            not_empty: Condition::new(),
            capacity,
        }
    }
    fn put(&self, item: u64) {
        let mut queue = self.queue.lock();
        self.not_full
            .wait_while(&mut queue, |q| q.len() >= self.capacity);
        queue.push_back(item);
        self.not_empty.notify_one();
    }
    fn take(&self) -> u64 {
        let mut queue = self.queue.lock();
        self.not_empty.wait_while(&mut queue, |q| q.is_empty());
        let item = queue.pop_front().expect("non-empty");
        self.not_full.notify_one();
        item
    }
}

/// A bounded buffer written as parking_lot's users write it: a lock_api
/// `Mutex` and two condition variables, `while` loops around `wait`,
/// `notify_one`. One body for each pair of types it is measured with.
macro_rules! condvar_buffer {
    ($(#[$attr:meta])* $buffer:ident, $name:literal, $mutex:ty, $condvar:ty) => {
        $(#[$attr])*
        pub struct $buffer {
            queue: $mutex,
            not_full: $condvar,
            not_empty: $condvar,
            capacity: usize,
        }

        $(#[$attr])*
        impl BoundedBuffer for $buffer {
            const NAME: &'static str = $name;
            fn new(capacity: usize) -> Self {
                Self {
                    queue: <$mutex>::new(VecDeque::with_capacity(capacity)),
                    not_full: <$condvar>::new(),
                    not_empty: <$condvar>::new(),
                    capacity,
                }
            }
            fn put(&self, item: u64) {
                let mut queue = self.queue.lock();
                while queue.len() >= self.capacity {
                    self.not_full.wait(&mut queue);
                }
                queue.push_back(item);
                self.not_empty.notify_one();
            }
            fn take(&self) -> u64 {
                let mut queue = self.queue.lock();
                while queue.is_empty() {
                    self.not_empty.wait(&mut queue);
                }
                let item = queue.pop_front().expect("non-empty");
                self.not_full.notify_one();
                item
            }
        }
    };
}

condvar_buffer!(
    /// metalock through lock_api: `lock_api::Mutex<RawMonitor, _>` and two
    /// conditions, the parking_lot version with its types swapped. (A
    /// shuttle build has no `RawMonitor`.)
    #[cfg(not(feature = "shuttle"))]
    LockApiBuffer,
    "metalock_lock_api",
    lock_api::Mutex<metalock::RawMonitor, VecDeque<u64>>,
    Condition
);

condvar_buffer!(
    /// parking_lot: a Mutex and two Condvars.
    PlBuffer,
    "parking_lot",
    parking_lot::Mutex<VecDeque<u64>>,
    parking_lot::Condvar
);

/// std: a Mutex and two Condvars.
pub struct StdBuffer {
    queue: std::sync::Mutex<VecDeque<u64>>,
    not_full: std::sync::Condvar,
    not_empty: std::sync::Condvar,
    capacity: usize,
}

impl BoundedBuffer for StdBuffer {
    const NAME: &'static str = "std";
    fn new(capacity: usize) -> Self {
        Self {
            queue: std::sync::Mutex::new(VecDeque::with_capacity(capacity)),
            not_full: std::sync::Condvar::new(),
            not_empty: std::sync::Condvar::new(),
            capacity,
        }
    }
    fn put(&self, item: u64) {
        let queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        let mut queue = self
            .not_full
            .wait_while(queue, |q| q.len() >= self.capacity)
            .unwrap_or_else(PoisonError::into_inner);
        queue.push_back(item);
        self.not_empty.notify_one();
    }
    fn take(&self) -> u64 {
        let queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        let mut queue = self
            .not_empty
            .wait_while(queue, |q| q.is_empty())
            .unwrap_or_else(PoisonError::into_inner);
        let item = queue.pop_front().expect("non-empty");
        self.not_full.notify_one();
        item
    }
}

/// The time to move `items` items in total through a fresh buffer of type
/// `B` and capacity `capacity` with `pairs` producer/consumer pairs (at
/// least [`MIN_BUFFER_ITEMS`] are moved, and the time scaled).
pub fn buffer_transfer<B: BoundedBuffer>(capacity: usize, pairs: usize, items: u64) -> Duration {
    let per_pair = items.max(MIN_BUFFER_ITEMS).div_ceil(pairs as u64);
    let buffer = B::new(capacity);
    let (elapsed, sums) = timed_threads(2 * pairs, |i| {
        if i < pairs {
            let first = i as u64 * per_pair;
            for item in first..first + per_pair {
                buffer.put(item);
            }
            0
        } else {
            (0..per_pair).map(|_| buffer.take()).sum::<u64>()
        }
    });
    let moved = per_pair * pairs as u64;
    let sum: u64 = sums.iter().sum();
    assert_eq!(sum, moved * (moved - 1) / 2, "{}: items lost", B::NAME);
    scale(elapsed, items, moved)
}

/// The item a producer puts last, once the round is over. Every consumer
/// leaves at the first one it takes: as many producers as consumers, so
/// every consumer gets one, and the last is the last item ever put, so
/// nothing is left behind.
const END_OF_ROUND: u64 = u64::MAX;

/// How many items went one way, and their wrapping sum.
#[derive(Default)]
struct Tally {
    count: AtomicU64,
    sum: AtomicU64,
}

impl Tally {
    fn add(&self, count: u64, sum: u64) {
        self.count.fetch_add(count, Ordering::Relaxed);
        self.sum.fetch_add(sum, Ordering::Relaxed);
    }

    fn into_inner(self) -> (u64, u64) {
        (self.count.into_inner(), self.sum.into_inner())
    }
}

/// A fixed-duration round of `pairs` producers and `pairs` consumers on a
/// fresh buffer of type `B` and capacity `capacity`. A consumer counts the
/// items it receives, a producer none. Checks that every item put was taken
/// exactly once (by count and by sum).
pub fn timed_buffer<B: BoundedBuffer>(
    capacity: usize,
    pairs: usize,
    length: Duration,
) -> RoundStats {
    let buffer = B::new(capacity);
    let (put, taken) = (Tally::default(), Tally::default());
    let stats = timed_round(2 * pairs, length, |i, stop| {
        let (mut count, mut sum) = (0_u64, 0_u64);
        if i < pairs {
            while !stop.load(Ordering::Relaxed) {
                buffer.put(count);
                sum = sum.wrapping_add(count);
                count += 1;
            }
            buffer.put(END_OF_ROUND);
            put.add(count, sum);
            0
        } else {
            loop {
                let item = buffer.take();
                if item == END_OF_ROUND {
                    break;
                }
                sum = sum.wrapping_add(item);
                count += 1;
            }
            taken.add(count, sum);
            count
        }
    });
    assert_eq!(
        put.into_inner(),
        taken.into_inner(),
        "{}: items lost or duplicated",
        B::NAME
    );
    stats
}

/// Two threads taking turns through a monitor or Mutex + Condvar.
pub trait PingPong: Sync + Sized {
    /// Column / benchmark name.
    const NAME: &'static str;
    /// Turn: side `false` first.
    fn new() -> Self;
    /// Waits until it is `side`'s turn, hands the turn to the other side and
    /// wakes it.
    fn play(&self, side: bool);
}

/// metalock: the turn flag in a `Synchronized`, `wait` + `notify_one`.
pub struct MetaPingPong(Synchronized<bool>);

impl PingPong for MetaPingPong {
    const NAME: &'static str = "metalock_sync";
    fn new() -> Self {
        Self(Synchronized::new(false))
    }
    fn play(&self, side: bool) {
        let mut turn = self.0.lock();
        turn.wait_while(|turn| *turn != side);
        *turn = !side;
        turn.notify_one();
    }
}

/// parking_lot: Mutex + Condvar.
pub struct PlPingPong(parking_lot::Mutex<bool>, parking_lot::Condvar);

impl PingPong for PlPingPong {
    const NAME: &'static str = "parking_lot";
    fn new() -> Self {
        Self(parking_lot::Mutex::new(false), parking_lot::Condvar::new())
    }
    fn play(&self, side: bool) {
        let mut turn = self.0.lock();
        while *turn != side {
            self.1.wait(&mut turn);
        }
        *turn = !side;
        self.1.notify_one();
    }
}

/// std: Mutex + Condvar.
pub struct StdPingPong(std::sync::Mutex<bool>, std::sync::Condvar);

impl PingPong for StdPingPong {
    const NAME: &'static str = "std";
    fn new() -> Self {
        Self(std::sync::Mutex::new(false), std::sync::Condvar::new())
    }
    fn play(&self, side: bool) {
        let turn = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut turn = self
            .1
            .wait_while(turn, |turn| *turn != side)
            .unwrap_or_else(PoisonError::into_inner);
        *turn = !side;
        self.1.notify_one();
    }
}

/// The time of `round_trips` round trips (each side moves once per round
/// trip) on a fresh `P` (at least [`MIN_ROUND_TRIPS`] are played, and the
/// time scaled).
pub fn ping_pong<P: PingPong>(round_trips: u64) -> Duration {
    let played = round_trips.max(MIN_ROUND_TRIPS);
    let game = P::new();
    let (elapsed, _) = timed_threads(2, |side| {
        for _ in 0..played {
            game.play(side == 1);
        }
    });
    scale(elapsed, round_trips, played)
}

/// A fixed-duration round of ping-pong on a fresh `P`. Side `false` counts
/// the round trips, side `true` none. Once the round is over, side `false`
/// announces its last move before playing it, and side `true` leaves after
/// answering it: the turn hand-off orders the announcement before the
/// answer, so neither side waits for a move that never comes.
pub fn timed_ping_pong<P: PingPong>(length: Duration) -> RoundStats {
    let game = P::new();
    let last_move = AtomicU64::new(u64::MAX);
    timed_round(2, length, |side, stop| {
        let mut moves = 0;
        if side == 0 {
            loop {
                let over = stop.load(Ordering::Relaxed);
                if over {
                    last_move.store(moves + 1, Ordering::Relaxed);
                }
                game.play(false);
                moves += 1;
                if over {
                    return moves;
                }
            }
        } else {
            while moves != last_move.load(Ordering::Relaxed) {
                game.play(true);
                moves += 1;
            }
            0
        }
    })
}

/// The time of `notifies` calls of `notify_one` on a condition nobody waits
/// on: metalock's `Condition`.
pub fn idle_notify_metalock(notifies: u64) -> Duration {
    let condition = Condition::new();
    let start = std::time::Instant::now();
    for _ in 0..notifies {
        std::hint::black_box(std::hint::black_box(&condition).notify_one());
    }
    start.elapsed()
}

/// As [`idle_notify_metalock`], with parking_lot's `Condvar`.
pub fn idle_notify_parking_lot(notifies: u64) -> Duration {
    let condvar = parking_lot::Condvar::new();
    let start = std::time::Instant::now();
    for _ in 0..notifies {
        std::hint::black_box(std::hint::black_box(&condvar).notify_one());
    }
    start.elapsed()
}

/// As [`idle_notify_metalock`], with std's `Condvar`.
pub fn idle_notify_std(notifies: u64) -> Duration {
    let condvar = std::sync::Condvar::new();
    let start = std::time::Instant::now();
    for _ in 0..notifies {
        std::hint::black_box(&condvar).notify_one();
    }
    start.elapsed()
}
