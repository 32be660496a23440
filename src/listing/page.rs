//! Between the listing's RSS and the pagers: a parsed page as a [`PageView`], and an
//! [`Event`] as the JSON line users read.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use super::{Event, EventKind, Listed, Millis, PageView};
use crate::feed::Feed;

/// A listing page read from a parsed feed: each item's guid, `pubDate` (the sort key), title
/// and link, and the channel's total from `total_element` (`(prefix, name)`).
///
/// An item without a usable date cannot be placed in the sorted list, so it is left out; the
/// second value counts them (the caller warns). An unparseable total counts as no total.
pub fn view_from_feed(
    page: u32,
    feed: &Feed,
    total_element: Option<(&str, &str)>,
) -> (PageView, usize) {
    let total = total_element
        .and_then(|(prefix, name)| feed.extensions.first(prefix, name))
        .and_then(|text| text.trim().parse::<u64>().ok());
    let mut skipped = 0;
    let items = feed
        .items
        .iter()
        .filter_map(|item| {
            let Some(key) = item.date_millis() else {
                skipped += 1;
                return None;
            };
            Some(Listed {
                id: item.id.as_str().into(),
                key,
                title: item.title.as_deref().unwrap_or("").into(),
                link: item.link.as_deref().unwrap_or("").into(),
            })
        })
        .collect();
    (PageView { page, total, items }, skipped)
}

/// One event as users read it, in the events file, on stdout and from `GET /api/events`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventRecord<'a> {
    /// `on_air` or `off_air`.
    pub event: EventKind,
    /// The listing's name.
    pub listing: &'a str,
    /// The broadcast's guid.
    pub id: &'a str,
    /// Its title.
    pub title: &'a str,
    /// Its link.
    pub link: &'a str,
    /// Its `pubDate` (the reservation), RFC 3339 UTC.
    pub started_at: String,
    /// When it was detected, RFC 3339 UTC.
    pub at: String,
}

impl<'a> EventRecord<'a> {
    /// The record of `event` in `listing`.
    pub fn new(listing: &'a str, event: &'a Event) -> EventRecord<'a> {
        EventRecord {
            event: event.kind,
            listing,
            id: &event.item.id,
            title: &event.item.title,
            link: &event.item.link,
            started_at: rfc3339(event.item.key),
            at: rfc3339(event.at),
        }
    }

    /// The record as one JSON line (without the newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|err| format!("{{\"error\":\"{err}\"}}"))
    }
}

/// A time in milliseconds as RFC 3339 UTC with millisecond precision.
pub fn rfc3339(at: Millis) -> String {
    DateTime::<Utc>::from_timestamp_millis(at)
        .map(|time| time.to_rfc3339_opts(SecondsFormat::Millis, true))
        .unwrap_or_default()
}
