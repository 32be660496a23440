//! The serials a round of the sweep looks for.
//!
//! Niconico's ids are serials handed out in the order of reservation (`lv…`), and a broadcast
//! appears in the listing once it starts. So every serial between two that were seen, and
//! never seen itself, is a broadcast not started yet or started and not read yet: the only
//! ones a round of the sweep has to look for. Its key lies between the keys of the two seen
//! serials around it (a gap), so its place in the list is known to a page, and one page read
//! whose first item lists before the gap and whose last lists after it proves that it is not
//! on air ([`Gap::proven_by`]). A round then reads the pages of the gaps in its region, a few,
//! instead of every page of the region.
//!
//! A gap proven not on air by a page read when its newest reservation was already older than
//! the tolerance is settled ([`Serials::settle`]): its broadcasts, if they start at all, start
//! beyond the tolerance, which the rules allow to be missed, so no round looks for it again.
//! Its rounds left to the younger gaps, the sweep comes back to them sooner.
//!
//! What it takes on trust, it checks: every id has the same prefix before its digits, and no
//! larger serial has an older key. One page that shows otherwise turns the serials off for
//! good, and rounds read every page again. A listing whose serials have holes (numbers never
//! listed: another channel's, a reservation cancelled) pays a page a round for each hole until
//! a read proves it settled or its key leaves the region: more reads than it needs, never
//! fewer. Where so many go unseen that aimed rounds would cost more than reading every page
//! ([`Holes`]), the rounds read every page, until the share unseen falls again.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::ops::{Range, RangeBounds};

use crate::listing::second::KEY_RESOLUTION;
use crate::listing::ties::split_serial;
use crate::listing::{Listed, Millis};

/// The serial an id ends in, whatever its prefix.
pub(super) fn serial_of(id: &str) -> Option<u64> {
    split_serial(id).and_then(|(_, digits)| digits.parse().ok())
}

/// A key and a serial: where a broadcast sorts in the list.
pub(super) type Place = (Millis, u64);

/// Serials not seen between two seen ones: `older` (the smaller serial) and `newer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Gap {
    pub(super) older: Place,
    pub(super) newer: Place,
}

impl Gap {
    /// Whether a page whose first item sits at `first` and last at `last` lists every place a
    /// serial of the gap can take, so that not listing one proves it is not on air. The gap's
    /// serials have keys from `older`'s to `newer`'s. A first item with a newer key lists
    /// before all of them, and so does one with the newer key itself if the listing's order
    /// among equals (`ties`, as [`crate::listing::TieOrder::trusted`] gives it: `Greater` where
    /// larger serials come first) puts it before every serial of the gap; the same for the last
    /// item at the other end. Without a trusted order, equal keys prove nothing.
    pub(super) fn proven_by(&self, first: Place, last: Place, ties: Option<Ordering>) -> bool {
        self.below(first, ties) && self.above(last, ties)
    }

    /// Whether the gap lies below an item at `first`: it lists before every place a serial of
    /// the gap can take.
    pub(super) fn below(&self, first: Place, ties: Option<Ordering>) -> bool {
        let newer = self.newer;
        first.0 > newer.0
            || (first.0 == newer.0
                && match ties {
                    // Larger first: before every serial under the newer one's.
                    Some(Ordering::Greater) => first.1 >= newer.1,
                    // Smaller first: before every serial over the older one's.
                    Some(Ordering::Less) => first.1 <= self.older.1,
                    _ => false,
                })
    }

    /// Whether the gap lies above an item at `last`: it lists after every place a serial of
    /// the gap can take.
    fn above(&self, last: Place, ties: Option<Ordering>) -> bool {
        let older = self.older;
        last.0 < older.0
            || (last.0 == older.0
                && match ties {
                    Some(Ordering::Greater) => last.1 <= older.1,
                    Some(Ordering::Less) => last.1 >= self.newer.1,
                    _ => false,
                })
    }
}

/// The serials seen lately, with their keys.
#[derive(Debug, Clone, Default)]
pub(super) struct Serials {
    seen: BTreeMap<u64, Millis>,
    /// The text before the digits of every id so far.
    prefix: Option<Box<str>>,
    /// Turned off for good: an id without a serial, two prefixes, or a larger serial with an
    /// older key.
    off: bool,
    /// Serials learnt since the detector started (its book's included).
    learnt: u64,
    /// The settled runs of serials not seen, first to last ([`Serials::settle`]).
    settled: BTreeMap<u64, u64>,
}

/// Serials learnt before rounds look for the gaps, in pages: a detector that has seen less
/// than this of the list (just started, its first reading under way) would take every serial
/// it has not read yet for a gap. A resumed one learns its book's at once.
const LEARN_PAGES: u64 = 10;

