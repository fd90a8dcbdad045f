//! netplan (`/etc/netplan/*.yaml`): the bonds under `network: bonds:` and
//! the `ethernets:` they use, read into the same [`Options`] as the other
//! dialects, each option with the line of its key.
//!
//! The YAML itself is read by `saphyr-parser` (the event parser of the
//! saphyr project, successor of yaml-rust2): it is a complete YAML 1.2
//! parser that marks every event with its span, and has no dependencies
//! to speak of. [`parse`] folds its events into a small [`Node`] tree that
//! keeps the line of every key, which the findings name. `saphyr` (its
//! loader) and `serde-saphyr` were looked at too: the loader's marked
//! mappings keep only the last of two equal keys, and serde would need a
//! span wrapper on every field of netplan's open-ended schema, where the
//! mapping below reads only the few keys that matter.
//!
//! On top of the parser: a key written twice, anchors and aliases (netplan
//! files do not need them, and a value copied from elsewhere would carry
//! the wrong line) and a second document are refused with their line, and
//! nesting is bounded. The parser's own errors are given the line they
//! are about (an unclosed `[` is named where it opens, a line that is no
//! `key: value` where it is, not where the parser noticed) and a hint for
//! the usual mistakes: tabs and indentation.

use saphyr_parser::{Event, Parser as Events, ScanError, Span};
use std::collections::HashSet;

use crate::dialects::Options;
use crate::facts::ReadError;

/// A YAML value. Entries and items carry the line they start on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// A scalar (an empty value is `Scalar("")`).
    Scalar(String),
    /// A mapping: (key, line, value) in file order.
    Map(Vec<(String, usize, Node)>),
    /// A sequence: (line, item).
    List(Vec<(usize, Node)>),
}

impl Node {
    /// The value of `key`, with the key's line.
    pub fn get(&self, key: &str) -> Option<(usize, &Node)> {
        match self {
            Node::Map(m) => m.iter().find(|e| e.0 == key).map(|e| (e.1, &e.2)),
            _ => None,
        }
    }
}

/// Nesting deeper than this is refused (no netplan file comes near it).
const MAX_DEPTH: usize = 64;

fn bad(file: &str, line: usize, why: impl Into<String>) -> ReadError {
    ReadError::Bad {
        file: file.into(),
        line,
        why: why.into(),
    }
}

/// A mapping or sequence whose end event has not come yet.
struct Open {
    /// Where it starts: a flow collection's bracket, or a block one's
    /// first key or `-`.
    span: Span,
    /// Written `[...]` or `{...}`.
    flow: bool,
    kind: OpenKind,
    /// A mapping's keys so far, to refuse a repeated one without a search
    /// of the entries per key (quadratic in a file of many interfaces).
    keys: HashSet<String>,
}

enum OpenKind {
    /// Entries so far, and a key waiting for its value (with its line).
    Map(Vec<(String, usize, Node)>, Option<(String, usize)>),
    List(Vec<(usize, Node)>),
}

/// Folds the parser's events into a [`Node`], refusing what netplan files
/// do not use. Iterative, so that nesting costs no stack.
struct Builder<'a> {
    file: &'a str,
    open: Vec<Open>,
    root: Option<Node>,
    documents: usize,
}

