//! Open vSwitch as a switch in a network namespace: one `ovsdb-server` and
//! one `ovs-vswitchd` (userspace datapath) per switch, with the database,
//! control sockets, pidfiles and logs in one directory of their own, so
//! several instances (and the system's own OVS, if any) never meet.
//!
//! The recipe is `shared/reference/lab-recipes.md`'s: the switch daemon runs
//! *inside* the namespace that holds its ports, `datapath_type=netdev`, and
//! `other_config:userspace-tso-enable=true` so the partial checksums and
//! 64 KB GSO frames Linux endpoints put on a veth are completed instead of
//! forwarded broken.
//!
//! Two ways to run the daemons ([`Spawn`]): as children of the caller (tests:
//! stopped by PID and reaped, optionally killed when the starting thread
//! dies), or detached (`lagkit lab up`: they outlive the command; `lab down`
//! finds them again by their pidfiles with [`Ovs::attach`]).

use crate::sys::{poll, run, tool, tool_path, CommandError, IoError, ProcId};
use lagkit_sys::proc::{self, Signal};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Where Debian keeps the OVS database schema.
pub const SCHEMA: &str = "/usr/share/openvswitch/vswitch.ovsschema";

/// The OVS programs a switch needs.
pub const TOOLS: [&str; 5] = [
    "ovsdb-tool",
    "ovsdb-server",
    "ovs-vswitchd",
    "ovs-vsctl",
    "ovs-appctl",
];

