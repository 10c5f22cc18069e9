//! Inputs the stateful fuzz target (`fuzz/fuzz_targets/endpoint_pair.rs`) found,
//! replayed on the shared two-endpoint harness.

use pmdt_proto::pair::{Direction, Pair};
use pmdt_proto::wire::{self, Body, DecodeError, HandshakeParams, MAX_PN};
use pmdt_proto::TransportConfig;

/// The first packet after the handshake is validated against nothing (no number
/// received yet), so a packet number of 2^64 − 1 was accepted, and recording it
/// computed `pn + 1`: an overflow panic in debug builds, a wrapped range in
/// release. Whole numbers (the handshake's long header) from 2^62 on are now
/// malformed (a sender starts below 2^31); a short header carries the low 32 bits,
/// which expand to a number near the largest received, never beyond 2^62.
#[test]
fn a_packet_number_beyond_2_62_is_malformed_not_a_crash() {
    let mut p = Pair::connected(TransportConfig::default());
    let before = p.server.stats().malformed;
    let params = HandshakeParams {
        src_cid: 9,
        max_data: 1 << 20,
        max_datagram: 1472,
        max_ack_delay_us: 1000,
        idle_timeout_ms: 10_000,
        path_bdp: 0,
    };
    for pn in [u64::MAX, MAX_PN] {
        // The encoder refuses such numbers: write a valid one, then patch it.
        let mut d = p.client_packet(
            1,
            Body::Init {
                params,
                cookie: b"",
            },
        );
        d[12..20].copy_from_slice(&pn.to_be_bytes());
        assert_eq!(
            wire::decode(&d).unwrap_err(),
            DecodeError::Malformed("packet number beyond 2^62")
        );
        p.inject(Direction::ToServer, &d);
    }
    assert_eq!(p.server.stats().malformed, before + 2);
    // The largest low bits (40) in a short header, as the first number after
    // the handshake or any later one, are a number like any other.
    for _ in 0..2 {
        let mut d = p.client_packet(
            1,
            Body::Data {
                offset: 0,
                fin: false,
                payload: b"",
            },
        );
        d[9..14].fill(0xff);
        assert!(wire::decode(&d).is_ok());
        p.inject(Direction::ToServer, &d);
    }
    assert_eq!(p.server.stats().malformed, before + 2);
    // The connection carries on.
    assert_eq!(p.client_write(b"still fine"), 10);
    p.drive_for(std::time::Duration::from_millis(50));
    assert_eq!(p.server_read_all(), b"still fine");
}
