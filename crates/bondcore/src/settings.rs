//! What the runtime needs to know about one bond, already validated.
//!
//! The configuration file (`lagkit-bondcfg`) speaks the operator's language
//! with all its aliases; this is the runtime's narrower view of it,
//! normalised once ([`Settings::normalised`]) and compared as a value (a
//! reload restarts a bond only when [`Settings::needs_restart`] says so).
//! The LACP system and port configurations of a bond are built here, and
//! `lagkit sim lacp` builds its systems with the same builder; so are the
//! PAgP ones of a static bond that runs PAgP.

use lagkit_hash::{Policy, Strong};
use lagkit_monitor::arp::ArpConfig;
use lagkit_proto::lacp::{Activity, MuxControl, NoPartner, PortConfig, Rate, SystemConfig};
use lagkit_proto::pagp;
use lagkit_wire::{MacAddr, SystemId};
use std::path::PathBuf;
use std::time::Duration;

/// The bonding mode: the configuration's own enum (Linux names via
/// [`BondMode::linux_name`]).
pub use lagkit_bondcfg::Mode as BondMode;

/// When a recovered primary takes over again (Linux `primary_reselect`;
/// `better` acts as `always`: no speeds are compared).
pub use lagkit_bondcfg::PrimaryReselect as Reselect;

/// Which MAC moves on an active-backup failover (Linux `fail_over_mac`):
/// `none` (the bond keeps its MAC, members theirs), `active` (the bond
/// takes the active member's MAC), `follow` (the active member takes the
/// bond's MAC and the previous one gets its own back).
pub use lagkit_bondcfg::FailOverMac;

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
    /// `ad_select`: which aggregate has the bond's one aggregator when
    /// members face several partners.
    pub ad_select: lagkit_api::status::AdSelect,
    /// `ad_actor_port_prio`: every member's port priority, unless
    /// `port_priorities` names it.
    pub port_priority: u16,
    /// Per-member port priorities (`ad_actor_port_prio = { eth1 = 100 }`).
    pub port_priorities: Vec<(String, u16)>,
}

/// PAgP settings of a static bond (balance-xor, active-backup): each
/// member is a PAgP port and carries traffic only while PAgP has it in the
/// channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PagpSettings {
    /// `pagp = "desirable"` (speaks first) or `"auto"` (answers only).
    pub mode: pagp::Mode,
    /// `pagp_silent`: a desirable member whose partner never speaks PAgP
    /// joins after the silent wait (silent), or never (non-silent).
    pub silence: pagp::Silence,
    /// `pagp_rate = "fast"`: hellos every second also once in the channel.
    pub fast: bool,
    /// At most this many members in the channel, the rest hot standby:
    /// one in active-backup, so the switch sends only on the member the
    /// bond receives on; `None` (balance-xor): all.
    pub max_ports: Option<usize>,
}

