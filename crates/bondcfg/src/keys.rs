//! The option names: one table of canonical keys and their aliases, and the
//! "did you mean" search over it.
//!
//! Keys are matched case-insensitively with `-` and `_` interchangeable, so
//! Linux sysfs names (`xmit_hash_policy`), netplan names (`lacp-rate`,
//! `mii-monitor-interval`) and ifupdown names (`bond-miimon`, `bond-slaves`)
//! all land on the same option. A table, rather than serde field attributes,
//! is what lets the parser report the key exactly as written and refuse a key
//! given twice under two spellings.

use crate::enums::fold;

/// One option of a bond. Variants are the Linux names in camel case, so
/// `ad_user_port_key` ends in `Key` like the enum.
#[allow(clippy::enum_variant_names)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Key {
    Name,
    Members,
    ForceMembers,
    Mode,
    XmitHashPolicy,
    HashSeed,
    HashSymmetric,
    Mtu,
    UseJumboFrame,
    Offloads,
    Engine,
    Address,
    Mac,
    Miimon,
    Updelay,
    Downdelay,
    PeerNotifDelay,
    LacpRate,
    LacpActive,
    AdActorSysPrio,
    AdActorSystem,
    AdActorPortPrio,
    AdUserPortKey,
    AdSelect,
    MinLinks,
    MaxBundle,
    LacpNoPartner,
    CoupledControl,
    Pagp,
    PagpSilent,
    PagpRate,
    Primary,
    PrimaryReselect,
    FailOverMac,
    ArpInterval,
    ArpIpTarget,
    NsIp6Target,
    ArpValidate,
    ArpAllTargets,
    ArpMissedMax,
    NumGratArp,
    PacketsPerSlave,
    LpInterval,
    TlbDynamicLb,
    AllSlavesActive,
    ResendIgmp,
    BackupAdapter,
    AutoRecovery,
    Netaddr,
    NumRetries,
    RetryTime,
    ControlSocket,
    MetricsListen,
    AdaptiveInterval,
    AdaptiveIdleGap,
}

/// Every key: canonical name (also the `BondConfig` field and the serialized
/// name) and aliases, in documentation order.
pub(crate) const KEYS: &[(Key, &str, &[&str])] = &[
    (Key::Name, "name", &[]),
    (
        Key::Members,
        "members",
        &["adapter_names", "slaves", "interfaces"],
    ),
    (Key::Mode, "mode", &[]),
    (
        Key::XmitHashPolicy,
        "xmit_hash_policy",
        &["hash_mode", "transmit_hash_policy", "load_balance"],
    ),
    (Key::HashSeed, "hash_seed", &[]),
    (Key::HashSymmetric, "hash_symmetric", &[]),
    (Key::Mtu, "mtu", &[]),
    (Key::UseJumboFrame, "use_jumbo_frame", &[]),
    (Key::Offloads, "offloads", &[]),
    (Key::Engine, "engine", &["data_path"]),
    (Key::Address, "address", &["addresses"]),
    (Key::Mac, "mac", &["macaddress"]),
    (Key::Miimon, "miimon", &["mii_monitor_interval"]),
    (Key::Updelay, "updelay", &["up_delay"]),
    (Key::Downdelay, "downdelay", &["down_delay"]),
    (Key::PeerNotifDelay, "peer_notif_delay", &[]),
    (Key::LacpRate, "lacp_rate", &[]),
    (Key::LacpActive, "lacp_active", &[]),
    (Key::AdActorSysPrio, "ad_actor_sys_prio", &[]),
    (Key::AdActorSystem, "ad_actor_system", &[]),
    (Key::AdActorPortPrio, "ad_actor_port_prio", &[]),
    (Key::AdUserPortKey, "ad_user_port_key", &[]),
    (Key::AdSelect, "ad_select", &[]),
    (Key::MinLinks, "min_links", &[]),
    (Key::MaxBundle, "max_bundle", &[]),
    (Key::LacpNoPartner, "lacp_no_partner", &[]),
    (Key::CoupledControl, "coupled_control", &[]),
    (Key::Pagp, "pagp", &["pagp_mode"]),
    (Key::PagpSilent, "pagp_silent", &[]),
    (Key::PagpRate, "pagp_rate", &[]),
    (Key::Primary, "primary", &[]),
    (
        Key::PrimaryReselect,
        "primary_reselect",
        &["primary_reselect_policy"],
    ),
    (Key::FailOverMac, "fail_over_mac", &["fail_over_mac_policy"]),
    (Key::ArpInterval, "arp_interval", &[]),
    (Key::ArpIpTarget, "arp_ip_target", &["arp_ip_targets"]),
    (Key::NsIp6Target, "ns_ip6_target", &[]),
    (Key::ArpValidate, "arp_validate", &[]),
    (Key::ArpAllTargets, "arp_all_targets", &[]),
    (Key::ArpMissedMax, "arp_missed_max", &[]),
    (
        Key::NumGratArp,
        "num_grat_arp",
        &["num_unsol_na", "gratuitous_arp"],
    ),
    (Key::PacketsPerSlave, "packets_per_slave", &[]),
    (Key::LpInterval, "lp_interval", &["learn_packet_interval"]),
    (Key::TlbDynamicLb, "tlb_dynamic_lb", &[]),
    (Key::AllSlavesActive, "all_slaves_active", &[]),
    (Key::ResendIgmp, "resend_igmp", &[]),
    (Key::BackupAdapter, "backup_adapter", &[]),
    (Key::ForceMembers, "force_members", &[]),
    (Key::AutoRecovery, "auto_recovery", &[]),
    (Key::Netaddr, "netaddr", &[]),
    (Key::NumRetries, "num_retries", &[]),
    (Key::RetryTime, "retry_time", &[]),
    (Key::ControlSocket, "control_socket", &[]),
    (Key::MetricsListen, "metrics_listen", &["metrics_port"]),
    (Key::AdaptiveInterval, "adaptive_interval", &[]),
    (Key::AdaptiveIdleGap, "adaptive_idle_gap", &[]),
];

