//! The stories core: metrics against the data README's check values, the seed's shingle
//! example, the text pipeline, and determinism of the clusterer.

use ferret::stories::metrics::score;
use ferret::stories::shingles::{containment, jaccard, shingles, LshIndex};
use ferret::stories::text::{strip_html, Analyzer, Lang};
use ferret::stories::{read_items, ClusterParams, Clusterer};

fn test_labels() -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/data/news-clustering/uci-news-aggregator-subset/test.jsonl"
    );
    let text = std::fs::read_to_string(path).expect("the shared data is beside the repository");
    read_items(&text)
        .unwrap()
        .into_iter()
        .map(|item| item.cluster.unwrap())
        .collect()
}

fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() < 5e-5
}

/// The reference vectors of the data README §4: all singletons and one cluster on test.
#[test]
fn metrics_match_the_readme_check_values() {
    let gold = test_labels();
    let singletons: Vec<usize> = (0..gold.len()).collect();
    let s = score(&gold, &singletons);
    assert_eq!(s.pairwise.f1, 0.0);
    assert!(close(s.bcubed.precision, 1.0));
    assert!(close(s.bcubed.recall, 0.01368), "{:?}", s.bcubed);
    assert!(close(s.bcubed.f1, 0.02699), "{:?}", s.bcubed);

    let one = vec![0; gold.len()];
    let s = score(&gold, &one);
    assert!(close(s.pairwise.precision, 0.03754), "{:?}", s.pairwise);
    assert!(close(s.pairwise.recall, 1.0));
    assert!(close(s.pairwise.f1, 0.07236), "{:?}", s.pairwise);
    assert!(close(s.bcubed.precision, 0.03784), "{:?}", s.bcubed);
    assert!(close(s.bcubed.f1, 0.07292), "{:?}", s.bcubed);
    assert_eq!(s.gold_clusters, 44);
}

/// Pairwise counts on a hand example: gold {a,a,a,b,b}, predicted {1,1,2,2,2}.
#[test]
fn metrics_on_a_hand_example() {
    let s = score(&["a", "a", "a", "b", "b"], &[1, 1, 2, 2, 2]);
    // tp = C(2) + C(1) + C(2) = 2; predicted pairs = C(2) + C(3) = 4; gold pairs = 3 + 1 = 4.
    assert!(close(s.pairwise.precision, 0.5));
    assert!(close(s.pairwise.recall, 0.5));
    // BCubed P = (4/2 + 1/3 + 4/3) / 5, R = (4/3 + 1/3 + 4/2) / 5.
    assert!(close(
        s.bcubed.precision,
        (2.0 + 1.0 / 3.0 + 4.0 / 3.0) / 5.0
    ));
    assert!(close(s.bcubed.recall, (4.0 / 3.0 + 1.0 / 3.0 + 2.0) / 5.0));
}

/// The seed's pair at w = 3: Jaccard 4/6, containment 1; ferret calls them duplicates.
#[test]
fn the_seeds_shingle_example() {
    let analyzer = Analyzer::new();
    let a = shingles(&analyzer.words("а роза упала на лапу Азора"), 3);
    let b = shingles(
        &analyzer.words("а роза упала на лапу, упала на лапу Азора"),
        3,
    );
    assert_eq!(a.len(), 4);
    assert_eq!(b.len(), 6);
    assert!((jaccard(&a, &b) - 4.0 / 6.0).abs() < 1e-12);
    assert!((containment(&a, &b) - 1.0).abs() < 1e-12);

    let mut clusterer = Clusterer::new(ClusterParams::default());
    let first = clusterer.add("а роза упала на лапу Азора", "", 0);
    let second = clusterer.add("а роза упала на лапу, упала на лапу Азора", "", 1_000);
    assert_eq!(second.duplicate_of, Some(0));
    assert_eq!((second.event, second.story), (first.event, first.story));
    assert_eq!(clusterer.duplicates(), 1);
}

