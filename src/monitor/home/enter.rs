//! The keyed enter through a home: the extra-fast path (one
//! compare-and-swap, rekeying an idle home), the spin, and the path through
//! the meta-lock that pins the home or sends the address to the overflow
//! table.

use crate::exec_env::ExecEnv;
use crate::exec_env::interrupt::Interrupt;
use crate::lock_record::{LockRecord, record_of};
use crate::primitive::Ordering;
#[cfg(not(metalock_swap_only))]
use crate::word::QUEUE_SUMMARY;
use crate::word::{LOCKED, NEUTRAL, state};

#[cfg(not(metalock_swap_only))]
use super::FLAGS;
use super::{Home, Keyed, OVERFLOW, PINNED, Patience, key_part, neutral_form, set_neutral_form};
use crate::monitor::enter::Entry;
#[cfg(not(metalock_swap_only))]
use crate::monitor::profile::Profile;
#[cfg(not(metalock_swap_only))]
use crate::monitor::{EXTRA_FAST, locked_bits};
use crate::monitor::{enter_again, owner_is};

impl Home {
    /// The extra-fast keyed enter: takes the monitor for the key whose
    /// NEUTRAL form is `key` in one compare-and-swap, from an idle home of
    /// that key or from an idle, unflagged home of another (rekeying it);
    /// or enters again a monitor the thread owns for this key. `None`: take
    /// `enter_slow`.
    #[cfg(not(metalock_swap_only))]
    #[inline(always)]
    #[track_caller]
    pub(crate) fn enter_fast(
        &'static self,
        ee: &'static ExecEnv,
        key: usize,
    ) -> Option<&'static LockRecord> {
        if !EXTRA_FAST {
            return None;
        }
        // SAFETY: `ee` is the calling thread's EE.
        let record = unsafe { ee.peek_lock_record() };
        // SAFETY: thread-owned field, and `ee` is ours.
        let last = ee.keyed_guess.with(|last| unsafe { *last });
        let bits = if last != 0 {
            // The last keyed lock found its home keyed for it: guess that
            // this one will, in the form the last one found if it was for
            // this key (flags and all), and try at once, without a load
            // first, as an uncontended object's lock does.
            let guess = if key_part(last) == key { last } else { key };
            record.set_displaced(guess);
            // AcqRel on success: as below. Acquire on failure: the owner
            // check below reads the record the word points at.
            match self.word.word.compare_exchange(
                guess,
                locked_bits(record),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    // SAFETY: peeked above, nothing taken since.
                    unsafe { ee.take_lock_record(record) };
                    return Some(record);
                }
                Err(bits) => bits,
            }
        } else {
            // A thread that walks more values than the table has homes
            // finds them keyed for others: a wrong guess would cost a
            // second compare-and-swap. Acquire: as above.
            self.word.word.load(Ordering::Acquire)
        };
        if state(bits) == NEUTRAL {
            let ours = key_part(bits) == key;
            let found = if ours { bits } else { 0 };
            if found != last {
                // SAFETY: as above.
                ee.keyed_guess.with_mut(|last| unsafe { *last = found });
            }
            let displaced = if ours {
                bits
            } else if bits & FLAGS == 0 {
                key
            } else {
                return None;
            };
            record.set_displaced(displaced);
            // AcqRel: Acquire pairs with the Release of the previous unlock
            // or meta-lock release, Release publishes the record's displaced
            // form to meta-lock holders. Relaxed on failure: the value read
            // is dropped, and the slow path reads the word again.
            return match self.word.word.compare_exchange(
                bits,
                locked_bits(record),
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    // SAFETY: peeked above, nothing taken since.
                    unsafe { ee.take_lock_record(record) };
                    Some(record)
                }
                Err(_) => None,
            };
        }
        // Only a thread that holds some record may own it: the owner check
        // reads the owner's record, a line another thread writes.
        // SAFETY: `ee` is the calling thread's EE.
        if unsafe { ee.has_records_out() } && owner_is(bits, ee) {
            let owner = record_of(bits);
            // SAFETY: our own record owns the monitor and cannot change
            // hands; the key bits of its displaced form change only while
            // the word is NEUTRAL.
            unsafe {
                if key_part((*owner).displaced()) == key {
                    enter_again(&*owner);
                    return Some(&*owner);
                }
            }
        }
        None
    }

    /// Without compare-and-swap there is no extra-fast path: every keyed
    /// enter goes through the meta-lock.
    #[cfg(metalock_swap_only)]
    #[inline(always)]
    pub(crate) fn enter_fast(
        &'static self,
        _: &'static ExecEnv,
        _: usize,
    ) -> Option<&'static LockRecord> {
        None
    }

    /// Spins, as an embedded word's enter does, while another thread owns
    /// the monitor, taking it when the home turns idle with our key or
    /// unflagged; `None`: go through the meta-lock.
    #[cfg(not(metalock_swap_only))]
    #[track_caller]
    fn spin_then_enter(
        &'static self,
        ee: &'static ExecEnv,
        key: usize,
    ) -> Option<&'static LockRecord> {
        // As in `enter_fast`: only a thread that holds a record looks at
        // the owner's.
        // SAFETY: `ee` is the calling thread's EE.
        let might_own = unsafe { ee.has_records_out() };
        let profile = Profile::of(&self.word);
        let mut spin = profile.spin();
        loop {
            // Acquire: `owner_is` below reads the record the word points
            // at, which another thread may have just published with a
            // Release.
            let bits = self.word.word.load(Ordering::Acquire);
            if state(bits) == NEUTRAL {
                if key_part(bits) != key && bits & FLAGS != 0 {
                    return None;
                }
                if let Some(record) = self.enter_fast(ee, key) {
                    profile.spin_won(&spin, ee);
                    return Some(record);
                }
                continue;
            }
            if state(bits) != LOCKED
                || bits & QUEUE_SUMMARY != 0
                || (might_own && owner_is(bits, ee))
            {
                // As in `spin_then_fused_lock`: only a queue that formed
                // decides the spin.
                if state(bits) == LOCKED {
                    profile.spin_lost(&spin, ee);
                }
                return None;
            }
            if !spin.spin() {
                profile.spin_lost(&spin, ee);
                return None;
            }
        }
    }

    /// The keyed enter through the meta-lock: enters the monitor for `key`
    /// (a NEUTRAL form from `locate`), waiting as `patience` allows; or,
    /// if the home serves another address and cannot be rekeyed, returns
    /// what `elsewhere` (which must register the key's overflow entry, see
    /// `count_overflow`, or make none) returns, having run it under the
    /// meta-lock, and marks the home `OVERFLOW` if it has entries.
    #[cold]
    #[track_caller]
    pub(crate) fn enter_slow<R>(
        &'static self,
        ee: &'static ExecEnv,
        key: usize,
        patience: Patience,
        elsewhere: impl FnOnce() -> R,
    ) -> Keyed<R> {
        // Waiting runs the platform, whose allocations (outside a meta-lock)
        // may lock monitors.
        // SAFETY: `ee` is the calling thread's EE.
        let _kept = unsafe { ee.keep_bound_if_detached() };
        #[cfg(not(metalock_swap_only))]
        if EXTRA_FAST
            && !matches!(patience, Patience::None)
            && let Some(record) = self.spin_then_enter(ee, key)
        {
            return Keyed::Entered(record);
        }
        // Allocates, if the free list is empty, before the meta-lock; the
        // interrupt flag is cloned before it too (a first use would
        // allocate; the caller's check of the flag has made it already).
        // SAFETY: `ee` is the calling thread's EE.
        let record = unsafe { ee.peek_lock_record() };
        let interrupt = match patience {
            Patience::Interruptibly(_) => Interrupt::current_if_alive(),
            _ => None,
        };
        // Blocked from here, as in `enter_slow_until`.
        #[cfg(all(feature = "diagnostics", not(metalock_model)))]
        let _blocked = ee.diag.block(
            core::ptr::from_ref(&self.word) as usize,
            false,
            matches!(
                patience,
                Patience::None | Patience::Until(Some(_)) | Patience::Interruptibly(Some(_))
            ),
            Some(self.address_of(key)),
        );
        let mut held = self.word.get_meta_lock(ee);
        let neutral = neutral_form(&held);
        if key_part(neutral) != key {
            // Pins left over from threads that are done no longer count.
            // Acquire pairs with their Release decrements.
            let unpinned = neutral & PINNED == 0 || self.pins.load(Ordering::Acquire) == 0;
            if state(held.bits) == NEUTRAL && neutral & OVERFLOW == 0 && unpinned {
                // Idle: rekey it and take it.
                held.bits = key;
            } else {
                let found = elsewhere();
                // Relaxed: under the meta-lock, as every change of it.
                // `elsewhere` may have found no room to make the entry. A
                // form that has the flag already stays as it is: setting it
                // again would send a LOCKED owner's unlock down the slow
                // path for nothing.
                if self.overflows.load(Ordering::Relaxed) != 0 && neutral & OVERFLOW == 0 {
                    set_neutral_form(&mut held, neutral | OVERFLOW);
                }
                let bits = held.bits;
                held.release(bits);
                return Keyed::Elsewhere(found);
            }
        } else if owner_is(held.bits, ee) {
            let bits = held.bits;
            held.release(bits);
            // The relock may panic (a count at its limit), and the panic
            // hook must not see this thread blocked on a monitor it owns.
            #[cfg(all(feature = "diagnostics", not(metalock_model)))]
            drop(_blocked);
            // SAFETY: a LOCKED word points at the owner's live record, ours;
            // the meta-lock is released.
            unsafe {
                let owner = &*record_of(bits);
                enter_again(owner);
                return Keyed::Entered(owner);
            }
        }
        // Nobody owns it: the install below takes it at once, whatever the
        // patience.
        let pinned = state(held.bits) == LOCKED;
        if pinned {
            if matches!(patience, Patience::None) {
                let bits = held.bits;
                held.release(bits);
                return Keyed::GaveUp;
            }
            // We queue, and may be invited out of the queue: pin.
            // Relaxed: under the meta-lock, which orders it for
            // `enter_slow`'s check.
            self.pins.fetch_add(1, Ordering::Relaxed);
            let neutral = neutral_form(&held);
            set_neutral_form(&mut held, neutral | PINNED);
        }
        let until = patience.until(interrupt.as_deref());
        // SAFETY: we hold the meta-lock, not owned by us (checked above),
        // at the key we came for; `record` came from `peek_lock_record`,
        // nothing taken since.
        let entered = unsafe {
            ee.take_lock_record(record);
            self.word
                .acquire_held_until(ee, record, held, Entry::Fresh, until)
        };
        if pinned {
            self.unpin();
        }
        match entered {
            Some(record) => Keyed::Entered(record),
            None => Keyed::GaveUp,
        }
    }
}
