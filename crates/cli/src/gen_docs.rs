//! `lagkit generate-docs --out DIR` (hidden): the man pages, shell
//! completions and the bond key reference, written from the same clap
//! definitions and key table the program runs on, so they cannot describe
//! a flag or key that does not exist. `scripts/gen-docs.sh` runs it over the
//! repository and `tests/docs.rs` fails when the committed files are stale.
//!
//! Layout under DIR: `dist/man/` (lagkit.1, one lagkit-SUB[-SUB].1 per
//! subcommand, lagkit.toml.5), `dist/completions/` (bash, zsh, fish) and
//! `docs/reference/bond-keys.md`.

use crate::bond_cmd::Failure;
use clap::{Command, CommandFactory};
use clap_complete::Shell;
use lagkit_bondcfg::{key_docs, KeyDoc};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Options of `lagkit generate-docs`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The repository root (or a staging directory): pages go to
    /// DIR/dist/man, completions to DIR/dist/completions and the key
    /// reference to DIR/docs/reference.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

/// Writes every generated file under `args.out`.
pub fn run(args: Args) -> Result<(), Failure> {
    for (path, text) in files(&crate::Cli::command()) {
        let path = args.out.join(path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| Failure::Runtime(format!("cannot create {}: {e}", dir.display())))?;
        }
        std::fs::write(&path, text)
            .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

/// Every generated file: its path relative to the output root, and its text.
fn files(cmd: &Command) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let man = Path::new("dist/man");
    let mut for_man = without_help(cmd.clone());
    for_man.build();
    for page in pages(&for_man, None) {
        out.push((man.join(format!("{}.1", page.name)), page.text.into_bytes()));
    }
    out.push((man.join("lagkit.toml.5"), toml_page().into_bytes()));
    let comp = Path::new("dist/completions");
    let visible_only = without_hidden(cmd);
    for (shell, file) in [
        (Shell::Bash, "lagkit.bash"),
        (Shell::Zsh, "_lagkit"),
        (Shell::Fish, "lagkit.fish"),
    ] {
        let mut buf = Vec::new();
        clap_complete::generate(shell, &mut visible_only.clone(), "lagkit", &mut buf);
        out.push((comp.join(file), buf));
    }
    out.push((
        PathBuf::from("docs/reference/bond-keys.md"),
        keys_markdown().into_bytes(),
    ));
    out
}

/// The top-level command without its hidden subcommands (this one):
/// clap_complete would offer them, so the root is rebuilt from its parts.
fn without_hidden(cmd: &Command) -> Command {
    let mut root = Command::new("lagkit")
        .args(cmd.get_arguments().cloned())
        .subcommands(cmd.get_subcommands().filter(|c| !c.is_hide_set()).cloned())
        .subcommand_required(cmd.is_subcommand_required_set())
        .arg_required_else_help(cmd.is_arg_required_else_help_set());
    if cmd.get_version().is_some() {
        root = root.version(env!("CARGO_PKG_VERSION"));
    }
    if let Some(a) = cmd.get_about() {
        root = root.about(a.clone());
    }
    root
}

/// One man page.
struct Page {
    /// `lagkit-lab-run`.
    name: String,
    text: String,
}

/// The visible subcommands of `cmd` (not `help`, not hidden ones).
fn visible(cmd: &Command) -> impl Iterator<Item = &Command> {
    cmd.get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
}

/// `cmd` and all its subcommands without the `help` subcommand, which
/// would otherwise get a page and a SEE ALSO entry of its own.
fn without_help(cmd: Command) -> Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let mut cmd = cmd.disable_help_subcommand(true);
    for n in names {
        cmd = cmd.mut_subcommand(n, without_help);
    }
    cmd
}

/// The page of `cmd` (built, so its display name is `lagkit-lab-run`) and
/// of every subcommand below it; `parent` is the parent's page name.
fn pages(cmd: &Command, parent: Option<&str>) -> Vec<Page> {
    let name = cmd.get_display_name().unwrap_or(cmd.get_name()).to_string();
    let man = clap_mangen::Man::new(cmd.clone())
        .source(format!("lagkit {}", env!("CARGO_PKG_VERSION")))
        .manual("lagkit");
    let mut buf = Vec::new();
    // Rendering into memory cannot fail.
    let _ = man.render_title(&mut buf);
    let _ = man.render_name_section(&mut buf);
    let _ = man.render_synopsis_section(&mut buf);
    let _ = man.render_description_section(&mut buf);
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        let _ = man.render_options_section(&mut buf);
    }
    if visible(cmd).next().is_some() {
        let _ = man.render_subcommands_section(&mut buf);
    }
    let mut text = String::from_utf8_lossy(&buf).into_owned();
    if let Some(after) = cmd.get_after_long_help().or_else(|| cmd.get_after_help()) {
        text.push_str(&notes(&after.to_string()));
    }
    if matches!(name.as_str(), "lagkit" | "lagkit-up") {
        text.push_str(&environment());
        text.push_str(&files_section());
    }
    if name == "lagkit" {
        text.push_str(&examples_main());
    }
    text.push_str(&see_also(cmd, &name, parent));
    let mut out = Vec::new();
    for sub in visible(cmd) {
        out.extend(pages(sub, Some(&name)));
    }
    out.insert(0, Page { name, text });
    out
}

