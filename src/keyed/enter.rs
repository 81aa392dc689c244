//! Finding and entering the monitor of an address: its home first, the
//! overflow table when the home serves another address (see the parent
//! module), and the references to overflow entries that guards hold.

use core::num::NonZeroUsize;
use core::ptr::NonNull;

use super::KeyedGuard;
use super::table::{NoRoom, Reserved, table};
use crate::exec_env::ExecEnv;
use crate::guard::{MonitorGuard, try_entered};
use crate::lock_record::LockRecord;
use crate::meta_lock::hooks;
use crate::monitor::home::{self, Home, Keyed, Patience};
use crate::monitor::shows_no_queue;
use crate::word::MultiUseWord;

/// Enters the monitor of `key`, waiting as `patience` allows.
#[inline(always)]
#[track_caller]
pub(super) fn enter(key: NonZeroUsize, patience: Patience) -> Option<KeyedGuard<'static>> {
    let (home, bits) = home::locate(key.get());
    let ee = ExecEnv::current();
    // The slow path hands back the word and the record, two registers, and
    // the guard is built here on both paths: a guard the slow path wrote
    // through memory kept the fast path's guard in memory too, a chain of
    // stores and reloads on every uncontended pair.
    let (word, record) = match home.enter_fast(ee, bits) {
        Some(record) => (home.word(), record),
        None => enter_slow(ee, home, key, bits, patience)?,
    };
    // A word other than the home's is the address's overflow entry, whose
    // reference the slow path took for the guard (`enter_overflow`).
    // (`then`, not `then_some`: an `Overflow` made and dropped for the home
    // would give back a reference nobody took.)
    let overflow = (!core::ptr::eq(word, home.word())).then(|| Overflow(key));
    Some(KeyedGuard::new(
        MonitorGuard::new(word, record),
        overflow,
        key,
    ))
}

/// A monitor entered: its word (the home's, or an overflow entry's) and
/// the calling thread's record in it.
type Entered = (&'static MultiUseWord, &'static LockRecord);

/// `enter` through the home's meta-lock, and on to the overflow table if
/// the home serves another address.
#[cold]
#[track_caller]
fn enter_slow(
    ee: &'static ExecEnv,
    home: &'static Home,
    key: NonZeroUsize,
    bits: usize,
    patience: Patience,
) -> Option<Entered> {
    // Making room in the table allocates, and an allocator that locks
    // monitors could otherwise release a detached EE between two tries.
    // SAFETY: `ee` is the calling thread's EE.
    let kept = unsafe { ee.keep_bound_if_detached() };
    // Dropped after the home's meta-lock: it may give back a word.
    let mut reserved = Reserved::none();
    loop {
        table().debug_assert_reserved_for(key.get(), &reserved);
        // With a word reserved, only try: the home may have been rekeyed
        // for this address meanwhile and be held, and the thread would
        // wait there with the word, which the shard's other addresses may
        // need. It gives the word back and then waits.
        let trying = if reserved.is_some() {
            Patience::None
        } else {
            patience
        };
        let found = home.enter_slow(ee, bits, trying, || {
            let acquired = table().acquire(key.get(), &mut reserved);
            if let Ok((_, true)) = acquired {
                home.count_overflow(true);
            }
            acquired.map(|(word, _)| word)
        });
        return match found {
            Keyed::Entered(record) => Some((home.word(), record)),
            Keyed::GaveUp if reserved.is_some() && !matches!(patience, Patience::None) => {
                reserved = Reserved::none();
                continue;
            }
            Keyed::GaveUp => {
                drop(reserved);
                drop(kept);
                // SAFETY: `ee` is the calling thread's EE.
                unsafe { ee.release_if_idle_and_detached() };
                None
            }
            Keyed::Elsewhere(Ok(word)) => {
                // The reference taken is owned from here, so that an unwind
                // from the drops below gives it back.
                let overflow = Overflow(key);
                // The word's own enter keeps and releases the EE as needed.
                drop(reserved);
                drop(kept);
                enter_overflow(overflow, word, patience)
            }
            // Allocated with no lock held, then tried again: the home may
            // even be free for the key by then.
            Keyed::Elsewhere(Err(NoRoom)) => {
                // SAFETY: `ee` is the calling thread's EE, kept bound by
                // `kept` if detached.
                let _allocating = unsafe { ee.allocating() };
                table().make_room(key.get(), &mut reserved);
                hooks::fire(hooks::HandoffEvent::KeyedRoomMade);
                continue;
            }
        };
    }
}

/// Enters the monitor of an address in the overflow table, `word`, whose
/// reference `overflow` holds. Entered, the reference passes to the
/// caller's guard (`enter`, which tells the word from the home's); if not,
/// it is given back.
#[cold]
#[track_caller]
fn enter_overflow(
    overflow: Overflow,
    word: NonNull<MultiUseWord>,
    patience: Patience,
) -> Option<Entered> {
    // SAFETY: the reference `overflow` holds keeps the word alive, and the
    // guard `enter` makes drops its monitor guard before its `Overflow`
    // (field order); if the enter gives up, `overflow` gives the reference
    // back. The `'static` is never seen outside: the guard's `monitor` is
    // private, the `MonitorRef` of `AsMonitorGuard` is opaque, and no
    // method returns the word.
    let word: &'static MultiUseWord = unsafe { word.as_ref() };
    let record = match patience {
        Patience::Until(None) => Some(word.enter::<true>(ExecEnv::current())),
        Patience::Until(Some(deadline)) => {
            try_entered!(|ee| word.try_enter_until::<true>(ee, deadline))
        }
        Patience::Interruptibly(deadline) => {
            try_entered!(|ee| word.enter_interruptibly::<true>(ee, deadline))
        }
        Patience::None => try_entered!(|ee| word.try_enter::<true>(ee)),
    }?;
    core::mem::forget(overflow);
    Some((word, record))
}

