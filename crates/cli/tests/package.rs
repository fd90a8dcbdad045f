//! The Debian package and its systemd units, as an operator meets them:
//! `cargo deb` builds a package with the binary, both units, the man pages,
//! the completions and the example configuration; `dpkg -i` installs it,
//! `man` renders its pages, `systemd-analyze verify` accepts its units and
//! `dpkg --purge` leaves nothing behind. The units' `ExecStart` lines, run by
//! hand in network namespaces with only the capabilities the units grant,
//! start a bond that forms with a peer (and a switch), and tell a
//! notification socket READY=1 only once the members are attached.
//!
//! Needs root, cargo-deb (`bash scripts/setup.sh package`) and the binary
//! the package ships, with `LAGKIT_BIN` pointing at it: the release build
//! (`cargo build --release -p lagkit`, what a release ships), or the dev
//! build the tests already made (`target/debug/lagkit`, which the full test
//! suite packages so that it builds the workspace once).

mod common;

use common::TmpDir;
use lagkit_api::status::BondStatus;
use lagkit_sys::proc::Signal;
use lagkit_testnet::{wait_until, Lab};
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// The binary the package ships (`LAGKIT_BIN`).
fn shipped_bin() -> PathBuf {
    let p = std::env::var_os("LAGKIT_BIN").map(PathBuf::from).expect(
        "LAGKIT_BIN is not set: build the binary (`cargo build --release -p lagkit`) and point LAGKIT_BIN at it",
    );
    assert!(
        p.is_file(),
        "LAGKIT_BIN={} does not exist: run `cargo build --release -p lagkit`",
        p.display()
    );
    p
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn scratch(tag: &str) -> TmpDir {
    let d = std::env::temp_dir().join(format!("lkt-pkg-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    TmpDir(d)
}

/// The files another part of the build generates into `dist/`, which the
/// package ships.
const DIST: &[&str] = &[
    "dist/man/lagkit.1",
    "dist/man/lagkit-up.1",
    "dist/man/lagkit-switch.1",
    "dist/man/lagkit.toml.5",
    "dist/completions/lagkit.bash",
    "dist/completions/_lagkit",
    "dist/completions/lagkit.fish",
];

fn require_dist() {
    let missing: Vec<&str> = DIST
        .iter()
        .copied()
        .filter(|f| !Path::new(ROOT).join(f).is_file())
        .collect();
    assert!(
        missing.is_empty(),
        "the package ships man pages and completions from dist/, and these are missing: {}; generate them first",
        missing.join(", ")
    );
}

/// Builds the package from the binary LAGKIT_BIN names into `out`; its path.
fn build_deb(out: &Path) -> PathBuf {
    require_dist();
    let bin = shipped_bin();
    let ok = Command::new("cargo")
        .args(["deb", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "cargo-deb is not installed: run `bash scripts/setup.sh package`"
    );
    // cargo-deb takes the binary from the target directory of the profile
    // it is given (the assets' `target/release/` stands for it); make sure
    // that is the one LAGKIT_BIN names. The profile is the directory the
    // binary is in: `release`, or `debug` for the dev profile.
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| Path::new(ROOT).join("target"), PathBuf::from);
    let dir = bin
        .parent()
        .and_then(|d| d.file_name())
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_default();
    let profile = if dir == "debug" { "dev" } else { dir.as_str() };
    let shipped = target.join(&dir).join("lagkit");
    assert_eq!(
        std::fs::canonicalize(&shipped).ok(),
        std::fs::canonicalize(&bin).ok(),
        "cargo deb ships {}, but LAGKIT_BIN is {}",
        shipped.display(),
        bin.display()
    );
    run(Command::new("cargo")
        .current_dir(ROOT)
        .args(["deb", "-p", "lagkit", "--no-build", "--profile", profile])
        .arg("--output")
        .arg(out));
    let debs: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "deb"))
        .collect();
    assert_eq!(debs.len(), 1, "one package in {}: {debs:?}", out.display());
    debs[0].clone()
}

/// The regular files and links of a `dpkg -c` listing, as absolute paths.
fn contents(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter(|l| !l.starts_with('d'))
        .filter_map(|l| l.split_whitespace().nth(5))
        .map(|p| p.trim_start_matches('.').to_string())
        .collect()
}

/// A file the package must ship; a man page may be compressed.
fn shipped(files: &[String], path: &str) -> String {
    files
        .iter()
        .find(|f| *f == path || **f == format!("{path}.gz"))
        .cloned()
        .unwrap_or_else(|| panic!("the package lacks {path}; it has {files:#?}"))
}

fn installed() -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${db:Status-Status}", "lagkit"])
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"installed"))
}

