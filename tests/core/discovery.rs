//! The discovery loop's core: features and their similarities on worked examples, the
//! FerretAdvisor's fingerprints and exhaustion, the Filters' majority vote and reliability,
//! and the whole loop on a two-topic site, against breadth-first, deterministically.

use ferret::discovery::advisor::{FerretAdvisor, FerretAdvisorParams, Group, PageView};
use ferret::discovery::engine::{
    DiscoveryEvent, Earlier, Engine, EngineParams, RestoredPage, VoteOrder,
};
use ferret::discovery::features::{similarity, AddressStats, FeatureKind, Features, TermStats};
use ferret::discovery::filter::{FilterBank, FilterFeature, FilterFingerprint, FilterParams};
use ferret::discovery::frontier::{FetchOrder, FrontierConfig};
use ferret::discovery::hittage::{Feedback, FeedbackKind};
use ferret::discovery::page::{extract_links, parse_page};
use ferret::discovery::robots::RobotsOutcome;
use ferret::stories::text::Analyzer;
use url::Url;

#[path = "../support/site.rs"]
mod site;

const BASE: &str = "http://site.test/";

fn features_of(path: &str, analyzer: &Analyzer) -> Features {
    let url = Url::parse(BASE).unwrap().join(path).unwrap();
    let doc = parse_page(&url, site::get(path).unwrap().as_bytes(), Some("text/html"));
    Features::computed(&doc, analyzer)
}

#[test]
fn similarities_on_worked_examples() {
    let analyzer = Analyzer::new();
    let stats = TermStats::default();
    let a = features_of("/ferret-1.html", &analyzer);
    let b = features_of("/ferret-2.html", &analyzer);
    let c = features_of("/cooking-5.html", &analyzer);
    // URL tokens go through the text pipeline: one-character words drop, so both pages are
    // {ferret}; `/ferrets.html` stems to the same.
    assert_eq!(a.url_tokens.as_deref(), Some(&["ferret".to_string()][..]));
    assert_eq!(similarity(FeatureKind::UrlTokens, &a, &b, &stats), 1.0);
    let index = features_of("/ferrets.html", &analyzer);
    assert_eq!(similarity(FeatureKind::UrlTokens, &a, &index, &stats), 1.0);
    let recipe_12 = features_of("/cooking-12.html", &analyzer);
    // {cook, 12} against {cook}: one of two.
    let recipe_5 = features_of("/cooking-5.html", &analyzer);
    assert_eq!(
        similarity(FeatureKind::UrlTokens, &recipe_12, &recipe_5, &stats),
        0.5
    );
    assert_eq!(similarity(FeatureKind::UrlTokens, &a, &c, &stats), 0.0);
    // Same host, same language.
    assert_eq!(similarity(FeatureKind::Host, &a, &c, &stats), 1.0);
    assert_eq!(similarity(FeatureKind::Language, &a, &c, &stats), 1.0);
    // Counts compare as min/max: 6 links against 5.
    assert_eq!(a.links, Some(5));
    assert_eq!(b.links, Some(6));
    assert!((similarity(FeatureKind::Links, &a, &b, &stats) - 5.0 / 6.0).abs() < 1e-12);
    // Body terms: a page is its own perfect match; the two topics share only the navigation
    // words ("home", "next", "recipe" in the cross-links).
    assert!((similarity(FeatureKind::BodyTerms, &a, &a, &stats) - 1.0).abs() < 1e-9);
    let same_topic = similarity(FeatureKind::BodyTerms, &a, &b, &stats);
    let other_topic = similarity(FeatureKind::BodyTerms, &a, &c, &stats);
    assert!(same_topic > 0.5, "{same_topic}");
    assert!(other_topic < 0.2, "{other_topic}");
    // A feature not computed compares as 0.
    assert_eq!(
        similarity(FeatureKind::Size, &Features::default(), &a, &stats),
        0.0
    );
}

#[test]
fn features_are_computed_lazily_and_travel_as_json() {
    let analyzer = Analyzer::new();
    let url = Url::parse("http://site.test/ferret-3.html").unwrap();
    let doc = parse_page(&url, site::get("/ferret-3.html").unwrap().as_bytes(), None);
    let mut features = Features::default();
    assert!(features.ensure(FeatureKind::Images, &doc, &analyzer));
    assert!(
        !features.ensure(FeatureKind::Images, &doc, &analyzer),
        "once only"
    );
    assert!(!features.complete());
    assert_eq!(features.complete_from(&doc, &analyzer), 8);
    assert!(features.complete());
    let json = serde_json::to_string(&features).unwrap();
    assert_eq!(serde_json::from_str::<Features>(&json).unwrap(), features);
}

