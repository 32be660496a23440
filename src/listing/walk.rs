//! A walk down a range of pages that leaves no hole in the keys it has covered where one could
//! hide something.
//!
//! A page read is a snapshot of one contiguous run of the list, so it covers the keys from its
//! last item to its first. Two pages read one after the other cover a contiguous run of keys
//! only if their key ranges meet. When the list moved between the reads they may not: ends
//! above pull items up past a reader going down. The walk notices the gap (the new page's
//! newest key lies below the oldest key covered so far), asks its owner whether it can hide
//! anything, and if so reads the page above again before going on.
//!
//! It walks *down* because almost everywhere the list drifts down: every start happens above
//! (nearly all at the top), while only the ends above a position pull it up, and those equal
//! the starts only at the very bottom. So a walk down mostly sees repeats, not holes; a walk
//! up would meet a hole at nearly every step.

use super::{Millis, PageView};

#[derive(Debug, Clone)]
pub(crate) struct Walk {
    /// The next page to read.
    next: u32,
    /// The oldest key the covered run has reached; `None` at the start of a round.
    reached: Option<Millis>,
}

impl Walk {
    pub(crate) fn new() -> Walk {
        Walk {
            next: 0,
            reached: None,
        }
    }

    /// The page to read, starting a new round when the walk has left `first..=last`.
    pub(crate) fn page(&mut self, first: u32, last: u32) -> u32 {
        let (first, last) = (first.max(1), last.max(first.max(1)));
        if !(first..=last).contains(&self.next) {
            self.next = first;
            self.reached = None;
        }
        self.next
    }

    /// Starts a new round at the top of the range on the next [`Walk::page`].
    pub(crate) fn restart(&mut self) {
        self.next = 0;
        self.reached = None;
    }

    /// The oldest key the round has covered without a hole so far.
    pub(crate) fn reached(&self) -> Option<Millis> {
        self.reached
    }

    /// Whether the round has gone past `last`.
    pub(crate) fn past(&self, last: u32) -> bool {
        self.next > last
    }

    /// Takes the page the walk read. A failed or empty read is simply read again.
    ///
    /// When the page's newest key lies below the oldest key covered so far, the keys between
    /// were in neither snapshot, and `hides(newest, reached)` says whether they may hide
    /// something worth a second read: if so the walk reads the page above again, else it goes
    /// on. (The keys of two adjacent pages never meet when the list stood still between the
    /// reads, so a walk that always went back would crawl whenever it reads fast.)
    pub(crate) fn handle(&mut self, view: &PageView, hides: impl FnOnce(Millis, Millis) -> bool) {
        let (Some(newest), Some(oldest)) = (view.items.first(), view.items.last()) else {
            return;
        };
        if view.page != self.next {
            return;
        }
        let (newest, oldest) = (newest.key, oldest.key);
        if self
            .reached
            .is_some_and(|reached| newest < reached && hides(newest, reached))
        {
            // A hole above this page: go back one.
            self.next = view.page.saturating_sub(1).max(1);
        } else {
            self.reached = Some(self.reached.map_or(oldest, |r| r.min(oldest)));
            self.next = view.page + 1;
        }
    }
}
