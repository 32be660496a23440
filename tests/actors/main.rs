//! Actor tier: the runtime with real actors (test roles or the daemon's), in-process.

#[path = "../support/mod.rs"]
mod support;

// The Clusterer with a real PageDb and FeedFetcher: subscribing to its feeds.
mod clusterer;
// The crawler's page client and the breadth-first crawler against local servers.
mod crawl;
// The discovery loop's Ferret and Mapmaker pools with a real PageDb and a local site.
mod discovery_pools;
// The daemon's pools as configured, seen through the HTTP API.
mod daemon;
// The FeedFetcher against local HTTP servers: conditional GET, retries, limits, failures.
mod feed_fetcher;
// The Generalizer with a real PageDb: computing, publishing lighthouses, resuming.
mod generalizer;
// Restarts, routing around dead instances, policies and restart intensity.
mod supervision;
// SQLite store: migrations, WAL, durability across reopen.
mod storage;
// The discovery tables: pages, links, feedback, hittage, fingerprints, representatives.
mod storage_discovery;
// Spans of handled messages and their parent links.
mod traces;

/// The runtime options most tests here run with: two arbiters, small mailboxes, three restarts
/// a minute, a 50 ms liveness check and a second's shutdown grace.
fn test_options() -> ferret_actors::supervisor::RuntimeOptions {
    ferret_actors::supervisor::RuntimeOptions {
        arbiters: 2,
        mailbox_capacity: 64,
        max_restarts: 3,
        period: std::time::Duration::from_secs(60),
        liveness_interval: std::time::Duration::from_millis(50),
        shutdown_grace: std::time::Duration::from_secs(1),
    }
}
