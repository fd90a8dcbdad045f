//! The bond's logical interface, and which engine moves its frames.
//!
//! The userspace engine's logical interface is a TAP device that its
//! forwarding threads read and write. The BPF engine's is one end of a veth
//! pair ([`crate::kernel`]); the engine's control threads then get an idle
//! socket pair as their upper side, so they carry control frames only.
//!
//! `engine = "auto"` picks the BPF engine when the kernel runs its programs
//! here: the programs load through the verifier, attach as tcx links, and
//! the JIT is on (interpreted, they would be slower than the userspace
//! engine). Anything else, with the reason, picks the userspace engine.

use crate::error::BondError;
use crate::kernel::{self, EngineChoice, KernelPath};
use lagkit_api::status::EngineKind;
use lagkit_bondcfg::Cidr;
use lagkit_bondcore::plan::LogicalLink;
use lagkit_bpf::Logical;
use lagkit_dataplane::{Device, Link, PairDevice, Tap, TapConfig};
use lagkit_sys::addr::Op;
use lagkit_wire::MacAddr;
use std::sync::Arc;

/// The bond's logical interface.
pub enum Upper {
    /// The userspace engine's TAP device.
    Tap(Arc<Tap>),
    /// The BPF engine's veth end (`None` once removed at shutdown), its
    /// link handle, and the idle device the control threads read.
    Logical {
        /// The programs loaded and attached to it when the engine was
        /// chosen, for the first start to complete (loading twice would
        /// add a quarter of a second to every start).
        probe: Option<Box<KernelPath>>,
        /// The veth pair, deleted on drop.
        logical: Option<Logical>,
        /// The interface, for MAC, MTU and up/down.
        link: Link,
        /// An idle socket pair standing for the upper side of the control
        /// threads (the peer kept so it never reads end-of-file).
        idle: (Arc<PairDevice>, PairDevice),
    },
}

/// The engine a bond runs, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineInfo {
    /// Which.
    pub kind: EngineKind,
    /// The configured choice, or why `auto` chose it.
    pub why: String,
}

/// Why the logical interface could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpperError {
    /// The userspace engine's TAP.
    #[error("cannot create TAP {name}: {why}")]
    Tap {
        /// The bond.
        name: String,
        /// The kernel's answer.
        why: String,
    },
    /// A step of the BPF engine's veth end.
    #[error("BPF engine for {name}: {step}: {why}")]
    Logical {
        /// The bond.
        name: String,
        /// What was being done.
        step: &'static str,
        /// The kernel's (or the loader's) answer.
        why: String,
    },
}

/// `UpperError::Logical` for `step` of bond `name`.
fn step<E: std::fmt::Display>(name: &str, step: &'static str) -> impl FnOnce(E) -> UpperError {
    let name = name.to_string();
    move |e| UpperError::Logical {
        name,
        step,
        why: e.to_string(),
    }
}

impl Upper {
    /// Creates the logical interface of bond `name` for the engine `want`
    /// asks for. `engine = "bpf"` that the kernel cannot run is an error;
    /// `auto` then falls back to the userspace engine and says why.
    pub fn open(name: &str, want: EngineChoice) -> Result<(Upper, EngineInfo), UpperError> {
        let tap = |why: String| -> Result<(Upper, EngineInfo), UpperError> {
            let tap = Tap::open(&TapConfig::new(name)).map_err(|e| UpperError::Tap {
                name: name.to_string(),
                why: e.to_string(),
            })?;
            // No member carries traffic yet: the first plan says when one does.
            tap.set_carrier(false).map_err(|e| UpperError::Tap {
                name: name.to_string(),
                why: e.to_string(),
            })?;
            Ok((
                Upper::Tap(Arc::new(tap)),
                EngineInfo {
                    kind: EngineKind::Userspace,
                    why,
                },
            ))
        };
        match want {
            EngineChoice::Userspace => tap("engine = userspace".into()),
            EngineChoice::Bpf => Upper::logical(name).map(|u| {
                (
                    u,
                    EngineInfo {
                        kind: EngineKind::Bpf,
                        why: "engine = bpf".into(),
                    },
                )
            }),
            EngineChoice::Auto => {
                if let Some(off) = lagkit_bpf::jit_off() {
                    return tap(format!("auto: {off}"));
                }
                match Upper::logical(name) {
                    Ok(u) => Ok((
                        u,
                        EngineInfo {
                            kind: EngineKind::Bpf,
                            why: "auto: the kernel runs lagkit's BPF programs".into(),
                        },
                    )),
                    Err(e) => tap(format!("auto: the BPF engine cannot run here: {e}")),
                }
            }
        }
    }

