//! The FilterAdvisor and the Filter: per lighthouse, a vector of features with a vector of
//! thresholds, and a majority vote.
//!
//! **Building** (FilterAdvisor). For a lighthouse, the *set* is the lighthouse with the pages
//! strongly linked to it: fetched pages it links to or that link to it, in the map or not (a
//! page the vote discarded belongs to the topic as much as one it passed), whose topic
//! similarity to it ([`topic_similarity`]) is at least `min_link_similarity`, the
//! `max_set` closest. The set's
//! representatives are the `representatives` members most similar on average to all the
//! others. For each feature kind, a page's similarity to the set is its best similarity to a
//! representative. The kind enters the vector when the set's members reach, at their median,
//! at least `margin` more than the random sample does at its 80th percentile; its threshold is
//! halfway between the two. With a set of one (start-up: a liked page and nothing yet), a kind
//! enters when the sample's 80th percentile leaves room for twice the margin, with the
//! percentile plus the margin for threshold: lenient at first, tightening as the set grows.
//!
//! **Voting** (Filter). A page passes a filter when more than half of the filter's features
//! reach their thresholds, and goes on when any filter passes it ([`Ballot::vote`]); the
//! filter that passed it is recorded with the page.
//!
//! **Reliability.** Every filter starts at 1. A dislike of a page it passed costs
//! `dislike_cost`; a page it passed that the user has given no feedback on within
//! `unvisited_after_ms` costs `unvisited_cost` (once); a like or a visit gives back `visit_credit` (at most 1). A filter under
//! `rebuild_below` is rebuilt from its lighthouse's current set, and so is one whose set has
//! grown by half. The pages the vote discarded that a new filter passes are voted on again.

use serde::{Deserialize, Serialize};

use super::advisor::{quantile, topic_similarity};
use super::features::{similarity, FeatureKind, Features, TermStats};

/// The FilterAdvisor's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct FilterParams {
    /// Representatives per filter.
    pub representatives: usize,
    /// How far a feature must stand out from the random sample.
    pub margin: f64,
    /// Topic similarity a linked page needs to count as strongly linked.
    pub min_link_similarity: f64,
    /// Strongly linked pages a set keeps at most, the closest to its lighthouse: building a
    /// filter compares every member with every other.
    pub max_set: usize,
    /// Reliability a dislike costs.
    pub dislike_cost: f64,
    /// Reliability a page left unvisited costs.
    pub unvisited_cost: f64,
    /// How long after it passed a page the user has given no feedback on counts as not
    /// visited, in ms.
    pub unvisited_after_ms: i64,
    /// Reliability a visit or like gives back.
    pub visit_credit: f64,
    /// Reliability under which a filter is rebuilt.
    pub rebuild_below: f64,
}

impl Default for FilterParams {
    fn default() -> Self {
        FilterParams {
            representatives: 3,
            margin: 0.1,
            min_link_similarity: 0.15,
            max_set: 12,
            dislike_cost: 0.25,
            unvisited_cost: 0.02,
            unvisited_after_ms: 72 * 3_600_000,
            visit_credit: 0.05,
            rebuild_below: 0.4,
        }
    }
}

/// One entry of a filter's vector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FilterFeature {
    /// The feature compared.
    pub kind: FeatureKind,
    /// The best similarity to a representative a page needs.
    pub threshold: f64,
}

/// A filter fingerprint: the set's representatives, the feature vector and its thresholds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FilterFingerprint {
    /// Unique among filters.
    pub id: u64,
    /// The lighthouse whose set it stands for.
    pub lighthouse: String,
    /// The representatives' URLs and features (they travel with the filter).
    pub representatives: Vec<(String, Features)>,
    /// The features and thresholds.
    pub vector: Vec<FilterFeature>,
    /// In [0, 1]; see the module's doc.
    pub reliability: f64,
    /// When it was built.
    pub created_at_ms: i64,
    /// Pages it passed.
    pub passed: u32,
}

impl FilterFingerprint {
    /// How many of the vector's features `features` reaches, and the vector's length.
    pub fn score(&self, features: &Features, stats: &TermStats) -> (usize, usize) {
        let reached = self
            .vector
            .iter()
            .filter(|entry| {
                self.representatives
                    .iter()
                    .map(|(_, rep)| similarity(entry.kind, rep, features, stats))
                    .fold(0.0, f64::max)
                    >= entry.threshold
            })
            .count();
        (reached, self.vector.len())
    }

