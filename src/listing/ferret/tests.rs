use super::share::{LATE_SHARE, SHARE_FALL, SHARE_RISE, SHARE_STEP};
use super::*;
use crate::listing::second::TRUST_AFTER;
use crate::listing::{
    spacing_for, EventKind, Listed, OnTheSecond, PageCache, TieOrder, MINUTE, SECOND,
};

fn item(key: Millis) -> Listed {
    Listed {
        id: Arc::from(format!("k{key}")),
        key,
        title: Arc::from("Broadcast"),
        link: Arc::from("https://live.example/watch"),
    }
}

fn read(pager: &mut FerretPager, now: Millis, page: u32, total: u64, items: Vec<Listed>) {
    pager.now = now;
    pager.requested = Some((page, Purpose::Sweep(Region::Rest), now));
    let view = PageView {
        page,
        total: Some(total),
        items,
        age: 0,
    };
    pager.handle_read(now, page, ReadOutcome::Page(view));
}

/// Reads the whole list, `items` in order, 18 a page, at `now`, with its length as the total.
fn read_all(pager: &mut FerretPager, now: Millis, items: &[Listed]) {
    for (i, shown) in items.chunks(18).enumerate() {
        read(pager, now, i as u32 + 1, items.len() as u64, shown.to_vec());
    }
}

/// Before a head sweep the reader waits as long as a mean read, not as long as few reads
/// take: with reads of 1 and 5 s in turn (mean 3 s), a read may start 4 s before the head
/// is due, where a wait of the mean and two deviations (capped at a quarter of the 19-s
/// interval) left the reader idle for 4¾ s before every head sweep.
///
/// On a head lane ([`Params::head_lane`]) a read keeps only the shortest interval between
/// two reads clear of the head.
#[test]
fn the_reader_waits_for_the_head_only_as_long_as_a_mean_read() {
    let one_lane = Params {
        head_lane: false,
        ..Params::default()
    };
    let mut pager = FerretPager::new(one_lane, Book::new());
    for took in [1, 5].repeat(32) {
        pager.read_time.observe(took * SECOND);
    }
    pager.head_at = 10 * MINUTE;
    assert!(pager.read_time.long() > pager.params.head_interval / 4);
    assert!(!pager.before_head(pager.head_at - 4 * SECOND));
    assert!(pager.before_head(pager.head_at - 2 * SECOND));
    assert!(!pager.before_head(pager.head_at));
    // Reads of 3 s on average: one reader would be busy 91 % of the time.
    pager.params.head_lane = true;
    pager.choose_lanes();
    assert!(pager.head_lane);
    assert!(!pager.before_head(pager.head_at - 2 * SECOND));
    assert!(pager.before_head(pager.head_at - pager.params.min_interval / 2));
}

/// At 900 reads an hour and a head sweep every 19 s, one reader would be busy 85 % of the
/// time with reads of 2.81 s (4.75 reads an interval and the wait before the head): the
/// head takes its own lane from there, and leaves it under 75 % (2.48 s), so that reads
/// of about 2.7 s keep it where it was.
#[test]
fn the_head_takes_a_lane_of_its_own_while_reads_are_slow() {
    let mut pager = FerretPager::new(Params::default(), Book::new());
    let mut lane_after = |took: Millis| {
        pager.read_time = ReadTime::default();
        pager.read_time.observe(took);
        pager.choose_lanes();
        pager.head_lane
    };
    let lanes: Vec<bool> = [2_700, 2_820, 2_700, 2_470, 2_700]
        .into_iter()
        .map(&mut lane_after)
        .collect();
    assert_eq!(lanes, [false, true, true, false, false]);
    let mut off = FerretPager::new(
        Params {
            head_lane: false,
            ..Params::default()
        },
        Book::new(),
    );
    off.read_time.observe(10 * SECOND);
    off.choose_lanes();
    assert!(!off.head_lane);
}

/// What the reads of twenty minutes of `peak2009` were, as [`heads_over`] counts them.
struct Heads {
    /// When each head sweep started.
    started: Vec<Millis>,
    /// When page 1 was answered with its items.
    page_1: Vec<Millis>,
    /// Other reads started.
    others: u32,
    /// The most reads out at once.
    most: usize,
}

impl Heads {
    /// The longest time between two of `times`.
    fn longest_gap(times: &[Millis]) -> Millis {
        times.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0)
    }
}

/// The reads of twenty minutes of `peak2009` with its reads changed by `reads` and none
/// failed or empty (a head read failed is read again, and counts twice), each rendered
/// halfway through, as the simulator's are.
fn heads_over(params: Params, reads: impl FnOnce(&mut crate::listing::sim::Reads)) -> Heads {
    use crate::listing::sim::{ReadsOut, Scenario, World};
    let mut scenario = Scenario::built_in("peak2009").unwrap();
    scenario.reads.failed = 0.0;
    scenario.reads.empty = 0.0;
    reads(&mut scenario.reads);
    let t0 = scenario.virtual_t0();
    let mut world = World::new(&scenario, t0, HOUR);
    let mut pager = FerretPager::new(params.clone(), Book::new());
    let mut now = t0;
    let mut heads = Heads {
        started: Vec::new(),
        page_1: Vec::new(),
        others: 0,
        most: 0,
    };
    let mut out = ReadsOut::default();
    while now < t0 + 20 * MINUTE {
        if let Some((done, page, outcome)) = out.answer(&mut world, now) {
            if page == 1 && matches!(&outcome, ReadOutcome::Page(view) if !view.items.is_empty()) {
                heads.page_1.push(done);
            }
            pager.handle_read(done, page, outcome);
            continue;
        }
        if let Some(page) = pager.poll_read(now) {
            let head = pager.head_requested == Some((page, now))
                || matches!(pager.requested, Some((asked, Purpose::Head(_), at)) if asked == page && at == now);
            match (head, page) {
                (true, 1) => heads.started.push(now),
                (true, _) => {}
                (false, _) => heads.others += 1,
            }
            out.ask(&mut world, page, now, params.read_timeout);
            heads.most = heads.most.max(out.len());
            continue;
        }
        let next = out.next_at().into_iter().chain(pager.poll_timeout()).min();
        now = next.unwrap_or(now + SECOND).max(now + 1);
        world.advance(now);
    }
    heads
}

/// With reads of 6 s, a head sweep (two pages) takes the reader for 12 s of every 19.
/// On its own lane the head keeps its schedule (every `head_interval`, late by the
/// shortest interval between reads at most), and the other reads get the whole of a
/// second reader: two and a half times as many as on one lane, where a read may start
/// only in the few seconds between the head's sweeps.
#[test]
fn the_head_on_its_own_lane_leaves_the_other_reads_the_reader() {
    let params = Params::default();
    let slow = |head_lane| {
        let params = Params {
            head_lane,
            ..Params::default()
        };
        heads_over(params, |reads| {
            reads.latency_min_ms = 6_000.0;
            reads.latency_max_ms = 6_000.0;
        })
    };
    let (lane, one_lane) = (slow(true), slow(false));
    assert_eq!((lane.most, one_lane.most), (2, 1));
    assert!(
        lane.started.len() >= 60,
        "{} head sweeps",
        lane.started.len()
    );
    assert!(lane.started.len() >= one_lane.started.len());
    let gap = Heads::longest_gap(&lane.started);
    assert!(
        gap <= params.head_interval + params.min_interval,
        "{gap} ms"
    );
    assert!(
        lane.others >= 2 * one_lane.others,
        "{} other reads against {} on one lane",
        lane.others,
        one_lane.others
    );
}

