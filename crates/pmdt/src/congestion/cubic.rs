use std::time::{Duration, Instant};

use super::Controller;
use crate::rtt::RttEstimator;

/// CUBIC's window growth constant (RFC 9438 §4.1).
const C: f64 = 0.4;
/// Multiplicative decrease factor.
const BETA: f64 = 0.7;
/// Minimum congestion window in datagrams (RFC 9002 §7.2: 2 × max_datagram_size).
const MIN_WINDOW_PACKETS: u64 = 2;

/// CUBIC (RFC 9438): slow start, then window growth as a cubic function of the time
/// since the last reduction (fast far below the previous maximum, flat near it), a
/// TCP-friendly (Reno-equivalent) floor, fast convergence, and a 0.7 decrease.
#[derive(Debug, Clone)]
pub struct Cubic {
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
    acked: u64,
}

impl Cubic {
    /// A controller for datagrams of at most `mss` bytes (header included: the unit
    /// bytes in flight are counted in); initial window 10 MSS.
    pub fn new(mss: u64) -> Self {
        Self {
            mss,
            window: 10 * mss,
            ssthresh: u64::MAX,
            recovery_start: None,
            w_max: 0.0,
            epoch: None,
            k: 0.0,
            w_est: 0.0,
            acked: 0,
        }
    }

    fn cwnd_mss(&self) -> f64 {
        self.window as f64 / self.mss as f64
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
        if app_limited || self.recovery_start.is_some_and(|r| sent <= r) {
            return;
        }
        if self.window < self.ssthresh {
            self.window += bytes;
            return;
        }
        let epoch = *self.epoch.get_or_insert_with(|| {
            self.acked = 0;
            now
        });
        if self.w_est == 0.0 {
            self.w_est = self.cwnd_mss();
        }
        let cwnd = self.cwnd_mss();
        // Reno-friendly estimate: grows by 3(1-β)/(1+β) MSS per window acked.
        self.w_est += 3.0 * (1.0 - BETA) / (1.0 + BETA) * bytes as f64 / self.window as f64;
        let t = (now - epoch + rtt.smoothed().max(Duration::from_micros(1))).as_secs_f64();
        let target = self.w_cubic(t).clamp(cwnd, 1.5 * cwnd);
        let next = if target < self.w_est {
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
        let cwnd = self.cwnd_mss();
        // Fast convergence: release bandwidth when the maximum keeps shrinking.
        self.w_max = if cwnd < self.w_max {
            cwnd * (1.0 + BETA) / 2.0
        } else {
            cwnd
        };
        self.window = ((cwnd * BETA) * self.mss as f64) as u64;
        self.window = self.window.max(MIN_WINDOW_PACKETS * self.mss);
        self.ssthresh = self.window;
        self.k = (self.w_max * (1.0 - BETA) / C).cbrt();
        self.w_est = self.cwnd_mss();
        self.epoch = None;
        if persistent {
            self.window = MIN_WINDOW_PACKETS * self.mss;
        }
    }

    fn window(&self) -> u64 {
        self.window
    }

    fn name(&self) -> &'static str {
        "cubic"
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
}