/// Why an Open vSwitch instance could not be started or configured.
#[derive(Debug, thiserror::Error)]
pub enum OvsError {
    /// OVS is not installed here: the tools and files missing.
    #[error(
        "missing {} (apt-get install -y --no-install-recommends openvswitch-switch)",
        .0.join(", ")
    )]
    Missing(Vec<String>),
    /// The instance's directory or a log could not be made.
    #[error(transparent)]
    Io(#[from] IoError),
    /// An OVS tool failed (`ovsdb-tool`, `ovs-vsctl`, `ovs-appctl`).
    #[error(transparent)]
    Command(#[from] CommandError),
    /// A daemon could not be started.
    #[error("{program} starts: {source}")]
    Spawn {
        /// `ovsdb-server` or `ovs-vswitchd`.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// A daemon started with `--detach` failed.
    #[error("{program} --detach failed ({status}): {log}")]
    Detach {
        /// `ovsdb-server` or `ovs-vswitchd`.
        program: String,
        /// How it exited.
        status: ExitStatus,
        /// The last lines it wrote.
        log: String,
    },
    /// A daemon's control socket did not appear.
    #[error("OVS socket {} did not appear within 10 s", .0.display())]
    NoSocket(PathBuf),
    /// A channel's load balance has no OVS bond mode.
    #[error("port {port}: OVS has no bond mode for this load balance")]
    NoBondMode {
        /// The OVS port (bond) of the channel.
        port: String,
    },
    /// The instance did not start; its daemons' logs.
    #[error("{cause}\n--- ovs logs ---\n{logs}")]
    Start {
        /// What failed.
        cause: Box<OvsError>,
        /// The last lines of each daemon's log.
        logs: String,
    },
}

/// Whether OVS can run here: [`OvsError::Missing`] names the tools (or
/// the schema) that are not installed.
pub fn available() -> Result<(), OvsError> {
    let mut miss: Vec<String> = TOOLS
        .iter()
        .filter(|t| tool(t).is_none())
        .map(|t| t.to_string())
        .collect();
    if !Path::new(SCHEMA).exists() {
        miss.push(format!("the OVS schema {SCHEMA}"));
    }
    if miss.is_empty() {
        Ok(())
    } else {
        Err(OvsError::Missing(miss))
    }
}

/// What is missing to run OVS here, if anything (tools or the schema).
pub fn missing() -> Option<String> {
    available().err().map(|e| e.to_string())
}

/// How the daemons are started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spawn {
    /// Children of the caller (no `--detach`); with `die_with_parent` they
    /// get SIGTERM when the thread that started them ends (a test killed by
    /// Ctrl-C leaves nothing behind).
    Child {
        /// Set `PR_SET_PDEATHSIG`.
        die_with_parent: bool,
    },
    /// `--detach`: they outlive the caller; stop them with [`Ovs::stop`].
    Detached,
}

/// One Open vSwitch instance serving one namespace.
#[derive(Debug)]
pub struct Ovs {
    dir: PathBuf,
    ns: String,
    db: Option<Child>,
    switchd: Option<Child>,
}

impl Ovs {
    /// Creates the database in `dir` (created; must be short enough for unix
    /// socket paths, under ~80 bytes) and starts both daemons for namespace
    /// `ns`, with userspace TSO on.
    pub fn start(ns: &str, dir: PathBuf, spawn: Spawn) -> Result<Ovs, OvsError> {
        available()?;
        std::fs::create_dir_all(&dir).map_err(IoError::at(&dir))?;
        let mut o = Ovs {
            dir,
            ns: ns.to_string(),
            db: None,
            switchd: None,
        };
        match o.start_inner(spawn) {
            Ok(()) => Ok(o),
            Err(e) => {
                let log = o.log_tail(15);
                o.stop();
                Err(OvsError::Start {
                    cause: Box::new(e),
                    logs: log,
                })
            }
        }
    }

    fn start_inner(&mut self, spawn: Spawn) -> Result<(), OvsError> {
        let conf = self.path("conf.db");
        let _ = std::fs::remove_file(&conf);
        run(&[&tool_path("ovsdb-tool")?, "create", &conf, SCHEMA])?;
        let db_args = [
            conf,
            format!("--remote=punix:{}", self.path("db.sock")),
            format!("--unixctl={}", self.path("ovsdb-server.ctl")),
            format!("--pidfile={}", self.path("ovsdb-server.pid")),
            format!("--log-file={}", self.path("ovsdb-server.log")),
        ];
        self.db = self.daemon("ovsdb-server", &db_args, spawn)?;
        self.wait_socket("db.sock")?;
        self.vsctl(&["--no-wait", "init"])?;
        // Read once at start-up: OVS then reads and writes its ports with
        // virtio-net headers, so TCP from Linux endpoints (lagkit's TAP,
        // a plain host) works with default offloads.
        self.vsctl(&[
            "--no-wait",
            "set",
            "Open_vSwitch",
            ".",
            "other_config:userspace-tso-enable=true",
        ])?;
        let sw_args = [
            format!("unix:{}", self.path("db.sock")),
            format!("--unixctl={}", self.path("ovs-vswitchd.ctl")),
            format!("--pidfile={}", self.path("ovs-vswitchd.pid")),
            format!("--log-file={}", self.path("ovs-vswitchd.log")),
        ];
        self.switchd = self.daemon("ovs-vswitchd", &sw_args, spawn)?;
        self.wait_socket("ovs-vswitchd.ctl")
    }

    /// An instance started earlier (by another process) in `dir`: for
    /// queries and [`Ovs::stop`], which then works from the pidfiles.
    pub fn attach(ns: &str, dir: PathBuf) -> Ovs {
        Ovs {
            dir,
            ns: ns.to_string(),
            db: None,
            switchd: None,
        }
    }

    /// The instance's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The namespace it serves.
    pub fn ns(&self) -> &str {
        &self.ns
    }

    /// A file in the instance's directory.
    pub fn path(&self, f: &str) -> String {
        self.dir.join(f).to_string_lossy().into_owned()
    }

    fn daemon(&self, prog: &str, args: &[String], spawn: Spawn) -> Result<Option<Child>, OvsError> {
        let d = &self.dir;
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.ns, &tool_path(prog)?])
            .args(args)
            .env("OVS_RUNDIR", d)
            .env("OVS_LOGDIR", d)
            .env("OVS_DBDIR", d)
            .env("OVS_SYSCONFDIR", d)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        match spawn {
            Spawn::Child { die_with_parent } => {
                if die_with_parent {
                    proc::die_with_parent(&mut cmd, Signal::SIGTERM);
                }
                // `ip netns exec` execs the daemon: the child's PID is its.
                let child = cmd.spawn().map_err(|source| OvsError::Spawn {
                    program: prog.to_string(),
                    source,
                })?;
                Ok(Some(child))
            }
            Spawn::Detached => {
                let log = std::fs::File::create(d.join(format!("{prog}.start.log")))
                    .map_err(IoError::at(d))?;
                // The parent returns once the detached daemon is ready.
                let st =
                    cmd.arg("--detach")
                        .stderr(log)
                        .status()
                        .map_err(|source| OvsError::Spawn {
                            program: prog.to_string(),
                            source,
                        })?;
                if !st.success() {
                    return Err(OvsError::Detach {
                        program: prog.to_string(),
                        status: st,
                        log: crate::sys::tail(&d.join(format!("{prog}.start.log")), 5),
                    });
                }
                Ok(None)
            }
        }
    }

    fn wait_socket(&self, name: &str) -> Result<(), OvsError> {
        let p = self.dir.join(name);
        poll(Duration::from_secs(10), || p.exists().then_some(())).ok_or(OvsError::NoSocket(p))
    }

    /// `ovs-vsctl` on this instance's database.
    pub fn vsctl(&self, args: &[&str]) -> Result<String, CommandError> {
        let db = format!("--db=unix:{}", self.path("db.sock"));
        let mut v = vec![tool_path("ovs-vsctl")?, "--timeout=20".into(), db];
        v.extend(args.iter().map(|s| s.to_string()));
        let v: Vec<&str> = v.iter().map(String::as_str).collect();
        run(&v)
    }

    /// `ovs-appctl` to this instance's ovs-vswitchd.
    pub fn appctl(&self, args: &[&str]) -> Result<String, CommandError> {
        let ctl = self.path("ovs-vswitchd.ctl");
        let mut v = vec![
            tool_path("ovs-appctl")?,
            "--timeout=10".into(),
            "-t".into(),
            ctl,
        ];
        v.extend(args.iter().map(|s| s.to_string()));
        let v: Vec<&str> = v.iter().map(String::as_str).collect();
        run(&v)
    }

    /// `lacp/show BOND`, parsed.
    pub fn lacp(&self, bond: &str) -> Result<OvsLacp, CommandError> {
        Ok(OvsLacp::parse(&self.appctl(&["lacp/show", bond])?))
    }

    /// `bond/show BOND`: member name -> "enabled"/"disabled".
    pub fn bond_members(&self, bond: &str) -> Result<BTreeMap<String, String>, CommandError> {
        Ok(parse_bond_members(&self.appctl(&["bond/show", bond])?))
    }

    /// The daemons' processes, from their pidfiles (only those still
    /// running the program the pidfile names).
    pub fn pids(&self) -> Vec<ProcId> {
        ["ovs-vswitchd", "ovsdb-server"]
            .iter()
            .filter_map(|prog| {
                let pid = std::fs::read_to_string(self.dir.join(format!("{prog}.pid")))
                    .ok()?
                    .trim()
                    .parse::<i32>()
                    .ok()?;
                let p = ProcId::of(pid)?;
                // comm is truncated to 15 bytes: "ovs-vswitchd", "ovsdb-server" fit.
                (p.comm == *prog).then_some(p)
            })
            .collect()
    }

    /// The last `n` lines of each daemon's log.
    pub fn log_tail(&self, n: usize) -> String {
        let mut o = String::new();
        for f in ["ovs-vswitchd.log", "ovsdb-server.log"] {
            let t = crate::sys::tail(&self.dir.join(f), n);
            if !t.is_empty() {
                o.push_str(&format!("[{f}]\n{t}\n"));
            }
        }
        o
    }

    /// Stops both daemons: `exit --cleanup` / `exit` over their control
    /// sockets, then SIGTERM/SIGKILL by PID (children, or pidfile PIDs
    /// checked against the program name and start time) after 5 s. Works
    /// when the daemons are already gone. Leaves the directory.
    pub fn stop(&mut self) {
        let recorded = self.pids();
        let sw_ctl = self.path("ovs-vswitchd.ctl");
        let db_ctl = self.path("ovsdb-server.ctl");
        stop_one(
            self.switchd.take(),
            &sw_ctl,
            &["exit", "--cleanup"],
            &recorded,
            "ovs-vswitchd",
        );
        stop_one(
            self.db.take(),
            &db_ctl,
            &["exit"],
            &recorded,
            "ovsdb-server",
        );
    }

    /// Leftovers of killed runs under `parent`: directories named
    /// `<prefix><pid>-...` whose process `<pid>` is gone. Stops the daemons
    /// their pidfiles name (if still those programs) and removes them.
    pub fn remove_stale(parent: &Path, prefix: &str) {
        let Ok(entries) = std::fs::read_dir(parent) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .strip_prefix(prefix)
                .and_then(|r| r.split('-').next())
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            if Path::new(&format!("/proc/{pid}")).exists() {
                continue;
            }
            Ovs::attach("", e.path()).stop();
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

fn stop_one(child: Option<Child>, ctl: &str, exit: &[&str], recorded: &[ProcId], prog: &str) {
    let pid = recorded.iter().find(|p| p.comm == prog).cloned();
    let running = child.is_some() || pid.as_ref().is_some_and(ProcId::alive);
    if running && Path::new(ctl).exists() {
        if let Some(appctl) = tool("ovs-appctl") {
            let mut v = vec![appctl.to_string_lossy().into_owned()];
            v.extend(["--timeout=5", "-t", ctl].map(String::from));
            v.extend(exit.iter().map(|s| s.to_string()));
            let v: Vec<&str> = v.iter().map(String::as_str).collect();
            let _ = run(&v);
        }
    }
    if let Some(mut c) = child {
        let deadline = Instant::now() + Duration::from_secs(5);
        while let Ok(None) = c.try_wait() {
            if Instant::now() > deadline {
                let _ = c.kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = c.wait();
    }
    if let Some(p) = pid {
        p.stop(Duration::from_secs(5));
    }
}

/// `bond/show` text: member name -> "enabled"/"disabled".
pub fn parse_bond_members(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("member "))
        .filter_map(|l| l.split_once(": "))
        .map(|(m, s)| (m.to_string(), s.trim().to_string()))
        .collect()
}

/// One side of one link as `lacp/show` prints it.
#[derive(Debug, Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OvsParty {
    /// System id (MAC).
    pub sys_id: String,
    /// System priority.
    pub sys_priority: u16,
    /// Port number.
    pub port_id: u16,
    /// Key.
    pub key: u16,
    /// State octet.
    pub state: u8,
}

/// One OVS bond member in `lacp/show`.
#[derive(Debug, Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OvsMember {
    /// e.g. "current attached", "defaulted detached".
    pub status: String,
    /// OVS's own view.
    pub actor: OvsParty,
    /// What OVS heard from the other end.
    pub partner: OvsParty,
}

