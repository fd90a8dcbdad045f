//! `show running-config`: the switch's effective configuration as IOS
//! text, with the defaults a Catalyst prints made explicit (the
//! load-balance method, the LACP system priority, each port's switchport
//! mode, VLANs and MTU, each member's LACP rate and port priority), and
//! each interface's `storm-control` levels as configured.
//!
//! Written from what the switch runs ([`SwitchConfig`]: the bridge's ports,
//! the channel groups) and, for settings the switch keeps only as read
//! (speed, duplex, port priorities, the PAgP learn method, the
//! port-channel interfaces' own lines), from the configuration as parsed.
//! Reading the text back with [`crate::config::from_ios`] gives the same
//! switch: a test holds the round trip.

use crate::config::SwitchConfig;
use crate::vlan::{PortMode, VlanSet};
use crate::PortId;
use lagkit_ios::{ChannelMode, Interface};
use std::fmt::Write;

/// LACP's system priority (lagkit's switch does not change it).
pub const LACP_SYSTEM_PRIORITY: u16 = 32768;
/// LACP's port priority when none is configured.
pub const LACP_PORT_PRIORITY: u16 = 32768;
/// PAgP's port priority when none is configured.
pub const PAGP_PORT_PRIORITY: u16 = 128;

fn vlans(s: &VlanSet) -> String {
    format!("{s:?}")
}

fn switchport(out: &mut String, mode: &PortMode) {
    match mode {
        PortMode::Access { vlan } => {
            let _ = writeln!(out, " switchport access vlan {vlan}");
            out.push_str(" switchport mode access\n");
        }
        PortMode::Trunk { native, allowed } => {
            if *allowed != VlanSet::all() {
                let _ = writeln!(out, " switchport trunk allowed vlan {}", vlans(allowed));
            }
            let _ = writeln!(out, " switchport trunk native vlan {native}");
            out.push_str(" switchport mode trunk\n");
        }
    }
}

fn storm_control(out: &mut String, i: Option<&Interface>) {
    for (class, level) in i.map(|i| i.storm_control).unwrap_or_default().iter() {
        let _ = writeln!(out, " storm-control {} level {level}", class.name());
    }
}

fn speed_duplex(out: &mut String, i: Option<&Interface>) {
    if let Some(s) = i.and_then(|i| i.speed.as_ref()) {
        let _ = writeln!(out, " speed {}", s.value);
    }
    if let Some(d) = i.and_then(|i| i.duplex.as_ref()) {
        let _ = writeln!(out, " duplex {}", d.value);
    }
}