/// The runtime's settings of one bond.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Bond (TAP) name.
    pub name: String,
    /// Members, in configuration order.
    pub members: Vec<String>,
    /// AIX `backup_adapter`: used only when no member can carry traffic.
    pub backup: Option<String>,
    /// Members taken even though the host still uses them.
    pub force_members: Vec<String>,
    /// AIX `auto_recovery`: leave the backup adapter when a member recovers.
    pub auto_recovery: bool,
    /// Mode.
    pub mode: BondMode,
    /// Transmit hash policy.
    pub policy: Policy,
    /// MTU of the bond and its members.
    pub mtu: Option<u32>,
    /// Members (and backup adapter) whose transmit offloads lagkit turns
    /// off while it holds them (`offloads = false`).
    pub offloads_off: Vec<String>,
    /// Which data path moves frames (`engine`; `lagkit up --engine`).
    pub engine: lagkit_bondcfg::Engine,
    /// Addresses (CIDR) for the bond interface.
    pub addresses: Vec<lagkit_bondcfg::Cidr>,
    /// Bond MAC; default: the first member's.
    pub mac: Option<MacAddr>,
    /// Poll carrier this often in addition to netlink events (0 = never).
    pub miimon: Duration,
    /// Carrier must hold this long before a member is used.
    pub updelay: Duration,
    /// Carrier loss must hold this long before a member is dropped
    /// (not for 802.3ad, where a port leaves distribution at once).
    pub downdelay: Duration,
    /// `peer_notif_delay` (shown; announcements follow `num_grat_arp`).
    pub peer_notif_delay: Duration,
    /// 802.3ad settings.
    pub lacp: LacpSettings,
    /// PAgP towards the switch (balance-xor, active-backup), if it runs.
    pub pagp: Option<PagpSettings>,
    /// Preferred member (active-backup).
    pub primary: Option<String>,
    /// When the primary takes over again.
    pub primary_reselect: Reselect,
    /// ARP/ping probe monitor.
    pub arp: Option<ArpConfig>,
    /// `ns_ip6_target` (shown; the probe monitor asks IPv4 targets).
    pub ns_targets: Vec<std::net::Ipv6Addr>,
    /// Gratuitous ARPs after a failover.
    pub num_grat_arp: u8,
    /// MAC handling on failover.
    pub fail_over_mac: FailOverMac,
    /// Round-robin: frames per member before moving on.
    pub packets_per_slave: u32,
    /// balance-tlb/alb: time between learning frames (Linux `lp_interval`).
    pub lp_interval: Duration,
    /// balance-tlb/alb: move flows by load (Linux `tlb_dynamic_lb`); off,
    /// flows hash by `policy` and stay where it puts them.
    pub tlb_dynamic_lb: bool,
    /// Control socket path.
    pub control_socket: PathBuf,
    /// Where Prometheus metrics are served (`metrics_listen`, or
    /// 127.0.0.1:`metrics_port`); `None`: nowhere.
    pub metrics_listen: Option<std::net::SocketAddr>,
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
            force_members: Vec::new(),
            auto_recovery: true,
            mode,
            policy: Policy::Strong(lagkit_hash::Strong::new(0x6c61_676b_6974)),
            mtu: None,
            offloads_off: Vec::new(),
            engine: lagkit_bondcfg::Engine::Auto,
            addresses: Vec::new(),
            mac: None,
            miimon: Duration::ZERO,
            updelay: Duration::ZERO,
            downdelay: Duration::ZERO,
            peer_notif_delay: Duration::ZERO,
            lacp: LacpSettings::default(),
            pagp: None,
            primary: None,
            primary_reselect: Reselect::Always,
            arp: None,
            ns_targets: Vec::new(),
            num_grat_arp: 1,
            fail_over_mac: FailOverMac::None,
            packets_per_slave: 1,
            lp_interval: Duration::from_secs(1),
            tlb_dynamic_lb: true,
            control_socket: PathBuf::from(format!("/run/lagkit/{name}.sock")),
            metrics_listen: None,
            adaptive_interval: Duration::from_secs(1),
            adaptive_idle_gap: Duration::from_millis(10),
            warnings: Vec::new(),
            hash_seed_fixed: true,
            faults: Vec::new(),
        }
    }

    /// The load balancer's timers (`adaptive_interval`,
    /// `adaptive_idle_gap`), its other limits at their defaults.
    pub fn adaptive_config(&self) -> lagkit_hash::AdaptiveConfig {
        lagkit_hash::AdaptiveConfig {
            interval_ns: u64::try_from(self.adaptive_interval.as_nanos()).unwrap_or(u64::MAX),
            idle_gap_ns: u64::try_from(self.adaptive_idle_gap.as_nanos()).unwrap_or(u64::MAX),
            ..lagkit_hash::AdaptiveConfig::default()
        }
    }

    /// Whether flows move by load: adaptive always, balance-tlb and
    /// balance-alb unless `tlb_dynamic_lb = false`.
    pub fn rebalances(&self) -> bool {
        match self.mode {
            BondMode::Adaptive => true,
            BondMode::BalanceTlb | BondMode::BalanceAlb => self.tlb_dynamic_lb,
            _ => false,
        }
    }

    /// The settings as the runtime uses them: a mode that moves flows by
    /// load moves the buckets of `strong`, so another policy is replaced
    /// (with a warning shown in status; the configuration parser warns
    /// too). balance-tlb/alb with `tlb_dynamic_lb = false` hash by the
    /// configured policy, as Linux does. Normalising twice changes nothing.
    pub fn normalised(mut self) -> Settings {
        if self.rebalances() && !matches!(self.policy, Policy::Strong(_)) {
            let why = match self.mode {
                BondMode::Adaptive => "adaptive moves the buckets of the strong hash by load".to_string(),
                m => format!(
                    "{m} with tlb_dynamic_lb = true moves the buckets of the strong hash by load (set tlb_dynamic_lb = false to hash by {} without moving flows, as Linux does)",
                    self.policy
                ),
            };
            self.warnings.push(format!(
                "xmit_hash_policy = \"{}\" is not used, strong runs instead: {why}",
                self.policy
            ));
            self.policy = Policy::Strong(Strong::new(0x6c61_676b_6974));
        }
        self
    }

    /// The downdelay of the members' carrier: none in 802.3ad, where a
    /// port leaves distribution the moment carrier drops.
    pub fn member_downdelay(&self) -> Duration {
        if self.mode == BondMode::Lacp {
            Duration::ZERO
        } else {
            self.downdelay
        }
    }

    /// A `strong` seed drawn at random (not configured) stays the one
    /// `old` drew across reloads, or every reload would move every flow.
    pub fn keep_seed_of(&mut self, old: &Settings) {
        if let (false, Policy::Strong(old), Policy::Strong(new)) =
            (self.hash_seed_fixed, old.policy, self.policy)
        {
            self.policy = Policy::Strong(Strong::new(old.seed).with_symmetric(new.symmetric));
        }
    }

    /// Whether the control plane reads the ARP frames members receive
    /// (the ARP monitor's replies, balance-alb's clients).
    pub fn snoops_arp(&self) -> bool {
        self.arp.is_some() || self.mode == BondMode::BalanceAlb
    }

    /// Whether lagkit leaves member `name`'s transmit offloads alone.
    pub fn keeps_offloads(&self, name: &str) -> bool {
        !self.offloads_off.iter().any(|m| m == name)
    }

    /// The configuration keys whose change takes a running bond with these
    /// settings to `new`, each with how it applies (the reload log names
    /// them). A key appears once, however many fields it moves.
    pub fn changes(&self, new: &Settings) -> Vec<KeyChange> {
        // Destructured so that a new field does not compile until a reload
        // knows what to do with it.
        let Settings {
            name,
            members,
            backup,
            force_members,
            auto_recovery,
            mode,
            policy,
            mtu,
            offloads_off,
            engine,
            addresses,
            mac,
            miimon,
            updelay,
            downdelay,
            peer_notif_delay,
            lacp,
            pagp,
            primary,
            primary_reselect,
            arp,
            ns_targets,
            num_grat_arp,
            fail_over_mac,
            packets_per_slave,
            lp_interval,
            control_socket,
            metrics_listen,
            adaptive_interval,
            adaptive_idle_gap,
            tlb_dynamic_lb,
            warnings: _,
            hash_seed_fixed: _,
            faults,
        } = self;
        let mut out: Vec<KeyChange> = Vec::new();
        let mut push =
            |key: &'static str, changed: bool, apply: Apply, note: Option<&'static str>| {
                if changed && !out.iter().any(|c| c.key == key) {
                    out.push(KeyChange { key, apply, note });
                }
            };
        use Apply::{InPlace, Restart};
        // Turning PAgP or the ARP monitor on or off changes what the members'
        // receive path passes up, which is set as they are taken.
        let on_off = Some("turned on or off: the members' receive path passes its frames up only while it runs, and is set up as they are taken");
        push(
            "pagp",
            pagp.is_some() != new.pagp.is_some(),
            Restart,
            on_off,
        );
        push(
            "arp_interval",
            arp.is_some() != new.arp.is_some(),
            Restart,
            on_off,
        );
        let faults_note =
            Some("`lagkit up --fault-loss` wraps the members' sockets as they are taken");
        push("fault_loss", *faults != new.faults, Restart, faults_note);
        let mut key = |key, changed, apply| push(key, changed, apply, None);
        key("name", *name != new.name, Restart);
        key("mode", *mode != new.mode, Restart);
        key(
            "control_socket",
            *control_socket != new.control_socket,
            Restart,
        );
        key("engine", *engine != new.engine, Restart);
        key("mac", *mac != new.mac, Restart);
        key("mtu", *mtu != new.mtu, Restart);
        key("backup_adapter", *backup != new.backup, Restart);
        key(
            "fail_over_mac",
            *fail_over_mac != new.fail_over_mac,
            Restart,
        );
        key(
            "lacp_no_partner",
            lacp.no_partner != new.lacp.no_partner,
            Restart,
        );
        key("coupled_control", lacp.coupled != new.lacp.coupled, Restart);
        key(
            "tlb_dynamic_lb",
            *tlb_dynamic_lb != new.tlb_dynamic_lb,
            Restart,
        );
        key("members", *members != new.members, InPlace);
        key(
            "force_members",
            *force_members != new.force_members,
            InPlace,
        );
        key("offloads", *offloads_off != new.offloads_off, InPlace);
        key("address", *addresses != new.addresses, InPlace);
        match (policy, &new.policy) {
            (Policy::Strong(a), Policy::Strong(b)) => {
                key("hash_seed", a.seed != b.seed, InPlace);
                key("hash_symmetric", a.symmetric != b.symmetric, InPlace);
            }
            (a, b) => key("xmit_hash_policy", a != b, InPlace),
        }
        key("miimon", *miimon != new.miimon, InPlace);
        key("updelay", *updelay != new.updelay, InPlace);
        key("downdelay", *downdelay != new.downdelay, InPlace);
        key("lacp_rate", lacp.fast != new.lacp.fast, InPlace);
        key("lacp_active", lacp.active != new.lacp.active, InPlace);
        let prio = lacp.system_priority != new.lacp.system_priority;
        key("ad_actor_sys_prio", prio, InPlace);
        key(
            "ad_actor_system",
            lacp.system_mac != new.lacp.system_mac,
            InPlace,
        );
        key("ad_user_port_key", lacp.key != new.lacp.key, InPlace);
        let port_prio = lacp.port_priority != new.lacp.port_priority
            || lacp.port_priorities != new.lacp.port_priorities;
        key("ad_actor_port_prio", port_prio, InPlace);
        key("ad_select", lacp.ad_select != new.lacp.ad_select, InPlace);
        key(
            "peer_notif_delay",
            *peer_notif_delay != new.peer_notif_delay,
            InPlace,
        );
        key("ns_ip6_target", *ns_targets != new.ns_targets, InPlace);
        key("min_links", lacp.min_links != new.lacp.min_links, InPlace);
        key(
            "max_bundle",
            lacp.max_bundle != new.lacp.max_bundle,
            InPlace,
        );
        if let (Some(a), Some(b)) = (pagp, &new.pagp) {
            key("pagp", a.mode != b.mode, InPlace);
            key("pagp_silent", a.silence != b.silence, InPlace);
            key("pagp_rate", a.fast != b.fast, InPlace);
        }
        key("primary", *primary != new.primary, InPlace);
        key(
            "primary_reselect",
            *primary_reselect != new.primary_reselect,
            InPlace,
        );
        key(
            "auto_recovery",
            *auto_recovery != new.auto_recovery,
            InPlace,
        );
        if let (Some(a), Some(b)) = (arp, &new.arp) {
            key("arp_interval", a.interval != b.interval, InPlace);
            key("arp_ip_target", a.targets != b.targets, InPlace);
            key("arp_missed_max", a.missed_max != b.missed_max, InPlace);
            key("arp_validate", a.validate != b.validate, InPlace);
            key("arp_all_targets", a.all_targets != b.all_targets, InPlace);
        }
        key("num_grat_arp", *num_grat_arp != new.num_grat_arp, InPlace);
        key(
            "packets_per_slave",
            *packets_per_slave != new.packets_per_slave,
            InPlace,
        );
        key("lp_interval", *lp_interval != new.lp_interval, InPlace);
        key(
            "metrics_listen",
            *metrics_listen != new.metrics_listen,
            InPlace,
        );
        key(
            "adaptive_interval",
            *adaptive_interval != new.adaptive_interval,
            InPlace,
        );
        key(
            "adaptive_idle_gap",
            *adaptive_idle_gap != new.adaptive_idle_gap,
            InPlace,
        );
        out
    }

    /// Whether a running bond with these settings must restart to take
    /// `new`: some key of [`Settings::changes`] cannot apply in place.
    pub fn needs_restart(&self, new: &Settings) -> bool {
        self.changes(new).iter().any(|c| c.apply == Apply::Restart)
    }
}

