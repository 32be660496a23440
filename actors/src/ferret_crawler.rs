//! Ferret: fetches the pages the discovery loop orders.
//!
//! The loop (the core's [`Engine`](ferret::discovery::engine::Engine), hosted by the
//! FerretAdvisor) decides what to fetch — a fingerprint drawn at random, its representative's
//! links, robots.txt, per-host politeness, dedup, no refetch — and hands each order to a
//! Ferret, round-robin. The Ferret fetches it with the shared [`PageFetcher`] (HTML only, the
//! size limit, redirects under the address policy), parses the page and computes its
//! features on its own arbiter's thread, and replies with the page: the CPU work of a crawl
//! spreads over the pool, and the loop only judges. Many orders run on one Ferret at once.

use actix::ResponseFuture;
use ferret::Role;

use crate::discover::{fetch_order, Done};
use crate::instance::{Cx, Handle, RoleActor};
use crate::messages::FetchPage;
use crate::page_fetcher::PageFetcher;

/// One instance of the Ferret pool.
pub struct Ferret {
    fetcher: PageFetcher,
}

impl Ferret {
    /// An instance fetching with `fetcher` (clones share its connections).
    pub fn new(fetcher: PageFetcher) -> Ferret {
        Ferret { fetcher }
    }
}

impl RoleActor for Ferret {
    const ROLE: &'static str = Role::Ferret.name();
}

impl Handle<FetchPage> for Ferret {
    type Reply = ResponseFuture<Done>;

    fn handle(&mut self, msg: FetchPage, _: &mut Cx<'_, Self>) -> Self::Reply {
        let fetcher = self.fetcher.clone();
        Box::pin(async move { fetch_order(&fetcher, msg.order).await })
    }
}
