//! How long after the boundary its key gives a frame may end, learned from a listing's pages.
//!
//! A `pubDate` has whole seconds: a key is the reservation cut to its second. A listing that
//! keeps its reservations to the second ends a frame on the boundary the key gives; one that
//! keeps them to the millisecond (as a listing run time-compressed easily does) ends it up to a
//! second later. There, a broadcast seen on air within the second after its boundary may still
//! end at that boundary, and a read inside the second cannot prove it gone. So the ferret
//! strategy takes a frame to end anywhere in the boundary's second ([`KEY_RESOLUTION`]) until
//! the pages show otherwise: [`TRUST_AFTER`] broadcasts seen on air within the second after a
//! boundary and seen again after that second (they were extended), and not one proven gone at
//! that boundary after such a sighting. Like the order among equal keys ([`super::ties`]), it
//! is never assumed, and never trusted again once contradicted; what the pages showed goes to
//! the store with the detector's memory ([`super::Memory::frame_ends`]), so a restarted
//! detector does not learn it anew.
//!
//! A listing may also end frames later than that: its clock runs behind the reader's, or it
//! applies ends on ticks of its own. A broadcast seen on air past its boundary's second (or,
//! once frames are trusted to end on the second, past the boundary itself) and then proven
//! gone before its next boundary shows it (the simulator never ends an extended broadcast
//! early, and a real listing rarely does within minutes of a boundary). From the first such
//! broadcast on, a frame may end up to a quarter more than the longest such lag after its
//! boundary (at most the `watch` the detector gives, half its grace): a broadcast seen within
//! that window is still due at the boundary and read again, where before it was taken as
//! extended and its end slipped. (Twice the lag kept the rules as well, with later reports.)

use std::collections::HashMap;
use std::sync::Arc;

use super::{Listed, Millis, SECOND};

/// How finely a key tells the reservation: a frame may end up to this long after the boundary
/// its key gives.
pub(crate) const KEY_RESOLUTION: Millis = SECOND;

/// Broadcasts seen on air within the second after a boundary and again after it, with none
/// proven gone in between, before the listing is trusted to end frames on the second. Where
/// frames end anywhere in the second, about three in four broadcasts seen within it are not
/// extended and end there (`peak2009`): 32 sightings without one are out of reach of chance
/// (0.25³² ≈ 10⁻¹⁹), and where only a tenth of the reservations kept their milliseconds, about
/// one listing in 10,000 would pass. On `peak2009` at ×20 the 32 come within about 25 minutes of
/// the listing's time; at scale 1 a read rarely falls within the second (boundary reads wait
/// `settle`, 5 s), and the second costs little there.
pub(crate) const TRUST_AFTER: u32 = 32;

/// What a listing's pages showed of whether it ends frames on the second its keys give
/// ([`TRUST_AFTER`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OnTheSecond {
    /// Broadcasts seen on air within the second after a boundary and again after it.
    pub outlived: u32,
    /// Whether one seen so was proven gone at that boundary: frames are then never trusted
    /// to end on the second.
    pub broken: bool,
}

/// What the pages showed of how long after its boundary a frame ends.
#[derive(Debug, Clone)]
pub(crate) struct FrameEnds {
    /// Broadcasts seen on air within the second after a boundary, with that boundary.
    pending: HashMap<Arc<str>, Millis>,
    /// How many of them were seen on air again after the second, and whether one was proven
    /// gone at its boundary.
    shown: OnTheSecond,
    /// Broadcasts seen on air past the window after a boundary (at most its second) and within
    /// `watch` of the boundary, with that boundary and how long after it they were last seen.
    lingering: HashMap<Arc<str>, (Millis, Millis)>,
    /// The longest after its boundary a broadcast was seen on air that was then proven gone
    /// before its next boundary; 0 until one was.
    lateness: Millis,
    /// How long after a boundary sightings are watched, and the longest window.
    watch: Millis,
}

