//! What an impairment does: the configuration of [`super::ImpairModel`].

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Gilbert–Elliott burst loss: a two-state Markov chain (good/bad) evaluated per packet.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GilbertElliott {
    /// P(good → bad) per packet.
    pub p_good_to_bad: f64,
    /// P(bad → good) per packet.
    pub p_bad_to_good: f64,
    /// Loss probability in the bad state (in the good state, [`ImpairConfig::loss`]
    /// applies).
    pub loss_in_bad: f64,
}

/// Impairments of one direction of a path, applied in this order: the MTU, the
/// rate-limited drop-tail bottleneck queue, loss (random, or burst while the
/// Gilbert–Elliott chain is bad), duplication, then per copy delay and jitter,
/// reordering and corruption. Loss after the queue: a datagram lost on the wire has
/// used the bottleneck. The default does nothing (a perfect, instant link).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ImpairConfig {
    /// One-way propagation delay.
    pub delay: Duration,
    /// Extra delay drawn uniformly from `[0, jitter]` per copy (reorders when larger
    /// than the gap between datagrams).
    pub jitter: Duration,
    /// Independent random loss probability.
    pub loss: f64,
    /// Burst loss (replaces `loss` while the chain is in the bad state).
    pub burst: Option<GilbertElliott>,
    /// Probability a copy is held back by `reorder_delay` (reordering).
    pub reorder: f64,
    /// Extra delay of a reordered copy.
    pub reorder_delay: Duration,
    /// Probability a datagram is delivered twice.
    pub duplicate: f64,
    /// Probability one random bit of a copy is flipped.
    pub corrupt: f64,
    /// Deliver corrupted copies anyway (as if the UDP checksum missed it). Off:
    /// corrupted copies are dropped, as the receiving host's UDP checksum (which
    /// always catches a single flipped bit) would drop them.
    pub corrupt_bypasses_checksum: bool,
    /// Bottleneck rate in bits per second (None: unlimited).
    pub rate_bps: Option<u64>,
    /// Drop-tail queue in front of the bottleneck, bytes.
    pub queue_bytes: u64,
    /// Largest datagram the path carries (in the unit the caller measures: UDP
    /// payload for links and the simulator, the whole frame for `pmdt-wanem`);
    /// larger ones are dropped. None: no limit.
    pub mtu: Option<usize>,
    /// Random seed: the same seed and the same traffic give the same fates.
    pub seed: u64,
}

impl Default for ImpairConfig {
    fn default() -> Self {
        Self {
            delay: Duration::ZERO,
            jitter: Duration::ZERO,
            loss: 0.0,
            burst: None,
            reorder: 0.0,
            reorder_delay: Duration::from_millis(2),
            duplicate: 0.0,
            corrupt: 0.0,
            corrupt_bypasses_checksum: false,
            rate_bps: None,
            queue_bytes: 1 << 20,
            mtu: None,
            seed: 1,
        }
    }
}

/// `with_<field>` setters: `ImpairConfig` is non-exhaustive, so code outside this
/// crate builds one from [`ImpairConfig::default`] and these (or assigns fields).
macro_rules! with_setters {
    ($($setter:ident: $field:ident: $ty:ty,)*) => {
        impl ImpairConfig {
            $(
                #[doc = concat!("This config with [`", stringify!($field), "`](Self::", stringify!($field), ") set.")]
                #[must_use]
                pub fn $setter(mut self, $field: $ty) -> Self {
                    self.$field = $field;
                    self
                }
            )*
        }
    };
}

with_setters! {
    with_delay: delay: Duration,
    with_jitter: jitter: Duration,
    with_loss: loss: f64,
    with_burst: burst: Option<GilbertElliott>,
    with_reorder: reorder: f64,
    with_reorder_delay: reorder_delay: Duration,
    with_duplicate: duplicate: f64,
    with_corrupt: corrupt: f64,
    with_corrupt_bypasses_checksum: corrupt_bypasses_checksum: bool,
    with_rate_bps: rate_bps: Option<u64>,
    with_queue_bytes: queue_bytes: u64,
    with_mtu: mtu: Option<usize>,
    with_seed: seed: u64,
}

/// An [`ImpairConfig`] that cannot be applied.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ImpairConfigError {
    /// A probability outside `[0, 1]` (or NaN).
    NotAProbability {
        /// The field, e.g. `loss` or `burst.loss_in_bad`.
        field: &'static str,
        /// Its value.
        value: f64,
    },
    /// `rate_bps` is zero.
    ZeroRate,
    /// `mtu` is zero.
    ZeroMtu,
}

impl fmt::Display for ImpairConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAProbability { field, value } => {
                write!(f, "{field} must be a probability in [0, 1], got {value}")
            }
            Self::ZeroRate => f.write_str("the bottleneck rate must be above 0"),
            Self::ZeroMtu => f.write_str("the MTU must be above 0"),
        }
    }
}

impl std::error::Error for ImpairConfigError {}

impl ImpairConfig {
    /// Checks probabilities, the rate and the MTU.
    pub fn validate(&self) -> Result<(), ImpairConfigError> {
        let mut probabilities = vec![
            ("loss", self.loss),
            ("reorder", self.reorder),
            ("duplicate", self.duplicate),
            ("corrupt", self.corrupt),
        ];
        if let Some(ge) = self.burst {
            probabilities.extend([
                ("burst.p_good_to_bad", ge.p_good_to_bad),
                ("burst.p_bad_to_good", ge.p_bad_to_good),
                ("burst.loss_in_bad", ge.loss_in_bad),
            ]);
        }
        for (field, value) in probabilities {
            if !(0.0..=1.0).contains(&value) {
                return Err(ImpairConfigError::NotAProbability { field, value });
            }
        }
        if self.rate_bps == Some(0) {
            return Err(ImpairConfigError::ZeroRate);
        }
        if self.mtu == Some(0) {
            return Err(ImpairConfigError::ZeroMtu);
        }
        Ok(())
    }
}
