//! The checks: each end alone, then a host facing a switch's channel.

use crate::facts::{Channel, End, Host, HostMode};
use crate::{Finding, Loc, Severity};
use lagkit_ios::ChannelMode;

fn finding(severity: Severity, code: &'static str, loc: Loc, reason: String, fix: &str) -> Finding {
    Finding {
        severity,
        code,
        loc,
        reason,
        fix: fix.to_string(),
    }
}

/// Hash policies that read only addresses (MAC or IP): between two hosts
/// every frame has the same key.
fn address_only(policy: &str) -> bool {
    let p = policy.to_ascii_lowercase();
    let p = p.rsplit(':').next().unwrap_or(&p);
    matches!(
        p,
        "layer2"
            | "layer2+3"
            | "encap2+3"
            | "vlan+srcmac"
            | "default"
            | "src-mac"
            | "dst-mac"
            | "src-dst-mac"
            | "src-ip"
            | "dst-ip"
            | "src-dst-ip"
            | "lb_mac"
            | "lb_ip"
            | "balance-slb"
    )
}

/// Checks of a host's bond on its own.
pub fn host_alone(h: &Host) -> Vec<Finding> {
    let mut out = Vec::new();
    let n = h.members.len() as u32;
    if h.min_links > n {
        out.push(finding(
            Severity::Error,
            "min-links-unreachable",
            h.loc.clone(),
            format!(
                "bond {} needs min_links = {} but has {n} member(s): it never carries traffic",
                h.bond, h.min_links
            ),
            "lower min_links to at most the number of members, or add members",
        ));
    }
    if let Some(mb) = h.max_bundle {
        if u32::from(mb) < h.min_links {
            out.push(finding(
                Severity::Error,
                "max-bundle-below-min-links",
                h.loc.clone(),
                format!("bond {}: max_bundle = {mb} is below min_links = {}: the aggregate can never be up", h.bond, h.min_links),
                "make max_bundle at least min_links",
            ));
        }
    }
    let speeds: Vec<u32> = h.members.iter().filter_map(|m| m.speed).collect();
    if speeds.windows(2).any(|w| w[0] != w[1]) {
        out.push(finding(
            Severity::Error,
            "member-speed-mismatch",
            h.loc.clone(),
            format!("bond {}: members run at different speeds ({speeds:?} Mbit/s): LACP puts them in different aggregators, hashes overload the slow one", h.bond),
            "use members of one speed",
        ));
    }
    if h.members
        .iter()
        .any(|m| m.duplex.as_deref().is_some_and(|d| d != "full"))
    {
        out.push(finding(
            Severity::Error,
            "member-half-duplex",
            h.loc.clone(),
            format!(
                "bond {}: a member runs half duplex; 802.3ad aggregates full-duplex links only",
                h.bond
            ),
            "fix the link's autonegotiation (cable, both ends' speed/duplex settings)",
        ));
    }
    out
}

/// A port's MTU: configured, or the switch's default when it has one.
fn port_mtu(c: &Channel, p: &lagkit_ios::Interface) -> Option<u32> {
    p.mtu.as_ref().map(|m| m.value).or(c.default_mtu)
}

