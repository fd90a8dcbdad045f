//! Cisco's `show` commands as text: `show etherchannel summary`, `show
//! etherchannel load-balance`, `show mac address-table`, `show interfaces
//! counters` and `test etherchannel load-balance`.
//!
//! Formatted by hand, not with `comfy-table` or `tabled`: the output must
//! be IOS's own, byte for byte where an engineer compares it with a
//! Catalyst (the flag legend above the table, `Po1(SU)`, members on one
//! line separated by blanks, fixed column widths even when a cell is
//! longer, no borders), which a generic table crate does not produce.

use crate::bridge::{Bridge, DropReason};
use crate::config::ChannelSpec;
use crate::{ChannelId, Logical, PortId};
use lagkit_hash::FlowKey;
use std::fmt::Write;

/// A member's state, as `show etherchannel summary` flags it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemberFlag {
    /// `P`: bundled in the port-channel.
    Bundled,
    /// `s`: suspended (its settings differ from the channel's, or its
    /// partner does not match).
    Suspended,
    /// `I`: stand-alone (no protocol partner; forwards on its own).
    Individual,
    /// `D`: down.
    Down,
    /// `H`: hot standby (LACP, beyond max-bundle).
    HotStandby,
    /// `w`: waiting to be aggregated.
    Waiting,
}

impl MemberFlag {
    /// The flag's letter in `show etherchannel summary`.
    pub fn letter(self) -> char {
        match self {
            MemberFlag::Bundled => 'P',
            MemberFlag::Suspended => 's',
            MemberFlag::Individual => 'I',
            MemberFlag::Down => 'D',
            MemberFlag::HotStandby => 'H',
            MemberFlag::Waiting => 'w',
        }
    }
}

/// `GigabitEthernet8/4` as IOS abbreviates it in tables: `Gi8/4`.
pub fn short_name(name: &str) -> String {
    let split = name
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(name.len());
    let (kind, num) = name.split_at(split);
    let short = match kind {
        "GigabitEthernet" => "Gi",
        "TenGigabitEthernet" => "Te",
        "FastEthernet" => "Fa",
        "Ethernet" => "Et",
        "Port-channel" => "Po",
        "TwentyFiveGigE" => "Twe",
        "FortyGigabitEthernet" => "Fo",
        "HundredGigE" => "Hu",
        other => other,
    };
    format!("{short}{num}")
}

fn port_name(b: &Bridge, p: PortId) -> String {
    b.port(p)
        .map_or(format!("port{}", p.0), |c| short_name(&c.name))
}

/// `show etherchannel summary`: each channel with its protocol and its
/// members' flags (`flags[i]` for `spec.members[i]`).
pub fn etherchannel_summary(b: &Bridge, channels: &[(ChannelSpec, Vec<MemberFlag>)]) -> String {
    let mut s = String::from(
        "Flags:  D - down        P - bundled in port-channel\n        I - stand-alone s - suspended\n        H - Hot-standby (LACP only)\n        S - Layer2      U - in use      w - waiting to be aggregated\n\n",
    );
    let in_use = channels
        .iter()
        .filter(|(_, f)| f.contains(&MemberFlag::Bundled))
        .count();
    let _ = writeln!(s, "Number of channel-groups in use: {}", channels.len());
    let _ = writeln!(s, "Number of aggregators:           {in_use}\n");
    s.push_str("Group  Port-channel  Protocol    Ports\n");
    s.push_str(
        "------+-------------+-----------+-----------------------------------------------\n",
    );
    for (spec, flags) in channels {
        let used = if flags.contains(&MemberFlag::Bundled) {
            "SU"
        } else {
            "SD"
        };
        let protocol = match spec.mode.protocol() {
            "lacp" => "LACP",
            "pagp" => "PAgP",
            _ => "-",
        };
        let members: Vec<String> = spec
            .members
            .iter()
            .zip(flags)
            .map(|((p, _), f)| format!("{}({})", port_name(b, *p), f.letter()))
            .collect();
        let _ = writeln!(
            s,
            "{:<6} {:<13} {:<11} {}",
            spec.id.0,
            format!("Po{}({used})", spec.id.0),
            protocol,
            members.join(" ")
        );
    }
    s
}

/// `show etherchannel load-balance`.
pub fn etherchannel_load_balance(b: &Bridge, method: &str, adaptive: bool) -> String {
    let mut s = String::from("EtherChannel Load-Balancing Configuration:\n");
    let _ = writeln!(s, "        {method}");
    let _ = writeln!(
        s,
        "        hash-distribution {}",
        if adaptive { "adaptive" } else { "fixed" }
    );
    let _ = writeln!(
        s,
        "\nEtherChannel Load-Balancing Addresses Used Per-Protocol:"
    );
    let _ = writeln!(s, "  {}", b.policy());
    s
}

fn mac_text(m: &[u8; 6]) -> String {
    format!(
        "{:02x}{:02x}.{:02x}{:02x}.{:02x}{:02x}",
        m[0], m[1], m[2], m[3], m[4], m[5]
    )
}

