//! Mapmaker: writes the discovery loop's pages to the map in PageDb.
//!
//! The loop (hosted by the FerretAdvisor) completes a page's features before it accepts it;
//! the Mapmaker turns each event — a page fetched (kept so that it is never fetched again, with
//! its features so that fingerprints to come can judge it) or a page accepted (the map) — into
//! a page record with its links, and writes the records to PageDb; a page a ferret
//! fingerprint approved is marked so once its record is written (records first, then marks,
//! in each transaction).
//!
//! **Group commit.** A Mapmaker has one write at PageDb at a time. A record that finds no write
//! under way is written at once; records that arrive while one is under way wait and go
//! together in the next transaction. A quiet crawl writes each page as it comes; a fast one
//! writes in batches as large as PageDb's pace makes them, never one transaction per page.
//! Events arrive keyed by URL, so one page's records reach PageDb in the order they happened.
//!
//! A round of the loop ends with [`FlushMap`], answered once everything sent before it is
//! written. A Mapmaker killed with records waiting loses them; those pages are fetched again
//! after a restart.

use actix::{AsyncContext as _, ResponseFuture};
use ferret::Role;
use tokio::sync::oneshot;
use tracing::warn;

use crate::discover::queue_map_write;
use crate::instance::{Cx, Handle, RoleActor};
use crate::messages::{Envelope, FlushMap, MapPage, MapWritten, UpsertPages};
use crate::pool::Route;
use crate::storage::PageRecord;

/// One instance of the Mapmaker pool.
pub struct Mapmaker {
    upsert: Route<UpsertPages>,
    /// Records waiting for the write under way.
    pending: Vec<PageRecord>,
    /// Approvals waiting for the write under way (written after the records).
    approvals: Vec<(String, u64)>,
    /// Whether a write is under way.
    writing: bool,
    /// The first failure since the last flush answered.
    failure: Option<String>,
    /// [`FlushMap`]s waiting for the writes under way and waiting.
    flushes: Vec<oneshot::Sender<Result<(), String>>>,
}

impl Mapmaker {
    /// An instance writing to PageDb through `upsert`.
    pub fn new(upsert: Route<UpsertPages>) -> Mapmaker {
        Mapmaker {
            upsert,
            pending: Vec::new(),
            approvals: Vec::new(),
            writing: false,
            failure: None,
            flushes: Vec::new(),
        }
    }

    /// Writes what waits, if no write is under way; answers the flushes once nothing waits.
    fn write(&mut self, cx: &mut Cx<'_, Self>) {
        if self.writing {
            return;
        }
        if self.pending.is_empty() && self.approvals.is_empty() {
            let outcome = self.failure.take().map_or(Ok(()), Err);
            for flush in self.flushes.drain(..) {
                // A flush whose asker went away needs no answer.
                let _gone = flush.send(outcome.clone());
            }
            return;
        }
        self.writing = true;
        let pages = std::mem::take(&mut self.pending);
        let approved = std::mem::take(&mut self.approvals);
        let count = pages.len() + approved.len();
        let written = self
            .upsert
            .send(Envelope::new(UpsertPages { pages, approved }));
        let me = cx.ctx().address();
        cx.ctx().spawn(actix::fut::wrap_future(async move {
            let error = match written.await {
                Ok(Ok(_)) => None,
                Ok(Err(err)) => Some(format!("PageDb could not write {count} pages: {err}")),
                Err(err) => Some(format!("PageDb did not answer ({count} pages): {err}")),
            };
            me.do_send(Envelope::new(MapWritten { error }));
        }));
    }
}

impl RoleActor for Mapmaker {
    const ROLE: &'static str = Role::Mapmaker.name();
}

impl Handle<MapPage> for Mapmaker {
    type Reply = ();

    fn handle(&mut self, msg: MapPage, cx: &mut Cx<'_, Self>) {
        if queue_map_write(msg.event, &mut self.pending, &mut self.approvals) {
            self.write(cx);
        }
    }
}

impl Handle<MapWritten> for Mapmaker {
    type Reply = ();

    fn handle(&mut self, msg: MapWritten, cx: &mut Cx<'_, Self>) {
        self.writing = false;
        if let Some(error) = msg.error {
            warn!(%error, "Pages of the map were not written.");
            cx.record_error(&error);
            self.failure.get_or_insert(error);
        }
        self.write(cx);
    }
}

impl Handle<FlushMap> for Mapmaker {
    type Reply = ResponseFuture<Result<(), String>>;

    fn handle(&mut self, _: FlushMap, cx: &mut Cx<'_, Self>) -> Self::Reply {
        let (answer, answered) = oneshot::channel();
        self.flushes.push(answer);
        self.write(cx);
        Box::pin(async move {
            answered
                .await
                .unwrap_or_else(|_| Err("the Mapmaker stopped before writing".into()))
        })
    }
}
