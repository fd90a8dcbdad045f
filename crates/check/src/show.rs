//! A Catalyst's show output, as a terminal session records it.
//!
//! A configuration says what a switch should do; `show etherchannel
//! summary`, `show lacp neighbor` and their kin say what it does: which
//! ports are bundled, suspended or stand-alone, which system and key each
//! port hears as its LACP partner, which rate that partner asks for. An
//! engineer pastes them from a terminal with the prompt and the command
//! (`sw1#sh lacp nei`), several commands in one file, `--More--` remnants
//! and CRLF line ends; this module reads such a file into typed facts,
//! each with its line, so [`crate::crosscheck`] can hold them against the
//! host's bond (`/proc/net/bonding/bondX` or `lagkit status --json`).
//!
//! The layouts are IOS's fixed tables. No crate reads them in Rust (Python
//! has Genie and TextFSM templates), so the reader is hand-written: one
//! small function per command, reading whitespace-separated columns, with
//! every row it cannot read and every command it does not know kept in
//! [`Show::unread`] rather than dropped.

use serde::Serialize;

/// The largest show output read, in bytes (`lagkit_input::SHOW_OUTPUT`,
/// docs/reference/limits.md).
pub const MAX_SHOW_BYTES: usize = lagkit_input::SHOW_OUTPUT.bytes as usize;

/// The show commands the reader knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Command {
    /// `show etherchannel [N] summary`.
    EtherchannelSummary,
    /// `show etherchannel [N] detail`.
    EtherchannelDetail,
    /// `show lacp [N] neighbor`.
    LacpNeighbor,
    /// `show lacp [N] neighbor detail`.
    LacpNeighborDetail,
    /// `show lacp [N] internal`.
    LacpInternal,
    /// `show lacp [N] counters`.
    LacpCounters,
    /// `show lacp sys-id`.
    LacpSysId,
    /// `show pagp [N] neighbor`.
    PagpNeighbor,
    /// `show interfaces [IF] status`.
    InterfacesStatus,
    /// `show interfaces [IF] counters`.
    InterfacesCounters,
    /// `show lldp neighbors`.
    LldpNeighbors,
}

impl Command {
    /// The command in full.
    pub fn name(self) -> &'static str {
        match self {
            Command::EtherchannelSummary => "show etherchannel summary",
            Command::EtherchannelDetail => "show etherchannel detail",
            Command::LacpNeighbor => "show lacp neighbor",
            Command::LacpNeighborDetail => "show lacp neighbor detail",
            Command::LacpInternal => "show lacp internal",
            Command::LacpCounters => "show lacp counters",
            Command::LacpSysId => "show lacp sys-id",
            Command::PagpNeighbor => "show pagp neighbor",
            Command::InterfacesStatus => "show interfaces status",
            Command::InterfacesCounters => "show interfaces counters",
            Command::LldpNeighbors => "show lldp neighbors",
        }
    }
}

/// The show commands read, for messages.
pub const COMMANDS: &str = "show etherchannel summary, show etherchannel [N] detail, show lacp neighbor [detail], show lacp internal, show lacp counters, show lacp sys-id, show pagp neighbor, show interfaces status, show interfaces counters, show lldp neighbors";

/// A value and the line it was read from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct At<T> {
    /// The value.
    pub value: T,
    /// Its line (1-based).
    pub line: usize,
}

fn at<T>(value: T, line: usize) -> At<T> {
    At { value, line }
}

/// What a channel runs, by `show etherchannel summary`'s Protocol column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// LACP.
    Lacp,
    /// PAgP.
    Pagp,
    /// `-`: mode on, no protocol.
    None,
}

/// A member's state by its IOS flag.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemberState {
    /// `P` (or `bndl`): bundled in the port-channel.
    Bundled,
    /// `I` (`indep`): stand-alone, forwarding as a port of its own.
    StandAlone,
    /// `s` (`susp`): suspended.
    Suspended,
    /// `H` (`hot-sby`): hot standby (LACP only).
    HotStandby,
    /// `D` (`down`): down.
    Down,
    /// `w`: waiting to be aggregated.
    Waiting,
    /// `u`: unsuitable for bundling.
    Unsuitable,
    /// A flag the reader does not know, as shown.
    Unknown(String),
}

impl MemberState {
    /// The state of a summary flag (`P`, `s`, ...) or a detail state
    /// (`bndl`, `susp`, ...).
    pub fn parse(flag: &str) -> MemberState {
        match flag {
            "bndl" => return MemberState::Bundled,
            "susp" => return MemberState::Suspended,
            "indep" => return MemberState::StandAlone,
            "hot-sby" => return MemberState::HotStandby,
            "down" => return MemberState::Down,
            _ => {}
        }
        for (c, s) in [
            ('D', MemberState::Down),
            ('s', MemberState::Suspended),
            ('H', MemberState::HotStandby),
            ('I', MemberState::StandAlone),
            ('w', MemberState::Waiting),
            ('u', MemberState::Unsuitable),
            ('P', MemberState::Bundled),
        ] {
            if flag.contains(c) {
                return s;
            }
        }
        MemberState::Unknown(flag.to_string())
    }

    /// How IOS's legend names it.
    pub fn describe(&self) -> String {
        match self {
            MemberState::Bundled => "bundled (P)".into(),
            MemberState::StandAlone => "stand-alone (I)".into(),
            MemberState::Suspended => "suspended (s)".into(),
            MemberState::HotStandby => "hot-standby (H)".into(),
            MemberState::Down => "down (D)".into(),
            MemberState::Waiting => "waiting to be aggregated (w)".into(),
            MemberState::Unsuitable => "unsuitable for bundling (u)".into(),
            MemberState::Unknown(f) => format!("flagged {f}"),
        }
    }
}

/// LACP flags as IOS shows them: `S`/`F` the rate the port asks for,
/// `A`/`P` its activity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LacpFlags {
    /// `F`: asks for fast LACPDUs (every second).
    pub fast: bool,
    /// `A`: active (`P`: passive).
    pub active: bool,
}

impl LacpFlags {
    fn parse(s: &str) -> Option<LacpFlags> {
        let fast = match (s.contains('F'), s.contains('S')) {
            (true, false) => true,
            (false, true) => false,
            _ => return None,
        };
        let active = match (s.contains('A'), s.contains('P')) {
            (true, false) => true,
            (false, true) => false,
            _ => return None,
        };
        Some(LacpFlags { fast, active })
    }
}

/// The switch's own LACP port (`show lacp internal`, the local part of
/// `show etherchannel detail`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LacpLocal {
    /// Rate and activity.
    pub flags: LacpFlags,
    /// `bndl`, `susp`, `indep`, `hot-sby`, `down`.
    pub state: MemberState,
    /// The port's operational key.
    pub oper_key: u16,
    /// Its port number.
    pub port: u16,
    /// Its state octet.
    pub port_state: u8,
    /// The line.
    pub line: usize,
}

/// What the switch port hears from its LACP partner (`show lacp
/// neighbor [detail]`, the partner part of `show etherchannel detail`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LacpPartner {
    /// Rate and activity, when shown.
    pub flags: Option<LacpFlags>,
    /// The partner's system priority, when shown (`detail`).
    pub system_priority: Option<u16>,
    /// The partner's system MAC (`aa:bb:cc:dd:ee:ff`; all zero: none heard).
    pub system: String,
    /// The partner's operational key.
    pub oper_key: u16,
    /// The partner's port number.
    pub port: u16,
    /// The partner's state octet, when shown.
    pub port_state: Option<u8>,
    /// The line.
    pub line: usize,
}

