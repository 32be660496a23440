//! Clusterer: files the items of the `[stories] feeds` into events and stories.
//!
//! The stories live in one [`StoryBook`] (the core's clusterer and the items it filed) shared
//! with the HTTP API, which ranks it on each `GET /api/stories`. Instance 0 of the pool owns
//! it: clustering is a single stream whose order matters, and at ~100,000 titles a second one
//! thread is ample; other instances, if configured, stay idle.
//!
//! **Restarts.** Every filed item is recorded in the store ([`RecordNewsItems`]). When an
//! instance starts (also after a panic) it rebuilds the book by replaying the stored items in
//! filing order — the clusterer is deterministic, so the stories come back the same — and
//! only then subscribes to its feeds.

use std::sync::{Arc, Mutex};

use actix::AsyncContext as _;
use ferret::config::StoriesSettings;
use ferret::stories::{NewsItem, StoryBook};
use ferret::Role;
use tracing::{error, info, warn, Instrument as _};

use crate::instance::{Cx, Handle, Instance, RoleActor};
use crate::messages::{
    Envelope, FeedUpdate, FetchNow, FetchOutcome, LoadNewsItems, NewsLoaded, RecordNewsItems,
    Subscribe,
};
use crate::pool::Route;
use crate::supervisor::unix_millis;

/// The stories, shared with the HTTP API.
pub type SharedStories = Arc<Mutex<StoryBook>>;

/// What an instance is wired to.
#[derive(Clone)]
pub struct Wiring {
    /// `[stories]`.
    pub settings: StoriesSettings,
    /// The book the API reads.
    pub stories: SharedStories,
    /// FeedFetcher, to subscribe.
    pub subscribe: Route<Subscribe>,
    /// FeedFetcher, to read a feed at once after subscribing.
    pub fetch: Route<FetchNow>,
    /// PageDb.
    pub record: Route<RecordNewsItems>,
    /// PageDb.
    pub load: Route<LoadNewsItems>,
    /// The pool's own route.
    pub loaded: Route<NewsLoaded>,
}

/// One instance of the Clusterer pool. See the module docs.
pub struct Clusterer {
    wiring: Wiring,
    /// Whether the stored items are replayed and the feeds subscribed.
    ready: bool,
}

impl Clusterer {
    /// An instance.
    pub fn new(wiring: Wiring) -> Clusterer {
        Clusterer {
            wiring,
            ready: false,
        }
    }
}

impl RoleActor for Clusterer {
    const ROLE: &'static str = Role::Clusterer.name();

    fn started(&mut self, cx: &mut Cx<'_, Self>) {
        if cx.instance() != 0 || self.wiring.settings.feeds.is_empty() {
            return;
        }
        let (load, loaded, index) = (
            self.wiring.load.clone(),
            self.wiring.loaded.clone(),
            cx.instance(),
        );
        let task = async move {
            let items = match load.send(Envelope::new(LoadNewsItems)).await {
                Ok(Ok(items)) => Ok(items),
                Ok(Err(err)) => Err(format!("the store failed: {err}")),
                Err(err) => Err(format!("PageDb did not answer: {err}")),
            };
            if let Err(err) = loaded.do_send_to(index, Envelope::new(NewsLoaded { items })) {
                warn!(error = %err, "Could not resume the stories.");
            }
        };
        cx.ctx().spawn(actix::fut::wrap_future::<_, Instance<Self>>(
            task.in_current_span(),
        ));
    }
}

impl Handle<NewsLoaded> for Clusterer {
    type Reply = ();

    fn handle(&mut self, msg: NewsLoaded, cx: &mut Cx<'_, Self>) {
        let mut book = StoryBook::new(self.wiring.settings.cluster.clone());
        match msg.items {
            Ok(items) => {
                let count = items.len();
                for item in items {
                    book.add(item);
                }
                info!(items = count, "Stories rebuilt from the store.");
            }
            Err(err) => {
                error!(error = %err, "Could not load the stored news items; starting with no stories.");
                cx.record_error(&err);
            }
        }
        *self
            .wiring
            .stories
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = book;
        let subscriber = cx.ctx().address().recipient::<Envelope<FeedUpdate>>();
        for source in &self.wiring.settings.feeds {
            let subscribe = cx.envelope(Subscribe {
                source: Some(source.clone()),
                subscriber: subscriber.clone(),
            });
            if let Err(err) = self.wiring.subscribe.do_send(subscribe) {
                warn!(%source, error = %err, "Could not subscribe to a news feed.");
            }
            // Its first read may have gone by before the subscription: read it now. (A fetch
            // already under way is refused, and its update comes anyway.)
            let _ = self.wiring.fetch.do_send(cx.envelope(FetchNow {
                source: source.clone(),
            }));
        }
        self.ready = true;
    }
}

impl Handle<FeedUpdate> for Clusterer {
    type Reply = ();

    fn handle(&mut self, msg: FeedUpdate, cx: &mut Cx<'_, Self>) {
        let FetchOutcome::Fetched(fetched) = &msg.outcome else {
            return;
        };
        if !self.ready || !self.wiring.settings.feeds.contains(&msg.source) {
            return;
        }
        let now = unix_millis();
        let mut filed = Vec::new();
        let newest = {
            let mut book = self
                .wiring
                .stories
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            // Oldest first: a feed lists its newest items first.
            for item in fetched.feed.items.iter().rev() {
                let news = NewsItem::from_feed(&msg.source, item, now);
                if book.add(news.clone()) {
                    filed.push(news);
                }
            }
            book.newest()
        };
        if filed.is_empty() {
            return;
        }
        info!(source = %msg.source, items = filed.len(), "News items filed into stories.");
        let record = cx.envelope(RecordNewsItems {
            items: filed,
            // The window runs on the items' own clock, as in the book.
            forget_before: newest.saturating_sub(self.wiring.settings.cluster.window),
        });
        if let Err(err) = self.wiring.record.do_send(record) {
            warn!(error = %err, "Could not record news items.");
        }
    }
}
