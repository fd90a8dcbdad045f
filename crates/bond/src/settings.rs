//! What the runtime needs to know about one bond, already validated.
//!
//! The configuration file (`lagkit-bondcfg`) speaks the operator's language
//! with all its aliases; this is the runtime's narrower view of it.

use lagkit_hash::Policy;
use lagkit_monitor::arp::ArpConfig;
use lagkit_proto::lacp::NoPartner;
use lagkit_wire::MacAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Bonding modes the runtime implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BondMode {
    /// IEEE 802.3ad / 802.1AX with LACP.
    Lacp,
    /// Static hashing (AIX `standard`, the peer of Cisco `mode on`).
    Xor,
    /// Round-robin.
    RoundRobin,
    /// One active member, the others standing by.
    ActiveBackup,
    /// Every frame on every member.
    Broadcast,
    /// 256 hash buckets rebalanced by measured load.
    Adaptive,
    /// Transmit load balancing: by load, each member with its own source MAC.
    Tlb,
    /// Adaptive load balancing: tlb plus receive balancing by ARP.
    Alb,
}

impl BondMode {
    /// Linux name.
    pub fn name(self) -> &'static str {
        match self {
            BondMode::Lacp => "IEEE 802.3ad Dynamic link aggregation",
            BondMode::Xor => "load balancing (xor)",
            BondMode::RoundRobin => "load balancing (round-robin)",
            BondMode::ActiveBackup => "fault-tolerance (active-backup)",
            BondMode::Broadcast => "fault-tolerance (broadcast)",
            BondMode::Adaptive => "adaptive load balancing (lagkit: buckets by measured load)",
            BondMode::Tlb => "transmit load balancing",
            BondMode::Alb => "adaptive load balancing",
        }
    }
}

/// When a recovered primary takes over again (Linux `primary_reselect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reselect {
    /// Whenever the primary is usable.
    Always,
    /// When it is better than the current one (no speed known: as always).
    Better,
    /// Only when the current active member fails.
    Failure,
}

/// Which MAC moves on an active-backup failover (Linux `fail_over_mac`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOverMac {
    /// The bond keeps its MAC; members keep theirs.
    None,
    /// The bond takes the MAC of whichever member is active.
    Active,
    /// The active member takes the bond's MAC; the previous one gets its own back.
    Follow,
}

/// LACP settings of an 802.3ad bond.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LacpSettings {
    /// `lacp_rate = fast`.
    pub fast: bool,
    /// `lacp_active = on`.
    pub active: bool,
    /// `ad_actor_sys_prio`.
    pub system_priority: u16,
    /// `ad_actor_system`; default: the bond's MAC.
    pub system_mac: Option<MacAddr>,
    /// Actor key of every port.
    pub key: u16,
    /// `min_links`.
    pub min_links: usize,
    /// `max_bundle`.
    pub max_bundle: Option<usize>,
    /// Behaviour when the partner never speaks LACP.
    pub no_partner: NoPartner,
    /// Coupled collecting/distributing.
    pub coupled: bool,
}

/// The runtime's settings of one bond.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Bond (TAP) name.
    pub name: String,
    /// Members, in configuration order.
    pub members: Vec<String>,
    /// AIX `backup_adapter`: used only when no member can carry traffic.
    pub backup: Option<String>,
    /// AIX `auto_recovery`: leave the backup adapter when a member recovers.
    pub auto_recovery: bool,
    /// Mode.
    pub mode: BondMode,
    /// Transmit hash policy.
    pub policy: Policy,
    /// MTU of the bond and its members.
    pub mtu: Option<u32>,
    /// Addresses (CIDR) for the bond interface.
    pub addresses: Vec<String>,
    /// Bond MAC; default: the first member's.
    pub mac: Option<MacAddr>,
    /// Poll carrier this often in addition to netlink events (0 = never).
    pub miimon: Duration,
    /// Carrier must hold this long before a member is used.
    pub updelay: Duration,
    /// Carrier loss must hold this long before a member is dropped
    /// (not for 802.3ad, where a port leaves distribution at once).
    pub downdelay: Duration,
    /// 802.3ad settings.
    pub lacp: LacpSettings,
    /// Preferred member (active-backup).
    pub primary: Option<String>,
    /// When the primary takes over again.
    pub primary_reselect: Reselect,
    /// ARP/ping probe monitor.
    pub arp: Option<ArpConfig>,
    /// Gratuitous ARPs after a failover.
    pub num_grat_arp: u8,
    /// MAC handling on failover.
    pub fail_over_mac: FailOverMac,
    /// Round-robin: frames per member before moving on.
    pub packets_per_slave: u32,
    /// Control socket path.
    pub control_socket: PathBuf,
    /// Prometheus metrics on 127.0.0.1:PORT.
    pub metrics_port: Option<u16>,
    /// Adaptive: rebalancing interval.
    pub adaptive_interval: Duration,
    /// Adaptive: a bucket idle this long may move.
    pub adaptive_idle_gap: Duration,
    /// Warnings from the configuration, shown in status.
    pub warnings: Vec<String>,
    /// The strong hash seed was configured (not drawn at random), so a
    /// reload must not keep the old one.
    pub hash_seed_fixed: bool,
    /// Injected loss per member, (member, probability 0..=1), both
    /// directions: lagkit's own fault injection for labs and tests (this
    /// kernel has no netem). Set by `lagkit up --fault-loss`, never by the
    /// configuration file.
    pub faults: Vec<(String, f64)>,
}

impl Settings {
    /// Settings for a bond of `members` in `mode` with lagkit's defaults.
    pub fn new(name: &str, members: &[&str], mode: BondMode) -> Settings {
        Settings {
            name: name.to_string(),
            members: members.iter().map(|s| s.to_string()).collect(),
            backup: None,
            auto_recovery: true,
            mode,
            policy: Policy::Strong(lagkit_hash::Strong::new(0x6c61_676b_6974)),
            mtu: None,
            addresses: Vec::new(),
            mac: None,
            miimon: Duration::ZERO,
            updelay: Duration::ZERO,
            downdelay: Duration::ZERO,
            lacp: LacpSettings {
                fast: false,
                active: true,
                system_priority: 65535,
                system_mac: None,
                key: 1,
                min_links: 0,
                max_bundle: None,
                no_partner: NoPartner::Individual,
                coupled: true,
            },
            primary: None,
            primary_reselect: Reselect::Always,
            arp: None,
            num_grat_arp: 1,
            fail_over_mac: FailOverMac::None,
            packets_per_slave: 1,
            control_socket: PathBuf::from(format!("/run/lagkit/{name}.sock")),
            metrics_port: None,
            adaptive_interval: Duration::from_secs(1),
            adaptive_idle_gap: Duration::from_millis(10),
            warnings: Vec::new(),
            hash_seed_fixed: true,
            faults: Vec::new(),
        }
    }
}
