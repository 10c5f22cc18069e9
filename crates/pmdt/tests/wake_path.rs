//! The wake path: a quiet I/O loop over a kernel UDP socket parks in `poll(2)`
//! until a datagram, an application request or its next timer (instead of
//! napping every 100 µs), and whatever comes while it is parked wakes it:
//! a connection request from the application, data written, a datagram from
//! the peer, a read that frees room, the runtime's shutdown. The tests wait
//! until both loops have parked before each step, so every step starts from a
//! parked loop; they assert what arrived and that the loops parked, never how
//! long anything took.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use pmdt::link::udp::UdpLinkConfig;
use pmdt::runtime::{Backend, IoCore, Runtime};
use pmdt::TransportConfig;

/// Far beyond what any step needs on a loaded machine.
const HUNG: Duration = Duration::from_secs(120);

fn runtime() -> Runtime {
    runtime_on(IoCore::Thread { cpu: None })
}

fn runtime_on(core: IoCore) -> Runtime {
    Runtime::builder()
        .io_core(core)
        .transport(TransportConfig::default().with_idle_timeout(Duration::from_secs(60)))
        .backend(Backend::Udp(UdpLinkConfig {
            bind: "127.0.0.1:0".parse().unwrap(),
            ..Default::default()
        }))
        .start()
        .unwrap()
}

/// The times `rt`'s loop has parked so far.
fn parks(rt: &Runtime) -> u64 {
    rt.stats().loops.iter().map(|l| l.idle_parks).sum()
}

/// Waits until each runtime's loop has parked again since `since` (its count
/// then), that is, it is quiet and asleep or about to be.
fn until_parked(rts: &[&Runtime], since: &[u64]) -> Vec<u64> {
    let start = Instant::now();
    loop {
        let now: Vec<u64> = rts.iter().map(|r| parks(r)).collect();
        if now.iter().zip(since).all(|(n, s)| n > s) {
            return now;
        }
        assert!(start.elapsed() < HUNG, "a quiet loop never parked: {now:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_parked_loop_wakes_for_connections_data_and_shutdown() {
    let server = runtime();
    let client = runtime();
    let listener = server.listen(0).unwrap();
    let mut seen = until_parked(&[&server, &client], &[0, 0]);

    // A connection request to a parked client loop, whose Init reaches a parked
    // server loop.
    let mut c = client.connect(server.local_addr()).unwrap();
    let mut s = listener.accept().unwrap();

    // Ten exchanges, each starting with both loops parked: the client's write
    // wakes its loop, the datagram wakes the server's, the server's reply
    // wakes the client's.
    let mut buf = [0u8; 64];
    for i in 0..10u8 {
        seen = until_parked(&[&server, &client], &seen);
        let msg = [i; 64];
        c.write_all(&msg).unwrap();
        s.read_exact(&mut buf).unwrap();
        assert_eq!(buf, msg);
        s.write_all(&buf).unwrap();
        c.read_exact(&mut buf).unwrap();
        assert_eq!(buf, msg, "exchange {i}");
    }

    seen = until_parked(&[&server, &client], &seen);
    // The server drops its stream (finishing its side) and the client closes:
    // each side's last datagrams wake the other's parked loop.
    drop(s);
    c.close().unwrap();
    until_parked(&[&server, &client], &seen);
    // Shutdown requests reach parked loops.
    client.shutdown().unwrap();
    server.shutdown().unwrap();
}

/// Run to completion (the tools' default for one core per side): the loop
/// has no thread; a thread blocked in `accept` or `read` parks in its steps,
/// and the peer's datagrams wake it.
#[test]
fn a_thread_waiting_in_run_to_completion_parks_until_the_peer_sends() {
    let server = runtime_on(IoCore::Caller { cpu: None });
    let client = runtime();
    let listener = server.listen(0).unwrap();
    let echo = std::thread::spawn(move || {
        let mut s = listener.accept().unwrap();
        let mut buf = [0u8; 1000];
        s.read_exact(&mut buf).unwrap();
        s.write_all(&buf).unwrap();
        s.read(&mut buf).unwrap()
    });
    // The echo thread waits in `accept`: the loop's steps park.
    let seen = until_parked(&[&server, &client], &[0, 0]);
    let mut c = client.connect(server.local_addr()).unwrap();
    // Now it waits in `read_exact`.
    until_parked(&[&server, &client], &seen);
    let msg = [5u8; 1000];
    c.write_all(&msg).unwrap();
    let mut back = [0u8; 1000];
    c.read_exact(&mut back).unwrap();
    assert_eq!(back, msg);
    c.finish();
    assert_eq!(echo.join().unwrap(), 0, "end of stream");
    drop(c);
    server.shutdown().unwrap();
    client.shutdown().unwrap();
}

#[test]
fn a_loop_over_a_link_without_a_descriptor_naps_instead() {
    use pmdt::link::memory::MemoryLink;
    use pmdt::link::Link;
    let a = "10.0.0.1:1000".parse().unwrap();
    let b = "10.0.0.2:2000".parse().unwrap();
    let (la, _lb) = MemoryLink::pair(a, b, 64);
    let rt = Runtime::builder()
        .backend(Backend::Links(vec![Box::new(la) as Box<dyn Link>]))
        .start()
        .unwrap();
    let start = Instant::now();
    while rt.stats().loops[0].idle_sleeps < 100 {
        assert!(start.elapsed() < HUNG, "the quiet loop never slept");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(rt.stats().loops[0].idle_parks, 0);
    rt.shutdown().unwrap();
}
