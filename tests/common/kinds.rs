//! The kinds of monitor (embedded `MultiUseWord`, `Synchronized<T>`,
//! `ReentrantSynchronized<T>`, keyed `metalock::lock(&value)`, and each
//! through an `Arc` with its `lock_arc` guard) behind one interface, so
//! that a test body runs against each.

// Each test file that includes this module uses part of it.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use metalock::{ArcKeyedGuard, ArcMonitorGuard, ArcReentrantSynchronizedGuard};
use metalock::{ArcSynchronizedGuard, Monitor};
use metalock::{AsMonitorGuard, Instant, Interrupted, KeyedGuard, MonitorGuard, MultiUseWord};
use metalock::{ReentrantSynchronized, ReentrantSynchronizedGuard};
use metalock::{Synchronized, SynchronizedGuard, WaitTimeoutResult};

/// A kind of monitor, as the tests use it.
pub trait Kind: Sync + Sized {
    type Guard<'a>: Guard
    where
        Self: 'a;
    const REENTRANT: bool;
    /// Whether a wait may be made below the outermost guard (a
    /// `ReentrantSynchronizedGuard`'s may not: it lends `&T`).
    const DEEP_WAITS: bool;
    fn make() -> Self;
    fn lock(&self) -> Self::Guard<'_>;
    fn lock_interruptibly(&self) -> Result<Self::Guard<'_>, Interrupted>;
    fn try_lock_for_interruptibly(
        &self,
        timeout: Duration,
    ) -> Result<Option<Self::Guard<'_>>, Interrupted>;
    fn try_lock_until_interruptibly(
        &self,
        deadline: Instant,
    ) -> Result<Option<Self::Guard<'_>>, Interrupted>;
    fn try_lock(&self) -> Option<Self::Guard<'_>>;
    fn is_locked(&self) -> bool;
    fn is_held_by_current_thread(&self) -> bool;
    fn queue_length(&self) -> usize;
    fn wait_set_length(&self) -> usize;
    fn has_queued_threads(&self) -> bool;
    fn has_waiters(&self) -> bool;
}

/// What every guard offers.
pub trait Guard: AsMonitorGuard + Sized {
    fn depth(&self) -> usize;
    fn wait(&mut self);
    fn wait_for(&mut self, timeout: Duration) -> WaitTimeoutResult;
    fn wait_for_interruptibly(
        &mut self,
        timeout: Duration,
    ) -> Result<WaitTimeoutResult, Interrupted>;
    fn wait_interruptibly(&mut self) -> Result<(), Interrupted>;
    fn wait_while_interruptibly(
        &mut self,
        condition: impl FnMut() -> bool,
    ) -> Result<(), Interrupted>;
    fn wait_while_for_interruptibly(
        &mut self,
        condition: impl FnMut() -> bool,
        timeout: Duration,
    ) -> Result<WaitTimeoutResult, Interrupted>;
    fn wait_while_until_interruptibly(
        &mut self,
        condition: impl FnMut() -> bool,
        deadline: Instant,
    ) -> Result<WaitTimeoutResult, Interrupted>;
    fn notify_one(&self) -> bool;
    fn notify_all(&self) -> usize;
    fn unlocked<U>(&mut self, f: impl FnOnce() -> U) -> U;
    fn unlocked_fair<U>(&mut self, f: impl FnOnce() -> U) -> U;
    fn bump(&mut self);
    fn unlock_fair(self);
    /// Whether the guard owns an `Arc`, read from its type's name (the
    /// crate's `Arc` guards are the types named `Arc...`): the tests check
    /// it against `INTO_ARC_FAIR`, so that a guard given no
    /// `into_arc_fair` in `guard_impl!` fails them instead of skipping it.
    fn owns_arc() -> bool {
        let path = std::any::type_name::<Self>();
        let path = path.split('<').next().unwrap_or(path);
        path.rsplit("::")
            .next()
            .is_some_and(|name| name.starts_with("Arc"))
    }
    /// Whether `into_arc_fair` is the guard's own.
    const INTO_ARC_FAIR: bool = false;
    /// `into_arc_fair`, the `Arc` dropped.
    fn into_arc_fair(self) {
        unreachable!("into_arc_fair of a guard without an Arc");
    }
}

