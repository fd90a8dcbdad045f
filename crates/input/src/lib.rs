//! Bounded input: every file lagkit reads whole (configurations, flow
//! lists, reports) is read through here, at most a documented number of
//! bytes, so that `/dev/zero`, a sparse file of gigabytes or an endless
//! pipe is refused within moments and a few megabytes of memory instead of
//! growing until the machine swaps. Inputs read as a stream (captures) are
//! [`Opened`] here too and hold their memory bounded themselves.
//!
//! A path of `-` is standard input. A regular file larger than its limit
//! is refused from its size alone, before a byte is read; anything else
//! (a pipe, a device) is read up to the limit and refused at the first
//! byte past it. Text is refused at its first NUL byte, which no
//! configuration holds and every binary file soon does.
//!
//! The limits, with the reason for each value, are listed in
//! `docs/reference/limits.md`; a test holds the page and the constants
//! here together.

#![forbid(unsafe_code)]

use std::fmt;
use std::io::{self, Read};
use std::path::Path;

/// The path that means standard input.
pub const STDIN: &str = "-";

/// How much of one kind of input lagkit reads, and what to tell a user
/// whose input is larger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// The most bytes read.
    pub bytes: u64,
    /// What is read, for messages: `a configuration`.
    pub what: &'static str,
    /// What to do when a real input is larger.
    pub fix: &'static str,
}

/// Any configuration `lagkit check` reads (every host dialect, Open
/// vSwitch output, Cisco IOS) and the IOS configuration of `lagkit
/// switch`: 64 MiB. The largest real ones, a chassis switch's
/// running-config, are a few MiB; 64 MiB leaves room for generated
/// configurations of hundreds of thousands of ports, and refusing at it
/// bounds a run at a few hundred MB of memory (about 350 MB for 64 MiB
/// of IOS).
pub const CONFIG: Limit = Limit {
    bytes: 64 << 20,
    what: "a configuration",
    fix: "give the configuration itself (a running-config, a bond's files), or only the part with the aggregates",
};

/// A lagkit bond configuration (TOML) read by `lagkit up`, `lagkit plan
/// --config` and `lagkit check`: 1 MiB. A file of many bonds is a few
/// KiB; TOML is read into a document tree several times the text's size.
pub const BOND_CONFIG: Limit = Limit {
    bytes: 1 << 20,
    what: "a bond configuration",
    fix: "a bond configuration is a few KiB: check the path, or split the bonds over several files",
};

/// A flow list (CSV or JSON) read by `lagkit plan`: 64 MiB, about a
/// million flows. The planner keeps every listed flow; traffic with more
/// flows is better given as a capture, which is read as a stream and
/// folded into one flow per header key.
pub const FLOW_LIST: Limit = Limit {
    bytes: 64 << 20,
    what: "a flow list",
    fix: "sum the flows by header first (one row per flow, with its bytes), or give the capture itself",
};

/// A `lagkit lab run` report (report.json) read by `lagkit plan --lab
/// --measured`: 64 MiB. A report of a full sweep is a few MiB.
pub const REPORT: Limit = Limit {
    bytes: 64 << 20,
    what: "a lab report",
    fix: "give the report.json that `lagkit lab run` wrote",
};

/// One request line on a control socket (bond or switch): 64 KiB. The
/// longest request lagkit sends is a `flow` query of about 200 bytes; a
/// client that sends more without a newline is told so and cut off.
pub const CONTROL_REQUEST: Limit = Limit {
    bytes: 64 << 10,
    what: "a control request",
    fix: "send one JSON request per line, as `lagkit status` does",
};

/// One answer line a control client reads from a bond or a switch: 64
/// MiB. The largest answer, a switch's MAC address table, takes about 150
/// bytes a MAC, so this holds hundreds of thousands.
pub const CONTROL_ANSWER: Limit = Limit {
    bytes: 64 << 20,
    what: "a control answer",
    fix: "the daemon answered more than any answer holds: is the socket a lagkit daemon's?",
};

/// A Catalyst's show output read by `lagkit check` (within [`CONFIG`],
/// once the text is known to be show output): 4 MiB. A whole session of
/// the EtherChannel, LACP, PAgP and interface commands on a fully
/// populated chassis stays far below; a larger file is a log of
/// something else, and every row is kept in memory with its line.
pub const SHOW_OUTPUT: Limit = Limit {
    bytes: 4 << 20,
    what: "show output",
    fix: "keep only the show commands about the channel (etherchannel, lacp, pagp, interfaces)",
};

