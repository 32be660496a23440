//! Core tier: the pure library's public API, no actors, no IO beyond reading fixtures.

// The shipped config and the reporting of config mistakes.
mod config;
// The feed parser, its fixtures and the feed corpora.
mod feed;
// The live-listing detector: proof rule, book, scripted ferret runs, simulator and scorer.
mod listing;
// Discovery: hittage, lighthouses and feedback.
mod discovery_hittage;
// The discovery loop: features, advisors, filters, the loop on a two-topic site.
mod discovery;
// The stories core: metrics, shingles, text pipeline, determinism.
mod stories;
// The crawler's craft: URLs, pages, robots.txt, the frontier.
mod discovery_crawl;
// The core stays free of runtimes, actors, HTTP clients and shared maps.
mod purity;
