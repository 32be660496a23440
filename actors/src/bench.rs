//! `ferret bench actors`: what ferret's runtime costs per message.
//!
//! Two variants move the same messages from one sender to a pool of N actors spread over the
//! same worker arbiters:
//!
//! - **bare actix**: a `Vec<Addr<A>>` picked round-robin by the sender, plain messages, no
//!   tracing, no supervision: the floor;
//! - **ferret runtime**: a [`Route`] into a supervised [`Pool`], every message in an
//!   [`Envelope`], every handler in an INFO span (a real `fmt` subscriber writing to a sink),
//!   panic guard, counters and the supervisor's liveness sweep running.
//!
//! Each variant is measured fire-and-forget (queue M messages, wait until all are handled)
//! and request-reply (M/10 sequential `send().await`s). The median of the runs is printed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{Actor, Addr, Arbiter, Context, Handler, Message};
use ferret::supervision::RestartPolicy;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::instance::{Cx, Handle, RoleActor};
use crate::messages::Envelope;
use crate::pool::{Pool, Route};
use crate::supervisor::{RuntimeBuilder, RuntimeOptions};

/// Options of `ferret bench actors`.
#[derive(Debug, Clone, clap::Args)]
pub struct ActorBenchArgs {
    /// Actors in the pool (and in the baseline).
    #[arg(long, default_value_t = 4)]
    pub instances: usize,
    /// Worker arbiters (threads) the actors are spread over.
    #[arg(long, default_value_t = 2)]
    pub arbiters: usize,
    /// Messages per fire-and-forget run (request-reply runs send a tenth of them).
    #[arg(long, default_value_t = 200_000)]
    pub messages: u64,
    /// Runs per variant; the median is reported.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
}

/// The benchmark's message: count one.
#[derive(Debug, Message)]
#[rtype(result = "u64")]
pub struct Bump;

/// Runs the benchmark and prints the table.
pub fn actors(args: &ActorBenchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.instances > 0 && args.arbiters > 0 && args.runs > 0 && args.messages >= 10,
        "--instances, --arbiters and --runs must be ≥ 1, --messages ≥ 10"
    );
    // Tracing at INFO with a real formatter, as `ferret run` has it, output discarded; the
    // level can be lowered to WARN to show what the spans cost.
    let (level, reload) = tracing_subscriber::reload::Layer::new(LevelFilter::INFO);
    tracing_subscriber::registry()
        .with(level)
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::sink))
        .try_init()?;
    let spans_off = move || {
        reload
            .modify(|filter| *filter = LevelFilter::WARN)
            .map_err(anyhow::Error::from)
    };

    let system = actix_rt::System::new();
    let results = system.block_on(measure(args.clone(), spans_off))?;
    println!(
        "ferret bench actors: {} instances on {} arbiters, {} messages fire-and-forget, {} request-reply, median of {} runs\n",
        args.instances,
        args.arbiters,
        args.messages,
        args.messages / 10,
        args.runs
    );
    println!(
        "{:<46} {:>18} {:>18}",
        "variant", "fire-and-forget", "request-reply"
    );
    for (name, fire, reply) in &results {
        println!(
            "{name:<44} {:>12.0} msg/s {:>12.0} msg/s",
            fire.rate, reply.rate
        );
    }
    let bare = &results[0];
    for (name, fire, reply) in &results[1..] {
        println!(
            "{:<44} {:>15.0} ns {:>15.0} ns",
            format!(
                "cost over bare: {}",
                name.rsplit(", ").next().unwrap_or(name)
            ),
            fire.ns_per_msg - bare.1.ns_per_msg,
            reply.ns_per_msg - bare.2.ns_per_msg
        );
    }
    Ok(())
}

struct Figure {
    rate: f64,
    ns_per_msg: f64,
}

fn median(mut samples: Vec<Duration>, messages: u64) -> Figure {
    samples.sort();
    let mid = samples[samples.len() / 2];
    Figure {
        rate: messages as f64 / mid.as_secs_f64(),
        ns_per_msg: mid.as_nanos() as f64 / messages as f64,
    }
}

