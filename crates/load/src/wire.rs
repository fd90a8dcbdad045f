//! The few bytes lagkit's load client and server exchange besides payload:
//! a hello from the client naming the workload and its sizes (netperf
//! passes the same over its control connection; here each connection
//! carries its own, so no extra flow disturbs the hash), the server's
//! accept or refusal, a trailer with the receiver's counts for bulk and
//! request/response tests, and LPM's fixed-size control messages. All
//! integers are big-endian; none of this is counted as payload.

use serde::{Deserialize, Serialize};
use std::fmt;

const HELLO_MAGIC: &[u8; 4] = b"LKLD";
const ACK_MAGIC: &[u8; 4] = b"LKAK";
const TRAILER_MAGIC: &[u8; 4] = b"LKTR";
const CONTROL_MAGIC: &[u8; 4] = b"LKCT";
const VERSION: u8 = 1;

/// What a connection is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Purpose {
    /// socketprocs request/reply.
    Socketprocs,
    /// Client sends, server sinks.
    Stream,
    /// Server sends, client sinks.
    Maerts,
    /// Request/response.
    Rr,
    /// LPM control connection.
    LpmControl,
    /// LPM data connection.
    LpmData,
}

impl Purpose {
    /// The name in JSON and in the lab's reports (`lpm-data`).
    pub fn name(self) -> &'static str {
        match self {
            Purpose::Socketprocs => "socketprocs",
            Purpose::Stream => "stream",
            Purpose::Maerts => "maerts",
            Purpose::Rr => "rr",
            Purpose::LpmControl => "lpm-control",
            Purpose::LpmData => "lpm-data",
        }
    }

    fn code(self) -> u8 {
        match self {
            Purpose::Socketprocs => 1,
            Purpose::Stream => 2,
            Purpose::Maerts => 3,
            Purpose::Rr => 4,
            Purpose::LpmControl => 5,
            Purpose::LpmData => 6,
        }
    }

    fn from_code(c: u8) -> Option<Purpose> {
        Some(match c {
            1 => Purpose::Socketprocs,
            2 => Purpose::Stream,
            3 => Purpose::Maerts,
            4 => Purpose::Rr,
            5 => Purpose::LpmControl,
            6 => Purpose::LpmData,
            _ => return None,
        })
    }
}

mod field {
    use std::ops::Range;
    pub const MAGIC: Range<usize> = 0..4;
    pub const VERSION: usize = 4;
    pub const PURPOSE: usize = 5;
    pub const FLAGS: usize = 6;
    pub const SIZE: Range<usize> = 8..12;
    pub const REPLY: Range<usize> = 12..16;
    pub const INDEX: Range<usize> = 16..20;
    pub const SOCKBUF: Range<usize> = 20..24;
    pub const COUNT: Range<usize> = 24..32;
    pub const RUN: Range<usize> = 32..40;
}

const FLAG_VERIFY: u8 = 1;
const FLAG_NODELAY: u8 = 2;

/// The client's first bytes on every connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hello {
    /// What the connection is for.
    pub purpose: Purpose,
    /// Check received payload against the pattern.
    pub verify: bool,
    /// Set TCP_NODELAY.
    pub nodelay: bool,
    /// Message (request) size.
    pub size: u32,
    /// Response size (rr).
    pub reply: u32,
    /// Connection or migration index within the run.
    pub index: u32,
    /// SO_SNDBUF/SO_RCVBUF for the server's socket; 0 leaves the default.
    pub sockbuf: u32,
    /// Messages the server sends (maerts) before closing; 0 = until told to stop.
    pub count: u64,
    /// The client run this connection belongs to.
    pub run: u64,
}

/// Why a hello could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HelloError {
    /// Not lagkit load (wrong magic): probably another program.
    NotLagkit,
    /// A version this server does not speak.
    Version(u8),
    /// An unknown purpose code.
    Purpose(u8),
}

impl Hello {
    /// Bytes on the wire.
    pub const LEN: usize = 40;

