//! lagkit's own switch as a lab switch (`kind = "lagkit"`): the Cisco IOS
//! configuration the lab writes for it from the topology, the `--port`
//! arguments that map its interfaces to the switch's veth ends, and what
//! the lab reads back from `lagkit switch show ... --json` (the channels'
//! members and flags, the per-port counters).
//!
//! The topology says what a channel means (protocol, load balance); IOS
//! says it as a Catalyst would: `channel-group N mode active|passive|on`
//! with `lacp rate fast` (the lab's OVS channels use fast LACP too), or
//! `mode desirable|auto [non-silent]` for PAgP (silent is IOS's default), one
//! global `port-channel load-balance` ([`LoadBalance::cisco_method`]), and
//! each port's `mtu` the switch end's. Port `pK` is `GigabitEthernet1/K`.
//! The daemon itself is started, tracked and stopped by [`crate::lab`],
//! like a host's bond.

use crate::sys::{self, QueryError};
use crate::topology::{LoadBalance, Protocol, Switch, Topology};
use std::fmt::Write as _;
use std::path::PathBuf;

/// The IOS interface of switch port `pK`: `GigabitEthernet1/K`.
pub fn interface_of(port: &str) -> String {
    format!("GigabitEthernet1/{}", port.trim_start_matches('p'))
}

/// `lagkit switch`'s arguments after the configuration file: one
/// `--port GigabitEthernet1/K=pK` per port, in port order.
pub fn port_args(sw: &Switch) -> Vec<String> {
    sw.ports
        .iter()
        .flat_map(|p| ["--port".to_string(), format!("{}={p}", interface_of(p))])
        .collect()
}

/// The Catalyst method the switch runs (`src-dst-ip`, IOS's default, when
/// no channel bundles ports).
pub fn method_of(sw: &Switch) -> &'static str {
    sw.load_balance()
        .map_or(LoadBalance::L3.cisco_method(), LoadBalance::cisco_method)
}

/// The IOS configuration of switch `sw` of topology `t`.
pub fn ios_config(t: &Topology, sw: &Switch) -> String {
    let mtu_of = |port: &str| {
        t.ends_on(&sw.name)
            .find(|(e, _)| e.iface == port)
            .map_or(1500, |(e, l)| {
                if l.a.node == e.node && l.a.iface == e.iface {
                    l.mtu[0]
                } else {
                    l.mtu[1]
                }
            })
    };
    let numbers = sw.channel_numbers();
    let mut o = String::new();
    let _ = writeln!(o, "! written by lagkit lab for topology {}", t.name);
    let _ = writeln!(o, "hostname {}", sw.name);
    let _ = writeln!(o, "port-channel load-balance {}", method_of(sw));
    for p in &sw.ports {
        let _ = writeln!(o, "!\ninterface {}", interface_of(p));
        let _ = writeln!(o, " mtu {}", mtu_of(p));
        let channel = sw
            .channels
            .iter()
            .zip(&numbers)
            .find(|(c, _)| c.ports.contains(p));
        if let Some((c, n)) = channel {
            let mode = match c.protocol {
                Protocol::LacpActive => Some("active".to_string()),
                Protocol::LacpPassive => Some("passive".to_string()),
                Protocol::Static => Some("on".to_string()),
                Protocol::None => None,
                p => p.pagp_mode().map(|(m, silent)| {
                    if silent {
                        m.to_string()
                    } else {
                        format!("{m} non-silent")
                    }
                }),
            };
            if let Some(mode) = mode {
                let _ = writeln!(o, " channel-group {n} mode {mode}");
                if c.protocol.is_lacp() {
                    let _ = writeln!(o, " lacp rate fast");
                }
            }
        }
    }
    for (c, n) in sw.channels.iter().zip(&numbers) {
        if c.protocol == Protocol::None {
            continue;
        }
        // The port-channel interface carries its first member's MTU; a
        // member that differs is suspended, as on a Catalyst.
        let first = c.ports.first().map_or(1500, |p| mtu_of(p));
        let _ = writeln!(o, "!\ninterface Port-channel{n}\n mtu {first}");
    }
    o
}

/// The facts of `show etherchannel summary`, `show mac address-table` and
/// `show interfaces counters` are `lagkit-api`'s types, written by the
/// switch and read here.
pub use lagkit_api::switch::{ChannelState, MemberState, PortCounters};
use lagkit_api::switch::{EtherchannelSummary, Forwarding, InterfacesCounters, MacTable};

