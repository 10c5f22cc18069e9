//! The receiving side of a flow: reads a stream to its end, hashing it, writing it
//! to a file (`.part` until complete, removed on failure) or checking it against
//! the generated pattern it should be.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use pmdt::runtime::Stream;
use sha2::{Digest, Sha256};

use crate::flow_error::FlowError;
use crate::interrupt::Interrupt;
use crate::pattern::Pattern;
use crate::summary::hex;

/// Where received bytes go and what is checked.
#[derive(Debug, Clone, Default)]
pub struct RecvPlan {
    /// Write them to this file (via `FILE.part`); None: discard.
    pub file: Option<PathBuf>,
    /// Hash them.
    pub hash: bool,
    /// Check them against the generated stream with this seed.
    pub expect: Option<u64>,
}

/// What a flow received.
#[derive(Debug, Clone, Default)]
pub struct Got {
    /// Stream bytes received.
    pub bytes: u64,
    /// SHA-256 of them (empty when not hashed).
    pub sha256: String,
    /// With `expect`: whether every byte was the generated stream's.
    pub verified: Option<bool>,
    /// Why the flow failed, if it did.
    pub error: Option<FlowError>,
}

/// `p` with `.part` appended.
pub fn part_of(p: &Path) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(".part");
    PathBuf::from(s)
}

/// Reads `stream` to its end; `first` are bytes already read from it.
pub fn recv_data(stream: &mut Stream, first: &[u8], plan: &RecvPlan, stop: &Interrupt) -> Got {
    let mut hasher = Sha256::new();
    let mut pattern = plan.expect.map(Pattern::new);
    let mut scratch = Vec::new();
    let mut verified = true;
    let mut got = 0u64;
    let mut error = None;
    let mut file = match &plan.file {
        Some(p) => match File::create(part_of(p)) {
            Ok(f) => Some(BufWriter::with_capacity(1 << 20, f)),
            Err(e) => {
                error = Some(FlowError::CreateOutput {
                    path: part_of(p).display().to_string(),
                    cause: e.into(),
                });
                None
            }
        },
        None => None,
    };
    let mut take = |data: &[u8], error: &mut Option<FlowError>| {
        if plan.hash {
            hasher.update(data);
        }
        if let Some(p) = &mut pattern {
            verified &= p.matches(data, &mut scratch);
        }
        if let Some(f) = &mut file {
            if let Err(e) = f.write_all(data) {
                *error = Some(FlowError::WriteOutput(e.into()));
            }
        }
        got += data.len() as u64;
    };
    if error.is_none() && !first.is_empty() {
        take(first, &mut error);
    }
    let mut buf = vec![0u8; 256 * 1024];
    while error.is_none() {
        if stop.is_set() {
            error = Some(FlowError::Interrupted);
            break;
        }
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => take(&buf[..k], &mut error),
            Err(e) => error = Some(FlowError::from_stream(e, stop.is_set())),
        }
    }
    if error.is_none() {
        if let Some(f) = file.take() {
            if let Err(e) = f
                .into_inner()
                .map_err(|e| e.into_error())
                .and_then(|f| f.sync_all())
            {
                error = Some(FlowError::WriteOutput(e.into()));
            }
        }
    }
    drop(file);
    if let Some(p) = &plan.file {
        let part = part_of(p);
        if error.is_none() {
            if let Err(e) = std::fs::rename(&part, p) {
                error = Some(FlowError::RenameOutput {
                    from: part.display().to_string(),
                    to: p.display().to_string(),
                    cause: e.into(),
                });
            }
        } else {
            let _ = std::fs::remove_file(&part);
        }
    }
    Got {
        bytes: got,
        sha256: if plan.hash {
            hex(&hasher.finalize())
        } else {
            String::new()
        },
        verified: plan.expect.map(|_| verified),
        error,
    }
}
