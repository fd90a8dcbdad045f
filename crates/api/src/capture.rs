//! `lagkit capture`: a running daemon copies the frames it sends and
//! handles to the clients that asked, without ever waiting for them.
//!
//! The daemon's protocol loop calls [`Taps::frame`] where a control frame
//! leaves or arrives; each capture client has a bounded queue of
//! [`QUEUE`] encoded lines, and a frame that finds its queue full is
//! dropped and counted, so a slow reader costs the loop one failed
//! `try_send`, never a wait. The control server (see
//! [`crate::control::Stream`]) writes the queued lines to the client and
//! adds a `{"dropped":N}` line whenever that count grows. With no capture
//! running a hook costs one check of an empty vector.
//!
//! The stream after the [`CaptureStart`] answer is one JSON [`StreamLine`]
//! per line; the CLI turns it into pcapng.

use crate::control::Stream;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::Arc;

/// Captures one daemon serves at once.
pub const MAX_CAPTURES: usize = 4;
/// Lines queued for one capture client before frames are dropped.
pub const QUEUE: usize = 2048;
/// The largest snapshot length a capture may ask (a 64 KiB GSO frame and
/// its headers fit).
pub const MAX_SNAPLEN: u32 = 65_535;

/// Which way a frame went on the interface it is recorded on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Received by the daemon.
    In,
    /// Sent by the daemon.
    Out,
}

/// What a capture asks for (the arguments of the control request).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptureRequest {
    /// Data frames too, where the daemon sees them.
    #[serde(default)]
    pub data: bool,
    /// Bytes kept of each frame (default and maximum [`MAX_SNAPLEN`]).
    #[serde(default)]
    pub snaplen: Option<u32>,
}

/// Why a daemon refuses a capture.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CaptureError {
    /// The snapshot length asked for is out of range.
    #[error("capture: snaplen {0} is out of range: give 14 to {MAX_SNAPLEN} bytes")]
    Snaplen(u32),
    /// As many captures as a daemon runs already run.
    #[error("capture: {MAX_CAPTURES} captures already run on this daemon; stop one first")]
    TooMany,
}

impl CaptureRequest {
    /// The snapshot length to use, or why the request is refused.
    pub fn snaplen(&self) -> Result<u32, CaptureError> {
        match self.snaplen {
            None => Ok(MAX_SNAPLEN),
            Some(n) if (14..=MAX_SNAPLEN).contains(&n) => Ok(n),
            Some(n) => Err(CaptureError::Snaplen(n)),
        }
    }
}

/// The daemon's answer to a capture request, before the frames.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptureStart {
    /// The interfaces frames will be recorded on, in order (members or
    /// ports; a member added later appears in its frames' `ifname`).
    pub interfaces: Vec<String>,
    /// The snapshot length in force.
    pub snaplen: u32,
    /// Whether data frames are copied too.
    pub data: bool,
    /// What the capture cannot see, for the user.
    pub note: Option<String>,
}

/// One captured frame.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapturedFrame {
    /// The member or port it was sent or received on.
    pub ifname: String,
    /// Which way.
    pub dir: Direction,
    /// When, in nanoseconds since the Unix epoch (CLOCK_REALTIME).
    pub ts_ns: u64,
    /// Its whole length.
    pub len: u32,
    /// Its first `snaplen` bytes (in hex on the wire: half the size of
    /// serde's array of numbers, and several times faster to write on
    /// the daemon's thread).
    #[serde(with = "hex_bytes")]
    pub data: Vec<u8>,
}

/// Bytes as a lowercase hex string.
mod hex_bytes {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    const DIGITS: &[u8; 16] = b"0123456789abcdef";

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        let mut out = Vec::with_capacity(v.len() * 2);
        for b in v {
            out.push(DIGITS[usize::from(b >> 4)]);
            out.push(DIGITS[usize::from(b & 15)]);
        }
        // Only ASCII digits were pushed.
        s.serialize_str(std::str::from_utf8(&out).unwrap_or_default())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        let nibble = |c: u8| match c {
            b'0'..=b'9' => Ok(c - b'0'),
            b'a'..=b'f' => Ok(c - b'a' + 10),
            b'A'..=b'F' => Ok(c - b'A' + 10),
            _ => Err(D::Error::custom("frame data: not a hex digit")),
        };
        if text.len() % 2 != 0 {
            return Err(D::Error::custom("frame data: an odd number of hex digits"));
        }
        text.as_bytes()
            .chunks(2)
            .map(|p| Ok(nibble(p[0])? << 4 | nibble(p[1])?))
            .collect()
    }
}

