//! The committed man pages, completions and key reference are what
//! `lagkit generate-docs` writes today: regenerated into a temporary
//! directory and compared file by file, so a changed flag, help text or
//! configuration key fails here until `scripts/gen-docs.sh` is run.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file under `dir`, relative to it.
fn list(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `lagkit generate-docs` into a fresh directory named after `test`
/// (tests run in parallel).
fn generate(test: &str) -> TempDir {
    let dir =
        TempDir(std::env::temp_dir().join(format!("lagkit-docs-{}-{test}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    let out = Command::new(env!("CARGO_BIN_EXE_lagkit"))
        .args(["generate-docs", "--out"])
        .arg(&dir.0)
        .output()
        .expect("run lagkit");
    assert!(
        out.status.success(),
        "lagkit generate-docs failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

#[test]
fn committed_docs_are_current() {
    let fresh = generate("current");
    let generated = list(&fresh.0);
    for must in [
        "dist/man/lagkit.1",
        "dist/man/lagkit-up.1",
        "dist/man/lagkit-lab-run.1",
        "dist/man/lagkit-sim-lacp.1",
        "dist/man/lagkit.toml.5",
        "dist/completions/lagkit.bash",
        "dist/completions/_lagkit",
        "dist/completions/lagkit.fish",
        "docs/reference/bond-keys.md",
    ] {
        assert!(
            generated.contains(&PathBuf::from(must)),
            "lagkit generate-docs did not write {must}"
        );
    }
    for shell in ["lagkit.bash", "_lagkit", "lagkit.fish"] {
        let text = std::fs::read_to_string(fresh.0.join("dist/completions").join(shell)).unwrap();
        assert!(
            !text.contains("generate-docs"),
            "{shell} offers the hidden generate-docs"
        );
        assert!(text.contains("lacp"), "{shell} lacks `sim lacp`");
    }
    let mut stale = Vec::new();
    for rel in &generated {
        let want = std::fs::read(fresh.0.join(rel)).unwrap();
        match std::fs::read(root().join(rel)) {
            Ok(have) if have == want => {}
            Ok(_) => stale.push(format!("{} differs", rel.display())),
            Err(_) => stale.push(format!("{} is missing", rel.display())),
        }
    }
    // A page for a subcommand that no longer exists.
    for dir in ["dist/man", "dist/completions"] {
        for rel in list(&root().join(dir)) {
            let rel = Path::new(dir).join(rel);
            if !generated.contains(&rel) {
                stale.push(format!("{} is no longer generated", rel.display()));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "the committed documentation is stale; run scripts/gen-docs.sh and commit:\n  {}",
        stale.join("\n  ")
    );
}

/// Every page is one `man` formats without a warning (when man is installed).
#[test]
fn man_pages_render_without_warnings() {
    if Command::new("man").arg("--version").output().is_err() {
        eprintln!("man is not installed; skipping");
        return;
    }
    let fresh = generate("man");
    let pages = list(&fresh.0.join("dist/man"));
    assert!(pages.len() > 20, "{pages:?}");
    for page in pages {
        let path = fresh.0.join("dist/man").join(&page);
        let out = Command::new("man")
            .args(["--warnings", "-l"])
            .arg(&path)
            .env("MANWIDTH", "80")
            .env("MAN_KEEP_FORMATTING", "0")
            .output()
            .expect("run man");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && err.trim().is_empty(),
            "man --warnings -l {}: {err}",
            page.display()
        );
    }
}

/// The key reference names every key with its type and default.
#[test]
fn toml_page_documents_every_key() {
    let fresh = generate("toml");
    let page = std::fs::read_to_string(fresh.0.join("dist/man/lagkit.toml.5")).unwrap();
    for (name, _) in lagkit_bondcfg::option_names() {
        assert!(
            page.contains(&format!(".B {name}\n")),
            "{name} not in lagkit.toml.5"
        );
    }
    assert!(page.contains("metrics_port") && page.contains("metrics_listen"));
    let up = std::fs::read_to_string(fresh.0.join("dist/man/lagkit-up.1")).unwrap();
    for must in [
        "LAGKIT_LOG",
        "/run/lagkit/",
        "metrics_port",
        "mode = \"802.3ad\"",
    ] {
        assert!(up.contains(must), "lagkit-up.1 lacks {must}");
    }
}
