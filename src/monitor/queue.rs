//! The object's queue of lock records (paper 000, Fig. 3): the owner's
//! record first, then the threads waiting to enter, notified waiters ahead
//! of contenders; and the bookkeeping of eventual fairness.

use super::{FAIR_AFTER, locked_bits};
use crate::lock_record::{
    HAND_OVER_NEXT, LockRecord, NOT_WAITING, NOTIFIED, PassedOver, record_of,
};
use crate::meta_lock::hooks;
use crate::sys;
use crate::word::{LOCKED, NEUTRAL, QUEUE_SUMMARY, WAITERS, state};

/// Appends `record`, a contender, to the queue headed by `head` (FIFO), in
/// constant time: the head knows the queue's last record.
///
/// # Safety
/// The caller holds the meta-lock of the object whose queue `head` heads;
/// `record` is in no queue, its link null.
pub(super) unsafe fn append_to_queue(head: &LockRecord, record: &LockRecord) {
    let record = record as *const LockRecord as *mut LockRecord;
    // SAFETY: caller's contract; queued records live forever, and a head
    // with a queue behind it knows the last (the record's invariant).
    unsafe {
        debug_assert_last(head);
        debug_assert!(
            (*record).queue().is_null(),
            "a queued record was queued again"
        );
        match head.queue().is_null() {
            true => head.set_queue(record),
            false => (*head.last()).set_queue(record),
        }
        head.set_last(record);
    }
}

/// Checks, in debug builds, that `head`, which heads a queue, knows that
/// queue's last record.
///
/// # Safety
/// The caller holds the meta-lock of the object whose queue `head` heads.
#[inline]
unsafe fn debug_assert_last(head: &LockRecord) {
    // SAFETY: caller's contract.
    unsafe { debug_assert_ends_at(head.queue(), head.last()) }
}

/// Checks, in debug builds, that the queue from `first` (if not null) ends
/// at `last`. Walks the queue: debug builds only.
///
/// # Safety
/// As for [`append_to_queue`]; `first` is in a queue of that object, or
/// null.
#[inline]
pub(super) unsafe fn debug_assert_ends_at(first: *mut LockRecord, last: *mut LockRecord) {
    #[cfg(debug_assertions)]
    // SAFETY: caller's contract; queued records live forever.
    unsafe {
        let mut end = first;
        if end.is_null() {
            return;
        }
        while !(*end).queue().is_null() {
            end = (*end).queue();
        }
        debug_assert_eq!(end, last, "a queue's head lost track of its last record");
    }
    #[cfg(not(debug_assertions))]
    let _ = (first, last);
}

/// Takes `record`, a contender that gives up, out of the queue of the word
/// whose value is `bits` (LOCKED or WAITERS); returns the word's new value.
/// The first record of a WAITERS queue carries the displaced payload, which
/// passes to the next one, or back into the word if none is left.
///
/// # Safety
/// As for [`append_to_queue`]; `record` is in that queue.
pub(super) unsafe fn unlink(bits: usize, record: &LockRecord) -> usize {
    let head = record_of(bits);
    // SAFETY: caller's contract; queued records live forever.
    unsafe {
        debug_assert_last(&*head);
        let rest = record.queue();
        record.set_queue(core::ptr::null_mut());
        if core::ptr::eq(head, record) {
            debug_assert_eq!(state(bits), WAITERS, "an owner's record gave up");
            return match rest.as_ref() {
                None => record.displaced(),
                Some(next) => {
                    next.set_displaced(record.displaced());
                    next.set_last(record.last());
                    hooks::fire(hooks::HandoffEvent::TimedEnterLeftAWaitersHead);
                    rest as usize | WAITERS
                }
            };
        }
        debug_assert!(matches!(state(bits), LOCKED | WAITERS));
        let mut prev = &*head;
        while !core::ptr::eq(prev.queue(), record) {
            // Under the meta-lock a panic would abort anyway, after running
            // the panic hook where it must not lock this word: abort at once.
            prev = match prev.queue().as_ref() {
                Some(next) => next,
                None => sys::abort_with("metalock: a record that gave up was not in its queue"),
            };
        }
        prev.set_queue(rest);
        if rest.is_null() {
            (*head).set_last(prev as *const LockRecord as *mut LockRecord);
        } else if !core::ptr::eq(prev, head) {
            hooks::fire(hooks::HandoffEvent::TimedEnterLeftBetweenTwo);
        }
    }
    // A LOCKED word keeps its queue summary even if the owner is now alone:
    // the bit also tells the owner's fused unlock that the displaced payload
    // may have changed, which nothing here rules out. Until the owner
    // releases the monitor (its last exit, or a wait), which clears it,
    // newcomers queue rather than spin.
    bits
}

