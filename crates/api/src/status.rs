//! What `lagkit status` and `lagkit stats` show, as serializable structs
//! (the control socket speaks JSON) and as text in the layout of
//! `/proc/net/bonding/bondX` and AIX `entstat -d`; and the pure pieces
//! the daemon assembles them from (LACP port and aggregator views, PAgP
//! port views, the problems an operator must see, per-member counters).
//!
//! The text is written with `format!` widths, not `comfy-table` or
//! `tabled`: it follows `/proc/net/bonding`'s `key: value` lines and
//! `entstat`'s columns, which scripts and engineers already read, and only
//! the per-member counters are a table at all.

pub use lagkit_bondcfg::LacpRate;
use lagkit_proto::lacp::{NoPartner, PortStatus, System};
use lagkit_proto::pagp;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// A link's state as `/proc/net/bonding` shows it ("MII Status").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MiiStatus {
    /// Carrier (and every link watcher agrees).
    Up,
    /// No carrier, or a watcher says down.
    Down,
    /// A member whose interface does not exist (yet).
    Missing,
}

impl MiiStatus {
    /// Can carry traffic.
    pub fn is_up(self) -> bool {
        self == MiiStatus::Up
    }

    /// "up", "down" or "missing".
    pub fn as_str(self) -> &'static str {
        match self {
            MiiStatus::Up => "up",
            MiiStatus::Down => "down",
            MiiStatus::Missing => "missing",
        }
    }
}

impl std::str::FromStr for MiiStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<MiiStatus, String> {
        [MiiStatus::Up, MiiStatus::Down, MiiStatus::Missing]
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| format!("'{s}' is not up, down or missing"))
    }
}

impl std::fmt::Display for MiiStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The data path a bond runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// tc BPF programs in the kernel move the frames.
    Bpf,
    /// Forwarding threads in the daemon move them (a TAP device).
    Userspace,
}

impl EngineKind {
    /// "bpf" or "userspace".
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Bpf => "bpf",
            EngineKind::Userspace => "userspace",
        }
    }
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The state of one bond, like `/proc/net/bonding/bondX`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BondStatus {
    /// Bond (TAP) name.
    pub name: String,
    /// Bonding mode, Linux name.
    pub mode: String,
    /// Transmit hash policy.
    pub xmit_hash_policy: String,
    /// The data path that runs.
    pub engine: EngineKind,
    /// Why that one (the configured choice, or why `auto` chose it).
    #[serde(default)]
    pub engine_reason: String,
    /// Up if any member can carry traffic.
    pub mii_status: MiiStatus,
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
    /// PAgP information, if the bond runs PAgP.
    #[serde(default)]
    pub pagp: Option<PagpInfo>,
    /// Per member.
    pub members: Vec<MemberStatus>,
    /// Configuration warnings and run-time problems an operator must see.
    pub problems: Vec<String>,
    /// The BPF engine's programs, where they are attached and pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datapath: Option<DatapathStatus>,
}

/// The BPF engine's data path as the kernel has it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct DatapathStatus {
    /// The programs this daemon loaded.
    pub programs: Vec<ProgramStatus>,
    /// Per hook (the logical interface's egress, each member's ingress):
    /// the programs attached, in the order they run.
    pub attached: Vec<AttachedStatus>,
    /// The bpffs directory the links are pinned in (they then outlive the
    /// daemon); `None`: not pinned, so a restart interrupts traffic.
    pub pinned: Option<String>,
}

/// One loaded program.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ProgramStatus {
    /// Its name.
    pub name: String,
    /// The kernel's program id.
    pub id: u32,
    /// The kernel's tag (hex).
    pub tag: String,
}

/// The programs on one hook.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct AttachedStatus {
    /// The interface.
    pub interface: String,
    /// "egress" or "ingress".
    pub hook: String,
    /// Program ids, in the order they run.
    pub program_ids: Vec<u32>,
}

