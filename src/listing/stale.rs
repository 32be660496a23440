//! Pages a cache may serve: when a page read may have been rendered.
//!
//! A listing behind a cache (a reverse proxy, or a dictionary of rendered pages in the
//! listing's own server) answers every read of a page within the cache's lifetime with the
//! page as it was first rendered. Such a page is a snapshot of the list from before the read,
//! perhaps from before a broadcast another page has since shown: read as of its own read, it
//! would prove that broadcast gone (a false Off Air), and it would settle gaps in the serials
//! that were still open.
//!
//! A cached page comes back exactly as it was. But a page may come back unchanged without a
//! cache too: where the starts and ends above it balance (deep in the list, for a minute or
//! more), or where nothing happens. There an answer equal to the last still shows the list at
//! its read: that the broadcasts it lists are on air then. So the listing must show its cache
//! first, on page 1, which changes with every start and which the head reads every few
//! seconds. A cache keeps a page for its lifetime and then lets it go: page 1 comes back
//! unchanged only while its answer is younger than that, and changed only once it is older.
//! A list that stood still changes when a broadcast starts, at any age. Once page 1 has come
//! back unchanged [`CACHE_REPEATS`] times, and every changed answer came older than every
//! unchanged one, the listing has shown a cache, and from then on:
//!
//! - an answer equal to the page's last one, item for item and total for total, is taken as
//!   rendered no later than the first read of that run of equal answers
//!   ([`Renders::rendered`]): it proves no more than that read did;
//! - a read of a page made before the cache may let it go would bring the same answer, a
//!   read of the budget spent for nothing. [`Renders::fresh_at`] tells when that may be: the
//!   oldest page 1 has come back unchanged, and an eighth more, after the page's last
//!   answer was first given. A read made then that still finds page 1 unchanged lengthens
//!   that time, so it grows to the cache's lifetime;
//! - an answer that starts a run may be as old as that too, for what it proves gone. The
//!   first answer to a page with no answer known (not read before, or since an empty answer
//!   or a restart): the cache may have kept it from the detector's reads before a restart,
//!   or from another reader's. A changed answer: a cache other readers fill renders each page
//!   again as its copy expires, whenever that is, so the copy that follows the detector's
//!   last answer may be as old as the cache keeps pages when the detector reads it. Only a
//!   cache that gives its age (below) says a changed answer is fresh. The store keeps what
//!   page 1 has shown of the cache ([`PageCache`]), so a restarted detector knows it at once.
//!
//! A cache other readers fill may give page 1 back changed sooner than it ever gave it back
//! unchanged, for its copies are of any age when the detector reads them, and then page 1
//! never shows it so. But page 1 or 2 repeated where its own keys, or page 1's changes, say
//! many broadcasts started between the two reads ([`BusyRepeats`]) is a cache too:
//! [`CACHE_REPEATS`] such repeats show one for what an answer proves gone and for when an
//! equal answer was rendered (not for when to read a page again). The store keeps them too.
//!
//! Until then every answer counts from its read, as on a listing without a cache (a cache
//! that keeps pages for less than the head's interval is never shown, and its pages are at
//! most that old), but for one thing: an answer equal to the page's last one proves no
//! broadcast gone that a read answered since the first of them showed
//! ([`Rendered::alike_since`]). A cache makes such answers, and it takes a few minutes to show
//! itself; without one, the broadcast must have started and ended between the two reads with
//! the rest of the list balancing it out, and another page shows its end.
//!
//! A cache that says how long it kept an answer (the HTTP `Age` header, [`PageView::age`])
//! dates it without waiting for page 1: an answer that begins a run counts from its read less
//! its age and a second, shown cache or not. A cache shared with other readers may give a
//! page the detector reads for the first time from long before, and one that gives its age
//! says so.

use std::collections::{HashMap, VecDeque};

use super::{Millis, PageView, MINUTE, SECOND};

/// How many times page 1 must have come back unchanged before a cache is believed.
const CACHE_REPEATS: u32 = 4;

/// How many starts page 1 must say came between two equal answers, by its keys or by its
/// changes, for the second to count as a busy repeat ([`BusyRepeats`]): a list without a
/// cache would give it about once in e⁵ ≈ 150 such reads.
const BUSY_STARTS: f64 = 5.0;

