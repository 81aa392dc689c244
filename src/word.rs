//! The multi-use word: one atomic machine word per object, holding the lock
//! state in its two low bits and, depending on that state, the user's payload,
//! a lock-record pointer or an execution environment (paper 000, Fig. 2).
//!
//! This module is the word's layout and nothing else; what reads a pointer out
//! of the word lives with the type it points to, and the operations on the
//! word live with the protocols above (`meta_lock`, `monitor`, `payload`).

use crate::arch::Word;

/// The lock state, in the two low bits of the word.
pub(crate) const STATE_MASK: usize = 0b11;
/// Nobody synchronizes on the object; the high bits are the user's payload.
pub(crate) const NEUTRAL: usize = 0b00;
/// A thread holds the monitor; the high bits point at its lock record, the
/// first of the object's queue of threads waiting to enter.
pub(crate) const LOCKED: usize = 0b01;
/// Nobody holds the monitor but threads are queued to enter, and a thread
/// invited out of the queue is on its way to take it; the high bits point
/// at the first lock record still queued.
pub(crate) const WAITERS: usize = 0b10;
/// The meta-lock is held; the high bits are the execution environment of the
/// thread that swapped last.
pub(crate) const BUSY: usize = 0b11;
/// In LOCKED: set when the first record's queue may be non-empty or its
/// displaced payload may have changed, so that an unlock must go through the
/// meta-lock. Clear means neither happened since the monitor was entered
/// (paper 000, section 5.2).
pub(crate) const QUEUE_SUMMARY: usize = 0b100;
/// In a NEUTRAL word, and so in the payload a lock record displaces: the
/// monitor is fair, every release hands it to the first thread queued to
/// enter (as `unlock_fair` does). Fixed when the word is made; the payload
/// starts above it.
pub(crate) const FAIR: usize = 0b100;
/// The pointer bits of LOCKED, WAITERS and BUSY words: whatever they point
/// at is aligned to at least 16 bytes (bit 3 is unused).
pub(crate) const POINTER_MASK: usize = !0b1111;
/// Where the payload starts in a NEUTRAL word.
const PAYLOAD_SHIFT: u32 = 3;

#[inline(always)]
pub(crate) const fn state(bits: usize) -> usize {
    bits & STATE_MASK
}

/// The NEUTRAL word that carries `payload`.
#[inline(always)]
pub(crate) const fn neutral_bits(payload: usize) -> usize {
    payload << PAYLOAD_SHIFT
}

/// The payload a NEUTRAL word carries.
#[inline(always)]
pub(crate) const fn payload_of(neutral: usize) -> usize {
    neutral >> PAYLOAD_SHIFT
}

/// One machine word that gives the object embedding it a monitor: a reentrant
/// lock with `wait`, `notify_one` and `notify_all`, like every Java object.
///
/// While nobody synchronizes on the object the word holds a payload of
/// [`PAYLOAD_BITS`](Self::PAYLOAD_BITS) bits that belongs to the user (a hash,
/// a tag, flags). While the object is locked or threads queue to enter it
/// the payload is displaced into a lock record (threads in `wait` do not
/// count: they wait beside the word); [`payload`](Self::payload) and
/// [`set_payload`](Self::set_payload) keep working, and the payload is back
/// in the word, unchanged, when synchronization ends.
///
/// | low bits | state | the other bits |
/// |---|---|---|
/// | `00` | NEUTRAL | the payload, shifted left by 3 (bit 2: fair) |
/// | `01` | LOCKED | the owner's lock record (bit 2: queue summary) |
/// | `10` | WAITERS | the first lock record queued to enter |
/// | `11` | BUSY | the execution environment that swapped last |
///
/// A type that embeds a word and hashes by its payload trips clippy's
/// `mutable_key_type` lint (the word is interior-mutable); the payload is
/// stable unless `set_payload` changes it, so allowing the lint, or listing
/// `metalock::MultiUseWord` under `ignore-interior-mutability` in
/// `clippy.toml`, is sound for such keys.
///
/// ```
/// use metalock::MultiUseWord;
///
/// struct Node {
///     word: MultiUseWord, // the monitor, and a payload: here a cached hash
///     value: u32,
/// }
///
/// let node = Node { word: MultiUseWord::with_payload(0x2a), value: 1 };
/// let guard = node.word.lock();
/// assert_eq!(node.word.payload(), 0x2a); // displaced, still readable
/// drop(guard);
/// assert_eq!((node.word.payload(), node.value), (0x2a, 1));
/// ```
///
/// Invariant: the word's value is always one of the four forms above; only
/// the meta-lock holder changes a non-BUSY word, but for three kinds of
/// compare-and-swap: the extra-fast path's lock (NEUTRAL to LOCKED) and
/// unlock (back to NEUTRAL), and `set_payload`'s (NEUTRAL to NEUTRAL).
pub struct MultiUseWord {
    pub(crate) word: Word,
}

// One word, except with shuttle's atomics, which carry more.
#[cfg(not(feature = "shuttle"))]
const _: () = assert!(core::mem::size_of::<MultiUseWord>() == core::mem::size_of::<usize>());

