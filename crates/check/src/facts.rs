//! The facts of one end, whatever dialect they were written in.

use crate::Loc;
use lagkit_bondcfg::{BondConfig, LacpRate, Mode, Pagp};
use lagkit_ios::{ChannelMode, Interface};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::fmt;

/// How a host's bond aggregates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostMode {
    /// 802.3ad: LACP, active or passive, fast or slow.
    Lacp {
        /// Starts negotiating.
        active: bool,
        /// Asks for a PDU every second.
        fast: bool,
    },
    /// A static hash channel (balance-xor, AIX standard).
    Static,
    /// balance-rr: packets in turn over every member.
    RoundRobin,
    /// active-backup: one member at a time.
    ActiveBackup,
    /// broadcast: every frame on every member.
    Broadcast,
    /// balance-tlb, balance-alb, adaptive: no switch channel wanted.
    NoChannel,
    /// A lagkit static bond (balance-xor or active-backup) speaking PAgP.
    Pagp {
        /// `pagp = "auto"`: answers only.
        auto: bool,
        /// `pagp_silent`: a desirable member joins a silent partner after
        /// the silent wait.
        silent: bool,
    },
}

/// A host's bond.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Host {
    /// The bond's name.
    pub bond: String,
    /// Where it is defined.
    pub loc: Loc,
    /// Its mode.
    pub mode: HostMode,
    /// Its transmit hash policy, when the mode hashes.
    pub hash: Option<String>,
    /// A policy written that the bond does not run (a lagkit bond in
    /// balance-tlb/alb with `tlb_dynamic_lb = true` runs `strong`), and
    /// where it is written.
    pub unused_hash: Option<(String, Loc)>,
    /// Its MTU (aggregate and interface), where the configuration sets it.
    pub mtu: Option<(u32, Loc)>,
    /// Members, with speed and duplex when the input tells them.
    pub members: Vec<HostPort>,
    /// `min_links`.
    pub min_links: u32,
    /// `max_bundle`.
    pub max_bundle: Option<u16>,
    /// Where the bond's MAC address (under 802.3ad its LACP system ID)
    /// comes from, when the input tells.
    pub mac: Option<(MacSource, Loc)>,
    /// `fail_over_mac`, when the input sets it.
    pub fail_over_mac: Option<(String, Loc)>,
    /// What the running bond says about itself and its partner, when the
    /// input is a running bond's (`/proc/net/bonding`, `lagkit status`).
    pub running: Option<crate::running::Running>,
}

/// Where a bond's MAC address comes from: what decides whether its LACP
/// system ID survives a restart, a re-creation or a cloned image.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MacSource {
    /// Set in the configuration: the MAC, or the LACP system ID itself
    /// (`ad_actor_system`).
    Pinned,
    /// systemd's `MACAddressPolicy=persistent`: derived from
    /// `/etc/machine-id` and the interface name. `default` when no `.link`
    /// says so (systemd's own `99-default.link` does).
    MachineId {
        /// No `.link` given sets it: systemd's default.
        default: bool,
    },
    /// `MACAddressPolicy=random`: a new address each time the device is
    /// created.
    Random,
    /// The kernel's rule (`MACAddressPolicy=none`): the first member
    /// enslaved lends the bond its address.
    FirstMember,
    /// The running bond's system MAC is this member's permanent address
    /// (`/proc/net/bonding`).
    Member(String),
}

/// Members known by name only.
pub fn ports(names: &[String]) -> Vec<HostPort> {
    names.iter().map(|m| HostPort::named(m)).collect()
}

/// A host bond's member.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HostPort {
    /// Interface name.
    pub name: String,
    /// Mbit/s, when known.
    pub speed: Option<u32>,
    /// `full` or `half`, when known.
    pub duplex: Option<String>,
    /// Its own MTU, where the configuration sets one apart from the bond's.
    pub mtu: Option<(u32, Loc)>,
    /// A veth (by name, `veth*` or `v-*`, or a `# lagkit-check: veth` hint).
    pub veth: bool,
}

impl HostPort {
    /// A member known by name only.
    pub fn named(name: &str) -> HostPort {
        HostPort {
            name: name.to_string(),
            speed: None,
            duplex: None,
            mtu: None,
            veth: name.starts_with("veth") || name.starts_with("v-"),
        }
    }
}

