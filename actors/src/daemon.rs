//! The whole daemon: every role's pool under the supervisor, the store, the HTTP server, and
//! the order things start and stop in.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use actix_rt::signal::unix::{signal, Signal, SignalKind};
use actix_web::dev::ServerHandle;
use anyhow::Context as _;
use ferret::config::{ActorCounts, Settings};
use ferret::Role;
use tracing::{info, warn};

use crate::clusterer::{Clusterer, SharedStories};
use crate::feed_fetcher::{FeedBook, FeedFetcher};
use crate::ferret_advisor::{DiscoveryBoard, FerretAdvisor};
use crate::ferret_crawler::{Ferret, PageCache};
use crate::filter::Filter;
use crate::generalizer::{Generalizer, LighthouseBoard};
use crate::instance::Handle;
use crate::listing_board::ListingBoard;
use crate::mapmaker::Mapmaker;
use crate::messages::{
    Envelope, GeneralizeNow, PagesByHittage, Recommendations, RecordFeedback, RecordRunStarted,
    RecordRunStopped,
};
use crate::on_air_detector::{OnAirDetector, Wiring};
use crate::page_db::PageDb;
use crate::page_fetcher::{PageFetcher, PageFetcherConfig};
use crate::pool::{Pool, Route};
use crate::roles::{FilterAdvisor, OffAirDetector};
use crate::storage::Store;
use crate::supervisor::{unix_millis, Runtime, RuntimeBuilder, RuntimeOptions};

/// One pool per role. Factories and handlers take the routes they need from here, so there
/// is no global registry and cycles between roles need no special wiring.
#[allow(missing_docs)]
pub struct Pools {
    pub page_db: Pool<PageDb>,
    pub generalizer: Pool<Generalizer>,
    pub clusterer: Pool<Clusterer>,
    pub mapmaker: Pool<Mapmaker>,
    pub filter: Pool<Filter>,
    pub ferret: Pool<Ferret>,
    pub filter_advisor: Pool<FilterAdvisor>,
    pub ferret_advisor: Pool<FerretAdvisor>,
    pub off_air_detector: Pool<OffAirDetector>,
    pub on_air_detector: Pool<OnAirDetector>,
    pub feed_fetcher: Pool<FeedFetcher>,
}

impl Pools {
    /// Empty pools sized from `[actors]`.
    pub fn new(counts: &ActorCounts) -> Pools {
        Pools {
            page_db: Pool::new(counts.count(Role::PageDb)),
            generalizer: Pool::new(counts.count(Role::Generalizer)),
            clusterer: Pool::new(counts.count(Role::Clusterer)),
            mapmaker: Pool::new(counts.count(Role::Mapmaker)),
            filter: Pool::new(counts.count(Role::Filter)),
            ferret: Pool::new(counts.count(Role::Ferret)),
            filter_advisor: Pool::new(counts.count(Role::FilterAdvisor)),
            ferret_advisor: Pool::new(counts.count(Role::FerretAdvisor)),
            off_air_detector: Pool::new(counts.count(Role::OffAirDetector)),
            on_air_detector: Pool::new(counts.count(Role::OnAirDetector)),
            feed_fetcher: Pool::new(counts.count(Role::FeedFetcher)),
        }
    }
}

/// The shared state the HTTP API reads.
#[derive(Clone)]
pub struct Boards {
    /// The feeds.
    pub feeds: FeedBook,
    /// The live listings.
    pub listings: ListingBoard,
    /// The stories, and how to rank them.
    pub stories: SharedStories,
    /// `[stories]` ranking weights.
    pub rank: ferret::stories::RankWeights,
    /// Discovery: the feedback intake, the page list and the lighthouses.
    pub discovery: DiscoveryRoutes,
}

