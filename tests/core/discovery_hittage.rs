//! Hittage and lighthouses, on worked examples computed by hand (module docs of
//! `ferret::discovery::hittage` give the formulas).

use std::collections::{BTreeSet, HashMap};

use ferret::discovery::hittage::{
    direct_scores, generalize, hittage, liked, same_lighthouses, Feedback, FeedbackError,
    FeedbackKind, HittageParams, Lighthouses,
};

const DAY: i64 = 86_400_000;
const NOW: i64 = 1_000 * DAY;

fn event(url: &str, kind: FeedbackKind, seconds: Option<f64>, at_ms: i64) -> Feedback {
    Feedback::new(url, kind, seconds, at_ms).unwrap()
}

fn like(url: &str) -> Feedback {
    event(url, FeedbackKind::Like, None, NOW)
}

fn links(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() < 1e-12
}

#[track_caller]
fn assert_close(map: &HashMap<String, f64>, url: &str, expected: f64) {
    let actual = *map
        .get(url)
        .unwrap_or_else(|| panic!("{url} missing in {map:?}"));
    assert!(close(actual, expected), "{url}: {actual} ≠ {expected}");
}

#[test]
fn a_like_counts_half_after_one_half_life_and_a_quarter_after_two() {
    let params = HittageParams::default();
    let hl = params.half_life_ms;
    let feedback = [
        event("http://a.example/", FeedbackKind::Like, None, NOW),
        event("http://b.example/", FeedbackKind::Like, None, NOW - hl),
        event("http://c.example/", FeedbackKind::Like, None, NOW - 2 * hl),
        // From the future (a clock ahead): counted as fresh.
        event("http://d.example/", FeedbackKind::Like, None, NOW + hl),
    ];
    let direct = direct_scores(&feedback, NOW, &params);
    assert_close(&direct, "http://a.example/", 1.0);
    assert_close(&direct, "http://b.example/", 0.5);
    assert_close(&direct, "http://c.example/", 0.25);
    assert_close(&direct, "http://d.example/", 1.0);
}

#[test]
fn each_kind_has_its_weight_and_dwell_saturates() {
    let params = HittageParams::default(); // visit 0.2, dwell 0.6 (half at 60 s), like 1, dislike 1.5
    let dwell = |s: f64| event("http://p.example/", FeedbackKind::Dwell, Some(s), NOW);
    let one = |e: Feedback| direct_scores(&[e], NOW, &params)["http://p.example/"];
    assert!(close(
        one(event("http://p.example/", FeedbackKind::Visit, None, NOW)),
        0.2
    ));
    assert!(close(one(dwell(0.0)), 0.0));
    assert!(close(one(dwell(60.0)), 0.3));
    assert!(close(one(dwell(180.0)), 0.45));
    assert!(one(dwell(1e9)) < 0.6 && one(dwell(1e9)) > 0.599);
    assert!(close(
        one(event("http://p.example/", FeedbackKind::Dislike, None, NOW)),
        -1.5
    ));
    // Events on one page add up: a visit, a minute's dwell and a like.
    let sum = direct_scores(
        &[
            event("http://p.example/", FeedbackKind::Visit, None, NOW),
            dwell(60.0),
            like("http://p.example/"),
        ],
        NOW,
        &params,
    );
    assert_close(&sum, "http://p.example/", 1.5);
}

#[test]
fn interest_halves_at_each_hop_of_a_chain_with_damping_one_half() {
    let params = HittageParams {
        damping: 0.5,
        ..HittageParams::default()
    };
    let direct = direct_scores(&[like("http://a.example/")], NOW, &params);
    let graph = links(&[
        ("http://a.example/", "http://b.example/"),
        ("http://b.example/", "http://c.example/"),
        // Links into the chain carry nothing back; a self-link and a repeat are ignored.
        ("http://z.example/", "http://a.example/"),
        ("http://a.example/", "http://a.example/"),
        ("http://a.example/", "http://b.example/"),
    ]);
    let h = hittage(&direct, &graph, &params);
    assert_close(&h, "http://a.example/", 1.0);
    assert_close(&h, "http://b.example/", 0.5);
    assert_close(&h, "http://c.example/", 0.25);
    assert!(!h.contains_key("http://z.example/"), "{h:?}");
}

