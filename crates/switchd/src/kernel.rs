//! The BPF engine: the kernel forwards the switch's data frames
//! (`lagkit_bpf::switch`'s `lksw_ingress` on every port's tcx ingress) and
//! the daemon only publishes what the core decided.
//!
//! The core stays the one place that decides. Each wake-up, the shell asks
//! [`Kernel::publish`] to turn the core's bridge (ports, VLANs, which
//! members are bundled or stand alone, each channel's buckets) into a
//! [`SwitchPlan`]; a plan that differs from the one in force is published
//! with one store, so a member that leaves its channel has its buckets
//! moved in the kernel in the same wake-up as the core's decision, and no
//! frame meets a mix of two plans. The addresses the bridge would forget
//! on that change (a member gone stand-alone or shut, a channel left with
//! no bundled member) are removed from the kernel's table right after.
//!
//! What the kernel counts and learns is copied back into the core
//! ([`Kernel::refresh`]: counter deltas added to the ports' counters, the
//! address table mirrored), so `show interfaces counters`, `show
//! etherchannel detail`, `show mac address-table` and the metrics read
//! the same fields under both engines. The kernel's table is aged here,
//! every [`lagkit_switch::core::AGE_EVERY_NS`].
//!
//! Each port's learning rate is set in the kernel once at start, from the
//! bridge's. Not done by the kernel: storm control (a configuration with
//! it runs the userspace engine).

use lagkit_bpf::switch::{
    kernel_now, PortCounts, PortVlans, SwitchPath, SwitchPlan, SwitchPort, TableEntry, CHANNEL,
};
use lagkit_switch::bridge::{Cast, PortCounters};
use lagkit_switch::core::AGE_EVERY_NS;
use lagkit_switch::{Bridge, ChannelId, Core, Logical, PortId, PortMode};

/// Each port's VLANs as the kernel's plan lays them out (computed once:
/// a port's mode does not change while the switch runs).
pub fn vlans_of(b: &Bridge) -> Vec<PortVlans> {
    b.ports()
        .map(|(_, c)| match &c.mode {
            PortMode::Access { vlan } => PortVlans::Access(*vlan),
            PortMode::Trunk { native, allowed } => PortVlans::Trunk {
                native: *native,
                allowed: (1..4095).filter(|&v| allowed.contains(v)).collect(),
            },
        })
        .collect()
}

/// The plan the kernel forwards by, as the core's bridge stands: port `i`
/// is device `ifindex[i]` with VLANs `vlans[i]`; channels in ascending
/// number, each bucket naming the port that sends it.
pub fn plan_of(b: &Bridge, ifindex: &[u32], vlans: &[PortVlans]) -> SwitchPlan {
    let channels: Vec<ChannelId> = b.channel_ids().collect();
    let ports = b
        .ports()
        .zip(ifindex.iter().zip(vlans))
        .map(|((p, c), (&ifindex, vlans))| {
            let channel = channels
                .iter()
                .position(|&id| b.channel(id).is_some_and(|ch| ch.has(p)));
            SwitchPort {
                ifindex,
                mtu: c.mtu,
                vlans: vlans.clone(),
                enabled: c.enabled,
                channel,
                standalone: b.is_standalone(p),
                bundled: channel
                    .and_then(|k| b.channel(channels[k]))
                    .is_some_and(|ch| ch.is_bundled(p)),
            }
        })
        .collect();
    SwitchPlan {
        ports,
        channels: channels
            .iter()
            .filter_map(|&id| b.channel(id))
            .map(|ch| ch.buckets().map(|p| p.map(|p| p.0)))
            .collect(),
        policy: b.policy(),
        aging_ns: b.fdb().aging_ns(),
        trace: false,
    }
}

/// Where the kernel's table holds addresses that going from `old` to `new`
/// forgets, as the bridge's own table forgets them: a port that starts or
/// stops standing alone, or is shut; a channel left with no bundled
/// member. (Table locations: a port's index, or a channel's with
/// [`CHANNEL`].)
pub fn forgotten(old: &SwitchPlan, new: &SwitchPlan) -> Vec<u32> {
    let mut out = Vec::new();
    for (i, (o, n)) in old.ports.iter().zip(&new.ports).enumerate() {
        if o.standalone != n.standalone || (o.enabled && !n.enabled) {
            out.push(i as u32);
        }
    }
    let bundled =
        |plan: &SwitchPlan, c: usize| plan.ports.iter().any(|p| p.channel == Some(c) && p.bundled);
    for c in 0..new.channels.len().min(old.channels.len()) {
        if bundled(old, c) && !bundled(new, c) {
            out.push(CHANNEL | c as u32);
        }
    }
    out
}

