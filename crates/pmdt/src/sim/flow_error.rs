//! Why a simulated flow's close (or write) failed: the connection's end reason
//! when the stream reports one, else the I/O error's text. Serialized as that
//! text (the JSON of a flows report reads as it did when it held strings).

use std::io;

use serde::{Deserialize, Serialize};

use crate::CloseReason;

/// A flow's failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
#[non_exhaustive]
pub enum FlowError {
    /// The connection ended otherwise than gracefully.
    #[error("{0}")]
    Closed(CloseReason),
    /// Another I/O error, by its text.
    #[error("{0}")]
    Io(String),
}

impl From<io::Error> for FlowError {
    fn from(e: io::Error) -> Self {
        match e.get_ref().and_then(|r| r.downcast_ref::<CloseReason>()) {
            Some(r) => FlowError::Closed(*r),
            None => FlowError::Io(e.to_string()),
        }
    }
}

impl From<FlowError> for String {
    fn from(e: FlowError) -> String {
        e.to_string()
    }
}

impl From<String> for FlowError {
    /// The error a text reads as: a close reason's text gives that reason back.
    fn from(text: String) -> Self {
        close_reason_of(&text).map_or(FlowError::Io(text), FlowError::Closed)
    }
}

/// The close reason whose text `s` is, if any.
fn close_reason_of(s: &str) -> Option<CloseReason> {
    let plain = [
        CloseReason::Graceful,
        CloseReason::TimedOut,
        CloseReason::Unreachable,
        CloseReason::Refused,
    ];
    if let Some(r) = plain.into_iter().find(|r| r.to_string() == s) {
        return Some(r);
    }
    let with_code: [fn(u32) -> CloseReason; 3] = [
        CloseReason::PeerClosed,
        CloseReason::PeerReset,
        CloseReason::LocalReset,
    ];
    with_code.into_iter().find_map(|make| {
        // "... (code N)": the text before the code is the variant's.
        let code: u32 = s.strip_suffix(')')?.rsplit_once("(code ")?.1.parse().ok()?;
        let r = make(code);
        (r.to_string() == s).then_some(r)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_keep_their_text_and_read_back_from_it() {
        let cases = [
            FlowError::Closed(CloseReason::TimedOut),
            FlowError::Closed(CloseReason::PeerReset(7)),
            FlowError::Closed(CloseReason::LocalReset(130)),
            FlowError::Io("broken pipe".into()),
        ];
        for e in cases {
            let json = serde_json::to_string(&e).unwrap();
            assert_eq!(json, serde_json::to_string(&e.to_string()).unwrap());
            assert_eq!(serde_json::from_str::<FlowError>(&json).unwrap(), e);
        }
        let io = io::Error::from(CloseReason::TimedOut);
        assert_eq!(
            FlowError::from(io).to_string(),
            "connection timed out: peer silent for the idle timeout"
        );
        assert_eq!(
            FlowError::from(io::Error::from(CloseReason::PeerClosed(3))),
            FlowError::Closed(CloseReason::PeerClosed(3))
        );
    }
}