    /// The veth end a killed daemon left (with index `ifindex`), for a
    /// daemon that adopts its pinned data path: the new programs load and
    /// attach behind the pinned ones, which go on forwarding meanwhile.
    pub fn adopt(name: &str, ifindex: u32) -> Result<(Upper, EngineInfo), UpperError> {
        let logical =
            kernel::adopt_logical(name, ifindex).map_err(step(name, "adopt the veth end"))?;
        let probe = KernelPath::load(name).map_err(step(name, "load the programs"))?;
        let link = Link::open(name).map_err(step(name, "open the veth end"))?;
        let (a, b) = PairDevice::pair(name, "idle").map_err(step(name, "idle device"))?;
        Ok((
            Upper::Logical {
                probe: Some(Box::new(probe)),
                logical: Some(logical),
                link,
                idle: (Arc::new(a), b),
            },
            EngineInfo {
                kind: EngineKind::Bpf,
                why: "adopted the data path a previous lagkit left forwarding".into(),
            },
        ))
    }

    /// The TAP a previous daemon of bond `name` handed over (`fd`), when
    /// it is still the interface of index `ifindex`.
    pub fn adopt_tap(
        name: &str,
        fd: std::os::fd::OwnedFd,
        ifindex: u32,
    ) -> Result<(Upper, EngineInfo), UpperError> {
        let err = |why: String| UpperError::Tap {
            name: name.to_string(),
            why,
        };
        let tap = Tap::adopt(fd, name).map_err(|e| err(e.to_string()))?;
        let now = tap.link().ifindex().map_err(|e| err(e.to_string()))?;
        if now != ifindex {
            return Err(err(format!(
                "the TAP handed over is interface {now}, the record says {ifindex}"
            )));
        }
        Ok((
            Upper::Tap(Arc::new(tap)),
            EngineInfo {
                kind: EngineKind::Userspace,
                why: "adopted the TAP and sockets a previous lagkit handed over".into(),
            },
        ))
    }

    /// The veth end, proven able to carry the programs: they load and
    /// attach to it, and are kept for the bond's first start.
    fn logical(name: &str) -> Result<Upper, UpperError> {
        // Dropped on error, which deletes the pair again.
        let logical = kernel::create_logical(name).map_err(step(name, "create the veth end"))?;
        // No member carries traffic yet: the first plan says when one does.
        kernel::set_carrier(name, false).map_err(step(name, "set the carrier off"))?;
        let probe = KernelPath::load(name).map_err(step(name, "load the programs"))?;
        let link = Link::open(name).map_err(step(name, "open the veth end"))?;
        let (a, b) = PairDevice::pair(name, "idle").map_err(step(name, "idle device"))?;
        Ok(Upper::Logical {
            probe: Some(Box::new(probe)),
            logical: Some(logical),
            link,
            idle: (Arc::new(a), b),
        })
    }

    /// The interface (MAC, MTU, up).
    pub fn link(&self) -> &Link {
        match self {
            Upper::Tap(t) => t.link(),
            Upper::Logical { link, .. } => link,
        }
    }

    /// What the userspace engine's threads read and write as the upper side.
    pub fn device(&self) -> Arc<dyn Device> {
        match self {
            Upper::Tap(t) => t.clone(),
            Upper::Logical { idle, .. } => idle.0.clone(),
        }
    }

    /// The programs the engine choice loaded, the first time it is asked.
    pub fn take_probe(&mut self) -> Option<KernelPath> {
        match self {
            Upper::Logical { probe, .. } => probe.take().map(|k| *k),
            Upper::Tap(_) => None,
        }
    }

    /// Shows the host `link`, the aggregate's carrier and speed: a TAP
    /// takes both (`TUNSETCARRIER`, ethtool's settings); the veth end takes
    /// the carrier from its idle peer's state (down: `NO-CARRIER`,
    /// operstate `LOWERLAYERDOWN`), and its speed stays veth's fixed
    /// 10000 Mb/s (docs/bond.md says why the BPF engine keeps a veth).
    pub fn show_link(&self, bond: &str, link: LogicalLink) -> Result<(), String> {
        match self {
            Upper::Tap(t) => {
                t.set_carrier(link.carrier).map_err(|e| e.to_string())?;
                (t.link().set_speed(link.speed_mbps, link.full_duplex)).map_err(|e| e.to_string())
            }
            Upper::Logical { .. } => {
                kernel::set_carrier(bond, link.carrier).map_err(|e| e.to_string())
            }
        }
    }

