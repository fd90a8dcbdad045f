//! `scripts/setup.sh` installs everything lagkit needs: every program the
//! code runs (at build, run and test time) is in `lagkit_dataplane::tools`,
//! and every package named there, and every header the BPF programs
//! include, is in the script's group for it. A program or header added
//! without its package fails here, not on a user's fresh machine.

use lagkit_dataplane::tools::{self, TOOLS};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `pkgs_GROUP="a b c"` lines of scripts/setup.sh, by group.
fn setup_groups() -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(root().join("scripts/setup.sh")).expect("scripts/setup.sh");
    let mut groups = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("pkgs_") else {
            continue;
        };
        let (group, list) = rest.split_once('=').expect("pkgs_GROUP=\"...\"");
        let list = list.trim_matches('"');
        groups.insert(
            group.to_string(),
            list.split_whitespace().map(String::from).collect(),
        );
    }
    assert!(
        ["build", "run", "test", "package"]
            .iter()
            .all(|g| groups.contains_key(*g)),
        "setup.sh lost a group: {groups:?}"
    );
    groups
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The first string literal after `at` in `line`, if it looks like a
/// program name.
fn program_after(line: &str, at: usize) -> Option<&str> {
    let rest = &line[at..];
    let q = rest.find('"')?;
    let rest = &rest[q + 1..];
    let end = rest.find('"')?;
    let name = &rest[..end];
    let ok = !name.is_empty()
        && name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.');
    ok.then_some(name)
}

/// Programs the code runs: `Command::new("X")`, a command slice whose first
/// element is `"X"` (`sh(&["X", ...])`, `run(&["X", ...])`, ...), `ip netns
/// exec NS X`, and `tool_path("X")` lookups, with where each was found.
fn programs_in_code() -> BTreeMap<String, String> {
    let mut files = Vec::new();
    rust_files(&root().join("crates"), &mut files);
    let runners = [
        "Command::new(",
        "sh(&[",
        "run(&[",
        "try_sh(&[",
        "nsexec(ns, &[",
        "tool_path(",
        "tool(",
    ];
    let mut found = BTreeMap::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        // Joined, so that rustfmt's one-argument-per-line layout still reads
        // as `sh(&["ip", ...`.
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let joined = format!(
                "{} {}",
                line.trim(),
                lines.get(i + 1).map_or("", |l| l.trim())
            );
            for r in runners {
                let Some(at) = joined.find(r) else { continue };
                // Only a literal right after the runner (not a variable).
                let after = joined[at + r.len()..].trim_start();
                if !after.starts_with('"') {
                    continue;
                }
                if let Some(p) = program_after(&joined, at + r.len()) {
                    found
                        .entry(p.to_string())
                        .or_insert_with(|| format!("{}:{}", f.display(), i + 1));
                }
            }
            if let Some(at) = joined.find("\"exec\", ns, ") {
                if let Some(p) = program_after(&joined, at + "\"exec\", ns, ".len()) {
                    found
                        .entry(p.to_string())
                        .or_insert_with(|| format!("{}:{}", f.display(), i + 1));
                }
            }
        }
    }
    found
}

/// Not Debian packages to install: lagkit and its subcommands, the Rust
/// toolchain (`cargo`), and the shell every system has.
const LAGKIT_AND_SHELL: &[&str] = &[
    "lagkit", "up", "down", "status", "stats", "flow", "load", "lab", "demo", "plan", "check",
    "switch", "sim", "capture", "cargo", "true", "sh", "bash", "sleep", "cat", "kill",
];

