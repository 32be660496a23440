//! The discovery tables of the store (migrations 4 and 5): pages and links, feedback, hittage
//! computations, fingerprints and representatives, all surviving a reopen.

use std::collections::HashMap;

use ferret::discovery::advisor::RepresentativeHistory;
use ferret::discovery::hittage::{Feedback, FeedbackKind};
use ferret_actors::storage::{
    migrations, DiscoveryState, FingerprintPool, FingerprintState, PageRecord, Representative,
    Store,
};

fn page(url: &str, fetched_at_ms: i64, links: &[&str]) -> PageRecord {
    PageRecord {
        title: Some(format!("title of {url}")),
        fetched_at_ms: Some(fetched_at_ms),
        size: Some(1234),
        lang: Some("en".into()),
        attributes: r#"{"images":3}"#.into(),
        accepted: true,
        approved_by_filter: Some("filter-1".into()),
        links: links.iter().map(|l| l.to_string()).collect(),
        ..PageRecord::new(url)
    }
}

#[test]
fn pages_and_links_are_stored_in_one_batch_and_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ferret.db");
    {
        let mut store = Store::open(&path).unwrap();
        let ids = store
            .upsert_pages(&[
                page("http://a/", 1_000, &["http://b/", "http://c/", "http://a/"]),
                page("http://b/", 2_000, &["http://c/", "http://c/"]),
            ])
            .unwrap();
        assert_eq!(ids.len(), 2);
        // C is a placeholder: linked, not fetched.
        let c = store.load_page("http://c/").unwrap().unwrap();
        assert_eq!(c.fetched_at_ms, None);
        assert_eq!(c.attributes, "{}");
        assert!(!c.accepted);
        // Fetching C later fills the placeholder in, keeping the links into it.
        store
            .upsert_pages(&[page("http://c/", 3_000, &["http://a/"])])
            .unwrap();
        // Re-fetching A replaces its links.
        let again = store
            .upsert_pages(&[page("http://a/", 4_000, &["http://b/"])])
            .unwrap();
        assert_eq!(again[0], ids[0], "a page keeps its id");
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(
        store.load_links().unwrap(),
        [
            ("http://a/".to_string(), "http://b/".to_string()),
            ("http://b/".to_string(), "http://c/".to_string()),
            ("http://c/".to_string(), "http://a/".to_string()),
        ]
    );
    let a = store.load_page("http://a/").unwrap().unwrap();
    assert_eq!(a.links, ["http://b/"]);
    assert_eq!(a.size, Some(1234));
    assert_eq!(a.approved_by_filter.as_deref(), Some("filter-1"));
    assert_eq!(a.attributes, r#"{"images":3}"#);
    assert!(store.load_page("http://nowhere/").unwrap().is_none());
    assert_eq!(
        store.fetched_since(2_000).unwrap(),
        ["http://b/", "http://c/", "http://a/"]
    );
    assert_eq!(store.fetched_since(3_500).unwrap(), ["http://a/"]);
}

#[test]
fn attributes_that_are_not_json_fail_the_whole_batch() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("ferret.db")).unwrap();
    let bad = PageRecord {
        attributes: "{not json".into(),
        ..page("http://b/", 1, &[])
    };
    assert!(store
        .upsert_pages(&[page("http://a/", 1, &["http://x/"]), bad])
        .is_err());
    assert!(store.load_page("http://a/").unwrap().is_none());
    assert!(store.load_links().unwrap().is_empty());
}

