//! The Cisco IOS configuration subset that port aggregation needs.
//!
//! IBM's AIX/Cisco measurements print their switch configuration as typed
//! at the console (`interface range gigabitethernet 8/4-5`, then `mtu 9216`
//! and `channel-group 3 mode active` on the following lines, unindented,
//! closed by `end`), and a `show running-config` prints the same commands
//! indented under each `interface` and separated by `!`. This module reads
//! both into one [`Config`]: interfaces with their MTU, channel-group and
//! mode, VLAN, speed, duplex, LACP/PAgP options and shutdown state, and the
//! global `port-channel load-balance` method. Commands outside the subset
//! are kept as [`Unread`] lines: well-known ones (`version`,
//! `spanning-tree ...`) as harmless, anything else (a typo such as
//! `chanel-group`) as a warning with the nearest known command, because a
//! misspelt line skipped in silence changes what the switch does while
//! the rest looks right. Commands that make no sense where they stand (a
//! `channel-group` outside any interface, a mode that does not exist, a
//! range that runs backwards, a load-balance method Catalysts lack, one
//! channel whose ports speak different protocols) are errors that name
//! the line and the fix. No crate parses IOS configurations, hence this
//! hand-written reader; lagkit's `check` and its switch both use it and
//! nothing else, so they accept and refuse the same text.

#![forbid(unsafe_code)]

mod storm;
mod vocab;

use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

pub use storm::{parse_level, StormClass, StormControl, StormError, StormLevel, StormUnit};
pub use vocab::{Unread, UnreadKind};

/// The methods a Catalyst's `port-channel load-balance` takes.
pub const LOAD_BALANCE_METHODS: [&str; 10] = [
    "src-mac",
    "dst-mac",
    "src-dst-mac",
    "src-ip",
    "dst-ip",
    "src-dst-ip",
    "src-port",
    "dst-port",
    "src-dst-port",
    "src-dst-mixed-ip-port",
];

/// A 1-based line number in the configuration text.
pub type Line = usize;

/// How a port joins its channel (`channel-group N mode ...`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelMode {
    /// No protocol: bundle whatever is cabled.
    On,
    /// LACP, starts negotiating.
    Active,
    /// LACP, only answers.
    Passive,
    /// PAgP, starts negotiating; `silent` bundles after a wait when the
    /// partner never speaks PAgP.
    Desirable {
        /// `silent` (the IOS default) rather than `non-silent`.
        silent: bool,
    },
    /// PAgP, only answers.
    Auto {
        /// `silent` (the IOS default) rather than `non-silent`.
        silent: bool,
    },
}

impl ChannelMode {
    /// The protocol the mode speaks: `lacp`, `pagp` or `none`.
    pub fn protocol(self) -> &'static str {
        match self {
            ChannelMode::On => "none",
            ChannelMode::Active | ChannelMode::Passive => "lacp",
            ChannelMode::Desirable { .. } | ChannelMode::Auto { .. } => "pagp",
        }
    }
}

impl fmt::Display for ChannelMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = |silent: bool| if silent { "" } else { " non-silent" };
        match self {
            ChannelMode::On => f.write_str("on"),
            ChannelMode::Active => f.write_str("active"),
            ChannelMode::Passive => f.write_str("passive"),
            ChannelMode::Desirable { silent } => write!(f, "desirable{}", s(*silent)),
            ChannelMode::Auto { silent } => write!(f, "auto{}", s(*silent)),
        }
    }
}

/// A value and the line that set it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct At<T> {
    /// The value.
    pub value: T,
    /// Where it was set.
    pub line: Line,
}

/// `channel-group N mode M` on a port.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChannelGroup {
    /// The group number (the port-channel's number).
    pub number: u32,
    /// The mode.
    pub mode: ChannelMode,
}

/// One interface and what the configuration set on it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Interface {
    /// Its canonical name: `GigabitEthernet8/4`, `Port-channel3`.
    pub name: String,
    /// Where it was first named.
    pub line: Line,
    /// `mtu N`.
    pub mtu: Option<At<u32>>,
    /// `channel-group N mode M`.
    pub channel_group: Option<At<ChannelGroup>>,
    /// `switchport access vlan N`.
    pub access_vlan: Option<At<u16>>,
    /// `switchport mode trunk`.
    pub trunk: Option<At<bool>>,
    /// `switchport trunk allowed vlan LIST` (as written: `1-10,20`).
    pub trunk_allowed: Option<At<String>>,
    /// `switchport trunk native vlan N`.
    pub trunk_native: Option<At<u16>>,
    /// `speed ...`.
    pub speed: Option<At<String>>,
    /// `duplex ...`.
    pub duplex: Option<At<String>>,
    /// `lacp rate fast` (true) or `lacp rate normal` (false).
    pub lacp_rate_fast: Option<At<bool>>,
    /// `lacp port-priority N`.
    pub lacp_port_priority: Option<At<u16>>,
    /// `pagp port-priority N`.
    pub pagp_port_priority: Option<At<u16>>,
    /// `lacp max-bundle N` (on a port-channel): at most N members carry
    /// traffic, the others stand by.
    pub lacp_max_bundle: Option<At<u16>>,
    /// `port-channel min-links N` (on a port-channel): the channel is down
    /// with fewer members.
    pub min_links: Option<At<u16>>,
    /// `pagp learn-method ...`.
    pub pagp_learn_method: Option<At<String>>,
    /// `shutdown` (true) or `no shutdown` (false).
    pub shutdown: Option<At<bool>>,
    /// `storm-control CLASS level ...`, each class's last line.
    pub storm_control: StormControl,
    /// Where each class's `storm-control` line is (by [`StormClass::ALL`]
    /// order).
    pub storm_control_lines: [Option<Line>; 3],
}

impl Interface {
    /// Whether this is a `Port-channelN` interface; its number.
    pub fn port_channel(&self) -> Option<u32> {
        self.name.strip_prefix("Port-channel")?.parse().ok()
    }

