//! The object's queue of lock records (paper 000, Fig. 3) and the policy
//! choices made on it: which contender an exit invites, and when it hands
//! the monitor over instead (eventual fairness).

use core::ptr;

use super::{FAIR_AFTER, locked_bits};
use crate::lock_record::{LockRecord, NOT_WAITING, NOTIFIED, PassedOver, record_of};
use crate::sys;
use crate::word::{QUEUE_SUMMARY, WAITERS, WAITING_SUMMARY, state};

/// Appends `record` to the queue headed by `head` (FIFO).
///
/// # Safety
/// The caller holds the meta-lock of the object whose queue `head` heads.
pub(super) unsafe fn append_to_queue(head: &LockRecord, record: &LockRecord) {
    let record = record as *const LockRecord as *mut LockRecord;
    let mut last = head;
    // SAFETY: caller's contract; queued records live forever.
    unsafe {
        while let Some(next) = last.queue().as_ref() {
            last = next;
        }
        last.set_queue(record);
    }
}

/// Removes `record` from the queue headed by `head`, where it is not first.
///
/// # Safety
/// As for [`append_to_queue`].
unsafe fn unlink_from_queue(head: *mut LockRecord, record: &LockRecord) {
    // SAFETY: caller's contract; queued records live forever.
    unsafe {
        let mut prev = &*head;
        loop {
            let next = prev.queue();
            assert!(
                !next.is_null(),
                "metalock: lock record missing from its queue"
            );
            if ptr::eq(next, record) {
                prev.set_queue(record.queue());
                return;
            }
            prev = &*next;
        }
    }
}

/// The first notified waiter and the first contender of the chain starting
/// at `first`: the candidates an exit chooses from.
///
/// # Safety
/// As for [`append_to_queue`].
pub(super) unsafe fn first_entrants(
    first: *mut LockRecord,
) -> (Option<&'static LockRecord>, Option<&'static LockRecord>) {
    let (mut notified, mut contender) = (None, None);
    let mut q = first;
    // SAFETY: caller's contract; records live forever.
    unsafe {
        while let Some(r) = q.as_ref() {
            match r.wait_state() {
                NOTIFIED if notified.is_none() => notified = Some(r),
                NOT_WAITING if contender.is_none() => contender = Some(r),
                _ => {}
            }
            if notified.is_some() && contender.is_some() {
                break;
            }
            q = r.queue();
        }
    }
    (notified, contender)
}

/// Takes `record` out of the chain starting at `*first`; `*first` becomes
/// the chain's new start.
///
/// # Safety
/// As for [`append_to_queue`]; `record` is in the chain.
pub(super) unsafe fn take_out_of(first: &mut *mut LockRecord, record: &LockRecord) {
    // SAFETY: caller's contract.
    unsafe {
        if ptr::eq(*first, record) {
            *first = record.queue();
        } else {
            unlink_from_queue(*first, record);
        }
        record.set_queue(ptr::null_mut());
    }
}

/// Counts, for a contender that an exit passes by in favour of a notified
/// waiter, one more time it was passed over (see `passed_over_too_long`).
///
/// # Safety
/// As for [`passed_over_too_long`].
pub(super) unsafe fn note_overtaken(contender: &LockRecord) {
    // SAFETY: caller's contract (the record's invariant).
    unsafe {
        let passed_over = contender.passed_over();
        contender.set_passed_over(PassedOver {
            since: passed_over.since.or_else(|| Some(sys::get().now())),
            times: passed_over.times.saturating_add(1),
        });
    }
}

