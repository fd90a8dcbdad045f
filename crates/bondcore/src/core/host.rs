//! What the core tells the shell about the devices it holds: how a member
//! is taken ([`Core::take_spec`]), what a link event on one asks for
//! ([`Core::handle_link`]), which frames the data path hands up besides the
//! slow protocols ([`Core::snoop`]), where loss is injected
//! ([`Core::faults`]), and what a reload does ([`Core::reload`]: restart,
//! nothing, or in place, with the changes to the host's own resources
//! raised as events). The shell carries these out and decides none of them.

use super::*;
use crate::settings::describe_changes;

/// How the shell takes a member's device ([`Core::take_spec`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TakeSpec {
    /// The MTU the bond sets on it (unchanged when `None`).
    pub mtu: Option<u32>,
    /// Its transmit offloads stay as they are (else they are turned off).
    pub keep_offloads: bool,
    /// The control plane reads ARP or PAgP on it, besides the slow
    /// protocols ([`Snoop::any`]).
    pub snoop: bool,
    /// The probability of dropping each frame it sends (`--fault-loss`).
    pub loss: Option<f64>,
    /// `force_members`: the members taken even though the host uses them.
    pub force: Vec<String>,
}

/// The frames the data path hands up besides the slow protocols.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Snoop {
    /// ARP: the ARP monitor's replies, balance-alb's clients.
    pub arp: bool,
    /// PAgP (an 802.3 frame, not a slow protocol).
    pub pagp: bool,
}

impl Snoop {
    /// Whether any frame besides the slow protocols goes up.
    pub fn any(self) -> bool {
        self.arp || self.pagp
    }
}

/// What a link event asks of the shell for one member ([`Core::handle_link`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkAction {
    /// Its interface exists and the bond does not hold it: take it (and
    /// report it with [`Core::member_present`], which applies the carrier
    /// the event had).
    Take(usize),
    /// Its interface vanished: give back what is left of it (the core has
    /// counted it gone and down).
    GiveBack(usize),
}

/// What a reload does ([`Core::reload`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Reload {
    /// No key changed.
    Unchanged,
    /// A key needs the bond restarted with these settings; nothing was
    /// applied.
    Restart(Box<Settings>),
    /// Applied in place. `forgotten`: members still leaving from an
    /// earlier reload, forgotten because the member list changed (highest
    /// index first, as [`Core::forget_leaving`] returns them), for the
    /// shell to give back before it takes the new ones.
    InPlace {
        /// The members forgotten.
        forgotten: Vec<(usize, String)>,
    },
}

impl Core {
    /// How the shell takes member `i`'s device; `None` when there is no
    /// such member or the bond holds it already.
    pub fn take_spec(&self, i: usize) -> Option<TakeSpec> {
        let m = self.members.get(i).filter(|m| !m.present)?;
        let s = &self.s;
        Some(TakeSpec {
            mtu: s.mtu,
            keep_offloads: s.keeps_offloads(&m.name),
            snoop: self.snoop().any(),
            loss: s.faults.iter().find(|(n, _)| *n == m.name).map(|f| f.1),
            force: s.force_members.clone(),
        })
    }

    /// The frames the data path hands up besides the slow protocols.
    pub fn snoop(&self) -> Snoop {
        Snoop {
            arp: self.s.snoops_arp(),
            pagp: self.s.pagp.is_some(),
        }
    }

    /// The loss injected on each member (`--fault-loss`), by index.
    pub fn faults(&self) -> Vec<(usize, f64)> {
        (self.s.faults.iter())
            .filter_map(|(n, p)| Some((self.member_index(n)?, *p)))
            .collect()
    }

    /// A link event (or a dump's entry) for interface `name`: whether it
    /// `exists`, and whether its link is `usable`. A member that exists
    /// and is held gets the carrier; one the bond does not hold is to be
    /// taken, and gets the carrier once it is present; one that vanished
    /// is gone. `None`: not a member, or nothing for the shell to do.
    pub fn handle_link(
        &mut self,
        name: &str,
        exists: bool,
        usable: bool,
        now: u64,
    ) -> Option<LinkAction> {
        let i = self.member_index(name)?;
        let present = self.members[i].present;
        match (exists, present) {
            (false, false) => None,
            (false, true) => {
                self.member_gone(i, now);
                Some(LinkAction::GiveBack(i))
            }
            (true, false) => {
                self.members[i].link = Some(usable);
                Some(LinkAction::Take(i))
            }
            (true, true) => {
                self.handle_carrier(i, usable, now);
                None
            }
        }
    }

