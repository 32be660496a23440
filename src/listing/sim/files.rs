//! Reading a live run back for the scorer: a detector's events file (the JSON lines the daemon
//! writes) and a listing's ground truth (the JSON lines `ferret sim-listing --truth` writes).
//!
//! Both are outside input: a line that is not what it should be is an error naming the line,
//! never skipped, so that a score never rests on part of a file without saying so. Blank lines
//! are allowed (a file being written may end with one).

use std::sync::Arc;

use chrono::DateTime;
use serde::Deserialize;

use super::{Ending, Reported, Truth};
use crate::listing::{EventKind, Millis};

/// One line of an events file; the fields the scorer does not need are not read.
#[derive(Debug, Deserialize)]
struct EventLine {
    event: EventKind,
    listing: String,
    id: String,
    at: String,
}

/// One line of a truth file.
#[derive(Debug, Deserialize)]
struct TruthLine {
    id: String,
    reserved_at: String,
    started_at: String,
    ended_at: Option<String>,
    ending: String,
    #[serde(default)]
    extensions: u32,
}

/// The events of `listing` (every listing's when `None`) in an events file.
pub fn read_events(text: &str, listing: Option<&str>) -> Result<Vec<Reported>, String> {
    let mut events = Vec::new();
    for (number, line) in numbered(text) {
        let parsed: EventLine =
            serde_json::from_str(line).map_err(|err| format!("line {number}: {err}"))?;
        if listing.is_some_and(|name| name != parsed.listing) {
            continue;
        }
        events.push(Reported {
            kind: parsed.event,
            at: time(&parsed.at).map_err(|err| format!("line {number}: at: {err}"))?,
            id: Arc::from(parsed.id),
        });
    }
    Ok(events)
}

/// Every broadcast of a truth file.
pub fn read_truth(text: &str) -> Result<Vec<Truth>, String> {
    let mut truth = Vec::new();
    for (number, line) in numbered(text) {
        let parsed: TruthLine =
            serde_json::from_str(line).map_err(|err| format!("line {number}: {err}"))?;
        let at = |field: &str, value: &str| {
            time(value).map_err(|err| format!("line {number}: {field}: {err}"))
        };
        let reserved = at("reserved_at", &parsed.reserved_at)?;
        let start = at("started_at", &parsed.started_at)?;
        let end = parsed
            .ended_at
            .as_deref()
            .map(|value| at("ended_at", value))
            .transpose()?;
        let ending = match parsed.ending.as_str() {
            "frame" => Ending::Frame,
            "early" => Ending::Early,
            "extended" => Ending::Extended(parsed.extensions),
            other => {
                return Err(format!(
                    "line {number}: ending: {other:?} is none of frame, early, extended"
                ))
            }
        };
        if start < reserved || end.is_some_and(|end| end < start) {
            return Err(format!(
                "line {number}: need reserved_at ≤ started_at ≤ ended_at"
            ));
        }
        truth.push(Truth {
            id: Arc::from(parsed.id),
            reserved,
            start,
            end,
            ending,
        });
    }
    Ok(truth)
}

/// The latest time a truth file shows: where a run that wrote it ended, near enough.
pub fn truth_until(truth: &[Truth]) -> Option<Millis> {
    truth
        .iter()
        .map(|broadcast| broadcast.end.unwrap_or(broadcast.start))
        .max()
}

/// The non-blank lines of `text`, numbered from 1 (a byte order mark before the first, as
/// a file saved as "UTF-8 with BOM" has, left out).
fn numbered(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let text = crate::strip_bom(text);
    text.lines()
        .enumerate()
        .map(|(index, line)| (index + 1, line.trim()))
        .filter(|(_, line)| !line.is_empty())
}

fn time(value: &str) -> Result<Millis, String> {
    DateTime::parse_from_rfc3339(value)
        .map(|time| time.timestamp_millis())
        .map_err(|err| format!("{value:?} is not an RFC 3339 time ({err})"))
}
