//! The cost of a poll iteration as a function of its burst size, learned online.
//!
//! An iteration that handles `n` packets costs about `a + b·n` cycles. The estimator
//! keeps, per burst size, the total cycles and count of iterations (with exponential
//! forgetting so a change in per-packet work is tracked), and fits `a`, `b` by weighted
//! least squares over the non-empty sizes. The full-burst cost `a + b·N` gives the
//! capacity: `N / (a + b·N)` packets per cycle.

/// Per-burst-size accumulators and the fitted line.
#[derive(Debug, Clone)]
pub struct CostModel {
    cycles: Vec<f64>,
    count: Vec<f64>,
    a: f64,
    b: f64,
    fitted: bool,
    /// Burst sizes with enough samples behind the last fit.
    support: usize,
}

impl CostModel {
    /// A model for bursts of up to `max` packets.
    pub fn new(max: u32) -> Self {
        let n = max as usize + 1;
        Self {
            cycles: vec![0.0; n],
            count: vec![0.0; n],
            a: 0.0,
            b: 0.0,
            fitted: false,
            support: 0,
        }
    }

    /// Adds the totals of one report period: `cycles[k]`, `count[k]` per burst size k.
    pub fn absorb(&mut self, cycles: &[u64], count: &[u64], forgetting: f64) {
        for k in 0..self.cycles.len() {
            self.cycles[k] = self.cycles[k] * forgetting + cycles[k] as f64;
            self.count[k] = self.count[k] * forgetting + count[k] as f64;
        }
        self.fit();
    }

    fn fit(&mut self) {
        // Weighted least squares of mean cycles vs k over k >= 1, weights = counts.
        let (mut sw, mut sx, mut sy, mut sxx, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
        let mut distinct = 0;
        self.support = 0;
        for k in 1..self.cycles.len() {
            let w = self.count[k];
            if w < 1e-9 {
                continue;
            }
            distinct += 1;
            if w >= 100.0 {
                self.support += 1;
            }
            let y = self.cycles[k] / w;
            let x = k as f64;
            sw += w;
            sx += w * x;
            sy += w * y;
            sxx += w * x * x;
            sxy += w * x * y;
        }
        if distinct == 0 {
            return;
        }
        let den = sw * sxx - sx * sx;
        if distinct >= 2 && den.abs() > 1e-9 {
            let b = (sw * sxy - sx * sy) / den;
            let a = (sy - b * sx) / sw;
            if b > 0.0 {
                self.a = a.max(0.0);
                self.b = b;
                self.fitted = true;
                return;
            }
        }
        // One burst size only (or a degenerate fit): attribute it all per packet,
        // with the empty-poll cost as the fixed part.
        let k = sx / sw;
        let y = sy / sw;
        let a = self.empty_cost().unwrap_or(0.0).min(y);
        self.a = a;
        self.b = ((y - a) / k).max(1e-9);
        self.fitted = true;
    }

    /// Mean cycles of an empty poll, if seen.
    pub fn empty_cost(&self) -> Option<f64> {
        (self.count[0] > 0.5).then(|| self.cycles[0] / self.count[0])
    }

    /// The fixed per-burst overhead to correct busy time with: the fitted `a` when at
    /// least three burst sizes support the fit, else the empty-poll cost (a burst
    /// costs at least a poll). Never more than the cheapest observed burst.
    pub fn fixed_cost(&self) -> f64 {
        let e = self.empty_cost().unwrap_or(0.0);
        let a = if self.support >= 3 { self.a.max(e) } else { e };
        let cheapest = (1..self.cycles.len())
            .filter(|k| self.count[*k] >= 1.0)
            .map(|k| self.cycles[k] / self.count[k])
            .fold(f64::INFINITY, f64::min);
        a.min(cheapest)
    }

    /// Whether a fit exists.
    pub fn is_fitted(&self) -> bool {
        self.fitted
    }

    /// Fixed cycles per non-empty iteration.
    pub fn a(&self) -> f64 {
        self.a
    }

    /// Cycles per packet.
    pub fn b(&self) -> f64 {
        self.b
    }

    /// Predicted cycles of an iteration handling `n` packets.
    pub fn cost(&self, n: u32) -> f64 {
        if n == 0 {
            return self.empty_cost().unwrap_or(self.a);
        }
        self.a + self.b * n as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_a_line_and_tracks_a_change() {
        let mut m = CostModel::new(32);
        let mut cyc = vec![0u64; 33];
        let mut cnt = vec![0u64; 33];
        for k in 1..=32u64 {
            cnt[k as usize] = 100;
            cyc[k as usize] = 100 * (200 + 50 * k);
        }
        m.absorb(&cyc, &cnt, 1.0);
        assert!((m.a() - 200.0).abs() < 1e-6 && (m.b() - 50.0).abs() < 1e-6);
        // Per-packet work doubles: with forgetting the model follows.
        for k in 1..=32u64 {
            cyc[k as usize] = 100 * (200 + 100 * k);
        }
        for _ in 0..300 {
            m.absorb(&cyc, &cnt, 0.9);
        }
        assert!((m.b() - 100.0).abs() < 0.5, "{}", m.b());
    }
}
