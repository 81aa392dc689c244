/// A point on the hand-off slow path.
#[cfg_attr(metalock_swap_only, allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandoffEvent {
    /// A thread swapped and found the meta-lock BUSY; it is about to race
    /// its predecessor.
    SuccessorQueued,
    /// Case 1: the successor reached the predecessor's EE first.
    SuccessorWon,
    /// Case 2: the predecessor reached its EE first.
    PredecessorWon,
    /// A thread that swapped and found the meta-lock BUSY holds it now, the
    /// hand-off done, and is about to return from its wait.
    SuccessorGotIt,
    /// A thread waiting for its part of a hand-off came back from its park
    /// before that part was done (a token left from an earlier unpark, or
    /// a spurious return), and parks again.
    WokeEarly,
    /// A thread invited to re-contend for a monitor lost it to another
    /// thread, and queues again.
    ContenderPassedOver,
    /// An exit handed the monitor to a thread passed over for too long
    /// instead of releasing it (eventual fairness).
    MonitorHandedOver,
    /// A timed park (of a wait or of an enter) reported that its time ran
    /// out, and the signal read after it said that an exit had handed the
    /// thread the monitor meanwhile (the exit's store came before its
    /// unpark): the thread keeps the monitor.
    HandedOverAsATimedParkEnded,
    /// A notified waiter that an exit invited lost the monitor to another
    /// thread, and queues again ahead of the contenders, to be handed it.
    NotifiedWaiterLost,
    /// Such a waiter (`NotifiedWaiterLost`) went back first while the
    /// owner's hold had already queued a notified waiter (the owner's
    /// `last_notified`), which is now behind it. Only builds with test
    /// hooks have this event (its condition is one more read under the
    /// meta-lock).
    #[cfg(feature = "__test-hooks")]
    NotifiedWaiterLostAheadOfLastNotified,
    /// A contender that lost the monitor after an invitation went back to
    /// its place behind records it does not pass (notified waiters, records
    /// passed over too long, contenders that lost before it did).
    ContenderRequeuedBehind,
    /// A contender that lost after an invitation went back behind another
    /// contender that had lost before it (an older claim).
    ContenderRequeuedBehindALoser,
    /// A notify found the monitor free with threads still queued to enter
    /// (an invited thread not yet back), put the waiter it moved ahead of
    /// them, and invited it at once.
    NotifiedAheadOfQueue,
    /// A notify with a contender at the end of the queue started its walk
    /// at the waiter queued last in the owner's hold rather than at the
    /// owner (the waiter goes ahead of that contender, or behind it if it
    /// was passed over too long).
    NotifiedFromLastNotified,
    /// Such a walk (`NotifiedFromLastNotified`) started behind a record
    /// passed over too long: a notified waiter that lost the monitor and
    /// went back first, or a contender passed over too long, is ahead of
    /// the waiter queued last. The condition takes a walk of the queue, so
    /// only builds with test hooks have this event, and only while a hook
    /// is installed.
    #[cfg(feature = "__test-hooks")]
    NotifiedFromLastNotifiedPastAPassedOver,
    /// A `notify_all` found the monitor NEUTRAL with two or more waiters:
    /// it invited the first (on a fair monitor, handed it the monitor) and
    /// queued the others behind it.
    NotifiedQueuedBehindInvited,
    /// A timed enter whose time ran out left its queue from between two
    /// queued records, neither of them the queue's head.
    TimedEnterLeftBetweenTwo,
    /// A timed enter whose time ran out left the head of a WAITERS queue
    /// with a record behind it, which now carries the displaced payload.
    TimedEnterLeftAWaitersHead,
    /// A timed enter whose time ran out while it was queued or invited
    /// settled, as the payload says.
    TimedEnterSettled(GiveUp),
    /// A `set_payload` found threads queued on a monitor that nobody owns
    /// (WAITERS) and wrote the payload into the record at the queue's
    /// head, which carries it.
    PayloadSetAtAQueuesHead,
    /// A keyed enter (`true`) or the removal of an overflow entry found the
    /// home of its address with threads queued and nobody owning it
    /// (WAITERS), and set or cleared the home's overflow mark in the
    /// payload displaced into the record at the queue's head.
    #[cfg(feature = "std")]
    OverflowMarkAtAQueuesHead(bool),
    /// A keyed enter found no room for its address's overflow entry, made
    /// some with no lock held, and is about to try its home again (only
    /// try, holding the word it reserved).
    #[cfg(feature = "std")]
    KeyedRoomMade,
    /// A waiter's wait ended while it spun, before it parked, as the
    /// payload says. Only under the model checkers, where a wait spins only
    /// in executions that ask it to (`monitor::spin_waits`).
    #[cfg(all(metalock_model, feature = "__test-hooks"))]
    WaitEndedInItsSpin(SpinEnd),
}

