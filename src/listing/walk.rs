//! A walk over a range of pages that never leaves a hole in the keys it has covered.
//!
//! A page read is a snapshot of one contiguous run of the list, so it covers the keys from its
//! last item to its first. Two pages read one after the other cover a contiguous run of keys
//! only if their key ranges meet; when the list moved between the reads, they may not: a walk
//! downwards misses the items that ends above pulled up past it, a walk upwards those that
//! starts above pushed down past it. The walk notices the hole — the new page's near end lies
//! beyond the key covered so far — and reads the page it came from again before going on.

use super::{Millis, PageView};

/// Which way the walk goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// From low page numbers to high: newest keys first. Suits a region where starts
    /// dominate (the list drifts down, so the walk sees repeats rather than holes).
    Down,
    /// From high page numbers to low. Suits a region where ends dominate.
    Up,
}

#[derive(Debug, Clone)]
pub(crate) struct Walk {
    direction: Direction,
    /// The next page to read.
    next: u32,
    /// The key the covered run has reached (its lowest key walking down, its highest walking
    /// up); `None` at the start of a round.
    reached: Option<Millis>,
}

impl Walk {
    pub(crate) fn new(direction: Direction) -> Walk {
        Walk {
            direction,
            next: 0,
            reached: None,
        }
    }

    /// The page to read, starting a new round when the walk has left `first..=last`.
    pub(crate) fn page(&mut self, first: u32, last: u32) -> u32 {
        let (first, last) = (first.max(1), last.max(first.max(1)));
        if !(first..=last).contains(&self.next) {
            self.next = match self.direction {
                Direction::Down => first,
                Direction::Up => last,
            };
            self.reached = None;
        }
        self.next
    }

    /// Takes the page the walk read. A failed or empty read is simply read again.
    pub(crate) fn handle(&mut self, view: &PageView) {
        let (Some(newest), Some(oldest)) = (view.items.first(), view.items.last()) else {
            return;
        };
        if view.page != self.next {
            return;
        }
        let (newest, oldest) = (newest.key, oldest.key);
        match self.direction {
            Direction::Down => {
                if self.reached.is_some_and(|reached| newest < reached) {
                    // A hole above this page: go back one.
                    self.next = view.page.saturating_sub(1).max(1);
                } else {
                    self.reached = Some(self.reached.map_or(oldest, |r| r.min(oldest)));
                    self.next = view.page + 1;
                }
            }
            Direction::Up => {
                if self.reached.is_some_and(|reached| oldest > reached) {
                    self.next = view.page + 1;
                } else {
                    self.reached = Some(self.reached.map_or(newest, |r| r.max(newest)));
                    // Past page 1 the round is over.
                    self.next = view.page.saturating_sub(1);
                }
            }
        }
    }
}
