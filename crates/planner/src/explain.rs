//! Why a configuration spreads badly, in a network engineer's words.
//!
//! Each [`Cause`] names the pattern, the fields and values behind it, and
//! the fix. The checks are the surprises the seeds' measurements record:
//! one address pair under an address hash (IBM's AIX/Cisco runs), routed
//! traffic that shows a MAC hash one MAC pair, sequential or same-parity
//! ports of paired connections (IBM's LPM measurements), Cisco's 8 buckets
//! over 3, 5, 6 or 7 links, fewer flows than links, and elephant flows.

use crate::flow::{Dir, Flow};
use crate::platform::{Platform, Suggestion};
use crate::predict::{Chooser, EndConfig, Prediction, Spread};
use lagkit_hash::Policy;
use serde::Serialize;
use std::collections::HashSet;
use std::fmt;

/// One reason for an imbalance.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum Cause {
    /// Fewer flows than links: some links must stay idle under any hash.
    FewerFlowsThanLinks {
        /// Flows in the direction.
        flows: usize,
        /// Links.
        links: usize,
    },
    /// The policy reads only addresses, and every flow has the same pair.
    OneAddressPair {
        /// The policy.
        policy: String,
        /// The pair, e.g. `10.0.0.1 -> 10.0.0.2`.
        pair: String,
        /// Flows sharing it.
        flows: usize,
    },
    /// The policy reads only MACs, and the flows' many IP pairs share one
    /// MAC pair (routed traffic: the router's MAC on every frame).
    OneMacPair {
        /// The policy.
        policy: String,
        /// The MAC pair.
        pair: String,
        /// Distinct IP pairs behind it.
        ip_pairs: usize,
    },
    /// The policy reads ports, yet the flows' values all fall on the same
    /// link(s): a pattern in the ports (sequential ports of paired
    /// connections, all-even sums).
    PortPattern {
        /// The policy.
        policy: String,
        /// What the ports look like.
        pattern: String,
        /// A few flows with the policy's arithmetic.
        examples: Vec<String>,
        /// Every source port is of one parity and every destination port
        /// of one: the low bit of their sum or XOR never changes.
        one_parity: bool,
    },
    /// Cisco's 8 result-bundle-hash buckets do not divide evenly over this
    /// many links.
    CiscoBuckets {
        /// Links.
        links: usize,
        /// Buckets per link.
        buckets: Vec<usize>,
    },
    /// Many distinct flows use fewer links than there are, with no pattern
    /// in their fields to blame: they were already split by the same hash
    /// upstream.
    Polarised {
        /// The policy.
        policy: String,
        /// Distinct flows.
        flows: usize,
        /// Links they use.
        used: usize,
        /// Links.
        links: usize,
    },
    /// A few large flows carry most bytes; a hash moves whole flows.
    Elephants {
        /// How many flows.
        flows: usize,
        /// Their share of the bytes.
        share: f64,
        /// The link they are on, when it is one.
        link: Option<usize>,
    },
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::FewerFlowsThanLinks { flows, links } => write!(
                f,
                "fewer flows than links: {flows} flow(s) over {links} links; a hash keeps each flow on one link, so at least {} link(s) stay idle",
                links - flows
            ),
            Cause::OneAddressPair { policy, pair, flows } => write!(
                f,
                "one address pair: all {flows} flows are {pair}, and {policy} hashes only {}, so they all take one link",
                reads(policy)
            ),
            Cause::OneMacPair { policy, pair, ip_pairs } => write!(
                f,
                "one MAC pair: {ip_pairs} IP pairs all travel as {pair} (routed through one gateway), and {policy} hashes only {}",
                reads(policy)
            ),
            Cause::PortPattern {
                policy,
                pattern,
                examples,
                ..
            } => {
                write!(f, "port pattern under {policy}: {pattern}")?;
                for e in examples {
                    write!(f, "\n      {e}")?;
                }
                Ok(())
            }
            Cause::CiscoBuckets { links, buckets } => {
                let b: Vec<String> = buckets.iter().map(ToString::to_string).collect();
                if *links > 8 {
                    write!(f, "Cisco's 8 buckets over {links} links: links 9 and up carry nothing")
                } else {
                    write!(
                        f,
                        "Cisco's 8 buckets over {links} links split {}: the busiest link gets {:.3} of evenly spread traffic, not {:.3}",
                        b.join(":"),
                        *buckets.iter().max().unwrap_or(&0) as f64 / 8.0,
                        1.0 / *links as f64
                    )
                }
            }
            Cause::Polarised { policy, flows, used, links } => write!(
                f,
                "polarisation: {flows} distinct flows use only {used} of {links} links under {policy}; no field pattern explains it, as when an upstream aggregate already chose them with the same hash"
            ),
            Cause::Elephants { flows, share, link } => {
                write!(f, "elephant flows: the {flows} largest flow(s) carry {:.0}% of the bytes", share * 100.0)?;
                match link {
                    Some(l) => write!(f, ", all on link {l}"),
                    None => write!(f, "; no hash splits a flow"),
                }
            }
        }
    }
}

