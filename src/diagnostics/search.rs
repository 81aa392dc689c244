//! The deadlock search over a [`Snapshot`]: cycles of threads entering
//! monitors held by each other, and threads entering a monitor that a
//! thread which has exited left held.

use std::collections::HashMap;
use std::vec::Vec;

use super::{BlockKind, Snapshot};

impl Snapshot {
    /// The cycles of entering threads in this snapshot, each starting at the
    /// thread with the lowest index (so each cycle once), in the order of
    /// those indices. Each thread waits for at most one other, so one walk
    /// from each thread not yet seen finds every cycle in linear time (a
    /// dump of thousands of threads must not take a cubic search).
    pub(super) fn cycles(&self) -> Vec<Vec<usize>> {
        let next = self.owners_entered();
        // The walk that first reached each thread, or none yet.
        let mut reached_by: Vec<Option<usize>> = vec![None; self.threads.len()];
        let mut cycles = Vec::new();
        for start in 0..self.threads.len() {
            let mut at = start;
            while reached_by[at].is_none() {
                reached_by[at] = Some(start);
                match next[at] {
                    Some(n) => at = n,
                    None => break,
                }
            }
            // Back at a thread of this walk: the walk closed a cycle there.
            if next[at].is_some() && reached_by[at] == Some(start) {
                let mut cycle = vec![at];
                let mut n = next[at].unwrap_or(at);
                while n != at {
                    cycle.push(n);
                    n = next[n].unwrap_or(at);
                }
                let lowest = (0..cycle.len()).min_by_key(|&k| cycle[k]).unwrap_or(0);
                cycle.rotate_left(lowest);
                cycles.push(cycle);
            }
        }
        cycles.sort_unstable_by_key(|cycle| cycle[0]);
        cycles
    }

    /// Each thread blocked entering, with no deadline, a monitor that a
    /// thread which has exited owns and held as it exited, paired with that
    /// thread (`[blocked, exited]`), in the order of the blocked threads.
    /// The exited thread leaked the guards that hold it: nothing will
    /// release it. An exited thread that blocks entering (in a late
    /// thread-local destructor) is in a cycle, or waits for a thread that
    /// runs: not paired.
    pub(super) fn behind_exited_owners(&self) -> Vec<Vec<usize>> {
        let next = self.owners_entered();
        next.iter()
            .enumerate()
            .filter_map(|(i, &owner)| {
                let owner = owner?;
                let monitor = self.threads[i].blocked.as_ref()?.monitor;
                let held = self.threads[owner].held_at_exit.as_deref()?;
                (next[owner].is_none() && held.contains(&monitor)).then(|| vec![i, owner])
            })
            .collect()
    }

    /// For each thread, the index of the other thread that owns the monitor
    /// it is entering with no deadline (a timed enter goes on whatever the
    /// owner does), if the snapshot tells.
    fn owners_entered(&self) -> Vec<Option<usize>> {
        let mut index = HashMap::with_capacity(self.threads.len());
        for (i, thread) in self.threads.iter().enumerate() {
            index.entry(thread.id).or_insert(i);
        }
        self.threads
            .iter()
            .map(|thread| {
                let blocked = thread.blocked.as_ref()?;
                if blocked.kind != BlockKind::Entering || blocked.timed {
                    return None;
                }
                let owner = blocked.owner?;
                if owner == thread.id {
                    return None;
                }
                index.get(&owner).copied()
            })
            .collect()
    }
}
