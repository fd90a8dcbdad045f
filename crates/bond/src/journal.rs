//! The bond's run directory: a lock that says who runs the bond, and a
//! state file that says what lagkit changed on the system, written
//! *before* each change is made.
//!
//! `/run/lagkit/<netns>/<bond>/` holds
//! - `lock`: held with `flock(2)` for as long as the daemon runs, and
//!   holding its pid. The kernel drops the lock when the process dies, even
//!   by SIGKILL, so "is the bond running?" is never answered from a stale
//!   pid file.
//! - `state.json`: each member's settings before lagkit touched them (MAC,
//!   MTU, up/down, ARP, IPv6, and the offload features it turned off) and the ingress filter lagkit installed when
//!   the kernel had no tcx. A start that finds this file while the lock is
//!   free knows the previous daemon died without cleaning up, and restores
//!   the recorded originals before it records anything new — so a SIGKILL
//!   never turns lagkit's own settings into the "originals".
//!
//! Both files and the directory are removed on a clean exit; the per-
//! namespace directory too when it is left empty.

use crate::member::{self, Saved};
use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// What lagkit changed on one member.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct MemberRecord {
    /// Interface name.
    pub name: String,
    /// Its settings before lagkit changed them.
    pub saved: Saved,
    /// The tc fallback filter, if lagkit installed one: whether it created
    /// the clsact qdisc as well.
    #[serde(default)]
    pub tc_filter: Option<bool>,
}

/// The contents of `state.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct State {
    /// The bond.
    pub bond: String,
    /// The daemon that wrote it.
    pub pid: u32,
    /// Members lagkit has changed and not yet given back.
    pub members: Vec<MemberRecord>,
    /// The BPF engine's pinned data path, which keeps forwarding if the
    /// daemon dies, and what a daemon adopting it needs to carry on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelRecord>,
}

/// A pinned BPF data path ([`crate::kernel`]) and the protocol state that
/// goes with it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct KernelRecord {
    /// The logical interface's index (a new interface of the same name is
    /// not the one the pins send to).
    pub logical_ifindex: u32,
    /// The members, numbered as the pinned programs count them.
    pub members: Vec<String>,
    /// The mode the plan in force was made for (Linux's name).
    pub mode: String,
    /// Per member (same order): the LACP partner it was aggregated with,
    /// if it was collecting and distributing.
    pub lacp: Vec<Option<PartnerRecord>>,
    /// Per member (same order): the PAgP partner of a member in the
    /// channel.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pagp: Vec<Option<PagpRecord>>,
    /// Written by a userspace engine's handoff: nothing is pinned, and the
    /// TAP and the members' sockets went to the next daemon as descriptors
    /// ([`lagkit_dataplane::handoff`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub userspace: bool,
}

pub use lagkit_bondcore::core::{PagpRecord, PartnerRecord, PortRecord};

/// Why the run directory could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Another daemon runs this bond.
    #[error("bond {bond} is already running (pid {pid}); stop it first (`kill {pid}` restores its members)")]
    Running {
        /// The bond.
        bond: String,
        /// The other daemon.
        pid: u32,
    },
    /// A file operation failed.
    #[error("{path}: {why}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The reason.
        why: String,
    },
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> JournalError {
    JournalError::Io {
        path: path.to_path_buf(),
        why: e.to_string(),
    }
}

/// A bond's run directory, locked by this process.
#[derive(Debug)]
pub struct RunDir {
    dir: PathBuf,
    lock: Option<Flock<File>>,
    state: State,
}

