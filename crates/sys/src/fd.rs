//! Descriptors and their process-wide settings.
//!
//! What a write to a descriptor whose reader is gone does: the Rust
//! runtime ignores `SIGPIPE`, so such a write fails with `EPIPE`; a
//! command-line tool piped into `head` should instead end quietly, as C
//! programs do. `nix`'s `signal` and `sigaction` are `unsafe` (they can
//! install a handler), so restoring the default action is written here.
//!
//! Descriptors a process was started with by number (a daemon's sockets
//! handed to its successor, by systemd's file-descriptor store or across
//! an `exec`): taking ownership of a number is `unsafe` in std, so
//! [`inherited`] does it here, once per number, after checking that the
//! number is open.

use std::os::fd::{BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// Restores `SIGPIPE`'s default action (terminate the process), so that
/// writing to a pipe whose reader has gone ends the program. Call it
/// before any thread is started, as a process-wide setting.
pub fn default_sigpipe() {
    // SAFETY: installs the default disposition, not a handler: no code of
    // ours will run in signal context, so nothing about it can be unsound.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Takes ownership of descriptor `raw`, which the process was started
/// with (its number named in the environment by whoever started it), and
/// marks it close-on-exec; `None` if no such descriptor is open. Call it
/// at most once per number: the caller is the number's one owner from
/// here on.
pub fn inherited(raw: RawFd) -> Option<OwnedFd> {
    if raw < 3 {
        return None;
    }
    // SAFETY: F_GETFD only reads the descriptor's flags; an unopened
    // number gives EBADF and nothing else happens.
    let flags = unsafe { libc::fcntl(raw, libc::F_GETFD) };
    if flags < 0 {
        return None;
    }
    // SAFETY: `raw` is open (F_GETFD succeeded) and was inherited: no
    // object of this process owns it yet, and the caller takes it once.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let _ = set_close_on_exec(fd_borrow(&fd), true);
    Some(fd)
}

fn fd_borrow(fd: &OwnedFd) -> BorrowedFd<'_> {
    std::os::fd::AsFd::as_fd(fd)
}

/// Sets or clears `FD_CLOEXEC` on `fd`: cleared, the descriptor survives
/// an `exec` of this process under the same number.
pub fn set_close_on_exec(fd: BorrowedFd<'_>, on: bool) -> Result<(), nix::errno::Errno> {
    use nix::fcntl::{fcntl, FcntlArg, FdFlag};
    let flags = if on {
        FdFlag::FD_CLOEXEC
    } else {
        FdFlag::empty()
    };
    fcntl(fd, FcntlArg::F_SETFD(flags)).map(|_| ())
}
