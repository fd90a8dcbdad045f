//! What lagkit knows of IOS beyond the subset it reads: the commands a
//! real configuration holds that change nothing about aggregation
//! (`version`, `spanning-tree ...`, `description`, `ip address`), and the
//! commands of the subset, so that a line the reader did not use can be
//! told apart as harmless or as a likely typo. A typo must never pass in
//! silence: `chanel-group 1 mode active` skipped like a `description`
//! leaves the port out of its channel while everything else looks right.

use serde::Serialize;
use std::fmt;
use std::sync::LazyLock;

/// Phrases the reader models (their arguments follow).
const MODELLED: &[&str] = &[
    "interface",
    "interface range",
    "mtu",
    "channel-group",
    "switchport access vlan",
    "switchport trunk native vlan",
    "switchport trunk allowed vlan",
    "switchport mode trunk",
    "switchport mode access",
    "speed",
    "duplex",
    "lacp rate",
    "lacp port-priority",
    "lacp max-bundle",
    "port-channel min-links",
    "port-channel load-balance",
    "port-channel hash-distribution",
    "pagp port-priority",
    "pagp learn-method",
    "storm-control broadcast level",
    "storm-control multicast level",
    "storm-control unicast level",
    "shutdown",
    "hostname",
    "end",
    "exit",
];

/// Well-known commands outside the subset: harmless for aggregation.
/// A phrase covers every line that starts with it.
const NOT_MODELLED: &[&str] = &[
    // Global configuration.
    "version",
    "service",
    "boot",
    "boot-start-marker",
    "boot-end-marker",
    "logging",
    "enable",
    "username",
    "aaa",
    "clock",
    "ip",
    "ipv6",
    "vtp",
    "vlan",
    "name",
    "spanning-tree",
    "errdisable",
    "line",
    "banner",
    "ntp",
    "snmp-server",
    "cdp",
    "lldp",
    "archive",
    "redundancy",
    "license",
    "system",
    "mac",
    "mac-address-table",
    "access-list",
    "router",
    "control-plane",
    "crypto",
    "diagnostic",
    "memory",
    "transceiver",
    "power",
    "vstack",
    "call-home",
    "platform",
    "module",
    "password",
    "exec-timeout",
    "login",
    "transport",
    "privilege",
    "exception",
    "tacacs-server",
    "radius-server",
    "monitor",
    "class-map",
    "policy-map",
    "match",
    "class",
    "police",
    "mls",
    "qos",
    "udld",
    "alias",
    "file",
    "hw-module",
    "vrf",
    "key",
    "track",
    "event",
    "stopbits",
    "scheduler",
    "sdm",
    "configure",
    "conf",
    "building",
    "current",
    "lacp system-priority",
    "port-channel auto",
    "port-channel per-module",
    "pagp timer",
    // Interface sub-commands.
    "description",
    "load-interval",
    "storm-control",
    "storm-control action",
    "service-policy",
    "keepalive",
    "negotiation",
    "media-type",
    "channel-protocol",
    "carrier-delay",
    "priority-queue",
    "srr-queue",
    "wrr-queue",
    "rcv-queue",
    "flowcontrol",
    "authentication",
    "dot1x",
    "mab",
    "bandwidth",
    "delay",
    "switchport",
    "switchport nonegotiate",
    "switchport port-security",
    "switchport voice",
    "switchport host",
    "switchport protected",
    "switchport block",
    "switchport priority",
    "switchport backup",
    "switchport private-vlan",
    "switchport mode dynamic",
    "switchport mode private-vlan",
    "switchport mode dot1q-tunnel",
    "switchport trunk encapsulation",
    "switchport trunk pruning",
];

/// Interface types that are not Ethernet ports (an SVI, a loopback):
/// their blocks are skipped as not modelled.
pub(crate) const VIRTUAL_TYPES: &[&str] = &[
    "vlan",
    "loopback",
    "tunnel",
    "null",
    "bdi",
    "bvi",
    "dialer",
    "virtual-template",
    "nve",
    "mgmt",
];