/// One port-channel of a switch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Channel {
    /// The switch's name (`hostname`), or the file.
    pub switch: String,
    /// The file.
    pub file: String,
    /// The group number.
    pub number: u32,
    /// Member ports.
    pub ports: Vec<Interface>,
    /// The `interface Port-channelN`, if configured.
    pub port_channel: Option<Interface>,
    /// The switch-global `port-channel load-balance` and its line.
    pub load_balance: Option<(String, usize)>,
    /// The MTU of a port whose configuration sets none: Cisco's 1500;
    /// `None` where the input does not tell (Open vSwitch).
    pub default_mtu: Option<u32>,
    /// Open vSwitch's `datapath_type` of the channel's bridge and its line,
    /// when the input shows it (`ovs-vsctl show`).
    pub datapath: Option<(String, usize)>,
    /// Open vSwitch's `other_config:userspace-tso-enable=true` is shown:
    /// its userspace datapath takes partial checksums and GSO frames.
    pub userspace_tso: bool,
}

impl Channel {
    /// Where line `line` of the switch's file is.
    pub fn at(&self, line: usize) -> Loc {
        Loc {
            file: self.file.clone(),
            line: Some(line),
        }
    }

    /// The members' modes, distinct.
    pub fn modes(&self) -> Vec<ChannelMode> {
        let mut v: Vec<ChannelMode> = Vec::new();
        for p in &self.ports {
            if let Some(c) = &p.channel_group {
                if !v.contains(&c.value.mode) {
                    v.push(c.value.mode);
                }
            }
        }
        v
    }
}

/// A switch: its channels, and its ports that are in none.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Switch {
    /// The file.
    pub file: String,
    /// The channels.
    pub channels: Vec<Channel>,
    /// Ethernet ports in no channel group: facing a bond that hashes or
    /// negotiates, each learns the bond's MAC in turn.
    pub unchannelled: Vec<Interface>,
}

/// What one input file held.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum End {
    /// Host bonds.
    Hosts(Vec<Host>),
    /// A switch's channels.
    Switch(Switch),
    /// systemd `.link` files (they apply to the hosts' bonds they match).
    Links(Vec<LinkFile>),
    /// A switch's show output (what its channels do now).
    Show(crate::show::Show),
    /// A host's LLDP neighbours (`lldpctl -f keyvalue`): which switch port
    /// each of its interfaces faces.
    Lldp(Vec<crate::lldp::HostNeighbour>),
}

/// One `[Match]`/`[Link]` pair of a systemd `.link` file: what udev does
/// to the MAC of the devices it matches.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LinkFile {
    /// Where its `[Match]` starts.
    pub loc: Option<Loc>,
    /// `OriginalName=` globs.
    pub names: Vec<String>,
    /// `Type=`, `Kind=` and `Driver=` values (`bond`, `bonding`).
    pub kinds: Vec<String>,
    /// A match key (or a negation) lagkit does not evaluate: it may not
    /// apply, so it is never said to.
    pub unknown_match: bool,
    /// `MACAddressPolicy=` and where.
    pub policy: Option<(String, Loc)>,
    /// `MACAddress=` is set.
    pub mac: Option<Loc>,
}

impl LinkFile {
    /// Whether udev applies this file to bond `bond`.
    pub fn matches(&self, bond: &str) -> bool {
        !self.unknown_match && self.known_keys_match(bond)
    }

    /// Whether the match keys lagkit evaluates (at least one) all match.
    fn known_keys_match(&self, bond: &str) -> bool {
        (!self.names.is_empty() || !self.kinds.is_empty())
            && (self.names.is_empty() || self.names.iter().any(|g| glob(g, bond)))
            && (self.kinds.is_empty()
                || self
                    .kinds
                    .iter()
                    .any(|k| matches!(k.as_str(), "bond" | "bonding")))
    }

    /// The MAC source this file gives what it matches; `None` when that
    /// is not known (a match key lagkit does not evaluate, an unknown
    /// policy).
    pub fn source(&self) -> Option<(MacSource, Loc)> {
        if self.unknown_match {
            return None;
        }
        if let Some(l) = &self.mac {
            return Some((MacSource::Pinned, l.clone()));
        }
        // Without MACAddressPolicy= udev leaves the address to the kernel.
        let Some((p, l)) = self.policy.as_ref() else {
            return Some((MacSource::FirstMember, self.loc.clone()?));
        };
        let s = match p.as_str() {
            "random" => MacSource::Random,
            "persistent" => MacSource::MachineId { default: false },
            "none" => MacSource::FirstMember,
            _ => return None,
        };
        Some((s, l.clone()))
    }

