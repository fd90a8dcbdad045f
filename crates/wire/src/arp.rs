//! ARP for IPv4 over Ethernet (RFC 826): what a bond needs to probe a
//! target (`arp_ip_target`), to announce itself after a failover
//! (gratuitous ARP), and to read replies.
//!
//! ```text
//!  0 HTYPE = 1 (Ethernet)   2 PTYPE = 0x0800   4 HLEN = 6   5 PLEN = 4
//!  6 OPER (1 request, 2 reply)
//!  8 SHA (6)   14 SPA (4)   18 THA (6)   24 TPA (4)      28 octets
//! ```

use crate::ethernet::{EtherType, EthernetFrame, EthernetRepr, HEADER_LEN};
use crate::{be16, Error, MacAddr, Result};
use std::net::Ipv4Addr;

/// Octets of an Ethernet/IPv4 ARP packet.
pub const PACKET_LEN: usize = 28;

/// ARP operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArpOp {
    /// Request (1).
    Request,
    /// Reply (2).
    Reply,
    /// Any other value.
    Unknown(u16),
}

impl From<u16> for ArpOp {
    fn from(v: u16) -> ArpOp {
        match v {
            1 => ArpOp::Request,
            2 => ArpOp::Reply,
            o => ArpOp::Unknown(o),
        }
    }
}

impl From<ArpOp> for u16 {
    fn from(v: ArpOp) -> u16 {
        match v {
            ArpOp::Request => 1,
            ArpOp::Reply => 2,
            ArpOp::Unknown(o) => o,
        }
    }
}

/// A validated Ethernet/IPv4 ARP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArpRepr {
    /// Operation.
    pub op: ArpOp,
    /// Sender hardware address.
    pub sender_mac: MacAddr,
    /// Sender protocol address.
    pub sender_ip: Ipv4Addr,
    /// Target hardware address.
    pub target_mac: MacAddr,
    /// Target protocol address.
    pub target_ip: Ipv4Addr,
}

fn ip(b: &[u8]) -> Ipv4Addr {
    Ipv4Addr::new(b[0], b[1], b[2], b[3])
}

impl ArpRepr {
    /// Reads an ARP packet (the Ethernet payload). Only Ethernet/IPv4 ARP is
    /// accepted.
    pub fn parse(b: &[u8]) -> Result<ArpRepr> {
        if b.len() < PACKET_LEN {
            return Err(Error::Truncated {
                need: PACKET_LEN,
                got: b.len(),
            });
        }
        if be16(b, 0) != 1 || be16(b, 2) != 0x0800 || b[4] != 6 || b[5] != 4 {
            return Err(Error::BadTlv {
                offset: 0,
                tlv_type: b[4],
                length: b[5],
            });
        }
        Ok(ArpRepr {
            op: be16(b, 6).into(),
            sender_mac: MacAddr::from_slice(&b[8..14]).unwrap_or_default(),
            sender_ip: ip(&b[14..18]),
            target_mac: MacAddr::from_slice(&b[18..24]).unwrap_or_default(),
            target_ip: ip(&b[24..28]),
        })
    }

    /// Reads the ARP packet of a whole Ethernet frame, if it carries one.
    pub fn parse_frame(frame: &[u8]) -> Option<ArpRepr> {
        let eth = EthernetFrame::new_checked(frame).ok()?;
        (eth.ethertype() == EtherType::Arp)
            .then(|| ArpRepr::parse(eth.payload()).ok())
            .flatten()
    }

    /// Writes the packet into `b`.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        if b.len() < PACKET_LEN {
            return Err(Error::Truncated {
                need: PACKET_LEN,
                got: b.len(),
            });
        }
        b[0..2].copy_from_slice(&1u16.to_be_bytes());
        b[2..4].copy_from_slice(&0x0800u16.to_be_bytes());
        b[4] = 6;
        b[5] = 4;
        b[6..8].copy_from_slice(&u16::from(self.op).to_be_bytes());
        b[8..14].copy_from_slice(&self.sender_mac.0);
        b[14..18].copy_from_slice(&self.sender_ip.octets());
        b[18..24].copy_from_slice(&self.target_mac.0);
        b[24..28].copy_from_slice(&self.target_ip.octets());
        Ok(PACKET_LEN)
    }

    /// A whole Ethernet frame (padded to the 60-octet minimum) carrying this
    /// packet from `src` to `dst`.
    pub fn emit_frame(&self, src: MacAddr, dst: MacAddr) -> Vec<u8> {
        let mut f = vec![0u8; 60];
        let eth = EthernetRepr::untagged(dst, src, EtherType::Arp);
        let n = eth.emit(&mut f).unwrap_or(HEADER_LEN);
        let _ = self.emit(&mut f[n..]);
        f
    }

    /// A gratuitous ARP request announcing `ip` at `mac` (sender = target).
    pub fn gratuitous(mac: MacAddr, ip: Ipv4Addr) -> ArpRepr {
        ArpRepr {
            op: ArpOp::Request,
            sender_mac: mac,
            sender_ip: ip,
            target_mac: MacAddr::ZERO,
            target_ip: ip,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Who has 10.0.0.2? Tell 10.0.0.1 (02:00:00:00:00:01), broadcast.
    const REQUEST: [u8; 42] = [
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x06, // Ethernet
        0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, // htype ptype hlen plen op
        0x02, 0, 0, 0, 0, 0x01, 10, 0, 0, 1, // sender
        0, 0, 0, 0, 0, 0, 10, 0, 0, 2, // target
    ];

    #[test]
    fn parse_and_emit_request() {
        let r = ArpRepr::parse_frame(&REQUEST).unwrap();
        assert_eq!(r.op, ArpOp::Request);
        assert_eq!(r.sender_ip, Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(r.target_ip, Ipv4Addr::new(10, 0, 0, 2));
        let f = r.emit_frame(MacAddr([2, 0, 0, 0, 0, 1]), MacAddr::BROADCAST);
        assert_eq!(f.len(), 60);
        assert_eq!(&f[..42], &REQUEST[..]);
        assert!(f[42..].iter().all(|&b| b == 0));
    }

    #[test]
    fn malformed_is_refused() {
        for n in 0..PACKET_LEN {
            assert!(ArpRepr::parse(&REQUEST[14..14 + n]).is_err());
        }
        let mut bad = REQUEST;
        bad[19] = 16; // IPv6-sized protocol address
        assert!(ArpRepr::parse_frame(&bad).is_none());
        let g = ArpRepr::gratuitous(MacAddr([2; 6]), Ipv4Addr::new(1, 2, 3, 4));
        assert_eq!(g.sender_ip, g.target_ip);
    }
}
