//! `lagkit switch show ...` read by the tools that automate IOS: Cisco's
//! pyATS/Genie parsers and ntc-templates (TextFSM). A lab in network
//! namespaces gives the switch every member state there is: an LACP
//! channel with two bundled members (P), a hot-standby one beyond `lacp
//! max-bundle` (H) and one suspended for its MTU (s), facing a lagkit bond;
//! a PAgP channel (desirable) facing a lagkit bond; a `mode on` channel
//! facing a static lagkit bond; an LACP member facing a host that speaks
//! no LACP (stand-alone, I). Every show command is parsed with both tool
//! sets where each has a parser (crates/cli/tests/ios_parsers.py, run by
//! the venv `scripts/setup.sh parsers` makes), and the parsed VALUES are
//! held against the lab: flags, partner system ids (the bonds' own, from
//! `lagkit status --json`), keys, counters that moved. A column renamed or
//! dropped in the text fails here. Then `show running-config` is read from
//! the switch and a second switch starts from it.
//!
//! Root only (skips with a message otherwise). The venv is required: a
//! missing one fails with how to make it. Its place:
//! `$LAGKIT_PYVENV`, else `<cargo target dir>/pyvenv`, where setup.sh puts it.
//!
//! Run: `bash scripts/setup.sh parsers && cargo test -p lagkit --test ios_parsers`

mod common;

use common::switch::{
    bond_status, flags, show, show_text, start, start_switch, switch_ports, tmpdir, write,
};
use common::TmpDir;
use lagkit_testnet::{ping, wait_until, Lab};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// The commands parsed, as the tools' lookups write them.
const COMMANDS: &[&str] = &[
    "show etherchannel summary",
    "show etherchannel load-balancing",
    "show etherchannel load-balance",
    "show etherchannel 1 detail",
    "show etherchannel 1 port-channel",
    "show etherchannel protocol",
    "show lacp neighbor",
    "show lacp neighbor detail",
    "show lacp sys-id",
    "show lacp counters",
    "show lacp internal",
    "show pagp neighbor",
    "show pagp counters",
    "show pagp internal",
    "show interfaces counters",
    "show interfaces status",
    "show mac address-table",
    "show running-config",
    "show storm-control",
];

fn venv_python() -> PathBuf {
    let venv = std::env::var_os("LAGKIT_PYVENV").map_or_else(
        || {
            PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
                .parent()
                .expect("the target dir")
                .join("pyvenv")
        },
        PathBuf::from,
    );
    let py = venv.join("bin/python");
    assert!(
        py.exists() && venv.join(".lagkit-pins").exists(),
        "no IOS parsers' venv at {}: make it with `bash scripts/setup.sh parsers` (same CARGO_TARGET_DIR), or point LAGKIT_PYVENV at one with pyats, genie and ntc-templates",
        venv.display()
    );
    py
}

/// Hex digits of a MAC, lower case: `02:00:..` and `0200.00..` compare.
fn hex(mac: &str) -> String {
    mac.chars()
        .filter(|c| c.is_ascii_hexdigit())
        .collect::<String>()
        .to_ascii_lowercase()
}

fn bond_toml(members: &[&str], extra: &str, addr: &str) -> String {
    let m: Vec<String> = members.iter().map(|m| format!("\"{m}\"")).collect();
    format!(
        "name = \"bond0\"\nmembers = [{}]\naddress = [\"{addr}\"]\n{extra}",
        m.join(", ")
    )
}

const CONFIG: &str = "hostname core\n\
port-channel load-balance src-dst-ip\n\
interface range gi1/1 - 4\n channel-group 1 mode active\n lacp rate fast\n\
interface gi1/4\n mtu 9216\n\
interface port-channel 1\n lacp max-bundle 2\n\
interface range gi1/5 - 6\n channel-group 2 mode desirable\n\
interface range gi1/7 - 8\n channel-group 3 mode on\n\
interface gi1/9\n channel-group 4 mode active\n lacp rate fast\n\
 storm-control broadcast level 20.00 10.00\n storm-control unicast level pps 2k\n";