/// What the kernel counted, as the bridge counts it.
fn counters_of(k: &PortCounts) -> PortCounters {
    PortCounters {
        rx_frames: k.rx_frames,
        rx_bytes: k.rx_bytes,
        tx_frames: k.tx_frames,
        tx_bytes: k.tx_bytes,
        control: k.control,
        flooded: k.flooded,
        tx_too_big: k.tx_too_big,
        drops: k.drops,
        learn_full: k.learn_full,
        learn_limited: k.learn_limited,
        rx_cast: Cast {
            ucast: k.rx_ucast,
            mcast: k.rx_mcast,
            bcast: k.rx_bcast,
        },
        tx_cast: Cast {
            ucast: k.tx_ucast,
            mcast: k.tx_mcast,
            bcast: k.tx_bcast,
        },
        ..PortCounters::default()
    }
}

/// `new - old`, field by field (the kernel's counters only grow).
fn since(new: &PortCounts, old: &PortCounts) -> PortCounts {
    let d = |a: u64, b: u64| a.saturating_sub(b);
    let mut drops = [0; 10];
    for (i, x) in drops.iter_mut().enumerate() {
        *x = d(new.drops[i], old.drops[i]);
    }
    PortCounts {
        rx_frames: d(new.rx_frames, old.rx_frames),
        rx_bytes: d(new.rx_bytes, old.rx_bytes),
        tx_frames: d(new.tx_frames, old.tx_frames),
        tx_bytes: d(new.tx_bytes, old.tx_bytes),
        control: d(new.control, old.control),
        flooded: d(new.flooded, old.flooded),
        tx_too_big: d(new.tx_too_big, old.tx_too_big),
        learn_full: d(new.learn_full, old.learn_full),
        learn_limited: d(new.learn_limited, old.learn_limited),
        rx_ucast: d(new.rx_ucast, old.rx_ucast),
        rx_mcast: d(new.rx_mcast, old.rx_mcast),
        rx_bcast: d(new.rx_bcast, old.rx_bcast),
        tx_ucast: d(new.tx_ucast, old.tx_ucast),
        tx_mcast: d(new.tx_mcast, old.tx_mcast),
        tx_bcast: d(new.tx_bcast, old.tx_bcast),
        drops,
    }
}

/// The kernel's table location `at` as the bridge names it.
fn logical_of(at: u32, channels: &[ChannelId]) -> Option<Logical> {
    if at & CHANNEL == 0 {
        return Some(Logical::Port(PortId(at as usize)));
    }
    channels
        .get((at & 0xffff) as usize)
        .map(|&c| Logical::Channel(c))
}

/// The switch's program, attached to every port, and what the shell
/// publishes to it and reads back.
pub struct Kernel {
    path: SwitchPath,
    ifindex: Vec<u32>,
    vlans: Vec<PortVlans>,
    /// The plan in force.
    published: SwitchPlan,
    /// Plans published so far.
    plans: u64,
    /// Each port's kernel counters as last added into the core.
    counted: Vec<PortCounts>,
    /// The kernel's monotonic clock minus the daemon's (the table's times
    /// are the kernel's).
    offset: u64,
    next_age: u64,
}

/// A [`Kernel`]'s facts for `show platform forwarding`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelFacts {
    /// Ports the program runs on.
    pub ports: usize,
    /// Plans published since start.
    pub plans: u64,
    /// Entries in the kernel's address table.
    pub entries: usize,
}

