//! netplan (`/etc/netplan/*.yaml`): the bonds under `network: bonds:` and
//! the `ethernets:` they use, read into the same [`Options`] as the other
//! dialects, each option with the line of its key.
//!
//! No YAML crate is available to this build (none is in `Cargo.lock`, and
//! the machine builds offline from a registry cache that holds neither
//! `serde_yaml` nor `serde_yml`/`yaml-rust2`), so [`parse`] is a small
//! reader of the YAML netplan files are written in: block mappings and
//! sequences by indentation, flow `[a, b]` and `{k: v}`, quoted and plain
//! scalars, comments. Anchors, aliases, tags, block scalars (`|`, `>`) and
//! a second document are refused with their line rather than misread;
//! netplan's own files do not use them. Replace it with a YAML crate when
//! one is vendored: the mapping onto [`Options`] below stays.

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

struct Line {
    indent: usize,
    text: String,
    no: usize,
}

struct Parser<'a> {
    file: &'a str,
    lines: Vec<Line>,
    i: usize,
}

fn bad(file: &str, line: usize, why: impl Into<String>) -> ReadError {
    ReadError::Bad {
        file: file.into(),
        line,
        why: why.into(),
    }
}

/// `text` without its comment (a `#` at the start or after a blank,
/// outside quotes).
fn strip_comment(text: &str) -> &str {
    let (mut single, mut double, mut prev) = (false, false, ' ');
    for (k, c) in text.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single && prev != '\\' => double = !double,
            '#' if !single && !double && prev.is_whitespace() => return &text[..k],
            _ => {}
        }
        prev = c;
    }
    text
}

fn is_item(t: &str) -> bool {
    t == "-" || t.starts_with("- ")
}

/// A quoted scalar at the start of `t`: (value, the rest after it).
fn quoted(t: &str) -> Option<(String, &str)> {
    let q = t.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let mut out = String::new();
    let mut it = t.char_indices().skip(1).peekable();
    while let Some((k, c)) = it.next() {
        match c {
            '\\' if q == '"' => match it.next() {
                Some((_, 'n')) => out.push('\n'),
                Some((_, 't')) => out.push('\t'),
                Some((_, e)) => out.push(e),
                None => return None,
            },
            '\'' if q == '\'' && it.peek().map(|p| p.1) == Some('\'') => {
                it.next();
                out.push('\'');
            }
            c if c == q => return Some((out, &t[k + 1..])),
            c => out.push(c),
        }
    }
    None
}

/// `key: rest` (or `key:`) of a mapping line; `None` when it is no key.
fn split_key(t: &str) -> Option<(String, &str)> {
    if t.starts_with('[') || t.starts_with('{') || is_item(t) {
        return None;
    }
    if let Some((k, rest)) = quoted(t) {
        let rest = rest.strip_prefix(':')?;
        return (rest.is_empty() || rest.starts_with(' ')).then(|| (k, rest.trim()));
    }
    if let Some(p) = t.find(": ") {
        return Some((t[..p].trim_end().to_string(), t[p + 2..].trim()));
    }
    t.strip_suffix(':').map(|k| (k.trim_end().to_string(), ""))
}

/// How many more brackets `t` opens than it closes, outside quotes (a
/// quoted value never goes on over a line here).
fn open_brackets(t: &str) -> i64 {
    let (mut depth, mut single, mut double, mut prev) = (0i64, false, false, ' ');
    for c in t.chars() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single && prev != '\\' => double = !double,
            '[' | '{' if !single && !double => depth += 1,
            ']' | '}' if !single && !double => depth -= 1,
            _ => {}
        }
        prev = c;
    }
    depth
}

