//! The control protocol: one JSON [`Request`] per line from `lagkit
//! status`, `stats` and `flow`, one JSON [`Response`] per line back. The
//! server side is [`crate::control`]; this is the vocabulary and the client.

use crate::capture::{CaptureRequest, CaptureStart};
use crate::status::{BondStats, BondStatus};
use serde::{Deserialize, Serialize};
use std::io::{BufReader, ErrorKind};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A request on the control socket (one JSON object per line).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "lowercase")]
pub enum Request {
    /// `/proc/net/bonding`-like status.
    Status,
    /// Counters.
    Stats,
    /// Which member carries a flow.
    Flow {
        /// "tcp" or "udp".
        proto: String,
        /// Source IP:port.
        src: String,
        /// Destination IP:port.
        dst: String,
    },
    /// `lagkit capture`: answered [`Response::Capture`], then a stream of
    /// the frames the bond sends and handles (see [`crate::capture`]).
    Capture(CaptureRequest),
}

/// The answer to a [`Request::Flow`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlowAnswer {
    /// Member name, if any member carries it.
    pub member: Option<String>,
    /// Policy name.
    pub policy: String,
    /// The raw hash value.
    pub hash: u64,
    /// Bucket (strong hashing).
    pub bucket: Option<u8>,
    /// The policy's own explanation.
    pub reason: String,
}

/// A response on the control socket.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Response {
    /// Status.
    Status(Box<BondStatus>),
    /// Stats.
    Stats(BondStats),
    /// Flow.
    Flow(FlowAnswer),
    /// A capture started; frame lines follow.
    Capture(CaptureStart),
    /// The request could not be served.
    Error(String),
}

/// Writes `buf` whole with MSG_NOSIGNAL: a daemon that dies mid-request is
/// an error to report, not a SIGPIPE that ends the asking command silently
/// (one-shot commands run with SIGPIPE's default action, so that a closed
/// stdout ends them quietly).
pub fn send_all(stream: &UnixStream, mut buf: &[u8]) -> std::io::Result<()> {
    use nix::sys::socket::{send, MsgFlags};
    use std::os::fd::AsRawFd;
    while !buf.is_empty() {
        match send(stream.as_raw_fd(), buf, MsgFlags::MSG_NOSIGNAL) {
            Ok(n) => buf = &buf[n..],
            Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Why a request to a daemon's control socket got no answer, in words a
/// user can act on. `who` names the daemon ("bond", "switch") and
/// `starter` the command that runs it.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// The socket is root's.
    #[error("permission denied on the {who}'s control socket {}: it is root's (mode 0600); run this as root", path.display())]
    PermissionDenied {
        /// The daemon.
        who: &'static str,
        /// The socket.
        path: PathBuf,
    },
    /// Nothing listens there.
    #[error("no {who} answers on {}: is `{starter}` running in this network namespace?", path.display())]
    NotRunning {
        /// The daemon.
        who: &'static str,
        /// The command that runs it.
        starter: &'static str,
        /// The socket.
        path: PathBuf,
    },
    /// Connecting failed otherwise.
    #[error("cannot reach the {who}'s control socket {}: {source}", path.display())]
    Unreachable {
        /// The daemon.
        who: &'static str,
        /// The socket.
        path: PathBuf,
        /// What connect(2) said.
        source: std::io::Error,
    },
    /// The daemon closed the socket before the request was written.
    #[error("the {who} at {} went away: {source}", path.display())]
    WentAway {
        /// The daemon.
        who: &'static str,
        /// The socket.
        path: PathBuf,
        /// What send(2) said.
        source: std::io::Error,
    },
    /// No answer line came (timeout, reset, or a line over the limit).
    #[error("no answer from {}: {why}", path.display())]
    NoAnswer {
        /// The socket.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// The answer is not the JSON the request expects.
    #[error("bad answer from {}: {source}", path.display())]
    BadAnswer {
        /// The socket.
        path: PathBuf,
        /// What the decoder said.
        source: serde_json::Error,
    },
}

/// The CLI reports these as text.
impl From<ControlError> for String {
    fn from(e: ControlError) -> String {
        e.to_string()
    }
}

/// Sends one request to a bond's control socket and returns the response.
pub fn request(path: &Path, req: &Request) -> Result<Response, ControlError> {
    exchange(path, req, "bond", "lagkit up")
}

/// Connects to the control socket at `path`, or says why not in words a
/// user can act on; `who` names the daemon ("bond", "switch") and
/// `starter` the command that runs it.
pub fn connect(
    path: &Path,
    who: &'static str,
    starter: &'static str,
) -> Result<UnixStream, ControlError> {
    UnixStream::connect(path).map_err(|e| {
        let path = path.to_path_buf();
        match e.kind() {
            ErrorKind::PermissionDenied => ControlError::PermissionDenied { who, path },
            ErrorKind::NotFound | ErrorKind::ConnectionRefused => {
                ControlError::NotRunning { who, starter, path }
            }
            _ => ControlError::Unreachable {
                who,
                path,
                source: e,
            },
        }
    })
}

/// How long a request waits for its answer.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// Sends one request of any control protocol to the socket at `path` and
/// reads one answer; `who` names the daemon ("bond", "switch") and
/// `starter` the command that runs it, for the errors a user sees.
pub fn exchange<Q: Serialize, R: serde::de::DeserializeOwned>(
    path: &Path,
    req: &Q,
    who: &'static str,
    starter: &'static str,
) -> Result<R, ControlError> {
    let stream = connect(path, who, starter)?;
    let no_answer = |why: String| ControlError::NoAnswer {
        path: path.to_path_buf(),
        why,
    };
    stream
        .set_read_timeout(Some(ANSWER_TIMEOUT))
        .map_err(|e| no_answer(e.to_string()))?;
    // A request type that fails to encode is a bug of this crate's types;
    // it is reported, not a panic.
    let mut out = serde_json::to_vec(req).map_err(|e| no_answer(format!("request: {e}")))?;
    out.push(b'\n');
    send_all(&stream, &out).map_err(|source| ControlError::WentAway {
        who,
        path: path.to_path_buf(),
        source,
    })?;
    // At most lagkit_input::CONTROL_ANSWER: a socket that is not a
    // lagkit daemon's, or one gone wrong, cannot fill this process.
    let name = path.display().to_string();
    let line = lagkit_input::read_line(
        &mut BufReader::new(&stream),
        &name,
        &lagkit_input::CONTROL_ANSWER,
    )
    .map_err(|e| match e {
        lagkit_input::InputError::Io { source, .. } => no_answer(source.to_string()),
        e => no_answer(e.to_string()),
    })?
    .unwrap_or_default();
    serde_json::from_slice(&line).map_err(|source| ControlError::BadAnswer {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_one_json_object_tagged_by_cmd() {
        let text = serde_json::to_string(&Request::Status).unwrap();
        assert_eq!(text, r#"{"cmd":"status"}"#);
        let flow: Request =
            serde_json::from_str(r#"{"cmd":"flow","proto":"tcp","src":"a","dst":"b"}"#).unwrap();
        assert!(matches!(flow, Request::Flow { proto, .. } if proto == "tcp"));
        let e = serde_json::to_string(&Response::Error("no".into())).unwrap();
        assert_eq!(e, r#"{"error":"no"}"#);
    }
}