/// The longest a cache shown only by busy repeats is taken to keep a page, as a part of the
/// frame: a thirtieth (a minute of a 30-minute frame). A list without a cache whose starts
/// come in bursts can give busy repeats in the lull after one; what it costs there (each Off
/// Air a changed answer proves comes up to this much later) stays well inside the grace.
const BUSY_KEEPS_PER_FRAME: Millis = 30;

/// How far back page 1's changes tell how busy the list is ([`BusyRepeats`]), as a part of
/// the frame: a third (10 minutes of a 30-minute frame).
const ARRIVALS_WINDOW_PER_FRAME: Millis = 3;

/// How long page 1's changes must span before they tell how busy the list is, as a part of
/// the frame: a thirtieth (a minute of a 30-minute frame).
const ARRIVALS_SPAN_PER_FRAME: Millis = 30;

/// Page 1 or 2 answered the same way again where the list surely moved between the two
/// reads: a cache that other readers fill. Such a cache gives page 1 from a copy of any age
/// up to its lifetime, so it may come back changed sooner than it ever came back unchanged,
/// and then [`PageCache::shown`] never holds. But a list as busy as page 1 says hardly
/// stands still between two reads, and every start moves page 2 as it moves page 1:
/// [`CACHE_REPEATS`] busy repeats of either show a cache too, for what an answer proves
/// gone. How busy the list is, the page's keys say ([`starts_expected`]), at once, where
/// they are fine enough; and so do the broadcasts page 1's changed answers showed above
/// the answer before over the last third of a frame ([`ARRIVALS_WINDOW_PER_FRAME`]),
/// whatever the keys (a copy the cache kept shows them late, but all the same); the higher
/// estimate counts. The busy repeats are counted in [`PageCache`], which the store keeps;
/// the changes are not, and a restarted detector gathers them again.
#[derive(Debug, Clone)]
struct BusyRepeats {
    /// The listing's frame: how busy a list is, and over how long, goes by its clock.
    frame: Millis,
    /// When page 1's answer changed, over the last third of a frame, and how many broadcasts
    /// each change showed that the answer before did not, above its first.
    arrivals: VecDeque<(Millis, u32)>,
}

impl BusyRepeats {
    /// Whether a repeat of page 1's or 2's answer `view`, `age` after the answer it repeats,
    /// is busy.
    fn busy(&self, view: &PageView, age: Millis) -> bool {
        starts_expected(view, age).max(self.arrivals_in(age)) >= BUSY_STARTS
    }

    /// Counts what page 1's answer `view`, answered at `at`, shows above `last`, the
    /// answer before it: broadcasts that started since (a broadcast that rises from page 2
    /// as others end comes in below).
    fn changed(&mut self, last: &PageView, view: &PageView, at: Millis) {
        let Some(top) = last.items.first() else {
            return;
        };
        let arrived = (view.items.iter())
            .take_while(|item| item.key >= top.key)
            .filter(|item| !last.items.iter().any(|old| old.id == item.id))
            .count() as u32;
        self.arrivals.push_back((at, arrived));
        let window = self.frame / ARRIVALS_WINDOW_PER_FRAME;
        while (self.arrivals.front()).is_some_and(|&(then, _)| then < at - window) {
            self.arrivals.pop_front();
        }
    }

    /// How many broadcasts page 1's changes say start in `interval`: those they showed
    /// over the time they span, once that is a thirtieth of a frame or more.
    fn arrivals_in(&self, interval: Millis) -> f64 {
        let (Some(&(first, _)), Some(&(last, _))) = (self.arrivals.front(), self.arrivals.back())
        else {
            return 0.0;
        };
        if last - first < self.frame / ARRIVALS_SPAN_PER_FRAME {
            return 0.0;
        }
        // The first change's broadcasts started before the span.
        let arrived: u32 = self.arrivals.iter().skip(1).map(|&(_, n)| n).sum();
        f64::from(arrived) * interval as f64 / (last - first) as f64
    }
}

/// How long a cache may keep a page, where page 1 came back unchanged `unchanged` after
/// the answer it repeated at the oldest: that, and an eighth more.
fn kept_for(unchanged: Millis) -> Millis {
    unchanged + unchanged / 8
}