/// Queues `record`, a notified waiter, in the queue headed by `owner`,
/// right behind the notified waiters already queued, ahead of the
/// contenders: the state its notifier just made true should still be true
/// when it runs. The first contender it overtakes counts that as being
/// passed over, and one passed over too long stays ahead of it. The search
/// starts at `after`: `owner`, or the waiter that a notify queued last in
/// the owner's current hold (its `last_notified`). So a `notify_all`, or a
/// loop of `notify_one` calls under one hold, walks the queue once, not
/// once per waiter under the meta-lock (with thousands of waiters that walk
/// took longer than waking them all); the records it skips stay skipped, as
/// a notified waiter stays notified and a contender passed over too long
/// stays so.
///
/// Every record ahead of a notified waiter is notified too or passed over
/// too long: a contender joins at the tail, or, one that lost after an
/// invitation, behind such records at least (`requeue_invited`), a notified
/// waiter goes in behind such records only (the waiter that a notify puts
/// ahead of a free monitor's queue leaves it under the same meta-lock), and
/// a queued record stays so (`passed_over` only grows there, and the
/// platform's clock is monotonic). So a queue whose last record is a
/// notified waiter takes the next one at its end, with no walk: a loop of
/// `notify_one` calls under one hold of the monitor (a semaphore releasing
/// many permits) walks nothing while no contender is queued, and with one
/// at the tail it walks from the waiter queued last, past nothing new but
/// the records passed over too long since.
///
/// # Safety
/// As for [`append_to_queue`]; `owner` heads the queue, `after` is
/// `owner` or in its queue, and no record before `after` is a contender
/// that is not passed over too long (checked in debug builds); `record` is
/// in no queue.
pub(super) unsafe fn insert_notified(
    owner: &'static LockRecord,
    after: &'static LockRecord,
    record: &'static LockRecord,
) {
    let skipped = |next: &LockRecord| {
        // SAFETY: caller's contract: `next` is queued on a word whose
        // meta-lock we hold.
        unsafe { next.wait_state() == NOTIFIED || passed_over_too_long(next) }
    };
    // SAFETY: caller's contract; queued records live forever, and `owner`,
    // heading a queue that is not empty, knows its last record (the
    // record's invariant).
    unsafe {
        debug_assert_last(owner);
        #[cfg(debug_assertions)]
        {
            let mut reached = core::ptr::eq(after, owner);
            for next in queue_from(owner) {
                if reached {
                    break;
                }
                assert!(
                    skipped(next),
                    "a notify started its walk behind a contender"
                );
                reached = core::ptr::eq(next, after);
            }
            assert!(
                reached,
                "a notify started its walk outside the owner's queue"
            );
        }
        let last = match owner.queue().is_null() {
            true => None,
            false => Some(&*owner.last()),
        };
        let after = match last {
            Some(last) if last.wait_state() == NOTIFIED => {
                // From the owner, so that the whole claim is checked, not
                // only the part past `after` (the same notify walked the
                // rest); `debug_assert_last` has just walked it all anyway.
                #[cfg(debug_assertions)]
                assert!(
                    queue_from(owner).all(skipped),
                    "a notified waiter was queued behind a contender"
                );
                last
            }
            _ => {
                if !core::ptr::eq(after, owner) {
                    hooks::fire(hooks::HandoffEvent::NotifiedFromLastNotified);
                    #[cfg(feature = "__test-hooks")]
                    if hooks::installed()
                        && queue_from(owner)
                            .take_while(|next| !core::ptr::eq(*next, after))
                            .any(|next| passed_over_too_long(next))
                    {
                        hooks::fire(hooks::HandoffEvent::NotifiedFromLastNotifiedPastAPassedOver);
                    }
                }
                after
            }
        };
        insert_ahead(owner, after, record, skipped);
    }
}

