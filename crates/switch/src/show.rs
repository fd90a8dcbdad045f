//! Cisco's `show` commands as text: `show etherchannel summary`, `show
//! etherchannel load-balance`, `show mac address-table`, `show interfaces
//! counters`, `show interfaces status` and `test etherchannel
//! load-balance`; [`expand`], which reads their words as a Catalyst does
//! (`sh eth sum`); and [`Filter`], IOS's `| include|exclude|begin RE`.
//!
//! Formatted by hand, not with `comfy-table` or `tabled`: the output must
//! be IOS's own, byte for byte where an engineer compares it with a
//! Catalyst (the flag legend above the table, `Po1(SU)`, members on one
//! line separated by blanks, fixed column widths even when a cell is
//! longer, no borders), which a generic table crate does not produce.

use crate::bridge::Bridge;
use crate::config::ChannelSpec;
use crate::{ChannelId, Logical, PortId};
use lagkit_hash::FlowKey;
use std::fmt::{self, Write};

/// The `show` commands lagkit's switch answers, word by word: `<N>` is a
/// number, `a|b` a word with a second spelling that is also taken.
pub const SHOW_COMMANDS: &[&[&str]] = &[
    &["etherchannel", "summary"],
    &["etherchannel", "load-balance"],
    &["etherchannel", "load-balancing"],
    &["etherchannel", "detail"],
    &["etherchannel", "<N>", "detail"],
    &["etherchannel", "<N>", "port-channel"],
    &["etherchannel", "protocol"],
    &["mac", "address-table"],
    &["mac-address-table"],
    &["interfaces", "counters"],
    &["interfaces", "status"],
    &["lacp", "neighbor|neighbors"],
    &["lacp", "neighbor|neighbors", "detail"],
    &["lacp", "sys-id"],
    &["lacp", "counters"],
    &["lacp", "internal"],
    &["pagp", "neighbor|neighbors"],
    &["pagp", "counters"],
    &["pagp", "internal"],
    &["running-config"],
    &["storm-control"],
    &["platform", "forwarding"],
];

/// The `test` commands: `<rest>` takes the remaining words as written.
pub const TEST_COMMANDS: &[&[&str]] = &[&["etherchannel", "load-balance", "interface", "<rest>"]];

/// Why words do not make one command (IOS's `%` messages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expand {
    /// `% Ambiguous command`: the word starts several commands' words.
    Ambiguous {
        /// The words so far, expanded.
        before: Vec<String>,
        /// The word.
        word: String,
        /// What it could be.
        candidates: Vec<String>,
    },
    /// `% Invalid input`: the word starts none.
    Invalid {
        /// The words so far, expanded.
        before: Vec<String>,
        /// The word.
        word: String,
        /// What may stand there.
        expected: Vec<String>,
    },
    /// `% Incomplete command`: more words are needed.
    Incomplete {
        /// The words, expanded.
        before: Vec<String>,
        /// What may come next.
        expected: Vec<String>,
    },
}

impl fmt::Display for Expand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |before: &[String], word: &str| {
            let mut v = before.to_vec();
            v.push(word.to_string());
            v.join(" ")
        };
        match self {
            Expand::Ambiguous {
                before,
                word,
                candidates,
            } => write!(
                f,
                "% Ambiguous command: \"{}\" could be {}",
                at(before, word),
                candidates.join(", ")
            ),
            Expand::Invalid {
                before,
                word,
                expected,
            } => write!(
                f,
                "% Invalid input at \"{word}\" in \"{}\": expected {}",
                at(before, word),
                expected.join(", ")
            ),
            Expand::Incomplete { before, expected } => write!(
                f,
                "% Incomplete command: \"{}\" goes on with {}",
                before.join(" "),
                expected.join(", ")
            ),
        }
    }
}

