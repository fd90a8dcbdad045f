//! Which link each flow takes, and what the links then carry.

use crate::fair;
use crate::flow::{Dir, Flow};
use crate::platform::Platform;
use lagkit_hash::{BucketMap, Policy, Strong, BUCKETS};
use lagkit_switch::{Channel, Distribution};
use serde::Serialize;
use std::fmt;

/// How one end spreads its traffic over the links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spread {
    /// A transmit hash policy (802.3ad, balance-xor, a switch's
    /// load-balance method): each flow on the link the policy picks.
    Hash(Policy),
    /// lagkit's `adaptive` (and balance-tlb/alb's transmit side): the strong
    /// hash's 256 buckets placed on the links by their load, largest first
    /// onto the least-loaded link, as the rebalancer converges to.
    Adaptive(Strong),
    /// balance-rr: every flow's packets in turn over every link. Even
    /// shares, at the price of reordering within each flow.
    RoundRobin,
    /// active-backup: everything on one link.
    Single,
    /// What balance-alb receives: each peer sends to the member the bond's
    /// ARP replies gave it, by the peer's IPv4 address, exactly as the
    /// bond assigns them ([`lagkit_bondcore::plan::tlb::alb_member_for`]);
    /// a peer without IPv4 sends to the active member (the first link).
    AlbPeers,
}

/// Why a name is no way of spreading ([`Spread::parse`]): not a mode and
/// not a transmit hash policy.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}; or a mode: balance-rr, active-backup, adaptive")]
pub struct ParseSpreadError(pub lagkit_hash::ParsePolicyError);

/// The strong hash lagkit uses by default (the bond's own default seed).
pub const DEFAULT_STRONG: Strong = Strong {
    seed: 0x6c61_676b_6974,
    symmetric: false,
};

impl Spread {
    /// Parses `balance-rr`/`round-robin`, `active-backup`, `adaptive`, or
    /// any transmit hash policy name `lagkit_hash` accepts.
    pub fn parse(s: &str) -> Result<Spread, ParseSpreadError> {
        match s {
            "rr" | "balance-rr" | "round-robin" | "round_robin" => Ok(Spread::RoundRobin),
            "active-backup" | "single" => Ok(Spread::Single),
            "adaptive" | "balance-tlb" | "balance-alb" => Ok(Spread::Adaptive(DEFAULT_STRONG)),
            _ => s
                .parse::<Policy>()
                .map(Spread::Hash)
                .map_err(ParseSpreadError),
        }
    }

    /// Every way of spreading the planner compares: each compatibility
    /// policy, `strong`, `adaptive` and round-robin.
    pub fn candidates() -> Vec<Spread> {
        let mut v: Vec<Spread> = Policy::COMPAT.iter().copied().map(Spread::Hash).collect();
        v.push(Spread::Hash(Policy::Strong(DEFAULT_STRONG)));
        v.push(Spread::Adaptive(DEFAULT_STRONG));
        v.push(Spread::RoundRobin);
        v
    }

    /// Whether the name is one a Cisco switch's `port-channel load-balance`
    /// offers.
    pub fn is_cisco(&self) -> bool {
        matches!(self, Spread::Hash(p) if p.vendor() == lagkit_hash::Vendor::Cisco)
    }
}

impl fmt::Display for Spread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Spread::Hash(Policy::Strong(s)) if *s == DEFAULT_STRONG => f.write_str("strong"),
            Spread::Hash(p) => write!(f, "{p}"),
            Spread::Adaptive(_) => f.write_str("adaptive"),
            Spread::RoundRobin => f.write_str("balance-rr"),
            Spread::Single => f.write_str("active-backup"),
            Spread::AlbPeers => f.write_str("balance-alb peers"),
        }
    }
}

/// One end of the aggregated link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EndConfig {
    /// How it spreads.
    pub spread: Spread,
    /// Usable links.
    pub links: usize,
    /// Each link's rate, bit/s.
    pub rate_bps: f64,
}

/// What one link carries in one direction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkLoad {
    /// Link number, from 1 (as `show etherchannel` and the lab count).
    pub link: usize,
    /// Flows on it (a round-robin flow counts on every link).
    pub flows: usize,
    /// Bytes on it.
    pub bytes: u64,
    /// Its share of the direction's bytes.
    pub share: f64,
    /// Predicted rate, bit/s.
    pub throughput_bps: f64,
}

