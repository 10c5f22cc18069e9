//! `pmdt-wanem --rate-at SECS=RATE`: the bottleneck changes its rate during a
//! run (a link that degrades and recovers, as `tc qdisc change` does to netem
//! mid-test), so a controller's adaptation can be measured end to end.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::units::{parse_rate, UnitError};

/// One change: from `at` after the start, the bottleneck runs at `rate_bps`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateStep {
    /// When, from the emulator's start.
    pub at: Duration,
    /// The new rate, bits per second.
    pub rate_bps: u64,
}

/// Why a `SECS=RATE` does not parse.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RateStepError {
    /// No `=`.
    #[error(
        "{0:?} is not SECS=RATE; e.g. 10=200mbit (200 Mbit/s from 10 s after the first frame)"
    )]
    NoEquals(String),
    /// The time is not a non-negative number of seconds.
    #[error("{0:?}: the time before '=' must be a non-negative number of seconds")]
    BadTime(String),
    /// The rate does not parse.
    #[error(transparent)]
    BadRate(#[from] UnitError),
}

impl FromStr for RateStep {
    type Err = RateStepError;
    fn from_str(s: &str) -> Result<Self, RateStepError> {
        let (secs, rate) = s
            .split_once('=')
            .ok_or_else(|| RateStepError::NoEquals(s.to_owned()))?;
        let at = secs
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(|v| Duration::try_from_secs_f64(v).ok())
            .ok_or_else(|| RateStepError::BadTime(s.to_owned()))?;
        let rate = rate.trim();
        match parse_rate(rate)? {
            // Below 1 bit/s: no rate a link can run at.
            0 => Err(UnitError::NotPositive(rate.to_owned()).into()),
            rate_bps => Ok(RateStep { at, rate_bps }),
        }
    }
}

impl fmt::Display for RateStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.at.as_secs_f64(), self.rate_bps)
    }
}

impl Serialize for RateStep {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for RateStep {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// The changes still to come, earliest first.
#[derive(Debug, Clone, Default)]
pub struct RateSchedule {
    steps: Vec<RateStep>,
    next: usize,
}

impl RateSchedule {
    /// The schedule of `steps` in any order (two at the same time: the later
    /// given wins).
    pub fn new(steps: &[RateStep]) -> Self {
        let mut steps = steps.to_vec();
        steps.sort_by_key(|s| s.at); // stable: the later given stays later
        Self { steps, next: 0 }
    }

    /// The rate to set now, `elapsed` after the start, if a change came due
    /// since the last call (several due at once: the last of them).
    pub fn due(&mut self, elapsed: Duration) -> Option<u64> {
        let mut rate = None;
        while let Some(s) = self.steps.get(self.next).filter(|s| s.at <= elapsed) {
            rate = Some(s.rate_bps);
            self.next += 1;
        }
        rate
    }

    /// When the next change comes, from the start.
    pub fn next_at(&self) -> Option<Duration> {
        self.steps.get(self.next).map(|s| s.at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(s: &str) -> RateStep {
        s.parse().unwrap()
    }

    #[test]
    fn a_step_is_seconds_and_a_rate() {
        assert_eq!(
            step("10=200mbit"),
            RateStep {
                at: Duration::from_secs(10),
                rate_bps: 200_000_000
            }
        );
        assert_eq!(step(" 2.5 = 1g ").at, Duration::from_millis(2500));
        assert_eq!(step("0=1gbit").rate_bps, 1_000_000_000);
        assert_eq!(step("10=200mbit").to_string(), "10=200000000");
        assert_eq!(step(&step("10=200mbit").to_string()), step("10=200mbit"));
        for bad in [
            "10",
            "x=1g",
            "-1=1g",
            "nan=1g",
            "10=",
            "10=fast",
            "10=0",
            "10=0.5bit",
        ] {
            assert!(bad.parse::<RateStep>().is_err(), "{bad}");
        }
        assert_eq!(
            "10".parse::<RateStep>().unwrap_err().to_string(),
            "\"10\" is not SECS=RATE; e.g. 10=200mbit (200 Mbit/s from 10 s after the first frame)"
        );
    }

    #[test]
    fn changes_come_due_in_time_order_once_each() {
        let mut s = RateSchedule::new(&[step("20=1g"), step("10=200m"), step("10=300m")]);
        assert_eq!(s.next_at(), Some(Duration::from_secs(10)));
        assert_eq!(s.due(Duration::from_secs(9)), None);
        assert_eq!(s.due(Duration::from_secs(10)), Some(300_000_000));
        assert_eq!(s.due(Duration::from_secs(11)), None, "once");
        assert_eq!(s.next_at(), Some(Duration::from_secs(20)));
        assert_eq!(s.due(Duration::from_secs(60)), Some(1_000_000_000));
        assert_eq!(s.next_at(), None);
        let mut late = RateSchedule::new(&[step("1=1m"), step("2=2m")]);
        assert_eq!(
            late.due(Duration::from_secs(5)),
            Some(2_000_000),
            "the last of those due"
        );
    }
}
