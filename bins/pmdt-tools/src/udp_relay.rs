//! `pmdt-wanem --udp-listen ADDR --udp-to ADDR`: the emulator over kernel UDP
//! sockets, no DPDK. The client (a `pmdt-send --backend udp`) sends to the listen
//! address; each datagram goes through the A→B impairment model and on to the
//! target from a socket of the relay's own; the target's answers come back through
//! the B→A model (or untouched with `--one-way`) to the client that spoke last.
//! On one host this gives every receiver of a `pmdt-send --multi` its own path.
//!
//! Same model, same counters as the DPDK mode ([`crate::wan_path`]); held datagrams
//! are bounded ([`MAX_HELD`]) so memory stays bounded when the delay is long and the
//! rate unlimited.

use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::time::Instant;

use pmdt::link::delay_line::DelayLine;
use pmdt::link::impair_model::{ImpairConfigError, ImpairModel};

use crate::wan_path::PathStats;

/// Datagrams one direction may hold (delayed) at once; beyond it, arrivals are
/// dropped and counted as `tx_full` (a 64 K-frame mempool bounds the DPDK mode).
pub const MAX_HELD: usize = 65_536;

/// Datagrams read from one socket per pass (so one direction cannot starve the
/// other).
const BURST: usize = 64;

/// The largest UDP payload.
const MAX_DATAGRAM: usize = 65_536;

/// One direction: ingress socket → model → egress socket.
struct Direction {
    model: Option<ImpairModel>,
    held: DelayLine<Vec<u8>>,
    /// Buffers of datagrams already sent, reused for the next ones.
    spare: Vec<Vec<u8>>,
    stats: PathStats,
}

impl Direction {
    fn new(model: Option<ImpairModel>) -> Self {
        Self {
            model,
            held: DelayLine::default(),
            spare: Vec::new(),
            stats: PathStats::default(),
        }
    }

    /// A buffer holding `data`, from the spares when there is one.
    fn buffer(&mut self, data: &[u8]) -> Vec<u8> {
        let mut b = self.spare.pop().unwrap_or_default();
        b.clear();
        b.extend_from_slice(data);
        b
    }

    /// Takes one datagram that arrived at `now`: forwards it at once through
    /// `out` to `to` when the model lets it pass undelayed, else holds it.
    fn take(&mut self, now: Instant, data: &[u8], out: &UdpSocket, to: Option<SocketAddr>) {
        self.stats.received += 1;
        let fate = match &mut self.model {
            Some(model) => model.decide(now, data.len()),
            None => {
                self.send(data, out, to);
                return;
            }
        };
        for d in fate.deliveries() {
            if d.at <= now && self.held.is_empty() && d.flip.is_none() {
                self.send(data, out, to);
                continue;
            }
            if self.held.len() >= MAX_HELD {
                self.stats.tx_full += 1;
                continue;
            }
            let mut b = self.buffer(data);
            if let Some(flip) = d.flip {
                flip.apply(&mut b);
            }
            self.held.push(d.at, b);
        }
        let Some(model) = &self.model else {
            return;
        };
        self.stats.update_from(model.stats());
    }

    fn send(&mut self, data: &[u8], out: &UdpSocket, to: Option<SocketAddr>) {
        let Some(to) = to else {
            // An answer before the client ever spoke: nowhere to send it.
            self.stats.tx_full += 1;
            return;
        };
        match out.send_to(data, to) {
            Ok(_) => self.stats.forwarded += 1,
            // Socket buffer full (or the peer's port closed): the frame is lost, as
            // on a full egress queue.
            Err(_) => self.stats.tx_full += 1,
        }
    }

    /// Sends the held datagrams that are due; returns how many.
    fn release(&mut self, now: Instant, out: &UdpSocket, to: Option<SocketAddr>) -> usize {
        let mut n = 0;
        while let Some(b) = self.held.pop_due(now) {
            self.send(&b, out, to);
            if self.spare.len() < BURST * 4 {
                self.spare.push(b);
            }
            n += 1;
        }
        self.stats.held = self.held.len() as u64;
        n
    }
}

