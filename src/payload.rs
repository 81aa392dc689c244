//! The user's payload in the word (paper 000's displaced hash and age bits):
//! readable and writable in every lock state, through the meta-lock when it
//! is displaced into a lock record.

use core::fmt;

use crate::exec_env::ExecEnv;
use crate::lock_record::{LockRecord, record_of};
use crate::meta_lock::hooks::{self, HandoffEvent};
use crate::monitor::{EXTRA_FAST, owner_is};
use crate::primitive::Ordering;
use crate::word::{
    FAIR, LOCKED, MultiUseWord, NEUTRAL, QUEUE_SUMMARY, WAITERS, check_payload, neutral_bits,
    payload_of, state,
};

impl MultiUseWord {
    /// The payload, whatever the lock state.
    ///
    /// When the object is unlocked this is one load, and so it is for the
    /// thread that owns the monitor, which reads the lock record the payload
    /// is displaced into (with the extra-fast path: not under
    /// `meta-lock-only` or the swap-only backend; and not while another
    /// thread is in the word's meta-lock); any other thread reads that
    /// record under the meta-lock. Either way it reads as an Acquire
    /// load: a thread that reads the value a
    /// [`set_payload`](Self::set_payload) wrote sees what the setting thread
    /// did before that call.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    ///
    /// let word = MultiUseWord::with_payload(0x2a);
    /// let guard = word.lock();
    /// assert_eq!(word.payload(), 0x2a); // displaced, still readable
    /// word.set_payload(7);
    /// drop(guard);
    /// assert_eq!(word.payload(), 7);
    /// ```
    pub fn payload(&self) -> usize {
        payload_of(self.neutral())
    }

    /// Whether the monitor is fair (made by
    /// [`new_fair`](Self::new_fair) or [`fair_with_payload`](Self::fair_with_payload)).
    /// The fair bit is displaced with the payload, so it reads the same in
    /// every lock state.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    ///
    /// let word = MultiUseWord::fair_with_payload(5);
    /// let guard = word.lock();
    /// assert!(word.is_fair());
    /// drop(guard);
    /// assert!(!MultiUseWord::with_payload(5).is_fair());
    /// ```
    pub fn is_fair(&self) -> bool {
        self.neutral() & FAIR != 0
    }

    /// The NEUTRAL form of the word: the word itself, or the value displaced
    /// into the first lock record.
    fn neutral(&self) -> usize {
        // Acquire pairs with the Release that wrote the word (a meta-lock
        // release, the extra-fast path's unlock or `set_payload`'s
        // compare-and-swap).
        let bits = self.word.load(Ordering::Acquire);
        if state(bits) == NEUTRAL {
            return bits;
        }
        if EXTRA_FAST && let Some(first) = owned_first_record(bits) {
            return first.published_displaced();
        }
        ExecEnv::with_current(|ee| {
            let held = self.get_meta_lock(ee);
            let bits = held.bits;
            let neutral = if state(bits) == NEUTRAL {
                bits
            } else {
                // SAFETY: a LOCKED or WAITERS word points at the first record
                // of the object's queue, which holds the displaced payload
                // and is not recycled while we hold the meta-lock.
                unsafe { (*record_of(bits)).published_displaced() }
            };
            held.release(bits);
            neutral
        })
    }