/// Reads the pid a lock file holds (0 when unreadable).
fn pid_in(path: &Path) -> u32 {
    fs::read_to_string(path)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// Locks `dir/lock` without waiting. `Ok(None)`: another process holds it.
fn try_lock(dir: &Path) -> Result<Option<Flock<File>>, JournalError> {
    let path = dir.join("lock");
    // The lock file is unlinked on exit; a lock taken on a file that was
    // unlinked (and perhaps re-created) meanwhile is no lock: try again.
    for _ in 0..8 {
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io_err(&path, e))?;
        let locked = match Flock::lock(f, FlockArg::LockExclusiveNonblock) {
            Ok(l) => l,
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => return Ok(None),
            Err((_, e)) => return Err(io_err(&path, e)),
        };
        let same = match (locked.metadata(), fs::metadata(&path)) {
            (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
            _ => false,
        };
        if same {
            return Ok(Some(locked));
        }
    }
    Err(io_err(&path, "the lock file keeps being replaced"))
}

impl RunDir {
    /// Takes `dir` for bond `bond`: fails if a live daemon holds it, and
    /// returns what a dead one left behind (already restored).
    pub fn acquire(dir: PathBuf, bond: &str) -> Result<(RunDir, Option<State>), JournalError> {
        let (mut rd, left) = RunDir::acquire_keeping(dir, bond)?;
        rd.restore_left(left.as_ref())?;
        Ok((rd, left))
    }

    /// [`RunDir::acquire`] without the restore: the members a dead daemon
    /// recorded stay recorded (a daemon that adopts its data path takes
    /// them over as they are; [`RunDir::restore_left`] gives them back).
    pub fn acquire_keeping(
        dir: PathBuf,
        bond: &str,
    ) -> Result<(RunDir, Option<State>), JournalError> {
        fs::create_dir_all(&dir).map_err(|e| io_err(&dir, e))?;
        let Some(mut lock) = try_lock(&dir)? else {
            return Err(JournalError::Running {
                bond: bond.to_string(),
                pid: pid_in(&dir.join("lock")),
            });
        };
        let pid = std::process::id();
        let lock_path = dir.join("lock");
        lock.set_len(0).map_err(|e| io_err(&lock_path, e))?;
        lock.rewind().map_err(|e| io_err(&lock_path, e))?;
        write!(lock, "{pid}").map_err(|e| io_err(&lock_path, e))?;
        let mut rd = RunDir {
            dir,
            lock: Some(lock),
            state: State {
                bond: bond.to_string(),
                pid,
                members: Vec::new(),
                kernel: None,
            },
        };
        let left = rd.read_state()?;
        if let Some(old) = &left {
            rd.state.members = old.members.clone();
            rd.state.kernel = old.kernel.clone();
        }
        rd.write()?;
        Ok((rd, left))
    }

    /// Gives back every member `left` recorded (what a dead daemon left
    /// changed) and forgets them and its data path.
    pub fn restore_left(&mut self, left: Option<&State>) -> Result<(), JournalError> {
        if let Some(old) = left {
            restore_all(old);
        }
        self.state.members.clear();
        self.state.kernel = None;
        self.write()
    }

    /// Records the pinned data path (or that there is none).
    pub fn set_kernel(&mut self, k: Option<KernelRecord>) -> Result<(), JournalError> {
        if self.state.kernel == k {
            return Ok(());
        }
        self.state.kernel = k;
        self.write()
    }

    /// The pinned data path recorded.
    pub fn kernel(&self) -> Option<&KernelRecord> {
        self.state.kernel.as_ref()
    }

    fn state_path(&self) -> PathBuf {
        self.dir.join("state.json")
    }

    fn read_state(&self) -> Result<Option<State>, JournalError> {
        let path = self.state_path();
        let mut text = String::new();
        match File::open(&path) {
            Ok(mut f) => f.read_to_string(&mut text).map_err(|e| io_err(&path, e))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(&path, e)),
        };
        match serde_json::from_str::<State>(&text) {
            Ok(s) => Ok(Some(s)),
            Err(e) => {
                // Never lose what it may say: keep it aside and go on.
                let aside = self.dir.join("state.json.corrupt");
                let _ = fs::rename(&path, &aside);
                tracing::error!(file = %path.display(), error = %e, kept = %aside.display(), "state file unreadable; members may need restoring by hand");
                Ok(None)
            }
        }
    }

    /// Writes the state file (atomically: a temporary file renamed over it).
    fn write(&self) -> Result<(), JournalError> {
        let path = self.state_path();
        let tmp = self.dir.join("state.json.tmp");
        let text = serde_json::to_vec_pretty(&self.state).map_err(|e| io_err(&path, e))?;
        let mut f = File::create(&tmp).map_err(|e| io_err(&tmp, e))?;
        f.write_all(&text).map_err(|e| io_err(&tmp, e))?;
        f.sync_data().map_err(|e| io_err(&tmp, e))?;
        fs::rename(&tmp, &path).map_err(|e| io_err(&path, e))
    }

    /// Records a member's originals; call before changing anything on it.
    pub fn record(&mut self, rec: MemberRecord) -> Result<(), JournalError> {
        self.state.members.retain(|m| m.name != rec.name);
        self.state.members.push(rec);
        self.write()
    }

    /// Notes the fallback tc filter on a recorded member.
    pub fn note_tc_filter(&mut self, name: &str, created_qdisc: bool) -> Result<(), JournalError> {
        if let Some(m) = self.state.members.iter_mut().find(|m| m.name == name) {
            m.tc_filter = Some(created_qdisc);
        }
        self.write()
    }

    /// Replaces a recorded member's originals, when a reload changes what
    /// lagkit changes on it; call before making that change.
    pub fn update(&mut self, name: &str, saved: &Saved) -> Result<(), JournalError> {
        if let Some(m) = self.state.members.iter_mut().find(|m| m.name == name) {
            m.saved = saved.clone();
        }
        self.write()
    }

    /// Forgets a member that was given back.
    pub fn forget(&mut self, name: &str) {
        self.state.members.retain(|m| m.name != name);
        if let Err(e) = self.write() {
            tracing::warn!("{e}");
        }
    }

    /// The run directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The members recorded now.
    pub fn members(&self) -> &[MemberRecord] {
        &self.state.members
    }

    /// Unlocks and leaves the state file, for the daemon that adopts what
    /// it records.
    pub fn leave(mut self) {
        self.lock.take();
    }

    /// Removes the state file, the lock and the directory (and the
    /// namespace's directory if that leaves it empty), then unlocks.
    pub fn release(mut self) {
        self.release_inner();
    }

    fn release_inner(&mut self) {
        let Some(lock) = self.lock.take() else {
            return;
        };
        let _ = fs::remove_file(self.state_path());
        let _ = fs::remove_file(self.dir.join("lock"));
        let _ = fs::remove_dir(&self.dir);
        if let Some(parent) = self.dir.parent() {
            // Fails (and is meant to) while other bonds' files are there.
            let _ = fs::remove_dir(parent);
        }
        drop(lock);
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        self.release_inner();
    }
}

