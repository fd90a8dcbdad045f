//! The BPF engine: the kernel moves the bond's frames.
//!
//! With `engine = "bpf"` (or `auto` where the kernel allows it) the bond's
//! logical interface is one end of a veth pair instead of a TAP, and
//! lagkit-bpf's programs move data frames between it and the members
//! without leaving the kernel: egress on the logical interface picks a
//! member as the published [`Plan`] says, ingress on each member sends data
//! frames up. The daemon keeps everything else: it reads LACP, Marker and
//! ARP frames from each member's control-only packet socket (through the
//! userspace engine's control queues, with no data frame ever reaching
//! user space), runs the state machines and publishes every plan to both
//! the kernel and its own map, which `lagkit flow` and status read.
//!
//! [`Parts`] is the one translation of a [`Plan`] into the programs'
//! [`Distribution`]: a pure function, tested here without root.

use crate::plan::{HashTable, Plan};
use lagkit_bpf::{BucketLoad, Datapath, Distribution, Logical, Spread, Tlb};
use lagkit_hash::{BucketMap, Policy, BUCKETS};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// The engines a bond can run (`engine` in its configuration).
pub use lagkit_bondcfg::Engine as EngineChoice;

/// The name of the idle peer of bond `bond`'s logical interface: derived
/// from the bond's name, so a daemon finds what a killed one left behind.
pub fn peer_name(bond: &str) -> String {
    format!(
        "lkp{:08x}",
        xxhash_rust::xxh3::xxh3_64(bond.as_bytes()) as u32
    )
}

/// Deletes the logical interface (and its peer) that a daemon of bond
/// `bond` left when it was killed; true if there was one. Called once the
/// bond's run directory is locked, so no live daemon owns it.
pub fn remove_leftover(bond: &str) -> bool {
    let peer = peer_name(bond);
    if nix::net::if_::if_nametoindex(peer.as_str()).is_err() {
        return false;
    }
    lagkit_sys::link::delete(&peer).is_ok()
}

/// Where bond `bond` of this network namespace pins its data path
/// (`<bpffs>/lagkit/<netns inode>/<bond>`), or why it cannot.
pub fn pin_dir(bond: &str) -> Result<std::path::PathBuf, lagkit_bpf::NoBpffs> {
    let ns =
        lagkit_bondcfg::paths::netns_id().map_or_else(|| "unknown".to_string(), |i| i.to_string());
    Ok(lagkit_bpf::pin_base()?.join(ns).join(bond))
}

/// Detaches the data path a killed daemon of bond `bond` left pinned (it
/// forwards until then); returns how many links it had. For `lagkit
/// down` and for a start that does not adopt it.
pub fn release_pins(bond: &str) -> usize {
    pin_dir(bond).map_or(0, |dir| lagkit_bpf::release_all(&dir))
}

/// How egress spreads, with the data it borrows kept in [`Parts`].
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// Nothing may transmit: every frame is dropped.
    Nothing,
    Hash {
        policy: Policy,
        /// Boxed: 258 bytes.
        buckets: Box<BucketMap>,
        bucket_bytes: bool,
        /// balance-tlb/alb: the active member's position, and alb.
        tlb: Option<(usize, bool)>,
    },
    RoundRobin(u32),
    Active,
    Broadcast,
}

/// A [`Plan`] as the programs take it: interface indices in the programs'
/// order, and the bond's member numbers as counter ids.
#[derive(Debug, Clone, PartialEq)]
pub struct Parts {
    kind: Kind,
    tx: Vec<u32>,
    tx_ids: Vec<u16>,
    rx: Vec<u32>,
    rx_ids: Vec<u16>,
    macs: Vec<[u8; 6]>,
    bond_mac: [u8; 6],
}

