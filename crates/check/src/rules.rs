//! The checks: each end alone, then a host facing a switch's channel, and
//! two switches' channels facing each other.
//!
//! `offloads-to-userspace-peer` is deliberately narrow: it fires only for a
//! host whose members are veths (named `veth*` or `v-*`, or marked with a
//! `# lagkit-check: veth [NAME...]` line in the host's file) facing an
//! Open vSwitch bond whose bridge shows `datapath_type: netdev` (from
//! `ovs-vsctl show` given with `bond/show`) and no
//! `userspace-tso-enable=true`. A kernel stack hands a veth partial
//! checksums and 64 KB GSO frames; OVS's userspace datapath reads them
//! through AF_PACKET without vnet headers and drops or forwards them
//! broken, so TCP through it stalls. On real NICs the hardware finishes
//! the frames, so nothing else triggers it.

use crate::facts::{Channel, End, Host, HostMode, LinkFile, MacSource, Switch};
use crate::{Finding, Loc, Severity};
use lagkit_ios::ChannelMode;

/// A finding (one place builds them, for the rules and the cross-checks).
pub(crate) fn finding(
    severity: Severity,
    code: &'static str,
    loc: Loc,
    reason: String,
    fix: &str,
) -> Finding {
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
    if let Some((bond_mtu, _)) = &h.mtu {
        for m in &h.members {
            let Some((mtu, loc)) = m.mtu.as_ref().filter(|(mtu, _)| mtu != bond_mtu) else {
                continue;
            };
            out.push(finding(
                Severity::Warning,
                "member-mtu-mismatch",
                loc.clone(),
                format!("bond {} has MTU {bond_mtu} but its member {} is given MTU {mtu}: Linux gives a member the bond's MTU when it is enslaved, but an MTU set on the member afterwards stays, so whichever the network tool applies last wins and frames above {} can be dropped on {}",
                    h.bond, m.name, mtu.min(bond_mtu), m.name),
                "give the members the bond's MTU (or leave it unset on them)",
            ));
        }
    }
    if let Some((policy, loc)) = &h.unused_hash {
        out.push(finding(
            Severity::Warning,
            "hash-policy-not-used",
            loc.clone(),
            format!("bond {}: xmit_hash_policy = \"{policy}\" is not used: with tlb_dynamic_lb = true, balance-tlb and balance-alb hash with strong and move flows between members by load (Linux ignores the policy there too)", h.bond),
            &format!("set tlb_dynamic_lb = false to hash by {policy} without moving flows, or remove xmit_hash_policy"),
        ));
    }
    out
}

/// The bond's MAC as udev leaves it: the host's own, unless only systemd's
/// default (or nothing) decided it and a `.link` given matches the bond.
pub fn bond_mac(h: &Host, links: &[LinkFile]) -> Option<(MacSource, Loc)> {
    match &h.mac {
        None | Some((MacSource::MachineId { default: true }, _)) => {
            match LinkFile::first_for(links, &h.bond) {
                Some(link) => link.source(),
                None => h.mac.clone(),
            }
        }
        other => other.clone(),
    }
}

const PIN_MAC: &str = "pin the bond's MAC: MACAddress= in the .netdev's [NetDev], macaddress: in netplan, hwaddress in ifupdown, cloned-mac-address= (an address) in NetworkManager, or only its LACP system ID (ad_actor_system)";

