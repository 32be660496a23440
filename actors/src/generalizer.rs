//! Generalizer: each page's hittage and the lighthouses, from the user's feedback and the link
//! graph (the core's [`ferret::discovery::hittage`] does the computing).
//!
//! Instance 0 of the pool does the work: one computation sees all the feedback, so there is
//! nothing to share out; other instances, if configured, only take subscriptions. Every
//! `[discovery] generalize_interval_secs`, and at once when the HTTP API records feedback
//! ([`GeneralizeNow`]), it asks PageDb for the feedback and the links, computes direct scores,
//! hittage and lighthouses, records the computation ([`RecordHittage`]) and, when the
//! lighthouses changed, publishes them ([`LighthousesChanged`]) to the subscribers of the
//! shared [`LighthouseBoard`]. One computation runs at a time; a request meanwhile makes one
//! more follow.
//!
//! **Restarts.** The lighthouse rule looks at the last computations, so at start (also after
//! a panic) the instance first reloads them from the store ([`LoadHittageHistory`]) and
//! resumes its memory and its computation count; only then does it compute. Subscriptions
//! live on the board and outlive restarts.

use std::sync::{Arc, Mutex};

use ferret::config::DiscoverySettings;
use ferret::discovery::hittage::{generalize, same_lighthouses, Lighthouses};
use ferret::Role;
use tracing::{debug, info, warn, Instrument as _};

use actix::{AsyncContext as _, Recipient};

use crate::instance::{Cx, Handle, Instance, RoleActor};
use crate::messages::{
    Envelope, GeneralizeNow, GeneralizerData, GeneralizerInput, HittageHistoryLoaded,
    LighthousesChanged, LoadFeedback, LoadHittageHistory, LoadLinks, MessageId, RecordHittage,
    SubscribeLighthouses,
};
use crate::pool::{Route, RouteError};
use crate::storage::StoreError;
use crate::supervisor::unix_millis;

/// The latest lighthouses and who wants to hear of changes; shared by the Generalizer's
/// instances (and the HTTP API), so it outlives restarts. Clones are shallow.
#[derive(Clone, Default)]
pub struct LighthouseBoard {
    inner: Arc<Mutex<BoardState>>,
}

#[derive(Default)]
struct BoardState {
    subscribers: Vec<Recipient<Envelope<LighthousesChanged>>>,
    latest: Option<LighthousesChanged>,
}

