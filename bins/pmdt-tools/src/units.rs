//! Sizes and rates as people type them: `256M`, `1GiB`, `5gbit`, `100mbps`.

/// Parses a byte count (`1000`, `64K`, `256M`, `1G`, `1GiB`; K/M/G are decimal,
/// KiB/MiB/GiB binary, as iperf3 users expect from `-n`).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    parse_size::parse_size(s.trim())
        .map_err(|e| format!("{s:?} is not a size ({e}); e.g. 256M, 1GiB"))
}

/// Parses a rate in bits per second: `5gbit`, `100mbit`, `1.5g`, `800kbps`, `1e9`.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let t = t
        .strip_suffix("bit/s")
        .or_else(|| t.strip_suffix("bps"))
        .or_else(|| t.strip_suffix("bit"))
        .or_else(|| t.strip_suffix("b"))
        .unwrap_or(&t);
    let (num, mult) = match t.chars().last() {
        Some('k') => (&t[..t.len() - 1], 1e3),
        Some('m') => (&t[..t.len() - 1], 1e6),
        Some('g') => (&t[..t.len() - 1], 1e9),
        Some('t') => (&t[..t.len() - 1], 1e12),
        _ => (t, 1.0),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a rate; e.g. 5gbit, 100mbit, 800kbit"))?;
    if !(v.is_finite() && v > 0.0) {
        return Err(format!("{s:?}: a rate must be above 0"));
    }
    Ok((v * mult) as u64)
}

/// Formats bits per second for people (`9.42 Gbit/s`).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_rates_parse() {
        assert_eq!(parse_bytes("256M").unwrap(), 256_000_000);
        assert_eq!(parse_bytes("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_bytes("1000").unwrap(), 1000);
        assert!(parse_bytes("lots").is_err());
        assert_eq!(parse_rate("5gbit").unwrap(), 5_000_000_000);
        assert_eq!(parse_rate("100Mbit/s").unwrap(), 100_000_000);
        assert_eq!(parse_rate("1.5g").unwrap(), 1_500_000_000);
        assert_eq!(parse_rate("800kbps").unwrap(), 800_000);
        assert_eq!(parse_rate("12345").unwrap(), 12345);
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("0mbit").is_err());
        assert_eq!(fmt_rate(9.42e9), "9.42 Gbit/s");
    }
}
