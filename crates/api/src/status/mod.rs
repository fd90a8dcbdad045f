//! What `lagkit status` and `lagkit stats` show, as serializable structs
//! (the control socket speaks JSON), and as text: lagkit's own layout
//! ([`BondStatus::render`]), the kernel's `/proc/net/bonding/<bond>`
//! layout field for field ([`BondStatus::render_proc`]) and AIX `entstat
//! -d`'s counters ([`BondStats::render`]).
//!
//! This crate is a typed leaf: the values are built by the bond's core
//! (`lagkit_bondcore::report`) from its protocol machines, and every
//! closed set of states is an enum ([`words`]), so no reader compares
//! strings.
//!
//! The text is written with `format!` widths, not `comfy-table` or
//! `tabled`: it follows `/proc/net/bonding`'s `key: value` lines and
//! `entstat`'s columns, which scripts and engineers already read, and only
//! the per-member counters are a table at all.

mod proc;
mod stats;
mod text;
pub mod words;

pub use stats::{BondStats, CarrierEvent, Latency, MemberStats};
pub use words::{
    AdSelect, BondMode, ChurnState, EngineKind, FailOverMac, LacpActivity, LacpRate, MiiStatus,
    PagpState, PrimaryReselect,
};

use serde::{Deserialize, Serialize};

/// The state of one bond, like `/proc/net/bonding/bondX`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct BondStatus {
    /// Bond (logical interface) name.
    pub name: String,
    /// Bonding mode.
    pub mode: BondMode,
    /// Transmit hash policy, by name (`layer3+4`, `strong`, `src-dst-ip`).
    pub xmit_hash_policy: String,
    /// The policy's Linux number, for Linux's policies (`layer3+4` is 1).
    #[serde(default)]
    pub xmit_hash_number: Option<u8>,
    /// The seed of lagkit's `strong` policy.
    #[serde(default)]
    pub hash_seed: Option<u64>,
    /// `strong`'s `hash_symmetric`: both directions of a flow hash alike.
    #[serde(default)]
    pub hash_symmetric: bool,
    /// A hash picks each flow's member: 802.3ad, balance-xor, adaptive,
    /// and balance-tlb/alb with `tlb_dynamic_lb = false` (Linux prints the
    /// policy then only).
    #[serde(default)]
    pub uses_xmit_hash: bool,
    /// The data path that runs.
    pub engine: EngineKind,
    /// Why that one (the configured choice, or why `auto` chose it).
    #[serde(default)]
    pub engine_reason: String,
    /// The logical interface's carrier: up while enough members carry
    /// traffic (`min_links`).
    pub mii_status: MiiStatus,
    /// What the members that carry traffic carry together, in Mbit/s
    /// (active-backup: the active one; broadcast: the slowest).
    #[serde(default)]
    pub speed_mbps: Option<u32>,
    /// The bond's MAC address.
    pub mac: String,
    /// MTU.
    pub mtu: u32,
    /// miimon in ms.
    pub miimon_ms: u64,
    /// updelay in ms.
    pub updelay_ms: u64,
    /// downdelay in ms.
    pub downdelay_ms: u64,
    /// peer_notif_delay in ms.
    #[serde(default)]
    pub peer_notif_delay_ms: u64,
    /// The ARP monitor, when it runs.
    #[serde(default)]
    pub arp: Option<ArpMonitor>,
    /// active-backup: which MAC moves on a failover.
    #[serde(default)]
    pub fail_over_mac: FailOverMac,
    /// The configured primary member.
    #[serde(default)]
    pub primary: Option<String>,
    /// When a recovered primary takes over again.
    #[serde(default)]
    pub primary_reselect: PrimaryReselect,
    /// The active member (active-backup, balance-tlb, balance-alb).
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
    /// The asker has no CAP_NET_ADMIN: as the kernel does for
    /// `/proc/net/bonding`, the LACP system, aggregator and per-port PDU
    /// details were left out.
    #[serde(default)]
    pub details_withheld: bool,
}

/// The ARP monitor's settings.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ArpMonitor {
    /// `arp_interval` in ms.
    pub interval_ms: u64,
    /// `arp_missed_max`.
    pub missed_max: u32,
    /// `arp_ip_target`, as written.
    pub targets: Vec<String>,
    /// `ns_ip6_target`, as written.
    #[serde(default)]
    pub ns_targets: Vec<String>,
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

