//! Wire formats lagkit reads and writes, in the smoltcp style.
//!
//! Each format is two things: a zero-copy *view* over a byte buffer
//! (`EthernetFrame`, `Lacpdu`, `MarkerPdu`) whose accessors never panic once
//! `new_checked` has accepted the buffer, and a validated *representation*
//! (`EthernetRepr`, `LacpduRepr`, `MarkerRepr`) with `parse`, `buffer_len` and
//! `emit`. Unknown numeric values are kept rather than rejected where the
//! standard asks receivers to be lenient.
//!
//! LACPDU, Marker and PAgP formats are hand-written: no maintained crate implements
//! the IEEE 802.1AX slow-protocol PDUs or Cisco's PAgP, and the layouts are small.
//! Ethernet/802.1Q are hand-written too because the control plane needs to
//! *emit* into caller buffers, which `etherparse`'s read-only slices do not do;
//! the data plane's hashing uses `etherparse` for IP and L4.

#![forbid(unsafe_code)]

mod addr;
pub mod arp;
pub mod ethernet;
pub mod lacp;
pub mod marker;
pub mod pagp;
pub mod slow;

pub use addr::{MacAddr, SystemId};
pub use arp::{ArpOp, ArpRepr};
pub use ethernet::{EtherType, EthernetFrame, EthernetRepr, VlanTag};
pub use lacp::{Lacpdu, LacpduRepr, PortInfo, PortState};
pub use marker::{MarkerKind, MarkerPdu, MarkerRepr};
pub use pagp::{PagpFrameError, PagpPdu, PagpRepr};
pub use slow::{SlowPdu, SlowProtocolError};

/// Why a buffer could not be read as the format asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// The buffer is shorter than the format requires.
    Truncated {
        /// Octets the format needs.
        need: usize,
        /// Octets that were there.
        got: usize,
    },
    /// A TLV has a type or length the format does not allow at that place.
    BadTlv {
        /// Offset of the TLV from the start of the PDU.
        offset: usize,
        /// The TLV type found.
        tlv_type: u8,
        /// The TLV length found.
        length: u8,
    },
    /// A TLV with 16-bit type and length (PAgP) that is shorter than its
    /// header or has a length its type does not allow.
    BadTlvLength {
        /// Offset of the TLV from the start of the PDU.
        offset: usize,
        /// The TLV type found.
        tlv_type: u16,
        /// The TLV length found.
        length: u16,
    },
    /// The slow-protocols subtype is not the one this format carries.
    BadSubtype(u8),
    /// The version number is one no standard defines (0).
    BadVersion(u8),
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Error::Truncated { need, got } => {
                write!(f, "truncated: need {need} octets, got {got}")
            }
            Error::BadTlv {
                offset,
                tlv_type,
                length,
            } => write!(
                f,
                "bad TLV at offset {offset}: type {tlv_type} length {length}"
            ),
            Error::BadTlvLength {
                offset,
                tlv_type,
                length,
            } => write!(
                f,
                "bad TLV at offset {offset}: type {tlv_type} length {length}"
            ),
            Error::BadSubtype(s) => write!(f, "unexpected slow-protocols subtype {s}"),
            Error::BadVersion(v) => write!(f, "invalid version {v}"),
        }
    }
}

impl std::error::Error for Error {}

/// Result of reading a wire format.
pub type Result<T> = core::result::Result<T, Error>;

/// Reads a big-endian u16 at `at`; callers have checked the length.
pub(crate) fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// Reads a big-endian u32 at `at`; callers have checked the length.
pub(crate) fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
