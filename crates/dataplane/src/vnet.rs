//! The virtio-net header (`struct virtio_net_hdr`, 10 bytes) that the TAP
//! (`IFF_VNET_HDR`) and AF_PACKET (`PACKET_VNET_HDR`) put in front of every
//! frame.
//!
//! Why it matters: this header is how the kernel hands a userspace data path
//! a 64 KB TCP segment that is not yet cut into MTU frames (GSO) and a
//! checksum it has not yet computed (`NEEDS_CSUM`, the checksum field holds
//! only the pseudo-header sum). Passing it through unchanged from TAP to
//! member and back keeps the kernel's offloads intact end to end; dropping it
//! costs ~10x CPU and breaks TCP (see the lab recipes). Both the TAP and
//! AF_PACKET use the same layout, so a buffer read from one can be written to
//! the other as is.
//!
//! Layout (virtio 1.0 "legacy" header; little-endian on the little-endian
//! hosts lagkit supports, which is also what `TUNSETVNETLE` selects):
//!
//! ```text
//! 0      flags        u8   NEEDS_CSUM=1, DATA_VALID=2, RSC_INFO=4
//! 1      gso_type     u8   NONE=0, TCPV4=1, UDP=3, TCPV6=4, UDP_L4=5, | ECN=0x80
//! 2..4   hdr_len      u16  length of the headers to copy into each segment
//! 4..6   gso_size     u16  payload bytes per segment (MSS)
//! 6..8   csum_start   u16  where checksumming starts, from the frame start
//! 8..10  csum_offset  u16  where the checksum goes, from csum_start
//! ```
//!
//! As in smoltcp's `wire` module, [`VnetHeader`] is a zero-copy view whose
//! accessors cannot panic once [`VnetHeader::new_checked`] accepted the
//! buffer, and [`VnetRepr`] is the parsed form with `parse` / `emit`.
//! [`complete_checksum`] is the software fallback for a destination that
//! cannot take a partial checksum.

use core::fmt;

#[cfg(target_endian = "big")]
compile_error!(
    "lagkit's data path assumes the little-endian virtio-net header of x86/arm64 hosts; \
     big-endian hosts would need TUNSETVNETBE and native-endian PACKET_VNET_HDR handling"
);

/// Length of the virtio-net header in bytes.
pub const HEADER_LEN: usize = 10;

mod field {
    use core::ops::Range;
    pub const FLAGS: usize = 0;
    pub const GSO_TYPE: usize = 1;
    pub const HDR_LEN: Range<usize> = 2..4;
    pub const GSO_SIZE: Range<usize> = 4..6;
    pub const CSUM_START: Range<usize> = 6..8;
    pub const CSUM_OFFSET: Range<usize> = 8..10;
    pub const PAYLOAD: usize = 10;
}

/// Why a buffer could not be read or completed as a virtio-net frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VnetError {
    /// The buffer is shorter than the 10-byte header.
    #[error("buffer of {got} bytes is shorter than the {HEADER_LEN}-byte virtio-net header")]
    Truncated {
        /// Bytes that were there.
        got: usize,
    },
    /// `csum_start + csum_offset + 2` lies beyond the end of the frame.
    #[error("checksum at {start}+{offset} lies outside a {frame_len}-byte frame")]
    ChecksumOutOfBounds {
        /// `csum_start` from the header.
        start: u16,
        /// `csum_offset` from the header.
        offset: u16,
        /// Length of the Ethernet frame.
        frame_len: usize,
    },
    /// The frame is a GSO super-frame: it must be segmented, not just checksummed.
    #[error("frame is a GSO super-frame ({0}); completing its checksum needs segmentation first")]
    Segmentation(GsoType),
}

/// The `flags` byte. Unknown bits are kept so a header passes through unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct VnetFlags(pub u8);

