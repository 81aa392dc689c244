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
//! yielding for `LONE_WAITER_YIELDS` more rounds, within
//! `LONE_WAITER_SPIN`. Every yield stops at the wait's deadline, and those
//! more rounds at that bound too (checked before every fourth where the
//! wait has no deadline, so up to three may start past it): where more
//! threads are runnable than processors, a yield runs another thread for a
//! while, and counted yields outlasted short timeouts and cost more CPU
//! than a park. Where a sleeping thread takes tens of microseconds to wake
//! (a virtual machine whose idle vCPU halts), two threads that wait for
//! each other, a producer and a consumer, park in turn once either does:
//! each wakes the other late, and the other has parked meanwhile. The
//! longer spin outlasts the partner's work between two notifies, so neither
//! parks and no late wake-up is paid. On a 2-vCPU Intel Xeon, against the
//! short spin, a bounded buffer of one pair moved 25, 17 and 1.5 times the
//! items per second at capacities 1, 16 and 256, at about a tenth of the
//! CPU per item at the first two (a futex wait and wake cost more than the
//! yields) and 1.2 times at the last. Only a lone waiter spins so long:
//! with every waiter yielding so long, 3,000 waiters of one `notify_all`
//! took the processors from the threads that had to run (3 of 6 rounds
//! slow, about 110,000 involuntary context switches each), and a notify
//! reaches the oldest waiter first anyway. A pair whose stripe holds
//! another monitor's waiter gets the short spin only, and threads that each
//! wait alone on a monitor of their own all spin long.
//!
//! The budget does not adapt to whether spins succeed. Adapting it per
//! thread that way was tried and measured worse: two threads that wait for
//! each other each see their spins fail while the other parks, so a thread
//! that stopped spinning after failures made its partner's spins fail too,
//! and both stayed parked (a buffer of one slot fell from 1 to 3 million
//! items per second to 0.03 to 0.2 million, in most runs).
//!
//! A lone waiter's spin learns too: a set whose waits park long, or whose
//! spins outlast a park that long, is marked, and its next lone waiter
//! parks without spinning (`park_marks`).

#[cfg(not(metalock_model))]
use super::park_marks::{Mark, Parked};
use crate::exec_env::ExecEnv;
use crate::primitive::SpinWait;
use crate::sys::Instant;
#[cfg(not(metalock_model))]
use core::time::Duration;

/// The yields a waiter alone in its stripe adds to `SpinWait`'s budget:
/// about 25 µs on a virtual machine whose yield takes 0.4 µs, about what a
/// producer or a consumer of a small buffer works between two notifies.
#[cfg(not(metalock_model))]
const LONE_WAITER_YIELDS: u32 = 60;

/// How long after its spin began (or, in a wait with no deadline, after
/// its first yield past the short budget) a lone waiter's last yield may
/// start: about what `LONE_WAITER_YIELDS` take where a yield finds no other
/// thread to run. Where one does, each yield runs it for a while, and 16
/// threads polling their own monitors with `wait_for(100 µs)` on 2 vCPUs
/// spent 2.5 to 3.3 times parking_lot's CPU per wait on counted yields
/// (1.0 to 1.1 times with the bound).
#[cfg(not(metalock_model))]
const LONE_WAITER_SPIN: Duration = Duration::from_micros(30);

/// How often a lone waiter whose wait has no deadline reads the clock for
/// `LONE_WAITER_SPIN`: before every fourth of its `LONE_WAITER_YIELDS`,
/// the first included (which starts the bound, so that a wait that ends
/// within the short budget reads no clock). A read before every yield
/// lengthened the spin enough to shorten the parks after it below
/// `LONG_PARK_UNPAIRED` more often: a consumer fed every 50 µs spent
/// 1.3-1.4 times parking_lot's CPU per item, against 1.1-1.2 times
/// without the bound.
#[cfg(not(metalock_model))]
const LONE_BOUND_EVERY: u32 = 4;

