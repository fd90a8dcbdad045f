//! Preparing a member interface for the bond and giving it back as it was.
//!
//! A member must not act as a host of its own: the kernel would answer ARP
//! and send IPv6 neighbour discovery from it, and a peer would learn the
//! wrong port (the lab recipes saw intermittent loss from exactly that). So
//! the bond turns ARP and IPv6 off on it, sets its MTU, brings it up, and
//! opens it with AF_PACKET in promiscuous mode; on exit it restores every
//! one of those settings. Each member's originals are recorded in the
//! bond's state file ([`crate::journal`]) before the first change, and a
//! take that fails half-way gives back what it had changed at once.
//!
//! With `offloads = false` the bond also turns the member's transmit
//! offloads off ([`crate::offloads`]), recorded and given back the same way.
//!
//! The member is also isolated from the host's stack
//! ([`lagkit_dataplane::isolate`]): every frame it receives reaches the
//! host once, through the bond, never a second time on the member itself.

use crate::journal::{MemberRecord, RunDir};
use crate::offloads;
use lagkit_dataplane::{isolate_ingress, Isolation, Link, PacketConfig, PacketSocket, Receive};
use serde::{Deserialize, Serialize};
use std::fs;

/// The member's settings before the bond touched them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Saved {
    mac: [u8; 6],
    mtu: u32,
    up: bool,
    noarp: bool,
    disable_ipv6: Option<String>,
    /// The offload features lagkit turned off (`offloads = false`), to
    /// turn back on; `None` when it leaves them alone. State files written
    /// before lagkit had the option have no such field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    offloads: Option<Vec<String>>,
    /// Its alias (`ip link set NAME alias TEXT`) before the bond gave it
    /// its own; `None`: it had none. Older state files have no field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    alias: Option<String>,
}

impl Saved {
    /// A record with made-up values, for tests of the state file.
    pub fn for_test(mtu: u32) -> Saved {
        Saved {
            mac: [2, 0, 0, 0, 0, 1],
            mtu,
            up: false,
            noarp: false,
            disable_ipv6: Some("0\n".into()),
            offloads: None,
            alias: None,
        }
    }

    /// [`Saved::for_test`] with offload features recorded as turned off.
    pub fn for_test_offloads(mtu: u32, features: &[&str]) -> Saved {
        Saved {
            offloads: Some(features.iter().map(|f| f.to_string()).collect()),
            ..Saved::for_test(mtu)
        }
    }

    /// The offload features lagkit turned off and gives back on exit
    /// (empty when it changed none).
    pub fn offloads_turned_off(&self) -> &[String] {
        self.offloads.as_deref().unwrap_or_default()
    }

    /// Whether lagkit keeps this member's offloads off (`offloads = false`).
    pub fn offloads_off(&self) -> bool {
        self.offloads.is_some()
    }
}

/// A member the bond has taken.
#[derive(Debug)]
pub struct Taken {
    /// Its packet socket.
    pub sock: PacketSocket,
    /// What to give back.
    pub saved: Saved,
    /// Its own MAC.
    pub mac: [u8; 6],
    /// What keeps its frames from the host stack (held while the bond
    /// runs); `None` under the BPF engine, whose ingress program does.
    pub isolation: Option<Isolation>,
}

fn ipv6_path(name: &str) -> String {
    format!("/proc/sys/net/ipv6/conf/{name}/disable_ipv6")
}

/// Why a member could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum MemberError {
    /// The interface does not exist (yet).
    #[error("member {0} does not exist")]
    Missing(String),
    /// The host still uses it (or it belongs to something else), and
    /// `force_members` does not list it.
    #[error("{what}")]
    Refused {
        /// Interface name.
        name: String,
        /// Why, and the key that overrides.
        what: String,
    },
    /// A setting could not be applied.
    #[error("member {name}: {what}")]
    Setup {
        /// Interface name.
        name: String,
        /// What failed.
        what: String,
    },
}

/// What the bond sets on a member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Want {
    /// Its alias while the bond holds it (`member of lagkit bond bond0`).
    pub alias: String,
    /// Its MTU (unchanged when `None`).
    pub mtu: Option<u32>,
    /// Leave its transmit offloads alone (false: `offloads = false`, turn them off).
    pub keep_offloads: bool,
    /// The kernel moves its data frames (the BPF engine): its packet socket
    /// reads control frames only, and the engine's ingress program keeps
    /// data frames from the host stack (no separate isolation).
    pub kernel: bool,
    /// The control plane reads ARP (or Cisco's multicast) on the member,
    /// besides slow-protocol frames (matters only with `kernel`).
    pub snoop: bool,
}