/// Whether the bond sends LACPDUs unasked (`lacp_active`); written as
/// Linux's `LACP active:` line has it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum LacpActivity {
    /// Sends LACPDUs periodically.
    #[serde(rename = "on")]
    Active,
    /// Only answers a partner's LACPDUs.
    #[serde(rename = "off (passive)")]
    Passive,
}

impl std::fmt::Display for LacpActivity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LacpActivity::Active => "on",
            LacpActivity::Passive => "off (passive)",
        })
    }
}

/// 802.3ad part of the bond status.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LacpInfo {
    /// `fast` or `slow`.
    pub lacp_rate: LacpRate,
    /// `on` (active) or `off (passive)`.
    pub lacp_activity: LacpActivity,
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

/// PAgP part of the bond status (balance-xor / active-backup with `pagp`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PagpInfo {
    /// "desirable" or "auto".
    pub mode: String,
    /// Silent (a desirable member joins after the silent wait when nothing
    /// is heard) or not.
    pub silent: bool,
    /// Hello rate once in the channel: "slow" (30 s) or "fast" (1 s).
    pub rate: String,
    /// The device id sent (the bond's MAC).
    pub device_id: String,
    /// Members in the channel now.
    pub members_in_channel: usize,
}

/// PAgP details of one member.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemberPagp {
    /// Port state, in CISCO-PAGP-MIB's words (`upPagp`, `portUp`, ...).
    pub state: String,
    /// In the channel (carries data).
    pub in_channel: bool,
    /// The partner's device id (the switch's MAC), while its hellos are held.
    pub partner_device_id: Option<String>,
    /// The partner's port (its ifindex).
    pub partner_port: Option<u32>,
    /// The partner's port name.
    pub partner_port_name: Option<String>,
    /// The partner's device name.
    pub partner_device_name: Option<String>,
    /// The partner port's group capability.
    pub partner_group_capability: Option<u32>,
    /// The partner's channel (group ifindex; 0: the partner has not put
    /// the port in a channel).
    pub partner_group_ifindex: Option<u32>,
    /// The partner's mode: "desirable" or "auto".
    pub partner_mode: Option<String>,
    /// The partner's learn method.
    pub partner_learn: Option<String>,
    /// Information PDUs received.
    pub hellos_rx: u64,
    /// Information PDUs sent.
    pub hellos_tx: u64,
    /// PAgP frames dropped as malformed (or own hellos looped back).
    pub bad_rx: u64,
}

/// A PAgP mode as the configuration spells it.
fn pagp_mode_name(m: pagp::Mode) -> &'static str {
    match m {
        pagp::Mode::Desirable => "desirable",
        pagp::Mode::Auto => "auto",
    }
}

impl MemberPagp {
    /// The PAgP details of one port.
    pub fn from_port(p: &pagp::PortStatus) -> MemberPagp {
        MemberPagp {
            state: p.state.name().into(),
            in_channel: p.state.in_channel(),
            partner_device_id: p.partner_device.map(|d| d.to_string()),
            partner_port: p.partner_ifindex,
            partner_port_name: p.partner_port_name.clone(),
            partner_device_name: p.partner_device_name.clone(),
            partner_group_capability: p.partner_group_capability,
            partner_group_ifindex: p.partner_group_ifindex,
            partner_mode: p.partner_mode.map(|m| pagp_mode_name(m).into()),
            partner_learn: p.partner_learn.map(|l| l.to_string()),
            hellos_rx: p.counters.info_rx,
            hellos_tx: p.counters.info_tx,
            bad_rx: p.counters.bad_rx,
        }
    }
}

impl PagpInfo {
    /// The PAgP part of the status of a bond whose members have `ports`.
    /// `fast`: hellos every second also once in the channel.
    pub fn of(
        mode: pagp::Mode,
        silence: pagp::Silence,
        fast: bool,
        device_id: lagkit_wire::MacAddr,
        ports: &[MemberPagp],
    ) -> PagpInfo {
        PagpInfo {
            mode: pagp_mode_name(mode).into(),
            silent: silence == pagp::Silence::Silent,
            rate: if fast { "fast" } else { "slow" }.into(),
            device_id: device_id.to_string(),
            members_in_channel: ports.iter().filter(|p| p.in_channel).count(),
        }
    }
}