/// Where the HTTP API sends feedback and asks for pages.
#[derive(Clone)]
pub struct DiscoveryRoutes {
    /// PageDb, to record feedback.
    pub feedback: Route<RecordFeedback>,
    /// PageDb, for the pages by hittage.
    pub pages: Route<PagesByHittage>,
    /// PageDb, for the recommendations.
    pub recommendations: Route<Recommendations>,
    /// The Generalizer (instance 0), to recompute after new feedback.
    pub generalize: Route<GeneralizeNow>,
    /// The latest lighthouses.
    pub lighthouses: LighthouseBoard,
    /// The discovery loop's fingerprints and counts.
    pub board: DiscoveryBoard,
    /// Every page the Ferrets fetched, with the loop's verdicts.
    pub cache: PageCache,
}

/// Opens the store, builds the HTTP client and the feed book, and starts every pool under the
/// supervisor, in [`Role::ALL`] order (consumers first). Must run inside an actix `System`.
pub fn start_runtime(settings: &Settings) -> anyhow::Result<(Runtime, Pools, Boards)> {
    let feeds = FeedBook::new(&settings.fetch, settings.feeds.clone())
        .context("building the HTTP client ([fetch] in the config)")?;
    let listings = ListingBoard::new(settings.listings.iter().map(|l| l.name.as_str()));
    let stories: SharedStories = Arc::new(Mutex::new(ferret::stories::StoryBook::new(
        settings.stories.cluster.clone(),
    )));
    // Opened here, once, so that a bad path or a database from a newer ferret fails start-up
    // with a clear message; a restarted PageDb reopens it.
    let path = settings.storage.path.clone();
    let first_store = Mutex::new(Some(Store::open(&path)?));
    let pools = Pools::new(&settings.actors);
    let policy = |role| settings.supervisor.policy(role);

    let mut builder = RuntimeBuilder::new(RuntimeOptions::from_settings(settings));
    builder.supervise(&pools.page_db, policy(Role::PageDb), move |_| {
        let reused = first_store.lock().unwrap_or_else(|e| e.into_inner()).take();
        let store = match reused {
            Some(store) => store,
            None => Store::open(&path)?,
        };
        Ok(PageDb::new(store))
    });
    let lighthouses = LighthouseBoard::default();
    let discovery_board = DiscoveryBoard::default();
    let page_cache = PageCache::default();
    // One client for every Ferret (clones share its connections).
    let crawl = &settings.discovery.crawl;
    let fetcher = PageFetcher::new(PageFetcherConfig {
        pool_per_host: crawl.per_host_concurrency as usize,
        ..PageFetcherConfig::from_settings(&settings.fetch, crawl.policy)
    })
    .context("building the page client ([fetch] and [discovery] in the config)")?;
    builder
        .supervise(&pools.generalizer, policy(Role::Generalizer), {
            let wiring = crate::generalizer::Wiring {
                settings: settings.discovery.clone(),
                board: lighthouses.clone(),
                load_history: pools.page_db.route(),
                load_feedback: pools.page_db.route(),
                load_links: pools.page_db.route(),
                record: pools.page_db.route(),
                tick: pools.generalizer.route(),
                history: pools.generalizer.route(),
                input: pools.generalizer.route(),
            };
            move |_| Ok(Generalizer::new(wiring.clone()))
        })
        .supervise(&pools.clusterer, policy(Role::Clusterer), {
            let wiring = crate::clusterer::Wiring {
                settings: settings.stories.clone(),
                stories: stories.clone(),
                subscribe: pools.feed_fetcher.route(),
                fetch: pools.feed_fetcher.route(),
                record: pools.page_db.route(),
                load: pools.page_db.route(),
                loaded: pools.clusterer.route(),
            };
            move |_| Ok(Clusterer::new(wiring.clone()))
        })
        .supervise(&pools.mapmaker, policy(Role::Mapmaker), {
            let upsert = pools.page_db.route();
            move |_| Ok(Mapmaker::new(upsert.clone()))
        })
        .supervise(&pools.filter, policy(Role::Filter), |_| Ok(Filter))
        .supervise(&pools.ferret, policy(Role::Ferret), {
            let cache = page_cache.clone();
            move |_| Ok(Ferret::new(fetcher.clone(), cache.clone()))
        })
        .supervise(&pools.filter_advisor, policy(Role::FilterAdvisor), |_| {
            Ok(FilterAdvisor)
        })
        .supervise(&pools.ferret_advisor, policy(Role::FerretAdvisor), {
            let wiring = crate::ferret_advisor::Wiring {
                settings: Arc::new(settings.clone()),
                board: discovery_board.clone(),
                feedback_after: pools.page_db.route(),
                load_accepted: pools.page_db.route(),
                load_fetched: pools.page_db.route(),
                fetched_since: pools.page_db.route(),
                load_state: pools.page_db.route(),
                save_state: pools.page_db.route(),
                fetch: pools.ferret.route(),
                vote: pools.filter.route(),
                map: pools.mapmaker.route(),
                flush: pools.mapmaker.route(),
                subscribe: pools.generalizer.route(),
                mapmakers: pools.mapmaker.len(),
                cache: page_cache.clone(),
            };
            move |_| Ok(FerretAdvisor::new(wiring.clone()))
        })
        .supervise(
            &pools.off_air_detector,
            policy(Role::OffAirDetector),
            |_| Ok(OffAirDetector),
        )
        .supervise(
            &pools.on_air_detector,
            policy(Role::OnAirDetector),
            OnAirDetector::factory(
                settings.listings.clone(),
                &pools.on_air_detector,
                Wiring {
                    client: feeds.client().clone(),
                    board: listings.clone(),
                    load: pools.page_db.route(),
                    record: pools.page_db.route(),
                    mark: pools.page_db.route(),
                    reads: pools.page_db.route(),
                    tick: pools.on_air_detector.route(),
                    loaded: pools.on_air_detector.route(),
                    read: pools.on_air_detector.route(),
                    emitted: pools.on_air_detector.route(),
                },
            ),
        )
        .supervise(
            &pools.feed_fetcher,
            policy(Role::FeedFetcher),
            FeedFetcher::factory(feeds.clone(), &pools.feed_fetcher, settings.runtime.seed),
        )
        .restart_log(pools.page_db.route());
    let runtime = builder.start()?;
    let rank = settings.stories.rank;
    let discovery = DiscoveryRoutes {
        feedback: pools.page_db.route(),
        pages: pools.page_db.route(),
        recommendations: pools.page_db.route(),
        generalize: pools.generalizer.route(),
        lighthouses,
        board: discovery_board,
        cache: page_cache,
    };
    Ok((
        runtime,
        pools,
        Boards {
            feeds,
            listings,
            stories,
            rank,
            discovery,
        },
    ))
}

