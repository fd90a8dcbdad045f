//! Every option in every accepted spelling, the minimal file, the AIX file
//! and the multi-bond forms, read into the typed values they must give.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;

use lagkit_bondcfg::{
    option_names, parse_str, AdSelect, ArpAllTargets, ArpValidate, BondConfig, Cidr, Engine,
    FailOverMac, LacpRate, Mode, NoPartner, Pagp, PagpRate, PrimaryReselect, Reload,
};
use lagkit_hash::{Policy, Strong};
use lagkit_wire::MacAddr;

const MINIMAL: &str = r#"name = "bond0"
mode = "802.3ad"
members = ["eth1", "eth2"]
xmit_hash_policy = "layer3+4"
lacp_rate = "fast"
address = ["10.0.0.1/24"]
"#;

fn one(text: &str) -> BondConfig {
    let (bonds, warnings) =
        parse_str(text, "bond.toml").unwrap_or_else(|e| panic!("{e}\n--- in ---\n{text}"));
    assert_eq!(bonds.len(), 1);
    for w in &warnings {
        eprintln!("{w}");
    }
    bonds.into_iter().next().unwrap()
}

#[test]
fn the_minimal_file_works_as_it_is() {
    let (bonds, warnings) = parse_str(MINIMAL, "bond.toml").unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let b = &bonds[0];
    let mut want = BondConfig::new("bond0", Mode::Lacp, vec!["eth1".into(), "eth2".into()]);
    want.xmit_hash_policy = Policy::Layer34;
    want.lacp_rate = LacpRate::Fast;
    want.address = vec!["10.0.0.1/24".parse().unwrap()];
    assert_eq!(*b, want);
    // Defaults as documented (Linux's where Linux has the option).
    assert_eq!(b.miimon, 0);
    assert!(b.lacp_active);
    assert_eq!(b.ad_actor_sys_prio, 65535);
    assert_eq!(b.num_grat_arp, 1);
    assert_eq!(b.packets_per_slave, 1);
    assert_eq!(b.lp_interval, 1);
    assert_eq!((b.num_retries, b.retry_time), (3, 1));
    assert_eq!((b.adaptive_interval, b.adaptive_idle_gap), (1000, 10));
    assert!(b.coupled_control);
    assert_eq!(b.hash_seed, None);
    assert_eq!(b.mac, None);
    assert_eq!(b.control_socket, None);
    assert!(b
        .control_socket_path()
        .to_string_lossy()
        .ends_with("/bond0.sock"));
}

#[test]
fn default_policy_is_strong_with_a_seed_left_to_run_time() {
    let b = one("name = \"bond0\"\nmode = \"lacp\"\nmembers = [\"eth1\"]\n");
    assert_eq!(b.xmit_hash_policy, Policy::Strong(Strong::default()));
    assert_eq!(b.hash_seed, None);
    assert_eq!(b.hash_policy(99), Policy::Strong(Strong::new(99)));
}

/// One option line (or several) added to a base bond of `mode`, and what
/// the resulting config must satisfy.
struct Case {
    key: &'static str,
    value: &'static str,
    mode: &'static str,
    check: fn(&BondConfig) -> bool,
}

const fn case(
    key: &'static str,
    value: &'static str,
    mode: &'static str,
    check: fn(&BondConfig) -> bool,
) -> Case {
    Case {
        key,
        value,
        mode,
        check,
    }
}

fn mac(s: &str) -> Option<MacAddr> {
    Some(s.parse().unwrap())
}

fn v4(a: u8, b: u8, c: u8, d: u8) -> Ipv4Addr {
    Ipv4Addr::new(a, b, c, d)
}

const LACP: &str = "802.3ad";
const AB: &str = "active-backup";

