//! The facts of one end, whatever dialect they were written in.

use crate::Loc;
use lagkit_bondcfg::{BondConfig, LacpRate, Mode};
use lagkit_ios::{ChannelMode, Interface};
use serde::Serialize;

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
    /// Its MTU (aggregate and interface), where the configuration sets it.
    pub mtu: Option<(u32, Loc)>,
    /// Members, with speed and duplex when the input tells them.
    pub members: Vec<HostPort>,
    /// `min_links`.
    pub min_links: u32,
    /// `max_bundle`.
    pub max_bundle: Option<u16>,
}

/// Members known by name only.
pub fn ports(names: &[String]) -> Vec<HostPort> {
    names
        .iter()
        .map(|m| HostPort {
            name: m.clone(),
            speed: None,
            duplex: None,
        })
        .collect()
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

/// What one input file held.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum End {
    /// Host bonds.
    Hosts(Vec<Host>),
    /// A switch's channels.
    Switch(Vec<Channel>),
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
pub const DIALECTS: &str = "a lagkit bond configuration (TOML), Linux's /proc/net/bonding/bondX, ifupdown's interfaces, systemd-networkd .netdev/.network, NetworkManager keyfiles, teamd JSON, AIX `lsattr -El entX`, a Cisco IOS configuration (running-config or console commands)";

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
    if text.contains('\0') {
        return Err(ReadError::Dialect {
            file: file.into(),
            why: "not a text file".into(),
        });
    }
    if text.lines().any(|l| l.starts_with("Bonding Mode:")) {
        return read_proc(file, text);
    }
    if let Some(dialect) = crate::dialects::sniff(text) {
        let bonds = dialect(file, text)?;
        return bonds
            .iter()
            .map(|b| b.host(file))
            .collect::<Result<Vec<_>, _>>()
            .map(End::Hosts);
    }
    if text
        .lines()
        .any(|l| l.starts_with("---- ") && l.trim_end().ends_with(" ----"))
        && (text.contains("bond_mode:") || text.contains("lacp_time:") || text.contains("sys_id:"))
    {
        return Ok(End::Switch(read_ovs(file, text)));
    }
    let ios_like = text.lines().any(|l| {
        let t = l.trim_start().to_ascii_lowercase();
        t.starts_with("interface ")
            || t.starts_with("channel-group ")
            || t.starts_with("port-channel ")
    });
    if ios_like {
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
        return read_lagkit(file, text);
    }
    Err(ReadError::Dialect {
        file: file.into(),
        why: format!("not a dialect lagkit reads; it reads {DIALECTS}"),
    })
}

fn host_mode(b: &BondConfig) -> HostMode {
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
                    // lagkit sets the members' MTU to the bond's: one place.
                    mtu: Some((u32::from(b.mtu), loc(toml_line(text, "mtu")))),
                    members: ports(&b.members),
                    min_links: b.min_links,
                    max_bundle: b.max_bundle,
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
            "Slave Interface" => members.push(HostPort {
                name: v.to_string(),
                speed: None,
                duplex: None,
            }),
            "Speed" => {
                if let Some(m) = members.last_mut() {
                    m.speed = v.split_whitespace().next().and_then(|n| n.parse().ok());
                }
            }
            "Duplex" => {
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
    let bond = std::path::Path::new(file)
        .file_name()
        .map_or("bond", |n| n.to_str().unwrap_or("bond"))
        .to_string();
    Ok(Host {
        bond,
        loc: Loc {
            file: file.into(),
            line: Some(mode_line),
        },
        hash: matches!(mode, HostMode::Lacp { .. } | HostMode::Static)
            .then(|| hash.unwrap_or_else(|| "layer2".into())),
        mode,
        mtu: None,
        members,
        min_links,
        max_bundle: None,
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
    }
    let mut bonds: Vec<Bond> = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let line = i + 1;
        let t = l.trim();
        if let Some(name) = t
            .strip_prefix("---- ")
            .and_then(|r| r.strip_suffix(" ----"))
        {
            if !bonds.iter().any(|b| b.name == name) {
                bonds.push(Bond {
                    name: name.to_string(),
                    line,
                    mode: None,
                    lacp: None,
                    fast: false,
                    members: Vec::new(),
                });
            }
            let k = bonds.iter().position(|b| b.name == name).unwrap_or(0);
            let b = bonds.remove(k);
            bonds.push(b);
            continue;
        }
        let Some(b) = bonds.last_mut() else { continue };
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
                if !name.is_empty() && !b.members.iter().any(|m| m.0 == name) {
                    b.members.push((name.to_string(), line));
                }
            }
            _ if k.starts_with("member ") => {
                let name = k["member ".len()..].trim();
                if !b.members.iter().any(|m| m.0 == name) {
                    b.members.push((name.to_string(), line));
                }
            }
            _ => {}
        }
    }
    bonds
        .into_iter()
        .enumerate()
        .map(|(i, b)| {
            let mode = b.lacp.unwrap_or(ChannelMode::On);
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
            }
        })
        .collect()
}

fn read_ios(file: &str, text: &str) -> Result<End, ReadError> {
    let cfg = lagkit_ios::parse(text).map_err(|e| ReadError::Bad {
        file: file.into(),
        line: e.line,
        why: e.why,
    })?;
    let switch = cfg.hostname.clone().unwrap_or_else(|| file.to_string());
    let channels = cfg
        .channels()
        .into_iter()
        .map(|n| Channel {
            switch: switch.clone(),
            file: file.into(),
            number: n,
            ports: cfg.members(n).into_iter().cloned().collect(),
            port_channel: cfg
                .interfaces
                .iter()
                .find(|i| i.port_channel() == Some(n))
                .cloned(),
            load_balance: cfg.load_balance.as_ref().map(|l| (l.value.clone(), l.line)),
            default_mtu: Some(1500),
        })
        .collect();
    Ok(End::Switch(channels))
}
