//! Cisco's Port Aggregation Protocol (PAgP): the Information and Flush PDUs
//! inside their 802.3 length + LLC/SNAP framing.
//!
//! No standard describes PAgP; the layout below is the one Wireshark's
//! `packet-pagp.c` decodes (the reference's "PAgP" section), and every frame
//! lagkit emits is checked against `tshark -O pagp`.
//!
//! Frame (reference: "Sent to 01-00-0C-CC-CC-CC as 802.3 length + LLC/SNAP
//! (DSAP/SSAP 0xAA, control 0x03, OUI 00-00-0C, protocol id 0x0104)"):
//!
//! ```text
//!  0 dst 01:00:0c:cc:cc:cc   6 src   12 length (LLC + SNAP + PDU, <= 1500)
//! 14 AA AA 03 (LLC)         17 00 00 0C 01 04 (SNAP: Cisco OUI, PAgP)
//! 22 the PDU, then padding to 60 octets
//! ```
//!
//! Information PDU (version 1), offsets from the version octet:
//!
//! ```text
//!  0 version = 1       1 flags (0x01 slow hello, 0x02 auto, 0x04 consistent)
//!  2 local device id (6)   8 learn capability   9 port priority
//! 10 sent-port ifindex (4) 14 group capability (4) 18 group ifindex (4)
//! 22..42 the same six fields as last heard from the partner
//! 42 partner count (2)  44 number of TLVs (2)
//! 46 TLVs: type (2) length (2, including the 4-octet header) value
//!    1 device name, 2 port name, 3 agport MAC (length 10)
//! ```
//!
//! Flush PDU (version 2): flags at 1 (lagkit sets 0x01 in a response, see
//! [`FlushRepr::RESPONSE`]), local device id at 2, partner device id at 8,
//! transaction id (4) at 14.
//!
//! Unknown TLVs are kept in the [`InfoRepr`] and re-emitted, so a PDU read and
//! written back is unchanged; a TLV shorter than its own header or running past
//! the PDU is refused. Octets after the announced TLVs are Ethernet padding.

use crate::{be16, be32, Error, MacAddr, Result};
use core::fmt;

/// The PAgP destination address 01-00-0C-CC-CC-CC (shared with CDP, VTP, DTP).
pub const DST: MacAddr = MacAddr([0x01, 0x00, 0x0c, 0xcc, 0xcc, 0xcc]);
/// LLC header: DSAP 0xAA, SSAP 0xAA, control 0x03 (unnumbered information).
pub const LLC: [u8; 3] = [0xaa, 0xaa, 0x03];
/// SNAP header: Cisco OUI 00-00-0C, protocol id 0x0104 (PAgP).
pub const SNAP: [u8; 5] = [0x00, 0x00, 0x0c, 0x01, 0x04];
/// Version octet of an Information PDU.
pub const VERSION_INFO: u8 = 1;
/// Version octet of a Flush PDU.
pub const VERSION_FLUSH: u8 = 2;
/// Octets of an Information PDU before its TLVs.
pub const INFO_FIXED_LEN: usize = 46;
/// Octets of a Flush PDU.
pub const FLUSH_LEN: usize = 18;
/// Octets of the Ethernet + LLC + SNAP headers in front of a PDU.
pub const HEADERS_LEN: usize = 22;
/// Shortest Ethernet frame without FCS; shorter frames are padded.
pub const MIN_FRAME_LEN: usize = 60;

/// Whether `frame` is addressed and framed as PAgP (to [`DST`], an 802.3
/// length, [`LLC`] and [`SNAP`]): the cheap test a data path makes before
/// it hands a frame to the control plane, which parses it in full.
pub fn is_pagp_frame(frame: &[u8]) -> bool {
    frame.len() >= HEADERS_LEN
        && frame[0..6] == DST.0
        && be16(frame, 12) <= 1500
        && frame[14..17] == LLC
        && frame[17..22] == SNAP
}