/// `ovs-appctl lacp/show BOND`.
#[derive(Debug, Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OvsLacp {
    /// e.g. "active negotiated", "passive".
    pub status: String,
    /// System id.
    pub sys_id: String,
    /// System priority.
    pub sys_priority: u16,
    /// Members by name.
    pub members: BTreeMap<String, OvsMember>,
}

/// OVS prints the state octet as words, LSB first; unknown words are ignored.
pub fn state_from_words(s: &str) -> u8 {
    s.split_whitespace()
        .map(|w| match w {
            "activity" => 0x01,
            "timeout" => 0x02,
            "aggregation" => 0x04,
            "synchronized" => 0x08,
            "collecting" => 0x10,
            "distributing" => 0x20,
            "defaulted" => 0x40,
            "expired" => 0x80,
            _ => 0,
        })
        .fold(0, |a, b| a | b)
}

impl OvsLacp {
    /// Parses `lacp/show` output (one bond).
    pub fn parse(text: &str) -> OvsLacp {
        let mut o = OvsLacp::default();
        let mut cur: Option<String> = None;
        for line in text.lines().map(str::trim) {
            if let Some(rest) = line.strip_prefix("member: ") {
                let (name, status) = rest.split_once(':').unwrap_or((rest, ""));
                cur = Some(name.to_string());
                o.members.insert(
                    name.to_string(),
                    OvsMember {
                        status: status.trim().to_string(),
                        ..Default::default()
                    },
                );
                continue;
            }
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let v = v.trim();
            let num = || v.parse::<u16>().unwrap_or(0);
            match (&cur, k) {
                (None, "status") => o.status = v.to_string(),
                (None, "sys_id") => o.sys_id = v.to_string(),
                (None, "sys_priority") => o.sys_priority = num(),
                (Some(m), k) => {
                    let Some(m) = o.members.get_mut(m) else {
                        continue;
                    };
                    let (party, field) = if let Some(f) = k.strip_prefix("actor ") {
                        (&mut m.actor, f)
                    } else if let Some(f) = k.strip_prefix("partner ") {
                        (&mut m.partner, f)
                    } else {
                        continue;
                    };
                    match field {
                        "sys_id" => party.sys_id = v.to_string(),
                        "sys_priority" => party.sys_priority = num(),
                        "port_id" => party.port_id = num(),
                        "key" => party.key = num(),
                        "state" => party.state = state_from_words(v),
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        o
    }

    /// Negotiated, and each of `members` current and attached.
    pub fn all_current(&self, members: &[&str]) -> bool {
        self.status.contains("negotiated")
            && members.iter().all(|s| {
                self.members
                    .get(*s)
                    .is_some_and(|m| m.status == "current attached")
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHOW: &str = "---- bond0 ----
  status: active negotiated
  sys_id: 02:00:00:0a:ff:ff
  sys_priority: 65534
  aggregation key: 1
  lacp_time: fast

member: s1: current attached
  port_id: 1
  port_priority: 65535
  may_enable: true

  actor sys_id: 02:00:00:0a:ff:ff
  actor sys_priority: 65534
  actor port_id: 1
  actor port_priority: 65535
  actor key: 1
  actor state: activity timeout aggregation synchronized collecting distributing

  partner sys_id: 02:11:22:33:44:55
  partner sys_priority: 65535
  partner port_id: 2
  partner port_priority: 255
  partner key: 9
  partner state: activity timeout aggregation synchronized collecting distributing

member: s2: defaulted detached
  actor state: activity timeout aggregation defaulted
";

    #[test]
    fn parses_lacp_show() {
        let o = OvsLacp::parse(SHOW);
        assert_eq!(o.status, "active negotiated");
        assert_eq!(o.sys_priority, 65534);
        let s1 = &o.members["s1"];
        assert_eq!(s1.status, "current attached");
        assert_eq!(s1.actor.state, 0x3f);
        assert_eq!(s1.partner.sys_id, "02:11:22:33:44:55");
        assert_eq!(s1.partner.key, 9);
        assert_eq!(o.members["s2"].actor.state, 0x47);
        assert!(o.all_current(&["s1"]));
        assert!(!o.all_current(&["s1", "s2"]));
    }

    #[test]
    fn parses_bond_show_members() {
        let t = "---- bond0 ----\nbond_mode: balance-tcp\nlacp_status: negotiated\n\nmember s1: enabled\n  may_enable: true\n\nmember s2: disabled\n";
        let m = parse_bond_members(t);
        assert_eq!(m["s1"], "enabled");
        assert_eq!(m["s2"], "disabled");
    }
}
