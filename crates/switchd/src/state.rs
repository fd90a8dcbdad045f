//! What a switch leaves for the next one when its ports keep forwarding
//! without it (the BPF engine, pinned): the state file beside its control
//! socket, and the pins. A switch killed, or handed over on SIGUSR2 (as a
//! service restart or a package upgrade does), leaves the kernel
//! forwarding with its last plan; the next switch of the same name, on
//! the same devices, adopts the pinned programs ([`lagkit_bpf::Adopted`]),
//! resumes each bundled port's LACP or PAgP from the recorded partner
//! ([`lagkit_switch::Core::resume`]) and only then releases them. A clean
//! stop (SIGTERM) unpins and removes the file: nothing is left.

use lagkit_api::resume::PortRecord;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The contents of `<hostname>.state.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct SwitchState {
    /// The switch (hostname).
    pub switch: String,
    /// The daemon that wrote it.
    pub pid: u32,
    /// The ports' devices, in port order, as the programs were attached.
    pub devices: Vec<String>,
    /// Their interface indexes then (a device of the same name made anew
    /// is not the one the pins run on).
    pub ifindex: Vec<u32>,
    /// Per port (same order), the partner it was bundled with.
    pub ports: Vec<PortRecord>,
    /// Written by the userspace engine's handoff: nothing is pinned, the
    /// ports' sockets went to the next daemon as descriptors
    /// ([`lagkit_dataplane::handoff`]), and this record is for that
    /// daemon only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub userspace: bool,
}

/// The state file of switch `name` in network namespace `ns`.
pub fn path(ns: Option<u64>, name: &str) -> PathBuf {
    crate::protocol::socket_dir(ns).join(format!("{name}.state.json"))
}

/// Where switch `name` of network namespace `ns` pins its links: one
/// directory per daemon below it. `switch/` sits beside the bonds'
/// namespace directories (numbers), so no bond name can collide with it.
pub fn pin_dir(ns: Option<u64>, name: &str) -> Result<PathBuf, lagkit_bpf::NoBpffs> {
    let ns = ns.map_or_else(|| "unknown".to_string(), |i| i.to_string());
    Ok(lagkit_bpf::pin_base()?.join("switch").join(ns).join(name))
}

/// The state a previous switch left at `path`. A file that cannot be read
/// as one is reported and treated as absent (the pins it described are
/// then released, not adopted).
pub fn read(path: &Path) -> Option<SwitchState> {
    let text = std::fs::read_to_string(path).ok()?;
    match serde_json::from_str(&text) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!(file = %path.display(), "the state a previous switch left cannot be read ({e}); starting afresh");
            None
        }
    }
}

/// Writes `s` to `path` whole (a reader never sees half a file).
pub fn write(path: &Path, s: &SwitchState) -> std::io::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_vec_pretty(s).map_err(std::io::Error::other)?;
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Detaches what a killed switch `name` left pinned and removes its state
/// file: for a start that does not adopt it, and for `lagkit switch
/// down`. How many links were released.
pub fn release(ns: Option<u64>, name: &str) -> usize {
    let _ = std::fs::remove_file(path(ns, name));
    pin_dir(ns, name).map_or(0, |dir| lagkit_bpf::release_all(&dir))
}

/// Whether the state `left` describes ports this start can adopt: the
/// same devices in the same order, each still the interface it was.
/// Otherwise, why not.
pub fn fits(left: &SwitchState, devices: &[String]) -> Result<(), String> {
    if left.devices != devices {
        return Err(format!(
            "its ports were {:?}, now {:?}",
            left.devices, devices
        ));
    }
    for (d, &was) in devices.iter().zip(&left.ifindex) {
        let now = nix::net::if_::if_nametoindex(d.as_str()).unwrap_or(0);
        if now != was {
            return Err(format!(
                "{d} is another interface now (index {now}, was {was})"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use lagkit_api::resume::PartnerRecord;

    #[test]
    fn the_state_file_is_written_whole_and_read_back() {
        let dir = std::env::temp_dir().join(format!("lk-swstate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("sw.state.json");
        let s = SwitchState {
            switch: "sw".into(),
            pid: 42,
            devices: vec!["p1".into(), "p2".into()],
            ifindex: vec![7, 8],
            ports: vec![
                PortRecord {
                    lacp: Some(PartnerRecord {
                        key: 9,
                        ..PartnerRecord::default()
                    }),
                    pagp: None,
                },
                PortRecord::default(),
            ],
            userspace: false,
        };
        write(&p, &s).unwrap();
        assert_eq!(read(&p), Some(s.clone()));
        assert!(!dir.join("sw.state.json.tmp").exists());
        std::fs::write(&p, "{ not json").unwrap();
        assert_eq!(read(&p), None, "a corrupt file is no state");
        // Devices that differ, or that are other interfaces now, are not
        // adopted.
        assert!(fits(&s, &["p2".into(), "p1".into()])
            .unwrap_err()
            .contains("its ports were"));
        let lo = SwitchState {
            devices: vec!["lo".into()],
            ifindex: vec![nix::net::if_::if_nametoindex("lo").unwrap()],
            ..SwitchState::default()
        };
        assert_eq!(fits(&lo, &["lo".into()]), Ok(()));
        let moved = SwitchState {
            ifindex: vec![9999],
            ..lo
        };
        assert!(fits(&moved, &["lo".into()])
            .unwrap_err()
            .contains("another interface"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
