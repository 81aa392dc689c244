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
//! A lone waiter's spin adapts instead to how long its set's waits park. A
//! lone waiter that parked and stayed parked long, however its wait ended
//! (notified, out of time, interrupted), marks its wait set (the monitor's
//! own, or a condition); the next lone waiter of a marked set parks without
//! spinning, and one whose park is shorter clears the mark. A thread that
//! waits for work that comes every few tens of microseconds or more (a
//! background consumer, an idle worker) then parks at once, as
//! parking_lot's does, where it spent up to 13 times parking_lot's CPU per
//! wait on yields that could not end it.
//!
//! How long is long depends on whether the waiter may be half of a pair
//! that parks in turn. Such a pair measures, in each park, the partner's
//! late wake-up and its work before it notifies (a park counts until the
//! signal, see below); it must stay unmarked, or it would never spin
//! again. Each of a pair notifies the other (a producer and a consumer of a
//! bounded buffer, the two of a ping-pong), which a thread that waits for a
//! feed does not: a lone waiter whose notify reached a waiter since its
//! last lone wait began is marked by a park of `LONG_PARK_PAIRED` or more
//! (while wake-ups stay under about 0.8 ms, a parked pair's first park
//! clears the mark and the pair spins again, so a long pause, the first
//! item of a stream or a stall, costs one park). Where wake-ups are slower,
//! a pair parks in turn with or without the mark, since the long spin (tens
//! of microseconds) cannot outlast a partner's wake-up, and the mark saves
//! it the spin.
//!
//! Any other lone waiter is marked by a park of `LONG_PARK_UNPAIRED`, a
//! little under the long spin: an unmarked waiter marks its set once its
//! signal comes that long after its spin failed, and a marked one keeps the
//! mark while its signal comes that long after it parks, when the spin
//! would mostly have failed too. A marked waiter's next wait starts later
//! by its own wake-up, which the unmarked one's spin makes up for while the
//! spin lasts longer than a wake-up; where a wake-up takes longer (an idle
//! vCPU that halts), a set whose waits last between the spin and a wake-up
//! past the threshold flips now and then, one spin every few waits.
//!
//! A spin that its signal ends teaches the mark too, where its yields past
//! the short budget lasted as long as a park that marks (from the spin's
//! start in a timed wait, from the first of those yields in an untimed
//! one, the reads of the clock the bound makes anyway): the yields then
//! cost more CPU than a park would have. Without it a waiter fed a little
//! faster than the spin lasts spins through every wait and never learns:
//! on 2 vCPUs, a consumer fed every 20 / 35 µs spent 3.4-3.7 / 2.9-3.2
//! times parking_lot's CPU per item, and 1.8-1.9 / 0.9-1.1 times with it.
//! It costs a one-pair buffer of capacity 16, whose consumer's spin now and
//! then outlasts a stalled producer, about 8% of its items per second (still
//! 30 times parking_lot's).
//!
//! A waiter that shares its stripe learns too, into a mark of its own
//! beside the lone waiters' (`SHARED`), set by a park of
//! `LONG_PARK_SHARED` or more; a marked one spins its hints but skips the
//! yields. Its park asks for a wake-up stamp too, so the exit that wakes it
//! reads the clock (tens of nanoseconds, beside a futex wake of
//! microseconds). Take a herd that waited long, woken by a `notify_all` whose
//! thread then runs on outside the monitor (spinning, or working) on the
//! other core: those of the herd that had returned and waited again
//! yielded to each other while the chain's next waiter, woken onto the
//! busy core, ran only after a scheduler tick. On a 2-vCPU Intel Xeon,
//! with the mark, a round of 4, 16, 64 and 256 waiters took 0.12-0.13,
//! 0.16-0.18, 0.58-0.81 and 1.7-2.1 ms, against parking_lot's 0.09-0.11,
//! 0.14-0.16, 0.31-0.40 and 1.4-1.7 ms in the same runs; without it, 0.12
//! ms to a tick (3.9 ms) for 4 and a tick for more (3.7-3.9 ms). Waiters
//! whose parks are shorter keep their yields: the producers and consumers
//! of a bounded buffer with several pairs, whose yields let the threads
//! they woke run. Dropping the yields of every waiter that shares its
//! stripe cut the 4-pair buffers' items per second by a third to three
//! quarters.
//!
//! A park counts until the exit that signals the waiter wakes it, not until
//! the waiter runs: the waiter asks for a stamp as it parks, and that exit
//! writes the time into the waiter's EE before it unparks it. A waiter's own
//! wake-up, which takes 40-50 µs on a virtual machine whose idle vCPU halts,
//! then cannot keep its set marked: a marked waiter whose signal comes soon
//! clears the mark however late it runs. A park that ends with no stamp (out
//! of time, interrupted, or a signal that raced the request) counts until
//! the waiter runs, and its threshold grows by `WAKE_UP_ALLOWANCE`.
//!
//! Only a notify that reached a waiter, parked or still spinning, tells a
//! pair apart: counting only the wake-ups of parked threads was tried, and
//! a pair of which one spun while the other parked marked the parked one's
//! set. The hint is the thread's, not the set's, and sees only the crate's
//! notifies: a pair of which one side wakes the other some other way (a
//! channel, an interrupt, another crate's condition variable), or notifies
//! before the other waits, counts as unpaired, and a fed worker that
//! notifies a waiting client after each item counts as paired, so that only
//! parks of `LONG_PARK_PAIRED` mark its set.

