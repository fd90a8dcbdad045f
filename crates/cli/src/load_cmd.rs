//! `lagkit load server` and `lagkit load client`: the seed papers'
//! workloads (socketprocs, netperf stream/maerts/rr, LPM) without netperf
//! or any other tool, so a lab can run them inside its namespaces with the
//! one binary it already has. JSON for the lab, one summary line (and the
//! seed's own table with `--table`) for people.

use crate::bond_cmd::Failure;
use lagkit_load::{
    run_client, start_server, ClientConfig, Kind, LpmPorts, Method, Report, ServerConfig, Spawn,
};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Options of `lagkit load`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    what: LoadCommand,
}

#[derive(clap::Subcommand, Debug)]
enum LoadCommand {
    /// Serve a workload until SIGTERM or Ctrl-C, then print what was served.
    Server(ServerArgs),
    /// Run a workload against `lagkit load server` and print the result.
    Client(ClientArgs),
    /// One socketprocs worker process (started by server and client).
    #[command(hide = true)]
    Worker {
        /// The worker's configuration (JSON).
        config: String,
    },
}

/// Options of `lagkit load server`.
#[derive(clap::Args, Debug)]
struct ServerArgs {
    /// socketprocs, stream, maerts, rr or lpm (stream, maerts and rr share one server).
    #[arg(long)]
    kind: Kind,
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0")]
    bind: IpAddr,
    /// (First) port: socketprocs listens on PORT..PORT+procs-1, lpm on
    /// PORT (control) and PORT+1 (data). Default: 7000, 12865 or 32791.
    #[arg(long)]
    port: Option<u16>,
    /// socketprocs: server processes (N).
    #[arg(long, default_value_t = 4)]
    procs: u32,
    /// socketprocs: select (s), poll (p, level-triggered epoll) or epoll-et (e).
    #[arg(long, default_value = "epoll-et")]
    method: Method,
    /// lpm: fixed (one control and one data port) or sequential (a pair per migration).
    #[arg(long, default_value = "fixed", value_parser = parse_lpm_ports)]
    lpm_ports: LpmPorts,
    /// lpm sequential: how many port pairs.
    #[arg(long, default_value_t = 4)]
    migrations: u32,
    /// socketprocs: fork workers instead of re-executing this program.
    #[arg(long)]
    fork: bool,
    /// Print the final report as JSON.
    #[arg(long)]
    json: bool,
    /// Also print the table as the original measurements printed it.
    #[arg(long)]
    table: bool,
}

