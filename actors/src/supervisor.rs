//! The `SystemSupervisor`: starts every instance from its role's factory, restarts failed ones,
//! and stops the system cleanly, on a signal or when restarts come too fast.
//!
//! actix's own `Supervisor` restarts an actor only when it stops itself; an actor whose handler
//! panicked is gone for good. So supervision is ours, with Erlang/OTP semantics:
//!
//! - **one_for_one**: a failed instance is replaced alone, in its own slot of its pool, from
//!   the role's factory. Routes read slots at send time, so senders see the new instance at
//!   once ([`crate::pool`]).
//! - **policy per role**: `permanent` instances are always restarted, `transient` ones only
//!   after a failure ([`ferret::supervision::RestartPolicy`]).
//! - **restart intensity**: more than `max_restarts` restarts within `period` and the
//!   supervisor stops everything, recording an [`Escalation`] that names the role and the last
//!   failure; `ferret run` prints it and exits non-zero.
//!
//! Failures are seen two ways: an instance that panicked (in a handler, or in a future it ran)
//! or stopped reports [`InstanceDown`] itself; and a liveness sweep every `liveness_interval`
//! finds instances whose mailbox closed without any report, and retries rebuilds that failed.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use actix::{Actor, Arbiter, ArbiterHandle, AsyncContext, Context, Handler, Recipient};
use ferret::config::Settings;
use ferret::supervision::{ExitReason, IntensityExceeded, RestartIntensity, RestartPolicy};
use tracing::{error, info, info_span, warn};

use crate::instance::{Instance, InstanceMeta, RoleActor, SlotStats};
use crate::messages::{
    Envelope, InstanceDown, InstanceInfo, MessageId, Ping, RecordRestart, Shutdown, Stop,
};
use crate::pool::{Pool, Route, RouteError};

/// How the runtime runs instances and supervises them.
#[derive(Debug, Clone)]
pub struct RuntimeOptions {
    /// Worker threads that run instances; at least one.
    pub arbiters: usize,
    /// Mailbox capacity of every instance.
    pub mailbox_capacity: usize,
    /// Restart intensity: at most this many restarts…
    pub max_restarts: u32,
    /// …within this window.
    pub period: Duration,
    /// How often to look for instances that died without a report.
    pub liveness_interval: Duration,
    /// How long mailboxes may drain at shutdown.
    pub shutdown_grace: Duration,
}

impl RuntimeOptions {
    /// The options of a validated config; `arbiters = 0` becomes one per CPU.
    pub fn from_settings(settings: &Settings) -> RuntimeOptions {
        let arbiters = settings.runtime.arbiters.map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get()),
            |n| n.get(),
        );
        RuntimeOptions {
            arbiters,
            mailbox_capacity: settings.runtime.mailbox_capacity,
            max_restarts: settings.supervisor.max_restarts,
            period: settings.supervisor.period,
            liveness_interval: settings.supervisor.liveness_interval,
            shutdown_grace: settings.runtime.shutdown_grace,
        }
    }
}

/// Why the supervisor gave up and stopped the system.
#[derive(Debug, Clone)]
pub struct Escalation {
    /// The role whose restart was refused.
    pub role: &'static str,
    /// The instance.
    pub instance: usize,
    /// Its last failure.
    pub cause: ExitReason,
    /// The intensity that was exceeded.
    pub exceeded: IntensityExceeded,
}

impl fmt::Display for Escalation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "role {} (instance {}) failed too often: {}; last failure: {}",
            self.role, self.instance, self.exceeded, self.cause
        )
    }
}

/// One row of `GET /api/actors`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct InstanceStatus {
    /// The role.
    pub role: &'static str,
    /// The instance's index in its pool.
    pub instance: usize,
    /// Times the slot's instance was restarted.
    pub restarts: u64,
    /// Messages handled by the slot's instances.
    pub handled: u64,
}

/// Counters of one role, summed over its instances, for `/metrics`.
#[derive(Debug, Clone, Default)]
pub struct RoleStatus {
    /// The role.
    pub role: &'static str,
    /// Live instances.
    pub instances: usize,
    /// Messages handled.
    pub handled: u64,
    /// Handler panics and reported handler failures.
    pub errors: u64,
    /// Restarts.
    pub restarts: u64,
    /// Messages routed to live instances and not handled yet.
    pub backlog: i64,
    /// Messages no instance could take, or lost with a failed instance.
    pub dropped: u64,
}

