//! `lagkit plan` from flow exports made by independent exporters: a
//! capture of traffic is exported by softflowd (NetFlow v9, IPFIX) and by
//! pmacct's sfprobe (sFlow v5) to a UDP socket on loopback; the datagrams
//! received are written as a capture of export traffic to the collector
//! ports, and the plan from it is compared with the plan from the traffic
//! capture itself.
//!
//! Everything stays on 127.0.0.1; every exporter is killed on drop.

mod common;

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const HOST: [u8; 4] = [10, 0, 0, 1];

/// A temporary directory, removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("lkt-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A child process killed (and reaped) on drop.
struct Exporter(Child);

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn have(program: &str) -> bool {
    Command::new(program)
        .arg("-h")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Skips (returns false) when `program` is missing, saying how to get it;
/// under CI a missing program fails instead.
fn require(program: &str, package: &str) -> bool {
    if have(program) {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{program} is missing: bash scripts/setup.sh test (Debian package {package})"
    );
    eprintln!("skipped: {program} is missing (Debian package {package})");
    false
}

fn pcap_of(frames: &[Vec<u8>]) -> Vec<u8> {
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    let mut w = PcapWriter::with_header(Vec::new(), PcapHeader::default()).unwrap();
    for (i, f) in frames.iter().enumerate() {
        let t = Duration::from_micros(1000 + i as u64 * 100);
        w.write_packet(&PcapPacket::new(t, f.len() as u32, f))
            .unwrap();
    }
    w.into_writer()
}

/// An Ethernet/IPv4 frame: TCP or UDP from `src`:`sport` to `dst`:`dport`
/// with `payload` bytes.
fn frame(src: [u8; 4], dst: [u8; 4], udp: bool, sport: u16, dport: u16, payload: usize) -> Vec<u8> {
    let b = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4(src, dst, 64);
    let mut v = Vec::new();
    let data = vec![0x5a; payload];
    if udp {
        b.udp(sport, dport).write(&mut v, &data).unwrap();
    } else {
        b.tcp(sport, dport, 1, 65535).write(&mut v, &data).unwrap();
    }
    v
}

/// The traffic: 24 flows from the host (TCP and UDP, to four servers,
/// of 3 to 26 packets of 60 to 1260 bytes), one flow after the other, then
/// 64 frames between two other addresses (planned as neither from nor to
/// the host, so an exporter that loses its last samples at the end of
/// the file loses only those).
fn traffic() -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for f in 0..24u16 {
        let dst = [10, 0, 1, 2 + (f % 4) as u8];
        let udp = f % 3 == 0;
        for _ in 0..(3 + f) {
            let size = 60 + usize::from(f) * 50;
            v.push(frame(HOST, dst, udp, 40000 + f * 7, 80 + f % 5, size));
        }
    }
    for i in 0..64 {
        v.push(frame(
            [10, 9, 9, 9],
            [10, 9, 9, 8],
            true,
            5000,
            5001 + i,
            100,
        ));
    }
    v
}

/// Receives datagrams on `sock` until `done` says the exporter has
/// finished and nothing came for half a second, or the deadline passes.
fn receive(sock: &UdpSocket, mut done: impl FnMut() -> bool) -> Vec<Vec<u8>> {
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut got = Vec::new();
    let mut last = Instant::now();
    let mut buf = vec![0u8; 65536];
    while Instant::now() < deadline {
        match sock.recv(&mut buf) {
            Ok(n) => {
                got.push(buf[..n].to_vec());
                last = Instant::now();
            }
            Err(_) if done() && last.elapsed() > Duration::from_millis(500) => break,
            Err(_) => {}
        }
    }
    assert!(
        Instant::now() < deadline,
        "the exporter did not finish in 30 s"
    );
    got
}

/// A capture of `datagrams` as the exporter 127.0.0.1 sent them to the
/// collector port `port`.
fn export_capture(datagrams: &[Vec<u8>], port: u16) -> Vec<u8> {
    let frames: Vec<Vec<u8>> = datagrams
        .iter()
        .map(|d| {
            let mut v = Vec::new();
            etherparse::PacketBuilder::ethernet2([0; 6], [0; 6])
                .ipv4([127, 0, 0, 1], [127, 0, 0, 1], 64)
                .udp(50000, port)
                .write(&mut v, d)
                .unwrap();
            v
        })
        .collect();
    pcap_of(&frames)
}