#[test]
fn the_text_pipeline_folds_stems_and_drops_stop_words() {
    let analyzer = Analyzer::new();
    assert_eq!(
        analyzer.detect("Fed sees high bar for change in tapering"),
        Lang::English
    );
    assert_eq!(
        analyzer.detect("Центробанк сохранил ключевую ставку"),
        Lang::Russian
    );
    assert_eq!(
        analyzer.terms("The Fed's officials are TAPERING purchases", Lang::English),
        ["fed", "offici", "taper", "purchas"]
    );
    assert_eq!(
        analyzer.terms("Центробанк сохранил ключевые ставки", Lang::Russian),
        ["центробанк", "сохран", "ключев", "ставк"]
    );
    assert_eq!(strip_html("<p>Q&amp;A <b>now</b></p>"), "Q&A now");
}

/// Same input, same clusters.
#[test]
fn clustering_is_deterministic() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/data/news-clustering/uci-news-aggregator-subset/dev.jsonl"
    );
    let items = read_items(&std::fs::read_to_string(path).unwrap()).unwrap();
    let run = || {
        let mut clusterer = Clusterer::new(ClusterParams::default());
        items
            .iter()
            .take(800)
            .map(|item| clusterer.add(&item.title, &item.text, item.at))
            .collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
}

/// The LSH index finds an item sharing shingles with the query, and forgets the oldest first.
#[test]
fn lsh_finds_copies_and_forgets_the_oldest() {
    let analyzer = Analyzer::new();
    let set = |text: &str| shingles(&analyzer.words(text), 3);
    let mut index = LshIndex::new(20, 2, 7);
    let a = set("Apple releases iOS 7.1 update with CarPlay");
    let b = set("Mt. Gox files for US bankruptcy to halt class action");
    index.insert(10, &index.bands(&a));
    index.insert(11, &index.bands(&b));
    let query = index.bands(&set("Apple releases iOS 7.1 update with CarPlay support"));
    assert_eq!(index.candidates(&query), [10]);
    index.remove_oldest();
    assert!(index.candidates(&query).is_empty());
    assert_eq!(index.candidates(&index.bands(&b)), [11]);
}

/// The fuzzy matrix measure on worked examples: word similarity 1 − edit distance / longer
/// length with a 0.7 cut-off, the best one-to-one cover, divided by max(M, N).
#[test]
fn fuzzy_cover_on_worked_examples() {
    use ferret::stories::fuzzy::{fuzzy_similarity, word_similarity};
    let words = |text: &str| -> Vec<String> { text.split(' ').map(str::to_string).collect() };
    assert!((word_similarity("упала", "упали", 0.7) - 0.8).abs() < 1e-12);
    assert!((word_similarity("роза", "розы", 0.7) - 0.75).abs() < 1e-12);
    assert_eq!(
        word_similarity("кот", "кит", 0.7),
        0.0,
        "2/3 is under the cut-off"
    );
    let pair = fuzzy_similarity(&words("роза упала"), &words("упали розы"), 0.7);
    assert!((pair - 0.775).abs() < 1e-6, "{pair}");
    // An extra word on either side divides by the longer list.
    let longer = fuzzy_similarity(&words("роза упала на"), &words("упали розы"), 0.7);
    assert!((longer - 1.55 / 3.0).abs() < 1e-6, "{longer}");
    assert!((fuzzy_similarity(&words("a b c"), &words("a b c"), 0.7) - 1.0).abs() < 1e-12);
    assert_eq!(fuzzy_similarity(&words("a"), &[], 0.7), 0.0);
}

