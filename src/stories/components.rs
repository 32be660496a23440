//! The seed's alternative to centroid clustering: connected components over a thresholded
//! similarity graph (single link). Each item is linked to every earlier item whose tf·idf cosine
//! with it reaches the threshold; a story is a connected component. Kept to be measured
//! against the two-level clusterer (`ferret cluster --method components`), not used by the
//! daemon: chains of pairwise links join unrelated items, and each item is compared with every
//! earlier item sharing a term, so its cost grows with the stream.

use rustc_hash::FxHashMap;

use super::text::{strip_html, Analyzer, Lang};

/// Story labels for `items` (title, text, language if named, else detected), in order:
/// single-link components at `threshold`.
pub fn connected_components(items: &[(&str, &str, Option<Lang>)], threshold: f32) -> Vec<u32> {
    let analyzer = Analyzer::new();
    let mut terms: FxHashMap<String, u32> = FxHashMap::default();
    let mut df: Vec<u32> = Vec::new();
    let mut vectors: Vec<Vec<(u32, f32)>> = Vec::with_capacity(items.len());
    let mut index: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    let mut parent: Vec<u32> = Vec::with_capacity(items.len());
    for (n, &(title, text, lang)) in items.iter().enumerate() {
        let full = format!("{title}\n{}", strip_html(text));
        let lang = lang.unwrap_or_else(|| analyzer.detect(&full));
        let words = analyzer.words(&full);
        let mut counts: FxHashMap<u32, u32> = FxHashMap::default();
        for term in analyzer.terms_of_words(&words, lang) {
            let next = terms.len() as u32;
            let id = *terms.entry(term).or_insert(next);
            if id == next {
                df.push(0);
            }
            *counts.entry(id).or_insert(0) += 1;
        }
        for &id in counts.keys() {
            df[id as usize] += 1;
        }
        let max = counts.values().copied().max().unwrap_or(1) as f32;
        let docs = (n + 1) as f32;
        let mut vector: Vec<(u32, f32)> = counts
            .into_iter()
            .map(|(id, f)| {
                (
                    id,
                    (0.5 + 0.5 * f as f32 / max) * (docs / df[id as usize] as f32).ln(),
                )
            })
            .filter(|&(_, w)| w > 0.0)
            .collect();
        let norm = vector.iter().map(|(_, w)| w * w).sum::<f32>().sqrt();
        vector
            .iter_mut()
            .for_each(|(_, w)| *w /= norm.max(f32::MIN_POSITIVE));
        vector.sort_unstable_by_key(|&(id, _)| id);

        let me = n as u32;
        parent.push(me);
        let mut linked: Vec<u32> = vector
            .iter()
            .filter_map(|(term, _)| index.get(term))
            .flatten()
            .copied()
            .collect();
        linked.sort_unstable();
        linked.dedup();
        for other in linked {
            if dot(&vector, &vectors[other as usize]) >= threshold {
                let (a, b) = (find(&mut parent, me), find(&mut parent, other));
                if a != b {
                    parent[a.max(b) as usize] = a.min(b);
                }
            }
        }
        for &(term, _) in &vector {
            index.entry(term).or_default().push(me);
        }
        vectors.push(vector);
    }
    (0..items.len() as u32)
        .map(|i| find(&mut parent, i))
        .collect()
}

fn dot(a: &[(u32, f32)], b: &[(u32, f32)]) -> f32 {
    let (mut i, mut j, mut sum) = (0, 0, 0.0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                sum += a[i].1 * b[j].1;
                i += 1;
                j += 1;
            }
        }
    }
    sum
}

fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        parent[x as usize] = parent[parent[x as usize] as usize];
        x = parent[x as usize];
    }
    x
}
