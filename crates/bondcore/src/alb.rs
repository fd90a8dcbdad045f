//! balance-alb's client table: which peer (by IPv4 address) sends to which
//! member, learned from the ARP frames the data path copies to the control
//! thread, and the ARP replies that tell each client its member's MAC.
//!
//! Pure: the control thread passes the time, the bond's own addresses and
//! the usable members; frames to send come back as `(member, frame)`.

use crate::plan::tlb::alb_member_for;
use lagkit_wire::{ArpOp, ArpRepr, MacAddr};
use std::collections::HashMap;
use std::net::Ipv4Addr;

/// How often a client is told its member's MAC after an assignment.
const NOTIFICATIONS: u8 = 3;
/// Between two notifications: longer than Linux's neighbour `locktime` (1 s),
/// within which a refreshed entry ignores a new reply.
const NOTIFY_EVERY_NS: u64 = 1_100_000_000;

/// One peer and the member it was told to send to.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Client {
    mac: MacAddr,
    member: usize,
    /// Our address the client asked for.
    our_ip: Ipv4Addr,
    /// Notifications still to send.
    notify: u8,
    next_notify: u64,
}

/// The bond's own addresses, which are never clients.
#[derive(Debug, Clone, Copy)]
pub struct Own<'a> {
    /// The bond's IPv4 addresses.
    pub ips: &'a [Ipv4Addr],
    /// The bond's MAC.
    pub mac: MacAddr,
    /// Every member's MAC, by member index.
    pub member_macs: &'a [MacAddr],
}

/// Client -> member, with pending notifications.
#[derive(Debug, Clone, Default)]
pub struct AlbClients {
    clients: HashMap<Ipv4Addr, Client>,
}

impl AlbClients {
    /// An ARP frame seen on some member: a new client (or one with a new
    /// MAC) is given a member among `usable`. Returns that member when the
    /// table changed (the plan must be republished).
    pub fn learn(&mut self, arp: &ArpRepr, own: Own, usable: &[usize], now: u64) -> Option<usize> {
        if arp.sender_ip.is_unspecified()
            || own.ips.contains(&arp.sender_ip)
            || arp.sender_mac == own.mac
            || own.member_macs.contains(&arp.sender_mac)
        {
            return None;
        }
        let our_ip = if own.ips.contains(&arp.target_ip) {
            arp.target_ip
        } else {
            *own.ips.first()?
        };
        let known = self
            .clients
            .get(&arp.sender_ip)
            .is_some_and(|c| c.mac == arp.sender_mac);
        if known {
            return None;
        }
        let member = alb_member_for(arp.sender_ip, usable)?;
        self.clients.insert(
            arp.sender_ip,
            Client {
                mac: arp.sender_mac,
                member,
                our_ip,
                notify: NOTIFICATIONS,
                next_notify: now,
            },
        );
        Some(member)
    }

    /// Clients of members that can no longer receive move to a usable
    /// member and are told so.
    pub fn reassign(&mut self, usable: &[usize], now: u64) {
        for (ip, c) in self.clients.iter_mut() {
            if usable.contains(&c.member) {
                continue;
            }
            if let Some(m) = alb_member_for(*ip, usable) {
                c.member = m;
                c.notify = NOTIFICATIONS;
                c.next_notify = now;
            }
        }
    }

    /// Client -> member, for the plan.
    pub fn assignments(&self) -> crate::plan::Clients {
        self.clients.iter().map(|(ip, c)| (*ip, c.member)).collect()
    }

