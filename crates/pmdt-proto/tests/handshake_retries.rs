//! A handshake keeps trying often enough to get through a lossy path within the
//! idle timeout (found by the reliability sweep: with 10% loss, a connection whose
//! Init was lost five times in a row was given up as unreachable, because the
//! retry interval doubled without bound: 0.2, 0.4, 0.8, 1.6, 3.2 s, then 6.4 s
//! past the 10 s idle timeout). The interval now stops doubling at an eighth of
//! the idle timeout.

use std::time::Duration;

use pmdt_proto::pair::{Direction, Pair, Verdict};
use pmdt_proto::wire::{self, Body};
use pmdt_proto::TransportConfig;

#[test]
fn inits_lost_for_eight_seconds_still_connect_within_the_idle_timeout() {
    let cfg = TransportConfig::default();
    assert_eq!(cfg.idle_timeout, Duration::from_secs(10));
    let mut p = Pair::new(cfg.clone(), cfg);
    let lost_until = p.now + Duration::from_secs(8);
    p.set_filter(Box::new(move |now, dir, d| {
        let init = matches!(wire::decode(d).map(|p| p.body), Ok(Body::Init { .. }));
        if dir == Direction::ToServer && init && now < lost_until {
            Verdict::Drop
        } else {
            Verdict::Deliver
        }
    }));
    let ch = p.client.connect(p.now, p.server_addr);
    let limit = p.now + Duration::from_secs(12);
    let ok = p.drive_until(limit, |p| {
        p.client.connection(ch).is_some_and(|c| c.is_established())
    });
    assert!(
        ok,
        "not established: {:?}",
        p.client.connection(ch).map(|c| c.close_reason())
    );
}
