//! Mapped guards: a [`SynchronizedGuard`] narrowed to a part of the value,
//! as parking_lot's `MappedMutexGuard`; and `leak`, a guard turned into the
//! value's `&mut` for good.

use core::fmt;
use core::marker::PhantomData;
use core::ops::{Deref, DerefMut};

use super::SynchronizedGuard;
use crate::guard::MonitorGuard;

impl<'a, T: ?Sized> SynchronizedGuard<'a, T> {
    /// Narrows the guard to a part of the value. An associated function
    /// (`SynchronizedGuard::map(guard, f)`), so that it cannot clash with a
    /// method of `T`. The mapped guard cannot wait: see
    /// [`MappedSynchronizedGuard`].
    ///
    /// ```
    /// use metalock::{Synchronized, SynchronizedGuard};
    ///
    /// let pair = Synchronized::new((String::from("a"), 1));
    /// let mut name = SynchronizedGuard::map(pair.lock(), |pair| &mut pair.0);
    /// name.push('b');
    /// drop(name);
    /// assert_eq!(pair.lock().0, "ab");
    /// ```
    pub fn map<U: ?Sized>(
        guard: Self,
        f: impl FnOnce(&mut T) -> &mut U,
    ) -> MappedSynchronizedGuard<'a, U> {
        let SynchronizedGuard { monitor, sync } = guard;
        // SAFETY: `monitor` owns the monitor (the guard's invariant), so
        // this is the only access to the value; if `f` panics, `monitor`
        // is dropped and releases it.
        let part = sync
            .value
            .with_mut(|value| unsafe { f(&mut *value) as *mut U });
        MappedSynchronizedGuard {
            monitor,
            part,
            _borrow: PhantomData,
        }
    }

    /// As [`map`](Self::map), when `f` finds the part: the original guard
    /// back if it does not.
    ///
    /// ```
    /// use metalock::{Synchronized, SynchronizedGuard};
    ///
    /// let list = Synchronized::new(vec![1, 2]);
    /// let mut first = SynchronizedGuard::try_map(list.lock(), |v| v.first_mut()).unwrap();
    /// *first = 10;
    /// drop(first);
    /// assert!(SynchronizedGuard::try_map(list.lock(), |v| v.get_mut(5)).is_err());
    /// ```
    pub fn try_map<U: ?Sized>(
        guard: Self,
        f: impl FnOnce(&mut T) -> Option<&mut U>,
    ) -> Result<MappedSynchronizedGuard<'a, U>, Self> {
        Self::try_map_or_err(guard, |value| f(value).ok_or(())).map_err(|(guard, ())| guard)
    }

    /// As [`try_map`](Self::try_map), with the error `f` gives beside the
    /// original guard (lock_api's `try_map_or_err`).
    ///
    /// ```
    /// use metalock::{Synchronized, SynchronizedGuard};
    ///
    /// let ports = Synchronized::new(vec![80]);
    /// let found = SynchronizedGuard::try_map_or_err(ports.lock(), |ports| {
    ///     ports.get_mut(3).ok_or("no fourth port")
    /// });
    /// let (guard, error) = found.unwrap_err();
    /// assert_eq!((error, guard.len()), ("no fourth port", 1));
    /// ```
    pub fn try_map_or_err<U: ?Sized, E>(
        guard: Self,
        f: impl FnOnce(&mut T) -> Result<&mut U, E>,
    ) -> Result<MappedSynchronizedGuard<'a, U>, (Self, E)> {
        let SynchronizedGuard { monitor, sync } = guard;
        // SAFETY: as in `map`.
        let part = sync
            .value
            .with_mut(|value| unsafe { f(&mut *value).map(|part| part as *mut U) });
        match part {
            Ok(part) => Ok(MappedSynchronizedGuard {
                monitor,
                part,
                _borrow: PhantomData,
            }),
            Err(error) => Err((SynchronizedGuard { monitor, sync }, error)),
        }
    }

    /// Keeps the monitor for good and lends the value out for as long as
    /// the `Synchronized` is borrowed (lock_api's `MutexGuard::leak`): other
    /// threads' locks wait for ever, and a lock by this thread panics (rule
    /// 5 in the [module documentation](mod@crate::synchronized)).
    ///
    /// ```
    /// use metalock::{Synchronized, SynchronizedGuard};
    ///
    /// let config = Synchronized::new(String::from("v1"));
    /// let value: &mut String = SynchronizedGuard::leak(config.lock());
    /// value.push('!');
    /// assert!(config.is_held_by_current_thread() && config.try_lock().is_none());
    /// assert_eq!(value, "v1!");
    /// ```
    pub fn leak(guard: Self) -> &'a mut T {
        let SynchronizedGuard { monitor, sync } = guard;
        core::mem::forget(monitor);
        // SAFETY: the monitor is never released now, so nothing else
        // reaches the value while `sync` is borrowed, for `'a`.
        sync.value.with_mut(|value| unsafe { &mut *value })
    }
}