/// What the switch port hears from its PAgP partner (`show pagp neighbor`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PagpPartner {
    /// The partner's name (its hostname).
    pub name: String,
    /// Its device ID (`aa:bb:cc:dd:ee:ff`).
    pub device: String,
    /// Its port.
    pub port: String,
    /// Its flags (`SC`, `A` auto, ...).
    pub flags: String,
    /// The line.
    pub line: usize,
}

/// One member port of a channel, from every command that names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Member {
    /// Its name, canonical (`GigabitEthernet1/0/47`).
    pub name: String,
    /// The first line that names it.
    pub line: usize,
    /// Its state, from the summary's flag or the detail's state.
    pub state: Option<At<MemberState>>,
    /// `show etherchannel detail`'s `Port state = ...`.
    pub port_state: Option<At<String>>,
    /// `show etherchannel detail`'s `Mode = ...` (Active, Passive,
    /// Desirable, Automatic, On).
    pub mode: Option<At<String>>,
    /// The switch's own LACP port.
    pub local: Option<LacpLocal>,
    /// Its LACP partner.
    pub partner: Option<LacpPartner>,
    /// Its PAgP partner.
    pub pagp: Option<PagpPartner>,
    /// LACPDUs sent and received (`show lacp counters`).
    pub lacpdus: Option<At<(u64, u64)>>,
}

/// One channel group.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ShowChannel {
    /// The group number.
    pub number: u32,
    /// Where it is first named.
    pub line: usize,
    /// Its protocol, when shown.
    pub protocol: Option<At<Protocol>>,
    /// The port-channel's flags (`SU`, `SD`, ...), when shown.
    pub flags: Option<At<String>>,
    /// Its members.
    pub members: Vec<Member>,
}

/// One port's row of `show interfaces status`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PortStatus {
    /// Canonical name.
    pub name: String,
    /// `connected`, `notconnect`, `err-disabled`, ...
    pub status: String,
    /// `a-full`, `half`, `auto`, ...
    pub duplex: String,
    /// `a-1000`, `10G`, `auto`, ...
    pub speed: String,
    /// The line.
    pub line: usize,
}

/// One port's rows of `show interfaces counters`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PortCounters {
    /// Canonical name.
    pub name: String,
    /// Octets received, and the line.
    pub in_octets: Option<At<u64>>,
    /// Octets sent, and the line.
    pub out_octets: Option<At<u64>>,
}

/// One row of `show lldp neighbors`: what a switch port hears over LLDP.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LldpNeighbor {
    /// The switch's port, canonical.
    pub port: String,
    /// The neighbour's name (its system name, or its chassis ID).
    pub device: String,
    /// The neighbour's port ID: an interface name, or a MAC (lldpd's
    /// default on Linux is the interface's name, some hosts send its MAC).
    pub port_id: String,
    /// The line.
    pub line: usize,
    /// The host's file the row comes from, when a host's `lldpctl` told
    /// it rather than the switch.
    pub source: Option<String>,
}

/// Why part of a show file was not read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum UnreadWhy {
    /// A show command lagkit does not read (its output is skipped).
    Command,
    /// A command that is not `show` (`terminal length 0`, `conf t`).
    NotShow,
    /// Text before any command that is no output lagkit knows.
    Text,
    /// A row of a command lagkit reads that it could not read (cut short,
    /// or a layout it does not know): it may hide a member.
    Row {
        /// The command.
        command: Command,
    },
}

/// A line (and for a command, the output under it) not read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unread {
    /// The line.
    pub line: usize,
    /// Its text, trimmed.
    pub text: String,
    /// Why.
    #[serde(flatten)]
    pub why: UnreadWhy,
}

impl Unread {
    /// A row that could not be read: worth a warning (it may hide a
    /// member); the rest is only noted.
    pub fn is_warning(&self) -> bool {
        matches!(self.why, UnreadWhy::Row { .. })
    }
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.why {
            UnreadWhy::Command => write!(
                f,
                "`{}`: a show command lagkit does not read (its output is skipped; it reads {COMMANDS})",
                self.text
            ),
            UnreadWhy::NotShow => write!(f, "`{}`: not a show command (skipped)", self.text),
            UnreadWhy::Text => write!(
                f,
                "`{}`: text before any command lagkit reads (skipped)",
                self.text
            ),
            UnreadWhy::Row { command } => write!(
                f,
                "`{}`: a row of `{}` lagkit cannot read (cut short?); paste the command's whole output",
                self.text,
                command.name()
            ),
        }
    }
}

/// Everything one show file held.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Show {
    /// The file.
    pub file: String,
    /// The switch's name, from its prompt.
    pub hostname: Option<String>,
    /// The commands read, and their lines.
    pub commands: Vec<At<Command>>,
    /// The switch's LACP system (`show lacp sys-id`): priority and MAC.
    pub system: Option<At<(u16, String)>>,
    /// Channel groups.
    pub channels: Vec<ShowChannel>,
    /// `show interfaces status` rows.
    pub status: Vec<PortStatus>,
    /// `show interfaces counters` rows.
    pub counters: Vec<PortCounters>,
    /// `show lldp neighbors` rows.
    pub lldp: Vec<LldpNeighbor>,
    /// What was not read.
    pub unread: Vec<Unread>,
}

/// Why a show file could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShowError {
    /// Larger than [`MAX_SHOW_BYTES`].
    #[error("{len} bytes is more show output than lagkit reads (at most {MAX_SHOW_BYTES}): keep only the commands about the channel")]
    TooLarge {
        /// Its size.
        len: usize,
    },
    /// Not text.
    #[error("not a text file (it holds a NUL byte at line {line})")]
    NotText {
        /// The line.
        line: usize,
    },
    /// Nothing in it lagkit reads.
    #[error("no show output lagkit reads (it reads {COMMANDS})")]
    Nothing,
}

impl Show {
    /// This output with what hosts' LLDP daemons hear from this switch
    /// (rows naming it, or every row when the output has no prompt)
    /// added to its LLDP neighbours, the host's interface as the port ID.
    pub fn with_host_lldp(&self, rows: &[&crate::lldp::HostNeighbour]) -> Show {
        let me = self.hostname.as_deref().map(crate::lldp::short_name);
        let mut s = self.clone();
        for n in rows
            .iter()
            .filter(|n| me.as_ref().is_none_or(|m| *m == n.switch))
        {
            s.lldp.push(LldpNeighbor {
                port: n.port.clone(),
                device: n.loc.file.clone(),
                port_id: n.iface.clone(),
                line: n.loc.line.unwrap_or(0),
                source: Some(n.loc.file.clone()),
            });
        }
        s
    }

    /// The channel numbered `n`.
    pub fn channel(&self, n: u32) -> Option<&ShowChannel> {
        self.channels.iter().find(|c| c.number == n)
    }

    /// The status row of port `name` (canonical).
    pub fn status_of(&self, name: &str) -> Option<&PortStatus> {
        self.status.iter().find(|s| s.name == name)
    }

    /// The counters of port `name` (canonical).
    pub fn counters_of(&self, name: &str) -> Option<&PortCounters> {
        self.counters.iter().find(|s| s.name == name)
    }

    fn channel_mut(&mut self, n: u32, line: usize) -> &mut ShowChannel {
        let i = match self.channels.iter().position(|c| c.number == n) {
            Some(i) => i,
            None => {
                self.channels.push(ShowChannel {
                    number: n,
                    line,
                    protocol: None,
                    flags: None,
                    members: Vec::new(),
                });
                self.channels.len() - 1
            }
        };
        &mut self.channels[i]
    }