/// A running `lagkit switch` of a lab, asked through its control socket.
#[derive(Debug, Clone)]
pub struct LagkitSwitch {
    lagkit: PathBuf,
    ns: String,
    name: String,
}

impl LagkitSwitch {
    /// The switch `name` (its `hostname`) in namespace `ns`, asked with
    /// the `lagkit` binary `lagkit`.
    pub fn new(lagkit: PathBuf, ns: &str, name: &str) -> LagkitSwitch {
        LagkitSwitch {
            lagkit,
            ns: ns.to_string(),
            name: name.to_string(),
        }
    }

    /// `lagkit switch show WORDS --json --name NAME` in the namespace,
    /// its facts read as `T`.
    pub fn show<T: serde::de::DeserializeOwned>(&self, words: &[&str]) -> Result<T, QueryError> {
        let lagkit = self.lagkit.to_string_lossy().into_owned();
        let mut args = vec![lagkit.as_str(), "switch", "show"];
        args.extend(words);
        args.extend(["--json", "--name", &self.name]);
        let t = sys::ns_run(&self.ns, &args)?;
        QueryError::read_json(
            &t,
            &format!("lagkit switch show {}", words.join(" ")),
            &format!("switch {}", self.name),
        )
    }

    /// `show etherchannel summary`: each channel's members and flags.
    pub fn channels(&self) -> Result<Vec<ChannelState>, QueryError> {
        let s: EtherchannelSummary = self.show(&["etherchannel", "summary"])?;
        Ok(s.channels)
    }

    /// `show mac address-table`: how many times a MAC address has moved
    /// between ports since the switch started (a host's frames arriving on
    /// two ports that are not one channel).
    pub fn mac_moves(&self) -> Result<u64, QueryError> {
        let t: MacTable = self.show(&["mac", "address-table"])?;
        Ok(t.moves)
    }

    /// `show platform forwarding`: the engine that forwards, and why.
    pub fn forwarding(&self) -> Result<Forwarding, QueryError> {
        self.show(&["platform", "forwarding"])
    }

