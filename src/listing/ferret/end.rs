//! The end of the list: what the pages of a listing show of where it ends, with or without
//! the channel's total, and the proof of the end that a listing without one needs.

use std::cmp::Ordering;

use super::FerretPager;
use crate::listing::{Listed, Millis, PageView, ReadOutcome};

/// A listing without a total proves its end by reading the last non-empty page twice alike
/// (not a truncated answer) and then the page after it empty.
#[derive(Debug, Clone)]
pub(super) enum EndCheck {
    /// An empty page followed this one: read it.
    Read(u32),
    /// Read once: read it again. The flag: a full page above it was read since (see
    /// [`TotalTrust::SaysMore`]).
    Again(PageView, bool),
    /// Read twice alike (the second read started at the time given): read the next page.
    Next(PageView, Millis),
}

impl EndCheck {
    pub(super) fn page(&self) -> u32 {
        match self {
            EndCheck::Read(page) => *page,
            EndCheck::Again(view, _) => view.page,
            EndCheck::Next(view, _) => view.page + 1,
        }
    }
}

/// Whether the channel's total is trusted, as the latest short page with items showed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TotalTrust {
    /// It agreed with a short page (or none has contradicted it).
    Trusted,
    /// A short page showed more items than it allows: it lags a growing list, or counts
    /// something else.
    SaysLess,
    /// A short page showed fewer items than it allows: it lags a shrinking list (a cached
    /// count), counts something else, or the page was cut short. A listing that cuts its
    /// pages looks the same at its last page, and an end proven there would report the
    /// broadcasts cut off gone; but such a listing cuts the pages above as well. So the second
    /// read of the short page counts for a check of the end only with a full page above it
    /// read in between: the head's, or the check reads the page above itself. Full as the
    /// fullest page ever read ([`super::PageSize::whole`]): pages cut for a minute make three
    /// short page 1s in a row, which lower the page size, and a cut page then looked full
    /// (every page halved for ten minutes with the total right: nine broadcasts below the cut
    /// last page reported gone, `ferret_truncated_pages_give_no_false_off_air`).
    SaysMore,
}

/// An empty page whose own total empties the list or ends it above the page before, where the
/// total known does not, is taken as a fault until this many empty pages in a row have said
/// so. A listing whose failing backend renders an empty result with a total of 0 answers like
/// a list that has emptied, and taking it at its word put the end of the list at page 0
/// (`peak2009` with 1 % such pages, seeds 1–8: 502 frame ends slipped). A page with items
/// sets the total anyway, so only a list that really emptied waits for this.
pub(super) const EMPTY_END_READS: u32 = 3;

/// How long a short page's last broadcast, shown last again on a short page further down,
/// says that page is the same one answered again, in frames (9 s of a 30-minute frame).
const REPEAT_MOMENT_PER_FRAME: Millis = 200;

impl FerretPager {
    /// For a listing whose channel gives no total: the length of the list, as the pages
    /// showed its end ([`FerretPager::end_offset`]). Used to plan reads only: without a total
    /// no page proves itself the last one.
    pub(super) fn estimate_total(&self) -> Option<u64> {
        let offset = self.end_offset?;
        Some((self.count_live(self.book.entries()) as i64 + offset).max(0) as u64)
    }

    /// What a page of a listing without a total says of its end: a short page ends the list
    /// there; a full page past the estimate moves it below the page, by the book's broadcasts
    /// below the page's last one (at least one). An empty page says nothing here (it may be a
    /// fault, and the check of the page above it that it starts settles where the end is).
    pub(super) fn observe_end(&mut self, page: u32, view: &PageView) {
        let above = u64::from(page - 1) * u64::from(self.per_page);
        let len = view.items.len() as u64;
        let end = if len < u64::from(self.per_page) {
            above + len
        } else if self
            .estimate_total()
            .is_none_or(|total| total <= above + len)
        {
            let below = (view.items.last()).map_or(0, |last| {
                self.count_live(self.book.between(Millis::MIN, last.key))
            });
            above + len + below.max(1)
        } else {
            return;
        };
        self.end_at(end);
    }

