//! The campaign through lagkit's own switch: a `lagkit up` bond (two
//! members, 802.3ad, `lacp_rate = "fast"`) on port-channel 1 of a
//! `lagkit switch` (LACP active, `lacp rate fast`), a plain host on an
//! access port, and a flooder's namespace on another. The load is the
//! campaign's own (four TCP connections checked byte for byte, a 200/s
//! ping), bond to host through the switch's user-space forwarding, and a
//! UDP probe on the clock beside it ([`Probe`]) that measures outages
//! where ping understates them.
//!
//! A SIGHUP to the switch restarts it with the new file (its ports close
//! and open again, its channels renegotiate): no key is applied in place,
//! so every reload is an outage of the channel, measured here as such.

use super::common::switch::{flags, show, show_text, start_switch, switch_ports};
use super::common::Daemon as Process;
use super::{full, report, Bed, Daemon, Load, Seen};
use lagkit_sys::proc::Signal;
use lagkit_testnet::{flood_random, wait_until, FloodFrames, Lab};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BOND: &str = "mode = \"802.3ad\"\nlacp_rate = \"fast\"\nxmit_hash_policy = \"layer3+4\"\n";

/// The switch's configuration: port-channel 1 on Gi1/1-2 (the bond),
/// access ports Gi1/3 (the host) and Gi1/4 (the flooder).
#[derive(Clone)]
struct SwitchCfg {
    method: &'static str,
    mode: &'static str,
    rate: &'static str,
    port_priority: u16,
}

impl Default for SwitchCfg {
    fn default() -> SwitchCfg {
        SwitchCfg {
            method: "src-dst-ip",
            mode: "active",
            rate: "fast",
            port_priority: 32768,
        }
    }
}

impl SwitchCfg {
    fn text(&self) -> String {
        format!(
            "hostname camp\nport-channel load-balance {}\ninterface range gigabitethernet 1/1 - 2\n channel-group 1 mode {}\n lacp rate {}\n lacp port-priority {}\ninterface range gigabitethernet 1/3 - 4\n switchport access vlan 1\n",
            self.method, self.mode, self.rate, self.port_priority
        )
    }
}

const PORTS: [&str; 4] = ["Gi1/1=p1", "Gi1/2=p2", "Gi1/3=p3", "Gi1/4=p4"];

/// The rig. `bed.a` holds the bond (eth1, eth2 on the switch's p1, p2),
/// `bed.b` the host (eth0, 10.0.0.2, on p3), `fl` the flooder (eth0 on
/// p4), `sw` the switch. Dropped in field order: the switch, then the
/// namespaces and files.
struct Rig {
    switch: Option<Process>,
    bed: Bed,
    sw: String,
    fl: String,
}