mod field {
    use core::ops::Range;
    pub const VERSION: usize = 0;
    pub const FLAGS: usize = 1;
    pub const LOCAL: usize = 2;
    pub const PARTNER: usize = 22;
    pub const INFO_LEN: usize = 20;
    pub const PARTNER_COUNT: usize = 42;
    pub const NUM_TLVS: usize = 44;
    pub const TLVS: usize = 46;
    // Inside a 20-octet local/partner block.
    pub const DEVICE_ID: Range<usize> = 0..6;
    pub const LEARN: usize = 6;
    pub const PORT_PRIO: usize = 7;
    pub const IFINDEX: usize = 8;
    pub const GROUP_CAP: usize = 12;
    pub const GROUP_IFINDEX: usize = 16;
    // Flush PDU.
    pub const FLUSH_LOCAL: Range<usize> = 2..8;
    pub const FLUSH_PARTNER: Range<usize> = 8..14;
    pub const TRANSACTION: usize = 14;
    // Frame.
    pub const ETH_LEN: Range<usize> = 12..14;
    pub const LLC: Range<usize> = 14..17;
    pub const SNAP: Range<usize> = 17..22;
}

/// The flags octet of an Information PDU.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags(pub u8);

impl Flags {
    /// The sender hellos every 30 s rather than every 1 s.
    pub const SLOW_HELLO: u8 = 0x01;
    /// The sender is in auto mode (0 = desirable).
    pub const AUTO: u8 = 0x02;
    /// The sender's port state is consistent (settled), not still negotiating.
    pub const CONSISTENT: u8 = 0x04;

    /// True if every bit of `bits` is set.
    pub fn has(self, bits: u8) -> bool {
        self.0 & bits == bits
    }
    /// The flags with `bits` set or cleared.
    pub fn with(self, bits: u8, on: bool) -> Flags {
        Flags(if on { self.0 | bits } else { self.0 & !bits })
    }
}

impl fmt::Debug for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:02x}", self.0)
    }
}

/// How a device learns addresses on a channel (the learn capability octet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LearnMethod {
    /// 1: addresses are learned per physical port, so the partner must send
    /// one source MAC always on the same port (source-based distribution).
    PhysicalPort,
    /// 2: addresses are learned on the aggregate; any distribution works.
    AggregationPort,
    /// Anything else (0 in the partner block before a partner is heard).
    Unknown(u8),
}

impl From<u8> for LearnMethod {
    fn from(v: u8) -> Self {
        match v {
            1 => LearnMethod::PhysicalPort,
            2 => LearnMethod::AggregationPort,
            other => LearnMethod::Unknown(other),
        }
    }
}

impl From<LearnMethod> for u8 {
    fn from(v: LearnMethod) -> u8 {
        match v {
            LearnMethod::PhysicalPort => 1,
            LearnMethod::AggregationPort => 2,
            LearnMethod::Unknown(v) => v,
        }
    }
}

impl Default for LearnMethod {
    fn default() -> Self {
        LearnMethod::Unknown(0)
    }
}

impl fmt::Display for LearnMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LearnMethod::PhysicalPort => write!(f, "physical-port"),
            LearnMethod::AggregationPort => write!(f, "aggregation-port"),
            LearnMethod::Unknown(v) => write!(f, "unknown({v})"),
        }
    }
}

/// One side's block of an Information PDU (20 octets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PortInfo {
    /// Device id (a MAC of the device).
    pub device_id: MacAddr,
    /// Learn capability.
    pub learn: LearnMethod,
    /// Hot-standby port priority (higher is preferred; default 128).
    pub port_priority: u8,
    /// ifindex of the port that sent the PDU.
    pub ifindex: u32,
    /// Group capability: ports that may bundle share it.
    pub group_capability: u32,
    /// ifindex of the channel the port is in (0 when in none).
    pub group_ifindex: u32,
}

impl PortInfo {
    fn read(b: &[u8]) -> PortInfo {
        PortInfo {
            device_id: MacAddr::from_slice(&b[field::DEVICE_ID]).unwrap_or_default(),
            learn: b[field::LEARN].into(),
            port_priority: b[field::PORT_PRIO],
            ifindex: be32(b, field::IFINDEX),
            group_capability: be32(b, field::GROUP_CAP),
            group_ifindex: be32(b, field::GROUP_IFINDEX),
        }
    }

