//! What the end that spreads a direction can be told to do.
//!
//! A fix is only useful in a vocabulary the device at that end has: a
//! Catalyst's `port-channel load-balance` takes a handful of methods and
//! nothing else, so naming lagkit's `strong` or `adaptive` to it is no
//! advice at all. A [`Platform`] lists the spreadings an end offers and
//! writes the configuration line that sets one; the planner ranks only
//! those ([`crate::predict::alternatives`]) and the explanations name the
//! best of them by its predicted spread on the user's own flows.
//!
//! The Catalyst's methods come from `--cisco-switch` (the nine every
//! Catalyst family has) or from the switch's IOS configuration, read by
//! the same reader `lagkit check` and lagkit's switch use
//! ([`lagkit_ios::parse`]): a configuration that runs a method outside
//! those nine (`src-dst-mixed-ip-port`, a Catalyst 6500's) shows that its
//! platform has it too.

use crate::predict::{Prediction, Spread};
use lagkit_hash::Policy;
use serde::Serialize;

/// The methods every Catalyst family's `port-channel load-balance` takes.
pub const CATALYST_METHODS: [Policy; 9] = [
    Policy::CiscoSrcMac,
    Policy::CiscoDstMac,
    Policy::CiscoSrcDstMac,
    Policy::CiscoSrcIp,
    Policy::CiscoDstIp,
    Policy::CiscoSrcDstIp,
    Policy::CiscoSrcPort,
    Policy::CiscoDstPort,
    Policy::CiscoSrcDstPort,
];

/// The spreadings one end offers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Platform {
    /// Anything lagkit knows: a lagkit or Linux bond, lagkit's switch
    /// told nothing more.
    Any,
    /// A Cisco Catalyst: only these `port-channel load-balance` methods.
    Catalyst {
        /// Its methods, in IOS's order.
        methods: Vec<Policy>,
    },
}

/// Why a switch configuration gives no platform.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {why}")]
pub struct PlatformError {
    /// The line (1-based).
    pub line: usize,
    /// What is wrong and how to fix it.
    pub why: String,
}

/// A switch's platform and the method its configuration runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchFacts {
    /// What it offers.
    pub platform: Platform,
    /// The method it runs (`port-channel load-balance`, or the default
    /// lagkit's switch takes when the line is absent).
    pub method: Policy,
    /// The line's number, `None` when the default was taken.
    pub line: Option<usize>,
    /// Member ports of each channel group, ascending by group.
    pub channels: Vec<(u32, usize)>,
}

/// A change the end's platform can make, with its predicted spread on the
/// flows planned.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Suggestion {
    /// The spreading (`src-dst-port`, `strong`).
    pub spread: String,
    /// The configuration line that sets it, where the platform has one
    /// (`port-channel load-balance src-dst-port`).
    pub line: Option<String>,
    /// Predicted share of the bytes per link.
    pub shares: Vec<f64>,
    /// Predicted share of capacity.
    pub of_capacity: f64,
}

impl Suggestion {
    /// How the user sets it: the configuration line, else the name.
    pub fn say(&self) -> &str {
        self.line.as_deref().unwrap_or(&self.spread)
    }
}

impl Platform {
    /// `best` (the platform's best alternative on these flows) as a
    /// suggestion; `None` unless it beats `configured` by more than half a
    /// percent of capacity.
    pub fn suggest(
        &self,
        configured: &Prediction,
        best: Option<&Prediction>,
    ) -> Option<Suggestion> {
        let best = best?;
        if best.spread == configured.spread || best.of_capacity <= configured.of_capacity + 0.005 {
            return None;
        }
        Some(self.suggestion(best))
    }

    /// Prediction `p` as a suggestion on this platform.
    pub fn suggestion(&self, p: &Prediction) -> Suggestion {
        Suggestion {
            spread: p.spread.clone(),
            line: Spread::parse(&p.spread).ok().and_then(|s| self.line(&s)),
            shares: p.links.iter().map(|l| l.share).collect(),
            of_capacity: p.of_capacity,
        }
    }

    /// A Catalyst with the methods every family has.
    pub fn catalyst() -> Platform {
        Platform::Catalyst {
            methods: CATALYST_METHODS.to_vec(),
        }
    }