fn cases() -> Vec<Case> {
    vec![
        case("name", "\"bond7\"", LACP, |b| b.name == "bond7"),
        case("members", "[\"eth1\", \"eth2\"]", LACP, |b| {
            b.members == ["eth1", "eth2"]
        }),
        case("adapter_names", "\"ent2,ent4\"", LACP, |b| {
            b.members == ["ent2", "ent4"]
        }),
        case("slaves", "\"eth1 eth2\"", LACP, |b| {
            b.members == ["eth1", "eth2"]
        }),
        case("interfaces", "[\"enp1s0f0\", \"enp1s0f1\"]", LACP, |b| {
            b.members == ["enp1s0f0", "enp1s0f1"]
        }),
        case("bond-slaves", "\"eth1, eth3\"", LACP, |b| {
            b.members == ["eth1", "eth3"]
        }),
        case("mode", "\"8023ad\"", LACP, |b| b.mode == Mode::Lacp),
        case("mode", "4", LACP, |b| b.mode == Mode::Lacp),
        case("mode", "\"standard\"", LACP, |b| b.mode == Mode::BalanceXor),
        case("mode", "\"on\"", LACP, |b| b.mode == Mode::BalanceXor),
        case("mode", "\"static\"", LACP, |b| b.mode == Mode::BalanceXor),
        case("mode", "2", LACP, |b| b.mode == Mode::BalanceXor),
        case("mode", "\"round_robin\"", LACP, |b| {
            b.mode == Mode::BalanceRr
        }),
        case("mode", "0", LACP, |b| b.mode == Mode::BalanceRr),
        case("mode", "\"1\"", LACP, |b| b.mode == Mode::ActiveBackup),
        case("mode", "\"netif_backup\"", LACP, |b| {
            b.mode == Mode::ActiveBackup
        }),
        case("mode", "3", LACP, |b| b.mode == Mode::Broadcast),
        case("mode", "5", LACP, |b| b.mode == Mode::BalanceTlb),
        case("mode", "\"balance-alb\"", LACP, |b| {
            b.mode == Mode::BalanceAlb
        }),
        case("mode", "\"ADAPTIVE\"", LACP, |b| b.mode == Mode::Adaptive),
        case("xmit_hash_policy", "\"layer3+4\"", LACP, |b| {
            b.xmit_hash_policy == Policy::Layer34
        }),
        case("xmit_hash_policy", "1", LACP, |b| {
            b.xmit_hash_policy == Policy::Layer34
        }),
        case("xmit_hash_policy", "\"2\"", LACP, |b| {
            b.xmit_hash_policy == Policy::Layer23
        }),
        case(
            "xmit_hash_policy",
            "\"strong:seed=42,symmetric\"",
            LACP,
            |b| {
                b.xmit_hash_policy == Policy::Strong(Strong::new(42).with_symmetric(true))
                    && b.hash_seed == Some(42)
                    && b.hash_symmetric
            },
        ),
        case("hash_mode", "\"src_dst_port\"", LACP, |b| {
            b.xmit_hash_policy == Policy::AixSrcDstPort
        }),
        case("transmit_hash_policy", "\"encap3+4\"", LACP, |b| {
            b.xmit_hash_policy == Policy::Encap34
        }),
        case("load_balance", "\"src-dst-ip\"", LACP, |b| {
            b.xmit_hash_policy == Policy::CiscoSrcDstIp
        }),
        case("XMIT-HASH-POLICY", "\"vlan+srcmac\"", LACP, |b| {
            b.xmit_hash_policy == Policy::VlanSrcMac
        }),
        case("hash_seed", "42", LACP, |b| {
            b.hash_seed == Some(42) && b.xmit_hash_policy == Policy::Strong(Strong::new(42))
        }),
        case("hash_seed", "\"0xffffffffffffffff\"", LACP, |b| {
            b.hash_seed == Some(u64::MAX)
        }),
        case("hash_symmetric", "true", LACP, |b| {
            b.hash_symmetric
                && b.xmit_hash_policy == Policy::Strong(Strong::new(0).with_symmetric(true))
        }),
        case("hash_symmetric", "\"yes\"", LACP, |b| b.hash_symmetric),
        case("mtu", "9000", LACP, |b| b.mtu == 9000),
        case("mtu", "\"68\"", LACP, |b| b.mtu == 68),
        case("use_jumbo_frame", "\"yes\"", LACP, |b| b.mtu == 9000),
        case("use_jumbo_frame", "false", LACP, |b| b.mtu == 1500),
        case("address", "[\"10.0.0.1/24\", \"fd00::1/64\"]", LACP, |b| {
            b.address
                == [
                    Cidr {
                        addr: IpAddr::V4(v4(10, 0, 0, 1)),
                        prefix: 24,
                    },
                    Cidr {
                        addr: IpAddr::V6(Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 1)),
                        prefix: 64,
                    },
                ]
        }),
        case("address", "\"10.0.0.1/24\"", LACP, |b| {
            b.address.len() == 1 && b.address[0].prefix == 24
        }),
        case("addresses", "[\"192.0.2.5/32\"]", LACP, |b| {
            b.address[0].to_string() == "192.0.2.5/32"
        }),
        case("mac", "\"02:00:00:00:00:01\"", LACP, |b| {
            b.mac == mac("02:00:00:00:00:01")
        }),
        case("macaddress", "\"0200.0000.00aa\"", LACP, |b| {
            b.mac == mac("02:00:00:00:00:aa")
        }),
        case("miimon", "100", LACP, |b| b.miimon == 100),
        case("miimon", "\"100\"", LACP, |b| b.miimon == 100),
        case("miimon", "\"250ms\"", LACP, |b| b.miimon == 250),
        case("miimon", "\"1s\"", LACP, |b| b.miimon == 1000),
        case("mii_monitor_interval", "50", LACP, |b| b.miimon == 50),
        case("updelay", "200\nmiimon = 100", LACP, |b| b.updelay == 200),
        case("up_delay", "\"300\"", LACP, |b| b.updelay == 300),
        case("downdelay", "200\nmiimon = 100", LACP, |b| {
            b.downdelay == 200
        }),
        case("down_delay", "7", LACP, |b| b.downdelay == 7),
        case("peer_notif_delay", "100", AB, |b| b.peer_notif_delay == 100),
        case("lacp_rate", "\"fast\"", LACP, |b| {
            b.lacp_rate == LacpRate::Fast
        }),
        case("lacp_rate", "1", LACP, |b| b.lacp_rate == LacpRate::Fast),
        case("lacp_rate", "\"1\"", LACP, |b| {
            b.lacp_rate == LacpRate::Fast
        }),
        case("lacp_rate", "\"slow\"", LACP, |b| {
            b.lacp_rate == LacpRate::Slow
        }),
        case("lacp_rate", "0", LACP, |b| b.lacp_rate == LacpRate::Slow),
        case("Lacp-Rate", "\"FAST\"", LACP, |b| {
            b.lacp_rate == LacpRate::Fast
        }),
        case("lacp_active", "\"off\"", LACP, |b| !b.lacp_active),
        case("lacp_active", "false", LACP, |b| !b.lacp_active),
        case("lacp_active", "\"passive\"", LACP, |b| !b.lacp_active),
        case("lacp_active", "\"on\"", LACP, |b| b.lacp_active),
        case("lacp_active", "\"active\"", LACP, |b| b.lacp_active),
        case("lacp_active", "1", LACP, |b| b.lacp_active),
        case("ad_actor_sys_prio", "100", LACP, |b| {
            b.ad_actor_sys_prio == 100
        }),
        case("ad_actor_sys_prio", "\"1\"", LACP, |b| {
            b.ad_actor_sys_prio == 1
        }),
        case("ad_actor_system", "\"02:aa:bb:cc:dd:ee\"", LACP, |b| {
            b.ad_actor_system == mac("02:aa:bb:cc:dd:ee")
        }),
        case("ad_actor_port_prio", "100", LACP, |b| {
            b.ad_actor_port_prio == lagkit_bondcfg::PortPriorities::All(100)
        }),
        case("ad_actor_port_prio", "{ eth2 = 7 }", LACP, |b| {
            b.ad_actor_port_prio.of("eth2") == 7 && b.ad_actor_port_prio.of("eth1") == 255
        }),
        case("ad_user_port_key", "1023", LACP, |b| {
            b.ad_user_port_key == 1023
        }),
        case("ad_select", "\"bandwidth\"", LACP, |b| {
            b.ad_select == AdSelect::Bandwidth
        }),
        case("ad_select", "2", LACP, |b| b.ad_select == AdSelect::Count),
        case("min_links", "2", LACP, |b| b.min_links == 2),
        case("max_bundle", "2", LACP, |b| b.max_bundle == Some(2)),
        case("lacp_no_partner", "\"suspend\"", LACP, |b| {
            b.lacp_no_partner == NoPartner::Suspend
        }),
        case("lacp_no_partner", "\"fallback\"", LACP, |b| {
            b.lacp_no_partner == NoPartner::Fallback
        }),
        case("coupled_control", "false", LACP, |b| !b.coupled_control),
        case("coupled_control", "\"off\"", LACP, |b| !b.coupled_control),
        case("primary", "\"eth2\"", AB, |b| {
            b.primary.as_deref() == Some("eth2")
        }),
        case(
            "primary_reselect",
            "\"better\"\nprimary = \"eth1\"",
            AB,
            |b| b.primary_reselect == PrimaryReselect::Better,
        ),
        case("primary_reselect", "2\nprimary = \"eth1\"", AB, |b| {
            b.primary_reselect == PrimaryReselect::Failure
        }),
        case(
            "primary_reselect_policy",
            "\"always\"\nprimary = \"eth1\"",
            AB,
            |b| b.primary_reselect == PrimaryReselect::Always,
        ),
        case("fail_over_mac", "\"follow\"", AB, |b| {
            b.fail_over_mac == FailOverMac::Follow
        }),
        case("fail_over_mac", "1", AB, |b| {
            b.fail_over_mac == FailOverMac::Active
        }),
        case("fail_over_mac_policy", "\"none\"", AB, |b| {
            b.fail_over_mac == FailOverMac::None
        }),
        case("engine", "\"bpf\"", LACP, |b| b.engine == Engine::Bpf),
        case("engine", "\"userspace\"", AB, |b| {
            b.engine == Engine::Userspace
        }),
        case("data_path", "\"auto\"", LACP, |b| b.engine == Engine::Auto),
        case(
            "arp_interval",
            "500\narp_ip_target = [\"192.0.2.1\"]",
            AB,
            |b| b.arp_interval == 500,
        ),
        case(
            "arp_ip_target",
            "[\"192.0.2.1\", \"192.0.2.2\"]\narp_interval = 100",
            AB,
            |b| b.arp_ip_target == [v4(192, 0, 2, 1), v4(192, 0, 2, 2)],
        ),
        case(
            "arp_ip_target",
            "\"192.0.2.1,192.0.2.2\"\narp_interval = 100",
            AB,
            |b| b.arp_ip_target.len() == 2,
        ),
        case(
            "arp_ip_targets",
            "[\"198.51.100.1\"]\narp_interval = 100",
            AB,
            |b| b.arp_ip_target == [v4(198, 51, 100, 1)],
        ),
        case(
            "ns_ip6_target",
            "[\"fd00::1\"]\narp_interval = 100",
            AB,
            |b| b.ns_ip6_target == [Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 1)],
        ),
        case("arp_validate", "\"filter_backup\"", AB, |b| {
            b.arp_validate == ArpValidate::FilterBackup
        }),
        case("arp_validate", "\"filter-active\"", AB, |b| {
            b.arp_validate == ArpValidate::FilterActive
        }),
        case("arp_validate", "3", AB, |b| {
            b.arp_validate == ArpValidate::All
        }),
        case("arp_all_targets", "\"all\"", AB, |b| {
            b.arp_all_targets == ArpAllTargets::All
        }),
        case("arp_all_targets", "0", AB, |b| {
            b.arp_all_targets == ArpAllTargets::Any
        }),
        case("arp_missed_max", "5", AB, |b| b.arp_missed_max == 5),
        case("num_grat_arp", "3", AB, |b| b.num_grat_arp == 3),
        case("num_unsol_na", "\"4\"", AB, |b| b.num_grat_arp == 4),
        case("gratuitous_arp", "0", AB, |b| b.num_grat_arp == 0),
        case("packets_per_slave", "0", "balance-rr", |b| {
            b.packets_per_slave == 0
        }),
        case("lp_interval", "5", "balance-alb", |b| b.lp_interval == 5),
        case("learn_packet_interval", "\"5s\"", "balance-tlb", |b| {
            b.lp_interval == 5
        }),
        case("tlb_dynamic_lb", "0", "balance-tlb", |b| !b.tlb_dynamic_lb),
        case("all_slaves_active", "1", AB, |b| b.all_slaves_active),
        case("resend_igmp", "0", AB, |b| b.resend_igmp == 0),
        case("force_members", "[\"eth1\"]", LACP, |b| {
            b.force_members == ["eth1"]
        }),
        case("backup_adapter", "\"eth9\"", LACP, |b| {
            b.backup_adapter.as_deref() == Some("eth9")
        }),
        case(
            "auto_recovery",
            "\"no\"\nbackup_adapter = \"eth9\"",
            LACP,
            |b| !b.auto_recovery,
        ),
        case(
            "auto_recovery",
            "true\nbackup_adapter = \"eth9\"",
            LACP,
            |b| b.auto_recovery,
        ),
        case("netaddr", "\"192.0.2.254\"", LACP, |b| {
            b.netaddr == Some(v4(192, 0, 2, 254))
        }),
        case("num_retries", "5\nnetaddr = \"192.0.2.254\"", LACP, |b| {
            b.num_retries == 5
        }),
        case(
            "retry_time",
            "\"2s\"\nnetaddr = \"192.0.2.254\"",
            LACP,
            |b| b.retry_time == 2,
        ),
        case("control_socket", "\"/run/x.sock\"", LACP, |b| {
            b.control_socket == Some(PathBuf::from("/run/x.sock"))
                && b.control_socket_path() == std::path::Path::new("/run/x.sock")
        }),
        case("metrics_port", "9464", LACP, |b| {
            b.metrics_listen == Some("127.0.0.1:9464".parse().unwrap())
        }),
        case("metrics_port", "\"9100\"", LACP, |b| {
            b.metrics_listen == Some("127.0.0.1:9100".parse().unwrap())
        }),
        case("metrics_listen", "\"[::1]:9100\"", LACP, |b| {
            b.metrics_listen == Some("[::1]:9100".parse().unwrap())
        }),
        case("metrics_listen", "\"0.0.0.0:9101\"", LACP, |b| {
            b.metrics_listen == Some("0.0.0.0:9101".parse().unwrap())
        }),
        case("metrics_listen", "9102", LACP, |b| {
            b.metrics_listen == Some("127.0.0.1:9102".parse().unwrap())
        }),
        case("adaptive_interval", "\"2s\"", "adaptive", |b| {
            b.adaptive_interval == 2000
        }),
        case("adaptive_idle_gap", "20", "adaptive", |b| {
            b.adaptive_idle_gap == 20
        }),
        case("offloads", "false", LACP, |b| {
            b.offloads_off == ["eth1", "eth2"]
        }),
        case("offloads", "\"off\"", LACP, |b| {
            b.offloads_off == ["eth1", "eth2"]
        }),
        case("offloads", "true", LACP, |b| b.offloads_off.is_empty()),
        case("offloads", "{ eth2 = false }", LACP, |b| {
            b.offloads_off == ["eth2"]
        }),
        case("offloads", "{ eth2 = \"no\", eth1 = true }", LACP, |b| {
            b.offloads_off == ["eth2"]
        }),
        case("pagp", "\"desirable\"", "balance-xor", |b| {
            b.pagp == Pagp::Desirable
        }),
        case("pagp_mode", "\"Auto\"", AB, |b| b.pagp == Pagp::Auto),
        case("pagp", "\"off\"", LACP, |b| b.pagp == Pagp::Off),
        case("pagp_silent", "\"non-silent\"", AB, |b| !b.pagp_silent),
        case("pagp_silent", "true", AB, |b| b.pagp_silent),
        case("pagp_rate", "\"fast\"", AB, |b| {
            b.pagp_rate == PagpRate::Fast
        }),
    ]
}