    /// `show interfaces counters`: every port's counters.
    pub fn counters(&self) -> Result<Vec<PortCounters>, QueryError> {
        let c: InterfacesCounters = self.show(&["interfaces", "counters"])?;
        Ok(c.ports)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOPO: &str = r#"name = "t"
[[host]]
name = "h1"
address = "10.0.0.1/24"
bond = { mode = "802.3ad", lacp_rate = "fast" }
[[host]]
name = "h2"
address = "10.0.0.2/24"
bond = { mode = "balance-xor" }
[[host]]
name = "h3"
address = "10.0.0.3/24"
[[switch]]
name = "c6513"
kind = "lagkit"
[[switch.channel]]
name = "po3"
host = "h1"
protocol = "lacp-passive"
load_balance = "l4"
[[switch.channel]]
name = "po4"
host = "h2"
protocol = "static"
load_balance = "l4"
[[link]]
between = ["h1", "c6513"]
count = 2
mtu = [9000, 9000]
[[link]]
between = ["c6513", "h2"]
count = 2
mtu = [1500, 9000]
[[link]]
between = ["h3", "c6513"]
"#;

    #[test]
    fn writes_the_channels_modes_method_and_mtus_as_ios() {
        let t = Topology::parse(TOPO, "t.toml", "t").unwrap();
        let sw = &t.switches[0];
        let cfg = ios_config(&t, sw);
        assert!(cfg.contains("hostname c6513\n"), "{cfg}");
        assert!(cfg.contains("port-channel load-balance src-dst-port\n"));
        assert!(cfg.contains(
            "interface GigabitEthernet1/1\n mtu 9000\n channel-group 3 mode passive\n lacp rate fast\n"
        ));
        // The switch's end of the h2 links is the first of `between`.
        assert!(
            cfg.contains("interface GigabitEthernet1/4\n mtu 1500\n channel-group 4 mode on\n!")
        );
        assert!(cfg.contains("interface GigabitEthernet1/5\n mtu 1500\n"));
        assert!(cfg.contains("interface Port-channel3\n mtu 9000\n"));
        assert_eq!(
            port_args(sw)[..4],
            [
                "--port",
                "GigabitEthernet1/1=p1",
                "--port",
                "GigabitEthernet1/2=p2"
            ]
        );
        // What the switch itself reads from it.
        let ports: Vec<(String, String)> = sw
            .ports
            .iter()
            .map(|p| (interface_of(p), p.clone()))
            .collect();
        let c = lagkit_switch::config::from_ios(&cfg, &ports).unwrap();
        assert_eq!(c.method, "src-dst-port");
        assert_eq!(c.channels.len(), 2);
        assert_eq!(c.hostname.as_deref(), Some("c6513"));
        assert!(c.suspended.is_empty(), "{:?}", c.suspended);
    }

    #[test]
    fn writes_pagp_modes_silent_by_default() {
        for (protocol, line) in [
            ("pagp-desirable", " channel-group 3 mode desirable\n"),
            (
                "pagp-desirable-non-silent",
                " channel-group 3 mode desirable non-silent\n",
            ),
            ("pagp-auto", " channel-group 3 mode auto\n"),
            (
                "pagp-auto-non-silent",
                " channel-group 3 mode auto non-silent\n",
            ),
        ] {
            let text = TOPO
                .replace("\"lacp-passive\"", &format!("\"{protocol}\""))
                .replace(
                    "mode = \"802.3ad\", lacp_rate = \"fast\"",
                    "mode = \"balance-xor\", pagp = \"desirable\"",
                );
            let t = Topology::parse(&text, "t.toml", "t").unwrap();
            assert!(t.switches[0].channels[0].protocol.is_pagp());
            let sw = &t.switches[0];
            let cfg = ios_config(&t, sw);
            assert!(cfg.contains(line), "{protocol}: {cfg}");
            assert!(!cfg.contains("lacp rate"), "{cfg}");
            // The host's bond file runs PAgP too.
            let b = t.hosts[0].bond.as_ref().unwrap();
            assert!(b.toml.contains("pagp = \"desirable\""), "{}", b.toml);
            let ports: Vec<(String, String)> = sw
                .ports
                .iter()
                .map(|p| (interface_of(p), p.clone()))
                .collect();
            let c = lagkit_switch::config::from_ios(&cfg, &ports).unwrap();
            assert_eq!(c.channels.len(), 2, "{protocol}");
        }
        // Open vSwitch has no PAgP.
        let e = Topology::parse(
            &TOPO
                .replace("kind = \"lagkit\"", "kind = \"ovs\"")
                .replace("\"lacp-passive\"", "\"pagp-auto\""),
            "t.toml",
            "t",
        )
        .unwrap_err();
        assert!(e.to_string().contains("Open vSwitch has no PAgP"), "{e}");
    }

    #[test]
    fn reads_the_switchs_answers() {
        // As the switch writes them: lagkit-api's types, through JSON.
        let member = |flag: &str, why: &str| MemberState {
            port: Some("GigabitEthernet1/1".into()),
            device: Some("p1".into()),
            mode: "active".into(),
            flag: flag.parse().unwrap(),
            why: why.into(),
            mismatch: None,
        };
        let summary = EtherchannelSummary {
            switch: "sw".into(),
            channels: vec![ChannelState {
                channel: 3,
                protocol: "lacp".into(),
                in_use: true,
                members: vec![member("P", ""), member("I", "no LACPDU")],
            }],
        };
        let back: EtherchannelSummary =
            serde_json::from_str(&serde_json::to_string(&summary).unwrap()).unwrap();
        assert!(!back.channels[0].all_bundled());
        assert_eq!(back.channels[0].members[1].why, "no LACPDU");
        let counters = InterfacesCounters {
            ports: vec![PortCounters {
                port: "GigabitEthernet1/1".into(),
                rx_frames: 10,
                drops: [("giant".to_string(), 1), ("vlan".to_string(), 2)].into(),
                ..PortCounters::default()
            }],
            ..InterfacesCounters::default()
        };
        let back: InterfacesCounters =
            serde_json::from_str(&serde_json::to_string(&counters).unwrap()).unwrap();
        assert_eq!((back.ports[0].rx_frames, back.ports[0].dropped()), (10, 3));
        // An answer missing a field is refused, not read as zeros.
        let partial = r#"{"ports":[{"port":"GigabitEthernet1/1","rx_frames":10}],"channels":[]}"#;
        assert!(serde_json::from_str::<InterfacesCounters>(partial).is_err());
    }
}