/// Purges the package when the test ends, passed or failed.
struct Purge;

impl Drop for Purge {
    fn drop(&mut self) {
        let _ = Command::new("dpkg").args(["--purge", "lagkit"]).output();
    }
}

#[test]
fn the_package_ships_installs_renders_verifies_and_purges_cleanly() {
    let dir = scratch("deb");
    let deb = build_deb(&dir.0);
    let listing = run(Command::new("dpkg").arg("-c").arg(&deb));
    eprintln!("dpkg -c {}:\n{listing}", deb.display());
    let files = contents(&listing);
    for f in [
        "/usr/bin/lagkit",
        "/lib/systemd/system/lagkit@.service",
        "/lib/systemd/system/lagkit-switch@.service",
        "/usr/share/bash-completion/completions/lagkit",
        "/usr/share/zsh/vendor-completions/_lagkit",
        "/usr/share/fish/vendor_completions.d/lagkit.fish",
        "/etc/lagkit/bond0.toml.example",
        "/usr/share/doc/lagkit/copyright",
    ] {
        shipped(&files, f);
    }
    // Every man page in dist/, in its section's directory.
    for e in std::fs::read_dir(Path::new(ROOT).join("dist/man")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        let section = name.rsplit('.').next().unwrap();
        shipped(&files, &format!("/usr/share/man/man{section}/{name}"));
    }
    // The maintainer scripts: an upgrade restarts running instances (a
    // restart hands a bond over), only a removal stops them.
    let scripts = dir.0.join("control");
    run(Command::new("dpkg-deb").arg("-e").arg(&deb).arg(&scripts));
    for s in ["postinst", "prerm", "postrm"] {
        run(Command::new("sh").arg("-n").arg(scripts.join(s)));
    }
    let postinst = std::fs::read_to_string(scripts.join("postinst")).unwrap();
    assert!(
        postinst.contains("systemctl try-restart 'lagkit@*.service'"),
        "{postinst}"
    );
    let prerm = std::fs::read_to_string(scripts.join("prerm")).unwrap();
    assert!(
        prerm.contains("\"$1\" = remove") && prerm.contains("systemctl stop"),
        "{prerm}"
    );
    let control = run(Command::new("dpkg-deb").arg("-f").arg(&deb).arg("Depends"));
    for dep in ["iproute2", "ethtool", "procps"] {
        assert!(control.contains(dep), "Depends names {dep}: {control}");
    }

    if !is_root() {
        eprintln!("SKIP installing the package: needs root");
        return;
    }
    assert!(
        !installed(),
        "a lagkit package is already installed; remove it (`dpkg --purge lagkit`) before this test"
    );
    for f in &files {
        assert!(
            !Path::new(f).exists(),
            "{f} exists but belongs to no lagkit package; installing would replace it"
        );
    }
    let _purge = Purge;
    run(Command::new("dpkg").arg("-i").arg(&deb));
    assert!(installed(), "dpkg -i installed lagkit");
    for f in &files {
        assert!(Path::new(f).exists(), "{f} installed");
    }
    assert!(run(Command::new("/usr/bin/lagkit").arg("--version")).contains("lagkit"));
    // Installed again: an upgrade, through prerm upgrade and postinst
    // configure <version>.
    run(Command::new("dpkg").arg("-i").arg(&deb));

    for page in [
        shipped(&files, "/usr/share/man/man1/lagkit.1"),
        shipped(&files, "/usr/share/man/man5/lagkit.toml.5"),
    ] {
        let text = run(Command::new("man")
            .args(["-l", "-P", "cat"])
            .arg(&page)
            .env("MANWIDTH", "80"));
        assert!(
            text.to_lowercase().contains("lagkit"),
            "man -l {page} renders a page about lagkit: {text}"
        );
    }

    for unit in ["lagkit@.service", "lagkit-switch@.service"] {
        let path = format!("/lib/systemd/system/{unit}");
        let out = Command::new("systemd-analyze")
            .args(["verify", &path])
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success(),
            "systemd-analyze verify {unit}: {said}"
        );
        assert!(
            !said.contains("lagkit"),
            "systemd-analyze verify {unit} has no complaint about it: {said}"
        );
    }

    // Removed, only the configuration stays; purged, nothing does.
    run(Command::new("dpkg").args(["-r", "lagkit"]));
    for f in files.iter().filter(|f| !f.starts_with("/etc/")) {
        assert!(!Path::new(f).exists(), "dpkg -r removed {f}");
    }
    run(Command::new("dpkg").args(["--purge", "lagkit"]));
    for f in &files {
        assert!(!Path::new(f).exists(), "dpkg --purge removed {f}");
    }
    for d in ["/etc/lagkit", "/usr/share/doc/lagkit"] {
        assert!(!Path::new(d).exists(), "dpkg --purge removed {d}");
    }
}