impl Kernel {
    /// Loads the switch's program, publishes the core's first plan and
    /// attaches the program to each of `devices` (port order), so no frame
    /// meets the program before a plan. `now`: the daemon's clock.
    pub fn open(devices: &[String], core: &Core, now: u64) -> Result<Kernel, lagkit_bpf::Error> {
        let b = core.bridge();
        let limit = u32::try_from(b.fdb().limit()).unwrap_or(u32::MAX);
        let mut path = SwitchPath::load_with_table(limit)?;
        let ifindex = devices
            .iter()
            .map(|d| {
                nix::net::if_::if_nametoindex(d.as_str()).map_err(|_| {
                    lagkit_bpf::Error::NoInterface {
                        ifname: d.to_string(),
                    }
                })
            })
            .collect::<Result<Vec<u32>, _>>()?;
        for (p, _) in b.ports() {
            path.set_learn_rate(p.0, b.learn_rate(p))?;
        }
        let vlans = vlans_of(b);
        let published = plan_of(b, &ifindex, &vlans);
        path.publish(&published)?;
        for d in devices {
            path.attach(d)?;
        }
        Ok(Kernel {
            path,
            counted: vec![PortCounts::default(); ifindex.len()],
            ifindex,
            vlans,
            published,
            plans: 1,
            offset: kernel_now().saturating_sub(now),
            next_age: now + AGE_EVERY_NS,
        })
    }

    /// Publishes the core's plan if it changed, then forgets the addresses
    /// the change forgets; ages the kernel's table when due. Whether a
    /// plan was published.
    pub fn publish(&mut self, core: &Core, now: u64) -> bool {
        if now >= self.next_age {
            self.next_age = now + AGE_EVERY_NS;
            let aging = core.bridge().fdb().aging_ns();
            let k = kernel_now();
            if let Err(e) = self.path.forget(|e| k.saturating_sub(e.seen) > aging) {
                tracing::warn!(switch = %core.name(), "aging the kernel's address table: {e}");
            }
        }
        let plan = plan_of(core.bridge(), &self.ifindex, &self.vlans);
        if plan == self.published {
            return false;
        }
        if let Err(e) = self.path.publish(&plan) {
            tracing::error!(switch = %core.name(), "publishing the kernel's plan: {e}");
            return false;
        }
        let gone = forgotten(&self.published, &plan);
        if !gone.is_empty() {
            match self.path.forget(|e: &TableEntry| gone.contains(&e.at)) {
                Ok(n) => {
                    tracing::debug!(switch = %core.name(), addresses = n, "forgotten in the kernel")
                }
                Err(e) => {
                    tracing::warn!(switch = %core.name(), "flushing the kernel's address table: {e}")
                }
            }
        }
        self.published = plan;
        self.plans += 1;
        tracing::info!(switch = %core.name(), plan = self.plans, "kernel plan published");
        true
    }

    /// Copies what the kernel counted and learned into the core: counter
    /// deltas since the last call, and the whole address table.
    pub fn refresh(&mut self, core: &mut Core) {
        for (i, old) in self.counted.iter_mut().enumerate() {
            match self.path.counters(i) {
                Ok(new) => {
                    core.add_forwarded_counts(PortId(i), &counters_of(&since(&new, old)));
                    *old = new;
                }
                Err(e) => {
                    tracing::warn!(switch = %core.name(), "reading the kernel's counters: {e}")
                }
            }
        }
        let channels: Vec<ChannelId> = core.bridge().channel_ids().collect();
        let Ok(table) = self.path.table() else {
            return;
        };
        let moves = self.path.moves().unwrap_or(0);
        let refused = self.counted.iter().map(|c| c.learn_full).sum();
        let offset = self.offset;
        core.mirror_addresses(
            table.iter().filter_map(|e| {
                logical_of(e.at, &channels)
                    .map(|at| (e.vlan, e.mac, at, e.seen.saturating_sub(offset)))
            }),
            moves,
            refused,
        );
    }

    /// Pins the ports' links into `dir` (see [`crate::state`]): from now
    /// on the kernel keeps forwarding if this process dies.
    pub fn pin(&mut self, dir: &std::path::Path) -> Result<(), lagkit_bpf::Error> {
        self.path.pin(dir)
    }

    /// Ends this process's hold and leaves the pins: the ports forward
    /// with the last plan until a switch adopts them.
    pub fn leave_pinned(self) {
        self.path.leave_pinned();
    }

    /// The interfaces' indexes, in port order.
    pub fn ifindex(&self) -> &[u32] {
        &self.ifindex
    }

