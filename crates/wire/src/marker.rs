//! Marker and Marker Response PDUs (IEEE 802.1AX-2020 clause 6.5.3).
//!
//! ```text
//!  0 subtype = 2          1 version = 1
//!  2 TLV type (1 Marker Information, 2 Marker Response), length 16:
//!    Requester_Port(2) Requester_System(6) Requester_Transaction_ID(4) Pad(2)
//! 18 TLV 0 Terminator, length 0
//! 20 reserved(90)
//! ```

use crate::{be16, be32, Error, MacAddr, Result};

/// Slow-protocols subtype of the Marker protocol.
pub const SUBTYPE: u8 = 2;
/// Octets of a Marker PDU after the EtherType.
pub const PDU_LEN: usize = 110;

mod field {
    use core::ops::Range;
    pub const SUBTYPE: usize = 0;
    pub const VERSION: usize = 1;
    pub const TLV_TYPE: usize = 2;
    pub const TLV_LEN: usize = 3;
    pub const PORT: Range<usize> = 4..6;
    pub const SYSTEM: Range<usize> = 6..12;
    pub const TRANSACTION: Range<usize> = 12..16;
    pub const TERMINATOR: usize = 18;
    pub const INFO_LEN: u8 = 16;
}

/// Which of the two Marker PDUs this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MarkerKind {
    /// Marker Information (TLV type 1): a request.
    Information,
    /// Marker Response (TLV type 2): the echo.
    Response,
}

/// A zero-copy view of a Marker PDU, starting at the subtype octet.
#[derive(Debug, Clone)]
pub struct MarkerPdu<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> MarkerPdu<T> {
    /// Wraps a buffer after checking length, subtype, version and TLVs.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let b = buffer.as_ref();
        if b.len() >= 2 && b[field::SUBTYPE] != SUBTYPE {
            return Err(Error::BadSubtype(b[field::SUBTYPE]));
        }
        if b.len() >= 2 && b[field::VERSION] == 0 {
            return Err(Error::BadVersion(0));
        }
        if b.len() < PDU_LEN {
            return Err(Error::Truncated {
                need: PDU_LEN,
                got: b.len(),
            });
        }
        let (t, l) = (b[field::TLV_TYPE], b[field::TLV_LEN]);
        if !(t == 1 || t == 2) || l != field::INFO_LEN {
            return Err(Error::BadTlv {
                offset: field::TLV_TYPE,
                tlv_type: t,
                length: l,
            });
        }
        let (t, l) = (b[field::TERMINATOR], b[field::TERMINATOR + 1]);
        if t != 0 || l != 0 {
            return Err(Error::BadTlv {
                offset: field::TERMINATOR,
                tlv_type: t,
                length: l,
            });
        }
        Ok(MarkerPdu { buffer })
    }

    /// Request or response.
    pub fn kind(&self) -> MarkerKind {
        if self.buffer.as_ref()[field::TLV_TYPE] == 1 {
            MarkerKind::Information
        } else {
            MarkerKind::Response
        }
    }

    /// Requester_Port.
    pub fn requester_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::PORT.start)
    }

    /// Requester_System.
    pub fn requester_system(&self) -> MacAddr {
        MacAddr::from_slice(&self.buffer.as_ref()[field::SYSTEM]).unwrap_or_default()
    }

    /// Requester_Transaction_ID.
    pub fn transaction_id(&self) -> u32 {
        be32(self.buffer.as_ref(), field::TRANSACTION.start)
    }
}

/// A validated Marker or Marker Response PDU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MarkerRepr {
    /// Request or response.
    pub kind: MarkerKind,
    /// Requester_Port.
    pub requester_port: u16,
    /// Requester_System.
    pub requester_system: MacAddr,
    /// Requester_Transaction_ID.
    pub transaction_id: u32,
}

impl MarkerRepr {
    /// Reads a Marker PDU starting at the subtype octet.
    pub fn parse(buf: &[u8]) -> Result<MarkerRepr> {
        let p = MarkerPdu::new_checked(buf)?;
        Ok(MarkerRepr {
            kind: p.kind(),
            requester_port: p.requester_port(),
            requester_system: p.requester_system(),
            transaction_id: p.transaction_id(),
        })
    }

    /// The Marker Response a responder sends back (802.1AX-2020 6.5.4.2):
    /// the same requester fields, TLV type 2.
    pub fn response(&self) -> MarkerRepr {
        MarkerRepr {
            kind: MarkerKind::Response,
            ..*self
        }
    }

    /// Octets `emit` writes.
    pub fn buffer_len(&self) -> usize {
        PDU_LEN
    }

    /// Writes the PDU, reserved and pad octets zeroed.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        if buf.len() < PDU_LEN {
            return Err(Error::Truncated {
                need: PDU_LEN,
                got: buf.len(),
            });
        }
        let b = &mut buf[..PDU_LEN];
        b.fill(0);
        b[field::SUBTYPE] = SUBTYPE;
        b[field::VERSION] = 1;
        b[field::TLV_TYPE] = match self.kind {
            MarkerKind::Information => 1,
            MarkerKind::Response => 2,
        };
        b[field::TLV_LEN] = field::INFO_LEN;
        b[field::PORT].copy_from_slice(&self.requester_port.to_be_bytes());
        b[field::SYSTEM].copy_from_slice(&self.requester_system.0);
        b[field::TRANSACTION].copy_from_slice(&self.transaction_id.to_be_bytes());
        Ok(PDU_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request_bytes() -> Vec<u8> {
        let mut v = vec![
            0x02, 0x01, // subtype Marker, version 1
            0x01, 0x10, // Marker Information, length 16
            0x00, 0x07, // requester port 7
            0x02, 0x11, 0x22, 0x33, 0x44, 0x55, // requester system
            0xde, 0xad, 0xbe, 0xef, // transaction id
            0x00, 0x00, // pad
            0x00, 0x00, // terminator
        ];
        v.extend_from_slice(&[0; 90]);
        v
    }

    #[test]
    fn parse_request_and_emit_response() {
        let req = MarkerRepr::parse(&request_bytes()).unwrap();
        assert_eq!(req.kind, MarkerKind::Information);
        assert_eq!(req.requester_port, 7);
        assert_eq!(
            req.requester_system,
            MacAddr([2, 0x11, 0x22, 0x33, 0x44, 0x55])
        );
        assert_eq!(req.transaction_id, 0xdeadbeef);
        let mut out = [0xffu8; PDU_LEN];
        req.response().emit(&mut out).unwrap();
        let mut want = request_bytes();
        want[2] = 0x02;
        assert_eq!(&out[..], &want[..]);
        assert_eq!(MarkerRepr::parse(&out).unwrap().kind, MarkerKind::Response);
    }

    #[test]
    fn malformed_shapes_are_refused() {
        let b = request_bytes();
        for n in 0..PDU_LEN {
            assert!(MarkerRepr::parse(&b[..n]).is_err(), "length {n}");
        }
        for (at, v) in [(0, 1), (1, 0), (2, 3), (3, 15), (18, 1), (19, 2)] {
            let mut x = b.clone();
            x[at] = v;
            assert!(MarkerRepr::parse(&x).is_err(), "octet {at} = {v}");
        }
    }
}
