//! From TOML text to checked [`BondConfig`]s.
//!
//! The file is parsed with `toml`'s spanned document tree rather than
//! deserialized into a struct: serde would stop at the first unknown field
//! without a position worth showing, and could not tell `members` from its
//! alias `adapter_names` given twice. With spans, every error and warning
//! names the line and column of the key (or list element) it is about.
//!
//! Three shapes are accepted (see the crate docs): one bond at the top
//! level; one `[NAME]` table per bond; `[[bond]]` entries with a `name`. In
//! the last two, options at the top level are defaults for every bond.
//!
//! Checks run in three layers: each value against its key (type, range,
//! syntax), each bond across its keys (primary is a member, ARP monitoring
//! has a target and a mode that allows it, ...), and the bonds against each
//! other (names, members, sockets and ports are not shared). Mode-specific
//! keys in the wrong mode are warnings, because a file shared between modes
//! is legitimate and Linux itself accepts and ignores most of them.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;
use std::str::FromStr;

use lagkit_hash::{Policy, Strong, MAX_MEMBERS};
use lagkit_wire::MacAddr;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::bond::{BondConfig, PortPriorities};
use crate::cidr::Cidr;
use crate::enums::{fold, Mode, Pagp, ParseEnumError};
use crate::error::{
    line_col, ConfigError, ErrorKind, InvalidConfig, MacProblem, NameProblem, PathProblem,
    TargetProblem, Warning, WarningKind,
};
use crate::keys::{self, Key};
use crate::value::{Fault, Field, Res};

/// Most ARP (and, separately, NS) targets Linux takes (`BOND_MAX_ARP_TARGETS`).
pub const MAX_ARP_TARGETS: usize = 16;

/// Longest Unix socket path (`sun_path` is 108 bytes with the NUL).
const MAX_SOCKET_PATH: usize = 107;

/// Longest interface name (`IFNAMSIZ` - 1).
const MAX_IFNAME: usize = 15;

struct Ctx<'t> {
    text: &'t str,
    file: &'t str,
    /// The file uses bond tables; errors then name the bond too.
    multi: bool,
}

impl Ctx<'_> {
    fn error(
        &self,
        at: usize,
        key: Option<&str>,
        bond: Option<&str>,
        kind: ErrorKind,
    ) -> ConfigError {
        let (line, column) = line_col(self.text, at);
        ConfigError::Invalid(Box::new(InvalidConfig {
            file: self.file.to_string(),
            line,
            column,
            key: key.map(str::to_string),
            bond: bond.filter(|_| self.multi).map(str::to_string),
            kind,
        }))
    }

    /// A value fault of `field` in `bond`.
    fn fault(&self, fault: Fault, field: &Field<'_, '_>, bond: Option<&str>) -> ConfigError {
        self.error(fault.span.start, Some(field.written), bond, fault.kind)
    }

    /// A cross-field problem reported at `field`'s key.
    fn at_key(&self, field: &Field<'_, '_>, bond: &str, kind: ErrorKind) -> ConfigError {
        self.error(field.key_span.0, Some(field.written), Some(bond), kind)
    }

    fn line(&self, at: usize) -> usize {
        line_col(self.text, at).0
    }

    fn warning(&self, field: &Field<'_, '_>, bond: &str, kind: WarningKind) -> Warning {
        let (line, column) = line_col(self.text, field.key_span.0);
        Warning {
            file: self.file.to_string(),
            line,
            column,
            bond: bond.to_string(),
            key: field.written.to_string(),
            kind,
        }
    }
}

/// A recognised key with its value.
#[derive(Clone, Copy)]
struct Entry<'a, 'i> {
    key: Key,
    field: Field<'a, 'i>,
}

/// Where one bond's keys come from.
struct Source<'a, 'i> {
    /// The `[NAME]` table's name and its position, in the table form.
    header: Option<(&'a str, usize)>,
    /// Where to report a missing key: the header, or the file's start.
    at: usize,
    entries: Vec<Entry<'a, 'i>>,
}

/// A bond and what the cross-bond checks need to know about its text.
struct Built {
    cfg: BondConfig,
    warnings: Vec<Warning>,
    name_at: usize,
    /// Members and backup adapter, with position and key as written.
    interfaces: Vec<(String, usize, String)>,
    socket_at: Option<(usize, String)>,
    port_at: Option<(usize, String)>,
}

/// The error for file contents that are not text, where `bytes[utf8_end]`
/// is the first byte that is not UTF-8 (`Utf8Error::valid_up_to`); it names
/// the first NUL before that, if there is one, as [`parse_str`] would.
pub(crate) fn not_text(bytes: &[u8], utf8_end: usize, file_name: &str) -> ConfigError {
    let offset = bytes[..utf8_end]
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(utf8_end);
    let ctx = Ctx {
        // Everything before the first bad byte is text.
        text: std::str::from_utf8(&bytes[..offset]).unwrap_or_default(),
        file: file_name,
        multi: false,
    };
    let byte = bytes.get(offset).copied().unwrap_or(0);
    ctx.error(offset, None, None, ErrorKind::NotText { offset, byte })
}

/// Parses a config from `text`; `file_name` is used in messages only.
/// Returns the bonds in file order and the warnings the daemon should log.
pub fn parse_str(
    text: &str,
    file_name: &str,
) -> Result<(Vec<BondConfig>, Vec<Warning>), ConfigError> {
    let mut ctx = Ctx {
        text,
        file: file_name,
        multi: false,
    };
    // Parsed into a document tree several times its size: a text past
    // the limit is no bond configuration (`lagkit check` reads far more).
    if text.len() as u64 > lagkit_input::BOND_CONFIG.bytes {
        return Err(ConfigError::TooLarge(lagkit_input::InputError::TooLarge {
            file: file_name.into(),
            limit: lagkit_input::BOND_CONFIG,
        }));
    }
    // NUL is UTF-8 but no text file has one: a binary, not a TOML mistake.
    if let Some(offset) = text.find('\0') {
        return Err(ctx.error(offset, None, None, ErrorKind::NotText { offset, byte: 0 }));
    }
    let doc = DeTable::parse(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        ctx.error(
            at,
            None,
            None,
            ErrorKind::Syntax {
                message: e.message().to_string(),
            },
        )
    })?;