/// An 802.3ad bond's system ID is its MAC: when that changes, the partner
/// sees a new actor system and the aggregate re-forms (traffic drops).
/// Findings only for what the configuration shows decides the MAC.
pub fn mac_may_change(h: &Host, mac: Option<&(MacSource, Loc)>) -> Vec<Finding> {
    let mut out = Vec::new();
    if !matches!(h.mode, HostMode::Lacp { .. }) {
        return out;
    }
    let code = "bond-mac-may-change";
    match mac {
        Some((MacSource::Random, loc)) => out.push(finding(Severity::Warning, code, loc.clone(),
            format!("a .link gives bond {} MACAddressPolicy=random: each time the bond is created (boot, networkd restart) it gets a new MAC, which is its LACP system ID, so the partner sees a new system and the aggregate re-forms", h.bond),
            &format!("set MACAddressPolicy=none or persistent in the .link (none leaves the bond the first enslaved member's MAC), or {PIN_MAC}"))),
        Some((MacSource::MachineId { default }, loc)) => out.push(finding(Severity::Info, code, loc.clone(),
            format!("bond {}'s MAC, its LACP system ID, is not pinned, so {}: derived from /etc/machine-id and the bond's name, stable across reboots but new when the image is cloned or the machine-id regenerated, and the partner then sees a new system",
                h.bond, if *default { "systemd gives it its default, MACAddressPolicy=persistent" } else { "the .link's MACAddressPolicy=persistent applies" }),
            PIN_MAC)),
        Some((MacSource::Member(m), loc)) => out.push(finding(Severity::Info, code, loc.clone(),
            format!("bond {}'s system MAC is member {m}'s permanent address: the bond took it from the member enslaved first, and when the bond is created again with another member first (say {m} missing at boot) its LACP system ID changes", h.bond),
            PIN_MAC)),
        _ => {}
    }
    let pinned = matches!(mac, Some((MacSource::Pinned, _)));
    if let (Some((v, loc)), false) = (&h.fail_over_mac, pinned) {
        out.push(finding(Severity::Warning, code, loc.clone(),
            format!("bond {} sets fail_over_mac {v}, which the kernel ignores outside active-backup: it does not keep this 802.3ad bond's MAC (its LACP system ID) fixed, and nothing here pins it, so it is whatever the bond got at creation and changes when that does", h.bond),
            &format!("drop fail_over_mac and {PIN_MAC}")));
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

/// What every port of a channel speaks, and where its channel-group is.
struct Speaks {
    modes: Vec<ChannelMode>,
    /// The first port's `channel-group` line.
    loc: Loc,
    /// `SWITCH channel N`.
    name: String,
    /// N.
    number: u32,
    /// `active/passive`, ...
    text: String,
    on: bool,
    lacp: bool,
    lacp_passive: bool,
    pagp: bool,
    pagp_auto: bool,
}

fn speaks(c: &Channel) -> Speaks {
    let modes = c.modes();
    let all = |f: fn(&ChannelMode) -> bool| !modes.is_empty() && modes.iter().all(f);
    Speaks {
        loc: c
            .ports
            .first()
            .and_then(|p| p.channel_group.as_ref())
            .map_or(
                Loc {
                    file: c.file.clone(),
                    line: None,
                },
                |g| c.at(g.line),
            ),
        name: format!("{} channel {}", c.switch, c.number),
        number: c.number,
        text: modes
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("/"),
        on: all(|m| *m == ChannelMode::On),
        lacp: all(|m| matches!(m, ChannelMode::Active | ChannelMode::Passive)),
        lacp_passive: all(|m| *m == ChannelMode::Passive),
        pagp: all(|m| matches!(m, ChannelMode::Desirable { .. } | ChannelMode::Auto { .. })),
        pagp_auto: all(|m| matches!(m, ChannelMode::Auto { .. })),
        modes,
    }
}

/// Checks of a host facing channel `c`.
pub fn pair(h: &Host, c: &Channel) -> Vec<Finding> {
    let mut out = Vec::new();
    let Speaks {
        modes,
        loc: cloc,
        name: sw,
        text: mode_text,
        on,
        lacp,
        lacp_passive,
        pagp,
        ..
    } = speaks(c);
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
                    "use channel-group N mode on, or run PAgP on the host (a lagkit bond: pagp = \"desirable\")"));
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
        HostMode::Pagp { auto, silent } => {
            let sw_auto = modes.iter().any(|m| matches!(m, ChannelMode::Auto { .. }));
            if pagp && auto && sw_auto {
                out.push(finding(Severity::Error, "pagp-auto-both", h.loc.clone(),
                    format!("bond {} is pagp = \"auto\" and {sw} is {mode_text}: auto only answers PAgP, so neither end starts and the channel never forms", h.bond),
                    "set pagp = \"desirable\" on the bond, or channel-group N mode desirable on the switch"));
            }
            if lacp {
                out.push(finding(Severity::Error, "pagp-facing-lacp", cloc.clone(),
                    format!("bond {} runs PAgP but {sw} runs LACP ({mode_text}): the two protocols never form a channel", h.bond),
                    "use channel-group N mode desirable or auto on the switch, or mode 802.3ad (without pagp) on the host"));
            }
            if on {
                let never = auto || !silent;
                out.push(finding(if never { Severity::Error } else { Severity::Warning }, "pagp-facing-on", cloc.clone(),
                    if never {
                        format!("bond {} needs a PAgP partner but {sw} is mode on (no protocol): its members never join the channel and carry nothing", h.bond)
                    } else {
                        format!("bond {} runs PAgP but {sw} is mode on: each member joins only after the 15 s silent wait and a failed link is not noticed", h.bond)
                    },
                    "use channel-group N mode auto or desirable on the switch"));
            }
            if modes.is_empty() {
                out.push(finding(Severity::Warning, "pagp-without-channel", h.loc.clone(),
                    format!("bond {} runs PAgP but its switch ports are in no channel: nothing answers{}", h.bond,
                        if auto || !silent { ", so no member ever carries traffic" } else { "; each member joins only after the 15 s silent wait" }),
                    "put the switch ports in channel-group N mode auto or desirable"));
            }
        }
        HostMode::ActiveBackup | HostMode::NoChannel => {
            // `on` and silent PAgP desirable bundle without the bond's
            // consent and spread towards it; LACP and the other PAgP modes
            // find no partner and leave the ports stand-alone or suspended.
            let bundles_anyway = on
                || modes
                    .iter()
                    .any(|m| matches!(m, ChannelMode::Desirable { silent: true }));
            if !modes.is_empty() {
                let (severity, effect) = if bundles_anyway {
                    (Severity::Error, "the switch bundles them anyway and spreads frames for the bond over every port, while the bond takes frames only on the port it is using: frames sent to the others are lost")
                } else {
                    (Severity::Warning, "the switch finds no protocol partner and leaves its ports stand-alone or suspended (Cisco flags I or s), so a failover may move the bond to a port that carries nothing")
                };
                out.push(finding(severity, "no-channel-mode-into-channel", cloc.clone(),
                    format!("bond {} is {}, a mode that wants no switch channel, but its ports are in {sw} ({mode_text}): {effect}", h.bond, mode_name(h.mode)),
                    "remove the channel-group from the switch ports (or use 802.3ad on the host with channel-group N mode active)"));
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
    if let (Some((dp, line)), false) = (&c.datapath, c.userspace_tso) {
        let veths: Vec<&str> = h
            .members
            .iter()
            .filter(|m| m.veth)
            .map(|m| m.name.as_str())
            .collect();
        if dp == "netdev" && !veths.is_empty() {
            // When lagkit's bond configuration has `offloads = false`,
            // name it here too.
            out.push(finding(Severity::Warning, "offloads-to-userspace-peer", h.loc.clone(),
                format!("bond {}'s members {} are veths facing {sw}, a userspace datapath (datapath_type: netdev at {}): it reads them without vnet headers, so the partial checksums and 64 KB GSO frames the host's stack hands a veth are dropped or forwarded broken and TCP through it stalls",
                    h.bond, veths.join(", "), c.at(*line)),
                &format!("turn off checksum and segmentation offloads on each member (ethtool -K {} tx off tso off gso off), or set other_config:userspace-tso-enable=true on the Open vSwitch", veths[0])));
        }
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

/// The host mode as its configuration names it.
fn mode_name(m: HostMode) -> &'static str {
    match m {
        HostMode::Lacp { .. } => "802.3ad",
        HostMode::Static => "balance-xor",
        HostMode::RoundRobin => "balance-rr",
        HostMode::ActiveBackup => "active-backup",
        HostMode::Broadcast => "broadcast",
        HostMode::NoChannel => "balance-tlb/balance-alb",
        HostMode::Pagp { .. } => "PAgP",
    }
}

/// A host facing switch `s`'s ports, none of which is in a channel
/// group: a bond that negotiates gets no answer, one that spreads sends
/// one MAC over several independent ports.
pub fn facing_no_channel(h: &Host, s: &Switch) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(first) = s.unchannelled.first() else {
        return out;
    };
    let loc = Loc {
        file: s.file.clone(),
        line: Some(first.line),
    };
    let ports = format!(
        "{} {} {}",
        if s.unchannelled.len() == 1 {
            "port"
        } else {
            "ports"
        },
        s.unchannelled
            .iter()
            .map(|p| format!("{} (line {})", p.name, p.line))
            .collect::<Vec<_>>()
            .join(", "),
        if s.unchannelled.len() == 1 {
            "is"
        } else {
            "are"
        }
    );
    let flapping = "frames from the bond's one MAC arrive on several independent switch ports, so the switch's MAC table flaps between them and frames towards the bond go out one port or are lost";
    let why = match h.mode {
        HostMode::Lacp { .. } => format!("bond {} runs LACP (802.3ad) but {}'s {ports} in no channel group: nothing answers its LACPDUs, so the bond never aggregates its links (Linux then uses one link, or sends over each alone: {flapping})", h.bond, s.file),
        HostMode::Static | HostMode::RoundRobin => format!("bond {} is {}, which spreads its frames over its links, but {}'s {ports} in no channel group: {flapping}", h.bond, mode_name(h.mode), s.file),
        HostMode::Broadcast => format!("bond {} sends every frame on every link, but {}'s {ports} in no channel group: the switch receives each frame several times and {flapping}", h.bond, s.file),
        HostMode::Pagp { auto, silent } => {
            if auto || !silent {
                format!("bond {} runs PAgP but {}'s {ports} in no channel group: nothing answers, so no member ever carries traffic", h.bond, s.file)
            } else {
                format!("bond {} runs PAgP desirable (silent) but {}'s {ports} in no channel group: after the 15 s silent wait it bundles anyway, and {flapping}", h.bond, s.file)
            }
        }
        HostMode::ActiveBackup | HostMode::NoChannel => return out,
    };
    out.push(Finding {
        severity: Severity::Error,
        code: "bond-facing-no-channel",
        loc,
        reason: why,
        fix: match h.mode {
            HostMode::Pagp { .. } => "put the switch ports in one channel-group N mode desirable (or auto)".into(),
            HostMode::Lacp { .. } => "put the switch ports in one channel-group N mode active".into(),
            _ => "put the switch ports in one channel group (channel-group N mode active, with 802.3ad on the host), or use active-backup on the host".into(),
        },
    });
    out
}

/// Two switches' channels facing each other (switch to switch).
pub fn switch_pair(a: &Channel, b: &Channel) -> Vec<Finding> {
    let mut out = Vec::new();
    let (x, y) = (speaks(a), speaks(b));
    for (on, other) in [(&x, &y), (&y, &x)] {
        if on.on && (other.lacp || other.pagp) {
            out.push(finding(Severity::Error, "on-facing-protocol", on.loc.clone(),
                format!("{} is mode on but {} runs {} ({}): the protocol end never bundles its ports while the on end sends over all of them, so frames loop or are black-holed (Cisco's EtherChannel misconfiguration guard err-disables the on end's ports)",
                    on.name, other.name, if other.lacp { "LACP" } else { "PAgP" }, other.text),
                &format!("run the other end's protocol on {}: channel-group {} mode {} on its ports", on.name, on.number, if other.lacp { "active" } else { "desirable" })));
        }
    }
    for (both, code, what, why, fix) in [
        (
            x.pagp_auto && y.pagp_auto,
            "pagp-auto-both",
            "PAgP auto",
            "auto only answers PAgP, so neither end starts",
            "make one end desirable (channel-group N mode desirable)",
        ),
        (
            x.lacp_passive && y.lacp_passive,
            "lacp-passive-both",
            "LACP passive",
            "a passive port only answers",
            "make one end active (channel-group N mode active)",
        ),
    ] {
        if both {
            out.push(finding(
                Severity::Error,
                code,
                x.loc.clone(),
                format!(
                    "{} and {} are both {what}: {why}, so the channel never forms",
                    x.name, y.name
                ),
                fix,
            ));
        }
    }
    if (x.lacp && y.pagp) || (x.pagp && y.lacp) {
        out.push(finding(
            Severity::Error,
            "lacp-facing-pagp",
            x.loc.clone(),
            format!(
                "{} runs {} and {} runs {}: LACP and PAgP never form a channel together",
                x.name, x.text, y.name, y.text
            ),
            "use channel-group N mode active (LACP) on both switches",
        ));
    }
    out
}

/// Channels of two switches that face each other: the ones numbered
/// `channel`, else each side's only one, else those of the same number.
fn facing_channels<'a>(
    a: &'a [Channel],
    b: &'a [Channel],
    channel: Option<u32>,
) -> Vec<(&'a Channel, &'a Channel)> {
    match (channel, a, b) {
        (None, [x], [y]) => vec![(x, y)],
        _ => a
            .iter()
            .flat_map(|x| b.iter().map(move |y| (x, y)))
            .filter(|(x, y)| x.number == y.number && channel.is_none_or(|n| n == x.number))
            .collect(),
    }
}

/// Every check over the ends read: each end alone, each host against the
/// channel `channel` (or the switch's only channel), each host's bond MAC
/// with the `.link` files given, and the channels of two switches given
/// facing each other.
pub fn check(ends: &[End], channel: Option<u32>) -> Vec<Finding> {
    run(ends, channel).findings
}

/// What a run found, and what it compared.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Report {
    /// The findings, worst first.
    pub findings: Vec<Finding>,
    /// What was checked, one line each: `bond bond0 (bond.toml) alone`,
    /// `bond bond0 facing sw.ios channel 1`.
    pub compared: Vec<String>,
}

