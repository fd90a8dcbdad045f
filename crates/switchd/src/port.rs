//! A switch port's device: opened, set administratively up or down as
//! its configuration says, and watched by the loop's epoll.

use crate::error::{sys, SwitchError};
use lagkit_dataplane::{Device, PacketConfig, PacketSocket, Receive};
use lagkit_switch::config::SwitchConfig;
use lagkit_switch::core::PortInfo;
use lagkit_switch::PortId;
use lagkit_wire::MacAddr;
use nix::sys::epoll::{Epoll, EpollEvent, EpollFlags};

/// One port: the device that carries it and its socket.
pub(crate) struct Port {
    pub device: String,
    /// Sends everything; reads every frame, or (the kernel forwarding)
    /// slow-protocol frames only.
    pub sock: PacketSocket,
    /// The kernel forwarding: reads Cisco's multicast (PAgP, CDP).
    pub cisco: Option<PacketSocket>,
}

/// The epoll data of a port's [`Port::cisco`] socket: this bit and the
/// port's index.
pub(crate) const CISCO_SOCKET: u64 = 1 << 32;

impl Port {
    /// Opens port `p` on `device`, sets the device administratively up
    /// (down for a port configured `shutdown`) where it is not already,
    /// and adds its socket to `epoll` with the port's index as its data.
    /// Returns what the core needs to know of it: its MAC and carrier.
    pub fn open(
        p: PortId,
        device: &str,
        cfg: &SwitchConfig,
        epoll: &Epoll,
        handed: Option<std::os::fd::OwnedFd>,
    ) -> Result<(Port, PortInfo), SwitchError> {
        let conf = cfg.bridge.port(p);
        let pname = conf.map_or(device, |c| c.name.as_str());
        let perr = |e: &dyn std::fmt::Display| SwitchError::Port {
            port: pname.to_string(),
            device: device.to_string(),
            why: e.to_string(),
        };
        // The socket a previous switch handed over (its queued frames
        // are forwarded next), or a new one.
        let sock = match handed {
            Some(fd) => PacketSocket::adopt(fd, &PacketConfig::new(device)),
            None => PacketSocket::open(&PacketConfig::new(device)),
        }
        .map_err(|e| perr(&e))?;
        let link = sock.link();
        let mac = MacAddr(link.mac().map_err(|e| perr(&e))?);
        // A port is administratively up unless configured `shutdown`, and
        // so is its device: a Catalyst's port sends light unless shut
        // down, and a partner sees a shut port lose carrier.
        let enabled = conf.is_none_or(|c| c.enabled);
        if link.flags().map_err(|e| perr(&e))?.up() != enabled {
            lagkit_sys::link::set(device, &lagkit_sys::link::LinkChange::up(enabled))
                .map_err(|e| perr(&e))?;
            tracing::info!(port = %pname, device = %device, "device set administratively {}", if enabled { "up" } else { "down: the port is configured shutdown" });
        }
        let want = conf.map_or(1500, |c| c.mtu);
        match link.mtu() {
            Ok(mtu) if mtu < want => {
                tracing::warn!(port = %pname, device = %device, "the device's MTU {mtu} is below the port's {want}: frames between the two never reach the switch (raise it with `ip link set {device} mtu {want}`)");
            }
            _ => {}
        }
        let carrier = link.carrier().unwrap_or(false);
        epoll
            .add(
                sock.poll_fd(),
                EpollEvent::new(EpollFlags::EPOLLIN, p.0 as u64),
            )
            .map_err(|e| sys("epoll_ctl")(e.into()))?;
        let port = Port {
            device: device.to_string(),
            sock,
            cisco: None,
        };
        Ok((port, PortInfo { mac, carrier }))
    }

    /// The kernel forwards the data frames: the port's socket is bound to
    /// the slow protocols and a second one, added to `epoll` as port `p`'s
    /// [`CISCO_SOCKET`], to Cisco's multicast. Two sockets bound to their
    /// protocols, rather than one for every frame with a filter: a socket
    /// for every frame is visited by each data frame the port receives,
    /// before the kernel forwards it (about 0.1 µs a frame on a veth).
    pub fn receive_control_only(&mut self, p: PortId, epoll: &Epoll) -> Result<(), String> {
        self.sock
            .receive_only(Receive::Slow)
            .map_err(|e| e.to_string())?;
        let cisco = PacketSocket::open(&PacketConfig {
            // The port's socket made the device promiscuous already.
            promisc: false,
            rcvbuf: 1 << 20,
            sndbuf: 1 << 16,
            receive: Receive::Cisco,
            ..PacketConfig::new(&self.device)
        })
        .map_err(|e| e.to_string())?;
        epoll
            .add(
                cisco.poll_fd(),
                EpollEvent::new(EpollFlags::EPOLLIN, CISCO_SOCKET | p.0 as u64),
            )
            .map_err(|e| format!("epoll_ctl: {e}"))?;
        self.cisco = Some(cisco);
        Ok(())
    }
}
