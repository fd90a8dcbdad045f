//! What the lab's root tests share: finding the `lagkit` binary, skipping
//! (or, under CI, failing) when the machine cannot run them, and listing
//! processes a test may have left behind.

#![allow(dead_code)] // each test binary uses its own subset

use lagkit_lab::topology::SwitchKind;
use std::path::PathBuf;

/// The example topology (lagkit's switch).
pub const EXAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/lab/two-hosts.toml"
);

/// The same lab on Open vSwitch.
pub const EXAMPLE_OVS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/lab/two-hosts-ovs.toml"
);

/// `$LAGKIT_BIN`, or `lagkit` in this test's target directory
/// (`<target>/<profile>/deps/test-HASH` → `<target>/<profile>/lagkit`).
pub fn lagkit_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("LAGKIT_BIN") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    let p = exe.parent()?.parent()?.join("lagkit");
    p.is_file().then_some(p)
}

/// Says why the test skips and returns true; panics instead when `CI` is
/// set, so CI never passes a test that did not run.
pub fn skip(what: &str, why: &str) -> bool {
    if std::env::var_os("CI").is_some() {
        panic!("CI is set but the lab test cannot run: {why}");
    }
    eprintln!("SKIP {what}: {why}");
    true
}

/// The binary, if this machine can run lab tests (root, a built `lagkit`,
/// and Open vSwitch where the labs' switches are `kind`); otherwise skips
/// via [`skip`].
pub fn can_run_on(what: &str, kind: SwitchKind) -> Option<PathBuf> {
    if !lagkit_lab::sys::is_root() && skip(what, "needs root") {
        return None;
    }
    if kind == SwitchKind::Ovs {
        if let Some(m) = lagkit_lab::ovs::missing() {
            if skip(what, &m) {
                return None;
            }
        }
    }
    let bin = lagkit_bin();
    if bin.is_none() {
        skip(
            what,
            "no lagkit binary: build it (cargo build --release -p lagkit) or set LAGKIT_BIN",
        );
    }
    bin
}

/// Run options for a test's own lab: state under `root` (never a lab a
/// user brought up), progress printed, 30 s to converge.
pub fn run_options(bin: PathBuf, root: &std::path::Path) -> lagkit_lab::RunOptions {
    let mut opts = lagkit_lab::Options::new(bin);
    opts.state_root = root.to_path_buf();
    opts.verbose = true;
    let mut ropts = lagkit_lab::RunOptions::new(opts);
    ropts.converge_timeout = std::time::Duration::from_secs(30);
    ropts
}

/// [`can_run_on`] the default switch (the built-in scenarios').
pub fn can_run(what: &str) -> Option<PathBuf> {
    can_run_on(what, SwitchKind::DEFAULT)
}

/// Our live processes whose command line mentions `needle`.
pub fn procs_with(needle: &str) -> Vec<String> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        if stat.split(") ").nth(1).is_some_and(|r| r.starts_with('Z')) {
            continue;
        }
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(needle) {
            v.push(format!("{pid}: {cmd}"));
        }
    }
    v
}
