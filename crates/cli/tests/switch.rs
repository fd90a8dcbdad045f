//! `lagkit switch` as a user runs it: the binary in a namespace of its
//! own, its ports veths to hosts (plain, or lagkit bonds in 802.3ad, in
//! `mode on`'s balance-xor, or static bonds running PAgP), asked with
//! `lagkit switch show ... --json`. Root only for the traffic tests; each
//! skips with a message otherwise. Every namespace, veth and process is
//! removed on drop, also when a test fails. The host PAgP tests run under
//! each engine (`pagp_host::*_bpf`, `*_userspace`).

mod common;

use common::switch::{
    bond_ports, bond_status, flags, port_counters, show, show_text, start, start_switch,
    switch_ports, tmpdir, write, BIN,
};
use common::{Daemon, TmpDir};
use lagkit_sys::proc::Signal;

use lagkit_testnet::{ping, tcp_flows, tcp_transfer, wait_until, Lab, SlowCapture};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Two hosts (10.0.NET.1 and .2 on their eth0) on the switch's ports p1
/// and p2 (Gi1/1 and Gi1/2), with MTUs (switch devices, hosts) when given.
struct TwoHosts {
    sw: String,
    h1: String,
    h2: String,
    _switch: Daemon,
    _dir: TmpDir,
}

fn two_hosts(lab: &mut Lab, net: u8, config: &str, mtu: Option<(u32, u32)>) -> TwoHosts {
    let (sw, h1, h2) = (lab.netns(), lab.netns(), lab.netns());
    lab.veth(&h1, "eth0", &sw, "p1");
    lab.veth(&h2, "eth0", &sw, "p2");
    switch_ports(lab, &sw, &["p1", "p2"], mtu.map(|m| m.0));
    for (i, h) in [&h1, &h2].into_iter().enumerate() {
        if let Some((_, m)) = mtu {
            lab.sh(&["ip", "-n", h, "link", "set", "eth0", "mtu", &m.to_string()]);
        }
        lab.host(h, "eth0", &format!("10.0.{net}.{}/24", i + 1));
    }
    let dir = TmpDir(tmpdir(&format!("two-{net}")));
    let d = start_switch(&sw, &dir.0, config, &["Gi1/1=p1", "GigabitEthernet1/2=p2"]);
    TwoHosts {
        sw,
        h1,
        h2,
        _switch: d,
        _dir: dir,
    }
}

#[test]
fn two_hosts_on_access_ports_ping_and_tcp_arrive_once_and_the_table_learns() {
    let Some(mut lab) = Lab::new("switch_access") else {
        return;
    };
    let config = "hostname access\ninterface range gi1/1 - 2\n switchport access vlan 10\n";
    let TwoHosts { sw, h1, h2, .. } = &two_hosts(&mut lab, 1, config, None);
    let p = ping(h1, "10.0.1.2", 5);
    assert_eq!((p.received, p.duplicates), (5, 0), "{p:?}");
    let t = tcp_transfer(h2, "10.0.1.2:7001", h1, 32 << 20);
    assert_eq!(t.received, t.sent, "every byte arrived");
    assert_eq!(t.recv_hash, t.sent_hash, "and in order");
    let mac = |ns: &str| {
        let out = lab.nsexec(ns, &["cat", "/sys/class/net/eth0/address"]);
        out.trim().to_string()
    };
    let (m1, m2) = (mac(h1), mac(h2));
    let table = show(sw, &["mac", "address-table"]).unwrap();
    let at = |m: &str| {
        table["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["mac"] == m && e["vlan"] == 10)
            .map(|e| e["port"].as_str().unwrap_or("").to_string())
    };
    assert_eq!(at(&m1).as_deref(), Some("GigabitEthernet1/1"), "{table}");
    assert_eq!(at(&m2).as_deref(), Some("GigabitEthernet1/2"), "{table}");
    let text = show_text(sw, &["mac", "address-table"]);
    assert!(text.contains("DYNAMIC     Gi1/1"), "{text}");
    // Every frame h1 sent reached h2 once: what the switch took in on
    // Gi1/1 it sent out on Gi1/2 (nothing else is connected).
    let all = show(sw, &["interfaces", "counters"]).expect("counters");
    let (c1, c2) = (&all["ports"][0], &all["ports"][1]);
    assert_eq!(c1["port"], "GigabitEthernet1/1");
    assert!(c1["rx_frames"].as_u64().unwrap() > 100, "{c1}");
    assert_eq!(c1["rx_frames"], c2["tx_frames"], "{c1} {c2}");
    assert_eq!(c2["rx_frames"], c1["tx_frames"], "{c1} {c2}");
}

fn bond_config(dir: &Path, side: &str, mode: &str, addr: &str) -> PathBuf {
    let text = format!(
        "name = \"bond0\"\nmode = \"{mode}\"\nmembers = [\"eth1\", \"eth2\"]\nxmit_hash_policy = \"layer3+4\"\nlacp_rate = \"fast\"\naddress = [\"{addr}\"]\n"
    );
    write(dir, &format!("{side}.toml"), &text)
}

/// Every member of `channel` flagged P in `show etherchannel summary`.
fn bundled(sum: &Value, channel: u64) -> bool {
    sum["channels"].as_array().is_some_and(|cs| {
        cs.iter().any(|c| {
            c["channel"] == channel
                && c["members"]
                    .as_array()
                    .is_some_and(|m| m.len() == 2 && m.iter().all(|x| x["flag"] == "P"))
        })
    })
}

#[test]
fn two_lagkit_bonds_into_two_lacp_port_channels_form_and_spread_by_l4() {
    let Some(mut lab) = Lab::new("switch_lacp") else {
        return;
    };
    let (sw, a, b) = (lab.netns(), lab.netns(), lab.netns());
    lab.veth(&a, "eth1", &sw, "a1");
    lab.veth(&a, "eth2", &sw, "a2");
    lab.veth(&b, "eth1", &sw, "b1");
    lab.veth(&b, "eth2", &sw, "b2");
    switch_ports(&lab, &sw, &["a1", "a2", "b1", "b2"], None);
    let dir = TmpDir(tmpdir("lacp"));
    let config = "hostname core\nport-channel load-balance src-dst-port\ninterface range gi1/1 - 2\n channel-group 1 mode active\n lacp rate fast\ninterface range gi1/3 - 4\n channel-group 2 mode passive\ninterface port-channel 1\ninterface port-channel 2\n";
    let _s = start_switch(
        &sw,
        &dir.0,
        config,
        &["Gi1/1=a1", "Gi1/2=a2", "Gi1/3=b1", "Gi1/4=b2"],
    );
    let (ca, cb) = (
        bond_config(&dir.0, "a", "802.3ad", "10.0.2.1/24"),
        bond_config(&dir.0, "b", "802.3ad", "10.0.2.2/24"),
    );
    let _ba = start(&a, &["up", ca.to_str().unwrap()], &dir.0.join("a.log"));
    let _bb = start(&b, &["up", cb.to_str().unwrap()], &dir.0.join("b.log"));
    wait_until(
        "both channels bundle both members (P) and both bonds aggregate 2 ports",
        Duration::from_secs(40),
        || {
            show(&sw, &["etherchannel", "summary"])
                .is_some_and(|s| bundled(&s, 1) && bundled(&s, 2))
                && bond_ports(&a) == 2
                && bond_ports(&b) == 2
        },
    );
    let text = show_text(&sw, &["etherchannel", "summary"]);
    assert!(
        text.contains("Po1(SU)       LACP        Gi1/1(P) Gi1/2(P)"),
        "{text}"
    );
    // Each member's partner is the bond, fast and active, on its own port.
    let n = show(&sw, &["lacp", "neighbor"]).expect("lacp neighbor");
    let rows = n["neighbors"].as_array().expect("neighbors");
    assert_eq!(rows.len(), 4, "{n}");
    for r in rows {
        assert!(
            r["heard"] == true && r["partner_fast"] == true && r["partner_active"] == true,
            "{r}"
        );
    }
    let ports: std::collections::BTreeSet<u64> = rows
        .iter()
        .filter(|r| r["channel"] == 1)
        .map(|r| r["partner_port"].as_u64().unwrap())
        .collect();
    assert_eq!(ports.len(), 2, "two partner ports: {n}");
    let text = show_text(&sw, &["lacp", "neighbor"]);
    assert!(
        text.contains("Channel group 2 neighbors") && text.contains("Gi1/4     FA"),
        "{text}"
    );
    // TCP both ways, several flows each, every byte once and in order.
    for t in tcp_flows(&b, "10.0.2.2:7100", &a, 6, 8 << 20)
        .into_iter()
        .chain(tcp_flows(&a, "10.0.2.1:7200", &b, 6, 8 << 20))
    {
        assert_eq!(t.received, t.sent, "every byte arrived");
        assert_eq!(t.recv_hash, t.sent_hash, "and in order");
    }
    // src-dst-port over 12 flows: both members of each channel carried
    // data towards its bond.
    for port in [
        "GigabitEthernet1/1",
        "GigabitEthernet1/2",
        "GigabitEthernet1/3",
        "GigabitEthernet1/4",
    ] {
        let c = port_counters(&sw, port);
        assert!(
            c["tx_bytes"].as_u64().unwrap() > 1 << 20,
            "{port} carried its share: {c}"
        );
    }
    let lb = show(&sw, &["etherchannel", "load-balance"]).unwrap();
    assert_eq!(lb["method"], "src-dst-port", "{lb}");
    let words = "test etherchannel load-balance interface port-channel 1 port 10.0.2.2:7100 10.0.2.1:40000 --json";
    let out = Command::new("ip")
        .args(["netns", "exec", &sw, BIN, "switch"])
        .args(words.split(' '))
        .output()
        .unwrap();
    let t: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert!(
        t["member"]
            .as_str()
            .is_some_and(|m| m.starts_with("GigabitEthernet1/")),
        "{t}"
    );
    // The README's example: (40001 ^ 80) & 7 = 1, bucket 1 of 2 members.
    let words =
        "test etherchannel load-balance interface port-channel 1 port 10.0.0.1:40001 10.0.0.2:80";
    let out = Command::new("ip")
        .args(["netns", "exec", &sw, BIN, "switch"])
        .args(words.split(' '))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Would select Gi1/2 of Po1 (bucket 1 of 8 by src-dst-port)\n"
    );
}

