//! Clusterer: files the items of the `[stories] feeds` into events and stories.
//!
//! The stories live in one [`StoryBook`] (the core's clusterer and the items it filed) shared
//! with the HTTP API, which ranks it on each `GET /api/stories`. Instance 0 of the pool owns
//! it: clustering is a single stream whose order matters, and at ~100,000 titles a second one
//! thread is ample; other instances, if configured, stay idle.
//!
//! **The store.** Every filed item is recorded ([`RecordNewsItems`]) with its place — its
//! event, its story and the item it is a near-copy of — and, with each batch, every earlier
//! item whose place changed (a story merge moves whole events). The store's `news_items` table
//! is the events and stories as `GET /api/stories` shows them.
//!
//! **Restarts.** When an instance starts (also after a panic) it rebuilds the book by
//! replaying the stored items in filing order — the clusterer is deterministic, so the stories
//! come back the same — records the places again where their numbers changed (items that left
//! the window are gone from the replay), and only then subscribes to its feeds (again and
//! again while no FeedFetcher is live: that pool starts after this one).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix::AsyncContext as _;
use ferret::config::StoriesSettings;
use ferret::stories::{NewsItem, Placement, StoryBook};
use ferret::Role;
use tracing::{debug, error, info, warn, Instrument as _};

use crate::instance::{Cx, Handle, Instance, RoleActor};
use crate::messages::{
    Envelope, FeedUpdate, FetchNow, FetchOutcome, LoadNewsItems, MessageId, NewsLoaded,
    RecordNewsItems, Subscribe,
};
use crate::pool::{Route, RouteError};
use crate::supervisor::unix_millis;

/// The first wait before subscribing again while no FeedFetcher is live; each wait doubles,
/// up to [`SUBSCRIBE_RETRY_MAX`].
const SUBSCRIBE_RETRY_FIRST: Duration = Duration::from_millis(20);
const SUBSCRIBE_RETRY_MAX: Duration = Duration::from_secs(2);

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
    /// Where each item in the window sat when last sent to the store.
    written: HashMap<(String, String), Placement>,
}

impl Clusterer {
    /// An instance.
    pub fn new(wiring: Wiring) -> Clusterer {
        Clusterer {
            wiring,
            ready: false,
            written: HashMap::new(),
        }
    }

    /// The items of `book` whose place changed since last sent (filed since, moved by a
    /// merge, or renumbered by a rebuild); the items that left the window are forgotten.
    fn moved(&mut self, book: &StoryBook) -> Vec<Placement> {
        let mut now = HashMap::with_capacity(self.written.len());
        let mut moved = Vec::new();
        for placed in book.placements() {
            let key = (placed.source.clone(), placed.id.clone());
            if self.written.get(&key) != Some(&placed) {
                moved.push(placed.clone());
            }
            now.insert(key, placed);
        }
        self.written = now;
        moved
    }

    /// Sends `items` and the places that changed to the store.
    fn record(
        &mut self,
        book: &StoryBook,
        items: Vec<NewsItem>,
        cx: &mut Cx<'_, Self>,
    ) -> Result<(), crate::pool::RouteError> {
        let placements = self.moved(book);
        if items.is_empty() && placements.is_empty() {
            return Ok(());
        }
        let record = cx.envelope(RecordNewsItems {
            items,
            placements,
            // The window runs on the items' own clock, as in the book.
            forget_before: book
                .newest()
                .saturating_sub(self.wiring.settings.cluster.window),
            keep_last: book.kept_for_replay(),
        });
        self.wiring.record.do_send(record)
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
        // Numbers may differ from the run that filed the items (older items left the window):
        // the store gets every place that changed.
        if let Err(err) = self.record(&book, Vec::new(), cx) {
            warn!(error = %err, "Could not record where the news items sit.");
        }
        *self
            .wiring
            .stories
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = book;
        // Its first read may have gone by before the subscription: each feed is read again
        // once the subscription is in place (a fetch already under way is refused, and its
        // update comes anyway). The two go to the FeedFetcher pool round-robin, so another
        // instance could fetch and publish before the subscription was made: hence the wait
        // for its answer. Without it the first items waited for the feed's next interval.
        // A replay that finished before the FeedFetcher pool started found no instance to
        // subscribe with, and the stories never got their feeds: [`subscribe`] tries again.
        let subscriber = cx.ctx().address().recipient::<Envelope<FeedUpdate>>();
        let subscription = subscribe(
            self.wiring.settings.feeds.clone(),
            subscriber,
            cx.message_id(),
            self.wiring.subscribe.clone(),
            self.wiring.fetch.clone(),
        );
        actix::spawn(subscription.in_current_span());
        self.ready = true;
    }
}

/// Subscribes `subscriber` to each of `sources` and has each read at once, the messages
/// caused by `parent`. While no FeedFetcher is live (the pool starts after the Clusterer's,
/// or its instance is restarting) it tries again, waiting longer each time, for as long as
/// the subscriber lives.
async fn subscribe(
    sources: Vec<String>,
    subscriber: actix::Recipient<Envelope<FeedUpdate>>,
    parent: Option<MessageId>,
    subscribe: Route<Subscribe>,
    fetch: Route<FetchNow>,
) {
    for source in sources {
        let mut delay = SUBSCRIBE_RETRY_FIRST;
        let error = loop {
            if !subscriber.connected() {
                // The instance that asked is gone; the one that replaces it asks again.
                return;
            }
            let request = Subscribe {
                source: Some(source.clone()),
                subscriber: subscriber.clone(),
            };
            match subscribe
                .send(Envelope::caused_by_any(parent, request))
                .await
            {
                Ok(Ok(())) => {
                    let fetch_now = FetchNow {
                        source: source.clone(),
                    };
                    let _ = fetch.do_send(Envelope::caused_by_any(parent, fetch_now));
                    break None;
                }
                Ok(Err(refused)) => break Some(refused.to_string()),
                Err(RouteError::NoInstance { .. }) => {
                    debug!(%source, ?delay, "No FeedFetcher is live: subscribing again after a wait.");
                    actix_rt::time::sleep(delay).await;
                    delay = (delay * 2).min(SUBSCRIBE_RETRY_MAX);
                }
                Err(err) => break Some(err.to_string()),
            }
        };
        if let Some(error) = error {
            warn!(%source, %error, "Could not subscribe to a news feed.");
        }
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
        let stories = Arc::clone(&self.wiring.stories);
        let mut book = stories.lock().unwrap_or_else(|e| e.into_inner());
        // Oldest first: a feed lists its newest items first.
        for item in fetched.feed.items.iter().rev() {
            let news = NewsItem::from_feed(&msg.source, &fetched.feed, item, now);
            if book.add(news.clone()) {
                filed.push(news);
            }
        }
        if filed.is_empty() {
            return;
        }
        info!(source = %msg.source, items = filed.len(), "News items filed into stories.");
        if let Err(err) = self.record(&book, filed, cx) {
            warn!(error = %err, "Could not record news items.");
        }
    }
}
