//! `-c HOST[:PORT]` as iperf3 users type it: an IP address or a host name
//! (`localhost`, names from /etc/hosts or DNS), with or without a port
//! (default [`DEFAULT_PORT`], pmdt-recv's), IPv6 in brackets (`[::1]:9000`).

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use crate::cli_error::CliError;

/// The port pmdt-recv listens on by default, and the one `-c HOST` goes to.
pub const DEFAULT_PORT: u16 = 9000;

/// Which addresses a link can reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// IPv4 only (the DPDK backend, a UDP socket bound to an IPv4 address).
    V4,
    /// IPv6 only (a UDP socket bound to an IPv6 address).
    V6,
}

/// Splits `HOST[:PORT]` / `[V6]:PORT` / bare IPv6 into host and port.
fn split_host_port(spec: &str) -> Result<(&str, u16), CliError> {
    let bad_port = |p: &str| {
        CliError::new(format!("-c {spec:?}: {p:?} is not a port number"))
            .hint("e.g. -c 10.0.0.2, -c host:9000, -c [fd00::2]:9000")
    };
    if let Some(rest) = spec.strip_prefix('[') {
        let (host, tail) = rest
            .split_once(']')
            .ok_or_else(|| CliError::new(format!("-c {spec:?}: missing ']'")))?;
        return match tail.strip_prefix(':') {
            Some(p) => Ok((host, p.parse().map_err(|_| bad_port(p))?)),
            None if tail.is_empty() => Ok((host, DEFAULT_PORT)),
            None => Err(bad_port(tail)),
        };
    }
    if spec.parse::<IpAddr>().is_ok() {
        return Ok((spec, DEFAULT_PORT)); // an address (IPv6 has colons of its own)
    }
    match spec.rsplit_once(':') {
        Some((host, p)) if !host.contains(':') => Ok((host, p.parse().map_err(|_| bad_port(p))?)),
        Some(_) => Err(CliError::new(format!("-c {spec:?} is not an address"))
            .hint("put IPv6 addresses with a port in brackets: -c [fd00::2]:9000")),
        None => Ok((spec, DEFAULT_PORT)),
    }
}

/// Resolves `spec` to one address of `family` (the first the resolver returns).
pub fn resolve(spec: &str, family: Family) -> Result<SocketAddr, CliError> {
    let (host, port) = split_host_port(spec.trim())?;
    if host.is_empty() {
        return Err(CliError::new(format!("-c {spec:?}: no host")));
    }
    let found: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| {
            CliError::new(format!("cannot resolve {host:?}: {e}"))
                .hint("give an IP address, or a name from /etc/hosts or DNS")
        })?
        .collect();
    found
        .iter()
        .copied()
        .find(|a| match family {
            Family::V4 => a.is_ipv4(),
            Family::V6 => a.is_ipv6(),
        })
        .ok_or_else(|| {
            let want = match family {
                Family::V4 => "IPv4",
                Family::V6 => "IPv6",
            };
            CliError::new(format!(
                "{host:?} has no {want} address (resolved to {found:?})"
            ))
            .hint("the DPDK backend speaks IPv4; the UDP backend the family of --bind")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_is_optional_and_defaults_to_pmdt_recvs() {
        let v4 = |s| resolve(s, Family::V4).unwrap();
        assert_eq!(v4("10.0.0.2"), "10.0.0.2:9000".parse().unwrap());
        assert_eq!(v4("10.0.0.2:7000"), "10.0.0.2:7000".parse().unwrap());
        assert_eq!(v4("localhost"), "127.0.0.1:9000".parse().unwrap());
        assert_eq!(v4("localhost:7001"), "127.0.0.1:7001".parse().unwrap());
        let v6 = |s| resolve(s, Family::V6).unwrap();
        assert_eq!(v6("::1"), "[::1]:9000".parse().unwrap());
        assert_eq!(v6("[::1]"), "[::1]:9000".parse().unwrap());
        assert_eq!(v6("[::1]:7002"), "[::1]:7002".parse().unwrap());
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        for (spec, want) in [
            ("10.0.0.2:port", "not a port"),
            ("10.0.0.2:70000", "not a port"),
            ("[::1", "missing ']'"),
            ("fd00::2:x:y:", "not an address"),
            (":9000", "no host"),
            ("no-such-host.invalid", "cannot resolve"),
            ("::1", "no IPv4 address"),
        ] {
            let e = resolve(spec, Family::V4).unwrap_err();
            assert!(e.message.contains(want), "{spec}: {}", e.message);
        }
    }
}
