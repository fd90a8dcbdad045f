//! `lagkit plan` as a user runs it: the shipped LPM example, JSON output,
//! charts, and bad input.

mod common;

fn plan(args: &[&str]) -> (i32, String, String) {
    common::lagkit("plan", args)
}

fn example() -> String {
    common::example("plan/lpm.csv")
}

/// IBM's LPM pattern under AIX src_dst_port: all data on one adapter, the
/// sequential ports named, strong or adaptive recommended.
#[test]
fn lpm_example_names_the_port_pattern_and_recommends_adaptive() {
    let (code, out, err) = plan(&[&example(), "--host-hash", "aix:src_dst_port", "--explain"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("0.50 of capacity"), "{out}");
    assert!(out.contains("source ports are sequential"), "{out}");
    assert!(
        out.contains("(source port 32789 + destination port 32792) / 2 = 32790"),
        "{out}"
    );
    assert!(out.contains("recommendation: adaptive"), "{out}");
}

#[test]
fn json_and_charts() {
    let dir = std::env::temp_dir().join(format!("lkt-plan-cli-{}", std::process::id()));
    let (code, out, err) = plan(&[
        &example(),
        "--host-hash",
        "layer3+4",
        "--links",
        "4",
        "--json",
        "--svg",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let d = &v["directions"][0];
    assert_eq!(d["prediction"]["spread"], "layer3+4");
    assert_eq!(d["prediction"]["links"].as_array().unwrap().len(), 4);
    assert_eq!(d["alternatives"].as_array().unwrap().len(), 26);
    let svg = std::fs::read_to_string(dir.join("plan-out.svg")).expect("chart");
    assert!(svg.starts_with("<svg"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_says_where_and_exits_2() {
    let dir = std::env::temp_dir().join(format!("lkt-plan-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("flows.csv");
    std::fs::write(
        &f,
        "src,dst,sport,dport\n10.0.0.1,10.0.0.2,1,2\n10.0.0.1,10.0.0.300,1,2\n",
    )
    .unwrap();
    let (code, _, err) = plan(&[f.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("flows.csv:3: column 2 (dst): \"10.0.0.300\" is not an IP address"),
        "{err}"
    );
    // With --json the same failure is one JSON object on stderr, with the
    // file and the line apart, and the same exit status.
    let (code, out, err) = plan(&[f.to_str().unwrap(), "--json"]);
    assert_eq!(code, 2);
    assert!(out.is_empty(), "{out}");
    let v: serde_json::Value = serde_json::from_str(&err).expect("a JSON error");
    assert!(
        v["error"].as_str().unwrap().contains("column 2 (dst)"),
        "{v}"
    );
    assert!(v["file"].as_str().unwrap().ends_with("flows.csv"), "{v}");
    assert_eq!(v["line"], 3);
    // A bad port names its column and the range.
    std::fs::write(
        &f,
        "proto,src,sport,dst,dport\ntcp,10.0.0.1,1,10.0.0.2,80\ntcp,10.0.0.1,1,10.0.0.2,8o80\n",
    )
    .unwrap();
    let (code, _, err) = plan(&[f.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("flows.csv:3: column 5 (dport): \"8o80\" is not a port number (0-65535)"),
        "{err}"
    );
    let (code, _, err) = plan(&[f.to_str().unwrap(), "--host-hash", "layer9"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--host-hash: unknown transmit hash policy"),
        "{err}"
    );
    let (code, _, err) = plan(&[dir.join("missing.csv").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("missing.csv"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The lpm scenario planned from its topology, beside the committed run.
#[test]
fn lab_scenario_beside_its_measurement() {
    let report = format!(
        "{}/../../docs/results/lpm/report.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let (code, out, err) = plan(&["--lab", "lpm", "--explain", "--measured", &report]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("== src_dst_port"), "{out}");
    assert!(out.contains("source ports are sequential"), "{out}");
    assert!(out.contains("predicted vs measured"), "{out}");
    let table = &out[out.find("predicted vs measured").unwrap()..];
    let row = table
        .lines()
        .find(|l| l.trim_start().starts_with("strong "))
        .expect("strong row");
    assert!(row.contains("0.500/0.500"), "{row}");
    let (code, out, _) = plan(&["--lab", "hp-apa", "--short"]);
    assert_eq!(code, 0);
    assert!(out.contains("chosen by the kernel at run time"), "{out}");
    let (code, _, err) = plan(&["--lab", "nosuch"]);
    assert_eq!(code, 2);
    assert!(err.contains("no built-in scenario"), "{err}");
}

/// A topology file of the user's own, planned from the connections its run
/// recorded: layer3+4 over two links back to back, four streams whose
/// client ports the kernel chose.
#[test]
fn topology_file_beside_its_run() {
    let dir = std::env::temp_dir().join(format!("lkplan-topo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let topo = dir.join("pair.toml");
    std::fs::write(
        &topo,
        r#"name = "pair"
[[host]]
name = "a"
address = "10.0.7.1/24"
bond = { mode = "802.3ad", xmit_hash_policy = "layer3+4" }
[[host]]
name = "b"
address = "10.0.7.2/24"
bond = { mode = "802.3ad", xmit_hash_policy = "layer3+4" }
[[link]]
between = ["a", "b"]
count = 2
rate = "100mbit"
[workload]
kind = "lagkit-load"
load = "stream"
clients = ["a"]
server = "b"
seconds = 10
conns = 4
"#,
    )
    .unwrap();
    let t = topo.to_str().unwrap();
    let (code, out, err) = plan(&["--lab", t]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("chosen by the kernel"), "{out}");
    // Layer3+4 between one address pair: (sport ^ dport) parity picks the
    // link, so even and odd client ports to port 12865 (odd) split 2/2.
    use lagkit_lab::measure::{BondMeasure, Measurement, MemberDelta};
    use lagkit_lab::report::{ConfigCode, Machine, Report, RunRecord};
    use lagkit_lab::workload::{Connection, WorkloadResult};
    let conns: Vec<Connection> = [40000u16, 40001, 40002, 40003]
        .iter()
        .map(|p| Connection {
            purpose: "stream".into(),
            local: format!("10.0.7.1:{p}").parse().unwrap(),
            remote: "10.0.7.2:12865".parse().unwrap(),
            sent: 58_000_000,
            received: 0,
        })
        .collect();
    // 2 × 100 Mbit/s for 10 s carries 2 × 1448/1514 × 125 MB of payload,
    // about 58 MB per stream; each member's frames: two streams' worth.
    let half = (2.0 * 58e6 * 1514.0 / 1448.0) as u64;
    let bond = |host: &str, tx: u64, rx: u64| BondMeasure {
        host: host.into(),
        members: ["e1", "e2"]
            .iter()
            .map(|n| MemberDelta {
                name: n.to_string(),
                tx_bytes: tx,
                rx_bytes: rx,
                ..MemberDelta::default()
            })
            .collect(),
        ..BondMeasure::default()
    };
    let report = Report {
        title: "two".into(),
        scale: None,
        machine: Machine {
            cores: 2,
            kernel: String::new(),
        },
        runs: vec![RunRecord {
            run: 1,
            key: String::new(),
            label: String::new(),
            code: ConfigCode {
                app: "l".into(),
                procs: 4,
                switch: String::new(),
                server: String::new(),
                engine: String::new(),
                mtu: String::new(),
                links: String::new(),
            },
            topology: t.to_string(),
            switches: Vec::new(),
            workload: Some(WorkloadResult {
                seconds: 10.0,
                connections: conns,
                ..WorkloadResult::default()
            }),
            measurement: Some(Measurement {
                seconds: 10.0,
                bonds: vec![bond("a", half, 1_000_000), bond("b", 1_000_000, half)],
                ..Measurement::default()
            }),
            converge_seconds: None,
            lacp_start: None,
            lacp_end: None,
            limit_mbps: None,
            flags: Vec::new(),
            error: None,
            formation: None,
            capacity: None,
            balance_why: Vec::new(),
        }],
        findings: Vec::new(),
        command: None,
    };
    let report = serde_json::to_value(&report).unwrap();
    let rep = dir.join("report.json");
    std::fs::write(&rep, report.to_string()).unwrap();
    let (code, out, err) = plan(&["--lab", t, "--measured", rep.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("ports as the run recorded them"), "{out}");
    let table = &out[out.find("predicted vs measured").expect(&out)..];
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.contains(" sends ") || l.contains(" receives "))
        .collect();
    assert_eq!(rows.len(), 2, "a sends, b receives: {table}");
    for r in rows {
        assert!(r.contains("0.500/0.500") && r.contains("agrees"), "{r}");
    }
    let (code, _, err) = plan(&["--lab", dir.join("nope.toml").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("no such topology file"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// /dev/zero, a sparse file of 2 GiB and an endless pipe are refused
/// within seconds, naming the input, the limit and the fix, and exit 2
/// (docs/reference/limits.md).
#[test]
fn endless_and_huge_inputs_are_refused_at_once() {
    common::refuses_endless_and_huge_inputs("plan", &[], "flows.csv", "a flow list");
}

fn pcap_of(frames: &[Vec<u8>]) -> Vec<u8> {
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    let mut w = PcapWriter::with_header(Vec::new(), PcapHeader::default()).unwrap();
    for (i, f) in frames.iter().enumerate() {
        let t = std::time::Duration::from_millis(i as u64);
        w.write_packet(&PcapPacket::new(t, f.len() as u32, f))
            .unwrap();
    }
    w.into_writer()
}

/// A TCP frame from 10.0.0.1:`sport` to 10.0.0.2:80, 100 bytes of payload.
fn tcp_frame(sport: u16) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
    let mut ip = vec![
        0x45, 0, 0, 140, 0, 0, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
    ];
    ip.extend_from_slice(&sport.to_be_bytes());
    ip.extend_from_slice(&[
        0, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0,
    ]);
    ip.extend_from_slice(&[0u8; 100]);
    f.extend_from_slice(&ip);
    f
}

/// A capture whose last packet is cut short is planned from the packets
/// before it, with a warning on stderr and `capture.skipped` in --json.
#[test]
fn a_cut_capture_is_planned_from_the_packets_before_the_cut() {
    let dir = std::env::temp_dir().join(format!("lkt-plan-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let frames: Vec<Vec<u8>> = (0..4).map(|i| tcp_frame(40000 + i)).collect();
    let data = pcap_of(&frames);
    let f = dir.join("cut.pcap");
    std::fs::write(&f, &data[..data.len() - 30]).unwrap();
    let (code, out, err) = plan(&[f.to_str().unwrap(), "--host-hash", "layer3+4"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning: ")
            && err.contains("cut.pcap: packet 4 is cut short")
            && err.contains("1 packet skipped, planned from the 3 before it"),
        "{err}"
    );
    assert!(out.contains("3 packets in 3 flows"), "{out}");
    let (code, out, err) = plan(&[f.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["capture"]["packets"], 3);
    assert_eq!(v["capture"]["skipped"]["from_packet"], 4);
    assert_eq!(v["capture"]["skipped"]["packets"], 1);
    assert!(err.contains("packet 4 is cut short"), "{err}");
    // Cut inside the first packet: nothing to plan, an error.
    std::fs::write(&f, &data[..24 + 20]).unwrap();
    let (code, _, err) = plan(&[f.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("packet 1"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The per-link bytes of a `--json` plan, per end.
fn link_bytes(json: &str) -> Vec<Vec<u64>> {
    let v: serde_json::Value = serde_json::from_str(json).expect("JSON");
    let dirs = v["directions"].as_array().expect("directions");
    dirs.iter()
        .map(|e| {
            e["prediction"]["links"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l["bytes"].as_u64().unwrap())
                .collect()
        })
        .collect()
}

/// A directory, several files or a glob are planned as one traffic: the
/// same as the files joined into one, a flow in two files adding up, and
/// a capture beside flow lists.
#[test]
fn many_files_plan_as_their_union() {
    let dir =
        common::TmpDir(std::env::temp_dir().join(format!("lkt-plan-many-{}", std::process::id())));
    let parts = dir.0.join("parts");
    std::fs::create_dir_all(parts.join("sub")).unwrap();
    let head = "proto,src,sport,dst,dport,bytes\n";
    let rows: Vec<String> = (0..30)
        .map(|i| {
            format!(
                "tcp,10.0.{}.1,{},10.0.0.2,80,{}\n",
                i % 4,
                40000 + i,
                1000 * (i + 1)
            )
        })
        .collect();
    // Row 0 twice: once in each of two files, half its bytes each.
    let mut whole = head.to_string();
    whole += &rows.concat();
    std::fs::write(dir.0.join("whole.csv"), &whole).unwrap();
    let half = "tcp,10.0.0.1,40000,10.0.0.2,80,500\n";
    std::fs::write(
        parts.join("a.csv"),
        format!("{head}{half}{}", rows[1..10].concat()),
    )
    .unwrap();
    std::fs::write(
        parts.join("b.csv"),
        format!("{head}{half}{}", rows[10..20].concat()),
    )
    .unwrap();
    std::fs::write(
        parts.join("sub/c.csv"),
        format!("{head}{}", rows[20..].concat()),
    )
    .unwrap();
    let args = |t: &[&str]| {
        let mut v: Vec<String> = t.iter().map(|s| s.to_string()).collect();
        v.extend(["--host-hash", "layer3+4", "--links", "3", "--json"].map(String::from));
        v
    };
    let run = |t: &[&str]| {
        let a = args(t);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let (code, out, err) = plan(&a);
        assert_eq!(code, 0, "{t:?}: {err}");
        out
    };
    let one = link_bytes(&run(&[dir.0.join("whole.csv").to_str().unwrap()]));
    let p = parts.to_str().unwrap();
    let by_dir = run(&[p]);
    assert_eq!(link_bytes(&by_dir), one);
    let v: serde_json::Value = serde_json::from_str(&by_dir).unwrap();
    assert_eq!(v["inputs"]["files"], 3, "{}", v["inputs"]);
    let (a, b, c) = (
        format!("{p}/a.csv"),
        format!("{p}/b.csv"),
        format!("{p}/sub/c.csv"),
    );
    assert_eq!(link_bytes(&run(&[&a, &b, &c])), one);
    assert_eq!(link_bytes(&run(&[&format!("{p}/*.csv"), &c])), one);
    // Text: one line for the files, then the plan.
    let (code, out, _) = plan(&[p, "--host-hash", "layer3+4"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("3 files: 30 flows\n"), "{out}");
    // A capture beside them: its flows join.
    let frames: Vec<Vec<u8>> = (0..4).map(|i| tcp_frame(50000 + i)).collect();
    std::fs::write(parts.join("d.pcap"), pcap_of(&frames)).unwrap();
    let (code, out, err) = plan(&[p, "--host-hash", "layer3+4"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("4 files, 4 captured packets: 34 flows\n"),
        "{out}"
    );
    // A file that cannot be read stops the plan, named.
    std::fs::write(parts.join("e.csv"), "proto,src\nudp,banana\n").unwrap();
    let (code, _, err) = plan(&[p]);
    assert_eq!(code, 2);
    assert!(err.contains("e.csv"), "{err}");
}

/// Runs `lagkit plan ARGS`: (exit status, stdout, peak resident set in
/// MiB of that process alone, from wait4(2), which also reaps it).
#[allow(clippy::zombie_processes)]
fn plan_peak(args: &[&str]) -> (i32, String, u64) {
    use std::io::Read;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_lagkit"))
        .arg("plan")
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("lagkit runs");
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let (status, peak_kib) = lagkit_sys::proc::wait_peak_rss(&mut child).expect("wait4");
    (status.code().unwrap_or(-1), out, peak_kib / 1024)
}

/// Files of 5,000 distinct flows each, 600,000 and then 1,200,000 flows:
/// the table stops at its cap (2^19 flows) and says how many were left
/// out, and twice the records cost no more memory.
#[test]
fn a_fleet_of_flow_files_is_planned_in_bounded_memory() {
    use std::fmt::Write;
    let dir =
        common::TmpDir(std::env::temp_dir().join(format!("lkt-plan-fleet-{}", std::process::id())));
    let per = 5000u32;
    let mut peaks = Vec::new();
    for files in [120u32, 240] {
        let d = dir.0.join(files.to_string());
        std::fs::create_dir_all(&d).unwrap();
        for f in 0..files {
            let mut t = String::from("proto,src,sport,dst,dport,bytes\n");
            for i in 0..per {
                let n = f * per + i;
                let _ = writeln!(
                    t,
                    "udp,10.{}.{}.{},{},10.0.0.2,53,100",
                    n >> 16 & 0xff,
                    n >> 8 & 0xff,
                    n & 0xff,
                    1024 + n % 60000
                );
            }
            std::fs::write(d.join(format!("f{f:03}.csv")), t).unwrap();
        }
        let (code, out, mib) = plan_peak(&[d.to_str().unwrap(), "--host-hash", "layer3+4"]);
        assert_eq!(code, 0);
        let total = u64::from(files * per);
        let cap = 1u64 << 19;
        assert_eq!(
            out.lines().next().unwrap(),
            format!(
                "{files} files: {cap} flows, {} flows past the table's {cap} left out",
                total - cap
            )
        );
        eprintln!(
            "peak resident set of lagkit plan over {total} flows in {files} files: {mib} MiB"
        );
        peaks.push(mib);
    }
    assert!(
        peaks[1] * 4 < peaks[0] * 5,
        "twice the flows took {} MiB against {} MiB",
        peaks[1],
        peaks[0]
    );
}

/// A capture tcpdump wrote with `-i any -s 96` (Linux cooked SLL2, see
/// crates/planner/tests/captures.rs): planned, its cooked packets named;
/// with a --host that sent none of it, no flows: an error that says why,
/// in text and in --json, never an empty plan.
#[test]
fn a_cooked_snapped_capture_plans_and_an_empty_plan_is_an_error() {
    let cap = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../planner/tests/captures/tcpdump-any-sll2.pcap"
    );
    let (code, out, err) = plan(&[cap, "--host", "10.1.0.1", "--host-hash", "layer3+4"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("23 packets in 12 flows (23 without an Ethernet header"),
        "{out}"
    );
    assert!(
        out.contains("out (host bond spreads it with layer3+4): 8 flows"),
        "{out}"
    );
    let (code, out, err) = plan(&[cap, "--host", "10.9.9.9"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("no flows to plan: none of the 23 packets gave a flow: 23 packets neither from nor to the host; is --host the bonded host's IP or MAC?"),
        "{err}"
    );
    let (code, _, err) = plan(&[cap, "--host", "10.9.9.9", "--json"]);
    assert_eq!(code, 2);
    let v: serde_json::Value = serde_json::from_str(err.trim()).expect("a JSON error");
    assert!(
        v["error"].as_str().unwrap().starts_with("no flows to plan"),
        "{v}"
    );
    assert_eq!(v["exit"], 2);
}

/// A flow list in `dir` of 16 connections a server (10.0.0.2, port
/// 5201) sends to the bonded host (10.0.0.1) on its ports `first`,
/// `first + step`, ...
fn towards_host(dir: &std::path::Path, name: &str, first: u16, step: u16) -> String {
    let mut csv = String::from("proto,src,sport,dst,dport,bytes,dir\n");
    for i in 0..16 {
        csv += &format!(
            "tcp,10.0.0.2,5201,10.0.0.1,{},1000000,in\n",
            first + step * i
        );
    }
    let f = dir.join(name);
    std::fs::write(&f, csv).unwrap();
    f.to_str().unwrap().to_string()
}

/// The switch direction's lines of a plan's text (from `in (switch`).
fn switch_part(out: &str) -> &str {
    &out[out.find("in (switch").expect(out)..]
}

/// With a Catalyst at the switch end, `--explain` suggests only its
/// `port-channel load-balance` methods, each as the IOS line with its
/// predicted spread on these flows (the best, not a guess), and never
/// lagkit's own policies, in text and in JSON.
#[test]
fn a_cisco_switch_is_told_only_its_own_methods() {
    let dir = std::env::temp_dir().join(format!("lkt-plan-cisco-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // One address pair, ports of both parities: src-dst-ip puts every
    // flow on one link, a port method spreads them.
    let f = towards_host(&dir, "pair.csv", 40000, 1);
    let args = [
        &f,
        "--switch-hash",
        "src-dst-ip",
        "--cisco-switch",
        "--explain",
    ];
    let (code, out, err) = plan(&args);
    assert_eq!(code, 0, "{err}");
    let sw = switch_part(&out);
    assert!(
        sw.contains("a cisco catalyst: only its methods are ranked"),
        "{sw}"
    );
    assert!(sw.contains("one address pair"), "{sw}");
    assert!(
        sw.contains("fix: `port-channel load-balance dst-port`: predicted 0.50/0.50 of the bytes per link on these flows, 1.00 of capacity instead of 0.50"),
        "{sw}"
    );
    assert!(
        sw.contains(
            "recommendation: port-channel load-balance dst-port (1.00 of capacity instead of 0.50)"
        ),
        "{sw}"
    );
    for lagkit_only in ["strong", "adaptive", "balance-rr", "layer3+4", "mixed"] {
        assert!(
            !sw.contains(lagkit_only),
            "{lagkit_only} offered to a Catalyst:\n{sw}"
        );
    }
    let (code, out, err) = plan(&[&args[..], &["--json"]].concat());
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let d = &v["directions"][0];
    assert_eq!(d["end"], "switch");
    assert_eq!(d["platform"], "cisco catalyst");
    let alts: Vec<&str> = d["alternatives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["spread"].as_str().unwrap())
        .collect();
    assert_eq!(
        alts.len(),
        lagkit_planner::platform::CATALYST_METHODS.len(),
        "{alts:?}"
    );
    assert_eq!(
        d["recommendation"]["line"],
        "port-channel load-balance dst-port"
    );
    assert_eq!(d["recommendation"]["shares"], serde_json::json!([0.5, 0.5]));
    let fix = d["causes"][0]["fix"].as_str().unwrap();
    assert!(
        fix.starts_with("`port-channel load-balance dst-port`"),
        "{fix}"
    );
    // Without the platform the same flows may be told lagkit's policies.
    let (_, out, _) = plan(&[&f, "--switch-hash", "src-dst-ip", "--explain"]);
    assert!(switch_part(&out).contains("strong"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The parity case: Linux gives connect() even source ports, the server
/// listens on an odd one, so every XOR of the two is odd and a Catalyst's
/// src-dst-port puts every flow on one link; no method of the switch sees
/// past it, and the fix says so instead of naming one.
#[test]
fn the_parity_case_is_named_and_no_method_is_pretended_to_fix_it() {
    let dir = std::env::temp_dir().join(format!("lkt-plan-parity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = towards_host(&dir, "even.csv", 40000, 2);
    let (code, out, err) = plan(&[
        &f,
        "--switch-hash",
        "src-dst-port",
        "--cisco-switch",
        "--explain",
    ]);
    assert_eq!(code, 0, "{err}");
    let sw = switch_part(&out);
    assert!(sw.contains("ports of one parity"), "{sw}");
    assert!(
        sw.contains("every source port is odd and every destination port even"),
        "{sw}"
    );
    assert!(
        sw.contains("no load-balance method of this switch sees past the parity"),
        "{sw}"
    );
    assert!(!sw.contains("recommendation"), "{sw}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A switch's IOS configuration gives the method it runs, the link count
/// of its one channel and its platform: a method outside the nine
/// (src-dst-mixed-ip-port) is ranked because the configuration shows the
/// platform has it. A configuration the reader refuses names its line.
#[test]
fn a_switch_configuration_sets_the_switch_end() {
    let dir = std::env::temp_dir().join(format!("lkt-plan-swcfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = towards_host(&dir, "pair.csv", 40000, 1);
    let cfg = dir.join("sw.cfg");
    std::fs::write(
        &cfg,
        "hostname sw\n!\nport-channel load-balance src-dst-mixed-ip-port\n!\n\
         interface range GigabitEthernet1/0/1 - 4\n channel-group 1 mode active\n!\nend\n",
    )
    .unwrap();
    let c = cfg.to_str().unwrap();
    let (code, out, err) = plan(&[&f, "--switch-config", c, "--explain", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let d = &v["directions"][0];
    assert_eq!(d["prediction"]["spread"], "src-dst-mixed-ip-port");
    assert_eq!(d["prediction"]["links"].as_array().unwrap().len(), 4);
    assert_eq!(d["alternatives"].as_array().unwrap().len(), 10);
    assert_eq!(d["platform"], "cisco catalyst");
    // A method Catalysts lack: the line and the fix, exit 2.
    std::fs::write(&cfg, "hostname sw\nport-channel load-balance strong\n").unwrap();
    let (code, _, err) = plan(&[&f, "--switch-config", c]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("sw.cfg:2"), "{err}");
    assert!(err.contains("not a Catalyst method"), "{err}");
    // Both a configuration and a method: refused.
    let (code, _, err) = plan(&[&f, "--switch-config", c, "--switch-hash", "src-ip"]);
    assert_eq!(code, 2, "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Skips a root test with a message (when not root or without iperf3);
/// fails instead when `CI` is set.
fn lab_skip(why: &str) -> bool {
    assert!(std::env::var_os("CI").is_none(), "{why}");
    eprintln!("SKIP lab report: {why}");
    true
}

/// `lagkit lab run` on the two-hosts example, as a user runs it (as root,
/// under a name of its own so that it never meets a lab a user or another
/// test brought up): the report says why each host's receive balance is
/// what it is, and measures the workload against each direction's
/// capacity. Skips with a message when not root or without iperf3; fails
/// instead when `CI` is set.
#[test]
fn the_two_hosts_report_names_the_parity_and_each_directions_capacity() {
    if !nix::unistd::geteuid().is_root() && lab_skip("needs root") {
        return;
    }
    let has_iperf3 = std::process::Command::new("iperf3")
        .arg("--version")
        .output()
        .is_ok();
    if !has_iperf3 && lab_skip("iperf3 missing (apt-get install iperf3)") {
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
