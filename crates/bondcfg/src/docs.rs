//! The reference documentation of every key, built from the same table the
//! parser reads ([`KEYS`]), so `lagkit.toml(5)` cannot list a key the
//! parser does not know, nor miss one it does.
//!
//! The hand-written parts (type, default, meaning, reload behaviour) sit in
//! one exhaustive `match` over [`Key`]: a new key does not compile until it
//! is documented. What can be derived is derived: the aliases and where
//! each comes from, the accepted values of the named options (from the
//! enums' own spellings), the modes a key applies to (from the parser's
//! wrong-mode warning) and which keys rebuild the bond ([`REBUILD_KEYS`]).
//! Unit tests hold the documented defaults to [`BondConfig::new`].
//!
//! [`BondConfig::new`]: crate::BondConfig::new

use lagkit_hash::{Policy, Vendor};

use crate::bond::REBUILD_KEYS;
use crate::enums::{
    AdSelect, ArpAllTargets, ArpValidate, Engine, FailOverMac, LacpRate, Mode, NoPartner, Pagp,
    PagpRate, PrimaryReselect,
};
use crate::keys::{Key, KEYS};

/// What a reload (`SIGHUP` to `lagkit up`) does when a key's value changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReloadEffect {
    /// Applied to the running bond: members that stay keep their traffic.
    InPlace,
    /// The bond restarts with the new value (its members leave and rejoin),
    /// for the reason given.
    Restart(&'static str),
    /// The bond is torn down and built again (a [`REBUILD_KEYS`] key), for
    /// the reason given.
    Rebuild(&'static str),
    /// Nothing: the key is accepted (so files written for Linux load) but
    /// the bond does not act on it.
    NotUsed,
}

impl ReloadEffect {
    /// A short phrase for a reference table.
    pub fn describe(self) -> &'static str {
        match self {
            ReloadEffect::InPlace => "in place",
            ReloadEffect::Restart(_) => "restart",
            ReloadEffect::Rebuild(_) => "rebuild",
            ReloadEffect::NotUsed => "not acted on",
        }
    }

    /// Why a reload cannot apply the key in place (restart and rebuild).
    pub fn why(self) -> Option<&'static str> {
        match self {
            ReloadEffect::Restart(why) | ReloadEffect::Rebuild(why) => Some(why),
            ReloadEffect::InPlace | ReloadEffect::NotUsed => None,
        }
    }

    /// The reload fact of a key's entry: `in place`, or `restart (why)`.
    pub fn fact(self) -> String {
        match self.why() {
            Some(why) => format!("{} ({why})", self.describe()),
            None => self.describe().to_string(),
        }
    }
}

/// One alias of a key and the system whose name it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Alias {
    /// The alias as the parser accepts it.
    pub name: &'static str,
    /// Where the spelling comes from (`AIX`, `netplan`, ...).
    pub from: &'static str,
}

/// One accepted name of a named value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueDoc {
    /// The canonical name, as `lagkit status` shows it.
    pub name: &'static str,
    /// Whose name it is, when not Linux bonding's (`AIX hash_mode`, ...).
    pub from: Option<&'static str>,
    /// Other spellings of the same value.
    pub also: Vec<Alias>,
}

/// The documentation of one configuration key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyDoc {
    /// The canonical (Linux) name.
    pub name: &'static str,
    /// Other names the parser accepts for it.
    pub aliases: Vec<Alias>,
    /// The value's type, range and unit.
    pub ty: &'static str,
    /// The accepted names of a named value (empty for keys that are not
    /// named values).
    pub values: Vec<ValueDoc>,
    /// The default as a TOML value, or `required`, or `unset (...)`.
    pub default: &'static str,
    /// What it does.
    pub meaning: &'static str,
    /// The modes that use it, if not all.
    pub modes: Option<&'static str>,
    /// What a reload does when it changes.
    pub reload: ReloadEffect,
    /// A correct line, as error messages show it.
    pub example: &'static str,
}

