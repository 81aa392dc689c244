//! monitorWait (paper 000, Fig. 8, left), on the monitor's own wait set or
//! on a condition (see `condition`); notifyOneOrAll is in `notify`.
//!
//! A waiter leaves the monitor's queue and waits in the wait table
//! (`wait_table`), keyed by the word (the monitor's own wait set) or by the
//! condition. A notify moves the record that has waited longest on that key
//! into the monitor's queue, ahead of the contenders (`insert_notified`):
//! the waiter is then one of the threads waiting to enter, and the exit that
//! reaches it invites it to re-contend; if it loses to a thread that barged
//! in, it goes back first (`requeue_first`) and the exit that finds it first
//! hands it the monitor, so a notified waiter blocks again at most once. A
//! waiter whose time runs out, or whose interrupt comes, first takes its
//! record out of the wait table and enters like any contender.

use super::condition::{BoundElsewhere, ConditionWord};
use super::enter::Entry;
use super::exit::{Unowned, Wake, check_owner, not_owned, release_to_queue};
use super::home::{Home, home_with};
use super::policy;
use super::wait_table::{Waiting, stripe};
use crate::exec_env::interrupt::Interrupt;
use crate::exec_env::{ExecEnv, SIGNAL_INVITED, SIGNAL_NONE};
use crate::lock_record::LockRecord;
#[cfg(all(metalock_model, feature = "__test-hooks"))]
use crate::meta_lock::hooks;
use crate::primitive::Ordering;
use crate::sys::Instant;
use crate::word::MultiUseWord;

/// Which wait set a thread waits on.
#[derive(Clone, Copy, Debug)]
pub(crate) enum WaitSet<'a> {
    /// The monitor's own (Java's `wait` and `notify`).
    Monitor,
    /// A condition variable's.
    Condition(&'a ConditionWord),
}

/// How a wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WaitEnd {
    /// A notify reached the waiter: an exit invited it or handed it the
    /// monitor. A wake-up without one is never reported.
    Notified,
    /// The deadline passed first.
    TimedOut,
    /// The waiter's interrupt flag was set first, or was set while a
    /// waiter whose time ran out entered the monitor again; the flag is
    /// cleared.
    Interrupted,
}

/// Why a wait did not start; it panics saying so once it holds no lock.
#[derive(Clone, Copy, Debug)]
enum Refused {
    /// The waiting record does not own the monitor.
    NotOwner,
    /// The condition is bound to another monitor's word.
    BoundElsewhere,
}

/// The panic message of a condition used with two monitors at once.
pub(crate) const BOUND_ELSEWHERE: &str = "metalock: a Condition was waited on with a monitor \
    while other threads wait on it with another; a condition belongs to one monitor at a time";

impl WaitSet<'_> {
    /// Whether this is a condition's wait set.
    fn is_condition(self) -> bool {
        matches!(self, WaitSet::Condition(_))
    }
}

impl MultiUseWord {
    /// The key of `set` in the wait table: the word's address for its own
    /// wait set, the condition's for a condition.
    pub(super) fn wait_key(&self, set: WaitSet<'_>) -> usize {
        match set {
            WaitSet::Monitor => self as *const MultiUseWord as usize,
            WaitSet::Condition(condition) => condition.id(),
        }
    }

