//! `lagkit lab run` on the two-hosts example, as a user runs it (as root,
//! under a name of its own so that it never meets a lab a user or another
//! test brought up): the report says why each host's receive balance is
//! what it is, and measures the workload against each direction's
//! capacity. Skips with a message when not root or without iperf3; fails
//! instead when `CI` is set.

mod common;

fn skip(why: &str) -> bool {
    assert!(std::env::var_os("CI").is_none(), "{why}");
    eprintln!("SKIP lab report: {why}");
    true
}

#[test]
fn the_two_hosts_report_names_the_parity_and_each_directions_capacity() {
    if !nix::unistd::geteuid().is_root() && skip("needs root") {
        return;
    }
    let has_iperf3 = std::process::Command::new("iperf3")
        .arg("--version")
        .output()
        .is_ok();
    if !has_iperf3 && skip("iperf3 missing (apt-get install iperf3)") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("lkt-lab-report-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(common::example("lab/two-hosts.toml")).unwrap();
    let name = format!("lr{}", std::process::id());
    let text = text
        .replacen("name = \"two-hosts\"", &format!("name = \"{name}\""), 1)
        .replacen("seconds = 8", "seconds = 4", 1);
    let topo = dir.join("two-hosts.toml");
    std::fs::write(&topo, text).unwrap();
    let report = dir.join("report");
    let (code, out, err) = common::lagkit(
        "lab",
        &[
            "run",
            topo.to_str().unwrap(),
            "--quiet",
            "--report",
            report.to_str().unwrap(),
        ],
    );
    let left: Vec<String> = String::from_utf8_lossy(
        &std::process::Command::new("ip")
            .args(["netns", "list"])
            .output()
            .unwrap()
            .stdout,
    )
    .lines()
    .filter(|l| l.contains(&format!("lklab-{name}-")))
    .map(String::from)
    .collect();
    assert!(left.is_empty(), "namespaces left: {left:?}");
    assert_eq!(code, 0, "{out}\n{err}");
    // Linux's even client ports against iperf3's port 5201: every XOR odd,
    // one member per receiving bond, and the report says so for both.
    for host in ["h1", "h2"] {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("run 1: why {host} rx is ")))
            .unwrap_or_else(|| panic!("no cause for {host} rx:\n{out}"));
        assert!(
            line.contains("port-channel load-balance src-dst-port"),
            "{line}"
        );
        assert!(line.contains("ports of one parity"), "{line}");
        assert!(
            line.contains("fix: no load-balance method of this switch sees past the parity"),
            "{line}"
        );
    }
    // Both ways: each direction's capacity, and the limit per direction.
    assert!(
        out.contains("run 1: capacity 200 Mbit/s each way (2 × 100 Mbit/s): h1 -> h2 "),
        "{out}"
    );
    let row = out
        .lines()
        .find(|l| l.trim_start().starts_with("1 "))
        .unwrap();
    assert!(
        row.split_whitespace()
            .any(|w| w.matches('%').count() == 2 && w.contains('/')),
        "{row}"
    );
    let html = std::fs::read_to_string(report.join("report.html")).unwrap();
    assert!(html.contains("why h2 rx is "), "the page has the cause");
    let json: lagkit_lab::report::Report =
        serde_json::from_str(&std::fs::read_to_string(report.join("report.json")).unwrap())
            .unwrap();
    let run = &json.runs[0];
    assert_eq!(
        run.workload.as_ref().unwrap().connections.len(),
        16,
        "8 streams each way"
    );
    assert!(run
        .balance_why
        .iter()
        .any(|w| w.host == "h2" && w.direction == "rx"));
    std::fs::remove_dir_all(&dir).unwrap();
}
