//! Discovery: learning which pages the user likes and crawling outward for more of the same
//! (SPEC §2).
//!
//! The roles of the seed, each a pure component here and an actor in the shell:
//!
//! - [`hittage`] (the Generalizer): how strongly the user likes each page, from visits, dwell
//!   time, likes and dislikes, decayed with time and propagated over links; lighthouses are the
//!   pages whose hittage stays high. [`bookmarks`] reads the pages a user likes from a
//!   browser's bookmarks export or a list of URLs; [`intake`] reads and checks a feedback
//!   event sent as JSON (`POST /api/feedback`).
//! - [`advisor`] (the FerretAdvisor): groups pages by nearest lighthouse, ranks representatives
//!   and turns their distinctive [`features`] into ferret fingerprints; flushes exhausted ones.
//! - [`filter`] (the FilterAdvisor and the Filter): per lighthouse, a vector of features with a
//!   vector of thresholds; a page passes a filter on a majority of its features and goes on if
//!   any filter passes it.
//! - [`frontier`], [`robots`], [`url`] and [`page`] (the Ferret's craft): what to fetch next
//!   under per-host politeness and robots.txt, URL normalisation and dedup, and what a fetched
//!   HTML page says (title, text, language, links, images, size).
//! - [`engine`]: the whole loop composed on a virtual clock, for `ferret discover`, the
//!   benchmark and the tests; the actors run the same components one role each.
//!
//! Nothing here touches a clock, a socket or global randomness: times come in as milliseconds,
//! randomness from a seed.

pub mod advisor;
pub mod bookmarks;
pub mod engine;
pub mod features;
pub mod filter;
pub mod frontier;
pub mod hittage;
pub mod intake;
pub mod page;
pub mod robots;
pub mod url;
