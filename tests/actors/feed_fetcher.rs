//! The FeedFetcher alone, with probe subscribers, against local HTTP servers.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix::{Actor, Context, Handler};
use ferret::config::Settings;
use ferret::fetch::FetchError;
use ferret::supervision::RestartPolicy;
use ferret_actors::feed_fetcher::{FeedBook, FeedFetcher};
use ferret_actors::messages::{
    Envelope, FeedStats, FeedStatus, FeedUpdate, FetchNow, FetchOutcome, FetchRefused, Subscribe,
};
use ferret_actors::pool::{Pool, Route};
use ferret_actors::supervisor::{Runtime, RuntimeBuilder, RuntimeOptions};

use crate::support::eventually;
use crate::support::http::{gzip_stored, Response, TestServer};

const RSS: &str = r#"<?xml version="1.0"?>
<rss version="2.0"><channel><title>Local news</title><link>http://example.com/</link>
<item><title>First</title><link>http://example.com/1</link><guid>one</guid>
<description>The first item.</description></item>
<item><title>Second</title><link>/2</link><guid>two</guid></item>
</channel></rss>"#;

/// Short limits so that every failure shows quickly.
const FETCH: &str = r#"
[fetch]
user_agent = "ferret-test/1.0 (+https://github.com/ferret)"
timeout_ms = 400
connect_timeout_ms = 400
max_body_bytes = 4096
max_redirects = 3
max_retries = 2
retry_base_ms = 20
retry_max_ms = 50
max_retry_after_secs = 5
per_host_concurrency = 2
"#;

/// The FeedFetcher pool alone under a supervisor, with its sources on `server`.
struct Harness {
    runtime: Runtime,
    book: FeedBook,
    route: Route<FetchNow>,
    pool: Pool<FeedFetcher>,
}

impl Harness {
    /// `feeds`: (name, path on `server`); each is fetched at start-up, then hourly.
    fn start(server: &TestServer, fetch: &str, feeds: &[(&str, &str)]) -> Harness {
        let mut text = fetch.to_string();
        for (name, path) in feeds {
            text.push_str(&format!(
                "\n[[feeds]]\nname = \"{name}\"\nurl = \"{}\"\ninterval_secs = 3600\n",
                server.url(path)
            ));
        }
        let settings = Settings::from_toml(&text, None).unwrap();
        let book = FeedBook::new(&settings.fetch, settings.feeds.clone()).unwrap();
        let pool = Pool::new(2);
        let mut builder = RuntimeBuilder::new(crate::test_options());
        builder.supervise(
            &pool,
            RestartPolicy::Permanent,
            FeedFetcher::factory(book.clone(), &pool, 7),
        );
        let runtime = builder.start().unwrap();
        Harness {
            runtime,
            route: pool.route(),
            pool,
            book,
        }
    }

    fn status(&self, name: &str) -> FeedStatus {
        self.book
            .statuses()
            .into_iter()
            .find(|s| s.name == name)
            .unwrap()
    }

    /// Waits for the start-up fetch of `name` to end.
    async fn settled(&self, name: &str) -> FeedStatus {
        eventually(Duration::from_secs(5), "the start-up fetch", || async {
            let status = self.status(name);
            (status.stats.last_outcome.is_some() && !status.in_flight).then_some(status)
        })
        .await
    }

    async fn fetch(&self, name: &str) -> Result<FeedUpdate, FetchRefused> {
        self.route
            .send(Envelope::new(FetchNow {
                source: name.to_string(),
            }))
            .await
            .unwrap()
    }

    async fn subscribe(&self, source: Option<&str>) -> Probe {
        let probe = Probe::default();
        let subscriber = probe.clone().start().recipient();
        let route: Route<Subscribe> = self.pool.route();
        route
            .send(Envelope::new(Subscribe {
                source: source.map(str::to_string),
                subscriber,
            }))
            .await
            .unwrap()
            .unwrap();
        probe
    }
}