/// The connected-components alternative links items through any chain of close pairs. (The
/// stream's first items come first: with idf over the stream so far, the very first item has
/// no weight at all.)
#[test]
fn connected_components_link_chains_of_close_items() {
    use ferret::stories::components::connected_components;
    let items = [
        "Weather turns cold in Chicago",
        "Football season opens",
        "Mt. Gox files for bankruptcy",
        "Apple releases iOS update",
        "Mt. Gox bankruptcy filing in Tokyo",
        "Apple iOS update brings CarPlay",
        "Tokyo court hears Mt. Gox filing",
    ]
    .map(|title| (title, "", None));
    let labels = &connected_components(&items, 0.2)[2..];
    assert_eq!(labels[0], labels[2]);
    assert_eq!(labels[2], labels[4]);
    assert_eq!(labels[1], labels[3]);
    assert_ne!(labels[0], labels[1]);
}

/// The book's placements (what the store keeps) put every item where `ranked` shows it: the
/// same stories, the same events, the same originals.
#[test]
fn placements_agree_with_the_ranked_stories() {
    use ferret::stories::{NewsItem, NoInterest, RankWeights, StoryBook};
    use std::collections::BTreeMap;

    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/data/news-clustering/uci-news-aggregator-subset/dev.jsonl"
    );
    let items = read_items(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut book = StoryBook::new(ClusterParams::default());
    for item in items.iter().take(1_500) {
        book.add(NewsItem {
            id: item.id.clone(),
            source: "dev".into(),
            title: item.title.clone(),
            link: String::new(),
            published: item.at,
            text: item.text.clone(),
            language: item.lang.clone(),
        });
    }
    let shown: BTreeMap<String, (String, String, Option<String>)> = book
        .ranked(
            book.newest(),
            &RankWeights::default(),
            &NoInterest,
            usize::MAX,
        )
        .into_iter()
        .flat_map(|story| {
            story.events.into_iter().flat_map(move |event| {
                let story = story.story.clone();
                event.items.into_iter().map(move |item| {
                    (
                        item.item.id,
                        (story.clone(), event.event.clone(), item.duplicate_of),
                    )
                })
            })
        })
        .collect();
    let placed: BTreeMap<String, (String, String, Option<String>)> = book
        .placements()
        .map(|p| (p.id, (p.story, p.event, p.duplicate_of)))
        .collect();
    assert_eq!(placed.len(), book.len());
    assert_eq!(placed, shown);
    assert!(placed.values().any(|p| p.2.is_some()), "some near-copies");
}

/// Languages other than English and Russian are detected, named by their codes, and
/// stemmed with their stop words dropped; text without a letter outside ASCII stays English,
/// and so does a headline whatlang is unsure of.
#[test]
fn other_languages_are_detected_and_stemmed() {
    let analyzer = Analyzer::new();
    for (text, lang) in [
        (
            "Die Bundesregierung hat am Mittwoch beschlossen, dass die Grenzkontrollen \
             verlängert werden, weil die Zahl der Asylanträge weiter gestiegen ist.",
            Lang::German,
        ),
        (
            "El Gobierno aprobó este martes el decreto que regula los alquileres en las \
             grandes ciudades, después de meses de negociación con los socios.",
            Lang::Spanish,
        ),
        (
            "O presidente disse que a reforma da previdência será votada ainda este mês \
             no Congresso, apesar da oposição dos sindicatos.",
            Lang::Portuguese,
        ),
        // Headlines: whatlang guesses Afrikaans, Welsh, Tagalog at low confidence.
        ("Beyoncé wants to ban the word bossy", Lang::English),
        (
            "Why Beyoncé And Victoria Beckham Want To Ban 'Bossy'",
            Lang::English,
        ),
        (
            "Los colombianos votan en la elección de su presidente",
            Lang::Spanish,
        ),
        ("La Liga title race goes to the wire", Lang::English),
    ] {
        assert_eq!(analyzer.detect(text), lang, "{text}");
    }
    for (tag, lang) in [
        ("de", Some(Lang::German)),
        ("spa", Some(Lang::Spanish)),
        ("eng", Some(Lang::English)),
        ("pt-BR", Some(Lang::Portuguese)),
        ("fre", Some(Lang::French)),
        ("nb_NO", Some(Lang::Norwegian)),
        ("German", Some(Lang::German)),
        ("ja", None),
        ("", None),
    ] {
        assert_eq!(Lang::from_tag(tag), lang, "{tag:?}");
    }
    assert_eq!(
        analyzer.terms("Las elecciones de la región", Lang::Spanish),
        ["eleccion", "region"]
    );
    assert_eq!(
        analyzer.terms("Die Wahlen in den Ländern", Lang::German),
        ["wahl", "land"]
    );
}

