//! Discovery's intake: feedback through `POST /api/feedback` and the feedback commands becomes
//! hittage in `GET /api/pages?sort=hittage`, lighthouses in `GET /api/lighthouses`, and both
//! survive a restart.

use std::time::Duration;

use ferret::discovery::hittage::FeedbackKind;
use ferret_actors::storage::Store;
use nix::sys::signal::Signal;
use serde_json::{json, Value};

use crate::support::eventually_blocking;
use crate::{ferret, Daemon};

fn post_feedback(daemon: &Daemon, body: &Value) -> (u16, Value) {
    let response = reqwest::blocking::Client::new()
        .post(format!("{}/api/feedback", daemon.base))
        .json(body)
        .send()
        .unwrap();
    (response.status().as_u16(), response.json().unwrap())
}

/// `(url, hittage, lighthouse)` of every page, in the API's order.
fn pages(daemon: &Daemon) -> Vec<(String, f64, bool)> {
    let pages: Vec<Value> = daemon.get("/api/pages?sort=hittage").json().unwrap();
    pages
        .iter()
        .map(|p| {
            (
                p["url"].as_str().unwrap().to_string(),
                p["hittage"].as_f64().unwrap(),
                p["lighthouse"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn wait_for_pages(daemon: &Daemon, what: &str, pred: impl Fn(&[(String, f64, bool)]) -> bool) {
    eventually_blocking(Duration::from_secs(10), what, || {
        let pages = pages(daemon);
        pred(&pages).then_some(())
    });
}

#[test]
fn feedback_through_the_api_and_the_cli_becomes_hittage_that_survives_a_restart() {
    let daemon = Daemon::start_with(
        false,
        "",
        "",
        "\n[discovery]\ngeneralize_interval_secs = 1\n",
    );

    // Bad input: a clear 400 each.
    for (body, says) in [
        (
            json!({"url": "http://a.example/", "kind": "dwell"}),
            "seconds",
        ),
        (
            json!({"url": "http://a.example/", "kind": "stare"}),
            "unknown kind",
        ),
        (
            json!({"url": "mailto:x@example.com", "kind": "like"}),
            "http",
        ),
        (
            json!({"url": "http://a.example/", "kind": "like", "at": "yesterday"}),
            "RFC 3339",
        ),
        (
            json!({"url": "http://a.example/", "kind": "like", "why": 1}),
            "unknown field",
        ),
        (json!(["not", "an", "object"]), "bad feedback JSON"),
    ] {
        let (status, reply) = post_feedback(&daemon, &body);
        assert_eq!(status, 400, "{body} → {reply}");
        let error = reply["error"].as_str().unwrap();
        assert!(error.contains(says), "{body} → {error}");
    }

    let (status, stored) = post_feedback(
        &daemon,
        &json!({"url": "http://a.example/page#top", "kind": "like"}),
    );
    assert_eq!(status, 202, "{stored}");
    assert_eq!(stored["url"], "http://a.example/page");
    assert_eq!(stored["kind"], "like");
    assert!(stored["id"].as_i64().unwrap() > 0);
    let (status, stored) = post_feedback(
        &daemon,
        &json!({"url": "http://b.example/", "kind": "dislike", "at": "2026-01-02T03:04:05Z"}),
    );
    assert_eq!(status, 202, "{stored}");
    assert_eq!(stored["at_ms"], 1_767_323_045_000_i64);

    wait_for_pages(&daemon, "the like and the dislike in /api/pages", |pages| {
        pages.len() == 2
            && pages[0] == ("http://a.example/page".into(), 1.0, true)
            && pages[1].0 == "http://b.example/"
            && pages[1].1 < 0.0
    });
    let lighthouses: Value = daemon.get("/api/lighthouses").json().unwrap();
    assert_eq!(
        lighthouses["lighthouses"],
        json!([["http://a.example/page", 1.0]])
    );
    let unknown = daemon.get("/api/pages?sort=title");
    assert_eq!(unknown.status(), 400);

    // The CLI writes into the running daemon's store; the next computation picks it up.
    let config = daemon.dir.path().join("config.toml");
    let out = ferret()
        .arg("like")
        .arg("--config")
        .arg(&config)
        .arg("http://c.example/")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    wait_for_pages(&daemon, "the CLI's like in /api/pages", |pages| {
        pages
            .iter()
            .any(|(url, h, lit)| url == "http://c.example/" && *h > 0.99 && *lit)
    });
    let before = pages(&daemon);

    daemon.signal(Signal::SIGTERM);
    let mut daemon = daemon;
    assert!(daemon.wait_exit(Duration::from_secs(10)).success());
    let mut daemon = Daemon::restart(daemon);
    daemon.wait_for_log(|v| v["fields"]["message"] == "Hittage history resumed from the store.");
    let after = pages(&daemon);
    assert_eq!(after.len(), before.len(), "{after:?} vs {before:?}");
    for ((url, h, lit), (url2, h2, lit2)) in before.iter().zip(&after) {
        assert_eq!((url, lit), (url2, lit2));
        assert!((h - h2).abs() < 1e-6, "{url}: {h} then {h2}");
    }
}

#[test]
fn feedback_commands_write_the_store_without_a_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        crate::support::test_config(dir.path(), false, "", ""),
    )
    .unwrap();
    let list = dir.path().join("likes.txt");
    std::fs::write(
        &list,
        "# favourites\n\nhttps://a.example/\nnot a url\nhttps://b.example/x#frag\n",
    )
    .unwrap();
    let out = ferret()
        .arg("import-likes")
        .arg("--config")
        .arg(&config)
        .arg(&list)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a skipped line: exit 1\n{stderr}"
    );
    assert!(
        stderr.contains("likes.txt: line 4: `not a url` is not a URL"),
        "{stderr}"
    );
    assert!(
        stdout.contains("imported 2 likes from a list of URLs; skipped 1"),
        "{stdout}"
    );

    let bookmarks = dir.path().join("bookmarks.html");
    std::fs::write(
        &bookmarks,
        "<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<DL><p>\n<DT><A HREF=\"https://c.example/\" ADD_DATE=\"1\">C</A>\n</DL>\n",
    )
    .unwrap();
    let out = ferret()
        .arg("import-likes")
        .arg("--config")
        .arg(&config)
        .arg(&bookmarks)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");

    let out = ferret()
        .args(["feedback", "--kind", "dwell", "--seconds", "42", "--config"])
        .arg(&config)
        .args(["--at", "2026-11-24T09:30:00+01:00", "https://d.example/"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let out = ferret()
        .args([
            "feedback",
            "--kind",
            "visit",
            "--at",
            "yesterday",
            "--config",
        ])
        .arg(&config)
        .arg("https://d.example/")
        .output()
        .unwrap();
    assert!(!out.status.success(), "a bad --at records nothing");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("at: `yesterday` is not an RFC 3339 time"),
        "{stderr}"
    );
    let out = ferret()
        .args(["feedback", "--kind", "dwell", "--config"])
        .arg(&config)
        .arg("https://d.example/")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("a dwell needs `seconds`"), "{stderr}");
    let out = ferret()
        .args(["like", "--config"])
        .arg(&config)
        .args(["https://e.example/", "ftp://nope/"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "one bad URL: nothing recorded");

    let store = Store::open(&dir.path().join("ferret.db")).unwrap();
    let feedback = store.load_feedback().unwrap();
    let dwell = feedback.iter().find(|f| f.kind == FeedbackKind::Dwell);
    assert_eq!(
        dwell.map(|f| f.at_ms),
        Some(1_795_509_000_000),
        "--at 2026-11-24T09:30:00+01:00 is 08:30 UTC"
    );
    let recorded: Vec<(String, FeedbackKind)> =
        feedback.into_iter().map(|f| (f.url, f.kind)).collect();
    let mut urls: Vec<&str> = recorded.iter().map(|(url, _)| url.as_str()).collect();
    urls.sort_unstable();
    assert_eq!(
        urls,
        [
            "https://a.example/",
            "https://b.example/x",
            "https://c.example/",
            "https://d.example/"
        ]
    );
    assert!(recorded
        .iter()
        .any(|(url, kind)| url == "https://d.example/" && *kind == FeedbackKind::Dwell));
}