/// How many of a listing's serials go unseen: of the serials between the smallest and the
/// largest seen with keys one to three tolerances old, where nearly every broadcast that
/// starts within the tolerance has been seen, those never seen. Each round counts the keys
/// that have come into that span since the round before ([`Holes::sample`]), so every serial
/// counts once. The unseen are broadcasts not started yet, started and missed, and holes:
/// numbers never listed (another channel's, a reservation cancelled).
///
/// A round aimed at the gaps reads the pages of the gaps. Where numbers go unlisted, nearly
/// every page has one, and one at the boundary between two pages costs tries on both until
/// the list moves it inside one: rounds aimed there were dearer than rounds that read every
/// page, and came less often.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Holes {
    count: UnseenSerials,
    /// The newest key counted.
    counted_to: Option<Millis>,
}

/// What [`Holes`] has counted: the serials, and of them those never seen. A restarted
/// detector goes on with it ([`crate::listing::Memory::unseen_serials`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UnseenSerials {
    /// Serials counted.
    pub counted: u64,
    /// Of them, those never seen.
    pub unseen: u64,
}

/// The share of serials unseen above which rounds read every page ([`Holes`]). Once 250 are
/// counted, the share stays under 0.027 on `peak2009` (the highest of seeds 1–32 at either
/// scale), under 0.034 with 10 % of reads failed and 5 % empty (`made-up/faults.toml`) and
/// under 0.048 on `scenarios/short-lived.toml`, whose later starts stay unseen longer; with
/// 2 % of the numbers never listed (the simulator's `unlisted_numbers`) it reaches 0.044 once
/// 500 are counted, with 5 % about 0.07. From 5 to 10 % rounds aimed and rounds that read
/// every page missed about as many starts within the tolerance; from 20 % aimed rounds
/// missed several times as many (the listings log, "Serials with holes").
const HOLES_SHARE: f64 = 0.06;

/// Serials [`Holes`] counts before it says whether there are many: about seven minutes of
/// `peak2009`'s evening. Until then rounds aim at the gaps, and on a listing with holes those
/// are the rounds that miss starts: at 500, `scenarios/holes.toml` missed 38 starts within
/// the tolerance on seeds 1–256 at ×20 and, restarted every 20 minutes, 20 on seeds 1–64;
/// at 250, 32 and 9 (the listings log, "Serials with holes, counted sooner and kept").
const HOLES_COUNTED: u64 = 250;

/// Serials [`Holes`] counts before it halves its counts, so that it follows a listing that
/// changes: about two hours of `peak2009`'s evening.
const HOLES_MEMORY: u64 = 4_000;

impl Holes {
    /// Starts the count at `at`, the detector's first read. Only keys from then on count: the
    /// serials it learns from its book or its first reading are those on air, and the
    /// broadcasts reserved before it started (or while it was down) that ended before it
    /// read them would count as holes.
    pub(super) fn start(&mut self, at: Millis) {
        self.counted_to = Some(at);
    }

    /// Counts the serials with keys in `keys` not counted yet (the span from the smallest to
    /// the largest seen there, and those of it never seen), once the count has started
    /// ([`Holes::start`]).
    pub(super) fn sample(&mut self, serials: &Serials, keys: Range<Millis>) {
        let Some(counted_to) = self.counted_to else {
            return;
        };
        let from = counted_to.max(keys.start);
        let mut seen = (serials.seen.iter()).filter(|&(_, key)| (from..keys.end).contains(key));
        let Some((&low, _)) = seen.next() else {
            return;
        };
        let (count, high) = seen.fold((1, low), |(count, _), (&serial, _)| (count + 1, serial));
        let span = high - low + 1;
        let total = &mut self.count;
        total.counted += span;
        total.unseen += span - count;
        self.counted_to = Some(keys.end);
        if total.counted > HOLES_MEMORY {
            total.counted /= 2;
            total.unseen /= 2;
        }
    }

    /// Whether so many serials go unseen that rounds read every page.
    pub(super) fn many(&self) -> bool {
        let UnseenSerials { counted, unseen } = self.count;
        counted >= HOLES_COUNTED && unseen as f64 >= HOLES_SHARE * counted as f64
    }

    /// What has been counted so far.
    pub(super) fn count(&self) -> UnseenSerials {
        self.count
    }

    /// Goes on with what a detector had counted before a restart. The count itself starts
    /// again at the first read ([`Holes::start`]).
    pub(super) fn restore(&mut self, count: UnseenSerials) {
        self.count = count;
    }
}

impl Serials {
    /// Learns the serials and keys of a page's items.
    pub(super) fn observe(&mut self, items: &[Listed]) {
        if self.off {
            return;
        }
        for item in items {
            let Some(place) = self.place(item) else {
                self.turn_off();
                return;
            };
            let (key, serial) = place;
            if self.seen.insert(serial, key).is_none() {
                self.learnt += 1;
            }
            let older = self.seen.range(..serial).next_back();
            let newer = self.seen.range(serial + 1..).next();
            if older.is_some_and(|(_, &k)| k > key) || newer.is_some_and(|(_, &k)| k < key) {
                self.turn_off();
                return;
            }
        }
    }

