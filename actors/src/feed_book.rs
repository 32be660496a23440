//! The FeedBook: the state of every feed source, shared by the FeedFetcher pool, the HTTP API
//! and the metrics, and the fetch procedure itself.
//!
//! Per source it keeps the validators for conditional GET, the counters and last outcome
//! ([`SourceStats`]), an in-flight mark and the subscribers; per host, the semaphore that
//! bounds concurrent requests. It lives outside the instances so that all of it survives a
//! FeedFetcher restart.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use actix::Recipient;
use ferret::config::{FeedSource, FetchSettings};
use ferret::feed::{Limits, ParseOptions};
use ferret::fetch::{
    charset_of, parse_retry_after, status_cause, FetchError, LastError, RetryPolicy, SourceStats,
    Validators,
};
use tokio::sync::Semaphore;
use tracing::{debug, info, warn};

use crate::http_client::{Failure, HttpClient, Reply};
use crate::messages::{
    Envelope, FeedStatus, FeedUpdate, FetchFailure, FetchOutcome, FetchRefused, Fetched, MessageId,
};
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
    max_body_bytes: usize,
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
                max_body_bytes: fetch.max_body_bytes,
                sources,
                state: Mutex::new(state),
            }),
        })
    }

    /// Retries a fetch may make: how many jitter values it needs.
    pub(crate) fn max_retries(&self) -> u32 {
        self.inner.retry.max_retries
    }

    /// The shared HTTP client, for the roles that read through it directly (the listing
    /// detectors, whose reads are not retried: a failed read is a fact their strategy handles).
    pub fn client(&self) -> &HttpClient {
        &self.inner.client
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

    pub(crate) fn subscribe(
        &self,
        source: Option<&str>,
        subscriber: Subscriber,
    ) -> Result<(), FetchRefused> {
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
    pub(crate) fn begin(&self, name: &str) -> Result<(FeedSource, InFlight), FetchRefused> {
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
    pub(crate) async fn fetch(&self, source: &FeedSource, jitter: &[f64]) -> FetchOutcome {
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
                200..=299 => return self.parsed(source, reply),
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

    /// Parses a full response. It runs on the instance's worker thread: the body is bounded
    /// by `fetch.max_body_bytes`, and the parser reads hundreds of MB/s. The validators are
    /// kept only for a feed that parsed, so that a broken feed is fetched in full again.
    fn parsed(&self, source: &FeedSource, reply: Reply) -> FetchOutcome {
        let charset = reply
            .content_type
            .as_deref()
            .and_then(charset_of)
            .map(str::to_string);
        let options = ParseOptions {
            http_charset: charset.as_deref(),
            base_url: Some(&reply.url),
            lean: source.lean,
            limits: Limits {
                max_bytes: self.inner.max_body_bytes,
                ..Limits::default()
            },
        };
        match ferret::feed::parse(&reply.body, &options) {
            Ok(mut feed) => {
                if let Some(language) = &source.language {
                    feed.language = Some(language.clone());
                }
                self.with(&source.name, |s| s.validators = reply.validators);
                FetchOutcome::Fetched(Arc::new(Fetched {
                    charset,
                    url: reply.url,
                    status: reply.status,
                    bytes: reply.body.len(),
                    feed,
                }))
            }
            Err(error) => FetchOutcome::Failed(FetchFailure {
                cause: format!(
                    "{} bytes of {}",
                    reply.body.len(),
                    reply.content_type.as_deref().unwrap_or("no Content-Type")
                ),
                error: FetchError::Parse { error },
                url: reply.url,
                status: Some(reply.status),
            }),
        }
    }

    fn status_failure(&self, reply: Reply, retries: u32, wait: Option<Duration>) -> FetchFailure {
        let reason = reqwest::StatusCode::from_u16(reply.status)
            .ok()
            .and_then(|s| s.canonical_reason());
        FetchFailure {
            error: FetchError::Status {
                status: reply.status,
            },
            cause: status_cause(&self.inner.retry, reply.status, reason, retries, wait),
            url: reply.url,
            status: Some(reply.status),
        }
    }

    /// Records how the fetch ended, logs it and sends it to the subscribers.
    pub(crate) fn finish(
        &self,
        name: &str,
        outcome: FetchOutcome,
        parent: Option<MessageId>,
    ) -> FeedUpdate {
        let at_ms = unix_millis();
        match &outcome {
            FetchOutcome::Fetched(fetched) => {
                debug!(
                    source = name,
                    url = %fetched.url,
                    status = fetched.status,
                    bytes = fetched.bytes,
                    items = fetched.feed.items.len(),
                    warnings = fetched.feed.warnings.len(),
                    "Feed fetched."
                )
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
            FetchOutcome::Fetched(fetched) => entry.stats.record_fetched(
                fetched.status,
                fetched.feed.items.len(),
                fetched.feed.warnings.len(),
                at_ms,
            ),
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
                let envelope = Envelope::caused_by_any(parent, update.clone());
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
pub(crate) struct InFlight {
    book: FeedBook,
    name: String,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.book.with(&self.name, |s| s.in_flight = false);
    }
}