fn text_for(c: &Case) -> String {
    let key = lagkit_bondcfg::option_names()
        .find(|(name, aliases)| {
            let folded = c.key.to_ascii_lowercase().replace('-', "_");
            let folded = folded.strip_prefix("bond_").unwrap_or(&folded).to_string();
            *name == folded || aliases.contains(&folded.as_str())
        })
        .map(|(name, _)| name)
        .unwrap_or_else(|| panic!("{} is no spelling of any option", c.key));
    let mut text = String::new();
    if key != "name" {
        text.push_str("name = \"bond0\"\n");
    }
    if key != "mode" {
        text.push_str(&format!("mode = \"{}\"\n", c.mode));
    }
    if key != "members" {
        text.push_str("members = [\"eth1\", \"eth2\"]\n");
    }
    text.push_str(&format!("{} = {}\n", c.key, c.value));
    text
}

#[test]
fn every_option_in_every_spelling() {
    for c in cases() {
        let text = text_for(&c);
        let b = one(&text);
        assert!((c.check)(&b), "{} = {} gave {b:#?}", c.key, c.value);
        // Whatever was read survives a write and a read.
        assert_eq!(one(&b.to_toml()), b, "{}", b.to_toml());
    }
}

#[test]
fn every_spelling_is_covered_by_a_case() {
    let cases = cases();
    for (name, aliases) in option_names() {
        for s in std::iter::once(name).chain(aliases.iter().copied()) {
            assert!(
                cases.iter().any(|c| c.key == s),
                "no case for the spelling {s}"
            );
        }
    }
}