/// A supervised pool with its factory and policy, seen without its role type.
trait Member: Send + Sync {
    fn role(&self) -> &'static str;
    fn policy(&self) -> RestartPolicy;
    fn len(&self) -> usize;
    fn stats(&self, index: usize) -> &Arc<SlotStats>;
    /// (generation, has an instance, the instance is alive)
    fn slot_state(&self, index: usize) -> (u64, bool, bool);
    /// Builds an instance from the factory and installs it in slot `index`; returns how many
    /// messages queued at the instance it replaced were lost.
    fn spawn(&self, pool: usize, index: usize, spawner: &Spawner) -> anyhow::Result<u64>;
    fn clear(&self, index: usize);
    fn backlog(&self) -> i64;
    fn dropped(&self) -> u64;
    fn stop_route(&self) -> Route<Stop>;
    fn ping_route(&self) -> Route<Ping>;
}

type Factory<R> = Box<dyn Fn(usize) -> anyhow::Result<R> + Send + Sync>;

struct Supervised<R: RoleActor> {
    pool: Pool<R>,
    policy: RestartPolicy,
    factory: Factory<R>,
}

impl<R: RoleActor> Member for Supervised<R> {
    fn role(&self) -> &'static str {
        R::ROLE
    }
    fn policy(&self) -> RestartPolicy {
        self.policy
    }
    fn len(&self) -> usize {
        self.pool.len()
    }
    fn stats(&self, index: usize) -> &Arc<SlotStats> {
        self.pool.stats(index)
    }
    fn slot_state(&self, index: usize) -> (u64, bool, bool) {
        self.pool.slot_state(index)
    }
    fn spawn(&self, pool: usize, index: usize, spawner: &Spawner) -> anyhow::Result<u64> {
        let role = (self.factory)(index)?;
        let stats = Arc::clone(self.pool.stats(index));
        let arbiter = spawner.place();
        Ok(self.pool.install(index, |generation, backlog| {
            let meta = InstanceMeta {
                pool,
                index,
                generation,
                stats,
                backlog,
                supervisor: spawner.supervisor.clone(),
                mailbox_capacity: spawner.mailbox_capacity,
            };
            Instance::start_in_arbiter(&arbiter, move |_| Instance::new(role, meta))
        }))
    }
    fn clear(&self, index: usize) {
        self.pool.clear(index)
    }
    fn backlog(&self) -> i64 {
        self.pool.backlog()
    }
    fn dropped(&self) -> u64 {
        self.pool.dropped()
    }
    fn stop_route(&self) -> Route<Stop> {
        self.pool.route()
    }
    fn ping_route(&self) -> Route<Ping> {
        self.pool.route()
    }
}

/// Where new instances go: the worker arbiters, round-robin.
struct Spawner {
    arbiters: Vec<ArbiterHandle>,
    next: AtomicUsize,
    supervisor: Recipient<Envelope<InstanceDown>>,
    mailbox_capacity: usize,
}

impl Spawner {
    fn place(&self) -> ArbiterHandle {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        self.arbiters[i % self.arbiters.len()].clone()
    }
}

/// Collects the pools to supervise, then starts them all.
pub struct RuntimeBuilder {
    options: RuntimeOptions,
    members: Vec<Arc<dyn Member>>,
    restart_log: Option<Route<RecordRestart>>,
}

impl RuntimeBuilder {
    /// An empty runtime.
    pub fn new(options: RuntimeOptions) -> RuntimeBuilder {
        RuntimeBuilder {
            options,
            members: Vec::new(),
            restart_log: None,
        }
    }

    /// Supervises `pool`: each slot gets an instance built by `factory(index)`, now and after
    /// every restart. Pools start in the order they are added and stop in reverse.
    pub fn supervise<R: RoleActor>(
        &mut self,
        pool: &Pool<R>,
        policy: RestartPolicy,
        factory: impl Fn(usize) -> anyhow::Result<R> + Send + Sync + 'static,
    ) -> &mut Self {
        self.members.push(Arc::new(Supervised {
            pool: pool.clone(),
            policy,
            factory: Box::new(factory),
        }));
        self
    }