    /// How many settings the configuration gave it (MTU, channel-group,
    /// VLAN, ...).
    pub fn settings(&self) -> usize {
        [
            self.mtu.is_some(),
            self.channel_group.is_some(),
            self.access_vlan.is_some(),
            self.trunk.is_some(),
            self.trunk_allowed.is_some(),
            self.trunk_native.is_some(),
            self.speed.is_some(),
            self.duplex.is_some(),
            self.lacp_rate_fast.is_some(),
            self.lacp_port_priority.is_some(),
            self.pagp_port_priority.is_some(),
            self.lacp_max_bundle.is_some(),
            self.min_links.is_some(),
            self.pagp_learn_method.is_some(),
            self.shutdown.is_some(),
        ]
        .iter()
        .filter(|s| **s)
        .count()
            + self.storm_control.iter().count()
    }
}

/// A parsed configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Config {
    /// `hostname`.
    pub hostname: Option<String>,
    /// `port-channel load-balance METHOD`.
    pub load_balance: Option<At<String>>,
    /// `port-channel hash-distribution fixed|adaptive`.
    pub hash_distribution: Option<At<String>>,
    /// Interfaces in the order first named.
    pub interfaces: Vec<Interface>,
    /// Lines outside the subset, in order: well-known ones and suspect
    /// ones (see [`Unread::is_warning`]).
    pub unread: Vec<Unread>,
}

impl Config {
    /// The interface named `name` (any spelling IOS accepts).
    pub fn interface(&self, name: &str) -> Option<&Interface> {
        let canon = canonical(name).ok()?;
        self.interfaces.iter().find(|i| i.name == canon)
    }

    /// The numbers of every channel group, ascending.
    pub fn channels(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .interfaces
            .iter()
            .filter_map(|i| i.channel_group.as_ref().map(|c| c.value.number))
            .chain(self.interfaces.iter().filter_map(Interface::port_channel))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The lines that deserve a warning each: unknown or misspelt
    /// commands.
    pub fn warnings(&self) -> impl Iterator<Item = &Unread> {
        self.unread.iter().filter(|u| u.is_warning())
    }

    /// The well-known lines outside the subset (harmless), as one
    /// sentence: `5 lines outside what lagkit models were skipped
    /// (version, service, spanning-tree)`; `None` when there are none.
    pub fn not_modelled_summary(&self) -> Option<String> {
        not_modelled_summary(&self.unread)
    }

    /// What `--strict` refuses: every warned line, as an error.
    pub fn strict_errors(&self) -> Vec<ParseError> {
        self.warnings()
            .map(|u| ParseError {
                line: u.line,
                why: u.to_string(),
            })
            .collect()
    }

    /// How many settings were read: every interface's, and the global
    /// load-balance and hash-distribution.
    pub fn settings(&self) -> usize {
        self.interfaces
            .iter()
            .map(Interface::settings)
            .sum::<usize>()
            + usize::from(self.load_balance.is_some())
            + usize::from(self.hash_distribution.is_some())
    }

    /// Every channel group, ascending, with its member ports and its
    /// `Port-channelN` interface, in one pass over the interfaces (asking
    /// [`Config::members`] for each channel would take a pass per channel).
    pub fn channel_groups(&self) -> BTreeMap<u32, ChannelPorts<'_>> {
        let mut out: BTreeMap<u32, ChannelPorts<'_>> = BTreeMap::new();
        for i in &self.interfaces {
            if let Some(n) = i.port_channel() {
                out.entry(n).or_default().port_channel.get_or_insert(i);
            }
            if let Some(g) = &i.channel_group {
                out.entry(g.value.number).or_default().members.push(i);
            }
        }
        out
    }

    /// The member ports of channel group `n`.
    pub fn members(&self, n: u32) -> Vec<&Interface> {
        self.interfaces
            .iter()
            .filter(|i| {
                i.channel_group
                    .as_ref()
                    .is_some_and(|c| c.value.number == n)
            })
            .collect()
    }
}

/// One channel group of a [`Config`]: its ports and its port-channel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChannelPorts<'a> {
    /// The ports with `channel-group N`, in the order first named.
    pub members: Vec<&'a Interface>,
    /// The `Port-channelN` interface, when the configuration names it.
    pub port_channel: Option<&'a Interface>,
}

/// The well-known lines among `unread` (harmless), as one sentence: `5
/// lines outside what lagkit models were skipped (version, service,
/// spanning-tree)`; `None` when there are none.
pub fn not_modelled_summary(unread: &[Unread]) -> Option<String> {
    let quiet: Vec<&Unread> = unread.iter().filter(|u| !u.is_warning()).collect();
    if quiet.is_empty() {
        return None;
    }
    let mut commands: Vec<&str> = Vec::new();
    for u in &quiet {
        let c = u.command();
        if !commands.iter().any(|x| x.eq_ignore_ascii_case(c)) {
            commands.push(c);
        }
    }
    let more = commands.len().saturating_sub(8);
    commands.truncate(8);
    Some(format!(
        "{} line{} outside what lagkit models {} skipped ({}{})",
        quiet.len(),
        if quiet.len() == 1 { "" } else { "s" },
        if quiet.len() == 1 { "was" } else { "were" },
        commands.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    ))
}

/// Why a configuration could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {why}")]
pub struct ParseError {
    /// The line.
    pub line: Line,
    /// What is wrong and how to fix it.
    pub why: String,
}

/// Why an interface name could not be read ([`canonical`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// No type word, or no number after it.
    #[error("{name:?} is not an interface name (e.g. gigabitethernet 8/4, port-channel 3)")]
    NotAName {
        /// The name given.
        name: String,
    },
    /// The type word abbreviates no interface type IOS has.
    #[error("unknown interface type {word:?} in {name:?}")]
    UnknownType {
        /// The type word, lower case.
        word: String,
        /// The name given.
        name: String,
    },
    /// The number holds something other than digits, `/` and `.`.
    #[error("{name:?}: the interface number may hold only digits, '/' and '.'")]
    BadNumber {
        /// The name given.
        name: String,
    },
}

/// Why the argument of `interface range` could not be expanded
/// ([`expand_range`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    /// A name in it is not an interface name.
    #[error(transparent)]
    Name(#[from] NameError),
    /// The first name of a range ends in no number.
    #[error("{part:?}: no number to count from")]
    NoStart {
        /// The range, as written.
        part: String,
    },
    /// The end of a range is not a number.
    #[error("{part:?}: the end of a range is a number (gi8/4 - 5)")]
    BadEnd {
        /// The range, as written.
        part: String,
    },
    /// The range runs backwards or spans more than 256 ports.
    #[error("{part:?}: a range runs upwards, at most 256 ports (gi8/4 - 5)")]
    Backwards {
        /// The range, as written.
        part: String,
    },
}

