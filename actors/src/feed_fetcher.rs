//! FeedFetcher: fetches the `[[feeds]]` sources on their intervals through the shared HTTP
//! client and hands each outcome to the source's subscribers.
//!
//! Each source belongs to the instance keyed routing picks for its host, which sends itself
//! a [`FetchNow`] at start-up and then every interval; so a host's sources share an instance.
//! The per-source state and the per-host concurrency limits live in the shared
//! [`crate::feed_book::FeedBook`], so they survive restarts, and `GET /api/feeds`
//! and `/metrics` read them without a message.
//!
//! A fetch runs as a future beside the instance, which keeps handling messages: retries wait
//! out their back-off (decided by [`ferret::fetch::RetryPolicy`], jitter drawn from the
//! instance's seeded RNG) without blocking other sources.

use std::time::Duration;

use actix::{AsyncContext as _, ResponseFuture};
use ferret::config::FeedSource;
use ferret::Role;
use rand::rngs::SmallRng;
use rand::{Rng as _, SeedableRng as _};
use tracing::{debug, warn, Instrument as _};

pub use crate::feed_book::FeedBook;
use crate::instance::{Cx, Handle, RoleActor};
use crate::messages::{Envelope, FeedStats, FeedUpdate, FetchNow, FetchRefused, Subscribe};
use crate::pool::{Pool, Route};

/// One instance of the FeedFetcher pool. See the module docs.
pub struct FeedFetcher {
    book: FeedBook,
    /// The sources whose host keyed routing maps to this instance: it schedules them.
    own: Vec<FeedSource>,
    /// The pool's own route, for the scheduled [`FetchNow`]s.
    route: Route<FetchNow>,
    rng: SmallRng,
}

impl FeedFetcher {
    /// The factory the supervisor builds instances with: instance `index` schedules the
    /// sources whose host keyed routing maps to it, and draws jitter from an RNG seeded with
    /// `seed` and its index.
    pub fn factory(
        book: FeedBook,
        pool: &Pool<FeedFetcher>,
        seed: u64,
    ) -> impl Fn(usize) -> anyhow::Result<FeedFetcher> + Send + Sync + 'static {
        let pool = pool.clone();
        move |index| {
            Ok(FeedFetcher {
                own: book
                    .sources()
                    .iter()
                    .filter(|source| pool.slot_of(source.host()) == index)
                    .cloned()
                    .collect(),
                route: pool.route(),
                rng: SmallRng::seed_from_u64(
                    seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                ),
                book: book.clone(),
            })
        }
    }
}

impl RoleActor for FeedFetcher {
    const ROLE: &'static str = Role::FeedFetcher.name();

    fn started(&mut self, cx: &mut Cx<'_, Self>) {
        let index = cx.instance();
        for source in &self.own {
            let route = self.route.clone();
            let name = source.name.clone();
            let send = move || {
                let fetch = Envelope::new(FetchNow {
                    source: name.clone(),
                });
                if let Err(err) = route.do_send_to(index, fetch) {
                    warn!(source = %name, error = %err, "Could not schedule a feed fetch.");
                }
            };
            // The first fetch right after start-up, then one per interval.
            let first = send.clone();
            cx.ctx().run_later(Duration::ZERO, move |_, _| first());
            cx.ctx().run_interval(source.interval, move |_, _| send());
        }
    }
}

impl Handle<FetchNow> for FeedFetcher {
    type Reply = ResponseFuture<Result<FeedUpdate, FetchRefused>>;

    fn handle(&mut self, msg: FetchNow, cx: &mut Cx<'_, Self>) -> Self::Reply {
        let (source, in_flight) = match self.book.begin(&msg.source) {
            Ok(started) => started,
            Err(refused) => {
                debug!(%refused, "Feed fetch not started.");
                return Box::pin(std::future::ready(Err(refused)));
            }
        };
        let jitter: Vec<f64> = (0..self.book.max_retries())
            .map(|_| self.rng.random())
            .collect();
        let book = self.book.clone();
        let parent = cx.message_id();
        let fetch = async move {
            let outcome = book.fetch(&source, &jitter).await;
            let update = book.finish(&source.name, outcome, parent);
            drop(in_flight);
            Ok(update)
        };
        Box::pin(fetch.in_current_span())
    }
}

impl Handle<Subscribe> for FeedFetcher {
    type Reply = Result<(), FetchRefused>;

    fn handle(&mut self, msg: Subscribe, _: &mut Cx<'_, Self>) -> Self::Reply {
        self.book.subscribe(msg.source.as_deref(), msg.subscriber)
    }
}

impl Handle<FeedStats> for FeedFetcher {
    type Reply = actix::MessageResult<Envelope<FeedStats>>;

    fn handle(&mut self, _: FeedStats, _: &mut Cx<'_, Self>) -> Self::Reply {
        actix::MessageResult(self.book.statuses())
    }
}
