//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation): per sent
//! packet, a snapshot of how much had been delivered and when; per ack, a
//! [`RateSample`] of the rate at which the path delivered data over the interval the
//! newest acknowledged packet spanned.
//!
//! The connection owns one [`DeliveryRateSampler`], stores the [`SendSnapshot`] it
//! returns with each tracked packet, reports acks and losses to it, and hands the
//! sample it builds once per ack to the controller
//! ([`super::Controller::on_rate_sample`]).

use std::time::{Duration, Instant};

use super::forward_delay::ForwardDelay;
use super::initial_train::InitialTrain;
use super::standing_rtt::{self, StandingRtt};

/// A sender that came back to its pacer at least this late was off its core
/// (a poller sharing it with another busy process loses it for a scheduler
/// slice, 1-10 ms, or tens of milliseconds on a busy VM). While it was away,
/// the bottleneck drained up to that much of the queue its flows keep (all of
/// them stopped together), and the first packets it sends on its return see
/// the queue that much shallower. Under this, the lateness is the poll loop's
/// own granularity.
pub(crate) const LATE_SEND: Duration = Duration::from_millis(1);

/// The connection's delivery state when a packet was sent (draft §3.2, "P.delivered",
/// "P.delivered_time", "P.first_sent_time", "P.is_app_limited"), kept with the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SendSnapshot {
    /// Bytes delivered (acknowledged) when the packet was sent.
    pub(crate) delivered: u64,
    /// When `delivered` was last updated, at send time.
    pub(crate) delivered_time: Instant,
    /// Send time of the first packet of the flight this packet belongs to.
    pub(crate) first_sent_time: Instant,
    /// Sent while the application (or the peer's credit), not the network, limited
    /// the sender.
    pub(crate) app_limited: bool,
    /// Sent while the receiver's credit limited the sender.
    pub(crate) credit_limited: bool,
    /// Bytes declared lost when the packet was sent.
    pub(crate) lost: u64,
    /// Bytes in flight when the packet was sent (itself included).
    pub(crate) tx_in_flight: u64,
    /// Whether the packet is one of the initial window's train.
    pub(crate) in_train: bool,
    /// Sent ahead of the pacing schedule to make up for a sender that came
    /// back late (off its core): the lateness it makes up for. See [`RateSample::sent_catching_up`].
    pub(crate) catching_up: Option<Duration>,
}

/// One delivery-rate sample, built per ack that acknowledged new data (draft §3.3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RateSample {
    /// Delivered bytes per second over `interval`; 0 when the interval was too short
    /// to be meaningful.
    pub(crate) delivery_rate: u64,
    /// Bytes delivered over the interval.
    pub(crate) delivered: u64,
    /// The sampling interval: max(send elapsed, ack elapsed).
    pub(crate) interval: Duration,
    /// The newest acknowledged packet was sent while the sender was not using the
    /// network fully: the rate is a lower bound only.
    pub(crate) is_app_limited: bool,
    /// The newest acknowledged packet was sent while the receiver's credit limited
    /// the sender: the rate says how fast the receiver grants credit, not how fast
    /// the path delivers.
    pub(crate) is_credit_limited: bool,
    /// RTT of the newest acknowledged packet as the path made it: less what
    /// the forward one-way delay shows was not the path's (the sender reading
    /// the ack late, the receiver's ack delay: see [`ForwardDelay`]).
    pub(crate) rtt: Duration,
    /// The standing RTT ([`StandingRtt`]): the smallest `rtt` of the last few
    /// milliseconds, what a sample by sample check of a queue reads (a
    /// receiver that took in a scheduler slice's datagrams at once shows none).
    pub(crate) standing_rtt: Duration,
    /// RTT of the newest acknowledged packet as read: from its send to the
    /// ack's processing.
    pub(crate) raw_rtt: Duration,
    /// Total bytes delivered at the newest acknowledged packet's send time (the
    /// round-trip counter of BBR compares against this).
    pub(crate) prior_delivered: u64,
    /// Total bytes delivered so far.
    pub(crate) total_delivered: u64,
    /// Bytes newly acknowledged by this ack.
    pub(crate) newly_acked: u64,
    /// Bytes newly declared lost since the previous sample.
    pub(crate) newly_lost: u64,
    /// Bytes declared lost between the newest acknowledged packet's send and now.
    pub(crate) lost: u64,
    /// Bytes in flight when the newest acknowledged packet was sent.
    pub(crate) tx_in_flight: u64,
    /// Bytes in flight now (after the ack and loss detection).
    pub(crate) bytes_in_flight: u64,
    /// The newest acknowledged packet was sent making up for a sender that
    /// came back late, off its core for [`LATE_SEND`] or more: the lateness
    /// the catch-up makes up for (how late, up to the pacer's catch-up
    /// limit). Its RTT shows the queue the sender's own absence drained, not the queue
    /// that stands.
    pub(crate) sent_catching_up: Option<Duration>,
}

