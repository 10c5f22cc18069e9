//! The receiving side of a flow: reads a stream to its end, hashing it, writing it
//! to a file (`.part` until complete, removed on failure; a device such as
//! `/dev/null` is written in place) or checking it against
//! the generated pattern it should be.

use std::fs::File;
use std::io::{BufWriter, Write};
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

/// Most bytes one read visits in place (as the copying read's 256 KiB buffer
/// did): the stream hears of them once per batch.
pub const READ_BATCH: usize = 256 * 1024;

/// `p` with `.part` appended.
pub fn part_of(p: &Path) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(".part");
    PathBuf::from(s)
}

/// How received bytes reach an output path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputTarget {
    /// A regular file (or a new one): written as `FILE.part`, renamed to its
    /// name once complete, removed on failure, so a file under its final name
    /// is always whole.
    ViaPart {
        /// Written while the transfer runs.
        part: PathBuf,
        /// The name it takes once complete.
        name: PathBuf,
    },
    /// Something that exists and is not a regular file (`/dev/null`, a FIFO, a
    /// terminal): written in place. Renaming a `.part` file over it would replace
    /// the device with a regular file (as root, `-o /dev/null` would destroy
    /// `/dev/null`), and it cannot be synced.
    InPlace(PathBuf),
}

impl OutputTarget {
    /// The target for output path `p` (looked at now).
    pub fn of(p: &Path) -> Self {
        match std::fs::metadata(p) {
            Ok(m) if !m.is_file() => OutputTarget::InPlace(p.to_path_buf()),
            _ => OutputTarget::ViaPart {
                part: part_of(p),
                name: p.to_path_buf(),
            },
        }
    }

    /// The path written while the transfer runs.
    pub fn written(&self) -> &Path {
        match self {
            OutputTarget::ViaPart { part, .. } => part,
            OutputTarget::InPlace(p) => p,
        }
    }

    fn open(&self) -> std::io::Result<File> {
        match self {
            OutputTarget::ViaPart { part, .. } => File::create(part),
            OutputTarget::InPlace(p) => std::fs::OpenOptions::new().write(true).open(p),
        }
    }
}

/// Where a flow's received bytes go as they arrive: hashed, checked against the
/// pattern, written to the output; [`Intake::end`] completes the output.
pub struct Intake {
    hasher: Option<Sha256>,
    pattern: Option<Pattern>,
    scratch: Vec<u8>,
    verified: bool,
    got: u64,
    target: Option<OutputTarget>,
    file: Option<BufWriter<File>>,
    /// The output could not be created or written (the rest is only counted).
    error: Option<FlowError>,
}

impl Intake {
    /// Ready for `plan` (its output created; an error to tell if it cannot be).
    pub fn new(plan: &RecvPlan) -> Self {
        let target = plan.file.as_deref().map(OutputTarget::of);
        let mut error = None;
        let file = match &target {
            Some(t) => match t.open() {
                Ok(f) => Some(BufWriter::with_capacity(1 << 20, f)),
                Err(e) => {
                    error = Some(FlowError::CreateOutput {
                        path: t.written().display().to_string(),
                        cause: e.into(),
                    });
                    None
                }
            },
            None => None,
        };
        Self {
            hasher: plan.hash.then(Sha256::new),
            pattern: plan.expect.map(Pattern::new),
            scratch: Vec::new(),
            verified: true,
            got: 0,
            target,
            file,
            error,
        }
    }

    /// Whether the bytes go to an output (completing it syncs and renames a
    /// file: slow for a large one).
    pub fn writes_output(&self) -> bool {
        self.file.is_some()
    }

    /// The error that ends the flow, if one came (creating or writing the
    /// output).
    pub fn error(&self) -> Option<&FlowError> {
        self.error.as_ref()
    }

    /// Takes `data`, the next bytes of the stream (after an error, nothing).
    pub fn take(&mut self, data: &[u8]) {
        if self.error.is_some() {
            return;
        }
        if let Some(h) = &mut self.hasher {
            h.update(data);
        }
        if let Some(p) = &mut self.pattern {
            self.verified &= p.matches(data, &mut self.scratch);
        }
        if let Some(f) = &mut self.file {
            if let Err(e) = f.write_all(data) {
                self.error = Some(FlowError::WriteOutput(e.into()));
            }
        }
        self.got += data.len() as u64;
    }

    /// The flow ended, with `error` if it failed: a complete output is synced
    /// and takes its name, a failed one's part file is removed.
    pub fn end(mut self, error: Option<FlowError>) -> Got {
        let mut error = self.error.take().or(error);
        if error.is_none() {
            if let Some(f) = self.file.take() {
                let in_place = matches!(self.target, Some(OutputTarget::InPlace(_)));
                if let Err(e) = f.into_inner().map_err(|e| e.into_error()).and_then(|f| {
                    if in_place {
                        Ok(())
                    } else {
                        f.sync_all()
                    }
                }) {
                    error = Some(FlowError::WriteOutput(e.into()));
                }
            }
        }
        drop(self.file.take());
        if let Some(OutputTarget::ViaPart { part, name }) = &self.target {
            if error.is_none() {
                if let Err(e) = std::fs::rename(part, name) {
                    error = Some(FlowError::RenameOutput {
                        from: part.display().to_string(),
                        to: name.display().to_string(),
                        cause: e.into(),
                    });
                }
            } else {
                let _ = std::fs::remove_file(part);
            }
        }
        Got {
            bytes: self.got,
            sha256: self.hasher.map(|h| hex(&h.finalize())).unwrap_or_default(),
            verified: self.pattern.map(|_| self.verified),
            error,
        }
    }
}

/// Reads `stream` to its end; `first` are bytes already read from it.
pub fn recv_data(stream: &mut Stream, first: &[u8], plan: &RecvPlan, stop: &Interrupt) -> Got {
    let mut intake = Intake::new(plan);
    intake.take(first);
    let mut error = None;
    // Each payload is hashed, checked and written where it arrived (the
    // zero-copy read): copying it into a buffer first cost a pass over every
    // byte, and all of the receiver's work when nothing is asked of the bytes.
    while error.is_none() && intake.error().is_none() {
        if stop.is_set() {
            error = Some(FlowError::Interrupted);
            break;
        }
        match stream.read_in_place(READ_BATCH, |data| intake.take(data)) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => error = Some(FlowError::from_stream(e, stop.is_set())),
        }
    }
    intake.end(error)
}

#[cfg(test)]
mod output_target_tests {
    use super::*;

    #[test]
    fn a_device_is_written_in_place_never_replaced() {
        assert_eq!(
            OutputTarget::of(Path::new("/dev/null")),
            OutputTarget::InPlace(PathBuf::from("/dev/null"))
        );
    }

    #[test]
    fn a_file_new_or_existing_goes_through_its_part_file() {
        let dir = std::env::temp_dir().join(format!("pmdt-target-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let new = dir.join("new.bin");
        let old = dir.join("old.bin");
        std::fs::write(&old, b"x").unwrap();
        for p in [&new, &old] {
            assert_eq!(
                OutputTarget::of(p),
                OutputTarget::ViaPart {
                    part: part_of(p),
                    name: p.clone(),
                }
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