#[test]
fn interest_is_shared_among_a_pages_links_and_adds_up_over_paths() {
    // A → B, A → C, B → C, A liked, α = 1/2:
    // x(A) = (1−α), x(B) = α(1−α)/2, x(C) = α(1−α)/2 + α²(1−α)/2;
    // normalised by x(A): 1, 1/4, 3/8.
    let params = HittageParams::default();
    let direct = direct_scores(&[like("http://a.example/")], NOW, &params);
    let graph = links(&[
        ("http://a.example/", "http://b.example/"),
        ("http://a.example/", "http://c.example/"),
        ("http://b.example/", "http://c.example/"),
    ]);
    let h = hittage(&direct, &graph, &params);
    assert_close(&h, "http://a.example/", 1.0);
    assert_close(&h, "http://b.example/", 0.25);
    assert_close(&h, "http://c.example/", 0.375);
}

#[test]
fn two_liked_pages_restart_in_proportion_to_their_scores() {
    // A liked now (1), B liked one half-life ago (0.5), no links: h = 1 and 0.5.
    let params = HittageParams::default();
    let feedback = [
        like("http://a.example/"),
        event(
            "http://b.example/",
            FeedbackKind::Like,
            None,
            NOW - params.half_life_ms,
        ),
    ];
    let h = hittage(&direct_scores(&feedback, NOW, &params), &[], &params);
    assert_close(&h, "http://a.example/", 1.0);
    assert_close(&h, "http://b.example/", 0.5);
}

#[test]
fn a_dislike_lowers_a_page_and_stops_propagation_through_it() {
    let params = HittageParams::default();
    let graph = links(&[
        ("http://a.example/", "http://b.example/"),
        ("http://b.example/", "http://c.example/"),
    ]);
    let before = hittage(
        &direct_scores(&[like("http://a.example/")], NOW, &params),
        &graph,
        &params,
    );
    assert_close(&before, "http://b.example/", 0.5);
    assert_close(&before, "http://c.example/", 0.25);

    let dislike = event("http://b.example/", FeedbackKind::Dislike, None, NOW);
    let after = hittage(
        &direct_scores(&[like("http://a.example/"), dislike], NOW, &params),
        &graph,
        &params,
    );
    // One fresh dislike: −1, whatever its neighbours; nothing flows on to C.
    assert_close(&after, "http://a.example/", 1.0);
    assert_close(&after, "http://b.example/", -1.0);
    assert!(!after.contains_key("http://c.example/"), "{after:?}");

    // Liked, then disliked (the later in the list wins a tie in time): d = 1 − 1.5 = −0.5,
    // so h = −0.5 / 1.5.
    let both = [
        event("http://p.example/", FeedbackKind::Like, None, NOW),
        event("http://p.example/", FeedbackKind::Dislike, None, NOW),
    ];
    let h = hittage(&direct_scores(&both, NOW, &params), &[], &params);
    assert_close(&h, "http://p.example/", -1.0 / 3.0);
    assert!(liked(&both).is_empty());
}

#[test]
fn without_positive_feedback_nothing_is_positive() {
    let params = HittageParams::default();
    let feedback = [event("http://b.example/", FeedbackKind::Dislike, None, NOW)];
    let h = hittage(
        &direct_scores(&feedback, NOW, &params),
        &links(&[("http://b.example/", "http://c.example/")]),
        &params,
    );
    assert_eq!(h.len(), 1, "{h:?}");
    assert_close(&h, "http://b.example/", -1.0);
    assert!(hittage(&HashMap::new(), &[], &params).is_empty());
}

#[test]
fn a_lighthouse_is_high_in_m_of_the_last_k_computations() {
    let params = HittageParams {
        lighthouse_threshold: 0.5,
        lighthouse_window: 3,
        lighthouse_min_hits: 2,
        ..HittageParams::default()
    };
    let mut lighthouses = Lighthouses::new(&params);
    let none = BTreeSet::new();
    let x = |h: f64| HashMap::from([("http://x.example/".to_string(), h)]);
    let names = |picked: Vec<(String, f64)>| -> Vec<String> {
        picked.into_iter().map(|(url, _)| url).collect()
    };
    // High once: not yet.
    assert!(lighthouses.update(&x(0.6), &none).is_empty());
    assert!(lighthouses.update(&x(0.4), &none).is_empty());
    // High twice in the last three: a lighthouse, with its current hittage.
    assert_eq!(
        lighthouses.update(&x(0.7), &none),
        vec![("http://x.example/".to_string(), 0.7)]
    );
    // [0.4, 0.7, 0.5]: still two (the threshold counts).
    assert_eq!(
        names(lighthouses.update(&x(0.5), &none)),
        ["http://x.example/"]
    );
    // [0.7, 0.5, 0.3] → [0.5, 0.3, 0.3]: one high left, no longer a lighthouse.
    assert_eq!(lighthouses.update(&x(0.3), &none).len(), 1);
    assert!(lighthouses.update(&x(0.3), &none).is_empty());
    assert_eq!(lighthouses.remembered(), 3);
}

