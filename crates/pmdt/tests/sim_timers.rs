//! RTT estimation, retransmission-timer backoff, and what happens when a peer vanishes.

use std::time::Duration;

use pmdt::sim::{ImpairConfig, Network};
use pmdt::{CloseReason, EndpointConfig, Event, TransportConfig};

fn pair(
    transport: TransportConfig,
    link: ImpairConfig,
) -> (Network, pmdt::sim::NodeId, pmdt::sim::NodeId) {
    let mut net = Network::new(9);
    let c = net
        .add_endpoint(
            "10.1.0.1:1000".parse().unwrap(),
            EndpointConfig::default()
                .with_transport(transport.clone())
                .with_seed(Some(1)),
        )
        .unwrap();
    let s = net
        .add_endpoint(
            "10.1.0.2:2000".parse().unwrap(),
            EndpointConfig::default()
                .with_transport(transport)
                .with_accept(true)
                .with_seed(Some(2)),
        )
        .unwrap();
    net.set_path(c, s, link).unwrap();
    (net, c, s)
}

#[test]
fn rtt_estimate_converges_to_the_path_rtt() {
    let (mut net, c, s) = pair(
        TransportConfig::default(),
        ImpairConfig::default().with_delay(Duration::from_millis(20)),
    );
    let now = net.now();
    let sa = net.addr(s);
    let h = net.endpoint(c).connect(now, sa);
    let limit = now + Duration::from_secs(5);
    let chunk = vec![1u8; 16 * 1024];
    let mut buf = vec![0u8; 65536];
    while net.step(limit) {
        let _ = net.endpoint(c).connection_mut(h).unwrap().write(&chunk);
        let hs: Vec<_> = net.endpoint(s).handles().collect();
        for sh in hs {
            while net.endpoint(s).connection_mut(sh).unwrap().read(&mut buf) > 0 {}
        }
        if net.elapsed() > Duration::from_secs(2) {
            break;
        }
    }
    let st = net.endpoint(c).connection(h).unwrap().stats();
    println!(
        "path RTT 40 ms: min {} µs, smoothed {} µs, var {} µs",
        st.rtt_min_us, st.rtt_smoothed_us, st.rtt_var_us
    );
    assert!(
        (39_000..=42_000).contains(&st.rtt_min_us),
        "min {}",
        st.rtt_min_us
    );
    assert!(
        (39_000..=43_000).contains(&st.rtt_smoothed_us),
        "smoothed {}",
        st.rtt_smoothed_us
    );
    assert!(st.stream_bytes_sent > 1 << 20);
}

#[test]
fn vanished_peer_backs_off_then_times_out() {
    let idle = Duration::from_secs(4);
    let t = TransportConfig::default()
        .with_idle_timeout(idle)
        .with_keepalive(Some(Duration::from_millis(500)));
    let (mut net, c, s) = pair(
        t,
        ImpairConfig::default().with_delay(Duration::from_millis(5)),
    );
    let now = net.now();
    let sa = net.addr(s);
    let h = net.endpoint(c).connect(now, sa);
    let limit = now + Duration::from_secs(30);
    let mut buf = vec![0u8; 65536];
    // Run a transfer for a while.
    while net.step(limit) && net.elapsed() < Duration::from_millis(300) {
        let _ = net
            .endpoint(c)
            .connection_mut(h)
            .unwrap()
            .write(&[5u8; 8192]);
        let hs: Vec<_> = net.endpoint(s).handles().collect();
        for sh in hs {
            while net.endpoint(s).connection_mut(sh).unwrap().read(&mut buf) > 0 {}
        }
    }
    // The server vanishes: nothing gets through any more in either direction.
    let cut = net.elapsed();
    net.set_path(c, s, ImpairConfig::default().with_loss(1.0))
        .unwrap();
    let mut send_times = Vec::new();
    let mut offered = net.link_stats(c, s).offered;
    let mut reason = None;
    while net.step(limit) {
        let o = net.link_stats(c, s).offered;
        if o > offered {
            send_times.push(net.elapsed());
            offered = o;
        }
        while let Some((hh, e)) = net.endpoint(c).poll_event() {
            if hh == h {
                if let Event::Closed(r) = e {
                    reason = Some((r, net.elapsed()));
                }
            }
        }
        if reason.is_some() {
            break;
        }
    }
    let (r, at) = reason.expect("the client must learn the peer is gone (no hang)");
    assert_eq!(r, CloseReason::TimedOut);
    let after = at - cut;
    println!("peer vanished: timed out {after:?} after the cut; probes at {send_times:?}");
    assert!(
        after >= idle && after <= idle + Duration::from_millis(200),
        "{after:?}"
    );
    // Probe timeouts back off: later gaps between transmissions grow.
    let gaps: Vec<Duration> = send_times
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|g| *g > Duration::from_millis(5))
        .collect();
    assert!(gaps.len() >= 3, "gaps {gaps:?}");
    let n = gaps.len();
    assert!(gaps[n - 1] > gaps[0] * 3, "no backoff: {gaps:?}");
    assert!(net.endpoint(c).connection(h).unwrap().stats().pto_count >= 3);
}

