//! The lab's built-in scenarios as plans, set beside the lab's measurements.
//!
//! Each configuration's workload becomes flows and its bonds become the
//! ends that spread them, so the planner's prediction of a configuration
//! can be compared with what the lab measured on the same one. Only
//! workloads whose ports are fixed before they run can be predicted flow by
//! flow: the LPM pattern (control and data connections on sequential
//! ports). Workloads that let the kernel choose client ports (stream,
//! socketprocs, rr) are skipped with that reason; plan a capture of such a
//! run instead.

use crate::flow::{Dir, Flow};
use crate::predict::{predict, EndConfig, Spread, DEFAULT_STRONG};
use lagkit_bondcfg::{BondConfig, Mode};
use lagkit_hash::FlowKey;
use lagkit_lab::topology::Topology;
use lagkit_lab::workload::WorkloadSpec;
use std::net::IpAddr;

/// How a bond spreads what it sends, from its configuration.
pub fn spread_of(b: &BondConfig) -> Spread {
    match b.mode {
        Mode::Lacp | Mode::BalanceXor => Spread::Hash(b.hash_policy(DEFAULT_STRONG.seed)),
        Mode::BalanceRr => Spread::RoundRobin,
        Mode::ActiveBackup | Mode::Broadcast => Spread::Single,
        Mode::BalanceTlb | Mode::BalanceAlb | Mode::Adaptive => Spread::Adaptive(DEFAULT_STRONG),
    }
}

/// One configuration of a scenario, planned.
#[derive(Clone, Debug)]
pub struct LabPlan {
    /// The configuration's key (`src_port`, `k4-rx`).
    pub key: String,
    /// What differs in it.
    pub label: String,
    /// The bonded host whose sending is planned.
    pub host: String,
    /// Its flows (`out`: from it; `in`: the acknowledgements back).
    pub flows: Vec<Flow>,
    /// Its bond.
    pub out: EndConfig,
    /// The peer's bond when the two hosts are cabled back to back.
    pub back: Option<EndConfig>,
    /// TCP payload per byte of link rate: `(mtu - 52) / (mtu + 14 + 24)`
    /// with real-wire accounting (`overhead = true`: preamble, gap and FCS
    /// count), `(mtu - 52) / (mtu + 14)` without; 52 = IP, TCP and
    /// timestamp option headers.
    pub goodput_factor: f64,
}

/// Why a configuration could not be planned.
#[derive(Clone, Debug, PartialEq)]
pub struct Skipped {
    /// The configuration's key.
    pub key: String,
    /// The reason.
    pub why: String,
}

fn ip_of(t: &Topology, host: &str) -> Option<IpAddr> {
    let a = t.host(host)?.address.as_deref()?;
    a.split('/').next()?.parse().ok()
}

fn mac_of(t: &Topology, host: &str) -> [u8; 6] {
    let mut m = [0u8; 6];
    if let Some((_, text)) = t.l3_port(host) {
        for (b, p) in m.iter_mut().zip(text.split(':')) {
            *b = u8::from_str_radix(p, 16).unwrap_or(0);
        }
    }
    m
}

fn end_of(t: &Topology, host: &str, peer: &str) -> Option<EndConfig> {
    let b = t.host(host)?.bond.as_ref()?;
    let rate = t
        .ends_on(host)
        .find(|(_, l)| l.a.node == peer || l.b.node == peer || t.host(peer).is_some())
        .and_then(|(_, l)| l.rate.as_ref().map(|r| r.bits as f64))
        .unwrap_or(1e9);
    Some(EndConfig {
        spread: spread_of(&b.config),
        links: b.members.len(),
        rate_bps: rate,
    })
}

