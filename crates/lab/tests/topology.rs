//! Topology files: the example parses as described, and every mistake is
//! reported at its line (and column) with a fix.

use lagkit_lab::topology::{lab_name_of, ns_of_lab, LoadBalance, Protocol, Rate, SwitchKind};
use lagkit_lab::{Topology, TopologyError};
use std::path::Path;

const EXAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/lab/two-hosts-ovs.toml"
);

fn parse(text: &str) -> Result<Topology, TopologyError> {
    Topology::parse(text, "t.toml", "t")
}

fn err(text: &str) -> TopologyError {
    match parse(text) {
        Ok(t) => panic!("accepted: {t:#?}"),
        Err(e) => e,
    }
}

/// A valid base: two hosts with 2-link LACP bonds and a switch (of the
/// default kind, lagkit's).
const BASE: &str = r#"name = "t"
[[host]]
name = "h1"
address = "10.0.0.1/24"
bond = { mode = "802.3ad", lacp_rate = "fast" }

[[host]]
name = "h2"
address = "10.0.0.2/24"
bond = { mode = "802.3ad" }

[[switch]]
name = "sw"

[[switch.channel]]
name = "po1"
host = "h1"
protocol = "lacp-active"

[[link]]
between = ["h1", "sw"]
count = 2
rate = "100mbit"

[[link]]
between = ["h2", "sw"]
count = 2
"#;

#[test]
fn the_example_parses_as_described() {
    let t = Topology::load(Path::new(EXAMPLE)).unwrap();
    assert_eq!(t.name, "two-hosts-ovs");
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    assert_eq!(t.scale.as_ref().unwrap().factor, Some(10.0));
    assert_eq!(t.hosts.len(), 2);
    assert_eq!(t.links.len(), 4);
    let h1 = t.host("h1").unwrap();
    assert_eq!(h1.ifaces, ["e1", "e2"]);
    let b = h1.bond.as_ref().unwrap();
    assert_eq!(b.name, "bond0");
    assert_eq!(b.mode, "802.3ad");
    assert_eq!(b.hash, "layer3+4");
    assert_eq!(b.members, ["e1", "e2"]);
    assert!(b.toml.contains("10.0.0.1/24"), "{}", b.toml);
    let sw = &t.switches[0];
    assert_eq!(sw.ports, ["p1", "p2", "p3", "p4"]);
    assert_eq!(sw.channels[0].ports, ["p1", "p2"]);
    assert_eq!(sw.channels[1].ports, ["p3", "p4"]);
    assert_eq!(sw.channels[1].protocol, Protocol::LacpActive);
    assert_eq!(sw.channels[1].load_balance, LoadBalance::L4);
    assert_eq!(t.links[2].a.node, "h2");
    assert_eq!(t.links[2].a.iface, "e1");
    assert_eq!(t.links[2].b.iface, "p3");
    assert!(t.links.iter().all(|l| l.overhead && l.mtu == [1500, 1500]));
    assert_eq!(t.links[0].rate.as_ref().unwrap().bits, 100_000_000);
    assert_eq!(t.ns("h1"), "lklab-two-hosts-ovs-h1");
    assert!(t.workload.is_some());
}

#[test]
fn base_is_valid_and_defaults_apply() {
    let t = parse(BASE).unwrap();
    assert_eq!(t.links.len(), 4);
    assert!(t.links[2].rate.is_none(), "unshaped without rate");
    assert_eq!(t.switches[0].channels[0].load_balance, LoadBalance::L4);
    assert!(t.workload.is_none());
}

#[test]
fn unknown_key_is_reported_at_its_line() {
    let e = err(&BASE.replace("count = 2\nrate", "count = 2\nspeed = \"1g\"\nrate"));
    assert_eq!(e.line, 23, "{e}");
    assert!(e.message.contains("speed"), "{e}");
    assert!(e.to_string().starts_with("t.toml:23:1: "), "{e}");
}

#[test]
fn bad_rate_names_line_and_column() {
    let e = err(&BASE.replace("\"100mbit\"", "\"100mbps\""));
    assert_eq!((e.line, e.column), (23, 8), "{e}");
    assert!(e.message.contains("bytes per second"), "{e}");
    let e = err(&BASE.replace("\"100mbit\"", "\"fast\""));
    assert_eq!(e.line, 23, "{e}");
    assert_eq!(Rate::parse("2.5gbit").unwrap().bits, 2_500_000_000);
    // The spellings every lagkit flag reads, written back as tc reads them.
    assert_eq!(Rate::parse("1g").unwrap().text, "1gbit");
    assert_eq!(Rate::parse("100M").unwrap().text, "100mbit");
    assert_eq!(Rate::parse("2.5g").unwrap().text, "2500mbit");
    assert!(Rate::parse("1bit").is_err());
}