/// How many starts the keys of `view` say come in `interval`: its distinct keys less one
/// over the time they span. The span is widened by the keys' resolution (whole minutes or
/// seconds, where they all are), and equal keys count once, so a listing whose keys are
/// coarse, or shared, says fewer.
fn starts_expected(view: &PageView, interval: Millis) -> f64 {
    let (Some(newest), Some(oldest)) = (view.items.first(), view.items.last()) else {
        return 0.0;
    };
    let keys = || view.items.iter().map(|item| item.key);
    let resolution = [MINUTE, SECOND]
        .into_iter()
        .find(|unit| keys().all(|key| key % unit == 0))
        .unwrap_or(1);
    let mut distinct = keys().collect::<Vec<_>>();
    distinct.dedup();
    let span = (newest.key - oldest.key).max(0) + resolution;
    (distinct.len() - 1) as f64 * interval as f64 / span as f64
}

/// What page 1's answers have shown of a cache ([`Renders`]), kept in the store with the
/// detector's memory ([`super::Memory::page_cache`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageCache {
    /// How many answers to page 1 repeated the last one.
    pub repeats: u32,
    /// The oldest page 1's answer has surely been when read again unchanged (from the answer
    /// to the first read of the run to the start of the read): under a cache's lifetime,
    /// where the listing has one.
    pub unchanged: Millis,
    /// The youngest page 1's answer may have been when read again changed (from the start of
    /// the first read of the run to the answer): past a cache's lifetime, where the listing
    /// has one. `Millis::MAX` until it has changed.
    pub changed: Millis,
    /// How many answers to page 1 or 2 were busy repeats of the last one ([`BusyRepeats`]).
    pub busy_repeats: u32,
    /// The oldest page 1's or 2's answer has been when read again in a busy repeat.
    pub busy_unchanged: Millis,
    /// Whether an answer has come with an age (HTTP `Age` over 0): the cache says how old
    /// its answers are, and an answer without one was rendered at its read.
    pub aged: bool,
}

impl Default for PageCache {
    fn default() -> PageCache {
        PageCache {
            repeats: 0,
            unchanged: 0,
            changed: Millis::MAX,
            busy_repeats: 0,
            busy_unchanged: 0,
            aged: false,
        }
    }
}

impl PageCache {
    /// Whether the listing has shown a cache: page 1 has come back unchanged
    /// [`CACHE_REPEATS`] times, and every time it came back changed it was older than every
    /// time it came back unchanged. A cache keeps a page for its lifetime and then lets it
    /// go; a list that stood still a while changes when a broadcast starts, at any age.
    fn shown(&self) -> bool {
        self.repeats >= CACHE_REPEATS && self.changed > self.unchanged
    }

    /// How long after it was first given an answer may still come from the cache: the
    /// oldest page 1 has come back unchanged, and an eighth more.
    fn keeps(&self) -> Millis {
        kept_for(self.unchanged)
    }

    /// How long the cache may keep a page, where busy repeats have shown one on a listing
    /// whose frame is `frame`.
    fn busy_keeps(&self, frame: Millis) -> Option<Millis> {
        (self.busy_repeats >= CACHE_REPEATS)
            .then(|| kept_for(self.busy_unchanged).min(frame / BUSY_KEEPS_PER_FRAME))
    }

    /// How long an answer that starts a run may have been kept, where the listing has shown
    /// a cache (on a listing whose frame is `frame`): by page 1's ages
    /// ([`PageCache::keeps`]), else by busy repeats. `None` until a cache has shown.
    pub fn kept(&self, frame: Millis) -> Option<Millis> {
        match self.shown() {
            true => Some(self.keeps()),
            false => self.busy_keeps(frame),
        }
    }
}

/// When a page's answer may have been rendered, as far as the reads tell
/// ([`Renders::rendered`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rendered {
    /// The earliest moment the answer may have been rendered: the start of its read (less
    /// the age a cache gave it, for an answer that begins a run), or, where the listing has
    /// shown a cache (by page 1's ages, or by [`BusyRepeats`]), the start of the first read
    /// of the run of equal answers to its page that it ends.
    pub after: Millis,
    /// The answer proves no broadcast gone that a read answered after this has shown: the
    /// start of the first read of the run of equal answers it ends, cache shown or not; where
    /// the listing has shown a cache (by page 1's ages, or by [`BusyRepeats`]), the cache's
    /// lifetime before the read that started the run, if that was the first answer to a page
    /// with no answer known (not read before, or since an empty answer or a restart), or a
    /// changed answer from a cache that gives no age.
    pub alike_since: Millis,
}

