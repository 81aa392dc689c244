//! Memory after locking a million distinct objects once each: the homes are
//! a fixed table and the overflow table reclaims what nobody uses, so
//! resident memory and the count of monitors in use return to a bound that
//! does not grow with the number of objects ever locked (issue 12). Alone in
//! its binary: no other test's monitors count.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use metalock::KeyedGuard;

/// Resident memory of the process, in bytes (Linux; `None` elsewhere).
fn resident() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[test]
fn a_million_objects_leave_a_bounded_table() {
    const OBJECTS: usize = 1_000_000;
    let objects: Vec<AtomicU64> = (0..OBJECTS).map(|_| AtomicU64::new(1)).collect();
    // Nonzero: the vector is written, so resident, before measuring.
    // Warm up: this thread's execution environment and records exist.
    for object in &objects[..1000] {
        drop(metalock::lock(object));
    }
    let before = resident();
    let monitors_before = metalock::keyed_monitors();
    for round in 0..3 {
        for object in &objects {
            let guard = metalock::lock(object);
            object.fetch_add(1, Relaxed);
            drop(guard);
        }
        let monitors = metalock::keyed_monitors();
        assert_eq!(
            monitors, 0,
            "round {round}: {monitors} monitors left in use"
        );
        if let (Some(before), Some(after)) = (before, resident()) {
            let grown = after.saturating_sub(before);
            println!(
                "round {round}: {monitors} monitors (was {monitors_before}), resident +{grown} bytes"
            );
            assert!(
                grown < 1 << 20,
                "round {round}: resident memory grew by {grown} bytes"
            );
        }
    }
    assert!(objects.iter().all(|object| object.load(Relaxed) == 4));
    // Held all at once (most of them in the overflow table, the homes being
    // fewer), then released: the entries go too.
    let guards: Vec<_> = objects[..100_000].iter().map(metalock::lock).collect();
    assert_eq!(metalock::keyed_monitors(), 100_000);
    drop(guards);
    assert_eq!(metalock::keyed_monitors(), 0);

    // A guard kept in a thread-local of a thread that exits: its destructor
    // releases the monitor, late in the thread's exit.
    static VALUE: u64 = 0;
    thread_local! {
        static KEPT: RefCell<Option<KeyedGuard<'static>>> = const { RefCell::new(None) };
    }
    let before = metalock::keyed_monitors();
    std::thread::spawn(|| KEPT.with(|kept| *kept.borrow_mut() = Some(metalock::lock(&VALUE))))
        .join()
        .unwrap();
    assert!(!metalock::is_locked(&VALUE));
    assert!(
        metalock::keyed_monitors() <= before,
        "the exited thread's entries are gone"
    );
}