    /// What `show platform forwarding` says of it.
    pub fn facts(&self) -> KernelFacts {
        KernelFacts {
            ports: self.ifindex.len(),
            plans: self.plans,
            entries: self.path.table().map_or(0, |t| t.len()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lagkit_hash::Policy;
    use lagkit_switch::{Distribution, PortConfig, VlanSet};

    fn bridge() -> Bridge {
        let mut b = Bridge::new("src-dst-ip".parse::<Policy>().unwrap());
        let mut trunk = VlanSet::none();
        trunk.insert(10);
        trunk.insert(20);
        let modes = [
            PortMode::Access { vlan: 10 },
            PortMode::Trunk {
                native: 1,
                allowed: trunk,
            },
            PortMode::Access { vlan: 1 },
            PortMode::Access { vlan: 1 },
        ];
        for (i, mode) in modes.into_iter().enumerate() {
            b.add_port(PortConfig {
                name: format!("Gi0/{i}"),
                mode,
                mtu: 1500,
                enabled: true,
            });
        }
        b.add_channel(
            ChannelId(7),
            vec![PortId(2), PortId(3)],
            Distribution::Fixed,
        )
        .unwrap();
        b
    }

    #[test]
    fn a_plan_names_each_ports_vlans_channel_and_buckets() {
        let mut b = bridge();
        b.set_bundled(PortId(2), true);
        b.set_bundled(PortId(3), true);
        let plan = plan_of(&b, &[11, 12, 13, 14], &vlans_of(&b));
        assert_eq!(plan.ports[0].vlans, PortVlans::Access(10));
        assert_eq!(
            plan.ports[1].vlans,
            PortVlans::Trunk {
                native: 1,
                allowed: vec![10, 20]
            }
        );
        assert_eq!(
            plan.ports
                .iter()
                .map(|p| (p.ifindex, p.channel, p.bundled))
                .collect::<Vec<_>>(),
            [
                (11, None, false),
                (12, None, false),
                (13, Some(0), true),
                (14, Some(0), true)
            ]
        );
        let ch = b
            .channel(ChannelId(7))
            .unwrap()
            .buckets()
            .map(|p| p.map(|p| p.0));
        assert_eq!(plan.channels, vec![ch]);
        assert!(ch.contains(&Some(2)) && ch.contains(&Some(3)));
        assert_eq!(plan.aging_ns, lagkit_switch::fdb::DEFAULT_AGING_NS);
    }

    #[test]
    fn a_member_leaving_moves_its_buckets_and_the_last_one_forgets_the_channel() {
        let mut b = bridge();
        let v = vlans_of(&b);
        b.set_bundled(PortId(2), true);
        b.set_bundled(PortId(3), true);
        let both = plan_of(&b, &[1, 2, 3, 4], &v);
        b.set_bundled(PortId(3), false);
        let one = plan_of(&b, &[1, 2, 3, 4], &v);
        assert_eq!(
            one.channels[0],
            [Some(2); 8],
            "every bucket on the one left"
        );
        assert!(
            forgotten(&both, &one).is_empty(),
            "the channel still has a member"
        );
        b.set_bundled(PortId(2), false);
        let none = plan_of(&b, &[1, 2, 3, 4], &v);
        assert_eq!(forgotten(&one, &none), vec![CHANNEL]);
        b.set_standalone(PortId(2), true);
        let alone = plan_of(&b, &[1, 2, 3, 4], &v);
        assert_eq!(forgotten(&none, &alone), vec![2]);
        b.set_enabled(PortId(0), false);
        let shut = plan_of(&b, &[1, 2, 3, 4], &v);
        assert_eq!(forgotten(&alone, &shut), vec![0]);
        assert_eq!(forgotten(&shut, &shut), Vec::<u32>::new());
    }

    #[test]
    fn kernel_counts_become_the_bridges_fields() {
        let mut drops = [0; 10];
        drops[3] = 1;
        let old = PortCounts {
            rx_frames: 5,
            drops,
            ..PortCounts::default()
        };
        let mut new = old;
        new.rx_frames = 9;
        new.rx_bytes = 600;
        new.tx_bcast = 2;
        new.drops[3] = 4;
        let c = counters_of(&since(&new, &old));
        assert_eq!((c.rx_frames, c.rx_bytes, c.tx_cast.bcast), (4, 600, 2));
        assert_eq!(c.drops[3], 3);
        assert_eq!(logical_of(3, &[]), Some(Logical::Port(PortId(3))));
        assert_eq!(
            logical_of(CHANNEL | 1, &[ChannelId(2), ChannelId(9)]),
            Some(Logical::Channel(ChannelId(9)))
        );
        assert_eq!(logical_of(CHANNEL | 2, &[ChannelId(2)]), None);
    }
}