impl Cause {
    /// What to change, on an end that can be set to anything lagkit knows.
    pub fn fix(&self) -> &'static str {
        match self {
            Cause::FewerFlowsThanLinks { .. } => {
                "use more connections (parallel streams), or balance-rr if the peer tolerates reordering"
            }
            Cause::OneAddressPair { .. } | Cause::OneMacPair { .. } => {
                "hash on ports too (layer3+4, src-dst-port) or use lagkit's strong/adaptive"
            }
            Cause::PortPattern { .. } => {
                "use a hash that mixes all fields (lagkit's strong) or adaptive, which balances by load"
            }
            Cause::CiscoBuckets { .. } => "use 2, 4 or 8 links in the channel",
            Cause::Polarised { .. } => {
                "give each stage its own hash or seed (lagkit strong:seed=N differs per bond by default)"
            }
            Cause::Elephants { .. } => {
                "adaptive moves other flows off the elephants' link; only round-robin splits a flow"
            }
        }
    }

    /// What to change on `platform`: on a Catalyst, only what its
    /// `port-channel load-balance` can do, naming `best` (its best method
    /// on these flows, by prediction) when that beats `configured`.
    pub fn fix_on(
        &self,
        platform: &Platform,
        configured: &Prediction,
        best: Option<&Prediction>,
    ) -> String {
        let Platform::Catalyst { .. } = platform else {
            return self.fix().to_string();
        };
        let better = platform.suggest(configured, best);
        let say = |b: &Suggestion| {
            let shares: Vec<String> = b.shares.iter().map(|s| format!("{s:.2}")).collect();
            format!(
                "`{}`: predicted {} of the bytes per link on these flows, {:.2} of capacity instead of {:.2}",
                b.say(),
                shares.join("/"),
                b.of_capacity,
                configured.of_capacity
            )
        };
        match (self, better) {
            (Cause::FewerFlowsThanLinks { .. }, _) => {
                "use more connections (parallel streams): no load-balance method splits a flow".into()
            }
            (Cause::CiscoBuckets { .. }, _) => "use 2, 4 or 8 links in the channel".into(),
            (Cause::Elephants { .. }, _) => {
                "no load-balance method splits a flow: carry the large transfers over more connections".into()
            }
            (_, Some(b)) => say(&b),
            (
                Cause::PortPattern {
                    one_parity: true, ..
                },
                None,
            ) => {
                "no load-balance method of this switch sees past the parity (each reads the low bits of ports or addresses): give the connections source ports of both parities, e.g. an application that binds consecutive ports before it connects".into()
            }
            (_, None) => format!(
                "no load-balance method of this switch spreads these flows better{}",
                best.map_or(String::new(), |b| format!(
                    " (its best, `{}`, predicts {:.2} of capacity)",
                    platform.suggestion(b).say(),
                    b.of_capacity
                ))
            ),
        }
    }
}

