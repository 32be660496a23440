//! Incremental two-level clustering: near-duplicates attached to their first copy, items
//! grouped into events (tight), events into stories (looser), every decision made as the item
//! arrives, with candidates from inverted indexes and clusters retired after a time window.
//!
//! **Terms.** An item's terms are its stems (stop words dropped) and, with `bigrams` on, each
//! pair of adjacent stems as one more term ("game of thrones" → `game`, `throne`,
//! `game throne`): headlines of one story share names and phrases, and a shared phrase is
//! stronger evidence than its two words apart. Bigrams weigh at the story level only: events
//! are tight already, and their vectors are the words' alone (renormalised). Candidates are
//! looked up by words.
//!
//! **Weights.** Each item's terms are weighted tf·idf^p with `tf = ½ + ½·f / max f`,
//! `idf = ln(N / df)`, N and df counted over the items of the window (the stream's own
//! recent statistics, kept incrementally: an item counts in when it arrives and out when it
//! leaves the window), and p = `idf_power` (¼ by default: a headline is a handful
//! of words, and with the plain idf its one rare word decides alone) for an item of up to 48
//! distinct terms, rising with the logarithm of the count to 1 (the plain idf) at 384: in a
//! long text the flattened idf gives the stream's common words nearly full weight, and long
//! texts then all look alike. Vectors are L2-normalised.
//!
//! **Events.** An event's centroid is the sum of its items' vectors. A new item joins the event
//! with the highest cosine to it, found among the events that share one of its heaviest words
//! (an inverted index from word to events, so the cost does not grow with the number of
//! events; its postings carry each event's weight on the word, so the cosines are summed
//! term at a time), if that cosine reaches `event_threshold`; otherwise it starts an event.
//!
//! **Stories.** A story's centroid is the sum of its items' vectors. A new event joins the
//! story with the highest cosine to its first item, if it reaches `story_threshold` (lower than
//! the event threshold), or `big_story_threshold` (lower still) when that story holds
//! `big_story` items or more; otherwise it starts a story. Items that join an event add to its
//! story's centroid as well.
//!
//! **Young stories.** A story of at most `young_story` items is judged again each time it
//! grows: its centroid against the big stories (`big_story` items or more) among the
//! candidates of the item that just joined it; when the closest reaches `young_threshold`, the
//! young story merges into it. And the other way: when a big story grows, the young stories
//! among its new item's candidates whose centroids reach `young_threshold` against it merge
//! into it (a big story still growing catches up with the young ones that were too far from it
//! when they started). A story's first headline often leans on a detail of its own ("UK's
//! first bitcoin machine opens in east London cafe") and starts a story beside the big one it
//! belongs to; its next headlines join it, and their sum says what they share.
//!
//! **Window.** Events and stories not updated for `window` are retired: they leave the
//! indexes and take no more items; items older than `window` leave the near-duplicate index
//! and the statistics (which keep the last `window_min_items` at least). Words and bigrams
//! on no item of the window and in no live cluster are forgotten once they make up half the
//! vocabulary, their ids going to new terms. So the indexes, the statistics and the
//! vocabulary stay within what a window (or two) brings on an endless stream. So do the
//! clusters' records: a cluster lives in a slot, and once no item of the window can name it
//! (it retired, or merged away and was not updated for a window) its slot goes to a new
//! cluster. The ids the caller gets are serials that are never
//! handed out again, so an id kept from before still names its cluster or nothing
//! ([`Clusterer::story`]), never another one; see [`Clusterer::footprint`].
//!
//! Ties break on the lower slot (the older cluster, until slots are taken again), so the same
//! input gives the same clusters.

use std::borrow::Cow;
use std::collections::VecDeque;

use rustc_hash::{FxHashMap, FxHashSet};

use super::fuzzy::fuzzy_similarity;
use super::lang::LANGS;
use super::shingles::{shingles, similarity, LshIndex};
use super::text::{strip_html, Analyzer, Lang, Words};

mod level;
mod vocabulary;

