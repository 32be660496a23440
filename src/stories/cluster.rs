//! Incremental two-level clustering: near-duplicates attached to their first copy, items
//! grouped into events (tight), events into stories (looser), every decision made as the item
//! arrives, with candidates from inverted indexes and clusters retired after a time window.
//!
//! **Weights.** Each item's terms are weighted tf·idf with `tf = ½ + ½·f / max f` and
//! `idf = ln(N / df)`, N and df counted over the items seen so far (the stream's own
//! statistics, kept incrementally). Vectors are L2-normalised.
//!
//! **Events.** An event's centroid is the sum of its items' vectors. A new item joins the event
//! with the highest cosine to it, found among the events that share one of its terms (an
//! inverted index from term to events, so the cost does not grow with the number of events),
//! if that cosine reaches `event_threshold`; otherwise it starts an event.
//!
//! **Stories.** A story's centroid is the sum of its items' vectors. A new event joins the
//! story with the highest cosine to its first item, if it reaches `story_threshold` (lower than
//! the event threshold); otherwise it starts a story. Items that join an event add to its
//! story's centroid as well.
//!
//! **Window.** Events and stories not updated for `window` are retired: they leave the
//! indexes and take no more items. Memory stays bounded on an endless stream.
//!
//! Ties break on the older cluster (lower id), so the same input gives the same clusters.

use std::collections::{BTreeMap, VecDeque};

use rustc_hash::FxHashMap;

use super::fuzzy::fuzzy_similarity;
use super::shingles::{containment, jaccard, shingles, LshIndex};
use super::text::{strip_html, Analyzer};

/// Time in milliseconds since the Unix epoch.
pub type Millis = i64;

/// Every threshold and size of the clusterer.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterParams {
    /// Words a shingle.
    pub shingle_words: usize,
    /// Jaccard similarity at or above which two items are duplicates.
    pub duplicate_jaccard: f64,
    /// Containment at or above which two items are duplicates.
    pub duplicate_containment: f64,
    /// Cosine at or above which an item joins an event.
    pub event_threshold: f32,
    /// Cosine at or above which an event joins a story.
    pub story_threshold: f32,
    /// Cosine between two story centroids at or above which they merge, when an item is close
    /// to both.
    pub merge_threshold: f32,
    /// Fuzzy matrix similarity of titles at or above which an item joins the closest event
    /// although its cosine is under `event_threshold` (but at least half of it); `None`: off.
    pub title_fuzzy: Option<f64>,
    /// Word similarity under which two words count as different in the fuzzy measure.
    pub fuzzy_cutoff: f64,
    /// Clusters not updated for this long are retired.
    pub window: Millis,
    /// Terms of an item used to look up candidate clusters (its highest weighted).
    pub lookup_terms: usize,
    /// Seed of the MinHash functions.
    pub seed: u64,
}

impl Default for ClusterParams {
    fn default() -> Self {
        ClusterParams {
            shingle_words: 3,
            duplicate_jaccard: 0.8,
            duplicate_containment: 0.9,
            event_threshold: 0.5,
            story_threshold: 0.1,
            merge_threshold: 0.2,
            title_fuzzy: None,
            fuzzy_cutoff: 0.7,
            window: 3 * 24 * 3_600_000,
            lookup_terms: 6,
            seed: 1,
        }
    }
}

/// Where an item went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Assignment {
    /// Its event.
    pub event: u32,
    /// Its story.
    pub story: u32,
    /// The earlier item it duplicates, by arrival number, if it is a near-duplicate.
    pub duplicate_of: Option<u32>,
}

/// A sparse, L2-normalised vector: (term id, weight), sorted by term id.
type Vector = Vec<(u32, f32)>;

#[derive(Debug, Default)]
struct Centroid {
    weights: FxHashMap<u32, f32>,
    norm2: f32,
    updated: Millis,
    retired: bool,
}

impl Centroid {
    fn add(&mut self, vector: &Vector, at: Millis) {
        for &(term, weight) in vector {
            let w = self.weights.entry(term).or_insert(0.0);
            self.norm2 += 2.0 * *w * weight + weight * weight;
            *w += weight;
        }
        self.updated = self.updated.max(at);
    }

    fn cosine(&self, vector: &Vector) -> f32 {
        if self.norm2 <= 0.0 {
            return 0.0;
        }
        let dot: f32 = vector
            .iter()
            .filter_map(|(term, weight)| self.weights.get(term).map(|w| w * weight))
            .sum();
        dot / self.norm2.sqrt()
    }
}

