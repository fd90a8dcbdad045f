//! balance-rr: frames are dealt to the usable members in turn,
//! `packets_per_slave` at a time (0: each frame to a member at random, as
//! Linux). The turn counter is the engine's, not the plan's: it survives
//! every new plan.

use super::{carriers, MemberView, Plan};

/// The round-robin plan.
pub fn plan(view: &[MemberView], packets_per_member: u32) -> Plan {
    Plan::RoundRobin {
        members: carriers(view),
        packets_per_member,
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::view;
    use super::*;

    #[test]
    fn usable_members_in_turn_and_receiving() {
        let p = plan(&view(3, &[0, 2]), 2);
        assert_eq!(
            p,
            Plan::RoundRobin {
                members: vec![0, 2],
                packets_per_member: 2
            }
        );
        assert!(p.collects(0) && !p.collects(1) && p.collects(2));
        assert_eq!(p.member_for(&super::super::tests::flows(1)[0]), None);
        let none = plan(&view(3, &[]), 1);
        assert!(none.transmitting().is_empty());
    }
}