    /// The wire form.
    pub fn emit(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        b[field::MAGIC].copy_from_slice(HELLO_MAGIC);
        b[field::VERSION] = VERSION;
        b[field::PURPOSE] = self.purpose.code();
        b[field::FLAGS] =
            if self.verify { FLAG_VERIFY } else { 0 } | if self.nodelay { FLAG_NODELAY } else { 0 };
        b[field::SIZE].copy_from_slice(&self.size.to_be_bytes());
        b[field::REPLY].copy_from_slice(&self.reply.to_be_bytes());
        b[field::INDEX].copy_from_slice(&self.index.to_be_bytes());
        b[field::SOCKBUF].copy_from_slice(&self.sockbuf.to_be_bytes());
        b[field::COUNT].copy_from_slice(&self.count.to_be_bytes());
        b[field::RUN].copy_from_slice(&self.run.to_be_bytes());
        b
    }

    /// Reads a hello.
    pub fn parse(b: &[u8; Self::LEN]) -> Result<Hello, HelloError> {
        if &b[field::MAGIC] != HELLO_MAGIC {
            return Err(HelloError::NotLagkit);
        }
        if b[field::VERSION] != VERSION {
            return Err(HelloError::Version(b[field::VERSION]));
        }
        let purpose =
            Purpose::from_code(b[field::PURPOSE]).ok_or(HelloError::Purpose(b[field::PURPOSE]))?;
        let u32_at = |r: std::ops::Range<usize>| {
            let mut a = [0u8; 4];
            a.copy_from_slice(&b[r]);
            u32::from_be_bytes(a)
        };
        let u64_at = |r: std::ops::Range<usize>| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[r]);
            u64::from_be_bytes(a)
        };
        Ok(Hello {
            purpose,
            verify: b[field::FLAGS] & FLAG_VERIFY != 0,
            nodelay: b[field::FLAGS] & FLAG_NODELAY != 0,
            size: u32_at(field::SIZE),
            reply: u32_at(field::REPLY),
            index: u32_at(field::INDEX),
            sockbuf: u32_at(field::SOCKBUF),
            count: u64_at(field::COUNT),
            run: u64_at(field::RUN),
        })
    }
}

/// Why a server refused a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Refusal {
    /// The server runs another workload.
    WrongKind,
    /// A size outside what the server accepts.
    BadSize,
    /// The hello was not understood.
    BadHello,
    /// An unknown refusal code.
    Unknown(u8),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::WrongKind => f.write_str(
                "the server there runs another workload (start it with the same --kind)",
            ),
            Refusal::BadSize => f.write_str("message size out of range for the server"),
            Refusal::BadHello => f.write_str("the server did not understand the hello (version?)"),
            Refusal::Unknown(c) => write!(f, "unknown refusal code {c}"),
        }
    }
}

/// The server's answer to a hello: `Ok(())` or a refusal.
pub fn emit_ack(r: Result<(), Refusal>) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[0..4].copy_from_slice(ACK_MAGIC);
    b[4] = match r {
        Ok(()) => 0,
        Err(Refusal::WrongKind) => 1,
        Err(Refusal::BadSize) => 2,
        Err(Refusal::BadHello) => 3,
        Err(Refusal::Unknown(c)) => c,
    };
    b
}

/// Reads an ack; a wrong magic is [`Refusal::BadHello`] (not a lagkit server).
pub fn parse_ack(b: &[u8; 8]) -> Result<(), Refusal> {
    if &b[0..4] != ACK_MAGIC {
        return Err(Refusal::BadHello);
    }
    match b[4] {
        0 => Ok(()),
        1 => Err(Refusal::WrongKind),
        2 => Err(Refusal::BadSize),
        3 => Err(Refusal::BadHello),
        c => Err(Refusal::Unknown(c)),
    }
}

/// The receiver's counts, sent after the sender finished (stream, rr, LPM data).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Trailer {
    /// Payload bytes received.
    pub bytes: u64,
    /// Requests answered (rr) or messages received.
    pub transactions: u64,
    /// Payload bytes that did not match the pattern.
    pub corrupt: u64,
}

impl Trailer {
    /// Bytes on the wire.
    pub const LEN: usize = 32;

    /// The wire form.
    pub fn emit(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        b[0..4].copy_from_slice(TRAILER_MAGIC);
        b[8..16].copy_from_slice(&self.bytes.to_be_bytes());
        b[16..24].copy_from_slice(&self.transactions.to_be_bytes());
        b[24..32].copy_from_slice(&self.corrupt.to_be_bytes());
        b
    }