/// Why a line was not used.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum UnreadKind {
    /// A well-known IOS command outside the subset (`version`,
    /// `spanning-tree ...`, `description`): it changes nothing lagkit
    /// checks or runs.
    NotModelled,
    /// Not a command lagkit knows: a misspelling, or a command of the
    /// subset with words it does not read.
    Unknown {
        /// The known command it is closest to, when one is close.
        hint: Option<String>,
    },
}

/// A configuration line lagkit read but did not use.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unread {
    /// Its line number (1-based).
    pub line: usize,
    /// The line as written, trimmed.
    pub text: String,
    /// Harmless or suspect.
    #[serde(flatten)]
    pub kind: UnreadKind,
}

impl Unread {
    /// Whether the line deserves a warning of its own (and fails a
    /// `--strict` run): anything but a well-known command outside the
    /// subset.
    pub fn is_warning(&self) -> bool {
        matches!(self.kind, UnreadKind::Unknown { .. })
    }

    /// The command's first word (`spanning-tree`), for summaries.
    pub fn command(&self) -> &str {
        let mut w = self.text.split_whitespace();
        match w.next() {
            Some(n) if n.eq_ignore_ascii_case("no") => w.next().unwrap_or(n),
            Some(first) => first,
            None => "",
        }
    }
}

impl fmt::Display for Unread {
    /// `` `chanel-group 1 mode active`: not a command lagkit reads; did you mean `channel-group`? ``
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            UnreadKind::NotModelled => write!(
                f,
                "`{}` is outside what lagkit models (skipped)",
                self.text
            ),
            UnreadKind::Unknown { hint: Some(h) } => write!(
                f,
                "`{}`: not a command lagkit reads; did you mean `{h}`?",
                self.text
            ),
            UnreadKind::Unknown { hint: None } => write!(
                f,
                "`{}`: not a command lagkit reads (correct it, or delete it if it does not matter here)",
                self.text
            ),
        }
    }
}

fn phrases(list: &'static [&'static str]) -> impl Iterator<Item = Vec<&'static str>> {
    list.iter().map(|p| p.split(' ').collect())
}

/// The closest of `candidates` to `word`, when close enough to be a typo
/// (or an abbreviation, which lagkit's reader does not expand).
fn closest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = if c.starts_with(word) && word.len() >= 2 {
            // An abbreviation: as close as one edit.
            1
        } else {
            strsim::damerau_levenshtein(word, c)
        };
        if best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    let (d, c) = best?;
    // Two edits in a long word, one in a short one.
    let limit = if word.len() >= 6 { 2 } else { 1 };
    (d <= limit && d < word.len()).then_some(c)
}

