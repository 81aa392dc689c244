//! How long a waiter spins before it parks.
//!
//! A waiter that spins a little (spin hints, then yields: `SpinWait`'s
//! budget) before it parks is usually still running when the notify and the
//! invitation come, so the wake-up costs no futex wait and wake, and the
//! yields let a thread woken onto its core run meanwhile. Measured on a
//! bounded buffer with two conditions (2 vCPUs, three runs of 100,000
//! items): against parking_lot, whose condition variable parks at once,
//! 1.4 to 60 times the items per second and about no voluntary context
//! switch per item. A spin that does not see its wait end costs a few
//! microseconds of CPU, once per wait.
//!
//! The budget is the same for every wait. Adapting it per thread from how
//! often its spins succeeded was tried and measured worse: two threads that
//! wait for each other each see their spins fail while the other parks, so
//! a thread that stopped spinning after failures made its partner's spins
//! fail too, and both stayed parked (a buffer of one slot fell from 1 to 3
//! million items per second to 0.03 to 0.2 million, in most runs).

use crate::primitive::SpinWait;
use crate::sys::Instant;

/// The spin a waiter runs before it parks: none once its deadline has
/// passed, so that a wait with a zero timeout returns without yielding.
#[inline]
pub(super) fn wait_spin(deadline: Option<Instant>) -> SpinWait {
    #[cfg(not(metalock_model))]
    if deadline.is_some_and(|deadline| crate::sys::get().now() >= deadline) {
        return SpinWait::with_limit(0);
    }
    #[cfg(metalock_model)]
    let _ = deadline;
    SpinWait::default()
}