    /// Whether a majority of the vector's features pass.
    pub fn passes(&self, features: &Features, stats: &TermStats) -> bool {
        let (reached, of) = self.score(features, stats);
        of > 0 && 2 * reached > of
    }

    /// The kinds the vote needs computed.
    pub fn kinds(&self) -> impl Iterator<Item = FeatureKind> + '_ {
        self.vector.iter().map(|e| e.kind)
    }
}

/// Builds a filter for `lighthouse` from its set (`members`, the lighthouse first) and a
/// random `sample` (each member counting for the kinds it has: see the advisor's module doc).
/// None when no feature tells the set from the sample.
pub fn build_filter(
    params: &FilterParams,
    id: u64,
    members: &[(&str, &Features)],
    sample: &[&Features],
    stats: &TermStats,
    now_ms: i64,
) -> Option<FilterFingerprint> {
    let (lighthouse, _) = *members.first()?;
    // The members most similar on average to all the others.
    let mut central: Vec<(usize, f64)> = members
        .iter()
        .enumerate()
        .map(|(i, (_, a))| {
            let total: f64 = members
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, (_, b))| topic_similarity(a, b, stats))
                .sum();
            (i, total / (members.len().max(2) - 1) as f64)
        })
        .collect();
    central.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let reps: Vec<usize> = central
        .iter()
        .take(params.representatives.max(1))
        .map(|&(i, _)| i)
        .collect();
    let best = |kind: FeatureKind, f: &Features, skip: Option<usize>| {
        reps.iter()
            .filter(|&&r| Some(r) != skip)
            .map(|&r| similarity(kind, members[r].1, f, stats))
            .fold(0.0, f64::max)
    };
    let vector: Vec<FilterFeature> = FeatureKind::ALL
        .iter()
        .filter_map(|&kind| {
            let mut against: Vec<f64> = sample
                .iter()
                .filter(|s| s.has(kind))
                .map(|s| best(kind, s, None))
                .collect();
            if against.is_empty() {
                return None;
            }
            let common = quantile(&mut against, 0.8);
            let mut within: Vec<f64> = members
                .iter()
                .enumerate()
                .filter(|&(i, _)| !(reps.len() == 1 && reps[0] == i))
                .map(|(i, (_, f))| best(kind, f, Some(i).filter(|_| reps.len() > 1)))
                .collect();
            if within.is_empty() {
                // Start-up: nothing to tell the set's spread by; a feature the sample leaves
                // room above counts, with the margin for threshold.
                return (common + 2.0 * params.margin <= 1.0).then_some(FilterFeature {
                    kind,
                    threshold: common + params.margin,
                });
            }
            let typical = quantile(&mut within, 0.5);
            (typical - common >= params.margin).then_some(FilterFeature {
                kind,
                threshold: (common + typical) / 2.0,
            })
        })
        .collect();
    if vector.is_empty() {
        return None;
    }
    Some(FilterFingerprint {
        id,
        lighthouse: lighthouse.to_string(),
        representatives: reps
            .iter()
            .map(|&r| (members[r].0.to_string(), members[r].1.clone()))
            .collect(),
        vector,
        reliability: 1.0,
        created_at_ms: now_ms,
        passed: 0,
    })
}

/// What a Filter votes with: every filter and the term statistics their similarities use, as
/// they stood when the loop made it. The loop hands one to each vote it orders (shared, behind
/// an `Arc`) and makes a new one when the filters change or the statistics have grown, so a
/// vote can run anywhere — on a Filter's own thread in the daemon — while the loop goes on.
#[derive(Debug, Clone, Default)]
pub struct Ballot {
    filters: Vec<FilterFingerprint>,
    stats: TermStats,
    /// The bank's generation it was made at.
    generation: u64,
}

