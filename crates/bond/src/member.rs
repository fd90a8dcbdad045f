//! Preparing a member interface for the bond and giving it back as it was.
//!
//! A member must not act as a host of its own: the kernel would answer ARP
//! and send IPv6 neighbour discovery from it, and a peer would learn the
//! wrong port (the lab recipes saw intermittent loss from exactly that). So
//! the bond turns ARP and IPv6 off on it, sets its MTU, brings it up, and
//! opens it with AF_PACKET in promiscuous mode; on exit it restores every
//! one of those settings.

use lagkit_dataplane::{Link, PacketConfig, PacketSocket};
use std::fs;

/// The member's settings before the bond touched them.
#[derive(Debug, Clone)]
pub struct Saved {
    mac: [u8; 6],
    mtu: u32,
    up: bool,
    noarp: bool,
    disable_ipv6: Option<String>,
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

/// Takes interface `name` for the bond: returns its packet socket and what
/// to restore later.
pub fn take(name: &str, mtu: Option<u32>) -> Result<(PacketSocket, Saved, [u8; 6]), MemberError> {
    let link = Link::open(name).map_err(|_| MemberError::Missing(name.to_string()))?;
    let err = |what: String| MemberError::Setup {
        name: name.to_string(),
        what,
    };
    let flags = link
        .flags()
        .map_err(|_| MemberError::Missing(name.to_string()))?;
    let saved = Saved {
        mac: link.mac().map_err(|e| err(e.to_string()))?,
        mtu: link.mtu().map_err(|e| err(e.to_string()))?,
        up: flags.up(),
        noarp: flags.0 & libc::IFF_NOARP as u32 != 0,
        disable_ipv6: fs::read_to_string(ipv6_path(name)).ok(),
    };
    let mac = link.mac().map_err(|e| err(e.to_string()))?;
    link.set_flag(libc::IFF_NOARP, true)
        .map_err(|e| err(format!("cannot turn ARP off: {e}")))?;
    if saved.disable_ipv6.is_some() {
        let _ = fs::write(ipv6_path(name), "1");
    }
    if let Some(m) = mtu {
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
    let sock = PacketSocket::open(&PacketConfig {
        ifname: name.to_string(),
        rcvbuf: 32 << 20,
        sndbuf: 32 << 20,
        promisc: true,
        batched: true,
    })
    .map_err(|e| err(format!("cannot open AF_PACKET socket: {e}")))?;
    Ok((sock, saved, mac))
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