    /// Where `item` sorts, if its id is a serial with the prefix the others have.
    pub(super) fn place(&mut self, item: &Listed) -> Option<Place> {
        let (prefix, digits) = split_serial(&item.id)?;
        let serial = digits.parse().ok()?;
        match &self.prefix {
            Some(known) if **known != *prefix => return None,
            Some(_) => {}
            None => self.prefix = Some(prefix.into()),
        }
        Some((item.key, serial))
    }

    fn turn_off(&mut self) {
        self.off = true;
        self.seen = BTreeMap::new();
    }

    /// Forgets the serials with keys older than `cutoff`, and the settled runs below them.
    pub(super) fn forget_before(&mut self, cutoff: Millis) {
        self.seen.retain(|_, key| *key >= cutoff);
        let oldest = self.seen.keys().next().copied().unwrap_or(u64::MAX);
        self.settled.retain(|_, last| *last > oldest);
    }

    /// Settles the gaps that a page of `items` proves not on air ([`Gap::proven_by`], with the
    /// order `ties` trusted among equal keys) and whose newer key is at least a second older
    /// than `reserved_before` (the key shows a reservation's second): the read's start less
    /// the tolerance. Not on air then, none of their broadcasts can start within the tolerance
    /// of its reservation, and [`Serials::gaps`] leaves them out from now on; a gap that
    /// splits (a serial in it seen) leaves its parts settled.
    ///
    /// Call it after [`Serials::observe`] has taken the same items.
    pub(super) fn settle(
        &mut self,
        items: &[Listed],
        ties: Option<Ordering>,
        reserved_before: Millis,
    ) {
        if self.off {
            return;
        }
        let places: Vec<Place> = items.iter().filter_map(|item| self.place(item)).collect();
        let (Some(&first), Some(&last)) = (places.first(), places.last()) else {
            return;
        };
        // Among equal keys the page may list smaller serials first: every serial it shows
        // lies between its smallest and its largest.
        let serials = || places.iter().map(|&(_, serial)| serial);
        let (Some(low), Some(high)) = (serials().min(), serials().max()) else {
            return;
        };
        let proven: Vec<Gap> = (self.gaps_among(low..=high))
            .filter(|gap| {
                gap.newer.0 + KEY_RESOLUTION <= reserved_before
                    && gap.proven_by(first, last, ties)
                    && !self.is_settled(gap)
            })
            .collect();
        for gap in proven {
            self.settled.insert(gap.older.1 + 1, gap.newer.1 - 1);
        }
    }

    /// Whether every serial of `gap` lies in a settled run. Runs never overlap: a gap only
    /// shrinks, so a gap is either within a settled run or apart from every one, and a run is
    /// settled only when no run holds it yet.
    fn is_settled(&self, gap: &Gap) -> bool {
        (self.settled.range(..=gap.older.1 + 1).next_back())
            .is_some_and(|(_, &last)| last + 1 >= gap.newer.1)
    }

    /// Whether rounds look for the gaps: the serials are on and a listing of `per_page` items
    /// a page has shown enough of them.
    pub(super) fn on(&self, per_page: u32) -> bool {
        !self.off && self.learnt >= LEARN_PAGES * u64::from(per_page.max(1))
    }

    /// The largest serial kept.
    pub(super) fn newest(&self) -> Option<u64> {
        self.seen.last_key_value().map(|(&serial, _)| serial)
    }

    /// The key of the oldest serial kept.
    pub(super) fn oldest(&self) -> Option<Millis> {
        self.seen.first_key_value().map(|(_, &key)| key)
    }

    /// The gaps whose newer key is `low` or later and that are not settled, oldest first.
    pub(super) fn gaps(&self, low: Millis) -> Vec<Gap> {
        self.gaps_among(..)
            .filter(|gap| gap.newer.0 >= low && !self.is_settled(gap))
            .collect()
    }

    /// The gaps between the serials kept in `serials`, oldest first, settled or not.
    fn gaps_among(&self, serials: impl RangeBounds<u64>) -> impl Iterator<Item = Gap> + '_ {
        let kept = (self.seen.range(serials)).map(|(&serial, &key)| (key, serial));
        (kept.clone().zip(kept.skip(1)))
            .map(|(older, newer)| Gap { older, newer })
            .filter(|gap| gap.newer.1 > gap.older.1 + 1)
    }
}

/// A round aimed at the gaps: the pages it read and the reads it aimed at each gap.
#[derive(Debug, Clone, Default)]
pub(super) struct AimedRound {
    /// Each page read in the round, with where its first and last items sort and when it was
    /// read, in the order read.
    read: Vec<(u32, Place, Place, Millis)>,
    /// The chains of the round's reads, by read: a read's link towards the first read of its
    /// chain (itself for that one). Two reads are on one chain where they list a serial in
    /// common, or where one read the page after the other's right after it and the keys of
    /// the two pages meet ([`AimedRound::proven`]).
    chained_to: Vec<usize>,
    /// A read that listed each serial the round has read.
    listed_by: HashMap<u64, usize>,
    /// The reads aimed at each gap in the round that came back with items.
    tries: Vec<(Gap, u32)>,
    /// The gaps the read under way is aimed at, tried once it comes back with items.
    pending: Vec<Gap>,
    /// The most reads the round makes.
    pub(super) cap: u32,
    /// The largest serial seen when the round started: the gaps above it opened since (a
    /// serial not seen was above every serial seen then, at the top of the list, and started
    /// after the round did, if it started), and the next round's region holds them. `None`
    /// between rounds: every gap.
    top: Option<u64>,
}

