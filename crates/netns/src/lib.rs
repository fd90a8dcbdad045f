//! Named network namespaces, the one place the lab (`lagkit lab`) and the
//! root tests (`lagkit-testnet`) make and remove them.
//!
//! - [`list`], [`exists`], [`create`] (loopback up), [`delete`] (whatever
//!   still runs inside is killed first), [`remove`] (the name only: what
//!   runs inside goes on and cleans up when its owner stops it; a
//!   namespace already gone is not an error for either) and [`veth`] (a
//!   pair with one end in each namespace, never in the root namespace).
//! - [`Namespaces`]: the namespaces one owner created, removed when it is
//!   dropped (a test that panics included).
//!
//! Namespaces are iproute2's (`/run/netns/NAME`), made and removed with `ip`
//! as a user would: a lab's namespaces stay usable with `ip netns exec`.
//! The daemons never call this crate.

#![forbid(unsafe_code)]

use lagkit_dataplane::tools::{self, CommandError};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::path::{Path, PathBuf};

/// Where iproute2 keeps named namespaces.
const RUN_NETNS: &str = "/run/netns";

/// A namespace operation that failed.
#[derive(Debug, thiserror::Error)]
pub enum NetnsError {
    /// An `ip` command failed.
    #[error("namespace {name}: {op}: {why}")]
    Ip {
        /// The namespace.
        name: String,
        /// What was being done ("create", "delete", "veth ...").
        op: String,
        /// The command and its message.
        why: CommandError,
    },
    /// What a killed daemon left could not be removed.
    #[error("namespace {name}: remove {}: {why}", .path.display())]
    Remove {
        /// The namespace.
        name: String,
        /// The directory.
        path: PathBuf,
        /// What the system said.
        why: std::io::Error,
    },
}

impl NetnsError {
    /// For `map_err`: the failed `ip` command of operation `op` on
    /// namespace `name`.
    fn ip(name: &str, op: impl Into<String>) -> impl FnOnce(CommandError) -> NetnsError {
        let (name, op) = (name.to_string(), op.into());
        move |why| NetnsError::Ip { name, op, why }
    }
}

/// Runs `ip ARGS`; its stdout, or the command and its stderr.
fn ip(args: &[&str]) -> Result<String, CommandError> {
    let mut v = vec!["ip"];
    v.extend_from_slice(args);
    tools::run(&v)
}

/// The names of the namespaces that exist, sorted (read from
/// `/run/netns`: no process).
pub fn list() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(RUN_NETNS)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Whether namespace `name` exists.
pub fn exists(name: &str) -> bool {
    Path::new(RUN_NETNS).join(name).exists()
}

/// Creates namespace `name` with its loopback up.
pub fn create(name: &str) -> Result<(), NetnsError> {
    ip(&["netns", "add", name]).map_err(NetnsError::ip(name, "create"))?;
    // A namespace may get the inode of one that is gone: what lagkit
    // daemons killed there left must not be taken for this one's.
    forget_lagkit_files(name)?;
    ip(&["-n", name, "link", "set", "lo", "up"]).map_err(NetnsError::ip(name, "loopback up"))?;
    Ok(())
}

/// Removes what lagkit daemons of namespace `name` leave behind when they
/// are killed rather than stopped, all keyed by the namespace's inode: the
/// data path a BPF bond pins (under `/sys/fs/bpf/lagkit/<inode>` or
/// `/run/lagkit/bpffs/lagkit/<inode>`, which would otherwise hold its
/// programs and maps after the namespace is gone) and the run directory
/// `/run/lagkit/<inode>` (a later namespace given the same inode must not
/// adopt a dead bond's state or find a dead switch's socket).
pub fn forget_lagkit_files(name: &str) -> Result<(), NetnsError> {
    use std::os::unix::fs::MetadataExt;
    let Ok(ino) = std::fs::metadata(Path::new(RUN_NETNS).join(name)).map(|m| m.ino()) else {
        return Ok(());
    };
    let id = ino.to_string();
    let dirs = [
        Path::new("/sys/fs/bpf/lagkit").join(&id),
        Path::new("/run/lagkit/bpffs/lagkit").join(&id),
        lagkit_bondcfg::paths::netns_dir(Some(ino)),
    ];
    for d in dirs.iter().filter(|d| d.exists()) {
        std::fs::remove_dir_all(d).map_err(|why| NetnsError::Remove {
            name: name.to_string(),
            path: d.clone(),
            why,
        })?;
    }
    Ok(())
}

/// Deletes namespace `name`, first stopping (SIGKILL) every process still
/// in it: whatever runs in a namespace this crate made was started by its
/// owner, who stopped what it could stop cleanly already. Deleting a
/// namespace that is gone is not an error.
pub fn delete(name: &str) -> Result<(), NetnsError> {
    if !exists(name) {
        return Ok(());
    }
    if let Ok(pids) = ip(&["netns", "pids", name]) {
        for pid in pids
            .split_whitespace()
            .filter_map(|p| p.parse::<i32>().ok())
        {
            // Listed by the kernel as inside the namespace just now.
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
    remove(name)
}

/// Removes namespace `name`'s name and leaves any process still in it
/// running: the namespace lives on until the last one exits, and a daemon
/// there still cleans up after itself when its owner stops it (a daemon
/// killed instead would leave its run directory, keyed by the namespace's
/// inode, to a later namespace that reuses the inode). Removing a
/// namespace that is gone is not an error.
pub fn remove(name: &str) -> Result<(), NetnsError> {
    if !exists(name) {
        return Ok(());
    }
    match ip(&["netns", "del", name]) {
        Ok(_) => Ok(()),
        Err(_) if !exists(name) => Ok(()),
        Err(why) => Err(NetnsError::ip(name, "delete")(why)),
    }
}

/// A veth pair: `a` in namespace `ns_a`, its peer `b` in `ns_b` (never in
/// the root namespace).
pub fn veth(ns_a: &str, a: &str, ns_b: &str, b: &str) -> Result<(), NetnsError> {
    ip(&[
        "link", "add", a, "netns", ns_a, "type", "veth", "peer", "name", b, "netns", ns_b,
    ])
    .map(|_| ())
    .map_err(NetnsError::ip(ns_a, format!("veth {a} to {ns_b}/{b}")))
}

/// The namespaces one owner created; each is removed ([`remove`]: what
/// still runs in it is left to its owner's guards) when this is dropped.
#[derive(Debug, Default)]
pub struct Namespaces {
    names: Vec<String>,
}

impl Namespaces {
    /// None yet.
    pub fn new() -> Namespaces {
        Namespaces::default()
    }

    /// Creates namespace `name` ([`create`]) and owns it.
    pub fn create(&mut self, name: &str) -> Result<(), NetnsError> {
        create(name)?;
        self.names.push(name.to_string());
        Ok(())
    }

    /// The namespaces owned, in the order they were made.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for name in self.names.drain(..).rev() {
            if let Err(e) = remove(&name) {
                eprintln!("{e}");
            }
        }
    }
}