/// The relay: both directions and their sockets.
pub struct UdpRelay {
    front: UdpSocket,
    back: UdpSocket,
    target: SocketAddr,
    client: Option<SocketAddr>,
    a_to_b: Direction,
    b_to_a: Direction,
    buf: Vec<u8>,
}

impl UdpRelay {
    /// Binds the listen socket on `listen` and a socket towards `target` (an
    /// ephemeral port on the unspecified address of the target's family).
    /// `a_to_b` impairs client→target, `b_to_a` target→client (None: untouched).
    pub fn bind(
        listen: SocketAddr,
        target: SocketAddr,
        a_to_b: Option<ImpairModel>,
        b_to_a: Option<ImpairModel>,
    ) -> std::io::Result<Self> {
        let front = UdpSocket::bind(listen)?;
        let back_addr: SocketAddr = if target.is_ipv4() {
            "0.0.0.0:0".parse().expect("literal")
        } else {
            "[::]:0".parse().expect("literal")
        };
        let back = UdpSocket::bind(back_addr)?;
        for s in [&front, &back] {
            s.set_nonblocking(true)?;
        }
        Ok(Self {
            front,
            back,
            target,
            client: None,
            a_to_b: Direction::new(a_to_b),
            b_to_a: Direction::new(b_to_a),
            buf: vec![0; MAX_DATAGRAM],
        })
    }

    /// The address clients send to.
    pub fn listen_addr(&self) -> std::io::Result<SocketAddr> {
        self.front.local_addr()
    }

