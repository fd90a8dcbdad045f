//! Processes: a forked child running a closure with its standard input and
//! output on pipes, the standard streams read and written without std's
//! locks (as a forked child must), a signal ignored, and what a
//! [`Command`]'s child does between fork and exec (a new session, a
//! signal when its parent dies).

use nix::sys::signal::SigHandler;
pub use nix::sys::signal::Signal;
use nix::unistd::ForkResult;
pub use nix::unistd::Pid;
use std::io;
use std::os::fd::{IntoRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Makes `cmd`'s child call `setsid(2)` before it execs: the program runs
/// in a session (and process group) of its own, so a terminal's Ctrl-C for
/// this process's group does not reach it. A failure of `setsid` is
/// ignored (the child is then still in ours).
pub fn new_session(cmd: &mut Command) -> &mut Command {
    // SAFETY: the closure runs in the child between fork and exec; it only
    // makes the setsid system call (async-signal-safe), allocates nothing
    // and takes no lock.
    unsafe {
        cmd.pre_exec(|| {
            let _ = nix::unistd::setsid();
            Ok(())
        })
    }
}

/// Makes `cmd`'s child ask the kernel for `signal` when its parent thread
/// exits (`prctl(PR_SET_PDEATHSIG)`, set before it execs). A failure of
/// `prctl` is ignored.
pub fn die_with_parent(cmd: &mut Command, signal: Signal) -> &mut Command {
    // SAFETY: the closure runs in the child between fork and exec; it only
    // makes the prctl system call (async-signal-safe), allocates nothing
    // and takes no lock.
    unsafe {
        cmd.pre_exec(move || {
            let _ = nix::sys::prctl::set_pdeathsig(signal);
            Ok(())
        })
    }
}

/// Sends `signal` to process `pid` (kill(2)).
pub fn kill(pid: u32, signal: Signal) -> io::Result<()> {
    let pid = i32::try_from(pid).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    nix::sys::signal::kill(Pid::from_raw(pid), signal).map_err(io::Error::from)
}

/// Waits for `child` to exit (wait4(2)) and returns its exit status with
/// the largest resident set it had, in KiB: one process's peak, which
/// `getrusage(RUSAGE_CHILDREN)` cannot give while other children run.
/// Standard's `Child::wait` has no resource usage, and nix has no wait4.
/// The child is reaped: do not wait for it again.
pub fn wait_peak_rss(
    child: &mut std::process::Child,
) -> io::Result<(std::process::ExitStatus, u64)> {
    use std::os::unix::process::ExitStatusExt;
    let pid =
        i32::try_from(child.id()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let mut status = 0;
    // SAFETY: rusage is plain data (integers and timevals); all zeroes is
    // a valid value, which wait4 overwrites.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: waits for a child of this process; `status` and `usage`
        // are valid, exclusive out pointers for the call's duration.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if rc == pid {
            break;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    let peak = u64::try_from(usage.ru_maxrss).unwrap_or(0);
    Ok((std::process::ExitStatus::from_raw(status), peak))
}

/// Sets `signal`'s disposition to ignore (`SIG_IGN`) for the whole process.
pub fn ignore_signal(signal: Signal) -> io::Result<()> {
    // SAFETY: SIG_IGN installs no handler, so no code of ours can run in
    // signal context; nix::sys::signal::signal is unsafe only for handlers.
    unsafe { nix::sys::signal::signal(signal, SigHandler::SigIgn) }
        .map(drop)
        .map_err(io::Error::from)
}

/// Writes all of `buf` to descriptor 1 (standard output), retrying after
/// signals, without std's `stdout` and its lock (which a forked child must
/// not take: another thread of the parent may have held it at the fork).
pub fn write_stdout_all(mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        // SAFETY: reads at most buf.len() bytes from the live slice.
        let n = unsafe { libc::write(libc::STDOUT_FILENO, buf.as_ptr().cast(), buf.len()) };
        match n {
            0 => return Err(io::Error::from(io::ErrorKind::WriteZero)),
            n if n < 0 => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            n => buf = &buf[n as usize..],
        }
    }
    Ok(())
}

/// One `read(2)` from descriptor 0 (standard input) into `buf`, without
/// std's `stdin` and its lock or buffer: the byte count, 0 at EOF.
pub fn read_stdin(buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: writes at most buf.len() bytes into the live slice.
    let n = unsafe { libc::read(libc::STDIN_FILENO, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// In a forked child: closes every descriptor from 3 up (`close_range`,
/// or one by one below 65536 on kernels before 5.9).
fn close_from_3() {
    // SAFETY: close_range takes integers only; it closes descriptors of
    // this (child) process, which owns all of them and runs no other thread.
    let r = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
    if r != 0 {
        for fd in 3..65536 {
            // SAFETY: as above, one descriptor at a time.
            unsafe { libc::close(fd) };
        }
    }
}

/// Forks a child process that runs `child` with `stdin` as its descriptor
/// 0 and `stdout` as its descriptor 1, every descriptor from 3 up closed,
/// and exits (`_exit`, no destructors or atexit handlers of the parent's
/// state) with what `child` returns, or 101 if it panics. The child never
/// returns into the caller. The parent gets the child's PID and closes its
/// copies of `stdin` and `stdout`; it must reap the child (`waitpid`).
///
/// `child` runs in a copy of a process that may have other threads: only
/// the forking thread exists in the child, so a lock another thread held
/// at the fork stays held. `child` must not take such locks: std's
/// `stdout`/`stdin` (use [`write_stdout_all`] and [`read_stdin`]), the
/// environment, a logger. glibc's `malloc` is made fork-safe by glibc
/// itself. This is a contract on `child`, which Rust cannot check; what
/// breaking it risks is a child that deadlocks, and the parent's memory is
/// never touched (the child has its own copy).
pub fn fork_with_stdio<F: FnOnce() -> i32>(
    stdin: OwnedFd,
    stdout: OwnedFd,
    child: F,
) -> io::Result<Pid> {
    // SAFETY: the child below does only this: two dup2 calls and a
    // close_range (async-signal-safe system calls), then `child` under
    // catch_unwind (its contract above), then _exit, so it never returns
    // to the caller's frames (no destructor of the parent's objects runs
    // twice).
    match unsafe { nix::unistd::fork() } {
        Err(e) => Err(io::Error::from(e)),
        Ok(ForkResult::Parent { child }) => {
            drop((stdin, stdout));
            Ok(child)
        }
        Ok(ForkResult::Child) => {
            // SAFETY: dup2 takes integers only; the descriptors were moved
            // out of their OwnedFds, and close_from_3 closes the originals.
            unsafe {
                libc::dup2(stdin.into_raw_fd(), libc::STDIN_FILENO);
                libc::dup2(stdout.into_raw_fd(), libc::STDOUT_FILENO);
            }
            close_from_3();
            let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(101);
            // SAFETY: _exit ends the process at once; nothing after it runs.
            unsafe { libc::_exit(code) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::sys::wait::{waitpid, WaitStatus};
    use std::io::{Read, Write};

    #[test]
    fn a_forked_child_talks_over_its_stdio_and_exits_with_its_code() {
        let (in_r, in_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
        let (out_r, out_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
        let pid = fork_with_stdio(in_r, out_w, || {
            let mut buf = [0u8; 16];
            let n = read_stdin(&mut buf).unwrap_or(0);
            let mut reply = b"got ".to_vec();
            reply.extend_from_slice(&buf[..n]);
            if write_stdout_all(&reply).is_err() {
                return 1;
            }
            // EOF once the parent closes its end.
            match read_stdin(&mut buf) {
                Ok(0) => 7,
                _ => 2,
            }
        })
        .unwrap();
        let mut to_child = std::fs::File::from(in_w);
        to_child.write_all(b"ping").unwrap();
        let mut from_child = std::fs::File::from(out_r);
        let mut got = [0u8; 8];
        from_child.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"got ping");
        drop(to_child);
        assert_eq!(waitpid(pid, None).unwrap(), WaitStatus::Exited(pid, 7));
        // The child's end closed at exit: EOF.
        let mut rest = Vec::new();
        from_child.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty());
    }

    #[test]
    fn a_new_session_leads_its_own_session() {
        let mut cmd = Command::new("sleep");
        cmd.arg("5");
        let mut child = new_session(&mut cmd).spawn().unwrap();
        let pid = Pid::from_raw(child.id() as i32);
        let sid = nix::unistd::getsid(Some(pid));
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(sid.unwrap(), pid);
    }

    #[test]
    fn die_with_parent_still_runs_the_program() {
        let mut cmd = Command::new("true");
        let st = die_with_parent(&mut cmd, Signal::SIGTERM).status().unwrap();
        assert!(st.success());
    }

    #[test]
    fn ignoring_a_signal_succeeds() {
        // SIGWINCH's default is to ignore it already: no test is disturbed.
        ignore_signal(Signal::SIGWINCH).unwrap();
    }
}
