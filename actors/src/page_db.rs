//! PageDb: the single writer of the store.

use ferret::Role;
use tracing::{error, info};

use crate::instance::{Cx, Handle, RoleActor};
use crate::messages::{CountRestarts, RecordRestart, RecordRunStarted, RecordRunStopped};
use crate::storage::{Store, StoreError};

/// Owns the SQLite store; every other role writes through messages to it.
///
/// Today it keeps the daemon's own records (runs and restarts). Pages, links, feedback,
/// hittage and fingerprints arrive with the discovery issue (#6), the on-air buffer with the
/// live-listing issue (#4), stories with the stories issue (#5).
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
