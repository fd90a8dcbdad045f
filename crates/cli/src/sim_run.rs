//! What every `lagkit sim` protocol shares: the links between the two
//! systems, the faults scheduled on them, how long to run, and the output
//! options. Each protocol's command flattens [`RunArgs`] into its own.

use lagkit_proto::Instant;
use lagkit_sim::{Fault, LinkSpec, Node, Sim};
use std::path::PathBuf;
use std::time::Duration;

/// Options of every `lagkit sim` protocol.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Number of links between A and B (default 2; `sim pair`: as many
    /// as the host has members and the channel has ports).
    #[arg(long)]
    links: Option<usize>,
    /// Cut link L (1-based) at time T: carrier down at both ends. Repeatable: --cut 2@30s
    #[arg(long, value_name = "L@T")]
    cut: Vec<String>,
    /// Restore link L at time T.
    #[arg(long, value_name = "L@T")]
    restore: Vec<String>,
    /// From time T link L loses every frame while carrier stays up.
    #[arg(long, value_name = "L@T")]
    blackhole: Vec<String>,
    /// End a black hole on link L at time T.
    #[arg(long, value_name = "L@T")]
    clear: Vec<String>,
    /// Lose the next N PDUs A sends on link L at time T: --drop 1:2@20s
    #[arg(long, value_name = "L:N@T")]
    drop: Vec<String>,
    /// Probability that any PDU is lost (0.0-1.0), on every link.
    #[arg(long, default_value_t = 0.0)]
    loss: f64,
    /// One-way link delay (100us, 1ms, 0.5ms; a plain number is seconds).
    #[arg(long, default_value = "100us", value_parser = lagkit_units::duration_arg)]
    delay: Duration,
    /// Virtual time to simulate: 60s, 1m, 90 (a plain number is seconds;
    /// default: 60s, or 30s past the last fault).
    #[arg(long, value_parser = lagkit_units::duration_arg)]
    duration: Option<Duration>,
    /// Seed of the loss process.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print only the final state, not the timeline.
    #[arg(long)]
    pub quiet: bool,
    /// Write every PDU sent to this pcap file (decode with tshark -O lacp / -O pagp).
    #[arg(long)]
    pcap: Option<PathBuf>,
}

/// The validated run: links, faults, end time.
pub struct Plan {
    /// Number of links.
    pub links: usize,
    /// Every link's delay and loss.
    pub spec: LinkSpec,
    /// (link index, time, fault).
    pub faults: Vec<(usize, Duration, Fault)>,
    /// When the run ends.
    pub end: Instant,
}

impl Plan {
    /// "2 links, delay 100µs, loss 0" for the report's first line.
    pub fn headline(&self) -> String {
        format!(
            "{} link{}, delay {:?}, loss {}",
            self.links,
            if self.links == 1 { "" } else { "s" },
            self.spec.delay,
            self.spec.loss
        )
    }
}

impl RunArgs {
    /// Checks the options and computes the run, with `default_links`
    /// links unless --links says.
    pub fn plan(&self, default_links: usize) -> Result<Plan, String> {
        let links = self.links.unwrap_or(default_links);
        if links == 0 || links > 64 {
            return Err(format!("--links {links}: choose 1 to 64 links"));
        }
        if !(0.0..=1.0).contains(&self.loss) {
            return Err(format!(
                "--loss {}: a probability is between 0 and 1",
                self.loss
            ));
        }
        let delay = self.delay;
        let mut faults = Vec::new();
        for (kind, list) in [
            ("cut", &self.cut),
            ("restore", &self.restore),
            ("blackhole", &self.blackhole),
            ("clear", &self.clear),
            ("drop", &self.drop),
        ] {
            for f in list {
                faults.push(parse_fault(f, links, kind)?);
            }
        }
        let last_fault = faults.iter().map(|f| f.1).max().unwrap_or_default();
        let duration = match self.duration {
            Some(d) => d,
            None => (last_fault + Duration::from_secs(30)).max(Duration::from_secs(60)),
        };
        Ok(Plan {
            links,
            spec: LinkSpec {
                delay,
                loss: self.loss,
            },
            faults,
            end: Instant::ZERO + duration,
        })
    }

    /// Schedules the faults and starts the capture if a pcap is wanted.
    pub fn prepare<N: Node>(&self, plan: &Plan, sim: &mut Sim<N>) {
        if self.pcap.is_some() {
            sim.enable_capture();
        }
        for (link, at, fault) in &plan.faults {
            sim.schedule(Instant::ZERO + *at, *link, *fault);
        }
    }

    /// Prints the report with its footer (virtual and wall time, PDUs
    /// delivered), then writes the capture to `--pcap` if given.
    pub fn finish<N: Node>(
        &self,
        mut out: String,
        sim: &Sim<N>,
        elapsed: Duration,
    ) -> Result<(), String> {
        use std::fmt::Write as _;
        let _ = writeln!(
            out,
            "\n(simulated {} of virtual time in {:.3} s; {} PDUs delivered)",
            sim.now(),
            elapsed.as_secs_f64(),
            sim.frames_delivered
        );
        print!("{out}");
        if let Some(path) = &self.pcap {
            lagkit_sim::write_pcap(path, sim.captured())
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            println!(
                "wrote {} frames to {}",
                sim.captured().len(),
                path.display()
            );
        }
        Ok(())
    }
}

/// A number from a `key=value` setting.
pub fn num<T: std::str::FromStr>(what: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("'{what}={v}': '{v}' is not a valid number"))
}

/// A scheduled fault from the command line.
pub fn parse_fault(
    arg: &str,
    links: usize,
    kind: &str,
) -> Result<(usize, Duration, Fault), String> {
    let (l, t) = arg
        .split_once('@')
        .ok_or_else(|| format!("--{kind} '{arg}': expected LINK@TIME, e.g. 2@30s"))?;
    let (l, n) = match l.split_once(':') {
        Some((l, n)) if kind == "drop" => (l, Some(n)),
        _ => (l, None),
    };
    let link: usize = l
        .parse()
        .map_err(|_| format!("--{kind} '{arg}': '{l}' is not a link number"))?;
    if link == 0 || link > links {
        return Err(format!(
            "--{kind} '{arg}': link {link} does not exist (links are 1..={links})"
        ));
    }
    let at = lagkit_units::parse_duration(t).map_err(|e| format!("--{kind} '{arg}': {e}"))?;
    let fault = match kind {
        "cut" => Fault::Cut,
        "restore" => Fault::Restore,
        "blackhole" => Fault::Blackhole,
        "clear" => Fault::Clear,
        _ => {
            let n = n.ok_or_else(|| format!("--drop '{arg}': expected LINK:COUNT@TIME"))?;
            Fault::DropNextFromA(
                n.parse()
                    .map_err(|_| format!("--drop '{arg}': '{n}' is not a count"))?,
            )
        }
    };
    Ok((link - 1, at, fault))
}
