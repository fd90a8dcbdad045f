//! The programs lagkit runs, and the Debian package each comes from.
//!
//! The daemons change interfaces over netlink (`lagkit-sys`); the lab and
//! the tests still build their testbeds with iproute2 and friends
//! (namespaces, veths, addresses, shaping qdiscs), and the lab drives
//! iperf3, ping and Open vSwitch. A missing program must say which package
//! brings it, not "No such file or directory (os error 2)". This table is
//! the single list: `scripts/setup.sh` installs every package named here,
//! and `crates/cli/tests/setup.rs` fails when the code runs a program that
//! is not in it, or names a package the script does not install.
//! [`run`] runs one and says which command failed and why
//! ([`CommandError`]), for the lab, the namespaces crate and the tests.

use std::io;
use std::process::{Command, ExitStatus};

/// One external program.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    /// The program's name as run.
    pub name: &'static str,
    /// The Debian package that provides it.
    pub package: &'static str,
    /// The group of `scripts/setup.sh` that installs it: `build`, `run`
    /// (the daemons and the lab's default scenarios) or `test` (the test
    /// suite, benchmarks and the lab's Open vSwitch switches).
    pub group: &'static str,
    /// What lagkit runs it for, in a few words.
    pub used_for: &'static str,
}

const fn t(
    name: &'static str,
    package: &'static str,
    group: &'static str,
    used_for: &'static str,
) -> Tool {
    Tool {
        name,
        package,
        group,
        used_for,
    }
}

/// Every program lagkit's code runs (at build, run or test time).
#[rustfmt::skip]
pub const TOOLS: &[Tool] = &[
    t("clang", "clang", "build", "compiling the BPF programs"),
    t("ip", "iproute2", "run", "the lab's and tests' namespaces, veths and addresses (the daemons use netlink)"),
    t("tc", "iproute2", "run", "the lab's tbf shaping and the tests' checks (the daemons use netlink)"),
    t("bridge", "iproute2", "run", "the lab's and tests' Linux bridges"),
    t("ethtool", "ethtool", "run", "offload and speed settings"),
    t("sysctl", "procps", "run", "namespace sysctls in the lab"),
    t("iperf3", "iperf3", "run", "the lab's iperf3 workloads"),
    t("ping", "iputils-ping", "run", "reachability checks in the lab"),
    t("tshark", "tshark", "test", "decoding captured frames (tests)"),
    t("tcpdump", "tcpdump", "test", "captures (tests)"),
    t("bpftool", "bpftool", "test", "inspecting attached programs (tests)"),
    t("tmux", "tmux", "test", "a terminal for lagkit top (tests)"),
    t("chromium", "chromium", "test", "rendering the lab's report.html headless (tests)"),
    t("softflowd", "softflowd", "test", "NetFlow v5, v9 and IPFIX exports of a capture (tests)"),
    t("pmacctd", "pmacct", "test", "NetFlow v5, v9, IPFIX and sFlow v5 exports of a capture (tests)"),
    t("fprobe", "fprobe", "test", "NetFlow v1, v5 and v7 exports of loopback traffic (tests)"),
    t("ovs-vsctl", "openvswitch-switch", "test", "Open vSwitch as the lab's switch"),
    t("ovs-vswitchd", "openvswitch-switch", "test", "Open vSwitch as the lab's switch"),
    t("ovsdb-server", "openvswitch-common", "test", "Open vSwitch as the lab's switch"),
    t("ovsdb-tool", "openvswitch-common", "test", "Open vSwitch as the lab's switch"),
    t("ovs-appctl", "openvswitch-common", "test", "Open vSwitch as the lab's switch"),
    t("dpkg", "dpkg", "package", "building and checking the Debian package (tests)"),
    t("dpkg-deb", "dpkg", "package", "building and checking the Debian package (tests)"),
    t("dpkg-query", "dpkg", "package", "building and checking the Debian package (tests)"),
    t("man", "man-db", "package", "rendering the man pages (tests)"),
    t("systemd-analyze", "systemd", "package", "verifying the systemd units (tests)"),
    t("setpriv", "util-linux", "test", "running commands without privileges (tests)"),
    t("promtool", "prometheus", "test", "checking the metrics pages (tests)"),
    t(
        "prometheus-node-exporter",
        "prometheus-node-exporter",
        "test",
        "node_exporter's own bonding series, side by side with the bond's (tests)",
    ),
];

/// The entry for `name`, if lagkit knows it.
pub fn lookup(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| t.name == name)
}

/// "`ip` not found: install the Debian package iproute2 (...)": what to
/// say when `name` is not installed.
pub fn not_found(name: &str) -> String {
    match lookup(name) {
        Some(t) => format!(
            "`{name}` not found: lagkit runs it for {}; install the Debian package {} \
             (apt-get install {}, or bash scripts/setup.sh)",
            t.used_for, t.package, t.package
        ),
        None => format!("`{name}` not found on PATH"),
    }
}

/// Describes an error from spawning `name`: a missing program names its
/// package, anything else is quoted with the program's name.
pub fn spawn_error(name: &str, e: &io::Error) -> String {
    if e.kind() == io::ErrorKind::NotFound {
        not_found(name)
    } else {
        format!("cannot run `{name}`: {e}")
    }
}

/// A program that is not installed, could not be started, or failed.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The program is neither on PATH nor in the sbin directories; the
    /// message says how to install it.
    #[error("{}", not_found(.program))]
    NotFound {
        /// The program's name.
        program: String,
    },
    /// The program could not be started.
    #[error("`{command}`: {}", spawn_error(.program, .source))]
    Spawn {
        /// The command line.
        command: String,
        /// The program (the command's first word).
        program: String,
        /// Why it did not start.
        source: std::io::Error,
    },
    /// The program ran and exited unsuccessfully.
    #[error("`{command}` failed ({status}): {stderr}")]
    Failed {
        /// The command line.
        command: String,
        /// How it exited.
        status: ExitStatus,
        /// Its standard error, trimmed.
        stderr: String,
    },
}

/// Runs `args[0]` with the rest as arguments; its stdout, or an error that
/// quotes the command and its stderr.
pub fn run(args: &[&str]) -> Result<String, CommandError> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|source| CommandError::Spawn {
            command: args.join(" "),
            program: args[0].to_string(),
            source,
        })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(CommandError::Failed {
            command: args.join(" "),
            status: out.status,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_program_names_its_package() {
        let e = io::Error::from(io::ErrorKind::NotFound);
        let m = spawn_error("tc", &e);
        assert!(
            m.contains("iproute2") && m.contains("`tc` not found"),
            "{m}"
        );
        let m = spawn_error("nosuchtool", &e);
        assert_eq!(m, "`nosuchtool` not found on PATH");
        let m = spawn_error("ip", &io::Error::from(io::ErrorKind::PermissionDenied));
        assert!(m.starts_with("cannot run `ip`"), "{m}");
    }

    #[test]
    fn each_program_is_listed_once() {
        for (i, a) in TOOLS.iter().enumerate() {
            assert!(
                TOOLS[i + 1..].iter().all(|b| b.name != a.name),
                "{} listed twice",
                a.name
            );
        }
    }
}
