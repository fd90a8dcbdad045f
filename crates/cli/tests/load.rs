//! `lagkit load` as the lab runs it: the binary as server and client on
//! loopback, socketprocs workers re-executed as separate processes.

use lagkit_sys::proc::Signal;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_lagkit");

/// A server process, stopped (SIGTERM) and reaped on drop.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = lagkit_sys::proc::kill(self.0.id(), Signal::SIGTERM);
        let _ = self.0.wait();
    }
}

#[test]
fn socketprocs_n_by_n_through_the_binary() {
    let port = 17_000 + (std::process::id() % 2000) as u16 * 4;
    let _server = Server(
        Command::new(BIN)
            .args([
                "load",
                "server",
                "--kind",
                "socketprocs",
                "--procs",
                "2",
                "--bind",
                "127.0.0.1",
            ])
            .args(["--port", &port.to_string(), "--method", "select"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("server starts"),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let out = loop {
        let out = Command::new(BIN)
            .args([
                "load",
                "client",
                "--kind",
                "socketprocs",
                "--to",
                "127.0.0.1",
                "--procs",
                "2",
            ])
            .args([
                "--port",
                &port.to_string(),
                "--method",
                "select",
                "--duration",
                "1s",
                "--json",
            ])
            .output()
            .expect("client runs");
        if out.status.success() || Instant::now() > deadline {
            break out;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(
        v["connections"].as_array().map(Vec::len),
        Some(4),
        "N*N connections"
    );
    assert_eq!(
        v["processes"].as_array().map(Vec::len),
        Some(2),
        "N client processes"
    );
    assert!(v["transactions"].as_u64().unwrap_or(0) > 0);
}
