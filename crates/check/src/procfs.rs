//! `/proc/net/bonding/<bond>` read whole into the typed status
//! (`lagkit_api::status::BondStatus`) that `lagkit status` serves: every
//! field the kernel writes, for every mode, from Linux 3.x to 6.x (fields
//! a kernel does not have stay at their defaults), and the layout `lagkit
//! status --format proc` writes. What a reader without CAP_NET_ADMIN sees
//! (no system, aggregator or PDU details) reads as `details_withheld`.
//!
//! A line this reader does not know is skipped, as the kernel adds lines
//! over the years; a value that is not what its field holds is an error
//! naming the line.

use lagkit_api::status::{
    ArpMonitor, BondMode, BondStatus, LacpActivity, LacpInfo, MemberLacp, MemberStatus,
};

/// Why a file is not `/proc/net/bonding/<bond>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {why}")]
pub struct ProcError {
    /// The line (from 1).
    pub line: usize,
    /// What is wrong with it.
    pub why: String,
}

/// A bond read from its `/proc/net/bonding` file, and the driver version
/// its first line names (`6.8.0-90-generic`, `3.7.1 (April 27, 2011)`).
#[derive(Debug, Clone, PartialEq)]
pub struct ProcBond {
    /// The bond (its name is the `bond X has no active aggregator` line's,
    /// else empty: the file's name is the bond's).
    pub status: BondStatus,
    /// What follows `Ethernet Channel Bonding Driver: v`.
    pub version: String,
}

/// Which block the lines being read belong to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    Bond,
    Lacp,
    Aggregator,
    Member,
    Actor,
    Partner,
}