/// Every key's documentation, in documentation order.
pub fn key_docs() -> impl Iterator<Item = KeyDoc> {
    KEYS.iter().map(|&(key, name, aliases)| {
        let (ty, default, meaning, effect) = text(key);
        let reload = if REBUILD_KEYS.contains(&name) {
            ReloadEffect::Rebuild(effect.why().unwrap_or("it is the bond's identity"))
        } else {
            effect
        };
        KeyDoc {
            name,
            aliases: aliases
                .iter()
                .map(|&a| Alias {
                    name: a,
                    from: alias_source(a),
                })
                .collect(),
            ty,
            values: values(key),
            default,
            meaning,
            modes: crate::parse::mode_scope(key).map(|(_, modes)| modes),
            reload,
            example: key.example(),
        }
    })
}

/// Where an alias's spelling comes from. Every alias in [`KEYS`] must have
/// an answer (a test checks).
fn alias_source(alias: &str) -> &'static str {
    match alias {
        "adapter_names" | "hash_mode" => "AIX",
        "slaves" | "num_unsol_na" => "Linux",
        "load_balance" => "Cisco port-channel load-balance",
        "interfaces"
        | "transmit_hash_policy"
        | "addresses"
        | "macaddress"
        | "mii_monitor_interval"
        | "up_delay"
        | "down_delay"
        | "primary_reselect_policy"
        | "fail_over_mac_policy"
        | "arp_ip_targets"
        | "gratuitous_arp"
        | "learn_packet_interval" => "netplan",
        "data_path" | "pagp_mode" | "metrics_port" => "lagkit",
        _ => "?",
    }
}

/// Where a value's other spelling comes from.
fn value_source(spelling: &str) -> &'static str {
    match spelling {
        "8023ad" | "standard" | "round_robin" | "netif_backup" => "AIX",
        "on" => "Cisco channel-group mode",
        "static" | "lacp" | "none" | "normal" => "lagkit",
        s if s.bytes().all(|b| b.is_ascii_digit()) => "Linux number",
        _ => "?",
    }
}

/// The accepted names of a named option, canonical first.
fn values(key: Key) -> Vec<ValueDoc> {
    fn of<T: Copy>(
        all: &[T],
        name: fn(T) -> &'static str,
        spellings: fn(T) -> &'static [&'static str],
    ) -> Vec<ValueDoc> {
        all.iter()
            .map(|&v| ValueDoc {
                name: name(v),
                from: None,
                also: spellings(v)[1..]
                    .iter()
                    .map(|&s| Alias {
                        name: s,
                        from: value_source(s),
                    })
                    .collect(),
            })
            .collect()
    }
    match key {
        Key::Mode => {
            let mut v = of(Mode::ALL, Mode::name, Mode::spellings);
            for m in &mut v {
                if m.name == Mode::Adaptive.name() {
                    m.from = Some("lagkit");
                }
            }
            v
        }
        Key::LacpRate => of(LacpRate::ALL, LacpRate::name, LacpRate::spellings),
        Key::AdSelect => of(AdSelect::ALL, AdSelect::name, AdSelect::spellings),
        Key::LacpNoPartner => of(NoPartner::ALL, NoPartner::name, NoPartner::spellings),
        Key::Pagp => of(Pagp::ALL, Pagp::name, Pagp::spellings),
        Key::PagpRate => of(PagpRate::ALL, PagpRate::name, PagpRate::spellings),
        Key::PrimaryReselect => of(
            PrimaryReselect::ALL,
            PrimaryReselect::name,
            PrimaryReselect::spellings,
        ),
        Key::FailOverMac => of(FailOverMac::ALL, FailOverMac::name, FailOverMac::spellings),
        Key::Engine => of(Engine::ALL, Engine::name, Engine::spellings),
        Key::ArpValidate => of(ArpValidate::ALL, ArpValidate::name, ArpValidate::spellings),
        Key::ArpAllTargets => of(
            ArpAllTargets::ALL,
            ArpAllTargets::name,
            ArpAllTargets::spellings,
        ),
        Key::XmitHashPolicy => {
            let mut out: Vec<ValueDoc> = Policy::COMPAT
                .iter()
                .map(|p| ValueDoc {
                    name: p.name(),
                    from: match p.vendor() {
                        Vendor::Linux => None,
                        Vendor::Aix => Some("AIX hash_mode"),
                        Vendor::Cisco => Some("Cisco port-channel load-balance"),
                        Vendor::Hp => Some("HP Auto Port Aggregation"),
                        Vendor::Lagkit => Some("lagkit"),
                    },
                    also: crate::parse::linux_policy_number(p.name())
                        .map(|n| Alias {
                            name: n,
                            from: "Linux number",
                        })
                        .into_iter()
                        .collect(),
                })
                .collect();
            out.push(ValueDoc {
                name: "strong",
                from: Some("lagkit; options: strong:seed=N,symmetric"),
                also: Vec::new(),
            });
            out
        }
        _ => Vec::new(),
    }
}