/// A [`SynchronizedGuard`] narrowed to a part of the value by
/// [`SynchronizedGuard::map`]. It releases the monitor when dropped, like
/// the guard it came from, but has no `wait`: a wait lets other threads
/// change the value, and the part could move or be freed meanwhile (an
/// element of a vector that grows). parking_lot's `MappedMutexGuard` cannot
/// wait on a `Condvar` for the same reason.
///
/// ```
/// use metalock::{MappedSynchronizedGuard, Synchronized, SynchronizedGuard};
///
/// struct Account {
///     owner: String,
///     balance: u64,
/// }
///
/// // Lends out the balance alone, under the account's monitor.
/// fn balance(account: &Synchronized<Account>) -> MappedSynchronizedGuard<'_, u64> {
///     SynchronizedGuard::map(account.lock(), |account| &mut account.balance)
/// }
///
/// let account = Synchronized::new(Account { owner: "ann".into(), balance: 10 });
/// *balance(&account) += 5;
/// let account = account.lock();
/// assert_eq!((account.owner.as_str(), account.balance), ("ann", 15));
/// ```
///
/// Invariant: `monitor` owns, at depth 1, the monitor of the `Synchronized`
/// whose value `part` points into; `part` is valid while it does.
#[must_use = "the monitor is released as soon as the guard is dropped"]
pub struct MappedSynchronizedGuard<'a, U: ?Sized> {
    monitor: MonitorGuard<'a>,
    part: *mut U,
    _borrow: PhantomData<&'a mut U>,
}