    /// monitorWait (Fig. 8, left): releases every level of the monitor that
    /// `record` owns, waits on `set` until notified (or `deadline`), and
    /// comes back owning the monitor at the same depth. With `interrupt`
    /// (the calling thread's flag), an interrupt ends the wait too, and one
    /// pending at the call ends it before anything is released. A waiter
    /// that a notify reached returns as notified even if an interrupt came
    /// too (the flag stays set); one that reports the interrupt has left
    /// the wait set before any notify took it, so the notify went to
    /// another waiter (JLS 17.2.4).
    ///
    /// Called on the owner's thread (by its guard).
    ///
    /// # Panics
    ///
    /// If `set` is a condition other threads wait on with another monitor,
    /// before releasing anything (an interrupt pending at the call returns
    /// `Interrupted` first).
    #[track_caller]
    pub(crate) fn wait(
        &self,
        record: &'static LockRecord,
        deadline: Option<Instant>,
        set: WaitSet<'_>,
        interrupt: Option<&Interrupt>,
    ) -> WaitEnd {
        if interrupt.is_some_and(Interrupt::take) {
            return WaitEnd::Interrupted;
        }
        // SAFETY: the record's owner is the calling thread's EE.
        let ee = unsafe { ExecEnv::of_owner(record.owner()) };
        count!(ee, waits);
        #[cfg(all(feature = "diagnostics", not(metalock_model)))]
        let _blocked = ee.diag.block(
            self as *const MultiUseWord as usize,
            true,
            deadline.is_some(),
            None,
        );
        let key = self.wait_key(set);
        let home = home_with(self);
        let start = |waiting: &mut Waiting<'_>| {
            // SAFETY: we hold the stripe; the record is ours.
            let started = unsafe { self.start_waiting(ee, record, waiting, key, home, set) };
            started.map(|wake| (wake, waiting.is_alone()))
        };
        // SAFETY: `ee` is the calling thread's, the owner of its record.
        let started = unsafe { stripe(key, set.is_condition()).with(ee, start) };
        // Raised once the stripe is released: the panic hook is user code.
        let alone = match started {
            // Woken once the stripe is released (see `Wake`).
            Ok((wake, alone)) => {
                drop(wake);
                alone
            }
            Err(refused) => {
                #[cfg(all(feature = "diagnostics", not(metalock_model)))]
                drop(_blocked);
                match refused {
                    Refused::NotOwner => not_owned(Unowned::Wait),
                    Refused::BoundElsewhere => panic!("{BOUND_ELSEWHERE}"),
                }
            }
        };
        // SAFETY: as above; the record waits in `set` now.
        let end = unsafe { self.wait_started(ee, record, deadline, set, interrupt, alone) };
        if let Some(home) = home {
            home.unpin();
        }
        end
    }

    /// The rest of `wait`, once the record waits in `set`, `alone` in its
    /// stripe or not.
    ///
    /// # Safety
    /// `ee` is the calling thread's EE, and `record` its record, which
    /// started waiting in `set` (a notify may have moved it since).
    unsafe fn wait_started(
        &self,
        ee: &'static ExecEnv,
        record: &'static LockRecord,
        deadline: Option<Instant>,
        set: WaitSet<'_>,
        interrupt: Option<&Interrupt>,
        alone: bool,
    ) -> WaitEnd {
        let key = self.wait_key(set);
        let mut signal = self.sleep(ee, deadline, interrupt, Some((key, alone)));
        if signal == SIGNAL_NONE {
            // Time ran out, or an interrupt came: leave the wait set, unless
            // a notify came first.
            let leave = |waiting: &mut Waiting<'_>| {
                let left = waiting.remove(record);
                if left && let WaitSet::Condition(condition) = set {
                    condition.unbind_unless_waited_on(waiting);
                }
                left
            };
            // SAFETY: `ee` is the calling thread's (the caller's contract).
            let left = unsafe { stripe(key, set.is_condition()).with(ee, leave) };
            if left {
                #[cfg(all(feature = "diagnostics", not(metalock_model)))]
                ee.diag.enter_again(self as *const MultiUseWord as usize);
                let held = self.get_meta_lock(ee);
                // SAFETY: we hold the meta-lock; the record is ours and in
                // no queue.
                unsafe { self.acquire_held(ee, record, held, Entry::Fresh) };
                return match interrupt.is_some_and(Interrupt::take) {
                    true => WaitEnd::Interrupted,
                    false => WaitEnd::TimedOut,
                };
            }
            signal = self.sleep(ee, None, None, None);
        }
        if signal == SIGNAL_INVITED {
            // Notified, and invited to re-contend.
            #[cfg(not(metalock_swap_only))]
            if super::EXTRA_FAST && self.spin_then_fused_lock(ee, Some(record)).is_some() {
                return WaitEnd::Notified;
            }
            let held = self.get_meta_lock(ee);
            // SAFETY: we hold the meta-lock; the invitation took the record
            // out of the queue.
            unsafe { self.acquire_held(ee, record, held, Entry::Notified) };
        }
        WaitEnd::Notified
    }

    /// Leaves the monitor and joins the wait set at `key`, under its stripe;
    /// pins `home`, the word's if it is a home's, until the wait ends (the
    /// word may be NEUTRAL meanwhile, and must keep its key). A condition
    /// `set` is bound to this word first. Returns the wake-up of the thread
    /// the release invited, for the caller to drop once the stripe is
    /// released. If `record` does not own the monitor, or `set` is bound
    /// to another word, nothing changes and the error says which.
    ///
    /// # Safety
    /// `waiting` is the locked stripe of `key`; `record` is the calling
    /// thread's; `ee` is its EE.
    unsafe fn start_waiting(
        &self,
        ee: &'static ExecEnv,
        record: &'static LockRecord,
        waiting: &mut Waiting<'_>,
        key: usize,
        home: Option<&Home>,
        set: WaitSet<'_>,
    ) -> Result<Wake, Refused> {
        let Some(held) = check_owner(self.get_meta_lock(ee), record) else {
            return Err(Refused::NotOwner);
        };
        // Bound once the owner is checked, so that a failed check leaves
        // the condition as it was; the meta-lock's release below
        // orders the binding for a notify (see `ConditionWord::notify`).
        if let WaitSet::Condition(condition) = set
            && let Err(BoundElsewhere) = condition.bind(self)
        {
            let bits = held.bits;
            held.release(bits);
            return Err(Refused::BoundElsewhere);
        }
        // Relaxed: see `acquire_held`.
        ee.monitor_signal.store(SIGNAL_NONE, Ordering::Relaxed);
        // SAFETY: we hold the meta-lock and own the monitor: our record,
        // with its count, goes to the wait table, and the queue behind it
        // gets the monitor. In that order: a notifier ordered after our
        // release of the monitor must find the stripe counting us.
        unsafe {
            let (rest, last, mut displaced) = (record.queue(), record.last(), record.displaced());
            if let Some(home) = home {
                displaced = home.pin_for_wait(displaced);
            }
            waiting.push(record, key);
            record.set_last_notified(core::ptr::null_mut());
            Ok(release_to_queue(held, rest, last, displaced, false))
        }
    }

    /// Sleeps until an exit invites this thread or hands it the monitor,
    /// until `deadline`, or until `interrupt` is set; returns the signal
    /// (`SIGNAL_NONE` if the time ran out or the interrupt came first).
    /// Spins first, as `policy` says for a waiter of `set` (its wait set's
    /// key, and whether the waiter is alone in its stripe; `None` spins
    /// short and learns nothing). Called on `ee`'s thread.
    fn sleep(
        &self,
        ee: &'static ExecEnv,
        deadline: Option<Instant>,
        interrupt: Option<&Interrupt>,
        set: Option<(usize, bool)>,
    ) -> usize {
        // Acquire (here and below) pairs with the Release store of the exit
        // that signals us: its changes, and those of every owner before it,
        // are visible.
        let signal = || ee.monitor_signal.load(Ordering::Acquire);
        let interrupted = || interrupt.is_some_and(Interrupt::is_pending);
        // SAFETY: `ee` is the calling thread's, whose parker it parks on
        // below (`wait` takes it from the record the thread waits with).
        let mut spin = unsafe { policy::WaitSpin::new(ee, deadline, set) };
        while spin.spin() {
            let seen = signal();
            if seen != SIGNAL_NONE {
                #[cfg(all(metalock_model, feature = "__test-hooks"))]
                hooks::fire(hooks::HandoffEvent::WaitEndedInItsSpin(match seen {
                    SIGNAL_INVITED => hooks::SpinEnd::Invited,
                    _ => hooks::SpinEnd::HandedOver,
                }));
                spin.signalled();
                return seen;
            }
            if interrupted() {
                #[cfg(all(metalock_model, feature = "__test-hooks"))]
                hooks::fire(hooks::HandoffEvent::WaitEndedInItsSpin(
                    hooks::SpinEnd::Interrupted,
                ));
                return SIGNAL_NONE;
            }
        }
        // From here an interrupt unparks us.
        let _sleeping = match interrupt.map(|interrupt| interrupt.sleep_as(ee)) {
            Some((_, true)) => return signal(),
            sleeping => sleeping,
        };
        spin.parking(ee);
        let ended = loop {
            let signal = signal();
            if signal != SIGNAL_NONE || interrupted() {
                break signal;
            }
            if ee.parker.park(deadline) {
                break super::signal_after_timed_park(ee);
            }
        };
        // SAFETY: `ee` is the calling thread's, as for `WaitSpin::new`.
        unsafe { spin.woke(ee) };
        ended
    }
}

