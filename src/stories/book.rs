//! The stories a stream has made so far, with their events and items, ranked.
//!
//! **Ranking.** A story's score is
//!
//! ```text
//! score = w_fresh · 2^(−age / half_life) + w_size · ln(1 + items) + w_interest · interest
//! ```
//!
//! where `age` is the time since the story's newest item, `items` counts its items (copies
//! included: a story many feeds repeat matters more), and `interest` in [0, 1] comes from a
//! pluggable [`Interest`] (discovery will supply the user's; until then it is 0 unless the
//! caller gives one). Ties break on the newer story, then the lower id.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use super::cluster::{ClusterParams, Clusterer, Millis};
use super::text::Lang;

/// One item of a news feed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NewsItem {
    /// The item's id (unique within its source).
    pub id: String,
    /// The feed it came from.
    pub source: String,
    /// Its title.
    pub title: String,
    /// Its link.
    pub link: String,
    /// Its publication time (or when it was first seen).
    pub published: Millis,
    /// Its text (summary or content, possibly HTML).
    #[serde(skip)]
    pub text: String,
    /// Its language as its feed declares it (`en`, `de-DE`), if it does; else the
    /// clusterer detects it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
}

impl NewsItem {
    /// The news item of a feed entry from `source`: its title, link and text (content, else
    /// summary), dated by the entry, else `now`, in the feed's language.
    pub fn from_feed(
        source: &str,
        feed: &crate::feed::Feed,
        item: &crate::feed::Item,
        now: Millis,
    ) -> NewsItem {
        NewsItem {
            id: item.id.clone(),
            source: source.to_string(),
            title: item.title.clone().unwrap_or_default(),
            link: item.link.clone().unwrap_or_default(),
            published: item.date_millis().unwrap_or(now),
            text: item
                .content
                .clone()
                .or_else(|| item.summary.clone())
                .unwrap_or_default(),
            language: feed.language.clone(),
        }
    }
}

/// The weights of the ranking formula (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankWeights {
    /// Weight of freshness.
    pub freshness: f64,
    /// Half-life of freshness.
    pub half_life: Millis,
    /// Weight of size.
    pub size: f64,
    /// Weight of the user's interest.
    pub interest: f64,
}

impl Default for RankWeights {
    fn default() -> Self {
        RankWeights {
            freshness: 1.0,
            half_life: 6 * 3_600_000,
            size: 0.5,
            interest: 1.0,
        }
    }
}

/// The user's interest in a story, in [0, 1], from its items.
pub trait Interest {
    /// How much the user cares about a story made of these items.
    fn score(&self, items: &[&NewsItem]) -> f64;
}

/// No interest known: every story scores 0.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoInterest;

impl Interest for NoInterest {
    fn score(&self, _: &[&NewsItem]) -> f64 {
        0.0
    }
}

/// One story as `GET /api/stories` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoryView {
    /// The story's id.
    pub story: String,
    /// Its rank score.
    pub score: f64,
    /// Items in it, copies included.
    pub size: usize,
    /// Its newest item's time, RFC 3339.
    pub updated: String,
    /// Its events, newest first, each with its items, newest first.
    pub events: Vec<EventView>,
}

/// One event of a story.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventView {
    /// The event's id.
    pub event: String,
    /// Its items, newest first.
    pub items: Vec<ItemView>,
}

/// One item of an event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemView {
    /// The item.
    #[serde(flatten)]
    pub item: NewsItem,
    /// Its publication time, RFC 3339.
    pub published_at: String,
    /// The id of the earlier item it is a near-copy of.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicate_of: Option<String>,
}

/// Where an item sits now: its event, its story (after any merge) and the item it is a
/// near-copy of. Ids are those of [`StoryView`] and [`EventView`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Placement {
    /// The item's feed.
    pub source: String,
    /// The item's id in its feed.
    pub id: String,
    /// Its event.
    pub event: String,
    /// Its story.
    pub story: String,
    /// The id of the earlier item it is a near-copy of.
    pub duplicate_of: Option<String>,
}

#[derive(Debug)]
struct Filed {
    item: NewsItem,
    event: u64,
    story: u64,
    duplicate_of: Option<u32>,
}

/// The clusterer and the items it has filed, for ranking and display.
#[derive(Debug)]
pub struct StoryBook {
    clusterer: Clusterer,
    window: Millis,
    /// By arrival number.
    items: BTreeMap<u32, Filed>,
    /// `(source, id)` of every item filed, so that a feed read again adds nothing twice.
    seen: HashSet<(String, String)>,
    /// The newest publication time filed: items older than it by the window are not filed
    /// (their stories are retired and their ids forgotten).
    newest: Millis,
}

impl StoryBook {
    /// An empty book.
    pub fn new(params: ClusterParams) -> StoryBook {
        StoryBook {
            window: params.window,
            clusterer: Clusterer::new(params),
            items: BTreeMap::new(),
            seen: HashSet::new(),
            newest: Millis::MIN,
        }
    }