/// Spanish headlines of three stories share function words across stories ("de", "la",
/// "el", "en", "los"), and within a story inflections ("elecciones", "elección"): in
/// Spanish (as a feed or a labelled stream names it: a headline is too short to detect it
/// surely), stemmed with the stop words dropped, each story is one; read as words of no
/// known language, a story falls apart.
#[test]
fn spanish_headlines_cluster_by_their_stems() {
    let headlines = [
        // Three stories of one headline each first: a stream's first items have no idf.
        ("La inflación de la zona euro baja en octubre", 'D'),
        (
            "Muere el escritor Gabriel García Márquez a los 87 años",
            'E',
        ),
        ("Apple presenta el nuevo iPhone en California", 'F'),
        (
            "Los colombianos votan en las elecciones presidenciales",
            'A',
        ),
        ("El huracán Patricia llega a la costa de México", 'B'),
        ("El Real Madrid gana al Barcelona en el clásico", 'C'),
        // Not one word in common with the first of its story, three stems.
        ("Elección presidencial: Colombia vota el domingo", 'A'),
        (
            "México evacúa a miles de vecinos por el huracán Patricia",
            'B',
        ),
        (
            "Colombianos eligen presidente en unas elecciones reñidas",
            'A',
        ),
        ("Los goles del clásico: el Madrid gana en el Camp Nou", 'C'),
        (
            "Patricia, el huracán más fuerte en la historia de México",
            'B',
        ),
        ("El Barcelona pierde el clásico ante el Real Madrid", 'C'),
    ];
    let stories = |lang: Option<Lang>| {
        let mut clusterer = Clusterer::new(ClusterParams::default());
        let assigned: Vec<(u64, char)> = (headlines.iter().enumerate())
            .map(|(i, (title, gold))| {
                let at = i as i64 * 60_000;
                (clusterer.add_in(lang, title, "", at).story, *gold)
            })
            .collect();
        let mut pairs = (0, 0);
        for (i, a) in assigned.iter().enumerate() {
            for b in &assigned[i + 1..] {
                match (a.0 == b.0, a.1 == b.1) {
                    (true, false) => pairs.0 += 1,
                    (false, true) => pairs.1 += 1,
                    _ => {}
                }
            }
        }
        // (pairs joined across stories, pairs of a story kept apart)
        pairs
    };
    assert_eq!(stories(Some(Lang::Spanish)), (0, 0));
    let (joined, apart) = stories(Some(Lang::Other));
    assert!(joined + apart > 0, "{joined} joined, {apart} apart");
}

