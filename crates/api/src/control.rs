//! The control socket (`lagkit status`, `stats`, `flow`; the switch's
//! `lagkit switch show` too: the server is generic over the request and
//! answer types), served on a thread of its own so that no client can
//! delay the control thread that runs LACP and the link watchers.
//!
//! The protocol is one JSON request per line and one JSON response per
//! line, then the connection closes. Every client is non-blocking with its
//! own input and output buffer; the server thread polls them all. A client
//! that sends nothing, sends half a line, or does not read its answer is
//! closed after [`CLIENT_TIMEOUT`]; at most [`MAX_CLIENTS`] are served at
//! once (others get a "busy" answer and are closed). A complete request is
//! handed to the bond's control thread over a bounded queue as a
//! [`Pending`]; that thread answers it between two protocol steps without
//! ever touching a socket, and the server writes the answer.
//!
//! Any local user may connect, as any user may read `/proc/net/bonding`:
//! the socket is mode 0666 in a directory of mode 0755. What a request may
//! do is decided per request ([`Guarded::needs_admin`]): reading status,
//! counters and flows is open to everybody; capturing frames (and reading
//! the switch's configuration) needs root or CAP_NET_ADMIN, read from the
//! peer's credentials (`SO_PEERCRED`) when it connects. The answer a
//! request gets says who asked ([`Pending::admin`]), so a daemon can
//! withhold what the kernel withholds from an unprivileged reader.
//!
//! An answer may come with a [`Stream`] (`lagkit capture`): the client
//! then stays connected, without a deadline, and the server writes the
//! lines the daemon queues, plus a `{"dropped":N}` line when the
//! stream's drop count grows, until the client closes its end or the
//! daemon drops the queue.

use crate::protocol::{Request, Response};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Clients served at once.
pub const MAX_CLIENTS: usize = 64;
/// How long a client may take to send its request and read its answer.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest request line accepted ([`lagkit_input::CONTROL_REQUEST`]);
/// a client that sends more without a newline is answered an error,
/// counted in [`ControlCounters::too_long`], logged and closed, and no
/// more than this and one read of it is kept.
pub const MAX_REQUEST: usize = lagkit_input::CONTROL_REQUEST.bytes as usize;
/// Requests waiting for the control thread.
const QUEUE: usize = 64;

/// An answer the server can also make itself, to say it is busy or the
/// request was malformed.
pub trait Answer: Serialize + Send + 'static {
    /// An error answer saying `why`.
    fn error(why: String) -> Self;
}

impl Answer for Response {
    fn error(why: String) -> Response {
        Response::Error(why)
    }
}

/// What a request may do, and so who may ask it.
pub trait Guarded {
    /// Only root or a process with CAP_NET_ADMIN may ask it.
    fn needs_admin(&self) -> bool;
}

impl Guarded for Request {
    /// `lagkit capture` copies frames; status, stats and flow only read.
    fn needs_admin(&self) -> bool {
        matches!(self, Request::Capture(_))
    }
}

/// A request waiting for the daemon's answer.
#[derive(Debug)]
pub struct Pending<Q = Request, R = Response> {
    /// What the client asked.
    pub req: Q,
    /// The client is root or has CAP_NET_ADMIN.
    pub admin: bool,
    reply: SyncSender<(R, Option<Stream>)>,
}

impl<Q, R> Pending<Q, R> {
    /// Answers it (the client may have gone; that is not an error).
    pub fn answer(self, r: R) {
        let _ = self.reply.try_send((r, None));
    }

    /// Answers it and keeps the client connected to receive `stream`.
    pub fn answer_stream(self, r: R, stream: Stream) {
        let _ = self.reply.try_send((r, Some(stream)));
    }
}

/// Lines a daemon sends a client after its answer (see the module doc).
#[derive(Debug)]
pub struct Stream {
    /// Each a whole line, newline included.
    pub lines: Receiver<Vec<u8>>,
    /// What the daemon could not queue (the client read too slowly).
    pub dropped: Arc<AtomicU64>,
    /// Set by the server when the client has gone.
    pub closed: Arc<AtomicBool>,
}

/// How often a growing drop count is reported on a stream.
const DROP_REPORT: Duration = Duration::from_millis(200);
/// Bytes of stream lines the server holds for one client.
const STREAM_BUFFER: usize = 256 << 10;

