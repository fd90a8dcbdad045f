//! The bond's decisions, sans-IO: [`Core`] holds what a bond knows and
//! decides about its members, and nothing that touches a device.
//!
//! - **Inputs**, each with the time: a member appearing or disappearing
//!   ([`Core::member_present`], [`Core::member_gone`]), its raw carrier
//!   ([`Core::handle_carrier`]), a control frame received on it (LACP, PAgP
//!   or ARP: [`Core::handle_frame`]), passing time ([`Core::handle_timeout`])
//!   and new settings ([`Core::reload`]). What the shell does with its
//!   devices is answered here too (`host`: [`Core::take_spec`],
//!   [`Core::handle_link`], [`Core::snoop`], [`Core::faults`]).
//! - **Inside**: each member's carrier debounce and link watchers' verdicts,
//!   the LACP system (802.3ad) or the PAgP driver (a static bond with
//!   `pagp`), the ARP monitor, balance-alb's clients and the mode's
//!   [`PlanState`].
//! - **Outputs**: frames to send on a member ([`Core::poll_transmit`]),
//!   what happened ([`Core::poll_event`]), the next deadline
//!   ([`Core::poll_timeout`]) and, when anything a plan reads changed, the
//!   plan to publish ([`Core::needs_plan`], [`Core::build_plan`]).
//!
//! The daemon (`lagkit_bond::daemon`) is the I/O shell around it: it takes the
//! members' sockets, runs the engine and the control socket, reads the
//! clock and netlink, and feeds this core. A bond's core also runs against
//! a switch's in virtual time ([`lagkit_sim::Node`]), with no root and no
//! sockets: `lagkit sim pair` and this crate's tests.
//!
//! Time is nanoseconds on the caller's clock (the daemon's: since it
//! started; the simulator's: virtual).

use crate::alb::{AlbClients, Own};
use crate::plan::{Context, MemberView, Plan, PlanState};
use crate::settings::{BondMode, Settings};
use lagkit_monitor::arp::ArpMonitor;
use lagkit_monitor::{Combine, Debounce, Watchers};
use lagkit_proto::lacp::{self, PortId};
use lagkit_proto::{pagp, Instant};
use lagkit_wire::{ArpOp, ArpRepr, MacAddr, SystemId};
use std::collections::VecDeque;
use std::net::Ipv4Addr;

mod host;
pub use host::{LinkAction, Reload, Snoop, TakeSpec};

/// The group ifindex sent when the logical interface's is not known: any
/// non-zero value says "in a channel".
pub const FALLBACK_GROUP_IFINDEX: u32 = 1000;

/// At most this many frames wait in [`Core::poll_transmit`]'s queue.
pub const TRANSMIT_QUEUE: usize = 1024;

/// The MAC a bond uses when neither its settings nor a member give one.
const DEFAULT_MAC: MacAddr = MacAddr([0x02, 0x6c, 0x6b, 0, 0, 1]);

/// What the core knows of one member.
#[derive(Debug, Clone)]
pub struct Member {
    name: String,
    mac: MacAddr,
    is_backup: bool,
    present: bool,
    /// The ifindex its PAgP port sends (the kernel's, when known).
    ifindex: Option<u32>,
    carrier: Debounce,
    watchers: Watchers,
    /// Its LACP port, in an 802.3ad bond.
    port: Option<PortId>,
    /// Its PAgP port, when the bond runs PAgP.
    pagp: Option<pagp::PortId>,
    /// Removed, and still collecting (see [`Core::remove_member`]).
    leaving: Option<Leaving>,
    /// Added by a reload: its protocol ports open once its device is
    /// taken and its MAC known ([`Core::member_present`]).
    joining: bool,
    /// The carrier a link event had while it was absent, applied once it
    /// is present ([`Core::handle_link`]).
    link: Option<bool>,
}

/// Where a removed member is in leaving.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leaving {
    /// Collecting until the partner stops or this time.
    Until(u64),
    /// The partner stopped sending on it: the shell may give it back.
    Left,
}

impl Member {
    fn new(name: String, is_backup: bool, s: &Settings) -> Member {
        let mut watchers = Watchers::new(Combine::All);
        watchers.set("carrier", false);
        Member {
            name,
            mac: MacAddr::ZERO,
            is_backup,
            present: false,
            ifindex: None,
            carrier: Debounce::new(false, s.updelay, s.member_downdelay()),
            watchers,
            port: None,
            pagp: None,
            leaving: None,
            joining: false,
            link: None,
        }
    }

    /// Its interface name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Its own MAC (zero until it is first present).
    pub fn mac(&self) -> MacAddr {
        self.mac
    }
    /// The AIX `backup_adapter`.
    pub fn is_backup(&self) -> bool {
        self.is_backup
    }
    /// Its interface exists and the bond holds it.
    pub fn present(&self) -> bool {
        self.present
    }
    /// Present, and every watcher (carrier, ARP, PAgP) says up.
    pub fn usable(&self) -> bool {
        self.present && self.watchers.up()
    }
    /// Its debounced carrier.
    pub fn carrier_up(&self) -> bool {
        self.carrier.is_up()
    }
    /// Its link as `/proc/net/bonding` shows it: up or down, or going
    /// down or back while a change waits out `downdelay` or `updelay`.
    pub fn mii_status(&self) -> lagkit_api::status::MiiStatus {
        use lagkit_api::status::MiiStatus;
        match (self.present, self.carrier.is_up(), self.carrier.pending()) {
            (false, _, _) => MiiStatus::Missing,
            (true, true, Some(false)) => MiiStatus::GoingDown,
            (true, true, _) => MiiStatus::Up,
            (true, false, Some(true)) => MiiStatus::GoingBack,
            (true, false, _) => MiiStatus::Down,
        }
    }
    /// How often its carrier went down.
    pub fn link_failures(&self) -> u64 {
        self.carrier.failures
    }
    /// Each watcher's verdict.
    pub fn watchers(&self) -> &Watchers {
        &self.watchers
    }
    /// Its LACP port.
    pub fn lacp_port(&self) -> Option<PortId> {
        self.port
    }
    /// Its PAgP port.
    pub fn pagp_port(&self) -> Option<pagp::PortId> {
        self.pagp
    }
    /// Removed from the bond, and still collecting what the partner sent
    /// before it learnt so.
    pub fn is_leaving(&self) -> bool {
        self.leaving.is_some()
    }
}

/// How long a removed member still passes up what it receives, at most:
/// frames its partner sent before it learnt of the removal are still
/// delivered. A partner that answers the removal's last LACPDU (or a
/// carrier that goes down) ends it sooner.
pub const LEAVE_DRAIN_NS: u64 = 1_000_000_000;

/// A frame to send on a member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// The member's index.
    pub member: usize,
    /// The whole Ethernet frame.
    pub frame: Vec<u8>,
}

/// What happened, for the shell's actions and the simulator's timeline.
/// Transitions are also logged where they are decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A member's debounced carrier changed.
    Carrier {
        /// The member.
        member: usize,
        /// Up or down.
        up: bool,
    },
    /// PAgP let a member into the data path, or took it out.
    Pagp {
        /// The member.
        member: usize,
        /// In or out.
        joined: bool,
        /// The partner device it joined with (`None`: attached silently).
        partner: Option<MacAddr>,
    },
    /// The ARP monitor's verdict on a member changed.
    Arp {
        /// The member.
        member: usize,
        /// Up or down.
        up: bool,
    },
    /// A removed member's partner stopped sending on it, or its drain is
    /// over ([`Core::remove_member`]).
    Left {
        /// The member.
        member: usize,
    },
    /// The active member changed (active-backup, balance-tlb/alb).
    Active {
        /// Before.
        from: Option<usize>,
        /// After.
        to: Option<usize>,
    },
    /// Tell the network that the bond's addresses are behind `member` now:
    /// one round of gratuitous ARP (IPv4) and unsolicited Neighbor
    /// Advertisements (IPv6) on it. After a failover from one active
    /// member to another, `num_grat_arp` rounds, the first at once and the
    /// others a link-monitor interval apart (Linux's `peer_notif_delay` of
    /// 0), each on the member active then.
    Announce {
        /// The active member.
        member: usize,
    },
    /// Active-backup's active member changed and `fail_over_mac` moves
    /// MACs: the shell sets them (on the bond first, then on the members
    /// in order), and tells the core the bond's new MAC
    /// ([`Core::set_mac`]) once it holds.
    MoveMacs(MacMoves),
    /// A reload changed which members keep their transmit offloads
    /// ([`Settings::keeps_offloads`]): the shell turns them off or gives
    /// them back.
    Offloads,
    /// A reload changed the logical interface's addresses: the shell
    /// removes `old`'s and adds `new`'s, and tells the core the IPv4
    /// addresses that hold ([`Core::set_ipv4`]).
    Addresses {
        /// Before.
        old: Vec<lagkit_bondcfg::Cidr>,
        /// After.
        new: Vec<lagkit_bondcfg::Cidr>,
    },
    /// A reload moved the metrics endpoint (or removed it: `None`).
    MetricsListen(Option<std::net::SocketAddr>),
    /// A reload changed the rebalancer's interval or idle gap.
    Rebalancing(lagkit_hash::AdaptiveConfig),
}