/// The running configuration of `cfg`, as `show running-config` prints it.
pub fn running_config(cfg: &SwitchConfig) -> String {
    let mut s = String::from("Building configuration...\n\n");
    let mut body = String::from("!\n");
    if let Some(h) = &cfg.hostname {
        let _ = writeln!(body, "hostname {h}\n!");
    }
    let _ = writeln!(body, "port-channel load-balance {}", cfg.method);
    if cfg.distribution == crate::Distribution::Adaptive {
        body.push_str("port-channel hash-distribution adaptive\n");
    }
    let _ = writeln!(body, "lacp system-priority {LACP_SYSTEM_PRIORITY}\n!");
    // The port-channel interfaces the configuration has (a channel
    // without one takes its members' settings, as the reader does).
    for spec in &cfg.channels {
        let Some(po) = cfg
            .ios
            .interfaces
            .iter()
            .find(|i| i.port_channel() == Some(spec.id.0))
        else {
            continue;
        };
        let _ = writeln!(body, "interface Port-channel{}", spec.id.0);
        // The reader refused a port-channel whose VLAN lines do not parse.
        if let Ok(mode) = crate::config::mode_of(po) {
            switchport(&mut body, &mode);
        }
        let _ = writeln!(body, " mtu {}", po.mtu.as_ref().map_or(1500, |m| m.value));
        speed_duplex(&mut body, Some(po));
        storm_control(&mut body, Some(po));
        if let Some(m) = spec.max_bundle {
            let _ = writeln!(body, " lacp max-bundle {m}");
        }
        if spec.min_links > 0 {
            let _ = writeln!(body, " port-channel min-links {}", spec.min_links);
        }
        body.push_str(" no shutdown\n!\n");
    }
    for (p, pc) in cfg.bridge.ports() {
        let src = cfg.ios.interfaces.iter().find(|i| i.name == pc.name);
        let _ = writeln!(body, "interface {}", pc.name);
        switchport(&mut body, &pc.mode);
        let _ = writeln!(body, " mtu {}", pc.mtu);
        speed_duplex(&mut body, src);
        storm_control(&mut body, src);
        if let Some((spec, mode)) = member_of(cfg, p) {
            let _ = writeln!(body, " channel-group {} mode {mode}", spec.id.0);
            match mode.protocol() {
                "lacp" => {
                    let rate = if spec.lacp_fast { "fast" } else { "normal" };
                    let _ = writeln!(body, " lacp rate {rate}");
                    let prio = src
                        .and_then(|i| i.lacp_port_priority.as_ref())
                        .map_or(LACP_PORT_PRIORITY, |v| v.value);
                    let _ = writeln!(body, " lacp port-priority {prio}");
                }
                "pagp" => {
                    let prio = src
                        .and_then(|i| i.pagp_port_priority.as_ref())
                        .map_or(PAGP_PORT_PRIORITY, |v| v.value);
                    let _ = writeln!(body, " pagp port-priority {prio}");
                    let learn = src
                        .and_then(|i| i.pagp_learn_method.as_ref())
                        .map_or("aggregation-port", |v| v.value.as_str());
                    let _ = writeln!(body, " pagp learn-method {learn}");
                }
                _ => {}
            }
        }
        body.push_str(if pc.enabled {
            " no shutdown\n!\n"
        } else {
            " shutdown\n!\n"
        });
    }
    body.push_str("end\n");
    let _ = writeln!(s, "Current configuration : {} bytes", body.len());
    s.push_str(&body);
    s
}