/// The budget is short of a listing once late frame ends have taken the sweep's share more
/// than half way down to its floor; a share that does not move never says so.
#[test]
fn the_budget_is_short_once_the_share_has_fallen_half_way() {
    let params = Params::default();
    let mut control = ShareControl::new(&params);
    assert!(!control.short());
    let half_way = (SHARE_FALL / 2.0 / SHARE_STEP / (1.0 - LATE_SHARE)).ceil() as usize;
    for _ in 1..half_way {
        control.frame_end(params.grace);
    }
    assert!(!control.short(), "{}", control.share);
    control.frame_end(params.grace);
    assert!(control.short(), "{}", control.share);
    let fixed = Params {
        off_air_target: 0,
        ..params
    };
    let mut control = ShareControl::new(&fixed);
    control.share -= SHARE_FALL;
    assert!(!control.short());
}

/// A listing that holds a read unanswered until the read timeout (10 s) held up the head
/// behind it for all of that: behind a sweep or boundary read, because the one reader was
/// busy, and behind a head read, because the sweep waited for its page. A read in flight
/// twice as long as few reads take has stalled, and the head reads beside it (the stalled
/// head page again, if that is the one held): page 1 is answered every head interval, late
/// by a stall and a read at most, and never more than two reads are out. 5 % of reads are
/// held a minute here, and reads take 0.2–1.5 s (a stall is about 3 s).
#[test]
fn a_stalled_read_lets_the_head_read_beside_it() {
    let params = Params::default();
    let heads = heads_over(params.clone(), |reads| {
        reads.hung = 0.05;
        reads.hang_ms = 60_000.0;
    });
    assert_eq!(heads.most, 2);
    assert!(heads.page_1.len() >= 60, "{} pages 1", heads.page_1.len());
    let gap = Heads::longest_gap(&heads.page_1);
    assert!(
        gap <= params.head_interval + 5 * SECOND,
        "{gap} ms between two answers of page 1"
    );
}

/// A read beside a stalled one of the same page is most often answered first, and the held
/// page may have been rendered as its read started: both answers count from the earlier
/// start, whichever comes first. A read of another page keeps its own.
#[test]
fn two_reads_of_one_page_both_count_from_the_earlier_start() {
    let mut pager = FerretPager::new(Params::default(), Book::new());
    pager.requested = Some((1, Purpose::Head(1), 1_000));
    pager.head_requested = Some((1, 5_000));
    let first = pager.take_request(1);
    assert!(
        matches!(first, Some((Purpose::Head(1), 1_000))),
        "{first:?}"
    );
    assert_eq!(pager.head_requested, Some((1, 1_000)));
    let second = pager.take_request(1);
    assert!(
        matches!(second, Some((Purpose::Head(1), 1_000))),
        "{second:?}"
    );
    assert!(pager.requested.is_none() && pager.head_requested.is_none());

    pager.requested = Some((7, Purpose::Sweep(Region::Rest), 2_000));
    pager.head_requested = Some((1, 4_000));
    let head = pager.take_request(1);
    assert!(matches!(head, Some((Purpose::Head(1), 4_000))), "{head:?}");
    assert!(matches!(pager.requested, Some((7, _, 2_000))));
}

/// The share moves down a step for a frame end reported later than the target (or a head
/// sweep started late) and up a twentieth of a step for one in time, so that it holds
/// where one in twenty is late, from [`SHARE_FALL`] under `sweep_share` to [`SHARE_RISE`]
/// over it. Without a target it stays put.
#[test]
fn the_sweeps_share_settles_where_one_end_in_twenty_is_late() {
    let params = Params::default();
    let start = params.sweep_share;
    let mut control = ShareControl::new(&params);
    for _ in 0..3_000 {
        control.frame_end(params.off_air_target / 2);
    }
    assert_eq!(
        control.share,
        start + SHARE_RISE,
        "ends in time: up to the span"
    );
    for _ in 0..100 {
        control.frame_end(params.off_air_target + SECOND);
    }
    // A head sweep started late counts as a late end.
    control.head_late();
    let after_late = control.share;
    assert!((after_late - (start + SHARE_RISE - 101.0 * 0.95 * SHARE_STEP)).abs() < 1e-9);
    for _ in 0..50 {
        control.frame_end(params.off_air_target + SECOND);
        for _ in 0..19 {
            control.frame_end(params.off_air_target);
        }
    }
    assert!(
        (control.share - after_late).abs() < 1e-9,
        "{}",
        control.share
    );
    for _ in 0..1_000 {
        control.frame_end(params.grace);
    }
    assert_eq!(
        control.share,
        start - SHARE_FALL,
        "ends late: down to the floor"
    );

    let mut fixed = ShareControl::new(&Params {
        off_air_target: 0,
        ..params
    });
    assert!(!fixed.frame_end(params.grace) && !fixed.head_late());
    assert_eq!(fixed.share, start);
}

/// Frame ends proven 10–35 s after their boundaries give the sweep a little budget; one
/// proven 200 s after, past the 110 s aimed at, takes some of it back for the head and
/// boundary reads at once.
#[test]
fn frame_ends_move_budget_between_the_sweep_and_the_boundary_reads() {
    let mut pager = FerretPager::new(Params::default(), Book::default());
    let start = pager.share.share;
    let frame = pager.params.frame;
    let listed = |keys: &[Millis]| keys.iter().rev().map(|&key| item(key * SECOND)).collect();
    let all: Vec<Millis> = (1..=30).collect();
    read(&mut pager, 31 * SECOND, 1, 30, listed(&all));
    let ends = |pager: &mut FerretPager| {
        std::iter::from_fn(|| pager.poll_event())
            .filter(|event| event.kind == EventKind::OffAir)
            .count()
    };
    ends(&mut pager);
    // 2–26 s end at their first boundary, and are proven gone 10–34 s later.
    let left = [1, 27, 28, 29, 30];
    read(&mut pager, 36 * SECOND + frame, 1, 5, listed(&left));
    assert_eq!(ends(&mut pager), 25);
    assert!(
        pager.share.share > start,
        "ends in time give the sweep more"
    );
    let (main, sweep) = (pager.budget.spacing, pager.sweep_budget.spacing);
    read(
        &mut pager,
        227 * SECOND + frame,
        1,
        4,
        listed(&[1, 28, 29, 30]),
    );
    assert_eq!(ends(&mut pager), 1);
    assert!(pager.share.share < start + 25.0 * SHARE_STEP * LATE_SHARE);
    assert!(pager.budget.spacing < main, "the main budget fills faster");
    assert!(pager.sweep_budget.spacing > sweep, "the sweep's slower");
}

