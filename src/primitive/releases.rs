use super::model::sync::{Condvar, Mutex};

struct Releases {
    count: Mutex<u64>,
    released: Condvar,
}

super::lazy_static! {
    static ref RELEASES: Releases = Releases {
        count: Mutex::new(0),
        released: Condvar::new(),
    };
}

/// Creates this execution's count of releases (`model::start_execution`).
#[cfg(loom)]
pub(crate) fn create_releases() {
    let _ = core::ops::Deref::deref(&RELEASES);
}

/// Runs `attempt` until it returns `Some`, blocking between attempts
/// until the next `released`.
pub(crate) fn retry_after_release<R>(mut attempt: impl FnMut() -> Option<R>) -> R {
    let mut count = RELEASES.count.lock().unwrap();
    loop {
        if let Some(result) = attempt() {
            return result;
        }
        count = RELEASES.released.wait(count).unwrap();
    }
}

/// Tells the threads blocked in `retry_after_release` that a meta-lock
/// was released (after the releasing store).
pub(crate) fn released() {
    *RELEASES.count.lock().unwrap() += 1;
    RELEASES.released.notify_all();
}