/// What the server counted.
#[derive(Debug, Default)]
pub struct ControlCounters {
    /// Requests answered.
    pub served: AtomicU64,
    /// Clients closed for taking too long.
    pub timed_out: AtomicU64,
    /// Clients turned away because [`MAX_CLIENTS`] were connected.
    pub refused: AtomicU64,
    /// Clients cut off for a request line longer than [`MAX_REQUEST`].
    pub too_long: AtomicU64,
}

/// The running server; stops (and removes the socket file) on drop.
#[derive(Debug)]
pub struct ControlServer {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    path: PathBuf,
    /// Its counters.
    pub counters: Arc<ControlCounters>,
}

struct Client<R> {
    stream: UnixStream,
    /// Root or CAP_NET_ADMIN, from its credentials when it connected.
    admin: bool,
    input: Vec<u8>,
    output: Vec<u8>,
    waiting: Option<Receiver<(R, Option<Stream>)>>,
    answered: bool,
    deadline: Instant,
    /// After the answer: the lines to pass on, the drop count last
    /// reported, and when.
    lines: Option<(Stream, u64, Instant)>,
}

impl<R> Client<R> {
    /// The client went away (or its stream ended): nothing more to write.
    fn end_stream(&mut self) {
        if let Some((s, _, _)) = self.lines.take() {
            s.closed.store(true, Ordering::Relaxed);
        }
    }

    /// Reads and discards what a streaming client sends, ending the
    /// stream when it closes.
    fn watch_close(&mut self) {
        let mut buf = [0u8; 512];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => {
                    self.end_stream();
                    self.output.clear();
                    return;
                }
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(_) => {
                    self.end_stream();
                    self.output.clear();
                    return;
                }
            }
        }
    }

    /// Moves queued stream lines (and a drop report when due) to the
    /// output, up to [`STREAM_BUFFER`] bytes, and writes what it can.
    fn pass_lines(&mut self, now: Instant) {
        let Some((s, reported, at)) = &mut self.lines else {
            return;
        };
        let mut ended = false;
        while self.output.len() < STREAM_BUFFER {
            match s.lines.try_recv() {
                Ok(l) => self.output.extend_from_slice(&l),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    ended = true;
                    break;
                }
            }
        }
        let dropped = s.dropped.load(Ordering::Relaxed);
        if dropped != *reported && (ended || now >= *at + DROP_REPORT) {
            self.output
                .extend_from_slice(format!("{{\"dropped\":{dropped}}}\n").as_bytes());
            *reported = dropped;
            *at = now;
        }
        if ended {
            self.end_stream();
        }
        flush(self);
    }
}

/// Why [`bind_socket`] could not open a control socket.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// A process answers on the socket: another daemon serves it.
    #[error("{0}: another process serves this socket (it answers)")]
    Live(PathBuf),
    /// Its directory could not be made, or the socket not bound.
    #[error("{what} {path}: {source}")]
    Io {
        /// `create` (the directory), `bind`, or `serve` (the thread).
        what: &'static str,
        /// The directory or the socket.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
}

/// Binds a daemon's control socket at `path`, open to every local user
/// (mode 0666; see the module doc for what each may ask) in a directory
/// every user may enter (made 0755 if missing), and a socket file nobody
/// answers on (left by a killed daemon) is replaced; one that answers is
/// [`BindError::Live`] and is left alone.
pub fn bind_socket(path: &Path) -> Result<UnixListener, BindError> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let io = |what, path: &Path| {
        let path = path.to_path_buf();
        move |source| BindError::Io { what, path, source }
    };
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(dir)
            .map_err(io("create", dir))?;
    }
    if path.exists() {
        if UnixStream::connect(path).is_ok() {
            return Err(BindError::Live(path.to_path_buf()));
        }
        let _ = std::fs::remove_file(path);
    }
    let listener = UnixListener::bind(path).map_err(io("bind", path))?;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666));
    Ok(listener)
}

impl ControlServer {
    /// Binds the control socket at `path` ([`bind_socket`]) and serves it
    /// ([`ControlServer::start`]) for daemon `name`.
    pub fn open<Q, R>(
        path: &Path,
        name: &str,
    ) -> Result<(ControlServer, Receiver<Pending<Q, R>>), BindError>
    where
        Q: DeserializeOwned + Guarded + Send + 'static,
        R: Answer,
    {
        let listener = bind_socket(path)?;
        ControlServer::start(listener, path.to_path_buf(), name).map_err(|source| BindError::Io {
            what: "serve",
            path: path.to_path_buf(),
            source,
        })
    }