/// Expands abbreviated words as a Catalyst does: each word may be any
/// prefix of one command word at its place among `commands`, unique
/// there (a word written in full wins over longer ones it starts: `mac`
/// is `mac`, not `mac-address-table`). Words are compared in lower case;
/// the result has each word in full (numbers and `<rest>` as written).
pub fn expand(words: &[&str], commands: &[&[&str]]) -> Result<Vec<String>, Expand> {
    let mut alive: Vec<&[&str]> = commands.to_vec();
    let mut out: Vec<String> = Vec::new();
    for (i, raw) in words.iter().enumerate() {
        let word = raw.to_ascii_lowercase();
        if alive.iter().any(|c| c.get(i) == Some(&"<rest>")) {
            out.extend(words[i..].iter().map(|w| w.to_string()));
            return Ok(out);
        }
        // The literal tokens that may stand here, each with its spellings.
        let mut tokens: Vec<&str> = Vec::new();
        for c in &alive {
            if let Some(t) = c.get(i) {
                if !tokens.contains(t) {
                    tokens.push(t);
                }
            }
        }
        let numeric = word.chars().all(|c| c.is_ascii_digit()) && !word.is_empty();
        let spellings = |t: &str| t.split('|').map(str::to_string).collect::<Vec<_>>();
        let exact: Vec<&str> = tokens
            .iter()
            .copied()
            .filter(|t| spellings(t).contains(&word) || (*t == "<N>" && numeric))
            .collect();
        let chosen: Vec<&str> = if !exact.is_empty() {
            exact
        } else {
            tokens
                .iter()
                .copied()
                .filter(|t| *t != "<N>" && spellings(t).iter().any(|s| s.starts_with(&word)))
                .collect()
        };
        let name = |t: &str| -> String {
            if t == "<N>" {
                "a number".into()
            } else {
                t.split('|').next().unwrap_or(t).to_string()
            }
        };
        match chosen.as_slice() {
            [t] => {
                out.push(if *t == "<N>" { word.clone() } else { name(t) });
                alive.retain(|c| c.get(i) == Some(t));
            }
            [] => {
                return Err(Expand::Invalid {
                    before: out,
                    word: raw.to_string(),
                    expected: if tokens.is_empty() {
                        vec!["nothing more".into()]
                    } else {
                        tokens.iter().map(|t| name(t)).collect()
                    },
                })
            }
            many => {
                return Err(Expand::Ambiguous {
                    before: out,
                    word: raw.to_string(),
                    candidates: many.iter().map(|t| name(t)).collect(),
                })
            }
        }
    }
    if alive.iter().any(|c| c.len() == out.len()) {
        return Ok(out);
    }
    let mut expected: Vec<String> = Vec::new();
    for c in &alive {
        if let Some(t) = c.get(out.len()) {
            let n = if *t == "<N>" {
                "a number".to_string()
            } else if *t == "<rest>" {
                "arguments".to_string()
            } else {
                t.split('|').next().unwrap_or(t).to_string()
            };
            if !expected.contains(&n) {
                expected.push(n);
            }
        }
    }
    Err(Expand::Incomplete {
        before: out,
        expected,
    })
}

/// IOS's output filters: `| include RE`, `| exclude RE`, `| begin RE`.
#[derive(Clone, Debug)]
pub struct Filter {
    kind: FilterKind,
    re: regex::Regex,
}

/// What to write after IOS's pipe.
const FILTER_USAGE: &str =
    "after |, write include, exclude or begin and a regular expression (e.g. | include Po1)";

/// Why the words after IOS's pipe make no filter ([`Filter::split`]), in
/// IOS's `%` words.
#[derive(Clone, Debug, thiserror::Error)]
pub enum FilterError {
    /// The word after the pipe is not include, exclude or begin.
    #[error("% Invalid filter \"{word}\": {FILTER_USAGE}")]
    UnknownKind {
        /// The word.
        word: String,
    },
    /// No expression follows the filter's word.
    #[error("% Incomplete command: {FILTER_USAGE}")]
    NoExpression,
    /// The expression is not a regular expression.
    #[error("% Invalid regular expression \"{expr}\": {source}")]
    BadExpression {
        /// The expression.
        expr: String,
        /// What the regex crate said.
        source: regex::Error,
    },
}

