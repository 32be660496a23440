use std::collections::BTreeMap;

use ferret::config::Settings;
use ferret_actors::daemon::Daemon;
use serde_json::Value;

use crate::support::test_config;

#[actix::test]
async fn configured_counts_run_that_many_instances() {
    let dir = tempfile::tempdir().unwrap();
    let text = test_config(dir.path(), false, "ferret = 5\nfilter = 3", "");
    let settings = Settings::from_toml(&text, None).unwrap();
    let daemon = Daemon::start(&settings).await.unwrap();
    let base = format!("http://{}", daemon.addr());

    let rows: Vec<Value> = reqwest::get(format!("{base}/api/actors"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut per_role = BTreeMap::new();
    for row in &rows {
        *per_role
            .entry(row["role"].as_str().unwrap().to_string())
            .or_insert(0) += 1;
        for key in ["role", "instance", "restarts", "handled"] {
            assert!(row.get(key).is_some(), "{key} missing in {row}");
        }
    }
    assert_eq!(per_role["ferret"], 5);
    assert_eq!(per_role["filter"], 3);
    assert_eq!(per_role["page_db"], 1);
    assert_eq!(per_role.len(), 11, "{per_role:?}");
    assert_eq!(rows.len(), settings.actors.total());

    let metrics = reqwest::get(format!("{base}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("ferret_instances{role=\"ferret\"} 5"),
        "{metrics}"
    );
    assert!(
        metrics.contains("ferret_restarts_total{role=\"ferret\"} 0"),
        "{metrics}"
    );
    assert!(
        metrics.contains("ferret_mailbox_backlog{role=\"page_db\"}"),
        "{metrics}"
    );

    let client = reqwest::Client::new();
    let pinged: Value = client
        .post(format!("{base}/api/actors/ferret/4/ping"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(pinged["role"], "ferret");
    assert_eq!(pinged["instance"], 4);
    assert_eq!(pinged["handled"], 1);
    let missing = client
        .post(format!("{base}/api/actors/ferret/5/ping"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    // Fault injection is off: the route does not exist.
    let panic = client
        .post(format!("{base}/api/actors/ferret/0/panic"))
        .send()
        .await
        .unwrap();
    assert_eq!(panic.status(), 404);

    daemon.shutdown().await;
}
