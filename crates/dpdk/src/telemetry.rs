//! DPDK telemetry commands implemented in Rust: register a command (e.g.
//! `/app/stats`) whose handler returns a [`TelValue`]; `dpdk-telemetry.py` (or
//! anything speaking the telemetry socket protocol) reads it.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, CStr, CString};
use std::sync::{Mutex, OnceLock};

use crate::error::{Error, ErrorKind, Result};

/// A telemetry value: numbers, strings (at most 127 bytes; longer are cut) and
/// nested dictionaries.
#[derive(Debug, Clone, PartialEq)]
pub enum TelValue {
    /// An unsigned integer.
    U64(u64),
    /// A signed integer.
    Int(i32),
    /// A string.
    Str(String),
    /// A dictionary (at most 256 entries at each level: the telemetry library's limit).
    Dict(Vec<(String, TelValue)>),
}

type Handler = Box<dyn Fn(&str) -> TelValue + Send + Sync>;

fn handlers() -> &'static Mutex<HashMap<String, Handler>> {
    static H: OnceLock<Mutex<HashMap<String, Handler>>> = OnceLock::new();
    H.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Registers `cmd` (must start with `/`) with a handler called on the telemetry
/// thread with the command's parameters. A command can be registered once per
/// process; registering it again replaces the handler.
pub fn register<F>(cmd: &str, help: &str, f: F) -> Result<()>
where
    F: Fn(&str) -> TelValue + Send + Sync + 'static,
{
    let op = format!("register telemetry command {cmd}");
    let mut h = handlers().lock().unwrap_or_else(|e| e.into_inner());
    let fresh = !h.contains_key(cmd);
    h.insert(cmd.to_string(), Box::new(f));
    if !fresh {
        return Ok(());
    }
    let c =
        CString::new(cmd).map_err(|_| Error::new(ErrorKind::InvalidArgument, op.clone(), "NUL"))?;
    let hc = CString::new(help)
        .map_err(|_| Error::new(ErrorKind::InvalidArgument, op.clone(), "NUL"))?;
    // SAFETY: valid C strings (the library copies them); `dispatch` is a valid
    // callback for the process's lifetime.
    let r =
        unsafe { dpdk_sys::rte_telemetry_register_cmd(c.as_ptr(), Some(dispatch), hc.as_ptr()) };
    if r != 0 {
        h.remove(cmd);
        return Err(Error::from_errno(op, r));
    }
    Ok(())
}

unsafe extern "C" fn dispatch(
    cmd: *const c_char,
    params: *const c_char,
    info: *mut dpdk_sys::rte_tel_data,
) -> c_int {
    // SAFETY: the telemetry library passes valid C strings (params may be null).
    let cmd = unsafe { CStr::from_ptr(cmd) }
        .to_string_lossy()
        .into_owned();
    let params = if params.is_null() {
        String::new()
    } else {
        // SAFETY: non-null C string from the library.
        unsafe { CStr::from_ptr(params) }
            .to_string_lossy()
            .into_owned()
    };
    let value = {
        let h = handlers().lock().unwrap_or_else(|e| e.into_inner());
        match h.get(&cmd) {
            Some(f) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&params)))
                .unwrap_or_else(|_| TelValue::Str("handler panicked".into())),
            None => return -libc_einval(),
        }
    };
    // SAFETY: `info` is the library's output object for this call.
    unsafe { fill(info, &value) };
    0
}

fn libc_einval() -> c_int {
    22
}

fn cstr(s: &str) -> CString {
    let s: String = s.chars().filter(|c| *c != '\0').take(127).collect();
    CString::new(s).expect("NULs removed")
}

/// Flattens nested dictionaries into `/`-joined keys (`link/rx_datagrams`; names
/// may only hold letters, digits, `_` and `/`): the
/// telemetry library of DPDK 22.11 only nests arrays.
fn flatten(prefix: &str, entries: &[(String, TelValue)], out: &mut Vec<(String, TelValue)>) {
    for (k, v) in entries {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}/{k}")
        };
        match v {
            TelValue::Dict(inner) => flatten(&key, inner, out),
            other => out.push((key, other.clone())),
        }
    }
}

/// Writes `v` into `d` (a fresh telemetry data object).
unsafe fn fill(d: *mut dpdk_sys::rte_tel_data, v: &TelValue) {
    // SAFETY (whole function): `d` is a valid telemetry data object.
    unsafe {
        match v {
            TelValue::U64(x) => {
                dpdk_sys::rte_tel_data_start_dict(d);
                dpdk_sys::rte_tel_data_add_dict_u64(d, cstr("value").as_ptr(), *x);
            }
            TelValue::Int(x) => {
                dpdk_sys::rte_tel_data_start_dict(d);
                dpdk_sys::rte_tel_data_add_dict_int(d, cstr("value").as_ptr(), *x);
            }
            TelValue::Str(s) => {
                dpdk_sys::rte_tel_data_string(d, cstr(s).as_ptr());
            }
            TelValue::Dict(entries) => {
                dpdk_sys::rte_tel_data_start_dict(d);
                let mut flat = Vec::new();
                flatten("", entries, &mut flat);
                for (k, v) in flat.iter().take(256) {
                    let k = cstr(k);
                    match v {
                        TelValue::U64(x) => {
                            dpdk_sys::rte_tel_data_add_dict_u64(d, k.as_ptr(), *x);
                        }
                        TelValue::Int(x) => {
                            dpdk_sys::rte_tel_data_add_dict_int(d, k.as_ptr(), *x);
                        }
                        TelValue::Str(s) => {
                            dpdk_sys::rte_tel_data_add_dict_string(d, k.as_ptr(), cstr(s).as_ptr());
                        }
                        TelValue::Dict(_) => {}
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_dicts_flatten_to_dotted_keys() {
        let v = vec![
            ("a".to_string(), TelValue::U64(1)),
            (
                "b".to_string(),
                TelValue::Dict(vec![("c".into(), TelValue::Str("x".into()))]),
            ),
        ];
        let mut out = Vec::new();
        flatten("", &v, &mut out);
        assert_eq!(
            out,
            vec![
                ("a".to_string(), TelValue::U64(1)),
                ("b/c".to_string(), TelValue::Str("x".into()))
            ]
        );
    }
}