/// Options of `lagkit load client`.
#[derive(clap::Args, Debug)]
struct ClientArgs {
    /// socketprocs, stream, maerts, rr or lpm.
    #[arg(long)]
    kind: Kind,
    /// The server's address.
    #[arg(long)]
    to: IpAddr,
    /// The server's (first) port (default: 7000, 12865 or 32791 by kind).
    #[arg(long)]
    port: Option<u16>,
    /// Explicit server ports, comma-separated (socketprocs: one per server
    /// process; lpm fixed: control,data).
    #[arg(long, value_delimiter = ',')]
    ports: Vec<u16>,
    /// Local address to send from.
    #[arg(long)]
    local: Option<IpAddr>,
    /// socketprocs: client processes (N; connects N×N).
    #[arg(long, default_value_t = 4)]
    procs: u32,
    /// stream/maerts/rr: parallel connections.
    #[arg(long, default_value_t = 1)]
    conns: u32,
    /// lpm: parallel migrations (K).
    #[arg(long, default_value_t = 4)]
    migrations: u32,
    /// socketprocs: select (s), poll (p, level-triggered epoll) or epoll-et (e).
    #[arg(long, default_value = "epoll-et")]
    method: Method,
    /// Message (rr: request) size: 4096, 4K, 32K, 256K. Default by kind:
    /// 4K socketprocs, 32K stream/maerts, 1 rr, 64K lpm.
    #[arg(long, value_parser = parse_size)]
    size: Option<usize>,
    /// rr: response size (default 1).
    #[arg(long, value_parser = parse_size)]
    reply: Option<usize>,
    /// How long to run: 10s, 500ms, 1m; a plain number is seconds (default
    /// 10s unless --messages is given).
    #[arg(long, value_parser = lagkit_units::duration_arg)]
    duration: Option<Duration>,
    /// Stop after this many messages (transactions) per connection;
    /// lpm: data messages per migration.
    #[arg(long)]
    messages: Option<u64>,
    /// Do not check received bytes against the pattern.
    #[arg(long)]
    no_verify: bool,
    /// Set TCP_NODELAY on both ends (netperf -D).
    #[arg(long)]
    nodelay: bool,
    /// SO_SNDBUF and SO_RCVBUF on both ends (netperf -s/-S), e.g. 128K.
    #[arg(long, value_parser = parse_size)]
    sockbuf: Option<usize>,
    /// How long to retry a refused connection while the server starts (5s,
    /// 500ms; a plain number is seconds).
    #[arg(long, default_value = "5s", value_parser = lagkit_units::duration_arg)]
    connect_timeout: Duration,
    /// lpm: first client port; migration i uses base+2i (control) and base+2i+1 (data).
    #[arg(long, default_value_t = lagkit_load::lpm::DEFAULT_BASE)]
    lpm_base: u16,
    /// lpm: the server's port layout, fixed or sequential.
    #[arg(long, default_value = "fixed", value_parser = parse_lpm_ports)]
    lpm_ports: LpmPorts,
    /// lpm: interval between control messages (100ms, 1s; a plain number is
    /// seconds).
    #[arg(long, default_value = "100ms", value_parser = lagkit_units::duration_arg)]
    lpm_interval: Duration,
    /// socketprocs: fork workers instead of re-executing this program.
    #[arg(long)]
    fork: bool,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Also print the table as the original measurements printed it
    /// (socketprocs row, netperf output, LPM pairs).
    #[arg(long)]
    table: bool,
}

fn parse_lpm_ports(s: &str) -> Result<LpmPorts, String> {
    match s {
        "fixed" => Ok(LpmPorts::Fixed),
        "sequential" | "seq" => Ok(LpmPorts::Sequential),
        _ => Err(format!("'{s}': use fixed or sequential")),
    }
}

/// `4096`, `4K`, `4KB`, `1M` (binary units, as netperf's -m 32K).
fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: usize = num
        .parse()
        .map_err(|_| format!("'{s}' is not a size (try 4096, 4K, 256K)"))?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1024,
        "m" | "mb" | "mib" => 1024 * 1024,
        _ => return Err(format!("unknown unit in '{s}' (use B, K or M)")),
    };
    n.checked_mul(scale)
        .ok_or_else(|| format!("'{s}' is too large"))
}

/// How workers start: this program re-executed as `lagkit load worker`, or fork.
fn spawn(fork: bool) -> Result<Spawn, Failure> {
    if fork {
        return Ok(Spawn::Fork);
    }
    let program = std::env::current_exe().map_err(|e| {
        Failure::Runtime(format!(
            "cannot find this program to start workers: {e} (try --fork)"
        ))
    })?;
    Ok(Spawn::Exec {
        program,
        args: vec!["load".into(), "worker".into()],
    })
}

/// Prints the report; a client with failed connections exits 1 (a server
/// only reports them: a stray connection must not fail a lab's teardown).
fn print(rep: &Report, json: bool, table: bool) -> Result<(), Failure> {
    if json {
        let s = serde_json::to_string_pretty(rep)
            .map_err(|e| Failure::Runtime(format!("cannot write JSON: {e}")))?;
        println!("{s}");
    } else {
        if table {
            print!("{}", rep.table());
        }
        println!("{}", rep.summary());
    }
    if rep.errors > 0 && rep.role == lagkit_load::Role::Client {
        let first = rep
            .connections
            .iter()
            .find_map(|c| {
                c.error
                    .as_ref()
                    .map(|e| format!("{} -> {}: {e}", c.local, c.remote))
            })
            .unwrap_or_default();
        return Err(Failure::Runtime(format!(
            "{} connection(s) failed; first: {first}",
            rep.errors
        )));
    }
    Ok(())
}