    ctx.multi = doc.get_ref().iter().any(|(k, v)| {
        Key::lookup(k.get_ref()).is_none()
            && (v.get_ref().is_table() || (fold(k.get_ref()) == "bond" && v.get_ref().is_array()))
    });
    let ctx = ctx;

    let mut top = Vec::new();
    let mut sources = Vec::new();
    for (k, v) in sorted(doc.get_ref()) {
        let written: &str = k.get_ref();
        let field = Field {
            written,
            key_span: (k.span().start, k.span().end),
            value: v,
        };
        if let Some(key) = Key::lookup(written) {
            top.push(Entry { key, field });
            continue;
        }
        match v.get_ref() {
            DeValue::Table(t) => sources.push(Source {
                header: Some((written, k.span().start)),
                at: k.span().start,
                entries: entries(&ctx, t, Some(written))?,
            }),
            DeValue::Array(items) if fold(written) == "bond" => {
                for item in items {
                    match item.get_ref() {
                        DeValue::Table(t) => sources.push(Source {
                            header: None,
                            at: item.span().start,
                            entries: entries(&ctx, t, None)?,
                        }),
                        other => {
                            return Err(ctx.error(
                                item.span().start,
                                Some(written),
                                None,
                                ErrorKind::NotATable {
                                    found: other.type_str(),
                                },
                            ))
                        }
                    }
                }
            }
            DeValue::Array(items) if items.first().is_some_and(|i| i.get_ref().is_table()) => {
                return Err(ctx.error(
                    field.key_span.0,
                    Some(written),
                    None,
                    ErrorKind::UnknownKey {
                        suggestion: Some("bond".to_string()),
                        hint: None,
                    },
                ))
            }
            _ => return Err(unknown_key(&ctx, &field, None)),
        }
    }
    sources.sort_by_key(|s| s.at);

    let defaults = if sources.is_empty() {
        if top.is_empty() {
            return Err(ctx.error(0, None, None, ErrorKind::NoBond));
        }
        sources.push(Source {
            header: None,
            at: 0,
            entries: top,
        });
        Vec::new()
    } else {
        if let Some(e) = top.iter().find(|e| e.key == Key::Name) {
            return Err(ctx.error(
                e.field.key_span.0,
                Some(e.field.written),
                None,
                ErrorKind::NameAtTop {
                    table_line: ctx.line(sources[0].at),
                },
            ));
        }
        top
    };

    let built = sources
        .iter()
        .map(|s| build(&ctx, s, &defaults))
        .collect::<Result<Vec<_>, _>>()?;
    check_across(&ctx, &built)?;

    let mut bonds = Vec::with_capacity(built.len());
    let mut warnings = Vec::new();
    for b in built {
        warnings.extend(b.warnings);
        bonds.push(b.cfg);
    }
    Ok((bonds, warnings))
}

/// A table's entries in file order.
fn sorted<'a, 'i>(
    table: &'a DeTable<'i>,
) -> Vec<(
    &'a Spanned<std::borrow::Cow<'i, str>>,
    &'a Spanned<DeValue<'i>>,
)> {
    let mut all: Vec<_> = table.iter().collect();
    all.sort_by_key(|(k, _)| k.span().start);
    all
}

/// The recognised entries of one bond's table; unknown keys are errors.
fn entries<'a, 'i>(
    ctx: &Ctx<'_>,
    table: &'a DeTable<'i>,
    bond: Option<&str>,
) -> Result<Vec<Entry<'a, 'i>>, ConfigError> {
    sorted(table)
        .into_iter()
        .map(|(k, v)| {
            let field = Field {
                written: k.get_ref(),
                key_span: (k.span().start, k.span().end),
                value: v,
            };
            match Key::lookup(field.written) {
                Some(key) => Ok(Entry { key, field }),
                None => Err(unknown_key(ctx, &field, bond)),
            }
        })
        .collect()
}

fn unknown_key(ctx: &Ctx<'_>, field: &Field<'_, '_>, bond: Option<&str>) -> ConfigError {
    ctx.error(
        field.key_span.0,
        Some(field.written),
        bond,
        ErrorKind::UnknownKey {
            suggestion: keys::suggest(field.written).map(str::to_string),
            hint: keys::hint(field.written),
        },
    )
}

/// What `apply` learns beyond the config's fields.
#[derive(Default)]
struct Seen {
    /// The seed given inside `xmit_hash_policy` (`strong:seed=N`).
    policy_seed: Option<u64>,
    /// `symmetric` given inside `xmit_hash_policy`.
    policy_symmetric: bool,
    hash_seed: Option<u64>,
    hash_symmetric: Option<bool>,
    mtu: Option<u16>,
    jumbo: Option<bool>,
    /// Members with the position of each.
    members: Vec<(String, usize)>,
    /// `offloads` as given, resolved once the members are known.
    offloads: Option<OffloadsGiven>,
    /// `ad_actor_port_prio` as a table: (member, priority, span of its
    /// name), checked against the members once they are known.
    port_prios: Vec<(String, u16, core::ops::Range<usize>)>,
}

/// The two forms of `offloads`.
enum OffloadsGiven {
    /// `offloads = false`: every member and the backup adapter.
    All(bool),
    /// `offloads = { eth2 = false }`: (member, on, span of its name).
    Each(Vec<(String, bool, core::ops::Range<usize>)>),
}

