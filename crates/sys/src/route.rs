#![forbid(unsafe_code)]
//! The routes through an interface (`ip route show dev D`, IPv4 and IPv6,
//! every table): what would break if the interface stopped being the
//! host's, and so what lagkit names before it takes it as a member.

use std::net::IpAddr;

use netlink_packet_route::route::{RouteAddress, RouteAttribute, RouteMessage, RouteType};
use netlink_packet_route::RouteNetlinkMessage;

use crate::Error;

/// One route through an interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteFacts {
    /// Its destination (`None`: a default route).
    pub destination: Option<IpAddr>,
    /// The destination's prefix length (0 for a default route).
    pub prefix: u8,
    /// Its gateway, if it has one.
    pub gateway: Option<IpAddr>,
    /// Its table (254 is `main`).
    pub table: u32,
}

impl RouteFacts {
    /// A default route (`0.0.0.0/0`, `::/0`).
    pub fn is_default(&self) -> bool {
        self.prefix == 0
    }
}

impl std::fmt::Display for RouteFacts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.destination {
            Some(d) if self.prefix > 0 => write!(f, "{d}/{}", self.prefix)?,
            _ => f.write_str("default")?,
        }
        if let Some(g) = self.gateway {
            write!(f, " via {g}")?;
        }
        if self.table != 254 {
            write!(f, " table {}", self.table)?;
        }
        Ok(())
    }
}

fn ip(a: &RouteAddress) -> Option<IpAddr> {
    match a {
        RouteAddress::Inet(v4) => Some(IpAddr::V4(*v4)),
        RouteAddress::Inet6(v6) => Some(IpAddr::V6(*v6)),
        _ => None,
    }
}

/// The unicast routes whose output interface is `ifindex`, in every table
/// but `local` (the kernel's own, for the interface's addresses), and
/// without the IPv6 link-local `fe80::/64` every IPv6 interface has.
pub fn via(ifindex: u32) -> Result<Vec<RouteFacts>, Error> {
    let msgs = crate::netlink::query(RouteNetlinkMessage::GetRoute(RouteMessage::default()), true)
        .map_err(|f| match f {
            crate::netlink::Failure::Refused(errno) => Error::Link {
                op: "list the routes of",
                name: format!("interface {ifindex}"),
                errno,
            },
            crate::netlink::Failure::Socket(source) => Error::Socket {
                op: "list",
                object: "routes".into(),
                source,
            },
        })?;
    let mut out = Vec::new();
    for m in msgs {
        let RouteNetlinkMessage::NewRoute(r) = m else {
            continue;
        };
        if r.header.kind != RouteType::Unicast {
            continue;
        }
        let mut oif = None;
        let mut table = u32::from(r.header.table);
        let mut destination = None;
        let mut gateway = None;
        for a in &r.attributes {
            match a {
                RouteAttribute::Oif(i) => oif = Some(*i),
                RouteAttribute::Table(t) => table = *t,
                RouteAttribute::Destination(d) => destination = ip(d),
                RouteAttribute::Gateway(g) => gateway = ip(g),
                _ => {}
            }
        }
        let link_local =
            matches!(destination, Some(IpAddr::V6(v6)) if v6.segments()[0] & 0xffc0 == 0xfe80);
        if oif != Some(ifindex) || table == 255 || link_local {
            continue;
        }
        out.push(RouteFacts {
            destination,
            prefix: r.header.destination_prefix_length,
            gateway,
            table,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_read_as_ip_route_writes_them() {
        let default = RouteFacts {
            destination: None,
            prefix: 0,
            gateway: Some("192.168.77.254".parse().unwrap()),
            table: 254,
        };
        assert!(default.is_default());
        assert_eq!(default.to_string(), "default via 192.168.77.254");
        let net = RouteFacts {
            destination: Some("10.1.0.0".parse().unwrap()),
            prefix: 16,
            gateway: None,
            table: 100,
        };
        assert_eq!(net.to_string(), "10.1.0.0/16 table 100");
        assert!(!net.is_default());
    }
}