impl Parts {
    /// `plan` over members whose interface indices are `ifindex` (by
    /// member number; `None`: not present, never in a plan).
    pub fn new(plan: &Plan, ifindex: &[Option<u32>]) -> Parts {
        // A member the plan names but whose interface is unknown (gone
        // between the plan and now) is left out; the next plan follows.
        let known = |ms: &[usize]| -> Vec<usize> {
            ms.iter()
                .copied()
                .filter(|&m| ifindex.get(m).copied().flatten().is_some())
                .collect()
        };
        let tx_members = match plan {
            Plan::ActiveBackup { active } => known(active.as_slice()),
            _ => known(plan.transmitting()),
        };
        let rx_members: Vec<usize> = known(
            &(0..ifindex.len())
                .filter(|&m| plan.collects(m))
                .collect::<Vec<_>>(),
        );
        let kind = if tx_members.is_empty() {
            Kind::Nothing
        } else {
            match plan {
                Plan::Hash { hash, .. } => hashed(hash, &tx_members, false, None),
                Plan::Adaptive { hash } => hashed(hash, &tx_members, true, None),
                Plan::Tlb { hash, active, .. } | Plan::Alb { hash, active, .. } => {
                    let alb = matches!(plan, Plan::Alb { .. });
                    // The active member receives group frames; without
                    // one (it cannot be: tlb picks among the usable),
                    // the first.
                    let pos = active
                        .and_then(|a| tx_members.iter().position(|&m| m == a))
                        .unwrap_or(0);
                    hashed(hash, &tx_members, true, Some((pos, alb)))
                }
                Plan::RoundRobin {
                    packets_per_member, ..
                } => Kind::RoundRobin(*packets_per_member),
                Plan::ActiveBackup { .. } => Kind::Active,
                Plan::Broadcast { .. } => Kind::Broadcast,
            }
        };
        let (macs, bond_mac) = match plan {
            Plan::Tlb { macs, .. } | Plan::Alb { macs, .. } => (
                tx_members
                    .iter()
                    .map(|&m| macs.members.get(m).copied().unwrap_or_default())
                    .collect(),
                macs.bond,
            ),
            _ => (Vec::new(), [0; 6]),
        };
        let index = |ms: &[usize]| -> Vec<u32> { ms.iter().filter_map(|&m| ifindex[m]).collect() };
        let ids = |ms: &[usize]| -> Vec<u16> { ms.iter().map(|&m| m as u16).collect() };
        Parts {
            kind,
            tx: index(&tx_members),
            tx_ids: ids(&tx_members),
            rx: index(&rx_members),
            rx_ids: ids(&rx_members),
            macs,
            bond_mac,
        }
    }

    /// The distribution to publish, delivering to interface `logical`.
    pub fn distribution(&self, logical: u32, faults: bool) -> Distribution<'_> {
        let spread = match &self.kind {
            // Round-robin over no member drops every frame.
            Kind::Nothing => Spread::RoundRobin {
                packets_per_member: 1,
            },
            Kind::Hash {
                policy,
                buckets,
                bucket_bytes,
                tlb,
            } => Spread::Hash {
                policy: *policy,
                buckets,
                tlb: tlb.map(|(active, alb)| Tlb {
                    active,
                    macs: &self.macs,
                    bond_mac: self.bond_mac,
                    alb,
                }),
                bucket_bytes: *bucket_bytes,
            },
            Kind::RoundRobin(n) => Spread::RoundRobin {
                packets_per_member: *n,
            },
            Kind::Active => Spread::Active(0),
            Kind::Broadcast => Spread::Broadcast { dedup: true },
        };
        Distribution {
            spread,
            tx: &self.tx,
            rx: &self.rx,
            logical,
            tx_ids: &self.tx_ids,
            rx_ids: &self.rx_ids,
            faults,
        }
    }
}

/// A hash plan over `members` (ascending, as the plan has them): the
/// policy's member `k` is `members[k]`, as Linux indexes its slave list,
/// and for `strong` the bucket table is translated from the plan's slots
/// to positions in `members` (so balance-alb's fallback, a client's
/// address mod the member count, picks the member the daemon would).
fn hashed(
    hash: &HashTable,
    members: &[usize],
    bucket_bytes: bool,
    tlb: Option<(usize, bool)>,
) -> Kind {
    let n = members.len();
    let buckets = match hash.bucket_members() {
        Some(owner) => {
            let slots: [u8; BUCKETS] = std::array::from_fn(|b| {
                owner[b]
                    .and_then(|m| members.iter().position(|&x| x == m))
                    .unwrap_or(b % n) as u8
            });
            BucketMap::from_slots(slots, n)
        }
        None => BucketMap::new(n),
    };
    match buckets {
        Ok(buckets) => Kind::Hash {
            policy: *hash.policy(),
            buckets: Box::new(buckets),
            bucket_bytes,
            tlb,
        },
        // More members than buckets: not reachable with MAX_MEMBERS = 256.
        Err(_) => Kind::Nothing,
    }
}

/// The running BPF data path of one bond: the programs, attached to the
/// logical interface and every present member.
pub struct KernelPath {
    dp: Datapath,
    logical: u32,
    /// Interface index by member number, for the members attached.
    ifindex: Vec<Option<u32>>,
    faults: bool,
    /// balance-alb clients as the kernel has them.
    clients: BTreeMap<Ipv4Addr, u32>,
}

