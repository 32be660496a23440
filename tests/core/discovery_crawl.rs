//! The crawler's craft: URL normalisation and the address policy, page parsing and link
//! extraction, robots.txt, and the frontier on a virtual clock.

use std::net::IpAddr;
use std::time::Instant;

use ferret::discovery::frontier::{FetchOrder, FetchOutcome, Frontier, FrontierConfig};
use ferret::discovery::page::{extract_links, is_html, parse_page};
use ferret::discovery::robots::{robots_url, Robots, RobotsOutcome};
use ferret::discovery::url::{host_key, normalize, parse_url, AddressPolicy, UrlError};
use url::Url;

fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

// ---------------------------------------------------------------------------------------------
// URLs

#[test]
fn normalize_resolves_and_cleans() {
    let base = url("https://Example.org:443/docs/a/index.html?q=1");
    let n = |href: &str| normalize(&base, href).map(String::from);
    assert_eq!(n("b.html#x").unwrap(), "https://example.org/docs/a/b.html");
    assert_eq!(n("/./x/../y/./z?").unwrap(), "https://example.org/y/z");
    assert_eq!(
        n("//OTHER.example:80/p").unwrap(),
        "https://other.example:80/p"
    );
    assert_eq!(n("http://h.example:80/").unwrap(), "http://h.example/");
    assert_eq!(
        n("?a=b").unwrap(),
        "https://example.org/docs/a/index.html?a=b"
    );
    assert_eq!(
        n("  c.html\n").unwrap(),
        "https://example.org/docs/a/c.html"
    );
    for bad in [
        "mailto:x@y",
        "javascript:alert(1)",
        "data:text/html,x",
        "ftp://x/",
        "http://",
    ] {
        assert_eq!(n(bad), None, "{bad}");
    }
}

#[test]
fn parse_url_takes_only_http() {
    assert_eq!(
        parse_url(" HTTP://Example.com/a#b ").unwrap().as_str(),
        "http://example.com/a"
    );
    assert!(matches!(
        parse_url("example.com"),
        Err(UrlError::Parse { .. })
    ));
    let err = parse_url("file:///etc/passwd").unwrap_err();
    assert!(matches!(err, UrlError::Scheme { ref scheme, .. } if scheme == "file"));
    assert!(err.to_string().contains("only http and https"), "{err}");
}

#[test]
fn host_key_is_host_and_port() {
    assert_eq!(host_key(&url("https://example.com/x")), "example.com:443");
    assert_eq!(
        host_key(&url("http://example.com:8080/x")),
        "example.com:8080"
    );
    assert_eq!(host_key(&url("http://[2001:db8::1]/")), "[2001:db8::1]:80");
}

#[test]
fn address_policy_refuses_local_networks_by_default() {
    let policy = AddressPolicy::default();
    let refused = [
        "127.0.0.1",
        "127.8.8.8",
        "10.1.2.3",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.1.1",
        "100.64.0.1",
        "169.254.169.254",
        "0.0.0.0",
        "224.0.0.1",
        "255.255.255.255",
        "240.0.0.1",
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "fd12:3456::1",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
        "64:ff9b::7f00:1",
    ];
    for ip in refused {
        let ip: IpAddr = ip.parse().unwrap();
        assert!(!policy.permits(ip), "{ip} should be refused");
    }
    for ip in [
        "93.184.216.34",
        "172.32.0.1",
        "2606:4700::1111",
        "::ffff:8.8.8.8",
    ] {
        let ip: IpAddr = ip.parse().unwrap();
        assert!(policy.permits(ip), "{ip} should be permitted");
    }

    let loopback = AddressPolicy {
        allow_loopback: true,
        ..AddressPolicy::default()
    };
    assert!(loopback.permits("127.0.0.1".parse().unwrap()));
    assert!(loopback.permits("::ffff:127.0.0.1".parse().unwrap()));
    assert!(!loopback.permits("10.0.0.1".parse().unwrap()));
    assert!(
        !loopback.permits("0.0.0.0".parse().unwrap()),
        "never the unspecified address"
    );
    let all = AddressPolicy::allow_all();
    assert!(all.permits_all());
    assert!(all.permits("fe80::1".parse().unwrap()) && all.permits("192.168.0.1".parse().unwrap()));
    assert!(!all.permits("ff02::1".parse().unwrap()), "never multicast");

    assert_eq!(
        policy.permits_host(&url("http://127.0.0.1:8080/")),
        Some(false)
    );
    assert_eq!(policy.permits_host(&url("http://[::1]/")), Some(false));
    assert_eq!(policy.permits_host(&url("http://8.8.8.8/")), Some(true));
    assert_eq!(
        policy.permits_host(&url("http://localhost/")),
        None,
        "names need resolving"
    );
    // A decimal or hex IPv4 host is an IP literal to the URL parser.
    assert_eq!(policy.permits_host(&url("http://2130706433/")), Some(false));
    assert_eq!(policy.permits_host(&url("http://0x7f.1/")), Some(false));
}

