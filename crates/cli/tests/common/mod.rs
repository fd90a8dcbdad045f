//! What the one-shot command tests share: running `lagkit SUBCOMMAND ...`
//! and finding the shipped examples.

// Each test binary uses a part of this module.
#![allow(dead_code)]

use std::process::Command;

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