    /// Serves `listener` (bound at `path`) on a new thread; complete
    /// requests come out of the returned receiver.
    pub fn start<Q, R>(
        listener: UnixListener,
        path: PathBuf,
        bond: &str,
    ) -> std::io::Result<(ControlServer, Receiver<Pending<Q, R>>)>
    where
        Q: DeserializeOwned + Guarded + Send + 'static,
        R: Answer,
    {
        listener.set_nonblocking(true)?;
        let (tx, rx) = mpsc::sync_channel(QUEUE);
        let stop = Arc::new(AtomicBool::new(false));
        let counters = Arc::new(ControlCounters::default());
        let (st, c) = (stop.clone(), counters.clone());
        let handle = std::thread::Builder::new()
            .name(format!("lk-ctl-{bond}"))
            .spawn(move || serve(listener, tx, &st, &c))?;
        Ok((
            ControlServer {
                stop,
                handle: Some(handle),
                path,
                counters,
            },
            rx,
        ))
    }
}

impl Drop for ControlServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

fn line<R: Answer>(r: &R) -> Vec<u8> {
    let mut v = serde_json::to_vec(r).unwrap_or_else(|_| b"{\"error\":\"unencodable\"}".to_vec());
    v.push(b'\n');
    v
}

/// Whether the process at the other end of `stream` is root or has
/// CAP_NET_ADMIN in its effective set (bit 12 of `CapEff` in
/// `/proc/PID/status`).
fn peer_is_admin(stream: &UnixStream) -> bool {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    let Ok(cred) = getsockopt(stream, PeerCredentials) else {
        return false;
    };
    if cred.uid() == 0 {
        return true;
    }
    const CAP_NET_ADMIN: u32 = 12;
    let status = std::fs::read_to_string(format!("/proc/{}/status", cred.pid()));
    status.ok().is_some_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            .is_some_and(|caps| caps >> CAP_NET_ADMIN & 1 == 1)
    })
}

fn serve<Q: DeserializeOwned + Guarded, R: Answer>(
    listener: UnixListener,
    to_bond: SyncSender<Pending<Q, R>>,
    stop: &AtomicBool,
    counters: &ControlCounters,
) {
    let mut clients: Vec<Client<R>> = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let waiting = clients.iter().any(|c| c.waiting.is_some());
        let streaming = clients.iter().any(|c| c.lines.is_some());
        // Waiting for the bond's answer: look again soon; passing stream
        // lines: often; otherwise sleep until a socket is ready (bounded,
        // to notice `stop`).
        let timeout = if waiting {
            2u16
        } else if streaming {
            10
        } else {
            50
        };
        let mut fds: Vec<PollFd> = Vec::with_capacity(clients.len() + 1);
        fds.push(PollFd::new(listener.as_fd(), PollFlags::POLLIN));
        for c in &clients {
            let mut ev = PollFlags::empty();
            if (c.waiting.is_none() && !c.answered) || c.lines.is_some() {
                ev |= PollFlags::POLLIN;
            }
            if !c.output.is_empty() {
                ev |= PollFlags::POLLOUT;
            }
            fds.push(PollFd::new(c.stream.as_fd(), ev));
        }
        let _ = poll(&mut fds, PollTimeout::from(timeout));
        let ready: Vec<bool> = fds
            .iter()
            .map(|f| f.revents().is_some_and(|r| !r.is_empty()))
            .collect();
        drop(fds);
        let now = Instant::now();
        for (c, ready) in clients.iter_mut().zip(ready.iter().skip(1)) {
            if *ready && c.lines.is_some() {
                c.watch_close();
            } else if *ready {
                pump(c, &to_bond, counters);
            }
            c.pass_lines(now);
            if let Some(rx) = &c.waiting {
                match rx.try_recv() {
                    Ok((r, stream)) => {
                        c.output = line(&r);
                        c.waiting = None;
                        c.answered = true;
                        c.lines = stream.map(|s| (s, 0, now));
                        counters.served.fetch_add(1, Ordering::Relaxed);
                        flush(c);
                    }
                    Err(TryRecvError::Empty) => {}
                    Err(TryRecvError::Disconnected) => {
                        c.output = line(&R::error("the daemon is stopping".into()));
                        c.waiting = None;
                        c.answered = true;
                    }
                }
            }
        }
        clients.retain(|c| {
            let done = c.answered && c.output.is_empty() && c.lines.is_none();
            let late = now >= c.deadline && c.lines.is_none();
            if late && !done {
                counters.timed_out.fetch_add(1, Ordering::Relaxed);
            }
            !done && !late
        });
        if ready[0] {
            loop {
                match listener.accept() {
                    Ok((stream, _)) => {
                        if stream.set_nonblocking(true).is_err() {
                            continue;
                        }
                        if clients.len() >= MAX_CLIENTS {
                            counters.refused.fetch_add(1, Ordering::Relaxed);
                            let msg = R::error(format!(
                                "busy: {MAX_CLIENTS} control clients are connected; try again"
                            ));
                            let _ = (&stream).write(&line(&msg));
                            continue;
                        }
                        clients.push(Client {
                            admin: peer_is_admin(&stream),
                            stream,
                            input: Vec::new(),
                            output: Vec::new(),
                            waiting: None,
                            answered: false,
                            deadline: now + CLIENT_TIMEOUT,
                            lines: None,
                        });
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(_) => break,
                }
            }
        }
    }
}