/// A set of centroids with an inverted index from term to the centroids holding it.
#[derive(Debug, Default)]
struct Level {
    clusters: Vec<Centroid>,
    index: FxHashMap<u32, Vec<u32>>,
    /// Clusters by last update, for retirement: (updated, id), oldest first.
    by_update: VecDeque<(Millis, u32)>,
    /// Per cluster, the last lookup that considered it.
    stamps: Vec<u32>,
    generation: u32,
}

impl Level {
    /// The best cluster for `vector` among those sharing one of `lookup` terms, if its cosine
    /// reaches `threshold`. Ties go to the older cluster.
    fn best(&mut self, vector: &Vector, lookup: &[u32], threshold: f32) -> Option<u32> {
        self.best_except(vector, lookup, threshold, None)
    }

    /// Like [`Level::best`], ignoring cluster `except`.
    fn best_except(
        &mut self,
        vector: &Vector,
        lookup: &[u32],
        threshold: f32,
        except: Option<u32>,
    ) -> Option<u32> {
        self.best_scored(vector, lookup, except)
            .filter(|&(cosine, _)| cosine >= threshold)
            .map(|(_, id)| id)
    }

    /// The closest cluster to `vector` among those sharing one of `lookup` terms (but
    /// `except`), with its cosine. Ties go to the older cluster.
    fn best_scored(
        &mut self,
        vector: &Vector,
        lookup: &[u32],
        except: Option<u32>,
    ) -> Option<(f32, u32)> {
        // Each candidate once: stamped with this lookup's generation (no sort, no set).
        self.generation = self.generation.wrapping_add(1);
        self.stamps.resize(self.clusters.len(), 0);
        let mut best: Option<(f32, u32)> = None;
        for term in lookup {
            let Some(ids) = self.index.get(term) else {
                continue;
            };
            for &id in ids {
                let stamp = &mut self.stamps[id as usize];
                if *stamp == self.generation {
                    continue;
                }
                *stamp = self.generation;
                let cluster = &self.clusters[id as usize];
                if cluster.retired || Some(id) == except {
                    continue;
                }
                let cosine = cluster.cosine(vector);
                if best.is_none_or(|(b, bid)| cosine > b || (cosine == b && id < bid)) {
                    best = Some((cosine, id));
                }
            }
        }
        best
    }

    fn create(&mut self, vector: &Vector, at: Millis) -> u32 {
        let id = self.clusters.len() as u32;
        self.clusters.push(Centroid::default());
        self.add(id, vector, at);
        id
    }

    fn add(&mut self, id: u32, vector: &Vector, at: Millis) {
        let cluster = &mut self.clusters[id as usize];
        for &(term, _) in vector {
            if !cluster.weights.contains_key(&term) {
                self.index.entry(term).or_default().push(id);
            }
        }
        cluster.add(vector, at);
        self.by_update.push_back((at, id));
    }

    /// Retires clusters not updated since `before`.
    fn retire(&mut self, before: Millis) {
        while let Some(&(at, id)) = self.by_update.front() {
            if at >= before {
                break;
            }
            self.by_update.pop_front();
            let cluster = &self.clusters[id as usize];
            if cluster.retired || cluster.updated >= before {
                continue;
            }
            self.drop_cluster(id);
        }
    }

    /// Takes cluster `id` out of the index for good, and returns its centroid's weights.
    fn drop_cluster(&mut self, id: u32) -> FxHashMap<u32, f32> {
        let cluster = &mut self.clusters[id as usize];
        cluster.retired = true;
        let weights = std::mem::take(&mut cluster.weights);
        for term in weights.keys() {
            if let Some(ids) = self.index.get_mut(term) {
                ids.retain(|&other| other != id);
                if ids.is_empty() {
                    self.index.remove(term);
                }
            }
        }
        weights
    }

    /// Cosine between the centroids of two clusters.
    fn centroid_cosine(&self, a: u32, b: u32) -> f32 {
        let (a, b) = (&self.clusters[a as usize], &self.clusters[b as usize]);
        let (small, large) = if a.weights.len() <= b.weights.len() {
            (a, b)
        } else {
            (b, a)
        };
        if small.norm2 <= 0.0 || large.norm2 <= 0.0 {
            return 0.0;
        }
        let dot: f32 = small
            .weights
            .iter()
            .filter_map(|(term, w)| large.weights.get(term).map(|v| v * w))
            .sum();
        dot / (small.norm2.sqrt() * large.norm2.sqrt())
    }

