//! What `lagkit status` and `lagkit stats` show, as serializable structs
//! (the control socket speaks JSON) and as text in the layout of
//! `/proc/net/bonding/bondX` and AIX `entstat -d`.

use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// The state of one bond, like `/proc/net/bonding/bondX`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BondStatus {
    /// Bond (TAP) name.
    pub name: String,
    /// Bonding mode, Linux name.
    pub mode: String,
    /// Transmit hash policy.
    pub xmit_hash_policy: String,
    /// "up" if any member can carry traffic.
    pub mii_status: String,
    /// The bond's MAC address.
    pub mac: String,
    /// MTU.
    pub mtu: u32,
    /// miimon, updelay, downdelay in ms.
    pub miimon_ms: u64,
    /// updelay in ms.
    pub updelay_ms: u64,
    /// downdelay in ms.
    pub downdelay_ms: u64,
    /// The active member (active-backup).
    pub active_member: Option<String>,
    /// 802.3ad information, if the mode is 802.3ad.
    pub lacp: Option<LacpInfo>,
    /// Per member.
    pub members: Vec<MemberStatus>,
    /// Configuration warnings and run-time problems an operator must see.
    pub problems: Vec<String>,
}

/// 802.3ad part of the bond status.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LacpInfo {
    /// "fast" or "slow".
    pub lacp_rate: String,
    /// "active" or "passive".
    pub lacp_activity: String,
    /// System priority and MAC.
    pub system_priority: u16,
    /// System MAC.
    pub system_mac: String,
    /// Active aggregator id.
    pub aggregator_id: Option<u16>,
    /// Ports distributing on it.
    pub number_of_ports: usize,
    /// Actor key.
    pub actor_key: Option<u16>,
    /// Partner key.
    pub partner_key: Option<u16>,
    /// Partner system MAC.
    pub partner_mac: Option<String>,
    /// Partner system priority.
    pub partner_priority: Option<u16>,
}

/// One member in the bond status.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemberStatus {
    /// Interface name.
    pub name: String,
    /// "up", "down" or "missing".
    pub mii_status: String,
    /// Speed if known.
    pub speed: Option<String>,
    /// Duplex if known.
    pub duplex: Option<String>,
    /// Times the member went from up to down.
    pub link_failure_count: u64,
    /// The member's own MAC.
    pub permanent_hw_addr: String,
    /// Carries transmitted traffic now.
    pub transmitting: bool,
    /// Passes received traffic up now.
    pub collecting: bool,
    /// Each watcher's verdict, e.g. carrier=up arp=down.
    pub watchers: Vec<(String, bool)>,
    /// How its received frames are kept from the host stack (`tcx`,
    /// `tc-clsact`), when it is taken.
    #[serde(default)]
    pub isolation: Option<String>,
    /// LACP details (802.3ad).
    pub lacp: Option<MemberLacp>,
}

/// 802.3ad details of one member.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemberLacp {
    /// Aggregator id selected.
    pub aggregator_id: Option<u16>,
    /// Receive machine state.
    pub rx_state: String,
    /// Mux machine state.
    pub mux_state: String,
    /// Selected.
    pub selected: String,
    /// Actor churn machine state.
    pub actor_churn_state: String,
    /// Partner churn machine state.
    pub partner_churn_state: String,
    /// Actor port number.
    pub actor_port: u16,
    /// Actor key.
    pub actor_key: u16,
    /// Actor state octet.
    pub actor_state: u8,
    /// Partner system MAC.
    pub partner_mac: String,
    /// Partner port number.
    pub partner_port: u16,
    /// Partner key.
    pub partner_key: u16,
    /// Partner state octet.
    pub partner_state: u8,
    /// Why the port is not in the bundle, if it is not.
    pub not_bundled: Option<String>,
}

/// Counters of one bond, like AIX `entstat -d`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BondStats {
    /// Bond name.
    pub name: String,
    /// Per member.
    pub members: Vec<MemberStats>,
    /// Share of transmitted packets through the first member (seed 000's
    /// "balance ratio"); `None` before any traffic.
    pub tx_balance: Option<f64>,
    /// Share of received packets through the first member.
    pub rx_balance: Option<f64>,
    /// Frames the engine dropped, by reason.
    pub engine_drops: Vec<(String, u64)>,
}

