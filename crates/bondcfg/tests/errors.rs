//! Every way a file is refused: the exact line (and column) reported, the
//! key named, and the fix in the message. Then the warnings.

use lagkit_bondcfg::{
    parse_str, CidrProblem, ConfigError, ErrorKind, InvalidConfig, MacProblem, Mode, NameProblem,
    PathProblem, TargetProblem, WarningKind,
};

const HEAD: &str = "name = \"bond0\"\nmode = \"802.3ad\"\nmembers = [\"eth1\", \"eth2\"]\n";

/// Parses `text`, which must fail on `line` naming `key`, with `fix` in the message.
#[track_caller]
fn fails(text: &str, line: usize, key: Option<&str>, fix: &str) -> InvalidConfig {
    let e = parse_str(text, "bond.toml").expect_err(text);
    let msg = e.to_string();
    let inv = e.invalid().expect("a located error").clone();
    assert_eq!(inv.line, line, "{msg}");
    assert_eq!(e.line(), Some(line));
    assert_eq!(inv.key.as_deref(), key, "{msg}");
    assert!(
        msg.starts_with(&format!("bond.toml:{line}:{}: ", inv.column)),
        "{msg}"
    );
    if let Some(k) = key {
        assert!(msg.contains(&format!("key '{k}': ")), "{msg}");
    }
    assert!(msg.contains(fix), "missing {fix:?} in: {msg}");
    inv
}

/// `HEAD` plus one line (line 4).
fn with(line: &str) -> String {
    format!("{HEAD}{line}\n")
}

#[test]
fn unknown_mode_reads_as_the_issue_says() {
    let e = parse_str(
        "name = \"bond0\"\nmembers = [\"eth1\"]\nlacp_rate = 1\nmode = \"balance-foo\"\n",
        "bond.toml",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "bond.toml:4:1: key 'mode': unknown mode 'balance-foo'; use one of 802.3ad, \
         balance-xor, balance-rr, active-backup, broadcast, balance-tlb, balance-alb, adaptive \
         (AIX: 8023ad, standard, round_robin)"
    );
}

#[test]
fn syntax_errors_have_line_and_column() {
    let inv = fails(
        "name = \"bond0\"\n\nmode = balance-xor\n",
        3,
        None,
        "fix the syntax",
    );
    assert_eq!(inv.column, 8);
    assert!(matches!(inv.kind, ErrorKind::Syntax { .. }));
    assert!(inv.to_string().contains("string values must be quoted"));

    let inv = fails(
        "name = \"bond0\"\nmembers = [\"eth1\",\n\"eth2\"\nmode = 4\n",
        4,
        None,
        "invalid TOML",
    );
    assert_eq!(inv.column, 1);

    let inv = fails(
        &format!("{HEAD}miimon = 1\nmiimon = 2\n"),
        5,
        None,
        "already defined above",
    );
    assert_eq!(inv.column, 1);

    fails(
        "[bond0]\nmode = 4\nmembers = [\"a\"]\n[bond0]\nmode = 4\n",
        4,
        None,
        "remove or rename one",
    );
}

#[test]
fn empty_file_names_no_bond() {
    let inv = fails("# nothing here\n\n", 1, None, "start with name = \"bond0\"");
    assert_eq!(inv.kind, ErrorKind::NoBond);
    fails("", 1, None, "describes no bond");
}

#[test]
fn unknown_keys_suggest_the_nearest() {
    let inv = fails(
        &with("miimom = 100"),
        4,
        Some("miimom"),
        "did you mean 'miimon'?",
    );
    assert_eq!(inv.column, 1);
    fails(
        &with("lacprate = \"fast\""),
        4,
        Some("lacprate"),
        "'lacp_rate'",
    );
    fails(
        &with("adapter_name = \"ent2\""),
        4,
        Some("adapter_name"),
        "'adapter_names'",
    );
    fails(
        &with("  xmit_hash = 1"),
        4,
        Some("xmit_hash"),
        "'xmit_hash_policy'",
    );
    let inv = fails(&with("frobnicate = 1"), 4, Some("frobnicate"), "remove it");
    assert_eq!(
        inv.kind,
        ErrorKind::UnknownKey {
            suggestion: None,
            hint: None
        }
    );
    // Inside a bond table, the bond is known.
    let inv = fails(
        "[bond0]\nmode = 4\nmembers = [\"eth1\"]\nupdelay_ms = 5\n",
        4,
        Some("updelay_ms"),
        "did you mean 'updelay'?",
    );
    assert_eq!(inv.bond.as_deref(), Some("bond0"));
    // A misnamed array of bond tables.
    fails(
        "[[bonds]]\nname = \"bond0\"\nmode = 4\nmembers = [\"eth1\"]\n",
        1,
        Some("bonds"),
        "did you mean 'bond'?",
    );
}

#[test]
fn keys_from_other_systems_explain_themselves() {
    fails(
        &with("netmask = \"255.255.255.0\""),
        4,
        Some("netmask"),
        "write address = [\"A.B.C.D/PREFIX\"]",
    );
    fails(
        &with("use_carrier = 1"),
        4,
        Some("use_carrier"),
        "remove it",
    );
    fails(
        &with("active_slave = \"eth1\""),
        4,
        Some("active_slave"),
        "set primary",
    );
    fails(
        &with("jumbo_frames = \"yes\""),
        4,
        Some("jumbo_frames"),
        "use_jumbo_frame",
    );
}