    /// The ARP replies due at `now`, each from its client's member: the
    /// member's own MAC, or the bond's when that member is `active`.
    pub fn due(&mut self, now: u64, active: Option<usize>, own: Own) -> Vec<(usize, Vec<u8>)> {
        let mut out = Vec::new();
        for (ip, c) in self
            .clients
            .iter_mut()
            .filter(|(_, c)| c.notify > 0 && c.next_notify <= now)
        {
            c.notify -= 1;
            c.next_notify = now + NOTIFY_EVERY_NS;
            let Some(&member_mac) = own.member_macs.get(c.member) else {
                continue;
            };
            let mac = if Some(c.member) == active {
                own.mac
            } else {
                member_mac
            };
            let reply = ArpRepr {
                op: ArpOp::Reply,
                sender_mac: mac,
                sender_ip: c.our_ip,
                target_mac: c.mac,
                target_ip: *ip,
            };
            out.push((c.member, reply.emit_frame(mac, c.mac)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOND: MacAddr = MacAddr([2, 0, 0, 0, 0, 0xbb]);
    const MACS: [MacAddr; 3] = [
        MacAddr([2, 0, 0, 0, 0, 0]),
        MacAddr([2, 0, 0, 0, 0, 1]),
        MacAddr([2, 0, 0, 0, 0, 2]),
    ];
    const IPS: [Ipv4Addr; 1] = [Ipv4Addr::new(10, 0, 0, 1)];

    fn own() -> Own<'static> {
        Own {
            ips: &IPS,
            mac: BOND,
            member_macs: &MACS,
        }
    }

    fn request_from(ip: Ipv4Addr, last: u8) -> ArpRepr {
        ArpRepr {
            op: ArpOp::Request,
            sender_mac: MacAddr([2, 9, 9, 9, 9, last]),
            sender_ip: ip,
            target_mac: MacAddr::ZERO,
            target_ip: IPS[0],
        }
    }

    #[test]
    fn clients_are_assigned_once_and_told_three_times() {
        let mut t = AlbClients::default();
        let ip = Ipv4Addr::new(10, 0, 0, 7);
        let want = alb_member_for(ip, &[0, 1, 2]);
        assert_eq!(t.learn(&request_from(ip, 7), own(), &[0, 1, 2], 0), want);
        assert_eq!(
            t.learn(&request_from(ip, 7), own(), &[0, 1, 2], 5),
            None,
            "known"
        );
        assert_eq!(t.assignments().get(&ip).copied(), want);
        let m = want.unwrap();
        let sent: Vec<_> = [0, 1, 1_100_000_000, 2_200_000_000, 9_000_000_000]
            .into_iter()
            .flat_map(|now| t.due(now, Some(0), own()))
            .collect();
        assert_eq!(sent.len(), 3, "three notifications, 1.1 s apart");
        for (member, f) in sent {
            assert_eq!(member, m);
            let r = ArpRepr::parse_frame(&f).unwrap();
            let mac = if m == 0 { BOND } else { MACS[m] };
            assert_eq!(
                (r.op, r.sender_mac, r.sender_ip),
                (ArpOp::Reply, mac, IPS[0])
            );
            assert_eq!(
                (r.target_ip, r.target_mac),
                (ip, MacAddr([2, 9, 9, 9, 9, 7]))
            );
        }
    }

    #[test]
    fn the_bond_itself_is_never_a_client() {
        let mut t = AlbClients::default();
        let usable = [0, 1];
        let mut from_member = request_from(Ipv4Addr::new(10, 0, 0, 9), 0);
        from_member.sender_mac = MACS[1];
        assert_eq!(t.learn(&from_member, own(), &usable, 0), None);
        assert_eq!(t.learn(&request_from(IPS[0], 1), own(), &usable, 0), None);
        let probe = request_from(Ipv4Addr::UNSPECIFIED, 2);
        assert_eq!(t.learn(&probe, own(), &usable, 0), None);
        let no_ip = Own { ips: &[], ..own() };
        assert_eq!(
            t.learn(
                &request_from(Ipv4Addr::new(10, 0, 0, 9), 3),
                no_ip,
                &usable,
                0
            ),
            None
        );
        assert!(t.assignments().is_empty());
    }

    #[test]
    fn clients_of_a_failed_member_move_and_are_told_again() {
        let mut t = AlbClients::default();
        let clients: Vec<Ipv4Addr> = (20..26).map(|i| Ipv4Addr::new(10, 0, 0, i)).collect();
        for (i, ip) in clients.iter().enumerate() {
            t.learn(&request_from(*ip, i as u8), own(), &[0, 1, 2], 0);
        }
        let _ = t.due(0, None, own());
        let before = t.assignments();
        t.reassign(&[0, 2], 10);
        let after = t.assignments();
        for ip in &clients {
            match before[ip] {
                1 => assert_ne!(after[ip], 1),
                m => assert_eq!(after[ip], m, "a client of a working member stays"),
            }
        }
        let moved = before.values().filter(|&&m| m == 1).count();
        assert!(moved > 0);
        assert_eq!(
            t.due(10, None, own()).len(),
            moved,
            "only moved clients are told"
        );
    }
}