#[test]
fn the_example_configuration_is_valid() {
    let out = Command::new(env!("CARGO_BIN_EXE_lagkit"))
        .args(["up", "--check"])
        .arg(Path::new(ROOT).join("packaging/etc/bond0.toml.example"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "lagkit up --check accepts it: {said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("bond bond0: mode IEEE 802.3ad"), "{said}");
}

/// A unit's `[Service]` settings, in order (a key may repeat).
fn service(unit: &str) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(Path::new(ROOT).join("packaging/systemd").join(unit))
        .unwrap_or_else(|e| panic!("{unit}: {e}"));
    let mut section = "";
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
        } else if section == "[Service]" && !line.starts_with('#') {
            if let Some((k, v)) = line.split_once('=') {
                out.push((k.to_string(), v.to_string()));
            }
        }
    }
    out
}

fn setting(s: &[(String, String)], key: &str) -> String {
    s.iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| panic!("the unit sets {key}"))
}

/// A unit's ExecStart as words to run: `%i` is the instance, `$VAR` the
/// words of `env`'s VAR, and the installed paths (/usr/bin/lagkit,
/// /etc/lagkit/) are the shipped binary and `etc`. Wrapped in setpriv(1)
/// with only the unit's capabilities and no new privileges, as systemd
/// would start it.
fn exec_start(s: &[(String, String)], instance: &str, etc: &Path, env: &[(&str, &str)]) -> Command {
    assert_eq!(setting(s, "NoNewPrivileges"), "yes");
    let caps: Vec<String> = setting(s, "CapabilityBoundingSet")
        .split_whitespace()
        .map(|c| format!("+{}", c.trim_start_matches("CAP_").to_lowercase()))
        .collect();
    // The unit's own Environment= defaults, then `env` (its
    // EnvironmentFile's); an unset variable expands to nothing, as in
    // systemd.
    let defaults: Vec<(String, String)> = (s.iter())
        .filter(|(k, _)| k == "Environment")
        .filter_map(|(_, v)| {
            let (k, v) = v.split_once('=')?;
            Some((k.to_string(), v.replace("%i", instance)))
        })
        .collect();
    let value = |var: &str| -> String {
        (env.iter()
            .find(|(k, _)| *k == var)
            .map(|(_, v)| v.to_string()))
        .or_else(|| {
            defaults
                .iter()
                .find(|(k, _)| k == var)
                .map(|(_, v)| v.clone())
        })
        .unwrap_or_default()
    };
    let mut words = Vec::new();
    for w in setting(s, "ExecStart").split_whitespace() {
        let braced = w.strip_prefix("${").and_then(|v| v.strip_suffix('}'));
        if let Some(var) = braced.or_else(|| w.strip_prefix('$')) {
            for v in value(var).split_whitespace() {
                let v = match v.strip_prefix("/etc/lagkit/") {
                    Some(rest) => etc.join(rest).to_string_lossy().into_owned(),
                    None => v.to_string(),
                };
                words.push(v);
            }
            continue;
        }
        let w = w.replace("%i", instance);
        let w = if w == "/usr/bin/lagkit" {
            shipped_bin().to_string_lossy().into_owned()
        } else if let Some(rest) = w.strip_prefix("/etc/lagkit/") {
            etc.join(rest).to_string_lossy().into_owned()
        } else {
            w
        };
        words.push(w);
    }
    let mut c = Command::new("setpriv");
    c.args(["--no-new-privs", "--inh-caps", "-all", "--bounding-set"])
        .arg(format!("-all,{}", caps.join(",")))
        .arg("--")
        .args(&words);
    c
}