/// A 3-member bond into a channel with `lacp max-bundle 2`: two members
/// carry traffic and own every bucket, the third stands by (H) and takes
/// over when one fails.
#[test]
fn max_bundle_keeps_a_hot_standby_that_takes_over() {
    let Some(mut lab) = Lab::new("switch_maxb") else {
        return;
    };
    let (sw, a) = (lab.netns(), lab.netns());
    for i in 1..=3 {
        lab.veth(&a, &format!("eth{i}"), &sw, &format!("a{i}"));
    }
    switch_ports(&lab, &sw, &["a1", "a2", "a3"], None);
    let dir = TmpDir(tmpdir("maxb"));
    let bond = write(
        &dir.0,
        "a.toml",
        "name = \"bond0\"\nmode = \"802.3ad\"\nmembers = [\"eth1\", \"eth2\", \"eth3\"]\nlacp_rate = \"fast\"\n",
    );
    let ports = ["Gi1/1=a1", "Gi1/2=a2", "Gi1/3=a3"];
    let config = "interface range gi1/1 - 3\n channel-group 1 mode active\n lacp rate fast\ninterface port-channel 1\n lacp max-bundle 2\n";
    let s = start_switch(&sw, &dir.0, config, &ports);
    let _b = start(&a, &["up", bond.to_str().unwrap()], &dir.0.join("a.log"));
    let count = |f: &[String], c: &str| f.iter().filter(|x| *x == c).count();
    wait_until(
        "2 bundled, 1 hot standby; the bond carries 2",
        Duration::from_secs(40),
        || {
            let f = flags(&sw, 1);
            count(&f, "P") == 2 && count(&f, "H") == 1 && bond_ports(&a) == 2
        },
    );
    // The two bundled members own the 8 buckets between them; the
    // standby owns none.
    let d = show(&sw, &["etherchannel", "1", "detail"]).expect("detail");
    let members = d["channels"][0]["members"]
        .as_array()
        .expect("members")
        .clone();
    let load = |flag: &str| -> Vec<u64> {
        members
            .iter()
            .filter(|m| m["flag"] == flag)
            .map(|m| m["load"].as_u64().unwrap())
            .collect()
    };
    let (p, h) = (load("P"), load("H"));
    assert_eq!((p.len(), h), (2, vec![0]), "{d}");
    assert_eq!((p[0] | p[1], p[0] & p[1]), (0xff, 0), "buckets split: {d}");
    assert_eq!(d["channels"][0]["max_bundle"], 2, "{d}");
    let text = show_text(&sw, &["etherchannel", "1", "detail"]);
    assert!(text.contains("HotStandBy port = Gi1/"), "{text}");
    assert!(
        show(&sw, &["etherchannel", "9", "detail"]).is_none(),
        "no channel 9"
    );
    // A bundled member fails: the standby takes its place.
    let f = flags(&sw, 1);
    let failed = f.iter().position(|x| x == "P").unwrap() + 1;
    lab.sh(&[
        "ip",
        "-n",
        &a,
        "link",
        "set",
        &format!("eth{failed}"),
        "down",
    ]);
    wait_until(
        "the standby bundles in its place",
        Duration::from_secs(20),
        || {
            let f = flags(&sw, 1);
            count(&f, "P") == 2 && f[failed - 1] == "D" && bond_ports(&a) == 2
        },
    );
    // The standby's takeover and min-links are decisions of the switch's
    // core, tested in virtual time against a bond's core (lagkit-bond's
    // core_vs_switch); this test keeps what crosses the kernel and the
    // show output.
    drop(s);
}