/// How a reload applies one changed key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Apply {
    /// To the running bond: the members keep their sockets, their LACP or
    /// PAgP state and their traffic.
    InPlace,
    /// The bond stops and starts again with the new settings (why: the
    /// key's entry in the key reference, [`KeyChange::why`]).
    Restart,
}

/// One configuration key a reload changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyChange {
    /// Its canonical name, as in the configuration file.
    pub key: &'static str,
    /// How it applies.
    pub apply: Apply,
    /// Why this change restarts, when the key itself applies in place
    /// otherwise (turning a protocol or monitor on or off).
    pub note: Option<&'static str>,
}

impl KeyChange {
    /// Why the key needs a restart, as the key reference says (`None` for a
    /// key applied in place).
    pub fn why(&self) -> Option<&'static str> {
        if self.apply == Apply::InPlace {
            return None;
        }
        if self.note.is_some() {
            return self.note;
        }
        lagkit_bondcfg::key_docs()
            .find(|d| d.name == self.key)
            .and_then(|d| d.reload.why())
            .or(Some("not applied in place"))
    }
}

/// The reload's log line: each changed key and how it applies, such as
/// `lacp_rate (in place), mode (restart: ...)`.
pub fn describe_changes(changes: &[KeyChange]) -> String {
    let parts: Vec<String> = changes
        .iter()
        .map(|c| match c.why() {
            None => format!("{} (in place)", c.key),
            Some(why) => format!("{} (restart: {why})", c.key),
        })
        .collect();
    parts.join(", ")
}

