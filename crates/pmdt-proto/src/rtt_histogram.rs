//! RTT samples in log-spaced buckets (4 per octave from 1 µs to ~70 s), for
//! percentiles without keeping samples: fixed size, no allocation.

use serde::{Deserialize, Serialize};

const BUCKETS: usize = 104;

/// A histogram of RTT samples.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RttHistogram {
    #[serde(with = "serde_counts")]
    counts: [u32; BUCKETS],
    total: u64,
}

mod serde_counts {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(c: &[u32; super::BUCKETS], s: S) -> Result<S::Ok, S::Error> {
        c.as_slice().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u32; super::BUCKETS], D::Error> {
        let v: Vec<u32> = Vec::deserialize(d)?;
        let mut out = [0; super::BUCKETS];
        for (o, x) in out.iter_mut().zip(v) {
            *o = x;
        }
        Ok(out)
    }
}

impl Default for RttHistogram {
    fn default() -> Self {
        Self {
            counts: [0; BUCKETS],
            total: 0,
        }
    }
}

fn bucket_of(us: u64) -> usize {
    let us = us.max(1);
    let octave = 63 - us.leading_zeros() as usize;
    // Two bits below the leading one pick the quarter-octave.
    let frac = if octave >= 2 {
        ((us >> (octave - 2)) & 3) as usize
    } else {
        ((us << (2 - octave)) & 3) as usize
    };
    (octave * 4 + frac).min(BUCKETS - 1)
}

/// Upper edge of a bucket in µs.
fn upper_of(b: usize) -> u64 {
    let (octave, frac) = (b / 4, (b % 4) as u64);
    let base = 1u64 << octave;
    base + (base * (frac + 1)) / 4
}

impl RttHistogram {
    /// Adds a sample in µs.
    pub fn record(&mut self, us: u64) {
        let b = bucket_of(us);
        self.counts[b] = self.counts[b].saturating_add(1);
        self.total += 1;
    }

    /// Samples recorded.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The `q`-quantile (0..=1) in µs (bucket upper edge: at most 19% high), or 0
    /// without samples.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let want = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (b, c) in self.counts.iter().enumerate() {
            seen += *c as u64;
            if seen >= want {
                return upper_of(b);
            }
        }
        upper_of(BUCKETS - 1)
    }

    /// Adds another histogram's samples.
    pub fn merge(&mut self, o: &RttHistogram) {
        for (a, b) in self.counts.iter_mut().zip(o.counts.iter()) {
            *a = a.saturating_add(*b);
        }
        self.total += o.total;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_within_a_quarter_octave() {
        let mut h = RttHistogram::default();
        for us in 1..=1000u64 {
            h.record(us * 100); // 100 µs .. 100 ms, uniform
        }
        let p50 = h.quantile(0.5) as f64;
        let p99 = h.quantile(0.99) as f64;
        assert!((50_000.0..=50_000.0 * 1.2).contains(&p50), "{p50}");
        assert!((99_000.0..=99_000.0 * 1.2).contains(&p99), "{p99}");
        assert!(h.quantile(0.0) <= 125);
        let mut g = RttHistogram::default();
        g.merge(&h);
        assert_eq!(g.count(), 1000);
        assert_eq!(RttHistogram::default().quantile(0.5), 0);
    }
}
