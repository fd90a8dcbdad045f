//! Configuration of a LACP system and its ports (802.1AX-2020 clause 7
//! managed objects, under the names network engineers use).

use lagkit_wire::{MacAddr, PortState, SystemId};
use std::time::Duration;

/// LACP_Activity: whether a port speaks first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Activity {
    /// Sends LACPDUs whether or not the partner does (Cisco `mode active`).
    Active,
    /// Sends only once it hears an active partner (Cisco `mode passive`).
    Passive,
}

/// LACP_Timeout of the actor: how fast it asks its partner to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rate {
    /// Short Timeout: partner sends every Fast_Periodic_Time, expiry after Short_Timeout_Time.
    Fast,
    /// Long Timeout: partner sends every Slow_Periodic_Time, expiry after Long_Timeout_Time.
    Slow,
}

/// What a port does when its partner never speaks LACP (it stays DEFAULTED).
///
/// Implemented through the Partner administrative state (clause 6.4.7,
/// Partner_Admin_Port_State), which is what the standard provides for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NoPartner {
    /// Each such port works as an individual link (Cisco "I", stand-alone).
    /// Partner admin state: Individual, IN_SYNC, collecting, distributing.
    Individual,
    /// The ports aggregate among themselves but only one carries traffic
    /// (Open vSwitch `lacp-fallback-ab`). Partner admin state: Aggregatable,
    /// IN_SYNC, collecting, distributing; a defaulted aggregate is capped to
    /// one selected port.
    Fallback,
    /// Such ports carry nothing (Cisco `lacp suspend-individual`).
    /// Partner admin state: out of sync.
    Suspend,
}

impl NoPartner {
    /// The Partner_Admin_Port_State this policy stands for.
    pub fn partner_admin_state(self) -> PortState {
        let up = PortState::SYNCHRONIZATION | PortState::COLLECTING | PortState::DISTRIBUTING;
        match self {
            NoPartner::Individual => PortState(up),
            NoPartner::Fallback => PortState(up | PortState::AGGREGATION),
            NoPartner::Suspend => PortState(0),
        }
    }
}

/// Whether collecting and distributing are switched together (clause 6.4.15).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MuxControl {
    /// One COLLECTING_DISTRIBUTING state (Linux bonding, most switches).
    Coupled,
    /// Separate COLLECTING and DISTRIBUTING states.
    Independent,
}

/// The standard's timer constants (802.1AX-2020 6.4.4), overridable for experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timers {
    /// Fast_Periodic_Time, 1 s.
    pub fast_periodic: Duration,
    /// Slow_Periodic_Time, 30 s.
    pub slow_periodic: Duration,
    /// Short_Timeout_Time, 3 s.
    pub short_timeout: Duration,
    /// Long_Timeout_Time, 90 s.
    pub long_timeout: Duration,
    /// Churn_Detection_Time, 60 s.
    pub churn_detection: Duration,
    /// Aggregate_Wait_Time, 2 s.
    pub aggregate_wait: Duration,
    /// Periodic LACPDUs go out this many percent before the periodic time
    /// is up (default 10: every 0.9 s when fast). With the standard's exact
    /// values the PDU after two lost ones arrives one link delay *after*
    /// Short_Timeout_Time (3 × Fast_Periodic_Time) and the partner expires;
    /// a little lead lets an aggregate ride out two consecutive losses.
    pub periodic_lead_percent: u8,
}

impl Timers {
    /// The interval the Periodic machine actually uses for `period`.
    pub fn periodic_interval(&self, period: Duration) -> Duration {
        let lead = u32::from(self.periodic_lead_percent.min(50));
        period * (100 - lead) / 100
    }
}

impl Default for Timers {
    fn default() -> Self {
        Timers {
            fast_periodic: Duration::from_secs(1),
            slow_periodic: Duration::from_secs(30),
            short_timeout: Duration::from_secs(3),
            long_timeout: Duration::from_secs(90),
            churn_detection: Duration::from_secs(60),
            aggregate_wait: Duration::from_secs(2),
            periodic_lead_percent: 10,
        }
    }
}