/// Connection-wide delivery-rate state (draft §3.1, "C.delivered" …).
#[derive(Debug, Clone, Default)]
pub(crate) struct DeliveryRateSampler {
    delivered: u64,
    delivered_time: Option<Instant>,
    first_sent_time: Option<Instant>,
    /// Nonzero while app-limited: the `delivered` value after which samples are
    /// network-limited again (draft §3.4, "C.app_limited").
    app_limited_until: u64,
    /// The same for the receiver's credit.
    credit_limited_until: u64,
    lost: u64,
    lost_since_sample: u64,
    acked_since_sample: u64,
    /// The newest packet acknowledged since the last sample: its snapshot and send time.
    newest: Option<(SendSnapshot, Instant)>,
    /// The initial window's train and, once measured, its rate until taken
    /// ([`DeliveryRateSampler::take_train_rate`]).
    train: InitialTrain,
    train_rate: Option<u64>,
    /// The floors that take the sender's lateness out of RTT samples.
    forward: ForwardDelay,
    /// The newest packet an ack acknowledged, by its send time, and its
    /// one-way delay by the two clocks (µs, wrapping).
    newest_one_way: Option<(Instant, u32)>,
    /// The samples' smallest of the last few milliseconds.
    standing: StandingRtt,
    /// The samples' smallest of the last round (a window of the minimum RTT),
    /// as far as a [`StandingRtt`] keeps them (see [`Self::kept_queue`]).
    round: StandingRtt,
    /// The last sample's queue that stood all round (that smallest less the
    /// minimum RTT), and when it was taken.
    kept_queue: Option<(Instant, Duration)>,
}

impl DeliveryRateSampler {
    /// A packet of `bytes` is sent at `now` with `in_flight_before` bytes already in
    /// flight; returns the snapshot to store with it (draft §3.2, "OnPacketSent").
    pub(crate) fn on_sent(
        &mut self,
        now: Instant,
        bytes: u64,
        in_flight_before: u64,
        data: bool,
        late: Option<Duration>,
    ) -> SendSnapshot {
        let in_train = data && self.train.on_sent(now, bytes, self.delivered);
        if in_flight_before == 0 || self.first_sent_time.is_none() {
            self.first_sent_time = Some(now);
            self.delivered_time = Some(now);
        }
        SendSnapshot {
            delivered: self.delivered,
            delivered_time: self.delivered_time.unwrap_or(now),
            first_sent_time: self.first_sent_time.unwrap_or(now),
            app_limited: self.app_limited_until != 0,
            credit_limited: self.credit_limited_until != 0,
            lost: self.lost,
            tx_in_flight: in_flight_before + bytes,
            in_train,
            catching_up: late.filter(|l| *l >= LATE_SEND),
        }
    }

    /// The sender has nothing to send (or no credit) with `bytes_in_flight` in flight
    /// and window to spare: samples until this flight is delivered are app-limited
    /// (draft §3.4).
    pub(crate) fn on_app_limited(&mut self, bytes_in_flight: u64) {
        self.app_limited_until = (self.delivered + bytes_in_flight).max(1);
    }

