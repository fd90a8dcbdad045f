//! The typed configuration of one bond, and what changed between two of them.
//!
//! Field names are the canonical (Linux) key names and times are plain
//! integers in the unit Linux uses for that key, so a status dump reads like
//! the file and `to_toml` writes a file that parses back to the same value.
//! Values that are decided at run time (the MAC from the first member, a
//! random hash seed, the socket path from the network namespace) stay
//! `Option`s here; helpers resolve them.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;

use lagkit_hash::{Policy, Strong};
use lagkit_wire::MacAddr;
use serde::{Serialize, Serializer};

use crate::cidr::Cidr;
use crate::enums::{
    AdSelect, ArpAllTargets, ArpValidate, Engine, FailOverMac, LacpRate, Mode, NoPartner, Pagp,
    PagpRate, PrimaryReselect,
};
use crate::keys::{Key, KEYS};
use crate::paths;

/// One bond, as the daemon runs it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BondConfig {
    /// Interface name of the bond (`bond0`).
    pub name: String,
    /// Interfaces aggregated, in order (AIX `adapter_names`, Linux `slaves`).
    pub members: Vec<String>,
    /// Bonding mode.
    pub mode: Mode,
    /// Transmit hash policy (AIX `hash_mode`); for `strong`, seed and
    /// symmetry here mirror `hash_seed` (0 while unset) and `hash_symmetric`.
    #[serde(serialize_with = "display")]
    pub xmit_hash_policy: Policy,
    /// Seed of the `strong` hash; `None`: random per bond at start.
    pub hash_seed: Option<u64>,
    /// Both directions of a flow hash alike (`strong` only).
    pub hash_symmetric: bool,
    /// MTU of the bond and its members (AIX `use_jumbo_frame = yes`: 9000).
    pub mtu: u16,
    /// Members (and backup adapter) whose transmit offloads — tx
    /// checksumming, TSO, GSO — lagkit turns off while it runs
    /// (`offloads = false`, or `offloads = { eth2 = false }` per member),
    /// in configuration order. Written as the per-member table.
    #[serde(rename = "offloads", serialize_with = "offloads_table")]
    pub offloads_off: Vec<String>,
    /// Addresses of the bond, with prefix lengths.
    pub address: Vec<Cidr>,
    /// MAC of the bond; `None`: the first member's, at run time.
    #[serde(serialize_with = "display_opt")]
    pub mac: Option<MacAddr>,
    /// Carrier polling period in ms; 0: netlink carrier events only.
    pub miimon: u32,
    /// ms a member must stay up before use (a multiple of `miimon` when polling).
    pub updelay: u32,
    /// ms a member must stay down before it is dropped (likewise).
    pub downdelay: u32,
    /// ms between peer notifications after a failover (likewise).
    pub peer_notif_delay: u32,
    /// LACPDU rate asked of the partner.
    pub lacp_rate: LacpRate,
    /// LACP active (true) or passive (false).
    pub lacp_active: bool,
    /// LACP system priority.
    pub ad_actor_sys_prio: u16,
    /// LACP system MAC; `None`: the bond's MAC.
    #[serde(serialize_with = "display_opt")]
    pub ad_actor_system: Option<MacAddr>,
    /// LACP port priorities: one for every member, or one per member named.
    pub ad_actor_port_prio: PortPriorities,
    /// Upper 10 bits of the LACP port key.
    pub ad_user_port_key: u16,
    /// Aggregator selection.
    pub ad_select: AdSelect,
    /// Members that must be up before the bond has carrier.
    pub min_links: u32,
    /// At most this many members carry traffic; the rest stand by (Cisco `lacp max-bundle`).
    pub max_bundle: Option<u16>,
    /// What a member does when no LACP partner answers.
    pub lacp_no_partner: NoPartner,
    /// Coupled (true) or independent (false) collection and distribution.
    pub coupled_control: bool,
    /// PAgP towards the switch (balance-xor and active-backup only).
    pub pagp: Pagp,
    /// Silent (true, Cisco's default): a `desirable` member whose partner
    /// never speaks PAgP joins after 15 s; non-silent (false): it never does.
    pub pagp_silent: bool,
    /// How often a member in the channel says hello.
    pub pagp_rate: PagpRate,
    /// Preferred member (active-backup, tlb, alb).
    pub primary: Option<String>,
    /// When the primary takes over again.
    pub primary_reselect: PrimaryReselect,
    /// MAC handling at failover (active-backup).
    pub fail_over_mac: FailOverMac,
    /// Which data path moves frames (`engine`).
    pub engine: Engine,
    /// ARP probe period in ms; 0: no ARP monitor.
    pub arp_interval: u32,
    /// IPv4 ARP probe targets (at most 16).
    pub arp_ip_target: Vec<Ipv4Addr>,
    /// IPv6 neighbour-solicitation probe targets (at most 16).
    pub ns_ip6_target: Vec<Ipv6Addr>,
    /// Which replies validate a member.
    pub arp_validate: ArpValidate,
    /// Any or all targets must answer.
    pub arp_all_targets: ArpAllTargets,
    /// Probe periods without an answer before a member is down.
    pub arp_missed_max: u8,
    /// Gratuitous ARPs / unsolicited NAs after a failover (also `num_unsol_na`).
    pub num_grat_arp: u8,
    /// Packets sent on a member before moving on (balance-rr; 0: random).
    pub packets_per_slave: u16,
    /// Seconds between learning packets (tlb, alb).
    pub lp_interval: u32,
    /// Rebalance flows by load (tlb, alb).
    pub tlb_dynamic_lb: bool,
    /// Deliver frames received on inactive members too.
    pub all_slaves_active: bool,
    /// IGMP reports sent after a failover.
    pub resend_igmp: u8,
    /// AIX backup adapter: used only when every member has failed; not a member.
    pub backup_adapter: Option<String>,
    /// Members taken even though the host still uses them (`force_members`).
    pub force_members: Vec<String>,
    /// Return from the backup adapter when a member recovers (AIX).
    pub auto_recovery: bool,
    /// Address to ping to decide that the members are cut off (AIX).
    pub netaddr: Option<Ipv4Addr>,
    /// Unanswered pings of `netaddr` before failing over (AIX).
    pub num_retries: u32,
    /// Seconds between pings of `netaddr` (AIX).
    pub retry_time: u32,
    /// Control socket; `None`: [`paths::default_control_socket`].
    pub control_socket: Option<PathBuf>,
    /// Where Prometheus metrics are served (a bare port means
    /// 127.0.0.1); `None`: no metrics listener.
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// ms between adaptive rebalancing passes.
    pub adaptive_interval: u32,
    /// ms a bucket must be idle before the adaptive balancer moves it.
    pub adaptive_idle_gap: u32,
}

