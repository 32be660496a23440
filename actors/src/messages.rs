//! Every message of the actor system, grouped by receiver.
//!
//! Messages travel inside an [`Envelope`] that carries the message's own id and the id of the
//! message whose handler sent it, so that any output can be traced back through the chain of
//! messages that caused it. Each message says who sends it and what its reply means.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use actix::{Message, Recipient};
use ferret::discovery::hittage::Feedback;
use ferret::fetch::FetchError;
use serde::Serialize;

use crate::storage::{
    Detection, DiscoveryState, HittageComputation, ListingState, PageHittage, PageRecord,
    StoreError, StoredFeedback,
};

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
        Envelope::caused_by_any(None, payload)
    }

    /// A message sent while handling `parent`.
    pub fn caused_by(parent: MessageId, payload: M) -> Envelope<M> {
        Envelope::caused_by_any(Some(parent), payload)
    }

    /// A message sent while handling `parent`, or caused by nothing inside the actor system
    /// when `parent` is `None`.
    pub fn caused_by_any(parent: Option<MessageId>, payload: M) -> Envelope<M> {
        Envelope {
            id: MessageId::next(),
            parent,
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

/// Loads what the store keeps of one listing. Sent by the OnAirDetector instance that owns
/// the listing when it starts (also after a restart); the reply resumes its detector.
#[derive(Debug, Message)]
#[rtype(result = "Result<ListingState, StoreError>")]
pub struct LoadListing {
    /// The listing's name in `[[listings]]`.
    pub listing: String,
}

/// Records a listing's detections before they are emitted (the book changes and the event
/// lines, in one transaction). Sent by the OnAirDetector after a read that produced events;
/// the reply is the events' sequence numbers, for [`MarkEmitted`].
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<i64>, StoreError>")]
pub struct RecordDetections {
    /// The listing's name.
    pub listing: String,
    /// The events, in detection order.
    pub detections: Vec<Detection>,
    /// Gone ids reported before this time (Unix ms) are forgotten.
    pub forget_before: i64,
}

/// Records a listing's read: when it started, so that a restarted detector counts it against
/// its budget; the broadcasts its page showed, proven on air since then, so that a restarted
/// detector knows which of them passed a frame boundary on air; and what the detector had
/// learnt beyond its book once it took the read. Sent by the OnAirDetector as each read is
/// answered; the reply is the store's outcome.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), StoreError>")]
pub struct RecordListingRead {
    /// The listing's name.
    pub listing: String,
    /// When the read started (Unix ms).
    pub at_ms: i64,
    /// The ids the page listed (none for a failed read).
    pub seen: Vec<std::sync::Arc<str>>,
    /// What the detector has learnt beyond its book ([`ferret::listing::Pager::memory`]);
    /// `None` forgets what was kept.
    pub memory: Option<ferret::listing::Memory>,
    /// What the pages have shown of the listing's order among equal keys
    /// ([`ferret::listing::Book::ties`]).
    pub ties: ferret::listing::TieOrder,
    /// Reads that started before this time (Unix ms) are forgotten: they no longer count.
    pub forget_before: i64,
}

/// Marks recorded events as emitted (written to the events file and stdout). Sent by the
/// OnAirDetector right after it wrote them; the reply is the store's outcome.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), StoreError>")]
pub struct MarkEmitted {
    /// The sequence numbers [`RecordDetections`] returned.
    pub seqs: Vec<i64>,
}

/// Records news items the Clusterer filed into stories, in filing order, and where items sit
/// now. Sent by the Clusterer after each feed update that brought new items (and after it
/// rebuilt its stories); the reply is the store's outcome.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), StoreError>")]
pub struct RecordNewsItems {
    /// The items.
    pub items: Vec<ferret::stories::NewsItem>,
    /// The items (these or earlier ones) whose event, story or original changed.
    pub placements: Vec<ferret::stories::Placement>,
    /// Items published before this time (Unix ms) are forgotten, but for the last
    /// `keep_last` filed: the clusterer's statistics still count them, and a replay must too.
    pub forget_before: i64,
    /// Items filed last that are kept whatever their time
    /// ([`ferret::stories::StoryBook::kept_for_replay`]).
    pub keep_last: usize,
}

/// Asks for the news items kept, in filing order. Sent by the Clusterer when it starts (also
/// after a restart) to rebuild its stories.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<ferret::stories::NewsItem>, StoreError>")]
pub struct LoadNewsItems;

// PageDb, discovery: pages and links, feedback, hittage, fingerprints, representatives (the
// store's methods of the same names say exactly what each does).

/// Stores pages with their links in one transaction (new or replacing, link targets kept as
/// placeholders), then marks pages a ferret fingerprint approved. Sent by the Mapmaker (pages
/// fetched, approved and accepted); the reply is the pages' ids, in order.
#[derive(Debug, Default, Message)]
#[rtype(result = "Result<Vec<i64>, StoreError>")]
pub struct UpsertPages {
    /// The pages.
    pub pages: Vec<PageRecord>,
    /// Stored pages a ferret fingerprint approved, with the fingerprint, marked after the
    /// pages are written.
    pub approved: Vec<(String, u64)>,
}

/// Asks for recommendations: accepted pages the user has not given feedback on, best first.
/// Sent by the HTTP API (`GET /api/recommendations`).
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<PageHittage>, StoreError>")]
pub struct Recommendations {
    /// At most this many.
    pub limit: usize,
}

/// Asks for the map: every accepted page with its links. Sent by the discovery loop when it
/// starts (also after a restart), to resume where it was.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<PageRecord>, StoreError>")]
pub struct LoadAccepted;

/// Asks for the pages fetched but not accepted, with their features and links. Sent with
/// [`LoadAccepted`].
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<PageRecord>, StoreError>")]
pub struct LoadFetched;

/// Asks for the URLs of pages fetched at or after a time. Sent by a crawler when it starts, so
/// that it does not fetch them again; the reply lists them, oldest fetch first.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<String>, StoreError>")]
pub struct FetchedSince {
    /// Unix ms.
    pub at_ms: i64,
}

/// Records feedback events (already validated). Sent by the HTTP API (`POST /api/feedback`);
/// the reply is the events with their ids.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<StoredFeedback>, StoreError>")]
pub struct RecordFeedback {
    /// The events.
    pub events: Vec<Feedback>,
}

/// Asks for every feedback event, oldest first. Sent by the Generalizer before each
/// computation.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<Feedback>, StoreError>")]
pub struct LoadFeedback;

/// Asks for the feedback events recorded after the one with id `after_id` (0: all), by id.
/// Sent by the FerretAdvisor before each round, with the last id it has seen, so that each
/// event reaches the loop once (one posted with an earlier `at` too).
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<StoredFeedback>, StoreError>")]
pub struct FeedbackAfter {
    /// The last id seen; 0 for none.
    pub after_id: i64,
}

/// Asks for the link graph as sorted `(from, to)` URL pairs. Sent by the Generalizer before
/// each computation.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<(String, String)>, StoreError>")]
pub struct LoadLinks;

/// Records one computation of the Generalizer and forgets all but the `keep` latest. Sent by
/// the Generalizer after each computation; the reply is the store's outcome.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), StoreError>")]
pub struct RecordHittage {
    /// The computation's number.
    pub computation: u64,
    /// When it ran (Unix ms).
    pub at_ms: i64,
    /// Each page's hittage.
    pub hittage: HashMap<String, f64>,
    /// The lighthouses, with their hittage.
    pub lighthouses: Vec<(String, f64)>,
    /// How many computations to keep.
    pub keep: usize,
}

/// Asks for the `last` latest computations of the Generalizer, oldest first. Sent by the
/// Generalizer when it starts (also after a restart) to resume its lighthouse memory.
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<HittageComputation>, StoreError>")]
pub struct LoadHittageHistory {
    /// How many.
    pub last: usize,
}

/// Asks for up to `limit` pages, highest hittage (latest computation) first. Sent by the HTTP
/// API (`GET /api/pages?sort=hittage`).
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<PageHittage>, StoreError>")]
pub struct PagesByHittage {
    /// The most pages in the reply.
    pub limit: usize,
}

/// The discovery loop's fingerprints and representatives as they are now: the store makes
/// its pools in use these (flushing those gone) and records each representative's history.
/// Sent by the FerretAdvisor after a round that changed them; the reply is the store's outcome.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), StoreError>")]
pub struct SaveDiscoveryState {
    /// The state.
    pub state: DiscoveryState,
    /// When (Unix ms).
    pub at_ms: i64,
}

/// Asks for the discovery loop's saved state (fingerprints in use, representatives). Sent by
/// the FerretAdvisor when its loop starts (also after a restart), to resume with it.
#[derive(Debug, Message)]
#[rtype(result = "Result<DiscoveryState, StoreError>")]
pub struct LoadDiscoveryState;

// ---------------------------------------------------------------------------------------
// Ferret and Mapmaker: the discovery loop's fetching and its writes to the map.

/// Carry out one fetch order of the discovery loop: the page fetched (robots.txt, politeness
/// and dedup were the loop's), parsed and its features computed on the Ferret's thread. Sent
/// by the FerretAdvisor, round-robin; the reply is the page or why there is none.
#[derive(Debug, Message)]
#[rtype(result = "crate::discover::Done")]
pub struct FetchPage {
    /// What to fetch.
    pub order: ferret::discovery::frontier::FetchOrder,
}

/// Take the Filters' vote on a page a ferret fingerprint approved. Sent by the FerretAdvisor,
/// round-robin over the Filter pool; the reply is the filter that passed the page, or None
/// (discard it).
#[derive(Debug, Message)]
#[rtype(result = "Option<u64>")]
pub struct VotePage {
    /// The page's features and the ballot.
    pub order: ferret::discovery::engine::VoteOrder,
}

/// An event of the discovery loop for the map: a page fetched or accepted. Sent by the
/// FerretAdvisor, keyed by the page's URL so that one page's events stay in order; the
/// Mapmaker turns it into a page record and writes it (with others that arrive meanwhile in
/// one transaction).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct MapPage {
    /// The event.
    pub event: ferret::discovery::engine::DiscoveryEvent,
}

/// Answer once everything sent before is written. Sent by the FerretAdvisor to every
/// Mapmaker at the end of a round; the reply is the first failure since the last flush, if any.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), String>")]
pub struct FlushMap;

/// A write to PageDb ended. Sent by a Mapmaker to itself; it writes what waited meanwhile.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct MapWritten {
    /// Why the pages were not written, if they were not.
    pub error: Option<String>,
}

