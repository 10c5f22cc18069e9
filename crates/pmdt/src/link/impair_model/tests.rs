use super::*;

fn model(cfg: ImpairConfig) -> ImpairModel {
    ImpairModel::new(cfg).expect("valid config")
}

/// Offers `n` datagrams of `len` bytes at `now` and returns their fates.
fn offer(m: &mut ImpairModel, now: Instant, n: usize, len: usize) -> Vec<Fate> {
    (0..n).map(|_| m.decide(now, len)).collect()
}

#[test]
fn the_default_delivers_everything_at_once_in_order() {
    let mut m = model(ImpairConfig::default());
    let now = Instant::now();
    for f in offer(&mut m, now, 1000, 1500) {
        assert_eq!(
            f,
            Fate::Once(Delivery {
                at: now,
                reordered: false,
                flip: None
            })
        );
    }
    assert_eq!((m.stats().offered, m.stats().delivered), (1000, 1000));
}

#[test]
fn the_same_seed_gives_the_same_fates_and_another_seed_other_ones() {
    let cfg = ImpairConfig {
        loss: 0.1,
        duplicate: 0.1,
        reorder: 0.1,
        jitter: Duration::from_millis(1),
        corrupt: 0.1,
        corrupt_bypasses_checksum: true,
        rate_bps: Some(100_000_000),
        ..Default::default()
    };
    let now = Instant::now();
    let a = offer(&mut model(cfg.clone()), now, 2000, 1000);
    let b = offer(&mut model(cfg.clone()), now, 2000, 1000);
    assert_eq!(a, b);
    let c = offer(&mut model(ImpairConfig { seed: 2, ..cfg }), now, 2000, 1000);
    assert_ne!(a, c);
}

#[test]
fn random_loss_drops_the_configured_fraction() {
    let mut m = model(ImpairConfig {
        loss: 0.1,
        seed: 7,
        ..Default::default()
    });
    let fates = offer(&mut m, Instant::now(), 100_000, 1000);
    let lost = fates
        .iter()
        .filter(|f| **f == Fate::Dropped(DropCause::Lost))
        .count();
    // Binomial(100000, 0.1): sd ≈ 95; the seed fixes the outcome, the bound is 5 sd.
    assert!((9_525..10_475).contains(&lost), "{lost}");
    assert_eq!(m.stats().lost, lost as u64);
    assert_eq!(m.stats().delivered, 100_000 - lost as u64);
}

#[test]
fn burst_loss_comes_in_runs_at_the_chains_average_rate() {
    // Bad 1/11 of the time (p_gb / (p_gb + p_bg)), every packet lost there, mean
    // run length 1 / p_bg = 10.
    let mut m = model(ImpairConfig {
        burst: Some(GilbertElliott {
            p_good_to_bad: 0.01,
            p_bad_to_good: 0.1,
            loss_in_bad: 1.0,
        }),
        seed: 3,
        ..Default::default()
    });
    let lost: Vec<bool> = offer(&mut m, Instant::now(), 200_000, 100)
        .iter()
        .map(|f| matches!(f, Fate::Dropped(DropCause::Lost)))
        .collect();
    let total = lost.iter().filter(|l| **l).count() as f64;
    let runs = lost.windows(2).filter(|w| w[1] && !w[0]).count() as f64;
    let share = total / lost.len() as f64;
    assert!((0.075..0.107).contains(&share), "loss share {share}");
    let mean_run = total / runs;
    assert!((8.5..11.5).contains(&mean_run), "mean burst {mean_run}");
}

#[test]
fn the_bottleneck_paces_in_order_and_drops_at_the_queue_limit() {
    let mut m = model(ImpairConfig {
        rate_bps: Some(8_000_000), // 1 MB/s: 1 ms per 1000 bytes
        queue_bytes: 10_000,
        delay: Duration::from_millis(5),
        ..Default::default()
    });
    let now = Instant::now();
    let fates = offer(&mut m, now, 20, 1000);
    let times: Vec<Instant> = fates
        .iter()
        .flat_map(|f| f.deliveries().iter().map(|d| d.at))
        .collect();
    // 10 KB fit the queue (counting the datagram on the wire); the rest are dropped.
    assert_eq!(times.len(), 10);
    assert_eq!(m.stats().queue_drops, 10);
    for (i, t) in times.iter().enumerate() {
        assert_eq!(
            *t - now,
            Duration::from_millis(5 + i as u64 + 1),
            "datagram {i} leaves after {} serializations",
            i + 1
        );
    }
    assert_eq!(m.stats().max_queue_bytes, 9_000);
    // Once the queue has drained, datagrams pass again.
    let later = now + Duration::from_millis(10);
    assert!(matches!(m.decide(later, 1000), Fate::Once(_)));
}