impl LighthouseBoard {
    /// The lighthouses last published (or resumed from the store), if any.
    pub fn latest(&self) -> Option<LighthousesChanged> {
        self.lock().latest.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BoardState> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a subscriber and sends it the latest lighthouses, if any.
    fn subscribe(
        &self,
        subscriber: Recipient<Envelope<LighthousesChanged>>,
        parent: Option<MessageId>,
    ) {
        let mut state = self.lock();
        if let Some(latest) = &state.latest {
            subscriber.do_send(Envelope::caused_by_any(parent, latest.clone()));
        }
        state.subscribers.push(subscriber);
    }

    /// Takes `latest` as the last published, unless the board has some already (a restarted
    /// instance resuming from the store). A board that had none tells its subscribers, who have
    /// heard nothing yet (they subscribed before the store was read, at start-up).
    fn resume(&self, latest: LighthousesChanged) {
        let mut state = self.lock();
        if state.latest.is_some() {
            return;
        }
        state.subscribers.retain(|subscriber| {
            let alive = subscriber.connected();
            if alive {
                subscriber.do_send(Envelope::new(latest.clone()));
            }
            alive
        });
        state.latest = Some(latest);
    }

    /// Publishes `changed` to every live subscriber if its lighthouses differ from the last
    /// published (see [`same_lighthouses`]), or none were; returns whether it did.
    fn publish(&self, changed: LighthousesChanged, parent: Option<MessageId>) -> bool {
        let mut state = self.lock();
        if state
            .latest
            .as_ref()
            .is_some_and(|latest| same_lighthouses(&latest.lighthouses, &changed.lighthouses))
        {
            return false;
        }
        state.subscribers.retain(|subscriber| {
            // Queued even over capacity; a subscriber whose mailbox closed is dropped.
            let alive = subscriber.connected();
            if alive {
                subscriber.do_send(Envelope::caused_by_any(parent, changed.clone()));
            }
            alive
        });
        state.latest = Some(changed);
        true
    }
}

/// What an instance is wired to; cloned into each instance by the factory.
#[derive(Clone)]
pub struct Wiring {
    /// `[discovery]`.
    pub settings: DiscoverySettings,
    /// The lighthouses and their subscribers.
    pub board: LighthouseBoard,
    /// PageDb.
    pub load_history: Route<LoadHittageHistory>,
    /// PageDb.
    pub load_feedback: Route<LoadFeedback>,
    /// PageDb.
    pub load_links: Route<LoadLinks>,
    /// PageDb.
    pub record: Route<RecordHittage>,
    /// The pool's own route, for the interval.
    pub tick: Route<GeneralizeNow>,
    /// The pool's own route, for the history at start-up.
    pub history: Route<HittageHistoryLoaded>,
    /// The pool's own route, for each computation's input.
    pub input: Route<GeneralizerInput>,
}

/// One instance of the Generalizer pool. See the module docs.
pub struct Generalizer {
    wiring: Wiring,
    lighthouses: Lighthouses,
    /// The number of the last computation.
    computation: u64,
    /// The history is loaded and the interval runs.
    ready: bool,
    /// A computation's input is being loaded.
    busy: bool,
    /// Another computation was asked for while one ran.
    again: bool,
}

impl Generalizer {
    /// An instance.
    pub fn new(wiring: Wiring) -> Generalizer {
        Generalizer {
            lighthouses: Lighthouses::new(&wiring.settings.hittage),
            wiring,
            computation: 0,
            ready: false,
            busy: false,
            again: false,
        }
    }

    /// Loads the feedback and the links; the answer comes back as [`GeneralizerInput`].
    fn start_computation(&mut self, cx: &mut Cx<'_, Self>) {
        self.busy = true;
        let (feedback, links, input) = (
            self.wiring.load_feedback.clone(),
            self.wiring.load_links.clone(),
            self.wiring.input.clone(),
        );
        let (index, parent) = (cx.instance(), cx.message_id());
        let task = async move {
            let (feedback, links) = futures_util::future::join(
                feedback.send(Envelope::caused_by_any(parent, LoadFeedback)),
                links.send(Envelope::caused_by_any(parent, LoadLinks)),
            )
            .await;
            let loaded = answer(feedback).and_then(|feedback| {
                answer(links).map(|links| GeneralizerData { feedback, links })
            });
            let msg = Envelope::caused_by_any(parent, GeneralizerInput { input: loaded });
            if let Err(err) = input.do_send_to(index, msg) {
                warn!(error = %err, "Could not hand the Generalizer its input.");
            }
        };
        spawn(cx, task);
    }
}

impl RoleActor for Generalizer {
    const ROLE: &'static str = Role::Generalizer.name();

    fn started(&mut self, cx: &mut Cx<'_, Self>) {
        if cx.instance() != 0 {
            return;
        }
        let (load, history, index) = (
            self.wiring.load_history.clone(),
            self.wiring.history.clone(),
            cx.instance(),
        );
        let last = self.wiring.settings.hittage.lighthouse_window;
        spawn(cx, async move {
            let loaded = answer(load.send(Envelope::new(LoadHittageHistory { last })).await);
            let msg = Envelope::new(HittageHistoryLoaded { history: loaded });
            if let Err(err) = history.do_send_to(index, msg) {
                warn!(error = %err, "Could not resume the Generalizer.");
            }
        });
    }
}

impl Handle<HittageHistoryLoaded> for Generalizer {
    type Reply = ();