// ---------------------------------------------------------------------------------------------
// Pages

const PAGE: &str = r#"<!DOCTYPE html>
<html lang="en-GB"><head>
  <meta charset="utf-8">
  <title>  The   Title &amp; more </title>
  <base href="/docs/">
  <link rel="stylesheet" href="s.css">
  <link rel="Canonical" href="https://example.com/docs/canon.html#c">
  <style>p { color: red } a[href="x.html"] {}</style>
  <script>document.write('<a href="script.html">no</a>');</script>
</head>
<body>
  <h1>Heading</h1><p>First&nbsp;para with <b>bold</b> text.</p>
  <p>Go to <a href="a.html#frag">page   A</a>, or <a href='b.html'>B <img src=i.png alt="icon"></a>.</p>
  <a href="a.html">A again</a>
  <a href="/docs/page.html">myself</a>
  <a href="mailto:x@example.com">mail</a>
  <a href="http://other.example/x?">other</a>
  <a>no href</a><a href="">empty</a>
  <noscript><a href="noscript.html">ns</a> hidden</noscript>
  <template><p>template text</p></template>
  <map><area href="area.html" alt="Area"></map>
  <img src="j.png"><IMG SRC="k.png">
  <div>last<br>words</div>
</body></html>"#;

#[test]
fn parse_page_reads_what_a_page_says() {
    let page_url = url("https://example.com/docs/page.html#top");
    let doc = parse_page(&page_url, PAGE.as_bytes(), Some("text/html; charset=utf-8"));
    assert_eq!(doc.url.as_str(), "https://example.com/docs/page.html");
    assert_eq!(doc.title, "The Title & more");
    assert_eq!(doc.lang.as_deref(), Some("en"));
    assert_eq!(
        doc.canonical.as_ref().map(Url::as_str),
        Some("https://example.com/docs/canon.html")
    );
    assert_eq!(doc.images, 3);
    assert_eq!(doc.size, PAGE.len());
    assert_eq!(
        doc.text,
        "Heading First para with bold text. Go to page A, or B . A again myself mail other \
         no hrefempty last words"
    );
    let links: Vec<(&str, &str)> = doc
        .links
        .iter()
        .map(|l| (l.url.as_str(), l.text.as_str()))
        .collect();
    assert_eq!(
        links,
        [
            ("https://example.com/docs/a.html", "page A"),
            ("https://example.com/docs/b.html", "B icon"),
            ("http://other.example/x", "other"),
            ("https://example.com/docs/", "empty"),
            ("https://example.com/docs/area.html", "Area"),
        ]
    );
    let fast: Vec<Url> = extract_links(&page_url, PAGE.as_bytes());
    let full: Vec<Url> = doc.links.iter().map(|l| l.url.clone()).collect();
    assert_eq!(fast, full, "the fast path finds the same links");
}

#[test]
fn charset_comes_from_header_then_meta_then_bom() {
    let u = url("http://example.com/");
    let (koi, _, _) = encoding_rs::KOI8_R.encode("<title>Привет</title><p>мир</p>");
    let doc = parse_page(&u, &koi, Some("text/html; charset=koi8-r"));
    assert_eq!((doc.title.as_str(), doc.text.as_str()), ("Привет", "мир"));

    let mut meta = b"<meta charset=\"windows-1251\">".to_vec();
    meta.extend(
        encoding_rs::WINDOWS_1251
            .encode("<title>Привет</title>")
            .0
            .iter(),
    );
    assert_eq!(parse_page(&u, &meta, Some("text/html")).title, "Привет");

    let mut bom = vec![0xEF, 0xBB, 0xBF];
    bom.extend_from_slice("<title>é</title>".as_bytes());
    assert_eq!(
        parse_page(&u, &bom, Some("text/html; charset=koi8-r")).title,
        "é"
    );

    let lossy = parse_page(&u, b"<title>caf\xe9</title>", None);
    assert_eq!(lossy.title, "caf\u{fffd}");
}

