//! The configuration of `lagkit up CONFIG`: one TOML file describing one
//! bond or several.
//!
//! People arrive with a Linux `bonding` setup, an AIX EtherChannel or a Cisco
//! port-channel in their heads, so options take Linux's names
//! (`Documentation/networking/bonding.rst`) and also AIX's and Cisco's
//! (`adapter_names`, `hash_mode`, `mode = "8023ad"`, `mode = "on"`), and
//! values may be written as Linux users write them (`miimon = "100"`,
//! `lacp_rate = 1`, `auto_recovery = "yes"`). What is refused is refused
//! loudly: a bond that does not come up at boot is debugged from one log
//! line, so every error names the file, line, column and key, what is wrong
//! and how to fix it, and unknown keys are errors with a "did you mean".
//!
//! ```
//! let text = r#"
//! name = "bond0"
//! mode = "802.3ad"
//! members = ["eth1", "eth2"]
//! xmit_hash_policy = "layer3+4"
//! lacp_rate = "fast"
//! address = ["10.0.0.1/24"]
//! "#;
//! let (bonds, warnings) = lagkit_bondcfg::parse_str(text, "bond.toml").unwrap();
//! assert_eq!(bonds[0].mode, lagkit_bondcfg::Mode::Lacp);
//! assert!(warnings.is_empty());
//!
//! let err = lagkit_bondcfg::parse_str("name = \"bond0\"\nmode = \"balance-foo\"\n", "bond.toml")
//!     .unwrap_err();
//! assert!(err.to_string().starts_with("bond.toml:2:1: key 'mode': unknown mode 'balance-foo'; use one of 802.3ad,"));
//! ```
//!
//! # Several bonds
//!
//! Either one table per bond, the table's name being the bond's:
//!
//! ```toml
//! lacp_rate = "fast"          # top-level keys are defaults for every bond
//!
//! [bond0]
//! mode = "802.3ad"
//! members = ["eth1", "eth2"]
//!
//! [bond1]
//! mode = "active-backup"
//! members = ["eth3", "eth4"]
//! ```
//!
//! or an array of `[[bond]]` tables, each with a `name`. A bond cannot be
//! named after an option (`[mode]` is read as the option). A bond's own keys
//! override the top-level defaults. Across bonds, names, member interfaces
//! (backup adapters included), explicit control sockets and metrics
//! addresses must differ. In such a file, messages also name the bond
//! (`bond.toml:2:1: bond 'bond1': key 'primary': ...`), since a default's
//! line is shared by every bond.
//!
//! # Choices
//!
//! - **Required keys**: `name` (the table name in the table form), `mode`
//!   and `members`. There is no default mode: the peer must be configured to
//!   match, and a guessed mode is a silent outage.
//! - **`updelay`, `downdelay`, `peer_notif_delay`**: when `miimon` > 0 they
//!   are rounded *down* to a multiple of `miimon`, with a warning, exactly as
//!   Linux does ("value rounded to ..."), so a file moved from Linux behaves
//!   the same. With `miimon = 0` (netlink carrier events, no polling) they
//!   are kept to the millisecond: lagkit times them itself.
//! - **ARP monitoring**: `arp_interval` > 0 in 802.3ad, balance-tlb or
//!   balance-alb is an error (Linux refuses it), as is `arp_interval` with no
//!   target. With both `miimon` and `arp_interval` in another mode, Linux
//!   silently turns `miimon` off; lagkit keeps both and warns.
//! - **AIX `netaddr`** is the ibm_ech attribute: the address to ping.
//!   Without `arp_interval` it is pinged every `retry_time` seconds and
//!   `num_retries` silent periods fail over to `backup_adapter`; with
//!   `arp_interval` it is one more ARP target. It is allowed in 802.3ad
//!   (AIX uses it exactly there). AIX's *interface* `netaddr`/`netmask`
//!   (on `en`, not `ent`) is `address` here; `netaddr` equal to the bond's
//!   own address is refused with that explanation.
//! - **AIX `backup_adapter`** must not also be a member (AIX's rule): it
//!   carries traffic only when every member has failed.
//!   **`use_jumbo_frame = "yes"`** means `mtu = 9000`; an explicit `mtu`
//!   wins, with a warning if they disagree.
//! - **`adaptive`** is static (no LACP), like balance-xor, and requires the
//!   `strong` hash, whose buckets it moves.
//! - **`hash_seed`** may also be given inside the policy
//!   (`strong:seed=42`); both must agree. Unset, it stays `None` and the
//!   daemon draws a random seed per bond at start
//!   ([`BondConfig::hash_policy`]).
//! - **Keys** match case-insensitively with `-` and `_` interchangeable, and
//!   netplan (`mii-monitor-interval`) and ifupdown (`bond-slaves`) spellings
//!   are aliases. One option given under two spellings is an error.
//! - **Paths**: the control socket defaults to
//!   `/run/lagkit/<netns-inode>/<bond>.sock` and state to
//!   `/run/lagkit/<netns-inode>/<bond>/` (see [`paths`]), so daemons in two
//!   network namespaces, each with a `bond0`, do not collide.
//! - **`offloads`**: `offloads = false` has lagkit turn off tx
//!   checksumming, TSO and GSO on every member (and the backup adapter)
//!   while the bond runs, for peers that read a virtual wire in user space
//!   (`docs/interop.md`). Members are strings, so the per-member form is a
//!   table keyed by member, `offloads = { eth2 = false }`; a name there
//!   that is not a member is an error at that name.
//! - **`engine`**: `auto` (default) runs the bond's data path as tc BPF
//!   programs where the kernel allows it and in lagkit's userspace
//!   forwarding threads otherwise; `bpf` or `userspace` insist on one.
//! - **Mode-specific keys in another mode** (`lacp_rate` in active-backup)
//!   are [`Warning`]s, not errors: Linux accepts and ignores most of them,
//!   and one file of defaults may serve bonds of several modes.