impl Builder<'_> {
    fn err(&self, line: usize, why: impl Into<String>) -> ReadError {
        bad(self.file, line, why)
    }

    /// Anchors and aliases are refused: a value copied from elsewhere
    /// would carry another line than its key's.
    fn anchors(&self, line: usize) -> ReadError {
        self.err(
            line,
            "YAML anchors and aliases (&name, *name) are not read here: write the value out in full (netplan files do not need them)",
        )
    }

    fn no_anchor(&self, anchor: usize, span: Span) -> Result<(), ReadError> {
        match anchor {
            0 => Ok(()),
            _ => Err(self.anchors(span.start.line())),
        }
    }

    fn event(&mut self, event: Event, span: Span) -> Result<(), ReadError> {
        let line = span.start.line();
        match event {
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(self.err(
                        line,
                        "a second YAML document: give each in a file of its own",
                    ));
                }
            }
            Event::Alias(_) => return Err(self.anchors(line)),
            Event::Scalar(v, _, anchor, _) => {
                self.no_anchor(anchor, span)?;
                self.value(Node::Scalar(v.into_owned()), line)?;
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                self.no_anchor(anchor, span)?;
                if self.open.len() >= MAX_DEPTH {
                    return Err(self.err(line, "nested too deeply"));
                }
                let kind = match event {
                    Event::SequenceStart(..) => OpenKind::List(Vec::new()),
                    _ => OpenKind::Map(Vec::new(), None),
                };
                self.open.push(Open {
                    span,
                    // A block collection's start event is empty: it
                    // starts at its first key or `-`.
                    flow: !span.is_empty(),
                    kind,
                    keys: HashSet::new(),
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some(o) = self.open.pop() {
                    let node = match o.kind {
                        OpenKind::List(items) => Node::List(items),
                        OpenKind::Map(entries, _) => Node::Map(entries),
                    };
                    self.value(node, o.span.start.line())?;
                }
            }
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
        }
        Ok(())
    }

    /// A complete value, starting on `line`: an item, a key, a key's value
    /// or the document.
    fn value(&mut self, node: Node, line: usize) -> Result<(), ReadError> {
        let file = self.file;
        let Some(top) = self.open.last_mut() else {
            self.root = Some(node);
            return Ok(());
        };
        match &mut top.kind {
            OpenKind::List(items) => items.push((line, node)),
            OpenKind::Map(_, key @ None) => {
                let Node::Scalar(k) = node else {
                    return Err(bad(
                        file,
                        line,
                        "a key that is a list or mapping: keys are single words (`key: value`)",
                    ));
                };
                if !top.keys.insert(k.clone()) {
                    return Err(bad(
                        file,
                        line,
                        format!("the key {k:?} appears twice in one mapping"),
                    ));
                }
                *key = Some((k, line));
            }
            OpenKind::Map(entries, key) => {
                if let Some((k, kline)) = key.take() {
                    entries.push((k, kline, node));
                }
            }
        }
        Ok(())
    }

    /// The parser's error, at the line it is about, with a hint.
    fn scan_error(&self, text: &str, e: &ScanError) -> ReadError {
        let info = e.info();
        let (line, col) = (e.marker().line(), e.marker().col());
        let at_end = text
            .chars()
            .skip(e.marker().index())
            .all(char::is_whitespace);
        let lines: Vec<&str> = text.lines().collect();
        let source = |l: usize| l.checked_sub(1).and_then(|k| lines.get(k).copied());
        // The last line with something on it before `line` (the parser
        // notices a missing `:` or `]` only at the next token).
        let content_before = |l: usize| {
            (1..l)
                .rev()
                .find(|&k| {
                    source(k).is_some_and(|s| !s.trim().is_empty() && !s.trim().starts_with('#'))
                })
                .unwrap_or(1)
        };
        if info.contains("recursion limit") {
            return self.err(line, "nested too deeply");
        }
        if info.contains("anchor") {
            return self.anchors(line);
        }
        if info.contains("quoted scalar") && info.contains("end of stream") {
            return self.err(
                line,
                format!("a quote that is never closed (the YAML parser: {info})"),
            );
        }
        if let (true, Some(o)) = (at_end, self.open.iter().rev().find(|o| o.flow)) {
            return self.err(
                o.span.start.line(),
                format!("a [ or {{ that is never closed (the YAML parser: {info})"),
            );
        }
        // `key: value` below a line that is not a key: YAML reads that
        // line as the start of a value that goes on here, and stops at `:`.
        if info.contains("mapping values are not allowed") {
            let before = content_before(line);
            let prev = source(before).unwrap_or("");
            let here = source(line).unwrap_or("");
            let indent = |s: &str| s.len() - s.trim_start_matches(' ').len();
            let t = prev.trim();
            if before < line
                && indent(prev) == indent(here)
                && !t.starts_with('-')
                && !t.ends_with(':')
                && !t.contains(": ")
            {
                return self.err(
                    before,
                    format!("expected `key: value` here, found {t:?} (the YAML parser: {info} at line {line})"),
                );
            }
        }
        if info.contains("simple key") {
            let l = if col == 0 || at_end {
                content_before(line)
            } else {
                line
            };
            let found = source(l).unwrap_or("").trim();
            return self.err(
                l,
                format!("expected `key: value` here, found {found:?} (the YAML parser: {info})"),
            );
        }
        let line = if at_end { content_before(line) } else { line };
        let here = source(line).unwrap_or("");
        let indent = here.len() - here.trim_start_matches(' ').len();
        if info.contains("tab") || here[indent..].starts_with('\t') {
            return self.err(
                line,
                format!(
                    "a tab in the indentation: YAML indents with spaces (the YAML parser: {info})"
                ),
            );
        }
        // Inside brackets indentation does not matter.
        let in_flow = self.open.iter().any(|o| o.flow);
        let blocks: Vec<usize> = self
            .open
            .iter()
            .filter(|o| !o.flow)
            .map(|o| o.span.start.col())
            .collect();
        if !at_end
            && !in_flow
            && !here.trim().is_empty()
            && !blocks.is_empty()
            && !blocks.contains(&indent)
        {
            let cols: Vec<String> = blocks.iter().map(usize::to_string).collect();
            return self.err(
                line,
                format!(
                    "indented deeper than the keys it belongs with, or not deep enough: its {indent} spaces match no key or `-` above it (those are indented {}); indent it exactly like its sibling keys (the YAML parser: {info})",
                    cols.join(", ")
                ),
            );
        }
        self.err(line, format!("not valid YAML: {info} (column {})", col + 1))
    }
}