/// One bond from its entries and the file's defaults.
fn build(
    ctx: &Ctx<'_>,
    src: &Source<'_, '_>,
    defaults: &[Entry<'_, '_>],
) -> Result<Built, ConfigError> {
    let header = src.header.map(|(n, _)| n);

    // The bond's own keys override the defaults; within one scope an option
    // may appear under one spelling only.
    let mut map: BTreeMap<Key, (Entry<'_, '_>, bool)> = BTreeMap::new();
    for (list, is_default) in [(defaults, true), (&src.entries[..], false)] {
        for e in list {
            if let Some((prev, prev_default)) = map.get(&e.key) {
                if *prev_default == is_default {
                    let (first, second) = if prev.field.key_span.0 < e.field.key_span.0 {
                        (prev, e)
                    } else {
                        (e, prev)
                    };
                    return Err(ctx.error(
                        second.field.key_span.0,
                        Some(second.field.written),
                        header,
                        ErrorKind::GivenTwice {
                            other: first.field.written.to_string(),
                            line: ctx.line(first.field.key_span.0),
                        },
                    ));
                }
            }
            map.insert(e.key, (*e, is_default));
        }
    }
    let get = |k: Key| map.get(&k).map(|(e, _)| e.field);

    let missing = |key: Key, bond: Option<&str>| {
        ctx.error(
            src.at,
            Some(key.name()),
            bond,
            ErrorKind::Missing {
                example: key.example(),
            },
        )
    };

    let name_field = get(Key::Name);
    let (name, name_at) = match (src.header, name_field) {
        (Some((h, at)), None) => (h.to_string(), at),
        (Some((h, at)), Some(f)) => {
            let n = f
                .string(Key::Name.example())
                .map_err(|e| ctx.fault(e, &f, header))?;
            if n.trim() != h {
                return Err(ctx.at_key(
                    &f,
                    h,
                    ErrorKind::NameMismatch {
                        table: h.to_string(),
                        name: n.to_string(),
                    },
                ));
            }
            (h.to_string(), at)
        }
        (None, Some(f)) => {
            let n = f
                .string(Key::Name.example())
                .map_err(|e| ctx.fault(e, &f, None))?;
            (n.trim().to_string(), f.key_span.0)
        }
        (None, None) => return Err(missing(Key::Name, None)),
    };
    if let Err(problem) = check_ifname(&name) {
        let key = name_field.map(|f| f.written);
        return Err(ctx.error(
            name_at,
            key,
            Some(&name),
            ErrorKind::BadName {
                value: name.clone(),
                problem,
            },
        ));
    }

    let mode = match get(Key::Mode) {
        Some(f) => named::<Mode>(&f).map_err(|e| ctx.fault(e, &f, Some(&name)))?,
        None => return Err(missing(Key::Mode, Some(&name))),
    };

    let mut cfg = BondConfig::new(name, mode, Vec::new());
    let mut seen = Seen::default();
    let mut ordered: Vec<Entry<'_, '_>> = map.values().map(|(e, _)| *e).collect();
    ordered.sort_by_key(|e| e.field.key_span.0);
    for e in &ordered {
        apply(ctx, &mut cfg, &mut seen, e).map_err(|f| ctx.fault(f, &e.field, Some(&cfg.name)))?;
    }
    let name = cfg.name.clone();
    let bond = name.as_str();

    // Members.
    if get(Key::Members).is_none() {
        return Err(missing(Key::Members, Some(bond)));
    }

    // The hash: a seed or symmetry given both inside the policy and as keys
    // must agree.
    if let Policy::Strong(s) = cfg.xmit_hash_policy {
        if let (Some(a), Some(b), Some(f)) = (seen.policy_seed, seen.hash_seed, get(Key::HashSeed))
        {
            if a != b {
                return Err(ctx.at_key(
                    &f,
                    bond,
                    ErrorKind::SeedConflict {
                        in_policy: a,
                        hash_seed: b,
                    },
                ));
            }
        }
        if let (true, Some(false), Some(f)) = (
            seen.policy_symmetric,
            seen.hash_symmetric,
            get(Key::HashSymmetric),
        ) {
            return Err(ctx.at_key(&f, bond, ErrorKind::SymmetricConflict));
        }
        cfg.hash_seed = seen.hash_seed.or(seen.policy_seed);
        cfg.hash_symmetric = s.symmetric || seen.hash_symmetric == Some(true);
        cfg.xmit_hash_policy = Policy::Strong(Strong {
            seed: cfg.hash_seed.unwrap_or(0),
            symmetric: cfg.hash_symmetric,
        });
    } else {
        cfg.hash_seed = seen.hash_seed;
        cfg.hash_symmetric = seen.hash_symmetric.unwrap_or(false);
        if mode == Mode::Adaptive {
            if let Some(f) = get(Key::XmitHashPolicy) {
                return Err(ctx.at_key(
                    &f,
                    bond,
                    ErrorKind::AdaptiveNeedsStrong {
                        policy: cfg.xmit_hash_policy.to_string(),
                    },
                ));
            }
        }
    }

    let mut warnings = Vec::new();

    // MTU: an explicit mtu wins over use_jumbo_frame.
    match (seen.mtu, seen.jumbo) {
        (None, Some(jumbo)) => cfg.mtu = if jumbo { 9000 } else { 1500 },
        (Some(mtu), Some(jumbo)) if jumbo == (mtu <= 1500) => {
            if let Some(f) = get(Key::Mtu) {
                warnings.push(ctx.warning(&f, bond, WarningKind::MtuOverridesJumbo { mtu, jumbo }));
            }
        }
        _ => {}
    }

    if let (Some(p), Some(f)) = (&cfg.primary, get(Key::Primary)) {
        if !cfg.members.contains(p) {
            return Err(ctx.at_key(
                &f,
                bond,
                ErrorKind::PrimaryNotMember {
                    primary: p.clone(),
                    members: cfg.members.join(", "),
                },
            ));
        }
    }

    if let Some(given) = seen.offloads.take() {
        let all: Vec<&String> = cfg.members.iter().chain(&cfg.backup_adapter).collect();
        cfg.offloads_off = match given {
            OffloadsGiven::All(true) => Vec::new(),
            OffloadsGiven::All(false) => all.into_iter().cloned().collect(),
            OffloadsGiven::Each(list) => {
                if let (Some((name, _, span)), Some(f)) = (
                    list.iter().find(|(n, _, _)| !all.contains(&n)),
                    get(Key::Offloads),
                ) {
                    let names: Vec<&str> = all.iter().map(|s| s.as_str()).collect();
                    return Err(ctx.fault(
                        Fault {
                            span: span.clone(),
                            kind: ErrorKind::OffloadsNotMember {
                                name: name.clone(),
                                members: names.join(", "),
                            },
                        },
                        &f,
                        Some(bond),
                    ));
                }
                all.into_iter()
                    .filter(|m| list.iter().any(|(n, on, _)| n == *m && !*on))
                    .cloned()
                    .collect()
            }
        };
    }

    if let (Some((name, _, span)), Some(f)) = (
        (seen.port_prios.iter()).find(|(n, _, _)| !cfg.members.contains(n)),
        get(Key::AdActorPortPrio),
    ) {
        return Err(ctx.fault(
            Fault {
                span: span.clone(),
                kind: ErrorKind::NotAMember {
                    key: "ad_actor_port_prio",
                    name: name.clone(),
                    members: cfg.members.join(", "),
                },
            },
            &f,
            Some(bond),
        ));
    }
    if !seen.port_prios.is_empty() {
        cfg.ad_actor_port_prio = PortPriorities::Each(
            (seen.port_prios.iter())
                .map(|(n, p, _)| (n.clone(), *p))
                .collect(),
        );
    }

    if let (Some(b), Some(f)) = (&cfg.backup_adapter, get(Key::BackupAdapter)) {
        if *b == cfg.name {
            return Err(ctx.at_key(&f, bond, ErrorKind::MemberIsBond { name: b.clone() }));
        }
        if cfg.members.contains(b) {
            return Err(ctx.at_key(&f, bond, ErrorKind::BackupIsMember { backup: b.clone() }));
        }
    }

    if let (true, Some(f)) = (cfg.arp_interval > 0, get(Key::ArpInterval)) {
        if !mode.allows_arp_monitor() {
            return Err(ctx.at_key(&f, bond, ErrorKind::ArpNotAllowed { mode }));
        }
        if cfg.arp_ip_target.is_empty() && cfg.ns_ip6_target.is_empty() && cfg.netaddr.is_none() {
            return Err(ctx.at_key(&f, bond, ErrorKind::ArpWithoutTarget));
        }
    }

    if let (true, Some(f)) = (cfg.pagp != Pagp::Off, get(Key::Pagp)) {
        if !mode.allows_pagp() {
            return Err(ctx.at_key(&f, bond, ErrorKind::PagpNotAllowed { mode }));
        }
    }

    if let (Some(max_bundle), Some(f)) = (cfg.max_bundle, get(Key::MinLinks)) {
        if cfg.min_links > u32::from(max_bundle) {
            return Err(ctx.at_key(
                &f,
                bond,
                ErrorKind::MinLinksAboveMaxBundle {
                    min_links: cfg.min_links,
                    max_bundle,
                },
            ));
        }
    }

    if let (Some(addr), Some(f)) = (cfg.netaddr, get(Key::Netaddr)) {
        if cfg.address.iter().any(|c| c.addr == IpAddr::V4(addr)) {
            return Err(ctx.at_key(
                &f,
                bond,
                ErrorKind::NetaddrIsOwn {
                    addr: IpAddr::V4(addr),
                },
            ));
        }
    }

    // Delays polled by miimon are whole polling periods, as in Linux.
    if cfg.miimon > 0 {
        let miimon = cfg.miimon;
        for (key, value) in [
            (Key::Updelay, &mut cfg.updelay),
            (Key::Downdelay, &mut cfg.downdelay),
            (Key::PeerNotifDelay, &mut cfg.peer_notif_delay),
        ] {
            if *value % miimon != 0 {
                let to = *value - *value % miimon;
                if let Some(f) = get(key) {
                    warnings.push(ctx.warning(
                        &f,
                        bond,
                        WarningKind::Rounded {
                            from: *value,
                            to,
                            miimon,
                        },
                    ));
                }
                *value = to;
            }
        }
    }

    // Keys the mode does not use, and keys that need another.
    let mut warned = Vec::new();
    for (key, (e, _)) in &map {
        if let Some((uses, used_in)) = mode_scope(*key) {
            if !uses(mode) {
                warnings.push(ctx.warning(
                    &e.field,
                    bond,
                    WarningKind::WrongMode { mode, used_in },
                ));
                warned.push(*key);
            }
        }
    }
    let strong = matches!(cfg.xmit_hash_policy, Policy::Strong(_));
    for (key, (e, _)) in &map {
        if warned.contains(key) {
            continue;
        }
        let needs = match key {
            Key::ArpIpTarget
            | Key::NsIp6Target
            | Key::ArpValidate
            | Key::ArpAllTargets
            | Key::ArpMissedMax
                if cfg.arp_interval == 0 =>
            {
                Some("arp_interval > 0")
            }
            Key::NumRetries | Key::RetryTime if cfg.netaddr.is_none() => Some("netaddr"),
            Key::AutoRecovery if cfg.backup_adapter.is_none() => Some("backup_adapter"),
            Key::PrimaryReselect if cfg.primary.is_none() => Some("primary"),
            Key::PagpSilent | Key::PagpRate if cfg.pagp == Pagp::Off => {
                Some("pagp = \"desirable\" or \"auto\"")
            }
            Key::HashSeed | Key::HashSymmetric if !strong => Some("xmit_hash_policy = \"strong\""),
            _ => None,
        };
        if let Some(needs) = needs {
            warnings.push(ctx.warning(&e.field, bond, WarningKind::NeedsOther { needs }));
        }
    }
    if let (true, Some(f)) = (
        mode.is_tlb() && cfg.tlb_dynamic_lb && !strong && !warned.contains(&Key::XmitHashPolicy),
        get(Key::XmitHashPolicy),
    ) {
        let policy = cfg.xmit_hash_policy.to_string();
        warnings.push(ctx.warning(&f, bond, WarningKind::PolicyNotUsed { mode, policy }));
    }
    if let (true, Some(f)) = (
        cfg.miimon > 0 && cfg.arp_interval > 0,
        get(Key::ArpInterval),
    ) {
        warnings.push(ctx.warning(&f, bond, WarningKind::BothMonitors));
    }
    if let (true, Some(f)) = (
        usize::try_from(cfg.min_links).map_or(true, |m| m > cfg.members.len()),
        get(Key::MinLinks),
    ) {
        if !warned.contains(&Key::MinLinks) {
            warnings.push(ctx.warning(
                &f,
                bond,
                WarningKind::MinLinksAboveMembers {
                    min_links: cfg.min_links,
                    members: cfg.members.len(),
                },
            ));
        }
    }
    warnings.sort_by_key(|w| (w.line, w.column));

    let mut interfaces: Vec<(String, usize, String)> = seen
        .members
        .iter()
        .map(|(m, at)| {
            let written = get(Key::Members).map_or("members", |f| f.written);
            (m.clone(), *at, written.to_string())
        })
        .collect();
    if let (Some(b), Some(f)) = (&cfg.backup_adapter, get(Key::BackupAdapter)) {
        interfaces.push((b.clone(), f.key_span.0, f.written.to_string()));
    }
    let at_of = |k: Key| get(k).map(|f| (f.key_span.0, f.written.to_string()));
    Ok(Built {
        socket_at: at_of(Key::ControlSocket).filter(|_| cfg.control_socket.is_some()),
        port_at: at_of(Key::MetricsListen).filter(|_| cfg.metrics_listen.is_some()),
        cfg,
        warnings,
        name_at,
        interfaces,
    })
}