    fn member_mut(&mut self, n: u32, name: &str, line: usize) -> &mut Member {
        let name = canonical(name);
        let c = self.channel_mut(n, line);
        let i = match c.members.iter().position(|m| m.name == name) {
            Some(i) => i,
            None => {
                c.members.push(Member {
                    name,
                    line,
                    state: None,
                    port_state: None,
                    mode: None,
                    local: None,
                    partner: None,
                    pagp: None,
                    lacpdus: None,
                });
                c.members.len() - 1
            }
        };
        &mut c.members[i]
    }

    fn set_protocol(&mut self, n: u32, p: Protocol, line: usize) {
        let c = self.channel_mut(n, line);
        if c.protocol.is_none() {
            c.protocol = Some(at(p, line));
        }
    }

    fn counters_mut(&mut self, name: &str) -> &mut PortCounters {
        let name = canonical(name);
        let i = match self.counters.iter().position(|c| c.name == name) {
            Some(i) => i,
            None => {
                self.counters.push(PortCounters {
                    name,
                    ..PortCounters::default()
                });
                self.counters.len() - 1
            }
        };
        &mut self.counters[i]
    }

    /// How many facts were read (members, partners, rows).
    pub fn facts(&self) -> usize {
        let m: usize = self
            .channels
            .iter()
            .flat_map(|c| c.members.iter())
            .map(|m| {
                usize::from(m.state.is_some())
                    + usize::from(m.mode.is_some())
                    + usize::from(m.local.is_some())
                    + usize::from(m.partner.is_some())
                    + usize::from(m.pagp.is_some())
                    + usize::from(m.lacpdus.is_some())
            })
            .sum();
        m + self
            .channels
            .iter()
            .filter(|c| c.protocol.is_some())
            .count()
            + usize::from(self.system.is_some())
            + self.status.len()
            + self.counters.len()
            + self.lldp.len()
    }
}

/// The canonical form of an interface name, or the name as shown when it
/// is of a type lagkit's IOS reader does not spell out.
pub fn canonical(name: &str) -> String {
    lagkit_ios::canonical(name).unwrap_or_else(|_| name.to_string())
}

/// A dotted (`0011.2233.4455`) or colon MAC, in colon form.
fn mac(s: &str) -> Option<String> {
    let m: lagkit_wire::MacAddr = s.parse().ok()?;
    Some(m.to_string())
}

/// A MAC in either form (`7038.eeff.50a4`, `70:38:ee:ff:50:a4`) as
/// `70:38:ee:ff:50:a4`; `None` for anything else (an interface name).
pub fn colon_mac(s: &str) -> Option<String> {
    mac(s)
}

/// `0x1F` or `31`.
fn number(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

fn num<T: TryFrom<u64>>(s: &str) -> Option<T> {
    number(s).and_then(|n| T::try_from(n).ok())
}

/// A token that names a port: letters, then a digit, then digits, `/`,
/// `.` or `:` (`Gi1/0/47`, `Po10`, `Te1/1/1.100`).
fn is_port(t: &str) -> bool {
    let letters = t
        .chars()
        .take_while(|c| c.is_ascii_alphabetic() || *c == '-');
    let n = letters.count();
    n >= 1
        && t[n..].starts_with(|c: char| c.is_ascii_digit())
        && t[n..]
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '/' | '.' | ':'))
}

/// A line as the terminal showed it: backspaces and carriage returns
/// replayed (how a pager erases `--More--`), a `--More--` left in the
/// text dropped with what precedes it.
fn clean(raw: &str) -> String {
    let mut buf: Vec<char> = Vec::new();
    let mut cur = 0usize;
    for c in raw.chars() {
        match c {
            '\x08' => cur = cur.saturating_sub(1),
            '\r' => cur = 0,
            c if c.is_control() && c != '\t' => {}
            c => {
                if cur < buf.len() {
                    buf[cur] = c;
                } else {
                    buf.push(c);
                }
                cur += 1;
            }
        }
    }
    let s: String = buf.into_iter().collect();
    let s = match s.rfind("--More--") {
        Some(i) => s[i + "--More--".len()..].trim_start().to_string(),
        None => s,
    };
    s.trim_end().replace('\t', "    ")
}

/// `sw1#rest`, `sw1(config)#rest`, `Switch>rest`: the hostname and what
/// follows the prompt.
fn prompt(line: &str) -> Option<(&str, &str)> {
    let i = line.find(['#', '>'])?;
    let (head, rest) = (&line[..i], &line[i + 1..]);
    let host = match head.find('(') {
        Some(p) if head.ends_with(')') => &head[..p],
        Some(_) => return None,
        None => head,
    };
    let ok = !host.is_empty()
        && host.len() <= 63
        && host.starts_with(|c: char| c.is_ascii_alphanumeric())
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    ok.then_some((host, rest))
}

/// `w` abbreviates `full` (at least `min` letters).
fn abbrev(w: &str, full: &str, min: usize) -> bool {
    w.len() >= min && full.starts_with(&w.to_ascii_lowercase()[..])
}

/// What a command line asks for: a known command, another show command,
/// or not a show command at all.
enum Asked {
    Known(Command, Option<u32>),
    OtherShow,
    NotShow,
}

fn command(text: &str) -> Asked {
    let text = text.split('|').next().unwrap_or("");
    let mut w: Vec<&str> = text.split_whitespace().collect();
    if w.first().is_some_and(|f| f.eq_ignore_ascii_case("do")) {
        w.remove(0);
    }
    if !w.first().is_some_and(|f| abbrev(f, "show", 2)) {
        return Asked::NotShow;
    }
    let w = &w[1..];
    // An optional channel number after the protocol word.
    let split = |rest: &[&str]| -> (Option<u32>, Vec<String>) {
        match rest.first().and_then(|n| n.parse::<u32>().ok()) {
            Some(n) => (Some(n), rest[1..].iter().map(|s| s.to_string()).collect()),
            None => (None, rest.iter().map(|s| s.to_string()).collect()),
        }
    };
    let known = |c| Asked::Known(c, None);
    match w {
        [e, rest @ ..] if abbrev(e, "etherchannel", 3) => {
            let (n, rest) = split(rest);
            let c = match rest.as_slice() {
                [s] if abbrev(s, "summary", 3) => Command::EtherchannelSummary,
                [d] if abbrev(d, "detail", 3) => Command::EtherchannelDetail,
                _ => return Asked::OtherShow,
            };
            Asked::Known(c, n)
        }
        [l, rest @ ..] if abbrev(l, "lacp", 2) => {
            let (n, rest) = split(rest);
            let c = match rest.as_slice() {
                [s] if abbrev(s, "sys-id", 3) => Command::LacpSysId,
                [nb] if abbrev(nb, "neighbor", 3) || abbrev(nb, "neighbors", 3) => {
                    Command::LacpNeighbor
                }
                [nb, d] if abbrev(nb, "neighbor", 3) && abbrev(d, "detail", 3) => {
                    Command::LacpNeighborDetail
                }
                [i] if abbrev(i, "internal", 3) => Command::LacpInternal,
                [c] if abbrev(c, "counters", 1) => Command::LacpCounters,
                _ => return Asked::OtherShow,
            };
            Asked::Known(c, n)
        }
        [p, rest @ ..] if abbrev(p, "pagp", 2) => {
            let (n, rest) = split(rest);
            match rest.as_slice() {
                [nb] if abbrev(nb, "neighbor", 3) || abbrev(nb, "neighbors", 3) => {
                    Asked::Known(Command::PagpNeighbor, n)
                }
                _ => Asked::OtherShow,
            }
        }
        [l, nb] if abbrev(l, "lldp", 2) && abbrev(nb, "neighbors", 3) => {
            known(Command::LldpNeighbors)
        }
        [i, rest @ ..] if abbrev(i, "interfaces", 3) => {
            // `show interfaces status`, or one interface's: `show int gi1/0/1 status`.
            let rest: Vec<&str> = rest.to_vec();
            let last = rest.last().copied().unwrap_or("");
            let ok_middle = (1..=3).contains(&rest.len());
            if ok_middle && abbrev(last, "status", 2) {
                known(Command::InterfacesStatus)
            } else if ok_middle && abbrev(last, "counters", 1) {
                known(Command::InterfacesCounters)
            } else {
                Asked::OtherShow
            }
        }
        _ => Asked::OtherShow,
    }
}

