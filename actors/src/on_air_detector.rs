//! OnAirDetector: watches the `[[listings]]` and reports their broadcasts On Air and Off Air.
//!
//! Each listing belongs to the instance keyed routing picks for its name. The instance runs the
//! listing's sans-IO detector ([`ferret::listing::Pager`]; the strategy, On Air and Off Air
//! alike, is in the core): on a [`ListingTick`] it asks the detector which page to read, reads
//! it through the shared HTTP client (no retries: a failed read is a fact the strategy handles)
//! and hands the page back in a [`ListingPageRead`]. It starts every read the detector asks
//! for: one in flight per listing, or two where ferret reads its head on a lane of its own
//! ([`ferret::listing::Params::head_lane`]).
//!
//! **A listing that says "too many requests".** A `429` is a failed read like any other for
//! the strategy, but the listing is not read again before its `Retry-After` (seconds or an
//! HTTP date) has passed, within the bounds of [`ferret::listing::Params::throttled_wait`].
//! A `503` is not held back: it is how a listing fails one read now and then (the simulated
//! one answers its failed reads so, with `Retry-After: 1`).
//!
//! **Exactly once, even after `kill -9`.** Events go to the store first, with the book changes
//! they imply, in one transaction ([`RecordDetections`]); then to the events file and stdout;
//! then they are marked emitted ([`MarkEmitted`]). At start-up the detector resumes from the
//! store ([`ListingLoaded`]), and an event recorded but not marked is written again only if
//! the end of the events file does not already hold it. The events of a read answered while
//! those of an earlier one are still going out wait for them ([`ListingEmitted`]), so the
//! file keeps detection order.
//!
//! **Resuming where it was.** Each read goes to the store as it is answered
//! ([`RecordListingRead`]): when it started (an hour of the listing's clock of them is kept),
//! the broadcasts its page showed, and the detector's memory once it took the read
//! ([`ferret::listing::Memory`]). A detector resumed from the store counts the reads against
//! its budget (a restarted detector's buckets start full, and without them every restart
//! added their tokens to the hour: a crash loop read nearly twice the budget), knows when each
//! broadcast was last proven on air (else every broadcast extended past a frame boundary was
//! due again at once, and their reads held the head back), and goes on with its sweep where
//! it stood (else deep insertions that started just before the restart were never seen).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix::{AsyncContext as _, SpawnHandle};
use ferret::config::ListingSource;
use ferret::feed::ParseOptions;
use ferret::fetch::{charset_of, parse_age, parse_retry_after, Validators};
use ferret::listing::{pager, view_from_feed, Book, EventKind, EventRecord, Millis, Pager};
use ferret::listing::{PageCache, PageView, ReadOutcome, ReadTime, HOUR, SECOND};
use ferret::Role;
use tracing::{debug, error, info, warn, Instrument as _};

use crate::event_sink::EventSink;
use crate::http_client::HttpClient;
use crate::instance::{Cx, Handle, Instance, RoleActor};
use crate::listing_board::ListingBoard;
use crate::messages::{
    Envelope, ListingEmitted, ListingLoaded, ListingPageRead, ListingTick, LoadListing,
    MarkEmitted, RecordDetections, RecordListingRead,
};
use crate::pool::{Pool, Route};
use crate::storage::Detection;
use crate::supervisor::unix_millis;

/// Gone ids are kept this long (longer than any broadcast), so a stale page cannot bring one
/// back.
const FORGET_GONE_AFTER: Millis = 12 * HOUR;
/// Wait before asking the store again after a failed load.
const RELOAD_AFTER: Duration = Duration::from_secs(5);