    /// Whether the item was filed already.
    pub fn contains(&self, source: &str, id: &str) -> bool {
        self.seen.contains(&(source.to_string(), id.to_string()))
    }

    /// Files a new item; `false` if it was filed already (feeds repeat their items) or is
    /// older than the window.
    pub fn add(&mut self, item: NewsItem) -> bool {
        if item.published < self.newest.saturating_sub(self.window)
            || !self.seen.insert((item.source.clone(), item.id.clone()))
        {
            return false;
        }
        self.newest = self.newest.max(item.published);
        let arrival = self.clusterer.len();
        let lang = item.language.as_deref().and_then(Lang::from_tag);
        let assignment = (self.clusterer).add_in(lang, &item.title, &item.text, item.published);
        // Items leave with their window, like the clusters.
        let before = self.newest - self.window;
        while let Some((&first, filed)) = self.items.first_key_value() {
            if filed.item.published >= before {
                break;
            }
            let gone = self.items.remove(&first).expect("present");
            self.seen.remove(&(gone.item.source, gone.item.id));
        }
        self.items.insert(
            arrival,
            Filed {
                item,
                event: assignment.event,
                story: assignment.story,
                duplicate_of: assignment.duplicate_of,
            },
        );
        true
    }

    /// The newest publication time filed (`Millis::MIN` before any).
    pub fn newest(&self) -> Millis {
        self.newest
    }

    /// How many of the items filed last a replay must file again, older than the window or
    /// not, for the clusterer to count the items its statistics count now (see
    /// `ClusterParams::window_min_items`).
    pub fn kept_for_replay(&self) -> usize {
        self.clusterer.statistics_span()
    }

    /// Items filed and still inside the window.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether no item is filed.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Where every item inside the window sits now, in filing order.
    pub fn placements(&self) -> impl Iterator<Item = Placement> + '_ {
        self.items.values().map(|filed| Placement {
            source: filed.item.source.clone(),
            id: filed.item.id.clone(),
            event: event_id(filed.event),
            story: story_id(self.clusterer.story(filed.story)),
            duplicate_of: self.duplicate_of(filed),
        })
    }

    /// The id of the earlier item `filed` is a near-copy of, if it is one still in the window.
    fn duplicate_of(&self, filed: &Filed) -> Option<String> {
        filed
            .duplicate_of
            .and_then(|original| self.items.get(&original))
            .map(|original| original.item.id.clone())
    }

    /// The `limit` best stories at `now`, ranked.
    pub fn ranked(
        &self,
        now: Millis,
        weights: &RankWeights,
        interest: &dyn Interest,
        limit: usize,
    ) -> Vec<StoryView> {
        // Story → event → (arrival, item).
        type Events<'a> = BTreeMap<u64, Vec<(u32, &'a Filed)>>;
        let mut stories: BTreeMap<u64, Events<'_>> = BTreeMap::new();
        for (&arrival, filed) in &self.items {
            stories
                .entry(self.clusterer.story(filed.story))
                .or_default()
                .entry(filed.event)
                .or_default()
                .push((arrival, filed));
        }
        let mut views: Vec<StoryView> = stories
            .into_iter()
            .map(|(story, events)| {
                let all: Vec<&NewsItem> = events
                    .values()
                    .flatten()
                    .map(|(_, filed)| &filed.item)
                    .collect();
                let newest = all.iter().map(|item| item.published).max().unwrap_or(now);
                let age = (now - newest).max(0) as f64;
                let score = weights.freshness
                    * (-age / weights.half_life.max(1) as f64 * std::f64::consts::LN_2).exp()
                    + weights.size * (1.0 + all.len() as f64).ln()
                    + weights.interest * interest.score(&all).clamp(0.0, 1.0);
                let mut events: Vec<EventView> = events
                    .into_iter()
                    .map(|(event, mut filed)| {
                        filed.sort_by_key(|(arrival, f)| {
                            (
                                std::cmp::Reverse(f.item.published),
                                std::cmp::Reverse(*arrival),
                            )
                        });
                        EventView {
                            event: event_id(event),
                            items: filed
                                .into_iter()
                                .map(|(_, f)| ItemView {
                                    item: f.item.clone(),
                                    published_at: rfc3339(f.item.published),
                                    duplicate_of: self.duplicate_of(f),
                                })
                                .collect(),
                        }
                    })
                    .collect();
                events.sort_by(|a, b| b.items[0].item.published.cmp(&a.items[0].item.published));
                StoryView {
                    story: story_id(story),
                    score,
                    size: all.len(),
                    updated: rfc3339(newest),
                    events,
                }
            })
            .collect();
        views.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| b.updated.cmp(&a.updated))
                .then_with(|| a.story.cmp(&b.story))
        });
        views.truncate(limit);
        views
    }
}

fn event_id(event: u64) -> String {
    format!("e{event}")
}

fn story_id(story: u64) -> String {
    format!("s{story}")
}

fn rfc3339(at: Millis) -> String {
    crate::listing::rfc3339(at)
}
