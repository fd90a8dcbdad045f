//! What can be wrong with a config file, and where.
//!
//! A bond that fails to come up at boot is debugged from one log line, so
//! every error carries the file, line and column, the key as the user wrote
//! it, what is wrong and how to fix it, and displays as
//! `bond.toml:4:1: key 'mode': unknown mode 'balance-foo'; use one of ...`.
//! The kinds are an enum (not strings) so tests and tools can match on them.

use core::fmt;
use std::net::IpAddr;
use std::path::PathBuf;

use lagkit_hash::ParsePolicyError;

use crate::enums::{Mode, ParseEnumError};
use crate::quote::{Bare, Quoted};

/// Why a config could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read (missing, unreadable).
    #[error("{}: cannot read the config file: {source}; check the path and its permissions", file.display())]
    Read {
        /// The path given.
        file: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than any bond configuration
    /// ([`lagkit_input::BOND_CONFIG`]): refused before it is parsed.
    #[error(transparent)]
    TooLarge(lagkit_input::InputError),
    /// The file was read but is not a valid config.
    #[error("{0}")]
    Invalid(Box<InvalidConfig>),
}

impl ConfigError {
    /// The details of an invalid file; `None` for a read error.
    pub fn invalid(&self) -> Option<&InvalidConfig> {
        match self {
            ConfigError::Invalid(i) => Some(i),
            ConfigError::Read { .. } | ConfigError::TooLarge(_) => None,
        }
    }

    /// The 1-based line of the offending text, if the file was read.
    pub fn line(&self) -> Option<usize> {
        self.invalid().map(|i| i.line)
    }

    /// The 1-based column (in characters), if the file was read.
    pub fn column(&self) -> Option<usize> {
        self.invalid().map(|i| i.column)
    }

    /// The key at fault, as written in the file.
    pub fn key(&self) -> Option<&str> {
        self.invalid().and_then(|i| i.key.as_deref())
    }

    /// What is wrong, if the file was read.
    pub fn kind(&self) -> Option<&ErrorKind> {
        self.invalid().map(|i| &i.kind)
    }
}

/// An invalid config: where, which key, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidConfig {
    /// The file name as given to the parser.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// The key at fault, as written (absent for file-level problems).
    pub key: Option<String>,
    /// The bond the problem belongs to, in a file of bond tables (a
    /// single-bond file needs no such reminder).
    pub bond: Option<String>,
    /// What is wrong, with the fix.
    pub kind: ErrorKind,
}

impl fmt::Display for InvalidConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: ", self.file, self.line, self.column)?;
        if let Some(bond) = &self.bond {
            write!(f, "bond {}: ", Quoted(bond))?;
        }
        if let Some(key) = &self.key {
            write!(f, "key {}: ", Quoted(key))?;
        }
        write!(f, "{}", self.kind)
    }
}

impl std::error::Error for InvalidConfig {}

/// Why a MAC address value is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacProblem {
    /// Not six hex octets.
    Syntax,
    /// A group address.
    Multicast,
    /// All zeros.
    Zero,
}

/// Why an interface address (`address`) is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CidrProblem {
    /// Not `ADDRESS/PREFIX`.
    Syntax,
    /// An address without `/PREFIX`.
    NoPrefix,
    /// A prefix longer than the address.
    PrefixTooLong {
        /// 32 or 128.
        max: u8,
    },
    /// `0.0.0.0` or `::`.
    Unspecified,
    /// A multicast or broadcast address.
    NotUnicast,
}

/// Why a probe target (`arp_ip_target`, `ns_ip6_target`, `netaddr`) is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetProblem {
    /// Not an IPv4 address.
    NotIpv4,
    /// Not an IPv6 address.
    NotIpv6,
    /// An address Linux refuses as a target (zero network, broadcast, multicast, `::`).
    Unusable,
}