#[test]
fn wrong_types_show_an_example() {
    let inv = fails(
        &with("miimon = [100]"),
        4,
        Some("miimon"),
        "write e.g. miimon = 100",
    );
    assert!(matches!(
        inv.kind,
        ErrorKind::WrongType { found: "array", .. }
    ));
    fails(&with("miimon = 1.5"), 4, Some("miimon"), "found float");
    fails(
        &with("mac = 2"),
        4,
        Some("mac"),
        "mac = \"02:00:00:00:00:01\"",
    );
    fails(
        &with("lacp_rate = true"),
        4,
        Some("lacp_rate"),
        "lacp_rate = \"fast\"",
    );
    fails(
        &with("auto_recovery = 1979-05-27"),
        4,
        Some("auto_recovery"),
        "true or false",
    );
    fails(
        "name = 5\nmode = 4\nmembers = [\"eth1\"]\n",
        1,
        Some("name"),
        "name = \"bond0\"",
    );
    fails(
        "name = \"bond0\"\nmode = 4\nmembers = 5\n",
        3,
        Some("members"),
        "members = [\"eth1\", \"eth2\"]",
    );
    // A bad element is reported on its own line.
    let inv = fails(
        "name = \"bond0\"\nmode = 4\nmembers = [\n  \"eth1\",\n  2,\n]\n",
        5,
        Some("members"),
        "a list of strings",
    );
    assert_eq!(inv.column, 3);
}

#[test]
fn unknown_names_list_the_valid_ones() {
    fails(
        &with("lacp_rate = \"medium\""),
        4,
        Some("lacp_rate"),
        "use one of slow, fast",
    );
    fails(
        &with("lacp_rate = 2"),
        4,
        Some("lacp_rate"),
        "unknown lacp_rate '2'",
    );
    fails(
        &with("ad_select = \"fastest\""),
        4,
        Some("ad_select"),
        "stable, bandwidth, count",
    );
    fails(
        &with("lacp_no_partner = \"drop\""),
        4,
        Some("lacp_no_partner"),
        "individual, fallback, suspend",
    );
    let text = "name = \"b\"\nmode = \"active-backup\"\nmembers = [\"e1\"]\n";
    fails(
        &format!("{text}primary_reselect = \"never\""),
        4,
        Some("primary_reselect"),
        "always, better, failure",
    );
    fails(
        &format!("{text}arp_validate = \"some\""),
        4,
        Some("arp_validate"),
        "filter_active",
    );
    fails(
        &format!("{text}arp_all_targets = \"most\""),
        4,
        Some("arp_all_targets"),
        "any, all",
    );
    fails(
        &format!("{text}fail_over_mac = \"swap\""),
        4,
        Some("fail_over_mac"),
        "none, active, follow",
    );
    let inv = fails(
        &with("hash_mode = \"layer5\""),
        4,
        Some("hash_mode"),
        "valid policies:",
    );
    assert!(matches!(inv.kind, ErrorKind::Policy(_)));
    assert!(inv.to_string().contains("src_dst_port"));
    fails(
        &with("xmit_hash_policy = 9"),
        4,
        Some("xmit_hash_policy"),
        "layer3+4",
    );
    fails(
        &with("xmit_hash_policy = \"strong:seed=zz\""),
        4,
        Some("xmit_hash_policy"),
        "strong:seed=0x2a,symmetric",
    );
}

#[test]
fn numbers_are_checked_against_their_range() {
    let range = |line: &str, key: &str, fix: &str| {
        let inv = fails(&with(line), 4, Some(key), fix);
        assert!(matches!(inv.kind, ErrorKind::OutOfRange { .. }), "{inv}");
    };
    range("mtu = 67", "mtu", "use a value from 68 to 65535");
    range("mtu = \"70000\"", "mtu", "from 68 to 65535");
    range(
        "ad_user_port_key = 1024",
        "ad_user_port_key",
        "from 0 to 1023",
    );
    range(
        "ad_actor_sys_prio = 0",
        "ad_actor_sys_prio",
        "from 1 to 65535",
    );
    range("num_grat_arp = 256", "num_grat_arp", "from 0 to 255");
    range("miimon = -1", "miimon", "from 0 to 2147483647");
    range("miimon = \"3000000s\"", "miimon", "from 0 to 2147483647");
    range(
        "hash_seed = \"99999999999999999999999\"",
        "hash_seed",
        "from 0 to 18446744073709551615",
    );
    range("metrics_port = 0", "metrics_port", "from 1 to 65535");
    range("max_bundle = 0", "max_bundle", "from 1 to 256");
    range("num_retries = 0", "num_retries", "from 1 to 100");
    range("arp_missed_max = 0", "arp_missed_max", "from 1 to 255");
    range("lp_interval = 0", "lp_interval", "from 1 to");
    range(
        "peer_notif_delay = 300001",
        "peer_notif_delay",
        "from 0 to 300000",
    );
    let inv = fails(
        &with("miimon = \"fast\""),
        4,
        Some("miimon"),
        "write e.g. miimon = 100",
    );
    assert!(matches!(inv.kind, ErrorKind::NotANumber { .. }));
    fails(
        &with("retry_time = \"1.5s\""),
        4,
        Some("retry_time"),
        "not a whole number",
    );
}

#[test]
fn yes_no_values() {
    let inv = fails(
        &with("auto_recovery = \"maybe\""),
        4,
        Some("auto_recovery"),
        "use true or false",
    );
    assert_eq!(
        inv.kind,
        ErrorKind::NotABool {
            value: "maybe".into()
        }
    );
    fails(
        &with("coupled_control = 2"),
        4,
        Some("coupled_control"),
        "yes/no",
    );
}

#[test]
fn mac_addresses() {
    let mac = |v: &str, p: MacProblem, fix: &str| {
        let inv = fails(&with(&format!("mac = \"{v}\"")), 4, Some("mac"), fix);
        assert!(matches!(inv.kind, ErrorKind::BadMac { problem, .. } if problem == p));
    };
    mac(
        "02:00:00:00:01",
        MacProblem::Syntax,
        "six hex octets like 02:00:00:00:00:01",
    );
    mac(
        "01:00:5e:00:00:01",
        MacProblem::Multicast,
        "first octet even",
    );
    mac("00:00:00:00:00:00", MacProblem::Zero, "leave the key out");
    fails(
        &with("ad_actor_system = \"ff:ff:ff:ff:ff:ff\""),
        4,
        Some("ad_actor_system"),
        "use a unicast one",
    );
}

