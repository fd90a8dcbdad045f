//! Both metrics endpoints as an operator scrapes them: a `lagkit up` bond
//! (802.3ad, two members, `metrics_listen`) facing `lagkit switch
//! --metrics-listen` (an LACP port-channel) with a host on an access port,
//! TCP between the bond and the host, and each page fetched inside its
//! network namespace. The pages pass `promtool check metrics`, their
//! counters move with the traffic, and the LACP series say that each
//! member collects and distributes on both ends. Root only (skips with a
//! message otherwise); everything is removed on drop.

mod common;

use common::switch::{bond_ports, start, tmpdir, write};
use common::TmpDir;
use lagkit_testnet::{tcp_flows, wait_until, Lab};
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

const BOND_ADDR: &str = "127.0.0.1:9464";
const SWITCH_ADDR: &str = "127.0.0.1:9465";

/// GET / on `addr` inside `ns`, with `accept` as the Accept header when
/// given: the whole response (head and body), or "" when nothing answers.
fn scrape_with(ns: &str, addr: &str, accept: Option<&str>) -> String {
    let (ns, addr) = (ns.to_string(), addr.to_string());
    let accept = accept
        .map(|a| format!("Accept: {a}\r\n"))
        .unwrap_or_default();
    std::thread::spawn(move || -> Option<String> {
        lagkit_dataplane::netns::enter(&ns).ok()?;
        let mut s = std::net::TcpStream::connect(&addr).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        write!(
            s,
            "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{accept}\r\n"
        )
        .ok()?;
        let mut out = String::new();
        s.read_to_string(&mut out).ok()?;
        Some(out)
    })
    .join()
    .ok()
    .flatten()
    .unwrap_or_default()
}

/// The body of a plain scrape (Prometheus text format).
fn scrape(ns: &str, addr: &str) -> String {
    let r = scrape_with(ns, addr, None);
    r.split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default()
}

/// The value of the series `name` whose labels include every `labels`
/// pair, if the page has it.
fn value(page: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    page.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
        })
        .find(|l| {
            labels
                .iter()
                .all(|(k, v)| l.contains(&format!("{k}=\"{v}\"")))
        })
        .and_then(|l| l.rsplit_once(' ')?.1.parse().ok())
}

/// The sum of every series `name` with the `labels` pairs.
fn total(page: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    page.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| l.strip_prefix(name).is_some_and(|r| r.starts_with('{')))
        .filter(|l| {
            labels
                .iter()
                .all(|(k, v)| l.contains(&format!("{k}=\"{v}\"")))
        })
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

/// `promtool check metrics` over `page`: its complaints, if any.
fn promtool(page: &str) -> Result<(), String> {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| lagkit_dataplane::tools::spawn_error("promtool", &e))?;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(page.as_bytes())
        .map_err(|e| e.to_string())?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "promtool check metrics: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// A bond (two members) facing the switch (Gi1/1-2 its channel, Gi1/3 a
/// host at 10.0.NET.2), both serving metrics; stopped and removed on drop.
struct Ends {
    sw: String,
    a: String,
    h: String,
    _switch: common::Daemon,
    _bond: common::Daemon,
    _dir: TmpDir,
    _lab: Lab,
}

