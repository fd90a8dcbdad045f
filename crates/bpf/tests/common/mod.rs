//! What the root tests share.

use lagkit_bpf::Datapath;

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

/// The loaded programs, or None (with a message) when not root.
pub fn load(test: &str) -> Option<Datapath> {
    if !is_root() {
        eprintln!(
            "SKIP {test}: loading BPF programs needs root; run as root: `sudo -E cargo test`"
        );
        return None;
    }
    Some(Datapath::load().unwrap_or_else(|e| panic!("{e}")))
}
