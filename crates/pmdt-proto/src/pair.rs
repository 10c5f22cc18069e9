//! Two endpoints on a virtual clock, joined by a fixed-delay path whose datagrams a
//! filter may drop, inspect or hold: the harness tests, fuzz targets and
//! experiments share (in the spirit of quinn-proto's `Pair`). Deterministic: the
//! same calls give the same run.
//!
//! ```
//! use pmdt_proto::pair::Pair;
//! use pmdt_proto::TransportConfig;
//!
//! let mut p = Pair::connected(TransportConfig::default());
//! let written = p.client_write(b"hello");
//! assert_eq!(written, 5);
//! p.drive_for(std::time::Duration::from_millis(50));
//! assert_eq!(p.server_read_all(), b"hello");
//! ```

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::config::{EndpointConfig, TransportConfig};
use crate::endpoint::{ConnectionHandle, ConnectionMut, Endpoint};
use crate::recv_buffer::RecvRing;
use crate::send_buffer::ByteRing;
use crate::wire::{self, Body, Header, Packet};

/// Which way a datagram travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From the client to the server.
    ToServer,
    /// From the server to the client.
    ToClient,
}

/// What the filter does with a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Deliver it after the path's delay.
    Deliver,
    /// Drop it.
    Drop,
    /// Deliver it after the path's delay and this much more (a queue in
    /// front of a bottleneck; a filter spacing datagrams out emulates its rate).
    Hold(Duration),
}

/// Decides each datagram's fate from the time it is sent, its direction and its
/// bytes.
pub type Filter = Box<dyn FnMut(Instant, Direction, &[u8]) -> Verdict + Send>;

/// The client's and the server's address.
pub const CLIENT_ADDR: &str = "10.11.0.1:1000";
/// The server's address.
pub const SERVER_ADDR: &str = "10.11.0.2:2000";

/// The pair (see the module documentation).
pub struct Pair {
    /// Virtual time now.
    pub now: Instant,
    /// The client endpoint (opened the connection).
    pub client: Endpoint,
    /// The server endpoint (accepts).
    pub server: Endpoint,
    /// The client's connection, once opened.
    pub client_conn: Option<ConnectionHandle>,
    /// The server's connection, once accepted.
    pub server_conn: Option<ConnectionHandle>,
    /// The client's address.
    pub client_addr: SocketAddr,
    /// The server's address.
    pub server_addr: SocketAddr,
    /// One-way delay of the path.
    pub delay: Duration,
    in_flight: VecDeque<(Instant, Direction, Vec<u8>)>,
    filter: Option<Filter>,
    buf: Vec<u8>,
}

impl Pair {
    /// Two endpoints (the server accepting), nothing connected yet, a 5 ms path.
    pub fn new(client: TransportConfig, server: TransportConfig) -> Self {
        let now = Instant::now();
        let buf_len = client.max_datagram.max(server.max_datagram) as usize;
        let client = Endpoint::new(
            EndpointConfig {
                transport: client,
                seed: Some(1),
                ..Default::default()
            },
            now,
        )
        .expect("a valid client configuration");
        let server = Endpoint::new(
            EndpointConfig {
                transport: server,
                seed: Some(2),
                accept: true,
                ..Default::default()
            },
            now,
        )
        .expect("a valid server configuration");
        Self {
            now,
            client,
            server,
            client_conn: None,
            server_conn: None,
            client_addr: CLIENT_ADDR.parse().expect("address"),
            server_addr: SERVER_ADDR.parse().expect("address"),
            delay: Duration::from_millis(5),
            in_flight: VecDeque::new(),
            filter: None,
            buf: vec![0; buf_len],
        }
    }

    /// A pair whose handshake completed (both sides configured alike), its first
    /// acknowledgements exchanged.
    pub fn connected(cfg: TransportConfig) -> Self {
        let mut p = Self::new(cfg.clone(), cfg);
        p.connect();
        p
    }

    /// Opens the client's connection and drives until the server accepted it and
    /// both are established (panics after 10 s of virtual time without).
    pub fn connect(&mut self) -> (ConnectionHandle, ConnectionHandle) {
        let ch = self.client.connect(self.now, self.server_addr);
        self.client_conn = Some(ch);
        let limit = self.now + Duration::from_secs(10);
        while self.server_conn.is_none() && self.step(limit) {
            self.server_conn = self.server.accept();
        }
        let sh = self.server_conn.expect("the handshake completed");
        self.drive_until(limit, |p| {
            p.client.connection(ch).is_some_and(|c| c.is_established())
        });
        // Let the handshake settle (the client's first ack, if any).
        self.drive_for(Duration::from_millis(20));
        (ch, sh)
    }

    /// Decides the fate of every datagram sent from now on.
    pub fn set_filter(&mut self, f: Filter) {
        self.filter = Some(f);
    }

