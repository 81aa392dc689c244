//! Unit tests of the overflow table: room made outside the locks,
//! reservations, shrinking.

use super::*;

/// Enough keys of one shard to grow its map past `SHRINK_ABOVE`.
fn keys_of_one_shard(table: &Table) -> Vec<usize> {
    let first = table.shard(8) as *const SysMutex<Shard>;
    (1..)
        .map(|i| i * 8)
        .filter(|&key| core::ptr::eq(table.shard(key), first))
        .take(2 * SHRINK_ABOVE)
        .collect()
}

#[test]
fn entries_made_after_no_room_and_a_map_emptied_in_a_burst_freed() {
    let table: &'static Table = Box::leak(Box::new(Table::new()));
    let keys = keys_of_one_shard(table);
    let shard = table.shard(keys[0]);
    // No spares yet: every key needs room made, once.
    for &key in &keys {
        let mut reserved = Reserved::none();
        let mut tries = 1;
        while table.acquire(key, &mut reserved).is_err() {
            assert!(tries < 2, "room made, and still no room");
            tries += 1;
            table.make_room(key, &mut reserved);
        }
        assert_eq!(tries, 2);
        assert!(reserved.0.is_none(), "the reserved word made the entry");
    }
    assert!(shard.with(|shard| shard.entries.capacity()) > SHRINK_ABOVE);
    // Released in a burst: every leftover is dropped once the map is
    // empty, and the first one that asks to shrink frees it.
    let leftovers: Vec<_> = keys
        .iter()
        .map(|&key| table.release(key).unwrap_or_else(|misuse| misuse.raise()))
        .collect();
    assert!(
        leftovers.iter().all(Option::is_some),
        "the last reference reclaims the entry"
    );
    drop(leftovers);
    let (len, capacity, spares) = shard.with(|shard| {
        let Shard { entries, spares } = shard;
        (entries.len(), entries.capacity(), spares.len)
    });
    assert_eq!((len, capacity), (0, 0), "the emptied map was not freed");
    assert_eq!(spares, SPARES_PER_SHARD);

    // A word reserved and not used goes back to the spares, or is freed
    // if they are full.
    let spares = || shard.with(|shard| shard.spares.len);
    let mut reserved = Reserved::none();
    table.make_room(keys[0], &mut reserved);
    assert_eq!(
        spares(),
        SPARES_PER_SHARD - 1,
        "the reservation took a spare"
    );
    drop(reserved);
    assert_eq!(spares(), SPARES_PER_SHARD);
    let mut reserved = Reserved::none();
    reserved.0 = Some((fresh_word(), shard));
    drop(reserved);
    assert_eq!(spares(), SPARES_PER_SHARD);
}

/// The word `make_room` reserves is its caller's: another key of the
/// shard finds no room until its own `make_room`.
#[test]
fn a_reserved_word_is_not_taken_by_another_key() {
    let table: &'static Table = Box::leak(Box::new(Table::new()));
    let keys = keys_of_one_shard(table);
    let mut first = Reserved::none();
    let mut second = Reserved::none();
    table.make_room(keys[0], &mut first);
    assert!(table.acquire(keys[1], &mut second).is_err());
    assert!(matches!(table.acquire(keys[0], &mut first), Ok((_, true))));
    table.make_room(keys[1], &mut second);
    assert!(matches!(table.acquire(keys[1], &mut second), Ok((_, true))));
    for key in &keys[..2] {
        drop(table.release(*key).unwrap_or_else(|misuse| misuse.raise()));
    }
}

/// The last reference given back while the word is still in use is a bug
/// the release reports; the entry stays, so that its address goes on
/// finding the one word it has, never a second monitor.
#[test]
fn a_word_still_in_use_keeps_its_entry() {
    let table: &'static Table = Box::leak(Box::new(Table::new()));
    let key = keys_of_one_shard(table)[0];
    let mut reserved = Reserved::none();
    let word = loop {
        match table.acquire(key, &mut reserved) {
            Ok((word, made)) => {
                assert!(made);
                break word;
            }
            Err(NoRoom) => table.make_room(key, &mut reserved),
        }
    };
    // SAFETY: the table owns the word, and this test holds its one
    // reference. SeqCst: a test's stand-in for a thread inside the monitor.
    let in_use = |bits| unsafe { word.as_ref() }.word.store(bits, Ordering::SeqCst);
    in_use(crate::word::LOCKED);
    let Err(misuse) = table.release(key) else {
        panic!("released a word in use");
    };
    assert_eq!(misuse.bits, Some(crate::word::LOCKED));
    // Given back once more than taken: reported, not wrapped around.
    assert!(matches!(table.release(key), Err(Misuse { bits: None })));
    assert!(matches!(table.acquire(key, &mut reserved), Ok((again, false)) if again == word));
    in_use(NEUTRAL);
    let leftover = table.release(key).unwrap_or_else(|misuse| misuse.raise());
    assert!(leftover.is_some(), "the last reference reclaims the entry");
}