    /// The sender has data but no credit with `bytes_in_flight` in flight: samples
    /// until this flight is delivered are credit-limited.
    pub(crate) fn on_credit_limited(&mut self, bytes_in_flight: u64) {
        self.credit_limited_until = (self.delivered + bytes_in_flight).max(1);
    }

    /// A packet of the initial window's train (its snapshot's `in_train`), of
    /// `bytes`, was declared lost (besides [`DeliveryRateSampler::on_lost`]).
    pub(crate) fn on_train_lost(&mut self, bytes: u64) {
        if let Some(rate) = self.train.on_lost(bytes) {
            self.train_rate = Some(rate);
        }
    }

    /// A sampler; `initial_train`: measure the initial window's train (see
    /// [`InitialTrain`]; the connection then sends it as one burst).
    pub(crate) fn new(initial_train: bool) -> Self {
        Self {
            train: if initial_train {
                InitialTrain::Forming
            } else {
                InitialTrain::Done
            },
            ..Self::default()
        }
    }

    /// The bottleneck's rate from the initial window's acknowledgments
    /// ([`InitialTrain`]), bytes/s, once, as soon as the train is measured:
    /// by its last acknowledgment, or by the loss of a datagram near its end,
    /// which too few datagrams follow for the acknowledgments to declare: a
    /// timer does, with no acknowledgment (and so no rate sample) due before
    /// the flight after the train comes back, a round trip later.
    pub(crate) fn take_train_rate(&mut self) -> Option<u64> {
        self.train_rate.take()
    }

    /// Whether nothing was delivered yet: the initial window is still the only
    /// flight (sent as one burst, the train [`InitialTrain`] reads).
    pub(crate) fn nothing_delivered(&self) -> bool {
        self.delivered == 0
    }

    /// Whether samples are currently marked app-limited.
    #[cfg(test)]
    pub(crate) fn is_app_limited(&self) -> bool {
        self.app_limited_until != 0
    }

    /// A packet of `bytes` sent at `sent` with snapshot `snap` was newly acknowledged
    /// at `now` (draft §3.3, "UpdateRateSample"); the peer received it at
    /// `received_at` by its clock (µs, wrapping).
    pub(crate) fn on_acked(
        &mut self,
        now: Instant,
        sent: Instant,
        bytes: u64,
        snap: &SendSnapshot,
        received_at: u32,
    ) {
        self.delivered += bytes;
        self.delivered_time = Some(now);
        if snap.in_train {
            if let Some(rate) = self.train.on_acked(received_at, bytes, self.delivered) {
                self.train_rate = Some(rate);
            }
        }
        self.acked_since_sample += bytes;
        let newer = self.newest.is_none_or(|(n, n_sent)| {
            snap.delivered > n.delivered || (snap.delivered == n.delivered && sent > n_sent)
        });
        if newer {
            self.newest = Some((*snap, sent));
            // The next flight's sending interval starts with this packet.
            self.first_sent_time = Some(sent);
        }
    }

    /// An ack's newest packet (its largest number, newly acknowledged), sent at
    /// `sent`, was taken in by the receiver `one_way` after its send
    /// timestamp (the two clocks' difference, µs, wrapping): the sample it
    /// gives gets its RTT as the path made it ([`RateSample::rtt`]).
    pub(crate) fn on_newest_received(&mut self, sent: Instant, one_way: u32) {
        self.newest_one_way = Some((sent, one_way));
    }

    /// Bytes delivered (acknowledged) so far ("C.delivered").
    pub(crate) fn delivered(&self) -> u64 {
        self.delivered
    }

    /// `bytes` were declared lost.
    pub(crate) fn on_lost(&mut self, bytes: u64) {
        self.lost += bytes;
        self.lost_since_sample += bytes;
    }

