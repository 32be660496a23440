//! The body of `POST /api/feedback` is outside input: whatever the bytes, it reads as a valid
//! event or a typed error, never a panic; an event's URL is in normal form, and the event
//! written back as a body reads as itself.
#![no_main]

use ferret::discovery::hittage::normal_url;
use ferret::discovery::intake::{feedback_from_json, feedback_to_json};
use libfuzzer_sys::fuzz_target;

const NOW: i64 = 1_767_312_000_000;

fuzz_target!(|data: &[u8]| {
    let Ok(event) = feedback_from_json(data, NOW) else {
        return;
    };
    event.validate().expect("an event read is valid");
    assert_eq!(
        normal_url(&event.url).as_deref(),
        Ok(event.url.as_str()),
        "normal URL"
    );
    // Times past what RFC 3339 can write cannot be sent back; every other event can.
    if let Some(body) = feedback_to_json(&event) {
        assert_eq!(
            feedback_from_json(body.as_bytes(), 0).as_ref(),
            Ok(&event),
            "{body}"
        );
    }
});
