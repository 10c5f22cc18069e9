//! The runtime end to end over the in-memory link and the kernel UDP backend (no
//! DPDK needed): application threads, SPSC rings, I/O threads, impairment.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::thread;
use std::time::Duration;

use pmdt::link::impair::ImpairConfig;
use pmdt::link::memory::MemoryLink;
use pmdt::link::udp::UdpLinkConfig;
use pmdt::link::Link;
use pmdt::runtime::{Backend, Runtime, RuntimeBuilder};
use pmdt::{CloseReason, TransportConfig};

mod common;
use common::{data, transfer};

fn transport() -> TransportConfig {
    TransportConfig::default()
        .with_initial_rtt(Duration::from_millis(5))
        .with_idle_timeout(Duration::from_secs(3))
        .with_keepalive(Some(Duration::from_millis(500)))
}

fn memory_pair(impair: Option<ImpairConfig>) -> (Runtime, Runtime, SocketAddr) {
    let a: SocketAddr = "10.0.0.1:1000".parse().unwrap();
    let b: SocketAddr = "10.0.0.2:2000".parse().unwrap();
    let (la, lb) = MemoryLink::pair(a, b, 8192);
    let mut client = Runtime::builder()
        .transport(transport())
        .backend(Backend::Links(vec![Box::new(la) as Box<dyn Link>]));
    if let Some(c) = impair.clone() {
        client = client.impair(c);
    }
    let mut server = Runtime::builder()
        .transport(transport())
        .backend(Backend::Links(vec![Box::new(lb) as Box<dyn Link>]));
    if let Some(c) = impair {
        server = server.impair(c.with_seed(99));
    }
    (client.start().unwrap(), server.start().unwrap(), b)
}

#[test]
fn transfers_verified_bytes_over_memory_link() {
    let (c, s, to) = memory_pair(None);
    transfer(&c, &s, to, vec![data(3_000_000, 1)], 7001);
    thread::sleep(Duration::from_millis(150)); // a stats period
    let st = c.stats();
    assert_eq!(st.loops.len(), 1);
    assert!(st.loops[0].link.tx_datagrams > 2000);
}

#[test]
fn transfers_through_loss_reordering_and_duplication() {
    let imp = ImpairConfig::default()
        .with_loss(0.02)
        .with_reorder(0.05)
        .with_reorder_delay(Duration::from_millis(2))
        .with_duplicate(0.02)
        .with_delay(Duration::from_millis(1));
    let (c, s, to) = memory_pair(Some(imp));
    transfer(&c, &s, to, vec![data(1_000_000, 2), data(500_000, 3)], 7001);
    thread::sleep(Duration::from_millis(150)); // a stats period
    let st = c.stats().loops[0].link.clone();
    assert!(st.impair_lost > 0 && st.impair_reordered > 0 && st.impair_duplicated > 0);
}

#[test]
fn many_concurrent_connections() {
    let (c, s, to) = memory_pair(None);
    let payloads = (0..24)
        .map(|i| data(40_000 + i * 1000, 10 + i as u64))
        .collect();
    transfer(&c, &s, to, payloads, 7001);
}

#[test]
fn kernel_udp_backend_transfers() {
    let udp = |addr: &str| {
        Runtime::builder()
            .transport(transport())
            .backend(Backend::Udp(UdpLinkConfig {
                bind: addr.parse().unwrap(),
                ..Default::default()
            }))
            .start()
            .unwrap()
    };
    let server = udp("127.0.0.1:0");
    let client = udp("127.0.0.1:0");
    let to = server.local_addr();
    transfer(&client, &server, to, vec![data(2_000_000, 4)], 7001);
}

#[test]
fn vanished_peer_ends_in_timeout_error() {
    let a: SocketAddr = "10.0.0.1:1000".parse().unwrap();
    let b: SocketAddr = "10.0.0.2:2000".parse().unwrap();
    let (la, lb) = MemoryLink::pair(a, b, 8192);
    let cable = la.cable();
    let t = transport().with_idle_timeout(Duration::from_millis(800));
    let client = RuntimeBuilder::default()
        .transport(t.clone())
        .backend(Backend::Links(vec![Box::new(la) as Box<dyn Link>]))
        .start()
        .unwrap();
    let server = RuntimeBuilder::default()
        .transport(t)
        .shutdown_timeout(Duration::ZERO)
        .backend(Backend::Links(vec![Box::new(lb) as Box<dyn Link>]))
        .start()
        .unwrap();
    let l = server.listen(0).unwrap();
    let mut s = client.connect(b).unwrap();
    let _peer = l.accept().unwrap();
    s.write_all(&data(10_000, 5)).unwrap();
    // The server disappears without a word.
    cable.store(true, std::sync::atomic::Ordering::Relaxed);
    let started = std::time::Instant::now();
    let mut buf = [0u8; 64];
    let err = s.read(&mut buf).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::TimedOut, "{err}");
    assert_eq!(s.close_reason(), Some(CloseReason::TimedOut));
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn connect_to_nobody_is_unreachable() {
    let a: SocketAddr = "10.0.0.1:1000".parse().unwrap();
    let b: SocketAddr = "10.0.0.2:2000".parse().unwrap();
    let (la, _lb) = MemoryLink::pair(a, b, 64);
    let client = Runtime::builder()
        .transport(transport().with_idle_timeout(Duration::from_millis(500)))
        .backend(Backend::Links(vec![Box::new(la) as Box<dyn Link>]))
        .start()
        .unwrap();
    let err = client.connect(b).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            std::io::ErrorKind::HostUnreachable | std::io::ErrorKind::TimedOut
        ),
        "{err}"
    );
}