/// Queues `record`, a notified waiter that was invited as the first of the
/// queue (by an exit, or by a notify that found the monitor free) and then
/// lost the monitor to a thread that barged in, first again: behind the
/// records passed over too long only (`record` is one of them now, so the
/// exit that finds it first hands it the monitor). That is its place in the
/// order of the queue, and it costs no walk past the notified waiters
/// behind it: once per lost waiter, that walk made a `notify_all` of
/// thousands of waiters take time quadratic in their number. A contender it
/// overtakes counts that as being passed over, as with `insert_notified`.
///
/// # Safety
/// As for [`append_to_queue`]; `owner` heads the queue; `record` is in no
/// queue and is passed over too long.
pub(super) unsafe fn requeue_first(owner: &LockRecord, record: &LockRecord) {
    let skipped = |next: &LockRecord| {
        // SAFETY: caller's contract: `next` is queued on a word whose
        // meta-lock we hold.
        unsafe { passed_over_too_long(next) }
    };
    // SAFETY: caller's contract; queued records live forever.
    unsafe {
        debug_assert!(passed_over_too_long(record));
        debug_assert_last(owner);
        #[cfg(feature = "__test-hooks")]
        if !owner.last_notified().is_null() {
            hooks::fire(hooks::HandoffEvent::NotifiedWaiterLostAheadOfLastNotified);
        }
        insert_ahead(owner, owner, record, skipped);
    }
}

/// Queues `record`, a contender that an exit invited and that then lost the
/// monitor to a thread that barged in, back at its place: behind the
/// notified waiters, the records passed over too long and the contenders
/// that lost before it did (an older claim: two threads invited by
/// successive exits may come back in either order), ahead of the others.
/// At the tail it would lose a whole trip through the queue per loss, and
/// in a queue that takes longer than `FAIR_AFTER` to go round, every such
/// thread would be passed over too long by its second loss: a fifth of the
/// acquisitions of a thousand threads each taking one monitor ten times for
/// 20 µs were hand-overs, against one in twenty-five now (the time taken
/// did not change: there nearly every acquisition blocks, with
/// parking_lot's too). At the front, the losses that count are the first
/// contender's, close to parking_lot's one timer per bucket of locks. The
/// walk passes only the records named above: none when the thread was
/// invited (it was first), so only those a notify queued since, those
/// passed over too long meanwhile, and the few invited with it.
///
/// # Safety
/// As for [`append_to_queue`]; `owner` heads the queue; `record` is in no
/// queue, is not a notified waiter, and has its first loss noted.
pub(super) unsafe fn requeue_invited(owner: &LockRecord, record: &LockRecord) {
    // SAFETY: caller's contract (the record is ours and in no queue).
    let since = unsafe { record.passed_over().since };
    let skipped = |next: &LockRecord| {
        // SAFETY: caller's contract: `next` is queued on a word whose
        // meta-lock we hold.
        unsafe {
            next.wait_state() == NOTIFIED
                || passed_over_too_long(next)
                || next
                    .passed_over()
                    .since
                    .is_some_and(|first| Some(first) <= since)
        }
    };
    // SAFETY: caller's contract; queued records live forever.
    unsafe {
        debug_assert_last(owner);
        let prev = end_of_run(owner, skipped);
        if !core::ptr::eq(prev, owner) {
            hooks::fire(hooks::HandoffEvent::ContenderRequeuedBehind);
            if prev.wait_state() != NOTIFIED
                && prev
                    .passed_over()
                    .since
                    .is_some_and(|first| Some(first) <= since)
            {
                hooks::fire(hooks::HandoffEvent::ContenderRequeuedBehindALoser);
            }
        }
        link_behind(owner, prev, record);
        #[cfg(debug_assertions)]
        assert!(
            queue_from(record).all(|next| next.wait_state() != NOTIFIED
                && next
                    .passed_over()
                    .since
                    .is_none_or(|first| Some(first) >= since)),
            "a contender went back ahead of a notified waiter or of one that lost before it"
        );
    }
}

/// Links `record` into the queue headed by `owner` as a notified waiter,
/// behind `after` and the records after it that `skipped` passes; the
/// contender it then stands ahead of counts that as being passed over.
///
/// # Safety
/// As for [`append_to_queue`]; `owner` heads the queue, `after` is in it;
/// `record` is in no queue.
unsafe fn insert_ahead(
    owner: &LockRecord,
    after: &LockRecord,
    record: &LockRecord,
    skipped: impl Fn(&LockRecord) -> bool,
) {
    // SAFETY: caller's contract; queued records live forever.
    unsafe {
        let prev = end_of_run(after, skipped);
        if let Some(next) = prev.queue().as_ref()
            && next.wait_state() != NOTIFIED
        {
            note_overtaken(next);
        }
        record.set_wait_state(NOTIFIED);
        link_behind(owner, prev, record);
    }
}

