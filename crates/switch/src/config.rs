//! A switch from the IOS subset the seeds print: interfaces mapped to the
//! switch's ports, their VLANs, MTUs and shutdown state, the channel groups
//! and the port-channel interfaces, `port-channel load-balance` and
//! `port-channel hash-distribution`.
//!
//! What Cisco refuses in the text itself (a load-balance method it does
//! not have, one channel group whose ports speak different protocols,
//! `lacp max-bundle` on a channel without LACP) the shared reader,
//! [`lagkit_ios::parse`], refuses, so `lagkit check` refuses the same
//! text; this adds only what depends on the switch's ports: an interface
//! that is not one of them. What Cisco suspends (flag `s`), this suspends
//! with the reason: a member whose MTU, VLAN or trunk setting differs from
//! its port-channel interface's. Lines the reader did not use are kept in
//! [`SwitchConfig::unread`] for the caller to report.

use crate::bridge::{Bridge, PortConfig};
use crate::channel::Distribution;
use crate::vlan::{PortMode, VlanSet, DEFAULT_VLAN};
use crate::{ChannelId, PortId};
use lagkit_hash::Policy;
use lagkit_ios::{ChannelMode, Interface, Unread};
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// The Catalyst methods `port-channel load-balance` takes.
pub const METHODS: &str = "src-mac, dst-mac, src-dst-mac, src-ip, dst-ip, src-dst-ip, src-port, dst-port, src-dst-port, src-dst-mixed-ip-port";

/// The method a Catalyst 6500 uses when none is configured.
pub const DEFAULT_METHOD: &str = "src-dst-ip";

/// A configuration that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The line (1-based; 0 when the whole file is meant).
    pub line: usize,
    /// What is wrong.
    pub why: String,
    /// What to change.
    pub fix: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}\n  fix: {}", self.line, self.why, self.fix)
    }
}

impl std::error::Error for ConfigError {}

/// One channel group as configured (its control plane's settings).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelSpec {
    /// `channel-group N`.
    pub id: ChannelId,
    /// Its mode (the first member's; all members speak the same protocol).
    pub mode: ChannelMode,
    /// Member ports and each one's mode (active and passive may mix).
    pub members: Vec<(PortId, ChannelMode)>,
    /// `lacp rate fast` on a member.
    pub lacp_fast: bool,
    /// `lacp max-bundle N` on the port-channel (LACP: at most N members
    /// carry traffic, the others stand by, Cisco's flag `H`).
    pub max_bundle: Option<usize>,
    /// `port-channel min-links N` on the port-channel (LACP: the channel
    /// carries nothing with fewer members).
    pub min_links: usize,
    /// Where the group was first configured.
    pub line: usize,
}

/// A member kept out of its channel, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suspended {
    /// The port.
    pub port: PortId,
    /// Cisco's reason, in words.
    pub why: String,
}

/// A switch ready to run.
#[derive(Clone, Debug)]
pub struct SwitchConfig {
    /// `hostname`.
    pub hostname: Option<String>,
    /// The forwarding core, its ports and channels (none bundled yet).
    pub bridge: Bridge,
    /// The channel groups.
    pub channels: Vec<ChannelSpec>,
    /// Members that may not bundle.
    pub suspended: Vec<Suspended>,
    /// `port-channel hash-distribution`.
    pub distribution: Distribution,
    /// The load-balance method's name.
    pub method: String,
    /// Lines of the configuration the reader did not use (well-known ones
    /// and suspect ones, see [`Unread::is_warning`]).
    pub unread: Vec<Unread>,
    /// The configuration as read: what `show running-config` prints of
    /// settings the switch does not run itself (speed, port priorities).
    pub ios: lagkit_ios::Config,
}

