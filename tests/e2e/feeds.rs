//! The daemon fetching `[[feeds]]` from a local server that misbehaves in every way the
//! fetcher must survive: each failure is a typed, logged, counted event, and the daemon
//! keeps running.

use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::Value;

use crate::support::eventually_blocking;
use crate::support::http::{Response, TestServer};
use crate::Daemon;

const RSS: &str = r#"<?xml version="1.0"?>
<rss version="2.0"><channel><title>Local</title>
<item><title>One</title><link>http://example.com/1</link><guid>1</guid></item>
</channel></rss>"#;

fn server() -> TestServer {
    TestServer::start(|request, n| match request.path.as_str() {
        "/ok.xml" => match request.header("if-none-match") {
            Some("\"v1\"") => Response::status(304),
            _ => Response::ok("application/rss+xml", RSS).header("ETag", "\"v1\""),
        },
        "/busy.xml" if n == 0 => Response::status(503).header("Retry-After", "1"),
        "/busy.xml" => Response::ok("application/rss+xml", RSS),
        "/big.xml" => Response::ok("application/rss+xml", vec![b' '; 10_000]),
        "/slow.xml" => Response::ok("application/rss+xml", RSS).delay(Duration::from_secs(2)),
        "/page.html" => Response::ok("text/html", "<html><body>not a feed</body></html>"),
        "/a" => Response::status(301).header("Location", "/b"),
        "/b" => Response::status(301).header("Location", "/a"),
        _ => Response::status(404),
    })
}

fn config(server: &TestServer) -> String {
    let mut text = String::from(
        "\n[fetch]\ntimeout_ms = 500\nmax_body_bytes = 4096\nmax_redirects = 3\n\
         max_retries = 2\nretry_base_ms = 20\nretry_max_ms = 50\n",
    );
    for (name, path, interval) in [
        ("ok", "/ok.xml", 1),
        ("busy", "/busy.xml", 600),
        ("big", "/big.xml", 600),
        ("slow", "/slow.xml", 600),
        ("loop", "/a", 600),
        ("page", "/page.html", 600),
    ] {
        text.push_str(&format!(
            "\n[[feeds]]\nname = \"{name}\"\nurl = \"{}\"\ninterval_secs = {interval}\n",
            server.url(path)
        ));
    }
    text
}

fn feed<'a>(feeds: &'a [Value], name: &str) -> &'a Value {
    feeds.iter().find(|f| f["name"] == name).unwrap()
}

#[test]
fn misbehaving_feeds_are_typed_logged_and_counted_and_the_daemon_keeps_running() {
    let server = server();
    let mut daemon = Daemon::start_with(false, "", "", &config(&server));

    // Everything settles within a few seconds: the 304 needs the second fetch of `ok`
    // (interval 1 s), the 503 a retry after Retry-After: 1.
    let feeds: Vec<Value> = eventually_blocking(Duration::from_secs(10), "every feed", || {
        let feeds: Vec<Value> = daemon.get("/api/feeds").json().unwrap();
        let done = feeds.len() == 6
            && feed(&feeds, "ok")["not_modified"].as_u64() >= Some(1)
            && feeds
                .iter()
                .all(|f| !f["last_outcome"].is_null() && f["in_flight"] == false);
        done.then_some(feeds)
    });

    let ok = feed(&feeds, "ok");
    assert_eq!(ok["fetched"], 1, "{ok}");
    assert_eq!(ok["etag"], "\"v1\"");
    assert_eq!(ok["last_items"], 1, "{ok}");
    assert_eq!(ok["failures"], serde_json::json!({}), "{ok}");
    assert!(ok["last_error"].is_null(), "{ok}");
    let to_ok = server.requests_to("/ok.xml");
    assert_eq!(to_ok[1].header("if-none-match"), Some("\"v1\""));

    let busy = feed(&feeds, "busy");
    assert_eq!(busy["last_outcome"], "fetched", "{busy}");
    assert_eq!(
        (busy["reads"].as_u64(), busy["retries"].as_u64()),
        (Some(2), Some(1))
    );
    let to_busy = server.requests_to("/busy.xml");
    assert!(to_busy[1].at - to_busy[0].at >= Duration::from_secs(1));

    for (name, kind, status) in [
        ("big", "too_large", Some(200)),
        ("slow", "timeout", None),
        ("loop", "redirect_loop", Some(301)),
        ("page", "parse", Some(200)),
    ] {
        let f = feed(&feeds, name);
        assert_eq!(f["last_outcome"], "failed", "{f}");
        assert_eq!(f["failures"][kind], 1, "{f}");
        let error = &f["last_error"];
        assert_eq!(error["kind"], kind, "{f}");
        assert!(error["url"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:"));
        assert!(!error["message"].as_str().unwrap().is_empty());
        if kind != "redirect_loop" {
            assert_eq!(error["status"].as_u64().map(|s| s as u16), status, "{f}");
        }
        // Logged as a warning, with its kind, in the span of the fetcher's handler.
        let logged = daemon.wait_for_log(|v| {
            v["fields"]["message"] == "Feed fetch failed." && v["fields"]["source"] == name
        });
        assert_eq!(logged["level"], "WARN");
        assert_eq!(logged["fields"]["kind"], kind);
        assert!(logged["fields"]["cause"]
            .as_str()
            .is_some_and(|c| !c.is_empty()));
        assert_eq!(logged["span"]["role"], "feed_fetcher");
        assert_eq!(logged["span"]["message"], "FetchNow");
    }

    let metrics = daemon.get("/metrics").text().unwrap();
    for line in [
        "ferret_feed_failures_total{source=\"big\",kind=\"too_large\"} 1",
        "ferret_feed_failures_total{source=\"slow\",kind=\"timeout\"} 1",
        "ferret_feed_failures_total{source=\"loop\",kind=\"redirect_loop\"} 1",
        "ferret_feed_failures_total{source=\"page\",kind=\"parse\"} 1",
        "ferret_feed_failures_total{source=\"ok\",kind=\"timeout\"} 0",
        "ferret_feed_reads_total{source=\"busy\"} 2",
        "ferret_feed_retries_total{source=\"busy\"} 1",
        "ferret_feed_fetched_total{source=\"busy\"} 1",
    ] {
        assert!(metrics.contains(line), "{line} missing:\n{metrics}");
    }
    assert!(metrics.contains("ferret_feed_not_modified_total{source=\"ok\"}"));

    // Still running and healthy, and it stops cleanly.
    let health: Value = daemon.get("/healthz").json().unwrap();
    assert_eq!(health["status"], "ok");
    daemon.signal(Signal::SIGTERM);
    let status = daemon.wait_exit(Duration::from_secs(15));
    assert_eq!(status.code(), Some(0), "{}", daemon.stderr());
}
