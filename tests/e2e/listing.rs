//! The daemon watching a live listing served by `ferret sim-listing`, time-compressed, with
//! its events file scored against the simulator's ground truth: no false Off Air, no slipped
//! one, no On Air missed within the tolerance, none reported twice — also across a `kill -9`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use ferret::listing::sim::{self, Window};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

use crate::support::eventually_blocking;
use crate::{ferret, Daemon};

/// The simulated listing runs this many times faster than real time: its 30-minute frame
/// lasts 30 s.
const TIME_SCALE: i64 = 60;
/// The listing's frame at that scale.
const FRAME_MS: i64 = 30 * 60 * 1000 / TIME_SCALE;
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

fn json_lines(path: &Path) -> Vec<Value> {
    read(path)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// The events file scored against the truth by the core's scorer (the one behind `ferret
/// score-listing`): every event complete, and no rule broken.
fn score(events: &Path, truth: &Path, scored_from: i64, stopped_at: i64) {
    for event in json_lines(events) {
        for field in ["title", "link", "started_at"] {
            assert!(!event[field].is_null(), "event without {field}: {event}");
        }
        assert_eq!(event["listing"], "sim");
    }
    let events = sim::read_events(&read(events), Some("sim")).unwrap();
    let truth = sim::read_truth(&read(truth)).unwrap();
    let window = Window {
        from: scored_from,
        until: stopped_at,
        ran_on: 0,
        frame: FRAME_MS,
        grace: GRACE_MS,
        tolerance: TOLERANCE_MS,
    };
    let report = sim::score("daemon", &truth, &events, &window);
    assert_eq!(report.false_off_air, 0, "false Off Air: {report:?}");
    assert_eq!(report.slipped, 0, "slipped Off Air: {report:?}");
    assert_eq!(
        report.on_air_missed, report.on_air_missed_tolerated,
        "On Air missed within the tolerance: {report:?}"
    );
    assert_eq!(report.on_air_duplicates, 0, "On Air twice: {report:?}");
    assert_eq!(report.off_air_duplicates, 0, "Off Air twice: {report:?}");
    assert!(report.on_air > 20, "too few starts scored: {report:?}");
    assert!(
        report.frame_ends > 10,
        "too few frame ends scored: {report:?}"
    );
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
    assert!(metrics.contains("ferret_listing_sweep_share{listing=\"sim\"}"));
    // The steered share stays within its bounds around the configured 0.27.
    let listings: Value = daemon.get("/api/listings").json().unwrap();
    let share = listings["sim"]["sweep_share"]
        .as_f64()
        .expect("a sweep share");
    assert!((0.2..=0.35).contains(&share), "sweep share {share}");
    daemon.signal(Signal::SIGTERM);
    assert!(daemon.wait_exit(Duration::from_secs(10)).success());
    let stopped = now_ms();
    sim.stop();

    score(&events, &truth, started + WARM_UP_MS, stopped);
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
    score(&events, &truth, started + WARM_UP_MS, stopped);
}

/// A listing that misbehaves in ways the real one did not: it holds some reads without an
/// answer (each for ten minutes of its time, ten seconds at ×60), gives no total, and answers
/// a page past the end of its list with a 404. The daemon gives up on the hung reads at its
/// read timeout and takes the 404 for an empty page, and keeps every rule. Before, it waited
/// for the fetch timeout or the listing's late 503 (56 frame ends slipped in a minute), and
/// took the 404 for a failed read, so the end of the list was never proven (on the bench,
/// thousands of frame ends slipped).
#[test]
fn the_daemon_keeps_the_rules_on_a_misbehaving_listing() {
    let daemon = a_minute_of_quiet_with(
        "misbehaving",
        5,
        r#"
hung = 0.005
total = false
past_end = "not_found"
"#,
    );
    let given_up = daemon
        .logs()
        .into_iter()
        .filter(|v| {
            v["fields"]["cause"]
                .as_str()
                .is_some_and(|cause| cause.contains("read timeout"))
        })
        .count();
    assert!(given_up > 0, "no read was given up on");
}

/// A listing whose every read takes 3–6 s of its time (50–100 ms at ×60), so that one reader
/// spending the budget would never be idle: the detector goes to two reads at once, the head
/// sweep beside the other reads, and keeps every rule.
#[test]
fn the_daemon_reads_a_slow_listing_two_pages_at_a_time() {
    let daemon = a_minute_of_quiet_with(
        "slow",
        7,
        r#"
latency_min_ms = 3000
latency_max_ms = 6000
"#,
    );
    let two_at_once = daemon
        .logs()
        .into_iter()
        .any(|v| v["fields"]["reads_at_once"].as_u64() == Some(2));
    assert!(two_at_once, "the detector never read two pages at once");
}

/// The daemon watching a minute of `quiet`'s starts (world `seed`) served by `sim-listing`
/// with the `[reads]` section given, its events scored against the truth ([`score`]).
/// Returns the stopped daemon, for its logs.
fn a_minute_of_quiet_with(name: &str, seed: u64, reads: &str) -> Daemon {
    let dir = tempfile::tempdir().unwrap();
    let (scenario, truth, events) = (
        dir.path().join(format!("{name}.toml")),
        dir.path().join("truth.jsonl"),
        dir.path().join("events.jsonl"),
    );
    let toml = format!(
        r#"
name = "quiet-{name}"
seed = {seed}

[starts]
off_peak_per_hour = 700
peak_per_hour = 2200
peak_hour = 22
start_hour = 8

[reads]
{reads}"#
    );
    std::fs::write(&scenario, toml).unwrap();
    let sim = SimListing::start(scenario.to_str().unwrap(), &truth);
    let mut daemon = Daemon::start_with(false, "", "", &listing_config(&sim.url, &events));
    let started = now_ms();
    std::thread::sleep(Duration::from_secs(60));
    daemon.signal(Signal::SIGTERM);
    assert!(daemon.wait_exit(Duration::from_secs(10)).success());
    let stopped = now_ms();
    sim.stop();
    score(&events, &truth, started + WARM_UP_MS, stopped);
    daemon
}

/// The daemon watching the one listing at `url` (its pages `{page}`), its events file in
/// `dir`, and that file.
fn daemon_watching(url: &str, dir: &Path) -> (Daemon, PathBuf) {
    let events = dir.join("events.jsonl");
    let daemon = Daemon::start_with(false, "", "", &listing_config(url, &events));
    (daemon, events)
}

/// Whether a JSON log line's message contains `text`.
fn says(text: &'static str) -> impl Fn(&Value) -> bool + Copy {
    move |v| {
        v["fields"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(text))
    }
}

/// A listing page of two broadcasts reserved a minute ago, the whole list.
fn two_on_air() -> String {
    two_reserved(chrono::Utc::now() - chrono::Duration::minutes(1))
}

/// A listing page of two broadcasts reserved one and two seconds after `reserved`, the whole
/// list.
fn two_reserved(reserved: chrono::DateTime<chrono::Utc>) -> String {
    let item = |n: i64| {
        let date = (reserved + chrono::Duration::seconds(n)).to_rfc2822();
        format!(
            "<item><title>{n}</title><link>http://example.com/lv{n}</link><guid>lv{n}</guid>\
             <pubDate>{date}</pubDate></item>"
        )
    };
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:nicolive="http://live.nicovideo.jp/">
<channel><title>Live</title><nicolive:total_count>2</nicolive:total_count>{}{}</channel></rss>"#,
        item(2),
        item(1)
    )
}