async fn measure(
    args: ActorBenchArgs,
    spans_off: impl FnOnce() -> anyhow::Result<()>,
) -> anyhow::Result<Vec<(&'static str, Figure, Figure)>> {
    let requests = args.messages / 10;
    let arbiters: Vec<_> = (0..args.arbiters)
        .map(|_| Arbiter::new().handle())
        .collect();

    let bare_count = Arc::new(AtomicU64::new(0));
    let bare: Vec<Addr<BareSink>> = (0..args.instances)
        .map(|i| {
            let count = Arc::clone(&bare_count);
            BareSink::start_in_arbiter(&arbiters[i % arbiters.len()], move |_| BareSink { count })
        })
        .collect();

    let pool = Pool::<BenchSink>::new(args.instances);
    let ours_count = Arc::new(AtomicU64::new(0));
    let mut builder = RuntimeBuilder::new(RuntimeOptions {
        arbiters: args.arbiters,
        mailbox_capacity: 1024,
        max_restarts: 5,
        period: Duration::from_secs(10),
        liveness_interval: Duration::from_millis(200),
        shutdown_grace: Duration::from_secs(1),
    });
    let count = Arc::clone(&ours_count);
    builder.supervise(&pool, RestartPolicy::Permanent, move |_| {
        Ok(BenchSink {
            count: Arc::clone(&count),
        })
    });
    let _runtime = builder.start()?;
    let route: Route<Bump> = pool.route();

    let mut bare = Variant::new(|messages, requests| {
        let bare = &bare;
        let bare_count = &bare_count;
        async move {
            let target = bare_count.load(Ordering::Relaxed) + messages;
            for i in 0..messages {
                bare[i as usize % bare.len()].do_send(Bump);
            }
            wait_for(bare_count, target).await;
            let fired = Instant::now();
            for i in 0..requests {
                bare[i as usize % bare.len()].send(Bump).await?;
            }
            Ok(fired)
        }
    });
    let mut ours = Variant::new(|messages, requests| {
        let route = &route;
        let ours_count = &ours_count;
        async move {
            let target = ours_count.load(Ordering::Relaxed) + messages;
            for _ in 0..messages {
                route.do_send(Envelope::new(Bump))?;
            }
            wait_for(ours_count, target).await;
            let fired = Instant::now();
            for _ in 0..requests {
                route.send(Envelope::new(Bump)).await?;
            }
            Ok(fired)
        }
    });
    for _ in 0..args.runs {
        bare.run(args.messages, requests).await?;
        ours.run(args.messages, requests).await?;
    }
    spans_off()?;
    let mut quiet = Variant::new(ours.body);
    for _ in 0..args.runs {
        quiet.run(args.messages, requests).await?;
    }
    Ok(vec![
        (
            "bare actix Addr (no envelope, span, guard)",
            bare.fire(args.messages),
            bare.reply(requests),
        ),
        (
            "ferret Route → supervised Pool, INFO spans",
            ours.fire(args.messages),
            ours.reply(requests),
        ),
        (
            "ferret Route → supervised Pool, spans off",
            quiet.fire(args.messages),
            quiet.reply(requests),
        ),
    ])
}

/// One variant's timings: fire-and-forget and request-reply, one sample per run. `body` sends
/// M messages, waits until all are handled, then makes M/10 sequential requests, returning
/// when the fire-and-forget part ended.
struct Variant<F> {
    body: F,
    fire: Vec<Duration>,
    reply: Vec<Duration>,
}

impl<F, Fut> Variant<F>
where
    F: Fn(u64, u64) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<Instant>>,
{
    fn new(body: F) -> Self {
        Variant {
            body,
            fire: Vec::new(),
            reply: Vec::new(),
        }
    }

    async fn run(&mut self, messages: u64, requests: u64) -> anyhow::Result<()> {
        let start = Instant::now();
        let fired = (self.body)(messages, requests).await?;
        self.fire.push(fired - start);
        self.reply.push(fired.elapsed());
        Ok(())
    }

    fn fire(&self, messages: u64) -> Figure {
        median(self.fire.clone(), messages)
    }

    fn reply(&self, requests: u64) -> Figure {
        median(self.reply.clone(), requests)
    }
}

async fn wait_for(count: &AtomicU64, target: u64) {
    while count.load(Ordering::Relaxed) < target {
        actix_rt::time::sleep(Duration::from_micros(100)).await;
    }
}

struct BareSink {
    count: Arc<AtomicU64>,
}

impl Actor for BareSink {
    type Context = Context<Self>;
}

impl Handler<Bump> for BareSink {
    type Result = u64;

    fn handle(&mut self, _: Bump, _: &mut Context<Self>) -> u64 {
        self.count.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// The ferret-side sink: the same work as [`BareSink`].
pub struct BenchSink {
    count: Arc<AtomicU64>,
}

impl RoleActor for BenchSink {
    const ROLE: &'static str = "bench_sink";
}

impl Handle<Bump> for BenchSink {
    type Reply = u64;

    fn handle(&mut self, _: Bump, _: &mut Cx<'_, Self>) -> u64 {
        self.count.fetch_add(1, Ordering::Relaxed) + 1
    }
}
