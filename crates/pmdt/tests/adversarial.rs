//! Bad input: malformed datagrams, unknown connections, out-of-window data, forged
//! acks and handshake floods are counted and dropped, never a panic, while a real
//! transfer continues.

use std::time::{Duration, Instant};

use pmdt::proto::DEFAULT_MAX_UNPROVEN;
use pmdt::sim::{Network, NodeId};
use pmdt::wire::{self, Ack, AckRange, Body, HandshakeParams, Header, Packet, PacketType};
use pmdt::{AddressValidation, EndpointConfig};
use rand::{Rng, SeedableRng};

fn enc(p: &Packet<'_>) -> Vec<u8> {
    let mut b = vec![0u8; 2048];
    let n = wire::encode(&mut b, p).unwrap();
    b.truncate(n);
    b
}

/// A simulated network with a client (10.`subnet`.0.1) and a server (…0.2) on
/// default settings, fixed seeds.
fn client_and_server(seed: u64, subnet: u8) -> (Network, NodeId, NodeId) {
    let mut net = Network::new(seed);
    let c = net
        .add_endpoint(
            format!("10.{subnet}.0.1:1").parse().unwrap(),
            EndpointConfig::default().with_seed(Some(1)),
        )
        .unwrap();
    let s = net
        .add_endpoint(
            format!("10.{subnet}.0.2:2").parse().unwrap(),
            EndpointConfig::default()
                .with_seed(Some(2))
                .with_accept(true),
        )
        .unwrap();
    (net, c, s)
}