enum Fields {
    Mac,
    Ip,
    Ports,
    All,
}

fn fields(p: &Policy) -> Fields {
    match p {
        Policy::Layer2
        | Policy::VlanSrcMac
        | Policy::CiscoSrcMac
        | Policy::CiscoDstMac
        | Policy::CiscoSrcDstMac
        | Policy::HpLbMac => Fields::Mac,
        Policy::Layer23
        | Policy::Encap23
        | Policy::AixDefault
        | Policy::CiscoSrcIp
        | Policy::CiscoDstIp
        | Policy::CiscoSrcDstIp
        | Policy::HpLbIp => Fields::Ip,
        Policy::Strong(_) => Fields::All,
        Policy::Layer34
        | Policy::Encap34
        | Policy::AixSrcPort
        | Policy::AixDstPort
        | Policy::AixSrcDstPort
        | Policy::CiscoSrcPort
        | Policy::CiscoDstPort
        | Policy::CiscoSrcDstPort
        | Policy::CiscoSrcDstMixedIpPort
        | Policy::HpLbPort => Fields::Ports,
    }
}

/// What an address-only policy reads, in words.
fn reads(policy: &str) -> &'static str {
    match policy {
        "vlan+srcmac" => "the source MAC and the VLAN tag",
        "layer2" | "src-mac" | "dst-mac" | "src-dst-mac" | "LB_MAC" => "MAC addresses",
        _ => "addresses",
    }
}

/// The distinct values of `it`, stopping after `cap` of them (so that 10^7
/// flows cost no more than `cap` comparisons each).
fn distinct_up_to<T: PartialEq>(it: impl Iterator<Item = T>, cap: usize) -> Vec<T> {
    let mut v: Vec<T> = Vec::new();
    for x in it {
        if !v.contains(&x) {
            v.push(x);
            if v.len() >= cap {
                break;
            }
        }
    }
    v
}

fn mac(m: [u8; 6]) -> lagkit_wire::MacAddr {
    lagkit_wire::MacAddr(m)
}

/// Whether `v`, sorted, runs in steps of at most 2.
fn sequential(mut v: Vec<u16>) -> bool {
    v.sort_unstable();
    v.dedup();
    v.len() >= 2 && v.windows(2).all(|w| w[1] - w[0] <= 2)
}

/// `even` or `odd` when every port in `v` is.
fn parity(v: &[u16]) -> Option<&'static str> {
    let odd = v.iter().filter(|p| *p % 2 == 1).count();
    match odd {
        0 => Some("even"),
        n if n == v.len() => Some("odd"),
        _ => None,
    }
}

/// The parity pattern (IBM's finding on paired connections): every source
/// port of one parity and every destination port of one, so the low bit
/// of their sum or XOR is the same for every flow, and so is whatever a
/// hash that keeps the ports' low bits picks from it.
fn one_parity(sports: &[u16], dports: &[u16]) -> Option<String> {
    if sports.len() < 2 {
        return None;
    }
    let (s, d) = (parity(sports)?, parity(dports)?);
    Some(format!(
        "ports of one parity: every source port is {s} and every destination port {d}, so the low bit of each sum or XOR of the two is {}: the same for every flow{}",
        u8::from(s != d),
        if s == "even" || d == "even" {
            " (Linux's connect() takes even local ports, leaving odd ones to bind())"
        } else {
            ""
        }
    ))
}

/// The causes of the imbalance in `pred` (flows of `dir` spread by `end`);
/// empty when the spread is even or nothing explains it.
pub fn explain(flows: &[Flow], dir: Dir, end: &EndConfig, pred: &Prediction) -> Vec<Cause> {
    explain_with(flows, dir, end, pred, &Chooser::new(flows, dir, end))
}

