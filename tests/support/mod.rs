//! Helpers shared by the actor and end-to-end tiers.
#![allow(dead_code)] // each tier uses its own subset

use std::future::Future;
use std::time::{Duration, Instant};

/// Polls `check` until it returns `Some`, or panics with `what` after `timeout`.
pub async fn eventually<T, F, Fut>(timeout: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        actix_rt::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The blocking twin of [`eventually`], for tests that drive a child process.
pub fn eventually_blocking<T>(
    timeout: Duration,
    what: &str,
    mut check: impl FnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A config for tests: random port, store in `dir`, fast liveness sweep, plus `extra` TOML
/// appended (later tables may not repeat earlier ones, so `extra` holds only new tables).
pub fn test_config(
    dir: &std::path::Path,
    fault_injection: bool,
    actors: &str,
    supervisor: &str,
) -> String {
    format!(
        r#"
[runtime]
arbiters = 2
shutdown_grace_secs = 5

[server]
port = 0

[storage]
path = "{store}"

[supervisor]
liveness_interval_ms = 50
{supervisor}

[actors]
{actors}

[debug]
fault_injection = {fault_injection}
"#,
        store = dir.join("ferret.db").display(),
    )
}
