//! The generic actor that runs one instance of a role.
//!
//! Each role is plain state implementing [`RoleActor`] and one [`Handle<M>`] per message it
//! takes; [`Instance<R>`] is the actix actor around it. Putting the envelope, the tracing span,
//! the counting and the panic guard here, once, means every role gets them the same way and no
//! role can forget them.
//!
//! A panic inside a handler is caught: the instance records it in its slot, stops, and tells
//! the supervisor, which builds a fresh instance from the role's factory and puts it in the
//! same slot of the pool. The caller of the message that panicked sees
//! `MailboxError::Closed`, exactly as if the instance had died first. A panic that escapes the
//! guard (inside a future the handler spawned) kills the actix context; actix still runs
//! `stopped` as it drops it, and a stop the role never asked for is reported as a failure with
//! the panic's message. The supervisor's liveness sweep is the last line: it finds mailboxes
//! that closed with no report at all.

use std::any::Any;
use std::cell::RefCell;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::Instant;

use actix::dev::{MessageResponse, OneshotSender};
use actix::{Actor, ActorContext, Context, Handler, Message, MessageResult, Recipient};
use ferret::supervision::ExitReason;
use tracing::{debug, error, info_span, warn, Level};

use crate::messages::{Envelope, InstanceDown, InstanceInfo, MessageId, Ping, Stop};

/// The state and behaviour of one role, run by [`Instance`].
pub trait RoleActor: Sized + Send + Unpin + 'static {
    /// The role's name in logs, metrics, config and the API.
    const ROLE: &'static str;

    /// Called when the instance starts: at start-up and after every restart.
    fn started(&mut self, _cx: &mut Cx<'_, Self>) {}

    /// Called when the instance stops cleanly (not after a panic, when the state may be
    /// inconsistent): the place to flush.
    fn stopped(&mut self) {}
}

/// A role's handler for message `M`.
pub trait Handle<M: Message>: RoleActor {
    /// The reply: a plain value through [`MessageResult`], or any other actix response.
    type Reply: MessageResponse<Instance<Self>, Envelope<M>>;

    /// Handles one message. `cx` gives the actix context, the instance's identity and
    /// [`Cx::envelope`] for messages this one causes.
    fn handle(&mut self, msg: M, cx: &mut Cx<'_, Self>) -> Self::Reply;
}

/// What a handler may use besides its role's state.
pub struct Cx<'a, R: RoleActor> {
    ctx: &'a mut Context<Instance<R>>,
    meta: &'a InstanceMeta,
    current: Option<MessageId>,
    stop_requested: &'a mut bool,
}

impl<R: RoleActor> Cx<'_, R> {
    /// The actix context, for timers and futures.
    pub fn ctx(&mut self) -> &mut Context<Instance<R>> {
        self.ctx
    }

    /// This instance's index in its pool.
    pub fn instance(&self) -> usize {
        self.meta.index
    }

    /// The id of the message being handled (`None` in [`RoleActor::started`]).
    pub fn message_id(&self) -> Option<MessageId> {
        self.current
    }

    /// Wraps a message caused by the one being handled, linking the two in traces.
    pub fn envelope<M>(&self, payload: M) -> Envelope<M> {
        Envelope::caused_by_any(self.current, payload)
    }

    /// Logs a failure the handler recovered from and counts it as a handler error.
    pub fn record_error(&self, error: &dyn fmt::Display) {
        self.meta.stats.errors.fetch_add(1, Ordering::Relaxed);
        warn!(%error, "Handler failed.");
    }

    /// Stops this instance normally once the current message is handled. Under a `transient`
    /// policy it stays stopped; under `permanent` the supervisor starts a fresh one.
    pub fn stop(&mut self) {
        *self.stop_requested = true;
        self.ctx.stop();
    }
}

