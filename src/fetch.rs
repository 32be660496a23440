//! The pure decisions behind fetching feeds: when to retry and how long to wait, what a
//! `Retry-After` or `Content-Type` header says, the typed fetch errors, and each source's
//! read counters.
//!
//! Nothing here performs a request or reads the clock: the FeedFetcher actor passes the
//! status, the header values, `now` and a jitter value drawn from its seeded RNG, and does
//! what the answer says.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use crate::feed::ParseError;

/// The User-Agent sent when the config does not name one.
pub const DEFAULT_USER_AGENT: &str = concat!(
    "ferret/",
    env!("CARGO_PKG_VERSION"),
    " (+https://github.com/ferret)"
);

/// Retries of a request answered with 429 or a 5xx: exponential back-off with jitter,
/// honouring `Retry-After`, a bounded number of times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt; 0 disables retrying.
    pub max_retries: u32,
    /// The back-off before the first retry; it doubles for each later one.
    pub base_delay: Duration,
    /// The back-off never exceeds this (before `Retry-After` is applied).
    pub max_delay: Duration,
    /// A `Retry-After` longer than this is not waited for: the fetch fails now and the
    /// source is tried again at its next interval.
    pub max_retry_after: Duration,
}

impl RetryPolicy {
    /// How long to wait before retry number `retry` (1 for the first retry) of a request
    /// answered with `status`, or `None` to give up: the status is not worth retrying, the
    /// retries are used up, or the server asked for a longer wait than `max_retry_after`.
    ///
    /// The back-off is `base · 2^(retry-1)`, capped at `max_delay`, of which the upper half is
    /// scaled by `jitter` (a value in `[0, 1)` the caller draws from its seeded RNG), so that
    /// sources failing together do not retry in lock-step; the wait is never shorter than the
    /// server's `Retry-After`.
    pub fn retry_delay(
        &self,
        retry: u32,
        status: u16,
        retry_after: Option<Duration>,
        jitter: f64,
    ) -> Option<Duration> {
        if !is_retryable(status) || retry == 0 || retry > self.max_retries {
            return None;
        }
        if retry_after.is_some_and(|wait| wait > self.max_retry_after) {
            return None;
        }
        let doubling = 1u32.checked_shl(retry - 1).unwrap_or(u32::MAX);
        let backoff = self
            .base_delay
            .checked_mul(doubling)
            .map_or(self.max_delay, |d| d.min(self.max_delay));
        let jitter = if jitter.is_finite() {
            jitter.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let delay = backoff / 2 + (backoff / 2).mul_f64(jitter);
        Some(retry_after.map_or(delay, |wait| wait.max(delay)))
    }
}

/// Why a fetch answered with `status` failed, in words: the status and its `reason`, and
/// for a retryable status, whether the retries ran out or the server asked for a longer wait
/// than the policy allows.
pub fn status_cause(
    policy: &RetryPolicy,
    status: u16,
    reason: Option<&str>,
    retries: u32,
    retry_after: Option<Duration>,
) -> String {
    let mut cause = format!("the server answered {status}");
    if let Some(reason) = reason {
        cause.push(' ');
        cause.push_str(reason);
    }
    if is_retryable(status) {
        match retry_after {
            Some(wait) if wait > policy.max_retry_after => cause.push_str(&format!(
                "; its Retry-After of {}s exceeds fetch.max_retry_after_secs ({}s)",
                wait.as_secs(),
                policy.max_retry_after.as_secs()
            )),
            _ => cause.push_str(&format!(
                " after {retries} {}",
                if retries == 1 { "retry" } else { "retries" }
            )),
        }
    }
    cause
}

/// Whether a response status is worth retrying: 429 (too many requests) and every 5xx.
pub fn is_retryable(status: u16) -> bool {
    status == 429 || (500..600).contains(&status)
}

/// The wait a `Retry-After` header asks for: delay-seconds or an HTTP-date (RFC 9110 §10.2.3),
/// measured from `now_unix` (seconds since the Unix epoch). A date in the past means no
/// wait. `None` if the value is neither.
pub fn parse_retry_after(value: &str, now_unix: i64) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // Absurdly long values saturate rather than fail: they exceed any sane maximum.
        return Some(Duration::from_secs(value.parse().unwrap_or(u64::MAX)));
    }
    let at = parse_http_date(value)?;
    Some(Duration::from_secs(
        at.saturating_sub(now_unix).max(0) as u64
    ))
}

