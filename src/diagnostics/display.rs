//! The thread dump's and a deadlock's text, in the style of a Java thread
//! dump.

use core::fmt;
use std::string::String;
use std::thread::ThreadId;

use super::{BlockKind, Deadlock, Snapshot, ThreadDump};

fn monitor_label(monitor: usize, key: Option<usize>) -> String {
    match key {
        Some(key) => format!("<{monitor:#x}> (keyed, value at {key:#x})"),
        None => format!("<{monitor:#x}>"),
    }
}

fn owner_label(owner: Option<ThreadId>, threads: &[ThreadDump]) -> String {
    match owner.and_then(|id| threads.iter().find(|t| t.id == id)) {
        Some(thread) => format!(", owned by {}", thread.label()),
        None => String::new(),
    }
}

impl ThreadDump {
    fn write(&self, f: &mut fmt::Formatter<'_>, threads: &[ThreadDump]) -> fmt::Result {
        let exited = if self.has_exited() { " (exited)" } else { "" };
        writeln!(f, "{}{exited}", self.label())?;
        if let Some(blocked) = &self.blocked {
            let what = match blocked.kind {
                BlockKind::Entering if blocked.timed => "entering (with a deadline)",
                BlockKind::Entering => "entering",
                BlockKind::Waiting => "waiting on",
            };
            writeln!(
                f,
                "    - {what} {} for {:?}{}",
                monitor_label(blocked.monitor, blocked.key),
                blocked.for_,
                owner_label(blocked.owner, threads),
            )?;
        }
        for held in &self.holds {
            writeln!(
                f,
                "    - holds {} (depth {})",
                monitor_label(held.monitor, held.key),
                held.depth
            )?;
        }
        Ok(())
    }
}

impl fmt::Display for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "metalock thread dump: {} thread(s) using monitors",
            self.threads.len()
        )?;
        for thread in &self.threads {
            writeln!(f)?;
            thread.write(f, &self.threads)?;
        }
        Ok(())
    }
}

impl fmt::Display for Deadlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.held_by_exited {
            writeln!(
                f,
                "Found one metalock deadlock (a monitor an exited thread holds):"
            )?;
        } else {
            writeln!(
                f,
                "Found one metalock deadlock ({} threads):",
                self.threads.len()
            )?;
        }
        for (i, thread) in self.threads.iter().enumerate() {
            let next = &self.threads[(i + 1) % self.threads.len()];
            let Some(blocked) = &thread.blocked else {
                continue;
            };
            let exited = if self.held_by_exited {
                ", which has exited: guards it leaked hold the monitor for good"
            } else {
                ""
            };
            writeln!(
                f,
                "  {} waits to enter {}, held by {}{exited}",
                thread.label(),
                monitor_label(blocked.monitor, blocked.key),
                next.label(),
            )?;
        }
        Ok(())
    }
}