/// softflowd reading `pcap`, exporting NetFlow `version` (9 or 10) to
/// `sock`, every `sampling`th packet.
fn softflowd(
    dir: &Path,
    pcap: &Path,
    sock: &UdpSocket,
    version: &str,
    sampling: u32,
) -> Vec<Vec<u8>> {
    let ctl = dir.join(format!("softflowd-{version}-{sampling}.ctl"));
    let port = sock.local_addr().unwrap().port();
    let mut cmd = Command::new("softflowd");
    cmd.arg("-r")
        .arg(pcap)
        .args(["-n", &format!("127.0.0.1:{port}"), "-v", version, "-d"])
        .arg("-p")
        .arg(dir.join(format!("softflowd-{version}.pid")))
        .arg("-c")
        .arg(&ctl)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if sampling > 1 {
        cmd.args(["-s", &sampling.to_string()]);
    }
    let mut child = Exporter(cmd.spawn().expect("run softflowd"));
    // softflowd 1.1.0 reading a file waits for a control connection
    // before each round of its loop: connect until it has read the file
    // and exited (it exports every flow on the way out).
    receive(sock, || {
        let _ = std::os::unix::net::UnixStream::connect(&ctl);
        matches!(child.0.try_wait(), Ok(Some(_)))
    })
}

/// pmacctd reading `pcap` with the plugin lines `plugin` (written into
/// its configuration file `name`), until it exits at the end of the file;
/// what `sock` received meanwhile.
fn pmacctd_run(
    dir: &Path,
    name: &str,
    pcap: &Path,
    sock: &UdpSocket,
    plugin: &str,
) -> Vec<Vec<u8>> {
    let conf = dir.join(name);
    std::fs::write(
        &conf,
        format!(
            "daemonize: false\npcap_savefile: {}\n{plugin}",
            pcap.display()
        ),
    )
    .unwrap();
    let mut child = Exporter(
        Command::new("pmacctd")
            .arg("-f")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run pmacctd"),
    );
    receive(sock, || matches!(child.0.try_wait(), Ok(Some(_))))
}

/// pmacctd reading `pcap`, exporting sFlow v5 samples to `sock` through
/// its sfprobe plugin, every `sampling`th packet.
fn pmacctd(dir: &Path, pcap: &Path, sock: &UdpSocket, sampling: u32) -> Vec<Vec<u8>> {
    let port = sock.local_addr().unwrap().port();
    pmacctd_run(
        dir,
        &format!("pmacctd-{sampling}.conf"),
        pcap,
        sock,
        &format!(
            "plugins: sfprobe\nsfprobe_receiver: 127.0.0.1:{port}\n\
             sfprobe_agentip: 127.0.0.1\nsampling_rate: {sampling}\n"
        ),
    )
}

/// pmacctd reading `pcap`, exporting NetFlow `version` (5, 9, or 10 for
/// IPFIX) to `sock` through its nfprobe plugin (pmacct's own flow cache
/// and encoders, independent of softflowd's); it exports every flow when
/// the file ends.
fn nfprobe(dir: &Path, pcap: &Path, sock: &UdpSocket, version: &str) -> Vec<Vec<u8>> {
    let port = sock.local_addr().unwrap().port();
    pmacctd_run(
        dir,
        &format!("nfprobe-{version}.conf"),
        pcap,
        sock,
        &format!(
            "plugins: nfprobe\nnfprobe_receiver: 127.0.0.1:{port}\nnfprobe_version: {version}\n"
        ),
    )
}

/// Per link (bytes, flows) of each direction's prediction, for each
/// policy pair: `(host hash, switch hash)`.
fn plan_links(
    file: &Path,
    host_hash: &str,
    extra: &[&str],
) -> (Vec<(u64, u64)>, serde_json::Value) {
    plan_links_of(file, "10.0.0.1", host_hash, extra)
}