/// Term statistics over `pages`.
fn counted<'a>(pages: impl IntoIterator<Item = &'a Features>) -> TermStats {
    let mut stats = TermStats::default();
    for page in pages {
        stats.add(page);
    }
    stats
}

/// Four pages as one group, `a` (the first) its lighthouse.
fn one_group(pages: &[Features]) -> (Vec<PageView<'_>>, Group) {
    let views = pages
        .iter()
        .zip(["a", "b", "c", "d"])
        .map(|(features, url)| PageView {
            url,
            features,
            hittage: 0.5,
            fresh_links: 3,
            links: 5,
            size: 100,
            history: Default::default(),
            near: None,
        })
        .collect();
    let group = Group {
        lighthouse: "a".into(),
        members: (0..pages.len()).collect(),
    };
    (views, group)
}

#[test]
fn a_feature_the_group_shares_and_the_sample_lacks_is_distinctive() {
    let analyzer = Analyzer::new();
    let pages: Vec<Features> = [
        "/ferret-1.html",
        "/ferret-2.html",
        "/ferret-3.html",
        "/ferret-4.html",
    ]
    .iter()
    .map(|p| features_of(p, &analyzer))
    .collect();
    let sample: Vec<Features> = (1..=12)
        .map(|n| features_of(&format!("/cooking-{n}.html"), &analyzer))
        .collect();
    let stats = counted(pages.iter().chain(&sample));
    let (views, group) = one_group(&pages);
    let advisor = FerretAdvisor::new(FerretAdvisorParams::default());
    let sample_refs: Vec<&Features> = sample.iter().collect();
    let kinds: Vec<FeatureKind> = advisor
        .distinctive(&views, 0, &group, &sample_refs, &stats)
        .into_iter()
        .map(|(kind, threshold)| {
            assert!(threshold > 0.0 && threshold < 1.0, "{kind:?} {threshold}");
            kind
        })
        .collect();
    assert!(kinds.contains(&FeatureKind::BodyTerms), "{kinds:?}");
    assert!(kinds.contains(&FeatureKind::UrlTokens), "{kinds:?}");
    // One host and one language for all: nothing to tell the group by.
    assert!(!kinds.contains(&FeatureKind::Host), "{kinds:?}");
    assert!(!kinds.contains(&FeatureKind::Language), "{kinds:?}");
}

/// Addresses in the sample (a URL alone, as the loop draws from the background pages'
/// links) count for the features a URL shows and for no other: here they show that this
/// site's URLs all say `ferret`, so the URL stops being distinctive, while the body terms'
/// threshold is the one the pages alone give.
#[test]
fn addresses_in_the_sample_count_for_the_url_features_only() {
    let analyzer = Analyzer::new();
    let pages: Vec<Features> = (1..=4)
        .map(|n| features_of(&format!("/ferret-{n}.html"), &analyzer))
        .collect();
    // Recipes, and ferret pages filed under another name: the sample's body terms are not
    // all unlike the group's.
    let sample: Vec<Features> = (1..=12)
        .map(|n| features_of(&format!("/cooking-{n}.html"), &analyzer))
        .chain((5..=9).map(|n| {
            let url = Url::parse(BASE).unwrap().join(&format!("/pets/{n}.html"));
            let body = site::get(&format!("/ferret-{n}.html")).unwrap();
            Features::computed(&parse_page(&url.unwrap(), body.as_bytes(), None), &analyzer)
        }))
        .collect();
    let addresses: Vec<Features> = (0..30)
        .map(|n| {
            let url = Url::parse(BASE)
                .unwrap()
                .join(&format!("/ferret-{}.html", 5 + n % 5));
            Features::of_address(&url.unwrap(), &analyzer)
        })
        .collect();
    let stats = counted(pages.iter().chain(&sample));
    let (views, group) = one_group(&pages);
    let advisor = FerretAdvisor::new(FerretAdvisorParams::default());
    let pages_only: Vec<&Features> = sample.iter().collect();
    let with_addresses: Vec<&Features> = sample.iter().chain(&addresses).collect();
    let before = advisor.distinctive(&views, 0, &group, &pages_only, &stats);
    let after = advisor.distinctive(&views, 0, &group, &with_addresses, &stats);
    let threshold = |found: &[(FeatureKind, f64)], kind| {
        found.iter().find(|(k, _)| *k == kind).map(|(_, t)| *t)
    };
    assert!(
        threshold(&before, FeatureKind::UrlTokens).is_some(),
        "{before:?}"
    );
    assert_eq!(threshold(&after, FeatureKind::UrlTokens), None, "{after:?}");
    let body = threshold(&before, FeatureKind::BodyTerms);
    assert!(body.is_some(), "{before:?}");
    assert_eq!(threshold(&after, FeatureKind::BodyTerms), body);
}