/// What an instance is wired to; cloned into each instance by the factory.
#[derive(Clone)]
pub struct Wiring {
    /// The shared HTTP client.
    pub client: HttpClient,
    /// The shared board of listings.
    pub board: ListingBoard,
    /// PageDb, for the state at start-up.
    pub load: Route<LoadListing>,
    /// PageDb, for detections.
    pub record: Route<RecordDetections>,
    /// PageDb, for emitted events.
    pub mark: Route<MarkEmitted>,
    /// PageDb, for each read: its start, the broadcasts its page showed and the detector's
    /// memory.
    pub reads: Route<RecordListingRead>,
    /// The pool's own route, for ticks.
    pub tick: Route<ListingTick>,
    /// The pool's own route, for the other self-sent messages.
    pub loaded: Route<ListingLoaded>,
    /// The pool's own route.
    pub read: Route<ListingPageRead>,
    /// The pool's own route.
    pub emitted: Route<ListingEmitted>,
}

/// One instance of the OnAirDetector pool. See the module docs.
pub struct OnAirDetector {
    wiring: Wiring,
    watches: BTreeMap<String, Watch>,
}

/// One listing this instance watches.
struct Watch {
    source: ListingSource,
    /// `None` until the store's state is loaded.
    pager: Option<Box<dyn Pager>>,
    sink: Arc<Mutex<EventSink>>,
    /// The store's state is being loaded: no read starts.
    loading: bool,
    /// Reads in flight.
    reads_out: u32,
    /// Events are being recorded and emitted.
    emitting: bool,
    /// Events of later reads, waiting for those being emitted.
    waiting: Vec<Detection>,
    /// How long the listing takes to answer (its slowness lengthens the read timeout).
    answered: ReadTime,
    timer: Option<SpawnHandle>,
    /// No read starts before this: the listing answered `429 Too Many Requests`.
    not_before: Millis,
    /// The detector's sweep share as last logged.
    logged_share: Option<f64>,
    /// The most reads the detector wanted at once as last logged, and when.
    logged_lanes: (usize, Hourly),
    /// How long the listing's cache keeps a page, as last logged ([`log_cache`]).
    logged_cache: Option<Millis>,
    /// When a `pubDate` ahead of this machine's clock was last logged.
    logged_ahead: Hourly,
}

/// How far the detector's sweep share moves before it is logged again: it moves by half a
/// thousandth or less at a time, and by a few hundredths in a busy quarter of an hour.
const SHARE_LOGGED_STEP: f64 = 0.01;

impl OnAirDetector {
    /// The factory the supervisor builds instances with: instance `index` watches the
    /// listings whose name keyed routing maps to it. Fails if an events file cannot be opened.
    pub fn factory(
        listings: Vec<ListingSource>,
        pool: &Pool<OnAirDetector>,
        wiring: Wiring,
    ) -> impl Fn(usize) -> anyhow::Result<OnAirDetector> + Send + Sync + 'static {
        let pool = pool.clone();
        move |index| {
            let mut watches = BTreeMap::new();
            for source in listings.iter().filter(|l| pool.slot_of(&l.name) == index) {
                watches.insert(
                    source.name.clone(),
                    Watch {
                        sink: Arc::new(Mutex::new(EventSink::open(source)?)),
                        source: source.clone(),
                        pager: None,
                        loading: false,
                        reads_out: 0,
                        emitting: false,
                        waiting: Vec::new(),
                        answered: ReadTime::default(),
                        timer: None,
                        not_before: Millis::MIN,
                        logged_share: None,
                        logged_lanes: (1, Hourly::default()),
                        logged_cache: None,
                        logged_ahead: Hourly::default(),
                    },
                );
            }
            Ok(OnAirDetector {
                wiring: wiring.clone(),
                watches,
            })
        }
    }

    /// Sends a tick for `listing` to this instance at `at` (now if past; not before the
    /// listing allows another read), replacing any pending one.
    fn schedule(&mut self, listing: &str, at: Millis, cx: &mut Cx<'_, Self>) {
        let index = cx.instance();
        let Some(watch) = self.watches.get_mut(listing) else {
            return;
        };
        if let Some(timer) = watch.timer.take() {
            cx.ctx().cancel_future(timer);
        }
        let at = at.max(watch.not_before);
        let delay = Duration::from_millis((at - unix_millis()).clamp(0, HOUR) as u64);
        let route = self.wiring.tick.clone();
        let name = listing.to_string();
        watch.timer = Some(cx.ctx().run_later(delay, move |_, _| {
            let tick = Envelope::new(ListingTick { listing: name });
            if let Err(err) = route.do_send_to(index, tick) {
                warn!(error = %err, "Could not schedule a listing read.");
            }
        }));
    }

    /// Asks the store for the listing's state after `delay`; the answer comes back as
    /// [`ListingLoaded`].
    fn load(&mut self, listing: &str, delay: Duration, cx: &mut Cx<'_, Self>) {
        let request = cx.envelope(LoadListing {
            listing: listing.to_string(),
        });
        let answer = self.wiring.loaded.clone();
        let (index, name) = (cx.instance(), listing.to_string());
        let load = self.wiring.load.clone();
        let parent = cx.message_id();
        spawn(cx, async move {
            if !delay.is_zero() {
                actix_rt::time::sleep(delay).await;
            }
            let state = match load.send(request).await {
                Ok(Ok(state)) => Ok(state),
                Ok(Err(err)) => Err(format!("the store failed: {err}")),
                Err(err) => Err(format!("PageDb did not answer: {err}")),
            };
            let loaded = Envelope::caused_by_any(
                parent,
                ListingLoaded {
                    listing: name,
                    state,
                },
            );
            if let Err(err) = answer.do_send_to(index, loaded) {
                warn!(error = %err, "Could not resume a listing.");
            }
        });
    }
}

