//! Stories (SPEC §3): near-duplicates dropped, items grouped into events and stories,
//! incrementally as the stream flows, and the measures to judge the result.
//!
//! - [`text`]: the text pipeline (segmentation, case folding, language, stop words, stems);
//! - [`shingles`]: w-shingles, Jaccard and containment, MinHash LSH;
//! - [`fuzzy`]: fuzzy matrix similarity (edit distance, maximum cover by Kuhn–Munkres);
//! - [`cluster`]: the incremental two-level clusterer;
//! - [`components`]: the seed's connected-components alternative, for comparison;
//! - [`metrics`]: pairwise and BCubed P/R/F1;
//! - [`book`]: the stories so far with their events and items, ranked.
//!
//! [`read_items`] reads the labelled JSON-lines streams `ferret cluster` takes.

pub mod book;
pub mod cluster;
pub mod components;
pub mod fuzzy;
pub mod lang;
pub mod metrics;
pub mod shingles;
pub mod text;

use serde::Deserialize;

pub use book::{Interest, NewsItem, NoInterest, Placement, RankWeights, StoryBook, StoryView};
pub use cluster::{Assignment, ClusterParams, Clusterer, Footprint, MergeLog};

/// One item of a stream: `{"id","date","title","text"[,"cluster"]}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct StreamItem {
    /// The item's id (a JSON number is taken as its decimal text).
    #[serde(deserialize_with = "text_or_number")]
    pub id: String,
    /// Publication time: RFC 3339, or any form a feed date takes (the standard benchmark's
    /// raw `YYYY-MM-DD HH:MM:SS`, read as UTC; RFC 822), or a Unix time as a number or its
    /// text (see [`unix_time_millis`]; a JSON number is kept as its decimal text).
    #[serde(deserialize_with = "text_or_number")]
    pub date: String,
    /// The title.
    pub title: String,
    /// The body, possibly HTML, possibly empty (or `null`, or left out).
    #[serde(default, deserialize_with = "text_or_null")]
    pub text: String,
    /// The item's language (`lang`: an ISO 639 code such as the standard benchmark's `eng`,
    /// `spa`, `deu`, or a name), if the stream gives it; else the clusterer detects it.
    #[serde(default)]
    pub lang: Option<String>,
    /// The gold story label, in evaluation data (a JSON number is taken as its decimal text).
    #[serde(default, deserialize_with = "label")]
    pub cluster: Option<String>,
    /// `date` in milliseconds since the Unix epoch, read once by [`read_items`].
    #[serde(skip)]
    pub at: i64,
}

impl StreamItem {
    /// The stemmed language `lang` names, if it names one.
    pub fn language(&self) -> Option<text::Lang> {
        self.lang.as_deref().and_then(text::Lang::from_tag)
    }

    /// Reads `date` into `at`; false when it is not a date.
    fn read_date(&mut self) -> bool {
        let at = crate::feed::parse_date(&self.date)
            .map(|date| date.timestamp_millis())
            .or_else(|| unix_time_millis(&self.date));
        match at {
            Some(at) => {
                self.at = at;
                true
            }
            None => false,
        }
    }
}

/// A Unix time written as a number, in milliseconds: seconds when its magnitude is under
/// 10¹¹ (the year 5138 in seconds; in milliseconds, March 1973), milliseconds otherwise, as
/// streams write either and a date of news is rarely before 1973. `None` for anything else,
/// or a time chrono cannot hold. Read after the date forms: the digits of a year (`2014`) or
/// of a compact ISO 8601 date (`20140311`) are that year or day, not seconds of 1970.
fn unix_time_millis(text: &str) -> Option<i64> {
    let value: f64 = text
        .trim()
        .parse()
        .ok()
        .filter(|value: &f64| value.is_finite())?;
    let millis = match value.abs() < 1e11 {
        true => value * 1_000.0,
        false => value,
    };
    let millis = millis.round() as i64;
    chrono::DateTime::from_timestamp_millis(millis).map(|date| date.timestamp_millis())
}

/// A string, or a number written as text.
#[derive(Deserialize)]
#[serde(untagged)]
enum TextOrNumber {
    Text(String),
    Integer(i64),
    Number(f64),
}

impl From<TextOrNumber> for String {
    fn from(value: TextOrNumber) -> String {
        match value {
            TextOrNumber::Text(text) => text,
            TextOrNumber::Integer(n) => n.to_string(),
            TextOrNumber::Number(x) => x.to_string(),
        }
    }
}

fn text_or_number<'de, D: serde::Deserializer<'de>>(de: D) -> Result<String, D::Error> {
    TextOrNumber::deserialize(de).map(String::from)
}

fn text_or_null<'de, D: serde::Deserializer<'de>>(de: D) -> Result<String, D::Error> {
    Option::<String>::deserialize(de).map(Option::unwrap_or_default)
}

fn label<'de, D: serde::Deserializer<'de>>(de: D) -> Result<Option<String>, D::Error> {
    Option::<TextOrNumber>::deserialize(de).map(|label| label.map(String::from))
}

