use std::path::Path;
use std::time::Duration;

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

#[test]
fn fetch_and_feeds_are_read() {
    let text = r#"
[fetch]
user_agent = "probe/1.0"
timeout_ms = 250
connect_timeout_ms = 100
max_body_bytes = 4096
max_redirects = 2
max_retries = 1
retry_base_ms = 10
retry_max_ms = 20
max_retry_after_secs = 5
per_host_concurrency = 3

[[feeds]]
name = "news"
url = "http://127.0.0.1:8080/rss.xml"
interval_secs = 2

[[feeds]]
name = "live"
url = "https://live.example/listing?page=1"
lean = true
language = " pt-BR "
"#;
    let settings = Settings::from_toml(text, None).unwrap();
    let fetch = &settings.fetch;
    assert_eq!(fetch.user_agent, "probe/1.0");
    assert_eq!(fetch.timeout, Duration::from_millis(250));
    assert_eq!(fetch.connect_timeout, Duration::from_millis(100));
    assert_eq!(fetch.max_body_bytes, 4096);
    assert_eq!(fetch.max_redirects, 2);
    assert_eq!(fetch.retry.max_retries, 1);
    assert_eq!(fetch.retry.base_delay, Duration::from_millis(10));
    assert_eq!(fetch.retry.max_delay, Duration::from_millis(20));
    assert_eq!(fetch.retry.max_retry_after, Duration::from_secs(5));
    assert_eq!(fetch.per_host_concurrency, 3);
    assert_eq!(settings.feeds.len(), 2);
    assert_eq!(settings.feeds[0].name, "news");
    assert_eq!(settings.feeds[0].host(), "127.0.0.1");
    assert_eq!(settings.feeds[0].interval, Duration::from_secs(2));
    assert_eq!(settings.feeds[1].host(), "live.example");
    assert_eq!(settings.feeds[1].interval, Duration::from_secs(300));
    assert!(!settings.feeds[0].lean);
    assert!(settings.feeds[1].lean);
    assert_eq!(settings.feeds[0].language, None);
    assert_eq!(settings.feeds[1].language.as_deref(), Some("pt-BR"));
    assert!(
        settings.summary().ends_with("; 2 feeds; 0 listings"),
        "{}",
        settings.summary()
    );
}

#[test]
fn fetch_defaults_send_a_real_user_agent() {
    let settings = Settings::defaults();
    assert!(
        settings.fetch.user_agent.starts_with("ferret/0."),
        "{}",
        settings.fetch.user_agent
    );
    assert!(settings.fetch.user_agent.contains("(+http"));
    assert_eq!(settings.fetch.per_host_concurrency, 2);
    assert!(settings.fetch.max_body_bytes >= 1 << 20);
    assert!(settings.feeds.is_empty());
}

#[test]
fn fetch_and_feed_mistakes_are_reported_with_their_keys() {
    let text = r#"
[fetch]
timeout_ms = 0
user_agent = "ferret\u00e9"
retry_base_ms = 500
retry_max_ms = 100
per_host_concurrency = 0
colour = "red"

[[feeds]]
name = "a"
url = "http://example.com/a.xml"

[[feeds]]
name = "a"
url = "ftp://example.com/b.xml"
interval_secs = 0
language = "Deutsch, bitte"

[[feeds]]
url = "http://example.com/c.xml"
intervall = 5
"#;
    let err = Settings::from_toml(text, None).unwrap_err();
    let shown: Vec<String> = err.problems.iter().map(ToString::to_string).collect();
    let expected = [
        "fetch.colour: unknown field `colour`",
        "feeds[2].intervall: unknown field `intervall`",
        "fetch.user_agent: must be printable ASCII (it is sent as an HTTP header)",
        "fetch.retry_max_ms: must be ≥ fetch.retry_base_ms (500 ms)",
        "fetch.timeout_ms: must be ≥ 1 (got 0)",
        "fetch.per_host_concurrency: must be ≥ 1 (got 0)",
        "feeds[1].name: `a` is already the name of feeds[0]",
        "feeds[1].url: `ftp://example.com/b.xml` is not an http:// or https:// URL with a host",
        "feeds[1].interval_secs: must be ≥ 1 (got 0)",
        "feeds[1].language: must be a language tag such as \"de\" or \"pt-BR\" (got \"Deutsch, bitte\")",
        "feeds[2].name: missing: every [[feeds]] entry needs a name",
    ];
    for line in &expected {
        assert!(
            shown.iter().any(|s| s.starts_with(line)),
            "{line:?} not reported; got:\n{}",
            shown.join("\n")
        );
    }
    assert_eq!(shown.len(), expected.len(), "{}", shown.join("\n"));
}

