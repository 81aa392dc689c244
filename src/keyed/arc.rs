//! The keyed monitor of a value in an `Arc` ([`lock_arc`] and its try,
//! timed and interruptible forms), and [`ArcKeyedGuard`], which owns a
//! clone of the `Arc`, so it borrows nothing, as `ArcMonitorGuard` does for
//! an embedded word.

use alloc::sync::Arc;
use core::fmt;
use core::ops::Deref;
use core::time::Duration;

use super::guard::KeyedGuard;
use super::{enter, enter_interruptibly_until, key_of};
use crate::guard::{AsMonitorGuard, check_depth_one, deadline_after, sealed};
use crate::guard::{entered_or_interrupted, interrupted_before};
use crate::monitor::home::Patience;
use crate::sys::Instant;

/// As [`lock`](crate::lock), on the value an `Arc` points to (not on the
/// `Arc` itself, as `lock(&arc)` would be): the guard holds a clone of the
/// `Arc`, so it borrows nothing and can be kept in a struct or returned.
/// The key is the value's address, as `lock(&*arc)`'s: a zero-sized or
/// empty value (`Arc<()>`, an empty `str` or slice, the `Arc::default()`
/// all of those share) may share its monitor with another value.
///
/// ```
/// use metalock::ArcKeyedGuard;
/// use std::sync::Arc;
///
/// struct Session {
///     held: ArcKeyedGuard<Vec<u8>>,
/// }
///
/// let buffer = Arc::new(vec![1, 2, 3]);
/// let session = Session { held: metalock::lock_arc(&buffer) };
/// assert_eq!(session.held.len(), 3); // derefs to the value
/// assert!(metalock::is_held_by_current_thread(&*buffer));
/// drop(session);
/// assert!(!metalock::is_locked(&*buffer));
/// ```
#[inline]
#[track_caller]
pub fn lock_arc<T: ?Sized>(value: &Arc<T>) -> ArcKeyedGuard<T> {
    match enter(key_of(&**value), Patience::Until(None)) {
        Some(guard) => ArcKeyedGuard::new(Arc::clone(value), guard),
        None => unreachable!("a lock without a deadline gave up"),
    }
}

/// As [`try_lock`](crate::try_lock), returning an [`ArcKeyedGuard`].
///
/// ```
/// use std::sync::Arc;
///
/// let value = Arc::new(5_u32);
/// let outer = metalock::try_lock_arc(&value).unwrap();
/// assert_eq!(metalock::try_lock_arc(&value).unwrap().depth(), 2); // reentrant
/// # drop(outer);
/// ```
#[inline]
#[track_caller]
pub fn try_lock_arc<T: ?Sized>(value: &Arc<T>) -> Option<ArcKeyedGuard<T>> {
    let guard = enter(key_of(&**value), Patience::None)?;
    Some(ArcKeyedGuard::new(Arc::clone(value), guard))
}

/// As [`try_lock_for`](crate::try_lock_for), returning an
/// [`ArcKeyedGuard`].
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// let value = Arc::new(5_u32);
/// let held = metalock::lock_arc(&value);
/// let other = Arc::clone(&value);
/// std::thread::spawn(move || {
///     assert!(metalock::try_lock_arc_for(&other, Duration::from_millis(10)).is_none());
/// })
/// .join()
/// .unwrap();
/// drop(held);
/// ```
#[track_caller]
pub fn try_lock_arc_for<T: ?Sized>(value: &Arc<T>, timeout: Duration) -> Option<ArcKeyedGuard<T>> {
    let guard = enter(key_of(&**value), Patience::Until(deadline_after(timeout)))?;
    Some(ArcKeyedGuard::new(Arc::clone(value), guard))
}

/// As [`try_lock_until`](crate::try_lock_until), returning an
/// [`ArcKeyedGuard`].
///
/// ```
/// use metalock::Instant;
/// use std::sync::Arc;
///
/// let value = Arc::new(5_u32);
/// // Free: entered though the deadline has passed.
/// assert!(metalock::try_lock_arc_until(&value, Instant::now()).is_some());
/// ```
#[track_caller]
pub fn try_lock_arc_until<T: ?Sized>(
    value: &Arc<T>,
    deadline: Instant,
) -> Option<ArcKeyedGuard<T>> {
    let guard = enter(key_of(&**value), Patience::Until(Some(deadline)))?;
    Some(ArcKeyedGuard::new(Arc::clone(value), guard))
}