/// The hand-written part of a key's documentation: type, default, meaning,
/// and what a reload does with a change (the bond daemon's
/// `Settings::needs_restart` decides; a test in lagkit-bond holds the two
/// together).
fn text(key: Key) -> (&'static str, &'static str, &'static str, ReloadEffect) {
    use ReloadEffect::{InPlace, NotUsed, Restart};
    match key {
        Key::Name => (
            "string, an interface name (at most 15 bytes)",
            "required",
            "Interface name of the bond. In a file of several bonds, the table name \
             (`[bond0]`) or the `name` of each `[[bond]]` table.",
            Restart(
                "the name is the bond's interface, run directory and default control socket",
            ),
        ),
        Key::Members => (
            "list of interface names, or one string separated by commas or spaces",
            "required",
            "Interfaces aggregated, in order. The first member's MAC is the bond's unless \
             `mac` is set.",
            InPlace,
        ),
        Key::Mode => (
            "string",
            "required",
            "Bonding mode: how frames are spread over the members and whether a protocol runs \
             with the peer. There is no default: the peer must be configured to match.",
            Restart(
                "the mode decides which protocol runs and how every frame is placed; Linux too refuses a mode change while the bond has members",
            ),
        ),
        Key::XmitHashPolicy => (
            "string, a policy name or its Linux number",
            "\"strong\"",
            "Transmit hash policy: which header fields choose the member a flow leaves on. \
             Linux, AIX, Cisco and HP policies are computed as those systems compute them; \
             `strong` is lagkit's own 256-bucket hash. balance-tlb and balance-alb hash by it only \
             with `tlb_dynamic_lb = false` (as Linux), else they run `strong`; adaptive needs \
             `strong`.",
            InPlace,
        ),
        Key::HashSeed => (
            "integer, 0 to 18446744073709551615",
            "unset (a random seed per bond at start, kept across reloads)",
            "Seed of the `strong` hash. Give the same seed to hosts that must agree on \
             which member a flow takes.",
            InPlace,
        ),
        Key::HashSymmetric => (
            "boolean",
            "false",
            "Both directions of a flow hash alike (`strong` only), so a flow and its reply \
             take the same member.",
            InPlace,
        ),
        Key::Mtu => (
            "integer, 68 to 65535",
            "1500",
            "MTU of the bond and its members.",
            Restart(
                "the bond sets its own and its members' MTU as it takes them; the restart takes them again with the new one",
            ),
        ),
        Key::UseJumboFrame => (
            "boolean",
            "false",
            "AIX's attribute: `yes` means `mtu = 9000`. An explicit `mtu` wins (with a warning \
             if they disagree).",
            Restart(
                "it sets `mtu`, which restarts the bond",
            ),
        ),
        Key::Offloads => (
            "boolean, or a table of member = boolean",
            "true",
            "`false` turns off transmit checksumming, TSO and GSO on every member (and the \
             backup adapter) while the bond runs; `{ eth2 = false }` on one member. For peers \
             that read a virtual wire in user space.",
            InPlace,
        ),
        Key::Engine => (
            "string",
            "\"auto\"",
            "Which data path moves the frames: tc BPF programs (`bpf`), lagkit's forwarding \
             threads between a TAP device and packet sockets (`userspace`), or BPF where the \
             kernel allows it and userspace otherwise (`auto`).",
            Restart(
                "the data path itself is replaced: the BPF programs or the forwarding threads",
            ),
        ),
        Key::Address => (
            "list of addresses with prefix length (IPv4 or IPv6)",
            "[]",
            "Addresses of the bond interface, such as `10.0.0.1/24`.",
            InPlace,
        ),
        Key::Mac => (
            "string, a MAC address",
            "unset (the first member's MAC)",
            "MAC address of the bond.",
            Restart(
                "the bond's MAC is the source of its frames and, by default, its LACP and PAgP identity; the bond starts over with the new one",
            ),
        ),
        Key::Miimon => (
            "integer, ms (or a string such as \"100ms\", \"2s\"), 0 to 2147483647",
            "0",
            "Carrier polling period. 0: carrier is taken from netlink events only, with no \
             polling.",
            InPlace,
        ),
        Key::Updelay => (
            "integer, ms, 0 to 2147483647",
            "0",
            "How long a member must stay up before it is used. With `miimon` > 0, rounded down \
             to a multiple of it (with a warning), as Linux does.",
            InPlace,
        ),
        Key::Downdelay => (
            "integer, ms, 0 to 2147483647",
            "0",
            "How long a member must stay down before it is dropped (rounded like `updelay`). \
             Not used in 802.3ad, where a port leaves distribution when carrier drops.",
            InPlace,
        ),
        Key::PeerNotifDelay => (
            "integer, ms, 0 to 300000",
            "0",
            "In Linux, the delay between peer notifications (gratuitous ARPs, unsolicited NAs) after a \
             failover (rounded like `updelay`). \
             lagkit reads it and shows it in status (`lagkit status --format proc` as Linux does); \
             its bond sends its `num_grat_arp` announcements one link-monitor interval apart.",
            InPlace,
        ),
        Key::LacpRate => (
            "string or Linux number",
            "\"slow\"",
            "LACPDU rate asked of the partner: `slow` every 30 s, `fast` every second. A reload \
             tells the partner at once (one LACPDU with the new timeout bit); the aggregate \
             stays up.",
            InPlace,
        ),
        Key::LacpActive => (
            "boolean, or \"active\" / \"passive\"",
            "true",
            "LACP active (sends LACPDUs unprompted) or passive (answers only).",
            InPlace,
        ),
        Key::AdActorSysPrio => (
            "integer, 1 to 65535",
            "65535",
            "LACP system priority (lower wins when the two ends choose which ports aggregate). A reload applies a change in place, \
             but the aggregate forms again: the LAG ID changes, so both ends select anew.",
            InPlace,
        ),
        Key::AdActorSystem => (
            "string, a MAC address",
            "unset (the bond's MAC)",
            "LACP system MAC. A reload applies a change in place, \
             but the aggregate forms again: the LAG ID changes, so both ends select anew.",
            InPlace,
        ),
        Key::AdActorPortPrio => (
            "integer, 1 to 65535, or a table of member = integer",
            "255",
            "LACP port priority of every member, or of each member named in a table \
             (`{ eth1 = 100 }`; the others keep 255, Linux's default). Lower is preferred \
             when `max_bundle` (or the partner's limit) leaves ports in standby. A reload \
             applies a change in place: the member whose priority changed selects again.",
            InPlace,
        ),
        Key::AdUserPortKey => (
            "integer, 0 to 1023",
            "0",
            "Upper 10 bits of the LACP port key. A reload applies a change in place, \
             but the aggregate forms again: the LAG ID changes, so both ends select anew.",
            InPlace,
        ),
        Key::AdSelect => (
            "string or Linux number",
            "\"stable\"",
            "Which aggregate the bond carries when its members form several (they face \
             different partners), as in Linux: `stable` (default) gives the free aggregator \
             to the one with the most bandwidth and keeps it while it has a port up; \
             `bandwidth` and `count` move it to an aggregate with more bandwidth or more \
             ports as soon as one has them. A reload applies a change in place.",
            InPlace,
        ),
        Key::MinLinks => (
            "integer, 0 to 2147483647",
            "0",
            "Members that must be up before the bond has carrier.",
            InPlace,
        ),
        Key::MaxBundle => (
            "integer, 1 to 256",
            "unset (no limit)",
            "At most this many members carry traffic; the rest stand by (Cisco `lacp \
             max-bundle`).",
            InPlace,
        ),
        Key::LacpNoPartner => (
            "string",
            "\"individual\"",
            "What a member does when no LACP partner answers: run as an individual link (as \
             Linux does), carry traffic statically with the others (`fallback`, Arista and \
             Cisco LACP fallback), or carry none (`suspend`, Cisco `lacp suspend-individual`).",
            Restart(
                "each LACP port's default partner is set as the port is created",
            ),
        ),
        Key::CoupledControl => (
            "boolean",
            "true",
            "Coupled (true) or independent (false) collection and distribution (802.1AX).",
            Restart(
                "the mux machine has other states under coupled and independent control",
            ),
        ),
        Key::Pagp => (
            "string",
            "\"off\"",
            "Cisco PAgP towards the switch: `desirable` speaks first and forms with \
             `desirable` and `auto` switch ports; `auto` only answers. Switching between \
             `desirable` and `auto` applies in place (the members rejoin the channel); turning \
             PAgP on or off restarts the bond.",
            InPlace,
        ),
        Key::PagpSilent => (
            "boolean, or \"silent\" / \"non-silent\"",
            "true",
            "Silent (Cisco's default): a `desirable` member whose partner never speaks PAgP \
             joins after 15 s; non-silent: it never does.",
            InPlace,
        ),
        Key::PagpRate => (
            "string",
            "\"slow\"",
            "How often a member in the channel says hello: every 30 s (`slow`, the switch keeps \
             what it heard 105 s) or every second (`fast`, 3.5 s).",
            InPlace,
        ),
        Key::Primary => (
            "string, an interface name (a member)",
            "unset (no preferred member)",
            "Preferred member: it is active whenever it is up (see `primary_reselect`). With \
             `pagp`, a reload that changes it builds the PAgP system anew (the members rejoin \
             the channel), as the primary has the highest PAgP port priority.",
            InPlace,
        ),
        Key::PrimaryReselect => (
            "string or Linux number",
            "\"always\"",
            "When a recovered primary takes over again.",
            InPlace,
        ),
        Key::FailOverMac => (
            "string or Linux number",
            "\"none\"",
            "Which MAC moves on a failover: `none` (members share the bond's MAC), `active` \
             (the bond takes the active member's MAC), `follow` (the new active member takes \
             the bond's MAC).",
            Restart(
                "MACs the old policy moved would stay where it put them; the restart gives every member its own MAC back first",
            ),
        ),
        Key::ArpInterval => (
            "integer, ms, 0 to 2147483647",
            "0",
            "ARP probe period. 0: no ARP monitor. Needs `arp_ip_target` (or `netaddr`); \
             refused in 802.3ad, balance-tlb and balance-alb, as Linux refuses it. \
             Turning the monitor on or off (from or to 0) restarts the bond: the members' \
             receive path passes ARP replies up only while it runs.",
            InPlace,
        ),
        Key::ArpIpTarget => (
            "list of IPv4 addresses (at most 16)",
            "[]",
            "Addresses the ARP monitor probes.",
            InPlace,
        ),
        Key::NsIp6Target => (
            "list of IPv6 addresses (at most 16)",
            "[]",
            "In Linux, addresses the monitor probes with neighbour solicitations. \
             lagkit reads them and shows them in status (`lagkit status --format proc` as Linux \
             does); its probe monitor asks the IPv4 targets only.",
            InPlace,
        ),
        Key::ArpValidate => (
            "string or Linux number",
            "\"none\"",
            "Which received ARP traffic proves a member works.",
            InPlace,
        ),
        Key::ArpAllTargets => (
            "string or Linux number",
            "\"any\"",
            "With several targets, whether any one or all must answer.",
            InPlace,
        ),
        Key::ArpMissedMax => (
            "integer, 1 to 255",
            "2",
            "Probe periods without an answer before a member is down.",
            InPlace,
        ),
        Key::NumGratArp => (
            "integer, 0 to 255",
            "1",
            "Gratuitous ARPs and unsolicited neighbour advertisements sent after a failover.",
            InPlace,
        ),
        Key::PacketsPerSlave => (
            "integer, 0 to 65535",
            "1",
            "Packets sent on a member before moving to the next (0: a random member each \
             packet).",
            InPlace,
        ),
        Key::LpInterval => (
            "integer, seconds, 1 to 2147483647",
            "1",
            "Seconds between the learning packets sent to each member's switch.",
            InPlace,
        ),
        Key::TlbDynamicLb => (
            "boolean",
            "true",
            "Move flows between members by measured load (the buckets of the `strong` hash). \
             false: flows hash by `xmit_hash_policy` and stay on the member it picks, as in \
             Linux. With true, a policy other than `strong` is not used (a warning at load \
             says so).",
            Restart("it chooses between the load-moving and the hashing transmit plans of balance-tlb/alb, which the engine is started with"),
        ),
        Key::AllSlavesActive => (
            "boolean",
            "false",
            "In Linux, deliver frames received on inactive members too (by default they \
             are dropped, so the host does not see duplicates). \
             Accepted so that Linux configurations load; lagkit's bond does not act on it yet.",
            NotUsed,
        ),
        Key::ResendIgmp => (
            "integer, 0 to 255",
            "1",
            "In Linux, the IGMP membership reports sent after a failover. \
             Accepted so that Linux configurations load; lagkit's bond does not act on it yet.",
            NotUsed,
        ),
        Key::ForceMembers => (
            "list of interface names (members)",
            "[]",
            "Members to take even though the host still uses them. `lagkit up` refuses a member \
             that holds an IP address, has routes (the default route above all) through it, is a \
             port of a bridge, bond, team or VRF, or is another lagkit bond's logical interface, \
             and names why: on a server that is often the management NIC and the SSH session. \
             Listed here, it is taken anyway (what used it stops working while the bond holds it).",
            InPlace,
        ),
        Key::BackupAdapter => (
            "string, an interface name (not a member)",
            "unset (no backup adapter)",
            "AIX's backup adapter: carries traffic only when every member has failed.",
            Restart(
                "the backup adapter is taken and numbered with the members as the bond starts",
            ),
        ),
        Key::AutoRecovery => (
            "boolean",
            "true",
            "Return from the backup adapter when a member recovers (AIX).",
            InPlace,
        ),
        Key::Netaddr => (
            "string, an IPv4 address",
            "unset (no ping)",
            "AIX's address to ping to decide that the members are cut off: pinged every \
             `retry_time` seconds, `num_retries` silent periods fail over to the backup \
             adapter. With `arp_interval` it is one more ARP target. A new address while one \
             is set applies in place.",
            Restart(
                "without `arp_interval`, setting or removing it turns the monitor on or off, \
                 and the members' receive path passes ARP replies up only while it runs",
            ),
        ),
        Key::NumRetries => (
            "integer, 1 to 100",
            "3",
            "Unanswered pings of `netaddr` before failing over (AIX).",
            InPlace,
        ),
        Key::RetryTime => (
            "integer, seconds, 1 to 100",
            "1",
            "Seconds between pings of `netaddr` (AIX).",
            InPlace,
        ),
        Key::ControlSocket => (
            "string, an absolute path (at most 107 bytes)",
            "unset (/run/lagkit/<netns-inode>/<bond>.sock)",
            "Unix socket that `lagkit status`, `stats` and `flow` ask the running bond \
             through.",
            Restart(
                "clients find the bond by its socket; the bond is built again listening on the new path",
            ),
        ),
        Key::MetricsListen => (
            "string, ADDRESS:PORT (`\"127.0.0.1:9464\"`, `\"[::1]:9464\"`, \
             `\"0.0.0.0:9464\"`), or a port number alone for 127.0.0.1:PORT",
            "unset (no metrics listener)",
            "Serve Prometheus metrics at this address of the bond's network namespace; a \
             port alone (the older `metrics_port = 9464`) means 127.0.0.1, so only that \
             namespace can scrape. `0.0.0.0` or `[::]` listen on every address. See \
             docs/reference/metrics.md.",
            InPlace,
        ),
        Key::AdaptiveInterval => (
            "integer, ms, 1 to 2147483647",
            "1000",
            "Period of the adaptive balancer's rebalancing passes.",
            InPlace,
        ),
        Key::AdaptiveIdleGap => (
            "integer, ms, 0 to 60000",
            "10",
            "How long a hash bucket must be idle before the adaptive balancer moves it (so no \
             flow is reordered).",
            InPlace,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BondConfig;

    #[test]
    fn every_key_is_documented() {
        let docs: Vec<KeyDoc> = key_docs().collect();
        assert_eq!(docs.len(), KEYS.len());
        for d in &docs {
            assert!(!d.ty.trim().is_empty(), "{}: no type", d.name);
            assert!(!d.default.trim().is_empty(), "{}: no default", d.name);
            assert!(d.meaning.trim().len() > 10, "{}: no meaning", d.name);
            assert!(d.example.starts_with(d.name), "{}: {}", d.name, d.example);
            for a in &d.aliases {
                assert_ne!(a.from, "?", "alias {} of {} has no origin", a.name, d.name);
            }
        }
    }

    #[test]
    fn documented_defaults_are_the_real_ones() {
        let cfg = BondConfig::new("bond0", Mode::Lacp, vec!["eth1".into()]);
        let fields = match serde_json::to_value(&cfg) {
            Ok(serde_json::Value::Object(m)) => m,
            other => panic!("{other:?}"),
        };
        for d in key_docs() {
            if matches!(d.name, "name" | "mode" | "members") {
                assert_eq!(d.default, "required", "{}", d.name);
                continue;
            }
            // Keys with no field of their own (use_jumbo_frame is folded
            // into mtu) and offloads (the list of members with offloads
            // off, empty: every member keeps them) are checked by hand.
            let Some(v) = fields.get(d.name) else {
                assert_eq!(d.name, "use_jumbo_frame");
                assert_eq!(d.default, "false");
                continue;
            };
            if d.name == "offloads" {
                assert_eq!(v, &serde_json::json!({}));
                assert_eq!(d.default, "true");
                continue;
            }
            let real = match v {
                serde_json::Value::Null => {
                    assert!(d.default.starts_with("unset"), "{}: {}", d.name, d.default);
                    continue;
                }
                // The strong hash's unset seed shows as no options.
                other => other.to_string(),
            };
            assert_eq!(d.default, real, "{}: documented default is wrong", d.name);
        }
    }

    #[test]
    fn documented_defaults_parse_as_the_default() {
        // Writing the documented default explicitly changes nothing.
        let base = "name = \"bond0\"\nmode = \"802.3ad\"\nmembers = [\"eth1\"]\n";
        let (plain, _) = crate::parse_str(base, "a.toml").unwrap();
        for d in key_docs() {
            if d.default == "required" || d.default.starts_with("unset") {
                continue;
            }
            let text = format!("{base}{} = {}\n", d.name, d.default);
            let (bonds, _) = crate::parse_str(&text, "b.toml")
                .unwrap_or_else(|e| panic!("{}: default does not parse: {e}", d.name));
            assert_eq!(bonds, plain, "{}", d.name);
        }
    }

    #[test]
    fn documented_values_are_accepted() {
        for d in key_docs() {
            for v in &d.values {
                assert_ne!(v.from, Some("?"), "{} = {}", d.name, v.name);
                let spellings = core::iter::once(v.name).chain(v.also.iter().map(|a| a.name));
                for s in spellings {
                    assert!(v.also.iter().all(|a| a.from != "?"), "{} = {s}", d.name);
                    let value = if s == "strong" { "strong:seed=1" } else { s };
                    let mode = if d.name == "mode" {
                        value
                    } else {
                        "active-backup"
                    };
                    let mut text =
                        format!("name = \"bond0\"\nmode = \"{mode}\"\nmembers = [\"eth1\"]\n");
                    if d.name != "mode" {
                        text.push_str(&format!("{} = \"{value}\"\n", d.name));
                    }
                    // Another key may be needed too (pagp in active-backup
                    // only warns, arp_interval wants targets); what must not
                    // happen is the value itself being refused.
                    if let Err(e) = crate::parse_str(&text, "v.toml") {
                        assert!(!e.to_string().contains("unknown"), "{} = {s}: {e}", d.name);
                    }
                }
            }
        }
    }

    #[test]
    fn rebuild_keys_are_the_documented_ones() {
        let rebuild: Vec<&str> = key_docs()
            .filter(|d| matches!(d.reload, ReloadEffect::Rebuild(_)))
            .map(|d| d.name)
            .collect();
        let mut want = REBUILD_KEYS.to_vec();
        let mut got = rebuild.clone();
        want.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, want);
    }
}