/// A URL token on most of the site's addresses (`library`, on 60 of 80 here) is left out of
/// the URL similarity; one that marks a part of the site (`email`) counts. Under 50
/// addresses nothing is common yet.
#[test]
fn url_tokens_on_most_of_the_sites_addresses_do_not_count() {
    let analyzer = Analyzer::new();
    let address = |path: &str| Url::parse(BASE).unwrap().join(path).unwrap();
    let mut addresses = AddressStats::default();
    for n in 0..40 {
        addresses.add(&address(&format!("/library/module{n}.html")), &analyzer);
    }
    assert!(
        addresses.common().is_empty(),
        "40 addresses: too few to tell"
    );
    for n in 0..20 {
        addresses.add(&address(&format!("/library/email.part{n}.html")), &analyzer);
        addresses.add(&address(&format!("/howto/guide{n}.html")), &analyzer);
    }
    // Counted once each.
    addresses.add(&address("/howto/guide1.html"), &analyzer);
    let common = addresses.common();
    assert_eq!(common.iter().collect::<Vec<_>>(), vec!["librari"]);

    let of = |path: &str| Features::of_address(&address(path), &analyzer);
    let (charset, header, codecs) = (
        of("/library/email.charset.html"),
        of("/library/email.header.html"),
        of("/library/codecs.html"),
    );
    let mut stats = TermStats::default();
    let url = |a: &Features, b: &Features, stats: &TermStats| {
        similarity(FeatureKind::UrlTokens, a, b, stats)
    };
    assert!((url(&charset, &codecs, &stats) - 0.25).abs() < 1e-9);
    assert!((url(&charset, &header, &stats) - 0.5).abs() < 1e-9);
    stats.set_common_url_tokens(common);
    assert_eq!(url(&charset, &codecs, &stats), 0.0);
    assert!((url(&charset, &header, &stats) - 1.0 / 3.0).abs() < 1e-9);
}

#[test]
fn a_fingerprint_whose_pages_are_never_accepted_is_flushed_after_its_window() {
    let analyzer = Analyzer::new();
    let lighthouse = features_of("/ferret-1.html", &analyzer);
    let sample: Vec<Features> = (1..=8)
        .map(|n| features_of(&format!("/cooking-{n}.html"), &analyzer))
        .collect();
    let stats = TermStats::default();
    let views = [PageView {
        url: "l",
        features: &lighthouse,
        hittage: 1.0,
        fresh_links: 4,
        links: 5,
        size: 100,
        history: Default::default(),
        near: None,
    }];
    let params = FerretAdvisorParams {
        exhaustion_window: 4,
        exhaustion_floor: 0.5,
        ..FerretAdvisorParams::default()
    };
    let mut advisor = FerretAdvisor::new(params);
    let sample_refs: Vec<&Features> = sample.iter().collect();
    let made = advisor.rebuild(&views, &["l".to_string()], &sample_refs, &stats, 0);
    assert!(!made.is_empty());
    let id = made[0].id;
    for _ in 0..3 {
        advisor.record(id, true, false);
    }
    assert!(advisor.get(id).is_some(), "the window is not full yet");
    advisor.record(id, true, false);
    assert!(advisor.get(id).is_none(), "0 of 4 accepted: exhausted");
    assert_eq!(advisor.flushed(), 1);
    // Its representative is not tried again while it has a fingerprint in the pool.
    let again = advisor.rebuild(&views, &["l".to_string()], &sample_refs, &stats, 1);
    assert!(again.iter().all(|f| f.representative == "l"));
}

