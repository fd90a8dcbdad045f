//! `storm-control {broadcast|multicast|unicast} level ...` on an
//! interface, as IOS writes it: `level L [L-low]` (a percentage of the
//! port's bandwidth, 0.00-100.00, two decimals), `level pps N [N-low]` or
//! `level bps N [N-low]` (a count, with IOS's optional `k`, `m`, `g`
//! suffix: `pps 2k`, `bps 1.5m`). The low (falling) threshold defaults to
//! the upper one.

use serde::Serialize;
use std::fmt;

/// The traffic class a `storm-control` line limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StormClass {
    /// Frames to ff:ff:ff:ff:ff:ff.
    Broadcast,
    /// Frames to a group address other than broadcast.
    Multicast,
    /// Frames to one station (known or not).
    Unicast,
}

impl StormClass {
    /// Every class, in IOS's order.
    pub const ALL: [StormClass; 3] = [
        StormClass::Broadcast,
        StormClass::Multicast,
        StormClass::Unicast,
    ];

    /// Its keyword.
    pub fn name(self) -> &'static str {
        match self {
            StormClass::Broadcast => "broadcast",
            StormClass::Multicast => "multicast",
            StormClass::Unicast => "unicast",
        }
    }

    /// The class of a frame to `dst`.
    pub fn of(dst: &[u8]) -> StormClass {
        match dst.first() {
            Some(b) if b & 1 == 1 => {
                if dst.get(..6) == Some(&[0xff; 6][..]) {
                    StormClass::Broadcast
                } else {
                    StormClass::Multicast
                }
            }
            _ => StormClass::Unicast,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// What a level counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StormUnit {
    /// Hundredths of a percent of the port's bandwidth (`level 20.00` is
    /// 2000).
    Percent,
    /// Frames per second.
    Pps,
    /// Bits per second.
    Bps,
}

/// A `storm-control CLASS level ...` threshold pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct StormLevel {
    /// What the numbers count.
    pub unit: StormUnit,
    /// The upper (rising) threshold.
    pub rising: u64,
    /// The lower (falling) threshold: once blocked, the class stays
    /// blocked until an interval's traffic falls below it. At most
    /// `rising`; equal when not given.
    pub falling: u64,
}

/// The storm-control levels of one interface, by class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StormControl {
    levels: [Option<StormLevel>; 3],
}

impl StormControl {
    /// `class`'s level, if configured.
    pub fn level(&self, class: StormClass) -> Option<StormLevel> {
        self.levels[class.index()]
    }

    /// Sets (or with `None` removes) `class`'s level.
    pub fn set(&mut self, class: StormClass, level: Option<StormLevel>) {
        self.levels[class.index()] = level;
    }

    /// Whether any class is limited.
    pub fn any(&self) -> bool {
        self.levels.iter().any(Option::is_some)
    }

    /// The configured classes and their levels, in IOS's order.
    pub fn iter(&self) -> impl Iterator<Item = (StormClass, StormLevel)> + '_ {
        StormClass::ALL
            .into_iter()
            .filter_map(|c| Some((c, self.level(c)?)))
    }
}

/// Why a `storm-control` line could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StormError(pub String);

/// A percentage with at most two decimals, in hundredths (`20.5` is 2050).
fn percent(w: &str) -> Result<u64, StormError> {
    let bad = || {
        StormError(format!(
            "level {w:?}: give a percentage 0.00-100.00 (e.g. level 20.00)"
        ))
    };
    let (int, frac) = w.split_once('.').unwrap_or((w, ""));
    if int.is_empty() && frac.is_empty()
        || frac.len() > 2
        || !int.chars().all(|c| c.is_ascii_digit())
        || !frac.chars().all(|c| c.is_ascii_digit())
    {
        return Err(bad());
    }
    let i: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| bad())?
    };
    let f: u64 = format!("{frac:0<2}").parse().map_err(|_| bad())?;
    let v = i
        .checked_mul(100)
        .and_then(|v| v.checked_add(f))
        .ok_or_else(bad)?;
    if v > 10_000 {
        return Err(bad());
    }
    Ok(v)
}

/// A rate with IOS's optional suffix: `950`, `2k`, `1.5m`, `10g`.
fn rate(w: &str, unit: &str) -> Result<u64, StormError> {
    let bad = || {
        StormError(format!(
            "{unit} {w:?}: give a rate such as 1000, 2k, 1.5m or 1g (0 to 10g)"
        ))
    };
    let (num, mul) = match w.char_indices().last() {
        Some((i, 'k')) => (&w[..i], 1_000u64),
        Some((i, 'm')) => (&w[..i], 1_000_000),
        Some((i, 'g')) => (&w[..i], 1_000_000_000),
        _ => (w, 1),
    };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty()
        || !int.chars().all(|c| c.is_ascii_digit())
        || !frac.chars().all(|c| c.is_ascii_digit())
        || frac.len() > 9
    {
        return Err(bad());
    }
    let i: u64 = int.parse().map_err(|_| bad())?;
    let mut v = i.checked_mul(mul).ok_or_else(bad)?;
    if !frac.is_empty() {
        let scale = 10u64.pow(frac.len() as u32);
        let f: u64 = frac.parse().map_err(|_| bad())?;
        // The fraction's part of the multiplier, whole units only.
        v = v.checked_add(f * mul / scale).ok_or_else(bad)?;
    }
    if v > 10_000_000_000 {
        return Err(bad());
    }
    Ok(v)
}