#[test]
fn an_explicit_like_is_a_lighthouse_from_the_start() {
    let params = HittageParams::default();
    let mut lighthouses = Lighthouses::new(&params);
    let feedback = [
        like("http://a.example/"),
        like("http://b.example/"),
        event("http://c.example/", FeedbackKind::Visit, None, NOW),
    ];
    let computation = generalize(
        &feedback,
        &links(&[("http://a.example/", "http://d.example/")]),
        NOW,
        &params,
        &mut lighthouses,
    );
    // Both liked pages have hittage 1; sorted by hittage, then URL.
    assert_eq!(
        computation.lighthouses,
        vec![
            ("http://a.example/".to_string(), 1.0),
            ("http://b.example/".to_string(), 1.0)
        ]
    );
    // C (0.2 of a like) and D (half of A's share) are not.
    assert_close(&computation.hittage, "http://c.example/", 0.2);
    assert_close(&computation.hittage, "http://d.example/", 0.5);
}

#[test]
fn the_same_input_in_any_order_gives_identical_scores() {
    let params = HittageParams::default();
    let mut feedback = vec![
        like("http://a.example/"),
        event("http://b.example/", FeedbackKind::Visit, None, NOW - DAY),
        event(
            "http://c.example/",
            FeedbackKind::Dwell,
            Some(42.0),
            NOW - 3 * DAY,
        ),
        event(
            "http://a.example/",
            FeedbackKind::Visit,
            None,
            NOW - 7 * DAY,
        ),
    ];
    let mut graph = links(&[
        ("http://a.example/", "http://b.example/"),
        ("http://b.example/", "http://c.example/"),
        ("http://c.example/", "http://a.example/"),
        ("http://a.example/", "http://e.example/"),
        ("http://b.example/", "http://e.example/"),
    ]);
    let first = hittage(&direct_scores(&feedback, NOW, &params), &graph, &params);
    feedback.reverse();
    graph.reverse();
    let second = hittage(&direct_scores(&feedback, NOW, &params), &graph, &params);
    for (url, h) in &first {
        assert_eq!(h.to_bits(), second[url].to_bits(), "{url}");
        assert!((-1.0..=1.0).contains(h));
    }
    assert_eq!(first.len(), second.len());
}

#[test]
fn feedback_is_checked_and_its_url_normalised() {
    let ok = Feedback::new(
        "  HTTP://Example.COM:80/a#section ",
        FeedbackKind::Like,
        None,
        0,
    )
    .unwrap();
    assert_eq!(ok.url, "http://example.com/a");
    let err = |url: &str, kind, seconds| Feedback::new(url, kind, seconds, 0).unwrap_err();
    assert_eq!(err(" ", FeedbackKind::Like, None), FeedbackError::EmptyUrl);
    assert!(matches!(
        err("not a url", FeedbackKind::Like, None),
        FeedbackError::BadUrl { .. }
    ));
    assert!(matches!(
        err("ftp://example.com/", FeedbackKind::Like, None),
        FeedbackError::NotHttp { .. }
    ));
    assert_eq!(
        err("http://e.com/", FeedbackKind::Dwell, None),
        FeedbackError::MissingSeconds
    );
    assert_eq!(
        err("http://e.com/", FeedbackKind::Dwell, Some(-1.0)),
        FeedbackError::BadSeconds(-1.0)
    );
    assert!(matches!(
        err("http://e.com/", FeedbackKind::Dwell, Some(f64::NAN)),
        FeedbackError::BadSeconds(_)
    ));
    let unexpected = err("http://e.com/", FeedbackKind::Like, Some(3.0));
    assert_eq!(
        unexpected.to_string(),
        "`seconds` only goes with kind dwell, not like"
    );
    assert_eq!(
        "stare".parse::<FeedbackKind>().unwrap_err().to_string(),
        "unknown kind `stare`; expected visit, dwell, like or dislike"
    );
}