/// `$condition => $adapted`: how a guard's `wait_while` forms take a
/// condition that sees nothing (a `SynchronizedGuard`'s sees the value).
/// `into_arc_fair`: the guard owns an `Arc` and has that method.
macro_rules! guard_impl {
    ($guard:ty, $depth:expr $(, $into_arc_fair:ident)?) => {
        guard_impl!($guard, $depth, condition => condition $(, $into_arc_fair)?);
    };
    ($guard:ty, $depth:expr, $condition:ident => $adapted:expr $(, $into_arc_fair:ident)?) => {
        impl Guard for $guard {
            fn depth(&self) -> usize {
                let depth: fn(&Self) -> usize = $depth;
                depth(self)
            }
            fn wait(&mut self) {
                Self::wait(self)
            }
            fn wait_for(&mut self, timeout: Duration) -> WaitTimeoutResult {
                Self::wait_for(self, timeout)
            }
            fn wait_for_interruptibly(
                &mut self,
                timeout: Duration,
            ) -> Result<WaitTimeoutResult, Interrupted> {
                Self::wait_for_interruptibly(self, timeout)
            }
            fn wait_interruptibly(&mut self) -> Result<(), Interrupted> {
                Self::wait_interruptibly(self)
            }
            fn wait_while_interruptibly(
                &mut self,
                $condition: impl FnMut() -> bool,
            ) -> Result<(), Interrupted> {
                Self::wait_while_interruptibly(self, $adapted)
            }
            fn wait_while_for_interruptibly(
                &mut self,
                $condition: impl FnMut() -> bool,
                timeout: Duration,
            ) -> Result<WaitTimeoutResult, Interrupted> {
                Self::wait_while_for_interruptibly(self, $adapted, timeout)
            }
            fn wait_while_until_interruptibly(
                &mut self,
                $condition: impl FnMut() -> bool,
                deadline: Instant,
            ) -> Result<WaitTimeoutResult, Interrupted> {
                Self::wait_while_until_interruptibly(self, $adapted, deadline)
            }
            fn notify_one(&self) -> bool {
                Self::notify_one(self)
            }
            fn notify_all(&self) -> usize {
                Self::notify_all(self)
            }
            fn unlocked<U>(&mut self, f: impl FnOnce() -> U) -> U {
                Self::unlocked(self, f)
            }
            fn unlocked_fair<U>(&mut self, f: impl FnOnce() -> U) -> U {
                Self::unlocked_fair(self, f)
            }
            fn bump(&mut self) {
                Self::bump(self)
            }
            fn unlock_fair(self) {
                Self::unlock_fair(self)
            }
            $(
                const INTO_ARC_FAIR: bool = true;
                fn $into_arc_fair(self) {
                    drop(Self::$into_arc_fair(self));
                }
            )?
        }
    };
}

guard_impl!(MonitorGuard<'_>, |g| g.depth());
guard_impl!(KeyedGuard<'_>, |g| g.depth());
guard_impl!(SynchronizedGuard<'_, ()>, |_| 1, condition => {
    let mut condition = condition;
    move |_: &mut ()| condition()
});
guard_impl!(ReentrantSynchronizedGuard<'_, ()>, |g| g.depth(), condition => {
    let mut condition = condition;
    move |_: &()| condition()
});
guard_impl!(ArcMonitorGuard<MultiUseWord>, |g| g.depth(), into_arc_fair);
guard_impl!(ArcKeyedGuard<u64>, |g| g.depth(), into_arc_fair);
guard_impl!(ArcSynchronizedGuard<()>, |_| 1, condition => {
    let mut condition = condition;
    move |_: &mut ()| condition()
}, into_arc_fair);
guard_impl!(ArcReentrantSynchronizedGuard<()>, |g| g.depth(), condition => {
    let mut condition = condition;
    move |_: &()| condition()
}, into_arc_fair);