/// Reads the words after `storm-control CLASS level` (lower case).
pub fn parse_level(words: &[&str]) -> Result<StormLevel, StormError> {
    let (unit, nums) = match words {
        ["pps", rest @ ..] => (StormUnit::Pps, rest),
        ["bps", rest @ ..] => (StormUnit::Bps, rest),
        rest => (StormUnit::Percent, rest),
    };
    let read = |w: &str| match unit {
        StormUnit::Percent => percent(w),
        StormUnit::Pps => rate(w, "pps"),
        StormUnit::Bps => rate(w, "bps"),
    };
    let (rising, falling) = match nums {
        [r] => {
            let r = read(r)?;
            (r, r)
        }
        [r, f] => (read(r)?, read(f)?),
        _ => {
            return Err(StormError(
                "write level L [L-low], level pps N [N-low] or level bps N [N-low]".into(),
            ))
        }
    };
    if falling > rising {
        return Err(StormError(format!(
            "the lower level {} is above the upper {}: give the upper level first",
            StormLevel {
                unit,
                rising: falling,
                falling
            }
            .rising_text(),
            StormLevel {
                unit,
                rising,
                falling: rising
            }
            .rising_text()
        )));
    }
    Ok(StormLevel {
        unit,
        rising,
        falling,
    })
}

/// A count as IOS prints it: `2k`, `1500`, `1m`.
fn count_text(v: u64) -> String {
    match v {
        0 => "0".into(),
        v if v % 1_000_000_000 == 0 => format!("{}g", v / 1_000_000_000),
        v if v % 1_000_000 == 0 => format!("{}m", v / 1_000_000),
        v if v % 1_000 == 0 => format!("{}k", v / 1_000),
        v => v.to_string(),
    }
}

impl StormLevel {
    fn value_text(&self, v: u64) -> String {
        match self.unit {
            StormUnit::Percent => format!("{}.{:02}", v / 100, v % 100),
            StormUnit::Pps | StormUnit::Bps => count_text(v),
        }
    }

    fn rising_text(&self) -> String {
        self.value_text(self.rising)
    }

    /// A threshold as `show storm-control` prints it: `20.00%`, `1k pps`,
    /// `10m bps`.
    pub fn show(&self, v: u64) -> String {
        match self.unit {
            StormUnit::Percent => format!("{}%", self.value_text(v)),
            StormUnit::Pps => format!("{} pps", count_text(v)),
            StormUnit::Bps => format!("{} bps", count_text(v)),
        }
    }
}

impl fmt::Display for StormLevel {
    /// The words after `level`, as IOS prints them back: `20.00`,
    /// `20.00 10.00`, `pps 2k 1k`, `bps 10m`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.unit {
            StormUnit::Percent => {}
            StormUnit::Pps => f.write_str("pps ")?,
            StormUnit::Bps => f.write_str("bps ")?,
        }
        f.write_str(&self.value_text(self.rising))?;
        if self.falling != self.rising {
            write!(f, " {}", self.value_text(self.falling))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lv(s: &str) -> Result<StormLevel, StormError> {
        let w: Vec<&str> = s.split_whitespace().collect();
        parse_level(&w)
    }

    #[test]
    fn levels_read_and_print_back_as_ios_writes_them() {
        for (text, unit, rising, falling, back) in [
            ("20", StormUnit::Percent, 2000, 2000, "20.00"),
            ("20.5 10", StormUnit::Percent, 2050, 1000, "20.50 10.00"),
            ("0.25", StormUnit::Percent, 25, 25, "0.25"),
            ("100.00", StormUnit::Percent, 10_000, 10_000, "100.00"),
            ("pps 2k 1k", StormUnit::Pps, 2000, 1000, "pps 2k 1k"),
            ("pps 950", StormUnit::Pps, 950, 950, "pps 950"),
            (
                "bps 1.5m",
                StormUnit::Bps,
                1_500_000,
                1_500_000,
                "bps 1500k",
            ),
            (
                "bps 10g",
                StormUnit::Bps,
                10_000_000_000,
                10_000_000_000,
                "bps 10g",
            ),
        ] {
            let l = lv(text).unwrap();
            assert_eq!(
                (l.unit, l.rising, l.falling),
                (unit, rising, falling),
                "{text}"
            );
            assert_eq!(l.to_string(), back);
            assert_eq!(lv(back).unwrap(), l, "{back} reads back");
        }
        assert_eq!(lv("pps 2k").unwrap().show(2000), "2k pps");
        assert_eq!(lv("20").unwrap().show(150), "1.50%");
    }

    #[test]
    fn bad_levels_say_what_to_write() {
        for bad in [
            "",
            "101",
            "20.123",
            "abc",
            "-1",
            "10 20",
            "pps",
            "pps 2x",
            "bps 11g",
            "pps 1 2 3",
            ".",
        ] {
            let e = lv(bad).unwrap_err();
            assert!(!e.0.is_empty(), "{bad}");
        }
        assert!(lv("10 20").unwrap_err().0.contains("upper level first"));
    }

    #[test]
    fn classes_of_destinations() {
        assert_eq!(StormClass::of(&[0xff; 6]), StormClass::Broadcast);
        assert_eq!(
            StormClass::of(&[1, 0, 0x5e, 0, 0, 1]),
            StormClass::Multicast
        );
        assert_eq!(StormClass::of(&[2, 0, 0, 0, 0, 1]), StormClass::Unicast);
        assert_eq!(StormClass::of(&[]), StormClass::Unicast);
    }
}