/// Every limit, for the reference page's test.
pub const ALL: [(&str, Limit); 7] = [
    ("CONFIG", CONFIG),
    ("BOND_CONFIG", BOND_CONFIG),
    ("FLOW_LIST", FLOW_LIST),
    ("REPORT", REPORT),
    ("CONTROL_REQUEST", CONTROL_REQUEST),
    ("CONTROL_ANSWER", CONTROL_ANSWER),
    ("SHOW_OUTPUT", SHOW_OUTPUT),
];

/// A byte count as the reference page writes it: `64 MiB`, `1 MiB`,
/// `64 KiB`, or bytes.
pub fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// Why an input could not be read. Each message names the file first.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be opened or read.
    #[error("{file}: {source}")]
    Io {
        /// The file, as [`name`] gives it.
        file: String,
        /// What the system said.
        source: io::Error,
    },
    /// More than the limit.
    #[error("{file}: {}", TooLarge(limit))]
    TooLarge {
        /// The file.
        file: String,
        /// The limit it passed.
        limit: Limit,
    },
    /// Text was expected and a byte is not text.
    #[error("{file}: not a text file (byte {offset} is {what})")]
    NotText {
        /// The file.
        file: String,
        /// The offset of the first byte that is not text (from 0).
        offset: u64,
        /// What it is: `NUL`, `not UTF-8`.
        what: &'static str,
    },
}

struct TooLarge<'a>(&'a Limit);

impl fmt::Display for TooLarge<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "larger than {}, the most lagkit reads as {}: is it the right file? {}",
            size(self.0.bytes),
            self.0.what,
            self.0.fix
        )
    }
}

impl InputError {
    /// The file named.
    pub fn file(&self) -> &str {
        match self {
            InputError::Io { file, .. }
            | InputError::TooLarge { file, .. }
            | InputError::NotText { file, .. } => file,
        }
    }

    /// What is wrong, without the file (for outputs that show the file
    /// apart).
    pub fn reason(&self) -> String {
        let all = self.to_string();
        all.strip_prefix(self.file())
            .and_then(|r| r.strip_prefix(": "))
            .map_or(all.clone(), str::to_string)
    }
}

/// Whether `path` means standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN
}

/// How messages name `path`: `standard input` for `-`, else the path as
/// given.
pub fn name(path: &Path) -> String {
    if is_stdin(path) {
        "standard input".into()
    } else {
        path.display().to_string()
    }
}

/// An input opened for reading: a file or standard input, with its first
/// bytes (to tell a format by) kept for whoever reads on.
pub struct Opened {
    name: String,
    size: Option<u64>,
    head: Vec<u8>,
    rest: Box<dyn Read>,
}

impl fmt::Debug for Opened {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Opened")
            .field("name", &self.name)
            .field("size", &self.size)
            .field("head", &self.head.len())
            .finish_non_exhaustive()
    }
}

impl Opened {
    /// Opens `path` (`-`: standard input).
    pub fn open(path: &Path) -> Result<Opened, InputError> {
        let file = name(path);
        if is_stdin(path) {
            return Ok(Opened {
                name: file,
                size: None,
                head: Vec::new(),
                rest: Box::new(io::stdin().lock()),
            });
        }
        let io = |source| InputError::Io {
            file: file.clone(),
            source,
        };
        let f = std::fs::File::open(path).map_err(io)?;
        let meta = f.metadata().map_err(io)?;
        Ok(Opened {
            size: meta.is_file().then_some(meta.len()),
            name: file,
            head: Vec::new(),
            rest: Box::new(f),
        })
    }

    /// How messages name it ([`name`]).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its size, for a regular file.
    pub fn size(&self) -> Option<u64> {
        self.size
    }

    /// Its first `n` bytes (fewer if it is shorter), read without losing
    /// them: [`Opened::read_all`] and [`Opened::into_reader`] start with
    /// them.
    pub fn head(&mut self, n: usize) -> Result<&[u8], InputError> {
        let mut buf = [0u8; 512];
        while self.head.len() < n {
            let want = (n - self.head.len()).min(buf.len());
            match self.rest.read(&mut buf[..want]) {
                Ok(0) => break,
                Ok(k) => self.head.extend_from_slice(&buf[..k]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(InputError::Io {
                        file: self.name.clone(),
                        source,
                    })
                }
            }
        }
        Ok(&self.head[..n.min(self.head.len())])
    }

