//! `ferret sim-listing`: the listing simulator served over HTTP as Niconico-style RSS, read
//! back with ferret's own feed parser, and its ground truth written at SIGTERM.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use chrono::{DateTime, FixedOffset};
use ferret::feed::{parse, Feed, ParseOptions};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

use crate::ferret;
use crate::support::eventually_blocking;

/// A running `ferret sim-listing`, killed on drop if still running.
struct SimListing {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    base: String,
    dir: tempfile::TempDir,
}

impl SimListing {
    /// Starts `ferret sim-listing ARGS… --listen 127.0.0.1:0 --truth DIR/truth.jsonl` and
    /// reads the address from its start-up line.
    fn start(args: &[&str]) -> SimListing {
        let dir = tempfile::tempdir().unwrap();
        let stderr = std::fs::File::create(dir.path().join("stderr")).unwrap();
        let mut child = ferret()
            .arg("sim-listing")
            .args(args)
            .args(["--listen", "127.0.0.1:0", "--truth"])
            .arg(dir.path().join("truth.jsonl"))
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("the binary starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let mut sim = SimListing {
            child,
            base: String::new(),
            dir,
        };
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the start-up line within 60 s");
        let url = (line.trim_end())
            .strip_prefix("sim-listing: serving ")
            .and_then(|rest| rest.split_once(" on "))
            .map(|(_, url)| url)
            .unwrap_or_else(|| panic!("start-up line {line:?}; stderr:\n{}", sim.stderr()));
        let base = url.strip_suffix("/recent/rss?p={page}").unwrap();
        assert!(!base.ends_with(":0"), "the real port is shown: {line}");
        sim.base = base.to_string();
        sim
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("stderr")).unwrap_or_default()
    }

    fn truth_path(&self) -> PathBuf {
        self.dir.path().join("truth.jsonl")
    }

    fn get(&self, path: &str) -> reqwest::blocking::Response {
        reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap()
            .get(format!("{}{path}", self.base))
            .send()
            .unwrap()
    }

    /// Page 1, read until neither a simulated failure (503) nor a simulated empty page.
    fn page_one(&self) -> Feed {
        eventually_blocking(Duration::from_secs(10), "a full page 1", || {
            let response = self.get("/recent/rss?p=1");
            if response.status() == 503 {
                assert_eq!(response.headers()["retry-after"], "1");
                return None;
            }
            assert_eq!(response.status(), 200);
            assert_eq!(
                response.headers()["content-type"],
                "application/rss+xml; charset=utf-8"
            );
            let feed = parse(&response.bytes().unwrap(), &ParseOptions::default()).unwrap();
            assert!(feed.well_formed, "{:?}", feed.warnings);
            (!feed.items.is_empty()).then_some(feed)
        })
    }

    fn signal(&self, signal: Signal) {
        kill(Pid::from_raw(self.child.id() as i32), signal).unwrap();
    }

    fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        eventually_blocking(timeout, "sim-listing to exit", || {
            self.child.try_wait().unwrap()
        })
    }
}