/// Why an interface name is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameProblem {
    /// Empty.
    Empty,
    /// More than 15 bytes (Linux `IFNAMSIZ` - 1).
    TooLong,
    /// A character Linux forbids (`/`, `:`, whitespace) or a control character.
    BadChar(char),
    /// `.` or `..`.
    Dots,
}

/// Why a `control_socket` path is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathProblem {
    /// Not starting with `/`.
    NotAbsolute,
    /// Longer than a Unix socket address holds (107 bytes).
    TooLong,
}

/// What is wrong with a config, and how to fix it (the `Display` says both).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The file is not text: a byte that is not UTF-8, or a NUL.
    NotText {
        /// Offset of the first such byte from the start of the file.
        offset: usize,
        /// That byte.
        byte: u8,
    },
    /// The text is not valid TOML.
    Syntax {
        /// The TOML parser's description.
        message: String,
    },
    /// The file names no bond.
    NoBond,
    /// A key no option has.
    UnknownKey {
        /// The closest known key, if one is close.
        suggestion: Option<String>,
        /// A specific explanation for a key from another system.
        hint: Option<&'static str>,
    },
    /// A value of the wrong TOML type.
    WrongType {
        /// What the key takes.
        expected: &'static str,
        /// The TOML type found.
        found: &'static str,
        /// A correct line, e.g. `miimon = 100`.
        example: String,
    },
    /// A name-valued option given a name it does not have.
    UnknownValue(ParseEnumError),
    /// An unknown transmit hash policy.
    Policy(ParsePolicyError),
    /// Not a whole number.
    NotANumber {
        /// The value given.
        value: String,
        /// A correct line.
        example: String,
    },
    /// A number outside the key's range.
    OutOfRange {
        /// The value given.
        value: String,
        /// Smallest allowed.
        min: u64,
        /// Largest allowed.
        max: u64,
    },
    /// Not a yes/no value.
    NotABool {
        /// The value given.
        value: String,
    },
    /// A refused MAC address.
    BadMac {
        /// The value given.
        value: String,
        /// Why.
        problem: MacProblem,
    },
    /// A refused interface address.
    BadCidr {
        /// The value given.
        value: String,
        /// Why.
        problem: CidrProblem,
    },
    /// A refused probe target.
    BadTarget {
        /// The value given.
        value: String,
        /// Why.
        problem: TargetProblem,
    },
    /// A refused interface name.
    BadName {
        /// The value given.
        value: String,
        /// Why.
        problem: NameProblem,
    },
    /// A refused socket path.
    BadPath {
        /// The value given.
        value: String,
        /// Why.
        problem: PathProblem,
    },
    /// A `metrics_listen` that is neither ADDRESS:PORT nor a port.
    BadListen {
        /// The value given.
        value: String,
    },
    /// A list longer than allowed.
    TooMany {
        /// What the list holds, e.g. `ARP targets`.
        what: &'static str,
        /// How many were given.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// The same element twice in one list.
    Duplicate {
        /// The element.
        value: String,
        /// Where it first appears.
        first_line: usize,
    },
    /// A required key is absent.
    Missing {
        /// A line to add.
        example: &'static str,
    },
    /// The same option under two spellings (e.g. `members` and `adapter_names`).
    GivenTwice {
        /// The other spelling.
        other: String,
        /// Its line.
        line: usize,
    },
    /// A bond's entry is not a table.
    NotATable {
        /// The TOML type found.
        found: &'static str,
    },
    /// `name` at the top of a file that also has bond tables.
    NameAtTop {
        /// Line of the first bond table.
        table_line: usize,
    },
    /// A `[NAME]` table whose `name` key says otherwise.
    NameMismatch {
        /// The table's name.
        table: String,
        /// The `name` value.
        name: String,
    },
    /// Two bonds with one name.
    DuplicateBond {
        /// The name.
        name: String,
        /// Where it was first defined.
        first_line: usize,
    },
    /// `members` is empty.
    EmptyMembers,
    /// The bond lists itself as a member (or backup adapter).
    MemberIsBond {
        /// The bond's name.
        name: String,
    },
    /// One interface in two bonds.
    MemberInTwoBonds {
        /// The interface.
        member: String,
        /// The bond that has it first.
        other_bond: String,
        /// Where.
        other_line: usize,
    },
    /// `primary` names an interface that is not a member.
    PrimaryNotMember {
        /// The primary given.
        primary: String,
        /// The members, comma-separated.
        members: String,
    },
    /// `offloads = { NAME = false }` names an interface the bond does not have.
    OffloadsNotMember {
        /// The interface named.
        name: String,
        /// The members (and backup adapter), comma-separated.
        members: String,
    },
    /// A per-member table (`ad_actor_port_prio = { ... }`) names an
    /// interface that is not a member.
    NotAMember {
        /// The key.
        key: &'static str,
        /// The interface named.
        name: String,
        /// The members, comma-separated.
        members: String,
    },
    /// `backup_adapter` is also a member.
    BackupIsMember {
        /// The adapter.
        backup: String,
    },
    /// ARP monitoring in a mode where Linux refuses it.
    ArpNotAllowed {
        /// The mode.
        mode: Mode,
    },
    /// `arp_interval` without a target.
    ArpWithoutTarget,
    /// `pagp` in a mode other than balance-xor and active-backup.
    PagpNotAllowed {
        /// The mode.
        mode: Mode,
    },
    /// `adaptive` with a policy that has no buckets.
    AdaptiveNeedsStrong {
        /// The policy given.
        policy: String,
    },
    /// The seed given twice, differently.
    SeedConflict {
        /// In `xmit_hash_policy`.
        in_policy: u64,
        /// In `hash_seed`.
        hash_seed: u64,
    },
    /// `strong:symmetric` with `hash_symmetric = false`.
    SymmetricConflict,
    /// `min_links` above `max_bundle`.
    MinLinksAboveMaxBundle {
        /// `min_links`.
        min_links: u32,
        /// `max_bundle`.
        max_bundle: u16,
    },
    /// `netaddr` (the address to ping) is one of the bond's own addresses.
    NetaddrIsOwn {
        /// The address.
        addr: IpAddr,
    },
    /// Two bonds with one control socket.
    SocketClash {
        /// The bond that has it first.
        other_bond: String,
        /// Where.
        other_line: usize,
    },
    /// Two bonds with one metrics address (or one port, one of them on
    /// every address).
    PortClash {
        /// The bond that has it first.
        other_bond: String,
        /// Where.
        other_line: usize,
    },
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::NotText { offset, byte } => write!(
                f,
                "not a text file (byte {offset} is {byte:#04x}); a bond config is TOML text: \
                 check that the path names the config file, not a binary or compressed one"
            ),
            ErrorKind::Syntax { message } if message == "duplicate key" => write!(
                f,
                "invalid TOML: duplicate key; this key or table is already defined above: \
                 remove or rename one"
            ),
            ErrorKind::Syntax { message } => {
                write!(
                    f,
                    "invalid TOML: {message}; fix the syntax at this position"
                )
            }
            ErrorKind::NoBond => write!(
                f,
                "the file describes no bond; start with name = \"bond0\", mode = \"802.3ad\" \
                 and members = [\"eth1\", \"eth2\"]"
            ),
            ErrorKind::UnknownKey {
                hint: Some(hint), ..
            } => write!(f, "unknown key; {hint}"),
            ErrorKind::UnknownKey {
                suggestion: Some(s),
                ..
            } => write!(
                f,
                "unknown key; did you mean '{s}'? (unknown keys are refused, never ignored)"
            ),
            ErrorKind::UnknownKey { .. } => write!(
                f,
                "unknown key; remove it (lagkit refuses keys it does not know rather than \
                 ignore them; the options are listed in the lagkit-bondcfg documentation)"
            ),
            ErrorKind::WrongType {
                expected,
                found,
                example,
            } => write!(
                f,
                "expected {expected}, found {found}; write e.g. {example}"
            ),
            ErrorKind::UnknownValue(e) => write!(f, "{e}"),
            ErrorKind::Policy(e) => write!(f, "{e}"),
            ErrorKind::NotANumber { value, example } => {
                write!(
                    f,
                    "{value_q} is not a whole number; write e.g. {example}",
                    value_q = Quoted(value)
                )
            }
            ErrorKind::OutOfRange { value, min, max } => {
                write!(
                    f,
                    "{value_b} is out of range; use a value from {min} to {max}",
                    value_b = Bare(value)
                )
            }
            ErrorKind::NotABool { value } => write!(
                f,
                "{value_q} is not a yes/no value; use true or false (yes/no, on/off and 1/0 \
                 work too)",
                value_q = Quoted(value)
            ),
            ErrorKind::BadMac { value, problem } => match problem {
                MacProblem::Syntax => write!(
                    f,
                    "{value_q} is not a MAC address; write six hex octets like 02:00:00:00:00:01",
                    value_q = Quoted(value)
                ),
                MacProblem::Multicast => write!(
                    f,
                    "{value_b} is a multicast address; use a unicast one (first octet even), \
                     e.g. 02:00:00:00:00:01",
                    value_b = Bare(value)
                ),
                MacProblem::Zero => {
                    write!(
                    f,
                    "{value_b} is not a usable address; use e.g. 02:00:00:00:00:01, or leave the \
                     key out to use the first member's", value_b = Bare(value))
                }
            },
            ErrorKind::BadCidr { value, problem } => match problem {
                CidrProblem::Syntax => write!(
                    f,
                    "{value_q} is not an address with a prefix length; write e.g. 10.0.0.1/24 \
                     or fd00::1/64",
                    value_q = Quoted(value)
                ),
                CidrProblem::NoPrefix => {
                    let len = if value.contains(':') { 64 } else { 24 };
                    write!(
                        f,
                        "{value_q} has no prefix length; write it with one, e.g. {}/{len}",
                        value.trim(),
                        value_q = Quoted(value)
                    )
                }
                CidrProblem::PrefixTooLong { max } => {
                    write!(
                        f,
                        "the prefix length of {value_q} must be 0 to {max}",
                        value_q = Quoted(value)
                    )
                }
                CidrProblem::Unspecified => write!(
                    f,
                    "{value_q} is the unspecified address; write the bond's own address",
                    value_q = Quoted(value)
                ),
                CidrProblem::NotUnicast => write!(
                    f,
                    "{value_q} is a multicast or broadcast address; write the bond's own \
                     unicast address",
                    value_q = Quoted(value)
                ),
            },
            ErrorKind::BadTarget { value, problem } => match problem {
                TargetProblem::NotIpv4 => write!(
                    f,
                    "{value_q} is not an IPv4 address; write a dotted address like 192.0.2.1",
                    value_q = Quoted(value)
                ),
                TargetProblem::NotIpv6 => {
                    write!(
                        f,
                        "{value_q} is not an IPv6 address; write one like fd00::1",
                        value_q = Quoted(value)
                    )
                }
                TargetProblem::Unusable => write!(
                    f,
                    "{value_q} cannot be probed (Linux refuses zero, broadcast and multicast \
                     targets); use a host that answers, such as the default gateway",
                    value_q = Quoted(value)
                ),
            },
            ErrorKind::BadName { value, problem } => match problem {
                NameProblem::Empty => {
                    write!(f, "an empty interface name; write a name like eth1")
                }
                NameProblem::TooLong => write!(
                    f,
                    "{value_q} is {} bytes long; Linux interface names have at most 15",
                    value.len(),
                    value_q = Quoted(value)
                ),
                NameProblem::BadChar(c) => write!(
                    f,
                    "{value_q} contains {c:?}, which Linux forbids in interface names; use \
                     letters, digits, '.', '-' or '_'",
                    value_q = Quoted(value)
                ),
                NameProblem::Dots => {
                    write!(
                        f,
                        "{value_q} is not an interface name; write a name like eth1",
                        value_q = Quoted(value)
                    )
                }
            },
            ErrorKind::BadListen { value } => write!(
                f,
                "{value_q} is not an address and port; write ADDRESS:PORT with a port from 1 \
                 to 65535, such as \"127.0.0.1:9464\", \"[::1]:9464\" or \"0.0.0.0:9464\", or \
                 a port alone for 127.0.0.1",
                value_q = Quoted(value)
            ),
            ErrorKind::BadPath { value, problem } => match problem {
                PathProblem::NotAbsolute => write!(
                    f,
                    "{value_q} is a relative path; write an absolute one such as \
                     /run/lagkit/bond0.sock, or leave the key out for the default",
                    value_q = Quoted(value)
                ),
                PathProblem::TooLong => write!(
                    f,
                    "{value_q} is {} bytes; a Unix socket path holds at most 107: use a \
                     shorter one",
                    value.len(),
                    value_q = Quoted(value)
                ),
            },
            ErrorKind::TooMany { what, count, max } => write!(
                f,
                "{count} {what} given, at most {max} allowed; remove {}",
                count.saturating_sub(*max)
            ),
            ErrorKind::Duplicate { value, first_line } => write!(
                f,
                "{value_q} is listed twice (also on line {first_line}); remove one",
                value_q = Quoted(value)
            ),
            ErrorKind::Missing { example } => {
                write!(f, "missing; every bond needs it: add e.g. {example}")
            }
            ErrorKind::GivenTwice { other, line } => write!(
                f,
                "the same option is also set as {other_q} on line {line}; keep one of them",
                other_q = Quoted(other)
            ),
            ErrorKind::NotATable { found } => write!(
                f,
                "expected a table of options for one bond, found {found}; write one [NAME] \
                 table or one [[bond]] table per bond"
            ),
            ErrorKind::NameAtTop { table_line } => write!(
                f,
                "a top-level name cannot be used together with bond tables (the first is on \
                 line {table_line}): each table names its bond; move this bond's keys into its \
                 own table"
            ),
            ErrorKind::NameMismatch { table, name } => write!(
                f,
                "the table [{table_b}] names this bond but name = {name_q}; remove name or make it \
                 {table_q}", name_q = Quoted(name), table_b = Bare(table), table_q = Quoted(table)),
            ErrorKind::DuplicateBond { name, first_line } => write!(
                f,
                "a bond named {name_q} is already defined on line {first_line}; rename one of \
                 them or merge the two",
                name_q = Quoted(name)
            ),
            ErrorKind::EmptyMembers => write!(
                f,
                "no members; list the interfaces to aggregate, e.g. members = [\"eth1\", \"eth2\"]"
            ),
            ErrorKind::MemberIsBond { name } => write!(
                f,
                "{name_q} is the bond itself; list the physical interfaces it aggregates",
                name_q = Quoted(name)
            ),
            ErrorKind::MemberInTwoBonds {
                member,
                other_bond,
                other_line,
            } => write!(
                f,
                "{member_q} is already in bond {other_bond_q} (line {other_line}); an interface \
                 can belong to one bond only: remove it from one of them",
                member_q = Quoted(member),
                other_bond_q = Quoted(other_bond)
            ),
            ErrorKind::PrimaryNotMember { primary, members } => write!(
                f,
                "primary {primary_q} is not a member; use one of {members}, or add it to members",
                primary_q = Quoted(primary)
            ),
            ErrorKind::OffloadsNotMember { name, members } => write!(
                f,
                "{name_q} is not a member of this bond; name one of {members} \
                 (offloads = {{ {first} = false }}), or write offloads = false for every member",
                name_q = Quoted(name),
                first = members.split(", ").next().unwrap_or("eth1")
            ),
            ErrorKind::NotAMember { key, name, members } => write!(
                f,
                "{name_q} is not a member of this bond; name one of {members} \
                 ({key} = {{ {first} = 100 }})",
                name_q = Quoted(name),
                first = members.split(", ").next().unwrap_or("eth1")
            ),
            ErrorKind::BackupIsMember { backup } => write!(
                f,
                "{backup_q} is also in members; a backup adapter carries traffic only after \
                 every member has failed (as on AIX), so list it in one place: remove it from \
                 members or drop backup_adapter",
                backup_q = Quoted(backup)
            ),
            ErrorKind::ArpNotAllowed { mode } => write!(
                f,
                "Linux refuses ARP monitoring in {mode} mode; set arp_interval = 0 and use \
                 miimon (or netlink carrier events, miimon = 0); for an AIX-style reachability \
                 check use netaddr"
            ),
            ErrorKind::PagpNotAllowed { mode: Mode::Lacp } => write!(
                f,
                "802.3ad runs LACP, not PAgP: a Cisco channel in mode active or passive \
                 speaks LACP to this bond; remove pagp, or for a PAgP channel (mode desirable \
                 or auto) use mode balance-xor or active-backup with pagp"
            ),
            ErrorKind::PagpNotAllowed { mode } => write!(
                f,
                "PAgP runs only in the static modes balance-xor (AIX standard) and \
                 active-backup, not in {mode}; remove pagp or use one of those modes"
            ),
            ErrorKind::ArpWithoutTarget => write!(
                f,
                "ARP monitoring is on but there is nothing to probe; add arp_ip_target = \
                 [\"192.0.2.1\"] (or netaddr), or set arp_interval = 0"
            ),
            ErrorKind::AdaptiveNeedsStrong { policy } => write!(
                f,
                "adaptive mode moves the buckets of the strong hash and {policy_q} has none; use \
                 xmit_hash_policy = \"strong\", or mode = \"balance-xor\" to keep {policy_q}",
                policy_q = Quoted(policy)
            ),
            ErrorKind::SeedConflict {
                in_policy,
                hash_seed,
            } => write!(
                f,
                "xmit_hash_policy sets seed={in_policy} but hash_seed = {hash_seed}; give the \
                 seed in one place"
            ),
            ErrorKind::SymmetricConflict => write!(
                f,
                "xmit_hash_policy says symmetric but hash_symmetric = false; keep one of them"
            ),
            ErrorKind::MinLinksAboveMaxBundle {
                min_links,
                max_bundle,
            } => write!(
                f,
                "min_links = {min_links} exceeds max_bundle = {max_bundle}, so the bond could \
                 never come up; lower min_links or raise max_bundle"
            ),
            ErrorKind::NetaddrIsOwn { addr } => write!(
                f,
                "{addr} is the bond's own address; netaddr is the address to ping (AIX \
                 EtherChannel's netaddr), not the interface's (AIX en's netaddr): keep the \
                 interface address in address and put a host that answers, such as the gateway, \
                 in netaddr"
            ),
            ErrorKind::SocketClash {
                other_bond,
                other_line,
            } => write!(
                f,
                "bond {other_bond_q} uses the same path (line {other_line}); give each bond its \
                 own control_socket, or leave it out for the per-bond default",
                other_bond_q = Quoted(other_bond)
            ),
            ErrorKind::PortClash {
                other_bond,
                other_line,
            } => {
                write!(
                    f,
                    "bond {other_bond_q} listens on the same metrics address (line {other_line}); \
                 give each bond its own port in metrics_listen (or metrics_port)",
                    other_bond_q = Quoted(other_bond)
                )
            }
        }
    }
}