/// Reads a round aims at one gap before it leaves that gap to the next round. Near the top of
/// the list, where it moves a position a second (a dozen at ×20), a gap can straddle the
/// boundary between two pages at each read.
pub(super) const TRIES: u32 = 3;

impl AimedRound {
    /// Starts a round of at most `cap` reads, for the gaps up to serial `top`; `None` ends
    /// it.
    pub(super) fn start(&mut self, cap: u32, top: Option<u64>) {
        self.read.clear();
        self.chained_to.clear();
        self.listed_by.clear();
        self.tries.clear();
        self.pending.clear();
        self.cap = cap;
        self.top = top;
    }

    /// Whether `gap` is the round's to prove: it was open when the round started.
    pub(super) fn holds(&self, gap: &Gap) -> bool {
        self.top.is_none_or(|top| gap.newer.1 <= top)
    }

    /// Takes a page the round read at `at`, its items' `places` in the order listed: a try for
    /// each gap the read was aimed at.
    pub(super) fn read(&mut self, page: u32, places: &[Place], at: Millis) {
        let (Some(&first), Some(&last)) = (places.first(), places.last()) else {
            return;
        };
        let index = self.read.len();
        let walked_down = (self.read.last())
            .is_some_and(|&(above, _, end, _)| above + 1 == page && first.0 >= end.0);
        self.read.push((page, first, last, at));
        self.chained_to.push(index);
        if walked_down {
            self.chain(index, index - 1);
        }
        for &(_, serial) in places {
            if let Some(other) = self.listed_by.insert(serial, index) {
                self.chain(index, other);
            }
        }
        for gap in std::mem::take(&mut self.pending) {
            match self.tries.iter_mut().find(|(tried, _)| *tried == gap) {
                Some((_, tries)) => *tries += 1,
                None => self.tries.push((gap, 1)),
            }
        }
    }

    /// Reads the round made.
    pub(super) fn reads(&self) -> u32 {
        self.read.len() as u32
    }

    /// The first read of the chain of read `index`.
    fn chain_of(&self, mut index: usize) -> usize {
        while self.chained_to[index] != index {
            index = self.chained_to[index];
        }
        index
    }

    /// Puts reads `a` and `b` on one chain.
    fn chain(&mut self, a: usize, b: usize) {
        let (a, b) = (self.chain_of(a), self.chain_of(b));
        self.chained_to[a.max(b)] = a.min(b);
    }

    /// Whether the round's reads prove `gap`, with `ties` the order trusted among equal keys:
    /// a page that does ([`Gap::proven_by`]), or, with `chains` (where the listing's order is
    /// not its serials' order: see `FerretPager::chains_prove`), a chain of them: a page
    /// whose first item lists before every place of the gap and one whose last lists after
    /// every place of it, linked by pages that each list a serial in common with the one
    /// before, or that read the page after it right after it with keys that meet.
    ///
    /// Each page lists a stretch of the list as it was when the page was rendered, and two
    /// broadcasts on air through both renders are listed in the same order by both. So a
    /// broadcast on air through the chain's reads, and listed by none of them, lies below each
    /// page in turn from the first (whose first item lists before it), the serial that page
    /// shares with the next included, and so below the last page too: it cannot be in the gap.
    /// Two pages read one after the other down the list share no serial where the list stood
    /// still between the reads, and are taken as a walk down takes them
    /// ([`crate::listing::walk`]): where the list moved up between them, a broadcast at the
    /// boundary may have slipped past both, and a later round finds it.
    ///
    /// Where no order among equals is trusted, one page of 18 items proves only a gap whose
    /// keys' broadcasts all fit inside it; run time-compressed, where about twelve share each
    /// second's key, a gap whose serials span two keys no page proves at all. A round spent the
    /// gap's tries on the pages around it, and at ×20 such a listing (`equals_in_start_order`,
    /// `peak2009` otherwise) missed 46 starts within the tolerance over seeds 1–16, most of them
    /// on air their whole frame unseen; 17 with the chains of shared serials alone, and 3 with
    /// both kinds. Where equals are trusted to come larger serial first, a shared serial
    /// proves nothing a page does not (it lists before or after every place of the gap), and
    /// pages read in turn are left out, as they were before the chains. Where they are trusted
    /// to come smaller serial first, a gap whose keys differ has the same trouble as where no
    /// order is trusted, and the chains prove it. They are left out while the pages have shown
    /// one order only, not yet enough times to trust it: chains then took a real-time
    /// `peak2009`, whose order is trusted about 20 minutes in, on other reads from its first
    /// round, and two worlds of 1,024 missed a start that had missed none.
    pub(super) fn proven(&self, gap: &Gap, ties: Option<Ordering>, chains: bool) -> bool {
        if !chains {
            return (self.read.iter()).any(|&(_, first, last, _)| gap.proven_by(first, last, ties));
        }
        let tops: Vec<usize> = (self.read.iter().enumerate())
            .filter(|(_, &(_, first, ..))| gap.below(first, ties))
            .map(|(index, _)| self.chain_of(index))
            .collect();
        (self.read.iter().enumerate()).any(|(index, &(_, _, last, _))| {
            gap.above(last, ties) && tops.contains(&self.chain_of(index))
        })
    }