/// The Off Air goal times a frame end from the frame's real end, which a whole-second key
/// gives only to its second: where reservations keep their milliseconds, a frame ends half a
/// second after the boundary its key gives on the mean, and the share is steered on the
/// latency from there. An end proven 10.3 s after that boundary is then in time for a target
/// of 10 s; once frames are trusted to end on the second, it is late.
#[test]
fn the_share_is_steered_on_the_latency_from_the_middle_of_the_keys_second() {
    for trusted in [false, true] {
        let params = Params {
            off_air_target: 10 * SECOND,
            ..Params::default()
        };
        let frame = params.frame;
        let mut pager = FerretPager::new(params, Book::default());
        if trusted {
            pager.frame_ends.restore_on_the_second(OnTheSecond {
                outlived: TRUST_AFTER,
                broken: false,
            });
        }
        let start = pager.share.share;
        let listed = |keys: &[Millis]| keys.iter().rev().map(|&key| item(key * SECOND)).collect();
        let all: Vec<Millis> = (1..=30).collect();
        read(&mut pager, 31 * SECOND, 1, 30, listed(&all));
        // All but the newest outlive their boundaries; the newest is proven gone 10.3 s
        // after its own.
        read(&mut pager, 40_300 + frame, 1, 29, listed(&all[..29]));
        let ends: Vec<Event> = std::iter::from_fn(|| pager.poll_event())
            .filter(|event| event.kind == EventKind::OffAir)
            .collect();
        assert_eq!(ends.len(), 1);
        assert_eq!(ends[0].item.key, 30 * SECOND);
        if trusted {
            assert!(pager.share.share < start, "late: {}", pager.share.share);
        } else {
            assert!(pager.share.share > start, "in time: {}", pager.share.share);
        }
    }
}

/// A `pubDate` has whole seconds, so a frame may end up to a second after the boundary
/// its key gives. Seen on air within that second, a broadcast is still due at the
/// boundary; seen after it, it outlived the boundary and is due at the next one. A read
/// may prove it gone `settle` after the boundary, and never within its second (on a
/// listing run 60 times faster, `settle` is 83 ms).
#[test]
fn a_broadcast_seen_within_its_boundarys_second_is_still_due_there() {
    let params = Params::default();
    let (frame, settle) = (params.frame, params.settle);
    let mut pager = FerretPager::new(params.clone(), Book::new());
    let t0: Millis = 1_000 * 60 * MINUTE;
    let listed: Vec<Listed> = (0..18).map(|i| item(t0 - i * SECOND)).collect();
    let boundary = listed[9].key + frame;
    // The broadcast's entry after a read of its page at `now`.
    let seen_at = |pager: &mut FerretPager, now: Millis| {
        read(pager, now, 1, 18, listed.clone());
        pager.book.get(&listed[9].id).expect("on air").clone()
    };
    let before = seen_at(&mut pager, t0);
    assert_eq!(pager.due(&before), boundary);
    let within = seen_at(&mut pager, boundary + SECOND / 2);
    assert_eq!(pager.due(&within), boundary);
    // Most likely extended: its batch waits from the end of the second.
    assert_eq!(pager.batch_from(&within, boundary), boundary + SECOND);
    let after = seen_at(&mut pager, boundary + SECOND);
    assert_eq!(pager.due(&after), boundary + frame);
    assert_eq!(pager.provable_at(boundary), boundary + settle);
    let fast = FerretPager::new(params.compressed(60), Book::new());
    assert_eq!(fast.provable_at(boundary), boundary + SECOND);
}

/// A page read a minute ago held the key; since then the head saw a page of new
/// broadcasts start above it. The boundary read goes to the page the key was pushed to,
/// not to the page that held it.
#[test]
fn boundary_read_follows_the_starts_above_since_the_page_was_read() {
    let mut pager = FerretPager::new(Params::default(), Book::new());
    let t0: Millis = 1_000 * 60 * MINUTE;
    let old: Vec<Listed> = (0..36)
        .map(|i| item(t0 - MINUTE - i * 10 * SECOND))
        .collect();
    read(&mut pager, t0, 1, 36, old[..18].to_vec());
    read(&mut pager, t0, 2, 36, old[18..].to_vec());
    let key = old[20].key;
    assert_eq!(pager.predict(key), 2);
    let t1 = t0 + MINUTE;
    let new: Vec<Listed> = (0..18).map(|i| item(t1 - SECOND - i * SECOND)).collect();
    read(&mut pager, t1, 1, 54, new);
    let entry = pager.book.get(&old[20].id).expect("on air").clone();
    assert_eq!(pager.due_page(&entry), 3);
}

/// Ten pages read, 180 broadcasts; the one at position 140 (page 8) passes its frame
/// boundary. A boundary read for it that went to page 1 (as one does after three empty pages
/// with a total of 0 emptied the list) finds its key far below: the next read goes to page 8,
/// where the book now predicts it, not to page 2, a step at a time down the list. A miss by
/// two pages (page 6) still steps ([`FAR_MISS`]).
#[test]
fn a_boundary_read_that_missed_far_aims_again_where_the_book_says() {
    let frame = Params::default().frame;
    let t0: Millis = 1_000 * 60 * MINUTE;
    let items: Vec<Listed> = (0..180i64)
        .map(|i| match i {
            // Recent, due long after.
            0..=139 => item(t0 - 10 * MINUTE - i * 2 * SECOND),
            // Due 10 s after t0.
            140 => item(t0 - frame + 10 * SECOND),
            // Past their first boundary when seen: due a frame later.
            _ => item(t0 - frame - MINUTE - i * SECOND),
        })
        .collect();
    let mut pager = FerretPager::new(Params::default(), Book::new());
    read_all(&mut pager, t0, &items);
    let due = items[140].id.clone();
    let entry = pager.book.get(&due).expect("on air").clone();
    assert_eq!(pager.due_page(&entry), 8);

    let t1 = t0 + 30 * SECOND;
    pager.now = t1;
    pager.requested = Some((1, Purpose::Due(due.clone()), t1));
    let view = PageView {
        page: 1,
        total: Some(180),
        items: items[..18].to_vec(),
        age: 0,
    };
    pager.handle_read(t1, 1, ReadOutcome::Page(view));
    assert!(pager.due_miss.as_ref().is_some_and(|miss| miss.step == 1));
    let entry = pager.book.get(&due).expect("still on air").clone();
    assert_eq!(pager.due_page(&entry), 8);
    pager.due_miss = Some(DueMiss {
        id: due,
        page: 6,
        step: 1,
    });
    assert_eq!(pager.due_page(&entry), 7);
}

/// Three pages read; then page 1 gives the total, 54, and a few seconds later the
/// broadcasts at positions 33–35 pass their frame boundary (ended, most likely). The
/// broadcast that was at 36, the top of page 3, is now at 33, on page 2, and a boundary
/// read looks for it there; with the total older than a quarter of a head interval, the
/// count from the end takes it as read, and the page stays 3.
#[test]
fn the_count_from_the_end_takes_out_the_ends_since_the_total() {
    let frame = Params::default().frame;
    let t0: Millis = 1_000 * 60 * MINUTE;
    let items: Vec<Listed> = (0..54i64)
        .map(|i| match i {
            // Recent, due long after.
            0..=26 => item(t0 - 10 * MINUTE - i * SECOND),
            // Due 12–20 s after t0.
            27..=35 => item(t0 - frame + (47 - i) * SECOND),
            // Past their first boundary when seen: due a frame later.
            _ => item(t0 - frame - MINUTE - i * SECOND),
        })
        .collect();
    let pager_at = |now: Millis| {
        let mut pager = FerretPager::new(Params::default(), Book::new());
        read_all(&mut pager, t0, &items);
        read(&mut pager, t0 + 10 * SECOND, 1, 54, items[..18].to_vec());
        pager.now = now;
        pager
    };
    let key = items[36].key;
    assert_eq!(pager_at(t0 + 11 * SECOND).predict(key), 3);
    // Three boundaries (positions 33–35, due at 12, 13 and 14 s) have passed.
    assert_eq!(pager_at(t0 + 14 * SECOND).predict(key), 2);
    // The total is 10 s old: as read.
    assert_eq!(pager_at(t0 + 20 * SECOND).predict(key), 3);
}

