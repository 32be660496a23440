//! FeedFetcher: fetches the `[[feeds]]` sources on their intervals through the shared HTTP
//! client and hands each outcome to the source's subscribers.
//!
//! Each source belongs to the instance keyed routing picks for its host, which sends itself
//! a [`FetchNow`] at start-up and then every interval; so a host's sources share an instance.
//! The per-source state (validators for conditional GET, counters, last error, subscribers)
//! and the per-host concurrency limits live in a [`FeedBook`] shared by the pool, so they
//! survive restarts and `GET /api/feeds` and `/metrics` read them without a message.
//!
//! A fetch runs as a future beside the instance, which keeps handling messages: retries wait
//! out their back-off (decided by [`ferret::fetch::RetryPolicy`], jitter drawn from the
//! instance's seeded RNG) without blocking other sources.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use actix::{AsyncContext as _, Recipient, ResponseFuture};
use ferret::config::{FeedSource, FetchSettings};
use ferret::fetch::{
    parse_retry_after, FetchError, LastError, RetryPolicy, SourceStats, Validators,
};
use ferret::Role;
use rand::rngs::SmallRng;
use rand::{Rng as _, SeedableRng as _};
use tokio::sync::Semaphore;
use tracing::{debug, info, warn, Instrument as _};

use crate::http_client::{Failure, HttpClient, Reply};
use crate::instance::{Cx, Handle, RoleActor};
use crate::messages::{
    Envelope, FeedStats, FeedStatus, FeedUpdate, FetchFailure, FetchNow, FetchOutcome,
    FetchRefused, Fetched, MessageId, Subscribe,
};
use crate::pool::{Pool, Route};
use crate::supervisor::unix_millis;

type Subscriber = Recipient<Envelope<FeedUpdate>>;

/// The state of every source, shared by the FeedFetcher pool, the HTTP API and the metrics.
/// Clones are shallow.
#[derive(Clone)]
pub struct FeedBook {
    inner: Arc<BookInner>,
}

struct BookInner {
    client: HttpClient,
    retry: RetryPolicy,
    per_host: usize,
    sources: Vec<FeedSource>,
    state: Mutex<BookState>,
}

#[derive(Default)]
struct BookState {
    sources: BTreeMap<String, SourceState>,
    everything: Vec<Subscriber>,
    hosts: HashMap<String, Arc<Semaphore>>,
}

#[derive(Default)]
struct SourceState {
    stats: SourceStats,
    validators: Validators,
    in_flight: bool,
    subscribers: Vec<Subscriber>,
}

impl FeedBook {
    /// The book of `sources`, fetched through a client built from `fetch`.
    pub fn new(fetch: &FetchSettings, sources: Vec<FeedSource>) -> anyhow::Result<FeedBook> {
        let client = HttpClient::new(fetch)?;
        let state = BookState {
            sources: sources
                .iter()
                .map(|s| (s.name.clone(), SourceState::default()))
                .collect(),
            ..BookState::default()
        };
        Ok(FeedBook {
            inner: Arc::new(BookInner {
                client,
                retry: fetch.retry,
                per_host: fetch.per_host_concurrency,
                sources,
                state: Mutex::new(state),
            }),
        })
    }

    /// The configured sources, in config order.
    pub fn sources(&self) -> &[FeedSource] {
        &self.inner.sources
    }

    /// Every source's status, in config order.
    pub fn statuses(&self) -> Vec<FeedStatus> {
        let state = self.lock();
        self.inner
            .sources
            .iter()
            .filter_map(|source| {
                let s = state.sources.get(&source.name)?;
                Some(FeedStatus {
                    name: source.name.clone(),
                    url: source.url.clone(),
                    interval_secs: source.interval.as_secs(),
                    in_flight: s.in_flight,
                    subscribers: s.subscribers.len(),
                    etag: s.validators.etag.clone(),
                    last_modified: s.validators.last_modified.clone(),
                    stats: s.stats.clone(),
                })
            })
            .collect()
    }

    fn lock(&self) -> MutexGuard<'_, BookState> {
        // Nothing panics while the lock is held, so a poisoned lock still guards sound data.
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn with<T>(&self, name: &str, f: impl FnOnce(&mut SourceState) -> T) -> Option<T> {
        self.lock().sources.get_mut(name).map(f)
    }

    fn subscribe(&self, source: Option<&str>, subscriber: Subscriber) -> Result<(), FetchRefused> {
        let mut state = self.lock();
        match source {
            None => state.everything.push(subscriber),
            Some(name) => state
                .sources
                .get_mut(name)
                .ok_or_else(|| FetchRefused::UnknownSource(name.to_string()))?
                .subscribers
                .push(subscriber),
        }
        Ok(())
    }