/// [`explain`] with the [`Chooser`] the prediction was made with.
pub fn explain_with(
    flows: &[Flow],
    dir: Dir,
    end: &EndConfig,
    pred: &Prediction,
    choose: &Chooser,
) -> Vec<Cause> {
    let mine: Vec<&Flow> = flows.iter().filter(|f| f.dir == dir).collect();
    let links = end.links;
    let mut out = Vec::new();
    if mine.is_empty() || links < 2 {
        return out;
    }
    let idle = pred.links.iter().filter(|l| l.flows == 0).count();
    let uneven = idle > 0 || pred.max_over_mean > 1.15;
    if mine.len() < links {
        out.push(Cause::FewerFlowsThanLinks {
            flows: mine.len(),
            links,
        });
    }
    let Spread::Hash(policy) = end.spread else {
        if uneven {
            elephants(&mine, pred, &mut out);
        }
        return out;
    };
    if policy.vendor() == lagkit_hash::Vendor::Cisco && (links > 8 || 8 % links != 0) {
        let buckets = (0..links.min(8))
            .map(|l| (0..8).filter(|b| b % links == l).count())
            .collect();
        out.push(Cause::CiscoBuckets { links, buckets });
    }
    if !uneven {
        return out;
    }
    let name = policy.to_string();
    // The flows that carry the bytes: a pattern among a thousand-byte
    // control connections does not cost throughput, one among the bulk
    // transfers does (IBM's LPM: 4 control and 4 data connections).
    let mean = mine.iter().map(|f| f.weight() as f64).sum::<f64>() / mine.len() as f64;
    let heavy: Vec<&Flow> = mine
        .iter()
        .copied()
        .filter(|f| f.weight() as f64 >= mean / 10.0)
        .collect();
    let all = mine;
    let mine = heavy;
    let on: HashSet<usize> = mine.iter().filter_map(|f| choose.link(f)).collect();
    let ip_pair = |f: &Flow| Some((f.key.src_ip()?, f.key.dst_ip()?));
    let mac_pair = |f: &Flow| (f.key.src_mac, f.key.dst_mac);
    let ip_pairs = distinct_up_to(mine.iter().filter_map(|f| ip_pair(f)), 1000);
    let mac_pairs = distinct_up_to(mine.iter().map(|f| mac_pair(f)), 2);
    match fields(&policy) {
        Fields::Mac if mac_pairs.len() == 1 && mine.len() >= links => {
            let (s, d) = mac_pairs[0];
            if ip_pairs.len() > 1 {
                out.push(Cause::OneMacPair {
                    policy: name,
                    pair: format!("{} -> {}", mac(s), mac(d)),
                    ip_pairs: ip_pairs.len(),
                });
            } else {
                out.push(Cause::OneAddressPair {
                    policy: name,
                    pair: format!("{} -> {}", mac(s), mac(d)),
                    flows: mine.len(),
                });
            }
        }
        Fields::Ip if ip_pairs.len() == 1 && mine.len() >= links => {
            let (s, d) = ip_pairs[0];
            out.push(Cause::OneAddressPair {
                policy: name,
                pair: format!("{s} -> {d}"),
                flows: mine.len(),
            });
        }
        Fields::Ports if mine.len() >= links => {
            let used = on.len();
            let ported: Vec<&&Flow> = mine.iter().filter(|f| f.key.l4_ports().is_some()).collect();
            if used < links && ported.len() >= links {
                let sports: Vec<u16> = ported.iter().map(|f| f.key.src_port()).collect();
                let dports: Vec<u16> = ported.iter().map(|f| f.key.dst_port()).collect();
                let mut pattern = Vec::new();
                if sequential(sports.clone()) {
                    pattern.push(format!(
                        "source ports are sequential ({}..{})",
                        sports.iter().min().unwrap_or(&0),
                        sports.iter().max().unwrap_or(&0)
                    ));
                }
                if sequential(dports.clone()) {
                    pattern.push(format!(
                        "destination ports are sequential ({}..{})",
                        dports.iter().min().unwrap_or(&0),
                        dports.iter().max().unwrap_or(&0)
                    ));
                }
                let parity = one_parity(&sports, &dports);
                let one_parity = parity.is_some();
                pattern.extend(parity);
                let values: HashSet<u64> = ported
                    .iter()
                    .map(|f| policy.hash(&f.key) % links as u64)
                    .collect();
                pattern.push(format!(
                    "the {} flows that carry the bytes all hash to {} mod {links}, so {} of {links} links carry them",
                    ported.len(),
                    values
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(" or "),
                    used
                ));
                let examples = ported
                    .iter()
                    .take(4)
                    .map(|f| policy.explain(&f.key, links).reason)
                    .collect();
                out.push(Cause::PortPattern {
                    policy: name,
                    pattern: pattern.join("; "),
                    examples,
                    one_parity,
                });
            }
        }
        _ => {}
    }
    // Many distinct flows, yet fewer links used, and nothing above explains
    // it: the flows were already chosen by this very hash upstream (an
    // aggregate before this one, same function, same seed), so they share
    // its value modulo the upstream link count: polarisation.
    let explained = out.iter().any(|c| {
        matches!(
            c,
            Cause::OneAddressPair { .. } | Cause::OneMacPair { .. } | Cause::PortPattern { .. }
        )
    });
    // (With 4 flows per link, a fair hash leaves a link idle with
    // probability below n·(1 - 1/n)^(4n), under 2% for n = 2.)
    if !explained && on.len() < links && mine.len() >= 4 * links {
        out.push(Cause::Polarised {
            policy: policy.to_string(),
            flows: mine.len(),
            used: on.len(),
            links,
        });
    }
    elephants(&all, pred, &mut out);
    out
}

