//! Built-in scenarios: a topology swept over a list of configurations
//! (`lagkit lab list`, `lagkit lab run NAME`, `lagkit demo`), each modelled
//! on one seed, with the seed's findings checked on the results
//! ([`crate::findings`]).
//!
//! Every configuration is an ordinary topology file, built here as text and
//! parsed like a user's (`lagkit lab show NAME` prints them), so a built-in
//! exercises exactly what a user's topology would.
//!
//! - `ibm-6513` (IBM's 6513 measurements, test system 1): two servers, each a 2-link
//!   lagkit bond, through one switch (a Cisco 6513 there, lagkit's own
//!   switch here, or Open vSwitch), socketprocs. The sweep varies the
//!   switch's frame distribution (L4 ports: Cisco `src-dst-port`, run by
//!   lagkit's switch, OVS `balance-tcp`; addresses: Cisco `src-dst-ip`, run
//!   by lagkit's switch, stood for on OVS by `balance-slb` on source MACs —
//!   with two hosts both put every frame to one server on one link), the
//!   channel (LACP, static "mode on", none), the server mode (802.3ad,
//!   standard = balance-xor, round-robin) and the MTU (1500, 9000, 9000 on
//!   the servers only). On lagkit's switch also the seed's PAgP rows and
//!   the pairings of its section 6.3.1 (desirable/auto, silent/non-silent,
//!   against a server that speaks no PAgP, one that runs LACP and one that
//!   runs PAgP; a pairing that does not form is the row's result) and its
//!   static channel hashing on L4 ports. Hosts `cli` and `srv`, switch
//!   `c6513`.
//! - `hp-apa` (HP's APA paper): one server with k = 1, 2, 4, 8 links in an LACP
//!   aggregate, eight single-link clients, transmit, receive, both.
//! - `lpm` (the bityard LPM post): two hosts back to back, 2 links, four LPM-style
//!   control+data pairs on sequential ports, AIX hash modes against
//!   `strong` and `adaptive`.
//! - `zvm` (IBM's z/VM report): 1 against 2 links, 1/10/50 connections, stream and
//!   request/response.
//! - `linux-alb` (IBM's xSeries 460 report): a balance-alb server with 1–4 links behind a
//!   plain switch, one client per link.

use crate::error::LabError;
use crate::findings::{self, Finding};
use crate::lab::Options;
use crate::report::{ConfigCode, Report, RunRecord};
use crate::run::{run_once, RunOptions};
use crate::topology::{SwitchKind, Topology};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One configuration of a sweep.
#[derive(Debug, Clone)]
pub struct Config {
    /// Stable key the findings look runs up by, e.g. `l2`, `k4-rx`.
    pub key: String,
    /// What differs in this configuration, for the legend and charts.
    pub label: String,
    /// The topology of this configuration.
    pub topo: Topology,
    /// Its topology file text.
    pub text: String,
    /// Its bonds and channels are expected to form; a row that shows a
    /// pairing that does not (PAgP auto against auto) is `false`, and its
    /// run's result is whether it formed (see [`crate::report::Formation`]).
    pub expect_formed: bool,
    /// Expected not to form, it still carries traffic (stand-alone
    /// members), so the workload runs after the wait.
    pub run_unformed: bool,
}

/// A built-in scenario: a name, a description and its configurations.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Name (`lagkit lab run NAME`).
    pub name: &'static str,
    /// One line.
    pub description: &'static str,
    /// The sweep, run in order.
    pub configs: Vec<Config>,
    /// The seed's findings, checked on a finished sweep.
    pub findings: fn(&Report) -> Vec<Finding>,
}

/// The built-in scenarios: name and one-line description.
pub const BUILTIN: [(&str, &str); 5] = [
    (
        "ibm-6513",
        "IBM's 6513 measurements: 2 servers × 2-link bonds via one switch, socketprocs; switch L2/L3 vs L4 hashing, LACP/static/no channel, 802.3ad/standard/round-robin, MTU 1500/9000/partial; on lagkit's switch also PAgP desirable/auto, silent/non-silent against static, LACP and PAgP servers, and a static L4 channel (--short: 17 runs ~4 min; full: 13 runs ~3 min on Open vSwitch, 24 on lagkit's switch ~7 min)",
    ),
    (
        "hp-apa",
        "HP's APA paper: one server with 1, 2, 4, 8 LACP links, 8 single-link clients, transmit/receive/both; scaling against k × one link (--short: k=1,2,4 ~2 min; full: 12 runs ~5 min)",
    ),
    (
        "lpm",
        "the bityard LPM post: two hosts, 2 links, 4 LPM control+data pairs on sequential ports; AIX hash modes src_port/dst_port/src_dst_port against strong and adaptive (~1.5 min)",
    ),
    (
        "zvm",
        "IBM's z/VM report: bond-to-bond, 1 vs 2 links, 1/10/50 connections, stream and request/response (--short: 4 runs; full: 12 runs ~4 min)",
    ),
    (
        "linux-alb",
        "IBM's xSeries 460 report: a balance-alb server with 1–4 links behind a plain switch, one client per link, receive and transmit (--short: 3 runs; full: 8 runs ~3 min)",
    ),
];

fn describe(name: &str) -> &'static str {
    BUILTIN
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("", |(_, d)| d)
}

/// The scenario `name`, short (fewer, shorter runs) or full, on the
/// default switch ([`SwitchKind::DEFAULT`]).
pub fn builtin(name: &str, short: bool) -> Option<Scenario> {
    builtin_on(name, short, SwitchKind::DEFAULT)
}

/// The scenario `name` with its switches of kind `kind` (scenarios
/// without a switch are the same on either).
pub fn builtin_on(name: &str, short: bool, kind: SwitchKind) -> Option<Scenario> {
    match name {
        "ibm-6513" => Some(ibm_6513(short, kind)),
        "hp-apa" => Some(hp_apa(short, kind)),
        "lpm" => Some(lpm(short)),
        "zvm" => Some(zvm(short)),
        "linux-alb" => Some(linux_alb(short, kind)),
        _ => None,
    }
}