#![forbid(unsafe_code)]

mod bond;
mod cidr;
mod docs;
mod enums;
mod error;
mod keys;
mod parse;
pub mod paths;
mod quote;
mod value;

use std::path::Path;

pub use bond::{
    BondConfig, ConfigChange, OptionChange, PortPriorities, Probe, Reload, REBUILD_KEYS,
};
pub use cidr::Cidr;
pub use docs::{key_docs, Alias, KeyDoc, ReloadEffect, ValueDoc};
pub use enums::{
    AdSelect, ArpAllTargets, ArpValidate, Engine, FailOverMac, LacpRate, Mode, NoPartner, Pagp,
    PagpRate, ParseEnumError, PrimaryReselect,
};
pub use error::{
    CidrProblem, ConfigError, ErrorKind, InvalidConfig, MacProblem, NameProblem, PathProblem,
    TargetProblem, Warning, WarningKind,
};
pub use parse::{parse_str, MAX_ARP_TARGETS};
pub use paths::{default_control_socket, default_state_dir};

/// Every option's canonical name with its aliases, in documentation order
/// (for help output and completion).
pub fn option_names() -> impl Iterator<Item = (&'static str, &'static [&'static str])> {
    keys::KEYS
        .iter()
        .map(|(_, name, aliases)| (*name, *aliases))
}

/// Reads and parses a config file, logging each warning (`tracing`, level
/// warn). Use [`parse_file_with_warnings`] to handle the warnings yourself.
pub fn parse_file(path: impl AsRef<Path>) -> Result<Vec<BondConfig>, ConfigError> {
    let (bonds, warnings) = parse_file_with_warnings(path)?;
    for w in &warnings {
        tracing::warn!("{w}");
    }
    Ok(bonds)
}

/// Reads and parses a config file; messages name the path as given.
pub fn parse_file_with_warnings(
    path: impl AsRef<Path>,
) -> Result<(Vec<BondConfig>, Vec<Warning>), ConfigError> {
    let path = path.as_ref();
    let bytes = lagkit_input::read(path, &lagkit_input::BOND_CONFIG).map_err(|e| match e {
        lagkit_input::InputError::Io { source, .. } => ConfigError::Read {
            file: path.to_path_buf(),
            source,
        },
        e => ConfigError::TooLarge(e),
    })?;
    let name = lagkit_input::name(path);
    match std::str::from_utf8(&bytes) {
        Ok(text) => parse_str(text, &name),
        Err(e) => Err(parse::not_text(&bytes, e.valid_up_to(), &name)),
    }
}

/// Runs arbitrary bytes through the parser (as lossy UTF-8) for `cargo
/// fuzz`. Panics only if an invariant breaks: an error's line outside the
/// text, a config that does not survive `to_toml` and back, or a non-empty
/// diff of a config with itself.
pub fn fuzz_one(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match parse_str(&text, "fuzz.toml") {
        Ok((bonds, warnings)) => {
            let lines = text.lines().count() + 1;
            for w in &warnings {
                assert!(w.line >= 1 && w.line <= lines, "{w}");
                assert!(!w.to_string().is_empty());
            }
            for b in &bonds {
                assert!(b.diff(b).is_empty(), "{b:?}");
                let written = b.to_toml();
                match parse_str(&written, "again.toml") {
                    Ok((again, _)) => assert_eq!(again, std::slice::from_ref(b), "{written}"),
                    Err(e) => panic!("to_toml wrote an invalid file: {e}\n{written}"),
                }
            }
        }
        Err(ConfigError::TooLarge(e)) => {
            assert!(text.len() as u64 > lagkit_input::BOND_CONFIG.bytes, "{e}");
        }
        Err(e) => {
            let shown = e.to_string();
            assert!(shown.starts_with("fuzz.toml:"), "{shown}");
            let line = e.line().unwrap_or(0);
            assert!(line >= 1 && line <= text.lines().count() + 1, "{shown}");
        }
    }
}