#[test]
fn unreachable_and_refused_are_reported() {
    let t = TransportConfig::default().with_idle_timeout(Duration::from_secs(2));
    let mut net = Network::new(1);
    let c = net
        .add_endpoint(
            "10.2.0.1:1".parse().unwrap(),
            EndpointConfig::default()
                .with_transport(t.clone())
                .with_seed(Some(3)),
        )
        .unwrap();
    let s = net
        .add_endpoint(
            "10.2.0.2:2".parse().unwrap(),
            EndpointConfig::default()
                .with_transport(t)
                .with_accept(false)
                .with_seed(Some(4)),
        )
        .unwrap();
    let now = net.now();
    let nobody = net.endpoint(c).connect(now, "10.2.0.9:9".parse().unwrap());
    let sa = net.addr(s);
    let refused = net.endpoint(c).connect(now, sa);
    let limit = now + Duration::from_secs(10);
    let mut got = std::collections::HashMap::new();
    while net.step(limit) {
        while let Some((h, e)) = net.endpoint(c).poll_event() {
            if let Event::Closed(r) = e {
                got.insert(h, r);
            }
        }
        if got.len() == 2 {
            break;
        }
    }
    assert_eq!(got.get(&nobody), Some(&CloseReason::Unreachable));
    assert_eq!(got.get(&refused), Some(&CloseReason::Refused));
    assert_eq!(net.endpoint(s).stats().refused, 1);
    assert_eq!(net.endpoint(s).connection_count(), 0);
}

#[test]
fn full_buffers_are_backpressure_and_credit_limits_the_sender() {
    let t = TransportConfig::default()
        .with_send_buffer(64 * 1024)
        .with_recv_buffer(32 * 1024);
    let (mut net, c, s) = pair(t, pmdt::sim::default_path());
    let now = net.now();
    let sa = net.addr(s);
    let h = net.endpoint(c).connect(now, sa);
    let limit = now + Duration::from_secs(10);
    let mut blocked = false;
    // The receiving application does not read for 200 ms.
    while net.step(limit) && net.elapsed() < Duration::from_millis(200) {
        loop {
            match net
                .endpoint(c)
                .connection_mut(h)
                .unwrap()
                .write(&[9u8; 4096])
            {
                Err(pmdt::WriteError::Blocked) => {
                    blocked = true;
                    break;
                }
                Ok(_) => {}
                Err(e) => panic!("{e:?}"),
            }
        }
    }
    assert!(blocked, "a full send buffer must push back");
    let st = net.endpoint(c).connection(h).unwrap().stats();
    assert!(
        st.stream_bytes_sent <= 32 * 1024,
        "credit exceeded: {}",
        st.stream_bytes_sent
    );
    assert!(
        st.blocked_credit_us > 0 || net.endpoint(c).connection(h).unwrap().send_capacity() == 0
    );
    let sh = net.endpoint(s).handles().next().unwrap();
    assert_eq!(
        net.endpoint(s)
            .connection(sh)
            .unwrap()
            .stats()
            .out_of_window,
        0
    );
    // Reading reopens the window and data flows again.
    let mut buf = vec![0u8; 65536];
    let mut got = 0;
    while net.step(limit) && got < 200 * 1024 {
        got += net.endpoint(s).connection_mut(sh).unwrap().read(&mut buf);
        let _ = net
            .endpoint(c)
            .connection_mut(h)
            .unwrap()
            .write(&[9u8; 4096]);
    }
    assert!(got >= 200 * 1024);
}
