//! A level of clusters (events or stories): centroids, the inverted indexes from word and
//! from bigram to the centroids holding it, and the term-at-a-time scoring of an item's
//! candidates.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::{set, Millis, Vector, BIGRAM};

/// A cluster: its items' vectors summed, and what the level keeps of it.
#[derive(Debug, Default)]
pub(super) struct Centroid {
    pub(super) weights: FxHashMap<u32, f32>,
    pub(super) norm2: f32,
    /// Items added (a merged cluster's included).
    pub(super) items: u32,
    /// Those of them still in the window (kept for stories).
    pub(super) window_items: u32,
    updated: Millis,
    /// Retired or merged away: out of the index, taking no items.
    pub(super) retired: bool,
    /// The cluster's id outside the clusterer: how many clusters of its level came before.
    serial: u64,
    /// The slot is free for a new cluster: no item of the window can name this one.
    freed: bool,
}

impl Centroid {
    /// The background in this cluster's dot product `dot` with an item whose dot product
    /// with the window's `others` other items summed is `summed`: as many times the mean of
    /// the window's items outside the cluster (its own would take its subject out with the
    /// rest) as the cluster holds items. Of the item's dot product with the cluster, the
    /// share of the cluster's items still in the window counts as theirs.
    pub(super) fn background(&self, dot: f32, summed: f32, others: u32) -> f32 {
        let outside = others.saturating_sub(self.window_items);
        if outside == 0 || self.items == 0 {
            return 0.0;
        }
        let own = dot * self.window_items as f32 / self.items as f32;
        self.items as f32 * (summed - own).max(0.0) / outside as f32
    }

    /// Adds an item's `vector`, calling `added(term, weight)` with each term's weight after
    /// it.
    fn add(&mut self, vector: &Vector, at: Millis, mut added: impl FnMut(u32, f32)) {
        self.items += 1;
        self.window_items += 1;
        for &(term, weight) in vector {
            let w = self.weights.entry(term).or_insert(0.0);
            self.norm2 += 2.0 * *w * weight + weight * weight;
            *w += weight;
            added(term, *w);
        }
        self.updated = self.updated.max(at);
    }
}

/// Whether `scored` (cosine, cluster) beats `than`: a higher cosine, or the lower slot at an
/// equal one (the older cluster, until slots are freed and taken again).
pub(super) fn better((cosine, id): (f32, u32), than: Option<(f32, u32)>) -> bool {
    than.is_none_or(|(b, bid)| cosine > b || (cosine == b && id < bid))
}

/// What a level is asked for: an item's vector (sorted by id: words, then bigrams), the
/// words to look its candidates up by, and what to take off each candidate's cosine for the
/// background every item shares (see [`super::ClusterParams::background`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Query<'a> {
    pub(super) vector: &'a Vector,
    pub(super) lookup: &'a [u32],
    /// The item's dot product with the window's other items summed, and how many they are:
    /// what [`Centroid::background`] estimates the background from.
    pub(super) summed: f32,
    pub(super) others: u32,
    /// The share of the background taken out of each candidate (see [`Level::score`]).
    pub(super) share: f32,
}

impl<'a> Query<'a> {
    /// A query that takes no background out.
    pub(super) fn plain(vector: &'a Vector, lookup: &'a [u32]) -> Query<'a> {
        Query {
            vector,
            lookup,
            summed: 0.0,
            others: 0,
            share: 0.0,
        }
    }
}

/// A centroid in a term's postings, with its weight on the term.
#[derive(Debug, Clone, Copy)]
pub(super) struct Posting {
    id: u32,
    weight: f32,
}

/// The inverted index: the postings of each term, sorted by cluster id. The vocabulary hands
/// out dense ids and reuses the freed ones, so vectors by id, not maps, hold them (no hashing
/// on the hottest path), one for words and one for bigrams (by id without [`BIGRAM`]). A list
/// emptied by retirements keeps its allocation for the id's next term.
#[derive(Debug, Default)]
struct Postings {
    words: Vec<Vec<Posting>>,
    bigrams: Vec<Vec<Posting>>,
}

impl Postings {
    /// The postings of `term`, word or bigram (none for a term no live cluster holds).
    fn of(&self, term: u32) -> &[Posting] {
        match term & BIGRAM {
            0 => self.word(term),
            _ => self.bigram(term),
        }
    }

    /// [`Postings::of`] a term known to be a word.
    fn word(&self, term: u32) -> &[Posting] {
        self.words.get(term as usize).map_or(&[], Vec::as_slice)
    }

    /// [`Postings::of`] a term known to be a bigram.
    fn bigram(&self, term: u32) -> &[Posting] {
        let at = (term & !BIGRAM) as usize;
        self.bigrams.get(at).map_or(&[], Vec::as_slice)
    }

