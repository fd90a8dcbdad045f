//! Reading a topology file: its TOML into raw tables that keep every
//! value's position, and errors that name the file, line and column. What
//! the values mean is checked in `validate`; here only their shape.

use super::model::valid_lab_name;
use serde::Deserialize;
use std::path::Path;
use toml::Spanned;

/// A topology file that cannot be used: where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct TopologyError {
    /// The file name as given.
    pub file: String,
    /// 1-based line (0 when the file could not be read).
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What is wrong, and how to fix it.
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTopology {
    pub(super) name: Option<Spanned<String>>,
    pub(super) scale: Option<Spanned<RawScale>>,
    #[serde(default)]
    pub(super) host: Vec<RawHost>,
    #[serde(default)]
    pub(super) switch: Vec<RawSwitch>,
    #[serde(default)]
    pub(super) link: Vec<RawLink>,
    pub(super) workload: Option<Spanned<RawWorkload>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum RawScale {
    Note(String),
    Table { note: String, factor: Option<f64> },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHost {
    pub(super) name: Spanned<String>,
    pub(super) address: Option<Spanned<String>>,
    pub(super) bond: Option<Spanned<toml::Table>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSwitch {
    pub(super) name: Spanned<String>,
    pub(super) kind: Option<Spanned<String>>,
    pub(super) engine: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) channel: Vec<RawChannel>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawChannel {
    pub(super) name: Spanned<String>,
    pub(super) host: Option<Spanned<String>>,
    pub(super) ports: Option<Spanned<Vec<String>>>,
    pub(super) protocol: Spanned<String>,
    pub(super) load_balance: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLink {
    pub(super) between: Spanned<Vec<String>>,
    pub(super) count: Option<Spanned<i64>>,
    pub(super) rate: Option<Spanned<String>>,
    pub(super) overhead: Option<bool>,
    pub(super) mtu: Option<Spanned<toml::Value>>,
    pub(super) fault: Option<Spanned<toml::Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWorkload {
    pub(super) kind: Spanned<String>,
    pub(super) client: Option<Spanned<String>>,
    pub(super) clients: Option<Spanned<Vec<String>>>,
    pub(super) server: Option<Spanned<String>>,
    pub(super) migrations: Option<Spanned<i64>>,
    pub(super) sockbuf: Option<Spanned<i64>>,
    pub(super) flows: Option<Spanned<i64>>,
    pub(super) seconds: Option<Spanned<i64>>,
    pub(super) bidir: Option<bool>,
    pub(super) port: Option<Spanned<i64>>,
    pub(super) load: Option<Spanned<String>>,
    pub(super) procs: Option<Spanned<i64>>,
    pub(super) method: Option<Spanned<String>>,
    pub(super) conns: Option<Spanned<i64>>,
    pub(super) size: Option<Spanned<i64>>,
}

pub(super) struct Cx<'a> {
    pub(super) text: &'a str,
    pub(super) file: &'a str,
}

impl Cx<'_> {
    pub(super) fn err(&self, at: usize, message: String) -> TopologyError {
        let (line, column) = line_col(self.text, at);
        TopologyError {
            file: self.file.to_string(),
            line,
            column,
            message,
        }
    }

    pub(super) fn at<T>(&self, s: &Spanned<T>, message: String) -> TopologyError {
        self.err(s.span().start, message)
    }
}

/// 1-based line and column (in characters) of byte offset `at`.
pub(super) fn line_col(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// The file's TOML read into the raw tables (unknown keys refused), or
/// where the TOML is wrong.
pub(super) fn read(cx: &Cx<'_>) -> Result<RawTopology, TopologyError> {
    toml::from_str(cx.text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        cx.err(at, e.message().trim().to_string())
    })
}

/// The lab name a topology file would give, read leniently (for `lab down`
/// on a file that no longer validates): its `name` key if it has one,
/// else the file's stem.
pub fn lab_name_of(path: &Path) -> Option<String> {
    if let Ok(t) = std::fs::read_to_string(path) {
        if let Ok(table) = toml::from_str::<toml::Table>(&t) {
            if let Some(n) = table.get("name").and_then(|v| v.as_str()) {
                return valid_lab_name(n).then(|| n.to_string());
            }
        }
    }
    let stem = path.file_stem()?.to_string_lossy().into_owned();
    valid_lab_name(&stem).then_some(stem)
}