/// The last record of the run behind `after` that `skipped` passes, or
/// `after` if it passes none.
///
/// # Safety
/// As for [`append_to_queue`]; `after` is in a queue of that object, or
/// heads it.
unsafe fn end_of_run(after: &LockRecord, skipped: impl Fn(&LockRecord) -> bool) -> &LockRecord {
    let mut prev = after;
    // SAFETY: caller's contract; queued records live forever.
    while let Some(next) = unsafe { prev.queue().as_ref() } {
        if !skipped(next) {
            break;
        }
        prev = next;
    }
    prev
}

/// Links `record` behind `prev` in the queue headed by `owner`.
///
/// # Safety
/// As for [`append_to_queue`]; `owner` heads the queue, `prev` is in it or
/// is `owner`; `record` is in no queue.
unsafe fn link_behind(owner: &LockRecord, prev: &LockRecord, record: &LockRecord) {
    // SAFETY: caller's contract.
    unsafe {
        record.set_queue(prev.queue());
        prev.set_queue(record as *const LockRecord as *mut LockRecord);
        if record.queue().is_null() {
            owner.set_last(record as *const LockRecord as *mut LockRecord);
        }
    }
}

/// Whether the word value `bits` shows no queue to enter: NEUTRAL, or
/// LOCKED without the summary bit, which every path that queues a record
/// behind an owner sets (in every build). Reads nothing through `bits`.
#[inline]
pub(crate) fn shows_no_queue(bits: usize) -> bool {
    state(bits) == NEUTRAL || (state(bits) == LOCKED && bits & QUEUE_SUMMARY == 0)
}

/// How many records are queued to enter at `bits`, the word's value: none
/// in NEUTRAL, those behind the owner's in LOCKED, and in WAITERS all of
/// them (the invited thread on its way to the monitor is no longer queued).
/// Walks the queue: its length in record reads.
///
/// # Safety
/// `bits` is NEUTRAL, or the value of a word whose meta-lock the caller
/// holds.
pub(super) unsafe fn queued_at(bits: usize) -> usize {
    // SAFETY: caller's contract; queued records live forever.
    let next = |record: &&LockRecord| unsafe { record.queue().as_ref() };
    // SAFETY: as `first_queued_at`'s, which is ours.
    core::iter::successors(unsafe { first_queued_at(bits).as_ref() }, next).count()
}

/// Whether a record is queued to enter at `bits` (`queued_at(bits) > 0`),
/// with no walk: one record read at most.
///
/// # Safety
/// As for `queued_at`.
pub(super) unsafe fn has_queue_at(bits: usize) -> bool {
    // SAFETY: caller's contract.
    !unsafe { first_queued_at(bits) }.is_null()
}

/// The first record queued to enter at `bits` (null if none): behind the
/// owner's in LOCKED, the word's in WAITERS.
///
/// # Safety
/// As for `queued_at`.
unsafe fn first_queued_at(bits: usize) -> *const LockRecord {
    match state(bits) {
        // SAFETY: caller's contract: a LOCKED word points at the owner's
        // record, whose queue is stable under the meta-lock.
        LOCKED => unsafe { (*record_of(bits)).queue() },
        WAITERS => record_of(bits),
        _ => core::ptr::null(),
    }
}

/// The records queued behind `record`, in order (debug checks and the
/// test hooks' events only).
///
/// # Safety
/// As for [`append_to_queue`], for as long as the iterator is used;
/// `record` is in a queue of that object.
#[cfg(any(debug_assertions, feature = "__test-hooks"))]
unsafe fn queue_from(record: &LockRecord) -> impl Iterator<Item = &LockRecord> {
    // SAFETY: caller's contract; queued records live forever.
    let next = |record: &LockRecord| unsafe { record.queue().as_ref() };
    core::iter::successors(next(record), move |record| next(record))
}

/// Counts, for a contender that a notified waiter overtakes, one more time
/// it was passed over (see `passed_over_too_long`).
///
/// # Safety
/// As for [`passed_over_too_long`].
unsafe fn note_overtaken(contender: &LockRecord) {
    // SAFETY: caller's contract (the record's invariant).
    unsafe {
        let passed_over = contender.passed_over();
        contender.set_passed_over(PassedOver {
            since: passed_over.since.or_else(|| Some(sys::get().now())),
            times: passed_over.times.saturating_add(1),
        });
    }
}

