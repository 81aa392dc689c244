//! Interrupts (paper 000, section 2.1; Java's `Thread.interrupt`): the third
//! way a wait ends, besides a notification and a timeout.
//!
//! Every thread has an interrupt flag. [`InterruptHandle::interrupt`] sets
//! it; the `wait*_interruptibly` methods of the guards, and the
//! `lock_interruptibly`, `try_lock_*_interruptibly` methods (and their
//! `lock_arc` forms), end with [`Interrupted`] when it is set (clearing
//! it), and [`interrupted`] tests and clears it. Plain `wait` and `lock`
//! ignore it, as in Java.
//!
//! The flag is a thread-local. Once the thread's thread-locals are being
//! destroyed, code in a later destructor no longer reaches it: its
//! interruptible waits end only by notification or timeout (a handle taken
//! earlier sets a flag they do not read), `interrupt_handle` returns a
//! handle to a fresh flag at each call, which no wait reads (so even an
//! interrupt sent just before the wait does not end it), and `interrupted`
//! returns `false`. Such a wait should be timed.
//!
//! ```
//! use metalock::{Interrupted, Synchronized};
//!
//! let jobs = Synchronized::new(Vec::<u32>::new());
//! let (tx, rx) = std::sync::mpsc::channel();
//! std::thread::scope(|s| {
//!     s.spawn(|| {
//!         tx.send(metalock::interrupt_handle()).unwrap();
//!         let mut queue = jobs.lock();
//!         // Waits for jobs until told to stop.
//!         while queue.is_empty() {
//!             if queue.wait_interruptibly() == Err(Interrupted) {
//!                 return;
//!             }
//!         }
//!     });
//!     rx.recv().unwrap().interrupt();
//! });
//! ```

use alloc::sync::Arc;

use crate::exec_env::interrupt::Interrupt;

/// A way to interrupt one thread, from any thread: `Clone`, `Send` and
/// `Sync`. Made by [`interrupt_handle`] on the thread it interrupts; it
/// stays valid (and harmless) after that thread exits.
///
/// ```
/// use metalock::{InterruptHandle, Interrupted, MultiUseWord};
///
/// let handle: InterruptHandle = metalock::interrupt_handle();
/// let word = MultiUseWord::new();
/// let mut guard = word.lock();
/// std::thread::scope(|s| {
///     s.spawn(|| handle.interrupt()); // from another thread
/// });
/// // The flag was set before the wait: it ends at once.
/// assert_eq!(guard.wait_interruptibly(), Err(Interrupted));
/// ```
#[derive(Clone, Debug)]
pub struct InterruptHandle(Arc<Interrupt>);

impl InterruptHandle {
    /// Sets the thread's interrupt flag, and wakes it if it is in an
    /// interruptible wait or lock, which then returns [`Interrupted`]
    /// (unless a notify reached it first, or the monitor was handed to it:
    /// then it returns as notified, or entered, and the flag stays set for
    /// its next interruptible call). A thread that is not
    /// waiting finds the flag at its next interruptible wait, which returns
    /// at once, or through [`interrupted`].
    ///
    /// ```
    /// let handle = metalock::interrupt_handle();
    /// handle.interrupt();
    /// assert!(handle.is_interrupted());
    /// assert!(metalock::interrupted());
    /// assert!(!handle.is_interrupted());
    /// ```
    pub fn interrupt(&self) {
        self.0.interrupt();
    }

    /// Whether the thread's flag is set (a snapshot; it is not cleared).
    ///
    /// ```
    /// let handle = metalock::interrupt_handle();
    /// assert!(!handle.is_interrupted());
    /// handle.interrupt();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| assert!(handle.is_interrupted())); // any thread may look
    /// });
    /// assert!(handle.is_interrupted()); // looking does not clear it
    /// assert!(metalock::interrupted()); // this does
    /// assert!(!handle.is_interrupted());
    /// ```
    pub fn is_interrupted(&self) -> bool {
        self.0.is_pending()
    }
}

/// A handle that interrupts the calling thread.
///
/// In a thread-local destructor that runs after the crate's own, the
/// thread's flag is gone: each call returns a handle to a fresh flag that
/// no wait reads, so an interruptible wait there ends only by a
/// notification or its timeout (make it timed).
///
/// ```
/// use metalock::MultiUseWord;
///
/// let word = MultiUseWord::new();
/// let (tx, rx) = std::sync::mpsc::channel();
/// std::thread::scope(|s| {
///     let waiter = s.spawn(|| {
///         tx.send(metalock::interrupt_handle()).unwrap();
///         let mut guard = word.lock();
///         guard.wait_interruptibly()
///     });
///     rx.recv().unwrap().interrupt();
///     assert_eq!(waiter.join().unwrap(), Err(metalock::Interrupted));
/// });
/// ```
pub fn interrupt_handle() -> InterruptHandle {
    InterruptHandle(Interrupt::current())
}

/// Whether the calling thread's interrupt flag was set; clears it (Java's
/// `Thread.interrupted()`).
///
/// ```
/// assert!(!metalock::interrupted());
/// metalock::interrupt_handle().interrupt();
/// assert!(metalock::interrupted());
/// assert!(!metalock::interrupted());
/// ```
pub fn interrupted() -> bool {
    Interrupt::take_current()
}

/// The error of a wait or an enter (`lock_interruptibly`,
/// `try_lock_*_interruptibly`, their `lock_arc` forms) that an interrupt ended, the thread's
/// interrupt flag cleared: after a wait, the monitor is held again at the
/// depth it had; after an enter, it was not entered.
///
/// ```
/// use metalock::MultiUseWord;
/// use std::error::Error;
///
/// fn next_job(word: &MultiUseWord) -> Result<(), Box<dyn Error>> {
///     let mut guard = word.lock();
///     guard.wait_interruptibly()?; // an `Error`, so `?` converts it
///     Ok(())
/// }
///
/// metalock::interrupt_handle().interrupt();
/// let error = next_job(&MultiUseWord::new()).unwrap_err();
/// assert_eq!(error.to_string(), "interrupted");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Interrupted;

impl core::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}