    /// The postings of `term`, to change.
    fn of_mut(&mut self, term: u32) -> &mut Vec<Posting> {
        let (lists, at) = match term & BIGRAM {
            0 => (&mut self.words, term as usize),
            _ => (&mut self.bigrams, (term & !BIGRAM) as usize),
        };
        if at >= lists.len() {
            lists.resize_with(at + 1, Vec::new);
        }
        &mut lists[at]
    }
}

/// A cluster's part in the last lookup: one array, so that a posting costs one cache line.
#[derive(Debug, Default, Clone, Copy)]
struct Slot {
    /// The lookup that last considered the cluster: the rest is valid when it is the current.
    stamp: u32,
    /// How many of the query's words the cluster holds.
    matched: u32,
    /// The dot product of its words with the query's.
    dot: f32,
}

/// A set of centroids with inverted indexes from word and from bigram to the centroids
/// holding it, each with its weight there (sorted by id).
#[derive(Debug, Default)]
pub(super) struct Level {
    pub(super) clusters: Vec<Centroid>,
    /// Each cluster's norm (the root of its `norm2`), by slot: the one figure of a candidate
    /// that every lookup reads, kept apart from the centroids so that a lookup's candidates
    /// share cache lines and take no square root.
    norms: Vec<f32>,
    index: Postings,
    /// Clusters by last update, for retirement: (updated, id), oldest first.
    by_update: VecDeque<(Millis, u32)>,
    /// Per cluster, the last lookup that considered it and what that lookup summed.
    slots: Vec<Slot>,
    generation: u32,
    /// The clusters the last lookup found.
    pub(super) found: Vec<u32>,
    /// Scratch for [`Level::centroid_cosines`], by slot: 0, or a cluster's place among the
    /// others plus one.
    marks: Vec<u32>,
    /// Clusters retired or merged away, their slots freed or not.
    retired: usize,
    /// Slots whose clusters no item of the window names any more, for new clusters: so that
    /// what the level holds follows the window, not the stream.
    free: Vec<u32>,
    /// Clusters created.
    pub(super) created: u64,
    /// Slot of each cluster by serial, while its slot is not freed.
    pub(super) slot_of: FxHashMap<u64, u32>,
}

impl Level {
    /// The closest cluster to `vector` among those sharing one of `lookup` terms (but
    /// `except`), if its cosine reaches `threshold`. Ties go to the older cluster.
    pub(super) fn best_except(
        &mut self,
        query: Query,
        threshold: f32,
        except: Option<u32>,
    ) -> Option<u32> {
        self.best_scored(query, except)
            .filter(|&(cosine, _)| cosine >= threshold)
            .map(|(_, id)| id)
    }

    /// Gathers into `found` every cluster sharing one of `lookup` words, once, in the order the
    /// words and their postings give (each stamped with this lookup's generation: no sort, no
    /// set; retired clusters have left the postings), adding to each cluster's sums the
    /// lookup words' part of its dot product with `words` (the query's words, sorted by id; a
    /// lookup word not among them adds nothing), as the postings go by.
    fn gather_scoring(&mut self, lookup: &[u32], words: &[(u32, f32)]) {
        self.generation = self.generation.wrapping_add(1);
        let generation = self.generation;
        self.slots.resize(self.clusters.len(), Slot::default());
        self.found.clear();
        for &term in lookup {
            let weight = words
                .binary_search_by_key(&term, |&(id, _)| id)
                .map_or(0.0, |at| words[at].1);
            for posting in self.index.word(term) {
                let slot = &mut self.slots[posting.id as usize];
                if slot.stamp != generation {
                    *slot = Slot {
                        stamp: generation,
                        ..Slot::default()
                    };
                    self.found.push(posting.id);
                }
                slot.dot += weight * posting.weight;
                slot.matched += 1;
            }
        }
    }