    /// Whether the kernel moves the data frames (the BPF engine).
    pub fn is_kernel(&self) -> bool {
        matches!(self, Upper::Logical { .. })
    }

    /// Leaves a veth logical interface in place, for a pinned data path
    /// that goes on sending to it.
    pub fn leave(&mut self) {
        if let Upper::Logical { logical, probe, .. } = self {
            *probe = None;
            if let Some(l) = logical.take() {
                l.leave();
            }
        }
    }

    /// Removes a veth logical interface now (at shutdown, before the run
    /// directory is released); a TAP goes when its last descriptor closes.
    pub fn remove(&mut self) {
        if let Upper::Logical { logical, probe, .. } = self {
            *probe = None;
            *logical = None;
        }
    }
}

impl Upper {
    /// Gives logical interface `bond` its MAC and MTU (when set) and the
    /// alias `ip link` shows ([`logical_alias`]), brings it up and adds
    /// `addresses` (over rtnetlink, through `lagkit-sys`). An adopted
    /// interface that already has the MAC keeps it untouched.
    pub fn bring_up(
        &self,
        bond: &str,
        mode: &str,
        mac: MacAddr,
        mtu: Option<u32>,
        addresses: &[Cidr],
    ) -> Result<(), BondError> {
        let link = self.link();
        let tap_err = |why: String| BondError::Tap {
            bond: bond.to_string(),
            why,
        };
        if link.mac().ok() != Some(mac.0) {
            link.set_mac(mac.0)
                .map_err(|e| tap_err(format!("set MAC {mac}: {e}")))?;
        }
        if let Some(mtu) = mtu {
            link.set_mtu(mtu)
                .map_err(|e| tap_err(format!("set MTU {mtu}: {e}")))?;
        }
        let alias = lagkit_sys::link::LinkChange {
            alias: Some(logical_alias(bond, mode)),
            ..Default::default()
        };
        if let Err(e) = lagkit_sys::link::set(bond, &alias) {
            tracing::warn!(bond = %bond, error = %e, "no interface alias");
        }
        link.set_up(true)
            .map_err(|e| tap_err(format!("bring up: {e}")))?;
        for a in addresses {
            address(Op::Replace, bond, a)?;
        }
        Ok(())
    }

    /// A reload changed the address list from `old` to `new`: the
    /// addresses no longer listed are removed, the new ones added, the
    /// others left untouched. Returns the addresses the interface now
    /// holds (a failure is logged, and the bond runs on without it).
    pub fn change_addresses(&self, bond: &str, old: &[Cidr], new: &[Cidr]) -> Vec<Cidr> {
        for a in old.iter().filter(|a| !new.contains(a)) {
            if let Err(e) = address(Op::Delete, bond, a) {
                tracing::error!(bond = %bond, error = %e, "address not removed");
            }
        }
        let mut held: Vec<Cidr> = new.iter().filter(|a| old.contains(a)).copied().collect();
        for a in new.iter().filter(|a| !old.contains(a)) {
            match address(Op::Replace, bond, a) {
                Ok(()) => held.push(*a),
                Err(e) => tracing::error!(bond = %bond, error = %e, "address not added"),
            }
        }
        held
    }
}

/// The alias (`ip link` shows it) of bond `bond`'s logical interface:
/// `lagkit bond bond0 (802.3ad)`. A would-be member with such an alias is
/// another bond's logical interface, and is refused.
pub fn logical_alias(bond: &str, mode: &str) -> String {
    format!("{LOGICAL_ALIAS}{bond} ({mode})")
}

/// What every logical interface's alias starts with.
pub const LOGICAL_ALIAS: &str = "lagkit bond ";

/// The alias of a member of bond `bond`: `member of lagkit bond bond0`.
pub fn member_alias(bond: &str) -> String {
    format!("member of lagkit bond {bond}")
}

/// `ip addr replace|del A dev BOND`, over rtnetlink.
fn address(op: Op, bond: &str, a: &Cidr) -> Result<(), BondError> {
    lagkit_sys::addr::change(op, bond, a.addr, a.prefix).map_err(|e| BondError::Address {
        bond: bond.to_string(),
        addr: a.to_string(),
        why: e.reason(),
    })
}

/// The IPv4 addresses of `list` (the ones the bond answers ARP for).
pub fn ipv4_of(list: &[Cidr]) -> Vec<std::net::Ipv4Addr> {
    list.iter()
        .filter_map(|c| match c.addr {
            std::net::IpAddr::V4(v4) => Some(v4),
            std::net::IpAddr::V6(_) => None,
        })
        .collect()
}
