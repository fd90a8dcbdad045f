//! The workspace's layering, checked from Cargo's own view of it: the
//! readers of the control socket (lab, planner, check, the switch daemon)
//! and the bond's decisions (`lagkit-bondcore`) build without the bond's
//! daemon and its BPF programs (so without clang), and
//! the crates the two daemons are built from change the kernel through
//! `lagkit-sys`, never by running `ip` or `tc`; and `unsafe` code is
//! written only in `lagkit-sys` (the platform layer) and `lagkit-bpf` (the
//! BPF loader), every other library crate forbidding it.

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
        "lagkit-bondcore",
    ]);
    let deps = names(&deps);
    assert!(deps.contains("lagkit-api"), "{deps:?}");
    for banned in ["lagkit-bond", "lagkit-bpf", "lagkit-switchd"] {
        assert!(
            !deps.contains(banned),
            "{banned} is built for the lab, planner, check or bondcore: {deps:?}"
        );
    }
    // The switch's daemon runs the switch's BPF engine, but never the
    // bond's daemon.
    let switchd = built_from(&["lagkit-switchd"]);
    let switchd = names(&switchd);
    assert!(switchd.contains("lagkit-bpf"), "{switchd:?}");
    assert!(!switchd.contains("lagkit-bond"), "{switchd:?}");
}

/// The API crate is a typed leaf: enums and structs the daemons fill and
/// their readers read. It knows no protocol machine, configuration or hash
/// (the bond's core builds its values from those), so a reader of the
/// control socket never compiles them for it, and no decision can creep
/// into it.
#[test]
fn the_api_is_a_typed_leaf() {
    let deps = built_from(&["lagkit-api"]);
    let deps = names(&deps);
    let allowed = ["lagkit-api", "lagkit-wire", "lagkit-input"];
    let extra: Vec<&&str> = deps.iter().filter(|d| !allowed.contains(d)).collect();
    assert!(extra.is_empty(), "lagkit-api is built from {extra:?}");
    // Its sources compare no state by its name.
    let mut files = Vec::new();
    walk(&root().join("crates/api/src"), &mut files);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for needle in [
            "== \"P\"",
            "== \"portUp\"",
            "== \"DEFAULTED\"",
            "== \"auto\"",
        ] {
            assert!(
                !text.contains(needle),
                "{} compares a state by name ({needle}): use its enum",
                f.display()
            );
        }
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

/// Every crate of the workspace but the platform layer and the BPF loader
/// forbids `unsafe` in its library, and none of their sources, tests,
/// examples or benches write an `unsafe` block or function; the one
/// exception is a test's counting allocator (implementing `GlobalAlloc` is
/// `unsafe` by definition).
#[test]
fn unsafe_lives_only_in_the_platform_layer_and_the_bpf_loader() {
    const ALLOWED: [&str; 2] = ["sys", "bpf"];
    const ALLOCATOR: &str = "crates/hash/tests/no_alloc.rs";
    let root = root();
    // Built here, so that this file does not match itself.
    let needles = ["{", "fn", "impl"].map(|w| ["unsafe", w].join(" "));
    let mut found = Vec::new();
    let mut crates = 0;
    for e in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if ALLOWED.contains(&name.as_str()) {
            continue;
        }
        crates += 1;
        let lib = e.path().join("src/lib.rs");
        if lib.is_file() {
            let text = std::fs::read_to_string(&lib).unwrap();
            if !text.contains("#![forbid(unsafe_code)]") {
                found.push(format!("{}: no #![forbid(unsafe_code)]", lib.display()));
            }
        }
        let mut files = Vec::new();
        for sub in ["src", "tests", "examples", "benches"] {
            walk(&e.path().join(sub), &mut files);
        }
        for f in files {
            if f.ends_with(ALLOCATOR) {
                continue;
            }
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                if needles.iter().any(|u| code.contains(u.as_str())) {
                    found.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(crates > 15, "{crates} crates read");
    assert!(
        found.is_empty(),
        "unsafe outside lagkit-sys and lagkit-bpf: {found:#?}"
    );
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