    /// Removes the filter: everything is delivered.
    pub fn clear_filter(&mut self) {
        self.filter = None;
    }

    /// The client's connection (rescheduled when the guard drops).
    pub fn client_connection(&mut self) -> ConnectionMut<'_, ByteRing, RecvRing> {
        let h = self.client_conn.expect("connected");
        self.client.connection_mut(h).expect("live")
    }

    /// The server's connection (rescheduled when the guard drops).
    pub fn server_connection(&mut self) -> ConnectionMut<'_, ByteRing, RecvRing> {
        let h = self.server_conn.expect("accepted");
        self.server.connection_mut(h).expect("live")
    }

    /// Puts on the path everything both sides want to send now (through the
    /// filter).
    pub fn flush(&mut self) {
        for dir in [Direction::ToServer, Direction::ToClient] {
            loop {
                let ep = match dir {
                    Direction::ToServer => &mut self.client,
                    Direction::ToClient => &mut self.server,
                };
                let Some(t) = ep.poll_transmit(self.now, &mut self.buf) else {
                    break;
                };
                let n = t.transmit().len;
                let d = self.buf[..n].to_vec();
                let verdict = match self.filter.as_mut() {
                    Some(f) => f(self.now, dir, &d),
                    None => Verdict::Deliver,
                };
                let at = match verdict {
                    Verdict::Deliver => self.now + self.delay,
                    Verdict::Hold(more) => self.now + self.delay + more,
                    Verdict::Drop => continue,
                };
                // In order of delivery (a held datagram lets later ones pass).
                let i = self.in_flight.partition_point(|q| q.0 <= at);
                self.in_flight.insert(i, (at, dir, d));
            }
        }
    }

    /// Hands `d` to the server (`ToServer`) or the client at once, as if it came
    /// from the other side's address.
    pub fn inject(&mut self, dir: Direction, d: &[u8]) {
        match dir {
            Direction::ToServer => self.server.handle(self.now, self.client_addr, d),
            Direction::ToClient => self.client.handle(self.now, self.server_addr, d),
        }
    }

    /// Datagrams on the path now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// One event (a delivery or a timer), not beyond `limit`; false when nothing
    /// is left to do before it (time then moves to `limit`).
    pub fn step(&mut self, limit: Instant) -> bool {
        self.flush();
        let next = [
            self.in_flight.front().map(|q| q.0),
            self.client.poll_timeout(),
            self.server.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(t) = next.filter(|t| *t <= limit) else {
            self.now = self.now.max(limit);
            return false;
        };
        self.now = self.now.max(t);
        while self.in_flight.front().is_some_and(|q| q.0 <= self.now) {
            let (_, dir, d) = self.in_flight.pop_front().expect("checked");
            self.inject(dir, &d);
        }
        self.client.handle_timeout(self.now);
        self.server.handle_timeout(self.now);
        self.flush();
        true
    }

    /// Runs for `d` of virtual time.
    pub fn drive_for(&mut self, d: Duration) {
        let limit = self.now + d;
        while self.step(limit) {}
    }

    /// Runs until `done` holds (checked after each step) or `limit`; returns
    /// whether it held.
    pub fn drive_until(&mut self, limit: Instant, mut done: impl FnMut(&mut Self) -> bool) -> bool {
        loop {
            if done(self) {
                return true;
            }
            if !self.step(limit) {
                return done(self);
            }
        }
    }

    /// Writes as much of `data` as the client's connection takes; returns how
    /// much.
    pub fn client_write(&mut self, data: &[u8]) -> usize {
        self.client_connection().write(data).unwrap_or(0)
    }

    /// Reads everything readable on the server's connection.
    pub fn server_read_all(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = self.server_connection().read(&mut buf);
            if n == 0 {
                return out;
            }
            out.extend_from_slice(&buf[..n]);
        }
    }

    /// A datagram as the client would send it to the server's connection (its
    /// connection id, packet number `pn`).
    pub fn client_packet(&mut self, pn: u64, body: Body<'_>) -> Vec<u8> {
        let dst_cid = self.server_connection().local_cid();
        encode(dst_cid, pn, body)
    }

    /// A datagram as the server would send it to the client's connection.
    pub fn server_packet(&mut self, pn: u64, body: Body<'_>) -> Vec<u8> {
        let dst_cid = self.client_connection().local_cid();
        encode(dst_cid, pn, body)
    }
}

fn encode(dst_cid: u64, pn: u64, body: Body<'_>) -> Vec<u8> {
    let mut b = vec![0u8; 1 << 16];
    let n = wire::encode(
        &mut b,
        &Packet {
            header: Header {
                dst_cid,
                pn: pn.into(),
                timestamp: 1,
                timestamp_echo: 0,
            },
            body,
        },
    )
    .expect("the datagram fits");
    b.truncate(n);
    b
}