/// A reference to the overflow entry of an address; dropping it gives the
/// reference back, under the meta-lock of the address's home.
#[derive(Debug)]
pub(super) struct Overflow(NonZeroUsize);

impl Drop for Overflow {
    // Inlined, with the work out of line and the key passed by value, so
    // that a guard without an overflow entry stays in registers.
    #[inline]
    fn drop(&mut self) {
        release_overflow(self.0);
    }
}

/// Gives back the reference to the overflow entry of `key`.
#[cold]
#[inline(never)]
fn release_overflow(key: NonZeroUsize) {
    let key = key.get();
    let (home, _) = home::locate(key);
    let released = home.with_meta_lock(|| {
        let released = table().release(key);
        if matches!(released, Ok(Some(_))) {
            home.count_overflow(false);
        }
        released
    });
    // Dropped here, with no lock held: it may free memory.
    let leftover = released.unwrap_or_else(|misuse| misuse.raise());
    drop(leftover);
}

/// Answers a query of the monitor of `key` without making a table entry:
/// `at_home` on its home, which answers unless the home serves another
/// address (`Err`, carrying whether the home's addresses may have overflow
/// entries); then, for an overflow entry, `quick` on its word and the
/// word's value under the shard's lock, or where `quick` declines (`None`) or the word is
/// BUSY, `on_word` on the entry's word with no lock held, through a
/// reference. `None` if the address has no monitor. `quick` must not block,
/// allocate, panic or take a lock.
fn query<R>(
    key: NonZeroUsize,
    at_home: impl FnOnce(&'static Home, usize) -> Result<R, bool>,
    quick: impl Fn(&MultiUseWord, usize) -> Option<R>,
    on_word: impl FnOnce(&MultiUseWord) -> R,
) -> Option<R> {
    let (home, bits) = home::locate(key.get());
    match at_home(home, bits) {
        Ok(found) => Some(found),
        Err(false) => None,
        // Bound before the shard lock (binding allocates): a BUSY entry's
        // read and the reference's return under the home's meta-lock both
        // need the EE.
        Err(true) => ExecEnv::with_current(|_| match table().inspect(key.get(), quick)? {
            Ok(found) => Some(found),
            Err(word) => {
                // Given back, under the home's meta-lock as every reference,
                // once the word is read with no shard lock held.
                let _reference = Overflow(key);
                // SAFETY: the reference keeps the entry's word alive until
                // `_reference` drops.
                Some(on_word(unsafe { word.as_ref() }))
            }
        }),
    }
}

/// Runs `f` on the word value of the monitor of `key` if it has one in use
/// or idle in its home; `None` if not. Makes no table entry. `f` may run
/// under the home's meta-lock or a shard lock: it must not block, allocate,
/// panic or take a lock.
pub(super) fn inspect<R>(key: NonZeroUsize, f: impl Fn(usize) -> R) -> Option<R> {
    query(
        key,
        |home, bits| home.inspect(bits, &f),
        |_, bits| Some(f(bits)),
        |word| word.inspect(&f),
    )
}

/// How many threads are queued to enter the monitor of `key` now (a
/// snapshot; see `MultiUseWord::queue_length`). Makes no table entry.
pub(super) fn queue_length(key: NonZeroUsize) -> usize {
    // An entry's queue is walked under its meta-lock, which nobody may wait
    // for under a shard lock: only a word that shows none is read there.
    let shows_none = |_: &MultiUseWord, bits| shows_no_queue(bits).then_some(0);
    query(key, Home::queued, shows_none, MultiUseWord::queued).unwrap_or(0)
}

/// Whether threads are queued to enter the monitor of `key` now, read as
/// `queue_length` reads but without walking a queue. Makes no table entry.
pub(super) fn has_queued_threads(key: NonZeroUsize) -> bool {
    let shows_none = |_: &MultiUseWord, bits| shows_no_queue(bits).then_some(false);
    query(key, Home::has_queue, shows_none, MultiUseWord::has_queue).unwrap_or(false)
}

/// How many threads wait in the monitor of `key`'s own wait set now (a
/// snapshot; see `MultiUseWord::waiting`). Makes no table entry.
pub(super) fn wait_set_length(key: NonZeroUsize) -> usize {
    // An entry's waiters are counted under its stripe's lock, which nobody
    // may wait for under a shard lock: through a reference unless nobody
    // may wait in the stripe.
    let none_waits = |word: &MultiUseWord, _| (!word.may_have_waiters()).then_some(0);
    query(key, Home::waiting, none_waits, MultiUseWord::waiting).unwrap_or(0)
}

/// Whether some thread waits in the monitor of `key`'s own wait set now,
/// read as `wait_set_length` reads, the walk stopping at the first waiter.
/// Makes no table entry.
pub(super) fn has_waiters(key: NonZeroUsize) -> bool {
    let none_waits = |word: &MultiUseWord, _| (!word.may_have_waiters()).then_some(false);
    query(
        key,
        Home::has_waiting,
        none_waits,
        MultiUseWord::has_waiting,
    )
    .unwrap_or(false)
}