/// A listing run 20 times faster shows about a dozen broadcasts on each whole-second key,
/// and their frames end through the second after the boundary the key gives, each at its
/// reservation's millisecond. Half a second into it, the total brought to now takes half
/// of them as ended, not all twelve: the broadcast at position 42 (page 3) has moved up to
/// about 36, still on page 3, where counting the whole second as ended put it on page 2.
/// Taking every boundary passed as an end at once made the total brought to now worse
/// than the total as read on `peak2009` at ×20 (rms 4.6 against 1.9 broadcasts).
#[test]
fn the_count_from_the_end_spreads_a_keys_ends_over_its_second() {
    let frame = Params::default().frame;
    let t0: Millis = 1_000 * 60 * MINUTE;
    let shared = t0 - frame + 12 * SECOND;
    let items: Vec<Listed> = (0..54i64)
        .map(|i| match i {
            // Recent, due long after.
            0..=17 => item(t0 - 10 * MINUTE - i * SECOND),
            // Twelve on one key, due 12 s after t0.
            18..=29 => Listed {
                id: Arc::from(format!("shared{i}")),
                ..item(shared)
            },
            // Past their first boundary when seen: due a frame later.
            _ => item(t0 - frame - MINUTE - i * SECOND),
        })
        .collect();
    let mut pager = FerretPager::new(Params::default(), Book::new());
    read_all(&mut pager, t0, &items);
    read(&mut pager, t0 + 10 * SECOND, 1, 54, items[..18].to_vec());
    assert_eq!(pager.frame_ends.window(), KEY_RESOLUTION);
    let key = items[42].key;
    pager.now = t0 + 11 * SECOND;
    assert_eq!(pager.predict(key), 3);
    pager.now = t0 + 12 * SECOND + KEY_RESOLUTION / 2;
    assert_eq!(pager.position_from_end(&pager.counts(), key), Some(36));
    assert_eq!(pager.predict(key), 3);
    pager.now = t0 + 12 * SECOND + KEY_RESOLUTION;
    assert_eq!(pager.position_from_end(&pager.counts(), key), Some(30));
    assert_eq!(pager.predict(key), 2);
}

/// Two pages, 36 broadcasts: recent ones, due long after, and `deep` old ones seen in
/// their fourth frame, due at their fourth boundary a minute or two later. Returns the
/// pager, the earliest deep boundary and its broadcast's id.
fn with_deep_boundaries(deep: i64) -> (FerretPager, Millis, Arc<str>) {
    let frame = Params::default().frame;
    let t0: Millis = 1_000 * 60 * MINUTE;
    let items: Vec<Listed> = (0..36i64)
        .map(|i| {
            if i < 36 - deep {
                item(t0 - 10 * MINUTE - i * SECOND)
            } else {
                item(t0 - 4 * frame + 2 * MINUTE - i * SECOND)
            }
        })
        .collect();
    let mut pager = FerretPager::new(Params::default(), Book::new());
    read(&mut pager, t0, 1, 36, items[..18].to_vec());
    read(&mut pager, t0, 2, 36, items[18..].to_vec());
    let last = &items[35];
    (pager, last.key + 4 * frame, last.id.clone())
}

/// The boundary read ready at `now`, if any, and the broadcast it is for.
fn boundary_read_at(pager: &mut FerretPager, now: Millis) -> Option<Arc<str>> {
    pager.now = now;
    match pager.batched_boundary_read(now)? {
        (_, Purpose::Due(id)) => Some(id),
        (_, purpose) => panic!("{purpose:?}"),
    }
}

/// One broadcast of 36 at its fourth frame boundary: its read waits 1.6 `batch_wait`s
/// instead of one, and the detector wakes for it then. Four of 36 (over a twentieth):
/// deep boundaries are not rare, and theirs wait as any other.
#[test]
fn a_rare_deep_boundary_waits_longer_for_its_read() {
    let Params {
        batch_wait, settle, ..
    } = Params::default();
    let longer = (batch_wait as f64 * DEEP_WAIT_PER_BATCH) as Millis;
    let (mut pager, due, id) = with_deep_boundaries(1);
    assert_eq!(pager.boundary_wake(), Some(due + longer));
    assert_eq!(
        boundary_read_at(&mut pager, due + batch_wait + settle),
        None
    );
    assert_eq!(boundary_read_at(&mut pager, due + longer), Some(id));

    let (mut pager, due, id) = with_deep_boundaries(4);
    assert_eq!(
        boundary_read_at(&mut pager, due + batch_wait + settle),
        Some(id)
    );
}

fn read_without_total(pager: &mut FerretPager, now: Millis, page: u32, items: &[Listed]) {
    pager.now = now;
    pager.requested = Some((page, Purpose::Sweep(Region::Rest), now));
    let view = PageView {
        page,
        total: None,
        items: items.to_vec(),
        age: 0,
    };
    pager.handle_read(now, page, ReadOutcome::Page(view));
}

/// A listing of 48 broadcasts, its three pages read once, with the channel's `total` if
/// it gives one.
fn three_pages(total: Option<u64>) -> (FerretPager, Vec<Listed>, Millis) {
    let mut pager = FerretPager::new(Params::default(), Book::new());
    let t0: Millis = 1_000 * 60 * MINUTE;
    let items: Vec<Listed> = (0..48).map(|i| item(t0 - MINUTE - i * SECOND)).collect();
    for (page, shown) in (1..).zip(items.chunks(18)) {
        match total {
            Some(total) => read(&mut pager, t0, page, total, shown.to_vec()),
            None => read_without_total(&mut pager, t0, page, shown),
        }
    }
    (pager, items, t0)
}

/// Asserts that exactly `expected` were reported Off Air since the last look.
fn assert_gone(pager: &mut FerretPager, expected: &[Listed]) {
    let mut reported = gone(pager);
    reported.sort();
    let mut expected: Vec<Arc<str>> = expected.iter().map(|item| item.id.clone()).collect();
    expected.sort();
    assert_eq!(reported, expected);
}

fn gone(pager: &mut FerretPager) -> Vec<Arc<str>> {
    std::iter::from_fn(|| pager.poll_event())
        .filter(|event| event.kind == EventKind::OffAir)
        .map(|event| event.item.id)
        .collect()
}

/// A listing without a total whose page 3 comes back empty (a fault) while page 2, full,
/// reads alike again and again: however often, nothing on page 3 is reported gone. Taking
/// a full page followed by an empty one for the end did.
#[test]
fn an_empty_page_after_a_full_one_is_no_end_without_a_total() {
    let mut pager = FerretPager::new(Params::default(), Book::new());
    let t0: Millis = 1_000 * 60 * MINUTE;
    let items: Vec<Listed> = (0..54).map(|i| item(t0 - MINUTE - i * SECOND)).collect();
    for page in 1..=3u32 {
        let first = (page as usize - 1) * 18;
        read_without_total(&mut pager, t0, page, &items[first..first + 18]);
    }
    let mut t = t0;
    for _ in 0..4 {
        for (page, shown) in [(3, &items[..0]), (2, &items[18..36]), (2, &items[18..36])] {
            t += SECOND;
            read_without_total(&mut pager, t, page, shown);
        }
    }
    t += SECOND;
    read_without_total(&mut pager, t, 3, &[]);
    assert_eq!(gone(&mut pager), Vec::<Arc<str>>::new());
}

