//! What the tests share: running `lagkit SUBCOMMAND ...`, finding the
//! shipped examples, daemons and directories cleaned up on drop; the
//! switch tests' helpers in [`switch`], Open vSwitch's in [`ovs`].

// Each test binary uses a part of this module.
#![allow(dead_code)]

use std::process::Command;

pub mod ovs;
pub mod switch;

/// A file under the repository's `examples/`.
pub fn example(path: &str) -> String {
    format!("{}/../../examples/{path}", env!("CARGO_MANIFEST_DIR"))
}

/// Runs `lagkit SUB ARGS...`: (exit status, stdout, stderr).
pub fn lagkit(sub: &str, args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_lagkit"))
        .arg(sub)
        .args(args)
        .output()
        .expect("run lagkit");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A daemon a test started (`lagkit up`, `lagkit switch`); SIGTERM and
/// reaped on drop, also when the test fails.
pub struct Daemon(pub std::process::Child);

impl Daemon {
    /// SIGTERM, then its exit status.
    pub fn stop(&mut self) -> std::process::ExitStatus {
        // SAFETY: signalling a process this test started.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        self.0.wait().expect("wait")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.stop();
        }
    }
}

/// A scratch directory removed on drop.
pub struct TmpDir(pub std::path::PathBuf);

impl Drop for TmpDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