/// The MACs `fail_over_mac` moves on a change of active member
/// ([`Core::mac_moves`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MacMoves {
    /// The MAC the bond takes.
    pub bond: Option<MacAddr>,
    /// The MACs members take, in order.
    pub members: Vec<(usize, MacAddr)>,
}

/// The spacing of [`Event::Announce`] rounds when no link monitor sets it.
const ANNOUNCE_EVERY_NS: u64 = 100_000_000;

/// The bond's decisions (see the module's documentation).
#[derive(Debug)]
pub struct Core {
    s: Settings,
    mac: MacAddr,
    members: Vec<Member>,
    lacp: Option<lacp::System>,
    pagp: Option<pagp::Driver>,
    group_ifindex: u32,
    arp: Option<ArpMonitor>,
    /// balance-alb: client -> member.
    clients: AlbClients,
    ipv4: Vec<Ipv4Addr>,
    /// What the mode remembers between plans (active member, buckets).
    plan: PlanState,
    generation: u64,
    dirty: bool,
    /// balance-tlb/alb: when the next learning frame is due (0: at once).
    next_learning: u64,
    /// Announcement rounds still to come after a failover, and when the
    /// next one is due.
    announce: Option<(u8, u64)>,
    /// miimon: when the members' carrier is next re-read, and whether a
    /// re-read is due for the shell ([`Core::take_miimon`]).
    next_miimon: u64,
    miimon_due: bool,
    transmit: VecDeque<Transmit>,
    transmit_dropped: u64,
    events: VecDeque<(u64, Event)>,
}

pub use lagkit_api::resume::{PagpRecord, PartnerRecord, PortRecord};

/// The members a bond's settings name, in order: `(name, is_backup)`; the
/// AIX backup adapter last, unless it is also a member.
pub fn member_list(s: &Settings) -> Vec<(String, bool)> {
    let mut all: Vec<(String, bool)> = s.members.iter().map(|m| (m.clone(), false)).collect();
    if let Some(b) = &s.backup {
        if !s.members.contains(b) {
            all.push((b.clone(), true));
        }
    }
    all
}

fn t(now: u64) -> Instant {
    Instant::from_nanos(now)
}

impl Core {
    /// A core for these settings: every member absent and down, no
    /// protocol yet ([`Core::start`] starts them once the members that
    /// exist are present).
    pub fn new(s: Settings) -> Core {
        let s = s.normalised();
        let members = member_list(&s)
            .into_iter()
            .map(|(n, b)| Member::new(n, b, &s))
            .collect();
        Core {
            mac: MacAddr::ZERO,
            members,
            lacp: None,
            pagp: None,
            group_ifindex: FALLBACK_GROUP_IFINDEX,
            arp: None,
            clients: AlbClients::default(),
            ipv4: Vec::new(),
            plan: PlanState::default(),
            generation: 0,
            dirty: true,
            next_learning: 0,
            announce: None,
            next_miimon: 0,
            miimon_due: false,
            transmit: VecDeque::new(),
            transmit_dropped: 0,
            events: VecDeque::new(),
            s,
        }
    }

    /// The MAC the bond takes: the configured one, else the first present
    /// member's, else a fixed locally administered one.
    pub fn choose_mac(&self) -> MacAddr {
        self.s
            .mac
            .or_else(|| self.members.iter().find(|m| m.present).map(|m| m.mac))
            .unwrap_or(DEFAULT_MAC)
    }

    /// Starts the protocols with the bond's MAC: LACP (resuming, for each
    /// member whose entry in `resume` is set and which is usable now, the
    /// partner a previous daemon had), PAgP with `group_ifindex` as the
    /// logical interface's ifindex ([`FALLBACK_GROUP_IFINDEX`] when it is
    /// 0, not known), and the ARP monitor.
    pub fn start(&mut self, mac: MacAddr, group_ifindex: u32, resume: &[PortRecord], now: u64) {
        self.mac = mac;
        self.group_ifindex = match group_ifindex {
            0 => FALLBACK_GROUP_IFINDEX,
            i => i,
        };
        self.setup_lacp(resume, now);
        self.setup_pagp(resume, now);
        self.arp = self
            .s
            .arp
            .clone()
            .map(|cfg| ArpMonitor::new(cfg, self.members.len(), now));
        self.drain(now);
    }

    fn setup_lacp(&mut self, resume: &[PortRecord], now: u64) {
        if self.s.mode != BondMode::Lacp {
            return;
        }
        let l = &self.s.lacp;
        let mut sys = lacp::System::new(l.system_config(&self.s.name, self.mac));
        for (i, m) in self.members.iter_mut().enumerate() {
            let cfg = l.port_config(&m.name, (i + 1) as u16, m.mac);
            let usable = m.present && m.watchers.up();
            m.port = Some(match resume.get(i).and_then(|r| r.lacp) {
                // A port of an adopted data path that was aggregated and is
                // still up carries on from where the killed daemon left it.
                Some(p) if usable => {
                    tracing::info!(bond = %self.s.name, member = %m.name, partner = %p.info().system, "resuming LACP where the previous lagkit left it");
                    sys.resume_port(cfg, p.info(), t(now))
                }
                _ => sys.add_port(cfg, t(now)),
            });
        }
        self.lacp = Some(sys);
    }

    /// Builds the PAgP driver when the settings ask for one, a port per
    /// member.
    fn setup_pagp(&mut self, resume: &[PortRecord], now: u64) {
        self.pagp = None;
        let Some(ps) = self.s.pagp else {
            return;
        };
        self.pagp = Some(pagp::Driver::new(ps.system_config(
            &self.s.name,
            self.mac,
            self.group_ifindex,
        )));
        for i in 0..self.members.len() {
            self.members[i].pagp = None;
            let recorded = resume.get(i).and_then(|r| r.pagp.as_ref()?.info());
            self.add_pagp_port(i, now, recorded);
        }
    }

    /// Gives member `i` a PAgP port (out of the channel, so not yet
    /// usable), enabled if its carrier is up; a port it had is removed.
    /// With `resume` (the partner a previous daemon's port in the channel
    /// heard) and its carrier up, the port carries on in the channel.
    fn add_pagp_port(&mut self, i: usize, now: u64, resume: Option<lagkit_wire::pagp::InfoRepr>) {
        let (Some(ps), Some(driver)) = (self.s.pagp, self.pagp.as_mut()) else {
            return;
        };
        let sys = driver.system_mut();
        let m = &mut self.members[i];
        if let Some(old) = m.pagp.take() {
            sys.remove_port(old, t(now));
        }
        m.watchers.set("pagp", false);
        let primary = self.s.primary.as_ref() == Some(&m.name);
        let ifindex = m.ifindex.unwrap_or(0x8000_0000 | i as u32);
        let cfg = ps.port_config(&m.name, ifindex, m.mac, primary);
        let up = m.carrier.is_up() && m.present;
        let port = match resume {
            Some(info) if up => {
                tracing::info!(bond = %self.s.name, member = %m.name, partner = %info.local.device_id, "resuming PAgP where the previous lagkit left it");
                sys.resume_port(cfg, info, t(now))
            }
            _ => {
                let port = sys.add_port(cfg, t(now));
                sys.set_port_enabled(port, up, t(now));
                port
            }
        };
        m.pagp = Some(port);
        self.dirty = true;
    }

