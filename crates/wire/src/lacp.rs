//! The LACPDU (IEEE 802.1AX-2020 clause 6.4.2).
//!
//! Layout after the EtherType (110 octets for version 1):
//!
//! ```text
//!  0 subtype = 1          1 version
//!  2 TLV 1 Actor, len 20: sys prio(2) sys MAC(6) key(2) port prio(2) port(2) state(1) reserved(3)
//! 22 TLV 2 Partner, len 20: same layout
//! 42 TLV 3 Collector, len 16: CollectorMaxDelay(2) reserved(12)
//! 58 TLV 0 Terminator, len 0
//! 60 reserved(50)
//! ```
//!
//! Version 2 PDUs (802.1AX-2014 onwards) insert more TLVs between the
//! Collector and the Terminator. Clause 6.4.2.3 asks a receiver to accept
//! higher versions and to ignore TLVs it does not understand, so this parser
//! walks and skips them. Version 0 is not a version any edition defines and is
//! refused. The Actor, Partner and Collector TLVs must carry their own type and
//! length: a PDU whose fixed TLVs are wrong cannot be read at all.

use crate::{be16, Error, MacAddr, Result, SystemId};
use core::fmt;

/// Slow-protocols subtype of LACP.
pub const SUBTYPE: u8 = 1;
/// The version lagkit sends.
pub const VERSION: u8 = 1;
/// Octets of a version 1 LACPDU after the EtherType.
pub const PDU_LEN: usize = 110;

mod field {
    use core::ops::Range;
    pub const SUBTYPE: usize = 0;
    pub const VERSION: usize = 1;
    pub const ACTOR: usize = 2;
    pub const PARTNER: usize = 22;
    pub const COLLECTOR: usize = 42;
    pub const TERMINATOR_V1: usize = 58;
    pub const INFO_TLV_LEN: u8 = 20;
    pub const COLLECTOR_TLV_LEN: u8 = 16;
    // Offsets inside an Actor/Partner Information TLV.
    pub const SYS_PRIO: Range<usize> = 2..4;
    pub const SYS_MAC: Range<usize> = 4..10;
    pub const KEY: Range<usize> = 10..12;
    pub const PORT_PRIO: Range<usize> = 12..14;
    pub const PORT: Range<usize> = 14..16;
    pub const STATE: usize = 16;
    pub const MAX_DELAY: usize = 2;
}

/// The Actor_State / Partner_State octet (802.1AX-2020 6.4.2.3 m).
///
/// Bit 0 is LACP_Activity, bit 7 Expired.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PortState(pub u8);

impl PortState {
    /// LACP_Activity: 1 = Active, 0 = Passive.
    pub const ACTIVITY: u8 = 0x01;
    /// LACP_Timeout: 1 = Short Timeout, 0 = Long Timeout.
    pub const TIMEOUT: u8 = 0x02;
    /// Aggregation: 1 = Aggregatable, 0 = Individual.
    pub const AGGREGATION: u8 = 0x04;
    /// Synchronization: the link is on the right aggregator (IN_SYNC).
    pub const SYNCHRONIZATION: u8 = 0x08;
    /// Collecting is enabled.
    pub const COLLECTING: u8 = 0x10;
    /// Distributing is enabled.
    pub const DISTRIBUTING: u8 = 0x20;
    /// The partner information in use is the administrative default.
    pub const DEFAULTED: u8 = 0x40;
    /// The receive machine is in the EXPIRED state.
    pub const EXPIRED: u8 = 0x80;

