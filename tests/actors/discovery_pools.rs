//! The discovery loop's pools with a real PageDb and a local site: Ferrets fetch, parse and
//! compute features for the loop's orders; Mapmakers write the loop's events to the store,
//! in order per page, batched while PageDb is busy, and answer a flush once it is written;
//! Filters take the loop's votes.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use ferret::discovery::engine::{AcceptedPage, DiscoveryEvent, VoteOrder};
use ferret::discovery::features::{FeatureKind, Features, TermStats};
use ferret::discovery::filter::{FilterBank, FilterFeature, FilterFingerprint, FilterParams};
use ferret::discovery::frontier::FetchOrder;
use ferret::discovery::hittage::{Feedback, FeedbackKind};
use ferret::discovery::page::parse_page;
use ferret::discovery::robots::RobotsOutcome;
use ferret::discovery::url::AddressPolicy;
use ferret::stories::text::Analyzer;
use ferret::supervision::RestartPolicy;
use ferret_actors::discover::Done;
use ferret_actors::ferret_advisor::new_feedback;
use ferret_actors::ferret_crawler::{Ferret, PageCache};
use ferret_actors::filter::Filter;
use ferret_actors::mapmaker::Mapmaker;
use ferret_actors::messages::{
    Envelope, FeedbackAfter, FetchPage, FlushMap, MapPage, RecordFeedback, VotePage,
};
use ferret_actors::page_db::PageDb;
use ferret_actors::page_fetcher::{PageFetcher, PageFetcherConfig};
use ferret_actors::pool::{Pool, Route};
use ferret_actors::storage::Store;
use ferret_actors::supervisor::{Runtime, RuntimeBuilder, RuntimeOptions};
use url::Url;

use crate::support::http::{Response, TestServer};

fn options() -> RuntimeOptions {
    RuntimeOptions {
        mailbox_capacity: 1024,
        ..crate::test_options()
    }
}

fn page_order(url: &str) -> FetchOrder {
    let url = Url::parse(url).unwrap();
    FetchOrder::Page {
        host: url.host_str().unwrap().to_string(),
        url,
        priority: 1.0,
    }
}

#[actix::test]
async fn ferrets_fetch_parse_and_compute_features_and_a_failure_is_an_answer() {
    let server = TestServer::start(|request, _| match request.path.as_str() {
        "/robots.txt" => Response::ok("text/plain", "User-agent: *\nDisallow: /private\n"),
        "/otters.html" => Response::ok(
            "text/html",
            r#"<title>Sea otters</title><p>Otters float on kelp.</p><a href="/kelp.html">kelp</a>"#,
        ),
        "/photo.jpg" => Response::ok("image/jpeg", vec![0xff, 0xd8, 0xff]),
        _ => Response::status(404),
    });
    let fetcher = PageFetcher::new(PageFetcherConfig {
        policy: AddressPolicy {
            allow_loopback: true,
            ..AddressPolicy::default()
        },
        ..PageFetcherConfig::default()
    })
    .unwrap();
    let ferrets: Pool<Ferret> = Pool::new(2);
    let cache = PageCache::default();
    let mut builder = RuntimeBuilder::new(options());
    let shared = cache.clone();
    builder.supervise(&ferrets, RestartPolicy::Permanent, move |_| {
        Ok(Ferret::new(fetcher.clone(), shared.clone()))
    });
    let runtime: Runtime = builder.start().unwrap();
    let fetch: Route<FetchPage> = ferrets.route();
    let ask = |order| fetch.send(Envelope::new(FetchPage { order }));

    let Done::Page { url, result } = ask(page_order(&server.url("/otters.html"))).await.unwrap()
    else {
        panic!("a page order is answered with a page");
    };
    assert_eq!(url.path(), "/otters.html");
    let (doc, features) = *result.unwrap();
    assert_eq!(doc.title, "Sea otters");
    assert_eq!(doc.links.len(), 1);
    assert_eq!(doc.links[0].url.path(), "/kelp.html");
    let words = features.title_words.expect("the title's words computed");
    assert!(words.iter().any(|w| w.starts_with("otter")), "{words:?}");
    // In the shared cache, no verdict yet.
    let cached = cache.get(url.as_str()).expect("a fetched page is cached");
    assert!(cached.fetched_at_ms > 0 && !cached.approved && !cached.accepted);

    for path in ["/photo.jpg", "/missing.html"] {
        match ask(page_order(&server.url(path))).await.unwrap() {
            Done::Page { result: Err(_), .. } => {}
            other => panic!("{path}: not a page, yet {other:?}"),
        }
    }
    assert_eq!(cache.len(), 1, "what gave no page is not cached");

    let robots = Url::parse(&server.url("/robots.txt")).unwrap();
    let Done::Robots { host, outcome } = ask(FetchOrder::Robots {
        host: "local".into(),
        url: robots,
    })
    .await
    .unwrap() else {
        panic!("a robots order is answered with robots");
    };
    assert_eq!(host, "local");
    let RobotsOutcome::Found(rules) = outcome else {
        panic!("the rules were read: {outcome:?}");
    };
    assert!(!rules.allowed(&Url::parse(&server.url("/private/x")).unwrap()));

    // Both Ferrets took orders.
    for index in 0..2 {
        assert!(ferrets.stats(index).handled.load(Ordering::Relaxed) > 0);
    }
    runtime.shutdown();
}