/// A subscriber that keeps what it is sent.
#[derive(Clone, Default)]
struct Probe(Arc<Mutex<Vec<Envelope<FeedUpdate>>>>);

impl Actor for Probe {
    type Context = Context<Self>;
}

impl Handler<Envelope<FeedUpdate>> for Probe {
    type Result = ();

    fn handle(&mut self, update: Envelope<FeedUpdate>, _: &mut Context<Self>) {
        self.0.lock().unwrap().push(update);
    }
}

impl Probe {
    async fn wait_for(&self, count: usize) -> Vec<FeedUpdate> {
        eventually(Duration::from_secs(5), "updates at the probe", || async {
            let got = self.0.lock().unwrap();
            (got.len() >= count).then(|| got.iter().map(|e| e.payload.clone()).collect())
        })
        .await
    }
}

fn failure(update: &FeedUpdate) -> (&FetchError, Option<u16>, &str, &str) {
    match &update.outcome {
        FetchOutcome::Failed(f) => (&f.error, f.status, f.url.as_str(), f.cause.as_str()),
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[actix::test]
async fn a_feed_is_fetched_at_start_up_and_on_request_and_reaches_its_subscribers() {
    let server = TestServer::start(|_, _| Response::ok("application/rss+xml; charset=utf-8", RSS));
    let h = Harness::start(&server, FETCH, &[("news", "/rss.xml")]);
    let status = h.settled("news").await;
    assert_eq!(status.stats.fetched, 1);
    assert_eq!(status.stats.last_outcome, Some("fetched"));

    let to_news = h.subscribe(Some("news")).await;
    let to_all = h.subscribe(None).await;
    let reply = h.fetch("news").await.unwrap();
    let FetchOutcome::Fetched(fetched) = &reply.outcome else {
        panic!("{reply:?}")
    };
    assert_eq!(fetched.status, 200);
    assert_eq!(fetched.url, server.url("/rss.xml"));
    assert_eq!(fetched.charset.as_deref(), Some("utf-8"));
    assert_eq!(fetched.bytes, RSS.len());
    let feed = &fetched.feed;
    assert_eq!(feed.title.as_deref(), Some("Local news"));
    let ids: Vec<&str> = feed.items.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, ["one", "two"]);
    assert_eq!(feed.items[0].summary.as_deref(), Some("The first item."));
    assert_eq!(
        feed.items[1].link.as_deref(),
        Some(server.url("/2").as_str()),
        "relative links resolve against the URL fetched"
    );
    for probe in [&to_news, &to_all] {
        let got = probe.wait_for(1).await;
        assert_eq!(got[0].source, "news");
        let FetchOutcome::Fetched(delivered) = &got[0].outcome else {
            panic!("{got:?}")
        };
        assert_eq!(delivered.feed.items.len(), 2);
    }
    // The update is traced to the FetchNow that caused it.
    assert!(to_news.0.lock().unwrap()[0].parent.is_some());

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0];
    assert_eq!(first.method, "GET");
    assert_eq!(
        first.header("user-agent"),
        Some("ferret-test/1.0 (+https://github.com/ferret)")
    );
    let accepted = first.header("accept-encoding").unwrap_or("");
    for coding in ["gzip", "br", "deflate"] {
        assert!(accepted.contains(coding), "{accepted}");
    }
    let stats: Vec<FeedStatus> = h.pool.route().send(Envelope::new(FeedStats)).await.unwrap();
    assert_eq!(stats[0].stats.reads, 2, "every request is a read");
    assert_eq!(stats[0].stats.last_items, Some(2));
    assert_eq!(stats[0].subscribers, 1);
}

