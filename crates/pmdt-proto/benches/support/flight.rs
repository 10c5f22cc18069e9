//! Two endpoints past their handshake and a flight of data packets from the
//! client, for the benchmarks that time one side's handling of the other's
//! packets with a large flight (no I/O, one instant).

// Each bench compiles this module on its own and uses a part of it.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use pmdt_proto::{CongestionKind, ConnectionHandle, Endpoint, EndpointConfig, TransportConfig};

/// The datagram size (payload 1,443 bytes of stream).
const PAYLOAD_DGRAM: u16 = 1472;

/// A connected client and server.
pub struct Pair {
    /// The instant everything happens at.
    pub now: Instant,
    /// The sending side.
    pub client: Endpoint,
    /// The receiving side.
    pub server: Endpoint,
    /// The client's address.
    pub ca: SocketAddr,
    /// The server's address.
    pub sa: SocketAddr,
    /// The client's connection.
    pub ch: ConnectionHandle,
    /// The server's connection.
    pub sh: ConnectionHandle,
}

/// A configuration whose window and buffers hold `in_flight` packets twice over.
pub fn config(in_flight: usize) -> TransportConfig {
    TransportConfig::default()
        .with_max_datagram(PAYLOAD_DGRAM)
        .with_congestion(CongestionKind::Fixed {
            window_packets: 2 * in_flight as u64,
        })
        .with_window_packets(2 * in_flight as u64)
        .with_send_buffer(512 << 20)
        .with_recv_buffer(512 << 20)
        .with_max_window_bytes(512 << 20)
        .with_pacing(false)
        .with_ack_every(2)
        .with_keepalive(None)
        .with_idle_timeout(Duration::from_secs(3600))
}

/// Two endpoints configured for `in_flight` packets, past the handshake.
pub fn connected(in_flight: usize) -> Pair {
    connected_with(config(in_flight))
}

/// Two endpoints with transport configuration `t`, past the handshake (Init,
/// Retry, Init with the cookie, Accept).
pub fn connected_with(t: TransportConfig) -> Pair {
    let now = Instant::now();
    let endpoint = |accept: bool, seed: u64| {
        Endpoint::new(
            EndpointConfig::default()
                .with_transport(t.clone())
                .with_accept(accept)
                .with_seed(Some(seed)),
            now,
        )
        .unwrap()
    };
    let mut client = endpoint(false, 1);
    let mut server = endpoint(true, 2);
    let ca: SocketAddr = "10.0.0.1:1".parse().unwrap();
    let sa: SocketAddr = "10.0.0.2:2".parse().unwrap();
    let ch = client.connect(now, sa);
    let mut b = vec![0u8; 2048];
    let mut sh = None;
    for _ in 0..8 {
        while let Some(t) = client.poll_transmit(now, &mut b) {
            server.handle(now, ca, &b[..t.transmit().len]);
        }
        while let Some(t) = server.poll_transmit(now, &mut b) {
            client.handle(now, sa, &b[..t.transmit().len]);
        }
        if let Some(x) = server.accept() {
            sh = Some(x);
        }
    }
    Pair {
        now,
        client,
        server,
        ca,
        sa,
        ch,
        sh: sh.expect("handshake"),
    }
}

impl Pair {
    /// The client's next `n` data packets, none delivered.
    pub fn flight(&mut self, n: usize) -> Vec<Vec<u8>> {
        let data = vec![0x5a; 1 << 20];
        let mut b = vec![0u8; 2048];
        let mut packets = Vec::with_capacity(n);
        while packets.len() < n {
            // As much as the connection takes (its unsent bound refills as it sends).
            while self.client.connection(self.ch).unwrap().send_capacity() > data.len() as u64
                && self
                    .client
                    .connection_mut(self.ch)
                    .unwrap()
                    .write(&data)
                    .is_ok()
            {}
            match self.client.poll_transmit(self.now, &mut b) {
                Some(t) => packets.push(b[..t.transmit().len].to_vec()),
                None => panic!("the window stopped the flight at {}", packets.len()),
            }
        }
        packets
    }
}