/// A known table's first lines, for output pasted without its command.
fn sniff(lines: &[(usize, String)]) -> Option<Command> {
    let has = |f: &dyn Fn(&str) -> bool| lines.iter().any(|(_, l)| f(l));
    let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    if has(&|l| words(l).starts_with("Group Port-channel Protocol")) {
        Some(Command::EtherchannelSummary)
    } else if has(&|l| words(l).starts_with("Port Flags Priority Dev ID Age")) {
        Some(Command::LacpNeighbor)
    } else if has(&|l| words(l).starts_with("Port System ID Port Number Age Flags")) {
        Some(Command::LacpNeighborDetail)
    } else if has(&|l| words(l).starts_with("Port Name Device ID Port Age Flags")) {
        Some(Command::PagpNeighbor)
    } else if has(&|l| words(l).starts_with("Port Name Status Vlan Duplex Speed")) {
        Some(Command::InterfacesStatus)
    } else if has(&|l| {
        words(l).starts_with("Port InOctets") || words(l).starts_with("Port OutOctets")
    }) {
        Some(Command::InterfacesCounters)
    } else if has(&|l| words(l).starts_with("Device ID Local Intf Hold-time")) {
        Some(Command::LldpNeighbors)
    } else if has(&|l| l.trim_start().starts_with("Group state =")) {
        Some(Command::EtherchannelDetail)
    } else {
        None
    }
}

/// Whether `text` looks like show output: a prompt followed by a show
/// command lagkit reads, or a known table's header. (A configuration
/// pasted under `sw1#show running-config` is not.)
pub fn is_show(text: &str) -> bool {
    let mut n = 0;
    for raw in text.lines() {
        n += 1;
        if n > 20_000 {
            break;
        }
        let l = clean(raw);
        if let Some((_, rest)) = prompt(&l) {
            if matches!(command(rest), Asked::Known(..)) {
                return true;
            }
        }
    }
    let head: Vec<(usize, String)> = text
        .lines()
        .take(200)
        .enumerate()
        .map(|(i, l)| (i + 1, clean(l)))
        .collect();
    sniff(&head).is_some()
}

/// A command line (what it asks, as typed; `None` for text before any),
/// its line, and the lines under it.
type Section = (Option<(Asked, String)>, usize, Vec<(usize, String)>);

/// Reads a show file.
pub fn read(file: &str, text: &str) -> Result<Show, ShowError> {
    if text.len() > MAX_SHOW_BYTES {
        return Err(ShowError::TooLarge { len: text.len() });
    }
    if let Some(i) = text.find('\0') {
        return Err(ShowError::NotText {
            line: text[..i].matches('\n').count() + 1,
        });
    }
    let mut show = Show {
        file: file.to_string(),
        ..Show::default()
    };
    let mut sections: Vec<Section> = vec![(None, 0, Vec::new())];
    for (i, raw) in text.split('\n').enumerate() {
        let line = i + 1;
        let l = clean(raw);
        let asked = match prompt(&l) {
            Some((host, rest)) => {
                if show.hostname.is_none() && !rest.trim().is_empty() {
                    show.hostname = Some(host.to_string());
                }
                Some(rest.trim().to_string())
            }
            // A command pasted without its prompt.
            None if matches!(command(&l), Asked::Known(..)) && !l.starts_with(' ') => {
                Some(l.trim().to_string())
            }
            None => None,
        };
        match asked {
            Some(rest) if rest.is_empty() => sections.push((None, line, Vec::new())),
            Some(rest) => sections.push((Some((command(&rest), rest)), line, Vec::new())),
            None => {
                if let Some(s) = sections.last_mut() {
                    s.2.push((line, l));
                }
            }
        }
    }
    for (asked, line, lines) in sections {
        match asked {
            None => {
                if let Some(c) = sniff(&lines) {
                    show.commands
                        .push(at(c, lines.first().map_or(line, |l| l.0)));
                    parse(&mut show, c, None, &lines);
                } else if let Some((l, t)) = lines.iter().find(|(_, t)| !t.trim().is_empty()) {
                    show.unread.push(Unread {
                        line: *l,
                        text: t.trim().to_string(),
                        why: UnreadWhy::Text,
                    });
                }
            }
            Some((Asked::Known(c, n), _)) => {
                show.commands.push(at(c, line));
                parse(&mut show, c, n, &lines);
            }
            Some((Asked::OtherShow, text)) => show.unread.push(Unread {
                line,
                text,
                why: UnreadWhy::Command,
            }),
            Some((Asked::NotShow, text)) => show.unread.push(Unread {
                line,
                text,
                why: UnreadWhy::NotShow,
            }),
        }
    }
    if show.commands.is_empty() {
        return Err(ShowError::Nothing);
    }
    Ok(show)
}

fn parse(show: &mut Show, c: Command, n: Option<u32>, lines: &[(usize, String)]) {
    let mut bad = |show: &mut Show, line: usize, text: &str| {
        show.unread.push(Unread {
            line,
            text: text.trim().to_string(),
            why: UnreadWhy::Row { command: c },
        })
    };
    match c {
        Command::EtherchannelSummary => summary(show, lines, &mut bad),
        Command::EtherchannelDetail => detail(show, n, lines, &mut bad),
        Command::LacpNeighbor | Command::LacpNeighborDetail | Command::LacpInternal => {
            lacp(show, c, n, lines, &mut bad)
        }
        Command::LacpCounters => lacp_counters(show, n, lines, &mut bad),
        Command::LacpSysId => {
            for (line, l) in lines {
                let t = l.replace(',', " ");
                let w: Vec<&str> = t.split_whitespace().collect();
                if let [p, m] = w.as_slice() {
                    if let (Some(p), Some(m)) = (num::<u16>(p), mac(m)) {
                        show.system = Some(at((p, m), *line));
                        continue;
                    }
                }
                if !l.trim().is_empty() {
                    bad(show, *line, l);
                }
            }
        }
        Command::PagpNeighbor => pagp(show, n, lines, &mut bad),
        Command::InterfacesStatus => status(show, lines, &mut bad),
        Command::InterfacesCounters => counters(show, lines, &mut bad),
        Command::LldpNeighbors => lldp(show, lines, &mut bad),
    }
}

/// `show lldp neighbors`: `Device ID  Local Intf  Hold-time  Capability
/// Port ID`, the capability column empty for some neighbours.
fn lldp(show: &mut Show, lines: &[(usize, String)], bad: &mut Bad) {
    let mut table = false;
    for (line, l) in lines {
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() >= 3 && w[0] == "Device" && w[1] == "ID" {
            table = true;
            continue;
        }
        if !table || w.is_empty() {
            continue;
        }
        if w[0] == "Total" {
            table = false;
            continue;
        }
        // Device ID, Local Intf, Hold-time, [Capability], Port ID.
        let local = w.iter().skip(1).position(|t| is_port(t)).map(|p| p + 1);
        match local {
            Some(i) if w.len() >= i + 3 && w[i + 1].parse::<u32>().is_ok() => {
                show.lldp.push(LldpNeighbor {
                    port: canonical(w[i]),
                    device: w[..i].join(" "),
                    port_id: w[w.len() - 1].to_string(),
                    line: *line,
                    source: None,
                })
            }
            _ => bad(show, *line, l),
        }
    }
}