fn fetched(url: &str, at_ms: i64) -> DiscoveryEvent {
    DiscoveryEvent::Fetched {
        url: url.to_string(),
        title: format!("title of {url}"),
        at_ms,
        features: Some(Box::default()),
        links: vec![format!("{url}/next")],
    }
}

#[actix::test]
async fn mapmakers_write_every_event_in_order_batched_and_a_flush_waits_for_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ferret.db");
    let page_db: Pool<PageDb> = Pool::new(1);
    let mapmakers: Pool<Mapmaker> = Pool::new(2);
    let mut builder = RuntimeBuilder::new(options());
    let store_path = path.clone();
    builder.supervise(&page_db, RestartPolicy::Permanent, move |_| {
        Ok(PageDb::new(Store::open(&store_path)?))
    });
    let upsert = page_db.route();
    builder.supervise(&mapmakers, RestartPolicy::Permanent, move |_| {
        Ok(Mapmaker::new(upsert.clone()))
    });
    let runtime: Runtime = builder.start().unwrap();
    let map: Route<MapPage> = mapmakers.route();
    let flush: Route<FlushMap> = mapmakers.route();

    const PAGES: usize = 300;
    let urls: Vec<String> = (0..PAGES).map(|i| format!("http://site/p{i}")).collect();
    for (i, url) in urls.iter().enumerate() {
        map.do_send_keyed(
            url.as_str(),
            Envelope::new(MapPage {
                event: fetched(url, i as i64),
            }),
        )
        .unwrap();
        if i % 10 == 0 {
            // Accepted right after its fetch: the later record wins in the store.
            let accepted = AcceptedPage {
                url: url.clone(),
                canonical: None,
                title: format!("title of {url}"),
                language: Some("en".into()),
                size: 100,
                fetched_at_ms: i as i64,
                features: Features::default(),
                links: vec![],
                filter: Some(7),
                fingerprint: Some(1),
                score: 0.5,
            };
            map.do_send_keyed(
                url.as_str(),
                Envelope::new(MapPage {
                    event: DiscoveryEvent::Accepted(Box::new(accepted)),
                }),
            )
            .unwrap();
        }
    }
    for index in 0..2 {
        flush
            .send_to(index, Envelope::new(FlushMap))
            .await
            .unwrap()
            .unwrap();
    }
    // Everything is written once the flushes are answered.
    let store = Store::open(&path).unwrap();
    let mut stored = store.fetched_since(0).unwrap();
    stored.sort();
    let mut want = urls.clone();
    want.sort();
    assert_eq!(stored, want);
    let accepted = store.load_accepted().unwrap();
    assert_eq!(accepted.len(), PAGES / 10);
    assert!(accepted
        .iter()
        .all(|p| p.approved_by_filter.as_deref() == Some("7")));
    // Batched: far fewer transactions than records.
    let writes = page_db.stats(0).handled.load(Ordering::Relaxed);
    let records = (PAGES + PAGES / 10) as u64;
    assert!(
        writes * 4 < records,
        "{writes} writes for {records} records"
    );

    // A flush with nothing waiting is answered at once.
    flush
        .send_to(0, Envelope::new(FlushMap))
        .await
        .unwrap()
        .unwrap();
    runtime.shutdown();
}

fn feedback(url: &str, kind: FeedbackKind, at_ms: i64) -> Feedback {
    Feedback::new(url, kind, None, at_ms).unwrap()
}