/// Which modes use a key, and how to name them in a warning.
type ModeScope = (fn(Mode) -> bool, &'static str);

/// The modes that use a key, for the wrong-mode warning.
pub(crate) fn mode_scope(key: Key) -> Option<ModeScope> {
    Some(match key {
        Key::LacpRate
        | Key::LacpActive
        | Key::AdActorSysPrio
        | Key::AdActorSystem
        | Key::AdActorPortPrio
        | Key::AdUserPortKey
        | Key::AdSelect
        | Key::MinLinks
        | Key::MaxBundle
        | Key::LacpNoPartner
        | Key::CoupledControl => (Mode::is_lacp, "802.3ad"),
        Key::XmitHashPolicy | Key::HashSeed | Key::HashSymmetric => (
            Mode::uses_hash,
            "802.3ad, balance-xor, balance-tlb, balance-alb and adaptive",
        ),
        Key::Primary | Key::PrimaryReselect => (
            Mode::uses_primary,
            "active-backup, balance-tlb and balance-alb",
        ),
        Key::FailOverMac => (|m| m == Mode::ActiveBackup, "active-backup"),
        Key::PacketsPerSlave => (|m| m == Mode::BalanceRr, "balance-rr"),
        Key::LpInterval | Key::TlbDynamicLb => (Mode::is_tlb, "balance-tlb and balance-alb"),
        Key::ArpIpTarget
        | Key::NsIp6Target
        | Key::ArpValidate
        | Key::ArpAllTargets
        | Key::ArpMissedMax => (
            Mode::allows_arp_monitor,
            "balance-rr, active-backup, balance-xor, broadcast and adaptive",
        ),
        Key::AdaptiveInterval | Key::AdaptiveIdleGap => (|m| m == Mode::Adaptive, "adaptive"),
        Key::PagpSilent | Key::PagpRate => (Mode::allows_pagp, "balance-xor and active-backup"),
        _ => return None,
    })
}

/// A name-valued option, given as a name or its Linux number.
fn named<T: FromStr<Err = ParseEnumError>>(f: &Field<'_, '_>) -> Res<T> {
    let example = Key::lookup(f.written).map_or("", Key::example);
    let text = f.name_or_number(example)?;
    text.parse::<T>()
        .map_err(|e| f.fault(ErrorKind::UnknownValue(e)))
}

/// The Linux number of the policy called `name`, if Linux numbers it.
pub(crate) fn linux_policy_number(name: &str) -> Option<&'static str> {
    const NUMBERS: [&str; 6] = ["0", "1", "2", "3", "4", "5"];
    LINUX_POLICY_NUMBERS
        .iter()
        .position(|n| *n == name)
        .map(|i| NUMBERS[i])
}