#[test]
fn aix_file_maps_to_typed_values() {
    // The seed's `mkdev ... -a adapter_names="ent2,ent4" -a mode=8023ad
    // -a hash_mode=src_dst_port -a use_jumbo_frame=yes -a num_retries=3
    // -a retry_time=1`, plus a backup adapter and the address to ping.
    let text = r#"
name = "ent6"
adapter_names = "ent2,ent4"
mode = "8023ad"
hash_mode = "src_dst_port"
use_jumbo_frame = "yes"
num_retries = 3
retry_time = 1
backup_adapter = "ent3"
netaddr = "253.125.129.1"
auto_recovery = "yes"
address = "253.125.129.9/24"
"#;
    let (bonds, warnings) = parse_str(text, "aix.toml").unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let b = &bonds[0];
    assert_eq!(b.members, ["ent2", "ent4"]);
    assert_eq!(b.mode, Mode::Lacp);
    assert_eq!(b.xmit_hash_policy, Policy::AixSrcDstPort);
    assert_eq!(b.mtu, 9000);
    assert_eq!(b.backup_adapter.as_deref(), Some("ent3"));
    assert_eq!(b.netaddr, Some(v4(253, 125, 129, 1)));
    assert!(b.auto_recovery);
    assert_eq!(b.address[0].to_string(), "253.125.129.9/24");
    let probe = b.probe().unwrap();
    assert_eq!(probe.targets, [v4(253, 125, 129, 1)]);
    assert_eq!((probe.interval_ms, probe.missed_max), (1000, 3));
}

