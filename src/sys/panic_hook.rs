//! For unit tests: the process's panic hook, swapped for one test at a
//! time. libtest runs tests on parallel threads, and a test that replaced
//! the hook while another had its own in place would drop that one.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use std::panic::{self, AssertUnwindSafe, PanicHookInfo};
use std::sync::Mutex;
use std::thread;

/// Runs `f` with `hook` called for the panics of the calling thread (those
/// of other threads go to the hook in place before), then puts that hook
/// back, also when `f` panics.
pub(crate) fn with_panic_hook<R>(
    hook: impl Fn(&PanicHookInfo<'_>) + Send + Sync + 'static,
    f: impl FnOnce() -> R,
) -> R {
    static TURN: Mutex<()> = Mutex::new(());
    let _turn = TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let me = thread::current().id();
    let previous = Arc::new(panic::take_hook());
    let forward = Arc::clone(&previous);
    panic::set_hook(Box::new(move |info| {
        if thread::current().id() == me {
            hook(info);
        } else {
            forward(info);
        }
    }));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    // Dropping ours leaves `previous` unshared: no other test swaps hooks
    // meanwhile, and a hook's call holds the lock that `take_hook` takes.
    drop(panic::take_hook());
    match Arc::try_unwrap(previous) {
        Ok(previous) => panic::set_hook(previous),
        Err(shared) => panic::set_hook(Box::new(move |info| shared(info))),
    }
    result.unwrap_or_else(|payload| panic::resume_unwind(payload))
}

/// Where the panic of `f` on the calling thread was raised (file, line),
/// caught without being printed.
pub(crate) fn panic_location(f: impl FnOnce()) -> (String, u32) {
    let seen = Arc::new(Mutex::new(None));
    let hook_seen = Arc::clone(&seen);
    let result = with_panic_hook(
        move |info| {
            let at = info
                .location()
                .map(|at| (String::from(at.file()), at.line()));
            *hook_seen.lock().unwrap() = at;
        },
        || panic::catch_unwind(AssertUnwindSafe(f)),
    );
    assert!(result.is_err(), "no panic");
    let location = seen.lock().unwrap().take();
    location.expect("the panic hook saw no location")
}