    /// The file udev uses for `bond`: the first that matches (the caller
    /// gives them in udev's order), or one that may, by a key lagkit does
    /// not evaluate (its [`LinkFile::source`] is then unknown).
    pub fn first_for<'a>(links: &'a [LinkFile], bond: &str) -> Option<&'a LinkFile> {
        links.iter().find(|l| l.known_keys_match(bond))
    }
}

/// Shell-style `*` and `?` (udev's globs; a `[` class is taken literally).
fn glob(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|c| *c == '*')
}

/// The `[Match]`/`[Link]` sections of `.link` files (several may be
/// concatenated; each `[Match]` starts the next).
pub fn link_files(file: &str, text: &str) -> Vec<LinkFile> {
    let loc = |line| Loc {
        file: file.into(),
        line: Some(line),
    };
    let mut out: Vec<LinkFile> = Vec::new();
    let mut section = String::new();
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if let Some(s) = t.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            section = s.to_string();
            if section == "Match" {
                out.push(LinkFile {
                    loc: Some(loc(i + 1)),
                    ..LinkFile::default()
                });
            }
            continue;
        }
        let (Some((k, v)), Some(f)) = (t.split_once('='), out.last_mut()) else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        let words = || v.split_whitespace().map(str::to_string);
        match (section.as_str(), k) {
            _ if t.starts_with('#') || t.starts_with(';') => {}
            ("Match", _) if v.starts_with('!') => f.unknown_match = true,
            ("Match", "OriginalName") => f.names.extend(words()),
            ("Match", "Type" | "Kind" | "Driver") => f.kinds.extend(words()),
            ("Match", _) => f.unknown_match = true,
            ("Link", "MACAddressPolicy") => f.policy = Some((v.to_string(), loc(i + 1))),
            ("Link", "MACAddress") if !v.is_empty() => f.mac = Some(loc(i + 1)),
            _ => {}
        }
    }
    out
}

/// Why an input could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Unreadable.
    #[error("{file}: {why}")]
    Io {
        /// The file.
        file: String,
        /// The reason.
        why: String,
    },
    /// Read, but wrong.
    #[error("{file}:{line}: {why}")]
    Bad {
        /// The file.
        file: String,
        /// The line.
        line: usize,
        /// What is wrong and how to fix it.
        why: String,
    },
    /// Not a dialect lagkit reads.
    #[error("{file}: {why}")]
    Dialect {
        /// The file.
        file: String,
        /// What it reads.
        why: String,
    },
}

/// The dialects [`read`] knows.
pub const DIALECTS: &str = "a lagkit bond configuration (TOML), Linux's /proc/net/bonding/bondX, `lagkit status --json`, ifupdown's interfaces, systemd-networkd .netdev/.network, systemd .link files, netplan YAML, NetworkManager keyfiles, teamd JSON, AIX `lsattr -El entX`, a Cisco IOS configuration (running-config or console commands), Open vSwitch's `ovs-appctl bond/show`/`lacp/show` (with `ovs-vsctl show`), a Cisco switch's show output (show etherchannel summary/detail, show lacp neighbor, show pagp neighbor, show interfaces status/counters, with the prompt and command lines)";

/// The line of the first `key =` in a TOML text, for locations.
fn toml_line(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            let t = l.trim_start();
            t.strip_prefix(key)
                .is_some_and(|r| r.trim_start().starts_with('='))
        })
        .map(|i| i + 1)
}

/// Reads `text` (from `file`) in whichever dialect it is written.
pub fn read(file: &str, text: &str) -> Result<End, ReadError> {
    read_input(file, text).map(|i| i.end)
}

/// One input as read: its facts, how many there were, and the lines of a
/// Cisco IOS configuration that were not used.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Input {
    /// The file.
    pub file: String,
    /// Its facts.
    #[serde(skip)]
    pub end: End,
    /// How many facts were read.
    pub counts: Counts,
    /// IOS lines outside the subset (none for other dialects).
    #[serde(skip)]
    pub unread: Vec<lagkit_ios::Unread>,
}

impl Input {
    /// The parts of a show file that were not read (none for other
    /// dialects).
    pub fn show_unread(&self) -> &[crate::show::Unread] {
        match &self.end {
            End::Show(s) => &s.unread,
            _ => &[],
        }
    }
}

/// How many facts one input gave: what a run that finds nothing compared.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// `bond`, `switch`, `link files` or `show output`.
    pub side: &'static str,
    /// Host bonds.
    pub bonds: usize,
    /// Their members.
    pub members: usize,
    /// Switch interfaces (ports and port-channels).
    pub interfaces: usize,
    /// Switch channels (channel groups, Open vSwitch bonds).
    pub channels: usize,
    /// systemd `.link` sections.
    pub link_files: usize,
    /// Show commands read.
    pub commands: usize,
    /// Settings read (modes, hashes, MTUs, channel-groups, VLANs, ...).
    pub settings: usize,
}

