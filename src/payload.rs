//! The user's payload in the word (paper 000's displaced hash and age bits):
//! readable and writable in every lock state, through the meta-lock when it
//! is displaced into a lock record.

use core::fmt;

use crate::exec_env::ExecEnv;
use crate::lock_record::record_of;
use crate::meta_lock::hooks::{self, HandoffEvent};
use crate::primitive::Ordering;
use crate::word::{
    FAIR, LOCKED, MultiUseWord, NEUTRAL, QUEUE_SUMMARY, WAITERS, check_payload, neutral_bits,
    payload_of, state,
};

impl MultiUseWord {
    /// The payload, whatever the lock state.
    ///
    /// When the object is unlocked this is one load; otherwise the payload is
    /// read from the lock record it is displaced into, under the meta-lock.
    /// Either way it reads as an Acquire load: a thread that reads the
    /// value a [`set_payload`](Self::set_payload) wrote sees what the
    /// setting thread did before that call.
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
        ExecEnv::with_current(|ee| {
            let held = self.get_meta_lock(ee);
            let bits = held.bits;
            let neutral = if state(bits) == NEUTRAL {
                bits
            } else {
                // SAFETY: a LOCKED or WAITERS word points at the first record
                // of the object's queue, which holds the displaced payload
                // and is not recycled while we hold the meta-lock.
                unsafe { (*record_of(bits)).displaced() }
            };
            held.release(bits);
            neutral
        })
    }

    /// Replaces the payload, whatever the lock state; a fair monitor stays
    /// fair. The payload is not guarded by the monitor: any thread may set it
    /// while another holds the monitor, and the unlock keeps the new value.
    /// The write publishes as a Release store (see [`payload`](Self::payload)).
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
        #[cfg(not(metalock_swap_only))]
        if self.set_neutral_payload(payload) {
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
                        first.set_displaced(payload | first.displaced() & FAIR);
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
    /// `payload` (in NEUTRAL form, fair bit clear); `false` once the word is
    /// not NEUTRAL.
    #[cfg(not(metalock_swap_only))]
    fn set_neutral_payload(&self, payload: usize) -> bool {
        // Relaxed: a failed attempt only tells us which path to take.
        let mut bits = self.word.load(Ordering::Relaxed);
        while state(bits) == NEUTRAL {
            // Release pairs with the Acquire of `payload` and of the lock
            // paths that read the word.
            match self.word.compare_exchange(
                bits,
                payload | bits & FAIR,
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(actual) => bits = actual,
            }
        }
        false
    }
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