    /// Whether the round may still aim a read at `gap`.
    pub(super) fn open(&self, gap: &Gap) -> bool {
        self.tries_at(gap) < TRIES
    }

    fn tries_at(&self, gap: &Gap) -> u32 {
        (self.tries.iter())
            .find(|(aimed, _)| aimed == gap)
            .map_or(0, |&(_, tries)| tries)
    }

    /// Notes the read under way, aimed at `gaps`. It counts as a try of each only once it
    /// comes back with items ([`AimedRound::read`]): a read that failed, or a page that came
    /// back empty, showed nothing of the gaps. Counted, they spent the gaps' tries on a listing
    /// that fails a read in ten (`scenarios/made-up/faults.toml`).
    pub(super) fn aimed(&mut self, gaps: Vec<Gap>) {
        self.pending = gaps;
    }

    /// The page to read for `gap` at `now`, starting from `predicted` (within `2..=last`):
    /// while the round's latest read of that page showed the gap below it, the page after;
    /// above it, the page before. Where two pages' reads point at each other (the list moved
    /// between them, and the gap with it), the later read decides.
    ///
    /// Starts push the list down, and ends pull up only what lies below them, so a gap drifts
    /// down: a read that showed it below a page says so for good, one that showed it above
    /// only for `settles` (about the time the list takes to move half a page). Taken at its
    /// word for longer, a read of page 3 that had shown the gap above sent a read to page 2
    /// 1.6 s later, at ×20, when the list had carried the gap down to page 3.
    pub(super) fn page_for(&self, gap: &Gap, predicted: u32, aim: Aim) -> u32 {
        let Aim {
            last,
            ties,
            now,
            settles,
        } = aim;
        let last = last.max(2);
        // The latest read of `page` (its place among the round's reads), and where it showed
        // the gap: the page after, before, or this one.
        let pointer = |page: u32| {
            let (index, &(_, first, end, at)) = (self.read.iter().enumerate())
                .rev()
                .find(|(_, &(p, ..))| p == page)?;
            let to = if !gap.above(end, ties) {
                page + 1
            } else if !gap.below(first, ties) && now - at <= settles {
                page - 1
            } else {
                page
            };
            Some((index, to.clamp(2, last)))
        };
        let mut page = predicted.clamp(2, last);
        for _ in 0..last {
            let Some((index, next)) = pointer(page).filter(|&(_, next)| next != page) else {
                break;
            };
            if let Some((next_index, _)) = pointer(next).filter(|&(_, back)| back == page) {
                if index > next_index {
                    page = next;
                }
                break;
            }
            page = next;
        }
        page
    }
}

/// What a read aimed at a gap goes by ([`AimedRound::page_for`]): the region's last page, the
/// order trusted among equal keys, the time, and how long a read that showed a gap above its
/// page is taken at its word.
#[derive(Debug, Clone, Copy)]
pub(super) struct Aim {
    pub(super) last: u32,
    pub(super) ties: Option<Ordering>,
    pub(super) now: Millis,
    pub(super) settles: Millis,
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::listing::listed as item;

    /// A page newest first: `(serial, key)` pairs.
    fn page(items: &[(u64, Millis)]) -> Vec<Listed> {
        items
            .iter()
            .map(|&(serial, key)| item(serial, key))
            .collect()
    }

    fn learnt(items: &[(u64, Millis)]) -> Serials {
        let mut serials = Serials::default();
        serials.observe(&page(items));
        serials
    }

    #[test]
    fn the_serials_not_seen_between_two_seen_ones_are_gaps() {
        let serials = learnt(&[(110, 50), (109, 48), (106, 40), (105, 40), (101, 30)]);
        let gaps = serials.gaps(Millis::MIN);
        assert_eq!(
            gaps,
            vec![
                Gap {
                    older: (30, 101),
                    newer: (40, 105)
                },
                Gap {
                    older: (40, 106),
                    newer: (48, 109)
                },
            ]
        );
        // Only the gaps reaching `low`.
        assert_eq!(serials.gaps(41), gaps[1..].to_vec());
        // Seen, a serial closes its gap.
        let mut serials = serials;
        serials.observe(&page(&[(108, 45), (107, 44)]));
        assert_eq!(serials.gaps(41), Vec::new());
    }

