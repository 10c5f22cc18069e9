use super::*;
use proptest::prelude::*;

fn hdr() -> Header {
    Header {
        dst_cid: 0x1122_3344_5566_7788,
        pn: 0x0ead_beef_0000_0001,
        timestamp: 7,
        timestamp_echo: 9,
    }
}

fn roundtrip(p: &Packet<'_>) -> Vec<u8> {
    let mut buf = vec![0u8; 2048];
    let n = encode(&mut buf, p).unwrap();
    buf.truncate(n);
    assert_eq!(&decode(&buf).unwrap(), p);
    buf
}

#[test]
fn every_type_round_trips() {
    let params = HandshakeParams {
        src_cid: 42,
        max_data: 1 << 40,
        max_datagram: 1472,
        max_ack_delay_us: 25_000,
        idle_timeout_ms: 30_000,
        path_bdp: 25_000_000,
    };
    let bodies = vec![
        Body::Init {
            params,
            cookie: b"cookie-bytes",
        },
        Body::Retry { cookie: b"abc" },
        Body::Accept { params },
        Body::Data {
            offset: 5 << 40,
            fin: true,
            payload: b"hello",
        },
        Body::Ack(Ack {
            ranges: vec![
                AckRange {
                    start: 90,
                    end: 100,
                },
                AckRange { start: 50, end: 80 },
                AckRange { start: 10, end: 10 },
            ]
            .into(),
            ack_delay_us: 250,
            data_cumulative: 1 << 33,
            max_data: 1 << 34,
        }),
        Body::Close { code: 0 },
        Body::Reset { code: 77 },
        Body::Keepalive,
    ];
    for body in bodies {
        roundtrip(&Packet {
            header: hdr(),
            body,
        });
    }
}

#[test]
fn data_header_layout_is_as_documented() {
    let mut b = [0u8; 64];
    let n = encode_data_header(&mut b, &hdr(), 0x0102, 3, true).unwrap();
    assert_eq!(n, DATA_HEADER_LEN);
    assert_eq!(&b[0..4], &[0x50, 0x4D, VERSION, 4]);
    assert_eq!(&b[4..12], &0x1122_3344_5566_7788u64.to_be_bytes());
    assert_eq!(&b[28..36], &0x0102u64.to_be_bytes());
    assert_eq!(&b[36..38], &3u16.to_be_bytes());
    assert_eq!(b[38], 1);
}

#[test]
fn bad_inputs_are_errors() {
    assert_eq!(decode(&[]), Err(DecodeError::Truncated));
    assert_eq!(decode(&[0x50]), Err(DecodeError::Truncated));
    let mut buf = roundtrip(&Packet {
        header: hdr(),
        body: Body::Keepalive,
    });
    buf[0] = 0;
    assert_eq!(decode(&buf), Err(DecodeError::BadMagic));
    buf[0] = 0x50;
    buf[2] = 9;
    assert_eq!(decode(&buf), Err(DecodeError::UnsupportedVersion(9)));
    buf[2] = VERSION;
    buf[3] = 99;
    assert_eq!(decode(&buf), Err(DecodeError::UnknownType(99)));
    buf[3] = 8;
    buf.push(1);
    assert_eq!(decode(&buf), Err(DecodeError::Malformed("trailing bytes")));

    let data = roundtrip(&Packet {
        header: hdr(),
        body: Body::Data {
            offset: 0,
            fin: false,
            payload: b"abcdef",
        },
    });
    assert_eq!(decode(&data[..data.len() - 1]), Err(DecodeError::Truncated));
    let mut longer = data.clone();
    longer.push(0);
    assert!(matches!(decode(&longer), Err(DecodeError::Malformed(_))));
    let mut over = data.clone();
    over[28..36].copy_from_slice(&u64::MAX.to_be_bytes());
    assert_eq!(
        decode(&over),
        Err(DecodeError::Malformed("offset overflow"))
    );
}

#[test]
fn ack_ranges_below_zero_are_rejected() {
    let mut b = vec![0u8; 128];
    let n = encode(
        &mut b,
        &Packet {
            header: hdr(),
            body: Body::Ack(Ack {
                ranges: vec![AckRange { start: 3, end: 5 }].into(),
                ack_delay_us: 0,
                data_cumulative: 0,
                max_data: 0,
            }),
        },
    )
    .unwrap();
    // first range length 9 > largest 5
    b[HEADER_LEN + 29..HEADER_LEN + 33].copy_from_slice(&9u32.to_be_bytes());
    assert!(matches!(decode(&b[..n]), Err(DecodeError::Malformed(_))));
    assert_eq!(ack_len(1), n);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = decode(&bytes);
    }

    #[test]
    fn decode_never_panics_on_valid_prefix(ty in 0u8..12, tail in proptest::collection::vec(any::<u8>(), 0..120)) {
        let mut b = vec![0x50, 0x4D, 1, ty];
        b.extend_from_slice(&tail);
        let _ = decode(&b);
    }

    #[test]
    fn acks_round_trip(largest in 1000u64..MAX_PN, gaps in proptest::collection::vec((0u64..50, 0u64..50), 0..MAX_ACK_RANGES)) {
        let mut ranges = vec![AckRange { start: largest - 10, end: largest }];
        let mut smallest = largest - 10;
        for (gap, len) in gaps {
            let end = smallest - gap - 2;
            let start = end - len;
            ranges.push(AckRange { start, end });
            smallest = start;
        }
        roundtrip(&Packet { header: hdr(), body: Body::Ack(Ack { ranges: ranges.into(), ack_delay_us: 1, data_cumulative: 5, max_data: 6 }) });
    }

    #[test]
    fn data_round_trips(offset in 0u64..(u64::MAX - 70000), payload in proptest::collection::vec(any::<u8>(), 0..1500), fin: bool) {
        roundtrip(&Packet { header: hdr(), body: Body::Data { offset, fin, payload: &payload } });
    }
}