const PORTS: &[&str] = &[
    "Gi1/1=a1", "Gi1/2=a2", "Gi1/3=a3", "Gi1/4=a4", "Gi1/5=b1", "Gi1/6=b2", "Gi1/7=c1", "Gi1/8=c2",
    "Gi1/9=h0",
];

/// One command's result from ios_parsers.py.
fn parsed<'a>(all: &'a Value, cmd: &str) -> &'a Value {
    let r = &all[cmd];
    assert!(
        r.get("genie_error").is_none() && r.get("ntc_error").is_none(),
        "{cmd}: a parser failed on the switch's text: {r}"
    );
    r
}

/// A member of a Genie `interfaces -> Port-channelN -> members` tree.
fn member<'a>(g: &'a Value, po: u32, port: &str) -> &'a Value {
    let m = &g["interfaces"][format!("Port-channel{po}")]["members"][port];
    assert!(!m.is_null(), "no {port} in Port-channel{po}: {g}");
    m
}

#[test]
fn genie_and_ntc_templates_read_every_show_command() {
    let Some(mut lab) = Lab::new("ios_parsers") else {
        return;
    };
    let python = venv_python();
    let (sw, a, b, c, h) = (
        lab.netns(),
        lab.netns(),
        lab.netns(),
        lab.netns(),
        lab.netns(),
    );
    for i in 1..=4 {
        lab.veth(&a, &format!("eth{i}"), &sw, &format!("a{i}"));
    }
    for (ns, p) in [(&b, "b"), (&c, "c")] {
        lab.veth(ns, "eth1", &sw, &format!("{p}1"));
        lab.veth(ns, "eth2", &sw, &format!("{p}2"));
    }
    lab.veth(&h, "eth0", &sw, "h0");
    lab.sh(&["ip", "-n", &sw, "link", "set", "a4", "mtu", "9216"]);
    switch_ports(
        &lab,
        &sw,
        &["a1", "a2", "a3", "a4", "b1", "b2", "c1", "c2", "h0"],
        None,
    );
    lab.host(&h, "eth0", "10.0.31.4/24");
    let dir = TmpDir(tmpdir("parsers"));
    let _switch = start_switch(&sw, &dir.0, CONFIG, PORTS);
    let lacp = "mode = \"802.3ad\"\nlacp_rate = \"fast\"\n";
    let ca = write(
        &dir.0,
        "a.toml",
        &bond_toml(&["eth1", "eth2", "eth3", "eth4"], lacp, "10.0.31.1/24"),
    );
    let pagp = "mode = \"balance-xor\"\nxmit_hash_policy = \"layer3+4\"\npagp = \"desirable\"\n";
    let cb = write(
        &dir.0,
        "b.toml",
        &bond_toml(&["eth1", "eth2"], pagp, "10.0.31.2/24"),
    );
    let on = "mode = \"balance-xor\"\nxmit_hash_policy = \"layer3+4\"\n";
    let cc = write(
        &dir.0,
        "c.toml",
        &bond_toml(&["eth1", "eth2"], on, "10.0.31.3/24"),
    );
    let _ba = start(&a, &["up", ca.to_str().unwrap()], &dir.0.join("a.log"));
    let _bb = start(&b, &["up", cb.to_str().unwrap()], &dir.0.join("b.log"));
    let _bc = start(&c, &["up", cc.to_str().unwrap()], &dir.0.join("c.log"));
    wait_until(
        "Po1 P P H s, Po2 P P, Po3 P P, Po4 I",
        Duration::from_secs(40),
        || {
            flags(&sw, 1) == ["P", "P", "H", "s"]
                && flags(&sw, 2) == ["P", "P"]
                && flags(&sw, 3) == ["P", "P"]
                && flags(&sw, 4) == ["I"]
        },
    );
    // Traffic through every kind of port: frames in and out move.
    for dst in ["10.0.31.1", "10.0.31.2", "10.0.31.3"] {
        let p = ping(&h, dst, 3);
        assert_eq!(p.received, 3, "{dst}: {p:?}");
    }
    let (sa, sb) = (bond_status(&a), bond_status(&b));
    let bond_a_mac = hex(sa["lacp"]["system_mac"]
        .as_str()
        .expect("bond a's LACP system"));
    let bond_a_key = sa["lacp"]["actor_key"].as_u64().expect("bond a's key");
    let bond_b_dev = hex(sb["pagp"]["device_id"]
        .as_str()
        .expect("bond b's PAgP device id"));
    let link = lab.sh(&["ip", "-n", &h, "-br", "link", "show", "eth0"]);
    let h_mac = hex(link.split_whitespace().nth(2).unwrap_or(""));

    // Every command's text, then both tool sets over it.
    let mut outputs = serde_json::Map::new();
    for cmd in COMMANDS {
        let words: Vec<&str> = cmd.split_whitespace().skip(1).collect();
        let text = show_text(&sw, &words);
        assert!(!text.trim().is_empty(), "{cmd}: no text");
        outputs.insert(cmd.to_string(), Value::String(text));
    }
    let input = write(
        &dir.0,
        "outputs.json",
        &serde_json::to_string(&outputs).unwrap(),
    );
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/ios_parsers.py");
    let out = Command::new(&python)
        .arg(&script)
        .arg(&input)
        .output()
        .expect("the venv's python runs");
    assert!(
        out.status.success(),
        "ios_parsers.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all: Value = serde_json::from_slice(&out.stdout).expect("ios_parsers.py prints JSON");
    // LAGKIT_PARSERS_OUT=DIR keeps the texts and what the tools made of them.
    if let Some(keep) = std::env::var_os("LAGKIT_PARSERS_OUT") {
        let keep = PathBuf::from(keep);
        let _ = std::fs::create_dir_all(&keep);
        let _ = std::fs::copy(&input, keep.join("outputs.json"));
        let _ = std::fs::write(keep.join("parsed.json"), &out.stdout);
    }

    // -- show etherchannel summary: both.
    let r = parsed(&all, "show etherchannel summary");
    let g = &r["genie"];
    for (po, port, flag) in [
        (1, "GigabitEthernet1/1", "P"),
        (1, "GigabitEthernet1/2", "P"),
        (1, "GigabitEthernet1/3", "H"),
        (1, "GigabitEthernet1/4", "s"),
        (2, "GigabitEthernet1/5", "P"),
        (3, "GigabitEthernet1/8", "P"),
        (4, "GigabitEthernet1/9", "I"),
    ] {
        assert_eq!(member(g, po, port)["flags"], flag, "{po} {port}: {g}");
    }
    assert_eq!(g["interfaces"]["Port-channel1"]["protocol"], "lacp");
    assert_eq!(g["interfaces"]["Port-channel2"]["protocol"], "pagp");
    assert_eq!(g["interfaces"]["Port-channel1"]["flags"], "SU");
    assert_eq!(g["number_of_lag_in_use"], 4, "{g}");
    let ntc = r["ntc"]
        .as_array()
        .expect("ntc-templates reads the summary");
    let po1 = ntc.iter().find(|x| x["group"] == "1").expect("group 1");
    assert_eq!(po1["bundle_protocol"], "LACP", "{po1}");
    assert_eq!(
        po1["member_interface_status"],
        serde_json::json!(["P", "P", "H", "s"]),
        "{po1}"
    );
    let po4 = ntc.iter().find(|x| x["group"] == "4").expect("group 4");
    assert_eq!(
        po4["member_interface"],
        serde_json::json!(["Gi1/9"]),
        "{po4}"
    );

    // -- show lacp neighbor: the bond's system, its key; admin key and age present.
    let g = &parsed(&all, "show lacp neighbor")["genie"];
    for port in [
        "GigabitEthernet1/1",
        "GigabitEthernet1/2",
        "GigabitEthernet1/3",
    ] {
        let m = member(g, 1, port);
        assert_eq!(hex(m["partner_id"].as_str().unwrap()), bond_a_mac, "{m}");
        assert_eq!(m["oper_key"], bond_a_key, "{m}");
        assert_eq!(m["admin_key"], 0, "{m}");
        assert_eq!(m["activity"], "active", "{m}");
        assert!(
            m["age"].as_u64().is_some_and(|s| s < 10),
            "fast LACPDUs: {m}"
        );
        assert!(m["port_num"].as_u64().is_some_and(|n| n > 0), "{m}");
    }
    // The host speaks no LACP: no partner system.
    assert_eq!(
        member(g, 4, "GigabitEthernet1/9")["partner_id"],
        "0000.0000.0000"
    );

    // -- show lacp neighbor detail.
    let g = &parsed(&all, "show lacp neighbor detail")["genie"];
    let m = member(g, 1, "GigabitEthernet1/1");
    assert!(
        hex(m["system_id"].as_str().unwrap()).ends_with(&bond_a_mac),
        "{m}"
    );
    assert_eq!(
        (m["collecting"].clone(), m["distributing"].clone()),
        (Value::Bool(true), Value::Bool(true)),
        "{m}"
    );
    assert_eq!(m["timeout"], "Short", "{m}");

    // -- show lacp internal: states, keys (the channel number), port numbers.
    let g = &parsed(&all, "show lacp internal")["genie"];
    for (port, state) in [
        ("GigabitEthernet1/1", "bndl"),
        ("GigabitEthernet1/3", "hot-sby"),
        ("GigabitEthernet1/4", "susp"),
    ] {
        let m = member(g, 1, port);
        assert_eq!(m["state"], state, "{m}");
        assert_eq!(
            (m["admin_key"].as_u64(), m["oper_key"].as_u64()),
            (Some(1), Some(1)),
            "{m}"
        );
        assert_eq!(m["lacp_port_priority"], 32768, "{m}");
    }
    let m = member(g, 4, "GigabitEthernet1/9");
    assert_eq!(
        (m["state"].as_str(), m["oper_key"].as_u64()),
        (Some("indep"), Some(4)),
        "{m}"
    );

    // -- show lacp sys-id: the system the bond sees as its partner.
    let g = &parsed(&all, "show lacp sys-id")["genie"];
    assert_eq!(g["system_priority"], 32768, "{g}");
    let sys = hex(g["system_id_mac"].as_str().unwrap());
    assert_eq!(
        Some(sys),
        sa["lacp"]["partner_mac"].as_str().map(hex),
        "{sa}"
    );

    // -- show lacp counters: LACPDUs both ways on the bundled members.
    let g = &parsed(&all, "show lacp counters")["genie"];
    let c = &member(g, 1, "GigabitEthernet1/1")["counters"];
    assert!(
        c["lacp_in_pkts"].as_u64() > Some(0) && c["lacp_out_pkts"].as_u64() > Some(0),
        "{c}"
    );
    let c = &member(g, 4, "GigabitEthernet1/9")["counters"];
    assert_eq!(c["lacp_in_pkts"], 0, "the host sends none: {c}");

    // -- PAgP: the bond's device id, Information PDUs both ways.
    let g = &parsed(&all, "show pagp neighbor")["genie"];
    for port in ["GigabitEthernet1/5", "GigabitEthernet1/6"] {
        let m = member(g, 2, port);
        assert_eq!(hex(m["partner_id"].as_str().unwrap()), bond_b_dev, "{m}");
        assert!(
            m["flags"].as_str().unwrap().contains('C'),
            "consistent: {m}"
        );
        assert!(m["age"].as_u64().is_some_and(|s| s < 60), "{m}");
    }
    let g = &parsed(&all, "show pagp counters")["genie"];
    let c = &member(g, 2, "GigabitEthernet1/5")["counters"];
    assert!(
        c["information_in_pkts"].as_u64() > Some(0) && c["information_out_pkts"].as_u64() > Some(0),
        "{c}"
    );
    let g = &parsed(&all, "show pagp internal")["genie"];
    let m = member(g, 2, "GigabitEthernet1/5");
    assert_eq!(
        (
            m["state"].as_str(),
            m["group_ifindex"].as_u64(),
            m["partner_count"].as_u64()
        ),
        (Some("U6/S7"), Some(2), Some(1)),
        "{m}"
    );

    // -- show etherchannel 1 detail (Genie's IOS-XE parser).
    let g = &parsed(&all, "show etherchannel 1 detail")["genie"];
    assert_eq!(
        (g["protocol"].as_str(), g["ports"].as_u64()),
        (Some("LACP"), Some(4)),
        "{g}"
    );
    let p = &g["port"]["GigabitEthernet1/1"];
    assert!(p["port_state"].as_str().unwrap().contains("In-Bndl"), "{p}");
    let pi = &p["partner_information"]["port"]["GigabitEthernet1/1"];
    assert_eq!(hex(pi["dev_id"].as_str().unwrap()), bond_a_mac, "{p}");
    assert!(
        g["port"]["GigabitEthernet1/4"]["port_state"]
            .as_str()
            .unwrap()
            .contains("Suspend"),
        "{g}"
    );
    let pc = &g["port_channel"]["Po1"];
    assert_eq!(
        (pc["number_of_ports"].as_u64(), pc["hot_standby"].as_str()),
        (Some(2), Some("GigabitEthernet1/3")),
        "{pc}"
    );

    let g = &parsed(&all, "show etherchannel 1 port-channel")["genie"];
    let pc = &g["port_channel"]["Po1"];
    assert_eq!(
        (pc["number_of_ports"].as_u64(), pc["protocol"].as_str()),
        (Some(2), Some("LACP")),
        "{g}"
    );
    assert_eq!(pc["ports"]["Gi1/1"]["bits"], 4, "{g}");
    let g = &parsed(&all, "show etherchannel protocol")["genie"];
    assert_eq!(g["group"]["1"]["protocol"], "LACP", "{g}");
    assert_eq!(g["group"]["2"]["protocol"], "PAgP", "{g}");
    assert_eq!(g["group"]["3"]["protocol"], "Mode ON", "{g}");

    // -- load-balancing.
    let g = &parsed(&all, "show etherchannel load-balancing")["genie"];
    assert_eq!(g["global_lb_method"], "src-dst-ip", "{g}");
    assert!(
        g["port_channel"]["Port-channel1"]["lb_method"]
            .as_str()
            .unwrap()
            .starts_with("src-dst-ip"),
        "{g}"
    );

    // -- interfaces counters: the host's pings in and out of Gi1/9.
    let g = &parsed(&all, "show interfaces counters")["genie"];
    let gi9 = &g["interface"]["GigabitEthernet1/9"];
    assert!(
        gi9["in"]["ucast_pkts"].as_u64() >= Some(3) && gi9["in"]["bcast_pkts"].as_u64() > Some(0),
        "{gi9}"
    );
    assert!(
        gi9["out"]["ucast_pkts"].as_u64() >= Some(3) && gi9["in"]["octets"].as_u64() > Some(0),
        "{gi9}"
    );
    assert!(
        gi9["out"]["mcast_pkts"].as_u64() > Some(0),
        "LACPDUs sent: {gi9}"
    );

    // -- storm-control: Genie (IOS-XE's layout; ntc-templates has none).
    let g = &parsed(&all, "show storm-control")["genie"]["traffic_type"];
    let b = &g["B"]["interfaces"]["Gi1/9"];
    assert_eq!(
        (
            b["state"].as_str(),
            b["upper"].as_f64(),
            b["lower"].as_f64()
        ),
        (Some("Forwarding"), Some(20.0), Some(10.0)),
        "{g}"
    );
    assert_eq!(g["U"]["interfaces"]["Gi1/9"]["upper"], "2k", "{g}");

    // -- interfaces status: both.
    let r = parsed(&all, "show interfaces status");
    let st = &r["genie"]["interfaces"];
    assert_eq!(st["GigabitEthernet1/1"]["status"], "connected", "{st}");
    assert_eq!(st["GigabitEthernet1/4"]["status"], "suspended", "{st}");
    assert_eq!(st["GigabitEthernet1/9"]["vlan"], "1", "{st}");
    let rows = r["ntc"].as_array().expect("ntc-templates reads the status");
    let gi4 = rows.iter().find(|x| x["port"] == "Gi1/4").expect("Gi1/4");
    assert_eq!(gi4["status"], "suspended", "{gi4}");
    assert_eq!(rows.len(), 9 + 4, "9 ports, 4 port-channels: {rows:?}");

    // -- mac address-table: both find the host on Gi1/9.
    let r = parsed(&all, "show mac address-table");
    let dotted = format!("{}.{}.{}", &h_mac[0..4], &h_mac[4..8], &h_mac[8..12]);
    let e = &r["genie"]["mac_table"]["vlans"]["1"]["mac_addresses"][&dotted];
    assert!(
        !e["interfaces"]["GigabitEthernet1/9"].is_null(),
        "{}",
        r["genie"]
    );
    let rows = r["ntc"].as_array().expect("ntc-templates reads the table");
    assert!(
        rows.iter()
            .any(|x| x["destination_address"] == dotted.as_str()
                && x["destination_port"] == serde_json::json!(["Gi1/9"])),
        "{rows:?}"
    );

    // -- What each tool set reads, for the record (docs/reference/ios.md).
    for cmd in COMMANDS {
        let r = &all[*cmd];
        eprintln!(
            "{cmd}: genie {}, ntc-templates {}",
            r["genie_parser"]
                .as_str()
                .unwrap_or(if r["genie"].is_null() { "-" } else { "yes" }),
            r["ntc"]
                .as_array()
                .map_or("-".to_string(), |rows| format!("{} rows", rows.len()))
        );
    }

    // -- lagkit check reads this switch's own show output, pasted as a
    // terminal records it, against bond a's `lagkit status --json`: every
    // row read, the partner and key agree, and only the two members the
    // switch left out (H, s) are findings.
    let mut session = String::new();
    for cmd in [
        "show etherchannel summary",
        "show etherchannel 1 detail",
        "show lacp neighbor",
        "show lacp sys-id",
        "show lacp internal",
        "show lacp counters",
        "show pagp neighbor",
        "show interfaces status",
        "show interfaces counters",
    ] {
        session.push_str(&format!("core#{cmd}\n"));
        session.push_str(outputs[cmd].as_str().unwrap());
        if !session.ends_with('\n') {
            session.push('\n');
        }
    }
    session.push_str("core#\n");
    let session_file = write(&dir.0, "session.txt", &session);
    let status_file = write(&dir.0, "bond-a.json", &sa.to_string());
    let (code, out, err) = common::lagkit(
        "check",
        &[
            "--json",
            session_file.to_str().unwrap(),
            status_file.to_str().unwrap(),
        ],
    );
    let report: Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("check --json: {e}: {out} {err}"));
    assert!(
        report["show_unread"]
            .as_array()
            .is_none_or(|u| u.iter().all(|u| u["severity"] != "warning")),
        "every row of the switch's own output is read: {report}"
    );
    let findings = report["findings"].as_array().expect("findings");
    let codes: Vec<(&str, &str)> = findings
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap_or(""),
                f["reason"].as_str().unwrap_or(""),
            )
        })
        .collect();
    for bad in [
        "partner-system-mismatch",
        "partner-key-mismatch",
        "show-mode-mismatch",
        "show-rate-mismatch",
    ] {
        assert!(
            codes.iter().all(|(c, _)| *c != bad),
            "{bad} on a lab that agrees: {codes:?}"
        );
    }
    let left_out: Vec<&str> = codes
        .iter()
        .filter(|(c, _)| *c == "show-member-not-bundled" || *c == "member-bundled-one-end")
        .map(|(_, r)| *r)
        .collect();
    for port in ["GigabitEthernet1/3", "GigabitEthernet1/4"] {
        assert!(
            left_out.iter().any(|r| r.contains(port)),
            "{port} is named as left out: {codes:?}"
        );
    }
    for port in ["GigabitEthernet1/1:", "GigabitEthernet1/2:"] {
        assert!(
            left_out.iter().all(|r| !r.contains(port)),
            "{port} is bundled on both ends: {codes:?}"
        );
    }
    // Warnings (the suspended and stand-alone members), no error.
    assert_eq!(code, 1, "{codes:?}");

    // -- IOS's filters through the shell's words.
    for words in [
        vec!["etherchannel", "summary", "|", "include", "Po1"],
        vec!["etherchannel", "summary", "|include", "Po1"],
    ] {
        let t = show_text(&sw, &words);
        assert_eq!(t.lines().count(), 1, "{words:?}: {t}");
        assert!(t.starts_with("1      Po1(SU)"), "{words:?}: {t}");
    }
    let t = show_text(
        &sw,
        &[
            "running-config",
            "|",
            "begin",
            "^interface GigabitEthernet1/9",
        ],
    );
    assert!(
        t.starts_with("interface GigabitEthernet1/9\n")
            && t.contains(" channel-group 4 mode active"),
        "{t}"
    );

    // -- running-config starts a second switch that is the same switch.
    let run = show_text(&sw, &["running-config"]);
    let sw2 = lab.netns();
    let peer = lab.netns();
    let mut ports2 = Vec::new();
    for (i, p) in PORTS.iter().enumerate() {
        let (name, _) = p.split_once('=').unwrap();
        let dev = format!("q{i}");
        lab.veth(&sw2, &dev, &peer, &format!("r{i}"));
        ports2.push(format!("{name}={dev}"));
    }
    lab.sh(&["ip", "-n", &sw2, "link", "set", "q3", "mtu", "9216"]);
    let qs: Vec<String> = (0..PORTS.len()).map(|i| format!("q{i}")).collect();
    switch_ports(
        &lab,
        &sw2,
        &qs.iter().map(String::as_str).collect::<Vec<_>>(),
        None,
    );
    let dir2 = TmpDir(tmpdir("parsers2"));
    let p2: Vec<&str> = ports2.iter().map(String::as_str).collect();
    let _switch2 = start_switch(&sw2, &dir2.0, &run, &p2);
    assert_eq!(
        show_text(&sw2, &["running-config"]),
        run,
        "the same running configuration"
    );
    let (s1, s2) = (
        show(&sw, &["etherchannel", "summary"]).unwrap(),
        show(&sw2, &["etherchannel", "summary"]).unwrap(),
    );
    let shape = |s: &Value| -> Vec<(Value, Value, Vec<Value>)> {
        s["channels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["channel"].clone(),
                    c["protocol"].clone(),
                    c["members"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|m| m["mode"].clone())
                        .collect(),
                )
            })
            .collect()
    };
    assert_eq!(shape(&s1), shape(&s2));
    assert_eq!(flags(&sw2, 1)[3], "s", "the MTU mismatch is kept");
    let log = std::fs::read_to_string(dir2.0.join("switch.log")).unwrap_or_default();
    assert!(!log.contains("line ignored"), "every line read: {log}");
}
