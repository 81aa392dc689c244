//! A notify that races an interrupt of the waiter it would reach (JLS
//! 17.2.4), shared by the models of each kind of monitor: the waiter
//! publishes its interrupt handle and waits; the notifier interrupts it,
//! then notifies; the waiter reads its flag only once both were sent.

use loom::sync::atomic::{AtomicBool, Ordering::SeqCst};
use loom::sync::{Arc, Mutex};
use loom::thread;
use metalock::{InterruptHandle, Interrupted};

/// The two sides' meeting point.
pub struct InterruptRace {
    handle: Mutex<Option<InterruptHandle>>,
    sent: AtomicBool,
}

impl InterruptRace {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            handle: Mutex::new(None),
            sent: AtomicBool::new(false),
        })
    }

    /// The waiter, before it waits: its handle, for the notifier.
    pub fn publish_handle(&self) {
        *self.handle.lock().unwrap() = Some(metalock::interrupt_handle());
    }

    /// The waiter, once its wait has ended: whether its interrupt is still
    /// pending (and clears it), read once the notifier sent both.
    pub fn pending_after_the_wait(&self) -> bool {
        // SeqCst: the interrupt, sent before the flag, is seen.
        while !self.sent.load(SeqCst) {
            thread::yield_now();
        }
        metalock::interrupted()
    }

    /// The notifier: interrupts the waiter, then runs `notify`, whose
    /// answer (did it reach a waiter?) it returns.
    pub fn interrupt_then_notify(&self, notify: impl FnOnce() -> bool) -> bool {
        let handle = loop {
            if let Some(handle) = self.handle.lock().unwrap().take() {
                break handle;
            }
            thread::yield_now();
        };
        handle.interrupt();
        let notified = notify();
        self.sent.store(true, SeqCst);
        notified
    }
}

/// The rule: a wait that the notify reached returns as notified
/// (`Ok(false)`) and leaves the interrupt pending; any other ending (the
/// interrupt reported, or a timeout) means the notify reached nobody.
pub fn assert_notify_or_interrupt(
    notified: bool,
    result: Result<bool, Interrupted>,
    pending: bool,
) {
    assert_eq!(
        notified,
        result == Ok(false),
        "notified {notified}, wait {result:?}"
    );
    assert_eq!(
        pending,
        result.is_ok(),
        "pending {pending}, wait {result:?}"
    );
}