fn elephants(mine: &[&Flow], pred: &Prediction, out: &mut Vec<Cause>) {
    let total: u64 = mine.iter().fold(0u64, |t, f| t.saturating_add(f.weight()));
    let links = pred.links.len();
    if total == 0 || links < 2 {
        return;
    }
    let mut sizes: Vec<u64> = mine.iter().map(|f| f.weight()).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    // The smallest number of flows that carry more than one link's fair share.
    let mut acc = 0u64;
    for (i, s) in sizes.iter().enumerate().take(links) {
        acc += s;
        let share = acc as f64 / total as f64;
        if share > 1.0 / links as f64 && (i + 1) * 4 <= mine.len() {
            let busiest = pred
                .links
                .iter()
                .max_by_key(|l| l.bytes)
                .filter(|l| l.bytes as f64 >= acc as f64)
                .map(|l| l.link);
            out.push(Cause::Elephants {
                flows: i + 1,
                share,
                link: busiest,
            });
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::predict;
    use lagkit_hash::FlowKey;

    fn flow(key: FlowKey, bytes: u64) -> Flow {
        Flow {
            key,
            dir: Dir::Out,
            bytes,
            demand_bps: None,
        }
    }

    fn run(flows: &[Flow], spread: &str, links: usize) -> Vec<Cause> {
        let end = EndConfig {
            spread: Spread::parse(spread).unwrap(),
            links,
            rate_bps: 1e9,
        };
        let p = predict(flows, Dir::Out, &end);
        explain(flows, Dir::Out, &end, &p)
    }

    #[test]
    fn one_address_pair_is_named() {
        let flows: Vec<Flow> = (0..8)
            .map(|i| {
                flow(
                    FlowKey::tcp4([10, 0, 0, 1].into(), 40000 + i, [10, 0, 0, 2].into(), 80),
                    1,
                )
            })
            .collect();
        let c = run(&flows, "layer2+3", 2);
        assert!(
            matches!(&c[0], Cause::OneAddressPair { pair, flows: 8, .. } if pair == "10.0.0.1 -> 10.0.0.2"),
            "{c:?}"
        );
        assert!(run(&flows, "layer3+4", 2).is_empty());
    }

    /// IBM's LPM pattern: control and data connections on sequential ports;
    /// AIX src_dst_port's (sport + dport) / 2 lands every data flow on one
    /// adapter.
    #[test]
    fn lpm_sequential_ports_are_named() {
        let flows: Vec<Flow> = (0..4u16)
            .map(|i| {
                flow(
                    FlowKey::tcp4(
                        [10, 0, 0, 1].into(),
                        32789 + 2 * i,
                        [10, 0, 0, 2].into(),
                        32792 + 2 * i,
                    ),
                    1_000_000,
                )
            })
            .collect();
        let c = run(&flows, "src_dst_port", 2);
        let Cause::PortPattern {
            pattern, examples, ..
        } = &c[0]
        else {
            panic!("{c:?}")
        };
        assert!(
            pattern.contains("source ports are sequential (32789..32795)"),
            "{pattern}"
        );
        assert!(pattern.contains("1 of 2 links"), "{pattern}");
        assert_eq!(examples.len(), 4);
        assert!(c[0].fix().contains("strong"));
    }

    #[test]
    fn routed_traffic_under_a_mac_hash() {
        let gw = [2, 0, 0, 0, 0, 0xfe];
        let flows: Vec<Flow> = (0..6u8)
            .map(|i| {
                flow(
                    FlowKey::tcp4([10, 0, 0, 1].into(), 1000, [192, 0, 2, i].into(), 80)
                        .with_macs([2, 0, 0, 0, 0, 1], gw),
                    1,
                )
            })
            .collect();
        let c = run(&flows, "layer2", 2);
        assert!(
            matches!(&c[0], Cause::OneMacPair { ip_pairs: 6, .. }),
            "{c:?}"
        );
    }

    /// Flows an upstream stage sent down one of its two links (strong,
    /// seed 7) meet the same hash again: all on one link. Another seed
    /// spreads them.
    #[test]
    fn polarisation_is_named() {
        let upstream = EndConfig {
            spread: Spread::parse("strong:seed=7").unwrap(),
            links: 2,
            rate_bps: 1e9,
        };
        let all: Vec<Flow> = (0..400u16)
            .map(|i| {
                flow(
                    FlowKey::tcp4([10, 0, 0, 1].into(), 20000 + i, [10, 0, 0, 2].into(), 443),
                    1,
                )
            })
            .collect();
        let at = crate::predict::assign(&all, Dir::Out, &upstream);
        let flows: Vec<Flow> = all
            .iter()
            .zip(&at)
            .filter(|(_, l)| **l == Some(0))
            .map(|(f, _)| *f)
            .collect();
        assert!(flows.len() > 100);
        let c = run(&flows, "strong:seed=7", 2);
        assert!(
            c.iter().any(|c| matches!(
                c,
                Cause::Polarised {
                    used: 1,
                    links: 2,
                    ..
                }
            )),
            "{c:?}"
        );
        assert!(run(&flows, "strong:seed=8", 2).is_empty());
    }

    #[test]
    fn cisco_buckets_fewer_flows_and_elephants() {
        let flows: Vec<Flow> = (0..16u8)
            .map(|i| {
                flow(
                    FlowKey::tcp4([10, 0, 0, 1].into(), 1000, [10, 0, 1, i].into(), 80),
                    1,
                )
            })
            .collect();
        let c = run(&flows, "dst-ip", 3);
        assert!(
            matches!(&c[0], Cause::CiscoBuckets { links: 3, buckets } if buckets == &vec![3, 3, 2]),
            "{c:?}"
        );
        let one = [flow(
            FlowKey::tcp4([1, 1, 1, 1].into(), 1, [2, 2, 2, 2].into(), 2),
            1,
        )];
        assert!(matches!(
            run(&one, "layer3+4", 2)[0],
            Cause::FewerFlowsThanLinks { flows: 1, links: 2 }
        ));
        let mut big: Vec<Flow> = (0..12u16)
            .map(|i| {
                flow(
                    FlowKey::tcp4([10, 0, 0, 1].into(), 5000 + i, [10, 0, 0, 2].into(), 80),
                    1,
                )
            })
            .collect();
        big[0].bytes = 1000;
        let c = run(&big, "strong", 2);
        assert!(
            matches!(c.last(), Some(Cause::Elephants { flows: 1, .. })),
            "{c:?}"
        );
    }

    /// Connections from 10.0.0.1's `sports` to 10.0.0.2:5201, each of
    /// `bytes`, spread with `spread` over 2 links: (flows, prediction,
    /// causes).
    fn to_5201(
        sports: impl Iterator<Item = u16>,
        bytes: u64,
        spread: &str,
    ) -> (Vec<Flow>, Prediction, Vec<Cause>) {
        let flows: Vec<Flow> = sports
            .map(|p| {
                flow(
                    FlowKey::tcp4([10, 0, 0, 1].into(), p, [10, 0, 0, 2].into(), 5201),
                    bytes,
                )
            })
            .collect();
        let end = EndConfig {
            spread: Spread::parse(spread).unwrap(),
            links: 2,
            rate_bps: 1e9,
        };
        let p = predict(&flows, Dir::Out, &end);
        let c = explain(&flows, Dir::Out, &end, &p);
        (flows, p, c)
    }

    /// Linux's even client ports against an odd server port: every XOR
    /// is odd, Cisco's src-dst-port puts all on one link, and the parity is
    /// named; on a Catalyst the fix names no lagkit policy and no method
    /// that would not help.
    #[test]
    fn one_parity_is_named_and_fixed_in_the_platforms_terms() {
        let (flows, p, c) = to_5201((0..8u16).map(|i| 45000 + 2 * i), 1_000_000, "src-dst-port");
        let Cause::PortPattern { pattern, .. } = &c[0] else {
            panic!("{c:?}")
        };
        assert!(
            pattern.contains("every source port is even and every destination port odd, so the low bit of each sum or XOR of the two is 1"),
            "{pattern}"
        );
        let cat = Platform::catalyst();
        let best = crate::predict::alternatives(&flows, Dir::Out, 2, 1e9, &cat);
        let fix = c[0].fix_on(&cat, &p, best.first());
        assert!(fix.contains("sees past the parity"), "{fix}");
        assert!(
            !fix.contains("strong") && !fix.contains("adaptive"),
            "{fix}"
        );
        // Anywhere else, lagkit's own fix.
        assert_eq!(c[0].fix_on(&Platform::Any, &p, best.first()), c[0].fix());
        // Mixed parities: no parity named.
        assert_eq!(one_parity(&[45000, 45001], &[5201, 5201]), None);
    }

    /// One address pair on a Catalyst: the fix is the method predicted
    /// best on these flows, as its IOS line with its spread.
    #[test]
    fn a_catalyst_fix_names_its_best_method_by_prediction() {
        let (flows, p, c) = to_5201(45000..45008, 1, "src-dst-ip");
        assert!(matches!(c[0], Cause::OneAddressPair { .. }), "{c:?}");
        let cat = Platform::catalyst();
        let alts = crate::predict::alternatives(&flows, Dir::Out, 2, 1e9, &cat);
        assert!(alts
            .iter()
            .all(|a| cat.offers(&Spread::parse(&a.spread).unwrap())));
        let fix = c[0].fix_on(&cat, &p, alts.first());
        assert_eq!(
            fix,
            "`port-channel load-balance src-port`: predicted 0.50/0.50 of the bytes per link on these flows, 1.00 of capacity instead of 0.50"
        );
    }
}
