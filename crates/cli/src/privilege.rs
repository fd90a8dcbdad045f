//! Commands that change the network say what privileges they need before
//! they touch anything, rather than failing halfway with "Permission
//! denied (os error 13)" and leaving half a setup behind.
//!
//! Root is not required as such: the effective capability set is read
//! (capget(2)), so a binary given `setcap cap_net_admin,cap_net_raw+ep`
//! runs `lagkit up` too. Missing privileges exit with status 4.

use crate::bond_cmd::Failure;

/// What a command needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// A bond: change links (CAP_NET_ADMIN) and open packet sockets
    /// (CAP_NET_RAW); the BPF engine also loads programs (CAP_BPF, or
    /// CAP_SYS_ADMIN on kernels before 5.8).
    Bond {
        /// The BPF engine was asked for.
        bpf: bool,
    },
    /// lagkit's switch: packet sockets on its ports and their settings.
    Switch,
    /// Give back what a bond changed (MACs, MTU, filters).
    NetAdmin,
    /// Create or remove network namespaces and the processes in them:
    /// root, in practice (mounts under /run/netns, setns, veths, tc).
    Namespaces,
    /// Listen on a port below 1024.
    LowPort,
}

// From linux/capability.h.
const CAP_NET_BIND_SERVICE: u32 = 10;
const CAP_NET_ADMIN: u32 = 12;
const CAP_NET_RAW: u32 = 13;
const CAP_SYS_ADMIN: u32 = 21;
const CAP_BPF: u32 = 39;
/// The effective capability set of this process (bit N = capability N);
/// none when the kernel will not say. Read with the `caps` crate (capget).
fn effective() -> u64 {
    caps::read(None, caps::CapSet::Effective)
        .map(|set| set.iter().fold(0u64, |m, c| m | c.bitmask()))
        .unwrap_or(0)
}

/// What is missing from `caps` for `need`, as a sentence ("root or
/// CAP_NET_ADMIN and CAP_NET_RAW ..."), or None when nothing is.
fn missing(need: Need, caps: u64) -> Option<&'static str> {
    let has = |c: u32| caps & (1 << c) != 0;
    let ok = match need {
        Need::Bond { bpf } => {
            has(CAP_NET_ADMIN) && has(CAP_NET_RAW) && (!bpf || has(CAP_BPF) || has(CAP_SYS_ADMIN))
        }
        Need::Switch => has(CAP_NET_ADMIN) && has(CAP_NET_RAW),
        Need::NetAdmin => has(CAP_NET_ADMIN),
        Need::Namespaces => has(CAP_SYS_ADMIN) && has(CAP_NET_ADMIN),
        Need::LowPort => has(CAP_NET_BIND_SERVICE),
    };
    if ok {
        return None;
    }
    Some(match need {
        Need::Bond { bpf: false } => {
            "root or CAP_NET_ADMIN and CAP_NET_RAW (and CAP_BPF for the BPF engine)"
        }
        Need::Bond { bpf: true } => {
            "root or CAP_NET_ADMIN, CAP_NET_RAW and CAP_BPF (or CAP_SYS_ADMIN) for the BPF engine (engine = \"userspace\" does without CAP_BPF)"
        }
        Need::Switch => "root or CAP_NET_ADMIN and CAP_NET_RAW (packet sockets on its ports; the BPF engine also needs CAP_BPF, without which --engine auto forwards in user space)",
        Need::NetAdmin => "root or CAP_NET_ADMIN",
        Need::Namespaces => "root (it creates network namespaces, veth links and the processes in them)",
        Need::LowPort => "root or CAP_NET_BIND_SERVICE to listen on a port below 1024 (or choose --port 1024 or above)",
    })
}

/// Fails with "`command` needs ...: run it with sudo" (exit status 4) when
/// this process lacks what `need` asks for.
pub fn require(command: &str, need: Need) -> Result<(), Failure> {
    match missing(need, effective()) {
        None => Ok(()),
        Some(what) => Err(Failure::Privilege(format!(
            "{command} needs {what}: run it with sudo"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_each_command_needs() {
        let all = u64::MAX;
        let bit = |c: u32| 1u64 << c;
        for need in [
            Need::Bond { bpf: true },
            Need::Bond { bpf: false },
            Need::Switch,
            Need::NetAdmin,
            Need::Namespaces,
            Need::LowPort,
        ] {
            assert_eq!(missing(need, all), None);
            assert!(missing(need, 0).is_some());
        }
        let net = bit(CAP_NET_ADMIN) | bit(CAP_NET_RAW);
        assert_eq!(missing(Need::Bond { bpf: false }, net), None);
        assert!(missing(Need::Bond { bpf: true }, net).is_some());
        assert_eq!(missing(Need::Bond { bpf: true }, net | bit(CAP_BPF)), None);
        assert_eq!(
            missing(Need::Bond { bpf: true }, net | bit(CAP_SYS_ADMIN)),
            None
        );
        assert!(missing(Need::Bond { bpf: false }, bit(CAP_NET_ADMIN)).is_some());
        assert_eq!(
            missing(Need::Bond { bpf: false }, 0),
            Some("root or CAP_NET_ADMIN and CAP_NET_RAW (and CAP_BPF for the BPF engine)")
        );
    }

    /// The test runs as root, so this process has every capability.
    #[test]
    fn root_passes() {
        if nix::unistd::geteuid().is_root() {
            assert!(require("lagkit up", Need::Bond { bpf: true }).is_ok());
        }
    }
}
