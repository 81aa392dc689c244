//! Contention profiles: what the slow paths learn about a monitor, and the
//! spin budget they choose from it (paper 001: run-time statistics pick the
//! policy of the locks that are contended, and only of those; paper 000,
//! section 5.3: the meta-lock leaves the policy free).
//!
//! A contender that finds the monitor owned spins before it queues
//! (`spin_then_fused_lock`, and `spin_then_enter` for a keyed monitor's
//! home): spin hints, then yields. A spin that wins saves a sleep and a
//! wake-up, tens of microseconds on a virtual machine; one that loses costs
//! its few microseconds and the thread sleeps anyway. So the spin pays
//! while it wins more than about one time in eight, which it does on a
//! monitor held for nanoseconds to a few microseconds, even with more
//! threads than cores, since the yields let a preempted owner run (a budget
//! cut after each lost spin measured 0.53x the throughput at 4 threads and
//! 200 ns held). On a monitor held for tens of microseconds or more it
//! loses nearly always. Each monitor therefore keeps a credit, learned from
//! its own spins: a spin that waited and won adds `WIN_CREDIT`, a lost one
//! (out of budget, or it waited and then found a queue formed) takes one
//! off; one that ends on a word in the meta-lock, which an owner about to
//! wait also takes, learns nothing. A thread that takes the monitor at its
//! first look, as one woken from the queue usually does, learns nothing
//! either: counted as a win, the wake after every lost spin would keep a
//! long-held monitor's credit full.
//! While there is credit a contender spins the full budget; at zero (more
//! than seven spins in eight lost, for a while) it only spins the hints,
//! which cost nanoseconds, and skips the yields. After `EXPLORE_AFTER` spins
//! lost that way one spin runs the full budget again, so that a monitor held
//! for less time again is seen winning and earns its credit back.
//!
//! The profile lives beside the word, not in it: every payload bit of a
//! NEUTRAL word is the user's. It is a slot of a small table indexed by the
//! word's address, touched only by contenders, read on every spin and
//! written only when the credit changes, so that a steady monitor's slot
//! stays shared in every contender's cache (slots share cache lines, so a
//! neighbouring slot that changes can still evict it). Two monitors whose
//! addresses meet in one slot share a credit: a worse guess for both, never
//! a wrong result, since the credit decides only how long a thread spins
//! before it queues, and queueing is always correct. A keyed monitor's
//! credit is its home word's, shared by the addresses the home serves over
//! time.
//!
//! Hand-over or renouncement is not chosen here: the exit renounces, and
//! hands over only to a thread passed over for too long (`FAIR_AFTER`),
//! because on the sweep hand-over (parking_lot's `FairMutex`, or a fair
//! monitor) never beat renouncement's throughput by more than 1% in any
//! cell, and lost up to 160x
//! (README, "Contention sweep"); what a per-monitor statistic could choose
//! there is only how soon to be fair, which the starving thread's own count
//! already decides.
//!
//! Under the model checkers spinning stops at once (`SpinWait`), so there
//! is nothing to learn: the budget is fixed and the table absent.

#[cfg(not(metalock_swap_only))]
use crate::exec_env::ExecEnv;
use crate::primitive::SpinWait;
#[cfg(not(metalock_model))]
use crate::primitive::{AtomicU32, Ordering};
use crate::word::MultiUseWord;

/// The credit a won spin adds, a lost spin taking one off: the spin keeps
/// its full budget while it wins more than one time in `WIN_CREDIT + 1`.
#[cfg(not(metalock_model))]
const WIN_CREDIT: u32 = 7;

/// The most credit a monitor keeps, and what it starts with: 63 lost spins
/// in a row before the yields stop.
#[cfg(not(metalock_model))]
const MAX_CREDIT: u32 = 63;

/// Spins lost without credit after which one spin runs the full budget.
#[cfg(not(metalock_model))]
const EXPLORE_AFTER: u32 = 8;

/// Where the count of spins lost without credit starts in a profile's state.
#[cfg(not(metalock_model))]
const LOSSES_SHIFT: u32 = 8;

/// Slots in the table: a power of two, 4 bytes each.
#[cfg(not(metalock_model))]
const SLOTS: usize = 256;

/// One monitor's (or a few monitors') spin credit and the spins it lost
/// since the credit ran out: `credit | losses << LOSSES_SHIFT`.
///
/// Invariant: the credit is at most `MAX_CREDIT`, the losses at most
/// `EXPLORE_AFTER`, and non-zero only without credit. Updates are a plain
/// load and store, so two contenders learning at once may lose an update:
/// the credit is a hint, and the next spin moves it again.
#[cfg(not(metalock_model))]
#[derive(Debug)]
pub(super) struct Profile {
    state: AtomicU32,
}

#[cfg(not(metalock_model))]
static PROFILES: [Profile; SLOTS] = [const { Profile::new() }; SLOTS];

#[cfg(not(metalock_model))]
impl Profile {
    const fn new() -> Self {
        Self {
            state: AtomicU32::new(MAX_CREDIT),
        }
    }