/// A listing whose `pubDate`s lie nine hours ahead of this machine's clock (its local time
/// written as UTC, say) is warned of, with how far ahead, and once only: over ten reads, one
/// warning.
#[test]
fn a_pub_date_ahead_of_the_clock_is_warned_of_once() {
    use crate::support::http::{Response, TestServer};
    let page = two_reserved(chrono::Utc::now() + chrono::Duration::hours(9));
    let server = TestServer::start(move |_, _| Response::ok("application/rss+xml", page.clone()));
    let dir = tempfile::tempdir().unwrap();
    let (mut daemon, _) = daemon_watching(&server.url("/recent/rss?p={page}"), dir.path());
    let is_warning = says("ahead of this machine's clock");
    let warned = daemon.wait_for_log(is_warning);
    let ahead = warned["fields"]["ahead_secs"].as_i64().unwrap();
    assert!((9 * 3600 - 60..=9 * 3600 + 60).contains(&ahead), "{warned}");
    eventually_blocking(Duration::from_secs(10), "ten reads", || {
        (server.requests().len() >= 10).then_some(())
    });
    daemon.signal(Signal::SIGTERM);
    assert!(daemon.wait_exit(Duration::from_secs(10)).success());
    assert_eq!(daemon.logs().iter().filter(|v| is_warning(v)).count(), 1);
}