/// How long a cache kept a response, by its `Age` header (RFC 9111 §5.1): delta-seconds, a
/// run of digits. A value too large to hold is 2³¹ seconds, as the RFC asks; anything else
/// (empty, signed, a fraction, a list of two values) says nothing, `None`.
pub fn parse_age(value: &str) -> Option<u64> {
    let value = value.trim();
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(value.parse().unwrap_or(1 << 31).min(1 << 31))
}

/// Seconds since the Unix epoch of an HTTP-date in any of the three forms recipients must
/// accept (RFC 9110 §5.6.7): IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete
/// RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`, two-digit years in 1970–2069) and asctime
/// (`Sun Nov  6 08:49:37 1994`); years 1970 to 9999. The `httpdate` crate reads it (hyper's
/// and actix's parser of the same headers).
pub fn parse_http_date(value: &str) -> Option<i64> {
    let at = httpdate::parse_http_date(value).ok()?;
    let secs = at.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs();
    i64::try_from(secs).ok()
}

/// The `charset` parameter of a `Content-Type` value (`text/xml; charset="Shift_JIS"` →
/// `Shift_JIS`), unquoted, for the feed parser's encoding detection.
pub fn charset_of(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("charset") {
            return None;
        }
        let value = value.trim();
        let value = match value.strip_prefix('"') {
            // A quoted string ends at its closing quote, whatever follows it.
            Some(quoted) => quoted.split('"').next().unwrap_or_default().trim(),
            // A token ends at the first space or quote, which a token cannot hold.
            None => (value.split(|c: char| c == '"' || c.is_whitespace()))
                .next()
                .unwrap_or_default(),
        };
        (!value.is_empty()).then_some(value)
    })
}

/// What a conditional GET sends back: the validators of the last full response.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Validators {
    /// The `ETag`, sent back as `If-None-Match`.
    pub etag: Option<String>,
    /// The `Last-Modified`, sent back as `If-Modified-Since`.
    pub last_modified: Option<String>,
}

/// Why a fetch failed. Every failure is one of these; none is silent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// No complete answer within the configured timeout.
    #[error("timed out")]
    Timeout,
    /// The body exceeded the configured maximum (checked while it streams in, and against
    /// `Content-Length` before).
    #[error("body larger than the limit of {limit} bytes")]
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The server answered with a status that is not a feed: a 4xx, or a 429/5xx after the
    /// retries were used up.
    #[error("HTTP status {status}")]
    Status {
        /// The status code.
        status: u16,
    },
    /// A redirect led back to a URL already visited.
    #[error("redirect loop")]
    RedirectLoop,
    /// More redirects than the configured limit.
    #[error("more than {max} redirects")]
    TooManyRedirects {
        /// The limit.
        max: usize,
    },
    /// The connection could not be made (refused, DNS, TLS).
    #[error("could not connect")]
    Connect,
    /// The connection broke, or the body could not be decompressed, while reading the body.
    #[error("could not read the body")]
    Body,
    /// The request could not be sent for another reason (a bad URL, a protocol error).
    #[error("request failed")]
    Request,
    /// The body is not a feed the parser can read.
    #[error("not a feed: {error}")]
    Parse {
        /// What the parser said, with line and column.
        error: ParseError,
    },
}

/// Every [`FetchError::kind`], for metrics that list each kind.
pub const FAILURE_KINDS: [&str; 9] = [
    "timeout",
    "too_large",
    "status",
    "redirect_loop",
    "too_many_redirects",
    "connect",
    "body",
    "request",
    "parse",
];

impl FetchError {
    /// The error's kind in snake case: its `kind` label in metrics and the API.
    pub fn kind(&self) -> &'static str {
        match self {
            FetchError::Timeout => "timeout",
            FetchError::TooLarge { .. } => "too_large",
            FetchError::Status { .. } => "status",
            FetchError::RedirectLoop => "redirect_loop",
            FetchError::TooManyRedirects { .. } => "too_many_redirects",
            FetchError::Connect => "connect",
            FetchError::Body => "body",
            FetchError::Request => "request",
            FetchError::Parse { .. } => "parse",
        }
    }
}

/// The last failure of a source, as `GET /api/feeds` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LastError {
    /// [`FetchError::kind`].
    pub kind: &'static str,
    /// The error and its cause, in one line.
    pub message: String,
    /// The URL that failed (after redirects, when known).
    pub url: String,
    /// The HTTP status, if a response came.
    pub status: Option<u16>,
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: i64,
}

