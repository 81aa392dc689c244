//! What soundness leaves to the type system, kept from compiling: each
//! example below must fail, and for the reason its error code names (a
//! lifetime error has none). The guards are not `Send`, nor `Sync` (but a
//! mapped guard of a `Sync` part), a guard is invariant in its value's type, and a guard's borrows end where
//! the monitor is released. Built only for `cargo test --doc`; the
//! synchronized module's docs show the first of these to users.
//!
//! Every guard stays on its thread:
//!
//! ```compile_fail,E0277
//! let s = std::sync::Arc::new(metalock::Synchronized::new(0));
//! let guard = s.lock_arc();
//! std::thread::spawn(move || drop(guard));
//! ```
//!
//! ```compile_fail,E0277
//! fn shared<T: Sync>(_: &T) {}
//! let s = std::sync::Arc::new(metalock::Synchronized::new(0));
//! shared(&s.lock_arc());
//! ```
//!
//! ```compile_fail,E0277
//! use metalock::{Synchronized, SynchronizedGuard};
//! let s = Synchronized::new((0, 0));
//! let first = SynchronizedGuard::map(s.lock(), |pair| &mut pair.0);
//! std::thread::scope(|scope| {
//!     scope.spawn(move || drop(first));
//! });
//! ```
//!
//! ```compile_fail,E0277
//! use metalock::{Synchronized, SynchronizedGuard};
//! fn shared<T: Sync>(_: &T) {}
//! let s = Synchronized::new(std::cell::Cell::new(0));
//! shared(&SynchronizedGuard::map(s.lock(), |cell| cell));
//! ```
//!
//! ```compile_fail,E0277
//! let word = metalock::MultiUseWord::new();
//! let guard = word.lock();
//! std::thread::scope(|scope| {
//!     scope.spawn(move || drop(guard));
//! });
//! ```
//!
//! ```compile_fail,E0277
//! use metalock::Monitor;
//! let word = std::sync::Arc::new(metalock::MultiUseWord::new());
//! let guard = word.lock_arc();
//! std::thread::spawn(move || drop(guard));
//! ```
//!
//! ```compile_fail,E0277
//! use metalock::Monitor;
//! fn shared<T: Sync>(_: &T) {}
//! let word = std::sync::Arc::new(metalock::MultiUseWord::new());
//! shared(&word.lock_arc());
//! ```
//!
//! ```compile_fail,E0277
//! let value = 5_u32;
//! let guard = metalock::lock(&value);
//! std::thread::scope(|scope| {
//!     scope.spawn(move || drop(guard));
//! });
//! ```
//!
//! ```compile_fail,E0277
//! let value = std::sync::Arc::new(5_u32);
//! let guard = metalock::lock_arc(&value);
//! std::thread::spawn(move || drop(guard));
//! ```
//!
//! ```compile_fail,E0277
//! fn shared<T: Sync>(_: &T) {}
//! let value = std::sync::Arc::new(5_u32);
//! shared(&metalock::lock_arc(&value));
//! ```
//!
//! The word an `Arc` guard of a word lends lives only as long as the guard
//! (the `Arc` may be the last):
//!
//! ```compile_fail,E0505
//! use metalock::{ArcMonitorGuard, Monitor, MultiUseWord};
//! let guard = std::sync::Arc::new(MultiUseWord::new()).lock_arc();
//! let word: &MultiUseWord = ArcMonitorGuard::word(&guard);
//! drop(guard);
//! word.lock();
//! ```
//!
//! A value shared through the monitor moves between threads, so it must be
//! `Send`, even if it is `Sync` (as a `MutexGuard` is):
//!
//! ```compile_fail,E0277
//! fn shared<T: Sync>(_: &T) {}
//! static INNER: std::sync::Mutex<()> = std::sync::Mutex::new(());
//! shared(&metalock::Synchronized::new(INNER.lock().unwrap()));
//! ```
//!
//! A guard's value type cannot be shortened, which would let a shorter-lived
//! reference be stored where a longer-lived one is read:
//!
//! ```compile_fail
//! use metalock::SynchronizedGuard;
//! fn shorten<'a>(g: SynchronizedGuard<'a, &'static str>) -> SynchronizedGuard<'a, &'a str> {
//!     g
//! }
//! ```
//!
//! ```compile_fail
//! use metalock::MappedSynchronizedGuard;
//! fn shorten<'a>(
//!     g: MappedSynchronizedGuard<'a, &'static str>,
//! ) -> MappedSynchronizedGuard<'a, &'a str> {
//!     g
//! }
//! ```
//!
//! ```compile_fail
//! use metalock::ArcSynchronizedGuard;
//! fn shorten<'a>(g: ArcSynchronizedGuard<&'static str>) -> ArcSynchronizedGuard<&'a str> {
//!     g
//! }
//! ```
//!
//! A wait on a `Condition` releases the monitor, so no reference into the
//! value lives across it:
//!
//! ```compile_fail,E0499
//! let s = metalock::Synchronized::new(0);
//! let condition = metalock::Condition::new();
//! let mut guard = s.lock();
//! let value: &mut i32 = &mut guard;
//! condition.wait(&mut guard);
//! *value += 1;
//! ```
//!
//! A keyed guard borrows its value, which cannot die under it:
//!
//! ```compile_fail,E0505
//! let value = Box::new(5_u32);
//! let guard = metalock::lock(&*value);
//! drop(value);
//! drop(guard);
//! ```
//!
//! A `ReentrantSynchronized` of a value that is not `Send` is not `Sync`,
//! even if the value is `Sync` (a `MutexGuard`); its guard stays on its
//! thread (neither `Send` nor `Sync`, whatever the value), and a reference
//! to its value ends with the guard, and at a wait:
//!
//! ```compile_fail,E0277
//! fn shared<T: Sync>(_: &T) {}
//! static INNER: std::sync::Mutex<()> = std::sync::Mutex::new(());
//! shared(&metalock::ReentrantSynchronized::new(INNER.lock().unwrap()));
//! ```
//!
//! ```compile_fail,E0277
//! fn shared<T: Sync>(_: &T) {}
//! let s = metalock::ReentrantSynchronized::new(0);
//! shared(&s.lock());
//! ```
//!
//! ```compile_fail,E0505
//! let s = metalock::ReentrantSynchronized::new(0);
//! let guard = s.lock();
//! let value: &i32 = &guard;
//! drop(guard);
//! assert_eq!(*value, 0);
//! ```
//!
//! ```compile_fail,E0502
//! let s = metalock::ReentrantSynchronized::new(std::cell::Cell::new(0));
//! let mut guard = s.lock();
//! let value: &std::cell::Cell<i32> = &guard;
//! guard.wait_for(std::time::Duration::from_millis(1));
//! value.set(1);
//! ```
//!
//! ```compile_fail,E0277
//! let s = metalock::ReentrantSynchronized::new(0);
//! let guard = s.lock();
//! std::thread::scope(|scope| {
//!     scope.spawn(move || drop(guard));
//! });
//! ```
//!
//! ```compile_fail,E0594
//! let s = metalock::ReentrantSynchronized::new(0);
//! let guard = s.lock();
//! *guard += 1;
//! ```
//!
//! Its mapped guard cannot keep the value past the guard (`map`'s closure
//! gets a reference for the call only), cannot wait, and stays on its
//! thread, as does its `Arc` guard:
//!
//! ```compile_fail,E0521
//! use metalock::{ReentrantSynchronized, ReentrantSynchronizedGuard};
//! let s = ReentrantSynchronized::new(std::cell::Cell::new(0));
//! let mut kept = None;
//! let part = ReentrantSynchronizedGuard::map(s.lock(), |value| {
//!     kept = Some(value);
//!     value
//! });
//! drop(part);
//! kept.unwrap().set(1);
//! ```
//!
//! ```compile_fail,E0599
//! use metalock::{ReentrantSynchronized, ReentrantSynchronizedGuard};
//! let s = ReentrantSynchronized::new((0, 0));
//! let mut part = ReentrantSynchronizedGuard::map(s.lock(), |pair| &pair.0);
//! part.wait();
//! ```
//!
//! ```compile_fail,E0277
//! use metalock::{ReentrantSynchronized, ReentrantSynchronizedGuard};
//! let s = ReentrantSynchronized::new((0, 0));
//! let part = ReentrantSynchronizedGuard::map(s.lock(), |pair| &pair.0);
//! std::thread::scope(|scope| {
//!     scope.spawn(move || drop(part));
//! });
//! ```
//!
//! ```compile_fail,E0277
//! let s = std::sync::Arc::new(metalock::ReentrantSynchronized::new(0));
//! let guard = s.lock_arc();
//! std::thread::spawn(move || drop(guard));
//! ```
//!
//! ```compile_fail,E0277
//! fn shared<T: Sync>(_: &T) {}
//! let s = std::sync::Arc::new(metalock::ReentrantSynchronized::new(0));
//! shared(&s.lock_arc());
//! ```
//!
//! A mapped guard is `Sync` only when its part is:
//!
//! ```compile_fail,E0277
//! use metalock::{ReentrantSynchronized, ReentrantSynchronizedGuard};
//! fn shared<T: Sync>(_: &T) {}
//! let s = ReentrantSynchronized::new((std::cell::Cell::new(0), 0));
//! shared(&ReentrantSynchronizedGuard::map(s.lock(), |pair| &pair.0));
//! ```