impl VnetFlags {
    /// `VIRTIO_NET_HDR_F_NEEDS_CSUM`: the checksum at `csum_start + csum_offset` is partial.
    pub const NEEDS_CSUM: u8 = 1;
    /// `VIRTIO_NET_HDR_F_DATA_VALID`: the checksum was already verified.
    pub const DATA_VALID: u8 = 2;
    /// `VIRTIO_NET_HDR_F_RSC_INFO`: receive-side coalescing info (not used on TAP/AF_PACKET).
    pub const RSC_INFO: u8 = 4;

    /// True if the checksum is partial and must be completed by someone.
    pub const fn needs_csum(self) -> bool {
        self.0 & Self::NEEDS_CSUM != 0
    }
    /// True if the sender vouches that the checksum is already correct.
    pub const fn data_valid(self) -> bool {
        self.0 & Self::DATA_VALID != 0
    }
}

/// The `gso_type` byte without its ECN bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GsoType {
    /// `VIRTIO_NET_HDR_GSO_NONE`: an ordinary frame.
    #[default]
    None,
    /// `VIRTIO_NET_HDR_GSO_TCPV4`.
    TcpV4,
    /// `VIRTIO_NET_HDR_GSO_UDP` (UFO, IP fragmentation).
    Udp,
    /// `VIRTIO_NET_HDR_GSO_TCPV6`.
    TcpV6,
    /// `VIRTIO_NET_HDR_GSO_UDP_L4` (USO).
    UdpL4,
    /// A value this code does not know; passed through as is.
    Unknown(u8),
}

impl GsoType {
    /// The ECN bit ORed into `gso_type` (`VIRTIO_NET_HDR_GSO_ECN`).
    pub const ECN_BIT: u8 = 0x80;

    /// Decodes the low seven bits of `gso_type`.
    pub const fn from_raw(raw: u8) -> GsoType {
        match raw & !Self::ECN_BIT {
            0 => GsoType::None,
            1 => GsoType::TcpV4,
            3 => GsoType::Udp,
            4 => GsoType::TcpV6,
            5 => GsoType::UdpL4,
            n => GsoType::Unknown(n),
        }
    }

    /// The wire value (without the ECN bit).
    pub const fn to_raw(self) -> u8 {
        match self {
            GsoType::None => 0,
            GsoType::TcpV4 => 1,
            GsoType::Udp => 3,
            GsoType::TcpV6 => 4,
            GsoType::UdpL4 => 5,
            GsoType::Unknown(n) => n & !Self::ECN_BIT,
        }
    }
}

impl fmt::Display for GsoType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GsoType::None => f.write_str("none"),
            GsoType::TcpV4 => f.write_str("tcpv4"),
            GsoType::Udp => f.write_str("udp"),
            GsoType::TcpV6 => f.write_str("tcpv6"),
            GsoType::UdpL4 => f.write_str("udp_l4"),
            GsoType::Unknown(n) => write!(f, "unknown({n})"),
        }
    }
}

