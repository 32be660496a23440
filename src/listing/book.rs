//! The book of broadcasts believed on air, and of those reported gone.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use super::ties::{serial_order, TieOrder};
use super::{absence_range, Event, EventKind, Listed, Millis, PageView};

/// One broadcast believed on air.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BookEntry {
    /// The broadcast as last seen.
    pub item: Listed,
    /// When it was last proven on air: the start of the read that saw it (the page was
    /// rendered at or after it).
    pub seen_at: Millis,
    /// When the latest read that saw it was answered. A page whose read started before then
    /// may have been rendered before that read's, while two reads overlap, so it proves
    /// nothing of this broadcast: it may have started in between. A book restored from the
    /// store takes `seen_at` (no read of before the restart is still outstanding).
    pub answered_at: Millis,
}

impl BookEntry {
    /// A broadcast as the store kept it: last seen by a read started at `seen_at`.
    pub fn restored(item: Listed, seen_at: Millis) -> BookEntry {
        BookEntry {
            item,
            seen_at,
            answered_at: seen_at,
        }
    }
}

/// The broadcasts a detector believes on air, ordered by sort key, the ids already reported
/// Off Air, and the events not yet polled.
///
/// A broadcast is reported On Air once, when it is first seen; Off Air once, after which it is
/// remembered as gone and ignored if a stale page shows it again.
#[derive(Debug, Clone, Default)]
pub struct Book {
    entries: BTreeMap<(Millis, Arc<str>), BookEntry>,
    keys: HashMap<Arc<str>, Millis>,
    gone: HashMap<Arc<str>, Millis>,
    events: VecDeque<Event>,
    /// The listing's order among equal keys, as its pages showed it.
    ties: TieOrder,
}

impl Book {
    /// An empty book.
    pub fn new() -> Book {
        Book::default()
    }

    /// A book restored from the store: the broadcasts on air, the ids reported gone (with
    /// the time they were reported) and what the pages showed of the order among equals.
    pub fn restore(
        entries: impl IntoIterator<Item = BookEntry>,
        gone: impl IntoIterator<Item = (Arc<str>, Millis)>,
        ties: TieOrder,
    ) -> Book {
        let mut book = Book {
            gone: gone.into_iter().collect(),
            ties,
            ..Book::default()
        };
        for entry in entries {
            if !book.gone.contains_key(&entry.item.id) {
                book.insert(entry);
            }
        }
        book
    }

    /// What the pages showed of the listing's order among equal keys, for the store to keep
    /// ([`super::ties`]).
    pub fn ties(&self) -> TieOrder {
        self.ties
    }

    /// Broadcasts believed on air.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no broadcast is believed on air.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The broadcasts believed on air, oldest sort key first.
    pub fn entries(&self) -> impl DoubleEndedIterator<Item = &BookEntry> {
        self.entries.values()
    }

    /// The broadcast with this id, if it is believed on air.
    pub fn get(&self, id: &str) -> Option<&BookEntry> {
        let key = *self.keys.get(id)?;
        self.entries.get(&(key, Arc::from(id)))
    }

    /// Whether this id was reported Off Air.
    pub fn is_gone(&self, id: &str) -> bool {
        self.gone.contains_key(id)
    }

    /// The ids reported Off Air, with the time of the report.
    pub fn gone(&self) -> impl Iterator<Item = (&Arc<str>, Millis)> {
        self.gone.iter().map(|(id, at)| (id, *at))
    }

    /// Records that `item` was seen on air by a read started at `seen_at` and completed at
    /// `now`. An unknown broadcast is reported On Air; returns whether it was one.
    pub fn observe(&mut self, item: &Listed, seen_at: Millis, now: Millis) -> bool {
        if self.gone.contains_key(&item.id) {
            return false;
        }
        if let Some(&key) = self.keys.get(&item.id) {
            let mut entry = self
                .entries
                .remove(&(key, item.id.clone()))
                .expect("keys and entries agree");
            entry.item = item.clone();
            entry.seen_at = entry.seen_at.max(seen_at);
            entry.answered_at = entry.answered_at.max(now);
            self.insert(entry);
            return false;
        }
        self.insert(BookEntry {
            item: item.clone(),
            seen_at,
            answered_at: now,
        });
        self.events.push_back(Event {
            kind: EventKind::OnAir,
            item: item.clone(),
            at: now,
        });
        true
    }

