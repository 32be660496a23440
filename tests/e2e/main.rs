//! End-to-end tier: the `ferret` binary as an operator runs it, on 127.0.0.1 with a
//! temporary config and store.

#[path = "../support/mod.rs"]
mod support;

// `ferret check-config`, `--version`, `--help`.
mod cli;
// `ferret run`: health, logs, fault injection, escalation, signals.
mod run;
// `ferret parse` against feedparser's test suite (tests/conformance/).
mod feed_conformance;
// `ferret run` with [[feeds]] on a misbehaving local server.
mod feeds;
// `ferret sim-listing`: the simulated listing over HTTP and its ground truth.
mod sim_listing;
// `ferret run` with [stories] on a local news feed.
mod stories;
// Discovery's intake: POST /api/feedback, the feedback commands, /api/pages by hittage.
mod discovery;
// The discovery loop: `ferret discover` resumed, the daemon's loop across kill -9.
mod discovery_crawl;
// `ferret run` with [[listings]] on `ferret sim-listing`, scored against its ground truth.
mod listing;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

use support::eventually_blocking;

/// The binary under test.
fn ferret() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ferret"))
}

/// A running `ferret run --log-format json`, killed on drop if still running.
pub struct Daemon {
    child: Child,
    /// Every stderr line so far.
    lines: Arc<Mutex<Vec<String>>>,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// Keeps the config and the store alive.
    pub dir: tempfile::TempDir,
}

impl Daemon {
    /// Starts the daemon with the config `support::test_config` builds from these parts.
    pub fn start(fault_injection: bool, actors: &str, supervisor: &str) -> Daemon {
        Daemon::start_with(fault_injection, actors, supervisor, "")
    }

    /// Like [`Daemon::start`], with `extra` tables (`[fetch]`, `[[feeds]]`) appended.
    pub fn start_with(
        fault_injection: bool,
        actors: &str,
        supervisor: &str,
        extra: &str,
    ) -> Daemon {
        let dir = tempfile::tempdir().unwrap();
        let text = support::test_config(dir.path(), fault_injection, actors, supervisor);
        Daemon::start_in(dir, &(text + extra))
    }

    /// Starts the daemon again on the stopped (or killed) one's config, store and files.
    pub fn restart(mut old: Daemon) -> Daemon {
        let _ = old.child.kill();
        let _ = old.child.wait();
        let dir = std::mem::replace(&mut old.dir, tempfile::tempdir().unwrap());
        let text = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
        Daemon::start_in(dir, &text)
    }

    fn start_in(dir: tempfile::TempDir, text: &str) -> Daemon {
        let config = dir.path().join("config.toml");
        std::fs::write(&config, text).unwrap();
        let mut child = ferret()
            .args(["run", "--log-format", "json", "--config"])
            .arg(&config)
            .env("RUST_LOG", "info,ferret_actors=debug")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().unwrap();
        let sink = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        let mut daemon = Daemon {
            child,
            lines,
            base: String::new(),
            dir,
        };
        let listening = daemon.wait_for_log(|v| v["fields"]["message"] == "HTTP server listening.");
        daemon.base = format!("http://{}", listening["fields"]["addr"].as_str().unwrap());
        daemon
    }

    /// The JSON log lines so far (non-JSON lines, such as the final error, are skipped).
    pub fn logs(&self) -> Vec<Value> {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// Every stderr line so far, JSON or not.
    pub fn stderr(&self) -> String {
        self.lines.lock().unwrap().join("\n")
    }

    /// Waits up to 10 s for a JSON log line matching `pred`.
    pub fn wait_for_log(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        eventually_blocking(Duration::from_secs(10), "a log line", || {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("ferret exited ({status}) early:\n{}", self.stderr());
            }
            self.logs().into_iter().find(|v| pred(v))
        })
    }

    pub fn get(&self, path: &str) -> reqwest::blocking::Response {
        reqwest::blocking::get(format!("{}{path}", self.base)).unwrap()
    }

    pub fn post(&self, path: &str) -> reqwest::blocking::Response {
        reqwest::blocking::Client::new()
            .post(format!("{}{path}", self.base))
            .send()
            .unwrap()
    }

    /// `/api/actors` as (role, instance) → restarts.
    pub fn restarts(&self, role: &str, instance: u64) -> Option<u64> {
        let rows: Vec<Value> = self.get("/api/actors").json().unwrap();
        rows.iter()
            .find(|r| r["role"] == role && r["instance"] == instance)
            .and_then(|r| r["restarts"].as_u64())
    }

    pub fn signal(&self, signal: Signal) {
        kill(Pid::from_raw(self.child.id() as i32), signal).unwrap();
    }

    /// Waits up to `timeout` for the process to exit.
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        eventually_blocking(timeout, "ferret to exit", || self.child.try_wait().unwrap())
    }

    pub fn store_path(&self) -> PathBuf {
        self.dir.path().join("ferret.db")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // A failing test shows what the daemon was doing.
        if std::thread::panicking() {
            eprintln!("the daemon's log:\n{}", self.stderr());
        }
    }
}
