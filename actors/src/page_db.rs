//! PageDb: the single writer of the store.

use ferret::Role;
use tracing::{error, info};

use crate::instance::{Cx, Handle, RoleActor};
use crate::messages::{
    CountRestarts, LoadListing, LoadNewsItems, MarkEmitted, RecordDetections, RecordListingRead,
    RecordNewsItems, RecordRestart, RecordRunStarted, RecordRunStopped,
};
use crate::storage::{ListingState, Store, StoreError};

mod discovery;

/// Owns the SQLite store; every other role writes through messages to it.
///
/// Today it keeps the daemon's own records (runs and restarts) and the live listings' on-air
/// buffers, event journals and latest reads, the news items filed into stories, and for
/// discovery the pages and links, feedback, hittage, fingerprints and representatives
/// (handlers in `page_db/discovery.rs`).
pub struct PageDb {
    store: Store,
}

impl PageDb {
    /// A PageDb over an open store.
    pub fn new(store: Store) -> PageDb {
        PageDb { store }
    }
}

impl RoleActor for PageDb {
    const ROLE: &'static str = Role::PageDb.name();

    fn stopped(&mut self) {
        match self.store.checkpoint() {
            Ok(()) => info!("Store flushed."),
            Err(err) => error!(error = %err, "Could not flush the store."),
        }
    }
}

impl Handle<RecordRunStarted> for PageDb {
    type Reply = Result<i64, StoreError>;

    fn handle(&mut self, msg: RecordRunStarted, _: &mut Cx<'_, Self>) -> Self::Reply {
        self.store.record_run_started(&msg.version, msg.at_ms)
    }
}

impl Handle<RecordRunStopped> for PageDb {
    type Reply = Result<(), StoreError>;

    fn handle(&mut self, msg: RecordRunStopped, _: &mut Cx<'_, Self>) -> Self::Reply {
        self.store.record_run_stopped(msg.run_id, msg.at_ms)
    }
}

impl Handle<RecordRestart> for PageDb {
    type Reply = Result<(), StoreError>;

    fn handle(&mut self, msg: RecordRestart, cx: &mut Cx<'_, Self>) -> Self::Reply {
        let result = self
            .store
            .record_restart(msg.role, msg.instance, &msg.cause, msg.at_ms);
        if let Err(err) = &result {
            cx.record_error(err);
        }
        result
    }
}

impl Handle<CountRestarts> for PageDb {
    type Reply = Result<u64, StoreError>;

    fn handle(&mut self, _: CountRestarts, _: &mut Cx<'_, Self>) -> Self::Reply {
        self.store.count_restarts()
    }
}

impl Handle<LoadListing> for PageDb {
    type Reply = Result<ListingState, StoreError>;

    fn handle(&mut self, msg: LoadListing, _: &mut Cx<'_, Self>) -> Self::Reply {
        self.store.load_listing(&msg.listing)
    }
}

impl Handle<RecordDetections> for PageDb {
    type Reply = Result<Vec<i64>, StoreError>;

    fn handle(&mut self, msg: RecordDetections, cx: &mut Cx<'_, Self>) -> Self::Reply {
        let result = self
            .store
            .record_detections(&msg.listing, &msg.detections, msg.forget_before);
        if let Err(err) = &result {
            cx.record_error(err);
        }
        result
    }
}

impl Handle<RecordListingRead> for PageDb {
    type Reply = Result<(), StoreError>;

    fn handle(&mut self, msg: RecordListingRead, cx: &mut Cx<'_, Self>) -> Self::Reply {
        let result = self.store.record_listing_read(
            &msg.listing,
            msg.at_ms,
            &msg.seen,
            msg.memory,
            msg.ties,
            msg.forget_before,
        );
        if let Err(err) = &result {
            cx.record_error(err);
        }
        result
    }
}

impl Handle<MarkEmitted> for PageDb {
    type Reply = Result<(), StoreError>;

    fn handle(&mut self, msg: MarkEmitted, cx: &mut Cx<'_, Self>) -> Self::Reply {
        let result = self.store.mark_emitted(&msg.seqs);
        if let Err(err) = &result {
            cx.record_error(err);
        }
        result
    }
}

impl Handle<RecordNewsItems> for PageDb {
    type Reply = Result<(), StoreError>;

    fn handle(&mut self, msg: RecordNewsItems, cx: &mut Cx<'_, Self>) -> Self::Reply {
        let result = self.store.record_news_items(
            &msg.items,
            &msg.placements,
            msg.forget_before,
            msg.keep_last,
        );
        if let Err(err) = &result {
            cx.record_error(err);
        }
        result
    }
}

impl Handle<LoadNewsItems> for PageDb {
    type Reply = Result<Vec<ferret::stories::NewsItem>, StoreError>;

    fn handle(&mut self, _: LoadNewsItems, _: &mut Cx<'_, Self>) -> Self::Reply {
        self.store.load_news_items()
    }
}