/// Counters of one member.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MemberStats {
    /// Interface name.
    pub name: String,
    /// Data frames sent on the member.
    pub tx_packets: u64,
    /// Their bytes.
    pub tx_bytes: u64,
    /// Data frames received and passed up.
    pub rx_packets: u64,
    /// Their bytes.
    pub rx_bytes: u64,
    /// Frames dropped on the member (device and kernel drops).
    pub drops: u64,
    /// LACPDUs received.
    pub lacpdu_rx: u64,
    /// LACPDUs sent.
    pub lacpdu_tx: u64,
    /// Malformed or unknown slow-protocol frames.
    pub lacpdu_bad: u64,
    /// Marker PDUs received.
    pub marker_rx: u64,
    /// Marker responses sent.
    pub marker_tx: u64,
    /// Control frames from this member dropped before the control plane:
    /// malformed slow-protocol frames.
    #[serde(default)]
    pub control_malformed: u64,
    /// Control frames dropped because this member's queue was full.
    #[serde(default)]
    pub control_queue_full: u64,
}

fn ratio(first: u64, total: u64) -> Option<f64> {
    (total > 0).then(|| first as f64 / total as f64)
}

impl BondStats {
    /// Computes the balance ratios from the member counters.
    pub fn with_ratios(mut self) -> BondStats {
        let tx: u64 = self.members.iter().map(|m| m.tx_packets).sum();
        let rx: u64 = self.members.iter().map(|m| m.rx_packets).sum();
        let first = self.members.first().cloned().unwrap_or_default();
        self.tx_balance = ratio(first.tx_packets, tx);
        self.rx_balance = ratio(first.rx_packets, rx);
        self
    }

    /// Text in the spirit of `entstat -d`.
    pub fn render(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "Bond: {}", self.name);
        let _ = writeln!(
            o,
            "  {:<10} {:>12} {:>14} {:>12} {:>14} {:>8} {:>9} {:>9} {:>7} {:>7}",
            "member",
            "tx packets",
            "tx bytes",
            "rx packets",
            "rx bytes",
            "drops",
            "lacpdu rx",
            "lacpdu tx",
            "bad",
            "marker"
        );
        for m in &self.members {
            let _ = writeln!(
                o,
                "  {:<10} {:>12} {:>14} {:>12} {:>14} {:>8} {:>9} {:>9} {:>7} {:>7}",
                m.name,
                m.tx_packets,
                m.tx_bytes,
                m.rx_packets,
                m.rx_bytes,
                m.drops,
                m.lacpdu_rx,
                m.lacpdu_tx,
                m.lacpdu_bad,
                m.marker_rx
            );
        }
        let fmt = |r: Option<f64>| r.map_or("-".to_string(), |r| format!("{r:.2}"));
        let _ = writeln!(
            o,
            "  balance ratio (share through {}): transmit {}, receive {}",
            self.members.first().map_or("-", |m| m.name.as_str()),
            fmt(self.tx_balance),
            fmt(self.rx_balance)
        );
        let drops: Vec<String> = self
            .engine_drops
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(r, n)| format!("{r} {n}"))
            .collect();
        if !drops.is_empty() {
            let _ = writeln!(o, "  engine drops: {}", drops.join(", "));
        }
        for m in &self.members {
            if m.control_malformed + m.control_queue_full > 0 {
                let _ = writeln!(
                    o,
                    "  {}: control frames dropped: {} malformed, {} queue full",
                    m.name, m.control_malformed, m.control_queue_full
                );
            }
        }
        o
    }
}

fn state_bits(s: u8) -> String {
    lagkit_wire::PortState(s).to_string()
}