/// Issue 11, the receiver that printed only "listening": a connection the
/// receiving runtime accepted ends within the idle timeout whatever happened to
/// the client, even when the path is cut the moment it is accepted (the
/// client may never have heard the Accept: its handshake is half-open). The
/// receiving application's read returns the timeout: pmdt-recv then reports
/// the flow as failed, it cannot wait for ever on an accepted connection.
#[test]
fn an_accepted_connection_cut_at_once_fails_the_readers_read() {
    let a: SocketAddr = "10.0.0.1:1000".parse().unwrap();
    let b: SocketAddr = "10.0.0.2:2000".parse().unwrap();
    let (la, lb) = MemoryLink::pair(a, b, 8192);
    let cable = la.cable();
    let t = transport().with_idle_timeout(Duration::from_millis(800));
    let server = RuntimeBuilder::default()
        .transport(t.clone())
        .shutdown_timeout(Duration::ZERO)
        .backend(Backend::Links(vec![Box::new(lb) as Box<dyn Link>]))
        .start()
        .unwrap();
    let l = server.listen(0).unwrap();
    let (done, done_rx) = std::sync::mpsc::channel::<()>();
    let connecting = thread::spawn(move || {
        let client = RuntimeBuilder::default()
            .transport(t)
            .shutdown_timeout(Duration::ZERO)
            .backend(Backend::Links(vec![Box::new(la) as Box<dyn Link>]))
            .start()
            .unwrap();
        let stream = client.connect(b);
        // Nothing from this side (no finish, no close) until the server's read
        // returned.
        let _ = done_rx.recv();
        drop(stream);
    });
    let mut accepted = l.accept().unwrap();
    // The path goes away before any data (the Accept may still be in flight).
    cable.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut buf = [0u8; 64];
    let err = accepted.read(&mut buf).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::TimedOut, "{err}");
    assert_eq!(accepted.close_reason(), Some(CloseReason::TimedOut));
    // The client either connected and then lost the path, or never heard the
    // Accept: either way its connect returned.
    drop(done);
    connecting.join().unwrap();
}

/// Issue 11, the one sequence that leaves pmdt-recv printing only "listening"
/// while a sender tried to reach it: a handshake that arrives after the
/// receiving runtime started (its link is up: it receives and answers) but
/// before the application called `listen` is refused. The sender fails at once
/// ("refused") and exits; the receiver then listens for a connection that
/// never comes. pmdt-recv calls `listen` right after `start`, so this needs a
/// retried Init to land in that window (a busy machine descheduling the
/// receiver's main thread between the two calls).
#[test]
fn a_handshake_before_listen_is_refused_and_never_accepted() {
    let (c, s, to) = memory_pair(None);
    let err = c.connect(to).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::ConnectionRefused, "{err}");
    let l = s.listen(0).unwrap();
    let err = l.accept_timeout(Duration::from_millis(300)).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::TimedOut, "{err}");
    assert_eq!(s.stats().loops[0].endpoint.refused, 1);
}

/// The fix pmdt-recv uses: a runtime built with `listen_from_start` accepts a
/// handshake that arrives before `listen` is called (kept in the backlog), and
/// `listen` hands that connection out.
#[test]
fn listening_from_the_start_accepts_a_handshake_before_listen() {
    let a: SocketAddr = "10.0.0.1:1000".parse().unwrap();
    let b: SocketAddr = "10.0.0.2:2000".parse().unwrap();
    let (la, lb) = MemoryLink::pair(a, b, 8192);
    let c = Runtime::builder()
        .transport(transport())
        .backend(Backend::Links(vec![Box::new(la) as Box<dyn Link>]))
        .start()
        .unwrap();
    let s = Runtime::builder()
        .transport(transport())
        .backend(Backend::Links(vec![Box::new(lb) as Box<dyn Link>]))
        .listen_from_start()
        .start()
        .unwrap();
    // Connected before the server's application called `listen`.
    let mut out = c.connect(b).unwrap();
    out.write_all(b"early").unwrap();
    out.finish();
    let l = s.listen(0).unwrap();
    let mut got = Vec::new();
    let mut accepted = l.accept().unwrap();
    accepted.read_to_end(&mut got).unwrap();
    assert_eq!(got, b"early");
    accepted.close().unwrap();
    out.close().unwrap();
    assert_eq!(s.stats().loops[0].endpoint.refused, 0);
    // One listener per runtime still.
    let again = s.listen(0).err().unwrap();
    assert_eq!(again.kind(), std::io::ErrorKind::AddrInUse);
}