fn ends(test: &str, net: u8, channel: &str, bond: &str) -> Option<Ends> {
    let mut lab = Lab::new(test)?;
    let (sw, a, h) = (lab.netns(), lab.netns(), lab.netns());
    lab.veth(&a, "eth1", &sw, "a1");
    lab.veth(&a, "eth2", &sw, "a2");
    lab.veth(&h, "eth0", &sw, "h1");
    for d in ["a1", "a2", "h1"] {
        lab.sh(&["ip", "-n", &sw, "link", "set", d, "up"]);
    }
    lab.host(&h, "eth0", &format!("10.0.{net}.2/24"));
    let dir = TmpDir(tmpdir(test));
    let cfg = write(
        &dir.0,
        "switch.cfg",
        &format!("hostname edge\nport-channel load-balance src-dst-port\ninterface range gi1/1 - 2\n {channel}\ninterface port-channel 1\n"),
    );
    let switch = start(
        &sw,
        &[
            "switch",
            cfg.to_str().unwrap(),
            "--port",
            "Gi1/1=a1",
            "--port",
            "Gi1/2=a2",
            "--port",
            "Gi1/3=h1",
            "--metrics-listen",
            SWITCH_ADDR,
        ],
        &dir.0.join("switch.log"),
    );
    let toml = write(
        &dir.0,
        "bond.toml",
        &format!(
            "name = \"bond0\"\nmembers = [\"eth1\", \"eth2\"]\nxmit_hash_policy = \"layer3+4\"\naddress = [\"10.0.{net}.1/24\"]\nmetrics_listen = \"{BOND_ADDR}\"\n{bond}"
        ),
    );
    let bond = start(&a, &["up", toml.to_str().unwrap()], &dir.0.join("bond.log"));
    Some(Ends {
        sw,
        a,
        h,
        _switch: switch,
        _bond: bond,
        _dir: dir,
        _lab: lab,
    })
}