/// Gives every member recorded in `state` back its originals.
pub fn restore_all(state: &State) {
    for m in &state.members {
        tracing::warn!(bond = %state.bond, member = %m.name, pid = state.pid, "restoring a member a previous lagkit left changed");
        member::restore(&m.name, &m.saved);
        if let Some(created) = m.tc_filter {
            lagkit_dataplane::isolate::remove_tc_filter(&m.name, created);
        }
    }
}

/// A live bond (other than `except`) in the namespace directory `ns_dir`
/// that has member `name`: its bond name and pid.
pub fn member_owner(ns_dir: &Path, name: &str, except: &Path) -> Option<(String, u32)> {
    for entry in fs::read_dir(ns_dir).ok()?.flatten() {
        let dir = entry.path();
        if dir == except || !dir.is_dir() {
            continue;
        }
        let Ok(text) = fs::read_to_string(dir.join("state.json")) else {
            continue;
        };
        let Ok(state) = serde_json::from_str::<State>(&text) else {
            continue;
        };
        if !state.members.iter().any(|m| m.name == name) {
            continue;
        }
        // Live only if its lock is held (by whichever process).
        match try_lock(&dir) {
            Ok(None) => return Some((state.bond, pid_in(&dir.join("lock")))),
            Ok(Some(l)) => drop(l),
            Err(_) => {}
        }
    }
    None
}