    /// Where restarts are recorded for post-mortems (the PageDb).
    pub fn restart_log(&mut self, route: Route<RecordRestart>) -> &mut Self {
        self.restart_log = Some(route);
        self
    }

    /// Starts the worker arbiters, the supervisor and every instance. Must run inside an
    /// actix `System`. Fails if a factory fails at start-up.
    pub fn start(self) -> anyhow::Result<Runtime> {
        crate::instance::record_panics();
        let options = self.options;
        let ctx = Context::<SystemSupervisor>::new();
        let supervisor_addr = ctx.address();
        let spawner = Spawner {
            arbiters: (0..options.arbiters.max(1))
                .map(|_| Arbiter::new().handle())
                .collect(),
            next: AtomicUsize::new(0),
            supervisor: supervisor_addr.clone().recipient(),
            mailbox_capacity: options.mailbox_capacity,
        };
        let members: Arc<[Arc<dyn Member>]> = self.members.into();
        for (pool, member) in members.iter().enumerate() {
            for index in 0..member.len() {
                member.spawn(pool, index, &spawner).map_err(|err| {
                    err.context(format!("starting {} instance {index}", member.role()))
                })?;
            }
            info!(
                role = member.role(),
                instances = member.len(),
                "Started pool."
            );
        }
        let escalation = Arc::new(Mutex::new(None));
        ctx.run(SystemSupervisor {
            members: Arc::clone(&members),
            spawner,
            intensity: RestartIntensity::new(options.max_restarts, options.period),
            options,
            restart_log: self.restart_log,
            escalation: Arc::clone(&escalation),
            phase: Phase::Running,
        });
        Ok(Runtime {
            supervisor: supervisor_addr,
            members,
            escalation,
        })
    }
}

/// A handle on the running runtime, for the HTTP API, the daemon and tests. Clones are shallow.
#[derive(Clone)]
pub struct Runtime {
    supervisor: actix::Addr<SystemSupervisor>,
    members: Arc<[Arc<dyn Member>]>,
    escalation: Arc<Mutex<Option<Escalation>>>,
}

impl Runtime {
    /// Every slot of every pool, in start-up order. A slot whose transient instance stopped is
    /// left out.
    pub fn instances(&self) -> Vec<InstanceStatus> {
        let mut rows = Vec::new();
        for member in self.members.iter() {
            for index in 0..member.len() {
                if !member.slot_state(index).1 {
                    continue;
                }
                let stats = member.stats(index);
                rows.push(InstanceStatus {
                    role: member.role(),
                    instance: index,
                    restarts: stats.restarts.load(Ordering::Relaxed),
                    handled: stats.handled.load(Ordering::Relaxed),
                });
            }
        }
        rows
    }

    /// Per-role totals, in start-up order.
    pub fn roles(&self) -> Vec<RoleStatus> {
        self.members
            .iter()
            .map(|member| {
                let mut status = RoleStatus {
                    role: member.role(),
                    backlog: member.backlog(),
                    dropped: member.dropped(),
                    ..RoleStatus::default()
                };
                for index in 0..member.len() {
                    let stats = member.stats(index);
                    status.instances += usize::from(member.slot_state(index).2);
                    status.handled += stats.handled.load(Ordering::Relaxed);
                    status.errors += stats.errors.load(Ordering::Relaxed);
                    status.restarts += stats.restarts.load(Ordering::Relaxed);
                }
                status
            })
            .collect()
    }

    fn member(&self, role: &str, instance: usize) -> Option<&Arc<dyn Member>> {
        self.members
            .iter()
            .find(|member| member.role() == role)
            .filter(|member| instance < member.len())
    }

    /// Makes the next handler of `role`'s instance `instance` panic, and sends it a [`Ping`]
    /// so that the next handler runs now. `false` if there is no such instance.
    pub fn inject_panic(&self, role: &str, instance: usize) -> bool {
        let Some(member) = self.member(role, instance) else {
            return false;
        };
        member
            .stats(instance)
            .panic_armed
            .store(true, Ordering::Relaxed);
        // The ping is the handler that panics; its failure is the point.
        let _ = member
            .ping_route()
            .do_send_to(instance, Envelope::new(Ping));
        true
    }