#[test]
fn both_ends_export_counters_that_move_and_lacp_collecting_distributing() {
    let Some(e) = ends(
        "metrics",
        31,
        "channel-group 1 mode active\n lacp rate fast",
        "mode = \"802.3ad\"\nlacp_rate = \"fast\"\n",
    ) else {
        return;
    };
    let (sw, a, h) = (&e.sw, &e.a, &e.h);
    wait_until(
        "the bond aggregates both members",
        Duration::from_secs(20),
        || bond_ports(a) == 2,
    );
    // Both pages say so within a render (at most a second).
    let distributing = |page: &str, name: &str, labels: &[(&str, &str)]| {
        ["collecting", "distributing"].iter().all(|bit| {
            let mut l = labels.to_vec();
            l.push(("bit", bit));
            value(page, name, &l) == Some(1.0)
        })
    };
    let members = [
        ("eth1", "GigabitEthernet1/1"),
        ("eth2", "GigabitEthernet1/2"),
    ];
    wait_until(
        "both pages show each member collecting and distributing on both ends",
        Duration::from_secs(5),
        || {
            let (bp, sp) = (scrape(a, BOND_ADDR), scrape(sw, SWITCH_ADDR));
            members.iter().all(|(m, p)| {
                distributing(&bp, "lagkit_member_lacp_actor_state", &[("member", m)])
                    && distributing(&bp, "lagkit_member_lacp_partner_state", &[("member", m)])
                    && distributing(&sp, "lagkit_switch_member_lacp_actor_state", &[("port", p)])
                    && distributing(
                        &sp,
                        "lagkit_switch_member_lacp_partner_state",
                        &[("port", p)],
                    )
                    && value(
                        &sp,
                        "lagkit_switch_member_state",
                        &[("port", p), ("state", "bundled")],
                    ) == Some(1.0)
            })
        },
    );
    let (bond_before, switch_before) = (scrape(a, BOND_ADDR), scrape(sw, SWITCH_ADDR));
    for (name, page) in [("bond", &bond_before), ("switch", &switch_before)] {
        if let Err(e) = promtool(page) {
            panic!("the {name}'s page: {e}\n{page}");
        }
    }
    assert_eq!(
        value(
            &bond_before,
            "lagkit_bond_info",
            &[
                ("bond", "bond0"),
                ("mode", "802.3ad"),
                ("policy", "layer3+4")
            ]
        ),
        Some(1.0),
        "{bond_before}"
    );
    assert!(
        value(&bond_before, "lagkit_bond_plans_published_total", &[]).unwrap_or(0.0) >= 1.0,
        "{bond_before}"
    );
    assert_eq!(
        value(
            &switch_before,
            "lagkit_switch_channel_bundled_members",
            &[("channel", "Port-channel1")]
        ),
        Some(2.0),
        "{switch_before}"
    );
    // The partner each end hears is the other: the switch's system id on
    // the bond, the bond's on the switch.
    let bond_partner = bond_before
        .lines()
        .find(|l| l.starts_with("lagkit_member_lacp_partner_info{"))
        .expect("partner info");
    assert!(
        !bond_partner.contains("partner_system=\"00:00:00:00:00:00\""),
        "{bond_partner}"
    );

    // Traffic both ways between the bond and the host, through the channel.
    // Sixteen flows: each member carries some (all on one: 2 in 2^16).
    let bytes: u64 = 2 << 20;
    for t in tcp_flows(h, "10.0.31.2:7300", a, 8, bytes)
        .into_iter()
        .chain(tcp_flows(a, "10.0.31.1:7400", h, 8, bytes))
    {
        assert_eq!(t.received, t.sent, "every byte arrived");
    }
    let moved = 8.0 * bytes as f64;
    // The next render (within a second) shows it.
    let mut pages = (String::new(), String::new());
    wait_until(
        "both pages count the transfers",
        Duration::from_secs(5),
        || {
            pages = (scrape(a, BOND_ADDR), scrape(sw, SWITCH_ADDR));
            let (bp, sp) = (&pages.0, &pages.1);
            let grew = |page: &str, before: &str, name: &str, labels: &[(&str, &str)]| {
                total(page, name, labels) - total(before, name, labels) >= moved
            };
            grew(bp, &bond_before, "lagkit_member_tx_bytes_total", &[])
                && grew(bp, &bond_before, "lagkit_member_rx_bytes_total", &[])
                && grew(
                    sp,
                    &switch_before,
                    "lagkit_switch_channel_rx_bytes_total",
                    &[],
                )
                && grew(
                    sp,
                    &switch_before,
                    "lagkit_switch_channel_tx_bytes_total",
                    &[],
                )
                && grew(
                    sp,
                    &switch_before,
                    "lagkit_switch_port_rx_bytes_total",
                    &[("port", "GigabitEthernet1/3")],
                )
                && grew(
                    sp,
                    &switch_before,
                    "lagkit_switch_port_tx_bytes_total",
                    &[("port", "GigabitEthernet1/3")],
                )
        },
    );
    let (bp, sp) = pages;
    for (name, page) in [("bond", &bp), ("switch", &sp)] {
        if let Err(e) = promtool(page) {
            panic!("the {name}'s page: {e}\n{page}");
        }
    }
    // Unicast frames were counted as such on the host's port, and the
    // table learned the bond and the host.
    let ucast = |page: &str| {
        total(
            page,
            "lagkit_switch_port_rx_frames_total",
            &[("port", "GigabitEthernet1/3"), ("cast", "unicast")],
        )
    };
    assert!(ucast(&sp) - ucast(&switch_before) > 100.0, "{sp}");
    assert!(
        value(&sp, "lagkit_switch_fdb_entries", &[]).unwrap_or(0.0) >= 2.0,
        "{sp}"
    );
    // Both members carried the bond's share of the flows.
    for (m, _) in members {
        let tx = |page: &str| value(page, "lagkit_member_tx_packets_total", &[("member", m)]);
        assert!(tx(&bp) > tx(&bond_before), "{m} carried nothing: {bp}");
    }
    // A scraper that asks for OpenMetrics gets it.
    let om = scrape_with(
        sw,
        SWITCH_ADDR,
        Some("application/openmetrics-text; version=1.0.0"),
    );
    assert!(
        om.contains("Content-Type: application/openmetrics-text") && om.ends_with("# EOF\n"),
        "{om}"
    );
    let text = scrape_with(a, BOND_ADDR, None);
    assert!(
        text.contains("Content-Type: text/plain; version=0.0.4"),
        "{text}"
    );
    // A thousand connections held open (half of them with half a request)
    // on each endpoint delay neither's scrape.
    for (ns, addr) in [(a, BOND_ADDR), (sw, SWITCH_ADDR)] {
        let held = hold(ns, addr, 1000);
        assert_eq!(held.len(), 1000, "{addr}: every connection was accepted");
        let t = std::time::Instant::now();
        let page = scrape(ns, addr);
        assert!(page.contains("# TYPE lagkit_"), "{addr}: {page}");
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "{addr}: a scrape under 1000 held connections took {:?}",
            t.elapsed()
        );
    }
}