    /// Member `i`'s link speed in Mbit/s (0: unknown), as the shell reads
    /// it: `ad_select = bandwidth` weighs aggregates by it.
    pub fn set_member_speed(&mut self, i: usize, speed_mbps: u32, now: u64) {
        let Some(p) = self.members.get(i).and_then(|m| m.port) else {
            return;
        };
        if let Some(sys) = self.lacp.as_mut() {
            sys.set_port_speed(p, speed_mbps, t(now));
        }
    }

    /// Member `i`'s interface exists and the bond holds it, with this MAC
    /// and ifindex. A PAgP port it has speaks with them from now on.
    pub fn member_present(&mut self, i: usize, mac: MacAddr, ifindex: Option<u32>, now: u64) {
        let Some(m) = self.members.get_mut(i) else {
            return;
        };
        m.present = true;
        m.mac = mac;
        m.ifindex = ifindex;
        let link = m.link.take();
        if std::mem::take(&mut m.joining) {
            self.open_ports(i, now);
        } else if m.pagp.is_some() {
            self.add_pagp_port(i, now, None);
        }
        self.dirty = true;
        if let Some(usable) = link {
            self.handle_carrier(i, usable, now);
        }
    }

    /// Member `i`'s interface is gone.
    pub fn member_gone(&mut self, i: usize, now: u64) {
        if let Some(m) = self.members.get_mut(i) {
            m.present = false;
            self.handle_carrier(i, false, now);
        }
    }

    /// A start that adopts a forwarding data path: member `i`'s link is up
    /// now and counts as up at once (not after `updelay`), as the killed
    /// daemon had it ([`Core::adopt_links`]).
    fn adopt_carrier(&mut self, i: usize) {
        let (up, down) = (self.s.updelay, self.s.member_downdelay());
        if let Some(m) = self.members.get_mut(i) {
            m.carrier = Debounce::new(true, up, down);
            m.watchers.set("carrier", true);
        }
    }

    /// Member `i`'s raw carrier is `raw` (a link event, or a re-read).
    pub fn handle_carrier(&mut self, i: usize, raw: bool, now: u64) {
        let Some(m) = self.members.get_mut(i) else {
            return;
        };
        if !raw && m.leaving.is_some() {
            self.left(i, now);
            return;
        }
        if let Some(up) = m.carrier.observe(raw, now) {
            self.apply_carrier(i, up, now);
        }
        self.drain(now);
    }

    fn apply_carrier(&mut self, i: usize, up: bool, now: u64) {
        let m = &mut self.members[i];
        tracing::info!(bond = %self.s.name, member = %m.name, carrier = up, "member link {}", if up { "up" } else { "down" });
        m.watchers.set("carrier", up);
        let enabled = up && m.present;
        if let (Some(sys), Some(p)) = (self.lacp.as_mut(), m.port) {
            sys.set_port_enabled(p, enabled, t(now));
        }
        if let (Some(d), Some(p)) = (self.pagp.as_mut(), m.pagp) {
            d.system_mut().set_port_enabled(p, enabled, t(now));
        }
        self.events
            .push_back((now, Event::Carrier { member: i, up }));
        self.dirty = true;
    }

    /// A control frame received on member `i`: ARP (probe replies,
    /// balance-alb clients), PAgP or LACP (Marker included).
    pub fn handle_frame(&mut self, i: usize, frame: &[u8], now: u64) {
        if i >= self.members.len() {
            return;
        }
        if self.members[i].leaving.is_some() {
            self.leaving_frame(i, frame, now);
            return;
        }
        if frame.get(12..14) == Some(&[0x08, 0x06][..]) {
            self.handle_arp(i, frame, now);
        } else if lagkit_wire::pagp::is_pagp_frame(frame) {
            if let (Some(d), Some(p)) = (self.pagp.as_mut(), self.members[i].pagp) {
                d.system_mut().handle_frame(p, frame, t(now));
            }
        } else if let (Some(sys), Some(p)) = (self.lacp.as_mut(), self.members[i].port) {
            sys.handle_frame(p, frame, t(now));
        }
        self.drain(now);
    }

    /// A frame on a leaving member: its partner's LACPDU saying it no
    /// longer distributes on the link ends the drain.
    fn leaving_frame(&mut self, i: usize, frame: &[u8], now: u64) {
        if let Ok(lagkit_wire::SlowPdu::Lacp(pdu)) = lagkit_wire::SlowPdu::parse(frame) {
            let st = pdu.actor.state;
            if !st.distributing() || !st.in_sync() {
                self.left(i, now);
            }
        }
    }

    /// Leaving member `i`'s partner no longer sends on it (or the drain
    /// is over).
    fn left(&mut self, i: usize, now: u64) {
        if matches!(self.members[i].leaving, Some(Leaving::Until(_))) {
            self.members[i].leaving = Some(Leaving::Left);
            self.events.push_back((now, Event::Left { member: i }));
        }
    }

    fn handle_arp(&mut self, i: usize, frame: &[u8], now: u64) {
        let Some(arp) = ArpRepr::parse_frame(frame) else {
            return;
        };
        if let Some(mon) = self.arp.as_mut() {
            mon.on_reply(i, arp.sender_ip, now);
            mon.on_rx(i, now);
        }
        if self.s.mode != BondMode::BalanceAlb {
            return;
        }
        let usable: Vec<usize> = (0..self.members.len())
            .filter(|&i| self.members[i].usable() && !self.members[i].is_backup)
            .collect();
        let macs: Vec<MacAddr> = self.members.iter().map(|m| m.mac).collect();
        let own = Own {
            ips: &self.ipv4,
            mac: self.mac,
            member_macs: &macs,
        };
        if let Some(member) = self.clients.learn(&arp, own, &usable, now) {
            tracing::info!(bond = %self.s.name, client = %arp.sender_ip, member = %self.members[member].name, "alb: client assigned");
            self.dirty = true;
        }
    }

    /// Every deadline up to `now`: LACP's and PAgP's timers, carrier
    /// debounce, ARP probes and verdicts, balance-tlb/alb learning frames
    /// and balance-alb client notifications.
    pub fn handle_timeout(&mut self, now: u64) {
        if let Some(sys) = self.lacp.as_mut() {
            if sys.poll_timeout().is_some_and(|d| d <= t(now)) {
                sys.handle_timeout(t(now));
            }
        }
        if let Some(d) = self.pagp.as_mut() {
            if d.system().poll_timeout().is_some_and(|d| d <= t(now)) {
                d.system_mut().handle_timeout(t(now));
            }
        }
        for i in 0..self.members.len() {
            if let Some(up) = self.members[i].carrier.poll(now) {
                self.apply_carrier(i, up, now);
            }
            if let Some(Leaving::Until(d)) = self.members[i].leaving {
                if d <= now {
                    self.left(i, now);
                }
            }
        }
        if !self.s.miimon.is_zero() && now >= self.next_miimon {
            let every = u64::try_from(self.s.miimon.as_nanos()).unwrap_or(u64::MAX);
            self.next_miimon = now.saturating_add(every);
            self.miimon_due = true;
        }
        self.arp_timers(now);
        self.announce_due(now);
        self.send_learning(now);
        self.notify_clients(now);
        self.drain(now);
    }

    fn arp_timers(&mut self, now: u64) {
        let Some(arp) = self.arp.as_mut().filter(|a| a.poll_timeout() <= now) else {
            return;
        };
        let (probes, changes) = arp.handle_timeout(now);
        for (m, up) in changes {
            self.members[m].watchers.set("arp", up);
            self.events.push_back((now, Event::Arp { member: m, up }));
            self.dirty = true;
        }
        // Each member probes with its own MAC and sender address 0.0.0.0
        // (an RFC 5227 ARP probe): the target answers to that member alone
        // and learns nothing about the bond's address, so probing never
        // moves the bond's MAC or poisons a neighbour cache.
        for p in probes {
            let mac = self.members[p.member].mac;
            let req = ArpRepr {
                op: ArpOp::Request,
                sender_mac: mac,
                sender_ip: Ipv4Addr::UNSPECIFIED,
                target_mac: MacAddr::ZERO,
                target_ip: p.target,
            };
            self.queue(Transmit {
                member: p.member,
                frame: req.emit_frame(mac, MacAddr::BROADCAST),
            });
        }
    }

