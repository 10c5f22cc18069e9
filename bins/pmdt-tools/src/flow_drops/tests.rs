use std::time::{Duration, Instant};

use etherparse::PacketBuilder;
use pmdt::proto::wire::{encode_data_header, Header};

use super::{FlowDrops, FlowKey, EPISODE_GAP, MAX_FLOWS};

/// An Ethernet/IPv4/UDP frame from 10.0.0.1:`sport` to 10.0.0.2:9000 carrying a
/// pmdt data header for connection `cid` (None: a payload pmdt cannot read).
fn frame(sport: u16, cid: Option<u64>) -> Vec<u8> {
    let payload = match cid {
        Some(c) => {
            let mut b = vec![0u8; 64];
            let h = Header {
                dst_cid: c,
                ..Header::default()
            };
            let n = encode_data_header(&mut b, &h, 0, 16, false).expect("a data header");
            b.truncate(n + 16);
            b
        }
        None => vec![0xee; 3],
    };
    let builder = PacketBuilder::ethernet2([1; 6], [2; 6])
        .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .udp(sport, 9000);
    let mut out = Vec::with_capacity(builder.size(payload.len()));
    builder.write(&mut out, &payload).expect("a frame");
    out
}

fn ms(t0: Instant, n: u64) -> Instant {
    t0 + Duration::from_millis(n)
}

#[test]
fn a_flow_is_its_udp_ends_and_its_pmdt_connection() {
    let k = FlowKey::of_frame(&frame(9001, Some(0x2a))).expect("a UDP frame");
    assert_eq!(k.src, "10.0.0.1:9001".parse().unwrap());
    assert_eq!(k.dst, "10.0.0.2:9000".parse().unwrap());
    assert_eq!(k.cid, Some(0x2a));
    assert_eq!(k.to_string(), "10.0.0.1:9001>10.0.0.2:9000 cid 2a");
    let other = FlowKey::of_frame(&frame(9001, None)).expect("a UDP frame");
    assert_eq!(other.cid, None, "not a pmdt packet");
    assert_ne!(k, other);
    let mut arp = frame(9001, None);
    arp[12..14].copy_from_slice(&[0x08, 0x06]);
    assert_eq!(FlowKey::of_frame(&arp), None);
    assert_eq!(FlowKey::of_frame(&[0u8; 5]), None, "a runt");
}

#[test]
fn drops_are_counted_per_flow() {
    let t0 = Instant::now();
    let mut d = FlowDrops::default();
    let (a, b) = (frame(9001, Some(1)), frame(9001, Some(2)));
    for i in 0..3 {
        d.offered(ms(t0, i), &a, true);
    }
    d.offered(ms(t0, 3), &b, true);
    d.offered(ms(t0, 4), &b, false);
    let t = d.totals();
    assert_eq!(t.len(), 2, "{t:?}");
    assert_eq!(
        (t[0].flow.as_str(), t[0].queue_drops),
        ("10.0.0.1:9001>10.0.0.2:9000 cid 1", 3)
    );
    assert_eq!(
        (t[1].flow.as_str(), t[1].queue_drops),
        ("10.0.0.1:9001>10.0.0.2:9000 cid 2", 1)
    );
}

#[test]
fn flows_past_the_bound_count_together() {
    let t0 = Instant::now();
    let mut d = FlowDrops::with_episodes();
    for c in 1..=(MAX_FLOWS as u64 + 5) {
        d.offered(t0, &frame(9001, Some(c)), true);
    }
    let t = d.totals();
    assert_eq!(t.len(), MAX_FLOWS + 1, "{t:?}");
    let other = t
        .iter()
        .find(|c| c.flow == "other")
        .expect("an other count");
    assert_eq!(other.queue_drops, 5);
    assert_eq!(
        t.iter().map(|c| c.queue_drops).sum::<u64>(),
        MAX_FLOWS as u64 + 5
    );
    // The episode is bounded the same way.
    let ep = d.close().expect("the episode under way");
    assert_eq!(ep.flows.len(), MAX_FLOWS + 1);
    let (_, other) = ep.flows.iter().find(|(k, _)| k.is_none()).expect("other");
    assert_eq!((other.offered, other.dropped), (5, 5));
}