/// Six pages of a listing without a total read at `t0`, the newest broadcast `age` old; two
/// minutes later a read of page 4 finds the list five broadcasts further up (the five at its
/// top before, positions 54–58, ended unseen). The pages predicted for the broadcast at
/// position 92 before that read and after it.
fn predicted_after_ends_unseen(age: Millis) -> (u32, u32) {
    let mut pager = FerretPager::new(Params::default(), Book::new());
    let t0: Millis = 1_000 * 60 * MINUTE;
    let items: Vec<Listed> = (0..108).map(|i| item(t0 - age - i * SECOND)).collect();
    for (page, shown) in (1..).zip(items.chunks(18)) {
        read_without_total(&mut pager, t0, page, shown);
    }
    let before = pager.predict(items[92].key);
    read_without_total(&mut pager, t0 + 2 * MINUTE, 4, &items[59..77]);
    (before, pager.predict(items[92].key))
}

/// A key a frame old or older (a boundary read's) is counted from the freshest page read
/// near it ([`FerretPager::anchor`]): after page 4's read the broadcast at position 92 is at
/// 87, on page 5, and not where page 6's older read left it. A key of the recent region is
/// still counted from the nearest page read: between two pages there, what the book has not
/// seen is the deep insertions between them.
#[test]
fn an_old_key_is_counted_from_the_freshest_page_near_it() {
    let frame = Params::default().frame;
    assert_eq!(predicted_after_ends_unseen(frame + MINUTE), (6, 5));
    assert_eq!(predicted_after_ends_unseen(MINUTE), (6, 6));
}

/// The end of a listing without a total is proven by its last page, short, read twice
/// with the same last item (a head read in between leaves the check be) and then the
/// page after it empty: the two broadcasts that were below it are gone.
#[test]
fn a_short_last_page_read_twice_and_an_empty_one_prove_the_end() {
    let (mut pager, items, t0) = three_pages(None);
    assert_eq!(gone(&mut pager), Vec::<Arc<str>>::new());
    // The last two end: page 3 shows ten.
    let t = t0 + MINUTE;
    read_without_total(&mut pager, t, 3, &items[36..46]);
    assert!(matches!(pager.end_check, Some(EndCheck::Again(..))));
    read_without_total(&mut pager, t + SECOND, 1, &items[..18]);
    read_without_total(&mut pager, t + 2 * SECOND, 3, &items[36..46]);
    assert_eq!(gone(&mut pager), Vec::<Arc<str>>::new());
    read_without_total(&mut pager, t + 3 * SECOND, 4, &[]);
    assert_gone(&mut pager, &items[46..]);
    assert_eq!(pager.total, Some(46));
}

/// An empty page whose total empties the list, where the total known does not (a failing
/// backend's empty result), is a fault until three in a row say so; a page with items in
/// between starts the count again. A list that emptied says so on every read.
#[test]
fn an_empty_end_is_believed_only_when_pages_repeat_it() {
    let (mut pager, items, t0) = three_pages(Some(48));
    let mut t = t0;
    for _ in 0..2 {
        for _ in 0..2 {
            t += SECOND;
            read(&mut pager, t, 2, 0, Vec::new());
            assert_eq!(pager.total, Some(48));
        }
        t += SECOND;
        read(&mut pager, t, 1, 48, items[..18].to_vec());
    }
    assert_eq!(gone(&mut pager), Vec::<Arc<str>>::new());
    for _ in 0..3 {
        t += SECOND;
        read(&mut pager, t, 1, 0, Vec::new());
    }
    assert_eq!(pager.total, Some(0));
}

/// A total a minute old, while more broadcasts end than start, says more than the last
/// page shows: it is set aside as one that says less is, and the pages prove the end as a
/// listing's without a total, the short page counting as read twice alike only with a full
/// page above it read in between (a listing that cuts its pages short shows none). The
/// check reads that page itself rather than wait for the head.
#[test]
fn a_total_that_says_more_than_the_last_page_shows_is_set_aside() {
    let (mut pager, items, t0) = three_pages(Some(48));
    assert_eq!(pager.total_trust, TotalTrust::Trusted);
    // The last two end; the total still counts them.
    let t = t0 + MINUTE;
    read(&mut pager, t, 3, 48, items[36..46].to_vec());
    assert_eq!(pager.total_trust, TotalTrust::SaysMore);
    assert_eq!(pager.end_check_page(), Some(2));
    // Read again before the page above: its first read still.
    read(&mut pager, t + SECOND, 3, 48, items[36..46].to_vec());
    assert_eq!(pager.end_check_page(), Some(2));
    read(&mut pager, t + 2 * SECOND, 2, 48, items[18..36].to_vec());
    assert_eq!(pager.end_check_page(), Some(3));
    read(&mut pager, t + 3 * SECOND, 3, 47, items[36..46].to_vec());
    assert_eq!(pager.end_check_page(), Some(4));
    assert_eq!(gone(&mut pager), Vec::<Arc<str>>::new());
    read(&mut pager, t + 4 * SECOND, 4, 47, Vec::new());
    assert_gone(&mut pager, &items[46..]);
    // A short page that agrees with the total trusts it again.
    read(&mut pager, t + 5 * SECOND, 3, 46, items[36..46].to_vec());
    assert_eq!(pager.total_trust, TotalTrust::Trusted);
}

/// A paginator that clamps the page number answers a page past the end with its last
/// page, which starts at the top of the list lengthen between two reads a second apart:
/// the same last item on a short page below a short page read a moment before is that
/// page again, an empty page in effect, and with the last page read twice alike it proves
/// the end. Read as a page of its own, it moved the end a page down at every read while
/// boundary reads chased a gone broadcast's key below it, and the head waited minutes.
#[test]
fn a_clamped_last_page_that_lengthened_is_still_past_the_end() {
    let (mut pager, items, t0) = three_pages(None);
    // The last two end; then each read finds one more start above, which pushes one more
    // broadcast down onto the last page.
    let t = t0 + MINUTE;
    read_without_total(&mut pager, t, 3, &items[36..46]);
    read_without_total(&mut pager, t + SECOND, 4, &items[35..46]);
    assert_eq!(pager.last_page(), Some(3));
    read_without_total(&mut pager, t + 2 * SECOND, 3, &items[34..46]);
    assert_eq!(gone(&mut pager), Vec::<Arc<str>>::new());
    read_without_total(&mut pager, t + 3 * SECOND, 4, &items[33..46]);
    assert_gone(&mut pager, &items[46..]);
    assert_eq!(pager.last_page(), Some(3));
}

/// A paginator that starts over answers a page past the end with page 1 as it is now: one
/// start later, page 1's broadcasts but the last, with the new one on top. Read a second
/// after page 1 and three pages below it, it is that page again, an empty page in effect:
/// the end of a list without a total stays where it was. Read as a page of its own, it put
/// the end below the book's broadcasts below its last one, a list twice as long. So is page
/// 1 shown again as it was read a moment before, two pages below it, as a list that shrank
/// below its end believed answers (a small list's end, where no start came in between).
/// Page 2 showing the same is a list moved a page down, and is read as itself.
#[test]
fn a_page_showing_page_1_again_far_below_it_is_read_as_empty() {
    let (mut pager, items, t0) = three_pages(None);
    assert_eq!(pager.last_page(), Some(3));
    let shown = |pager: &FerretPager, page: u32| pager.map.get(&page).map(|r| r.shown.0.clone());
    let t = t0 + MINUTE;
    read_without_total(&mut pager, t, 1, &items[..18]);
    let started = item(t0);
    let page_1_now: Vec<Listed> = std::iter::once(started.clone())
        .chain(items[..17].iter().cloned())
        .collect();
    read_without_total(&mut pager, t + SECOND, 4, &page_1_now);
    assert_eq!(pager.last_page(), Some(3));
    assert_eq!(pager.total, Some(48));
    assert!(pager.book.get(&started.id).is_none());

    read_without_total(&mut pager, t + 2 * SECOND, 1, &page_1_now);
    read_without_total(&mut pager, t + 3 * SECOND, 3, &page_1_now);
    assert_eq!(pager.last_page(), Some(3));
    assert_eq!(shown(&pager, 3), Some(items[36].id.clone()));

    read_without_total(&mut pager, t + 4 * SECOND, 2, &page_1_now);
    assert_eq!(shown(&pager, 2), Some(started.id));
}

