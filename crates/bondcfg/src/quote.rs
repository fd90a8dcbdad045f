//! How a message shows text taken from the file.
//!
//! A value is echoed so the user can find it, but a config can hold a
//! value of any size (a pasted file, a runaway string): one error must not
//! become a 10 MB log line. Every value, key and bond name an error or
//! warning shows goes through [`Quoted`], which keeps the first
//! [`QUOTE_MAX`] characters and says how long the whole is.

use core::fmt;

/// The most characters of a value a message shows.
pub(crate) const QUOTE_MAX: usize = 80;

/// Text from the file as messages show it: `'eth1'`, or for a value longer
/// than [`QUOTE_MAX`] characters `'aaaa…' (10485760 characters)`.
pub(crate) struct Quoted<'a>(pub(crate) &'a str);

/// Like [`Quoted`], but a short value is shown without quotes (numbers and
/// addresses, which read better bare).
pub(crate) struct Bare<'a>(pub(crate) &'a str);

/// The first [`QUOTE_MAX`] characters of `s`, or `None` if that is all of it.
fn head(s: &str) -> Option<&str> {
    s.char_indices().nth(QUOTE_MAX).map(|(end, _)| &s[..end])
}

/// Writes a value too long to show whole: its head and its length.
fn cut(f: &mut fmt::Formatter<'_>, s: &str, head: &str) -> fmt::Result {
    write!(f, "'{head}…' ({} characters)", s.chars().count())
}

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match head(self.0) {
            Some(h) => cut(f, self.0, h),
            None => write!(f, "'{}'", self.0),
        }
    }
}

impl fmt::Display for Bare<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match head(self.0) {
            Some(h) => cut(f, self.0, h),
            None => f.write_str(self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_values_whole_long_ones_cut_by_characters() {
        assert_eq!(Quoted("eth1").to_string(), "'eth1'");
        assert_eq!(Bare("4096").to_string(), "4096");
        let exact = "é".repeat(QUOTE_MAX);
        assert_eq!(Quoted(&exact).to_string(), format!("'{exact}'"));
        let long = format!("{exact}x");
        let want = format!("'{exact}…' ({} characters)", QUOTE_MAX + 1);
        assert_eq!(Quoted(&long).to_string(), want);
        assert_eq!(Bare(&long).to_string(), want);
    }
}