/// Why a VLAN list is refused ([`vlan_ranges`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VlanListError {
    /// A word that is not a number.
    #[error("{0:?} is not a VLAN id")]
    NotAnId(String),
    /// A number outside 1-4094.
    #[error("VLAN {0} is outside 1-4094")]
    OutOfRange(u16),
    /// A range whose first VLAN is above its last.
    #[error("VLAN range {0}-{1} runs backwards")]
    Backwards(u16, u16),
}

/// Interface types IOS abbreviates, with the canonical spelling.
const TYPES: [(&str, &str); 8] = [
    ("port-channel", "Port-channel"),
    ("hundredgigabitethernet", "HundredGigabitEthernet"),
    ("fortygigabitethernet", "FortyGigabitEthernet"),
    ("twentyfivegige", "TwentyFiveGigE"),
    ("tengigabitethernet", "TenGigabitEthernet"),
    ("gigabitethernet", "GigabitEthernet"),
    ("fastethernet", "FastEthernet"),
    ("ethernet", "Ethernet"),
];

/// The canonical form of an interface name: `gi 8/4`, `Gi8/4` and
/// `gigabitethernet8/4` are all `GigabitEthernet8/4`.
pub fn canonical(name: &str) -> Result<String, NameError> {
    let compact: String = name.split_whitespace().collect();
    let lower = compact.to_ascii_lowercase();
    let split = lower
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(lower.len());
    let (word, num) = (&lower[..split], &compact[split..]);
    if word.is_empty() || num.is_empty() {
        return Err(NameError::NotAName { name: name.into() });
    }
    // The shortest unambiguous prefix IOS accepts; "po", "gi", "te", "fa" and "e" are the common ones.
    let (_, canon) = TYPES
        .iter()
        .find(|(full, _)| full.starts_with(word) && (word.len() >= 2 || *full == "ethernet"))
        .ok_or_else(|| NameError::UnknownType {
            word: word.into(),
            name: name.into(),
        })?;
    if !num
        .chars()
        .all(|c| c.is_ascii_digit() || c == '/' || c == '.')
    {
        return Err(NameError::BadNumber { name: name.into() });
    }
    Ok(format!("{canon}{num}"))
}

/// Expands the argument of `interface range`: `gigabitethernet 8/4 - 5`,
/// `gi8/4-5`, `gi1/1 - 2 , gi1/5`.
pub fn expand_range(arg: &str) -> Result<Vec<String>, RangeError> {
    let mut out = Vec::new();
    for part in arg.split(',') {
        let part = part.trim();
        let (first, last) = match part.split_once('-') {
            Some((a, b)) if !a.trim().to_ascii_lowercase().ends_with("port") => {
                (a.trim(), Some(b.trim()))
            }
            _ => (part, None),
        };
        let name = canonical(first)?;
        let Some(last) = last else {
            out.push(name);
            continue;
        };
        let cut = name
            .rfind(|c: char| !c.is_ascii_digit())
            .map_or(0, |i| i + 1);
        let (stem, lo) = name.split_at(cut);
        let part = || part.to_string();
        let lo: u32 = lo
            .parse()
            .map_err(|_| RangeError::NoStart { part: part() })?;
        let hi: u32 = last
            .parse()
            .map_err(|_| RangeError::BadEnd { part: part() })?;
        if hi < lo || hi - lo > 255 {
            return Err(RangeError::Backwards { part: part() });
        }
        out.extend((lo..=hi).map(|n| format!("{stem}{n}")));
    }
    Ok(out)
}

fn parse_mode(words: &[&str], line: Line) -> Result<ChannelMode, ParseError> {
    let err = |why: String| ParseError { line, why };
    let silent = match words.get(1).copied() {
        None | Some("silent") => true,
        Some("non-silent") => false,
        Some(w) => {
            return Err(err(format!(
                "{w:?} after the mode: only silent or non-silent may follow auto/desirable"
            )))
        }
    };
    let mode = match words.first().copied() {
        Some("on") => ChannelMode::On,
        Some("active") => ChannelMode::Active,
        Some("passive") => ChannelMode::Passive,
        Some("desirable") => ChannelMode::Desirable { silent },
        Some("auto") => ChannelMode::Auto { silent },
        Some(w) => {
            return Err(err(format!(
                "unknown channel-group mode {w:?}: use on, active, passive, desirable [non-silent] or auto [non-silent]"
            )))
        }
        None => return Err(err("channel-group N mode needs a mode: on, active, passive, desirable or auto".into())),
    };
    if words.len() > 1
        && matches!(
            mode,
            ChannelMode::On | ChannelMode::Active | ChannelMode::Passive
        )
    {
        return Err(err(format!(
            "{mode} takes no silent/non-silent (those are PAgP's)"
        )));
    }
    Ok(mode)
}

fn number<T: std::str::FromStr>(w: Option<&&str>, what: &str, line: Line) -> Result<T, ParseError> {
    w.and_then(|s| s.parse().ok()).ok_or_else(|| ParseError {
        line,
        why: format!("{what} needs a number"),
    })
}

/// The first words of the interface sub-commands the reader knows
/// (docs/reference/ios.md lists each command; a test holds them together).
pub const INTERFACE_COMMAND_WORDS: &[&str] = &[
    "mtu",
    "channel-group",
    "switchport",
    "speed",
    "duplex",
    "lacp",
    "pagp",
    "shutdown",
    "shut",
    "no",
    "description",
    "channel-protocol",
    "port-channel",
    "storm-control",
];