/// A zero-copy view of a buffer that starts with a virtio-net header; the
/// Ethernet frame follows it ([`VnetHeader::payload`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VnetHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> VnetHeader<T> {
    /// Wraps a buffer without checking its length; accessors may panic if it is short.
    pub const fn new_unchecked(buffer: T) -> Self {
        VnetHeader { buffer }
    }

    /// Wraps a buffer after checking it holds at least the header.
    pub fn new_checked(buffer: T) -> Result<Self, VnetError> {
        let hdr = Self::new_unchecked(buffer);
        hdr.check_len()?;
        Ok(hdr)
    }

    /// Checks that the buffer holds at least [`HEADER_LEN`] bytes.
    pub fn check_len(&self) -> Result<(), VnetError> {
        let got = self.buffer.as_ref().len();
        if got < HEADER_LEN {
            Err(VnetError::Truncated { got })
        } else {
            Ok(())
        }
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn u16_at(&self, r: core::ops::Range<usize>) -> u16 {
        let b = &self.buffer.as_ref()[r];
        u16::from_le_bytes([b[0], b[1]])
    }

    /// The `flags` byte.
    pub fn flags(&self) -> VnetFlags {
        VnetFlags(self.buffer.as_ref()[field::FLAGS])
    }
    /// The raw `gso_type` byte, ECN bit included.
    pub fn gso_type_raw(&self) -> u8 {
        self.buffer.as_ref()[field::GSO_TYPE]
    }
    /// The GSO type without the ECN bit.
    pub fn gso_type(&self) -> GsoType {
        GsoType::from_raw(self.gso_type_raw())
    }
    /// True if the ECN bit of `gso_type` is set.
    pub fn gso_ecn(&self) -> bool {
        self.gso_type_raw() & GsoType::ECN_BIT != 0
    }
    /// `hdr_len`.
    pub fn hdr_len(&self) -> u16 {
        self.u16_at(field::HDR_LEN)
    }
    /// `gso_size`.
    pub fn gso_size(&self) -> u16 {
        self.u16_at(field::GSO_SIZE)
    }
    /// `csum_start`.
    pub fn csum_start(&self) -> u16 {
        self.u16_at(field::CSUM_START)
    }
    /// `csum_offset`.
    pub fn csum_offset(&self) -> u16 {
        self.u16_at(field::CSUM_OFFSET)
    }
    /// How many frames `frame` (the Ethernet frame this header precedes)
    /// becomes on the wire: 1 for an ordinary frame; for a GSO super-frame,
    /// its payload over `gso_size`, the headers found from `csum_start`
    /// (where the transport header begins: GSO frames always need their
    /// checksum) and the TCP data offset or UDP's 8 bytes. `hdr_len` is not
    /// used: the kernel may report the whole linear part there. A header
    /// that does not fit the frame counts the frame over `gso_size` alone.
    pub fn segments(&self, frame: &[u8]) -> u32 {
        let size = usize::from(self.gso_size());
        if !self.is_gso() || size == 0 {
            return 1;
        }
        let l4 = usize::from(self.csum_start());
        let l4_len = match self.gso_type() {
            GsoType::TcpV4 | GsoType::TcpV6 => frame.get(l4 + 12).map(|b| usize::from(b >> 4) * 4),
            GsoType::Udp | GsoType::UdpL4 => Some(8),
            _ => None,
        };
        let headers = l4_len
            .map(|n| l4 + n)
            .filter(|&h| h >= 14 && h <= frame.len())
            .unwrap_or(0);
        let n = (frame.len() - headers).div_ceil(size);
        u32::try_from(n).unwrap_or(u32::MAX).max(1)
    }

    /// True if this is a GSO super-frame (`gso_type` other than NONE).
    pub fn is_gso(&self) -> bool {
        self.gso_type() != GsoType::None
    }
    /// The Ethernet frame after the header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> VnetHeader<T> {
    fn set_u16_at(&mut self, r: core::ops::Range<usize>, v: u16) {
        self.buffer.as_mut()[r].copy_from_slice(&v.to_le_bytes());
    }
    /// Sets the `flags` byte.
    pub fn set_flags(&mut self, flags: VnetFlags) {
        self.buffer.as_mut()[field::FLAGS] = flags.0;
    }
    /// Sets the raw `gso_type` byte (ECN bit included).
    pub fn set_gso_type_raw(&mut self, raw: u8) {
        self.buffer.as_mut()[field::GSO_TYPE] = raw;
    }
    /// Sets `hdr_len`.
    pub fn set_hdr_len(&mut self, v: u16) {
        self.set_u16_at(field::HDR_LEN, v)
    }
    /// Sets `gso_size`.
    pub fn set_gso_size(&mut self, v: u16) {
        self.set_u16_at(field::GSO_SIZE, v)
    }
    /// Sets `csum_start`.
    pub fn set_csum_start(&mut self, v: u16) {
        self.set_u16_at(field::CSUM_START, v)
    }
    /// Sets `csum_offset`.
    pub fn set_csum_offset(&mut self, v: u16) {
        self.set_u16_at(field::CSUM_OFFSET, v)
    }
    /// The Ethernet frame after the header, mutable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD..]
    }
}