/// `show mac address-table` at `now`.
pub fn mac_address_table(b: &Bridge, now: u64) -> String {
    let mut s = String::from(
        "          Mac Address Table\n-------------------------------------------\n\nVlan    Mac Address       Type        Ports\n----    -----------       --------    -----\n",
    );
    let rows = b.fdb().rows(now);
    for r in &rows {
        let at = match r.at {
            Logical::Port(p) => port_name(b, p),
            Logical::Channel(c) => format!("Po{}", c.0),
        };
        let _ = writeln!(
            s,
            "{:>4}    {}    DYNAMIC     {at}",
            r.vlan,
            mac_text(&r.mac)
        );
    }
    let _ = writeln!(s, "Total Mac Addresses for this criterion: {}", rows.len());
    s
}

/// `show interfaces counters` (with giants and drops, which IOS shows in
/// `show interfaces counters errors`).
pub fn interfaces_counters(b: &Bridge) -> String {
    let mut s = format!(
        "{:<10} {:>14} {:>12} {:>14} {:>12} {:>8} {:>8}\n",
        "Port", "InOctets", "InFrames", "OutOctets", "OutFrames", "Giants", "Drops"
    );
    for (p, _) in b.ports() {
        let Some(c) = b.counters(p) else { continue };
        let drops: u64 = c.drops.iter().sum::<u64>() - c.dropped(DropReason::Giant);
        let _ = writeln!(
            s,
            "{:<10} {:>14} {:>12} {:>14} {:>12} {:>8} {:>8}",
            port_name(b, p),
            c.rx_bytes,
            c.rx_frames,
            c.tx_bytes,
            c.tx_frames,
            c.dropped(DropReason::Giant),
            drops
        );
    }
    s
}

/// `test etherchannel load-balance interface port-channel N ...`: which
/// member a frame with `key` takes, and why.
pub fn test_load_balance(b: &Bridge, id: ChannelId, key: &FlowKey, method: &str) -> String {
    match b.test_load_balance(id, key) {
        None => format!("Po{} does not exist\n", id.0),
        Some((bucket, None)) => format!(
            "Po{}: no member is bundled (the flow hashes to bucket {bucket} of 8 by {method})\n",
            id.0
        ),
        Some((bucket, Some(p))) => format!(
            "Would select {} of Po{} (bucket {bucket} of 8 by {method})\n",
            port_name(b, p),
            id.0
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::from_ios;

    fn lab() -> (Bridge, Vec<ChannelSpec>) {
        let text = "port-channel load-balance src-dst-ip\ninterface range gi8/4 - 5\n channel-group 3 mode active\ninterface gi1/1\n";
        let ports: Vec<(String, String)> = ["gi8/4", "gi8/5", "gi1/1"]
            .iter()
            .map(|n| (n.to_string(), "v".into()))
            .collect();
        let c = from_ios(text, &ports).unwrap();
        (c.bridge, c.channels)
    }

    #[test]
    fn summary_names_ports_and_flags_like_ios() {
        let (mut b, specs) = lab();
        b.set_bundled(PortId(0), true);
        let s = etherchannel_summary(
            &b,
            &[(
                specs[0].clone(),
                vec![MemberFlag::Bundled, MemberFlag::Suspended],
            )],
        );
        assert!(
            s.contains("3      Po3(SU)       LACP        Gi8/4(P) Gi8/5(s)"),
            "{s}"
        );
        assert!(s.contains("Number of aggregators:           1"), "{s}");
        assert_eq!(short_name("TenGigabitEthernet1/0/1"), "Te1/0/1");
        assert_eq!(short_name("Port-channel3"), "Po3");
    }

    #[test]
    fn mac_table_counters_and_the_load_balance_test() {
        let (mut b, _) = lab();
        b.set_bundled(PortId(0), true);
        b.set_bundled(PortId(1), true);
        let mut f = vec![0xffu8; 6];
        f.extend_from_slice(&[2, 0, 0, 0, 0, 7, 0x08, 0x06]);
        f.resize(60, 0);
        b.receive(PortId(2), &f, 0);
        let t = mac_address_table(&b, 1);
        assert!(
            t.contains("   1    0200.0000.0007    DYNAMIC     Gi1/1"),
            "{t}"
        );
        assert!(t.contains("Total Mac Addresses for this criterion: 1"));
        let c = interfaces_counters(&b);
        assert!(
            c.lines()
                .any(|l| l.starts_with("Gi1/1") && l.contains(" 60 ")),
            "{c}"
        );
        // src-dst-ip over 10.0.0.1 -> 10.0.0.6: (1 ^ 6) & 7 = 7, bucket 7
        // of 2 members: Gi8/5.
        let key = FlowKey::ports(
            "10.0.0.1".parse().unwrap(),
            1,
            "10.0.0.6".parse().unwrap(),
            2,
            6,
        )
        .with_ethertype(0x0800);
        let s = test_load_balance(&b, ChannelId(3), &key, "src-dst-ip");
        assert_eq!(
            s,
            "Would select Gi8/5 of Po3 (bucket 7 of 8 by src-dst-ip)\n"
        );
        assert!(test_load_balance(&b, ChannelId(9), &key, "x").contains("does not exist"));
        let lb = etherchannel_load_balance(&b, "src-dst-ip", false);
        assert!(
            lb.contains("        src-dst-ip\n        hash-distribution fixed"),
            "{lb}"
        );
    }
}