/// [`check`], with what was compared.
pub fn run(ends: &[End], channel: Option<u32>) -> Report {
    let mut compared: Vec<String> = Vec::new();
    let hosts: Vec<&Host> = ends
        .iter()
        .flat_map(|e| match e {
            End::Hosts(h) => h.iter().collect(),
            _ => Vec::new(),
        })
        .collect();
    let whole: Vec<&Switch> = ends
        .iter()
        .filter_map(|e| match e {
            End::Switch(s) => Some(s),
            _ => None,
        })
        .collect();
    let switches: Vec<&[Channel]> = whole.iter().map(|s| s.channels.as_slice()).collect();
    let chan = |c: &Channel| format!("{} channel {} ({})", c.switch, c.number, c.file);
    let channels: Vec<&Channel> = switches.iter().flat_map(|s| s.iter()).collect();
    // udev takes the first matching .link in the order of the file names.
    let mut links: Vec<LinkFile> = ends
        .iter()
        .flat_map(|e| match e {
            End::Links(l) => l.clone(),
            _ => Vec::new(),
        })
        .collect();
    links.sort_by_key(|l| {
        l.loc.as_ref().and_then(|l| {
            std::path::Path::new(&l.file)
                .file_name()
                .map(|n| n.to_owned())
        })
    });
    let mut out: Vec<Finding> = hosts.iter().flat_map(|h| host_alone(h)).collect();
    for h in &hosts {
        compared.push(format!(
            "bond {} ({}) alone: members, links, MTUs, MAC{}",
            h.bond,
            h.loc.file,
            if h.running.is_some() {
                ", each member's aggregator and partner"
            } else {
                ""
            }
        ));
        out.extend(mac_may_change(h, bond_mac(h, &links).as_ref()));
        out.extend(crate::members::bond_alone(h));
        out.extend(crate::members::histories(h));
    }
    for (i, a) in switches.iter().enumerate() {
        for b in &switches[i + 1..] {
            for (x, y) in facing_channels(a, b, channel) {
                compared.push(format!("{} facing {}: protocols", chan(x), chan(y)));
                out.extend(switch_pair(x, y));
            }
        }
    }
    for c in &channels {
        compared.push(format!(
            "{} alone: modes, MTUs, speed, duplex, VLANs, shutdown, bucket spread, load-balance",
            chan(c)
        ));
    }
    out.extend(channels.iter().flat_map(|c| channel_alone(c)));
    // Ports in no channel facing a bond, when the switch has no channel
    // at all (with channels, the host is taken to face one of them).
    if channel.is_none() && channels.is_empty() {
        for h in &hosts {
            for s in whole.iter().filter(|s| !s.unchannelled.is_empty()) {
                compared.push(format!(
                    "bond {} facing {}'s {} port(s) in no channel group",
                    h.bond,
                    s.file,
                    s.unchannelled.len()
                ));
                out.extend(facing_no_channel(h, s));
            }
        }
    }
    let facing: Vec<&Channel> = match channel {
        Some(n) => channels.iter().copied().filter(|c| c.number == n).collect(),
        None if channels.len() == 1 => channels.clone(),
        None => Vec::new(),
    };
    if let (Some(n), true, false) = (channel, facing.is_empty(), whole.is_empty()) {
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
            compared.push(format!(
                "bond {} facing {}: protocols, LACP rate, MTU, hashes, member counts, min_links, offloads",
                h.bond,
                chan(c)
            ));
            out.extend(pair(h, c));
        }
    }
    // Show output: on its own, and against each host's running bond,
    // with what the hosts' LLDP daemons hear from the switch.
    let host_lldp: Vec<&crate::lldp::HostNeighbour> = ends
        .iter()
        .flat_map(|e| match e {
            End::Lldp(rows) => rows.iter().collect(),
            _ => Vec::new(),
        })
        .collect();
    for e in ends {
        let End::Show(s) = e else { continue };
        let with_lldp;
        let s = if host_lldp.is_empty() {
            s
        } else {
            with_lldp = s.with_host_lldp(&host_lldp);
            &with_lldp
        };
        compared.push(format!(
            "{} show output alone: members not bundled and why, idle members",
            s.file
        ));
        out.extend(crate::crosscheck::alone(s, &hosts));
        for h in &hosts {
            compared.push(format!(
                "bond {} ({}) facing {}'s show output: partner systems and keys, each port and member from both ends (present, up, bundled), mode, LACP rate",
                h.bond, h.loc.file, s.file
            ));
            out.extend(crate::crosscheck::pair(h, s, channel));
        }
    }
    out.sort_by_key(|f| std::cmp::Reverse(f.severity));
    Report {
        findings: out,
        compared,
    }
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

    /// A lagkit tlb/alb bond's xmit_hash_policy runs only with
    /// tlb_dynamic_lb = false; with the default the check says so, at the
    /// line that writes it.
    #[test]
    fn a_tlb_policy_the_bond_does_not_run_is_flagged() {
        for mode in ["balance-tlb", "balance-alb"] {
            let host = format!("name = \"bond0\"\nmode = \"{mode}\"\nmembers = [\"eth0\", \"eth1\"]\nxmit_hash_policy = \"layer3+4\"\n");
            let h = read("bond.toml", &host).unwrap();
            let f = check(&[h], None);
            let n = f
                .iter()
                .find(|f| f.code == "hash-policy-not-used")
                .unwrap_or_else(|| panic!("{mode}: {f:#?}"));
            assert_eq!(n.severity, Severity::Warning);
            assert_eq!(n.loc.to_string(), "bond.toml:4");
            assert!(n.reason.contains("\"layer3+4\" is not used"), "{n}");
            assert!(n.fix.contains("tlb_dynamic_lb = false"), "{n}");
            for fixed in [
                format!("{host}tlb_dynamic_lb = false\n"),
                host.replace("layer3+4", "strong"),
            ] {
                let h = read("bond.toml", &fixed).unwrap();
                let f = check(&[h], None);
                assert!(
                    !codes(&f).contains(&"hash-policy-not-used"),
                    "{fixed}: {f:#?}"
                );
            }
        }
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
        // A lagkit static bond running PAgP.
        let desirable = xor.replace("members", "pagp = \"desirable\"\nmembers");
        let auto_sw = "interface range gi1/1 - 2\nchannel-group 1 mode auto\n";
        let f = run(&desirable, auto_sw, None);
        assert!(
            !codes(&f)
                .iter()
                .any(|c| c.contains("pagp") || c.contains("protocol")),
            "{f:#?}"
        );
        let auto = xor.replace("members", "pagp = \"auto\"\nmembers");
        assert!(codes(&run(&auto, auto_sw, None)).contains(&"pagp-auto-both"));
        assert!(codes(&run(&desirable, &sw("active"), None)).contains(&"pagp-facing-lacp"));
        let f = run(&desirable, on, None);
        assert!(
            f.iter()
                .any(|x| x.code == "pagp-facing-on" && x.severity == Severity::Warning),
            "{f:#?}"
        );
        let f = run(&auto, on, None);
        assert!(
            f.iter()
                .any(|x| x.code == "pagp-facing-on" && x.severity == Severity::Error),
            "{f:#?}"
        );
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
        let End::Switch(crate::facts::Switch { channels: c, .. }) = read("ovs.txt", ovs).unwrap()
        else {
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

    fn ends(files: &[(&str, &str)]) -> Vec<End> {
        files.iter().map(|(f, t)| read(f, t).unwrap()).collect()
    }

    fn with_code<'a>(f: &'a [Finding], code: &str) -> Vec<&'a Finding> {
        f.iter().filter(|x| x.code == code).collect()
    }

    const NETDEV: &str =
        "[NetDev]\nName=bond0\nKind=bond\n\n[Bond]\nMode=802.3ad\nTransmitHashPolicy=layer3+4\n";

    #[test]
    fn netplan_member_mtu_differs_from_the_bond() {
        let np = "network:\n  ethernets:\n    eth0:\n      mtu: 1500\n    eth1:\n      mtu: 9000\n  bonds:\n    bond0:\n      interfaces: [eth0, eth1]\n      mtu: 9000\n      macaddress: 02:00:00:00:00:10\n      parameters: {mode: 802.3ad, transmit-hash-policy: layer3+4}\n";
        let f = check(&ends(&[("01-bond.yaml", np)]), None);
        let m = with_code(&f, "member-mtu-mismatch");
        assert_eq!(m.len(), 1, "{f:#?}");
        assert_eq!(m[0].loc.to_string(), "01-bond.yaml:4");
        assert!(
            m[0].reason.contains("member eth0 is given MTU 1500"),
            "{}",
            m[0]
        );
        // The bond's own MTU still meets the switch's.
        let sw = "interface range gi1/1 - 2\nchannel-group 1 mode active\n";
        let f = check(&ends(&[("01-bond.yaml", np), ("sw.cfg", sw)]), None);
        assert!(codes(&f).contains(&"mtu-host-above-switch"), "{f:#?}");
        // ifupdown and networkd members' MTUs feed the same check.
        let ifup = "iface bond0 inet manual\n  bond-slaves eth0 eth1\n  bond-mode 802.3ad\n  mtu 9000\niface eth0 inet manual\n  bond-master bond0\n  mtu 1500\n";
        let f = check(&ends(&[("interfaces", ifup)]), None);
        assert_eq!(
            with_code(&f, "member-mtu-mismatch")[0].loc.to_string(),
            "interfaces:7"
        );
        let nd = format!(
            "{}[Match]\nName=eth0\nType=ether\n[Link]\nMTUBytes=1500\n[Network]\nBond=bond0\n",
            NETDEV.replace("Kind=bond\n", "Kind=bond\nMTUBytes=9000\n")
        );
        let f = check(&ends(&[("bond0.netdev", &nd)]), None);
        assert_eq!(with_code(&f, "member-mtu-mismatch").len(), 1, "{f:#?}");
    }

    #[test]
    fn bond_mac_may_change() {
        let code = "bond-mac-may-change";
        // A networkd 802.3ad bond without MACAddress=: systemd's persistent
        // policy, a note naming machine-id.
        let f = check(&ends(&[("bond0.netdev", NETDEV)]), None);
        let m = with_code(&f, code);
        assert_eq!(m.len(), 1, "{f:#?}");
        assert_eq!(m[0].severity, Severity::Info);
        assert!(m[0].reason.contains("machine-id"), "{}", m[0]);
        assert!(m[0].fix.contains("MACAddress="), "{}", m[0]);
        // Pinned: nothing.
        let pinned = NETDEV.replace("Kind=bond\n", "Kind=bond\nMACAddress=02:00:00:00:00:01\n");
        assert!(with_code(&check(&ends(&[("bond0.netdev", &pinned)]), None), code).is_empty());
        // Not 802.3ad: nothing.
        let ab = NETDEV.replace("802.3ad", "active-backup");
        assert!(with_code(&check(&ends(&[("bond0.netdev", &ab)]), None), code).is_empty());
        // A .link with MACAddressPolicy=random, given apart or concatenated.
        let link = "[Match]\nOriginalName=bond*\n\n[Link]\nMACAddressPolicy=random\n";
        let f = check(
            &ends(&[("bond0.netdev", NETDEV), ("10-bond.link", link)]),
            None,
        );
        let m = with_code(&f, code);
        assert_eq!(m.len(), 1, "{f:#?}");
        assert_eq!(
            (m[0].severity, m[0].loc.to_string()),
            (Severity::Warning, "10-bond.link:5".to_string())
        );
        assert!(m[0].fix.contains("MACAddressPolicy=none"), "{}", m[0]);
        let cat = format!("{NETDEV}{link}");
        let m = check(&ends(&[("bond0.cat", &cat)]), None);
        assert_eq!(with_code(&m, code)[0].severity, Severity::Warning, "{m:#?}");
        // A .link that pins, or one for other devices, or with a key lagkit
        // does not evaluate, takes nothing from the note.
        for (l, sev) in [
            ("[Match]\nType=bond\n[Link]\nMACAddressPolicy=none\n", None),
            (
                "[Match]\nOriginalName=eth*\n[Link]\nMACAddressPolicy=random\n",
                Some(Severity::Info),
            ),
            (
                "[Match]\nOriginalName=bond0\nPath=pci-*\n[Link]\nMACAddressPolicy=random\n",
                None,
            ),
            (
                "[Match]\nKind=bond\n[Link]\nMACAddress=02:00:00:00:00:02\n",
                None,
            ),
        ] {
            let f = check(&ends(&[("bond0.netdev", NETDEV), ("10-x.link", l)]), None);
            assert_eq!(
                with_code(&f, code).first().map(|x| x.severity),
                sev,
                "{l}: {f:#?}"
            );
        }
        // One that may match by a key lagkit does not evaluate comes first
        // (05- before 10-): which applies is not known, so nothing is said.
        let maybe = "[Match]\nOriginalName=bond0\nPath=pci-*\n[Link]\nMACAddressPolicy=none\n";
        let f = check(
            &ends(&[
                ("bond0.netdev", NETDEV),
                ("10-bond.link", link),
                ("05-x.link", maybe),
            ]),
            None,
        );
        assert!(with_code(&f, code).is_empty(), "{f:#?}");
        // A lagkit bond's own MAC is not known from its configuration alone.
        assert!(with_code(&check(&ends(&[("bond.toml", HOST)]), None), code).is_empty());
        // fail_over_mac under 802.3ad, unpinned: ifupdown, NetworkManager.
        let ifup = "iface bond0 inet manual\n  bond-slaves eth0 eth1\n  bond-mode 802.3ad\n  bond-fail-over-mac active\n";
        let f = check(&ends(&[("interfaces", ifup)]), None);
        let m = with_code(&f, code);
        assert_eq!((m.len(), m[0].severity), (1, Severity::Warning), "{f:#?}");
        assert_eq!(m[0].loc.to_string(), "interfaces:4");
        assert!(
            m[0].reason.contains("ignores outside active-backup"),
            "{}",
            m[0]
        );
        let pinned = format!("{ifup}  hwaddress ether 02:00:00:00:00:03\n");
        assert!(with_code(&check(&ends(&[("interfaces", &pinned)]), None), code).is_empty());
        let none = ifup.replace("active", "none");
        assert!(with_code(&check(&ends(&[("interfaces", &none)]), None), code).is_empty());
        let nm = "[connection]\nid=bond0\ntype=bond\ninterface-name=bond0\n\n[bond]\nmode=802.3ad\nfail_over_mac=1\n";
        let f = check(&ends(&[("bond0.nmconnection", nm)]), None);
        assert_eq!(
            with_code(&f, code)[0].loc.to_string(),
            "bond0.nmconnection:8"
        );
        let nm = format!("{nm}[ethernet]\ncloned-mac-address=02:00:00:00:00:04\n");
        assert!(with_code(&check(&ends(&[("bond0.nmconnection", &nm)]), None), code).is_empty());
    }

    #[test]
    fn proc_bond_mac_from_a_member() {
        let text = "Bonding Mode: IEEE 802.3ad Dynamic link aggregation\nTransmit Hash Policy: layer3+4 (1)\n\n802.3ad info\nLACP active: on\nLACP rate: fast\nSystem priority: 65535\nSystem MAC address: 52:54:00:aa:bb:01\n\nSlave Interface: eth0\nPermanent HW addr: 52:54:00:AA:BB:01\n\nSlave Interface: eth1\nPermanent HW addr: 52:54:00:aa:bb:02\n";
        let f = check(&ends(&[("/proc/net/bonding/bond0", text)]), None);
        let m = with_code(&f, "bond-mac-may-change");
        assert_eq!(m.len(), 1, "{f:#?}");
        assert_eq!(m[0].severity, Severity::Info);
        assert_eq!(m[0].loc.to_string(), "/proc/net/bonding/bond0:8");
        assert!(
            m[0].reason.contains("member eth0's permanent address"),
            "{}",
            m[0]
        );
        let own = text.replace(
            "System MAC address: 52:54:00:aa:bb:01",
            "System MAC address: 02:11:22:33:44:55",
        );
        assert!(with_code(
            &check(&ends(&[("bond0", &own)]), None),
            "bond-mac-may-change"
        )
        .is_empty());
    }

    const OVS_NETDEV: &str = "ab12\n    Bridge br0\n        datapath_type: netdev\n        Port bond0\n            Interface p1\n            Interface p2\n        Port br0\n            Interface br0\n                type: internal\n    ovs_version: \"3.1.0\"\n---- bond0 ----\nbond_mode: balance-tcp\nlacp_status: negotiated\nmember p1: enabled\nmember p2: enabled\n---- bond0 ----\n  status: active negotiated\n  lacp_time: fast\n";

    #[test]
    fn offloads_towards_a_userspace_datapath() {
        let code = "offloads-to-userspace-peer";
        let End::Switch(crate::facts::Switch { channels: c, .. }) =
            read("ovs.txt", OVS_NETDEV).unwrap()
        else {
            panic!("a switch")
        };
        assert_eq!(c[0].datapath, Some(("netdev".to_string(), 3)));
        let veth = HOST.replace("[\"eth0\", \"eth1\"]", "[\"veth0\", \"veth1\"]");
        let f = check(
            &ends(&[("bond.toml", &veth), ("ovs.txt", OVS_NETDEV)]),
            None,
        );
        let m = with_code(&f, code);
        assert_eq!(m.len(), 1, "{f:#?}");
        assert_eq!(m[0].severity, Severity::Warning);
        assert!(m[0].reason.contains("ovs.txt:3"), "{}", m[0]);
        assert!(
            m[0].fix.contains("ethtool -K veth0 tx off tso off gso off"),
            "{}",
            m[0]
        );
        // Names that do not say veth: only with the hint.
        assert!(with_code(
            &check(&ends(&[("bond.toml", HOST), ("ovs.txt", OVS_NETDEV)]), None),
            code
        )
        .is_empty());
        let hinted = format!("# lagkit-check: veth eth1\n{HOST}");
        let f = check(
            &ends(&[("bond.toml", &hinted), ("ovs.txt", OVS_NETDEV)]),
            None,
        );
        assert!(
            with_code(&f, code)[0]
                .reason
                .contains("members eth1 are veths"),
            "{f:#?}"
        );
        // The kernel datapath, or userspace TSO on: nothing.
        let system = OVS_NETDEV.replace("        datapath_type: netdev\n", "");
        assert!(with_code(
            &check(&ends(&[("bond.toml", &veth), ("ovs.txt", &system)]), None),
            code
        )
        .is_empty());
        let tso = format!("{OVS_NETDEV}other_config        : {{userspace-tso-enable=\"true\"}}\n");
        assert!(with_code(
            &check(&ends(&[("bond.toml", &veth), ("ovs.txt", &tso)]), None),
            code
        )
        .is_empty());
        // `ovs-vsctl show` alone tells no bond modes.
        let alone = OVS_NETDEV.split("---- ").next().unwrap();
        let e = read("vsctl.txt", alone).unwrap_err().to_string();
        assert!(e.contains("bond/show"), "{e}");
    }

    #[test]
    fn switch_to_switch_protocols() {
        let sw = |mode: &str, n: u32| {
            format!("interface range gi1/1 - 2\nchannel-group {n} mode {mode}\n")
        };
        let run2 = |a: &str, b: &str, channel| {
            let f = check(&ends(&[("a.cfg", a), ("b.cfg", b)]), channel);
            f.iter()
                .map(|f| (f.code, f.loc.to_string()))
                .collect::<Vec<_>>()
        };
        for proto in ["active", "passive", "desirable", "auto"] {
            let f = run2(&sw("on", 1), &sw(proto, 1), None);
            assert!(
                f.contains(&("on-facing-protocol", "a.cfg:2".to_string())),
                "{proto}: {f:?}"
            );
            let f = run2(&sw(proto, 7), &sw("on", 3), None);
            assert!(
                f.contains(&("on-facing-protocol", "b.cfg:2".to_string())),
                "{proto}: {f:?}"
            );
        }
        let f = run2(&sw("auto", 1), &sw("auto non-silent", 1), None);
        assert!(f.iter().any(|x| x.0 == "pagp-auto-both"), "{f:?}");
        let f = run2(&sw("passive", 1), &sw("passive", 1), None);
        assert!(f.iter().any(|x| x.0 == "lacp-passive-both"), "{f:?}");
        let f = run2(&sw("active", 1), &sw("desirable", 1), None);
        assert!(f.iter().any(|x| x.0 == "lacp-facing-pagp"), "{f:?}");
        for (a, b) in [
            ("active", "passive"),
            ("on", "on"),
            ("desirable", "auto"),
            ("active", "active"),
        ] {
            assert!(run2(&sw(a, 1), &sw(b, 1), None).is_empty(), "{a} {b}");
        }
        // Several channels: matched by number (or --channel).
        let two = |m1: &str, m2: &str| {
            format!("interface gi1/1\nchannel-group 1 mode {m1}\ninterface gi1/2\nchannel-group 2 mode {m2}\n")
        };
        let f = run2(&two("on", "active"), &two("active", "active"), None);
        assert_eq!(
            f.iter().filter(|x| x.0 == "on-facing-protocol").count(),
            1,
            "{f:?}"
        );
        assert!(
            run2(&two("on", "active"), &two("active", "active"), Some(2))
                .iter()
                .all(|x| x.0 != "on-facing-protocol")
        );
        assert!(run2(&two("on", "active"), &sw("active", 9), None).is_empty());
    }

    #[test]
    fn link_file_matching() {
        let l = crate::facts::link_files("x.link", "[Match]\nOriginalName=eth0 bond?\n[Link]\nMACAddressPolicy=random\n# MACAddress=02:00:00:00:00:01\n");
        assert!(l[0].matches("bond0") && l[0].matches("eth0"));
        assert!(!l[0].matches("bond10") && !l[0].matches("team0"));
        assert_eq!(l[0].mac, None, "a comment sets nothing");
        let star = crate::facts::link_files("y.link", "[Match]\nOriginalName=*\n");
        assert!(star[0].matches("bond0"));
        assert!(star[0]
            .source()
            .is_some_and(|s| s.0 == MacSource::FirstMember));
        let e = read(
            "z.link",
            "[Match]\nOriginalName=*\n[Link]\nNamePolicy=kernel\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("without MACAddressPolicy="), "{e}");
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

    /// The typo'd switch of the task: its only port in no channel group.
    const TYPO: &str = "interface GigabitEthernet1/0/1\n switchport mode access\n chanel-group 1 mode active\n lacp rat fast\ninterface GigabitEthernet1/0/2\n switchport mode access\n";

    #[test]
    fn a_spreading_or_negotiating_bond_facing_ports_in_no_channel() {
        let code = "bond-facing-no-channel";
        for (mode, says) in [
            ("802.3ad", "nothing answers its LACPDUs"),
            ("balance-xor", "MAC table flaps"),
            ("balance-rr", "MAC table flaps"),
        ] {
            let host = HOST.replace("802.3ad", mode);
            let r = run_report(&host, TYPO);
            let m = with_code(&r.findings, code);
            assert_eq!(m.len(), 1, "{mode}: {:#?}", r.findings);
            assert_eq!(m[0].severity, Severity::Error);
            assert_eq!(m[0].loc.to_string(), "switch.cfg:1");
            assert!(m[0].reason.contains(says), "{}", m[0]);
            assert!(
                m[0].reason.contains("GigabitEthernet1/0/2 (line 5)"),
                "{}",
                m[0]
            );
            assert_eq!(crate::exit_status(&r.findings), 3);
            assert!(
                r.compared
                    .iter()
                    .any(|c| c.contains("2 port(s) in no channel group")),
                "{:?}",
                r.compared
            );
        }
        let pagp = format!("{HOST}pagp = \"desirable\"\n").replace("802.3ad", "balance-xor");
        assert_eq!(with_code(&run(&pagp, TYPO, None), code).len(), 1);
        // active-backup wants no channel: nothing to say.
        let ab = HOST.replace("802.3ad", "active-backup");
        assert!(with_code(&run(&ab, TYPO, None), code).is_empty());
        // With the channel spelt right, the pair is checked as before.
        let fixed = TYPO.replace("chanel-group", "channel-group");
        assert!(with_code(&run(HOST, &fixed, None), code).is_empty());
    }

    fn run_report(host: &str, switch: &str) -> Report {
        let h = read("bond.toml", host).unwrap();
        let s = read("switch.cfg", switch).unwrap();
        super::run(&[h, s], None)
    }

    #[test]
    fn a_channel_facing_a_bond_that_neither_negotiates_nor_spreads() {
        let code = "no-channel-mode-into-channel";
        let ab = HOST.replace("802.3ad", "active-backup");
        let sw = |mode: &str| format!("interface range gi1/1 - 2\nchannel-group 1 mode {mode}\n");
        for (mode, sev) in [
            ("on", Severity::Error),
            ("desirable", Severity::Error),
            ("active", Severity::Warning),
            ("passive", Severity::Warning),
            ("auto", Severity::Warning),
            ("desirable non-silent", Severity::Warning),
        ] {
            let f = run(&ab, &sw(mode), None);
            let m = with_code(&f, code);
            assert_eq!(m.len(), 1, "{mode}: {f:#?}");
            assert_eq!(m[0].severity, sev, "{mode}");
            assert!(m[0].reason.contains("active-backup"), "{}", m[0]);
        }
        // Already flagged by their own rules: 802.3ad facing on, a static
        // bond facing LACP.
        assert!(codes(&run(HOST, &sw("on"), None)).contains(&"lacp-facing-on"));
        let xor = HOST.replace("802.3ad", "balance-xor");
        assert!(codes(&run(&xor, &sw("active"), None)).contains(&"static-facing-lacp"));
    }

    #[test]
    fn a_clean_run_says_what_it_compared() {
        let sw = "interface range gi1/1 - 2\nmtu 9000\nchannel-group 1 mode active\nlacp rate fast\ninterface po1\nmtu 9000\nport-channel load-balance src-dst-port\n";
        let r = run_report(HOST, sw);
        assert!(r.findings.is_empty(), "{:#?}", r.findings);
        assert_eq!(r.compared.len(), 3, "{:?}", r.compared);
        assert!(
            r.compared[2].starts_with("bond bond0 facing switch.cfg channel 1 (switch.cfg)"),
            "{:?}",
            r.compared
        );
        let i = crate::facts::read_input("switch.cfg", sw).unwrap();
        assert_eq!(
            i.counts.to_string(),
            "switch: 3 interfaces, 1 channel, 8 settings"
        );
        let i = crate::facts::read_input("bond.toml", HOST).unwrap();
        assert_eq!(i.counts.to_string(), "bond: 1 bond, 2 members, 3 settings");
    }
}