/// `lagkit down`: detaches the data path a bond that is no longer running
/// left pinned, restores what it left changed, and removes its run
/// directory. Returns the members restored.
pub fn down(dir: PathBuf, bond: &str) -> Result<Vec<String>, JournalError> {
    if !dir.exists() {
        crate::kernel::release_pins(bond);
        return Ok(Vec::new());
    }
    let (mut rd, left) = RunDir::acquire_keeping(dir, bond)?;
    // No daemon runs it (the lock is ours): a data path it left pinned
    // stops forwarding before the members are given back.
    let pinned = crate::kernel::release_pins(bond);
    if pinned > 0 {
        tracing::info!(
            bond,
            links = pinned,
            "detached the data path a killed lagkit left forwarding"
        );
    }
    rd.restore_left(left.as_ref())?;
    rd.release();
    Ok(left
        .map(|s| s.members.into_iter().map(|m| m.name).collect())
        .unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("lk-journal-{}-{tag}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn second_acquire_is_refused_with_the_pid_and_release_removes_everything() {
        let ns = tmp("lock");
        let dir = ns.join("bond0");
        let (rd, left) = RunDir::acquire(dir.clone(), "bond0").unwrap();
        assert!(left.is_none());
        assert!(dir.join("state.json").exists());
        match RunDir::acquire(dir.clone(), "bond0") {
            Err(JournalError::Running { pid, .. }) => assert_eq!(pid, std::process::id()),
            other => panic!("unexpected {other:?}"),
        }
        rd.release();
        assert!(!dir.exists(), "run directory removed");
        assert!(!ns.exists(), "empty namespace directory removed");
    }

    #[test]
    fn a_dead_daemons_state_is_returned_and_replaced() {
        let ns = tmp("dead");
        let dir = ns.join("bond0");
        fs::create_dir_all(&dir).unwrap();
        let old = State {
            bond: "bond0".into(),
            pid: 999_999,
            members: vec![MemberRecord {
                name: "lkj-nonexistent".into(),
                saved: Saved::for_test(1500),
                tc_filter: None,
            }],
            kernel: None,
        };
        fs::write(dir.join("state.json"), serde_json::to_vec(&old).unwrap()).unwrap();
        let (rd, left) = RunDir::acquire(dir.clone(), "bond0").unwrap();
        assert_eq!(left, Some(old));
        assert!(rd.members().is_empty(), "the new state starts empty");
        let text = fs::read_to_string(dir.join("state.json")).unwrap();
        assert!(!text.contains("lkj-nonexistent"));
        drop(rd);
        assert!(!ns.exists());
    }

    #[test]
    fn offload_records_round_trip_and_old_files_still_load() {
        // A state file from before `offloads` existed.
        let old = r#"{"bond":"bond0","pid":7,"members":[{"name":"eth1","saved":{"mac":[2,0,0,0,0,1],"mtu":1500,"up":false,"noarp":false,"disable_ipv6":"0\n"}}]}"#;
        let s: State = serde_json::from_str(old).unwrap();
        assert_eq!(s.members[0].saved, Saved::for_test(1500));
        assert!(!s.members[0].saved.offloads_off());
        assert!(s.members[0].saved.offloads_turned_off().is_empty());
        // Without offloads the file is written as before.
        let text = serde_json::to_string(&s).unwrap();
        assert!(!text.contains("offloads"), "{text}");

        let ns = tmp("offloads");
        let dir = ns.join("bond0");
        let (mut rd, _) = RunDir::acquire(dir.clone(), "bond0").unwrap();
        let saved =
            Saved::for_test_offloads(1500, &["tx-checksum-ip-generic", "tx-generic-segmentation"]);
        rd.record(MemberRecord {
            name: "lkj-nonexistent".into(),
            saved: Saved::for_test(1500),
            tc_filter: Some(true),
        })
        .unwrap();
        rd.update("lkj-nonexistent", &saved).unwrap();
        let back: State =
            serde_json::from_str(&fs::read_to_string(dir.join("state.json")).unwrap()).unwrap();
        assert_eq!(back.members[0].saved, saved);
        assert_eq!(
            back.members[0].tc_filter,
            Some(true),
            "update keeps the filter note"
        );
        assert_eq!(
            back.members[0].saved.offloads_turned_off(),
            ["tx-checksum-ip-generic", "tx-generic-segmentation"]
        );
        drop(rd);
        // As a daemon killed then would leave it: the next start returns
        // the record (and restores it; no such interface, so a no-op).
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("state.json"), serde_json::to_vec(&back).unwrap()).unwrap();
        let (rd, left) = RunDir::acquire(dir.clone(), "bond0").unwrap();
        assert_eq!(left.unwrap().members[0].saved, saved);
        drop(rd);
        let _ = fs::remove_dir_all(&ns);
    }

    /// A daemon that may adopt a dead one's data path keeps its records
    /// (and its kernel record) until it decides; restoring forgets both.
    #[test]
    fn acquire_keeping_carries_the_records_until_restored() {
        let ns = tmp("keeping");
        let dir = ns.join("bond0");
        fs::create_dir_all(&dir).unwrap();
        let partner = lagkit_wire::PortInfo {
            system: lagkit_wire::SystemId::new(32768, lagkit_wire::MacAddr([2, 0, 0, 0, 0, 9])),
            key: 13,
            port_priority: 255,
            port: 2,
            state: lagkit_wire::PortState(0x3d),
        };
        let old = State {
            bond: "bond0".into(),
            pid: 999_998,
            members: vec![MemberRecord {
                name: "lkj-nonexistent".into(),
                saved: Saved::for_test(1500),
                tc_filter: None,
            }],
            kernel: Some(KernelRecord {
                logical_ifindex: 7,
                members: vec!["lkj-nonexistent".into()],
                mode: "IEEE 802.3ad Dynamic link aggregation".into(),
                lacp: vec![Some(PartnerRecord::of(&partner))],
                pagp: Vec::new(),
                userspace: false,
            }),
        };
        fs::write(dir.join("state.json"), serde_json::to_vec(&old).unwrap()).unwrap();
        let (mut rd, left) = RunDir::acquire_keeping(dir.clone(), "bond0").unwrap();
        assert_eq!(left.as_ref(), Some(&old));
        assert_eq!(rd.members(), old.members.as_slice());
        assert_eq!(rd.kernel(), old.kernel.as_ref());
        assert_eq!(rd.kernel().unwrap().lacp[0].unwrap().info(), partner);
        let on_disk: State =
            serde_json::from_str(&fs::read_to_string(dir.join("state.json")).unwrap()).unwrap();
        assert_eq!(
            (on_disk.members, on_disk.kernel),
            (old.members.clone(), old.kernel.clone())
        );
        rd.restore_left(left.as_ref()).unwrap();
        assert!(rd.members().is_empty() && rd.kernel().is_none());
        drop(rd);
        let _ = fs::remove_dir_all(&ns);
    }

    #[test]
    fn a_corrupt_state_file_is_kept_aside() {
        let ns = tmp("corrupt");
        let dir = ns.join("bond0");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("state.json"), b"{not json").unwrap();
        let (rd, left) = RunDir::acquire(dir.clone(), "bond0").unwrap();
        assert!(left.is_none());
        assert!(dir.join("state.json.corrupt").exists());
        drop(rd);
        assert!(dir.join("state.json.corrupt").exists(), "never deleted");
        let _ = fs::remove_dir_all(&ns);
    }

    #[test]
    fn members_of_live_bonds_are_found() {
        let ns = tmp("owner");
        let (mut a, _) = RunDir::acquire(ns.join("bond1"), "bond1").unwrap();
        a.record(MemberRecord {
            name: "eth1".into(),
            saved: Saved::for_test(1500),
            tc_filter: None,
        })
        .unwrap();
        let me = ns.join("bond2");
        assert_eq!(
            member_owner(&ns, "eth1", &me),
            Some(("bond1".to_string(), std::process::id()))
        );
        assert_eq!(member_owner(&ns, "eth2", &me), None);
        a.forget("eth1");
        assert_eq!(member_owner(&ns, "eth1", &me), None);
        drop(a);
        let _ = fs::remove_dir_all(&ns);
    }
}
