//! The contention policy's adaptive choice: whether an exit hands the
//! monitor to a notified waiter or invites it to re-contend (paper 001's
//! hand-over against renouncement, chosen at run time from statistics, as
//! paper 000 section 5.3 leaves the policy open).
//!
//! Renouncement keeps the monitor busy with the threads that are running
//! while the invited waiter wakes up, so a thread that goes on using the
//! monitor (a producer with room in its buffer) is not stopped behind a
//! thread that is not running yet; but the waiter may wake to find that a
//! thread that barged in took what it was notified for, and wait again (a
//! futile wake-up). A hand-over rules that out, and costs nothing when the
//! releasing thread is about to wait itself. So the releasing thread
//! decides from its own recent use of monitors: a thread that waits in
//! most of them (a producer at a buffer that is usually full) hands the
//! monitor to a notified waiter, as a thread does whenever it releases the
//! monitor to wait; one that seldom waits renounces. Measured on a bounded
//! buffer (2 vCPUs): a hand-over on every notify made a buffer of 256 slots
//! 100 times slower than parking_lot, renouncement on every notify left a
//! buffer of one slot at parity with parking_lot's futile wake-ups, and the
//! adaptive choice gets the better of both.
//!
//! The statistic is a per-thread score, in the thread's execution
//! environment, kept only on slow paths: a wait raises it, an exit through
//! the meta-lock lowers it, each by an eighth of the distance to its bound.

use crate::exec_env::ExecEnv;

/// The score's bound: a thread whose every recent exit was followed by a
/// wait approaches it.
const SCORE_MAX: u32 = 1 << 16;

/// Counts a wait by the calling thread, whose EE is `ee`.
///
/// # Safety
/// `ee` is the calling thread's EE.
#[inline]
pub(super) unsafe fn note_wait(ee: &ExecEnv) {
    // SAFETY: thread-owned field (caller's contract).
    ee.wait_score
        .with_mut(|score| unsafe { *score += (SCORE_MAX - *score) >> 3 });
}

/// Counts an exit through the meta-lock by the calling thread, whose EE is
/// `ee`, and returns whether it hands the monitor to a notified waiter.
///
/// # Safety
/// `ee` is the calling thread's EE.
#[inline]
pub(super) unsafe fn exit_hands_over(ee: &ExecEnv) -> bool {
    // SAFETY: thread-owned field (caller's contract).
    ee.wait_score.with_mut(|score| unsafe {
        let hands_over = *score > SCORE_MAX / 2;
        *score -= *score >> 3;
        hands_over
    })
}
