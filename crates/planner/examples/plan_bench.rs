//! The planner's speed: `plan_bench flows N` plans N synthetic flows (one
//! configuration per policy family, one core) and prints flows per second;
//! `plan_bench pcap FILE BYTES` writes a capture of about BYTES bytes (100,000
//! distinct TCP flows, repeated) for streaming `lagkit plan` over it with
//! its resident memory measured (see scripts/bench-plan.sh).

use lagkit_hash::FlowKey;
use lagkit_planner::predict::{predict, EndConfig, Spread};
use lagkit_planner::{explain, Dir, Flow};
use std::io::Write;
use std::time::Instant;

fn flows(n: usize) -> Vec<Flow> {
    (0..n)
        .map(|i| {
            let i = i as u32;
            let src = [10, (i >> 16) as u8, (i >> 8) as u8, i as u8];
            Flow {
                key: FlowKey::tcp4(
                    src.into(),
                    1024 + (i % 60000) as u16,
                    [10, 255, 0, 1].into(),
                    443,
                ),
                dir: Dir::Out,
                bytes: 1000 + u64::from(i % 977) * 1000,
                demand_bps: None,
            }
        })
        .collect()
}

fn bench_flows(n: usize) {
    let t = Instant::now();
    let f = flows(n);
    println!(
        "built {n} flows in {:.2} s (not counted below)",
        t.elapsed().as_secs_f64()
    );
    for name in ["layer3+4", "src-dst-ip", "strong", "adaptive", "balance-rr"] {
        let end = EndConfig {
            spread: Spread::parse(name).expect("known policy"),
            links: 8,
            rate_bps: 1e9,
        };
        let t = Instant::now();
        let p = predict(&f, Dir::Out, &end);
        let s = t.elapsed().as_secs_f64();
        let t2 = Instant::now();
        let causes = explain(&f, Dir::Out, &end, &p);
        let s2 = t2.elapsed().as_secs_f64();
        println!(
            "{name:<12} predict {s:6.3} s ({:>5.1} M flows/s), max/mean {:.3}; explain {s2:6.3} s ({} causes)",
            n as f64 / s / 1e6,
            p.max_over_mean,
            causes.len()
        );
    }
}

fn write_pcap(path: &str, bytes: u64) -> std::io::Result<()> {
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    let file = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let mut w =
        PcapWriter::with_header(file, PcapHeader::default()).map_err(std::io::Error::other)?;
    let mut frame = vec![0u8; 1514];
    frame[..12].copy_from_slice(&[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]);
    frame[12..14].copy_from_slice(&[0x08, 0x00]);
    frame[14] = 0x45;
    frame[16..18].copy_from_slice(&1500u16.to_be_bytes());
    frame[22] = 64;
    frame[23] = 6;
    frame[26..30].copy_from_slice(&[10, 0, 0, 1]);
    frame[30..34].copy_from_slice(&[10, 0, 0, 2]);
    frame[36..38].copy_from_slice(&443u16.to_be_bytes());
    frame[46] = 0x50;
    let mut written = 0u64;
    let mut i = 0u32;
    while written < bytes {
        let flow = i % 100_000;
        frame[28..30].copy_from_slice(&((flow >> 8) as u16).to_be_bytes());
        frame[34..36].copy_from_slice(&(1024 + (flow % 60000) as u16).to_be_bytes());
        let p = PcapPacket::new(std::time::Duration::from_micros(u64::from(i)), 1514, &frame);
        w.write_packet(&p).map_err(std::io::Error::other)?;
        written += 16 + 1514;
        i += 1;
    }
    w.into_writer().flush()?;
    println!("wrote {path}: {i} packets, {written} bytes");
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("flows") => bench_flows(
            args.get(2)
                .and_then(|s| s.parse().ok())
                .unwrap_or(10_000_000),
        ),
        Some("pcap") if args.len() == 4 => {
            let bytes = args[3].parse().expect("BYTES is a number");
            write_pcap(&args[2], bytes).expect("write the capture");
        }
        _ => {
            eprintln!("usage: plan_bench flows [N] | plan_bench pcap FILE BYTES");
            std::process::exit(2);
        }
    }
}