/// A page 1 that comes back the same read after read is what a cache gives: the detector
/// says once it takes the listing for one, with how long it takes it to keep a page, and says
/// it again only as that grows by a quarter.
#[test]
fn a_listing_that_answers_as_a_cache_is_logged() {
    use crate::support::http::{Response, TestServer};
    let page = two_on_air();
    let server = TestServer::start(move |_, _| Response::ok("application/rss+xml", page.clone()));
    let dir = tempfile::tempdir().unwrap();
    let (mut daemon, _) = daemon_watching(&server.url("/recent/rss?p={page}"), dir.path());
    let is_cache = says("answers as from a cache");
    let logged = daemon.wait_for_log(is_cache);
    assert!(
        logged["fields"]["page_one_repeats"].as_u64() >= Some(4),
        "{logged}"
    );
    assert!(logged["fields"]["kept_ms"].as_i64() > Some(0), "{logged}");
    daemon.signal(Signal::SIGTERM);
    assert!(daemon.wait_exit(Duration::from_secs(10)).success());
    let kept: Vec<i64> = (daemon.logs().iter())
        .filter(|v| is_cache(v))
        .map(|v| v["fields"]["kept_ms"].as_i64().unwrap())
        .collect();
    assert!(
        kept.windows(2).all(|pair| pair[1] >= pair[0] + pair[0] / 4),
        "{kept:?}"
    );
}

/// A page cut off in transit (or by a server that stopped writing) is a failed read: the
/// parser keeps what it read, so the broadcasts past the cut would read as gone, and the last
/// value read may be cut short. Two broadcasts whose items give the `pubDate` before the
/// `guid`, served whole three times and then cut inside the second's `guid`, over a frame
/// boundary and its grace: the two are reported On Air once and nothing else, and the cut
/// reads are warned of. Taken as a page, the cut one reported a broadcast `lv` On Air.
#[test]
fn a_page_cut_off_is_a_failed_read() {
    use crate::support::http::{Response, TestServer};
    let reserved = chrono::Utc::now() - chrono::Duration::seconds(80);
    let item = |n: i64| {
        let date = (reserved + chrono::Duration::seconds(n)).to_rfc2822();
        format!("<item><title>{n}</title><pubDate>{date}</pubDate><guid>lv{n}</guid></item>")
    };
    let page = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:nicolive="http://live.nicovideo.jp/">
<channel><title>Live</title><nicolive:total_count>2</nicolive:total_count>{}{}</channel></rss>"#,
        item(2),
        item(1)
    );
    let cut = page[..page.rfind("<guid>lv").unwrap() + "<guid>lv".len()].to_string();
    let server = TestServer::start(move |request, n| {
        let body = if request.path.ends_with("p=1") && n >= 3 {
            cut.clone()
        } else {
            page.clone()
        };
        Response::ok("application/rss+xml", body)
    });
    let dir = tempfile::tempdir().unwrap();
    let (mut daemon, events) = daemon_watching(&server.url("/recent/rss?p={page}"), dir.path());
    eventually_blocking(Duration::from_secs(10), "both broadcasts On Air", || {
        (json_lines(&events).len() >= 2).then_some(())
    });
    // Past the frames' next boundary (30-second frames, 90 s after the reservation) and the
    // grace (5 s).
    std::thread::sleep(Duration::from_secs(30));
    daemon.signal(Signal::SIGTERM);
    assert!(daemon.wait_exit(Duration::from_secs(10)).success());
    let events: Vec<_> = json_lines(&events)
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["event"].as_str().unwrap(),
                e["id"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(events, ["on_air lv2", "on_air lv1"]);
    let is_cut = |v: &Value| {
        v["fields"]["cause"]
            .as_str()
            .is_some_and(|cause| cause.contains("cut off"))
    };
    assert!(daemon.logs().iter().filter(|v| is_cut(v)).count() >= 3);
}