// ---------------------------------------------------------------------------------------
// Generalizer: hittage and lighthouses from the user's feedback and the link graph.

/// Recompute hittage now. Sent by the Generalizer to itself on its interval, and by the HTTP
/// API after it recorded feedback. A request while a computation runs makes one more follow.
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct GeneralizeNow;

/// The stored computations arrived: the Generalizer resumes its lighthouse memory from them.
/// Sent by the Generalizer to itself when the [`LoadHittageHistory`] it sent at start-up is
/// answered.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct HittageHistoryLoaded {
    /// The computations, oldest first, or why they could not be loaded (the instance starts
    /// with no memory and says so).
    pub history: Result<Vec<HittageComputation>, String>,
}

/// The input of one computation arrived. Sent by the Generalizer to itself when its
/// [`LoadFeedback`] and [`LoadLinks`] are answered.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct GeneralizerInput {
    /// The feedback and the links, or why they could not be loaded.
    pub input: Result<GeneralizerData, String>,
}

/// What one computation of the Generalizer reads.
#[derive(Debug)]
pub struct GeneralizerData {
    /// Every feedback event, oldest first.
    pub feedback: Vec<Feedback>,
    /// The link graph, `(from, to)` URL pairs.
    pub links: Vec<(String, String)>,
}

