//! Rates and durations as people write them: one reading for every
//! command-line flag and every lab file, so `--rate 1g` means the same to
//! `lagkit plan` as to `lagkit lab run`, and `--converge-timeout 60s` is
//! accepted wherever `--duration 10s` is.
//!
//! Rates are bits per second: a plain number is bit/s; `k`, `m`, `g` and
//! `t` (any case) multiply by 10^3, 10^6, 10^9 and 10^12, optionally
//! followed by `bit` or `bit/s` (`100M`, `100mbit`, `1g`, `1gbit`,
//! `2.5Gbit/s`). `bps` is refused: tc reads it as *bytes* per second, so
//! whichever way we read it someone would get a rate 8 times off.
//!
//! Durations: a plain number is seconds; units `us`, `ms`, `s`, `m`
//! (or `min`), `h` and `d` (`250ms`, `1.5s`, `1m`, `60`).

#![forbid(unsafe_code)]

use std::time::Duration;

/// Why a rate or a duration was not understood. Each message quotes the
/// value and shows a spelling that works.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// Nothing was given.
    #[error("an empty value; write e.g. {example}")]
    Empty {
        /// A spelling that works.
        example: &'static str,
    },
    /// The number part is not a number.
    #[error("`{value}`: `{number}` is not a number; write e.g. {example}")]
    NotANumber {
        /// As given.
        value: String,
        /// The part that should be a number.
        number: String,
        /// A spelling that works.
        example: &'static str,
    },
    /// A rate's unit is unknown.
    #[error("`{value}`: unknown unit `{unit}`; use k, m, g or t (bit/s, optionally followed by `bit` or `bit/s`), e.g. 100M, 1g, 2.5gbit; a plain number is bit/s")]
    RateUnit {
        /// As given.
        value: String,
        /// The unit as given.
        unit: String,
    },
    /// `bps`, `mbps`, `MB/s`: bytes or bits?
    #[error("`{value}`: `{unit}` could mean bytes or bits per second (tc reads `bps` as bytes per second); write bits, e.g. 100mbit or 1g")]
    Bytes {
        /// As given.
        value: String,
        /// The unit as given.
        unit: String,
    },
    /// A duration's unit is unknown.
    #[error("`{value}`: unknown unit `{unit}`; use ms, s, m or h (also us, d), e.g. 250ms or 1.5s; a plain number is seconds")]
    DurationUnit {
        /// As given.
        value: String,
        /// The unit as given.
        unit: String,
    },
    /// Negative, not finite, or too large to mean anything.
    #[error("`{value}`: out of range ({why})")]
    Range {
        /// As given.
        value: String,
        /// The limit.
        why: &'static str,
    },
}

/// Splits `2.5gbit` into (`2.5`, `gbit`).
fn split(s: &str) -> (&str, &str) {
    let i = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e'))
        .unwrap_or(s.len());
    // `1e9` is a number, but the `e` must not eat a unit (there is none
    // starting with `e`, so this only matters for readability).
    s.split_at(i)
}

/// Parses a rate into bits per second (see the module's doc for spellings).
pub fn parse_rate(s: &str) -> Result<u64, UnitError> {
    let value = s.trim();
    if value.is_empty() {
        return Err(UnitError::Empty {
            example: "1g or 100mbit",
        });
    }
    let (num, unit) = split(value);
    let u = unit.trim().to_ascii_lowercase();
    let base = u
        .strip_suffix("/s")
        .map(|b| b.strip_suffix("bit").unwrap_or(b))
        .unwrap_or_else(|| u.strip_suffix("bit").unwrap_or(&u));
    let mult = match base {
        "" => 1.0,
        "k" => 1e3,
        "m" => 1e6,
        "g" => 1e9,
        "t" => 1e12,
        _ if base.ends_with('b') || base.ends_with("bps") || base.ends_with("byte") => {
            return Err(UnitError::Bytes {
                value: value.into(),
                unit: unit.trim().into(),
            })
        }
        _ => {
            return Err(UnitError::RateUnit {
                value: value.into(),
                unit: unit.trim().into(),
            })
        }
    };
    let n: f64 = num.parse().map_err(|_| UnitError::NotANumber {
        value: value.into(),
        number: num.into(),
        example: "1g or 100mbit",
    })?;
    let bits = (n * mult).round();
    if !bits.is_finite() || bits < 0.0 {
        return Err(UnitError::Range {
            value: value.into(),
            why: "a rate is 0 or more bit/s",
        });
    }
    if bits > 1e15 {
        return Err(UnitError::Range {
            value: value.into(),
            why: "at most 1000t (10^15 bit/s)",
        });
    }
    Ok(bits as u64)
}

/// A rate as tc writes it, in the largest unit that divides it exactly:
/// `1gbit`, `2500mbit`, `64000bit`.
pub fn format_rate(bits: u64) -> String {
    for (unit, m) in [
        ("tbit", 1_000_000_000_000),
        ("gbit", 1_000_000_000),
        ("mbit", 1_000_000),
        ("kbit", 1_000),
    ] {
        if bits >= m && bits.is_multiple_of(m) {
            return format!("{}{unit}", bits / m);
        }
    }
    format!("{bits}bit")
}