/// A port's bandwidth in bits per second, what a `storm-control ... level`
/// percentage is of: its `speed` when that is a number (Mb/s, as IOS
/// writes it), else what its interface type runs at (GigabitEthernet 1
/// Gb/s, TenGigabitEthernet 10 Gb/s, ...; 1 Gb/s for a name lagkit does
/// not know).
pub fn port_bps(name: &str, speed: Option<&str>) -> u64 {
    if let Some(mbps) = speed.and_then(|s| s.parse::<u64>().ok()) {
        return mbps.saturating_mul(1_000_000);
    }
    const TYPES: [(&str, u64); 8] = [
        ("FastEthernet", 100),
        ("GigabitEthernet", 1_000),
        ("TwoGigabitEthernet", 2_500),
        ("FiveGigabitEthernet", 5_000),
        ("TenGigabitEthernet", 10_000),
        ("TwentyFiveGigE", 25_000),
        ("FortyGigabitEthernet", 40_000),
        ("HundredGigE", 100_000),
    ];
    let mbps = TYPES
        .iter()
        .filter(|(t, _)| name.starts_with(t))
        .max_by_key(|(t, _)| t.len())
        .map_or(1_000, |(_, m)| *m);
    mbps * 1_000_000
}

pub(crate) fn mode_of(i: &Interface) -> Result<PortMode, ConfigError> {
    let trunk = i.trunk.as_ref().is_some_and(|t| t.value);
    if !trunk {
        return Ok(PortMode::Access {
            vlan: i.access_vlan.as_ref().map_or(DEFAULT_VLAN, |v| v.value),
        });
    }
    let allowed = match &i.trunk_allowed {
        Some(a) => VlanSet::parse(&a.value).map_err(|why| ConfigError {
            line: a.line,
            why: format!("{}: switchport trunk allowed vlan: {why}", i.name),
            fix: "list VLANs 1-4094, e.g. 1-10,20".into(),
        })?,
        None => VlanSet::all(),
    };
    Ok(PortMode::Trunk {
        native: i.trunk_native.as_ref().map_or(DEFAULT_VLAN, |v| v.value),
        allowed,
    })
}

