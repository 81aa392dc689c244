//! Feature `serde`: a `Synchronized` or `ReentrantSynchronized` serializes
//! its value under the monitor and deserializes into an unlocked one.

use metalock::{ReentrantSynchronized, Synchronized};

#[test]
fn round_trip_through_json() {
    let value = Synchronized::new(vec![1_u32, 2, 3]);
    let json = serde_json::to_string(&value).unwrap();
    assert_eq!(json, "[1,2,3]");
    assert!(!value.is_locked());
    let back: Synchronized<Vec<u32>> = serde_json::from_str(&json).unwrap();
    assert!(!back.is_locked());
    assert_eq!(*back.lock(), [1, 2, 3]);
}

#[test]
fn serializing_waits_for_the_holder() {
    let value = Synchronized::new(1_u32);
    let guard = value.lock();
    std::thread::scope(|s| {
        let reader = s.spawn(|| serde_json::to_string(&value).unwrap());
        std::thread::sleep(std::time::Duration::from_millis(10));
        let mut guard = guard;
        *guard = 2;
        drop(guard);
        assert_eq!(reader.join().unwrap(), "2");
    });
}

/// Serializing takes the monitor, which is not reentrant: the holder that
/// serializes its own value is refused with the rule's message rather than
/// waiting for itself.
#[test]
#[should_panic(expected = "not reentrant")]
fn serializing_by_the_holder_panics() {
    let value = Synchronized::new(1_u32);
    let _held = value.lock();
    let _ = serde_json::to_string(&value);
}

/// A `ReentrantSynchronized` round-trips too, and its holder serializes it
/// one level deeper.
#[test]
fn a_reentrant_value_round_trips_and_its_holder_serializes_it() {
    let value = ReentrantSynchronized::new(std::cell::Cell::new(4_u32));
    let held = value.lock();
    assert_eq!(serde_json::to_string(&value).unwrap(), "4");
    assert_eq!(held.depth(), 1);
    drop(held);
    let back: ReentrantSynchronized<std::cell::Cell<u32>> = serde_json::from_str("5").unwrap();
    assert!(!back.is_locked());
    assert_eq!(back.lock().get(), 5);
}