impl fmt::Display for Counts {
    /// `bond: 1 bond, 2 members, 9 settings`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n =
            |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
        let parts = match self.side {
            "bond" => vec![
                n(self.bonds, "bond", "bonds"),
                n(self.members, "member", "members"),
            ],
            "switch" => vec![
                n(self.interfaces, "interface", "interfaces"),
                n(self.channels, "channel", "channels"),
            ],
            "show output" => vec![
                n(self.commands, "command", "commands"),
                n(self.channels, "channel", "channels"),
                n(self.interfaces, "member", "members"),
            ],
            _ => vec![n(self.link_files, ".link section", ".link sections")],
        };
        write!(
            f,
            "{}: {}, {}",
            self.side,
            parts.join(", "),
            n(self.settings, "setting", "settings")
        )
    }
}

fn host_settings(h: &Host) -> usize {
    // The mode always, then what the input set.
    1 + usize::from(h.hash.is_some())
        + usize::from(h.mtu.is_some())
        + usize::from(h.min_links > 0)
        + usize::from(h.max_bundle.is_some())
        + usize::from(h.mac.is_some())
        + usize::from(h.fail_over_mac.is_some())
        + h.members
            .iter()
            .map(|m| {
                usize::from(m.speed.is_some())
                    + usize::from(m.duplex.is_some())
                    + usize::from(m.mtu.is_some())
            })
            .sum::<usize>()
}

fn counts(end: &End) -> Counts {
    match end {
        End::Hosts(h) => Counts {
            side: "bond",
            bonds: h.len(),
            members: h.iter().map(|h| h.members.len()).sum(),
            settings: h.iter().map(host_settings).sum(),
            ..Counts::default()
        },
        End::Switch(s) => {
            let ifaces = || {
                s.channels
                    .iter()
                    .flat_map(|c| c.ports.iter().chain(c.port_channel.iter()))
                    .chain(s.unchannelled.iter())
            };
            Counts {
                side: "switch",
                interfaces: ifaces().count(),
                channels: s.channels.len(),
                settings: ifaces().map(Interface::settings).sum::<usize>()
                    + usize::from(s.channels.iter().any(|c| c.load_balance.is_some())),
                ..Counts::default()
            }
        }
        End::Show(s) => Counts {
            side: "show output",
            commands: s.commands.len(),
            channels: s.channels.len(),
            interfaces: s.channels.iter().map(|c| c.members.len()).sum(),
            settings: s.facts(),
            ..Counts::default()
        },
        End::Lldp(rows) => Counts {
            side: "LLDP neighbours",
            interfaces: rows.len(),
            settings: rows.len(),
            ..Counts::default()
        },
        End::Links(l) => Counts {
            side: "link files",
            link_files: l.len(),
            settings: l
                .iter()
                .map(|l| usize::from(l.policy.is_some()) + usize::from(l.mac.is_some()))
                .sum(),
            ..Counts::default()
        },
    }
}

/// Reads `text` (from `file`) in whichever dialect it is written, with
/// the counts of what it held and the IOS lines it did not use.
pub fn read_input(file: &str, text: &str) -> Result<Input, ReadError> {
    if text.contains('\0') {
        return Err(ReadError::Dialect {
            file: file.into(),
            why: "not a text file".into(),
        });
    }
    let (mut end, unread) = read_dialect(file, text)?;
    if let End::Hosts(hosts) = &mut end {
        veth_hint(text, hosts);
    }
    Ok(Input {
        file: file.into(),
        counts: counts(&end),
        end,
        unread,
    })
}

fn is_ios(text: &str) -> bool {
    text.lines().any(|l| {
        let t = l.trim_start().to_ascii_lowercase();
        t.starts_with("interface ")
            || t.starts_with("channel-group ")
            || t.starts_with("port-channel ")
    })
}

/// `# lagkit-check: veth` (every member) or `# lagkit-check: veth a1 a2`
/// (those): members that are veths although their names do not say so.
fn veth_hint(text: &str, hosts: &mut [Host]) {
    for l in text.lines() {
        let Some(rest) = l
            .trim()
            .strip_prefix('#')
            .map(str::trim_start)
            .and_then(|r| r.strip_prefix("lagkit-check:"))
        else {
            continue;
        };
        let mut w = rest.split_whitespace();
        if w.next() != Some("veth") {
            continue;
        }
        let names: Vec<&str> = w.collect();
        for m in hosts.iter_mut().flat_map(|h| h.members.iter_mut()) {
            if names.is_empty() || names.contains(&m.name.as_str()) {
                m.veth = true;
            }
        }
    }
}