    /// A start that adopts a forwarding data path: each present member
    /// whose link the dump `links` (name, usable) has usable counts as up
    /// at once (not after `updelay`), as the killed daemon had it, so the
    /// first plan is the one in force.
    pub fn adopt_links<'a>(&mut self, links: impl IntoIterator<Item = (&'a str, bool)>) {
        for (name, usable) in links {
            match self.member_index(name) {
                Some(i) if usable && self.members[i].present => self.adopt_carrier(i),
                _ => {}
            }
        }
    }

    /// New settings from a reload: when a changed key needs a restart
    /// ([`Settings::needs_restart`]) nothing is applied and they come back;
    /// otherwise they apply in place ([`Core::reconfigure`]), the member
    /// list included ([`Core::change_members`], after the members still
    /// leaving are forgotten: a name listed again comes back as a new
    /// member).
    pub fn reload(&mut self, new: Settings, now: u64) -> Reload {
        let new = new.normalised();
        let keys = describe_changes(&self.s.changes(&new));
        if self.s.needs_restart(&new) {
            tracing::info!(bond = %self.s.name, keys = %keys, "reload: restarting the bond");
            return Reload::Restart(Box::new(new));
        }
        if keys.is_empty() {
            return Reload::Unchanged;
        }
        tracing::info!(bond = %self.s.name, keys = %keys, "reload: every change applied in place");
        let members = new.members.clone();
        self.reconfigure(new, now);
        let mut forgotten = Vec::new();
        if members != self.s.members {
            forgotten = self.forget_leaving(true, now);
            self.change_members(members, now);
        }
        Reload::InPlace { forgotten }
    }

    /// The changes from `old` that the shell carries out on the host's
    /// resources, as events: the members' offloads, the logical
    /// interface's addresses, the metrics endpoint, the rebalancer's
    /// timers.
    pub(super) fn host_changes(&mut self, old: &Settings, now: u64) {
        let s = &self.s;
        let mut events = Vec::new();
        if s.offloads_off != old.offloads_off {
            events.push(Event::Offloads);
        }
        if s.addresses != old.addresses {
            let (old, new) = (old.addresses.clone(), s.addresses.clone());
            events.push(Event::Addresses { old, new });
        }
        if s.metrics_listen != old.metrics_listen {
            events.push(Event::MetricsListen(s.metrics_listen));
        }
        if s.adaptive_config() != old.adaptive_config() {
            events.push(Event::Rebalancing(s.adaptive_config()));
        }
        self.events.extend(events.into_iter().map(|e| (now, e)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::tests::running;
    use crate::settings::PagpSettings;

    const MS: u64 = 1_000_000;

    fn desirable() -> Option<PagpSettings> {
        Some(PagpSettings {
            mode: pagp::Mode::Desirable,
            silence: pagp::Silence::Silent,
            fast: false,
            max_ports: None,
        })
    }

    fn events(c: &mut Core) -> Vec<Event> {
        std::iter::from_fn(|| c.poll_event())
            .map(|(_, e)| e)
            .collect()
    }

    #[test]
    fn a_member_is_taken_once_as_the_settings_say() {
        let mut s = Settings::new("bond0", &["a1", "a2"], BondMode::ActiveBackup);
        s.mtu = Some(9000);
        s.offloads_off = vec!["a2".into()];
        s.faults = vec![("a2".into(), 0.25), ("zz".into(), 0.5)];
        let mut c = Core::new(s.clone());
        let a1 = c.take_spec(0).expect("absent, so to take");
        assert_eq!(
            a1,
            TakeSpec {
                mtu: Some(9000),
                keep_offloads: true,
                snoop: false,
                loss: None,
                force: Vec::new(),
            }
        );
        let a2 = c.take_spec(1).expect("absent, so to take");
        assert!(!a2.keep_offloads, "offloads = false names it");
        assert_eq!(a2.loss, Some(0.25));
        assert_eq!(c.take_spec(2), None, "no such member");
        assert_eq!(c.faults(), [(1, 0.25)], "a fault on a non-member is none");
        c.member_present(0, MacAddr([2, 0, 0, 0, 0, 1]), None, 0);
        assert_eq!(c.take_spec(0), None, "held already");
        // ARP (the ARP monitor, balance-alb) and PAgP reach the control
        // plane only when snooped.
        assert_eq!(c.snoop(), Snoop::default());
        let alb = Settings::new("bond0", &["a1"], BondMode::BalanceAlb);
        assert_eq!(
            Core::new(alb).snoop(),
            Snoop {
                arp: true,
                pagp: false
            }
        );
        s.pagp = desirable();
        let c = Core::new(s);
        assert_eq!(
            c.snoop(),
            Snoop {
                arp: false,
                pagp: true
            }
        );
        assert!(c.take_spec(0).expect("absent").snoop);
    }

    #[test]
    fn a_link_event_takes_an_absent_member_gives_back_a_vanished_one_and_carries_the_carrier() {
        let mut c = running(Settings::new("bond0", &["a1", "a2"], BondMode::BalanceXor));
        assert_eq!(c.handle_link("eth9", true, true, MS), None, "not a member");
        assert_eq!(
            c.handle_link("a2", true, false, MS),
            None,
            "held: carrier only"
        );
        assert!(!c.members()[1].carrier_up());
        assert_eq!(
            c.handle_link("a2", false, false, 2 * MS),
            Some(LinkAction::GiveBack(1))
        );
        assert!(!c.members()[1].present());
        assert_eq!(
            c.handle_link("a2", false, false, 3 * MS),
            None,
            "gone already"
        );
        assert_eq!(
            c.handle_link("a2", true, true, 4 * MS),
            Some(LinkAction::Take(1))
        );
        assert!(!c.members()[1].carrier_up(), "no carrier before it is held");
        c.member_present(1, MacAddr([2, 0, 0, 0, 0, 2]), None, 5 * MS);
        assert!(c.members()[1].usable(), "the event's carrier, once held");
        assert_eq!(c.build_plan(5 * MS).transmitting(), [0, 1]);
    }

    #[test]
    fn an_adopted_data_path_counts_the_present_members_with_a_usable_link_up_at_once() {
        let mut s = Settings::new("bond0", &["a1", "a2", "a3"], BondMode::BalanceXor);
        s.updelay = std::time::Duration::from_secs(5);
        let mut c = Core::new(s);
        c.member_present(0, MacAddr([2, 0, 0, 0, 0, 1]), None, 0);
        c.member_present(1, MacAddr([2, 0, 0, 0, 0, 2]), None, 0);
        c.adopt_links([("a1", true), ("a2", false), ("a3", true), ("eth9", true)]);
        let up: Vec<bool> = c.members().iter().map(|m| m.carrier_up()).collect();
        assert_eq!(up, [true, false, false], "a2 down, a3 absent");
    }

    #[test]
    fn pagp_sends_a_fallback_group_ifindex_when_the_logical_interfaces_is_unknown() {
        let mut s = Settings::new("bond0", &["a1"], BondMode::BalanceXor);
        s.pagp = desirable();
        let group = |ifindex: u32| {
            let mut c = Core::new(s.clone());
            c.start(MacAddr([2, 0, 0, 0, 0, 9]), ifindex, &[], 0);
            c.pagp().expect("pagp").config().group_ifindex
        };
        assert_eq!(group(0), FALLBACK_GROUP_IFINDEX);
        assert_eq!(group(42), 42);
    }

    #[test]
    fn a_reload_restarts_does_nothing_or_applies_in_place_raising_the_hosts_changes() {
        let s = Settings::new("bond0", &["a1", "a2"], BondMode::BalanceXor);
        let mut c = running(s.clone());
        events(&mut c);
        assert_eq!(c.reload(s.clone(), MS), Reload::Unchanged);
        let mut other_mode = s.clone();
        other_mode.mode = BondMode::ActiveBackup;
        assert!(matches!(c.reload(other_mode, MS), Reload::Restart(_)));
        assert_eq!(c.settings().mode, BondMode::BalanceXor, "nothing applied");
        assert!(events(&mut c).is_empty());
        let mut new = s.clone();
        new.offloads_off = vec!["a1".into()];
        new.addresses = vec!["10.0.0.1/24".parse().expect("cidr")];
        new.metrics_listen = Some("127.0.0.1:9100".parse().expect("addr"));
        new.adaptive_interval = std::time::Duration::from_millis(250);
        assert_eq!(
            c.reload(new.clone(), 2 * MS),
            Reload::InPlace { forgotten: vec![] }
        );
        assert_eq!(
            events(&mut c),
            [
                Event::Offloads,
                Event::Addresses {
                    old: vec![],
                    new: new.addresses.clone()
                },
                Event::MetricsListen(new.metrics_listen),
                Event::Rebalancing(new.adaptive_config()),
            ]
        );
        assert!(!c.settings().keeps_offloads("a1"));
        let mut fewer = new.clone();
        fewer.members = vec!["a1".into()];
        assert_eq!(
            c.reload(fewer.clone(), 3 * MS),
            Reload::InPlace { forgotten: vec![] },
            "a2 leaves: nothing was leaving before"
        );
        assert!(c.members()[1].is_leaving());
        assert!(
            !events(&mut c).iter().any(|e| matches!(
                e,
                Event::Offloads | Event::Addresses { .. } | Event::MetricsListen(_)
            )),
            "only what changed"
        );
        let mut back = fewer;
        back.members = vec!["a1".into(), "a2".into()];
        let Reload::InPlace { forgotten } = c.reload(back, 4 * MS) else {
            panic!("in place");
        };
        assert_eq!(forgotten, [(1, "a2".to_string())], "a2 comes back as new");
        let names: Vec<&str> = c.members().iter().map(|m| m.name()).collect();
        assert_eq!(names, ["a1", "a2"]);
        assert!(!c.members()[1].present(), "joins absent");
    }
}