use crate::exec_env::ExecEnv;
#[cfg(not(metalock_model))]
use crate::exec_env::SIGNAL_NONE;
use crate::primitive::SpinWait;
#[cfg(not(metalock_model))]
use crate::primitive::{AtomicU32, Ordering};
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

/// A park this long marks the wait set of a lone waiter whose notify
/// reached a waiter since its last lone wait began: forty times the long
/// spin on a virtual machine whose yield takes 0.4 µs, and more than a
/// parked pair's late wake-up on such a machine (tens to a few hundred
/// µs).
#[cfg(not(metalock_model))]
const LONG_PARK_PAIRED: Duration = Duration::from_millis(1);

/// A park this long marks the set of any other lone waiter: a little under
/// the long spin (15-25 µs of yields), so that a waiter fed every few tens
/// of microseconds stays marked. Where yields are slower, a marked waiter
/// whose signal would have come within the spin parks instead, which costs
/// what a parking_lot wait does.
#[cfg(not(metalock_model))]
const LONG_PARK_UNPAIRED: Duration = Duration::from_micros(15);

/// A park this long marks the set of a waiter that shares its stripe with
/// others: long enough that waiters woken every few microseconds (the
/// producers and consumers of a bounded buffer, several to a condition)
/// never mark, since their yields let the thread they woke run on their
/// core (see the module's docs).
#[cfg(not(metalock_model))]
const LONG_PARK_SHARED: Duration = Duration::from_millis(1);

/// What a park with no wake-up stamp adds to its threshold for the
/// waiter's own wake-up: about two on a virtual machine whose idle vCPU
/// halts (40-50 µs each), so that the threshold of such parks stays where
/// it was before stamps (100 µs), when late wake-ups had marked sets.
#[cfg(not(metalock_model))]
const WAKE_UP_ALLOWANCE: Duration = Duration::from_micros(85);

/// `ExecEnv::wake_stamp` while no stamp is asked for.
#[cfg(not(metalock_model))]
const STAMP_NONE: u32 = 0;

/// `ExecEnv::wake_stamp` while a parked waiter asks for a stamp; any
/// larger value is a stamp, from `sys::micros`.
#[cfg(not(metalock_model))]
const STAMP_ASKED: u32 = 1;

/// The mark of a set whose last lone waiter parked long.
#[cfg(not(metalock_model))]
const LONE: u32 = 1;

/// The mark of a set whose last waiter that shared its stripe parked long.
#[cfg(not(metalock_model))]
const SHARED: u32 = 2;

/// Marks in the table: a power of two, 4 bytes each (an `AtomicU32`, which
/// every target of the crate has).
#[cfg(not(metalock_model))]
const MARKS: usize = 256;