#[actix::test]
async fn unknown_sources_are_refused() {
    let server = TestServer::start(|_, _| Response::ok("text/xml", RSS));
    let h = Harness::start(&server, FETCH, &[("news", "/rss.xml")]);
    assert_eq!(
        h.fetch("nope").await.unwrap_err(),
        FetchRefused::UnknownSource("nope".into())
    );
    let route: Route<Subscribe> = h.pool.route();
    let refused = route
        .send(Envelope::new(Subscribe {
            source: Some("nope".into()),
            subscriber: Probe::default().start().recipient(),
        }))
        .await
        .unwrap();
    assert_eq!(refused, Err(FetchRefused::UnknownSource("nope".into())));
}

#[actix::test]
async fn a_gzip_body_is_decoded() {
    let server = TestServer::start(|_, _| {
        Response::ok("text/xml", gzip_stored(RSS.as_bytes())).header("Content-Encoding", "gzip")
    });
    let h = Harness::start(&server, FETCH, &[("news", "/rss.xml")]);
    h.settled("news").await;
    let reply = h.fetch("news").await.unwrap();
    let FetchOutcome::Fetched(fetched) = &reply.outcome else {
        panic!("{reply:?}")
    };
    assert_eq!(fetched.bytes, RSS.len());
    assert_eq!(fetched.feed.title.as_deref(), Some("Local news"));
}

#[actix::test]
async fn the_http_charset_lean_mode_and_language_reach_the_parser() {
    // "Привет" in windows-1251, with no encoding in the XML declaration.
    let mut cyrillic = b"<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>".to_vec();
    cyrillic.extend_from_slice(&[0xCF, 0xF0, 0xE8, 0xE2, 0xE5, 0xF2]);
    cyrillic.extend_from_slice(b"</title></channel></rss>");
    let server = TestServer::start(move |request, _| match request.path.as_str() {
        "/ru.xml" => Response::ok("text/xml; charset=windows-1251", cyrillic.clone()),
        _ => Response::ok("text/xml", RSS),
    });
    let mut fetch = FETCH.to_string();
    fetch.push_str(&format!(
        "\n[[feeds]]\nname = \"lean\"\nurl = \"{}\"\nlean = true\nlanguage = \"de-DE\"\n",
        server.url("/lean.xml")
    ));
    let h = Harness::start(&server, &fetch, &[("ru", "/ru.xml")]);
    for name in ["ru", "lean"] {
        h.settled(name).await;
    }
    let ru = h.fetch("ru").await.unwrap();
    let FetchOutcome::Fetched(fetched) = &ru.outcome else {
        panic!("{ru:?}")
    };
    assert_eq!(fetched.feed.title.as_deref(), Some("Привет"));
    assert_eq!(fetched.feed.encoding, "windows-1251");
    assert_eq!(
        fetched.feed.language, None,
        "it declares none, none is configured"
    );

    let lean = h.fetch("lean").await.unwrap();
    let FetchOutcome::Fetched(fetched) = &lean.outcome else {
        panic!("{lean:?}")
    };
    let first = &fetched.feed.items[0];
    assert_eq!(first.title.as_deref(), Some("First"));
    assert_eq!(first.summary, None, "lean mode skips the summary");
    // The configured language replaces what the feed declares, for stories to stem in.
    assert_eq!(fetched.feed.language.as_deref(), Some("de-DE"));
}

#[actix::test]
async fn a_body_that_is_not_a_feed_is_a_parse_failure_and_is_fetched_in_full_again() {
    let server = TestServer::start(|_, _| {
        Response::ok("text/html", "<html><body>Moved to a new site</body></html>")
            .header("ETag", "\"html\"")
    });
    let h = Harness::start(&server, FETCH, &[("page", "/page")]);
    let status = h.settled("page").await;
    let error = status
        .stats
        .last_error
        .expect("a parse failure is recorded");
    assert_eq!(error.kind, "parse");
    assert_eq!(error.status, Some(200));
    assert!(
        error.message.starts_with("not a feed: 1:"),
        "{}",
        error.message
    );
    assert!(error.message.contains("<html>"), "{}", error.message);
    assert!(error.message.contains("text/html"), "{}", error.message);
    assert_eq!(
        status.etag, None,
        "no validators from a body that did not parse"
    );

    let reply = h.fetch("page").await.unwrap();
    assert!(matches!(failure(&reply).0, FetchError::Parse { .. }));
    assert_eq!(server.requests()[1].header("if-none-match"), None);
    assert_eq!(h.status("page").stats.failures["parse"], 2);
}