/// Linux's `xmit_hash_policy` numbers.
const LINUX_POLICY_NUMBERS: [&str; 6] = [
    "layer2",
    "layer3+4",
    "layer2+3",
    "encap2+3",
    "encap3+4",
    "vlan+srcmac",
];

fn apply(ctx: &Ctx<'_>, cfg: &mut BondConfig, seen: &mut Seen, e: &Entry<'_, '_>) -> Res<()> {
    let f = &e.field;
    let ex = e.key.example();
    let small = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    const INT_MAX: u64 = i32::MAX as u64;
    match e.key {
        Key::Name | Key::Mode => {}
        Key::Members => {
            let items = f.list(ex)?;
            // Counted first so an absurd list costs no quadratic duplicate search.
            if items.len() > MAX_MEMBERS {
                return Err(f.fault(ErrorKind::TooMany {
                    what: "members",
                    count: items.len(),
                    max: MAX_MEMBERS,
                }));
            }
            let mut members: Vec<(String, usize)> = Vec::new();
            for (m, span) in items {
                let at = |kind| Fault {
                    span: span.clone(),
                    kind,
                };
                check_ifname(&m).map_err(|problem| {
                    at(ErrorKind::BadName {
                        value: m.clone(),
                        problem,
                    })
                })?;
                if m == cfg.name {
                    return Err(at(ErrorKind::MemberIsBond { name: m }));
                }
                if let Some((_, first)) = members.iter().find(|(x, _)| *x == m) {
                    return Err(at(ErrorKind::Duplicate {
                        value: m,
                        first_line: ctx.line(*first),
                    }));
                }
                members.push((m, span.start));
            }
            if members.is_empty() {
                return Err(f.fault(ErrorKind::EmptyMembers));
            }
            cfg.members = members.iter().map(|(m, _)| m.clone()).collect();
            seen.members = members;
        }
        Key::XmitHashPolicy => {
            let text = f.name_or_number(ex)?;
            let text = text.trim();
            let name = text
                .parse::<usize>()
                .ok()
                .and_then(|n| LINUX_POLICY_NUMBERS.get(n).copied())
                .unwrap_or(text);
            let policy: Policy = name.parse().map_err(|e| f.fault(ErrorKind::Policy(e)))?;
            if let Policy::Strong(s) = policy {
                let options = fold(name);
                if options.contains("seed") {
                    seen.policy_seed = Some(s.seed);
                }
                seen.policy_symmetric = s.symmetric;
            }
            cfg.xmit_hash_policy = policy;
        }
        Key::HashSeed => seen.hash_seed = Some(f.uint(0, u64::MAX, ex)?),
        Key::HashSymmetric => seen.hash_symmetric = Some(f.boolean(ex)?),
        Key::Mtu => {
            let mtu = u16::try_from(f.uint(68, 65535, ex)?).unwrap_or(u16::MAX);
            cfg.mtu = mtu;
            seen.mtu = Some(mtu);
        }
        Key::UseJumboFrame => seen.jumbo = Some(f.boolean(ex)?),
        Key::Offloads => seen.offloads = Some(offloads(ctx, f, ex)?),
        Key::Address => {
            let mut out = Vec::new();
            let mut first_at: HashMap<IpAddr, usize> = HashMap::new();
            for (s, span) in f.list(ex)? {
                let at = |kind| Fault {
                    span: span.clone(),
                    kind,
                };
                let c: Cidr = s.parse().map_err(|problem| {
                    at(ErrorKind::BadCidr {
                        value: s.clone(),
                        problem,
                    })
                })?;
                if let Some(first) = first_at.insert(c.addr, span.start) {
                    return Err(at(ErrorKind::Duplicate {
                        value: c.addr.to_string(),
                        first_line: ctx.line(first),
                    }));
                }
                out.push(c);
            }
            cfg.address = out;
        }
        Key::Mac => cfg.mac = Some(mac(f, ex)?),
        Key::Miimon => cfg.miimon = small(f.millis(0, INT_MAX, ex)?),
        Key::Updelay => cfg.updelay = small(f.millis(0, INT_MAX, ex)?),
        Key::Downdelay => cfg.downdelay = small(f.millis(0, INT_MAX, ex)?),
        Key::PeerNotifDelay => cfg.peer_notif_delay = small(f.millis(0, 300_000, ex)?),
        Key::LacpRate => cfg.lacp_rate = named(f)?,
        Key::LacpActive => {
            cfg.lacp_active = f.boolean_or(&[("active", true), ("passive", false)], ex)?;
        }
        Key::AdActorSysPrio => {
            cfg.ad_actor_sys_prio = u16::try_from(f.uint(1, 65535, ex)?).unwrap_or(u16::MAX);
        }
        Key::AdActorSystem => cfg.ad_actor_system = Some(mac(f, ex)?),
        Key::AdActorPortPrio => match f.value.get_ref() {
            DeValue::Table(_) => seen.port_prios = port_prios(ctx, f)?,
            _ => {
                let p = u16::try_from(f.uint(1, 65535, ex)?).unwrap_or(255);
                cfg.ad_actor_port_prio = PortPriorities::All(p);
            }
        },
        Key::AdUserPortKey => {
            cfg.ad_user_port_key = u16::try_from(f.uint(0, 1023, ex)?).unwrap_or(0);
        }
        Key::AdSelect => cfg.ad_select = named(f)?,
        Key::MinLinks => cfg.min_links = small(f.uint(0, INT_MAX, ex)?),
        Key::MaxBundle => {
            let max = MAX_MEMBERS as u64;
            cfg.max_bundle = Some(u16::try_from(f.uint(1, max, ex)?).unwrap_or(u16::MAX));
        }
        Key::LacpNoPartner => cfg.lacp_no_partner = named(f)?,
        Key::CoupledControl => cfg.coupled_control = f.boolean(ex)?,
        Key::Pagp => cfg.pagp = named(f)?,
        Key::PagpSilent => {
            let words = [
                ("silent", true),
                ("non-silent", false),
                ("non_silent", false),
            ];
            cfg.pagp_silent = f.boolean_or(&words, ex)?;
        }
        Key::PagpRate => cfg.pagp_rate = named(f)?,
        Key::Primary => cfg.primary = Some(ifname(f, ex)?),
        Key::PrimaryReselect => cfg.primary_reselect = named(f)?,
        Key::FailOverMac => cfg.fail_over_mac = named(f)?,
        Key::Engine => cfg.engine = named(f)?,
        Key::ArpInterval => cfg.arp_interval = small(f.millis(0, INT_MAX, ex)?),
        Key::ArpIpTarget => cfg.arp_ip_target = targets(ctx, f, ex, parse_v4)?,
        Key::NsIp6Target => cfg.ns_ip6_target = targets(ctx, f, ex, parse_v6)?,
        Key::ArpValidate => cfg.arp_validate = named(f)?,
        Key::ArpAllTargets => cfg.arp_all_targets = named(f)?,
        Key::ArpMissedMax => {
            cfg.arp_missed_max = u8::try_from(f.uint(1, 255, ex)?).unwrap_or(u8::MAX);
        }
        Key::NumGratArp => {
            cfg.num_grat_arp = u8::try_from(f.uint(0, 255, ex)?).unwrap_or(u8::MAX);
        }
        Key::PacketsPerSlave => {
            cfg.packets_per_slave = u16::try_from(f.uint(0, 65535, ex)?).unwrap_or(u16::MAX);
        }
        Key::LpInterval => cfg.lp_interval = small(f.seconds(1, INT_MAX, ex)?),
        Key::TlbDynamicLb => cfg.tlb_dynamic_lb = f.boolean(ex)?,
        Key::AllSlavesActive => cfg.all_slaves_active = f.boolean(ex)?,
        Key::ResendIgmp => {
            cfg.resend_igmp = u8::try_from(f.uint(0, 255, ex)?).unwrap_or(u8::MAX);
        }
        Key::BackupAdapter => cfg.backup_adapter = Some(ifname(f, ex)?),
        Key::ForceMembers => {
            cfg.force_members = (f.list(ex)?.into_iter())
                .map(|(m, _)| m.trim().to_string())
                .collect()
        }
        Key::AutoRecovery => cfg.auto_recovery = f.boolean(ex)?,
        Key::Netaddr => {
            let s = f.string(ex)?;
            cfg.netaddr = Some(parse_v4(s).map_err(|problem| {
                f.fault(ErrorKind::BadTarget {
                    value: s.trim().to_string(),
                    problem,
                })
            })?);
        }
        Key::NumRetries => cfg.num_retries = small(f.uint(1, 100, ex)?),
        Key::RetryTime => cfg.retry_time = small(f.seconds(1, 100, ex)?),
        Key::ControlSocket => {
            let s = f.string(ex)?;
            let bad = |problem| {
                f.fault(ErrorKind::BadPath {
                    value: s.to_string(),
                    problem,
                })
            };
            if !s.starts_with('/') {
                return Err(bad(PathProblem::NotAbsolute));
            }
            if s.len() > MAX_SOCKET_PATH {
                return Err(bad(PathProblem::TooLong));
            }
            cfg.control_socket = Some(PathBuf::from(s));
        }
        Key::MetricsListen => cfg.metrics_listen = Some(f.listen(ex)?),
        Key::AdaptiveInterval => cfg.adaptive_interval = small(f.millis(1, INT_MAX, ex)?),
        Key::AdaptiveIdleGap => cfg.adaptive_idle_gap = small(f.millis(0, 60_000, ex)?),
    }
    Ok(())
}

