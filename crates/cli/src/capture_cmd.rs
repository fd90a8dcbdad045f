//! `lagkit capture`: asks a running bond or switch for a copy of the
//! frames it sends and handles (see [`lagkit_api::capture`]) and writes
//! them to a pcapng file ([`lagkit_bond::pcapng`]).
//! The daemon keeps running; a slow writer costs frames (counted), never
//! the daemon's time.

use crate::bond_cmd::{BondName, Failure};
use lagkit_api::capture::{CaptureRequest, CaptureStart, CapturedFrame, Direction, StreamLine};
use lagkit_bond::pcapng::PcapngOut;
use std::io::{BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Options of `lagkit capture`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = crate::examples::CAPTURE)]
pub struct Args {
    /// The bond to capture from (default: the only one running here).
    #[command(flatten)]
    bond: BondName,
    /// Capture from a lagkit switch instead: its hostname, or the path of
    /// its control socket.
    #[arg(long, value_name = "NAME|SOCKET", conflicts_with_all = ["name", "old_name"])]
    switch: Option<String>,
    /// The pcapng file to write.
    #[arg(short = 'w', long = "write", value_name = "FILE")]
    write: PathBuf,
    /// Data frames too: the switch copies the frames it forwards; for a
    /// bond, whose data frames the kernel or its forwarding threads move,
    /// this command reads them off the members itself (as tcpdump does),
    /// beside the control frames the bond copies.
    #[arg(long)]
    data: bool,
    /// Bytes kept of each frame (14 to 65535).
    #[arg(long, value_name = "BYTES")]
    snaplen: Option<u32>,
    /// Stop after this long (default: at Ctrl-C or SIGTERM).
    #[arg(long, value_parser = lagkit_units::duration_arg)]
    duration: Option<Duration>,
    /// The bond's control socket (default: derived from its name).
    #[arg(long)]
    socket: Option<PathBuf>,
}

/// Connects to `path` and sends the capture request; returns the
/// daemon's start answer and the stream.
fn open(
    path: &Path,
    switch: bool,
    req: &CaptureRequest,
) -> Result<(CaptureStart, UnixStream), Failure> {
    let (who, starter) = if switch {
        ("switch", "lagkit switch")
    } else {
        ("bond", "lagkit up")
    };
    let stream = lagkit_api::protocol::connect(path, who, starter)
        .map_err(|e| Failure::Runtime(e.to_string()))?;
    let rt = |e: std::io::Error| Failure::Runtime(format!("{}: {e}", path.display()));
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(rt)?;
    let mut line = if switch {
        serde_json::to_vec(&lagkit_switchd::protocol::Request::Capture(req.clone()))
    } else {
        serde_json::to_vec(&lagkit_api::protocol::Request::Capture(req.clone()))
    }
    .map_err(|e| Failure::Runtime(e.to_string()))?;
    line.push(b'\n');
    lagkit_api::protocol::send_all(&stream, &line).map_err(rt)?;
    let name = path.display().to_string();
    let answer = lagkit_input::read_line(
        &mut BufReader::new(&stream),
        &name,
        &lagkit_input::CONTROL_ANSWER,
    )
    .map_err(|e| Failure::Runtime(e.to_string()))?
    .ok_or_else(|| Failure::Runtime(format!("{name} closed without an answer")))?;
    let bad = |e: serde_json::Error| Failure::Runtime(format!("bad answer from {name}: {e}"));
    let start = if switch {
        match serde_json::from_slice(&answer).map_err(bad)? {
            lagkit_switchd::protocol::Response::Capture(s) => s,
            lagkit_switchd::protocol::Response::Error(e) => return Err(Failure::Runtime(e)),
            _ => return Err(Failure::Runtime(format!("unexpected answer from {name}"))),
        }
    } else {
        match serde_json::from_slice(&answer).map_err(bad)? {
            lagkit_api::protocol::Response::Capture(s) => s,
            lagkit_api::protocol::Response::Error(e) => return Err(Failure::Runtime(e)),
            _ => return Err(Failure::Runtime(format!("unexpected answer from {name}"))),
        }
    };
    stream.set_read_timeout(None).map_err(rt)?;
    Ok((start, stream))
}