/// Checks of one switch channel on its own.
pub fn channel_alone(c: &Channel) -> Vec<Finding> {
    let mut out = Vec::new();
    let first = c.ports.first();
    let loc0 = first.map_or(
        Loc {
            file: c.file.clone(),
            line: None,
        },
        |p| c.at(p.line),
    );
    let modes = c.modes();
    let protocols: Vec<&str> = modes.iter().map(|m| m.protocol()).collect();
    if protocols.windows(2).any(|w| w[0] != w[1]) {
        out.push(finding(
            Severity::Error,
            "channel-mixed-protocols",
            loc0.clone(),
            format!(
                "channel {} mixes modes {} on its ports: ports of other protocols are suspended",
                c.number,
                modes
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "give every port of the channel the same channel-group mode",
        ));
    }
    // MTU: every port and the port-channel alike (IBM run 18: ports 9216,
    // port-channel 1500).
    let mtus: Vec<(u32, Loc, String)> = c
        .ports
        .iter()
        .chain(c.port_channel.iter())
        .filter_map(|p| {
            let m = port_mtu(c, p)?;
            Some((
                m,
                c.at(p.mtu.as_ref().map_or(p.line, |m| m.line)),
                p.name.clone(),
            ))
        })
        .collect();
    if let Some((m0, _, _)) = mtus.first() {
        if let Some((m, loc, name)) = mtus.iter().find(|(m, _, _)| m != m0) {
            let list = mtus
                .iter()
                .map(|(m, _, n)| format!("{n} {m}"))
                .collect::<Vec<_>>()
                .join(", ");
            out.push(finding(
                Severity::Error,
                "mtu-mismatch",
                loc.clone(),
                format!("channel {}: MTU differs between its ports and port-channel ({list}; {name} has {m}): frames above the smallest are dropped as giants or the ports are suspended", c.number),
                "set the same mtu on every member port and on the port-channel (IBM's steps 6 and 7 both set 9216)",
            ));
        }
    }
    for (what, get) in [
        (
            "speed",
            (|p: &lagkit_ios::Interface| p.speed.as_ref().map(|s| s.value.clone()))
                as fn(&lagkit_ios::Interface) -> Option<String>,
        ),
        ("duplex", |p| p.duplex.as_ref().map(|s| s.value.clone())),
        ("access VLAN", |p| {
            p.access_vlan.as_ref().map(|s| s.value.to_string())
        }),
    ] {
        let vals: Vec<(Option<String>, &lagkit_ios::Interface)> =
            c.ports.iter().map(|p| (get(p), p)).collect();
        if let Some((v, p)) = vals.iter().find(|(v, _)| *v != vals[0].0) {
            out.push(finding(
                Severity::Error,
                "channel-port-mismatch",
                c.at(p.line),
                format!(
                    "channel {}: {} is {} on {} but {} on {}: Cisco suspends a port that differs from its channel (flag s)",
                    c.number,
                    what,
                    vals[0].0.as_deref().unwrap_or("default"),
                    vals[0].1.name,
                    v.as_deref().unwrap_or("default"),
                    p.name
                ),
                "configure the channel's ports alike (or on the port-channel, which passes it to its ports)",
            ));
        }
    }
    if let (Some(po), Some(p)) = (&c.port_channel, first) {
        let pv = p.access_vlan.as_ref().map(|v| v.value);
        let ov = po.access_vlan.as_ref().map(|v| v.value);
        if pv.is_some() && ov.is_some() && pv != ov {
            out.push(finding(
                Severity::Error,
                "channel-vlan-mismatch",
                c.at(po.access_vlan.as_ref().map_or(po.line, |v| v.line)),
                format!(
                    "channel {}: the port-channel is in VLAN {} but {} is in VLAN {}",
                    c.number,
                    ov.unwrap_or(0),
                    p.name,
                    pv.unwrap_or(0)
                ),
                "set switchport access vlan on the port-channel only",
            ));
        }
    }
    for p in c
        .ports
        .iter()
        .filter(|p| p.shutdown.as_ref().is_some_and(|s| s.value))
    {
        out.push(finding(
            Severity::Warning,
            "port-shutdown",
            c.at(p.shutdown.as_ref().map_or(p.line, |s| s.line)),
            format!(
                "channel {}: {} is shut down and carries nothing",
                c.number, p.name
            ),
            "no shutdown",
        ));
    }
    let n = c.ports.len();
    if n > 8 {
        out.push(finding(
            Severity::Warning,
            "cisco-more-than-8",
            loc0.clone(),
            format!("channel {} has {n} ports but Cisco spreads over 8 result-bundle-hash buckets: ports 9 and up carry nothing", c.number),
            "use at most 8 active ports (the others as hot standby)",
        ));
    } else if matches!(n, 3 | 5 | 6 | 7) {
        let busiest = 8usize.div_ceil(n);
        out.push(finding(
            Severity::Warning,
            "cisco-uneven-buckets",
            loc0.clone(),
            format!("channel {} has {n} ports: Cisco's 8 buckets split unevenly, the busiest port carries {busiest}/8 of evenly spread traffic instead of 1/{n}", c.number),
            "use 2, 4 or 8 ports",
        ));
    }
    if let Some((lb, line)) = &c.load_balance {
        if address_only(lb) {
            out.push(finding(
                Severity::Warning,
                "switch-address-hash",
                c.at(*line),
                format!("port-channel load-balance {lb} reads only addresses: traffic towards one server from one peer (or through one router) takes one port"),
                "use src-dst-port or src-dst-mixed-ip-port",
            ));
        }
    }
    out
}

/// Checks of a host facing channel `c`.
pub fn pair(h: &Host, c: &Channel) -> Vec<Finding> {
    let mut out = Vec::new();
    let modes = c.modes();
    let cloc = c
        .ports
        .first()
        .and_then(|p| p.channel_group.as_ref())
        .map_or(
            Loc {
                file: c.file.clone(),
                line: None,
            },
            |g| c.at(g.line),
        );
    let sw = format!("{} channel {}", c.switch, c.number);
    let all = |f: fn(&ChannelMode) -> bool| !modes.is_empty() && modes.iter().all(f);
    let lacp = all(|m| matches!(m, ChannelMode::Active | ChannelMode::Passive));
    let lacp_passive = all(|m| *m == ChannelMode::Passive);
    let on = all(|m| *m == ChannelMode::On);
    let pagp = all(|m| matches!(m, ChannelMode::Desirable { .. } | ChannelMode::Auto { .. }));
    let mode_text = modes
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("/");
    match h.mode {
        HostMode::Lacp { active, .. } => {
            if !active && lacp_passive {
                out.push(finding(Severity::Error, "lacp-passive-both", h.loc.clone(),
                    format!("bond {} is LACP passive and {sw} is passive: a passive port only answers, so the channel never forms", h.bond),
                    "make one end active (lacp_active = true, or channel-group N mode active)"));
            }
            if on {
                out.push(finding(Severity::Error, "lacp-facing-on", cloc.clone(),
                    format!("bond {} runs LACP but {sw} is mode on (no protocol): the bond's ports stay defaulted and individual while the switch sends on all of them", h.bond),
                    "use channel-group N mode active on the switch"));
            }
            if pagp {
                out.push(finding(Severity::Error, "lacp-facing-pagp", cloc.clone(),
                    format!("bond {} runs LACP but {sw} runs PAgP ({mode_text}): the two protocols never form a channel", h.bond),
                    "use channel-group N mode active (LACP) on the switch"));
            }
        }
        HostMode::Static | HostMode::RoundRobin | HostMode::Broadcast => {
            if lacp {
                out.push(finding(Severity::Error, "static-facing-lacp", cloc.clone(),
                    format!("bond {} is a static channel but {sw} runs LACP ({mode_text}): with no LACP partner the switch suspends or isolates its ports", h.bond),
                    "use mode 802.3ad on the host, or channel-group N mode on on the switch"));
            }
            if pagp {
                let never = modes.iter().any(|m| {
                    matches!(
                        m,
                        ChannelMode::Auto { .. } | ChannelMode::Desirable { silent: false }
                    )
                });
                out.push(finding(if never { Severity::Error } else { Severity::Warning }, "static-facing-pagp", cloc.clone(),
                    if never {
                        format!("bond {} speaks no PAgP but {sw} is {mode_text}: auto waits for a PAgP partner and non-silent desirable requires one, so the channel never forms", h.bond)
                    } else {
                        format!("bond {} speaks no PAgP and {sw} is desirable silent: it bundles only after the silent timeout and cannot notice a failed link", h.bond)
                    },
                    "use channel-group N mode on (or run PAgP on the host when lagkit supports it)"));
            }
            if on {
                out.push(finding(Severity::Warning, "static-no-protocol", cloc.clone(),
                    format!("bond {} and {sw} bundle without a protocol: a link that fails silently (carrier up, frames lost) keeps receiving traffic, a black hole", h.bond),
                    "use LACP on both ends (mode 802.3ad, channel-group N mode active)"));
            }
            if h.mode == HostMode::RoundRobin && !modes.is_empty() {
                out.push(finding(Severity::Warning, "round-robin-into-switch", h.loc.clone(),
                    format!("bond {} sends round-robin into {sw}: every flow's packets take all links and arrive out of order (TCP retransmits, seen in IBM's measurements), while the switch sends back by hash", h.bond),
                    "use a hash mode (balance-xor or 802.3ad with layer3+4)"));
            }
        }
        HostMode::ActiveBackup | HostMode::NoChannel => {
            if !modes.is_empty() {
                out.push(finding(Severity::Warning, "no-channel-mode-into-channel", cloc.clone(),
                    format!("bond {} is a mode that wants no switch channel, but its ports are in {sw}: the switch spreads traffic onto ports the bond does not receive on", h.bond),
                    "remove the channel-group from the switch ports (or use 802.3ad on the host)"));
            }
        }
    }
    // LACP rate.
    if let HostMode::Lacp { fast, .. } = h.mode {
        let sw_fast: Vec<bool> = c
            .ports
            .iter()
            .map(|p| p.lacp_rate_fast.as_ref().is_some_and(|r| r.value))
            .collect();
        if lacp && sw_fast.iter().any(|f| *f != fast) {
            out.push(finding(Severity::Warning, "lacp-rate-mismatch", h.loc.clone(),
                format!("bond {} asks for the {} LACP rate but {sw} asks for the {} rate: the ends detect a dead partner in {} and {} respectively",
                    h.bond, if fast { "fast" } else { "slow" }, if fast { "normal (slow)" } else { "fast" },
                    if fast { "3 s" } else { "90 s" }, if fast { "90 s" } else { "3 s" }),
                "use the same rate on both ends (lacp_rate = \"fast\" with lacp rate fast on the switch ports)"));
        }
    }
    // MTU across the five places.
    if let Some((host_mtu, loc)) = &h.mtu {
        let smallest = c
            .ports
            .iter()
            .chain(c.port_channel.iter())
            .filter_map(|p| Some((port_mtu(c, p)?, p)))
            .min_by_key(|(m, _)| *m);
        if let Some((m, p)) = smallest {
            if m < *host_mtu {
                out.push(finding(Severity::Error, "mtu-host-above-switch", loc.clone(),
                    format!("bond {} sends {host_mtu}-byte packets but {} on {} has MTU {m}{}: larger frames are dropped as giants", h.bond, p.name, c.switch,
                        if p.mtu.is_none() { " (the default)" } else { "" }),
                    &format!("set mtu {} (or more) on {} and every member port, or lower the bond's MTU", host_mtu, p.name)));
            }
        }
    }
    // Hash.
    if let Some(hash) = &h.hash {
        if address_only(hash) {
            out.push(finding(Severity::Warning, "host-address-hash", h.loc.clone(),
                format!("bond {} hashes with {hash}, which reads only addresses: all traffic to one peer (or through one router) takes one link, half the throughput of 2 links", h.bond),
                "use xmit_hash_policy = \"layer3+4\" (or lagkit's strong)"));
        }
    }
    if !c.ports.is_empty() && c.ports.len() != h.members.len() {
        out.push(finding(
            Severity::Warning,
            "member-count-mismatch",
            h.loc.clone(),
            format!(
                "bond {} has {} member(s) but {sw} has {} port(s)",
                h.bond,
                h.members.len(),
                c.ports.len()
            ),
            "cable and configure the same number of links on both ends",
        ));
    }
    if h.min_links > c.ports.len() as u32 && !c.ports.is_empty() {
        out.push(finding(
            Severity::Error,
            "min-links-above-switch",
            h.loc.clone(),
            format!(
                "bond {} needs min_links = {} but {sw} has {} port(s)",
                h.bond,
                h.min_links,
                c.ports.len()
            ),
            "lower min_links or add ports to the channel",
        ));
    }
    out
}

/// Every check over the ends read: each end alone, and each host against
/// the channel `channel` (or the switch's only channel).
pub fn check(ends: &[End], channel: Option<u32>) -> Vec<Finding> {
    let hosts: Vec<&Host> = ends
        .iter()
        .flat_map(|e| match e {
            End::Hosts(h) => h.iter().collect(),
            End::Switch(_) => Vec::new(),
        })
        .collect();
    let channels: Vec<&Channel> = ends
        .iter()
        .flat_map(|e| match e {
            End::Switch(c) => c.iter().collect(),
            End::Hosts(_) => Vec::new(),
        })
        .collect();
    let mut out: Vec<Finding> = hosts.iter().flat_map(|h| host_alone(h)).collect();
    out.extend(channels.iter().flat_map(|c| channel_alone(c)));
    let facing: Vec<&Channel> = match channel {
        Some(n) => channels.iter().copied().filter(|c| c.number == n).collect(),
        None if channels.len() == 1 => channels.clone(),
        None => Vec::new(),
    };
    if let (Some(n), true) = (channel, facing.is_empty()) {
        out.push(finding(
            Severity::Error,
            "no-such-channel",
            Loc {
                file: channels.first().map_or(String::new(), |c| c.file.clone()),
                line: None,
            },
            format!(
                "no channel group {n} in the switch configuration (it has {})",
                channels
                    .iter()
                    .map(|c| c.number.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "name one of those with --channel",
        ));
    }
    if channel.is_none() && channels.len() > 1 && !hosts.is_empty() {
        out.push(finding(
            Severity::Info,
            "which-channel",
            Loc {
                file: channels[0].file.clone(),
                line: None,
            },
            format!(
                "the switch has {} channels ({}); the host was not checked against any",
                channels.len(),
                channels
                    .iter()
                    .map(|c| c.number.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "name the host's channel with --channel N",
        ));
    }
    for h in &hosts {
        for c in &facing {
            out.extend(pair(h, c));
        }
    }
    out.sort_by_key(|f| std::cmp::Reverse(f.severity));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::read;

    fn run(host: &str, switch: &str, channel: Option<u32>) -> Vec<Finding> {
        let h = read("bond.toml", host).unwrap();
        let s = read("switch.cfg", switch).unwrap();
        check(&[h, s], channel)
    }

    fn codes(f: &[Finding]) -> Vec<&str> {
        f.iter().map(|f| f.code).collect()
    }

    const HOST: &str = "name = \"bond0\"\nmode = \"802.3ad\"\nmembers = [\"eth0\", \"eth1\"]\nmtu = 9000\nxmit_hash_policy = \"layer3+4\"\nlacp_rate = \"fast\"\n";

    /// IBM's run 18: MTU 9216 on the ports, the port-channel left at 1500.
    #[test]
    fn ibm_run_18_mtu_in_four_of_five_places() {
        let sw = "interface range gigabitethernet 8/4-5\nmtu 9216\nchannel-group 3 mode active\nlacp rate fast\nend\ninterface port-channel 3\nswitchport access vlan 129\nno shut\nend\nport-channel load-balance src-dst-port\n";
        let f = run(HOST, sw, None);
        let mtu = f
            .iter()
            .find(|f| f.code == "mtu-mismatch")
            .expect("mtu finding");
        assert_eq!(mtu.severity, Severity::Error);
        assert_eq!(mtu.loc.to_string(), "switch.cfg:6");
        assert!(mtu.reason.contains("Port-channel3 1500"), "{mtu}");
        assert!(
            f.iter()
                .any(|f| f.code == "mtu-host-above-switch" && f.reason.contains("Port-channel3")),
            "{f:#?}"
        );
        assert_eq!(crate::exit_status(&f), 3);
        // Fixed: mtu 9216 on the port-channel too: nothing left.
        let fixed = sw.replace(
            "switchport access vlan 129\n",
            "switchport access vlan 129\nmtu 9216\n",
        );
        let f = run(HOST, &fixed, None);
        assert!(f.is_empty(), "{f:#?}");
        assert_eq!(crate::exit_status(&f), 0);
    }

    #[test]
    fn protocol_pairs() {
        let passive = HOST.replace(
            "lacp_rate = \"fast\"\n",
            "lacp_rate = \"fast\"\nlacp_active = false\n",
        );
        let sw = |mode: &str| {
            format!("interface range gi1/1 - 2\nchannel-group 1 mode {mode}\nlacp rate fast\n")
        };
        assert!(codes(&run(&passive, &sw("passive"), None)).contains(&"lacp-passive-both"));
        assert!(!codes(&run(&passive, &sw("active"), None)).contains(&"lacp-passive-both"));
        let on = "interface range gi1/1 - 2\nchannel-group 1 mode on\n";
        assert!(codes(&run(HOST, on, None)).contains(&"lacp-facing-on"));
        let pagp = "interface range gi1/1 - 2\nchannel-group 1 mode desirable non-silent\n";
        assert!(codes(&run(HOST, pagp, None)).contains(&"lacp-facing-pagp"));
        let xor = HOST
            .replace("802.3ad", "balance-xor")
            .replace("lacp_rate = \"fast\"\n", "");
        let f = run(&xor, &sw("active"), None);
        assert!(codes(&f).contains(&"static-facing-lacp"), "{f:#?}");
        let f = run(
            &xor,
            "interface range gi1/1 - 2\nchannel-group 1 mode auto\n",
            None,
        );
        assert!(
            f.iter()
                .any(|x| x.code == "static-facing-pagp" && x.severity == Severity::Error),
            "{f:#?}"
        );
        let f = run(&xor, on, None);
        assert!(codes(&f).contains(&"static-no-protocol"));
        let rr = HOST
            .replace("802.3ad", "balance-rr")
            .replace("lacp_rate = \"fast\"\n", "")
            .replace("xmit_hash_policy = \"layer3+4\"\n", "");
        assert!(codes(&run(&rr, on, None)).contains(&"round-robin-into-switch"));
    }

    #[test]
    fn rates_hashes_buckets_and_ports() {
        let slow_sw = "interface range gi1/1 - 2\nchannel-group 1 mode active\n";
        assert!(codes(&run(HOST, slow_sw, None)).contains(&"lacp-rate-mismatch"));
        let l2 = HOST.replace("layer3+4", "layer2+3");
        let sw = "port-channel load-balance src-dst-ip\ninterface range gi1/1 - 3\nchannel-group 1 mode active\nlacp rate fast\n";
        let f = run(&l2, sw, None);
        for c in [
            "host-address-hash",
            "switch-address-hash",
            "cisco-uneven-buckets",
            "member-count-mismatch",
        ] {
            assert!(codes(&f).contains(&c), "{c}: {f:#?}");
        }
        let mixed = "interface gi1/1\nchannel-group 1 mode active\nspeed 1000\ninterface gi1/2\nchannel-group 1 mode active\nspeed 100\nshutdown\n";
        let f = run(HOST, mixed, None);
        assert!(codes(&f).contains(&"channel-port-mismatch"), "{f:#?}");
        assert!(codes(&f).contains(&"port-shutdown"), "{f:#?}");
    }

    #[test]
    fn several_channels_need_a_choice_and_min_links() {
        let sw = "interface gi1/1\nchannel-group 1 mode active\ninterface gi1/2\nchannel-group 2 mode active\n";
        assert!(codes(&run(HOST, sw, None)).contains(&"which-channel"));
        assert!(codes(&run(HOST, sw, Some(7))).contains(&"no-such-channel"));
        assert!(codes(&run(HOST, sw, Some(2))).contains(&"member-count-mismatch"));
        let ml = HOST.replace("mtu = 9000\n", "mtu = 9000\nmin_links = 3\n");
        let h = read("bond.toml", &ml).unwrap();
        assert!(codes(&check(&[h], None)).contains(&"min-links-unreachable"));
    }

    #[test]
    fn open_vswitch_bond_and_lacp_show() {
        let ovs = "---- bond0 ----\nbond_mode: balance-slb\nlacp_status: negotiated\n\nmember s1: enabled\n  may_enable: true\n\nmember s2: enabled\n\n---- bond0 ----\n  status: active negotiated\n  lacp_time: slow\n\nmember: s1: current attached\nmember: s2: current attached\n";
        let End::Switch(c) = read("ovs.txt", ovs).unwrap() else {
            panic!("a switch")
        };
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].ports.len(), 2);
        assert_eq!(c[0].modes(), vec![ChannelMode::Active]);
        let f = run(HOST, ovs, None);
        // HOST asks for fast, OVS for slow; balance-slb hashes source MACs.
        assert!(codes(&f).contains(&"lacp-rate-mismatch"), "{f:#?}");
        assert!(codes(&f).contains(&"switch-address-hash"), "{f:#?}");
        let off = ovs
            .replace("lacp_status: negotiated", "lacp_status: off")
            .replace("  status: active negotiated\n", "");
        assert!(codes(&run(HOST, &off, None)).contains(&"lacp-facing-on"));
    }

    #[test]
    fn proc_net_bonding() {
        let text = "Ethernet Channel Bonding Driver: v6.1\n\nBonding Mode: IEEE 802.3ad Dynamic link aggregation\nTransmit Hash Policy: layer2 (0)\nMII Status: up\n\n802.3ad info\nLACP active: off\nLACP rate: slow\nMin links: 0\n\nSlave Interface: eth0\nMII Status: up\nSpeed: 1000 Mbps\nDuplex: full\n\nSlave Interface: eth1\nMII Status: up\nSpeed: 100 Mbps\nDuplex: full\n";
        let End::Hosts(h) = read("/proc/net/bonding/bond0", text).unwrap() else {
            panic!()
        };
        assert_eq!(h[0].bond, "bond0");
        assert_eq!(
            h[0].mode,
            HostMode::Lacp {
                active: false,
                fast: false
            }
        );
        assert_eq!(h[0].members.len(), 2);
        let f = host_alone(&h[0]);
        assert!(codes(&f).contains(&"member-speed-mismatch"), "{f:#?}");
    }

    #[test]
    fn unreadable_inputs_say_what_and_where() {
        // An AIX alias in a lagkit TOML is still lagkit's dialect.
        let t =
            "name = \"bond0\"\nmode = \"standard\"\nhash_mode = \"src_port\"\nmembers = [\"a\"]\n";
        assert!(
            matches!(read("b.toml", t), Ok(End::Hosts(_))),
            "{:?}",
            read("b.toml", t)
        );
        assert!(read("x", "hello world\n")
            .unwrap_err()
            .to_string()
            .contains("not a dialect lagkit reads"));
        let e = read("sw.cfg", "interface gi1/1\nchannel-group 1 mode maybe\n").unwrap_err();
        assert!(e.to_string().starts_with("sw.cfg:2:"), "{e}");
        let e = read("b.toml", "name = \"bond0\"\nmode = \"nope\"\n").unwrap_err();
        assert!(e.to_string().contains("b.toml"), "{e}");
        assert!(read("bin", "a\0b").is_err());
    }
}
