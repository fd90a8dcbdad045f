//! The workspace's layering, checked from Cargo's own view of it: the
//! readers of the control socket (lab, planner, check, the switch daemon)
//! and the bond's decisions (`lagkit-bondcore`) build without the bond's
//! daemon and its BPF programs (so without clang), and
//! the crates the two daemons are built from change the kernel through
//! `lagkit-sys`, never by running `ip` or `tc`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The workspace crates `packages` are built from (normal and build
/// dependencies, not dev-dependencies): name and directory.
fn built_from(packages: &[&str]) -> BTreeSet<(String, PathBuf)> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root()).args([
        "tree",
        "--offline",
        "-e",
        "normal,build",
        "--prefix",
        "none",
    ]);
    for p in packages {
        cmd.args(["-p", p]);
    }
    let out = cmd.output().expect("cargo tree");
    assert!(
        out.status.success(),
        "cargo tree: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let name = l.split_whitespace().next()?;
            let dir = l.split_once("(/")?.1.split(')').next()?;
            name.starts_with("lagkit")
                .then(|| (name.to_string(), PathBuf::from(format!("/{dir}"))))
        })
        .collect()
}

fn names(deps: &BTreeSet<(String, PathBuf)>) -> BTreeSet<&str> {
    deps.iter().map(|(n, _)| n.as_str()).collect()
}

#[test]
fn readers_of_the_control_socket_build_without_the_bond_or_bpf() {
    let deps = built_from(&[
        "lagkit-lab",
        "lagkit-planner",
        "lagkit-check",
        "lagkit-switchd",
        "lagkit-bondcore",
    ]);
    let deps = names(&deps);
    assert!(deps.contains("lagkit-api"), "{deps:?}");
    for banned in ["lagkit-bond", "lagkit-bpf"] {
        assert!(
            !deps.contains(banned),
            "{banned} is built for the lab, planner, check or switchd: {deps:?}"
        );
    }
}

#[test]
fn the_daemons_crates_run_neither_ip_nor_tc() {
    let deps = built_from(&["lagkit-bond", "lagkit-switchd"]);
    assert!(
        names(&deps).contains("lagkit-sys") && deps.len() > 5,
        "{deps:?}"
    );
    let mut found = Vec::new();
    for (name, dir) in &deps {
        let src = dir.join("src");
        assert!(src.is_dir(), "{name}: no {}", src.display());
        let mut files = Vec::new();
        walk(&src, &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            for needle in ["Command::new(\"ip\")", "Command::new(\"tc\")"] {
                if text.contains(needle) {
                    found.push(format!("{}: {needle}", f.display()));
                }
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}