fn read_dialect(file: &str, text: &str) -> Result<(End, Vec<lagkit_ios::Unread>), ReadError> {
    let plain = |e: End| (e, Vec::new());
    let has = |s: &str| text.lines().any(|l| l.trim_start().starts_with(s));
    if text.lines().any(|l| l.starts_with("Bonding Mode:")) {
        return read_proc(file, text).map(plain);
    }
    if let Some(rows) = crate::lldp::read_lldpctl(file, text) {
        return Ok(plain(End::Lldp(rows)));
    }
    if crate::running::is_status_json(text) {
        return crate::running::from_status_json(file, text).map(|h| plain(End::Hosts(h)));
    }
    if crate::show::is_show(text) {
        return crate::show::read(file, text)
            .map(|s| plain(End::Show(s)))
            .map_err(|e| ReadError::Dialect {
                file: file.into(),
                why: format!("read as IOS show output: {e}"),
            });
    }
    if has("[Link]") && has("[Match]") && !has("[NetDev]") && !has("[Network]") {
        let links = link_files(file, text);
        return if links.iter().any(|l| l.policy.is_some() || l.mac.is_some()) {
            Ok(plain(End::Links(links)))
        } else {
            Err(ReadError::Dialect {
                file: file.into(),
                why: "a systemd .link file without MACAddressPolicy= or MACAddress=: nothing in it for lagkit check".into(),
            })
        };
    }
    if let Some(dialect) = crate::dialects::sniff(text) {
        let bonds = dialect(file, text)?;
        return bonds
            .iter()
            .map(|b| b.host(file))
            .collect::<Result<Vec<_>, _>>()
            .map(|h| plain(End::Hosts(h)));
    }
    if text
        .lines()
        .any(|l| l.starts_with("---- ") && l.trim_end().ends_with(" ----"))
        && (text.contains("bond_mode:") || text.contains("lacp_time:") || text.contains("sys_id:"))
    {
        return Ok(plain(End::Switch(Switch {
            file: file.into(),
            channels: read_ovs(file, text),
            unchannelled: Vec::new(),
        })));
    }
    if has("ovs_version:") || (has("Bridge ") && has("Port ")) {
        return Err(ReadError::Dialect {
            file: file.into(),
            why: "`ovs-vsctl show` alone names no bond modes: give it together with `ovs-appctl bond/show` (and `lacp/show`) in one file".into(),
        });
    }
    if is_ios(text) {
        return read_ios(file, text);
    }
    let toml_like = text.lines().any(|l| {
        let t = l.trim_start();
        t.starts_with("[[bond]]")
            || t.starts_with("[bond")
            || t.starts_with("members")
            || t.starts_with("mode")
    });
    if toml_like {
        return read_lagkit(file, text).map(plain);
    }
    Err(ReadError::Dialect {
        file: file.into(),
        why: format!("not a dialect lagkit reads; it reads {DIALECTS}"),
    })
}

fn host_mode(b: &BondConfig) -> HostMode {
    if b.pagp != Pagp::Off {
        return HostMode::Pagp {
            auto: b.pagp == Pagp::Auto,
            silent: b.pagp_silent,
        };
    }
    HostMode::of(b.mode, b.lacp_active, b.lacp_rate == LacpRate::Fast)
}

impl HostMode {
    /// The host mode of a Linux bonding mode (LACP's activity and rate
    /// matter only for 802.3ad).
    pub fn of(mode: Mode, active: bool, fast: bool) -> HostMode {
        match mode {
            Mode::Lacp => HostMode::Lacp { active, fast },
            Mode::BalanceXor => HostMode::Static,
            Mode::BalanceRr => HostMode::RoundRobin,
            Mode::ActiveBackup => HostMode::ActiveBackup,
            Mode::Broadcast => HostMode::Broadcast,
            Mode::BalanceTlb | Mode::BalanceAlb | Mode::Adaptive => HostMode::NoChannel,
        }
    }
}