impl Scenario {
    /// The same sweep with every link shaped to `rate` instead of the
    /// scenario's own scaled-down rate (`lagkit lab run NAME --rate 1gbit`
    /// runs at the seeds' own speed). The scale note and factor follow, so
    /// every report says what the links were; whether the machine kept up
    /// is for the run's CPU and switch-bound flags to say.
    pub fn at_rate(mut self, rate: &crate::topology::Rate) -> Scenario {
        for c in &mut self.configs {
            let mut old_bits = None;
            for l in &mut c.topo.links {
                if let Some(r) = &mut l.rate {
                    old_bits = Some(r.bits);
                    *r = rate.clone();
                }
            }
            let mut text = String::with_capacity(c.text.len());
            for line in c.text.lines() {
                if line.starts_with("rate = ") {
                    let _ = writeln!(text, "rate = \"{}\"", rate.text);
                } else {
                    text.push_str(line);
                    text.push('\n');
                }
            }
            c.text = text;
            if let (Some(sc), Some(old)) = (&mut c.topo.scale, old_bits) {
                let factor = sc.factor.map(|f| f * old as f64 / rate.bits as f64);
                let seed = factor.map_or(String::new(), |f| {
                    format!(" for the original's {}", mbit_text(rate.bits as f64 * f))
                });
                sc.note = format!(
                    "{} links{seed}, set with --rate (the scenario's own: {})",
                    rate.text, sc.note
                );
                sc.factor = factor;
            }
        }
        self
    }
}

/// `1 Gbit/s`, `250 Mbit/s`.
fn mbit_text(bits: f64) -> String {
    if bits >= 1e9 && (bits / 1e9).fract() == 0.0 {
        format!("{} Gbit/s", bits / 1e9)
    } else {
        format!("{} Mbit/s", (bits / 1e6).round())
    }
}

// ---------------------------------------------------------------------
// Topology text, piece by piece.

/// A scenario's link rate, the factor by which the original's links were
/// faster, and why the lab runs at this rate (the reports' scale note).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    /// Every shaped link's rate (tc's notation).
    pub rate: &'static str,
    /// The original's link rate over `rate`.
    pub factor: f64,
    /// What the rate stands for, and why it is not the original's.
    pub note: &'static str,
}

fn scale_toml(scale: &Scale) -> String {
    format!(
        "[scale]\nnote = \"{}\"\nfactor = {}\n\n",
        scale.note, scale.factor
    )
}

fn host_toml(name: &str, address: &str, bond: Option<&str>) -> String {
    let mut s = format!("[[host]]\nname = \"{name}\"\naddress = \"{address}\"\n");
    if let Some(b) = bond {
        let _ = writeln!(s, "bond = {{ {b} }}");
    }
    s.push('\n');
    s
}

/// A switch of kind `kind`; channels are (name, host, protocol,
/// load_balance).
fn switch_toml(name: &str, kind: SwitchKind, channels: &[(&str, &str, &str, &str)]) -> String {
    let mut s = format!(
        "[[switch]]\nname = \"{name}\"\nkind = \"{}\"\n\n",
        kind.name()
    );
    for (c, h, p, lb) in channels {
        let _ = writeln!(
            s,
            "[[switch.channel]]\nname = \"{c}\"\nhost = \"{h}\"\nprotocol = \"{p}\"\nload_balance = \"{lb}\"\n"
        );
    }
    s
}

/// `mtu`: TOML value text, `1500` or `[9000, 1500]`.
fn link_toml(a: &str, b: &str, count: usize, rate: &str, mtu: &str) -> String {
    format!(
        "[[link]]\nbetween = [\"{a}\", \"{b}\"]\ncount = {count}\nrate = \"{rate}\"\noverhead = true\nmtu = {mtu}\n\n"
    )
}

/// A `lagkit-load` workload; `extra` adds keys (one per line).
fn load_toml(load: &str, clients: &[&str], server: &str, seconds: u32, extra: &str) -> String {
    let list: Vec<String> = clients.iter().map(|c| format!("\"{c}\"")).collect();
    format!(
        "[workload]\nkind = \"lagkit-load\"\nload = \"{load}\"\nclients = [{}]\nserver = \"{server}\"\nseconds = {seconds}\n{extra}",
        list.join(", ")
    )
}

