//! Sizes and rates as iperf3 users type them, with iperf3's one convention: byte
//! amounts (`-n`, `--buffer`, `--max-buffer`, `--queue-bytes`) take K/M/G/T as
//! powers of 1024 (`10G` = 10 GiB; `KiB`, `KB` and `k` mean the same), rates take
//! k/m/g/t as powers of 1000 bits per second (`--rate 1g` = 10^9 bit/s).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why a size or a rate did not parse; each carries the text as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UnitError {
    /// Not a number with a known byte unit.
    #[error("{0:?} is not a size; e.g. 256M, 10G, 1GiB (K/M/G/T are 1024-based)")]
    NotASize(String),
    /// Not a number with a known rate unit.
    #[error("{0:?} is not a rate; e.g. 5gbit, 100mbit, 800kbit")]
    NotARate(String),
    /// A rate of zero or below.
    #[error("{0:?}: a rate must be above 0")]
    NotPositive(String),
    /// More than 64 bits hold.
    #[error("{0:?} is too large")]
    TooLarge(String),
}

/// Splits `s` into its number and its lower-case unit suffix.
fn split_unit(s: &str) -> (&str, String) {
    let t = s.trim();
    let at = t
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(t.len());
    (t[..at].trim(), t[at..].trim().to_ascii_lowercase())
}

/// Parses a byte amount: `1000`, `64K`, `256M`, `10G`, `1GiB`, `1.5g` (K/M/G/T are
/// 1024-based, as iperf3's `-n`).
pub fn parse_bytes(s: &str) -> Result<u64, UnitError> {
    let bad = || UnitError::NotASize(s.to_owned());
    let (num, unit) = split_unit(s);
    let unit = unit
        .strip_suffix("ib")
        .or_else(|| unit.strip_suffix('b'))
        .unwrap_or(&unit);
    let shift = match unit {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return Err(bad()),
    };
    if let Ok(v) = num.parse::<u64>() {
        return v
            .checked_mul(1 << shift)
            .ok_or_else(|| UnitError::TooLarge(s.to_owned()));
    }
    let v: f64 = num.parse().map_err(|_| bad())?;
    if !(v.is_finite() && v >= 0.0) {
        return Err(bad());
    }
    let bytes = v * (1u64 << shift) as f64;
    if bytes >= u64::MAX as f64 {
        return Err(UnitError::TooLarge(s.to_owned()));
    }
    Ok(bytes.round() as u64)
}

/// Parses a rate in bits per second: `5gbit`, `100mbit`, `1.5g`, `800kbps`, `1e9`
/// (k/m/g/t are 1000-based, as iperf3's `-b`).
pub fn parse_rate(s: &str) -> Result<u64, UnitError> {
    let bad = || UnitError::NotARate(s.to_owned());
    let (num, unit) = split_unit(s);
    let unit = unit
        .strip_suffix("bit/s")
        .or_else(|| unit.strip_suffix("bps"))
        .or_else(|| unit.strip_suffix("bit"))
        .or_else(|| unit.strip_suffix('b'))
        .unwrap_or(&unit);
    let mult = match unit {
        "" => 1.0,
        "k" => 1e3,
        "m" => 1e6,
        "g" => 1e9,
        "t" => 1e12,
        _ => return Err(bad()),
    };
    let v: f64 = num.parse().map_err(|_| bad())?;
    if !(v.is_finite() && v > 0.0) {
        return Err(UnitError::NotPositive(s.to_owned()));
    }
    let bps = v * mult;
    if bps >= u64::MAX as f64 {
        return Err(UnitError::TooLarge(s.to_owned()));
    }
    Ok(bps as u64)
}

/// Formats bits per second for people (`9.42 Gbit/s`), 1000-based as iperf3.
pub fn fmt_rate(bps: f64) -> String {
    let (v, u) = if bps >= 1e9 {
        (bps / 1e9, "Gbit/s")
    } else if bps >= 1e6 {
        (bps / 1e6, "Mbit/s")
    } else if bps >= 1e3 {
        (bps / 1e3, "kbit/s")
    } else {
        (bps, "bit/s")
    };
    format!("{v:.2} {u}")
}

/// Formats a byte amount for people (`1.50 GiB`), 1024-based as iperf3.
pub fn fmt_bytes(b: u64) -> String {
    let v = b as f64;
    let (x, u) = if b >= 1 << 30 {
        (v / (1u64 << 30) as f64, "GiB")
    } else if b >= 1 << 20 {
        (v / (1u64 << 20) as f64, "MiB")
    } else if b >= 1 << 10 {
        (v / 1024.0, "KiB")
    } else {
        return format!("{b} B");
    };
    format!("{x:.2} {u}")
}

