//! Slow Protocols frames (IEEE 802.3 Annex 57A): the Ethernet layer of LACP
//! and Marker.
//!
//! `SlowPdu::parse` takes a whole Ethernet frame and says which PDU it holds,
//! and `SlowPdu::emit_frame` builds the whole frame a port sends. Slow protocol
//! frames are never tagged; a tagged one is refused.

use crate::ethernet::{EtherType, EthernetFrame, EthernetRepr, HEADER_LEN};
use crate::{lacp, marker, Error, LacpduRepr, MacAddr, MarkerRepr};
use core::fmt;

/// Octets of a LACP or Marker frame without FCS: 14 + 110.
pub const FRAME_LEN: usize = HEADER_LEN + lacp::PDU_LEN;

/// A slow-protocol PDU lagkit understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlowPdu {
    /// A LACPDU.
    Lacp(LacpduRepr),
    /// A Marker or Marker Response PDU.
    Marker(MarkerRepr),
}

/// Why a frame is not a slow-protocol PDU lagkit can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlowProtocolError {
    /// Not EtherType 0x8809 (or VLAN-tagged).
    NotSlowProtocols,
    /// A slow protocol other than LACP and Marker (e.g. OAM, subtype 3).
    UnknownSubtype(u8),
    /// A LACPDU that fails validation.
    BadLacpdu(Error),
    /// A Marker PDU that fails validation.
    BadMarker(Error),
    /// Too short to hold an Ethernet header and subtype.
    Truncated,
}

impl fmt::Display for SlowProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SlowProtocolError::NotSlowProtocols => write!(f, "not a slow-protocols frame"),
            SlowProtocolError::UnknownSubtype(s) => write!(f, "unknown slow-protocols subtype {s}"),
            SlowProtocolError::BadLacpdu(e) => write!(f, "malformed LACPDU: {e}"),
            SlowProtocolError::BadMarker(e) => write!(f, "malformed Marker PDU: {e}"),
            SlowProtocolError::Truncated => write!(f, "truncated frame"),
        }
    }
}

impl std::error::Error for SlowProtocolError {}

impl SlowPdu {
    /// Reads a whole Ethernet frame (no FCS).
    pub fn parse(frame: &[u8]) -> Result<SlowPdu, SlowProtocolError> {
        let eth = EthernetFrame::new_checked(frame).map_err(|_| SlowProtocolError::Truncated)?;
        if eth.header_len() != HEADER_LEN || eth.ethertype() != EtherType::SlowProtocols {
            return Err(SlowProtocolError::NotSlowProtocols);
        }
        let payload = eth.payload();
        match payload.first() {
            None => Err(SlowProtocolError::Truncated),
            Some(&lacp::SUBTYPE) => LacpduRepr::parse(payload)
                .map(SlowPdu::Lacp)
                .map_err(SlowProtocolError::BadLacpdu),
            Some(&marker::SUBTYPE) => MarkerRepr::parse(payload)
                .map(SlowPdu::Marker)
                .map_err(SlowProtocolError::BadMarker),
            Some(&other) => Err(SlowProtocolError::UnknownSubtype(other)),
        }
    }

    /// Builds the 124-octet frame a port with address `src` sends.
    pub fn emit_frame(&self, src: MacAddr) -> Vec<u8> {
        let mut frame = vec![0u8; FRAME_LEN];
        let eth = EthernetRepr::untagged(MacAddr::SLOW_PROTOCOLS, src, EtherType::SlowProtocols);
        // Both emits write into a buffer sized for them, so they cannot fail.
        let n = eth.emit(&mut frame).unwrap_or(HEADER_LEN);
        let _ = match self {
            SlowPdu::Lacp(r) => r.emit(&mut frame[n..]),
            SlowPdu::Marker(r) => r.emit(&mut frame[n..]),
        };
        frame
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MarkerKind, PortInfo, PortState, SystemId};

    #[test]
    fn lacp_frame_roundtrip() {
        let pdu = SlowPdu::Lacp(LacpduRepr {
            version: 1,
            actor: PortInfo {
                system: SystemId::new(32768, MacAddr([2, 0, 0, 0, 0, 1])),
                key: 9,
                port_priority: 32768,
                port: 1,
                state: PortState(0x47),
            },
            partner: PortInfo::default(),
            collector_max_delay: 0,
        });
        let f = pdu.emit_frame(MacAddr([2, 0, 0, 0, 0, 0x11]));
        assert_eq!(f.len(), 124);
        assert_eq!(&f[..6], &[0x01, 0x80, 0xc2, 0x00, 0x00, 0x02]);
        assert_eq!(&f[12..16], &[0x88, 0x09, 0x01, 0x01]);
        assert_eq!(SlowPdu::parse(&f), Ok(pdu));
    }

    #[test]
    fn marker_frame_roundtrip() {
        let pdu = SlowPdu::Marker(MarkerRepr {
            kind: MarkerKind::Information,
            requester_port: 2,
            requester_system: MacAddr([2, 0, 0, 0, 0, 1]),
            transaction_id: 77,
        });
        let f = pdu.emit_frame(MacAddr([2, 0, 0, 0, 0, 0x11]));
        assert_eq!(SlowPdu::parse(&f), Ok(pdu));
    }

    #[test]
    fn other_frames_are_classified() {
        let mut f = vec![0u8; 60];
        f[12] = 0x88;
        f[13] = 0x09;
        f[14] = 3; // OAM
        assert_eq!(
            SlowPdu::parse(&f),
            Err(SlowProtocolError::UnknownSubtype(3))
        );
        f[13] = 0x00;
        assert_eq!(SlowPdu::parse(&f), Err(SlowProtocolError::NotSlowProtocols));
        assert_eq!(SlowPdu::parse(&f[..10]), Err(SlowProtocolError::Truncated));
        let mut f = vec![0u8; 14];
        f[12] = 0x88;
        f[13] = 0x09;
        assert_eq!(SlowPdu::parse(&f), Err(SlowProtocolError::Truncated));
    }
}