#[test]
fn a_rate_limit_holds_the_long_run_throughput() {
    // 10 Mbit/s offered 12.5 Mbit/s: a fifth dropped once the queue is full.
    let mut m = model(ImpairConfig {
        rate_bps: Some(10_000_000),
        queue_bytes: 50_000,
        ..Default::default()
    });
    let start = Instant::now();
    let mut delivered_bytes = 0u64;
    let mut last = start;
    for i in 0..10_000u64 {
        let now = start + Duration::from_micros(800 * i); // 1250 B per 0.8 ms
        for d in m.decide(now, 1250).deliveries() {
            delivered_bytes += 1250;
            assert!(d.at >= last, "a FIFO queue keeps the order");
            last = d.at;
        }
    }
    let secs = (last - start).as_secs_f64();
    let rate = delivered_bytes as f64 * 8.0 / secs;
    assert!((9.9e6..10.01e6).contains(&rate), "{rate}");
    let drops = m.stats().queue_drops as f64 / 10_000.0;
    assert!((0.19..0.21).contains(&drops), "{drops}");
}

#[test]
fn jitter_and_reordering_reorder_without_loss() {
    let mut m = model(ImpairConfig {
        delay: Duration::from_millis(10),
        reorder: 0.2,
        reorder_delay: Duration::from_millis(3),
        seed: 5,
        ..Default::default()
    });
    let start = Instant::now();
    let mut arrivals = Vec::new();
    for i in 0..10_000u64 {
        let now = start + Duration::from_micros(100 * i);
        let f = m.decide(now, 500);
        let [d] = f.deliveries() else { panic!("{f:?}") };
        let extra = if d.reordered { 3 } else { 0 };
        assert_eq!(d.at - now, Duration::from_millis(10 + extra));
        arrivals.push((d.at, i));
    }
    let share = m.stats().reordered as f64 / 10_000.0;
    assert!((0.19..0.21).contains(&share), "{share}");
    arrivals.sort();
    let out_of_order = arrivals.windows(2).filter(|w| w[1].1 < w[0].1).count();
    assert!(out_of_order > 1000, "{out_of_order}");

    let mut j = model(ImpairConfig {
        jitter: Duration::from_millis(2),
        ..Default::default()
    });
    let now = Instant::now();
    for f in offer(&mut j, now, 1000, 100) {
        let d = f.deliveries()[0];
        assert!(d.at >= now && d.at <= now + Duration::from_millis(2));
    }
}

#[test]
fn duplicates_are_two_copies_of_one_departure() {
    let mut m = model(ImpairConfig {
        duplicate: 0.05,
        delay: Duration::from_millis(1),
        ..Default::default()
    });
    let now = Instant::now();
    let fates = offer(&mut m, now, 100_000, 1000);
    let twice = fates.iter().filter(|f| matches!(f, Fate::Twice(_))).count();
    assert_eq!(m.stats().duplicated, twice as u64);
    assert!((4_700..5_300).contains(&twice), "{twice}");
    assert_eq!(m.stats().delivered, 100_000 + twice as u64);
    for f in &fates {
        for d in f.deliveries() {
            assert_eq!(d.at, now + Duration::from_millis(1));
        }
    }
}

#[test]
fn corruption_is_dropped_by_the_checksum_unless_it_bypasses_it() {
    let now = Instant::now();
    let mut dropped = model(ImpairConfig {
        corrupt: 0.1,
        ..Default::default()
    });
    let fates = offer(&mut dropped, now, 10_000, 64);
    let cs = fates
        .iter()
        .filter(|f| **f == Fate::Dropped(DropCause::Checksum))
        .count() as u64;
    let st = dropped.stats();
    assert_eq!((st.corrupted, st.checksum_drops), (cs, cs));
    assert!((900..1100).contains(&cs), "{cs}");
    assert!(fates
        .iter()
        .all(|f| f.deliveries().iter().all(|d| d.flip.is_none())));

    let mut through = model(ImpairConfig {
        corrupt: 0.1,
        corrupt_bypasses_checksum: true,
        ..Default::default()
    });
    let flips: Vec<BitFlip> = offer(&mut through, now, 10_000, 64)
        .iter()
        .filter_map(|f| f.deliveries()[0].flip)
        .collect();
    assert_eq!(through.stats().corrupted, flips.len() as u64);
    assert_eq!(through.stats().checksum_drops, 0);
    for f in &flips {
        assert!(f.byte < 64 && f.mask.count_ones() == 1);
        let mut d = [0u8; 64];
        f.apply(&mut d);
        assert_eq!(d.iter().map(|b| b.count_ones()).sum::<u32>(), 1);
    }
}

