//! An interface address with its prefix length (`10.0.0.1/24`,
//! `fd00::1/64`): what `ip addr add` takes, and what `address` holds.

use core::fmt;
use core::str::FromStr;
use std::net::IpAddr;

use serde::{Serialize, Serializer};

use crate::error::CidrProblem;

/// An IPv4 or IPv6 address with a prefix length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cidr {
    /// The address itself (host bits kept: it is the bond's own address).
    pub addr: IpAddr,
    /// Prefix length: 0..=32 for IPv4, 0..=128 for IPv6.
    pub prefix: u8,
}

impl FromStr for Cidr {
    type Err = CidrProblem;

    /// Parses `ADDRESS/PREFIX`; refuses unspecified, multicast and broadcast
    /// addresses, which cannot be an interface's own.
    fn from_str(s: &str) -> Result<Cidr, CidrProblem> {
        let s = s.trim();
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let addr: IpAddr = addr.trim().parse().map_err(|_| CidrProblem::Syntax)?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix: u8 = match prefix {
            None => return Err(CidrProblem::NoPrefix),
            Some(p) => {
                let p = p.trim();
                if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(CidrProblem::Syntax);
                }
                p.parse::<u32>()
                    .ok()
                    .filter(|p| *p <= u32::from(max))
                    .and_then(|p| u8::try_from(p).ok())
                    .ok_or(CidrProblem::PrefixTooLong { max })?
            }
        };
        if addr.is_unspecified() {
            return Err(CidrProblem::Unspecified);
        }
        let broadcast = matches!(addr, IpAddr::V4(v4) if v4.is_broadcast());
        if addr.is_multicast() || broadcast {
            return Err(CidrProblem::NotUnicast);
        }
        Ok(Cidr { addr, prefix })
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

impl Serialize for Cidr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_families_and_round_trips() {
        for s in ["10.0.0.1/24", "fd00::1/64", "192.0.2.7/32", "2001:db8::/0"] {
            let c: Cidr = s.parse().unwrap();
            assert_eq!(c.to_string(), s);
        }
        assert_eq!(
            " 10.0.0.1 / 8 ".parse::<Cidr>().unwrap().to_string(),
            "10.0.0.1/8"
        );
    }

    #[test]
    fn refuses_what_cannot_be_an_interface_address() {
        let bad = |s: &str, p: CidrProblem| assert_eq!(s.parse::<Cidr>(), Err(p), "{s}");
        bad("10.0.0.1", CidrProblem::NoPrefix);
        bad("10.0.0.1/33", CidrProblem::PrefixTooLong { max: 32 });
        bad("fd00::1/129", CidrProblem::PrefixTooLong { max: 128 });
        bad(
            "10.0.0.1/999999999999",
            CidrProblem::PrefixTooLong { max: 32 },
        );
        bad("10.0.0.1/", CidrProblem::Syntax);
        bad("10.0.0.1/-1", CidrProblem::Syntax);
        bad("10.0.0/24", CidrProblem::Syntax);
        bad("0.0.0.0/0", CidrProblem::Unspecified);
        bad("::/0", CidrProblem::Unspecified);
        bad("224.0.0.1/4", CidrProblem::NotUnicast);
        bad("255.255.255.255/32", CidrProblem::NotUnicast);
        bad("ff02::1/64", CidrProblem::NotUnicast);
    }
}