/// The parsed contents of a virtio-net header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct VnetRepr {
    /// The `flags` byte.
    pub flags: VnetFlags,
    /// The GSO type.
    pub gso_type: GsoType,
    /// The ECN bit of `gso_type` (the segments carry CWR only in the first).
    pub gso_ecn: bool,
    /// `hdr_len`: bytes of headers (Ethernet to L4) to repeat in each segment.
    pub hdr_len: u16,
    /// `gso_size`: payload bytes per segment.
    pub gso_size: u16,
    /// `csum_start`: offset from the frame start where checksumming starts.
    pub csum_start: u16,
    /// `csum_offset`: offset from `csum_start` where the checksum is stored.
    pub csum_offset: u16,
}

impl VnetRepr {
    /// The header of a plain frame whose checksums are complete: all zeros.
    pub const PLAIN: VnetRepr = VnetRepr {
        flags: VnetFlags(0),
        gso_type: GsoType::None,
        gso_ecn: false,
        hdr_len: 0,
        gso_size: 0,
        csum_start: 0,
        csum_offset: 0,
    };

    /// Reads a header. Only the length is checked: unknown flag bits and GSO
    /// types are kept so that the header can be passed on unchanged.
    pub fn parse<T: AsRef<[u8]>>(hdr: &VnetHeader<T>) -> Result<VnetRepr, VnetError> {
        hdr.check_len()?;
        Ok(VnetRepr {
            flags: hdr.flags(),
            gso_type: hdr.gso_type(),
            gso_ecn: hdr.gso_ecn(),
            hdr_len: hdr.hdr_len(),
            gso_size: hdr.gso_size(),
            csum_start: hdr.csum_start(),
            csum_offset: hdr.csum_offset(),
        })
    }

    /// Bytes [`VnetRepr::emit`] writes.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header into the first [`HEADER_LEN`] bytes of `hdr`.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        hdr: &mut VnetHeader<T>,
    ) -> Result<(), VnetError> {
        hdr.check_len()?;
        hdr.set_flags(self.flags);
        let ecn = if self.gso_ecn { GsoType::ECN_BIT } else { 0 };
        hdr.set_gso_type_raw(self.gso_type.to_raw() | ecn);
        hdr.set_hdr_len(self.hdr_len);
        hdr.set_gso_size(self.gso_size);
        hdr.set_csum_start(self.csum_start);
        hdr.set_csum_offset(self.csum_offset);
        Ok(())
    }

    /// The header as its 10 wire bytes.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        // Cannot fail: the array is exactly HEADER_LEN long.
        let _ = self.emit(&mut VnetHeader::new_unchecked(&mut b[..]));
        b
    }

    /// True if this describes a GSO super-frame.
    pub fn is_gso(&self) -> bool {
        self.gso_type != GsoType::None
    }

    /// Checks that a partial checksum's location lies inside a frame of `frame_len` bytes.
    pub fn check_checksum_bounds(&self, frame_len: usize) -> Result<(), VnetError> {
        if !self.flags.needs_csum() {
            return Ok(());
        }
        let end = self.csum_start as usize + self.csum_offset as usize + 2;
        if end > frame_len {
            return Err(VnetError::ChecksumOutOfBounds {
                start: self.csum_start,
                offset: self.csum_offset,
                frame_len,
            });
        }
        Ok(())
    }
}

/// Finishes a partial checksum in software, as the kernel's
/// `skb_checksum_help` does: the 16-bit field at `csum_start + csum_offset`
/// holds the pseudo-header sum; the one's-complement sum from `csum_start` to
/// the end of the frame (field included) is folded, inverted and stored
/// (0 becomes 0xffff, which UDP requires and TCP accepts).
///
/// `frame` is the Ethernet frame without the virtio-net header. Does nothing
/// unless `hdr` has `NEEDS_CSUM`. After success the caller should send the
/// frame with `NEEDS_CSUM` cleared (e.g. [`VnetRepr::PLAIN`]). GSO frames are
/// refused: each segment needs its own checksum.
pub fn complete_checksum(frame: &mut [u8], hdr: &VnetRepr) -> Result<(), VnetError> {
    if !hdr.flags.needs_csum() {
        return Ok(());
    }
    if hdr.is_gso() {
        return Err(VnetError::Segmentation(hdr.gso_type));
    }
    hdr.check_checksum_bounds(frame.len())?;
    let start = hdr.csum_start as usize;
    let at = start + hdr.csum_offset as usize;
    let sum = fold(ones_sum(&frame[start..], 0));
    let csum = match !sum {
        0 => 0xffff,
        c => c,
    };
    frame[at..at + 2].copy_from_slice(&csum.to_be_bytes());
    Ok(())
}