/// Plans topology `t` (configuration `key`).
pub fn plan_topology(t: &Topology, key: &str, label: &str) -> Result<LabPlan, Skipped> {
    let skip = |why: String| Skipped {
        key: key.to_string(),
        why,
    };
    let Some(WorkloadSpec::LagkitLoad(w)) = &t.workload else {
        return Err(skip("no lagkit-load workload".into()));
    };
    if w.load != "lpm" {
        return Err(skip(format!(
            "the {} workload's client ports are chosen by the kernel at run time; plan a capture of the run instead",
            w.load
        )));
    }
    let client = w.clients.first().ok_or_else(|| skip("no client".into()))?;
    let server = &w.server;
    let (Some(cip), Some(sip)) = (ip_of(t, client), ip_of(t, server)) else {
        return Err(skip("a host without an address".into()));
    };
    let out =
        end_of(t, client, server).ok_or_else(|| skip(format!("{client} has no bond to plan")))?;
    let back_to_back = t.links.iter().any(|l| {
        [&l.a.node, &l.b.node] == [client, server] || [&l.a.node, &l.b.node] == [server, client]
    });
    let back = back_to_back.then(|| end_of(t, server, client)).flatten();
    let goodput_factor = t
        .ends_on(client)
        .next()
        .map(|(_, l)| {
            let mtu = f64::from(l.mtu[0].min(l.mtu[1]));
            let wire = mtu + 14.0 + if l.overhead { 24.0 } else { 0.0 };
            (mtu - 52.0) / wire
        })
        .unwrap_or(1.0);
    let (cmac, smac) = (mac_of(t, client), mac_of(t, server));
    let mut flows = Vec::new();
    let migrations = w.migrations.max(1);
    for i in 0..migrations {
        let (c_ctl, c_data) = lagkit_load::lpm::client_ports(lagkit_load::lpm::DEFAULT_BASE, i);
        let s_ctl = w.port().wrapping_add(2 * i as u16);
        let s_data = s_ctl.wrapping_add(1);
        // Data is bulk; control carries a 64-byte message per 100 ms.
        for (cp, sp, bytes) in [
            (c_ctl, s_ctl, 64 * 10 * u64::from(w.seconds)),
            (c_data, s_data, 1 << 30),
        ] {
            let key = FlowKey::ports(cip, cp, sip, sp, lagkit_hash::ip_proto::TCP)
                .with_macs(cmac, smac)
                .with_ethertype(if cip.is_ipv4() { 0x0800 } else { 0x86dd });
            flows.push(Flow {
                key,
                dir: Dir::Out,
                bytes,
                demand_bps: None,
            });
            // Acknowledgements back: about one 66-byte frame per two
            // 1514-byte segments.
            flows.push(Flow {
                key: key.reversed(),
                dir: Dir::In,
                bytes: bytes / 46,
                demand_bps: None,
            });
        }
    }
    Ok(LabPlan {
        key: key.to_string(),
        label: label.to_string(),
        host: client.clone(),
        flows,
        out,
        back,
        goodput_factor,
    })
}

/// Plans every configuration of built-in scenario `name`.
pub fn plan_scenario(name: &str, short: bool) -> Result<(Vec<LabPlan>, Vec<Skipped>), String> {
    let s = lagkit_lab::scenario::builtin(name, short)
        .ok_or_else(|| format!("no built-in scenario {name:?} (see `lagkit lab list`)"))?;
    let mut plans = Vec::new();
    let mut skipped = Vec::new();
    for c in &s.configs {
        match plan_topology(&c.topo, &c.key, &c.label) {
            Ok(p) => plans.push(p),
            Err(e) => skipped.push(e),
        }
    }
    Ok((plans, skipped))
}

/// A planned configuration beside the lab's measurement of it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Accuracy {
    /// The configuration's key.
    pub key: String,
    /// Predicted share of the host's sent bytes per link.
    pub predicted: Vec<f64>,
    /// Measured share (bytes the bond's members sent).
    pub measured: Vec<f64>,
    /// The largest difference, percentage points.
    pub max_diff_pp: f64,
    /// Predicted goodput, Mbit/s (the links' predicted rate × the TCP
    /// payload per byte of link rate).
    pub predicted_mbps: f64,
    /// Measured goodput, Mbit/s (the workload's forward rate).
    pub measured_mbps: f64,
}