#[test]
fn every_program_the_code_runs_has_its_package_in_setup() {
    let groups = setup_groups();
    for t in TOOLS {
        let g = groups.get(t.group).unwrap_or_else(|| {
            panic!(
                "tools.rs puts {} in group {:?}, which setup.sh lacks",
                t.name, t.group
            )
        });
        assert!(
            g.contains(t.package),
            "{} (package {}) belongs to setup.sh's {} group, which lacks it",
            t.name,
            t.package,
            t.group
        );
    }
    let found = programs_in_code();
    // The scan must see the well-known calls, or it has gone blind.
    for p in ["ip", "tc", "iperf3", "tshark", "ovs-vsctl", "ping"] {
        assert!(found.contains_key(p), "the scan missed {p}: {found:?}");
    }
    let unknown: Vec<String> = found
        .iter()
        // Tests also run lagkit itself (their helpers take its subcommand
        // first) and shell built-ins.
        .filter(|(p, _)| !LAGKIT_AND_SHELL.contains(&p.as_str()))
        .filter(|(p, _)| tools::lookup(p).is_none())
        .map(|(p, at)| format!("{p} (at {at})"))
        .collect();
    assert!(
        unknown.is_empty(),
        "programs run by the code but missing from crates/dataplane/src/tools.rs \
         (add each with its Debian package, and the package to scripts/setup.sh): {unknown:?}"
    );
}

/// The package that owns `path`, by `dpkg -S` (also under /usr for
/// merged-/usr systems).
fn dpkg_owner(path: &Path) -> Option<String> {
    let mut candidates = vec![path.to_path_buf()];
    if let Ok(real) = path.canonicalize() {
        candidates.push(real);
    }
    for c in candidates.clone() {
        let s = c.to_string_lossy().into_owned();
        if let Some(rest) = s.strip_prefix("/usr") {
            candidates.push(PathBuf::from(rest));
        } else {
            candidates.push(PathBuf::from(format!("/usr{s}")));
        }
    }
    for c in candidates {
        let out = Command::new("dpkg").arg("-S").arg(&c).output().ok()?;
        if out.status.success() {
            let text = String::from_utf8_lossy(&out.stdout);
            let pkg = text.split(':').next()?.trim().to_string();
            return Some(pkg);
        }
    }
    None
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"])
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file());
    found
}

#[test]
fn the_tool_table_names_the_package_that_really_provides_each_program() {
    if Command::new("dpkg").arg("--version").output().is_err() {
        eprintln!("SKIP: no dpkg (not a Debian system): package ownership not checked");
        return;
    }
    let mut missing = Vec::new();
    for t in TOOLS {
        let Some(path) = on_path(t.name) else {
            missing.push(t.name);
            continue;
        };
        let owner = dpkg_owner(&path)
            .unwrap_or_else(|| panic!("dpkg knows no package for {}", path.display()));
        assert_eq!(
            owner, t.package,
            "{} comes from {owner}, not {}",
            t.name, t.package
        );
    }
    assert!(
        missing.is_empty(),
        "not installed: {missing:?}; run `bash scripts/setup.sh` (as root) first"
    );
}

#[test]
fn every_header_the_bpf_programs_include_has_its_package_in_the_build_group() {
    let build = &setup_groups()["build"];
    let dir = root().join("crates/bpf/src/bpf");
    let mut headers = BTreeSet::new();
    for e in std::fs::read_dir(&dir)
        .expect("crates/bpf/src/bpf")
        .flatten()
    {
        let text = std::fs::read_to_string(e.path()).unwrap();
        for line in text.lines() {
            if let Some(h) = line
                .trim()
                .strip_prefix("#include <")
                .and_then(|r| r.strip_suffix('>'))
            {
                headers.insert(h.to_string());
            }
        }
    }
    assert!(headers.contains("bpf/bpf_helpers.h"), "{headers:?}");
    for h in headers {
        let path = [
            "/usr/include",
            "/usr/include/x86_64-linux-gnu",
            "/usr/include/aarch64-linux-gnu",
        ]
        .iter()
        .map(|d| Path::new(d).join(&h))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("<{h}> is not installed: run `bash scripts/setup.sh build`"));
        let owner = dpkg_owner(&path)
            .unwrap_or_else(|| panic!("dpkg knows no package for {}", path.display()));
        assert!(
            build.contains(&owner),
            "<{h}> comes from {owner}, which setup.sh's build group lacks"
        );
    }
    // build.rs runs clang, from the build group.
    let build_rs = std::fs::read_to_string(root().join("crates/bpf/build.rs")).unwrap();
    assert!(build_rs.contains("\"clang\""));
    assert_eq!(tools::lookup("clang").map(|t| t.group), Some("build"));
}