/// The text after a command's options (`after_long_help`) as a NOTES
/// section: `HEADING:` lines become subsections, indented lines stay as
/// typed (examples, tables), the rest is filled.
fn notes(after: &str) -> String {
    let mut s = String::from(".SH NOTES\n");
    let mut verbatim = false;
    for line in after.lines() {
        // `SIDE SETTINGS (--a / --b), comma-separated:`, `EXAMPLES:`.
        let first = line.split_whitespace().next().unwrap_or("");
        let heading = !line.starts_with(' ')
            && line.ends_with(':')
            && first.trim_end_matches(':').len() >= 2
            && first
                .trim_end_matches(':')
                .chars()
                .all(|c| c.is_ascii_uppercase());
        let indented = line.starts_with(' ') && !line.trim().is_empty();
        if indented != verbatim {
            s.push_str(if indented {
                ".PP\n.nf\n.RS 4\n"
            } else {
                ".RE\n.fi\n"
            });
            verbatim = indented;
        }
        if heading {
            let _ = writeln!(s, ".SS \"{}\"", roff(line.trim_end_matches(':')));
        } else if line.trim().is_empty() {
            s.push_str(".PP\n");
        } else if indented {
            let _ = writeln!(s, "{}", roff(line.strip_prefix("    ").unwrap_or(line)));
        } else {
            let _ = writeln!(s, "{}", roff(line));
        }
    }
    if verbatim {
        s.push_str(".RE\n.fi\n");
    }
    s
}

