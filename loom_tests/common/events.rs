//! The monitor-level hook events the models count (`MonitorHandedOver`,
//! `HandedOverAsATimedParkEnded`,
//! `NotifiedWaiterLost`, `NotifiedWaiterLostAheadOfLastNotified`,
//! `ContenderPassedOver`, `ContenderRequeuedBehind`,
//! `ContenderRequeuedBehindALoser`, `NotifiedAheadOfQueue`,
//! `NotifiedQueuedBehindInvited`, `NotifiedFromLastNotified`,
//! `NotifiedFromLastNotifiedPastAPassedOver`,
//! `TimedEnterLeftBetweenTwo`, `TimedEnterLeftAWaitersHead`,
//! `TimedEnterSettled`, `PayloadSetAtAQueuesHead`,
//! `OverflowMarkAtAQueuesHead`, `WaitEndedInItsSpin`)
//! and the meta-lock's `WokeEarly`, so that a model can assert that its
//! executions reached the path it names; and which model threads won a
//! meta-lock hand-off's race as successor (`PredecessorWon`) and have not
//! yet unparked their predecessor (`SuccessorGotIt` follows the unpark).
//! Included by path from the model files that count them.
//! (`meta_lock.rs` counts its hand-off events itself, per execution.)

// Each model file that includes this module counts some of the events, so
// each sees some of it unused.
#![allow(dead_code)]

use std::cell::Cell;

pub use metalock::__test_hooks::GiveUp;
use metalock::__test_hooks::{HandoffEvent, set_handoff_hook};

/// Monitor-level hook events counted so far on the calling thread.
#[derive(Clone, Copy, Debug)]
pub struct Events {
    /// Exits that handed the monitor over (`MonitorHandedOver`).
    pub handed_over: usize,
    /// Timed parks that reported a timeout after an exit had handed their
    /// thread the monitor (`HandedOverAsATimedParkEnded`).
    pub handed_over_as_a_timed_park_ended: usize,
    /// Notified waiters that lost the monitor once invited
    /// (`NotifiedWaiterLost`).
    pub notified_lost: usize,
    /// Of those, the ones that went back ahead of a waiter a notify had
    /// queued in the owner's hold (`NotifiedWaiterLostAheadOfLastNotified`).
    pub notified_lost_ahead_of_last_notified: usize,
    /// Invited contenders that lost the monitor (`ContenderPassedOver`).
    pub passed_over: usize,
    /// Invited contenders that lost and went back behind records they do
    /// not pass (`ContenderRequeuedBehind`).
    pub requeued_behind: usize,
    /// Of those, the ones that went back behind a contender that had lost
    /// before them (`ContenderRequeuedBehindALoser`).
    pub requeued_behind_a_loser: usize,
    /// Waiters a notify put ahead of the queue of a free monitor
    /// (`NotifiedAheadOfQueue`).
    pub notified_ahead: usize,
    /// `notify_all`s that found the monitor NEUTRAL and queued waiters
    /// behind the one they invited (`NotifiedQueuedBehindInvited`).
    pub queued_behind_invited: usize,
    /// Notifies that queued their waiter ahead of a contender from the
    /// waiter queued last in the owner's hold (`NotifiedFromLastNotified`).
    pub from_last_notified: usize,
    /// Of those, the walks that started behind a record passed over too
    /// long (`NotifiedFromLastNotifiedPastAPassedOver`).
    pub from_last_notified_past_a_passed_over: usize,
    /// Timed enters that left their queue from between two records, neither
    /// the head (`TimedEnterLeftBetweenTwo`).
    pub left_between_two: usize,
    /// Timed enters that left the head of a WAITERS queue with a record
    /// behind, passing it the displaced payload (`TimedEnterLeftAWaitersHead`).
    pub left_a_waiters_head: usize,
    /// Timed enters whose time ran out, by how they settled
    /// (`TimedEnterSettled`), in the order of `GIVE_UPS`.
    pub gave_up: [usize; 5],
    /// `set_payload`s that wrote the payload into the head of a WAITERS
    /// queue (`PayloadSetAtAQueuesHead`).
    pub payload_set_at_head: usize,
    /// Overflow marks of a home cleared (`[0]`) and set (`[1]`) in the
    /// head of a WAITERS queue (`OverflowMarkAtAQueuesHead`).
    pub overflow_mark_at_head: [usize; 2],
    /// Meta-lock hand-off parks that came back before their part was done
    /// (`WokeEarly`): on a token a monitor's unpark left, or spuriously.
    pub woke_early: usize,
    /// Waits that ended while they spun, in executions that let waits
    /// spin (`WaitEndedInItsSpin`): invited (`[0]`), handed the monitor
    /// (`[1]`), interrupted (`[2]`).
    pub ended_in_spin: [usize; 3],
}