/// Marks as notified the records of the chain starting at `first` that wait
/// on `wait_set` (`WAITING`, or a condition's address): the one that has
/// waited longest, or all of them. Returns how many it marked and how many
/// still wait on `wait_set`.
///
/// Waiters sit in a queue newest first (a thread that waits keeps its record
/// in front, and the next owner's goes before it), so the last one has
/// waited longest: `notify_one` marks it, so that new waiters cannot starve
/// it. That walks the whole queue, which is no longer than the number of
/// threads.
///
/// # Safety
/// As for [`append_to_queue`].
pub(super) unsafe fn mark_notified(
    first: *mut LockRecord,
    wait_set: usize,
    all: bool,
) -> (usize, usize) {
    let mut oldest = None;
    let mut waiting = 0;
    let mut marked = 0;
    // SAFETY: caller's contract; records live forever.
    unsafe {
        let mut q = first;
        while let Some(r) = q.as_ref() {
            if r.wait_state() == wait_set {
                waiting += 1;
                if all {
                    r.set_wait_state(NOTIFIED);
                    marked += 1;
                } else {
                    oldest = Some(r);
                }
            }
            q = r.queue();
        }
        if let Some(r) = oldest {
            r.set_wait_state(NOTIFIED);
            marked = 1;
        }
    }
    (marked, waiting - marked)
}

/// Whether some record of the chain starting at `first` waits on
/// `wait_set`.
///
/// # Safety
/// As for [`append_to_queue`].
pub(super) unsafe fn has_waiters(first: *mut LockRecord, wait_set: usize) -> bool {
    let mut q = first;
    // SAFETY: caller's contract; records live forever.
    unsafe {
        while let Some(r) = q.as_ref() {
            if r.wait_state() == wait_set {
                return true;
            }
            q = r.queue();
        }
    }
    false
}

/// Whether `record`, a contender just taken out of a queue, has lost the
/// monitor to other threads after invitations at least twice, the first
/// time `FAIR_AFTER` ago or more. Under loom the time counts as passed, so
/// that the models see this same rule (a contender passed over once invited
/// again, one passed over twice handed the monitor) without the clock.
///
/// # Safety
/// The caller holds the meta-lock of the object whose queue held `record`.
pub(super) unsafe fn passed_over_too_long(record: &LockRecord) -> bool {
    // SAFETY: caller's contract (the record's invariant).
    let passed_over = unsafe { record.passed_over() };
    match passed_over.since {
        Some(since) if passed_over.times >= 2 => {
            cfg!(loom) || sys::get().now().saturating_duration_since(since) >= FAIR_AFTER
        }
        _ => false,
    }
}

/// Makes `heir`, an entrant taken out of the queue, the owner of a monitor
/// whose payload `displaced` is, with `rest` queued behind it; returns the
/// word's new value. `waiting` is the `WAITING_SUMMARY` of `rest`.
///
/// # Safety
/// As for [`passed_over_too_long`]; `rest` is the rest of that queue.
pub(super) unsafe fn make_heir(
    heir: &LockRecord,
    rest: *mut LockRecord,
    displaced: usize,
    waiting: usize,
) -> usize {
    // SAFETY: caller's contract.
    unsafe {
        heir.set_queue(rest);
        heir.set_displaced(displaced);
        heir.set_wait_state(NOT_WAITING);
        heir.set_passed_over(PassedOver::default());
    }
    let summaries = if rest.is_null() {
        0
    } else {
        QUEUE_SUMMARY | waiting
    };
    locked_bits(heir) | summaries
}

/// Takes `record` out of the queue of a word whose value under the
/// meta-lock is `bits`, and returns the word's new value: a waiter whose
/// time ran out leaves the queue before it re-contends.
///
/// # Safety
/// The caller holds the meta-lock at `bits` (LOCKED by another thread, or
/// WAITERS), and `record` is in the queue.
pub(super) unsafe fn remove_from_queue(bits: usize, record: &LockRecord) -> usize {
    let head = record_of(bits);
    // SAFETY: caller's contract; records live forever.
    unsafe {
        let bits = if ptr::eq(head, record) {
            debug_assert_eq!(state(bits), WAITERS, "an owner is never queued");
            match record.queue().as_ref() {
                None => record.displaced(),
                Some(next) => {
                    next.set_displaced(record.displaced());
                    next as *const LockRecord as usize | WAITERS | (bits & WAITING_SUMMARY)
                }
            }
        } else {
            unlink_from_queue(head, record);
            bits
        };
        record.set_queue(ptr::null_mut());
        bits
    }
}