impl Default for LacpSettings {
    /// Linux's defaults: slow, active, priority 65535, key 1, coupled.
    fn default() -> Self {
        LacpSettings {
            fast: false,
            active: true,
            system_priority: 65535,
            system_mac: None,
            key: 1,
            min_links: 0,
            max_bundle: None,
            no_partner: NoPartner::Individual,
            coupled: true,
            ad_select: lagkit_api::status::AdSelect::Stable,
            port_priority: 255,
            port_priorities: Vec::new(),
        }
    }
}

impl LacpSettings {
    /// The LACP system of a bond named `name` whose MAC is `bond_mac`
    /// (the System ID's MAC unless `ad_actor_system` is set).
    pub fn system_config(&self, name: &str, bond_mac: MacAddr) -> SystemConfig {
        let mac = self.system_mac.unwrap_or(bond_mac);
        let mut cfg = SystemConfig::new(name, mac);
        cfg.system = SystemId::new(self.system_priority, mac);
        // A host bond carries one aggregate at a time.
        cfg.aggregators = 1;
        cfg.max_bundle = self.max_bundle;
        cfg.min_links = self.min_links;
        cfg.no_partner = self.no_partner;
        cfg.ad_select = match self.ad_select {
            lagkit_api::status::AdSelect::Stable => lagkit_proto::lacp::AdSelect::Stable,
            lagkit_api::status::AdSelect::Bandwidth => lagkit_proto::lacp::AdSelect::Bandwidth,
            lagkit_api::status::AdSelect::Count => lagkit_proto::lacp::AdSelect::Count,
        };
        cfg.mux_control = if self.coupled {
            MuxControl::Coupled
        } else {
            MuxControl::Independent
        };
        cfg
    }