/// The counters and last outcome of one source. The listing budget counts `reads`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SourceStats {
    /// HTTP requests sent to the source: every attempt, retries and 304s included.
    pub reads: u64,
    /// Full responses (2xx with a body) received.
    pub fetched: u64,
    /// `304 Not Modified` answers to a conditional GET.
    pub not_modified: u64,
    /// Retries after a 429 or 5xx.
    pub retries: u64,
    /// Failed fetches, by [`FetchError::kind`].
    pub failures: BTreeMap<&'static str, u64>,
    /// Items in the last feed parsed.
    pub last_items: Option<usize>,
    /// Warnings the parser gave about the last feed parsed (what it recovered from).
    pub last_warnings: Option<usize>,
    /// The status of the last response, if any came.
    pub last_status: Option<u16>,
    /// `"fetched"`, `"not_modified"` or `"failed"`: how the last fetch ended.
    pub last_outcome: Option<&'static str>,
    /// When the last fetch ended, in milliseconds since the Unix epoch.
    pub last_fetch_at_ms: Option<i64>,
    /// The last failure, kept after later successes so that it can be looked into.
    pub last_error: Option<LastError>,
}

impl SourceStats {
    /// A request is about to be sent.
    pub fn record_read(&mut self) {
        self.reads += 1;
    }

    /// A retry was scheduled after `status`.
    pub fn record_retry(&mut self, status: u16) {
        self.retries += 1;
        self.last_status = Some(status);
    }

    /// A full response arrived and parsed into `items` items with `warnings` warnings.
    pub fn record_fetched(&mut self, status: u16, items: usize, warnings: usize, at_ms: i64) {
        self.fetched += 1;
        self.last_items = Some(items);
        self.last_warnings = Some(warnings);
        self.last_status = Some(status);
        self.finish("fetched", at_ms);
    }

    /// A 304 arrived: the source did not change since the last full response.
    pub fn record_not_modified(&mut self, at_ms: i64) {
        self.not_modified += 1;
        self.last_status = Some(304);
        self.finish("not_modified", at_ms);
    }

    /// The fetch failed (`error.kind` is a [`FetchError::kind`]).
    pub fn record_failure(&mut self, error: LastError) {
        *self.failures.entry(error.kind).or_default() += 1;
        if error.status.is_some() {
            self.last_status = error.status;
        }
        self.finish("failed", error.at_ms);
        self.last_error = Some(error);
    }

    /// Failed fetches of every kind.
    pub fn failures_total(&self) -> u64 {
        self.failures.values().sum()
    }

    fn finish(&mut self, outcome: &'static str, at_ms: i64) {
        self.last_outcome = Some(outcome);
        self.last_fetch_at_ms = Some(at_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(1000),
            max_delay: Duration::from_millis(3000),
            max_retry_after: Duration::from_secs(60),
        }
    }

    #[test]
    fn back_off_doubles_with_jitter_in_the_upper_half_and_is_capped() {
        let p = policy();
        let ms = |retry, jitter| {
            p.retry_delay(retry, 503, None, jitter)
                .map(|d| d.as_millis())
        };
        assert_eq!(ms(1, 0.0), Some(500));
        assert_eq!(ms(1, 0.5), Some(750));
        assert_eq!(ms(2, 0.0), Some(1000));
        assert_eq!(ms(2, 0.999), Some(1999));
        assert_eq!(ms(3, 1.0), Some(3000)); // 4000 capped at 3000
        assert_eq!(ms(3, f64::NAN), Some(1500));
        assert_eq!(ms(4, 0.0), None, "retries used up");
        assert_eq!(ms(0, 0.0), None);
    }

    #[test]
    fn only_429_and_5xx_are_retried() {
        let p = policy();
        assert!(p.retry_delay(1, 429, None, 0.0).is_some());
        assert!(p.retry_delay(1, 500, None, 0.0).is_some());
        for status in [200, 304, 404, 410, 403] {
            assert_eq!(p.retry_delay(1, status, None, 0.0), None, "{status}");
        }
    }

    #[test]
    fn retry_after_is_a_lower_bound_and_too_long_gives_up() {
        let p = policy();
        let wait = |secs| p.retry_delay(1, 503, Some(Duration::from_secs(secs)), 0.0);
        assert_eq!(wait(1), Some(Duration::from_secs(1)));
        assert_eq!(wait(0), Some(Duration::from_millis(500)));
        assert_eq!(wait(60), Some(Duration::from_secs(60)));
        assert_eq!(wait(61), None);
    }