/// The ways a timed enter whose time ran out settles.
const GIVE_UPS: [GiveUp; 5] = [
    GiveUp::HandedOver,
    GiveUp::LeftTheQueueAndTookIt,
    GiveUp::LeftTheQueue,
    GiveUp::InvitedAndTookIt,
    GiveUp::InvitedAndGaveUp,
];

impl Events {
    /// How many waits ended in their spin since `before`, each way:
    /// invited, handed the monitor, interrupted.
    pub fn ended_in_spin_since(&self, before: &Events) -> [usize; 3] {
        [0, 1, 2].map(|i| self.ended_in_spin[i] - before.ended_in_spin[i])
    }

    /// How many timed enters settled in each way since `before`.
    pub fn gave_up_since(&self, before: &Events) -> Vec<(GiveUp, usize)> {
        GIVE_UPS
            .iter()
            .zip(self.gave_up.iter().zip(before.gave_up))
            .map(|(&way, (now, then))| (way, now - then))
            .collect()
    }
}

/// Prints how the waits of the model `name` that ended in their spin since
/// `before` ended, and asserts that some execution saw its invitation and
/// some its interrupt there.
pub fn spins_saw_a_notify_and_an_interrupt(name: &str, before: &Events) {
    let [invited, handed_over, interrupted] = events().ended_in_spin_since(before);
    println!(
        "{name}: spins that saw an invitation {invited}, a hand-over {handed_over}, \
         the interrupt {interrupted}"
    );
    assert!(invited > 0, "{name}: no spin saw its invitation");
    assert!(interrupted > 0, "{name}: no spin saw its interrupt");
}

/// Prints how the timed enters of the model `name` settled, and asserts
/// that some execution settled in each of `ways`.
pub fn settled_in_every_way(name: &str, now: &Events, before: &Events, ways: &[GiveUp]) {
    let settled = now.gave_up_since(before);
    println!(
        "{name}: timed enters settled {settled:?}; {} hand-off parks woke early",
        now.woke_early - before.woke_early
    );
    for way in ways {
        assert!(
            settled.iter().any(|&(w, n)| w == *way && n > 0),
            "{name}: no timed enter settled as {way:?}"
        );
    }
}

/// Asserts that some execution of the model `name` had a meta-lock
/// hand-off park come back before its part was done and park again (on the
/// swap-only backend the meta-lock hands nothing off).
pub fn a_park_woke_early(name: &str, now: &Events, before: &Events) {
    if !cfg!(metalock_swap_only) {
        assert!(
            now.woke_early > before.woke_early,
            "{name}: no hand-off park woken early was explored"
        );
    }
}

