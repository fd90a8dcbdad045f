//! The planner: how would a configuration spread this traffic?
//!
//! Input is a list of [`Flow`]s (from CSV or JSON, or aggregated from a
//! pcap/pcapng capture read as a stream) and the two ends of one
//! aggregated link: the host's bond, which spreads what the host sends
//! ([`Dir::Out`]), and the switch's port-channel, which spreads what the
//! host receives ([`Dir::In`]). Every member choice is made by
//! `lagkit_hash`, the very code the bond and the switch forward with (a
//! lagkit switch's channel through `lagkit_switch::Channel`), so a
//! prediction and a packet cannot disagree.
//!
//! Per direction and link the planner gives flows, bytes and shares, and a
//! throughput from a max-min fair allocation over the links (each flow capped
//! by its own demand and by one link's rate, since a flow never spans links
//! under a hash); it ranks every alternative spreading ([`alternatives`]) and
//! names the causes of an imbalance the way a network engineer would
//! ([`explain`]).

#![forbid(unsafe_code)]

pub mod explain;
pub mod export;
pub mod fair;
pub mod flow;
pub mod input;
pub mod lab;
pub mod link;
pub mod merge;
pub mod platform;
pub mod predict;
pub mod report;
pub mod sets;

pub use explain::{explain, Cause};
pub use flow::{Dir, Flow};
pub use input::{read_flows, InputError};
pub use platform::{Platform, Suggestion};
pub use predict::{
    alternatives, predict, EndConfig, LinkLoad, ParseSpreadError, Prediction, Spread,
};

/// Runs arbitrary bytes through the planner as a traffic file would: the
/// format sniffing, the CSV/JSON/pcap/pcapng readers, then a prediction and
/// its explanation for a policy and link count taken from the first byte.
/// Errors are values; it panics only if an invariant breaks (shares that do
/// not add up, a throughput above capacity, a damaged capture planned
/// from no packet or skipped from elsewhere than after the packets read),
/// which is what a `cargo fuzz` target wants to find.
pub fn fuzz_one(data: &[u8]) {
    let Ok((flows, stats)) = input::read_bytes("fuzz", data) else {
        return;
    };
    if let Some(sk) = &stats.skipped {
        assert!(stats.packets > 0, "{sk}");
        assert_eq!(sk.from_packet, stats.packets + 1, "{sk}");
        assert!(sk.packets.is_none_or(|n| n == 1), "{sk}");
    }
    let b = usize::from(data.first().copied().unwrap_or(0));
    let candidates = Spread::candidates();
    let spread = candidates[b % candidates.len()];
    let end = EndConfig {
        spread,
        links: 1 + b % 8,
        rate_bps: 1e9,
    };
    for dir in Dir::BOTH {
        let p = predict(&flows, dir, &end);
        let shares: f64 = p.links.iter().map(|l| l.share).sum();
        assert!(
            p.bytes == 0 || (shares - 1.0).abs() < 1e-6,
            "shares add up to {shares}"
        );
        assert!(p.throughput_bps <= p.capacity_bps * (1.0 + 1e-9), "{p:?}");
        let _ = explain(&flows, dir, &end, &p);
    }
}

#[cfg(test)]
mod fuzz_corpus {
    /// Every input the `plan_input` fuzz target has kept (fuzz/corpus,
    /// replayed here because cargo-fuzz needs a nightly toolchain) reads
    /// without breaking an invariant, damaged captures included.
    #[test]
    fn the_plan_input_corpus_holds_its_invariants() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus/plan_input");
        let files: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .map(|f| f.unwrap().path())
            .collect();
        assert!(files.len() > 1000, "{dir} holds only {} files", files.len());
        let mut skipped = 0;
        for f in &files {
            let data = std::fs::read(f).unwrap();
            if let Ok((_, st)) = crate::input::read_bytes("c", &data) {
                skipped += usize::from(st.skipped.is_some());
            }
            super::fuzz_one(&data);
        }
        // The corpus holds captures cut after good packets.
        assert!(skipped > 0, "no corpus capture was planned in part");
    }
}
