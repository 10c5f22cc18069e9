//! Stateless handshake cookies: a server answers a first Init with a Retry carrying a
//! cookie bound to the client's address and connection id, and allocates nothing
//! until an Init returns a valid, fresh cookie.

use std::hash::Hasher;
use std::net::SocketAddr;

use siphasher::sip::SipHasher24;

/// Cookie length on the wire: 4 bytes of issue time (seconds) + 8 bytes of MAC.
pub(crate) const COOKIE_LEN: usize = 12;

/// Keyed cookie generator/verifier.
#[derive(Debug, Clone)]
pub(crate) struct CookieKey {
    k0: u64,
    k1: u64,
}

impl CookieKey {
    /// A key from two random words.
    pub(crate) fn new(k0: u64, k1: u64) -> Self {
        Self { k0, k1 }
    }

    fn mac(&self, addr: &SocketAddr, cid: u64, issued: u32) -> u64 {
        let mut h = SipHasher24::new_with_keys(self.k0, self.k1);
        match addr {
            SocketAddr::V4(a) => {
                h.write(&a.ip().octets());
                h.write_u16(a.port());
            }
            SocketAddr::V6(a) => {
                h.write(&a.ip().octets());
                h.write_u16(a.port());
            }
        }
        h.write_u64(cid);
        h.write_u32(issued);
        h.finish()
    }

    /// A cookie for `addr`/`cid` issued at `now_secs`.
    pub(crate) fn issue(&self, addr: &SocketAddr, cid: u64, now_secs: u32) -> [u8; COOKIE_LEN] {
        let mut c = [0u8; COOKIE_LEN];
        c[..4].copy_from_slice(&now_secs.to_be_bytes());
        c[4..].copy_from_slice(&self.mac(addr, cid, now_secs).to_be_bytes());
        c
    }

    /// Whether `cookie` was issued by this key for `addr`/`cid` within `lifetime_secs`.
    pub(crate) fn verify(
        &self,
        cookie: &[u8],
        addr: &SocketAddr,
        cid: u64,
        now_secs: u32,
        lifetime_secs: u32,
    ) -> bool {
        if cookie.len() != COOKIE_LEN {
            return false;
        }
        let issued = u32::from_be_bytes([cookie[0], cookie[1], cookie[2], cookie[3]]);
        if issued > now_secs || now_secs - issued > lifetime_secs {
            return false;
        }
        let mut m = [0u8; 8];
        m.copy_from_slice(&cookie[4..]);
        u64::from_be_bytes(m) == self.mac(addr, cid, issued)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_bind_address_cid_and_time() {
        let k = CookieKey::new(1, 2);
        let a: SocketAddr = "10.0.0.1:5000".parse().unwrap();
        let b: SocketAddr = "10.0.0.2:5000".parse().unwrap();
        let c = k.issue(&a, 7, 100);
        assert!(k.verify(&c, &a, 7, 105, 10));
        assert!(!k.verify(&c, &b, 7, 105, 10), "other address");
        assert!(!k.verify(&c, &a, 8, 105, 10), "other cid");
        assert!(!k.verify(&c, &a, 7, 111, 10), "expired");
        assert!(!k.verify(&c, &a, 7, 99, 10), "from the future");
        assert!(
            !CookieKey::new(1, 3).verify(&c, &a, 7, 105, 10),
            "other key"
        );
        assert!(!k.verify(&c[..11], &a, 7, 105, 10));
    }
}