impl KernelPath {
    /// Loads the programs and attaches them: egress to `logical`, ingress
    /// to each present member (`members[i]`: member `i`'s name, or `None`).
    /// Loss in `faults` (member number, probability) is injected on those
    /// members. Attached after any programs already there, so a path that
    /// replaces an older one takes over when the older one is dropped.
    pub fn start(
        logical: &str,
        members: &[Option<&str>],
        faults: &[(usize, f64)],
    ) -> Result<KernelPath, lagkit_bpf::Error> {
        let mut k = KernelPath::load(logical)?;
        k.attach_members(members, faults)?;
        Ok(k)
    }

    /// Loads the programs and attaches egress to `logical` only (what the
    /// engine choice tries; [`KernelPath::attach_members`] completes it).
    pub fn load(logical: &str) -> Result<KernelPath, lagkit_bpf::Error> {
        let mut dp = Datapath::load()?;
        let logical = dp.attach_egress(logical)?;
        Ok(KernelPath {
            dp,
            logical,
            ifindex: Vec::new(),
            faults: false,
            clients: BTreeMap::new(),
        })
    }

    /// Attaches ingress to each present member of a path that has none yet
    /// (see [`KernelPath::start`]).
    pub fn attach_members(
        &mut self,
        members: &[Option<&str>],
        faults: &[(usize, f64)],
    ) -> Result<(), lagkit_bpf::Error> {
        let mut ifindex = Vec::with_capacity(members.len());
        for m in members {
            ifindex.push(match m {
                Some(name) => Some(self.dp.attach_ingress(name)?),
                None => None,
            });
        }
        for &(m, p) in faults {
            if let Some(Some(i)) = ifindex.get(m) {
                self.dp.set_fault_loss(*i, p)?;
            }
        }
        self.ifindex = ifindex;
        self.faults = !faults.is_empty();
        Ok(())
    }

    /// Publishes `plan` (atomically as the programs see it); for
    /// balance-alb, brings the kernel's client table in line first.
    pub fn publish(&mut self, plan: &Plan) -> Result<(), lagkit_bpf::Error> {
        if let Plan::Alb { clients, .. } = plan {
            let want: BTreeMap<Ipv4Addr, u32> = clients
                .iter()
                .filter_map(|(ip, &m)| Some((*ip, self.ifindex.get(m).copied().flatten()?)))
                .collect();
            for ip in self.clients.keys() {
                if !want.contains_key(ip) {
                    self.dp.remove_alb_client(*ip)?;
                }
            }
            for (ip, i) in &want {
                if self.clients.get(ip) != Some(i) {
                    self.dp.set_alb_client(*ip, *i)?;
                }
            }
            self.clients = want;
        }
        let parts = Parts::new(plan, &self.ifindex);
        self.dp
            .configure(&parts.distribution(self.logical, self.faults))
    }

