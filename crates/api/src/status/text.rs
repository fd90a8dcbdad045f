//! `lagkit status`'s own layout: the kernel's `/proc/net/bonding` lines
//! and order where they exist, with what lagkit adds (the engine and its
//! pins, the policy's seed, what each member carries, its watchers,
//! isolation and offloads, the LACP machines, PAgP, the problems found).

use super::{BondStatus, LacpInfo, MemberLacp, MemberPagp, MemberStatus};
use std::fmt::Write as _;

/// A state octet with its bits named (`0x3f (A S G Y C D . .)`).
fn state_bits(s: u8) -> String {
    lagkit_wire::PortState(s).to_string()
}

/// `Speed: N Mbps` or `Unknown`, as the kernel writes a member's.
pub(super) fn speed(mbps: Option<u32>) -> String {
    mbps.map_or("Unknown".to_string(), |s| format!("{s} Mbps"))
}

/// The `Active Aggregator Info:` block, with its tab-indented lines as the
/// kernel writes them (a partner not heard has key 1 and a zero MAC).
pub(super) fn aggregator_lines(o: &mut String, id: u16, l: &LacpInfo) {
    let _ = writeln!(o, "Active Aggregator Info:");
    let _ = writeln!(o, "\tAggregator ID: {id}");
    let _ = writeln!(o, "\tNumber of ports: {}", l.number_of_ports);
    let _ = writeln!(o, "\tActor Key: {}", l.actor_key.unwrap_or(0));
    let _ = writeln!(o, "\tPartner Key: {}", l.partner_key.unwrap_or(1));
    let mac = l.partner_mac.as_deref().unwrap_or("00:00:00:00:00:00");
    let _ = writeln!(o, "\tPartner Mac Address: {mac}");
}

/// The `details actor lacp pdu:` and `details partner lacp pdu:` blocks,
/// each state octet written by `state`.
pub(super) fn pdu_lines(o: &mut String, l: &MemberLacp, state: fn(u8) -> String) {
    let _ = writeln!(o, "details actor lacp pdu:");
    let _ = writeln!(o, "    system priority: {}", l.actor_system_priority);
    let _ = writeln!(o, "    system mac address: {}", l.actor_system_mac);
    let _ = writeln!(o, "    port key: {}", l.actor_key);
    let _ = writeln!(o, "    port priority: {}", l.actor_port_priority);
    let _ = writeln!(o, "    port number: {}", l.actor_port);
    let _ = writeln!(o, "    port state: {}", state(l.actor_state));
    let _ = writeln!(o, "details partner lacp pdu:");
    let _ = writeln!(o, "    system priority: {}", l.partner_system_priority);
    let _ = writeln!(o, "    system mac address: {}", l.partner_mac);
    let _ = writeln!(o, "    oper key: {}", l.partner_key);
    let _ = writeln!(o, "    port priority: {}", l.partner_port_priority);
    let _ = writeln!(o, "    port number: {}", l.partner_port);
    let _ = writeln!(o, "    port state: {}", state(l.partner_state));
}

/// `full`, `half` or `Unknown`.
pub(super) fn duplex(full: Option<bool>) -> &'static str {
    match full {
        Some(true) => "full",
        Some(false) => "half",
        None => "Unknown",
    }
}

impl BondStatus {
    /// Text in lagkit's layout (see the module doc).
    pub fn render(&self) -> String {
        let mut o = String::new();
        self.render_head(&mut o);
        if let Some(l) = &self.lacp {
            self.render_lacp(&mut o, l);
        }
        if let Some(p) = &self.pagp {
            let _ = writeln!(o, "\nPAgP info");
            let silent = if p.silent { "silent" } else { "non-silent" };
            let _ = writeln!(o, "PAgP mode: {} ({silent})", p.mode);
            let _ = writeln!(o, "PAgP hello rate: {}", p.rate);
            let _ = writeln!(o, "Device ID: {}", p.device_id);
            let _ = writeln!(o, "Members in channel: {}", p.members_in_channel);
        }
        for m in &self.members {
            render_member(&mut o, m);
        }
        if !self.problems.is_empty() {
            let _ = writeln!(o, "\nProblems:");
            for p in &self.problems {
                let _ = writeln!(o, "  - {p}");
            }
        }
        o
    }