/// Reads JSON lines of [`StreamItem`]s, or one JSON array of them (the standard benchmark's
/// raw files). A byte order mark before the first line (a file saved as "UTF-8 with BOM")
/// and blank lines are skipped; a bad line or date is an error naming its line (in an array,
/// its item, from 1).
pub fn read_items(text: &str) -> Result<Vec<StreamItem>, String> {
    let text = crate::strip_bom(text);
    if text.trim_start().starts_with('[') {
        let mut items: Vec<StreamItem> =
            serde_json::from_str(text).map_err(|err| format!("the JSON array: {err}"))?;
        return match items.iter_mut().position(|item| !item.read_date()) {
            Some(i) => Err(bad_date(&format!("item {}", i + 1), &items[i])),
            None => Ok(items),
        };
    }
    let mut items = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut item: StreamItem =
            serde_json::from_str(line).map_err(|err| format!("line {}: {err}", i + 1))?;
        if !item.read_date() {
            return Err(bad_date(&format!("line {}", i + 1), &item));
        }
        items.push(item);
    }
    Ok(items)
}

fn bad_date(place: &str, item: &StreamItem) -> String {
    format!(
        "{place}: date {:?} is not a date (RFC 3339, `YYYY-MM-DD HH:MM:SS` as UTC, RFC 822, or Unix seconds or milliseconds)",
        item.date
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped files' form, and the forms other labelled streams take: the standard
    /// benchmark's raw dates without a zone (UTC), numeric ids and labels, a null or missing
    /// text. A line that is not an item, or a date that is not one, names its line.
    #[test]
    fn stream_items_read_in_the_forms_labelled_streams_take() {
        let items = read_items(concat!(
            r#"{"id":"3150","date":"2014-03-11T10:48:46.379Z","title":"A","text":"","cluster":"s1"}"#,
            "\n\n",
            r#"{"id":3151,"date":"2014-03-11 10:48:47","title":"B","text":null,"cluster":7}"#,
            "\n",
            r#"{"id":"3152","date":"Tue, 11 Mar 2014 11:48:48 +0100","title":"C"}"#,
            "\n",
            r#"{"id":"3153","date":1394534929,"title":"D"}"#,
            "\n",
            r#"{"id":"3154","date":1394534930500,"title":"E"}"#,
            "\n",
            r#"{"id":"3155","date":"1394534931.25","title":"F"}"#,
            "\n",
            r#"{"id":"3156","date":20140311,"title":"G"}"#,
        ))
        .unwrap();
        let ids: Vec<&str> = items.iter().map(|item| item.id.as_str()).collect();
        assert_eq!(
            ids,
            ["3150", "3151", "3152", "3153", "3154", "3155", "3156"]
        );
        let millis: Vec<i64> = items.iter().map(|item| item.at).collect();
        assert_eq!(
            millis,
            [
                1_394_534_926_379,
                1_394_534_927_000,
                1_394_534_928_000,
                1_394_534_929_000,
                1_394_534_930_500,
                1_394_534_931_250,
                1_394_496_000_000
            ]
        );
        assert_eq!(items[1].text, "");
        assert_eq!(items[1].cluster.as_deref(), Some("7"));
        assert_eq!(items[2].cluster, None);

        let bad_date = read_items("{\"id\":\"1\",\"date\":\"soon\",\"title\":\"A\"}\n");
        assert!(bad_date.unwrap_err().starts_with("line 1: date \"soon\""));
        // Not a time chrono holds, and not a number at all.
        for date in ["1e300", "\"NaN\"", "\"inf\""] {
            let line = format!("{{\"id\":\"1\",\"date\":{date},\"title\":\"A\"}}");
            let err = read_items(&line).unwrap_err();
            assert!(err.starts_with("line 1: date "), "{date}: {err}");
        }
        let no_title = read_items("\n{\"id\":\"1\",\"date\":\"2014-03-11\"}");
        assert!(no_title
            .unwrap_err()
            .starts_with("line 2: missing field `title`"));
    }

    /// A file saved as "UTF-8 with BOM", with Windows line ends, reads as any other, lines or
    /// array; a mark anywhere else is no item.
    #[test]
    fn a_byte_order_mark_and_crlf_lines_read_as_any_other() {
        let line = |id| format!(r#"{{"id":"{id}","date":"2014-03-11","title":"A"}}"#);
        let lines = format!("\u{feff}{}\r\n\r\n{}\r\n", line(1), line(2));
        let ids =
            |items: Vec<StreamItem>| items.into_iter().map(|item| item.id).collect::<Vec<_>>();
        assert_eq!(ids(read_items(&lines).unwrap()), ["1", "2"]);
        let array = format!("\u{feff}[{},\r\n{}]", line(1), line(2));
        assert_eq!(ids(read_items(&array).unwrap()), ["1", "2"]);
        let inside = format!("{}\n\u{feff}{}", line(1), line(2));
        assert!(read_items(&inside).unwrap_err().starts_with("line 2: "));
    }

    /// A JSON array of items (the standard benchmark's raw files, with their language and
    /// other keys) reads as the same items; a bad date names its item.
    #[test]
    fn a_json_array_of_items_reads_too() {
        let array = r#" [
            {"id": "1", "date": "2014-03-11 10:48:46", "lang": "eng", "title": "A", "text": "x", "cluster": "s"},
            {"id": "2", "date": "2014-03-11 10:48:47", "lang": "eng", "title": "B", "text": "y", "cluster": "s"}
        ]"#;
        let items = read_items(array).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[1].title, "B");
        assert_eq!(items[0].at, 1_394_534_926_000);
        assert_eq!(items[0].language(), Some(text::Lang::English));
        let bad = read_items(
            r#"[{"id":"1","date":"2014-03-11","title":"A"},{"id":"2","date":"","title":"B"}]"#,
        );
        assert!(bad.unwrap_err().starts_with("item 2: date \"\""));
        assert!(read_items("[{")
            .unwrap_err()
            .starts_with("the JSON array: "));
    }
}
