//! Document frequencies and summed weights by term id over the window's items.

use rustc_hash::FxHashMap;

use super::BIGRAM;

/// Document frequencies by term id over the window's items, and the ids free for new terms.
#[derive(Debug, Default)]
pub(super) struct Vocabulary {
    pub(super) df: Vec<u32>,
    /// Per term, its weights summed over the window's items.
    weight: Vec<f64>,
    free: Vec<u32>,
    /// Terms with a document frequency above 0.
    live: usize,
}

/// Terms a vocabulary holds before it is ever swept.
pub(super) const VOCABULARY_FLOOR: usize = 4_096;

impl Vocabulary {
    /// An id for a new term, counted in no document yet.
    pub(super) fn fresh(&mut self) -> u32 {
        self.free.pop().unwrap_or_else(|| {
            self.df.push(0);
            self.weight.push(0.0);
            (self.df.len() - 1) as u32
        })
    }

    /// The document frequency of term `id` (a bigram's with its [`BIGRAM`] bit or without).
    pub(super) fn df(&self, id: u32) -> u32 {
        self.df[(id & !BIGRAM) as usize]
    }

    /// Counts term `id` on one more item.
    pub(super) fn count(&mut self, id: u32) {
        let df = &mut self.df[(id & !BIGRAM) as usize];
        self.live += usize::from(*df == 0);
        *df += 1;
    }

    /// Counts term `id` on one item fewer, that item weighing it `weight`.
    pub(super) fn uncount(&mut self, id: u32, weight: f32) {
        let at = (id & !BIGRAM) as usize;
        let df = &mut self.df[at];
        *df -= 1;
        self.live -= usize::from(*df == 0);
        // On no item, exactly nothing, whatever the rounding left.
        self.weight[at] = match *df {
            0 => 0.0,
            _ => self.weight[at] - f64::from(weight),
        };
    }

    /// The weights of term `id` summed over the window's items.
    pub(super) fn weight(&self, id: u32) -> f64 {
        self.weight[(id & !BIGRAM) as usize]
    }

    /// Adds `weight` (an item's, counted already) to term `id`'s sum.
    pub(super) fn weigh(&mut self, id: u32, weight: f32) {
        self.weight[(id & !BIGRAM) as usize] += f64::from(weight);
    }

    /// Whether a vocabulary of `held` terms is due a sweep.
    pub(super) fn crowded(&self, held: usize) -> bool {
        held > 2 * self.live.max(VOCABULARY_FLOOR)
    }

    /// Drops from `names` (name → id) every term on no item of the window (document
    /// frequency 0) and not `held`, freeing its id. Returns the ids it freed.
    pub(super) fn forget<K>(
        &mut self,
        names: &mut FxHashMap<K, u32>,
        held: impl Fn(u32) -> bool,
    ) -> &[u32] {
        let free_before = self.free.len();
        names.retain(|_, &mut id| {
            let id = id & !BIGRAM;
            let keep = self.df[id as usize] > 0 || held(id);
            if !keep {
                self.free.push(id);
            }
            keep
        });
        &self.free[free_before..]
    }
}