/// What PAgP's state shows an operator must fix: members with carrier that
/// hear no PAgP (an auto bond facing an auto or non-PAgP port, a
/// non-silent one facing a port without PAgP), and members that hear the
/// switch but stay out of the channel.
pub fn pagp_problems(members: &[MemberStatus], info: &PagpInfo) -> Vec<String> {
    let mut problems = Vec::new();
    let up = |m: &&MemberStatus| m.mii_status.is_up();
    let silent: Vec<&str> = members
        .iter()
        .filter(up)
        .filter(|m| {
            m.pagp
                .as_ref()
                .is_some_and(|p| p.state == "portUp" && p.partner_device_id.is_none())
        })
        .map(|m| m.name.as_str())
        .collect();
    if !silent.is_empty() && info.mode == "auto" {
        problems.push(format!(
            "PAgP: no PAgP heard on {}: pagp = \"auto\" only answers, so facing an auto port (or one without PAgP) nothing forms and those links carry nothing. Set pagp = \"desirable\" here, or channel-group N mode desirable on the switch.",
            silent.join(", ")
        ));
    } else if !silent.is_empty() && !info.silent {
        problems.push(format!(
            "PAgP: no PAgP heard on {}: the switch port does not run PAgP (mode on, LACP, or no channel) and pagp_silent = false keeps those links out for good. Configure channel-group N mode desirable or auto on the switch.",
            silent.join(", ")
        ));
    }
    for m in members.iter().filter(up) {
        let Some(p) = m.pagp.as_ref() else { continue };
        if p.state == "biDirectional" {
            let why = match (info.mode.as_str(), p.partner_mode.as_deref()) {
                ("auto", Some("auto")) => {
                    "both ends are auto; set pagp = \"desirable\" here or mode desirable on the switch".to_string()
                }
                _ => format!(
                    "its partner ({}) is not the channel's, or it is waiting for the partner to put it in",
                    p.partner_device_id.as_deref().unwrap_or("?")
                ),
            };
            problems.push(format!(
                "PAgP: member {} hears the switch but is not in the channel: {why}",
                m.name
            ));
        }
    }
    problems
}

/// One member in the bond status.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemberStatus {
    /// Interface name.
    pub name: String,
    /// Up, down or missing.
    pub mii_status: MiiStatus,
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
    /// Removed by a reload and not yet given back: it still receives what
    /// its partner sends, until the partner stops (or a second passes).
    #[serde(default)]
    pub leaving: bool,
    /// Each watcher's verdict, e.g. carrier=up arp=down.
    pub watchers: Vec<(String, bool)>,
    /// How its received frames are kept from the host stack (`tcx`,
    /// `tc-clsact`), when it is taken.
    #[serde(default)]
    pub isolation: Option<String>,
    /// Its transmit offloads, when it is taken.
    #[serde(default)]
    pub offloads: Option<MemberOffloads>,
    /// LACP details (802.3ad).
    pub lacp: Option<MemberLacp>,
    /// PAgP details (a bond that runs PAgP).
    #[serde(default)]
    pub pagp: Option<MemberPagp>,
}

/// A member's transmit offloads: what `ethtool -k` shows now, and what
/// lagkit changed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemberOffloads {
    /// `tx-checksumming` is on.
    pub tx: bool,
    /// `tcp-segmentation-offload` is on.
    pub tso: bool,
    /// `generic-segmentation-offload` is on.
    pub gso: bool,
    /// lagkit keeps them off while it holds the member (`offloads = false`).
    pub kept_off: bool,
    /// The features lagkit turned off, turned back on when it lets go.
    pub turned_off: Vec<String>,
}

impl MemberOffloads {
    fn groups(&self) -> Groups {
        Groups {
            tx: self.tx,
            tso: self.tso,
            gso: self.gso,
        }
    }
}

