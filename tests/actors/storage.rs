use ferret::listing::{
    Event, EventKind, Listed, Memory, OnTheSecond, PageCache, TieOrder, UnseenSerials,
};
use ferret::stories::NewsItem;
use ferret_actors::storage::{migrations, Detection, Store};

#[test]
fn migrations_are_valid() {
    migrations()
        .validate()
        .expect("every migration applies in order");
}

#[test]
fn store_is_wal_and_keeps_records_across_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/ferret.db");
    {
        let store = Store::open(&path).expect("creates the directory and the database");
        assert_eq!(store.journal_mode().unwrap(), "wal");
        assert_eq!(store.schema_version().unwrap(), 20);
        let run = store.record_run_started("test", 1_000).unwrap();
        store
            .record_restart("ferret", 2, "panicked: boom", 1_500)
            .unwrap();
        store.record_run_stopped(run, 2_000).unwrap();
        store.record_run_started("test", 3_000).unwrap(); // never stopped: a crash
    }
    let store = Store::open(&path).expect("reopens");
    assert_eq!(store.count_restarts().unwrap(), 1);
    assert_eq!(store.count_runs().unwrap(), (2, 1));
}

#[test]
fn an_unusable_path_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"not a directory").unwrap();
    let err = Store::open(&file.join("ferret.db")).err().expect("fails");
    assert!(err.to_string().contains("a-file"), "{err}");
}

fn detection(kind: EventKind, id: &str, key: i64, at: i64) -> Detection {
    Detection {
        event: Event {
            kind,
            item: Listed {
                id: id.into(),
                key,
                title: format!("title {id}").into(),
                link: format!("http://example.com/{id}").into(),
            },
            at,
        },
        line: format!("{{\"id\":\"{id}\",\"at\":{at}}}"),
    }
}

/// A listing's book and journal survive a reopen: On Air adds to the book, Off Air moves an
/// id to the gone list, and events stay pending until marked emitted, when they leave the
/// journal.
#[test]
fn listing_state_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ferret.db");
    {
        let mut store = Store::open(&path).unwrap();
        let seqs = store
            .record_detections(
                "sim",
                &[
                    detection(EventKind::OnAir, "lv1", 1_000, 5_000),
                    detection(EventKind::OnAir, "lv2", 2_000, 5_000),
                    detection(EventKind::OnAir, "lv3", 3_000, 5_000),
                ],
                0,
            )
            .unwrap();
        store.mark_emitted(&seqs).unwrap();
        let seqs = store
            .record_detections(
                "sim",
                &[detection(EventKind::OffAir, "lv2", 2_000, 9_000)],
                0,
            )
            .unwrap();
        assert_eq!(seqs.len(), 1);
        // Another listing's state stays apart.
        store
            .record_detections("other", &[detection(EventKind::OnAir, "lv9", 1, 2)], 0)
            .unwrap();
    }
    let mut store = Store::open(&path).unwrap();
    let state = store.load_listing("sim").unwrap();
    let mut ids: Vec<&str> = state.on_air.iter().map(|e| &*e.item.id).collect();
    ids.sort_unstable();
    assert_eq!(ids, ["lv1", "lv3"]);
    assert_eq!(state.on_air[0].seen_at, 5_000);
    assert_eq!(state.gone.len(), 1);
    assert_eq!((&*state.gone[0].0, state.gone[0].1), ("lv2", 9_000));
    assert_eq!(
        state.pending.len(),
        1,
        "only the Off Air is not marked emitted"
    );
    assert!(state.pending[0].1.contains("lv2"));

    // Gone ids older than the cut-off are forgotten with the next detections.
    store
        .record_detections(
            "sim",
            &[detection(EventKind::OnAir, "lv4", 4_000, 10_000)],
            9_500,
        )
        .unwrap();
    assert!(store.load_listing("sim").unwrap().gone.is_empty());
    drop(store);

    // The journal holds the events not yet emitted and no more: the sim's Off Air and On Air
    // and the other listing's On Air, not the three emitted.
    let journal = rusqlite::Connection::open(&path).unwrap();
    let rows: i64 = journal
        .query_row("SELECT count(*) FROM listing_events", [], |row| row.get(0))
        .unwrap();
    assert_eq!(rows, 3);
}

/// A listing's reads come back in the order they started, each listing's apart, and those
/// before the cut-off are forgotten as later ones are recorded; a broadcast on air is known
/// as last seen by a read (an id the book does not hold changes nothing).
#[test]
fn listing_reads_survive_a_reopen_within_their_hour() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ferret.db");
    {
        let mut store = Store::open(&path).unwrap();
        store
            .record_detections("sim", &[detection(EventKind::OnAir, "lv1", 500, 900)], 0)
            .unwrap();
        for at in [1_000, 3_000, 2_000] {
            let seen = ["lv1".into(), "lv2".into()];
            store
                .record_listing_read("sim", at, &seen, None, TieOrder::default(), 0)
                .unwrap();
        }
        store
            .record_listing_read("other", 2_500, &[], None, TieOrder::default(), 0)
            .unwrap();
    }
    let mut store = Store::open(&path).unwrap();
    let state = store.load_listing("sim").unwrap();
    assert_eq!(state.reads, [1_000, 2_000, 3_000]);
    assert_eq!(state.on_air.len(), 1);
    assert_eq!(
        (&*state.on_air[0].item.id, state.on_air[0].seen_at),
        ("lv1", 3_000)
    );
    store
        .record_listing_read("sim", 4_000, &[], None, TieOrder::default(), 2_000)
        .unwrap();
    assert_eq!(
        store.load_listing("sim").unwrap().reads,
        [2_000, 3_000, 4_000]
    );
    assert_eq!(store.load_listing("other").unwrap().reads, [2_500]);
}