    /// Pins the links and counters into a new directory under `bond_dir`
    /// (see [`lagkit_bpf::Datapath::pin`]): from now on the kernel keeps
    /// forwarding with the last plan if the daemon dies.
    pub fn pin(&mut self, bond_dir: &std::path::Path) -> Result<(), lagkit_bpf::Error> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        self.dp
            .pin(&bond_dir.join(format!("{}-{n}", std::process::id())))
    }

    /// Detaches lagkit programs on this path's hooks that no daemon holds
    /// and reports other tools' programs there (see
    /// [`lagkit_bpf::Datapath::clear_strays`]).
    pub fn clear_strays(&self) -> Result<Vec<lagkit_bpf::Stray>, lagkit_bpf::Error> {
        self.dp.clear_strays()
    }

    /// Whether the links are pinned.
    pub fn is_pinned(&self) -> bool {
        self.dp.pinned().is_some()
    }

    /// Leaves the pinned programs forwarding (see
    /// [`lagkit_bpf::Datapath::leave_pinned`]).
    pub fn leave_pinned(self) {
        self.dp.leave_pinned();
    }

    /// Where the links are pinned, if they are.
    pub fn pinned(&self) -> Option<&std::path::Path> {
        self.dp.pinned()
    }

    /// The programs loaded (none if the kernel will not say).
    pub fn programs(&self) -> Vec<lagkit_bpf::Program> {
        self.dp.programs().unwrap_or_default()
    }

    /// What `lagkit status` shows of the data path: these programs, what is
    /// attached to each hook of bond `bond` (its egress) and of its present
    /// `members` (their ingress), whoever loaded it, and where the links
    /// are pinned.
    pub fn status<'a>(
        &self,
        bond: &str,
        members: impl IntoIterator<Item = &'a str>,
    ) -> crate::status::DatapathStatus {
        use crate::status::{AttachedStatus, DatapathStatus, ProgramStatus};
        let programs = self
            .programs()
            .into_iter()
            .map(|p| ProgramStatus {
                name: p.name.to_string(),
                id: p.id,
                tag: format!("{:016x}", p.tag),
            })
            .collect();
        let hooks = std::iter::once((bond, true)).chain(members.into_iter().map(|m| (m, false)));
        let attached = hooks
            .map(|(ifname, egress)| AttachedStatus {
                interface: ifname.to_string(),
                hook: if egress { "egress" } else { "ingress" }.to_string(),
                program_ids: lagkit_bpf::attached(ifname, egress).unwrap_or_default(),
            })
            .collect();
        DatapathStatus {
            programs,
            attached,
            pinned: self.pinned().map(|p| p.display().to_string()),
        }
    }

    /// Frames and bytes per member (by member number) as the programs
    /// counted them, and their drops.
    pub fn counters(&self) -> Option<lagkit_bpf::Counters> {
        self.dp.counters().ok()
    }

    /// Per-bucket load, for the adaptive rebalancer.
    pub fn bucket_load(&self) -> Option<[BucketLoad; BUCKETS]> {
        self.dp.bucket_load().ok()
    }
}

/// Sets the carrier of bond `bond`'s veth end: a veth has carrier while
/// its peer is up, so the idle peer is brought up or down. The kernel keeps
/// it as set when the daemon is gone, as it keeps the pinned programs.
pub fn set_carrier(bond: &str, on: bool) -> Result<(), lagkit_sys::Error> {
    lagkit_sys::link::set(&peer_name(bond), &lagkit_sys::link::LinkChange::up(on))
}

/// The logical interface of a BPF bond: a veth end named as the bond, its
/// peer idle.
pub fn create_logical(bond: &str) -> Result<Logical, lagkit_bpf::Error> {
    Logical::create(bond, &peer_name(bond))
}

