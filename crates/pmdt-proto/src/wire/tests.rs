use super::*;
use proptest::prelude::*;

fn hdr() -> Header {
    Header {
        dst_cid: 0x1122_3344_5566_7788,
        pn: PacketNumber::Full(0x0ead_beef_0000_0001),
        timestamp: 7,
        timestamp_echo: 9,
    }
}

/// Encodes, decodes and compares: a short header gives back the number's low 32
/// bits, which the receiver expands to the whole number.
fn roundtrip(p: &Packet<'_>) -> Vec<u8> {
    let mut buf = vec![0u8; 2048];
    let n = encode(&mut buf, p).unwrap();
    buf.truncate(n);
    let got = decode(&buf).unwrap();
    let long = p.body.packet_type().has_long_header();
    assert_eq!(buf.len() >= LONG_HEADER_LEN && buf[0] == 0x50, long);
    let mut want = p.clone();
    if !long {
        want.header.pn = PacketNumber::Truncated(p.header.pn.low_bits());
    }
    assert_eq!(got, want);
    let PacketNumber::Full(whole) = p.header.pn else {
        unreachable!("the tests send whole numbers")
    };
    assert_eq!(got.header.pn.expand(Some(whole - 3)), whole);
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
    assert_eq!(n, 30);
    // 0b01F0_TTTT: short form, FIN, type 4 (data).
    assert_eq!(b[0], 0x64);
    assert_eq!(&b[1..9], &0x1122_3344_5566_7788u64.to_be_bytes());
    // The number's low 40 bits (0x0ead_beef_0000_0001).
    assert_eq!(&b[9..14], &[0xef, 0, 0, 0, 1]);
    assert_eq!(&b[14..18], &7u32.to_be_bytes());
    assert_eq!(&b[18..22], &9u32.to_be_bytes());
    assert_eq!(&b[22..30], &0x0102u64.to_be_bytes());
    encode_data_header(&mut b, &hdr(), 0x0102, 3, false).unwrap();
    assert_eq!(b[0], 0x44);
}

#[test]
fn long_header_layout_is_as_documented() {
    let mut b = [0u8; 64];
    let n = encode(
        &mut b,
        &Packet {
            header: hdr(),
            body: Body::Retry { cookie: b"c" },
        },
    )
    .unwrap();
    assert_eq!(n, LONG_HEADER_LEN + 2);
    assert_eq!(&b[0..4], &[0x50, 0x4D, VERSION, 2]);
    assert_eq!(&b[4..12], &0x1122_3344_5566_7788u64.to_be_bytes());
    assert_eq!(&b[12..20], &0x0ead_beef_0000_0001u64.to_be_bytes());
}

#[test]
fn a_long_header_needs_the_whole_number() {
    let mut b = [0u8; 64];
    let mut header = hdr();
    header.pn = PacketNumber::Truncated(5);
    let retry = Packet {
        header,
        body: Body::Retry { cookie: b"c" },
    };
    assert!(matches!(
        encode(&mut b, &retry),
        Err(EncodeError::Invalid(_))
    ));
    // A decoded short header encodes again as it came.
    let keepalive = Packet {
        header,
        body: Body::Keepalive,
    };
    let n = encode(&mut b, &keepalive).unwrap();
    assert_eq!(decode(&b[..n]).unwrap(), keepalive);
}

#[test]
fn bad_inputs_are_errors() {
    assert_eq!(decode(&[]), Err(DecodeError::Truncated));
    assert_eq!(decode(&[0x50]), Err(DecodeError::Truncated));
    assert_eq!(decode(&[0x44]), Err(DecodeError::Truncated));
    // Long header.
    let mut buf = roundtrip(&Packet {
        header: hdr(),
        body: Body::Retry { cookie: b"abc" },
    });
    buf[1] = 0;
    assert_eq!(decode(&buf), Err(DecodeError::BadMagic));
    buf[1] = 0x4D;
    buf[2] = 3;
    assert_eq!(decode(&buf), Err(DecodeError::UnsupportedVersion(3)));
    buf[2] = VERSION;
    buf[3] = 99;
    assert_eq!(decode(&buf), Err(DecodeError::UnknownType(99)));
    buf[3] = PacketType::Keepalive as u8;
    assert!(matches!(decode(&buf), Err(DecodeError::Malformed(_))));
    buf[3] = PacketType::Retry as u8;
    buf.push(1);
    assert_eq!(decode(&buf), Err(DecodeError::Malformed("trailing bytes")));

    // Short header.
    let mut buf = roundtrip(&Packet {
        header: hdr(),
        body: Body::Keepalive,
    });
    for first in [0x00, 0x80, 0xC8, 0x10] {
        buf[0] = first;
        assert_eq!(decode(&buf), Err(DecodeError::BadMagic), "{first:#x}");
    }
    buf[0] = 0x40 | 9;
    assert_eq!(decode(&buf), Err(DecodeError::UnknownType(9)));
    buf[0] = 0x40 | PacketType::Accept as u8;
    assert!(matches!(decode(&buf), Err(DecodeError::Malformed(_))));
    buf[0] = 0x60 | PacketType::Keepalive as u8;
    assert_eq!(
        decode(&buf),
        Err(DecodeError::Malformed("FIN on a packet without data"))
    );
    buf[0] = 0x40 | PacketType::Keepalive as u8;
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
    assert_eq!(
        decode(&data[..DATA_HEADER_LEN - 1]),
        Err(DecodeError::Truncated)
    );
    // The payload is the rest of the datagram, however long.
    let Body::Data { payload, .. } = decode(&data[..DATA_HEADER_LEN + 2]).unwrap().body else {
        panic!("not data")
    };
    assert_eq!(payload, b"ab");
    let mut over = data.clone();
    over[22..30].copy_from_slice(&u64::MAX.to_be_bytes());
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
    b[SHORT_HEADER_LEN + 29..SHORT_HEADER_LEN + 33].copy_from_slice(&9u32.to_be_bytes());
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
        let mut b = vec![0x50, 0x4D, VERSION, ty];
        b.extend_from_slice(&tail);
        let _ = decode(&b);
        let mut b = vec![0x40 | (ty & 0x2F)];
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

    #[test]
    fn short_header_numbers_expand_to_the_sent_ones(pn in 0u64..(MAX_PN - (1 << 33)), d in 0u64..MAX_PN_DISTANCE, behind: bool) {
        // The receiver's largest so far, up to the recoverable distance either side.
        let largest = if behind { pn.saturating_sub(d) } else { pn + d };
        let mut b = [0u8; 64];
        let n = encode(&mut b, &Packet { header: Header { pn: pn.into(), ..hdr() }, body: Body::Keepalive }).unwrap();
        let got = decode(&b[..n]).unwrap().header.pn;
        prop_assert_eq!(got.expand(Some(largest)), pn);
    }
}
