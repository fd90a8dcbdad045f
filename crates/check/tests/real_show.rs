//! Real switches' show output (tests/show/README.md says whose) held
//! against host bonds: the facing channel chosen by system and key, each
//! switch port matched to a host member and each member to a port, and
//! what cannot be told apart said, not guessed.
//!
//! The host sides are realistic edits of real kernels' files
//! (tests/proc/): `csr_host` and the others below say what was changed.

use lagkit_check::facts::{read, End};
use lagkit_check::rules::{check, run};
use lagkit_check::{Finding, Severity};

const MAGPIE: &str = include_str!("proc/802.3ad-charm-magpie.txt");
const MEMBER_DOWN: &str = include_str!("proc/802.3ad-member-down-insights-core.txt");
const XOR: &str = include_str!("proc/balance-xor-insights-core.txt");
const CSR_INTERNAL: &str = include_str!("show/genie-iosxe-csr1000v-2-lacp-internal.txt");
const CSR_NEIGHBOR: &str = include_str!("show/genie-iosxe-csr1000v-2-lacp-neighbor.txt");
const CSR_SYS_ID: &str = include_str!("show/genie-iosxe-csr1000v-2-lacp-sys-id.txt");
const STACK_SUMMARY: &str = include_str!("show/genie-iosxe-stack-etherchannel-summary.txt");
const NO_PORTS: &str = include_str!("show/genie-ios-csr1000v-1-etherchannel-summary-no-ports.txt");
const NEIGHBOR_DETAIL: &str = include_str!("show/genie-ios-lacp-neighbor-detail.txt");
const LLDP: &str = include_str!("show/genie-iosxe-lldp-neighbors.txt");
const NTC_SUMMARY: &str = include_str!("show/ntc-ios-etherchannel-summary.raw");

fn with<'a>(f: &'a [Finding], code: &str) -> Vec<&'a Finding> {
    f.iter().filter(|x| x.code == code).collect()
}

/// csr1000v-2's session: `show lacp internal`, `show lacp neighbor` and
/// `show lacp sys-id`, each byte for byte as Genie's tests hold them.
fn csr_session() -> String {
    format!("{CSR_INTERNAL}\n{CSR_NEIGHBOR}\n{CSR_SYS_ID}")
}

/// charm-magpie's bond (two 10G members, ports 1 and 2) moved to face
/// csr1000v-2: its system MAC made the one csr1000v-2 hears
/// (001e.49ff.a3e6), its partner csr1000v-2's system (sys-id
/// 001e.49ff.3caf, priority 32768) with that switch's key and port
/// number 1 (the CSR numbers every port 1), and its own key `key`
/// (`None`: the key lines removed, as some tools' copies lack them).
fn csr_host(key: Option<u16>, partner_key: Option<u16>) -> String {
    let mut t = MAGPIE
        .replace("82:23:80:a1:a9:d3", "00:1e:49:ff:a3:e6")
        .replace("02:01:00:00:01:01", "00:1e:49:ff:3c:af")
        .replace("    system priority: 65534", "    system priority: 32768")
        .replace("    port number: 1012", "    port number: 1")
        .replace("    port number: 12", "    port number: 1");
    t = match key {
        Some(k) => t
            .replace("Actor Key: 15", &format!("Actor Key: {k}"))
            .replace("port key: 15", &format!("port key: {k}")),
        None => drop_lines(&t, &["Actor Key:", "port key:"]),
    };
    match partner_key {
        Some(k) => t
            .replace("Partner Key: 201", &format!("Partner Key: {k}"))
            .replace("oper key: 201", &format!("oper key: {k}")),
        None => drop_lines(&t, &["Partner Key:", "oper key:"]),
    }
}