/// A server `srv` with `k` links to switch `sw` (`channels`) and `n`
/// single-link clients `c1`..`cn`, every link at `rate`; addresses
/// `<net>.1` and `<net>.11`...; returns the text and the client names.
fn star_toml(
    net: &str,
    kind: SwitchKind,
    bond: &str,
    channels: &[(&str, &str, &str, &str)],
    k: usize,
    n: usize,
    rate: &str,
) -> (String, Vec<String>) {
    let mut t = host_toml("srv", &format!("{net}.1/24"), Some(bond));
    let clients: Vec<String> = (1..=n).map(|i| format!("c{i}")).collect();
    for (i, c) in clients.iter().enumerate() {
        t += &host_toml(c, &format!("{net}.{}/24", 11 + i), None);
    }
    t += &switch_toml("sw", kind, channels);
    t += &link_toml("srv", "sw", k, rate, "1500");
    for c in &clients {
        t += &link_toml(c, "sw", 1, rate, "1500");
    }
    (t, clients)
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

fn config(scenario: &str, key: &str, label: &str, text: String) -> Config {
    let topo = Topology::parse(&text, &format!("builtin:{scenario}:{key}"), scenario)
        .unwrap_or_else(|e| panic!("the built-in {scenario} topology {key} is invalid: {e}"));
    Config {
        key: key.to_string(),
        label: label.to_string(),
        topo,
        text,
        expect_formed: true,
        run_unformed: false,
    }
}

// ---------------------------------------------------------------------
// ibm-6513

/// socketprocs processes per side (N×N connections). The seed ran 12–16
/// (144–256 connections). Here 6 (36 connections): with 4 (16) the
/// switch's L4 buckets leave one link with more of the small (ACK)
/// packets, receive packet ratios of 0.54–0.56 at equal bytes; with 8
/// (64) the shaped links' queues overflow more (~240 retransmits/s
/// against ~170).
pub const IBM_6513_PROCS: u32 = 6;

/// ibm-6513's links on `kind` of switch: what they stand for and why.
pub fn ibm_6513_scale(kind: SwitchKind) -> Scale {
    match kind {
        SwitchKind::Lagkit => Scale {
            rate: "250mbit",
            factor: 4.0,
            note: "250 Mbit/s links stand for the original's 1 Gbit/s ones (factor 4): socketprocs' L4 rows keep the 2 cores 66% busy at 250 Mbit/s, 87% at 350 and 98% at 500; at 1 Gbit/s (--rate 1gbit) those rows are CPU-bound (98-99% busy: the hosts' TCP stacks and both bonds; lagkit's switch forwards in the kernel), so L3 against L4 still holds but the findings that compare one channel's throughput with LACP's within 0.9 can fail",
        },
        SwitchKind::Ovs => Scale {
            rate: "100mbit",
            factor: 10.0,
            note: "100 Mbit/s links stand for the original's 1 Gbit/s ones (factor 10): Open vSwitch's userspace datapath forwards about 1.7 Gbit/s on 2 cores, so at the original's rate it, not the links, would set the L4 rows' rate",
        },
    }
}

/// One ibm-6513 configuration.
struct Ibm {
    key: &'static str,
    label: &'static str,
    /// Channel protocol on the switch.
    protocol: &'static str,
    /// Switch load balance (l2 = balance-slb, l4 = balance-tcp).
    lb: &'static str,
    /// The servers' bond table.
    bond: &'static str,
    /// MTU on the hosts' and on the switch's link ends.
    mtu: (u32, u32),
    /// The servers cabled to each other, no switch (IBM's 6513 measurements: "the
    /// typical choice for hosts connected back-to-back" is round-robin).
    direct: bool,
    /// The switch and the servers form their channels (IBM's 6513 measurements, 6.3.1:
    /// PAgP auto never forms with auto; see [`Config::expect_formed`]).
    forms: bool,
    /// Not forming, the switch's members stand alone (Cisco's `I`: a
    /// protocol that heard no partner) and forward on their own, so the
    /// workload runs anyway (IBM's 6513 PAgP runs against servers that
    /// spoke no PAgP).
    standalone: bool,
    /// Only lagkit's switch runs it (PAgP; `mode on` hashing on L4 ports,
    /// which Open vSwitch's balance-tcp does only with LACP).
    lagkit_only: bool,
}

const LACP_L23: &str = r#"mode = "802.3ad", lacp_rate = "fast", xmit_hash_policy = "layer2+3""#;
const LACP_L34: &str = r#"mode = "802.3ad", lacp_rate = "fast", xmit_hash_policy = "layer3+4""#;
const XOR_L34: &str = r#"mode = "balance-xor", xmit_hash_policy = "layer3+4""#;
const RR: &str = r#"mode = "balance-rr""#;
const PAGP_D_L34: &str =
    r#"mode = "balance-xor", xmit_hash_policy = "layer3+4", pagp = "desirable""#;
const PAGP_U_L34: &str = r#"mode = "balance-xor", xmit_hash_policy = "layer3+4", pagp = "auto""#;

/// A row of IBM's 6513 PAgP and static L4 runs, which only
/// lagkit's switch can run.
const fn lagkit_row(
    key: &'static str,
    label: &'static str,
    protocol: &'static str,
    lb: &'static str,
    bond: &'static str,
    forms: bool,
    standalone: bool,
) -> Ibm {
    Ibm {
        key,
        label,
        protocol,
        lb,
        bond,
        mtu: (1500, 1500),
        direct: false,
        forms,
        standalone,
        lagkit_only: true,
    }
}

/// IBM's 6513 PAgP rows (`P-d`, runs 3, 5, 6, 18–20, 23: desirable
/// non-silent against AIX `standard`, which speaks no PAgP), its static L4
/// channel (`p-M-o sd-st`, runs 4, 11, 29) and the PAgP pairings of its
/// section 6.3.1, against a static host, an LACP host and a PAgP host.
const IBM_LAGKIT: [Ibm; 11] = [
    lagkit_row(
        "xor-l4",
        "static channel (mode on), switch L4, servers standard layer3+4",
        "static",
        "l4",
        XOR_L34,
        true,
        false,
    ),
    lagkit_row(
        "rr-l4",
        "static channel (mode on), switch L4, servers round-robin",
        "static",
        "l4",
        RR,
        true,
        false,
    ),
    lagkit_row(
        "pagp-d-pagp",
        "PAgP desirable non-silent, switch L4, servers standard layer3+4 with PAgP desirable",
        "pagp-desirable-non-silent",
        "l4",
        PAGP_D_L34,
        true,
        false,
    ),
    lagkit_row(
        "pagp-u-pagp",
        "PAgP auto non-silent, switch L4, servers standard layer3+4 with PAgP desirable",
        "pagp-auto-non-silent",
        "l4",
        PAGP_D_L34,
        true,
        false,
    ),
    lagkit_row(
        "pagp-l3",
        "PAgP desirable non-silent, switch L2, servers standard layer3+4 with PAgP desirable",
        "pagp-desirable-non-silent",
        "l2",
        PAGP_D_L34,
        true,
        false,
    ),
    lagkit_row(
        "pagp-ds-xor",
        "PAgP desirable silent, switch L4, servers standard layer3+4 (no PAgP)",
        "pagp-desirable",
        "l4",
        XOR_L34,
        true,
        false,
    ),
    lagkit_row(
        "pagp-d-xor",
        "PAgP desirable non-silent, switch L4, servers standard layer3+4 (no PAgP)",
        "pagp-desirable-non-silent",
        "l4",
        XOR_L34,
        false,
        true,
    ),
    lagkit_row(
        "pagp-d-xor-l3",
        "PAgP desirable non-silent, switch L2, servers standard layer3+4 (no PAgP)",
        "pagp-desirable-non-silent",
        "l2",
        XOR_L34,
        false,
        true,
    ),
    lagkit_row(
        "pagp-u-xor",
        "PAgP auto silent, switch L4, servers standard layer3+4 (no PAgP)",
        "pagp-auto",
        "l4",
        XOR_L34,
        false,
        false,
    ),
    lagkit_row(
        "pagp-d-lacp",
        "PAgP desirable non-silent, switch L4, servers 802.3ad layer3+4",
        "pagp-desirable-non-silent",
        "l4",
        LACP_L34,
        false,
        false,
    ),
    lagkit_row(
        "pagp-u-pagpu",
        "PAgP auto silent, switch L4, servers standard layer3+4 with PAgP auto",
        "pagp-auto",
        "l4",
        PAGP_U_L34,
        false,
        false,
    ),
];

/// The ibm-6513 rows a short sweep runs.
pub const IBM_6513_SHORT: [&str; 17] = [
    "l2",
    "l4",
    "xor",
    "rr",
    "xor-b2b",
    "rr-b2b",
    "xor-l4",
    "none-xor",
    "pagp-d-pagp",
    "pagp-u-pagp",
    "pagp-l3",
    "pagp-ds-xor",
    "pagp-d-xor",
    "pagp-d-xor-l3",
    "pagp-u-xor",
    "pagp-d-lacp",
    "pagp-u-pagpu",
];

const IBM: [Ibm; 13] = [
    Ibm {
        key: "l2",
        label: "LACP, switch L2, servers layer2+3",
        protocol: "lacp-active",
        lb: "l2",
        bond: LACP_L23,
        mtu: (1500, 1500),
        direct: false,
        forms: true,
        standalone: false,
        lagkit_only: false,
    },
    Ibm {
        key: "l4",
        label: "LACP, switch L4, servers layer3+4",
        protocol: "lacp-active",
        lb: "l4",
        bond: LACP_L34,
        mtu: (1500, 1500),
        direct: false,
        forms: true,
        standalone: false,
        lagkit_only: false,
    },
    Ibm {
        key: "xor",
        label: "static channel (L2), servers standard layer3+4",
        protocol: "static",
        lb: "l2",
        bond: XOR_L34,
        mtu: (1500, 1500),
        direct: false,
        forms: true,
        standalone: false,
        lagkit_only: false,
    },
    Ibm {
        key: "rr",
        label: "static channel (L2), servers round-robin",
        protocol: "static",
        lb: "l2",
        bond: RR,
        mtu: (1500, 1500),
        direct: false,
        forms: true,
        standalone: false,
        lagkit_only: false,
    },
    Ibm {
        key: "l2-34",
        label: "LACP, switch L2, servers layer3+4",
        protocol: "lacp-active",
        lb: "l2",
        bond: LACP_L34,
        mtu: (1500, 1500),
        direct: false,
        forms: true,
        standalone: false,
        lagkit_only: false,
    },
    Ibm {
        key: "l4-23",
        label: "LACP, switch L4, servers layer2+3",
        protocol: "lacp-active",
        lb: "l4",
        bond: LACP_L23,
        mtu: (1500, 1500),
        direct: false,
        forms: true,
        standalone: false,
        lagkit_only: false,
    },
    Ibm {
        key: "lacp-passive",
        label: "LACP passive on the switch, switch L4, servers layer3+4",
        protocol: "lacp-passive",
        lb: "l4",
        bond: LACP_L34,
        mtu: (1500, 1500),
        direct: false,
        forms: true,
        standalone: false,
        lagkit_only: false,
    },
    Ibm {
        key: "none-xor",
        label: "no channel on the switch, servers standard layer3+4",
        protocol: "none",
        lb: "l2",
        bond: XOR_L34,
        mtu: (1500, 1500),
        direct: false,
        forms: true,
        standalone: false,
        lagkit_only: false,
    },
    Ibm {
        key: "none-rr",
        label: "no channel on the switch, servers round-robin",
        protocol: "none",
        lb: "l2",
        bond: RR,
        mtu: (1500, 1500),
        direct: false,
        forms: true,
        standalone: false,
        lagkit_only: false,
    },
    Ibm {
        key: "jumbo",
        label: "LACP, switch L4, servers layer3+4, MTU 9000 everywhere",
        protocol: "lacp-active",
        lb: "l4",
        bond: LACP_L34,
        mtu: (9000, 9000),
        direct: false,
        forms: true,
        standalone: false,
        lagkit_only: false,
    },
    Ibm {
        key: "jumbo-partial",
        label: "LACP, switch L4, servers layer3+4, MTU 9000 on the servers, 1500 on the switch",
        protocol: "lacp-active",
        lb: "l4",
        bond: LACP_L34,
        mtu: (9000, 1500),
        direct: false,
        forms: true,
        standalone: false,
        lagkit_only: false,
    },
    Ibm {
        key: "xor-b2b",
        label: "back-to-back (no switch), servers standard layer3+4, 4 streams",
        protocol: "",
        lb: "",
        bond: XOR_L34,
        mtu: (1500, 1500),
        direct: true,
        forms: true,
        standalone: false,
        lagkit_only: false,
    },
    Ibm {
        key: "rr-b2b",
        label: "back-to-back (no switch), servers round-robin, 4 streams",
        protocol: "",
        lb: "",
        bond: RR,
        mtu: (1500, 1500),
        direct: true,
        forms: true,
        standalone: false,
        lagkit_only: false,
    },
];

/// IBM's 6513 test system 1 hashed on IP addresses (`src-dst-ip`, IOS's
/// default) where the scenario says "switch L2/L3". Open vSwitch has no
/// such bond mode and stands for it with `balance-slb` (source MAC), which
/// with two hosts puts every frame to one server on one link just the
/// same; lagkit's switch runs the seed's method itself.
fn address_hash(kind: SwitchKind) -> &'static str {
    match kind {
        SwitchKind::Ovs => "l2",
        SwitchKind::Lagkit => "l3",
    }
}

