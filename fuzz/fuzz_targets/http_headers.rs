//! Header values a listing or a feed server sends are outside input: a `Retry-After` reads
//! as a wait or nothing, an `Age` as at most 2³¹ seconds or nothing, an HTTP date as a time
//! from 1970 to 9999 that reads the same once written back, a `Content-Type` as a charset it
//! holds or nothing; never a panic.
#![no_main]

use std::time::{Duration, UNIX_EPOCH};

use ferret::fetch::{charset_of, parse_age, parse_http_date, parse_retry_after};
use libfuzzer_sys::fuzz_target;

/// 9999-12-31T23:59:59Z.
const LAST: i64 = 253_402_300_799;

fuzz_target!(|data: &[u8]| {
    let Some((now, rest)) = data.split_first_chunk::<8>() else {
        return;
    };
    let now = i64::from_le_bytes(*now);
    let Ok(value) = std::str::from_utf8(rest) else {
        return;
    };
    let wait = parse_retry_after(value, now);
    let digits = value.trim();
    let age = parse_age(value);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        let secs = digits.parse().unwrap_or(u64::MAX);
        assert_eq!(wait, Some(Duration::from_secs(secs)), "{value:?}");
        assert_eq!(age, Some(secs.min(1 << 31)), "{value:?}");
    } else {
        assert_eq!(age, None, "{value:?}");
    }
    if let Some(at) = parse_http_date(value) {
        assert!((0..=LAST).contains(&at), "{value:?} at {at}");
        let written = httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(at as u64));
        assert_eq!(
            parse_http_date(&written),
            Some(at),
            "{value:?} as {written:?}"
        );
        let expected = at.saturating_sub(now).max(0) as u64;
        assert_eq!(wait, Some(Duration::from_secs(expected)), "{value:?}");
    }
    if let Some(charset) = charset_of(value) {
        assert!(!charset.is_empty() && value.contains(charset), "{value:?}");
        assert_eq!(charset, charset.trim().trim_matches('"'), "{value:?}");
    }
});
