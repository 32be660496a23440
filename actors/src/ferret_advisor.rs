//! FerretAdvisor: hosts the daemon's discovery loop.
//!
//! Instance 0 runs the core's [`Engine`] — the Generalizer's hittage, the FerretAdvisor's and
//! FilterAdvisor's fingerprints, the Ferrets' choice of links and the Mapmaker's completion of
//! features — in rounds: before each round it reads the feedback from PageDb and gives the loop
//! what is new (a like starts a crawl), then has up to a round's worth of pages fetched by the
//! Ferret pool ([`crate::ferret_crawler`]; many at once, each parsed and its features computed
//! on its Ferret's thread), has the Filter pool ([`crate::filter`]) vote on each page a ferret
//! fingerprint approved (a vote no Filter answers is taken here), and sends every page fetched and
//! every page accepted to the Mapmaker pool ([`crate::mapmaker`]), which writes them to PageDb
//! in batches; a round ends when they are written. The loop's verdicts on each page (approved
//! by a ferret fingerprint, accepted by a filter) are marked in the shared
//! [`PageCache`], where the Ferrets put every page they fetch. After each round it publishes the
//! fingerprints and the counts on the [`DiscoveryBoard`] (`GET /api/fingerprints`). The budget
//! is `[discovery] pages_per_hour`; a round with nothing to fetch waits [`IDLE_PAUSE`].
//!
//! After a round that changed them, the fingerprint pools (with their counts and
//! reliabilities) and the representatives' history are saved in PageDb: the store's pools in
//! use are the loop's, flushed fingerprints are kept with their flush time.
//!
//! **Restarts** (a panic, or the daemon killed): the loop starts from the store — the map
//! (accepted pages with their features and links), the feedback, every URL fetched (not
//! fetched again), the fingerprints in use and the representatives' history of the last round
//! saved.
//!
//! **Lighthouses.** The loop's lighthouses are the Generalizer's ([`crate::generalizer`]):
//! instance 0 subscribes to them at start ([`SubscribeLighthouses`]) and each round begins with
//! the last set published, handed to the engine ([`Engine::set_lighthouses`]); until the first
//! arrives the engine picks its own.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix::AsyncContext as _;
use ferret::config::Settings;
use ferret::discovery::advisor::{FerretFingerprint, RepresentativeHistory};
use ferret::discovery::engine::{
    DiscoveryEvent, Earlier, Engine, EngineCounts, RestoredPage, VoteOrder,
};
use ferret::discovery::features::Features;
use ferret::discovery::filter::FilterFingerprint;
use ferret::discovery::frontier::FetchOrder;
use ferret::Role;
use serde::Serialize;
use tracing::{info, warn, Instrument as _};

use crate::discover::{drive, engine_params, Done};
use crate::ferret_crawler::{CachedPage, PageCache};
use crate::instance::{Cx, Handle, Instance, RoleActor};
use crate::messages::{
    Envelope, FeedbackAfter, FetchPage, FetchedSince, FlushMap, LighthousesChanged, LoadAccepted,
    LoadDiscoveryState, LoadFetched, MapPage, SaveDiscoveryState, SubscribeLighthouses, VotePage,
};
use crate::pool::Route;
use crate::storage::{DiscoveryState, FingerprintState};

/// How long a round that found nothing to fetch waits before the next.
pub const IDLE_PAUSE: Duration = Duration::from_secs(5);

/// Pages a round fetches at most.
const ROUND: u64 = 64;

/// What the loop shows the HTTP API. Clones are shallow.
#[derive(Clone, Default)]
pub struct DiscoveryBoard {
    inner: Arc<Mutex<DiscoverySnapshot>>,
}

/// The loop's state after its last round.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DiscoverySnapshot {
    /// The ferret fingerprints in the pool.
    pub ferret: Vec<FerretFingerprint>,
    /// The filter fingerprints.
    pub filters: Vec<FilterFingerprint>,
    /// The lighthouses the fingerprints are made from, highest hittage first.
    pub lighthouses: Vec<String>,
    /// The loop's counts since the daemon started.
    pub counts: EngineCounts,
    /// Rounds run.
    pub rounds: u64,
}