    /// The queue the bottleneck kept all of the last round, as the newest
    /// sample read it: the round's smallest RTT less the minimum RTT passed
    /// to [`Self::take_sample`] (the path RTTs, so a sender reading acks late
    /// adds none). Zero without a sample in the last round, `round` long,
    /// before `now`: the queue may have drained since. A sender away for less
    /// than this left the link busy (with its own queue or other flows'), so
    /// it has nothing to make up.
    ///
    /// What it reads, exactly (the form session 101 measured):
    /// - The round's samples as a [`StandingRtt`] keeps them: at most 64 that
    ///   rise one after another. A longer rise (a catch-up burst's samples,
    ///   each queued behind the last) pushes out the smallest before it, and
    ///   the queue reads higher than the round's smallest.
    /// - The packets sent catching up count too. They saw the queue the
    ///   sender's last absence drained, so the queue reads lower than the
    ///   one that stood before it.
    /// - A single sample after a silence counts as a round's.
    ///
    /// A form without these (the smallest per quarter round, packets sent
    /// catching up left out, samples over most of a round required) let
    /// four BBR flows from a core-sharing sender drift apart in the
    /// simulator (Jain 0.652-0.985 over 12 seeds, against 0.938-0.998), and
    /// did not land (docs/bench/ab-s101).
    pub(crate) fn kept_queue(&self, now: Instant, round: Duration) -> Duration {
        match self.kept_queue {
            Some((at, q)) if now.saturating_duration_since(at) <= round => q,
            _ => Duration::ZERO,
        }
    }

    /// Sets the kept queue as a sample at `at` would (connection tests).
    #[cfg(test)]
    pub(crate) fn set_kept_queue(&mut self, at: Instant, queue: Duration) {
        self.kept_queue = Some((at, queue));
    }