    fn write(&self, b: &mut [u8]) {
        b[field::DEVICE_ID].copy_from_slice(&self.device_id.0);
        b[field::LEARN] = self.learn.into();
        b[field::PORT_PRIO] = self.port_priority;
        b[field::IFINDEX..field::IFINDEX + 4].copy_from_slice(&self.ifindex.to_be_bytes());
        b[field::GROUP_CAP..field::GROUP_CAP + 4]
            .copy_from_slice(&self.group_capability.to_be_bytes());
        b[field::GROUP_IFINDEX..field::GROUP_IFINDEX + 4]
            .copy_from_slice(&self.group_ifindex.to_be_bytes());
    }
}

/// A TLV of an Information PDU.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Tlv {
    /// Type 1: the sender's device name (sysName).
    DeviceName(String),
    /// Type 2: the name of the port that sent the PDU.
    PortName(String),
    /// Type 3: the source MAC the sender uses on frames of this channel.
    AgportMac(MacAddr),
    /// Any other type, kept so it can be re-emitted unchanged.
    Unknown {
        /// The TLV type.
        tlv_type: u16,
        /// The value (without the 4-octet header).
        value: Vec<u8>,
    },
}

impl Tlv {
    const DEVICE_NAME: u16 = 1;
    const PORT_NAME: u16 = 2;
    const AGPORT_MAC: u16 = 3;

    fn value_len(&self) -> usize {
        match self {
            Tlv::DeviceName(s) | Tlv::PortName(s) => s.len(),
            Tlv::AgportMac(_) => 6,
            Tlv::Unknown { value, .. } => value.len(),
        }
    }

    fn tlv_type(&self) -> u16 {
        match self {
            Tlv::DeviceName(_) => Self::DEVICE_NAME,
            Tlv::PortName(_) => Self::PORT_NAME,
            Tlv::AgportMac(_) => Self::AGPORT_MAC,
            Tlv::Unknown { tlv_type, .. } => *tlv_type,
        }
    }

    fn value(&self) -> &[u8] {
        match self {
            Tlv::DeviceName(s) | Tlv::PortName(s) => s.as_bytes(),
            Tlv::AgportMac(m) => &m.0,
            Tlv::Unknown { value, .. } => value,
        }
    }

    fn read(tlv_type: u16, value: &[u8]) -> Tlv {
        let text = || String::from_utf8_lossy(value).into_owned();
        match tlv_type {
            Self::DEVICE_NAME => Tlv::DeviceName(text()),
            Self::PORT_NAME => Tlv::PortName(text()),
            // The view checked that an agport MAC TLV holds exactly 6 octets.
            Self::AGPORT_MAC => Tlv::AgportMac(MacAddr::from_slice(value).unwrap_or_default()),
            t => Tlv::Unknown {
                tlv_type: t,
                value: value.to_vec(),
            },
        }
    }
}

/// A zero-copy view of a PAgP PDU, starting at the version octet.
#[derive(Debug, Clone)]
pub struct PagpPdu<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> PagpPdu<T> {
    /// Wraps a buffer without checks; accessors may then panic on short buffers.
    pub fn new_unchecked(buffer: T) -> Self {
        PagpPdu { buffer }
    }

