use super::level::Centroid;
use super::vocabulary::VOCABULARY_FLOOR;
use super::*;

fn ids(clusterer: &mut Clusterer, words: &[&str]) -> Vec<u32> {
    let words: Vec<String> = words.iter().map(|word| word.to_string()).collect();
    clusterer.term_ids(&words, Lang::Other)
}

const HOUR: Millis = 3_600_000;

/// The cosine of `vector` to a centroid, straight from its weights: the words, and the
/// bigrams when two words or more matched.
fn cosine_of(centroid: &Centroid, vector: &Vector) -> f32 {
    let mut dot = 0.0;
    let mut words = 0;
    for (term, weight) in vector {
        if term & BIGRAM != 0 && words < 2 {
            break;
        }
        if let Some(w) = centroid.weights.get(term) {
            dot += w * weight;
            words += 1;
        }
    }
    dot / centroid.norm2.sqrt()
}

/// Scoring term at a time along the weighted postings gives every cluster sharing a
/// lookup word, once, with the cosine its centroid gives, however the clusters grew,
/// merged and retired; and a cluster's centroid cosines to the others through its terms'
/// postings are the ones their maps give, to the bit.
#[test]
fn postings_score_the_clusters_as_their_centroids_do() {
    use rand::{rngs::SmallRng, Rng, SeedableRng};
    let mut rng = SmallRng::seed_from_u64(7);
    let mut level = Level::default();
    let vector = |rng: &mut SmallRng| -> Vector {
        let (words, bigrams) = (rng.random_range(1..8), rng.random_range(0..4));
        // Skewed to low ids: a few common words with long postings, many rare ones.
        let mut terms: Vec<u32> = (0..words)
            .map(|_| rng.random_range(0..30).min(rng.random_range(0..30)))
            .collect();
        terms.extend((0..bigrams).map(|_| BIGRAM | rng.random_range(0..10)));
        terms.sort_unstable();
        terms.dedup();
        terms
            .into_iter()
            .map(|term| (term, rng.random_range(0.1..1.0)))
            .collect()
    };
    for step in 0..600 {
        let at = step as Millis * 1_000;
        let live: Vec<u32> = (0..level.clusters.len() as u32)
            .filter(|&id| !level.clusters[id as usize].retired)
            .collect();
        match rng.random_range(0..10) {
            0..=3 if !live.is_empty() => {
                let id = live[rng.random_range(0..live.len())];
                level.add(id, &vector(&mut rng), at);
            }
            4 if live.len() >= 2 => level.merge(live[0], live[live.len() - 1]),
            5 => level.retire(at - 200_000, |_| {}),
            _ => {
                level.create(&vector(&mut rng), at);
            }
        }
        let query = vector(&mut rng);
        // The rarest words, as an item's heaviest: few candidates beside the common
        // words' long postings.
        let lookup: Vec<u32> = query
            .iter()
            .rev()
            .map(|&(term, _)| term)
            .filter(|term| term & BIGRAM == 0)
            .take(rng.random_range(1..4))
            .collect();
        let mut scored = Vec::new();
        level.score(Query::plain(&query, &lookup), |id, cosine| {
            scored.push((id, cosine))
        });
        scored.sort_by_key(|&(id, _)| id);
        let expected: Vec<(u32, f32)> = level
            .clusters
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.retired && lookup.iter().any(|t| c.weights.contains_key(t)))
            .map(|(id, c)| (id as u32, cosine_of(c, &query)))
            .collect();
        assert_eq!(scored.len(), expected.len(), "step {step}");
        for ((id, cosine), (want_id, want)) in scored.into_iter().zip(expected) {
            assert_eq!(id, want_id, "step {step}");
            assert!(
                (cosine - want).abs() < 1e-5,
                "step {step}: {cosine} against {want}"
            );
        }
        // Against every other live cluster: some smaller, some larger than it.
        let live: Vec<u32> = (0..level.clusters.len() as u32)
            .filter(|&id| !level.clusters[id as usize].retired)
            .collect();
        if let Some(&a) = live.get(rng.random_range(0..live.len().max(1))) {
            let others: Vec<u32> = live.iter().copied().filter(|&id| id != a).collect();
            let mut cosines = Vec::new();
            level.centroid_cosines(a, &others, &mut cosines);
            let bits: Vec<u32> = cosines.iter().map(|c| c.to_bits()).collect();
            let expected: Vec<u32> = others
                .iter()
                .map(|&other| level.centroid_cosine(a, other).to_bits())
                .collect();
            assert_eq!(bits, expected, "step {step}");
        }
    }
}

