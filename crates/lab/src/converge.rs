//! Waiting for the aggregates to form, and the LACP state of every bond and
//! port-channel as a snapshot (taken at the start and end of a run).

use crate::error::ConvergeError;
use crate::lab::{ovs_port_name, Lab};
use crate::topology::{Protocol, Switch, SwitchKind};
use lagkit_api::status::MiiStatus;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// One member of a host bond.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemberView {
    /// Interface.
    pub name: String,
    /// Carrier.
    pub mii_status: MiiStatus,
    /// Transmits now.
    pub transmitting: bool,
    /// Collects now.
    pub collecting: bool,
    /// LACP actor state octet.
    pub actor_state: Option<u8>,
    /// LACP partner state octet.
    pub partner_state: Option<u8>,
    /// Why it is not in the bundle.
    pub not_bundled: Option<String>,
}

/// A host bond's view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostView {
    /// Host.
    pub host: String,
    /// Bond.
    pub bond: String,
    /// Mode.
    pub mode: String,
    /// The configured `engine` (auto, bpf, userspace); empty in reports
    /// from before the key.
    #[serde(default)]
    pub engine: String,
    /// Members configured.
    pub members: usize,
    /// Ports in the active aggregate (LACP) or members carrying traffic.
    pub ports: usize,
    /// Partner system (LACP).
    pub partner: Option<String>,
    /// Formed as configured.
    pub ok: bool,
    /// Per member.
    pub member_views: Vec<MemberView>,
    /// `lagkit status` problems, or why the status could not be read.
    pub problems: Vec<String>,
}

/// A switch port-channel's view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChannelView {
    /// Switch.
    pub switch: String,
    /// Channel.
    pub channel: String,
    /// OVS `lacp/show` status ("active negotiated"), "static" or "none";
    /// lagkit's switch: "Port-channelN lacp" (or `on`, `pagp`), or "none".
    pub status: String,
    /// Member -> LACP status ("current attached") or bond/show state;
    /// lagkit's switch: the member's flag (`P`, with the reason otherwise).
    pub members: BTreeMap<String, String>,
    /// Formed as configured.
    pub ok: bool,
    /// Why the view could not be read.
    pub problems: Vec<String>,
}

impl ChannelView {
    /// Channel `channel` of switch `switch`, not (yet) seen formed.
    fn new(switch: &str, channel: &str) -> ChannelView {
        ChannelView {
            switch: switch.to_string(),
            channel: channel.to_string(),
            status: String::new(),
            members: BTreeMap::new(),
            ok: false,
            problems: Vec::new(),
        }
    }
}

/// Every bond and channel at one moment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LacpSnapshot {
    /// Host bonds.
    pub hosts: Vec<HostView>,
    /// Switch channels.
    pub channels: Vec<ChannelView>,
}

impl LacpSnapshot {
    /// Every bond and channel formed.
    pub fn all_ok(&self) -> bool {
        self.hosts.iter().all(|h| h.ok) && self.channels.iter().all(|c| c.ok)
    }

    /// One line per side that has not formed, with the reasons.
    pub fn not_converged(&self) -> Vec<String> {
        let mut out = Vec::new();
        for h in self.hosts.iter().filter(|h| !h.ok) {
            let mut why: Vec<String> = h.problems.clone();
            for m in &h.member_views {
                if let Some(r) = &m.not_bundled {
                    why.push(format!("{}: not bundled: {r}", m.name));
                } else if !m.mii_status.is_up() {
                    why.push(format!("{}: carrier {}", m.name, m.mii_status));
                } else if !(m.transmitting && m.collecting) {
                    why.push(format!(
                        "{}: transmitting {} collecting {}",
                        m.name, m.transmitting, m.collecting
                    ));
                }
            }
            out.push(format!(
                "host {} bond {} ({}): {} of {} ports{}",
                h.host,
                h.bond,
                h.mode,
                h.ports,
                h.members,
                if why.is_empty() {
                    String::new()
                } else {
                    format!("; {}", why.join("; "))
                }
            ));
        }
        for c in self.channels.iter().filter(|c| !c.ok) {
            let m: Vec<String> = c.members.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            out.push(format!(
                "switch {} channel {}: status '{}'; {}{}",
                c.switch,
                c.channel,
                c.status,
                m.join(", "),
                if c.problems.is_empty() {
                    String::new()
                } else {
                    format!("; {}", c.problems.join("; "))
                }
            ));
        }
        out
    }
}