/// Counters of one slot of a pool. They outlive the instances that occupy the slot, so that
/// `handled` and `restarts` add up over restarts.
#[derive(Debug, Default)]
pub struct SlotStats {
    /// Messages handled without a panic.
    pub handled: AtomicU64,
    /// Handler panics plus failures reported through [`Cx::record_error`].
    pub errors: AtomicU64,
    /// Times the slot's instance was replaced.
    pub restarts: AtomicU64,
    /// Set by fault injection: the next handler of this slot's instance panics.
    pub(crate) panic_armed: AtomicBool,
    /// Why the last instance exited, written by the instance, taken by the supervisor.
    pub(crate) last_exit: Mutex<Option<ExitReason>>,
}

impl SlotStats {
    pub(crate) fn record_exit(&self, reason: ExitReason) {
        *self.last_exit.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason);
    }

    pub(crate) fn take_exit(&self) -> Option<ExitReason> {
        self.last_exit
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }
}

/// Who an instance is and where it reports; fixed for the instance's life.
pub(crate) struct InstanceMeta {
    pub pool: usize,
    pub index: usize,
    pub generation: u64,
    pub stats: Arc<SlotStats>,
    /// Messages routed to this instance and not handled yet.
    pub backlog: Arc<AtomicI64>,
    pub supervisor: Recipient<Envelope<InstanceDown>>,
    pub mailbox_capacity: usize,
}

/// The actix actor running one instance of role `R`.
pub struct Instance<R: RoleActor> {
    role: R,
    meta: InstanceMeta,
    /// Set once a handler panicked: the state is not trusted any more, and the stop that
    /// follows is not a normal one.
    failed: bool,
    /// Set when the role asked to stop. A stop nobody asked for is a failure: actix runs
    /// `stopped` when it drops a context whose future panicked outside any handler.
    stop_requested: bool,
}

impl<R: RoleActor> Instance<R> {
    pub(crate) fn new(role: R, meta: InstanceMeta) -> Self {
        Instance {
            role,
            meta,
            failed: false,
            stop_requested: false,
        }
    }

    fn report_down(&self, cause: Option<MessageId>) {
        let down = InstanceDown {
            pool: self.meta.pool,
            instance: self.meta.index,
            generation: self.meta.generation,
        };
        let envelope = Envelope::caused_by_any(cause, down);
        // If the supervisor is gone the system is stopping, and nobody needs the report.
        let _ = self.meta.supervisor.try_send(envelope);
    }

    /// Runs `f` with a panic guard; on a panic, records it, stops and reports.
    fn guarded<T>(
        &mut self,
        ctx: &mut Context<Self>,
        current: Option<MessageId>,
        f: impl FnOnce(&mut R, &mut Cx<'_, R>) -> T,
    ) -> Option<T> {
        let armed = self.meta.stats.panic_armed.swap(false, Ordering::Relaxed);
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            if armed {
                panic!("fault injected through the HTTP API");
            }
            let mut cx = Cx {
                ctx: &mut *ctx,
                meta: &self.meta,
                current,
                stop_requested: &mut self.stop_requested,
            };
            f(&mut self.role, &mut cx)
        }));
        match outcome {
            Ok(value) => Some(value),
            Err(payload) => {
                LAST_PANIC.take();
                let message = panic_message(payload.as_ref());
                self.failed = true;
                self.meta.stats.errors.fetch_add(1, Ordering::Relaxed);
                error!(panic = %message, "Handler panicked; stopping the instance for a restart.");
                self.meta.stats.record_exit(ExitReason::Panic(message));
                ctx.stop();
                self.report_down(current);
                None
            }
        }
    }
}

impl<R: RoleActor> Actor for Instance<R> {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.set_mailbox_capacity(self.meta.mailbox_capacity);
        let span = info_span!("start", role = R::ROLE, instance = self.meta.index);
        let _entered = span.enter();
        self.guarded(ctx, None, |role, cx| role.started(cx));
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        if self.failed {
            return;
        }
        let span = info_span!("stop", role = R::ROLE, instance = self.meta.index);
        let _entered = span.enter();
        if !self.stop_requested {
            // The context is being dropped after a panic in a future it ran (the panic hook
            // ran on this thread just before), or for a reason we cannot name.
            let reason = LAST_PANIC
                .take()
                .map_or(ExitReason::Vanished, ExitReason::Panic);
            self.meta.stats.errors.fetch_add(1, Ordering::Relaxed);
            error!(%reason, "Instance stopped without being asked to; it will be restarted.");
            self.meta.stats.record_exit(reason);
            self.report_down(None);
            return;
        }
        match panic::catch_unwind(AssertUnwindSafe(|| self.role.stopped())) {
            Ok(()) => self.meta.stats.record_exit(ExitReason::Normal),
            Err(payload) => {
                let message = panic_message(payload.as_ref());
                error!(panic = %message, "Panicked while stopping.");
                self.meta.stats.record_exit(ExitReason::Panic(message));
            }
        }
        self.report_down(None);
    }
}