#[test]
fn is_html_reads_the_essence() {
    assert!(is_html(Some("text/html")));
    assert!(is_html(Some("TEXT/HTML; charset=UTF-8")));
    assert!(is_html(Some("application/xhtml+xml")));
    assert!(is_html(None));
    assert!(!is_html(Some("application/pdf")));
    assert!(!is_html(Some("text/plain; charset=utf-8")));
    assert!(!is_html(Some("")));
}

#[test]
fn pages_never_fail() {
    let u = url("http://example.com/a/");
    let inputs: [&[u8]; 9] = [
        b"",
        b"<",
        b"<a href=",
        b"<a href='x",
        b"\xff\xfe<\x00a\x00",
        b"<base href='javascript:x'><a href=y>y</a>",
        b"<html lang='-'><title>",
        b"<script><a href=x>",
        b"<a href='http://[::1'>bad</a><a href='\x00\xff'>x</a>",
    ];
    for input in inputs {
        let doc = parse_page(&u, input, None);
        let fast = extract_links(&u, input);
        assert_eq!(fast.len(), doc.links.len(), "{input:?}");
        assert!(doc.lang.is_none());
    }
}

/// Speed on the PostgreSQL documentation (1,173 pages, 18 MB), if installed. Run with
/// `cargo test --release --test core -- --ignored --nocapture page_speed`.
#[test]
#[ignore = "a measurement; needs postgresql-doc-15 and a release build"]
fn page_speed() {
    let dir = std::path::Path::new("/usr/share/doc/postgresql-doc-15/html");
    let mut pages = Vec::new();
    for entry in std::fs::read_dir(dir).expect("postgresql-doc-15 is installed") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "html") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            pages.push((
                url(&format!("http://127.0.0.1:8088/{name}")),
                std::fs::read(&path).unwrap(),
            ));
        }
    }
    let bytes: usize = pages.iter().map(|(_, b)| b.len()).sum();
    let mb = bytes as f64 / 1e6;
    for round in 0..3 {
        let start = Instant::now();
        let mut links = 0;
        for (u, body) in &pages {
            links += parse_page(u, body, Some("text/html")).links.len();
        }
        let full = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let mut fast_links = 0;
        for (u, body) in &pages {
            fast_links += extract_links(u, body).len();
        }
        let fast = start.elapsed().as_secs_f64();
        assert_eq!(links, fast_links);
        println!(
            "round {round}: {} pages, {mb:.1} MB, {links} links | parse_page {:.0} MB/s ({:.0} pages/s) | extract_links {:.0} MB/s ({:.0} pages/s)",
            pages.len(),
            mb / full,
            pages.len() as f64 / full,
            mb / fast,
            pages.len() as f64 / fast,
        );
    }
}

// ---------------------------------------------------------------------------------------------
// robots.txt

const ROBOTS: &[u8] = b"User-agent: *\nDisallow: /private\nAllow: /private/open\n\n\
User-agent: ferret\nDisallow: /no-ferrets\nDisallow: /*.pdf$\nCrawl-delay: 2.5\nSitemap: https://example.com/sitemap.xml\n";

#[test]
fn robots_rules_for_our_agent() {
    let robots = Robots::parse("ferret", ROBOTS);
    assert!(!robots.allowed(&url("https://example.com/no-ferrets/x")));
    assert!(!robots.allowed(&url("https://example.com/a/b.pdf")));
    assert!(robots.allowed(&url("https://example.com/a/b.pdf?x=1")));
    assert!(
        robots.allowed(&url("https://example.com/private")),
        "the ferret group only"
    );
    assert!(robots.allowed(&url("https://example.com/robots.txt")));
    assert_eq!(robots.crawl_delay_ms(), Some(2_500));
    assert_eq!(robots.sitemaps(), ["https://example.com/sitemap.xml"]);

    let other = Robots::parse("otherbot", ROBOTS);
    assert!(!other.allowed(&url("https://example.com/private/x")));
    assert!(other.allowed(&url("https://example.com/private/open/x")));
    assert_eq!(other.crawl_delay_ms(), None);

    let garbage = Robots::parse("ferret", b"\xff\x00<html>\nDisallow\n:::");
    assert!(garbage.allowed(&url("https://example.com/x")));
}

