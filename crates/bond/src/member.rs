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
//! The member is also isolated from the host's stack
//! ([`lagkit_dataplane::isolate`]): every frame it receives reaches the
//! host once, through the bond, never a second time on the member itself.

use crate::journal::{MemberRecord, RunDir};
use lagkit_dataplane::{isolate_ingress, Isolation, Link, PacketConfig, PacketSocket};
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
        }
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
    /// What keeps its frames from the host stack (held while the bond runs).
    pub isolation: Isolation,
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
    /// A setting could not be applied.
    #[error("member {name}: {what}")]
    Setup {
        /// Interface name.
        name: String,
        /// What failed.
        what: String,
    },
}

/// Takes interface `name` for the bond: records its settings in `journal`,
/// then changes them; on failure everything is given back before the error
/// returns. An interface that disappears while it is being changed is
/// [`MemberError::Missing`], as if it had never been there: the bond waits
/// for it.
pub fn take(name: &str, mtu: Option<u32>, journal: &mut RunDir) -> Result<Taken, MemberError> {
    take_with(name, mtu, journal, |_| {})
}

/// [`take`], running `between` after the record is written and before the
/// first change: the seam where tests remove the interface at exactly the
/// worst moment.
pub fn take_with(
    name: &str,
    mtu: Option<u32>,
    journal: &mut RunDir,
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
    let saved = Saved {
        mac: link.mac().map_err(|e| err(e.to_string()))?,
        mtu: link.mtu().map_err(|e| err(e.to_string()))?,
        up: flags.up(),
        noarp: flags.0 & libc::IFF_NOARP as u32 != 0,
        disable_ipv6: fs::read_to_string(ipv6_path(name)).ok(),
    };
    journal
        .record(MemberRecord {
            name: name.to_string(),
            saved: saved.clone(),
            tc_filter: None,
        })
        .map_err(|e| err(format!("cannot record its settings: {e}")))?;
    between(name);
    match change(&link, name, mtu, &saved, journal) {
        Ok((sock, isolation)) => Ok(Taken {
            sock,
            mac: saved.mac,
            saved,
            isolation,
        }),
        Err(what) => {
            restore(name, &saved);
            journal.forget(name);
            // Gone half-way (deleted, or its driver unloaded): nothing is
            // left to give back, and it is waited for like a member that
            // was missing at start.
            if Link::open(name).is_err() {
                return Err(MemberError::Missing(name.to_string()));
            }
            Err(err(what))
        }
    }
}

fn change(
    link: &Link,
    name: &str,
    mtu: Option<u32>,
    saved: &Saved,
    journal: &mut RunDir,
) -> Result<(PacketSocket, Isolation), String> {
    link.set_flag(libc::IFF_NOARP, true)
        .map_err(|e| format!("cannot turn ARP off: {e}"))?;
    if saved.disable_ipv6.is_some() {
        let _ = fs::write(ipv6_path(name), "1");
    }
    if let Some(m) = mtu {
        if m != saved.mtu {
            link.set_mtu(m).map_err(|e| {
                format!("cannot set MTU {m}: {e} (is it above the device's maximum?)")
            })?;
        }
    }
    link.set_up(true)
        .map_err(|e| format!("cannot bring it up: {e}"))?;
    let sock = PacketSocket::open(&PacketConfig {
        ifname: name.to_string(),
        rcvbuf: 32 << 20,
        sndbuf: 32 << 20,
        promisc: true,
        batched: true,
    })
    .map_err(|e| format!("cannot open AF_PACKET socket: {e}"))?;
    let isolation = isolate_ingress(sock.link()).map_err(|e| e.to_string())?;
    if let Isolation::TcClassic { created_qdisc, .. } = &isolation {
        tracing::warn!(member = %name, "no tcx in this kernel: keeping member frames from the host stack with a tc clsact filter");
        journal
            .note_tc_filter(name, *created_qdisc)
            .map_err(|e| format!("cannot record its filter: {e}"))?;
    }
    Ok((sock, isolation))
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
    let _ = link.set_up(saved.up);
}