/// Whether `record`, queued to enter, has been passed over too long: it is
/// a notified waiter that already lost the monitor once after being woken,
/// or it lost the monitor after invitations (or was overtaken by notified
/// waiters) at least twice, the first time `FAIR_AFTER` ago or more. Under
/// loom the time counts as passed, so that the models see this same rule (a
/// contender passed over once invited again, one passed over twice handed
/// the monitor) without the clock.
///
/// Reads the clock, under the meta-lock, for a record passed over twice or
/// more and not yet marked to be handed the monitor: a `notify_all` that
/// queues n waiters ahead of such a contender reads it up to n times (an
/// invited contender reads it before the meta-lock, see `Entry::Invited`).
///
/// # Safety
/// The caller holds the meta-lock of the object whose queue held `record`.
pub(super) unsafe fn passed_over_too_long(record: &LockRecord) -> bool {
    // SAFETY: caller's contract (the record's invariant).
    let passed_over = unsafe { record.passed_over() };
    if passed_over.times == HAND_OVER_NEXT {
        return true;
    }
    match passed_over.since {
        Some(since) if passed_over.times >= 2 => {
            cfg!(metalock_model) || sys::get().now().saturating_duration_since(since) >= FAIR_AFTER
        }
        _ => false,
    }
}

/// Makes `heir`, an entrant taken out of the queue, the owner of a monitor
/// whose payload `displaced` is, with `rest` queued behind it (`last` its
/// last record, if any); returns the word's new value.
///
/// # Safety
/// As for [`passed_over_too_long`]; `rest` is the rest of that queue.
pub(super) unsafe fn make_heir(
    heir: &LockRecord,
    rest: *mut LockRecord,
    last: *mut LockRecord,
    displaced: usize,
) -> usize {
    // SAFETY: caller's contract.
    unsafe {
        debug_assert!(
            heir.last_notified().is_null(),
            "a record kept a notified waiter from an earlier hold"
        );
        heir.set_queue(rest);
        heir.set_last(last);
        heir.set_displaced(displaced);
        heir.set_wait_state(NOT_WAITING);
        heir.set_passed_over(PassedOver::default());
    }
    let summary = if rest.is_null() { 0 } else { QUEUE_SUMMARY };
    locked_bits(heir) | summary
}

#[cfg(all(test, not(metalock_model)))]
mod tests {
    use super::*;
    use crate::word::BUSY;

    /// `queued_at` counts the records behind a LOCKED word's owner, every
    /// record of a WAITERS word, and nothing of a NEUTRAL one; `has_queue_at`
    /// agrees with it being above 0.
    #[test]
    fn queued_at_counts_the_records_waiting_to_enter() {
        let records: [LockRecord; 3] = core::array::from_fn(|_| LockRecord::new(0));
        let at = |i: usize| &records[i] as *const LockRecord as *mut LockRecord;
        // SAFETY: the records are this test's, published to nobody.
        unsafe {
            records[0].set_queue(at(1));
            records[1].set_queue(at(2));
        }
        let bits = |i: usize, state: usize| at(i) as usize | state;
        let words = [
            (bits(0, LOCKED | QUEUE_SUMMARY), 2),
            (bits(1, LOCKED | QUEUE_SUMMARY), 1),
            (bits(2, LOCKED), 0),
            // The summary outlives a queue (a timed contender gone, a
            // payload set while locked).
            (bits(2, LOCKED | QUEUE_SUMMARY), 0),
            (bits(0, WAITERS), 3),
            (bits(2, WAITERS), 1),
            (NEUTRAL | 0b1000, 0),
        ];
        for (word, queued) in words {
            // SAFETY: nobody else sees the records, as a meta-lock would
            // ensure.
            unsafe {
                assert_eq!(queued_at(word), queued, "{word:#x}");
                assert_eq!(has_queue_at(word), queued > 0, "{word:#x}");
            }
        }
        assert!(shows_no_queue(NEUTRAL | 0b1000));
        assert!(shows_no_queue(bits(0, LOCKED)));
        assert!(!shows_no_queue(bits(0, LOCKED | QUEUE_SUMMARY)));
        assert!(!shows_no_queue(bits(0, WAITERS)));
        assert!(!shows_no_queue(bits(0, BUSY)));
    }
}
