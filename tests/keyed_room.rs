//! A keyed enter whose address's overflow entry had no room makes some
//! with no lock held, and then only tries its home, holding the word it
//! reserved: the home may have been rekeyed for the same address and be
//! held meanwhile. A lock without a deadline then gives the word back and
//! waits there. The hand-off hook stops the enter at that point, while
//! another thread takes the home for the address and holds it until the
//! enter queues there. Alone in its binary: the
//! hook is process-wide, and the first overflow entry in a shard of a fresh
//! process has to make room.
#![cfg(not(loom))]

mod common;

use common::Watchdog;
use metalock::__test_hooks::{HandoffEvent, set_handoff_hook};
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::thread;
use std::time::{Duration, Instant};

/// Where the test is: the hook waits at `MADE_ROOM` for `HELD`.
static STEP: AtomicU32 = AtomicU32::new(ARMED);
const ARMED: u32 = 0;
const MADE_ROOM: u32 = 1;
const HELD: u32 = 2;

fn hook(event: HandoffEvent) {
    if event == HandoffEvent::KeyedRoomMade
        && STEP
            .compare_exchange(ARMED, MADE_ROOM, SeqCst, SeqCst)
            .is_ok()
    {
        while STEP.load(SeqCst) != HELD {
            thread::sleep(Duration::from_millis(1));
        }
    }
}

/// Two addresses that share a home.
#[repr(align(8))]
struct Granule([u8; 8]);

#[test]
fn a_lock_made_room_for_waits_for_its_home_held_meanwhile() {
    let _watchdog = Watchdog::arm(Duration::from_secs(60));
    let granule = Granule([0; 8]);
    let (a, b) = (&granule.0[0], &granule.0[1]);
    set_handoff_hook(Some(hook));
    let guard = metalock::lock(a);
    let gave_up = thread::scope(|s| {
        // Its home serves `a`: `b` needs an overflow entry, and the shard
        // has no room yet in this fresh process.
        let locker = s.spawn(|| drop(metalock::lock(b)));
        let patience = Instant::now() + Duration::from_secs(30);
        while STEP.load(SeqCst) != MADE_ROOM {
            assert!(Instant::now() < patience, "the enter never made room");
            thread::sleep(Duration::from_millis(1));
        }
        drop(guard);
        // The home is idle: this thread rekeys it for `b` and holds it
        // until the locker queues there (or gave up).
        let held = metalock::lock(b);
        STEP.store(HELD, SeqCst);
        while metalock::queue_length(b) == 0 && !locker.is_finished() {
            thread::sleep(Duration::from_millis(1));
        }
        drop(held);
        locker.join().is_err()
    });
    set_handoff_hook(None);
    assert!(
        !gave_up,
        "the lock gave up where its home was held for its address"
    );
    assert!(!metalock::is_locked(b) && !metalock::is_locked(a));
    assert_eq!(metalock::keyed_monitors(), 0);
}