impl MultiUseWord {
    /// Bits of payload a word carries.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    ///
    /// // Three low bits are the lock's; the rest carry the payload.
    /// assert_eq!(MultiUseWord::PAYLOAD_BITS, usize::BITS - 3);
    /// assert_eq!(MultiUseWord::MAX_PAYLOAD.count_ones(), MultiUseWord::PAYLOAD_BITS);
    /// ```
    pub const PAYLOAD_BITS: u32 = usize::BITS - PAYLOAD_SHIFT;

    /// The largest payload a word carries.
    ///
    /// ```
    /// use metalock::MultiUseWord;
    ///
    /// let word = MultiUseWord::with_payload(MultiUseWord::MAX_PAYLOAD);
    /// let guard = word.lock();
    /// drop(guard);
    /// assert_eq!(word.payload(), MultiUseWord::MAX_PAYLOAD); // nothing lost
    /// ```
    pub const MAX_PAYLOAD: usize = usize::MAX >> PAYLOAD_SHIFT;

    const_unless_loom! {
        /// A word with payload 0, unlocked.
        ///
        /// ```
        /// use metalock::MultiUseWord;
        ///
        /// // `const`: a word can be a `static`.
        /// static WORD: MultiUseWord = MultiUseWord::new();
        ///
        /// assert_eq!(WORD.payload(), 0);
        /// assert!(!WORD.is_locked() && !WORD.is_fair());
        /// ```
        pub fn new() -> Self {
            Self {
                word: Word::new(NEUTRAL),
            }
        }
    }

    const_unless_loom! {
        /// A word carrying `payload`, unlocked.
        ///
        /// # Panics
        ///
        /// If `payload` is wider than [`PAYLOAD_BITS`](Self::PAYLOAD_BITS):
        /// the payload is never silently truncated.
        ///
        /// ```
        /// use metalock::MultiUseWord;
        /// use std::panic::catch_unwind;
        ///
        /// let word = MultiUseWord::with_payload(0xbeef);
        /// assert_eq!(word.payload(), 0xbeef);
        /// assert!(!word.is_locked());
        /// // Too wide: it panics rather than truncate.
        /// let too_wide = catch_unwind(|| MultiUseWord::with_payload(MultiUseWord::MAX_PAYLOAD + 1));
        /// assert!(too_wide.is_err());
        /// ```
        #[track_caller]
        pub fn with_payload(payload: usize) -> Self {
            assert!(
                payload <= Self::MAX_PAYLOAD,
                "metalock: payload wider than MultiUseWord::PAYLOAD_BITS (usize::BITS - 3 bits)"
            );
            Self {
                word: Word::new(neutral_bits(payload)),
            }
        }
    }

    const_unless_loom! {
        /// A fair monitor with payload 0, unlocked: every release hands the
        /// monitor to the first thread of its entry queue, as
        /// [`MonitorGuard::unlock_fair`](crate::MonitorGuard::unlock_fair)
        /// does, so ownership follows the queue's order. A plain monitor lets
        /// running threads barge in ahead of a queued thread that is still
        /// waking up, which is several times faster under contention; choose
        /// a fair one when no thread may be overtaken for long. (On the
        /// swap-only backend a thread may still be overtaken on its way into
        /// the queue: its meta-lock is a test-and-set, not a FIFO hand-off.)
        ///
        /// ```
        /// use metalock::MultiUseWord;
        ///
        /// let word = MultiUseWord::new_fair();
        /// assert!(word.is_fair());
        /// drop(word.lock());
        /// assert!(!MultiUseWord::new().is_fair());
        /// ```
        pub fn new_fair() -> Self {
            Self {
                word: Word::new(NEUTRAL | FAIR),
            }
        }
    }

    const_unless_loom! {
        /// A fair monitor (see [`new_fair`](Self::new_fair)) carrying
        /// `payload`, unlocked.
        ///
        /// # Panics
        ///
        /// If `payload` is wider than [`PAYLOAD_BITS`](Self::PAYLOAD_BITS).
        ///
        /// ```
        /// use metalock::MultiUseWord;
        ///
        /// let word = MultiUseWord::fair_with_payload(9);
        /// assert!(word.is_fair());
        /// assert_eq!(word.payload(), 9);
        /// word.set_payload(10);
        /// assert!(word.is_fair()); // the payload does not touch fairness
        /// ```
        #[track_caller]
        pub fn fair_with_payload(payload: usize) -> Self {
            assert!(
                payload <= Self::MAX_PAYLOAD,
                "metalock: payload wider than MultiUseWord::PAYLOAD_BITS (usize::BITS - 3 bits)"
            );
            Self {
                word: Word::new(neutral_bits(payload) | FAIR),
            }
        }
    }
}

/// Panics unless `payload` fits in the word.
#[inline]
#[track_caller]
pub(crate) fn check_payload(payload: usize) {
    assert!(
        payload <= MultiUseWord::MAX_PAYLOAD,
        "metalock: payload {payload:#x} is wider than MultiUseWord::PAYLOAD_BITS ({} bits)",
        MultiUseWord::PAYLOAD_BITS
    );
}

impl Default for MultiUseWord {
    fn default() -> Self {
        Self::new()
    }
}