/// A check of the end started while no total was trusted ends once a page carries one
/// again: a page that agrees with it proves the end. Kept, the check's reads went on
/// before a round under way, at a page that no longer needed them, and late boundary
/// reads aimed at it.
#[test]
fn a_total_trusted_again_ends_the_check_of_the_end() {
    let (mut pager, items, t0) = three_pages(None);
    let t = t0 + MINUTE;
    read_without_total(&mut pager, t, 3, &items[36..46]);
    assert!(matches!(pager.end_check, Some(EndCheck::Again(..))));
    read(&mut pager, t + SECOND, 1, 46, items[..18].to_vec());
    assert!(pager.end_check.is_none());
}

/// A late boundary read of a broadcast below the last item of the short page under check
/// reads the check's next page, not the page its key predicts, and waits for no move of
/// the list: that read is what settles it.
#[test]
fn a_boundary_below_the_checked_page_reads_for_the_check() {
    let (mut pager, items, t0) = three_pages(None);
    let t = t0 + MINUTE;
    read_without_total(&mut pager, t, 3, &items[36..46]);
    let below = pager.book.get(&items[47].id).expect("on air").clone();
    assert_eq!(pager.due_page(&below), 3);
    read_without_total(&mut pager, t + SECOND, 3, &items[36..46]);
    assert_eq!(pager.due_page(&below), 4);
    pager.due_hold = Some((below.item.id.clone(), t + HOUR));
    assert_eq!(pager.held_until(&below, pager.due(&below)), Millis::MIN);
}

/// Without a total, a broadcast of the last page's last key (its whole second) that the
/// short page no longer lists lies beyond it as much as one of an older key: its end is
/// proven as theirs is. A check of the end started only for a broadcast strictly below
/// that key, and a frame end slipped (`peak2009` with a total a minute old, restarted,
/// seed 8 at ×20).
#[test]
fn a_broadcast_of_the_last_keys_second_left_off_the_last_page_is_proven_gone() {
    let mut pager = FerretPager::new(Params::default(), Book::new());
    let t0: Millis = 1_000 * 60 * MINUTE;
    // 40 broadcasts, the last three of one key: pages of 18, 18 and 4.
    let items: Vec<Listed> = (0..40)
        .map(|i| Listed {
            id: Arc::from(format!("lv{}", 100 - i)),
            ..item(t0 - MINUTE - i.min(37) * SECOND)
        })
        .collect();
    for (page, shown) in (1..).zip(items.chunks(18)) {
        read_without_total(&mut pager, t0, page, shown);
    }
    assert!(pager.end_check.is_none());
    // The last one ends: page 3 shows three of the four.
    let t = t0 + MINUTE;
    read_without_total(&mut pager, t, 3, &items[36..39]);
    assert!(matches!(pager.end_check, Some(EndCheck::Again(..))));
    let left_off = pager.book.get(&items[39].id).expect("on air").clone();
    assert_eq!(pager.due_page(&left_off), 3);
    read_without_total(&mut pager, t + SECOND, 1, &items[..18]);
    read_without_total(&mut pager, t + 2 * SECOND, 3, &items[36..39]);
    assert_eq!(gone(&mut pager), Vec::<Arc<str>>::new());
    read_without_total(&mut pager, t + 3 * SECOND, 4, &[]);
    assert_gone(&mut pager, &items[39..]);
}

/// A full page read where the end of a list without a total was believed to be moves the
/// end below it by the book's broadcasts below the page's last one. By one, a detector
/// resumed without knowing the end put it a page below each full page it read, and lost
/// the list for most of the time between restarts.
#[test]
fn a_full_page_past_the_end_believed_moves_it_by_the_book_below() {
    let (pager, items, t0) = three_pages(None);
    assert_eq!(pager.total, Some(48));
    let mut resumed = FerretPager::new(Params::default(), pager.book.clone()).resume(t0, None);
    assert_eq!(resumed.last_page(), None);
    read_without_total(&mut resumed, t0 + SECOND, 1, &items[..18]);
    assert_eq!(resumed.total, Some(48));
    assert_eq!(resumed.last_page(), Some(3));
}

/// Without a total, the last page read short twice with the same last item proves the
/// end even when the list grew by a page in between, so that the second read is of the
/// page after the first: the list's end at the tail moves across page boundaries from
/// one read to the next.
#[test]
fn the_end_checked_may_move_to_the_next_page() {
    let (mut pager, items, t0) = three_pages(None);
    let t = t0 + MINUTE;
    // The last two end: page 3 shows ten. Then ten start above, and the last two of those
    // ten are on page 4.
    read_without_total(&mut pager, t, 3, &items[36..46]);
    read_without_total(&mut pager, t + MINUTE, 4, &items[44..46]);
    assert_eq!(gone(&mut pager), Vec::<Arc<str>>::new());
    assert_eq!(pager.end_check.as_ref().map(EndCheck::page), Some(5));
    read_without_total(&mut pager, t + MINUTE + SECOND, 5, &[]);
    assert_gone(&mut pager, &items[46..]);
}

/// At the peak the head reads page 2 at nearly every head sweep, and a round of the sweep
/// starts just after one, going on from page 3 with the head's page 2 as its first page.
#[test]
fn rounds_start_from_the_heads_page_2() {
    use crate::listing::sim::{Scenario, World};
    let scenario = Scenario::built_in("peak2009").unwrap();
    // Rounds that read every page of their region (aimed at the serials not seen, they start
    // at the page of the first gap).
    let params = Params {
        serial_rounds: false,
        ..Params::default()
    };
    let t0 = scenario.virtual_t0();
    let mut world = World::new(&scenario, t0, HOUR);
    let mut pager = FerretPager::new(params.clone(), Book::new());
    let (mut now, mut rounds) = (t0, Vec::new());
    while now < t0 + 40 * MINUTE {
        let in_round = pager.in_round;
        let Some(page) = pager.poll_read(now) else {
            now = pager.poll_timeout().unwrap_or(now + SECOND).max(now + 1);
            world.advance(now);
            continue;
        };
        if !in_round && pager.in_round {
            let (answered, view) = pager.head_second.as_ref().expect("page 2 read");
            rounds.push((page, now - answered, view.page));
        }
        let (outcome, done) = world.read(page, now, params.read_timeout);
        now = done;
        pager.handle_read(now, page, outcome);
    }
    assert!(rounds.len() >= 5, "{rounds:?}");
    for (page, since_head, head_page) in rounds {
        assert_eq!((page, head_page), (3, 2));
        assert!(since_head <= params.head_interval / 4, "{since_head} ms");
    }
}