    /// Calls `visit(id, cosine)` for every live cluster sharing one of `lookup` words, in the
    /// order the words and their postings give, with its cosine to `vector` (sorted by id:
    /// words, then bigrams), less `share` of the background the cluster holds (see
    /// [`Query`]).
    ///
    /// Term at a time: the postings carry each cluster's weight on the term, so the dot
    /// products are summed along the postings of the item's terms (a candidate's centroid is
    /// read for the background only): the lookup words' as they gather the candidates, then
    /// the other words' into the candidates found, then the bigrams' into those that matched
    /// two words or more (a bigram is in a cluster only with its two words, and most
    /// candidates share a single word), in the vector's order. A bigram's postings are short
    /// (few clusters share a pair of words): cheaper than looking each bigram up in each
    /// candidate's centroid, a probe of a map apiece.
    pub(super) fn score(&mut self, query: Query, mut visit: impl FnMut(u32, f32)) {
        let Query {
            vector,
            lookup,
            summed,
            others,
            share,
        } = query;
        let words = vector.partition_point(|&(term, _)| term & BIGRAM == 0);
        let (words, bigrams) = vector.split_at(words);
        self.gather_scoring(lookup, words);
        for &(term, weight) in words {
            if lookup.contains(&term) {
                continue;
            }
            for posting in self.index.word(term) {
                let slot = &mut self.slots[posting.id as usize];
                if slot.stamp == self.generation {
                    slot.dot += weight * posting.weight;
                    slot.matched += 1;
                }
            }
        }
        for &(term, weight) in bigrams {
            for posting in self.index.bigram(term) {
                let slot = &mut self.slots[posting.id as usize];
                if slot.stamp == self.generation && slot.matched >= 2 {
                    slot.dot += posting.weight * weight;
                }
            }
        }
        for &id in &self.found {
            debug_assert!(
                !self.clusters[id as usize].retired,
                "retired clusters leave the postings"
            );
            let norm = self.norms[id as usize];
            if norm <= 0.0 {
                visit(id, 0.0);
                continue;
            }
            let mut dot = self.slots[id as usize].dot;
            if share > 0.0 {
                dot -= share * self.clusters[id as usize].background(dot, summed, others);
            }
            visit(id, dot / norm);
        }
    }

    /// The closest cluster to `vector` among those sharing one of `lookup` words (but
    /// `except`), with its cosine. Ties go to the older cluster.
    pub(super) fn best_scored(&mut self, query: Query, except: Option<u32>) -> Option<(f32, u32)> {
        let mut best: Option<(f32, u32)> = None;
        self.score(query, |id, cosine| {
            if Some(id) != except && better((cosine, id), best) {
                best = Some((cosine, id));
            }
        });
        best
    }

    /// The two closest clusters to `vector` among those sharing one of `lookup` words, with
    /// their cosines, in the order of [`Level::best_scored`] (ties: the older first).
    pub(super) fn best_two(&mut self, query: Query) -> [Option<(f32, u32)>; 2] {
        let mut top = [None, None];
        self.score(query, |id, cosine| {
            let scored = (cosine, id);
            if better(scored, top[0]) {
                top = [Some(scored), top[0]];
            } else if better(scored, top[1]) {
                top[1] = Some(scored);
            }
        });
        top
    }

    /// A new cluster of `vector`, in a freed slot if there is one; returns the slot.
    pub(super) fn create(&mut self, vector: &Vector, at: Millis) -> u32 {
        let centroid = Centroid {
            weights: FxHashMap::with_capacity_and_hasher(vector.len(), Default::default()),
            serial: self.created,
            ..Centroid::default()
        };
        self.created += 1;
        let id = match self.free.pop() {
            Some(id) => {
                self.clusters[id as usize] = centroid;
                self.retired -= 1;
                id
            }
            None => {
                self.clusters.push(centroid);
                self.clusters.len() as u32 - 1
            }
        };
        self.slot_of.insert(self.clusters[id as usize].serial, id);
        self.add(id, vector, at);
        id
    }

    /// The serial (the id outside the clusterer) of the cluster in slot `id`.
    pub(super) fn serial(&self, id: u32) -> u64 {
        self.clusters[id as usize].serial
    }

    pub(super) fn add(&mut self, id: u32, vector: &Vector, at: Millis) {
        let index = &mut self.index;
        self.clusters[id as usize].add(vector, at, |term, weight| {
            let postings = index.of_mut(term);
            match postings.binary_search_by_key(&id, |posting| posting.id) {
                Ok(at) => postings[at].weight = weight,
                Err(at) => postings.insert(at, Posting { id, weight }),
            }
        });
        let norm = self.clusters[id as usize].norm2.sqrt();
        // A new cluster's slot is the one after the last, or a freed one.
        set(&mut self.norms, id, norm);
        self.by_update.push_back((at, id));
    }

    /// How many live clusters hold `term`.
    pub(super) fn holders(&self, term: u32) -> u32 {
        self.index.of(term).len() as u32
    }

    /// Whether a live cluster holds `term`.
    pub(super) fn holds(&self, term: u32) -> bool {
        self.holders(term) > 0
    }

    /// Clusters taking items.
    pub(super) fn live(&self) -> usize {
        self.clusters.len() - self.retired
    }