    /// Wraps a buffer after checking everything the accessors read.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = PagpPdu { buffer };
        p.check()?;
        Ok(p)
    }

    /// Checks the version, the fixed part and (for Information) the TLV chain.
    pub fn check(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        let need = |n: usize| {
            if b.len() < n {
                Err(Error::Truncated {
                    need: n,
                    got: b.len(),
                })
            } else {
                Ok(())
            }
        };
        need(1)?;
        match b[field::VERSION] {
            VERSION_INFO => {
                need(INFO_FIXED_LEN)?;
                self.tlv_spans().try_for_each(|r| r.map(|_| ()))
            }
            VERSION_FLUSH => need(FLUSH_LEN),
            v => Err(Error::BadVersion(v)),
        }
    }

    /// Walks the announced TLVs: (offset of the header, type, value range).
    fn tlv_spans(
        &self,
    ) -> impl Iterator<Item = Result<(usize, u16, core::ops::Range<usize>)>> + '_ {
        let b = self.buffer.as_ref();
        let count = be16(b, field::NUM_TLVS);
        let mut at = field::TLVS;
        let mut failed = false;
        (0..count).map_while(move |_| {
            if failed {
                return None;
            }
            let r = (|| {
                if at + 4 > b.len() {
                    return Err(Error::Truncated {
                        need: at + 4,
                        got: b.len(),
                    });
                }
                let (t, l) = (be16(b, at), be16(b, at + 2));
                let bad = Error::BadTlvLength {
                    offset: at,
                    tlv_type: t,
                    length: l,
                };
                // A TLV shorter than its header would never advance the walk;
                // an agport MAC holds exactly one address.
                if l < 4 || (t == Tlv::AGPORT_MAC && l != 10) {
                    return Err(bad);
                }
                let end = at + usize::from(l);
                if end > b.len() {
                    return Err(Error::Truncated {
                        need: end,
                        got: b.len(),
                    });
                }
                let span = (at, t, at + 4..end);
                at = end;
                Ok(span)
            })();
            failed = r.is_err();
            Some(r)
        })
    }

    /// The version octet (1 = Information, 2 = Flush).
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VERSION]
    }

    /// The flags octet.
    pub fn flags(&self) -> Flags {
        Flags(self.buffer.as_ref()[field::FLAGS])
    }

    /// Information: the sender's own block.
    pub fn local(&self) -> PortInfo {
        PortInfo::read(&self.buffer.as_ref()[field::LOCAL..field::LOCAL + field::INFO_LEN])
    }

    /// Information: what the sender last heard from its partner.
    pub fn partner(&self) -> PortInfo {
        PortInfo::read(&self.buffer.as_ref()[field::PARTNER..field::PARTNER + field::INFO_LEN])
    }

    /// Information: the partner count.
    pub fn partner_count(&self) -> u16 {
        be16(self.buffer.as_ref(), field::PARTNER_COUNT)
    }

    /// Information: the TLVs, in order.
    pub fn tlvs(&self) -> impl Iterator<Item = Tlv> + '_ {
        let b = self.buffer.as_ref();
        self.tlv_spans()
            .filter_map(|r| r.ok())
            .map(move |(_, t, v)| Tlv::read(t, &b[v]))
    }

    /// Flush: the sender's device id.
    pub fn flush_local(&self) -> MacAddr {
        MacAddr::from_slice(&self.buffer.as_ref()[field::FLUSH_LOCAL]).unwrap_or_default()
    }

    /// Flush: the partner's device id.
    pub fn flush_partner(&self) -> MacAddr {
        MacAddr::from_slice(&self.buffer.as_ref()[field::FLUSH_PARTNER]).unwrap_or_default()
    }

    /// Flush: the transaction id.
    pub fn transaction_id(&self) -> u32 {
        be32(self.buffer.as_ref(), field::TRANSACTION)
    }
}

/// A validated Information PDU.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct InfoRepr {
    /// Flags octet.
    pub flags: Flags,
    /// The sender's block.
    pub local: PortInfo,
    /// The sender's view of its partner (all zero before one is heard).
    pub partner: PortInfo,
    /// Partner count: partners heard on this port (0 or 1; more is a mis-cabling).
    pub partner_count: u16,
    /// TLVs, in order, unknown ones included.
    pub tlvs: Vec<Tlv>,
}

impl InfoRepr {
    /// The device name TLV, if present.
    pub fn device_name(&self) -> Option<&str> {
        self.tlvs.iter().find_map(|t| match t {
            Tlv::DeviceName(s) => Some(s.as_str()),
            _ => None,
        })
    }