/// A feed's declared language reaches the clusterer: German headlines without a letter
/// outside ASCII (which detection takes for English) that share only inflected words
/// ("Wahlen" and "Wahl", "Ergebnisse" and "Ergebnis") are one story when the feed says
/// `de-DE`, and two when it says nothing.
#[test]
fn a_feeds_language_is_the_language_its_items_are_stemmed_in() {
    use ferret::feed::{parse, ParseOptions};
    use ferret::stories::{NewsItem, StoryBook};

    let feed = |language: &str| {
        let items: String = [
            "Inflation in der Eurozone sinkt im Oktober",
            "Neues Stadion in Hamburg wird teurer",
            "Bahnstreik legt den Fernverkehr lahm",
            "Wahlen in Hessen: Ergebnisse am Sonntag",
            "Die Wahl im Ueberblick: das Ergebnis",
        ]
        .iter()
        .enumerate()
        .map(|(i, title)| {
            format!(
                "<item><guid>{i}</guid><title>{title}</title>\
                 <pubDate>Sun, 0{} Nov 2026 10:00:00 GMT</pubDate></item>",
                i + 1
            )
        })
        .collect();
        let rss = format!(
            "<rss version=\"2.0\"><channel><title>t</title>{language}{items}</channel></rss>"
        );
        parse(rss.as_bytes(), &ParseOptions::default()).unwrap()
    };
    let stories_of_the_last_two = |feed: ferret::feed::Feed| {
        let mut book = StoryBook::new(ClusterParams::default());
        for item in &feed.items {
            book.add(NewsItem::from_feed("f", &feed, item, 0));
        }
        let story = |id: &str| book.placements().find(|p| p.id == id).unwrap().story;
        (story("3"), story("4"))
    };
    let german = feed("<language>de-DE</language>");
    assert_eq!(german.language.as_deref(), Some("de-DE"));
    let (a, b) = stories_of_the_last_two(german);
    assert_eq!(a, b);
    let (a, b) = stories_of_the_last_two(feed(""));
    assert_ne!(a, b);
}

/// What the store keeps of a sparse stream (one item a day, two on each subject) replays
/// into the stories the live book holds: the items of the window and, older, the last
/// `window_min_items` filed, which the clusterer's statistics still count. The window's
/// items alone (four) replay into other stories.
#[test]
fn a_sparse_streams_replay_needs_the_items_the_statistics_keep() {
    use ferret::stories::{NewsItem, StoryBook};
    use std::collections::BTreeMap;

    let params = ClusterParams::default();
    let day = 24 * 3_600_000;
    let mut draw: u64 = 7;
    let items: Vec<NewsItem> = (0..150)
        .map(|i: i64| {
            let subject = format!("subject{}", i / 2);
            let text: Vec<String> = (0..150)
                .map(|k| match k % 10 {
                    0 => subject.clone(),
                    _ => {
                        draw = draw
                            .wrapping_mul(6_364_136_223_846_793_005)
                            .wrapping_add(1_442_695_040_888_963_407);
                        format!("common{}word", (draw >> 33) % 100)
                    }
                })
                .collect();
            NewsItem {
                id: i.to_string(),
                source: "http://127.0.0.1/feed".into(),
                title: subject.clone(),
                link: format!("http://127.0.0.1/{i}"),
                published: i * day,
                text: text.join(" "),
                language: None,
            }
        })
        .collect();
    // The window's items grouped by story, and by event.
    let grouped = |items: &[NewsItem]| {
        let mut book = StoryBook::new(params.clone());
        for item in items {
            book.add(item.clone());
        }
        let mut stories: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut events: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for placed in book.placements() {
            stories
                .entry(placed.story)
                .or_default()
                .push(placed.id.clone());
            events.entry(placed.event).or_default().push(placed.id);
        }
        let mut groups: Vec<Vec<Vec<String>>> = [stories, events]
            .map(|map| map.into_values().collect())
            .into();
        groups.iter_mut().for_each(|groups| groups.sort());
        groups
    };
    let live = grouped(&items);
    let newest = items.last().unwrap().published;
    let kept = |keep_last: usize| -> Vec<NewsItem> {
        let from = items.len() - keep_last;
        (items.iter().enumerate())
            .filter(|&(i, item)| i >= from || item.published >= newest - params.window)
            .map(|(_, item)| item.clone())
            .collect()
    };
    // What the book asks the store to keep: with no near-duplicates, the last 100 filed
    // and the newest (items leave the statistics as the next one arrives).
    let mut book = StoryBook::new(params.clone());
    for item in &items {
        book.add(item.clone());
    }
    assert_eq!(book.kept_for_replay(), params.window_min_items + 1);
    assert_eq!(grouped(&kept(book.kept_for_replay())), live);
    let window_only = kept(0);
    assert_eq!(window_only.len(), 4);
    assert_ne!(grouped(&window_only), live);
}
