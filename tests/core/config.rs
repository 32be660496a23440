use std::path::Path;

use ferret::config::{LogFormat, Settings};
use ferret::supervision::RestartPolicy;
use ferret::Role;

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn shipped_config_parses() {
    let path = repo_root().join("config.toml");
    let text = std::fs::read_to_string(&path).expect("config.toml is shipped at the top level");
    let settings = Settings::from_toml(&text, Some(repo_root()))
        .unwrap_or_else(|err| panic!("the shipped config.toml is invalid: {err}"));
    // It must run on a fresh machine as shipped: loopback, no fault injection, the embedded
    // store next to the config.
    assert!(settings.server.bind.is_loopback());
    assert!(!settings.debug.fault_injection);
    assert_eq!(settings.storage.path, repo_root().join("data/ferret.db"));
    assert_eq!(settings.log.format, LogFormat::Text);
    for role in Role::ALL {
        assert!(settings.actors.count(role) >= 1, "{role}");
    }
}

#[test]
fn shipped_config_names_every_role() {
    let text = std::fs::read_to_string(repo_root().join("config.toml")).unwrap();
    for role in Role::ALL {
        let key = format!("\n{} =", role.name());
        assert!(text.contains(&key), "[actors] in config.toml lacks {role}");
    }
}

#[test]
fn every_mistake_is_reported_with_its_key() {
    let text = r#"
[runtime]
arbiters = -1
bogus = 1
mailbox_capacity = "big"

[server]
port = 70000
bind = "localhost"

[actors]
ferret = 0
ferrett = 2
page_db = 3

[supervisor]
period_secs = 0

[supervisor.policy]
filter = "sometimes"

[extra]
"#;
    let err = Settings::from_toml(text, None).unwrap_err();
    let keys: Vec<&str> = err.problems.iter().map(|p| p.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "extra",
            "runtime.bogus",
            "runtime.mailbox_capacity",
            "supervisor.policy.filter",
            "runtime.arbiters",
            "server.bind",
            "server.port",
            "supervisor.period_secs",
            "actors.ferret",
            "actors.ferrett",
            "actors.page_db",
        ],
        "{err}"
    );
    let shown = err.to_string();
    assert!(shown.starts_with("11 problems in the config"), "{shown}");
    assert!(
        shown.contains("actors.ferret: must be ≥ 1 (got 0)"),
        "{shown}"
    );
    assert!(
        shown.contains("actors.page_db: must be 1 (got 3)"),
        "{shown}"
    );
    assert!(shown.contains("unknown role `ferrett`"), "{shown}");
}

#[test]
fn a_table_that_is_not_a_table_is_reported() {
    let err = Settings::from_toml("actors = 3\n", None).unwrap_err();
    assert_eq!(err.problems.len(), 1);
    assert_eq!(err.problems[0].key, "actors");
    assert!(err.problems[0].message.contains("must be a table"));
}

#[test]
fn policies_and_counts_are_applied() {
    let text = "[actors]\nferret = 5\n[supervisor.policy]\nferret = \"transient\"\n";
    let settings = Settings::from_toml(text, None).unwrap();
    assert_eq!(settings.actors.count(Role::Ferret), 5);
    assert_eq!(
        settings.actors.count(Role::Filter),
        Role::Filter.default_count()
    );
    assert_eq!(
        settings.supervisor.policy(Role::Ferret),
        RestartPolicy::Transient
    );
    assert_eq!(
        settings.supervisor.policy(Role::Filter),
        RestartPolicy::Permanent
    );
}

#[test]
fn role_names_round_trip_and_are_unique() {
    let mut names: Vec<&str> = Role::ALL.iter().map(|r| r.name()).collect();
    for role in Role::ALL {
        assert_eq!(Role::from_name(role.name()), Some(role));
    }
    names.sort();
    names.dedup();
    assert_eq!(names.len(), Role::ALL.len());
    assert_eq!(Role::from_name("nope"), None);
}
