//! robots.txt, per host, as RFC 9309 has it; the rules themselves are matched by
//! texting_robots (longest match wins, `Allow` on a tie, `*` and `$` patterns).
//!
//! What a fetch of `/robots.txt` means (RFC 9309 §2.3.1), as [`RobotsOutcome::from_status`]
//! decides it:
//!
//! - **2xx**: the rules of the file, for our user agent (or `*`). Only the first 500 KiB are
//!   parsed (§2.5: "at least 500 kibibytes"); a file the parser rejects means no rules.
//! - **4xx** (404, 403, 410, …): "unavailable": the crawler **may access any resource**.
//! - **5xx**, 429, or no answer at all (connection refused, timeout): "unreachable": the
//!   crawler **must assume complete disallow**. The frontier keeps the host's URLs waiting and
//!   asks again after a while (`robots_retry_ms`) rather than dropping them.
//! - Redirects are followed by the fetcher (at least five hops, §2.3.1.2).
//!
//! Rules are cached for `robots_ttl_ms` (§2.4: not longer than 24 hours) and then fetched
//! again; see [`frontier`](super::frontier).

use std::fmt;

use url::{Position, Url};

/// How many bytes of a robots.txt are parsed.
pub const MAX_ROBOTS_BYTES: usize = 500 * 1024;

/// The rules of one host for our user agent.
pub struct Robots {
    rules: Rules,
}

enum Rules {
    AllowAll,
    DisallowAll,
    Parsed(Box<texting_robots::Robot>),
}

impl fmt::Debug for Robots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rules = match &self.rules {
            Rules::AllowAll => "allow all",
            Rules::DisallowAll => "disallow all",
            Rules::Parsed(_) => "parsed",
        };
        f.debug_struct("Robots")
            .field("rules", &rules)
            .field("crawl_delay_ms", &self.crawl_delay_ms())
            .finish()
    }
}

impl Robots {
    /// The rules in `body` for `agent` (the product token of our User-Agent, e.g. `ferret`).
    /// Never fails: a file the parser cannot read gives no rules (everything allowed), as
    /// §2.2 asks crawlers to use whatever they can parse.
    pub fn parse(agent: &str, body: &[u8]) -> Robots {
        let body = &body[..body.len().min(MAX_ROBOTS_BYTES)];
        match texting_robots::Robot::new(agent, body) {
            Ok(robot) => Robots {
                rules: Rules::Parsed(Box::new(robot)),
            },
            Err(_) => Robots::allow_all(),
        }
    }

    /// No rules: what a 4xx robots.txt means.
    pub fn allow_all() -> Robots {
        Robots {
            rules: Rules::AllowAll,
        }
    }

    /// Nothing allowed: what an unreachable robots.txt means until it is fetched again.
    pub fn disallow_all() -> Robots {
        Robots {
            rules: Rules::DisallowAll,
        }
    }

    /// Whether `url` (of this host) may be fetched. `/robots.txt` itself always may.
    pub fn allowed(&self, url: &Url) -> bool {
        match &self.rules {
            Rules::AllowAll => true,
            Rules::DisallowAll => url.path() == "/robots.txt",
            Rules::Parsed(robot) => robot.allowed(&url[Position::BeforePath..Position::AfterQuery]),
        }
    }

    /// `Crawl-delay` in milliseconds, if the file gives one (a non-standard but common
    /// extension; negative and non-finite values are ignored).
    pub fn crawl_delay_ms(&self) -> Option<u64> {
        match &self.rules {
            Rules::Parsed(robot) => robot
                .delay
                .filter(|d| d.is_finite() && *d >= 0.0)
                .map(|d| (f64::from(d) * 1000.0).min(u64::MAX as f64) as u64),
            _ => None,
        }
    }

    /// `Sitemap:` lines, as written.
    pub fn sitemaps(&self) -> &[String] {
        match &self.rules {
            Rules::Parsed(robot) => &robot.sitemaps,
            _ => &[],
        }
    }
}

/// What fetching a host's robots.txt gave.
#[derive(Debug)]
pub enum RobotsOutcome {
    /// A 2xx: these rules.
    Found(Robots),
    /// A 4xx: no rules; everything may be fetched.
    Unavailable,
    /// A 5xx or 429, or the request failed: nothing may be fetched for now; ask again later.
    Unreachable,
    /// The host is refused by the address policy (a private, loopback or link-local address
    /// the configuration does not allow): nothing of it may ever be fetched; never ask again.
    Refused,
}

impl RobotsOutcome {
    /// What a response to `GET /robots.txt` means (after redirects): `status` and its body.
    /// 3xx here means the redirect limit was hit: RFC 9309 says to treat that as
    /// unavailable.
    pub fn from_status(agent: &str, status: u16, body: &[u8]) -> RobotsOutcome {
        match status {
            200..=299 => RobotsOutcome::Found(Robots::parse(agent, body)),
            429 => RobotsOutcome::Unreachable,
            300..=499 => RobotsOutcome::Unavailable,
            _ => RobotsOutcome::Unreachable,
        }
    }

    /// The rules this outcome gives until it is fetched again.
    pub fn into_robots(self) -> Robots {
        match self {
            RobotsOutcome::Found(robots) => robots,
            RobotsOutcome::Unavailable => Robots::allow_all(),
            RobotsOutcome::Unreachable | RobotsOutcome::Refused => Robots::disallow_all(),
        }
    }
}

/// The robots.txt URL of the host `url` is on: same scheme, host and port, no credentials.
pub fn robots_url(url: &Url) -> Option<Url> {
    let mut robots = url.join("/robots.txt").ok()?;
    robots.set_username("").ok()?;
    robots.set_password(None).ok()?;
    Some(robots)
}
