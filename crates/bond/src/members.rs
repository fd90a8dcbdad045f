//! The member interfaces a running bond holds, in the core's order: each
//! one's packet socket (behind a [`FaultInjector`] when the settings inject
//! loss on it), the settings to give back, and what keeps its frames from
//! the host stack.
//!
//! The core decides which members exist and what they do; this object
//! owns their devices and the bond's run directory: it takes a member
//! through [`crate::member`] (after checking that no other live bond holds
//! it), gives it back as it was, keeps the state file current, and says
//! what the status report needs to know of each device.

use crate::core::TakeSpec;
use crate::datapath::MemberDevice;
use crate::error::BondError;
use crate::journal::{self, KernelRecord, RunDir};
use crate::member::{self, MemberError, Saved, Want};
use crate::status::MemberOffloads;
use lagkit_bondcore::report::MemberFacts;
use lagkit_dataplane::{Device, FaultInjector, Isolation};
use lagkit_wire::MacAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// What is held of one member.
struct Held {
    name: String,
    dev: Option<Arc<dyn Device>>,
    saved: Option<Saved>,
    isolation: Option<Isolation>,
    /// Why it was not taken: the host still uses it.
    refused: Option<String>,
    /// Its descriptors as a previous daemon handed them over, until it is
    /// taken with them.
    handed: Option<member::Handed>,
}

/// A member just taken: what the core needs to know of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Took {
    /// Its own MAC.
    pub mac: MacAddr,
    /// Its kernel ifindex (PAgP sends it as the port's ifindex).
    pub ifindex: Option<u32>,
}

/// The members' devices, by the core's index, and the run directory
/// whose state file records them.
pub(crate) struct Members {
    held: Vec<Held>,
    /// `None` once released or left for the next daemon (or in tests).
    run: Option<RunDir>,
}

impl Held {
    fn new(name: String) -> Held {
        Held {
            name,
            dev: None,
            saved: None,
            isolation: None,
            refused: None,
            handed: None,
        }
    }
}

impl Members {
    /// Members `names`, in the core's order, none taken yet.
    pub fn new(names: impl IntoIterator<Item = String>, run: Option<RunDir>) -> Members {
        Members {
            held: names.into_iter().map(Held::new).collect(),
            run,
        }
    }

    /// The descriptors a previous daemon handed over, by member: each
    /// member is taken with its own instead of new ones.
    pub fn hand(&mut self, handed: Vec<(String, member::Handed)>) {
        for (name, h) in handed {
            if let Some(held) = self.held.iter_mut().find(|m| m.name == name) {
                held.handed = Some(h);
            }
        }
    }

    /// Hands every member's packet socket and isolation to the next
    /// daemon of bond `bond` ([`lagkit_dataplane::handoff`]); returns how
    /// many members were handed.
    pub fn hand_over(&mut self, bond: &str) -> usize {
        use lagkit_dataplane::handoff;
        let mut n = 0;
        for h in &mut self.held {
            let Some(dev) = h.dev.as_ref() else { continue };
            match dev.poll_fd().try_clone_to_owned() {
                Ok(fd) => handoff::give(handoff::name(bond, "sock", Some(&h.name)), fd),
                Err(e) => {
                    tracing::warn!(bond = %bond, member = %h.name, error = %e, "cannot hand the member's socket over");
                    continue;
                }
            }
            if let Some(fd) = h.isolation.take().and_then(|i| i.hand_over()) {
                handoff::give(handoff::name(bond, "isolation", Some(&h.name)), fd);
            }
            n += 1;
        }
        n
    }

    /// The run directory, while the bond holds it.
    pub fn run(&self) -> Option<&RunDir> {
        self.run.as_ref()
    }

    /// How many members there are (taken or not).
    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// A new member at the end, not taken yet.
    pub fn push(&mut self, name: String) {
        self.held.push(Held::new(name));
    }

    /// Whether member `i`'s interface exists and the bond holds it.
    pub fn present(&self, i: usize) -> bool {
        self.held.get(i).is_some_and(|h| h.dev.is_some())
    }

    /// The live bond (and its daemon's pid) other than this one that holds
    /// interface `name`.
    fn owner(run: &RunDir, name: &str) -> Option<(String, u32)> {
        let ns_dir = run.dir().parent().map(PathBuf::from).unwrap_or_default();
        journal::member_owner(&ns_dir, name, run.dir())
    }

