//! A [`ReentrantSynchronizedGuard`] narrowed to a part of the value, as
//! lock_api's `MappedReentrantMutexGuard`.

use core::fmt;
use core::ops::Deref;

use super::ReentrantSynchronizedGuard;
use crate::guard::MonitorGuard;

impl<'a, T: ?Sized> ReentrantSynchronizedGuard<'a, T> {
    /// Narrows the guard to a part of the value, at the same level. An
    /// associated function (`ReentrantSynchronizedGuard::map(guard, f)`),
    /// so that it cannot clash with a method of `T`. The mapped guard
    /// cannot wait: see [`MappedReentrantSynchronizedGuard`].
    ///
    /// `f` gets a reference that lives only as long as the call, so it
    /// cannot keep the value past the guard.
    ///
    /// ```
    /// use metalock::{ReentrantSynchronized, ReentrantSynchronizedGuard};
    /// use std::cell::Cell;
    ///
    /// let pair = ReentrantSynchronized::new((Cell::new(1), String::from("a")));
    /// let count = ReentrantSynchronizedGuard::map(pair.lock(), |pair| &pair.0);
    /// count.set(count.get() + 1);
    /// let name = ReentrantSynchronizedGuard::map(pair.lock(), |pair| pair.1.as_str());
    /// assert_eq!((count.get(), &*name), (2, "a")); // two levels, one part each
    /// ```
    pub fn map<U: ?Sized>(
        guard: Self,
        f: impl FnOnce(&T) -> &U,
    ) -> MappedReentrantSynchronizedGuard<'a, U> {
        let ReentrantSynchronizedGuard { monitor, sync } = guard;
        MappedReentrantSynchronizedGuard {
            part: f(&sync.value),
            monitor,
        }
    }

    /// As [`map`](Self::map), when `f` finds the part: the original guard
    /// back if it does not.
    ///
    /// ```
    /// use metalock::{ReentrantSynchronized, ReentrantSynchronizedGuard};
    ///
    /// let list = ReentrantSynchronized::new(vec![1, 2]);
    /// let first = ReentrantSynchronizedGuard::try_map(list.lock(), |v| v.first()).unwrap();
    /// assert_eq!(*first, 1);
    /// let missing = ReentrantSynchronizedGuard::try_map(list.lock(), |v| v.get(5));
    /// assert_eq!(missing.unwrap_err().depth(), 2); // the guard, still held
    /// ```
    pub fn try_map<U: ?Sized>(
        guard: Self,
        f: impl FnOnce(&T) -> Option<&U>,
    ) -> Result<MappedReentrantSynchronizedGuard<'a, U>, Self> {
        Self::try_map_or_err(guard, |value| f(value).ok_or(())).map_err(|(guard, ())| guard)
    }

    /// As [`try_map`](Self::try_map), with the error `f` gives beside the
    /// original guard.
    ///
    /// ```
    /// use metalock::{ReentrantSynchronized, ReentrantSynchronizedGuard};
    ///
    /// let ports = ReentrantSynchronized::new(vec![80]);
    /// let found = ReentrantSynchronizedGuard::try_map_or_err(ports.lock(), |ports| {
    ///     ports.get(3).ok_or("no fourth port")
    /// });
    /// let (guard, error) = found.unwrap_err();
    /// assert_eq!((error, guard.len()), ("no fourth port", 1));
    /// ```
    pub fn try_map_or_err<U: ?Sized, E>(
        guard: Self,
        f: impl FnOnce(&T) -> Result<&U, E>,
    ) -> Result<MappedReentrantSynchronizedGuard<'a, U>, (Self, E)> {
        match f(&guard.sync.value) {
            Ok(part) => {
                let ReentrantSynchronizedGuard { monitor, .. } = guard;
                Ok(MappedReentrantSynchronizedGuard { monitor, part })
            }
            Err(error) => Err((guard, error)),
        }
    }
}

/// A [`ReentrantSynchronizedGuard`] narrowed to a part of the value by
/// [`ReentrantSynchronizedGuard::map`]: it holds the same level of the
/// monitor and releases it when dropped, but has no `wait` nor `unlocked`,
/// as lock_api's `MappedReentrantMutexGuard`: wait through the guard it
/// came from, before mapping.
///
/// ```
/// use metalock::{MappedReentrantSynchronizedGuard, ReentrantSynchronized, ReentrantSynchronizedGuard};
/// use std::cell::RefCell;
///
/// struct Registry {
///     names: RefCell<Vec<String>>,
/// }
///
/// // Lends out the names alone, under the registry's monitor.
/// fn names(registry: &ReentrantSynchronized<Registry>) -> MappedReentrantSynchronizedGuard<'_, RefCell<Vec<String>>> {
///     ReentrantSynchronizedGuard::map(registry.lock(), |registry| &registry.names)
/// }
///
/// let registry = ReentrantSynchronized::new(Registry { names: RefCell::new(Vec::new()) });
/// names(&registry).borrow_mut().push("ann".into());
/// assert_eq!(*registry.lock().names.borrow(), ["ann"]);
/// ```
///
/// Invariant: `monitor` owns the monitor of the `ReentrantSynchronized`
/// whose value `part` is in.
#[must_use = "the monitor is released as soon as the guard is dropped"]
pub struct MappedReentrantSynchronizedGuard<'a, U: ?Sized> {
    monitor: MonitorGuard<'a>,
    part: &'a U,
}