/// `offloads = false`, or a table of members: `offloads = { eth2 = false }`.
fn offloads(ctx: &Ctx<'_>, f: &Field<'_, '_>, example: &str) -> Res<OffloadsGiven> {
    let table = match f.value.get_ref() {
        DeValue::Table(t) => t,
        DeValue::Array(_) => {
            return Err(f.fault(ErrorKind::WrongType {
                expected: "true or false, or a table of members such as { eth2 = false }",
                found: "array",
                example: example.to_string(),
            }))
        }
        _ => return f.boolean(example).map(OffloadsGiven::All),
    };
    let each = per_member(ctx, f, table, |entry, name| {
        entry.boolean(&format!("offloads = {{ {name} = false }}"))
    })?;
    Ok(OffloadsGiven::Each(each))
}

/// `ad_actor_port_prio = { eth1 = 100, eth2 = 200 }`: each member's.
fn port_prios(
    ctx: &Ctx<'_>,
    f: &Field<'_, '_>,
) -> Res<Vec<(String, u16, core::ops::Range<usize>)>> {
    let DeValue::Table(table) = f.value.get_ref() else {
        return Ok(Vec::new());
    };
    per_member(ctx, f, table, |entry, name| {
        let example = format!("ad_actor_port_prio = {{ {name} = 100 }}");
        Ok(u16::try_from(entry.uint(1, 65535, &example)?).unwrap_or(255))
    })
}