    /// Retires clusters not updated since `before`, calling `retired` with each, and frees
    /// their slots, and those of clusters merged away that were not updated since either:
    /// every item such a cluster took is older than `before`, so none of the window names it.
    pub(super) fn retire(&mut self, before: Millis, mut retired: impl FnMut(u32)) {
        while let Some(&(at, id)) = self.by_update.front() {
            if at >= before {
                break;
            }
            self.by_update.pop_front();
            // The entry may be an earlier cluster's of the same slot: the slot's cluster now
            // decides.
            let cluster = &self.clusters[id as usize];
            if cluster.freed || cluster.updated >= before {
                continue;
            }
            if !cluster.retired {
                self.drop_cluster(id);
                retired(id);
            }
            let cluster = &mut self.clusters[id as usize];
            cluster.freed = true;
            self.slot_of.remove(&cluster.serial);
            self.free.push(id);
        }
    }

    /// Takes cluster `id` out of the index for good, and returns its centroid's weights.
    fn drop_cluster(&mut self, id: u32) -> FxHashMap<u32, f32> {
        let cluster = &mut self.clusters[id as usize];
        cluster.retired = true;
        self.retired += 1;
        let weights = std::mem::take(&mut cluster.weights);
        for &term in weights.keys() {
            let postings = self.index.of_mut(term);
            if let Ok(at) = postings.binary_search_by_key(&id, |posting| posting.id) {
                postings.remove(at);
            }
        }
        weights
    }

    /// [`Level::centroid_cosine`] of cluster `a` with each of `others` (`a` not among them,
    /// none twice), into `cosines`: the same floats. Where `a`'s centroid is the smaller (a
    /// young story against big ones), its terms' postings are walked once for all the
    /// others, rather than each other's map probed for each term: a young story's terms are
    /// held by few stories (2.6 on the mean over the seven-fold dev), and each probe is a
    /// cold line. Each cosine still sums its terms in the order `a`'s map gives them.
    pub(super) fn centroid_cosines(&mut self, a: u32, others: &[u32], cosines: &mut Vec<f32>) {
        cosines.clear();
        self.marks.resize(self.clusters.len(), 0);
        let small = self.clusters[a as usize].weights.len();
        let mut walk = false;
        for (at, &other) in others.iter().enumerate() {
            if small <= self.clusters[other as usize].weights.len() {
                // Its place in `others`, plus one; its sum starts where `Iterator::sum`
                // starts a float's, at −0, so that even a cosine of zero has the same bits.
                self.marks[other as usize] = at as u32 + 1;
                walk = true;
                cosines.push(-0.0);
            } else {
                cosines.push(self.centroid_cosine(a, other));
            }
        }
        if !walk {
            return;
        }
        for (&term, w) in &self.clusters[a as usize].weights {
            for posting in self.index.of(term) {
                if let Some(at) = self.marks[posting.id as usize].checked_sub(1) {
                    cosines[at as usize] += posting.weight * w;
                }
            }
        }
        for (cosine, &other) in cosines.iter_mut().zip(others) {
            if std::mem::take(&mut self.marks[other as usize]) != 0 {
                *cosine = self.cosine(*cosine, a, other);
            }
        }
    }

    /// Cosine between the centroids of two clusters.
    pub(super) fn centroid_cosine(&self, a: u32, b: u32) -> f32 {
        let (small, large) = match self.clusters[a as usize].weights.len()
            <= self.clusters[b as usize].weights.len()
        {
            true => (a, b),
            false => (b, a),
        };
        let large_weights = &self.clusters[large as usize].weights;
        let dot: f32 = (self.clusters[small as usize].weights.iter())
            .filter_map(|(term, w)| large_weights.get(term).map(|v| v * w))
            .sum();
        self.cosine(dot, small, large)
    }

    /// The cosine of clusters `small` and `large` whose centroids' dot product is `dot`
    /// (0 when either centroid is empty).
    fn cosine(&self, dot: f32, small: u32, large: u32) -> f32 {
        let (small, large) = (self.norms[small as usize], self.norms[large as usize]);
        match small <= 0.0 || large <= 0.0 {
            true => 0.0,
            false => dot / (small * large),
        }
    }

    /// Merges cluster `from` into `into`.
    pub(super) fn merge(&mut self, into: u32, from: u32) {
        let updated = self.clusters[from as usize].updated;
        let (items, window_items) = {
            let from = &self.clusters[from as usize];
            (from.items, from.window_items)
        };
        let weights: Vector = self.drop_cluster(from).into_iter().collect();
        self.add(into, &weights, updated);
        // `add` counted the merged weights as one item, in the window.
        let into = &mut self.clusters[into as usize];
        into.items += items - 1;
        into.window_items = into.window_items + window_items - 1;
    }
}