/// The running daemon. Clones are shallow.
#[derive(Clone)]
pub struct Daemon {
    runtime: Runtime,
    server: ServerHandle,
    addr: SocketAddr,
    run_stopped: Route<RecordRunStopped>,
    run_id: i64,
    stopping: Arc<AtomicBool>,
    feed_fetcher: Pool<FeedFetcher>,
    boards: Boards,
}

impl Daemon {
    /// Starts the runtime, records the run and starts the HTTP server; returns once the
    /// server is listening. Must run inside an actix `System`.
    pub async fn start(settings: &Settings) -> anyhow::Result<Daemon> {
        // Bound first: a taken port fails start-up before any actor runs.
        let bind = SocketAddr::new(settings.server.bind, settings.server.port);
        let listener = crate::http::bind(bind)
            .with_context(|| format!("cannot listen on {bind} ([server] in the config)"))?;
        let addr = listener.local_addr()?;
        let (runtime, pools, boards) = start_runtime(settings)?;
        let run_id = pools
            .page_db
            .route()
            .send(Envelope::new(RecordRunStarted {
                version: env!("CARGO_PKG_VERSION").to_string(),
                at_ms: unix_millis(),
            }))
            .await
            .context("recording the run")??;

        let server = crate::http::serve(
            listener,
            settings.server.workers,
            settings.runtime.shutdown_grace,
            settings.debug.fault_injection,
            runtime.clone(),
            boards.clone(),
        )?;
        let handle = server.handle();
        actix_rt::spawn(server);
        info!(%addr, run_id, fault_injection = settings.debug.fault_injection, "HTTP server listening.");
        Ok(Daemon {
            runtime,
            server: handle,
            addr,
            run_stopped: pools.page_db.route(),
            run_id,
            stopping: Arc::default(),
            feed_fetcher: pools.feed_fetcher,
            boards,
        })
    }