#[test]
fn datagrams_above_the_mtu_are_dropped() {
    let mut m = model(ImpairConfig {
        mtu: Some(1500),
        ..Default::default()
    });
    let now = Instant::now();
    assert!(matches!(m.decide(now, 1500), Fate::Once(_)));
    assert_eq!(m.decide(now, 1501), Fate::Dropped(DropCause::Mtu));
    assert_eq!(m.stats().mtu_drops, 1);
}

#[test]
fn bad_configs_are_refused_with_the_field() {
    for (cfg, field) in [
        (
            ImpairConfig {
                loss: 1.5,
                ..Default::default()
            },
            "loss",
        ),
        (
            ImpairConfig {
                corrupt: -0.1,
                ..Default::default()
            },
            "corrupt",
        ),
        (
            ImpairConfig {
                burst: Some(GilbertElliott {
                    p_good_to_bad: 0.1,
                    p_bad_to_good: f64::NAN,
                    loss_in_bad: 0.5,
                }),
                ..Default::default()
            },
            "burst.p_bad_to_good",
        ),
    ] {
        let e = ImpairModel::new(cfg).unwrap_err();
        assert!(
            matches!(e, ImpairConfigError::NotAProbability { field: f, .. } if f == field),
            "{e}"
        );
        assert!(e.to_string().contains(field));
    }
    let zero_rate = ImpairConfig {
        rate_bps: Some(0),
        ..Default::default()
    };
    assert_eq!(
        ImpairModel::new(zero_rate).unwrap_err(),
        ImpairConfigError::ZeroRate
    );
    let mut m = model(ImpairConfig::default());
    assert_eq!(m.set_rate(Some(0)), Err(ImpairConfigError::ZeroRate));
    let zero_mtu = ImpairConfig {
        mtu: Some(0),
        ..Default::default()
    };
    assert_eq!(
        ImpairModel::new(zero_mtu).unwrap_err(),
        ImpairConfigError::ZeroMtu
    );
}

#[test]
fn a_backlog_seen_late_keeps_the_links_capacity_but_never_crosses_faster_than_set() {
    // 1 Gbit/s (12 µs per 1500 B), 5 ms one way. A 4 ms stall: 300 frames that
    // arrived over it are read at its end.
    let cfg = ImpairConfig {
        rate_bps: Some(1_000_000_000),
        queue_bytes: 1 << 20,
        delay: Duration::from_millis(5),
        ..Default::default()
    };
    let mut m = model(cfg.clone());
    let start = Instant::now();
    let seen = start + Duration::from_millis(4);
    let n = 300u32;
    let at: Vec<Instant> = (1..=n)
        .map(|i| {
            let arrived = start + Duration::from_millis(4) * i / n;
            let f = m.decide_seen_late(arrived, seen, 1500);
            let [d] = f.deliveries() else { panic!("{f:?}") };
            d.at
        })
        .collect();
    let delay = Duration::from_millis(5);
    assert!(
        at.iter().all(|&t| t >= seen + delay),
        "no frame crosses in less than the path's delay from when it was read"
    );
    // 300 frames take 3.6 ms of the link: all but the last (estimated to
    // arrive at the read) left the queue during the stall, so the backlog goes
    // out at once, delay after the read.
    let tx = Duration::from_micros(12);
    assert!(at[..299].iter().all(|&t| t == seen + delay));
    assert_eq!(at[299], seen + tx + delay);
    // The next frame, offered right away, finds the link free but for that
    // last one (the stall's capacity went to the backlog, it was not lost).
    let f = m.decide(seen, 1500);
    let [d] = f.deliveries() else { panic!("{f:?}") };
    assert_eq!(d.at, seen + tx * 2 + delay);

    // Stamped at the read instead (the same backlog with no estimate), the
    // frames queue behind each other: the last leaves 3.6 ms later.
    let mut late = model(cfg);
    let last = (0..n)
        .map(|_| late.decide(seen, 1500))
        .last()
        .and_then(|f| f.deliveries().first().copied())
        .expect("delivered");
    assert_eq!(last.at, seen + tx * n + delay);
}