/// Reads every bond's and channel's state now.
pub fn snapshot(lab: &Lab) -> LacpSnapshot {
    let mut snap = LacpSnapshot::default();
    for h in &lab.topo.hosts {
        let Some(b) = &h.bond else { continue };
        let mut v = HostView {
            host: h.name.clone(),
            bond: b.name.clone(),
            mode: b.mode.clone(),
            engine: b.engine.clone(),
            members: b.members.len(),
            ports: 0,
            partner: None,
            ok: false,
            member_views: Vec::new(),
            problems: Vec::new(),
        };
        match lab.bond_status(&h.name, &b.name) {
            Err(e) => v.problems.push(format!("lagkit status: {e}")),
            Ok(st) => {
                v.problems = st.problems.clone();
                v.member_views = st
                    .members
                    .iter()
                    .map(|m| MemberView {
                        name: m.name.clone(),
                        mii_status: m.mii_status,
                        transmitting: m.transmitting,
                        collecting: m.collecting,
                        actor_state: m.lacp.as_ref().map(|l| l.actor_state),
                        partner_state: m.lacp.as_ref().map(|l| l.partner_state),
                        not_bundled: m.lacp.as_ref().and_then(|l| l.not_bundled.clone()).or_else(
                            || {
                                m.pagp
                                    .as_ref()
                                    .filter(|p| !p.in_channel)
                                    .map(|p| format!("PAgP {}, not in the channel", p.state))
                            },
                        ),
                    })
                    .collect();
                let all_up = st.members.iter().all(|m| m.mii_status.is_up());
                match &st.lacp {
                    Some(l) => {
                        v.ports = l.number_of_ports;
                        v.partner = l.partner_mac.clone();
                        v.ok = l.number_of_ports == b.members.len()
                            && st.members.iter().all(|m| m.transmitting && m.collecting);
                    }
                    None => {
                        v.ports = st.members.iter().filter(|m| m.transmitting).count();
                        // A PAgP bond has formed when PAgP has its members
                        // in the channel (active-backup: one, the rest
                        // stand by).
                        let in_channel = st
                            .members
                            .iter()
                            .filter(|m| m.pagp.as_ref().is_some_and(|p| p.in_channel))
                            .count();
                        let pagp_ok = match b.config.pagp {
                            lagkit_bondcfg::Pagp::Off => true,
                            _ if b.config.mode == lagkit_bondcfg::Mode::ActiveBackup => {
                                in_channel >= 1
                            }
                            _ => in_channel == b.members.len(),
                        };
                        v.ok = all_up && st.mii_status.is_up() && pagp_ok;
                    }
                }
            }
        }
        snap.hosts.push(v);
    }
    for sw in &lab.topo.switches {
        if sw.kind == SwitchKind::Lagkit {
            snap.channels.extend(lagkit_channels(lab, sw));
            continue;
        }
        let Some(ovs) = lab.ovs(&sw.name) else {
            continue;
        };
        for c in &sw.channels {
            let mut v = ChannelView::new(&sw.name, &c.name);
            let port = ovs_port_name(c);
            match c.protocol {
                Protocol::None => {
                    v.status = "none".into();
                    v.ok = true;
                }
                Protocol::Static => {
                    v.status = "static".into();
                    match ovs.bond_members(&port) {
                        Ok(m) => {
                            v.ok = c
                                .ports
                                .iter()
                                .all(|p| m.get(p).is_some_and(|s| s == "enabled"));
                            v.members = m;
                        }
                        Err(e) => v.problems.push(e.to_string()),
                    }
                }
                Protocol::LacpActive | Protocol::LacpPassive => match ovs.lacp(&port) {
                    Ok(l) => {
                        let ports: Vec<&str> = c.ports.iter().map(String::as_str).collect();
                        let enabled = ovs
                            .bond_members(&port)
                            .map(|m| {
                                ports
                                    .iter()
                                    .all(|p| m.get(*p).is_some_and(|s| s == "enabled"))
                            })
                            // A one-port channel has no bond/show.
                            .unwrap_or(c.ports.len() == 1);
                        v.ok = l.all_current(&ports) && enabled;
                        v.status = l.status.clone();
                        v.members = l
                            .members
                            .iter()
                            .map(|(k, m)| (k.clone(), m.status.clone()))
                            .collect();
                    }
                    Err(e) => v.problems.push(e.to_string()),
                },
                // Refused for Open vSwitch when the topology is read.
                Protocol::PagpDesirable
                | Protocol::PagpDesirableNonSilent
                | Protocol::PagpAuto
                | Protocol::PagpAutoNonSilent => {
                    v.problems.push("Open vSwitch has no PAgP".into());
                }
            }
            snap.channels.push(v);
        }
    }
    snap
}