fn read_lagkit(file: &str, text: &str) -> Result<End, ReadError> {
    let (bonds, _) = lagkit_bondcfg::parse_str(text, file).map_err(|e| ReadError::Dialect {
        file: file.into(),
        why: format!("read as a lagkit bond configuration: {e}"),
    })?;
    let loc = |line: Option<usize>| Loc {
        file: file.into(),
        line,
    };
    Ok(End::Hosts(
        bonds
            .iter()
            .map(|b| {
                let hashes = matches!(b.mode, Mode::Lacp | Mode::BalanceXor);
                Host {
                    bond: b.name.clone(),
                    loc: loc(toml_line(text, "name").or(Some(1))),
                    mode: host_mode(b),
                    hash: hashes.then(|| b.xmit_hash_policy.to_string()),
                    unused_hash: (b.mode.is_tlb()
                        && b.tlb_dynamic_lb
                        && !matches!(b.xmit_hash_policy, lagkit_hash::Policy::Strong(_)))
                    .then(|| {
                        let line = toml_line(text, "xmit_hash_policy");
                        (b.xmit_hash_policy.to_string(), loc(line))
                    }),
                    // lagkit sets the members' MTU to the bond's: one place.
                    mtu: Some((u32::from(b.mtu), loc(toml_line(text, "mtu")))),
                    members: ports(&b.members),
                    min_links: b.min_links,
                    max_bundle: b.max_bundle,
                    mac: (b.mac.is_some() || b.ad_actor_system.is_some()).then(|| {
                        let line = toml_line(text, "mac").or(toml_line(text, "ad_actor_system"));
                        (MacSource::Pinned, loc(line))
                    }),
                    fail_over_mac: None,
                    running: None,
                }
            })
            .collect(),
    ))
}

fn read_proc(file: &str, text: &str) -> Result<End, ReadError> {
    let bad = |line: usize, why: String| ReadError::Bad {
        file: file.into(),
        line,
        why,
    };
    let mut mode = None;
    let (mut hash, mut lacp_active, mut fast, mut min_links) = (None, true, false, 0u32);
    let mut members: Vec<HostPort> = Vec::new();
    let mut mode_line = 1;
    let mut system_mac: Option<(String, usize)> = None;
    let mut perm: Vec<(String, String)> = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let Some((k, v)) = l.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        match k {
            "Bonding Mode" => {
                mode_line = i + 1;
                mode = Some(match v {
                    v if v.contains("802.3ad") => HostMode::Lacp {
                        active: true,
                        fast: false,
                    },
                    v if v.contains("round-robin") => HostMode::RoundRobin,
                    v if v.contains("active-backup") => HostMode::ActiveBackup,
                    v if v.contains("xor") => HostMode::Static,
                    v if v.contains("broadcast") => HostMode::Broadcast,
                    v if v.contains("transmit load balancing")
                        || v.contains("adaptive load balancing") =>
                    {
                        HostMode::NoChannel
                    }
                    _ => return Err(bad(i + 1, format!("unknown Bonding Mode {v:?}"))),
                })
            }
            "Transmit Hash Policy" => hash = v.split_whitespace().next().map(str::to_string),
            "LACP active" => lacp_active = v != "off",
            "LACP rate" => fast = v == "fast",
            "Min links" => min_links = v.parse().unwrap_or(0),
            "Slave Interface" => members.push(HostPort::named(v)),
            "System MAC address" => system_mac = Some((v.to_ascii_lowercase(), i + 1)),
            "Permanent HW addr" => {
                if let Some(m) = members.last() {
                    perm.push((m.name.clone(), v.to_ascii_lowercase()));
                }
            }
            "Speed" => {
                if let Some(m) = members.last_mut() {
                    m.speed = v.split_whitespace().next().and_then(|n| n.parse().ok());
                }
            }
            // `Unknown` when the link is down: no duplex to compare.
            "Duplex" if v != "Unknown" => {
                if let Some(m) = members.last_mut() {
                    m.duplex = Some(v.to_string());
                }
            }
            _ => {}
        }
    }
    let mut mode = mode.ok_or_else(|| bad(1, "no Bonding Mode line".into()))?;
    if let HostMode::Lacp { .. } = mode {
        mode = HostMode::Lacp {
            active: lacp_active,
            fast,
        };
    }
    // `lagkit status` names its bond; the kernel's file is named after it
    // (a copy such as `srv1-bond0.txt` by its stem).
    let path = std::path::Path::new(file);
    let bond = text
        .lines()
        .find_map(|l| l.strip_prefix("Bond: "))
        .map(str::trim)
        .or_else(|| {
            if path.extension().is_some() {
                path.file_stem()?.to_str()
            } else {
                path.file_name()?.to_str()
            }
        })
        .unwrap_or("bond")
        .to_string();
    Ok(Host {
        bond,
        loc: Loc {
            file: file.into(),
            line: Some(mode_line),
        },
        hash: matches!(mode, HostMode::Lacp { .. } | HostMode::Static)
            .then(|| hash.unwrap_or_else(|| "layer2".into())),
        unused_hash: None,
        mode,
        mtu: None,
        members,
        min_links,
        max_bundle: None,
        // The kernel shows fail_over_mac for active-backup only, and an
        // 802.3ad bond's system MAC (its own MAC unless ad_actor_system is
        // set); equal to a member's permanent address, the bond took it
        // from the member enslaved first.
        mac: system_mac.and_then(|(mac, line)| {
            let (m, _) = perm.iter().find(|(_, p)| *p == mac)?;
            Some((
                MacSource::Member(m.clone()),
                Loc {
                    file: file.into(),
                    line: Some(line),
                },
            ))
        }),
        fail_over_mac: None,
        running: crate::running::from_proc(file, text),
    })
    .map(|h| End::Hosts(vec![h]))
}

