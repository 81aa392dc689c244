//! For a test that must end its process with an abort: the test runs its
//! own binary again on itself alone, as a child with `CHILD` set, and
//! checks how the child ended. Included by path by the binaries that need
//! it (`#[path = "common/child.rs"] mod child;`).

use std::process::Command;

const CHILD: &str = "METALOCK_TEST_CHILD";

/// Runs the test `name` of this binary in a child process with `CHILD` set,
/// and returns its exit status and standard error.
fn run_child(name: &str) -> (std::process::ExitStatus, String) {
    let output = Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("the test binary runs again");
    (
        output.status,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Whether this process is such a child.
pub fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// Runs the test `name` in a child process and checks that it aborted with
/// `message` on standard error; returns that standard error.
pub fn child_aborts_saying(name: &str, message: &str) -> String {
    let (status, stderr) = run_child(name);
    assert!(
        aborted(&status),
        "the child was not aborted: {status}\n{stderr}"
    );
    assert!(
        stderr.contains(message),
        "no message on standard error:\n{stderr}"
    );
    stderr
}

#[cfg(unix)]
fn aborted(status: &std::process::ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.signal() == Some(libc::SIGABRT)
}

#[cfg(not(unix))]
fn aborted(status: &std::process::ExitStatus) -> bool {
    !status.success()
}