#[actix::test]
async fn a_304_is_not_modified_not_an_error() {
    let server = TestServer::start(|request, _| match request.header("if-none-match") {
        Some("\"v1\"") => Response::status(304).header("ETag", "\"v1\""),
        _ => Response::ok("text/xml", RSS)
            .header("ETag", "\"v1\"")
            .header("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT"),
    });
    let h = Harness::start(&server, FETCH, &[("news", "/rss.xml")]);
    let first = h.settled("news").await;
    assert_eq!(first.etag.as_deref(), Some("\"v1\""));

    let probe = h.subscribe(Some("news")).await;
    let reply = h.fetch("news").await.unwrap();
    assert!(
        matches!(reply.outcome, FetchOutcome::NotModified),
        "{reply:?}"
    );
    let got = probe.wait_for(1).await;
    assert!(matches!(got[0].outcome, FetchOutcome::NotModified));

    let requests = server.requests();
    assert_eq!(requests[0].header("if-none-match"), None);
    assert_eq!(requests[1].header("if-none-match"), Some("\"v1\""));
    assert_eq!(
        requests[1].header("if-modified-since"),
        Some("Sun, 06 Nov 1994 08:49:37 GMT")
    );
    let status = h.status("news");
    assert_eq!(status.stats.reads, 2);
    assert_eq!(status.stats.fetched, 1);
    assert_eq!(status.stats.not_modified, 1);
    assert_eq!(status.stats.failures_total(), 0);
    assert_eq!(status.stats.last_error, None);
    assert_eq!(status.stats.last_status, Some(304));
    assert_eq!(status.stats.last_outcome, Some("not_modified"));
}

#[actix::test]
async fn a_503_with_retry_after_is_retried_after_the_wait_and_succeeds() {
    let server = TestServer::start(|_, n| match n {
        0 => Response::status(503).header("Retry-After", "1"),
        _ => Response::ok("text/xml", RSS),
    });
    let h = Harness::start(&server, FETCH, &[("busy", "/busy.xml")]);
    let status = h.settled("busy").await;
    assert_eq!(status.stats.last_outcome, Some("fetched"), "{status:?}");
    assert_eq!(status.stats.reads, 2);
    assert_eq!(status.stats.retries, 1);
    assert_eq!(status.stats.failures_total(), 0);
    let requests = server.requests();
    let waited = requests[1].at - requests[0].at;
    assert!(waited >= Duration::from_secs(1), "retried after {waited:?}");
    assert!(waited < Duration::from_secs(5), "retried after {waited:?}");
}

#[actix::test]
async fn retries_are_bounded_and_end_in_a_status_error() {
    let server = TestServer::start(|request, _| match request.path.as_str() {
        "/gone.xml" => Response::status(404),
        "/far.xml" => Response::status(503).header("Retry-After", "3600"),
        _ => Response::status(429),
    });
    let feeds = [
        ("throttled", "/throttled.xml"),
        ("gone", "/gone.xml"),
        ("far", "/far.xml"),
    ];
    let h = Harness::start(&server, FETCH, &feeds);
    for (name, _) in feeds {
        h.settled(name).await;
    }
    let throttled = h.status("throttled");
    assert_eq!(
        throttled.stats.reads, 3,
        "the first try and max_retries = 2"
    );
    assert_eq!(throttled.stats.retries, 2);
    let error = throttled.stats.last_error.unwrap();
    assert_eq!((error.kind, error.status), ("status", Some(429)));
    assert!(
        error.message.contains("after 2 retries"),
        "{}",
        error.message
    );

    let gone = h.status("gone");
    assert_eq!(
        (gone.stats.reads, gone.stats.retries),
        (1, 0),
        "a 404 is not retried"
    );
    assert_eq!(gone.stats.failures["status"], 1);

    let far = h.status("far");
    assert_eq!(
        far.stats.reads, 1,
        "a Retry-After over the maximum is not waited for"
    );
    let message = far.stats.last_error.unwrap().message;
    assert!(message.contains("max_retry_after_secs"), "{message}");
}