impl RoleActor for OnAirDetector {
    const ROLE: &'static str = Role::OnAirDetector.name();

    fn started(&mut self, cx: &mut Cx<'_, Self>) {
        let names: Vec<String> = self.watches.keys().cloned().collect();
        for name in names {
            if let Some(watch) = self.watches.get_mut(&name) {
                watch.loading = true;
            }
            self.load(&name, Duration::ZERO, cx);
        }
    }
}

impl Handle<ListingLoaded> for OnAirDetector {
    type Reply = ();

    fn handle(&mut self, msg: ListingLoaded, cx: &mut Cx<'_, Self>) {
        let Some(watch) = self.watches.get_mut(&msg.listing) else {
            return;
        };
        let state = match msg.state {
            Ok(state) => state,
            Err(err) => {
                error!(listing = %msg.listing, error = %err, "Could not load the listing's state; trying again.");
                cx.record_error(&err);
                self.load(&msg.listing, RELOAD_AFTER, cx);
                return;
            }
        };
        // Events recorded but not marked emitted: written again unless the file has them.
        let mut sink = watch.sink.lock().unwrap_or_else(|e| e.into_inner());
        let mut seqs = Vec::new();
        for (seq, line) in &state.pending {
            match sink.resume(line) {
                Ok(()) => seqs.push(*seq),
                Err(err) => {
                    error!(listing = %msg.listing, error = %err, "Could not write an event.")
                }
            }
        }
        drop(sink);
        if !seqs.is_empty() {
            if let Err(err) = self.wiring.mark.do_send(cx.envelope(MarkEmitted { seqs })) {
                warn!(error = %err, "Could not mark resumed events emitted.");
            }
        }
        let book = Book::restore(state.on_air, state.gone, state.ties);
        let params = &watch.source.params;
        info!(
            listing = %msg.listing,
            on_air = book.len(),
            resumed_events = state.pending.len(),
            strategy = watch.source.strategy.name(),
            frame_ms = params.frame,
            grace_ms = params.grace,
            tolerance_ms = params.tolerance,
            budget_per_hour = params.budget_per_hour,
            "Listing resumed from the store."
        );
        self.wiring.board.set_on_air(&msg.listing, &book);
        watch.pager = Some(pager(
            watch.source.strategy,
            watch.source.params.clone(),
            book,
            &state.reads,
            state.memory,
        ));
        watch.loading = false;
        self.schedule(&msg.listing, unix_millis(), cx);
    }
}