/// Namespaces (switch, bond host, plain host): the bond host's eth1 and
/// eth2 on the switch's a1 and a2 (Gi1/1-2), the plain host's eth0 on h0
/// (Gi1/3).
fn bond_and_host(lab: &mut Lab) -> (String, String, String) {
    let (sw, a, h) = (lab.netns(), lab.netns(), lab.netns());
    lab.veth(&a, "eth1", &sw, "a1");
    lab.veth(&a, "eth2", &sw, "a2");
    lab.veth(&h, "eth0", &sw, "h0");
    switch_ports(lab, &sw, &["a1", "a2", "h0"], None);
    (sw, a, h)
}

#[test]
fn a_static_bond_into_a_mode_on_channel_bundles_by_carrier() {
    let Some(mut lab) = Lab::new("switch_on") else {
        return;
    };
    let (sw, a, h) = bond_and_host(&mut lab);
    lab.host(&h, "eth0", "10.0.4.2/24");
    let dir = TmpDir(tmpdir("on"));
    let config = "port-channel load-balance src-dst-mixed-ip-port\ninterface range gi1/1 - 2\n channel-group 5 mode on\ninterface gi1/3\n";
    let _s = start_switch(&sw, &dir.0, config, &["Gi1/1=a1", "Gi1/2=a2", "Gi1/3=h0"]);
    let ca = bond_config(&dir.0, "a", "balance-xor", "10.0.4.1/24");
    let _ba = start(&a, &["up", ca.to_str().unwrap()], &dir.0.join("a.log"));
    wait_until("both members bundled (P)", Duration::from_secs(20), || {
        flags(&sw, 5) == ["P", "P"]
    });
    // 16 flows towards the bond: all on one member once in 2^15 runs
    // (6 flows left it there once in 32).
    for t in tcp_flows(&h, "10.0.4.2:7300", &a, 6, 4 << 20)
        .into_iter()
        .chain(tcp_flows(&a, "10.0.4.1:7400", &h, 16, 2 << 20))
    {
        assert_eq!(t.received, t.sent, "every byte arrived");
        assert_eq!(t.recv_hash, t.sent_hash, "and in order");
    }
    for port in ["GigabitEthernet1/1", "GigabitEthernet1/2"] {
        let c = port_counters(&sw, port);
        assert!(c["tx_bytes"].as_u64().unwrap() > 1 << 20, "{port}: {c}");
    }
    // No protocol: the switch's end losing carrier is what unbundles.
    lab.sh(&["ip", "-n", &sw, "link", "set", "a2", "down"]);
    wait_until("Gi1/2 down (D)", Duration::from_secs(10), || {
        flags(&sw, 5) == ["P", "D"]
    });
    let t = tcp_transfer(&h, "10.0.4.2:7500", &a, 4 << 20);
    assert_eq!((t.received, t.recv_hash), (t.sent, t.sent_hash));
    let sum = show(&sw, &["etherchannel", "summary"]).unwrap();
    assert!(
        sum["channels"][0]["members"][0]["mismatch"].is_null(),
        "a static bond speaks no protocol: {sum}"
    );
}