/// Keys from other systems that lagkit has no option for, with what to do.
const HINTS: &[(&str, &str)] = &[
    (
        "netmask",
        "AIX's netmask goes with the interface address: write address = [\"A.B.C.D/PREFIX\"] \
         (netaddr here is the address to ping)",
    ),
    (
        "use_carrier",
        "lagkit always takes carrier from netlink events (or polls it with miimon); remove it",
    ),
    (
        "active_slave",
        "the active member is chosen at run time; set primary to prefer one",
    ),
    (
        "jumbo_frames",
        "that is AIX's attribute of a physical adapter; write use_jumbo_frame = \"yes\" or mtu = \
         9000",
    ),
];

impl Key {
    /// The canonical name.
    pub(crate) fn name(self) -> &'static str {
        KEYS.iter()
            .find(|(k, _, _)| *k == self)
            .map_or("?", |(_, n, _)| n)
    }

    /// A correct line for this key, shown in error messages.
    pub(crate) fn example(self) -> &'static str {
        match self {
            Key::Name => "name = \"bond0\"",
            Key::Members => "members = [\"eth1\", \"eth2\"]",
            Key::Mode => "mode = \"802.3ad\"",
            Key::XmitHashPolicy => "xmit_hash_policy = \"layer3+4\"",
            Key::HashSeed => "hash_seed = 42",
            Key::HashSymmetric => "hash_symmetric = true",
            Key::Mtu => "mtu = 9000",
            Key::UseJumboFrame => "use_jumbo_frame = \"yes\"",
            Key::Offloads => "offloads = false",
            Key::Engine => "engine = \"bpf\"",
            Key::Address => "address = [\"10.0.0.1/24\", \"fd00::1/64\"]",
            Key::Mac => "mac = \"02:00:00:00:00:01\"",
            Key::Miimon => "miimon = 100",
            Key::Updelay => "updelay = 200",
            Key::Downdelay => "downdelay = 200",
            Key::PeerNotifDelay => "peer_notif_delay = 100",
            Key::LacpRate => "lacp_rate = \"fast\"",
            Key::LacpActive => "lacp_active = true",
            Key::AdActorSysPrio => "ad_actor_sys_prio = 65535",
            Key::AdActorSystem => "ad_actor_system = \"02:00:00:00:00:01\"",
            Key::AdActorPortPrio => "ad_actor_port_prio = { eth1 = 100, eth2 = 200 }",
            Key::AdUserPortKey => "ad_user_port_key = 0",
            Key::AdSelect => "ad_select = \"stable\"",
            Key::MinLinks => "min_links = 1",
            Key::MaxBundle => "max_bundle = 4",
            Key::LacpNoPartner => "lacp_no_partner = \"individual\"",
            Key::CoupledControl => "coupled_control = true",
            Key::Pagp => "pagp = \"desirable\"",
            Key::PagpSilent => "pagp_silent = false",
            Key::PagpRate => "pagp_rate = \"fast\"",
            Key::Primary => "primary = \"eth1\"",
            Key::PrimaryReselect => "primary_reselect = \"always\"",
            Key::FailOverMac => "fail_over_mac = \"none\"",
            Key::ArpInterval => "arp_interval = 1000",
            Key::ArpIpTarget => "arp_ip_target = [\"192.0.2.1\"]",
            Key::NsIp6Target => "ns_ip6_target = [\"fd00::1\"]",
            Key::ArpValidate => "arp_validate = \"all\"",
            Key::ArpAllTargets => "arp_all_targets = \"any\"",
            Key::ArpMissedMax => "arp_missed_max = 2",
            Key::NumGratArp => "num_grat_arp = 1",
            Key::PacketsPerSlave => "packets_per_slave = 1",
            Key::LpInterval => "lp_interval = 1",
            Key::TlbDynamicLb => "tlb_dynamic_lb = true",
            Key::AllSlavesActive => "all_slaves_active = false",
            Key::ResendIgmp => "resend_igmp = 1",
            Key::BackupAdapter => "backup_adapter = \"eth3\"",
            Key::ForceMembers => "force_members = [\"eth0\"]",
            Key::AutoRecovery => "auto_recovery = \"yes\"",
            Key::Netaddr => "netaddr = \"192.0.2.1\"",
            Key::NumRetries => "num_retries = 3",
            Key::RetryTime => "retry_time = 1",
            Key::ControlSocket => "control_socket = \"/run/lagkit/bond0.sock\"",
            Key::MetricsListen => "metrics_listen = \"127.0.0.1:9464\"",
            Key::AdaptiveInterval => "adaptive_interval = 1000",
            Key::AdaptiveIdleGap => "adaptive_idle_gap = 10",
        }
    }

    /// The key written as `written`, if any: exact spellings first, then an
    /// ifupdown-style `bond-` prefix.
    pub(crate) fn lookup(written: &str) -> Option<Key> {
        let folded = fold(written);
        let find = |s: &str| {
            KEYS.iter()
                .find(|(_, name, aliases)| *name == s || aliases.contains(&s))
                .map(|(k, _, _)| *k)
        };
        find(&folded).or_else(|| folded.strip_prefix("bond_").and_then(find))
    }
}

