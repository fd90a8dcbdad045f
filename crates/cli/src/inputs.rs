//! Arguments that may name many files: a directory, a glob, or files.

use crate::bond_cmd::Failure;
use std::path::PathBuf;

/// A directory, or a glob that names no file itself: many inputs.
pub fn is_many(f: &std::path::Path) -> bool {
    f.is_dir() || (!f.exists() && f.to_str().is_some_and(|s| s.contains(['*', '?', '['])))
}

/// The files of arguments that may name many (`check DIR`, `plan DIR`),
/// each with its path relative to its root (`/`-separated):
/// directories walked in name order (hidden files and directories left
/// out), globs expanded (rooted before their first wildcard), files taken
/// as they are (relative to their directory).
pub fn expand(args: &[PathBuf]) -> Result<Vec<(PathBuf, String)>, Failure> {
    let bad = |file: String, why: String| Failure::Input {
        file,
        line: None,
        column: None,
        why,
    };
    let mut out = Vec::new();
    for a in args {
        let shown = a.display().to_string();
        if a.is_dir() {
            let walk = walkdir::WalkDir::new(a)
                .sort_by_file_name()
                .into_iter()
                .filter_entry(|e| {
                    e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.')
                });
            for e in walk {
                let e = e.map_err(|e| bad(shown.clone(), e.to_string()))?;
                if !e.file_type().is_file() {
                    continue;
                }
                let rel = e.path().strip_prefix(a).unwrap_or(e.path());
                let rel = rel.to_string_lossy().replace('\\', "/");
                out.push((e.path().to_path_buf(), rel));
            }
        } else if is_many(a) {
            let paths =
                glob::glob(&shown).map_err(|e| bad(shown.clone(), format!("not a glob: {e}")))?;
            // The glob's root: the directories before its first wildcard
            // (`fleet/*/*.toml` is rooted at `fleet/`, so `web1` owns
            // `fleet/web1/bond.toml`).
            let wild = shown.find(['*', '?', '[']).unwrap_or(shown.len());
            let root = PathBuf::from(&shown[..shown[..wild].rfind('/').map_or(0, |i| i + 1)]);
            let before = out.len();
            for p in paths {
                let p = p.map_err(|e| bad(shown.clone(), e.to_string()))?;
                if p.is_file() {
                    let rel = p
                        .strip_prefix(&root)
                        .unwrap_or(&p)
                        .to_string_lossy()
                        .replace('\\', "/");
                    out.push((p, rel));
                }
            }
            if out.len() == before {
                return Err(bad(shown, "the glob matches no file".into()));
            }
        } else {
            let rel = a
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            out.push((a.clone(), rel));
        }
    }
    if out.is_empty() {
        return Err(bad(
            args.iter()
                .map(|a| a.display().to_string())
                .collect::<Vec<_>>()
                .join(" "),
            "no file to check".into(),
        ));
    }
    Ok(out)
}