    /// Reports the broadcast Off Air at `now` and forgets it.
    pub fn off_air(&mut self, id: &str, now: Millis) {
        let Some(key) = self.keys.remove(id) else {
            return;
        };
        let id: Arc<str> = Arc::from(id);
        if let Some(entry) = self.entries.remove(&(key, id.clone())) {
            self.gone.insert(id, now);
            self.events.push_back(Event {
                kind: EventKind::OffAir,
                item: entry.item,
                at: now,
            });
        }
    }

    /// Applies a page snapshot from a read started at `requested_at`, completed at `now`:
    /// reports its new broadcasts On Air, marks the known ones seen, and reports Off Air every
    /// broadcast whose key lies strictly inside the page's [`absence_range`] but which the
    /// page does not list; once the listing has shown that it lists equal keys in the order
    /// of their id serials ([`super::ties`]), also those with the key of an end of the page
    /// that the order places inside it. A broadcast shown by a read answered after
    /// `alike_since` is left alone ([`BookEntry::answered_at`]): after this read started, or
    /// after the first read of the run of answers alike this one that it ends, for a cache
    /// may have kept that first answer ([`super::stale`]); never later than `requested_at`.
    /// Returns the number of new broadcasts.
    pub fn apply_snapshot(
        &mut self,
        view: &PageView,
        per_page: u32,
        requested_at: Millis,
        alike_since: Millis,
        now: Millis,
    ) -> usize {
        let new = view
            .items
            .iter()
            .filter(|item| self.observe(item, requested_at, now))
            .count();
        let (Some((low, high)), Some(first), Some(last)) = (
            absence_range(view, per_page),
            view.items.first(),
            view.items.last(),
        ) else {
            return new;
        };
        self.ties.learn(&view.items);
        let order = self.ties.trusted();
        // Below the first item: a smaller key, or its key and, in the listing's order of
        // equals, after it. Above the last item likewise.
        let below_first = |entry: &Listed| {
            entry.key < high
                || (entry.key == high
                    && order.is_some_and(|order| serial_order(&first.id, &entry.id) == Some(order)))
        };
        let above_last = |entry: &Listed| {
            entry.key > low
                || (entry.key == low
                    && order.is_some_and(|order| serial_order(&entry.id, &last.id) == Some(order)))
        };
        let listed: HashSet<&str> = view.items.iter().map(|item| &*item.id).collect();
        let absent: Vec<Arc<str>> = self
            .entries
            .range((low, Arc::from(""))..)
            .map(|(_, entry)| entry)
            .take_while(|entry| entry.item.key <= high)
            .filter(|entry| entry.answered_at <= alike_since)
            .map(|entry| &entry.item)
            .filter(|item| !listed.contains(&*item.id) && below_first(item) && above_last(item))
            .map(|item| item.id.clone())
            .collect();
        for id in absent {
            self.off_air(&id, now);
        }
        new
    }

    /// The broadcasts whose key lies strictly between `low` and `high`.
    pub fn between(&self, low: Millis, high: Millis) -> impl Iterator<Item = &BookEntry> {
        let from = low.saturating_add(1);
        let range = if from >= high {
            None
        } else {
            Some(
                self.entries
                    .range((from, Arc::from(""))..(high, Arc::from(""))),
            )
        };
        range.into_iter().flatten().map(|(_, entry)| entry)
    }

    /// Forgets gone ids reported before `cutoff` (a listing never shows them again after its
    /// longest broadcast).
    pub fn forget_gone_before(&mut self, cutoff: Millis) {
        self.gone.retain(|_, at| *at >= cutoff);
    }