impl Parser<'_> {
    fn err(&self, line: usize, why: impl Into<String>) -> ReadError {
        bad(self.file, line, why)
    }

    fn deeper(&self, than: usize) -> bool {
        self.lines.get(self.i).is_some_and(|l| l.indent > than)
    }

    /// The block that starts at the current line, indented `indent`.
    fn block(&mut self, indent: usize, depth: usize) -> Result<Node, ReadError> {
        let (text, no) = (self.lines[self.i].text.clone(), self.lines[self.i].no);
        if depth > MAX_DEPTH {
            return Err(self.err(no, "nested too deeply"));
        }
        if is_item(&text) {
            return self.list(indent, depth);
        }
        if split_key(&text).is_some() {
            return self.map(indent, depth);
        }
        self.i += 1;
        let v = self.inline(&text, no, depth)?;
        if self.deeper(indent) {
            let l = &self.lines[self.i];
            return Err(self.err(l.no, "a value continues on a more indented line: netplan files keep a value on its key's line (or use [a, b])"));
        }
        Ok(v)
    }

    fn list(&mut self, indent: usize, depth: usize) -> Result<Node, ReadError> {
        let mut items = Vec::new();
        while let Some(l) = self.lines.get(self.i) {
            if l.indent != indent || !is_item(&l.text) {
                break;
            }
            let no = l.no;
            let rest = l.text[1..].trim_start().to_string();
            if rest.is_empty() {
                self.i += 1;
                items.push((no, self.nested(indent, depth, false)?));
            } else {
                // `- key: value` or `- value`: the item's content, as if
                // on its own line where it starts.
                let at = indent + (l.text.len() - rest.len());
                self.lines[self.i].indent = at;
                self.lines[self.i].text = rest;
                items.push((no, self.block(at, depth + 1)?));
            }
        }
        self.no_deeper(indent)?;
        Ok(Node::List(items))
    }

    fn map(&mut self, indent: usize, depth: usize) -> Result<Node, ReadError> {
        let mut entries: Vec<(String, usize, Node)> = Vec::new();
        while let Some(l) = self.lines.get(self.i) {
            if l.indent != indent {
                break;
            }
            let no = l.no;
            let Some((key, rest)) = split_key(&l.text) else {
                return Err(self.err(
                    no,
                    format!("expected `key: value` here, found {:?}", l.text),
                ));
            };
            if entries.iter().any(|e| e.0 == key) {
                return Err(self.err(no, format!("the key {key:?} appears twice in one mapping")));
            }
            let rest = rest.to_string();
            self.i += 1;
            let value = if rest.is_empty() {
                self.nested(indent, depth, true)?
            } else {
                self.inline(&rest, no, depth)?
            };
            entries.push((key, no, value));
        }
        self.no_deeper(indent)?;
        Ok(Node::Map(entries))
    }

    /// After a block: the next line may not be indented deeper than it.
    fn no_deeper(&self, indent: usize) -> Result<(), ReadError> {
        match self.lines.get(self.i) {
            Some(l) if l.indent > indent => Err(self.err(
                l.no,
                "indented deeper than the lines before it, under no key",
            )),
            _ => Ok(()),
        }
    }

    /// The value of `key:` or `-` with nothing after it: the more indented
    /// block below, a list at the key's own indentation (maps only), or
    /// nothing.
    fn nested(&mut self, indent: usize, depth: usize, map: bool) -> Result<Node, ReadError> {
        match self.lines.get(self.i) {
            Some(l) if l.indent > indent => self.block(l.indent, depth + 1),
            Some(l) if map && l.indent == indent && is_item(&l.text) => {
                self.list(indent, depth + 1)
            }
            _ => Ok(Node::Scalar(String::new())),
        }
    }

    /// A value written on its key's line (a flow collection may go on over
    /// the next lines).
    fn inline(&mut self, rest: &str, no: usize, depth: usize) -> Result<Node, ReadError> {
        match rest.chars().next() {
            Some('&' | '*' | '!') => return Err(self.err(
                no,
                "YAML anchors, aliases and tags are not read here (netplan files do not need them)",
            )),
            Some('|' | '>') => {
                return Err(self.err(no, "YAML block scalars (| and >) are not read here"))
            }
            Some('[' | '{') => {}
            Some('"' | '\'') => {
                return match quoted(rest) {
                    Some((v, after)) if after.trim().is_empty() => Ok(Node::Scalar(v)),
                    _ => Err(self.err(no, "a quoted value that does not end on its line")),
                }
            }
            _ => return Ok(Node::Scalar(rest.to_string())),
        }
        let mut text = rest.to_string();
        let mut open = open_brackets(rest);
        while open > 0 {
            let Some(l) = self.lines.get(self.i) else {
                return Err(self.err(no, "a [ or { that is never closed"));
            };
            open += open_brackets(&l.text);
            text.push(' ');
            text.push_str(&l.text);
            self.i += 1;
        }
        let c: Vec<char> = text.chars().collect();
        let mut pos = 0;
        let v = self.flow(&c, &mut pos, no, depth)?;
        if c[pos..].iter().any(|c| !c.is_whitespace()) {
            return Err(self.err(no, "text after the closing bracket"));
        }
        Ok(v)
    }

    fn flow(
        &self,
        c: &[char],
        pos: &mut usize,
        no: usize,
        depth: usize,
    ) -> Result<Node, ReadError> {
        if depth > MAX_DEPTH {
            return Err(self.err(no, "nested too deeply"));
        }
        let skip = |pos: &mut usize| {
            while c.get(*pos).is_some_and(|c| c.is_whitespace()) {
                *pos += 1;
            }
        };
        skip(pos);
        let open = c.get(*pos).copied();
        let close = match open {
            Some('[') => ']',
            Some('{') => '}',
            _ => return self.flow_scalar(c, pos, no, ",]}"),
        };
        *pos += 1;
        let (mut items, mut entries) = (Vec::new(), Vec::new());
        loop {
            skip(pos);
            match c.get(*pos) {
                Some(x) if *x == close => {
                    *pos += 1;
                    break;
                }
                None => return Err(self.err(no, "a [ or { that is never closed")),
                _ => {}
            }
            if close == ']' {
                items.push((no, self.flow(c, pos, no, depth + 1)?));
            } else {
                let Node::Scalar(key) = self.flow_scalar(c, pos, no, ":,}")? else {
                    return Err(self.err(no, "a key that is not a scalar"));
                };
                let value = if c.get(*pos) == Some(&':') {
                    *pos += 1;
                    self.flow(c, pos, no, depth + 1)?
                } else {
                    Node::Scalar(String::new())
                };
                entries.push((key, no, value));
            }
            skip(pos);
            match c.get(*pos) {
                Some(',') => *pos += 1,
                Some(x) if *x == close => {}
                _ => {
                    return Err(self.err(no, format!("expected , or {close} in a flow collection")))
                }
            }
        }
        Ok(if close == ']' {
            Node::List(items)
        } else {
            Node::Map(entries)
        })
    }

    /// A scalar inside a flow collection, up to one of `stops`.
    fn flow_scalar(
        &self,
        c: &[char],
        pos: &mut usize,
        no: usize,
        stops: &str,
    ) -> Result<Node, ReadError> {
        if matches!(c.get(*pos), Some('"' | '\'')) {
            let rest: String = c[*pos..].iter().collect();
            let Some((v, after)) = quoted(&rest) else {
                return Err(self.err(no, "a quoted value that does not end"));
            };
            *pos = c.len() - after.chars().count();
            while c.get(*pos).is_some_and(|c| c.is_whitespace()) {
                *pos += 1;
            }
            return Ok(Node::Scalar(v));
        }
        let start = *pos;
        while c.get(*pos).is_some_and(|x| !stops.contains(*x)) {
            *pos += 1;
        }
        let v: String = c[start..*pos].iter().collect();
        match v.trim() {
            "" => Err(self.err(no, "an empty item in a flow collection")),
            t if t.starts_with(['&', '*', '!', '[', '{']) => {
                Err(self.err(no, "YAML anchors, aliases and tags are not read here"))
            }
            t => Ok(Node::Scalar(t.to_string())),
        }
    }
}