    /// balance-tlb/alb: a learning frame (source and destination the
    /// bond's MAC, EtherType 0x9000, as Linux's learning packets) on the
    /// active member every `lp_interval`, and at once when the active
    /// member changes. The other members transmit with their own MACs, so
    /// without it a switch may never learn, or may forget, where the bond's
    /// MAC is: it then floods frames for it to every member, and each
    /// member passes its copy up.
    fn send_learning(&mut self, now: u64) {
        if !self.s.mode.is_tlb() {
            return;
        }
        let Some(a) = self.plan.active.filter(|_| now >= self.next_learning) else {
            return;
        };
        self.next_learning = now + self.s.lp_interval.as_nanos() as u64;
        let mut frame = vec![0u8; 60];
        frame[0..6].copy_from_slice(&self.mac.0);
        frame[6..12].copy_from_slice(&self.mac.0);
        frame[12..14].copy_from_slice(&[0x90, 0x00]);
        self.queue(Transmit { member: a, frame });
    }

    /// balance-alb: tell clients which MAC to send to, with an ARP reply
    /// from their member.
    fn notify_clients(&mut self, now: u64) {
        if self.s.mode != BondMode::BalanceAlb {
            return;
        }
        let macs: Vec<MacAddr> = self.members.iter().map(|m| m.mac).collect();
        let own = Own {
            ips: &self.ipv4,
            mac: self.mac,
            member_macs: &macs,
        };
        for (member, frame) in self.clients.due(now, self.plan.active, own) {
            self.queue(Transmit { member, frame });
        }
    }

    /// Moves what the protocols queued into the core's queues: their PDUs,
    /// LACP's distribution changes (a new plan) and PAgP's gates (each
    /// member's `pagp` watcher, up exactly while PAgP has it in the data
    /// path, so every mode's plan leaves out a member PAgP has not let in).
    fn drain(&mut self, now: u64) {
        let mut out = Vec::new();
        if let Some(sys) = self.lacp.as_mut() {
            while let Some(tx) = sys.poll_transmit() {
                if let Some(i) = self.members.iter().position(|m| m.port == Some(tx.port)) {
                    out.push(Transmit {
                        member: i,
                        frame: tx.frame,
                    });
                }
            }
            while let Some((_, ev)) = sys.poll_event() {
                if matches!(
                    ev,
                    lacp::Event::Distribution { .. } | lacp::Event::Aggregator { .. }
                ) {
                    self.dirty = true;
                }
            }
        }
        for tx in out {
            self.queue(tx);
        }
        let Some(d) = self.pagp.as_mut() else {
            return;
        };
        let poll = d.poll();
        let member = |members: &[Member], port| members.iter().position(|m| m.pagp == Some(port));
        for tx in poll.transmit {
            if let Some(i) = member(&self.members, tx.port) {
                self.queue(Transmit {
                    member: i,
                    frame: tx.frame,
                });
            }
        }
        for g in poll.gates {
            let Some(i) = member(&self.members, g.port) else {
                continue;
            };
            let m = &mut self.members[i];
            match (g.carries, g.partner) {
                (true, Some(p)) => {
                    tracing::info!(bond = %self.s.name, member = %m.name, partner = %p, "PAgP: member joined the channel")
                }
                (true, None) => {
                    tracing::warn!(bond = %self.s.name, member = %m.name, "PAgP: member attached without a PAgP partner (silent mode, nothing heard for the silent wait)")
                }
                (false, _) => {
                    tracing::info!(bond = %self.s.name, member = %m.name, "PAgP: member left the channel")
                }
            }
            m.watchers.set("pagp", g.carries);
            self.events.push_back((
                now,
                Event::Pagp {
                    member: i,
                    joined: g.carries,
                    partner: g.partner,
                },
            ));
            self.dirty = true;
        }
    }

    /// The earliest deadline: LACP's, PAgP's, a carrier debounce, the ARP
    /// monitor, the next learning frame.
    pub fn poll_timeout(&self) -> Option<u64> {
        let lacp = self.lacp.as_ref().and_then(|s| s.poll_timeout());
        let pagp = self.pagp.as_ref().and_then(|d| d.system().poll_timeout());
        let protocols = lacp.into_iter().chain(pagp).map(|t| t.as_nanos());
        let carrier = self.members.iter().filter_map(|m| m.carrier.deadline());
        let arp = self.arp.as_ref().map(|a| a.poll_timeout());
        let learning =
            (self.s.mode.is_tlb() && self.plan.active.is_some()).then_some(self.next_learning);
        let leaving = self.members.iter().filter_map(|m| match m.leaving {
            Some(Leaving::Until(d)) => Some(d),
            _ => None,
        });
        let announce = self.announce.map(|(_, due)| due);
        let miimon = (!self.s.miimon.is_zero()).then_some(self.next_miimon);
        protocols
            .chain(miimon)
            .chain(carrier)
            .chain(arp)
            .chain(learning)
            .chain(leaving)
            .chain(announce)
            .min()
    }

    /// Whether miimon's re-read of every member's carrier is due (once per
    /// `miimon` interval, from [`Core::handle_timeout`]; never with
    /// `miimon = 0`): the shell then reads each member's carrier as it is
    /// now and reports it with [`Core::handle_miimon`]. The carrier events
    /// between re-reads come from netlink.
    pub fn take_miimon(&mut self) -> bool {
        std::mem::take(&mut self.miimon_due)
    }

    /// miimon's re-read of member `i`'s carrier: `raw` counts only where it
    /// differs from the debounced carrier (a change netlink did not
    /// report).
    pub fn handle_miimon(&mut self, i: usize, raw: bool, now: u64) {
        if self
            .members
            .get(i)
            .is_some_and(|m| m.carrier.is_up() != raw)
        {
            self.handle_carrier(i, raw, now);
        }
    }