/// Which lines a [`Filter`] keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterKind {
    /// Lines that match.
    Include,
    /// Lines that do not match.
    Exclude,
    /// Every line from the first that matches.
    Begin,
}

impl Filter {
    /// Splits `words` at IOS's pipe: the command's words before it and the
    /// filter after it. The pipe is a word of its own (`| include Po1`,
    /// as a shell passes `"|" include Po1`) or stands before the filter's
    /// word (`|include Po1`, `"| include Po1"`); the filter's word may be
    /// abbreviated (`| i Po1`); the expression is the rest, blanks kept.
    pub fn split<S: AsRef<str>>(words: &[S]) -> Result<(Vec<String>, Option<Filter>), FilterError> {
        let Some(at) = words.iter().position(|w| w.as_ref().starts_with('|')) else {
            return Ok((words.iter().map(|w| w.as_ref().to_string()).collect(), None));
        };
        let before = words[..at].iter().map(|w| w.as_ref().to_string()).collect();
        let rest: Vec<&str> = words[at..].iter().map(|w| w.as_ref()).collect();
        let rest = rest.join(" ");
        let rest = rest.trim_start_matches('|').trim_start();
        let (kind, expr) = rest
            .split_once(char::is_whitespace)
            .map_or((rest, ""), |(k, e)| (k, e.trim()));
        let k = kind.to_ascii_lowercase();
        let kind = if !k.is_empty() && "include".starts_with(&k) {
            FilterKind::Include
        } else if !k.is_empty() && "exclude".starts_with(&k) {
            FilterKind::Exclude
        } else if !k.is_empty() && "begin".starts_with(&k) {
            FilterKind::Begin
        } else {
            return Err(FilterError::UnknownKind { word: kind.into() });
        };
        if expr.is_empty() {
            return Err(FilterError::NoExpression);
        }
        let re = regex::Regex::new(expr).map_err(|source| FilterError::BadExpression {
            expr: expr.into(),
            source,
        })?;
        Ok((before, Some(Filter { kind, re })))
    }

