//! A user type that keeps its hash code in the payload of its
//! `MultiUseWord`, as a JVM keeps an object's identity hash in the object
//! header: the same word is its monitor and its hash, at no extra space.
//!
//! The object is hashed through the payload (`Hash` and `Eq` read it), and
//! the example checks that the payload, and so the hash and a `HashSet`
//! lookup, stay the same while the object is unlocked, locked (the payload is
//! then displaced into a lock record), locked reentrantly, waited on by
//! another thread (the word is NEUTRAL again: waiting threads live in a
//! table beside the word, not in it), and unlocked again. At each step it
//! prints the word's `Debug`, which shows the lock state and the payload.
//!
//! Run it with:
//!
//! ```text
//! cargo run --release --example hashed_object
//! ```

// The word is interior-mutable (locking rewrites it), which this lint flags
// in a hash key; but `Hash` and `Eq` read only the payload, which locking
// preserves and nothing here ever changes.
#![expect(
    clippy::mutable_key_type,
    reason = "the key's hash is its payload, which locking never changes"
)]

use std::collections::HashSet;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};

use metalock::{Monitor, MultiUseWord};

/// An object whose hash code lives in its monitor word.
struct HashedObject {
    word: MultiUseWord,
    id: usize,
}

impl HashedObject {
    fn new(id: usize) -> Self {
        assert!(
            id <= MultiUseWord::MAX_PAYLOAD,
            "ids must fit in the payload for hash codes to be unique"
        );
        Self {
            word: MultiUseWord::with_payload(hash_code_of(id)),
            id,
        }
    }

    /// Readable whatever the lock state, without entering the monitor.
    fn hash_code(&self) -> usize {
        self.word.payload()
    }
}

/// Scrambles `id` into a hash code of `PAYLOAD_BITS` bits (splitmix64's
/// finalizer, confined to the payload). Each step, an xor with a right shift
/// or a multiplication by an odd number modulo 2^PAYLOAD_BITS, is a
/// bijection on payloads, so distinct ids get distinct hash codes and `Eq`
/// may compare hash codes alone.
const fn hash_code_of(id: usize) -> usize {
    const MASK: usize = MultiUseWord::MAX_PAYLOAD;
    let mut x = id & MASK;
    x ^= x >> 30;
    // `as usize` keeps the low half on 32-bit targets: still odd.
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9_u64 as usize) & MASK;
    x ^= x >> 27;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB_u64 as usize) & MASK;
    x ^= x >> 31;
    x
}

impl Monitor for HashedObject {
    fn multi_use_word(&self) -> &MultiUseWord {
        &self.word
    }
}

impl Hash for HashedObject {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.hash_code());
    }
}

impl PartialEq for HashedObject {
    fn eq(&self, other: &Self) -> bool {
        self.hash_code() == other.hash_code()
    }
}

impl Eq for HashedObject {}

/// What every step must preserve.
struct Expected {
    payload: usize,
    std_hash: u64,
}

/// Prints the word at one step and checks that its state is `state` and that
/// the payload, the std hash and a set lookup are unchanged.
fn check(
    step: &str,
    object: &HashedObject,
    set: &HashSet<HashedObject>,
    state: &str,
    expected: &Expected,
) {
    let debug = format!("{:?}", object.word);
    println!("  {step:<44} {debug}");
    assert!(
        debug.contains(&format!("\"{state}\"")),
        "{step}: expected state {state}, got {debug}"
    );
    assert_eq!(
        object.hash_code(),
        expected.payload,
        "{step}: payload changed"
    );
    assert_eq!(
        set.hasher().hash_one(object),
        expected.std_hash,
        "{step}: std hash changed"
    );
    assert!(set.contains(object), "{step}: HashSet lookup failed");
}

fn main() {
    let set: HashSet<HashedObject> = (0..8).map(HashedObject::new).collect();
    assert_eq!(set.len(), 8, "distinct ids have distinct hash codes");
    // Eq goes through the payload, so a fresh probe finds the stored object.
    let object = set
        .get(&HashedObject::new(3))
        .expect("object 3 was inserted");
    let expected = Expected {
        payload: object.hash_code(),
        std_hash: set.hasher().hash_one(object),
    };
    println!(
        "hashed object: id {}, hash code {} ({:#x}) kept in the {}-bit payload of its MultiUseWord",
        object.id,
        expected.payload,
        expected.payload,
        MultiUseWord::PAYLOAD_BITS
    );

    check("unlocked:", object, &set, "NEUTRAL", &expected);
    {
        let outer = object.lock();
        check(
            "locked (payload in a lock record):",
            object,
            &set,
            "LOCKED",
            &expected,
        );
        let inner = object.lock();
        assert_eq!(inner.depth(), 2);
        check("locked again, depth 2:", object, &set, "LOCKED", &expected);
        drop(inner);
        drop(outer);
    }
    check("unlocked again:", object, &set, "NEUTRAL", &expected);

    let waiting = AtomicBool::new(false);
    let notified = AtomicBool::new(false);
    std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            let mut guard = object.lock();
            // Relaxed, here and for `notified`: both are written and read
            // while holding the monitor, which orders them.
            waiting.store(true, Ordering::Relaxed);
            while !notified.load(Ordering::Relaxed) {
                guard.wait();
            }
        });

        while !waiting.load(Ordering::Relaxed) {
            std::thread::yield_now();
        }
        // The waiter sets the flag while holding the monitor and releases it
        // only inside `wait`, so once we get the monitor the waiter is
        // waiting, and when we release it nobody holds it or queues for it:
        // the word is NEUTRAL, with the payload back, while a thread waits.
        drop(object.lock());
        assert!(!object.word.is_locked());
        check(
            "another thread in wait(), monitor free:",
            object,
            &set,
            "NEUTRAL",
            &expected,
        );

        let guard = object.lock();
        check(
            "locked, with the other thread waiting:",
            object,
            &set,
            "LOCKED",
            &expected,
        );
        notified.store(true, Ordering::Relaxed);
        assert_eq!(guard.notify_all(), 1, "exactly one thread was waiting");
        drop(guard);
        waiter.join().expect("the waiting thread panicked");
    });
    check(
        "waiter notified and gone:",
        object,
        &set,
        "NEUTRAL",
        &expected,
    );

    println!(
        "  payload {:#x} and std hash {:#x} (RandomState, new each run) were the same at every step",
        expected.payload, expected.std_hash
    );
}