/// The spin a waiter runs before it parks, and what it learns from how its
/// wait ended.
#[derive(Debug)]
pub(super) struct WaitSpin {
    spin: SpinWait,
    /// Yields left after `spin`'s budget.
    #[cfg(not(metalock_model))]
    yields: u32,
    /// Where the yields stop, if the wait has a deadline.
    #[cfg(not(metalock_model))]
    deadline: Option<Instant>,
    /// Where a lone waiter's `LONE_WAITER_YIELDS` stop, if sooner:
    /// `LONE_WAITER_SPIN` after the spin began, checked with the deadline;
    /// without one, after the first of those yields, checked before every
    /// `LONE_BOUND_EVERY`th (and set by the first).
    #[cfg(not(metalock_model))]
    bound: Option<Instant>,
    /// The mark its wait learns into, if it learns.
    #[cfg(not(metalock_model))]
    mark: Option<Mark>,
    /// When the wait parked, if it learns.
    #[cfg(not(metalock_model))]
    parked: Option<Parked>,
    /// Under the model checkers, the yields left of an execution that asks
    /// waits to spin (`spin_waits`).
    #[cfg(all(metalock_model, feature = "__test-hooks"))]
    model_yields: u32,
}

#[cfg(all(metalock_model, feature = "__test-hooks"))]
std::thread_local! {
    /// Under the model checkers, the yields a wait spins before it parks
    /// (`spin_waits`). A thread-local of the test's OS thread, which runs
    /// every model thread, and not the checker's: a static the checker
    /// tracks would order every wait after the first, in models that never
    /// ask waits to spin too.
    static MODEL_WAIT_YIELDS: core::cell::Cell<u32> = const { core::cell::Cell::new(0) };
}

/// Under the model checkers, lets every wait spin `yields` rounds before it
/// parks while the returned guard lives, each round a yield to the other
/// model threads, where otherwise a wait parks at once (the wait policy
/// reads the clock, which a model must not): so that a model reaches a
/// waiter that sees its notify or its interrupt while it spins and never
/// parks (a wait whose deadline has passed spins too: no clock is read).
/// Called at the start of an execution, before any wait; the guard ends
/// with it.
#[cfg(all(metalock_model, feature = "__test-hooks"))]
pub fn spin_waits(yields: u32) -> SpinningWaits {
    MODEL_WAIT_YIELDS.with(|n| n.set(yields));
    SpinningWaits(())
}

/// While it lives, waits spin under the model checkers (`spin_waits`).
#[cfg(all(metalock_model, feature = "__test-hooks"))]
#[must_use = "waits spin only while the guard lives"]
#[derive(Debug)]
pub struct SpinningWaits(());

#[cfg(all(metalock_model, feature = "__test-hooks"))]
impl Drop for SpinningWaits {
    fn drop(&mut self) {
        MODEL_WAIT_YIELDS.with(|n| n.set(0));
    }
}

impl WaitSpin {
    /// The spin of a wait until `deadline`, which learns if `set` gives its
    /// wait set's key and whether the waiter is alone in its stripe: none
    /// once the deadline has passed, so that a wait with a zero timeout
    /// returns without yielding (and learns nothing). Under the model
    /// checkers, none unless the execution asks (`spin_waits`).
    ///
    /// # Safety
    /// `ee` is the calling thread's.
    #[inline]
    pub(super) unsafe fn new(
        ee: &ExecEnv,
        deadline: Option<Instant>,
        set: Option<(usize, bool)>,
    ) -> Self {
        #[cfg(not(metalock_model))]
        {
            // Read only for a deadline: a read at every wait (for the lone
            // waiter's bound) cost a buffer of capacity 16 and one pair a
            // fifth of its items per second.
            let now = deadline.map(|_| crate::sys::get().now());
            let past = deadline
                .zip(now)
                .is_some_and(|(deadline, now)| now >= deadline);
            let (key, alone) = match set {
                Some(set) if !past => set,
                _ => {
                    return Self {
                        spin: SpinWait::with_limit(if past { 0 } else { SpinWait::ROUNDS }),
                        yields: 0,
                        deadline,
                        bound: None,
                        mark: None,
                        parked: None,
                    };
                }
            };
            // SAFETY: the caller's contract; a wait still within its
            // deadline.
            let mark = unsafe { Mark::of(ee, key, alone) };
            let (spin, yields, bound) = match (alone, mark.is_set()) {
                (true, true) => (SpinWait::with_limit(0), 0, None),
                (true, false) => {
                    let bound = now.and_then(|now| now.checked_add(LONE_WAITER_SPIN));
                    (SpinWait::default(), LONE_WAITER_YIELDS, bound)
                }
                (false, true) => (SpinWait::with_limit(SpinWait::SPIN_ROUNDS), 0, None),
                (false, false) => (SpinWait::default(), 0, None),
            };
            Self {
                spin,
                yields,
                deadline,
                bound,
                mark: Some(mark),
                parked: None,
            }
        }
        #[cfg(metalock_model)]
        {
            let _ = (ee, deadline, set);
            Self {
                spin: SpinWait::default(),
                #[cfg(feature = "__test-hooks")]
                model_yields: MODEL_WAIT_YIELDS.with(core::cell::Cell::get),
            }
        }
    }