#[test]
fn feedback_serialises_with_lowercase_kinds() {
    let dwell = event("http://e.com/", FeedbackKind::Dwell, Some(12.5), 7);
    let json = serde_json::to_string(&dwell).unwrap();
    assert_eq!(
        json,
        r#"{"url":"http://e.com/","kind":"dwell","seconds":12.5,"at_ms":7}"#
    );
    let back: Feedback = serde_json::from_str(&json).unwrap();
    assert_eq!(back, dwell);
    let like = serde_json::to_string(&like("http://e.com/")).unwrap();
    assert!(!like.contains("seconds"), "{like}");
}

#[test]
fn lighthouse_lists_differ_by_pages_order_or_a_real_move() {
    let list = |pairs: &[(&str, f64)]| -> Vec<(String, f64)> {
        pairs.iter().map(|(u, h)| (u.to_string(), *h)).collect()
    };
    let base = list(&[("http://a/", 1.0), ("http://b/", 0.6)]);
    assert!(same_lighthouses(
        &base,
        &list(&[("http://a/", 1.0), ("http://b/", 0.605)])
    ));
    assert!(!same_lighthouses(
        &base,
        &list(&[("http://a/", 1.0), ("http://b/", 0.62)])
    ));
    assert!(!same_lighthouses(
        &base,
        &list(&[("http://b/", 1.0), ("http://a/", 0.6)])
    ));
    assert!(!same_lighthouses(&base, &list(&[("http://a/", 1.0)])));
    assert!(same_lighthouses(&[], &[]));
}

/// The body of `POST /api/feedback`: an event in normal form, or a typed error that says
/// what is wrong; an event written back as a body reads as itself.
#[test]
fn a_feedback_body_reads_as_an_event_or_a_typed_error() {
    use ferret::discovery::intake::{feedback_from_json, feedback_to_json, IntakeError};

    let read = |body: &str| feedback_from_json(body.as_bytes(), NOW);
    let like = read(r#"{"url": "HTTP://A.example:80/x#top", "kind": "like"}"#).unwrap();
    assert_eq!(
        like,
        event("http://a.example/x", FeedbackKind::Like, None, NOW)
    );
    let dwell = read(
        r#"{"url": "https://b.example/", "kind": "dwell", "seconds": 12.5,
            "at": "2026-01-02T03:04:05.678+01:00"}"#,
    )
    .unwrap();
    assert_eq!(dwell.at_ms, 1_767_319_445_678);
    assert_eq!(dwell.seconds, Some(12.5));
    for event in [&like, &dwell] {
        assert_eq!(read(&feedback_to_json(event).unwrap()).as_ref(), Ok(event));
    }

    let json = |e: &IntakeError| matches!(e, IntakeError::Json(_));
    for (body, is, says) in [
        (
            "",
            &json as &dyn Fn(&IntakeError) -> bool,
            "bad feedback JSON",
        ),
        (r#"["not", "an", "object"]"#, &json, "bad feedback JSON"),
        (
            r#"{"url": "http://a/", "kind": "like", "why": 1}"#,
            &json,
            "unknown field",
        ),
        (r#"{"url": "http://a/"}"#, &json, "missing field"),
        (r#"{"url": 1, "kind": "like"}"#, &json, "invalid type"),
        (
            r#"{"url": "http://a/", "kind": "stare"}"#,
            &|e: &IntakeError| matches!(e, IntakeError::Kind(FeedbackError::UnknownKind(_))),
            "unknown kind",
        ),
        (
            r#"{"url": "http://a/", "kind": "like", "at": "yesterday"}"#,
            &|e: &IntakeError| matches!(e, IntakeError::BadTime { .. }),
            "RFC 3339",
        ),
        (
            r#"{"url": "http://a/", "kind": "dwell"}"#,
            &|e: &IntakeError| matches!(e, IntakeError::Invalid(FeedbackError::MissingSeconds)),
            "seconds",
        ),
        (
            r#"{"url": "http://a/", "kind": "like", "seconds": 3}"#,
            &|e: &IntakeError| {
                matches!(e, IntakeError::Invalid(FeedbackError::UnexpectedSeconds(_)))
            },
            "only goes with kind dwell",
        ),
        (
            r#"{"url": "mailto:x@example.com", "kind": "like"}"#,
            &|e: &IntakeError| matches!(e, IntakeError::Invalid(FeedbackError::NotHttp { .. })),
            "http",
        ),
    ] {
        let err = read(body).expect_err(body);
        assert!(is(&err), "{body} → {err:?}");
        assert!(err.to_string().contains(says), "{body} → {err}");
    }
}
