//! `lagkit check` as a user runs it: IBM's run-18 configuration, the exit
//! status by the worst finding, JSON, and unreadable input.

mod common;

fn check(args: &[&str]) -> (i32, String, String) {
    common::lagkit("check", args)
}

fn example(name: &str) -> String {
    common::example(&format!("check/{name}"))
}

#[test]
fn run_18_names_the_mtu_mismatch_and_exits_3() {
    let (code, out, err) = check(&[&example("server-bond.toml"), &example("run18-switch.cfg")]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        out.contains("run18-switch.cfg:9: error [mtu-mismatch]"),
        "{out}"
    );
    assert!(out.contains("Port-channel3 1500"), "{out}");
    assert!(out.contains("fix: set the same mtu"), "{out}");
    let (code, out, _) = check(&[
        &example("server-bond.toml"),
        &example("run18-switch.cfg"),
        "--json",
    ]);
    assert_eq!(code, 3);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["findings"][0]["severity"], "error");
    assert_eq!(v["exit"], 3);
}

#[test]
fn warnings_exit_1_and_a_clean_pair_exits_0() {
    let dir = std::env::temp_dir().join(format!("lkt-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sw = dir.join("sw.cfg");
    let fixed = std::fs::read_to_string(example("run18-switch.cfg"))
        .unwrap()
        .replace(
            "switchport access vlan 129\n",
            "switchport access vlan 129\nmtu 9216\n",
        );
    std::fs::write(&sw, &fixed).unwrap();
    let (code, out, _) = check(&[&example("server-bond.toml"), sw.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("no findings"), "{out}");
    std::fs::write(&sw, fixed.replace("src-dst-port", "src-dst-ip")).unwrap();
    let (code, out, _) = check(&[&example("server-bond.toml"), sw.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("switch-address-hash"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unreadable_input_exits_2_naming_file_and_line() {
    let dir = std::env::temp_dir().join(format!("lkt-check-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sw = dir.join("half.cfg");
    std::fs::write(&sw, "mtu 9216\nchannel-group 3 mode active\n").unwrap();
    let (code, _, err) = check(&[sw.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("half.cfg:1:") && err.contains("outside any interface"),
        "{err}"
    );
    let (code, _, err) = check(&[dir.join("none").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("none"), "{err}");
    std::fs::write(dir.join("empty"), "").unwrap();
    let (code, _, err) = check(&[dir.join("empty").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("not a dialect lagkit reads"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// /dev/zero, a sparse file of 2 GiB and an endless pipe are refused
/// within seconds, naming the input, the limit and the fix, and exit 2
/// (docs/reference/limits.md); `--json` gives the file apart.
#[test]
fn endless_and_huge_inputs_are_refused_at_once() {
    common::refuses_endless_and_huge_inputs("check", &[], "running-config", "a configuration");
    let (code, _, err) = check(&["/dev/zero", "--json"]);
    assert_eq!(code, 2);
    let v: serde_json::Value = serde_json::from_str(&err).expect("a JSON error");
    assert_eq!(v["file"], "/dev/zero");
    assert_eq!(v["error"], "not a text file (byte 0 is NUL)");
}

/// `lagkit switch` reads its IOS configuration with the limit `lagkit
/// check` reads it with: the same refusals, as fast.
#[test]
fn the_switch_refuses_endless_and_huge_configurations_at_once() {
    common::refuses_endless_and_huge_inputs(
        "switch",
        &["--port", "gi1/1=veth0", "--check"],
        "switch.cfg",
        "a configuration",
    );
}

/// Captures of what two LACP systems say (from `lagkit sim lacp --pcap`):
/// a healthy pair says nothing; passive facing passive sends nothing at
/// all, which is named; differing rates are named.
#[test]
fn lacpdus_from_a_capture() {
    let dir = std::env::temp_dir().join(format!("lkt-check-pdus-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sim = |a: &str, b: &str, name: &str| {
        let p = dir.join(name);
        let (code, out, err) = common::lagkit(
            "sim",
            &[
                "lacp",
                "--a",
                a,
                "--b",
                b,
                "--quiet",
                "--pcap",
                p.to_str().unwrap(),
            ],
        );
        assert!(code == 0 || code == 1, "{out}{err}");
        p
    };
    let good = sim("active,fast", "active,fast", "good.pcap");
    let (code, out, err) = check(&["--lacpdus", good.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let bad = sim("passive", "passive", "bad.pcap");
    let (code, out, _) = check(&["--lacpdus", bad.to_str().unwrap()]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("lacpdu-none"), "{out}");
    let rate = sim("active,fast", "active,slow", "rate.pcap");
    let (code, out, _) = check(&["--lacpdus", rate.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("lacpdu-rate-mismatch"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--live` asks the bonds running in the namespace: a fast bond facing a
/// slow partner is named, a namespace without bonds is an input error.
#[test]
fn live_bonds_say_what_their_partners_say() {
    use lagkit_testnet::{wait_until, Lab};
    use std::process::{Command, Stdio};
    use std::time::Duration;
    let Some(mut lab) = Lab::new("check_live") else {
        return;
    };
    let (na, nb) = (lab.netns(), lab.netns());
    lab.veth(&na, "a1", &nb, "b1");
    lab.veth(&na, "a2", &nb, "b2");
    let dir = std::env::temp_dir().join(format!("lkt-check-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut pids = Vec::new();
    for (ns, side, rate, addr) in [
        (&na, "a", "fast", "10.78.0.1/24"),
        (&nb, "b", "slow", "10.78.0.2/24"),
    ] {
        let cfg = dir.join(format!("{side}.toml"));
        std::fs::write(
            &cfg,
            format!("name = \"bond0\"\nmode = \"802.3ad\"\nmembers = [\"{side}1\", \"{side}2\"]\nlacp_rate = \"{rate}\"\naddress = [\"{addr}\"]\n"),
        )
        .unwrap();
        let child = Command::new("ip")
            .args(["netns", "exec", ns, env!("CARGO_BIN_EXE_lagkit"), "up"])
            .arg(&cfg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("lagkit up");
        lab.track_pid(child.id() as i32);
        pids.push(child);
    }
    let in_a = |args: &[&str]| {
        let o = Command::new("ip")
            .args(["netns", "exec", &na, env!("CARGO_BIN_EXE_lagkit"), "check"])
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    // Once the aggregate has formed, the rate mismatch is all that is left
    // (before, members are not yet bundled).
    let only_rate = || {
        let (code, out) = in_a(&["--live", "--json"]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
        let codes: Vec<String> = v["findings"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|f| f["code"].as_str().unwrap_or("").to_string())
                    .collect()
            })
            .unwrap_or_default();
        code == 1 && !codes.is_empty() && codes.iter().all(|c| c == "live-rate-mismatch")
    };
    wait_until(
        "only the rate mismatch is left",
        Duration::from_secs(20),
        only_rate,
    );
    let (code, out) = in_a(&["--live"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("asks for the fast rate, the partner for the slow rate"),
        "{out}"
    );
    drop(lab);
    for mut c in pids {
        let _ = c.wait();
    }
    let empty = Lab::new("check_live_none").unwrap();
    let mut e = empty;
    let ns = e.netns();
    let o = Command::new("ip")
        .args([
            "netns",
            "exec",
            &ns,
            env!("CARGO_BIN_EXE_lagkit"),
            "check",
            "--live",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no lagkit bond runs"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A netplan bond: a member's own MTU below the bond's is named at its
/// line; a `.link` giving bonds random MACs is named too; a netplan file
/// without bonds is an input error naming file and line.
#[test]
fn netplan_bond_and_a_link_file() {
    let (code, out, err) = check(&[&example("netplan-bond.yaml")]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("netplan-bond.yaml:8: warning [member-mtu-mismatch]"),
        "{out}"
    );
    assert!(
        out.contains("info [bond-mac-may-change]") && out.contains("machine-id"),
        "{out}"
    );
    let (code, out, _) = check(&[
        &example("netplan-bond.yaml"),
        &example("10-bond-random.link"),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("10-bond-random.link:7: warning [bond-mac-may-change]"),
        "{out}"
    );
    assert!(out.contains("MACAddressPolicy=none"), "{out}");
    let dir = std::env::temp_dir().join(format!("lkt-check-netplan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("50-cloud-init.yaml");
    std::fs::write(
        &f,
        "network:\n  version: 2\n  ethernets:\n    eth0:\n      dhcp4: true\n",
    )
    .unwrap();
    let (code, _, err) = check(&[f.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("50-cloud-init.yaml:1:") && err.contains("without bonds"),
        "{err}"
    );
    std::fs::write(
        &f,
        "network:\n  bonds:\n    bond0:\n      interfaces: [eth0\n",
    )
    .unwrap();
    let (code, _, err) = check(&[f.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("50-cloud-init.yaml:4:"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A bond over veths facing Open vSwitch's userspace datapath, as
/// `ovs-vsctl show` with `bond/show` and `lacp/show` tell it.
#[test]
fn veth_members_facing_a_userspace_datapath() {
    let (code, out, err) = check(&[
        &example("lab-veth-bond.toml"),
        &example("ovs-userspace.txt"),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("lab-veth-bond.toml:2: warning [offloads-to-userspace-peer]")
            && out.contains("ovs-userspace.txt:4"),
        "{out}"
    );
    assert!(
        out.contains("ethtool -K veth-a1 tx off tso off gso off"),
        "{out}"
    );
}

/// Two switches: `on` facing LACP is an error on the `on` end.
#[test]
fn switch_to_switch_on_facing_lacp() {
    let (code, out, err) = check(&[&example("switch-a-on.cfg"), &example("switch-b-lacp.cfg")]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        out.contains("switch-a-on.cfg:4: error [on-facing-protocol]")
            && out.contains("channel-group 10 mode active"),
        "{out}"
    );
}

/// The typo'd switch: `chanel-group` and `lacp rat` are not read, so its
/// port is in no channel; an 802.3ad bond facing it is an error, both
/// lines are named with the command meant, and `--strict` refuses them.
/// `lagkit switch --check` names the same lines and refuses the same way.
#[test]
fn misspelt_ios_lines_are_named_and_strict_refuses_them() {
    let dir = std::env::temp_dir().join(format!("lkt-check-typo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sw = dir.join("sw.ios");
    std::fs::write(
        &sw,
        "interface GigabitEthernet1/0/1\n switchport mode access\n chanel-group 1 mode active\n lacp rat fast\n",
    )
    .unwrap();
    let bond = dir.join("bond0.toml");
    std::fs::write(
        &bond,
        "name = \"bond0\"\nmode = \"802.3ad\"\nmembers = [\"eth0\", \"eth1\"]\nxmit_hash_policy = \"layer3+4\"\n",
    )
    .unwrap();
    let (sw, bond) = (sw.to_str().unwrap(), bond.to_str().unwrap());
    let (code, out, err) = check(&[bond, sw]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        err.contains(&format!("{sw}:3: warning")) && err.contains("did you mean `channel-group`?"),
        "{err}"
    );
    assert!(
        err.contains(&format!("{sw}:4: warning")) && err.contains("did you mean `lacp rate`?"),
        "{err}"
    );
    assert!(out.contains("error [bond-facing-no-channel]"), "{out}");
    assert!(out.contains("2 line(s) not read"), "{out}");
    let (code, out, err) = check(&[bond, sw, "--json"]);
    assert_eq!(code, 3, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let lines: Vec<i64> = v["unread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["line"].as_i64().unwrap())
        .collect();
    assert_eq!(lines, vec![3, 4], "{out}");
    assert_eq!(v["unread"][0]["hint"], "channel-group");
    assert_eq!(v["read"][1]["counts"]["interfaces"], 1, "{out}");
    let (code, out, err) = check(&[bond, sw, "--strict"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains(&format!("{sw}:3: error")), "{err}");
    assert!(
        !out.contains("bond-facing-no-channel"),
        "refused before the rules: {out}"
    );

    let (code, out, err) = common::lagkit("switch", &[sw, "--port", "Gi1/0/1=veth0", "--check"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("0 port-channels"), "{out}");
    assert!(out.contains("2 line(s) not read"), "{out}");
    assert!(
        err.contains(&format!("{sw}:3: warning")) && err.contains(&format!("{sw}:4: warning")),
        "{err}"
    );
    let (code, _, err) = common::lagkit(
        "switch",
        &[sw, "--port", "Gi1/0/1=veth0", "--check", "--strict"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&format!("{sw}:4: error")), "{err}");
    // A load-balance method Catalysts lack: both refuse it, at its line.
    let bad = dir.join("lb.ios");
    std::fs::write(
        &bad,
        "interface range gi1/1 - 2\n channel-group 1 mode active\nport-channel load-balance src-dst-prt\n",
    )
    .unwrap();
    let bad = bad.to_str().unwrap();
    let (code, _, err) = check(&[bond, bad]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("{bad}:3:")) && err.contains("not a Catalyst method"),
        "{err}"
    );
    let (code, _, err) = common::lagkit(
        "switch",
        &[bad, "--port", "gi1/1=a", "--port", "gi1/2=b", "--check"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("{bad}:3:")) && err.contains("not a Catalyst method"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A run that finds nothing says what it read and compared.
#[test]
fn a_clean_run_says_what_it_compared() {
    let dir = std::env::temp_dir().join(format!("lkt-check-clean-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sw = dir.join("sw.cfg");
    let fixed = std::fs::read_to_string(example("run18-switch.cfg"))
        .unwrap()
        .replace(
            "switchport access vlan 129\n",
            "switchport access vlan 129\nmtu 9216\n",
        );
    std::fs::write(&sw, &fixed).unwrap();
    let (code, out, err) = check(&[&example("server-bond.toml"), sw.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("no findings"), "{out}");
    assert!(out.contains("read: bond: 1 bond, 2 members"), "{out}");
    assert!(out.contains("switch: 3 interfaces, 1 channel"), "{out}");
    assert!(out.contains("bond bond0 facing"), "{out}");
    // A misspelt line that changes nothing checked still is no clean pass.
    std::fs::write(
        &sw,
        fixed.replace("no shut\n", "no shut\nspaning-tree portfast\n"),
    )
    .unwrap();
    let (code, out, err) = check(&[&example("server-bond.toml"), sw.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("no findings in what lagkit read, but 1 line(s) were not read"),
        "{out}"
    );
    assert!(err.contains("did you mean `spanning-tree`?"), "{err}");
    // Well-known lines are only counted.
    std::fs::write(
        &sw,
        fixed.replace("no shut\n", "no shut\nspanning-tree portfast\n"),
    )
    .unwrap();
    let (code, out, err) = check(&[&example("server-bond.toml"), sw.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains(
            "note: 4 lines outside what lagkit models were skipped (configure, spanning-tree)"
        ),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A Catalyst's `show lacp neighbor` whose partner is another server than
/// the bond's `/proc/net/bonding`: named with the show file's line and the
/// host file's.
#[test]
fn show_output_names_a_partner_system_mismatch_with_file_and_line() {
    let (show, proc_) = (example("show-lacp.txt"), example("proc-bonding.txt"));
    let (code, out, err) = check(&[&show, &proc_]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        out.contains("show-lacp.txt:12: error [partner-system-mismatch]: dist-b channel 10: GigabitEthernet1/0/47 hears LACP partner system 025a.0000.0c01"),
        "{out}"
    );
    assert!(out.contains("proc-bonding.txt:17)"), "{out}");
    assert!(
        out.contains("show-lacp.txt:13: error [partner-system-mismatch]"),
        "{out}"
    );
    assert!(
        out.contains("read: show output: 1 command, 1 channel, 2 members"),
        "{out}"
    );
    let (code, out, _) = check(&[&show, &proc_, "--json"]);
    assert_eq!(code, 3);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let f = &v["findings"][0];
    assert_eq!(f["code"], "partner-system-mismatch");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["loc"]["line"], 12);
    assert!(f["loc"]["file"]
        .as_str()
        .unwrap()
        .ends_with("show-lacp.txt"));
}

/// The whole session of the switch that is the bond's partner: nothing to
/// say; the commands it does not read are noted on stderr and in JSON.
#[test]
fn a_matching_show_session_gives_no_finding() {
    let (show, proc_) = (example("show-session.txt"), example("proc-bonding.txt"));
    let (code, out, err) = check(&[&show, &proc_]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("no findings"), "{out}");
    assert!(!out.contains("partner-system-mismatch"), "{out}");
    assert!(
        err.contains("show-session.txt:1: note: `terminal length 0`: not a show command"),
        "{err}"
    );
    assert!(
        err.contains(
            "show-session.txt:66: note: `show clock`: a show command lagkit does not read"
        ),
        "{err}"
    );
    let (code, out, _) = check(&[&show, &proc_, "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["findings"].as_array().map(Vec::len), Some(0));
    assert_eq!(v["show_unread"][1]["line"], 66);
    assert_eq!(v["show_unread"][1]["why"]["kind"], "command");
    // A suspended member is named with its reason, and the host's view.
    let (code, out, _) = check(&[&example("show-suspended.txt"), &proc_]);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("show-suspended.txt:97: warning [show-member-not-bundled]: dist-b channel 10: GigabitEthernet1/0/48 is suspended (s): its LACP partner is system 025a.0000.0c01 (line 53)"),
        "{out}"
    );
    assert!(out.contains("[member-bundled-one-end]"), "{out}");
}

/// `lagkit status --json` of a running lagkit bond, written by the status
/// types the daemon serves, read as the host's side.
#[test]
fn lagkit_status_json_is_the_host_side() {
    use lagkit_api::status::{BondStatus, LacpInfo, MemberLacp, MemberStatus};
    let member = |name: &str, port: u16, partner_port: u16, in_use: bool| MemberStatus {
        name: name.into(),
        mii_status: lagkit_api::status::MiiStatus::Up,
        speed_mbps: Some(1000),
        full_duplex: Some(true),
        link_failure_count: 0,
        permanent_hw_addr: "02:5a:00:00:0b:01".into(),
        transmitting: in_use,
        collecting: in_use,
        leaving: false,
        watchers: vec![("carrier".into(), true)],
        isolation: None,
        offloads: None,
        lacp: Some(MemberLacp {
            aggregator_id: Some(1),
            rx_state: "CURRENT".into(),
            mux_state: if in_use {
                "COLLECTING_DISTRIBUTING"
            } else {
                "ATTACHED"
            }
            .into(),
            selected: "SELECTED".into(),
            actor_port: port,
            actor_key: 9,
            actor_state: if in_use { 0x3f } else { 0x0f },
            partner_mac: "00:1b:54:c2:7a:80".into(),
            partner_port,
            partner_key: 10,
            partner_state: 0x3f,
            not_bundled: (!in_use).then(|| "waiting for the partner to sync".to_string()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let status = |in_use: bool| BondStatus {
        name: "bond0".into(),
        mode: lagkit_api::status::BondMode::Lacp,
        xmit_hash_policy: "layer3+4".into(),
        engine: lagkit_api::status::EngineKind::Userspace,
        engine_reason: "configured".into(),
        mii_status: lagkit_api::status::MiiStatus::Up,
        mac: "02:5a:00:00:0b:01".into(),
        mtu: 1500,
        miimon_ms: 100,
        updelay_ms: 0,
        downdelay_ms: 0,
        active_member: None,
        lacp: Some(LacpInfo {
            lacp_rate: lagkit_api::status::LacpRate::Fast,
            lacp_activity: lagkit_api::status::LacpActivity::Active,
            system_priority: 65535,
            system_mac: "02:5a:00:00:0b:01".into(),
            aggregator_id: Some(1),
            number_of_ports: 2,
            actor_key: Some(9),
            partner_key: Some(10),
            partner_mac: Some("00:1b:54:c2:7a:80".into()),
            partner_priority: Some(32768),
            ..Default::default()
        }),
        pagp: None,
        members: vec![member("a1", 1, 304, true), member("a2", 2, 305, in_use)],
        problems: vec![],
        datapath: None,
        ..Default::default()
    };
    let dir = std::env::temp_dir().join(format!("lkt-check-status-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("status.json");
    let show = example("show-session.txt");
    std::fs::write(
        &file,
        serde_json::to_string_pretty(&vec![status(true)]).unwrap(),
    )
    .unwrap();
    let (code, out, err) = check(&[&show, file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("bond: 1 bond, 2 members"), "{out}");
    // The switch bundles a link the bond does not use.
    std::fs::write(
        &file,
        serde_json::to_string_pretty(&vec![status(false)]).unwrap(),
    )
    .unwrap();
    let (code, out, _) = check(&[&show, file.to_str().unwrap()]);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("error [member-bundled-one-end]: dist-b channel 10 bundles GigabitEthernet1/0/48 but bond bond0 does not use a2 at the other end (")
            && out.contains("status.json:") && out.contains("waiting for the partner to sync"),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The example fleet: one switch, four hosts, each paired a different
/// way (LLDP from the host, a CSV map, a description, the switch's own
/// LLDP table), and each pair checked against its own channel.
#[test]
fn a_fleet_directory_pairs_every_host_and_checks_each_pair() {
    let dir = example("fleet");
    let (code, out, err) = check(&[&dir]);
    assert_eq!(code, 3, "{out}{err}");
    for line in [
        "web1 bond0 - sw1 Port-channel1 (by LLDP: ",
        "web2 bond0 - sw1 Port-channel3 (by map: ",
        "db1 bond0 - sw1 Port-channel2 (by description: ",
        "error [fleet-port-unchannelled]: LLDP shows web3 eth0 facing sw1 GigabitEthernet1/0/7",
        "4 host(s), 1 switch(es): 3 pair(s) checked (1 by map, 1 by LLDP, 1 by description), 0 bond(s) unpaired; 3 error(s)",
    ] {
        assert!(out.contains(line), "{line:?} not in\n{out}");
    }
    // db1's jumbo frames meet Port-channel2's default MTU; web1's do not
    // (its channel is at 9216): each pair sees its own channel.
    assert!(
        out.contains("db1.netplan.yaml:11: error [mtu-host-above-switch]"),
        "{out}"
    );
    let (code, out, _) = check(&[&dir, "--json"]);
    assert_eq!(code, 3);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        (v["hosts"].as_u64(), v["switches"].as_u64()),
        (Some(4), Some(1))
    );
    let pairs = v["pairs"].as_array().unwrap();
    let via: Vec<&str> = pairs.iter().map(|p| p["via"].as_str().unwrap()).collect();
    assert_eq!(via, ["name", "lldp", "map"]);
    assert!(pairs
        .iter()
        .all(|p| p["findings"].is_array() && p["channel"].is_u64()));
    // Quoted globs are rooted where their wildcards start: web1 owns
    // FLEET/*/* 's web1/bond.toml and web1/lldp.txt.
    let (code, glob, err) = check(&[&format!("{dir}/*"), &format!("{dir}/*/*")]);
    assert_eq!(code, 3, "{glob}{err}");
    let (_, whole, _) = check(&[&dir]);
    assert_eq!(glob, whole);
}

/// A fleet with an unreadable file still checks the rest, names the file
/// and exits 2; a glob matching nothing is refused.
#[test]
fn a_fleet_names_what_it_cannot_read_and_never_passes_silently() {
    let dir =
        common::TmpDir(std::env::temp_dir().join(format!("lkt-fleet-bad-{}", std::process::id())));
    std::fs::create_dir_all(dir.0.join("web1")).unwrap();
    let src = example("fleet");
    for f in ["sw1.cfg", "web1/bond.toml", "web1/lldp.txt"] {
        std::fs::copy(format!("{src}/{f}"), dir.0.join(f)).unwrap();
    }
    std::fs::write(dir.0.join("notes.txt"), "remember the milk\n").unwrap();
    std::fs::write(
        dir.0.join("map.csv"),
        "host,switch,port\nweb9,sw1,Gi1/0/99x\n",
    )
    .unwrap();
    let d = dir.0.to_str().unwrap();
    let (code, out, err) = check(&[d]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("notes.txt: not a dialect lagkit reads"),
        "{err}"
    );
    assert!(err.contains("map.csv:2: "), "{err}");
    assert!(out.contains("web1 bond0 - sw1 Port-channel1"), "{out}");
    assert!(out.contains("2 file(s) unreadable (named above)"), "{out}");
    let (code, _, err) = check(&[&format!("{d}/*.nothing")]);
    assert_eq!(code, 2);
    assert!(err.contains("the glob matches no file"), "{err}");
    let (code, _, err) = check(&[d, "--channel", "1"]);
    assert_eq!(code, 2, "{err}");
}

/// A generated fleet of 2000 hosts on 50 switches, each host with its
/// bond and an LLDP table: every bond is paired and checked, in bounded
/// memory (the texts are dropped as they are read).
#[test]
fn a_fleet_of_2000_hosts_is_checked_in_bounded_memory() {
    use std::fmt::Write;
    let dir =
        common::TmpDir(std::env::temp_dir().join(format!("lkt-fleet-big-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    let (switches, per) = (50, 40);
    for s in 0..switches {
        let mut cfg = format!("hostname tor{s}\nport-channel load-balance src-dst-port\n");
        for c in 1..=per {
            let _ = write!(
                cfg,
                "interface range gi1/0/{} - {}\n channel-group {c} mode active\n",
                2 * c - 1,
                2 * c
            );
        }
        std::fs::write(dir.0.join(format!("tor{s}.cfg")), cfg).unwrap();
    }
    for h in 0..switches * per {
        let (s, c) = (h / per, h % per + 1);
        let host = dir.0.join(format!("host{h}"));
        std::fs::create_dir_all(&host).unwrap();
        std::fs::write(
            host.join("bond.toml"),
            "name = \"bond0\"\nmode = \"802.3ad\"\nmembers = [\"eth0\", \"eth1\"]\nxmit_hash_policy = \"layer3+4\"\n",
        )
        .unwrap();
        let mut lldp = String::new();
        for (i, p) in [2 * c - 1, 2 * c].into_iter().enumerate() {
            let _ = write!(
                lldp,
                "lldp.eth{i}.chassis.name=tor{s}.dc1\nlldp.eth{i}.port.ifname=Gi1/0/{p}\n"
            );
        }
        std::fs::write(host.join("lldp.txt"), lldp).unwrap();
    }
    let (code, out, err) = check(&[dir.0.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}{}", &out[out.len().saturating_sub(2000)..]);
    assert!(
        out.contains("2000 host(s), 50 switch(es): 2000 pair(s) checked (0 by map, 2000 by LLDP, 0 by description), 0 bond(s) unpaired; 0 error(s), 0 warning(s)"),
        "{}",
        &out[out.len().saturating_sub(500)..]
    );
    assert_eq!(out.matches(": no findings").count(), 2000);
    // The largest child so far (this one) kept its resident set small.
    let ru = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .expect("getrusage");
    let mib = ru.max_rss() / 1024;
    eprintln!("peak resident set of lagkit check over 4050 files: {mib} MiB");
    assert!(mib < 256, "lagkit check held {mib} MiB");
}