/// Reads a configuration.
pub fn parse(text: &str) -> Result<Config, ParseError> {
    let mut cfg = Config::default();
    // The interfaces the current sub-commands apply to (indices).
    let mut ctx: Vec<usize> = Vec::new();
    // Inside the block of an interface lagkit does not model (`interface
    // Vlan1`): its sub-commands are skipped as not modelled.
    let mut foreign_block = false;
    // Each interface's index in `cfg.interfaces`, by canonical name: a
    // configuration names thousands of ports, and a search of the list
    // for each `interface` line would make reading quadratic.
    let mut index: HashMap<String, usize> = HashMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let indented = raw.starts_with(' ') || raw.starts_with('\t');
        let t = raw.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if t.starts_with('!') {
            ctx.clear();
            foreign_block = false;
            continue;
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
        let lw: Vec<&str> = lower.iter().map(String::as_str).collect();
        let err = |why: String| ParseError { line, why };
        let unread = |cfg: &mut Config| {
            cfg.unread.push(Unread {
                line,
                text: t.to_string(),
                kind: vocab::classify(&lw),
            })
        };
        let enter = |names: Vec<String>,
                     cfg: &mut Config,
                     index: &mut HashMap<String, usize>|
         -> Vec<usize> {
            names
                .into_iter()
                .map(|n| {
                    *index.entry(n).or_insert_with_key(|n| {
                        cfg.interfaces.push(Interface {
                            name: n.clone(),
                            line,
                            ..Interface::default()
                        });
                        cfg.interfaces.len() - 1
                    })
                })
                .collect()
        };
        match lw.as_slice() {
            ["end"] | ["exit"] => {
                ctx.clear();
                foreign_block = false;
                continue;
            }
            ["hostname", name] => {
                cfg.hostname = Some((*name).to_string());
                ctx.clear();
                foreign_block = false;
                continue;
            }
            ["interface", "range", ..] => {
                let arg = words[2..].join(" ");
                let names = expand_range(&arg).map_err(|e| err(e.to_string()))?;
                ctx = enter(names, &mut cfg, &mut index);
                foreign_block = false;
                continue;
            }
            ["interface", ..] if words.len() >= 2 => {
                let arg = words[1..].join(" ");
                foreign_block = false;
                let name = match canonical(&arg) {
                    Ok(name) => name,
                    Err(_) if is_virtual(&arg) => {
                        ctx.clear();
                        foreign_block = true;
                        cfg.unread.push(Unread {
                            line,
                            text: t.to_string(),
                            kind: UnreadKind::NotModelled,
                        });
                        continue;
                    }
                    Err(why) => return Err(err(why.to_string())),
                };
                ctx = enter(vec![name], &mut cfg, &mut index);
                continue;
            }
            ["port-channel", "hash-distribution", how] => {
                if !matches!(*how, "fixed" | "adaptive") {
                    return Err(err(format!(
                        "port-channel hash-distribution {how:?}: use fixed or adaptive"
                    )));
                }
                cfg.hash_distribution = Some(At {
                    value: (*how).to_string(),
                    line,
                });
                ctx.clear();
                continue;
            }
            ["port-channel", "load-balance", method] => {
                if !LOAD_BALANCE_METHODS.contains(method) {
                    return Err(err(format!(
                        "port-channel load-balance {method}: not a Catalyst method; use one of {}",
                        LOAD_BALANCE_METHODS.join(", ")
                    )));
                }
                cfg.load_balance = Some(At {
                    value: (*method).to_string(),
                    line,
                });
                ctx.clear();
                continue;
            }
            ["no", "interface", ..] => {
                ctx.clear();
                continue;
            }
            _ => {}
        }
        // An interface sub-command.
        let is_sub = lw
            .first()
            .is_some_and(|w| INTERFACE_COMMAND_WORDS.contains(w));
        if !is_sub {
            if !indented {
                ctx.clear();
                foreign_block = false;
            }
            unread(&mut cfg);
            continue;
        }
        if ctx.is_empty() {
            if foreign_block {
                cfg.unread.push(Unread {
                    line,
                    text: t.to_string(),
                    kind: UnreadKind::NotModelled,
                });
                continue;
            }
            // `no ...`, and well-known global commands that share a first
            // word with the subset (`lacp system-priority`, `port-channel
            // auto`).
            if lw.first() == Some(&"no") || vocab::classify(&lw) == UnreadKind::NotModelled {
                unread(&mut cfg);
                continue;
            }
            return Err(err(format!(
                "{:?} outside any interface: put it under `interface NAME` (the configuration may be pasted only in part)",
                t
            )));
        }
        let apply = |cfg: &mut Config, f: &dyn Fn(&mut Interface)| {
            for &k in &ctx {
                f(&mut cfg.interfaces[k]);
            }
        };
        match lw.as_slice() {
            ["mtu", ..] => {
                let v: u32 = number(words.get(1), "mtu", line)?;
                if !(64..=65535).contains(&v) {
                    return Err(err(format!("mtu {v} is outside 64-65535")));
                }
                apply(&mut cfg, &|x| x.mtu = Some(At { value: v, line }));
            }
            ["no", "mtu"] => apply(&mut cfg, &|x| x.mtu = None),
            ["channel-group", n, "mode", rest @ ..] => {
                let number: u32 = n
                    .parse()
                    .map_err(|_| err(format!("channel-group {n:?}: the group is a number")))?;
                let mode = parse_mode(rest, line)?;
                apply(&mut cfg, &|x| {
                    x.channel_group = Some(At {
                        value: ChannelGroup { number, mode },
                        line,
                    })
                });
            }
            ["channel-group", ..] => {
                return Err(err(
                    "write channel-group N mode MODE (e.g. channel-group 3 mode active)".into(),
                ))
            }
            ["no", "channel-group", ..] => apply(&mut cfg, &|x| x.channel_group = None),
            ["switchport", "access", "vlan", v] => {
                let v: u16 = v
                    .parse()
                    .ok()
                    .filter(|v| (1..=4094).contains(v))
                    .ok_or_else(|| err(format!("vlan {v:?} is not 1-4094")))?;
                apply(&mut cfg, &|x| x.access_vlan = Some(At { value: v, line }));
            }
            ["switchport", "trunk", "native", "vlan", v] => {
                let v: u16 = v
                    .parse()
                    .ok()
                    .filter(|v| (1..=4094).contains(v))
                    .ok_or_else(|| err(format!("native vlan {v:?} is not 1-4094")))?;
                apply(&mut cfg, &|x| x.trunk_native = Some(At { value: v, line }));
            }
            ["switchport", "trunk", "allowed", "vlan", rest @ ..] if !rest.is_empty() => {
                let list = rest.join("");
                if !list
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == ',' || c == '-')
                    && !matches!(list.as_str(), "all" | "none")
                {
                    return Err(err(format!(
                        "switchport trunk allowed vlan {list:?}: give a list such as 1-10,20, or all, or none (add/remove/except are not read)"
                    )));
                }
                vlan_ranges(&list).map_err(|why| {
                    err(format!(
                        "switchport trunk allowed vlan {list}: {why}; list VLANs 1-4094, e.g. 1-10,20"
                    ))
                })?;
                apply(&mut cfg, &|x| {
                    x.trunk_allowed = Some(At {
                        value: list.clone(),
                        line,
                    })
                });
            }
            ["switchport", "mode", "trunk"] => {
                apply(&mut cfg, &|x| x.trunk = Some(At { value: true, line }))
            }
            ["switchport", "mode", "access"] => {
                apply(&mut cfg, &|x| x.trunk = Some(At { value: false, line }))
            }
            ["speed", v] => apply(&mut cfg, &|x| {
                x.speed = Some(At {
                    value: (*v).to_string(),
                    line,
                })
            }),
            ["duplex", v] => apply(&mut cfg, &|x| {
                x.duplex = Some(At {
                    value: (*v).to_string(),
                    line,
                })
            }),
            ["lacp", "rate", r] => {
                let fast = match *r {
                    "fast" => true,
                    "normal" | "slow" => false,
                    _ => return Err(err(format!("lacp rate {r:?}: use fast or normal"))),
                };
                apply(&mut cfg, &|x| {
                    x.lacp_rate_fast = Some(At { value: fast, line })
                });
            }
            ["lacp", "port-priority", _] => {
                let v: u16 = number(words.get(2), "lacp port-priority", line)?;
                apply(&mut cfg, &|x| {
                    x.lacp_port_priority = Some(At { value: v, line })
                });
            }
            ["lacp", "max-bundle", _] => {
                let v: u16 = number(words.get(2), "lacp max-bundle", line)?;
                if !(1..=16).contains(&v) {
                    return Err(err(format!("lacp max-bundle {v} is outside 1-16")));
                }
                apply(&mut cfg, &|x| {
                    x.lacp_max_bundle = Some(At { value: v, line })
                });
            }
            ["no", "lacp", "max-bundle", ..] => apply(&mut cfg, &|x| x.lacp_max_bundle = None),
            ["port-channel", "min-links", _] => {
                let v: u16 = number(words.get(2), "port-channel min-links", line)?;
                if !(1..=16).contains(&v) {
                    return Err(err(format!("port-channel min-links {v} is outside 1-16")));
                }
                apply(&mut cfg, &|x| x.min_links = Some(At { value: v, line }));
            }
            ["no", "port-channel", "min-links", ..] => apply(&mut cfg, &|x| x.min_links = None),
            ["pagp", "port-priority", _] => {
                let v: u16 = number(words.get(2), "pagp port-priority", line)?;
                apply(&mut cfg, &|x| {
                    x.pagp_port_priority = Some(At { value: v, line })
                });
            }
            ["pagp", "learn-method", m] => apply(&mut cfg, &|x| {
                x.pagp_learn_method = Some(At {
                    value: (*m).to_string(),
                    line,
                })
            }),
            ["storm-control", class @ ("broadcast" | "multicast" | "unicast"), "level", rest @ ..] =>
            {
                let class = match *class {
                    "broadcast" => StormClass::Broadcast,
                    "multicast" => StormClass::Multicast,
                    _ => StormClass::Unicast,
                };
                let level = storm::parse_level(rest)
                    .map_err(|e| err(format!("storm-control {} level: {}", class.name(), e.0)))?;
                apply(&mut cfg, &|x| {
                    x.storm_control.set(class, Some(level));
                    x.storm_control_lines[class as usize] = Some(line);
                });
            }
            ["no", "storm-control", class @ ("broadcast" | "multicast" | "unicast"), ..] => {
                let class = match *class {
                    "broadcast" => StormClass::Broadcast,
                    "multicast" => StormClass::Multicast,
                    _ => StormClass::Unicast,
                };
                apply(&mut cfg, &|x| {
                    x.storm_control.set(class, None);
                    x.storm_control_lines[class as usize] = None;
                });
            }
            ["shutdown"] | ["shut"] => {
                apply(&mut cfg, &|x| x.shutdown = Some(At { value: true, line }))
            }
            ["no", "shutdown"] | ["no", "shut"] => {
                apply(&mut cfg, &|x| x.shutdown = Some(At { value: false, line }))
            }
            _ => unread(&mut cfg),
        }
    }
    validate(&cfg)?;
    Ok(cfg)
}