    /// Merges cluster `from` into `into`.
    fn merge(&mut self, into: u32, from: u32) {
        let updated = self.clusters[from as usize].updated;
        let weights: Vector = self.drop_cluster(from).into_iter().collect();
        self.add(into, &weights, updated);
    }
}

/// An item kept for near-duplicate checks while it is inside the window.
#[derive(Debug)]
struct Kept {
    shingles: Vec<u64>,
    at: Millis,
    assignment: Assignment,
}

/// The incremental clusterer. Feed it items in arrival order with [`Clusterer::add`].
#[derive(Debug)]
pub struct Clusterer {
    params: ClusterParams,
    analyzer: Analyzer,
    terms: FxHashMap<String, u32>,
    df: Vec<u32>,
    n: u32,
    events: Level,
    stories: Level,
    event_story: Vec<u32>,
    /// Each event's first title, as terms (for the fuzzy title measure).
    event_titles: Vec<Vec<String>>,
    /// Union-find over stories: a merged story points at the one it joined.
    story_parent: Vec<u32>,
    lsh: LshIndex,
    kept: BTreeMap<u32, Kept>,
    arrivals: u32,
    duplicates: u32,
}

impl Clusterer {
    /// An empty clusterer.
    pub fn new(params: ClusterParams) -> Clusterer {
        Clusterer {
            lsh: LshIndex::new(20, 2, params.seed),
            params,
            analyzer: Analyzer::new(),
            terms: FxHashMap::default(),
            df: Vec::new(),
            n: 0,
            events: Level::default(),
            stories: Level::default(),
            event_story: Vec::new(),
            event_titles: Vec::new(),
            story_parent: Vec::new(),
            kept: BTreeMap::new(),
            arrivals: 0,
            duplicates: 0,
        }
    }

    /// Items seen.
    pub fn len(&self) -> u32 {
        self.arrivals
    }

    /// Whether no item was seen.
    pub fn is_empty(&self) -> bool {
        self.arrivals == 0
    }

    /// Items attached to an earlier copy.
    pub fn duplicates(&self) -> u32 {
        self.duplicates
    }

    /// Events created.
    pub fn events(&self) -> usize {
        self.events.clusters.len()
    }

    /// Stories created.
    pub fn stories(&self) -> usize {
        self.stories.clusters.len()
    }

    /// Clusters the item at `at` with title `title` and body `text` (HTML allowed).
    pub fn add(&mut self, title: &str, text: &str, at: Millis) -> Assignment {
        let arrival = self.arrivals;
        self.arrivals += 1;
        self.retire(at);
        let body = strip_html(text);
        let full = if body.trim().is_empty() {
            title.to_string()
        } else {
            format!("{title}\n{body}")
        };
        let lang = self.analyzer.detect(&full);

        // Near-duplicates first: a copy joins its original and is not clustered again.
        let words = self.analyzer.words(&full);
        let item_shingles = shingles(&words, self.params.shingle_words);
        let bands = self.lsh.bands(&item_shingles);
        if let Some(original) = self.duplicate_of(&item_shingles, &bands) {
            self.duplicates += 1;
            let assignment = Assignment {
                duplicate_of: Some(original),
                ..self.kept[&original].assignment
            };
            return assignment;
        }

        let vector = self.vector(&self.analyzer.terms_of_words(&words, lang));
        let lookup = self.lookup(&vector);
        let title_terms = match self.params.title_fuzzy {
            Some(_) => self.analyzer.terms(title, lang),
            None => Vec::new(),
        };
        let assignment = match self.event_for(&vector, &lookup, &title_terms) {
            Some(event) => {
                self.events.add(event, &vector, at);
                let story = self.story(self.event_story[event as usize]);
                self.stories.add(story, &vector, at);
                Assignment {
                    event,
                    story,
                    duplicate_of: None,
                }
            }
            None => {
                let event = self.events.create(&vector, at);
                self.event_titles.push(title_terms);
                let story = match self
                    .stories
                    .best(&vector, &lookup, self.params.story_threshold)
                {
                    Some(story) => {
                        self.stories.add(story, &vector, at);
                        story
                    }
                    None => {
                        self.story_parent.push(self.stories.clusters.len() as u32);
                        self.stories.create(&vector, at)
                    }
                };
                self.event_story.push(story);
                Assignment {
                    event,
                    story,
                    duplicate_of: None,
                }
            }
        };
        let assignment = Assignment {
            story: self.merge_stories(assignment.story, &vector, &lookup),
            ..assignment
        };
        self.lsh.insert(arrival, &bands);
        self.kept.insert(
            arrival,
            Kept {
                shingles: item_shingles,
                at,
                assignment,
            },
        );
        assignment
    }