impl Handle<ListingTick> for OnAirDetector {
    type Reply = ();

    fn handle(&mut self, msg: ListingTick, cx: &mut Cx<'_, Self>) {
        let now = unix_millis();
        let Some(watch) = self.watches.get_mut(&msg.listing) else {
            return;
        };
        watch.timer = None;
        if watch.loading {
            return;
        }
        let Some(detector) = watch.pager.as_mut() else {
            return;
        };
        let pages: Vec<u32> = std::iter::from_fn(|| detector.poll_read(now)).collect();
        for page in pages {
            self.start_read(&msg.listing, page, now, cx);
        }
        self.reschedule(&msg.listing, now, cx);
    }
}

impl OnAirDetector {
    /// Reads `page` of `listing`; the answer comes back as [`ListingPageRead`].
    fn start_read(&mut self, listing: &str, page: u32, now: Millis, cx: &mut Cx<'_, Self>) {
        let Some(watch) = self.watches.get_mut(listing) else {
            return;
        };
        watch.reads_out += 1;
        let url = watch.source.page_url(page);
        let total_element = watch.source.total_element.clone();
        let timeout = watch.answered.timeout(watch.source.params.read_timeout);
        let timeout = Duration::from_millis(timeout.max(1) as u64);
        let (client, board, route) = (
            self.wiring.client.clone(),
            self.wiring.board.clone(),
            self.wiring.read.clone(),
        );
        let (index, parent, listing) = (cx.instance(), cx.message_id(), listing.to_string());
        debug!(%listing, page, %url, "Reading a listing page.");
        spawn(cx, async move {
            let began = Instant::now();
            let read = read_page(&client, &url, page, total_element.as_ref());
            let (outcome, answered_in) = match actix_rt::time::timeout(timeout, read).await {
                Ok(outcome) => (outcome, Some(began.elapsed().as_millis() as Millis)),
                Err(_) => (
                    Err(Unread::cause(format!(
                        "no answer within the read timeout ({} ms)",
                        timeout.as_millis()
                    ))),
                    None,
                ),
            };
            let mut throttled = None;
            let (outcome, undated) = outcome.unwrap_or_else(|unread| {
                warn!(%listing, %url, cause = %unread.cause, "Listing read failed.");
                throttled = unread.throttled;
                (ReadOutcome::Failed, 0)
            });
            if undated > 0 {
                warn!(%listing, %url, undated, "Listing items without a usable pubDate were left out.");
            }
            board.count_read(&listing, matches!(outcome, ReadOutcome::Page(_)), undated);
            let read = Envelope::caused_by_any(
                parent,
                ListingPageRead {
                    listing,
                    page,
                    started_at: now,
                    outcome,
                    answered_in,
                    throttled,
                },
            );
            if let Err(err) = route.do_send_to(index, read) {
                warn!(error = %err, "Could not hand a listing page to its detector.");
            }
        });
    }

    /// Sets the listing's timer for the detector's next wake. None while it waits for reads
    /// in flight (their answers wake it); a second from now if it names none and has none out.
    fn reschedule(&mut self, listing: &str, now: Millis, cx: &mut Cx<'_, Self>) {
        let Some(watch) = self.watches.get(listing) else {
            return;
        };
        let Some(detector) = watch.pager.as_ref() else {
            return;
        };
        match detector.poll_timeout() {
            Some(wake) => self.schedule(listing, wake, cx),
            None if watch.reads_out == 0 => self.schedule(listing, now + SECOND, cx),
            None => {}
        }
    }
}

/// When a line logged at most once a listing hour was last logged.
#[derive(Debug, Default)]
struct Hourly(Option<Millis>);