    /// Builds the sample for the acks since the last call (draft §3.3,
    /// "GenerateRateSample"); `None` when no packet was newly acknowledged. Intervals
    /// shorter than `min_rtt` give a zero rate (they cannot be trusted, §3.3.4).
    pub(crate) fn take_sample(
        &mut self,
        now: Instant,
        min_rtt: Duration,
        bytes_in_flight: u64,
    ) -> Option<RateSample> {
        let (snap, sent) = self.newest.take()?;
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        if self.credit_limited_until != 0 && self.delivered > self.credit_limited_until {
            self.credit_limited_until = 0;
        }
        let send_elapsed = sent.saturating_duration_since(snap.first_sent_time);
        let ack_elapsed = self
            .delivered_time
            .unwrap_or(now)
            .saturating_duration_since(snap.delivered_time);
        let interval = send_elapsed.max(ack_elapsed);
        let delivered = self.delivered - snap.delivered;
        let delivery_rate = if interval.is_zero() || interval < min_rtt {
            0
        } else {
            (delivered as u128 * 1_000_000_000 / interval.as_nanos()).min(u64::MAX as u128) as u64
        };
        let raw_rtt = now.saturating_duration_since(sent);
        let path_rtt = match self.newest_one_way.take() {
            Some((at, one_way)) if at == sent => self.forward.path_rtt(now, raw_rtt, one_way),
            _ => raw_rtt,
        };
        let standing_rtt = self
            .standing
            .update(now, path_rtt, standing_rtt::window(min_rtt));
        let round_floor = self.round.update(now, path_rtt, min_rtt);
        self.kept_queue = Some((now, round_floor.saturating_sub(min_rtt)));
        let s = RateSample {
            delivery_rate,
            delivered,
            interval,
            is_app_limited: snap.app_limited,
            is_credit_limited: snap.credit_limited,
            rtt: path_rtt,
            standing_rtt,
            raw_rtt,
            prior_delivered: snap.delivered,
            total_delivered: self.delivered,
            newly_acked: self.acked_since_sample,
            newly_lost: self.lost_since_sample,
            lost: self.lost - snap.lost,
            tx_in_flight: snap.tx_in_flight,
            bytes_in_flight,
            sent_catching_up: snap.catching_up,
        };
        self.acked_since_sample = 0;
        self.lost_since_sample = 0;
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_flight_measures_the_ack_rate() {
        // 10 packets of 1000 bytes sent 1 ms apart, each acknowledged 100 ms later:
        // the path delivers 1000 bytes per ms.
        let t0 = Instant::now();
        let ms = Duration::from_millis(1);
        let mut s = DeliveryRateSampler::default();
        let mut snaps = Vec::new();
        for i in 0..10u64 {
            snaps.push((
                t0 + ms * i as u32,
                s.on_sent(t0 + ms * i as u32, 1000, i * 1000, true, None),
            ));
        }
        let mut last = None;
        for (i, (sent, snap)) in snaps.iter().enumerate() {
            let now = t0 + ms * (100 + i as u32);
            s.on_acked(now, *sent, 1000, snap, 0);
            last = s.take_sample(now, Duration::from_millis(5), 0);
        }
        let r = last.unwrap();
        assert!(!r.is_app_limited);
        // The whole first flight was sent before any ack: the interval runs from
        // the first send to the last ack (109 ms) and covers all 10 000 bytes.
        assert_eq!(r.delivered, 10_000);
        assert_eq!(r.interval, ms * 109);
        assert_eq!(r.delivery_rate, 10_000 * 1000 / 109);
        assert_eq!(r.rtt, Duration::from_millis(100));
    }

    /// Sends a packet at `sent`, acknowledged at `now`; the receiver took it
    /// in `one_way_us` after its send timestamp (by the two clocks). Returns
    /// the sample's RTT and standing RTT.
    fn acked_rtt(
        s: &mut DeliveryRateSampler,
        sent: Instant,
        now: Instant,
        one_way_us: u32,
    ) -> (Duration, Duration) {
        let snap = s.on_sent(sent, 1000, 0, true, None);
        s.on_acked(now, sent, 1000, &snap, 0);
        s.on_newest_received(sent, one_way_us);
        let r = s
            .take_sample(now, Duration::from_millis(100), 0)
            .expect("a sample");
        (r.rtt, r.standing_rtt)
    }

    /// The sender reads an ack 5 ms late (it was off its core): the forward
    /// one-way delay shows no queue, and neither does the sample.
    #[test]
    fn an_ack_the_sender_read_late_shows_no_queue() {
        let t0 = Instant::now();
        let ms = Duration::from_millis(1);
        let mut s = DeliveryRateSampler::default();
        let path = |(rtt, _): (Duration, Duration)| rtt;
        assert_eq!(path(acked_rtt(&mut s, t0, t0 + ms * 100, 50_000)), ms * 100);
        let t1 = t0 + ms * 50;
        assert_eq!(path(acked_rtt(&mut s, t1, t1 + ms * 105, 50_000)), ms * 100);
        // A queue at the bottleneck shows in both, and in the sample.
        let t2 = t0 + ms * 100;
        assert_eq!(
            acked_rtt(&mut s, t2, t2 + ms * 108, 58_000),
            (ms * 108, ms * 108)
        );
    }

    /// The receiver was off its core for 4 ms and took in four packets sent a
    /// millisecond apart at once: their RTTs (and one-way delays) fall in a
    /// sawtooth, read together; their standing RTT shows no queue.
    #[test]
    fn a_batch_the_receiver_took_in_late_shows_no_queue() {
        let t0 = Instant::now();
        let ms = Duration::from_millis(1);
        let mut s = DeliveryRateSampler::default();
        acked_rtt(&mut s, t0, t0 + ms * 100, 50_000);
        let read = t0 + ms * 105;
        for late in (0..4u32).rev() {
            let sent = read - ms * (100 + late);
            let (rtt, standing) = acked_rtt(&mut s, sent, read, 50_000 + late * 1000);
            assert_eq!(rtt, ms * (100 + late));
            assert_eq!(standing, ms * 100);
        }
    }

    /// A queue that stood all round is kept; one that drained within the
    /// round is not; none is read once the newest sample is a round old.
    #[test]
    fn the_kept_queue_is_the_rounds_smallest() {
        let t0 = Instant::now();
        let ms = Duration::from_millis(1);
        let round = ms * 100;
        let mut s = DeliveryRateSampler::default();
        acked_rtt(&mut s, t0, t0 + ms * 100, 50_000);
        assert_eq!(s.kept_queue(t0 + ms * 100, round), Duration::ZERO);
        // 6-9 ms of queue in every sample of the next round (the first of
        // them over a round after the unqueued one): 6 ms kept.
        for (i, q) in [9u32, 6, 8, 7].into_iter().enumerate() {
            let sent = t0 + ms * (120 + 25 * i as u32);
            acked_rtt(&mut s, sent, sent + ms * (100 + q), 50_000 + q * 1000);
        }
        let last = t0 + ms * (195 + 107);
        assert_eq!(s.kept_queue(last, round), ms * 6);
        // A sample with no queue (read 4 ms late by the sender, as the
        // one-way delay shows): the queue drained, none is kept.
        let sent = last - ms * 100;
        acked_rtt(&mut s, sent, last + ms * 4, 50_000);
        assert_eq!(s.kept_queue(last + ms * 4, round), Duration::ZERO);
        // A queue of 3 ms a round later: the round still holds the drained one.
        acked_rtt(&mut s, last, last + ms * 103, 53_000);
        assert_eq!(s.kept_queue(last + ms * 103, round), Duration::ZERO);
        // A round without a sample: the queue may have drained since.
        let (t, q) = (last + ms * 300, 7u32);
        acked_rtt(&mut s, t - ms * 107, t, 50_000 + q * 1000);
        assert_eq!(s.kept_queue(t, round), ms * 7);
        assert_eq!(s.kept_queue(t + round + ms, round), Duration::ZERO);
    }

    #[test]
    fn app_limited_marks_until_the_flight_is_delivered() {
        let t0 = Instant::now();
        let mut s = DeliveryRateSampler::default();
        s.on_app_limited(0);
        let a = s.on_sent(t0, 1000, 0, true, None);
        assert!(a.app_limited);
        s.on_acked(t0 + Duration::from_millis(10), t0, 1000, &a, 0);
        let r = s
            .take_sample(t0 + Duration::from_millis(10), Duration::ZERO, 0)
            .unwrap();
        assert!(r.is_app_limited);
        assert!(
            !s.is_app_limited(),
            "cleared once the marked flight is delivered"
        );
        let b = s.on_sent(t0 + Duration::from_millis(10), 1000, 0, true, None);
        assert!(!b.app_limited);
    }

    /// A packet sent catching up after a late wake-up of [`LATE_SEND`] or more
    /// is marked, and so is the sample its acknowledgment gives; a shorter
    /// lateness (the poll loop's granularity) is not.
    #[test]
    fn packets_sent_catching_up_after_a_long_absence_are_marked() {
        let t0 = Instant::now();
        let mut s = DeliveryRateSampler::default();
        let short = s.on_sent(t0, 1000, 0, true, Some(LATE_SEND / 2));
        assert_eq!(short.catching_up, None);
        let later = t0 + Duration::from_micros(10);
        let long = s.on_sent(later, 1000, 1000, true, Some(LATE_SEND));
        assert_eq!(long.catching_up, Some(LATE_SEND));
        let now = t0 + Duration::from_millis(10);
        s.on_acked(now, t0, 1000, &short, 0);
        s.on_acked(now, later, 1000, &long, 0);
        let r = s.take_sample(now, Duration::ZERO, 0).unwrap();
        assert_eq!(
            r.sent_catching_up,
            Some(LATE_SEND),
            "the newest acknowledged was sent catching up"
        );
        let on_time = s.on_sent(now, 1000, 0, true, None);
        s.on_acked(now + Duration::from_millis(10), now, 1000, &on_time, 0);
        let r = s
            .take_sample(now + Duration::from_millis(10), Duration::ZERO, 0)
            .unwrap();
        assert_eq!(r.sent_catching_up, None);
    }
}