/// `LONE` if the last lone waiter of the wait sets whose keys meet in a
/// slot parked long (`WaitSpin::woke`), and `SHARED` if the last waiter
/// that shared its stripe did. Two sets in one slot share their marks: a
/// worse guess of how long to spin for both, never a wrong result.
#[cfg(not(metalock_model))]
static LONG_PARKED: [AtomicU32; MARKS] = [const { AtomicU32::new(0) }; MARKS];

/// The mark of the wait set whose key is `key` (a word's or a condition's
/// address).
#[cfg(not(metalock_model))]
#[inline]
fn long_parked(key: usize) -> &'static AtomicU32 {
    &LONG_PARKED[super::slot_of(key, MARKS)]
}

/// Sets (`long`) or clears the mark `bit` of a slot, writing only if that
/// changes it: a steady set's slot stays shared in every waiter's cache.
#[cfg(not(metalock_model))]
#[inline]
fn learn(marks: &AtomicU32, bit: u32, long: bool) {
    // Relaxed (here and below): a hint that orders nothing, read by
    // `WaitSpin::new`.
    let marked = marks.load(Ordering::Relaxed) & bit != 0;
    if marked != long {
        // An update, not a store, so that a lone waiter and one that
        // shares its stripe learning at once both keep theirs.
        match long {
            true => marks.fetch_or(bit, Ordering::Relaxed),
            false => marks.fetch_and(!bit, Ordering::Relaxed),
        };
    }
}

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
    /// The slot of the waiter's set, the mark its wait learns into (`LONE`
    /// or `SHARED`), and the park that sets it.
    #[cfg(not(metalock_model))]
    mark: Option<(&'static AtomicU32, u32, Duration)>,
    /// When the wait parked, if it learns: on the platform's clock and as
    /// `sys::micros` gives it, converted before the stamp is asked for, so
    /// that the clock's origin is set before any stamp is read.
    #[cfg(not(metalock_model))]
    parked_at: Option<(Instant, u32)>,
}