    /// Reads it whole, at most `limit` bytes; with `text`, refused at its
    /// first NUL byte. A regular file larger than the limit (a sparse file
    /// of gigabytes) is refused from its size, before a byte is read.
    pub fn read_all(self, limit: &Limit, text: bool) -> Result<Vec<u8>, InputError> {
        if self.size.is_some_and(|s| s > limit.bytes) {
            return Err(InputError::TooLarge {
                file: self.name,
                limit: *limit,
            });
        }
        let (name, size) = (self.name.clone(), self.size);
        read_from(self.into_reader(), &name, limit, text, size)
    }

    /// The input as a stream, from its first byte; the caller bounds what
    /// it keeps.
    pub fn into_reader(self) -> impl Read {
        io::Cursor::new(self.head).chain(self.rest)
    }
}

/// Reads `path` (`-`: standard input) whole, at most `limit` bytes.
pub fn read(path: &Path, limit: &Limit) -> Result<Vec<u8>, InputError> {
    Opened::open(path)?.read_all(limit, false)
}

/// Reads `path` (`-`: standard input) whole as UTF-8 text, at most
/// `limit` bytes; refused at its first NUL byte, without reading on.
pub fn read_text(path: &Path, limit: &Limit) -> Result<String, InputError> {
    let input = Opened::open(path)?;
    let file = input.name.clone();
    into_text(input.read_all(limit, true)?, &file)
}

/// Reads `r` to its end, at most `limit` bytes; with `text`, refused at
/// the first NUL byte. `file` names it in errors; `size`, when known,
/// sizes the buffer at once.
pub fn read_from(
    mut r: impl Read,
    file: &str,
    limit: &Limit,
    text: bool,
    size: Option<u64>,
) -> Result<Vec<u8>, InputError> {
    let max = usize::try_from(limit.bytes).unwrap_or(usize::MAX);
    let first = size.map_or(0, |s| usize::try_from(s).unwrap_or(max).min(max));
    let mut buf: Vec<u8> = Vec::with_capacity(first);
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let n = match r.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(InputError::Io {
                    file: file.into(),
                    source,
                })
            }
        };
        let got = &chunk[..n];
        if text {
            if let Some(i) = got.iter().position(|&b| b == 0) {
                return Err(InputError::NotText {
                    file: file.into(),
                    offset: (buf.len() + i) as u64,
                    what: "NUL",
                });
            }
        }
        if n > max - buf.len() {
            return Err(InputError::TooLarge {
                file: file.into(),
                limit: *limit,
            });
        }
        // Grow by doubling, but never past the limit: memory stays at
        // most the limit, whatever the input.
        if buf.capacity() - buf.len() < n {
            let more = buf.capacity().max(n).min(max - buf.len());
            buf.reserve_exact(more);
        }
        buf.extend_from_slice(got);
    }
    Ok(buf)
}

/// `bytes` as text, or where it stops being UTF-8.
pub fn into_text(bytes: Vec<u8>, file: &str) -> Result<String, InputError> {
    String::from_utf8(bytes).map_err(|e| InputError::NotText {
        file: file.into(),
        offset: e.utf8_error().valid_up_to() as u64,
        what: "not UTF-8",
    })
}

/// Reads one line (through its `\n`, which is kept) of at most `limit`
/// bytes from `r`; `Ok(None)` at the end of the input before any byte.
/// A longer line is [`InputError::TooLarge`], with no more than the limit
/// read.
pub fn read_line(
    r: &mut impl io::BufRead,
    file: &str,
    limit: &Limit,
) -> Result<Option<Vec<u8>>, InputError> {
    let max = usize::try_from(limit.bytes).unwrap_or(usize::MAX);
    let mut line = Vec::new();
    loop {
        let got = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(InputError::Io {
                    file: file.into(),
                    source,
                })
            }
        };
        if got.is_empty() {
            return Ok((!line.is_empty()).then_some(line));
        }
        let (take, done) = match got.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (got.len(), false),
        };
        if take > max - line.len() {
            return Err(InputError::TooLarge {
                file: file.into(),
                limit: *limit,
            });
        }
        line.extend_from_slice(&got[..take]);
        r.consume(take);
        if done {
            return Ok(Some(line));
        }
    }
}