impl<'a, U: ?Sized> MappedReentrantSynchronizedGuard<'a, U> {
    /// Narrows the guard further (see [`ReentrantSynchronizedGuard::map`]).
    ///
    /// ```
    /// use metalock::{MappedReentrantSynchronizedGuard, ReentrantSynchronized, ReentrantSynchronizedGuard};
    ///
    /// let config = ReentrantSynchronized::new((String::from("db"), vec![8080]));
    /// let ports = ReentrantSynchronizedGuard::map(config.lock(), |config| &config.1);
    /// let first = MappedReentrantSynchronizedGuard::map(ports, |ports| &ports[0]);
    /// assert_eq!(*first, 8080);
    /// ```
    pub fn map<V: ?Sized>(
        guard: Self,
        f: impl FnOnce(&U) -> &V,
    ) -> MappedReentrantSynchronizedGuard<'a, V> {
        let MappedReentrantSynchronizedGuard { monitor, part } = guard;
        MappedReentrantSynchronizedGuard {
            part: f(part),
            monitor,
        }
    }

    /// Narrows the guard further if `f` finds the part, else gives it back.
    ///
    /// ```
    /// use metalock::{MappedReentrantSynchronizedGuard, ReentrantSynchronized, ReentrantSynchronizedGuard};
    ///
    /// let grid = ReentrantSynchronized::new(vec![vec![1, 2], vec![3]]);
    /// let row = ReentrantSynchronizedGuard::map(grid.lock(), |grid| &grid[1]);
    /// let row = MappedReentrantSynchronizedGuard::try_map(row, |row| row.get(5)).unwrap_err();
    /// let cell = MappedReentrantSynchronizedGuard::try_map(row, |row| row.first()).unwrap();
    /// assert_eq!(*cell, 3);
    /// ```
    pub fn try_map<V: ?Sized>(
        guard: Self,
        f: impl FnOnce(&U) -> Option<&V>,
    ) -> Result<MappedReentrantSynchronizedGuard<'a, V>, Self> {
        Self::try_map_or_err(guard, |part| f(part).ok_or(())).map_err(|(guard, ())| guard)
    }

    /// As [`try_map`](Self::try_map), with the error `f` gives beside the
    /// guard.
    ///
    /// ```
    /// use metalock::{MappedReentrantSynchronizedGuard, ReentrantSynchronized, ReentrantSynchronizedGuard};
    ///
    /// let grid = ReentrantSynchronized::new(vec![vec![1]]);
    /// let row = ReentrantSynchronizedGuard::map(grid.lock(), |grid| &grid[0]);
    /// let (row, error) =
    ///     MappedReentrantSynchronizedGuard::try_map_or_err(row, |row| row.get(2).ok_or(2))
    ///         .unwrap_err();
    /// assert_eq!((error, row.len()), (2, 1));
    /// ```
    pub fn try_map_or_err<V: ?Sized, E>(
        guard: Self,
        f: impl FnOnce(&U) -> Result<&V, E>,
    ) -> Result<MappedReentrantSynchronizedGuard<'a, V>, (Self, E)> {
        match f(guard.part) {
            Ok(part) => Ok(MappedReentrantSynchronizedGuard {
                monitor: guard.monitor,
                part,
            }),
            Err(error) => Err((guard, error)),
        }
    }

    /// Releases this level, handing the monitor to the first queued thread
    /// if that frees it (see [`MonitorGuard::unlock_fair`]).
    ///
    /// ```
    /// use metalock::{ReentrantSynchronized, ReentrantSynchronizedGuard};
    ///
    /// let pair = ReentrantSynchronized::new((0, 0));
    /// let left = ReentrantSynchronizedGuard::map(pair.lock(), |pair| &pair.0);
    /// left.unlock_fair();
    /// assert!(!pair.is_locked());
    /// ```
    pub fn unlock_fair(self) {
        self.monitor.unlock_fair();
    }
}

impl<U: ?Sized> Deref for MappedReentrantSynchronizedGuard<'_, U> {
    type Target = U;

    #[inline]
    fn deref(&self) -> &U {
        self.part
    }
}

impl<U: ?Sized + fmt::Debug> fmt::Debug for MappedReentrantSynchronizedGuard<'_, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.part, f)
    }
}

impl<U: ?Sized + fmt::Display> fmt::Display for MappedReentrantSynchronizedGuard<'_, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.part, f)
    }
}

// SAFETY: through a shared reference the guard gives only `&U` (`Deref` and
// the formatting impls); everything that releases the monitor
// takes the guard by value, on its owner's thread. So sharing it shares
// `&U`, sound when `U: Sync` (whatever the rest of the value is), as
// lock_api's mapped guard.
unsafe impl<U: ?Sized + Sync> Sync for MappedReentrantSynchronizedGuard<'_, U> {}
