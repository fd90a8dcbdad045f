//! tshark as a judge of simulated captures, shared by the simulation tests.

use lagkit_sim::{write_pcap, Captured};
use std::process::Command;

/// True if tshark runs; otherwise says the test is skipped (and fails
/// under CI, where .ci/run installs it).
pub fn tshark_available(test: &str) -> bool {
    let ok = Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(std::env::var_os("CI").is_none(), "tshark is required in CI");
        eprintln!("SKIPPED {test}: tshark is not installed (apt-get install tshark)");
    }
    ok
}

/// Writes `frames` to a pcap and returns tshark's `fields` for each frame,
/// one row per frame.
pub fn tshark_fields(frames: &[Captured], fields: &[&str]) -> Vec<Vec<String>> {
    let dir = std::env::temp_dir().join(format!("lagkit-sim-tshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pcap = dir.join("capture.pcap");
    write_pcap(&pcap, frames).unwrap();
    let mut cmd = Command::new("tshark");
    cmd.args([
        "-r",
        pcap.to_str().unwrap(),
        "-T",
        "fields",
        "-E",
        "separator=|",
    ]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("tshark runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split('|').map(str::to_string).collect())
        .collect()
}
