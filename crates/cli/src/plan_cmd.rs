//! `lagkit plan`: how would a configuration spread this traffic?

use crate::bond_cmd::Failure;
use lagkit_bondcfg::Mode;
use lagkit_planner::input::{parse_rate, Host};
use lagkit_planner::predict::{EndConfig, Spread, DEFAULT_STRONG};
use std::path::PathBuf;

/// Options of `lagkit plan`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The traffic: a flow list (.csv or .json: proto, src, sport, dst,
    /// dport, src_mac, dst_mac, vlan, bytes, rate, dir) or a pcap/pcapng
    /// capture (read as a stream).
    traffic: PathBuf,
    /// The host bond's spreading, for flows it sends (`dir = out`): a
    /// transmit hash policy (layer3+4, src_dst_port, strong, ...) or a mode
    /// (balance-rr, active-backup, adaptive).
    #[arg(long, default_value = "layer2")]
    host_hash: String,
    /// Take the host's mode, hash policy and link count from a lagkit bond
    /// configuration instead (its first bond, or --bond).
    #[arg(long, conflicts_with = "host_hash")]
    config: Option<PathBuf>,
    /// The bond in --config.
    #[arg(long, requires = "config")]
    bond: Option<String>,
    /// The switch's spreading, for flows towards the host (`dir = in`):
    /// a Cisco load-balance method (src-dst-ip, src-dst-port, ...) or any
    /// policy lagkit knows.
    #[arg(long, default_value = "src-dst-ip")]
    switch_hash: String,
    /// The switch is a Cisco Catalyst: rank only its load-balance methods.
    #[arg(long)]
    cisco_switch: bool,
    /// Links in the aggregate (default: the bond's members with --config, else 2).
    #[arg(long)]
    links: Option<usize>,
    /// Each link's rate (bit/s; 100M, 1g, 10g).
    #[arg(long, default_value = "1g")]
    rate: String,
    /// For captures: the bonded host's IP or MAC; frames from it are `out`,
    /// to it `in`, others are skipped. Without it every frame is `out`.
    #[arg(long)]
    host: Option<String>,
    /// Name the causes of an imbalance and what to change.
    #[arg(long)]
    explain: bool,
    /// How many alternatives to list.
    #[arg(long, default_value_t = 8)]
    top: usize,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Write per-link share charts (plan-out.svg, plan-in.svg) into this directory.
    #[arg(long)]
    svg: Option<PathBuf>,
}

fn from_config(path: &PathBuf, bond: Option<&str>) -> Result<(Spread, usize), String> {
    let bonds = lagkit_bondcfg::parse_file(path).map_err(|e| e.to_string())?;
    let b = match bond {
        Some(n) => bonds.iter().find(|b| b.name == n).ok_or_else(|| {
            let names: Vec<&str> = bonds.iter().map(|b| b.name.as_str()).collect();
            format!(
                "{}: no bond {n:?}; it has {}",
                path.display(),
                names.join(", ")
            )
        })?,
        None => bonds
            .first()
            .ok_or_else(|| format!("{}: no bond in this file", path.display()))?,
    };
    let spread = match b.mode {
        Mode::Lacp | Mode::BalanceXor => Spread::Hash(b.hash_policy(DEFAULT_STRONG.seed)),
        Mode::BalanceRr => Spread::RoundRobin,
        Mode::ActiveBackup | Mode::Broadcast => Spread::Single,
        Mode::BalanceTlb | Mode::BalanceAlb | Mode::Adaptive => Spread::Adaptive(DEFAULT_STRONG),
    };
    Ok((spread, b.members.len()))
}

/// Runs `lagkit plan`.
pub fn run(a: Args) -> Result<(), Failure> {
    let usage = Failure::Usage;
    let rate = parse_rate(&a.rate).map_err(|e| usage(format!("--rate: {e}")))?;
    if rate <= 0.0 {
        return Err(usage("--rate must be above 0".into()));
    }
    let (host_spread, cfg_links) = match &a.config {
        Some(p) => {
            let (s, n) = from_config(p, a.bond.as_deref()).map_err(usage)?;
            (s, Some(n))
        }
        None => (
            Spread::parse(&a.host_hash).map_err(|e| usage(format!("--host-hash: {e}")))?,
            None,
        ),
    };
    let switch_spread =
        Spread::parse(&a.switch_hash).map_err(|e| usage(format!("--switch-hash: {e}")))?;
    let links = a.links.or(cfg_links).unwrap_or(2);
    if links == 0 || links > 64 {
        return Err(usage(format!("--links {links}: use 1 to 64")));
    }
    let host = a
        .host
        .as_deref()
        .map(str::parse::<Host>)
        .transpose()
        .map_err(|e| usage(format!("--host: {e}")))?;
    let (flows, stats) =
        lagkit_planner::read_flows(&a.traffic, host).map_err(|e| usage(e.to_string()))?;
    let end = |spread| EndConfig {
        spread,
        links,
        rate_bps: rate,
    };
    let report = lagkit_planner::report::plan(
        &flows,
        &end(host_spread),
        &end(switch_spread),
        a.explain,
        a.cisco_switch,
    );
    if a.json {
        let v =
            serde_json::to_string_pretty(&report).map_err(|e| Failure::Runtime(e.to_string()))?;
        println!("{v}");
    } else {
        if stats.packets > 0 {
            println!(
                "{}: {} packets in {} flows{}{}",
                a.traffic.display(),
                stats.packets,
                flows.len(),
                if stats.not_ethernet > 0 {
                    format!(", {} not Ethernet (skipped)", stats.not_ethernet)
                } else {
                    String::new()
                },
                if stats.unrelated > 0 {
                    format!(
                        ", {} neither from nor to the host (skipped)",
                        stats.unrelated
                    )
                } else {
                    String::new()
                }
            );
        }
        print!("{}", report.text(a.top));
    }
    if let Some(dir) = &a.svg {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::Runtime(format!("{}: {e}", dir.display())))?;
        for (name, svg) in report.svgs(a.top) {
            let p = dir.join(name);
            std::fs::write(&p, svg)
                .map_err(|e| Failure::Runtime(format!("{}: {e}", p.display())))?;
            if !a.json {
                println!("wrote {}", p.display());
            }
        }
    }
    Ok(())
}
