//! Loom models of the meta-lock: mutual exclusion and both hand-off cases.
#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use metalock::MultiUseWord;

struct Shared {
    word: MultiUseWord,
    counter: UnsafeCell<usize>,
}

// SAFETY: `counter` is only accessed under the meta-lock of `word`.
unsafe impl Sync for Shared {}

fn increment(shared: &Shared) {
    shared.word.__with_meta_lock(|| {
        // SAFETY: the meta-lock excludes the other threads; loom checks it.
        shared.counter.with_mut(|c| unsafe { *c += 1 });
    });
}

#[test]
fn two_threads_mutual_exclusion() {
    loom::model(|| {
        let shared = Arc::new(Shared {
            word: MultiUseWord::with_payload(5),
            counter: UnsafeCell::new(0),
        });
        let other = Arc::clone(&shared);
        let t = thread::spawn(move || increment(&other));
        increment(&shared);
        t.join().unwrap();
        shared.counter.with(|c| assert_eq!(unsafe { *c }, 2));
        assert_eq!(shared.word.payload(), 5);
    });
}