    /// The next frame to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.transmit.pop_front()
    }

    /// Queues a frame to send. A shell that does not take them (no data
    /// path yet) keeps the newest [`TRANSMIT_QUEUE`]; the older ones are
    /// dropped and counted ([`Core::transmit_dropped`]): a control frame
    /// that old is stale anyway, and the protocols send again.
    fn queue(&mut self, tx: Transmit) {
        if self.transmit.len() >= TRANSMIT_QUEUE {
            self.transmit.pop_front();
            self.transmit_dropped += 1;
        }
        self.transmit.push_back(tx);
    }

    /// Frames dropped because the queue was full.
    pub fn transmit_dropped(&self) -> u64 {
        self.transmit_dropped
    }

    /// The next event, with when it happened.
    pub fn poll_event(&mut self) -> Option<(u64, Event)> {
        self.events.pop_front()
    }

    /// Whether anything a plan reads changed since the last
    /// [`Core::build_plan`].
    pub fn needs_plan(&self) -> bool {
        self.dirty
    }

    /// Something outside the core changed what the plan reads (the
    /// shell's rebalancer moved buckets, an engine restarted).
    pub fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    /// What the plan needs to know about each member.
    pub fn views(&self) -> Vec<MemberView> {
        let sys = self.lacp.as_ref();
        self.members
            .iter()
            .map(|m| {
                let port = m.port.and_then(|p| sys?.port_status(p));
                MemberView {
                    usable: m.usable(),
                    backup: m.is_backup,
                    primary: self.s.primary.as_ref() == Some(&m.name),
                    distributing: port.as_ref().is_some_and(|p| p.distributing) && m.present,
                    collecting: (port.as_ref().is_some_and(|p| p.collecting)
                        || m.leaving.is_some())
                        && m.present,
                    mac: m.mac.0,
                }
            })
            .collect()
    }

    /// The mode's plan for the members' state now, numbered by
    /// [`Core::generation`]. A change of active member is reported as
    /// [`Event::Active`] (and, in balance-tlb/alb, sends a learning frame
    /// at once).
    pub fn build_plan(&mut self, now: u64) -> Plan {
        let view = self.views();
        if self.s.mode == BondMode::BalanceAlb {
            self.clients
                .reassign(&crate::plan::tlb::members(&view), now);
        }
        let ctx = Context {
            bond_mac: self.mac.0,
            clients: self.clients.assignments(),
        };
        let before = self.plan.active;
        let plan = crate::plan::plan(&view, &self.s, &mut self.plan, &ctx);
        let after = self.plan.active;
        if after != before {
            let name = |a: Option<usize>| a.map_or("none", |a| self.members[a].name.as_str());
            tracing::info!(bond = %self.s.name, from = %name(before), to = %name(after), "active member changed");
            self.events.push_back((
                now,
                Event::Active {
                    from: before,
                    to: after,
                },
            ));
            let moves = self.mac_moves(before, after);
            if self.s.mode == BondMode::ActiveBackup && moves != MacMoves::default() {
                self.events.push_back((now, Event::MoveMacs(moves)));
            }
            self.next_learning = 0;
            if before.is_some() && after.is_some() && self.s.num_grat_arp > 0 {
                self.announce = Some((self.s.num_grat_arp, now));
                self.announce_due(now);
            }
        }
        self.generation += 1;
        self.dirty = false;
        plan
    }

    /// One round of [`Event::Announce`] on the active member, when due.
    fn announce_due(&mut self, now: u64) {
        let Some((left, due)) = self.announce.filter(|&(_, due)| due <= now) else {
            return;
        };
        let Some(member) = self.plan.active else {
            self.announce = None;
            return;
        };
        self.events.push_back((now, Event::Announce { member }));
        let every = [
            self.s.miimon,
            self.s
                .arp
                .as_ref()
                .map_or(std::time::Duration::ZERO, |a| a.interval),
        ]
        .into_iter()
        .find(|d| !d.is_zero())
        .map_or(ANNOUNCE_EVERY_NS, |d| {
            u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
        });
        self.announce = (left > 1).then(|| (left - 1, due.max(now).saturating_add(every)));
    }

    /// Builds a plan when one is due (the simulator's stand-in for the
    /// daemon's publish).
    fn publish_if_due(&mut self, now: Instant) {
        if self.dirty {
            self.build_plan(now.as_nanos());
        }
    }

    /// How many plans were built.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The settings in force.
    pub fn settings(&self) -> &Settings {
        &self.s
    }

    /// The bond's MAC.
    pub fn mac(&self) -> MacAddr {
        self.mac
    }

    /// `fail_over_mac active`: the bond took a member's MAC.
    pub fn set_mac(&mut self, mac: MacAddr) {
        self.mac = mac;
    }

    /// What `fail_over_mac` changes when the active member goes from
    /// `old` to `new`: with `active` the bond takes the new member's own
    /// MAC; with `follow` the old member gets its own back and the new one
    /// takes the bond's (in that order); with `none`, nothing.
    fn mac_moves(&self, old: Option<usize>, new: Option<usize>) -> MacMoves {
        use crate::settings::FailOverMac;
        let mut moves = MacMoves::default();
        let Some(n) = new.filter(|&n| n < self.members.len()) else {
            return moves;
        };
        match self.s.fail_over_mac {
            FailOverMac::None => {}
            FailOverMac::Active => moves.bond = Some(self.members[n].mac),
            FailOverMac::Follow => {
                if let Some(o) = old.filter(|&o| o != n && o < self.members.len()) {
                    moves.members.push((o, self.members[o].mac));
                }
                moves.members.push((n, self.mac));
            }
        }
        moves
    }

    /// The IPv4 addresses the bond answers for (ARP, balance-alb).
    pub fn ipv4(&self) -> &[Ipv4Addr] {
        &self.ipv4
    }

    /// The IPv4 addresses the bond answers for.
    pub fn set_ipv4(&mut self, ips: Vec<Ipv4Addr>) {
        self.ipv4 = ips;
    }

    /// The members, in the bond's order.
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// The index of the member named `name`.
    pub fn member_index(&self, name: &str) -> Option<usize> {
        self.members.iter().position(|m| m.name == name)
    }

    /// The LACP system of an 802.3ad bond.
    pub fn lacp(&self) -> Option<&lacp::System> {
        self.lacp.as_ref()
    }

    /// Member `i`'s LACP port status.
    pub fn lacp_status(&self, i: usize) -> Option<lacp::PortStatus> {
        self.lacp.as_ref()?.port_status(self.members.get(i)?.port?)
    }

    /// Member `name`'s LACP partner, if its port is aggregated with one
    /// (distributing, the partner in sync, and heard from: not the
    /// defaulted partner a port without one runs on): what a daemon
    /// adopting this one's data path resumes from ([`Core::start`]).
    pub fn aggregated_partner(&self, name: &str) -> Option<PartnerRecord> {
        let st = self.lacp_status(self.member_index(name)?)?;
        st.aggregated_partner().map(|p| PartnerRecord::of(&p))
    }

    /// Member `name`'s PAgP partner, if its port is in the channel: what a
    /// daemon adopting this one's data path resumes from.
    pub fn channel_partner(&self, name: &str) -> Option<PagpRecord> {
        let i = self.member_index(name)?;
        let port = self.members.get(i)?.pagp?;
        PagpRecord::of(self.pagp()?.channel_partner(port)?)
    }

    /// The PAgP system of a static bond with `pagp`.
    pub fn pagp(&self) -> Option<&pagp::System> {
        self.pagp.as_ref().map(|d| d.system())
    }

    /// Member `i`'s PAgP port status.
    pub fn pagp_status(&self, i: usize) -> Option<pagp::PortStatus> {
        self.pagp()?.port_status(self.members.get(i)?.pagp?)
    }

    /// What the mode remembers between plans.
    pub fn plan_state(&self) -> &PlanState {
        &self.plan
    }

    /// The shell's rebalancer moved buckets: the next plan uses this table.
    pub fn set_bucket_map(&mut self, map: lagkit_hash::BucketMap) {
        self.plan.slots.set_map(map);
        self.dirty = true;
    }

    /// Applies new settings in place: LACP's rate, activity, key, System
    /// ID and bundle limits; PAgP's mode, silence and rate (and the
    /// primary's port priority); carrier delays; the ARP monitor's
    /// targets and interval; the learning interval. What the shell
    /// changes on the host comes out as events ([`Event::Offloads`],
    /// [`Event::Addresses`], [`Event::MetricsListen`],
    /// [`Event::Rebalancing`]). The member list is not changed here
    /// ([`Core::change_members`]): the core keeps its own. A reload goes
    /// through [`Core::reload`], which does both.
    pub fn reconfigure(&mut self, new: Settings, now: u64) {
        let mut new = new.normalised();
        new.members = self.s.members.clone();
        let old = std::mem::replace(&mut self.s, new);
        self.host_changes(&old, now);
        if self.s.lacp != old.lacp {
            self.apply_lacp(&old.lacp, now);
        }
        if self.s.pagp != old.pagp || (self.s.pagp.is_some() && self.s.primary != old.primary) {
            self.setup_pagp(&[], now);
            tracing::info!(bond = %self.s.name, settings = ?self.s.pagp, "PAgP settings changed in place; members rejoin the channel");
        }
        let delays = (self.s.updelay, self.s.member_downdelay());
        if delays != (old.updelay, old.member_downdelay()) {
            for m in &mut self.members {
                m.carrier.set_delays(delays.0, delays.1);
            }
        }
        if let (Some(mon), Some(cfg)) = (self.arp.as_mut(), self.s.arp.clone()) {
            if Some(&cfg) != old.arp.as_ref() {
                mon.set_config(cfg);
            }
        }
        if self.s.lp_interval != old.lp_interval {
            self.next_learning = 0;
        }
        if self.s.miimon != old.miimon {
            self.next_miimon = 0;
        }
        // The hash policy, primary, primary_reselect, auto_recovery,
        // packets_per_slave and num_grat_arp are read by the next plan.
        self.dirty = true;
        self.drain(now);
    }

    /// A new rate or activity changes the ports in place (one LACPDU tells
    /// the partner; the aggregate stays up), as do new bundle limits. A
    /// new System ID or key changes the LAG ID, so the ports select again
    /// (ports whose key changed are re-created with the same port numbers)
    /// and the aggregate re-forms.
    fn apply_lacp(&mut self, old: &crate::settings::LacpSettings, now: u64) {
        let new = self.s.lacp.clone();
        let Some(sys) = self.lacp.as_mut() else {
            return;
        };
        let id = SystemId::new(new.system_priority, new.system_mac.unwrap_or(self.mac));
        sys.set_system_id(id, t(now));
        sys.set_bundle_limits(new.max_bundle, new.min_links, t(now));
        sys.set_ad_select(new.system_config(&self.s.name, self.mac).ad_select, t(now));
        for m in &mut self.members {
            let Some(p) = m.port else { continue };
            // A new key or port priority is a new port for the partner.
            let prio = old.port_priority_of(&m.name) != new.port_priority_of(&m.name);
            if old.key != new.key || prio {
                let number = sys.port_status(p).map_or(0, |st| st.actor.port);
                sys.remove_port(p, t(now));
                let np = sys.add_port(new.port_config(&m.name, number, m.mac), t(now));
                sys.set_port_enabled(np, m.carrier.is_up() && m.present, t(now));
                m.port = Some(np);
            } else {
                let pc = new.port_config(&m.name, 0, m.mac);
                sys.set_port_activity_rate(p, pc.activity, pc.rate, t(now));
            }
        }
        tracing::info!(bond = %self.s.name, system = %id, fast = new.fast, active = new.active, key = new.key, min_links = new.min_links, max_bundle = ?new.max_bundle, "LACP settings changed in place");
        self.dirty = true;
    }

    /// A reload lists members `wanted`: each member not listed leaves
    /// ([`Core::remove_member`]; the backup member stays, `primary` and
    /// `backup` own it), and each name listed that is not a member yet
    /// joins at the end, absent until the shell has taken its device
    /// ([`Core::member_present`], which opens its LACP and PAgP ports once
    /// its MAC is known). Members that stay keep their ports and state.
    /// Members still leaving from an earlier reload must be forgotten
    /// first ([`Core::forget_leaving`]): a name listed again comes back as
    /// a new member.
    pub fn change_members(&mut self, wanted: Vec<String>, now: u64) {
        let (leave, join) = self.member_changes(&wanted);
        for i in leave {
            tracing::info!(bond = %self.s.name, member = %self.members[i].name, "member removed by reload");
            self.remove_member(i, now);
        }
        for name in join {
            tracing::info!(bond = %self.s.name, member = %name, "member added by reload");
            let mut m = Member::new(name, false, &self.s);
            m.joining = true;
            self.members.push(m);
        }
        self.set_member_list(wanted, now);
        self.dirty = true;
    }

    /// Which of today's members leave a reload listing `wanted` (each one
    /// not listed, except the backup member) and which names join (listed
    /// and not a member yet), both in order.
    fn member_changes(&self, wanted: &[String]) -> (Vec<usize>, Vec<String>) {
        let leave = (self.members.iter().enumerate())
            .filter(|(_, m)| !m.is_backup && !wanted.contains(&m.name))
            .map(|(i, _)| i)
            .collect();
        let join = (wanted.iter())
            .filter(|w| self.member_index(w).is_none())
            .cloned()
            .collect();
        (leave, join)
    }

    /// Gives member `i` its LACP port (the next port number) and PAgP
    /// port, once its MAC is known.
    fn open_ports(&mut self, i: usize, now: u64) {
        if let Some(sys) = self.lacp.as_mut() {
            let next = self
                .members
                .iter()
                .filter_map(|m| sys.port_status(m.port?))
                .map(|p| p.actor.port)
                .max()
                .unwrap_or(0)
                + 1;
            let m = &self.members[i];
            let pc = self.s.lacp.port_config(&m.name, next, m.mac);
            self.members[i].port = Some(sys.add_port(pc, t(now)));
        }
        self.add_pagp_port(i, now, None);
        self.drain(now);
    }

    /// Member `i` leaves: its LACP port's last LACPDU (out of sync) is
    /// queued, so the partner stops sending on it at once, and it sends
    /// nothing from the next plan on. Until the partner has stopped (its
    /// LACPDU says so, the carrier goes down, or [`LEAVE_DRAIN_NS`] passed:
    /// [`Core::members_left`]) it still passes up what it receives, so
    /// frames the partner sent meanwhile arrive. A member without an LACP
    /// port has left at once: its partner learns from the carrier going
    /// down as it is given back. It keeps its index until
    /// [`Core::forget_member`].
    pub fn remove_member(&mut self, i: usize, now: u64) {
        let Some(m) = self.members.get(i) else {
            return;
        };
        let (port, pagp) = (m.port, m.pagp);
        if let (Some(sys), Some(p)) = (self.lacp.as_mut(), port) {
            sys.remove_port(p, t(now));
        }
        if let (Some(d), Some(p)) = (self.pagp.as_mut(), pagp) {
            d.system_mut().remove_port(p, t(now));
        }
        // The ports' last frames go out on this member, found by port.
        self.drain(now);
        let m = &mut self.members[i];
        (m.port, m.pagp) = (None, None);
        m.watchers.set("carrier", false);
        m.leaving = Some(Leaving::Until(now.saturating_add(LEAVE_DRAIN_NS)));
        self.dirty = true;
        // Without LACP the partner learns of the removal only from the
        // carrier, when the member is given back: at once.
        if port.is_none() {
            self.left(i, now);
        }
    }

    /// The removed members whose partner stopped sending on them (or whose
    /// drain is over): the shell gives them back and forgets them.
    pub fn members_left(&self) -> Vec<usize> {
        (0..self.members.len())
            .filter(|&i| self.members[i].leaving == Some(Leaving::Left))
            .collect()
    }

    /// Forgets the removed members that have left ([`Core::members_left`];
    /// with `all`, every member still leaving) and returns them, highest
    /// index first, for the shell to give back in that order: the members
    /// after each one move up by one, in the core as in the shell.
    pub fn forget_leaving(&mut self, all: bool, now: u64) -> Vec<(usize, String)> {
        let gone: Vec<usize> = (0..self.members.len())
            .filter(|&i| match self.members[i].leaving {
                Some(Leaving::Left) => true,
                Some(Leaving::Until(_)) => all,
                None => false,
            })
            .collect();
        let mut names = Vec::with_capacity(gone.len());
        for &i in gone.iter().rev() {
            names.push((i, self.members[i].name.clone()));
            self.forget_member(i);
        }
        if !names.is_empty() {
            self.set_member_list(self.s.members.clone(), now);
        }
        names
    }

    /// Removes member `i` (after [`Core::remove_member`]); the members
    /// after it move up by one.
    fn forget_member(&mut self, i: usize) {
        if i < self.members.len() {
            self.members.remove(i);
            self.plan.active = match self.plan.active {
                Some(a) if a == i => None,
                Some(a) if a > i => Some(a - 1),
                a => a,
            };
            self.dirty = true;
        }
    }

    /// The member list a reload asked for is in place: the settings say
    /// so, and the ARP monitor starts over on it.
    fn set_member_list(&mut self, members: Vec<String>, now: u64) {
        self.s.members = members;
        if let Some(cfg) = self.s.arp.clone() {
            self.arp = Some(ArpMonitor::new(cfg, self.members.len(), now));
        }
    }
}