/// Runs arbitrary bytes through the bounded readers for `cargo fuzz`
/// (target `bounded_input`): the first byte picks a limit of 0 to 255
/// bytes, the rest is the input. Panics only if a limit does not hold:
/// more kept than the limit, a refusal of an input within it, a NUL
/// missed or misplaced, a line that is not the input's.
pub fn fuzz_one(data: &[u8]) {
    let Some((&first, input)) = data.split_first() else {
        return;
    };
    let limit = Limit {
        bytes: u64::from(first),
        what: "a fuzz input",
        fix: "none",
    };
    let max = usize::from(first);
    for text in [false, true] {
        // Through a reader that hands out 1 to 7 bytes at a time.
        let r = Trickle(input, usize::from(first % 7) + 1);
        let nul = input.iter().position(|&b| b == 0);
        match read_from(r, "fuzz", &limit, text, None) {
            Ok(v) => {
                assert_eq!(v, input);
                assert!(v.len() <= max);
                assert!(!text || nul.is_none());
            }
            Err(InputError::TooLarge { .. }) => {
                assert!(input.len() > max);
                // Refused past the limit, before any NUL that was there.
                assert!(!text || nul.is_none_or(|i| i > max));
            }
            Err(InputError::NotText { offset, .. }) => {
                assert!(text);
                assert_eq!(Some(offset as usize), nul);
            }
            Err(InputError::Io { .. }) => panic!("a slice does not fail"),
        }
    }
    let mut r = io::BufReader::with_capacity(usize::from(first % 5) + 1, input);
    let mut at = 0;
    loop {
        match read_line(&mut r, "fuzz", &limit) {
            Ok(Some(line)) => {
                assert!(line.len() <= max && !line.is_empty());
                assert_eq!(line, &input[at..at + line.len()]);
                let nl = line.iter().position(|&b| b == b'\n');
                assert!(nl.is_none_or(|i| i == line.len() - 1));
                at += line.len();
            }
            Ok(None) => {
                assert_eq!(at, input.len());
                break;
            }
            Err(InputError::TooLarge { .. }) => {
                let rest = &input[at..];
                let end = rest
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(rest.len(), |i| i + 1);
                assert!(end > max);
                break;
            }
            Err(e) => panic!("{e}"),
        }
    }
}