/// The events of the models run so far on the calling thread. Loom runs a
/// model's threads as coroutines on the test's own thread, so thread-locals
/// count the events of one test's executions only, while the hook
/// (process-wide, the same for every test) is installed here.
pub fn events() -> Events {
    std::thread_local! {
        static HANDED_OVER: Cell<usize> = const { Cell::new(0) };
        static HANDED_OVER_AS_A_TIMED_PARK_ENDED: Cell<usize> = const { Cell::new(0) };
        static NOTIFIED_LOST: Cell<usize> = const { Cell::new(0) };
        static NOTIFIED_LOST_AHEAD_OF_LAST_NOTIFIED: Cell<usize> = const { Cell::new(0) };
        static PASSED_OVER: Cell<usize> = const { Cell::new(0) };
        static REQUEUED_BEHIND: Cell<usize> = const { Cell::new(0) };
        static REQUEUED_BEHIND_A_LOSER: Cell<usize> = const { Cell::new(0) };
        static NOTIFIED_AHEAD: Cell<usize> = const { Cell::new(0) };
        static QUEUED_BEHIND_INVITED: Cell<usize> = const { Cell::new(0) };
        static FROM_LAST_NOTIFIED: Cell<usize> = const { Cell::new(0) };
        static FROM_LAST_NOTIFIED_PAST_A_PASSED_OVER: Cell<usize> = const { Cell::new(0) };
        static LEFT_BETWEEN_TWO: Cell<usize> = const { Cell::new(0) };
        static LEFT_A_WAITERS_HEAD: Cell<usize> = const { Cell::new(0) };
        static GAVE_UP: Cell<[usize; 5]> = const { Cell::new([0; 5]) };
        static PAYLOAD_SET_AT_HEAD: Cell<usize> = const { Cell::new(0) };
        static OVERFLOW_MARK_AT_HEAD: Cell<[usize; 2]> = const { Cell::new([0; 2]) };
        static WOKE_EARLY: Cell<usize> = const { Cell::new(0) };
        static ENDED_IN_SPIN: Cell<[usize; 3]> = const { Cell::new([0; 3]) };
    }
    fn count(event: HandoffEvent) {
        let counter = match event {
            HandoffEvent::PredecessorWon => {
                OWES_AN_UNPARK.with(|owes| owes.set(true));
                UNPARK_DEBTS.with(|debts| {
                    let mut now = debts.get();
                    now.incurred += 1;
                    debts.set(now);
                });
                return;
            }
            HandoffEvent::SuccessorGotIt => {
                if OWES_AN_UNPARK.with(|owes| owes.replace(false)) {
                    UNPARK_DEBTS.with(|debts| {
                        let mut now = debts.get();
                        now.paid += 1;
                        debts.set(now);
                    });
                }
                return;
            }
            HandoffEvent::MonitorHandedOver => &HANDED_OVER,
            HandoffEvent::HandedOverAsATimedParkEnded => &HANDED_OVER_AS_A_TIMED_PARK_ENDED,
            HandoffEvent::NotifiedWaiterLost => {
                LOSERS.with(|losers| losers.borrow_mut().push(loom::thread::current().id()));
                &NOTIFIED_LOST
            }
            HandoffEvent::NotifiedWaiterLostAheadOfLastNotified => {
                &NOTIFIED_LOST_AHEAD_OF_LAST_NOTIFIED
            }
            HandoffEvent::ContenderPassedOver => &PASSED_OVER,
            HandoffEvent::ContenderRequeuedBehind => &REQUEUED_BEHIND,
            HandoffEvent::ContenderRequeuedBehindALoser => &REQUEUED_BEHIND_A_LOSER,
            HandoffEvent::NotifiedAheadOfQueue => &NOTIFIED_AHEAD,
            HandoffEvent::NotifiedQueuedBehindInvited => &QUEUED_BEHIND_INVITED,
            HandoffEvent::NotifiedFromLastNotified => &FROM_LAST_NOTIFIED,
            HandoffEvent::NotifiedFromLastNotifiedPastAPassedOver => {
                &FROM_LAST_NOTIFIED_PAST_A_PASSED_OVER
            }
            HandoffEvent::TimedEnterLeftBetweenTwo => &LEFT_BETWEEN_TWO,
            HandoffEvent::TimedEnterLeftAWaitersHead => &LEFT_A_WAITERS_HEAD,
            HandoffEvent::WokeEarly => &WOKE_EARLY,
            HandoffEvent::PayloadSetAtAQueuesHead => &PAYLOAD_SET_AT_HEAD,
            HandoffEvent::WaitEndedInItsSpin(end) => {
                ENDED_IN_SPIN.with(|n| {
                    let mut counts = n.get();
                    counts[end as usize] += 1;
                    n.set(counts);
                });
                return;
            }
            HandoffEvent::OverflowMarkAtAQueuesHead(set) => {
                OVERFLOW_MARK_AT_HEAD.with(|n| {
                    let mut counts = n.get();
                    counts[usize::from(set)] += 1;
                    n.set(counts);
                });
                return;
            }
            HandoffEvent::TimedEnterSettled(way) => {
                let i = GIVE_UPS.iter().position(|&w| w == way).unwrap();
                GAVE_UP.with(|n| {
                    let mut counts = n.get();
                    counts[i] += 1;
                    n.set(counts);
                });
                return;
            }
            _ => return,
        };
        counter.with(|n| n.set(n.get() + 1));
    }
    set_handoff_hook(Some(count));
    Events {
        handed_over: HANDED_OVER.with(Cell::get),
        handed_over_as_a_timed_park_ended: HANDED_OVER_AS_A_TIMED_PARK_ENDED.with(Cell::get),
        notified_lost: NOTIFIED_LOST.with(Cell::get),
        notified_lost_ahead_of_last_notified: NOTIFIED_LOST_AHEAD_OF_LAST_NOTIFIED.with(Cell::get),
        passed_over: PASSED_OVER.with(Cell::get),
        requeued_behind: REQUEUED_BEHIND.with(Cell::get),
        requeued_behind_a_loser: REQUEUED_BEHIND_A_LOSER.with(Cell::get),
        notified_ahead: NOTIFIED_AHEAD.with(Cell::get),
        queued_behind_invited: QUEUED_BEHIND_INVITED.with(Cell::get),
        from_last_notified: FROM_LAST_NOTIFIED.with(Cell::get),
        from_last_notified_past_a_passed_over: FROM_LAST_NOTIFIED_PAST_A_PASSED_OVER
            .with(Cell::get),
        left_between_two: LEFT_BETWEEN_TWO.with(Cell::get),
        left_a_waiters_head: LEFT_A_WAITERS_HEAD.with(Cell::get),
        gave_up: GAVE_UP.with(Cell::get),
        payload_set_at_head: PAYLOAD_SET_AT_HEAD.with(Cell::get),
        overflow_mark_at_head: OVERFLOW_MARK_AT_HEAD.with(Cell::get),
        woke_early: WOKE_EARLY.with(Cell::get),
        ended_in_spin: ENDED_IN_SPIN.with(Cell::get),
    }
}