    /// Refuses bond `bond` the members when another live bond holds one
    /// (the error names that bond and its daemon's pid), or when the host
    /// still uses one that `force` does not list
    /// ([`crate::guard::check`]): a start checks before it touches
    /// anything. A member a killed daemon left recorded in the state file
    /// is this bond's already.
    pub fn ensure_free(&self, bond: &str, force: &[String]) -> Result<(), BondError> {
        let Some(run) = self.run.as_ref() else {
            return Ok(());
        };
        for h in &self.held {
            if run.members().iter().any(|m| m.name == h.name) {
                continue;
            }
            crate::guard::check(&h.name, force).map_err(|why| BondError::MemberInUse {
                bond: bond.to_string(),
                why,
            })?;
        }
        let held = (self.held.iter()).find_map(|h| Some((&h.name, Members::owner(run, &h.name)?)));
        match held {
            Some((member, (owner, pid))) => Err(BondError::InUse {
                bond: bond.to_string(),
                member: member.clone(),
                owner,
                pid,
            }),
            None => Ok(()),
        }
    }

    /// Writes what a daemon adopting the pinned data path needs (`rec`)
    /// to the state file, when it changed.
    pub fn record_kernel(&mut self, bond: &str, rec: Option<KernelRecord>) {
        if let Some(Err(e)) = self.run.as_mut().map(|run| run.set_kernel(rec)) {
            tracing::warn!(bond = %bond, error = %e, "state file not updated");
        }
    }

    /// The members as the state file's pinned data path numbers them (an
    /// adopted one's, until this daemon's own is recorded).
    pub fn kernel_numbering(&self) -> Option<Vec<String>> {
        Some(self.run.as_ref()?.kernel()?.members.clone())
    }

