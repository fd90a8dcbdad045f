//! Reading one option's value from the parsed TOML, as the type the option
//! takes, accepting the spellings Linux users write (`miimon = "100"`,
//! `lacp_rate = 1`, `auto_recovery = "yes"`, `adapter_names = "ent2,ent4"`).
//!
//! Each reader returns a [`Fault`] (a byte span and an [`ErrorKind`]); the
//! caller turns it into a located error. Scalar faults point at the key, as
//! `file:line:col: key 'mode': ...` reads best; a bad list element points at
//! the element, which may be on a line of its own.

use core::ops::Range;
use std::borrow::Cow;

use toml::de::DeValue;
use toml::Spanned;

use crate::error::ErrorKind;

/// A problem at a byte span of the text.
#[derive(Debug)]
pub(crate) struct Fault {
    pub span: Range<usize>,
    pub kind: ErrorKind,
}

pub(crate) type Res<T> = Result<T, Fault>;

/// One `key = value` of a bond, with where each part is.
#[derive(Clone, Copy)]
pub(crate) struct Field<'a, 'i> {
    /// The key as written.
    pub written: &'a str,
    /// Byte span of the key.
    pub key_span: (usize, usize),
    /// The value.
    pub value: &'a Spanned<DeValue<'i>>,
}

/// A list element with its span.
pub(crate) type Item = (String, Range<usize>);

impl<'a, 'i> Field<'a, 'i> {
    pub(crate) fn span(&self) -> Range<usize> {
        self.key_span.0..self.key_span.1
    }

    pub(crate) fn fault(&self, kind: ErrorKind) -> Fault {
        Fault {
            span: self.span(),
            kind,
        }
    }

    fn wrong_type(&self, expected: &'static str, example: &str) -> Fault {
        self.fault(ErrorKind::WrongType {
            expected,
            found: self.value.get_ref().type_str(),
            example: example.to_string(),
        })
    }

    /// A string.
    pub(crate) fn string(&self, example: &str) -> Res<&'a str> {
        match self.value.get_ref() {
            DeValue::String(s) => Ok(s.as_ref()),
            _ => Err(self.wrong_type("a string", example)),
        }
    }

    /// A string, or an integer as its decimal text (for names that Linux
    /// also accepts as numbers, like `lacp_rate = 1`).
    pub(crate) fn name_or_number(&self, example: &str) -> Res<Cow<'a, str>> {
        match self.value.get_ref() {
            DeValue::String(s) => Ok(Cow::Borrowed(s.as_ref())),
            DeValue::Integer(i) => Ok(Cow::Owned(
                i128::from_str_radix(i.as_str(), i.radix())
                    .map_or_else(|_| i.to_string(), |n| n.to_string()),
            )),
            _ => Err(self.wrong_type("a name", example)),
        }
    }

    /// A whole number in `min..=max`; strings may carry a unit suffix from
    /// `units` (`("ms", 1)`, `("s", 1000)`), each scaling the number.
    fn number(&self, min: u64, max: u64, units: &[(&str, u64)], example: &str) -> Res<u64> {
        let (text, value, numeric) = match self.value.get_ref() {
            // A TOML integer too large for i128 is still a number, out of range.
            DeValue::Integer(i) => (
                i.to_string(),
                i128::from_str_radix(i.as_str(), i.radix()).ok(),
                true,
            ),
            DeValue::String(s) => {
                let text = s.trim().to_string();
                let value = parse_with_units(&text, units);
                let numeric = value.is_some() || looks_numeric(&text);
                (text, value, numeric)
            }
            _ => return Err(self.wrong_type("a whole number", example)),
        };
        if !numeric {
            return Err(self.fault(ErrorKind::NotANumber {
                value: text,
                example: example.to_string(),
            }));
        }
        match value.and_then(|v| u64::try_from(v).ok()) {
            Some(v) if (min..=max).contains(&v) => Ok(v),
            _ => Err(self.fault(ErrorKind::OutOfRange {
                value: text,
                min,
                max,
            })),
        }
    }

    /// A plain whole number in `min..=max`.
    pub(crate) fn uint(&self, min: u64, max: u64, example: &str) -> Res<u64> {
        self.number(min, max, &[], example)
    }

    /// Milliseconds in `min..=max`; strings may say `100ms` or `2s`.
    pub(crate) fn millis(&self, min: u64, max: u64, example: &str) -> Res<u64> {
        self.number(min, max, &[("ms", 1), ("s", 1000)], example)
    }

    /// Seconds in `min..=max`; strings may say `5s`.
    pub(crate) fn seconds(&self, min: u64, max: u64, example: &str) -> Res<u64> {
        self.number(min, max, &[("s", 1)], example)
    }

    /// A yes/no value: a TOML boolean, 0 or 1, or a string such as `yes`,
    /// `off`, `true`; `extra` adds more (word, value) pairs.
    pub(crate) fn boolean_or(&self, extra: &[(&str, bool)], example: &str) -> Res<bool> {
        let text = match self.value.get_ref() {
            DeValue::Boolean(b) => return Ok(*b),
            DeValue::Integer(i) => i.to_string(),
            DeValue::String(s) => s.trim().to_string(),
            _ => return Err(self.wrong_type("true or false", example)),
        };
        let word = text.to_ascii_lowercase();
        let b = match word.as_str() {
            "true" | "yes" | "y" | "on" | "1" => Some(true),
            "false" | "no" | "n" | "off" | "0" => Some(false),
            w => extra.iter().find(|(name, _)| *name == w).map(|(_, b)| *b),
        };
        b.ok_or_else(|| self.fault(ErrorKind::NotABool { value: text }))
    }

    /// A yes/no value.
    pub(crate) fn boolean(&self, example: &str) -> Res<bool> {
        self.boolean_or(&[], example)
    }

    /// A listen address: `"ADDRESS:PORT"` (IPv6 in brackets), or a port
    /// alone (a number, or its text), meaning 127.0.0.1.
    pub(crate) fn listen(&self, example: &str) -> Res<std::net::SocketAddr> {
        let text = match self.value.get_ref() {
            DeValue::Integer(_) => None,
            DeValue::String(s) => Some(s.trim()),
            _ => return Err(self.wrong_type("an address and port, or a port", example)),
        };
        match text {
            Some(t) if !looks_numeric(t) => match t.parse::<std::net::SocketAddr>() {
                Ok(a) if a.port() != 0 => Ok(a),
                _ => Err(self.fault(ErrorKind::BadListen {
                    value: t.to_string(),
                })),
            },
            _ => {
                let port = self.uint(1, 65535, example)?;
                let port = u16::try_from(port).unwrap_or(u16::MAX);
                Ok(std::net::SocketAddr::from((
                    std::net::Ipv4Addr::LOCALHOST,
                    port,
                )))
            }
        }
    }

    /// A list of strings: a TOML array, or one string of items separated by
    /// commas or spaces (as AIX's `adapter_names="ent2,ent4"`).
    pub(crate) fn list(&self, example: &str) -> Res<Vec<Item>> {
        match self.value.get_ref() {
            DeValue::Array(items) => items
                .iter()
                .map(|item| match item.get_ref() {
                    DeValue::String(s) => Ok((s.trim().to_string(), item.span())),
                    other => Err(Fault {
                        span: item.span(),
                        kind: ErrorKind::WrongType {
                            expected: "a list of strings",
                            found: other.type_str(),
                            example: example.to_string(),
                        },
                    }),
                })
                .collect(),
            DeValue::String(s) => Ok(s
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|part| !part.is_empty())
                .map(|part| (part.to_string(), self.value.span()))
                .collect()),
            _ => Err(self.wrong_type("a list of strings", example)),
        }
    }
}