impl Hourly {
    /// Whether the line may be logged at `now`, an `hour` or more after it last was; if so,
    /// it counts as logged at `now`.
    fn due(&mut self, now: Millis, hour: Millis) -> bool {
        let due = self.0.is_none_or(|at| now - at >= hour);
        if due {
            self.0 = Some(now);
        }
        due
    }
}

/// Logs that the listing answers as a cache would, once the detector takes it for one
/// ([`PageCache::kept`]), and again whenever how long it takes the cache to keep a page has
/// grown by a quarter since: what a changed or first answer proves gone is then dated back by
/// that much, and a start shows only once the cache lets page 1 go, so events come later. A
/// list that stands still (page 1 unchanged read after read) looks the same until it moves.
fn log_cache(logged: &mut Option<Millis>, frame: Millis, listing: &str, cache: PageCache) {
    let Some(kept) = cache.kept(frame) else {
        return;
    };
    if logged.is_some_and(|logged| kept < logged + logged / 4) {
        return;
    }
    info!(
        listing = %listing,
        kept_ms = kept,
        page_one_repeats = cache.repeats,
        busy_repeats = cache.busy_repeats,
        gives_age = cache.aged,
        "The listing answers as from a cache that keeps a page up to about kept_ms (page 1 repeated, or repeated while the list moved, or the list stood still that long): what an answer proves gone is dated back by that much, and starts show once the cache lets page 1 go, so events may come that much later (logged again when it grows by a quarter)."
    );
    *logged = Some(kept);
}

/// Logs (at most once a listing hour) a page whose newest `pubDate` lies more than the grace
/// ahead of the read's start on this machine's clock. Frames are taken to end a frame after
/// their `pubDate`, so the listing's clock or its time zone being off by that much makes every
/// Off Air come late by as much, and slip past the grace.
fn warn_of_keys_ahead(watch: &mut Watch, listing: &str, view: &PageView, started_at: Millis) {
    let params = &watch.source.params;
    let Some(newest) = view.items.iter().map(|item| item.key).max() else {
        return;
    };
    let ahead = newest - started_at;
    if ahead > params.grace && watch.logged_ahead.due(started_at, params.listing_hour()) {
        warn!(
            %listing,
            ahead_secs = ahead / SECOND,
            "A pubDate lies ahead of this machine's clock: the listing's clock or its time zone is off, and Off Air events will come that much late (frames are taken to end frame_secs after the pubDate)."
        );
    }
}

impl Handle<ListingPageRead> for OnAirDetector {
    type Reply = ();