fn display<T: core::fmt::Display, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// `ad_actor_port_prio`: one priority for every member, or a table of
/// members (the others keep Linux's default, 255).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortPriorities {
    /// `ad_actor_port_prio = 100`.
    All(u16),
    /// `ad_actor_port_prio = { eth1 = 100 }`: (member, priority).
    Each(Vec<(String, u16)>),
}

impl PortPriorities {
    /// Member `name`'s priority.
    pub fn of(&self, name: &str) -> u16 {
        match self {
            PortPriorities::All(p) => *p,
            PortPriorities::Each(list) => (list.iter())
                .find(|(m, _)| m == name)
                .map_or(255, |(_, p)| *p),
        }
    }
}

impl Serialize for PortPriorities {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            PortPriorities::All(p) => s.serialize_u16(*p),
            PortPriorities::Each(list) => {
                let mut m = s.serialize_map(Some(list.len()))?;
                for (name, p) in list {
                    m.serialize_entry(name, p)?;
                }
                m.end()
            }
        }
    }
}

/// `offloads_off` as the table the file may hold: `{ member = false, ... }`.
fn offloads_table<S: Serializer>(off: &[String], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(off.len()))?;
    for name in off {
        m.serialize_entry(name, &false)?;
    }
    m.end()
}

fn display_opt<T: core::fmt::Display, S: Serializer>(
    v: &Option<T>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.collect_str(v),
        None => s.serialize_none(),
    }
}