    /// The page with the channel's total, or without it while the total is not to be
    /// trusted. A short page was the last of the list when it was rendered, or the listing
    /// cut its answer short. Until a short page agrees with the total again, a short page
    /// that disagrees with it sets it aside, and pages are read as a listing without a
    /// total's, whose end is proven by the pages alone ([`TotalTrust`]). Kept, a total a minute
    /// old proved the end only when it happened to agree, and the tail's frame ends slipped:
    /// while more broadcasts end than start, it says the last page holds more than it shows
    /// (`peak2009` with such a total, seeds 1–64: 3 frame ends slipped in real time and 14 at
    /// ×20, when only a total that said less was set aside).
    pub(super) fn trusted_total(&mut self, mut view: PageView) -> PageView {
        let Some(total) = view.total else {
            return view;
        };
        let len = view.items.len() as u64;
        if len > 0 && len < u64::from(self.per_page) {
            let end = u64::from(view.page - 1) * u64::from(self.per_page) + len;
            self.total_trust = match total.cmp(&end) {
                Ordering::Less => TotalTrust::SaysLess,
                Ordering::Equal => TotalTrust::Trusted,
                Ordering::Greater => TotalTrust::SaysMore,
            };
        }
        if self.total_trust != TotalTrust::Trusted {
            view.total = None;
        }
        view
    }

    /// Whether `view` is an empty page whose total ends the list above the page before it, or
    /// empties it, while the total known does not, and fewer than [`EMPTY_END_READS`] empty
    /// pages in a row have said so.
    pub(super) fn doubted_end(&mut self, view: &PageView) -> bool {
        let (Some(total), Some(known)) = (view.total.filter(|_| view.items.is_empty()), self.total)
        else {
            self.empty_end = None;
            return false;
        };
        // A list that shrank since the total known was read ends on the page before; an end
        // further up, or an empty list, is what the fault looks like.
        let above = u64::from(view.page - 1) * u64::from(self.per_page);
        let far = total == 0 || total + u64::from(self.per_page) <= above;
        if !far || known <= above {
            self.empty_end = None;
            return false;
        }
        let reads = match self.empty_end {
            Some((said, reads)) if said == total => reads + 1,
            _ => 1,
        };
        self.empty_end = (reads < EMPTY_END_READS).then_some((total, reads));
        reads < EMPTY_END_READS
    }

    /// Whether a check of the end reads the page above its short page before that page
    /// again: the total that set itself aside says more than the short page showed, and no
    /// full page above it was read since ([`TotalTrust::SaysMore`]). The list shorter than a
    /// page has no page above.
    pub(super) fn end_check_waits(&self) -> bool {
        matches!(self.end_check, Some(EndCheck::Again(ref view, false)) if view.page > 1)
            && self.total_trust == TotalTrust::SaysMore
    }

    /// The page the check of the end under way reads next ([`FerretPager::end_check_waits`]).
    pub(super) fn end_check_page(&self) -> Option<u32> {
        let page = self.end_check.as_ref()?.page();
        Some(if self.end_check_waits() {
            page - 1
        } else {
            page
        })
    }

    /// Records that the list of a listing without a total ends at position `end` now.
    pub(super) fn end_at(&mut self, end: u64) {
        self.end_offset = Some(end as i64 - self.count_live(self.book.entries()) as i64);
        self.total = self.estimate_total();
    }