/// Subscribes to the lighthouses. Sent by the roles that start from lighthouses (the
/// FerretAdvisor, the FilterAdvisor) at start-up; the subscriber gets the latest lighthouses
/// at once if there are any, then every change. Subscriptions outlive Generalizer restarts; a
/// subscriber whose mailbox closed is dropped at the next change.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct SubscribeLighthouses {
    /// Where the changes go.
    pub subscriber: Recipient<Envelope<LighthousesChanged>>,
}

/// The lighthouses changed. Sent by the Generalizer to its subscribers after a computation
/// whose lighthouses differ from the last ones published (other pages, another order, or a
/// hittage moved by [`LIGHTHOUSE_TOLERANCE`](ferret::discovery::hittage::LIGHTHOUSE_TOLERANCE)
/// or more), and after its first computation.
#[derive(Debug, Clone, PartialEq, Message)]
#[rtype(result = "()")]
pub struct LighthousesChanged {
    /// The lighthouses with their hittage, highest first, then by URL.
    pub lighthouses: Vec<(String, f64)>,
    /// The computation they come from.
    pub computation: u64,
}

// ---------------------------------------------------------------------------------------
// Clusterer: files news items into events and stories.

/// The stored items arrived: the Clusterer rebuilds its stories from them, then subscribes to
/// its feeds. Sent by the Clusterer instance to itself.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct NewsLoaded {
    /// The items, or why they could not be loaded (the instance starts empty and says so).
    pub items: Result<Vec<ferret::stories::NewsItem>, String>,
}

// ---------------------------------------------------------------------------------------
// OnAirDetector: reads the `[[listings]]` and reports On Air and Off Air.

/// Time to ask a listing's detector what to read. Sent by the OnAirDetector instance that
/// owns the listing to itself, when the detector's timeout comes.
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct ListingTick {
    /// The listing's name.
    pub listing: String,
}

/// The store's state of a listing arrived. Sent by the OnAirDetector instance to itself when
/// the [`LoadListing`] it sent at start-up is answered; the detector resumes from it.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct ListingLoaded {
    /// The listing's name.
    pub listing: String,
    /// The state, or why it could not be loaded (the instance tries again).
    pub state: Result<ListingState, String>,
}

/// The events of a listing's reads handed out last are recorded and emitted. Sent by the
/// OnAirDetector instance to itself; the events of later reads, if any, go out next.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct ListingEmitted {
    /// The listing's name.
    pub listing: String,
}