#[test]
fn feeds_must_be_an_array_of_tables() {
    let err = Settings::from_toml("[feeds]\nname = \"x\"\n", None).unwrap_err();
    assert_eq!(err.problems.len(), 1);
    assert_eq!(err.problems[0].key, "feeds");
    assert!(err.problems[0].message.contains("[[feeds]]"), "{err}");
}

#[test]
fn shipped_fetch_table_states_the_defaults_and_no_feeds() {
    let text = std::fs::read_to_string(repo_root().join("config.toml")).unwrap();
    let settings = Settings::from_toml(&text, Some(repo_root())).unwrap();
    assert_eq!(settings.fetch, Settings::defaults().fetch);
    assert!(
        settings.feeds.is_empty(),
        "the shipped config must start offline"
    );
    assert!(text.contains("\n# [[feeds]]"), "a commented example feed");
}

/// A `[[listings]]` entry: the defaults are the real listing's, and a time-compressed one
/// (frame 90 s) gets every duration scaled with its frame and the budget with its pace.
#[test]
fn listings_scale_their_defaults_with_the_frame() {
    let text = r#"
[[listings]]
name = "real"
url = "http://live.example/recent/rss?p={page}"

[[listings]]
name = "fast"
url = "http://127.0.0.1:8090/recent/rss?p={page}"
strategy = "seed"
frame_secs = 90
total_element = ""
events_file = "events.jsonl"

[[listings]]
name = "fast-frugal"
url = "http://127.0.0.1:8090/recent/rss?p={page}"
frame_secs = 90
budget_per_hour = 3600
"#;
    let settings = Settings::from_toml(text, None).expect("valid");
    let real = &settings.listings[0];
    assert_eq!(real.strategy, ferret::listing::Strategy::Ferret);
    assert_eq!(real.params, ferret::listing::Params::default());
    assert_eq!(
        real.total_element,
        Some(("nicolive".to_string(), "total_count".to_string()))
    );
    assert_eq!(real.page_url(3), "http://live.example/recent/rss?p=3");
    let fast = &settings.listings[1];
    assert_eq!(fast.strategy, ferret::listing::Strategy::Seed);
    assert_eq!(
        fast.params,
        ferret::listing::Params::default().compressed(20)
    );
    // The read timeout scales too, but not under a second: a local read on a busy machine
    // may take a few hundred milliseconds however fast the listing runs.
    assert_eq!(real.params.read_timeout, 10_000);
    assert_eq!(fast.params.read_timeout, 1_000);
    assert_eq!(fast.total_element, None);
    assert_eq!(
        fast.events_file.as_deref(),
        Some(std::path::Path::new("events.jsonl"))
    );
    // A budget given is kept as given.
    let frugal = &settings.listings[2];
    assert_eq!(frugal.params.budget_per_hour, 3_600);
    assert_eq!(frugal.params.frame, 90_000);
}