#[test]
fn robots_statuses_as_rfc_9309_has_them() {
    let u = url("https://example.com/x");
    let found = RobotsOutcome::from_status("ferret", 200, b"User-agent: *\nDisallow: /");
    assert!(!found.into_robots().allowed(&u));
    for status in [400, 401, 403, 404, 410] {
        let outcome = RobotsOutcome::from_status("ferret", status, b"Disallow: /");
        assert!(matches!(outcome, RobotsOutcome::Unavailable), "{status}");
        assert!(outcome.into_robots().allowed(&u));
    }
    for status in [429, 500, 503, 599] {
        let outcome = RobotsOutcome::from_status("ferret", status, b"");
        assert!(matches!(outcome, RobotsOutcome::Unreachable), "{status}");
        assert!(!outcome.into_robots().allowed(&u));
    }
    assert_eq!(
        robots_url(&url("http://user:pw@example.com:8080/a/b?c"))
            .unwrap()
            .as_str(),
        "http://example.com:8080/robots.txt"
    );
}

// ---------------------------------------------------------------------------------------------
// Frontier

fn quick() -> FrontierConfig {
    FrontierConfig {
        max_in_flight_per_host: 1,
        min_interval_ms: 100,
        ..FrontierConfig::default()
    }
}

/// Answers the robots.txt order `order` with `outcome`; panics if it is not one.
fn answer_robots(f: &mut Frontier, order: FetchOrder, outcome: RobotsOutcome, now: u64) {
    match order {
        FetchOrder::Robots { host, url } => {
            assert!(url.as_str().ends_with("/robots.txt"));
            f.robots_fetched(&host, outcome, now);
        }
        other => panic!("expected a robots.txt order, got {other:?}"),
    }
}

fn page(order: Option<FetchOrder>) -> String {
    match order {
        Some(FetchOrder::Page { url, .. }) => url.to_string(),
        other => panic!("expected a page order, got {other:?}"),
    }
}

#[test]
fn frontier_asks_for_robots_first_then_gives_by_priority_fifo_on_ties() {
    let mut f = Frontier::new(FrontierConfig {
        max_in_flight_per_host: 8,
        min_interval_ms: 0,
        ..FrontierConfig::default()
    });
    for (path, priority) in [
        ("a", 1.0),
        ("b", 5.0),
        ("c", 1.0),
        ("d", 5.0),
        ("e", f64::NAN),
    ] {
        assert!(f.push(url(&format!("http://h.example/{path}")), priority, 0));
    }
    let robots = f.poll(0).unwrap();
    assert!(
        f.poll(0).is_none(),
        "the host's URLs wait for its robots.txt"
    );
    answer_robots(&mut f, robots, RobotsOutcome::Unavailable, 0);
    let order: Vec<String> = (0..5).map(|_| page(f.poll(1))).collect();
    assert_eq!(
        order,
        [
            "http://h.example/b",
            "http://h.example/d",
            "http://h.example/a",
            "http://h.example/c",
            "http://h.example/e"
        ]
    );
    assert_eq!(f.poll(1), None);
    let stats = f.stats();
    assert_eq!(
        (stats.robots_orders, stats.page_orders, stats.in_flight),
        (1, 5, 5)
    );
}

#[test]
fn frontier_dedups_queued_in_flight_and_recent() {
    let mut f = Frontier::new(FrontierConfig {
        refetch_after_ms: 10_000,
        ..quick()
    });
    let a = url("http://h.example/a");
    assert!(f.push(a.clone(), 1.0, 0));
    assert!(
        !f.push(url("http://H.example:80/a#frag"), 9.0, 0),
        "same URL normalised"
    );
    assert!(!f.push(url("ftp://h.example/a"), 1.0, 0));
    let robots = f.poll(0).unwrap();
    answer_robots(&mut f, robots, RobotsOutcome::Unavailable, 0);
    assert_eq!(f.poll(0), None, "the robots.txt fetch started the interval");
    assert_eq!(f.poll_timeout(), Some(100));
    assert_eq!(page(f.poll(100)), a.as_str());
    assert!(!f.push(a.clone(), 1.0, 150), "in flight");
    f.fetched(&a, 200, FetchOutcome::Done);
    assert!(!f.push(a.clone(), 1.0, 5_000), "fetched recently");
    assert!(f.push(a.clone(), 1.0, 10_200), "the refetch window is over");
    let s = f.stats();
    assert_eq!(
        (
            s.accepted,
            s.dup_queued,
            s.dup_in_flight,
            s.recently_fetched,
            s.unsupported,
            s.done
        ),
        (2, 1, 1, 1, 1, 1)
    );

    let mut g = Frontier::new(quick());
    g.mark_fetched(&url("http://h.example/old#x"), 5);
    assert!(
        !g.push(url("http://h.example/old"), 1.0, 1_000_000),
        "never refetched by default"
    );
}