/// A config that loads but has options with no effect, or values adjusted
/// as Linux adjusts them. The daemon logs these and carries on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// The file name as given to the parser.
    pub file: String,
    /// 1-based line of the key.
    pub line: usize,
    /// 1-based column of the key.
    pub column: usize,
    /// The bond concerned.
    pub bond: String,
    /// The key, as written.
    pub key: String,
    /// What is odd, and what to do.
    pub kind: WarningKind,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: bond {}: key {}: {}",
            self.file,
            self.line,
            self.column,
            Quoted(&self.bond),
            Quoted(&self.key),
            self.kind
        )
    }
}

/// What a [`Warning`] is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WarningKind {
    /// A key the bond's mode does not use.
    WrongMode {
        /// The bond's mode.
        mode: Mode,
        /// The modes that use the key.
        used_in: &'static str,
    },
    /// A key that does nothing without another.
    NeedsOther {
        /// What it needs, e.g. `arp_interval > 0`.
        needs: &'static str,
    },
    /// A delay rounded down to a multiple of `miimon`, as Linux does.
    Rounded {
        /// Milliseconds given.
        from: u32,
        /// Milliseconds used.
        to: u32,
        /// `miimon`.
        miimon: u32,
    },
    /// Both `miimon` and `arp_interval` set.
    BothMonitors,
    /// More `min_links` than members.
    MinLinksAboveMembers {
        /// `min_links`.
        min_links: u32,
        /// Number of members.
        members: usize,
    },
    /// balance-tlb/alb with `tlb_dynamic_lb = true` and a policy other than
    /// `strong`: flows move by load, so `strong` runs instead.
    PolicyNotUsed {
        /// The bond's mode.
        mode: Mode,
        /// The policy written.
        policy: String,
    },
    /// `mtu` and `use_jumbo_frame` disagree; `mtu` wins.
    MtuOverridesJumbo {
        /// The MTU given.
        mtu: u16,
        /// The `use_jumbo_frame` value given.
        jumbo: bool,
    },
}

