//! A Java class with `synchronized` methods that call each other and wait,
//! ported with `ReentrantSynchronized`: no `unsafe`, no `Sync` to argue
//! (compare `bank_transfer`, whose accounts embed the word and say why
//! their `Cell` is `Sync`).
//!
//! ```java
//! class Shelf {
//!     private final ArrayList<Integer> items = new ArrayList<>();
//!     synchronized boolean full() { return items.size() == CAPACITY; }
//!     synchronized void put(int item) throws InterruptedException {
//!         while (full()) wait();          // full() enters again
//!         items.add(item);
//!         notifyAll();
//!     }
//!     synchronized int take() throws InterruptedException {
//!         while (items.isEmpty()) wait();
//!         int item = items.remove(0);
//!         notifyAll();
//!         return item;
//!     }
//! }
//! ```
//!
//! The waits are made one level deep, in `put` and `take`, as Java code
//! usually makes them; `ReentrantSynchronized` refuses a wait below an outer
//! level (where a method of the value may be running). Producers put
//! numbered items, consumers take them, and the sums must match.
//!
//! Run it with:
//!
//! ```text
//! cargo run --release --example java_object
//! ```

use std::cell::RefCell;
use std::collections::VecDeque;
use std::thread;

use metalock::ReentrantSynchronized;

const CAPACITY: usize = 4;
const PRODUCERS: u64 = 3;
const CONSUMERS: u64 = 3;
const ITEMS_EACH: u64 = 20_000;

/// The Java object: its fields, reached through the monitor.
struct Shelf {
    items: RefCell<VecDeque<u64>>,
}

/// Its `synchronized` methods, each entering the monitor itself.
trait ShelfMethods {
    fn full(&self) -> bool;
    fn put(&self, item: u64);
    fn take(&self) -> u64;
}

impl ShelfMethods for ReentrantSynchronized<Shelf> {
    fn full(&self) -> bool {
        self.lock().items.borrow().len() == CAPACITY
    }

    fn put(&self, item: u64) {
        let mut shelf = self.lock();
        // `full` enters the monitor again, one level deeper, and leaves it.
        while self.full() {
            shelf.wait();
        }
        shelf.items.borrow_mut().push_back(item);
        shelf.notify_all();
    }

    fn take(&self) -> u64 {
        let mut shelf = self.lock();
        shelf.wait_while(|shelf| shelf.items.borrow().is_empty());
        let item = shelf.items.borrow_mut().pop_front().expect("not empty");
        shelf.notify_all();
        item
    }
}

fn main() {
    let shelf = ReentrantSynchronized::new(Shelf {
        items: RefCell::new(VecDeque::new()),
    });
    let taken: u64 = thread::scope(|s| {
        for p in 0..PRODUCERS {
            let shelf = &shelf;
            s.spawn(move || {
                for i in 0..ITEMS_EACH {
                    shelf.put(p * ITEMS_EACH + i);
                }
            });
        }
        let consumers: Vec<_> = (0..CONSUMERS)
            .map(|_| {
                let shelf = &shelf;
                s.spawn(move || {
                    (0..PRODUCERS * ITEMS_EACH / CONSUMERS)
                        .map(|_| shelf.take())
                        .sum::<u64>()
                })
            })
            .collect();
        consumers.into_iter().map(|c| c.join().unwrap()).sum()
    });
    let n = PRODUCERS * ITEMS_EACH;
    assert_eq!(taken, n * (n - 1) / 2, "every item taken once");
    assert!(shelf.lock().items.borrow().is_empty());
    println!(
        "{n} items through a shelf of {CAPACITY} by {PRODUCERS} producers and {CONSUMERS} \
         consumers: sums match"
    );
}
