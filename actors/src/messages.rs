//! Every message of the actor system, grouped by receiver.
//!
//! Messages travel inside an [`Envelope`] that carries the message's own id and the id of the
//! message whose handler sent it, so that any output can be traced back through the chain of
//! messages that caused it. Each message says who sends it and what its reply means.

use std::sync::atomic::{AtomicU64, Ordering};

use actix::Message;
use serde::Serialize;

use crate::storage::StoreError;

/// The id of one message, unique within the process. Ids start at 1; `0` in logs means "no
/// parent": the message was caused by something outside the actor system (an HTTP request, a
/// timer, a signal).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct MessageId(u64);

static NEXT_MESSAGE_ID: AtomicU64 = AtomicU64::new(1);

impl MessageId {
    /// A fresh id.
    pub fn next() -> MessageId {
        MessageId(NEXT_MESSAGE_ID.fetch_add(1, Ordering::Relaxed))
    }

    /// The id as a number, for logs and span fields.
    pub fn get(self) -> u64 {
        self.0
    }
}

/// A message with its tracing ids. Every message between actors travels in one.
#[derive(Debug)]
pub struct Envelope<M> {
    /// This message's id.
    pub id: MessageId,
    /// The message whose handler sent this one, if any.
    pub parent: Option<MessageId>,
    /// The message itself.
    pub payload: M,
}

impl<M> Envelope<M> {
    /// A message caused by nothing inside the actor system: a timer, a request, a signal.
    pub fn new(payload: M) -> Envelope<M> {
        Envelope {
            id: MessageId::next(),
            parent: None,
            payload,
        }
    }

    /// A message sent while handling `parent`.
    pub fn caused_by(parent: MessageId, payload: M) -> Envelope<M> {
        Envelope {
            id: MessageId::next(),
            parent: Some(parent),
            payload,
        }
    }
}

impl<M: Message> Message for Envelope<M> {
    type Result = M::Result;
}

// ---------------------------------------------------------------------------------------
// Every instance, whatever its role (handled by the runtime, not by the role).

/// Asks an instance who it is. Sent by `POST /api/actors/{role}/{instance}/ping` and by tests;
/// the reply proves that the instance handles messages.
#[derive(Debug, Message)]
#[rtype(result = "InstanceInfo")]
pub struct Ping;

/// The reply to [`Ping`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InstanceInfo {
    /// The instance's role.
    pub role: &'static str,
    /// Its index in the role's pool.
    pub instance: usize,
    /// Messages it (and the instances it replaced) handled, this one included.
    pub handled: u64,
    /// Times this slot's instance was restarted.
    pub restarts: u64,
}

/// Asks an instance to stop once the messages already in its mailbox are handled. Sent by the
/// supervisor at shutdown; the instance stops normally (no restart).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Stop;

// ---------------------------------------------------------------------------------------
// PageDb: the single writer of the store.

/// Records that the daemon started. Sent once at start-up; the reply is the run's id.
#[derive(Debug, Message)]
#[rtype(result = "Result<i64, StoreError>")]
pub struct RecordRunStarted {
    /// The daemon's version.
    pub version: String,
    /// Wall-clock start, milliseconds since the Unix epoch.
    pub at_ms: i64,
}

/// Records that the run ended cleanly. Sent once at shutdown, before the instances stop; a run
/// without it in the store ended in a crash, a `kill -9` or an escalation.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), StoreError>")]
pub struct RecordRunStopped {
    /// The id [`RecordRunStarted`] returned.
    pub run_id: i64,
    /// Wall-clock end, milliseconds since the Unix epoch.
    pub at_ms: i64,
}

/// Records one restart, for post-mortems. Sent by the supervisor after each restart.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), StoreError>")]
pub struct RecordRestart {
    /// The restarted instance's role.
    pub role: &'static str,
    /// Its index in the pool.
    pub instance: usize,
    /// Why it exited.
    pub cause: String,
    /// Wall-clock time of the restart, milliseconds since the Unix epoch.
    pub at_ms: i64,
}

/// Asks how many restarts the store has recorded (in all runs). Sent by tests and operators'
/// tools; the reply is the count.
#[derive(Debug, Message)]
#[rtype(result = "Result<u64, StoreError>")]
pub struct CountRestarts;

// ---------------------------------------------------------------------------------------
// SystemSupervisor.

/// An instance is gone, or may be: its handler panicked, or it stopped itself. Sent by the
/// instance (its parent id is the message whose handler panicked); the supervisor decides
/// from the slot's recorded exit whether to restart.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct InstanceDown {
    /// Which supervised pool, by position in start-up order.
    pub pool: usize,
    /// The instance's index in that pool.
    pub instance: usize,
    /// The generation of the instance that went down; a report about an instance that was
    /// already replaced is ignored.
    pub generation: u64,
}

/// Asks the supervisor to stop the system: drain mailboxes within the grace period, stop the
/// instances in reverse start-up order, then stop with exit code 0. Sent by the signal handler.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Shutdown;