use level::{better, Level, Query};
use vocabulary::Vocabulary;

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
    /// The same for an article's text: a long text shares a smaller part of its terms with
    /// another report of its story than a headline does. Between a headline (48 distinct
    /// terms, words and bigrams, or fewer) and an article (384 or more) the threshold moves
    /// from `story_threshold` to this one with the logarithm of the item's terms.
    pub long_story_threshold: f32,
    /// Cosine between two story centroids at or above which they merge, when an item is close
    /// to both.
    pub merge_threshold: f32,
    /// Cosine at or above which a new event joins a big story (`big_story` items or more)
    /// that is its closest: a big story's centroid spreads over many terms, so the cosine of
    /// one of its headlines to it is lower than to a small one.
    pub big_story_threshold: f32,
    /// Items from which a story counts as big.
    pub big_story: u32,
    /// Items up to which a story counts as young: judged again, as a whole, against the big
    /// stories each time it grows. 0: off.
    pub young_story: u32,
    /// Cosine between a young story's centroid and a big story's at or above which the young
    /// story merges into the big one.
    pub young_threshold: f32,
    /// Fuzzy matrix similarity of titles at or above which an item joins the closest event
    /// although its cosine is under `event_threshold` (but at least half of it); `None`: off.
    pub title_fuzzy: Option<f64>,
    /// Word similarity under which two words count as different in the fuzzy measure.
    pub fuzzy_cutoff: f64,
    /// Clusters not updated for this long are retired.
    pub window: Millis,
    /// Items the statistics (N, df, the summed items) keep at least, older than `window` or
    /// not. A sparse stream's window holds a handful of items, and over three items a word
    /// two of them share weighs a third of one on a single item: the idf then works against
    /// what items have in common. The near-duplicate index follows the window alone.
    pub window_min_items: usize,
    /// Terms of an item used to look up candidate clusters (its highest weighted).
    pub lookup_terms: usize,
    /// Adjacent pairs of stems count as terms too.
    pub bigrams: bool,
    /// An English stem of a people or language ("russian", "chines") becomes the stem of its
    /// place ("russia", "china") when that is already a term (see `demonym_bases`).
    pub demonyms: bool,
    /// Exponent of the idf in a headline's weights (1: plain tf·idf); long texts rise to 1.
    pub idf_power: f32,
    /// The share of a term's idf counted over the live stories rather than the items of the
    /// window (see `Clusterer::vector`). 0: the items' idf alone.
    pub story_idf_share: f32,
    /// The share of the background taken out of a story before a long item's cosine to it
    /// (0: none; scaled by the item's length as `long_story_threshold` is, so headlines keep
    /// their cosines). Every item shares some of the stream's common words with every other,
    /// so a story's centroid holds its items' share of the mean item as well as what they
    /// have in common: an unrelated item's cosine to it grows with the square root of its
    /// items where their own similarity is low. A headline's handful of words shares little
    /// with the mean, and a long text much: over article texts, a story of 200 unrelated
    /// ones drew a cosine of 0.1 from any other text. The background is the story's items
    /// times the mean of the window's items outside the story; with it taken out, that
    /// cosine stays near 0 at every size.
    pub background: f32,
    /// Seed of the MinHash functions.
    pub seed: u64,
}

/// Items with at most this many distinct terms (words and bigrams: a headline, a headline
/// with a line of summary) weigh by `idf^idf_power`.
const SHORT_TEXT_TERMS: u32 = 48;

/// Items with this many distinct terms or more (an article's text) weigh by the plain idf.
/// In between, the power rises with the logarithm of the count.
const LONG_TEXT_TERMS: u32 = 8 * SHORT_TEXT_TERMS;

/// The idf's exponent for an item of `terms` distinct terms: `short` for a headline, 1 for an
/// article. The flattened idf that lets a headline's few shared words count gives the words
/// common to a whole stream (said, year, a site's navigation) nearly full weight in a long
/// text, and long texts then all look alike: 317 pages of Python's library documentation,
/// each its own page, fell into one story of 313 at `idf^¼`, and 250 stories at the plain idf.
fn idf_power_for(short: f32, terms: u32) -> f32 {
    short + (1.0 - short) * length(terms)
}

/// How far an item of `terms` distinct terms is from a headline towards an article: 0 up
/// to [`SHORT_TEXT_TERMS`], 1 from [`LONG_TEXT_TERMS`] on, rising with the logarithm of the
/// count in between.
fn length(terms: u32) -> f32 {
    if terms <= SHORT_TEXT_TERMS {
        return 0.0;
    }
    let span = (LONG_TEXT_TERMS as f32 / SHORT_TEXT_TERMS as f32).log2();
    ((terms as f32 / SHORT_TEXT_TERMS as f32).log2() / span).min(1.0)
}

/// Distinct adjacent pairs in `ids`: the bigrams an item would have.
fn distinct_pairs(ids: &[u32]) -> u32 {
    let mut pairs: Vec<(u32, u32)> = ids.windows(2).map(|pair| (pair[0], pair[1])).collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs.len() as u32
}

impl Default for ClusterParams {
    fn default() -> Self {
        ClusterParams {
            shingle_words: 3,
            duplicate_jaccard: 0.8,
            duplicate_containment: 0.9,
            event_threshold: 0.6,
            story_threshold: 0.12,
            long_story_threshold: 0.05,
            merge_threshold: 0.25,
            big_story_threshold: 0.06,
            big_story: 40,
            young_story: 6,
            young_threshold: 0.12,
            title_fuzzy: None,
            fuzzy_cutoff: 0.7,
            window: 3 * 24 * 3_600_000,
            window_min_items: 100,
            lookup_terms: 6,
            bigrams: true,
            demonyms: true,
            idf_power: 0.25,
            story_idf_share: 0.4,
            background: 1.0,
            seed: 1,
        }
    }
}

/// Where an item went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Assignment {
    /// Its event, by the number of events created before it (unique over the stream: ids
    /// are not handed out again, though the clusterer's slots are).
    pub event: u64,
    /// Its story, numbered as events are; [`Clusterer::story`] follows it through merges.
    pub story: u64,
    /// The earlier item it duplicates, by arrival number, if it is a near-duplicate.
    pub duplicate_of: Option<u32>,
}

/// A sparse, L2-normalised vector: (term id, weight), sorted by term id.
type Vector = Vec<(u32, f32)>;

/// `ln ln(S / s)` by `s` for the live stories `S` (plus 2) of the item being weighed, `s`
/// those holding a term (plus 1): the log of the stories' idf, kept from term to term and
/// item to item until `S` changes, most terms being held by a few stories. NaN marks a value
/// not computed yet (the value itself is never NaN: `s < S`).
#[derive(Debug, Default)]
struct StoryLogs {
    stories: f32,
    logs: Vec<f32>,
}