    const NAMES: [(u8, &'static str); 8] = [
        (Self::ACTIVITY, "activity"),
        (Self::TIMEOUT, "timeout"),
        (Self::AGGREGATION, "aggregation"),
        (Self::SYNCHRONIZATION, "synchronization"),
        (Self::COLLECTING, "collecting"),
        (Self::DISTRIBUTING, "distributing"),
        (Self::DEFAULTED, "defaulted"),
        (Self::EXPIRED, "expired"),
    ];

    /// True if every bit of `bits` is set.
    pub fn has(self, bits: u8) -> bool {
        self.0 & bits == bits
    }

    /// Sets or clears `bits`.
    pub fn set(&mut self, bits: u8, on: bool) {
        if on {
            self.0 |= bits;
        } else {
            self.0 &= !bits;
        }
    }

    /// The state with `bits` set or cleared.
    pub fn with(mut self, bits: u8, on: bool) -> PortState {
        self.set(bits, on);
        self
    }

    /// LACP_Activity is Active.
    pub fn active(self) -> bool {
        self.has(Self::ACTIVITY)
    }
    /// LACP_Timeout is Short.
    pub fn short_timeout(self) -> bool {
        self.has(Self::TIMEOUT)
    }
    /// Aggregation is Aggregatable.
    pub fn aggregatable(self) -> bool {
        self.has(Self::AGGREGATION)
    }
    /// Synchronization is IN_SYNC.
    pub fn in_sync(self) -> bool {
        self.has(Self::SYNCHRONIZATION)
    }
    /// Collecting.
    pub fn collecting(self) -> bool {
        self.has(Self::COLLECTING)
    }
    /// Distributing.
    pub fn distributing(self) -> bool {
        self.has(Self::DISTRIBUTING)
    }
    /// Defaulted.
    pub fn defaulted(self) -> bool {
        self.has(Self::DEFAULTED)
    }
    /// Expired.
    pub fn expired(self) -> bool {
        self.has(Self::EXPIRED)
    }

    /// The names of the bits that are set, as tshark and /proc/net/bonding spell them.
    pub fn names(self) -> Vec<&'static str> {
        Self::NAMES
            .iter()
            .filter(|(b, _)| self.has(*b))
            .map(|(_, n)| *n)
            .collect()
    }
}

impl fmt::Display for PortState {
    /// `0x3f (A S G Y C D . .)`: one letter per bit, dot when clear.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const LETTERS: [char; 8] = ['A', 'S', 'G', 'Y', 'C', 'D', 'F', 'E'];
        write!(f, "0x{:02x} (", self.0)?;
        for (i, l) in LETTERS.iter().enumerate() {
            if i > 0 {
                write!(f, " ")?;
            }
            let c = if self.0 & (1 << i) != 0 { *l } else { '.' };
            write!(f, "{c}")?;
        }
        write!(f, ")")
    }
}

impl fmt::Debug for PortState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The contents of an Actor or Partner Information TLV.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PortInfo {
    /// System priority and MAC.
    pub system: SystemId,
    /// Operational key.
    pub key: u16,
    /// Port priority.
    pub port_priority: u16,
    /// Port number.
    pub port: u16,
    /// State octet.
    pub state: PortState,
}

impl PortInfo {
    fn read(tlv: &[u8]) -> PortInfo {
        PortInfo {
            system: SystemId::new(
                be16(tlv, field::SYS_PRIO.start),
                MacAddr::from_slice(&tlv[field::SYS_MAC]).unwrap_or_default(),
            ),
            key: be16(tlv, field::KEY.start),
            port_priority: be16(tlv, field::PORT_PRIO.start),
            port: be16(tlv, field::PORT.start),
            state: PortState(tlv[field::STATE]),
        }
    }

    fn write(&self, tlv: &mut [u8]) {
        tlv[field::SYS_PRIO].copy_from_slice(&self.system.priority.to_be_bytes());
        tlv[field::SYS_MAC].copy_from_slice(&self.system.mac.0);
        tlv[field::KEY].copy_from_slice(&self.key.to_be_bytes());
        tlv[field::PORT_PRIO].copy_from_slice(&self.port_priority.to_be_bytes());
        tlv[field::PORT].copy_from_slice(&self.port.to_be_bytes());
        tlv[field::STATE] = self.state.0;
        // The 3 reserved octets stay zero (the caller zeroed the buffer).
    }
}

/// A zero-copy view of a LACPDU, starting at the subtype octet.
#[derive(Debug, Clone)]
pub struct Lacpdu<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Lacpdu<T> {
    /// Wraps a buffer without checks; accessors may then panic on short buffers.
    pub fn new_unchecked(buffer: T) -> Self {
        Lacpdu { buffer }
    }