/// A broadcast gone from the bottom of a list whose length is a whole number of pages:
/// the last page is full (it cannot prove anything gone below its last item) and the
/// page after it empty, so a boundary read misses on either, late enough to go before the
/// head. Read in turn, the two pages held the head back for minutes; now the broadcast
/// waits a head interval after the second, and the head reads page 1 at least every
/// other interval.
#[test]
fn a_boundary_read_that_cannot_settle_does_not_starve_the_head() {
    let params = Params::default();
    let mut pager = FerretPager::new(params.clone(), Book::new());
    let t0: Millis = 1_000 * 60 * MINUTE;
    let mut items: Vec<Listed> = (0..90)
        .map(|i| item(t0 - 3 * MINUTE - i * SECOND))
        .collect();
    items.push(item(t0 - params.frame - SECOND));
    read_all(&mut pager, t0 - 2 * MINUTE, &items);
    let start = t0 + 4 * MINUTE;
    let (mut t, mut head_reads) = (start, vec![start]);
    while t < start + 3 * MINUTE {
        let Some(page) = pager.poll_read(t) else {
            t = pager.poll_timeout().unwrap_or(t + SECOND).max(t + 1);
            continue;
        };
        if page == 1 {
            head_reads.push(t);
        }
        let first = (page as usize - 1) * 18;
        let shown = items
            .get(first..(first + 18).min(90))
            .unwrap_or(&[])
            .to_vec();
        t += SECOND;
        let view = PageView {
            page,
            total: Some(90),
            items: shown,
            age: 0,
        };
        pager.handle_read(t, page, ReadOutcome::Page(view));
    }
    head_reads.push(t);
    let longest = head_reads.windows(2).map(|w| w[1] - w[0]).max();
    assert!(
        longest.is_some_and(|gap| gap <= 2 * params.head_interval + 2 * SECOND),
        "page 1 read at {:?} s",
        head_reads
            .iter()
            .map(|at| (at - start) / SECOND)
            .collect::<Vec<_>>()
    );
}

/// The pages a detector over a still list of 900 broadcasts (one reserved every 2 s,
/// newest 1 s before `t0`) reads as its first reading in its first five minutes from `t0`
/// (page 1 is the head's, which the first reading takes as its own).
fn first_reading_pages(mut pager: FerretPager, t0: Millis) -> Vec<u32> {
    let items: Vec<Listed> = (0..900)
        .map(|i| item(t0 - SECOND - 2 * i * SECOND))
        .collect();
    let mut pages = Vec::new();
    let mut t = t0;
    while t < t0 + 5 * MINUTE {
        let Some(page) = pager.poll_read(t) else {
            t = pager.poll_timeout().unwrap_or(t + SECOND).max(t + 1);
            continue;
        };
        if matches!(pager.requested, Some((_, Purpose::Bootstrap, _))) {
            pages.push(page);
        }
        let first = (page as usize - 1) * 18;
        let shown = items.get(first..(first + 18).min(900)).unwrap_or(&[]);
        t += SECOND / 2;
        let view = PageView {
            page,
            total: Some(900),
            items: shown.to_vec(),
            age: 0,
        };
        pager.handle_read(t, page, ReadOutcome::Page(view));
    }
    pages
}

/// A new detector reads the whole list first. Resumed from the store a moment after its
/// last read, it reads none of it again (the head finds what started since). Resumed ten
/// minutes after, it reads down to the keys reserved a tolerance before its last read:
/// older broadcasts that started since are beyond the tolerance. Resumed with a book its
/// first reading never finished, it reads the whole list.
#[test]
fn a_resumed_detector_reads_only_what_its_downtime_may_have_hidden() {
    let t0: Millis = 1_000 * 60 * MINUTE;
    let params = Params::default();
    let book = || {
        Book::restore(
            (0..900)
                .map(|i| BookEntry::restored(item(t0 - SECOND - 2 * i * SECOND), t0 - 2 * SECOND)),
            [],
            TieOrder::default(),
        )
    };
    let new = first_reading_pages(FerretPager::new(params.clone(), book()), t0);
    // Page 1 is the head's.
    assert_eq!(new, (2..=50).collect::<Vec<_>>());

    let moment = FerretPager::new(params.clone(), book()).resume(t0 - 2 * SECOND, None);
    assert_eq!(first_reading_pages(moment, t0), Vec::<u32>::new());

    // Keys a tolerance and a second before the last read, 15 min 1 s before `t0`: the
    // 451st broadcast from the top, on page 26.
    let last_read = t0 - 10 * MINUTE;
    let later = FerretPager::new(params.clone(), book()).resume(last_read, None);
    assert_eq!(first_reading_pages(later, t0), (2..=26).collect::<Vec<_>>());

    // Stopped during its first reading: the book holds the first ten pages, the newest
    // six minutes of keys, and is read whole.
    let part = Book::restore(
        book().entries().rev().take(180).cloned(),
        [],
        TieOrder::default(),
    );
    let stopped = FerretPager::new(params, part).resume(t0 - 2 * SECOND, None);
    assert_eq!(
        first_reading_pages(stopped, t0),
        (2..=50).collect::<Vec<_>>()
    );
}

/// A detector resumed with its memory goes on with it: the latest round, the share (held
/// within the bounds the config gives now) and the tokens saved up, which a new detector
/// drains. Its next round reaches back a tolerance before that round, and the 2½
/// tolerances that bound it count from the last read before the restart (down five
/// minutes here): the downtime is not lateness. It also knows where the end of a listing
/// without a total was, how late its frames ended, whether they end on the second their
/// keys give, how many of its serials went unseen and what page 1 showed of a cache. Times
/// ahead of the clock at the first poll (the clock was set back) are dropped, as if there
/// were no memory.
#[test]
fn a_resumed_detector_goes_on_with_its_memory() {
    let t0: Millis = 1_000 * 60 * MINUTE;
    let last_read = t0 - 5 * MINUTE;
    let params = Params::default();
    let memory = Memory {
        round_at: Some(last_read - 4 * MINUTE),
        sweep_share: 0.9,
        sweep_empty_at: Some(t0 - 10 * MINUTE),
        budget_empty_at: Some(last_read - MINUTE),
        end_offset: Some(40),
        frame_lateness: 12 * SECOND,
        frame_ends: OnTheSecond {
            outlived: 7,
            broken: false,
        },
        unseen_serials: UnseenSerials {
            counted: 900,
            unseen: 120,
        },
        page_cache: PageCache {
            repeats: 9,
            unchanged: 28 * SECOND,
            changed: 31 * SECOND,
            busy_repeats: 5,
            busy_unchanged: 42 * SECOND,
            aged: true,
        },
    };
    let high = params.sweep_share + SHARE_RISE;
    let resumed = |memory| {
        let mut pager = FerretPager::new(params.clone(), Book::new()).resume(last_read, memory);
        assert_eq!(pager.poll_read(t0), Some(1), "the head's first page");
        let end = pager.last_page();
        (pager.memory().unwrap(), pager.recent_region_oldest(t0), end)
    };
    let (kept, oldest, end) = resumed(Some(memory));
    // The main bucket filled while the detector was down, up to its burst, and the head's
    // read took one token.
    let spacing = |share: f64| spacing_for(shared_rate(&params) * (1.0 - share));
    let burst = Millis::from(params.burst);
    let expected = Memory {
        sweep_share: high,
        budget_empty_at: Some(t0 - (burst - 1) * spacing(high)),
        ..memory
    };
    assert_eq!(kept, expected);
    assert_eq!(oldest, t0 - 14 * MINUTE - KEY_RESOLUTION);
    // 40 broadcasts in the list, of which the book knows none: 3 pages of 18.
    assert_eq!(end, Some(3));
    // Frames may end up to a quarter past the lateness seen before the restart.
    let late = FerretPager::new(params.clone(), Book::new()).resume(last_read, Some(memory));
    assert_eq!(late.frame_ends.window(), 15 * SECOND);
    // Many of its serials went unseen before the restart: its rounds read every page from the
    // first, without counting again.
    assert!(late.holes.many());
    // Frames shown to end on the second before the restart are trusted to after it, and
    // a listing that broke that trust is not trusted again.
    let on_the_second = |outlived, broken| {
        let memory = Memory {
            frame_lateness: 0,
            frame_ends: OnTheSecond { outlived, broken },
            ..memory
        };
        let pager = FerretPager::new(params.clone(), Book::new()).resume(last_read, Some(memory));
        pager.frame_ends.window()
    };
    assert_eq!(on_the_second(TRUST_AFTER, false), 0);
    assert_eq!(on_the_second(TRUST_AFTER - 1, false), KEY_RESOLUTION);
    assert_eq!(on_the_second(TRUST_AFTER, true), KEY_RESOLUTION);
    let fresh = Memory {
        round_at: None,
        sweep_share: params.sweep_share,
        sweep_empty_at: Some(t0),
        budget_empty_at: Some(t0 - (burst - 1) * spacing(params.sweep_share)),
        end_offset: None,
        frame_lateness: 0,
        frame_ends: OnTheSecond::default(),
        unseen_serials: UnseenSerials::default(),
        page_cache: PageCache::default(),
    };
    assert_eq!(resumed(None), (fresh, t0 - 12 * MINUTE - 30 * SECOND, None));
    let ahead = Memory {
        round_at: Some(t0 + MINUTE),
        sweep_share: params.sweep_share,
        sweep_empty_at: Some(t0 + MINUTE),
        budget_empty_at: Some(t0 + MINUTE),
        end_offset: None,
        frame_lateness: 0,
        frame_ends: OnTheSecond::default(),
        unseen_serials: UnseenSerials::default(),
        page_cache: PageCache::default(),
    };
    assert_eq!(resumed(Some(ahead)).0, fresh);
}