    /// The LACP configuration of member `name`'s port `number`.
    pub fn port_config(&self, name: &str, number: u16, mac: MacAddr) -> PortConfig {
        let mut pc = PortConfig::new(name, number, mac);
        pc.activity = if self.active {
            Activity::Active
        } else {
            Activity::Passive
        };
        pc.rate = if self.fast { Rate::Fast } else { Rate::Slow };
        pc.key = self.key;
        pc.port_priority = self.port_priority_of(name);
        pc
    }

    /// Member `name`'s port priority.
    pub fn port_priority_of(&self, name: &str) -> u16 {
        (self.port_priorities.iter())
            .find(|(m, _)| m == name)
            .map_or(self.port_priority, |(_, p)| *p)
    }
}

impl PagpSettings {
    /// The PAgP system of a bond named `name`: the bond's MAC as device id,
    /// the logical interface's ifindex as the group ifindex, one channel.
    pub fn system_config(&self, name: &str, bond_mac: MacAddr, ifindex: u32) -> pagp::SystemConfig {
        let mut cfg = pagp::SystemConfig::new(name, bond_mac);
        cfg.group_ifindex = ifindex;
        cfg.max_ports = self.max_ports;
        cfg.timers.fast_rate = self.fast;
        cfg
    }

    /// The PAgP configuration of member `name`, its port `ifindex`; the
    /// `primary` member has the highest port priority, so it is the one in
    /// the channel when only one may be.
    pub fn port_config(
        &self,
        name: &str,
        ifindex: u32,
        mac: MacAddr,
        primary: bool,
    ) -> pagp::PortConfig {
        let mut pc = pagp::PortConfig::new(name, ifindex, mac);
        pc.mode = self.mode;
        pc.silence = self.silence;
        if primary {
            pc.port_priority = u8::MAX;
        }
        pc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ad_select_and_port_priorities_reach_the_lacp_system_and_ports() {
        let mut l = LacpSettings {
            ad_select: lagkit_api::status::AdSelect::Count,
            port_priority: 200,
            port_priorities: vec![("eth2".into(), 7)],
            ..LacpSettings::default()
        };
        let cfg = l.system_config("bond0", MacAddr([2, 0, 0, 0, 0, 1]));
        assert_eq!(cfg.ad_select, lagkit_proto::lacp::AdSelect::Count);
        assert_eq!(cfg.aggregators, 1, "a host bond carries one aggregate");
        let mac = MacAddr([2, 0, 0, 0, 0, 2]);
        assert_eq!(l.port_config("eth1", 1, mac).port_priority, 200);
        assert_eq!(l.port_config("eth2", 2, mac).port_priority, 7);
        l.ad_select = lagkit_api::status::AdSelect::Bandwidth;
        let cfg = l.system_config("bond0", mac);
        assert_eq!(cfg.ad_select, lagkit_proto::lacp::AdSelect::Bandwidth);
        assert_eq!(
            LacpSettings::default()
                .port_config("eth1", 1, mac)
                .port_priority,
            255,
            "Linux's default"
        );
    }

    #[test]
    fn adaptive_modes_get_strong_once_with_a_warning() {
        let mut s = Settings::new("b", &["a"], BondMode::BalanceTlb);
        s.policy = "layer2".parse().unwrap();
        let n = s.normalised();
        assert!(matches!(n.policy, Policy::Strong(_)));
        assert_eq!(n.warnings.len(), 1);
        assert!(
            n.warnings[0].starts_with("xmit_hash_policy = \"layer2\" is not used, strong runs instead: balance-tlb with tlb_dynamic_lb = true")
                && n.warnings[0].contains("set tlb_dynamic_lb = false"),
            "{:?}",
            n.warnings
        );
        assert_eq!(
            n.clone().normalised(),
            n,
            "normalising twice changes nothing"
        );
        let mut x = Settings::new("b", &["a"], BondMode::BalanceXor);
        x.policy = "layer2".parse().unwrap();
        assert_eq!(x.clone().normalised(), x, "xor keeps its policy");
    }

    #[test]
    fn tlb_and_alb_without_dynamic_lb_hash_by_the_configured_policy() {
        for mode in [BondMode::BalanceTlb, BondMode::BalanceAlb] {
            let mut s = Settings::new("b", &["a", "b"], mode);
            s.policy = "layer3+4".parse().unwrap();
            assert!(s.rebalances());
            s.tlb_dynamic_lb = false;
            assert!(!s.rebalances(), "{mode}: nothing moves flows by load");
            let n = s.clone().normalised();
            assert_eq!(n, s, "{mode}: layer3+4 runs, no warning");
            assert_eq!(n.policy.to_string(), "layer3+4");
        }
        let mut a = Settings::new("b", &["a"], BondMode::Adaptive);
        a.tlb_dynamic_lb = false;
        assert!(a.rebalances(), "adaptive always moves flows");
        a.policy = "layer3+4".parse().unwrap();
        let n = a.normalised();
        assert!(matches!(n.policy, Policy::Strong(_)), "{n:?}");
        assert!(n.warnings[0].contains("adaptive moves"), "{:?}", n.warnings);
    }

    #[test]
    fn members_and_lacp_identity_apply_in_place() {
        let old = Settings::new("b", &["a", "b"], BondMode::Lacp);
        let mut new = Settings::new("b", &["a", "c"], BondMode::Lacp);
        new.lacp.fast = true;
        new.lacp.system_priority = 100;
        new.lacp.key = 0x41;
        assert!(!old.needs_restart(&new));
        new.lacp.coupled = false;
        assert!(old.needs_restart(&new));
        let mut mode = old.clone();
        mode.mode = BondMode::BalanceXor;
        assert!(old.needs_restart(&mode));
        assert!(!old.needs_restart(&old));
    }

    #[test]
    fn pagp_mode_silence_and_rate_apply_in_place_but_pagp_on_or_off_restarts() {
        let mut old = Settings::new("b", &["a", "b"], BondMode::BalanceXor);
        old.pagp = Some(PagpSettings {
            mode: pagp::Mode::Desirable,
            silence: pagp::Silence::Silent,
            fast: false,
            max_ports: None,
        });
        let mut new = old.clone();
        new.members = vec!["a".into(), "c".into()];
        new.pagp = Some(PagpSettings {
            mode: pagp::Mode::Auto,
            silence: pagp::Silence::NonSilent,
            fast: true,
            max_ports: Some(1),
        });
        assert!(!old.needs_restart(&new));
        assert_ne!(old, new);
        new.pagp = None;
        assert!(old.needs_restart(&new), "PAgP off");
        assert!(new.needs_restart(&old), "PAgP on");
    }

    #[test]
    fn rates_hash_policies_timers_and_priorities_apply_in_place() {
        let old = Settings::new("b", &["a", "b"], BondMode::Lacp);
        let mut new = old.clone();
        new.lacp.fast = true;
        new.lacp.active = false;
        new.lacp.min_links = 2;
        new.lacp.max_bundle = Some(1);
        new.policy = "layer3+4".parse().unwrap();
        new.miimon = Duration::from_millis(100);
        new.updelay = Duration::from_millis(200);
        new.downdelay = Duration::from_millis(200);
        new.primary = Some("b".into());
        new.primary_reselect = Reselect::Failure;
        new.packets_per_slave = 3;
        new.num_grat_arp = 2;
        new.lp_interval = Duration::from_secs(2);
        new.metrics_listen = Some(lagkit_api::metrics::loopback(9400));
        new.adaptive_interval = Duration::from_millis(500);
        new.adaptive_idle_gap = Duration::from_millis(20);
        new.addresses = vec!["192.0.2.1/24".parse().unwrap()];
        new.auto_recovery = false;
        let changes = old.changes(&new);
        let keys: Vec<&str> = changes.iter().map(|c| c.key).collect();
        assert_eq!(
            keys,
            [
                "address",
                "xmit_hash_policy",
                "miimon",
                "updelay",
                "downdelay",
                "lacp_rate",
                "lacp_active",
                "min_links",
                "max_bundle",
                "primary",
                "primary_reselect",
                "auto_recovery",
                "num_grat_arp",
                "packets_per_slave",
                "lp_interval",
                "metrics_listen",
                "adaptive_interval",
                "adaptive_idle_gap",
            ]
        );
        assert!(changes.iter().all(|c| c.apply == Apply::InPlace));
        assert!(!old.needs_restart(&new));
        let line = describe_changes(&changes[..2]);
        assert_eq!(line, "address (in place), xmit_hash_policy (in place)");
        // Between two strong hashes, the seed and symmetry are named.
        let mut seeded = old.clone();
        seeded.policy = Policy::Strong(Strong::new(7).with_symmetric(true));
        let keys: Vec<&str> = old.changes(&seeded).iter().map(|c| c.key).collect();
        assert_eq!(keys, ["hash_seed", "hash_symmetric"]);
    }

    #[test]
    fn the_keys_that_restart_say_why() {
        let old = Settings::new("b", &["a", "b"], BondMode::Lacp);
        let mut new = old.clone();
        new.mode = BondMode::BalanceXor;
        new.mtu = Some(9000);
        new.lacp.fast = true;
        let changes = old.changes(&new);
        let apply: Vec<(&str, Apply)> = changes.iter().map(|c| (c.key, c.apply)).collect();
        assert_eq!(
            apply,
            [
                ("mode", Apply::Restart),
                ("mtu", Apply::Restart),
                ("lacp_rate", Apply::InPlace)
            ]
        );
        assert!(old.needs_restart(&new));
        let line = describe_changes(&changes);
        assert!(
            line.starts_with("mode (restart: the mode decides"),
            "{line}"
        );
        assert!(line.ends_with("lacp_rate (in place)"), "{line}");
        for c in &changes[..2] {
            assert!(c.why().is_some_and(|w| w.len() > 20), "{c:?}");
        }
        // The ARP monitor on or off restarts; changed while it runs, not.
        let mut ab = Settings::new("b", &["a", "b"], BondMode::ActiveBackup);
        let arp = ArpConfig {
            interval: Duration::from_millis(100),
            targets: vec!["192.0.2.9".parse().unwrap()],
            missed_max: 2,
            validate: false,
            all_targets: lagkit_monitor::Combine::Any,
        };
        let mut on = ab.clone();
        on.arp = Some(arp.clone());
        assert!(ab.needs_restart(&on) && on.needs_restart(&ab));
        ab.arp = Some(arp.clone());
        on.arp = Some(ArpConfig {
            interval: Duration::from_millis(300),
            missed_max: 3,
            ..arp
        });
        let keys: Vec<&str> = ab.changes(&on).iter().map(|c| c.key).collect();
        assert_eq!(keys, ["arp_interval", "arp_missed_max"]);
        assert!(!ab.needs_restart(&on));
    }

    #[test]
    fn pagp_configs_follow_the_settings() {
        let bond = MacAddr([2, 0, 0, 0, 0, 1]);
        let mut p = PagpSettings {
            mode: pagp::Mode::Auto,
            silence: pagp::Silence::NonSilent,
            fast: false,
            max_ports: Some(1),
        };
        let sys = p.system_config("b", bond, 7);
        assert_eq!((sys.device_id, sys.group_ifindex), (bond, 7));
        assert_eq!(sys.max_ports, Some(1));
        assert_eq!(sys.timers, pagp::Timers::default());
        p.fast = true;
        let t = p.system_config("b", bond, 7).timers;
        assert_eq!(t.hello_interval(true), t.fast_hello);
        assert!(!t.sends_slow(true));
        // A partner's slow hellos still age by the slow interval.
        assert_eq!(t.slow_hello, pagp::Timers::default().slow_hello);
        let pc = p.port_config("eth1", 3, bond, false);
        assert_eq!(
            (pc.mode, pc.silence, pc.ifindex, pc.port_priority),
            (pagp::Mode::Auto, pagp::Silence::NonSilent, 3, 128)
        );
        assert_eq!(p.port_config("eth1", 3, bond, true).port_priority, 255);
    }

    #[test]
    fn offloads_apply_in_place() {
        let old = Settings::new("b", &["a", "b"], BondMode::ActiveBackup);
        let mut new = old.clone();
        new.offloads_off = vec!["b".into()];
        assert!(
            !old.needs_restart(&new),
            "a member's offloads change in place"
        );
        assert_ne!(old, new, "but the bond is told about it");
        assert!(new.keeps_offloads("a") && !new.keeps_offloads("b"));
        new.mtu = Some(9000);
        assert!(old.needs_restart(&new));
    }

    #[test]
    fn a_random_seed_survives_a_reload_and_a_fixed_one_does_not() {
        let mut old = Settings::new("b", &["a"], BondMode::BalanceXor);
        old.policy = Policy::Strong(Strong::new(1));
        let mut new = old.clone();
        new.policy = Policy::Strong(Strong::new(2));
        new.hash_seed_fixed = false;
        new.keep_seed_of(&old);
        assert_eq!(new.policy, old.policy);
        new.policy = Policy::Strong(Strong::new(2));
        new.hash_seed_fixed = true;
        new.keep_seed_of(&old);
        assert_eq!(new.policy, Policy::Strong(Strong::new(2)));
    }

    #[test]
    fn lacp_configs_follow_the_settings() {
        let mut l = Settings::new("b", &["a"], BondMode::Lacp).lacp;
        let bond = MacAddr([2, 0, 0, 0, 0, 1]);
        let sys = l.system_config("b", bond);
        assert_eq!(sys.system, SystemId::new(65535, bond));
        assert_eq!((sys.aggregators, sys.mux_control), (1, MuxControl::Coupled));
        l.system_mac = Some(MacAddr([2, 0, 0, 0, 0, 9]));
        l.fast = true;
        l.active = false;
        assert_eq!(
            l.system_config("b", bond).system.mac,
            MacAddr([2, 0, 0, 0, 0, 9])
        );
        let p = l.port_config("eth0", 3, bond);
        assert_eq!(
            (p.activity, p.rate, p.key),
            (Activity::Passive, Rate::Fast, 1)
        );
    }
}