impl<'a, U: ?Sized> MappedSynchronizedGuard<'a, U> {
    /// Narrows the guard further (see [`SynchronizedGuard::map`]).
    ///
    /// ```
    /// use metalock::{MappedSynchronizedGuard, Synchronized, SynchronizedGuard};
    ///
    /// let config = Synchronized::new((String::from("db"), vec![8080]));
    /// let ports = SynchronizedGuard::map(config.lock(), |config| &mut config.1);
    /// let mut first = MappedSynchronizedGuard::map(ports, |ports| &mut ports[0]);
    /// *first += 1;
    /// drop(first);
    /// assert_eq!(config.lock().1, [8081]);
    /// ```
    pub fn map<V: ?Sized>(
        guard: Self,
        f: impl FnOnce(&mut U) -> &mut V,
    ) -> MappedSynchronizedGuard<'a, V> {
        let MappedSynchronizedGuard { monitor, part, .. } = guard;
        // SAFETY: the invariant; the only access while `monitor` lives.
        let part = unsafe { f(&mut *part) as *mut V };
        MappedSynchronizedGuard {
            monitor,
            part,
            _borrow: PhantomData,
        }
    }

    /// Narrows the guard further if `f` finds the part, else gives it back.
    ///
    /// ```
    /// use metalock::{MappedSynchronizedGuard, Synchronized, SynchronizedGuard};
    ///
    /// let grid = Synchronized::new(vec![vec![1, 2], vec![3]]);
    /// let row = SynchronizedGuard::map(grid.lock(), |grid| &mut grid[1]);
    /// // No such cell: the row's guard comes back, still holding the monitor.
    /// let row = MappedSynchronizedGuard::try_map(row, |row| row.get_mut(5)).unwrap_err();
    /// let mut cell = MappedSynchronizedGuard::try_map(row, |row| row.first_mut()).unwrap();
    /// *cell = 30;
    /// drop(cell);
    /// assert_eq!(grid.lock()[1], [30]);
    /// ```
    pub fn try_map<V: ?Sized>(
        guard: Self,
        f: impl FnOnce(&mut U) -> Option<&mut V>,
    ) -> Result<MappedSynchronizedGuard<'a, V>, Self> {
        Self::try_map_or_err(guard, |part| f(part).ok_or(())).map_err(|(guard, ())| guard)
    }

    /// As [`try_map`](Self::try_map), with the error `f` gives beside the
    /// guard.
    ///
    /// ```
    /// use metalock::{MappedSynchronizedGuard, Synchronized, SynchronizedGuard};
    ///
    /// let grid = Synchronized::new(vec![vec![1]]);
    /// let row = SynchronizedGuard::map(grid.lock(), |grid| &mut grid[0]);
    /// let (row, error) =
    ///     MappedSynchronizedGuard::try_map_or_err(row, |row| row.get_mut(2).ok_or(2)).unwrap_err();
    /// assert_eq!((error, row.len()), (2, 1));
    /// ```
    pub fn try_map_or_err<V: ?Sized, E>(
        guard: Self,
        f: impl FnOnce(&mut U) -> Result<&mut V, E>,
    ) -> Result<MappedSynchronizedGuard<'a, V>, (Self, E)> {
        // SAFETY: as in `map`.
        match unsafe { f(&mut *guard.part) }.map(|part| part as *mut V) {
            Ok(part) => {
                let MappedSynchronizedGuard { monitor, .. } = guard;
                Ok(MappedSynchronizedGuard {
                    monitor,
                    part,
                    _borrow: PhantomData,
                })
            }
            Err(error) => Err((guard, error)),
        }
    }

    /// Releases the monitor, handing it to the first thread queued to enter
    /// (see [`MonitorGuard::unlock_fair`]).
    ///
    /// ```
    /// use metalock::{Synchronized, SynchronizedGuard};
    ///
    /// let pair = Synchronized::new((0, 0));
    /// let mut left = SynchronizedGuard::map(pair.lock(), |pair| &mut pair.0);
    /// *left = 1;
    /// left.unlock_fair();
    /// assert_eq!(*pair.lock(), (1, 0));
    /// ```
    pub fn unlock_fair(self) {
        self.monitor.unlock_fair();
    }
}

impl<U: ?Sized> Deref for MappedSynchronizedGuard<'_, U> {
    type Target = U;

    fn deref(&self) -> &U {
        // SAFETY: the invariant.
        unsafe { &*self.part }
    }
}

impl<U: ?Sized> DerefMut for MappedSynchronizedGuard<'_, U> {
    fn deref_mut(&mut self) -> &mut U {
        // SAFETY: the invariant, and `&mut self` makes the access unique.
        unsafe { &mut *self.part }
    }
}

impl<U: ?Sized + fmt::Debug> fmt::Debug for MappedSynchronizedGuard<'_, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<U: ?Sized + fmt::Display> fmt::Display for MappedSynchronizedGuard<'_, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

// SAFETY: through a shared reference the guard gives only `&U` (`Deref`,
// the formatting impls); everything that touches the monitor takes the
// guard by value, on its owner's thread. So sharing it shares `&U`, sound
// when `U: Sync`, as lock_api's mapped guard.
unsafe impl<U: ?Sized + Sync> Sync for MappedSynchronizedGuard<'_, U> {}