/// Reads one bond's `/proc/net/bonding` file.
pub fn parse(text: &str) -> Result<ProcBond, ProcError> {
    let mut st = BondStatus::default();
    let mut version = None;
    let mut block = Block::Bond;
    // The kernel writes the system details only for CAP_NET_ADMIN.
    let mut saw_system = false;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let bad = |why: String| ProcError { line, why };
        if let Some(v) = raw.strip_prefix("Ethernet Channel Bonding Driver: ") {
            version = Some(v.strip_prefix('v').unwrap_or(v).to_string());
            continue;
        }
        if raw == "802.3ad info" {
            block = Block::Lacp;
            st.lacp.get_or_insert_with(LacpInfo::default);
            continue;
        }
        if let Some(rest) = raw.strip_prefix("bond ") {
            if let Some(name) = rest.strip_suffix(" has no active aggregator") {
                st.name = name.to_string();
                saw_system = true;
            }
            continue;
        }
        let Some((k, v)) = raw.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        let num = |v: &str| -> Result<u64, ProcError> {
            v.parse::<u64>()
                .map_err(|_| bad(format!("{k}: '{v}' is not a number")))
        };
        let word = |v: &str| -> Result<_, ProcError> { Ok(v.to_string()) };
        match (block, k) {
            (_, "Slave Interface") => {
                block = Block::Member;
                st.members.push(MemberStatus {
                    name: v.to_string(),
                    ..MemberStatus::default()
                });
            }
            (Block::Bond, "Bonding Mode") => {
                let (mode, fom) = match v.split_once(" (fail_over_mac ") {
                    Some((m, f)) => (m, Some(f.trim_end_matches(')'))),
                    None => (v, None),
                };
                st.mode = mode.parse().map_err(bad)?;
                if let Some(f) = fom {
                    st.fail_over_mac = f.parse().map_err(bad)?;
                }
            }
            (Block::Bond, "Transmit Hash Policy") => {
                st.uses_xmit_hash = true;
                let (name, n) = v.split_once(" (").unwrap_or((v, ""));
                st.xmit_hash_policy = name.to_string();
                st.xmit_hash_number = n.trim_end_matches(')').parse().ok();
            }
            (Block::Bond, "Primary Slave") => {
                let (name, rest) = v.split_once(" (primary_reselect ").unwrap_or((v, ""));
                st.primary = (name != "None").then(|| name.to_string());
                if !rest.is_empty() {
                    st.primary_reselect = rest.trim_end_matches(')').parse().map_err(bad)?;
                }
            }
            (Block::Bond, "Currently Active Slave") => {
                st.active_member = (v != "None").then(|| v.to_string())
            }
            (Block::Bond, "MII Status") => st.mii_status = v.parse().map_err(bad)?,
            (Block::Bond, "MII Polling Interval (ms)") => st.miimon_ms = num(v)?,
            (Block::Bond, "Up Delay (ms)") => st.updelay_ms = num(v)?,
            (Block::Bond, "Down Delay (ms)") => st.downdelay_ms = num(v)?,
            (Block::Bond, "Peer Notification Delay (ms)") => st.peer_notif_delay_ms = num(v)?,
            (Block::Bond, "ARP Polling Interval (ms)") => {
                st.arp.get_or_insert_with(arp_default).interval_ms = num(v)?
            }
            (Block::Bond, "ARP Missed Max") => {
                st.arp.get_or_insert_with(arp_default).missed_max = u32::try_from(num(v)?)
                    .map_err(|_| bad(format!("ARP Missed Max: {v} is too large")))?
            }
            (Block::Bond, "ARP IP target/s (n.n.n.n form)") => {
                st.arp.get_or_insert_with(arp_default).targets = list(v)
            }
            (Block::Bond, "NS IPv6 target/s (xx::xx form)") => {
                st.arp.get_or_insert_with(arp_default).ns_targets = list(v)
            }
            (Block::Lacp | Block::Aggregator, _) => {
                let l = st.lacp.get_or_insert_with(LacpInfo::default);
                match k {
                    "LACP active" => {
                        l.lacp_activity = match v {
                            "on" => LacpActivity::Active,
                            _ => LacpActivity::Passive,
                        }
                    }
                    "LACP rate" => l.lacp_rate = v.parse().map_err(bad)?,
                    "Min links" => l.min_links = u32::try_from(num(v)?).unwrap_or(u32::MAX),
                    "Aggregator selection policy (ad_select)" => {
                        l.ad_select = v.parse().map_err(bad)?
                    }
                    "System priority" => {
                        saw_system = true;
                        l.system_priority = small(num(v)?, k, line)?;
                    }
                    "System MAC address" => l.system_mac = word(v)?,
                    "Active Aggregator Info" => {
                        saw_system = true;
                        block = Block::Aggregator;
                    }
                    "Aggregator ID" => l.aggregator_id = Some(small(num(v)?, k, line)?),
                    "Number of ports" => l.number_of_ports = num(v)? as usize,
                    "Actor Key" => l.actor_key = Some(small(num(v)?, k, line)?),
                    "Partner Key" => l.partner_key = Some(small(num(v)?, k, line)?),
                    "Partner Mac Address" => l.partner_mac = Some(word(v)?),
                    _ => {}
                }
            }
            (Block::Member | Block::Actor | Block::Partner, _) => {
                let Some(m) = st.members.last_mut() else {
                    continue;
                };
                member_line(m, &mut block, k, v, line)?;
            }
            _ => {}
        }
    }
    let Some(version) = version else {
        return Err(ProcError {
            line: 1,
            why: "not /proc/net/bonding: no 'Ethernet Channel Bonding Driver:' line".into(),
        });
    };
    st.details_withheld = st.mode == BondMode::Lacp && !saw_system;
    Ok(ProcBond {
        status: st,
        version,
    })
}

fn arp_default() -> ArpMonitor {
    ArpMonitor {
        missed_max: 2,
        ..ArpMonitor::default()
    }
}