    /// Wraps a buffer after checking everything the accessors read.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Lacpdu { buffer };
        p.check()?;
        Ok(p)
    }

    /// Checks length, subtype, version and the TLV chain (see the module docs).
    pub fn check(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < 2 {
            return Err(Error::Truncated {
                need: PDU_LEN,
                got: b.len(),
            });
        }
        if b[field::SUBTYPE] != SUBTYPE {
            return Err(Error::BadSubtype(b[field::SUBTYPE]));
        }
        if b[field::VERSION] == 0 {
            return Err(Error::BadVersion(0));
        }
        if b.len() < PDU_LEN {
            return Err(Error::Truncated {
                need: PDU_LEN,
                got: b.len(),
            });
        }
        let expect = |offset: usize, tlv_type: u8, length: u8| -> Result<()> {
            if b[offset] != tlv_type || b[offset + 1] != length {
                return Err(Error::BadTlv {
                    offset,
                    tlv_type: b[offset],
                    length: b[offset + 1],
                });
            }
            Ok(())
        };
        expect(field::ACTOR, 1, field::INFO_TLV_LEN)?;
        expect(field::PARTNER, 2, field::INFO_TLV_LEN)?;
        expect(field::COLLECTOR, 3, field::COLLECTOR_TLV_LEN)?;
        // Walk any further TLVs up to the Terminator. A version 1 PDU has the
        // Terminator right here; later versions may put TLVs before it.
        let mut at = field::TERMINATOR_V1;
        loop {
            if at + 2 > b.len() {
                return Err(Error::Truncated {
                    need: at + 2,
                    got: b.len(),
                });
            }
            let (t, l) = (b[at], b[at + 1]);
            if t == 0 {
                if l != 0 {
                    return Err(Error::BadTlv {
                        offset: at,
                        tlv_type: t,
                        length: l,
                    });
                }
                return Ok(());
            }
            if l < 2 {
                return Err(Error::BadTlv {
                    offset: at,
                    tlv_type: t,
                    length: l,
                });
            }
            at += usize::from(l);
        }
    }

    /// The version number.
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VERSION]
    }

    /// The Actor Information TLV.
    pub fn actor(&self) -> PortInfo {
        PortInfo::read(&self.buffer.as_ref()[field::ACTOR..field::PARTNER])
    }

    /// The Partner Information TLV.
    pub fn partner(&self) -> PortInfo {
        PortInfo::read(&self.buffer.as_ref()[field::PARTNER..field::COLLECTOR])
    }

    /// CollectorMaxDelay, in tens of microseconds.
    pub fn collector_max_delay(&self) -> u16 {
        be16(self.buffer.as_ref(), field::COLLECTOR + field::MAX_DELAY)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Lacpdu<T> {
    /// Sets the Actor Information TLV contents.
    pub fn set_actor(&mut self, info: &PortInfo) {
        info.write(&mut self.buffer.as_mut()[field::ACTOR..field::PARTNER]);
    }

    /// Sets the Partner Information TLV contents.
    pub fn set_partner(&mut self, info: &PortInfo) {
        info.write(&mut self.buffer.as_mut()[field::PARTNER..field::COLLECTOR]);
    }
}

/// A validated LACPDU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LacpduRepr {
    /// Version number as received (lagkit sends 1).
    pub version: u8,
    /// The sender's own parameters.
    pub actor: PortInfo,
    /// What the sender believes about us.
    pub partner: PortInfo,
    /// CollectorMaxDelay, in tens of microseconds.
    pub collector_max_delay: u16,
}

impl LacpduRepr {
    /// Reads a LACPDU starting at the subtype octet.
    pub fn parse(buf: &[u8]) -> Result<LacpduRepr> {
        let p = Lacpdu::new_checked(buf)?;
        Ok(LacpduRepr {
            version: p.version(),
            actor: p.actor(),
            partner: p.partner(),
            collector_max_delay: p.collector_max_delay(),
        })
    }

    /// Octets `emit` writes (a version 1 PDU is always 110).
    pub fn buffer_len(&self) -> usize {
        PDU_LEN
    }