/// [`plan_links`] with `host` the bonded host.
fn plan_links_of(
    file: &Path,
    host: &str,
    host_hash: &str,
    extra: &[&str],
) -> (Vec<(u64, u64)>, serde_json::Value) {
    let mut args = vec![
        file.to_str().unwrap(),
        "--host",
        host,
        "--host-hash",
        host_hash,
        "--links",
        "4",
        "--json",
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = common::lagkit("plan", &args);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let links = v["directions"][0]["prediction"]["links"]
        .as_array()
        .expect("links")
        .iter()
        .map(|l| (l["bytes"].as_u64().unwrap(), l["flows"].as_u64().unwrap()))
        .collect();
    (links, v)
}

const POLICIES: [&str; 3] = ["layer3+4", "src-dst-ip", "src-dst-port"];

/// Sampling 1: the exports give the very plan the traffic gives, link by
/// link, bytes and flows, for three policies.
fn same_plan(traffic: &Path, export: &Path, extra: &[&str]) -> serde_json::Value {
    let mut last = serde_json::Value::Null;
    for p in POLICIES {
        let (want, _) = plan_links(traffic, p, &[]);
        let (got, v) = plan_links(export, p, extra);
        assert_eq!(
            got, want,
            "{p}: the exports' plan differs from the capture's"
        );
        last = v;
    }
    last
}

/// Sampling `n`: each link's flows are those of the traffic, and its bytes
/// within the sampling error. softflowd samples every `n`th packet of the
/// file; a flow of k packets is sampled floor(k/n) or
/// ceil(k/n) times, each scaled by n, so its bytes are off by less than n
/// of its packets: per link, |predicted - true| < flows × n × 1314 (the
/// largest frame here).
fn sampled_plan(traffic: &Path, export: &Path, n: u64) {
    for p in POLICIES {
        let (want, _) = plan_links(traffic, p, &[]);
        let (got, _) = plan_links(export, p, &[]);
        for ((gb, gf), (wb, wf)) in got.iter().zip(&want) {
            assert_eq!(gf, wf, "{p}: flows per link");
            let bound = wf * n * 1314;
            assert!(
                gb.abs_diff(*wb) < bound.max(1),
                "{p}: {gb} bytes predicted, {wb} true, bound {bound}"
            );
        }
    }
}

/// Random sampling (pmacct's: "a simple randomic one", mean 1 in `n`)
/// over the traffic repeated 20 times (6,960 packets from the host, each
/// flow at least 60): every flow is sampled (a flow missed has chance
/// (1 - 1/n)^60, under 10^-7 for n = 4), so each link's flows are the
/// traffic's; the total bytes are within 10% (about 1,740 samples: a
/// standard deviation near 3%) and each link's within 25% (a quarter of
/// the samples each: about 6%).
fn random_sampled_plan(traffic: &Path, export: &Path) {
    for p in POLICIES {
        let (want, _) = plan_links(traffic, p, &[]);
        let (got, _) = plan_links(export, p, &[]);
        let total = |v: &[(u64, u64)]| v.iter().map(|l| l.0).sum::<u64>() as f64;
        let off = total(&got) / total(&want) - 1.0;
        eprintln!("random sampling, {p}: total off by {:+.1}%", off * 100.0);
        assert!(off.abs() < 0.10, "{p}: total off by {off:.3}");
        for ((gb, gf), (wb, wf)) in got.iter().zip(&want) {
            assert_eq!(gf, wf, "{p}: flows per link");
            let off = *gb as f64 / (*wb).max(1) as f64 - 1.0;
            assert!(off.abs() < 0.25, "{p}: {gb} bytes predicted, {wb} true");
        }
    }
}

fn setup(name: &str) -> (Dir, PathBuf) {
    let dir = Dir::new(name);
    let pcap = dir.0.join("traffic.pcap");
    std::fs::write(&pcap, pcap_of(&traffic())).unwrap();
    (dir, pcap)
}

fn collector() -> UdpSocket {
    UdpSocket::bind("127.0.0.1:0").expect("a UDP socket on loopback")
}

#[test]
fn softflowd_netflow_v9_and_ipfix_plan_as_the_capture_does() {
    if !require("softflowd", "softflowd") {
        return;
    }
    let (dir, pcap) = setup("exports-softflowd");
    let sock = collector();
    for (version, port, name) in [("9", 2055, "NetFlow v9"), ("10", 4739, "IPFIX")] {
        let got = softflowd(&dir.0, &pcap, &sock, version, 1);
        assert!(!got.is_empty(), "softflowd -v {version} sent nothing");
        let export = dir.0.join(format!("export-{version}.pcap"));
        std::fs::write(&export, export_capture(&got, port)).unwrap();
        // Told apart from traffic by port and version, without a flag.
        let v = same_plan(&pcap, &export, &[]);
        let x = &v["capture"]["export"];
        assert_eq!(
            x["kinds"][0],
            if version == "9" { "netflow" } else { "ipfix" }
        );
        assert_eq!(x["before_template_sets"], 0, "{x}");
        // Text output names the format and the records.
        let (code, out, err) =
            common::lagkit("plan", &[export.to_str().unwrap(), "--host", "10.0.0.1"]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains(&format!("of {name} from 1 exporter")), "{out}");
    }
    // Sampled 1 in 3: the options template's sampling interval scales it.
    let got = softflowd(&dir.0, &pcap, &sock, "9", 3);
    let export = dir.0.join("export-9-sampled.pcap");
    std::fs::write(&export, export_capture(&got, 2055)).unwrap();
    sampled_plan(&pcap, &export, 3);
}

/// NetFlow v5 from softflowd: read in auto (port 2055, version 5, a
/// length that matches its count), the very plan the traffic gives.
#[test]
fn softflowd_netflow_v5_plans_as_the_capture_does() {
    if !require("softflowd", "softflowd") {
        return;
    }
    let (dir, pcap) = setup("exports-softflowd-v5");
    let sock = collector();
    let got = softflowd(&dir.0, &pcap, &sock, "5", 1);
    assert!(!got.is_empty(), "softflowd -v 5 sent nothing");
    let export = dir.0.join("export-5.pcap");
    std::fs::write(&export, export_capture(&got, 2055)).unwrap();
    let v = same_plan(&pcap, &export, &[]);
    assert_eq!(v["capture"]["export"]["kinds"][0], "netflow5");
    let (code, out, err) =
        common::lagkit("plan", &[export.to_str().unwrap(), "--host", "10.0.0.1"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("of NetFlow v5 from 1 exporter"), "{out}");
    // Named as netflow, on another port: the same.
    let other = dir.0.join("export-5-9999.pcap");
    std::fs::write(&other, export_capture(&got, 9999)).unwrap();
    same_plan(&pcap, &other, &["--flow-format", "netflow"]);
}

/// pmacct's nfprobe, a second exporter for each NetFlow version and for
/// IPFIX: the very plan the traffic gives.
#[test]
fn pmacct_nfprobe_netflow_v5_v9_and_ipfix_plan_as_the_capture_does() {
    if !require("pmacctd", "pmacct") {
        return;
    }
    let (dir, pcap) = setup("exports-nfprobe");
    let sock = collector();
    for (version, port, kind) in [
        ("5", 2055, "netflow5"),
        ("9", 2055, "netflow"),
        ("10", 4739, "ipfix"),
    ] {
        let got = nfprobe(&dir.0, &pcap, &sock, version);
        assert!(!got.is_empty(), "nfprobe v{version} sent nothing");
        let export = dir.0.join(format!("nfprobe-{version}.pcap"));
        std::fs::write(&export, export_capture(&got, port)).unwrap();
        let v = same_plan(&pcap, &export, &[]);
        let x = &v["capture"]["export"];
        assert_eq!(x["kinds"][0], kind, "{x}");
        assert_eq!(x["before_template_sets"], 0, "{x}");
        assert_eq!(x["impossible_records"], 0, "{x}");
    }
}

/// Whether this process may capture (fprobe opens the interface): its
/// effective user is root.
fn root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            == Some("0")
    })
}