impl BondConfig {
    /// A bond with every other option at its default (Linux's where Linux
    /// has the option).
    pub fn new(name: impl Into<String>, mode: Mode, members: Vec<String>) -> BondConfig {
        BondConfig {
            name: name.into(),
            members,
            mode,
            xmit_hash_policy: Policy::Strong(Strong::default()),
            hash_seed: None,
            hash_symmetric: false,
            mtu: 1500,
            offloads_off: Vec::new(),
            address: Vec::new(),
            mac: None,
            miimon: 0,
            updelay: 0,
            downdelay: 0,
            peer_notif_delay: 0,
            lacp_rate: LacpRate::Slow,
            lacp_active: true,
            ad_actor_sys_prio: 65535,
            ad_actor_system: None,
            ad_actor_port_prio: PortPriorities::All(255),
            ad_user_port_key: 0,
            ad_select: AdSelect::Stable,
            min_links: 0,
            max_bundle: None,
            lacp_no_partner: NoPartner::Individual,
            coupled_control: true,
            pagp: Pagp::Off,
            pagp_silent: true,
            pagp_rate: PagpRate::Slow,
            primary: None,
            primary_reselect: PrimaryReselect::Always,
            fail_over_mac: FailOverMac::None,
            engine: Engine::Auto,
            arp_interval: 0,
            arp_ip_target: Vec::new(),
            ns_ip6_target: Vec::new(),
            arp_validate: ArpValidate::None,
            arp_all_targets: ArpAllTargets::Any,
            arp_missed_max: 2,
            num_grat_arp: 1,
            packets_per_slave: 1,
            lp_interval: 1,
            tlb_dynamic_lb: true,
            all_slaves_active: false,
            resend_igmp: 1,
            backup_adapter: None,
            force_members: Vec::new(),
            auto_recovery: true,
            netaddr: None,
            num_retries: 3,
            retry_time: 1,
            control_socket: None,
            metrics_listen: None,
            adaptive_interval: 1000,
            adaptive_idle_gap: 10,
        }
    }

    /// The hash policy to run, with `random_seed` standing in for an unset
    /// `hash_seed` (the daemon draws it once per bond at start).
    pub fn hash_policy(&self, random_seed: u64) -> Policy {
        match self.xmit_hash_policy {
            Policy::Strong(s) => Policy::Strong(Strong {
                seed: self.hash_seed.unwrap_or(random_seed),
                ..s
            }),
            other => other,
        }
    }

    /// The control socket path: `control_socket`, or the per-namespace default.
    pub fn control_socket_path(&self) -> PathBuf {
        self.control_socket
            .clone()
            .unwrap_or_else(|| paths::default_control_socket(&self.name))
    }

    /// The directory for this bond's run-time state files.
    pub fn state_dir(&self) -> PathBuf {
        paths::default_state_dir(&self.name)
    }

    /// The reachability probe this bond runs, if any: Linux's ARP monitor
    /// when `arp_interval` is set (with `netaddr` as one more target), else
    /// AIX's ping of `netaddr` every `retry_time` seconds, failing after
    /// `num_retries` silent periods and counting only answers from `netaddr`.
    pub fn probe(&self) -> Option<Probe> {
        if self.arp_interval > 0 {
            let mut targets = self.arp_ip_target.clone();
            if let Some(a) = self.netaddr.filter(|a| !targets.contains(a)) {
                targets.push(a);
            }
            Some(Probe {
                interval_ms: u64::from(self.arp_interval),
                targets,
                ipv6_targets: self.ns_ip6_target.clone(),
                missed_max: u32::from(self.arp_missed_max),
                validate: self.arp_validate,
                all_targets: self.arp_all_targets,
            })
        } else {
            self.netaddr.map(|a| Probe {
                interval_ms: u64::from(self.retry_time) * 1000,
                targets: vec![a],
                ipv6_targets: Vec::new(),
                missed_max: self.num_retries,
                validate: ArpValidate::All,
                all_targets: ArpAllTargets::Any,
            })
        }
    }

    /// What differs from `self` to `new`, for a reload that applies only the change.
    pub fn diff(&self, new: &BondConfig) -> ConfigChange {
        let members_added = new
            .members
            .iter()
            .filter(|m| !self.members.contains(m))
            .cloned()
            .collect();
        let members_removed = self
            .members
            .iter()
            .filter(|m| !new.members.contains(m))
            .cloned()
            .collect();
        let old_fields = fields(self);
        let new_fields = fields(new);
        let mut changed = Vec::new();
        for (key, _, _) in KEYS {
            if *key == Key::Members {
                // Reported as added and removed; a reorder alone changes
                // which member is "first" (the default MAC), so report it.
                if self.members != new.members
                    && self.members.len() == new.members.len()
                    && new.members.iter().all(|m| self.members.contains(m))
                {
                    changed.push(OptionChange {
                        key: "members",
                        old: render(old_fields.get("members")),
                        new: render(new_fields.get("members")),
                    });
                }
                continue;
            }
            let name = key.name();
            let (a, b) = (old_fields.get(name), new_fields.get(name));
            if a != b {
                changed.push(OptionChange {
                    key: name,
                    old: render(a),
                    new: render(b),
                });
            }
        }
        ConfigChange {
            members_added,
            members_removed,
            changed,
        }
    }

