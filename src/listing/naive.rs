//! The naive strategy, the baseline of the benchmark: read every page from 1 to the end, over
//! and over, one read every `HOUR / budget`; report every broadcast not seen before On Air, and
//! one missing from two complete scans in a row Off Air.

use std::collections::HashSet;
use std::sync::Arc;

use super::{Book, Budget, Event, Millis, PageSize, Pager, Params, ReadOutcome, HOUR};

/// Full scans at the budget.
#[derive(Debug)]
pub struct NaivePager {
    book: Book,
    budget: Budget,
    per_page: u32,
    page_size: PageSize,
    total: Option<u64>,
    page: u32,
    requested_at: Option<Millis>,
    seen: HashSet<Arc<str>>,
    missing_once: HashSet<Arc<str>>,
}

impl NaivePager {
    /// A naive detector starting from `book`.
    pub fn new(params: Params, book: Book) -> NaivePager {
        let budget = Budget::new(&Params {
            burst: 1,
            ..params.clone()
        });
        NaivePager {
            per_page: params.per_page.max(1),
            page_size: PageSize::new(params.per_page),
            total: None,
            book,
            budget,
            page: 1,
            requested_at: None,
            seen: HashSet::new(),
            missing_once: HashSet::new(),
        }
    }

    fn end_scan(&mut self, now: Millis) {
        let missing: HashSet<Arc<str>> = self
            .book
            .entries()
            .map(|entry| entry.item.id.clone())
            .filter(|id| !self.seen.contains(id))
            .collect();
        for id in missing.intersection(&self.missing_once) {
            self.book.off_air(id, now);
        }
        self.missing_once = missing
            .into_iter()
            .filter(|id| self.book.get(id).is_some())
            .collect();
        self.seen.clear();
        self.page = 1;
        self.book.forget_gone_before(now - 12 * HOUR);
    }
}

impl Pager for NaivePager {
    fn name(&self) -> &'static str {
        "naive"
    }

    fn poll_read(&mut self, now: Millis) -> Option<u32> {
        if self.requested_at.is_some() || !self.budget.allows(now, 0) {
            return None;
        }
        self.budget.take(now);
        self.requested_at = Some(now);
        Some(self.page)
    }

    fn handle_read(&mut self, now: Millis, _page: u32, outcome: ReadOutcome) {
        let Some(requested_at) = self.requested_at.take() else {
            return;
        };
        // The scan's end, from the latest total: a failed or empty page is skipped, its
        // broadcasts missing from this scan.
        let view = match outcome {
            ReadOutcome::Page(view) => view,
            ReadOutcome::Failed => ReadOutcome::empty(self.page, self.total),
        };
        let len = view.items.len() as u32;
        self.page_size.observe(&view);
        self.per_page = self.page_size.get();
        self.total = view.total.or(self.total);
        for item in &view.items {
            self.book.observe(item, requested_at, now);
            self.seen.insert(item.id.clone());
        }
        // A short page ends the scan; an empty one only when no total says it is a fault.
        let past_total = self
            .total
            .is_some_and(|total| u64::from(view.page) * u64::from(self.per_page) >= total);
        let empty_end = len == 0 && self.total.is_none();
        if past_total || (len > 0 && len < self.per_page) || empty_end {
            self.end_scan(now);
        } else {
            self.page += 1;
        }
    }

    fn poll_event(&mut self) -> Option<Event> {
        self.book.pop_event()
    }

    fn poll_timeout(&self) -> Option<Millis> {
        if self.requested_at.is_some() {
            return None;
        }
        Some(self.budget.ready_at(Millis::MIN, 0))
    }

    fn book(&self) -> &Book {
        &self.book
    }
}