/// The logical interface a killed daemon of `bond` left, if it is still
/// the one with index `ifindex`.
pub fn adopt_logical(bond: &str, ifindex: u32) -> Result<Logical, lagkit_bpf::Error> {
    Logical::adopt(bond, &peer_name(bond), ifindex)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::views as view;
    use crate::plan::{plan, Context, PlanState};
    use crate::settings::{BondMode, Settings};
    use lagkit_hash::FlowKey;

    const IFX: [Option<u32>; 4] = [Some(10), Some(11), None, Some(13)];

    fn planned(mode: BondMode, up: &[usize]) -> Plan {
        let mut v = view(4, up);
        for (i, m) in v.iter_mut().enumerate() {
            m.mac = [2, 0, 0, 0, 0, i as u8];
            m.distributing = m.usable;
            m.collecting = m.usable;
        }
        let s = Settings::new("b", &["m0", "m1", "m2", "m3"], mode);
        plan(&v, &s, &mut PlanState::default(), &Context::default())
    }

    #[test]
    fn hash_plans_keep_member_order_and_count_by_member_number() {
        let p = planned(BondMode::BalanceXor, &[0, 1, 3]);
        let parts = Parts::new(&p, &IFX);
        assert_eq!(parts.tx, [10, 11, 13]);
        assert_eq!(parts.tx_ids, [0, 1, 3]);
        assert_eq!(
            (parts.rx.clone(), parts.rx_ids.clone()),
            (vec![10, 11, 13], vec![0, 1, 3])
        );
        let d = parts.distribution(99, false);
        assert_eq!((d.logical, d.faults), (99, false));
        // Every flow's member, through the translated table, is the plan's.
        let Kind::Hash {
            buckets, policy, ..
        } = &parts.kind
        else {
            panic!("{:?}", parts.kind)
        };
        for port in 0..2000u16 {
            let key = FlowKey::tcp4([10, 0, 0, 1].into(), port, [10, 0, 0, 2].into(), 80);
            let pos = policy.select_in(&key, buckets).expect("a member");
            assert_eq!(
                Some(parts.tx_ids[pos] as usize),
                p.member_for(&key),
                "port {port}"
            );
        }
    }

    /// balance-tlb with `tlb_dynamic_lb = false` and layer3+4: the
    /// programs get the policy itself (not strong), with tlb's rewrite.
    #[test]
    fn tlb_without_dynamic_lb_gives_the_programs_its_policy() {
        let mut v = view(4, &[0, 1, 3]);
        for (i, m) in v.iter_mut().enumerate() {
            m.mac = [2, 0, 0, 0, 0, i as u8];
        }
        let mut s = Settings::new("b", &["m0", "m1", "m2", "m3"], BondMode::BalanceTlb);
        s.policy = "layer3+4".parse().unwrap();
        s.tlb_dynamic_lb = false;
        let p = plan(
            &v,
            &s.normalised(),
            &mut PlanState::default(),
            &Context::default(),
        );
        let parts = Parts::new(&p, &IFX);
        let Kind::Hash {
            buckets,
            policy,
            tlb,
            ..
        } = &parts.kind
        else {
            panic!("{:?}", parts.kind)
        };
        assert_eq!(policy.to_string(), "layer3+4");
        assert_eq!(*tlb, Some((0, false)));
        for port in 0..2000u16 {
            let key = FlowKey::tcp4([10, 0, 0, 1].into(), port, [10, 0, 0, 2].into(), 80);
            let pos = policy.select_in(&key, buckets).expect("a member");
            assert_eq!(
                Some(parts.tx_ids[pos] as usize),
                p.member_for(&key),
                "port {port}"
            );
        }
    }

    #[test]
    fn active_backup_sends_and_receives_on_the_active_member_only() {
        let p = planned(BondMode::ActiveBackup, &[1, 3]);
        let parts = Parts::new(&p, &IFX);
        assert_eq!(
            (parts.kind.clone(), parts.tx.clone()),
            (Kind::Active, vec![11])
        );
        assert_eq!(
            (parts.rx.clone(), parts.rx_ids.clone()),
            (vec![11], vec![1])
        );
    }

    #[test]
    fn nothing_usable_drops_everything() {
        let p = planned(BondMode::ActiveBackup, &[]);
        let parts = Parts::new(&p, &IFX);
        assert_eq!(
            (parts.kind.clone(), parts.tx.len(), parts.rx.len()),
            (Kind::Nothing, 0, 0)
        );
        assert!(matches!(
            parts.distribution(1, false).spread,
            Spread::RoundRobin { .. }
        ));
    }

    #[test]
    fn tlb_names_the_active_member_by_position_with_each_members_mac() {
        let p = planned(BondMode::BalanceTlb, &[1, 3]);
        let parts = Parts::new(&p, &IFX);
        let Kind::Hash {
            tlb, bucket_bytes, ..
        } = &parts.kind
        else {
            panic!("{:?}", parts.kind)
        };
        assert_eq!((*tlb, *bucket_bytes), (Some((0, false)), true));
        assert_eq!(parts.macs, [[2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 3]]);
        let p = planned(BondMode::BalanceAlb, &[0, 1, 3]);
        let Kind::Hash { tlb, .. } = Parts::new(&p, &IFX).kind else {
            panic!()
        };
        assert_eq!(tlb, Some((0, true)));
    }

    #[test]
    fn round_robin_and_broadcast_use_every_transmitting_member() {
        let p = planned(BondMode::BalanceRr, &[0, 3]);
        let parts = Parts::new(&p, &IFX);
        assert_eq!(
            (parts.kind.clone(), parts.tx.clone()),
            (Kind::RoundRobin(1), vec![10, 13])
        );
        let p = planned(BondMode::Broadcast, &[0, 1, 3]);
        let parts = Parts::new(&p, &IFX);
        assert_eq!((parts.kind.clone(), parts.tx.len()), (Kind::Broadcast, 3));
        assert!(matches!(
            parts.distribution(1, true).spread,
            Spread::Broadcast { dedup: true }
        ));
    }

    #[test]
    fn a_member_without_an_interface_is_left_out() {
        // Member 2 is usable in the view but has no interface index.
        let p = planned(BondMode::BalanceXor, &[0, 2]);
        let parts = Parts::new(&p, &IFX);
        assert_eq!(
            (parts.tx.clone(), parts.tx_ids.clone()),
            (vec![10], vec![0])
        );
    }

    #[test]
    fn the_peer_name_is_a_valid_interface_name_and_stable() {
        let a = peer_name("bond0");
        assert!(a.len() <= 15 && a.starts_with("lkp"), "{a}");
        assert_eq!(a, peer_name("bond0"));
        assert_ne!(a, peer_name("bond1"));
    }
}
