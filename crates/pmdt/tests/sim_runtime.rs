//! The runtime that ships in the deterministic simulator: each node is a
//! [`pmdt::runtime::Session`] (the I/O loop with its packet-buffer storage,
//! `poll_transmit_header`, the rings, doorbell and flags between loop and
//! streams) over a simulated port, on a virtual clock; applications use the real
//! streams without blocking. Every byte is verified and every packet buffer must
//! be back in its pool at the end.

use std::time::Duration;

use pmdt::sim::{run_flows, Connects, FlowsReport, FlowsScenario, ImpairConfig, ReadersStart};
use pmdt::{CongestionKind, TransportConfig};

fn transport(cc: CongestionKind) -> TransportConfig {
    TransportConfig::default()
        .with_initial_rtt(Duration::from_millis(5))
        .with_idle_timeout(Duration::from_secs(5))
        .with_send_buffer(2 << 20)
        .with_recv_buffer(2 << 20)
        .with_congestion(cc)
}

fn summary(r: &FlowsReport) -> String {
    format!(
        "elapsed {:?}\nserver {:?}\n{:?}\nclient {:?}\n{:?}\nflows {:#?}",
        r.elapsed, r.server.link, r.server.endpoint, r.client.link, r.client.endpoint, r.flows
    )
}

#[test]
fn one_flow_arrives_intact_and_every_buffer_returns() {
    let r = run_flows(&FlowsScenario {
        transport: transport(CongestionKind::Bbr),
        bytes_per_flow: 3_000_000,
        ..Default::default()
    })
    .unwrap();
    assert!(r.ok(), "{}", summary(&r));
    assert_eq!(r.busy_overflows, 0, "a loop stayed busy at one instant");
}

/// The open bug of issue 11: 16 flows through a 4,095-buffer pool, each
/// connection opened once the previous one is established and writing at once,
/// the receiving application accepting all 16 before it reads any (300 ms
/// later). Each connection got an equal share of the receive memory when it
/// arrived and kept the credit it had been granted, so the first ones committed
/// the whole pool between them; the pool ran dry, the receiver dropped every
/// later datagram (handshakes included: 14 of 16 accepted, `retries_sent`
/// repeated), and connections died half-open: established at the sender,
/// forgotten by the receiver (`unknown_connection`), timed out. With BBR and
/// NewReno alike.
#[test]
fn sixteen_flows_through_a_small_pool_with_late_readers() {
    for cc in [CongestionKind::Bbr, CongestionKind::NewReno] {
        let r = run_flows(&FlowsScenario {
            transport: transport(cc),
            flows: 16,
            bytes_per_flow: 1_500_000,
            server_buffers: 4095,
            client_buffers: 4095,
            connects: Connects::OneAfterAnother,
            readers: ReadersStart::AfterAllAccepted(Duration::from_millis(300)),
            ..Default::default()
        })
        .unwrap();
        assert!(r.ok(), "{cc:?}: {}", summary(&r));
        assert_eq!(r.server.link.rx_no_buffer, 0, "{cc:?}: {}", summary(&r));
        assert_eq!(r.client.link.rx_no_buffer, 0, "{cc:?}: {}", summary(&r));
    }
}

/// Found by the reliability sweep (seeds 2988 and 6968): with a 1,023-buffer
/// pool, a connection short of receive memory (its grant near zero while the
/// first one holds the rest for a reader that has not started) still had its
/// data handed to its reader's ring up to 64 KiB ahead, each delivery
/// extending its credit by another datagram: 15 such connections pinned more
/// buffers than the pool had, the receiver dropped every later datagram and
/// handshake, and connections timed out. Delivery now runs ahead of the reader
/// by at most half the grant (at least two datagrams).
#[test]
fn connections_short_of_memory_do_not_drain_a_small_pool() {
    for write_size in [19, 4096] {
        let r = run_flows(&FlowsScenario {
            transport: transport(CongestionKind::NewReno),
            flows: 16,
            bytes_per_flow: 50_000,
            write_size,
            server_buffers: 1023,
            client_buffers: 1023,
            connects: Connects::OneAfterAnother,
            readers: ReadersStart::AfterAllAccepted(Duration::from_millis(100)),
            ..Default::default()
        })
        .unwrap();
        assert!(r.ok(), "writes of {write_size}: {}", summary(&r));
        assert_eq!(
            r.server.link.rx_no_buffer,
            0,
            "writes of {write_size}: {}",
            summary(&r)
        );
    }
}