/// What a waiter saw while it spun (`WaitEndedInItsSpin`).
#[cfg(all(metalock_model, feature = "__test-hooks"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpinEnd {
    /// An exit invited it to re-contend, once notified.
    Invited,
    /// An exit handed it the monitor, once notified.
    HandedOver,
    /// Its interrupt, which it leaves pending for the wait to report.
    Interrupted,
}

/// How a timed enter whose time ran out settled (`give_up`).
#[cfg_attr(metalock_swap_only, allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GiveUp {
    /// An exit had handed it the monitor: it keeps it.
    HandedOver,
    /// Still queued, it left the queue; nobody owned the monitor, so it
    /// took it (an invitation may have passed over the queue to it).
    LeftTheQueueAndTookIt,
    /// Still queued, it left the queue and gave up.
    LeftTheQueue,
    /// Invited, it found nobody owning the monitor and took it.
    InvitedAndTookIt,
    /// Invited, it found the monitor owned and gave up.
    InvitedAndGaveUp,
}

#[cfg(feature = "__test-hooks")]
static HOOK: core::sync::atomic::AtomicPtr<()> =
    core::sync::atomic::AtomicPtr::new(core::ptr::null_mut());

/// Calls `hook` at every hand-off event, on the thread where it happens;
/// `None` removes it. The hook may run while the thread holds or waits
/// for a meta-lock, where a panic aborts the process, so it must not
/// touch any monitor and should not panic (the abort is what the
/// unwinding tests check).
#[cfg(feature = "__test-hooks")]
pub fn set_handoff_hook(hook: Option<fn(HandoffEvent)>) {
    let ptr = hook.map_or(core::ptr::null_mut(), |f| f as *mut ());
    // Release pairs with the Acquire in `fire`.
    HOOK.store(ptr, core::sync::atomic::Ordering::Release);
}

/// Whether a hook is installed: an event whose condition takes a walk of
/// a queue tests this first, so that builds with test hooks but no hook
/// (the examples and benchmarks) do not pay the walk.
#[cfg(feature = "__test-hooks")]
pub(crate) fn installed() -> bool {
    // Relaxed: this only decides whether to compute an event's condition;
    // `fire` loads the hook again, with Acquire, before it calls it.
    !HOOK.load(core::sync::atomic::Ordering::Relaxed).is_null()
}

#[inline(always)]
pub(crate) fn fire(event: HandoffEvent) {
    #[cfg(feature = "__test-hooks")]
    {
        // Acquire pairs with the Release in `set_handoff_hook`.
        let ptr = HOOK.load(core::sync::atomic::Ordering::Acquire);
        if !ptr.is_null() {
            // SAFETY: a non-null value was stored from a
            // `fn(HandoffEvent)`.
            let hook: fn(HandoffEvent) = unsafe { core::mem::transmute(ptr) };
            hook(event);
        }
    }
    #[cfg(not(feature = "__test-hooks"))]
    let _ = event;
}