    /// The profile of the monitor whose word is `word`.
    #[inline]
    pub(super) fn of(word: &MultiUseWord) -> &'static Profile {
        &PROFILES[super::slot_of(word as *const MultiUseWord as usize, SLOTS)]
    }

    /// The credit and the spins lost since it ran out.
    #[inline]
    fn load(&self) -> (u32, u32) {
        // Relaxed: a hint that orders nothing (see the type's invariant).
        let state = self.state.load(Ordering::Relaxed);
        (state & ((1 << LOSSES_SHIFT) - 1), state >> LOSSES_SHIFT)
    }

    /// Stores what a spin learnt, if it changes anything: a steady
    /// monitor's slot is not written, and stays shared in every
    /// contender's cache.
    #[inline]
    fn learn(&self, before: (u32, u32), after: (u32, u32)) {
        if after != before {
            // Relaxed: as in `load`.
            self.state
                .store(after.0 | after.1 << LOSSES_SHIFT, Ordering::Relaxed);
        }
    }

    /// A spin of the full budget while the monitor has credit or explores,
    /// else of the spin hints only.
    #[inline]
    pub(super) fn spin(&self) -> SpinWait {
        match self.load() {
            (0, losses) if losses < EXPLORE_AFTER => SpinWait::with_limit(SpinWait::SPIN_ROUNDS),
            _ => SpinWait::default(),
        }
    }

    /// Learns from a spin that won the monitor.
    #[inline]
    pub(super) fn won(&self) {
        let before = self.load();
        self.learn(before, ((before.0 + WIN_CREDIT).min(MAX_CREDIT), 0));
    }

    /// Learns from `spin`, which lost.
    #[inline]
    pub(super) fn lost(&self, spin: &SpinWait) {
        let before = self.load();
        let after = match before {
            // Only a full spin starts the next round of hint-only spins: one
            // of the hints, begun before the explore fell due, leaves the
            // explore to the next contender.
            (0, losses) if losses >= EXPLORE_AFTER && !spin.is_full() => before,
            (0, losses) if losses >= EXPLORE_AFTER => (0, 0),
            (0, losses) => (0, losses + 1),
            (credit, _) => (credit - 1, 0),
        };
        self.learn(before, after);
    }

    /// Whether a contender would spin the full budget now, for tests.
    #[cfg(test)]
    fn spins_fully(&self) -> bool {
        self.spin().is_full()
    }
}

/// How the contention paths end a spin, in both builds of `Profile`.
#[cfg(not(metalock_swap_only))]
impl Profile {
    /// Ends a spin that took the monitor: one that waited won, and the
    /// profile learns from it; one that took it at its first look teaches
    /// nothing (see the module's doc).
    #[inline]
    #[cfg_attr(not(feature = "stats"), allow(unused_variables))]
    pub(super) fn spin_won(&self, spin: &SpinWait, ee: &ExecEnv) {
        if spin.waited() {
            self.won();
            count!(ee, spins_won);
        }
    }

    /// Ends a spin without the monitor: out of budget, or a queue formed
    /// and the thread must join it. One that waited lost either way (with
    /// several contenders on a long-held monitor, all but the first end by
    /// queueing).
    #[inline]
    #[cfg_attr(not(feature = "stats"), allow(unused_variables))]
    pub(super) fn spin_lost(&self, spin: &SpinWait, ee: &ExecEnv) {
        if spin.waited() {
            self.lost(spin);
            count!(ee, spins_lost);
        }
    }
}

/// Under the model checkers: a fixed budget (spins stop at once there).
#[cfg(metalock_model)]
#[derive(Debug)]
pub(super) struct Profile;

#[cfg(metalock_model)]
impl Profile {
    pub(super) fn of(_: &MultiUseWord) -> &'static Profile {
        &Profile
    }

    pub(super) fn spin(&self) -> SpinWait {
        SpinWait::default()
    }

    pub(super) fn won(&self) {}

    pub(super) fn lost(&self, _: &SpinWait) {}
}

#[cfg(all(test, not(metalock_model)))]
mod tests {
    use super::*;

    #[test]
    fn the_yields_stop_only_where_spins_nearly_always_lose() {
        let profile = Profile::new();
        // One win in eight spins: the credit holds.
        for _ in 0..100 {
            profile.won();
            for _ in 0..WIN_CREDIT {
                profile.lost(&profile.spin());
            }
            assert!(profile.spins_fully());
        }
        // Every spin lost: the credit runs out, and the spins shrink to the
        // hints, but for one full spin after every `EXPLORE_AFTER` lost.
        profile.won();
        for _ in 0..MAX_CREDIT {
            assert!(profile.spins_fully());
            profile.lost(&profile.spin());
        }
        for _ in 0..3 {
            for _ in 0..EXPLORE_AFTER {
                assert!(!profile.spins_fully());
                profile.lost(&profile.spin());
            }
            assert!(profile.spins_fully());
            profile.lost(&profile.spin());
        }
        // An exploring spin that wins earns the credit back.
        for _ in 0..EXPLORE_AFTER {
            profile.lost(&profile.spin());
        }
        assert!(profile.spins_fully());
        profile.won();
        for _ in 0..WIN_CREDIT {
            assert!(profile.spins_fully());
            profile.lost(&profile.spin());
        }
        assert!(!profile.spins_fully());
    }

    #[test]
    fn only_a_full_spin_uses_up_the_explore() {
        let profile = Profile::new();
        for _ in 0..MAX_CREDIT + EXPLORE_AFTER {
            profile.lost(&profile.spin());
        }
        assert!(profile.spins_fully(), "the explore is due");
        // A contender that began with the hints, before the explore fell
        // due, loses now: the explore stays due.
        profile.lost(&SpinWait::with_limit(SpinWait::SPIN_ROUNDS));
        assert!(profile.spins_fully());
        profile.lost(&profile.spin());
        assert!(!profile.spins_fully());
    }

    #[test]
    fn neighbouring_words_spread_over_the_profiles() {
        let words: [MultiUseWord; 8] = core::array::from_fn(|_| MultiUseWord::new());
        let slots: std::collections::BTreeSet<_> = words
            .iter()
            .map(|word| Profile::of(word) as *const Profile)
            .collect();
        assert!(
            slots.len() > 4,
            "8 neighbouring words met in {} slots",
            slots.len()
        );
    }
}