    /// Follows the pages of a listing without a total towards a proof of its end. Only a
    /// short page can be the last one: a full page followed by an empty one is as likely a
    /// fault of the empty read as the end (an empty page is the listing's commonest fault,
    /// and taking one for the end reported every broadcast below it gone). A short page below
    /// whose last item the book still lists broadcasts (gone, or the page truncated) starts a
    /// check; a short page read again with the same last item (not a truncated answer; items
    /// above it may have ended or started in between, so that it is the page before or
    /// after, at the tail of a list they often have) confirms it; the page after it read
    /// empty then proves it ([`FerretPager::empty_page_without_total`]). The page checked
    /// read otherwise, or the page after it with items, ends the check; reads of other pages
    /// (the head's, boundary reads) leave it be. A short page with nothing of the book below
    /// it would prove nothing, and re-reading the ever-changing tail for it starved the head.
    pub(super) fn track_end(&mut self, view: &PageView, requested_at: Millis) {
        let short = view.items.len() < self.per_page as usize;
        let same = |before: &PageView| {
            short && before.items.last().map(|i| &i.id) == view.items.last().map(|i| &i.id)
        };
        let starts = short
            && (view.items.last()).is_some_and(|last| {
                (self.book.between(Millis::MIN, last.key.saturating_add(1)))
                    .any(|entry| beyond_short_page(view, &entry.item))
            });
        let start = || starts.then(|| EndCheck::Again(view.clone(), false));
        let waits = self.end_check_waits();
        self.end_check = match self.end_check.take() {
            Some(EndCheck::Read(page)) if page == view.page && short => {
                Some(EndCheck::Again(view.clone(), false))
            }
            // Read again before a full page above it (by a boundary read, say): it counts as
            // its first read.
            Some(EndCheck::Again(before, _)) if waits && same(&before) => {
                Some(EndCheck::Again(view.clone(), false))
            }
            Some(EndCheck::Again(before, _) | EndCheck::Next(before, _)) if same(&before) => {
                Some(EndCheck::Next(view.clone(), requested_at))
            }
            Some(EndCheck::Again(before, _))
                if self.page_size.whole(view) && view.page < before.page =>
            {
                Some(EndCheck::Again(before, true))
            }
            Some(check) => {
                let checked = match &check {
                    EndCheck::Read(page) => *page,
                    EndCheck::Again(before, _) | EndCheck::Next(before, _) => before.page,
                };
                if starts || view.page == checked || view.page == checked + 1 {
                    start()
                } else {
                    Some(check)
                }
            }
            None => start(),
        };
    }

    /// An empty page of a listing without a total: after the short page before it was read
    /// twice alike, a proof that it was the last one (absence below its items too, and the
    /// end of the list there); after one read of it, nothing yet; else it starts a check of
    /// the page before it (which goes on only if that page is short).
    pub(super) fn empty_page_without_total(&mut self, page: u32, now: Millis) {
        match self.end_check.take() {
            Some(EndCheck::Next(view, requested_at)) if view.page + 1 == page => {
                let above = u64::from(view.page - 1) * u64::from(self.per_page);
                let end = above + view.items.len() as u64;
                let last = PageView {
                    total: Some(end),
                    ..view
                };
                self.book
                    .apply_snapshot(&last, self.per_page, requested_at, requested_at, now);
                self.end_at(end);
            }
            // The page checked not read yet, or read once: the check goes on.
            Some(check @ (EndCheck::Read(_) | EndCheck::Again(..))) if check.page() + 1 == page => {
                self.end_check = Some(check);
            }
            _ if page > 1 => self.end_check = Some(EndCheck::Read(page - 1)),
            _ => {}
        }
    }

    pub(super) fn last_page(&self) -> Option<u32> {
        let total = self.total?;
        Some(
            total
                .div_ceil(u64::from(self.per_page))
                .clamp(1, u64::from(u32::MAX)) as u32,
        )
    }

