//! broadcast: every frame leaves on every usable member. The receive side
//! keeps only the first copy of a frame that arrives through several
//! members (the engine's `Dedup` (`lagkit_bond::map`)).

use super::{carriers, MemberView, Plan};

/// The broadcast plan.
pub fn plan(view: &[MemberView]) -> Plan {
    Plan::Broadcast {
        members: carriers(view),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::view;
    use super::*;

    #[test]
    fn every_usable_member_sends_and_receives() {
        let p = plan(&view(3, &[1, 2]));
        assert_eq!(p.transmitting(), [1, 2]);
        assert!(!p.collects(0) && p.collects(1) && p.collects(2));
        assert_eq!(p.active(), None);
        assert!(plan(&view(2, &[])).transmitting().is_empty());
    }
}