/// lagkit switch `sw`'s channels from `show etherchannel summary`: formed
/// when every member is bundled (flag `P`); a channel of protocol `none`
/// is no port-channel and always formed.
fn lagkit_channels(lab: &Lab, sw: &Switch) -> Vec<ChannelView> {
    let states = match lab.lagkit_switch(&sw.name) {
        None => Err(format!("no lagkit switch {}", sw.name)),
        Some(s) => s.channels().map_err(|e| e.to_string()),
    };
    sw.channels
        .iter()
        .zip(sw.channel_numbers())
        .map(|(c, n)| {
            let mut v = ChannelView::new(&sw.name, &c.name);
            if c.protocol == Protocol::None {
                v.status = "none".into();
                v.ok = true;
                return v;
            }
            match &states {
                Err(e) => v.problems.push(e.clone()),
                Ok(all) => match all.iter().find(|s| s.channel == n) {
                    None => v
                        .problems
                        .push(format!("the switch has no Port-channel{n}")),
                    Some(s) => {
                        v.status = format!("Port-channel{n} {}", s.protocol);
                        v.ok = s.all_bundled() && s.members.len() == c.ports.len();
                        for m in &s.members {
                            let name = m.device.clone().or(m.port.clone()).unwrap_or_default();
                            let state = if m.why.is_empty() {
                                m.flag.to_string()
                            } else {
                                format!("{} ({})", m.flag, m.why)
                            };
                            v.members.insert(name, state);
                        }
                    }
                },
            }
            v
        })
        .collect()
}

/// Waits until every host bond and every switch channel has formed, up to
/// `deadline`; returns the time it took and the final snapshot, or says
/// which side has not converged and why.
pub fn converge(lab: &Lab, deadline: Duration) -> Result<(Duration, LacpSnapshot), ConvergeError> {
    let (took, s) = wait_formed(lab, deadline);
    if s.all_ok() {
        return Ok((took, s));
    }
    Err(ConvergeError {
        after: deadline,
        sides: s.not_converged(),
    })
}

/// Polls until every bond and channel has formed or `deadline` has
/// passed; returns the time waited and the last snapshot (formed or not:
/// see [`LacpSnapshot::all_ok`]).
pub fn wait_formed(lab: &Lab, deadline: Duration) -> (Duration, LacpSnapshot) {
    let t0 = Instant::now();
    loop {
        let s = snapshot(lab);
        if s.all_ok() || t0.elapsed() >= deadline {
            return (t0.elapsed(), s);
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}
