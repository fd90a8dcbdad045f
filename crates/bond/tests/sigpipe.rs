//! A control client whose daemon went away gets an error, not SIGPIPE:
//! one-shot commands run with SIGPIPE's default action (so that a closed
//! stdout ends them quietly), and a request written with a plain write(2)
//! to a dead daemon would end them without a word. Its own test binary,
//! since it changes the process's SIGPIPE disposition.

use std::os::unix::net::UnixStream;

#[test]
fn a_request_to_a_daemon_that_went_away_is_an_error_not_a_signal() {
    lagkit_sys::fd::default_sigpipe();
    let (client, daemon) = UnixStream::pair().unwrap();
    drop(daemon);
    let e = lagkit_api::protocol::send_all(&client, b"{\"cmd\":\"status\"}\n")
        .expect_err("the peer is gone");
    assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
}
