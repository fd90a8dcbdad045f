//! `strong`: lagkit's own policy, a seeded 64-bit hash into 256 buckets.
//!
//! The compatibility policies fail in known ways (see the pathology tests):
//! XORs of raw fields cancel, `mod n` of a port follows its parity, and two
//! stages running the same function on the same fields reuse the same bits
//! (polarization). `strong` avoids all three: every input bit affects every
//! output bit (xxh3), a per-bond seed makes two stages independent, and the
//! 256-bucket [`BucketMap`] keeps membership changes and rebalancing local.
//!
//! Input: the innermost IP flow the parser found (so GRE and IP-in-IP tunnels
//! spread by their inner flows) as addresses, protocol, ports or ICMP echo id,
//! plus the VLAN id; fragments have no ports, so all pieces of a datagram stay
//! together. Without IP: the MAC addresses, EtherType and VLAN id. With
//! `symmetric`, the two endpoints are put in a fixed order before hashing so
//! both directions of a flow pick the same bucket.

use core::net::IpAddr;

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::buckets::BucketMap;
use crate::key::{FlowKey, L4};

/// Options of the `strong` policy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Strong {
    /// The per-bond seed; give two stages different seeds to avoid polarization.
    pub seed: u64,
    /// Both directions of a flow hash identically.
    pub symmetric: bool,
}

fn addr16(a: IpAddr) -> [u8; 16] {
    match a {
        IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
        IpAddr::V6(v6) => v6.octets(),
    }
}

impl Strong {
    /// `strong` with a seed, not symmetric.
    pub const fn new(seed: u64) -> Strong {
        Strong {
            seed,
            symmetric: false,
        }
    }

    /// Sets symmetric mode.
    pub const fn with_symmetric(mut self, symmetric: bool) -> Strong {
        self.symmetric = symmetric;
        self
    }

    /// The 64-bit hash of `key`.
    pub fn hash(&self, key: &FlowKey) -> u64 {
        // Fixed-size stack buffer: tag, proto, addr, port, addr, port, vlan.
        let mut buf = [0u8; 40];
        let vlan = key.vlan_id().unwrap_or(0).to_be_bytes();
        let flow = key.inner.and_then(|i| i.ip).or(key.ip);
        let len = if let Some(ip) = flow {
            let (sp, dp) = match ip.l4 {
                L4::Ports { src, dst } => (src, dst),
                L4::Icmp { id: Some(id), .. } => (id, id),
                _ => (0, 0),
            };
            let mut a = (addr16(ip.src), sp.to_be_bytes());
            let mut b = (addr16(ip.dst), dp.to_be_bytes());
            if self.symmetric && b < a {
                core::mem::swap(&mut a, &mut b);
            }
            buf[0] = 1;
            buf[1] = ip.proto;
            buf[2..18].copy_from_slice(&a.0);
            buf[18..20].copy_from_slice(&a.1);
            buf[20..36].copy_from_slice(&b.0);
            buf[36..38].copy_from_slice(&b.1);
            buf[38..40].copy_from_slice(&vlan);
            40
        } else {
            let (mut a, mut b) = (key.src_mac, key.dst_mac);
            if self.symmetric && b < a {
                core::mem::swap(&mut a, &mut b);
            }
            buf[0] = 2;
            buf[1..7].copy_from_slice(&a);
            buf[7..13].copy_from_slice(&b);
            buf[13..15].copy_from_slice(&key.ethertype.to_be_bytes());
            buf[15..17].copy_from_slice(&vlan);
            17
        };
        xxh3_64_with_seed(&buf[..len], self.seed)
    }

    /// The bucket (low 8 bits of the hash).
    #[inline]
    pub fn bucket(&self, key: &FlowKey) -> u8 {
        self.hash(key) as u8
    }

    /// The member `map` assigns to this key's bucket.
    #[inline]
    pub fn select(&self, key: &FlowKey, map: &BucketMap) -> Option<usize> {
        map.member(self.bucket(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::net::Ipv4Addr;

    fn k(sp: u16, dp: u16) -> FlowKey {
        FlowKey::tcp4(
            Ipv4Addr::new(10, 0, 0, 1),
            sp,
            Ipv4Addr::new(10, 0, 0, 2),
            dp,
        )
    }

    #[test]
    fn deterministic_and_seeded() {
        let s = Strong::new(42);
        assert_eq!(s.hash(&k(1, 2)), s.hash(&k(1, 2)));
        assert_ne!(s.hash(&k(1, 2)), Strong::new(43).hash(&k(1, 2)));
        assert_ne!(s.hash(&k(1, 2)), s.hash(&k(2, 1)));
    }

    #[test]
    fn symmetric_matches_both_directions() {
        let s = Strong::new(7).with_symmetric(true);
        for sp in [1, 80, 443, 50000] {
            let key = k(sp, 8080).with_macs([1; 6], [2; 6]);
            assert_eq!(s.hash(&key), s.hash(&key.reversed()));
            let l2 = FlowKey::l2([1; 6], [9; 6], 0x88b5);
            assert_eq!(s.hash(&l2), s.hash(&l2.reversed()));
        }
    }

    #[test]
    fn fragments_of_one_datagram_agree() {
        let s = Strong::new(1);
        let first = k(1000, 80).as_fragment();
        let later = k(0, 0).as_fragment();
        assert_eq!(s.hash(&first), s.hash(&later));
    }

    #[test]
    fn echo_id_separates_ping_sessions() {
        let s = Strong::new(3);
        let a = FlowKey::echo([10, 0, 0, 1].into(), [10, 0, 0, 2].into(), 1);
        let b = FlowKey::echo([10, 0, 0, 1].into(), [10, 0, 0, 2].into(), 2);
        assert_ne!(s.hash(&a), s.hash(&b));
    }
}