impl DiscoveryBoard {
    /// The last snapshot.
    pub fn snapshot(&self) -> DiscoverySnapshot {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn publish(&self, engine: &Engine, rounds: u64) {
        let snapshot = DiscoverySnapshot {
            ferret: engine.advisor().pool().to_vec(),
            filters: engine
                .filters()
                .filters()
                .iter()
                .map(|f| FilterFingerprint {
                    // The representatives' features are large; their URLs say enough here.
                    representatives: f
                        .representatives
                        .iter()
                        .map(|(url, _)| (url.clone(), Features::default()))
                        .collect(),
                    ..f.clone()
                })
                .collect(),
            lighthouses: engine.lighthouses().to_vec(),
            counts: engine.counts(),
            rounds,
        };
        *self.inner.lock().unwrap_or_else(|e| e.into_inner()) = snapshot;
    }
}

/// What an instance is wired to; cloned into each instance by the factory.
#[derive(Clone)]
pub struct Wiring {
    /// The whole config: `[discovery]`, `[fetch]` and the seed.
    pub settings: Arc<Settings>,
    /// Where the API reads the loop's state.
    pub board: DiscoveryBoard,
    /// PageDb.
    pub feedback_after: Route<FeedbackAfter>,
    /// PageDb.
    pub load_accepted: Route<LoadAccepted>,
    /// PageDb.
    pub load_fetched: Route<LoadFetched>,
    /// PageDb.
    pub fetched_since: Route<FetchedSince>,
    /// PageDb.
    pub load_state: Route<LoadDiscoveryState>,
    /// PageDb.
    pub save_state: Route<SaveDiscoveryState>,
    /// The Ferrets, which fetch.
    pub fetch: Route<FetchPage>,
    /// The Filters, which vote.
    pub vote: Route<VotePage>,
    /// The Mapmakers, which write pages to PageDb.
    pub map: Route<MapPage>,
    /// See `map`.
    pub flush: Route<FlushMap>,
    /// The Generalizer, for its lighthouses.
    pub subscribe: Route<SubscribeLighthouses>,
    /// How many Mapmakers there are.
    pub mapmakers: usize,
    /// The cache of every page fetched, shared with the Ferrets (which add each page) and the
    /// API: the loop marks its verdicts there.
    pub cache: PageCache,
}

/// One instance of the FerretAdvisor pool. See the module docs.
pub struct FerretAdvisor {
    wiring: Wiring,
    /// The lighthouses last published and not yet taken by the loop.
    lighthouses: Published,
}

/// The Generalizer's last lighthouses, from the instance's mailbox to its loop.
type Published = Arc<Mutex<Option<Vec<(String, f64)>>>>;

impl FerretAdvisor {
    /// An instance.
    pub fn new(wiring: Wiring) -> FerretAdvisor {
        FerretAdvisor {
            wiring,
            lighthouses: Published::default(),
        }
    }
}

impl RoleActor for FerretAdvisor {
    const ROLE: &'static str = Role::FerretAdvisor.name();

    fn started(&mut self, cx: &mut Cx<'_, Self>) {
        if cx.instance() != 0 || !self.wiring.settings.discovery.crawl.enabled {
            return;
        }
        let subscriber = cx
            .ctx()
            .address()
            .recipient::<Envelope<LighthousesChanged>>();
        let subscribe = cx.envelope(SubscribeLighthouses { subscriber });
        if let Err(err) = self.wiring.subscribe.do_send(subscribe) {
            warn!(error = %err, "Could not subscribe to the lighthouses.");
        }
        let task = run_loop(self.wiring.clone(), self.lighthouses.clone());
        // Tied to the instance: a restarted instance starts a fresh loop from the store.
        cx.ctx()
            .spawn(actix::fut::wrap_future::<_, Instance<FerretAdvisor>>(
                task.in_current_span(),
            ));
    }
}

impl Handle<LighthousesChanged> for FerretAdvisor {
    type Reply = ();