/// One line of the stream that follows a [`CaptureStart`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StreamLine {
    /// A frame.
    Frame(CapturedFrame),
    /// Frames dropped so far because this client read too slowly.
    Dropped(u64),
}

struct Sub {
    tx: SyncSender<Vec<u8>>,
    dropped: Arc<AtomicU64>,
    closed: Arc<AtomicBool>,
    data: bool,
    snaplen: u32,
}

/// The capture clients of one daemon.
#[derive(Default)]
pub struct Taps {
    subs: Vec<Sub>,
}

/// The current time for a capture timestamp (CLOCK_REALTIME, ns).
pub fn realtime_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

impl Taps {
    /// Whether any capture runs.
    pub fn is_empty(&self) -> bool {
        self.subs.is_empty()
    }

    /// Whether any capture wants data frames.
    pub fn wants_data(&self) -> bool {
        self.subs.iter().any(|s| s.data)
    }

    /// Starts a capture, or says why not (too many running, a bad
    /// argument).
    pub fn open(&mut self, req: &CaptureRequest) -> Result<Stream, CaptureError> {
        let snaplen = req.snaplen()?;
        self.prune();
        if self.subs.len() >= MAX_CAPTURES {
            return Err(CaptureError::TooMany);
        }
        let (tx, rx) = mpsc::sync_channel(QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        let closed = Arc::new(AtomicBool::new(false));
        self.subs.push(Sub {
            tx,
            dropped: dropped.clone(),
            closed: closed.clone(),
            data: req.data,
            snaplen,
        });
        Ok(Stream {
            lines: rx,
            dropped,
            closed,
        })
    }

    /// Forgets the captures whose clients went away.
    pub fn prune(&mut self) {
        self.subs.retain(|s| !s.closed.load(Ordering::Relaxed));
    }

    /// Copies `frame`, sent or received on `ifname`, to every capture
    /// (a data frame only to those that asked for data).
    pub fn frame(&self, ifname: &str, dir: Direction, frame: &[u8], is_data: bool) {
        if self.subs.is_empty() {
            return;
        }
        let ts_ns = realtime_ns();
        for s in &self.subs {
            if is_data && !s.data {
                continue;
            }
            let keep = frame.len().min(s.snaplen as usize);
            let line = StreamLine::Frame(CapturedFrame {
                ifname: ifname.to_string(),
                dir,
                ts_ns,
                len: u32::try_from(frame.len()).unwrap_or(u32::MAX),
                data: frame[..keep].to_vec(),
            });
            let Ok(mut text) = serde_json::to_vec(&line) else {
                continue;
            };
            text.push(b'\n');
            match s.tx.try_send(text) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) => {
                    s.dropped.fetch_add(1, Ordering::Relaxed);
                }
                Err(TrySendError::Disconnected(_)) => s.closed.store(true, Ordering::Relaxed),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_drops_and_counts_and_a_gone_client_is_forgotten() {
        let mut taps = Taps::default();
        assert!(taps.is_empty());
        let s = taps.open(&CaptureRequest::default()).unwrap();
        let frame = [0xabu8; 124];
        for _ in 0..QUEUE + 10 {
            taps.frame("eth1", Direction::Out, &frame, false);
        }
        assert_eq!(s.dropped.load(Ordering::Relaxed), 10);
        let first = s.lines.try_recv().unwrap();
        let line: StreamLine = serde_json::from_slice(&first).unwrap();
        let StreamLine::Frame(f) = line else {
            panic!("{line:?}")
        };
        assert_eq!(
            (f.ifname.as_str(), f.dir, f.len),
            ("eth1", Direction::Out, 124)
        );
        assert_eq!(f.data, frame);
        let text = String::from_utf8(first).unwrap();
        assert!(
            text.contains(&format!("\"data\":\"{}\"", "ab".repeat(124))),
            "{text}"
        );
        for bad in ["\"abc\"", "\"zz\"", "[1,2]"] {
            let line = format!(
                r#"{{"frame":{{"ifname":"e","dir":"in","ts_ns":1,"len":1,"data":{bad}}}}}"#
            );
            assert!(serde_json::from_str::<StreamLine>(&line).is_err(), "{bad}");
        }
        // Data frames go only to captures that asked for them.
        taps.frame("eth1", Direction::In, &frame, true);
        assert_eq!(s.dropped.load(Ordering::Relaxed), 10);
        drop(s);
        taps.frame("eth1", Direction::In, &frame, false);
        taps.prune();
        assert!(taps.is_empty());
    }

    /// Capture requests mutated byte by byte (a seeded xorshift, so a
    /// failure repeats): each parses to an error, or to a request that
    /// opens a capture or is refused with a message; nothing panics.
    #[test]
    fn mutated_capture_requests_are_answered_or_refused() {
        use crate::protocol::Request;
        let seeds: [&[u8]; 4] = [
            br#"{"cmd":"capture"}"#,
            br#"{"cmd":"capture","data":true,"snaplen":128}"#,
            br#"{"cmd":"capture","snaplen":65535,"data":false}"#,
            br#"{"cmd":"capture","snaplen":14}"#,
        ];
        let alphabet = b"{}[]\":,0123456789-+.eEtruefalsnl \\\x00\xff";
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mut opened, mut refused, mut unparsed) = (0, 0, 0);
        for i in 0..20_000 {
            let mut v = seeds[i % seeds.len()].to_vec();
            for _ in 0..1 + next() % 4 {
                let at = (next() as usize) % (v.len() + 1);
                let c = alphabet[(next() as usize) % alphabet.len()];
                match next() % 3 {
                    0 if at < v.len() => v[at] = c,
                    1 if at < v.len() => {
                        v.remove(at);
                    }
                    _ => v.insert(at, c),
                }
            }
            let mut taps = Taps::default();
            match serde_json::from_slice::<Request>(&v) {
                Ok(Request::Capture(req)) => match taps.open(&req) {
                    Ok(_) => opened += 1,
                    Err(e) => {
                        assert!(e.to_string().starts_with("capture: "), "{e}");
                        refused += 1;
                    }
                },
                Ok(_) => {}
                Err(_) => unparsed += 1,
            }
        }
        assert!(
            opened > 0 && refused > 0 && unparsed > 0,
            "{opened} {refused} {unparsed}"
        );
    }

    #[test]
    fn snaplen_cuts_and_bad_arguments_are_refused() {
        let mut taps = Taps::default();
        let s = taps
            .open(&CaptureRequest {
                data: true,
                snaplen: Some(20),
            })
            .unwrap();
        assert!(taps.wants_data());
        taps.frame("p1", Direction::In, &[1u8; 100], true);
        let line: StreamLine = serde_json::from_slice(&s.lines.try_recv().unwrap()).unwrap();
        assert!(matches!(line, StreamLine::Frame(f) if f.data.len() == 20 && f.len == 100));
        for bad in [0, 13, MAX_SNAPLEN + 1, u32::MAX] {
            let e = taps
                .open(&CaptureRequest {
                    data: false,
                    snaplen: Some(bad),
                })
                .err()
                .unwrap();
            assert!(e.to_string().contains("out of range"), "{e}");
        }
        let mut held = vec![s];
        while held.len() < MAX_CAPTURES {
            held.push(taps.open(&CaptureRequest::default()).unwrap());
        }
        let e = taps.open(&CaptureRequest::default()).err().unwrap();
        assert_eq!(e, CaptureError::TooMany);
        assert!(e.to_string().contains("already run"), "{e}");
        held.pop().unwrap().closed.store(true, Ordering::Relaxed);
        assert!(taps.open(&CaptureRequest::default()).is_ok());
    }
}
