//! Publishing a plan: before the first one every frame is dropped; after it
//! the new plan decides; and while plans change under a stream of frames,
//! every frame is handled wholly by one plan, never by a mix of two.

use std::sync::atomic::{AtomicBool, Ordering};

mod common;

use common::load;
use lagkit_bpf::{Choice, Distribution, Spread};
use lagkit_hash::samples::{sample_frames, XorShift};
use lagkit_hash::{BucketMap, FlowKey, Policy, Strong};

const TC_ACT_SHOT: u32 = 2;
const TC_ACT_REDIRECT: u32 = 7;

/// A plan and what the Rust side says it does with each frame.
struct Plan {
    policy: Policy,
    buckets: BucketMap,
    members: Vec<u32>,
}

impl Plan {
    fn distribution(&self) -> Distribution<'_> {
        Distribution {
            spread: Spread::Hash {
                policy: self.policy,
                buckets: &self.buckets,
                tlb: None,
                bucket_bytes: false,
            },
            tx: &self.members,
            rx: &[],
            logical: 0,
            tx_ids: &[],
            rx_ids: &[],
            faults: false,
        }
    }

    fn expect(&self, frame: &[u8]) -> Choice {
        let key = FlowKey::from_frame(frame);
        let member = self.policy.select_in(&key, &self.buckets);
        Choice {
            member,
            hash: self.policy.hash(&key),
            bucket: self.policy.bucket(&key),
            ifindex: member.map_or(0, |m| self.members[m]),
            verdict: TC_ACT_REDIRECT,
        }
    }
}

#[test]
fn plans_take_effect_whole() {
    let Some(mut dp) = load("plans_take_effect_whole") else {
        return;
    };
    let frames = sample_frames();
    let unplanned = dp.test_run(&frames[0]).unwrap();
    assert_eq!((unplanned.member, unplanned.verdict), (None, TC_ACT_SHOT));

    let mut rng = XorShift(11);
    let mut slots = [0u8; 256];
    for s in &mut slots {
        *s = (rng.next() % 3) as u8;
    }
    let a = Plan {
        policy: Policy::Layer34,
        buckets: BucketMap::new(2).unwrap(),
        members: vec![1000, 1001],
    };
    let b = Plan {
        policy: Policy::Strong(Strong::new(5)),
        buckets: BucketMap::from_slots(slots, 3).unwrap(),
        members: vec![2000, 2001, 2002],
    };
    for plan in [&a, &b, &a] {
        dp.configure(&plan.distribution()).unwrap();
        for f in &frames {
            assert_eq!(dp.test_run(f).unwrap(), plan.expect(f));
        }
    }

    // Plans alternate on another thread while frames run here.
    let mut publisher = dp.publisher().unwrap();
    let stop = AtomicBool::new(false);
    let (mut under_a, mut under_b) = (0u32, 0u32);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                publisher.publish(&b.distribution()).unwrap();
                publisher.publish(&a.distribution()).unwrap();
            }
        });
        for i in 0..30_000 {
            let f = &frames[i % frames.len()];
            let got = dp.test_run(f).unwrap();
            if got == a.expect(f) {
                under_a += 1;
            } else if got == b.expect(f) {
                under_b += 1;
            } else {
                stop.store(true, Ordering::Relaxed);
                panic!(
                    "a mix of two plans: {got:?}; a: {:?}; b: {:?}",
                    a.expect(f),
                    b.expect(f)
                );
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    assert!(under_a > 0 && under_b > 0, "a {under_a}, b {under_b}");
    eprintln!("{under_a} frames under plan a, {under_b} under plan b, none mixed");
}