    /// What it keeps of `text`.
    pub fn apply(&self, text: &str) -> String {
        let mut out = String::new();
        let mut begun = false;
        for line in text.lines() {
            let hit = self.re.is_match(line);
            let keep = match self.kind {
                FilterKind::Include => hit,
                FilterKind::Exclude => !hit,
                FilterKind::Begin => {
                    begun |= hit;
                    begun
                }
            };
            if keep {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }
}

pub use lagkit_api::switch::MemberFlag;

/// `GigabitEthernet8/4` as IOS abbreviates it in tables: `Gi8/4`.
pub fn short_name(name: &str) -> String {
    let split = name
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(name.len());
    let (kind, num) = name.split_at(split);
    let short = match kind {
        "GigabitEthernet" => "Gi",
        "TenGigabitEthernet" => "Te",
        "FastEthernet" => "Fa",
        "Ethernet" => "Et",
        "Port-channel" => "Po",
        "TwentyFiveGigE" => "Twe",
        "FortyGigabitEthernet" => "Fo",
        "HundredGigE" => "Hu",
        other => other,
    };
    format!("{short}{num}")
}

fn port_name(b: &Bridge, p: PortId) -> String {
    b.port(p)
        .map_or(format!("port{}", p.0), |c| short_name(&c.name))
}

/// `show etherchannel summary`: each channel with its protocol and its
/// members' flags (`flags[i]` for `spec.members[i]`).
pub fn etherchannel_summary(b: &Bridge, channels: &[(ChannelSpec, Vec<MemberFlag>)]) -> String {
    let mut s = String::from(
        "Flags:  D - down        P - bundled in port-channel\n        I - stand-alone s - suspended\n        H - Hot-standby (LACP only)\n        S - Layer2      U - in use      w - waiting to be aggregated\n\n",
    );
    let in_use = channels
        .iter()
        .filter(|(_, f)| f.contains(&MemberFlag::Bundled))
        .count();
    let _ = writeln!(s, "Number of channel-groups in use: {}", channels.len());
    let _ = writeln!(s, "Number of aggregators:           {in_use}\n");
    s.push_str("Group  Port-channel  Protocol    Ports\n");
    s.push_str(
        "------+-------------+-----------+-----------------------------------------------\n",
    );
    for (spec, flags) in channels {
        let used = if flags.contains(&MemberFlag::Bundled) {
            "SU"
        } else {
            "SD"
        };
        let protocol = match spec.mode.protocol() {
            "lacp" => "LACP",
            "pagp" => "PAgP",
            _ => "-",
        };
        let members: Vec<String> = spec
            .members
            .iter()
            .zip(flags)
            .map(|((p, _), f)| format!("{}({})", port_name(b, *p), f.letter()))
            .collect();
        // IOS goes on below the Ports column when the list is long: four
        // on the first line, then two a line (what both Genie's and
        // ntc-templates' readers take).
        let first = members.len().min(4);
        let _ = writeln!(
            s,
            "{:<6} {:<13} {:<11} {}",
            spec.id.0,
            format!("Po{}({used})", spec.id.0),
            protocol,
            members[..first].join(" ")
        );
        for more in members[first..].chunks(2) {
            let _ = writeln!(s, "{:<33}{}", "", more.join(" "));
        }
    }
    s
}

/// `show etherchannel load-balance`.
pub fn etherchannel_load_balance(b: &Bridge, method: &str, adaptive: bool) -> String {
    let mut s = String::from("EtherChannel Load-Balancing Configuration:\n");
    let _ = writeln!(s, "        {method}");
    let _ = writeln!(
        s,
        "        hash-distribution {}",
        if adaptive { "adaptive" } else { "fixed" }
    );
    let _ = writeln!(
        s,
        "\nEtherChannel Load-Balancing Addresses Used Per-Protocol:"
    );
    let _ = writeln!(s, "  {}", b.policy());
    s
}

/// `show mac address-table` at `now`.
pub fn mac_address_table(b: &Bridge, now: u64) -> String {
    let mut s = String::from(
        "          Mac Address Table\n-------------------------------------------\n\nVlan    Mac Address       Type        Ports\n----    -----------       --------    -----\n",
    );
    let rows = b.fdb().rows(now);
    for r in &rows {
        let at = match r.at {
            Logical::Port(p) => port_name(b, p),
            Logical::Channel(c) => format!("Po{}", c.0),
        };
        let _ = writeln!(
            s,
            "{:>4}    {}    DYNAMIC     {at}",
            r.vlan,
            lagkit_wire::MacAddr(r.mac).dotted()
        );
    }
    let _ = writeln!(s, "Total Mac Addresses for this criterion: {}", rows.len());
    s
}

/// `show interfaces counters`: IOS's two tables, frames in and out by
/// unicast, multicast and broadcast destination (out: the forwarded ones
/// and the control plane's own), each port and then each port-channel of
/// `channels` (its members' added up).
pub fn interfaces_counters(b: &Bridge, channels: &[ChannelId]) -> String {
    let mut rows: Vec<(String, crate::bridge::PortCounters)> = b
        .ports()
        .filter_map(|(p, _)| Some((port_name(b, p), b.counters(p)?.clone())))
        .collect();
    rows.extend(
        channels
            .iter()
            .map(|c| (format!("Po{}", c.0), b.channel_counters(*c))),
    );
    let mut s = format!(
        "\n{:<14} {:>12} {:>14} {:>14} {:>14}\n",
        "Port", "InOctets", "InUcastPkts", "InMcastPkts", "InBcastPkts"
    );
    for (name, c) in &rows {
        let _ = writeln!(
            s,
            "{:<14} {:>12} {:>14} {:>14} {:>14}",
            name, c.rx_bytes, c.rx_cast.ucast, c.rx_cast.mcast, c.rx_cast.bcast
        );
    }
    let _ = writeln!(
        s,
        "\n{:<14} {:>12} {:>14} {:>14} {:>14}",
        "Port", "OutOctets", "OutUcastPkts", "OutMcastPkts", "OutBcastPkts"
    );
    for (name, c) in &rows {
        let _ = writeln!(
            s,
            "{:<14} {:>12} {:>14} {:>14} {:>14}",
            name,
            c.tx_bytes + c.control_tx_bytes,
            c.tx_cast.ucast,
            c.tx_cast.mcast,
            c.tx_cast.bcast
        );
    }
    s
}

/// `test etherchannel load-balance interface port-channel N ...`: which
/// member a frame with `key` takes, and why.
pub fn test_load_balance(b: &Bridge, id: ChannelId, key: &FlowKey, method: &str) -> String {
    match b.test_load_balance(id, key) {
        None => format!("Po{} does not exist\n", id.0),
        Some((bucket, None)) => format!(
            "Po{}: no member is bundled (the flow hashes to bucket {bucket} of 8 by {method})\n",
            id.0
        ),
        Some((bucket, Some(p))) => format!(
            "Would select {} of Po{} (bucket {bucket} of 8 by {method})\n",
            port_name(b, p),
            id.0
        ),
    }
}

/// One row of `show storm-control`: a port's meter for one class at a
/// moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StormRow {
    /// The port's short name (`Gi1/1`).
    pub port: String,
    /// The class.
    pub class: lagkit_ios::StormClass,
    /// `Forwarding`, `Blocking`, or `Link Down`.
    pub state: String,
    /// The upper level as IOS prints it (`20.00%`, `1k pps`).
    pub upper: String,
    /// The lower level.
    pub lower: String,
    /// The last whole second's traffic, in the level's unit.
    pub current: String,
    /// Frames dropped.
    pub dropped: u64,
}

/// Every port's storm-control rows at `now`, in port order then IOS's
/// class order; `up(p)` says whether port `p` has link (IOS shows `Link
/// Down` otherwise).
pub fn storm_rows(b: &Bridge, now: u64, up: impl Fn(PortId) -> bool) -> Vec<StormRow> {
    let mut rows = Vec::new();
    for (p, _) in b.ports() {
        for class in lagkit_ios::StormClass::ALL {
            let Some(m) = b.storm_meter(p, class) else {
                continue;
            };
            let l = m.level();
            let state = if up(p) {
                m.state(now).name().to_string()
            } else {
                "Link Down".to_string()
            };
            rows.push(StormRow {
                port: port_name(b, p),
                class,
                state,
                upper: l.show(l.rising),
                lower: l.show(l.falling),
                current: l.show(m.current(now)),
                dropped: m.dropped(),
            });
        }
    }
    rows
}

/// `show storm-control`, in the IOS-XE layout (one line per port and
/// class, the class in the Type column: `B`, `M`, `U`). lagkit only
/// filters (drops the excess), so the Action is `None`.
pub fn storm_control(rows: &[StormRow]) -> String {
    let mut s = String::from("Key: U - Unicast, B - Broadcast, M - Multicast\n\n");
    s.push_str(
        "Interface  Filter State   Upper        Lower        Current      Action     Type\n",
    );
    s.push_str(
        "---------  -------------  -----------  -----------  -----------  ---------  ----\n",
    );
    for r in rows {
        let t = match r.class {
            lagkit_ios::StormClass::Broadcast => "B",
            lagkit_ios::StormClass::Multicast => "M",
            lagkit_ios::StormClass::Unicast => "U",
        };
        s.push_str(&format!(
            "{:<10} {:<13}  {:>11}  {:>11}  {:>11}  {:<9}  {:>4}\n",
            r.port, r.state, r.upper, r.lower, r.current, "None", t
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::from_ios;

    fn lab() -> (Bridge, Vec<ChannelSpec>) {
        let text = "port-channel load-balance src-dst-ip\ninterface range gi8/4 - 5\n channel-group 3 mode active\ninterface gi1/1\n";
        let ports: Vec<(String, String)> = ["gi8/4", "gi8/5", "gi1/1"]
            .iter()
            .map(|n| (n.to_string(), "v".into()))
            .collect();
        let c = from_ios(text, &ports).unwrap();
        (c.bridge, c.channels)
    }

    fn show(line: &str) -> Result<String, String> {
        let w: Vec<&str> = line.split_whitespace().collect();
        expand(&w, SHOW_COMMANDS)
            .map(|v| v.join(" "))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn show_words_abbreviate_as_on_a_catalyst() {
        for (short, full) in [
            ("eth sum", "etherchannel summary"),
            ("e s", "etherchannel summary"),
            ("int count", "interfaces counters"),
            ("lacp nei", "lacp neighbor"),
            ("LACP Neighbors", "lacp neighbor"),
            ("pa n", "pagp neighbor"),
            ("mac add", "mac address-table"),
            ("mac-address-table", "mac-address-table"),
            ("mac-", "mac-address-table"),
            ("eth 3 det", "etherchannel 3 detail"),
            ("eth d", "etherchannel detail"),
            ("eth load-balance", "etherchannel load-balance"),
            ("eth load-balancing", "etherchannel load-balancing"),
            ("lacp nei det", "lacp neighbor detail"),
            ("lacp sys", "lacp sys-id"),
            ("lacp int", "lacp internal"),
            ("pag cou", "pagp counters"),
            ("int stat", "interfaces status"),
            ("run", "running-config"),
            ("pl f", "platform forwarding"),
            ("etherchannel summary", "etherchannel summary"),
        ] {
            assert_eq!(show(short).as_deref(), Ok(full), "{short}");
        }
        let e = show("m add").unwrap_err();
        assert_eq!(
            e,
            "% Ambiguous command: \"m\" could be mac, mac-address-table"
        );
        let e = show("eth load").unwrap_err();
        assert!(e.contains("could be load-balance, load-balancing"), "{e}");
        let e = show("eth bogus").unwrap_err();
        assert!(e.starts_with("% Invalid input at \"bogus\""), "{e}");
        assert!(
            e.contains("summary, load-balance, load-balancing, detail, a number"),
            "{e}"
        );
        let e = show("eth").unwrap_err();
        assert!(
            e.starts_with("% Incomplete command: \"etherchannel\""),
            "{e}"
        );
        assert!(show("eth sum extra").is_err());
        let w = ["eth", "load", "int", "po3", "ip", "10.0.0.1", "10.0.0.2"];
        assert_eq!(
            expand(&w, TEST_COMMANDS).unwrap().join(" "),
            "etherchannel load-balance interface po3 ip 10.0.0.1 10.0.0.2"
        );
    }

    #[test]
    fn filters_include_exclude_and_begin_as_ios_does() {
        let text = "Flags\nGroup\n1 Po1(SU) LACP Gi1/1(P)\n2 Po2(SD) - Gi1/2(D)\n";
        for words in [
            vec!["etherchannel", "summary", "|", "include", "Po1"],
            vec!["etherchannel", "summary", "|include", "Po1"],
            vec!["etherchannel", "summary", "| i Po1"],
            vec!["etherchannel", "summary", "|", "inc", "Po1"],
        ] {
            let (cmd, f) = Filter::split(&words).unwrap();
            assert_eq!(cmd, ["etherchannel", "summary"], "{words:?}");
            assert_eq!(
                f.unwrap().apply(text),
                "1 Po1(SU) LACP Gi1/1(P)\n",
                "{words:?}"
            );
        }
        let (_, f) = Filter::split(&["x", "|", "exclude", "Po[12]"]).unwrap();
        assert_eq!(f.unwrap().apply(text), "Flags\nGroup\n");
        let (_, f) = Filter::split(&["x", "|", "begin", "^Group"]).unwrap();
        assert_eq!(
            f.unwrap().apply(text),
            "Group\n1 Po1(SU) LACP Gi1/1(P)\n2 Po2(SD) - Gi1/2(D)\n"
        );
        let (_, f) = Filter::split(&["x", "|", "include", "Po1 LACP|SD"]).unwrap();
        assert!(f.unwrap().apply(text).contains("Po2"));
        let (cmd, f) = Filter::split(&["x", "y"]).unwrap();
        assert!(f.is_none() && cmd == ["x", "y"]);
        assert_eq!(
            Filter::split(&["x", "|", "sort", "a"])
                .unwrap_err()
                .to_string(),
            format!("% Invalid filter \"sort\": {FILTER_USAGE}")
        );
        assert!(matches!(
            Filter::split(&["x", "|", "include"]),
            Err(FilterError::NoExpression)
        ));
        assert!(Filter::split(&["x", "|", "include", "("])
            .unwrap_err()
            .to_string()
            .starts_with("% Invalid regular expression \"(\": "));
    }

    #[test]
    fn summary_names_ports_and_flags_like_ios() {
        let (mut b, specs) = lab();
        b.set_bundled(PortId(0), true);
        let s = etherchannel_summary(
            &b,
            &[(
                specs[0].clone(),
                vec![MemberFlag::Bundled, MemberFlag::Suspended],
            )],
        );
        assert!(
            s.contains("3      Po3(SU)       LACP        Gi8/4(P) Gi8/5(s)"),
            "{s}"
        );
        assert!(s.contains("Number of aggregators:           1"), "{s}");
        assert_eq!(short_name("TenGigabitEthernet1/0/1"), "Te1/0/1");
        assert_eq!(short_name("Port-channel3"), "Po3");
    }

    #[test]
    fn mac_table_counters_and_the_load_balance_test() {
        let (mut b, _) = lab();
        b.set_bundled(PortId(0), true);
        b.set_bundled(PortId(1), true);
        let mut f = vec![0xffu8; 6];
        f.extend_from_slice(&[2, 0, 0, 0, 0, 7, 0x08, 0x06]);
        f.resize(60, 0);
        b.receive(PortId(2), &f, 0);
        let t = mac_address_table(&b, 1);
        assert!(
            t.contains("   1    0200.0000.0007    DYNAMIC     Gi1/1"),
            "{t}"
        );
        assert!(t.contains("Total Mac Addresses for this criterion: 1"));
        let c = interfaces_counters(&b, &[ChannelId(3)]);
        assert!(
            c.lines().any(|l| l.starts_with("Gi1/1")
                && l.split_whitespace().collect::<Vec<_>>() == ["Gi1/1", "60", "0", "0", "1"]),
            "{c}"
        );
        assert!(c.contains("OutOctets   OutUcastPkts"), "{c}");
        assert!(c.lines().any(|l| l.starts_with("Po3 ")), "{c}");
        // src-dst-ip over 10.0.0.1 -> 10.0.0.6: (1 ^ 6) & 7 = 7, bucket 7
        // of 2 members: Gi8/5.
        let key = FlowKey::ports(
            "10.0.0.1".parse().unwrap(),
            1,
            "10.0.0.6".parse().unwrap(),
            2,
            6,
        )
        .with_ethertype(0x0800);
        let s = test_load_balance(&b, ChannelId(3), &key, "src-dst-ip");
        assert_eq!(
            s,
            "Would select Gi8/5 of Po3 (bucket 7 of 8 by src-dst-ip)\n"
        );
        assert!(test_load_balance(&b, ChannelId(9), &key, "x").contains("does not exist"));
        let lb = etherchannel_load_balance(&b, "src-dst-ip", false);
        assert!(
            lb.contains("        src-dst-ip\n        hash-distribution fixed"),
            "{lb}"
        );
    }
}