/// On a stream of many windows, in an order that goes back and forth in time, a cluster's
/// slot goes to a new cluster once no item of the window can name it: the clusterer holds
/// about as many slots as clusters were live at once, not one per cluster ever made. The
/// ids handed out are never handed out again, every item of the window names a story in
/// it, and every live event's story is in the window, as the merge log says too.
#[test]
fn slots_follow_the_window_and_ids_are_never_reused() {
    use rand::{rngs::SmallRng, Rng, SeedableRng};
    let window = HOUR;
    let mut clusterer = Clusterer::new(ClusterParams {
        window,
        ..ClusterParams::default()
    });
    let mut rng = SmallRng::seed_from_u64(7);
    let words = [
        "rates", "vote", "storm", "merger", "launch", "trial", "strike", "deal",
    ];
    let (mut items, mut peak_live) = (Vec::new(), 0);
    let mut events_before = 0;
    let mut merges = MergeLog::default();
    for i in 0..12_000i64 {
        // A topic lives for an hour or so; headlines of a topic share its two names.
        let topic = i / 250 * 40 + rng.random_range(0..40);
        let title = format!(
            "topic{topic} name{topic} {} {} {}",
            words[rng.random_range(0..words.len())],
            words[rng.random_range(0..words.len())],
            rng.random_range(0..40),
        );
        // Every 15 s on average, each up to ten minutes off its place.
        let at = i * 15_000 + rng.random_range(0..600_000);
        let assignment = clusterer.add(&title, "", at);
        merges.record(clusterer.merges());
        if assignment.event >= events_before {
            assert_eq!(
                assignment.event, events_before,
                "item {i}: a new event, a new id"
            );
        }
        events_before = clusterer.events();
        items.push((at, assignment));
        let held = clusterer.footprint();
        peak_live = peak_live.max(held.live_events + held.live_stories);
        if i % 500 == 0 {
            for (slot, event) in clusterer.events.clusters.iter().enumerate() {
                if !event.retired {
                    let story = clusterer.event_story[slot];
                    assert!(clusterer.story_slot(story).is_some(), "item {i}");
                }
            }
        }
    }
    let newest = items.iter().map(|&(at, _)| at).max().unwrap_or(0);
    for &(at, assignment) in &items {
        if at >= newest - window / 2 {
            let story = clusterer.story(assignment.story);
            assert!(clusterer.stories.slot_of.contains_key(&story));
            // The log agrees within the window.
            assert_eq!(merges.story(assignment.story), story);
        }
    }
    let held = clusterer.footprint();
    let created = (clusterer.events() + clusterer.stories()) as usize;
    assert!(
        created > 10 * held.clusters,
        "{created} made, {} slots",
        held.clusters
    );
    assert!(
        held.clusters <= 3 * peak_live,
        "{} slots, {peak_live} live at most",
        held.clusters
    );
}

/// Document frequencies count the window's items: once the items before have left it, an
/// item is weighed as by a clusterer that never saw them, and the terms no live cluster
/// holds are forgotten when new ones crowd the vocabulary, which stays within twice its
/// live terms on a stream of ever new words.
#[test]
fn statistics_and_vocabulary_follow_the_window() {
    let window = 2 * HOUR;
    let params = ClusterParams {
        window,
        window_min_items: 0,
        ..ClusterParams::default()
    };
    let mut clusterer = Clusterer::new(params.clone());
    // Words shared across items, and words of their own: the vocabulary grows with the
    // stream unless it forgets.
    let title = |i: u64| format!("market rally {} shares w{i}a w{i}b w{i}c", i % 7);
    for i in 0..20_000u64 {
        clusterer.add(&title(i), "", (i as Millis) * 60_000);
    }
    let held = clusterer.footprint();
    // Two hours of items at one a minute: 120 in the window, 6 words and 5 bigrams each
    // at most, against 60,000 words seen.
    assert!(held.kept <= 121, "{held:?}");
    let floor = VOCABULARY_FLOOR;
    assert!(held.words <= 2 * floor.max(6 * 121) + 1, "{held:?}");
    assert!(held.bigrams <= 2 * floor.max(5 * 121) + 1, "{held:?}");
    assert!(clusterer.n <= 121);

    // Three windows later (everything before retired), an item weighs as in a fresh
    // clusterer that sees the same items from then on.
    let mut fresh = Clusterer::new(params);
    let later = 20_000 * 60_000 + 3 * window;
    for (k, text) in [
        "market rally shares w1a",
        "rally shares w1a w9z",
        "w9z shares",
    ]
    .iter()
    .enumerate()
    {
        let at = later + k as Millis * 1_000;
        let (old, new) = (clusterer.add(text, "", at), fresh.add(text, "", at));
        assert_eq!(old.duplicate_of.is_some(), new.duplicate_of.is_some());
        let words: Vec<String> = text.split(' ').map(str::to_string).collect();
        let (a, b) = (
            clusterer.term_ids(&words, Lang::English),
            fresh.term_ids(&words, Lang::English),
        );
        let df = |c: &mut Clusterer, ids: &[u32]| -> Vec<u32> {
            ids.iter().map(|&id| c.word_stats.df(id)).collect()
        };
        assert_eq!(df(&mut clusterer, &a), df(&mut fresh, &b), "{text}");
        assert_eq!(clusterer.n, fresh.n);
    }
}