/// A reader that hands out at most `.1` bytes a read.
struct Trickle<'a>(&'a [u8], usize);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.0.len().min(self.1).min(buf.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Cursor};

    const SMALL: Limit = Limit {
        bytes: 100,
        what: "a test input",
        fix: "make it smaller",
    };

    fn dir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("lk-input-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn up_to_the_limit_is_read_and_one_byte_more_refused() {
        let ok = read_from(&[b'a'; 100][..], "f", &SMALL, true, None).unwrap();
        assert_eq!(ok.len(), 100);
        let e = read_from(&[b'a'; 101][..], "f", &SMALL, true, None).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { .. }), "{e}");
        assert_eq!(
            e.to_string(),
            "f: larger than 100 bytes, the most lagkit reads as a test input: is it the right file? make it smaller"
        );
        assert_eq!(e.file(), "f");
        assert!(
            e.reason().starts_with("larger than 100 bytes"),
            "{}",
            e.reason()
        );
        assert!(read_from(&b""[..], "f", &SMALL, true, None)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn an_endless_input_is_refused_with_memory_bounded() {
        // An endless reader (`yes`, /dev/zero): stops one chunk past the
        // limit, and the buffer never grew past it.
        struct Endless(u64);
        impl Read for Endless {
            fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
                b.fill(b'y');
                self.0 += b.len() as u64;
                Ok(b.len())
            }
        }
        let limit = Limit {
            bytes: 1 << 20,
            ..SMALL
        };
        let mut r = Endless(0);
        let e = read_from(&mut r, "yes", &limit, true, None).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { .. }), "{e}");
        assert!(r.0 <= (1 << 20) + (64 << 10), "read {} bytes", r.0);
        // Zeros are not text: refused at the first byte.
        let e = read_from(io::repeat(0), "zero", &CONFIG, true, None).unwrap_err();
        assert_eq!(e.to_string(), "zero: not a text file (byte 0 is NUL)");
        // Read as bytes, zeros are refused at the limit.
        let e = read_from(io::repeat(0), "zero", &limit, false, None).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { .. }), "{e}");
    }

    #[test]
    fn a_nul_or_invalid_utf8_names_its_offset() {
        let e = read_from(&b"abc\0def"[..], "f", &SMALL, true, None).unwrap_err();
        assert_eq!(e.to_string(), "f: not a text file (byte 3 is NUL)");
        assert_eq!(
            read_from(&b"abc\0def"[..], "f", &SMALL, false, None).unwrap(),
            b"abc\0def"
        );
        let e = into_text(b"ab\xffc".to_vec(), "f").unwrap_err();
        assert_eq!(e.to_string(), "f: not a text file (byte 2 is not UTF-8)");
        assert_eq!(e.reason(), "not a text file (byte 2 is not UTF-8)");
    }

    #[test]
    fn files_are_refused_by_their_size_before_reading() {
        let d = dir("size");
        let big = d.join("sparse");
        let f = std::fs::File::create(&big).unwrap();
        // Sparse: 2 GiB that take no disk and would take 2 GiB of memory.
        f.set_len(2 << 30).unwrap();
        let t = std::time::Instant::now();
        let e = read_text(&big, &CONFIG).unwrap_err();
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
        assert!(matches!(e, InputError::TooLarge { .. }), "{e}");
        assert_eq!(e.file(), big.display().to_string());
        assert!(e.to_string().contains("larger than 64 MiB"), "{e}");
        std::fs::write(&big, "interface gi1/1\n").unwrap();
        assert_eq!(read_text(&big, &CONFIG).unwrap(), "interface gi1/1\n");
        assert_eq!(read(&big, &SMALL).unwrap().len(), 16);
        let e = read(&d.join("absent"), &SMALL).unwrap_err();
        assert!(matches!(e, InputError::Io { .. }), "{e}");
        assert!(e.to_string().contains("absent: No such file"), "{e}");
        // A directory opens but does not read.
        assert!(matches!(
            read(&d, &SMALL).unwrap_err(),
            InputError::Io { .. }
        ));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn dev_zero_is_refused_at_once() {
        let t = std::time::Instant::now();
        let e = read_text(Path::new("/dev/zero"), &CONFIG).unwrap_err();
        assert_eq!(e.to_string(), "/dev/zero: not a text file (byte 0 is NUL)");
        let e = read(Path::new("/dev/zero"), &BOND_CONFIG).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { .. }), "{e}");
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn stdin_is_named_as_such() {
        assert!(is_stdin(Path::new("-")));
        assert!(!is_stdin(Path::new("./-")));
        assert_eq!(name(Path::new("-")), "standard input");
        assert_eq!(name(Path::new("a/b.conf")), "a/b.conf");
    }

    #[test]
    fn lines_are_bounded() {
        let limit = Limit { bytes: 8, ..SMALL };
        let mut r = BufReader::with_capacity(3, Cursor::new(b"abc\ndefghijk\n12345678".to_vec()));
        assert_eq!(read_line(&mut r, "s", &limit).unwrap().unwrap(), b"abc\n");
        // 9 bytes with its newline: one too many.
        let e = read_line(&mut r, "s", &limit).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { .. }), "{e}");
        let mut r = Cursor::new(b"12345678".to_vec());
        assert_eq!(
            read_line(&mut r, "s", &limit).unwrap().unwrap(),
            b"12345678"
        );
        assert_eq!(read_line(&mut r, "s", &limit).unwrap(), None);
        // An endless line stops at the limit.
        let mut r = BufReader::new(io::repeat(b'x'));
        assert!(read_line(&mut r, "s", &CONTROL_REQUEST).is_err());
    }

    /// Every input the `bounded_input` fuzz target keeps (fuzz/corpus,
    /// replayed here because cargo-fuzz needs a nightly toolchain) holds
    /// the limits.
    #[test]
    fn the_fuzz_corpus_holds_the_limits() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fuzz/corpus/bounded_input"
        );
        let files: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .map(|f| f.unwrap().path())
            .collect();
        assert!(files.len() >= 8, "{dir} holds only {} files", files.len());
        for f in &files {
            fuzz_one(&std::fs::read(f).unwrap());
        }
        // And inputs made here: each limit, each kind of refusal.
        for limit in [0u8, 1, 7, 8, 100, 255] {
            for body in [
                &b""[..],
                b"abc",
                b"a\nb\nc",
                b"ab\0cd",
                &[b'y'; 300],
                b"\n\n\n",
            ] {
                let mut d = vec![limit];
                d.extend_from_slice(body);
                fuzz_one(&d);
            }
        }
    }

    #[test]
    fn sizes_as_the_page_writes_them() {
        assert_eq!(size(64 << 20), "64 MiB");
        assert_eq!(size(64 << 10), "64 KiB");
        assert_eq!(size(100), "100 bytes");
    }

    /// docs/reference/limits.md lists every limit with its value.
    #[test]
    fn the_reference_page_lists_every_limit() {
        let page = include_str!("../../../docs/reference/limits.md");
        for (name, l) in ALL {
            let row = page
                .lines()
                .find(|r| r.contains(&format!("`{name}`")))
                .unwrap_or_else(|| panic!("limits.md has no row for {name}"));
            assert!(
                row.contains(&size(l.bytes)),
                "limits.md's row for {name} does not say {}: {row}",
                size(l.bytes)
            );
        }
    }
}