/// Reads `text` for a switch whose ports are `ports`: (interface name as
/// the configuration writes it, the device it drives), in port order.
pub fn from_ios(text: &str, ports: &[(String, String)]) -> Result<SwitchConfig, ConfigError> {
    let cfg = lagkit_ios::parse(text).map_err(|e| ConfigError {
        line: e.line,
        why: e.why,
        fix: "write the line in the IOS subset lagkit reads (see `lagkit switch --help`)".into(),
    })?;
    // The reader refused methods Catalysts lack; each one it takes is a
    // hash policy (a test holds the two lists together).
    let method = cfg
        .load_balance
        .as_ref()
        .map_or(DEFAULT_METHOD.to_string(), |m| m.value.to_ascii_lowercase());
    let policy: Policy = format!("cisco:{method}").parse().map_err(|_| ConfigError {
        line: cfg.load_balance.as_ref().map_or(0, |m| m.line),
        why: format!("port-channel load-balance {method}: not a Catalyst method"),
        fix: format!("use one of {METHODS}"),
    })?;
    let distribution = match cfg.hash_distribution.as_ref().map(|h| h.value.as_str()) {
        Some("adaptive") => Distribution::Adaptive,
        _ => Distribution::Fixed,
    };
    // Canonical name -> port.
    let mut by_name: BTreeMap<String, PortId> = BTreeMap::new();
    for (i, (name, device)) in ports.iter().enumerate() {
        let canon = lagkit_ios::canonical(name).map_err(|why| ConfigError {
            line: 0,
            why: format!("port {name} (device {device}): {why}"),
            fix: "name ports as IOS does, e.g. GigabitEthernet8/4=veth0".into(),
        })?;
        if by_name.insert(canon.clone(), PortId(i)).is_some() {
            return Err(ConfigError {
                line: 0,
                why: format!("port {canon} is mapped twice"),
                fix: "map each interface to one device".into(),
            });
        }
    }
    let known: Vec<&str> = by_name.keys().map(String::as_str).collect();
    let mut port_cfg: Vec<PortConfig> = ports
        .iter()
        .map(|(name, _)| PortConfig::new(&lagkit_ios::canonical(name).unwrap_or_default()))
        .collect();
    let mut groups: BTreeMap<u32, ChannelSpec> = BTreeMap::new();
    for i in cfg.interfaces.iter().filter(|i| i.port_channel().is_none()) {
        let Some(&p) = by_name.get(&i.name) else {
            return Err(ConfigError {
                line: i.line,
                why: format!(
                    "interface {} is not one of this switch's ports ({})",
                    i.name,
                    known.join(", ")
                ),
                fix: format!("map it to a device (--port {}=DEVICE) or remove it", i.name),
            });
        };
        let pc = &mut port_cfg[p.0];
        pc.mode = mode_of(i)?;
        pc.mtu = i.mtu.as_ref().map_or(1500, |m| m.value);
        pc.enabled = !i.shutdown.as_ref().is_some_and(|s| s.value);
        if let Some(g) = &i.channel_group {
            let id = ChannelId(g.value.number);
            let spec = groups.entry(g.value.number).or_insert_with(|| ChannelSpec {
                id,
                mode: g.value.mode,
                members: Vec::new(),
                lacp_fast: false,
                max_bundle: None,
                min_links: 0,
                line: g.line,
            });
            spec.members.push((p, g.value.mode));
            spec.lacp_fast |= i.lacp_rate_fast.as_ref().is_some_and(|r| r.value);
        }
    }
    // One pass for the port-channels and the interfaces by name: a search
    // per channel or per member would be quadratic in the configuration.
    let channel_groups = cfg.channel_groups();
    let by_iface: HashMap<&str, &Interface> = cfg
        .interfaces
        .iter()
        .map(|i| (i.name.as_str(), i))
        .collect();
    let mut bridge = Bridge::new(policy);
    for pc in port_cfg.iter().cloned() {
        bridge.add_port(pc);
    }
    // Storm control: a port's own lines, else (a member) its
    // port-channel's, as IOS applies a port-channel's to its members.
    for (p, pc) in port_cfg.iter().enumerate() {
        let own = by_iface.get(pc.name.as_str()).copied();
        let po = own
            .and_then(|i| i.channel_group.as_ref())
            .and_then(|g| channel_groups.get(&g.value.number))
            .and_then(|g| g.port_channel);
        let storm = match own.map(|i| i.storm_control) {
            Some(s) if s.any() => s,
            _ => po.map(|i| i.storm_control).unwrap_or_default(),
        };
        if storm.any() {
            let speed = own.and_then(|i| i.speed.as_ref()).map(|s| s.value.as_str());
            bridge.set_storm_control(PortId(p), &storm, port_bps(&pc.name, speed));
        }
    }
    let mut suspended = Vec::new();
    for spec in groups.values_mut() {
        let members: Vec<PortId> = spec.members.iter().map(|m| m.0).collect();
        bridge
            .add_channel(spec.id, members.clone(), distribution)
            .map_err(|why| ConfigError {
                line: spec.line,
                why: why.to_string(),
                fix: "put each port in one channel group".into(),
            })?;
        // The port-channel interface's settings are the channel's; a
        // member set otherwise is suspended, as Cisco does.
        let Some(po) = channel_groups.get(&spec.id.0).and_then(|g| g.port_channel) else {
            continue;
        };
        spec.max_bundle = po.lacp_max_bundle.as_ref().map(|m| usize::from(m.value));
        spec.min_links = po.min_links.as_ref().map_or(0, |m| usize::from(m.value));
        let po_mtu = po.mtu.as_ref().map_or(1500, |m| m.value);
        let po_mode = mode_of(po)?;
        for p in members {
            let m = &port_cfg[p.0];
            let mut why = Vec::new();
            if m.mtu != po_mtu {
                why.push(format!(
                    "its MTU {} differs from Port-channel{}'s {}",
                    m.mtu, spec.id.0, po_mtu
                ));
            }
            let member_iface = by_iface.get(m.name.as_str()).copied();
            let speed = |i: Option<&lagkit_ios::Interface>| {
                i.and_then(|i| i.speed.as_ref())
                    .map(|s| s.value.to_ascii_lowercase())
            };
            let (ms, ps) = (speed(member_iface), speed(Some(po)));
            if ms.is_some() && ps.is_some() && ms != ps {
                why.push(format!(
                    "its speed {} differs from Port-channel{}'s {}",
                    ms.unwrap_or_default(),
                    spec.id.0,
                    ps.unwrap_or_default()
                ));
            }
            let sets_vlan =
                member_iface.is_some_and(|i| i.access_vlan.is_some() || i.trunk.is_some());
            if m.mode != po_mode {
                if sets_vlan {
                    why.push(format!(
                        "its VLAN setting ({:?}) differs from Port-channel{}'s ({:?})",
                        m.mode, spec.id.0, po_mode
                    ));
                } else {
                    // Not set on the member: it takes the port-channel's.
                    if let Some(port) = bridge.port_config_mut(p) {
                        port.mode = po_mode.clone();
                    }
                }
            }
            if !why.is_empty() {
                suspended.push(Suspended {
                    port: p,
                    why: format!("{}: {}", m.name, why.join("; ")),
                });
            }
        }
    }
    Ok(SwitchConfig {
        hostname: cfg.hostname.clone(),
        bridge,
        channels: groups.into_values().collect(),
        suspended,
        distribution,
        method,
        unread: cfg.unread.clone(),
        ios: cfg,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ports(names: &[&str]) -> Vec<(String, String)> {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.to_string(), format!("veth{i}")))
            .collect()
    }

    const RUN18: &str = include_str!("../../../examples/check/run18-switch.cfg");

    #[test]
    fn ibm_run_18_suspends_the_jumbo_members() {
        let c = from_ios(RUN18, &ports(&["gi8/4", "gi8/5", "gi1/1"])).unwrap();
        assert_eq!(c.method, "src-dst-port");
        assert_eq!(c.channels.len(), 1);
        let ch = &c.channels[0];
        assert_eq!((ch.id, ch.mode), (ChannelId(3), ChannelMode::Active));
        assert_eq!(ch.members.len(), 2);
        // Ports 9216, the port-channel 1500: both members suspended.
        assert_eq!(c.suspended.len(), 2, "{:?}", c.suspended);
        assert!(c.suspended[0]
            .why
            .contains("MTU 9216 differs from Port-channel3's 1500"));
        // The members take the port-channel's access VLAN 129.
        assert_eq!(
            c.bridge.port(PortId(0)).unwrap().mode,
            PortMode::Access { vlan: 129 }
        );
        assert_eq!(
            c.bridge.port(PortId(2)).unwrap().mode,
            PortMode::Access { vlan: 1 }
        );
        assert_eq!(c.distribution, Distribution::Fixed);
    }

    #[test]
    fn refusals_name_the_line_and_the_fix() {
        let e = from_ios(RUN18, &ports(&["gi8/4"])).unwrap_err();
        assert!(
            e.why
                .contains("GigabitEthernet8/5 is not one of this switch's ports"),
            "{e}"
        );
        assert_eq!(e.line, 4);
        let mixed = "interface gi1/1\n channel-group 1 mode active\ninterface gi1/2\n channel-group 1 mode desirable\n";
        let e = from_ios(mixed, &ports(&["gi1/1", "gi1/2"])).unwrap_err();
        assert_eq!(e.line, 4);
        assert!(e.why.contains("one channel speaks one protocol"), "{e}");
        assert!(e.why.contains("channel-group 1 mode active"), "{e}");
        // Active and passive are both LACP: allowed.
        let lacp = "interface gi1/1\n channel-group 1 mode active\ninterface gi1/2\n channel-group 1 mode passive\n";
        assert!(from_ios(lacp, &ports(&["gi1/1", "gi1/2"])).is_ok());
        let e = from_ios(
            "port-channel load-balance src-dst-vlan\n",
            &ports(&["gi1/1"]),
        )
        .unwrap_err();
        assert!(
            e.why.contains("not a Catalyst method") && e.why.contains("src-dst-mixed-ip-port"),
            "{e}"
        );
        let e = from_ios("mtu 9000\n", &ports(&["gi1/1"])).unwrap_err();
        assert!(e.why.contains("outside any interface"), "{e}");
        let e = from_ios("", &ports(&["gi1/1", "Gi 1/1"])).unwrap_err();
        assert!(e.why.contains("mapped twice"), "{e}");
    }

    #[test]
    fn a_member_whose_speed_differs_from_its_channel_is_suspended() {
        let text = "interface range gi1/1 - 2\n channel-group 5 mode active\ninterface gi1/2\n speed 100\ninterface po5\n speed 1000\n";
        let c = from_ios(text, &ports(&["gi1/1", "gi1/2"])).unwrap();
        assert_eq!(c.suspended.len(), 1, "{:?}", c.suspended);
        assert_eq!(c.suspended[0].port, PortId(1));
        assert!(c.suspended[0]
            .why
            .contains("speed 100 differs from Port-channel5's 1000"));
    }

    #[test]
    fn max_bundle_and_min_links_are_lacp_channel_settings() {
        let text = "interface range gi1/1 - 3\n channel-group 5 mode active\ninterface po5\n lacp max-bundle 2\n port-channel min-links 2\n";
        let c = from_ios(text, &ports(&["gi1/1", "gi1/2", "gi1/3"])).unwrap();
        assert_eq!(
            (c.channels[0].max_bundle, c.channels[0].min_links),
            (Some(2), 2)
        );
        let pagp = text.replace("mode active", "mode desirable");
        let e = from_ios(&pagp, &ports(&["gi1/1", "gi1/2", "gi1/3"])).unwrap_err();
        assert_eq!(e.line, 4);
        assert!(e.why.contains("only LACP applies it"), "{e}");
    }

    #[test]
    fn trunks_shutdown_and_adaptive() {
        let text = "port-channel hash-distribution adaptive\nport-channel load-balance src-mac\ninterface gi1/1\n switchport mode trunk\n switchport trunk allowed vlan 10,20\n shutdown\ninterface gi1/2\n mtu 9216\n";
        let c = from_ios(text, &ports(&["gi1/1", "gi1/2"])).unwrap();
        assert_eq!(c.distribution, Distribution::Adaptive);
        assert_eq!(c.method, "src-mac");
        let p = c.bridge.port(PortId(0)).unwrap();
        assert!(!p.enabled);
        assert!(
            matches!(&p.mode, PortMode::Trunk { native: 1, allowed } if allowed.contains(20) && !allowed.contains(30))
        );
        assert_eq!(c.bridge.port(PortId(1)).unwrap().mtu, 9216);
        assert!(c.channels.is_empty() && c.suspended.is_empty());
    }

    /// Every method the shared reader takes is a hash policy the switch
    /// runs, and `METHODS` (the help text) lists them all.
    #[test]
    fn the_readers_methods_are_the_switchs() {
        for m in lagkit_ios::LOAD_BALANCE_METHODS {
            assert!(format!("cisco:{m}").parse::<Policy>().is_ok(), "{m}");
        }
        assert_eq!(METHODS, lagkit_ios::LOAD_BALANCE_METHODS.join(", "));
        let c = from_ios(
            "interface gi1/1\n chanel-group 1 mode active\n description x\n",
            &ports(&["gi1/1"]),
        )
        .unwrap();
        assert_eq!(c.unread.len(), 2);
        assert_eq!(
            c.unread
                .iter()
                .filter(|u| u.is_warning())
                .map(|u| u.line)
                .collect::<Vec<_>>(),
            vec![2]
        );
    }
}
