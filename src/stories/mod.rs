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
pub mod metrics;
pub mod shingles;
pub mod text;

use serde::Deserialize;

pub use book::{Interest, NewsItem, NoInterest, Placement, RankWeights, StoryBook, StoryView};
pub use cluster::{Assignment, ClusterParams, Clusterer, Footprint};

/// One item of a stream: `{"id","date","title","text"[,"cluster"]}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct StreamItem {
    /// The item's id.
    pub id: String,
    /// Publication time, RFC 3339.
    pub date: String,
    /// The title.
    pub title: String,
    /// The body, possibly HTML, possibly empty.
    #[serde(default)]
    pub text: String,
    /// The gold story label, in evaluation data.
    #[serde(default)]
    pub cluster: Option<String>,
}

impl StreamItem {
    /// The date in milliseconds since the Unix epoch, if it reads as RFC 3339.
    pub fn millis(&self) -> Option<i64> {
        chrono::DateTime::parse_from_rfc3339(&self.date)
            .ok()
            .map(|date| date.timestamp_millis())
    }
}

/// Reads JSON lines of [`StreamItem`]s. Blank lines are skipped; a bad line or date is an
/// error naming its line number.
pub fn read_items(text: &str) -> Result<Vec<StreamItem>, String> {
    let mut items = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let item: StreamItem =
            serde_json::from_str(line).map_err(|err| format!("line {}: {err}", i + 1))?;
        if item.millis().is_none() {
            return Err(format!(
                "line {}: date {:?} is not RFC 3339",
                i + 1,
                item.date
            ));
        }
        items.push(item);
    }
    Ok(items)
}