/// The prediction for one direction under one configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prediction {
    /// Which direction.
    pub dir: Dir,
    /// The spreading, as a name.
    pub spread: String,
    /// Per link.
    pub links: Vec<LinkLoad>,
    /// Flows in this direction.
    pub flows: usize,
    /// Bytes in this direction.
    pub bytes: u64,
    /// Predicted total, bit/s: max-min fair sharing of each link when the
    /// flows have rates; when they have only volumes, all bytes over the
    /// time the busiest link needs for its share.
    pub throughput_bps: f64,
    /// Links × rate, bit/s.
    pub capacity_bps: f64,
    /// `throughput_bps / capacity_bps`.
    pub of_capacity: f64,
    /// The most the flows could get from these links if they were spread
    /// perfectly (each flow still on one link, except under round-robin).
    pub ideal_bps: f64,
    /// `throughput_bps / ideal_bps` (1 when there is nothing to carry).
    pub of_ideal: f64,
    /// Share of bytes on the first link: the seeds' balance ratio (0.50 is
    /// even on 2 links).
    pub first_link_share: f64,
    /// Busiest link's bytes over the mean.
    pub max_over_mean: f64,
}

/// Which link a flow takes under one end's spreading: a pure function of
/// the flow once made (for `adaptive`, after the buckets are placed by the
/// load of the flows it was made from).
#[derive(Clone, Debug)]
pub struct Chooser {
    dir: Dir,
    spread: Spread,
    links: usize,
    /// adaptive: bucket -> link.
    table: Option<Box<[usize; BUCKETS]>>,
    /// strong: the bond's bucket map.
    map: Option<BucketMap>,
    /// A Cisco method: the channel of lagkit's switch, its 8 buckets dealt
    /// over the links as the switch deals them.
    channel: Option<Channel>,
}

/// What [`Chooser::link`] answers for a round-robin flow: every link.
pub const EVERY_LINK: usize = usize::MAX;

impl Chooser {
    /// The chooser for the flows of `dir` spread by `end`.
    pub fn new(flows: &[Flow], dir: Dir, end: &EndConfig) -> Chooser {
        let table = match end.spread {
            Spread::Adaptive(s) if end.links > 0 => {
                let p = Policy::Strong(s);
                let mut load = [0u64; BUCKETS];
                for f in flows.iter().filter(|f| f.dir == dir) {
                    if let Some(b) = p.bucket(&f.key) {
                        load[usize::from(b)] = load[usize::from(b)].saturating_add(f.weight());
                    }
                }
                Some(Box::new(place_buckets(&load, end.links)))
            }
            _ => None,
        };
        // A lagkit bond's strong buckets sit where its members' joining
        // put them (BucketMap::grown), not at bucket mod n.
        let map = match end.spread {
            Spread::Hash(Policy::Strong(_)) => BucketMap::grown(end.links).ok(),
            _ => None,
        };
        // A switch's Cisco method: the 8 buckets over the links as lagkit's
        // switch holds them once every member has bundled.
        let channel = match end.spread {
            Spread::Hash(p) if p.vendor() == lagkit_hash::Vendor::Cisco && end.links > 0 => {
                Some(Channel::all_bundled(end.links, Distribution::Fixed))
            }
            _ => None,
        };
        Chooser {
            dir,
            spread: end.spread,
            links: end.links,
            table,
            map,
            channel,
        }
    }

    /// The link `f` takes; `None` for a flow of the other direction (or no
    /// links), [`EVERY_LINK`] for a round-robin flow.
    pub fn link(&self, f: &Flow) -> Option<usize> {
        if f.dir != self.dir || self.links == 0 {
            return None;
        }
        match self.spread {
            Spread::Hash(p) => match (&self.map, &self.channel) {
                (Some(m), _) => p.select_in(&f.key, m),
                (None, Some(c)) => c.member_for(&p, &f.key).map(|m| m.0),
                (None, None) => p.select(&f.key, self.links),
            },
            Spread::Single => Some(0),
            Spread::AlbPeers => {
                let peer = match f.key.ip.map(|ip| ip.src) {
                    Some(std::net::IpAddr::V4(a)) => a,
                    _ => return Some(0),
                };
                let usable: Vec<usize> = (0..self.links).collect();
                lagkit_bondcore::plan::tlb::alb_member_for(peer, &usable)
            }
            Spread::RoundRobin => Some(EVERY_LINK),
            Spread::Adaptive(s) => {
                let b = Policy::Strong(s).bucket(&f.key)?;
                self.table.as_ref().map(|t| t[usize::from(b)])
            }
        }
    }
}

