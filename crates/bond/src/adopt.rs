//! Adopting the data path a killed daemon left forwarding: its BPF
//! programs stay pinned and keep the last plan (see [`crate::kernel`]), and
//! a new daemon of the same bond takes them over without a gap, when
//! nothing it was made for has changed. [`compatible`] is that decision,
//! pure; [`Adoption::consider`] adds what only the system can say (the
//! pins and the logical interface are still there).

use crate::journal::{self, JournalError, KernelRecord, RunDir};
use crate::kernel::EngineChoice;
use crate::member::Handed;
use crate::settings::Settings;
use crate::upper::{EngineInfo, Upper};
use lagkit_dataplane::handoff;
use std::path::PathBuf;

/// What a start takes over from a previous daemon of the same bond: a
/// BPF data path still forwarding ([`lagkit_bpf::Adopted`]), or the
/// userspace engine's TAP and member sockets, handed over as descriptors
/// ([`lagkit_dataplane::handoff`]).
pub(crate) struct Adoption {
    /// The pinned programs and links (BPF engine).
    pub pinned: Option<lagkit_bpf::Adopted>,
    /// Per member, its socket and isolation (userspace engine).
    pub handed: Vec<(String, Handed)>,
    /// The logical interface they send to.
    pub upper: Upper,
    /// The engine, and why (adopted).
    pub info: EngineInfo,
    /// Per member, the LACP or PAgP partner it was bundled with.
    pub resume: Vec<journal::PortRecord>,
}

/// Whether a data path recorded as `k` was made for a bond configured as
/// `s` with members `names` (backup included, in order): the same members
/// and mode, and an engine that may be BPF. Otherwise, why not.
pub(crate) fn compatible(
    s: &Settings,
    names: &[String],
    k: &KernelRecord,
) -> Result<(), NotAdopted> {
    match (k.userspace, s.engine) {
        (false, EngineChoice::Userspace) => return Err(NotAdopted::Userspace),
        (true, EngineChoice::Bpf) => return Err(NotAdopted::Bpf),
        _ => {}
    }
    if k.members != names {
        return Err(NotAdopted::Members {
            was: k.members.clone(),
            now: names.to_vec(),
        });
    }
    if k.mode != s.mode.linux_name() {
        return Err(NotAdopted::Mode {
            was: k.mode.clone(),
            now: s.mode.linux_name().to_string(),
        });
    }
    Ok(())
}

impl Adoption {
    /// What a start does with what a previous daemon of bond `s.name` left
    /// (`left`, read from the run directory `run` it now holds): adopts its
    /// data path when [`Adoption::consider`] says it fits; otherwise
    /// detaches its pins, gives its members back, and removes its logical
    /// interface, so the start begins afresh.
    pub(crate) fn at_start(
        s: &Settings,
        names: &[String],
        run: &mut RunDir,
        left: Option<&journal::State>,
    ) -> Result<Option<Adoption>, JournalError> {
        let name = &s.name;
        if let Some(old) = left {
            match Adoption::consider(s, names, old) {
                Ok(a) => return Ok(Some(a)),
                Err(why) if old.kernel.is_some() => {
                    tracing::warn!(bond = %name, pid = old.pid, %why, "not adopting the data path a previous lagkit left forwarding; starting afresh");
                }
                Err(_) => {}
            }
        }
        // Descriptors a previous daemon handed over and nobody adopts:
        // closed now, or its TAP would stop a new one of its name.
        let closed = handoff::drop_owner(name);
        if !closed.is_empty() {
            tracing::warn!(bond = %name, descriptors = ?closed, "closed the descriptors a previous lagkit handed over: not adopting them");
        }
        let released = crate::kernel::release_pins(name);
        if released > 0 {
            tracing::warn!(bond = %name, links = released, "detached the data path a killed lagkit left pinned");
        }
        run.restore_left(left)?;
        if let Some(old) = left {
            tracing::warn!(bond = %name, pid = old.pid, members = old.members.len(), "a previous lagkit (pid {}) exited without cleaning up; its members were restored first", old.pid);
        }
        if crate::kernel::remove_leftover(name) {
            tracing::warn!(bond = %name, "removed the logical interface a killed lagkit left behind");
        }
        Ok(None)
    }

    /// Whether the data path `old` recorded can be adopted by a bond
    /// configured as `s` (members `names`, backup included): [`compatible`],
    /// and the pins and the logical interface still there. Otherwise, why
    /// not.
    pub(crate) fn consider(
        s: &Settings,
        names: &[String],
        old: &journal::State,
    ) -> Result<Adoption, NotAdopted> {
        let k = old.kernel.as_ref().ok_or(NotAdopted::NothingPinned)?;
        compatible(s, names, k)?;
        let resume = (0..names.len())
            .map(|i| journal::PortRecord {
                lacp: k.lacp.get(i).copied().flatten(),
                pagp: k.pagp.get(i).cloned().flatten(),
            })
            .collect();
        if k.userspace {
            return Adoption::handed(s, names, k, resume);
        }
        let dir = crate::kernel::pin_dir(&s.name)?;
        let pinned = match lagkit_bpf::Adopted::open(&dir) {
            Ok(Some(p)) if p.links() > 0 => p,
            Ok(_) => return Err(NotAdopted::NoLinks(dir)),
            Err(e) => return Err(NotAdopted::Pins(e.to_string())),
        };
        let (upper, info) = Upper::adopt(&s.name, k.logical_ifindex)?;
        Ok(Adoption {
            pinned: Some(pinned),
            handed: Vec::new(),
            upper,
            info,
            resume,
        })
    }