impl Kind for MultiUseWord {
    type Guard<'a> = MonitorGuard<'a>;
    const REENTRANT: bool = true;
    const DEEP_WAITS: bool = true;
    fn make() -> Self {
        MultiUseWord::new()
    }
    fn lock(&self) -> MonitorGuard<'_> {
        MultiUseWord::lock(self)
    }
    fn lock_interruptibly(&self) -> Result<MonitorGuard<'_>, Interrupted> {
        MultiUseWord::lock_interruptibly(self)
    }
    fn try_lock_for_interruptibly(
        &self,
        timeout: Duration,
    ) -> Result<Option<MonitorGuard<'_>>, Interrupted> {
        MultiUseWord::try_lock_for_interruptibly(self, timeout)
    }
    fn try_lock_until_interruptibly(
        &self,
        deadline: Instant,
    ) -> Result<Option<MonitorGuard<'_>>, Interrupted> {
        MultiUseWord::try_lock_until_interruptibly(self, deadline)
    }
    fn try_lock(&self) -> Option<MonitorGuard<'_>> {
        MultiUseWord::try_lock(self)
    }
    fn is_locked(&self) -> bool {
        MultiUseWord::is_locked(self)
    }
    fn is_held_by_current_thread(&self) -> bool {
        MultiUseWord::is_held_by_current_thread(self)
    }
    fn queue_length(&self) -> usize {
        MultiUseWord::queue_length(self)
    }
    fn wait_set_length(&self) -> usize {
        MultiUseWord::wait_set_length(self)
    }
    fn has_queued_threads(&self) -> bool {
        MultiUseWord::has_queued_threads(self)
    }
    fn has_waiters(&self) -> bool {
        MultiUseWord::has_waiters(self)
    }
}

impl Kind for Synchronized<()> {
    type Guard<'a> = SynchronizedGuard<'a, ()>;
    const REENTRANT: bool = false;
    const DEEP_WAITS: bool = false;
    fn make() -> Self {
        Synchronized::new(())
    }
    fn lock(&self) -> SynchronizedGuard<'_, ()> {
        Synchronized::lock(self)
    }
    fn lock_interruptibly(&self) -> Result<SynchronizedGuard<'_, ()>, Interrupted> {
        Synchronized::lock_interruptibly(self)
    }
    fn try_lock_for_interruptibly(
        &self,
        timeout: Duration,
    ) -> Result<Option<SynchronizedGuard<'_, ()>>, Interrupted> {
        Synchronized::try_lock_for_interruptibly(self, timeout)
    }
    fn try_lock_until_interruptibly(
        &self,
        deadline: Instant,
    ) -> Result<Option<SynchronizedGuard<'_, ()>>, Interrupted> {
        Synchronized::try_lock_until_interruptibly(self, deadline)
    }
    fn try_lock(&self) -> Option<SynchronizedGuard<'_, ()>> {
        Synchronized::try_lock(self)
    }
    fn is_locked(&self) -> bool {
        Synchronized::is_locked(self)
    }
    fn is_held_by_current_thread(&self) -> bool {
        Synchronized::is_held_by_current_thread(self)
    }
    fn queue_length(&self) -> usize {
        Synchronized::queue_length(self)
    }
    fn wait_set_length(&self) -> usize {
        Synchronized::wait_set_length(self)
    }
    fn has_queued_threads(&self) -> bool {
        Synchronized::has_queued_threads(self)
    }
    fn has_waiters(&self) -> bool {
        Synchronized::has_waiters(self)
    }
}