#[test]
fn aix_standard_and_round_robin_modes() {
    let b = one("name = \"ent6\"\nadapter_names = \"ent2,ent4\"\nmode = \"standard\"\n");
    assert_eq!(b.mode, Mode::BalanceXor);
    let b = one("name = \"ent6\"\nadapter_names = \"ent2,ent4\"\nmode = \"round_robin\"\n");
    assert_eq!(b.mode, Mode::BalanceRr);
}

#[test]
fn table_per_bond_with_shared_defaults() {
    let text = r#"
lacp_rate = "fast"
miimon = 100

[bond0]
mode = "802.3ad"
members = ["eth1", "eth2"]

[bond1]
mode = "802.3ad"
members = ["eth3", "eth4"]
lacp_rate = "slow"
"#;
    let (bonds, warnings) = parse_str(text, "multi.toml").unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let names: Vec<&str> = bonds.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["bond0", "bond1"]);
    assert_eq!(bonds[0].lacp_rate, LacpRate::Fast);
    assert_eq!(bonds[1].lacp_rate, LacpRate::Slow);
    assert!(bonds.iter().all(|b| b.miimon == 100));
}

#[test]
fn array_of_bond_tables_in_file_order() {
    let text = r#"
[[bond]]
name = "bond9"
mode = "active-backup"
members = ["eth5", "eth6"]
primary = "eth6"

[[bond]]
name = "bond1"
mode = "balance-xor"
members = ["eth1", "eth2"]
"#;
    let (bonds, _) = parse_str(text, "multi.toml").unwrap();
    let names: Vec<&str> = bonds.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["bond9", "bond1"]);
    assert_eq!(bonds[0].primary.as_deref(), Some("eth6"));
}

