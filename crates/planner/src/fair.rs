//! Max-min fair allocation (water-filling) of one link's capacity.
//!
//! TCP flows sharing a bottleneck converge towards equal shares, and a flow
//! that wants less than its share leaves the rest to the others: that is the
//! max-min fair allocation, the standard first-order model of what a set of
//! flows gets from a link.

/// Allocates `capacity` among flows with the given demands (`None`: a bulk
/// flow that takes what it is given); returns each flow's rate, in input
/// order. Never more than its demand, never more than the capacity in total.
pub fn max_min(capacity: f64, demands: &[Option<f64>]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..demands.len()).collect();
    let want = |i: usize| demands[i].unwrap_or(f64::INFINITY).max(0.0);
    order.sort_by(|&a, &b| want(a).total_cmp(&want(b)));
    let mut out = vec![0.0; demands.len()];
    let mut left = capacity.max(0.0);
    let mut n = order.len();
    for &i in &order {
        let share = left / n as f64;
        let got = want(i).min(share);
        out[i] = got;
        left -= got;
        n -= 1;
    }
    out
}

/// The sum of [`max_min`].
pub fn total(capacity: f64, demands: &[Option<f64>]) -> f64 {
    max_min(capacity, demands).iter().sum()
}

/// A flow of [`network`]: its demand and its path (link, fraction).
pub type PathFlow = (Option<f64>, Vec<(usize, f64)>);

/// Max-min fair rates of flows that cross several links (progressive
/// filling): every flow's rate grows at the same pace until a link it uses
/// is full or it reaches its demand, then it stops and the others go on.
/// `caps[l]` is link `l`'s capacity; each flow is its demand (`None`: bulk)
/// and its path, the links it crosses with the fraction of its rate each
/// carries (1 for a hashed flow, 1/n on each of n links under
/// round-robin). A flow that crosses no link gets its demand (0 if bulk).
pub fn network(caps: &[f64], flows: &[PathFlow]) -> Vec<f64> {
    const EPS: f64 = 1e-9;
    let mut rate = vec![0.0; flows.len()];
    let mut done: Vec<bool> = flows
        .iter()
        .map(|(_, p)| p.iter().all(|&(l, w)| l >= caps.len() || w <= 0.0))
        .collect();
    for (i, (d, _)) in flows.iter().enumerate() {
        if done[i] {
            rate[i] = d.unwrap_or(0.0).max(0.0);
        }
    }
    let mut left: Vec<f64> = caps.iter().map(|c| c.max(0.0)).collect();
    while done.iter().any(|d| !d) {
        // How far every unfinished flow can grow together.
        let mut weight = vec![0.0; caps.len()];
        for (i, (_, path)) in flows.iter().enumerate() {
            if !done[i] {
                for &(l, w) in path {
                    if l < caps.len() {
                        weight[l] += w;
                    }
                }
            }
        }
        let mut step = f64::INFINITY;
        for (l, &w) in weight.iter().enumerate() {
            if w > 0.0 {
                step = step.min(left[l] / w);
            }
        }
        for (i, (d, _)) in flows.iter().enumerate() {
            if let (false, Some(d)) = (done[i], d) {
                step = step.min((d - rate[i]).max(0.0));
            }
        }
        if !step.is_finite() {
            break;
        }
        for (i, (_, path)) in flows.iter().enumerate() {
            if !done[i] {
                rate[i] += step;
                for &(l, w) in path {
                    if l < caps.len() {
                        left[l] -= step * w;
                    }
                }
            }
        }
        // Flows at their demand or on a full link stop.
        for (i, (d, path)) in flows.iter().enumerate() {
            let full = path
                .iter()
                .any(|&(l, w)| l < caps.len() && w > 0.0 && left[l] <= EPS * caps[l].max(1.0));
            if !done[i] && (full || d.is_some_and(|d| rate[i] >= d - EPS)) {
                done[i] = true;
            }
        }
    }
    rate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_through_two_links_is_held_by_the_narrower() {
        // Flows a and b share link 0 (10); b also crosses link 1 (2).
        let r = network(
            &[10.0, 2.0],
            &[(None, vec![(0, 1.0)]), (None, vec![(0, 1.0), (1, 1.0)])],
        );
        assert_eq!(r, vec![8.0, 2.0]);
        // A demand stops a flow early; round-robin halves spread its rate.
        let r = network(
            &[10.0, 10.0],
            &[
                (Some(1.0), vec![(0, 1.0)]),
                (None, vec![(0, 0.5), (1, 0.5)]),
                (None, vec![]),
                (Some(3.0), vec![]),
            ],
        );
        assert!(
            (r[0] - 1.0).abs() < 1e-9 && (r[1] - 18.0).abs() < 1e-9,
            "{r:?}"
        );
        assert_eq!(&r[2..], &[0.0, 3.0]);
    }

    #[test]
    fn bulk_flows_share_equally() {
        assert_eq!(max_min(90.0, &[None, None, None]), vec![30.0; 3]);
    }

    #[test]
    fn small_demands_are_met_and_the_rest_is_shared() {
        let r = max_min(100.0, &[Some(10.0), None, Some(20.0), None]);
        assert_eq!(r, vec![10.0, 35.0, 20.0, 35.0]);
    }

    #[test]
    fn demands_below_capacity_are_all_met() {
        let r = max_min(100.0, &[Some(10.0), Some(20.0)]);
        assert_eq!(r, vec![10.0, 20.0]);
        assert_eq!(total(100.0, &[]), 0.0);
    }
}