    /// The bond as a single-bond TOML file that parses back to an equal
    /// config: `name`, `mode`, `members`, then every option that differs
    /// from its default (so reading it back warns only where the original did).
    pub fn to_toml(&self) -> String {
        let map = fields(self);
        let defaults = fields(&BondConfig::new(
            self.name.clone(),
            self.mode,
            self.members.clone(),
        ));
        let mut out = String::new();
        for (key, _, _) in KEYS {
            let Some(v) = map.get(key.name()) else {
                continue;
            };
            let identity = matches!(key, Key::Name | Key::Mode | Key::Members);
            if v.is_null() || (!identity && defaults.get(key.name()) == Some(v)) {
                continue;
            }
            out.push_str(key.name());
            out.push_str(" = ");
            out.push_str(&toml_literal(v));
            out.push('\n');
        }
        out
    }
}

/// The config's fields by canonical key name.
fn fields(cfg: &BondConfig) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::to_value(cfg) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    }
}

/// A field's value for a human: strings bare, lists comma-separated, unset as `(unset)`.
fn render(v: Option<&serde_json::Value>) -> String {
    match v {
        None | Some(serde_json::Value::Null) => "(unset)".to_string(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Array(items)) => {
            let items: Vec<String> = items.iter().map(|i| render(Some(i))).collect();
            format!("[{}]", items.join(", "))
        }
        Some(serde_json::Value::Object(map)) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{k} = {}", render(Some(v))))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        Some(other) => other.to_string(),
    }
}

/// A JSON value written as TOML. JSON string escapes are valid TOML basic
/// string escapes; integers beyond TOML's i64 are written as strings, which
/// the number readers accept.
fn toml_literal(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Number(n) if n.as_i64().is_none() => format!("\"{n}\""),
        serde_json::Value::Array(items) => {
            let items: Vec<String> = items.iter().map(toml_literal).collect();
            format!("[{}]", items.join(", "))
        }
        serde_json::Value::Object(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{} = {}",
                        serde_json::Value::from(k.as_str()),
                        toml_literal(v)
                    )
                })
                .collect();
            format!("{{ {} }}", items.join(", "))
        }
        other => other.to_string(),
    }
}

/// A resolved reachability probe (see [`BondConfig::probe`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Probe {
    /// Period between probe rounds, in ms.
    pub interval_ms: u64,
    /// IPv4 targets.
    pub targets: Vec<Ipv4Addr>,
    /// IPv6 targets.
    pub ipv6_targets: Vec<Ipv6Addr>,
    /// Silent periods before a member is down.
    pub missed_max: u32,
    /// Which replies count.
    pub validate: ArpValidate,
    /// Any or all targets must answer.
    pub all_targets: ArpAllTargets,
}

/// What a reload changes in one bond.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ConfigChange {
    /// Members in the new config only.
    pub members_added: Vec<String>,
    /// Members in the old config only.
    pub members_removed: Vec<String>,
    /// Every other option whose value changed, in documentation order
    /// (and `members` when only their order changed).
    pub changed: Vec<OptionChange>,
}

/// Keys whose change means tearing the bond down and building it again.
pub const REBUILD_KEYS: &[&str] = &["name", "mode", "control_socket"];

impl ConfigChange {
    /// Nothing changed.
    pub fn is_empty(&self) -> bool {
        self.members_added.is_empty() && self.members_removed.is_empty() && self.changed.is_empty()
    }

    /// True if a changed key is in [`REBUILD_KEYS`]: the bond's identity,
    /// its protocol (Linux too refuses a mode change with members attached),
    /// or the socket clients find it by.
    pub fn needs_rebuild(&self) -> bool {
        self.changed.iter().any(|c| REBUILD_KEYS.contains(&c.key))
    }

    /// Whether `key` (canonical name) changed.
    pub fn touches(&self, key: &str) -> bool {
        self.changed.iter().any(|c| c.key == key)
    }
}

/// One option's old and new value, as displayed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OptionChange {
    /// Canonical key name.
    pub key: &'static str,
    /// Old value.
    pub old: String,
    /// New value.
    pub new: String,
}

impl core::fmt::Display for OptionChange {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {} -> {}", self.key, self.old, self.new)
    }
}

/// What a reload of a whole file changes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Reload {
    /// Bonds only in the new file.
    pub added: Vec<String>,
    /// Bonds only in the old file.
    pub removed: Vec<String>,
    /// Bonds in both whose config changed.
    pub changed: Vec<(String, ConfigChange)>,
}