    fn handle(&mut self, msg: ListingPageRead, cx: &mut Cx<'_, Self>) {
        let now = unix_millis();
        let Some(watch) = self.watches.get_mut(&msg.listing) else {
            return;
        };
        watch.reads_out = watch.reads_out.saturating_sub(1);
        if let Some(took) = msg.answered_in {
            watch.answered.observe(took);
        }
        if let Some(asked) = msg.throttled {
            let params = &watch.source.params;
            let wait = params.throttled_wait(asked);
            watch.not_before = now.saturating_add(wait);
            warn!(
                listing = %msg.listing,
                wait_ms = wait,
                asked_secs = asked.map(|asked| asked.as_secs()),
                budget_per_hour = params.budget_per_hour,
                "The listing answered 429 Too Many Requests: no read before the wait is over (its budget may be more than it allows)."
            );
        }
        let seen = match &msg.outcome {
            ReadOutcome::Page(view) => {
                warn_of_keys_ahead(watch, &msg.listing, view, msg.started_at);
                view.items.iter().map(|item| item.id.clone()).collect()
            }
            _ => Vec::new(),
        };
        let Some(detector) = watch.pager.as_mut() else {
            return;
        };
        detector.handle_read(now, msg.page, msg.outcome);
        let memory = detector.memory();
        if let Some(memory) = &memory {
            let frame = watch.source.params.frame;
            log_cache(
                &mut watch.logged_cache,
                frame,
                &msg.listing,
                memory.page_cache,
            );
        }
        let read = cx.envelope(RecordListingRead {
            listing: msg.listing.clone(),
            at_ms: msg.started_at,
            seen,
            memory,
            ties: detector.book().ties(),
            forget_before: now - watch.source.params.listing_hour(),
        });
        if let Err(err) = self.wiring.reads.do_send(read) {
            warn!(error = %err, "Could not record a listing read.");
        }
        let share = detector.sweep_share();
        self.wiring.board.set_sweep_share(&msg.listing, share);
        if let Some(share) = share {
            if watch
                .logged_share
                .is_none_or(|logged| (share - logged).abs() >= SHARE_LOGGED_STEP)
            {
                info!(
                    listing = %msg.listing,
                    sweep_share = format_args!("{share:.3}"),
                    "The detector's sweep share of the budget (it falls while frame ends come late, giving their reads more, and rises while they come in time)."
                );
                watch.logged_share = Some(share);
            }
        }
        // A listing whose reads take about as long as the line swaps now and then: logged at
        // most once a listing hour.
        let lanes = detector.lanes();
        let hour = watch.source.params.listing_hour();
        if lanes != watch.logged_lanes.0 && watch.logged_lanes.1.due(now, hour) {
            info!(
                listing = %msg.listing,
                reads_at_once = lanes,
                mean_read_ms = watch.answered.mean(),
                "The detector's reads at once: 2 while reads are so slow that one reader spending the budget would hardly be idle (the head sweep then reads beside the other reads), else 1 (logged at most once an hour of the listing's clock)."
            );
            watch.logged_lanes.0 = lanes;
        }
        let mut detections = Vec::new();
        while let Some(event) = detector.poll_event() {
            let line = EventRecord::new(&msg.listing, &event).to_line();
            detections.push(Detection { event, line });
        }
        if !detections.is_empty() {
            self.wiring.board.set_on_air(&msg.listing, detector.book());
            if watch.emitting {
                watch.waiting.extend(detections);
            } else {
                self.emit(&msg.listing, detections, now, cx);
            }
        }
        self.reschedule(&msg.listing, now, cx);
    }
}

impl OnAirDetector {
    /// Records `detections` in the store, then writes them out; [`ListingEmitted`] says when
    /// they are out.
    fn emit(
        &mut self,
        listing: &str,
        detections: Vec<Detection>,
        now: Millis,
        cx: &mut Cx<'_, Self>,
    ) {
        let Some(watch) = self.watches.get_mut(listing) else {
            return;
        };
        watch.emitting = true;
        let record = cx.envelope(RecordDetections {
            listing: listing.to_string(),
            detections: detections.clone(),
            forget_before: now - FORGET_GONE_AFTER,
        });
        let (store, mark, done) = (
            self.wiring.record.clone(),
            self.wiring.mark.clone(),
            self.wiring.emitted.clone(),
        );
        let (sink, board) = (watch.sink.clone(), self.wiring.board.clone());
        let (index, parent, listing) = (cx.instance(), cx.message_id(), listing.to_string());
        spawn(cx, async move {
            // Recorded first: an event the store lost could be reported twice after a crash.
            // If the store fails it is emitted all the same (and logged): the user hears of it.
            let seqs = match store.send(record).await {
                Ok(Ok(seqs)) => seqs,
                Ok(Err(err)) => {
                    error!(%listing, error = %err, "Could not record detections; emitting them anyway.");
                    Vec::new()
                }
                Err(err) => {
                    error!(%listing, error = %err, "PageDb did not answer; emitting the detections anyway.");
                    Vec::new()
                }
            };
            let lines: Vec<(EventKind, Arc<str>)> = detections
                .iter()
                .map(|d| (d.event.kind, Arc::from(d.line.as_str())))
                .collect();
            let written = sink
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .write(lines.iter().map(|(_, line)| &**line));
            match written {
                Ok(()) if !seqs.is_empty() => {
                    if let Err(err) =
                        mark.do_send(Envelope::caused_by_any(parent, MarkEmitted { seqs }))
                    {
                        warn!(error = %err, "Could not mark events emitted.");
                    }
                }
                Ok(()) => {}
                Err(err) => error!(%listing, error = %err, "Could not write events."),
            }
            board.publish(&listing, &lines);
            for (kind, line) in &lines {
                info!(%listing, event = ?kind, %line, "Listing event.");
            }
            if let Err(err) = done.do_send_to(
                index,
                Envelope::caused_by_any(parent, ListingEmitted { listing }),
            ) {
                warn!(error = %err, "Could not resume a listing after its events.");
            }
        });
    }
}