/// Each page's last answer, and since when it has been answered that way
/// ([`Renders::rendered`]); what page 1's answers show of a cache.
#[derive(Debug, Clone)]
pub struct Renders {
    last: HashMap<u32, LastAnswer>,
    cache: PageCache,
    busy: BusyRepeats,
}

#[derive(Debug, Clone)]
struct LastAnswer {
    view: PageView,
    /// When the first read of the run of answers equal to this one started.
    since: Millis,
    /// When that read was answered.
    answered_at: Millis,
    /// What the run's first answer proves nothing gone since ([`Rendered::alike_since`]).
    alike: Millis,
}

impl Renders {
    /// No answer known yet, of a listing whose frame is `frame`.
    pub fn new(frame: Millis) -> Renders {
        Renders {
            last: HashMap::new(),
            cache: PageCache::default(),
            busy: BusyRepeats {
                frame: frame.max(1),
                arrivals: VecDeque::new(),
            },
        }
    }

    /// When `view`, answered at `answered_at` to a read started at `requested_at`, may have
    /// been rendered. An empty page is no snapshot of anything and starts no run.
    pub fn rendered(
        &mut self,
        view: &PageView,
        requested_at: Millis,
        answered_at: Millis,
    ) -> Rendered {
        // A cache that says how long it kept the answer (HTTP `Age`, in whole seconds cut
        // down) dates it before the read at once: rendered no earlier than that, and a second
        // more, before the read began.
        let from = match view.age {
            0 => requested_at,
            age => requested_at - age - SECOND,
        };
        let at_read = Rendered {
            after: from,
            alike_since: from,
        };
        self.cache.aged |= view.age > 0;
        if view.items.is_empty() {
            self.last.remove(&view.page);
            return at_read;
        }
        let keeps = self.cache.kept(self.busy.frame);
        let last = self.last.get_mut(&view.page);
        let repeat = last
            .as_ref()
            .is_some_and(|last| last.view.same_answer(view));
        if let Some(last) = last.as_ref().filter(|_| view.page <= 2) {
            let age = requested_at - last.answered_at;
            let cache = &mut self.cache;
            // Page 2 moves with every start as page 1 does, and the head reads both: their
            // busy repeats show a cache twice as soon as page 1's alone.
            if repeat && self.busy.busy(view, age) {
                cache.busy_repeats += 1;
                cache.busy_unchanged = cache.busy_unchanged.max(age);
            }
            // Each page was rendered during its read: the two renders lay at least the first
            // bound apart, at most the second.
            if view.page == 1 {
                if repeat {
                    cache.repeats += 1;
                    cache.unchanged = cache.unchanged.max(age);
                } else {
                    cache.changed = cache.changed.min(answered_at - last.since);
                    self.busy.changed(&last.view, view, answered_at);
                }
            }
        }
        match last {
            // The run's first answer was dated when it came (by its `Age` too): the answer
            // repeats it and says no more.
            Some(last) if repeat => {
                last.since = last.since.min(requested_at);
                last.alike = last.alike.min(last.since);
                Rendered {
                    after: if keeps.is_some() {
                        last.since
                    } else {
                        requested_at
                    },
                    alike_since: last.alike,
                }
            }
            _ => {
                // A page this detector has not read may be one the cache kept from a read
                // of before its restart, or of another reader; and a cache other readers
                // fill may give a page it has read a copy they had rendered since.
                let alike_since = match keeps {
                    Some(keeps) if last.is_none() || !self.cache.aged => {
                        at_read.after.min(requested_at - keeps)
                    }
                    _ => at_read.after,
                };
                self.last.insert(
                    view.page,
                    LastAnswer {
                        view: view.clone(),
                        since: at_read.after,
                        answered_at,
                        alike: alike_since,
                    },
                );
                Rendered {
                    alike_since,
                    ..at_read
                }
            }
        }
    }

    /// What page 1's answers have shown of a cache.
    pub fn cache(&self) -> PageCache {
        self.cache
    }

    /// A restarted detector's renders: no page's answer known, the cache as shown before.
    pub fn restore(&mut self, cache: PageCache) {
        self.cache = cache;
    }