#[actix::test]
async fn a_body_over_the_limit_is_too_large_with_or_without_a_length() {
    let big = vec![b'x'; 5000];
    let server = TestServer::start(move |request, _| {
        let response = Response::ok("text/xml", big.clone());
        if request.path == "/chunked.xml" {
            response.chunked()
        } else {
            response
        }
    });
    let h = Harness::start(
        &server,
        FETCH,
        &[("sized", "/sized.xml"), ("chunked", "/chunked.xml")],
    );
    for name in ["sized", "chunked"] {
        h.settled(name).await;
        let reply = h.fetch(name).await.unwrap();
        let (error, status, url, cause) = failure(&reply);
        assert_eq!(*error, FetchError::TooLarge { limit: 4096 }, "{name}");
        assert_eq!(status, Some(200));
        assert!(url.ends_with(&format!("/{name}.xml")), "{url}");
        assert!(!cause.is_empty());
        assert_eq!(h.status(name).stats.failures["too_large"], 2);
    }
}

#[actix::test]
async fn a_slow_server_times_out() {
    let server =
        TestServer::start(|_, _| Response::ok("text/xml", RSS).delay(Duration::from_millis(1500)));
    let h = Harness::start(&server, FETCH, &[("slow", "/slow.xml")]);
    let status = h.settled("slow").await;
    let error = status.stats.last_error.expect("a timeout is recorded");
    assert_eq!(error.kind, "timeout");
    assert_eq!(error.status, None);
    assert_eq!(error.url, server.url("/slow.xml"));
    let probe = h.subscribe(Some("slow")).await;
    let reply = h.fetch("slow").await.unwrap();
    assert_eq!(failure(&reply).0, &FetchError::Timeout);
    assert_eq!(failure(&probe.wait_for(1).await[0]).0, &FetchError::Timeout);
}

#[actix::test]
async fn redirect_loops_and_long_chains_are_told_apart() {
    let server = TestServer::start(|request, _| {
        let to = match request.path.as_str() {
            "/a" => "/b",
            "/b" => "/a",
            "/self" => "/self",
            "/hop1" => "/hop2",
            "/hop2" => "/hop3",
            "/hop3" => "/hop4",
            "/hop4" => "/hop5",
            "/moved" => "/rss.xml",
            _ => return Response::ok("text/xml", RSS),
        };
        Response::status(302).header("Location", to)
    });
    let h = Harness::start(
        &server,
        FETCH,
        &[
            ("loop", "/a"),
            ("self", "/self"),
            ("chain", "/hop1"),
            ("moved", "/moved"),
        ],
    );
    for name in ["loop", "self", "chain", "moved"] {
        h.settled(name).await;
    }
    let kind = |name| h.status(name).stats.last_error.map(|e| e.kind);
    assert_eq!(kind("loop"), Some("redirect_loop"));
    assert_eq!(kind("self"), Some("redirect_loop"));
    assert_eq!(kind("chain"), Some("too_many_redirects"));
    let moved = h.fetch("moved").await.unwrap();
    let FetchOutcome::Fetched(fetched) = &moved.outcome else {
        panic!("{moved:?}")
    };
    assert_eq!(fetched.url, server.url("/rss.xml"), "the final URL is kept");
    let looped = h.fetch("loop").await.unwrap();
    let (error, _, url, cause) = failure(&looped);
    assert_eq!(*error, FetchError::RedirectLoop);
    assert_eq!(
        url,
        server.url("/b"),
        "the URL whose redirect closed the loop"
    );
    assert!(cause.contains("redirect loop"), "{cause}");
}

