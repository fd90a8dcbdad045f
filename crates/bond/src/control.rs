//! What a running bond answers to: its control socket (`lagkit status`,
//! `stats`, `flow`, `capture`), the `lagkit capture` clients it copies
//! control frames to, and its Prometheus endpoint. The control server's
//! thread owns the sockets; the bond's loop takes the queued requests and
//! never waits on a client or a scraper.

use crate::error::BondError;
use crate::settings::Settings;
use lagkit_api::capture::{CaptureStart, Direction, Taps, MAX_SNAPLEN};
use lagkit_api::control::{BindError, ControlServer, Pending};
use lagkit_api::metrics::Exporter;
use lagkit_api::protocol::{Request, Response};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::mpsc::Receiver;

/// See the module's documentation.
pub(crate) struct Control {
    server: Option<ControlServer>,
    requests: Receiver<Pending>,
    taps: Taps,
    metrics: Option<Exporter>,
}

/// How many requests one loop iteration answers.
const REQUESTS_PER_STEP: usize = 32;

impl Control {
    /// Opens bond `s.name`'s control socket and, when configured, its
    /// metrics endpoint.
    pub(crate) fn open(s: &Settings) -> Result<Control, BondError> {
        let path = &s.control_socket;
        let err = |path: PathBuf, why: String| BondError::Control {
            bond: s.name.clone(),
            path,
            why,
        };
        let (server, requests) = ControlServer::open(path, &s.name).map_err(|e| match e {
            BindError::Live(_) => err(
                path.clone(),
                "another lagkit already serves this socket (it is live)".into(),
            ),
            e => err(path.clone(), e.to_string()),
        })?;
        let metrics = match s.metrics_listen {
            Some(addr) => Some(Exporter::start(addr).map_err(|e| {
                err(
                    PathBuf::from(addr.to_string()),
                    format!("metrics_listen: {e}"),
                )
            })?),
            None => None,
        };
        Ok(Control {
            server: Some(server),
            requests,
            taps: Taps::default(),
            metrics,
        })
    }

    /// The requests queued now (at most [`REQUESTS_PER_STEP`]); captures
    /// whose clients went away are forgotten first.
    pub(crate) fn requests(&mut self) -> Vec<Pending> {
        self.taps.prune();
        self.requests.try_iter().take(REQUESTS_PER_STEP).collect()
    }

    /// Copies a control frame sent (`Out`) or handled (`In`) on `member`
    /// to the captures.
    pub(crate) fn tap(&self, member: &str, dir: Direction, frame: &[u8]) {
        self.taps.frame(member, dir, frame, false);
    }

    /// Starts a capture of the control frames on `interfaces` for `p` (a
    /// [`Request::Capture`]); a capture of data frames is refused with
    /// `no_data`, the reason. Returns whether it started.
    pub(crate) fn start_capture(
        &mut self,
        p: Pending,
        interfaces: Vec<String>,
        no_data: String,
    ) -> bool {
        let Request::Capture(req) = &p.req else {
            return false;
        };
        if req.data {
            p.answer(Response::Error(no_data));
            return false;
        }
        let stream = match self.taps.open(req) {
            Ok(s) => s,
            Err(e) => {
                p.answer(Response::Error(e.to_string()));
                return false;
            }
        };
        let start = CaptureStart {
            interfaces,
            snaplen: req.snaplen().unwrap_or(MAX_SNAPLEN),
            data: false,
            note: None,
        };
        p.answer_stream(Response::Capture(start), stream);
        true
    }

    /// Whether the metrics page is due for a new rendering at `now` (at
    /// most once a second, and only with an endpoint).
    pub(crate) fn metrics_due(&self, now: u64) -> bool {
        self.metrics.as_ref().is_some_and(|m| m.due(now))
    }

    /// The metrics page rendered at `now`.
    pub(crate) fn publish_metrics(&mut self, text: String, now: u64) {
        if let Some(m) = self.metrics.as_mut() {
            m.publish(text, now);
        }
    }

    /// A reload moved the metrics endpoint to `listen` (or removed it); an
    /// address it cannot listen on is logged, and there are no metrics
    /// until a reload fixes it.
    pub(crate) fn set_metrics(&mut self, bond: &str, listen: Option<SocketAddr>) {
        self.metrics = None;
        let Some(addr) = listen else {
            return;
        };
        match Exporter::start(addr) {
            Ok(e) => self.metrics = Some(e),
            Err(e) => {
                tracing::error!(bond = %bond, %addr, error = %e, "metrics: cannot listen on the new address; no metrics until it is fixed")
            }
        }
    }

    /// Stops answering: the metrics endpoint and the control socket go.
    pub(crate) fn close(&mut self) {
        self.metrics = None;
        self.server = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::BondMode;
    use lagkit_api::capture::CaptureRequest;
    use lagkit_api::protocol::request;
    use std::time::{Duration, Instant};

    /// Answers what `control` queues until `client` has its answer.
    fn serve_until_answered<T: Send>(
        control: &mut Control,
        mut answer: impl FnMut(&mut Control, Pending),
        client: impl FnOnce() -> T + Send,
    ) -> T {
        std::thread::scope(|s| {
            let h = s.spawn(client);
            let deadline = Instant::now() + Duration::from_secs(10);
            while !h.is_finished() {
                assert!(Instant::now() < deadline, "no answer within 10 s");
                for p in control.requests() {
                    answer(control, p);
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            h.join().expect("client")
        })
    }

    #[test]
    fn a_capture_of_data_frames_is_refused_with_the_reason_and_the_socket_goes_on_close() {
        let dir = std::env::temp_dir().join(format!("lagkit-control-{}", std::process::id()));
        let mut s = Settings::new("bondctl", &["m0"], BondMode::ActiveBackup);
        s.control_socket = dir.join("ctl.sock");
        let mut control = Control::open(&s).expect("control socket");
        assert!(!control.metrics_due(u64::MAX), "no endpoint configured");
        let again = Control::open(&s)
            .err()
            .expect("a second daemon on the same socket");
        assert!(again.to_string().contains("already serves"), "{again}");
        let path = s.control_socket.clone();
        let mut started = Vec::new();
        let r = serve_until_answered(
            &mut control,
            |c, p| started.push(c.start_capture(p, vec!["m0".into()], "no data here".into())),
            || {
                let req = Request::Capture(CaptureRequest {
                    data: true,
                    snaplen: None,
                });
                request(&path, &req)
            },
        );
        assert_eq!(started, [false]);
        match r {
            Ok(Response::Error(e)) => assert_eq!(e, "no data here"),
            other => panic!("{other:?}"),
        }
        control.close();
        assert!(!path.exists(), "the socket file goes with the server");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