fn ibm_6513_config(v: &Ibm, procs: u32, seconds: u32, kind: SwitchKind) -> Config {
    let lb = if v.lb == "l2" {
        address_hash(kind)
    } else {
        v.lb
    };
    let label = if lb == "l3" {
        v.label.replace("L2", "L3")
    } else {
        v.label.to_string()
    };
    let mtu = if v.mtu.0 == v.mtu.1 {
        v.mtu.0.to_string()
    } else {
        format!("[{}, {}]", v.mtu.0, v.mtu.1)
    };
    let scale = ibm_6513_scale(kind);
    let mut t = String::from("name = \"ibm-6513\"\n\n");
    t += &scale_toml(&scale);
    t += &host_toml("cli", "10.65.13.1/24", Some(v.bond));
    t += &host_toml("srv", "10.65.13.2/24", Some(v.bond));
    if v.direct {
        t += &link_toml("cli", "srv", 2, scale.rate, &mtu);
    } else {
        t += &switch_toml(
            "c6513",
            kind,
            &[
                ("po3", "cli", v.protocol, lb),
                ("po4", "srv", v.protocol, lb),
            ],
        );
        t += &link_toml("cli", "c6513", 2, scale.rate, &mtu);
        t += &link_toml("srv", "c6513", 2, scale.rate, &mtu);
    }
    t += &if v.direct {
        // Bulk streams: socketprocs' one message in flight per connection
        // never queues on the links, and reordering needs queues.
        load_toml("stream", &["cli"], "srv", seconds, "conns = 4\n")
    } else {
        load_toml(
            "socketprocs",
            &["cli"],
            "srv",
            seconds,
            &format!("procs = {procs}\nmethod = \"epoll-et\"\nsize = 4096\n"),
        )
    };
    let mut c = config("ibm-6513", v.key, &label, t);
    c.expect_formed = v.forms;
    c.run_unformed = v.standalone;
    c
}

