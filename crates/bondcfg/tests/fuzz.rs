//! A seeded fuzz loop: valid files mutated at random (bytes flipped,
//! inserted and deleted; lines duplicated, dropped and swapped; config
//! tokens spliced in) and plain random bytes, all through
//! [`lagkit_bondcfg::fuzz_one`], which must never panic. The same function
//! backs the `cargo fuzz` target; this loop runs in every `cargo test`.

const CORPUS: &[&str] = &[
    "name = \"bond0\"\nmode = \"802.3ad\"\nmembers = [\"eth1\", \"eth2\"]\nxmit_hash_policy = \"layer3+4\"\nlacp_rate = \"fast\"\naddress = [\"10.0.0.1/24\"]\n",
    "name = \"ent6\"\nadapter_names = \"ent2,ent4\"\nmode = \"8023ad\"\nhash_mode = \"src_dst_port\"\nuse_jumbo_frame = \"yes\"\nnum_retries = 3\nretry_time = 1\nbackup_adapter = \"ent3\"\nnetaddr = \"253.125.129.1\"\n",
    "lacp_rate = \"fast\"\nmiimon = 100\n\n[bond0]\nmode = \"802.3ad\"\nmembers = [\"eth1\", \"eth2\"]\n\n[bond1]\nmode = \"active-backup\"\nmembers = [\"eth3\", \"eth4\"]\nprimary = \"eth3\"\nupdelay = 250\n",
    "[[bond]]\nname = \"bond0\"\nmode = 1\nmembers = [\"e1\", \"e2\"]\narp_interval = 100\narp_ip_target = [\"192.0.2.1\"]\nns_ip6_target = [\"fd00::1\"]\n\n[[bond]]\nname = \"bond1\"\nmode = \"adaptive\"\nmembers = [\"e3\"]\nhash_seed = \"0xffffffffffffffff\"\nhash_symmetric = \"yes\"\nadaptive_interval = \"2s\"\n",
    "name = \"bond5\"\nmode = \"balance-rr\"\nslaves = \"a b c\"\npackets_per_slave = 0\nmac = \"02:00:00:00:00:01\"\nmtu = \"9000\"\ncontrol_socket = \"/run/x.sock\"\nmetrics_port = 9464\n",
    "offloads = false\n[bond0]\nmode = \"active-backup\"\nmembers = [\"eth1\", \"eth2\"]\nbackup_adapter = \"eth3\"\noffloads = { eth2 = false, eth3 = \"off\" }\n\n[bond1]\nmode = 2\nmembers = [\"eth4\"]\n\n[bond1.offloads]\neth4 = 0\n",
];

const TOKENS: &[&str] = &[
    "\n",
    " = ",
    "\"",
    "[",
    "]",
    "[[bond]]\n",
    "[bond9]\n",
    ",",
    "#",
    "'",
    "{",
    "}",
    ".",
    "name",
    "mode",
    "members",
    "miimon",
    "updelay",
    "primary",
    "arp_interval",
    "netaddr",
    "xmit_hash_policy",
    "hash_seed",
    "mtu",
    "offloads",
    "false",
    "address",
    "mac",
    "lacp_rate",
    "backup_adapter",
    "\"802.3ad\"",
    "\"active-backup\"",
    "\"adaptive\"",
    "4",
    "-1",
    "0x10",
    "1e9",
    "true",
    "\"yes\"",
    "\"10.0.0.1/24\"",
    "\"fd00::1\"",
    "\"eth1\"",
    "\"strong:seed=9,symmetric\"",
    "99999999999999999999999",
    "\"é\"",
    "\u{0}",
    "\\u0000",
    "1979-05-27T07:32:00Z",
    "inf",
    "nan",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut data = input.to_vec();
    for _ in 0..=rng.below(2) {
        let at = rng.below(data.len() + 1);
        match rng.below(8) {
            0 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] ^= 1 << rng.below(8);
            }
            1 => data.insert(at, rng.next() as u8),
            2 if !data.is_empty() => {
                let end = (at + rng.below(16)).min(data.len());
                data.drain(at.min(end)..end);
            }
            3 | 4 => {
                let t = TOKENS[rng.below(TOKENS.len())].as_bytes();
                data.splice(at..at, t.iter().copied());
            }
            5 => data.truncate(at),
            _ => {
                let text = String::from_utf8_lossy(&data).into_owned();
                let mut lines: Vec<&str> = text.lines().collect();
                if !lines.is_empty() {
                    let i = rng.below(lines.len());
                    let j = rng.below(lines.len());
                    match rng.below(3) {
                        0 => lines.swap(i, j),
                        1 => {
                            lines.remove(i);
                        }
                        _ => lines.insert(j, lines[i]),
                    }
                }
                data = lines.join("\n").into_bytes();
            }
        }
    }
    data
}

#[test]
fn the_corpus_is_valid() {
    for text in CORPUS {
        lagkit_bondcfg::parse_str(text, "corpus.toml").unwrap_or_else(|e| panic!("{e}"));
        lagkit_bondcfg::fuzz_one(text.as_bytes());
    }
}

#[test]
fn mutated_and_random_input_never_panics() {
    // LAGKIT_FUZZ_ITERS and LAGKIT_FUZZ_SEED run a longer or different loop.
    let env = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let iters = env("LAGKIT_FUZZ_ITERS", 20_000);
    let mut rng = Rng(env("LAGKIT_FUZZ_SEED", 0x1a6b_0c0f_5eed_0001) | 1);
    let (mut ok, mut err) = (0u64, 0u64);
    for i in 0..iters {
        let data = if i % 10 == 9 {
            (0..rng.below(200)).map(|_| rng.next() as u8).collect()
        } else {
            let mut d = CORPUS[rng.below(CORPUS.len())].as_bytes().to_vec();
            for _ in 0..=rng.below(2) {
                d = mutate(&mut rng, &d);
            }
            d
        };
        lagkit_bondcfg::fuzz_one(&data);
        match lagkit_bondcfg::parse_str(&String::from_utf8_lossy(&data), "f.toml") {
            Ok(_) => ok += 1,
            Err(_) => err += 1,
        }
    }
    // The mutations must reach both outcomes for the loop to mean anything.
    eprintln!("{iters} inputs: {ok} parsed, {err} refused");
    assert!(ok > iters / 50 && err > iters / 50, "ok {ok}, err {err}");
}
