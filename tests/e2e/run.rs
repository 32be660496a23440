use std::time::{Duration, Instant};

use ferret_actors::storage::Store;
use nix::sys::signal::Signal;
use serde_json::Value;

use crate::support::eventually_blocking;
use crate::Daemon;

/// The span fields every handled message's log line carries.
const SPAN_FIELDS: [&str; 5] = ["role", "instance", "message", "message_id", "parent_id"];

#[test]
fn starts_serves_and_exits_zero_on_sigterm() {
    let mut daemon = Daemon::start(false, "ferret = 3", "");
    let health: Value = daemon.get("/healthz").json().unwrap();
    assert_eq!(health["status"], "ok");
    let rows: Vec<Value> = daemon.get("/api/actors").json().unwrap();
    assert_eq!(rows.iter().filter(|r| r["role"] == "ferret").count(), 3);

    // The run was recorded: a message to PageDb, handled in a span with every field.
    // Other roles (the Generalizer, the FerretAdvisor) may reach PageDb first.
    let handled = daemon.wait_for_log(|v| {
        v["fields"]["message"] == "Message handled."
            && v["span"]["role"] == "page_db"
            && v["span"]["message"] == "RecordRunStarted"
    });
    for field in SPAN_FIELDS {
        assert!(
            handled["span"].get(field).is_some(),
            "{field} missing: {handled}"
        );
    }

    daemon.signal(Signal::SIGTERM);
    let status = daemon.wait_exit(Duration::from_secs(15));
    assert_eq!(status.code(), Some(0), "{}", daemon.stderr());
    let logs = daemon.logs();
    let said = |text: &str| logs.iter().any(|v| v["fields"]["message"] == text);
    assert!(said("Mailboxes drained."), "{}", daemon.stderr());
    assert!(said("Store flushed."), "{}", daemon.stderr());

    // The clean end is in the store.
    let store = Store::open(&daemon.store_path()).unwrap();
    assert_eq!(store.count_runs().unwrap(), (1, 1));
}

#[test]
fn sigint_also_shuts_down_cleanly() {
    let mut daemon = Daemon::start(false, "", "");
    daemon.signal(Signal::SIGINT);
    let status = daemon.wait_exit(Duration::from_secs(15));
    assert_eq!(status.code(), Some(0), "{}", daemon.stderr());
}

#[test]
fn fault_injected_panic_is_restarted_within_a_second_and_the_instance_keeps_working() {
    let mut daemon = Daemon::start(true, "ferret = 2", "");
    let armed = daemon.post("/api/actors/ferret/1/panic");
    assert_eq!(armed.status(), 202);
    let injected = Instant::now();
    eventually_blocking(Duration::from_secs(1), "restarts: 1", || {
        (daemon.restarts("ferret", 1) == Some(1)).then_some(())
    });
    assert!(injected.elapsed() < Duration::from_secs(1));
    assert_eq!(daemon.restarts("ferret", 0), Some(0));

    let pong: Value = daemon.post("/api/actors/ferret/1/ping").json().unwrap();
    assert_eq!(pong["role"], "ferret");
    assert_eq!(pong["restarts"], 1);
    assert_eq!(pong["handled"], 1);

    // The panic is logged inside the span of the message that caused it, and the restart
    // names that message as its cause.
    let panicked = daemon.wait_for_log(|v| {
        v["fields"]["message"] == "Handler panicked; stopping the instance for a restart."
    });
    assert_eq!(panicked["span"]["role"], "ferret");
    assert_eq!(panicked["span"]["instance"], 1);
    assert_eq!(panicked["span"]["message"], "Ping");
    let restarted = daemon.wait_for_log(|v| v["fields"]["message"] == "Restarted instance.");
    assert_eq!(
        restarted["span"]["parent_id"],
        panicked["span"]["message_id"]
    );

    let metrics = daemon.get("/metrics").text().unwrap();
    assert!(
        metrics.contains("ferret_restarts_total{role=\"ferret\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("ferret_handler_errors_total{role=\"ferret\"} 1"),
        "{metrics}"
    );

    daemon.signal(Signal::SIGTERM);
    assert_eq!(daemon.wait_exit(Duration::from_secs(15)).code(), Some(0));
    // The restart was recorded for post-mortems.
    let store = Store::open(&daemon.store_path()).unwrap();
    assert_eq!(store.count_restarts().unwrap(), 1);
}

#[test]
fn exceeding_the_restart_intensity_exits_non_zero_naming_the_role() {
    let mut daemon = Daemon::start(true, "", "max_restarts = 1\nperiod_secs = 60");
    assert_eq!(daemon.post("/api/actors/filter/0/panic").status(), 202);
    eventually_blocking(Duration::from_secs(2), "the first restart", || {
        (daemon.restarts("filter", 0) == Some(1)).then_some(())
    });
    assert_eq!(daemon.post("/api/actors/filter/0/panic").status(), 202);
    let status = daemon.wait_exit(Duration::from_secs(15));
    assert_ne!(status.code(), Some(0));
    assert!(status.code().is_some(), "exited by a signal: {status}");
    let stderr = daemon.stderr();
    let last = stderr.lines().last().unwrap_or("");
    assert!(last.starts_with("ferret: stopped: role filter"), "{stderr}");
    assert!(last.contains("fault injected"), "{last}");
}
