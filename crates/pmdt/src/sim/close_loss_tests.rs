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

use super::{LoopNet, NodeId};
use crate::link::impair_model::ImpairConfig;
use crate::runtime::Runtime;
use crate::CloseReason;

/// Packet types of an Ack and a Close (docs/PROTOCOL.md, header offset 3).
const ACK: u8 = 5;
const CLOSE: u8 = 6;

/// The client's and the server's addresses.
const CLIENT: &str = "10.0.0.1:4000";
const SERVER: &str = "10.0.0.2:5000";

/// A client and a server session (runtimes that ship, stopping within 5 s)
/// joined by clean 1 ms paths, on a virtual clock seeded with `seed`.
fn client_and_server(seed: u64) -> (LoopNet, NodeId, NodeId) {
    let mut net = LoopNet::new(seed);
    let builder = |seed: u64| {
        Runtime::builder()
            .shutdown_timeout(Duration::from_secs(5))
            .seed(seed)
    };
    let client = net
        .add_node(CLIENT.parse().unwrap(), builder(1), 1024, 1500)
        .unwrap();
    let server = net
        .add_node(SERVER.parse().unwrap(), builder(2), 1024, 1500)
        .unwrap();
    let clean = ImpairConfig {
        delay: Duration::from_millis(1),
        ..Default::default()
    };
    net.set_path(client, server, clean.clone()).unwrap();
    net.set_path(server, client, clean).unwrap();
    (net, client, server)
}

/// Runs one transfer from a client to a server; from the server's finish until
/// the client's connection ended, every Ack and Close from the client is lost
/// (the server's finish is never acknowledged, the client's closing state runs
/// out); then the client's session shuts down. Returns how the server's close
/// ended and whether the client's session stopped.
fn transfer_losing_the_clients_close() -> (Result<(), CloseReason>, Option<Duration>) {
    let (mut net, client, server) = client_and_server(7);
    let (ca, sa): (SocketAddr, SocketAddr) = (CLIENT.parse().unwrap(), SERVER.parse().unwrap());
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

/// An application that finishes its stream, reads its peer's answer, then
/// closes (as pmdt-send does: data, finish, the receiver's receipt, close). The
/// loop told the connection only of the finish, so it never closed itself: it
/// waited for the peer's Close, and with that lost, for its keepalive (2 s) to
/// draw another. Here every Close from the server is lost: the client must
/// still end (gracefully: it has everything) within its own closing state.
#[test]
fn a_close_after_a_finish_ends_without_the_peers_close() {
    let (mut net, client, server) = client_and_server(3);
    let sa = SERVER.parse::<SocketAddr>().unwrap();
    net.drop_when(Box::new(move |from, _, data| {
        from == sa && data.get(3) == Some(&CLOSE)
    }));
    net.session(server).listen();
    let now = net.now();
    let mut out = net.session(client).connect(now, sa).unwrap();
    let data = vec![0x5a; 100_000];
    let (mut written, mut finished, mut answer) = (0, false, 0);
    let mut inbound = None;
    let (mut eof, mut server_done, mut answered) = (false, false, false);
    let mut buf = vec![0u8; 64 * 1024];
    let mut closing_since = None;
    let mut client_end = None;
    let limit = net.now() + Duration::from_secs(30);
    while client_end.is_none() {
        while written < data.len() {
            match out.try_write(&data[written..]) {
                Ok(k) => written += k,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => panic!("client write: {e}"),
            }
        }
        if written == data.len() && !finished {
            out.finish();
            finished = true;
        }
        if finished && answer < 1 {
            match out.try_read(&mut buf) {
                Ok(k) => answer += k,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => panic!("client read: {e}"),
            }
        }
        if answer >= 1 {
            closing_since.get_or_insert(net.now());
            match out.try_close() {
                Ok(()) => client_end = Some(Ok(())),
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => client_end = Some(Err(e.to_string())),
            }
        }
        if inbound.is_none() {
            inbound = net.session(server).accept();
        }
        if let Some(s) = inbound.as_mut().filter(|_| !server_done) {
            while !eof {
                match s.try_read(&mut buf) {
                    Ok(0) => eof = true,
                    Ok(_) => {}
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => panic!("server read: {e}"),
                }
            }
            if eof && !answered {
                // The receipt: one byte back, then the server's end.
                answered = s.try_write(b"!").is_ok_and(|k| k == 1);
            }
            if answered {
                match s.try_close() {
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    _ => server_done = true,
                }
            }
        }
        if !net.step(limit) {
            break;
        }
    }
    assert_eq!(client_end, Some(Ok(())), "the client's close");
    let took = net.now() - closing_since.expect("the client closed");
    assert!(
        took < Duration::from_millis(500),
        "the client ended {took:?} after closing (the keepalive is 2 s)"
    );
}
