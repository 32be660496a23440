//! The feedback intake: the body of `POST /api/feedback` read and checked, pure, so that it
//! can be fuzzed (`fuzz/fuzz_targets/feedback.rs`) and the HTTP handler only answers.
//!
//! A body is a JSON object `{"url", "kind", "seconds"?, "at"?}` and nothing else: `kind` one of
//! `visit`, `dwell`, `like`, `dislike`; `seconds` for a dwell only; `at` an RFC 3339 time
//! (default: now). The event comes out as [`Feedback::new`] makes it (its URL in normal form),
//! or a typed [`IntakeError`] whose text says what is wrong.

use serde::Deserialize;

use super::hittage::{Feedback, FeedbackError, FeedbackKind};

/// Why a feedback body was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum IntakeError {
    /// Not JSON, not an object, a field missing, unknown or of the wrong type.
    #[error("bad feedback JSON: {0}")]
    Json(String),
    /// `kind` is none of the four.
    #[error("kind: {0}")]
    Kind(FeedbackError),
    /// `at` is not an RFC 3339 time.
    #[error("at: `{at}` is not an RFC 3339 time ({reason})")]
    BadTime {
        /// `at` as given.
        at: String,
        /// What the parser said.
        reason: String,
    },
    /// The event is not valid: its URL, or its seconds.
    #[error(transparent)]
    Invalid(FeedbackError),
}

/// The body as sent.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FeedbackBody {
    url: String,
    kind: String,
    seconds: Option<f64>,
    at: Option<String>,
}

/// Reads and checks a feedback body; `at` defaults to `now_ms`.
pub fn feedback_from_json(body: &[u8], now_ms: i64) -> Result<Feedback, IntakeError> {
    let body: FeedbackBody =
        serde_json::from_slice(body).map_err(|err| IntakeError::Json(err.to_string()))?;
    let kind: FeedbackKind = body.kind.parse().map_err(IntakeError::Kind)?;
    let at_ms = match &body.at {
        None => now_ms,
        Some(at) => at_millis(at)?,
    };
    Feedback::new(&body.url, kind, body.seconds, at_ms).map_err(IntakeError::Invalid)
}

/// An event's `at` (RFC 3339, as the API and `ferret feedback --at` take it) in Unix ms.
pub fn at_millis(at: &str) -> Result<i64, IntakeError> {
    chrono::DateTime::parse_from_rfc3339(at)
        .map(|t| t.timestamp_millis())
        .map_err(|err| IntakeError::BadTime {
            at: at.to_string(),
            reason: err.to_string(),
        })
}

/// The body that reads back as `event` (`at` in RFC 3339 UTC, to the millisecond); None when
/// `at_ms` is beyond the times RFC 3339 can write.
pub fn feedback_to_json(event: &Feedback) -> Option<String> {
    let at = chrono::DateTime::from_timestamp_millis(event.at_ms)?
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let mut body = serde_json::json!({
        "url": event.url,
        "kind": event.kind.name(),
        "at": at,
    });
    if let Some(seconds) = event.seconds {
        body["seconds"] = serde_json::json!(seconds);
    }
    Some(body.to_string())
}
