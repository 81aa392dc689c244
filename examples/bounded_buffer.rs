//! A bounded buffer shared by several producers and consumers, coordinated
//! with one monitor's `wait` and `notify_all`, the classic Java exercise.
//!
//! Every item goes through a `Synchronized<VecDeque<u64>>`: producers wait
//! while it is full, consumers while it is empty, and each change wakes the
//! other side. At the end the sum of the items consumed must equal the sum
//! of the items produced.
//!
//! Run it with:
//!
//! ```text
//! cargo run --release --example bounded_buffer
//! ```

use std::collections::VecDeque;
use std::time::Instant;

use metalock::Synchronized;

const PRODUCERS: u64 = 4;
const CONSUMERS: u64 = 4;
const CAPACITY: usize = 16;
const ITEMS_PER_PRODUCER: u64 = 250_000;

/// A FIFO queue of at most `capacity` items; `put` blocks while it is full
/// and `take` while it is empty.
struct BoundedBuffer<T> {
    items: Synchronized<VecDeque<T>>,
    capacity: usize,
}

impl<T> BoundedBuffer<T> {
    fn new(capacity: usize) -> Self {
        assert!(capacity > 0, "a buffer of capacity 0 would block forever");
        Self {
            items: Synchronized::new(VecDeque::with_capacity(capacity)),
            capacity,
        }
    }

    /// Appends `item`, waiting for room. Returns how many times it had to
    /// wait.
    fn put(&self, item: T) -> u64 {
        let mut items = self.items.lock();
        // The condition runs once, then once more after every wake-up, so
        // the wake-ups are the calls after the first.
        let mut checks = 0;
        items.wait_while(|items| {
            checks += 1;
            items.len() == self.capacity
        });
        items.push_back(item);
        // One monitor serves both conditions (not full, not empty), so a
        // notify_one could wake a producer when only a consumer can proceed
        // and the wake-up would be lost: wake everybody and let them
        // re-check.
        items.notify_all();
        checks - 1
    }

    /// Removes the oldest item, waiting for one. Returns it and how many
    /// times it had to wait.
    fn take(&self) -> (T, u64) {
        let mut items = self.items.lock();
        let mut checks = 0;
        items.wait_while(|items| {
            checks += 1;
            items.is_empty()
        });
        let item = items
            .pop_front()
            .expect("wait_while returned, so the buffer is not empty");
        // See `put`.
        items.notify_all();
        (item, checks - 1)
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
                    let (mut sum, mut waits) = (0_u64, 0_u64);
                    for i in 0..ITEMS_PER_PRODUCER {
                        // Distinct values per producer, so a duplicated or
                        // lost item shows in the checksum.
                        let item = p * ITEMS_PER_PRODUCER + i + 1;
                        sum += item;
                        waits += buffer.put(item);
                    }
                    (sum, waits)
                })
            })
            .collect();
        let consumers: Vec<_> = (0..CONSUMERS)
            .map(|_| {
                let buffer = &buffer;
                s.spawn(move || {
                    let (mut sum, mut waits) = (0_u64, 0_u64);
                    for _ in 0..share {
                        let (item, w) = buffer.take();
                        sum += item;
                        waits += w;
                    }
                    (sum, waits)
                })
            })
            .collect();
        let join = |handles: Vec<std::thread::ScopedJoinHandle<'_, (u64, u64)>>| {
            handles
                .into_iter()
                .map(|h| h.join().expect("a worker thread panicked"))
                .fold((0, 0), |(sum, waits), (s, w)| (sum + s, waits + w))
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

    println!("bounded buffer: one Synchronized<VecDeque<u64>>, wait_while + notify_all");
    println!(
        "  {PRODUCERS} producers x {ITEMS_PER_PRODUCER} items -> buffer of capacity {CAPACITY} -> {CONSUMERS} consumers x {share} items"
    );
    println!("  items moved:        {total_items}");
    println!("  checksum:           produced {produced} = consumed {consumed} (verified)");
    println!(
        "  waits:              producers on a full buffer {producer_waits}, consumers on an empty one {consumer_waits}"
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