fn drop_lines(t: &str, starts: &[&str]) -> String {
    t.lines()
        .filter(|l| !starts.iter().any(|s| l.trim_start().starts_with(s)))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn pair(show: &str, host: &str, channel: Option<u32>) -> Vec<Finding> {
    let s = read("show.txt", show).unwrap();
    assert!(matches!(s, End::Show(_)), "{s:?}");
    check(&[s, read("bond0", host).unwrap()], channel)
}

/// The real output reads: two channels, five members, every one with its
/// own LACP row and its partner's.
#[test]
fn csr1000v_session_reads_whole() {
    let End::Show(s) = read("show.txt", &csr_session()).unwrap() else {
        panic!()
    };
    assert_eq!(s.hostname.as_deref(), Some("csr1000v-2"));
    assert_eq!(s.channels.len(), 2);
    let members: Vec<usize> = s.channels.iter().map(|c| c.members.len()).collect();
    assert_eq!(members, [2, 3]);
    for m in s.channels.iter().flat_map(|c| c.members.iter()) {
        assert!(m.local.is_some() && m.partner.is_some(), "{m:?}");
    }
    assert!(!s.unread.iter().any(|u| u.is_warning()), "{:?}", s.unread);
}

/// Both channels hear the same system (001e.49ff.a3e6); the key decides
/// which one the bond's aggregator is. Before, the first channel was
/// taken, and a bond of key 2 was reported as cabled to the wrong one.
#[test]
fn two_channels_hearing_one_system_are_told_apart_by_key() {
    for (key, channel, other) in [(2, "channel 2", "channel 1"), (1, "channel 1", "channel 2")] {
        let f = pair(&csr_session(), &csr_host(Some(key), Some(key)), None);
        assert!(
            with(&f, "partner-key-mismatch").is_empty(),
            "key {key}: {f:#?}"
        );
        assert!(
            with(&f, "show-channel-ambiguous").is_empty(),
            "key {key}: {f:#?}"
        );
        assert!(
            f.iter()
                .any(|x| x.reason.contains(&format!("csr1000v-2 {channel}"))),
            "key {key}: {f:#?}"
        );
        assert!(
            !f.iter()
                .any(|x| x.reason.contains(&format!("csr1000v-2 {other}"))),
            "key {key}: {f:#?}"
        );
    }
    // The switch's key as the host hears it decides as well.
    let f = pair(&csr_session(), &csr_host(None, Some(2)), None);
    assert!(with(&f, "show-channel-ambiguous").is_empty(), "{f:#?}");
    assert!(
        f.iter().any(|x| x.reason.contains("csr1000v-2 channel 2")),
        "{f:#?}"
    );
}

/// No key to tell the two channels apart, or keys neither has: said, and
/// the bond is compared with neither.
#[test]
fn an_ambiguous_channel_is_said_not_guessed() {
    let f = pair(&csr_session(), &csr_host(None, None), None);
    let m = with(&f, "show-channel-ambiguous");
    assert_eq!(m.len(), 1, "{f:#?}");
    assert_eq!(m[0].severity, Severity::Warning);
    assert!(
        m[0].reason.contains("channels 1 and 2 both hear bond bond0's system, and the bond's file gives no key to tell them apart"),
        "{}",
        m[0]
    );
    assert!(
        m[0].fix.contains("--channel N (one of 1 and 2)"),
        "{}",
        m[0]
    );
    // Nothing compared against either channel.
    assert!(
        !f.iter().any(|x| x.reason.contains("csr1000v-2 channel")),
        "{f:#?}"
    );
    let f = pair(&csr_session(), &csr_host(Some(9), Some(9)), None);
    let m = with(&f, "show-channel-ambiguous");
    assert_eq!(m.len(), 1, "{f:#?}");
    assert!(
        m[0].reason
            .contains("neither with the bond's keys (its own 0x9, its partner's 0x9)"),
        "{}",
        m[0]
    );
    // --channel decides.
    let f = pair(&csr_session(), &csr_host(None, None), Some(2));
    assert!(with(&f, "show-channel-ambiguous").is_empty(), "{f:#?}");
    // A channel the output does not show is an error, not a silent pass.
    let f = pair(&csr_session(), &csr_host(None, None), Some(7));
    assert_eq!(with(&f, "no-such-channel").len(), 1, "{f:#?}");
}

/// The CSR numbers all its ports 1, and its partner too: each port of
/// channel 2 hears port 1, so which member each faces cannot be told.
#[test]
fn repeated_port_numbers_make_a_match_ambiguous_not_a_guess() {
    let f = pair(&csr_session(), &csr_host(Some(2), Some(2)), None);
    let m = with(&f, "member-match-ambiguous");
    assert_eq!(m.len(), 3, "{f:#?}");
    assert!(
        m[0].reason.contains("csr1000v-2 channel 2: lagkit cannot tell which member of bond bond0 GigabitEthernet4 faces: it could be eno1 (port 2), eno3 (port 1)"),
        "{}",
        m[0]
    );
    // And no finding built on a guessed match.
    for code in [
        "member-one-end",
        "member-bundled-one-end",
        "member-up-one-end",
    ] {
        assert!(with(&f, code).is_empty(), "{code}: {f:#?}");
    }
}

/// charm-magpie's bond with one member's link down (eno1: `MII Status:
/// down`, speed and duplex unknown, a link failure counted).
fn magpie_eno1_down() -> String {
    MAGPIE.replacen(
        "Slave Interface: eno1\nMII Status: up\nSpeed: 10000 Mbps\nDuplex: full\nLink Failure Count: 0",
        "Slave Interface: eno1\nMII Status: down\nSpeed: Unknown\nDuplex: Unknown\nLink Failure Count: 1",
        1,
    )
}

/// A real stack's summary: channel 3 bundles two of six ports and says
/// nothing of partners. Against a bond that uses two members it agrees;
/// against one that uses three, a link is bundled at one end only.
#[test]
fn without_partner_rows_the_bundled_links_are_counted() {
    let f = pair(STACK_SUMMARY, MAGPIE, Some(3));
    assert!(with(&f, "member-count-differs").is_empty(), "{f:#?}");
    let three = MAGPIE.replacen("Number of ports: 2", "Number of ports: 3", 1)
        + &MAGPIE[MAGPIE.find("\nSlave Interface: eno1").unwrap()..]
            .replace("eno1", "eno2")
            .replace("port number: 2\n", "port number: 3\n");
    let f = pair(STACK_SUMMARY, &three, Some(3));
    let m = with(&f, "member-count-differs");
    assert_eq!(m.len(), 1, "{f:#?}");
    assert!(
        m[0].reason.contains("channel 3 bundles 2 port(s) (TenGigabitEthernet2/0/1, TenGigabitEthernet3/0/3) but bond bond0 (bond0:3) uses 3 member(s)"),
        "{}",
        m[0]
    );
    assert_eq!(m[0].severity, Severity::Error);
}

/// A real channel with no ports at all, against a bond with two members
/// up and in use: each member is a finding, not a pass.
#[test]
fn a_channel_without_ports_against_a_bond_in_use() {
    let f = pair(NO_PORTS, MAGPIE, None);
    let m = with(&f, "member-one-end");
    assert_eq!(m.len(), 2, "{f:#?}");
    assert_eq!(m[0].severity, Severity::Error);
    assert!(
        m[0].reason.contains("bond bond0 has member eno3 (up and in use, LACP port 1) but csr1000v-1 channel 2 has no port facing it: the channel has no member ports"),
        "{}",
        m[0]
    );
}

/// A real `show lacp neighbor detail` (Router, two ports hearing system
/// 127,6487.88ff.68ef on its ports 2 and 1) against insights-core's bond
/// with one member down, moved to be that system: enp0s9 (port 1) up,
/// enp0s8 (port 2) down. The switch hears port 2 collecting and
/// distributing (0x3F) while the host says its link is down.
#[test]
fn a_switch_port_up_whose_host_member_is_down() {
    let host = MEMBER_DOWN
        .replace("08:00:27:99:a3:6b", "64:87:88:ff:68:ef")
        .replace(
            "system priority: 65535\n    system mac address: 64:87:88",
            "system priority: 127\n    system mac address: 64:87:88",
        )
        .replace("Actor Key: 9", "Actor Key: 1")
        .replace("port key: 9", "port key: 1")
        .replace("port key: 0", "port key: 1");
    let f = pair(NEIGHBOR_DETAIL, &host, None);
    let m = with(&f, "member-up-one-end");
    assert_eq!(m.len(), 1, "{f:#?}");
    assert!(
        m[0].reason.contains("Router channel 1 has GigabitEthernet0/0/1 up but bond bond0's enp0s8 at its other end (bond0:50, matched by the LACP port number the switch hears) is down (MII Status: down)"),
        "{}",
        m[0]
    );
    // enp0s9 faces Gi0/0/7: no finding for that link's ends.
    assert!(
        !f.iter()
            .any(|x| x.reason.contains("GigabitEthernet0/0/7 up")),
        "{f:#?}"
    );
}

/// Real LLDP rows name each switch port's neighbour by its port ID (here
/// MACs): with them, a bundled port whose host member is down is found
/// though no LACP row says which member it faces. The summary is
/// lagkit's; the LLDP table and the host's bond are real (the bond's
/// members given the permanent MACs those rows name).
#[test]
fn lldp_matches_ports_when_lacp_cannot() {
    let summary = "switch#show etherchannel summary\nGroup  Port-channel  Protocol    Ports\n------+-------------+-----------+-----------------------------------------------\n1      Po1(SU)         LACP      Gi1/0/31(P) Gi1/0/44(P)\n";
    let show = format!("{LLDP}\n{summary}");
    let host = magpie_eno1_down()
        .replace("3c:ec:ef:19:eb:30", "fc:a8:41:ff:f3:7c")
        .replace("3c:ec:ef:19:eb:2e", "70:38:ee:ff:50:a4");
    let f = pair(&show, &host, None);
    let m = with(&f, "member-up-one-end");
    assert_eq!(m.len(), 1, "{f:#?}");
    assert!(
        m[0].reason.contains("switch channel 1 has GigabitEthernet1/0/44 bundled (P) but bond bond0's eno1 at its other end (bond0:50, matched by LLDP) is down (MII Status: down, 1 link failures)"),
        "{}",
        m[0]
    );
    assert_eq!(m[0].severity, Severity::Error);
    // Without the LLDP rows the two ends are only counted.
    let f = pair(summary, &host, None);
    assert!(with(&f, "member-up-one-end").is_empty(), "{f:#?}");
    assert_eq!(with(&f, "member-count-differs").len(), 1, "{f:#?}");
}

/// ntc-templates' summary of six channels reads without a warned line,
/// and a bond facing none of them is not checked against a guess.
#[test]
fn ntc_templates_summary_reads_and_no_channel_is_guessed() {
    let End::Show(s) = read("show.txt", NTC_SUMMARY).unwrap() else {
        panic!()
    };
    let n: Vec<(u32, usize)> = s
        .channels
        .iter()
        .map(|c| (c.number, c.members.len()))
        .collect();
    assert_eq!(n, [(1, 4), (3, 2), (7, 2), (13, 1), (14, 1), (51, 2)]);
    assert!(!s.unread.iter().any(|u| u.is_warning()), "{:?}", s.unread);
    let r = run(&[End::Show(s), read("bond0", MAGPIE).unwrap()], None);
    assert_eq!(
        with(&r.findings, "show-which-channel").len(),
        1,
        "{:#?}",
        r.findings
    );
}

/// The host's LLDP daemon (`lldpctl -f keyvalue`, written here as lldpd
/// prints it) says which stack port each member faces, where the real
/// stack's summary cannot: charm-magpie's eno1, up and in use, faces
/// Te2/0/2, which the stack shows down.
#[test]
fn the_hosts_lldp_matches_members_to_ports() {
    let lldp = "lldp.eno3.via=LLDP\nlldp.eno3.chassis.name=stack1.example.net\nlldp.eno3.port.ifname=Te2/0/1\nlldp.eno1.via=LLDP\nlldp.eno1.chassis.name=stack1.example.net\nlldp.eno1.port.ifname=Te2/0/2\n";
    let ends = [
        read("show.txt", STACK_SUMMARY).unwrap(),
        read("bond0", MAGPIE).unwrap(),
        read("lldp.txt", lldp).unwrap(),
    ];
    assert!(matches!(ends[2], End::Lldp(_)), "{:?}", ends[2]);
    let f = check(&ends, Some(3));
    let m = with(&f, "member-up-one-end");
    assert_eq!(m.len(), 1, "{f:#?}");
    assert_eq!(m[0].severity, Severity::Error);
    assert!(
        m[0].reason.contains("channel 3 has TenGigabitEthernet2/0/2 down (D) but bond bond0's eno1 at its other end (bond0:50, matched by LLDP) is up"),
        "{}",
        m[0]
    );
    // Matched, the links are no longer only counted.
    assert!(with(&f, "member-count-differs").is_empty(), "{f:#?}");
    assert!(with(&f, "member-one-end").is_empty(), "{f:#?}");
}

/// A static bond (insights-core's balance-xor file, its eno2's cable
/// pulled: `MII Status: down`) against a `mode on`
/// channel: no LACP to tell which port faces which member, so the host's
/// LLDP daemon does, and the port the switch still bundles while its
/// member is down is found.
#[test]
fn a_static_bond_is_matched_to_a_mode_on_channel_by_lldp() {
    let host = XOR.replacen(
        "Slave Interface: eno2\nMII Status: up",
        "Slave Interface: eno2\nMII Status: down",
        1,
    );
    assert_ne!(host, XOR);
    let summary = "sw1#show etherchannel summary\nGroup  Port-channel  Protocol    Ports\n------+-------------+-----------+-----------------------------------------------\n1      Po1(SU)          -        Gi1/0/1(P)  Gi1/0/2(P)\n";
    let lldp = "lldp.eno1.via=LLDP\nlldp.eno1.chassis.name=sw1\nlldp.eno1.port.ifname=Gi1/0/1\nlldp.eno2.via=LLDP\nlldp.eno2.chassis.name=sw1\nlldp.eno2.port.ifname=Gi1/0/2\n";
    let ends = [
        read("show.txt", summary).unwrap(),
        read("bond0", &host).unwrap(),
        read("lldp.txt", lldp).unwrap(),
    ];
    let f = check(&ends, Some(1));
    let m = with(&f, "member-up-one-end");
    assert_eq!(m.len(), 1, "{f:#?}");
    assert!(m[0].reason.contains("GigabitEthernet1/0/2"), "{}", m[0]);
    assert!(m[0].reason.contains("eno2"), "{}", m[0]);
    assert!(m[0].reason.contains("matched by LLDP"), "{}", m[0]);
    // Both up: nothing to say of the links.
    let ends = [
        read("show.txt", summary).unwrap(),
        read("bond0", XOR).unwrap(),
        read("lldp.txt", lldp).unwrap(),
    ];
    let f = check(&ends, Some(1));
    assert!(with(&f, "member-up-one-end").is_empty(), "{f:#?}");
    assert!(with(&f, "member-one-end").is_empty(), "{f:#?}");
}