    /// Replaces the payload, whatever the lock state; a fair monitor stays
    /// fair. The payload is not guarded by the monitor: any thread may set it
    /// while another holds the monitor, and the unlock keeps the new value.
    /// The write publishes as a Release store (see [`payload`](Self::payload)).
    /// On a NEUTRAL word it is one compare-and-swap (not on the swap-only
    /// backend, which has none), and by the monitor's owner one store (with
    /// the extra-fast path: not under `meta-lock-only` or the swap-only
    /// backend; and not while another thread is in the word's meta-lock);
    /// otherwise it writes under the meta-lock, and a set by a thread that
    /// does not own the monitor sends the owner's unlock through the
    /// meta-lock too.
    ///
    /// # Panics
    ///
    /// If `payload` is wider than [`PAYLOAD_BITS`](Self::PAYLOAD_BITS).
    ///
    /// ```
    /// use metalock::MultiUseWord;
    ///
    /// let word = MultiUseWord::new_fair();
    /// let guard = word.lock();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| word.set_payload(MultiUseWord::MAX_PAYLOAD));
    /// });
    /// drop(guard);
    /// assert_eq!(word.payload(), MultiUseWord::MAX_PAYLOAD);
    /// assert!(word.is_fair());
    /// ```
    #[track_caller]
    pub fn set_payload(&self, payload: usize) {
        check_payload(payload);
        let payload = neutral_bits(payload);
        // Acquire: as in `neutral`, and the owner check reads the record
        // the word points at, which its thread may have just installed.
        let bits = self.word.load(Ordering::Acquire);
        #[cfg(not(metalock_swap_only))]
        let Err(bits) = self.set_neutral_payload(bits, payload) else {
            return;
        };
        if EXTRA_FAST && let Some(first) = owned_first_record(bits) {
            // The owner's own unlock reads the displaced form after this, so
            // it restores the new payload with no flag on the word.
            first.publish_displaced(payload | first.displaced() & FAIR);
            return;
        }
        ExecEnv::with_current(|ee| {
            let held = self.get_meta_lock(ee);
            let bits = held.bits;
            let release = match state(bits) {
                NEUTRAL => payload | bits & FAIR,
                s => {
                    // SAFETY: as in `neutral`, the first record is reachable
                    // and stable under the meta-lock.
                    unsafe {
                        let first = &*record_of(bits);
                        first.publish_displaced(payload | first.displaced() & FAIR);
                    }
                    // The owner's fused unlock must not restore the old
                    // payload.
                    if s == LOCKED {
                        bits | QUEUE_SUMMARY
                    } else {
                        hooks::fire(HandoffEvent::PayloadSetAtAQueuesHead);
                        bits
                    }
                }
            };
            held.release(release);
        });
    }

    /// Replaces the payload of a NEUTRAL word by compare-and-swap with
    /// `payload` (in NEUTRAL form, fair bit clear), starting from `bits`, the
    /// word read with Acquire; once the word is not NEUTRAL, returns it, read
    /// with Acquire.
    #[cfg(not(metalock_swap_only))]
    fn set_neutral_payload(&self, mut bits: usize, payload: usize) -> Result<(), usize> {
        while state(bits) == NEUTRAL {
            // Release pairs with the Acquire of `payload` and of the lock
            // paths that read the word; Acquire on failure: as the first
            // load, for the owner check.
            match self.word.compare_exchange(
                bits,
                payload | bits & FAIR,
                Ordering::Release,
                Ordering::Acquire,
            ) {
                Ok(_) => return Ok(()),
                Err(actual) => bits = actual,
            }
        }
        Err(bits)
    }
}

/// The calling thread's record if it owns the monitor of `bits`: the first
/// of the object's queue, which holds the displaced payload for as long as
/// the thread owns the monitor, so its thread reads and writes the payload
/// there without the meta-lock (with the extra-fast path, `EXTRA_FAST`:
/// without it every operation goes through the meta-lock). Never for a keyed
/// monitor's home word, whose displaced form holds the key and changes only
/// under the meta-lock (`KeyedGuard` lends no word).
#[inline]
fn owned_first_record(bits: usize) -> Option<&'static LockRecord> {
    if state(bits) != LOCKED {
        return None;
    }
    // A thread with no EE bound owns nothing.
    let ee = ExecEnv::current_if_bound()?;
    // SAFETY: a LOCKED word points at a record, and records are never
    // freed (`LockRecord`'s first invariant), so the reference may be
    // `'static`; a record that names this thread's EE as its owner while a
    // LOCKED word points at it is this thread's hold of the monitor (`bits`
    // was read with Acquire: a record donated to another thread shows its
    // new owner).
    owner_is(bits, ee).then(|| unsafe { &*record_of(bits) })
}

impl fmt::Debug for MultiUseWord {
    /// Shows the lock state, the payload and whether the monitor is fair. The
    /// state and the rest are read one after the other, so under concurrent
    /// use they are a snapshot of two moments.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Relaxed: a snapshot for display only.
        let bits = self.word.load(Ordering::Relaxed);
        let state = match state(bits) {
            NEUTRAL => "NEUTRAL",
            LOCKED => "LOCKED",
            WAITERS => "WAITERS",
            _ => "BUSY",
        };
        let neutral = self.neutral();
        f.debug_struct("MultiUseWord")
            .field("state", &state)
            .field("payload", &payload_of(neutral))
            .field("fair", &(neutral & FAIR != 0))
            .finish()
    }
}