/// A daemon started through `ip netns exec` (which execs, so the child is
/// the daemon); SIGTERM and reaped on drop.
struct Daemon(Child);

impl Daemon {
    fn start(ns: &str, cmd: &Command, notify: Option<&Path>) -> Daemon {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns]).arg(cmd.get_program());
        c.args(cmd.get_args());
        if let Some(n) = notify {
            c.env("NOTIFY_SOCKET", n);
        }
        c.stdout(Stdio::null()).stderr(Stdio::inherit());
        Daemon(c.spawn().expect("the daemon starts"))
    }

    fn signal(&self, sig: Signal) {
        let _ = lagkit_sys::proc::kill(self.0.id(), sig);
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            self.signal(Signal::SIGTERM);
            let _ = self.0.wait();
        }
    }
}

/// The notification socket a test plays systemd's part on.
struct Notify {
    sock: UnixDatagram,
    path: PathBuf,
}

impl Notify {
    fn bind(dir: &Path) -> Notify {
        let path = dir.join("notify.sock");
        let sock = UnixDatagram::bind(&path).unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        Notify { sock, path }
    }

    /// The next message, within `timeout`.
    fn next(&self, timeout: Duration) -> Option<String> {
        let end = Instant::now() + timeout;
        let mut buf = [0u8; 4096];
        while Instant::now() < end {
            if let Ok(n) = self.sock.recv(&mut buf) {
                return Some(String::from_utf8_lossy(&buf[..n]).into_owned());
            }
        }
        None
    }

    /// Messages until one has the line `want`; all of them.
    fn until(&self, want: &str, timeout: Duration) -> Vec<String> {
        let end = Instant::now() + timeout;
        let mut seen = Vec::new();
        while let Some(m) = self.next(end.saturating_duration_since(Instant::now())) {
            let done = m.lines().any(|l| l == want);
            seen.push(m);
            if done {
                return seen;
            }
        }
        panic!("no {want} within {timeout:?}; received {seen:?}");
    }
}

fn status(ns: &str) -> Option<BondStatus> {
    let out = Command::new("ip")
        .args(["netns", "exec", ns])
        .arg(shipped_bin())
        .args(["status", "bond0", "--json"])
        .output()
        .ok()?;
    let mut v: Vec<BondStatus> = serde_json::from_slice(&out.stdout).ok()?;
    v.pop()
}

fn ports(ns: &str) -> usize {
    status(ns)
        .and_then(|s| s.lacp)
        .map_or(0, |l| l.number_of_ports)
}

fn bond_config(path: &Path, addr: &str) {
    std::fs::write(
        path,
        format!(
            "name = \"bond0\"\nmode = \"802.3ad\"\nmembers = [\"eth1\", \"eth2\"]\nlacp_rate = \"fast\"\naddress = [\"{addr}\"]\n"
        ),
    )
    .unwrap();
}

