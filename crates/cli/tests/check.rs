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