/// Whether `interface ARG` names an interface that is not an Ethernet
/// port (`Vlan1`, `Loopback0`): skipped as not modelled, not refused.
fn is_virtual(arg: &str) -> bool {
    let lower = arg.to_ascii_lowercase();
    let word: String = lower
        .chars()
        .take_while(|c| !c.is_ascii_digit() && !c.is_whitespace())
        .collect();
    word.len() >= 2 && vocab::VIRTUAL_TYPES.iter().any(|v| v.starts_with(&word))
}

/// A VLAN list as IOS takes it (`1-10,20,30-32`, `all`, `none`): the
/// ranges it names, each `(first, last)` within 1-4094 and upwards, in
/// the order given. The one reader for `lagkit check` and lagkit's switch.
pub fn vlan_ranges(list: &str) -> Result<Vec<(u16, u16)>, VlanListError> {
    match list.trim() {
        "all" => return Ok(vec![(1, 4094)]),
        "none" => return Ok(Vec::new()),
        _ => {}
    }
    let id = |t: &str| -> Result<u16, VlanListError> {
        let t = t.trim();
        let v: u16 = t.parse().map_err(|_| VlanListError::NotAnId(t.into()))?;
        match v {
            1..=4094 => Ok(v),
            _ => Err(VlanListError::OutOfRange(v)),
        }
    };
    (list.trim().split(','))
        .map(|part| match part.split_once('-') {
            Some((a, b)) => match (id(a)?, id(b)?) {
                (a, b) if a > b => Err(VlanListError::Backwards(a, b)),
                r => Ok(r),
            },
            None => id(part).map(|v| (v, v)),
        })
        .collect()
}

