//! The daemon watching a live listing served by `ferret sim-listing`, time-compressed, with
//! its events file scored against the simulator's ground truth: no false Off Air, no slipped
//! one, no On Air missed within the tolerance, none reported twice — also across a `kill -9`.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use chrono::DateTime;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

use crate::support::eventually_blocking;
use crate::{ferret, Daemon};

/// The simulated listing runs this many times faster than real time: its 30-minute frame
/// lasts 30 s.
const TIME_SCALE: i64 = 60;
/// The daemon's grace and tolerance at that scale (5 min real).
const GRACE_MS: i64 = 5 * 60 * 1000 / TIME_SCALE;
const TOLERANCE_MS: i64 = 5 * 60 * 1000 / TIME_SCALE;
/// Time allowed for the first full scan and the detector to settle, not scored.
const WARM_UP_MS: i64 = 5_000;

/// A running `ferret sim-listing`, stopped with SIGTERM so that it writes its ground truth.
struct SimListing {
    child: Child,
    /// `http://127.0.0.1:PORT/recent/rss?p={page}`.
    url: String,
}

impl SimListing {
    fn start(scenario: &str, truth: &Path) -> SimListing {
        let mut child = ferret()
            .args([
                "sim-listing",
                "--listen",
                "127.0.0.1:0",
                "--scenario",
                scenario,
            ])
            .args(["--time-scale", &TIME_SCALE.to_string(), "--truth"])
            .arg(truth)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the binary starts");
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let url = first
            .split_whitespace()
            .find(|word| word.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {first:?}"))
            .to_string();
        SimListing { child, url }
    }

    fn stop(mut self) {
        kill(Pid::from_raw(self.child.id() as i32), Signal::SIGTERM).unwrap();
        let status = eventually_blocking(Duration::from_secs(10), "sim-listing to exit", || {
            self.child.try_wait().unwrap()
        });
        assert!(status.success(), "sim-listing exited with {status}");
    }
}

impl Drop for SimListing {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn listing_config(url: &str, events: &Path) -> String {
    format!(
        r#"
[[listings]]
name = "sim"
url = "{url}"
frame_secs = {frame}
budget_per_hour = {budget}
events_file = "{events}"
"#,
        frame = 1800 / TIME_SCALE,
        budget = 900 * TIME_SCALE,
        events = events.display(),
    )
}

fn millis(rfc3339: &Value) -> Option<i64> {
    Some(
        DateTime::parse_from_rfc3339(rfc3339.as_str()?)
            .ok()?
            .timestamp_millis(),
    )
}

fn json_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// What the events file says, scored against the truth. Panics with the first broken rule.
fn score(events: &[Value], truth: &[Value], scored_from: i64, stopped_at: i64) {
    let mut on_air: HashMap<&str, i64> = HashMap::new();
    let mut off_air: HashMap<&str, i64> = HashMap::new();
    for event in events {
        for field in [
            "event",
            "listing",
            "id",
            "title",
            "link",
            "started_at",
            "at",
        ] {
            assert!(!event[field].is_null(), "event without {field}: {event}");
        }
        assert_eq!(event["listing"], "sim");
        let id = event["id"].as_str().unwrap();
        let at = millis(&event["at"]).unwrap();
        let first = match event["event"].as_str().unwrap() {
            "on_air" => on_air.insert(id, at),
            "off_air" => off_air.insert(id, at),
            other => panic!("unknown event {other}"),
        };
        assert!(first.is_none(), "{id} reported twice: {event}");
    }
    let truth: HashMap<&str, &Value> = truth
        .iter()
        .map(|b| (b["id"].as_str().unwrap(), b))
        .collect();
    for (id, at) in &off_air {
        let ended = truth.get(id).and_then(|b| millis(&b["ended_at"]));
        assert!(
            ended.is_some_and(|ended| ended <= *at),
            "false Off Air: {id} reported at {at}, truth {:?}",
            truth.get(id)
        );
    }
    let (mut started, mut ended) = (0, 0);
    for (id, broadcast) in &truth {
        let start = millis(&broadcast["started_at"]).unwrap();
        let reserved = millis(&broadcast["reserved_at"]).unwrap();
        if start >= scored_from && start < stopped_at - 2_000 {
            started += 1;
            assert!(
                on_air.contains_key(id) || start - reserved > TOLERANCE_MS,
                "missed On Air: {broadcast}"
            );
        }
        let Some(end) = millis(&broadcast["ended_at"]) else {
            continue;
        };
        let at_frame = broadcast["ending"] != "early";
        if at_frame && on_air.contains_key(id) && end >= scored_from && end < stopped_at - GRACE_MS
        {
            ended += 1;
            let reported = off_air.get(id);
            assert!(
                reported.is_some_and(|at| *at <= end + GRACE_MS),
                "slipped Off Air: {broadcast}, reported {reported:?}"
            );
        }
    }
    assert!(started > 20, "too few starts scored ({started})");
    assert!(ended > 10, "too few frame ends scored ({ended})");
}

#[test]
fn the_daemon_reports_a_time_compressed_listing_without_a_wrong_event() {
    let dir = tempfile::tempdir().unwrap();
    let (truth, events) = (
        dir.path().join("truth.jsonl"),
        dir.path().join("events.jsonl"),
    );
    let sim = SimListing::start("quiet", &truth);
    let mut daemon = Daemon::start_with(false, "", "", &listing_config(&sim.url, &events));
    let started = now_ms();

    let on_air = eventually_blocking(Duration::from_secs(10), "an on-air set", || {
        let items: Vec<Value> = daemon.get("/api/listings/sim/onair").json().ok()?;
        (items.len() > 18).then_some(items)
    });
    assert!(on_air
        .iter()
        .all(|item| item["id"].is_string() && item["started_at"].is_string()));
    assert_eq!(daemon.get("/api/listings/nope/onair").status(), 404);

    // Server-sent events: the next event arrives as `event:` and `data:` lines.
    let stream = daemon.get("/api/events");
    assert_eq!(
        stream.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let event = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("an event line");
    assert!(
        event == "event: on_air" || event == "event: off_air",
        "{event}"
    );
    let data = rx
        .recv_timeout(Duration::from_secs(1))
        .expect("its data line");
    let data: Value = serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap();
    assert_eq!(data["listing"], "sim");
    drop(rx);

    // Two frames and a half of the listing's time.
    std::thread::sleep(Duration::from_secs(75));
    let metrics = daemon.get("/metrics").text().unwrap();
    assert!(metrics.contains("ferret_listing_events_total{listing=\"sim\",event=\"off_air\"}"));
    daemon.signal(Signal::SIGTERM);
    assert!(daemon.wait_exit(Duration::from_secs(10)).success());
    let stopped = now_ms();
    sim.stop();

    score(
        &json_lines(&events),
        &json_lines(&truth),
        started + WARM_UP_MS,
        stopped,
    );
}

#[test]
fn a_kill_9_neither_repeats_nor_loses_an_event() {
    let dir = tempfile::tempdir().unwrap();
    let (truth, events) = (
        dir.path().join("truth.jsonl"),
        dir.path().join("events.jsonl"),
    );
    let sim = SimListing::start("quiet", &truth);
    let config = listing_config(&sim.url, &events);
    let mut first = Daemon::start_with(false, "", "", &config);
    first.wait_for_log(|v| v["fields"]["message"] == "Listing resumed from the store.");
    let started = now_ms();
    std::thread::sleep(Duration::from_secs(20));
    first.signal(Signal::SIGKILL);
    first.wait_exit(Duration::from_secs(5));
    let before = json_lines(&events).len();
    assert!(before > 18, "the first run reported only {before} events");

    // The same store and events file.
    let mut second = Daemon::restart(first);
    let resumed =
        second.wait_for_log(|v| v["fields"]["message"] == "Listing resumed from the store.");
    assert!(
        resumed["fields"]["on_air"].as_u64().unwrap() > 18,
        "{resumed}"
    );
    std::thread::sleep(Duration::from_secs(40));
    second.signal(Signal::SIGTERM);
    assert!(second.wait_exit(Duration::from_secs(10)).success());
    let stopped = now_ms();
    sim.stop();

    // Nothing twice over both runs; every frame end after the restart reported in time, also
    // for broadcasts first seen by the killed run. (The kill itself may delay events by the
    // restart's few hundred milliseconds, well inside the grace.)
    let events = json_lines(&events);
    let ids: HashSet<&str> = events.iter().filter_map(|e| e["id"].as_str()).collect();
    assert!(ids.len() > 18);
    score(&events, &json_lines(&truth), started + WARM_UP_MS, stopped);
}