#[test]
fn channel_to_an_unlinked_host_is_refused() {
    let e = err(&BASE.replace("host = \"h1\"", "host = \"h3\""));
    assert_eq!(e.line, 17, "{e}");
    assert!(e.message.contains("no link to 'h3'"), "{e}");
}

#[test]
fn ovs_cannot_hash_on_l3_nor_balance_tcp_without_lacp() {
    let base = BASE.replace("name = \"sw\"", "name = \"sw\"\nkind = \"ovs\"");
    let e = err(&base.replace(
        "protocol = \"lacp-active\"",
        "protocol = \"lacp-active\"\nload_balance = \"l3\"",
    ));
    assert_eq!(e.line, 20, "{e}");
    assert!(e.message.contains("l4 or l2"), "{e}");
    let e = err(&base.replace("protocol = \"lacp-active\"", "protocol = \"static\""));
    assert_eq!(e.line, 19, "{e}");
    assert!(
        e.message.contains("balance-tcp needs negotiated LACP"),
        "{e}"
    );
    // static with L2 is fine (with a warning: the hosts run LACP).
    let t = parse(&base.replace(
        "protocol = \"lacp-active\"",
        "protocol = \"static\"\nload_balance = \"l2\"",
    ))
    .unwrap();
    assert!(
        t.warnings.iter().any(|w| w.contains("will not agree")),
        "{:?}",
        t.warnings
    );
}

#[test]
fn lagkit_switch_hashes_every_way_with_one_method_per_switch() {
    // The default kind; L3 and a static L4 channel are Catalyst methods.
    let t = parse(&BASE.replace(
        "protocol = \"lacp-active\"",
        "protocol = \"static\"\nload_balance = \"l3\"",
    ))
    .unwrap();
    let sw = &t.switches[0];
    assert_eq!(sw.kind, SwitchKind::Lagkit);
    assert_eq!(
        sw.load_balance().map(|l| l.cisco_method()),
        Some("src-dst-ip")
    );
    assert_eq!(LoadBalance::L4.cisco_method(), "src-dst-port");
    assert_eq!(sw.channel_numbers(), [1]);
    // Two channels, two methods: a Catalyst has one.
    let two = format!(
        "{BASE}\n[[switch.channel]]\nname = \"po2\"\nhost = \"h2\"\nprotocol = \"lacp-active\"\nload_balance = \"l2\"\n"
    );
    let e = err(&two);
    assert_eq!(e.line, 33, "{e}");
    assert!(e.message.contains("one `port-channel load-balance`"), "{e}");
    let t = parse(&two.replace("\"l2\"", "\"l4\"")).unwrap();
    assert_eq!(t.switches[0].channel_numbers(), [1, 2]);
    let t = parse(
        &two.replace("\"l2\"", "\"l4\"")
            .replace("\"po2\"", "\"uplink\""),
    )
    .unwrap();
    assert_eq!(
        t.switches[0].channel_numbers(),
        [1, 2],
        "not all poN: in order"
    );
}

#[test]
fn bond_errors_point_into_the_bond_table() {
    // Inline table: the line of the bond.
    let e = err(&BASE.replace("mode = \"802.3ad\" }", "mode = \"balance-foo\" }"));
    assert_eq!(e.line, 10, "{e}");
    assert!(e.message.contains("host 'h2' bond: key 'mode'"), "{e}");
    assert!(e.message.contains("unknown mode"), "{e}");
    // A [host.bond] table: the line of the key.
    let text = BASE.replace(
        "bond = { mode = \"802.3ad\" }\n",
        "[host.bond]\nmode = \"802.3ad\"\nlacp_rate = \"sometimes\"\n",
    );
    let e = err(&text);
    assert_eq!(e.line, 12, "{e}");
    assert!(e.message.contains("lacp_rate"), "{e}");
    // Members must be the host's links.
    let e = err(&BASE.replace(
        "mode = \"802.3ad\" }",
        "mode = \"802.3ad\", members = [\"e1\", \"eth9\"] }",
    ));
    assert_eq!(e.line, 10, "{e}");
    assert!(
        e.message
            .contains("'eth9' is not one of its links (e1, e2)"),
        "{e}"
    );
    // One address, not two.
    let e = err(&BASE.replace(
        "mode = \"802.3ad\" }",
        "mode = \"802.3ad\", address = [\"10.0.0.9/24\"] }",
    ));
    assert!(
        e.message.contains("both for the host and in its bond"),
        "{e}"
    );
}