/// A big story takes a new event at a lower cosine: with the default thresholds (0.12, or
/// 0.06 from `big_story` items on; 10 here), a story of 10 items takes one at 0.07 and a
/// story of 9 does not; merged stories count their items together.
#[test]
fn big_stories_take_new_events_at_a_lower_cosine() {
    let mut clusterer = Clusterer::new(ClusterParams {
        big_story: 10,
        ..ClusterParams::default()
    });
    let vector = vec![(0, 1.0)];
    let big = clusterer.stories.create(&vector, 0);
    let small = clusterer.stories.create(&vector, 0);
    for _ in 0..8 {
        clusterer.stories.add(big, &vector, 0);
        clusterer.stories.add(small, &vector, 0);
    }
    clusterer.stories.add(big, &vector, 0);
    assert_eq!(clusterer.stories.clusters[big as usize].items, 10);
    assert_eq!(clusterer.stories.clusters[small as usize].items, 9);
    assert!(clusterer.joins_story((0.07, big), 0.0));
    assert!(!clusterer.joins_story((0.07, small), 0.0));
    assert!(!clusterer.joins_story((0.05, big), 0.0));
    assert!(!clusterer.joins_story((0.11, small), 0.0));
    assert!(clusterer.joins_story((0.12, small), 0.0));
    clusterer.stories.merge(big, small);
    assert_eq!(clusterer.stories.clusters[big as usize].items, 19);
}

/// Long texts weigh by the plain idf: thirty articles on thirty subjects, written in the
/// same stock of common words (as a stream's prose and a site's boilerplate are), stay
/// apart, where the headline weighting (`idf^¼`, which gives a word in most items nearly
/// full weight) put them all in one story. Headlines keep the headline weighting.
#[test]
fn long_texts_on_different_subjects_stay_apart() {
    let mut clusterer = Clusterer::new(ClusterParams::default());
    let assigned: Vec<u64> = (0..30)
        .map(|i| {
            let (title, text) = article(&format!("subject{i}"), i);
            clusterer.add(&title, &text, i as Millis).story
        })
        .collect();
    let stories: FxHashSet<u64> = assigned.iter().map(|&s| clusterer.story(s)).collect();
    assert!(stories.len() >= 28, "{} stories", stories.len());

    assert_eq!(idf_power_for(0.25, 20), 0.25);
    assert_eq!(idf_power_for(0.25, SHORT_TEXT_TERMS), 0.25);
    assert!((idf_power_for(0.25, 2 * SHORT_TEXT_TERMS) - 0.5).abs() < 1e-6);
    assert_eq!(idf_power_for(0.25, LONG_TEXT_TERMS), 1.0);
    assert_eq!(idf_power_for(0.25, 10 * LONG_TEXT_TERMS), 1.0);
    assert_eq!(idf_power_for(1.0, 100), 1.0);
}

/// Whether bigrams are terms or not, an article is as long (its idf as close to the plain
/// one), and a headline as short.
#[test]
fn an_item_is_as_long_without_bigrams() {
    let (title, text) = article("subject", 1);
    let lengths = |text: &str| {
        [true, false].map(|bigrams| {
            let mut clusterer = Clusterer::new(ClusterParams {
                bigrams,
                ..ClusterParams::default()
            });
            let words: Vec<String> = text.split(' ').map(str::to_string).collect();
            let ids = clusterer.term_ids(&words, Lang::English);
            clusterer.vector(&ids).2
        })
    };
    let [with, without] = lengths(&format!("{title} {text}"));
    assert_eq!(with, without);
    assert!(with > 0.5, "{with}");
    assert_eq!(lengths(&title), [0.0, 0.0]);
}

