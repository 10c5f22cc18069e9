//! Why a flow ended badly: one variant per cause, each displayed with the text
//! the tools print and put in the JSON summary (`flows[].error`, a string).

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;

use pmdt::CloseReason;
use serde::{Serialize, Serializer};

/// An I/O error a flow ended with, shared so a flow's summary stays `Clone`.
#[derive(Debug, Clone)]
pub struct IoCause(Arc<io::Error>);

impl From<io::Error> for IoCause {
    fn from(e: io::Error) -> Self {
        Self(Arc::new(e))
    }
}

impl fmt::Display for IoCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for IoCause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}

impl IoCause {
    /// The I/O error.
    pub fn io(&self) -> &io::Error {
        &self.0
    }
}

/// How a flow failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum FlowError {
    /// Stopped by Ctrl-C or SIGTERM.
    #[error("interrupted")]
    Interrupted,
    /// The connection's stream failed (closed, reset, timed out; a request or
    /// receipt that does not parse).
    #[error("{0}")]
    Stream(IoCause),
    /// The file to send cannot be opened.
    #[error("cannot open {path}: {cause}")]
    OpenInput {
        /// The file, as given.
        path: String,
        /// Why.
        cause: IoCause,
    },
    /// Reading the file to send failed.
    #[error("read error: {0}")]
    ReadInput(IoCause),
    /// The receiving side's `FILE.part` cannot be created.
    #[error("cannot create {path}: {cause}")]
    CreateOutput {
        /// The part file.
        path: String,
        /// Why.
        cause: IoCause,
    },
    /// Writing received data to its file failed.
    #[error("write error: {0}")]
    WriteOutput(IoCause),
    /// The complete `FILE.part` cannot take its final name.
    #[error("cannot rename {from} to {to}: {cause}")]
    RenameOutput {
        /// The part file.
        from: String,
        /// The final name.
        to: String,
        /// Why.
        cause: IoCause,
    },
    /// The receiver ended the stream without a receipt (one connection).
    #[error(
        "the receiver sent no receipt: it did not take the data (its connection limit \
         -N was reached, or it is not pmdt-recv)"
    )]
    NoReceipt,
    /// A group member's receiver ended the stream without a receipt.
    #[error("the receiver sent no receipt")]
    NoGroupReceipt,
    /// The receiver's receipt disagrees with what was sent.
    #[error("the receiver got {got} bytes (sha256 {got_sha256}), {sent} were sent (sha256 {sent_sha256})")]
    ReceiptDisagrees {
        /// Bytes the receiver counted.
        got: u64,
        /// Their SHA-256 as it computed it.
        got_sha256: String,
        /// Bytes sent.
        sent: u64,
        /// Their SHA-256.
        sent_sha256: String,
    },
    /// A reverse flow's client counted other bytes than the server sent.
    #[error("the client got {got} bytes, {sent} were sent")]
    ClientDisagrees {
        /// Bytes the client counted.
        got: u64,
        /// Bytes sent.
        sent: u64,
    },
    /// Received generated data is not the generated stream.
    #[error("the data differs from the generated stream")]
    DataDiffers,
    /// A reverse flow ended before the bytes asked for.
    #[error("asked for {asked} bytes, received {received}")]
    ShortReceive {
        /// Bytes asked for.
        asked: u64,
        /// Bytes received.
        received: u64,
    },
    /// `--max-lag`: the group dropped this member.
    #[error("dropped for lagging behind at group offset {group_offset} (--max-lag)")]
    DroppedLagging {
        /// Where in the group's stream it was dropped.
        group_offset: u64,
    },
    /// A group member's connection ended.
    #[error("{0}")]
    MemberClosed(CloseReason),
    /// A group member left before the group's end.
    #[error("left the group before the end")]
    LeftGroup,
    /// `--rr`: an echoed message is not the message sent.
    #[error("the echo of message {message} differs from it at byte {offset}")]
    EchoDiffers {
        /// The message (1-based).
        message: u64,
        /// The first byte that differs (0-based).
        offset: usize,
    },
    /// `--rr`: the server's stream ended before a whole echo came back (it is
    /// not pmdt-recv: a raw pmdt application takes the messages as data).
    #[error(
        "the echo of message {message} ended after {got} of {size} bytes: the receiver \
         ended its stream (it is not pmdt-recv, or stopped)"
    )]
    EchoEnded {
        /// The message (1-based).
        message: u64,
        /// Bytes of its echo that came.
        got: usize,
        /// Its size.
        size: usize,
    },
    /// `--rr`: the server sent more than the echoes of the messages.
    #[error("the receiver sent {bytes} bytes beyond the echoes")]
    EchoUnasked {
        /// How many.
        bytes: u64,
    },
    /// The peer tool's flow ended badly and reset the connection
    /// ([`FlowError::reset_code`]): what arrived is not the whole transfer.
    #[error("the peer stopped the flow: {}", peer_stop_reason(*.0))]
    PeerStopped(u32),
}

/// Reset code of a flow stopped by Ctrl-C or SIGTERM (as the exit status).
pub const INTERRUPTED_CODE: u32 = 130;

/// Reset code of a flow that failed at this end for any other reason (its
/// summary says why).
pub const FAILED_CODE: u32 = 1;