#[test]
fn tables_and_arrays_mix_in_file_order() {
    let text = r#"
[zeta]
mode = 4
members = ["eth1"]

[[bond]]
name = "alpha"
mode = 4
members = ["eth2"]

[mid]
name = "mid"
mode = 4
members = ["eth3"]
"#;
    let (bonds, _) = parse_str(text, "multi.toml").unwrap();
    let names: Vec<&str> = bonds.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["zeta", "alpha", "mid"]);
}

#[test]
fn reload_sees_only_the_change() {
    let before = parse_str(MINIMAL, "bond.toml").unwrap().0;
    let edited = MINIMAL
        .replace("[\"eth1\", \"eth2\"]", "[\"eth2\", \"eth3\"]")
        .replace("fast", "slow");
    let after = parse_str(&edited, "bond.toml").unwrap().0;
    let r = Reload::between(&before, &after);
    assert!(r.added.is_empty() && r.removed.is_empty());
    let (name, change) = &r.changed[0];
    assert_eq!(name, "bond0");
    assert_eq!(change.members_added, ["eth3"]);
    assert_eq!(change.members_removed, ["eth1"]);
    let changed: Vec<String> = change.changed.iter().map(|c| c.to_string()).collect();
    assert_eq!(changed, ["lacp_rate: fast -> slow"]);
    assert!(!change.needs_rebuild());
}

