//! The per-packet path (frame -> key -> member, plus adaptive byte counting)
//! must not allocate. A counting global allocator, per thread, checks it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use lagkit_hash::{AdaptiveBalancer, AdaptiveConfig, BucketMap, FlowKey, Policy, Strong};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator unchanged; the only
// addition is a thread-local counter that never allocates itself.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn frame() -> Vec<u8> {
    let mut f = vec![
        2, 0, 0, 0, 0, 0xb, 2, 0, 0, 0, 0, 0xa, 0x81, 0x00, 0x00, 0x64, 0x08, 0x00,
    ];
    // IPv4 10.0.0.1 -> 10.0.0.2, GRE carrying IPv4 TCP 1111 -> 2222.
    let inner: Vec<u8> = [
        &[
            0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0, 172, 16, 0, 1, 172, 16, 0, 2,
        ][..],
        &[
            0x04, 0x57, 0x08, 0xae, 0, 0, 0, 0, 0, 0, 0, 0, 0x50, 0x10, 0, 0, 0, 0, 0, 0,
        ],
    ]
    .concat();
    let total = (20 + 4 + inner.len()) as u16;
    f.extend_from_slice(&[
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        0,
        0,
        0,
        64,
        47,
        0,
        0,
    ]);
    f.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2, 0, 0, 0x08, 0x00]);
    f.extend_from_slice(&inner);
    f
}

#[test]
fn per_packet_path_does_not_allocate() {
    let frame = frame();
    let policies: Vec<Policy> = Policy::COMPAT
        .into_iter()
        .chain([Policy::Strong(Strong::new(7).with_symmetric(true))])
        .collect();
    let map = BucketMap::new(4).unwrap();
    let mut balancer = AdaptiveBalancer::new(map.clone(), AdaptiveConfig::default(), 0);
    let strong = Strong::new(7);

    let before = ALLOCATIONS.with(Cell::get);
    let mut sink = 0usize;
    for i in 0..1000u64 {
        let key = FlowKey::from_frame(&frame[..frame.len() - (i % 8) as usize]);
        for p in &policies {
            sink += p.select(&key, 3).unwrap_or(0);
            sink += p.select_in(&key, &map).unwrap_or(0);
        }
        balancer.record(strong.bucket(&key), 1500, i);
    }
    let after = ALLOCATIONS.with(Cell::get);
    assert!(sink > 0);
    assert_eq!(after - before, 0, "allocations on the per-packet path");
    assert!(FlowKey::from_frame(&frame).inner.is_some());
}