#[test]
fn interface_addresses() {
    let text = format!("{HEAD}address = [\n  \"10.0.0.1/24\",\n  \"10.0.0.2\",\n]\n");
    let inv = fails(
        &text,
        6,
        Some("address"),
        "write it with one, e.g. 10.0.0.2/24",
    );
    assert_eq!(inv.column, 3);
    let cidr = |v: &str, p: CidrProblem, fix: &str| {
        let inv = fails(
            &with(&format!("address = \"{v}\"")),
            4,
            Some("address"),
            fix,
        );
        assert!(
            matches!(inv.kind, ErrorKind::BadCidr { problem, .. } if problem == p),
            "{inv}"
        );
    };
    cidr("fd00::1", CidrProblem::NoPrefix, "fd00::1/64");
    cidr(
        "10.0.0.1/40",
        CidrProblem::PrefixTooLong { max: 32 },
        "must be 0 to 32",
    );
    cidr(
        "0.0.0.0/0",
        CidrProblem::Unspecified,
        "the bond's own address",
    );
    cidr("224.0.0.5/24", CidrProblem::NotUnicast, "unicast address");
    cidr("ten.0.0.1/8", CidrProblem::Syntax, "e.g. 10.0.0.1/24");
    let text = format!("{HEAD}address = [\"10.0.0.1/24\",\n\"10.0.0.1/16\"]\n");
    fails(&text, 5, Some("address"), "listed twice (also on line 4)");
}

#[test]
fn probe_targets() {
    let ab = "name = \"b\"\nmode = \"active-backup\"\nmembers = [\"e1\"]\n";
    let target = |line: &str, key: &str, p: TargetProblem, fix: &str| {
        let inv = fails(&format!("{ab}{line}\n"), 4, Some(key), fix);
        assert!(
            matches!(inv.kind, ErrorKind::BadTarget { problem, .. } if problem == p),
            "{inv}"
        );
    };
    target(
        "arp_ip_target = [\"fd00::1\"]",
        "arp_ip_target",
        TargetProblem::NotIpv4,
        "like 192.0.2.1",
    );
    target(
        "arp_ip_target = \"0.0.0.0\"",
        "arp_ip_target",
        TargetProblem::Unusable,
        "the default gateway",
    );
    target(
        "netaddr = \"255.255.255.255\"",
        "netaddr",
        TargetProblem::Unusable,
        "a host that answers",
    );
    target(
        "netaddr = \"gateway\"",
        "netaddr",
        TargetProblem::NotIpv4,
        "dotted address",
    );
    target(
        "ns_ip6_target = [\"10.0.0.1\"]",
        "ns_ip6_target",
        TargetProblem::NotIpv6,
        "like fd00::1",
    );
    target(
        "ns_ip6_target = [\"ff02::1\"]",
        "ns_ip6_target",
        TargetProblem::Unusable,
        "cannot be probed",
    );
    let many: Vec<String> = (1..=17).map(|i| format!("\"192.0.2.{i}\"")).collect();
    let inv = fails(
        &format!("{ab}arp_ip_target = [{}]\n", many.join(", ")),
        4,
        Some("arp_ip_target"),
        "17 targets given, at most 16 allowed; remove 1",
    );
    assert!(matches!(inv.kind, ErrorKind::TooMany { .. }));
    fails(
        &format!("{ab}arp_ip_target = [\n\"192.0.2.1\",\n\"192.0.2.1\"]\n"),
        6,
        Some("arp_ip_target"),
        "listed twice (also on line 5); remove one",
    );
}

#[test]
fn interface_names() {
    let name = |text: &str, line: usize, key: Option<&str>, p: NameProblem, fix: &str| {
        let inv = fails(text, line, key, fix);
        assert!(
            matches!(inv.kind, ErrorKind::BadName { problem, .. } if problem == p),
            "{inv}"
        );
    };
    name(
        "name = \"bond0\"\nmode = 4\nmembers = [\"eth1\", \"eth/2\"]\n",
        3,
        Some("members"),
        NameProblem::BadChar('/'),
        "letters, digits",
    );
    name(
        "name = \"a-very-long-bond-name\"\nmode = 4\nmembers = [\"eth1\"]\n",
        1,
        Some("name"),
        NameProblem::TooLong,
        "at most 15",
    );
    name(
        "name = \"..\"\nmode = 4\nmembers = [\"eth1\"]\n",
        1,
        Some("name"),
        NameProblem::Dots,
        "a name like eth1",
    );
    name(
        "name = \"bond0\"\nmode = 4\nmembers = [\"eth1\", \"\"]\n",
        3,
        Some("members"),
        NameProblem::Empty,
        "write a name like eth1",
    );
    // A table header that is not an interface name.
    name(
        "[\"bond 0\"]\nmode = 4\nmembers = [\"eth1\"]\n",
        1,
        None,
        NameProblem::BadChar(' '),
        "forbids",
    );
    name(
        &format!(
            "{}primary = \"eth:1\"\n",
            HEAD.replace("802.3ad", "active-backup")
        ),
        4,
        Some("primary"),
        NameProblem::BadChar(':'),
        "forbids",
    );
}

#[test]
fn socket_paths() {
    let inv = fails(
        &with("control_socket = \"run/bond0.sock\""),
        4,
        Some("control_socket"),
        "write an absolute one",
    );
    assert!(matches!(
        inv.kind,
        ErrorKind::BadPath {
            problem: PathProblem::NotAbsolute,
            ..
        }
    ));
    let long = format!("/{}", "x".repeat(120));
    fails(
        &with(&format!("control_socket = \"{long}\"")),
        4,
        Some("control_socket"),
        "at most 107",
    );
}