/// The three groups as `ethtool -k` reports them: on if any feature of the
/// group is active (`tx-checksumming`, `tcp-segmentation-offload`,
/// `generic-segmentation-offload`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Groups {
    /// `tx-checksumming`.
    pub tx: bool,
    /// `tcp-segmentation-offload`.
    pub tso: bool,
    /// `generic-segmentation-offload`.
    pub gso: bool,
}

impl Groups {
    /// All three off.
    pub fn all_off(self) -> bool {
        !(self.tx || self.tso || self.gso)
    }
}

impl core::fmt::Display for Groups {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let w = |on: bool| if on { "on" } else { "off" };
        write!(
            f,
            "tx {}, tso {}, gso {}",
            w(self.tx),
            w(self.tso),
            w(self.gso)
        )
    }
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
    /// The latest member carrier changes and when the data path had the
    /// plan that follows each (failover latency), oldest first.
    #[serde(default)]
    pub carrier_events: Vec<CarrierEvent>,
}

/// Link event to published plan, over some carrier changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Latency {
    /// Changes measured.
    pub count: usize,
    /// Median.
    pub median_ns: u64,
    /// Maximum.
    pub max_ns: u64,
}

/// One member carrier change and the plan that followed it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct CarrierEvent {
    /// The member.
    pub member: String,
    /// Its carrier after the change.
    pub up: bool,
    /// When the daemon read the kernel's link event (CLOCK_MONOTONIC ns;
    /// for a carrier found by polling, when it was polled).
    pub seen_ns: u64,
    /// When the data path had the new plan (CLOCK_MONOTONIC ns): the BPF
    /// programs' plan swapped, or the userspace engine's map published.
    pub published_ns: u64,
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

impl MemberLacp {
    /// The 802.3ad details of one port.
    pub fn from_port(p: &PortStatus) -> MemberLacp {
        MemberLacp {
            aggregator_id: p.aggregator.map(|a| a.0),
            rx_state: p.rx.name().into(),
            mux_state: p.mux.name().into(),
            selected: p.selected.name().into(),
            actor_churn_state: p.actor_churn.name(false).into(),
            partner_churn_state: p.partner_churn.name(true).into(),
            actor_port: p.actor.port,
            actor_key: p.actor.key,
            actor_state: p.actor.state.0,
            partner_mac: p.partner.system.mac.to_string(),
            partner_port: p.partner.port,
            partner_key: p.partner.key,
            partner_state: p.partner.state.0,
            not_bundled: p.not_bundled_reason(),
        }
    }
}

impl LacpInfo {
    /// The bond only answers LACPDUs (`lacp_active = false`).
    pub fn is_passive(&self) -> bool {
        self.lacp_activity == LacpActivity::Passive
    }

    /// The 802.3ad part of the status: the system and the aggregator that
    /// distributes (if any), with lacp_rate `fast` and lacp_activity `active`.
    pub fn of(sys: &System, fast: bool, active: bool) -> LacpInfo {
        let agg = sys
            .aggregators()
            .into_iter()
            .find(|a| !a.distributing.is_empty());
        // An individual link with a defaulted partner has no partner to
        // show (its zeros are administrative defaults).
        let partner = agg
            .as_ref()
            .and_then(|a| a.partner_system)
            .filter(|s| !s.mac.is_zero());
        LacpInfo {
            lacp_rate: if fast { LacpRate::Fast } else { LacpRate::Slow },
            lacp_activity: if active {
                LacpActivity::Active
            } else {
                LacpActivity::Passive
            },
            system_priority: sys.system_id().priority,
            system_mac: sys.system_id().mac.to_string(),
            aggregator_id: agg.as_ref().map(|a| a.id.0),
            number_of_ports: agg.as_ref().map_or(0, |a| a.distributing.len()),
            actor_key: agg.as_ref().and_then(|a| a.actor_key),
            partner_key: partner.and(agg.as_ref().and_then(|a| a.partner_key)),
            partner_mac: partner.map(|s| s.mac.to_string()),
            partner_priority: partner.map(|s| s.priority),
        }
    }
}

