//! Feeds are outside input: whatever the bytes (and HTTP charset), parsing gives a feed or a
//! typed error, never a panic, in full and in lean mode; and lean mode never finds items that
//! full mode does not. A parsed feed read as a listing page keeps or counts every item, and a
//! book of broadcasts that takes it (as page 1, then again as page 2: the proofs of absence and
//! the learning of the order among equal keys from its ids) never reports a listed item gone.
#![no_main]

use ferret::feed::{parse, ParseOptions};
use ferret::listing::{view_from_feed, Book};
use libfuzzer_sys::fuzz_target;

const CHARSETS: [Option<&str>; 5] = [
    None,
    Some("utf-8"),
    Some("Shift_JIS"),
    Some("utf-16"),
    Some("koi8-r"),
];

fuzz_target!(|data: &[u8]| {
    let (selector, bytes) = data.split_first().map_or((0, data), |(&s, rest)| (s, rest));
    let options = ParseOptions {
        http_charset: CHARSETS[usize::from(selector) % CHARSETS.len()],
        base_url: (selector & 0x80 != 0).then_some("http://example.com/feeds/a.xml"),
        ..ParseOptions::default()
    };
    let full = parse(bytes, &options);
    let lean = parse(
        bytes,
        &ParseOptions {
            lean: true,
            ..options
        },
    );
    match (full, lean) {
        (Ok(full), Ok(lean)) => {
            assert_eq!(
                full.items.len(),
                lean.items.len(),
                "lean mode reads the same items"
            );
            for (a, b) in full.items.iter().zip(&lean.items) {
                assert_eq!(a.id, b.id);
                assert!(!a.id.is_empty(), "every item has an id");
            }
            assert!(
                !full.cut_off || !full.well_formed,
                "a cut-off document is ill-formed"
            );
            // Every field is readable (strings valid, nothing dangling).
            let _ = format!("{full:?}");
            // A cut-off document is no listing page, and nothing else is refused.
            let page = view_from_feed(1, &full, Some(("nicolive", "total_count")));
            assert_eq!(page.is_err(), full.cut_off);
            let Ok((view, skipped)) = page else {
                return;
            };
            assert_eq!(
                view.items.len() + skipped,
                full.items.len(),
                "no item silently dropped"
            );
            let mut book = Book::new();
            book.apply_snapshot(&view, 18, 0, 0, 1);
            let mut again = view.clone();
            again.page = 2;
            book.apply_snapshot(&again, 18, 2, 2, 3);
            for item in &view.items {
                assert!(
                    !book.is_gone(&item.id),
                    "a listed item is never reported gone"
                );
            }
        }
        (Err(a), Err(b)) => assert_eq!(a, b),
        (full, lean) => panic!("modes disagree: {full:?} vs {lean:?}"),
    }
});
