//! What a wait set's waits teach its next waiter's spin: whether they
//! parked long.
//!
//! A lone waiter's spin (see `policy`) adapts to how long its set's waits
//! park. A lone waiter that parked and stayed parked long, however its wait
//! ended (notified, out of time, interrupted), marks its wait set (the
//! monitor's own, or a condition); the next lone waiter of a marked set
//! parks without spinning, and one whose park is shorter clears the mark. A
//! thread that waits for work that comes every few tens of microseconds or
//! more (a background consumer, an idle worker) then parks at once, as
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
//! one, the reads of the clock the bound makes anyway; the carried lag
//! below counted in): the yields then
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
//! then cannot keep its set marked: a marked waiter whose signal comes
//! soon (under 5 µs with the lag below counted) clears the mark however
//! late it runs. A park that ends with no stamp (out of time, interrupted,
//! or a signal that raced the request) counts until the waiter runs, and
//! its threshold grows by `WAKE_UP_ALLOWANCE`.
//!
//! The waiter's own wake-up still shortens its next wait by as much: on 2
//! vCPUs, a consumer fed every 20 µs and woken 10-25 µs late parked
//! within 10 µs of its next item half the time, cleared the mark, and
//! spun through the wait after (1.85x parking_lot's CPU per item). So a
//! stamped lone park leaves the lag, from the stamp to the time the waiter
//! runs, in its EE, and the next lone wait counts up to
//! `CARRIED_LAG_MAX_MICROS` of it in (1.06-1.26x). Counting all of it
//! measured 1.04x, but where wake-ups take longer than the threshold, a
//! marked set would then stay marked whatever its waits (a consumer fed
//! every 10 µs parked for about 90 waits after each pause, against 8 with
//! the cap).
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
#[cfg(not(metalock_model))]
use crate::primitive::{AtomicU32, Ordering};
#[cfg(not(metalock_model))]
use crate::sys::Instant;
#[cfg(not(metalock_model))]
use core::time::Duration;

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

/// The most of a waiter's wake-up lag (see `Mark`) its next lone wait
/// counts, in microseconds: two thirds of `LONG_PARK_UNPAIRED`, so that a
/// park whose signal comes in under 5 µs still clears the mark however
/// late its waiter woke before (a spin that its signal ends that soon
/// leaves the mark as it was: a spin never clears it).
#[cfg(not(metalock_model))]
const CARRIED_LAG_MAX_MICROS: u32 = 10;

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
/// slot parked long (`Mark::learn_from_park`) or spun that long
/// (`WaitSpin::signalled`), and `SHARED` if the last waiter that shared
/// its stripe parked long. Two sets in one slot share their marks: a
/// worse guess of how long to spin for both, never a wrong result.
#[cfg(not(metalock_model))]
static LONG_PARKED: [AtomicU32; MARKS] = [const { AtomicU32::new(0) }; MARKS];

/// The mark a wait learns into: the slot of its wait set, the bit of its
/// kind of waiter (`LONE` or `SHARED`), the park that sets it, and the
/// wake-up lag the wait counts in.
#[cfg(not(metalock_model))]
#[derive(Clone, Copy, Debug)]
pub(super) struct Mark {
    slot: &'static AtomicU32,
    bit: u32,
    long_park: Duration,
    /// How late, in microseconds, the waiter ran after its last stamped
    /// lone park (its EE's `wake_lag`), at most `CARRIED_LAG_MAX_MICROS`:
    /// what that lateness took off this wait where the same feed ends
    /// both. A wait of another set, or one long after, counts it too: a
    /// wrong hint for one wait, which the cap keeps small.
    carried: u32,
}

#[cfg(not(metalock_model))]
impl Mark {
    /// The mark of the wait set whose key is `key` (a word's or a
    /// condition's address), for a waiter alone in its stripe or not
    /// (`alone`). A lone waiter's threshold depends on whether its notify
    /// reached a waiter since its last lone wait began, a note this takes,
    /// and its wait counts the wake-up lag its last park left (taken too).
    ///
    /// # Safety
    /// `ee` is the calling thread's. Called only for a wait still within
    /// its deadline, the only kind whose threshold reads the note, so that a
    /// wait in between with others in its stripe, or already past its
    /// deadline, leaves the note for the next one.
    #[inline]
    pub(super) unsafe fn of(ee: &ExecEnv, key: usize, alone: bool) -> Self {
        let slot = &LONG_PARKED[super::slot_of(key, MARKS)];
        if !alone {
            return Self {
                slot,
                bit: SHARED,
                long_park: LONG_PARK_SHARED,
                carried: 0,
            };
        }
        // SAFETY: the caller's contract.
        let (paired, lag) = unsafe { (ee.take_reached_a_waiter(), ee.replace_wake_lag(0)) };
        let long_park = match paired {
            true => LONG_PARK_PAIRED,
            false => LONG_PARK_UNPAIRED,
        };
        Self {
            slot,
            bit: LONE,
            long_park,
            carried: lag.min(CARRIED_LAG_MAX_MICROS),
        }
    }