/// Compares plans with a lab report (`report.json` of `lagkit lab run`).
pub fn compare(plans: &[LabPlan], report: &serde_json::Value) -> Vec<Accuracy> {
    let runs = report["runs"].as_array().cloned().unwrap_or_default();
    plans
        .iter()
        .filter_map(|p| {
            let run = runs.iter().find(|r| r["key"] == p.key.as_str())?;
            let bond = run["measurement"]["bonds"]
                .as_array()?
                .iter()
                .find(|b| b["host"] == p.host.as_str())?;
            let tx: Vec<f64> = bond["members"]
                .as_array()?
                .iter()
                .map(|m| m["tx_bytes"].as_f64().unwrap_or(0.0))
                .collect();
            let total: f64 = tx.iter().sum();
            if total <= 0.0 {
                return None;
            }
            let measured: Vec<f64> = tx.iter().map(|b| b / total).collect();
            let pred = predict(&p.flows, Dir::Out, &p.out);
            let predicted: Vec<f64> = pred.links.iter().map(|l| l.share).collect();
            let max_diff_pp = predicted
                .iter()
                .zip(&measured)
                .map(|(a, b)| (a - b).abs() * 100.0)
                .fold(0.0, f64::max);
            Some(Accuracy {
                key: p.key.clone(),
                predicted,
                measured,
                max_diff_pp,
                predicted_mbps: pred.throughput_bps * p.goodput_factor / 1e6,
                measured_mbps: run["workload"]["forward_mbps"].as_f64().unwrap_or(0.0),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lpm_configurations_become_flows_and_ends() {
        let (plans, skipped) = plan_scenario("lpm", true).unwrap();
        assert!(skipped.is_empty(), "{skipped:?}");
        let keys: Vec<&str> = plans.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(
            keys,
            ["src_port", "dst_port", "src_dst_port", "strong", "adaptive"]
        );
        let p = &plans[0];
        assert_eq!(p.flows.iter().filter(|f| f.dir == Dir::Out).count(), 8);
        assert_eq!(p.out.links, 2);
        assert_eq!(p.out.rate_bps, 1e8);
        assert!(
            p.back.is_some(),
            "back to back: the peer's bond spreads the ACKs"
        );
        // The AIX modes put every data connection on one link; strong with
        // the scenario's seed 1 splits them 2/2.
        for p in &plans[..3] {
            let pred = predict(&p.flows, Dir::Out, &p.out);
            assert!(
                pred.links.iter().any(|l| l.share > 0.99),
                "{}: {pred:?}",
                p.key
            );
        }
        let pred = predict(&plans[3].flows, Dir::Out, &plans[3].out);
        assert!(
            pred.links.iter().all(|l| (l.share - 0.5).abs() < 0.01),
            "{pred:?}"
        );
    }

    #[test]
    fn kernel_chosen_ports_are_skipped_with_the_reason() {
        let (plans, skipped) = plan_scenario("hp-apa", true).unwrap();
        assert!(plans.is_empty());
        assert!(
            skipped[0].why.contains("chosen by the kernel"),
            "{skipped:?}"
        );
        assert!(plan_scenario("nope", true).is_err());
    }

    /// The committed full lpm run (docs/results/lpm) against the plan:
    /// every configuration's per-link shares within 5 percentage points.
    #[test]
    fn lpm_plan_matches_the_committed_lab_run() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/results/lpm/report.json"
        );
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let (plans, _) = plan_scenario("lpm", false).unwrap();
        let acc = compare(&plans, &report);
        assert_eq!(acc.len(), 5, "{acc:?}");
        for a in &acc {
            assert!(a.max_diff_pp <= 5.0, "{a:?}");
            // The runs are CPU-bound on 2 cores: throughput within 15%.
            let off = (a.predicted_mbps - a.measured_mbps).abs() / a.measured_mbps;
            assert!(off <= 0.15, "{a:?}");
        }
    }
}
