//! Closing through a lossy path, with the runtime's session (the I/O loop that
//! ships) on the virtual clock: the side that closes first loses its last ack
//! and its Close (or its peer is descheduled past its closing state), the
//! closing state runs out, and its application stops the runtime at once (as
//! the tools do after their summary). Its peer must still end gracefully.

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::LoopNet;
use crate::link::impair_model::ImpairConfig;
use crate::runtime::Runtime;
use crate::CloseReason;

/// Packet types of an Ack and a Close (docs/PROTOCOL.md, header offset 3).
const ACK: u8 = 5;
const CLOSE: u8 = 6;

/// Runs one transfer from a client to a server; from the server's finish until
/// the client's connection ended, every Ack and Close from the client is lost
/// (the server's finish is never acknowledged, the client's closing state runs
/// out); then the client's session shuts down. Returns how the server's close
/// ended and whether the client's session stopped.
fn transfer_losing_the_clients_close() -> (Result<(), CloseReason>, Option<Duration>) {
    let mut net = LoopNet::new(7);
    let builder = |seed: u64| {
        Runtime::builder()
            .shutdown_timeout(Duration::from_secs(5))
            .seed(seed)
    };
    let ca: SocketAddr = "10.0.0.1:4000".parse().unwrap();
    let sa: SocketAddr = "10.0.0.2:5000".parse().unwrap();
    let client = net.add_node(ca, builder(1), 1024, 1500).unwrap();
    let server = net.add_node(sa, builder(2), 1024, 1500).unwrap();
    let clean = ImpairConfig {
        delay: Duration::from_millis(1),
        ..Default::default()
    };
    net.set_path(client, server, clean.clone()).unwrap();
    net.set_path(server, client, clean).unwrap();
    let client_closed = Arc::new(AtomicBool::new(false));
    let server_finished = Arc::new(AtomicBool::new(false));
    let (closed, finished) = (client_closed.clone(), server_finished.clone());
    net.drop_when(Box::new(move |from, _, data| {
        from == ca
            && matches!(data.get(3), Some(&ACK | &CLOSE))
            && finished.load(Ordering::Relaxed)
            && !closed.load(Ordering::Relaxed)
    }));
    let t0 = net.now();
    net.observe(Box::new(move |t, from, _, d, ok| {
        if d[3] != 4 || d.len() < 200 {
            eprintln!("DBG {:?} {} type {} {}", t - t0, from, d[3], ok)
        }
    }));
    net.session(server).listen();
    let now = net.now();
    let mut out = Some(net.session(client).connect(now, sa).unwrap());
    let data = vec![0x5a; 100_000];
    let mut written = 0;
    let mut inbound = None;
    let mut read = 0;
    let mut eof = false;
    let mut server_end = None;
    let mut buf = vec![0u8; 64 * 1024];
    let (mut shut_at, mut stopped_after) = (None, None);
    let limit = net.now() + Duration::from_secs(60);
    loop {
        if let Some(s) = out.as_mut() {
            while written < data.len() {
                match s.try_write(&data[written..]) {
                    Ok(k) => written += k,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => panic!("client write: {e}"),
                }
            }
            if written == data.len() {
                match s.try_close() {
                    Ok(()) => {
                        // Graceful at the end of its closing state (our Close
                        // lost, the server's never sent): the application ends.
                        client_closed.store(true, Ordering::Relaxed);
                        out = None;
                        let now = net.now();
                        net.session(client).shut_down(now);
                        shut_at = Some(now);
                        eprintln!("DBG shut_down at {:?}", now - t0);
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => panic!("client close: {e}"),
                }
            }
        }
        if inbound.is_none() {
            inbound = net.session(server).accept();
        }
        if let Some(s) = inbound.as_mut().filter(|_| server_end.is_none()) {
            while !eof {
                match s.try_read(&mut buf) {
                    Ok(0) => eof = true,
                    Ok(k) => read += k,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => panic!("server read: {e}"),
                }
            }
            if eof {
                server_finished.store(true, Ordering::Relaxed);
                match s.try_close() {
                    Ok(()) => server_end = Some(Ok(())),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => {
                        let reason = e
                            .get_ref()
                            .and_then(|r| r.downcast_ref::<CloseReason>())
                            .copied()
                            .unwrap_or_else(|| panic!("server close: {e}"));
                        server_end = Some(Err(reason));
                    }
                }
            }
        }
        if let (Some(t), None, true) = (shut_at, stopped_after, net.stopped(client)) {
            stopped_after = Some(net.now() - t);
        }
        if server_end.is_some() && net.stopped(client) {
            eprintln!("DBG end {:?} {:?}", net.now() - t0, server_end);
            break;
        }
        if !net.step(limit) {
            break;
        }
    }
    assert_eq!(read, data.len(), "every byte arrived");
    (server_end.expect("the server's close ended"), stopped_after)
}

/// Issue #11's flaky close: the client's last ack and its Close are lost, its
/// closing state ends (graceful: it has everything), and its runtime is told to
/// stop. The server,
/// still waiting for a Close, retransmits; the stopping runtime answers it from
/// its lingering connections before it stops, so the server ends gracefully
/// rather than "peer silent for the idle timeout".
#[test]
fn a_lost_close_is_answered_while_the_closing_side_shuts_down() {
    let (server, client_stopped) = transfer_losing_the_clients_close();
    assert_eq!(server, Ok(()), "the server's close");
    // The server's Close in answer ends the wait: the client does not sit out
    // its whole shutdown timeout (5 s) or idle timeout.
    let stopped = client_stopped.expect("the client's runtime stopped");
    assert!(
        stopped < Duration::from_secs(2),
        "stopped {stopped:?} after"
    );
}
