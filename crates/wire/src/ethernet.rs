//! Ethernet II headers with up to two 802.1Q / 802.1ad VLAN tags.
//!
//! The view reads the destination, source and the EtherType *after* any VLAN
//! tags, so callers see the protocol they care about whether a frame is tagged
//! or not. Frames with more than two tags are read as far as the second tag;
//! the remaining tag stays in the payload (QinQinQ is not something a bond
//! member carries).

use crate::{be16, Error, MacAddr, Result};

/// Named EtherType values; anything else is kept as `Unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EtherType {
    /// IPv4, 0x0800.
    Ipv4,
    /// ARP, 0x0806.
    Arp,
    /// IEEE 802.1Q customer VLAN tag, 0x8100.
    Vlan,
    /// IPv6, 0x86DD.
    Ipv6,
    /// IEEE 802.3 Slow Protocols (LACP, Marker, OAM), 0x8809.
    SlowProtocols,
    /// IEEE 802.1ad service VLAN tag, 0x88A8.
    QinQ,
    /// Any other value.
    Unknown(u16),
}

impl From<u16> for EtherType {
    fn from(v: u16) -> Self {
        match v {
            0x0800 => EtherType::Ipv4,
            0x0806 => EtherType::Arp,
            0x8100 => EtherType::Vlan,
            0x86dd => EtherType::Ipv6,
            0x8809 => EtherType::SlowProtocols,
            0x88a8 => EtherType::QinQ,
            other => EtherType::Unknown(other),
        }
    }
}

impl From<EtherType> for u16 {
    fn from(v: EtherType) -> u16 {
        match v {
            EtherType::Ipv4 => 0x0800,
            EtherType::Arp => 0x0806,
            EtherType::Vlan => 0x8100,
            EtherType::Ipv6 => 0x86dd,
            EtherType::SlowProtocols => 0x8809,
            EtherType::QinQ => 0x88a8,
            EtherType::Unknown(v) => v,
        }
    }
}

impl EtherType {
    fn is_tag(self) -> bool {
        // 0x9100 is the pre-standard QinQ tag still seen on older switches.
        matches!(
            self,
            EtherType::Vlan | EtherType::QinQ | EtherType::Unknown(0x9100)
        )
    }
}

/// One VLAN tag: the tag protocol identifier and the tag control information.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VlanTag {
    /// Tag protocol identifier (0x8100, 0x88A8 or 0x9100).
    pub tpid: u16,
    /// Priority code point, 0–7.
    pub pcp: u8,
    /// Drop eligible indicator.
    pub dei: bool,
    /// VLAN identifier, 0–4095.
    pub vid: u16,
}

impl VlanTag {
    fn tci(&self) -> u16 {
        (u16::from(self.pcp & 7) << 13) | (u16::from(self.dei) << 12) | (self.vid & 0x0fff)
    }

    fn from_tci(tpid: u16, tci: u16) -> VlanTag {
        VlanTag {
            tpid,
            pcp: (tci >> 13) as u8,
            dei: tci & 0x1000 != 0,
            vid: tci & 0x0fff,
        }
    }
}

mod field {
    use core::ops::Range;
    pub const DST: Range<usize> = 0..6;
    pub const SRC: Range<usize> = 6..12;
    pub const TYPE: Range<usize> = 12..14;
    pub const HEADER_LEN: usize = 14;
    pub const TAG_LEN: usize = 4;
}

/// Length of an untagged Ethernet II header.
pub const HEADER_LEN: usize = field::HEADER_LEN;

/// A zero-copy view of an Ethernet II frame (without FCS).
#[derive(Debug, Clone)]
pub struct EthernetFrame<T: AsRef<[u8]>> {
    buffer: T,
    /// Number of VLAN tags found by `new_checked` (0, 1 or 2).
    tags: usize,
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    /// Wraps a buffer after checking it holds the header and every tag it announces.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let b = buffer.as_ref();
        if b.len() < field::HEADER_LEN {
            return Err(Error::Truncated {
                need: field::HEADER_LEN,
                got: b.len(),
            });
        }
        let mut tags = 0;
        while tags < 2 {
            let at = field::TYPE.start + tags * field::TAG_LEN;
            if !EtherType::from(be16(b, at)).is_tag() {
                break;
            }
            let need = field::HEADER_LEN + (tags + 1) * field::TAG_LEN;
            if b.len() < need {
                return Err(Error::Truncated { need, got: b.len() });
            }
            tags += 1;
        }
        Ok(EthernetFrame { buffer, tags })
    }

    /// Destination address.
    pub fn dst_addr(&self) -> MacAddr {
        MacAddr::from_slice(&self.buffer.as_ref()[field::DST]).unwrap_or_default()
    }

    /// Source address.
    pub fn src_addr(&self) -> MacAddr {
        MacAddr::from_slice(&self.buffer.as_ref()[field::SRC]).unwrap_or_default()
    }

    /// The EtherType after any VLAN tags.
    pub fn ethertype(&self) -> EtherType {
        be16(self.buffer.as_ref(), self.header_len() - 2).into()
    }

    /// The VLAN tags, outermost first.
    pub fn vlan_tags(&self) -> impl Iterator<Item = VlanTag> + '_ {
        let b = self.buffer.as_ref();
        (0..self.tags).map(move |i| {
            let at = field::TYPE.start + i * field::TAG_LEN;
            VlanTag::from_tci(be16(b, at), be16(b, at + 2))
        })
    }

    /// Length of the header including VLAN tags.
    pub fn header_len(&self) -> usize {
        field::HEADER_LEN + self.tags * field::TAG_LEN
    }

    /// The bytes after the header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }

    /// Gives the buffer back.
    pub fn into_inner(self) -> T {
        self.buffer
    }
}

