//! A bond on its own thread inside a namespace, driven through its control
//! socket: shared by the netns tests and the failover benchmark
//! (`examples/failover.rs`, which includes this file by path).

use lagkit_api::protocol::{request, Request, Response};
use lagkit_api::status::{BondStats, BondStatus};
use lagkit_bond::daemon::Bond;
use lagkit_bond::settings::Settings;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// A bond running on its own thread inside a namespace; stopped on drop.
pub struct Running {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    pub socket: PathBuf,
}

impl Running {
    pub fn start(ns: &str, s: Settings) -> Running {
        Running::start_with(ns, s, |_| {})
    }

    /// Starts the bond with `between(member)` run after each member's
    /// originals are recorded and before it is changed.
    pub fn start_with(
        ns: &str,
        s: Settings,
        mut between: impl FnMut(&str) + Send + 'static,
    ) -> Running {
        let stop = Arc::new(AtomicBool::new(false));
        let socket = s.control_socket.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let ns = ns.to_string();
        let st = stop.clone();
        let handle = std::thread::spawn(move || {
            lagkit_dataplane::netns::enter(&ns).expect("setns");
            let mut b = match Bond::start_with(s, &mut between) {
                Ok(b) => b,
                Err(e) => {
                    tx.send(Err(e.to_string())).ok();
                    return;
                }
            };
            tx.send(Ok(())).ok();
            b.run(&st);
            b.shutdown();
        });
        rx.recv_timeout(Duration::from_secs(20))
            .expect("bond thread answers")
            .expect("bond starts");
        Running {
            stop,
            handle: Some(handle),
            socket,
        }
    }

    pub fn status(&self) -> BondStatus {
        match request(&self.socket, &Request::Status).expect("status") {
            Response::Status(s) => *s,
            r => panic!("unexpected {r:?}"),
        }
    }

    pub fn stats(&self) -> BondStats {
        match request(&self.socket, &Request::Stats).expect("stats") {
            Response::Stats(s) => s,
            r => panic!("unexpected {r:?}"),
        }
    }

    pub fn flow_member(&self, src: &str, dst: &str) -> Option<String> {
        let r = request(
            &self.socket,
            &Request::Flow {
                proto: "tcp".into(),
                src: src.into(),
                dst: dst.into(),
            },
        )
        .expect("flow");
        match r {
            Response::Flow(f) => f.member,
            r => panic!("unexpected {r:?}"),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
