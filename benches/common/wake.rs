//! How a waiting thread wakes: the latency from a notify or an interrupt to
//! the waiter's return ([`wake_latencies`]), and the CPU a waiter spends per
//! wake-up when its waits last tens of microseconds or more
//! ([`slow_feed`]).

use std::time::{Duration, Instant};

use metalock::Synchronized;

use super::measure::Usage;
use super::wait_notify::BoundedBuffer;

/// How often [`slow_feed`]'s producer puts an item, in the rows that
/// measure it: waits of tens of microseconds, of a few hundred and of
/// milliseconds, all longer than a lone waiter's spin before it parks
/// (README, "Contention policy").
pub const FEED_PERIODS: [Duration; 3] = [
    Duration::from_micros(50),
    Duration::from_micros(200),
    Duration::from_millis(2),
];

/// Below this period [`slow_feed`]'s producer spins on the clock instead
/// of sleeping: a sleep that short lasts about 100 µs on Linux (the timer's
/// slack and the wake-up).
const SLEEP_FLOOR: Duration = Duration::from_micros(100);

/// Capacity of [`slow_feed`]'s buffer: the producer never waits.
const FEED_CAPACITY: usize = 16;

/// A producer that puts `items` items into a fresh `B`, sleeping `period`
/// before each (spinning, below [`SLEEP_FLOOR`]), and a consumer that takes
/// them: the consumer's CPU time
/// (`getrusage` of its thread) per item. The consumer waits alone for each
/// item, as a background thread fed now and then does, so this is what
/// each of its waits costs beyond the park.
pub fn slow_feed<B: BoundedBuffer>(period: Duration, items: u64) -> Duration {
    let buffer = B::new(FEED_CAPACITY);
    std::thread::scope(|s| {
        s.spawn(|| {
            for item in 0..items {
                if period < SLEEP_FLOOR {
                    let until = Instant::now() + period;
                    while Instant::now() < until {
                        std::hint::spin_loop();
                    }
                } else {
                    std::thread::sleep(period);
                }
                buffer.put(item);
            }
        });
        let start = Usage::thread().cpu;
        let mut sum = 0_u64;
        for _ in 0..items {
            sum = sum.wrapping_add(buffer.take());
        }
        assert_eq!(
            sum,
            items * items.saturating_sub(1) / 2,
            "{}: items lost",
            B::NAME
        );
        (Usage::thread().cpu - start) / u32::try_from(items).expect("items fit in u32")
    })
}

/// How [`wake_latencies`] wakes its waiter.
#[derive(Clone, Copy, Debug)]
pub enum Wake {
    /// `notify_one` under the monitor, released at once.
    Notify,
    /// An interrupt (`InterruptHandle::interrupt`), no monitor held.
    Interrupt,
}

/// How long the measuring thread lets a waiter sleep before it wakes it, in
/// [`wake_latencies`]' parked case: well past the spin a waiter makes before
/// it parks (a few microseconds).
pub const PARKED_AFTER: Duration = Duration::from_micros(200);

/// `samples` latencies from waking a thread that waits in
/// `wait_interruptibly` on a `Synchronized` to its return from the wait,
/// the monitor held again: the cost of the wake-up path of `wake`. With
/// `parked`, the waiter is woken [`PARKED_AFTER`] after it started to wait,
/// asleep in the kernel; without, as soon as it is seen waiting, while it
/// still spins.
pub fn wake_latencies(wake: Wake, parked: bool, samples: usize) -> Vec<Duration> {
    // (the waiter waits, when it returned)
    let state = Synchronized::new((false, None::<Instant>));
    let (tx, rx) = std::sync::mpsc::channel();
    let mut latencies = Vec::with_capacity(samples);
    std::thread::scope(|s| {
        let state = &state;
        s.spawn(move || {
            tx.send(metalock::interrupt_handle())
                .expect("the measuring thread waits for the handle");
            for _ in 0..samples {
                let mut guard = state.lock();
                guard.0 = true;
                // Either way the wait ends: by the notify, or by the
                // interrupt (an `Err`).
                let _ = guard.wait_interruptibly();
                let returned = Instant::now();
                *guard = (false, Some(returned));
            }
        });
        let handle = rx.recv().expect("the waiter sends its handle");
        for _ in 0..samples {
            // Seen under the monitor, which the waiter releases only by
            // waiting: it waits.
            while !state.lock().0 {
                std::thread::yield_now();
            }
            if parked {
                std::thread::sleep(PARKED_AFTER);
            }
            let woken = match wake {
                Wake::Notify => {
                    let guard = state.lock();
                    let woken = Instant::now();
                    guard.notify_one();
                    woken
                }
                Wake::Interrupt => {
                    let woken = Instant::now();
                    handle.interrupt();
                    woken
                }
            };
            loop {
                if let Some(returned) = state.lock().1.take() {
                    latencies.push(returned.duration_since(woken));
                    break;
                }
                std::thread::yield_now();
            }
        }
    });
    latencies
}