#[test]
fn the_bond_units_exec_start_forms_a_bond_and_notifies_once_members_are_attached() {
    let Some(mut lab) = Lab::new("package_bond_unit") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    for i in 1..=2 {
        lab.veth(&a, &format!("eth{i}"), &b, &format!("eth{i}"));
    }
    let dir = scratch("unit");
    let etc = dir.0.join("etc");
    std::fs::create_dir_all(&etc).unwrap();
    bond_config(&etc.join("uplink.toml"), "10.0.0.1/24");
    bond_config(&dir.0.join("peer.toml"), "10.0.0.2/24");
    let notify = Notify::bind(&dir.0);

    let unit = service("lagkit@.service");
    assert_eq!(setting(&unit, "Type"), "notify");
    let mut peer = Command::new(shipped_bin());
    peer.arg("up").arg(dir.0.join("peer.toml"));
    let _peer = Daemon::start(&b, &peer, None);
    let cmd = exec_start(&unit, "uplink", &etc, &[]);
    let mut daemon = Daemon::start(&a, &cmd, Some(&notify.path));

    let got = notify.until("READY=1", Duration::from_secs(20));
    // READY=1 came; the members must already be attached. The kernel is
    // asked at once (a READY=1 sent early would be caught in the fraction
    // of a second the members take), the daemon after.
    let links = lab.sh(&["ip", "-n", &a, "-o", "link"]);
    assert!(
        links.contains("bond0"),
        "the bond's interface exists: {links}"
    );
    for m in ["eth1", "eth2"] {
        let line = links
            .lines()
            .find(|l| l.contains(&format!(" {m}@")))
            .unwrap_or_else(|| panic!("{m} in {links}"));
        assert!(
            line.contains("NOARP") && line.contains(",UP"),
            "{m} taken by the bond (up, ARP off) when READY=1 arrived: {line}"
        );
    }
    let st = status(&a).expect("the bond answers once it said READY=1");
    assert_eq!(st.members.len(), 2);
    for m in &st.members {
        assert!(
            m.isolation.is_some() && m.mii_status != lagkit_api::status::MiiStatus::Missing,
            "member {} attached when READY=1 arrived: {m:?}",
            m.name
        );
    }
    assert!(!st.engine_reason.is_empty(), "a data path runs: {st:?}");
    assert!(
        got.iter().any(|m| m
            .lines()
            .any(|l| l.starts_with("STATUS=") && l.contains("bond0"))),
        "a STATUS= line names the bond: {got:?}"
    );
    wait_until(
        "the bond forms with its peer (2 ports each)",
        Duration::from_secs(20),
        || ports(&a) == 2 && ports(&b) == 2,
    );

    // Reload (ExecReload sends SIGHUP): RELOADING=1, then READY=1 again,
    // the bond kept.
    assert!(setting(&unit, "ExecReload").contains("-HUP"));
    daemon.signal(Signal::SIGHUP);
    let got = notify.until("READY=1", Duration::from_secs(10));
    assert!(
        got.iter().any(|m| m.lines().any(|l| l == "RELOADING=1")),
        "RELOADING=1 before READY=1: {got:?}"
    );
    assert_eq!(ports(&a), 2, "the bond runs on after a reload");

    // Stop: STOPPING=1, exit 0, and the bond's interface is gone with only
    // the unit's capabilities.
    daemon.signal(Signal::SIGTERM);
    notify.until("STOPPING=1", Duration::from_secs(10));
    let code = daemon.0.wait().unwrap();
    assert!(code.success(), "lagkit up exits 0 on SIGTERM: {code:?}");
    let links = lab.sh(&["ip", "-n", &a, "-o", "link"]);
    assert!(
        !links.contains("bond0"),
        "the bond's interface removed: {links}"
    );
    assert!(!links.contains("NOARP"), "members given back: {links}");

    // The same unit runs a bond the host defines in netplan, named in its
    // environment file (LAGKIT_CONFIG, LAGKIT_UP_OPTIONS).
    let netplan = dir.0.join("01-bond.yaml");
    std::fs::write(
        &netplan,
        "network:\n  version: 2\n  bonds:\n    bond0:\n      interfaces: [eth1, eth2]\n      addresses: [10.0.0.1/24]\n      dhcp6: true\n      parameters:\n        mode: 802.3ad\n        lacp-rate: fast\n        transmit-hash-policy: layer3+4\n",
    )
    .unwrap();
    let config = netplan.to_string_lossy().into_owned();
    let env = [
        ("LAGKIT_CONFIG", config.as_str()),
        ("LAGKIT_UP_OPTIONS", "--drop-unsupported"),
    ];
    let cmd = exec_start(&unit, "uplink", &etc, &env);
    let mut daemon = Daemon::start(&a, &cmd, Some(&notify.path));
    notify.until("READY=1", Duration::from_secs(20));
    wait_until(
        "the netplan bond forms with its peer",
        Duration::from_secs(20),
        || ports(&a) == 2 && ports(&b) == 2,
    );
    let st = status(&a).expect("the netplan bond answers");
    assert_eq!(st.mode, lagkit_api::status::BondMode::Lacp);
    assert_eq!(st.xmit_hash_policy, "layer3+4");
    daemon.signal(Signal::SIGTERM);
    assert!(daemon.0.wait().unwrap().success());
}