/// 802.3ad part of the bond status.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LacpInfo {
    /// `fast` or `slow`.
    pub lacp_rate: LacpRate,
    /// `on` (active) or `off (passive)`.
    pub lacp_activity: LacpActivity,
    /// `min_links`.
    #[serde(default)]
    pub min_links: u32,
    /// `ad_select`.
    #[serde(default = "stable")]
    pub ad_select: AdSelect,
    /// System priority (`ad_actor_sys_prio`).
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

fn stable() -> AdSelect {
    AdSelect::Stable
}

/// PAgP part of the bond status (balance-xor / active-backup with `pagp`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
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
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MemberPagp {
    /// Port state, in CISCO-PAGP-MIB's words.
    pub state: PagpState,
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

/// One member in the bond status.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MemberStatus {
    /// Interface name.
    pub name: String,
    /// Its link as the bond sees it.
    pub mii_status: MiiStatus,
    /// Speed in Mbit/s, if the driver says.
    #[serde(default)]
    pub speed_mbps: Option<u32>,
    /// Full duplex (or half), if the driver says.
    #[serde(default)]
    pub full_duplex: Option<bool>,
    /// Times the member went from up to down.
    pub link_failure_count: u64,
    /// The member's own MAC.
    pub permanent_hw_addr: String,
    /// The transmit queue its frames take (Linux `queue_id`; always 0).
    #[serde(default)]
    pub queue_id: u16,
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
    /// The three groups as `ethtool -k` reports them.
    pub fn groups(&self) -> Groups {
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

/// 802.3ad details of one member: its machines, and the actor's and
/// partner's information as the LACPDUs carry it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
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
    pub actor_churn_state: ChurnState,
    /// Partner churn machine state.
    pub partner_churn_state: ChurnState,
    /// Times the actor churn machine entered ACTOR_CHURN.
    #[serde(default)]
    pub actor_churned_count: u64,
    /// Times the partner churn machine entered PARTNER_CHURN.
    #[serde(default)]
    pub partner_churned_count: u64,
    /// Actor system priority.
    #[serde(default)]
    pub actor_system_priority: u16,
    /// Actor system MAC.
    #[serde(default)]
    pub actor_system_mac: String,
    /// Actor port priority.
    #[serde(default)]
    pub actor_port_priority: u16,
    /// Actor port number.
    pub actor_port: u16,
    /// Actor key.
    pub actor_key: u16,
    /// Actor state octet.
    pub actor_state: u8,
    /// Partner system priority.
    #[serde(default)]
    pub partner_system_priority: u16,
    /// Partner system MAC.
    pub partner_mac: String,
    /// Partner port priority.
    #[serde(default)]
    pub partner_port_priority: u16,
    /// Partner port number.
    pub partner_port: u16,
    /// Partner key.
    pub partner_key: u16,
    /// Partner state octet.
    pub partner_state: u8,
    /// Why the port is not in the bundle, if it is not.
    pub not_bundled: Option<String>,
}

impl BondStatus {
    /// What an asker without CAP_NET_ADMIN may read, as the kernel's
    /// `/proc/net/bonding` shows it: the LACP system, the active
    /// aggregator and each port's PDU details are withheld.
    pub fn withhold_details(mut self) -> BondStatus {
        self.details_withheld = true;
        if let Some(l) = self.lacp.as_mut() {
            l.system_mac = String::new();
            l.system_priority = 0;
            l.aggregator_id = None;
            l.number_of_ports = 0;
            l.actor_key = None;
            l.partner_key = None;
            l.partner_mac = None;
            l.partner_priority = None;
        }
        for m in &mut self.members {
            if let Some(l) = m.lacp.as_mut() {
                l.actor_system_priority = 0;
                l.actor_system_mac = String::new();
                l.actor_port_priority = 0;
                l.actor_port = 0;
                l.actor_key = 0;
                l.actor_state = 0;
                l.partner_system_priority = 0;
                l.partner_mac = String::new();
                l.partner_port_priority = 0;
                l.partner_port = 0;
                l.partner_key = 0;
                l.partner_state = 0;
            }
        }
        self
    }
}