/// Parses a duration (see the module's doc for spellings).
pub fn parse_duration(s: &str) -> Result<Duration, UnitError> {
    let value = s.trim();
    if value.is_empty() {
        return Err(UnitError::Empty {
            example: "250ms, 10s or 1m",
        });
    }
    let (num, unit) = split(value);
    let scale = match unit.trim() {
        "" | "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        u => {
            return Err(UnitError::DurationUnit {
                value: value.into(),
                unit: u.into(),
            })
        }
    };
    let n: f64 = num.parse().map_err(|_| UnitError::NotANumber {
        value: value.into(),
        number: num.into(),
        example: "250ms, 10s or 1m",
    })?;
    let secs = n * scale;
    if !secs.is_finite() || secs < 0.0 {
        return Err(UnitError::Range {
            value: value.into(),
            why: "a duration is 0 or more",
        });
    }
    if secs > 1e9 {
        return Err(UnitError::Range {
            value: value.into(),
            why: "at most 10^9 seconds",
        });
    }
    Ok(Duration::from_secs_f64(secs))
}

/// [`parse_rate`] for clap's `value_parser` (clap prints the message after
/// the flag and the value).
pub fn rate_arg(s: &str) -> Result<u64, String> {
    parse_rate(s).map_err(|e| e.to_string())
}

/// [`parse_duration`] for clap's `value_parser`.
pub fn duration_arg(s: &str) -> Result<Duration, String> {
    parse_duration(s).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rate_spelling() {
        for (s, bits) in [
            ("1g", 1_000_000_000),
            ("1G", 1_000_000_000),
            ("1gbit", 1_000_000_000),
            ("1Gbit", 1_000_000_000),
            ("1gbit/s", 1_000_000_000),
            ("1g/s", 1_000_000_000),
            ("10Gbit/s", 10_000_000_000),
            ("100M", 100_000_000),
            ("100m", 100_000_000),
            ("100mbit", 100_000_000),
            ("2.5g", 2_500_000_000),
            ("2.5gbit", 2_500_000_000),
            ("250kbit", 250_000),
            ("250k", 250_000),
            ("1t", 1_000_000_000_000),
            ("64000bit", 64_000),
            ("1500", 1500),
            ("1e9", 1_000_000_000),
            (" 1g ", 1_000_000_000),
            ("0", 0),
        ] {
            assert_eq!(parse_rate(s), Ok(bits), "{s}");
        }
    }

    #[test]
    fn rate_errors_say_what_works() {
        let e = parse_rate("1x").unwrap_err();
        assert!(matches!(e, UnitError::RateUnit { .. }));
        assert_eq!(
            e.to_string(),
            "`1x`: unknown unit `x`; use k, m, g or t (bit/s, optionally followed by `bit` or `bit/s`), e.g. 100M, 1g, 2.5gbit; a plain number is bit/s"
        );
        for s in ["100mbps", "1Gbps", "1bps", "1gb", "1MB/s", "1gbyte"] {
            assert!(
                matches!(parse_rate(s), Err(UnitError::Bytes { .. })),
                "{s}: {:?}",
                parse_rate(s)
            );
        }
        assert!(parse_rate("1gbps")
            .unwrap_err()
            .to_string()
            .contains("write bits, e.g. 100mbit"));
        assert!(matches!(parse_rate(""), Err(UnitError::Empty { .. })));
        assert!(matches!(parse_rate("g"), Err(UnitError::NotANumber { .. })));
        assert!(matches!(
            parse_rate("1.2.3g"),
            Err(UnitError::NotANumber { .. })
        ));
        assert!(matches!(parse_rate("-1g"), Err(UnitError::Range { .. })));
        assert!(matches!(parse_rate("2000t"), Err(UnitError::Range { .. })));
        assert!(matches!(
            parse_rate("fast"),
            Err(UnitError::RateUnit { .. })
        ));
    }

    #[test]
    fn rates_print_as_tc_reads_them() {
        assert_eq!(format_rate(1_000_000_000), "1gbit");
        assert_eq!(format_rate(2_500_000_000), "2500mbit");
        assert_eq!(format_rate(100_000_000), "100mbit");
        assert_eq!(format_rate(64_000), "64kbit");
        assert_eq!(format_rate(1500), "1500bit");
        assert_eq!(format_rate(0), "0bit");
    }

    #[test]
    fn every_duration_spelling() {
        for (s, d) in [
            ("60s", Duration::from_secs(60)),
            ("60", Duration::from_secs(60)),
            ("1m", Duration::from_secs(60)),
            ("1min", Duration::from_secs(60)),
            ("250ms", Duration::from_millis(250)),
            ("1.5s", Duration::from_millis(1500)),
            ("100us", Duration::from_micros(100)),
            ("100µs", Duration::from_micros(100)),
            ("2h", Duration::from_secs(7200)),
            ("1d", Duration::from_secs(86400)),
            ("0", Duration::ZERO),
            (" 10s ", Duration::from_secs(10)),
        ] {
            assert_eq!(parse_duration(s), Ok(d), "{s}");
        }
    }

    #[test]
    fn duration_errors_say_what_works() {
        assert_eq!(
            parse_duration("60x").unwrap_err().to_string(),
            "`60x`: unknown unit `x`; use ms, s, m or h (also us, d), e.g. 250ms or 1.5s; a plain number is seconds"
        );
        assert!(matches!(
            parse_duration("60S"),
            Err(UnitError::DurationUnit { .. })
        ));
        assert!(matches!(parse_duration(""), Err(UnitError::Empty { .. })));
        assert!(matches!(
            parse_duration("s"),
            Err(UnitError::NotANumber { .. })
        ));
        assert!(matches!(
            parse_duration("-1s"),
            Err(UnitError::Range { .. })
        ));
        assert!(matches!(
            parse_duration("99999999999h"),
            Err(UnitError::Range { .. })
        ));
        assert!(duration_arg("ten")
            .unwrap_err()
            .contains("unknown unit `ten`"));
        assert_eq!(rate_arg("1g"), Ok(1_000_000_000));
    }
}
