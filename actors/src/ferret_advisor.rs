//! FerretAdvisor: hosts the daemon's discovery loop.
//!
//! Instance 0 runs the core's [`Engine`] — the Generalizer's hittage, the FerretAdvisor's and
//! FilterAdvisor's fingerprints, the Ferrets' choice of links, the Filters' vote and the
//! Mapmaker's completion of features — in rounds: before each round it reads the feedback from
//! PageDb and gives the loop what is new (a like starts a crawl), then has up to a round's
//! worth of pages fetched by the Ferret pool ([`crate::ferret_crawler`]; many at once, each
//! parsed and its features computed on its Ferret's thread), and sends every page fetched and
//! every page accepted to the Mapmaker pool ([`crate::mapmaker`]), which writes them to PageDb
//! in batches; a round ends when they are written. After each round it publishes the
//! fingerprints and the counts on the [`DiscoveryBoard`] (`GET /api/fingerprints`). The budget
//! is `[discovery] pages_per_hour`; a round with nothing to fetch waits [`IDLE_PAUSE`].
//!
//! **Restarts** (a panic, or the daemon killed): the loop starts from the store — the map
//! (accepted pages with their features and links), the feedback, and every URL fetched, which
//! is not fetched again. Fingerprints are rebuilt from the map.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix::AsyncContext as _;
use ferret::config::Settings;
use ferret::discovery::advisor::FerretFingerprint;
use ferret::discovery::engine::{DiscoveryEvent, Earlier, Engine, EngineCounts, RestoredPage};
use ferret::discovery::features::Features;
use ferret::discovery::filter::FilterFingerprint;
use ferret::discovery::frontier::FetchOrder;
use ferret::Role;
use serde::Serialize;
use tracing::{info, warn, Instrument as _};

use crate::discover::{drive, engine_params, Done};
use crate::instance::{Cx, Instance, RoleActor};
use crate::messages::{
    Envelope, FetchPage, FetchedSince, FlushMap, LoadAccepted, LoadFeedback, LoadFetched, MapPage,
};
use crate::pool::Route;

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
    pub load_feedback: Route<LoadFeedback>,
    /// PageDb.
    pub load_accepted: Route<LoadAccepted>,
    /// PageDb.
    pub load_fetched: Route<LoadFetched>,
    /// PageDb.
    pub fetched_since: Route<FetchedSince>,
    /// The Ferrets, which fetch.
    pub fetch: Route<FetchPage>,
    /// The Mapmakers, which write pages to PageDb.
    pub map: Route<MapPage>,
    /// See `map`.
    pub flush: Route<FlushMap>,
    /// How many Mapmakers there are.
    pub mapmakers: usize,
}

/// One instance of the FerretAdvisor pool. See the module docs.
pub struct FerretAdvisor {
    wiring: Wiring,
}

impl FerretAdvisor {
    /// An instance.
    pub fn new(wiring: Wiring) -> FerretAdvisor {
        FerretAdvisor { wiring }
    }
}

impl RoleActor for FerretAdvisor {
    const ROLE: &'static str = Role::FerretAdvisor.name();

    fn started(&mut self, cx: &mut Cx<'_, Self>) {
        if cx.instance() != 0 || !self.wiring.settings.discovery.crawl.enabled {
            return;
        }
        let task = run_loop(self.wiring.clone());
        // Tied to the instance: a restarted instance starts a fresh loop from the store.
        cx.ctx()
            .spawn(actix::fut::wrap_future::<_, Instance<FerretAdvisor>>(
                task.in_current_span(),
            ));
    }
}

async fn run_loop(wiring: Wiring) {
    let settings = &wiring.settings;
    let crawl = &settings.discovery.crawl;
    let mut engine = Engine::new(engine_params(settings, crawl));
    let mut seen_feedback = 0;
    if let Err(err) = restore(&wiring, &mut engine, &mut seen_feedback).await {
        warn!(error = %err, "Cannot read the store; discovery is off until a restart.");
        return;
    }
    let mut rounds = 0u64;
    // Pages the hourly budget allows now: refilled continuously, at most an hour's worth.
    let per_hour = crawl.pages_per_hour;
    let mut allowance = per_hour.min(ROUND) as f64;
    let mut last = std::time::Instant::now();
    loop {
        match wiring.load_feedback.send(Envelope::new(LoadFeedback)).await {
            Ok(Ok(feedback)) => {
                for event in feedback.into_iter().skip(seen_feedback) {
                    seen_feedback += 1;
                    engine.feedback(event);
                }
            }
            Ok(Err(err)) => warn!(error = %err, "Cannot read the feedback."),
            Err(err) => warn!(error = %err, "PageDb did not answer."),
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
        let report = drive(&mut engine, fetch, budget, crawl.concurrency, |event| {
            let url = match event {
                DiscoveryEvent::Fetched { url, .. } => url,
                DiscoveryEvent::Accepted(page) => &page.url,
                DiscoveryEvent::Discarded { .. } => return Ok(()),
            };
            wiring
                .map
                .do_send_keyed(
                    url.as_str(),
                    Envelope::new(MapPage {
                        event: event.clone(),
                    }),
                )
                .map_err(|err| anyhow::anyhow!("Mapmaker: {err}"))
        })
        .await;
        // The round is in the store before the next begins.
        for index in 0..wiring.mapmakers {
            match wiring.flush.send_to(index, Envelope::new(FlushMap)).await {
                Ok(Ok(())) => {}
                Ok(Err(err)) => warn!(error = %err, "The map was not written."),
                Err(err) => warn!(error = %err, "A Mapmaker did not answer."),
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

/// The store's map, feedback and fetched URLs, into the engine.
async fn restore(
    wiring: &Wiring,
    engine: &mut Engine,
    seen_feedback: &mut usize,
) -> anyhow::Result<()> {
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
        feedback: wiring
            .load_feedback
            .send(Envelope::new(LoadFeedback))
            .await??,
    };
    let (pages, fetched) = (earlier.map.len(), earlier.fetched.len());
    *seen_feedback = earlier.feedback.len();
    engine.resume(earlier);
    info!(map = pages, fetched, "Discovery resumed from the store.");
    Ok(())
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
        fetched_at_ms,
    })
}