/// Reads a YAML file (one document) into a [`Node`] tree.
pub fn parse(file: &str, text: &str) -> Result<Node, ReadError> {
    let mut b = Builder {
        file,
        open: Vec::new(),
        root: None,
        documents: 0,
    };
    for next in Events::new_from_str(text) {
        match next {
            Ok((event, span)) => b.event(event, span)?,
            Err(e) => return Err(b.scan_error(text, &e)),
        }
    }
    b.root.ok_or_else(|| bad(file, 1, "an empty YAML file"))
}

/// Whether `text` looks like netplan: a top-level `network:` key.
pub fn sniff(text: &str) -> bool {
    text.lines().any(|l| {
        l.strip_prefix("network:")
            .is_some_and(|r| r.is_empty() || r.starts_with([' ', '#', '{']))
    })
}

fn scalar<'a>(file: &str, line: usize, what: &str, n: &'a Node) -> Result<&'a str, ReadError> {
    match n {
        Node::Scalar(s) => Ok(s),
        _ => Err(bad(file, line, format!("{what} should be a single value"))),
    }
}

/// A mapping's entries; an empty value (`bond0:` alone) is an empty mapping.
fn entries<'a>(
    file: &str,
    line: usize,
    what: &str,
    n: &'a Node,
) -> Result<&'a [(String, usize, Node)], ReadError> {
    match n {
        Node::Map(m) => Ok(m),
        Node::Scalar(s) if s.is_empty() => Ok(&[]),
        _ => Err(bad(
            file,
            line,
            format!("{what} should be a mapping (`key: value` lines below it)"),
        )),
    }
}