/// The entries of a per-member table (`{ eth1 = ..., eth2 = ... }`), each
/// value read by `value`: (member, value, span of its name), a name given
/// twice refused.
fn per_member<T>(
    ctx: &Ctx<'_>,
    f: &Field<'_, '_>,
    table: &DeTable<'_>,
    mut value: impl FnMut(&Field<'_, '_>, &str) -> Res<T>,
) -> Res<Vec<(String, T, core::ops::Range<usize>)>> {
    let mut each: Vec<(String, T, core::ops::Range<usize>)> = Vec::new();
    for (k, v) in sorted(table) {
        let name = k.get_ref().trim().to_string();
        let entry = Field {
            written: f.written,
            key_span: (k.span().start, k.span().end),
            value: v,
        };
        let got = value(&entry, &name)?;
        if let Some((_, _, first)) = each.iter().find(|(n, _, _)| *n == name) {
            return Err(entry.fault(ErrorKind::Duplicate {
                value: name,
                first_line: ctx.line(first.start),
            }));
        }
        each.push((name, got, k.span()));
    }
    Ok(each)
}

fn mac(f: &Field<'_, '_>, example: &str) -> Res<MacAddr> {
    let s = f.string(example)?;
    let bad = |problem| {
        f.fault(ErrorKind::BadMac {
            value: s.trim().to_string(),
            problem,
        })
    };
    let m: MacAddr = s.trim().parse().map_err(|_| bad(MacProblem::Syntax))?;
    if m.is_zero() {
        return Err(bad(MacProblem::Zero));
    }
    if m.is_multicast() {
        return Err(bad(MacProblem::Multicast));
    }
    Ok(m)
}

