//! Dropping every frame at an interface's tcx hook (Linux ≥ 6.6): a
//! two-instruction BPF program (`r0 = TC_ACT_SHOT; exit`) and a BPF link
//! attaching it. The attachment lasts as long as the link's descriptor,
//! so it goes away with the process, also after SIGKILL.
//!
//! Hand-written rather than through a BPF library (the BPF loader crate
//! uses aya for its ELF objects): two instructions and two `bpf(2)` calls,
//! with no ELF object, map or helper to relocate. `nix` has no `bpf(2)`.

use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;

/// `bpf(BPF_PROG_LOAD)` attributes, as far as lagkit uses them (the
/// kernel accepts a shorter `union bpf_attr` as long as it is what it
/// knows; every field not set here is zero).
#[repr(C)]
#[derive(Default)]
struct BpfProgLoad {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
    prog_ifindex: u32,
    expected_attach_type: u32,
}

/// `bpf(BPF_LINK_CREATE)` attributes for a tcx attachment.
#[repr(C)]
#[derive(Default)]
struct BpfLinkCreate {
    prog_fd: u32,
    target_ifindex: u32,
    attach_type: u32,
    flags: u32,
    relative_fd: u32,
    _pad: u32,
    expected_revision: u64,
}

const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_LINK_CREATE: libc::c_long = 28;
const BPF_PROG_TYPE_SCHED_CLS: u32 = 3;
const BPF_TCX_INGRESS: u32 = 46;
const BPF_TCX_EGRESS: u32 = 47;
/// Attach before every program already there.
const BPF_F_BEFORE: u32 = 1 << 3;

/// The program: `BPF_ALU64 | BPF_MOV | BPF_K` (0xb7) r0 = 2 (`TC_ACT_SHOT`),
/// then `BPF_JMP | BPF_EXIT` (0x95). `struct bpf_insn { u8 code; u8
/// dst:4, src:4; s16 off; s32 imm; }`, little-endian.
const DROP_INSNS: [u64; 2] = [
    u64::from_le_bytes([0xb7, 0, 0, 0, 2, 0, 0, 0]),
    u64::from_le_bytes([0x95, 0, 0, 0, 0, 0, 0, 0]),
];

/// Issues `bpf(cmd, attr, size_of::<T>())` for a command that returns a
/// new descriptor.
///
/// # Safety
/// `T` must be the `union bpf_attr` prefix `cmd` expects, and every
/// pointer in it valid for what the kernel does with it during the call.
unsafe fn bpf<T>(cmd: libc::c_long, attr: &mut T) -> Result<OwnedFd, Errno> {
    // SAFETY: attr is a live, exclusively borrowed repr(C) bpf_attr prefix
    // of the size passed; the kernel reads (and may write) at most that.
    // The caller vouches for the pointers in it.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            (attr as *mut T).cast::<libc::c_void>(),
            std::mem::size_of::<T>() as libc::c_uint,
        )
    };
    if r < 0 {
        return Err(Errno::last());
    }
    // SAFETY: on success these commands return a new descriptor that
    // nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) })
}

/// Loads the program that drops every frame (`lagkit_drop`, a
/// `BPF_PROG_TYPE_SCHED_CLS`; `BPF_PROG_LOAD`). It stays loaded while the
/// descriptor, or a link made with [`attach_tcx`], is open.
pub fn load_drop_program() -> Result<OwnedFd, Errno> {
    let license = b"GPL\0";
    let mut name = [0u8; 16];
    name[..11].copy_from_slice(b"lagkit_drop");
    let mut load = BpfProgLoad {
        prog_type: BPF_PROG_TYPE_SCHED_CLS,
        insn_cnt: DROP_INSNS.len() as u32,
        insns: DROP_INSNS.as_ptr() as u64,
        license: license.as_ptr() as u64,
        prog_name: name,
        ..BpfProgLoad::default()
    };
    // SAFETY: `load` is the BPF_PROG_LOAD prefix of bpf_attr; insns and
    // license point at a constant array of insn_cnt instructions and a
    // NUL-terminated string, both alive across the call; no log buffer.
    unsafe { bpf(BPF_PROG_LOAD, &mut load) }
}

/// Attaches program `prog` first at the tcx ingress (or `egress`) of
/// interface `ifindex` of the caller's network namespace
/// (`BPF_LINK_CREATE`). The attachment lasts as long as the returned link
/// descriptor; the link holds its own reference to the program.
pub fn attach_tcx(prog: BorrowedFd<'_>, ifindex: u32, egress: bool) -> Result<OwnedFd, Errno> {
    let mut link = BpfLinkCreate {
        prog_fd: prog.as_raw_fd() as u32,
        target_ifindex: ifindex,
        attach_type: if egress {
            BPF_TCX_EGRESS
        } else {
            BPF_TCX_INGRESS
        },
        flags: BPF_F_BEFORE,
        ..BpfLinkCreate::default()
    };
    // SAFETY: `link` is the BPF_LINK_CREATE prefix of bpf_attr; it holds
    // no pointer.
    unsafe { bpf(BPF_LINK_CREATE, &mut link) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_match_the_kernel_layout() {
        // Offsets of union bpf_attr's fields in <linux/bpf.h>.
        assert_eq!(std::mem::size_of::<BpfProgLoad>(), 72);
        assert_eq!(std::mem::offset_of!(BpfProgLoad, prog_name), 48);
        assert_eq!(std::mem::offset_of!(BpfProgLoad, expected_attach_type), 68);
        assert_eq!(std::mem::size_of::<BpfLinkCreate>(), 32);
        assert_eq!(std::mem::offset_of!(BpfLinkCreate, expected_revision), 24);
        let b: Vec<u8> = DROP_INSNS.iter().flat_map(|i| i.to_le_bytes()).collect();
        assert_eq!(b, [0xb7, 0, 0, 0, 2, 0, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0]);
    }
}