impl StoryLogs {
    /// Starts weighing against `stories`.
    fn count(&mut self, stories: f32) {
        if stories != self.stories {
            self.stories = stories;
            self.logs.clear();
        }
    }

    /// `ln ln(S / held)`.
    fn of(&mut self, held: u32) -> f32 {
        let at = held as usize;
        if at >= self.logs.len() {
            self.logs.resize(at + 1, f32::NAN);
        }
        if self.logs[at].is_nan() {
            self.logs[at] = (self.stories / held as f32).ln().ln();
        }
        self.logs[at]
    }
}

/// The words of `vector` (its prefix before the bigrams), L2-normalised again.
fn words_only(vector: &Vector) -> Vector {
    let words = vector.partition_point(|&(id, _)| id & BIGRAM == 0);
    let mut out = vector[..words].to_vec();
    let norm = out.iter().map(|(_, w)| w * w).sum::<f32>().sqrt();
    if norm > 0.0 {
        for (_, w) in &mut out {
            *w /= norm;
        }
    }
    out
}

/// The stems an English stem of a people or language may come from, in the order to try:
/// "russian" → `russia`, "ukrainian" → `ukrain` (Ukraine's stem), "chines" → `china`,
/// "japanes" → `japan`, "american" → `america`. Snowball leaves these apart; the caller takes
/// the first that is already a term. Empty for stems under six letters.
pub(crate) fn demonym_bases(stem: &str) -> Vec<String> {
    let mut bases = Vec::new();
    if stem.chars().count() < 6 {
        return bases;
    }
    for suffix in ["ian", "es", "ese", "an"] {
        if let Some(base) = stem.strip_suffix(suffix) {
            bases.push(base.to_string());
            bases.push(format!("{base}a"));
        }
    }
    bases
}

/// Sets `values[slot]`, growing `values` by one when `slot` is a new slot at its end.
fn set<T>(values: &mut Vec<T>, slot: u32, value: T) {
    match values.get_mut(slot as usize) {
        Some(old) => *old = value,
        None => values.push(value),
    }
}

/// Words remembered with their term ids before the memory starts over (the ids stay).
const WORD_CACHE: usize = 200_000;

/// The bit that marks a term id as a bigram's. Bigrams weigh in cosines but find no
/// candidates: those come from words.
const BIGRAM: u32 = 1 << 31;

/// An item kept for the statistics, and for near-duplicate checks while it is inside the
/// window (its shingles are dropped when it leaves).
#[derive(Debug)]
struct Kept {
    arrival: u32,
    shingles: Vec<u64>,
    /// How many terms it counted in the document frequencies: its part of
    /// [`Clusterer::counted`].
    counted: u32,
    at: Millis,
    assignment: Assignment,
}

/// What a [`Clusterer`] holds: the vocabulary and the near-duplicate window are bounded by
/// the window; cluster records, a few dozen bytes each once retired, are not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footprint {
    /// Words in the vocabulary.
    pub words: usize,
    /// Bigrams in the vocabulary.
    pub bigrams: usize,
    /// Items kept for the near-duplicate check.
    pub kept: usize,
    /// Events taking items.
    pub live_events: usize,
    /// Stories taking items.
    pub live_stories: usize,
    /// Slots of events and stories, live or waiting to be freed (once no item of the window
    /// can name their clusters): about the most that were live at once.
    pub clusters: usize,
}

/// The incremental clusterer. Feed it items in arrival order with [`Clusterer::add`].
#[derive(Debug)]
pub struct Clusterer {
    params: ClusterParams,
    analyzer: Analyzer,
    terms: FxHashMap<String, u32>,
    /// Term ids of the bigrams: (first stem's id, second stem's id) → id, [`BIGRAM`] set.
    bigrams: FxHashMap<(u32, u32), u32>,
    /// The words' document frequencies over the window, by id.
    word_stats: Vocabulary,
    /// The same of the bigrams, by id without [`BIGRAM`].
    bigram_stats: Vocabulary,
    /// A term was made while the vocabulary held twice its live terms: sweep it before the
    /// next item ([`Clusterer::sweep`]).
    sweep_due: bool,
    /// Items read in each language, by [`Lang::index`].
    languages: [u32; LANGS],
    /// Word → term id (`None`: no term), a map per language, by [`Lang::index`].
    word_ids: Vec<FxHashMap<String, Option<u32>>>,
    n: u32,
    events: Level,
    stories: Level,
    /// Each event's story by serial, by the event's slot.
    event_story: Vec<u64>,
    /// Each event's first title, as terms (for the fuzzy title measure), by slot.
    event_titles: Vec<Vec<String>>,
    /// Union-find over stories, by slot: the serial of the story a merged story joined (its
    /// own serial while it has not).
    story_parent: Vec<u64>,
    lsh: LshIndex,
    /// By arrival, oldest first.
    kept: VecDeque<Kept>,
    /// The newest `in_lsh` of `kept` are in the near-duplicate index (the window's); the
    /// others count in the statistics only (see [`ClusterParams::window_min_items`]).
    in_lsh: usize,
    /// The places in the near-duplicate index of an item's candidates (reused).
    places: Vec<usize>,
    /// The terms each kept item counted in the document frequencies, one after the other
    /// in the order of `kept` from `counted_from` on (one queue rather than a list an item:
    /// they live a window).
    counted: Vec<u32>,
    counted_from: usize,
    /// The weight each term of `counted` had on its item (0 for a term weighing nothing).
    counted_weights: Vec<f32>,
    /// Scratch for [`Clusterer::grow_young_story`]: the candidates and their cosines.
    young_candidates: Vec<u32>,
    young_cosines: Vec<f32>,
    /// Scratch for [`Clusterer::vector`]: an item's terms.
    item_terms: Vec<u32>,
    /// Scratch for [`Clusterer::lookup`].
    ranked: Vector,
    /// The stories' part of the idf by how many stories hold a term ([`StoryLogs`]).
    story_logs: StoryLogs,
    /// Scratch for each item's words.
    words: Words,
    arrivals: u32,
    duplicates: u32,
    /// The story merges of the latest item: (merged away, joined), by serial.
    merges: Vec<(u64, u64)>,
}