#[actix::test]
async fn the_loop_gets_each_feedback_event_once_in_recording_order_whatever_its_at() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ferret.db");
    let page_db: Pool<PageDb> = Pool::new(1);
    let mut builder = RuntimeBuilder::new(options());
    builder.supervise(&page_db, RestartPolicy::Permanent, move |_| {
        Ok(PageDb::new(Store::open(&path)?))
    });
    let runtime: Runtime = builder.start().unwrap();
    let record: Route<RecordFeedback> = page_db.route();
    let after: Route<FeedbackAfter> = page_db.route();
    let post = |events: Vec<Feedback>| record.send(Envelope::new(RecordFeedback { events }));

    let mut last = 0;
    assert!(new_feedback(&after, &mut last).await.unwrap().is_empty());
    assert_eq!(last, 0);
    let liked = feedback("http://site/a", FeedbackKind::Like, 2_000);
    post(vec![liked.clone()]).await.unwrap().unwrap();
    assert_eq!(new_feedback(&after, &mut last).await.unwrap(), vec![liked]);
    // Posted later with an earlier `at`: the store sorts it first by time, yet the loop gets
    // it, and not the like again (by position it would get the like twice, this never).
    let disliked = feedback("http://site/b", FeedbackKind::Dislike, 1_000);
    post(vec![disliked.clone()]).await.unwrap().unwrap();
    assert_eq!(
        new_feedback(&after, &mut last).await.unwrap(),
        vec![disliked]
    );
    assert!(new_feedback(&after, &mut last).await.unwrap().is_empty());
    // Two at once, the second older: both, in recording order.
    let (visit, dwell) = (
        feedback("http://site/c", FeedbackKind::Visit, 5_000),
        Feedback::new("http://site/c", FeedbackKind::Dwell, Some(30.0), 500).unwrap(),
    );
    post(vec![visit.clone(), dwell.clone()])
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        new_feedback(&after, &mut last).await.unwrap(),
        vec![visit, dwell]
    );
    assert_eq!(last, 4);
    runtime.shutdown();
}

#[test]
fn the_shared_cache_keeps_verdicts_and_stays_within_its_capacity() {
    let cache = PageCache::new(16);
    cache.fetched("http://site/a", 10);
    cache.approved("http://site/a", 7);
    cache.approved("http://site/a", 8); // the first approval is the one kept
    cache.fetched("http://site/b", 11);
    cache.accepted("http://site/b", Some(9), 11);
    cache.fetched("http://site/c", 12);
    let a = cache.get("http://site/a").unwrap();
    assert!(a.approved && !a.accepted);
    assert_eq!((a.fingerprint, a.fetched_at_ms), (Some(7), 10));
    let b = cache.get("http://site/b").unwrap();
    assert!(b.approved && b.accepted && b.fingerprint == Some(9));
    assert!(!cache.get("http://site/c").unwrap().approved);
    let approved: Vec<String> = cache.latest(10, true).into_iter().map(|r| r.url).collect();
    assert_eq!(approved, ["http://site/b", "http://site/a"]);

    // Full, it drops the oldest fetched: never more than its capacity, the newest kept.
    for i in 0..100 {
        cache.fetched(&format!("http://site/p{i}"), 100 + i);
    }
    assert!(cache.len() <= 16, "{}", cache.len());
    assert!(cache.get("http://site/p99").is_some());
    assert!(cache.get("http://site/a").is_none());
    assert_eq!(cache.latest(3, false)[0].url, "http://site/p99");
}

/// A page's features as a Ferret computes them.
fn features_at(url: &str, html: &str) -> Features {
    let doc = parse_page(
        &Url::parse(url).unwrap(),
        html.as_bytes(),
        Some("text/html"),
    );
    Features::computed(&doc, &Analyzer::new())
}

#[actix::test]
async fn filters_take_the_loops_votes_on_their_own_instances() {
    let filters: Pool<Filter> = Pool::new(2);
    let mut builder = RuntimeBuilder::new(options());
    builder.supervise(&filters, RestartPolicy::Permanent, |_| Ok(Filter));
    let runtime: Runtime = builder.start().unwrap();

    // One filter: a page passes when it is on the lighthouse's host.
    let lighthouse = features_at("http://otters.test/", "<title>Otters</title>");
    let bank = FilterBank::restore(
        FilterParams::default(),
        vec![FilterFingerprint {
            id: 7,
            lighthouse: "http://otters.test/".into(),
            representatives: vec![("http://otters.test/".into(), lighthouse)],
            vector: vec![FilterFeature {
                kind: FeatureKind::Host,
                threshold: 1.0,
            }],
            reliability: 1.0,
            created_at_ms: 0,
            passed: 0,
        }],
    );
    let ballot = Arc::new(bank.ballot(&TermStats::default()));
    let order = |url: &str| VoteOrder {
        url: url.into(),
        fingerprint: 1,
        features: Arc::new(features_at(url, "<title>A page</title>")),
        ballot: Arc::clone(&ballot),
    };
    let vote: Route<VotePage> = filters.route();
    let mut verdicts = Vec::new();
    for url in [
        "http://otters.test/kelp.html",
        "http://cooking.test/soup.html",
        "http://otters.test/sea.html",
        "http://cooking.test/bread.html",
    ] {
        let order = order(url);
        let expected = order.vote();
        let verdict = vote.send(Envelope::new(VotePage { order })).await.unwrap();
        assert_eq!(
            verdict, expected,
            "{url}: the pool votes as the ballot does"
        );
        verdicts.push(verdict);
    }
    assert_eq!(verdicts, [Some(7), None, Some(7), None]);
    // The votes were shared over the pool.
    for index in 0..2 {
        assert_eq!(filters.stats(index).handled.load(Ordering::Relaxed), 2);
    }
    runtime.shutdown();
}
