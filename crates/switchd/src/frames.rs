//! What the daemon does to a packet's bytes between two packet sockets:
//! the MTU a GSO frame is judged by, and a VLAN tag rewritten with the
//! virtio-net header's offsets kept right.
//!
//! A packet socket with `PACKET_VNET_HDR` hands over a GSO frame whole (up
//! to 64 KiB) with the header saying how it will be cut; the wire carries
//! its segments. A switch port's MTU is about the wire, so a GSO frame is
//! judged by its largest segment: the headers before the payload plus
//! `gso_size`. Forwarded, it keeps its header (a veth peer takes it whole,
//! a NIC segments it), but adding or removing an 802.1Q tag moves
//! `csum_start` and `hdr_len`, which count from the frame's start.

use lagkit_dataplane::vnet::{GsoType, VnetHeader, VnetRepr, HEADER_LEN};
use lagkit_switch::VlanId;

const TPID: [u8; 2] = [0x81, 0x00];

/// The 802.1Q VLAN id a frame carries, if tagged.
pub fn tag_of(frame: &[u8]) -> Option<VlanId> {
    (frame.len() >= 18 && frame[12..14] == TPID)
        .then(|| u16::from_be_bytes([frame[14], frame[15]]) & 0x0fff)
}

/// The IP packet length of the largest segment GSO frame `frame` becomes
/// on the wire, or `None` for an ordinary frame (judged by its length).
pub fn segment_payload(vnet: &VnetRepr, frame: &[u8]) -> Option<usize> {
    if !vnet.is_gso() || vnet.gso_size == 0 {
        return None;
    }
    let l2 = if tag_of(frame).is_some() { 18 } else { 14 };
    let whole = frame.len().saturating_sub(l2);
    // The transport header starts at csum_start (GSO frames always carry
    // a partial checksum); its length is TCP's data offset, or UDP's 8.
    let l4 = usize::from(vnet.csum_start);
    let headers = if vnet.flags.needs_csum() && l4 > l2 {
        let l4_len = match vnet.gso_type {
            GsoType::TcpV4 | GsoType::TcpV6 => {
                usize::from(frame.get(l4 + 12).copied().unwrap_or(0x50) >> 4) * 4
            }
            _ => 8,
        };
        l4 - l2 + l4_len
    } else {
        usize::from(vnet.hdr_len).saturating_sub(l2)
    };
    Some((headers + usize::from(vnet.gso_size)).min(whole))
}

/// `packet` (virtio-net header + frame) as it leaves with `tag`: the
/// frame's tag added, replaced or removed, and the header's offsets moved
/// by the bytes that came or went.
pub fn retag(packet: &[u8], tag: Option<VlanId>) -> Vec<u8> {
    let Some(frame) = packet.get(HEADER_LEN..) else {
        return packet.to_vec();
    };
    let out_frame = lagkit_switch::Bridge::frame_for(frame, tag);
    let delta = out_frame.len() as i32 - frame.len() as i32;
    let mut out = Vec::with_capacity(HEADER_LEN + out_frame.len());
    out.extend_from_slice(&packet[..HEADER_LEN]);
    let mut h = VnetHeader::new_unchecked(&mut out[..]);
    let moved = |v: u16| (i32::from(v) + delta).clamp(0, i32::from(u16::MAX)) as u16;
    if h.flags().needs_csum() {
        let v = moved(h.csum_start());
        h.set_csum_start(v);
    }
    if h.hdr_len() != 0 {
        let v = moved(h.hdr_len());
        h.set_hdr_len(v);
    }
    out.extend_from_slice(&out_frame);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use lagkit_dataplane::vnet::VnetFlags;

    /// A GSO TCPv4 frame: Ethernet (tagged or not), 20-byte IP, 32-byte TCP,
    /// `payload` bytes, cut into `mss`-byte segments.
    fn gso(tag: Option<u16>, payload: usize, mss: u16) -> (VnetRepr, Vec<u8>) {
        let mut f = vec![0xff; 6];
        f.extend_from_slice(&[2, 0, 0, 0, 0, 1]);
        if let Some(v) = tag {
            f.extend_from_slice(&[0x81, 0, (v >> 8) as u8, v as u8]);
        }
        f.extend_from_slice(&[0x08, 0x00]);
        let l3 = f.len();
        f.resize(l3 + 20 + 32 + payload, 0);
        f[l3] = 0x45;
        f[l3 + 9] = 6;
        f[l3 + 20 + 12] = 8 << 4;
        let v = VnetRepr {
            flags: VnetFlags(VnetFlags::NEEDS_CSUM),
            gso_type: GsoType::TcpV4,
            hdr_len: (l3 + 52) as u16,
            gso_size: mss,
            csum_start: (l3 + 20) as u16,
            csum_offset: 16,
            ..VnetRepr::PLAIN
        };
        (v, f)
    }

    #[test]
    fn a_gso_frame_is_judged_by_its_segments() {
        let (v, f) = gso(None, 60_000, 1448);
        assert_eq!(segment_payload(&v, &f), Some(20 + 32 + 1448));
        let (v, f) = gso(Some(10), 60_000, 8948);
        assert_eq!(segment_payload(&v, &f), Some(9000));
        // Without a usable csum_start, hdr_len says where the payload starts.
        let (mut v, f) = gso(None, 5000, 1448);
        v.flags = VnetFlags(0);
        assert_eq!(segment_payload(&v, &f), Some(1500));
        assert_eq!(segment_payload(&VnetRepr::PLAIN, &f), None);
    }

    #[test]
    fn retagging_moves_the_offsets_with_the_tag() {
        let (v, f) = gso(None, 100, 1448);
        let mut packet = v.to_bytes().to_vec();
        packet.extend_from_slice(&f);
        let tagged = retag(&packet, Some(129));
        let h = VnetRepr::parse(&VnetHeader::new_unchecked(&tagged[..])).unwrap();
        assert_eq!((h.csum_start, h.hdr_len), (v.csum_start + 4, v.hdr_len + 4));
        assert_eq!(tag_of(&tagged[HEADER_LEN..]), Some(129));
        assert_eq!(retag(&tagged, None), packet, "and back");
        assert_eq!(tag_of(&f), None);
        assert_eq!(retag(&[1, 2], None), [1, 2]);
    }
}
