//! The command line's conventions, run as a user runs them: a closed pipe,
//! errors as JSON, and privileges named before anything is touched.

mod common;

use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_lagkit");

/// `lagkit sim lacp | head -1`: the reader goes away after one line; lagkit
/// ends as SIGPIPE ends other tools (the shell says 141), no panic.
#[test]
fn a_closed_pipe_ends_quietly() {
    let out = Command::new("bash")
        .args([
            "-c",
            &format!("{BIN} sim lacp --cut 1@10s --restore 1@20s | head -1; echo \"status ${{PIPESTATUS[0]}}\" >&2"),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err == "status 0\n" || err == "status 141\n",
        "no message, status 0 or 141: {err}"
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
    // The reader is gone before lagkit writes anything: SIGPIPE. (A process
    // another test forks at that moment can hold the pipe's read end until
    // it execs, so the write may succeed; hence a few tries.)
    use std::os::unix::process::ExitStatusExt;
    let mut killed = 0;
    for _ in 0..5 {
        let mut child = Command::new(BIN)
            .args(["sim", "lacp"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.is_empty(), "{err}");
        match (out.status.code(), out.status.signal()) {
            (_, Some(libc::SIGPIPE)) => killed += 1,
            (Some(0), _) => {}
            _ => panic!("{:?}", out.status),
        }
    }
    assert!(killed > 0, "never ended by SIGPIPE");
}

/// A command given --json fails with one JSON object on stderr, and the
/// exit status of the text form.
#[test]
fn json_errors_are_json_with_the_same_status() {
    // Nothing runs: a runtime failure (1).
    let dir = std::env::temp_dir().join(format!("lkt-cli-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sock = dir.join("none.sock");
    let (code, out, err) = common::lagkit("status", &["--socket", sock.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.starts_with("lagkit: "), "{err}");
    let (code, out2, err) =
        common::lagkit("status", &["--socket", sock.to_str().unwrap(), "--json"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty() && out2.is_empty());
    let v: serde_json::Value = serde_json::from_str(err.trim()).expect("JSON on stderr");
    assert!(v["error"].as_str().unwrap().contains("none.sock"), "{v}");
    assert_eq!(v["exit"], 1);
    // A bad flag value, found by clap: 2, JSON too.
    let (code, _, err) = common::lagkit("plan", &["x.csv", "--rate", "1gbps", "--json"]);
    assert_eq!(code, 2, "{err}");
    let v: serde_json::Value = serde_json::from_str(err.trim()).expect("JSON on stderr");
    assert!(v["error"].as_str().unwrap().contains("write bits"), "{v}");
    // check's unreadable input: 2, with the file.
    let missing = dir.join("missing.cfg");
    let (code, _, err) = common::lagkit("check", &[missing.to_str().unwrap(), "--json"]);
    assert_eq!(code, 2, "{err}");
    let v: serde_json::Value = serde_json::from_str(err.trim()).expect("JSON on stderr");
    assert_eq!(v["file"], missing.to_str().unwrap());
    assert_eq!(v["exit"], 2);
    // A topology file's bad rate (as root, so the privilege check passes):
    // file, line and column apart; the text form reads file:line:column.
    if nix::unistd::geteuid().is_root() {
        let topo = dir.join("bad.toml");
        let text = std::fs::read_to_string(common::example("lab/two-hosts.toml")).unwrap();
        assert!(text.contains("\"100mbit\""));
        std::fs::write(&topo, text.replacen("\"100mbit\"", "\"100mbps\"", 1)).unwrap();
        let line = text
            .lines()
            .position(|l| l.contains("\"100mbit\""))
            .unwrap() as u64
            + 1;
        let (code, out, err) = common::lagkit("lab", &["run", topo.to_str().unwrap(), "--json"]);
        assert_eq!(code, 2, "{err}");
        assert!(out.is_empty(), "{out}");
        let v: serde_json::Value = serde_json::from_str(err.trim()).expect("JSON on stderr");
        assert_eq!(v["file"], topo.to_str().unwrap());
        assert_eq!(v["line"], line, "{v}");
        assert!(v["column"].as_u64().unwrap() > 0, "{v}");
        assert!(
            v["error"].as_str().unwrap().contains("bytes per second"),
            "{v}"
        );
        let (code, _, err) = common::lagkit("lab", &["run", topo.to_str().unwrap()]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.starts_with(&format!("lagkit: {}:{line}:", topo.display())),
            "{err}"
        );
    }
    // Without --json the same failure is text.
    let (code, _, err) = common::lagkit("check", &[missing.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.starts_with("lagkit: "), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A copy of the binary and the example files that user `nobody` can run
/// and read (the build directory may not be theirs to read).
struct AsNobody(std::path::PathBuf);

impl AsNobody {
    fn new() -> AsNobody {
        let dir = std::env::temp_dir().join(format!("lkt-cli-nobody-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(BIN, dir.join("lagkit")).unwrap();
        for f in [
            "check/server-bond.toml",
            "check/switch-b-lacp.cfg",
            "lab/two-hosts.toml",
        ] {
            let name = f.rsplit('/').next().unwrap();
            std::fs::copy(common::example(f), dir.join(name)).unwrap();
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        AsNobody(dir)
    }

    /// Runs lagkit ARGS as nobody (no capabilities); (status, stderr).
    ///
    /// The copy may be briefly "busy" (ETXTBSY): a process another test
    /// thread forked while the copy was open for writing holds that file
    /// descriptor until it execs. Such a run is retried, for at most 5 s.
    fn run(&self, args: &[&str]) -> (Option<i32>, String) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let out = Command::new("setpriv")
                .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
                .arg(self.0.join("lagkit"))
                .args(args)
                .current_dir(&self.0)
                .output()
                .expect("setpriv runs");
            let err = String::from_utf8_lossy(&out.stderr).into_owned();
            let busy = out.status.code() == Some(126) && err.contains("Text file busy");
            if !busy || std::time::Instant::now() > deadline {
                return (out.status.code(), err);
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

impl Drop for AsNobody {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Run without root, each command that changes the network says what it
/// needs, before it touches anything, with exit status 4.
#[test]
fn commands_that_need_privileges_say_so_first() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: needs root to become nobody");
        return;
    }
    let n = AsNobody::new();
    let cases: &[(&[&str], &str)] = &[
        (
            &["up", "server-bond.toml"],
            "lagkit up needs root or CAP_NET_ADMIN and CAP_NET_RAW (and CAP_BPF for the BPF engine): run it with sudo",
        ),
        (&["down", "--name", "bond0"], "lagkit down needs root or CAP_NET_ADMIN: run it with sudo"),
        (
            &["switch", "switch-b-lacp.cfg", "--port", "Gi1/0/47=veth1", "--port", "Gi1/0/48=veth2"],
            "lagkit switch needs root or CAP_NET_ADMIN and CAP_NET_RAW",
        ),
        (&["lab", "up", "two-hosts.toml"], "lagkit lab up needs root"),
        (&["lab", "run", "two-hosts.toml"], "lagkit lab run needs root"),
        (&["lab", "down", "two-hosts.toml"], "lagkit lab down needs root"),
        (&["demo"], "lagkit demo needs root"),
        (
            &["load", "server", "--kind", "stream", "--port", "80"],
            "lagkit load server needs root or CAP_NET_BIND_SERVICE",
        ),
    ];
    for (args, want) in cases {
        let (code, err) = n.run(args);
        assert_eq!(code, Some(4), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("os error"), "{args:?}: {err}");
    }
    // What needs nothing still runs as nobody.
    let (code, err) = n.run(&["up", "server-bond.toml", "--check"]);
    assert_eq!(code, Some(0), "{err}");
    let (code, err) = n.run(&[
        "switch",
        "switch-b-lacp.cfg",
        "--port",
        "Gi1/0/47=veth1",
        "--port",
        "Gi1/0/48=veth2",
        "--check",
    ]);
    assert_eq!(code, Some(0), "{err}");
    // With --json the privilege error is JSON too.
    let (code, err) = n.run(&["lab", "run", "two-hosts.toml", "--json"]);
    assert_eq!(code, Some(4));
    let v: serde_json::Value = serde_json::from_str(err.trim()).expect("JSON");
    assert!(v["error"].as_str().unwrap().contains("needs root"), "{v}");
    assert_eq!(v["exit"], 4);
}

/// The EXAMPLES of `--help` that need no root run as printed, from the
/// source tree, and the files they name exist.
#[test]
fn help_examples_run_as_printed() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut ran = 0;
    for cmd in [
        &["plan"][..],
        &["check"],
        &["switch"],
        &["lab", "run"],
        &["lab", "up"],
        &["capture"],
    ] {
        let out = Command::new(BIN).args(cmd).arg("--help").output().unwrap();
        assert!(out.status.success());
        let help = String::from_utf8_lossy(&out.stdout).into_owned();
        let examples = help
            .split_once("EXAMPLES:")
            .unwrap_or_else(|| panic!("lagkit {cmd:?} --help has no EXAMPLES"))
            .1
            .replace("\\\n", " ");
        for line in examples.lines().map(str::trim) {
            let words: Vec<&str> = line.split_whitespace().collect();
            if words.first() == Some(&"sudo") {
                for w in words.iter().filter(|w| w.starts_with("examples/")) {
                    assert!(std::path::Path::new(root).join(w).exists(), "{line}");
                }
                continue;
            }
            if words.first() != Some(&"lagkit") {
                continue;
            }
            let out = Command::new(BIN)
                .args(&words[1..])
                .current_dir(root)
                .output()
                .unwrap();
            let code = out.status.code();
            // check's status tells its worst finding: 0, 1 or 3.
            let ok = if words[1] == "check" {
                matches!(code, Some(0 | 1 | 3))
            } else {
                code == Some(0)
            };
            assert!(
                ok,
                "{line}: {:?}\n{}",
                code,
                String::from_utf8_lossy(&out.stderr)
            );
            ran += 1;
        }
    }
    assert!(ran >= 6, "ran {ran} examples");
}