/// Takes interface `name` for the bond: records its settings in `journal`,
/// then changes them; on failure everything is given back before the error
/// returns. An interface that disappears while it is being changed is
/// [`MemberError::Missing`], as if it had never been there: the bond waits
/// for it.
pub fn take(name: &str, want: Want, journal: &mut RunDir) -> Result<Taken, MemberError> {
    take_with(name, want, journal, None, |_| {})
}

/// A member's descriptors as a previous daemon of the bond handed them
/// over (the userspace engine's handoff): its packet socket and the tcx
/// link that keeps its frames from the host stack.
#[derive(Debug)]
pub struct Handed {
    /// The packet socket, bound to the member.
    pub sock: std::os::fd::OwnedFd,
    /// The tcx drop link (`None`: the tc fallback filter, which the
    /// state file records, or none under the BPF engine).
    pub isolation: Option<std::os::fd::OwnedFd>,
}

/// [`take`], with the descriptors a previous daemon `handed` over (used
/// instead of new ones), running `between` after the record is written
/// and before the first change: the seam where tests remove the interface
/// at exactly the worst moment.
pub fn take_with(
    name: &str,
    want: Want,
    journal: &mut RunDir,
    handed: Option<Handed>,
    between: impl FnOnce(&str),
) -> Result<Taken, MemberError> {
    let link = Link::open(name).map_err(|_| MemberError::Missing(name.to_string()))?;
    let err = |what: String| MemberError::Setup {
        name: name.to_string(),
        what,
    };
    let flags = link
        .flags()
        .map_err(|_| MemberError::Missing(name.to_string()))?;
    if flags.0 & libc::IFF_LOOPBACK as u32 != 0 {
        return Err(err(
            "is the loopback interface; bond members must be Ethernet interfaces (veth, NICs)"
                .into(),
        ));
    }
    let offloads = if want.keep_offloads {
        None
    } else {
        let f = link
            .features()
            .map_err(|e| err(format!("cannot read its offloads: {e}")))?;
        Some(offloads::to_turn_off(&f))
    };
    let recorded = journal
        .members()
        .iter()
        .find(|m| m.name == name)
        .map(|m| m.saved.clone());
    let saved = match recorded {
        // Already recorded: a killed daemon changed it, and a start that
        // adopts its data path takes it over as it is. Its settings now
        // are lagkit's; the originals are the ones recorded.
        Some(saved) => saved,
        None => {
            let saved = Saved {
                mac: link.mac().map_err(|e| err(e.to_string()))?,
                mtu: link.mtu().map_err(|e| err(e.to_string()))?,
                up: flags.up(),
                noarp: flags.0 & libc::IFF_NOARP as u32 != 0,
                disable_ipv6: fs::read_to_string(ipv6_path(name)).ok(),
                offloads,
                alias: lagkit_sys::link::facts(name)
                    .ok()
                    .flatten()
                    .and_then(|f| f.alias),
            };
            journal
                .record(MemberRecord {
                    name: name.to_string(),
                    saved: saved.clone(),
                    tc_filter: None,
                })
                .map_err(|e| err(format!("cannot record its settings: {e}")))?;
            saved
        }
    };
    between(name);
    match change(&link, name, &want, &saved, journal, handed) {
        Ok((sock, isolation)) => Ok(Taken {
            sock,
            mac: saved.mac,
            saved,
            isolation,
        }),
        Err(e) => {
            restore(name, &saved);
            journal.forget(name);
            // Gone half-way (deleted, or its driver unloaded): nothing is
            // left to give back, and it is waited for like a member that
            // was missing at start.
            if Link::open(name).is_err() {
                return Err(MemberError::Missing(name.to_string()));
            }
            Err(e)
        }
    }
}

