//! Whether a listing's frames end on the second their keys show, learned from its pages.
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
//! is never assumed, and never trusted again once contradicted; each detector learns it anew.

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

/// What the pages showed of where in the boundary's second frames end.
#[derive(Debug, Clone, Default)]
pub(crate) struct FrameEnds {
    /// Broadcasts seen on air within the second after a boundary, with that boundary.
    pending: HashMap<Arc<str>, Millis>,
    /// Of them, seen on air again after the second.
    outlived: u32,
    /// Whether one of them was proven gone at its boundary.
    broken: bool,
}

impl FrameEnds {
    /// Learns from a broadcast listed by a read started at `seen_at`.
    pub(crate) fn seen(&mut self, item: &Listed, seen_at: Millis, frame: Millis) {
        if self.broken || self.trusted() {
            return;
        }
        if let Some(&boundary) = self.pending.get(&item.id) {
            if seen_at >= boundary + KEY_RESOLUTION {
                self.pending.remove(&item.id);
                self.outlived += 1;
            }
            return;
        }
        let since = seen_at - item.key;
        let into_frame = since % frame.max(1);
        if since >= frame && into_frame < KEY_RESOLUTION {
            self.pending.insert(item.id.clone(), seen_at - into_frame);
        }
    }

    /// Learns from a broadcast proven gone at `at`.
    pub(crate) fn gone(&mut self, id: &str, at: Millis, frame: Millis) {
        if let Some(boundary) = self.pending.remove(id) {
            if at < boundary + frame {
                self.broken = true;
                self.pending.clear();
            }
        }
    }

    /// Forgets the sightings at boundaries before `before`: their broadcasts left the book
    /// unseen (a detector that lost them says nothing of where frames end).
    pub(crate) fn forget_before(&mut self, before: Millis) {
        self.pending.retain(|_, boundary| *boundary >= before);
    }

    /// Whether frames are known to end on the second the key gives.
    pub(crate) fn trusted(&self) -> bool {
        !self.broken && self.outlived >= TRUST_AFTER
    }

    /// How long after the boundary its key gives a frame may end.
    pub(crate) fn resolution(&self) -> Millis {
        if self.trusted() {
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

    fn item(n: i64) -> Listed {
        Listed {
            id: Arc::from(format!("lv{n}")),
            key: n * SECOND,
            title: Arc::from("Broadcast"),
            link: Arc::from("https://live.example/watch"),
        }
    }

    /// Extended broadcasts seen within the second after their boundary and again after it:
    /// trusted after `TRUST_AFTER` of them, and not before.
    #[test]
    fn frames_that_end_on_the_second_are_trusted_after_enough_extended_broadcasts() {
        let mut ends = FrameEnds::default();
        for n in 0..i64::from(TRUST_AFTER) {
            let broadcast = item(n);
            assert_eq!(ends.resolution(), KEY_RESOLUTION);
            ends.seen(&broadcast, broadcast.key + FRAME + SECOND / 2, FRAME);
            ends.seen(&broadcast, broadcast.key + FRAME + SECOND, FRAME);
        }
        assert!(ends.trusted());
        assert_eq!(ends.resolution(), 0);
    }

    /// One broadcast proven gone at its boundary after a sighting within its second: never
    /// trusted, whatever follows.
    #[test]
    fn one_frame_ending_within_the_second_is_never_trusted_again() {
        let mut ends = FrameEnds::default();
        let early = item(1_000);
        ends.seen(&early, early.key + FRAME + SECOND / 4, FRAME);
        ends.gone(&early.id, early.key + FRAME + 3 * SECOND, FRAME);
        for n in 0..2 * i64::from(TRUST_AFTER) {
            let broadcast = item(n);
            ends.seen(&broadcast, broadcast.key + FRAME + SECOND / 2, FRAME);
            ends.seen(&broadcast, broadcast.key + FRAME + SECOND, FRAME);
        }
        assert!(!ends.trusted());
        assert_eq!(ends.resolution(), KEY_RESOLUTION);
    }

    /// Sightings outside the second after a boundary, and a broadcast gone at its next
    /// boundary after one within, say nothing.
    #[test]
    fn other_sightings_teach_nothing() {
        let mut ends = FrameEnds::default();
        for n in 0..2 * i64::from(TRUST_AFTER) {
            let broadcast = item(n);
            ends.seen(&broadcast, broadcast.key + FRAME / 2, FRAME);
            ends.seen(&broadcast, broadcast.key + FRAME + 2 * SECOND, FRAME);
        }
        let extended = item(5_000);
        ends.seen(&extended, extended.key + 2 * FRAME + SECOND / 2, FRAME);
        ends.gone(&extended.id, extended.key + 3 * FRAME + 5 * SECOND, FRAME);
        assert!(!ends.trusted() && !ends.broken);
        assert!(ends.pending.is_empty());
    }
}
