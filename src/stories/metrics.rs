//! Clustering quality against gold labels: pairwise and BCubed precision, recall and F1, as
//! `../shared/data/news-clustering/README.md` §2 defines them.

use std::collections::HashMap;
use std::hash::Hash;

use serde::Serialize;

/// Precision, recall and F1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Prf {
    /// Precision.
    pub precision: f64,
    /// Recall.
    pub recall: f64,
    /// F1, from the precision and recall above.
    pub f1: f64,
}

impl Prf {
    fn new(precision: f64, recall: f64) -> Prf {
        let f1 = if precision + recall > 0.0 {
            2.0 * precision * recall / (precision + recall)
        } else {
            0.0
        };
        Prf {
            precision,
            recall,
            f1,
        }
    }
}

/// Both scores of one clustering.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Scores {
    /// Pairwise ("standard") P/R/F1: pairs of documents put together.
    pub pairwise: Prf,
    /// BCubed P/R/F1: per document, averaged.
    pub bcubed: Prf,
    /// Gold clusters.
    pub gold_clusters: usize,
    /// Predicted clusters.
    pub predicted_clusters: usize,
}

/// Scores `predicted` against `gold`, one label each per document, in the same order.
///
/// # Panics
/// If the two slices differ in length.
pub fn score<G: Eq + Hash, P: Eq + Hash>(gold: &[G], predicted: &[P]) -> Scores {
    assert_eq!(gold.len(), predicted.len(), "one label per document");
    let n = gold.len() as f64;
    let mut cells: HashMap<(&G, &P), u64> = HashMap::new();
    let mut a: HashMap<&G, u64> = HashMap::new();
    let mut b: HashMap<&P, u64> = HashMap::new();
    for (g, p) in gold.iter().zip(predicted) {
        *cells.entry((g, p)).or_default() += 1;
        *a.entry(g).or_default() += 1;
        *b.entry(p).or_default() += 1;
    }
    let pairs = |x: u64| (x * x.saturating_sub(1) / 2) as f64;
    let tp: f64 = cells.values().map(|&n| pairs(n)).sum();
    let predicted_pairs: f64 = b.values().map(|&n| pairs(n)).sum();
    let gold_pairs: f64 = a.values().map(|&n| pairs(n)).sum();
    let ratio = |x: f64, y: f64| if y > 0.0 { x / y } else { 0.0 };
    let pairwise = Prf::new(ratio(tp, predicted_pairs), ratio(tp, gold_pairs));

    let (mut bp, mut br) = (0.0, 0.0);
    for (&(g, p), &count) in &cells {
        let square = (count * count) as f64;
        bp += square / b[p] as f64;
        br += square / a[g] as f64;
    }
    let bcubed = if n > 0.0 {
        Prf::new(bp / n, br / n)
    } else {
        Prf::new(0.0, 0.0)
    };
    Scores {
        pairwise,
        bcubed,
        gold_clusters: a.len(),
        predicted_clusters: b.len(),
    }
}