    #[test]
    fn ids_that_are_not_ordered_serials_turn_the_serials_off_for_good() {
        // A larger serial with an older key.
        let mut serials = learnt(&[(110, 50), (109, 51)]);
        assert!(serials.off);
        serials.observe(&page(&[(120, 60), (118, 59)]));
        assert!(serials.gaps(Millis::MIN).is_empty());
        // Two prefixes.
        let mut serials = learnt(&[(110, 50)]);
        serials.observe(&[Listed {
            id: Arc::from("co105"),
            ..item(105, 40)
        }]);
        assert!(serials.off);
        // An id without digits.
        let mut serials = learnt(&[(110, 50)]);
        serials.observe(&[Listed {
            id: Arc::from("https://live.example/watch/abc"),
            ..item(1, 40)
        }]);
        assert!(serials.off);
        // Equal keys in either order of serials are no contradiction.
        let serials = learnt(&[(110, 50), (111, 50), (109, 49)]);
        assert!(!serials.off);
    }

    #[test]
    fn rounds_look_for_gaps_once_ten_pages_of_serials_were_seen() {
        let mut serials = Serials::default();
        let items: Vec<(u64, Millis)> = (0..179)
            .map(|i| (1_000 - i, 10_000 - i as Millis))
            .collect();
        serials.observe(&page(&items));
        assert!(!serials.on(18));
        serials.observe(&page(&[(800, 9_000)]));
        assert!(serials.on(18));
        serials.forget_before(9_950);
        assert_eq!(serials.seen.len(), 51);
        assert!(serials.on(18), "what was learnt counts, not what is kept");
    }

    #[test]
    fn a_gap_proven_not_on_air_past_the_tolerance_is_settled() {
        let items = [(110, 50_000), (106, 40_000), (101, 30_000)];
        let younger = Gap {
            older: (40_000, 106),
            newer: (50_000, 110),
        };
        let older = Gap {
            older: (30_000, 101),
            newer: (40_000, 106),
        };
        let ties = Some(Ordering::Greater);
        let mut serials = learnt(&items);
        // The older gap's newer key, 40 s, may stand for a reservation made at 40.999 s: a
        // read started a tolerance after 40 s settles neither gap, one a tolerance after 41 s
        // the older.
        serials.settle(&page(&items), ties, 40_000);
        assert_eq!(serials.gaps(Millis::MIN), vec![older, younger]);
        serials.settle(&page(&items), ties, 41_000);
        assert_eq!(serials.gaps(Millis::MIN), vec![younger]);
        // A page settles only the gaps it proves: this one lists around the younger alone.
        let mut other = learnt(&items);
        other.settle(&page(&items[..2]), ties, 60_000);
        assert_eq!(other.gaps(Millis::MIN), vec![older]);
        // A serial of a settled gap seen leaves its parts settled.
        serials.observe(&page(&[(104, 35_000)]));
        assert_eq!(serials.gaps(Millis::MIN), vec![younger]);
        // The run goes with the serials around it.
        serials.forget_before(45_000);
        assert!(serials.settled.is_empty());
    }

    #[test]
    fn a_page_proves_a_gap_only_where_it_lists_every_place_of_it() {
        let gap = Gap {
            older: (40, 105),
            newer: (48, 109),
        };
        let larger_first = Some(Ordering::Greater);
        let smaller_first = Some(Ordering::Less);
        // Keys strictly around the gap: proven in any order.
        for ties in [larger_first, smaller_first, None] {
            assert!(gap.proven_by((49, 120), (39, 90), ties));
            assert!(
                !gap.proven_by((47, 108), (39, 90), ties),
                "starts inside the gap"
            );
            assert!(
                !gap.proven_by((49, 120), (41, 106), ties),
                "ends inside the gap"
            );
        }
        // The first item at the newer key: larger serials first, serial 109 lists before
        // 106–108 with key 48; smaller first, only a serial up to 105 lists before them.
        assert!(gap.proven_by((48, 109), (39, 90), larger_first));
        assert!(!gap.proven_by((48, 107), (39, 90), larger_first));
        assert!(!gap.proven_by((48, 109), (39, 90), smaller_first));
        assert!(gap.proven_by((48, 105), (39, 90), smaller_first));
        assert!(!gap.proven_by((48, 109), (39, 90), None));
        // The last item at the older key, the other way round.
        assert!(gap.proven_by((49, 120), (40, 105), larger_first));
        assert!(!gap.proven_by((49, 120), (40, 107), larger_first));
        assert!(gap.proven_by((49, 120), (40, 109), smaller_first));
        assert!(!gap.proven_by((49, 120), (40, 105), smaller_first));
        assert!(!gap.proven_by((49, 120), (40, 105), None));
    }