/// A detector resumed a moment after its last read finds its main bucket as that read left
/// it: a restart does not refill it. A new detector's is full.
#[test]
fn a_restart_does_not_refill_the_main_bucket() {
    let t0: Millis = 1_000 * 60 * MINUTE;
    let params = Params::default();
    let memory = Memory {
        round_at: None,
        sweep_share: params.sweep_share,
        sweep_empty_at: Some(t0 - 2 * SECOND),
        budget_empty_at: Some(t0 - 2 * SECOND),
        end_offset: None,
        frame_lateness: 0,
        frame_ends: OnTheSecond::default(),
        unseen_serials: UnseenSerials::default(),
        page_cache: PageCache::default(),
    };
    let resumed =
        FerretPager::new(params.clone(), Book::new()).resume(t0 - 2 * SECOND, Some(memory));
    assert_eq!(resumed.memory(), Some(memory));
    // Two seconds hold no token (one comes every few seconds at the main bucket's rate).
    assert!(resumed.budget.ready_at(t0, 0) > t0);
    let new = FerretPager::new(params.clone(), Book::new());
    assert!(new.budget.allows(t0, params.burst - 1));
}

/// A head sweep due while boundary reads have spent the main bucket borrows its reads from
/// the sweep's bucket rather than wait for the main bucket's next token; the main bucket's
/// next tokens go back to the sweep before they pay for another read.
#[test]
fn a_due_head_borrows_from_the_sweep_and_the_main_bucket_pays_it_back() {
    let t0: Millis = 1_000 * 60 * MINUTE;
    let mut pager = FerretPager::new(Params::default(), Book::new());
    pager.budget.drain(t0);
    pager.head_at = t0;
    let full = ROUND_MAX - 1;
    assert!(pager.sweep_budget.allows(t0, full));

    let head = pager.choose_head(t0);
    assert!(matches!(head, Some((1, Purpose::Head(1), Payer::Sweep))));
    assert_eq!(pager.head_loan, 1);
    pager.sweep_budget.take(t0);
    // The head's page 2 borrows as well.
    pager.head_page = Some(2);
    let later = t0 + pager.params.min_interval;
    assert!(!pager.budget.allows(later, 0));
    let head = pager.choose_head(later);
    assert!(matches!(head, Some((2, Purpose::Head(2), Payer::Sweep))));
    assert_eq!(pager.head_loan, 2);
    pager.sweep_budget.take(later);
    pager.head_page = None;
    pager.head_at = later + pager.params.head_interval;

    // The main bucket's next two tokens go back to the sweep's.
    let repaid = pager.budget.ready_at(later, 1);
    assert!(repaid < pager.head_at);
    assert!(!pager.sweep_budget.allows(repaid, full - 1));
    pager.choose(repaid, true);
    assert_eq!(pager.head_loan, 0);
    assert!(!pager.budget.allows(repaid, 0));
    assert!(pager.sweep_budget.allows(repaid, full - 1));

    // With the main bucket holding a token, the head pays from it.
    let paid = pager.budget.ready_at(repaid, 0);
    pager.head_at = paid;
    let head = pager.choose_head(paid);
    assert!(matches!(head, Some((1, Purpose::Head(1), Payer::Main))));
    assert_eq!(pager.head_loan, 0);
}

/// The main bucket pays a boundary read that threatens the grace before the head's loan.
#[test]
fn a_boundary_read_past_half_the_grace_goes_before_the_heads_loan() {
    let t0: Millis = 1_000 * 60 * MINUTE;
    let params = Params::default();
    let mut pager = FerretPager::new(params.clone(), Book::new());
    let late = item(t0 - params.frame - params.grace / 2 - 10 * SECOND);
    read(&mut pager, t0 - 5 * MINUTE, 1, 1, vec![late]);
    assert!(pager
        .most_overdue(t0)
        .is_some_and(|(_, due)| t0 - due >= params.grace / 2));
    pager.budget.drain(t0);
    pager.head_at = t0;
    assert!(matches!(pager.choose_head(t0), Some((1, _, Payer::Sweep))));
    pager.sweep_budget.take(t0);
    pager.head_at = t0 + params.head_interval;

    let paid = pager.budget.ready_at(t0, 0);
    let chosen = pager.choose(paid, true);
    assert_eq!(pager.head_loan, 1);
    assert!(matches!(chosen, Some((_, Purpose::Due(_), Payer::Main))));
}

/// Chains of pages prove gaps where the listing's order is not its serials' order: equals
/// seen both ways round, or trusted to come smaller serial first. Not where they come larger
/// serial first (Niconico's order), nor before any order has shown itself often enough.
#[test]
fn chains_prove_gaps_where_the_list_is_not_in_the_serials_order() {
    let trust = crate::listing::ties::TRUST_AFTER;
    let chains_prove = |larger_first, smaller_first| {
        let ties = TieOrder {
            larger_first,
            smaller_first,
        };
        FerretPager::new(Params::default(), Book::restore([], [], ties)).chains_prove()
    };
    assert!(!chains_prove(trust, 0));
    assert!(chains_prove(0, trust));
    assert!(chains_prove(trust, 1));
    assert!(chains_prove(3, 2));
    assert!(!chains_prove(0, trust - 1));
    assert!(!chains_prove(0, 0));
}