/// A stream of one item a day holds three in its window: over so few, the words two
/// articles on one subject share weigh less than those each has alone. With the
/// statistics kept over the last hundred items, the two join; over the window alone,
/// fewer than half the pairs do. Near-duplicates are still looked for in the window only.
#[test]
fn a_sparse_stream_keeps_enough_items_for_its_idf() {
    let day: Millis = 24 * 3_600_000;
    let run = |window_min_items: usize| {
        let mut clusterer = Clusterer::new(ClusterParams {
            window_min_items,
            ..ClusterParams::default()
        });
        let stories: Vec<u64> = (0..80)
            .map(|i| {
                let (title, text) = article_in(&format!("subject{}", i / 2), i, 100);
                clusterer.add(&title, &text, i as Millis * day).story
            })
            .collect();
        let joined = (stories.chunks(2))
            .filter(|pair| clusterer.story(pair[0]) == clusterer.story(pair[1]))
            .count();
        (joined, clusterer)
    };
    let (joined, mut clusterer) = run(100);
    assert_eq!(clusterer.footprint().kept, 80);
    assert!(joined >= 36, "{joined} of 40 pairs joined");
    let (title, text) = article_in("subject0", 0, 100);
    let copy = clusterer.add(&title, &text, 80 * day);
    assert_eq!(copy.duplicate_of, None, "the first item left the window");
    let (title, text) = article_in("subject39", 79, 100);
    let copy = clusterer.add(&title, &text, 80 * day);
    assert_eq!(copy.duplicate_of, Some(79));

    let (joined, clusterer) = run(0);
    assert!(clusterer.footprint().kept <= 4);
    assert!(joined <= 20, "{joined} of 40 pairs joined");
}

/// An article on `subject` (its two words every tenth word, the title) written in a
/// stock of 60 common words in an order drawn from `draw`: a shared order would make
/// the texts near-copies.
fn article(subject: &str, draw: u64) -> (String, String) {
    article_in(subject, draw, 60)
}