#[test]
fn garbage_and_forgeries_are_dropped_while_a_transfer_completes() {
    let (mut net, c, s) = client_and_server(5, 3);
    let (ca, sa) = (net.addr(c), net.addr(s));
    let now = net.now();
    let h = net.endpoint(c).connect(now, sa);
    let limit = now + Duration::from_secs(20);
    let total = 2u64 << 20;
    let (mut written, mut received) = (0u64, 0u64);
    let mut buf = vec![0u8; 65536];
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(99);
    let mut attacked = false;
    let mut closed = false;
    while net.step(limit) {
        if written < total {
            let chunk = vec![0xab; (total - written).min(16384) as usize];
            if let Ok(n) = net.endpoint(c).connection_mut(h).unwrap().write(&chunk) {
                written += n as u64;
            }
        } else if !closed {
            closed = true;
            let n = net.now();
            net.endpoint(c).connection_mut(h).unwrap().close(n);
        }
        let hs: Vec<_> = net.endpoint(s).handles().collect();
        for sh in &hs {
            loop {
                let n = net.endpoint(s).connection_mut(*sh).unwrap().read(&mut buf);
                if n == 0 {
                    break;
                }
                assert!(
                    buf[..n].iter().all(|b| *b == 0xab),
                    "stream corrupted by an attack"
                );
                received += n as u64;
            }
        }
        // The attack needs the client's packet numbers (an on-path attacker sees
        // them): a short header carries only their low 40 bits, and "far ahead"
        // is far ahead of them.
        let newest = (!attacked && received > 256 * 1024)
            .then(|| {
                net.in_flight_between(c, s)
                    .filter_map(|d| wire::peek_header(d).ok())
                    .filter(|(_, ty)| !ty.has_long_header())
                    .map(|(header, _)| header.pn.low_bits())
                    .max()
            })
            .flatten();
        if let Some(newest) = newest {
            attacked = true;
            let now = net.now();
            let server_cid = net
                .endpoint(c)
                .connection(h)
                .map(|_| ())
                .and(hs.first().copied())
                .map(|sh| net.endpoint(s).connection(sh).unwrap().local_cid())
                .unwrap();
            let client_cid = net.endpoint(c).connection(h).unwrap().local_cid();
            let ep = net.endpoint(s);
            // 1. random bytes: counted as malformed or, when they happen to look
            // like a short header, as for an unknown connection
            let before = ep.stats().clone();
            for _ in 0..2000 {
                let len = rng.random_range(0..300);
                let junk: Vec<u8> = (0..len).map(|_| rng.random()).collect();
                ep.handle(now, ca, &junk);
            }
            let after_junk = ep.stats().clone();
            assert_eq!(
                after_junk.malformed + after_junk.unknown_connection,
                before.malformed + before.unknown_connection + 2000
            );
            // 2. truncated headers, wrong form, type, FIN and version
            let keepalive = |pn: u64| {
                enc(&Packet {
                    header: Header {
                        dst_cid: server_cid,
                        pn: pn.into(),
                        timestamp: 1,
                        timestamp_echo: 0,
                    },
                    body: Body::Keepalive,
                })
            };
            let good = keepalive(newest);
            ep.handle(now, ca, &good[..10]);
            for first in [0x00, 0x40 | 9, 0x60 | PacketType::Keepalive as u8] {
                let mut bad = good.clone();
                bad[0] = first;
                ep.handle(now, ca, &bad);
            }
            let mut old_version = enc(&Packet {
                header: Header {
                    dst_cid: server_cid,
                    pn: 1.into(),
                    timestamp: 1,
                    timestamp_echo: 0,
                },
                body: Body::Retry { cookie: b"c" },
            });
            old_version[2] = wire::VERSION - 1;
            ep.handle(now, ca, &old_version);
            let data = enc(&Packet {
                header: Header {
                    dst_cid: server_cid,
                    pn: 2.into(),
                    timestamp: 1,
                    timestamp_echo: 0,
                },
                body: Body::Data {
                    offset: 0,
                    fin: false,
                    payload: &[1; 100],
                },
            });
            ep.handle(now, ca, &data[..wire::DATA_HEADER_LEN - 1]);
            // 3. unknown connection id, and the right id from the wrong address
            let unknown = enc(&Packet {
                header: Header {
                    dst_cid: 0x1234,
                    pn: 3.into(),
                    timestamp: 1,
                    timestamp_echo: 0,
                },
                body: Body::Keepalive,
            });
            ep.handle(now, ca, &unknown);
            ep.handle(now, "10.9.9.9:9".parse().unwrap(), &good);
            let mid = ep.stats().clone();
            assert_eq!(mid.malformed, after_junk.malformed + 6, "malformed counted");
            assert_eq!(mid.unknown_connection, after_junk.unknown_connection + 2);
            // 4. out-of-window data: far beyond the receiver's credit
            let far = newest + (1 << 30);
            let oow = enc(&Packet {
                header: Header {
                    dst_cid: server_cid,
                    pn: far.into(),
                    timestamp: 1,
                    timestamp_echo: 0,
                },
                body: Body::Data {
                    offset: 1 << 40,
                    fin: false,
                    payload: &[0xcd; 500],
                },
            });
            ep.handle(now, ca, &oow);
            let sh = hs[0];
            assert_eq!(ep.connection(sh).unwrap().stats().out_of_window, 1);
            // 5. a packet number far ahead of the stream (would poison the acks)
            ep.handle(now, ca, &keepalive(far + 1));
            assert_eq!(ep.connection(sh).unwrap().stats().out_of_window, 2);
            // 6. data with conflicting content below what was delivered: ignored as duplicate
            let dup_pn = ep.connection(sh).unwrap().stats().packets_received;
            let dup = enc(&Packet {
                header: Header {
                    dst_cid: server_cid,
                    pn: dup_pn.into(),
                    timestamp: 1,
                    timestamp_echo: 0,
                },
                body: Body::Data {
                    offset: 0,
                    fin: false,
                    payload: &[0xee; 500],
                },
            });
            ep.handle(now, ca, &dup);
            // 7. forged acks at the client: acknowledging packets never sent (the
            // largest number an ack may carry, 2^62 - 1, and beyond what was sent)
            let forged = enc(&Packet {
                header: Header {
                    dst_cid: client_cid,
                    pn: 7.into(),
                    timestamp: 1,
                    timestamp_echo: 0,
                },
                body: Body::Ack(Ack {
                    ranges: vec![AckRange {
                        start: wire::MAX_PN - 11,
                        end: wire::MAX_PN - 1,
                    }]
                    .into(),
                    ack_delay_us: 0,
                    data_cumulative: 0,
                    max_data: u64::MAX / 2,
                }),
            });
            net.endpoint(c).handle(now, sa, &forged);
            let forged2 = enc(&Packet {
                header: Header {
                    dst_cid: client_cid,
                    pn: 8.into(),
                    timestamp: 1,
                    timestamp_echo: 0,
                },
                body: Body::Ack(Ack {
                    ranges: vec![AckRange { start: 0, end: 0 }].into(),
                    ack_delay_us: 0,
                    data_cumulative: 1 << 50,
                    max_data: 1 << 51,
                }),
            });
            net.endpoint(c).handle(now, sa, &forged2);
            assert_eq!(
                net.endpoint(c).connection(h).unwrap().stats().invalid_acks,
                2
            );
        }
        if closed && net.endpoint(c).connection(h).unwrap().is_closed() {
            break;
        }
        let hs: Vec<_> = net.endpoint(s).handles().collect();
        for sh in hs {
            if net.endpoint(s).connection(sh).unwrap().is_peer_finished() {
                let n = net.now();
                net.endpoint(s).connection_mut(sh).unwrap().close(n);
            }
        }
    }
    assert!(attacked);
    assert_eq!(received, total, "the transfer completed byte for byte");
    assert_eq!(
        net.endpoint(c).connection(h).unwrap().close_reason(),
        Some(pmdt::CloseReason::Graceful)
    );
}

