//! The payload every workload sends: byte `o` of a connection's stream (in
//! either direction) is `pattern()[o % PERIOD]`. A sender takes any message
//! as one slice of a precomputed buffer (no per-byte work), and a receiver
//! checks what it got with one `memcmp` against the slice for the offset it
//! expects, so a lost, duplicated, reordered or altered byte shows up as a
//! mismatch at a known offset. The period is prime so that message
//! boundaries wander through the pattern instead of always meeting the same
//! bytes.

use crate::MAX_SIZE;
use std::sync::OnceLock;

/// The pattern's period in bytes (the largest prime below 2^16).
pub const PERIOD: usize = 65521;

fn buffer() -> &'static [u8] {
    static BUF: OnceLock<Vec<u8>> = OnceLock::new();
    BUF.get_or_init(|| {
        let mut out = Vec::with_capacity(PERIOD + MAX_SIZE);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..PERIOD {
            // xorshift64: cheap and without short cycles.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            out.push((x >> 24) as u8);
        }
        // Repeat the start so any slice of up to MAX_SIZE bytes is contiguous.
        for i in 0..MAX_SIZE {
            out.push(out[i % PERIOD]);
        }
        out
    })
}

/// The `len` bytes of the stream starting at `offset` (`len` at most [`MAX_SIZE`]).
pub fn slice(offset: u64, len: usize) -> &'static [u8] {
    let len = len.min(MAX_SIZE);
    let start = (offset % PERIOD as u64) as usize;
    &buffer()[start..start + len]
}

/// Checks `data` as the stream's bytes from `offset`; returns the stream
/// offset of the first wrong byte, if any.
pub fn check(offset: u64, data: &[u8]) -> Option<u64> {
    let mut at = 0usize;
    for chunk in data.chunks(MAX_SIZE) {
        let want = slice(offset + at as u64, chunk.len());
        if want != chunk {
            let i = want
                .iter()
                .zip(chunk)
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            return Some(offset + (at + i) as u64);
        }
        at += chunk.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_continue_across_the_period() {
        let a = slice(PERIOD as u64 - 3, 6);
        let b = slice(0, 3);
        assert_eq!(&a[3..], b);
        assert_eq!(slice(5, 10), slice(5 + PERIOD as u64, 10));
        assert_eq!(slice(0, MAX_SIZE).len(), MAX_SIZE);
        assert_eq!(slice(PERIOD as u64 - 1, MAX_SIZE).len(), MAX_SIZE);
    }

    #[test]
    fn check_finds_the_first_wrong_byte() {
        let mut v = slice(1000, 5000).to_vec();
        assert_eq!(check(1000, &v), None);
        v[1234] ^= 1;
        assert_eq!(check(1000, &v), Some(2234));
        // A shifted stream (one byte lost) is caught too.
        assert!(check(1000, slice(1001, 100)).is_some());
        // Longer than MAX_SIZE in one call.
        let long: Vec<u8> = (0..MAX_SIZE as u64 + 77)
            .map(|o| slice(o + 9, 1)[0])
            .collect();
        assert_eq!(check(9, &long), None);
    }
}