    /// The userspace engine's TAP and member sockets that the previous
    /// daemon handed over (the record `k` says which), if it did.
    fn handed(
        s: &Settings,
        names: &[String],
        k: &KernelRecord,
        resume: Vec<journal::PortRecord>,
    ) -> Result<Adoption, NotAdopted> {
        let bond = &s.name;
        let tap = handoff::take(&handoff::name(bond, "tap", None)).ok_or(NotAdopted::NotHanded)?;
        // A member absent at the handoff had no socket: it is taken afresh.
        let handed = (names.iter())
            .filter_map(|m| {
                let sock = handoff::take(&handoff::name(bond, "sock", Some(m)))?;
                let isolation = handoff::take(&handoff::name(bond, "isolation", Some(m)));
                Some((m.clone(), Handed { sock, isolation }))
            })
            .collect();
        let (upper, info) = Upper::adopt_tap(bond, tap, k.logical_ifindex)?;
        Ok(Adoption {
            pinned: None,
            handed,
            upper,
            info,
            resume,
        })
    }
}

/// Why a start does not adopt the data path a previous daemon left.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotAdopted {
    #[error("it left no pinned data path")]
    NothingPinned,
    #[error("engine = userspace is configured now")]
    Userspace,
    #[error("it ran the userspace engine, and engine = bpf is configured now")]
    Bpf,
    #[error("it ran the userspace engine and handed nothing over (only a handoff, SIGUSR2 or a service restart, passes the TAP and the sockets on; a killed userspace engine takes them with it)")]
    NotHanded,
    #[error("its members were {was:?}, the configuration now has {now:?}")]
    Members { was: Vec<String>, now: Vec<String> },
    #[error("its mode was {was}, the configuration now has {now}")]
    Mode { was: String, now: String },
    #[error("{0}")]
    NoBpffs(#[from] lagkit_bpf::NoBpffs),
    #[error("no pinned links in {}", .0.display())]
    NoLinks(PathBuf),
    #[error("its pins: {0}")]
    Pins(String),
    #[error("{0}")]
    Upper(#[from] crate::upper::UpperError),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::BondMode;

    fn record(members: &[&str], mode: &str) -> KernelRecord {
        KernelRecord {
            logical_ifindex: 7,
            members: members.iter().map(|m| m.to_string()).collect(),
            mode: mode.into(),
            lacp: Vec::new(),
            pagp: Vec::new(),
            userspace: false,
        }
    }

    fn names(s: &Settings) -> Vec<String> {
        s.members.clone()
    }

    #[test]
    fn only_the_same_members_and_mode_on_a_bpf_engine_are_adopted() {
        let s = Settings::new("bond0", &["eth1", "eth2"], BondMode::Lacp);
        let k = record(&["eth1", "eth2"], BondMode::Lacp.linux_name());
        assert!(compatible(&s, &names(&s), &k).is_ok());
        // Another order numbers the members differently in the programs.
        let e = compatible(
            &s,
            &names(&s),
            &record(&["eth2", "eth1"], BondMode::Lacp.linux_name()),
        )
        .unwrap_err();
        assert!(matches!(e, NotAdopted::Members { .. }), "{e}");
        assert!(e.to_string().contains("eth2"), "{e}");
        let e = compatible(
            &s,
            &names(&s),
            &record(&["eth1", "eth2"], BondMode::BalanceXor.linux_name()),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "its mode was load balancing (xor), the configuration now has IEEE 802.3ad Dynamic link aggregation"
        );
        let mut u = s.clone();
        u.engine = EngineChoice::Userspace;
        let e = compatible(&u, &names(&u), &k).unwrap_err();
        assert!(matches!(e, NotAdopted::Userspace), "{e}");
        // A userspace engine's handoff: adopted by a userspace or an auto
        // engine, not by one configured for BPF.
        let handed = KernelRecord {
            userspace: true,
            ..k.clone()
        };
        assert!(compatible(&u, &names(&u), &handed).is_ok());
        let mut auto = s.clone();
        auto.engine = EngineChoice::Auto;
        assert!(compatible(&auto, &names(&auto), &handed).is_ok());
        let mut bpf = s.clone();
        bpf.engine = EngineChoice::Bpf;
        let e = compatible(&bpf, &names(&bpf), &handed).unwrap_err();
        assert!(matches!(e, NotAdopted::Bpf), "{e}");
    }
}