loom::thread_local! {
    /// Whether this model thread won a hand-off's race as successor
    /// (`PredecessorWon`) and has not yet unparked its predecessor.
    static OWES_AN_UNPARK: Cell<bool> = Cell::new(false);
}

std::thread_local! {
    /// The model threads that lost the monitor as notified waiters, in the
    /// order they went back into the queue (`NotifiedWaiterLost`).
    static LOSERS: std::cell::RefCell<Vec<loom::thread::ThreadId>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The model threads that lost the monitor as notified waiters since the
/// last call, in the order they went back into the queue; counted once
/// `events` has installed the hook.
pub fn take_losers() -> Vec<loom::thread::ThreadId> {
    LOSERS.with(|losers| losers.take())
}

std::thread_local! {
    /// The unparks the model threads came to owe, and paid, so far (see
    /// `OWES_AN_UNPARK`): loom runs them all on the test's thread.
    static UNPARK_DEBTS: Cell<UnparkDebts> = const {
        Cell::new(UnparkDebts { incurred: 0, paid: 0 })
    };
}

/// Meta-lock successors that won their hand-off's race (`PredecessorWon`)
/// and so owe their predecessor an unpark, and those that paid it
/// (`SuccessorGotIt`), counted since the test began once `events` has
/// installed the hook. A predecessor may return, end and leave its EE to
/// another thread before its debt is paid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnparkDebts {
    pub incurred: usize,
    pub paid: usize,
}

impl UnparkDebts {
    /// The counts so far.
    pub fn now() -> Self {
        UNPARK_DEBTS.with(Cell::get)
    }

    /// Whether some unpark is owed.
    pub fn owed(&self) -> bool {
        self.incurred > self.paid
    }
}

/// How many of a model's executions reached each of `N` outcomes: the
/// model records the ones each execution reached (its closure owns a
/// clone), then asserts that the outcomes it names were all reached.
#[derive(Clone)]
pub struct Outcomes<const N: usize> {
    labels: [&'static str; N],
    counts: std::sync::Arc<std::sync::Mutex<[usize; N]>>,
}

impl<const N: usize> Outcomes<N> {
    pub fn new(labels: [&'static str; N]) -> Self {
        Self {
            labels,
            counts: std::sync::Arc::new(std::sync::Mutex::new([0; N])),
        }
    }

    /// Counts one execution that reached outcome `i`.
    pub fn record(&self, i: usize) {
        self.counts.lock().unwrap()[i] += 1;
    }

    /// Prints each outcome's count for the model `name`, and asserts that
    /// each outcome in `required` was reached.
    pub fn assert_reached(&self, name: &str, required: &[usize]) {
        let counts = *self.counts.lock().unwrap();
        let shown: Vec<String> = (0..N)
            .map(|i| format!("{} {}", self.labels[i], counts[i]))
            .collect();
        println!("{name}: executions: {}", shown.join(", "));
        for &i in required {
            assert!(counts[i] > 0, "{name}: no execution {}", self.labels[i]);
        }
    }
}