    /// The event an item joins: the closest by cosine if it reaches the event threshold, or,
    /// with the fuzzy title measure on, if it reaches half of it and the titles match.
    fn event_for(&mut self, vector: &Vector, lookup: &[u32], title: &[String]) -> Option<u32> {
        let threshold = self.params.event_threshold;
        let (cosine, event) = self.events.best_scored(vector, lookup, None)?;
        if cosine >= threshold {
            return Some(event);
        }
        let fuzzy = self.params.title_fuzzy?;
        let first = &self.event_titles[event as usize];
        (cosine >= threshold / 2.0
            && fuzzy_similarity(title, first, self.params.fuzzy_cutoff) >= fuzzy)
            .then_some(event)
    }

    /// The story a story id now stands for (after merges).
    pub fn story(&self, mut id: u32) -> u32 {
        while let Some(&parent) = self.story_parent.get(id as usize) {
            if parent == id {
                break;
            }
            id = parent;
        }
        id
    }

    /// When the item in `story` is also close to another story and the two centroids are
    /// close, the smaller story merges into the larger. Returns the item's story after it.
    fn merge_stories(&mut self, story: u32, vector: &Vector, lookup: &[u32]) -> u32 {
        let threshold = self.params.story_threshold;
        let Some(other) = self
            .stories
            .best_except(vector, lookup, threshold, Some(story))
        else {
            return story;
        };
        if self.stories.centroid_cosine(story, other) < self.params.merge_threshold {
            return story;
        }
        let (into, from) = {
            let size = |id: u32| self.stories.clusters[id as usize].norm2;
            if size(story) >= size(other) {
                (story, other)
            } else {
                (other, story)
            }
        };
        self.stories.merge(into, from);
        self.story_parent[from as usize] = into;
        into
    }

    fn duplicate_of(&self, item: &[u64], bands: &[u64]) -> Option<u32> {
        self.lsh.candidates(bands).into_iter().find(|candidate| {
            self.kept.get(candidate).is_some_and(|kept| {
                jaccard(item, &kept.shingles) >= self.params.duplicate_jaccard
                    || containment(item, &kept.shingles) >= self.params.duplicate_containment
            })
        })
    }

    /// The item's tf·idf vector, counting it into the document frequencies first.
    fn vector(&mut self, terms: &[String]) -> Vector {
        let mut counts: FxHashMap<u32, u32> = FxHashMap::default();
        for term in terms {
            let next = self.terms.len() as u32;
            let id = *self.terms.entry(term.clone()).or_insert(next);
            if id == next {
                self.df.push(0);
            }
            *counts.entry(id).or_insert(0) += 1;
        }
        self.n += 1;
        for &id in counts.keys() {
            self.df[id as usize] += 1;
        }
        let max = counts.values().copied().max().unwrap_or(1) as f32;
        let n = self.n as f32;
        let mut vector: Vector = counts
            .into_iter()
            .map(|(id, f)| {
                let tf = 0.5 + 0.5 * f as f32 / max;
                let idf = (n / self.df[id as usize] as f32).ln();
                (id, tf * idf)
            })
            .filter(|&(_, w)| w > 0.0)
            .collect();
        let norm = vector.iter().map(|(_, w)| w * w).sum::<f32>().sqrt();
        if norm > 0.0 {
            for (_, w) in &mut vector {
                *w /= norm;
            }
        }
        vector.sort_unstable_by_key(|&(id, _)| id);
        vector
    }

    /// The item's highest weighted terms, for candidate lookup.
    fn lookup(&self, vector: &Vector) -> Vec<u32> {
        let mut terms = vector.clone();
        terms.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        terms
            .into_iter()
            .take(self.params.lookup_terms)
            .map(|(id, _)| id)
            .collect()
    }

    fn retire(&mut self, now: Millis) {
        let before = now - self.params.window;
        self.events.retire(before);
        self.stories.retire(before);
        // Kept items are the LSH index's items, in the same order: both leave oldest first.
        while let Some((&arrival, kept)) = self.kept.first_key_value() {
            if kept.at >= before {
                break;
            }
            self.lsh.remove_oldest();
            self.kept.remove(&arrival);
        }
    }
}
