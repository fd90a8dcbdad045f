//! Before/after snapshots of a run: lagkit's member counters per host bond,
//! each lagkit switch's per-port counters,
//! each host namespace's TCP counters (`/proc/net/netstat`, `/proc/net/snmp`),
//! the machine's CPU time (`/proc/stat`), and whether the link shaping is
//! still in place.

use crate::error::RunError;
use crate::lab::{root_qdisc, Lab};
use crate::lagkit_switch::PortCounters;
use crate::sys::{self, CommandError};
use crate::topology::SwitchKind;
use lagkit_api::status::BondStats;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Instant;

/// Busy share of the machine above which a run counts as CPU-bound.
pub const CPU_BOUND_PCT: f64 = 90.0;

/// Share of the machine's time the hypervisor kept its CPUs from running
/// (steal) at or above which a run counts as starved: a shaped veth link
/// sends only while a CPU runs its queue, so steal takes link time away
/// too. 10%, the planner's tolerance for a rate: less steal than that
/// cannot by itself move a rate out of it.
pub const STEAL_PCT: f64 = 10.0;

/// Aggregate CPU times from `/proc/stat` (clock ticks).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuTimes {
    /// user + nice.
    pub user: u64,
    /// system + irq + softirq.
    pub sys: u64,
    /// idle + iowait.
    pub idle: u64,
    /// steal and the rest.
    pub other: u64,
    /// Number of CPUs.
    pub cores: usize,
}

impl CpuTimes {
    /// Parses `/proc/stat`.
    pub fn parse(text: &str) -> CpuTimes {
        let mut c = CpuTimes::default();
        for line in text.lines() {
            let mut f = line.split_whitespace();
            match f.next() {
                Some("cpu") => {
                    let v: Vec<u64> = f.filter_map(|x| x.parse().ok()).collect();
                    let g = |i: usize| v.get(i).copied().unwrap_or(0);
                    c.user = g(0) + g(1);
                    c.sys = g(2) + g(5) + g(6);
                    c.idle = g(3) + g(4);
                    c.other = g(7);
                }
                Some(k) if k.starts_with("cpu") => c.cores += 1,
                _ => {}
            }
        }
        c
    }

    /// Reads `/proc/stat` now.
    pub fn now() -> CpuTimes {
        CpuTimes::parse(&std::fs::read_to_string("/proc/stat").unwrap_or_default())
    }
}

/// CPU use of the whole machine over a run, in % of all cores.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUse {
    /// User time %.
    pub user_pct: f64,
    /// System time % (with interrupts).
    pub sys_pct: f64,
    /// Everything but idle %.
    pub busy_pct: f64,
    /// 100 - busy.
    pub headroom_pct: f64,
    /// Cores.
    pub cores: usize,
    /// busy ≥ [`CPU_BOUND_PCT`]: the CPU, not the links, may have limited the run.
    pub cpu_bound: bool,
    /// Steal %: time the hypervisor kept the CPUs from running (part of busy).
    #[serde(default)]
    pub steal_pct: f64,
    /// steal ≥ [`STEAL_PCT`]: the machine's host, not the links, may have
    /// limited the run.
    #[serde(default)]
    pub starved: bool,
}

impl CpuUse {
    /// From two readings.
    pub fn between(a: &CpuTimes, b: &CpuTimes) -> CpuUse {
        let d = |x: u64, y: u64| y.saturating_sub(x) as f64;
        let (u, s, i, o) = (
            d(a.user, b.user),
            d(a.sys, b.sys),
            d(a.idle, b.idle),
            d(a.other, b.other),
        );
        let total = (u + s + i + o).max(1.0);
        let busy = 100.0 * (u + s + o) / total;
        let steal = 100.0 * o / total;
        CpuUse {
            user_pct: 100.0 * u / total,
            sys_pct: 100.0 * s / total,
            busy_pct: busy,
            headroom_pct: 100.0 - busy,
            cores: b.cores,
            cpu_bound: busy >= CPU_BOUND_PCT,
            steal_pct: steal,
            starved: steal >= STEAL_PCT,
        }
    }
}

