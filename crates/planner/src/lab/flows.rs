//! A workload's connections as flows through the lab, both ways: from the
//! 5-tuples a run recorded, or the ports the workload fixes itself (LPM).

use super::model::{ip_of, mac_of};
use lagkit_hash::FlowKey;
use lagkit_lab::topology::{Iperf3Spec, LoadSpec, Topology};
use lagkit_lab::workload::Connection;
use std::net::{IpAddr, SocketAddr};

/// Why a workload's flows through the lab cannot be known.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(super) enum FlowsError {
    /// The kernel chooses the client ports and no run recorded them.
    #[error("the {load} workload's client ports are chosen by the kernel at run time; give the run's report (--measured report.json from `lagkit lab run`, which records them), or plan a capture")]
    PortsAtRunTime {
        /// The workload (`stream`, `rr`, ...).
        load: String,
    },
    /// A connection's end is no host's address.
    #[error("no host has address {0}")]
    NoHost(IpAddr),
    /// The LPM workload names no client.
    #[error("no client")]
    NoClient,
    /// The LPM client or server has no address.
    #[error("a host without an address ({0})")]
    NoAddress(String),
}

/// The header fields a spreader reads: its buckets hold every flow that
/// agrees on them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum KeyFields {
    All,
    SourceMac,
    SourceIp,
    Ips,
}

impl KeyFields {
    pub(super) fn of(self, k: &FlowKey) -> FlowKey {
        let ips = k.ip.map(|ip| (ip.src, ip.dst));
        let mut out = FlowKey {
            ethertype: k.ethertype,
            vlan_tci: k.vlan_tci,
            ..FlowKey::default()
        };
        match self {
            KeyFields::All => return *k,
            KeyFields::SourceMac => out.src_mac = k.src_mac,
            KeyFields::SourceIp | KeyFields::Ips => {
                if let Some((src, dst)) = ips {
                    let dst = if self == KeyFields::Ips { dst } else { src };
                    out = FlowKey::ports(src, 0, dst, 0, 0).with_ethertype(k.ethertype);
                }
            }
        }
        out
    }
}

/// One planned flow through the lab.
pub(super) struct LabFlow {
    pub(super) key: FlowKey,
    pub(super) from: String,
    pub(super) to: String,
    /// Bits per second it can use at most (`None`: bulk).
    pub(super) demand: Option<f64>,
    pub(super) bytes: u64,
    /// Payload bytes the run carried this way (0 when not from a run).
    pub(super) carried: u64,
}

/// A connection's direction(s) with data, by what it carried.
pub(super) fn data_ways(purpose: &str, load: &str) -> (bool, bool) {
    match if purpose.is_empty() { load } else { purpose } {
        "stream" | "lpm-data" | "lpm-control" | "lpm" => (true, false),
        "maerts" => (false, true),
        _ => (true, true),
    }
}

/// Request/response connections keep one small message in flight: their
/// rate is set by latency, not links. Each counts as a token demand, so
/// that shares follow the number of connections per link.
pub(super) const LATENCY_BOUND_BPS: f64 = 1e3;

/// The workload's flows, both ways; `conns` from a run, else the ports the
/// workload fixes itself (LPM).
pub(super) fn workload_flows(
    t: &Topology,
    w: &LoadSpec,
    conns: Option<&[Connection]>,
) -> Result<(Vec<LabFlow>, bool), FlowsError> {
    let fixed;
    let (conns, from_run) = match conns {
        Some(c) if !c.is_empty() => (c, true),
        _ if w.load == "lpm" => {
            fixed = lpm_connections(t, w)?;
            (&fixed[..], false)
        }
        _ => {
            return Err(FlowsError::PortsAtRunTime {
                load: w.load.clone(),
            })
        }
    };
    connection_flows(t, conns, &w.load, w.seconds).map(|f| (f, from_run))
}

/// An iperf3 workload's flows, both ways, from the connections its run
/// recorded (iperf3 lets the kernel choose the client ports).
pub(super) fn iperf3_flows(
    t: &Topology,
    s: &Iperf3Spec,
    conns: Option<&[Connection]>,
) -> Result<(Vec<LabFlow>, bool), FlowsError> {
    match conns {
        Some(c) if !c.is_empty() => connection_flows(t, c, "stream", s.seconds).map(|f| (f, true)),
        _ => Err(FlowsError::PortsAtRunTime {
            load: "iperf3".into(),
        }),
    }
}

/// Connections as flows through the lab, each way it carried data.
fn connection_flows(
    t: &Topology,
    conns: &[Connection],
    load: &str,
    seconds: u32,
) -> Result<Vec<LabFlow>, FlowsError> {
    let host_of = |a: &SocketAddr| -> Result<String, FlowsError> {
        t.hosts
            .iter()
            .find(|h| ip_of(t, &h.name) == Some(a.ip()))
            .map(|h| h.name.clone())
            .ok_or(FlowsError::NoHost(a.ip()))
    };
    let mut flows = Vec::new();
    for c in conns {
        let (cl, sv) = (host_of(&c.local)?, host_of(&c.remote)?);
        let (fwd, rev) = data_ways(&c.purpose, load);
        let (demand, bytes) = match c.purpose.as_str() {
            // 64 bytes every 100 ms.
            "lpm-control" => (Some(64.0 * 8.0 * 10.0), 64 * 10 * u64::from(seconds)),
            "rr" => (Some(LATENCY_BOUND_BPS), 1 << 20),
            _ if load == "rr" => (Some(LATENCY_BOUND_BPS), 1 << 20),
            _ => (None, 1 << 30),
        };
        let key = FlowKey::ports(
            c.local.ip(),
            c.local.port(),
            c.remote.ip(),
            c.remote.port(),
            lagkit_hash::ip_proto::TCP,
        )
        .with_macs(mac_of(t, &cl), mac_of(t, &sv))
        .with_ethertype(if c.local.is_ipv4() { 0x0800 } else { 0x86dd });
        if fwd {
            flows.push(LabFlow {
                key,
                from: cl.clone(),
                to: sv.clone(),
                demand,
                bytes,
                carried: c.sent,
            });
        }
        if rev {
            flows.push(LabFlow {
                key: key.reversed(),
                from: sv,
                to: cl,
                demand,
                bytes,
                carried: c.received,
            });
        }
    }
    Ok(flows)
}

/// LPM's connections: migration `i`'s control and data connections on the
/// client ports [`lagkit_load::lpm::client_ports`] fixes.
pub(super) fn lpm_connections(t: &Topology, w: &LoadSpec) -> Result<Vec<Connection>, FlowsError> {
    let client = w.clients.first().ok_or(FlowsError::NoClient)?;
    let address = |h: &str| ip_of(t, h).ok_or_else(|| FlowsError::NoAddress(h.to_string()));
    let (cip, sip) = (address(client)?, address(&w.server)?);
    let mut out = Vec::new();
    for i in 0..w.migrations.max(1) {
        let (c_ctl, c_data) = lagkit_load::lpm::client_ports(lagkit_load::lpm::DEFAULT_BASE, i);
        let s_ctl = w.port().wrapping_add(2 * i as u16);
        for (purpose, cp, sp) in [
            ("lpm-control", c_ctl, s_ctl),
            ("lpm-data", c_data, s_ctl.wrapping_add(1)),
        ] {
            out.push(Connection {
                purpose: purpose.into(),
                local: SocketAddr::new(cip, cp),
                remote: SocketAddr::new(sip, sp),
                sent: 0,
                received: 0,
            });
        }
    }
    Ok(out)
}