    fn handle(&mut self, msg: LighthousesChanged, _: &mut Cx<'_, Self>) {
        *self.lighthouses.lock().unwrap_or_else(|e| e.into_inner()) = Some(msg.lighthouses);
    }
}

async fn run_loop(wiring: Wiring, lighthouses: Published) {
    let settings = &wiring.settings;
    let crawl = &settings.discovery.crawl;
    let mut engine = Engine::new(engine_params(settings, crawl));
    // The id of the last feedback event the loop has been given.
    let mut seen_feedback = 0;
    if let Err(err) = restore(&wiring, &mut engine, &mut seen_feedback).await {
        warn!(error = %err, "Cannot read the store; discovery is off until a restart.");
        return;
    }
    let mut rounds = 0u64;
    // The state the store has (as restored), saved again when a round changes it.
    let mut saved = discovery_state(&engine);
    // Pages the hourly budget allows now: refilled continuously, at most an hour's worth.
    let per_hour = crawl.pages_per_hour;
    let mut allowance = per_hour.min(ROUND) as f64;
    let mut last = std::time::Instant::now();
    loop {
        let published = lighthouses.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(published) = published {
            engine.set_lighthouses(&published);
        }
        match new_feedback(&wiring.feedback_after, &mut seen_feedback).await {
            Ok(feedback) => {
                for event in feedback {
                    engine.feedback(event);
                }
            }
            Err(err) => warn!(error = %err, "Cannot read the feedback."),
        }
        if per_hour > 0 {
            let hours = last.elapsed().as_secs_f64() / 3_600.0;
            allowance = (allowance + hours * per_hour as f64).min(per_hour as f64);
        }
        last = std::time::Instant::now();
        let budget = if per_hour == 0 {
            ROUND
        } else {
            (allowance.floor() as u64).min(ROUND)
        };
        let fetch = |order: FetchOrder| {
            let copy = order.clone();
            let reply = wiring.fetch.send(Envelope::new(FetchPage { order }));
            async move {
                reply
                    .await
                    .unwrap_or_else(|err| Done::failed(copy, format!("no Ferret: {err}")))
            }
        };
        let vote = |order: VoteOrder| {
            let reply = wiring.vote.send(Envelope::new(VotePage {
                order: order.clone(),
            }));
            async move {
                match reply.await {
                    Ok(verdict) => Done::voted(&order, verdict),
                    // No Filter answered (one restarting, say): the vote is taken here rather
                    // than lost.
                    Err(err) => {
                        warn!(error = %err, url = %order.url, "No Filter answered; voting here.");
                        Done::vote_here(order).await
                    }
                }
            }
        };
        let report = drive(
            &mut engine,
            fetch,
            vote,
            budget,
            crawl.concurrency,
            |event| {
                let url = match &event {
                    DiscoveryEvent::Fetched { url, .. } => url,
                    DiscoveryEvent::Approved { url, fingerprint } => {
                        wiring.cache.approved(url, *fingerprint);
                        url
                    }
                    DiscoveryEvent::Accepted(page) => {
                        wiring
                            .cache
                            .accepted(&page.url, page.fingerprint, page.fetched_at_ms);
                        &page.url
                    }
                    DiscoveryEvent::Discarded { .. } => return Ok(()),
                };
                let key = url.clone();
                wiring
                    .map
                    .do_send_keyed(key.as_str(), Envelope::new(MapPage { event }))
                    .map_err(|err| anyhow::anyhow!("Mapmaker: {err}"))
            },
        )
        .await;
        // The round is in the store before the next begins.
        for index in 0..wiring.mapmakers {
            match wiring.flush.send_to(index, Envelope::new(FlushMap)).await {
                Ok(Ok(())) => {}
                Ok(Err(err)) => warn!(error = %err, "The map was not written."),
                Err(err) => warn!(error = %err, "A Mapmaker did not answer."),
            }
        }
        let state = discovery_state(&engine);
        if state != saved {
            let at_ms = crate::supervisor::unix_millis();
            match wiring
                .save_state
                .send(Envelope::new(SaveDiscoveryState {
                    state: state.clone(),
                    at_ms,
                }))
                .await
            {
                Ok(Ok(())) => saved = state,
                Ok(Err(err)) => warn!(error = %err, "Cannot save the fingerprints."),
                Err(err) => warn!(error = %err, "PageDb did not answer."),
            }
        }
        rounds += 1;
        wiring.board.publish(&engine, rounds);
        match report {
            Ok(report) => {
                allowance -= report.fetched.len() as f64;
                if !report.fetched.is_empty() {
                    info!(
                        fetched = report.fetched.len(),
                        accepted = report.accepted.len(),
                        "Discovery round."
                    );
                }
                if (report.fetched.len() as u64) < budget.max(1) {
                    tokio::time::sleep(IDLE_PAUSE).await;
                }
            }
            Err(err) => {
                warn!(error = %err, "Discovery round failed.");
                tokio::time::sleep(IDLE_PAUSE).await;
            }
        }
    }
}

/// The feedback recorded since the event with id `*last_id` (0: all of it), in recording
/// order; `*last_id` moves to the last one returned. Events are tracked by id, not by
/// position: the store sorts feedback by `at`, so an event posted with an earlier `at` than
/// one already seen would otherwise be missed, and a seen one given twice (a dislike charged
/// to its filter twice).
pub async fn new_feedback(
    route: &Route<FeedbackAfter>,
    last_id: &mut i64,
) -> anyhow::Result<Vec<ferret::discovery::hittage::Feedback>> {
    let stored = route
        .send(Envelope::new(FeedbackAfter { after_id: *last_id }))
        .await
        .map_err(|err| anyhow::anyhow!("PageDb did not answer: {err}"))??;
    if let Some(last) = stored.last() {
        *last_id = (*last_id).max(last.id);
    }
    Ok(stored.into_iter().map(|s| s.feedback).collect())
}

/// The store's map, feedback, fetched URLs, fingerprints and representatives, into the
/// engine; `seen_feedback` becomes the id of the last feedback event given.
async fn restore(
    wiring: &Wiring,
    engine: &mut Engine,
    seen_feedback: &mut i64,
) -> anyhow::Result<()> {
    let state = wiring
        .load_state
        .send(Envelope::new(LoadDiscoveryState))
        .await??;
    // Every event so far, in recording order; the loop resumes from them oldest first (a
    // stable sort keeps the recording order among equal times).
    let mut feedback = new_feedback(&wiring.feedback_after, seen_feedback).await?;
    feedback.sort_by_key(|event| event.at_ms);
    let earlier = Earlier {
        map: restored_pages(
            wiring
                .load_accepted
                .send(Envelope::new(LoadAccepted))
                .await??,
        ),
        kept: restored_pages(
            wiring
                .load_fetched
                .send(Envelope::new(LoadFetched))
                .await??,
        ),
        fetched: wiring
            .fetched_since
            .send(Envelope::new(FetchedSince { at_ms: 0 }))
            .await??,
        feedback,
        ..restored_state(state)
    };
    for (pages, accepted) in [(&earlier.map, true), (&earlier.kept, false)] {
        for page in pages {
            wiring.cache.restore(
                &page.url,
                CachedPage {
                    approved: page.approved,
                    fingerprint: None,
                    fetched_at_ms: page.fetched_at_ms,
                    accepted,
                },
            );
        }
    }
    let (pages, fetched, prints) = (
        earlier.map.len(),
        earlier.fetched.len(),
        earlier.ferret.len() + earlier.filters.len(),
    );
    engine.resume(earlier);
    info!(
        map = pages,
        fetched,
        fingerprints = prints,
        "Discovery resumed from the store."
    );
    Ok(())
}

/// The loop's fingerprints and representatives, as the store keeps them.
pub fn discovery_state(engine: &Engine) -> DiscoveryState {
    fn body<T: Serialize>(value: &T) -> Option<String> {
        serde_json::to_string(value)
            .inspect_err(|err| warn!(error = %err, "A fingerprint cannot be saved; left out."))
            .ok()
    }
    let mut representatives: Vec<(String, RepresentativeHistory)> = engine
        .history()
        .map(|(url, history)| (url.to_string(), history))
        .collect();
    representatives.sort_by(|a, b| a.0.cmp(&b.0));
    DiscoveryState {
        ferret: engine
            .advisor()
            .pool()
            .iter()
            .filter_map(|fp| {
                Some(FingerprintState {
                    ident: fp.id,
                    body: body(fp)?,
                    created_at_ms: fp.created_at_ms,
                    fetched: fp.fetched.into(),
                    approved: fp.approved.into(),
                    reliability: 1.0,
                })
            })
            .collect(),
        filters: engine
            .filters()
            .filters()
            .iter()
            .filter_map(|f| {
                Some(FingerprintState {
                    ident: f.id,
                    body: body(f)?,
                    created_at_ms: f.created_at_ms,
                    fetched: f.passed.into(),
                    approved: f.passed.into(),
                    reliability: f.reliability,
                })
            })
            .collect(),
        representatives,
    }
}

/// What the store kept of the loop's state, for [`Engine::resume`]; a fingerprint whose body
/// cannot be read is left out (the advisors make new ones) and logged.
pub fn restored_state(state: DiscoveryState) -> Earlier {
    fn read<T: serde::de::DeserializeOwned>(pool: &str, stored: Vec<FingerprintState>) -> Vec<T> {
        stored
            .into_iter()
            .filter_map(|fp| match serde_json::from_str(&fp.body) {
                Ok(print) => Some(print),
                Err(err) => {
                    warn!(pool, id = fp.ident, error = %err, "A stored fingerprint cannot be read; left out.");
                    None
                }
            })
            .collect()
    }
    Earlier {
        ferret: read("ferret", state.ferret),
        filters: read("filter", state.filters),
        history: state.representatives,
        ..Earlier::default()
    }
}

/// Stored pages for the engine, those never fetched left out.
pub fn restored_pages(pages: Vec<crate::storage::PageRecord>) -> Vec<RestoredPage> {
    pages.into_iter().filter_map(restored_page).collect()
}

/// A stored page for the engine; None for one never fetched.
fn restored_page(page: crate::storage::PageRecord) -> Option<RestoredPage> {
    let fetched_at_ms = page.fetched_at_ms?;
    Some(RestoredPage {
        features: serde_json::from_str(&page.attributes).unwrap_or_default(),
        url: page.url,
        title: page.title.unwrap_or_default(),
        links: page.links,
        filter: page.approved_by_filter.and_then(|f| f.parse().ok()),
        approved: page.approved,
        fingerprint: page.approved_by_fingerprint.and_then(|f| f.parse().ok()),
        fetched_at_ms,
    })
}