#[test]
fn a_filter_passes_on_a_majority_and_loses_reliability_to_dislikes() {
    let analyzer = Analyzer::new();
    let rep = features_of("/ferret-1.html", &analyzer);
    let stats = TermStats::default();
    let filter = FilterFingerprint {
        id: 1,
        lighthouse: "l".into(),
        representatives: vec![("l".into(), rep.clone())],
        vector: vec![
            FilterFeature {
                kind: FeatureKind::UrlTokens,
                threshold: 0.3,
            },
            FilterFeature {
                kind: FeatureKind::Host,
                threshold: 1.0,
            },
            FilterFeature {
                kind: FeatureKind::Links,
                threshold: 0.99,
            },
        ],
        reliability: 1.0,
        created_at_ms: 0,
        passed: 0,
    };
    // /ferret-2: URL tokens ({ferret} both) and host pass, links 5/6 fails: 2 of 3.
    let two = features_of("/ferret-2.html", &analyzer);
    assert_eq!(filter.score(&two, &stats), (2, 3));
    assert!(filter.passes(&two, &stats));
    // A recipe: only the host: 1 of 3.
    let recipe = features_of("/cooking-2.html", &analyzer);
    assert_eq!(filter.score(&recipe, &stats), (1, 3));
    assert!(!filter.passes(&recipe, &stats));

    let mut bank = FilterBank::restore(FilterParams::default(), vec![filter]);
    let ballot = bank.ballot(&stats);
    assert_eq!(ballot.vote(&two), Some(1));
    assert_eq!(ballot.vote(&recipe), None);
    // A ballot votes as the bank stood: a verdict changes a reliability, so the bank moves on
    // to a new generation and the loop makes a new ballot.
    let generation = bank.generation();
    assert!(bank.unreliable().is_empty());
    bank.judge(1, Some(false));
    assert!(bank.generation() > generation);
    assert_eq!(ballot.generation(), generation);
    bank.judge(1, Some(false));
    bank.judge(1, Some(true));
    assert!(bank.unreliable().is_empty(), "0.55 is still above 0.4");
    bank.judge(1, Some(false));
    assert_eq!(bank.unreliable(), vec!["l".to_string()]);
}

/// A loop with `params` whose frontier lets the site be fetched without waits.
fn local_engine(params: EngineParams) -> Engine {
    Engine::new(EngineParams {
        frontier: FrontierConfig {
            min_interval_ms: 0,
            max_in_flight_per_host: 8,
            ..FrontierConfig::default()
        },
        ..params
    })
}

/// The site's page at `path` as a store keeps it, fetched at 5 ms.
fn restored(path: &str, analyzer: &Analyzer) -> RestoredPage {
    let url = Url::parse(BASE).unwrap().join(path).unwrap();
    let doc = parse_page(&url, site::get(path).unwrap().as_bytes(), Some("text/html"));
    RestoredPage {
        url: url.to_string(),
        title: doc.title.clone(),
        features: Features::computed(&doc, analyzer),
        links: doc.links.iter().map(|l| l.url.to_string()).collect(),
        filter: None,
        approved: false,
        fingerprint: None,
        fetched_at_ms: 5,
    }
}

/// Runs the loop over the site on a virtual clock; the fetch order and the pages accepted.
fn crawl(seed: u64, budget: usize) -> (Vec<String>, Vec<String>) {
    let (_, events) = crawl_with_events(seed, budget);
    let (mut fetched, mut accepted) = (Vec::new(), Vec::new());
    for event in events {
        match event {
            DiscoveryEvent::Fetched {
                url,
                features: Some(_),
                ..
            } => fetched.push(Url::parse(&url).unwrap().path().to_string()),
            DiscoveryEvent::Accepted(page) => {
                accepted.push(Url::parse(&page.url).unwrap().path().to_string())
            }
            _ => {}
        }
    }
    (fetched, accepted)
}

/// [`crawl`]'s loop and every event it gave.
fn crawl_with_events(seed: u64, budget: usize) -> (Engine, Vec<DiscoveryEvent>) {
    let (engine, events, held) = crawl_voting(seed, budget, false);
    assert!(held.is_empty());
    (engine, events)
}