/// The configuration's `warnings` and the run-time problems the members'
/// and LACP's state show: links whose peer never spoke LACP, an 802.3ad
/// bond with no aggregate, members that do not exist.
pub fn problems(
    warnings: &[String],
    members: &[MemberStatus],
    lacp: Option<&LacpInfo>,
    no_partner: NoPartner,
) -> Vec<String> {
    let mut problems = warnings.to_vec();
    let defaulted: Vec<&str> = members
        .iter()
        .filter(|m| m.mii_status.is_up())
        .filter(|m| m.lacp.as_ref().is_some_and(|l| l.rx_state == "DEFAULTED"))
        .map(|m| m.name.as_str())
        .collect();
    let passive = lacp.is_some_and(LacpInfo::is_passive);
    if !defaulted.is_empty() && passive {
        problems.push(format!(
            "802.3ad: no LACPDU ever received on {}: this bond is passive (lacp_active = false) and only answers, so the peer is passive too (Cisco 'channel-group N mode passive'), or runs no LACP. Those links are not aggregated{}. Make one end active: lacp_active = true here, or mode active on the peer.",
            defaulted.join(", "),
            match no_partner {
                NoPartner::Individual => "; at most one of them carries traffic, as an individual link",
                NoPartner::Fallback => "; one of them carries traffic (fallback)",
                NoPartner::Suspend => " and carry nothing (suspended)",
            }
        ));
    } else if !defaulted.is_empty() {
        problems.push(format!(
            "802.3ad: no LACPDU ever received on {}: the peer does not run LACP (a static 'mode on' channel, or no channel). Those links are not aggregated{}. Enable LACP on the peer, or use mode balance-xor here to match a static channel.",
            defaulted.join(", "),
            match no_partner {
                NoPartner::Individual => "; at most one of them carries traffic, as an individual link",
                NoPartner::Fallback => "; one of them carries traffic (fallback)",
                NoPartner::Suspend => " and carry nothing (suspended)",
            }
        ));
    }
    if let Some(l) = lacp {
        if l.aggregator_id.is_none()
            && defaulted.is_empty()
            && members.iter().any(|m| m.mii_status.is_up())
        {
            let why: Vec<String> = members
                .iter()
                .filter_map(|m| {
                    Some(format!(
                        "{}: {}",
                        m.name,
                        m.lacp.as_ref()?.not_bundled.as_ref()?
                    ))
                })
                .collect();
            problems.push(format!(
                "802.3ad: no aggregate with the partner; traffic is not flowing ({}). If the peer is a static channel (Cisco 'mode on'), use mode balance-xor here or enable LACP there.",
                why.join("; ")
            ));
        }
    }
    for m in members {
        if let Some(o) = m
            .offloads
            .as_ref()
            .filter(|o| o.kept_off && !o.groups().all_off())
        {
            problems.push(format!(
                "member {}: offloads = false, but its driver keeps some on ({}); a peer that reads this link in user space will see unfinished frames",
                m.name,
                o.groups()
            ));
        }
        if m.mii_status == MiiStatus::Missing {
            problems.push(format!(
                "member {} does not exist; it is used as soon as it appears",
                m.name
            ));
        }
    }
    problems
}