/// How long after a first read answered `429 Too Many Requests`, with `retry_after` as its
/// `Retry-After`, the daemon read the listing again (its budget, 15 reads a second, would
/// have read it again at once), once it has reported the page's two broadcasts; and the
/// wait the warning said the listing asked for.
fn wait_after_429(retry_after: &'static str) -> (Duration, Value) {
    use crate::support::http::{Response, TestServer};
    let page = two_on_air();
    let server = TestServer::start(move |_, n| match n {
        0 => Response::status(429).header("Retry-After", retry_after),
        _ => Response::ok("application/rss+xml", page.clone()),
    });
    let dir = tempfile::tempdir().unwrap();
    let (mut daemon, events) = daemon_watching(&server.url("/recent/rss?p={page}"), dir.path());
    eventually_blocking(Duration::from_secs(10), "both broadcasts On Air", || {
        (json_lines(&events).len() >= 2).then_some(())
    });
    let reads = server.requests();
    let warned = daemon.wait_for_log(says("429 Too Many Requests"));
    daemon.signal(Signal::SIGTERM);
    assert!(daemon.wait_exit(Duration::from_secs(10)).success());
    (
        reads[1].at - reads[0].at,
        warned["fields"]["asked_secs"].clone(),
    )
}

/// A listing that asks to wait two seconds is not read before (without the wait, 17 ms
/// after).
#[test]
fn a_listing_that_asks_to_wait_is_not_read_before_its_retry_after() {
    let (waited, asked) = wait_after_429("2");
    assert!(
        waited >= Duration::from_millis(1_900),
        "read again {waited:?} after"
    );
    assert_eq!(asked, 2);
}

/// A listing that asks for an hour waits half the grace (2.5 s at ×60), so that its frame
/// ends are still read within the grace.
#[test]
fn a_listing_that_asks_for_an_hour_waits_half_the_grace() {
    let (waited, asked) = wait_after_429("3600");
    let half_grace = Duration::from_millis(GRACE_MS as u64 / 2);
    assert!(
        waited >= half_grace - Duration::from_millis(100) && waited < 2 * half_grace,
        "read again {waited:?} after"
    );
    assert_eq!(asked, 3600);
}

/// A restarted daemon counts the reads it made before against its budget: with the store
/// holding an hour's worth (60 reads, a budget of 3,600 an hour over the listing's 60-second
/// hour), it reads nothing until the oldest of them is an hour old, then reads on. Before,
/// a restarted detector read at once, its buckets full, on top of them. The store also holds
/// what the detector learnt beyond its book, as of its latest read, and the restarted one
/// resumes with it.
#[test]
fn a_restarted_daemon_counts_the_reads_before_against_its_budget() {
    use std::time::Instant;

    use crate::support::http::{Response, TestServer};
    use ferret_actors::storage::Store;

    let page = two_on_air();
    let server = TestServer::start(move |_, _| Response::ok("application/rss+xml", page.clone()));
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events.jsonl");
    let config = format!(
        r#"
[[listings]]
name = "sim"
url = "{url}"
frame_secs = 30
budget_per_hour = 3600
events_file = "{events}"
"#,
        url = server.url("/recent/rss?p={page}"),
        events = events.display(),
    );
    let mut daemon = Daemon::start_with(false, "", "", &config);
    eventually_blocking(Duration::from_secs(10), "both broadcasts On Air", || {
        (json_lines(&events).len() >= 2).then_some(())
    });
    daemon.signal(Signal::SIGTERM);
    assert!(daemon.wait_exit(Duration::from_secs(10)).success());

    // The listing's hour (two frames) filled: 60 reads, the oldest 56 s ago (the wall clock
    // and the monotonic one read together), so that the next may start in 4 s.
    let (hour_ms, allowed) = (60_000, 60);
    let (now_ms, now) = (now_ms(), Instant::now());
    {
        let mut store = Store::open(&daemon.store_path()).unwrap();
        let state = store.load_listing("sim").unwrap();
        let (memory, ties) = (state.memory, state.ties);
        assert!(
            memory.is_some_and(|memory| memory.sweep_empty_at.is_some()),
            "the detector's memory was recorded: {memory:?}"
        );
        for i in 0..allowed {
            let at = now_ms - 56_000 + i;
            store
                .record_listing_read("sim", at, &[], memory, ties, 0)
                .unwrap();
        }
        let reads = store.load_listing("sim").unwrap().reads;
        assert!(
            reads.len() > allowed as usize,
            "the first run's reads were recorded"
        );
    }
    let free = now + Duration::from_millis((hour_ms - 56_000) as u64);
    let before = server.requests().len();
    let daemon = Daemon::restart(daemon);
    let first = eventually_blocking(Duration::from_secs(20), "a read after the restart", || {
        server.requests().get(before).map(|request| request.at)
    });
    assert!(
        first >= free,
        "read {:?} before the hour's budget allowed",
        free - first
    );
    drop(daemon);
}