impl Ballot {
    /// The filter that passes a page with `features` (the one with the largest share of
    /// features reached, the most reliable among equals), or None: no filter passes it, and it
    /// is discarded.
    pub fn vote(&self, features: &Features) -> Option<u64> {
        self.filters
            .iter()
            .filter_map(|f| {
                let (reached, of) = f.score(features, &self.stats);
                (of > 0 && 2 * reached > of)
                    .then(|| (f.id, reached as f64 / of as f64, f.reliability))
            })
            .max_by(|a, b| {
                a.1.total_cmp(&b.1)
                    .then(a.2.total_cmp(&b.2))
                    .then(b.0.cmp(&a.0))
            })
            .map(|(id, _, _)| id)
    }

    /// The statistics' page count when it was made.
    pub fn docs(&self) -> u32 {
        self.stats.docs()
    }

    /// The [`FilterBank::generation`] it was made at.
    pub fn generation(&self) -> u64 {
        self.generation
    }
}

/// Every filter, voting together.
#[derive(Debug, Clone, Default)]
pub struct FilterBank {
    params: FilterParams,
    filters: Vec<FilterFingerprint>,
    next_id: u64,
    /// Moves whenever a vote could come out differently: a filter built, or a reliability
    /// changed.
    generation: u64,
}

impl FilterBank {
    /// No filters yet.
    pub fn new(params: FilterParams) -> FilterBank {
        FilterBank {
            params,
            filters: Vec::new(),
            next_id: 1,
            generation: 0,
        }
    }

    /// Filters restored from the store.
    pub fn restore(params: FilterParams, filters: Vec<FilterFingerprint>) -> FilterBank {
        let next_id = filters.iter().map(|f| f.id).max().unwrap_or(0) + 1;
        FilterBank {
            params,
            filters,
            next_id,
            generation: 0,
        }
    }

    /// The filters.
    pub fn filters(&self) -> &[FilterFingerprint] {
        &self.filters
    }

    /// The settings.
    pub fn params(&self) -> &FilterParams {
        &self.params
    }

    /// The kinds any filter's vote needs.
    pub fn kinds(&self) -> Vec<FeatureKind> {
        let mut kinds: Vec<FeatureKind> = self.filters.iter().flat_map(|f| f.kinds()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        kinds
    }

    /// What the Filters vote with now: the filters and `stats`, frozen.
    pub fn ballot(&self, stats: &TermStats) -> Ballot {
        Ballot {
            filters: self.filters.clone(),
            stats: stats.clone(),
            generation: self.generation,
        }
    }

    /// See the field: a [`Ballot`] of an older generation votes with stale filters.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Counts a page filter `id` passed (a vote it won).
    pub fn credit(&mut self, id: u64) {
        if let Some(f) = self.filters.iter_mut().find(|f| f.id == id) {
            f.passed += 1;
        }
    }

    /// Whether the lighthouse has a filter.
    pub fn covers(&self, lighthouse: &str) -> bool {
        self.filters.iter().any(|f| f.lighthouse == lighthouse)
    }

    /// Builds (or rebuilds) the filter of the set's lighthouse (`members[0]`). Returns whether
    /// a filter now stands for it.
    pub fn install(
        &mut self,
        members: &[(&str, &Features)],
        sample: &[&Features],
        stats: &TermStats,
        now_ms: i64,
    ) -> bool {
        let Some(filter) = build_filter(&self.params, self.next_id, members, sample, stats, now_ms)
        else {
            return false;
        };
        self.next_id += 1;
        self.generation += 1;
        self.filters.retain(|f| f.lighthouse != filter.lighthouse);
        self.filters.push(filter);
        true
    }

    /// The user's verdict on a page filter `id` passed: `Some(true)` liked or visited,
    /// `Some(false)` disliked, None not visited within the window.
    pub fn judge(&mut self, id: u64, verdict: Option<bool>) {
        let p = &self.params;
        let delta = match verdict {
            Some(true) => p.visit_credit,
            Some(false) => -p.dislike_cost,
            None => -p.unvisited_cost,
        };
        if let Some(f) = self.filters.iter_mut().find(|f| f.id == id) {
            f.reliability = (f.reliability + delta).clamp(0.0, 1.0);
            self.generation += 1;
        }
    }

    /// Lighthouses whose filter's reliability fell under the rebuild level.
    pub fn unreliable(&self) -> Vec<String> {
        self.filters
            .iter()
            .filter(|f| f.reliability < self.params.rebuild_below)
            .map(|f| f.lighthouse.clone())
            .collect()
    }
}
