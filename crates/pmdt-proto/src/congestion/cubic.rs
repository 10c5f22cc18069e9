use std::time::{Duration, Instant};

use super::hystart::{HyStart, Verdict};
use super::{Controller, RateSample};
use crate::rtt::RttEstimator;

/// CUBIC's window growth constant (RFC 9438 §4.1).
const C: f64 = 0.4;
/// Multiplicative decrease factor.
const BETA: f64 = 0.7;
/// Minimum congestion window in datagrams (RFC 9002 §7.2: 2 × max_datagram_size).
const MIN_WINDOW_PACKETS: u64 = 2;

/// CUBIC (RFC 9438): slow start (HyStart++, RFC 9406, as §4.10 says it should),
/// then window growth as a cubic function of the time since the last reduction
/// (fast far below the previous maximum, flat near it), a TCP-friendly
/// (Reno-equivalent) floor, fast convergence, and a 0.7 decrease.
#[derive(Debug, Clone)]
pub(crate) struct Cubic {
    mss: u64,
    window: u64,
    ssthresh: u64,
    recovery_start: Option<Instant>,
    /// Window (MSS) before the last reduction.
    w_max: f64,
    /// Start of the current congestion-avoidance epoch.
    epoch: Option<Instant>,
    /// Time (s) the cubic curve takes to return to `w_max`.
    k: f64,
    /// Reno-equivalent window (MSS) for the TCP-friendly region.
    w_est: f64,
    /// Window (MSS) just before the last reduction (W_est's α switches to 1 above).
    cwnd_prior: f64,
    /// Time of the last ack (an idle gap shifts the epoch).
    last_ack: Option<Instant>,
    /// Since when acks arrive application-limited (the epoch is shifted by it).
    app_limited_since: Option<Instant>,
    acked: u64,
    /// The first slow start's delay-based exit.
    hystart: HyStart,
}

impl Cubic {
    /// A controller for datagrams of at most `mss` bytes (header included: the unit
    /// bytes in flight are counted in); initial window 10 MSS.
    pub(crate) fn new(mss: u64) -> Self {
        Self {
            mss,
            window: 10 * mss,
            ssthresh: u64::MAX,
            recovery_start: None,
            w_max: 0.0,
            epoch: None,
            k: 0.0,
            w_est: 0.0,
            cwnd_prior: 0.0,
            last_ack: None,
            app_limited_since: None,
            acked: 0,
            hystart: HyStart::default(),
        }
    }

    fn cwnd_mss(&self) -> f64 {
        self.window as f64 / self.mss as f64
    }

    /// K (RFC 9438 §4.2, eq. 2): the time the curve takes from `cwnd_epoch` (MSS,
    /// the window at the start of the epoch) to W_max; 0 from above W_max.
    fn k_from(&self, cwnd_epoch: f64) -> f64 {
        ((self.w_max - cwnd_epoch).max(0.0) / C).cbrt()
    }

    /// W_cubic(t) in MSS.
    fn w_cubic(&self, t: f64) -> f64 {
        C * (t - self.k).powi(3) + self.w_max
    }
}

