//! A platform callback that panics in the middle of the protocol (here the
//! clock, read while a timed wait blocks) aborts the process with a message
//! instead of unwinding through it. Checked in a child process: the test
//! runs itself again with `CHILD` set.

use metalock::MultiUseWord;
use metalock_no_std_platform::{PANIC_IN_NOW, in_the_future, install};
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::Duration;

const CHILD: &str = "METALOCK_PANICKING_PLATFORM_CHILD";

#[test]
fn a_panicking_clock_aborts_with_a_message() {
    if std::env::var_os(CHILD).is_none() {
        let output = Command::new(std::env::current_exe().unwrap())
            .args([
                "a_panicking_clock_aborts_with_a_message",
                "--exact",
                "--nocapture",
            ])
            .env(CHILD, "1")
            .output()
            .expect("the test binary runs again");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "the child survived:\n{stderr}");
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(output.status.signal(), Some(6), "not aborted:\n{stderr}");
        }
        assert!(
            stderr.contains("metalock: a panic unwound in the middle of the locking protocol"),
            "no message on standard error:\n{stderr}"
        );
        assert!(!stderr.contains("UNREACHABLE"), "{stderr}");
        return;
    }
    install();
    let word = MultiUseWord::new();
    let mut guard = word.lock();
    let deadline = in_the_future(Duration::from_millis(20));
    PANIC_IN_NOW.store(true, Ordering::Relaxed);
    // The parker reads the clock once the platform's wait returns.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        guard.wait_until(deadline);
    }));
    eprintln!("UNREACHABLE: the clock's panic unwound through the wait");
}