/// Every story merge of a stream, so that a story id from any time, however long ago its
/// story left the window, leads to the story it ended in ([`Clusterer::story`] follows the
/// window's merges only, so that the clusterer's memory follows the window). For a caller
/// that keeps every item's id, such as `ferret cluster` over a labelled file: it grows by
/// an entry a merge.
#[derive(Debug, Default)]
pub struct MergeLog {
    joined: FxHashMap<u64, u64>,
}

impl MergeLog {
    /// Records the merges of the latest item ([`Clusterer::merges`]).
    pub fn record(&mut self, merges: &[(u64, u64)]) {
        self.joined.extend(merges.iter().copied());
    }

    /// The story that story `id` ended in.
    pub fn story(&self, mut id: u64) -> u64 {
        while let Some(&joined) = self.joined.get(&id) {
            id = joined;
        }
        id
    }
}

impl Clusterer {
    /// An empty clusterer.
    pub fn new(params: ClusterParams) -> Clusterer {
        Clusterer {
            lsh: LshIndex::new(20, 2, params.seed),
            params,
            analyzer: Analyzer::new(),
            terms: FxHashMap::default(),
            bigrams: FxHashMap::default(),
            word_stats: Vocabulary::default(),
            bigram_stats: Vocabulary::default(),
            sweep_due: false,
            languages: [0; LANGS],
            word_ids: vec![FxHashMap::default(); LANGS],
            n: 0,
            events: Level::default(),
            stories: Level::default(),
            event_story: Vec::new(),
            event_titles: Vec::new(),
            story_parent: Vec::new(),
            kept: VecDeque::new(),
            in_lsh: 0,
            places: Vec::new(),
            counted: Vec::new(),
            counted_from: 0,
            counted_weights: Vec::new(),
            young_candidates: Vec::new(),
            young_cosines: Vec::new(),
            item_terms: Vec::new(),
            ranked: Vector::new(),
            story_logs: StoryLogs::default(),
            words: Words::default(),
            arrivals: 0,
            duplicates: 0,
            merges: Vec::new(),
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

    /// How many of the latest items seen (near-duplicates included) reach back to the oldest
    /// item the statistics still count: what a replay must see again to count the same.
    pub fn statistics_span(&self) -> usize {
        (self.kept.front()).map_or(0, |oldest| (self.arrivals - oldest.arrival) as usize)
    }

    /// The languages the items were read in (named or detected), with their counts, the
    /// commonest first.
    pub fn languages(&self) -> Vec<(Lang, u32)> {
        let mut counts: Vec<(Lang, u32)> = Lang::all()
            .map(|lang| (lang, self.languages[lang.index()]))
            .filter(|&(_, count)| count > 0)
            .collect();
        counts.sort_by_key(|&(lang, count)| (std::cmp::Reverse(count), lang.index()));
        counts
    }

    /// Items attached to an earlier copy.
    pub fn duplicates(&self) -> u32 {
        self.duplicates
    }

    /// Events created.
    pub fn events(&self) -> u64 {
        self.events.created
    }

    /// Stories created.
    pub fn stories(&self) -> u64 {
        self.stories.created
    }

    /// Clusters the item at `at` with title `title` and body `text` (HTML allowed), its
    /// language detected.
    pub fn add(&mut self, title: &str, text: &str, at: Millis) -> Assignment {
        self.add_in(None, title, text, at)
    }

    /// [`Clusterer::add`] of an item in `lang` when it is known (a feed or a labelled stream
    /// names it), else in the language detected.
    pub fn add_in(
        &mut self,
        lang: Option<Lang>,
        title: &str,
        text: &str,
        at: Millis,
    ) -> Assignment {
        let mut words = std::mem::take(&mut self.words);
        let assignment = self.add_with(lang, title, text, at, &mut words);
        self.words = words;
        assignment
    }

    /// [`Clusterer::add_in`], the item's words read into `words`.
    fn add_with(
        &mut self,
        lang: Option<Lang>,
        title: &str,
        text: &str,
        at: Millis,
        words: &mut Words,
    ) -> Assignment {
        let arrival = self.arrivals;
        self.arrivals += 1;
        self.merges.clear();
        self.retire(at);
        let body = strip_html(text);
        let full = if body.trim().is_empty() {
            Cow::Borrowed(title)
        } else {
            Cow::Owned(format!("{title}\n{body}"))
        };
        let lang = lang.unwrap_or_else(|| self.analyzer.detect(&full));
        self.languages[lang.index()] += 1;

        // Near-duplicates first: a copy joins its original and is not clustered again.
        let words = words.of(&full);
        let item_shingles = shingles(words, self.params.shingle_words);
        let bands = self.lsh.bands(&item_shingles);
        if let Some(original) = self.duplicate_of(&item_shingles, &bands) {
            let assignment = Assignment {
                duplicate_of: Some(original.arrival),
                ..original.assignment
            };
            self.duplicates += 1;
            return assignment;
        }
        // Into the index now, while its buckets are in the cache from the lookup: nothing
        // reads the index again before the item is kept, at the end.
        self.lsh.insert(arrival, &bands);

        let ids = self.term_ids(words, lang);
        // `long`: how far the item is from a headline towards an article. Only long texts
        // take the background out and join at a threshold of their own: a headline shares
        // too little with the mean item to matter, and the thresholds were set on headlines.
        let (vector, counted, long) = self.vector(&ids);
        let summed = self.count_in(&vector, counted);
        let lookup = self.lookup(&vector);
        let query = Query {
            vector: &vector,
            lookup: &lookup,
            summed,
            others: self.n - 1,
            share: self.params.background * long,
        };
        // Events compare words; stories words and bigrams.
        let words_vector = words_only(&vector);
        let title_terms = match self.params.title_fuzzy {
            Some(_) => self.analyzer.terms(title, lang),
            None => Vec::new(),
        };
        // The closest story but the item's own, for merging: `None` means "look it up".
        let mut other_story: Option<Option<(f32, u32)>> = None;
        let (event, story) = match self.event_for(&words_vector, &lookup, &title_terms) {
            Some(event) => {
                self.events.add(event, &words_vector, at);
                let story = match self.story_slot(self.event_story[event as usize]) {
                    Some(story) => {
                        self.stories.add(story, &vector, at);
                        story
                    }
                    // Not by the order in which the levels retire (a story retires with or
                    // after its events): should it happen, a story of its own, not a panic.
                    None => self.new_story(&vector, at),
                };
                // The event names the story that took its latest item: a story it named
                // before and that merged away may leave the window (and its slot) first.
                self.event_story[event as usize] = self.stories.serial(story);
                (event, story)
            }
            None => {
                let event = self.events.create(&words_vector, at);
                set(&mut self.event_titles, event, title_terms);
                // One scan gives the story to join and the runner-up to merge with: adding
                // the item changes its own story's centroid only.
                let [first, second] = self.stories.best_two(query);
                let story = match first.filter(|&scored| self.joins_story(scored, long)) {
                    Some((_, story)) => {
                        self.stories.add(story, &vector, at);
                        other_story = Some(second);
                        story
                    }
                    None => {
                        other_story = Some(first);
                        self.new_story(&vector, at)
                    }
                };
                set(&mut self.event_story, event, self.stories.serial(story));
                (event, story)
            }
        };
        let story = self.merge_stories(story, query, other_story);
        let story = self.grow_young_story(story, query.share);
        let assignment = Assignment {
            event: self.events.serial(event),
            story: self.stories.serial(story),
            duplicate_of: None,
        };
        self.in_lsh += 1;
        self.kept.push_back(Kept {
            arrival,
            shingles: item_shingles,
            counted,
            at,
            assignment,
        });
        assignment
    }

    /// The event an item joins: the closest by cosine if it reaches the event threshold, or,
    /// with the fuzzy title measure on, if it reaches half of it and the titles match.
    fn event_for(&mut self, vector: &Vector, lookup: &[u32], title: &[String]) -> Option<u32> {
        let threshold = self.params.event_threshold;
        // Below half the threshold nothing joins, fuzzy titles or not.
        let floor = match self.params.title_fuzzy {
            Some(_) => threshold / 2.0,
            None => threshold,
        };
        let (cosine, event) = self
            .events
            .best_scored(Query::plain(vector, lookup), None)
            .filter(|&(cosine, _)| cosine >= floor)?;
        if cosine >= threshold {
            return Some(event);
        }
        let fuzzy = self.params.title_fuzzy?;
        let first = &self.event_titles[event as usize];
        (cosine >= threshold / 2.0
            && fuzzy_similarity(title, first, self.params.fuzzy_cutoff) >= fuzzy)
            .then_some(event)
    }

    /// Whether a new event joins its closest story, at this cosine: at `story_threshold` (for
    /// a headline; an item `long` of the way to an article's length joins as far towards
    /// `long_story_threshold`), or at `big_story_threshold` when the story holds `big_story`
    /// items or more.
    fn joins_story(&self, (cosine, story): (f32, u32), long: f32) -> bool {
        let (short, article) = (
            self.params.story_threshold,
            self.params.long_story_threshold,
        );
        cosine >= short + (article - short) * long
            || (cosine >= self.params.big_story_threshold
                && self.stories.clusters[story as usize].items >= self.params.big_story)
    }

    /// The story merges the latest item made, each as (the story merged away, the story it
    /// joined): what a [`MergeLog`] records.
    pub fn merges(&self) -> &[(u64, u64)] {
        &self.merges
    }

    /// The story a story id now stands for (after merges). An id whose story left the
    /// window (and a story merged away that was not updated for a window) stands for itself:
    /// follow ids from before through a [`MergeLog`].
    pub fn story(&self, mut id: u64) -> u64 {
        while let Some(&slot) = self.stories.slot_of.get(&id) {
            let parent = self.story_parent[slot as usize];
            if parent == id {
                break;
            }
            id = parent;
        }
        id
    }

    /// The slot of the story that story `serial` now stands for, if it is in the window.
    fn story_slot(&self, serial: u64) -> Option<u32> {
        self.stories.slot_of.get(&self.story(serial)).copied()
    }

    /// Merges story `from` into story `into` (slots), and notes it.
    fn join_stories(&mut self, into: u32, from: u32) {
        self.stories.merge(into, from);
        let (joined, merged) = (self.stories.serial(into), self.stories.serial(from));
        self.story_parent[from as usize] = joined;
        self.merges.push((merged, joined));
    }

    /// A new story of `vector`; returns its slot.
    fn new_story(&mut self, vector: &Vector, at: Millis) -> u32 {
        let story = self.stories.create(vector, at);
        set(&mut self.story_parent, story, self.stories.serial(story));
        story
    }

    /// Counts the item's `vector` (its `counted` terms the last of [`Clusterer::counted`])
    /// into the window's summed item, and returns its dot product with the window's other
    /// items summed.
    fn count_in(&mut self, vector: &Vector, counted: u32) -> f32 {
        let from = self.counted.len() - counted as usize;
        // Both sorted by id; the vector leaves out the terms that weigh nothing.
        let mut weights = vector.iter().peekable();
        let mut dot = 0.0;
        for at in from..self.counted.len() {
            let id = self.counted[at];
            let weight = match weights.peek() {
                Some(&&(term, weight)) if term == id => {
                    weights.next();
                    weight
                }
                _ => 0.0,
            };
            self.counted_weights.push(weight);
            let stats = self.vocabulary(id);
            dot += stats.weight(id) * f64::from(weight);
            stats.weigh(id, weight);
        }
        dot as f32
    }

    /// When the item in `story` is also close to another story and the two centroids are
    /// close, the smaller story merges into the larger. Returns the item's story after it.
    /// `other` is the closest other story with its cosine, if already known.
    fn merge_stories(
        &mut self,
        story: u32,
        query: Query,
        other: Option<Option<(f32, u32)>>,
    ) -> u32 {
        let threshold = self.params.story_threshold;
        let other = match other {
            Some(known) => known.filter(|&(c, _)| c >= threshold).map(|(_, id)| id),
            None => self.stories.best_except(query, threshold, Some(story)),
        };
        let Some(other) = other else {
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
        self.join_stories(into, from);
        into
    }

    /// The cosine between the centroids of a young story and a big one, `share` of the
    /// background taken out of the big one as [`Level::score`] takes it out of a candidate
    /// (the young story's centroid the query, the mean over the window's items outside
    /// both), from the centroids' plain `cosine`.
    fn young_cosine(&self, cosine: f32, young: u32, big: u32, share: f32) -> f32 {
        let (y, b) = (
            &self.stories.clusters[young as usize],
            &self.stories.clusters[big as usize],
        );
        let norms = (y.norm2 * b.norm2).sqrt();
        if share == 0.0 || norms <= 0.0 || y.items == 0 {
            return cosine;
        }
        let dot = cosine * norms;
        let summed: f64 = (y.weights.iter())
            .map(|(&term, &w)| f64::from(w) * self.summed_weight(term))
            .sum();
        // The young story's own items in the window are not the big one's background.
        let own = y.norm2 * y.window_items as f32 / y.items as f32;
        let others = self.n.saturating_sub(y.window_items);
        (dot - share * b.background(dot, summed as f32 - own, others)) / norms
    }

    /// The weights of term `id` (word or bigram) summed over the window's items.
    fn summed_weight(&self, id: u32) -> f64 {
        match id & BIGRAM {
            0 => self.word_stats.weight(id),
            _ => self.bigram_stats.weight(id),
        }
    }

    /// When `story` is young (at most `young_story` items), its centroid against the big
    /// stories among the item's candidates: it merges into the closest if that reaches
    /// `young_threshold`. When `story` is big, the young stories among the candidates whose
    /// centroids reach `young_threshold` against it merge into it. Returns the story the item
    /// is in after it.
    ///
    /// The candidates are the stories the item's lookup found when its story was chosen
    /// ([`Level::found`], left by the last scoring of the item), less any merged away since:
    /// adding the item and merging changed only its own story and the one merged, so a
    /// second lookup would find the others again, in the same order.
    fn grow_young_story(&mut self, story: u32, share: f32) -> u32 {
        let young = self.params.young_story;
        let big = self.params.big_story.max(young + 1);
        let items = self.stories.clusters[story as usize].items;
        if young == 0 || (items > young && items < big) {
            return story;
        }
        let story_is_young = items <= young;
        let mut candidates = std::mem::take(&mut self.young_candidates);
        candidates.clear();
        let stories = &self.stories;
        candidates.extend(stories.found.iter().copied().filter(|&id| {
            let cluster = &stories.clusters[id as usize];
            let items = cluster.items;
            id != story
                && !cluster.retired
                && if story_is_young {
                    items >= big
                } else {
                    items <= young
                }
        }));
        let threshold = self.params.young_threshold;
        let mut into = story;
        if story_is_young {
            let mut cosines = std::mem::take(&mut self.young_cosines);
            self.stories
                .centroid_cosines(story, &candidates, &mut cosines);
            let mut best: Option<(f32, u32)> = None;
            for (&id, &cosine) in candidates.iter().zip(&cosines) {
                let scored = (self.young_cosine(cosine, story, id, share), id);
                if better(scored, best) {
                    best = Some(scored);
                }
            }
            self.young_cosines = cosines;
            if let Some((_, closest)) = best.filter(|&(cosine, _)| cosine >= threshold) {
                self.join_stories(closest, story);
                into = closest;
            }
        } else {
            // One at a time: a merge changes the big story's centroid.
            for &id in &candidates {
                let cosine = self.stories.centroid_cosine(id, story);
                if self.young_cosine(cosine, id, story, share) >= threshold {
                    self.join_stories(story, id);
                }
            }
        }
        self.young_candidates = candidates;
        into
    }

    /// The oldest kept item that `item` (its shingles, banded into `bands`) is a copy of.
    fn duplicate_of(&mut self, item: &[u64], bands: &[u64]) -> Option<&Kept> {
        let mut places = std::mem::take(&mut self.places);
        self.lsh.places(bands, &mut places);
        // The index holds the newest `in_lsh` kept items, in the same order.
        let oldest = self.kept.len() - self.in_lsh;
        let found = places.iter().map(|&place| oldest + place).find(|&at| {
            let (jaccard, containment) = similarity(item, &self.kept[at].shingles);
            jaccard >= self.params.duplicate_jaccard
                || containment >= self.params.duplicate_containment
        });
        self.places = places;
        found.map(|at| &self.kept[at])
    }

    /// The term ids of `words` in `lang`, in order: the words' stems (stop words and
    /// one-letter words dropped, as [`Analyzer::terms_of_words`] does), each word stemmed once
    /// and then remembered.
    fn term_ids(&mut self, words: &[String], lang: Lang) -> Vec<u32> {
        let cache = lang.index();
        let mut ids = Vec::with_capacity(words.len());
        for word in words {
            if let Some(&known) = self.word_ids[cache].get(word) {
                ids.extend(known);
                continue;
            }
            let stem = self
                .analyzer
                .terms_of_words(std::slice::from_ref(word), lang)
                .pop();
            let stem = stem.map(|stem| match lang {
                Lang::English if self.params.demonyms => demonym_bases(&stem)
                    .into_iter()
                    .find(|base| self.terms.contains_key(base))
                    .unwrap_or(stem),
                _ => stem,
            });
            let id = stem.map(|stem| match self.terms.get(&stem) {
                Some(&id) => id,
                None => {
                    let id = self.word_stats.fresh();
                    self.sweep_due |= self.word_stats.crowded(self.terms.len());
                    self.terms.insert(stem, id);
                    id
                }
            });
            if self.word_ids[cache].len() >= WORD_CACHE {
                self.word_ids[cache].clear();
            }
            self.word_ids[cache].insert(word.clone(), id);
            ids.extend(id);
        }
        ids
    }

    /// The tf·idf vector of an item of terms `ids` (and their bigrams), counting it into the
    /// document frequencies first; how many terms it counted (queued in
    /// [`Clusterer::counted`], uncounted when the item leaves the window); and how long it
    /// is (see [`length`]).
    ///
    /// A term's idf is the items' (`ln(N/df)` over the window) to the power `1 − share` times
    /// the stories' (`ln((S + 2)/(s + 1))`, S live stories, s of them holding the term) to the
    /// power `share` (`story_idf_share`). Over items alone, the name a big story repeats is
    /// common: on dev, "Titanfall" is in 159 of 3,149 headlines (idf 3.0) and "way" in 13
    /// (5.5), so a headline about where to buy Titanfall on March 11 scored higher against a
    /// one-headline story of an oil forecast for March 11 than against the Titanfall story of
    /// 157. Counted over stories, a word one story repeats is rare, and a word many stories
    /// use is common. A product, not a sum: a word on every item keeps no weight, or a stream
    /// whose items all share a few words would fall into one story that then makes those
    /// words rare (among its one or two stories) for good.
    fn vector(&mut self, ids: &[u32]) -> (Vector, u32, f32) {
        // The terms, bigrams included, sorted: counting is a run over equal ids.
        let mut terms = std::mem::take(&mut self.item_terms);
        terms.clear();
        let mut previous: Option<u32> = None;
        for &id in ids {
            terms.push(id);
            if self.params.bigrams {
                if let Some(first) = previous {
                    let stats = &mut self.bigram_stats;
                    let bigram = *self
                        .bigrams
                        .entry((first, id))
                        .or_insert_with(|| BIGRAM | stats.fresh());
                    self.sweep_due |= stats.crowded(self.bigrams.len());
                    terms.push(bigram);
                }
                previous = Some(id);
            }
        }
        terms.sort_unstable();
        let mut counts: Vec<(u32, u32)> = Vec::with_capacity(terms.len());
        for &id in &terms {
            match counts.last_mut() {
                Some((last, count)) if *last == id => *count += 1,
                _ => counts.push((id, 1)),
            }
        }
        self.n += 1;
        for &(id, _) in &counts {
            self.vocabulary(id).count(id);
            self.counted.push(id);
        }
        let counted = counts.len() as u32;
        let max = counts.iter().map(|&(_, f)| f).max().unwrap_or(1) as f32;
        let n = self.n as f32;
        let share = self.params.story_idf_share;
        let stories = self.stories.live() as f32 + 2.0;
        self.story_logs.count(stories);
        // An item is as long with bigrams as without: its pairs count whether they are
        // terms or not.
        let length_terms = match self.params.bigrams {
            true => counted,
            false => counted + distinct_pairs(ids),
        };
        let power = idf_power_for(self.params.idf_power, length_terms);
        // Sorted by id already.
        self.item_terms = terms;
        // Collected in place: the vector takes over the counts' allocation.
        let mut vector: Vector = counts
            .into_iter()
            .map(|(id, f)| {
                let tf = 0.5 + 0.5 * f as f32 / max;
                let idf = (n / self.vocabulary(id).df(id) as f32).ln();
                // A term on every item keeps no weight at any share (`0^0` would give it one
                // at a share of 1).
                let weight = if share > 0.0 && idf > 0.0 {
                    // (idf^(1 − share) · ln(stories / held)^share)^power, as one `exp` of
                    // logs rather than three powers: the same assignments on dev and test
                    // (date order, shuffles 1–3), 1.2 % fewer instructions.
                    let held = self.stories.holders(id) + 1;
                    let logs = (1.0 - share) * idf.ln() + share * self.story_logs.of(held);
                    (power * logs).exp()
                } else {
                    match power {
                        1.0 => idf,
                        0.5 => idf.max(0.0).sqrt(),
                        0.25 => idf.max(0.0).sqrt().sqrt(),
                        _ => idf.max(0.0).powf(power),
                    }
                };
                (id, tf * weight)
            })
            .filter(|&(_, w)| w > 0.0)
            .collect();
        let norm = vector.iter().map(|(_, w)| w * w).sum::<f32>().sqrt();
        if norm > 0.0 {
            for (_, w) in &mut vector {
                *w /= norm;
            }
        }
        (vector, counted, length(length_terms))
    }

    /// The document frequency of term `id`, word or bigram.
    fn vocabulary(&mut self, id: u32) -> &mut Vocabulary {
        if id & BIGRAM == 0 {
            &mut self.word_stats
        } else {
            &mut self.bigram_stats
        }
    }

    /// The item's highest weighted words (not bigrams: a cluster sharing a bigram shares
    /// its words), for candidate lookup.
    fn lookup(&mut self, vector: &Vector) -> Vec<u32> {
        let terms = &mut self.ranked;
        terms.clear();
        terms.extend(vector.iter().filter(|&&(id, _)| id & BIGRAM == 0));
        terms.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        terms
            .iter()
            .take(self.params.lookup_terms)
            .map(|&(id, _)| id)
            .collect()
    }

    fn retire(&mut self, now: Millis) {
        let before = now - self.params.window;
        let titles = &mut self.event_titles;
        self.events
            .retire(before, |event| titles[event as usize] = Vec::new());
        self.stories.retire(before, |_| {});
        // The newest kept items are the LSH index's, in the same order: they leave it oldest
        // first as they leave the window.
        while self.in_lsh > 0 {
            let at = self.kept.len() - self.in_lsh;
            let oldest = &mut self.kept[at];
            if oldest.at >= before {
                break;
            }
            self.lsh.remove_oldest();
            oldest.shingles = Vec::new();
            self.in_lsh -= 1;
        }
        // The statistics forget them too, but for the last `window_min_items`.
        let floor = self.in_lsh.max(self.params.window_min_items);
        while self.kept.len() > floor {
            if let Some(kept) = self.kept.pop_front() {
                self.n -= 1;
                if let Some(story) = self.story_slot(kept.assignment.story) {
                    let story = &mut self.stories.clusters[story as usize];
                    story.window_items = story.window_items.saturating_sub(1);
                }
                let from = self.counted_from;
                self.counted_from += kept.counted as usize;
                for at in from..self.counted_from {
                    let (id, weight) = (self.counted[at], self.counted_weights[at]);
                    self.vocabulary(id).uncount(id, weight);
                }
            }
        }
        // The queue's front moves on; what it left behind goes once it is half the queue.
        if self.counted_from > self.counted.len() / 2 {
            self.counted.drain(..self.counted_from);
            self.counted_weights.drain(..self.counted_from);
            self.counted_from = 0;
        }
        if std::mem::take(&mut self.sweep_due) {
            self.sweep();
        }
    }

    /// Forgets the words and bigrams on no item of the window that no live cluster holds:
    /// their ids go to new terms. Due when a new term finds its vocabulary holding more than
    /// twice the terms on the window's items, so a vocabulary stays within twice that (and
    /// a stream whose terms come back, as a replayed one, does not churn).
    fn sweep(&mut self) {
        let (events, stories) = (&self.events, &self.stories);
        let held = |term: u32| events.holds(term) || stories.holds(term);
        (self.bigram_stats).forget(&mut self.bigrams, |id| held(BIGRAM | id));
        // A bigram's words are held with it, but for one whose weight was zero (a word on
        // every item so far): a word a remaining bigram names keeps its id.
        let named: FxHashSet<u32> = self.bigrams.keys().flat_map(|&(a, b)| [a, b]).collect();
        let forgotten =
            (self.word_stats).forget(&mut self.terms, |id| held(id) || named.contains(&id));
        if !forgotten.is_empty() {
            let forgotten: FxHashSet<u32> = forgotten.iter().copied().collect();
            for cache in &mut self.word_ids {
                cache.retain(|_, id| id.is_none_or(|id| !forgotten.contains(&id)));
            }
        }
    }

    /// What the clusterer holds now.
    pub fn footprint(&self) -> Footprint {
        Footprint {
            words: self.terms.len(),
            bigrams: self.bigrams.len(),
            kept: self.kept.len(),
            live_events: self.events.live(),
            live_stories: self.stories.live(),
            clusters: self.events.clusters.len() + self.stories.clusters.len(),
        }
    }
}

#[cfg(test)]
mod tests;
