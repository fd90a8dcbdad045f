//! Every transmit hash policy lagkit knows, in one place.
//!
//! The bond's data plane, the software switch and the planner all decide
//! "which link does this packet take" through this crate, so a prediction
//! made from a config and the path a real packet takes cannot disagree. The
//! shape is: parse a frame (or build a synthetic flow) into a [`FlowKey`]
//! once, then ask a [`Policy`] for a member index. Compatibility policies
//! (Linux, AIX, Cisco, HP) reproduce their systems exactly, flaws included,
//! because the planner must reproduce those flaws to explain them; lagkit's
//! own `strong` policy ([`Strong`]) is the one meant for use, with a
//! [`BucketMap`] for stable membership changes and an optional
//! [`AdaptiveBalancer`] that moves idle buckets by measured load.
//!
//! The per-packet path (`FlowKey::from_frame`, `Policy::select`,
//! `Policy::select_in`, `AdaptiveBalancer::record`) never allocates and never
//! panics; only [`Policy::explain`] builds strings.
//!
//! ```
//! use lagkit_hash::{BucketMap, FlowKey, Policy};
//!
//! let key = FlowKey::tcp4([10, 0, 0, 1].into(), 1234, [10, 0, 0, 2].into(), 80);
//! let linux: Policy = "layer3+4".parse().unwrap();
//! assert_eq!(linux.select(&key, 2), Some(0));
//! assert!(linux.explain(&key, 2).reason.ends_with("0x29a9c0c2 mod 2 = 0"));
//!
//! let strong: Policy = "strong:seed=42".parse().unwrap();
//! let map = BucketMap::new(2).unwrap();
//! assert!(strong.select_in(&key, &map).is_some());
//! ```

#![forbid(unsafe_code)]

pub mod adaptive;
mod aix;
mod buckets;
mod cisco;
mod hp;
mod key;
mod linux;
mod policy;
pub mod samples;
mod strong;

pub use adaptive::{AdaptiveBalancer, AdaptiveConfig, AdaptiveStats};
pub use buckets::{BucketMap, BucketMapError, BUCKETS, MAX_MEMBERS};
pub use cisco::CISCO_BUCKETS;
pub use key::{
    ethertype, flow_key, ip_proto, FlowKey, FlowKeyError, InnerKey, InnerL2, IpFlow, Quoted,
    Tunnel, L4, MAX_TUNNEL_DEPTH, VXLAN_PORT,
};
pub use policy::{Explain, ParsePolicyError, Policy, Vendor};
pub use strong::Strong;

/// Runs arbitrary bytes through everything a packet can reach: the frame
/// parser, every policy (with 0 to 8 members, the count taken from the first
/// byte), `explain`, a bucket map and the adaptive balancer. It panics only if
/// an invariant breaks (a member index out of range, `explain` disagreeing
/// with `select`), which is what a `cargo fuzz` target wants to find.
pub fn fuzz_one(data: &[u8]) {
    let key = FlowKey::from_frame(data);
    let n = usize::from(data.first().copied().unwrap_or(1) % 9);
    let seed = data
        .iter()
        .take(8)
        .fold(0u64, |acc, &b| acc.rotate_left(8) ^ u64::from(b));
    let strongs = [
        Policy::Strong(Strong::new(seed)),
        Policy::Strong(Strong::new(seed).with_symmetric(true)),
    ];
    let mut map =
        BucketMap::new(n).unwrap_or_else(|_| BucketMap::new(1).unwrap_or_else(|e| panic!("{e}")));
    for policy in Policy::COMPAT.into_iter().chain(strongs) {
        let member = policy.select(&key, n);
        assert_eq!(member.is_some(), n > 0, "{policy}: member for n={n}");
        assert!(member.is_none_or(|m| m < n), "{policy}: {member:?} >= {n}");
        let e = policy.explain(&key, n);
        assert_eq!(e.member, member, "{policy}: explain disagrees");
        assert_eq!(e.hash, policy.hash(&key));
        let in_map = policy.select_in(&key, &map);
        assert!(in_map.is_none_or(|m| m < map.members()));
        assert_eq!(policy.explain_in(&key, &map).member, in_map);
    }
    let sym = Strong::new(seed).with_symmetric(true);
    assert_eq!(sym.hash(&key), sym.hash(&key.reversed()), "symmetric");

    if n > 0 {
        let victim = usize::from(data.get(1).copied().unwrap_or(0)) % n;
        if map.remove_member(victim).is_ok() {
            // Back to n members (from an empty map too).
            let _ = map.add_member();
        }
        let mut balancer = AdaptiveBalancer::new(map, AdaptiveConfig::default(), 0);
        for (i, chunk) in data.chunks(3).enumerate() {
            let bucket = chunk[0];
            let bytes = u64::from(chunk.get(1).copied().unwrap_or(0)) << 12;
            balancer.record(bucket, bytes, i as u64 * 1_000_000);
        }
        balancer.rebalance(u64::MAX / 2);
        let members = balancer.map().members();
        assert_eq!(members, n);
        assert!((0..=u8::MAX).all(|b| balancer.map().member(b).is_some_and(|m| m < members)));
    }
}