fn member_of(cfg: &SwitchConfig, p: PortId) -> Option<(&crate::config::ChannelSpec, ChannelMode)> {
    cfg.channels.iter().find_map(|c| {
        c.members
            .iter()
            .find(|(m, _)| *m == p)
            .map(|(_, mode)| (c, *mode))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::from_ios;

    fn ports(names: &[&str]) -> Vec<(String, String)> {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.to_string(), format!("veth{i}")))
            .collect()
    }

    /// Everything that makes the switch: equal for both configurations.
    fn same_switch(a: &SwitchConfig, b: &SwitchConfig) {
        assert_eq!(a.hostname, b.hostname);
        assert_eq!(a.method, b.method);
        assert_eq!(a.distribution, b.distribution);
        assert_eq!(a.channels.len(), b.channels.len());
        for (x, y) in a.channels.iter().zip(&b.channels) {
            assert_eq!(
                (
                    x.id,
                    x.mode,
                    &x.members,
                    x.lacp_fast,
                    x.max_bundle,
                    x.min_links
                ),
                (
                    y.id,
                    y.mode,
                    &y.members,
                    y.lacp_fast,
                    y.max_bundle,
                    y.min_links
                )
            );
        }
        assert_eq!(a.suspended, b.suspended);
        let pa: Vec<_> = a.bridge.ports().map(|(_, c)| c.clone()).collect();
        let pb: Vec<_> = b.bridge.ports().map(|(_, c)| c.clone()).collect();
        assert_eq!(pa, pb);
        for (p, _) in a.bridge.ports() {
            for class in lagkit_ios::StormClass::ALL {
                let level = |c: &SwitchConfig| c.bridge.storm_meter(p, class).map(|m| m.level());
                assert_eq!(level(a), level(b), "{p:?} {class:?}");
            }
        }
    }

    #[test]
    fn running_config_read_back_is_the_same_switch() {
        let names = [
            "gi1/1", "gi1/2", "gi1/3", "gi1/4", "gi1/5", "gi1/6", "gi1/7", "gi1/8",
        ];
        let text = "hostname core1\nport-channel load-balance src-dst-mac\nport-channel hash-distribution adaptive\n\
interface range gi1/1 - 2\n channel-group 1 mode active\n lacp rate fast\n\
interface gi1/2\n mtu 9216\n lacp port-priority 100\n\
interface Port-channel1\n switchport mode trunk\n switchport trunk allowed vlan 10,20-30\n lacp max-bundle 1\n\
interface range gi1/3 - 4\n channel-group 2 mode desirable non-silent\n pagp port-priority 200\n\
interface gi1/5\n channel-group 3 mode on\n speed 1000\n duplex full\n\
interface gi1/6\n channel-group 3 mode on\n switchport access vlan 7\n\
interface po3\n switchport access vlan 5\n storm-control multicast level bps 10m\n\
interface gi1/7\n channel-group 4 mode passive\n storm-control broadcast level 20.5 10\n storm-control unicast level pps 2k\n\
interface gi1/8\n shutdown\n switchport access vlan 9\n";
        let a = from_ios(text, &ports(&names)).unwrap();
        assert!(!a.suspended.is_empty(), "the lab suspends members");
        // Members take their port-channel's storm control.
        let class = lagkit_ios::StormClass::Multicast;
        assert!(a.bridge.storm_meter(PortId(5), class).is_some());
        assert!(a
            .bridge
            .storm_meter(PortId(6), lagkit_ios::StormClass::Unicast)
            .is_some());
        let run = running_config(&a);
        for want in [
            "port-channel load-balance src-dst-mac\n",
            "lacp system-priority 32768\n",
            "interface GigabitEthernet1/1\n switchport trunk allowed vlan 10,20-30\n switchport trunk native vlan 1\n switchport mode trunk\n mtu 1500\n channel-group 1 mode active\n lacp rate fast\n lacp port-priority 32768\n no shutdown\n",
            " lacp port-priority 100\n",
            " channel-group 2 mode desirable non-silent\n pagp port-priority 200\n pagp learn-method aggregation-port\n",
            " speed 1000\n duplex full\n channel-group 3 mode on\n",
            "interface GigabitEthernet1/8\n switchport access vlan 9\n switchport mode access\n mtu 1500\n shutdown\n",
            "interface Port-channel1\n switchport trunk allowed vlan 10,20-30\n",
            " lacp max-bundle 1\n",
            " switchport mode access\n mtu 1500\n storm-control multicast level bps 10m\n no shutdown\n",
            " mtu 1500\n storm-control broadcast level 20.50 10.00\n storm-control unicast level pps 2k\n channel-group 4 mode passive\n",
            "\nend\n",
        ] {
            assert!(run.contains(want), "{want:?} missing from\n{run}");
        }
        let b = from_ios(&run, &ports(&names)).unwrap();
        same_switch(&a, &b);
        assert!(b.unread.iter().all(|u| !u.is_warning()), "{:?}", b.unread);
        // And once more: the text is a fixed point.
        assert_eq!(running_config(&b), run);
    }

    /// The fuzz corpus's configurations (the inputs with the top bit set)
    /// each print a running-config that reads back (`fuzz_one` asserts it).
    #[test]
    fn the_fuzz_corpus_configurations_round_trip() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/switch_frame");
        let Ok(rd) = std::fs::read_dir(&dir) else {
            return;
        };
        let mut n = 0;
        for e in rd.flatten() {
            let data = std::fs::read(e.path()).unwrap();
            // Frame inputs too: their invariants hold with the fuzz
            // switch's storm control dropping.
            crate::fuzz_one(&data);
            if data.first().is_some_and(|b| b & 0x80 != 0) {
                n += 1;
            }
        }
        assert!(n > 0, "no configuration in {}", dir.display());
    }
}