    #[test]
    fn status_causes_say_why_the_fetch_gave_up() {
        let p = policy();
        assert_eq!(
            status_cause(&p, 404, Some("Not Found"), 0, None),
            "the server answered 404 Not Found"
        );
        assert_eq!(
            status_cause(&p, 503, None, 3, Some(Duration::from_secs(2))),
            "the server answered 503 after 3 retries"
        );
        assert_eq!(
            status_cause(&p, 429, Some("Too Many Requests"), 1, None),
            "the server answered 429 Too Many Requests after 1 retry"
        );
        assert_eq!(
            status_cause(&p, 503, None, 0, Some(Duration::from_secs(3600))),
            "the server answered 503; its Retry-After of 3600s exceeds \
             fetch.max_retry_after_secs (60s)"
        );
    }

    #[test]
    fn huge_retry_numbers_do_not_overflow() {
        let p = RetryPolicy {
            max_retries: u32::MAX,
            ..policy()
        };
        assert_eq!(
            p.retry_delay(64, 503, None, 1.0),
            Some(Duration::from_millis(3000))
        );
    }

    #[test]
    fn age_is_delta_seconds_and_saturates_at_two_to_the_thirty_first() {
        assert_eq!(parse_age("0"), Some(0));
        assert_eq!(parse_age(" 37 "), Some(37));
        assert_eq!(parse_age("2147483649"), Some(1 << 31));
        assert_eq!(parse_age("99999999999999999999999"), Some(1 << 31));
        for bad in ["", "-5", "1.5", "12, 13", "soon"] {
            assert_eq!(parse_age(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        // 1994-11-06T08:49:37Z
        let at = 784_111_777;
        assert_eq!(
            parse_retry_after(" 120 ", at),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", at),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", at),
            Some(Duration::ZERO),
            "a past date means no wait"
        );
        assert_eq!(
            parse_retry_after("99999999999999999999999", at),
            Some(Duration::from_secs(u64::MAX))
        );
        for bad in ["", "-5", "1.5", "soon", "Sun, 06 Nov 1994 08:49:37 CET"] {
            assert_eq!(parse_retry_after(bad, at), None, "{bad:?}");
        }
    }

    #[test]
    fn http_dates_in_all_three_forms() {
        let at = Some(784_111_777);
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), at);
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), at);
        assert_eq!(parse_http_date("Sun Nov  6 08:49:37 1994"), at);
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(
            parse_http_date("Tue, 29 Feb 2028 23:59:59 GMT"),
            Some(1_835_481_599)
        );
        for bad in [
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 32 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:49 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT extra",
        ] {
            assert_eq!(parse_http_date(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn charset_parameter() {
        assert_eq!(
            charset_of("application/rss+xml; charset=UTF-8"),
            Some("UTF-8")
        );
        assert_eq!(
            charset_of("text/xml;Charset=\"Shift_JIS\""),
            Some("Shift_JIS")
        );
        assert_eq!(charset_of("text/xml; q=1; charset=koi8-r "), Some("koi8-r"));
        assert_eq!(charset_of("text/xml"), None);
        assert_eq!(charset_of("text/xml; charset="), None);
        assert_eq!(charset_of("charset=utf-8"), None, "no media type");
        // Found by the http_headers fuzz target: the quote stayed in the name.
        assert_eq!(
            charset_of("text/xml; charset=\"S\"\r\r\"\r"),
            Some("S"),
            "what follows a quoted string"
        );
        assert_eq!(charset_of("text/xml; charset=koi8\"\" \"\""), Some("koi8"));
    }

    #[test]
    fn stats_count_every_outcome() {
        let mut stats = SourceStats::default();
        stats.record_read();
        stats.record_retry(503);
        stats.record_read();
        stats.record_fetched(200, 3, 1, 10);
        stats.record_read();
        stats.record_not_modified(20);
        stats.record_read();
        stats.record_failure(LastError {
            kind: FetchError::Timeout.kind(),
            message: "timed out".into(),
            url: "http://x/".into(),
            status: None,
            at_ms: 30,
        });
        assert_eq!(stats.reads, 4);
        assert_eq!(stats.retries, 1);
        assert_eq!(stats.fetched, 1);
        assert_eq!((stats.last_items, stats.last_warnings), (Some(3), Some(1)));
        assert_eq!(stats.not_modified, 1);
        assert_eq!(stats.failures_total(), 1);
        assert_eq!(stats.failures["timeout"], 1);
        assert_eq!(stats.last_status, Some(304), "a timeout has no status");
        assert_eq!(stats.last_outcome, Some("failed"));
        assert_eq!(stats.last_fetch_at_ms, Some(30));
    }
}