/// As [`lock_interruptibly`](crate::lock_interruptibly), returning an
/// [`ArcKeyedGuard`].
///
/// ```
/// use metalock::Interrupted;
/// use std::sync::Arc;
///
/// let value = Arc::new(5_u32);
/// metalock::interrupt_handle().interrupt();
/// assert!(matches!(metalock::lock_arc_interruptibly(&value), Err(Interrupted)));
/// assert!(metalock::lock_arc_interruptibly(&value).is_ok()); // the flag was cleared
/// ```
#[track_caller]
pub fn lock_arc_interruptibly<T: ?Sized>(
    value: &Arc<T>,
) -> Result<ArcKeyedGuard<T>, crate::Interrupted> {
    if interrupted_before() {
        return Err(crate::Interrupted);
    }
    let guard = entered_or_interrupted(enter(key_of(&**value), Patience::Interruptibly(None)))?;
    Ok(ArcKeyedGuard::new(Arc::clone(value), guard))
}

/// As [`try_lock_for_interruptibly`](crate::try_lock_for_interruptibly),
/// returning an [`ArcKeyedGuard`].
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// let value = Arc::new(5_u32);
/// let entered = metalock::try_lock_arc_for_interruptibly(&value, Duration::from_millis(1));
/// assert_eq!(entered.unwrap().unwrap().depth(), 1);
/// ```
#[track_caller]
pub fn try_lock_arc_for_interruptibly<T: ?Sized>(
    value: &Arc<T>,
    timeout: Duration,
) -> Result<Option<ArcKeyedGuard<T>>, crate::Interrupted> {
    let entered = enter_interruptibly_until(key_of(&**value), deadline_after(timeout))?;
    Ok(entered.map(|guard| ArcKeyedGuard::new(Arc::clone(value), guard)))
}

/// As [`try_lock_until_interruptibly`](crate::try_lock_until_interruptibly),
/// returning an [`ArcKeyedGuard`].
///
/// ```
/// use metalock::Instant;
/// use std::sync::Arc;
///
/// let value = Arc::new(5_u32);
/// let entered = metalock::try_lock_arc_until_interruptibly(&value, Instant::now());
/// assert!(entered.unwrap().is_some());
/// ```
#[track_caller]
pub fn try_lock_arc_until_interruptibly<T: ?Sized>(
    value: &Arc<T>,
    deadline: Instant,
) -> Result<Option<ArcKeyedGuard<T>>, crate::Interrupted> {
    let entered = enter_interruptibly_until(key_of(&**value), Some(deadline))?;
    Ok(entered.map(|guard| ArcKeyedGuard::new(Arc::clone(value), guard)))
}

/// A [`KeyedGuard`] that owns a clone of the `Arc` its value lives in
/// ([`lock_arc`]): it can be kept in a struct or returned from a function.
/// Same rules: not `Send`, one level of a reentrant monitor, released when
/// dropped, and the same `wait` and `notify` methods, which come before
/// methods of `T` with the same names (`(*guard).wait()` calls `T`'s). It
/// derefs to `&T`, which the `Arc` gives anyway.
///
/// ```
/// use metalock::ArcKeyedGuard;
/// use std::sync::Arc;
///
/// fn open(name: &str) -> ArcKeyedGuard<String> {
///     let shared = Arc::new(name.to_owned());
///     metalock::lock_arc(&shared) // the guard keeps the value alive
/// }
///
/// let guard = open("log");
/// assert_eq!(guard.as_str(), "log");
/// assert_eq!(guard.depth(), 1);
/// ```
///
/// Invariant: `guard` holds one level of the monitor keyed by the address
/// of the value `value` points to, which `value` keeps alive and in place;
/// `guard` is dropped before `value` (field order). A value with bytes
/// keeps its address to itself meanwhile; a zero-sized or empty one (`()`,
/// `""`, `[]`, the shared `Arc::default()` of `str` or a slice) may share
/// it, and so the monitor, with another value, as [`lock`](crate::lock)
/// says: monitors are reentrant, so that is contention, never unsoundness.
#[must_use = "the monitor is released as soon as the guard is dropped"]
pub struct ArcKeyedGuard<T: ?Sized> {
    guard: KeyedGuard<'static>,
    value: Arc<T>,
}

impl<T: ?Sized> ArcKeyedGuard<T> {
    fn new(value: Arc<T>, guard: KeyedGuard<'static>) -> Self {
        Self { guard, value }
    }

