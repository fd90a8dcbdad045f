//! What the `lagkit switch` tests share: starting `lagkit switch` and
//! `lagkit up` in namespaces, and asking them `show ... --json` and
//! `status --json`.

use super::Daemon;
use lagkit_testnet::{wait_until, Lab};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

pub const BIN: &str = env!("CARGO_BIN_EXE_lagkit");

/// Starts `lagkit ARGS` in `ns`, its log (at level info) in `log`.
pub fn start(ns: &str, args: &[&str], log: &Path) -> Daemon {
    let log = std::fs::File::create(log).expect("log file");
    let child = Command::new("ip")
        .args(["netns", "exec", ns, BIN])
        .args(args)
        .env("LAGKIT_LOG", "info")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("lagkit starts");
    Daemon(child)
}

/// Starts `lagkit switch` in `ns` with `config` and `ports` (NAME=DEVICE),
/// and waits until it answers. Its engine is `auto` (the kernel's, where
/// it runs), or `$LAGKIT_TEST_SWITCH_ENGINE` when set: the test suite runs
/// the switch tests once more with `userspace`.
pub fn start_switch(ns: &str, dir: &Path, config: &str, ports: &[&str]) -> Daemon {
    let engine = std::env::var("LAGKIT_TEST_SWITCH_ENGINE").ok();
    start_switch_engine(ns, dir, config, ports, engine.as_deref())
}

/// As [`start_switch`], with `--engine ENGINE` when given.
pub fn start_switch_engine(
    ns: &str,
    dir: &Path,
    config: &str,
    ports: &[&str],
    engine: Option<&str>,
) -> Daemon {
    let cfg = write(dir, "switch.cfg", config);
    let mut args = vec!["switch", cfg.to_str().unwrap()];
    for p in ports {
        args.extend(["--port", p]);
    }
    if let Some(e) = engine {
        args.extend(["--engine", e]);
    }
    let d = start(ns, &args, &dir.join("switch.log"));
    wait_until("the switch answers", Duration::from_secs(10), || {
        show(ns, &["etherchannel", "load-balance"]).is_some()
    });
    d
}

/// A scratch directory `$TMPDIR/lkt-switch-<pid>-<tag>` (wrap it in a
/// [`super::TmpDir`] to have it removed on drop).
pub fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lkt-switch-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `lagkit switch show WORDS --json` in `ns`, or None while it cannot answer.
pub fn show(ns: &str, words: &[&str]) -> Option<Value> {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, BIN, "switch", "show"])
        .args(words)
        .arg("--json")
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

/// `lagkit switch show WORDS` in `ns`, as text.
pub fn show_text(ns: &str, words: &[&str]) -> String {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, BIN, "switch", "show"])
        .args(words)
        .output()
        .expect("show");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One port's counters from `show interfaces counters --json`.
pub fn port_counters(ns: &str, port: &str) -> Value {
    let c = show(ns, &["interfaces", "counters"]).expect("counters");
    c["ports"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["port"] == port).cloned())
        .unwrap_or_else(|| panic!("no port {port} in {c}"))
}

/// Brings the switch's ends of the veths up (their MTU first when given).
pub fn switch_ports(lab: &Lab, ns: &str, devs: &[&str], mtu: Option<u32>) {
    for d in devs {
        if let Some(m) = mtu {
            lab.sh(&["ip", "-n", ns, "link", "set", d, "mtu", &m.to_string()]);
        }
        lab.sh(&["ip", "-n", ns, "link", "set", d, "up"]);
    }
}

pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Each member's flag in `show etherchannel summary` of `channel`.
pub fn flags(sw: &str, channel: u64) -> Vec<String> {
    let s = show(sw, &["etherchannel", "summary"]).unwrap_or(Value::Null);
    let c = s["channels"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["channel"] == channel).cloned())
        .unwrap_or(Value::Null);
    c["members"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|x| x["flag"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// `lagkit status --name bond0 --json` in `ns` (Null while it cannot answer).
pub fn bond_status(ns: &str) -> Value {
    let out = Command::new("ip")
        .args([
            "netns", "exec", ns, BIN, "status", "--name", "bond0", "--json",
        ])
        .output();
    let Ok(out) = out else { return Value::Null };
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    v[0].clone()
}

/// The ports the bond's LACP aggregator carries.
pub fn bond_ports(ns: &str) -> u64 {
    bond_status(ns)["lacp"]["number_of_ports"]
        .as_u64()
        .unwrap_or(0)
}