    /// Waits one round; `false` once the budget is spent.
    #[inline]
    pub(super) fn spin(&mut self) -> bool {
        #[cfg(not(metalock_model))]
        let passed = |at: Option<Instant>| at.is_some_and(|at| crate::sys::get().now() >= at);
        // Every yield stops at the deadline, `SpinWait`'s too: where other
        // threads are runnable, each yield runs one of them, and its seven
        // outlasted timeouts of 20 µs (16 and 64 threads polling on 2
        // vCPUs: 1.8 to 2.0 times parking_lot's CPU per wait, 0.4 to 0.6
        // times with the check).
        #[cfg(not(metalock_model))]
        if self.spin.yields_next() && passed(self.deadline) {
            return false;
        }
        #[cfg(all(metalock_model, feature = "__test-hooks"))]
        if self.model_yields > 0 {
            self.model_yields -= 1;
            crate::primitive::model_yield_now();
            return true;
        }
        if self.spin.spin() {
            return true;
        }
        #[cfg(not(metalock_model))]
        if self.yields > 0 {
            if let Some(deadline) = self.deadline {
                let end = self.bound.map_or(deadline, |bound| bound.min(deadline));
                if passed(Some(end)) {
                    return false;
                }
            } else if (LONE_WAITER_YIELDS - self.yields).is_multiple_of(LONE_BOUND_EVERY) {
                let now = crate::sys::get().now();
                match self.bound {
                    Some(bound) if now >= bound => return false,
                    Some(_) => {}
                    None => self.bound = now.checked_add(LONE_WAITER_SPIN),
                }
            }
            self.yields -= 1;
            crate::sys::get().yield_now();
            return true;
        }
        false
    }

    /// The spin ended with the waiter's signal: a lone waiter whose long
    /// yields had lasted as long as a park that marks its set marks it too
    /// (see `park_marks`). The time counts up to `LONE_WAITER_SPIN`
    /// only, so a pair's `LONG_PARK_PAIRED` is never reached: only an
    /// unpaired waiter learns here. Reads the clock only where those yields
    /// began.
    #[inline]
    pub(super) fn signalled(&self) {
        #[cfg(not(metalock_model))]
        if let (Some(mark), Some(bound)) = (self.mark, self.bound)
            && self.yields < LONE_WAITER_YIELDS
        {
            let left = bound.saturating_duration_since(crate::sys::get().now());
            if mark.is_long(LONE_WAITER_SPIN.saturating_sub(left)) {
                mark.learn(true);
            }
        }
    }

    /// The spin is over and the thread of `ee` parks: a wait that learns
    /// asks for a wake-up stamp.
    #[inline]
    pub(super) fn parking(&mut self, ee: &ExecEnv) {
        #[cfg(not(metalock_model))]
        if self.mark.is_some() {
            self.parked = Some(Parked::asking(ee));
        }
        #[cfg(metalock_model)]
        let _ = ee;
    }

    /// The parked thread of `ee` ended its wait (notified, invited, out of
    /// time or interrupted): marks its set if it stayed parked long, and
    /// clears the mark if not (`Mark::learn_from_park`).
    ///
    /// # Safety
    /// `ee` is the calling thread's.
    #[inline]
    pub(super) unsafe fn woke(&self, ee: &ExecEnv) {
        #[cfg(not(metalock_model))]
        if let (Some(mark), Some(parked)) = (self.mark, self.parked) {
            // SAFETY: the caller's contract.
            unsafe { mark.learn_from_park(ee, parked) };
        }
        #[cfg(metalock_model)]
        let _ = ee;
    }
}