fn ifname(f: &Field<'_, '_>, example: &str) -> Res<String> {
    let s = f.string(example)?.trim();
    check_ifname(s).map_err(|problem| {
        f.fault(ErrorKind::BadName {
            value: s.to_string(),
            problem,
        })
    })?;
    Ok(s.to_string())
}

/// Linux's `dev_valid_name`.
fn check_ifname(s: &str) -> Result<(), NameProblem> {
    if s.is_empty() {
        return Err(NameProblem::Empty);
    }
    if s == "." || s == ".." {
        return Err(NameProblem::Dots);
    }
    if s.len() > MAX_IFNAME {
        return Err(NameProblem::TooLong);
    }
    match s
        .chars()
        .find(|c| matches!(c, '/' | ':') || c.is_whitespace() || c.is_control())
    {
        Some(c) => Err(NameProblem::BadChar(c)),
        None => Ok(()),
    }
}

/// An IPv4 probe target; Linux refuses the zero network and broadcast, and
/// a multicast target would never answer an ARP request.
fn parse_v4(s: &str) -> Result<Ipv4Addr, TargetProblem> {
    let a: Ipv4Addr = s.trim().parse().map_err(|_| TargetProblem::NotIpv4)?;
    if a.octets()[0] == 0 || a.is_broadcast() || a.is_multicast() {
        return Err(TargetProblem::Unusable);
    }
    Ok(a)
}

/// An IPv6 probe target; Linux refuses `::`, loopback and multicast.
fn parse_v6(s: &str) -> Result<Ipv6Addr, TargetProblem> {
    let a: Ipv6Addr = s.trim().parse().map_err(|_| TargetProblem::NotIpv6)?;
    if a.is_unspecified() || a.is_loopback() || a.is_multicast() {
        return Err(TargetProblem::Unusable);
    }
    Ok(a)
}

/// A list of probe targets: at most [`MAX_ARP_TARGETS`], no duplicates.
fn targets<A: PartialEq + ToString>(
    ctx: &Ctx<'_>,
    f: &Field<'_, '_>,
    example: &str,
    parse: fn(&str) -> Result<A, TargetProblem>,
) -> Res<Vec<A>> {
    let items = f.list(example)?;
    if items.len() > MAX_ARP_TARGETS {
        return Err(f.fault(ErrorKind::TooMany {
            what: "targets",
            count: items.len(),
            max: MAX_ARP_TARGETS,
        }));
    }
    let mut out: Vec<(A, usize)> = Vec::new();
    for (s, span) in items {
        let at = |kind| Fault {
            span: span.clone(),
            kind,
        };
        let a = parse(&s).map_err(|problem| {
            at(ErrorKind::BadTarget {
                value: s.clone(),
                problem,
            })
        })?;
        if let Some((_, first)) = out.iter().find(|(x, _)| *x == a) {
            return Err(at(ErrorKind::Duplicate {
                value: a.to_string(),
                first_line: ctx.line(*first),
            }));
        }
        out.push((a, span.start));
    }
    Ok(out.into_iter().map(|(a, _)| a).collect())
}

/// Names, interfaces, sockets and ports are not shared between bonds.
fn check_across(ctx: &Ctx<'_>, built: &[Built]) -> Result<(), ConfigError> {
    let mut names: HashMap<&str, usize> = HashMap::new();
    let mut interfaces: HashMap<&str, (&str, usize)> = HashMap::new();
    let mut sockets: HashMap<&PathBuf, (&str, usize)> = HashMap::new();
    let mut ports: Vec<(std::net::SocketAddr, (&str, usize))> = Vec::new();
    for b in built {
        let bond = b.cfg.name.as_str();
        if let Some(first) = names.insert(bond, b.name_at) {
            return Err(ctx.error(
                b.name_at,
                None,
                Some(bond),
                ErrorKind::DuplicateBond {
                    name: bond.to_string(),
                    first_line: ctx.line(first),
                },
            ));
        }
    }
    for b in built {
        let bond = b.cfg.name.as_str();
        for (iface, at, written) in &b.interfaces {
            match interfaces.get(iface.as_str()) {
                Some((other, other_at)) if *other != bond => {
                    return Err(ctx.error(
                        *at,
                        Some(written),
                        Some(bond),
                        ErrorKind::MemberInTwoBonds {
                            member: iface.clone(),
                            other_bond: other.to_string(),
                            other_line: ctx.line(*other_at),
                        },
                    ));
                }
                _ => {
                    interfaces.insert(iface, (bond, *at));
                }
            }
        }
        if let (Some(path), Some((at, written))) = (&b.cfg.control_socket, &b.socket_at) {
            if let Some((other, other_at)) = sockets.insert(path, (bond, *at)) {
                return Err(ctx.error(
                    *at,
                    Some(written),
                    Some(bond),
                    ErrorKind::SocketClash {
                        other_bond: other.to_string(),
                        other_line: ctx.line(other_at),
                    },
                ));
            }
        }
        if let (Some(addr), Some((at, written))) = (b.cfg.metrics_listen, &b.port_at) {
            // One port on the unspecified address takes it on every address.
            let clash = ports.iter().find(|(a, _)| {
                a.port() == addr.port()
                    && (a.ip() == addr.ip()
                        || a.ip().is_unspecified()
                        || addr.ip().is_unspecified())
            });
            if let Some(&(_, (other, other_at))) = clash {
                return Err(ctx.error(
                    *at,
                    Some(written),
                    Some(bond),
                    ErrorKind::PortClash {
                        other_bond: other.to_string(),
                        other_line: ctx.line(other_at),
                    },
                ));
            }
            ports.push((addr, (bond, *at)));
        }
    }
    Ok(())
}