    /// A short name: `any` or `cisco catalyst`.
    pub fn name(&self) -> &'static str {
        match self {
            Platform::Any => "any",
            Platform::Catalyst { .. } => "cisco catalyst",
        }
    }

    /// Whether the end can be set to spread so.
    pub fn offers(&self, s: &Spread) -> bool {
        match self {
            Platform::Any => true,
            Platform::Catalyst { methods } => {
                matches!(s, Spread::Hash(p) if methods.contains(p))
            }
        }
    }

    /// The line that sets `s` on this platform, when it has one:
    /// `port-channel load-balance src-dst-ip` on a Catalyst.
    pub fn line(&self, s: &Spread) -> Option<String> {
        match (self, s) {
            (Platform::Catalyst { .. }, Spread::Hash(p)) if self.offers(s) => {
                Some(format!("port-channel load-balance {}", p.name()))
            }
            _ => None,
        }
    }

    /// What the platform's switch is told, in words: `port-channel
    /// load-balance src-dst-port` on a Catalyst, the spreading's name
    /// elsewhere.
    pub fn say(&self, s: &Spread) -> String {
        self.line(s).unwrap_or_else(|| s.to_string())
    }

    /// Reads a Catalyst's IOS configuration with the reader `lagkit check`
    /// and lagkit's switch use: its platform (the nine methods, and the
    /// one it runs if that is another), the method it runs and its
    /// channels' sizes.
    pub fn from_ios(text: &str) -> Result<SwitchFacts, PlatformError> {
        let cfg = lagkit_ios::parse(text).map_err(|e| PlatformError {
            line: e.line,
            why: e.why,
        })?;
        let (name, line) = match &cfg.load_balance {
            Some(m) => (m.value.to_ascii_lowercase(), Some(m.line)),
            None => (lagkit_switch::config::DEFAULT_METHOD.to_string(), None),
        };
        // The reader refuses every name that is not a Catalyst method, and
        // each it takes is a policy (lagkit's switch holds the two lists
        // together in a test).
        let method: Policy = format!("cisco:{name}").parse().map_err(|_| PlatformError {
            line: line.unwrap_or(0),
            why: format!("port-channel load-balance {name}: not a method lagkit can predict"),
        })?;
        let mut methods = CATALYST_METHODS.to_vec();
        if !methods.contains(&method) {
            methods.push(method);
        }
        let channels = cfg
            .channel_groups()
            .iter()
            .map(|(n, c)| (*n, c.members.len()))
            .collect();
        Ok(SwitchFacts {
            platform: Platform::Catalyst { methods },
            method,
            line,
            channels,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_catalyst_offers_its_methods_and_nothing_of_lagkit() {
        let c = Platform::catalyst();
        for p in CATALYST_METHODS {
            assert!(c.offers(&Spread::Hash(p)), "{p}");
        }
        for s in [
            "strong",
            "adaptive",
            "balance-rr",
            "layer3+4",
            "src-dst-mixed-ip-port",
        ] {
            assert!(!c.offers(&Spread::parse(s).unwrap()), "{s}");
        }
        assert_eq!(
            c.line(&Spread::parse("src-dst-ip").unwrap()).as_deref(),
            Some("port-channel load-balance src-dst-ip")
        );
        assert_eq!(c.line(&Spread::parse("strong").unwrap()), None);
        assert!(Platform::Any.offers(&Spread::parse("adaptive").unwrap()));
    }

    #[test]
    fn a_configuration_gives_its_method_channels_and_platform() {
        let f = Platform::from_ios(
            "hostname sw\nport-channel load-balance src-dst-mixed-ip-port\n\
             interface range gi1/1 - 2\n channel-group 1 mode active\n\
             interface gi1/3\n channel-group 2 mode on\n",
        )
        .unwrap();
        assert_eq!(f.method, Policy::CiscoSrcDstMixedIpPort);
        assert_eq!(f.line, Some(2));
        assert_eq!(f.channels, vec![(1, 2), (2, 1)]);
        assert!(f
            .platform
            .offers(&Spread::Hash(Policy::CiscoSrcDstMixedIpPort)));
        // Without the line: the default lagkit's switch takes.
        let d = Platform::from_ios("interface gi1/1\n channel-group 1 mode active\n").unwrap();
        assert_eq!((d.method, d.line), (Policy::CiscoSrcDstIp, None));
        assert_eq!(d.platform, Platform::catalyst());
        // A method Catalysts lack names its line.
        let e = Platform::from_ios("!\nport-channel load-balance strong\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.why.contains("not a Catalyst method"), "{e}");
    }
}
