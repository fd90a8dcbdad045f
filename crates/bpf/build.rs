//! Compiles the BPF programs in `src/bpf/` with clang (`-target bpf -O2 -g`:
//! the BTF that `-g` emits is what describes `.maps` to the loader) into
//! `$OUT_DIR/lagkit.bpf.o`, which `src/lib.rs` embeds, the same with
//! `LAGKIT_VARIANT` defined into `lagkit-variant.bpf.o` (programs that
//! differ by one harmless instruction, for tests of an upgrade across a
//! restart), and the tests' helper in `tests/bpf/` into
//! `$OUT_DIR/vlan_push.bpf.o`.
//!
//! Debian's `clang` and `libbpf-dev` (for `<bpf/bpf_helpers.h>`) are enough;
//! `CLANG` names another compiler.

use std::env;
use std::io::ErrorKind;
use std::path::PathBuf;
use std::process::Command;

/// (source, object, defines): lagkit's programs, their variant, and a
/// helper the tests load.
const OBJECTS: [(&str, &str, &[&str]); 4] = [
    ("src/bpf/lagkit.bpf.c", "lagkit.bpf.o", &[]),
    ("src/bpf/switch.bpf.c", "switch.bpf.o", &[]),
    (
        "src/bpf/lagkit.bpf.c",
        "lagkit-variant.bpf.o",
        &["-DLAGKIT_VARIANT"],
    ),
    ("tests/bpf/vlan_push.bpf.c", "vlan_push.bpf.o", &[]),
];
const HEADERS: [&str; 3] = ["src/bpf/lagkit.h", "src/bpf/flow.h", "src/bpf/switch.h"];
const INSTALL: &str = "install them with `apt-get install clang llvm libbpf-dev` \
                       (or set CLANG to a clang that targets bpf)";

fn main() {
    for s in OBJECTS.iter().map(|o| o.0).chain(HEADERS) {
        println!("cargo:rerun-if-changed={s}");
    }
    println!("cargo:rerun-if-env-changed=CLANG");
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for (src, obj, defines) in OBJECTS {
        compile(src, &out_dir.join(obj), defines);
    }
}

fn compile(src: &str, out: &std::path::Path, defines: &[&str]) {
    let clang = env::var("CLANG").unwrap_or_else(|_| "clang".to_string());
    // <linux/bpf.h> includes <asm/types.h>, which Debian keeps in the
    // multiarch directory of the build host, not in /usr/include.
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let multiarch = format!("/usr/include/{arch}-linux-gnu");
    let result = Command::new(&clang)
        // -mcpu=v3: atomic fetch-and-add (round-robin's shared counter) and
        // 32-bit jumps; Linux >= 5.12 runs it.
        .args([
            "-target", "bpf", "-mcpu=v3", "-O2", "-g", "-Wall", "-Werror",
        ])
        .args(defines)
        .arg("-I")
        .arg(&multiarch)
        .arg("-c")
        .arg(src)
        .arg("-o")
        .arg(out)
        .output();
    match result {
        Err(e) if e.kind() == ErrorKind::NotFound => panic!(
            "lagkit-bpf: `{clang}` not found: building the BPF programs needs clang and \
             libbpf's headers; {INSTALL}"
        ),
        Err(e) => panic!("lagkit-bpf: cannot run `{clang}`: {e}"),
        Ok(o) if !o.status.success() => panic!(
            "lagkit-bpf: `{clang}` failed to compile {src}:\n{}\n(missing headers such as \
             <bpf/bpf_helpers.h> or <asm/types.h> mean a package is missing: {INSTALL})",
            String::from_utf8_lossy(&o.stderr)
        ),
        Ok(_) => {}
    }
}