/// What a listing's detector learnt beyond its book (its sweep and buckets, the end of a list without a
/// total, how late its frames end, how many of its serials went unseen, what page 1 showed of a cache) and what its pages showed of the order among equal keys
/// come back after a reopen as the latest read left them, each listing's apart; a read
/// without the memory (a strategy that keeps none) forgets it.
#[test]
fn a_listings_memory_is_the_latest_reads_and_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ferret.db");
    let memory = |round_at, share, end_offset, frame_lateness, (outlived, broken)| Memory {
        round_at,
        sweep_share: share,
        sweep_empty_at: Some(1_500),
        // Full (never drained) in the first, drained in the second.
        budget_empty_at: round_at.map(|at: i64| at + 350),
        end_offset,
        frame_lateness,
        frame_ends: OnTheSecond { outlived, broken },
        // Nothing counted yet in the first, some serials in the second.
        unseen_serials: UnseenSerials {
            counted: round_at.map_or(0, |_| 640),
            unseen: round_at.map_or(0, |_| 131),
        },
        // No cache shown in the first; in the second one of about 30 s, which busy repeats
        // showed too, and which gives its age.
        page_cache: match round_at {
            None => PageCache::default(),
            Some(_) => PageCache {
                repeats: 12,
                unchanged: 29_000,
                changed: 33_500,
                busy_repeats: 5,
                busy_unchanged: 31_000,
                aged: true,
            },
        },
    };
    let ties = |larger_first, smaller_first| TieOrder {
        larger_first,
        smaller_first,
    };
    {
        let mut store = Store::open(&path).unwrap();
        let state = store.load_listing("sim").unwrap();
        assert_eq!((state.memory, state.ties), (None, ties(0, 0)));
        let first = Some(memory(None, 0.25, None, 0, (3, false)));
        store
            .record_listing_read("sim", 1_000, &[], first, ties(40, 0), 0)
            .unwrap();
        let second = Some(memory(Some(1_200), 0.3, Some(-4), 7_500, (40, true)));
        store
            .record_listing_read("sim", 2_000, &[], second, ties(1_100, 0), 0)
            .unwrap();
        store
            .record_listing_read("other", 2_000, &[], first, ties(3, 2), 0)
            .unwrap();
    }
    let mut store = Store::open(&path).unwrap();
    let state = store.load_listing("sim").unwrap();
    assert_eq!(
        state.memory,
        Some(memory(Some(1_200), 0.3, Some(-4), 7_500, (40, true)))
    );
    assert_eq!(state.ties, ties(1_100, 0));
    assert_eq!(store.load_listing("other").unwrap().ties, ties(3, 2));
    store
        .record_listing_read("other", 3_000, &[], None, TieOrder::default(), 0)
        .unwrap();
    assert_eq!(store.load_listing("other").unwrap().memory, None);
    assert_eq!(
        store.load_listing("sim").unwrap().memory,
        Some(memory(Some(1_200), 0.3, Some(-4), 7_500, (40, true)))
    );
}

/// News items come back from the store as they were recorded, the feed's language with
/// them (a replay stems each item as the first filing did), in filing order.
#[test]
fn news_items_keep_their_language_across_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ferret.db");
    let item = |id: &str, language: Option<&str>| NewsItem {
        id: id.into(),
        source: "http://127.0.0.1/feed".into(),
        title: format!("Titel {id}"),
        link: format!("http://127.0.0.1/{id}"),
        published: 1_000,
        text: "<p>Text</p>".into(),
        language: language.map(String::from),
    };
    let items = [item("1", Some("de-DE")), item("2", None)];
    Store::open(&path)
        .unwrap()
        .record_news_items(&items, &[], 0, 0)
        .unwrap();
    let store = Store::open(&path).unwrap();
    assert_eq!(store.load_news_items().unwrap(), items);
}

/// Items older than the window are forgotten, but for the last ones filed that the
/// clusterer's statistics still count: a replay must count them too.
#[test]
fn the_last_news_items_filed_are_kept_past_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("ferret.db")).unwrap();
    let item = |i: i64| NewsItem {
        id: i.to_string(),
        source: "http://127.0.0.1/feed".into(),
        title: format!("Title {i}"),
        link: format!("http://127.0.0.1/{i}"),
        published: i * 1_000,
        text: String::new(),
        language: None,
    };
    let ids = |store: &Store| -> Vec<String> {
        (store.load_news_items().unwrap().into_iter())
            .map(|item| item.id)
            .collect()
    };
    let items: Vec<NewsItem> = (1..=5).map(item).collect();
    // Fewer items than kept: none goes.
    store.record_news_items(&items, &[], 10_000, 8).unwrap();
    assert_eq!(ids(&store), ["1", "2", "3", "4", "5"]);
    store.record_news_items(&[], &[], 10_000, 2).unwrap();
    assert_eq!(ids(&store), ["4", "5"]);
    // Inside the window, an item stays whatever is kept.
    store.record_news_items(&[item(6)], &[], 5_000, 0).unwrap();
    assert_eq!(ids(&store), ["5", "6"]);
}