/// A page read of a listing completed. Sent by the OnAirDetector instance to itself when the
/// HTTP request it started ends (caused by the [`ListingTick`] that started it).
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct ListingPageRead {
    /// The listing's name.
    pub listing: String,
    /// The page asked for.
    pub page: u32,
    /// When the read started (Unix ms).
    pub started_at: ferret::listing::Millis,
    /// The page, or the failure.
    pub outcome: ferret::listing::ReadOutcome,
    /// How long the listing took to answer, milliseconds; `None` when it did not answer
    /// within the read timeout.
    pub answered_in: Option<ferret::listing::Millis>,
    /// The listing answered `429 Too Many Requests`, with the wait its `Retry-After` asked
    /// for, if any.
    pub throttled: Option<Option<std::time::Duration>>,
}

// ---------------------------------------------------------------------------------------
// FeedFetcher: fetches the `[[feeds]]` sources and hands the results to their subscribers.

/// Fetches one source now. Sent by each FeedFetcher instance to itself on the source's
/// interval (keyed routing by host keeps a host's sources on one instance), and by tests and
/// tools. The reply is how the fetch ended, once it has; the same update also goes to the
/// source's subscribers. Refused when the source is unknown or a fetch of it is under way.
#[derive(Debug, Clone, Message)]
#[rtype(result = "Result<FeedUpdate, FetchRefused>")]
pub struct FetchNow {
    /// The source's `name` in `[[feeds]]`.
    pub source: String,
}

/// Why a [`FetchNow`] did not fetch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchRefused {
    /// No `[[feeds]]` entry has this name.
    #[error("no feed named `{0}`")]
    UnknownSource(String),
    /// A fetch of this source is still running (its retries can take a while).
    #[error("feed `{0}` is already being fetched")]
    InFlight(String),
}

/// Subscribes `subscriber` to the updates of one source, or of every source. Sent by the
/// roles that read feeds (the detectors, the clusterer) at start-up; the reply is an error
/// only for an unknown source. Subscriptions outlive FeedFetcher restarts; a subscriber
/// whose mailbox closed is dropped at the next update.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), FetchRefused>")]
pub struct Subscribe {
    /// The source's name, or `None` for every source.
    pub source: Option<String>,
    /// Where updates go.
    pub subscriber: Recipient<Envelope<FeedUpdate>>,
}

/// Asks for every source's counters and last outcome (what `GET /api/feeds` shows). Sent by
/// the roles that budget their reads and by tests; the reply lists the sources in config
/// order.
#[derive(Debug, Message)]
#[rtype(result = "Vec<FeedStatus>")]
pub struct FeedStats;

/// How one fetch of a source ended. Sent by the FeedFetcher to the source's subscribers
/// (caused by the [`FetchNow`] that fetched it), and the reply to that `FetchNow`.
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct FeedUpdate {
    /// The source's name.
    pub source: String,
    /// What happened.
    pub outcome: FetchOutcome,
}

/// The three ways a fetch ends.
#[derive(Debug, Clone)]
pub enum FetchOutcome {
    /// A full response arrived and was parsed.
    Fetched(Arc<Fetched>),
    /// The server answered the conditional GET with `304 Not Modified`: nothing new.
    NotModified,
    /// The fetch failed; the failure is also logged and counted.
    Failed(FetchFailure),
}

/// A feed that was fetched and parsed.
#[derive(Debug)]
pub struct Fetched {
    /// The URL that answered, after redirects (relative links were resolved against it).
    pub url: String,
    /// The response's status (a 2xx).
    pub status: u16,
    /// The charset the `Content-Type` header named, if any.
    pub charset: Option<String>,
    /// The body's size in bytes, decompressed.
    pub bytes: usize,
    /// The feed, as the parser read it (its `warnings` say what it recovered from).
    pub feed: ferret::feed::Feed,
}

/// A failed fetch: the typed error with the URL, the status and the cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchFailure {
    /// What went wrong.
    pub error: FetchError,
    /// The URL that failed, after any redirects.
    pub url: String,
    /// The HTTP status, if a response came.
    pub status: Option<u16>,
    /// The underlying error chain.
    pub cause: String,
}

/// One source in the reply to [`FeedStats`] and in `GET /api/feeds`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FeedStatus {
    /// The source's name.
    pub name: String,
    /// Its URL.
    pub url: String,
    /// Seconds between fetches.
    pub interval_secs: u64,
    /// A fetch is under way.
    pub in_flight: bool,
    /// Subscribers of this source alone (not counting those of every source).
    pub subscribers: usize,
    /// The ETag held for the next conditional GET.
    pub etag: Option<String>,
    /// The Last-Modified held for the next conditional GET.
    pub last_modified: Option<String>,
    /// Reads, outcomes and the last error.
    #[serde(flatten)]
    pub stats: ferret::fetch::SourceStats,
}

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