/// A specific explanation for a key from another system, if there is one.
pub(crate) fn hint(written: &str) -> Option<&'static str> {
    let folded = fold(written);
    HINTS.iter().find(|(k, _)| *k == folded).map(|(_, h)| *h)
}

/// The known spelling closest to `written`, if close enough to be a typo:
/// within an edit distance of a third of its length (at least 2), or else a
/// known key containing it (`hash` → `hash_mode`).
pub(crate) fn suggest(written: &str) -> Option<&'static str> {
    let folded = fold(written);
    let all = KEYS
        .iter()
        .flat_map(|(_, name, aliases)| core::iter::once(*name).chain(aliases.iter().copied()));
    let len = folded.chars().count();
    let limit = (len / 3).max(2);
    // The distance is at least the difference in length: skip keys that
    // cannot be close (and the quadratic work on a huge key).
    let best = all
        .clone()
        .filter(|k| len.abs_diff(k.chars().count()) <= limit)
        .map(|k| (levenshtein(&folded, k), k))
        .min_by_key(|(d, k)| (*d, k.len()));
    match best {
        Some((d, k)) if d <= limit => Some(k),
        _ if folded.len() >= 4 => all
            .filter(|k| k.contains(folded.as_str()))
            .min_by_key(|k| k.len()),
        _ => None,
    }
}

/// Edit distance (insertions, deletions, substitutions) between two strings.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        core::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_fold() {
        assert_eq!(Key::lookup("xmit_hash_policy"), Some(Key::XmitHashPolicy));
        assert_eq!(Key::lookup("Hash_Mode"), Some(Key::XmitHashPolicy));
        assert_eq!(Key::lookup("lacp-rate"), Some(Key::LacpRate));
        assert_eq!(Key::lookup("bond-slaves"), Some(Key::Members));
        assert_eq!(Key::lookup("bond_miimon"), Some(Key::Miimon));
        assert_eq!(Key::lookup("bond"), None);
        assert_eq!(Key::lookup("miimom"), None);
    }

    #[test]
    fn every_key_has_one_row_and_no_spelling_is_shared() {
        let mut seen = std::collections::HashSet::new();
        for (k, name, aliases) in KEYS {
            assert_eq!(Key::lookup(name), Some(*k));
            assert_eq!(k.name(), *name);
            for s in core::iter::once(name).chain(aliases.iter()) {
                assert!(seen.insert(*s), "{s} twice");
            }
        }
    }

    #[test]
    fn typos_get_suggestions() {
        assert_eq!(suggest("miimom"), Some("miimon"));
        assert_eq!(suggest("lacprate"), Some("lacp_rate"));
        assert_eq!(suggest("xmit_hash_polcy"), Some("xmit_hash_policy"));
        assert_eq!(suggest("member"), Some("members"));
        assert_eq!(suggest("adapter_name"), Some("adapter_names"));
        assert_eq!(suggest("xmit_hash"), Some("xmit_hash_policy"));
        assert_eq!(suggest("zzzzzzzzzz"), None);
    }

    #[test]
    fn levenshtein_basics() {
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("same", "same"), 0);
    }
}