/// [`crawl_with_events`], the votes the loop orders taken at once, or with `hold` kept
/// unanswered and returned.
fn crawl_voting(
    seed: u64,
    budget: usize,
    hold: bool,
) -> (Engine, Vec<DiscoveryEvent>, Vec<VoteOrder>) {
    let mut held = Vec::new();
    let mut engine = local_engine(EngineParams {
        seed,
        ..EngineParams::default()
    });
    for like in ["ferret-1.html", "ferret-2.html"] {
        engine.feedback(
            Feedback::new(&format!("{BASE}{like}"), FeedbackKind::Like, None, 0).unwrap(),
        );
    }
    let (mut fetched, mut events) = (0, Vec::new());
    let mut now = 1;
    while fetched < budget {
        let Some(order) = engine.poll_fetch(now) else {
            break;
        };
        now += 10;
        match order {
            FetchOrder::Robots { host, .. } => {
                engine.handle_robots(&host, RobotsOutcome::Unavailable, now)
            }
            FetchOrder::Page { url, .. } => match site::get(url.path()) {
                Some(html) => {
                    fetched += 1;
                    engine.handle_page(parse_page(&url, html.as_bytes(), Some("text/html")), now);
                }
                None => engine.handle_failure(&url, now),
            },
        }
        if hold {
            held.extend(std::iter::from_fn(|| engine.poll_vote()));
        } else {
            engine.settle_votes(now);
        }
        events.extend(std::iter::from_fn(|| engine.poll_event()));
    }
    (engine, events, held)
}

/// The Filters' vote runs outside the loop: each approved page is voted on once however many
/// fingerprints approve it while its vote is out, nothing is mapped before its verdict, and
/// the verdict maps the page (with the filter that passed it) or discards it, once.
#[test]
fn a_vote_runs_outside_the_loop_once_per_page_and_its_verdict_maps_or_discards() {
    let (mut engine, events, held) = crawl_voting(1, 32, true);
    assert!(!held.is_empty(), "pages were approved");
    let urls: std::collections::HashSet<&str> = held.iter().map(|o| o.url.as_str()).collect();
    assert_eq!(urls.len(), held.len(), "one vote per page");
    let mapped_by_filter = |events: &[DiscoveryEvent]| {
        events
            .iter()
            .filter(|e| matches!(e, DiscoveryEvent::Accepted(p) if p.filter.is_some()))
            .count()
    };
    assert_eq!(
        mapped_by_filter(&events),
        0,
        "nothing mapped before a verdict"
    );

    let verdicts: Vec<Option<u64>> = held.iter().map(VoteOrder::vote).collect();
    assert!(verdicts.iter().any(Option::is_some), "{verdicts:?}");
    for (order, verdict) in held.iter().zip(&verdicts) {
        engine.handle_vote(&order.url, order.fingerprint, *verdict, 1_000);
    }
    let answered: Vec<DiscoveryEvent> = std::iter::from_fn(|| engine.poll_event()).collect();
    for (order, verdict) in held.iter().zip(&verdicts) {
        let told = answered.iter().find_map(|e| match e {
            DiscoveryEvent::Accepted(p) if p.url == order.url => Some(p.filter),
            DiscoveryEvent::Discarded { url } if *url == order.url => Some(None),
            _ => None,
        });
        assert_eq!(told, Some(*verdict), "{}", order.url);
    }
    assert_eq!(
        mapped_by_filter(&answered),
        verdicts.iter().filter(|v| v.is_some()).count()
    );
    // An answer again, or to a vote never ordered, changes nothing.
    let first = &held[0];
    engine.handle_vote(&first.url, first.fingerprint, Some(99), 2_000);
    engine.handle_vote("http://nowhere.test/", 1, Some(99), 2_000);
    assert_eq!(engine.poll_event(), None);
}

/// Every fetched page stays in the loop's cache, approved or not: a fingerprint's approval is
/// told once (before the page's acceptance, if any), kept on the page, and survives a resume.
#[test]
fn every_fetched_page_is_cached_with_the_fingerprints_verdict() {
    let (engine, events) = crawl_with_events(1, 32);
    let mut fetched = Vec::new();
    let mut approved = std::collections::BTreeSet::new();
    for event in &events {
        match event {
            DiscoveryEvent::Fetched { url, features, .. } if features.is_some() => {
                fetched.push(url.clone());
            }
            DiscoveryEvent::Approved { url, fingerprint } => {
                assert!(fetched.contains(url), "approved before fetched: {url}");
                assert!(*fingerprint > 0);
                assert!(approved.insert(url.clone()), "approved twice: {url}");
            }
            DiscoveryEvent::Accepted(page) if page.fingerprint.is_some() => {
                assert!(
                    approved.contains(&page.url),
                    "accepted unapproved: {}",
                    page.url
                );
            }
            _ => {}
        }
    }
    assert!(!approved.is_empty(), "some pages approved");
    let mut unapproved = 0;
    for url in &fetched {
        let cached = engine.cached(url).expect("every fetched page is cached");
        assert_eq!(cached.approved, approved.contains(url), "{url}");
        unapproved += usize::from(!cached.approved);
    }
    assert!(unapproved > 0, "pages not approved are cached too");

    // Resumed from what a store keeps, the verdicts are the same.
    let mut resumed = local_engine(EngineParams::default());
    resumed.resume(stored(&engine, &events, &[]));
    for url in &fetched {
        assert_eq!(
            resumed.cached(url).map(|c| c.approved),
            Some(approved.contains(url)),
            "{url}"
        );
    }
}