    /// Takes member `i` for bond `bond` as the core's `spec` says (`kernel`:
    /// the BPF engine moves its data frames): `Ok(None)` if its interface
    /// does not exist (yet) or the bond is shutting down, an error if
    /// another live bond holds it or it cannot be used (it is then left as
    /// it was). `between` runs after its originals are recorded and before
    /// it is changed (a test seam).
    pub fn take(
        &mut self,
        i: usize,
        bond: &str,
        spec: TakeSpec,
        kernel: bool,
        between: &mut dyn FnMut(&str),
    ) -> Result<Option<Took>, MemberError> {
        let (Some(h), Some(run)) = (self.held.get(i), self.run.as_mut()) else {
            return Ok(None);
        };
        let name = h.name.clone();
        let name = name.as_str();
        if let Some((owner, pid)) = Members::owner(run, name) {
            return Err(MemberError::Setup {
                name: name.to_string(),
                what: format!(
                    "in use by bond {owner} (pid {pid}); a member belongs to one bond at a time"
                ),
            });
        }
        let recorded = run.members().iter().any(|m| m.name == name);
        if !recorded {
            let verdict = crate::guard::check(name, &spec.force);
            self.held[i].refused = verdict.as_ref().err().cloned();
            verdict.map_err(|what| MemberError::Refused {
                name: name.to_string(),
                what,
            })?;
        }
        let want = Want {
            alias: crate::upper::member_alias(bond),
            mtu: spec.mtu,
            keep_offloads: spec.keep_offloads,
            kernel,
            snoop: spec.snoop,
        };
        let handed = self.held[i].handed.take();
        let Some(run) = self.run.as_mut() else {
            return Ok(None);
        };
        let t = match member::take_with(name, want, run, handed, between) {
            Ok(t) => t,
            Err(MemberError::Missing(_)) => {
                tracing::warn!(bond = %bond, member = %name, "member missing; waiting for it to appear");
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        let dev: Arc<dyn Device> = match spec.loss {
            Some(p) => {
                // Seeded by the member's position: the same frames meet
                // the same fate run after run.
                let f = FaultInjector::new(t.sock, 0x6c61_676b_0000 + i as u64);
                f.control().set_drop_probability(p);
                tracing::warn!(bond = %bond, member = %name, loss = p, "injecting loss on this member (--fault-loss)");
                Arc::new(f)
            }
            None => Arc::new(t.sock),
        };
        tracing::info!(bond = %bond, member = %name, isolation = t.isolation.as_ref().map_or("bpf-ingress", |i| i.kind()), offloads_turned_off = ?t.saved.offloads_turned_off(), "member taken");
        let h = &mut self.held[i];
        h.dev = Some(dev);
        h.saved = Some(t.saved);
        h.isolation = t.isolation;
        let ifindex = lagkit_dataplane::Link::open(name)
            .ok()
            .and_then(|l| l.ifindex().ok())
            .filter(|&x| x != 0);
        Ok(Some(Took {
            mac: MacAddr(t.mac),
            ifindex,
        }))
    }

    /// Gives member `i` back as it was and forgets it in the state file;
    /// its socket stays open until [`Members::gone`] or
    /// [`Members::remove`].
    fn give_back(&mut self, i: usize) {
        let Some(h) = self.held.get_mut(i) else {
            return;
        };
        h.isolation = None;
        if let Some(saved) = h.saved.take() {
            member::restore(&h.name, &saved);
        }
        if let Some(run) = self.run.as_mut() {
            run.forget(&h.name);
        }
    }

    /// Member `i`'s interface is gone: whatever is left of it is given
    /// back and its socket closed; it stays a member, to be taken again
    /// when it comes back.
    pub fn gone(&mut self, i: usize) {
        self.give_back(i);
        if let Some(h) = self.held.get_mut(i) {
            h.dev = None;
        }
    }

    /// Member `i` leaves the bond: it is given back and the later ones
    /// move down by one, as in the core ([`Core::forget_leaving`]).
    ///
    /// [`Core::forget_leaving`]: crate::core::Core::forget_leaving
    pub fn remove(&mut self, i: usize) {
        self.give_back(i);
        if i < self.held.len() {
            self.held.remove(i);
        }
    }

    /// Turns each held member's offloads off, or gives them back, as
    /// `keep(name)` now says (a reload that changed `offloads`).
    pub fn apply_offloads(&mut self, bond: &str, keep: impl Fn(&str) -> bool) {
        let Some(run) = self.run.as_mut() else {
            return;
        };
        for h in &mut self.held {
            let name = h.name.as_str();
            let keep = keep(name);
            let Some(saved) = h.saved.as_mut().filter(|s| s.offloads_off() == keep) else {
                continue;
            };
            match member::set_offloads(name, keep, saved, run) {
                Ok(()) => {
                    tracing::info!(bond = %bond, member = %name, offloads = if keep { "given back" } else { "off" }, "member offloads changed by reload")
                }
                Err(e) => tracing::error!(bond = %bond, error = %e, "offloads unchanged"),
            }
        }
    }

    /// Sets member `i`'s MAC (one of `fail_over_mac`'s moves); a failure
    /// is logged, and the member keeps the MAC it has.
    pub fn set_mac(&self, bond: &str, i: usize, mac: MacAddr) {
        let Some(h) = self.held.get(i) else {
            return;
        };
        let link = lagkit_dataplane::Link::open(&h.name).map_err(|e| e.to_string());
        if let Err(e) = link.and_then(|l| l.set_mac(mac.0).map_err(|e| e.to_string())) {
            tracing::warn!(bond = %bond, member = %h.name, %mac, error = %e, "fail_over_mac: MAC not moved");
        }
    }

    /// Each member's device for the data path, by name in the core's order.
    pub fn devices(&self) -> Vec<MemberDevice> {
        (self.held.iter())
            .map(|h| MemberDevice {
                name: h.name.clone(),
                dev: h.dev.clone(),
            })
            .collect()
    }

    /// The members' names, in the core's order.
    pub fn names(&self) -> Vec<String> {
        self.held.iter().map(|h| h.name.clone()).collect()
    }

    /// What the status report says of each member's device; `kernel` when
    /// the BPF engine's ingress program isolates them.
    pub fn facts(&self, kernel: bool) -> Vec<MemberFacts> {
        self.held
            .iter()
            .map(|h| Members::facts_of(h, kernel))
            .collect()
    }

    /// Member `i`'s speed in Mbit/s and full duplex, where its driver says
    /// (nothing for a member the bond does not hold).
    pub fn link_of(&self, i: usize) -> (Option<u32>, Option<bool>) {
        match self.held.get(i) {
            Some(h) if h.dev.is_some() => lagkit_monitor::ethtool::speed_duplex(&h.name),
            _ => (None, None),
        }
    }

    fn facts_of(h: &Held, kernel: bool) -> MemberFacts {
        let name = h.name.as_str();
        let present = h.dev.is_some();
        let h = Some(h);
        let (speed, duplex) = if present {
            lagkit_monitor::ethtool::speed_duplex(name)
        } else {
            (None, None)
        };
        MemberFacts {
            present,
            refused: h.and_then(|h| h.refused.clone()),
            speed,
            duplex,
            isolation: match h.and_then(|h| h.isolation.as_ref()) {
                Some(iso) => Some(iso.kind().to_string()),
                None if present && kernel => Some("bpf-ingress".into()),
                None => None,
            },
            offloads: h.and_then(|h| h.saved.as_ref()).and_then(|saved| {
                let now = crate::offloads::groups(name)?;
                Some(MemberOffloads {
                    tx: now.tx,
                    tso: now.tso,
                    gso: now.gso,
                    kept_off: saved.offloads_off(),
                    turned_off: saved.offloads_turned_off().to_vec(),
                })
            }),
        }
    }

    /// The frames member `i`'s socket dropped, if it is held.
    pub fn drops(&self, i: usize) -> Option<u64> {
        let dev = self.held.get(i)?.dev.as_ref()?;
        Some(dev.counters().snapshot().dropped_total())
    }

    /// A handoff: the members stay as lagkit set them, and the run
    /// directory as it is, for the next daemon to adopt (nothing is given
    /// back when this object goes).
    pub fn leave_as_set(&mut self) {
        for h in &mut self.held {
            h.saved = None;
        }
        if let Some(run) = self.run.take() {
            run.leave();
        }
    }

    /// Gives every member back as it was and releases the run directory;
    /// false if it was already released (or left for the next daemon).
    pub fn release(&mut self) -> bool {
        let Some(run) = self.run.take() else {
            return false;
        };
        for h in &mut self.held {
            h.isolation = None;
            if let Some(s) = h.saved.take() {
                member::restore(&h.name, &s);
            }
        }
        run.release();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_not_taken_are_absent_and_removal_shifts_the_rest() {
        let names = ["a", "b"].map(String::from);
        let mut m = Members::new(names, None);
        m.push("c".into());
        assert_eq!(m.len(), 3);
        assert!(!(0..3).any(|i| m.present(i)));
        assert_eq!(m.drops(1), None);
        let facts = m.facts(true);
        assert!(facts.iter().all(|f| !f.present));
        assert!(
            facts.iter().all(|f| f.isolation.is_none()),
            "only a held member is isolated"
        );
        assert!(facts.iter().all(|f| f.speed.is_none()));
        m.remove(1);
        m.remove(7);
        assert_eq!(m.names(), ["a", "c"]);
        let devs = m.devices();
        assert_eq!(
            devs.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(),
            ["a", "c"]
        );
        assert!(devs.iter().all(|d| d.dev.is_none()));
        // No run directory: nothing can be taken, nothing is given back.
        let spec = TakeSpec {
            mtu: None,
            keep_offloads: true,
            snoop: false,
            loss: None,
            force: Vec::new(),
        };
        let take = m.take(0, "bond0", spec, false, &mut |_| {});
        assert!(matches!(take, Ok(None)));
        m.gone(0);
        m.gone(9);
        assert!(
            m.ensure_free("bond0", &[]).is_ok(),
            "no run directory, no owner"
        );
        assert_eq!(m.kernel_numbering(), None);
        assert!(!m.release(), "nothing to release");
    }

    /// A member another live bond has recorded is refused, named with
    /// that bond and its daemon's pid; the bond's own records are not
    /// another's.
    #[test]
    fn a_member_another_live_bond_holds_is_refused_before_anything_is_touched() {
        let ns = std::env::temp_dir().join(format!("lk-members-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&ns);
        let (mut other, _) = RunDir::acquire(ns.join("bondA"), "bondA").expect("bondA");
        let record = |name: &str| journal::MemberRecord {
            name: name.into(),
            saved: Saved::for_test(1500),
            tc_filter: None,
        };
        other.record(record("lkm-x")).expect("record");
        let (mut own, _) = RunDir::acquire(ns.join("bondB"), "bondB").expect("bondB");
        own.record(record("lkm-y")).expect("record");
        let names = ["lkm-y", "lkm-x"].map(String::from);
        let m = Members::new(names, Some(own));
        match m.ensure_free("bondB", &[]) {
            Err(BondError::InUse {
                bond,
                member,
                owner,
                pid,
            }) => {
                assert_eq!((bond.as_str(), member.as_str()), ("bondB", "lkm-x"));
                assert_eq!((owner.as_str(), pid), ("bondA", std::process::id()));
            }
            other => panic!("{other:?}"),
        }
        let mut free = Members::new(["lkm-y".to_string()], m.run);
        assert!(free.ensure_free("bondB", &[]).is_ok(), "its own record");
        assert!(free.release());
        other.release();
        assert!(!ns.exists());
    }
}
