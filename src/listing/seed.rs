//! The seed's strategy, as SPEC §1 writes it, one read every `HOUR / budget`.
//!
//! **On Air (adaptive page feeding).** Read from page 1. For each page, with `It` items of
//! which `Id` are already known, compare `Id/It` with the threshold: below it, read the next
//! page; at or above it, read `look_ahead` more pages as insurance and stop if they are still
//! at or above it. Every unknown item is On Air.
//!
//! **Off Air (tail comparison).** From the total on page 1 find the last page and read
//! backwards until a page lists a broadcast reserved at or after `Tnow − frame`. `Thead` is the
//! newest key among the items read. A known broadcast with a key after `Thead` is taken to be
//! on air; one at or before it is on air if the tail read listed it and Off Air if not.
//!
//! The two passes alternate. Nothing here guards against the list moving during the tail
//! read, a failed or empty page inside it, or a stale total: those are the seed's weak points,
//! which the benchmark shows and [`super::ferret`] addresses. The one liberty taken: a failed
//! read abandons the pass instead of inventing what the page held.

use std::collections::HashSet;
use std::sync::Arc;

use super::{Book, Budget, Event, Millis, PageSize, Pager, Params, ReadOutcome, HOUR};

#[derive(Debug)]
enum Pass {
    Head {
        page: u32,
        /// Insurance pages left once the ratio reached the threshold.
        ahead: Option<u32>,
    },
    Tail {
        page: u32,
        listed: HashSet<Arc<str>>,
        newest: Millis,
    },
}

/// The seed's strategy.
#[derive(Debug)]
pub struct SeedPager {
    params: Params,
    book: Book,
    budget: Budget,
    per_page: u32,
    page_size: PageSize,
    total: Option<u64>,
    pass: Pass,
    requested_at: Option<Millis>,
}

impl SeedPager {
    /// A seed detector starting from `book`.
    pub fn new(params: Params, book: Book) -> SeedPager {
        let budget = Budget::new(&Params {
            burst: 1,
            ..params.clone()
        });
        SeedPager {
            per_page: params.per_page.max(1),
            page_size: PageSize::new(params.per_page),
            params,
            book,
            budget,
            total: None,
            pass: Pass::Head {
                page: 1,
                ahead: None,
            },
            requested_at: None,
        }
    }

    fn start_tail(&mut self) {
        self.pass = match self.total {
            Some(total) if total > 0 => Pass::Tail {
                page: total
                    .div_ceil(u64::from(self.per_page))
                    .min(u64::from(u32::MAX)) as u32,
                listed: HashSet::new(),
                newest: Millis::MIN,
            },
            _ => Pass::Head {
                page: 1,
                ahead: None,
            },
        };
    }

    fn head(&mut self, page: u32, ahead: Option<u32>, now: Millis, outcome: ReadOutcome) {
        let ReadOutcome::Page(view) = outcome else {
            self.start_tail();
            return;
        };
        let len = view.items.len() as u32;
        if page == 1 {
            self.total = view.total;
        }
        self.page_size.observe(&view);
        self.per_page = self.page_size.get();
        let requested_at = self.requested_at.unwrap_or(now);
        let new = view
            .items
            .iter()
            .filter(|item| self.book.observe(item, requested_at, now))
            .count() as u32;
        if len < self.per_page {
            // The list ends here.
            self.start_tail();
            return;
        }
        let ratio = f64::from(len - new) / f64::from(len);
        // `ahead`: insurance pages still to read, counting this one if it was one.
        let ahead = if ratio < self.params.dup_threshold {
            None
        } else {
            match ahead.unwrap_or(self.params.look_ahead + 1) - 1 {
                0 => {
                    self.start_tail();
                    return;
                }
                left => Some(left),
            }
        };
        self.pass = Pass::Head {
            page: page + 1,
            ahead,
        };
    }

    fn tail(&mut self, now: Millis, outcome: ReadOutcome) {
        let ReadOutcome::Page(view) = outcome else {
            self.pass = Pass::Head {
                page: 1,
                ahead: None,
            };
            return;
        };
        let requested_at = self.requested_at.unwrap_or(now);
        for item in &view.items {
            self.book.observe(item, requested_at, now);
        }
        let Pass::Tail {
            page,
            listed,
            newest,
        } = &mut self.pass
        else {
            return;
        };
        listed.extend(view.items.iter().map(|item| item.id.clone()));
        *newest = view
            .items
            .iter()
            .map(|item| item.key)
            .fold(*newest, Millis::max);
        let reached = view
            .items
            .iter()
            .any(|item| item.key >= now - self.params.frame);
        if !reached && *page > 1 {
            *page -= 1;
            return;
        }
        let thead = *newest;
        let absent: Vec<Arc<str>> = self
            .book
            .entries()
            .take_while(|entry| entry.item.key <= thead)
            .filter(|entry| !listed.contains(&entry.item.id))
            .map(|entry| entry.item.id.clone())
            .collect();
        for id in absent {
            self.book.off_air(&id, now);
        }
        self.book.forget_gone_before(now - 12 * HOUR);
        self.pass = Pass::Head {
            page: 1,
            ahead: None,
        };
    }
}

impl Pager for SeedPager {
    fn name(&self) -> &'static str {
        "seed"
    }

    fn poll_read(&mut self, now: Millis) -> Option<u32> {
        if self.requested_at.is_some() || !self.budget.allows(now, 0) {
            return None;
        }
        self.budget.take(now);
        self.requested_at = Some(now);
        Some(match &self.pass {
            Pass::Head { page, .. } | Pass::Tail { page, .. } => *page,
        })
    }

    fn handle_read(&mut self, now: Millis, _page: u32, outcome: ReadOutcome) {
        if self.requested_at.is_none() {
            return;
        }
        match self.pass {
            Pass::Head { page, ahead } => self.head(page, ahead, now, outcome),
            Pass::Tail { .. } => self.tail(now, outcome),
        }
        self.requested_at = None;
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
