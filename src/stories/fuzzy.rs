//! Fuzzy matrix similarity (SPEC §3): how well the words of two short texts cover each other
//! when words may match approximately.
//!
//! Word similarity is `1 − edit distance / longer length` (Levenshtein over characters), set to
//! 0 below a cut-off so that unrelated words do not add up. The two word lists form a matrix of
//! these similarities; the maximum cover is the best one-to-one matching (an assignment
//! problem, solved with Kuhn–Munkres), and the similarity is its total divided by
//! `max(M, N)`, so that an extra word in either text lowers it.

use pathfinding::kuhn_munkres::kuhn_munkres;
use pathfinding::matrix::Matrix;

/// Similarity of two words in [0, 1]: `1 − levenshtein / max(len)`, or 0 below `cutoff`.
pub fn word_similarity(a: &str, b: &str, cutoff: f64) -> f64 {
    let similarity = strsim::normalized_levenshtein(a, b);
    if similarity >= cutoff {
        similarity
    } else {
        0.0
    }
}

/// The fuzzy matrix similarity of two word lists, in [0, 1] (0 if either is empty).
pub fn fuzzy_similarity(a: &[String], b: &[String], cutoff: f64) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    // Kuhn–Munkres wants no more rows than columns, and integer weights.
    let (rows, columns) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    const SCALE: f64 = 1_000_000.0;
    let weights: Vec<i64> = rows
        .iter()
        .flat_map(|x| {
            columns
                .iter()
                .map(move |y| (word_similarity(x, y, cutoff) * SCALE).round() as i64)
        })
        .collect();
    let Ok(matrix) = Matrix::from_vec(rows.len(), columns.len(), weights) else {
        return 0.0;
    };
    let (total, _) = kuhn_munkres(&matrix);
    total as f64 / SCALE / columns.len() as f64
}