/// `Group.Name -> value` from `/proc/net/netstat` and `/proc/net/snmp`
/// (header line, value line, per group).
pub fn parse_net_counters(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let lines: Vec<&str> = text.lines().collect();
    for pair in lines.windows(2) {
        let (Some((g1, names)), Some((g2, vals))) =
            (pair[0].split_once(':'), pair[1].split_once(':'))
        else {
            continue;
        };
        if g1 != g2
            || names
                .split_whitespace()
                .next()
                .is_some_and(|n| n.parse::<i64>().is_ok())
        {
            continue;
        }
        let vals: Vec<&str> = vals.split_whitespace().collect();
        if vals.first().is_none_or(|v| v.parse::<i64>().is_err()) {
            continue;
        }
        for (n, v) in names.split_whitespace().zip(vals) {
            if let Ok(v) = v.parse::<i64>() {
                out.insert(format!("{g1}.{n}"), v.max(0) as u64);
            }
        }
    }
    out
}

/// The TCP counters the reports use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpCounters {
    /// TcpExt TCPOFOQueue: segments queued out of order (receiver).
    pub ofo_queue: u64,
    /// TcpExt TCPSACKReorder + TCPTSReorder + TCPRenoReorder: reordering
    /// detected by the sender.
    pub reorder: u64,
    /// Tcp RetransSegs.
    pub retrans_segs: u64,
}

impl TcpCounters {
    /// From parsed counters.
    pub fn from_map(m: &BTreeMap<String, u64>) -> TcpCounters {
        let g = |k: &str| m.get(k).copied().unwrap_or(0);
        TcpCounters {
            ofo_queue: g("TcpExt.TCPOFOQueue"),
            reorder: g("TcpExt.TCPSACKReorder")
                + g("TcpExt.TCPTSReorder")
                + g("TcpExt.TCPRenoReorder"),
            retrans_segs: g("Tcp.RetransSegs"),
        }
    }

    /// Reads namespace `ns`'s counters.
    pub fn read(ns: &str) -> Result<TcpCounters, CommandError> {
        let t = sys::ns_run(ns, &["cat", "/proc/net/netstat", "/proc/net/snmp"])?;
        Ok(TcpCounters::from_map(&parse_net_counters(&t)))
    }

    fn minus(&self, o: &TcpCounters) -> TcpCounters {
        TcpCounters {
            ofo_queue: self.ofo_queue.saturating_sub(o.ofo_queue),
            reorder: self.reorder.saturating_sub(o.reorder),
            retrans_segs: self.retrans_segs.saturating_sub(o.retrans_segs),
        }
    }
}

/// Everything read at one moment.
#[derive(Debug, Clone)]
pub struct Snapshot {
    at: Instant,
    cpu: CpuTimes,
    /// host -> its bond's counters.
    bonds: BTreeMap<String, BondStats>,
    /// host -> its TCP counters.
    tcp: BTreeMap<String, TcpCounters>,
    /// (node, iface) -> (root qdisc kind, bytes), shaped ends only.
    qdiscs: BTreeMap<(String, String), (String, u64)>,
    /// switch -> CPU seconds its forwarding process (ovs-vswitchd, or
    /// lagkit switch) has used.
    switches: BTreeMap<String, f64>,
    /// (switch, device) -> that port's counters (lagkit switches).
    switch_ports: BTreeMap<(String, String), PortCounters>,
    /// switch -> MAC moves so far (lagkit switches).
    mac_moves: BTreeMap<String, u64>,
}

