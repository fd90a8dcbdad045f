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

#[cfg(test)]
mod tests {
    use super::*;

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
