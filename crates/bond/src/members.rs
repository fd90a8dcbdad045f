//! The member interfaces a running bond holds, in the core's order: each
//! one's packet socket (behind a [`FaultInjector`] when the settings inject
//! loss on it), the settings to give back, and what keeps its frames from
//! the host stack.
//!
//! The core decides which members exist and what they do; this object
//! owns their devices: it takes a member through [`crate::member`] (after
//! checking that no other live bond holds it), gives it back as it was,
//! keeps the state file current, and says what the status report needs to
//! know of each device.

use crate::datapath::MemberDevice;
use crate::journal::{self, RunDir};
use crate::member::{self, MemberError, Saved, Want};
use crate::status::MemberOffloads;
use lagkit_bondcore::report::MemberFacts;
use lagkit_dataplane::{Device, FaultInjector, Isolation};
use lagkit_wire::MacAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// What is held of one member.
#[derive(Default)]
struct Held {
    dev: Option<Arc<dyn Device>>,
    saved: Option<Saved>,
    isolation: Option<Isolation>,
}

/// A member just taken: what the core needs to know of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Took {
    /// Its own MAC.
    pub mac: MacAddr,
    /// Its kernel ifindex (PAgP sends it as the port's ifindex).
    pub ifindex: Option<u32>,
}

/// How one member is taken.
#[derive(Debug, Clone, Copy)]
pub struct TakeSpec {
    /// What the bond sets on it.
    pub want: Want,
    /// The probability of dropping each frame it sends (`--fault-loss`).
    pub loss: Option<f64>,
}

/// The members' devices, by the core's index.
#[derive(Default)]
pub(crate) struct Members {
    held: Vec<Held>,
}

impl Members {
    /// `n` members, none taken yet.
    pub fn new(n: usize) -> Members {
        Members {
            held: (0..n).map(|_| Held::default()).collect(),
        }
    }

    /// How many members there are (taken or not).
    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// A new member at the end, not taken yet.
    pub fn push(&mut self) {
        self.held.push(Held::default());
    }

    /// Whether member `i`'s interface exists and the bond holds it.
    pub fn present(&self, i: usize) -> bool {
        self.held.get(i).is_some_and(|h| h.dev.is_some())
    }

    /// Takes member `i`, interface `name`, for bond `bond`: `Ok(None)` if
    /// it does not exist (yet), an error if another live bond holds it or
    /// it cannot be used (it is then left as it was). `between` runs after
    /// its originals are recorded and before it is changed (a test seam).
    pub fn take(
        &mut self,
        i: usize,
        name: &str,
        bond: &str,
        spec: TakeSpec,
        run: &mut RunDir,
        between: &mut dyn FnMut(&str),
    ) -> Result<Option<Took>, MemberError> {
        let ns_dir = run.dir().parent().map(PathBuf::from).unwrap_or_default();
        if let Some((owner, pid)) = journal::member_owner(&ns_dir, name, run.dir()) {
            return Err(MemberError::Setup {
                name: name.to_string(),
                what: format!(
                    "in use by bond {owner} (pid {pid}); a member belongs to one bond at a time"
                ),
            });
        }
        let t = match member::take_with(name, spec.want, run, between) {
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

    /// Gives member `i` (interface `name`) back as it was and forgets it
    /// in the state file; its socket stays open until [`Members::close`]
    /// or [`Members::remove`].
    pub fn give_back(&mut self, i: usize, name: &str, run: Option<&mut RunDir>) {
        let Some(h) = self.held.get_mut(i) else {
            return;
        };
        h.isolation = None;
        if let Some(saved) = h.saved.take() {
            member::restore(name, &saved);
        }
        if let Some(run) = run {
            run.forget(name);
        }
    }

    /// Member `i`'s interface is gone: its socket is closed (it was given
    /// back first).
    pub fn close(&mut self, i: usize) {
        if let Some(h) = self.held.get_mut(i) {
            h.dev = None;
        }
    }

    /// Member `i` leaves the bond (given back first); the later ones move
    /// down by one, as in the core.
    pub fn remove(&mut self, i: usize) {
        if i < self.held.len() {
            self.held.remove(i);
        }
    }

    /// Turns each held member's offloads off, or gives them back, as
    /// `keep(name)` now says (a reload that changed `offloads`).
    pub fn apply_offloads<'a>(
        &mut self,
        bond: &str,
        names: impl IntoIterator<Item = &'a str>,
        keep: impl Fn(&str) -> bool,
        run: &mut RunDir,
    ) {
        for (h, name) in self.held.iter_mut().zip(names) {
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

    /// Each member's device for the data path, by name in the core's order.
    pub fn devices<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Vec<MemberDevice> {
        self.held
            .iter()
            .zip(names)
            .map(|(h, name)| MemberDevice {
                name: name.to_string(),
                dev: h.dev.clone(),
            })
            .collect()
    }

    /// What the status report says of member `i`'s device (interface
    /// `name`); `kernel` when the BPF engine's ingress program isolates it.
    pub fn facts(&self, i: usize, name: &str, kernel: bool) -> MemberFacts {
        let h = self.held.get(i);
        let present = h.is_some_and(|h| h.dev.is_some());
        let (speed, duplex) = if present {
            lagkit_monitor::ethtool::speed_duplex(name)
        } else {
            (None, None)
        };
        MemberFacts {
            present,
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

    /// A handoff: the members stay as lagkit set them, for the next daemon
    /// to adopt (nothing is given back when this object goes).
    pub fn keep_as_set(&mut self) {
        for h in &mut self.held {
            h.saved = None;
        }
    }

    /// Gives every member back as it was (`names` in the core's order).
    pub fn give_all_back<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) {
        for (h, name) in self.held.iter_mut().zip(names) {
            h.isolation = None;
            if let Some(s) = h.saved.take() {
                member::restore(name, &s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_not_taken_are_absent_and_removal_shifts_the_rest() {
        let mut m = Members::new(2);
        m.push();
        assert_eq!(m.len(), 3);
        assert!(!(0..3).any(|i| m.present(i)));
        assert_eq!(m.drops(1), None);
        let facts = m.facts(1, "no-such-member0", true);
        assert!(!facts.present);
        assert_eq!(facts.isolation, None, "only a held member is isolated");
        assert_eq!(facts.speed, None);
        m.remove(1);
        m.remove(7);
        assert_eq!(m.len(), 2);
        let devs = m.devices(["a", "b"]);
        assert_eq!(
            devs.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert!(devs.iter().all(|d| d.dev.is_none()));
        // Nothing held: giving back touches nothing.
        m.give_back(0, "a", None);
        m.give_back(9, "z", None);
        m.give_all_back(["a", "b"]);
        m.close(0);
    }
}