/// fprobe, a third NetFlow exporter and the one that speaks v1 and v7,
/// captures live: on loopback it watches the datagrams this test sends
/// from one socket to four ports below the ephemeral range (its filter
/// names the socket's port, so nothing else on loopback counts), and
/// exports each flow a second after it goes idle. The plan from its
/// export equals the plan from a capture of the same datagrams, written
/// here (loopback frames are Ethernet with zero MACs).
#[test]
fn fprobe_netflow_v1_v5_v7_plan_as_the_traffic_does() {
    if !require("fprobe", "fprobe") {
        return;
    }
    if !root() {
        assert!(std::env::var_os("CI").is_none(), "fprobe needs root");
        eprintln!("skipped: fprobe captures, which needs root");
        return;
    }
    let dir = Dir::new("exports-fprobe");
    let sock = collector();
    let port = sock.local_addr().unwrap().port();
    let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
    let sport = sender.local_addr().unwrap().port();
    for (n, (version, kind)) in [("1", "netflow1"), ("5", "netflow5"), ("7", "netflow7")]
        .into_iter()
        .enumerate()
    {
        let base = 23000 + 10 * n as u16;
        let filter = format!(
            "udp and src port {sport} and dst portrange {base}-{}",
            base + 3
        );
        let mut child = Exporter(
            Command::new("fprobe")
                .args([
                    "-p", "-i", "lo", "-f", &filter, "-s", "1", "-d", "1", "-e", "2",
                ])
                .args(["-n", version, "-l", "2", &format!("127.0.0.1:{port}")])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("run fprobe"),
        );
        // Ready once it names its collector (its log, `-l 2`, goes to
        // stdout): the capture is open by then.
        let (tx, rx) = std::sync::mpsc::channel();
        let err = child.0.stdout.take().unwrap();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(l) if l.contains("collector #1") => break,
                Ok(_) => {}
                Err(e) => panic!("fprobe -n {version} did not start: {e}"),
            }
        }
        // Four flows of 3 to 6 datagrams of 100 to 700 bytes.
        let mut frames = Vec::new();
        for i in 0..4u16 {
            let payload = vec![0x5a; 100 + 200 * usize::from(i)];
            for _ in 0..3 + i {
                sender.send_to(&payload, ("127.0.0.1", base + i)).unwrap();
                let mut f = Vec::new();
                etherparse::PacketBuilder::ethernet2([0; 6], [0; 6])
                    .ipv4([127, 0, 0, 1], [127, 0, 0, 1], 64)
                    .udp(sport, base + i)
                    .write(&mut f, &payload)
                    .unwrap();
                frames.push(f);
            }
        }
        // Until the export holds the four flows (each datagram's header
        // counts its records), or the deadline.
        sock.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut got: Vec<Vec<u8>> = Vec::new();
        let mut buf = vec![0u8; 65536];
        while got
            .iter()
            .map(|d| u16::from_be_bytes([d[2], d[3]]))
            .sum::<u16>()
            < 4
        {
            assert!(
                Instant::now() < deadline,
                "fprobe -n {version} exported {} datagrams in 30 s",
                got.len()
            );
            if let Ok(n) = sock.recv(&mut buf) {
                got.push(buf[..n].to_vec());
            }
        }
        drop(child);
        let traffic = dir.0.join(format!("lo-{version}.pcap"));
        std::fs::write(&traffic, pcap_of(&frames)).unwrap();
        let export = dir.0.join(format!("fprobe-{version}.pcap"));
        std::fs::write(&export, export_capture(&got, 2055)).unwrap();
        for p in POLICIES {
            let (want, _) = plan_links_of(&traffic, "127.0.0.1", p, &[]);
            let (got, v) = plan_links_of(&export, "127.0.0.1", p, &[]);
            assert_eq!(got, want, "fprobe -n {version}, {p}");
            assert_eq!(v["capture"]["export"]["kinds"][0], kind);
        }
    }
}