    fn handle(&mut self, msg: HittageHistoryLoaded, cx: &mut Cx<'_, Self>) {
        match msg.history {
            Ok(history) => {
                for computation in &history {
                    self.lighthouses.remember(&computation.hittage);
                }
                if let Some(last) = history.last() {
                    self.computation = last.computation;
                    self.wiring.board.resume(LighthousesChanged {
                        lighthouses: last.lighthouses.clone(),
                        computation: last.computation,
                    });
                }
                info!(
                    computations = history.len(),
                    last = self.computation,
                    "Hittage history resumed from the store."
                );
            }
            Err(err) => {
                warn!(error = %err, "Could not load the hittage history; lighthouses start from likes alone.");
                cx.record_error(&err);
            }
        }
        self.ready = true;
        let (tick, index) = (self.wiring.tick.clone(), cx.instance());
        cx.ctx()
            .run_interval(self.wiring.settings.generalize_interval, move |_, _| {
                if let Err(err) = tick.do_send_to(index, Envelope::new(GeneralizeNow)) {
                    warn!(error = %err, "Could not schedule a hittage computation.");
                }
            });
        self.start_computation(cx);
    }
}

impl Handle<GeneralizeNow> for Generalizer {
    type Reply = ();

    fn handle(&mut self, _: GeneralizeNow, cx: &mut Cx<'_, Self>) {
        if !self.ready {
            // The first computation follows the history's arrival.
            return;
        }
        if self.busy {
            self.again = true;
            return;
        }
        self.start_computation(cx);
    }
}

impl Handle<GeneralizerInput> for Generalizer {
    type Reply = ();

    fn handle(&mut self, msg: GeneralizerInput, cx: &mut Cx<'_, Self>) {
        self.busy = false;
        match msg.input {
            Err(err) => {
                warn!(error = %err, "Could not load the Generalizer's input; trying again at the next interval.");
                cx.record_error(&err);
            }
            Ok(GeneralizerData { feedback, links }) => {
                let now = unix_millis();
                let params = &self.wiring.settings.hittage;
                let result = generalize(&feedback, &links, now, params, &mut self.lighthouses);
                self.computation += 1;
                let computation = self.computation;
                info!(
                    computation,
                    events = feedback.len(),
                    links = links.len(),
                    pages = result.hittage.len(),
                    lighthouses = result.lighthouses.len(),
                    "Hittage computed."
                );
                let record = cx.envelope(RecordHittage {
                    computation,
                    at_ms: now,
                    hittage: result.hittage,
                    lighthouses: result.lighthouses.clone(),
                    keep: params.lighthouse_window,
                });
                if let Err(err) = self.wiring.record.do_send(record) {
                    warn!(error = %err, "Could not record a hittage computation.");
                }
                let changed = LighthousesChanged {
                    lighthouses: result.lighthouses,
                    computation,
                };
                if self.wiring.board.publish(changed, cx.message_id()) {
                    debug!(computation, "Lighthouses published.");
                }
            }
        }
        if std::mem::take(&mut self.again) {
            self.start_computation(cx);
        }
    }
}

impl Handle<SubscribeLighthouses> for Generalizer {
    type Reply = ();

    fn handle(&mut self, msg: SubscribeLighthouses, cx: &mut Cx<'_, Self>) {
        self.wiring.board.subscribe(msg.subscriber, cx.message_id());
    }
}

/// PageDb's answer, or what went wrong in words.
fn answer<T>(reply: Result<Result<T, StoreError>, RouteError>) -> Result<T, String> {
    match reply {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(format!("the store failed: {err}")),
        Err(err) => Err(format!("PageDb did not answer: {err}")),
    }
}

/// Runs `task` beside the instance, in the current span.
fn spawn(cx: &mut Cx<'_, Generalizer>, task: impl std::future::Future<Output = ()> + 'static) {
    cx.ctx()
        .spawn(actix::fut::wrap_future::<_, Instance<Generalizer>>(
            task.in_current_span(),
        ));
}