/// Takes a snapshot of every host and shaped link end.
pub fn snapshot(lab: &Lab) -> Result<Snapshot, RunError> {
    let cpu = CpuTimes::now();
    let at = Instant::now();
    let mut bonds = BTreeMap::new();
    let mut tcp = BTreeMap::new();
    for h in &lab.topo.hosts {
        if let Some(b) = &h.bond {
            bonds.insert(h.name.clone(), lab.bond_stats(&h.name, &b.name)?);
        }
        tcp.insert(h.name.clone(), TcpCounters::read(&lab.ns(&h.name))?);
    }
    let mut qdiscs = BTreeMap::new();
    for l in lab.topo.links.iter().filter(|l| l.rate.is_some()) {
        for e in [&l.a, &l.b] {
            let q = root_qdisc(&lab.ns(&e.node), &e.iface).unwrap_or(("none".into(), 0));
            qdiscs.insert((e.node.clone(), e.iface.clone()), q);
        }
    }
    let mut switches = BTreeMap::new();
    let mut switch_ports = BTreeMap::new();
    let mut mac_moves = BTreeMap::new();
    for sw in &lab.topo.switches {
        let used = match sw.kind {
            SwitchKind::Ovs => lab.ovs(&sw.name).and_then(|o| {
                o.pids()
                    .iter()
                    .find(|p| p.comm == "ovs-vswitchd")
                    .and_then(|p| crate::sys::cpu_seconds(p.pid))
            }),
            SwitchKind::Lagkit => lab
                .switch_process(&sw.name)
                .and_then(|p| crate::sys::cpu_seconds(p.pid)),
        };
        if let Some(s) = used {
            switches.insert(sw.name.clone(), s);
        }
        if let Some(ls) = lab.lagkit_switch(&sw.name) {
            for c in ls.counters()? {
                switch_ports.insert((sw.name.clone(), c.device.clone()), c);
            }
            mac_moves.insert(sw.name.clone(), ls.mac_moves()?);
        }
    }
    Ok(Snapshot {
        at,
        cpu,
        bonds,
        tcp,
        qdiscs,
        switches,
        switch_ports,
        mac_moves,
    })
}

/// Bytes and packets of one member over a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemberDelta {
    /// Interface.
    pub name: String,
    /// Sent frames.
    pub tx_packets: u64,
    /// Sent bytes.
    pub tx_bytes: u64,
    /// Received frames.
    pub rx_packets: u64,
    /// Received bytes.
    pub rx_bytes: u64,
}

/// One host bond over a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BondMeasure {
    /// Host.
    pub host: String,
    /// Bond.
    pub bond: String,
    /// Share of transmitted packets through the first member.
    pub tx_ratio: Option<f64>,
    /// Share of received packets through the first member.
    pub rx_ratio: Option<f64>,
    /// Transmit plus receive through the bond, Mbit/s (frames on the members).
    pub mbps: f64,
    /// Per member.
    pub members: Vec<MemberDelta>,
}

/// Per host namespace TCP counters over a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpMeasure {
    /// Host.
    pub host: String,
    /// Counter increments.
    pub delta: TcpCounters,
}

/// A run's measurements.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Wall time between the snapshots.
    pub seconds: f64,
    /// The machine's CPU.
    pub cpu: CpuUse,
    /// Host bonds.
    pub bonds: Vec<BondMeasure>,
    /// Host TCP counters.
    pub tcp: Vec<TcpMeasure>,
    /// Out-of-order segments queued, all hosts.
    pub out_of_order: u64,
    /// Per second.
    pub out_of_order_per_s: f64,
    /// Reordering detected by senders, all hosts.
    pub reorder: u64,
    /// Retransmitted segments, all hosts.
    pub retransmits: u64,
    /// Per second.
    pub retransmits_per_s: f64,
    /// Shaped link ends whose tbf vanished or saw no traffic.
    pub shaping_problems: Vec<String>,
    /// Each switch's forwarding process: cores it kept busy (Open vSwitch's
    /// userspace datapath and lagkit's switch each forward on one thread,
    /// so near 1.0 it, not the links, sets the rate even while the machine
    /// has a core to spare).
    #[serde(default)]
    pub switch_cpu: Vec<SwitchCpu>,
    /// Each lagkit switch's ports (Open vSwitch's are not read).
    #[serde(default)]
    pub switch_ports: Vec<SwitchPortDelta>,
    /// Each lagkit switch's MAC moves during the run (`show mac
    /// address-table`'s `moves`): a host whose frames reach the switch on
    /// two ports that are not one channel moves back and forth.
    #[serde(default)]
    pub mac_moves: BTreeMap<String, u64>,
}

