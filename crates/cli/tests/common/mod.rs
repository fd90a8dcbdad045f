//! What the tests share: running `lagkit SUBCOMMAND ...`, finding the
//! shipped examples, daemons and directories cleaned up on drop; the
//! switch tests' helpers in [`switch`], Open vSwitch's in [`ovs`].

// Each test binary uses a part of this module.
#![allow(dead_code)]

use lagkit_sys::proc::Signal;
use std::process::Command;

pub mod ovs;
pub mod switch;

/// A file under the repository's `examples/`.
pub fn example(path: &str) -> String {
    format!("{}/../../examples/{path}", env!("CARGO_MANIFEST_DIR"))
}

/// Runs `lagkit SUB ARGS...`: (exit status, stdout, stderr).
pub fn lagkit(sub: &str, args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_lagkit"))
        .arg(sub)
        .args(args)
        .output()
        .expect("run lagkit");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Runs `lagkit SUB ARGS...` with an endless standard input (`yes`:
/// "y\n" until lagkit stops reading): (exit status, stderr, how long it
/// took). The writer stops when lagkit closes its end.
pub fn lagkit_endless_stdin(sub: &str, args: &[&str]) -> (i32, String, std::time::Duration) {
    use std::io::Write;
    let t = std::time::Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lagkit"))
        .arg(sub)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run lagkit");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let chunk = b"y\n".repeat(32 << 10);
        // Until lagkit exits (EPIPE; Rust ignores SIGPIPE), at most 10 GB.
        for _ in 0..(10u64 << 30) / chunk.len() as u64 {
            if stdin.write_all(&chunk).is_err() {
                break;
            }
        }
    });
    let o = child.wait_with_output().expect("wait for lagkit");
    let took = t.elapsed();
    writer.join().expect("writer");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        took,
    )
}

/// A sparse file of 2 GiB in a directory of its own (removed on drop):
/// zeros that take no disk, the size of a wrong path to a disk image.
pub struct Sparse {
    pub dir: std::path::PathBuf,
    pub path: std::path::PathBuf,
}

impl Sparse {
    pub fn new(tag: &str, file: &str) -> Sparse {
        let dir = std::env::temp_dir().join(format!("lkt-sparse-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(file);
        std::fs::File::create(&path)
            .unwrap()
            .set_len(2 << 30)
            .unwrap();
        Sparse { dir, path }
    }

    pub fn arg(&self) -> &str {
        self.path.to_str().unwrap()
    }
}

impl Drop for Sparse {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `lagkit SUB INPUT EXTRA...` refuses /dev/zero, a sparse 2 GiB file
/// named `file` and an endless standard input (`-`), each with exit
/// status 2 within a few seconds, naming the input and saying `larger than
/// 64 MiB, the most lagkit reads as WHAT` (docs/reference/limits.md).
pub fn refuses_endless_and_huge_inputs(sub: &str, extra: &[&str], file: &str, what: &str) {
    let fast = std::time::Duration::from_secs(5);
    let run = |input: &str| {
        let args: Vec<&str> = std::iter::once(input)
            .chain(extra.iter().copied())
            .collect();
        let t = std::time::Instant::now();
        let (code, _, err) = lagkit(sub, &args);
        (code, err, t.elapsed())
    };
    let (code, err, took) = run("/dev/zero");
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err.trim(),
        "lagkit: /dev/zero: not a text file (byte 0 is NUL)"
    );
    assert!(took < fast, "/dev/zero: {took:?}");
    let sparse = Sparse::new(sub, file);
    let (code, err, took) = run(sparse.arg());
    assert_eq!(code, 2, "{err}");
    let said = format!(
        "{file}: larger than 64 MiB, the most lagkit reads as {what}: is it the right file?"
    );
    assert!(err.contains(&said), "{err}");
    assert!(took < fast, "sparse file: {took:?}");
    let args: Vec<&str> = std::iter::once("-").chain(extra.iter().copied()).collect();
    let (code, err, took) = lagkit_endless_stdin(sub, &args);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "standard input: larger than 64 MiB, the most lagkit reads as {what}"
        )),
        "{err}"
    );
    assert!(took < fast, "endless pipe: {took:?}");
}

/// A daemon a test started (`lagkit up`, `lagkit switch`); SIGTERM and
/// reaped on drop, also when the test fails.
pub struct Daemon(pub std::process::Child);

impl Daemon {
    /// Sends `sig` (SIGHUP to reload, ...).
    pub fn signal(&self, sig: Signal) {
        let _ = lagkit_sys::proc::kill(self.0.id(), sig);
    }

    /// SIGTERM, then its exit status.
    pub fn stop(&mut self) -> std::process::ExitStatus {
        self.signal(Signal::SIGTERM);
        self.0.wait().expect("wait")
    }
}

/// `lagkit status --name bond0 --json` of the bond in network namespace
/// `ns`, typed; `None` while no bond answers.
pub fn bond_status(ns: &str) -> Option<lagkit_api::status::BondStatus> {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, env!("CARGO_BIN_EXE_lagkit")])
        .args(["status", "--name", "bond0", "--json"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let mut v: Vec<lagkit_api::status::BondStatus> = serde_json::from_slice(&out.stdout).ok()?;
    v.pop()
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.stop();
        }
    }
}

/// A scratch directory removed on drop.
pub struct TmpDir(pub std::path::PathBuf);

/// A child process killed and reaped on drop (also when a test fails).
pub struct Reap(pub std::process::Child);

impl Drop for Reap {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for TmpDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `ping -i 0.01` from a namespace until [`Pinger::finish`]; killed on drop.
pub struct Pinger(Option<std::process::Child>);

impl Pinger {
    /// Starts pinging `dst` from namespace `ns`, every 10 ms.
    pub fn start(ns: &str, dst: &str) -> Pinger {
        let child = Command::new("ip")
            .args(["netns", "exec", ns, "ping", "-n", "-i", "0.01", "-W", "1"])
            .arg(dst)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("ping runs (iputils-ping installed?)");
        Pinger(Some(child))
    }

    /// SIGINT (ping then prints its summary) and the summary, without the
    /// requests still in flight ([`lagkit_testnet::parse_stopped_ping`]).
    pub fn finish(mut self) -> lagkit_testnet::Ping {
        let child = self.0.take().expect("running");
        let _ = lagkit_sys::proc::kill(child.id(), Signal::SIGINT);
        let out = child.wait_with_output().expect("ping exits");
        lagkit_testnet::parse_stopped_ping(&String::from_utf8_lossy(&out.stdout))
    }
}

impl Drop for Pinger {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Every connection of `flows` ended without an error, carried something,
/// and delivered every byte it sent once and in order (both ends' hashes).
pub fn assert_flows_intact(
    flows: &[Result<lagkit_testnet::Transfer, lagkit_testnet::TransferError>],
) {
    for (i, f) in flows.iter().enumerate() {
        let f = f
            .as_ref()
            .unwrap_or_else(|e| panic!("connection {i} lost: {e}"));
        assert_eq!(
            (f.sent, f.sent_hash),
            (f.received, f.recv_hash),
            "connection {i}"
        );
        assert!(f.sent > 0, "connection {i} carried nothing");
    }
}
