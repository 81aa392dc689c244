//! The deadlock search on made-up snapshots.

use std::time::Duration;

use super::*;

/// `n` distinct thread ids.
fn ids(n: usize) -> Vec<ThreadId> {
    (0..n)
        .map(|_| {
            let thread = std::thread::spawn(|| ());
            let id = thread.thread().id();
            thread.join().unwrap();
            id
        })
        .collect()
}

/// A snapshot whose thread `i` enters a monitor owned by thread
/// `owners[i]` (untimed), or blocks on nothing.
fn snapshot(owners: &[Option<usize>]) -> Snapshot {
    let ids = ids(owners.len());
    let threads = owners
        .iter()
        .enumerate()
        .map(|(i, owner)| ThreadDump {
            id: ids[i],
            name: None,
            held_at_exit: None,
            holds: Vec::new(),
            blocked: owner.map(|owner| BlockedOn {
                monitor: 0x1000 + owner,
                kind: BlockKind::Entering,
                timed: false,
                for_: Duration::ZERO,
                owner: Some(ids[owner]),
                key: None,
                episode: 0,
                owner_ee: None,
            }),
            ee: 0,
        })
        .collect();
    Snapshot { threads }
}

#[test]
fn cycles_start_at_their_lowest_thread_each_once() {
    // 0 -> 3 -> 1 -> 0 and 4 -> 5 -> 4 are cycles; 2 and 6 lead into
    // the first one; 7 blocks on nothing; 8 enters its own monitor.
    let owners = [
        Some(3),
        Some(0),
        Some(3),
        Some(1),
        Some(5),
        Some(4),
        Some(2),
        None,
        Some(8),
    ];
    assert_eq!(snapshot(&owners).cycles(), vec![vec![0, 3, 1], vec![4, 5]]);
}

#[test]
fn a_long_chain_is_walked_once() {
    // Thread i enters the monitor of i + 1, the last that of the first:
    // one cycle through 5,000 threads, which each walk used to follow
    // in full, looking each owner up among all threads at every step.
    let n = 5_000;
    let owners: Vec<_> = (0..n).map(|i| Some((i + 1) % n)).collect();
    let cycles = snapshot(&owners).cycles();
    assert_eq!(cycles.len(), 1);
    assert_eq!(cycles[0], (0..n).collect::<Vec<_>>());
}

/// Thread `i` of `dump` has exited holding the monitors `held` (as `snapshot`
/// numbers them: `0x1000 + owner`).
fn exit(dump: &mut Snapshot, i: usize, held: &[usize]) {
    dump.threads[i].held_at_exit = Some(held.iter().map(|&owner| 0x1000 + owner).collect());
}

#[test]
fn threads_behind_an_exited_owner_are_paired_with_it() {
    // 0 and 2 enter monitors of 1, which has exited holding them; 3 enters
    // one of 4, which runs; 5 enters one of 1 with a deadline; 6 waits on
    // 1's; 7 enters one of 8, which has exited but locked it after (in a
    // late thread-local destructor); 9, exited, blocks entering one of 10
    // (in such a destructor), which enters one 9 held as it exited: a
    // cycle, not a pair.
    let mut dump = snapshot(&[
        Some(1),
        None,
        Some(1),
        Some(4),
        None,
        Some(1),
        Some(1),
        Some(8),
        None,
        Some(10),
        Some(9),
    ]);
    exit(&mut dump, 1, &[1]);
    exit(&mut dump, 8, &[]);
    exit(&mut dump, 9, &[9]);
    dump.threads[5].blocked.as_mut().unwrap().timed = true;
    dump.threads[6].blocked.as_mut().unwrap().kind = BlockKind::Waiting;
    assert_eq!(dump.behind_exited_owners(), vec![vec![0, 1], vec![2, 1]]);
    assert_eq!(dump.cycles(), vec![vec![9, 10]]);
}