impl<R, M> Handler<Envelope<M>> for Instance<R>
where
    R: Handle<M>,
    M: Message + 'static,
{
    type Result = Guarded<R::Reply>;

    fn handle(&mut self, envelope: Envelope<M>, ctx: &mut Context<Self>) -> Self::Result {
        self.meta.backlog.fetch_sub(1, Ordering::Relaxed);
        let Envelope {
            id,
            parent,
            payload,
        } = envelope;
        let span = info_span!(
            "handle",
            role = R::ROLE,
            instance = self.meta.index,
            message = short_type_name::<M>(),
            message_id = id.get(),
            parent_id = parent.map_or(0, MessageId::get),
        );
        let _entered = span.enter();
        if self.failed {
            // Stopping after a panic: the state is not trusted. Dropping the reply makes the
            // sender see `MailboxError::Closed`.
            warn!("Message reached an instance that is stopping after a panic.");
            return Guarded(None);
        }
        // The clock is read only when the per-message DEBUG line will be written.
        let started = tracing::enabled!(Level::DEBUG).then(Instant::now);
        let reply = self.guarded(ctx, Some(id), |role, cx| role.handle(payload, cx));
        if reply.is_some() {
            self.meta.stats.handled.fetch_add(1, Ordering::Relaxed);
            if let Some(started) = started {
                let elapsed_us = started.elapsed().as_micros() as u64;
                debug!(elapsed_us, "Message handled.");
            }
        }
        Guarded(reply)
    }
}

/// A handler's reply, or nothing when the handler panicked. With nothing, the reply channel is
/// dropped and the sender sees `MailboxError::Closed`.
pub struct Guarded<T>(Option<T>);

impl<A, M, T> MessageResponse<A, M> for Guarded<T>
where
    A: Actor,
    M: Message,
    T: MessageResponse<A, M>,
{
    fn handle(self, ctx: &mut A::Context, tx: Option<OneshotSender<M::Result>>) {
        if let Some(reply) = self.0 {
            reply.handle(ctx, tx);
        }
    }
}

// Every role answers the runtime's own messages.

impl<R: RoleActor> Handle<Ping> for R {
    type Reply = MessageResult<Envelope<Ping>>;

    fn handle(&mut self, _: Ping, cx: &mut Cx<'_, R>) -> Self::Reply {
        let stats = &cx.meta.stats;
        MessageResult(InstanceInfo {
            role: R::ROLE,
            instance: cx.meta.index,
            // This message is counted once the handler returns; include it.
            handled: stats.handled.load(Ordering::Relaxed) + 1,
            restarts: stats.restarts.load(Ordering::Relaxed),
        })
    }
}

impl<R: RoleActor> Handle<Stop> for R {
    type Reply = ();

    fn handle(&mut self, _: Stop, cx: &mut Cx<'_, R>) {
        cx.stop();
    }
}

thread_local! {
    /// The message of the last panic on this thread, kept by the hook [`record_panics`]
    /// installs, for the panics that escape a handler's guard.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Chains a panic hook that remembers each thread's last panic message, so that an instance
/// killed by a panic outside a handler can still name it. Installed once, by the runtime; the
/// hook that was there before (the log's) still runs.
pub(crate) fn record_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            LAST_PANIC.set(Some(panic_message(info.payload())));
            previous(info);
        }));
    });
}

/// `ferret_actors::messages::Ping` → `Ping`.
fn short_type_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base)
}

/// The text of a panic payload (`panic!` gives a `&str` or a `String`).
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "panic with a non-text payload".to_string()
    }
}
