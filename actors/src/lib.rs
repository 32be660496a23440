//! The actor shell of ferret: every role as an actix actor, supervised, traced and counted;
//! the store; the HTTP API; and the `ferret` binary.
//!
//! Handlers here read the clock, call the pure core (the `ferret` crate) and send what it
//! returns. Logic belongs in the core; an actor file much over ~200 lines is a sign it leaked.
//!
//! # Layout
//!
//! - [`messages`]: every message type, grouped by receiver, and the [`messages::Envelope`]
//!   that carries a message's id and its parent's id.
//! - [`instance`]: [`instance::Instance<R>`], the actix actor that runs one instance of a role
//!   with the span, counters and panic guard every handler gets.
//! - [`pool`]: pools of instances and the typed [`pool::Route`]s senders hold.
//! - [`supervisor`]: the `SystemSupervisor` (one_for_one restarts, policies, restart
//!   intensity, orderly shutdown) and the [`supervisor::Runtime`] handle.
//! - [`daemon`]: wires the roles, the store and the HTTP server into the running daemon.
//! - [`page_db`], [`feed_fetcher`], [`generalizer`], [`roles`]: the roles.
//! - [`feed_book`]: the state of every feed source, shared by the FeedFetcher pool.
//! - [`http_client`]: the one HTTP client feeds are fetched through.
//! - [`page_fetcher`]: the crawler's client (HTML only, checked redirects, address policy,
//!   robots.txt); [`bfs`]: a breadth-first crawler over it; [`bfs_bench`]: `ferret bench bfs`.
//! - [`storage`]: SQLite (WAL, versioned migrations).
//! - [`http`], [`telemetry`]: the HTTP API, logging and metrics.
//! - [`mod@bench`]: `ferret bench actors`.
//! - [`sim_listing`]: `ferret sim-listing`, the listing simulator served over HTTP.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
// Read with the private items, as the core's docs are (see its crate root).
#![allow(rustdoc::private_intra_doc_links)]

mod arg;
pub mod bench;
pub mod bfs;
pub mod bfs_bench;
pub mod cluster_bench;
pub mod cluster_cmd;
pub mod clusterer;
pub mod daemon;
pub mod discover;
pub mod discover_bench;
mod event_sink;
pub mod feed_book;
pub mod feed_fetcher;
pub mod feedback_cmd;
pub mod ferret_advisor;
pub mod ferret_crawler;
pub mod filter;
pub mod generalizer;
pub mod http;
pub mod http_client;
pub mod instance;
pub mod listing_board;
pub mod mapmaker;
pub mod messages;
pub mod on_air_detector;
pub mod onair_bench;
pub mod page_db;
pub mod page_fetcher;
pub mod pool;
pub mod roles;
pub mod sim_listing;
mod stats;
pub mod storage;
pub mod supervisor;
pub mod telemetry;