    /// The port name TLV, if present.
    pub fn port_name(&self) -> Option<&str> {
        self.tlvs.iter().find_map(|t| match t {
            Tlv::PortName(s) => Some(s.as_str()),
            _ => None,
        })
    }

    /// The agport MAC TLV, if present.
    pub fn agport_mac(&self) -> Option<MacAddr> {
        self.tlvs.iter().find_map(|t| match t {
            Tlv::AgportMac(m) => Some(*m),
            _ => None,
        })
    }
}

/// A validated Flush PDU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FlushRepr {
    /// Flags octet (see [`FlushRepr::RESPONSE`]).
    pub flags: u8,
    /// The sender's device id.
    pub local: MacAddr,
    /// The device id of the partner it is addressed to.
    pub partner: MacAddr,
    /// Transaction id, echoed in the response.
    pub transaction_id: u32,
}

impl FlushRepr {
    /// lagkit's convention, not from the reference: a Flush answering another
    /// sets 0x01 so that two ends can never echo one transaction forever.
    pub const RESPONSE: u8 = 0x01;

    /// True if this Flush answers one we sent.
    pub fn is_response(&self) -> bool {
        self.flags & Self::RESPONSE != 0
    }
}

/// A PAgP PDU lagkit understands.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PagpRepr {
    /// An Information PDU (hello).
    Info(InfoRepr),
    /// A Flush PDU.
    Flush(FlushRepr),
}

/// Why a frame is not a PAgP PDU lagkit can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PagpFrameError {
    /// Too short for Ethernet + LLC + SNAP headers.
    Truncated,
    /// Not an 802.3 length frame with PAgP's LLC/SNAP header (CDP, VTP, DTP
    /// share the destination address).
    NotPagp,
    /// The 802.3 length says more octets than the frame holds.
    BadLength(u16),
    /// A PAgP PDU that fails validation.
    BadPdu(Error),
}

impl fmt::Display for PagpFrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PagpFrameError::Truncated => write!(f, "truncated frame"),
            PagpFrameError::NotPagp => write!(f, "not a PAgP frame"),
            PagpFrameError::BadLength(l) => {
                write!(f, "802.3 length {l} is longer than the frame")
            }
            PagpFrameError::BadPdu(e) => write!(f, "malformed PAgP PDU: {e}"),
        }
    }
}

impl std::error::Error for PagpFrameError {}

impl PagpRepr {
    /// Reads a PDU starting at the version octet.
    pub fn parse(buf: &[u8]) -> Result<PagpRepr> {
        let p = PagpPdu::new_checked(buf)?;
        Ok(match p.version() {
            VERSION_INFO => PagpRepr::Info(InfoRepr {
                flags: p.flags(),
                local: p.local(),
                partner: p.partner(),
                partner_count: p.partner_count(),
                tlvs: p.tlvs().collect(),
            }),
            _ => PagpRepr::Flush(FlushRepr {
                flags: p.flags().0,
                local: p.flush_local(),
                partner: p.flush_partner(),
                transaction_id: p.transaction_id(),
            }),
        })
    }

    /// Octets `emit` writes.
    pub fn buffer_len(&self) -> usize {
        match self {
            PagpRepr::Info(i) => {
                INFO_FIXED_LEN + i.tlvs.iter().map(|t| 4 + t.value_len()).sum::<usize>()
            }
            PagpRepr::Flush(_) => FLUSH_LEN,
        }
    }

