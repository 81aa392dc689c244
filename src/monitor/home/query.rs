//! The queries of a home: whether it serves an address and what its word
//! says then, how many threads queue on it, whether it is in use, and the
//! address it serves, for the thread dump.

use super::{Home, OVERFLOW, key_part, neutral_form};
#[cfg(all(feature = "diagnostics", not(metalock_model)))]
use super::{PINNED, TABLE, key_at};
use crate::exec_env::ExecEnv;
#[cfg(all(feature = "diagnostics", not(metalock_model)))]
use crate::lock_record::record_of;
use crate::monitor::queue::{has_queue_at, queued_at};
use crate::monitor::wait::WaitSet;
use crate::monitor::wait_table::{with_any_waiting_on, with_waiting_on};
use crate::primitive::Ordering;
use crate::word::{NEUTRAL, state};

impl Home {
    /// Runs `f` on the home's word value if the home serves `key` now, under
    /// the home's meta-lock unless the value is NEUTRAL (so `f` must not
    /// block, allocate, panic or take a lock); `Err` if it serves another
    /// address, carrying whether the home's addresses may have overflow
    /// entries.
    pub(crate) fn inspect<R>(
        &'static self,
        key: usize,
        f: impl FnOnce(usize) -> R,
    ) -> Result<R, bool> {
        // Acquire pairs with the Release of whatever wrote the word.
        let bits = self.word.word.load(Ordering::Acquire);
        if state(bits) == NEUTRAL {
            return if key_part(bits) == key {
                Ok(f(bits))
            } else {
                Err(bits & OVERFLOW != 0)
            };
        }
        ExecEnv::with_current(|ee| {
            let held = self.word.get_meta_lock(ee);
            let neutral = neutral_form(&held);
            let bits = held.bits;
            let found = if key_part(neutral) == key {
                Ok(f(bits))
            } else {
                Err(neutral & OVERFLOW != 0)
            };
            held.release(bits);
            found
        })
    }

    /// How many threads are queued to enter the home's monitor for `key`
    /// now (see `MultiUseWord::queued`); `Err` as for `inspect`.
    pub(crate) fn queued(&'static self, key: usize) -> Result<usize, bool> {
        // SAFETY: `inspect` runs the closure on a NEUTRAL value, or under
        // the meta-lock.
        self.inspect(key, |bits| unsafe { queued_at(bits) })
    }

    /// Whether threads are queued to enter the home's monitor for `key` now
    /// (see `MultiUseWord::has_queue`); `Err` as for `inspect`.
    pub(crate) fn has_queue(&'static self, key: usize) -> Result<bool, bool> {
        // SAFETY: as in `queued`.
        self.inspect(key, |bits| unsafe { has_queue_at(bits) })
    }

    /// How many threads wait in the home's own wait set for `key` now (see
    /// `MultiUseWord::waiting`); `Err` as for `inspect`. The home is read
    /// under the stripe's lock, which every waiter of the home takes to
    /// start or stop waiting: the home cannot change key meanwhile, since
    /// its waiters pin it (see the parent module).
    pub(crate) fn waiting(&'static self, key: usize) -> Result<usize, bool> {
        let address = self.word.wait_key(WaitSet::Monitor);
        with_waiting_on(address, false, |waiting| self.inspect(key, |_| waiting))
    }

    /// Whether some thread waits in the home's own wait set for `key` now
    /// (see `MultiUseWord::has_waiting`), read as `waiting` reads; `Err` as
    /// for `inspect`.
    pub(crate) fn has_waiting(&'static self, key: usize) -> Result<bool, bool> {
        let address = self.word.wait_key(WaitSet::Monitor);
        with_any_waiting_on(address, false, |any| self.inspect(key, |_| any))
    }

    /// The address the home serves while its monitor is in use (held,
    /// queued on, or pinned by a waiter or an invited thread), for the
    /// thread dump; `None` if not, or if the word is in the middle of an
    /// operation. Takes no meta-lock, so that a dump neither waits nor binds
    /// an EE to its thread; the answer is a best-effort reading.
    #[cfg(all(feature = "diagnostics", not(metalock_model)))]
    pub(crate) fn key_in_use(&'static self) -> Option<usize> {
        // Acquire pairs with the Release of whatever wrote the word, so the
        // record it points at holds the payload it displaced.
        let bits = self.word.word.load(Ordering::Acquire);
        let neutral = match state(bits) {
            // Relaxed: a hint for a dump. The bit outlives the last pin
            // until a meta-lock clears it; a home with no pins left is idle.
            NEUTRAL if bits & PINNED == 0 || self.pins.load(Ordering::Relaxed) == 0 => {
                return None;
            }
            NEUTRAL => bits,
            crate::word::BUSY => return None,
            // SAFETY: a LOCKED or WAITERS word points at the first record of
            // its queue, which holds the displaced payload; records are
            // never freed, so a record that moved on meanwhile is still
            // readable, and the second load below rejects what it says.
            _ => unsafe { (*record_of(bits)).displaced() },
        };
        // Acquire: as above. A word read the same twice usually kept its
        // record; an ABA in between (the record freed, serving another word,
        // and back on this one) may name an address the record displaced
        // for that other word: the name is best effort, as a dump's is.
        if self.word.word.load(Ordering::Acquire) != bits {
            return None;
        }
        Some(self.address_of(neutral))
    }

    /// The address whose key `neutral` (a NEUTRAL form, or the bits
    /// `locate` returns) carries in this home.
    #[cfg(all(feature = "diagnostics", not(metalock_model)))]
    pub(crate) fn address_of(&'static self, neutral: usize) -> usize {
        let index =
            (self as *const Home as usize - TABLE.as_ptr() as usize) / core::mem::size_of::<Home>();
        key_at(index, neutral)
    }

    /// Whether the home's monitor is in use now: held or queued on (a
    /// snapshot; waiters of an idle monitor do not count).
    pub(crate) fn in_use(&'static self) -> bool {
        // Relaxed: a snapshot.
        state(self.word.word.load(Ordering::Relaxed)) != NEUTRAL
    }
}