    /// Reads a trailer; None if the magic is wrong.
    pub fn parse(b: &[u8; Self::LEN]) -> Option<Trailer> {
        if &b[0..4] != TRAILER_MAGIC {
            return None;
        }
        let at = |i: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[i..i + 8]);
            u64::from_be_bytes(a)
        };
        Some(Trailer {
            bytes: at(8),
            transactions: at(16),
            corrupt: at(24),
        })
    }
}

/// One LPM control message (either direction): a sequence number, the
/// data bytes the sender has sent (client) or received (server), and
/// whether the migration is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Control {
    /// Counts messages on this control connection.
    pub seq: u64,
    /// Data bytes sent (client) or received (server) so far.
    pub data: u64,
    /// Client: all data is sent, `data` is the total. Server: all of it arrived.
    pub done: bool,
}

impl Control {
    /// Bytes on the wire (a small, fixed control message).
    pub const LEN: usize = 64;

    /// The wire form.
    pub fn emit(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        b[0..4].copy_from_slice(CONTROL_MAGIC);
        b[4] = u8::from(self.done);
        b[8..16].copy_from_slice(&self.seq.to_be_bytes());
        b[16..24].copy_from_slice(&self.data.to_be_bytes());
        b
    }

    /// Reads a control message; None if the magic is wrong.
    pub fn parse(b: &[u8; Self::LEN]) -> Option<Control> {
        if &b[0..4] != CONTROL_MAGIC {
            return None;
        }
        let at = |i: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[i..i + 8]);
            u64::from_be_bytes(a)
        };
        Some(Control {
            done: b[4] & 1 != 0,
            seq: at(8),
            data: at(16),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_bytes() {
        let h = Hello {
            purpose: Purpose::Rr,
            verify: true,
            nodelay: true,
            size: 200,
            reply: 1000,
            index: 3,
            sockbuf: 131072,
            count: 5,
            run: 0x0102_0304_0506_0708,
        };
        let b = h.emit();
        assert_eq!(
            b,
            [
                b'L', b'K', b'L', b'D', 1, 4, 3, 0, 0, 0, 0, 200, 0, 0, 0x03, 0xe8, 0, 0, 0, 3, 0,
                2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 1, 2, 3, 4, 5, 6, 7, 8
            ]
        );
        assert_eq!(Hello::parse(&b), Ok(h));
        let mut bad = b;
        bad[0] = b'X';
        assert_eq!(Hello::parse(&bad), Err(HelloError::NotLagkit));
        let mut bad = b;
        bad[4] = 9;
        assert_eq!(Hello::parse(&bad), Err(HelloError::Version(9)));
        let mut bad = b;
        bad[5] = 77;
        assert_eq!(Hello::parse(&bad), Err(HelloError::Purpose(77)));
    }

    #[test]
    fn ack_trailer_control_bytes() {
        assert_eq!(emit_ack(Ok(())), *b"LKAK\0\0\0\0");
        for r in [
            Ok(()),
            Err(Refusal::WrongKind),
            Err(Refusal::BadSize),
            Err(Refusal::BadHello),
            Err(Refusal::Unknown(99)),
        ] {
            assert_eq!(parse_ack(&emit_ack(r)), r);
        }
        assert_eq!(parse_ack(b"HTTP/1.1"), Err(Refusal::BadHello));

        let t = Trailer {
            bytes: 1 << 40,
            transactions: 7,
            corrupt: 0,
        };
        let b = t.emit();
        assert_eq!(&b[..4], b"LKTR");
        assert_eq!(&b[8..16], &[0, 0, 1, 0, 0, 0, 0, 0]);
        assert_eq!(Trailer::parse(&b), Some(t));
        assert_eq!(Trailer::parse(&[0; 32]), None);

        let c = Control {
            seq: 2,
            data: 65536,
            done: true,
        };
        let b = c.emit();
        assert_eq!(&b[..8], b"LKCT\x01\0\0\0");
        assert_eq!(&b[16..24], &[0, 0, 0, 0, 0, 1, 0, 0]);
        assert_eq!(Control::parse(&b), Some(c));
        assert_eq!(Control::parse(&[0; 64]), None);
    }
}
