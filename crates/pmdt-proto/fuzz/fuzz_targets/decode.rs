//! Fuzzes the packet decoder: any input must give Ok or Err, never a panic, and what
//! decodes must re-encode to a packet that decodes to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pmdt_proto::wire;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = wire::decode(data) {
        let mut buf = vec![0u8; data.len() + 64];
        if let Ok(n) = wire::encode(&mut buf, &p) {
            let again = wire::decode(&buf[..n]).expect("re-encoded packet decodes");
            assert_eq!(again, p);
        }
    }
});
