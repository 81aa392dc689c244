//! A bounded buffer shared by several producers and consumers, the classic
//! Java exercise, with one condition per kind of waiter.
//!
//! Every item goes through a `Synchronized<VecDeque<u64>>`: producers wait on
//! `not_full` while it is full, consumers on `not_empty` while it is empty,
//! and each change notifies one thread of the other side with `notify_one`.
//! A notified waiter competes for the monitor again with the threads that
//! are running, so with several waiters of a kind another thread may take
//! the slot or item first, and the waiter finds its condition false again:
//! the example counts such futile wake-ups (with one producer and one
//! consumer there are none). At the end the sum of the items consumed must
//! equal the sum of the items produced.
//!
//! Run it with:
//!
//! ```text
//! cargo run --release --example bounded_buffer
//! ```

use std::collections::VecDeque;
use std::time::Instant;

use metalock::{Condition, Synchronized};

const PRODUCERS: u64 = 4;
const CONSUMERS: u64 = 4;
const CAPACITY: usize = 16;
const ITEMS_PER_PRODUCER: u64 = 250_000;

/// A FIFO queue of at most `capacity` items; `put` blocks while it is full
/// and `take` while it is empty.
struct BoundedBuffer<T> {
    items: Synchronized<VecDeque<T>>,
    not_full: Condition,
    not_empty: Condition,
    capacity: usize,
}

/// How often a `put` or `take` waited, and how many of its wake-ups found
/// the condition still false (futile).
#[derive(Default, Clone, Copy)]
struct Waits {
    waits: u64,
    futile: u64,
}

impl Waits {
    /// From the number of times a `wait_while` condition ran: once, then
    /// once more after every wake-up.
    fn from_checks(checks: u64) -> Self {
        let wakeups = checks - 1;
        Self {
            waits: u64::from(wakeups > 0),
            futile: wakeups.saturating_sub(1),
        }
    }

    fn add(self, other: Self) -> Self {
        Self {
            waits: self.waits + other.waits,
            futile: self.futile + other.futile,
        }
    }
}

impl<T> BoundedBuffer<T> {
    fn new(capacity: usize) -> Self {
        assert!(capacity > 0, "a buffer of capacity 0 would block forever");
        Self {
            items: Synchronized::new(VecDeque::with_capacity(capacity)),
            not_full: Condition::new(),
            not_empty: Condition::new(),
            capacity,
        }
    }

    /// Appends `item`, waiting for room.
    fn put(&self, item: T) -> Waits {
        let mut items = self.items.lock();
        let mut checks = 0;
        self.not_full.wait_while(&mut items, |items| {
            checks += 1;
            items.len() == self.capacity
        });
        items.push_back(item);
        // Only a consumer can use the new item: wake one, if one waits.
        self.not_empty.notify_one();
        Waits::from_checks(checks)
    }

    /// Removes the oldest item, waiting for one.
    fn take(&self) -> (T, Waits) {
        let mut items = self.items.lock();
        let mut checks = 0;
        self.not_empty.wait_while(&mut items, |items| {
            checks += 1;
            items.is_empty()
        });
        let item = items
            .pop_front()
            .expect("wait_while returned, so the buffer is not empty");
        self.not_full.notify_one();
        (item, Waits::from_checks(checks))
    }
}

fn main() {
    let total_items = PRODUCERS * ITEMS_PER_PRODUCER;
    assert_eq!(
        total_items % CONSUMERS,
        0,
        "each consumer takes an equal share"
    );
    // Each consumer knows its share in advance, so no sentinel item is
    // needed to tell it to stop.
    let share = total_items / CONSUMERS;
    let buffer = BoundedBuffer::new(CAPACITY);
    let start = Instant::now();

    let (produced, consumed, producer_waits, consumer_waits) = std::thread::scope(|s| {
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|p| {
                let buffer = &buffer;
                s.spawn(move || {
                    let (mut sum, mut waits) = (0_u64, Waits::default());
                    for i in 0..ITEMS_PER_PRODUCER {
                        // Distinct values per producer, so a duplicated or
                        // lost item shows in the checksum.
                        let item = p * ITEMS_PER_PRODUCER + i + 1;
                        sum += item;
                        waits = waits.add(buffer.put(item));
                    }
                    (sum, waits)
                })
            })
            .collect();
        let consumers: Vec<_> = (0..CONSUMERS)
            .map(|_| {
                let buffer = &buffer;
                s.spawn(move || {
                    let (mut sum, mut waits) = (0_u64, Waits::default());
                    for _ in 0..share {
                        let (item, w) = buffer.take();
                        sum += item;
                        waits = waits.add(w);
                    }
                    (sum, waits)
                })
            })
            .collect();
        let join = |handles: Vec<std::thread::ScopedJoinHandle<'_, (u64, Waits)>>| {
            handles
                .into_iter()
                .map(|h| h.join().expect("a worker thread panicked"))
                .fold((0, Waits::default()), |(sum, waits), (s, w)| {
                    (sum + s, waits.add(w))
                })
        };
        let (produced, producer_waits) = join(producers);
        let (consumed, consumer_waits) = join(consumers);
        (produced, consumed, producer_waits, consumer_waits)
    });

    let elapsed = start.elapsed();
    // Read before the check below, which locks on the main thread and
    // would add its own batch of records.
    let records = metalock::lock_records_allocated();
    assert_eq!(
        produced, consumed,
        "checksum mismatch: items were lost or duplicated"
    );
    assert!(
        buffer.items.lock().is_empty(),
        "every item produced was consumed"
    );

    println!(
        "bounded buffer: one Synchronized<VecDeque<u64>>, conditions not_full and not_empty, notify_one"
    );
    println!(
        "  {PRODUCERS} producers x {ITEMS_PER_PRODUCER} items -> buffer of capacity {CAPACITY} -> {CONSUMERS} consumers x {share} items"
    );
    println!("  items moved:        {total_items}");
    println!("  checksum:           produced {produced} = consumed {consumed} (verified)");
    println!(
        "  waits:              producers on a full buffer {}, consumers on an empty one {}",
        producer_waits.waits, consumer_waits.waits
    );
    println!(
        "  futile wake-ups:    {} (a wake-up that found its condition still false)",
        producer_waits.futile + consumer_waits.futile
    );
    println!(
        "  elapsed:            {:.3} s ({:.0} items/s)",
        elapsed.as_secs_f64(),
        total_items as f64 / elapsed.as_secs_f64()
    );
    println!(
        "  lock records:       {records} allocated in all, for {} threads and {} puts and takes (records are recycled)",
        PRODUCERS + CONSUMERS,
        2 * total_items
    );
}