#[test]
fn members_must_be_a_non_empty_unique_list() {
    let inv = fails(
        "name = \"bond0\"\nmode = 4\nmembers = []\n",
        3,
        Some("members"),
        "e.g. members = [\"eth1\", \"eth2\"]",
    );
    assert_eq!(inv.kind, ErrorKind::EmptyMembers);
    fails(
        "name = \"bond0\"\nmode = 4\nadapter_names = \" , \"\n",
        3,
        Some("adapter_names"),
        "no members",
    );
    let inv = fails(
        "name = \"bond0\"\nmode = 4\nmembers = [\n  \"eth1\",\n  \"eth2\",\n  \"eth1\",\n]\n",
        6,
        Some("members"),
        "'eth1' is listed twice (also on line 4); remove one",
    );
    assert_eq!(inv.column, 3);
    fails(
        "name = \"bond0\"\nmode = 4\nmembers = [\"eth1\", \"bond0\"]\n",
        3,
        Some("members"),
        "'bond0' is the bond itself",
    );
    let many: Vec<String> = (0..257).map(|i| format!("\"e{i}\"")).collect();
    fails(
        &format!(
            "name = \"bond0\"\nmode = 4\nmembers = [{}]\n",
            many.join(",")
        ),
        3,
        Some("members"),
        "257 members given, at most 256 allowed",
    );
}

#[test]
fn required_keys() {
    let inv = fails(
        "name = \"bond0\"\nmembers = [\"eth1\"]\n",
        1,
        Some("mode"),
        "add e.g. mode = \"802.3ad\"",
    );
    assert!(matches!(inv.kind, ErrorKind::Missing { .. }));
    fails(
        "name = \"bond0\"\nmode = 4\n",
        1,
        Some("members"),
        "members = [\"eth1\", \"eth2\"]",
    );
    fails(
        "mode = 4\nmembers = [\"eth1\"]\n",
        1,
        Some("name"),
        "name = \"bond0\"",
    );
    // Reported at the table that lacks it.
    fails(
        "[bond0]\nmode = 4\nmembers = [\"e1\"]\n\n[bond1]\nmembers = [\"e2\"]\n",
        5,
        Some("mode"),
        "every bond needs it",
    );
    fails(
        "[[bond]]\nname = \"a\"\nmode = 4\nmembers = [\"e1\"]\n\n[[bond]]\nmode = 4\nmembers = [\"e2\"]\n",
        6,
        Some("name"),
        "add e.g. name = \"bond0\"",
    );
}

#[test]
fn one_option_under_two_spellings() {
    let inv = fails(
        "name = \"bond0\"\nmode = 4\nmembers = [\"eth1\"]\nadapter_names = \"ent2\"\n",
        4,
        Some("adapter_names"),
        "also set as 'members' on line 3; keep one of them",
    );
    assert!(matches!(inv.kind, ErrorKind::GivenTwice { line: 3, .. }));
    fails(
        &with("num_unsol_na = 2\nnum_grat_arp = 2"),
        5,
        Some("num_grat_arp"),
        "'num_unsol_na' on line 4",
    );
    fails(
        &with("MTU = 9000\nmtu = 1500"),
        5,
        Some("mtu"),
        "also set as 'MTU'",
    );
}

#[test]
fn file_shape_errors() {
    fails(
        "bond = [1, 2]\n",
        1,
        Some("bond"),
        "write one [NAME] table or one [[bond]] table per bond",
    );
    fails(
        "name = \"bond0\"\n\n[bond1]\nmode = 4\nmembers = [\"e1\"]\n",
        1,
        Some("name"),
        "the first is on line 3",
    );
    let inv = fails(
        "[bond0]\nname = \"bond1\"\nmode = 4\nmembers = [\"e1\"]\n",
        2,
        Some("name"),
        "remove name or make it 'bond0'",
    );
    assert_eq!(
        inv.kind,
        ErrorKind::NameMismatch {
            table: "bond0".into(),
            name: "bond1".into()
        }
    );
}

#[test]
fn bonds_do_not_share_names_interfaces_sockets_or_ports() {
    let inv = fails(
        "[[bond]]\nname = \"bond0\"\nmode = 4\nmembers = [\"e1\"]\n\n[[bond]]\nname = \"bond0\"\nmode = 4\nmembers = [\"e2\"]\n",
        7,
        None,
        "already defined on line 2; rename one",
    );
    assert_eq!(inv.bond.as_deref(), Some("bond0"));
    assert!(inv.to_string().starts_with("bond.toml:7:1: bond 'bond0': "));
    // A table and an array entry with one name.
    fails(
        "[bond0]\nmode = 4\nmembers = [\"e1\"]\n\n[[bond]]\nname = \"bond0\"\nmode = 4\nmembers = [\"e2\"]\n",
        6,
        None,
        "already defined on line 1",
    );
    let inv = fails(
        "[bond0]\nmode = 4\nmembers = [\"e1\", \"e2\"]\n\n[bond1]\nmode = 4\nmembers = [\"e3\",\n  \"e2\"]\n",
        8,
        Some("members"),
        "'e2' is already in bond 'bond0' (line 3); an interface can belong to one bond only",
    );
    assert_eq!(inv.column, 3);
    assert!(inv
        .to_string()
        .starts_with("bond.toml:8:3: bond 'bond1': key 'members': 'e2'"));
    // Through a backup adapter.
    fails(
        "[bond0]\nmode = 4\nmembers = [\"e1\"]\nbackup_adapter = \"e9\"\n\n[bond1]\nmode = 4\nmembers = [\"e9\"]\n",
        8,
        Some("members"),
        "already in bond 'bond0' (line 4)",
    );
    // Through a shared default.
    fails(
        "members = [\"e1\"]\n[bond0]\nmode = 4\n[bond1]\nmode = 4\n",
        1,
        Some("members"),
        "already in bond 'bond0'",
    );
    fails(
        "[bond0]\nmode = 4\nmembers = [\"e1\"]\ncontrol_socket = \"/run/a.sock\"\n[bond1]\nmode = 4\nmembers = [\"e2\"]\ncontrol_socket = \"/run/a.sock\"\n",
        8,
        Some("control_socket"),
        "give each bond its own control_socket",
    );
    fails(
        "metrics_port = 9464\n[bond0]\nmode = 4\nmembers = [\"e1\"]\n[bond1]\nmode = 4\nmembers = [\"e2\"]\n",
        1,
        Some("metrics_port"),
        "bond 'bond0' listens on the same metrics address (line 1)",
    );
    // A port on every address clashes with the same port on loopback.
    fails(
        "[bond0]\nmode = 4\nmembers = [\"e1\"]\nmetrics_listen = \"0.0.0.0:9464\"\n[bond1]\nmode = 4\nmembers = [\"e2\"]\nmetrics_port = 9464\n",
        8,
        Some("metrics_port"),
        "listens on the same metrics address (line 4)",
    );
}