/// Member `i` is the simulator's port `i`; carrier and frames go in as a
/// daemon feeds them, and a plan is built whenever one is due, as the
/// daemon's loop publishes one.
impl lagkit_sim::Node for Core {
    type Event = Event;
    fn set_port_enabled(&mut self, port: lagkit_proto::PortId, up: bool, now: Instant) {
        self.handle_carrier(port.0, up, now.as_nanos());
        self.publish_if_due(now);
    }
    fn handle_frame(&mut self, port: lagkit_proto::PortId, frame: &[u8], now: Instant) {
        Core::handle_frame(self, port.0, frame, now.as_nanos());
        self.publish_if_due(now);
    }
    fn handle_timeout(&mut self, now: Instant) {
        Core::handle_timeout(self, now.as_nanos());
        self.publish_if_due(now);
    }
    fn poll_timeout(&self) -> Option<Instant> {
        Core::poll_timeout(self).map(Instant::from_nanos)
    }
    fn poll_transmit(&mut self) -> Option<(lagkit_proto::PortId, Vec<u8>)> {
        let tx = Core::poll_transmit(self)?;
        Some((lagkit_proto::PortId(tx.member), tx.frame))
    }
    fn poll_event(&mut self) -> Option<(Instant, Event)> {
        let (at, ev) = Core::poll_event(self)?;
        Some((Instant::from_nanos(at), ev))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::time::Duration;

    const MS: u64 = 1_000_000;

    /// A started bond with settings `s`: every member present (member
    /// `i` with MAC 02:00:00:00:00:0`i+1`) and its carrier up.
    pub(crate) fn running(s: Settings) -> Core {
        let n = s.members.len();
        let mut c = Core::new(s);
        for i in 0..n {
            c.member_present(i, MacAddr([2, 0, 0, 0, 0, i as u8 + 1]), None, 0);
        }
        c.start(MacAddr([2, 0, 0, 0, 0, 9]), 100, &[], 0);
        for i in 0..n {
            c.handle_carrier(i, true, 0);
        }
        c
    }

    fn xor(updelay: Duration) -> Core {
        let mut s = Settings::new("bond0", &["a1", "a2"], BondMode::BalanceXor);
        s.updelay = updelay;
        let mut c = Core::new(s);
        for i in 0..2 {
            c.member_present(i, MacAddr([2, 0, 0, 0, 0, i as u8 + 1]), None, 0);
        }
        let mac = c.choose_mac();
        c.start(mac, 7, &[], 0);
        c
    }

    fn transmitting(c: &mut Core, now: u64) -> Vec<usize> {
        c.build_plan(now).transmitting().to_vec()
    }

    #[test]
    fn updelay_holds_a_returning_member_back_and_a_loss_counts_at_once() {
        let mut c = xor(Duration::from_millis(600));
        c.handle_carrier(0, true, 0);
        c.handle_carrier(1, true, 0);
        assert!(transmitting(&mut c, 0).is_empty(), "held for updelay");
        assert_eq!(c.poll_timeout(), Some(600 * MS));
        c.handle_timeout(600 * MS);
        assert_eq!(transmitting(&mut c, 600 * MS), [0, 1]);
        c.handle_carrier(1, false, 1000 * MS);
        assert!(c.needs_plan());
        assert_eq!(transmitting(&mut c, 1000 * MS), [0], "down at once");
        c.handle_carrier(1, true, 2000 * MS);
        c.handle_timeout(2599 * MS);
        assert_eq!(transmitting(&mut c, 2599 * MS), [0], "still held");
        c.handle_timeout(2600 * MS);
        assert_eq!(transmitting(&mut c, 2600 * MS), [0, 1]);
        assert_eq!(c.members()[1].link_failures(), 1);
        let ups: Vec<(u64, Event)> = std::iter::from_fn(|| c.poll_event())
            .filter(|(_, e)| matches!(e, Event::Carrier { member: 1, .. }))
            .collect();
        assert_eq!(
            ups,
            [
                (
                    600 * MS,
                    Event::Carrier {
                        member: 1,
                        up: true
                    }
                ),
                (
                    1000 * MS,
                    Event::Carrier {
                        member: 1,
                        up: false
                    }
                ),
                (
                    2600 * MS,
                    Event::Carrier {
                        member: 1,
                        up: true
                    }
                ),
            ]
        );
    }

    #[test]
    fn a_missing_member_is_not_usable_whatever_its_carrier() {
        let mut c = xor(Duration::ZERO);
        c.handle_carrier(0, true, 0);
        c.handle_carrier(1, true, 0);
        assert_eq!(transmitting(&mut c, 0), [0, 1]);
        c.member_gone(1, MS);
        assert!(!c.members()[1].present());
        assert_eq!(transmitting(&mut c, MS), [0]);
        c.member_present(1, MacAddr([2, 0, 0, 0, 0, 9]), Some(5), 2 * MS);
        c.handle_carrier(1, true, 2 * MS);
        assert_eq!(transmitting(&mut c, 2 * MS), [0, 1]);
        assert_eq!(c.members()[1].mac(), MacAddr([2, 0, 0, 0, 0, 9]));
    }

    /// A shell that never takes the frames (no data path) holds at most
    /// TRANSMIT_QUEUE of them: an hour of fast LACPDUs on two members
    /// (7,200) leaves the newest, and the rest are counted.
    #[test]
    fn frames_nobody_takes_are_capped_and_counted() {
        let mut s = Settings::new("bond0", &["a1", "a2"], BondMode::Lacp);
        s.lacp.fast = true;
        let mut c = running(s);
        let mut now = 0;
        while now < 3600 * 1000 * MS {
            now = c.poll_timeout().unwrap().max(now + 1);
            c.handle_timeout(now);
        }
        assert_eq!(c.transmit.len(), TRANSMIT_QUEUE);
        assert!(c.transmit_dropped() > 6000, "{}", c.transmit_dropped());
        let last = c.transmit.back().unwrap();
        assert!(lagkit_wire::SlowPdu::parse(&last.frame).is_ok());
    }

    #[test]
    fn a_reload_removes_the_unlisted_members_and_adds_the_new_ones_in_order() {
        let c = xor(Duration::ZERO);
        let names: Vec<String> = c.members().iter().map(|m| m.name().to_string()).collect();
        let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(c.member_changes(&names), (vec![], vec![]));
        let (leave, join) = c.member_changes(&w(&["n1", &names[1], "n0"]));
        assert_eq!(leave, [0]);
        assert_eq!(join, ["n1", "n0"]);
        assert_eq!(c.member_changes(&[]).0, [0, 1]);
    }

    /// A reload's member list: the members that stay keep their LACP
    /// ports; a new one joins absent, with no port until its device is
    /// taken, then the next port number and its own MAC; a removed one
    /// leaves, and once forgotten the members after it move up.
    #[test]
    fn a_reload_opens_a_new_members_ports_once_it_is_present_and_forgets_the_left_ones() {
        let mut s = Settings::new("bond0", &["a1", "a2", "a3"], BondMode::Lacp);
        s.lacp.fast = true;
        let mut c = running(s);
        let port = |c: &Core, i: usize| c.lacp_status(i).map(|p| p.actor.port);
        let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        c.change_members(w(&["a1", "a3", "n1"]), MS);
        assert_eq!(c.settings().members, w(&["a1", "a3", "n1"]));
        assert_eq!(c.members().len(), 4, "a2 leaves but is not forgotten yet");
        assert!(c.members()[1].is_leaving());
        assert_eq!(port(&c, 1), None, "a leaving member's port is gone");
        assert_eq!(
            (c.members()[3].name(), c.members()[3].present()),
            ("n1", false)
        );
        assert_eq!(port(&c, 3), None, "no port before the device is taken");
        c.member_present(3, MacAddr([2, 0, 0, 0, 0, 7]), Some(42), 2 * MS);
        assert_eq!(port(&c, 3), Some(4), "the next port number");
        assert_eq!(port(&c, 0), Some(1));
        assert_eq!(port(&c, 2), Some(3));
        // a2's partner has not answered: it has not left yet.
        assert_eq!(c.forget_leaving(false, 3 * MS), []);
        assert_eq!(c.forget_leaving(true, 3 * MS), [(1, "a2".to_string())]);
        let names: Vec<&str> = c.members().iter().map(|m| m.name()).collect();
        assert_eq!(names, ["a1", "a3", "n1"]);
        assert_eq!(port(&c, 2), Some(4), "n1 moved up with its port");
        assert!(c.needs_plan());
    }

    /// A static bond's member has no protocol to tell the partner: it has
    /// left as soon as it is removed (the carrier tells the partner when
    /// the shell gives it back), and nothing carries it from then on.
    #[test]
    fn a_static_member_leaves_at_once() {
        let mut c = xor(Duration::ZERO);
        c.handle_carrier(0, true, 0);
        c.handle_carrier(1, true, 0);
        assert_eq!(transmitting(&mut c, 0), [0, 1]);
        c.remove_member(1, MS);
        assert_eq!(c.members_left(), [1]);
        assert_eq!(c.poll_timeout(), None, "no drain to wait for");
        assert_eq!(transmitting(&mut c, MS), [0]);
    }

    /// After a failover from one active member to another the bond
    /// announces its addresses `num_grat_arp` times, at once and then a
    /// miimon interval apart, on the member active then; the first member
    /// to become active is no failover and announces nothing.
    #[test]
    fn a_failover_is_announced_num_grat_arp_times_a_monitor_interval_apart() {
        let mut s = Settings::new("bond0", &["a1", "a2"], BondMode::ActiveBackup);
        s.num_grat_arp = 3;
        s.miimon = Duration::from_millis(250);
        let mut c = Core::new(s);
        for i in 0..2 {
            c.member_present(i, MacAddr([2, 0, 0, 0, 0, i as u8 + 1]), None, 0);
        }
        let mac = c.choose_mac();
        c.start(mac, 7, &[], 0);
        c.handle_carrier(0, true, 0);
        c.handle_carrier(1, true, 0);
        c.build_plan(0);
        let announced = |c: &mut Core| -> Vec<(u64, usize)> {
            std::iter::from_fn(|| c.poll_event())
                .filter_map(|(t, e)| match e {
                    Event::Announce { member } => Some((t, member)),
                    _ => None,
                })
                .collect()
        };
        let run_until = |c: &mut Core, end: u64| {
            while let Some(now) = c.poll_timeout().filter(|&t| t < end) {
                c.handle_timeout(now);
                c.take_miimon();
            }
        };
        run_until(&mut c, 1000 * MS);
        assert_eq!(announced(&mut c), [], "the first active member");
        c.handle_carrier(0, false, 1000 * MS);
        c.build_plan(1000 * MS);
        assert_eq!(announced(&mut c), [(1000 * MS, 1)]);
        run_until(&mut c, 5000 * MS);
        assert_eq!(announced(&mut c), [(1250 * MS, 1), (1500 * MS, 1)]);
        // Without a link monitor, 100 ms apart; none at all with 0.
        let mut s = c.settings().clone();
        s.miimon = Duration::ZERO;
        s.num_grat_arp = 0;
        c.reconfigure(s, 5000 * MS);
        c.handle_carrier(0, true, 5000 * MS);
        c.handle_carrier(1, false, 5000 * MS);
        c.build_plan(5000 * MS);
        assert_eq!(announced(&mut c), []);
    }

    /// miimon asks the shell for a carrier re-read once per interval, the
    /// first at once; a new interval starts at once, and 0 asks for none.
    #[test]
    fn miimon_asks_for_a_carrier_read_once_per_interval() {
        let mut c = xor(Duration::ZERO);
        assert!(!c.take_miimon());
        let mut s = c.settings().clone();
        s.miimon = Duration::from_millis(100);
        c.reconfigure(s, 0);
        assert_eq!(c.poll_timeout(), Some(0));
        c.handle_timeout(0);
        assert!(c.take_miimon());
        assert!(!c.take_miimon(), "taken");
        assert_eq!(c.poll_timeout(), Some(100 * MS));
        c.handle_timeout(99 * MS);
        assert!(!c.take_miimon());
        c.handle_timeout(100 * MS);
        assert!(c.take_miimon());
        let mut s = c.settings().clone();
        s.miimon = Duration::ZERO;
        c.reconfigure(s, 150 * MS);
        assert_eq!(c.poll_timeout(), None);
        c.handle_timeout(10_000 * MS);
        assert!(!c.take_miimon());
    }

    /// miimon's re-read counts only where it differs from the debounced
    /// carrier: one that agrees leaves a pending change as it is.
    #[test]
    fn a_miimon_read_counts_only_where_it_differs_from_the_debounced_carrier() {
        let mut s = Settings::new("bond0", &["a1", "a2"], BondMode::BalanceXor);
        s.downdelay = Duration::from_millis(200);
        let mut c = running(s);
        // netlink: a1 down, held for downdelay; miimon then reads it up,
        // as the debounced carrier has it, and a2 down, which netlink
        // did not report.
        c.handle_carrier(0, false, 0);
        c.handle_miimon(0, true, 50 * MS);
        c.handle_miimon(1, false, 50 * MS);
        c.handle_timeout(200 * MS);
        assert!(!c.members()[0].carrier_up(), "a1's downdelay ran on");
        assert!(c.members()[1].carrier_up(), "a2's started at 50 ms");
        c.handle_timeout(250 * MS);
        assert!(!c.members()[1].carrier_up());
        c.handle_miimon(7, false, 300 * MS);
    }

    #[test]
    fn fail_over_mac_moves_the_bonds_or_the_members_macs() {
        use crate::settings::FailOverMac;
        let mut c = xor(Duration::ZERO);
        let (m1, m2) = (MacAddr([2, 0, 0, 0, 0, 1]), MacAddr([2, 0, 0, 0, 0, 2]));
        let bond = c.mac();
        assert_eq!(c.mac_moves(Some(0), Some(1)), MacMoves::default());
        let mut s = c.settings().clone();
        s.fail_over_mac = FailOverMac::Active;
        c.reconfigure(s, 0);
        let moves = c.mac_moves(Some(0), Some(1));
        assert_eq!((moves.bond, moves.members.len()), (Some(m2), 0));
        let mut s = c.settings().clone();
        s.fail_over_mac = FailOverMac::Follow;
        c.reconfigure(s, 0);
        let moves = c.mac_moves(Some(0), Some(1));
        assert_eq!(
            (moves.bond, moves.members),
            (None, vec![(0, m1), (1, bond)])
        );
        // A first active member has no predecessor to give its MAC back.
        assert_eq!(c.mac_moves(None, Some(0)).members, [(0, bond)]);
        assert_eq!(c.mac_moves(Some(0), None), MacMoves::default());
        assert_eq!(c.mac_moves(Some(0), Some(7)), MacMoves::default());
    }

    /// An active-backup failover under `fail_over_mac = follow` asks the
    /// shell to move the MACs, after the change of active member and
    /// before its announcements; a mode without an active member to
    /// follow asks nothing.
    #[test]
    fn a_failover_asks_for_the_mac_moves_before_its_announcements() {
        use crate::settings::FailOverMac;
        let events = |mode: BondMode| {
            let mut s = Settings::new("bond0", &["a1", "a2"], mode);
            s.fail_over_mac = FailOverMac::Follow;
            s.num_grat_arp = 1;
            let mut c = running(s);
            c.build_plan(0);
            c.handle_carrier(0, false, MS);
            c.build_plan(MS);
            std::iter::from_fn(|| c.poll_event().map(|e| e.1)).collect::<Vec<_>>()
        };
        let ab = events(BondMode::ActiveBackup);
        let at = |want: fn(&Event) -> bool| ab.iter().position(want);
        let moved = at(|e| matches!(e, Event::MoveMacs(m) if m.members.len() == 2));
        let active = at(|e| {
            matches!(
                e,
                Event::Active {
                    from: Some(0),
                    to: Some(1)
                }
            )
        });
        let announced = at(|e| matches!(e, Event::Announce { member: 1 }));
        assert!(active < moved && moved < announced, "{ab:?}");
        assert!(moved.is_some() && announced.is_some(), "{ab:?}");
        let tlb = events(BondMode::BalanceTlb);
        assert!(
            !tlb.iter().any(|e| matches!(e, Event::MoveMacs(_))),
            "{tlb:?}"
        );
    }

    #[test]
    fn frames_for_a_member_out_of_range_or_malformed_are_ignored() {
        let mut c = xor(Duration::ZERO);
        c.handle_frame(9, &[0u8; 60], 0);
        c.handle_frame(0, &[], 0);
        c.handle_frame(
            0,
            &[0x01, 0x80, 0xc2, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0x88, 0x09],
            0,
        );
        assert_eq!(c.poll_transmit(), None);
    }
}
