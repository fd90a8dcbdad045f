//! `lagkit check`: both ends of an aggregated link, read from their
//! configurations, and the mismatches that cost throughput or connectivity
//! found before anything is cabled.
//!
//! Each input is read into the facts of one end ([`facts`]): a host's bond
//! (a lagkit bond configuration, Linux's `/proc/net/bonding/bondX`, or
//! another tool's dialect: ifupdown, systemd-networkd, netplan YAML,
//! NetworkManager keyfiles, teamd, AIX; see [`dialects`] and [`netplan`]),
//! a switch's port-channels (Cisco IOS, or Open vSwitch's `bond/show` and
//! `lacp/show`, with `ovs-vsctl show` for the datapath type), or systemd
//! `.link` files (what udev does to a bond's MAC). [`rules`] then looks at
//! each end alone, at the host facing a channel, and at two switches'
//! channels facing each other, and returns [`Finding`]s with a severity,
//! the file and line, the reason in one sentence and the fix: protocol
//! pairs that never form (LACP passive on both ends, LACP facing `on` or
//! PAgP, a host without PAgP facing `auto`, a lagkit bond running PAgP
//! facing LACP, `on` or an `auto` channel when it is `auto` itself;
//! between switches `on` facing LACP or PAgP and PAgP auto on both ends),
//! LACP rates that differ, an MTU
//! that is not the same in all five places (server adapters, server
//! aggregate and interface, switch ports, switch port-channel: IBM's run
//! 18 lost throughput to exactly that) or a member's own MTU that differs
//! from its bond's, hashes that cannot spread traffic between two hosts,
//! Cisco's 8 buckets over 3, 5, 6 or 7 links, round-robin into a switch
//! (reordering), min_links/max_bundle that cannot be met, ports of one
//! channel that differ in speed, duplex or VLAN, an 802.3ad bond whose MAC
//! (its LACP system ID) can change, and veth members whose offloads a
//! userspace Open vSwitch datapath cannot take.
//!
//! A Catalyst's show output ([`show`]) tells what the switch does now;
//! with the host's running bond ([`running`]: `/proc/net/bonding` or
//! `lagkit status --json`) [`crosscheck`] finds cables to the wrong
//! partner, keys of another channel, links bundled on one end only,
//! members suspended or stand-alone and why, and idle members; it picks
//! the bond's channel by system and key, and [`members`] matches each
//! switch port with the host member at its other end (and each member
//! with its port) and holds a bond's members against each other.

#![forbid(unsafe_code)]

pub mod convert;
pub mod crosscheck;
pub mod dialects;
pub mod facts;
pub mod fleet;
pub mod lacpdus;
pub mod live;
pub mod lldp;
pub mod members;
pub mod netplan;
pub mod procfs;
pub mod rules;
pub mod running;
pub mod show;

use serde::Serialize;
use std::fmt;

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing breaks.
    Info,
    /// Works, but costs throughput or resilience.
    Warning,
    /// Does not form, loses frames, or black-holes traffic.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// Where a fact came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Loc {
    /// The file, as given.
    pub file: String,
    /// The line, when known.
    pub line: Option<usize>,
}

impl Loc {
    /// Line `line` of `file`.
    pub fn at(file: &str, line: usize) -> Loc {
        Loc {
            file: file.into(),
            line: Some(line),
        }
    }
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}", self.file),
            None => f.write_str(&self.file),
        }
    }
}

/// One problem found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// How bad.
    pub severity: Severity,
    /// A stable name for scripts (`lacp-passive-both`, `mtu-mismatch`).
    pub code: &'static str,
    /// Where.
    pub loc: Loc,
    /// The reason, one sentence.
    pub reason: String,
    /// What to change.
    pub fix: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} [{}]: {}\n  fix: {}",
            self.loc, self.severity, self.code, self.reason, self.fix
        )
    }
}

/// The exit status for the worst finding: 0 none or info, 1 warnings, 3
/// errors (2 stays the status of unreadable input, as for every lagkit
/// command).
pub fn exit_status(findings: &[Finding]) -> u8 {
    match findings.iter().map(|f| f.severity).max() {
        Some(Severity::Error) => 3,
        Some(Severity::Warning) => 1,
        _ => 0,
    }
}

/// Runs arbitrary bytes through `check` as an input file would (dialect
/// detection, every reader, every rule against a fixed host and switch:
/// a host input meets the switch, a switch input the host and the other
/// switch, a `.link` input the host's bond). Errors are values; it panics
/// only on a bug, which is what a `cargo fuzz` target wants to find.
pub fn fuzz_one(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(end) = facts::read("fuzz", &text) else {
        return;
    };
    let host = "name = \"bond0\"\nmode = \"802.3ad\"\nmembers = [\"veth0\", \"b\"]\nmtu = 9000\n";
    let switch = "interface range gi1/1 - 2\nchannel-group 1 mode active\n";
    let others = [facts::read("h", host), facts::read("s", switch)];
    let mut ends = vec![end];
    ends.extend(others.into_iter().flatten());
    for channel in [
        None,
        Some(1),
        Some(u32::from(data.first().copied().unwrap_or(0))),
    ] {
        let f = rules::check(&ends, channel);
        let _ = exit_status(&f);
        for x in &f {
            let _ = x.to_string();
        }
    }
}

/// Runs arbitrary bytes through the show-output reader and its
/// cross-checks, against a running 802.3ad bond and a PAgP one: errors
/// are values; it panics only on a bug (the `check_show` fuzz target).
pub fn fuzz_show(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(s) = show::read("fuzz", &text) else {
        return;
    };
    let _ = s.facts();
    for u in &s.unread {
        let _ = u.to_string();
    }
    let proc_ = "Bonding Mode: IEEE 802.3ad Dynamic link aggregation\nLACP rate: fast\nSystem MAC address: 02:00:00:00:00:01\nActive Aggregator Info:\n\tAggregator ID: 1\n\tActor Key: 9\n\tPartner Key: 10\n\tPartner Mac Address: 00:11:22:33:44:55\n\nSlave Interface: eth0\nAggregator ID: 1\ndetails actor lacp pdu:\n    port key: 9\n    port number: 1\n    port state: 63\ndetails partner lacp pdu:\n    system mac address: 00:11:22:33:44:55\n    oper key: 10\n    port number: 304\n    port state: 63\n";
    let xor =
        "name = \"bond1\"\nmode = \"balance-xor\"\npagp = \"desirable\"\nmembers = [\"eth1\"]\n";
    let mut ends = vec![facts::End::Show(s)];
    ends.extend(facts::read("bond0", proc_));
    ends.extend(facts::read("b.toml", xor));
    for channel in [
        None,
        Some(1),
        Some(u32::from(data.first().copied().unwrap_or(0))),
    ] {
        for f in rules::check(&ends, channel) {
            let _ = f.to_string();
        }
    }
}