impl FrameEnds {
    /// Nothing learned yet; sightings up to `watch` after a boundary can show lateness.
    pub(crate) fn new(watch: Millis) -> FrameEnds {
        FrameEnds {
            pending: HashMap::new(),
            shown: OnTheSecond::default(),
            lingering: HashMap::new(),
            lateness: 0,
            watch,
        }
    }

    /// Learns from a broadcast listed by a read started at `seen_at`.
    pub(crate) fn seen(&mut self, item: &Listed, seen_at: Millis, frame: Millis) {
        self.seen_lingering(item, seen_at, frame);
        if self.shown.broken || self.trusted() {
            return;
        }
        if let Some(&boundary) = self.pending.get(&item.id) {
            if seen_at >= boundary + KEY_RESOLUTION {
                self.pending.remove(&item.id);
                self.shown.outlived += 1;
            }
            return;
        }
        let since = seen_at - item.key;
        let into_frame = since % frame.max(1);
        if since >= frame && into_frame < KEY_RESOLUTION {
            self.pending.insert(item.id.clone(), seen_at - into_frame);
        }
    }

    /// Keeps a sighting past the window after a boundary (or past its second, whichever is
    /// less: frames trusted to end on the second have no window) and within `watch` of it, and
    /// forgets the broadcast once it is seen past `watch` (it was extended).
    fn seen_lingering(&mut self, item: &Listed, seen_at: Millis, frame: Millis) {
        let since = seen_at - item.key;
        let into_frame = since % frame.max(1);
        if since < frame {
            return;
        }
        let boundary = seen_at - into_frame;
        let from = self.window().min(KEY_RESOLUTION);
        if (from..self.watch).contains(&into_frame) {
            let lag = self
                .lingering
                .entry(item.id.clone())
                .or_insert((boundary, 0));
            if lag.0 != boundary {
                *lag = (boundary, 0);
            }
            lag.1 = lag.1.max(into_frame);
        } else if into_frame >= self.watch {
            self.lingering.remove(&item.id);
        }
    }

    /// Learns from a broadcast proven gone at `at`.
    pub(crate) fn gone(&mut self, id: &str, at: Millis, frame: Millis) {
        if let Some((boundary, lag)) = self.lingering.remove(id) {
            if at < boundary + frame {
                self.lateness = self.lateness.max(lag);
            }
        }
        if let Some(boundary) = self.pending.remove(id) {
            if at < boundary + frame {
                self.shown.broken = true;
                self.pending.clear();
            }
        }
    }

    /// Forgets the sightings at boundaries before `before`: their broadcasts left the book
    /// unseen (a detector that lost them says nothing of where frames end).
    pub(crate) fn forget_before(&mut self, before: Millis) {
        self.pending.retain(|_, boundary| *boundary >= before);
        self.lingering
            .retain(|_, (boundary, _)| *boundary >= before);
    }

    /// The longest after its boundary a frame was seen to end (0 if none was seen late).
    pub(crate) fn lateness(&self) -> Millis {
        self.lateness
    }

    /// Goes on with the lateness a detector before a restart had seen.
    pub(crate) fn restore(&mut self, lateness: Millis) {
        self.lateness = self.lateness.max(lateness.clamp(0, self.watch));
    }

    /// What the pages showed of frames ending on the second, for the store to keep.
    pub(crate) fn on_the_second(&self) -> OnTheSecond {
        self.shown
    }

    /// Goes on with what a detector before a restart had seen of frames ending on the second.
    pub(crate) fn restore_on_the_second(&mut self, shown: OnTheSecond) {
        self.shown.outlived = self.shown.outlived.max(shown.outlived);
        self.shown.broken |= shown.broken;
    }

    /// Whether frames are known to end on the second the key gives.
    pub(crate) fn trusted(&self) -> bool {
        !self.shown.broken && self.shown.outlived >= TRUST_AFTER
    }