    /// Whether the set's last waiter of this kind parked long.
    #[inline]
    pub(super) fn is_set(&self) -> bool {
        // Relaxed: as in `learn`.
        self.slot.load(Ordering::Relaxed) & self.bit != 0
    }

    /// Whether a wait that parked (or spun, in `WaitSpin::signalled`)
    /// `waited` until its signal was long enough to set the mark, with the
    /// lag carried in.
    #[inline]
    pub(super) fn is_long(&self, waited: Duration) -> bool {
        // As `waited + carried >= long_park`, with no sum to overflow.
        let carried = Duration::from_micros(self.carried.into());
        waited >= self.long_park.saturating_sub(carried)
    }

    /// Sets (`long`) or clears the mark, writing only if that changes it: a
    /// steady set's slot stays shared in every waiter's cache.
    #[inline]
    pub(super) fn learn(&self, long: bool) {
        if self.is_set() != long {
            // An update, not a store, so that a lone waiter and one that
            // shares its stripe learning at once both keep theirs. Relaxed:
            // a hint that orders nothing, read by `is_set`.
            match long {
                true => self.slot.fetch_or(self.bit, Ordering::Relaxed),
                false => self.slot.fetch_and(!self.bit, Ordering::Relaxed),
            };
        }
    }

    /// The thread of `ee`, parked since `parked`, ended its wait (notified,
    /// invited, out of time or interrupted): marks the set if it stayed
    /// parked long (see the module's docs), and clears the mark if not. A
    /// lone waiter's stamped park leaves the wake-up lag for the next wait.
    ///
    /// # Safety
    /// `ee` is the calling thread's.
    #[inline]
    pub(super) unsafe fn learn_from_park(&self, ee: &ExecEnv, parked: Parked) {
        // Relaxed: as in `Parked::asking`.
        let stamp = ee.wake_stamp.swap(STAMP_NONE, Ordering::Relaxed);
        // Wrapped past zero, the difference still holds. A stamp before
        // the park (an exit that read the clock for an earlier wait of this
        // EE, and found this one asking) reads as none.
        let to_wake = stamp.wrapping_sub(parked.micros);
        let long = if stamp > STAMP_ASKED && to_wake <= u32::MAX / 2 {
            if self.bit == LONE {
                let lag = crate::sys::micros(crate::sys::get().now()).wrapping_sub(stamp);
                let lag = if lag <= u32::MAX / 2 { lag } else { 0 };
                // SAFETY: the caller's contract.
                unsafe { ee.replace_wake_lag(lag) };
            }
            self.is_long(Duration::from_micros(to_wake.into()))
        } else {
            let parked = crate::sys::get().now().saturating_duration_since(parked.at);
            self.is_long(parked.saturating_sub(WAKE_UP_ALLOWANCE))
        };
        self.learn(long);
    }
}

/// When a wait that learns parked: on the platform's clock and as
/// `sys::micros` gives it, converted before the stamp is asked for, so
/// that the clock's origin is set before any stamp is read.
#[cfg(not(metalock_model))]
#[derive(Clone, Copy, Debug)]
pub(super) struct Parked {
    at: Instant,
    micros: u32,
}

#[cfg(not(metalock_model))]
impl Parked {
    /// The thread of `ee` parks now, and asks for a wake-up stamp.
    #[inline]
    pub(super) fn asking(ee: &ExecEnv) -> Self {
        let at = crate::sys::get().now();
        let parked = Self {
            at,
            micros: crate::sys::micros(at),
        };
        // Relaxed: a hint that orders nothing, read by `stamp_wake` after
        // the signal. An exit whose read misses it (its signal raced this
        // store) leaves the park unstamped.
        ee.wake_stamp.store(STAMP_ASKED, Ordering::Relaxed);
        parked
    }
}

/// An exit signalled the thread of `target` and is about to wake it: if
/// that thread's wait asked for a stamp, writes the time (see the
/// module's docs). Costs one load otherwise.
#[inline]
pub(super) fn stamp_wake(target: &ExecEnv) {
    // Relaxed: as in `Parked::asking`. The signal's check skips a late
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