fn change(
    link: &Link,
    name: &str,
    want: &Want,
    saved: &Saved,
    journal: &mut RunDir,
    handed: Option<Handed>,
) -> Result<(PacketSocket, Option<Isolation>), MemberError> {
    let err = |what: String| MemberError::Setup {
        name: name.to_string(),
        what,
    };
    if let Some(features) = &saved.offloads {
        // Before the packet socket exists: no unfinished frame ever leaves.
        offloads::set(link, features, false)
            .map_err(|e| err(format!("cannot turn its offloads off: {e}")))?;
    }
    link.set_flag(libc::IFF_NOARP, true)
        .map_err(|e| err(format!("cannot turn ARP off: {e}")))?;
    if saved.disable_ipv6.is_some() {
        let _ = fs::write(ipv6_path(name), "1");
    }
    if let Some(m) = want.mtu {
        if m != saved.mtu {
            link.set_mtu(m).map_err(|e| {
                err(format!(
                    "cannot set MTU {m}: {e} (is it above the device's maximum?)"
                ))
            })?;
        }
    }
    link.set_up(true)
        .map_err(|e| err(format!("cannot bring it up: {e}")))?;
    set_alias(name, &want.alias);
    let cfg = PacketConfig {
        ifname: name.to_string(),
        rcvbuf: 32 << 20,
        sndbuf: 32 << 20,
        promisc: true,
        batched: true,
        receive: match (want.kernel, want.snoop) {
            (false, _) => Receive::All,
            (true, true) => Receive::Control,
            (true, false) => Receive::Slow,
        },
    };
    let (sock, handed_isolation) = match handed {
        // The socket a previous daemon read, with the frames it queued
        // since; its isolation still keeps them from the host stack.
        Some(h) => (
            PacketSocket::adopt(h.sock, &cfg)
                .map_err(|e| err(format!("cannot adopt its AF_PACKET socket: {e}")))?,
            Some(h.isolation),
        ),
        None => (
            PacketSocket::open(&cfg)
                .map_err(|e| err(format!("cannot open AF_PACKET socket: {e}")))?,
            None,
        ),
    };
    if want.kernel {
        return Ok((sock, None));
    }
    let tc_recorded = (journal.members().iter())
        .find(|m| m.name == name)
        .and_then(|m| m.tc_filter);
    let isolation = match (handed_isolation, tc_recorded) {
        (Some(Some(fd)), _) => Isolation::Tcx(fd),
        (Some(None), Some(created_qdisc)) => Isolation::TcClassic {
            ifname: name.to_string(),
            created_qdisc,
        },
        _ => isolate_ingress(sock.link()).map_err(|e| err(e.to_string()))?,
    };
    if let Isolation::TcClassic { created_qdisc, .. } = &isolation {
        tracing::warn!(member = %name, "no tcx in this kernel: keeping member frames from the host stack with a tc clsact filter");
        journal
            .note_tc_filter(name, *created_qdisc)
            .map_err(|e| err(format!("cannot record its filter: {e}")))?;
    }
    Ok((sock, Some(isolation)))
}

/// Sets `name`'s alias (empty removes it); a kernel that refuses leaves
/// the member as good as taken, with a log line.
fn set_alias(name: &str, alias: &str) {
    let change = lagkit_sys::link::LinkChange {
        alias: Some(alias.to_string()),
        ..Default::default()
    };
    if let Err(e) = lagkit_sys::link::set(name, &change) {
        tracing::warn!(member = %name, error = %e, "alias not set");
    }
}

/// Gives a member back with the settings it had (best effort: it may be gone).
pub fn restore(name: &str, saved: &Saved) {
    let Ok(link) = Link::open(name) else { return };
    if link.mac().is_ok_and(|m| m != saved.mac) {
        let _ = link.set_mac(saved.mac);
    }
    let _ = link.set_mtu(saved.mtu);
    let _ = link.set_flag(libc::IFF_NOARP, saved.noarp);
    if let Some(v) = &saved.disable_ipv6 {
        let _ = fs::write(ipv6_path(name), v.trim());
    }
    if let Some(features) = &saved.offloads {
        let _ = offloads::set(&link, features, true);
    }
    set_alias(name, saved.alias.as_deref().unwrap_or(""));
    let _ = link.set_up(saved.up);
}

/// Applies a reload's change of `offloads` to a member the bond holds:
/// records the features it turns off in `journal` before turning them off,
/// or turns back on those it had turned off and forgets them.
pub fn set_offloads(
    name: &str,
    keep: bool,
    saved: &mut Saved,
    journal: &mut RunDir,
) -> Result<(), MemberError> {
    let err = |what: String| MemberError::Setup {
        name: name.to_string(),
        what,
    };
    let link = Link::open(name).map_err(|_| MemberError::Missing(name.to_string()))?;
    match (keep, saved.offloads.take()) {
        (false, None) => {
            let f = link
                .features()
                .map_err(|e| err(format!("cannot read its offloads: {e}")))?;
            let features = offloads::to_turn_off(&f);
            saved.offloads = Some(features.clone());
            journal
                .update(name, saved)
                .map_err(|e| err(format!("cannot record its offloads: {e}")))?;
            offloads::set(&link, &features, false)
                .map_err(|e| err(format!("cannot turn its offloads off: {e}")))
        }
        (true, Some(features)) => {
            let r = offloads::set(&link, &features, true);
            if let Err(e) = journal.update(name, saved) {
                tracing::warn!("{e}");
            }
            r.map_err(|e| err(format!("cannot turn its offloads back on: {e}")))
        }
        (_, unchanged) => {
            saved.offloads = unchanged;
            Ok(())
        }
    }
}