/// `10.0.0.1, 10.0.0.2` (or nothing).
fn list(v: &str) -> Vec<String> {
    v.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn small(n: u64, k: &str, line: usize) -> Result<u16, ProcError> {
    u16::try_from(n).map_err(|_| ProcError {
        line,
        why: format!("{k}: {n} does not fit in 16 bits"),
    })
}

/// One line of a member's record.
fn member_line(
    m: &mut MemberStatus,
    block: &mut Block,
    k: &str,
    v: &str,
    line: usize,
) -> Result<(), ProcError> {
    let bad = |why: String| ProcError { line, why };
    let num = |v: &str| -> Result<u64, ProcError> {
        v.parse::<u64>()
            .map_err(|_| bad(format!("{k}: '{v}' is not a number")))
    };
    match (*block, k) {
        (_, "details actor lacp pdu") => *block = Block::Actor,
        (_, "details partner lacp pdu") => *block = Block::Partner,
        (Block::Member, "MII Status") => m.mii_status = v.parse().map_err(bad)?,
        (Block::Member, "Speed") => {
            m.speed_mbps = v.strip_suffix(" Mbps").and_then(|s| s.parse().ok())
        }
        (Block::Member, "Duplex") => {
            m.full_duplex = match v {
                "full" => Some(true),
                "half" => Some(false),
                _ => None,
            }
        }
        (Block::Member, "Link Failure Count") => m.link_failure_count = num(v)?,
        (Block::Member, "Permanent HW addr") => m.permanent_hw_addr = v.to_string(),
        (Block::Member, "Slave queue ID") => {
            m.queue_id = u16::try_from(num(v)?).map_err(|_| bad(format!("{k}: {v}")))?
        }
        (Block::Member, _) => {
            let l = m.lacp.get_or_insert_with(MemberLacp::default);
            match k {
                "Aggregator ID" => {
                    l.aggregator_id = match v {
                        "N/A" => None,
                        _ => Some(small(num(v)?, k, line)?),
                    }
                }
                "Actor Churn State" => l.actor_churn_state = v.parse().map_err(bad)?,
                "Partner Churn State" => l.partner_churn_state = v.parse().map_err(bad)?,
                "Actor Churned Count" => l.actor_churned_count = num(v)?,
                "Partner Churned Count" => l.partner_churned_count = num(v)?,
                _ => {}
            }
        }
        (Block::Actor, _) => {
            let l = m.lacp.get_or_insert_with(MemberLacp::default);
            match k {
                "system priority" => l.actor_system_priority = small(num(v)?, k, line)?,
                "system mac address" => l.actor_system_mac = v.to_string(),
                "port key" => l.actor_key = small(num(v)?, k, line)?,
                "port priority" => l.actor_port_priority = small(num(v)?, k, line)?,
                "port number" => l.actor_port = small(num(v)?, k, line)?,
                "port state" => l.actor_state = octet(v, line)?,
                _ => {}
            }
        }
        (Block::Partner, _) => {
            let l = m.lacp.get_or_insert_with(MemberLacp::default);
            match k {
                "system priority" => l.partner_system_priority = small(num(v)?, k, line)?,
                "system mac address" => l.partner_mac = v.to_string(),
                "oper key" => l.partner_key = small(num(v)?, k, line)?,
                "port priority" => l.partner_port_priority = small(num(v)?, k, line)?,
                "port number" => l.partner_port = small(num(v)?, k, line)?,
                "port state" => l.partner_state = octet(v, line)?,
                _ => {}
            }
        }
        _ => {}
    }
    Ok(())
}

/// A state octet: decimal as the kernel writes it, or lagkit's `0x3f (...)`.
fn octet(v: &str, line: usize) -> Result<u8, ProcError> {
    let w = v.split_whitespace().next().unwrap_or("");
    let n = match w.strip_prefix("0x") {
        Some(h) => u8::from_str_radix(h, 16).ok(),
        None => w.parse().ok(),
    };
    n.ok_or_else(|| ProcError {
        line,
        why: format!("port state: '{v}' is not a state octet"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real kernels' files (tests/proc/README.md says whose).
    const REAL: &[(&str, &str)] = &[
        (
            "802.3ad-charm-magpie.txt",
            include_str!("../tests/proc/802.3ad-charm-magpie.txt"),
        ),
        (
            "802.3ad-churned-charm-magpie.txt",
            include_str!("../tests/proc/802.3ad-churned-charm-magpie.txt"),
        ),
        (
            "802.3ad-member-down-insights-core.txt",
            include_str!("../tests/proc/802.3ad-member-down-insights-core.txt"),
        ),
        (
            "802.3ad-unprivileged-telegraf.txt",
            include_str!("../tests/proc/802.3ad-unprivileged-telegraf.txt"),
        ),
        (
            "802.3ad-unprivileged-5.15-f5bnk-kubespray.txt",
            include_str!("../tests/proc/802.3ad-unprivileged-5.15-f5bnk-kubespray.txt"),
        ),
        (
            "active-backup-insights-core.txt",
            include_str!("../tests/proc/active-backup-insights-core.txt"),
        ),
        (
            "active-backup-arp-insights-core.txt",
            include_str!("../tests/proc/active-backup-arp-insights-core.txt"),
        ),
        (
            "balance-rr-insights-core.txt",
            include_str!("../tests/proc/balance-rr-insights-core.txt"),
        ),
        (
            "balance-xor-insights-core.txt",
            include_str!("../tests/proc/balance-xor-insights-core.txt"),
        ),
    ];

    /// Lines only newer kernels write: left out of the comparison with a
    /// file whose kernel predates them.
    const NEWER: &[&str] = &[
        "Peer Notification Delay (ms):",
        "LACP active:",
        "ARP Missed Max:",
        "NS IPv6 target/s (xx::xx form):",
    ];

    /// Each real file, read into lagkit's status and written back in
    /// `lagkit status --format proc`'s layout, comes back line for line:
    /// same fields, order, spelling, punctuation, tabs and values.
    #[test]
    fn real_kernels_files_are_written_back_line_for_line() {
        let mut modes = std::collections::BTreeSet::new();
        for (name, text) in REAL {
            let b = parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            modes.insert(b.status.mode.as_str());
            let written = b.status.render_proc(&b.version);
            let kept: Vec<&str> = written
                .lines()
                .filter(|l| !NEWER.iter().any(|n| l.starts_with(n) && !text.contains(n)))
                .collect();
            let want: Vec<&str> = text.lines().collect();
            for (i, (got, want)) in kept.iter().zip(&want).enumerate() {
                assert_eq!(got, want, "{name}, line {}:\n{written}", i + 1);
            }
            assert_eq!(kept.len(), want.len(), "{name}:\n{written}");
            // The checker's reader of these files reads lagkit's alike.
            let again = parse(&written).unwrap();
            assert_eq!(again.status, b.status, "{name}");
        }
        assert!(modes.len() >= 4, "four modes at least: {modes:?}");
    }

    #[test]
    fn what_a_reader_without_cap_net_admin_gets_is_withheld_as_the_kernel_does() {
        let (_, text) = REAL[0];
        let b = parse(text).unwrap();
        assert!(!b.status.details_withheld);
        let public = b.status.clone().withhold_details().render_proc(&b.version);
        for gone in [
            "System priority",
            "System MAC address",
            "Active Aggregator Info",
            "details actor lacp pdu",
            "port state:",
        ] {
            assert!(!public.contains(gone), "{gone} in {public}");
        }
        for kept in [
            "Min links: 0",
            "Aggregator selection policy (ad_select): stable",
            "Actor Churn State: none",
            "Aggregator ID: 1",
        ] {
            assert!(public.contains(kept), "{kept} not in {public}");
        }
        assert!(parse(&public).unwrap().status.details_withheld);
    }

    #[test]
    fn a_file_without_the_driver_line_is_refused_and_bad_values_name_their_line() {
        assert_eq!(parse("MII Status: up\n").unwrap_err().line, 1);
        let e =
            parse("Ethernet Channel Bonding Driver: v6.1\n\nBonding Mode: sideways\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        let e = parse("Ethernet Channel Bonding Driver: v6.1\n\nBonding Mode: load balancing (xor)\nMII Polling Interval (ms): soon\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("line 4: MII Polling Interval (ms): 'soon'"),
            "{e}"
        );
    }
}