#[test]
fn the_switch_units_exec_start_opens_its_ports_notifies_and_reloads() {
    let Some(mut lab) = Lab::new("package_switch_unit") else {
        return;
    };
    let (a, b) = (lab.netns(), lab.netns());
    for i in 1..=2 {
        lab.veth(&a, &format!("eth{i}"), &b, &format!("eth{i}"));
    }
    // The switch uses its devices as it finds them; a host's would be up.
    for i in 1..=2 {
        lab.sh(&["ip", "-n", &a, "link", "set", &format!("eth{i}"), "up"]);
    }
    let dir = scratch("switch");
    let etc = dir.0.join("etc");
    std::fs::create_dir_all(&etc).unwrap();
    let ios = "hostname sw1\ninterface range gigabitethernet 1/0/1 - 2\n channel-group 1 mode active\n lacp rate fast\n";
    std::fs::write(etc.join("switch-sw1.ios"), ios).unwrap();
    let port_map = "--port Gi1/0/1=eth1 --port Gi1/0/2=eth2";
    std::fs::write(
        etc.join("switch-sw1.env"),
        format!("LAGKIT_SWITCH_PORTS=\"{port_map}\"\n"),
    )
    .unwrap();
    let unit = service("lagkit-switch@.service");
    assert_eq!(setting(&unit, "Type"), "notify");
    assert_eq!(
        setting(&unit, "EnvironmentFile"),
        "/etc/lagkit/switch-%i.env"
    );
    bond_config(&dir.0.join("host.toml"), "10.0.0.2/24");
    let notify = Notify::bind(&dir.0);

    let cmd = exec_start(&unit, "sw1", &etc, &[("LAGKIT_SWITCH_PORTS", port_map)]);
    let mut sw = Daemon::start(&a, &cmd, Some(&notify.path));
    let got = notify.until("READY=1", Duration::from_secs(20));
    assert!(
        got.iter().any(|m| m
            .lines()
            .any(|l| l.starts_with("STATUS=") && l.contains("sw1"))),
        "{got:?}"
    );
    let mut host = Command::new(shipped_bin());
    host.arg("up").arg(dir.0.join("host.toml"));
    let _host = Daemon::start(&b, &host, None);
    wait_until(
        "the host's bond forms with the switch (2 ports)",
        Duration::from_secs(20),
        || ports(&b) == 2,
    );

    // A reload with a valid file restarts the switch's ports; the channel
    // forms again.
    sw.signal(Signal::SIGHUP);
    let got = notify.until("READY=1", Duration::from_secs(10));
    assert!(
        got.iter().any(|m| m.lines().any(|l| l == "RELOADING=1")),
        "{got:?}"
    );
    wait_until(
        "the channel forms again after the reload",
        Duration::from_secs(20),
        || ports(&b) == 2,
    );
    // A reload with an invalid file keeps the switch as it was.
    std::fs::write(etc.join("switch-sw1.ios"), "interface bogus 9\n").unwrap();
    sw.signal(Signal::SIGHUP);
    notify.until("READY=1", Duration::from_secs(10));
    assert!(
        matches!(sw.0.try_wait(), Ok(None)),
        "an invalid reload leaves the switch running"
    );

    sw.signal(Signal::SIGTERM);
    notify.until("STOPPING=1", Duration::from_secs(10));
    assert!(sw.0.wait().unwrap().success(), "lagkit switch exits 0");
}
