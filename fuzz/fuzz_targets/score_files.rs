//! The files `ferret score-listing` reads (an events file, a truth file) are outside input:
//! whatever the text, it reads as records or as an error naming its line, never a panic; and
//! whatever was read, scoring it does not panic either.
#![no_main]

use ferret::listing::sim::{read_events, read_truth, score, truth_until, Window};
use ferret::listing::{MINUTE, SECOND};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The same text as either file; most inputs will be one or neither.
    let events = read_events(text, None);
    let truth = read_truth(text);
    for err in [events.as_ref().err(), truth.as_ref().err()]
        .into_iter()
        .flatten()
    {
        assert!(err.starts_with("line "), "an error names its line: {err}");
    }
    let (Ok(events), Ok(truth)) = (events, truth.or_else(|_| read_truth(""))) else {
        return;
    };
    let until = truth_until(&truth).unwrap_or(0);
    let window = Window {
        from: until.saturating_sub(30 * MINUTE),
        until,
        ran_on: 0,
        frame: 90 * SECOND,
        grace: 15 * SECOND,
        tolerance: 15 * SECOND,
    };
    let report = score("fuzz", &truth, &events, &window);
    assert!(report.on_air_missed_tolerated <= report.on_air_missed);
    assert!(report.slipped <= report.frame_ends);
});