/// One port of a lagkit switch over a run (`show interfaces counters`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SwitchPortDelta {
    /// The switch.
    pub switch: String,
    /// The interface (`GigabitEthernet1/1`).
    pub port: String,
    /// Its device (`p1`).
    pub device: String,
    /// Frames received.
    pub rx_frames: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Frames sent.
    pub tx_frames: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Control frames received (LACP, PAgP).
    pub control: u64,
    /// Frames sent as a flood (broadcast, multicast, unknown unicast).
    pub flooded: u64,
    /// Frames dropped, every reason.
    pub dropped: u64,
}

/// One switch's CPU over a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SwitchCpu {
    /// The switch.
    pub switch: String,
    /// CPU seconds used per second of the run.
    pub cores: f64,
}

/// Cores a switch process may use before a run counts as switch-bound.
pub const SWITCH_BOUND_CORES: f64 = 0.9;

fn share(first: u64, total: u64) -> Option<f64> {
    (total > 0).then(|| first as f64 / total as f64)
}

/// The measurements between two snapshots.
pub fn diff(a: &Snapshot, b: &Snapshot) -> Measurement {
    let seconds = b.at.duration_since(a.at).as_secs_f64().max(1e-6);
    let mut bonds = Vec::new();
    for (host, after) in &b.bonds {
        let Some(before) = a.bonds.get(host) else {
            continue;
        };
        let members: Vec<MemberDelta> = after
            .members
            .iter()
            .map(|m| {
                let o = before
                    .members
                    .iter()
                    .find(|x| x.name == m.name)
                    .cloned()
                    .unwrap_or_default();
                MemberDelta {
                    name: m.name.clone(),
                    tx_packets: m.tx_packets.saturating_sub(o.tx_packets),
                    tx_bytes: m.tx_bytes.saturating_sub(o.tx_bytes),
                    rx_packets: m.rx_packets.saturating_sub(o.rx_packets),
                    rx_bytes: m.rx_bytes.saturating_sub(o.rx_bytes),
                }
            })
            .collect();
        let tx: u64 = members.iter().map(|m| m.tx_packets).sum();
        let rx: u64 = members.iter().map(|m| m.rx_packets).sum();
        let bytes: u64 = members.iter().map(|m| m.tx_bytes + m.rx_bytes).sum();
        let first = members.first().cloned().unwrap_or_default();
        bonds.push(BondMeasure {
            host: host.clone(),
            bond: after.name.clone(),
            tx_ratio: share(first.tx_packets, tx),
            rx_ratio: share(first.rx_packets, rx),
            mbps: bytes as f64 * 8.0 / seconds / 1e6,
            members,
        });
    }
    let tcp: Vec<TcpMeasure> = b
        .tcp
        .iter()
        .map(|(h, after)| TcpMeasure {
            host: h.clone(),
            delta: after.minus(a.tcp.get(h).unwrap_or(&TcpCounters::default())),
        })
        .collect();
    let out_of_order: u64 = tcp.iter().map(|t| t.delta.ofo_queue).sum();
    let reorder: u64 = tcp.iter().map(|t| t.delta.reorder).sum();
    let retransmits: u64 = tcp.iter().map(|t| t.delta.retrans_segs).sum();
    let mut shaping_problems = Vec::new();
    for ((node, iface), (kind, bytes)) in &b.qdiscs {
        let before = a
            .qdiscs
            .get(&(node.clone(), iface.clone()))
            .map_or(0, |q| q.1);
        if kind != "tbf" {
            shaping_problems.push(format!("{node}/{iface}: root qdisc is {kind}, not tbf"));
        } else if *bytes <= before {
            shaping_problems.push(format!("{node}/{iface}: tbf saw no traffic"));
        }
    }
    let switch_cpu = b
        .switches
        .iter()
        .filter_map(|(sw, after)| {
            let before = a.switches.get(sw)?;
            Some(SwitchCpu {
                switch: sw.clone(),
                cores: (after - before).max(0.0) / seconds,
            })
        })
        .collect();
    let switch_ports = b
        .switch_ports
        .iter()
        .map(|((sw, _), after)| {
            let before = a
                .switch_ports
                .get(&(sw.clone(), after.device.clone()))
                .cloned()
                .unwrap_or_default();
            let d = |x: u64, y: u64| x.saturating_sub(y);
            SwitchPortDelta {
                switch: sw.clone(),
                port: after.port.clone(),
                device: after.device.clone(),
                rx_frames: d(after.rx_frames, before.rx_frames),
                rx_bytes: d(after.rx_bytes, before.rx_bytes),
                tx_frames: d(after.tx_frames, before.tx_frames),
                tx_bytes: d(after.tx_bytes, before.tx_bytes),
                control: d(after.control, before.control),
                flooded: d(after.flooded, before.flooded),
                dropped: d(after.dropped(), before.dropped()),
            }
        })
        .collect();
    let mac_moves = b
        .mac_moves
        .iter()
        .map(|(sw, after)| {
            let before = a.mac_moves.get(sw).copied().unwrap_or(0);
            (sw.clone(), after.saturating_sub(before))
        })
        .collect();
    Measurement {
        switch_cpu,
        switch_ports,
        mac_moves,
        seconds,
        cpu: CpuUse::between(&a.cpu, &b.cpu),
        bonds,
        tcp,
        out_of_order,
        out_of_order_per_s: out_of_order as f64 / seconds,
        reorder,
        retransmits,
        retransmits_per_s: retransmits as f64 / seconds,
        shaping_problems,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_stat() {
        let a =
            CpuTimes::parse("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\ncpu1 1 2 3 4\nintr 5\n");
        let b = CpuTimes::parse("cpu  200 0 150 850 50 0 0 0 0 0\ncpu0 1 2 3 4\ncpu1 1 2 3 4\n");
        assert_eq!(a.cores, 2);
        let u = CpuUse::between(&a, &b);
        assert!((u.user_pct - 40.0).abs() < 1e-9, "{u:?}");
        assert!((u.sys_pct - 40.0).abs() < 1e-9);
        assert!((u.busy_pct - 80.0).abs() < 1e-9);
        assert!(!u.cpu_bound);
        assert!(u.steal_pct.abs() < 1e-9 && !u.starved, "{u:?}");
    }

    /// The steal column (the 8th) counts as busy, and a run whose steal
    /// reaches STEAL_PCT is starved; guest time is already in user.
    #[test]
    fn steal_is_busy_and_starves_a_run_from_ten_percent() {
        let at = |steal: u64| {
            CpuTimes::parse(&format!(
                "cpu  100 0 100 700 0 0 0 {steal} 30 0\ncpu0 1\ncpu1 1\n"
            ))
        };
        let zero = at(0);
        // 300 ticks of work, 600 idle, 100 stolen of 1000.
        let starved = CpuUse::between(&zero, &{
            let mut b = at(100);
            b.user += 100;
            b.sys += 200;
            b.idle += 600;
            b
        });
        assert!((starved.steal_pct - 10.0).abs() < 1e-9, "{starved:?}");
        assert!((starved.busy_pct - 40.0).abs() < 1e-9, "{starved:?}");
        assert!(starved.starved && !starved.cpu_bound, "{starved:?}");
        let fed = CpuUse::between(&zero, &{
            let mut b = at(99);
            b.user += 100;
            b.sys += 200;
            b.idle += 601;
            b
        });
        assert!(!fed.starved, "{fed:?}");
    }

    #[test]
    fn parses_netstat_and_snmp() {
        let t = "TcpExt: SyncookiesSent TCPOFOQueue TCPSACKReorder TCPTSReorder\nTcpExt: 0 17 3 2\nIpExt: InNoRoutes\nIpExt: 0\nTcp: RtoAlgorithm RetransSegs\nTcp: 1 42\n";
        let m = parse_net_counters(t);
        assert_eq!(m["TcpExt.TCPOFOQueue"], 17);
        let c = TcpCounters::from_map(&m);
        assert_eq!(
            c,
            TcpCounters {
                ofo_queue: 17,
                reorder: 5,
                retrans_segs: 42
            }
        );
    }
}
