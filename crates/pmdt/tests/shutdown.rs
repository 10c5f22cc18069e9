//! A receiver's runtime that shuts down while its application still holds a stream
//! with data arriving must not acknowledge data nobody will read: the sender learns
//! that its data did not all arrive (a reset), never a clean close.

use std::io::{Read, Write};
use std::time::Duration;

use pmdt::link::udp::UdpLinkConfig;
use pmdt::proto::TransportConfig;
use pmdt::runtime::{Backend, Runtime};

fn runtime() -> Runtime {
    Runtime::builder()
        .transport(
            TransportConfig::default()
                .with_initial_rtt(Duration::from_millis(5))
                .with_idle_timeout(Duration::from_secs(3)),
        )
        .shutdown_timeout(Duration::from_millis(500))
        .backend(Backend::Udp(UdpLinkConfig {
            bind: "127.0.0.1:0".parse().unwrap(),
            ..Default::default()
        }))
        .start()
        .unwrap()
}

#[test]
fn shutting_down_under_a_live_reader_resets_instead_of_acknowledging() {
    let receiver = runtime();
    let to = receiver.local_addr();
    let listener = receiver.listen(0).unwrap();
    let sender = std::thread::spawn(move || {
        let tx = runtime();
        let mut s = tx.connect(to).unwrap();
        let data = vec![7u8; 64 * 1024];
        // More than the receiver's credit (it stops reading at 1 MB), little enough
        // to be acknowledged within its shutdown timeout if it acknowledged unread
        // data (as it did: the sender then closed "cleanly").
        let mut written = 0u64;
        let write_end = loop {
            match s.write(&data) {
                Ok(n) => written += n as u64,
                Err(e) => break Some(e),
            }
            if written >= 30_000_000 {
                break None;
            }
        };
        let close = s.close();
        (write_end, close, s.stats().stream_bytes_acked, written)
    });
    let mut s = listener.accept().unwrap();
    let mut buf = vec![0u8; 64 * 1024];
    let mut read = 0;
    while read < 1_000_000 {
        read += s.read(&mut buf).unwrap();
    }
    // The application keeps `s` (unread data keeps coming) while its runtime stops.
    receiver.shutdown().unwrap();
    let (write_end, close, acked, written) = sender.join().unwrap();
    assert!(
        write_end.is_some() || close.is_err(),
        "the sender believed all {written} bytes arrived (acked {acked})"
    );
    let e = close.expect_err("a clean close after the receiver shut down");
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}");
    drop(s);
}