    fn render_head(&self, o: &mut String) {
        let _ = writeln!(o, "Bond: {}", self.name);
        let _ = writeln!(o, "Bonding Mode: {}", self.mode.description());
        let policy = match self.xmit_hash_number {
            Some(n) => format!("{} ({n})", self.xmit_hash_policy),
            None => self.xmit_hash_policy.clone(),
        };
        let _ = writeln!(o, "Transmit Hash Policy: {policy}");
        if let Some(seed) = self.hash_seed {
            let sym = if self.hash_symmetric {
                " (symmetric)"
            } else {
                ""
            };
            let _ = writeln!(o, "Hash Seed: {seed}{sym}");
        }
        let _ = writeln!(o, "Engine: {} ({})", self.engine, self.engine_reason);
        if let Some(d) = &self.datapath {
            let _ = match &d.pinned {
                Some(dir) => writeln!(o, "Data path: pinned in {dir} (forwards across a restart)"),
                None => writeln!(o, "Data path: not pinned (a restart interrupts traffic)"),
            };
        }
        if self.mode.has_active_member() {
            let _ = writeln!(o, "{}", self.primary_line());
            let _ = writeln!(
                o,
                "Currently Active Slave: {}",
                self.active_member.as_deref().unwrap_or("None")
            );
        }
        let _ = writeln!(o, "MII Status: {}", self.mii_status);
        let _ = writeln!(o, "Speed: {}", speed(self.speed_mbps));
        let _ = writeln!(o, "MAC Address: {}  MTU: {}", self.mac, self.mtu);
        let _ = writeln!(o, "MII Polling Interval (ms): {}", self.miimon_ms);
        let _ = writeln!(o, "Up Delay (ms): {}", self.updelay_ms);
        let _ = writeln!(o, "Down Delay (ms): {}", self.downdelay_ms);
        let _ = writeln!(
            o,
            "Peer Notification Delay (ms): {}",
            self.peer_notif_delay_ms
        );
        if let Some(a) = &self.arp {
            self.render_arp(o, a);
        }
    }

    /// `Primary Slave: eth0 (primary_reselect always)`, or `None`.
    pub(super) fn primary_line(&self) -> String {
        // The kernel names a primary only while it is a member.
        match self
            .primary
            .as_ref()
            .filter(|p| self.members.iter().any(|m| &m.name == *p))
        {
            Some(p) => format!(
                "Primary Slave: {p} (primary_reselect {})",
                self.primary_reselect
            ),
            None => "Primary Slave: None".to_string(),
        }
    }