/// The link each flow takes ([`Chooser::link`] for every flow).
pub fn assign(flows: &[Flow], dir: Dir, end: &EndConfig) -> Vec<Option<usize>> {
    let c = Chooser::new(flows, dir, end);
    flows.iter().map(|f| c.link(f)).collect()
}

/// Largest bucket first onto the least-loaded link (ties: the lower link),
/// empty buckets round-robin: the placement the adaptive rebalancer
/// converges to.
fn place_buckets(load: &[u64; BUCKETS], n: usize) -> [usize; BUCKETS] {
    let mut order: Vec<usize> = (0..BUCKETS).collect();
    order.sort_by(|&a, &b| load[b].cmp(&load[a]).then(a.cmp(&b)));
    let mut links = vec![0u64; n.max(1)];
    let mut to = [0usize; BUCKETS];
    for (i, b) in order.into_iter().enumerate() {
        let l = if load[b] == 0 {
            i % links.len()
        } else {
            (0..links.len()).min_by_key(|&l| (links[l], l)).unwrap_or(0)
        };
        links[l] += load[b];
        to[b] = l;
    }
    to
}

/// Predicts one direction under `end`.
pub fn predict(flows: &[Flow], dir: Dir, end: &EndConfig) -> Prediction {
    predict_with(flows, dir, end, &Chooser::new(flows, dir, end))
}