/// IBM's 6513 measurements test system 1, scaled (see the module documentation). Short:
/// L2/L3 against L4 with LACP, standard against round-robin servers on a
/// static channel and back-to-back, no channel, and on lagkit's switch the
/// static L4 channel and the PAgP pairings ([`IBM_6513_SHORT`]), 6 s each
/// (OVS rebalances every second meanwhile). Full: every configuration,
/// 10 s each. A PAgP pairing that does not form waits [`crate::run::UNFORMED_WAIT`]
/// and runs no workload.
pub fn ibm_6513(short: bool, kind: SwitchKind) -> Scenario {
    let seconds = if short { 6 } else { 10 };
    let keys: &[&str] = if short { &IBM_6513_SHORT } else { &[] };
    let configs = IBM
        .iter()
        .chain(&IBM_LAGKIT)
        .filter(|v| keys.is_empty() || keys.contains(&v.key))
        .filter(|v| kind == SwitchKind::Lagkit || !v.lagkit_only)
        .map(|v| ibm_6513_config(v, IBM_6513_PROCS, seconds, kind))
        .collect();
    Scenario {
        name: "ibm-6513",
        description: describe("ibm-6513"),
        configs,
        findings: findings::ibm_6513,
    }
}

// ---------------------------------------------------------------------
// hp-apa

/// hp-apa's links on `kind` of switch: 8 links each way plus 8 clients.
pub fn hp_apa_scale(kind: SwitchKind) -> Scale {
    match kind {
        SwitchKind::Lagkit => Scale {
            rate: "250mbit",
            factor: 4.0,
            note: "250 Mbit/s links stand for the original's 1 Gbit/s ones (factor 4): with 8 links both ways the 2 cores are 81% busy at 250 Mbit/s and CPU-bound (96%) at 500; at 1 Gbit/s (--rate 1gbit) 2 and 4 links reach the links both ways, 8 do not",
        },
        SwitchKind::Ovs => Scale {
            rate: "25mbit",
            factor: 40.0,
            note: "25 Mbit/s links stand for the original's 1 Gbit/s ones (factor 40), so that 8 links in both directions stay within what Open vSwitch's userspace datapath forwards on 2 cores",
        },
    }
}
/// Clients (the seed's eight single-link clients).
pub const HP_APA_CLIENTS: usize = 8;

fn hp_apa_config(k: usize, load: &str, seconds: u32, kind: SwitchKind) -> Config {
    let dir = match load {
        "maerts" => "tx",
        "stream" => "rx",
        _ => "both",
    };
    let key = format!("k{k}-{dir}");
    let label = format!(
        "{}, server {}",
        plural(k, "link"),
        match dir {
            "tx" => "transmits",
            "rx" => "receives",
            _ => "transmits and receives",
        }
    );
    let scale = hp_apa_scale(kind);
    let mut t = String::from("name = \"hp-apa\"\n\n");
    t += &scale_toml(&scale);
    // APA's default distribution is by MAC (LB_MAC); the lab's
    // consecutive client MACs spread evenly under Linux's layer2 hash.
    let (hosts, clients) = star_toml(
        "10.0.1",
        kind,
        r#"mode = "802.3ad", lacp_rate = "fast", xmit_hash_policy = "layer2""#,
        &[("apa", "srv", "lacp-active", "l2")],
        k,
        HP_APA_CLIENTS,
        scale.rate,
    );
    t += &hosts;
    let cl: Vec<&str> = clients.iter().map(String::as_str).collect();
    // 16 KB socket buffers: eight clients' windows together stay below the
    // switch port's queue (tbf, 50 ms), as a switch's buffers would hold
    // them; with autotuned windows the drop-tail queue loses bursts of
    // small-window segments and retransmit timeouts, not the links, set
    // the receive rate.
    t += &load_toml(load, &cl, "srv", seconds, "conns = 1\nsockbuf = 16384\n");
    config("hp-apa", &key, &label, t)
}

/// HP's APA paper: k links against k × one link. Short: k = 1, 2, 4, transmit
/// and receive, 6 s; full: k = 1, 2, 4, 8, transmit, receive and both, 10 s.
pub fn hp_apa(short: bool, kind: SwitchKind) -> Scenario {
    let (ks, loads, seconds): (&[usize], &[&str], u32) = if short {
        (&[1, 2, 4], &["maerts", "stream"], 6)
    } else {
        (&[1, 2, 4, 8], &["maerts", "stream", "bidir"], 10)
    };
    let configs = loads
        .iter()
        .flat_map(|l| ks.iter().map(move |k| hp_apa_config(*k, l, seconds, kind)))
        .collect();
    Scenario {
        name: "hp-apa",
        description: describe("hp-apa"),
        configs,
        findings: findings::hp_apa,
    }
}

// ---------------------------------------------------------------------
// lpm