/// [`article`] in a stock of `stock` common words.
fn article_in(subject: &str, draw: u64, stock: u64) -> (String, String) {
    let subject = [format!("{subject}alpha"), format!("{subject}beta")];
    let mut draw = (draw + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let text: Vec<String> = (0..150)
        .map(|k| match k % 10 {
            0 => subject[k / 10 % 2].clone(),
            _ => {
                draw = draw
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                format!("common{}word", (draw >> 33) % stock)
            }
        })
        .collect();
    (format!("{} {}", subject[0], subject[1]), text.join(" "))
}

/// A story of long texts holds its items' share of what every text has in common, and a
/// big one would draw every text on another subject by that alone: 120 articles, one in
/// three on a subject of its own and the rest on one subject, in the same common words.
/// With the background taken out of the story (the default) the forty stay apart from
/// it, in a slow stream too; without, nearly all join it (the first few through young
/// stories' merges).
#[test]
fn a_big_story_of_long_texts_draws_no_text_on_another_subject() {
    // `apart`: the time between two items.
    let run = |background: f32, apart: Millis| {
        let mut clusterer = Clusterer::new(ClusterParams {
            background,
            ..ClusterParams::default()
        });
        let (mut big, mut others) = (Vec::new(), Vec::new());
        for i in 0..120 {
            let subject = match i % 3 {
                0 => format!("subject{i}"),
                _ => "big".to_string(),
            };
            let (title, text) = article(&subject, i);
            let story = clusterer.add(&title, &text, i as Millis * apart).story;
            match i % 3 {
                0 => others.push(story),
                _ => big.push(story),
            }
        }
        let stories: FxHashSet<u64> = big.iter().map(|&s| clusterer.story(s)).collect();
        let big = clusterer.story(big[big.len() - 1]);
        let drawn: Vec<usize> = (others.iter().enumerate())
            .filter(|&(_, &s)| clusterer.story(s) == big)
            .map(|(i, _)| i)
            .collect();
        (stories.len(), drawn)
    };
    let (stories, drawn) = run(1.0, 1);
    assert_eq!(stories, 1);
    assert_eq!(drawn, Vec::<usize>::new());
    let (_, drawn) = run(0.0, 1);
    assert!(drawn.len() >= 30, "{} of 40 drawn without it", drawn.len());

    // A slow stream: the window holds 60 items, so most of the big story has left it,
    // and two thirds of the window are the story's. The background is the mean of the
    // window's items outside the story's items in the window (taking all the story ever
    // held off the window's count left nothing: 15 of the 40 drawn). The mean of 20
    // items is rough, and a text or two may still be drawn.
    let apart = ClusterParams::default().window / 60;
    let (stories, drawn) = run(1.0, apart);
    assert_eq!(stories, 1);
    assert!(drawn.len() <= 3, "drawn: {drawn:?}");
    let (_, drawn) = run(0.0, apart);
    assert!(drawn.len() >= 30, "{} of 40 drawn without it", drawn.len());
}

/// The window's items summed, which the background is the mean of, follow the window:
/// an item's dot product with them is its dot product with each item of the window
/// (none of its own), and once every item has left the window they are nothing, not
/// what rounding left. So do the stories' counts of their items in the window.
#[test]
fn the_summed_items_follow_the_window() {
    let mut clusterer = Clusterer::new(ClusterParams {
        window_min_items: 0,
        ..ClusterParams::default()
    });
    let hour = 3_600_000;
    // Items on other subjects first, so that the words below are not on every item.
    for i in 0..6 {
        clusterer.add(&format!("market{i} report{i}"), "", 0);
    }
    let titles = [
        "bank raises rates again",
        "bank rates rise",
        "storm hits coast",
        "rates and the bank",
    ];
    let (mut vectors, mut stories) = (Vec::new(), Vec::new());
    for (i, title) in titles.iter().enumerate() {
        stories.push(clusterer.add(title, "", i as Millis * hour).story);
        // The item's vector as it was counted: its weights, from the queue.
        let start = clusterer.counted.len() - clusterer.kept.back().unwrap().counted as usize;
        let vector: Vec<(u32, f32)> = (start..clusterer.counted.len())
            .map(|at| (clusterer.counted[at], clusterer.counted_weights[at]))
            .collect();
        vectors.push(vector);
    }
    let dot = |a: &[(u32, f32)], b: &[(u32, f32)]| -> f64 {
        a.iter()
            .filter_map(|(t, w)| b.iter().find(|(u, _)| u == t).map(|(_, v)| w * v))
            .map(f64::from)
            .sum()
    };
    let summed = |clusterer: &Clusterer, vector: &[(u32, f32)]| -> f64 {
        (vector.iter())
            .map(|&(t, w)| f64::from(w) * clusterer.summed_weight(t))
            .sum()
    };
    let all: f64 = vectors.iter().map(|v| dot(&vectors[3], v)).sum();
    assert!((summed(&clusterer, &vectors[3]) - all).abs() < 1e-6);
    let in_window = |clusterer: &Clusterer| -> u32 {
        let slots: FxHashSet<u32> = (stories.iter())
            .filter_map(|&s| clusterer.story_slot(s))
            .collect();
        (slots.iter())
            .map(|&slot| clusterer.stories.clusters[slot as usize].window_items)
            .sum()
    };
    assert_eq!(in_window(&clusterer), 4);
    assert!(dot(&vectors[3], &vectors[1]) > 0.0, "bank rates, both");

    // The first two items leave the window; their stories stay while a later item
    // keeps them up to date.
    clusterer.retire(clusterer.params.window + 2 * hour);
    assert_eq!(in_window(&clusterer), 2);

    // A day past the window: every item has left.
    clusterer.add("quiet day", "", clusterer.params.window + 4 * hour);
    for vector in &vectors {
        for &(term, _) in vector {
            assert_eq!(clusterer.summed_weight(term), 0.0);
        }
    }
    assert_eq!(clusterer.n, 1);
}

/// The slot of the story that the story in `slot` now stands for.
fn root(clusterer: &Clusterer, slot: u32) -> u32 {
    let serial = clusterer.stories.serial(slot);
    clusterer.story_slot(serial).unwrap_or(slot)
}

/// A story of `items` items, each with `vector`.
fn story(clusterer: &mut Clusterer, vector: &Vector, items: u32) -> u32 {
    let id = clusterer.stories.create(vector, 0);
    let serial = clusterer.stories.serial(id);
    set(&mut clusterer.story_parent, id, serial);
    for _ in 1..items {
        clusterer.stories.add(id, vector, 0);
    }
    id
}

/// [`Clusterer::grow_young_story`] after an item's lookup by `words` found its candidates.
fn grow(clusterer: &mut Clusterer, story: u32, words: &[u32]) -> u32 {
    let vector: Vector = words.iter().map(|&word| (word, 1.0)).collect();
    clusterer
        .stories
        .best_scored(Query::plain(&vector, words), None);
    clusterer.grow_young_story(story, 0.0)
}

/// A young story (2 items at most here) merges into the closest big story (3 items or
/// more) whose centroid reaches the young threshold (0.5 here); not below it, not once it
/// is older, not into a story that is not big.
#[test]
fn young_stories_merge_into_a_close_big_story() {
    let mut clusterer = Clusterer::new(ClusterParams {
        big_story: 3,
        young_story: 2,
        young_threshold: 0.5,
        ..ClusterParams::default()
    });
    let big = story(&mut clusterer, &vec![(0, 1.0)], 3);
    // Cosine 0.6 to the big story: merges.
    let close = story(&mut clusterer, &vec![(0, 0.6), (1, 0.8)], 1);
    assert_eq!(grow(&mut clusterer, close, &[0]), big);
    assert_eq!(root(&clusterer, close), big);
    assert_eq!(clusterer.stories.clusters[big as usize].items, 4);
    assert!(clusterer.stories.clusters[close as usize].retired);
    // Cosine 0.4: stays.
    let far = story(&mut clusterer, &vec![(0, 0.4), (2, 0.916_515)], 2);
    assert_eq!(grow(&mut clusterer, far, &[0]), far);
    // Three items: no longer young (big, here), stays.
    let old = story(&mut clusterer, &vec![(0, 0.6), (3, 0.8)], 3);
    assert_eq!(grow(&mut clusterer, old, &[0]), old);
    // Identical to a story of two items, which is not big: stays.
    let small = story(&mut clusterer, &vec![(4, 1.0)], 2);
    let twin = story(&mut clusterer, &vec![(4, 1.0)], 1);
    assert_eq!(grow(&mut clusterer, twin, &[4]), twin);
    assert_eq!(root(&clusterer, small), small);
    // Off: nothing is young.
    clusterer.params.young_story = 0;
    let again = story(&mut clusterer, &vec![(0, 1.0)], 1);
    assert_eq!(grow(&mut clusterer, again, &[0]), again);
}

/// A big story (4 items or more here) that grows takes in the young stories (2 items at
/// most) among its item's candidates whose centroids reach the young threshold (0.5) against
/// it: not those below it, not a story between young and big.
#[test]
fn a_growing_big_story_takes_in_close_young_stories() {
    let mut clusterer = Clusterer::new(ClusterParams {
        big_story: 4,
        young_story: 2,
        young_threshold: 0.5,
        ..ClusterParams::default()
    });
    let close = story(&mut clusterer, &vec![(0, 0.6), (1, 0.8)], 2);
    let far = story(&mut clusterer, &vec![(0, 0.4), (2, 0.916_515)], 1);
    let middle = story(&mut clusterer, &vec![(0, 0.6), (3, 0.8)], 3);
    let big = story(&mut clusterer, &vec![(0, 1.0)], 4);
    assert_eq!(grow(&mut clusterer, big, &[0]), big);
    assert_eq!(root(&clusterer, close), big);
    assert_eq!(root(&clusterer, far), far);
    assert_eq!(root(&clusterer, middle), middle);
    assert_eq!(clusterer.stories.clusters[big as usize].items, 6);
    // The middle story is no candidate either way.
    assert_eq!(grow(&mut clusterer, middle, &[0]), middle);
    // Off: nothing is taken in.
    let later = story(&mut clusterer, &vec![(0, 0.6), (4, 0.8)], 1);
    clusterer.params.young_story = 0;
    assert_eq!(grow(&mut clusterer, big, &[0]), big);
    assert_eq!(root(&clusterer, later), later);
}

/// Events see the words of a vector, normalised again: 0.3 and 0.4 become 0.6 and 0.8.
#[test]
fn event_vectors_are_the_words_renormalised() {
    let vector = vec![(0, 0.3), (7, 0.4), (BIGRAM, 0.866), (BIGRAM | 3, 0.1)];
    let words = words_only(&vector);
    assert_eq!(words.len(), 2);
    assert_eq!(words[0].0, 0);
    assert_eq!(words[1].0, 7);
    assert!((words[0].1 - 0.6).abs() < 1e-6);
    assert!((words[1].1 - 0.8).abs() < 1e-6);
    assert!(words_only(&vec![(BIGRAM, 1.0)]).is_empty());
}

/// Words become term ids through their stems, once each: stop words and one-letter words
/// have none, and inflections of one stem share one.
#[test]
fn words_map_to_the_ids_of_their_stems() {
    let mut clusterer = Clusterer::new(ClusterParams::default());
    let words: Vec<String> = ["the", "officials", "a", "official", "taper", "officials"]
        .iter()
        .map(|word| word.to_string())
        .collect();
    let ids = clusterer.term_ids(&words, Lang::English);
    assert_eq!(ids, [0, 0, 1, 0]);
    assert_eq!(clusterer.terms["offici"], 0);
    assert_eq!(clusterer.terms["taper"], 1);
    // Remembered: the same answer without the stemmer.
    assert_eq!(
        clusterer.word_ids[Lang::English.index()]["officials"],
        Some(0)
    );
    assert_eq!(clusterer.word_ids[Lang::English.index()]["the"], None);
    assert_eq!(clusterer.term_ids(&words, Lang::English), ids);
}

/// A people's or language's stem joins its place's once the place is a term, and only
/// then; off, the two stay apart.
#[test]
fn demonyms_map_to_the_stems_of_their_places() {
    let words = |list: &[&str]| -> Vec<String> { list.iter().map(|w| w.to_string()).collect() };
    let mut clusterer = Clusterer::new(ClusterParams::default());
    // Before any place is known, "russian" is a term of its own.
    let early = clusterer.term_ids(&words(&["russians"]), Lang::English);
    let places = clusterer.term_ids(
        &words(&["russia", "china", "ukraine", "japan"]),
        Lang::English,
    );
    let peoples = clusterer.term_ids(
        &words(&["chinese", "ukrainian", "japanese", "canadian"]),
        Lang::English,
    );
    assert_eq!(peoples[..3], places[1..]);
    assert!(!places.contains(&peoples[3]));
    assert!(!places.contains(&early[0]));
    // Remembered per word: "russians" keeps the id it got first.
    assert_eq!(
        clusterer.term_ids(&words(&["russians"]), Lang::English),
        early
    );
    assert_eq!(
        clusterer.term_ids(&words(&["russian"]), Lang::English),
        [places[0]]
    );
    assert_eq!(demonym_bases("chines")[..2], ["chin", "china"]);
    assert!(demonym_bases("korea").is_empty());

    let mut off = Clusterer::new(ClusterParams {
        demonyms: false,
        ..ClusterParams::default()
    });
    let places = off.term_ids(&words(&["russia", "china"]), Lang::English);
    let peoples = off.term_ids(&words(&["russian", "chinese"]), Lang::English);
    assert!(places.iter().all(|id| !peoples.contains(id)));
}

/// Counted over stories, a word one story repeats weighs more than a word as frequent
/// among the items that many stories use once each; over the items alone they weigh
/// the same. A word on every item weighs nothing either way, however few the stories: a
/// stream whose items all share it does not fall into one story.
#[test]
fn a_word_one_story_repeats_outweighs_one_many_stories_use() {
    for share in [0.0, 0.4] {
        let mut clusterer = Clusterer::new(ClusterParams {
            idf_power: 1.0,
            story_idf_share: share,
            ..ClusterParams::default()
        });
        let [titanfall, way] = ids(&mut clusterer, &["titanfall", "way"])[..] else {
            unreachable!("two words")
        };
        // Ten items each (df 10 of N = 20), in one story and in ten.
        for i in 0..10 {
            let filler = ids(&mut clusterer, &[&format!("q{i}"), &format!("r{i}")]);
            clusterer.vector(&[titanfall, filler[0]]);
            clusterer.vector(&[way, filler[1]]);
            clusterer.stories.create(&vec![(way, 1.0)], 0);
        }
        clusterer.stories.create(&vec![(titanfall, 1.0)], 0);

        let vector = clusterer.vector(&[titanfall, way]).0;
        let weight = |id: u32| vector.iter().find(|(term, _)| *term == id).unwrap().1;
        let (titanfall, way) = (weight(titanfall), weight(way));
        if share == 0.0 {
            assert!((titanfall - way).abs() < 1e-6, "{titanfall} {way}");
        } else {
            // (ln(13/2) / ln(13/11))^0.4 = 2.63 times.
            assert!(titanfall > 2.5 * way, "{titanfall} {way}");
        }
    }

    for share in [0.4, 1.0] {
        let mut clusterer = Clusterer::new(ClusterParams {
            story_idf_share: share,
            ..ClusterParams::default()
        });
        let stories: std::collections::BTreeSet<u64> = (0..200)
            .map(|i| {
                let title = format!("market rally shares w{i}a w{i}b w{i}c");
                clusterer.add(&title, "", i * 60_000).story
            })
            .collect();
        assert_eq!(stories.len(), 200, "share {share}");
    }
}

/// Bigrams are terms with their own document frequencies, weighted like words, and left
/// out of candidate lookup. Worked by hand: idf = ln(N / df) over the items so far (the
/// items' idf alone: no share counted over the stories).
#[test]
fn bigrams_are_weighted_terms_but_not_looked_up() {
    let mut clusterer = Clusterer::new(ClusterParams {
        idf_power: 1.0,
        story_idf_share: 0.0,
        ..ClusterParams::default()
    });
    // N = 1: every df is 1, every idf ln 1 = 0: no weight at all.
    let (a, b, c) = (
        ids(&mut clusterer, &["aa"])[0],
        ids(&mut clusterer, &["bb"])[0],
        ids(&mut clusterer, &["cc"])[0],
    );
    assert!(clusterer.vector(&[a, b]).0.is_empty());
    // N = 2: a (df 2) weighs nothing; c and the bigram "a c" (df 1) ln 2 each.
    let second = clusterer.vector(&[a, c]).0;
    assert_eq!(second.len(), 2);
    assert_eq!(second.iter().filter(|(id, _)| id & BIGRAM != 0).count(), 1);
    for (_, weight) in &second {
        assert!((weight - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    }
    // N = 3: b, c and "a b" have df 2 (ln 1.5), "b c" df 1 (ln 3);
    // norm² = 3 · ln²1.5 + ln²3.
    let third = clusterer.vector(&[a, b, c]).0;
    let norm = (3.0 * 1.5f32.ln().powi(2) + 3f32.ln().powi(2)).sqrt();
    let bc = clusterer.bigrams[&(b, c)];
    let weight = |id: u32| third.iter().find(|(term, _)| *term == id).unwrap().1;
    assert!((weight(b) - 1.5f32.ln() / norm).abs() < 1e-6);
    assert!((weight(bc) - 3f32.ln() / norm).abs() < 1e-6);
    assert!((weight(bc) - 0.842_559).abs() < 1e-5);
    assert_eq!(third.len(), 4);
    // Lookup takes words only, highest weighted first (ties: lower id).
    assert_eq!(clusterer.lookup(&third), [b, c]);

    // Idf power ½: the same items weigh √idf, so "b c" weighs
    // √ln 3 / √(3 · ln 1.5 + ln 3) = 0.688 881; with the default ¼, the fourth root,
    // (ln 3)^¼ / √(3 · √ln 1.5 + √ln 3) = 0.595 224.
    for (power, expected) in [(0.5, 0.688_881), (0.25, 0.595_224)] {
        let mut damped = Clusterer::new(ClusterParams {
            idf_power: power,
            story_idf_share: 0.0,
            ..ClusterParams::default()
        });
        let (a, b, c) = (
            ids(&mut damped, &["aa"])[0],
            ids(&mut damped, &["bb"])[0],
            ids(&mut damped, &["cc"])[0],
        );
        damped.vector(&[a, b]);
        damped.vector(&[a, c]);
        let third = damped.vector(&[a, b, c]).0;
        let bc = damped.bigrams[&(b, c)];
        let weight = third.iter().find(|(term, _)| *term == bc).unwrap().1;
        assert!((weight - expected).abs() < 1e-5, "{power}: {weight}");
    }
    assert_eq!(ClusterParams::default().idf_power, 0.25);

    // Words only: no bigram ids at all.
    let mut words_only = Clusterer::new(ClusterParams {
        bigrams: false,
        story_idf_share: 0.0,
        ..ClusterParams::default()
    });
    let (a, b, c) = (
        ids(&mut words_only, &["aa"])[0],
        ids(&mut words_only, &["bb"])[0],
        ids(&mut words_only, &["cc"])[0],
    );
    words_only.vector(&[a, b]);
    let vector = words_only.vector(&[a, c]).0;
    assert_eq!(vector.len(), 1);
    assert!((vector[0].1 - 1.0).abs() < 1e-6);
}