impl Kind for ReentrantSynchronized<()> {
    type Guard<'a> = ReentrantSynchronizedGuard<'a, ()>;
    const REENTRANT: bool = true;
    const DEEP_WAITS: bool = false;
    fn make() -> Self {
        ReentrantSynchronized::new(())
    }
    fn lock(&self) -> ReentrantSynchronizedGuard<'_, ()> {
        ReentrantSynchronized::lock(self)
    }
    fn lock_interruptibly(&self) -> Result<ReentrantSynchronizedGuard<'_, ()>, Interrupted> {
        ReentrantSynchronized::lock_interruptibly(self)
    }
    fn try_lock_for_interruptibly(
        &self,
        timeout: Duration,
    ) -> Result<Option<ReentrantSynchronizedGuard<'_, ()>>, Interrupted> {
        ReentrantSynchronized::try_lock_for_interruptibly(self, timeout)
    }
    fn try_lock_until_interruptibly(
        &self,
        deadline: Instant,
    ) -> Result<Option<ReentrantSynchronizedGuard<'_, ()>>, Interrupted> {
        ReentrantSynchronized::try_lock_until_interruptibly(self, deadline)
    }
    fn try_lock(&self) -> Option<ReentrantSynchronizedGuard<'_, ()>> {
        ReentrantSynchronized::try_lock(self)
    }
    fn is_locked(&self) -> bool {
        ReentrantSynchronized::is_locked(self)
    }
    fn is_held_by_current_thread(&self) -> bool {
        ReentrantSynchronized::is_held_by_current_thread(self)
    }
    fn queue_length(&self) -> usize {
        ReentrantSynchronized::queue_length(self)
    }
    fn wait_set_length(&self) -> usize {
        ReentrantSynchronized::wait_set_length(self)
    }
    fn has_queued_threads(&self) -> bool {
        ReentrantSynchronized::has_queued_threads(self)
    }
    fn has_waiters(&self) -> bool {
        ReentrantSynchronized::has_waiters(self)
    }
}

/// A keyed monitor: the monitor of a byte that embeds nothing, found by its
/// address.
pub struct Keyed(&'static u8);

impl Keyed {
    /// The monitor of `byte`, which may share its home with other bytes
    /// (those of one 8-byte granule do).
    pub fn at(byte: &'static u8) -> Self {
        Keyed(byte)
    }
}

impl Kind for Keyed {
    type Guard<'a> = KeyedGuard<'a>;
    const REENTRANT: bool = true;
    const DEEP_WAITS: bool = true;
    /// On the first byte of an 8-byte granule of its own (so no other
    /// `make` shares its home by address), boxed and leaked: a test makes
    /// few, and no later value takes the address.
    fn make() -> Self {
        #[repr(align(8))]
        struct Granule([u8; 8]);
        Keyed(&Box::leak(Box::new(Granule([0; 8]))).0[0])
    }
    fn lock(&self) -> KeyedGuard<'_> {
        metalock::lock(self.0)
    }
    fn lock_interruptibly(&self) -> Result<KeyedGuard<'_>, Interrupted> {
        metalock::lock_interruptibly(self.0)
    }
    fn try_lock_for_interruptibly(
        &self,
        timeout: Duration,
    ) -> Result<Option<KeyedGuard<'_>>, Interrupted> {
        metalock::try_lock_for_interruptibly(self.0, timeout)
    }
    fn try_lock_until_interruptibly(
        &self,
        deadline: Instant,
    ) -> Result<Option<KeyedGuard<'_>>, Interrupted> {
        metalock::try_lock_until_interruptibly(self.0, deadline)
    }
    fn try_lock(&self) -> Option<KeyedGuard<'_>> {
        metalock::try_lock(self.0)
    }
    fn is_locked(&self) -> bool {
        metalock::is_locked(self.0)
    }
    fn is_held_by_current_thread(&self) -> bool {
        metalock::is_held_by_current_thread(self.0)
    }
    fn queue_length(&self) -> usize {
        metalock::queue_length(self.0)
    }
    fn wait_set_length(&self) -> usize {
        metalock::wait_set_length(self.0)
    }
    fn has_queued_threads(&self) -> bool {
        metalock::has_queued_threads(self.0)
    }
    fn has_waiters(&self) -> bool {
        metalock::has_waiters(self.0)
    }
}

/// A kind reached through an `Arc`: its guards are the `lock_arc` forms,
/// which own a clone of it.
pub struct InArc<K>(Arc<K>);