    /// A route to the FeedFetcher pool, to subscribe to feeds or fetch one now.
    pub fn feed_fetcher<M>(&self) -> Route<M>
    where
        FeedFetcher: Handle<M>,
        M: actix::Message + Send + 'static,
        M::Result: Send,
    {
        self.feed_fetcher.route()
    }

    /// The state of every feed source.
    pub fn feeds(&self) -> &FeedBook {
        &self.boards.feeds
    }

    /// The live listings' board.
    pub fn listings(&self) -> &ListingBoard {
        &self.boards.listings
    }

    /// The address the HTTP server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The supervised runtime.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// Stops cleanly: stop intake (the HTTP server finishes the requests it has), record the
    /// run's clean end, then let the supervisor drain the mailboxes within the grace period,
    /// stop the pools in reverse start-up order (the store last, flushed) and stop the system
    /// with exit code 0. A second call while stopping does nothing.
    pub async fn shutdown(&self) {
        if self.stopping.swap(true, Ordering::SeqCst) {
            return;
        }
        self.server.stop(true).await;
        let stopped = RecordRunStopped {
            run_id: self.run_id,
            at_ms: unix_millis(),
        };
        let recorded = match self.run_stopped.send(Envelope::new(stopped)).await {
            Ok(result) => result.map_err(anyhow::Error::from),
            Err(err) => Err(err.into()),
        };
        if let Err(err) = recorded {
            warn!(error = %err, "Could not record the clean end of the run.");
        }
        self.runtime.shutdown();
    }

    /// Shuts down on the first of `signals`; a second one stops at once (exit 130).
    pub fn shutdown_on(&self, signals: Vec<(Signal, &'static str)>) {
        for (mut stream, name) in signals {
            let daemon = self.clone();
            actix_rt::spawn(async move {
                while stream.recv().await.is_some() {
                    if daemon.stopping.load(Ordering::SeqCst) {
                        warn!(signal = name, "Second signal; stopping now.");
                        actix::System::current().stop_with_code(130);
                        return;
                    }
                    info!(signal = name, "Signal received; shutting down.");
                    daemon.shutdown().await;
                }
            });
        }
    }
}

/// Takes over SIGINT and SIGTERM. Called before anything starts, so that a signal that comes
/// at any moment after start-up (even before the daemon is ready) is queued, not fatal.
fn take_signals() -> std::io::Result<Vec<(Signal, &'static str)>> {
    Ok(vec![
        (signal(SignalKind::interrupt())?, "SIGINT"),
        (signal(SignalKind::terminate())?, "SIGTERM"),
    ])
}

/// `ferret run`: starts the daemon and runs until a signal or an escalation. Returns the exit
/// code, or the escalation as an error naming the role and its last failure.
pub fn run(settings: &Settings) -> anyhow::Result<i32> {
    let system = actix_rt::System::new();
    let daemon = system.block_on(async {
        let signals = take_signals().context("listening for signals")?;
        let daemon = Daemon::start(settings).await?;
        daemon.shutdown_on(signals);
        anyhow::Ok(daemon)
    })?;
    let code = system.run_with_code()?;
    match daemon.runtime().escalation() {
        Some(escalation) => Err(anyhow::anyhow!("stopped: {escalation}")),
        None => Ok(code),
    }
}