#[actix::test]
async fn a_refused_connection_is_a_connect_error() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let text =
        format!("{FETCH}\n[[feeds]]\nname = \"down\"\nurl = \"http://127.0.0.1:{port}/rss.xml\"\n");
    let settings = Settings::from_toml(&text, None).unwrap();
    let book = FeedBook::new(&settings.fetch, settings.feeds.clone()).unwrap();
    let pool = Pool::new(1);
    let mut builder = RuntimeBuilder::new(RuntimeOptions {
        arbiters: 1,
        mailbox_capacity: 16,
        max_restarts: 1,
        period: Duration::from_secs(60),
        liveness_interval: Duration::from_millis(50),
        shutdown_grace: Duration::from_secs(1),
    });
    builder.supervise(
        &pool,
        RestartPolicy::Permanent,
        FeedFetcher::factory(book.clone(), &pool, 1),
    );
    let _runtime = builder.start().unwrap();
    let error = eventually(Duration::from_secs(5), "a connect error", || async {
        book.statuses()[0].stats.last_error.clone()
    })
    .await;
    assert_eq!(error.kind, "connect");
    assert!(
        error.message.starts_with("could not connect: "),
        "{}",
        error.message
    );
}

#[actix::test]
async fn requests_to_one_host_never_exceed_its_concurrency_limit() {
    let server =
        TestServer::start(|_, _| Response::ok("text/xml", RSS).delay(Duration::from_millis(150)));
    let feeds: Vec<(String, String)> = (0..6)
        .map(|i| (format!("f{i}"), format!("/f{i}.xml")))
        .collect();
    let refs: Vec<(&str, &str)> = feeds
        .iter()
        .map(|(n, p)| (n.as_str(), p.as_str()))
        .collect();
    let h = Harness::start(&server, FETCH, &refs);
    for (name, _) in &refs {
        h.settled(name).await;
    }
    assert_eq!(server.requests().len(), 6);
    assert_eq!(server.max_in_flight(), 2, "per_host_concurrency = 2");
}

#[actix::test]
async fn a_fetch_under_way_is_not_started_twice() {
    let server =
        TestServer::start(|_, _| Response::ok("text/xml", RSS).delay(Duration::from_millis(300)));
    let h = Harness::start(&server, FETCH, &[("news", "/rss.xml")]);
    eventually(
        Duration::from_secs(2),
        "the start-up fetch to begin",
        || async { h.status("news").in_flight.then_some(()) },
    )
    .await;
    assert_eq!(
        h.fetch("news").await.unwrap_err(),
        FetchRefused::InFlight("news".into())
    );
    h.settled("news").await;
    assert_eq!(server.requests().len(), 1);
}

#[actix::test]
async fn a_restarted_instance_keeps_counters_and_subscribers_and_fetches_again() {
    let server = TestServer::start(|_, _| Response::ok("text/xml", RSS));
    let h = Harness::start(&server, FETCH, &[("news", "/rss.xml")]);
    assert_eq!(h.settled("news").await.stats.fetched, 1);
    let probe = h.subscribe(Some("news")).await;

    let owner = h.pool.slot_of("127.0.0.1");
    assert!(h.runtime.inject_panic("feed_fetcher", owner));
    eventually(Duration::from_secs(2), "the restart", || async {
        h.runtime
            .instances()
            .iter()
            .any(|i| i.role == "feed_fetcher" && i.instance == owner && i.restarts == 1)
            .then_some(())
    })
    .await;
    // The new instance schedules the host's sources again; the book kept the counters and
    // the subscription.
    let got = probe.wait_for(1).await;
    assert!(
        matches!(got[0].outcome, FetchOutcome::Fetched(_)),
        "{got:?}"
    );
    let status = h.status("news");
    assert_eq!(status.stats.fetched, 2);
    assert_eq!(status.stats.reads, 2);
    assert_eq!(status.subscribers, 1);
}