    /// The `Arc` this guard holds. An associated function, so that it
    /// cannot clash with a method of `T`.
    ///
    /// ```
    /// use metalock::ArcKeyedGuard;
    /// use std::sync::Arc;
    ///
    /// let value = Arc::new(5_u32);
    /// let guard = metalock::lock_arc(&value);
    /// assert!(Arc::ptr_eq(ArcKeyedGuard::value(&guard), &value));
    /// ```
    pub fn value(guard: &Self) -> &Arc<T> {
        &guard.value
    }

    /// See [`KeyedGuard::depth`].
    pub fn depth(&self) -> usize {
        self.guard.depth()
    }

    /// See [`KeyedGuard::notify_one`].
    pub fn notify_one(&self) -> bool {
        self.guard.notify_one()
    }

    /// See [`KeyedGuard::notify_all`].
    pub fn notify_all(&self) -> usize {
        self.guard.notify_all()
    }

    /// See [`KeyedGuard::unlock_fair`].
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// let value = Arc::new(5_u32);
    /// metalock::lock_arc(&value).unlock_fair();
    /// assert!(!metalock::is_locked(&*value));
    /// ```
    pub fn unlock_fair(self) {
        drop(Self::into_arc_fair(self));
    }

    /// See [`KeyedGuard::unlocked`]; the same rule (the guard holds the
    /// only level).
    ///
    /// # Panics
    /// If the thread holds the monitor at a depth other than 1, before it
    /// releases anything.
    ///
    /// ```
    /// use metalock::ArcKeyedGuard;
    /// use std::sync::Arc;
    ///
    /// let value = Arc::new(5_u32);
    /// let mut guard = metalock::lock_arc(&value);
    /// ArcKeyedGuard::unlocked(&mut guard, || assert!(!metalock::is_locked(&*value)));
    /// assert!(metalock::is_held_by_current_thread(&*value));
    /// ```
    #[track_caller]
    pub fn unlocked<U>(guard: &mut Self, f: impl FnOnce() -> U) -> U {
        check_depth_one(guard.depth(), "ArcKeyedGuard::unlocked");
        guard.guard.release_while(false, f)
    }

    /// See [`KeyedGuard::unlocked_fair`]; the same rule as
    /// [`unlocked`](Self::unlocked).
    ///
    /// # Panics
    /// As [`unlocked`](Self::unlocked).
    #[track_caller]
    pub fn unlocked_fair<U>(guard: &mut Self, f: impl FnOnce() -> U) -> U {
        check_depth_one(guard.depth(), "ArcKeyedGuard::unlocked_fair");
        guard.guard.release_while(true, f)
    }

    /// See [`KeyedGuard::bump`].
    pub fn bump(guard: &mut Self) {
        KeyedGuard::bump(&mut guard.guard);
    }

    /// Releases this level of the monitor and returns the guard's `Arc`.
    ///
    /// ```
    /// use metalock::ArcKeyedGuard;
    /// use std::sync::Arc;
    ///
    /// let value = Arc::new(5_u32);
    /// let back = ArcKeyedGuard::into_arc(metalock::lock_arc(&value));
    /// assert!(Arc::ptr_eq(&back, &value) && !metalock::is_locked(&*value));
    /// ```
    pub fn into_arc(guard: Self) -> Arc<T> {
        let Self { guard, value } = guard;
        drop(guard);
        value
    }

    /// As [`into_arc`](Self::into_arc), releasing the level as
    /// [`unlock_fair`](Self::unlock_fair) does.
    pub fn into_arc_fair(guard: Self) -> Arc<T> {
        let Self { guard, value } = guard;
        guard.unlock_fair();
        value
    }

    crate::guard::forward_waits!(guard, "KeyedGuard");
}

impl<T: ?Sized> sealed::Sealed for ArcKeyedGuard<T> {
    fn __monitor_guard(&self, _: sealed::Token) -> sealed::MonitorRef<'_> {
        sealed::Sealed::__monitor_guard(&self.guard, sealed::Token::IN_CRATE)
    }
}

impl<T: ?Sized> AsMonitorGuard for ArcKeyedGuard<T> {
    type Target = ();

    fn __target(&mut self) -> &mut () {
        self.guard.__target()
    }
}

impl<T: ?Sized> Deref for ArcKeyedGuard<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for ArcKeyedGuard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArcKeyedGuard")
            .field("value", &&*self.value)
            .field("depth", &self.depth())
            .finish()
    }
}