/// `n` connections to `addr` in `ns`, each held open, every other one
/// after half a request.
fn hold(ns: &str, addr: &str, n: usize) -> Vec<std::net::TcpStream> {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, soft.max(4096).min(hard), hard);
    }
    let (ns, addr) = (ns.to_string(), addr.to_string());
    std::thread::spawn(move || {
        lagkit_dataplane::netns::enter(&ns).expect("enter the namespace");
        (0..n)
            .filter_map(|i| {
                let mut s = std::net::TcpStream::connect(&addr).ok()?;
                if i % 2 == 0 {
                    let _ = s.write_all(b"GET /metrics HTTP/1.1\r\nHo");
                }
                Some(s)
            })
            .collect()
    })
    .join()
    .expect("connections")
}

/// A balance-xor bond with `pagp = "desirable"` facing a `mode auto`
/// channel: both pages show each member in PAgP's upPagp and bundled, and
/// the partner each hears; promtool takes both pages.
#[test]
fn pagp_state_on_both_ends() {
    let Some(e) = ends(
        "metrics_pagp",
        32,
        "channel-group 1 mode auto",
        "mode = \"balance-xor\"\npagp = \"desirable\"\n",
    ) else {
        return;
    };
    let (sw, a) = (&e.sw, &e.a);
    let members = [
        ("eth1", "GigabitEthernet1/1"),
        ("eth2", "GigabitEthernet1/2"),
    ];
    let mut pages = (String::new(), String::new());
    wait_until(
        "both pages show each member in upPagp and bundled",
        Duration::from_secs(20),
        || {
            pages = (scrape(a, BOND_ADDR), scrape(sw, SWITCH_ADDR));
            let (bp, sp) = (&pages.0, &pages.1);
            members.iter().all(|(m, p)| {
                value(
                    bp,
                    "lagkit_member_pagp_state",
                    &[("member", m), ("state", "upPagp")],
                ) == Some(1.0)
                    && value(
                        sp,
                        "lagkit_switch_member_pagp_state",
                        &[("port", p), ("state", "upPagp")],
                    ) == Some(1.0)
                    && value(
                        sp,
                        "lagkit_switch_member_state",
                        &[("port", p), ("state", "bundled")],
                    ) == Some(1.0)
            })
        },
    );
    let (bp, sp) = pages;
    for (name, page) in [("bond", &bp), ("switch", &sp)] {
        if let Err(e) = promtool(page) {
            panic!("the {name}'s page: {e}\n{page}");
        }
    }
    for (m, p) in members {
        // Only the current state is 1.
        assert_eq!(
            total(&bp, "lagkit_member_pagp_state", &[("member", m)]),
            1.0,
            "{bp}"
        );
        assert!(
            value(
                &bp,
                "lagkit_member_pagp_partner_info",
                &[("member", m), ("partner_port", p)]
            ) == Some(1.0),
            "{m} hears {p}: {bp}"
        );
        assert!(
            value(&bp, "lagkit_member_pagp_rx_hellos_total", &[("member", m)]).unwrap_or(0.0)
                >= 1.0,
            "{bp}"
        );
    }
    assert_eq!(
        value(&bp, "lagkit_bond_info", &[("mode", "balance-xor")]),
        Some(1.0),
        "{bp}"
    );
    assert_eq!(
        value(
            &sp,
            "lagkit_switch_channel_info",
            &[("protocol", "pagp"), ("mode", "auto")]
        ),
        Some(1.0),
        "{sp}"
    );
}