#[test]
fn feedback_and_hittage_history_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ferret.db");
    let events = [
        Feedback::new("http://b/", FeedbackKind::Dwell, Some(30.0), 2_000).unwrap(),
        Feedback::new("http://a/", FeedbackKind::Like, None, 1_000).unwrap(),
        Feedback::new("http://c/", FeedbackKind::Dislike, None, 2_000).unwrap(),
    ];
    {
        let mut store = Store::open(&path).unwrap();
        let stored = store.record_feedback(&events).unwrap();
        assert_eq!(stored.len(), 3);
        assert!(stored[0].id < stored[1].id);
        store.upsert_pages(&[page("http://a/", 1, &[])]).unwrap();
        for n in 1..=4u64 {
            let hittage = HashMap::from([
                ("http://a/".to_string(), 1.0),
                ("http://b/".to_string(), 0.1 * n as f64),
                ("http://c/".to_string(), -1.0),
            ]);
            let lighthouses = [("http://a/".to_string(), 1.0)];
            store
                .record_hittage(n, 10_000 + n as i64, &hittage, &lighthouses, 3)
                .unwrap();
        }
    }
    let store = Store::open(&path).unwrap();
    // Oldest first, ties in recording order.
    assert_eq!(
        store.load_feedback().unwrap(),
        [events[1].clone(), events[0].clone(), events[2].clone()]
    );
    let history = store.hittage_history(10).unwrap();
    let numbers: Vec<u64> = history.iter().map(|c| c.computation).collect();
    assert_eq!(numbers, [2, 3, 4], "only the last three are kept");
    let latest = store.latest_hittage().unwrap().unwrap();
    assert_eq!(latest.computation, 4);
    assert_eq!(latest.at_ms, 10_004);
    assert_eq!(latest.hittage["http://b/"], 0.4);
    assert_eq!(latest.lighthouses, [("http://a/".to_string(), 1.0)]);

    let pages = store.pages_by_hittage(10).unwrap();
    let rows: Vec<(&str, f64, bool, bool)> = pages
        .iter()
        .map(|p| (p.url.as_str(), p.hittage, p.lighthouse, p.accepted))
        .collect();
    assert_eq!(
        rows,
        [
            ("http://a/", 1.0, true, true),
            ("http://b/", 0.4, false, false),
            ("http://c/", -1.0, false, false),
        ]
    );
    assert_eq!(pages[0].title.as_deref(), Some("title of http://a/"));
    assert_eq!(store.pages_by_hittage(1).unwrap().len(), 1);
}

#[test]
fn pages_without_hittage_count_zero() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("ferret.db")).unwrap();
    store
        .upsert_pages(&[page("http://a/", 1, &["http://b/"])])
        .unwrap();
    let pages = store.pages_by_hittage(10).unwrap();
    assert_eq!(pages.len(), 2);
    assert!(pages.iter().all(|p| p.hittage == 0.0 && !p.lighthouse));
    assert!(store.latest_hittage().unwrap().is_none());
}