/// Reads what a client sent, hands a complete request to the bond, and
/// writes what is pending.
fn pump<Q: DeserializeOwned + Guarded, R: Answer>(
    c: &mut Client<R>,
    to_bond: &SyncSender<Pending<Q, R>>,
    counters: &ControlCounters,
) {
    if !c.output.is_empty() {
        flush(c);
    }
    if c.waiting.is_some() || c.answered {
        return;
    }
    let mut buf = [0u8; 4096];
    loop {
        match c.stream.read(&mut buf) {
            Ok(0) => {
                // Closed before a whole line: nothing to answer.
                c.answered = true;
                c.output.clear();
                return;
            }
            Ok(n) => c.input.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => {
                c.answered = true;
                return;
            }
        }
        if c.input.len() > MAX_REQUEST {
            break;
        }
    }
    // The newline must come within the limit, whatever was read past it.
    let Some(end) = c
        .input
        .iter()
        .take(MAX_REQUEST + 1)
        .position(|&b| b == b'\n')
    else {
        if c.input.len() > MAX_REQUEST {
            counters.too_long.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                "control client cut off: a request line longer than {MAX_REQUEST} bytes"
            );
            c.input = Vec::new();
            c.output = line(&R::error(format!(
                "request longer than {MAX_REQUEST} bytes: send one JSON request per line"
            )));
            c.answered = true;
            flush(c);
        }
        return;
    };
    let text = String::from_utf8_lossy(&c.input[..end]).into_owned();
    let answer = |c: &mut Client<R>, r: R| {
        c.output = line(&r);
        c.answered = true;
        flush(c);
    };
    match serde_json::from_str::<Q>(text.trim()) {
        Err(e) => answer(c, R::error(format!("bad request: {e}"))),
        Ok(req) if req.needs_admin() && !c.admin => answer(
            c,
            R::error(
                "permission denied: this request needs root or CAP_NET_ADMIN (status, stats and flow are open to every user)"
                    .into(),
            ),
        ),
        Ok(req) => {
            let (tx, rx) = mpsc::sync_channel(1);
            let admin = c.admin;
            match to_bond.try_send(Pending {
                req,
                admin,
                reply: tx,
            }) {
                Ok(()) => c.waiting = Some(rx),
                Err(TrySendError::Full(_)) => answer(
                    c,
                    R::error("busy: too many requests queued; try again".into()),
                ),
                Err(TrySendError::Disconnected(_)) => {
                    answer(c, R::error("the daemon is stopping".into()))
                }
            }
        }
    }
}