    /// One pass over both directions; returns whether anything moved.
    pub fn poll(&mut self) -> bool {
        let mut moved = 0;
        for _ in 0..BURST {
            match self.front.recv_from(&mut self.buf) {
                Ok((n, from)) => {
                    self.client = Some(from);
                    // Delayed from when it was taken (see wan_path: a preempted
                    // loop must not make the path look shorter than set).
                    let now = Instant::now();
                    self.a_to_b
                        .take(now, &self.buf[..n], &self.back, Some(self.target));
                    moved += 1;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                // ICMP errors of earlier sends surface here: not this datagram's.
                Err(_) => continue,
            }
        }
        for _ in 0..BURST {
            match self.back.recv_from(&mut self.buf) {
                Ok((n, from)) if from == self.target => {
                    let now = Instant::now();
                    self.b_to_a
                        .take(now, &self.buf[..n], &self.front, self.client);
                    moved += 1;
                }
                Ok(_) => continue, // not from the target: ignored
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => continue,
            }
        }
        let now = Instant::now();
        moved += self.a_to_b.release(now, &self.back, Some(self.target));
        moved += self.b_to_a.release(now, &self.front, self.client);
        moved > 0
    }

    /// When the next held datagram is due.
    pub fn next_due(&self) -> Option<Instant> {
        match (self.a_to_b.held.next_due(), self.b_to_a.held.next_due()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Changes the bottleneck rate of both impaired directions from now on.
    pub fn set_rate(&mut self, rate_bps: u64) -> Result<(), ImpairConfigError> {
        for d in [&mut self.a_to_b, &mut self.b_to_a] {
            if let Some(m) = &mut d.model {
                m.set_rate(Some(rate_bps))?;
            }
        }
        Ok(())
    }

    /// Client→target counters.
    pub fn a_to_b(&self) -> &PathStats {
        &self.a_to_b.stats
    }

    /// Target→client counters.
    pub fn b_to_a(&self) -> &PathStats {
        &self.b_to_a.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmdt::link::impair_model::ImpairConfig;
    use std::time::Duration;

    fn relay(cfg: Option<ImpairConfig>) -> (UdpRelay, UdpSocket, UdpSocket) {
        let target = UdpSocket::bind("127.0.0.1:0").unwrap();
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        for s in [&target, &client] {
            s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        }
        let model = cfg.map(|c| ImpairModel::new(c).unwrap());
        let r = UdpRelay::bind(
            "127.0.0.1:0".parse().unwrap(),
            target.local_addr().unwrap(),
            model,
            None,
        )
        .unwrap();
        (r, target, client)
    }

    /// Polls until `sock` receives a datagram (or 10 s pass: a hang, not timing).
    fn recv(r: &mut UdpRelay, sock: &UdpSocket) -> (Vec<u8>, SocketAddr) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut buf = [0u8; 2048];
        while Instant::now() < deadline {
            r.poll();
            if let Ok((n, from)) = sock.recv_from(&mut buf) {
                return (buf[..n].to_vec(), from);
            }
        }
        panic!("nothing arrived");
    }

    #[test]
    fn datagrams_go_to_the_target_and_answers_to_the_client() {
        let (mut r, target, client) = relay(None);
        client.send_to(b"hello", r.listen_addr().unwrap()).unwrap();
        let (got, from) = recv(&mut r, &target);
        assert_eq!(got, b"hello");
        target.send_to(b"back", from).unwrap();
        let (got, from) = recv(&mut r, &client);
        assert_eq!(got, b"back");
        assert_eq!(from, r.listen_addr().unwrap());
        assert_eq!((r.a_to_b().forwarded, r.b_to_a().forwarded), (1, 1));
    }

    #[test]
    fn the_model_decides_every_datagram() {
        let (mut r, target, client) =
            relay(Some(ImpairConfig::default().with_loss(0.5).with_seed(7)));
        for i in 0..200u32 {
            client
                .send_to(&i.to_be_bytes(), r.listen_addr().unwrap())
                .unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while r.a_to_b().received < 200 && Instant::now() < deadline {
            r.poll();
        }
        let s = r.a_to_b().clone();
        assert_eq!(s.received, 200);
        assert!(s.lost > 50 && s.lost < 150, "{s:?}");
        assert_eq!(s.forwarded + s.lost, 200, "{s:?}");
        let mut n = 0;
        let mut buf = [0u8; 16];
        while target.recv_from(&mut buf).is_ok() {
            n += 1;
        }
        assert_eq!(n, s.forwarded);
    }

    #[test]
    fn a_rate_change_reaches_both_impaired_directions() {
        let model = |seed| {
            ImpairModel::new(
                ImpairConfig::default()
                    .with_rate_bps(Some(1_000_000_000))
                    .with_seed(seed),
            )
            .unwrap()
        };
        let target = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut r = UdpRelay::bind(
            "127.0.0.1:0".parse().unwrap(),
            target.local_addr().unwrap(),
            Some(model(1)),
            Some(model(2)),
        )
        .unwrap();
        r.set_rate(200_000_000).unwrap();
        let rate = |d: &Direction| d.model.as_ref().unwrap().config().rate_bps;
        assert_eq!(rate(&r.a_to_b), Some(200_000_000));
        assert_eq!(rate(&r.b_to_a), Some(200_000_000));
        assert!(r.set_rate(0).is_err(), "a zero rate is refused");
        // An untouched direction (--one-way) stays untouched.
        let (mut one_way, _, _) = relay(Some(ImpairConfig::default()));
        one_way.set_rate(5_000_000).unwrap();
        assert!(one_way.b_to_a.model.is_none());
        assert_eq!(rate(&one_way.a_to_b), Some(5_000_000));
    }

    #[test]
    fn delayed_datagrams_are_held_then_released_in_order() {
        let (mut r, target, client) = relay(Some(
            ImpairConfig::default().with_delay(Duration::from_millis(30)),
        ));
        for i in 0..10u8 {
            client.send_to(&[i], r.listen_addr().unwrap()).unwrap();
        }
        let sent = Instant::now();
        let mut got = Vec::new();
        while got.len() < 10 {
            got.push(recv(&mut r, &target).0[0]);
        }
        assert!(sent.elapsed() >= Duration::from_millis(30));
        assert_eq!(got, (0..10).collect::<Vec<u8>>());
        assert_eq!(r.a_to_b().held, 0);
    }
}
