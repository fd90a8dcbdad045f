//! A BPF bond for hand experiments: attaches lagkit's programs in a network
//! namespace and holds them until stdin closes (or the process ends, which
//! detaches everything).
//!
//! ```text
//! cargo run -p lagkit-bpf --example bpf_bond -- NETNS LOGICAL POLICY MEMBER...
//! ```
//! e.g. `bpf_bond ns-a bond0 layer3+4 a0 a1`; the logical interface and the
//! members must exist in NETNS (a veth end as the logical interface, its
//! peer up).

use std::io::Read;

use lagkit_bpf::{Datapath, Distribution};
use lagkit_dataplane::netns;
use lagkit_hash::{BucketMap, Policy};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [ns, logical, policy, members @ ..] = &args[..] else {
        eprintln!("usage: bpf_bond NETNS LOGICAL POLICY MEMBER...");
        std::process::exit(2);
    };
    let policy: Policy = policy.parse().unwrap_or_else(|e| panic!("{e}"));
    let (ns, logical, members) = (ns.clone(), logical.clone(), members.to_vec());
    let dp = netns::run_in(
        &ns.clone(),
        move || -> Result<Datapath, lagkit_bpf::Error> {
            let mut dp = Datapath::load()?;
            let logical = dp.attach_egress(&logical)?;
            let tx = members
                .iter()
                .map(|m| dp.attach_ingress(m))
                .collect::<Result<Vec<u32>, _>>()?;
            let buckets = BucketMap::new(tx.len()).expect("at most 256 members");
            dp.configure(&Distribution::hashed(policy, &buckets, &tx, logical))?;
            Ok(dp)
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("bpf_bond in {ns}: attached; close stdin to detach");
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    let c = dp.counters().unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "tx {:?} dropped {:?}; rx {:?} dropped {:?}",
        &c.tx[..args.len() - 3],
        c.tx_dropped,
        &c.rx[..args.len() - 3],
        c.rx_dropped
    );
}