fn parse_with_units(text: &str, units: &[(&str, u64)]) -> Option<i128> {
    let lower = text.to_ascii_lowercase();
    let (digits, scale) = units
        .iter()
        .find_map(|(suffix, scale)| {
            lower
                .strip_suffix(suffix)
                .filter(|d| d.ends_with(|c: char| c.is_ascii_digit() || c.is_whitespace()))
                .map(|d| (d.trim_end(), *scale))
        })
        .unwrap_or((lower.as_str(), 1));
    let digits = digits.replace('_', "");
    let n = match digits.strip_prefix("0x") {
        Some(hex) if !hex.is_empty() && !hex.starts_with(['+', '-']) => {
            i128::from_str_radix(hex, 16).ok()?
        }
        _ => digits.parse::<i128>().ok()?,
    };
    n.checked_mul(i128::from(scale))
}

/// Digits with an optional sign: a number, perhaps too large for `i128`.
fn looks_numeric(text: &str) -> bool {
    let t = text.strip_prefix(['+', '-']).unwrap_or(text);
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_scale() {
        let ms = [("ms", 1), ("s", 1000)];
        assert_eq!(parse_with_units("100", &ms), Some(100));
        assert_eq!(parse_with_units("100ms", &ms), Some(100));
        assert_eq!(parse_with_units("2s", &ms), Some(2000));
        assert_eq!(parse_with_units("2 S", &ms), Some(2000));
        assert_eq!(parse_with_units("0x10", &[]), Some(16));
        assert_eq!(parse_with_units("1_000", &[]), Some(1000));
        assert_eq!(parse_with_units("-5", &[]), Some(-5));
        assert_eq!(parse_with_units("ms", &ms), None);
        assert_eq!(parse_with_units("s", &ms), None);
        assert_eq!(parse_with_units("0x", &[]), None);
        assert_eq!(parse_with_units("0x-1", &[]), None);
        assert_eq!(parse_with_units("fast", &ms), None);
    }
}