/// Completes the checksum of a buffer that starts with a virtio-net header
/// and clears `NEEDS_CSUM` in that header. Returns whether it changed anything.
pub fn complete_checksum_in_place(packet: &mut [u8]) -> Result<bool, VnetError> {
    let mut view = VnetHeader::new_checked(&mut *packet)?;
    let mut repr = VnetRepr::parse(&view)?;
    if !repr.flags.needs_csum() {
        return Ok(false);
    }
    complete_checksum(view.payload_mut(), &repr)?;
    repr.flags.0 &= !VnetFlags::NEEDS_CSUM;
    repr.csum_start = 0;
    repr.csum_offset = 0;
    repr.emit(&mut view)?;
    Ok(true)
}

/// One's-complement sum of big-endian 16-bit words (odd tail padded with
/// zero), accumulated in 64 bits; `fold` reduces it to 16.
fn ones_sum(data: &[u8], init: u64) -> u64 {
    let mut acc = init;
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        acc += u64::from(u32::from_be_bytes([c[0], c[1], c[2], c[3]]));
    }
    let rest = chunks.remainder();
    let mut i = 0;
    while i + 1 < rest.len() {
        acc += u64::from(u16::from_be_bytes([rest[i], rest[i + 1]]));
        i += 2;
    }
    if i < rest.len() {
        acc += u64::from(rest[i]) << 8;
    }
    acc
}