/// Which aggregate gets an aggregator when there are fewer aggregators
/// than aggregates (a host bond has one; its members may face two
/// partners): Linux bonding's `ad_select`. Not in 802.1AX, which leaves
/// the choice to the system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AdSelect {
    /// The aggregate with the most bandwidth takes a free aggregator, and
    /// keeps it until none of its ports can carry traffic.
    #[default]
    Stable,
    /// The aggregate with the most bandwidth has it, and takes it from
    /// another that has less.
    Bandwidth,
    /// The aggregate with the most ports has it, and takes it from another
    /// that has fewer.
    Count,
}

/// Settings of a whole LACP system (a bond, or a switch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemConfig {
    /// Name used in logs, e.g. `bond0`.
    pub name: String,
    /// Actor_System_Priority and Actor_System.
    pub system: SystemId,
    /// Number of Aggregators; 0 means one per port (the standard's usual count).
    /// A host bond that can carry one aggregate at a time uses 1.
    pub aggregators: usize,
    /// At most this many ports of one aggregate carry traffic; the others wait
    /// in standby (Cisco `lacp max-bundle`). `None` means no limit.
    pub max_bundle: Option<usize>,
    /// The aggregate is down unless at least this many ports can carry traffic
    /// (Cisco `port-channel min-links`, Linux `min_links`). 0 and 1 are the same.
    pub min_links: usize,
    /// Behaviour of ports whose partner never speaks LACP.
    pub no_partner: NoPartner,
    /// Which aggregate gets an aggregator when they are fewer (`ad_select`).
    pub ad_select: AdSelect,
    /// Coupled or independent collecting/distributing.
    pub mux_control: MuxControl,
    /// CollectorMaxDelay sent in LACPDUs, in tens of microseconds.
    pub collector_max_delay: u16,
    /// Timer constants.
    pub timers: Timers,
}

impl SystemConfig {
    /// A system with the standard's defaults: priority 32768, one aggregator
    /// per port, no bundle limit, individual ports without a partner, coupled
    /// control.
    pub fn new(name: &str, mac: MacAddr) -> SystemConfig {
        SystemConfig {
            name: name.to_string(),
            system: SystemId::new(32768, mac),
            aggregators: 0,
            max_bundle: None,
            min_links: 0,
            no_partner: NoPartner::Individual,
            ad_select: AdSelect::Stable,
            mux_control: MuxControl::Coupled,
            collector_max_delay: 0,
            timers: Timers::default(),
        }
    }
}

/// Settings of one aggregation port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortConfig {
    /// Interface name used in logs, e.g. `eth1`.
    pub name: String,
    /// Source address of the LACPDUs this port sends.
    pub mac: MacAddr,
    /// Actor_Port_Number; unique in the system, not 0.
    pub port_number: u16,
    /// Actor_Port_Priority; lower is preferred.
    pub port_priority: u16,
    /// Actor_Admin_Port_Key: ports aggregate only with ports of the same key.
    pub key: u16,
    /// LACP_Activity.
    pub activity: Activity,
    /// LACP_Timeout.
    pub rate: Rate,
    /// Aggregation bit: false makes the port Individual.
    pub aggregatable: bool,
    /// LACP_Enabled: false for a port that is not full-duplex point-to-point.
    pub lacp_enabled: bool,
    /// The link's speed in Mbit/s (0: unknown), for `ad_select = bandwidth`.
    pub speed_mbps: u32,
}

impl PortConfig {
    /// An active, fast, aggregatable port with priority 32768 and key 1.
    pub fn new(name: &str, port_number: u16, mac: MacAddr) -> PortConfig {
        PortConfig {
            name: name.to_string(),
            mac,
            port_number,
            port_priority: 32768,
            key: 1,
            activity: Activity::Active,
            rate: Rate::Fast,
            aggregatable: true,
            lacp_enabled: true,
            speed_mbps: 0,
        }
    }
}
