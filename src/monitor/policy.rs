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
//! A waiter that finds no other in its stripe of the wait table keeps
//! yielding for `LONE_WAITER_YIELDS` more rounds. Where a sleeping thread
//! takes tens of microseconds to wake (a virtual machine whose idle vCPU
//! halts), two threads that wait for each other, a producer and a consumer,
//! park in turn once either does: each wakes the other late, and the other
//! has parked meanwhile. The longer spin outlasts the partner's work
//! between two notifies, so neither parks and no late wake-up is paid. On a
//! 2-vCPU Intel Xeon, against the short spin, a bounded buffer of one pair
//! moved 25, 17 and 1.5 times the items per second at capacities 1, 16 and
//! 256, at about a tenth of the CPU per item at the first two (a futex wait
//! and wake cost more than the yields) and 1.2 times at the last. Only a
//! lone waiter spins so long: with every waiter yielding so long, 3,000
//! waiters of one `notify_all` took the processors from the threads that
//! had to run (3 of 6 rounds slow, about 110,000 involuntary context
//! switches each), and a notify reaches the oldest waiter first anyway. A
//! wait that nobody ends soon pays the yields once per call, a few tens of
//! microseconds of CPU on such a machine; threads that each wait alone on a
//! monitor of their own all pay them, and a pair whose stripe holds another
//! monitor's waiter gets the short spin only.
//!
//! The budget does not adapt. Adapting it per thread from how often its
//! spins succeeded was tried and measured worse: two threads that wait for
//! each other each see their spins fail while the other parks, so a thread
//! that stopped spinning after failures made its partner's spins fail too,
//! and both stayed parked (a buffer of one slot fell from 1 to 3 million
//! items per second to 0.03 to 0.2 million, in most runs).

use crate::primitive::SpinWait;
use crate::sys::Instant;

/// The yields a waiter alone in its stripe adds to `SpinWait`'s budget:
/// about 25 µs on a virtual machine whose yield takes 0.4 µs, about what a
/// producer or a consumer of a small buffer works between two notifies.
#[cfg(not(metalock_model))]
const LONE_WAITER_YIELDS: u32 = 60;

/// The spin a waiter runs before it parks.
#[derive(Debug)]
pub(super) struct WaitSpin {
    spin: SpinWait,
    /// Yields left after `spin`'s budget.
    #[cfg(not(metalock_model))]
    yields: u32,
    /// Where the yields stop, if the wait has a deadline.
    #[cfg(not(metalock_model))]
    deadline: Option<Instant>,
}

impl WaitSpin {
    /// The spin of a wait until `deadline`, `alone` in its stripe: none once
    /// the deadline has passed, so that a wait with a zero timeout returns
    /// without yielding. Under the model checkers, none at all.
    #[inline]
    pub(super) fn new(deadline: Option<Instant>, alone: bool) -> Self {
        #[cfg(not(metalock_model))]
        {
            if deadline.is_some_and(|deadline| crate::sys::get().now() >= deadline) {
                return Self {
                    spin: SpinWait::with_limit(0),
                    yields: 0,
                    deadline,
                };
            }
            Self {
                spin: SpinWait::default(),
                yields: if alone { LONE_WAITER_YIELDS } else { 0 },
                deadline,
            }
        }
        #[cfg(metalock_model)]
        {
            let _ = (deadline, alone);
            Self {
                spin: SpinWait::default(),
            }
        }
    }

    /// Waits one round; `false` once the budget is spent.
    #[inline]
    pub(super) fn spin(&mut self) -> bool {
        if self.spin.spin() {
            return true;
        }
        #[cfg(not(metalock_model))]
        if self.yields > 0
            && self
                .deadline
                .is_none_or(|deadline| crate::sys::get().now() < deadline)
        {
            self.yields -= 1;
            crate::sys::get().yield_now();
            return true;
        }
        false
    }
}