/// Every problem of a `[[listings]]` entry is reported with its key path.
#[test]
fn bad_listings_report_every_problem() {
    let text = r#"
[[listings]]
name = "a"
url = "http://example.com/recent"
frame_secs = 0
sweep_share = 2.0
off_air_target_secs = -1
read_timeout_ms = 0
strategy = "psychic"

[[listings]]
name = "a"
"#;
    let err = Settings::from_toml(text, None).expect_err("invalid");
    let keys: Vec<&str> = err.problems.iter().map(|p| p.key.as_str()).collect();
    for key in [
        "listings[0].url",
        "listings[0].frame_secs",
        "listings[0].sweep_share",
        "listings[0].off_air_target_secs",
        "listings[0].read_timeout_ms",
        "listings[0].strategy",
        "listings[1].name",
        "listings[1].url",
    ] {
        assert!(keys.contains(&key), "{key} not in {keys:?}");
    }
}

/// `[stories]` names feeds that exist, and its numbers are checked.
#[test]
fn stories_name_existing_feeds() {
    let text = r#"
[[feeds]]
name = "news"
url = "http://example.com/news.xml"

[stories]
feeds = ["news", "nope"]
event_threshold = 1.5
half_life_hours = 2
big_story = 0
young_story = 3
window_min_items = -1
young_threshold = 0.2
story_idf_share = 1.5
demonyms = false
"#;
    let err = Settings::from_toml(text, None).expect_err("invalid");
    let keys: Vec<&str> = err.problems.iter().map(|p| p.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "stories.feeds[1]",
            "stories.big_story",
            "stories.window_min_items",
            "stories.event_threshold",
            "stories.story_idf_share"
        ]
    );
    let valid = text
        .replace(", \"nope\"", "")
        .replace("1.5", "0.4")
        .replace("big_story = 0", "big_story = 20")
        .replace("window_min_items = -1", "window_min_items = 30");
    let ok = Settings::from_toml(&valid, None).expect("valid");
    assert_eq!(ok.stories.feeds, ["news"]);
    assert_eq!(ok.stories.cluster.event_threshold, 0.4);
    assert_eq!(ok.stories.cluster.big_story, 20);
    assert_eq!(ok.stories.cluster.young_story, 3);
    assert_eq!(ok.stories.cluster.window_min_items, 30);
    assert_eq!(ok.stories.cluster.young_threshold, 0.2);
    assert_eq!(ok.stories.cluster.story_idf_share, 0.4);
    assert!(!ok.stories.cluster.demonyms);
    assert_eq!(ok.stories.rank.half_life, 2 * 3_600_000);
    // The shipped [stories] states the defaults.
    let shipped = std::fs::read_to_string(repo_root().join("config.toml")).unwrap();
    let shipped = Settings::from_toml(&shipped, Some(repo_root())).unwrap();
    assert_eq!(
        shipped.stories.cluster,
        Settings::defaults().stories.cluster
    );
}

#[test]
fn discovery_keys_are_read_and_checked() {
    // The shipped [discovery] states the defaults.
    let text = std::fs::read_to_string(repo_root().join("config.toml")).unwrap();
    let shipped = Settings::from_toml(&text, Some(repo_root())).unwrap();
    assert_eq!(shipped.discovery, Settings::defaults().discovery);

    let settings = Settings::from_toml(
        "[discovery]\ngeneralize_interval_secs = 5\nhalf_life_days = 0.5\ndamping = 0.25\nlighthouse_window = 4\nlighthouse_min_hits = 4\n",
        None,
    )
    .unwrap();
    assert_eq!(
        settings.discovery.generalize_interval,
        Duration::from_secs(5)
    );
    assert_eq!(settings.discovery.hittage.half_life_ms, 43_200_000);
    assert_eq!(settings.discovery.hittage.damping, 0.25);
    assert_eq!(settings.discovery.hittage.lighthouse_min_hits, 4);

    let err = Settings::from_toml(
        "[discovery]\ndamping = 1.0\nlike_weight = 0\nlighthouse_window = 2\nlighthouse_min_hits = 3\nbogus = 1\n",
        None,
    )
    .unwrap_err();
    let keys: Vec<&str> = err.problems.iter().map(|p| p.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "discovery.bogus",
            "discovery.like_weight",
            "discovery.damping",
            "discovery.lighthouse_min_hits"
        ],
        "{err}"
    );
}