impl WaitSpin {
    /// The spin of a wait until `deadline`, which learns if `set` gives its
    /// wait set's key and whether the waiter is alone in its stripe: none
    /// once the deadline has passed, so that a wait with a zero timeout
    /// returns without yielding (and learns nothing). Under the model
    /// checkers, none at all.
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
                        parked_at: None,
                    };
                }
            };
            let marks = long_parked(key);
            let bit = if alone { LONE } else { SHARED };
            // Relaxed: as in `learn`.
            let marked = marks.load(Ordering::Relaxed) & bit != 0;
            let (spin, yields, long_park, bound) = if alone {
                // SAFETY: the caller's contract. Taken only by a lone wait
                // still within its deadline, the only kind whose threshold
                // reads it, so that a wait in between with others in its
                // stripe, or already past its deadline, leaves the note for
                // the next one.
                let paired = unsafe { ee.take_reached_a_waiter() };
                let long_park = if paired {
                    LONG_PARK_PAIRED
                } else {
                    LONG_PARK_UNPAIRED
                };
                match marked {
                    true => (SpinWait::with_limit(0), 0, long_park, None),
                    false => {
                        let bound = now.and_then(|now| now.checked_add(LONE_WAITER_SPIN));
                        (SpinWait::default(), LONE_WAITER_YIELDS, long_park, bound)
                    }
                }
            } else {
                let spin = match marked {
                    true => SpinWait::with_limit(SpinWait::SPIN_ROUNDS),
                    false => SpinWait::default(),
                };
                (spin, 0, LONG_PARK_SHARED, None)
            };
            Self {
                spin,
                yields,
                deadline,
                bound,
                mark: Some((marks, bit, long_park)),
                parked_at: None,
            }
        }
        #[cfg(metalock_model)]
        {
            let _ = (ee, deadline, set);
            Self {
                spin: SpinWait::default(),
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
    /// (see the module's docs). The time counts up to `LONE_WAITER_SPIN`
    /// only, so a pair's `LONG_PARK_PAIRED` is never reached: only an
    /// unpaired waiter learns here. Reads the clock only where those yields
    /// began.
    #[inline]
    pub(super) fn signalled(&self) {
        #[cfg(not(metalock_model))]
        if let (Some((marks, bit, long_park)), Some(bound)) = (self.mark, self.bound)
            && self.yields < LONE_WAITER_YIELDS
        {
            let left = bound.saturating_duration_since(crate::sys::get().now());
            if LONE_WAITER_SPIN.saturating_sub(left) >= long_park {
                learn(marks, bit, true);
            }
        }
    }

    /// The spin is over and the thread of `ee` parks: a wait that learns
    /// asks for a wake-up stamp.
    #[inline]
    pub(super) fn parking(&mut self, ee: &ExecEnv) {
        #[cfg(not(metalock_model))]
        if self.mark.is_some() {
            let now = crate::sys::get().now();
            self.parked_at = Some((now, crate::sys::micros(now)));
            // Relaxed: a hint that orders nothing, read by `stamp_wake`
            // after the signal. An exit whose read misses it (its signal
            // raced this store) leaves the park unstamped.
            ee.wake_stamp.store(STAMP_ASKED, Ordering::Relaxed);
        }
        #[cfg(metalock_model)]
        let _ = ee;
    }

    /// The parked thread of `ee` ended its wait (notified, invited, out of
    /// time or interrupted): marks its set if it stayed parked long (see
    /// the module's docs), and clears the mark if not.
    #[inline]
    pub(super) fn woke(&self, ee: &ExecEnv) {
        #[cfg(not(metalock_model))]
        if let (Some((marks, bit, long_park)), Some((parked_at, parked_micros))) =
            (self.mark, self.parked_at)
        {
            // Relaxed: as in `parking`.
            let stamp = ee.wake_stamp.swap(STAMP_NONE, Ordering::Relaxed);
            // Wrapped past zero, the difference still holds. A stamp
            // before the park (an exit that read the clock for an earlier
            // wait of this EE, and found this one asking) reads as none.
            let to_wake = stamp.wrapping_sub(parked_micros);
            let long = if stamp > STAMP_ASKED && to_wake <= u32::MAX / 2 {
                Duration::from_micros(to_wake.into()) >= long_park
            } else {
                let parked = crate::sys::get().now().saturating_duration_since(parked_at);
                parked >= long_park + WAKE_UP_ALLOWANCE
            };
            learn(marks, bit, long);
        }
        #[cfg(metalock_model)]
        let _ = ee;
    }
}

/// An exit signalled the thread of `target` and is about to wake it: if
/// that thread's wait asked for a stamp, writes the time (see the
/// module's docs). Costs one load otherwise.
#[inline]
pub(super) fn stamp_wake(target: &ExecEnv) {
    // Relaxed: as in `WaitSpin::parking`. The signal's check skips a late
    // exit whose thread has started another wait (which clears the
    // signal), and the compare-exchange one whose wait has ended (its stamp
    // cleared); an exit that races both may stamp a later wait, a wrong
    // hint for one wait.
    #[cfg(not(metalock_model))]
    if target.wake_stamp.load(Ordering::Relaxed) == STAMP_ASKED
        && target.monitor_signal.load(Ordering::Relaxed) != SIGNAL_NONE
    {
        let now = crate::sys::micros(crate::sys::get().now()).max(STAMP_ASKED + 1);
        let _ = target.wake_stamp.compare_exchange(
            STAMP_ASKED,
            now,
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }
    #[cfg(metalock_model)]
    let _ = target;
}

/// A notify of the thread of `ee` reached a waiter: the thread's next lone
/// wait counts as one of a pair's.
///
/// # Safety
/// `ee` is the calling thread's.
#[inline]
pub(super) unsafe fn note_reached_waiters(ee: &ExecEnv) {
    // SAFETY: the caller's contract.
    #[cfg(not(metalock_model))]
    unsafe {
        ee.note_reached_a_waiter()
    };
    #[cfg(metalock_model)]
    let _ = ee;
}