/// A channel member whose protocol hears nothing from the host (a static
/// bond that speaks neither LACP nor PAgP) stands alone, as a Catalyst's
/// do (flag `I`): it forwards as an ordinary port, learning the bond's MAC
/// on whichever member last sent from it, instead of dropping the host's
/// traffic. That is how seed 000's AIX servers in `standard` mode carried
/// traffic through `desirable non-silent` ports.
#[test]
fn members_that_hear_no_protocol_stand_alone_and_forward() {
    let Some(mut lab) = Lab::new("switch_alone") else {
        return;
    };
    let (sw, a, h) = bond_and_host(&mut lab);
    lab.host(&h, "eth0", "10.0.8.2/24");
    let ports = ["Gi1/1=a1", "Gi1/2=a2", "Gi1/3=h0"];
    // LACP defaults after its 3 s timeout; PAgP waits the silent wait
    // (15 s) before it gives a port up.
    for (mode, within) in [
        ("active\n lacp rate fast", 15),
        ("desirable non-silent", 30),
    ] {
        let dir = TmpDir(tmpdir("alone"));
        let config = format!("port-channel load-balance src-dst-ip\ninterface range gi1/1 - 2\n channel-group 5 mode {mode}\ninterface gi1/3\n");
        let _s = start_switch(&sw, &dir.0, &config, &ports);
        let ca = bond_config(&dir.0, "a", "balance-xor", "10.0.8.1/24");
        let _ba = start(&a, &["up", ca.to_str().unwrap()], &dir.0.join("a.log"));
        wait_until(
            &format!("{mode}: both members stand alone (I)"),
            Duration::from_secs(within),
            || flags(&sw, 5) == ["I", "I"],
        );
        let text = show_text(&sw, &["etherchannel", "summary"]);
        assert!(
            text.contains("Po5(SD)       ") && text.contains("(I)"),
            "{text}"
        );
        let text = show_text(&sw, &["etherchannel", "5", "detail"]);
        assert!(text.contains("stand-alone"), "{text}");
        // The bond speaks first: until the switch has learned its MAC on a
        // member, a frame for it is unknown unicast, flooded into both
        // stand-alone ports, and the bond takes both copies (as a host on
        // two unbundled Catalyst ports would).
        let p = ping(&a, "10.0.8.2", 3);
        assert_eq!((p.received, p.duplicates), (3, 0), "{mode}: {p:?}");
        let p = ping(&h, "10.0.8.1", 10);
        assert_eq!((p.received, p.duplicates), (10, 0), "{mode}: {p:?}");
        for t in tcp_flows(&h, "10.0.8.2:7600", &a, 4, 2 << 20)
            .into_iter()
            .chain(tcp_flows(&a, "10.0.8.1:7700", &h, 4, 2 << 20))
        {
            assert_eq!(t.received, t.sent, "{mode}: every byte arrived");
            assert_eq!(t.recv_hash, t.sent_hash, "{mode}: and in order");
        }
        // The bond's address lives on a member port, not on the channel.
        let table = show(&sw, &["mac", "address-table"]).unwrap();
        let bond_at: Vec<String> = table["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["port"].as_str().map(String::from))
            .filter(|p| p != "Gi1/3" && p != "GigabitEthernet1/3")
            .collect();
        assert!(
            !bond_at.is_empty() && bond_at.iter().all(|p| !p.starts_with("Po")),
            "{mode}: {table}"
        );
        assert_eq!(flags(&sw, 5), ["I", "I"], "{mode}: still stand-alone");
    }
}

/// Eight addresses 10.0.NET.10-17 on `h`'s eth0, which XOR the bond's .1
/// to each of the 8 buckets of src-dst-ip: four on each member of a
/// 2-member channel.
fn eight_sources(lab: &Lab, h: &str, net: u8) {
    lab.host(h, "eth0", &format!("10.0.{net}.10/24"));
    for x in 11..=17 {
        lab.sh(&[
            "ip",
            "-n",
            h,
            "addr",
            "add",
            &format!("10.0.{net}.{x}/24"),
            "dev",
            "eth0",
        ]);
    }
}

/// How many of [`eight_sources`] reach the bond at 10.0.NET.1 (a TCP
/// connection attempt answered either way).
fn sources_reaching(h: &str, net: u8) -> usize {
    (10..=17)
        .filter(|x| {
            lagkit_testnet::reaches_from(
                h,
                std::net::Ipv4Addr::new(10, 0, net, *x),
                format!("10.0.{net}.1:9").parse().unwrap(),
                Duration::from_millis(1500),
            )
        })
        .count()
}

/// A PAgP channel removes a member that fails silently: the host's frames
/// into it vanish, the switch's PAgP stops hearing the host's (fast)
/// hellos on it and ages them out after 3.5 of them, the switch's hellos
/// then no longer name the host's port, and the host takes it out too;
/// every source reaches the bond over the other member. (The other way
/// round, the switch's slow hellos once bundled would take 105 s to age
/// out on the host, as on a Catalyst.)
#[test]
fn a_silent_failure_leaves_a_pagp_channel() {
    let Some(mut lab) = Lab::new("switch_pagphole") else {
        return;
    };
    let (sw, a, h) = bond_and_host(&mut lab);
    eight_sources(&lab, &h, 9);
    let dir = TmpDir(tmpdir("pagphole"));
    let config = "port-channel load-balance src-dst-ip\ninterface range gi1/1 - 2\n channel-group 5 mode desirable non-silent\ninterface gi1/3\n";
    let _s = start_switch(&sw, &dir.0, config, &["Gi1/1=a1", "Gi1/2=a2", "Gi1/3=h0"]);
    let ca = write(
        &dir.0,
        "a.toml",
        &pagp_bond_toml("desirable", 9, "pagp_rate = \"fast\"\n"),
    );
    let _ba = start(&a, &["up", ca.to_str().unwrap()], &dir.0.join("a.log"));
    wait_until(
        "both members bundled, every source reaches the bond",
        Duration::from_secs(40),
        || flags(&sw, 5) == ["P", "P"] && sources_reaching(&h, 9) == 8,
    );
    let hole =
        lagkit_dataplane::netns::run_in(&a, || lagkit_dataplane::isolate::blackhole_egress("eth2"))
            .expect("enter namespace")
            .expect("black hole");
    wait_until("PAgP takes Gi1/2 out", Duration::from_secs(15), || {
        flags(&sw, 5).first().map(String::as_str) == Some("P") && flags(&sw, 5)[1] != "P"
    });
    wait_until(
        "every source reaches the bond over Gi1/1",
        Duration::from_secs(15),
        || sources_reaching(&h, 9) == 8,
    );
    let st = bond_status(&a);
    assert_eq!(
        st["pagp"]["members_in_channel"].as_u64(),
        Some(1),
        "the host took eth2 out as well: {st}"
    );
    // The bond hellos fast, the switch slow once bundled: what the bond
    // heard on eth1 stays valid 105 s, not the 3.5 s of its own rate, so
    // the healthy member stays in, and quiet, well past 3.5 s after the
    // switch's last hello on it. (Aged out, it would leave and rejoin
    // within a few hellos each time, which a sample of the channel misses
    // but the hellos the switch then sends on eth1 show.)
    let eth1_hellos = |st: &Value| {
        st["members"]
            .as_array()?
            .iter()
            .find(|m| m["name"] == "eth1")?["pagp"]["hellos_rx"]
            .as_u64()
    };
    let heard = eth1_hellos(&st);
    assert!(heard.is_some(), "no PAgP counters for eth1: {st}");
    lagkit_testnet::holds_for(
        "eth1 in the bond's channel, the switch silent on it",
        Duration::from_secs(5),
        || {
            let st = bond_status(&a);
            st["pagp"]["members_in_channel"].as_u64() == Some(1) && eth1_hellos(&st) == heard
        },
    );
    drop(hole);
}

/// A member that fails silently (its carrier stays up, the switch's frames
/// into it vanish): a `mode on` channel keeps sending its share into it, a
/// black hole for the flows hashed there; an LACP channel notices the
/// partner's silence and takes the member out.
#[test]
fn a_silent_failure_black_holes_a_mode_on_channel_and_lacp_removes_the_member() {
    let Some(mut lab) = Lab::new("switch_hole") else {
        return;
    };
    let (sw, a, h) = bond_and_host(&mut lab);
    eight_sources(&lab, &h, 7);
    let reached = |h: &str| sources_reaching(h, 7);
    let ports = ["Gi1/1=a1", "Gi1/2=a2", "Gi1/3=h0"];
    for (mode, bond_mode) in [
        ("on", "balance-xor"),
        ("active\n lacp rate fast", "802.3ad"),
    ] {
        let dir = TmpDir(tmpdir(&format!("hole-{bond_mode}")));
        let config = format!("port-channel load-balance src-dst-ip\ninterface range gi1/1 - 2\n channel-group 5 mode {mode}\ninterface gi1/3\n");
        let _s = start_switch(&sw, &dir.0, &config, &ports);
        let ca = bond_config(&dir.0, "a", bond_mode, "10.0.7.1/24");
        let _ba = start(&a, &["up", ca.to_str().unwrap()], &dir.0.join("a.log"));
        wait_until(
            "both members bundled, every source reaches the bond",
            Duration::from_secs(40),
            || flags(&sw, 5) == ["P", "P"] && reached(&h) == 8,
        );
        let hole = lagkit_dataplane::netns::run_in(&sw, || {
            lagkit_dataplane::isolate::blackhole_egress("a2")
        })
        .expect("enter namespace")
        .expect("black hole");
        if bond_mode == "balance-xor" {
            // No protocol notices: Gi1/2 stays bundled and swallows its
            // half, for as long as the probes take (6 s of silence).
            assert_eq!(
                reached(&h),
                4,
                "the sources hashed to Gi1/2 are black-holed"
            );
            assert_eq!(flags(&sw, 5), ["P", "P"], "mode on cannot tell");
        } else {
            wait_until("LACP takes Gi1/2 out", Duration::from_secs(15), || {
                flags(&sw, 5).first().map(String::as_str) == Some("P") && flags(&sw, 5)[1] != "P"
            });
            assert_eq!(reached(&h), 8, "every source reaches the bond over Gi1/1");
        }
        drop(hole);
    }
}

/// `mode on` facing a bond that runs LACP is a mismatch, and the switch
/// says so instead of bundling in silence.
#[test]
fn mode_on_facing_lacp_is_reported_as_a_mismatch() {
    let Some(mut lab) = Lab::new("switch_onlacp") else {
        return;
    };
    let (sw, a) = (lab.netns(), lab.netns());
    lab.veth(&a, "eth1", &sw, "a1");
    lab.veth(&a, "eth2", &sw, "a2");
    switch_ports(&lab, &sw, &["a1", "a2"], None);
    let dir = TmpDir(tmpdir("onlacp"));
    let config = "interface range gi1/1 - 2\n channel-group 5 mode on\n";
    let _s = start_switch(&sw, &dir.0, config, &["Gi1/1=a1", "Gi1/2=a2"]);
    let ca = bond_config(&dir.0, "a", "802.3ad", "10.0.5.1/24");
    let _ba = start(&a, &["up", ca.to_str().unwrap()], &dir.0.join("a.log"));
    let mismatch = |i: usize| {
        show(&sw, &["etherchannel", "summary"]).and_then(|s| {
            s["channels"][0]["members"][i]["mismatch"]
                .as_str()
                .map(String::from)
        })
    };
    wait_until(
        "both members report the mismatch",
        Duration::from_secs(20),
        || mismatch(0).is_some() && mismatch(1).is_some(),
    );
    let m = mismatch(0).unwrap();
    assert!(
        m.contains("speaks LACP") && m.contains("channel-group 5 mode active|passive"),
        "{m}"
    );
    let text = show_text(&sw, &["etherchannel", "5", "detail"]);
    assert!(
        text.contains("Probable mismatch: the partner speaks LACP"),
        "{text}"
    );
    assert!(
        bond_ports(&a) < 2,
        "no LACP partner: the bond never aggregates both"
    );
}

/// Whether `dev` in `ns` is administratively up (`UP` among its flags).
fn admin_up(lab: &Lab, ns: &str, dev: &str) -> bool {
    let out = lab.sh(&["ip", "-n", ns, "-o", "link", "show", "dev", dev]);
    let flags = out.split('<').nth(1).and_then(|f| f.split('>').next());
    flags.is_some_and(|f| f.split(',').any(|x| x == "UP"))
}

/// The switch's ports start as a new veth does, administratively down:
/// the switch brings them up itself and traffic flows, while a port
/// configured `shutdown` has its device taken down, so its partner sees
/// no carrier.
#[test]
fn the_switch_brings_its_ports_up_and_a_shutdown_port_down() {
    let Some(mut lab) = Lab::new("switch_adminup") else {
        return;
    };
    let (sw, h1, h2, h3) = (lab.netns(), lab.netns(), lab.netns(), lab.netns());
    lab.veth(&h1, "eth0", &sw, "p1");
    lab.veth(&h2, "eth0", &sw, "p2");
    lab.veth(&h3, "eth0", &sw, "p3");
    for (i, h) in [&h1, &h2, &h3].into_iter().enumerate() {
        lab.host(h, "eth0", &format!("10.0.13.{}/24", i + 1));
    }
    // p1 and p2 stay down as created; p3 is up, to be shut.
    lab.sh(&["ip", "-n", &sw, "link", "set", "p3", "up"]);
    assert!(!admin_up(&lab, &sw, "p1") && !admin_up(&lab, &sw, "p2"));
    let dir = TmpDir(tmpdir("adminup"));
    let config = "hostname adminup
interface range gi1/1 - 3
 switchport access vlan 13
interface gi1/3
 shutdown
";
    let _s = start_switch(&sw, &dir.0, config, &["Gi1/1=p1", "Gi1/2=p2", "Gi1/3=p3"]);
    assert!(admin_up(&lab, &sw, "p1") && admin_up(&lab, &sw, "p2"));
    assert!(
        !admin_up(&lab, &sw, "p3"),
        "a shutdown port's device is down"
    );
    wait_until(
        "h1 reaches h2 through the switch",
        Duration::from_secs(10),
        || ping(&h1, "10.0.13.2", 1).received == 1,
    );
    let status = show(&sw, &["interfaces", "status"]).expect("status");
    let row = |port: &str| {
        status["interfaces"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["port"] == port).cloned())
            .unwrap_or_else(|| panic!("no {port} in {status}"))
    };
    assert_eq!(row("GigabitEthernet1/1")["status"], "connected", "{status}");
    assert_eq!(row("GigabitEthernet1/3")["status"], "disabled", "{status}");
    let h3_link = lab.sh(&["ip", "-n", &h3, "-o", "link", "show", "dev", "eth0"]);
    assert!(
        h3_link.contains("NO-CARRIER"),
        "h3 sees the shut port: {h3_link}"
    );
    let p = ping(&h3, "10.0.13.1", 2);
    assert_eq!(p.received, 0, "nothing crosses a shut port: {p:?}");
}

