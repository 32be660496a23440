//! Between the listing's RSS and the pagers: a parsed page as a [`PageView`], and an
//! [`Event`] as the JSON line users read.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use super::{Event, EventKind, Listed, Millis, PageView};
use crate::feed::{derived_id, Feed, Item};

/// A listing page read from a parsed feed: each item's guid, `pubDate` (the sort key), title
/// and link, and the channel's total from `total_element` (`(prefix, name)`).
///
/// An item without a usable date cannot be placed in the sorted list, so it is left out; the
/// second value counts them (the caller warns). The total may group its digits by thousands
/// with commas; an unparseable one counts as no total. A document cut off (it ended inside an
/// open element) is no page: what followed the cut would read as broadcasts gone, and the
/// last value read may be cut too.
pub fn view_from_feed(
    page: u32,
    feed: &Feed,
    total_element: Option<(&str, &str)>,
) -> Result<(PageView, usize), CutOff> {
    if feed.cut_off {
        return Err(CutOff);
    }
    let total = total_element
        .and_then(|(prefix, name)| channel_element(feed, prefix, name))
        .and_then(|text| count(text.trim()));
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
                id: listing_id(item).into(),
                key,
                title: item.title.as_deref().unwrap_or("").into(),
                link: item.link.as_deref().unwrap_or("").into(),
            })
        })
        .collect();
    let view = PageView {
        page,
        total,
        items,
        age: 0,
    };
    Ok((view, skipped))
}

/// A listing page whose document was cut off ([`view_from_feed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the page was cut off: the items past the cut are missing")]
pub struct CutOff;

/// A count as a listing may write it: digits, perhaps grouped by thousands with commas
/// (`1,187`).
fn count(text: &str) -> Option<u64> {
    let mut groups = text.split(',');
    let first = groups.next().unwrap_or("");
    let grouped = groups.all(|group| group.len() == 3);
    if text.contains(',') && !(grouped && (1..=3).contains(&first.len())) {
        return None;
    }
    text.replace(',', "").parse().ok()
}

/// An item's id in the listing: its guid, or for an item without one its link. The parser
/// gives an item without a guid an id derived from its link and title, and a broadcast's title
/// may be edited while it is on air: under the derived id that edit would read as one
/// broadcast ended and another started.
fn listing_id(item: &Item) -> &str {
    match item.link.as_deref() {
        Some(link) if item.id == derived_id(Some(link), item.title.as_deref()) => link,
        _ => &item.id,
    }
}

/// The channel's `prefix:name` element; else, when the document binds its namespace to
/// another prefix (`nl:total_count`), the only channel element of that local name under any
/// prefix. Two or more of them would be a guess, so none is taken.
fn channel_element<'f>(feed: &'f Feed, prefix: &str, name: &str) -> Option<&'f str> {
    feed.extensions.first(prefix, name).or_else(|| {
        let mut named = feed.extensions.iter().filter(|e| &*e.name == name);
        match (named.next(), named.next()) {
            (Some(only), None) => only.values.first(),
            _ => None,
        }
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feed::{parse, ParseOptions};

    fn page_with(channel: &str) -> PageView {
        let xml = format!(
            r#"<rss version="2.0" xmlns:nicolive="http://live.nicovideo.jp/" xmlns:nl="http://live.nicovideo.jp/" xmlns:x="urn:x">
<channel><title>t</title>{channel}
<item><title>a</title><guid>lv1</guid><pubDate>Fri, 20 Nov 2009 21:30:00 +0900</pubDate></item>
</channel></rss>"#
        );
        let feed = parse(xml.as_bytes(), &ParseOptions::default()).unwrap();
        view_from_feed(1, &feed, Some(("nicolive", "total_count")))
            .unwrap()
            .0
    }

    /// The total is read under the configured prefix, or under another one the document
    /// chose, but not when two prefixes offer one.
    #[test]
    fn the_total_is_found_under_the_prefix_the_listing_uses() {
        let total = |channel: &str| page_with(channel).total;
        assert_eq!(
            total("<nicolive:total_count>42</nicolive:total_count>"),
            Some(42)
        );
        assert_eq!(total("<nl:total_count> 42 </nl:total_count>"), Some(42));
        assert_eq!(
            total("<nicolive:total_count>1,187</nicolive:total_count>"),
            Some(1187)
        );
        for odd in ["1,18", "11187,000", ",187", "1.187", "-3", ""] {
            let element = format!("<nicolive:total_count>{odd}</nicolive:total_count>");
            assert_eq!(total(&element), None, "{odd}");
        }
        assert_eq!(
            total(
                "<nicolive:total_count>42</nicolive:total_count><x:total_count>7</x:total_count>"
            ),
            Some(42)
        );
        assert_eq!(
            total("<nl:total_count>42</nl:total_count><x:total_count>7</x:total_count>"),
            None
        );
        assert_eq!(total("<nl:count>42</nl:count>"), None);
        assert_eq!(page_with("").items.len(), 1);
    }

    /// An item without a guid is known by its link, whatever its title says on each read.
    #[test]
    fn an_item_without_a_guid_keeps_its_link_as_id_through_a_title_edit() {
        let id = |item: &str| {
            let xml =
                format!(r#"<rss version="2.0"><channel><title>t</title>{item}</channel></rss>"#);
            let feed = parse(xml.as_bytes(), &ParseOptions::default()).unwrap();
            view_from_feed(1, &feed, None).unwrap().0.items[0]
                .id
                .to_string()
        };
        let date = "<pubDate>Fri, 20 Nov 2009 21:30:00 +0900</pubDate>";
        let link = "<link>http://live.example/watch/lv7</link>";
        assert_eq!(
            id(&format!("<item><title>a</title>{link}{date}</item>")),
            "http://live.example/watch/lv7"
        );
        assert_eq!(
            id(&format!(
                "<item><title>a, edited</title>{link}{date}</item>"
            )),
            "http://live.example/watch/lv7"
        );
        assert_eq!(
            id(&format!(
                "<item><title>a</title><guid>lv7</guid>{link}{date}</item>"
            )),
            "lv7"
        );
        assert!(id(&format!("<item><title>a</title>{date}</item>")).starts_with("urn:ferret:"));
    }
}
