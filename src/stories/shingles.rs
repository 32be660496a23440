//! Near-duplicates: word w-shingles, Jaccard and containment, MinHash signatures and LSH
//! banding so that finding the copies of a new item costs the same however many came before.
//!
//! **Which measure.** The seed calls "а роза упала на лапу Азора" and "а роза упала на лапу,
//! упала на лапу Азора" full duplicates at w = 3, yet their Jaccard similarity is 4/6: the
//! second repeats a phrase, which adds shingles the first lacks. The containment of the smaller
//! set in the larger, |A ∩ B| / min(|A|, |B|), is 1. ferret calls two items duplicates when
//! **either** measure reaches its threshold: Jaccard catches reworded copies of equal length,
//! containment catches a copy that was extended or abridged.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

/// The hashed w-shingles of a word sequence, sorted and deduplicated. A text shorter than `w`
/// words is one shingle of all its words; an empty one has none.
pub fn shingles(words: &[String], w: usize) -> Vec<u64> {
    let w = w.max(1);
    let mut out: Vec<u64> = if words.len() < w {
        if words.is_empty() {
            Vec::new()
        } else {
            vec![hash_words(words)]
        }
    } else {
        words.windows(w).map(hash_words).collect()
    };
    out.sort_unstable();
    out.dedup();
    out
}

fn hash_words(words: &[String]) -> u64 {
    // FNV-1a over the words with a separator: stable across runs and platforms.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut step = |byte: u8| hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    for word in words {
        word.bytes().for_each(&mut step);
        step(0xff);
    }
    hash
}