#[test]
fn frontier_keeps_hosts_polite() {
    let mut f = Frontier::new(FrontierConfig {
        max_in_flight_per_host: 2,
        min_interval_ms: 1_000,
        ..FrontierConfig::default()
    });
    for i in 0..4 {
        f.push(url(&format!("http://slow.example/{i}")), 10.0, 0);
    }
    f.push(url("http://other.example/x"), 1.0, 0);
    let r1 = f.poll(0).unwrap();
    let r2 = f.poll(0).unwrap();
    assert_eq!(f.poll(0), None);
    answer_robots(&mut f, r1, RobotsOutcome::Unavailable, 10);
    answer_robots(&mut f, r2, RobotsOutcome::Unavailable, 10);
    assert_eq!(f.poll_timeout(), Some(1_000));
    assert_eq!(f.poll(999), None);
    assert_eq!(page(f.poll(1_000)), "http://slow.example/0");
    assert_eq!(page(f.poll(1_000)), "http://other.example/x");
    assert_eq!(f.poll(1_500), None);
    assert_eq!(page(f.poll(2_000)), "http://slow.example/1");
    assert_eq!(f.poll(5_000), None, "two in flight on slow.example");
    assert_eq!(f.poll_timeout(), None, "only a report can free it");
    f.fetched(&url("http://slow.example/0"), 5_000, FetchOutcome::Done);
    assert_eq!(page(f.poll(5_000)), "http://slow.example/2");

    // Throttling pauses the host and puts the URL back.
    f.fetched(
        &url("http://slow.example/2"),
        5_100,
        FetchOutcome::Throttled {
            retry_after_ms: 30_000,
        },
    );
    f.fetched(&url("http://slow.example/1"), 5_100, FetchOutcome::Failed);
    assert_eq!(f.poll(6_000), None);
    assert_eq!(f.poll_timeout(), Some(35_100));
    assert_eq!(
        page(f.poll(35_100)),
        "http://slow.example/2",
        "its priority kept, pushed first"
    );
    let s = f.stats();
    assert_eq!(
        (s.done, s.failed, s.throttled, s.queued, s.in_flight),
        (1, 1, 1, 1, 2)
    );
}

#[test]
fn frontier_obeys_robots_and_its_crawl_delay() {
    let mut f = Frontier::new(FrontierConfig {
        max_in_flight_per_host: 4,
        min_interval_ms: 10,
        ..FrontierConfig::default()
    });
    for path in ["private/1", "public/1", "private/2", "public/2"] {
        f.push(url(&format!("https://h.example/{path}")), 1.0, 0);
    }
    let robots = f.poll(0).unwrap();
    let rules = Robots::parse(
        "ferret",
        b"User-agent: *\nDisallow: /private\nCrawl-delay: 3",
    );
    answer_robots(&mut f, robots, RobotsOutcome::Found(rules), 0);
    assert_eq!(page(f.poll(10)), "https://h.example/public/1");
    assert_eq!(f.poll(10), None);
    assert_eq!(f.poll_timeout(), Some(3_010), "Crawl-delay: 3");
    assert_eq!(page(f.poll(3_010)), "https://h.example/public/2");
    assert!(!f.push(url("https://h.example/private/3"), 1.0, 3_010));
    let s = f.stats();
    assert_eq!((s.robots_disallowed, s.queued), (3, 0), "{s:?}");
}