/// [`predict`] with a [`Chooser`] already made.
pub fn predict_with(flows: &[Flow], dir: Dir, end: &EndConfig, choose: &Chooser) -> Prediction {
    let n = end.links;
    let mut links: Vec<LinkLoad> = (0..n)
        .map(|l| LinkLoad {
            link: l + 1,
            flows: 0,
            bytes: 0,
            share: 0.0,
            throughput_bps: 0.0,
        })
        .collect();
    // Per link: the demands of its flows (bulk flows are counted, not
    // listed, so that 10^7 bulk flows cost no memory).
    let mut demands: Vec<Vec<Option<f64>>> = vec![Vec::new(); n];
    let mut bulk = vec![0usize; n];
    let mut all: Vec<Option<f64>> = Vec::new();
    let (mut count, mut bytes, mut all_bulk, mut largest) = (0usize, 0u64, 0usize, 0u64);
    let rr = end.spread == Spread::RoundRobin;
    for f in flows {
        let Some(l) = choose.link(f) else { continue };
        count += 1;
        // Byte counts saturate: a flow list may claim anything up to 2^64.
        bytes = bytes.saturating_add(f.weight());
        largest = largest.max(f.weight());
        match f.demand_bps {
            Some(d) => all.push(Some(if rr { d } else { d.min(end.rate_bps) })),
            None => all_bulk += 1,
        }
        if l == EVERY_LINK {
            for (i, link) in links.iter_mut().enumerate() {
                link.flows += 1;
                link.bytes = link.bytes.saturating_add(
                    f.weight() / n as u64 + u64::from((i as u64) < f.weight() % n as u64),
                );
            }
            continue;
        }
        links[l].flows += 1;
        links[l].bytes = links[l].bytes.saturating_add(f.weight());
        match f.demand_bps {
            Some(d) => demands[l].push(Some(d)),
            None => bulk[l] += 1,
        }
    }
    let capacity = n as f64 * end.rate_bps;
    let (throughput, ideal) = if all.is_empty() {
        // No rates given: the flows are volumes to carry, and the links
        // finish when the busiest one has sent its bytes.
        let bits = |b: u64| b as f64 * 8.0;
        let busiest = links.iter().map(|l| l.bytes).max().unwrap_or(0);
        let span = bits(busiest) / end.rate_bps;
        let t = if span > 0.0 { bits(bytes) / span } else { 0.0 };
        for l in &mut links {
            l.throughput_bps = if span > 0.0 {
                bits(l.bytes) / span
            } else {
                0.0
            };
        }
        // The best any spreading could do: the links share the bytes
        // evenly, but (except under round-robin) no flow is split.
        let largest = if rr { 0 } else { largest };
        let best = (bits(largest) / end.rate_bps).max(bits(bytes) / capacity);
        (t, if best > 0.0 { bits(bytes) / best } else { 0.0 })
    } else {
        // Rates given: max-min fair sharing, each flow capped by its rate
        // (flows without one take what they are given).
        let with_bulk = |mut d: Vec<Option<f64>>, b: usize| {
            d.extend(std::iter::repeat_n(None, b));
            d
        };
        let t = if rr {
            // Round-robin pools the links: one flow can use them all.
            let t = fair::total(capacity, &with_bulk(all.clone(), all_bulk));
            for l in &mut links {
                l.throughput_bps = t / n as f64;
            }
            t
        } else {
            let mut t = 0.0;
            for (i, l) in links.iter_mut().enumerate() {
                let d = with_bulk(std::mem::take(&mut demands[i]), bulk[i]);
                l.throughput_bps = fair::total(end.rate_bps, &d);
                t += l.throughput_bps;
            }
            t
        };
        // The best any spreading could do: pooled capacity, each flow
        // capped by one link (a hash never splits a flow) unless round-robin.
        let ideal = fair::total(capacity, &with_bulk(all, all_bulk));
        let ideal = if rr {
            ideal
        } else {
            ideal.min(end.rate_bps * count as f64)
        };
        (t, ideal)
    };
    for l in &mut links {
        l.share = if bytes == 0 {
            0.0
        } else {
            l.bytes as f64 / bytes as f64
        };
    }
    let mean = bytes as f64 / n.max(1) as f64;
    let max = links.iter().map(|l| l.bytes).max().unwrap_or(0) as f64;
    Prediction {
        dir,
        spread: end.spread.to_string(),
        flows: count,
        bytes,
        throughput_bps: throughput,
        capacity_bps: capacity,
        of_capacity: ratio(throughput, capacity),
        ideal_bps: ideal,
        of_ideal: if ideal > 0.0 { throughput / ideal } else { 1.0 },
        first_link_share: links.first().map_or(0.0, |l| l.share),
        max_over_mean: if mean > 0.0 { max / mean } else { 0.0 },
        links,
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

/// Every candidate spreading for `dir` that `platform` offers, best first
/// (by predicted throughput, then by the busiest link's excess).
pub fn alternatives(
    flows: &[Flow],
    dir: Dir,
    links: usize,
    rate_bps: f64,
    platform: &Platform,
) -> Vec<Prediction> {
    let mut v: Vec<Prediction> = Spread::candidates()
        .into_iter()
        .filter(|s| platform.offers(s))
        .map(|spread| {
            predict(
                flows,
                dir,
                &EndConfig {
                    spread,
                    links,
                    rate_bps,
                },
            )
        })
        .collect();
    v.sort_by(|a, b| {
        b.throughput_bps
            .total_cmp(&a.throughput_bps)
            .then(a.max_over_mean.total_cmp(&b.max_over_mean))
    });
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use lagkit_hash::FlowKey;

    fn out(key: FlowKey) -> Flow {
        Flow {
            key,
            dir: Dir::Out,
            bytes: 1000,
            demand_bps: None,
        }
    }

    fn end(spread: Spread, links: usize) -> EndConfig {
        EndConfig {
            spread,
            links,
            rate_bps: 1e9,
        }
    }

    /// Two hosts, many connections: an address hash puts them all on one
    /// link (half the capacity), a port hash spreads them.
    #[test]
    fn address_hash_between_two_hosts_uses_one_link() {
        let flows: Vec<Flow> = (0..16)
            .map(|i| {
                out(FlowKey::tcp4(
                    [10, 0, 0, 1].into(),
                    40000 + i,
                    [10, 0, 0, 2].into(),
                    5001,
                ))
            })
            .collect();
        let l23 = predict(
            &flows,
            Dir::Out,
            &end(Spread::parse("layer2+3").unwrap(), 2),
        );
        assert_eq!(l23.links.iter().filter(|l| l.flows > 0).count(), 1);
        assert!((l23.of_capacity - 0.5).abs() < 1e-9);
        let l34 = predict(
            &flows,
            Dir::Out,
            &end(Spread::parse("layer3+4").unwrap(), 2),
        );
        assert_eq!(l34.links[0].flows, 8, "sequential source ports alternate");
        assert!((l34.of_capacity - 1.0).abs() < 1e-9);
        assert!((l34.first_link_share - 0.5).abs() < 1e-9);
        let alt = alternatives(&flows, Dir::Out, 2, 1e9, &Platform::Any);
        assert!(alt[0].of_capacity > 0.99, "{}", alt[0].spread);
        assert!(alt.last().unwrap().of_capacity < 0.51);
    }

    /// The member the planner predicts is the member the hash module (and
    /// so the bond) picks.
    #[test]
    fn predictions_follow_lagkit_hash() {
        let p: Policy = "src_dst_port".parse().unwrap();
        let k = FlowKey::tcp4([10, 0, 0, 1].into(), 32789, [10, 0, 0, 2].into(), 32792);
        let at = assign(&[out(k)], Dir::Out, &end(Spread::Hash(p), 2));
        assert_eq!(at, vec![p.select(&k, 2)]);
    }

    #[test]
    fn round_robin_pools_links_and_single_uses_one() {
        let flows = [out(FlowKey::tcp4(
            [1, 1, 1, 1].into(),
            1,
            [2, 2, 2, 2].into(),
            2,
        ))];
        let rr = predict(&flows, Dir::Out, &end(Spread::RoundRobin, 4));
        assert!((rr.of_capacity - 1.0).abs() < 1e-9);
        assert!(rr.links.iter().all(|l| l.bytes == 250));
        let ab = predict(&flows, Dir::Out, &end(Spread::Single, 4));
        assert!((ab.of_capacity - 0.25).abs() < 1e-9);
        assert!(
            (ab.of_ideal - 1.0).abs() < 1e-9,
            "one flow cannot use more than one link"
        );
    }

    #[test]
    fn demands_cap_throughput_and_other_direction_is_ignored() {
        let mut flows: Vec<Flow> = (0..4)
            .map(|i| Flow {
                demand_bps: Some(1e8),
                ..out(FlowKey::tcp4(
                    [10, 0, 0, 1].into(),
                    1000 + i,
                    [10, 0, 0, 2].into(),
                    80,
                ))
            })
            .collect();
        flows.push(Flow {
            dir: Dir::In,
            ..out(FlowKey::tcp4(
                [10, 0, 0, 2].into(),
                80,
                [10, 0, 0, 1].into(),
                1000,
            ))
        });
        let p = predict(
            &flows,
            Dir::Out,
            &end(Spread::parse("layer3+4").unwrap(), 2),
        );
        assert_eq!(p.flows, 4);
        assert!((p.throughput_bps - 4e8).abs() < 1.0);
        assert!((p.of_ideal - 1.0).abs() < 1e-9);
    }

    #[test]
    fn adaptive_balances_unequal_flows() {
        let flows: Vec<Flow> = [5000u64, 3000, 1000, 1000]
            .iter()
            .enumerate()
            .map(|(i, &b)| Flow {
                bytes: b,
                ..out(FlowKey::tcp4(
                    [10, 0, 0, 1].into(),
                    2000 + i as u16,
                    [10, 0, 0, 2].into(),
                    80,
                ))
            })
            .collect();
        let p = predict(&flows, Dir::Out, &end(Spread::Adaptive(DEFAULT_STRONG), 2));
        let mut b: Vec<u64> = p.links.iter().map(|l| l.bytes).collect();
        b.sort_unstable();
        assert_eq!(b, vec![5000, 5000]);
    }

    #[test]
    fn cisco_three_links_share_eight_buckets_unevenly() {
        // One flow per bucket value: 8 flows whose dst-ip last byte is 0..8.
        let flows: Vec<Flow> = (0..8u8)
            .map(|i| {
                out(FlowKey::tcp4(
                    [10, 0, 0, 1].into(),
                    1,
                    [10, 0, 0, i].into(),
                    2,
                ))
            })
            .collect();
        let p = predict(&flows, Dir::Out, &end(Spread::parse("dst-ip").unwrap(), 3));
        let f: Vec<usize> = p.links.iter().map(|l| l.flows).collect();
        assert_eq!(f, vec![3, 3, 2]);
        assert!(Spread::parse("dst-ip").unwrap().is_cisco());
        assert!(!Spread::parse("layer2+3").unwrap().is_cisco());
        let e = Spread::parse("nonsense").unwrap_err();
        assert!(
            e.to_string().starts_with("unknown transmit hash policy")
                && e.to_string()
                    .ends_with("; or a mode: balance-rr, active-backup, adaptive"),
            "{e}"
        );
    }
}