#[test]
fn an_oversize_frame_is_dropped_and_counted_as_a_giant() {
    let Some(mut lab) = Lab::new("switch_giants") else {
        return;
    };
    // Run 18: the devices take 9216 (hosts 9000), the switch's ports 1500.
    let config = "interface range gi1/1 - 2\n mtu 1500\n";
    let TwoHosts { sw, h1, .. } = &two_hosts(&mut lab, 3, config, Some((9216, 9000)));
    // Small frames pass (and teach h1 h2's address).
    let p = ping(h1, "10.0.3.2", 3);
    assert_eq!(p.received, 3, "{p:?}");
    // 8000 bytes do not fit a 1500-byte port: dropped on the way in.
    // Read ping's own summary (stdout, whatever its exit status): four
    // sent, none back. A ping that could not send at all fails here.
    let big = Command::new("ip")
        .args([
            "netns", "exec", h1, "ping", "-n", "-q", "-M", "do", "-s", "8000",
        ])
        .args(["-i", "0.05", "-W", "1", "-c", "4", "10.0.3.2"])
        .output()
        .expect("ping runs");
    let text = String::from_utf8_lossy(&big.stdout);
    let p = lagkit_testnet::parse_ping(&text);
    assert_eq!((p.transmitted, p.received), (4, 0), "{text}");
    let c = port_counters(sw, "GigabitEthernet1/1");
    assert!(c["giants"].as_u64().unwrap() >= 4, "{c}");
    // IOS's counters table: the small frames in, by kind of destination.
    let text = show_text(sw, &["interfaces", "counters"]);
    assert!(
        text.contains("InUcastPkts") && text.contains("OutBcastPkts"),
        "{text}"
    );
}