/// A sender whose datagrams are smaller than the receiver's (`pmdt-send
/// --payload 1064` into a default `pmdt-recv`, as the seed000 experiment runs):
/// the receiver counted its credit in its own datagrams, so the credit it gave
/// arrived in more datagrams than the packet buffers it had kept for them, and
/// it refused the rest unacknowledged (64 flows over memif: 20,582-50,735 of
/// them in 6 runs, each sent again). Credit now comes in the peer's datagrams,
/// told in the handshake, and pays for as many buffers as it commits. The other
/// way round (the receiver's datagrams smaller), the sender's writers filled
/// buffers of its own size, each leaving as a full datagram and a runt that
/// pinned a buffer of its own at the receiver; writers now fill buffers of the
/// connection's datagram (checked below: no datagram but the last of a flow
/// short). Here, readers starting 100 ms late, the receiver refused 448
/// datagrams before in the first case.
#[test]
fn peers_of_different_datagram_sizes_are_not_refused_within_credit() {
    let default = TransportConfig::default().max_datagram;
    for (client, server) in [(1064, default), (default, 1064)] {
        let r = run_flows(&FlowsScenario {
            transport: transport(CongestionKind::Bbr).with_max_datagram(server),
            client_max_datagram: Some(client),
            flows: 32,
            bytes_per_flow: 1_000_000,
            server_buffers: 1023,
            readers: ReadersStart::AfterAllAccepted(Duration::from_millis(100)),
            ..Default::default()
        })
        .unwrap();
        let case = format!("client {client}, server {server}");
        assert!(r.ok(), "{case}: {}", summary(&r));
        assert_eq!(r.flows.len(), 32);
        let refused: u64 = r.flows.iter().map(|f| f.server_refused).sum();
        assert_eq!(refused, 0, "{case}: {}", summary(&r));
        assert_eq!(r.server.link.rx_no_buffer, 0, "{case}: {}", summary(&r));
        // Every datagram a full one (1,000,000 bytes and the flow tag each: at
        // most one short datagram per flow).
        let payload = u64::from(client.min(server)) - 40;
        let data = r.server.link.rx_datagrams;
        let least = 32 * (1_000_008u64).div_ceil(payload);
        assert!(
            data < least + least / 10,
            "{case}: {data} datagrams for {least} full ones"
        );
    }
}

/// Readers slower than the link (an application whose reader threads share a
/// core) keep the receive memory short for the whole transfer: every flow still
/// arrives intact, no datagram finds the pool empty or is refused inside the
/// credit, and the flows finish close together (memory that frees is split
/// among the connections short of it).
#[test]
fn readers_slower_than_the_link_share_the_receive_memory() {
    let r = run_flows(&FlowsScenario {
        transport: transport(CongestionKind::Bbr),
        flows: 32,
        bytes_per_flow: 500_000,
        server_buffers: 1023,
        forward: ImpairConfig::default()
            .with_delay(Duration::from_micros(200))
            .with_rate_bps(Some(1_000_000_000)),
        read_rate: Some(20_000_000),
        ..Default::default()
    })
    .unwrap();
    assert!(r.ok(), "{}", summary(&r));
    assert_eq!(r.server.link.rx_no_buffer, 0, "{}", summary(&r));
    let t: Vec<f64> = r
        .flows
        .iter()
        .map(|f| f.completed_at.expect("complete").as_secs_f64())
        .collect();
    let last = t.iter().fold(0f64, |a, &x| a.max(x));
    // Credit short of a datagram's chunk waits for more: a chunk cut at every
    // credit edge arrived as two pieces, each pinning a buffer, and the
    // receiver refused 9,576 datagrams inside the credit it gave.
    let refused: u64 = r.flows.iter().map(|f| f.server_refused).sum();
    assert_eq!(refused, 0, "{}", summary(&r));
    // 16 MB read at 20 MB/s: 0.8 s at best.
    assert!(last < 1.2, "last flow done at {last:.2} s");
}

/// A close returns once every byte either way is acknowledged, not at the end
/// of the connection's closing period. Through a 100 ms one-way path the
/// client's close returns when the server's finish arrives, one one-way delay
/// after the server read the end of stream and closed. It returned when the
/// connection ended: on the server's Close, two one-way delays later, or after
/// the whole closing period (three probe timeouts) when that Close was lost;
/// `pmdt-send`'s transfers at 200 ms RTT each took 0.2-0.6 s longer.
#[test]
fn a_close_returns_once_everything_is_acknowledged() {
    let d = Duration::from_millis(100);
    let path = ImpairConfig::default().with_delay(d);
    let r = run_flows(&FlowsScenario {
        transport: transport(CongestionKind::Bbr).with_initial_rtt(2 * d),
        bytes_per_flow: 1_000_000,
        forward: path.clone(),
        reverse: path,
        ..Default::default()
    })
    .unwrap();
    assert!(r.ok(), "{}", summary(&r));
    let f = &r.flows[0];
    let read_end = f.completed_at.expect("the server read the end of stream");
    let closed = f.client_closed_at.expect("the client's close returned");
    assert!(
        closed <= read_end + d + d / 2,
        "the client's close returned {:?} after the server read the end of stream \
         (the server's finish takes {d:?} to arrive)",
        closed - read_end
    );
}