#[test]
fn a_default_that_fails_in_one_bond_names_that_bond() {
    let inv = fails(
        "mode = 1
primary = \"e1\"
[bond0]
members = [\"e1\"]
[bond1]
members = [\"e2\"]
",
        2,
        Some("primary"),
        "primary 'e1' is not a member; use one of e2",
    );
    assert!(inv
        .to_string()
        .starts_with("bond.toml:2:1: bond 'bond1': key 'primary': "));
}

#[test]
fn port_priorities_name_members() {
    let inv = fails(
        &with("ad_actor_port_prio = { eth1 = 100, eth3 = 7 }"),
        4,
        Some("ad_actor_port_prio"),
        "'eth3' is not a member of this bond; name one of eth1, eth2 (ad_actor_port_prio = { eth1 = 100 })",
    );
    assert!(matches!(inv.kind, ErrorKind::NotAMember { .. }));
    fails(
        &with("ad_actor_port_prio = { eth1 = 0 }"),
        4,
        Some("ad_actor_port_prio"),
        "1 to 65535",
    );
}

#[test]
fn offloads_name_members_and_take_yes_no() {
    let inv = fails(
        &with("offloads = { eth1 = false, eth3 = false }"),
        4,
        Some("offloads"),
        "'eth3' is not a member of this bond; name one of eth1, eth2 (offloads = { eth1 = false }), or write offloads = false for every member",
    );
    assert_eq!(inv.column, 28, "points at the name");
    assert!(matches!(inv.kind, ErrorKind::OffloadsNotMember { .. }));
    fails(
        &with("offloads = \"sometimes\""),
        4,
        Some("offloads"),
        "use true or false",
    );
    let inv = fails(
        &format!("{HEAD}[offloads]\neth2 = \"maybe\"\n"),
        5,
        Some("offloads"),
        "use true or false",
    );
    assert_eq!(inv.column, 1, "points at the member's line");
    fails(
        &with("offloads = [\"eth1\"]"),
        4,
        Some("offloads"),
        "expected true or false, or a table of members such as { eth2 = false }, found array; write e.g. offloads = false",
    );
}

#[test]
fn primary_and_backup_adapter() {
    let ab = "name = \"bond0\"\nmode = \"active-backup\"\nmembers = [\"eth1\", \"eth2\"]\n";
    let inv = fails(
        &format!("{ab}primary = \"eth3\"\n"),
        4,
        Some("primary"),
        "use one of eth1, eth2, or add it to members",
    );
    assert!(matches!(inv.kind, ErrorKind::PrimaryNotMember { .. }));
    fails(
        &format!("{ab}backup_adapter = \"eth2\"\n"),
        4,
        Some("backup_adapter"),
        "remove it from members or drop backup_adapter",
    );
    fails(
        &format!("{ab}backup_adapter = \"bond0\"\n"),
        4,
        Some("backup_adapter"),
        "is the bond itself",
    );
}

#[test]
fn arp_monitoring_rules() {
    let inv = fails(
        &format!("{HEAD}miimon = 100\narp_interval = 1000\narp_ip_target = [\"192.0.2.1\"]\n"),
        5,
        Some("arp_interval"),
        "Linux refuses ARP monitoring in 802.3ad mode; set arp_interval = 0",
    );
    assert_eq!(inv.kind, ErrorKind::ArpNotAllowed { mode: Mode::Lacp });
    for mode in ["balance-tlb", "balance-alb"] {
        fails(
            &format!("name = \"b\"\nmode = \"{mode}\"\nmembers = [\"e1\"]\narp_interval = 10\n"),
            4,
            Some("arp_interval"),
            "Linux refuses ARP monitoring",
        );
    }
    fails(
        "name = \"b\"\nmode = \"active-backup\"\nmembers = [\"e1\"]\narp_interval = 100\n",
        4,
        Some("arp_interval"),
        "add arp_ip_target = [\"192.0.2.1\"] (or netaddr), or set arp_interval = 0",
    );
}

#[test]
fn pagp_runs_only_in_the_static_modes() {
    let inv = fails(
        &with("pagp = \"desirable\""),
        4,
        Some("pagp"),
        "802.3ad runs LACP, not PAgP",
    );
    assert_eq!(inv.kind, ErrorKind::PagpNotAllowed { mode: Mode::Lacp });
    for mode in [
        "balance-rr",
        "broadcast",
        "balance-tlb",
        "balance-alb",
        "adaptive",
    ] {
        fails(
            &format!("name = \"b\"\nmode = \"{mode}\"\nmembers = [\"e1\"]\npagp = \"auto\"\n"),
            4,
            Some("pagp"),
            "PAgP runs only in the static modes balance-xor (AIX standard) and active-backup",
        );
    }
    fails(
        "name = \"b\"\nmode = \"standard\"\nmembers = [\"e1\"]\npagp = \"sometimes\"\n",
        4,
        Some("pagp"),
        "use one of off, desirable, auto",
    );
    for mode in ["balance-xor", "standard", "active-backup"] {
        let text =
            format!("name = \"b\"\nmode = \"{mode}\"\nmembers = [\"e1\"]\npagp = \"auto\"\n");
        assert!(parse_str(&text, "bond.toml").is_ok(), "{mode}");
    }
    // `off` is no PAgP, so any mode may say it.
    assert!(parse_str(&with("pagp = \"off\""), "bond.toml").is_ok());
}

#[test]
fn hash_rules() {
    fails(
        "name = \"b\"\nmode = \"adaptive\"\nmembers = [\"e1\"]\nxmit_hash_policy = \"layer3+4\"\n",
        4,
        Some("xmit_hash_policy"),
        "use xmit_hash_policy = \"strong\"",
    );
    let inv = fails(
        &with("xmit_hash_policy = \"strong:seed=5\"\nhash_seed = 6"),
        5,
        Some("hash_seed"),
        "give the seed in one place",
    );
    assert_eq!(
        inv.kind,
        ErrorKind::SeedConflict {
            in_policy: 5,
            hash_seed: 6
        }
    );
    fails(
        &with("xmit_hash_policy = \"strong:symmetric\"\nhash_symmetric = false"),
        5,
        Some("hash_symmetric"),
        "keep one of them",
    );
}

#[test]
fn lacp_and_aix_cross_checks() {
    fails(
        &with("min_links = 3\nmax_bundle = 2"),
        4,
        Some("min_links"),
        "lower min_links or raise max_bundle",
    );
    let inv = fails(
        &with("address = \"10.0.0.5/24\"\nnetaddr = \"10.0.0.5\""),
        5,
        Some("netaddr"),
        "put a host that answers, such as the gateway, in netaddr",
    );
    assert!(matches!(inv.kind, ErrorKind::NetaddrIsOwn { .. }));
}

/// `/dev/zero`, a sparse file of gigabytes or any file past 1 MiB is
/// refused at once, naming the file, the limit and what to do.
#[test]
fn files_past_the_limit_are_refused_at_once() {
    let t = std::time::Instant::now();
    let e = lagkit_bondcfg::parse_file("/dev/zero").unwrap_err();
    assert!(matches!(e, ConfigError::TooLarge(_)), "{e}");
    assert_eq!(
        e.to_string(),
        "/dev/zero: larger than 1 MiB, the most lagkit reads as a bond configuration: is it the right file? \
         a bond configuration is a few KiB: check the path, or split the bonds over several files"
    );
    assert_eq!(e.line(), None);
    let dir = std::env::temp_dir().join(format!("lk-bondcfg-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sparse = dir.join("bond.toml");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let e = lagkit_bondcfg::parse_file(&sparse).unwrap_err();
    assert!(matches!(e, ConfigError::TooLarge(_)), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        t.elapsed() < std::time::Duration::from_secs(2),
        "{:?}",
        t.elapsed()
    );
    // The same limit for text read by others (`lagkit check`).
    let text = format!("name = \"bond0\"\n#{}\n", "x".repeat(1 << 20));
    let e = lagkit_bondcfg::parse_str(&text, "big.toml").unwrap_err();
    assert!(
        e.to_string().starts_with("big.toml: larger than 1 MiB"),
        "{e}"
    );
}

#[test]
fn read_errors_name_the_path() {
    let e = lagkit_bondcfg::parse_file("/nonexistent/lagkit/bond.toml").unwrap_err();
    assert!(matches!(e, ConfigError::Read { .. }));
    assert_eq!(e.line(), None);
    let msg = e.to_string();
    assert!(
        msg.starts_with("/nonexistent/lagkit/bond.toml: cannot read the config file"),
        "{msg}"
    );
    assert!(msg.contains("check the path"));
}

/// Half a MiB: a pasted file, a runaway string (a file past 1 MiB is
/// refused whole, see `files_past_the_limit_are_refused_at_once`).
const HUGE: usize = 512 * 1024;

/// The first 80 characters of `c` repeated, cut and counted as errors show them.
fn cut(c: char, len: usize) -> String {
    format!("'{}…' ({len} characters)", c.to_string().repeat(80))
}

/// `text` is refused on `line` for `key`, quoting the value as `shown`,
/// in a message of a few hundred bytes.
#[track_caller]
fn cut_in_message(text: &str, line: usize, key: Option<&str>, shown: &str) {
    let e = parse_str(text, "bond.toml").expect_err("refused");
    let msg = e.to_string();
    assert_eq!(e.line(), Some(line), "{msg}");
    assert_eq!(e.key().map(str::len), key.map(str::len));
    assert!(msg.contains(shown), "{shown} missing in {msg}");
    assert!(msg.len() < 600, "{} bytes: {}", msg.len(), &msg[..600]);
}

#[test]
fn a_huge_value_is_cut_to_80_characters_and_its_length() {
    let a = "a".repeat(HUGE);
    let (ca, c9) = (cut('a', HUGE), cut('9', HUGE));
    let nines = "9".repeat(HUGE);
    let value = |key: &str, v: &str| with(&format!("{key} = \"{v}\""));
    cut_in_message(&value("lacp_rate", &a), 4, Some("lacp_rate"), &ca);
    cut_in_message(&value("miimon", &a), 4, Some("miimon"), &ca);
    cut_in_message(&value("miimon", &nines), 4, Some("miimon"), &c9);
    cut_in_message(&value("hash_symmetric", &a), 4, Some("hash_symmetric"), &ca);
    cut_in_message(&value("address", &a), 4, Some("address"), &ca);
    cut_in_message(&value("primary", &a), 4, Some("primary"), &ca);
    let targets = with(&format!("arp_ip_target = [\"{a}\"]"));
    cut_in_message(&targets, 4, Some("arp_ip_target"), &ca);
    let socket = value("control_socket", &format!("/{a}"));
    let shown = format!("'/{}…' ({} characters)", "a".repeat(79), HUGE + 1);
    cut_in_message(&socket, 4, Some("control_socket"), &shown);
    // An unknown key, a member and a bond name (as `name` and as a table).
    cut_in_message(&with(&format!("{a} = 1")), 4, Some(&a), &ca);
    let member = format!("name = \"bond0\"\nmode = 4\nmembers = [\"{a}\"]\n");
    cut_in_message(&member, 3, Some("members"), &ca);
    let name = format!("name = \"{a}\"\nmode = 4\nmembers = [\"eth1\"]\n");
    cut_in_message(&name, 1, Some("name"), &ca);
    let table = format!("[{a}]\nmode = 4\nmembers = [\"eth1\"]\n[b1]\nmembers = [\"eth2\"]\n");
    cut_in_message(&table, 1, None, &ca);
    // The policy parser (lagkit-hash) keeps its double quotes.
    let e = parse_str(&with(&format!("xmit_hash_policy = \"{a}\"")), "bond.toml").unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains(&format!("\"{}…\" ({HUGE} characters)", "a".repeat(80))),
        "{msg}"
    );
    assert!(msg.len() < 1000, "{}", msg.len());
    // Characters, not bytes: 80 'é' are shown whole, 81 are cut.
    let e80 = "é".repeat(80);
    fails(
        &with(&format!("lacp_rate = \"{e80}\"")),
        4,
        Some("lacp_rate"),
        &format!("'{e80}';"),
    );
    fails(
        &with(&format!("lacp_rate = \"{e80}é\"")),
        4,
        Some("lacp_rate"),
        &format!("'{e80}…' (81 characters);"),
    );
}

/// Writes `bytes` to a file of its own and parses it.
fn parse_bytes(name: &str, bytes: &[u8]) -> (String, ConfigError) {
    let dir = std::env::temp_dir().join(format!("lagkit-bondcfg-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let e = lagkit_bondcfg::parse_file(&path).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    (path.display().to_string(), e)
}

#[test]
fn a_binary_file_is_not_a_text_file() {
    // Not UTF-8 (a gzip header), on line 2.
    let (path, e) = parse_bytes("gz.toml", b"name = \"bond0\"\n\x1f\x8b\x08\x00");
    assert_eq!(
        e.to_string(),
        format!(
            "{path}:2:2: not a text file (byte 16 is 0x8b); a bond config is TOML text: check \
             that the path names the config file, not a binary or compressed one"
        )
    );
    assert_eq!(
        e.kind(),
        Some(&ErrorKind::NotText {
            offset: 16,
            byte: 0x8b
        })
    );
    assert!(!e.to_string().contains("UTF"), "{e}");
    // Valid UTF-8 with a NUL (an ELF header): the NUL is the first bad byte,
    // also when invalid UTF-8 follows.
    let (path, e) = parse_bytes("elf.toml", b"\x7fELF\x02\x01\x01\x00\x00\xff");
    assert!(
        e.to_string()
            .starts_with(&format!("{path}:1:8: not a text file (byte 7 is 0x00)")),
        "{e}"
    );
    // parse_str (text already in memory) says the same of a NUL.
    let inv = fails(
        &with("miimon = \"1\0\""),
        4,
        None,
        "not a text file (byte 70 is 0x00)",
    );
    assert_eq!(inv.column, 12);
    // An empty or all-text file is not called binary.
    let (_, e) = parse_bytes("empty.toml", b"");
    assert_eq!(e.kind(), Some(&ErrorKind::NoBond));
}

// ---- warnings ----

fn warnings(text: &str) -> Vec<lagkit_bondcfg::Warning> {
    parse_str(text, "bond.toml")
        .unwrap_or_else(|e| panic!("{e}"))
        .1
}

#[test]
fn mode_specific_keys_in_another_mode_warn() {
    let ab = "name = \"bond0\"\nmode = \"active-backup\"\nmembers = [\"eth1\", \"eth2\"]\n";
    let w = warnings(&format!("{ab}lacp_rate = \"fast\"\nxmit_hash_policy = 1\n"));
    assert_eq!(w.len(), 2, "{w:?}");
    assert_eq!((w[0].line, w[0].key.as_str()), (4, "lacp_rate"));
    assert_eq!(
        w[0].kind,
        WarningKind::WrongMode {
            mode: Mode::ActiveBackup,
            used_in: "802.3ad"
        }
    );
    assert_eq!(
        w[0].to_string(),
        "bond.toml:4:1: bond 'bond0': key 'lacp_rate': has no effect in active-backup mode \
         (used in 802.3ad only); remove it or change mode"
    );
    assert_eq!(w[1].key, "xmit_hash_policy");
    let w = warnings(
        &format!("{HEAD}primary = \"eth1\"\nfail_over_mac = 1\npacket_per_slave = 2\n")
            .replace("packet_", "packets_"),
    );
    let keys: Vec<&str> = w.iter().map(|w| w.key.as_str()).collect();
    assert_eq!(keys, ["primary", "fail_over_mac", "packets_per_slave"]);
}

#[test]
fn defaults_warn_only_where_they_do_not_apply() {
    let text = "lacp_rate = \"fast\"\n[bond0]\nmode = 4\nmembers = [\"e1\"]\n[bond1]\nmode = 1\nmembers = [\"e2\"]\n";
    let w = warnings(text);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!((w[0].bond.as_str(), w[0].line), ("bond1", 1));
}

#[test]
fn keys_that_need_another_warn() {
    let ab = "name = \"b\"\nmode = \"active-backup\"\nmembers = [\"e1\"]\n";
    let w = warnings(&format!(
        "{ab}arp_ip_target = [\"192.0.2.1\"]\nnum_retries = 4\nauto_recovery = true\nprimary_reselect = 2\nxmit_hash_policy = \"layer2\"\n"
    ));
    let got: Vec<(usize, &str)> = w.iter().map(|w| (w.line, w.key.as_str())).collect();
    // xmit_hash_policy is mode-specific, not "needs another".
    assert_eq!(
        got,
        [
            (4, "arp_ip_target"),
            (5, "num_retries"),
            (6, "auto_recovery"),
            (7, "primary_reselect"),
            (8, "xmit_hash_policy"),
        ]
    );
    assert_eq!(
        w[0].kind,
        WarningKind::NeedsOther {
            needs: "arp_interval > 0"
        }
    );
    assert!(w[1].to_string().contains("has no effect without netaddr"));
    let w = warnings(&with("xmit_hash_policy = \"layer2\"\nhash_seed = 5"));
    assert_eq!(w.len(), 1);
    assert!(w[0]
        .to_string()
        .contains("without xmit_hash_policy = \"strong\""));
}

#[test]
fn pagp_options_without_pagp_warn() {
    let ab = "name = \"b\"\nmode = \"active-backup\"\nmembers = [\"e1\"]\n";
    let w = warnings(&format!("{ab}pagp_silent = false\npagp_rate = \"fast\"\n"));
    let got: Vec<(usize, &str)> = w.iter().map(|w| (w.line, w.key.as_str())).collect();
    assert_eq!(got, [(4, "pagp_silent"), (5, "pagp_rate")]);
    assert!(
        w[0].to_string()
            .contains("has no effect without pagp = \"desirable\" or \"auto\""),
        "{}",
        w[0]
    );
    let w = warnings(&with("pagp_rate = \"fast\""));
    assert_eq!(
        w[0].kind,
        WarningKind::WrongMode {
            mode: Mode::Lacp,
            used_in: "balance-xor and active-backup"
        }
    );
    assert!(warnings(&format!("{ab}pagp = \"desirable\"\npagp_silent = false\n")).is_empty());
}

#[test]
fn delays_round_down_to_miimon_as_linux_does() {
    let text = with("miimon = 100\nupdelay = 250\ndowndelay = 199");
    let (bonds, w) = parse_str(&text, "bond.toml").unwrap();
    assert_eq!((bonds[0].updelay, bonds[0].downdelay), (200, 100));
    assert_eq!(w.len(), 2);
    assert_eq!((w[0].line, w[0].key.as_str()), (5, "updelay"));
    assert_eq!(
        w[0].kind,
        WarningKind::Rounded {
            from: 250,
            to: 200,
            miimon: 100
        }
    );
    assert!(w[0]
        .to_string()
        .contains("rounded down to 200 ms as Linux does"));
    // Without polling the delays are kept to the millisecond.
    let (bonds, w) = parse_str(&with("updelay = 250"), "bond.toml").unwrap();
    assert_eq!(bonds[0].updelay, 250);
    assert!(w.is_empty());
}

#[test]
fn other_warnings() {
    let ab = "name = \"b\"\nmode = \"active-backup\"\nmembers = [\"e1\"]\n";
    let w = warnings(&format!(
        "{ab}miimon = 100\narp_interval = 100\narp_ip_target = \"192.0.2.1\"\n"
    ));
    assert_eq!(w.len(), 1);
    assert_eq!((w[0].line, &w[0].kind), (5, &WarningKind::BothMonitors));
    let w = warnings(&with("min_links = 3"));
    assert_eq!(
        w[0].kind,
        WarningKind::MinLinksAboveMembers {
            min_links: 3,
            members: 2
        }
    );
    let (bonds, w) =
        parse_str(&with("use_jumbo_frame = \"yes\"\nmtu = 1500"), "bond.toml").unwrap();
    assert_eq!(bonds[0].mtu, 1500);
    assert_eq!(
        (w[0].line, &w[0].kind),
        (
            5,
            &WarningKind::MtuOverridesJumbo {
                mtu: 1500,
                jumbo: true
            }
        )
    );
    let (bonds, w) =
        parse_str(&with("use_jumbo_frame = \"yes\"\nmtu = 9000"), "bond.toml").unwrap();
    assert_eq!(bonds[0].mtu, 9000);
    assert!(w.is_empty());
}

/// balance-tlb/alb move flows by load with `strong` unless
/// `tlb_dynamic_lb = false`, as Linux ignores `xmit_hash_policy` there:
/// a policy written for them says so at load, naming what runs instead.
#[test]
fn a_tlb_policy_that_does_not_run_warns_and_names_the_fix() {
    for mode in ["balance-tlb", "balance-alb"] {
        let head = format!("name = \"b\"\nmode = \"{mode}\"\nmembers = [\"e1\", \"e2\"]\n");
        let w = warnings(&format!("{head}xmit_hash_policy = \"layer3+4\"\n"));
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!((w[0].line, w[0].key.as_str()), (4, "xmit_hash_policy"));
        assert_eq!(
            w[0].kind,
            WarningKind::PolicyNotUsed {
                mode: mode.parse().unwrap(),
                policy: "layer3+4".into()
            }
        );
        let text = w[0].to_string();
        assert!(
            text.contains(&format!(
                "layer3+4 is not used in {mode} while tlb_dynamic_lb = true"
            )) && text.contains("flows hash with strong")
                && text.contains("set tlb_dynamic_lb = false to hash by layer3+4"),
            "{text}"
        );
        // Honoured with tlb_dynamic_lb = false; strong needs no note.
        let off = format!("{head}xmit_hash_policy = \"layer3+4\"\ntlb_dynamic_lb = false\n");
        assert_eq!(warnings(&off), [], "{mode}");
        assert_eq!(
            warnings(&format!("{head}xmit_hash_policy = \"strong\"\n")),
            []
        );
        assert_eq!(warnings(&head), []);
    }
}

#[test]
fn metrics_listen_needs_an_address_and_a_port() {
    for v in [
        "\"localhost:9100\"",
        "\"127.0.0.1\"",
        "\"127.0.0.1:0\"",
        "\"[::1]\"",
    ] {
        fails(
            &format!("name = \"b\"\nmode = 4\nmembers = [\"e1\"]\nmetrics_listen = {v}\n"),
            4,
            Some("metrics_listen"),
            "is not an address and port; write ADDRESS:PORT",
        );
    }
}