/// netplan's bonds, with their members' `ethernets:` MTUs.
pub fn netplan(file: &str, text: &str) -> Result<Vec<Options>, ReadError> {
    let root = parse(file, text)?;
    let Some((nline, network)) = root.get("network") else {
        return Err(bad(
            file,
            1,
            "no top-level `network:` key: is this a netplan file?",
        ));
    };
    let network = Node::Map(entries(file, nline, "network", network)?.to_vec());
    let renderer = |n: &Node| -> Result<Option<String>, ReadError> {
        n.get("renderer")
            .map(|(l, v)| scalar(file, l, "renderer", v).map(str::to_string))
            .transpose()
    };
    let top_renderer = renderer(&network)?;
    /// An `ethernets:` entry: its id, its name (after `set-name:`), its
    /// MTU and line.
    struct Ethernet {
        id: String,
        name: String,
        mtu: Option<(String, usize)>,
    }
    let mut ethernets: Vec<Ethernet> = Vec::new();
    if let Some((l, e)) = network.get("ethernets") {
        for (id, line, v) in entries(file, l, "ethernets", e)? {
            let v = Node::Map(entries(file, *line, id, v)?.to_vec());
            let name = match v.get("set-name") {
                Some((l, n)) => scalar(file, l, "set-name", n)?.to_string(),
                None => id.clone(),
            };
            let mtu = match v.get("mtu") {
                Some((l, n)) => Some((scalar(file, l, "mtu", n)?.to_string(), l)),
                None => None,
            };
            ethernets.push(Ethernet {
                id: id.clone(),
                name,
                mtu,
            });
        }
    }
    let no_bonds = |line| {
        bad(
            file,
            line,
            "a netplan file without bonds (nothing under `network: bonds:`): lagkit check reads a host's bond; give the file that defines it",
        )
    };
    let Some((bline, bonds)) = network.get("bonds") else {
        return Err(no_bonds(nline));
    };
    let bonds = entries(file, bline, "bonds", bonds)?;
    if bonds.is_empty() {
        return Err(no_bonds(bline));
    }
    let mut out = Vec::new();
    for (name, line, v) in bonds {
        let mut b = Options {
            name: name.clone(),
            line: *line,
            ..Options::default()
        };
        let v = Node::Map(entries(file, *line, &format!("bond {name}"), v)?.to_vec());
        let r = renderer(&v)?.or(top_renderer.clone());
        // netplan's default renderer is networkd.
        b.systemd = r.as_deref().is_none_or(|r| r == "networkd");
        let Node::Map(keys) = &v else { continue };
        for (k, l, n) in keys {
            let l = *l;
            match k.as_str() {
                "interfaces" => {
                    let Node::List(items) = n else {
                        return Err(bad(file, l, format!("interfaces of bond {name} should be a list ([eth0, eth1] or - lines)")));
                    };
                    for (il, item) in items {
                        let id = scalar(file, *il, "an interface", item)?;
                        let real = ethernets.iter().find(|e| e.id == id);
                        b.members
                            .push(real.map_or(id.to_string(), |e| e.name.clone()));
                    }
                }
                "mtu" => b.set("mtu", scalar(file, l, "mtu", n)?, l),
                "macaddress" => b.set("mac_address", scalar(file, l, "macaddress", n)?, l),
                "parameters" => {
                    for (pk, pl, pv) in entries(file, l, "parameters", n)? {
                        let key = match pk.as_str() {
                            "mode" => "mode",
                            "lacp-rate" => "lacp_rate",
                            "transmit-hash-policy" => "xmit_hash_policy",
                            "min-links" => "min_links",
                            "fail-over-mac-policy" => "fail_over_mac",
                            _ => continue,
                        };
                        b.set(key, scalar(file, *pl, pk, pv)?, *pl);
                    }
                }
                _ => {}
            }
        }
        for e in &ethernets {
            if let (Some(m), true) = (&e.mtu, b.members.contains(&e.name)) {
                b.member_mtus.insert(e.name.clone(), m.clone());
            }
        }
        out.push(b);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{HostMode, MacSource};

    const BOND: &str = "# /etc/netplan/01-bond.yaml
network:
  version: 2
  renderer: networkd
  ethernets:
    eth0:
      mtu: 1500
    eth1: {}
  bonds:
    bond0:
      interfaces: [eth0, eth1]
      mtu: 9000
      parameters:
        mode: 802.3ad
        lacp-rate: fast
        transmit-hash-policy: layer3+4
        mii-monitor-interval: 100
        min-links: 1
      addresses:
        - 10.0.0.1/24
";

    fn hosts(text: &str) -> Vec<crate::facts::Host> {
        netplan("01-bond.yaml", text)
            .unwrap()
            .iter()
            .map(|o| o.host("01-bond.yaml").unwrap())
            .collect()
    }

    #[test]
    fn bond_with_member_mtus_and_lines() {
        assert!(sniff(BOND));
        let h = &hosts(BOND)[0];
        let fast = HostMode::Lacp {
            active: true,
            fast: true,
        };
        assert_eq!((h.bond.as_str(), h.mode), ("bond0", fast));
        assert_eq!(h.loc.line, Some(14), "the line of mode:");
        assert_eq!(h.hash.as_deref(), Some("layer3+4"));
        assert_eq!(h.min_links, 1);
        assert_eq!(
            h.mtu.as_ref().map(|m| (m.0, m.1.line)),
            Some((9000, Some(12)))
        );
        let names: Vec<&str> = h.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["eth0", "eth1"]);
        assert_eq!(
            h.members[0].mtu.as_ref().map(|m| (m.0, m.1.line)),
            Some((1500, Some(7)))
        );
        assert_eq!(h.members[1].mtu, None);
        // Rendered by networkd, no macaddress: systemd's persistent MAC.
        assert_eq!(
            h.mac.as_ref().map(|m| &m.0),
            Some(&MacSource::MachineId { default: true })
        );
    }

    #[test]
    fn other_yaml_shapes_read_alike() {
        let text = "network:\n  bonds:\n    \"bond1\":\n      interfaces:\n      - enp1s0 # first\n      - 'enp2s0'\n      parameters: {mode: balance-xor, transmit-hash-policy: \"layer2+3\"}\n      macaddress: 02:00:00:00:00:01\n  renderer: NetworkManager\n  ethernets:\n    e0:\n      match: {macaddress: \"52:54:00:00:00:01\"}\n      set-name: enp1s0\n      mtu: 9000\n";
        let h = &hosts(text)[0];
        assert_eq!(h.bond, "bond1");
        assert_eq!(h.mode, HostMode::Static);
        assert_eq!(h.hash.as_deref(), Some("layer2+3"));
        assert_eq!(h.members.len(), 2);
        assert_eq!(h.members[0].mtu.as_ref().map(|m| m.0), Some(9000));
        assert_eq!(h.mac.as_ref().map(|m| &m.0), Some(&MacSource::Pinned));
        let multi = "network:\n  bonds:\n    b:\n      interfaces: [a,\n        b]\n";
        assert_eq!(hosts(multi)[0].members.len(), 2);
    }

    #[test]
    fn no_bonds_or_bad_structure_is_an_error_with_a_line() {
        let cases: &[(&str, &str, &str)] = &[
            ("network:\n  version: 2\n  ethernets:\n    eth0: {}\n", "n.yaml:1:", "without bonds"),
            ("network:\n  bonds: {}\n", "n.yaml:2:", "without bonds"),
            ("network:\n  bonds:\n    bond0:\n      interfaces: eth0\n", "n.yaml:4:", "should be a list"),
            ("network:\n  bonds:\n    bond0:\n      parameters: [a]\n", "n.yaml:4:", "should be a mapping"),
            ("network:\n  bonds:\n\tbond0: {}\n", "n.yaml:3:", "tab"),
            ("network:\n  bonds:\n    bond0:\n      interfaces: [eth0\n", "n.yaml:4:", "never closed"),
            ("network:\n  bonds:\n    bond0: &x {}\n", "n.yaml:3:", "anchors"),
            ("network:\n  bonds:\n    bond0:\n      mtu: 1\n      mtu: 2\n", "n.yaml:5:", "twice"),
            ("network:\n    bonds:\n  x: 1\n", "n.yaml:3:", "indented deeper"),
            ("network:\n  bonds:\n    bond0:\n      interfaces: [eth0]\n      parameters:\n        mode: nope\n", "n.yaml:6:", "nope"),
            ("network:\n  bonds:\n    bond0:\n      mtu: 1\n      just a line\n", "n.yaml:5:", "key: value"),
            ("network:\n  bonds:\n    bond0:\n      just a line\n", "n.yaml:3:", "should be a mapping"),
            ("network: 3\n", "n.yaml:1:", "should be a mapping"),
        ];
        for (text, at, what) in cases {
            let e = netplan("n.yaml", text)
                .and_then(|b| {
                    b.iter()
                        .map(|o| o.host("n.yaml"))
                        .collect::<Result<Vec<_>, _>>()
                })
                .map(|_| ())
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(at) && e.contains(what), "{text:?}: {e}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_not_a_stack_overflow() {
        let text = format!("network:\n  bonds: {}\n", "[".repeat(10_000));
        assert!(netplan("n.yaml", &text).is_err());
        let text = format!(
            "network:\n  bonds: {}{}\n",
            "[".repeat(500),
            "]".repeat(500)
        );
        let e = netplan("n.yaml", &text).unwrap_err().to_string();
        assert!(e.contains("nested too deeply"), "{e}");
        let deep: String = (0..500)
            .map(|d| format!("{}k{d}:\n", " ".repeat(d)))
            .collect();
        assert!(parse("n.yaml", &deep).is_err());
    }

    #[test]
    fn yaml_the_old_reader_refused_is_read() {
        // An explicit document start and end, a block scalar, a tag, a
        // multi-line flow mapping, quoted keys and `#` inside quotes.
        let text = "%YAML 1.2\n---\nnetwork:\n  bonds:\n    'bond0': {\n      interfaces: [\"eth#0\", eth1],\n      parameters: {mode: !!str active-backup}}\n  ethernets:\n    eth1:\n      mtu: 9000\n  comment: |\n    free text\n...\n";
        let b = &netplan("n.yaml", text).unwrap()[0];
        assert_eq!((b.name.as_str(), b.line), ("bond0", 5));
        assert_eq!(b.members, ["eth#0", "eth1"]);
        assert_eq!(b.member_mtus["eth1"], ("9000".to_string(), 10));
        let h = b.host("n.yaml").unwrap();
        assert_eq!((h.mode, h.loc.line), (HostMode::ActiveBackup, Some(7)));
    }

    /// The parser notices some mistakes a token later; the error names the
    /// line the mistake is on.
    #[test]
    fn parser_errors_name_the_line_of_the_mistake() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "network:\n  bonds:\n    b:\n      bare\n      mtu: 1\n",
                "n.yaml:4:",
                "found \"bare\"",
            ),
            (
                "network:\n  bonds:\n    b:\n      mtu: 1\n      bare\n\n# end\n      x: 1\n",
                "n.yaml:5:",
                "found \"bare\"",
            ),
            (
                "network:\n  bonds:\n    b:\n      mtu: 1\n       x: 2\n",
                "n.yaml:5:",
                "its 7 spaces",
            ),
            (
                "network:\n  bonds:\n    b: {mtu: [1,\n      2}\n",
                "n.yaml:4:",
                "not valid YAML",
            ),
            (
                "network:\n  bonds:\n    b: {interfaces: [a, b],\n      mtu: 9000\n\n",
                "n.yaml:3:",
                "never closed",
            ),
            (
                "network:\n  bonds:\n    b:\n      mtu: \"9000\n",
                "n.yaml:4:",
                "a quote that is never closed",
            ),
            ("network:\n  bonds:\n    b: *x\n", "n.yaml:3:", "aliases"),
            (
                "network:\n  bonds:\n    b: {}\n---\nnetwork: {}\n",
                "n.yaml:4:",
                "second YAML document",
            ),
            (
                "network:\n  bonds:\n    [b]: {}\n",
                "n.yaml:3:",
                "a key that is a list",
            ),
            (
                "network:\n  bonds:\n    b: {}\n  bonds: {}\n",
                "n.yaml:4:",
                "\"bonds\" appears twice",
            ),
            ("# nothing but a comment\n", "n.yaml:1:", "empty YAML file"),
            ("", "n.yaml:1:", "empty YAML file"),
        ];
        for (text, at, what) in cases {
            let e = netplan("n.yaml", text).unwrap_err().to_string();
            assert!(e.starts_with(at) && e.contains(what), "{text:?}: {e}");
        }
    }

    /// Reading is linear in the keys of a mapping: 100,000 ethernets (3
    /// MB) read in under a second unoptimised, where a search of the keys
    /// so far for a repeated one took about 30 s (40,000 took 4 s); a
    /// repeated key is still refused.
    #[test]
    fn many_interfaces_read_in_linear_time() {
        let mut text = String::from("network:\n  version: 2\n  ethernets:\n");
        for i in 0..100_000 {
            text.push_str(&format!("    eth{i}:\n      mtu: 9000\n"));
        }
        text.push_str("  bonds:\n    bond0:\n      interfaces: [eth0, eth1]\n");
        let t = std::time::Instant::now();
        let b = netplan("big.yaml", &text).unwrap();
        assert_eq!(b[0].members, ["eth0", "eth1"]);
        assert!(
            t.elapsed() < std::time::Duration::from_secs(15),
            "100,000 interfaces took {:?}: is reading quadratic again?",
            t.elapsed()
        );
        text.push_str("  ethernets:\n    eth0: {}\n");
        let e = netplan("big.yaml", &text).unwrap_err();
        assert!(e.to_string().contains("\"ethernets\" appears twice"), "{e}");
    }

    #[test]
    fn the_example_reads_with_its_lines() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/check/netplan-bond.yaml"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let b = &netplan("netplan-bond.yaml", &text).unwrap()[0];
        assert_eq!((b.name.as_str(), b.line), ("bond0", 12));
        assert_eq!(b.member_mtus["eth2"], ("1500".to_string(), 8));
        assert_eq!(b.member_mtus["eth4"], ("9000".to_string(), 10));
    }

    /// Every input the `check_input` fuzz target has kept (fuzz/corpus,
    /// replayed here because cargo-fuzz needs a nightly toolchain): read
    /// as netplan, and as any dialect the way the fuzz target does, none
    /// panics.
    #[test]
    fn the_fuzz_corpus_reads_without_a_panic() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus/check_input");
        let files: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .map(|f| f.unwrap().path())
            .collect();
        assert!(files.len() > 1000, "{dir} holds only {} files", files.len());
        let mut yaml = 0;
        for f in &files {
            let data = std::fs::read(f).unwrap();
            let text = String::from_utf8_lossy(&data);
            if netplan("c.yaml", &text).is_ok() {
                yaml += 1;
            }
            crate::fuzz_one(&data);
        }
        // The corpus holds netplan files that read, not only broken ones.
        assert!(yaml >= 5, "only {yaml} corpus files read as netplan");
    }
}