/// The hash modes lpm compares: (key, source bond table).
pub const LPM_MODES: [(&str, &str); 5] = [
    (
        "src_port",
        r#"mode = "balance-xor", xmit_hash_policy = "src_port""#,
    ),
    (
        "dst_port",
        r#"mode = "balance-xor", xmit_hash_policy = "dst_port""#,
    ),
    (
        "src_dst_port",
        r#"mode = "balance-xor", xmit_hash_policy = "src_dst_port""#,
    ),
    // A fixed seed: with a random one, 4 data flows on 2 links all land on
    // one link in 1 run of 8 (2 × ½⁴), and the comparison would measure the
    // draw, not the hash. Seed 1 puts the data flows (client ports 32789 +
    // 2i to server ports 32792 + 2i) 2/2, as `lagkit flow` shows.
    (
        "strong",
        r#"mode = "balance-xor", xmit_hash_policy = "strong:seed=0x1""#,
    ),
    ("adaptive", r#"mode = "adaptive", adaptive_interval = 500"#),
];
/// Parallel migrations (control+data pairs).
pub const LPM_MIGRATIONS: u32 = 4;

/// lpm's links (back to back, no switch).
pub const LPM_SCALE: Scale = Scale {
    rate: "1gbit",
    factor: 10.0,
    note: "1 Gbit/s links stand for the original's 10 Gbit/s adapters (factor 10); what matters is which link the data takes",
};

fn lpm_config(key: &str, bond: &str, seconds: u32) -> Config {
    let mut t = String::from("name = \"lpm\"\n\n");
    t += &scale_toml(&LPM_SCALE);
    t += &host_toml("src", "10.0.2.1/24", Some(bond));
    t += &host_toml(
        "dst",
        "10.0.2.2/24",
        Some(r#"mode = "balance-xor", xmit_hash_policy = "layer3+4""#),
    );
    t += &link_toml("src", "dst", 2, LPM_SCALE.rate, "1500");
    t += &load_toml(
        "lpm",
        &["src"],
        "dst",
        seconds,
        &format!("migrations = {LPM_MIGRATIONS}\n"),
    );
    config("lpm", key, &format!("source hash {key}"), t)
}

/// the bityard LPM post: each hash mode on the sending (source) side, 8 s (short 6 s).
pub fn lpm(short: bool) -> Scenario {
    let seconds = if short { 6 } else { 10 };
    Scenario {
        name: "lpm",
        description: describe("lpm"),
        configs: LPM_MODES
            .iter()
            .map(|(k, b)| lpm_config(k, b, seconds))
            .collect(),
        findings: findings::lpm,
    }
}

// ---------------------------------------------------------------------
// zvm

/// zvm's links (back to back, no switch).
pub const ZVM_SCALE: Scale = Scale {
    rate: "100mbit",
    factor: 10.0,
    note: "100 Mbit/s links stand for the original's 1 Gbit/s OSA adapters (factor 10): at 1 Gbit/s (--rate 1gbit) the stream rows reach the links too, but request/response with 10 and 50 connections keeps the 2 cores 100% busy at either rate, and with one connection 2 links gave 0.84 of one at 1 Gbit/s against 1.00 at 100 Mbit/s",
};

fn zvm_config(k: usize, load: &str, conns: u32, seconds: u32) -> Config {
    let key = format!("k{k}-{load}-{conns}");
    let label = format!(
        "{}, {load}, {}",
        plural(k, "link"),
        plural(conns as usize, "connection")
    );
    let bond = r#"mode = "802.3ad", lacp_rate = "fast", xmit_hash_policy = "layer3+4""#;
    let mut t = String::from("name = \"zvm\"\n\n");
    t += &scale_toml(&ZVM_SCALE);
    t += &host_toml("guest", "10.0.3.1/24", Some(bond));
    t += &host_toml("peer", "10.0.3.2/24", Some(bond));
    t += &link_toml("guest", "peer", k, ZVM_SCALE.rate, "1500");
    t += &load_toml(
        load,
        &["guest"],
        "peer",
        seconds,
        &format!("conns = {conns}\n"),
    );
    config("zvm", &key, &label, t)
}

/// IBM's z/VM report: 1 against 2 links. Short: 10 connections, stream and rr;
/// full: 1, 10 and 50 connections.
pub fn zvm(short: bool) -> Scenario {
    let (conns, seconds): (&[u32], u32) = if short {
        (&[10], 6)
    } else {
        (&[1, 10, 50], 10)
    };
    let mut configs = Vec::new();
    for load in ["stream", "rr"] {
        for c in conns {
            for k in [1, 2] {
                configs.push(zvm_config(k, load, *c, seconds));
            }
        }
    }
    Scenario {
        name: "zvm",
        description: describe("zvm"),
        configs,
        findings: findings::zvm,
    }
}

// ---------------------------------------------------------------------
// linux-alb

/// linux-alb's links on `kind` of switch.
pub fn alb_scale(kind: SwitchKind) -> Scale {
    match kind {
        SwitchKind::Lagkit => Scale {
            rate: "1gbit",
            factor: 1.0,
            note: "1 Gbit/s links, the original's own rate (factor 1)",
        },
        SwitchKind::Ovs => Scale {
            rate: "50mbit",
            factor: 20.0,
            note: "50 Mbit/s links stand for the original's 1 Gbit/s adapters (factor 20), so that 4 links stay within what Open vSwitch's userspace datapath forwards on 2 cores",
        },
    }
}

fn alb_config(k: usize, load: &str, seconds: u32, kind: SwitchKind) -> Config {
    let dir = if load == "stream" { "rx" } else { "tx" };
    let key = format!("k{k}-{dir}");
    let label = format!(
        "{}, {}, server {}",
        plural(k, "link"),
        plural(k, "client"),
        if dir == "rx" { "receives" } else { "transmits" }
    );
    let scale = alb_scale(kind);
    let mut t = String::from("name = \"linux-alb\"\n\n");
    t += &scale_toml(&scale);
    let (hosts, clients) = star_toml(
        "10.0.4",
        kind,
        r#"mode = "balance-alb""#,
        &[],
        k,
        k,
        scale.rate,
    );
    t += &hosts;
    let cl: Vec<&str> = clients.iter().map(String::as_str).collect();
    t += &load_toml(load, &cl, "srv", seconds, "conns = 2\nsockbuf = 16384\n");
    config("linux-alb", &key, &label, t)
}

/// IBM's xSeries 460 report: k = 1..4 (short: 1, 2, 4), the server receiving (ARP-taught
/// receive balancing) and, in full, transmitting.
pub fn linux_alb(short: bool, kind: SwitchKind) -> Scenario {
    let (ks, loads, seconds): (&[usize], &[&str], u32) = if short {
        (&[1, 2, 4], &["stream"], 6)
    } else {
        (&[1, 2, 3, 4], &["stream", "maerts"], 10)
    };
    let configs = loads
        .iter()
        .flat_map(|l| ks.iter().map(move |k| alb_config(*k, l, seconds, kind)))
        .collect();
    Scenario {
        name: "linux-alb",
        description: describe("linux-alb"),
        configs,
        findings: findings::linux_alb,
    }
}

// ---------------------------------------------------------------------
// Running.

/// Runs every configuration of `sc` in order (each: up → converge →
/// workload → measure → down), calling `progress` before and after each
/// run; a failed run is recorded as failed and the sweep goes on. Checks
/// the scenario's findings and writes the report into `report_dir` if
/// given.
pub fn run_sweep(
    sc: &Scenario,
    opts: &RunOptions,
    report_dir: Option<&Path>,
    mut progress: impl FnMut(Progress<'_>),
) -> Result<(Report, Vec<PathBuf>), LabError> {
    let scale = sc.configs.first().and_then(|c| c.topo.scale.clone());
    let mut report = Report::new(sc.name, scale);
    let t0 = Instant::now();
    let n = sc.configs.len();
    for (i, c) in sc.configs.iter().enumerate() {
        let mut o = opts.clone();
        o.run = i + 1;
        o.expect_formed = c.expect_formed;
        o.run_unformed = c.run_unformed;
        progress(Progress::Start {
            index: i,
            total: n,
            label: &c.label,
        });
        let mut rec = match run_once(&c.topo, &o) {
            Ok(r) => r,
            Err(e) => {
                let code = ConfigCode::of(
                    &c.topo,
                    c.topo
                        .workload
                        .as_ref()
                        .map(|w| w.workload().code())
                        .as_ref(),
                );
                let mut r = RunRecord::new(i + 1, &c.topo, code);
                r.error = Some(e.to_string());
                r
            }
        };
        rec.key = c.key.clone();
        rec.label = c.label.clone();
        let done = i + 1;
        let eta = t0.elapsed().as_secs_f64() / done as f64 * (n - done) as f64;
        progress(Progress::Done {
            index: i,
            total: n,
            record: &rec,
            elapsed: t0.elapsed(),
            eta: Duration::from_secs_f64(eta),
        });
        report.runs.push(rec);
    }
    report.findings = (sc.findings)(&report);
    report.command = opts.command.clone();
    let files = match report_dir {
        Some(d) => report.write(d)?,
        None => Vec::new(),
    };
    Ok((report, files))
}

/// What [`run_sweep`] reports as it goes.
#[derive(Debug)]
pub enum Progress<'a> {
    /// Run `index` (0-based) of `total` starts.
    Start {
        /// 0-based.
        index: usize,
        /// Runs in the sweep.
        total: usize,
        /// The configuration's label.
        label: &'a str,
    },
    /// Run `index` ended (well or not: see the record's `error`).
    Done {
        /// 0-based.
        index: usize,
        /// Runs in the sweep.
        total: usize,
        /// Its record.
        record: &'a RunRecord,
        /// Since the sweep started.
        elapsed: Duration,
        /// Estimated time left.
        eta: Duration,
    },
}

impl Progress<'_> {
    /// One line, e.g. `[2/4] m-L-v 8d-l3 e: 182.5 Mbit/s (elapsed 40 s, ETA 40 s)`.
    pub fn line(&self) -> String {
        match self {
            Progress::Start {
                index,
                total,
                label,
            } => format!("[{}/{total}] {label} ...", index + 1),
            Progress::Done {
                index,
                total,
                record: r,
                elapsed,
                eta,
            } => {
                let unformed = r
                    .formation
                    .as_ref()
                    .is_some_and(|f| f.not_formed_as_expected());
                let what = match (&r.error, &r.workload) {
                    (Some(e), _) => format!("FAILED: {}", e.lines().next().unwrap_or("")),
                    (None, None) if unformed => "not formed, as expected".into(),
                    (None, Some(w)) if w.transactions_per_s > 0.0 && w.mbps < 1.0 => {
                        format!("{:.0} transactions/s", w.transactions_per_s)
                    }
                    (None, Some(w)) => format!("{:.1} Mbit/s", w.mbps),
                    (None, None) => "no result".into(),
                };
                format!(
                    "[{}/{total}] {}: {what} (elapsed {:.0} s, ETA {:.0} s)",
                    index + 1,
                    r.label,
                    elapsed.as_secs_f64(),
                    eta.as_secs_f64()
                )
            }
        }
    }
}

/// The two ibm-6513 configurations of `lagkit demo`: L2/L3 against L4
/// hashing with LACP, short runs, through a switch of kind `kind`.
pub fn demo_scenario(kind: SwitchKind) -> Scenario {
    let mut sc = ibm_6513(true, kind);
    sc.configs.retain(|c| c.key == "l2" || c.key == "l4");
    sc
}

/// The short ibm-6513 comparison for `lagkit demo`, with `lagkit` as the
/// lab's binary; the report goes to `report_dir`, when given.
pub fn demo(
    lab: Options,
    kind: SwitchKind,
    report_dir: Option<&Path>,
    progress: impl FnMut(Progress<'_>),
) -> Result<(Report, Vec<PathBuf>), LabError> {
    let sc = demo_scenario(kind);
    let mut o = RunOptions::new(lab);
    o.converge_timeout = Duration::from_secs(40);
    run_sweep(&sc, &o, report_dir, progress)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(s: &Scenario) -> Vec<ConfigCode> {
        s.configs
            .iter()
            .map(|c| {
                ConfigCode::of(
                    &c.topo,
                    Some(&c.topo.workload.as_ref().unwrap().workload().code()),
                )
            })
            .collect()
    }

    #[test]
    fn ibm_6513_configurations() {
        let s = ibm_6513(true, SwitchKind::Ovs);
        let keys: Vec<&str> = s.configs.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(
            keys,
            ["l2", "l4", "xor", "rr", "none-xor", "xor-b2b", "rr-b2b"]
        );
        let c = codes(&s);
        assert_eq!(
            (c[0].switch.as_str(), c[0].server.as_str()),
            ("m-L-v", "8d-l3")
        );
        assert_eq!(
            (c[1].switch.as_str(), c[1].server.as_str()),
            ("p-L-v", "8d-st")
        );
        assert_eq!(c[3].server, "rn-sg");
        assert_eq!((c[0].app.as_str(), c[0].procs), ("e", IBM_6513_PROCS));
        assert_eq!(c[0].links, "2x100M");
        // lagkit's switch hashes on IP addresses as the seed's did.
        let lk = codes(&ibm_6513(true, SwitchKind::Lagkit));
        assert_eq!(lk[0].switch, "i-L-v");
        assert_eq!(lk[2].switch, "i-M-o");
        assert_eq!(lk[1].switch, "p-L-v");
        // ... and its short sweep has the seed's PAgP and static L4 rows,
        // the pairings that do not form marked so.
        let short = ibm_6513(true, SwitchKind::Lagkit);
        assert_eq!(short.configs.len(), IBM_6513_SHORT.len());
        let row = |k: &str| short.configs.iter().find(|c| c.key == k).unwrap();
        for (k, forms, switch) in [
            ("xor-l4", true, "p-M-o"),
            ("pagp-d-pagp", true, "p-P-d"),
            ("pagp-u-pagp", true, "p-P-u"),
            ("pagp-l3", true, "i-P-d"),
            ("pagp-ds-xor", true, "p-P-ds"),
            ("pagp-d-xor", false, "p-P-d"),
            ("pagp-d-xor-l3", false, "i-P-d"),
            ("pagp-u-xor", false, "p-P-us"),
            ("pagp-d-lacp", false, "p-P-d"),
            ("pagp-u-pagpu", false, "p-P-us"),
        ] {
            let c = row(k);
            assert_eq!(c.expect_formed, forms, "{k}");
            assert_eq!(ConfigCode::of(&c.topo, None).switch, switch, "{k}");
            // A pairing that will not form says so when parsed.
            assert_eq!(
                c.topo.warnings.iter().any(|w| w.contains("will not agree")),
                !forms,
                "{k}: {:?}",
                c.topo.warnings
            );
        }
        let pagp = row("pagp-d-pagp");
        assert!(pagp.text.contains("pagp = \"desirable\""));
        let bond = pagp.topo.hosts[0].bond.as_ref().unwrap();
        assert!(bond.toml.contains("pagp = \"desirable\""), "{}", bond.toml);
        let ios = crate::lagkit_switch::ios_config(&pagp.topo, &pagp.topo.switches[0]);
        assert!(
            ios.contains(" channel-group 3 mode desirable non-silent\n"),
            "{ios}"
        );
        let ios = crate::lagkit_switch::ios_config(
            &row("pagp-u-xor").topo,
            &row("pagp-u-xor").topo.switches[0],
        );
        assert!(ios.contains(" channel-group 4 mode auto\n"), "{ios}");
        let full = ibm_6513(false, SwitchKind::Ovs);
        assert_eq!(full.configs.len(), IBM.len());
        let fc = codes(&full);
        let mtu: Vec<&str> = fc.iter().map(|c| c.mtu.as_str()).collect();
        assert_eq!(&mtu[mtu.len() - 5..mtu.len() - 2], ["S", "J", "P"]);
        let partial = &full
            .configs
            .iter()
            .find(|c| c.key == "jumbo-partial")
            .unwrap()
            .topo;
        assert!(
            partial
                .warnings
                .iter()
                .any(|w| w.contains("MTU 9000 on one end, 1500")),
            "{:?}",
            partial.warnings
        );
        assert_eq!(demo_scenario(SwitchKind::DEFAULT).configs.len(), 2);
    }

    #[test]
    fn a_rate_override_reshapes_every_link_and_rescales_the_report() {
        let r = crate::topology::Rate::parse("1gbit").unwrap();
        let sc = ibm_6513(true, SwitchKind::Lagkit).at_rate(&r);
        for c in &sc.configs {
            assert!(c
                .topo
                .links
                .iter()
                .all(|l| l.rate.as_ref().unwrap().bits == 1_000_000_000));
            assert!(c.text.contains("rate = \"1gbit\"") && !c.text.contains("250mbit\""));
            let s = c.topo.scale.as_ref().unwrap();
            assert_eq!(s.factor, Some(1.0), "{}", c.key);
            assert!(
                s.note
                    .starts_with("1gbit links for the original's 1 Gbit/s, set with --rate"),
                "{}",
                s.note
            );
        }
        let hp = hp_apa(true, SwitchKind::Lagkit)
            .at_rate(&crate::topology::Rate::parse("250mbit").unwrap());
        let s = hp.configs[0].topo.scale.as_ref().unwrap();
        assert_eq!(s.factor, Some(4.0));
    }

    #[test]
    fn each_scenario_runs_at_its_scale_and_open_vswitch_keeps_the_slower_one() {
        let rates = |sc: &Scenario| -> Vec<(u64, f64)> {
            let c = &sc.configs[0];
            let f = c.topo.scale.as_ref().and_then(|s| s.factor).unwrap();
            let mut v: Vec<(u64, f64)> = (c.topo.links.iter())
                .map(|l| (l.rate.as_ref().unwrap().bits, f))
                .collect();
            v.dedup();
            v
        };
        let bits = |r: &str| crate::topology::Rate::parse(r).unwrap().bits;
        for kind in [SwitchKind::Lagkit, SwitchKind::Ovs] {
            for (sc, scale) in [
                (ibm_6513(false, kind), ibm_6513_scale(kind)),
                (hp_apa(false, kind), hp_apa_scale(kind)),
                (linux_alb(false, kind), alb_scale(kind)),
            ] {
                assert_eq!(
                    rates(&sc),
                    [(bits(scale.rate), scale.factor)],
                    "{}",
                    sc.name
                );
                // Every link of the original ran at 1 Gbit/s.
                assert_eq!(bits(scale.rate) as f64 * scale.factor, 1e9, "{}", sc.name);
            }
        }
        // lagkit's switch forwards in the kernel: the lab runs faster
        // through it than through Open vSwitch's userspace datapath.
        for f in [ibm_6513_scale, hp_apa_scale, alb_scale] {
            assert!(bits(f(SwitchKind::Lagkit).rate) > bits(f(SwitchKind::Ovs).rate));
        }
        assert_eq!(alb_scale(SwitchKind::Lagkit).rate, "1gbit");
        assert_eq!(rates(&lpm(false)), [(bits("1gbit"), 10.0)]);
        assert_eq!(rates(&zvm(false)), [(bits("100mbit"), 10.0)]);
    }

    #[test]
    fn every_builtin_parses_short_and_full() {
        for (name, d) in BUILTIN {
            assert!(!d.is_empty());
            for short in [true, false] {
                let s = builtin(name, short).unwrap();
                assert_eq!(s.name, name);
                assert!(!s.configs.is_empty());
                let mut keys: Vec<&str> = s.configs.iter().map(|c| c.key.as_str()).collect();
                keys.sort_unstable();
                keys.dedup();
                assert_eq!(keys.len(), s.configs.len(), "{name}: keys repeat");
                for c in &s.configs {
                    assert!(c.topo.workload.is_some(), "{name} {}", c.key);
                }
            }
        }
        assert!(builtin("nope", true).is_none());
    }

    #[test]
    fn hp_apa_client_macs_spread_under_layer2() {
        // The server's MAC xor each client's last byte, mod k, must hit
        // every member equally for k = 2, 4, 8.
        let s = hp_apa(false, SwitchKind::DEFAULT);
        let t = &s.configs[0].topo;
        let last = |h: &str| {
            let h = t.host(h).unwrap();
            let e = t.ends_on(&h.name).next().unwrap().0;
            let mac = t.host_mac(e).unwrap();
            u8::from_str_radix(&mac[15..], 16).unwrap()
        };
        let srv = last("srv");
        for k in [2u8, 4, 8] {
            let mut n = vec![0; k as usize];
            for i in 1..=HP_APA_CLIENTS {
                n[((last(&format!("c{i}")) ^ srv) % k) as usize] += 1;
            }
            assert!(
                n.iter().all(|x| *x == HP_APA_CLIENTS / k as usize),
                "k={k}: {n:?}"
            );
        }
    }
}