    /// The events not yet polled, oldest first.
    pub fn queued(&self) -> impl ExactSizeIterator<Item = &Event> {
        self.events.iter()
    }

    /// The next event not yet polled.
    pub fn pop_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    fn insert(&mut self, entry: BookEntry) {
        let id = entry.item.id.clone();
        let key = entry.item.key;
        self.keys.insert(id.clone(), key);
        self.entries.insert((key, id), entry);
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering;

    use super::super::ties::TRUST_AFTER;
    use super::*;

    fn item(serial: u32, key: Millis) -> Listed {
        crate::listing::listed(u64::from(serial), key)
    }

    fn page(page: u32, items: Vec<Listed>) -> PageView {
        PageView {
            page,
            total: Some(100),
            items,
            age: 0,
        }
    }

    /// The broadcasts of `book` among `serials`, still on air, after page 2 shows lv55 and
    /// lv60 (key 70, in the order `tie` gives), lv30 (60) and lv20 (50).
    fn on_air_after_page_two(mut book: Book, tie: Ordering, serials: &[u32]) -> Vec<u32> {
        for (serial, key) in [(65, 70), (40, 70), (25, 50), (10, 50)] {
            book.observe(&item(serial, key), 0, 0);
        }
        let mut equals = [item(60, 70), item(55, 70)];
        if tie == Ordering::Less {
            equals.reverse();
        }
        let view = page(2, [&equals[..], &[item(30, 60), item(20, 50)]].concat());
        book.apply_snapshot(&view, 4, 10, 10, 10);
        serials
            .iter()
            .copied()
            .filter(|serial| book.get(&format!("lv{serial}")).is_some())
            .collect()
    }

    /// A book taught that equals are listed in the order `tie` gives.
    fn taught(tie: Ordering) -> Book {
        let mut book = Book::new();
        let mut equals: Vec<Listed> = (0..17).map(|i| item(2_000 - i, 10)).collect();
        if tie == Ordering::Less {
            equals.reverse();
        }
        for _ in 0..TRUST_AFTER.div_ceil(16) {
            book.apply_snapshot(&page(9, equals.clone()), 17, 0, 0, 0);
        }
        book
    }

    /// A broadcast that shares the key of an end of the page may sit on the next page among
    /// its equals: not proven gone, until the listing has shown the order it lists equals in.
    /// Listed larger serial first, lv40 (below lv55) and lv25 (above lv20) are proven gone,
    /// while lv65 (above the first item) and lv10 (below the last) may still be on the pages
    /// around; listed smaller serial first, the other way round.
    #[test]
    fn equal_keys_at_the_page_ends_are_proven_gone_once_their_order_is_known() {
        let all = [65, 40, 25, 10];
        for tie in [Ordering::Greater, Ordering::Less] {
            assert_eq!(on_air_after_page_two(Book::new(), tie, &all), all);
        }
        let larger_first = Ordering::Greater;
        assert_eq!(
            on_air_after_page_two(taught(larger_first), larger_first, &all),
            [65, 10]
        );
        let smaller_first = Ordering::Less;
        assert_eq!(
            on_air_after_page_two(taught(smaller_first), smaller_first, &all),
            [40, 25]
        );
        // Taught one order, a page in the other proves no equal gone.
        assert_eq!(
            on_air_after_page_two(taught(larger_first), smaller_first, &all),
            all
        );
    }

    /// The order among equals is part of what the store keeps: a book restored with the ties
    /// its pages taught proves the same equals gone at once, and one restored without them
    /// proves none until it is taught again.
    #[test]
    fn a_restored_book_keeps_the_order_its_pages_taught() {
        let all = [65, 40, 25, 10];
        let tie = Ordering::Greater;
        let restored = |ties| Book::restore([], [], ties);
        assert_eq!(
            on_air_after_page_two(restored(taught(tie).ties()), tie, &all),
            [65, 10]
        );
        assert_eq!(
            on_air_after_page_two(restored(TieOrder::default()), tie, &all),
            all
        );
    }
}