/// Escapes text for roff: backslashes, and a leading `.` or `'` that would
/// be read as a request; `code` in backticks is set in bold.
fn roff(s: &str) -> String {
    s.lines()
        .map(|l| {
            let mut l = l.replace('\\', "\\e");
            if l.matches('`').count() % 2 == 0 {
                let mut bold = false;
                while let Some(i) = l.find('`') {
                    l.replace_range(i..=i, if bold { "\\fR" } else { "\\fB" });
                    bold = !bold;
                }
            }
            if l.starts_with('.') || l.starts_with('\'') {
                format!("\\&{l}")
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn environment() -> String {
    format!(
        ".SH ENVIRONMENT\n.TP\n.B LAGKIT_LOG\n{}\n.TP\n.B LAGKIT_LAB_DIR\n{}\n",
        roff(
            "Which log lines are written to standard error: a tracing EnvFilter \
             directive, such as info, debug, or lagkit_proto=debug,info. Default: info \
             for lagkit up, lagkit load and a running lagkit switch; warn for every other \
             command."
        ),
        roff("Where lagkit lab keeps its state files (default: /run/lagkit/lab)."),
    )
}

fn files_section() -> String {
    let rows = [
        (
            "/run/lagkit/<netns-inode>/<bond>.sock",
            "The control socket of a running bond, which lagkit status, stats and flow \
             ask (the key control_socket moves it). <netns-inode> is the inode of the \
             network namespace, as ip netns identify and lsns show it, so bonds of the \
             same name in two namespaces do not collide.",
        ),
        (
            "/run/lagkit/<netns-inode>/<bond>/lock",
            "Held (flock) by the daemon running the bond, and holding its process id.",
        ),
        (
            "/run/lagkit/<netns-inode>/<bond>/state.json",
            "What lagkit changed on each member (MAC, MTU, ARP, IPv6, offloads, filters), \
             written before each change. A bond started after a crash restores it first; \
             lagkit down restores it by hand. Removed on a clean exit.",
        ),
        (
            "/run/lagkit/<netns-inode>/switch/<hostname>.sock",
            "The control socket of a running lagkit switch, which lagkit switch show and \
             lagkit switch test ask.",
        ),
        (
            "/run/lagkit/lab/<lab>.json",
            "The state of a lab started by lagkit lab up, read by lagkit lab down.",
        ),
    ];
    let mut s = String::from(".SH FILES\n");
    for (path, what) in rows {
        let _ = write!(s, ".TP\n.I {}\n{}\n", roff(path), roff(what));
    }
    s
}

/// The minimal 802.3ad configuration, shared with `lagkit up --help`.
fn lacp_example() -> String {
    let mut s = String::from(".PP\n.nf\n.RS 4\n");
    for line in crate::bond_cmd::UP_EXAMPLE.lines() {
        let _ = writeln!(s, "{}", roff(line.trim_start()));
    }
    s.push_str(".RE\n.fi\n");
    s
}

fn examples_main() -> String {
    let mut s = String::from(".SH EXAMPLES\n");
    s.push_str(&roff(
        "A two-member 802.3ad (LACP) bond: write bond0.toml as below, check it, run it, \
         and ask it how it is doing.",
    ));
    s.push('\n');
    s.push_str(&lacp_example());
    s.push_str(".PP\n.nf\n.RS 4\n");
    for line in [
        "lagkit check bond0.toml switch.cfg   # against the switch's IOS configuration",
        "lagkit up --check bond0.toml         # what would run",
        "lagkit up bond0.toml                 # in the foreground; SIGHUP reloads",
        "lagkit status bond0                  # like /proc/net/bonding/bond0",
        "lagkit sim lacp --a active --b passive   # would LACP form? (virtual time)",
    ] {
        let _ = writeln!(s, "{}", roff(line));
    }
    s.push_str(".RE\n.fi\n");
    s
}

/// Pages related to `cmd` (page `name`): its parent and its own
/// subcommands, and for the bond daemon's commands the configuration file.
fn see_also(cmd: &Command, name: &str, parent: Option<&str>) -> String {
    let mut refs: Vec<String> = Vec::new();
    if let Some(p) = parent {
        refs.push(p.to_string());
    }
    for sub in visible(cmd) {
        refs.push(format!("{name}-{}", sub.get_name()));
    }
    if parent.is_some() && parent != Some("lagkit") {
        refs.push("lagkit".into());
    }
    let mut list: Vec<String> = refs
        .iter()
        .map(|r| format!(".BR {} (1)", roff(r)))
        .collect();
    if matches!(
        name,
        "lagkit"
            | "lagkit-up"
            | "lagkit-down"
            | "lagkit-status"
            | "lagkit-stats"
            | "lagkit-flow"
            | "lagkit-check"
            | "lagkit-plan"
    ) {
        list.push(".BR lagkit.toml (5)".into());
    }
    format!(".SH \"SEE ALSO\"\n{}\n", list.join(",\n"))
}

/// A key's aliases as `adapter_names (AIX), slaves (Linux)`.
fn aliases(d: &KeyDoc) -> String {
    d.aliases
        .iter()
        .map(|a| format!("{} ({})", a.name, a.from))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A named value with its other spellings: `802.3ad (also 8023ad (AIX), 4 (Linux number))`.
fn value_line(v: &lagkit_bondcfg::ValueDoc) -> String {
    let mut s = v.name.to_string();
    if let Some(from) = v.from {
        let _ = write!(s, " ({from})");
    }
    if !v.also.is_empty() {
        let also: Vec<String> = v
            .also
            .iter()
            .map(|a| format!("{} ({})", a.name, a.from))
            .collect();
        let _ = write!(s, ", also {}", also.join(", "));
    }
    s
}

const FILE_INTRO: &str = "lagkit up reads one TOML file describing one bond or several. Options \
    take the names of Linux bonding (Documentation/networking/bonding.rst) and also those of \
    AIX EtherChannel, Cisco, HP Auto Port Aggregation and netplan, listed as aliases below; \
    values may be written as Linux users write them (miimon = \"100\", lacp_rate = 1, \
    auto_recovery = \"yes\"). Keys match case-insensitively with - and _ interchangeable, and \
    an ifupdown-style bond- prefix is accepted (bond-slaves). One option given under two \
    spellings, an unknown key or a bad value is an error naming the file, line, column and \
    key, with a correct example; a key that does not apply to the bond's mode is a warning.";

const FILE_SEVERAL: &str = "Several bonds: one table per bond, the table's name being the \
    bond's ([bond0], [bond1]), or an array of [[bond]] tables each with a name. Top-level \
    keys are defaults for every bond, and a bond's own keys override them. Across bonds, \
    names, members (backup adapters included), explicit control sockets and metrics \
    addresses (metrics_listen; one port on 0.0.0.0 or [::] takes it on every address) must \
    differ.";

const FILE_RELOAD: &str = "SIGHUP to lagkit up re-reads the file. A bond whose keys did not \
    change is left alone. A key marked \"in place\" is applied to the running bond: the \
    aggregate stays up, and members that stay keep their sockets, their LACP or PAgP state and \
    their traffic (a new LACP rate or activity goes to the partner in one LACPDU; a new hash \
    policy, timer or priority is a new plan for the running data path). A key marked \
    \"restart\" or \"rebuild\" restarts that bond, for the reason given with the key. A new \
    bond starts and a removed one stops. The log line of a reload names each changed key and \
    whether it applied in place. A file that does not parse is refused and the running \
    configuration kept.";

/// `lagkit.toml(5)`.
fn toml_page() -> String {
    let mut s = format!(
        ".TH LAGKIT.TOML 5 \"\" \"lagkit {}\" \"File Formats\"\n.SH NAME\nlagkit.toml \\- \
         configuration of lagkit's bond daemon\n.SH SYNOPSIS\n.B lagkit up\n.I FILE\n",
        env!("CARGO_PKG_VERSION")
    );
    let _ = write!(
        s,
        ".SH DESCRIPTION\n{}\n.PP\n{}\n.PP\n{}\n",
        roff(FILE_INTRO),
        roff(FILE_SEVERAL),
        roff(FILE_RELOAD)
    );
    s.push_str(".SH KEYS\n");
    for d in key_docs() {
        let _ = writeln!(s, ".TP\n.B {}", d.name);
        let _ = writeln!(s, "{}", roff(d.meaning));
        let mut facts = vec![
            format!("Type: {}.", d.ty),
            format!("Default: {}.", d.default),
            format!("Reload: {}.", d.reload.fact()),
        ];
        if let Some(m) = d.modes {
            facts.push(format!("Used in: {m}."));
        }
        if !d.aliases.is_empty() {
            facts.push(format!("Aliases: {}.", aliases(&d)));
        }
        facts.push(format!("Example: {}", d.example));
        for f in facts {
            let _ = writeln!(s, ".br\n{}", roff(&f));
        }
        if !d.values.is_empty() {
            s.push_str(".br\nValues:\n.RS\n");
            for v in &d.values {
                let _ = writeln!(s, ".br\n{}", roff(&value_line(v)));
            }
            s.push_str(".RE\n");
        }
    }
    s.push_str(".SH EXAMPLES\nA two-member 802.3ad (LACP) bond:\n");
    s.push_str(&lacp_example());
    s.push_str(".PP\nTwo bonds sharing a default:\n.PP\n.nf\n.RS 4\n");
    for line in [
        "lacp_rate = \"fast\"          # for every bond",
        "",
        "[bond0]",
        "mode = \"802.3ad\"",
        "members = [\"eth1\", \"eth2\"]",
        "",
        "[bond1]",
        "mode = \"active-backup\"",
        "members = [\"eth3\", \"eth4\"]",
        "miimon = 100",
    ] {
        let _ = writeln!(s, "{}", roff(line));
    }
    s.push_str(".RE\n.fi\n");
    s.push_str(&files_section());
    s.push_str(
        ".SH \"SEE ALSO\"\n.BR lagkit (1),\n.BR lagkit-up (1),\n.BR lagkit-check (1),\n.BR \
         lagkit-status (1)\n",
    );
    s
}

/// `docs/reference/bond-keys.md`: the same table as `lagkit.toml(5)`.
fn keys_markdown() -> String {
    let mut s = String::from(
        "# Bond configuration keys\n\n<!-- Generated by `lagkit generate-docs` \
         (scripts/gen-docs.sh) from the parser's key table; do not edit. -->\n\n",
    );
    let _ = write!(s, "{FILE_INTRO}\n\n{FILE_SEVERAL}\n\n{FILE_RELOAD}\n\n");
    s.push_str("| key | type | default | reload | aliases |\n|---|---|---|---|---|\n");
    let cell = |t: &str| t.replace('|', "\\|");
    // Literal values in code style; "required" and "unset (...)" in words.
    let value = |t: &str| {
        if t == "required" || t.starts_with("unset") {
            t.to_string()
        } else {
            format!("`{t}`")
        }
    };
    for d in key_docs() {
        let _ = writeln!(
            s,
            "| [`{n}`](#{n}) | {} | {} | {} | {} |",
            cell(d.ty),
            cell(&value(d.default)),
            d.reload.describe(),
            cell(&aliases(&d)),
            n = d.name,
        );
    }
    for d in key_docs() {
        let _ = write!(s, "\n## {}\n\n{}\n\n", d.name, d.meaning);
        let _ = writeln!(s, "- Type: {}", d.ty);
        let _ = writeln!(s, "- Default: {}", value(d.default));
        let _ = writeln!(s, "- Reload: {}", d.reload.fact());
        if let Some(m) = d.modes {
            let _ = writeln!(s, "- Used in: {m}");
        }
        if !d.aliases.is_empty() {
            let _ = writeln!(s, "- Aliases: {}", aliases(&d));
        }
        let _ = writeln!(s, "- Example: `{}`", d.example);
        if !d.values.is_empty() {
            s.push_str("- Values:\n");
            for v in &d.values {
                let _ = writeln!(s, "  - {}", value_line(v));
            }
        }
    }
    s
}