/// Threads grow and shrink one shard's map at once: each makes entries for
/// keys of its own and for keys all of them share, in bursts, and gives
/// them back. Every shared key has one entry while anyone holds it (all
/// holders see one word, made by one of them), and the map shrinks back to
/// a small bound once the last burst is given back.
#[test]
fn one_shard_grown_and_shrunk_by_threads_at_once() {
    use std::sync::{Barrier, Mutex};

    const THREADS: usize = 4;
    const ROUNDS: usize = 20;
    let table: &'static Table = Box::leak(Box::new(Table::new()));
    let first = table.shard(8) as *const SysMutex<Shard>;
    let mut keys = (1..)
        .map(|i| i * 8)
        .filter(|&key| core::ptr::eq(table.shard(key), first));
    let shared: Vec<usize> = keys.by_ref().take(SHRINK_ABOVE).collect();
    let own: Vec<Vec<usize>> = (0..THREADS)
        .map(|_| keys.by_ref().take(2 * SHRINK_ABOVE).collect())
        .collect();
    let barrier = Barrier::new(THREADS);
    let words_seen = Mutex::new(Vec::new());
    // Noted, not asserted, in the threads: a thread that panicked would
    // leave the others waiting at the barrier for good.
    let problems = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for own in &own {
            let (barrier, words_seen, shared) = (&barrier, &words_seen, &shared);
            let problem = |what: String| problems.lock().unwrap().push(what);
            scope.spawn(move || {
                let acquire = |key| {
                    let mut reserved = Reserved::none();
                    loop {
                        match table.acquire(key, &mut reserved) {
                            Ok(found) => return found,
                            Err(NoRoom) => table.make_room(key, &mut reserved),
                        }
                    }
                };
                for round in 0..ROUNDS {
                    // Own and shared keys interleaved, in an order that
                    // differs between rounds, so that threads make and find
                    // shared entries while others grow the map.
                    let keys = own.iter().zip(shared.iter().cycle().skip(round));
                    let mut made = 0;
                    let mut words = Vec::new();
                    for (&own, &shared) in keys.take(shared.len()) {
                        if !acquire(own).1 {
                            problem(format!(
                                "round {round}: key {own:#x} of one thread found made"
                            ));
                        }
                        let (word, new) = acquire(shared);
                        made += usize::from(new);
                        words.push((shared, word.as_ptr() as usize));
                    }
                    for &key in &own[shared.len()..] {
                        if !acquire(key).1 {
                            problem(format!(
                                "round {round}: key {key:#x} of one thread found made"
                            ));
                        }
                    }
                    words.sort_unstable();
                    words_seen.lock().unwrap().push((made, words));
                    if barrier.wait().is_leader() {
                        let mut seen = words_seen.lock().unwrap();
                        let total: usize = seen.iter().map(|(made, _)| made).sum();
                        if total != shared.len() {
                            problem(format!("round {round}: {total} shared entries made"));
                        }
                        let one = &seen[0].1;
                        if !seen.iter().all(|(_, words)| words == one) {
                            problem(format!("round {round}: one key, different words"));
                        }
                        seen.clear();
                    }
                    barrier.wait();
                    // Leftovers dropped with no lock held, as `crate::keyed` does.
                    for &key in shared.iter().chain(own) {
                        match table.release(key) {
                            Ok(leftover) => drop(leftover),
                            Err(misuse) => problem(format!("round {round}: {misuse:?}")),
                        }
                    }
                    // The next round makes the shared entries afresh.
                    barrier.wait();
                }
            });
        }
    });
    let problems = problems.into_inner().unwrap();
    assert!(problems.is_empty(), "{problems:#?}");
    let (len, capacity, spares) = table.shard(shared[0]).with(|shard| {
        let Shard { entries, spares } = shard;
        (entries.len(), entries.capacity(), spares.len)
    });
    assert_eq!(len, 0);
    // Each release that leaves the map mostly empty shrinks it, down to
    // `SHRINK_ABOVE`; the one that empties a larger map frees it.
    assert!(
        capacity <= SHRINK_ABOVE,
        "the emptied map kept {capacity} slots"
    );
    assert_eq!(spares, SPARES_PER_SHARD);
}