type Bad<'a> = dyn FnMut(&mut Show, usize, &str) + 'a;

/// `Channel group 10 neighbors`, `Channel group: 10`, `Channel group 10`.
fn group_line(l: &str) -> Option<u32> {
    let r = l.trim_start().strip_prefix("Channel group")?;
    let r = r.trim_start_matches(':').trim_start();
    r.split_whitespace().next()?.parse().ok()
}

/// `Po10(SU)` -> (`Po10`, `SU`).
fn flagged(t: &str) -> Option<(&str, &str)> {
    let (name, rest) = t.split_once('(')?;
    let flags = rest.strip_suffix(')')?;
    (!name.is_empty() && !flags.is_empty()).then_some((name, flags))
}

fn summary(show: &mut Show, lines: &[(usize, String)], bad: &mut Bad) {
    let mut group: Option<u32> = None;
    let mut table = false;
    for (line, l) in lines {
        let line = *line;
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.is_empty() {
            continue;
        }
        if w[0] == "Group" && w.get(1) == Some(&"Port-channel") {
            table = true;
            continue;
        }
        if !table || w[0].starts_with("---") {
            continue;
        }
        let ports: &[&str];
        if let Ok(n) = w[0].parse::<u32>() {
            let Some((_, flags)) = w.get(1).and_then(|t| flagged(t)) else {
                bad(show, line, l);
                group = None;
                continue;
            };
            group = Some(n);
            let c = show.channel_mut(n, line);
            c.flags = Some(at(flags.to_string(), line));
            let mut rest = &w[2..];
            if let Some(p) = rest.first().filter(|t| !t.contains('(')) {
                let proto = match *p {
                    "LACP" => Some(Protocol::Lacp),
                    "PAgP" => Some(Protocol::Pagp),
                    "-" => Some(Protocol::None),
                    _ => None,
                };
                match proto {
                    Some(p) => show.set_protocol(n, p, line),
                    None => {
                        bad(show, line, l);
                        continue;
                    }
                }
                rest = &rest[1..];
            }
            ports = rest;
        } else if w.iter().all(|t| flagged(t).is_some()) && group.is_some() {
            ports = &w;
        } else {
            // A line under the table that is neither a group nor its ports.
            bad(show, line, l);
            continue;
        }
        let Some(n) = group else { continue };
        for p in ports {
            match flagged(p).filter(|(name, _)| is_port(name)) {
                Some((name, flags)) => {
                    let m = show.member_mut(n, name, line);
                    m.state = Some(at(MemberState::parse(flags), line));
                }
                None => bad(show, line, l),
            }
        }
    }
}

/// The rows of `show lacp neighbor`, `show lacp neighbor detail` and
/// `show lacp internal` (and their parts inside `show etherchannel detail`).
fn lacp(show: &mut Show, c: Command, n: Option<u32>, lines: &[(usize, String)], bad: &mut Bad) {
    let mut group = n;
    let mut last: Option<(u32, String)> = None;
    for (line, l) in lines {
        let line = *line;
        if let Some(g) = group_line(l) {
            group = Some(g);
            continue;
        }
        let w: Vec<&str> = l.split_whitespace().collect();
        let Some(first) = w.first() else { continue };
        if c == Command::LacpNeighborDetail && !is_port(first) {
            // `255  0x9  0x3F`: the previous port's priority, key and state.
            if let ([_, k, s], Some((g, name))) = (w.as_slice(), last.as_ref()) {
                if let (Some(k), Some(s)) = (num::<u16>(k), num::<u8>(s)) {
                    let m = show.member_mut(*g, &name.clone(), line);
                    if let Some(p) = m.partner.as_mut() {
                        p.oper_key = k;
                        p.port_state = Some(s);
                    }
                }
            }
            continue;
        }
        if !is_port(first) {
            continue;
        }
        let Some(g) = group else {
            bad(show, line, l);
            continue;
        };
        let ok = match c {
            Command::LacpNeighbor => partner_row(show, g, &w, line),
            Command::LacpNeighborDetail => detail_partner_row(show, g, &w, line),
            _ => local_row(show, g, &w, line),
        };
        if ok {
            show.set_protocol(g, Protocol::Lacp, line);
            last = Some((g, w[0].to_string()));
        } else {
            bad(show, line, l);
        }
    }
}

/// `Gi1/0/47  FA  255  5254.0012.3456  1s  0x0  0x9  0x1  0x3F`.
fn partner_row(show: &mut Show, g: u32, w: &[&str], line: usize) -> bool {
    let [port, flags, _prio, dev, _age, _admin, key, num_, rest @ ..] = w else {
        return false;
    };
    let (Some(system), Some(key), Some(p)) = (mac(dev), num::<u16>(key), num::<u16>(num_)) else {
        return false;
    };
    let state = match rest {
        [] => None,
        [s] => match num::<u8>(s) {
            Some(s) => Some(s),
            None => return false,
        },
        _ => return false,
    };
    show.member_mut(g, port, line).partner = Some(LacpPartner {
        flags: LacpFlags::parse(flags),
        system_priority: None,
        system,
        oper_key: key,
        port: p,
        port_state: state,
        line,
    });
    true
}

/// `Gi1/0/47  32768,5254.0012.3456  0x1  1s  FA` (detail; the key and
/// state follow on a line of their own).
fn detail_partner_row(show: &mut Show, g: u32, w: &[&str], line: usize) -> bool {
    let [port, sys, num_, _age, flags] = w else {
        return false;
    };
    let Some((prio, m)) = sys.split_once(',') else {
        return false;
    };
    let (Some(prio), Some(system), Some(p)) = (num::<u16>(prio), mac(m), num::<u16>(num_)) else {
        return false;
    };
    show.member_mut(g, port, line).partner = Some(LacpPartner {
        flags: LacpFlags::parse(flags),
        system_priority: Some(prio),
        system,
        oper_key: 0,
        port: p,
        port_state: None,
        line,
    });
    true
}

/// `Gi1/0/47  SA  bndl  32768  0xA  0xA  0x130  0x3D`.
fn local_row(show: &mut Show, g: u32, w: &[&str], line: usize) -> bool {
    let [port, flags, state, _prio, _admin, key, num_, st] = w else {
        return false;
    };
    let (Some(f), Some(key), Some(p), Some(st)) = (
        LacpFlags::parse(flags),
        num::<u16>(key),
        num::<u16>(num_),
        num::<u8>(st),
    ) else {
        return false;
    };
    let state = MemberState::parse(state);
    let m = show.member_mut(g, port, line);
    if m.state.is_none() {
        m.state = Some(at(state.clone(), line));
    }
    m.local = Some(LacpLocal {
        flags: f,
        state,
        oper_key: key,
        port: p,
        port_state: st,
        line,
    });
    true
}

/// `Gi1/0/1  host1  5254.0012.3456  eth0  12s  SC  10001`.
fn pagp_row(show: &mut Show, g: u32, w: &[&str], line: usize) -> bool {
    let Some(d) = w
        .iter()
        .skip(1)
        .position(|t| mac(t).is_some())
        .map(|i| i + 1)
    else {
        return false;
    };
    let [port_, after @ ..] = &w[d + 1..] else {
        return false;
    };
    let [age, flags, _cap] = after else {
        return false;
    };
    if !age.ends_with('s') {
        return false;
    }
    let device = mac(w[d]).unwrap_or_default();
    show.member_mut(g, w[0], line).pagp = Some(PagpPartner {
        name: w[1..d].join(" "),
        device,
        port: port_.to_string(),
        flags: flags.to_string(),
        line,
    });
    true
}