#[test]
fn handshake_floods_cost_no_connection_state() {
    let mut net = Network::new(6);
    let s = net
        .add_endpoint(
            "10.4.0.2:2".parse().unwrap(),
            EndpointConfig::default()
                .with_seed(Some(2))
                .with_accept(true)
                .with_address_validation(AddressValidation::Always),
        )
        .unwrap();
    let now = net.now();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let ep = net.endpoint(s);
    for i in 0..100_000u64 {
        let cookie: Vec<u8> = if i % 2 == 0 {
            Vec::new()
        } else {
            (0..12).map(|_| rng.random()).collect()
        };
        let init = spoofed_init(&mut rng, &cookie);
        let from = std::net::SocketAddr::from((
            [10, 5, (i >> 8) as u8, i as u8],
            1000 + (i % 5000) as u16,
        ));
        ep.handle(now, from, &init);
    }
    assert_eq!(
        ep.connection_count(),
        0,
        "no state for unverified handshakes"
    );
    // Every Init got a Retry: the ones without a cookie and the ones whose cookie
    // does not verify (a real client holding a stale one gets a fresh one).
    assert_eq!(ep.stats().retries_sent, 100_000);
    assert_eq!(ep.stats().bad_cookies, 50_000);
    // Stateless replies are bounded too: at most 1024 wait to be sent.
    let mut out = vec![0u8; 2048];
    let mut n = 0;
    let now = Instant::now();
    while let Some(t) = ep.poll_transmit(now, &mut out) {
        assert!(t.connection().is_none(), "only stateless answers");
        n += 1;
    }
    assert_eq!(n, 1024);
}

/// A spoofed Init (random client connection id) carrying `cookie`.
fn spoofed_init(rng: &mut impl Rng, cookie: &[u8]) -> Vec<u8> {
    let params = HandshakeParams {
        src_cid: rng.random::<u64>() | 1,
        max_data: 1 << 20,
        max_datagram: 1472,
        max_ack_delay_us: 1000,
        idle_timeout_ms: 10_000,
        // The largest claim of a saved path: credit up to the memory limit only.
        path_bdp: u64::MAX,
    };
    enc(&Packet {
        header: Header {
            dst_cid: 0,
            pn: 0.into(),
            timestamp: 0,
            timestamp_echo: 0,
        },
        body: Body::Init { params, cookie },
    })
}

/// With the default address validation a handshake takes one round trip, a
/// flood of spoofed Inits holds at most `DEFAULT_MAX_UNPROVEN` connections, a
/// real client still connects during the flood (through a Retry), and once the
/// spoofed connections time out clients connect in one round trip again.
#[test]
fn a_handshake_flood_holds_a_bounded_number_of_unproven_connections() {
    let (mut net, c, s) = client_and_server(7, 6);
    let sa = net.addr(s);
    let connect = |net: &mut Network| {
        let now = net.now();
        let h = net.endpoint(c).connect(now, sa);
        let limit = now + Duration::from_secs(5);
        while net.step(limit) {
            if net.endpoint(c).connection(h).unwrap().is_established() {
                return net.now() - now;
            }
        }
        panic!("the client did not connect");
    };
    // Unloaded: one round trip, no Retry.
    let first = connect(&mut net);
    assert_eq!(net.endpoint(s).stats().retries_sent, 0);
    // The client writes nothing: its Keepalive on the Accept proves its address,
    // and only then does the server's application get the connection.
    let settle = net.now() + Duration::from_millis(200);
    while net.step(settle) {}
    assert!(
        net.endpoint(s).accept().is_some(),
        "the proven client is accepted"
    );
    assert!(net.endpoint(s).accept().is_none());
    let now = net.now();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    for i in 0..1000u32 {
        let from = std::net::SocketAddr::from(([10, 7, (i >> 8) as u8, i as u8], 4000));
        let init = spoofed_init(&mut rng, &[]);
        net.endpoint(s).handle(now, from, &init);
    }
    // One proven connection (the real client's) and the bound of unproven ones.
    assert_eq!(net.endpoint(s).connection_count(), 1 + DEFAULT_MAX_UNPROVEN);
    assert_eq!(
        net.endpoint(s).stats().retries_sent,
        1000 - DEFAULT_MAX_UNPROVEN as u64
    );
    // None of them reaches the application: nothing it writes goes to a spoofed
    // address.
    assert!(
        net.endpoint(s).accept().is_none(),
        "an unproven connection was accepted"
    );
    // A real client connects during the flood: its address is proven by a Retry.
    let during = connect(&mut net);
    assert!(net.endpoint(s).accept().is_some(), "the Retry proved it");
    assert!(during > first, "{during:?} (with a Retry) vs {first:?}");
    assert_eq!(
        net.endpoint(s).stats().retries_sent,
        1000 - DEFAULT_MAX_UNPROVEN as u64 + 1
    );
    // The spoofed connections time out; released, they free their places.
    let limit = net.now() + Duration::from_secs(40);
    while net.step(limit) {
        let ep = net.endpoint(s);
        let handles: Vec<_> = ep.handles().collect();
        for h in handles {
            // Releasing frees only a closed connection.
            ep.release(h);
        }
    }
    // The two real clients' connections stay (keepalives); the spoofed ones are gone.
    assert_eq!(net.endpoint(s).connection_count(), 2);
    let retries = net.endpoint(s).stats().retries_sent;
    let after = connect(&mut net);
    assert_eq!(net.endpoint(s).stats().retries_sent, retries, "no Retry");
    assert_eq!(after, first, "one round trip again");
}
