//! Where a bond daemon puts its control socket and state files.
//!
//! Interface names are per network namespace, but `/run` is not: `ip netns
//! exec` gives a process a new network namespace and a new `/sys`, yet the
//! same `/run`. The lab runs one daemon per namespace, each with a `bond0`,
//! so a path built from the bond name alone would collide. The paths below
//! therefore include the namespace's identity, the inode number of
//! `/proc/self/ns/net` (what `ip netns identify` and `lsns` compare):
//! `/run/lagkit/<netns-inode>/<bond>.sock`. A client run in the same
//! namespace (`ip netns exec NS lagkit status`) computes the same path.
//!
//! These functions only read metadata; they create nothing.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

/// The root of lagkit's run-time files.
pub const RUN_DIR: &str = "/run/lagkit";

/// Used in place of the inode when `/proc` is not mounted.
pub const UNKNOWN_NETNS: &str = "netns-unknown";

/// The inode number of the calling thread's network namespace, if `/proc`
/// says. The thread's, not the process's: one process may run bonds in
/// several namespaces, each on a thread that entered its own.
pub fn netns_id() -> Option<u64> {
    std::fs::metadata("/proc/thread-self/ns/net")
        .or_else(|_| std::fs::metadata("/proc/self/ns/net"))
        .ok()
        .map(|m| m.ino())
}

/// The directory for one network namespace's files (`/run/lagkit/<inode>`).
pub fn netns_dir(netns: Option<u64>) -> PathBuf {
    let id = netns.map_or_else(|| UNKNOWN_NETNS.to_string(), |i| i.to_string());
    PathBuf::from(RUN_DIR).join(id)
}

/// The default control socket of `bond` in this network namespace:
/// `/run/lagkit/<netns-inode>/<bond>.sock`.
pub fn default_control_socket(bond: &str) -> PathBuf {
    control_socket_in(netns_id(), bond)
}

/// The control socket of `bond` in the namespace with inode `netns`.
pub fn control_socket_in(netns: Option<u64>, bond: &str) -> PathBuf {
    netns_dir(netns).join(format!("{bond}.sock"))
}

/// The default state directory of `bond` in this network namespace:
/// `/run/lagkit/<netns-inode>/<bond>/`.
pub fn default_state_dir(bond: &str) -> PathBuf {
    state_dir_in(netns_id(), bond)
}

/// The state directory of `bond` in the namespace with inode `netns`.
pub fn state_dir_in(netns: Option<u64>, bond: &str) -> PathBuf {
    netns_dir(netns).join(bond)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_namespaces_two_paths() {
        let a = control_socket_in(Some(4026531840), "bond0");
        let b = control_socket_in(Some(4026532000), "bond0");
        assert_eq!(a, PathBuf::from("/run/lagkit/4026531840/bond0.sock"));
        assert_ne!(a, b);
        assert_eq!(
            state_dir_in(Some(4026531840), "bond0"),
            PathBuf::from("/run/lagkit/4026531840/bond0")
        );
        assert_eq!(
            control_socket_in(None, "bond1"),
            PathBuf::from("/run/lagkit/netns-unknown/bond1.sock")
        );
    }

    #[test]
    fn this_namespace_is_found() {
        if let Some(id) = netns_id() {
            assert_eq!(
                default_control_socket("bond0"),
                PathBuf::from(format!("/run/lagkit/{id}/bond0.sock"))
            );
            assert!(default_state_dir("bond0").ends_with("bond0"));
        }
    }
}