/// A parsed Ethernet header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EthernetRepr {
    /// Destination address.
    pub dst: MacAddr,
    /// Source address.
    pub src: MacAddr,
    /// Outer tag first; `vlan[1]` only if `vlan[0]` is set.
    pub vlan: [Option<VlanTag>; 2],
    /// EtherType after the tags.
    pub ethertype: EtherType,
}

impl EthernetRepr {
    /// An untagged header.
    pub fn untagged(dst: MacAddr, src: MacAddr, ethertype: EtherType) -> EthernetRepr {
        EthernetRepr {
            dst,
            src,
            vlan: [None, None],
            ethertype,
        }
    }

    /// Reads the header of a checked frame.
    pub fn parse<T: AsRef<[u8]>>(frame: &EthernetFrame<T>) -> EthernetRepr {
        let mut vlan = [None, None];
        for (slot, tag) in vlan.iter_mut().zip(frame.vlan_tags()) {
            *slot = Some(tag);
        }
        EthernetRepr {
            dst: frame.dst_addr(),
            src: frame.src_addr(),
            vlan,
            ethertype: frame.ethertype(),
        }
    }

    /// Octets `emit` writes.
    pub fn buffer_len(&self) -> usize {
        field::HEADER_LEN + self.vlan.iter().flatten().count() * field::TAG_LEN
    }

    /// Writes the header into the start of `buf`; returns the octets written.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        if buf.len() < len {
            return Err(Error::Truncated {
                need: len,
                got: buf.len(),
            });
        }
        buf[field::DST].copy_from_slice(&self.dst.0);
        buf[field::SRC].copy_from_slice(&self.src.0);
        let mut at = field::TYPE.start;
        for tag in self.vlan.iter().flatten() {
            buf[at..at + 2].copy_from_slice(&tag.tpid.to_be_bytes());
            buf[at + 2..at + 4].copy_from_slice(&tag.tci().to_be_bytes());
            at += field::TAG_LEN;
        }
        buf[at..at + 2].copy_from_slice(&u16::from(self.ethertype).to_be_bytes());
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // An untagged ARP request header: ff..ff <- 02:00:00:00:00:01, 0x0806.
    const UNTAGGED: [u8; 16] = [
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0xaa,
        0xbb,
    ];

    // QinQ: S-tag 0x88a8 vid 100 pcp 5, C-tag 0x8100 vid 42 dei, then IPv4.
    const QINQ: [u8; 23] = [
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x88, 0xa8, 0xa0,
        0x64, 0x81, 0x00, 0x10, 0x2a, 0x08, 0x00, 0x45,
    ];

    #[test]
    fn parse_untagged() {
        let f = EthernetFrame::new_checked(&UNTAGGED[..]).unwrap();
        assert_eq!(f.dst_addr(), MacAddr::BROADCAST);
        assert_eq!(f.src_addr(), MacAddr([2, 0, 0, 0, 0, 1]));
        assert_eq!(f.ethertype(), EtherType::Arp);
        assert_eq!(f.header_len(), 14);
        assert_eq!(f.payload(), &[0xaa, 0xbb]);
    }

    #[test]
    fn parse_and_emit_qinq() {
        let f = EthernetFrame::new_checked(&QINQ[..]).unwrap();
        let r = EthernetRepr::parse(&f);
        assert_eq!(r.ethertype, EtherType::Ipv4);
        let s = r.vlan[0].unwrap();
        assert_eq!((s.tpid, s.pcp, s.dei, s.vid), (0x88a8, 5, false, 100));
        let c = r.vlan[1].unwrap();
        assert_eq!((c.tpid, c.pcp, c.dei, c.vid), (0x8100, 0, true, 42));
        assert_eq!(f.payload(), &[0x45]);
        let mut out = [0u8; 22];
        assert_eq!(r.emit(&mut out), Ok(22));
        assert_eq!(&out[..], &QINQ[..22]);
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        for n in 0..QINQ.len() {
            let r = EthernetFrame::new_checked(&QINQ[..n]);
            if n < 22 {
                assert!(matches!(r, Err(Error::Truncated { .. })), "len {n}");
            } else {
                assert!(r.is_ok());
            }
        }
    }

    #[test]
    fn emit_into_short_buffer_fails() {
        let r = EthernetRepr::untagged(MacAddr::ZERO, MacAddr::ZERO, EtherType::Ipv6);
        assert!(r.emit(&mut [0u8; 13]).is_err());
    }

    #[test]
    fn ethertype_roundtrip() {
        for v in [0x0800u16, 0x0806, 0x8100, 0x86dd, 0x8809, 0x88a8, 0x1234] {
            assert_eq!(u16::from(EtherType::from(v)), v);
        }
    }
}