impl Rig {
    /// The namespaces and the switch; the bond is the caller's
    /// (`rig.bed.up("a", BOND)`), then [`Rig::formed`].
    fn new(test: &str, alone: bool) -> Option<Rig> {
        let mut lab = if alone {
            Lab::alone(test)?
        } else {
            Lab::new(test)?
        };
        let (a, b, sw, fl) = (lab.netns(), lab.netns(), lab.netns(), lab.netns());
        lab.veth(&a, "eth1", &sw, "p1");
        lab.veth(&a, "eth2", &sw, "p2");
        lab.veth(&b, "eth0", &sw, "p3");
        lab.veth(&fl, "eth0", &sw, "p4");
        for ns in [&a, &b, &fl] {
            lab.nsexec(ns, &["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
        }
        lab.host(&b, "eth0", "10.0.0.2/24");
        lab.sh(&["ip", "-n", &fl, "link", "set", "eth0", "up"]);
        switch_ports(&lab, &sw, &["p1", "p2", "p3", "p4"], None);
        let dir = std::env::temp_dir().join(format!("lkt-camp-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut rig = Rig {
            switch: None,
            bed: Bed { lab, a, b, dir },
            sw,
            fl,
        };
        rig.start_switch(&SwitchCfg::default());
        Some(rig)
    }

    fn start_switch(&mut self, cfg: &SwitchCfg) {
        self.switch = Some(start_switch(&self.sw, &self.bed.dir, &cfg.text(), &PORTS));
    }

    fn switch(&self) -> &Process {
        self.switch.as_ref().expect("the switch runs")
    }

    /// Rewrites the switch's file (by rename: a reload never reads half a
    /// file) and sends SIGHUP.
    fn reload_switch(&self, cfg: &SwitchCfg) {
        let tmp = self.bed.dir.join("switch.cfg.tmp");
        std::fs::write(&tmp, cfg.text()).unwrap();
        std::fs::rename(&tmp, self.bed.dir.join("switch.cfg")).unwrap();
        self.switch().signal(Signal::SIGHUP);
    }

    /// Times the switch restarted for a reload, from its log.
    fn switch_restarts(&self) -> usize {
        std::fs::read_to_string(self.bed.dir.join("switch.log"))
            .unwrap_or_default()
            .matches("restarting the switch with the new configuration")
            .count()
    }

    /// Po1 bundles both members on the switch and the bond carries both.
    fn formed(&self, bond: &Daemon) -> bool {
        bond.carrying() == 2 && flags(&self.sw, 1) == ["P", "P"]
    }

    /// The campaign's load from the bond to the host, once its 4
    /// connections are established and a ping has been answered (the
    /// neighbours resolved before any fault).
    fn load(&self, port: u16) -> Traffic {
        let (a, b) = (&self.bed.a, &self.bed.b);
        wait_until("the bond reaches the host", Duration::from_secs(10), || {
            lagkit_testnet::ping(a, "10.0.0.2", 1).received == 1
        });
        let established = || lagkit_testnet::counter(&self.bed.lab, b, "Tcp:CurrEstab");
        let before = established();
        let load = Load::between(a, b, port, 4);
        wait_until("4 connections established", Duration::from_secs(10), || {
            established() >= before + 4
        });
        Traffic {
            load,
            probe: Probe::start(a, b, port + 100),
        }
    }

    /// Echo requests the host has answered.
    fn echoes(&self) -> u64 {
        lagkit_testnet::counter(&self.bed.lab, &self.bed.b, "Icmp:InEchos")
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        // The switch first, while its namespace exists.
        self.switch.take();
    }
}

/// A UDP datagram from the bond to the host every 5 ms, numbered, counted
/// at the host: unlike ping (which holds back its sends while replies are
/// outstanding and under load, so it sends fewer than asked, and fewer
/// still during an outage), it sends on the clock, so its losses and the
/// longest gap between arrivals measure the outage itself.
struct Probe {
    stop: Arc<AtomicBool>,
    /// Sent and received so far, for the losses of one step.
    counts: Arc<(AtomicU64, AtomicU64)>,
    sender: Option<std::thread::JoinHandle<u64>>,
    receiver: Option<std::thread::JoinHandle<Vec<u64>>>,
}

/// What a probe saw.
struct Probed {
    sent: u64,
    received: u64,
    /// The longest run of lost datagrams, as time.
    longest_gap: Duration,
}

const PROBE_EVERY: Duration = Duration::from_millis(5);

impl Probe {
    fn start(a: &str, b: &str, port: u16) -> Probe {
        use lagkit_dataplane::netns::run_in;
        use std::net::UdpSocket;
        let to = format!("10.0.0.2:{port}");
        let rx = run_in(b, || UdpSocket::bind(&to))
            .expect("enter namespace")
            .expect("bind the probe's receiver");
        rx.set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let tx = run_in(a, || UdpSocket::bind("10.0.0.1:0"))
            .expect("enter namespace")
            .expect("bind the probe's sender");
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new((AtomicU64::new(0), AtomicU64::new(0)));
        let (st, c) = (stop.clone(), counts.clone());
        let sender = std::thread::spawn(move || {
            let start = Instant::now();
            let mut n = 0u64;
            while !st.load(Ordering::Relaxed) {
                // Failed sends (no route while the bond has no member)
                // count as sent and lost.
                let _ = tx.send_to(&n.to_be_bytes(), &to);
                n += 1;
                c.0.store(n, Ordering::Relaxed);
                let next = start + PROBE_EVERY * n as u32;
                if let Some(d) = next.checked_duration_since(Instant::now()) {
                    std::thread::sleep(d);
                }
            }
            n
        });
        let (st, c) = (stop.clone(), counts.clone());
        let receiver = std::thread::spawn(move || {
            let mut got = Vec::new();
            let mut buf = [0u8; 16];
            // Until stopped and a read timed out: the last in flight arrived.
            loop {
                match rx.recv(&mut buf) {
                    Ok(8) => {
                        got.push(u64::from_be_bytes(buf[..8].try_into().unwrap()));
                        c.1.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(_) => {}
                    Err(_) if st.load(Ordering::Relaxed) => break,
                    Err(_) => {}
                }
            }
            got
        });
        Probe {
            stop,
            counts,
            sender: Some(sender),
            receiver: Some(receiver),
        }
    }

    /// Datagrams sent and not (yet) received so far.
    fn lost_so_far(&self) -> u64 {
        let sent = self.counts.0.load(Ordering::Relaxed);
        sent.saturating_sub(self.counts.1.load(Ordering::Relaxed))
    }

    fn finish(mut self) -> Probed {
        self.stop.store(true, Ordering::Relaxed);
        let sent = self.sender.take().unwrap().join().expect("probe sender");
        let mut got = self
            .receiver
            .take()
            .unwrap()
            .join()
            .expect("probe receiver");
        got.sort_unstable();
        got.dedup();
        // Gaps between consecutive arrivals, and before the first and
        // after the last.
        let mut longest = 0u64;
        let mut prev: Option<u64> = None;
        for &s in &got {
            let gap = prev.map_or(s, |p| s - p - 1);
            longest = longest.max(gap);
            prev = Some(s);
        }
        longest = longest.max(sent.saturating_sub(prev.map_or(0, |p| p + 1)));
        Probed {
            sent,
            received: got.len() as u64,
            longest_gap: PROBE_EVERY * longest as u32,
        }
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Probed {
    fn lost(&self) -> u64 {
        self.sent.saturating_sub(self.received)
    }

    /// `N of M probes lost (longest gap T)`.
    fn text(&self) -> String {
        format!(
            "{} of {} UDP probes (200/s) lost, longest gap {:?}",
            self.lost(),
            self.sent,
            self.longest_gap
        )
    }
}

/// The campaign's load and the probe side by side.
struct Traffic {
    load: Load,
    probe: Probe,
}

impl Traffic {
    fn finish(self) -> (Seen, Probed) {
        let probed = self.probe.finish();
        (self.load.finish(), probed)
    }
}

fn median_max(v: &mut [Duration]) -> (Duration, Duration) {
    v.sort();
    (v[v.len() / 2], v[v.len() - 1])
}

fn lost_percent(s: &Seen) -> f64 {
    100.0 * s.ping_lost as f64 / s.ping_sent.max(1) as f64
}

/// Waits until `at + gap`, polling the clock (the spacing a scenario
/// defines between its steps).
fn spaced(at: Instant, gap: Duration) {
    wait_until(
        "the spacing between steps",
        gap + Duration::from_secs(1),
        || at.elapsed() >= gap,
    );
}

/// A member of Po1 flapped on the switch's side (`ip link set pN
/// down/up`), alternately Gi1/1 and Gi1/2: each flap costs a few pings,
/// the member is back in the channel on both ends within seconds, and no
/// connection is lost.
#[test]
fn through_switch_member_flaps() {
    let Some(rig) = Rig::new("sw_flaps", false) else {
        return;
    };
    let a = rig.bed.up("a", BOND);
    wait_until("Po1 forms", Duration::from_secs(20), || rig.formed(&a));
    let flaps = if full() { 100 } else { 3 };
    let r0 = rig.bed.retrans(&rig.bed.a);
    let load = rig.load(7401);
    let t0 = Instant::now();
    let (mut out, mut back) = (Vec::new(), Vec::new());
    // UDP probes lost while the member goes, and while it comes back.
    let (mut lost_down, mut lost_up) = (Vec::new(), Vec::new());
    for i in 0..flaps {
        let (port, member) = if i % 2 == 0 {
            ("p1", "eth1")
        } else {
            ("p2", "eth2")
        };
        let t = Instant::now();
        let l0 = load.probe.lost_so_far();
        rig.bed.ip(&rig.sw, &["link", "set", port, "down"]);
        wait_until("the member leaves", Duration::from_secs(5), || {
            !a.member_carries(member) && flags(&rig.sw, 1).iter().any(|f| f != "P")
        });
        out.push(t.elapsed());
        let l1 = load.probe.lost_so_far();
        rig.bed.ip(&rig.sw, &["link", "set", port, "up"]);
        let t = Instant::now();
        wait_until("the member is back in Po1", Duration::from_secs(15), || {
            rig.formed(&a)
        });
        back.push(t.elapsed());
        // What is in flight arrives within a few ms.
        spaced(Instant::now(), Duration::from_millis(20));
        let l2 = load.probe.lost_so_far();
        lost_down.push(l1.saturating_sub(l0));
        lost_up.push(l2.saturating_sub(l1));
    }
    let took = t0.elapsed();
    let (seen, probed) = load.finish();
    let retrans = rig.bed.retrans(&rig.bed.a) - r0;
    let (out_med, out_max) = median_max(&mut out);
    let (back_med, back_max) = median_max(&mut back);
    lost_down.sort_unstable();
    lost_up.sort_unstable();
    let med_max = |v: &[u64]| (v[v.len() / 2], v[v.len() - 1]);
    let ((dm, dx), (um, ux)) = (med_max(&lost_down), med_max(&lost_up));
    report(
        "through_switch_member_flaps",
        &format!(
            "{flaps} flaps of a Po1 member (switch side) in {:.0} s under {} TCP connections ({} MB): {} connections lost; per flap {:.1} pings lost ({} sent, asked 200/s), {:.1} UDP probes lost, {:.1} TCP retransmits; {}; UDP probes lost per flap while the member goes median {dm} (max {dx}), while it comes back median {um} (max {ux}); out of the channel after median {out_med:?} (max {out_max:?}), back in Po1 (P on the switch, distributing on the bond) after median {back_med:?}, max {back_max:?}",
            took.as_secs_f64(),
            seen.connections,
            seen.bytes >> 20,
            seen.lost.len(),
            seen.ping_lost as f64 / flaps as f64,
            seen.ping_sent,
            probed.lost() as f64 / flaps as f64,
            retrans as f64 / flaps as f64,
            probed.text(),
        ),
    );
    assert!(
        seen.lost.is_empty(),
        "TCP connections lost: {:?}",
        seen.lost
    );
    assert!(seen.bytes > 0);
}

/// SIGKILL the switch and start it again with the same file: the channel
/// is bundled again and traffic flows after an outage that is measured;
/// the new switch takes its ports back (no process of the killed one is
/// left in its namespace) and no connection is lost.
#[test]
fn through_switch_sigkill_and_restart() {
    let Some(mut rig) = Rig::new("sw_sigkill", false) else {
        return;
    };
    let a = rig.bed.up("a", BOND);
    wait_until("Po1 forms", Duration::from_secs(20), || rig.formed(&a));
    let rounds = if full() { 20 } else { 2 };
    let load = rig.load(7501);
    let (mut bundled, mut flowing) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let mut old = rig.switch.take().expect("the switch runs");
        let old_pid = old.0.id();
        old.signal(Signal::SIGKILL);
        let _ = old.0.wait();
        let t = Instant::now();
        rig.start_switch(&SwitchCfg::default());
        let echoes = rig.echoes();
        wait_until("traffic flows again", Duration::from_secs(20), || {
            rig.echoes() > echoes
        });
        flowing.push(t.elapsed());
        wait_until("Po1 bundled again", Duration::from_secs(20), || {
            rig.formed(&a)
        });
        bundled.push(t.elapsed());
        let pids = rig.bed.lab.sh(&["ip", "netns", "pids", &rig.sw]);
        let pids: Vec<&str> = pids.split_whitespace().collect();
        let new_pid = rig.switch().0.id().to_string();
        assert_eq!(
            pids,
            [new_pid.as_str()],
            "only the new switch runs in its namespace (the killed one was {old_pid})"
        );
        // Spacing a restart from the previous one's recovery, as an
        // operator would.
        spaced(Instant::now(), Duration::from_millis(500));
    }
    let (seen, probed) = load.finish();
    let summary = show_text(&rig.sw, &["etherchannel", "summary"]);
    let (b_med, b_max) = median_max(&mut bundled);
    let (f_med, f_max) = median_max(&mut flowing);
    report(
        "through_switch_sigkill_restart",
        &format!(
            "{rounds} SIGKILL + restart rounds of the switch under {} TCP connections ({} MB): {} connections lost; first ping through after median {f_med:?} (max {f_max:?}), Po1 bundled on both ends after median {b_med:?} (max {b_max:?}); per restart {:.0} UDP probes lost ({}), {:.0} pings lost ({} of {} sent, asked 200/s)",
            seen.connections,
            seen.bytes >> 20,
            seen.lost.len(),
            probed.lost() as f64 / rounds as f64,
            probed.text(),
            seen.ping_lost as f64 / rounds as f64,
            seen.ping_lost,
            seen.ping_sent,
        ),
    );
    assert!(
        seen.lost.is_empty(),
        "TCP connections lost: {:?}",
        seen.lost
    );
    assert!(summary.contains("Po1(SU)"), "{summary}");
}

/// The switch reloaded (SIGHUP) with one LACP setting changed at a time,
/// 3 s after the channel re-formed from the previous one: `lacp rate
/// normal`, `channel-group 1 mode passive`, `lacp port-priority 200`, and
/// back. Each reload restarts the switch, so each is an outage: measured,
/// with no connection lost. (`lacp system-priority` is read but not
/// modelled: the switch keeps 32768.)
#[test]
fn through_switch_partner_churn() {
    let Some(rig) = Rig::new("sw_churn", false) else {
        return;
    };
    let a = rig.bed.up("a", BOND);
    wait_until("Po1 forms", Duration::from_secs(20), || rig.formed(&a));
    let load = rig.load(7601);
    let cycles = if full() { 5 } else { 1 };
    let base = SwitchCfg::default();
    let mut times = Vec::new();
    for _ in 0..cycles {
        let steps = [
            (
                "rate normal",
                SwitchCfg {
                    rate: "normal",
                    ..base.clone()
                },
            ),
            (
                "mode passive",
                SwitchCfg {
                    mode: "passive",
                    ..base.clone()
                },
            ),
            (
                "port priority 200",
                SwitchCfg {
                    port_priority: 200,
                    ..base.clone()
                },
            ),
            ("back to the start", base.clone()),
        ];
        for (what, cfg) in steps {
            let before = rig.switch_restarts();
            let t = Instant::now();
            rig.reload_switch(&cfg);
            wait_until(
                &format!("the switch restarts for '{what}'"),
                Duration::from_secs(10),
                || rig.switch_restarts() > before,
            );
            let want = cfg.text();
            wait_until(
                &format!("the switch runs '{what}'"),
                Duration::from_secs(10),
                || {
                    let run = show_text(&rig.sw, &["running-config"]);
                    want.lines()
                        .filter(|l| l.starts_with(" channel-group") || l.starts_with(" lacp"))
                        .all(|l| run.contains(&format!("{l}\n")))
                },
            );
            wait_until(
                &format!("Po1 re-forms after '{what}'"),
                Duration::from_secs(20),
                || rig.formed(&a),
            );
            times.push((what, t.elapsed()));
            // One change at a time, 3 s apart: traffic settles on the
            // re-formed channel before the next (as in the bond's churn;
            // back-to-back outages would only measure TCP's back-off).
            spaced(Instant::now(), Duration::from_secs(3));
        }
    }
    let (seen, probed) = load.finish();
    let mut all: Vec<Duration> = times.iter().map(|t| t.1).collect();
    let (med, max) = median_max(&mut all);
    let worst = times.iter().max_by_key(|t| t.1).unwrap().0;
    report(
        "through_switch_partner_churn",
        &format!(
            "{} switch reloads (LACP rate, channel mode, port priority, back) under {} TCP connections: {} lost; Po1 re-formed after median {med:?}, max {max:?} ('{worst}'); per reload {:.0} UDP probes lost ({}), {:.0} pings lost ({} of {} sent, asked 200/s)",
            times.len(),
            seen.connections,
            seen.lost.len(),
            probed.lost() as f64 / times.len() as f64,
            probed.text(),
            seen.ping_lost as f64 / times.len() as f64,
            seen.ping_lost,
            seen.ping_sent
        ),
    );
    assert!(seen.lost.is_empty(), "{:?}", seen.lost);
}

/// The host's access neighbour floods (random source MACs, broadcast and
/// unknown unicast, as fast as one thread sends) while the bond and the
/// host exchange the campaign's load through the switch: ping loss and
/// TCP throughput with and without the flood.
#[test]
fn through_switch_flood() {
    let Some(rig) = Rig::new("sw_flood", true) else {
        return;
    };
    let a = rig.bed.up("a", BOND);
    wait_until("Po1 forms", Duration::from_secs(20), || rig.formed(&a));
    let phase = if full() {
        Duration::from_secs(30)
    } else {
        Duration::from_secs(4)
    };
    let run = |port: u16| {
        let load = rig.load(port);
        let t = Instant::now();
        spaced(t, phase);
        let (s, p) = load.finish();
        (s, p, t.elapsed())
    };
    let (quiet, quiet_probe, quiet_t) = run(7701);
    let stop = Arc::new(AtomicBool::new(false));
    let (ns, s) = (rig.fl.clone(), stop.clone());
    let flooder = std::thread::spawn(move || {
        flood_random(
            &ns,
            "eth0",
            FloodFrames::new(64, 0xca4a, false),
            &s,
            Duration::from_secs(120),
        )
    });
    let rx = |sw: &str| {
        super::common::switch::port_counters(sw, "GigabitEthernet1/4")["rx_frames"]
            .as_u64()
            .unwrap_or(0)
    };
    let before = rx(&rig.sw);
    wait_until("the switch reads the flood", Duration::from_secs(5), || {
        rx(&rig.sw) > before + 10_000
    });
    let (flooded, flood_probe, flood_t) = run(7711);
    stop.store(true, Ordering::Relaxed);
    let sent = flooder.join().expect("flood thread");
    let mbps = |s: &Seen, t: Duration| s.bytes as f64 * 8.0 / t.as_secs_f64() / 1e6;
    let ratio = mbps(&flooded, flood_t) / mbps(&quiet, quiet_t).max(1e-9);
    report(
        "through_switch_flood",
        &format!(
            "{:?} quiet then {:?} with Gi1/4 flooding {:.0} frames/s (random sources): {} + {} TCP connections lost; TCP {:.0} Mbit/s quiet, {:.0} flooded (ratio {ratio:.2}); ping loss {:.2}% quiet, {:.2}% flooded; UDP probes: quiet {}; flooded {}; Po1 {:?} after",
            phase,
            phase,
            sent.rate(),
            quiet.lost.len(),
            flooded.lost.len(),
            mbps(&quiet, quiet_t),
            mbps(&flooded, flood_t),
            lost_percent(&quiet),
            lost_percent(&flooded),
            quiet_probe.text(),
            flood_probe.text(),
            flags(&rig.sw, 1),
        ),
    );
    assert!(quiet.lost.is_empty(), "{:?}", quiet.lost);
    assert!(flooded.lost.is_empty(), "{:?}", flooded.lost);
    assert!(sent.sent > 100_000, "the flooder sent {sent:?}");
    assert_eq!(flags(&rig.sw, 1), ["P", "P"], "the channel stayed up");
}

/// Both ends reloaded under load, alternately, 0.2 s apart: the bond
/// (SIGHUP, in-place keys: `lacp_rate`, `xmit_hash_policy`) and the
/// switch (SIGHUP, `port-channel load-balance`). The bond's reloads are
/// hitless; each of the switch's restarts it, so the channel is down from
/// the first switch reload until it re-forms after the last: measured,
/// and no connection may be lost.
#[test]
fn through_switch_reloads_of_both_ends() {
    let Some(rig) = Rig::new("sw_reloads", false) else {
        return;
    };
    let bond_cfg = rig.bed.dir.join("a.toml");
    let a = rig.bed.up("a", BOND);
    wait_until("Po1 forms", Duration::from_secs(20), || rig.formed(&a));
    let rounds = if full() { 50 } else { 4 };
    let applied = || {
        std::fs::read_to_string(bond_cfg.with_extension("log"))
            .unwrap_or_default()
            .matches("reload: every change applied in place")
            .count()
    };
    let methods = [
        "src-dst-port",
        "src-dst-mac",
        "src-dst-mixed-ip-port",
        "src-dst-ip",
    ];
    let load = rig.load(7801);
    let t0 = Instant::now();
    let gap = Duration::from_millis(200);
    for i in 0..rounds {
        let at = Instant::now();
        let (rate, policy) = if i % 2 == 0 {
            ("slow", "layer2+3")
        } else {
            ("fast", "layer3+4")
        };
        let before = applied();
        let written = rig.bed.write(
            "a",
            &format!(
                "mode = \"802.3ad\"\nlacp_rate = \"{rate}\"\nxmit_hash_policy = \"{policy}\"\n"
            ),
        );
        assert_eq!(written, bond_cfg);
        a.signal(Signal::SIGHUP);
        wait_until(
            "the bond applies its reload",
            Duration::from_secs(5),
            || applied() > before,
        );
        spaced(at, gap);
        let at = Instant::now();
        let before = rig.switch_restarts();
        rig.reload_switch(&SwitchCfg {
            method: methods[i % methods.len()],
            ..SwitchCfg::default()
        });
        wait_until("the switch restarts", Duration::from_secs(5), || {
            rig.switch_restarts() > before
        });
        spaced(at, gap);
    }
    let reloading = t0.elapsed();
    let t = Instant::now();
    wait_until("Po1 re-forms", Duration::from_secs(20), || rig.formed(&a));
    let reformed = t.elapsed();
    // Traffic runs on the re-formed channel a while, so the connections
    // show they survived.
    spaced(Instant::now(), Duration::from_secs(1));
    let (seen, probed) = load.finish();
    let method = show(&rig.sw, &["etherchannel", "load-balance"]).unwrap_or_default();
    report(
        "through_switch_reloads_both_ends",
        &format!(
            "{rounds} rounds of bond reload (lacp_rate, xmit_hash_policy, in place) and switch reload (load-balance), 0.2 s apart, in {:.1} s under {} TCP connections ({} MB): {} connections lost; Po1 re-formed {reformed:?} after the last; {}; {} of {} pings lost ({:.1}%)",
            reloading.as_secs_f64(),
            seen.connections,
            seen.bytes >> 20,
            seen.lost.len(),
            probed.text(),
            seen.ping_lost,
            seen.ping_sent,
            lost_percent(&seen),
        ),
    );
    assert!(seen.lost.is_empty(), "{:?}", seen.lost);
    assert!(
        method
            .to_string()
            .contains(methods[(rounds - 1) % methods.len()]),
        "the last reload's method runs: {method}"
    );
}