/// Runs `lagkit load ...`.
pub fn run(args: Args) -> Result<(), Failure> {
    match args.what {
        LoadCommand::Worker { config } => {
            std::process::exit(lagkit_load::socketprocs::worker_main(&config))
        }
        LoadCommand::Server(a) => server(a),
        LoadCommand::Client(a) => client(a),
    }
}

fn server(a: ServerArgs) -> Result<(), Failure> {
    let mut cfg = ServerConfig::new(a.kind);
    cfg.bind = a.bind;
    cfg.port = a.port.unwrap_or(a.kind.default_port());
    // Only a port below 1024 needs a privilege; the default ports do not.
    if (1..1024).contains(&cfg.port) {
        crate::privilege::require("lagkit load server", crate::privilege::Need::LowPort)?;
    }
    cfg.procs = a.procs;
    cfg.method = a.method;
    cfg.lpm_ports = a.lpm_ports;
    cfg.migrations = a.migrations;
    cfg.spawn = spawn(a.fork)?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())
            .map_err(|e| Failure::Runtime(format!("cannot handle signals: {e}")))?;
    }
    let srv = start_server(&cfg).map_err(|e| match e {
        lagkit_load::LoadError::Zero(_)
        | lagkit_load::LoadError::TooMany { .. }
        | lagkit_load::LoadError::PortRange => Failure::Usage(e.to_string()),
        _ => Failure::Runtime(e.to_string()),
    })?;
    let ports: Vec<String> = srv.ports().iter().map(u16::to_string).collect();
    eprintln!(
        "lagkit load: {} server on {} port(s) {}; stop with SIGTERM or Ctrl-C",
        a.kind,
        a.bind,
        ports.join(",")
    );
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let rep = srv.stop().map_err(|e| Failure::Runtime(e.to_string()))?;
    print(&rep, a.json, a.table)
}

fn client(a: ClientArgs) -> Result<(), Failure> {
    let mut cfg = ClientConfig::new(a.kind, a.to);
    cfg.port = a.port.unwrap_or(a.kind.default_port());
    cfg.ports = a.ports;
    cfg.local = a.local;
    cfg.procs = a.procs;
    cfg.conns = a.conns;
    cfg.migrations = a.migrations;
    cfg.method = a.method;
    if let Some(s) = a.size {
        cfg.size = s;
    }
    cfg.reply = a
        .reply
        .unwrap_or(if a.kind == Kind::Rr { 1 } else { cfg.size });
    cfg.messages = a.messages;
    cfg.duration = match (a.duration, a.messages) {
        (Some(d), _) => Some(d),
        (None, Some(_)) => None,
        (None, None) => Some(Duration::from_secs(10)),
    };
    cfg.verify = !a.no_verify;
    cfg.nodelay = a.nodelay;
    cfg.sockbuf = a
        .sockbuf
        .map(|b| {
            u32::try_from(b).map_err(|_| Failure::Usage(format!("--sockbuf {b} is too large")))
        })
        .transpose()?;
    cfg.connect_timeout = a.connect_timeout;
    cfg.lpm_base = a.lpm_base;
    cfg.lpm_ports = a.lpm_ports;
    cfg.lpm_interval = a.lpm_interval;
    cfg.spawn = spawn(a.fork)?;
    cfg.validate().map_err(|e| Failure::Usage(e.to_string()))?;
    let rep = run_client(&cfg).map_err(|e| Failure::Runtime(e.to_string()))?;
    print(&rep, a.json, a.table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("32kb"), Ok(32768));
        assert_eq!(parse_size("256K"), Ok(262144));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert!(parse_size("4X").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("99999999999999999999M").is_err());
    }
}