impl Controller for Cubic {
    fn on_ack(
        &mut self,
        now: Instant,
        sent: Instant,
        bytes: u64,
        app_limited: bool,
        rtt: &RttEstimator,
    ) {
        let previous_ack = self.last_ack.replace(now);
        if app_limited {
            // RFC 9438 §5.8: the curve stands still while the sender does not use
            // its window; the time is taken out of the epoch when it does again.
            self.app_limited_since.get_or_insert(now);
            return;
        }
        if self.recovery_start.is_some_and(|r| sent <= r) {
            return;
        }
        if self.window < self.ssthresh {
            self.window += self.hystart.growth(bytes);
            return;
        }
        let srtt = rtt.smoothed().max(Duration::from_micros(1));
        // Time not spent congestion-limited: app-limited acks, or an idle gap
        // (longer than an RTT without acks: nothing was in flight).
        let paused = match (self.app_limited_since.take(), previous_ack) {
            (Some(since), _) => now.saturating_duration_since(since),
            (None, Some(last)) => now.saturating_duration_since(last).saturating_sub(srtt),
            (None, None) => Duration::ZERO,
        };
        if let Some(e) = self.epoch.as_mut() {
            if !paused.is_zero() {
                tracing::debug!(
                    paused_us = paused.as_micros() as u64,
                    window = self.window,
                    "cubic: the epoch moves on by a pause"
                );
            }
            *e = (*e + paused).min(now);
        }
        let epoch = match self.epoch {
            Some(e) => e,
            None => {
                // A new epoch starts from the current window (RFC 9438 §4.2, §4.3).
                self.epoch = Some(now);
                self.acked = 0;
                self.w_est = self.cwnd_mss();
                self.k = self.k_from(self.cwnd_mss());
                now
            }
        };
        let cwnd = self.cwnd_mss();
        // Reno-friendly estimate (RFC 9438 §4.3): α = 3(1-β)/(1+β) MSS per window
        // acked until it reaches the window before the last reduction, 1 after.
        let alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            3.0 * (1.0 - BETA) / (1.0 + BETA)
        };
        self.w_est += alpha * bytes as f64 / self.window as f64;
        let t = (now.saturating_duration_since(epoch) + srtt).as_secs_f64();
        let w_cubic = self.w_cubic(t);
        let target = w_cubic.clamp(cwnd, 1.5 * cwnd);
        let next = if w_cubic < self.w_est {
            self.w_est // TCP-friendly region
        } else {
            // Move (target - cwnd) / cwnd MSS per MSS acked.
            cwnd + (target - cwnd) / cwnd * (bytes as f64 / self.mss as f64)
        };
        self.window = (next * self.mss as f64).max(self.window as f64) as u64;
    }

    fn on_congestion_event(
        &mut self,
        now: Instant,
        largest_lost_sent: Instant,
        persistent: bool,
        _: u64,
    ) {
        if self.recovery_start.is_some_and(|r| largest_lost_sent <= r) && !persistent {
            return;
        }
        self.recovery_start = Some(now);
        self.hystart.on_congestion();
        let cwnd = self.cwnd_mss();
        self.cwnd_prior = cwnd;
        // Fast convergence: release bandwidth when the maximum keeps shrinking.
        self.w_max = if cwnd < self.w_max {
            cwnd * (1.0 + BETA) / 2.0
        } else {
            cwnd
        };
        self.window = ((cwnd * BETA) * self.mss as f64) as u64;
        self.window = self.window.max(MIN_WINDOW_PACKETS * self.mss);
        self.ssthresh = self.window;
        // From the reduced window, not W_max × β: they differ after fast convergence.
        self.k = self.k_from(self.cwnd_mss());
        self.w_est = self.cwnd_mss();
        self.epoch = None;
        self.app_limited_since = None;
        if persistent {
            self.window = MIN_WINDOW_PACKETS * self.mss;
        }
    }

    fn on_rate_sample(&mut self, _: Instant, rs: &RateSample, _: &RttEstimator) {
        if self.window >= self.ssthresh {
            return;
        }
        if self.hystart.on_rate_sample(rs) == Verdict::EnterCongestionAvoidance {
            // Congestion avoidance with no reduction behind it: the curve
            // starts at the window, convex from there (K = 0; Linux's CUBIC
            // takes its origin point at the window when W_max is below it).
            let cwnd = self.cwnd_mss();
            self.ssthresh = self.window;
            self.w_max = self.w_max.max(cwnd);
            self.epoch = None;
        }
    }

    fn window(&self) -> u64 {
        self.window
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduces_by_beta_and_regrows_concave_then_convex() {
        let mss = 1000;
        let t0 = Instant::now();
        // A long path (100 ms), where CUBIC is above the Reno-friendly window.
        let rtt = RttEstimator::new(Duration::from_millis(100));
        let mut c = Cubic::new(mss);
        c.on_ack(t0, t0, 90_000, false, &rtt);
        assert_eq!(c.window(), 100_000, "slow start");
        let t1 = t0 + Duration::from_millis(10);
        c.on_congestion_event(t1, t0, false, mss);
        assert_eq!(c.window(), 70_000, "β = 0.7");
        // Regrow, one window of acks per RTT; record the window each RTT.
        let mut t = t1;
        let mut w = vec![c.window()];
        for _ in 0..100 {
            t += Duration::from_millis(100);
            let win = c.window();
            c.on_ack(t, t, win, false, &rtt);
            w.push(c.window());
        }
        // K = cbrt(100 * 0.3 / 0.4) ≈ 4.2 s: back near w_max around then, then beyond.
        let at = |s: f64| w[(s * 10.0).round() as usize] as f64 / 1000.0;
        assert!(
            at(1.0) > 80.0 && at(1.0) < 100.0,
            "concave growth: {}",
            at(1.0)
        );
        assert!(
            (95.0..=110.0).contains(&at(4.2)),
            "plateau near w_max: {}",
            at(4.2)
        );
        assert!(at(9.0) > 130.0, "convex probing beyond w_max: {}", at(9.0));
        let slope_early = at(1.0) - at(0.5);
        let slope_plateau = at(4.4) - at(3.9);
        assert!(slope_early > slope_plateau, "flat near w_max");
        // A loss sets the new maximum; another one below it (fast convergence)
        // remembers less than the window at that loss.
        let t2 = t + Duration::from_millis(1);
        c.on_congestion_event(t2, t, false, mss);
        assert!((c.w_max - at(10.0)).abs() < 1e-9);
        let w_at_second = c.window() as f64 / 1000.0;
        let t3 = t2 + Duration::from_millis(200);
        c.on_congestion_event(t3, t2 + Duration::from_millis(100), false, mss);
        assert!((c.w_max - w_at_second * 0.85).abs() < 1e-6, "{}", c.w_max);
    }

    /// RFC 9406 through CUBIC: the round trip rising by 13 ms in slow start
    /// (a queue filling) slows the growth to a quarter, and five rounds later
    /// congestion avoidance starts from the window with no loss: W_max is the
    /// window, and the curve grows convex from it.
    #[test]
    fn a_delay_rise_leaves_slow_start_without_a_loss() {
        use crate::congestion::hystart::tests::sample;
        let mss = 1000;
        let mut t = Instant::now();
        let rtt = RttEstimator::new(Duration::from_millis(100));
        let mut c = Cubic::new(mss);
        let mut delivered = 0;
        // A round: a window of acks, 10 samples, the first ending the last round.
        let mut ack_round = |c: &mut Cubic, t: Instant, rtt_ms: u64| {
            let w = c.window();
            let start = delivered;
            for i in 0..10 {
                c.on_ack(t, t, w / 10, false, &rtt);
                delivered += w / 10;
                let prior = if i == 0 {
                    start
                } else {
                    start.saturating_sub(1)
                };
                c.on_rate_sample(t, &sample(rtt_ms, prior, delivered), &rtt);
            }
            c.window()
        };
        t += Duration::from_millis(100);
        assert_eq!(ack_round(&mut c, t, 100), 20_000, "slow start doubles");
        t += Duration::from_millis(100);
        assert_eq!(ack_round(&mut c, t, 100), 40_000);
        t += Duration::from_millis(100);
        // 113 ms ≥ 100 + 12.5 at the round's eighth sample: the rest of the
        // round grows a quarter as fast.
        let w = ack_round(&mut c, t, 113);
        assert!((60_000..80_000).contains(&w), "{w}");
        assert_eq!(c.ssthresh, u64::MAX, "still slow start (conservative)");
        let before = c.window();
        t += Duration::from_millis(100);
        let w = ack_round(&mut c, t, 113);
        assert_eq!(w - before, before / 4, "a quarter of a window per round");
        for _ in 0..5 {
            t += Duration::from_millis(100);
            ack_round(&mut c, t, 113);
        }
        let at_exit = c.ssthresh;
        assert!(
            at_exit < u64::MAX && c.window() >= at_exit,
            "congestion avoidance, no loss"
        );
        assert!(
            (c.w_max - at_exit as f64 / mss as f64).abs() < 1e-9,
            "W_max is the window at the exit"
        );
        // Convex growth from the exit window: slow at first, faster later.
        let mut w = vec![at_exit];
        for _ in 0..60 {
            t += Duration::from_millis(100);
            let win = c.window();
            c.on_ack(t, t, win, false, &rtt);
            w.push(c.window());
        }
        let first = w[20] - w[0];
        let last = w[60] - w[40];
        assert!(
            w[60] > at_exit && last > first,
            "convex: {first} then {last} bytes per 2 s"
        );
    }

    /// One RTT of acks for a whole window at `t`.
    fn round(c: &mut Cubic, t: Instant, rtt: &RttEstimator) {
        let w = c.window();
        c.on_ack(t, t, w, false, rtt);
    }

    /// #11 item 12 (RFC 9438 §4.2): K is the time for W_cubic to climb from the
    /// window at the start of the epoch to W_max, also after fast convergence
    /// lowered W_max: W_cubic(0) equals the reduced window.
    #[test]
    fn k_matches_the_reduced_window_after_fast_convergence() {
        let mss = 1000;
        let t0 = Instant::now();
        let rtt = RttEstimator::new(Duration::from_millis(100));
        let mut c = Cubic::new(mss);
        c.on_ack(t0, t0, 90_000, false, &rtt);
        let t1 = t0 + Duration::from_millis(10);
        c.on_congestion_event(t1, t0, false, mss);
        assert!((c.w_cubic(0.0) - c.cwnd_mss()).abs() < 1e-6);
        // A second loss below W_max: fast convergence.
        let t2 = t1 + Duration::from_millis(300);
        c.on_congestion_event(t2, t1 + Duration::from_millis(200), false, mss);
        assert!(
            c.w_max < 70.0,
            "fast convergence lowered W_max: {}",
            c.w_max
        );
        assert!(
            (c.w_cubic(0.0) - c.cwnd_mss()).abs() < 1e-6,
            "W_cubic(0) = {} but the window is {}",
            c.w_cubic(0.0),
            c.cwnd_mss()
        );
    }

    /// #11 item 12 (RFC 9438 §4.3): in the Reno-friendly region W_est grows by
    /// α = 3(1-β)/(1+β) per RTT until it reaches the window before the reduction,
    /// then by 1 MSS per RTT, as Reno would.
    #[test]
    fn reno_friendly_growth_switches_to_one_mss_per_rtt_above_the_old_window() {
        let mss = 1000;
        let t0 = Instant::now();
        // A short path: CUBIC's curve is slow there, the Reno-friendly estimate rules.
        let rtt = RttEstimator::new(Duration::from_millis(1));
        let mut c = Cubic::new(mss);
        c.on_ack(t0, t0, 10_000, false, &rtt);
        assert_eq!(c.window(), 20_000);
        let mut t = t0 + Duration::from_millis(1);
        c.on_congestion_event(t, t0, false, mss);
        assert_eq!(c.window(), 14_000);
        while c.window() < 21_000 {
            t += Duration::from_millis(1);
            round(&mut c, t, &rtt);
            assert!(t - t0 < Duration::from_millis(100), "no growth");
        }
        let before = c.window();
        for _ in 0..10 {
            t += Duration::from_millis(1);
            round(&mut c, t, &rtt);
        }
        let grown = (c.window() - before) as f64 / mss as f64;
        assert!(
            (9.0..=11.0).contains(&grown),
            "{grown} MSS in 10 RTTs above the old window (Reno: 10)"
        );
    }

    /// #11 item 12 (RFC 9438 §5.8): time spent application-limited or idle does
    /// not count in the cubic curve: after a pause the window grows as it would
    /// have without it, not by a jump.
    #[test]
    fn an_idle_or_app_limited_pause_does_not_make_the_window_jump() {
        let mss = 1000;
        let t0 = Instant::now();
        let rtt = RttEstimator::new(Duration::from_millis(100));
        for app_limited_acks in [false, true] {
            let mut c = Cubic::new(mss);
            c.on_ack(t0, t0, 90_000, false, &rtt);
            let mut t = t0 + Duration::from_millis(10);
            c.on_congestion_event(t, t0, false, mss);
            for _ in 0..3 {
                t += Duration::from_millis(100);
                round(&mut c, t, &rtt);
            }
            let before = c.window();
            if app_limited_acks {
                for _ in 0..100 {
                    t += Duration::from_millis(100);
                    c.on_ack(t, t, mss, true, &rtt);
                }
            } else {
                t += Duration::from_secs(10);
            }
            t += Duration::from_millis(100);
            round(&mut c, t, &rtt);
            let step = c.window() - before;
            assert!(
                step <= 4 * mss,
                "window jumped by {step} bytes after a pause (app-limited acks: {app_limited_acks})"
            );
        }
    }
}