    /// When a read of `page` may next bring an answer other than its last one: where the
    /// listing has shown a cache, when the cache may let go of its last answer
    /// ([`PageCache::keeps`] after that answer was first given); else (or for a page not
    /// read) at once, `Millis::MIN`.
    pub fn fresh_at(&self, page: u32) -> Millis {
        match self.last.get(&page) {
            Some(last) if self.cache.shown() => last.since + self.cache.keeps(),
            _ => Millis::MIN,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::Listed;
    use std::sync::Arc;

    fn view(page: u32, total: u64, ids: &[&str]) -> PageView {
        let items = (ids.iter().enumerate())
            .map(|(i, id)| Listed {
                id: Arc::from(*id),
                key: 1_000 - i as Millis,
                title: Arc::from(""),
                link: Arc::from(""),
            })
            .collect();
        PageView {
            page,
            total: Some(total),
            items,
            age: 0,
        }
    }

    /// Page 1 read every 19 s behind a cache that keeps pages 40 s: two answers of three
    /// repeat the one before, 19 and 38 s after it was first given, and the third, 57 s
    /// after, has changed. Returns the time of the next read.
    fn cached_page_one(renders: &mut Renders, cycles: u32) -> Millis {
        let mut at = 1_000_000;
        for i in 0..cycles {
            let page = view(1, 40, &[&format!("lv{}", 200 + i)]);
            for age in [0, 19_000, 38_000] {
                renders.rendered(&page, at + age, at + age);
            }
            at += 57_000;
        }
        at
    }

    /// Until page 1 has shown a cache, an answer counts from its read, unchanged or not, but
    /// the run of equal answers it ends is known all the same. Then a page answered the same
    /// way again dates from the first of those answers; a changed answer, another page or an
    /// empty one starts afresh; and an answer that starts a run (a page's first, or one
    /// changed) may be as old as the cache keeps pages (38 s here, and an eighth more), for
    /// what it proves gone.
    #[test]
    fn once_a_cache_is_shown_an_equal_answer_dates_from_the_first_of_the_run() {
        let rendered = |after, alike_since| Rendered { after, alike_since };
        let mut renders = Renders::new(30 * MINUTE);
        let a = view(2, 40, &["lv3", "lv2"]);
        assert_eq!(renders.rendered(&a, 100, 100), rendered(100, 100));
        assert_eq!(renders.rendered(&a, 200, 200), rendered(200, 100));
        // Page 1 has come back unchanged twice, then three and four times: the cache shown.
        let at = cached_page_one(&mut renders, 1);
        let one = view(1, 40, &["lv9"]);
        assert_eq!(renders.rendered(&one, at, at), rendered(at, at));
        assert_eq!(renders.rendered(&one, at + 1, at + 1), rendered(at + 1, at));
        assert_eq!(renders.rendered(&one, at + 2, at + 2), rendered(at + 2, at));
        assert_eq!(renders.rendered(&one, at + 3, at + 3), rendered(at, at));
        assert_eq!(renders.rendered(&a, at + 3, at + 3), rendered(100, 100));
        let keeps = 38_000 + 38_000 / 8;
        let three = view(3, 40, &["lv1"]);
        assert_eq!(
            renders.rendered(&three, at + 4, at + 4),
            rendered(at + 4, at + 4 - keeps)
        );
        assert_eq!(renders.rendered(&a, at + 5, at + 5), rendered(100, 100));
        // A changed answer may be a copy another reader had the cache keep since the last.
        let b = view(2, 41, &["lv3", "lv2"]);
        assert_eq!(
            renders.rendered(&b, at + 6, at + 6),
            rendered(at + 6, at + 6 - keeps)
        );
        assert_eq!(
            renders.rendered(&b, at + 7, at + 7),
            rendered(at + 6, at + 6 - keeps)
        );
        let empty = view(2, 41, &[]);
        assert_eq!(
            renders.rendered(&empty, at + 8, at + 8),
            rendered(at + 8, at + 8)
        );
        assert_eq!(
            renders.rendered(&b, at + 9, at + 9),
            rendered(at + 9, at + 9 - keeps)
        );
        // Restarted, the detector knows no page's answer, and the cache still.
        let mut restarted = Renders::new(30 * MINUTE);
        restarted.restore(renders.cache());
        assert_eq!(
            restarted.rendered(&b, at + 10, at + 10),
            rendered(at + 10, at + 10 - keeps)
        );
        assert_eq!(restarted.fresh_at(2), at + 10 + keeps);
    }

    /// A cache that says how long it kept an answer (HTTP `Age`, whole seconds) dates it at
    /// once, before page 1 has shown anything: the answer counts from its read less its age
    /// and a second, and proves nothing gone that a read answered since showed. A repeat of
    /// it belongs to the run it began; an age of 0 is a fresh answer.
    #[test]
    fn an_answer_a_cache_gives_its_age_dates_from_before_its_read() {
        let rendered = |after, alike_since| Rendered { after, alike_since };
        let aged = |view: PageView, age| PageView { age, ..view };
        let mut renders = Renders::new(30 * MINUTE);
        let a = view(3, 40, &["lv5", "lv4"]);
        assert_eq!(
            renders.rendered(&aged(a.clone(), 12_000), 100_000, 100_400),
            rendered(87_000, 87_000)
        );
        assert_eq!(
            renders.rendered(&aged(a.clone(), 20_000), 108_000, 108_400),
            rendered(108_000, 87_000)
        );
        let b = view(3, 41, &["lv6", "lv5"]);
        assert_eq!(
            renders.rendered(&aged(b, 0), 130_000, 130_400),
            rendered(130_000, 130_000)
        );
        let empty = view(4, 41, &[]);
        assert_eq!(
            renders.rendered(&aged(empty, 5_000), 140_000, 140_400),
            rendered(134_000, 134_000)
        );
        // Once page 1 has shown the cache, a changed answer without an age is still fresh:
        // this cache gives the age of what it kept.
        let at = cached_page_one(&mut renders, 2);
        let c = view(3, 42, &["lv7", "lv6"]);
        assert_eq!(renders.rendered(&c, at, at), rendered(at, at));
    }

    /// Behind a cache a page read is fresh again the oldest page 1 came back unchanged, and
    /// an eighth more, after its answer was first given. A list that changes at every read
    /// shows no cache, nor one that stood still a while now and then, nor pages deeper in the
    /// list unchanged.
    #[test]
    fn page_one_shows_a_cache_and_how_long_it_keeps_a_page() {
        let mut renders = Renders::new(30 * MINUTE);
        let at = cached_page_one(&mut renders, 30);
        assert_eq!(renders.fresh_at(1), at - 57_000 + 38_000 + 38_000 / 8);
        renders.rendered(&view(2, 40, &["lv7"]), at, at);
        assert_eq!(renders.fresh_at(2), at + 38_000 + 38_000 / 8);
        assert_eq!(renders.fresh_at(9), Millis::MIN);

        let mut changing = Renders::new(30 * MINUTE);
        let deep = view(5, 40, &["lv3", "lv2"]);
        for at in (0..20).map(|i| i * 50_000) {
            changing.rendered(&deep, at, at);
        }
        for (i, at) in (0..20).zip((0..).step_by(19_000)) {
            changing.rendered(&view(1, 40, &[&format!("lv{}", 100 + i)]), at, at);
        }
        assert_eq!(changing.fresh_at(1), Millis::MIN);
        assert_eq!(changing.fresh_at(5), Millis::MIN);

        // A quiet list: page 1 changes after 19 s now and then, and stays 38 s at others.
        let mut quiet = Renders::new(30 * MINUTE);
        let mut at = 0;
        for i in 0..30 {
            let page = view(1, 40, &[&format!("lv{}", 300 + i)]);
            quiet.rendered(&page, at, at);
            if i % 2 == 0 {
                quiet.rendered(&page, at + 19_000, at + 19_000);
                quiet.rendered(&page, at + 38_000, at + 38_000);
            }
            at += 19_000 * (1 + 2 * (1 - i % 2));
        }
        assert_eq!(quiet.fresh_at(1), Millis::MIN);
    }

    /// Page 1 as a busy list shows it: 18 broadcasts whose keys lie `spacing` apart, the
    /// newest `serial`.
    fn page_one(serial: u32, spacing: Millis) -> PageView {
        let items = (0..18)
            .map(|i| Listed {
                id: Arc::from(format!("lv{}", serial - i)),
                key: 3_600_000 + Millis::from(serial - i) * spacing,
                title: Arc::from(""),
                link: Arc::from(""),
            })
            .collect();
        PageView {
            page: 1,
            total: Some(1_000),
            items,
            age: 0,
        }
    }

    /// Page 1 read every 15 s behind a cache other readers fill: each copy is given once or
    /// twice, and changes 15 s after the detector first read it as often as it repeats then,
    /// so [`PageCache::shown`] never holds. Where the keys lie a second apart (3,600 starts
    /// an hour), each repeat says 14 starts came between, and after four of them a changed
    /// answer to another page proves nothing gone that a read answered within the 15 s and
    /// an eighth before it; an equal answer dates from the first of its run. Where the keys
    /// lie four minutes apart, the same answers are a list that stood still. Page 2, which
    /// every start moves too, shows the cache the same way.
    #[test]
    fn a_busy_page_one_that_repeats_shows_a_cache_other_readers_fill() {
        let rendered = |after, alike_since| Rendered { after, alike_since };
        let cases = [(SECOND, Some(15_000 + 15_000 / 8)), (4 * MINUTE, None)];
        for ((spacing, keeps), page) in cases.into_iter().flat_map(|c| [(c, 1), (c, 2)]) {
            let mut renders = Renders::new(30 * MINUTE);
            let mut at = 1_000_000;
            for serial in 100..110 {
                for _ in 0..[1, 2][serial as usize % 2] {
                    let view = PageView {
                        page,
                        ..page_one(serial, spacing)
                    };
                    renders.rendered(&view, at, at);
                    at += 15_000;
                }
            }
            assert!(!renders.cache().shown());
            let a = view(3, 40, &["lv50", "lv49"]);
            let b = view(3, 40, &["lv51", "lv50"]);
            renders.rendered(&a, at, at);
            let since = keeps.map_or(at + 20_000, |keeps| at + 20_000 - keeps);
            assert_eq!(
                renders.rendered(&b, at + 20_000, at + 20_000),
                rendered(at + 20_000, since)
            );
            let after = keeps.map_or(at + 30_000, |_| at + 20_000);
            assert_eq!(
                renders.rendered(&b, at + 30_000, at + 30_000),
                rendered(after, since)
            );
        }
    }

    /// What a page 1 of 18 distinct keys says of the starts between two reads: the keys'
    /// resolution (whole minutes here) widens their span, and equal keys count once.
    #[test]
    fn page_one_keys_tell_how_many_starts_a_repeat_missed() {
        let minutes = page_one(100, MINUTE);
        assert_eq!(starts_expected(&minutes, 18 * MINUTE), 17.0);
        let mut shared = minutes.clone();
        let key = shared.items[1].key;
        for item in &mut shared.items[1..] {
            item.key = key;
        }
        assert_eq!(starts_expected(&shared, 2 * MINUTE), 1.0);
        assert_eq!(starts_expected(&view(1, 40, &[]), MINUTE), 0.0);
        // A cache shown by busy repeats alone is taken to keep a page a minute at most.
        let mut renders = Renders::new(30 * MINUTE);
        let one = page_one(100, SECOND);
        for i in 0..=CACHE_REPEATS {
            let at = i64::from(i) * 5 * MINUTE;
            renders.rendered(&one, at, at);
        }
        assert_eq!(renders.cache.busy_keeps(30 * MINUTE), Some(MINUTE));
    }

    /// A listing whose keys tell nothing (all equal on page 1: whole minutes, say) shows how
    /// busy it is by what page 1's changes bring: 9 broadcasts every 15 s is 0.6 a second,
    /// and a repeat 15 s after the answer before missed 9 of them; a broadcast every 15 s
    /// makes such repeats a list that stood still. The same listing 20 times faster (every
    /// duration and the frame divided by 20) shows the same. What the busy repeats showed
    /// outlives a restart ([`Renders::restore`]).
    #[test]
    fn page_one_changes_tell_how_busy_a_list_of_equal_keys_is() {
        for scale in [1, 20] {
            let (frame, interval) = (30 * MINUTE / scale, 15_000 / scale);
            for (step, busy) in [(9, true), (1, false)] {
                let mut renders = Renders::new(frame);
                let mut at = 1_000_000;
                let mut serial = 100;
                for i in 0..14 {
                    let one = page_one(serial, 0);
                    assert_eq!(starts_expected(&one, interval), 0.0);
                    renders.rendered(&one, at, at);
                    at += interval;
                    if i >= 5 && i % 2 == 0 {
                        renders.rendered(&one, at, at);
                        at += interval;
                    }
                    serial += step;
                }
                let context = format!("{step} a change, ×{scale}");
                assert_eq!(renders.cache.busy_keeps(frame).is_some(), busy, "{context}");
                let mut restarted = Renders::new(frame);
                restarted.restore(renders.cache());
                let keeps = restarted.cache.busy_keeps(frame);
                assert_eq!(keeps.is_some(), busy, "{context}");
            }
        }
    }
}