    /// Writes a version 1 LACPDU, reserved octets zeroed, into `buf`.
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
        b[field::VERSION] = VERSION;
        b[field::ACTOR] = 1;
        b[field::ACTOR + 1] = field::INFO_TLV_LEN;
        b[field::PARTNER] = 2;
        b[field::PARTNER + 1] = field::INFO_TLV_LEN;
        b[field::COLLECTOR] = 3;
        b[field::COLLECTOR + 1] = field::COLLECTOR_TLV_LEN;
        let at = field::COLLECTOR + field::MAX_DELAY;
        b[at..at + 2].copy_from_slice(&self.collector_max_delay.to_be_bytes());
        // Terminator TLV (type 0, length 0) and the 50 reserved octets are zero.
        let mut p = Lacpdu::new_unchecked(b);
        p.set_actor(&self.actor);
        p.set_partner(&self.partner);
        Ok(PDU_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> LacpduRepr {
        LacpduRepr {
            version: 1,
            actor: PortInfo {
                system: SystemId::new(0x8000, MacAddr([0x02, 0, 0, 0, 0, 0x0a])),
                key: 0x0011,
                port_priority: 0x00ff,
                port: 3,
                state: PortState(0x3d),
            },
            partner: PortInfo {
                system: SystemId::new(0xfffe, MacAddr([0x52, 0x54, 0, 0x12, 0x34, 0x56])),
                key: 1,
                port_priority: 0x8000,
                port: 0x0102,
                state: PortState(0x3f),
            },
            collector_max_delay: 5,
        }
    }

    // The same PDU written out by hand, octet by octet, from the layout in the
    // module docs.
    fn sample_bytes() -> Vec<u8> {
        let mut v = vec![
            0x01, 0x01, // subtype LACP, version 1
            0x01, 0x14, // Actor TLV, length 20
            0x80, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a, // prio 32768, MAC
            0x00, 0x11, 0x00, 0xff, 0x00, 0x03, // key 17, port prio 255, port 3
            0x3d, 0x00, 0x00, 0x00, // state, reserved
            0x02, 0x14, // Partner TLV, length 20
            0xff, 0xfe, 0x52, 0x54, 0x00, 0x12, 0x34, 0x56, // prio 65534, MAC
            0x00, 0x01, 0x80, 0x00, 0x01, 0x02, // key 1, port prio 32768, port 258
            0x3f, 0x00, 0x00, 0x00, // state, reserved
            0x03, 0x10, 0x00, 0x05, // Collector TLV, length 16, max delay 5
        ];
        v.extend_from_slice(&[0; 12]); // collector reserved
        v.extend_from_slice(&[0x00, 0x00]); // terminator
        v.extend_from_slice(&[0; 50]); // reserved
        v
    }

    #[test]
    fn emit_matches_hand_written_bytes() {
        let mut buf = [0xaau8; PDU_LEN];
        assert_eq!(sample().emit(&mut buf), Ok(PDU_LEN));
        assert_eq!(&buf[..], &sample_bytes()[..]);
    }

    #[test]
    fn parse_hand_written_bytes() {
        assert_eq!(LacpduRepr::parse(&sample_bytes()), Ok(sample()));
    }

    #[test]
    fn every_truncation_is_refused() {
        let b = sample_bytes();
        for n in 0..PDU_LEN {
            assert!(
                matches!(LacpduRepr::parse(&b[..n]), Err(Error::Truncated { .. })),
                "length {n}"
            );
        }
    }

    #[test]
    fn wrong_subtype_and_version_zero_are_refused() {
        let mut b = sample_bytes();
        b[0] = 2;
        assert_eq!(LacpduRepr::parse(&b), Err(Error::BadSubtype(2)));
        let mut b = sample_bytes();
        b[1] = 0;
        assert_eq!(LacpduRepr::parse(&b), Err(Error::BadVersion(0)));
    }

    #[test]
    fn bad_fixed_tlvs_are_refused() {
        for (at, value) in [
            (2, 9),
            (3, 19),
            (22, 1),
            (23, 21),
            (42, 4),
            (43, 15),
            (59, 1),
        ] {
            let mut b = sample_bytes();
            b[at] = value;
            assert!(
                matches!(LacpduRepr::parse(&b), Err(Error::BadTlv { .. })),
                "octet {at} = {value}"
            );
        }
    }

    #[test]
    fn version_2_tlvs_are_skipped() {
        // A version 2 PDU with a Port Algorithm TLV (type 4, length 6) before
        // the Terminator, and an unknown TLV (type 0x77, length 4).
        let mut b = sample_bytes();
        b[1] = 2;
        let extra = [0x04, 0x06, 0x00, 0x80, 0xc2, 0x01, 0x77, 0x04, 0xde, 0xad];
        b.splice(58..58, extra);
        let r = LacpduRepr::parse(&b).unwrap();
        assert_eq!(r.version, 2);
        assert_eq!(r.actor, sample().actor);
        // A zero-length TLV would loop forever; it is refused.
        let mut z = b.clone();
        z[59] = 0;
        assert!(matches!(LacpduRepr::parse(&z), Err(Error::BadTlv { .. })));
        // A TLV running past the end is truncation.
        let mut long = b.clone();
        long.truncate(110);
        long[59] = 200;
        assert!(matches!(
            LacpduRepr::parse(&long),
            Err(Error::Truncated { .. })
        ));
    }

    #[test]
    fn higher_versions_are_accepted() {
        let mut b = sample_bytes();
        b[1] = 0xff;
        assert_eq!(LacpduRepr::parse(&b).unwrap().version, 0xff);
    }

    #[test]
    fn state_display() {
        assert_eq!(PortState(0x3f).to_string(), "0x3f (A S G Y C D . .)");
        assert_eq!(
            PortState(0x45).names(),
            ["activity", "aggregation", "defaulted"]
        );
    }
}