/// The socket the arguments mean, and whether it is a switch's.
fn target(a: &Args) -> Result<(PathBuf, bool), Failure> {
    if let Some(s) = &a.switch {
        let path = (s.contains('/') || s.ends_with(".sock")).then(|| PathBuf::from(s));
        let name = path.is_none().then_some(s.as_str());
        return Ok((crate::switch_cmd::switch_socket(name, path.as_ref())?, true));
    }
    if let Some(s) = &a.socket {
        return Ok((s.clone(), false));
    }
    let ns = lagkit_bondcfg::paths::netns_id();
    if let Some(b) = a.bond.get() {
        return Ok((lagkit_bondcfg::paths::control_socket_in(ns, b), false));
    }
    let dir = lagkit_bondcfg::paths::netns_dir(ns);
    let mut v = crate::bond_cmd::sockets_in(&dir);
    match v.len() {
        0 => Err(Failure::Runtime(format!(
            "no lagkit bond runs in this network namespace (nothing in {}); name a switch with --switch, or start a bond with `lagkit up CONFIG`",
            dir.display()
        ))),
        1 => Ok((v.remove(0), false)),
        n => Err(Failure::Usage(format!(
            "{n} bonds run here: choose one with --name"
        ))),
    }
}

/// `lagkit capture`.
pub fn run(a: Args) -> Result<(), Failure> {
    let (path, switch) = target(&a)?;
    // A bond's data frames never pass its daemon: this command reads them
    // from the members itself, and takes only the control frames from
    // the daemon.
    let sniff = a.data && !switch;
    let req = CaptureRequest {
        data: a.data && switch,
        snaplen: a.snaplen,
    };
    req.snaplen().map_err(|e| Failure::Usage(e.to_string()))?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())
            .map_err(|e| Failure::Runtime(format!("cannot handle signals: {e}")))?;
    }
    let (mut start, stream) = open(&path, switch, &req)?;
    let sniffers = if sniff {
        start.data = true;
        start.note = Some(
            "data frames are read from the members by this command, as tcpdump does (a member added later is not watched); control frames come from the bond"
                .into(),
        );
        start
            .interfaces
            .iter()
            .map(|i| {
                lagkit_dataplane::sniff::Sniffer::open(i, Duration::from_millis(100))
                    .map(|s| (i.clone(), s))
                    .map_err(|e| Failure::Runtime(format!("capture --data: {i}: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?
    } else {
        Vec::new()
    };
    let file = std::fs::File::create(&a.write)
        .map_err(|e| Failure::Runtime(format!("cannot create {}: {e}", a.write.display())))?;
    let werr = |e: pcap_file::PcapError| {
        Failure::Runtime(format!("cannot write {}: {e}", a.write.display()))
    };
    let mut out = PcapngOut::new(std::io::BufWriter::new(file), &start).map_err(werr)?;
    if let Some(n) = &start.note {
        eprintln!("note: {n}");
    }
    eprintln!(
        "capturing {} frames on {} to {}{}",
        if start.data {
            "control and data"
        } else {
            "control"
        },
        start.interfaces.join(", "),
        a.write.display(),
        if a.duration.is_some() {
            ""
        } else {
            " (Ctrl-C to stop)"
        }
    );
    // A thread reads the stream, so that the main thread can stop at a
    // deadline or a signal whatever the daemon sends.
    // Each line with whether it was read off a member here (`--data` on a
    // bond) rather than sent by the daemon.
    let (tx, rx) = mpsc::channel::<(bool, StreamLine)>();
    let reader = stream
        .try_clone()
        .map_err(|e| Failure::Runtime(e.to_string()))?;
    let done = Arc::new(AtomicBool::new(false));
    let snaplen = start.snaplen as usize;
    let watchers: Vec<_> = sniffers
        .into_iter()
        .map(|(ifname, mut s)| {
            let (tx, done) = (tx.clone(), done.clone());
            std::thread::spawn(move || -> Option<String> {
                while !done.load(Ordering::Relaxed) {
                    let f = match s.recv(snaplen) {
                        Ok(Some(f)) => f,
                        Ok(None) => continue,
                        Err(e) => return Some(format!("{ifname}: {e}")),
                    };
                    // The daemon sends its own copy of these.
                    if is_control(&f.data) {
                        continue;
                    }
                    let frame = CapturedFrame {
                        ifname: ifname.clone(),
                        dir: if f.outgoing {
                            Direction::Out
                        } else {
                            Direction::In
                        },
                        ts_ns: f.ts_ns.unwrap_or_else(lagkit_api::capture::realtime_ns),
                        len: f.len,
                        data: f.data,
                    };
                    if tx.send((true, StreamLine::Frame(frame))).is_err() {
                        return None;
                    }
                }
                None
            })
        })
        .collect();
    let name = path.display().to_string();
    let handle = std::thread::spawn(move || -> Option<String> {
        let mut r = BufReader::new(reader);
        loop {
            let line = match lagkit_input::read_line(&mut r, &name, &lagkit_input::CONTROL_ANSWER) {
                Ok(Some(l)) => l,
                Ok(None) => return None,
                Err(e) => return Some(e.to_string()),
            };
            match serde_json::from_slice::<StreamLine>(&line) {
                Ok(l) => {
                    if tx.send((false, l)).is_err() {
                        return None;
                    }
                }
                Err(e) => return Some(format!("bad line from {name}: {e}")),
            }
        }
    });
    let deadline = a.duration.map(|d| Instant::now() + d);
    let mut pending: Vec<CapturedFrame> = Vec::new();
    let mut ended = None;
    loop {
        if stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let settled = lagkit_api::capture::realtime_ns().saturating_sub(REORDER_NS);
        flush(&mut out, &mut pending, Some(settled)).map_err(werr)?;
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok((wire, l)) => take(&mut out, &mut pending, sniff, wire, l),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                ended = Some(handle_end(handle));
                break;
            }
        }
    }
    let _ = stream.shutdown(std::net::Shutdown::Both);
    done.store(true, Ordering::Relaxed);
    let mut watch_err = None;
    for w in watchers {
        if let Some(e) = w
            .join()
            .unwrap_or_else(|_| Some("a member's reader failed".into()))
        {
            watch_err.get_or_insert(e);
        }
    }
    // What the readers already had is inside the capture window.
    while let Ok((wire, l)) = rx.try_recv() {
        take(&mut out, &mut pending, sniff, wire, l);
    }
    flush(&mut out, &mut pending, None).map_err(werr)?;
    let (_, written) = out
        .finish()
        .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", a.write.display())))?;
    let mut total = 0;
    for (name, rx, tx) in &written.per_interface {
        println!("{name}: {} frames ({rx} received, {tx} sent)", rx + tx);
        total += rx + tx;
    }
    println!(
        "{total} frames written to {}, {} dropped (read too slowly)",
        a.write.display(),
        written.dropped
    );
    if let Some(why) = watch_err {
        return Err(Failure::Runtime(format!(
            "capture --data stopped reading a member: {why} (the file holds what came before)"
        )));
    }
    match ended {
        Some(Some(why)) => Err(Failure::Runtime(format!(
            "the capture ended early: {why} (the file holds what came before)"
        ))),
        Some(None) => Err(Failure::Runtime(format!(
            "the {} stopped the capture (did it exit?); the file holds what came before",
            if switch { "switch" } else { "bond" }
        ))),
        None => Ok(()),
    }
}

/// How long a frame waits to be written, so that frames read by
/// different threads (the daemon's stream, each member's socket) go into
/// the file in the order of their timestamps.
const REORDER_NS: u64 = 200_000_000;

/// Takes one line: a frame waits in `pending`, a drop count is noted.
/// With `--data` on a bond (`sniff`), ARP comes off the members: the
/// daemon's own copies of it would be written twice.
fn take<W: Write>(
    out: &mut PcapngOut<W>,
    pending: &mut Vec<CapturedFrame>,
    sniff: bool,
    wire: bool,
    line: StreamLine,
) {
    match line {
        StreamLine::Frame(f) if sniff && !wire && ethertype(&f.data) == Some(0x0806) => {}
        StreamLine::Frame(f) => pending.push(f),
        StreamLine::Dropped(n) => out.dropped(n),
    }
}

/// Writes the pending frames stamped before `until` (all with `None`),
/// oldest first.
fn flush<W: Write>(
    out: &mut PcapngOut<W>,
    pending: &mut Vec<CapturedFrame>,
    until: Option<u64>,
) -> Result<(), pcap_file::PcapError> {
    pending.sort_by_key(|f| f.ts_ns);
    let n = until.map_or(pending.len(), |t| pending.partition_point(|f| f.ts_ns < t));
    for f in pending.drain(..n) {
        out.frame(&f)?;
    }
    Ok(())
}

/// The EtherType of a frame, past one 802.1Q tag.
fn ethertype(f: &[u8]) -> Option<u16> {
    let at = |i: usize| f.get(i..i + 2).map(|b| u16::from_be_bytes([b[0], b[1]]));
    match at(12)? {
        0x8100 | 0x88a8 => at(16),
        t => Some(t),
    }
}

/// A frame the daemon copies itself: slow protocols (LACP, Marker) and
/// Cisco's multicast (PAgP).
fn is_control(f: &[u8]) -> bool {
    ethertype(f) == Some(0x8809) || f.starts_with(&[0x01, 0x00, 0x0c, 0xcc, 0xcc, 0xcc])
}

fn handle_end(h: std::thread::JoinHandle<Option<String>>) -> Option<String> {
    h.join()
        .unwrap_or_else(|_| Some("the reader failed".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(ifname: &str, ts_ns: u64, ethertype: u16) -> CapturedFrame {
        let mut data = vec![0u8; 60];
        data[12..14].copy_from_slice(&ethertype.to_be_bytes());
        CapturedFrame {
            ifname: ifname.into(),
            dir: Direction::In,
            ts_ns,
            len: 60,
            data,
        }
    }

    /// Frames from several readers go out oldest first, each once; only
    /// those stamped before the bound leave early; the daemon's ARP is
    /// left out when the members' readers see ARP themselves.
    #[test]
    fn frames_are_written_in_time_order_and_arp_once() {
        let start = CaptureStart {
            interfaces: vec!["eth1".into(), "eth2".into()],
            snaplen: 96,
            data: true,
            note: None,
        };
        let mut out = PcapngOut::new(Vec::new(), &start).unwrap();
        let mut pending = Vec::new();
        let line = |f| StreamLine::Frame(f);
        take(
            &mut out,
            &mut pending,
            true,
            true,
            line(frame("eth2", 30, 0x0800)),
        );
        take(
            &mut out,
            &mut pending,
            true,
            false,
            line(frame("eth1", 10, 0x8809)),
        );
        take(
            &mut out,
            &mut pending,
            true,
            false,
            line(frame("eth1", 15, 0x0806)),
        );
        take(
            &mut out,
            &mut pending,
            true,
            true,
            line(frame("eth1", 20, 0x0806)),
        );
        take(&mut out, &mut pending, true, false, StreamLine::Dropped(2));
        assert_eq!(pending.len(), 3, "the daemon's ARP is not kept");
        flush(&mut out, &mut pending, Some(25)).unwrap();
        let left: Vec<u64> = pending.iter().map(|f| f.ts_ns).collect();
        assert_eq!(left, [30]);
        flush(&mut out, &mut pending, None).unwrap();
        assert!(pending.is_empty());
        let (bytes, written) = out.finish().unwrap();
        assert_eq!(written.dropped, 2);
        let mut r = pcap_file::pcapng::PcapNgReader::new(&bytes[..]).unwrap();
        let mut times = Vec::new();
        while let Some(b) = r.next_block() {
            if let pcap_file::pcapng::Block::EnhancedPacket(e) = b.unwrap() {
                times.push(e.timestamp.as_nanos() as u64);
            }
        }
        assert_eq!(times, [10, 20, 30]);
    }
}