/// Open vSwitch's `ovs-appctl bond/show` and/or `lacp/show` (one or both,
/// concatenated): each bond as a channel whose members are its ports.
fn read_ovs(file: &str, text: &str) -> Vec<Channel> {
    use lagkit_ios::{At, ChannelGroup};
    struct Bond {
        name: String,
        line: usize,
        mode: Option<(String, usize)>,
        lacp: Option<ChannelMode>,
        fast: bool,
        members: Vec<(String, usize)>,
        /// The members' names, to skip a repeated one without a search.
        named: HashSet<String>,
        /// When its header was last seen: bonds are listed in that order.
        seen: usize,
    }
    // Maps, not searches per line: output of thousands of ports stays
    // linear.
    let mut bonds: Vec<Bond> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut current: Option<usize> = None;
    for (i, l) in text.lines().enumerate() {
        let line = i + 1;
        let t = l.trim();
        if let Some(name) = t
            .strip_prefix("---- ")
            .and_then(|r| r.strip_suffix(" ----"))
        {
            let k = *index.entry(name.to_string()).or_insert_with(|| {
                bonds.push(Bond {
                    name: name.to_string(),
                    line,
                    mode: None,
                    lacp: None,
                    fast: false,
                    members: Vec::new(),
                    named: HashSet::new(),
                    seen: 0,
                });
                bonds.len() - 1
            });
            bonds[k].seen = line;
            current = Some(k);
            continue;
        }
        let Some(b) = current.map(|k| &mut bonds[k]) else {
            continue;
        };
        let (k, v) = t
            .split_once(':')
            .map_or((t, ""), |(k, v)| (k.trim(), v.trim()));
        match k {
            "bond_mode" => b.mode = Some((v.to_string(), line)),
            "lacp_status" if v == "off" => b.lacp = Some(ChannelMode::On),
            "status" if v.contains("passive") => b.lacp = Some(ChannelMode::Passive),
            "status" if v.contains("active") => b.lacp = Some(ChannelMode::Active),
            "lacp_time" => b.fast = v == "fast",
            "member" => {
                // `member s1: enabled` (bond/show) or `member: s1: current` (lacp/show).
                let name = v.split(':').next().unwrap_or("").trim();
                if !name.is_empty() && b.named.insert(name.to_string()) {
                    b.members.push((name.to_string(), line));
                }
            }
            _ if k.starts_with("member ") => {
                let name = k["member ".len()..].trim();
                if b.named.insert(name.to_string()) {
                    b.members.push((name.to_string(), line));
                }
            }
            _ => {}
        }
    }
    bonds.sort_by_key(|b| b.seen);
    let datapaths = vsctl_datapaths(text);
    let userspace_tso = text
        .lines()
        .any(|l| l.contains("userspace-tso-enable") && l.contains("true"));
    bonds
        .into_iter()
        .enumerate()
        .map(|(i, b)| {
            let mode = b.lacp.unwrap_or(ChannelMode::On);
            let datapath = datapaths
                .iter()
                .find(|(port, _, _)| *port == b.name)
                .map(|(_, dp, line)| (dp.clone(), *line));
            Channel {
                switch: format!("Open vSwitch bond {}", b.name),
                file: file.into(),
                number: i as u32 + 1,
                ports: b
                    .members
                    .iter()
                    .map(|(name, line)| Interface {
                        name: name.clone(),
                        line: *line,
                        channel_group: Some(At {
                            value: ChannelGroup {
                                number: i as u32 + 1,
                                mode,
                            },
                            line: b.line,
                        }),
                        lacp_rate_fast: (mode != ChannelMode::On).then_some(At {
                            value: b.fast,
                            line: b.line,
                        }),
                        // OVS takes its ports' MTU from the interfaces, not from its bond.
                        mtu: None,
                        ..Interface::default()
                    })
                    .collect(),
                port_channel: None,
                load_balance: b.mode,
                default_mtu: None,
                datapath,
                userspace_tso,
            }
        })
        .collect()
}

