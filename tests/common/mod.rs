//! Helpers shared by the integration tests.

#[cfg(target_os = "linux")]
pub mod blocked;
pub mod kinds;
pub mod panics;
pub mod rng;
pub mod watched;

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// Turns a hang into a failure: unless dropped within `hang`, aborts the
/// test process with a message naming the test. A broken monitor hangs
/// rather than fails (a lost wake-up, a wait loop that never ends), and a
/// failing assertion on one thread can leave a scoped thread waiting forever
/// for a notification, with `thread::scope` waiting for it.
pub struct Watchdog {
    _disarm: mpsc::Sender<()>,
}

impl Watchdog {
    pub fn arm(hang: Duration) -> Self {
        let test = thread::current().name().unwrap_or("?").to_owned();
        let (disarm, armed) = mpsc::channel::<()>();
        thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = armed.recv_timeout(hang) {
                eprintln!("{test}: still running after {hang:?}: hung; aborting");
                std::process::abort();
            }
        });
        Self { _disarm: disarm }
    }
}

/// Sets the calling thread's interrupt flag before each of `enters`, which
/// says whether it was refused with `Interrupted`: each must be, and must
/// clear the flag.
// Not every test file that includes this module uses it.
#[allow(dead_code)]
#[track_caller]
pub fn refused_when_interrupted(enters: &[&dyn Fn() -> bool]) {
    for (i, enter) in enters.iter().enumerate() {
        metalock::interrupt_handle().interrupt();
        assert!(enter(), "enter {i} ignored a pending interrupt");
        assert!(!metalock::interrupted(), "enter {i} did not clear the flag");
    }
}