/// |A ∩ B| of two sorted sets.
fn intersection(a: &[u64], b: &[u64]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// Jaccard similarity |A ∩ B| / |A ∪ B| of two sorted shingle sets (0 when both are empty).
pub fn jaccard(a: &[u64], b: &[u64]) -> f64 {
    similarity(a, b).0
}

/// Containment |A ∩ B| / min(|A|, |B|) of two sorted shingle sets (0 when either is empty).
pub fn containment(a: &[u64], b: &[u64]) -> f64 {
    similarity(a, b).1
}

/// [`jaccard`] and [`containment`] of two sorted shingle sets, from one intersection.
pub fn similarity(a: &[u64], b: &[u64]) -> (f64, f64) {
    let common = intersection(a, b);
    let ratio = |of: usize| match of {
        0 => 0.0,
        _ => common as f64 / of as f64,
    };
    (
        ratio(a.len() + b.len() - common),
        ratio(a.len().min(b.len())),
    )
}

/// A MinHash-LSH index over shingle sets: `bands × rows` seeded hash functions, items bucketed
/// by each band of their signature. Candidates share at least one band; they are then checked
/// exactly, so the index only decides whom to compare with.
///
/// Items leave in the order they came (the clusterer's window), so each bucket is a chain
/// threaded through a queue of per-item links, newest first: no allocation per bucket, O(1)
/// insertion. An item leaves without touching its buckets: a chain ends at the first item
/// that has left, and the buckets whose items have all left are swept out together once as
/// many items have left since the last sweep as are still queued (so the map holds at most
/// twice the live buckets, and removal costs O(1) amortised instead of a probe of a cold map
/// per band).
#[derive(Debug)]
pub struct LshIndex {
    seeds: Vec<u64>,
    /// Each band's number hashed: where its bucket key starts, so that bands never share
    /// buckets.
    band_keys: Vec<u64>,
    rows: usize,
    bands: usize,
    /// Bucket key → the newest item in it, by position in the queue (`first + index`).
    heads: FxHashMap<u64, u64>,
    /// Per queued item: its id, then for each band its bucket key and the next older item
    /// in that bucket (`NONE` at the end of the chain).
    items: VecDeque<u32>,
    links: VecDeque<(u64, u64)>,
    /// Queue position of `items[0]`.
    first: u64,
    /// Items removed since the last sweep of `heads`.
    removed: usize,
}

const NONE: u64 = u64::MAX;

impl LshIndex {
    /// An index of `bands` bands of `rows` rows, its hash functions drawn from `seed`.
    pub fn new(bands: usize, rows: usize, seed: u64) -> LshIndex {
        let (bands, rows) = (bands.max(1), rows.max(1));
        let mut state = seed;
        let seeds = (0..bands * rows)
            .map(|_| {
                state = splitmix(state);
                state | 1
            })
            .collect();
        LshIndex {
            seeds,
            band_keys: (0..bands as u64).map(splitmix).collect(),
            rows,
            bands,
            heads: FxHashMap::default(),
            items: VecDeque::new(),
            links: VecDeque::new(),
            first: 0,
            removed: 0,
        }
    }

    /// The bucket keys of a shingle set, one per band (none for an empty set).
    pub fn bands(&self, shingles: &[u64]) -> Vec<u64> {
        if shingles.is_empty() {
            return Vec::new();
        }
        // Shingles are FNV hashes already: one multiplication by a function's odd seed
        // permutes them (a bijection on 64 bits), a different order per seed. Shingle by
        // shingle, every function's minimum at once: the inner loop runs over the seeds, and
        // the compiler turns it into vector instructions.
        let mut mins = vec![u64::MAX; self.seeds.len()];
        for &shingle in shingles {
            for (min, &seed) in mins.iter_mut().zip(&self.seeds) {
                *min = (*min).min(shingle.wrapping_mul(seed));
            }
        }
        mins.chunks(self.rows)
            .zip(&self.band_keys)
            .map(|(rows, &band)| rows.iter().fold(band, |key, &min| splitmix(key ^ min)))
            .collect()
    }

    /// The items sharing a bucket with `bands`, each once, oldest first.
    pub fn candidates(&self, bands: &[u64]) -> Vec<u32> {
        let mut places = Vec::new();
        self.places(bands, &mut places);
        places.into_iter().map(|place| self.item(place)).collect()
    }

    /// [`LshIndex::candidates`] by their places in the index, into `found` (cleared first):
    /// 0 is the oldest item queued, 1 the next, and so on. A caller that keeps the items in
    /// the order it inserted them finds each by its place, without a search.
    pub fn places(&self, bands: &[u64], found: &mut Vec<usize>) {
        found.clear();
        for (band, key) in bands.iter().enumerate() {
            let mut at = self.heads.get(key).copied().unwrap_or(NONE);
            while at != NONE && at >= self.first {
                let place = (at - self.first) as usize;
                found.push(place);
                at = self.links[place * self.bands + band].1;
            }
        }
        found.sort_unstable();
        found.dedup();
    }

    /// The item at `place` (see [`LshIndex::places`]).
    pub fn item(&self, place: usize) -> u32 {
        self.items[place]
    }

    /// Adds `item` under its `bands` (as [`LshIndex::bands`] gave them).
    pub fn insert(&mut self, item: u32, bands: &[u64]) {
        let at = self.first + self.items.len() as u64;
        self.items.push_back(item);
        for band in 0..self.bands {
            match bands.get(band) {
                Some(&key) => {
                    let older = self.heads.insert(key, at).unwrap_or(NONE);
                    self.links.push_back((key, older));
                }
                None => self.links.push_back((NONE, NONE)),
            }
        }
    }

    /// Removes the oldest item, if any.
    pub fn remove_oldest(&mut self) {
        if self.items.pop_front().is_none() {
            return;
        }
        self.links.drain(..self.bands);
        self.first += 1;
        self.removed += 1;
        if self.removed >= self.items.len().max(1) {
            let first = self.first;
            self.heads.retain(|_, &mut head| head >= first);
            self.removed = 0;
        }
    }

    /// Buckets in the map, live or not yet swept.
    #[cfg(test)]
    fn buckets(&self) -> usize {
        self.heads.len()
    }
}

/// SplitMix64: a fast, well-mixed, seedable hash step.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Candidates agree with a scan of the live items, band by band, while items come and
    /// go through crowded buckets; the map never holds more than twice the live buckets.
    #[test]
    fn candidates_are_the_live_items_sharing_a_bucket() {
        let bands = 4;
        let mut index = LshIndex::new(bands, 1, 3);
        let mut live: VecDeque<(u32, Vec<u64>)> = VecDeque::new();
        let mut state = 11u64;
        let mut key = |band: usize| {
            state = splitmix(state);
            // Few keys per band: long chains, shared by old and new items.
            ((band as u64) << 32) | (state % 200)
        };
        for item in 0..2_000u32 {
            let keys: Vec<u64> = (0..bands).map(&mut key).collect();
            let mut expected: Vec<u32> = live
                .iter()
                .filter(|(_, other)| other.iter().zip(&keys).any(|(a, b)| a == b))
                .map(|&(id, _)| id)
                .collect();
            expected.sort_unstable();
            assert_eq!(index.candidates(&keys), expected, "item {item}");
            index.insert(item, &keys);
            live.push_back((item, keys));
            // The window breathes: grows to 300 items, shrinks to 50, grows again.
            let keep = if item % 1_000 < 600 { 300 } else { 50 };
            while live.len() > keep {
                live.pop_front();
                index.remove_oldest();
            }
            assert!(index.buckets() <= 2 * bands * live.len().max(1));
        }
        while live.pop_front().is_some() {
            index.remove_oldest();
        }
        assert_eq!(index.buckets(), 0);
        assert!(index.candidates(&[0, 1 << 32, 2 << 32, 3 << 32]).is_empty());
    }
}
