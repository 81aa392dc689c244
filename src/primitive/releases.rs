use super::model::sync::{Condvar, Mutex};

/// One execution's releases.
///
/// Invariant: `retrying` counts the threads inside `retry_after_release`,
/// each counted before its first attempt, so a release that finds it zero
/// has no thread to wake (the checker switches threads only at its own
/// operations, and a counted thread attempts after the count).
struct Releases {
    count: Mutex<u64>,
    released: Condvar,
    /// A std atomic, which the checker does not see: a release that finds
    /// no retrier skips the lock, whose edges would order the releases of
    /// unrelated meta-locks, which the real back-off does not.
    retrying: std::sync::atomic::AtomicUsize,
}

super::lazy_static! {
    static ref RELEASES: Releases = Releases {
        count: Mutex::new(0),
        released: Condvar::new(),
        retrying: std::sync::atomic::AtomicUsize::new(0),
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
    use std::sync::atomic::Ordering::SeqCst;
    let mut count = RELEASES.count.lock().unwrap();
    RELEASES.retrying.fetch_add(1, SeqCst);
    loop {
        if let Some(result) = attempt() {
            RELEASES.retrying.fetch_sub(1, SeqCst);
            return result;
        }
        count = RELEASES.released.wait(count).unwrap();
    }
}

/// Tells the threads blocked in `retry_after_release` that a meta-lock
/// was released (after the releasing store).
pub(crate) fn released() {
    if RELEASES.retrying.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        return;
    }
    *RELEASES.count.lock().unwrap() += 1;
    RELEASES.released.notify_all();
}