    /// Pings one instance; `None` if there is no such slot.
    pub async fn ping(
        &self,
        role: &str,
        instance: usize,
    ) -> Option<Result<InstanceInfo, RouteError>> {
        let route = self.member(role, instance)?.ping_route();
        Some(route.send_to(instance, Envelope::new(Ping)).await)
    }

    /// Asks the supervisor to drain and stop the system (exit code 0).
    pub fn shutdown(&self) {
        self.supervisor.do_send(Shutdown);
    }

    /// Why the supervisor stopped the system, if it gave up.
    pub fn escalation(&self) -> Option<Escalation> {
        self.escalation
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

enum Phase {
    Running,
    /// Waiting for backlogs to reach zero, or the deadline.
    Draining {
        deadline: Instant,
    },
    /// Stopping pools in reverse start-up order; `next` pools are still to be stopped after
    /// the one being waited for.
    Stopping {
        next: usize,
        waiting: Option<(usize, Instant)>,
        exit_code: i32,
    },
    Stopped,
}

/// The actor that supervises every pool. See the module docs.
pub struct SystemSupervisor {
    members: Arc<[Arc<dyn Member>]>,
    spawner: Spawner,
    intensity: RestartIntensity,
    options: RuntimeOptions,
    restart_log: Option<Route<RecordRestart>>,
    escalation: Arc<Mutex<Option<Escalation>>>,
    phase: Phase,
}

/// How often the shutdown sequence checks its progress.
const SHUTDOWN_TICK: Duration = Duration::from_millis(10);
/// The least time each pool gets to stop once its turn comes, even after the grace period.
const STOP_WAIT: Duration = Duration::from_secs(2);

impl Actor for SystemSupervisor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.run_interval(self.options.liveness_interval, |this, ctx| {
            this.guarded(|this| this.sweep(ctx))
        });
    }
}