fn breadth_first(budget: usize) -> Vec<String> {
    let mut queue: std::collections::VecDeque<String> = ["/ferret-1.html", "/ferret-2.html"]
        .map(String::from)
        .into();
    let mut seen: std::collections::HashSet<String> = queue.iter().cloned().collect();
    let mut fetched = Vec::new();
    while let Some(path) = queue.pop_front() {
        if fetched.len() == budget {
            break;
        }
        let Some(html) = site::get(&path) else {
            continue;
        };
        fetched.push(path.clone());
        let url = Url::parse(BASE).unwrap().join(&path).unwrap();
        for link in extract_links(&url, html.as_bytes()) {
            if seen.insert(link.path().to_string()) {
                queue.push_back(link.path().to_string());
            }
        }
    }
    fetched
}

#[test]
fn the_loop_harvests_its_topic_better_than_breadth_first_and_accepts_it() {
    let budget = 32;
    let (fetched, accepted) = crawl(1, budget);
    let harvest = |pages: &[String]| pages.iter().filter(|p| site::is_ferret(p)).count();
    let bfs = breadth_first(budget);
    assert_eq!(fetched.len(), budget);
    assert!(
        harvest(&fetched) > harvest(&bfs),
        "ferret {} against breadth-first {} on-topic pages of {budget}: {fetched:?}",
        harvest(&fetched),
        harvest(&bfs)
    );
    assert!(
        harvest(&fetched) >= site::FERRETS,
        "every ferret page found: {fetched:?}"
    );
    let on_topic = accepted.iter().filter(|p| site::is_ferret(p)).count();
    assert!(on_topic >= 4, "{accepted:?}");
    assert!(
        on_topic * 10 >= accepted.len() * 9,
        "precision ≥ 0.9: {accepted:?}"
    );
    // The seed decides everything: the same seed, the same crawl.
    assert_eq!(crawl(1, budget), (fetched, accepted));
}

/// A loop restored from a store that holds only a liked page and a few pages fetched around
/// it (killed early) goes on from them: it has something to fetch at once.
#[test]
fn a_loop_resumed_from_a_small_store_goes_on() {
    let analyzer = Analyzer::new();
    let mut engine = local_engine(EngineParams::default());
    let restored = |path: &str| restored(path, &analyzer);
    engine.restore_page(restored("/ferret-1.html"));
    for p in [
        "/",
        "/cooking-5.html",
        "/cooking-39.html",
        "/cooking-36.html",
        "/cooking-11.html",
        "/cooking-30.html",
    ] {
        engine.restore_fetched(restored(p));
    }
    engine.feedback(
        Feedback::new(&format!("{BASE}ferret-1.html"), FeedbackKind::Like, None, 0).unwrap(),
    );
    let order = engine.poll_fetch(100);
    assert!(
        order.is_some(),
        "{:?} {:?}",
        engine.counts(),
        engine.frontier().stats()
    );
}