    /// Marks `name` in flight, or says why it cannot be fetched now.
    fn begin(&self, name: &str) -> Result<(FeedSource, InFlight), FetchRefused> {
        let unknown = || FetchRefused::UnknownSource(name.to_string());
        let source = self
            .inner
            .sources
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(unknown)?;
        let mut state = self.lock();
        let entry = state.sources.get_mut(name).ok_or_else(unknown)?;
        if entry.in_flight {
            return Err(FetchRefused::InFlight(name.to_string()));
        }
        entry.in_flight = true;
        Ok((
            source.clone(),
            InFlight {
                book: self.clone(),
                name: name.to_string(),
            },
        ))
    }

    fn host_limit(&self, host: &str) -> Arc<Semaphore> {
        let per_host = self.inner.per_host;
        Arc::clone(
            self.lock()
                .hosts
                .entry(host.to_string())
                .or_insert_with(|| Arc::new(Semaphore::new(per_host))),
        )
    }

    /// Fetches `source`, retrying 429 and 5xx answers as the retry policy says; `jitter`
    /// holds one value in `[0, 1)` per possible retry.
    async fn fetch(&self, source: &FeedSource, jitter: &[f64]) -> FetchOutcome {
        let name = source.name.as_str();
        let host = self.host_limit(source.host());
        let mut retry = 0;
        loop {
            let validators = self
                .with(name, |s| {
                    s.stats.record_read();
                    s.validators.clone()
                })
                .unwrap_or_default();
            let result = {
                // Never closed, so acquiring only waits.
                let _permit = host.acquire().await;
                self.inner.client.get(&source.url, &validators).await
            };
            let reply = match result {
                Ok(reply) => reply,
                Err(failure) => return FetchOutcome::Failed(failure.into()),
            };
            match reply.status {
                304 => return FetchOutcome::NotModified,
                200..=299 => return self.fetched(name, reply),
                status => {
                    retry += 1;
                    let now = unix_millis().div_euclid(1000);
                    let wait = reply
                        .retry_after
                        .as_deref()
                        .and_then(|value| parse_retry_after(value, now));
                    let jitter = jitter.get(retry as usize - 1).copied().unwrap_or(0.5);
                    let Some(delay) = self.inner.retry.retry_delay(retry, status, wait, jitter)
                    else {
                        return FetchOutcome::Failed(self.status_failure(reply, retry - 1, wait));
                    };
                    self.with(name, |s| s.stats.record_retry(status));
                    info!(source = name, url = %reply.url, status, retry, delay_ms = delay.as_millis() as u64, "Retrying feed fetch.");
                    actix_rt::time::sleep(delay).await;
                }
            }
        }
    }

    fn fetched(&self, name: &str, reply: Reply) -> FetchOutcome {
        self.with(name, |s| s.validators = reply.validators);
        FetchOutcome::Fetched(Arc::new(Fetched {
            charset: reply
                .content_type
                .as_deref()
                .and_then(ferret::fetch::charset_of)
                .map(str::to_string),
            url: reply.url,
            status: reply.status,
            body: reply.body,
        }))
    }

    fn status_failure(&self, reply: Reply, retries: u32, wait: Option<Duration>) -> FetchFailure {
        let status = reply.status;
        let reason = reqwest::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("");
        let mut cause = format!("the server answered {status} {reason}");
        if ferret::fetch::is_retryable(status) {
            let max_wait = self.inner.retry.max_retry_after;
            match wait {
                Some(wait) if wait > max_wait => cause.push_str(&format!(
                    "; its Retry-After of {}s exceeds fetch.max_retry_after_secs ({}s)",
                    wait.as_secs(),
                    max_wait.as_secs()
                )),
                _ => cause.push_str(&format!(" after {retries} retries")),
            }
        }
        FetchFailure {
            error: FetchError::Status { status },
            url: reply.url,
            status: Some(status),
            cause,
        }
    }

    /// Records how the fetch ended, logs it and sends it to the subscribers.
    fn finish(&self, name: &str, outcome: FetchOutcome, parent: Option<MessageId>) -> FeedUpdate {
        let at_ms = unix_millis();
        match &outcome {
            FetchOutcome::Fetched(fetched) => {
                debug!(source = name, url = %fetched.url, status = fetched.status, bytes = fetched.body.len(), "Feed fetched.")
            }
            FetchOutcome::NotModified => debug!(source = name, "Feed not modified."),
            FetchOutcome::Failed(failure) => warn!(
                source = name,
                url = %failure.url,
                status = failure.status,
                kind = failure.error.kind(),
                error = %failure.error,
                cause = %failure.cause,
                "Feed fetch failed."
            ),
        }
        let update = FeedUpdate {
            source: name.to_string(),
            outcome,
        };
        let mut state = self.lock();
        let BookState {
            sources,
            everything,
            ..
        } = &mut *state;
        let Some(entry) = sources.get_mut(name) else {
            return update;
        };
        match &update.outcome {
            FetchOutcome::Fetched(fetched) => entry.stats.record_fetched(fetched.status, at_ms),
            FetchOutcome::NotModified => entry.stats.record_not_modified(at_ms),
            FetchOutcome::Failed(failure) => entry.stats.record_failure(LastError {
                kind: failure.error.kind(),
                message: format!("{}: {}", failure.error, failure.cause),
                url: failure.url.clone(),
                status: failure.status,
                at_ms,
            }),
        }
        for subscribers in [&mut entry.subscribers, everything] {
            subscribers.retain(|subscriber| {
                let envelope = match parent {
                    Some(parent) => Envelope::caused_by(parent, update.clone()),
                    None => Envelope::new(update.clone()),
                };
                // Queued even over capacity (an update is never dropped for a full mailbox);
                // a subscriber whose mailbox closed is dropped.
                let alive = subscriber.connected();
                if alive {
                    subscriber.do_send(envelope);
                }
                alive
            });
        }
        update
    }
}