    #[test]
    fn a_chain_of_pages_proves_a_gap_none_of_them_does() {
        // Serials 105 (key 40) and 109 (key 41) seen, 106–108 not. Equal keys in no order the
        // round trusts: no page proves the gap unless it lists every broadcast of keys 40 and
        // 41 with an item above and one below.
        let gap = Gap {
            older: (40, 105),
            newer: (41, 109),
        };
        let upper = [(42, 120), (41, 112), (41, 109), (40, 104)];
        let lower = [(41, 111), (40, 104), (40, 102), (39, 90)];
        let mut round = AimedRound::default();
        round.start(10, None);
        round.read(4, &upper, 100);
        assert!(!round.proven(&gap, None, true));
        // A page far below, read next, that shares nothing with it proves nothing: the list
        // may have moved a broadcast of the gap past both.
        round.read(6, &[(40, 101), (39, 95), (39, 90)], 120);
        assert!(!round.proven(&gap, None, true));
        // One that shares serial 104 with it: the two list everything from key 42 to key 39.
        round.read(5, &lower, 140);
        assert!(round.proven(&gap, None, true));
        // The chain holds through a page between them, in any order read.
        let mut round = AimedRound::default();
        round.start(10, None);
        round.read(5, &[(40, 102), (39, 90)], 100);
        round.read(4, &[(42, 120), (41, 111)], 110);
        assert!(!round.proven(&gap, None, true));
        round.read(4, &[(41, 111), (40, 102)], 120);
        assert!(round.proven(&gap, None, true));
        // A chain whose first page starts inside the gap's keys proves nothing.
        let mut round = AimedRound::default();
        round.start(10, None);
        round.read(4, &[(41, 112), (40, 104)], 100);
        round.read(5, &lower, 110);
        assert!(!round.proven(&gap, None, true));
        // A new round forgets the chains.
        round.start(10, None);
        round.read(5, &lower, 120);
        assert!(!round.proven(&gap, None, true));
    }

    #[test]
    fn pages_read_in_turn_down_the_list_chain_where_their_keys_meet() {
        let gap = Gap {
            older: (40, 105),
            newer: (41, 109),
        };
        let upper = [(42, 120), (41, 112), (41, 109)];
        let lower = [(41, 111), (40, 104), (39, 90)];
        let proven = |reads: &[(u32, &[Place])]| {
            let mut round = AimedRound::default();
            round.start(10, None);
            for (at, &(page, places)) in (0..).zip(reads) {
                round.read(page, places, at);
            }
            round.proven(&gap, None, true)
        };
        // Page 5 read right after page 4, their keys meeting at 41: the walk's two pages.
        assert!(proven(&[(4, &upper), (5, &lower)]));
        // Read up the list instead, where starts above push it down between the reads.
        assert!(!proven(&[(5, &lower), (4, &upper)]));
        // Another read between them.
        assert!(!proven(&[(4, &upper), (9, &[(30, 70)]), (5, &lower)]));
        // Not the next page.
        assert!(!proven(&[(4, &upper), (6, &lower)]));
        // Keys that do not meet: the list moved up, and whatever was at key 40.5 passed both.
        let moved = [(40, 103), (39, 90)];
        assert!(!proven(&[(4, &upper), (5, &moved)]));
        // Without the chains (where `FerretPager::chains_prove` leaves them out), only one
        // page proves a gap, as before.
        let mut round = AimedRound::default();
        round.start(10, None);
        round.read(4, &upper, 0);
        round.read(5, &lower, 1);
        assert!(!round.proven(&gap, Some(Ordering::Less), false));
        assert!(!round.proven(&gap, None, false));
        assert!(round.proven(&gap, None, true));
    }

    #[test]
    fn a_chain_proves_a_gap_across_keys_where_equals_come_smaller_serial_first() {
        // Serials 105 (key 40) and 109 (key 41) seen, 106–108 not: smaller first, those of
        // key 41 list right before 109, and those of key 40 right after 105.
        let gap = Gap {
            older: (40, 105),
            newer: (41, 109),
        };
        let smaller_first = Some(Ordering::Less);
        let upper = [(42, 119), (42, 120), (41, 109), (41, 110)];
        let lower = [(41, 110), (41, 111), (40, 104), (40, 105), (39, 90)];
        // Neither page lists every place: serial 110 of key 41 lists after the gap's serials
        // of that key and before those of key 40.
        for page in [&upper[..], &lower[..]] {
            assert!(!gap.proven_by(page[0], page[page.len() - 1], smaller_first));
        }
        let mut round = AimedRound::default();
        round.start(10, None);
        round.read(4, &upper, 100);
        round.read(5, &lower, 130);
        assert!(!round.proven(&gap, smaller_first, false));
        // Linked by serial 110, the two list everything from key 42 to key 39.
        assert!(round.proven(&gap, smaller_first, true));
    }