/// node_exporter's bonding series as the real node_exporter writes them for
/// a bond of `slaves` members, `active` of them up: it is run (Debian's
/// prometheus-node-exporter, only its bonding collector) inside `ns` on a
/// sysfs tree laid out as the kernel's, and scraped there.
fn node_exporter_says(ns: &str, dir: &std::path::Path, slaves: usize, active: usize) -> String {
    let net = dir.join("sys/class/net");
    let bond = net.join("bond0");
    std::fs::create_dir_all(bond.join("bonding")).unwrap();
    let names: Vec<String> = (0..slaves).map(|i| format!("eth{}", i + 1)).collect();
    std::fs::write(net.join("bonding_masters"), "bond0\n").unwrap();
    std::fs::write(
        bond.join("bonding/slaves"),
        format!("{}\n", names.join(" ")),
    )
    .unwrap();
    for (i, n) in names.iter().enumerate() {
        let d = net.join(n).join("bonding_slave");
        std::fs::create_dir_all(&d).unwrap();
        let st = if i < active { "up" } else { "down" };
        std::fs::write(d.join("mii_status"), format!("{st}\n")).unwrap();
        let _ = std::os::unix::fs::symlink(format!("../{n}"), bond.join(format!("lower_{n}")));
    }
    let addr = "127.0.0.1:9467";
    let sys = dir.join("sys");
    let child = Command::new("ip")
        .args(["netns", "exec", ns, "prometheus-node-exporter"])
        .args(["--collector.disable-defaults", "--collector.bonding"])
        .arg(format!("--path.sysfs={}", sys.display()))
        .arg(format!("--path.procfs={}", dir.join("noproc").display()))
        .arg(format!("--web.listen-address={addr}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| lagkit_dataplane::tools::spawn_error("prometheus-node-exporter", &e))
        .unwrap_or_else(|e| panic!("{e}"));
    let _stop = common::Reap(child);
    let mut page = String::new();
    wait_until("node_exporter answers", Duration::from_secs(10), || {
        page = scrape(ns, addr);
        page.contains("node_scrape_collector_success{collector=\"bonding\"} 1")
    });
    bonding_lines(&page)
}

/// The `node_bonding_*` lines of a page, with their HELP and TYPE.
fn bonding_lines(page: &str) -> String {
    page.lines()
        .filter(|l| {
            let l = l
                .strip_prefix("# HELP ")
                .or_else(|| l.strip_prefix("# TYPE "))
                .unwrap_or(l);
            l.starts_with("node_bonding_")
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The bond's page carries node_exporter's own bonding series, line for
/// line as the real node_exporter writes them for a kernel bond in the
/// same state (names, HELP, TYPE, the `master` label, the values), so
/// dashboards and the degraded-bond alert on their difference read it
/// unchanged; promtool takes them.
#[test]
fn node_exporters_bonding_series_as_node_exporter_writes_them() {
    let Some(mut lab) = Lab::new("node_exporter_names") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    for m in ["eth1", "eth2"] {
        lab.veth(&a, m, &b, m);
        lab.prep_member(&b, m, 1500);
    }
    let dir = TmpDir(tmpdir("node_exporter_names"));
    let toml = write(
        &dir.0,
        "bond.toml",
        &format!("name = \"bond0\"\nmode = \"balance-xor\"\nmembers = [\"eth1\", \"eth2\"]\naddress = [\"10.0.37.1/24\"]\nmetrics_listen = \"{BOND_ADDR}\"\n"),
    );
    let _bond = start(&a, &["up", toml.to_str().unwrap()], &dir.0.join("bond.log"));
    let ours = |want_active: usize| {
        let mut lines = String::new();
        wait_until(
            &format!("the bond's page says {want_active} active"),
            Duration::from_secs(10),
            || {
                lines = bonding_lines(&scrape(&a, BOND_ADDR));
                lines.contains(&format!(
                    "node_bonding_active{{master=\"bond0\"}} {want_active}\n"
                ))
            },
        );
        lines
    };
    let healthy = ours(2);
    lab.sh(&["ip", "-n", &b, "link", "set", "eth2", "down"]);
    let degraded = ours(1);
    let theirs = node_exporter_says(&a, &dir.0.join("ne"), 2, 1);
    assert_eq!(
        degraded, theirs,
        "the bond's node_bonding_* lines and node_exporter's"
    );
    assert!(
        healthy.contains("node_bonding_slaves{master=\"bond0\"} 2\n"),
        "{healthy}"
    );
    if let Err(e) = promtool(&degraded) {
        panic!("{e}\n{degraded}");
    }
}