impl Reload {
    /// Compares two parsed files bond by bond (matched by name).
    pub fn between(old: &[BondConfig], new: &[BondConfig]) -> Reload {
        let find = |list: &[BondConfig], name: &str| list.iter().position(|b| b.name == name);
        let mut reload = Reload::default();
        for b in new {
            match find(old, &b.name) {
                None => reload.added.push(b.name.clone()),
                Some(i) => {
                    let change = old[i].diff(b);
                    if !change.is_empty() {
                        reload.changed.push((b.name.clone(), change));
                    }
                }
            }
        }
        reload.removed = old
            .iter()
            .filter(|b| find(new, &b.name).is_none())
            .map(|b| b.name.clone())
            .collect();
        reload
    }

    /// Nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bond() -> BondConfig {
        BondConfig::new("bond0", Mode::Lacp, vec!["eth1".into(), "eth2".into()])
    }

    #[test]
    fn every_field_has_a_key() {
        for name in fields(&bond()).keys() {
            assert!(
                KEYS.iter().any(|(k, _, _)| k.name() == name),
                "field {name} has no key, so to_toml and diff would miss it"
            );
        }
    }

    #[test]
    fn diff_lists_members_and_options() {
        let a = bond();
        let mut b = bond();
        b.members = vec!["eth2".into(), "eth3".into()];
        b.miimon = 100;
        b.mac = Some(MacAddr([2, 0, 0, 0, 0, 1]));
        let d = a.diff(&b);
        assert_eq!(d.members_added, ["eth3"]);
        assert_eq!(d.members_removed, ["eth1"]);
        let shown: Vec<String> = d.changed.iter().map(|c| c.to_string()).collect();
        assert_eq!(
            shown,
            ["mac: (unset) -> 02:00:00:00:00:01", "miimon: 0 -> 100"]
        );
        assert!(!d.needs_rebuild());
        assert!(a.diff(&a).is_empty());

        b = bond();
        b.mode = Mode::BalanceXor;
        assert!(a.diff(&b).needs_rebuild());
        b = bond();
        b.members.reverse();
        let d = a.diff(&b);
        assert!(d.members_added.is_empty() && d.touches("members"));
    }

    #[test]
    fn offloads_diff_and_write_as_a_member_table() {
        let a = bond();
        let mut b = bond();
        b.offloads_off = vec!["eth2".into()];
        let shown: Vec<String> = a.diff(&b).changed.iter().map(|c| c.to_string()).collect();
        assert_eq!(shown, ["offloads: {} -> {eth2 = false}"]);
        assert!(!a.diff(&b).needs_rebuild());
        assert!(
            b.to_toml().contains("offloads = { \"eth2\" = false }\n"),
            "{}",
            b.to_toml()
        );
        assert!(
            !a.to_toml().contains("offloads"),
            "the default is not written"
        );
    }

    #[test]
    fn reload_matches_bonds_by_name() {
        let a = bond();
        let mut b = BondConfig::new("bond1", Mode::ActiveBackup, vec!["eth3".into()]);
        let only_a = std::slice::from_ref(&a);
        let r = Reload::between(&[a.clone(), b.clone()], only_a);
        assert_eq!(r.removed, ["bond1"]);
        b.miimon = 100;
        let r = Reload::between(only_a, &[b.clone(), a.clone()]);
        assert_eq!(r.added, ["bond1"]);
        assert!(Reload::between(only_a, only_a).is_empty());
    }

    #[test]
    fn hash_policy_fills_the_seed() {
        let mut a = bond();
        assert_eq!(a.hash_policy(7), Policy::Strong(Strong::new(7)));
        a.hash_seed = Some(3);
        assert_eq!(a.hash_policy(7), Policy::Strong(Strong::new(3)));
        a.xmit_hash_policy = Policy::Layer34;
        assert_eq!(a.hash_policy(7), Policy::Layer34);
    }

    #[test]
    fn probe_resolves_linux_and_aix_keys() {
        let mut a = BondConfig::new("bond0", Mode::ActiveBackup, vec!["eth1".into()]);
        assert_eq!(a.probe(), None);
        a.netaddr = Some(Ipv4Addr::new(192, 0, 2, 1));
        let p = a.probe().unwrap();
        assert_eq!((p.interval_ms, p.missed_max), (1000, 3));
        assert_eq!(p.validate, ArpValidate::All);
        a.arp_interval = 200;
        a.arp_ip_target = vec![Ipv4Addr::new(192, 0, 2, 9)];
        let p = a.probe().unwrap();
        assert_eq!(p.interval_ms, 200);
        assert_eq!(p.targets.len(), 2);
    }
}