#[test]
fn pmacct_sflow_plans_as_the_capture_does() {
    if !require("pmacctd", "pmacct") {
        return;
    }
    let (dir, pcap) = setup("exports-pmacct");
    let sock = collector();
    let got = pmacctd(&dir.0, &pcap, &sock, 1);
    assert!(!got.is_empty(), "pmacctd sent nothing");
    let export = dir.0.join("export-sflow.pcap");
    std::fs::write(&export, export_capture(&got, 6343)).unwrap();
    let v = same_plan(&pcap, &export, &[]);
    assert_eq!(v["capture"]["export"]["kinds"][0], "sflow");
    // The same datagrams on another port: read when the format is named.
    let other = dir.0.join("export-sflow-9999.pcap");
    std::fs::write(&other, export_capture(&got, 9999)).unwrap();
    same_plan(&pcap, &other, &["--flow-format", "sflow"]);
    // Sampled 1 in 4, at random: the traffic 20 times over.
    let long = dir.0.join("traffic-20.pcap");
    let frames: Vec<Vec<u8>> = (0..20).flat_map(|_| traffic()).collect();
    std::fs::write(&long, pcap_of(&frames)).unwrap();
    let got = pmacctd(&dir.0, &long, &sock, 4);
    let export = dir.0.join("export-sflow-sampled.pcap");
    std::fs::write(&export, export_capture(&got, 6343)).unwrap();
    random_sampled_plan(&long, &export);
}

