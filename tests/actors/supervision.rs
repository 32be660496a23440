use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix::{AsyncContext, Message};
use ferret::supervision::{ExitReason, RestartPolicy};
use ferret_actors::instance::{Cx, Handle, RoleActor};
use ferret_actors::messages::Envelope;
use ferret_actors::pool::{Pool, Route, RouteError};
use ferret_actors::supervisor::{Runtime, RuntimeBuilder, RuntimeOptions};

use crate::support::eventually;

/// A test role that does what each message asks.
struct Flaky;

impl RoleActor for Flaky {
    const ROLE: &'static str = "flaky";
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Do {
    /// Reply with the instance's index.
    Answer,
    /// Panic inside the handler.
    Panic,
    /// Reply, then panic inside a future the handler spawned (escapes the handler's guard).
    PanicLater,
    /// Stop normally.
    Stop,
}

#[derive(Debug, Message)]
#[rtype(result = "usize")]
struct Work(Do);

impl Handle<Work> for Flaky {
    type Reply = usize;

    fn handle(&mut self, Work(what): Work, cx: &mut Cx<'_, Self>) -> usize {
        match what {
            Do::Answer => {}
            Do::Panic => panic!("asked to panic"),
            Do::PanicLater => {
                cx.ctx().spawn(actix::fut::wrap_future(async {
                    panic!("panic in a future")
                }));
            }
            Do::Stop => cx.stop(),
        }
        cx.instance()
    }
}

fn options(max_restarts: u32, liveness: Duration) -> RuntimeOptions {
    RuntimeOptions {
        max_restarts,
        liveness_interval: liveness,
        ..crate::test_options()
    }
}

fn start(count: usize, policy: RestartPolicy, options: RuntimeOptions) -> (Runtime, Pool<Flaky>) {
    start_with_factory(count, policy, options, Arc::default())
}

/// Like [`start`], with a switch that makes every rebuild fail while it is on.
fn start_with_factory(
    count: usize,
    policy: RestartPolicy,
    options: RuntimeOptions,
    rebuild_fails: Arc<AtomicBool>,
) -> (Runtime, Pool<Flaky>) {
    let pool = Pool::new(count);
    let mut builder = RuntimeBuilder::new(options);
    builder.supervise(&pool, policy, move |_| {
        anyhow::ensure!(
            !rebuild_fails.load(Ordering::Relaxed),
            "rebuild refused by the test"
        );
        Ok(Flaky)
    });
    (builder.start().expect("starts"), pool)
}

fn work(what: Do) -> Envelope<Work> {
    Envelope::new(Work(what))
}

async fn wait_restarts(pool: &Pool<Flaky>, index: usize, n: u64) {
    eventually(Duration::from_secs(2), "the restart", || async {
        (pool.stats(index).restarts.load(Ordering::Relaxed) == n).then_some(())
    })
    .await;
}

#[actix::test]
async fn panicking_instance_is_restarted_and_handles_later_messages() {
    let (runtime, pool) = start(
        2,
        RestartPolicy::Permanent,
        options(5, Duration::from_secs(60)),
    );
    let route: Route<Work> = pool.route();

    let err = route.send_to(0, work(Do::Panic)).await.unwrap_err();
    assert!(matches!(err, RouteError::Mailbox { .. }), "{err}");
    // The instance reported its own panic: no liveness sweep needed (it runs once a minute).
    wait_restarts(&pool, 0, 1).await;

    assert_eq!(route.send_to(0, work(Do::Answer)).await.unwrap(), 0);
    assert_eq!(pool.stats(0).handled.load(Ordering::Relaxed), 1);
    assert_eq!(pool.stats(0).errors.load(Ordering::Relaxed), 1);
    assert_eq!(pool.stats(1).restarts.load(Ordering::Relaxed), 0);
    // Round-robin sends after the restart all land.
    for _ in 0..10 {
        route.send(work(Do::Answer)).await.unwrap();
    }
    let rows = runtime.instances();
    assert_eq!(rows.len(), 2);
    assert_eq!((rows[0].restarts, rows[0].handled), (1, 6));
    assert!(runtime.escalation().is_none());
}

#[actix::test]
async fn routes_never_hand_out_a_dead_instance() {
    // Instance 1 dies and cannot be rebuilt; with no sweep during the test, its slot keeps
    // the dead instance.
    let rebuild_fails = Arc::new(AtomicBool::new(false));
    let (_runtime, pool) = start_with_factory(
        3,
        RestartPolicy::Permanent,
        options(5, Duration::from_secs(60)),
        Arc::clone(&rebuild_fails),
    );
    let route: Route<Work> = pool.route();
    rebuild_fails.store(true, Ordering::Relaxed);
    route.send_to(1, work(Do::Panic)).await.unwrap_err();
    eventually(Duration::from_secs(2), "instance 1 to be gone", || async {
        match route.send_to(1, work(Do::Answer)).await {
            Err(RouteError::NoInstance { .. }) => Some(()),
            _ => None,
        }
    })
    .await;

    for _ in 0..30 {
        let instance = route.send(work(Do::Answer)).await.expect("a live instance");
        assert_ne!(instance, 1);
        route.do_send(work(Do::Answer)).expect("a live instance");
        route
            .do_send_keyed("example.org", work(Do::Answer))
            .expect("a live instance");
    }
    assert_eq!(pool.stats(1).restarts.load(Ordering::Relaxed), 0);
}

#[actix::test]
async fn liveness_sweep_retries_a_rebuild_that_failed() {
    let rebuild_fails = Arc::new(AtomicBool::new(false));
    let (runtime, pool) = start_with_factory(
        2,
        RestartPolicy::Permanent,
        options(50, Duration::from_millis(20)),
        Arc::clone(&rebuild_fails),
    );
    let route: Route<Work> = pool.route();
    rebuild_fails.store(true, Ordering::Relaxed);
    route.send_to(1, work(Do::Panic)).await.unwrap_err();
    // Let a few sweeps fail to rebuild, then let the factory work again.
    actix_rt::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(pool.stats(1).restarts.load(Ordering::Relaxed), 0);
    rebuild_fails.store(false, Ordering::Relaxed);
    wait_restarts(&pool, 1, 1).await;
    assert_eq!(route.send_to(1, work(Do::Answer)).await.unwrap(), 1);
    assert!(runtime.escalation().is_none());
}

#[actix::test]
async fn a_panic_in_a_spawned_future_is_a_failure_not_a_normal_stop() {
    // Transient: a normal stop would not be restarted. Intensity 0: the first failure
    // escalates, which shows how the exit was judged.
    let (runtime, pool) = start(
        1,
        RestartPolicy::Transient,
        options(0, Duration::from_secs(60)),
    );
    let route: Route<Work> = pool.route();
    assert_eq!(route.send_to(0, work(Do::PanicLater)).await.unwrap(), 0);
    let escalation = eventually(Duration::from_secs(2), "the escalation", || async {
        runtime.escalation()
    })
    .await;
    assert_eq!(
        escalation.cause,
        ExitReason::Panic("panic in a future".into())
    );
}

#[actix::test]
async fn transient_instance_that_stops_itself_stays_stopped() {
    let (runtime, pool) = start(
        2,
        RestartPolicy::Transient,
        options(5, Duration::from_millis(30)),
    );
    let route: Route<Work> = pool.route();
    route.send_to(0, work(Do::Stop)).await.unwrap();
    eventually(Duration::from_secs(2), "the slot to empty", || async {
        (runtime.instances().len() == 1).then_some(())
    })
    .await;
    assert_eq!(pool.stats(0).restarts.load(Ordering::Relaxed), 0);
    // Everything goes to the instance that is left.
    for _ in 0..5 {
        assert_eq!(route.send(work(Do::Answer)).await.unwrap(), 1);
    }
    // A transient instance that fails is still restarted.
    route.send_to(1, work(Do::Panic)).await.unwrap_err();
    wait_restarts(&pool, 1, 1).await;
}

#[actix::test]
async fn permanent_instance_that_stops_itself_is_restarted() {
    let (_runtime, pool) = start(
        1,
        RestartPolicy::Permanent,
        options(5, Duration::from_secs(60)),
    );
    let route: Route<Work> = pool.route();
    route.send_to(0, work(Do::Stop)).await.unwrap();
    wait_restarts(&pool, 0, 1).await;
    assert_eq!(route.send_to(0, work(Do::Answer)).await.unwrap(), 0);
}

#[actix::test]
async fn exceeding_the_restart_intensity_stops_the_system_naming_the_role() {
    let (runtime, pool) = start(
        2,
        RestartPolicy::Permanent,
        options(1, Duration::from_secs(60)),
    );
    let route: Route<Work> = pool.route();
    route.send_to(1, work(Do::Panic)).await.unwrap_err();
    wait_restarts(&pool, 1, 1).await;
    assert!(runtime.escalation().is_none());

    route.send_to(1, work(Do::Panic)).await.unwrap_err();
    let escalation = eventually(Duration::from_secs(2), "the escalation", || async {
        runtime.escalation()
    })
    .await;
    assert_eq!(escalation.role, "flaky");
    assert_eq!(escalation.instance, 1);
    assert_eq!(escalation.cause, ExitReason::Panic("asked to panic".into()));
    let shown = escalation.to_string();
    assert!(shown.contains("role flaky"), "{shown}");
    assert!(shown.contains("asked to panic"), "{shown}");
    // The refused restart did not happen.
    assert_eq!(pool.stats(1).restarts.load(Ordering::Relaxed), 1);
}