/// `ovs-vsctl show`: (port, its bridge's `datapath_type`, that line) for
/// every port of a bridge that shows one (OVS prints it only when it is not
/// the default, the kernel's `system`).
fn vsctl_datapaths(text: &str) -> Vec<(String, String, usize)> {
    let unquote = |s: &str| s.trim().trim_matches('"').to_string();
    let mut bridge: Option<(String, usize)> = None;
    let mut ports: Vec<String> = Vec::new();
    let mut out = Vec::new();
    let mut flush = |bridge: &Option<(String, usize)>, ports: &mut Vec<String>| {
        if let Some((dp, line)) = bridge {
            out.extend(ports.drain(..).map(|p| (p, dp.clone(), *line)));
        }
        ports.clear();
    };
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.starts_with("Bridge ") || t.starts_with("---- ") {
            flush(&bridge, &mut ports);
            bridge = t
                .starts_with("Bridge ")
                .then(|| ("system".to_string(), i + 1));
        } else if let Some(dp) = t.strip_prefix("datapath_type:") {
            if let Some(b) = bridge.as_mut() {
                *b = (unquote(dp), i + 1);
            }
        } else if let Some(p) = t.strip_prefix("Port ") {
            if bridge.is_some() {
                ports.push(unquote(p));
            }
        }
    }
    flush(&bridge, &mut ports);
    out.retain(|(_, dp, _)| dp != "system");
    out
}

fn read_ios(file: &str, text: &str) -> Result<(End, Vec<lagkit_ios::Unread>), ReadError> {
    let cfg = lagkit_ios::parse(text).map_err(|e| ReadError::Bad {
        file: file.into(),
        line: e.line,
        why: e.why,
    })?;
    let switch = cfg.hostname.clone().unwrap_or_else(|| file.to_string());
    let channels = cfg
        .channel_groups()
        .into_iter()
        .map(|(n, g)| Channel {
            switch: switch.clone(),
            file: file.into(),
            number: n,
            ports: g.members.into_iter().cloned().collect(),
            port_channel: g.port_channel.cloned(),
            load_balance: cfg.load_balance.as_ref().map(|l| (l.value.clone(), l.line)),
            default_mtu: Some(1500),
            datapath: None,
            userspace_tso: false,
        })
        .collect();
    let unchannelled = cfg
        .interfaces
        .iter()
        .filter(|i| i.port_channel().is_none() && i.channel_group.is_none())
        .cloned()
        .collect();
    Ok((
        End::Switch(Switch {
            file: file.into(),
            channels,
            unchannelled,
        }),
        cfg.unread,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Open vSwitch output: a bond named again (bond/show, then lacp/show)
    /// is one bond, listed where it was last named, its members once each;
    /// 100,000 members read in linear time (a search per member was
    /// quadratic: 40,000 took 1.7 s, 100,000 about 10 s).
    #[test]
    fn ovs_bonds_named_again_and_many_members() {
        let text = "---- a ----\nbond_mode: balance-tcp\nmember p1: enabled\n\
                    ---- b ----\nmember q1: enabled\n\
                    ---- a ----\nmember: p1: current\nmember: p2: current\n";
        let ch = read_ovs("o", text);
        let names: Vec<&str> = ch.iter().map(|c| c.switch.as_str()).collect();
        assert_eq!(names, ["Open vSwitch bond b", "Open vSwitch bond a"]);
        let ports: Vec<&str> = ch[1].ports.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(ports, ["p1", "p2"]);
        let mut big = String::from("---- bond0 ----\nbond_mode: balance-tcp\n");
        for i in 0..100_000 {
            big.push_str(&format!("member p{i}: enabled\n"));
        }
        let t = std::time::Instant::now();
        let ch = read_ovs("o", &big);
        assert_eq!(ch[0].ports.len(), 100_000);
        assert!(
            t.elapsed() < std::time::Duration::from_secs(5),
            "100,000 members took {:?}: is reading quadratic again?",
            t.elapsed()
        );
    }
}