fn pagp(show: &mut Show, n: Option<u32>, lines: &[(usize, String)], bad: &mut Bad) {
    let mut group = n;
    for (line, l) in lines {
        if let Some(g) = group_line(l) {
            group = Some(g);
            continue;
        }
        let w: Vec<&str> = l.split_whitespace().collect();
        if !w.first().is_some_and(|f| is_port(f)) {
            continue;
        }
        match group {
            Some(g) if pagp_row(show, g, &w, *line) => show.set_protocol(g, Protocol::Pagp, *line),
            _ => bad(show, *line, l),
        }
    }
}

fn lacp_counters(show: &mut Show, n: Option<u32>, lines: &[(usize, String)], bad: &mut Bad) {
    let mut group = n;
    for (line, l) in lines {
        if let Some(g) = group_line(l) {
            group = Some(g);
            continue;
        }
        let w: Vec<&str> = l.split_whitespace().collect();
        if !w.first().is_some_and(|f| is_port(f)) {
            continue;
        }
        let nums: Option<Vec<u64>> = w[1..].iter().map(|t| t.parse().ok()).collect();
        match (group, nums) {
            (Some(g), Some(v)) if (5..=8).contains(&v.len()) => {
                show.member_mut(g, w[0], *line).lacpdus = Some(at((v[0], v[1]), *line));
                show.set_protocol(g, Protocol::Lacp, *line);
            }
            _ => bad(show, *line, l),
        }
    }
}

/// `show etherchannel [N] detail`: the group's protocol, then each port's
/// state, mode and its local and partner rows.
fn detail(show: &mut Show, n: Option<u32>, lines: &[(usize, String)], bad: &mut Bad) {
    #[derive(PartialEq)]
    enum Part {
        None,
        Local,
        Partner,
    }
    let mut group = n;
    let mut port: Option<String> = None;
    let mut part = Part::None;
    let mut pagp = false;
    for (line, l) in lines {
        let line = *line;
        let t = l.trim();
        let w: Vec<&str> = t.split_whitespace().collect();
        let Some(first) = w.first() else { continue };
        if let Some(g) = t.strip_prefix("Group:").and_then(|r| r.trim().parse().ok()) {
            group = Some(g);
            port = None;
            continue;
        }
        if let Some(p) = t.strip_prefix("Protocol:") {
            if let Some(g) = group {
                let p = p.trim();
                pagp = p.eq_ignore_ascii_case("PAgP");
                let proto = match p {
                    "LACP" => Protocol::Lacp,
                    "PAgP" => Protocol::Pagp,
                    _ => Protocol::None,
                };
                show.set_protocol(g, proto, line);
            }
            continue;
        }
        if let Some(p) = t.strip_prefix("Port:") {
            let p = p.trim();
            match group {
                Some(g) if is_port(p) => {
                    show.member_mut(g, p, line);
                    port = Some(p.to_string());
                }
                _ => bad(show, line, l),
            }
            part = Part::None;
            continue;
        }
        if t.starts_with("Port-channel:") || t.starts_with("Port-channels in the group") {
            port = None;
            part = Part::None;
            continue;
        }
        let (Some(g), Some(p)) = (group, port.clone()) else {
            continue;
        };
        if let Some(s) = t
            .strip_prefix("Port state")
            .and_then(|r| r.trim_start().strip_prefix('='))
        {
            show.member_mut(g, &p, line).port_state = Some(at(s.trim().to_string(), line));
        } else if t.starts_with("Channel group =") {
            if let Some(i) = w.iter().position(|x| *x == "Mode") {
                if let Some(m) = w.get(i + 2) {
                    show.member_mut(g, &p, line).mode = Some(at(m.to_string(), line));
                }
            }
        } else if t.starts_with("Local information") {
            part = Part::Local;
        } else if t.starts_with("Partner's information") {
            part = Part::Partner;
        } else if is_port(first) {
            let ok = match (&part, pagp) {
                (Part::Local, false) => local_row(show, g, &w, line),
                (Part::Partner, false) => partner_row(show, g, &w, line),
                (Part::Partner, true) => pagp_row(show, g, &w, line),
                // PAgP's local row (flags, state, timers): nothing checked.
                (Part::Local, true) => true,
                (Part::None, _) => false,
            };
            if !ok {
                bad(show, line, l);
            }
        }
    }
}

const STATUSES: [&str; 11] = [
    "connected",
    "notconnect",
    "disabled",
    "err-disabled",
    "inactive",
    "suspended",
    "monitoring",
    "sfpAbsent",
    "xcvrAbsen",
    "noXcvr",
    "faulty",
];

fn status(show: &mut Show, lines: &[(usize, String)], bad: &mut Bad) {
    for (line, l) in lines {
        let w: Vec<&str> = l.split_whitespace().collect();
        if !w.first().is_some_and(|f| is_port(f)) {
            continue;
        }
        // The Name column may hold spaces (and any word): the status is
        // the first known word with vlan, duplex and speed after it.
        let i = (1..w.len()).find(|&i| STATUSES.contains(&w[i]) && w.len() >= i + 4);
        match i {
            Some(i) => show.status.push(PortStatus {
                name: canonical(w[0]),
                status: w[i].to_string(),
                duplex: w[i + 2].to_string(),
                speed: w[i + 3].to_string(),
                line: *line,
            }),
            None => bad(show, *line, l),
        }
    }
}