/// A loop killed right after start-up (the liked page and the root page stored, everything
/// queued lost) queues the liked page's links and the background again when resumed.
#[test]
fn a_loop_resumed_with_nothing_queued_queues_the_liked_pages_links_again() {
    let analyzer = Analyzer::new();
    let restored = |path: &str| restored(path, &analyzer);
    let liked = restored("/ferret-1.html");
    let root = restored("/");
    let mut engine = local_engine(EngineParams::default());
    engine.resume(Earlier {
        fetched: vec![liked.url.clone(), root.url.clone()],
        feedback: vec![Feedback::new(&liked.url, FeedbackKind::Like, None, 0).unwrap()],
        map: vec![liked.clone()],
        kept: vec![root],
        ..Earlier::default()
    });
    let mut orders = Vec::new();
    while orders.len() < 30 {
        let Some(order) = engine.poll_fetch(100) else {
            break;
        };
        match order {
            FetchOrder::Robots { host, .. } => {
                engine.handle_robots(&host, RobotsOutcome::Unavailable, 100)
            }
            FetchOrder::Page { url, .. } => {
                orders.push(url.to_string());
                let html = site::get(url.path()).unwrap();
                engine.handle_page(parse_page(&url, html.as_bytes(), Some("text/html")), 100);
            }
        }
    }
    // The liked page's links, and the background drawn from the root page again: the loop
    // has enough to go on with (without them it ran dry after the liked page's five links).
    assert!(
        liked.links.iter().all(|link| orders.contains(link)),
        "{orders:?}"
    );
    assert_eq!(orders.len(), 30, "{orders:?}");
    assert!(!orders.contains(&liked.url));
}

/// Everything a store would keep of a crawl's events and its loop, as [`Engine::resume`]
/// takes it.
fn stored(engine: &Engine, events: &[DiscoveryEvent], likes: &[Feedback]) -> Earlier {
    let mut earlier = Earlier {
        feedback: likes.to_vec(),
        ferret: engine.advisor().pool().to_vec(),
        filters: engine.filters().filters().to_vec(),
        history: engine
            .history()
            .map(|(url, history)| (url.to_string(), history))
            .collect(),
        ..Earlier::default()
    };
    let mut kept = std::collections::BTreeMap::new();
    // Page → the fingerprint that approved it first.
    let mut approved = std::collections::BTreeMap::new();
    for event in events {
        match event {
            DiscoveryEvent::Fetched {
                url,
                title,
                at_ms,
                features,
                links,
            } => {
                earlier.fetched.push(url.clone());
                if let Some(features) = features {
                    kept.insert(
                        url.clone(),
                        RestoredPage {
                            url: url.clone(),
                            title: title.clone(),
                            features: (**features).clone(),
                            links: links.clone(),
                            filter: None,
                            approved: false,
                            fingerprint: None,
                            fetched_at_ms: *at_ms,
                        },
                    );
                }
            }
            DiscoveryEvent::Accepted(page) => {
                kept.remove(&page.url);
                earlier.map.push(RestoredPage {
                    url: page.url.clone(),
                    title: page.title.clone(),
                    features: page.features.clone(),
                    links: page.links.clone(),
                    filter: page.filter,
                    approved: page.fingerprint.is_some(),
                    fingerprint: page.fingerprint,
                    fetched_at_ms: page.fetched_at_ms,
                });
            }
            DiscoveryEvent::Approved { url, fingerprint } => {
                approved.entry(url.clone()).or_insert(*fingerprint);
            }
            DiscoveryEvent::Discarded { .. } => {}
        }
    }
    for page in kept.values_mut().chain(&mut earlier.map) {
        let first = approved.get(&page.url).copied();
        page.approved |= first.is_some();
        page.fingerprint = page.fingerprint.or(first);
    }
    earlier.kept = kept.into_values().collect();
    earlier
}

/// A loop resumed with its fingerprints and representatives has the same pools and history,
/// counts nothing twice, and a dislike of a page a filter passed before the restart costs that
/// filter its reliability (a loop that rebuilt its filters from scratch would number them anew
/// and charge whichever new filter got the old number).
#[test]
fn a_resumed_loop_keeps_its_fingerprints_and_a_dislike_reaches_the_filter_that_passed_the_page() {
    let (engine, events) = crawl_with_events(1, 32);
    let likes: Vec<Feedback> = ["ferret-1.html", "ferret-2.html"]
        .iter()
        .map(|like| Feedback::new(&format!("{BASE}{like}"), FeedbackKind::Like, None, 0).unwrap())
        .collect();
    let earlier = stored(&engine, &events, &likes);
    assert!(!earlier.ferret.is_empty() && !earlier.filters.is_empty());
    let (passed, filter) = earlier
        .map
        .iter()
        .find_map(|p| p.filter.map(|f| (p.url.clone(), f)))
        .expect("a page a filter passed");

    let mut resumed = local_engine(EngineParams::default());
    resumed.resume(earlier.clone());
    assert_eq!(resumed.advisor().pool(), engine.advisor().pool());
    assert_eq!(resumed.filters().filters(), engine.filters().filters());
    let mut history: Vec<_> = resumed.history().collect();
    history.sort_by(|a, b| a.0.cmp(b.0));
    let mut before: Vec<_> = engine.history().collect();
    before.sort_by(|a, b| a.0.cmp(b.0));
    assert_eq!(history, before);

    // Restored fingerprints run again for the links left, without judging kept pages twice.
    assert!(
        resumed.poll_fetch(10_000).is_some(),
        "the resumed loop goes on"
    );
    for print in resumed.advisor().pool() {
        if let Some(old) = engine.advisor().get(print.id) {
            assert_eq!(
                (print.fetched, print.approved),
                (old.fetched, old.approved),
                "{print:?}"
            );
        }
    }

    let reliability = |engine: &Engine| {
        engine
            .filters()
            .filters()
            .iter()
            .find(|f| f.id == filter)
            .map(|f| f.reliability)
    };
    let was = reliability(&resumed).expect("the filter is back");
    resumed.feedback(Feedback::new(&passed, FeedbackKind::Dislike, None, 20_000).unwrap());
    let now = reliability(&resumed).unwrap();
    assert!(
        (was - now - FilterParams::default().dislike_cost).abs() < 1e-9,
        "{was} → {now}"
    );
}