/// `Kind` for `InArc<$kind>`, made by `$make`, its guard `$guard`.
macro_rules! in_arc_kind {
    ($kind:ty, $guard:ty, $make:expr, reentrant: $reentrant:expr, deep_waits: $deep:expr) => {
        impl Kind for InArc<$kind> {
            type Guard<'a> = $guard;
            const REENTRANT: bool = $reentrant;
            const DEEP_WAITS: bool = $deep;
            fn make() -> Self {
                InArc(Arc::new($make))
            }
            fn lock(&self) -> $guard {
                self.0.lock_arc()
            }
            fn lock_interruptibly(&self) -> Result<$guard, Interrupted> {
                self.0.lock_arc_interruptibly()
            }
            fn try_lock_for_interruptibly(
                &self,
                timeout: Duration,
            ) -> Result<Option<$guard>, Interrupted> {
                self.0.try_lock_arc_for_interruptibly(timeout)
            }
            fn try_lock_until_interruptibly(
                &self,
                deadline: Instant,
            ) -> Result<Option<$guard>, Interrupted> {
                self.0.try_lock_arc_until_interruptibly(deadline)
            }
            fn try_lock(&self) -> Option<$guard> {
                self.0.try_lock_arc()
            }
            fn is_locked(&self) -> bool {
                self.0.is_locked()
            }
            fn is_held_by_current_thread(&self) -> bool {
                self.0.is_held_by_current_thread()
            }
            fn queue_length(&self) -> usize {
                self.0.queue_length()
            }
            fn wait_set_length(&self) -> usize {
                self.0.wait_set_length()
            }
            fn has_queued_threads(&self) -> bool {
                self.0.has_queued_threads()
            }
            fn has_waiters(&self) -> bool {
                self.0.has_waiters()
            }
        }
    };
}

in_arc_kind!(
    MultiUseWord,
    ArcMonitorGuard<MultiUseWord>,
    MultiUseWord::new(),
    reentrant: true,
    deep_waits: true
);
in_arc_kind!(
    Synchronized<()>,
    ArcSynchronizedGuard<()>,
    Synchronized::new(()),
    reentrant: false,
    deep_waits: false
);
in_arc_kind!(
    ReentrantSynchronized<()>,
    ArcReentrantSynchronizedGuard<()>,
    ReentrantSynchronized::new(()),
    reentrant: true,
    deep_waits: false
);

/// A keyed monitor of a value in an `Arc` (a `u64`, alone in its 8-byte
/// granule), locked by `metalock::lock_arc`.
pub struct KeyedInArc(Arc<u64>);

impl Kind for KeyedInArc {
    type Guard<'a> = ArcKeyedGuard<u64>;
    const REENTRANT: bool = true;
    const DEEP_WAITS: bool = true;
    fn make() -> Self {
        KeyedInArc(Arc::new(0))
    }
    fn lock(&self) -> ArcKeyedGuard<u64> {
        metalock::lock_arc(&self.0)
    }
    fn lock_interruptibly(&self) -> Result<ArcKeyedGuard<u64>, Interrupted> {
        metalock::lock_arc_interruptibly(&self.0)
    }
    fn try_lock_for_interruptibly(
        &self,
        timeout: Duration,
    ) -> Result<Option<ArcKeyedGuard<u64>>, Interrupted> {
        metalock::try_lock_arc_for_interruptibly(&self.0, timeout)
    }
    fn try_lock_until_interruptibly(
        &self,
        deadline: Instant,
    ) -> Result<Option<ArcKeyedGuard<u64>>, Interrupted> {
        metalock::try_lock_arc_until_interruptibly(&self.0, deadline)
    }
    fn try_lock(&self) -> Option<ArcKeyedGuard<u64>> {
        metalock::try_lock_arc(&self.0)
    }
    fn is_locked(&self) -> bool {
        metalock::is_locked(&*self.0)
    }
    fn is_held_by_current_thread(&self) -> bool {
        metalock::is_held_by_current_thread(&*self.0)
    }
    fn queue_length(&self) -> usize {
        metalock::queue_length(&*self.0)
    }
    fn wait_set_length(&self) -> usize {
        metalock::wait_set_length(&*self.0)
    }
    fn has_queued_threads(&self) -> bool {
        metalock::has_queued_threads(&*self.0)
    }
    fn has_waiters(&self) -> bool {
        metalock::has_waiters(&*self.0)
    }
}