impl SystemSupervisor {
    /// Runs supervisor logic with a panic guard. Nobody supervises the supervisor, so a panic
    /// here (a bug) stops the system with exit code 1 rather than leaving it unsupervised.
    fn guarded(&mut self, f: impl FnOnce(&mut Self)) {
        if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(self))) {
            let panic = crate::instance::panic_message(payload.as_ref());
            error!(%panic, "The supervisor itself failed; stopping the system.");
            self.phase = Phase::Stopped;
            actix::System::current().stop_with_code(1);
        }
    }

    /// Finds instances whose mailbox closed although nobody reported it.
    fn sweep(&mut self, ctx: &mut Context<Self>) {
        if !matches!(self.phase, Phase::Running) {
            return;
        }
        for pool in 0..self.members.len() {
            for index in 0..self.members[pool].len() {
                let (generation, occupied, alive) = self.members[pool].slot_state(index);
                if occupied && !alive {
                    self.instance_down(ctx, pool, index, generation, None);
                }
            }
        }
    }

    fn instance_down(
        &mut self,
        ctx: &mut Context<Self>,
        pool: usize,
        index: usize,
        generation: u64,
        cause: Option<MessageId>,
    ) {
        if !matches!(self.phase, Phase::Running) {
            return;
        }
        let member = Arc::clone(&self.members[pool]);
        let (current, occupied, alive) = member.slot_state(index);
        if current != generation || !occupied {
            return; // already replaced or cleared
        }
        let reason = match member.stats(index).take_exit() {
            Some(reason) => reason,
            None if alive => return, // nothing happened to it
            None => ExitReason::Vanished,
        };
        let role = member.role();
        if !member.policy().restarts_after(&reason) {
            member.clear(index);
            info!(role, instance = index, %reason, "Instance stopped; its policy does not restart it.");
            return;
        }
        if let Err(exceeded) = self.intensity.handle_restart(Instant::now()) {
            let escalation = Escalation {
                role,
                instance: index,
                cause: reason,
                exceeded,
            };
            error!(%escalation, "Restart intensity exceeded; stopping the system.");
            *self.escalation.lock().unwrap_or_else(|e| e.into_inner()) = Some(escalation);
            self.begin_stopping(1);
            Self::tick_shutdown(ctx);
            return;
        }
        match member.spawn(pool, index, &self.spawner) {
            Ok(lost) => {
                let restarts = member.stats(index).restarts.fetch_add(1, Ordering::Relaxed) + 1;
                warn!(
                    role,
                    instance = index,
                    cause = %reason,
                    restarts,
                    lost_messages = lost,
                    caused_by = cause.map_or(0, MessageId::get),
                    "Restarted instance."
                );
                self.record_restart(role, index, &reason, cause);
            }
            // The slot keeps its dead instance, so the next sweep tries again, and the
            // restart intensity bounds how often.
            Err(err) => {
                error!(role, instance = index, error = %format!("{err:#}"), "Could not rebuild instance.")
            }
        }
    }

    fn record_restart(
        &self,
        role: &'static str,
        instance: usize,
        reason: &ExitReason,
        cause: Option<MessageId>,
    ) {
        let Some(log) = &self.restart_log else { return };
        let record = RecordRestart {
            role,
            instance,
            cause: reason.to_string(),
            at_ms: unix_millis(),
        };
        let envelope = Envelope::caused_by_any(cause, record);
        if let Err(err) = log.do_send(envelope) {
            warn!(error = %err, "Could not record the restart in the store.");
        }
    }

    fn tick_shutdown(ctx: &mut Context<Self>) {
        ctx.run_interval(SHUTDOWN_TICK, |this, _| {
            this.guarded(Self::advance_shutdown)
        });
    }

    fn begin_stopping(&mut self, exit_code: i32) {
        self.phase = Phase::Stopping {
            next: self.members.len(),
            waiting: None,
            exit_code,
        };
    }

    /// One step of the shutdown sequence; called every [`SHUTDOWN_TICK`].
    fn advance_shutdown(&mut self) {
        let now = Instant::now();
        match &mut self.phase {
            Phase::Running | Phase::Stopped => {}
            Phase::Draining { deadline } => {
                let backlog: i64 = self.members.iter().map(|m| m.backlog()).sum();
                if backlog <= 0 || now >= *deadline {
                    if backlog > 0 {
                        warn!(backlog, "Grace period over; stopping with messages queued.");
                    } else {
                        info!("Mailboxes drained.");
                    }
                    self.begin_stopping(0);
                }
            }
            Phase::Stopping {
                next,
                waiting,
                exit_code,
            } => {
                if let Some((pool, deadline)) = *waiting {
                    let member = &self.members[pool];
                    let stopped = (0..member.len()).all(|i| !member.slot_state(i).2);
                    if !stopped && now < deadline {
                        return;
                    }
                    if !stopped {
                        warn!(role = member.role(), "Pool did not stop in time.");
                    }
                    *waiting = None;
                }
                if *next == 0 {
                    let code = *exit_code;
                    info!(exit_code = code, "All pools stopped; stopping the system.");
                    self.phase = Phase::Stopped;
                    actix::System::current().stop_with_code(code);
                    return;
                }
                *next -= 1;
                let member = &self.members[*next];
                let route = member.stop_route();
                for index in 0..member.len() {
                    // An empty or dead slot has nothing to stop.
                    let _ = route.do_send_to(index, Envelope::new(Stop));
                }
                *waiting = Some((*next, now + STOP_WAIT));
            }
        }
    }
}

impl Handler<Envelope<InstanceDown>> for SystemSupervisor {
    type Result = ();

    fn handle(&mut self, envelope: Envelope<InstanceDown>, ctx: &mut Context<Self>) {
        let span = info_span!(
            "handle",
            role = "supervisor",
            instance = 0,
            message = "InstanceDown",
            message_id = envelope.id.get(),
            parent_id = envelope.parent.map_or(0, MessageId::get),
        );
        let _entered = span.enter();
        let down = envelope.payload;
        self.instance_down(
            ctx,
            down.pool,
            down.instance,
            down.generation,
            envelope.parent,
        );
    }
}

impl Handler<Shutdown> for SystemSupervisor {
    type Result = ();

    fn handle(&mut self, _: Shutdown, ctx: &mut Context<Self>) {
        if !matches!(self.phase, Phase::Running) {
            return;
        }
        info!(grace = ?self.options.shutdown_grace, "Shutting down: draining mailboxes.");
        self.phase = Phase::Draining {
            deadline: Instant::now() + self.options.shutdown_grace,
        };
        Self::tick_shutdown(ctx);
    }
}

/// Milliseconds since the Unix epoch, for records in the store.
pub(crate) fn unix_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