/// A byte amount option (`-n 10G`, `--buffer 8M`): parsed with [`parse_bytes`],
/// written to config files as a plain number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct ByteSize(pub u64);

impl FromStr for ByteSize {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, UnitError> {
        parse_bytes(s).map(ByteSize)
    }
}

impl fmt::Display for ByteSize {
    /// The shortest exact form (`8M`, `1G`, `1000`), which parses back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (shift, u) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
            if self.0 != 0 && self.0.is_multiple_of(1u64 << shift) {
                return write!(f, "{}{u}", self.0 >> shift);
            }
        }
        write!(f, "{}", self.0)
    }
}

impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(u64),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(n) => Ok(ByteSize(n)),
            Raw::S(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// A rate option in bits per second (`--rate 5gbit`): parsed with [`parse_rate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BitRate(pub u64);

impl FromStr for BitRate {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, UnitError> {
        parse_rate(s).map(BitRate)
    }
}

impl fmt::Display for BitRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl Serialize for BitRate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for BitRate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(u64),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(n) => Ok(BitRate(n)),
            Raw::S(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_amounts_are_1024_based_as_in_iperf3() {
        assert_eq!(parse_bytes("256M").unwrap(), 256 << 20);
        assert_eq!(parse_bytes("10G").unwrap(), 10 << 30);
        assert_eq!(parse_bytes("10g").unwrap(), 10 << 30);
        assert_eq!(parse_bytes("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_bytes("1GB").unwrap(), 1 << 30);
        assert_eq!(parse_bytes("64K").unwrap(), 64 << 10);
        assert_eq!(parse_bytes("1.5M").unwrap(), 3 << 19);
        assert_eq!(parse_bytes("1000").unwrap(), 1000);
        assert_eq!(parse_bytes(" 2 T ").unwrap(), 2 << 40);
        for bad in ["lots", "", "1X", "-1M", "nanM", "99999999999T"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_bytes("1X").unwrap_err().to_string(),
            "\"1X\" is not a size; e.g. 256M, 10G, 1GiB (K/M/G/T are 1024-based)"
        );
        assert_eq!(
            parse_bytes("99999999999T"),
            Err(UnitError::TooLarge("99999999999T".into()))
        );
    }

    #[test]
    fn rates_are_decimal_bits_as_in_iperf3() {
        assert_eq!(parse_rate("1g").unwrap(), 1_000_000_000);
        assert_eq!(parse_rate("5gbit").unwrap(), 5_000_000_000);
        assert_eq!(parse_rate("100Mbit/s").unwrap(), 100_000_000);
        assert_eq!(parse_rate("1.5g").unwrap(), 1_500_000_000);
        assert_eq!(parse_rate("800kbps").unwrap(), 800_000);
        assert_eq!(parse_rate("1e9").unwrap(), 1_000_000_000);
        assert_eq!(parse_rate("12345").unwrap(), 12345);
        assert_eq!(
            parse_rate("fast").unwrap_err().to_string(),
            "\"fast\" is not a rate; e.g. 5gbit, 100mbit, 800kbit"
        );
        assert_eq!(
            parse_rate("0mbit").unwrap_err().to_string(),
            "\"0mbit\": a rate must be above 0"
        );
        assert_eq!(
            parse_rate("5qbit"),
            Err(UnitError::NotARate("5qbit".into()))
        );
        assert_eq!(
            parse_rate("1e30t"),
            Err(UnitError::TooLarge("1e30t".into()))
        );
        assert_eq!(fmt_rate(9.42e9), "9.42 Gbit/s");
        assert_eq!(fmt_bytes(3 << 29), "1.50 GiB");
    }

    #[test]
    fn sizes_print_in_a_form_that_parses_back() {
        for v in [0, 1000, 8 << 20, 3 << 30, 1536] {
            let s = ByteSize(v).to_string();
            assert_eq!(s.parse::<ByteSize>().unwrap().0, v, "{s}");
        }
        assert_eq!(ByteSize(8 << 20).to_string(), "8M");
        let v: ByteSize = toml::Value::String("3M".into()).try_into().unwrap();
        assert_eq!(v.0, 3 << 20);
        let v: ByteSize = toml::Value::Integer(77).try_into().unwrap();
        assert_eq!(v.0, 77);
    }
}
