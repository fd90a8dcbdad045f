//! The planner and a running bond put a flow on the same member: the bond's
//! `strong` bucket table is what its members' joining built, and the
//! planner models exactly that.

use lagkit_bond::plan::Slots;
use lagkit_hash::BucketMap;

#[test]
fn a_bond_whose_members_all_came_up_holds_the_grown_map() {
    for n in 1..=8usize {
        let mut s = Slots::default();
        let usable: Vec<usize> = (0..n).collect();
        s.update(&usable);
        let (map, owners) = s.snapshot().expect("members");
        assert_eq!(owners, usable);
        assert_eq!(map, BucketMap::grown(n).unwrap(), "{n} members");
    }
}