#[test]
fn structural_mistakes_are_refused_with_lines() {
    let e = err(&BASE.replace("name = \"h2\"", "name = \"h1\""));
    assert_eq!(e.line, 8, "{e}");
    assert!(e.message.contains("defined twice"), "{e}");
    let e = err(&BASE.replace("name = \"h2\"", "name = \"Host-2\""));
    assert_eq!(e.line, 8, "{e}");
    let e = err(&BASE.replace(
        "between = [\"h2\", \"sw\"]",
        "between = [\"h2\", \"nowhere\"]",
    ));
    assert_eq!((e.line, e.column), (26, 11), "{e}");
    assert!(e.message.contains("no host or switch 'nowhere'"), "{e}");
    let e = err(&BASE.replace("name = \"sw\"", "name = \"sw\"\nkind = \"cisco\""));
    assert_eq!(e.line, 14, "{e}");
    assert!(e.message.contains("\"lagkit\""), "{e}");
    let e = err(&BASE.replace(
        "count = 2\nrate",
        "count = 2\nfault = { loss = \"1%\" }\nrate",
    ));
    assert_eq!(e.line, 23, "{e}");
    assert!(e.message.contains("fault"), "{e}");
    let e = err(&BASE.replace(
        "[[host]]\nname = \"h2\"\naddress = \"10.0.0.2/24\"\nbond = { mode = \"802.3ad\" }\n",
        "[[host]]\nname = \"h2\"\naddress = \"10.0.0.2/24\"\n",
    ));
    assert_eq!((e.line, e.column), (8, 8), "{e}");
    assert!(e.message.contains("2 links but no bond"), "{e}");
    let e = err(&BASE.replace("count = 2\nrate", "count = 99\nrate"));
    assert_eq!(e.line, 22, "{e}");
    let e = err(&BASE.replace("name = \"t\"", "name = \"Bad_Name\""));
    assert_eq!((e.line, e.column), (1, 8), "{e}");
    let e = err(&BASE.replace(
        "name = \"t\"",
        "name = \"t\"\n[workload]\nkind = \"iperf3\"\nclient = \"h1\"\nserver = \"h1\"\n",
    ));
    assert!(e.message.contains("different hosts"), "{e}");
    let e = err(&BASE.replace(
        "name = \"t\"",
        "name = \"t\"\n[workload]\nkind = \"lagkit-load\"\nclient = \"h1\"\nserver = \"h2\"\nload = \"bogus\"\n",
    ));
    assert_eq!(e.line, 6, "{e}");
    assert!(e.message.contains("load 'bogus'"), "{e}");
    let e = err(&BASE.replace(
        "name = \"t\"",
        "name = \"t\"\n[workload]\nkind = \"lagkit-load\"\nclient = \"h1\"\nserver = \"h2\"\nmethod = \"x\"\n",
    ));
    assert_eq!(e.line, 6, "{e}");
    let e = err(&BASE.replace(
        "name = \"t\"",
        "name = \"t\"\n[workload]\nkind = \"iperf3\"\nclient = \"h1\"\nserver = \"h2\"\nprocs = 4\n",
    ));
    assert!(e.message.contains("'procs' is for kind"), "{e}");
    let t = Topology::parse(
        &BASE.replace(
            "name = \"t\"",
            "name = \"t\"\n[workload]\nkind = \"lagkit-load\"\nclient = \"h1\"\nserver = \"h2\"\nprocs = 3\nmethod = \"s\"\nsize = 4096\nseconds = 2\n",
        ),
        "t.toml",
        "t",
    )
    .unwrap();
    match t.workload {
        Some(lagkit_lab::workload::WorkloadSpec::LagkitLoad(l)) => {
            assert_eq!(l.load, "socketprocs");
            assert_eq!(l.method, "select");
            assert_eq!((l.procs, l.size, l.seconds), (3, Some(4096), 2));
            assert_eq!(l.app_code(), "s");
        }
        other => panic!("{other:?}"),
    }
    let e = err("name = \"t\"\n[[host]\n");
    assert_eq!(e.line, 2, "{e}");
}

#[test]
fn namespace_names_never_match_another_labs() {
    assert!(ns_of_lab("two", "lklab-two-h1"));
    assert!(!ns_of_lab("two", "lklab-two-hosts-h1"));
    assert!(ns_of_lab("two-hosts", "lklab-two-hosts-h1"));
    assert!(!ns_of_lab("two", "lklab-two-"));
    assert!(!ns_of_lab("two", "lkt-1-2"));
}