/// A page a filter passed that gets no feedback within the window costs that filter
/// reliability, once; a page the user visited costs nothing.
#[test]
fn pages_left_unvisited_cost_their_filter_reliability_once() {
    let (engine, events) = crawl_with_events(1, 32);
    let earlier = stored(&engine, &events, &[]);
    let window = 1_000;
    let mut resumed = Engine::new(EngineParams {
        filter: FilterParams {
            unvisited_after_ms: window,
            ..FilterParams::default()
        },
        ..EngineParams::default()
    });
    let passed: Vec<(String, u64, i64)> = earlier
        .map
        .iter()
        .filter_map(|p| p.filter.map(|f| (p.url.clone(), f, p.fetched_at_ms)))
        .collect();
    assert!(passed.len() >= 2, "{passed:?}");
    let last = passed.iter().map(|p| p.2).max().unwrap();
    resumed.resume(earlier);
    let visited = &passed[0];
    resumed.feedback(Feedback::new(&visited.0, FeedbackKind::Visit, None, last).unwrap());
    let reliabilities = |engine: &Engine| -> Vec<(u64, f64)> {
        engine
            .filters()
            .filters()
            .iter()
            .map(|f| (f.id, f.reliability))
            .collect()
    };
    let before = reliabilities(&resumed);
    assert!(before.iter().all(|&(_, r)| r == 1.0), "{before:?}");

    // Within the window: nothing is charged.
    resumed.poll_fetch(last);
    assert_eq!(reliabilities(&resumed), before);
    // After it: each filter, for each page it passed but the visited one.
    resumed.poll_fetch(last + window + 1);
    let cost = FilterParams::default().unvisited_cost;
    let after = reliabilities(&resumed);
    for (id, reliability) in &after {
        let unvisited = passed
            .iter()
            .filter(|p| p.1 == *id && p.0 != visited.0)
            .count();
        let want = (1.0 - cost * unvisited as f64).max(0.0);
        assert!(
            (reliability - want).abs() < 1e-9,
            "{id}: {reliability} ≠ {want}"
        );
    }
    assert_ne!(after, before);
    // Once.
    resumed.poll_fetch(last + 10 * window);
    assert_eq!(reliabilities(&resumed), after);
}

/// When its fingerprints have nothing left to give, the loop goes on from the kept pages
/// nearest to its lighthouses rather than stop: a budget as large as the site fetches all of
/// it, the topic's pages first.
#[test]
fn the_loop_spends_its_budget_when_the_topic_runs_dry() {
    let everything = breadth_first(usize::MAX);
    // The root page too: the loop fetches it for its background.
    let (fetched, _) = crawl(1, everything.len() + 1);
    let missing: Vec<&String> = everything.iter().filter(|p| !fetched.contains(p)).collect();
    assert!(missing.is_empty(), "not fetched: {missing:?}");
    let mut once = fetched.clone();
    once.sort();
    once.dedup();
    assert_eq!(once.len(), fetched.len(), "each page once");
    let harvest = |pages: &[String]| pages.iter().filter(|p| site::is_ferret(p)).count();
    assert!(
        harvest(&fetched[..32]) > harvest(&everything[..32]),
        "the topic first: {fetched:?}"
    );
}
