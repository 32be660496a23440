//! A news stream for `ferret cluster --input` is outside input: whatever the bytes, the lines
//! (or the JSON array) read as items or an error naming a line (an array's item, or the array),
//! never a panic; every item read has a date; and the items read go through the whole story pipeline (HTML stripped, words,
//! language, named by `lang` or detected, stems, near-duplicates, both clustering levels): a near-copy only of an item
//! before it, every item counted, and the same placements when the stream is run again; also
//! with a window of an hour, so that dates a few hours apart retire clusters and their slots go
//! to new ones, and ids from before the window are followed through the merge log.
#![no_main]

use ferret::stories::{read_items, ClusterParams, Clusterer, MergeLog};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let items = match read_items(text) {
        Ok(items) => items,
        Err(err) => {
            let named = ["line ", "item ", "the JSON array: "];
            assert!(
                named.iter().any(|start| err.starts_with(start)),
                "an error names its line: {err}"
            );
            return;
        }
    };
    let run = |params: &ClusterParams| {
        let mut clusterer = Clusterer::new(params.clone());
        let mut merges = MergeLog::default();
        let placed: Vec<_> = items
            .iter()
            .map(|item| {
                let at = item.at;
                let placed = clusterer.add_in(item.language(), &item.title, &item.text, at);
                merges.record(clusterer.merges());
                (placed.event, placed.story, placed.duplicate_of)
            })
            .collect();
        assert_eq!(clusterer.len() as usize, items.len());
        assert!(clusterer.duplicates() as usize <= items.len());
        let events = clusterer.events();
        placed
            .into_iter()
            .map(|(event, story, copy_of)| {
                assert!(event < events, "an event id is one handed out");
                (event, merges.story(story), copy_of)
            })
            .collect::<Vec<_>>()
    };
    let hour = ClusterParams {
        window: 3_600_000,
        ..ClusterParams::default()
    };
    for params in [ClusterParams::default(), hour] {
        let first = run(&params);
        for (n, &(_, _, copy_of)) in first.iter().enumerate() {
            if let Some(original) = copy_of {
                assert!((original as usize) < n, "item {n} a copy of a later one");
            }
        }
        assert_eq!(first, run(&params), "deterministic");
    }
});
