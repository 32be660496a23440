//! The Clusterer with a real PageDb and FeedFetcher against a local feed server.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferret::config::Settings;
use ferret::stories::StoryBook;
use ferret::supervision::RestartPolicy;
use ferret_actors::clusterer::{Clusterer, SharedStories, Wiring};
use ferret_actors::feed_fetcher::{FeedBook, FeedFetcher};
use ferret_actors::page_db::PageDb;
use ferret_actors::pool::Pool;
use ferret_actors::storage::Store;
use ferret_actors::supervisor::RuntimeBuilder;

use crate::support::eventually;
use crate::support::http::{Response, TestServer};

const RSS: &str = r#"<?xml version="1.0"?>
<rss version="2.0"><channel><title>Local news</title><link>http://example.com/</link>
<item><title>Comet lander wakes up after a year of silence</title><guid>a1</guid></item>
<item><title>Comet lander sends its first pictures home</title><guid>a2</guid></item>
<item><title>Central bank holds interest rates steady</title><guid>b1</guid></item>
</channel></rss>"#;

/// The daemon starts the FeedFetcher pool after the Clusterer's (producers last). When the
/// Clusterer has replayed the store and asks to subscribe before any FeedFetcher lives, it
/// must ask again until one does: here the FeedFetchers start only after that first attempt
/// was turned away, and the feed's items still reach the stories without waiting for the
/// feed's next read an hour later.
#[actix::test]
async fn the_feeds_are_subscribed_once_the_feed_fetchers_start() {
    let server = TestServer::start(|_, _| Response::ok("application/rss+xml", RSS));
    let text = format!(
        "[[feeds]]\nname = \"news\"\nurl = \"{}\"\ninterval_secs = 3600\n\n\
         [stories]\nfeeds = [\"news\"]\n",
        server.url("/news.xml")
    );
    let settings = Settings::from_toml(&text, None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ferret.db");

    let page_db: Pool<PageDb> = Pool::new(1);
    let clusterer: Pool<Clusterer> = Pool::new(1);
    let feed_fetcher: Pool<FeedFetcher> = Pool::new(1);
    let stories: SharedStories =
        Arc::new(Mutex::new(StoryBook::new(settings.stories.cluster.clone())));
    let mut first = RuntimeBuilder::new(crate::test_options());
    first.supervise(&page_db, RestartPolicy::Permanent, move |_| {
        Ok(PageDb::new(Store::open(&path)?))
    });
    let wiring = Wiring {
        settings: settings.stories.clone(),
        stories: Arc::clone(&stories),
        subscribe: feed_fetcher.route(),
        fetch: feed_fetcher.route(),
        record: page_db.route(),
        load: page_db.route(),
        loaded: clusterer.route(),
    };
    first.supervise(&clusterer, RestartPolicy::Permanent, move |_| {
        Ok(Clusterer::new(wiring.clone()))
    });
    let first = first.start().unwrap();

    // A message the FeedFetcher pool could not take is the subscription turned away.
    eventually(
        Duration::from_secs(10),
        "a subscription turned away",
        || async { (feed_fetcher.dropped() > 0).then_some(()) },
    )
    .await;
    assert_eq!(stories.lock().unwrap().len(), 0);

    let book = FeedBook::new(&settings.fetch, settings.feeds.clone()).unwrap();
    let mut second = RuntimeBuilder::new(crate::test_options());
    second.supervise(
        &feed_fetcher,
        RestartPolicy::Permanent,
        FeedFetcher::factory(book, &feed_fetcher, 7),
    );
    let second = second.start().unwrap();

    eventually(
        Duration::from_secs(10),
        "the feed's items in stories",
        || async { (stories.lock().unwrap().len() == 3).then_some(()) },
    )
    .await;
    second.shutdown();
    first.shutdown();
}