#[test]
fn status_output_uses_linux_names() {
    let b = one(MINIMAL);
    let json = serde_json::to_value(&b).unwrap();
    assert_eq!(json["mode"], "802.3ad");
    assert_eq!(json["xmit_hash_policy"], "layer3+4");
    assert_eq!(json["lacp_rate"], "fast");
    assert_eq!(json["address"][0], "10.0.0.1/24");
    assert_eq!(json["mac"], serde_json::Value::Null);
}

#[test]
fn to_toml_round_trips_a_full_config() {
    let text = r#"
name = "bond3"
mode = "active-backup"
members = ["eth1", "eth2", "eth3"]
primary = "eth2"
primary_reselect = "better"
fail_over_mac = "active"
miimon = 100
updelay = 300
downdelay = 200
mtu = 9000
address = ["10.0.0.1/24", "fd00::1/64"]
mac = "02:00:00:00:00:03"
backup_adapter = "eth9"
auto_recovery = false
netaddr = "10.0.0.254"
control_socket = "/run/lagkit/custom.sock"
metrics_port = 9464
"#;
    let b = one(text);
    let again = one(&b.to_toml());
    assert_eq!(again, b);
    assert!(b.diff(&again).is_empty());
}

#[test]
fn offloads_cover_the_backup_adapter_and_follow_defaults() {
    let b = one(
        "name = \"bond0\"\nmode = \"active-backup\"\nmembers = [\"eth1\"]\nbackup_adapter = \"eth9\"\noffloads = false\n",
    );
    assert_eq!(b.offloads_off, ["eth1", "eth9"]);
    assert_eq!(one(&b.to_toml()), b, "{}", b.to_toml());
    // A per-member table, written as a TOML table of its own.
    let b = one("name = \"bond0\"\nmode = \"active-backup\"\nmembers = [\"eth1\", \"eth2\"]\n\n[offloads]\neth1 = false\n");
    assert_eq!(b.offloads_off, ["eth1"]);
    // A top-level default reaches every bond of the file.
    let (bonds, _) = parse_str(
        "offloads = false\n[bond0]\nmode = \"balance-xor\"\nmembers = [\"eth1\"]\n[bond1]\nmode = \"balance-xor\"\nmembers = [\"eth2\"]\noffloads = true\n",
        "bond.toml",
    )
    .unwrap();
    assert_eq!(bonds[0].offloads_off, ["eth1"]);
    assert!(bonds[1].offloads_off.is_empty(), "a bond's own key wins");
}

#[test]
fn parse_file_reads_and_names_the_path() {
    let dir = std::env::temp_dir().join(format!("lagkit-bondcfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bond.toml");
    std::fs::write(&path, MINIMAL).unwrap();
    let bonds = lagkit_bondcfg::parse_file(&path).unwrap();
    assert_eq!(bonds[0].name, "bond0");
    std::fs::write(&path, "name = \"bond0\"\nmode = \"x\"\n").unwrap();
    let e = lagkit_bondcfg::parse_file(&path).unwrap_err();
    assert!(
        e.to_string()
            .starts_with(&format!("{}:2:1:", path.display())),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