    /// Writes the PDU into `buf`; refuses a TLV whose value does not fit a
    /// 16-bit length or more TLVs than a 16-bit count.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        if buf.len() < len {
            return Err(Error::Truncated {
                need: len,
                got: buf.len(),
            });
        }
        let b = &mut buf[..len];
        b.fill(0);
        match self {
            PagpRepr::Info(i) => {
                let count = u16::try_from(i.tlvs.len()).map_err(|_| Error::Truncated {
                    need: len,
                    got: usize::from(u16::MAX),
                })?;
                b[field::VERSION] = VERSION_INFO;
                b[field::FLAGS] = i.flags.0;
                i.local
                    .write(&mut b[field::LOCAL..field::LOCAL + field::INFO_LEN]);
                i.partner
                    .write(&mut b[field::PARTNER..field::PARTNER + field::INFO_LEN]);
                b[field::PARTNER_COUNT..field::PARTNER_COUNT + 2]
                    .copy_from_slice(&i.partner_count.to_be_bytes());
                b[field::NUM_TLVS..field::NUM_TLVS + 2].copy_from_slice(&count.to_be_bytes());
                let mut at = field::TLVS;
                for t in &i.tlvs {
                    let l = u16::try_from(4 + t.value_len()).map_err(|_| Error::BadTlvLength {
                        offset: at,
                        tlv_type: t.tlv_type(),
                        length: u16::MAX,
                    })?;
                    b[at..at + 2].copy_from_slice(&t.tlv_type().to_be_bytes());
                    b[at + 2..at + 4].copy_from_slice(&l.to_be_bytes());
                    b[at + 4..at + usize::from(l)].copy_from_slice(t.value());
                    at += usize::from(l);
                }
            }
            PagpRepr::Flush(f) => {
                b[field::VERSION] = VERSION_FLUSH;
                b[field::FLAGS] = f.flags;
                b[field::FLUSH_LOCAL].copy_from_slice(&f.local.0);
                b[field::FLUSH_PARTNER].copy_from_slice(&f.partner.0);
                b[field::TRANSACTION..field::TRANSACTION + 4]
                    .copy_from_slice(&f.transaction_id.to_be_bytes());
            }
        }
        Ok(len)
    }

    /// Reads a whole Ethernet frame (no FCS): 802.3 length, LLC/SNAP, PDU.
    /// Any destination is accepted; the caller decides what it listens to.
    pub fn parse_frame(frame: &[u8]) -> core::result::Result<PagpRepr, PagpFrameError> {
        if frame.len() < HEADERS_LEN {
            return Err(PagpFrameError::Truncated);
        }
        let len = be16(frame, field::ETH_LEN.start);
        // Values above 1500 are EtherTypes, not 802.3 lengths.
        if len > 1500 || frame[field::LLC] != LLC || frame[field::SNAP] != SNAP {
            return Err(PagpFrameError::NotPagp);
        }
        let end = field::ETH_LEN.end + usize::from(len);
        if end < HEADERS_LEN || end > frame.len() {
            return Err(PagpFrameError::BadLength(len));
        }
        PagpRepr::parse(&frame[HEADERS_LEN..end]).map_err(PagpFrameError::BadPdu)
    }

    /// Builds the frame a port with address `src` sends, padded to 60
    /// octets; fails only when `emit` does.
    pub fn emit_frame(&self, src: MacAddr) -> Result<Vec<u8>> {
        let pdu = self.buffer_len();
        let len = LLC.len() + SNAP.len() + pdu;
        let l16 = u16::try_from(len)
            .ok()
            .filter(|l| *l <= 1500)
            .ok_or(Error::Truncated {
                need: len,
                got: 1500,
            })?;
        let mut f = vec![0u8; (HEADERS_LEN + pdu).max(MIN_FRAME_LEN)];
        f[0..6].copy_from_slice(&DST.0);
        f[6..12].copy_from_slice(&src.0);
        f[field::ETH_LEN].copy_from_slice(&l16.to_be_bytes());
        f[field::LLC].copy_from_slice(&LLC);
        f[field::SNAP].copy_from_slice(&SNAP);
        self.emit(&mut f[HEADERS_LEN..])?;
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> InfoRepr {
        InfoRepr {
            flags: Flags(0x05),
            local: PortInfo {
                device_id: MacAddr([0x00, 0x1b, 0x54, 0xaa, 0xbb, 0x00]),
                learn: LearnMethod::AggregationPort,
                port_priority: 128,
                ifindex: 0x0102,
                group_capability: 0x0001_0001,
                group_ifindex: 0x0501,
            },
            partner: PortInfo {
                device_id: MacAddr([0x02, 0, 0, 0, 0, 0x0a]),
                learn: LearnMethod::PhysicalPort,
                port_priority: 200,
                ifindex: 3,
                group_capability: 0x0001_0001,
                group_ifindex: 0,
            },
            partner_count: 1,
            tlvs: vec![
                Tlv::DeviceName("sw1".into()),
                Tlv::PortName("Gi0/1".into()),
                Tlv::AgportMac(MacAddr([0x00, 0x1b, 0x54, 0xaa, 0xbb, 0x01])),
            ],
        }
    }

    // The same PDU written out by hand from the layout in the module docs.
    fn info_bytes() -> Vec<u8> {
        vec![
            0x01, 0x05, // version 1, flags slow hello + consistent
            0x00, 0x1b, 0x54, 0xaa, 0xbb, 0x00, 0x02, 0x80, // device id, learn 2, prio 128
            0x00, 0x00, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, // ifindex 258, group cap
            0x00, 0x00, 0x05, 0x01, // group ifindex 1281
            0x02, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x01, 0xc8, // partner id, learn 1, prio 200
            0x00, 0x00, 0x00, 0x03, 0x00, 0x01, 0x00, 0x01, // ifindex 3, group cap
            0x00, 0x00, 0x00, 0x00, // group ifindex 0
            0x00, 0x01, 0x00, 0x03, // partner count 1, 3 TLVs
            0x00, 0x01, 0x00, 0x07, b's', b'w', b'1', // device name
            0x00, 0x02, 0x00, 0x09, b'G', b'i', b'0', b'/', b'1', // port name
            0x00, 0x03, 0x00, 0x0a, 0x00, 0x1b, 0x54, 0xaa, 0xbb, 0x01, // agport MAC
        ]
    }

    fn flush() -> FlushRepr {
        FlushRepr {
            flags: 0,
            local: MacAddr([2, 0, 0, 0, 0, 1]),
            partner: MacAddr([2, 0, 0, 0, 0, 2]),
            transaction_id: 0xdead_beef,
        }
    }

    fn flush_bytes() -> Vec<u8> {
        vec![
            0x02, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
            0xde, 0xad, 0xbe, 0xef,
        ]
    }

    #[test]
    fn info_emit_and_parse_match_hand_written_bytes() {
        let r = PagpRepr::Info(info());
        assert_eq!(r.buffer_len(), info_bytes().len());
        let mut buf = vec![0xaa; r.buffer_len()];
        assert_eq!(r.emit(&mut buf), Ok(info_bytes().len()));
        assert_eq!(buf, info_bytes());
        assert_eq!(PagpRepr::parse(&info_bytes()), Ok(r));
        let i = info();
        assert_eq!(i.device_name(), Some("sw1"));
        assert_eq!(i.port_name(), Some("Gi0/1"));
        assert_eq!(
            i.agport_mac(),
            Some(MacAddr([0, 0x1b, 0x54, 0xaa, 0xbb, 1]))
        );
    }

    #[test]
    fn flush_emit_and_parse_match_hand_written_bytes() {
        let r = PagpRepr::Flush(flush());
        let mut buf = [0xaa; FLUSH_LEN];
        assert_eq!(r.emit(&mut buf), Ok(FLUSH_LEN));
        assert_eq!(&buf[..], &flush_bytes()[..]);
        assert_eq!(PagpRepr::parse(&flush_bytes()), Ok(r));
        assert!(!flush().is_response());
    }

    #[test]
    fn every_truncation_is_refused() {
        for b in [info_bytes(), flush_bytes()] {
            for n in 0..b.len() {
                assert!(
                    matches!(PagpRepr::parse(&b[..n]), Err(Error::Truncated { .. })),
                    "length {n}"
                );
            }
        }
    }

    #[test]
    fn unknown_versions_are_refused() {
        let mut b = info_bytes();
        for v in [0, 3, 0xff] {
            b[0] = v;
            assert_eq!(PagpRepr::parse(&b), Err(Error::BadVersion(v)));
        }
    }

    #[test]
    fn unknown_tlvs_are_kept_and_bad_ones_refused() {
        let mut b = info_bytes();
        b[45] = 4; // four TLVs
        b.extend_from_slice(&[0x12, 0x34, 0x00, 0x06, 0xbe, 0xef]);
        b.extend_from_slice(&[0; 10]); // Ethernet padding after the TLVs
        let PagpRepr::Info(r) = PagpRepr::parse(&b).unwrap() else {
            panic!("not info")
        };
        assert_eq!(
            r.tlvs[3],
            Tlv::Unknown {
                tlv_type: 0x1234,
                value: vec![0xbe, 0xef]
            }
        );
        // Written back, the unknown TLV is there and the padding is not.
        let again = PagpRepr::Info(r.clone());
        let mut out = vec![0; again.buffer_len()];
        again.emit(&mut out).unwrap();
        assert_eq!(out, b[..b.len() - 10]);
        // A TLV shorter than its header would never advance.
        let mut z = b.clone();
        z[75] = 3;
        assert!(matches!(
            PagpRepr::parse(&z),
            Err(Error::BadTlvLength { length: 3, .. })
        ));
        // An agport MAC TLV of the wrong length.
        let mut m = info_bytes();
        m[64..66].copy_from_slice(&[0x00, 0x0b]);
        m.push(0);
        assert!(matches!(
            PagpRepr::parse(&m),
            Err(Error::BadTlvLength { tlv_type: 3, .. })
        ));
        // More TLVs announced than present.
        let mut more = info_bytes();
        more[45] = 9;
        assert!(matches!(
            PagpRepr::parse(&more),
            Err(Error::Truncated { .. })
        ));
    }

    #[test]
    fn frame_roundtrip_and_framing() {
        let src = MacAddr([0x00, 0x1b, 0x54, 0xaa, 0xbb, 0x01]);
        for r in [PagpRepr::Info(info()), PagpRepr::Flush(flush())] {
            let f = r.emit_frame(src).unwrap();
            assert!(f.len() >= MIN_FRAME_LEN);
            assert_eq!(&f[..6], &[0x01, 0x00, 0x0c, 0xcc, 0xcc, 0xcc]);
            assert_eq!(&f[6..12], &src.0);
            assert_eq!(usize::from(be16(&f, 12)), 8 + r.buffer_len());
            assert_eq!(
                &f[14..22],
                &[0xaa, 0xaa, 0x03, 0x00, 0x00, 0x0c, 0x01, 0x04]
            );
            assert_eq!(PagpRepr::parse_frame(&f), Ok(r));
        }
        let f = PagpRepr::Flush(flush()).emit_frame(src).unwrap();
        // CDP shares the address but not the SNAP protocol id.
        let mut cdp = f.clone();
        cdp[21] = 0x00;
        assert_eq!(PagpRepr::parse_frame(&cdp), Err(PagpFrameError::NotPagp));
        let mut eth2 = f.clone();
        eth2[12..14].copy_from_slice(&[0x88, 0x09]);
        assert_eq!(PagpRepr::parse_frame(&eth2), Err(PagpFrameError::NotPagp));
        assert!(is_pagp_frame(&f));
        let mut unicast = f.clone();
        unicast[0] = 0x02;
        for other in [&cdp, &eth2, &unicast] {
            assert!(!is_pagp_frame(other));
        }
        assert!(!is_pagp_frame(&f[..21]));
        let mut long = f.clone();
        long[12..14].copy_from_slice(&[0x05, 0x00]);
        assert_eq!(
            PagpRepr::parse_frame(&long),
            Err(PagpFrameError::BadLength(0x500))
        );
        let mut short = f.clone();
        short[12..14].copy_from_slice(&[0x00, 0x04]);
        assert!(PagpRepr::parse_frame(&short).is_err());
        assert_eq!(
            PagpRepr::parse_frame(&f[..21]),
            Err(PagpFrameError::Truncated)
        );
    }
}