    /// How long after the boundary its key gives a frame ends on the mean, as far as the key
    /// tells: half its second where reservations keep their milliseconds, none once frames
    /// are trusted to end on the second. (A listing's lateness is not counted: the frame has
    /// ended all the same.) On `peak2009` at ×20 that half second is 10 s of the real
    /// listing's: the sweep's share, steered on the latency from the boundary itself, settled
    /// 0.03 lower than in real time for the same Off Air p95.
    pub(crate) fn mean_offset(&self) -> Millis {
        if self.trusted() {
            0
        } else {
            KEY_RESOLUTION / 2
        }
    }

    /// How long after the boundary its key gives a frame may end: a quarter more than the
    /// lateness shown, up to `watch`, once the listing has shown one; else the key's second,
    /// or none once frames are trusted to end on it.
    pub(crate) fn window(&self) -> Millis {
        if self.lateness > 0 {
            (self.lateness + self.lateness / 4)
                .min(self.watch)
                .max(KEY_RESOLUTION)
        } else if self.trusted() {
            0
        } else {
            KEY_RESOLUTION
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::MINUTE;

    const FRAME: Millis = 30 * MINUTE;
    const WATCH: Millis = 150 * SECOND;

    fn item(n: i64) -> Listed {
        Listed {
            id: Arc::from(format!("lv{n}")),
            key: n * SECOND,
            title: Arc::from("Broadcast"),
            link: Arc::from("https://live.example/watch"),
        }
    }

    /// Shows the broadcasts `numbers` on air half a second after their first boundary and
    /// again a second after it: extended, as far as the pages tell.
    fn see_extended(ends: &mut FrameEnds, numbers: std::ops::Range<i64>) {
        for n in numbers {
            let broadcast = item(n);
            ends.seen(&broadcast, broadcast.key + FRAME + SECOND / 2, FRAME);
            ends.seen(&broadcast, broadcast.key + FRAME + SECOND, FRAME);
        }
    }

    /// A listing whose frames are trusted to end on the second.
    fn trusted() -> FrameEnds {
        let mut ends = FrameEnds::new(WATCH);
        see_extended(&mut ends, 0..i64::from(TRUST_AFTER));
        assert_eq!(ends.window(), 0);
        ends
    }

    /// Extended broadcasts seen within the second after their boundary and again after it:
    /// trusted after `TRUST_AFTER` of them, and not before.
    #[test]
    fn frames_that_end_on_the_second_are_trusted_after_enough_extended_broadcasts() {
        let mut ends = FrameEnds::new(WATCH);
        let last = i64::from(TRUST_AFTER) - 1;
        see_extended(&mut ends, 0..last);
        assert!(!ends.trusted());
        assert_eq!(ends.window(), KEY_RESOLUTION);
        see_extended(&mut ends, last..last + 1);
        assert!(ends.trusted());
        assert_eq!(ends.window(), 0);
    }

    /// One broadcast proven gone at its boundary after a sighting within its second: never
    /// trusted, whatever follows.
    #[test]
    fn one_frame_ending_within_the_second_is_never_trusted_again() {
        let mut ends = FrameEnds::new(WATCH);
        let early = item(1_000);
        ends.seen(&early, early.key + FRAME + SECOND / 4, FRAME);
        ends.gone(&early.id, early.key + FRAME + 3 * SECOND, FRAME);
        see_extended(&mut ends, 0..2 * i64::from(TRUST_AFTER));
        assert!(!ends.trusted());
        assert_eq!(ends.window(), KEY_RESOLUTION);
    }

    /// Sightings outside the second after a boundary, and a broadcast gone at its next
    /// boundary after one within, say nothing.
    #[test]
    fn other_sightings_teach_nothing() {
        let mut ends = FrameEnds::new(WATCH);
        for n in 0..2 * i64::from(TRUST_AFTER) {
            let broadcast = item(n);
            ends.seen(&broadcast, broadcast.key + FRAME / 2, FRAME);
            ends.seen(&broadcast, broadcast.key + FRAME + 2 * SECOND, FRAME);
        }
        let extended = item(5_000);
        ends.seen(&extended, extended.key + 2 * FRAME + SECOND / 2, FRAME);
        ends.gone(&extended.id, extended.key + 3 * FRAME + 5 * SECOND, FRAME);
        assert!(!ends.trusted() && !ends.shown.broken);
        assert!(ends.pending.is_empty());
        assert_eq!(ends.window(), KEY_RESOLUTION);
    }

    /// A broadcast seen on air 10 s past its boundary and proven gone before its next one:
    /// the listing ends frames late, and a frame may now end up to 12.5 s after its boundary,
    /// even where frames were trusted to end on the second. The window is at most the watch.
    #[test]
    fn a_broadcast_gone_after_a_sighting_past_its_second_shows_lateness() {
        let mut ends = trusted();
        let late = item(1_000);
        ends.seen(&late, late.key + FRAME + 4 * SECOND, FRAME);
        ends.seen(&late, late.key + FRAME + 10 * SECOND, FRAME);
        assert_eq!(ends.window(), 0, "not gone yet");
        ends.gone(&late.id, late.key + FRAME + 70 * SECOND, FRAME);
        assert_eq!(ends.window(), 12_500);

        let later = item(2_000);
        ends.seen(&later, later.key + 3 * FRAME + 130 * SECOND, FRAME);
        ends.gone(&later.id, later.key + 3 * FRAME + 200 * SECOND, FRAME);
        assert_eq!(ends.window(), WATCH);
    }

    /// Frames trusted to end on the second, then a broadcast seen on air half a second past
    /// its boundary and proven gone before its next one: the listing ends frames late after
    /// all, and a frame may end anywhere in the boundary's second again. Before, a trusted
    /// listing watched nothing more, and frames that ended within the second slipped.
    #[test]
    fn a_frame_ending_within_the_second_after_trust_shows_lateness() {
        let mut ends = trusted();
        let late = item(1_000);
        ends.seen(&late, late.key + FRAME + SECOND / 2, FRAME);
        ends.gone(&late.id, late.key + FRAME + 30 * SECOND, FRAME);
        assert_eq!(ends.lateness(), SECOND / 2);
        assert_eq!(ends.window(), KEY_RESOLUTION);
    }

    /// A broadcast seen past the watch after its boundary was extended, and one gone only
    /// at its next boundary or later ended there: neither shows lateness, nor does one seen
    /// within the second (that is [`FrameEnds::pending`]'s) or before its first boundary.
    #[test]
    fn extended_broadcasts_show_no_lateness() {
        let mut ends = FrameEnds::new(WATCH);
        let outlived = item(1);
        ends.seen(&outlived, outlived.key + FRAME + 30 * SECOND, FRAME);
        ends.seen(&outlived, outlived.key + FRAME + WATCH, FRAME);
        ends.gone(&outlived.id, outlived.key + FRAME + 5 * MINUTE, FRAME);
        let next = item(2);
        ends.seen(&next, next.key + FRAME + 30 * SECOND, FRAME);
        ends.gone(&next.id, next.key + 2 * FRAME + SECOND, FRAME);
        let within = item(3);
        ends.seen(&within, within.key + FRAME + SECOND / 2, FRAME);
        ends.gone(&within.id, within.key + FRAME + 30 * SECOND, FRAME);
        let early = item(4);
        ends.seen(&early, early.key + FRAME - 30 * SECOND, FRAME);
        ends.gone(&early.id, early.key + FRAME - 10 * SECOND, FRAME);
        assert_eq!(ends.lateness, 0);
        assert!(ends.lingering.is_empty());
        assert_eq!(ends.window(), KEY_RESOLUTION);
    }
}
