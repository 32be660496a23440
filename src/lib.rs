//! The pure core of ferret.
//!
//! ferret is a daemon that watches feeds and the web for its user: it reports broadcasts going
//! on and off air in paginated live listings, groups news items into ranked stories, and crawls
//! outward from the pages the user likes. This crate holds the logic; the `ferret-actors`
//! crate runs it as an actix actor system.
//!
//! The core is *sans-IO*: it never reads the clock, the network, the file system or entropy.
//! Callers pass `now`, bytes and seeds. Stateful logic exposes `handle_*` for input, `poll_*`
//! for output and `poll_timeout()` for the next wake-up, so every algorithm runs on a virtual
//! clock in tests and benchmarks. A test (`tests/core/purity.rs`) fails if an async runtime,
//! actix, an HTTP client or dashmap ever enters this crate's dependencies.
//!
//! # Layout
//!
//! - [`config`]: `config.toml` → raw serde structs → validated [`config::Settings`], reporting
//!   every problem at once with its key path.
//! - [`feed`]: the RSS/Atom parser and its format-neutral model.
//! - [`fetch`]: the pure decisions of fetching feeds: retry back-off, `Retry-After`,
//!   `Content-Type` charsets, typed fetch errors and per-source read counters.
//! - [`listing`]: On Air / Off Air detection in paginated live listings (naive, seed and
//!   ferret strategies, sans-IO), the listing simulator, its scorer and the oracle bound.
//! - [`role`]: the roles of the actor system and their names.
//! - [`stories`]: near-duplicates, two-level incremental clustering of news items, metrics.
//! - [`supervision`]: restart policies and the restart-intensity window (OTP semantics).
#![forbid(unsafe_code)]
#![deny(missing_docs)]
// The crate's only users are the daemon and the tests, and its docs are read with the private
// items (`cargo doc --document-private-items`, as CI builds them): a public item's doc may
// name the private constant or helper that explains it.
#![allow(rustdoc::private_intra_doc_links)]

pub mod config;
pub mod discovery;
pub mod feed;
pub mod fetch;
pub mod listing;
pub mod role;
pub mod stories;
pub mod supervision;

pub use config::Settings;
pub use role::Role;

/// `text` without the byte order mark an editor may write before it (a file saved as "UTF-8
/// with BOM", as Python's `utf-8-sig` and many Windows editors do): the mark is no part of
/// the first line.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}