impl MemberStats {
    /// Takes the LACP counters of the member's port.
    pub fn set_lacp(&mut self, p: &PortStatus) {
        self.lacpdu_rx = p.counters.lacpdu_rx;
        self.lacpdu_tx = p.counters.lacpdu_tx;
        self.lacpdu_bad = p.counters.bad_rx;
        self.marker_rx = p.counters.marker_rx;
        self.marker_tx = p.counters.marker_response_tx;
    }
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
        if let Some(l) = self.failover_latency() {
            let _ = writeln!(
                o,
                "  carrier changes: {} (last {}), link event to new plan: median {} µs, max {} µs",
                l.count,
                self.carrier_events.len(),
                l.median_ns / 1000,
                l.max_ns / 1000
            );
        }
        o
    }

    /// Link event to published plan over the kept carrier changes.
    pub fn failover_latency(&self) -> Option<Latency> {
        let mut d: Vec<u64> = self
            .carrier_events
            .iter()
            .map(|e| e.published_ns.saturating_sub(e.seen_ns))
            .collect();
        d.sort_unstable();
        Some(Latency {
            count: d.len(),
            median_ns: *d.get(d.len() / 2)?,
            max_ns: *d.last()?,
        })
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
        {
            let _ = writeln!(o, "Engine: {} ({})", self.engine, self.engine_reason);
        }
        if let Some(d) = &self.datapath {
            match &d.pinned {
                Some(dir) => {
                    let _ = writeln!(o, "Data path: pinned in {dir} (forwards across a restart)");
                }
                None => {
                    let _ = writeln!(o, "Data path: not pinned (a restart interrupts traffic)");
                }
            }
        }
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
        if let Some(p) = &self.pagp {
            let _ = writeln!(o, "\nPAgP info");
            let _ = writeln!(
                o,
                "PAgP mode: {} ({})",
                p.mode,
                if p.silent { "silent" } else { "non-silent" }
            );
            let _ = writeln!(o, "PAgP hello rate: {}", p.rate);
            let _ = writeln!(o, "Device ID: {}", p.device_id);
            let _ = writeln!(o, "Members in channel: {}", p.members_in_channel);
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
                    if off.turned_off.is_empty() {
                        let _ = write!(o, "; none was on)");
                    } else {
                        let _ = write!(
                            o,
                            "; turned back on at exit: {})",
                            off.turned_off.join(", ")
                        );
                    }
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
            if let Some(p) = &m.pagp {
                render_member_pagp(&mut o, p);
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

/// A member's PAgP lines of the status text.
fn render_member_pagp(o: &mut String, p: &MemberPagp) {
    let _ = writeln!(
        o,
        "PAgP state: {} ({})",
        p.state,
        if p.in_channel {
            "in channel"
        } else {
            "not in channel"
        }
    );
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

    fn member(name: &str, mii: &str, lacp: Option<(&str, Option<&str>)>) -> MemberStatus {
        MemberStatus {
            name: name.into(),
            mii_status: mii.parse().unwrap(),
            speed: None,
            duplex: None,
            link_failure_count: 0,
            permanent_hw_addr: String::new(),
            transmitting: false,
            collecting: false,
            leaving: false,
            watchers: Vec::new(),
            isolation: None,
            offloads: None,
            lacp: lacp.map(|(rx, why)| MemberLacp {
                aggregator_id: None,
                rx_state: rx.into(),
                mux_state: "DETACHED".into(),
                selected: "UNSELECTED".into(),
                actor_churn_state: String::new(),
                partner_churn_state: String::new(),
                actor_port: 1,
                actor_key: 1,
                actor_state: 0,
                partner_mac: String::new(),
                partner_port: 0,
                partner_key: 0,
                partner_state: 0,
                not_bundled: why.map(String::from),
            }),
            pagp: None,
        }
    }

    fn pagp_port(state: &str, partner: Option<&str>) -> MemberPagp {
        MemberPagp {
            state: state.into(),
            in_channel: state == "upPagp",
            partner_device_id: partner.map(|_| "02:00:00:00:00:09".into()),
            partner_port: partner.map(|_| 2),
            partner_port_name: partner.map(|_| "Gi1/2".into()),
            partner_device_name: partner.map(|_| "core".into()),
            partner_group_capability: partner.map(|_| 0x0001_0001),
            partner_group_ifindex: partner.map(|_| 7),
            partner_mode: partner.map(String::from),
            partner_learn: partner.map(|_| "aggregation-port".into()),
            hellos_rx: 3,
            hellos_tx: 4,
            bad_rx: 0,
        }
    }

    fn pagp_info(mode: &str, silent: bool) -> PagpInfo {
        PagpInfo {
            mode: mode.into(),
            silent,
            rate: "slow".into(),
            device_id: "02:00:00:00:00:01".into(),
            members_in_channel: 1,
        }
    }

    #[test]
    fn pagp_partner_is_shown_and_silence_and_auto_auto_are_explained() {
        let mut a = member("eth1", "up", None);
        a.pagp = Some(pagp_port("upPagp", Some("auto")));
        let mut b = member("eth2", "up", None);
        b.pagp = Some(pagp_port("portUp", None));
        let mut down = member("eth3", "down", None);
        down.pagp = Some(pagp_port("portDown", None));
        let members = [a.clone(), b.clone(), down];
        let p = pagp_problems(&members, &pagp_info("auto", true));
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("no PAgP heard on eth2:"), "{}", p[0]);
        assert!(p[0].contains("Set pagp = \"desirable\""), "{}", p[0]);
        let p = pagp_problems(&members, &pagp_info("desirable", false));
        assert!(p[0].contains("pagp_silent = false"), "{p:?}");
        assert!(pagp_problems(&members, &pagp_info("desirable", true)).is_empty());
        let mut both_auto = a.clone();
        both_auto.pagp = Some(pagp_port("biDirectional", Some("auto")));
        let p = pagp_problems(&[both_auto], &pagp_info("auto", true));
        assert!(p[0].contains("both ends are auto"), "{p:?}");

        let st = BondStatus {
            name: "bond0".into(),
            mode: "load balancing (xor)".into(),
            xmit_hash_policy: "layer3+4".into(),
            engine: EngineKind::Userspace,
            engine_reason: String::new(),
            mii_status: MiiStatus::Up,
            mac: String::new(),
            mtu: 1500,
            miimon_ms: 0,
            updelay_ms: 0,
            downdelay_ms: 0,
            active_member: None,
            lacp: None,
            pagp: Some(pagp_info("desirable", true)),
            members: vec![a, b],
            problems: Vec::new(),
            datapath: None,
        };
        let text = st.render();
        for line in [
            "PAgP mode: desirable (silent)\n",
            "Members in channel: 1\n",
            "PAgP state: upPagp (in channel)\n",
            "    device id: 02:00:00:00:00:09\n",
            "    port: Gi1/2 (ifindex 2)\n",
            "    group capability: 0x00010001\n",
            "    mode: auto, learn method: aggregation-port\n",
            "PAgP state: portUp (not in channel)\nPAgP partner: none heard\n",
        ] {
            assert!(text.contains(line), "{line:?} in {text}");
        }
        let json = serde_json::to_string(&st).unwrap();
        let back: BondStatus = serde_json::from_str(&json).unwrap();
        assert_eq!(back, st);
    }

    #[test]
    fn lacp_rate_and_activity_are_written_as_linux_writes_them() {
        let mut l = lacp(None);
        l.lacp_rate = LacpRate::Fast;
        l.lacp_activity = LacpActivity::Passive;
        let json = serde_json::to_string(&l).unwrap();
        assert!(json.contains(r#""lacp_rate":"fast""#), "{json}");
        assert!(
            json.contains(r#""lacp_activity":"off (passive)""#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<LacpInfo>(&json).unwrap(), l);
        assert!(l.is_passive());
        assert_eq!(LacpActivity::Active.to_string(), "on");
        assert_eq!(LacpRate::Slow.to_string(), "slow");
        assert!(serde_json::from_str::<LacpRate>(r#""medium""#).is_err());
    }

    fn lacp(aggregator: Option<u16>) -> LacpInfo {
        LacpInfo {
            lacp_rate: LacpRate::Slow,
            lacp_activity: LacpActivity::Active,
            system_priority: 65535,
            system_mac: String::new(),
            aggregator_id: aggregator,
            number_of_ports: 0,
            actor_key: None,
            partner_key: None,
            partner_mac: None,
            partner_priority: None,
        }
    }

    #[test]
    fn a_peer_without_lacp_is_named_with_the_fix() {
        let members = [
            member("a", "up", Some(("DEFAULTED", None))),
            member("b", "down", Some(("DEFAULTED", None))),
        ];
        let p = problems(&[], &members, Some(&lacp(None)), NoPartner::Suspend);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("no LACPDU ever received on a:"), "{}", p[0]);
        assert!(p[0].contains("carry nothing (suspended)"));
    }

    #[test]
    fn no_aggregate_lists_each_members_reason() {
        let members = [
            member("a", "up", Some(("CURRENT", Some("partner key differs")))),
            member("b", "up", Some(("CURRENT", None))),
        ];
        let p = problems(
            &["w".into()],
            &members,
            Some(&lacp(None)),
            NoPartner::Individual,
        );
        assert_eq!(p[0], "w", "configuration warnings first");
        assert!(
            p[1].contains(
                "no aggregate with the partner; traffic is not flowing (a: partner key differs)"
            ),
            "{}",
            p[1]
        );
        assert!(problems(&[], &members, Some(&lacp(Some(1))), NoPartner::Individual).is_empty());
    }

    #[test]
    fn missing_members_are_reported_in_every_mode() {
        let members = [member("a", "up", None), member("gone", "missing", None)];
        let p = problems(&[], &members, None, NoPartner::Individual);
        assert_eq!(
            p,
            ["member gone does not exist; it is used as soon as it appears"]
        );
    }

    fn offloads(
        tx_tso_gso: [bool; 3],
        kept_off: bool,
        turned_off: &[&str],
    ) -> Option<MemberOffloads> {
        let [tx, tso, gso] = tx_tso_gso;
        Some(MemberOffloads {
            tx,
            tso,
            gso,
            kept_off,
            turned_off: turned_off.iter().map(|f| f.to_string()).collect(),
        })
    }

    #[test]
    fn offloads_show_what_lagkit_turned_off_and_what_stayed_on() {
        let mut m = member("eth1", "up", None);
        m.offloads = offloads(
            [false; 3],
            true,
            &["tx-checksum-ip-generic", "tx-generic-segmentation"],
        );
        let mut other = member("eth2", "up", None);
        other.offloads = offloads([true; 3], false, &[]);
        let st = BondStatus {
            name: "bond0".into(),
            mode: "active-backup".into(),
            xmit_hash_policy: "layer2".into(),
            engine: EngineKind::Bpf,
            engine_reason: "engine = bpf".into(),
            mii_status: MiiStatus::Up,
            mac: String::new(),
            mtu: 1500,
            miimon_ms: 0,
            updelay_ms: 0,
            downdelay_ms: 0,
            active_member: None,
            lacp: None,
            pagp: None,
            members: vec![m, other],
            problems: Vec::new(),
            datapath: None,
        };
        let text = st.render();
        assert!(text.contains("Engine: bpf (engine = bpf)\n"), "{text}");
        assert!(text.contains("Transmit offloads: tx off, tso off, gso off (offloads = false: turned off by lagkit; turned back on at exit: tx-checksum-ip-generic, tx-generic-segmentation)\n"), "{text}");
        assert!(
            text.contains("Transmit offloads: tx on, tso on, gso on\n"),
            "{text}"
        );
        assert!(problems(&[], &st.members, None, NoPartner::Individual).is_empty());
        // JSON round trip, and a status from before the field still reads.
        let json = serde_json::to_string(&st).unwrap();
        assert_eq!(serde_json::from_str::<BondStatus>(&json).unwrap(), st);
        let mut old = serde_json::to_value(&st.members[0]).unwrap();
        old.as_object_mut().unwrap().remove("offloads");
        let old: MemberStatus = serde_json::from_value(old).unwrap();
        assert_eq!(old.offloads, None, "a status without the field reads");
        // A driver that keeps one on is a problem worth naming.
        let mut stuck = member("eth3", "up", None);
        stuck.offloads = offloads([true, false, false], true, &[]);
        let p = problems(&[], &[stuck], None, NoPartner::Individual);
        assert_eq!(p.len(), 1);
        assert!(p[0].starts_with("member eth3: offloads = false, but its driver keeps some on (tx on, tso off, gso off)"), "{p:?}");
    }
}