fn print(ident: u64, body: &str, fetched: u64, reliability: f64) -> FingerprintState {
    FingerprintState {
        ident,
        body: format!(r#"{{"id":{ident},"kind":"{body}"}}"#),
        created_at_ms: 100,
        fetched,
        approved: fetched / 2,
        reliability,
    }
}

fn history(times: u32, fetched: u32, accepted: u32) -> RepresentativeHistory {
    RepresentativeHistory {
        times,
        fetched,
        accepted,
    }
}

#[test]
fn the_discovery_state_is_synced_flushed_and_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ferret.db");
    {
        let mut store = Store::open(&path).unwrap();
        let first = DiscoveryState {
            ferret: vec![print(1, "title", 0, 1.0), print(2, "lang", 0, 1.0)],
            filters: vec![print(1, "filter", 3, 1.0)],
            representatives: vec![
                ("http://a/".into(), history(1, 0, 0)),
                ("http://b/".into(), history(1, 0, 0)),
            ],
        };
        store.save_discovery_state(&first, 100).unwrap();
        // A round later: 1 counted on, 2 flushed, 3 made; the filter lost reliability; a chosen
        // again, b's counts moved.
        let second = DiscoveryState {
            ferret: vec![print(1, "title", 10, 1.0), print(3, "size", 0, 1.0)],
            filters: vec![print(1, "filter", 5, 0.75)],
            representatives: vec![
                ("http://a/".into(), history(2, 4, 1)),
                ("http://b/".into(), history(1, 6, 3)),
            ],
        };
        store.save_discovery_state(&second, 200).unwrap();
        // A body the store cannot read as JSON is refused, and nothing of that save is kept.
        let broken = DiscoveryState {
            ferret: vec![FingerprintState {
                body: "not json".into(),
                ..print(4, "x", 0, 1.0)
            }],
            ..second.clone()
        };
        assert!(store.save_discovery_state(&broken, 300).is_err());
        assert_eq!(store.load_discovery_state().unwrap(), second);
    }
    let store = Store::open(&path).unwrap();
    let state = store.load_discovery_state().unwrap();
    let idents: Vec<u64> = state.ferret.iter().map(|f| f.ident).collect();
    assert_eq!(idents, [1, 3]);
    assert_eq!((state.ferret[0].fetched, state.ferret[0].approved), (10, 5));
    assert_eq!(state.filters[0].reliability, 0.75);
    // The flushed fingerprint is kept, with its flush time.
    let all = store
        .load_fingerprints(FingerprintPool::Ferret, true)
        .unwrap();
    assert_eq!(all.len(), 3);
    let flushed: Vec<_> = all.iter().filter_map(|f| f.flushed_at_ms).collect();
    assert_eq!(flushed, [200]);
    let representatives = store.load_representatives().unwrap();
    assert_eq!(
        representatives,
        [
            (
                "http://a/".to_string(),
                Representative {
                    times_chosen: 2,
                    fetched: 4,
                    accepted: 1,
                    last_at_ms: 200
                }
            ),
            (
                "http://b/".to_string(),
                Representative {
                    times_chosen: 1,
                    fetched: 6,
                    accepted: 3,
                    last_at_ms: 100
                }
            ),
        ]
    );
}

#[test]
fn a_fetched_page_keeps_its_approval_and_migration_7_marks_the_pages_a_filter_passed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ferret.db");
    // A store as version 6 left it, before pages had the fingerprints' verdict.
    {
        let mut conn = rusqlite::Connection::open(&path).unwrap();
        migrations().to_version(&mut conn, 6).unwrap();
        conn.execute(
            "INSERT INTO pages (url, fetched_at_ms, accepted, approved_by_filter)
             VALUES ('http://passed/', 1, 1, '3')",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO pages (url, fetched_at_ms) VALUES ('http://kept/', 1)",
            [],
        )
        .unwrap();
    }
    let mut store = Store::open(&path).unwrap();
    let approved = |store: &Store, url: &str| store.load_page(url).unwrap().map(|p| p.approved);
    assert_eq!(approved(&store, "http://passed/"), Some(true));
    assert_eq!(approved(&store, "http://kept/"), Some(false));

    // An approval is marked once its page is written, with the fingerprint that approved
    // it first; a URL not stored is left out.
    let fetched = PageRecord {
        fetched_at_ms: Some(2),
        ..PageRecord::new("http://new/")
    };
    store
        .write_map(
            std::slice::from_ref(&fetched),
            &[("http://new/".into(), 7), ("http://unknown/".into(), 7)],
        )
        .unwrap();
    store.write_map(&[], &[("http://new/".into(), 8)]).unwrap();
    assert_eq!(approved(&store, "http://new/"), Some(true));
    assert_eq!(approved(&store, "http://unknown/"), None);
    let by = |store: &Store| {
        let page = store.load_page("http://new/").unwrap().unwrap();
        page.approved_by_fingerprint
    };
    assert_eq!(by(&store).as_deref(), Some("7"));
    // Written again (not approved this time), it stays approved, by the same fingerprint.
    store.upsert_pages(&[fetched]).unwrap();
    assert_eq!(approved(&store, "http://new/"), Some(true));
    assert_eq!(by(&store).as_deref(), Some("7"));

    // The page list says it.
    let listed: HashMap<String, bool> = store
        .pages_by_hittage(10)
        .unwrap()
        .into_iter()
        .map(|p| (p.url, p.approved))
        .collect();
    assert!(listed["http://passed/"] && listed["http://new/"]);
    assert!(!listed["http://kept/"]);
}