#[test]
fn frontier_holds_a_host_whose_robots_is_unreachable_then_asks_again() {
    let mut f = Frontier::new(FrontierConfig {
        robots_retry_ms: 60_000,
        robots_ttl_ms: 100_000,
        ..quick()
    });
    f.push(url("http://down.example/a"), 1.0, 0);
    let robots = f.poll(0).unwrap();
    answer_robots(&mut f, robots, RobotsOutcome::Unreachable, 0);
    assert_eq!(f.poll(30_000), None);
    assert_eq!(f.poll_timeout(), Some(60_000));
    let again = f.poll(60_000).unwrap();
    answer_robots(&mut f, again, RobotsOutcome::Unavailable, 60_000);
    assert_eq!(page(f.poll(60_100)), "http://down.example/a");
    f.fetched(&url("http://down.example/a"), 60_200, FetchOutcome::Done);
    // The rules expire: robots.txt is asked again before the next page.
    f.push(url("http://down.example/b"), 1.0, 200_000);
    assert!(matches!(f.poll(200_000), Some(FetchOrder::Robots { .. })));
    let s = f.stats();
    assert_eq!(
        (s.robots_unreachable, s.robots_unavailable, s.robots_orders),
        (1, 1, 3)
    );
    // A report for something never ordered is counted, not trusted.
    f.fetched(&url("http://down.example/zzz"), 1, FetchOutcome::Done);
    f.robots_fetched("nowhere:80", RobotsOutcome::Unavailable, 1);
    assert_eq!(f.stats().unexpected_reports, 2);
}

/// A host the address policy refuses is refused for good: its queued URLs are dropped and
/// counted, later ones refused, and its robots.txt is never asked again (issue 6).
#[test]
fn frontier_drops_a_host_refused_by_the_address_policy_for_good() {
    let mut f = Frontier::new(FrontierConfig {
        robots_retry_ms: 60_000,
        ..quick()
    });
    f.push(url("http://10.0.0.1/a"), 2.0, 0);
    f.push(url("http://10.0.0.1/b"), 1.0, 0);
    f.push(url("http://open.example/c"), 1.0, 0);
    let (mut refused, mut open) = (None, None);
    for _ in 0..2 {
        match f.poll(0).unwrap() {
            FetchOrder::Robots { host, .. } if host.starts_with("10.") => refused = Some(host),
            other => open = Some(other),
        }
    }
    f.robots_fetched(&refused.unwrap(), RobotsOutcome::Refused, 0);
    answer_robots(&mut f, open.unwrap(), RobotsOutcome::Unavailable, 0);
    let s = f.stats();
    assert_eq!(
        (s.queued, s.address_refused, s.robots_refused),
        (1, 2, 1),
        "{s:?}"
    );
    assert!(!f.push(url("http://10.0.0.1/d"), 9.0, 10));
    assert_eq!(page(f.poll(100)), "http://open.example/c");
    f.fetched(&url("http://open.example/c"), 100, FetchOutcome::Done);
    // Long after any retry time, nothing of the refused host is ever ordered again.
    assert_eq!(f.poll(10_000_000), None);
    assert_eq!(f.poll_timeout(), None);
    assert!(f.is_idle());
    let s = f.stats();
    assert_eq!(
        (s.address_refused, s.robots_orders, s.robots_unreachable),
        (3, 2, 0),
        "{s:?}"
    );
    assert!(!RobotsOutcome::Refused
        .into_robots()
        .allowed(&url("http://10.0.0.1/a")));
}

/// 100,000 URLs over 1,000 hosts: every one comes out once, best first among the hosts free
/// at the time, without a scan per poll (this runs in well under a second in release).
#[test]
fn frontier_stays_fast_with_many_urls() {
    let mut f = Frontier::new(FrontierConfig {
        max_in_flight_per_host: 1,
        min_interval_ms: 0,
        ..FrontierConfig::default()
    });
    let start = Instant::now();
    for i in 0..100_000u64 {
        let u = url(&format!("http://h{}.example/p{i}", i % 1_000));
        assert!(f.push(u, (i % 97) as f64, 0));
    }
    let mut pages = 0;
    let mut now = 0;
    loop {
        let mut out = Vec::new();
        while let Some(order) = f.poll(now) {
            out.push(order);
        }
        if out.is_empty() {
            break;
        }
        for order in out {
            match order {
                FetchOrder::Robots { host, .. } => {
                    f.robots_fetched(&host, RobotsOutcome::Unavailable, now)
                }
                FetchOrder::Page { url, .. } => {
                    pages += 1;
                    f.fetched(&url, now, FetchOutcome::Done);
                }
            }
        }
        now += 1;
    }
    assert_eq!(pages, 100_000);
    assert!(f.is_idle());
    assert_eq!(f.stats().hosts, 1_000);
    eprintln!("100k URLs pushed and polled in {:?}", start.elapsed());
}