impl BondStatus {
    /// Text in the layout of `/proc/net/bonding/bondX`.
    pub fn render(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "Bond: {}", self.name);
        let _ = writeln!(o, "Bonding Mode: {}", self.mode);
        let _ = writeln!(o, "Transmit Hash Policy: {}", self.xmit_hash_policy);
        let _ = writeln!(o, "MII Status: {}", self.mii_status);
        let _ = writeln!(o, "MAC Address: {}  MTU: {}", self.mac, self.mtu);
        let _ = writeln!(o, "MII Polling Interval (ms): {}", self.miimon_ms);
        let _ = writeln!(o, "Up Delay (ms): {}", self.updelay_ms);
        let _ = writeln!(o, "Down Delay (ms): {}", self.downdelay_ms);
        if let Some(a) = &self.active_member {
            let _ = writeln!(o, "Currently Active Slave: {a}");
        }
        if let Some(l) = &self.lacp {
            let _ = writeln!(o, "\n802.3ad info");
            let _ = writeln!(o, "LACP active: {}", l.lacp_activity);
            let _ = writeln!(o, "LACP rate: {}", l.lacp_rate);
            let _ = writeln!(o, "System priority: {}", l.system_priority);
            let _ = writeln!(o, "System MAC address: {}", l.system_mac);
            match l.aggregator_id {
                Some(id) => {
                    let _ = writeln!(o, "Active Aggregator Info:");
                    let _ = writeln!(o, "\tAggregator ID: {id}");
                    let _ = writeln!(o, "\tNumber of ports: {}", l.number_of_ports);
                    let _ = writeln!(o, "\tActor Key: {}", l.actor_key.unwrap_or(0));
                    let _ = writeln!(o, "\tPartner Key: {}", l.partner_key.unwrap_or(0));
                    let _ = writeln!(
                        o,
                        "\tPartner Mac Address: {}",
                        l.partner_mac.as_deref().unwrap_or("00:00:00:00:00:00")
                    );
                }
                None => {
                    let _ = writeln!(o, "Active Aggregator Info: none (no aggregate formed)");
                }
            }
        }
        for m in &self.members {
            let _ = writeln!(o, "\nSlave Interface: {}", m.name);
            let _ = writeln!(o, "MII Status: {}", m.mii_status);
            let _ = writeln!(o, "Speed: {}", m.speed.as_deref().unwrap_or("Unknown"));
            let _ = writeln!(o, "Duplex: {}", m.duplex.as_deref().unwrap_or("Unknown"));
            let _ = writeln!(o, "Link Failure Count: {}", m.link_failure_count);
            let _ = writeln!(o, "Permanent HW addr: {}", m.permanent_hw_addr);
            let _ = writeln!(
                o,
                "Carrying traffic: transmit {}, receive {}",
                if m.transmitting { "yes" } else { "no" },
                if m.collecting { "yes" } else { "no" }
            );
            if let Some(i) = &m.isolation {
                let _ = writeln!(o, "Host stack isolation: {i}");
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
                let _ = writeln!(
                    o,
                    "Aggregator ID: {}",
                    l.aggregator_id
                        .map_or("none".to_string(), |a| a.to_string())
                );
                let _ = writeln!(o, "Actor Churn State: {}", l.actor_churn_state);
                let _ = writeln!(o, "Partner Churn State: {}", l.partner_churn_state);
                let _ = writeln!(o, "details actor lacp pdu:");
                let _ = writeln!(o, "    port key: {}", l.actor_key);
                let _ = writeln!(o, "    port number: {}", l.actor_port);
                let _ = writeln!(o, "    port state: {}", state_bits(l.actor_state));
                let _ = writeln!(o, "details partner lacp pdu:");
                let _ = writeln!(o, "    system mac address: {}", l.partner_mac);
                let _ = writeln!(o, "    oper key: {}", l.partner_key);
                let _ = writeln!(o, "    port number: {}", l.partner_port);
                let _ = writeln!(o, "    port state: {}", state_bits(l.partner_state));
                let _ = writeln!(
                    o,
                    "LACP machines: rx {} mux {} selected {}",
                    l.rx_state, l.mux_state, l.selected
                );
                if let Some(r) = &l.not_bundled {
                    let _ = writeln!(o, "Not in bundle: {r}");
                }
            }
        }
        if !self.problems.is_empty() {
            let _ = writeln!(o, "\nProblems:");
            for p in &self.problems {
                let _ = writeln!(o, "  - {p}");
            }
        }
        o
    }
}