impl Handle<ListingEmitted> for OnAirDetector {
    type Reply = ();

    fn handle(&mut self, msg: ListingEmitted, cx: &mut Cx<'_, Self>) {
        let Some(watch) = self.watches.get_mut(&msg.listing) else {
            return;
        };
        watch.emitting = false;
        let waiting = std::mem::take(&mut watch.waiting);
        if !waiting.is_empty() {
            self.emit(&msg.listing, waiting, unix_millis(), cx);
        }
    }
}

/// Runs `task` beside the instance, in the current span.
fn spawn(cx: &mut Cx<'_, OnAirDetector>, task: impl std::future::Future<Output = ()> + 'static) {
    cx.ctx()
        .spawn(actix::fut::wrap_future::<_, Instance<OnAirDetector>>(
            task.in_current_span(),
        ));
}

/// A read that brought no page.
struct Unread {
    cause: String,
    /// The listing answered `429 Too Many Requests`, with the wait its `Retry-After` asked
    /// for, if it gave one that parses.
    throttled: Option<Option<Duration>>,
}

impl Unread {
    fn cause(cause: String) -> Unread {
        Unread {
            cause,
            throttled: None,
        }
    }
}

/// Reads and parses one listing page, with the count of items left out for want of a date.
/// A page the listing says does not exist (404, 410) is [`ReadOutcome::not_found`]: what
/// many paginators answer past the last page.
async fn read_page(
    client: &HttpClient,
    url: &str,
    page: u32,
    total_element: Option<&(String, String)>,
) -> Result<(ReadOutcome, usize), Unread> {
    let reply = client
        .get(url, &Validators::default())
        .await
        .map_err(|failure| Unread::cause(format!("{} ({})", failure.error, failure.cause)))?;
    match reply.status {
        200 => {}
        // Page 1 always exists: its absence is a wrong URL, not the end of the list.
        404 | 410 if page > 1 => {
            debug!(%url, status = reply.status, "Listing page not found: read as past the end.");
            return Ok((ReadOutcome::not_found(page), 0));
        }
        429 => {
            let now_secs = unix_millis() / SECOND;
            let asked =
                (reply.retry_after.as_deref()).and_then(|value| parse_retry_after(value, now_secs));
            return Err(Unread {
                cause: "HTTP status 429".to_string(),
                throttled: Some(asked),
            });
        }
        status => return Err(Unread::cause(format!("HTTP status {status}"))),
    }
    let options = ParseOptions {
        http_charset: reply.content_type.as_deref().and_then(charset_of),
        base_url: Some(&reply.url),
        lean: true,
        ..ParseOptions::default()
    };
    let feed =
        ferret::feed::parse(&reply.body, &options).map_err(|err| Unread::cause(err.to_string()))?;
    let total = total_element.map(|(prefix, name)| (prefix.as_str(), name.as_str()));
    let (mut view, undated) =
        view_from_feed(page, &feed, total).map_err(|err| Unread::cause(err.to_string()))?;
    // A cache in front of the listing that says how long it kept the page dates it.
    view.age = (reply.age.as_deref().and_then(parse_age)).map_or(0, |secs| secs as Millis * SECOND);
    Ok((ReadOutcome::Page(view), undated))
}