/// Classifies a line the reader did not use (`words` in lower case).
pub(crate) fn classify(words: &[&str]) -> UnreadKind {
    let words = match words {
        ["no", rest @ ..] if !rest.is_empty() => rest,
        w => w,
    };
    // Split once per process, not once per line: a configuration of a
    // million lines classifies a million of them.
    static ALL: LazyLock<Vec<(Vec<&str>, bool)>> = LazyLock::new(|| {
        phrases(MODELLED)
            .map(|p| (p, true))
            .chain(phrases(NOT_MODELLED).map(|p| (p, false)))
            .collect()
    });
    // Walk down the phrases that match the words so far, narrowing them
    // a word at a time.
    let mut here: Vec<&(Vec<&str>, bool)> = ALL.iter().collect();
    let mut depth = 0;
    loop {
        // A well-known phrase that is complete covers the rest of the line,
        // unless a longer phrase goes on from it (bare `switchport` is
        // well known, `switchport mode acess` is not).
        let complete = here
            .iter()
            .any(|(p, modelled)| !modelled && p.len() == depth);
        let longer = here.iter().any(|(p, _)| p.len() > depth);
        if depth > 0 && complete && (!longer || words.len() == depth) {
            return UnreadKind::NotModelled;
        }
        let Some(word) = words.get(depth) else {
            // The line stops inside a phrase, or a modelled command has
            // arguments lagkit does not read.
            if here.iter().any(|(p, m)| *m && p.len() == depth) {
                // `speed` without its value.
                return UnreadKind::Unknown {
                    hint: Some(format!("{} ...", words.join(" "))),
                };
            }
            let hint = here
                .iter()
                .find(|(p, _)| p.len() > depth)
                .map(|(p, _)| p.join(" "));
            return UnreadKind::Unknown { hint };
        };
        let next: Vec<&str> = here
            .iter()
            .filter_map(|(p, _)| p.get(depth).copied())
            .collect();
        if !next.contains(word) {
            if here
                .iter()
                .any(|(p, modelled)| *modelled && p.len() == depth)
            {
                // A modelled command whose arguments were not understood.
                return UnreadKind::Unknown {
                    hint: Some(format!("{} ...", words[..depth].join(" "))),
                };
            }
            let hint = closest(word, next.iter().copied()).map(|c| {
                let mut h: Vec<&str> = words[..depth].to_vec();
                h.push(c);
                h.join(" ")
            });
            return UnreadKind::Unknown { hint };
        }
        here.retain(|(p, _)| p.get(depth) == Some(word));
        depth += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(line: &str) -> UnreadKind {
        let w: Vec<&str> = line.split_whitespace().collect();
        classify(&w)
    }

    fn hint(line: &str) -> Option<String> {
        match kind(line) {
            UnreadKind::Unknown { hint } => hint,
            k => panic!("{line}: {k:?}"),
        }
    }

    #[test]
    fn well_known_lines_are_not_modelled() {
        for l in [
            "version 15.2",
            "service timestamps debug datetime msec",
            "spanning-tree mode rapid-pvst",
            "description uplink to server 3",
            "ip address 10.0.0.1 255.255.255.0",
            "no ip address",
            "switchport nonegotiate",
            "switchport trunk encapsulation dot1q",
            "lacp system-priority 100",
            "no cdp enable",
            "switchport",
            "no switchport",
        ] {
            assert_eq!(kind(l), UnreadKind::NotModelled, "{l}");
        }
    }

    #[test]
    fn typos_get_a_hint() {
        assert_eq!(
            hint("chanel-group 1 mode active").as_deref(),
            Some("channel-group")
        );
        assert_eq!(hint("lacp rat fast").as_deref(), Some("lacp rate"));
        assert_eq!(
            hint("switchport mode acess").as_deref(),
            Some("switchport mode access")
        );
        assert_eq!(
            hint("spaning-tree portfast").as_deref(),
            Some("spanning-tree")
        );
        assert_eq!(hint("no shutdwn").as_deref(), Some("shutdown"));
        assert_eq!(
            hint("port-channel load-balanse src-ip").as_deref(),
            Some("port-channel load-balance")
        );
        // Nothing close: no hint, still a warning.
        assert_eq!(hint("frobnicate now"), None);
        // A modelled command with words lagkit does not read.
        assert_eq!(
            hint("lacp rate fast please").as_deref(),
            Some("lacp rate ...")
        );
        assert_eq!(hint("lacp").as_deref(), Some("lacp rate"));
        assert_eq!(hint("speed").as_deref(), Some("speed ..."));
    }

    #[test]
    fn messages() {
        let u = Unread {
            line: 3,
            text: "chanel-group 1 mode active".into(),
            kind: kind("chanel-group 1 mode active"),
        };
        assert!(u.is_warning());
        assert_eq!(
            u.to_string(),
            "`chanel-group 1 mode active`: not a command lagkit reads; did you mean `channel-group`?"
        );
        let n = Unread {
            line: 1,
            text: "no cdp enable".into(),
            kind: UnreadKind::NotModelled,
        };
        assert!(!n.is_warning());
        assert_eq!(n.command(), "cdp");
    }
}