#[cfg(all(test, feature = "std", not(metalock_model)))]
mod tests {
    use std::panic::{self, AssertUnwindSafe};
    use std::time::Duration;

    use super::{WaitEnd, WaitSet};
    use crate::exec_env::ExecEnv;
    use crate::sys::panic_hook::with_panic_hook;
    use crate::word::MultiUseWord;

    /// A wait through a record that does not own the monitor (no guard
    /// lets one happen; a bug of the crate would) panics only once the
    /// wait-table stripe is released: the panic hook, user code, may wait
    /// on a monitor itself, where before it found the stripe held and the
    /// process stopped.
    #[test]
    fn a_wait_by_a_non_owner_panics_with_no_stripe_held() {
        static HELD: MultiUseWord = MultiUseWord::new();
        static NOT_HELD: MultiUseWord = MultiUseWord::new();
        static IN_HOOK: MultiUseWord = MultiUseWord::new();
        let ee = ExecEnv::current();
        let record = HELD.enter::<true>(ee);
        let unwound = with_panic_hook(
            |_| {
                let mut guard = IN_HOOK.lock();
                assert!(guard.wait_for(Duration::from_millis(1)).timed_out());
            },
            || {
                panic::catch_unwind(AssertUnwindSafe(|| {
                    NOT_HELD.wait(record, None, WaitSet::Monitor, None)
                }))
            },
        );
        let message = unwound.expect_err("a non-owner's wait returned");
        let message = message
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| message.downcast_ref::<String>().map(String::as_str))
            .expect("a panic message");
        assert!(message.contains("wait of a monitor that the calling thread does not own"));
        // SAFETY: the record entered `HELD` above, on this thread.
        unsafe { HELD.exit::<false>(record) };
        // The word and its stripe are as before.
        assert!(!NOT_HELD.is_locked());
        let record = NOT_HELD.enter::<true>(ee);
        let deadline = crate::sys::Instant::now() + Duration::from_millis(1);
        let end = NOT_HELD.wait(record, Some(deadline), WaitSet::Monitor, None);
        assert_eq!(end, WaitEnd::TimedOut);
        // SAFETY: as above, for `NOT_HELD`.
        unsafe { NOT_HELD.exit::<false>(record) };
    }
}
