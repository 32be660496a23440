//! PageDb's handlers for discovery: each hands its message to the store method of the same
//! name and replies with the outcome; a failure is also counted as a handler error.

use ferret::discovery::hittage::Feedback;

use super::PageDb;
use crate::instance::{Cx, Handle};
use crate::messages::{
    FeedbackAfter, FetchedSince, LoadAccepted, LoadDiscoveryState, LoadFeedback, LoadFetched,
    LoadHittageHistory, LoadLinks, PagesByHittage, Recommendations, RecordFeedback, RecordHittage,
    SaveDiscoveryState, UpsertPages,
};
use crate::storage::{
    DiscoveryState, HittageComputation, PageHittage, PageRecord, StoreError, StoredFeedback,
};

/// `impl Handle<Message> for PageDb` replying `Result<Reply, StoreError>` from `body`, with
/// `store` and `msg` bound; a failure is counted.
macro_rules! store_handlers {
    ($($msg:ty => $reply:ty, |$store:ident, $m:pat_param| $body:expr;)*) => {$(
        impl Handle<$msg> for PageDb {
            type Reply = Result<$reply, StoreError>;

            fn handle(&mut self, $m: $msg, cx: &mut Cx<'_, Self>) -> Self::Reply {
                let $store = &mut self.store;
                let result = $body;
                if let Err(err) = &result {
                    cx.record_error(err);
                }
                result
            }
        }
    )*};
}

store_handlers! {
    UpsertPages => Vec<i64>, |store, msg| store.write_map(&msg.pages, &msg.approved);
    FetchedSince => Vec<String>, |store, msg| store.fetched_since(msg.at_ms);
    LoadAccepted => Vec<PageRecord>, |store, _| store.load_accepted();
    LoadFetched => Vec<PageRecord>, |store, _| store.load_fetched();
    Recommendations => Vec<PageHittage>, |store, msg| store.recommendations(msg.limit);
    RecordFeedback => Vec<StoredFeedback>, |store, msg| store.record_feedback(&msg.events);
    LoadFeedback => Vec<Feedback>, |store, _| store.load_feedback();
    FeedbackAfter => Vec<StoredFeedback>, |store, msg| store.feedback_after(msg.after_id);
    LoadLinks => Vec<(String, String)>, |store, _| store.load_links();
    RecordHittage => (), |store, msg| store.record_hittage(
        msg.computation,
        msg.at_ms,
        &msg.hittage,
        &msg.lighthouses,
        msg.keep,
    );
    LoadHittageHistory => Vec<HittageComputation>, |store, msg| store.hittage_history(msg.last);
    PagesByHittage => Vec<PageHittage>, |store, msg| store.pages_by_hittage(msg.limit);
    SaveDiscoveryState => (), |store, msg| store.save_discovery_state(&msg.state, msg.at_ms);
    LoadDiscoveryState => DiscoveryState, |store, _| store.load_discovery_state();
}