/// Hand-built exports, no exporter needed: a file of length-prefixed
/// datagrams whose first data set comes before its template (counted and
/// named), and a capture mixing exports with other UDP traffic (refused
/// in auto, read either way when the format is named).
#[test]
fn dropped_records_are_counted_and_mixed_captures_need_a_format() {
    use lagkit_planner::export::build::*;
    let dir = Dir::new("exports-hand");
    let rec = record([10, 0, 0, 1], [10, 0, 0, 2], 1000, 80, 1000, 5);
    let datagrams = [
        v9(1, &[data(256, std::slice::from_ref(&rec))]),
        v9(1, &[v9_template(256, &FIVE_TUPLE)]),
        v9(1, &[data(256, &[rec.clone(), rec])]),
    ];
    let mut file = Vec::new();
    for d in &datagrams {
        file.extend_from_slice(&(d.len() as u16).to_be_bytes());
        file.extend_from_slice(d);
    }
    let bin = dir.0.join("datagrams.bin");
    std::fs::write(&bin, &file).unwrap();
    let (code, out, err) =
        common::lagkit("plan", &[bin.to_str().unwrap(), "--flow-format", "netflow"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("3 datagrams of NetFlow v9 from 1 exporter: 2 records in 1 flows"),
        "{out}"
    );
    assert!(
        out.contains("dropped: 1 data sets (24 bytes) came before their template"),
        "{out}"
    );
    let (code, out, _) = common::lagkit(
        "plan",
        &[bin.to_str().unwrap(), "--flow-format", "netflow", "--json"],
    );
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["capture"]["export"]["before_template_sets"], 1);
    assert_eq!(
        v["directions"][0]["prediction"]["bytes"],
        2 * (1000 + 5 * 14)
    );
    // Cut inside the last datagram: the two before it hold no record, so
    // there is nothing to plan: an error that says why.
    std::fs::write(&bin, &file[..file.len() - 3]).unwrap();
    let (code, out, err) =
        common::lagkit("plan", &[bin.to_str().unwrap(), "--flow-format", "netflow"]);
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("packet 3 is cut short"), "{err}");
    assert!(
        err.contains("no flows to plan: 2 datagrams of flow exports gave no flow: 1 data sets (24 bytes) came before their template"),
        "{err}"
    );
    let (code, _, err) = common::lagkit(
        "plan",
        &[bin.to_str().unwrap(), "--flow-format", "netflow", "--json"],
    );
    assert_eq!(code, 2);
    let v: serde_json::Value = serde_json::from_str(err.lines().last().unwrap()).unwrap();
    assert!(
        v["error"].as_str().unwrap().starts_with("no flows to plan"),
        "{v}"
    );

    // One export datagram and one DNS query: ambiguous.
    let mut frames = vec![];
    for (port, payload) in [(2055u16, datagrams[1].clone()), (53, vec![0u8; 30])] {
        let mut v = Vec::new();
        etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .udp(40000, port)
            .write(&mut v, &payload)
            .unwrap();
        frames.push(v);
    }
    let mixed = dir.0.join("mixed.pcap");
    std::fs::write(&mixed, pcap_of(&frames)).unwrap();
    let m = mixed.to_str().unwrap();
    let (code, _, err) = common::lagkit("plan", &[m]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("1 of the first 2 UDP datagrams are flow exports")
            && err.contains("--flow-format"),
        "{err}"
    );
    let (code, out, err) = common::lagkit("plan", &[m, "--flow-format", "packets"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2 packets in 2 flows"), "{out}");
    // Read as NetFlow: the export is a template alone, the other packet
    // not an export: no flows, and the error says both.
    let (code, out, err) = common::lagkit("plan", &[m, "--flow-format", "netflow"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        err.contains(
            "no flows to plan: 1 datagrams of flow exports gave no flow: 1 packets are not exports"
        ),
        "{err}"
    );
    // Datagrams to NetFlow's port in a version lagkit cannot read (v8):
    // never planned as traffic; nothing to plan, and says what.
    let mut v8 = vec![0u8, 8, 0, 1];
    v8.extend_from_slice(&[0; 60]);
    let mut frame = Vec::new();
    etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4([10, 0, 0, 9], [10, 0, 0, 1], 64)
        .udp(40000, 2055)
        .write(&mut frame, &v8)
        .unwrap();
    let old = dir.0.join("v8.pcap");
    std::fs::write(&old, pcap_of(&[frame.clone(), frame])).unwrap();
    let (code, out, err) = common::lagkit("plan", &[old.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    assert!(
        err.contains("2 datagrams are exports lagkit cannot read (NetFlow v8)"),
        "{err}"
    );
    // A flow list is not a file of datagrams.
    let csv = dir.0.join("flows.csv");
    std::fs::write(&csv, "src,dst\n10.0.0.1,10.0.0.2\n").unwrap();
    let (code, _, err) = common::lagkit("plan", &[csv.to_str().unwrap(), "--flow-format", "ipfix"]);
    assert_eq!(code, 2);
    assert!(err.contains("not a file of datagrams"), "{err}");
}