fn counters(show: &mut Show, lines: &[(usize, String)], bad: &mut Bad) {
    let mut out: Option<bool> = None;
    for (line, l) in lines {
        let w: Vec<&str> = l.split_whitespace().collect();
        match w.as_slice() {
            ["Port", "InOctets", ..] => out = Some(false),
            ["Port", "OutOctets", ..] => out = Some(true),
            [p, o, _, _, _] if is_port(p) => match (out, o.parse::<u64>()) {
                (Some(dir), Ok(o)) => {
                    let c = show.counters_mut(p);
                    let v = Some(at(o, *line));
                    if dir {
                        c.out_octets = v;
                    } else {
                        c.in_octets = v;
                    }
                }
                _ => bad(show, *line, l),
            },
            [p, ..] if is_port(p) => bad(show, *line, l),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SESSION: &str = include_str!("../../../examples/check/show-session.txt");
    const SUSPENDED: &str = include_str!("../../../examples/check/show-suspended.txt");
    const PAGP: &str = include_str!("../tests/show/pagp.txt");
    const DETAIL_CRLF: &str = include_str!("../tests/show/lacp-detail-crlf.txt");

    fn member<'a>(s: &'a Show, n: u32, name: &str) -> &'a Member {
        s.channel(n)
            .unwrap_or_else(|| panic!("channel {n}: {s:#?}"))
            .members
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("{name}: {s:#?}"))
    }

    #[test]
    fn a_session_of_six_commands() {
        let s = read("s.txt", SESSION).unwrap();
        assert_eq!(s.hostname.as_deref(), Some("dist-b"));
        let cmds: Vec<(Command, usize)> = s.commands.iter().map(|c| (c.value, c.line)).collect();
        assert_eq!(
            cmds,
            [
                (Command::EtherchannelSummary, 2),
                (Command::LacpNeighbor, 22),
                (Command::LacpSysId, 36),
                (Command::LacpInternal, 38),
                (Command::InterfacesStatus, 48),
                (Command::InterfacesCounters, 55)
            ]
        );
        assert_eq!(
            s.system,
            Some(at((32768, "00:1b:54:c2:7a:80".to_string()), 37))
        );
        let c = s.channel(10).unwrap();
        assert_eq!(c.protocol, Some(at(Protocol::Lacp, 20)));
        assert_eq!(c.flags, Some(at("SU".to_string(), 20)));
        assert_eq!(c.members.len(), 2);
        let m = member(&s, 10, "GigabitEthernet1/0/47");
        assert_eq!(m.state, Some(at(MemberState::Bundled, 20)));
        assert_eq!(
            m.partner,
            Some(LacpPartner {
                flags: Some(LacpFlags {
                    fast: true,
                    active: true
                }),
                system_priority: None,
                system: "02:5a:00:00:0b:01".into(),
                oper_key: 9,
                port: 1,
                port_state: Some(0x3f),
                line: 33,
            })
        );
        let l = m.local.as_ref().unwrap();
        assert_eq!(
            (l.oper_key, l.port, l.port_state, l.line),
            (10, 0x130, 0x3f, 46)
        );
        assert_eq!(l.state, MemberState::Bundled);
        let st = s.status_of("GigabitEthernet1/0/48").unwrap();
        assert_eq!(
            (
                st.status.as_str(),
                st.duplex.as_str(),
                st.speed.as_str(),
                st.line
            ),
            ("connected", "a-full", "a-1000", 53)
        );
        assert_eq!(
            s.status_of("GigabitEthernet1/0/46").unwrap().status,
            "notconnect"
        );
        let k = s.counters_of("GigabitEthernet1/0/48").unwrap();
        assert_eq!(k.in_octets, Some(at(5_877_310_442, 59)));
        assert_eq!(k.out_octets, Some(at(6_689_120_544, 64)));
        assert!(s.counters_of("Port-channel10").is_some());
        // `terminal length 0` and `show clock` are named, not dropped.
        let un: Vec<(usize, &str, bool)> = s
            .unread
            .iter()
            .map(|u| (u.line, u.text.as_str(), u.is_warning()))
            .collect();
        assert_eq!(
            un,
            [(1, "terminal length 0", false), (66, "show clock", false)]
        );
        assert_eq!(
            s.unread[1].to_string(),
            format!("`show clock`: a show command lagkit does not read (its output is skipped; it reads {COMMANDS})")
        );
    }

    #[test]
    fn detail_says_suspended_and_who_the_partner_is() {
        let s = read("d.txt", SUSPENDED).unwrap();
        let m = member(&s, 10, "GigabitEthernet1/0/48");
        assert_eq!(m.line, 33);
        assert_eq!(
            m.port_state,
            Some(at("Up Mstr Assoc Not-in-Bndl".to_string(), 36))
        );
        assert_eq!(m.mode, Some(at("Active".to_string(), 37)));
        let l = m.local.as_ref().unwrap();
        assert_eq!(
            (l.state.clone(), l.port, l.port_state),
            (MemberState::Suspended, 0x131, 7)
        );
        let p = m.partner.as_ref().unwrap();
        assert_eq!(
            (p.system.as_str(), p.port, p.line),
            ("02:5a:00:00:0c:01", 1, 53)
        );
        // The summary that follows says the same, later.
        assert_eq!(m.state, Some(at(MemberState::Suspended, 97)));
        assert_eq!(s.channel(10).unwrap().protocol, Some(at(Protocol::Lacp, 5)));
        // A filtered command (`| include`) is read like the whole one.
        assert_eq!(
            s.counters_of("GigabitEthernet1/0/48").unwrap().in_octets,
            Some(at(381_204, 102))
        );
        assert!(s.unread.is_empty(), "{:#?}", s.unread);
    }

    /// `show etherchannel detail` of every group: each under `Group: N`.
    #[test]
    fn detail_of_every_group() {
        let one = SUSPENDED
            .split("dist-b#sh etherchannel summ")
            .next()
            .unwrap();
        let body = one
            .strip_prefix("dist-b#show etherchannel 10 detail\n")
            .unwrap();
        let all = format!(
            "sw#show etherchannel detail\n                Channel-group listing: \n                ----------------------\n\nGroup: 10 \n----------\n{body}\nGroup: 20 \n----------\n{}",
            body.replace("Gi1/0/4", "Gi2/0/4")
        );
        let s = read("all.txt", &all).unwrap();
        assert_eq!(s.channels.len(), 2, "{s:#?}");
        let m = member(&s, 20, "GigabitEthernet2/0/48");
        assert_eq!(
            m.local.as_ref().map(|l| l.state.clone()),
            Some(MemberState::Suspended)
        );
        assert!(member(&s, 10, "GigabitEthernet1/0/47").partner.is_some());
        assert!(s.unread.is_empty(), "{:#?}", s.unread);
    }

    #[test]
    fn pagp_and_mode_on_channels() {
        let s = read("p.txt", PAGP).unwrap();
        assert_eq!(s.hostname.as_deref(), Some("core-3"));
        let c = s.channel(2).unwrap();
        assert_eq!(c.protocol, Some(at(Protocol::Pagp, 19)));
        let states: Vec<(&str, MemberState)> = c
            .members
            .iter()
            .map(|m| (m.name.as_str(), m.state.clone().unwrap().value))
            .collect();
        assert_eq!(
            states,
            [
                ("GigabitEthernet0/1", MemberState::Bundled),
                ("GigabitEthernet0/2", MemberState::Bundled),
                ("GigabitEthernet0/3", MemberState::StandAlone),
                ("GigabitEthernet0/4", MemberState::Down),
            ]
        );
        assert_eq!(s.channel(7).unwrap().protocol, Some(at(Protocol::None, 21)));
        assert_eq!(
            s.channel(7).unwrap().members[0].name,
            "TenGigabitEthernet1/1"
        );
        let p = member(&s, 2, "GigabitEthernet0/2").pagp.clone().unwrap();
        assert_eq!(
            p,
            PagpPartner {
                name: "srv-p".into(),
                device: "02:aa:00:00:00:01".into(),
                port: "eth1".into(),
                flags: "SC".into(),
                line: 31
            }
        );
    }

    #[test]
    fn crlf_more_and_abbreviations() {
        let s = read("c.txt", DETAIL_CRLF).unwrap();
        assert_eq!(s.hostname.as_deref(), Some("Switch"));
        let cmds: Vec<Command> = s.commands.iter().map(|c| c.value).collect();
        assert_eq!(cmds, [Command::LacpNeighborDetail, Command::LacpCounters]);
        for (name, port, line) in [
            ("GigabitEthernet1/0/1", 1, 12),
            ("GigabitEthernet1/0/2", 2, 24),
        ] {
            let p = member(&s, 1, name).partner.clone().unwrap();
            assert_eq!(
                (
                    p.system.as_str(),
                    p.system_priority,
                    p.oper_key,
                    p.port,
                    p.port_state,
                    p.line
                ),
                ("02:aa:00:00:00:02", Some(65535), 9, port, Some(0x3d), line),
                "{name}"
            );
            assert_eq!(
                p.flags,
                Some(LacpFlags {
                    fast: false,
                    active: true
                })
            );
        }
        assert_eq!(
            member(&s, 1, "GigabitEthernet1/0/2").lacpdus,
            Some(at((8811, 8786), 42))
        );
        assert_eq!(s.unread.len(), 1);
        assert_eq!(s.unread[0].text, "sh spanning-tree summary");
        // The same without CR reads the same.
        let lf = read("c.txt", &DETAIL_CRLF.replace("\r\n", "\n")).unwrap();
        assert_eq!(lf.channels, s.channels);
    }

    #[test]
    fn abbreviated_commands() {
        for (cmd, want) in [
            ("sh eth sum", Command::EtherchannelSummary),
            ("show etherchannel 10 summary", Command::EtherchannelSummary),
            ("sh etherc 3 det", Command::EtherchannelDetail),
            ("sho lacp nei", Command::LacpNeighbor),
            ("show lacp 10 neighbor detail", Command::LacpNeighborDetail),
            ("sh lacp int", Command::LacpInternal),
            ("sh lacp sys", Command::LacpSysId),
            ("sh lacp c", Command::LacpCounters),
            ("do sh pagp 2 nei", Command::PagpNeighbor),
            ("sh int status", Command::InterfacesStatus),
            ("sh int gi1/0/1 status", Command::InterfacesStatus),
            ("sh int counters | i Gi", Command::InterfacesCounters),
            ("sh lldp nei", Command::LldpNeighbors),
        ] {
            assert!(
                matches!(command(cmd), Asked::Known(c, _) if c == want),
                "{cmd}"
            );
        }
        for other in ["sh run", "show version", "sh lacp", "sh int", "sh e sum"] {
            assert!(matches!(command(other), Asked::OtherShow), "{other}");
        }
        assert!(matches!(command("conf t"), Asked::NotShow));
        assert!(matches!(
            command("show lacp 7 neighbor"),
            Asked::Known(Command::LacpNeighbor, Some(7))
        ));
        assert_eq!(
            prompt("sw1(config-if)#do sh lacp nei"),
            Some(("sw1", "do sh lacp nei"))
        );
        assert_eq!(
            prompt("Switch>show pagp neighbor"),
            Some(("Switch", "show pagp neighbor"))
        );
        assert_eq!(prompt("Gi1/0/1  FA  ..#"), None);
    }

    #[test]
    fn a_configuration_under_its_show_command_is_not_show_output() {
        let cfg = "sw1#show running-config\nBuilding configuration...\n!\nhostname sw1\ninterface GigabitEthernet1/0/1\n channel-group 1 mode active\n";
        assert!(!is_show(cfg));
        assert!(matches!(
            crate::facts::read("sw1.cfg", cfg),
            Ok(crate::facts::End::Switch(_))
        ));
        assert!(is_show(&format!("{cfg}sw1#sh lacp nei\n")));
    }

    #[test]
    fn output_pasted_without_its_command() {
        let t = "Group  Port-channel  Protocol    Ports\n------+-------------+-----------+----------\n1      Po1(SD)         LACP      Gi1/0/1(s)  Gi1/0/2(w)\n";
        assert!(is_show(t));
        let s = read("x", t).unwrap();
        assert_eq!(s.commands, [at(Command::EtherchannelSummary, 1)]);
        assert_eq!(
            member(&s, 1, "GigabitEthernet1/0/2").state,
            Some(at(MemberState::Waiting, 3))
        );
    }

    #[test]
    fn truncated_rows_are_named_not_dropped() {
        let t = "sw#show lacp neighbor\nChannel group 1 neighbors\nPort      Flags   Priority  Dev ID          Age    key    Key    Number  State\nGi1/0/1   SA      255       0011.2233.4455   1s    0x0    0x9    0x1     0x3D\nGi1/0/2   SA      255       0011.22\nsw#show etherchannel summary\nGroup  Port-channel  Protocol    Ports\n1      Po1(SU)         LACP      Gi1/0/1(P)  Gi1/0\nsw#show interfaces status\nPort Name Status Vlan Duplex Speed Type\nGi1/0/1    connec\n";
        let s = read("t", t).unwrap();
        let rows: Vec<(usize, Command)> = s
            .unread
            .iter()
            .filter_map(|u| match u.why {
                UnreadWhy::Row { command } => Some((u.line, command)),
                _ => None,
            })
            .collect();
        assert_eq!(
            rows,
            [
                (5, Command::LacpNeighbor),
                (8, Command::EtherchannelSummary),
                (11, Command::InterfacesStatus)
            ]
        );
        assert!(s.unread.iter().all(Unread::is_warning));
        assert!(
            s.unread[0].to_string().contains("cut short"),
            "{}",
            s.unread[0]
        );
        // What was whole is still read.
        assert!(member(&s, 1, "GigabitEthernet1/0/1").partner.is_some());
    }

    #[test]
    fn garbage_and_limits_are_typed_errors() {
        assert_eq!(read("g", "hello\nworld\n"), Err(ShowError::Nothing));
        assert_eq!(read("g", ""), Err(ShowError::Nothing));
        assert_eq!(
            read("g", "sw#conf t\nsw(config)#end\n"),
            Err(ShowError::Nothing)
        );
        assert_eq!(
            read("g", "sw#show lacp nei\nabc\0"),
            Err(ShowError::NotText { line: 2 })
        );
        let big = "x".repeat(MAX_SHOW_BYTES + 1);
        assert_eq!(
            read("g", &big),
            Err(ShowError::TooLarge {
                len: MAX_SHOW_BYTES + 1
            })
        );
        assert!(ShowError::TooLarge { len: 5 }
            .to_string()
            .contains("at most 4194304"));
        // Odd bytes in rows: no panic, rows named.
        for t in [
            "sw#sh lacp nei\nChannel group 99999999999 neighbors\nGi1/0/1 SA 1 0011.2233.4455 1s 0x0 0xFFFFFFFF 0x1 0x3D\n",
            "sw#sh eth sum\nGroup  Port-channel\n1 Po1(\n( ) (\n",
            "sw#sh int counters\nGi1/0/1 1 2 3 4\n",
            "sw#sh lacp nei det\nChannel group 1\n 1 2 3\nGi1/0/1 1,x 0x1 1s SA\n",
            "\u{8}\u{8}\r--More--\nsw#sh etherchannel 1 detail\nPort: Gi1/0/1\nLocal information:\nGi1/0/1 SA\n",
        ] {
            let s = read("f", t).unwrap();
            assert!(!s.unread.is_empty(), "{t}: {s:#?}");
        }
    }

    /// The `check_show` fuzz target's corpus (fuzz/corpus, replayed here
    /// because cargo-fuzz needs a nightly toolchain): none panics, and the
    /// seeds that are whole samples still read.
    #[test]
    fn the_fuzz_corpus_reads_without_a_panic() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus/check_show");
        let files: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .map(|f| f.unwrap().path())
            .collect();
        assert!(files.len() >= 40, "{dir} holds only {} files", files.len());
        let mut read_ok = 0;
        for f in &files {
            let data = std::fs::read(f).unwrap();
            if read("c", &String::from_utf8_lossy(&data)).is_ok() {
                read_ok += 1;
            }
            crate::fuzz_show(&data);
        }
        assert!(
            read_ok >= 30,
            "only {read_ok} corpus files read as show output"
        );
    }

    #[test]
    fn clean_replays_the_pager() {
        assert_eq!(clean(" --More-- \u{8}\u{8}\u{8}\u{8}\u{8}\u{8}\u{8}\u{8}\u{8}\u{8}          \u{8}\u{8}\u{8}\u{8}\u{8}\u{8}\u{8}\u{8}\u{8}\u{8}Gi1/0/2  P\r"), "Gi1/0/2  P");
        assert_eq!(clean(" --More--   Gi1/0/2(P)"), "Gi1/0/2(P)");
        assert_eq!(clean("a\tb\r"), "a    b");
    }
}