    pub(super) fn render_arp(&self, o: &mut String, a: &super::ArpMonitor) {
        let list = |v: &[String]| -> String {
            v.iter()
                .map(|t| format!(" {t}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        let _ = writeln!(o, "ARP Polling Interval (ms): {}", a.interval_ms);
        let _ = writeln!(o, "ARP Missed Max: {}", a.missed_max);
        let _ = writeln!(o, "ARP IP target/s (n.n.n.n form):{}", list(&a.targets));
        let _ = writeln!(o, "NS IPv6 target/s (xx::xx form):{}", list(&a.ns_targets));
    }

    fn render_lacp(&self, o: &mut String, l: &LacpInfo) {
        let _ = writeln!(o, "\n802.3ad info");
        let _ = writeln!(o, "LACP active: {}", l.lacp_activity);
        let _ = writeln!(o, "LACP rate: {}", l.lacp_rate);
        let _ = writeln!(o, "Min links: {}", l.min_links);
        let _ = writeln!(
            o,
            "Aggregator selection policy (ad_select): {}",
            l.ad_select
        );
        if self.details_withheld {
            let _ = writeln!(
                o,
                "(system, aggregator and PDU details need CAP_NET_ADMIN, as in /proc/net/bonding)"
            );
            return;
        }
        let _ = writeln!(o, "System priority: {}", l.system_priority);
        let _ = writeln!(o, "System MAC address: {}", l.system_mac);
        match l.aggregator_id {
            Some(id) => aggregator_lines(o, id, l),
            None => {
                let _ = writeln!(o, "Active Aggregator Info: none (no aggregate formed)");
            }
        }
    }
}

fn render_member(o: &mut String, m: &MemberStatus) {
    let yes = |b: bool| if b { "yes" } else { "no" };
    let _ = writeln!(o, "\nSlave Interface: {}", m.name);
    let _ = writeln!(o, "MII Status: {}", m.mii_status);
    let _ = writeln!(o, "Speed: {}", speed(m.speed_mbps));
    let _ = writeln!(o, "Duplex: {}", duplex(m.full_duplex));
    let _ = writeln!(o, "Link Failure Count: {}", m.link_failure_count);
    let _ = writeln!(o, "Permanent HW addr: {}", m.permanent_hw_addr);
    let _ = writeln!(
        o,
        "Carrying traffic: transmit {}, receive {}",
        yes(m.transmitting),
        yes(m.collecting)
    );
    if m.leaving {
        let _ = writeln!(
            o,
            "Leaving: removed from the configuration; given back once its partner stops sending on it"
        );
    }
    if let Some(i) = &m.isolation {
        let _ = writeln!(o, "Host stack isolation: {i}");
    }
    if let Some(off) = &m.offloads {
        let _ = write!(o, "Transmit offloads: {}", off.groups());
        if off.kept_off {
            let _ = write!(o, " (offloads = false: turned off by lagkit");
            let _ = match off.turned_off.is_empty() {
                true => write!(o, "; none was on)"),
                false => write!(
                    o,
                    "; turned back on at exit: {})",
                    off.turned_off.join(", ")
                ),
            };
        }
        let _ = writeln!(o);
    }
    if !m.watchers.is_empty() {
        let w: Vec<String> = m
            .watchers
            .iter()
            .map(|(n, up)| format!("{n}={}", if *up { "up" } else { "down" }))
            .collect();
        let _ = writeln!(o, "Link watchers: {}", w.join(" "));
    }
    if let Some(l) = &m.lacp {
        render_member_lacp(o, l);
    }
    if let Some(p) = &m.pagp {
        render_member_pagp(o, p);
    }
}

fn render_member_lacp(o: &mut String, l: &MemberLacp) {
    let id = l
        .aggregator_id
        .map_or("none".to_string(), |a| a.to_string());
    let _ = writeln!(o, "Aggregator ID: {id}");
    let _ = writeln!(
        o,
        "Actor Churn State: {}",
        l.actor_churn_state.standard_name(false)
    );
    let _ = writeln!(
        o,
        "Partner Churn State: {}",
        l.partner_churn_state.standard_name(true)
    );
    let _ = writeln!(o, "Actor Churned Count: {}", l.actor_churned_count);
    let _ = writeln!(o, "Partner Churned Count: {}", l.partner_churned_count);
    if !l.actor_system_mac.is_empty() {
        pdu_lines(o, l, state_bits);
    }
    let _ = writeln!(
        o,
        "LACP machines: rx {} mux {} selected {}",
        l.rx_state, l.mux_state, l.selected
    );
    if let Some(r) = &l.not_bundled {
        let _ = writeln!(o, "Not in bundle: {r}");
    }
}

/// A member's PAgP lines of the status text.
fn render_member_pagp(o: &mut String, p: &MemberPagp) {
    let inside = if p.in_channel {
        "in channel"
    } else {
        "not in channel"
    };
    let _ = writeln!(o, "PAgP state: {} ({inside})", p.state);
    match &p.partner_device_id {
        Some(d) => {
            let _ = writeln!(o, "PAgP partner:");
            let _ = writeln!(o, "    device id: {d}");
            if let Some(n) = &p.partner_device_name {
                let _ = writeln!(o, "    device name: {n}");
            }
            let _ = writeln!(
                o,
                "    port: {} (ifindex {})",
                p.partner_port_name.as_deref().unwrap_or("?"),
                p.partner_port.unwrap_or(0)
            );
            let _ = writeln!(
                o,
                "    group capability: {:#010x}",
                p.partner_group_capability.unwrap_or(0)
            );
            let _ = writeln!(
                o,
                "    group ifindex: {}",
                p.partner_group_ifindex.unwrap_or(0)
            );
            let _ = writeln!(
                o,
                "    mode: {}, learn method: {}",
                p.partner_mode.as_deref().unwrap_or("?"),
                p.partner_learn.as_deref().unwrap_or("?")
            );
        }
        None => {
            let _ = writeln!(o, "PAgP partner: none heard");
        }
    }
    let _ = writeln!(
        o,
        "PAgP hellos: rx {} tx {} bad {}",
        p.hellos_rx, p.hellos_tx, p.bad_rx
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::{
        BondMode, EngineKind, LacpActivity, LacpRate, MemberOffloads, MiiStatus, PagpInfo,
        PagpState,
    };

    fn member(name: &str) -> MemberStatus {
        MemberStatus {
            name: name.into(),
            mii_status: MiiStatus::Up,
            ..MemberStatus::default()
        }
    }

    #[test]
    fn pagp_partners_offloads_and_the_policy_seed_are_shown() {
        let mut a = member("eth1");
        a.pagp = Some(MemberPagp {
            state: PagpState::UpPagp,
            in_channel: true,
            partner_device_id: Some("02:00:00:00:00:09".into()),
            partner_port: Some(2),
            partner_port_name: Some("Gi1/2".into()),
            partner_device_name: Some("core".into()),
            partner_group_capability: Some(0x0001_0001),
            partner_group_ifindex: Some(7),
            partner_mode: Some("auto".into()),
            partner_learn: Some("aggregation-port".into()),
            hellos_rx: 3,
            hellos_tx: 4,
            bad_rx: 0,
        });
        let mut b = member("eth2");
        b.pagp = Some(MemberPagp {
            state: PagpState::Up,
            ..MemberPagp::default()
        });
        b.offloads = Some(MemberOffloads {
            tx: false,
            tso: false,
            gso: false,
            kept_off: true,
            turned_off: vec![
                "tx-checksum-ip-generic".into(),
                "tx-generic-segmentation".into(),
            ],
        });
        let st = BondStatus {
            name: "bond0".into(),
            mode: BondMode::BalanceXor,
            xmit_hash_policy: "strong".into(),
            hash_seed: Some(17207677037186953005),
            uses_xmit_hash: true,
            engine: EngineKind::Bpf,
            engine_reason: "engine = bpf".into(),
            mii_status: MiiStatus::Up,
            speed_mbps: Some(20000),
            mtu: 1500,
            pagp: Some(PagpInfo {
                mode: "desirable".into(),
                silent: true,
                rate: "slow".into(),
                device_id: "02:00:00:00:00:01".into(),
                members_in_channel: 1,
            }),
            members: vec![a, b],
            ..BondStatus::default()
        };
        let text = st.render();
        for line in [
            "Bonding Mode: load balancing (xor)\n",
            "Transmit Hash Policy: strong\nHash Seed: 17207677037186953005\n",
            "Engine: bpf (engine = bpf)\n",
            "MII Status: up\nSpeed: 20000 Mbps\n",
            "PAgP mode: desirable (silent)\n",
            "Members in channel: 1\n",
            "PAgP state: upPagp (in channel)\n",
            "    device id: 02:00:00:00:00:09\n",
            "    port: Gi1/2 (ifindex 2)\n",
            "    group capability: 0x00010001\n",
            "    mode: auto, learn method: aggregation-port\n",
            "PAgP state: portUp (not in channel)\nPAgP partner: none heard\n",
            "Transmit offloads: tx off, tso off, gso off (offloads = false: turned off by lagkit; turned back on at exit: tx-checksum-ip-generic, tx-generic-segmentation)\n",
        ] {
            assert!(text.contains(line), "{line:?} in {text}");
        }
        assert!(!text.contains("Currently Active Slave"), "{text}");
        let json = serde_json::to_string(&st).unwrap();
        assert_eq!(serde_json::from_str::<BondStatus>(&json).unwrap(), st);
    }

    #[test]
    fn the_active_member_lacp_details_and_what_is_withheld_are_shown() {
        let mut m = member("eth1");
        m.lacp = Some(MemberLacp {
            aggregator_id: Some(1),
            actor_system_mac: "02:00:00:00:00:01".into(),
            actor_system_priority: 65535,
            actor_port_priority: 255,
            actor_port: 1,
            actor_key: 9,
            actor_state: 0x3f,
            partner_system_priority: 32768,
            partner_mac: "00:1b:54:c2:7a:80".into(),
            partner_port_priority: 32768,
            partner_port: 304,
            partner_key: 10,
            partner_state: 0x3f,
            actor_churned_count: 2,
            ..MemberLacp::default()
        });
        let st = BondStatus {
            name: "bond0".into(),
            mode: BondMode::Lacp,
            xmit_hash_policy: "layer3+4".into(),
            xmit_hash_number: Some(1),
            lacp: Some(LacpInfo {
                lacp_rate: LacpRate::Fast,
                lacp_activity: LacpActivity::Active,
                min_links: 2,
                system_priority: 65535,
                system_mac: "02:00:00:00:00:01".into(),
                aggregator_id: Some(1),
                number_of_ports: 1,
                ..LacpInfo::default()
            }),
            members: vec![m],
            ..BondStatus::default()
        };
        let text = st.render();
        for line in [
            "Transmit Hash Policy: layer3+4 (1)\n",
            "Min links: 2\nAggregator selection policy (ad_select): stable\n",
            "Actor Churn State: NO_ACTOR_CHURN\n",
            "Actor Churned Count: 2\n",
            "    port priority: 255\n",
            "    system priority: 32768\n",
            "    port state: 0x3f (A S G Y C D . .)\n",
        ] {
            assert!(text.contains(line), "{line:?} in {text}");
        }
        let public = st.clone().withhold_details().render();
        assert!(public.contains("need CAP_NET_ADMIN"), "{public}");
        assert!(!public.contains("details actor lacp pdu"), "{public}");
        assert!(!public.contains("02:00:00:00:00:01"), "{public}");
        let ab = BondStatus {
            mode: BondMode::ActiveBackup,
            primary: Some("eth1".into()),
            active_member: Some("eth1".into()),
            members: vec![member("eth1")],
            ..BondStatus::default()
        };
        let text = ab.render();
        assert!(
            text.contains(
                "Primary Slave: eth1 (primary_reselect always)\nCurrently Active Slave: eth1\n"
            ),
            "{text}"
        );
    }
}