impl fmt::Display for WarningKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WarningKind::WrongMode { mode, used_in } => write!(
                f,
                "has no effect in {mode} mode (used in {used_in} only); remove it or change \
                 mode"
            ),
            WarningKind::NeedsOther { needs } => write!(
                f,
                "has no effect without {needs}; set that too or remove this key"
            ),
            WarningKind::Rounded { from, to, miimon } => write!(
                f,
                "{from} ms is not a multiple of miimon ({miimon} ms), rounded down to {to} ms as \
                 Linux does; write a multiple of {miimon}"
            ),
            WarningKind::BothMonitors => write!(
                f,
                "miimon and arp_interval are both set: Linux would turn miimon off, lagkit runs \
                 both and counts a member up only while both do; set one to 0 to choose"
            ),
            WarningKind::MinLinksAboveMembers { min_links, members } => write!(
                f,
                "min_links = {min_links} but the bond has {members} member(s), so it can never \
                 come up; lower min_links or add members"
            ),
            WarningKind::PolicyNotUsed { mode, policy } => write!(
                f,
                "{policy} is not used in {mode} while tlb_dynamic_lb = true: flows hash with \
                 strong and move between members by load (Linux ignores the policy there too); \
                 set tlb_dynamic_lb = false to hash by {policy} without moving flows, or remove \
                 this key"
            ),
            WarningKind::MtuOverridesJumbo { mtu, jumbo } => write!(
                f,
                "mtu = {mtu} overrides use_jumbo_frame = {}; remove one of them",
                if *jumbo { "yes" } else { "no" }
            ),
        }
    }
}

/// 1-based line and character column of byte `offset` in `text` (clamped
/// to the text, and to a character boundary).
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters() {
        let t = "a = 1\nb = \"é\" x\n";
        assert_eq!(line_col(t, 0), (1, 1));
        assert_eq!(line_col(t, 6), (2, 1));
        assert_eq!(line_col(t, t.find('x').unwrap()), (2, 9));
        // Inside the two-byte 'é': clamped back to its start.
        assert_eq!(line_col(t, t.find('é').unwrap() + 1), (2, 6));
        assert_eq!(line_col(t, 10_000), (3, 1));
    }
}