    /// A page that shows what a page above it showed, read as the empty page it stands for.
    /// Paginators answer a page number out of range with their last page again (one that
    /// clamps it, as Django's `get_page`) or with the first (one that starts over), and a list
    /// that shrank since its end was last seen answers so below its new end. Read as itself,
    /// the last page again put the end of a list without a total a page further down at each
    /// read past it, and the detector lost the list; page 1 again sent the boundary reads
    /// aimed near the end further down, after a broadcast they could never find, and without
    /// a total it put the end of the list as far below as the book's broadcasts below page 1
    /// (`peak2009` answering so, seeds 1–64 in real time: 9,309 frame ends slipped with the
    /// total, and 287,372 without it, the list lost in every world).
    pub(super) fn repeat_as_empty(&self, view: PageView) -> PageView {
        if self.repeats_the_last_page(&view) || self.shows_a_page_above(&view) {
            ReadOutcome::empty(view.page, view.total)
        } else {
            view
        }
    }

    /// Whether a page past the end believed of a list without a total shows the same items
    /// as a page above read lately, or when both are short ends on the same broadcast within
    /// [`REPEAT_MOMENT_PER_FRAME`]: starts above lengthen the last page from one read to the
    /// next (on `peak2009` time-compressed, by several items a second), but in a moment no
    /// list grows by a page with its last broadcast still last. Compared item for item only,
    /// the repeat went unseen at the peak: boundary reads chasing a gone broadcast's key below
    /// the end moved the end a page down at each read, for minutes, ahead of the head (on
    /// twelve worlds, 27 frame ends slipped at scale 1 and 12 at ×20, and the On Air p95
    /// reached 51 s).
    fn repeats_the_last_page(&self, view: &PageView) -> bool {
        let (Some(first), Some(last)) = (view.items.first(), view.items.last()) else {
            return false;
        };
        let per_page = self.per_page as usize;
        let short = view.items.len() < per_page;
        let moment = self.params.frame.max(1) / REPEAT_MOMENT_PER_FRAME;
        view.total.is_none()
            && self.last_page().is_some_and(|end| view.page > end)
            && self.map.range(..view.page).any(|(_, range)| {
                let same = range.shown.2 == view.items.len() && range.shown.0 == first.id;
                let same_end = short && range.shown.2 < per_page && self.now - range.at <= moment;
                self.fresh(range) && range.shown.1 == last.id && (same || same_end)
            })
    }

    /// Whether the page's last broadcast is the last one a page above showed lately, or newer,
    /// and further down now than the starts since could have pushed it: more than a page, and
    /// twice what the book's recent starts say come in that time. What a start or an end does
    /// to the list moves a broadcast one place; only a page of the list shown again in the
    /// wrong place moves it pages at once. What the pages showed decides, not the book's
    /// counts, which lag the list by the starts of a restart's downtime.
    fn shows_a_page_above(&self, view: &PageView) -> bool {
        let Some(last) = view.items.last() else {
            return false;
        };
        let per_page = u64::from(self.per_page);
        let place = u64::from(view.page - 1) * per_page + view.items.len() as u64;
        let (recent, window) = self.recent_starts();
        self.map.range(..view.page).any(|(&above, range)| {
            let moved = place.saturating_sub(u64::from(above) * per_page);
            let elapsed = (self.now - range.at).max(0) as u64;
            let starts = recent as u64 * elapsed / window.max(1) as u64;
            let above_then = last.key > range.oldest || last.id == range.shown.1;
            self.fresh(range) && above_then && moved > per_page + 2 * starts
        })
    }
}

/// Whether `item` lies where only a proof of the end can show it gone, `view` being a short
/// page that may be the last: below the page's last broadcast, or at its key and not listed.
/// A page lists a key's broadcasts together, so one of the last key left off lies below the
/// page or is gone (a key is a whole second, shared by a dozen broadcasts on a listing
/// time-compressed). Not at the first broadcast's key but on page 1: its equals may sit on
/// the page above.
pub(super) fn beyond_short_page(view: &PageView, item: &Listed) -> bool {
    let (Some(first), Some(last)) = (view.items.first(), view.items.last()) else {
        return false;
    };
    item.key < last.key
        || (item.key == last.key
            && (view.page == 1 || item.key < first.key)
            && !view.items.iter().any(|listed| listed.id == item.id))
}