    #[test]
    fn rounds_read_every_page_where_many_serials_go_unseen() {
        // Serials at keys equal to them, `skip` of every ten never listed.
        let listing = |skip: u64, serials: Range<u64>| {
            let listed: Vec<(u64, Millis)> = (serials.rev())
                .filter(|serial| serial % 10 >= skip)
                .map(|serial| (serial, serial as Millis))
                .collect();
            learnt(&listed)
        };
        let mut holes = Holes::default();
        // Nothing counts before the count starts (at the detector's first read).
        holes.sample(&listing(1, 0..1300), 0..1300);
        assert_eq!(holes.count(), UnseenSerials::default());
        // Started at 1100, only keys from then on count: one in ten unseen, but fewer
        // counted than it takes to say.
        holes.start(1100);
        holes.sample(&listing(1, 0..1300), 0..1300);
        let expected = UnseenSerials {
            counted: 199,
            unseen: 19,
        };
        assert_eq!(holes.count(), expected);
        assert!(!holes.many());
        // The same keys again count nothing; the next ones count.
        holes.sample(&listing(1, 1000..1600), 1000..1300);
        assert_eq!(holes.count().counted, 199);
        holes.sample(&listing(1, 1000..1600), 1000..1600);
        assert!(holes.count().counted >= HOLES_COUNTED, "{holes:?}");
        assert!(holes.many());
        // One in a hundred unseen, a listing as the simulator's: never many.
        let mut few = Holes::default();
        few.start(0);
        let listed: Vec<(u64, Millis)> = (1000..3000)
            .rev()
            .filter(|serial| serial % 100 != 7)
            .map(|serial| (serial, serial as Millis))
            .collect();
        few.sample(&learnt(&listed), 1000..3000);
        assert!(
            few.count().counted >= HOLES_COUNTED && !few.many(),
            "{few:?}"
        );
        // Counted for hours, the holes weigh no more than the last few thousand serials: a
        // listing that stops skipping numbers is aimed at again after a few rounds.
        let mut sample = |skip: u64, keys: Range<Millis>| {
            let serials = keys.start as u64..keys.end as u64;
            holes.sample(&listing(skip, serials), keys);
            holes.many()
        };
        for round in 0..20 {
            assert!(sample(1, 1600 + round * 500..2100 + round * 500));
        }
        let rounds = (20..40).take_while(|round| sample(0, 1600 + round * 500..2100 + round * 500));
        assert!((2..=8).contains(&rounds.count()), "{holes:?}");
    }

    #[test]
    fn a_read_aimed_at_a_gap_goes_where_the_latest_reads_show_it() {
        let gap = Gap {
            older: (40, 105),
            newer: (48, 109),
        };
        let aim = Aim {
            last: 8,
            ties: Some(Ordering::Greater),
            now: 1_000,
            settles: 500,
        };
        let mut round = AimedRound::default();
        round.start(10, None);
        // Nothing read yet: the predicted page, within the region's pages.
        assert_eq!(round.page_for(&gap, 5, aim), 5);
        assert_eq!(round.page_for(&gap, 1, aim), 2);
        assert_eq!(round.page_for(&gap, 12, aim), 8);
        // Page 5 listed everything below the gap: the page before. The last item has the
        // older key, but larger serials first it lists after every place of the gap; by the
        // key alone the gap might have been below.
        round.read(5, &[(40, 104), (39, 90)], 900);
        assert_eq!(round.page_for(&gap, 5, aim), 4);
        // Page 4 then listed the gap's newer serial last: it lies below, and the two reads
        // point at each other (the list moved down between them). The later read decides.
        round.read(4, &[(55, 140), (48, 109)], 950);
        assert_eq!(round.page_for(&gap, 5, aim), 5);
        assert_eq!(round.page_for(&gap, 4, aim), 5);
        // Page 5 read again, the gap still above it: page 4; but the list drifts down, and
        // once the read is older than `settles` it no longer says the gap is above.
        round.read(5, &[(40, 103), (39, 88)], 990);
        assert_eq!(round.page_for(&gap, 5, aim), 4);
        let later = Aim { now: 1_600, ..aim };
        assert_eq!(round.page_for(&gap, 5, later), 5);
        // A page that brackets the gap is the page.
        round.read(4, &[(50, 120), (39, 95)], 1_000);
        assert_eq!(round.page_for(&gap, 5, aim), 4);
        assert!(round.proven(&gap, aim.ties, false));
    }

    #[test]
    fn a_gap_is_tried_only_by_reads_that_come_back_with_items() {
        let gap = Gap {
            older: (40, 105),
            newer: (48, 109),
        };
        let mut round = AimedRound::default();
        round.start(20, None);
        // Reads aimed at the gap that failed or came back empty never reach `read`: the next
        // aimed read takes their place, and the gap keeps its tries.
        for _ in 0..2 * TRIES {
            round.aimed(vec![gap]);
        }
        assert_eq!(round.tries_at(&gap), 0);
        for at in 0..Millis::from(TRIES) {
            round.aimed(vec![gap]);
            assert!(round.open(&gap));
            round.read(5, &[(40, 104), (39, 90)], at);
            assert_eq!(Millis::from(round.tries_at(&gap)), at + 1);
        }
        assert!(!round.open(&gap));
        assert_eq!(round.reads(), TRIES);
        // A read not aimed at it (the head's page 2 at the start of a round) tries nothing.
        let other = Gap {
            older: (60, 130),
            newer: (61, 133),
        };
        round.start(20, None);
        round.aimed(vec![other]);
        round.start(20, None);
        round.read(2, &[(70, 150), (60, 129)], 10);
        assert_eq!(round.tries_at(&other), 0);
    }
}
