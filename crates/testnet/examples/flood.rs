//! Floods an interface in a namespace with random-source-MAC frames (see
//! `lagkit_testnet::flood_random`), for measuring a switch by hand:
//! `cargo run -p lagkit-testnet --example flood -- NS IFNAME SECONDS [broadcast] [sources=N]`.

#![forbid(unsafe_code)]

use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [ns, ifname, secs, rest @ ..] = &args[..] else {
        eprintln!("usage: flood NS IFNAME SECONDS [broadcast] [sources=N]");
        std::process::exit(2);
    };
    let Ok(secs) = secs.parse::<f64>() else {
        eprintln!("SECONDS must be a number, not {secs}");
        std::process::exit(2);
    };
    let broadcast = rest.iter().any(|w| w == "broadcast");
    let sources = rest
        .iter()
        .find_map(|w| w.strip_prefix("sources=")?.parse().ok())
        .unwrap_or(0);
    let frames = lagkit_testnet::FloodFrames::new(64, 0x9e37_79b9_7f4a_7c15, broadcast)
        .with_sources(sources);
    let stop = AtomicBool::new(false);
    let c = lagkit_testnet::flood_random(ns, ifname, frames, &stop, Duration::from_secs_f64(secs));
    println!(
        "sent {} frames in {:.2} s: {:.0} frames/s",
        c.sent,
        c.elapsed.as_secs_f64(),
        c.rate()
    );
}