#[test]
fn configuration_errors_exit_2_name_the_line_and_touch_nothing() {
    let guard = TmpDir(tmpdir("errors"));
    let dir = &guard.0;
    let cfg = write(
        dir,
        "bad.cfg",
        "hostname x\ninterface gi1/1\n channel-group 1 mode active\ninterface gi1/7\n shutdown\n",
    );
    let (code, _, err) = common::lagkit(
        "switch",
        &[cfg.to_str().unwrap(), "--port", "Gi1/1=lkt-no-such-dev"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("bad.cfg:4:"), "{err}");
    assert!(
        err.contains("GigabitEthernet1/7 is not one of this switch's ports"),
        "{err}"
    );
    assert!(
        err.contains("fix: map it to a device (--port GigabitEthernet1/7=DEVICE)"),
        "{err}"
    );
    let cfg = write(dir, "lb.cfg", "\nport-channel load-balance src-dst-vlan\n");
    let (code, _, err) = common::lagkit("switch", &[cfg.to_str().unwrap(), "--port", "Gi1/1=x"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("lb.cfg:2:") && err.contains("src-dst-mixed-ip-port"),
        "{err}"
    );
    let (code, _, err) = common::lagkit("switch", &[cfg.to_str().unwrap(), "--port", "Gi1/1"]);
    assert_eq!(code, 2, "{err}");
    // The configuration is fine, the device missing: the system refuses (1).
    let ok = write(dir, "ok.cfg", "interface gi1/1\n");
    let (code, _, err) = common::lagkit(
        "switch",
        &[
            ok.to_str().unwrap(),
            "--port",
            "Gi1/1=lkt-no-such-dev",
            "--socket",
            dir.join("s.sock").to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("lkt-no-such-dev"), "{err}");
}

/// Two lagkit switches joined by two links in PAgP channel 7, a host on a
/// third port of each: `desirable` facing `auto` forms on both switches and
/// carries ping and TCP once over both links. (That `auto` facing `auto`
/// never forms is a decision of the switch's core, tested in virtual time
/// in `lagkit-switch`.)
#[test]
fn pagp_desirable_facing_auto_forms_and_carries_once() {
    let Some(mut lab) = Lab::new("switch_pagp") else {
        return;
    };
    {
        let (mode_x, mode_y, net) = ("desirable", "auto", 6);
        let (x, y, h1, h2) = (lab.netns(), lab.netns(), lab.netns(), lab.netns());
        lab.veth(&x, "l1", &y, "l1");
        lab.veth(&x, "l2", &y, "l2");
        lab.veth(&h1, "eth0", &x, "h0");
        lab.veth(&h2, "eth0", &y, "h0");
        switch_ports(&lab, &x, &["l1", "l2", "h0"], None);
        switch_ports(&lab, &y, &["l1", "l2", "h0"], None);
        lab.host(&h1, "eth0", &format!("10.0.{net}.1/24"));
        lab.host(&h2, "eth0", &format!("10.0.{net}.2/24"));
        let (dx, dy) = (TmpDir(tmpdir("pagp-x")), TmpDir(tmpdir("pagp-y")));
        let cfg = |host: &str, mode: &str| {
            format!("hostname {host}\nport-channel load-balance src-dst-port\ninterface range gi1/1 - 2\n channel-group 7 mode {mode}\ninterface gi1/3\n")
        };
        let ports = ["Gi1/1=l1", "Gi1/2=l2", "Gi1/3=h0"];
        let _sx = start_switch(&x, &dx.0, &cfg("sx", mode_x), &ports);
        let _sy = start_switch(&y, &dy.0, &cfg("sy", mode_y), &ports);
        let pagp_out = |sw: &str| {
            show(sw, &["interfaces", "counters"]).expect("counters")["control"]["pagp_out"]
                .as_u64()
                .unwrap_or(0)
        };
        {
            wait_until(
                "channel 7 bundles both members on both switches",
                Duration::from_secs(30),
                || flags(&x, 7) == ["P", "P"] && flags(&y, 7) == ["P", "P"],
            );
            let pg = ping(&h1, &format!("10.0.{net}.2"), 20);
            assert_eq!((pg.received, pg.duplicates), (20, 0), "{pg:?}");
            for t in tcp_flows(&h2, &format!("10.0.{net}.2:7600"), &h1, 8, 4 << 20)
                .into_iter()
                .chain(tcp_flows(
                    &h1,
                    &format!("10.0.{net}.1:7700"),
                    &h2,
                    8,
                    4 << 20,
                ))
            {
                assert_eq!((t.received, t.recv_hash), (t.sent, t.sent_hash));
            }
            for port in ["GigabitEthernet1/1", "GigabitEthernet1/2"] {
                let c = port_counters(&x, port);
                assert!(c["tx_bytes"].as_u64().unwrap() > 1 << 20, "{port}: {c}");
            }
            assert!(pagp_out(&x) > 0 && pagp_out(&y) > 0, "both ends spoke PAgP");
            let text = show_text(&x, &["etherchannel", "summary"]);
            assert!(text.contains("PAgP"), "{text}");
            // Each side's neighbors are the other switch's two ports.
            let n = show(&y, &["pagp", "neighbor"]).expect("pagp neighbor");
            let rows = n["neighbors"].as_array().expect("neighbors");
            assert_eq!(rows.len(), 2, "{n}");
            for r in rows {
                assert!(r["heard"] == true && r["consistent"] == true, "{r}");
                assert_eq!(r["partner_mode"], "desirable", "{r}");
            }
            let text = show_text(&y, &["pagp", "neighbor"]);
            assert!(text.contains("Channel group 7 neighbors"), "{text}");
        }
    }
}

/// One member's entry of a bond status.
fn bond_member(st: &Value, name: &str) -> Value {
    st["members"]
        .as_array()
        .and_then(|ms| ms.iter().find(|m| m["name"] == name).cloned())
        .unwrap_or(Value::Null)
}

/// PAgP hellos the bond's members received, summed.
fn pagp_hellos_rx(st: &Value) -> u64 {
    st["members"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .filter_map(|m| m["pagp"]["hellos_rx"].as_u64())
                .sum()
        })
        .unwrap_or(0)
}

/// A host `a` whose bond0 (over eth1, eth2, 10.0.NET.1, `pagp = MODE`,
/// under `engine`; balance-xor unless `extra` says otherwise) faces
/// channel 3 of a lagkit switch in `mode auto`, and a host `h`
/// (10.0.NET.2) on the switch's third port.
struct PagpHost {
    lab: Lab,
    sw: String,
    a: String,
    h: String,
    net: u8,
    /// The bond's configuration file.
    cfg: PathBuf,
    bond: Daemon,
    dir: TmpDir,
    _switch: Daemon,
}

/// The host's bond0 configuration (`extra`: more lines, or in place of
/// the balance-xor lines when it names a mode).
fn pagp_bond_toml(mode: &str, net: u8, extra: &str) -> String {
    let xor = if extra.contains("mode = ") {
        ""
    } else {
        "mode = \"balance-xor\"\nxmit_hash_policy = \"layer3+4\"\n"
    };
    format!("name = \"bond0\"\n{xor}members = [\"eth1\", \"eth2\"]\npagp = \"{mode}\"\naddress = [\"10.0.{net}.1/24\"]\n{extra}")
}

fn pagp_host(tag: &str, engine: &str, mode: &str, net: u8, extra: &str) -> Option<PagpHost> {
    let mut lab = Lab::new(&format!("switch_{tag}_{engine}"))?;
    let (sw, a, h) = (lab.netns(), lab.netns(), lab.netns());
    lab.veth(&a, "eth1", &sw, "a1");
    lab.veth(&a, "eth2", &sw, "a2");
    lab.veth(&h, "eth0", &sw, "h0");
    switch_ports(&lab, &sw, &["a1", "a2", "h0"], None);
    lab.host(&h, "eth0", &format!("10.0.{net}.2/24"));
    let dir = TmpDir(tmpdir(&format!("{tag}-{engine}")));
    let config = "hostname core\nport-channel load-balance src-dst-port\ninterface range gi1/1 - 2\n channel-group 3 mode auto\ninterface gi1/3\n";
    let switch = start_switch(&sw, &dir.0, config, &["Gi1/1=a1", "Gi1/2=a2", "Gi1/3=h0"]);
    let cfg = write(&dir.0, "a.toml", &pagp_bond_toml(mode, net, extra));
    let bond = start(
        &a,
        &["up", "--engine", engine, cfg.to_str().unwrap()],
        &dir.0.join("a.log"),
    );
    wait_until("the bond answers", Duration::from_secs(10), || {
        !bond_status(&a).is_null()
    });
    Some(PagpHost {
        lab,
        sw,
        a,
        h,
        net,
        cfg,
        bond,
        dir,
        _switch: switch,
    })
}

/// A balance-xor bond with `pagp = "desirable"` into a lagkit switch's
/// `mode auto` channel: both members bundle on the switch and join the
/// bond's channel, the status names the switch as partner, ping and TCP
/// arrive once, a pulled cable leaves the channel on both ends (and
/// rejoins when put back), a reload of PAgP's rate applies in place, and
/// no PAgP frame ever reaches the bond's interface.
fn desirable_bond_facing_auto(engine: &str) {
    let Some(t) = pagp_host("pagp_host", engine, "desirable", 8, "") else {
        return;
    };
    let (sw, a, h, net) = (&t.sw, &t.a, &t.h, t.net);
    let on_bond0 = SlowCapture::start_matching(a, "bond0", lagkit_wire::pagp::is_pagp_frame);
    let rx_before = pagp_hellos_rx(&bond_status(a));
    wait_until(
        "channel 3 bundles both members and both join the bond's PAgP channel",
        Duration::from_secs(30),
        || {
            flags(sw, 3) == ["P", "P"]
                && bond_status(a)["pagp"]["members_in_channel"].as_u64() == Some(2)
        },
    );
    // The partner is the switch: its device id is its first port's MAC.
    let switch_id = t.lab.sh(&[
        "ip",
        "netns",
        "exec",
        sw,
        "cat",
        "/sys/class/net/a1/address",
    ]);
    let st = bond_status(a);
    assert_eq!(st["pagp"]["mode"], "desirable", "{st}");
    for (name, port) in [
        ("eth1", "GigabitEthernet1/1"),
        ("eth2", "GigabitEthernet1/2"),
    ] {
        let m = bond_member(&st, name);
        let p = &m["pagp"];
        assert_eq!(p["state"], "upPagp", "{m}");
        assert_eq!(p["partner_device_id"], switch_id.trim(), "{m}");
        assert_eq!(p["partner_port_name"], port, "{m}");
        assert_eq!(p["partner_group_capability"], 0x0001_0001, "{m}");
        assert_eq!(p["partner_mode"], "auto", "{m}");
        assert_eq!(m["transmitting"], true, "{m}");
    }
    let out = Command::new("ip")
        .args(["netns", "exec", a, BIN, "status", "--name", "bond0"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("PAgP state: upPagp (in channel)"), "{text}");
    assert!(
        text.contains(&format!("    device id: {}", switch_id.trim())),
        "{text}"
    );
    let summary = show_text(sw, &["etherchannel", "summary"]);
    assert!(summary.contains("PAgP"), "{summary}");

    let pg = ping(h, &format!("10.0.{net}.1"), 20);
    assert_eq!((pg.received, pg.duplicates), (20, 0), "{pg:?}");
    for tr in tcp_flows(h, &format!("10.0.{net}.2:7800"), a, 8, 4 << 20)
        .into_iter()
        .chain(tcp_flows(a, &format!("10.0.{net}.1:7900"), h, 8, 4 << 20))
    {
        assert_eq!((tr.received, tr.recv_hash), (tr.sent, tr.sent_hash));
    }
    // Both members carried data: 16 flows hashed by the bond one way and
    // the switch the other all missing one member is a 1 in 30,000 event.
    for port in ["GigabitEthernet1/1", "GigabitEthernet1/2"] {
        let c = port_counters(sw, port);
        let bytes = c["tx_bytes"].as_u64().unwrap() + c["rx_bytes"].as_u64().unwrap();
        assert!(bytes > 1 << 20, "{port}: {c}");
    }

    // Pull eth2's cable: it leaves the channel on both ends, TCP carries on.
    t.lab.sh(&["ip", "-n", sw, "link", "set", "a2", "down"]);
    wait_until("eth2 leaves on both ends", Duration::from_secs(10), || {
        let st = bond_status(a);
        let m = bond_member(&st, "eth2");
        flags(sw, 3) == ["P", "D"]
            && m["pagp"]["state"] == "portDown"
            && m["transmitting"] == false
            && st["pagp"]["members_in_channel"].as_u64() == Some(1)
    });
    let tr = tcp_transfer(h, &format!("10.0.{net}.2:8000"), a, 4 << 20);
    assert_eq!((tr.received, tr.recv_hash), (tr.sent, tr.sent_hash));
    let pg = ping(h, &format!("10.0.{net}.1"), 10);
    assert_eq!((pg.received, pg.duplicates), (10, 0), "{pg:?}");
    t.lab.sh(&["ip", "-n", sw, "link", "set", "a2", "up"]);
    wait_until("eth2 rejoins on both ends", Duration::from_secs(20), || {
        flags(sw, 3) == ["P", "P"]
            && bond_status(a)["pagp"]["members_in_channel"].as_u64() == Some(2)
    });

    // The members heard the switch during the capture (counted before the
    // reload below builds PAgP anew and its counters start from zero).
    let rx_after = pagp_hellos_rx(&bond_status(a));
    assert!(
        rx_after > rx_before,
        "PAgP arrived: {rx_before} -> {rx_after}"
    );

    // SIGHUP with only PAgP's rate changed: the running bond rebuilds its
    // PAgP system (no restart), both members rejoin and hello every second.
    std::fs::write(
        &t.cfg,
        pagp_bond_toml("desirable", net, "pagp_rate = \"fast\"\n"),
    )
    .unwrap();
    let _ = lagkit_sys::proc::kill(t.bond.0.id(), Signal::SIGHUP);
    wait_until(
        "the reload takes the fast rate and both members rejoin",
        Duration::from_secs(20),
        || {
            let st = bond_status(a);
            st["pagp"]["rate"] == "fast"
                && st["pagp"]["members_in_channel"].as_u64() == Some(2)
                && flags(sw, 3) == ["P", "P"]
        },
    );
    let hellos_tx = || bond_member(&bond_status(a), "eth1")["pagp"]["hellos_tx"].as_u64();
    let before = hellos_tx().unwrap_or(0);
    wait_until(
        "hellos every second in the channel",
        Duration::from_secs(6),
        || hellos_tx().is_some_and(|n| n >= before + 3),
    );
    let log = std::fs::read_to_string(t.dir.0.join("a.log")).unwrap_or_default();
    assert!(log.contains("PAgP settings changed in place"), "{log}");

    // The bond's interface never saw a PAgP frame.
    let leaked = on_bond0.finish();
    assert!(
        leaked.is_empty(),
        "{} PAgP frames reached bond0",
        leaked.len()
    );
}

/// active-backup with `pagp = "desirable"` and `primary = "eth2"`: PAgP
/// puts only eth2 in the channel (the switch holds Gi1/1 hot standby), so
/// the switch sends only where the bond receives: ping and TCP arrive
/// once. Pulling eth2's cable moves the channel and the active member to
/// eth1.
fn active_backup_bond_keeps_one_member_in_the_channel(engine: &str) {
    let extra = "mode = \"active-backup\"\nprimary = \"eth2\"\n";
    let Some(t) = pagp_host("pagp_ab", engine, "desirable", 10, extra) else {
        return;
    };
    let (sw, a, h, net) = (&t.sw, &t.a, &t.h, t.net);
    wait_until(
        "eth2 in the channel and active, eth1 hot standby on the switch",
        Duration::from_secs(30),
        || {
            let st = bond_status(a);
            flags(sw, 3) == ["H", "P"]
                && st["pagp"]["members_in_channel"].as_u64() == Some(1)
                && bond_member(&st, "eth2")["pagp"]["state"] == "upPagp"
                && st["active_member"] == "eth2"
        },
    );
    let st = bond_status(a);
    assert_eq!(
        bond_member(&st, "eth1")["pagp"]["state"],
        "hotStandby",
        "{st}"
    );
    assert_eq!(bond_member(&st, "eth1")["transmitting"], false, "{st}");
    let pg = ping(h, &format!("10.0.{net}.1"), 20);
    assert_eq!((pg.received, pg.duplicates), (20, 0), "{pg:?}");
    for tr in tcp_flows(h, &format!("10.0.{net}.2:8100"), a, 6, 4 << 20)
        .into_iter()
        .chain(tcp_flows(a, &format!("10.0.{net}.1:8200"), h, 6, 4 << 20))
    {
        assert_eq!((tr.received, tr.recv_hash), (tr.sent, tr.sent_hash));
    }
    let c = port_counters(sw, "GigabitEthernet1/1");
    assert!(
        c["tx_bytes"].as_u64().unwrap() < 1 << 20,
        "hot standby: {c}"
    );

    t.lab.sh(&["ip", "-n", sw, "link", "set", "a2", "down"]);
    wait_until(
        "eth1 takes the channel and the active role",
        Duration::from_secs(20),
        || {
            let st = bond_status(a);
            flags(sw, 3) == ["P", "D"]
                && st["active_member"] == "eth1"
                && bond_member(&st, "eth1")["pagp"]["state"] == "upPagp"
        },
    );
    let tr = tcp_transfer(h, &format!("10.0.{net}.2:8300"), a, 4 << 20);
    assert_eq!((tr.received, tr.recv_hash), (tr.sent, tr.sent_hash));
    let pg = ping(h, &format!("10.0.{net}.1"), 10);
    assert_eq!((pg.received, pg.duplicates), (10, 0), "{pg:?}");
}

mod pagp_host {
    #[test]
    fn active_backup_bond_keeps_one_member_in_the_channel_bpf() {
        super::active_backup_bond_keeps_one_member_in_the_channel("bpf");
    }

    #[test]
    fn desirable_bond_facing_auto_forms_carries_once_and_a_pulled_cable_leaves_bpf() {
        super::desirable_bond_facing_auto("bpf");
    }

    #[test]
    fn desirable_bond_facing_auto_forms_carries_once_and_a_pulled_cable_leaves_userspace() {
        super::desirable_bond_facing_auto("userspace");
    }
}
