//! A platform callback that notifies while the crate holds the wait-table
//! stripe of the same condition (here `wake`, run as a notify without the
//! monitor hands the monitor to the waiter) stops the process with a
//! message; it used to wait for itself on the stripe's lock, silently.
//! Checked in a child process, with a deadline: the test runs itself again
//! with `CHILD` set.

use metalock::{Condition, MultiUseWord};
use metalock_no_std_platform::{ON_WAKE, install};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHILD: &str = "METALOCK_NESTED_CALLBACK_CHILD";

static WORD: MultiUseWord = MultiUseWord::new();
static READY: Condition = Condition::new();

#[test]
fn a_callback_that_notifies_under_the_stripe_aborts_with_a_message() {
    if std::env::var_os(CHILD).is_none() {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "a_callback_that_notifies_under_the_stripe_aborts_with_a_message",
                "--exact",
                "--nocapture",
            ])
            .env(CHILD, "1")
            .stderr(Stdio::piped())
            .spawn()
            .expect("the test binary runs again");
        let deadline = Instant::now() + Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                child.kill().unwrap();
                panic!("the child hung: the callback waited for itself");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "the child survived:\n{stderr}");
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(output.status.signal(), Some(6), "not aborted:\n{stderr}");
        }
        assert!(
            stderr.contains("metalock: a thread asked for a wait-table stripe while it holds one"),
            "no message on standard error:\n{stderr}"
        );
        assert!(!stderr.contains("UNREACHABLE"), "{stderr}");
        return;
    }
    install();
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut guard = WORD.lock();
            READY.wait(&mut guard);
        });
        // Parked by now (a waiter spins for microseconds), so the notify's
        // hand-over wakes it through the platform.
        std::thread::sleep(Duration::from_millis(200));
        *ON_WAKE.lock().unwrap() = Some(|| {
            READY.notify_one();
        });
        READY.notify_one();
        eprintln!("UNREACHABLE: the callback's notify returned");
        std::process::exit(0);
    });
}
