//! Dynamic mbuf fields (`rte_mbuf_dynfield_register`): per-packet metadata an
//! application keeps in the mbuf itself, at an offset DPDK assigns by name.

use std::ffi::c_char;

use crate::eal::Eal;
use crate::error::{Error, ErrorKind, Result};
use crate::mbuf::Mbuf;
use dpdk_sys as sys;

/// A registered 32-bit dynamic field. Registering the same name again (another
/// link, another thread) returns the same field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DynFieldU32 {
    offset: usize,
}

impl DynFieldU32 {
    /// Registers (or finds) the field `name` (at most 63 bytes).
    pub fn register(_eal: &Eal, name: &str) -> Result<Self> {
        let mut params = sys::rte_mbuf_dynfield::default();
        if name.len() >= params.name.len() || name.contains('\0') {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "register mbuf dynamic field",
                format!("name {name:?} must be under 64 bytes, without NUL"),
            ));
        }
        for (d, s) in params.name.iter_mut().zip(name.bytes()) {
            *d = s as c_char;
        }
        params.size = std::mem::size_of::<u32>();
        params.align = std::mem::align_of::<u32>();
        // SAFETY: `params` is a valid, NUL-terminated description (zeroed beyond
        // the name); the EAL is initialized (`_eal`).
        let off = unsafe { sys::rte_mbuf_dynfield_register(&params) };
        if off < 0 {
            return Err(Error::last("register mbuf dynamic field"));
        }
        Ok(Self {
            offset: off as usize,
        })
    }

    fn ptr(self, m: &Mbuf) -> *mut u32 {
        // SAFETY (of the offset): DPDK assigned `offset` inside `struct rte_mbuf`,
        // aligned for a u32 and reserved for this field.
        unsafe { (m.as_ptr() as *mut u8).add(self.offset).cast() }
    }

    /// The field's value in `m`'s first segment.
    #[inline]
    pub fn get(self, m: &Mbuf) -> u32 {
        // SAFETY: see `ptr`; the mbuf is alive while borrowed.
        unsafe { self.ptr(m).read() }
    }

    /// Sets the field in `m`'s first segment. Fails when the packet is shared
    /// (another reference could be reading the field).
    #[inline]
    pub fn set(self, m: &mut Mbuf, v: u32) -> Result<()> {
        if !m.is_unique() {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "set mbuf dynamic field",
                "the packet is shared",
            ));
        }
        // SAFETY: see `ptr`; the one reference, borrowed mutably: nobody else
        // reads or writes the field meanwhile.
        unsafe { self.ptr(m).write(v) };
        Ok(())
    }
}