fn peer_stop_reason(code: u32) -> String {
    match code {
        INTERRUPTED_CODE => format!("it was interrupted (reset, code {code})"),
        FAILED_CODE => format!("its side failed (reset, code {code}; its summary says why)"),
        _ => format!("reset, code {code}"),
    }
}

impl FlowError {
    /// A stream's I/O error, or `Interrupted` when `stop` was asked for (an
    /// aborted stream's error only says it was reset).
    pub fn from_stream(e: io::Error, interrupted: bool) -> Self {
        if interrupted {
            Self::Interrupted
        } else {
            Self::from(e)
        }
    }

    /// The code a flow that ended with this error resets its connection with,
    /// so the peer's flow fails too: without it the peer would read end of
    /// stream, and take a transfer cut short for a whole one.
    pub fn reset_code(&self) -> u32 {
        match self {
            Self::Interrupted => INTERRUPTED_CODE,
            _ => FAILED_CODE,
        }
    }

    /// `cannot open PATH: E`.
    pub fn open_input(path: &Path, e: io::Error) -> Self {
        Self::OpenInput {
            path: path.display().to_string(),
            cause: e.into(),
        }
    }
}

impl From<io::Error> for FlowError {
    /// A reset by the peer tool's flow ([`INTERRUPTED_CODE`], [`FAILED_CODE`])
    /// says so; any other error is the stream's.
    fn from(e: io::Error) -> Self {
        match e.get_ref().and_then(|i| i.downcast_ref::<CloseReason>()) {
            Some(&CloseReason::PeerReset(code @ (INTERRUPTED_CODE | FAILED_CODE))) => {
                Self::PeerStopped(code)
            }
            _ => Self::Stream(e.into()),
        }
    }
}

/// As its text: the JSON summary's `error` is the message people read.
impl Serialize for FlowError {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_the_tools_messages_and_json_is_the_text() {
        let reset = io::Error::from(CloseReason::TimedOut);
        let cases: Vec<(FlowError, String)> = vec![
            (FlowError::Interrupted, "interrupted".into()),
            (
                FlowError::from(io::Error::from(CloseReason::TimedOut)),
                reset.to_string(),
            ),
            (
                FlowError::open_input(Path::new("/x/y"), io::Error::other("gone")),
                "cannot open /x/y: gone".into(),
            ),
            (
                FlowError::ReadInput(io::Error::other("eio").into()),
                "read error: eio".into(),
            ),
            (
                FlowError::RenameOutput {
                    from: "a.part".into(),
                    to: "a".into(),
                    cause: io::Error::other("busy").into(),
                },
                "cannot rename a.part to a: busy".into(),
            ),
            (
                FlowError::ReceiptDisagrees {
                    got: 1,
                    got_sha256: "ab".into(),
                    sent: 2,
                    sent_sha256: "cd".into(),
                },
                "the receiver got 1 bytes (sha256 ab), 2 were sent (sha256 cd)".into(),
            ),
            (
                FlowError::ShortReceive {
                    asked: 5,
                    received: 4,
                },
                "asked for 5 bytes, received 4".into(),
            ),
            (
                FlowError::DroppedLagging { group_offset: 9 },
                "dropped for lagging behind at group offset 9 (--max-lag)".into(),
            ),
            (
                FlowError::EchoDiffers {
                    message: 3,
                    offset: 10,
                },
                "the echo of message 3 differs from it at byte 10".into(),
            ),
            (
                FlowError::MemberClosed(CloseReason::TimedOut),
                CloseReason::TimedOut.to_string(),
            ),
            (
                FlowError::from(io::Error::from(CloseReason::PeerReset(INTERRUPTED_CODE))),
                "the peer stopped the flow: it was interrupted (reset, code 130)".into(),
            ),
            (
                FlowError::from(io::Error::from(CloseReason::PeerReset(FAILED_CODE))),
                "the peer stopped the flow: its side failed (reset, code 1; its summary says why)"
                    .into(),
            ),
            (
                FlowError::from(io::Error::from(CloseReason::PeerReset(7))),
                CloseReason::PeerReset(7).to_string(),
            ),
        ];
        for (e, text) in cases {
            assert_eq!(e.to_string(), text);
            assert_eq!(serde_json::to_value(&e).unwrap(), serde_json::json!(text));
        }
        assert!(matches!(
            FlowError::from_stream(io::Error::other("reset"), true),
            FlowError::Interrupted
        ));
    }

    #[test]
    fn a_flow_that_ends_badly_tells_its_peer_why() {
        assert_eq!(FlowError::Interrupted.reset_code(), INTERRUPTED_CODE);
        assert_eq!(
            FlowError::ReadInput(io::Error::other("eio").into()).reset_code(),
            FAILED_CODE
        );
        // The peer's side of it reads back as the same cause.
        for e in [
            FlowError::Interrupted,
            FlowError::WriteOutput(io::Error::other("full").into()),
        ] {
            let code = e.reset_code();
            let seen = FlowError::from(io::Error::from(CloseReason::PeerReset(code)));
            assert!(
                matches!(seen, FlowError::PeerStopped(c) if c == code),
                "{seen}"
            );
        }
    }
}