#[test]
fn listening_on_another_port_is_a_clear_error() {
    let (_c, s, _) = memory_pair(None);
    let err = s.listen(1234).err().unwrap();
    assert!(err.to_string().contains("bound to port 2000"), "{err}");
}

#[test]
fn pcap_capture_is_readable_and_holds_ip_udp_datagrams() {
    use pcap_file::pcap::PcapReader;
    let dir = std::env::temp_dir().join(format!("pmdt-pcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("client.pcap");
    let a: SocketAddr = "10.0.0.1:1000".parse().unwrap();
    let b: SocketAddr = "10.0.0.2:2000".parse().unwrap();
    let (la, lb) = MemoryLink::pair(a, b, 8192);
    let client = Runtime::builder()
        .transport(transport())
        .pcap(&path)
        .backend(Backend::Links(vec![Box::new(la) as Box<dyn Link>]))
        .start()
        .unwrap();
    let server = Runtime::builder()
        .transport(transport())
        .backend(Backend::Links(vec![Box::new(lb) as Box<dyn Link>]))
        .start()
        .unwrap();
    transfer(&client, &server, b, vec![data(100_000, 6)], 7001);
    client.shutdown().unwrap(); // flushes the capture
    let mut r = PcapReader::new(std::fs::File::open(&path).unwrap()).unwrap();
    assert_eq!(r.header().datalink, pcap_file::DataLink::RAW);
    let (mut out, mut inb) = (0, 0);
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        let s = etherparse::SlicedPacket::from_ip(&p.data).expect("an IP packet");
        let Some(etherparse::TransportSlice::Udp(u)) = s.transport else {
            panic!("UDP expected");
        };
        match (u.source_port(), u.destination_port()) {
            (1000, 2000) => out += 1,
            (2000, 1000) => inb += 1,
            other => panic!("unexpected ports {other:?}"),
        }
        // The payload is a pmdt datagram.
        assert!(pmdt::wire::decode(u.payload()).is_ok());
    }
    assert!(out > 70 && inb > 0, "sent {out}, received {inb}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A connection that arrives after others joined the receiver's loop gets
/// credit from its share of the receive memory in its handshake, although the
/// others' grants take the whole of it until it joins (they come down when
/// it does). Its handshake offered one datagram before: its first flight
/// waited a round trip for the join, and beside three others it left Startup
/// at half their rate. (The receiver here has memory beyond the credit the
/// others gave, 8 MiB each, as pmdt-recv's pool has; where their credit
/// takes it all, the newcomer still starts with one datagram.)
#[test]
fn a_connection_that_arrives_after_others_gets_credit_in_its_handshake() {
    let delay = Duration::from_millis(20);
    let a: SocketAddr = "10.0.0.1:1000".parse().unwrap();
    let to: SocketAddr = "10.0.0.2:2000".parse().unwrap();
    let (la, lb) = MemoryLink::pair_with_pool(a, to, 8192, 256 * 1024);
    let start = |l: MemoryLink, seed: u64| {
        Runtime::builder()
            .transport(transport())
            .backend(Backend::Links(vec![Box::new(l) as Box<dyn Link>]))
            .impair(ImpairConfig::default().with_delay(delay).with_seed(seed))
            .start()
            .unwrap()
    };
    let (c, s) = (start(la, 1), start(lb, 2));
    let listener = s.listen(0).unwrap();
    // Three connections the receiver's application accepted: members of
    // its loop, with the memory granted among them.
    let first: Vec<_> = (0..3).map(|_| c.connect(to).unwrap()).collect();
    let accepted: Vec<_> = (0..3).map(|_| listener.accept().unwrap()).collect();
    let mut late = c.connect(to).unwrap();
    let reader = thread::spawn(move || {
        let mut st = listener.accept().unwrap();
        let mut v = Vec::new();
        st.read_to_end(&mut v).unwrap();
        v
    });
    // Three datagrams' worth: the first flights need no more credit than the
    // handshake gave.
    let payload = data(4000, 5);
    late.write_all(&payload).unwrap();
    late.close().unwrap();
    assert_eq!(reader.join().unwrap(), payload);
    let blocked = late.stats().blocked_credit_us;
    assert!(
        blocked < (2 * delay).as_micros() as u64 / 2,
        "waited {blocked} µs for credit"
    );
    drop((first, accepted));
}