#[test]
fn without_episodes_only_the_drops_are_counted() {
    let t0 = Instant::now();
    let mut d = FlowDrops::default();
    let a = frame(9001, Some(1));
    assert_eq!(d.offered(t0, &a, true), None);
    assert_eq!(d.offered(ms(t0, 1), &a, false), None);
    assert_eq!(d.offered(ms(t0, 100), &a, true), None);
    assert_eq!(d.close_if_over(ms(t0, 1000)), None);
    assert_eq!(d.close(), None);
    assert_eq!(d.totals()[0].queue_drops, 2);
}

#[test]
fn the_episode_under_way_closes_at_the_end() {
    let t0 = Instant::now();
    let mut d = FlowDrops::with_episodes();
    let a = frame(9001, Some(1));
    d.offered(t0, &a, false);
    d.offered(ms(t0, 1), &a, true);
    d.offered(ms(t0, 2), &a, false);
    assert_eq!(d.close_if_over(ms(t0, 2)), None, "not over yet");
    let ep = d.close().expect("closed at the end");
    assert_eq!((ep.first, ep.last), (ms(t0, 1), ms(t0, 1)));
    assert_eq!((ep.flows[0].1.offered, ep.flows[0].1.dropped), (1, 1));
    assert_eq!(d.close(), None, "once");
}

#[test]
fn a_jumbo_frames_first_segment_names_its_flow() {
    // An 8000-byte datagram in 2 KiB mbufs: the first segment holds the
    // headers, not the whole datagram the IP and UDP lengths announce.
    let mut f = frame(9001, Some(7));
    let header = f.len();
    f.resize(header + 8000, 0);
    let (ip_len, udp_len) = ((f.len() - 14) as u16, (f.len() - 34) as u16);
    f[16..18].copy_from_slice(&ip_len.to_be_bytes());
    f[38..40].copy_from_slice(&udp_len.to_be_bytes());
    let k = FlowKey::of_frame(&f[..2048]).expect("a UDP frame cut short");
    assert_eq!(k.cid, Some(7));
    assert_eq!(k.src, "10.0.0.1:9001".parse().unwrap());
}

#[test]
fn an_episode_holds_what_each_flow_offered_from_its_first_drop_to_its_last() {
    let t0 = Instant::now();
    let mut d = FlowDrops::with_episodes();
    let (a, b) = (frame(9001, Some(1)), frame(9001, Some(2)));
    // Before the first drop nothing is counted.
    assert_eq!(d.offered(ms(t0, 0), &a, false), None);
    assert_eq!(d.offered(ms(t0, 1), &a, true), None);
    assert_eq!(d.offered(ms(t0, 2), &b, false), None);
    assert_eq!(d.offered(ms(t0, 3), &a, false), None);
    assert_eq!(d.offered(ms(t0, 4), &b, true), None);
    // After the last drop: offered, but not part of the episode.
    assert_eq!(d.offered(ms(t0, 5), &a, false), None);
    let gap = EPISODE_GAP.as_millis() as u64;
    assert_eq!(d.close_if_over(ms(t0, 4 + gap)), None, "not yet over");
    let ep = d.close_if_over(ms(t0, 5 + gap)).expect("over");
    assert_eq!((ep.first, ep.last), (ms(t0, 1), ms(t0, 4)));
    let share = |cid| {
        ep.flows
            .iter()
            .find(|(k, _)| k.is_some_and(|k| k.cid == Some(cid)))
            .map(|(_, s)| (s.offered, s.dropped))
    };
    assert_eq!(share(1), Some((2, 1)));
    assert_eq!(share(2), Some((2, 1)));
    assert_eq!(
        ep.describe(t0),
        "overflow at 0.001 s for 3.0 ms: 10.0.0.1:9001>10.0.0.2:9000 cid 1 dropped 1 of 2; \
         10.0.0.1:9001>10.0.0.2:9000 cid 2 dropped 1 of 2"
    );
    assert_eq!(d.close_if_over(ms(t0, 100)), None, "closed once");
}

#[test]
fn a_frame_after_the_gap_ends_the_episode_and_may_begin_the_next() {
    let t0 = Instant::now();
    let mut d = FlowDrops::with_episodes();
    let a = frame(9001, Some(1));
    d.offered(ms(t0, 0), &a, true);
    let later = ms(t0, EPISODE_GAP.as_millis() as u64 + 1);
    let ep = d
        .offered(later, &a, true)
        .expect("the first episode is over");
    assert_eq!((ep.first, ep.last), (t0, t0));
    let ep = d
        .close_if_over(later + EPISODE_GAP * 2)
        .expect("the second");
    assert_eq!(ep.first, later);
    assert_eq!(d.totals()[0].queue_drops, 2);
}