/// What a Catalyst refuses across lines, checked once everything is read
/// (the same for `lagkit check` and lagkit's switch): one channel whose
/// ports speak different protocols (`on`, LACP, PAgP), and `lacp
/// max-bundle` or `port-channel min-links` on a channel that does not run
/// LACP.
fn validate(cfg: &Config) -> Result<(), ParseError> {
    let ports = || cfg.interfaces.iter().filter(|i| i.port_channel().is_none());
    // The first member's mode is the channel's, as the switch takes it
    // (maps, not lists searched per port: thousands of channels stay
    // linear).
    let mut first: BTreeMap<u32, ChannelMode> = BTreeMap::new();
    for i in ports() {
        let Some(g) = &i.channel_group else { continue };
        let (n, mode) = (g.value.number, g.value.mode);
        match first.get(&n) {
            None => {
                first.insert(n, mode);
            }
            Some(m0) if m0.protocol() != mode.protocol() => {
                return Err(ParseError {
                    line: g.line,
                    why: format!(
                        "{} joins channel {n} in mode {mode} but its other ports are in mode {m0}: one channel speaks one protocol; write channel-group {n} mode {m0} on every port of the channel",
                        i.name
                    ),
                });
            }
            Some(_) => {}
        }
    }
    let groups = cfg.channel_groups();
    for (n, mode) in first {
        let Some(po) = groups.get(&n).and_then(|g| g.port_channel) else {
            continue;
        };
        for (limit, what) in [
            (&po.lacp_max_bundle, "lacp max-bundle"),
            (&po.min_links, "port-channel min-links"),
        ] {
            if let Some(l) = limit.as_ref().filter(|_| mode.protocol() != "lacp") {
                return Err(ParseError {
                    line: l.line,
                    why: format!(
                        "{what} on Port-channel{n}, whose members are in mode {mode}: only LACP applies it; remove it, or run LACP (channel-group {n} mode active|passive)"
                    ),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = include_str!("../../../docs/reference/ios.md");

    /// The commands in the page's "Interface commands" table, with sample
    /// arguments: each is read (not skipped) under an interface, and each
    /// command word the reader knows has a row.
    #[test]
    fn the_reference_page_lists_what_the_reader_reads() {
        let section = PAGE
            .split("## Interface commands")
            .nth(1)
            .and_then(|s| s.split("\n## ").next())
            .expect("an Interface commands section");
        let commands: Vec<&str> = section
            .lines()
            .filter(|l| l.starts_with("| `"))
            .flat_map(|l| l.split(" | ").next().unwrap().split(", "))
            .map(|c| c.trim_start_matches("| ").trim_matches('`'))
            .collect();
        assert!(commands.len() > 20, "{commands:?}");
        for word in INTERFACE_COMMAND_WORDS {
            assert!(
                commands.iter().any(|c| c.split(' ').next() == Some(word)),
                "`{word} ...` is read but not in docs/reference/ios.md"
            );
        }
        // N: a count or a VLAN (4), or an MTU (1500).
        let sample = |c: &str, n: &str| {
            c.replace("N mode MODE", "3 mode active")
                .replace("fast\\|normal", "fast")
                .replace(" N", &format!(" {n}"))
                .replace(" LIST", " 1-10,20")
                .replace(" S", " 1000")
                .replace(" D", " full")
                .replace(" M", " physical-port")
                .replace(" ...", " x")
        };
        for c in commands {
            let read = |n| parse(&format!("interface port-channel 3\n {}\n", sample(c, n)));
            let cfg = read("4")
                .or_else(|_| read("1500"))
                .unwrap_or_else(|e| panic!("{c}: {e}"));
            let skipped = matches!(
                c.split(' ').next(),
                Some("description" | "channel-protocol")
            );
            assert_eq!(cfg.unread.len(), usize::from(skipped), "{c} is not read");
        }
    }

    #[test]
    fn storm_control_lines_are_read_not_warned() {
        let cfg = parse(
            "interface gi1/1\n storm-control broadcast level 20.00 10.00\n storm-control multicast level pps 2k\n storm-control unicast level bps 10m\n storm-control action trap\n storm-control unicast level 5\n no storm-control multicast level\n",
        )
        .unwrap();
        let i = &cfg.interfaces[0];
        let b = i.storm_control.level(StormClass::Broadcast).unwrap();
        assert_eq!(
            (b.unit, b.rising, b.falling),
            (StormUnit::Percent, 2000, 1000)
        );
        assert!(i.storm_control.level(StormClass::Multicast).is_none());
        let u = i.storm_control.level(StormClass::Unicast).unwrap();
        assert_eq!(
            (u.unit, u.rising),
            (StormUnit::Percent, 500),
            "the last line wins"
        );
        assert_eq!(i.storm_control_lines[2], Some(6));
        assert_eq!(cfg.warnings().count(), 0, "{:?}", cfg.unread);
        assert_eq!(
            cfg.unread.len(),
            1,
            "storm-control action: read and skipped"
        );
        let e = parse("interface gi1/1\n storm-control broadcast level 120\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.why.contains("storm-control broadcast level"), "{}", e.why);
        // A misspelt class is a warning with a hint.
        let cfg = parse("interface gi1/1\n storm-control brodcast level 20\n").unwrap();
        assert_eq!(cfg.warnings().count(), 1, "{:?}", cfg.unread);
    }

    /// IBM's steps 6, 7 and 11, as typed at the console.
    const IBM: &str = "configure terminal
interface range gigabitethernet 8/4-5
mtu 9216
channel-group 3 mode active
end
configure terminal
interface port-channel 3
switchport access vlan 129
description ?????
mtu 9216
no shut
end
configure terminal
port-channel load-balance src-dst-port
end
";

    #[test]
    fn ibm_console_steps() {
        let c = parse(IBM).unwrap();
        let gi = c.interface("gi8/4").unwrap();
        assert_eq!(gi.mtu.as_ref().unwrap().value, 9216);
        assert_eq!(
            gi.channel_group.as_ref().unwrap().value,
            ChannelGroup {
                number: 3,
                mode: ChannelMode::Active
            }
        );
        assert_eq!(gi.channel_group.as_ref().unwrap().line, 4);
        assert!(c.interface("GigabitEthernet 8/5").is_some());
        let po = c.interface("Po3").unwrap();
        assert_eq!(po.port_channel(), Some(3));
        assert_eq!(po.access_vlan.as_ref().unwrap().value, 129);
        assert!(!po.shutdown.as_ref().unwrap().value);
        assert_eq!(c.load_balance.as_ref().unwrap().value, "src-dst-port");
        assert_eq!(c.channels(), vec![3]);
        assert_eq!(c.members(3).len(), 2);
        assert_eq!(c.unread.len(), 4, "configure terminal and the description");
        assert!(c.warnings().next().is_none(), "{:?}", c.unread);
        assert_eq!(
            c.not_modelled_summary().unwrap(),
            "4 lines outside what lagkit models were skipped (configure, description)"
        );
    }

    #[test]
    fn max_bundle_and_min_links_on_a_port_channel() {
        let c = parse(
            "interface port-channel 3\n lacp max-bundle 2\n port-channel min-links 2\n!\nport-channel load-balance src-ip\n",
        )
        .unwrap();
        let po = c.interface("po3").unwrap();
        assert_eq!(po.lacp_max_bundle.as_ref().unwrap().value, 2);
        assert_eq!(po.min_links.as_ref().unwrap().line, 3);
        assert_eq!(c.load_balance.as_ref().unwrap().value, "src-ip");
        let e = parse("interface po3\n lacp max-bundle 0\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.why.contains("1-16"), "{}", e.why);
        let e = parse("port-channel min-links 2\n").unwrap_err();
        assert!(e.why.contains("outside any interface"), "{}", e.why);
    }

    #[test]
    fn trunks_and_hash_distribution() {
        let c = parse(
            "port-channel hash-distribution adaptive\ninterface gi1/1\n switchport mode trunk\n switchport trunk native vlan 20\n switchport trunk allowed vlan 1-10, 20\n",
        )
        .unwrap();
        assert_eq!(c.hash_distribution.as_ref().unwrap().value, "adaptive");
        let gi = c.interface("gi1/1").unwrap();
        assert_eq!(gi.trunk_native.as_ref().unwrap().value, 20);
        assert_eq!(gi.trunk_allowed.as_ref().unwrap().value, "1-10,20");
        let e = parse("interface gi1/1\n switchport trunk allowed vlan add 30\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.why.contains("not read"), "{}", e.why);
        let e = parse("port-channel hash-distribution even\n").unwrap_err();
        assert!(e.why.contains("fixed or adaptive"));
    }

    /// A running-config of `n` ports, each in a channel of its own with
    /// its port-channel, and lines lagkit skips.
    pub(crate) fn many_ports(n: usize) -> String {
        let mut s = String::from("hostname big\nport-channel load-balance src-dst-ip\n!\n");
        for k in 0..n {
            let (slot, port, ch) = (k / 48 + 1, k % 48 + 1, k + 1);
            s.push_str(&format!(
                "interface GigabitEthernet{slot}/{port}\n description uplink {k}\n mtu 9216\n\
                 channel-group {ch} mode active\n spanning-tree portfast\n!\n\
                 interface Port-channel{ch}\n mtu 9216\n!\n"
            ));
        }
        s
    }

    /// Reading is linear in the configuration: 100,000 ports, each in a
    /// channel of its own (200,000 interfaces, a 12 MB file), read in
    /// about a second unoptimised, where a search of the interfaces per
    /// `interface` line (or of the channels per port) makes 10^10
    /// comparisons, minutes of work (checked: the old search did not
    /// finish in 120 s). The deadline is far above the linear time, so
    /// only a return of the quadratic misses it.
    #[test]
    fn reading_is_linear_in_the_number_of_ports() {
        let text = many_ports(100_000);
        let t = std::time::Instant::now();
        let cfg = parse(&text).unwrap();
        let took = t.elapsed();
        assert_eq!(cfg.interfaces.len(), 200_000);
        let groups = cfg.channel_groups();
        assert_eq!(groups.len(), 100_000);
        let g = &groups[&100_000];
        assert_eq!(g.members[0].name, "GigabitEthernet2084/16");
        assert_eq!(g.port_channel.unwrap().name, "Port-channel100000");
        assert!(
            took < std::time::Duration::from_secs(30),
            "100,000 ports took {took:?}: is reading quadratic again?"
        );
    }

    #[test]
    fn running_config_with_indentation_and_bangs() {
        let c = parse(
            "hostname sw1\n!\ninterface GigabitEthernet1/1\n mtu 1500\n channel-group 1 mode desirable non-silent\n!\n\
             interface GigabitEthernet1/2\n channel-group 1 mode auto\n speed 100\n!\ninterface Port-channel1\n!\nip routing\nmtu 9000\n",
        );
        // `mtu` after a global command (ip routing) is outside any interface.
        let e = c.unwrap_err();
        assert_eq!(e.line, 14);
        assert!(e.why.contains("outside any interface"), "{e}");
        let c = parse("interface Gi1/1\n channel-group 1 mode desirable non-silent\n!\ninterface Gi1/2\n channel-group 1 mode auto\n").unwrap();
        assert_eq!(
            c.interfaces[0].channel_group.as_ref().unwrap().value.mode,
            ChannelMode::Desirable { silent: false }
        );
        assert_eq!(
            c.interfaces[1].channel_group.as_ref().unwrap().value.mode,
            ChannelMode::Auto { silent: true }
        );
        assert_eq!(
            ChannelMode::Desirable { silent: false }.to_string(),
            "desirable non-silent"
        );
    }

    #[test]
    fn names_and_ranges() {
        assert_eq!(canonical("gi 8/4").unwrap(), "GigabitEthernet8/4");
        assert_eq!(canonical("Te1/0/1").unwrap(), "TenGigabitEthernet1/0/1");
        assert_eq!(canonical("po3").unwrap(), "Port-channel3");
        assert_eq!(
            canonical("x9").unwrap_err().to_string(),
            "unknown interface type \"x\" in \"x9\""
        );
        assert!(matches!(
            canonical("gigabitethernet"),
            Err(NameError::NotAName { .. })
        ));
        assert_eq!(
            expand_range("gigabitethernet 8/4 - 5 , gi8/7").unwrap(),
            vec![
                "GigabitEthernet8/4",
                "GigabitEthernet8/5",
                "GigabitEthernet8/7"
            ]
        );
        assert_eq!(
            expand_range("gi8/5 - 4").unwrap_err().to_string(),
            "\"gi8/5 - 4\": a range runs upwards, at most 256 ports (gi8/4 - 5)"
        );
        assert!(matches!(
            expand_range("gi8/1 - x"),
            Err(RangeError::BadEnd { .. })
        ));
        assert!(matches!(
            expand_range("gi8/1, x9"),
            Err(RangeError::Name(NameError::UnknownType { .. }))
        ));
    }

    #[test]
    fn bad_lines_name_the_line_and_the_fix() {
        let e = parse("interface gi1/1\nchannel-group 3 mode sometimes\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.why.contains("use on, active, passive"), "{e}");
        let e = parse("channel-group 3 mode active\n").unwrap_err();
        assert!(e.why.contains("outside any interface"), "{e}");
        let e = parse("interface gi1/1\nmtu 9999999\n").unwrap_err();
        assert!(e.why.contains("outside 64-65535"), "{e}");
        let e = parse("interface gi1/1\nchannel-group 3 mode active non-silent\n").unwrap_err();
        assert!(e.why.contains("PAgP"), "{e}");
        assert_eq!(parse("").unwrap(), Config::default());
    }

    /// A channel-group misspelt and an LACP rate abbreviated: both lines
    /// are kept, with the line, the text and the nearest command, and the
    /// port is in no channel.
    #[test]
    fn typos_are_warnings_with_line_and_hint() {
        let text = "interface GigabitEthernet1/0/1\n switchport mode access\n chanel-group 1 mode active\n lacp rat fast\n";
        let c = parse(text).unwrap();
        assert!(c.channels().is_empty());
        let w: Vec<&Unread> = c.warnings().collect();
        assert_eq!(w.len(), 2, "{w:?}");
        assert_eq!(
            (w[0].line, w[0].text.as_str()),
            (3, "chanel-group 1 mode active")
        );
        assert_eq!(
            w[0].kind,
            UnreadKind::Unknown {
                hint: Some("channel-group".into())
            }
        );
        assert_eq!(
            (w[1].line, &w[1].kind),
            (
                4,
                &UnreadKind::Unknown {
                    hint: Some("lacp rate".into())
                }
            )
        );
        let e = c.strict_errors();
        assert_eq!(e.iter().map(|e| e.line).collect::<Vec<_>>(), vec![3, 4]);
        assert!(
            e[0].why.contains("did you mean `channel-group`?"),
            "{}",
            e[0]
        );
        assert_eq!(c.settings(), 1, "switchport mode access");
    }

    /// A running-config's well-known lines are quiet, an SVI's block is
    /// skipped, not refused.
    #[test]
    fn a_running_config_reads_quietly() {
        let text = "Building configuration...\n\nCurrent configuration : 1234 bytes\n!\nversion 15.2\nlacp system-priority 100\nservice timestamps debug datetime msec\nhostname sw1\n!\nspanning-tree mode rapid-pvst\nvlan 10\n name servers\n!\ninterface GigabitEthernet1/1\n description to server\n switchport access vlan 10\n spanning-tree portfast\n channel-group 1 mode active\n!\ninterface Vlan1\n ip address 10.0.0.2 255.255.255.0\n mtu 1500\n no shutdown\n!\nip default-gateway 10.0.0.1\nend\n";
        let c = parse(text).unwrap();
        assert_eq!(c.warnings().count(), 0, "{:?}", c.unread);
        assert_eq!(c.interfaces.len(), 1, "Vlan1 is not a port");
        assert_eq!(c.channels(), vec![1]);
        let s = c.not_modelled_summary().unwrap();
        assert!(s.starts_with("15 lines outside"), "{s}");
        assert!(
            s.contains("spanning-tree") && s.ends_with("and 5 more)"),
            "{s}"
        );
        assert!(parse("interface Frobnicator1\n").is_err());
    }

    /// What a Catalyst refuses across lines, and load-balance methods it
    /// lacks: refused here, for check and switch alike.
    #[test]
    fn refusals_shared_by_check_and_switch() {
        let e = parse("port-channel load-balance src-dst-prt\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(
            e.why.contains("not a Catalyst method") && e.why.contains("src-dst-port"),
            "{e}"
        );
        assert!(parse("port-channel load-balance SRC-DST-MIXED-IP-PORT\n").is_ok());
        let mixed = "interface gi1/1\n channel-group 1 mode active\ninterface gi1/2\n channel-group 1 mode desirable\n";
        let e = parse(mixed).unwrap_err();
        assert_eq!(e.line, 4);
        assert!(e.why.contains("one channel speaks one protocol"), "{e}");
        assert!(
            e.why.contains("channel-group 1 mode active on every port"),
            "{e}"
        );
        let pagp = "interface range gi1/1 - 2\n channel-group 5 mode desirable\ninterface po5\n lacp max-bundle 2\n";
        let e = parse(pagp).unwrap_err();
        assert_eq!(e.line, 4);
        assert!(e.why.contains("only LACP applies it"), "{e}");
        let e = parse("interface gi1/1\n switchport trunk allowed vlan 10-5\n").unwrap_err();
        assert!(e.why.contains("runs backwards"), "{e}");
        let e = parse("interface gi1/1\n switchport trunk allowed vlan 5000\n").unwrap_err();
        assert!(e.why.contains("outside 1-4094"), "{e}");
    }

    #[test]
    fn vlan_lists_read_as_ios_reads_them() {
        assert_eq!(vlan_ranges("all"), Ok(vec![(1, 4094)]));
        assert_eq!(vlan_ranges("none"), Ok(vec![]));
        assert_eq!(vlan_ranges(" 1-10,20 "), Ok(vec![(1, 10), (20, 20)]));
        assert_eq!(vlan_ranges("10-5"), Err(VlanListError::Backwards(10, 5)));
        assert_eq!(vlan_ranges("4095"), Err(VlanListError::OutOfRange(4095)));
        assert_eq!(vlan_ranges("0"), Err(VlanListError::OutOfRange(0)));
        assert_eq!(
            vlan_ranges("1,,2"),
            Err(VlanListError::NotAnId(String::new()))
        );
        assert_eq!(vlan_ranges("x"), Err(VlanListError::NotAnId("x".into())));
    }
}