/// Reads the YAML subset netplan files are written in.
pub fn parse(file: &str, text: &str) -> Result<Node, ReadError> {
    let mut lines = Vec::new();
    for (k, raw) in text.lines().enumerate() {
        let no = k + 1;
        let body = strip_comment(raw).trim_end();
        let indent = body.len() - body.trim_start_matches(' ').len();
        if body[indent..].starts_with('\t') {
            return Err(bad(
                file,
                no,
                "a tab in the indentation: YAML indents with spaces",
            ));
        }
        let t = body.trim();
        match t {
            "" => continue,
            "---" if lines.is_empty() => continue,
            "---" => {
                return Err(bad(
                    file,
                    no,
                    "a second YAML document: give each in a file of its own",
                ))
            }
            "..." => break,
            _ if t.starts_with('%') => {
                return Err(bad(file, no, "YAML directives are not read here"))
            }
            _ => {}
        }
        lines.push(Line {
            indent,
            text: t.to_string(),
            no,
        });
    }
    if lines.is_empty() {
        return Err(bad(file, 1, "an empty YAML file"));
    }
    let mut p = Parser { file, lines, i: 0 };
    let indent = p.lines[0].indent;
    let root = p.block(indent, 0)?;
    if let Some(l) = p.lines.get(p.i) {
        return Err(p.err(l.no, "less indented than the first line of the file"));
    }
    Ok(root)
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
}
