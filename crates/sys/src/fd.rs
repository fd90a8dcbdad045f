//! What a write to a descriptor whose reader is gone does: the Rust
//! runtime ignores `SIGPIPE`, so such a write fails with `EPIPE`; a
//! command-line tool piped into `head` should instead end quietly, as C
//! programs do. `nix`'s `signal` and `sigaction` are `unsafe` (they can
//! install a handler), so restoring the default action is written here.

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