impl Drop for SimListing {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn instant(text: &str) -> DateTime<FixedOffset> {
    DateTime::parse_from_rfc3339(text).unwrap_or_else(|err| panic!("{text:?}: {err}"))
}

#[test]
fn sim_listing_serves_pages_and_writes_the_truth_at_sigterm() {
    let mut sim = SimListing::start(&["--scenario", "quiet", "--time-scale", "20"]);
    assert_eq!(sim.get("/healthz").text().unwrap(), "ok");

    // pubDate of every id seen on page 1.
    let mut seen: Vec<(String, DateTime<FixedOffset>)> = Vec::new();
    for _ in 0..3 {
        let feed = sim.page_one();
        assert_eq!(feed.items.len(), 18, "page 1 is full");
        let total: u64 = feed
            .extensions
            .first("nicolive", "total_count")
            .expect("nicolive:total_count in the channel")
            .parse()
            .unwrap();
        assert!(total > 18, "total {total}");
        let dates: Vec<_> = feed
            .items
            .iter()
            .map(|item| instant(item.published.as_deref().expect("a pubDate")))
            .collect();
        assert!(
            dates.windows(2).all(|pair| pair[0] >= pair[1]),
            "newest first: {dates:?}"
        );
        for (item, date) in feed.items.iter().zip(dates) {
            assert!(item.id.starts_with("lv"), "{}", item.id);
            assert!(item.link.as_deref().unwrap().ends_with(&item.id));
            seen.push((item.id.clone(), date));
        }
        std::thread::sleep(Duration::from_millis(300));
    }

    for bad in ["p=0", "p=abc", "p=-1"] {
        let response = sim.get(&format!("/recent/rss?{bad}"));
        assert_eq!(response.status(), 400, "{bad}");
        let text = response.text().unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
    }

    sim.signal(Signal::SIGTERM);
    let status = sim.wait_exit(Duration::from_secs(15));
    assert_eq!(status.code(), Some(0), "{}", sim.stderr());

    let text = std::fs::read_to_string(sim.truth_path()).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert!(lines.len() >= 18, "{} lines", lines.len());
    let ids: HashSet<&str> = lines.iter().filter_map(|v| v["id"].as_str()).collect();
    assert_eq!(ids.len(), lines.len(), "one line a broadcast");
    for (id, date) in &seen {
        let line = lines.iter().find(|v| v["id"] == id.as_str());
        let line = line.unwrap_or_else(|| panic!("{id}, seen on page 1, is not in the truth"));
        // The pubDate is the reservation cut to its second.
        let reserved = instant(line["reserved_at"].as_str().unwrap());
        assert!(
            *date <= reserved && reserved < *date + chrono::TimeDelta::seconds(1),
            "{line}"
        );
        let started = instant(line["started_at"].as_str().unwrap());
        assert!(started >= reserved, "{line}");
        if let Some(ended) = line["ended_at"].as_str() {
            assert!(instant(ended) > started, "{line}");
        }
        assert!(
            ["frame", "early", "extended"].contains(&line["ending"].as_str().unwrap()),
            "{line}"
        );
        assert!(line["extensions"].is_u64(), "{line}");
    }
    // Written whole at exit: no temporary file left beside it.
    let mut files: Vec<String> = std::fs::read_dir(sim.dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["stderr", "truth.jsonl"]);
}

/// Behind a cache that says how long it kept a page (`[reads] cache_age`), a page read again
/// within the cache's lifetime comes back as it was, with an `Age` header in whole seconds;
/// the page as first rendered has none. The detector dates such an answer by it.
#[test]
fn sim_listing_behind_a_cache_says_the_age_of_a_kept_page() {
    let scenario = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        scenario.path(),
        "name = \"cached\"\n\
         [starts]\noff_peak_per_hour = 700.0\npeak_per_hour = 2200.0\npeak_hour = 22.0\nstart_hour = 21.5\n\
         [reads]\nfailed = 0.0\nempty = 0.0\ncache_ms = 600000.0\ncache_age = true\n",
    )
    .unwrap();
    let path = scenario.path().to_str().unwrap();
    let sim = SimListing::start(&["--scenario", path, "--time-scale", "20"]);
    let first = sim.get("/recent/rss?p=1");
    assert_eq!(first.status(), 200);
    assert!(first.headers().get("age").is_none());
    let body = first.bytes().unwrap();
    std::thread::sleep(Duration::from_millis(1_300));
    let again = sim.get("/recent/rss?p=1");
    assert_eq!(again.status(), 200);
    let age: u64 = again.headers()["age"].to_str().unwrap().parse().unwrap();
    assert!((1..=2).contains(&age), "Age: {age}");
    assert_eq!(again.bytes().unwrap(), body);
}

#[test]
fn sim_listing_rejects_an_unknown_scenario() {
    let out = ferret()
        .args([
            "sim-listing",
            "--listen",
            "127.0.0.1:0",
            "--scenario",
            "nope",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("no scenario \"nope\""), "{stderr}");
    assert!(out.stdout.is_empty());
}
