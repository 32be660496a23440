//! Document frequencies and summed weights by term id over the window's items.

use rustc_hash::FxHashMap;

use super::BIGRAM;

/// Document frequencies by term id over the window's items, and the ids free for new terms.
#[derive(Debug, Default)]
pub(super) struct Vocabulary {
    /// By term id: what an item's terms read and write together, so a term costs one cache
    /// line.
    terms: Vec<TermStats>,
    free: Vec<u32>,
    /// Terms with a document frequency above 0.
    live: usize,
}

/// A term's statistics over the window's items.
#[derive(Debug, Default, Clone, Copy)]
struct TermStats {
    /// Its weights summed.
    weight: f64,
    /// The items it is on.
    df: u32,
}

/// Terms a vocabulary holds before it is ever swept.
pub(super) const VOCABULARY_FLOOR: usize = 4_096;

impl Vocabulary {
    /// An id for a new term, counted in no document yet.
    pub(super) fn fresh(&mut self) -> u32 {
        self.free.pop().unwrap_or_else(|| {
            self.terms.push(TermStats::default());
            (self.terms.len() - 1) as u32
        })
    }

    /// Term `id`'s statistics (a bigram's with its [`BIGRAM`] bit or without).
    fn term(&self, id: u32) -> &TermStats {
        &self.terms[(id & !BIGRAM) as usize]
    }

    fn term_mut(&mut self, id: u32) -> &mut TermStats {
        &mut self.terms[(id & !BIGRAM) as usize]
    }

    /// The document frequency of term `id`.
    pub(super) fn df(&self, id: u32) -> u32 {
        self.term(id).df
    }

    /// Counts term `id` on one more item.
    pub(super) fn count(&mut self, id: u32) {
        let term = self.term_mut(id);
        let new = term.df == 0;
        term.df += 1;
        self.live += usize::from(new);
    }

    /// Counts term `id` on one item fewer, that item weighing it `weight`.
    pub(super) fn uncount(&mut self, id: u32, weight: f32) {
        let term = self.term_mut(id);
        term.df -= 1;
        // On no item, exactly nothing, whatever the rounding left.
        term.weight = match term.df {
            0 => 0.0,
            _ => term.weight - f64::from(weight),
        };
        let gone = term.df == 0;
        self.live -= usize::from(gone);
    }

    /// The weights of term `id` summed over the window's items.
    pub(super) fn weight(&self, id: u32) -> f64 {
        self.term(id).weight
    }

    /// Adds `weight` (an item's, counted already) to term `id`'s sum.
    pub(super) fn weigh(&mut self, id: u32, weight: f32) {
        self.term_mut(id).weight += f64::from(weight);
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
            let keep = self.terms[id as usize].df > 0 || held(id);
            if !keep {
                self.free.push(id);
            }
            keep
        });
        &self.free[free_before..]
    }
}
