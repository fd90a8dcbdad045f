//! balance-tlb and balance-alb: every usable member transmits (flows hashed
//! to `strong` buckets that the rebalancer moves by load; with
//! `tlb_dynamic_lb = false`, hashed by the configured policy and left
//! where it puts them, as Linux does), each with its own
//! source MAC so the switch keeps the bond's MAC on the active member, the
//! one that receives. balance-alb adds receive balancing: each client is
//! given a member by ARP ([`alb_member_for`]) and sends to that member's MAC.

use super::activebackup::choose;
use super::{indices, Context, HashTable, Macs, MemberView, Plan, PlanState};
use crate::settings::Settings;
use std::net::Ipv4Addr;
use std::sync::Arc;

/// Members that transmit and receive: every usable one (a backup adapter
/// included).
pub fn members(view: &[MemberView]) -> Vec<usize> {
    indices(view, |m| m.usable)
}

/// The balance-tlb plan; the active member is chosen as in active-backup.
pub fn tlb(view: &[MemberView], s: &Settings, state: &mut PlanState, bond_mac: [u8; 6]) -> Plan {
    state.active = choose(view, state.active, s.primary_reselect, s.auto_recovery);
    Plan::Tlb {
        hash: HashTable::new(s.policy, members(view), &mut state.slots),
        active: state.active,
        macs: Macs {
            bond: bond_mac,
            members: view.iter().map(|m| m.mac).collect(),
        },
    }
}

/// The balance-alb plan: tlb with the client table.
pub fn alb(view: &[MemberView], s: &Settings, state: &mut PlanState, ctx: &Context) -> Plan {
    let Plan::Tlb { hash, active, macs } = tlb(view, s, state, ctx.bond_mac) else {
        unreachable!("tlb plans Plan::Tlb")
    };
    Plan::Alb {
        hash,
        active,
        macs,
        clients: Arc::new(ctx.clients.clone()),
    }
}

/// balance-alb: the member a new client is given, a pure function of its
/// address and the usable members, so the data path (answering the
/// client's first ARP request before the control thread has seen it) and
/// the control thread agree without sharing state. Consecutive client
/// addresses go to consecutive members.
pub fn alb_member_for(client: Ipv4Addr, usable: &[usize]) -> Option<usize> {
    if usable.is_empty() {
        return None;
    }
    usable
        .get(u32::from(client) as usize % usable.len())
        .copied()
}

#[cfg(test)]
mod tests {
    use super::super::tests::view;
    use super::*;
    use crate::settings::BondMode;

    #[test]
    fn every_usable_member_transmits_and_the_active_one_is_kept() {
        let s = Settings::new("b", &["m0", "m1", "m2"], BondMode::BalanceTlb);
        let mut state = PlanState::default();
        let p = tlb(&view(3, &[0, 1, 2]), &s, &mut state, [2; 6]);
        assert_eq!(p.transmitting(), [0, 1, 2]);
        assert_eq!(p.active(), Some(0));
        let p = tlb(&view(3, &[1, 2]), &s, &mut state, [2; 6]);
        assert_eq!((p.transmitting(), p.active()), (&[1, 2][..], Some(1)));
        let p = tlb(&view(3, &[0, 1, 2]), &s, &mut state, [2; 6]);
        assert_eq!(p.active(), Some(1), "no primary: the active member stays");
        assert!(p.counts_load());
        assert!((0..3).all(|m| p.collects(m)));
    }

    #[test]
    fn without_dynamic_lb_flows_hash_by_the_configured_policy() {
        use super::super::tests::flows;
        use super::super::HashTable;
        for mode in [BondMode::BalanceTlb, BondMode::BalanceAlb] {
            let mut s = Settings::new("b", &["m0", "m1", "m2"], mode);
            s.policy = "layer3+4".parse().unwrap();
            s.tlb_dynamic_lb = false;
            let s = s.normalised();
            let p = super::super::plan(
                &view(3, &[0, 1, 2]),
                &s,
                &mut PlanState::default(),
                &Context::default(),
            );
            let hash = p.hash().expect("a hash");
            assert!(matches!(hash, HashTable::Modulo { .. }), "{mode}: {hash:?}");
            assert_eq!(hash.policy().to_string(), "layer3+4");
            // Each flow leaves where layer3+4 mod 3 puts it, as Linux's
            // bond_xmit_hash does over its slave array.
            for k in flows(64) {
                assert_eq!(p.member_for(&k), s.policy.select(&k, 3), "{mode} {k:?}");
            }
        }
    }

    #[test]
    fn alb_carries_the_client_table() {
        let s = Settings::new("b", &["m0", "m1"], BondMode::BalanceAlb);
        let ctx = Context {
            bond_mac: [2, 0, 0, 0, 0, 0xbb],
            clients: [(Ipv4Addr::new(10, 0, 0, 9), 1)].into_iter().collect(),
        };
        let mut v = view(2, &[0, 1]);
        v[1].mac = [2, 0, 0, 0, 0, 1];
        let p = alb(&v, &s, &mut PlanState::default(), &ctx);
        let Plan::Alb {
            clients,
            active,
            macs,
            ..
        } = &p
        else {
            panic!("{p:?}")
        };
        assert_eq!(**clients, ctx.clients);
        assert_eq!(*active, Some(0));
        assert_eq!(macs.bond, ctx.bond_mac);
        assert_eq!(macs.members, [[0; 6], [2, 0, 0, 0, 0, 1]]);
    }

    #[test]
    fn consecutive_clients_go_to_consecutive_members() {
        let usable = [0, 2, 3];
        let got: Vec<_> = (0..6u8)
            .map(|i| alb_member_for(Ipv4Addr::new(10, 0, 0, 29 + i), &usable).unwrap())
            .collect();
        // 10.0.0.29 = 0x0a00001d, a multiple of 3.
        assert_eq!(got, [0, 2, 3, 0, 2, 3]);
        assert_eq!(alb_member_for(Ipv4Addr::new(10, 0, 0, 1), &[]), None);
    }
}