fn flush<R>(c: &mut Client<R>) {
    while !c.output.is_empty() {
        match c.stream.write(&c.output) {
            Ok(0) => break,
            Ok(n) => {
                c.output.drain(..n);
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(_) => {
                c.output.clear();
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;

    fn server(tag: &str) -> (ControlServer, Receiver<Pending>, PathBuf) {
        let dir = std::env::temp_dir().join(format!("lk-ctl-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("b.sock");
        let _ = std::fs::remove_file(&path);
        let l = UnixListener::bind(&path).unwrap();
        let (s, rx) = ControlServer::start(l, path.clone(), "t").unwrap();
        (s, rx, path)
    }

    #[test]
    fn a_socket_is_bound_open_replacing_a_dead_one_and_never_a_live_one() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("lk-ctl-{}-bind", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("sub/b.sock");
        // The directory is made, for everybody to enter; the socket is
        // open to every local user (each request says who may ask it).
        let l = bind_socket(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o666);
        let dir_mode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o755, 0o755);
        // It answers: a second daemon is refused and the socket stays.
        match bind_socket(&path) {
            Err(BindError::Live(p)) => assert_eq!(p, path),
            other => panic!("{other:?}"),
        }
        assert!(UnixStream::connect(&path).is_ok());
        // Its daemon is gone (the file stays behind): replaced.
        drop(l);
        assert!(path.exists());
        let _l = bind_socket(&path).unwrap();
        assert!(UnixStream::connect(&path).is_ok());
        // A directory that cannot be made is an error naming it.
        let e = bind_socket(Path::new("/proc/lk-no/b.sock")).unwrap_err();
        assert!(e.to_string().contains("create /proc/lk-no"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn ask(path: &std::path::Path, text: &str) -> String {
        let s = UnixStream::connect(path).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        (&s).write_all(text.as_bytes()).unwrap();
        let mut out = String::new();
        std::io::BufReader::new(&s).read_line(&mut out).unwrap();
        out
    }

    /// Answers every pending request with an error naming it, until `stop`.
    fn answerer(rx: Receiver<Pending>, stop: Arc<AtomicBool>) -> JoinHandle<usize> {
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                if let Ok(p) = rx.recv_timeout(Duration::from_millis(10)) {
                    n += 1;
                    let what = format!("{:?}", p.req);
                    p.answer(Response::Error(what));
                }
            }
            n
        })
    }

    #[test]
    fn idle_and_half_written_clients_do_not_block_a_real_one() {
        let (srv, rx, path) = server("idle");
        let stop = Arc::new(AtomicBool::new(false));
        let h = answerer(rx, stop.clone());
        let mut idle: Vec<UnixStream> = (0..40)
            .map(|_| UnixStream::connect(&path).unwrap())
            .collect();
        for s in idle.iter_mut().take(20) {
            s.write_all(b"{\"cmd\":\"sta").unwrap();
        }
        let t = Instant::now();
        let out = ask(&path, "{\"cmd\":\"status\"}\n");
        assert!(out.contains("Status"), "{out}");
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
        stop.store(true, Ordering::Relaxed);
        assert_eq!(h.join().unwrap(), 1);
        drop(srv);
        assert!(!path.exists(), "socket file removed");
    }

    #[test]
    fn too_many_clients_are_told_so_and_idle_ones_time_out() {
        let (srv, _rx, path) = server("many");
        let held: Vec<UnixStream> = (0..MAX_CLIENTS)
            .map(|_| UnixStream::connect(&path).unwrap())
            .collect();
        // The server accepts them in its own time: poll until it is full.
        let deadline = Instant::now() + Duration::from_secs(5);
        let out = loop {
            let out = ask(&path, "");
            if out.contains("busy") || Instant::now() > deadline {
                break out;
            }
        };
        assert!(out.contains("busy"), "{out}");
        assert!(srv.counters.refused.load(Ordering::Relaxed) >= 1);
        drop(held);
    }

    /// A client that sends one endless line is answered an error, cut off
    /// and counted, while the server keeps at most the limit of it; a
    /// client after it is served.
    #[test]
    fn an_endless_line_is_cut_off_and_counted() {
        let (srv, rx, path) = server("endless");
        let stop = Arc::new(AtomicBool::new(false));
        let h = answerer(rx, stop.clone());
        let s = UnixStream::connect(&path).unwrap();
        s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
        let chunk = vec![b'x'; 64 << 10];
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut sent = 0usize;
        // Writes until the server closes the connection.
        while let Ok(n) = (&s).write(&chunk) {
            sent += n;
            assert!(
                Instant::now() < deadline,
                "still accepted after {sent} bytes"
            );
        }
        let mut out = String::new();
        let _ = std::io::BufReader::new(&s).read_line(&mut out);
        assert!(out.contains("longer than 65536 bytes"), "{out:?}");
        assert_eq!(srv.counters.too_long.load(Ordering::Relaxed), 1);
        // The server read no more than the limit, one read, and what the
        // socket buffers hold.
        assert!(sent < MAX_REQUEST + 4096 + (4 << 20), "{sent} bytes taken");
        assert!(ask(&path, "{\"cmd\":\"status\"}\n").contains("Status"));
        // A line with its newline past the limit is as long.
        let mut late = "x".repeat(MAX_REQUEST + 1);
        late.push('\n');
        assert!(ask(&path, &late).contains("longer than"));
        assert_eq!(srv.counters.too_long.load(Ordering::Relaxed), 2);
        stop.store(true, Ordering::Relaxed);
        assert_eq!(h.join().unwrap(), 1);
    }

    /// A streamed answer: the client gets the answer line, then the
    /// queued lines and a drop report; closing its end tells the daemon.
    #[test]
    fn a_stream_passes_lines_and_notices_the_client_leaving() {
        use crate::capture::{CaptureRequest, Direction, StreamLine, Taps};
        let (_srv, rx, path) = server("stream");
        let s = UnixStream::connect(&path).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        (&s).write_all(b"{\"cmd\":\"capture\"}\n").unwrap();
        let p = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        let mut taps = Taps::default();
        let stream = taps.open(&CaptureRequest::default()).unwrap();
        let closed = stream.closed.clone();
        stream.dropped.store(3, Ordering::Relaxed);
        p.answer_stream(Response::Error("started".into()), stream);
        for _ in 0..5 {
            taps.frame("eth1", Direction::In, &[7u8; 60], false);
        }
        let mut r = std::io::BufReader::new(&s);
        let mut first = String::new();
        r.read_line(&mut first).unwrap();
        assert!(first.contains("started"), "{first}");
        let (mut frames, mut dropped) = (0, 0);
        while frames < 5 || dropped == 0 {
            let mut l = String::new();
            assert!(r.read_line(&mut l).unwrap() > 0, "stream ended early");
            match serde_json::from_str::<StreamLine>(&l).unwrap() {
                StreamLine::Frame(_) => frames += 1,
                StreamLine::Dropped(n) => dropped = n,
            }
        }
        assert_eq!(dropped, 3);
        drop(r);
        drop(s);
        let deadline = Instant::now() + Duration::from_secs(5);
        while !closed.load(Ordering::Relaxed) {
            assert!(
                Instant::now() < deadline,
                "the server did not see the client go"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        taps.prune();
        assert!(taps.is_empty());
    }

    /// A capture client that never reads: the daemon's side never waits
    /// (each frame is queued or dropped and counted at once), the server
    /// holds a bounded amount, and other clients are still served.
    #[test]
    fn a_stream_client_that_never_reads_costs_drops_not_time() {
        use crate::capture::{CaptureRequest, Direction, Taps, QUEUE};
        let (_srv, rx, path) = server("stuck");
        let s = UnixStream::connect(&path).unwrap();
        (&s).write_all(b"{\"cmd\":\"capture\"}\n").unwrap();
        let p = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        let mut taps = Taps::default();
        let stream = taps.open(&CaptureRequest::default()).unwrap();
        let dropped = stream.dropped.clone();
        p.answer_stream(Response::Error("started".into()), stream);
        let frame = [0x5au8; 1500];
        let n = 20 * QUEUE;
        let t = Instant::now();
        let mut slowest = Duration::ZERO;
        for _ in 0..n {
            let one = Instant::now();
            taps.frame("eth1", Direction::Out, &frame, false);
            slowest = slowest.max(one.elapsed());
        }
        let took = t.elapsed();
        let d = dropped.load(Ordering::Relaxed);
        // The socket and the server's buffer hold some; the rest dropped.
        assert!(d as usize > n / 2, "{d} of {n} dropped");
        // (`slowest` is printed, not held: on a loaded machine a thread
        // may be preempted in any call.)
        eprintln!("{n} frames in {took:?}, slowest {slowest:?}, {d} dropped");
        assert!(took < Duration::from_secs(5), "{n} frames took {took:?}");
        let stop = Arc::new(AtomicBool::new(false));
        let h = answerer(rx, stop.clone());
        assert!(ask(&path, "{\"cmd\":\"status\"}\n").contains("Status"));
        stop.store(true, Ordering::Relaxed);
        h.join().unwrap();
        drop(s);
    }

    #[test]
    fn bad_and_oversized_requests_get_an_error() {
        let (_srv, rx, path) = server("bad");
        let stop = Arc::new(AtomicBool::new(false));
        let h = answerer(rx, stop.clone());
        assert!(ask(&path, "nonsense\n").contains("bad request"));
        let big = "x".repeat(MAX_REQUEST + 10);
        assert!(ask(&path, &big).contains("longer than"));
        stop.store(true, Ordering::Relaxed);
        assert_eq!(h.join().unwrap(), 0);
    }
}