#[test]
fn lab_name_of_a_broken_file_falls_back() {
    let dir = std::env::temp_dir().join(format!("lklab-topo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("my-lab.toml");
    std::fs::write(&f, "name = \"named\"\n[[host]]\nbogus = 1\n").unwrap();
    assert_eq!(lab_name_of(&f).as_deref(), Some("named"));
    std::fs::write(&f, "this is [not toml").unwrap();
    assert_eq!(lab_name_of(&f).as_deref(), Some("my-lab"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn mtu_per_end_and_partial_mtu_warn() {
    // One number: both ends. [a, b]: each end of `between`.
    let t = parse(&BASE.replace(
        "count = 2\nrate = \"100mbit\"",
        "count = 2\nrate = \"100mbit\"\nmtu = [9000, 1500]",
    ))
    .unwrap();
    assert_eq!(t.links[0].mtu, [9000, 1500]);
    assert!(t.links[0].mtu_mismatch());
    assert_eq!(t.links[2].mtu, [1500, 1500]);
    // h1's bond follows its links' MTU; the mismatch is a warning, not an error.
    assert_eq!(t.hosts[0].bond.as_ref().unwrap().config.mtu, 9000);
    assert!(
        t.warnings
            .iter()
            .any(|w| w.contains("MTU 9000 on one end, 1500 on the other")),
        "{:?}",
        t.warnings
    );
    // A bond MTU above its links' runs, with a warning naming the drop.
    let t = parse(&BASE.replace(
        "bond = { mode = \"802.3ad\" }",
        "bond = { mode = \"802.3ad\", mtu = 9000 }",
    ))
    .unwrap();
    assert!(
        t.warnings
            .iter()
            .any(|w| w.contains("mtu 9000 differs from its links' mtu 1500")),
        "{:?}",
        t.warnings
    );
    let e = err(&BASE.replace("count = 2\nrate", "count = 2\nmtu = [9000]\nrate"));
    assert!(e.message.contains("[a, b]"), "{e}");
    let e = err(&BASE.replace("count = 2\nrate", "count = 2\nmtu = 100\nrate"));
    assert!(e.message.contains("between 576 and 65535"), "{e}");
}

#[test]
fn host_macs_are_fixed_and_the_bond_takes_its_first_members() {
    let t = parse(BASE).unwrap();
    let (e, _) = t.ends_on("h2").next().unwrap();
    assert_eq!(t.host_mac(e).as_deref(), Some("02:6c:6b:00:01:02"));
    let (sw, _) = t.ends_on("sw").next().unwrap();
    assert_eq!(t.host_mac(sw), None, "switch ports are the switch's");
    assert_eq!(
        t.switch_port_mac(0, &sw.iface).as_deref(),
        Some("02:00:00:0a:01:01"),
        "lagkit's switch: fixed, so its LACP system id repeats"
    );
    assert_eq!(
        t.l3_port("h1"),
        Some(("bond0".into(), "02:6c:6b:00:01:01".into()))
    );
    assert!(!t.needs_static_arp());
    let stat = BASE.replace(
        "protocol = \"lacp-active\"",
        "protocol = \"static\"\nload_balance = \"l2\"",
    );
    // Open vSwitch's static bonds drop broadcasts off their elected
    // member; lagkit's switch floods to one member of a channel as Cisco's.
    assert!(!parse(&stat).unwrap().needs_static_arp());
    let ovs = stat.replace("name = \"sw\"", "name = \"sw\"\nkind = \"ovs\"");
    assert!(parse(&ovs).unwrap().needs_static_arp());
}

#[test]
fn fault_loss_needs_a_bonded_end() {
    let t = parse(&BASE.replace(
        "count = 2\nrate = \"100mbit\"",
        "count = 2\nrate = \"100mbit\"\nfault = { loss = 0.02 }",
    ))
    .unwrap();
    assert_eq!(t.links[0].loss, Some(0.02));
    assert_eq!(t.links[2].loss, None);
    assert_eq!(
        t.fault_losses("h1"),
        vec![("e1".to_string(), 0.02), ("e2".to_string(), 0.02)]
    );
    assert!(t.fault_losses("h2").is_empty());
    let e = err(&BASE.replace("count = 2\nrate", "count = 2\nfault = { delay = 5 }\nrate"));
    assert!(e.message.contains("only loss"), "{e}");
    let e = err(&BASE.replace("count = 2\nrate", "count = 2\nfault = { loss = 2 }\nrate"));
    assert!(e.message.contains("from 0 to 1"), "{e}");
    let plain = BASE.replace("bond = { mode = \"802.3ad\" }\n", "");
    let plain = plain.replace(
        "between = [\"h2\", \"sw\"]\ncount = 2",
        "between = [\"h2\", \"sw\"]\nfault = { loss = 0.1 }",
    );
    let e = err(&plain);
    assert!(e.message.contains("only lagkit injects faults"), "{e}");
}