fn fold(mut acc: u64) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    // A header the kernel wrote for a TSO'd IPv4/TCP frame read from a TAP:
    // NEEDS_CSUM, TCPV4, hdr_len 66, gso_size 1448, csum_start 34, csum_offset 16.
    const TSO4: [u8; 10] = [0x01, 0x01, 0x42, 0x00, 0xa8, 0x05, 0x22, 0x00, 0x10, 0x00];

    #[test]
    fn parse_tso4() {
        let h = VnetHeader::new_checked(&TSO4[..]).unwrap();
        let r = VnetRepr::parse(&h).unwrap();
        assert!(r.flags.needs_csum());
        assert!(!r.flags.data_valid());
        assert_eq!(r.gso_type, GsoType::TcpV4);
        assert!(!r.gso_ecn);
        assert_eq!(r.hdr_len, 66);
        assert_eq!(r.gso_size, 1448);
        assert_eq!(r.csum_start, 34);
        assert_eq!(r.csum_offset, 16);
        assert!(r.is_gso());
        assert_eq!(r.to_bytes(), TSO4);
    }

    #[test]
    fn segments_of_a_super_frame_count_its_payload_over_the_mss() {
        let h = VnetHeader::new_checked(&TSO4[..]).unwrap();
        // 14 + 20 + 32 (TCP with timestamps: data offset 8) + 10 MSS + 1 byte.
        let mut f = vec![0u8; 66 + 10 * 1448 + 1];
        f[34 + 12] = 8 << 4;
        assert_eq!(h.segments(&f), 11);
        f.truncate(66 + 3 * 1448);
        assert_eq!(h.segments(&f), 3);
        // An ordinary frame is one segment, whatever its size (jumbo).
        let plain = VnetRepr::PLAIN.to_bytes();
        let p = VnetHeader::new_checked(&plain[..]).unwrap();
        assert_eq!(p.segments(&[0u8; 9014]), 1);
        // Headers that do not fit (csum_start past the frame): the whole
        // frame over the MSS, at least one.
        assert_eq!(h.segments(&[0u8; 20]), 1);
        let mut bad = TSO4;
        bad[6] = 0xff;
        let b = VnetHeader::new_checked(&bad[..]).unwrap();
        assert_eq!(b.segments(&vec![0u8; 3 * 1448]), 3);
        // gso_size 0 never divides.
        let mut zero = TSO4;
        zero[4] = 0;
        zero[5] = 0;
        let z = VnetHeader::new_checked(&zero[..]).unwrap();
        assert_eq!(z.segments(&f), 1);
    }

    #[test]
    fn ecn_and_unknown_roundtrip() {
        let bytes = [0x06, 0x84, 1, 2, 3, 4, 5, 6, 7, 8];
        let r = VnetRepr::parse(&VnetHeader::new_unchecked(&bytes[..])).unwrap();
        assert_eq!(r.gso_type, GsoType::TcpV6);
        assert!(r.gso_ecn);
        assert!(r.flags.data_valid());
        assert_eq!(r.flags.0 & VnetFlags::RSC_INFO, VnetFlags::RSC_INFO);
        assert_eq!(r.hdr_len, 0x0201);
        assert_eq!(r.to_bytes(), bytes);

        let odd = [0, 0x7e, 0, 0, 0, 0, 0, 0, 0, 0];
        let r = VnetRepr::parse(&VnetHeader::new_unchecked(&odd[..])).unwrap();
        assert_eq!(r.gso_type, GsoType::Unknown(0x7e));
        assert_eq!(r.to_bytes(), odd);
    }

    #[test]
    fn short_buffers_are_errors_not_panics() {
        for n in 0..HEADER_LEN {
            let b = vec![0xffu8; n];
            assert_eq!(
                VnetHeader::new_checked(&b[..]).unwrap_err(),
                VnetError::Truncated { got: n }
            );
            assert!(VnetRepr::parse(&VnetHeader::new_unchecked(&b[..])).is_err());
            let mut m = b.clone();
            assert!(VnetRepr::PLAIN
                .emit(&mut VnetHeader::new_unchecked(&mut m[..]))
                .is_err());
            assert!(complete_checksum_in_place(&mut m).is_err());
        }
    }

    #[test]
    fn plain_is_zero() {
        assert_eq!(VnetRepr::PLAIN.to_bytes(), [0; 10]);
        assert_eq!(VnetRepr::default(), VnetRepr::PLAIN);
    }

    #[test]
    fn emit_into_view_and_payload() {
        let mut buf = [0u8; 14];
        buf[10..].copy_from_slice(b"abcd");
        let repr = VnetRepr {
            flags: VnetFlags(VnetFlags::NEEDS_CSUM),
            gso_type: GsoType::UdpL4,
            gso_ecn: false,
            hdr_len: 42,
            gso_size: 1472,
            csum_start: 34,
            csum_offset: 6,
        };
        let mut v = VnetHeader::new_checked(&mut buf[..]).unwrap();
        repr.emit(&mut v).unwrap();
        assert_eq!(v.payload(), b"abcd");
        assert_eq!(&buf[..10], &[1, 5, 42, 0, 0xc0, 0x05, 34, 0, 6, 0]);
    }

    #[test]
    fn checksum_bounds() {
        let repr = VnetRepr {
            flags: VnetFlags(VnetFlags::NEEDS_CSUM),
            csum_start: 34,
            csum_offset: 16,
            ..VnetRepr::PLAIN
        };
        let mut short = vec![0u8; 51];
        assert!(matches!(
            complete_checksum(&mut short, &repr),
            Err(VnetError::ChecksumOutOfBounds { frame_len: 51, .. })
        ));
        let mut max = vec![0u8; 10];
        let huge = VnetRepr {
            csum_start: u16::MAX,
            csum_offset: u16::MAX,
            ..repr
        };
        assert!(complete_checksum(&mut max, &huge).is_err());
        let gso = VnetRepr {
            gso_type: GsoType::TcpV4,
            ..repr
        };
        assert_eq!(
            complete_checksum(&mut [0u8; 100], &gso),
            Err(VnetError::Segmentation(GsoType::TcpV4))
        );
        // Without NEEDS_CSUM nothing is touched, whatever the offsets say.
        let mut f = vec![7u8; 4];
        complete_checksum(
            &mut f,
            &VnetRepr {
                flags: VnetFlags(0),
                ..huge
            },
        )
        .unwrap();
        assert_eq!(f, [7; 4]);
    }

    /// Arbitrary bytes never panic: parse, emit and completion either work or say why.
    #[test]
    fn random_buffers_never_panic() {
        let mut x: u64 = 0x1234_5678_9abc_def1;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..20_000 {
            let len = (next() % 160) as usize;
            let mut buf: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            if len > 1 && next() % 2 == 0 {
                buf[0] |= VnetFlags::NEEDS_CSUM;
                buf[1] = 0;
            }
            if let Ok(h) = VnetHeader::new_checked(&buf[..]) {
                let r = VnetRepr::parse(&h).unwrap();
                assert_eq!(r.to_bytes(), buf[..HEADER_LEN]);
                let _ = h.payload();
            }
            let _ = complete_checksum_in_place(&mut buf);
        }
    }

    #[test]
    fn ones_sum_matches_rfc1071_example() {
        // RFC 1071 section 3: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2.
        let d = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(fold(ones_sum(&d, 0)), 0xddf2);
        // Odd length: the tail byte is the high half of a word.
        assert_eq!(fold(ones_sum(&[0x12, 0x34, 0x56], 0)), 0x1234 + 0x5600);
    }

    /// Builds frames with etherparse (which computes the real checksum), then
    /// replaces the checksum by the pseudo-header sum as the kernel leaves it
    /// under CHECKSUM_PARTIAL, and checks the completion restores it.
    #[test]
    fn complete_matches_etherparse_tcp4_udp6() {
        use etherparse::PacketBuilder;

        let payload: Vec<u8> = (0..1001u32).map(|i| (i * 7 + 3) as u8).collect();

        let mut tcp = Vec::new();
        PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .ipv4([10, 77, 0, 1], [10, 77, 0, 2], 64)
            .tcp(40000, 5201, 12345, 65535)
            .ack(777)
            .write(&mut tcp, &payload)
            .unwrap();
        let l4 = 14 + 20;
        let l4_len = (tcp.len() - l4) as u32;
        let pseudo4 = |f: &[u8], proto: u8| {
            let mut s = ones_sum(&f[26..34], 0);
            s += u64::from(proto) + u64::from(l4_len);
            fold(s)
        };
        check_partial(tcp.clone(), l4, 16, pseudo4(&tcp, 6));

        let mut udp = Vec::new();
        PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .ipv6([0xfd; 16], [0xfe; 16], 64)
            .udp(5353, 9999)
            .write(&mut udp, &payload)
            .unwrap();
        let l4 = 14 + 40;
        let len = (udp.len() - l4) as u64;
        let pseudo6 = fold(ones_sum(&udp[22..54], 0) + 17 + len);
        check_partial(udp, l4, 6, pseudo6);
    }

    fn check_partial(mut frame: Vec<u8>, start: usize, offset: usize, pseudo: u16) {
        let at = start + offset;
        let want = [frame[at], frame[at + 1]];
        frame[at..at + 2].copy_from_slice(&pseudo.to_be_bytes());
        let repr = VnetRepr {
            flags: VnetFlags(VnetFlags::NEEDS_CSUM),
            csum_start: start as u16,
            csum_offset: offset as u16,
            ..VnetRepr::PLAIN
        };
        let mut pkt = repr.to_bytes().to_vec();
        pkt.extend_from_slice(&frame);
        assert!(complete_checksum_in_place(&mut pkt).unwrap());
        assert_eq!([pkt[10 + at], pkt[10 + at + 1]], want);
        assert_eq!(&pkt[..10], &[0; 10]);
        assert!(!complete_checksum_in_place(&mut pkt).unwrap());
    }
}
