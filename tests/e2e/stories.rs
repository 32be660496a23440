//! The daemon clustering a news feed from a local server into stories: `GET /api/stories`
//! ranks them with their events and items, the store places every item in its event and
//! story, and a restart rebuilds them from the store.

use std::collections::BTreeMap;
use std::time::Duration;

use ferret_actors::storage::Store;
use nix::sys::signal::Signal;
use serde_json::Value;

use crate::support::eventually_blocking;
use crate::support::http::{Response, TestServer};
use crate::Daemon;

const TITLES: [(&str, &str); 6] = [
    ("a1", "Apple releases iOS 7.1 update with CarPlay"),
    (
        "b1",
        "Bitcoin exchange Mt. Gox files for bankruptcy protection in US court",
    ),
    ("a2", "iOS 7.1 update from Apple brings CarPlay"),
    (
        "b2",
        "Mt. Gox bitcoin exchange seeks US bankruptcy protection",
    ),
    ("a3", "Apple iOS 7.1 arrives with CarPlay and fixes"),
    (
        "b3",
        "Mt. Gox bankruptcy: bitcoin exchange files in US court",
    ),
];

fn rss() -> String {
    let mut items = String::new();
    for (i, (id, title)) in TITLES.iter().enumerate().rev() {
        items.push_str(&format!(
            "<item><guid>{id}</guid><title>{title}</title><link>http://example.com/{id}</link>\
             <pubDate>Mon, 10 Mar 2014 17:{:02}:00 GMT</pubDate></item>",
            10 + i
        ));
    }
    format!("<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>News</title>{items}</channel></rss>")
}

/// The item ids of each story, sorted.
fn stories(daemon: &Daemon) -> Vec<Vec<String>> {
    let stories: Vec<Value> = daemon.get("/api/stories").json().unwrap();
    let mut out: Vec<Vec<String>> = stories
        .iter()
        .map(|story| {
            let mut ids: Vec<String> = story["events"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|event| event["items"].as_array().unwrap().clone())
                .map(|item| item["id"].as_str().unwrap().to_string())
                .collect();
            ids.sort();
            ids
        })
        .collect();
    out.sort();
    out
}

/// The item ids of each story as the store places them, sorted.
fn stored_stories(daemon: &Daemon) -> Vec<Vec<String>> {
    let store = Store::open(&daemon.store_path()).unwrap();
    let mut by_story: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for placed in store.load_placements().unwrap() {
        by_story.entry(placed.story).or_default().push(placed.id);
    }
    let mut out: Vec<Vec<String>> = by_story
        .into_values()
        .map(|mut ids| {
            ids.sort();
            ids
        })
        .collect();
    out.sort();
    out
}

#[test]
fn news_items_become_ranked_stories_that_survive_a_restart() {
    let body = rss();
    let server = TestServer::start(move |_, _| Response::ok("application/rss+xml", body.clone()));
    let extra = format!(
        "\n[[feeds]]\nname = \"news\"\nurl = \"{}\"\ninterval_secs = 600\n\n[stories]\nfeeds = [\"news\"]\n",
        server.url("/news.xml")
    );
    let daemon = Daemon::start_with(false, "", "", &extra);
    let first = eventually_blocking(Duration::from_secs(30), "six items in stories", || {
        let stories = stories(&daemon);
        (stories.iter().map(Vec::len).sum::<usize>() == 6).then_some(stories)
    });
    // No story mixes the two topics.
    for story in &first {
        let topics: std::collections::BTreeSet<char> =
            story.iter().map(|id| id.chars().next().unwrap()).collect();
        assert_eq!(topics.len(), 1, "a mixed story: {story:?} in {first:?}");
    }
    // The store holds the same stories, item by item.
    eventually_blocking(Duration::from_secs(30), "the stories stored", || {
        (stored_stories(&daemon) == first).then_some(())
    });
    let ranked: Vec<Value> = daemon.get("/api/stories?limit=1").json().unwrap();
    assert_eq!(ranked.len(), 1);
    assert!(ranked[0]["score"].as_f64().unwrap() > 0.0);
    assert!(ranked[0]["updated"].is_string());

    daemon.signal(Signal::SIGTERM);
    let mut daemon = daemon;
    assert!(daemon.wait_exit(Duration::from_secs(10)).success());
    let daemon = Daemon::restart(daemon);
    let mut daemon = daemon;
    daemon.wait_for_log(|v| v["fields"]["message"] == "Stories rebuilt from the store.");
    assert_eq!(stories(&daemon), first, "the same stories after a restart");
    eventually_blocking(Duration::from_secs(30), "the stories stored again", || {
        (stored_stories(&daemon) == first).then_some(())
    });
}
