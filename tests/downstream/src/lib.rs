//! A user's code on metalock: a queue whose consumers wait for items. The
//! models in `tests/` check it, and two planted bugs, with loom.

use core::time::Duration;
use metalock::{Instant, Synchronized, SynchronizedGuard};

/// A queue of items; `take` waits until there is one.
#[derive(Debug, Default)]
pub struct Queue {
    items: Synchronized<Vec<u32>>,
}

impl Queue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an item and wakes every waiting consumer.
    pub fn put(&self, item: u32) {
        let mut items = self.items.lock();
        items.push(item);
        items.notify_all();
    }

    /// Waits for an item and takes it: re-checks after every wake-up.
    pub fn take(&self) -> u32 {
        let mut items = self.items.lock();
        while items.is_empty() {
            items.wait();
        }
        items.pop().expect("checked under the lock")
    }

    /// Waits up to `timeout` for an item and takes it, if one came.
    pub fn take_within(&self, timeout: Duration) -> Option<u32> {
        let Some(deadline) = Instant::now().checked_add(timeout) else {
            return Some(self.take());
        };
        let mut items = self.items.lock();
        while items.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || items.wait_for(left).timed_out() {
                break;
            }
        }
        items.pop()
    }

    /// The planted bug: waits once, with `if`, and trusts the wake-up. A
    /// consumer that arrives while the woken one waits for the monitor can
    /// take the item first.
    pub fn take_trusting_the_wake_up(&self) -> u32 {
        let mut items = self.items.lock();
        if items.is_empty() {
            items.wait();
        }
        items
            .pop()
            .expect("woken with no item: the wait needed a loop")
    }

    /// The planted bug: reads under one lock and writes under another, so a
    /// concurrent update in between is lost.
    pub fn bump_first_across_two_locks(&self) {
        let first = self.items.lock()[0];
        let mut items: SynchronizedGuard<'_, Vec<u32>> = self.items.lock();
        items[0] = first + 1;
    }

    /// The items, for checks once the threads are joined.
    pub fn snapshot(&self) -> Vec<u32> {
        self.items.lock().clone()
    }
}
