#![forbid(unsafe_code)]
//! Interface addresses, IPv4 or IPv6 with a prefix length: added,
//! replaced or deleted with one RTM_NEWADDR / RTM_DELADDR each, carrying
//! IFA_LOCAL and IFA_ADDRESS as `ip addr` does (no broadcast address,
//! as `ip addr add A/P dev D` sets none).

use std::net::IpAddr;

use netlink_packet_route::address::{AddressAttribute, AddressMessage};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use nix::errno::Errno;

use crate::netlink::{call, CREATE, EXCL, REPLACE};
use crate::Error;

/// What is done with an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Add it; EEXIST if the interface has it.
    Add,
    /// Add it, or update it if the interface has it.
    Replace,
    /// Delete it; EADDRNOTAVAIL if the interface does not have it.
    Delete,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Replace => "replace",
            Op::Delete => "delete",
        }
    }

    /// The netlink flags the request carries besides REQUEST|ACK.
    pub fn flags(self) -> u16 {
        match self {
            Op::Add => CREATE | EXCL,
            Op::Replace => CREATE | REPLACE,
            Op::Delete => 0,
        }
    }
}

/// The request that does `op` with `addr/prefix` on interface `ifindex`.
pub fn request(op: Op, ifindex: u32, addr: IpAddr, prefix: u8) -> RouteNetlinkMessage {
    let mut m = AddressMessage::default();
    m.header.family = match addr {
        IpAddr::V4(_) => AddressFamily::Inet,
        IpAddr::V6(_) => AddressFamily::Inet6,
    };
    m.header.prefix_len = prefix;
    m.header.index = ifindex;
    m.attributes.push(AddressAttribute::Local(addr));
    m.attributes.push(AddressAttribute::Address(addr));
    match op {
        Op::Add | Op::Replace => RouteNetlinkMessage::NewAddress(m),
        Op::Delete => RouteNetlinkMessage::DelAddress(m),
    }
}

/// `ip addr add|replace|del ADDR/PREFIX dev DEV`.
pub fn change(op: Op, dev: &str, addr: IpAddr, prefix: u8) -> Result<(), Error> {
    let refused = |errno| Error::Address {
        op: op.name(),
        addr: format!("{addr}/{prefix}"),
        dev: dev.to_string(),
        errno,
    };
    let ifindex = nix::net::if_::if_nametoindex(dev).map_err(|_| refused(Errno::ENODEV))?;
    call(
        request(op, ifindex, addr, prefix),
        op.flags(),
        refused,
        |source| Error::Socket {
            op: op.name(),
            object: format!("address {addr}/{prefix} on {dev}"),
            source,
        },
    )
}

/// `ip addr add ADDR/PREFIX dev DEV`.
pub fn add(dev: &str, addr: IpAddr, prefix: u8) -> Result<(), Error> {
    change(Op::Add, dev, addr, prefix)
}

/// `ip addr replace ADDR/PREFIX dev DEV`.
pub fn replace(dev: &str, addr: IpAddr, prefix: u8) -> Result<(), Error> {
    change(Op::Replace, dev, addr, prefix)
}

/// `ip addr del ADDR/PREFIX dev DEV`.
pub fn delete(dev: &str, addr: IpAddr, prefix: u8) -> Result<(), Error> {
    change(Op::Delete, dev, addr, prefix)
}

/// The addresses interface `ifindex` holds (`ip addr show dev D`),
/// link-local IPv6 (`fe80::/10`, which every IPv6 interface has) left out.
pub fn list(ifindex: u32) -> Result<Vec<(IpAddr, u8)>, Error> {
    let msgs = crate::netlink::query(
        RouteNetlinkMessage::GetAddress(AddressMessage::default()),
        true,
    )
    .map_err(|f| match f {
        crate::netlink::Failure::Refused(errno) => Error::Address {
            op: "list",
            addr: "every address".into(),
            dev: format!("interface {ifindex}"),
            errno,
        },
        crate::netlink::Failure::Socket(source) => Error::Socket {
            op: "list",
            object: "addresses".into(),
            source,
        },
    })?;
    let mut out = Vec::new();
    for m in msgs {
        let RouteNetlinkMessage::NewAddress(a) = m else {
            continue;
        };
        if a.header.index != ifindex {
            continue;
        }
        let addr = a.attributes.iter().find_map(|x| match x {
            AddressAttribute::Local(ip) => Some(*ip),
            _ => None,
        });
        let addr = addr.or_else(|| {
            a.attributes.iter().find_map(|x| match x {
                AddressAttribute::Address(ip) => Some(*ip),
                _ => None,
            })
        });
        match addr {
            Some(IpAddr::V6(v6)) if v6.segments()[0] & 0xffc0 == 0xfe80 => {}
            Some(ip) => out.push((ip, a.header.prefix_len)),
            None => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netlink::frame;

    #[test]
    fn newaddr_for_10_0_0_1_24_on_ifindex_7() {
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let got = frame(request(Op::Add, 7, a, 24), Op::Add.flags(), 42);
        // What strace shows `ip addr add 10.0.0.1/24 dev d0` send.
        #[rustfmt::skip]
        let want: Vec<u8> = vec![
            // nlmsghdr: 40 bytes, RTM_NEWADDR (20), REQUEST|ACK|EXCL|CREATE, seq 42
            40, 0, 0, 0, 20, 0, 0x05, 0x06, 42, 0, 0, 0, 0, 0, 0, 0,
            // ifaddrmsg: AF_INET, /24, flags 0, scope universe, index 7
            2, 24, 0, 0, 7, 0, 0, 0,
            // IFA_LOCAL (2) 10.0.0.1, IFA_ADDRESS (1) 10.0.0.1
            8, 0, 2, 0, 10, 0, 0, 1,
            8, 0, 1, 0, 10, 0, 0, 1,
        ];
        assert_eq!(got, want);
        let replace = frame(request(Op::Replace, 7, a, 24), Op::Replace.flags(), 42);
        assert_eq!(&replace[6..8], &[0x05, 0x05], "REQUEST|ACK|REPLACE|CREATE");
        assert_eq!(replace[16..], want[16..]);
        let del = frame(request(Op::Delete, 7, a, 24), Op::Delete.flags(), 42);
        assert_eq!(&del[4..8], &[21, 0, 0x05, 0], "RTM_DELADDR, REQUEST|ACK");
        assert_eq!(del[16..], want[16..]);
    }

    #[test]
    fn ipv6_addresses_are_family_inet6_with_16_bytes() {
        let a: IpAddr = "fd00::1".parse().unwrap();
        let got = frame(request(Op::Replace, 3, a, 64), Op::Replace.flags(), 1);
        assert_eq!(got.len(), 16 + 8 + 20 + 20);
        assert_eq!(
            &got[16..24],
            &[10, 64, 0, 0, 3, 0, 0, 0],
            "AF_INET6, /64, index 3"
        );
        let mut local = vec![20, 0, 2, 0, 0xfd, 0];
        local.extend([0; 13]);
        local.push(1);
        assert_eq!(&got[24..44], &local[..]);
    }

    #[test]
    fn a_missing_interface_is_enodev_before_any_request() {
        let e = add("no-such-if0", "10.0.0.1".parse().unwrap(), 24).unwrap_err();
        assert_eq!(e.errno(), Some(Errno::ENODEV), "{e}");
        assert!(e.to_string().contains("10.0.0.1/24 on no-such-if0"), "{e}");
    }
}