impl From<Failure> for FetchFailure {
    fn from(failure: Failure) -> FetchFailure {
        FetchFailure {
            error: failure.error,
            url: failure.url,
            status: failure.status,
            cause: failure.cause,
        }
    }
}

/// Clears a source's in-flight mark when its fetch ends or is dropped.
struct InFlight {
    book: FeedBook,
    name: String,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.book.with(&self.name, |s| s.in_flight = false);
    }
}

/// One instance of the FeedFetcher pool. See the module docs.
pub struct FeedFetcher {
    book: FeedBook,
    /// The sources whose host keyed routing maps to this instance: it schedules them.
    own: Vec<FeedSource>,
    /// The pool's own route, for the scheduled [`FetchNow`]s.
    route: Route<FetchNow>,
    rng: SmallRng,
}

impl FeedFetcher {
    /// The factory the supervisor builds instances with: instance `index` schedules the
    /// sources whose host keyed routing maps to it, and draws jitter from an RNG seeded with
    /// `seed` and its index.
    pub fn factory(
        book: FeedBook,
        pool: &Pool<FeedFetcher>,
        seed: u64,
    ) -> impl Fn(usize) -> anyhow::Result<FeedFetcher> + Send + Sync + 'static {
        let pool = pool.clone();
        move |index| {
            Ok(FeedFetcher {
                own: book
                    .sources()
                    .iter()
                    .filter(|source| pool.slot_of(source.host()) == index)
                    .cloned()
                    .collect(),
                route: pool.route(),
                rng: SmallRng::seed_from_u64(
                    seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                ),
                book: book.clone(),
            })
        }
    }
}

impl RoleActor for FeedFetcher {
    const ROLE: &'static str = Role::FeedFetcher.name();

    fn started(&mut self, cx: &mut Cx<'_, Self>) {
        let index = cx.instance();
        for source in &self.own {
            let route = self.route.clone();
            let name = source.name.clone();
            let send = move || {
                let fetch = Envelope::new(FetchNow {
                    source: name.clone(),
                });
                if let Err(err) = route.do_send_to(index, fetch) {
                    warn!(source = %name, error = %err, "Could not schedule a feed fetch.");
                }
            };
            // The first fetch right after start-up, then one per interval.
            let first = send.clone();
            cx.ctx().run_later(Duration::ZERO, move |_, _| first());
            cx.ctx().run_interval(source.interval, move |_, _| send());
        }
    }
}

impl Handle<FetchNow> for FeedFetcher {
    type Reply = ResponseFuture<Result<FeedUpdate, FetchRefused>>;

    fn handle(&mut self, msg: FetchNow, cx: &mut Cx<'_, Self>) -> Self::Reply {
        let (source, in_flight) = match self.book.begin(&msg.source) {
            Ok(started) => started,
            Err(refused) => {
                debug!(%refused, "Feed fetch not started.");
                return Box::pin(std::future::ready(Err(refused)));
            }
        };
        let jitter: Vec<f64> = (0..self.book.inner.retry.max_retries)
            .map(|_| self.rng.random())
            .collect();
        let book = self.book.clone();
        let parent = cx.message_id();
        let fetch = async move {
            let outcome = book.fetch(&source, &jitter).await;
            let update = book.finish(&source.name, outcome, parent);
            drop(in_flight);
            Ok(update)
        };
        Box::pin(fetch.in_current_span())
    }
}

impl Handle<Subscribe> for FeedFetcher {
    type Reply = Result<(), FetchRefused>;

    fn handle(&mut self, msg: Subscribe, _: &mut Cx<'_, Self>) -> Self::Reply {
        self.book.subscribe(msg.source.as_deref(), msg.subscriber)
    }
}

impl Handle<FeedStats> for FeedFetcher {
    type Reply = actix::MessageResult<Envelope<FeedStats>>;

    fn handle(&mut self, _: FeedStats, _: &mut Cx<'_, Self>) -> Self::Reply {
        actix::MessageResult(self.book.statuses())
    }
}
