//! `ferret sim-listing`: the listing simulator served over HTTP as a live listing.
//!
//! The daemon watches paginated live listings (`…/recent/rss?p=N`, SPEC §1); the real one is
//! Niconico Live's. This command serves a simulated one in its place, so that end-to-end tests
//! and anyone who wants to watch the daemon at work need no real site:
//!
//! | route | answer |
//! |---|---|
//! | `GET /recent/rss?p=N` | page `N` (≥ 1, default 1) as RSS 2.0 like Niconico Live's: `nicolive:total_count` in the channel, one item per broadcast (`guid` `lvNNN`, `pubDate` = reservation); a simulated failed read is a `503` with `Retry-After: 1` (a hung one too, after the scenario's `hang_ms`), a page past the end an empty channel or, with `[reads] past_end`, a `404` (`"not_found"`), the last page again (`"last_page"`) or page 1 again (`"first_page"`), a bad `p` a `400` |
//! | `GET /healthz` | `ok` |
//!
//! The world is the core's [`World`], generated once at start-up from a [`Scenario`]
//! compressed `--time-scale` times (a 30-minute frame lasts 90 s at ×20) for `--hours` of real
//! time from now; after that no broadcast starts and the listing empties. Each request takes
//! the scenario's read latency (`[reads] latency_min_ms` to `latency_max_ms`, compressed like
//! every duration) and is rendered halfway through it, as the simulator's reads are: the world
//! moves to that moment, and the page comes with the scenario's faults (failed reads, empty
//! pages (under the true total, or `[reads] empty_total`), reads held unanswered).
//!
//! On SIGINT or SIGTERM the server stops and, with `--truth FILE`, the ground truth is written
//! as JSON lines: every broadcast on air at some time between start-up and exit (see
//! [`TruthLine`]). The file appears whole at exit or not at all.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use actix_rt::signal::unix::{signal, SignalKind};
use actix_web::http::StatusCode;
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use anyhow::Context as _;
use chrono::{DateTime, SecondsFormat, Utc};
use ferret::listing::sim::{Broadcast, Ending, Scenario, Served, World};
use ferret::listing::{Millis, PageView, HOUR, SECOND};
use quick_xml::escape::escape;
use serde::Serialize;

use crate::onair_bench::load_scenario;
use crate::supervisor::unix_millis;

/// Options of `ferret sim-listing`.
#[derive(Debug, Clone, clap::Args)]
pub struct SimListingArgs {
    /// Address to listen on; port 0 picks a free one (the start-up line shows which).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// A built-in scenario (quiet, peak2009, peak2011) or a scenario TOML file.
    #[arg(long, default_value = "peak2009")]
    pub scenario: String,
    /// How many times faster than real time the world runs (20: a 30-minute frame lasts 90 s).
    #[arg(long, default_value_t = 1.0, value_parser = crate::arg::positive)]
    pub time_scale: f64,
    /// Real hours of broadcasts to generate; after them no broadcast starts and the listing
    /// empties. At most 336 (two weeks).
    #[arg(long, default_value_t = 24.0, value_parser = crate::arg::hours)]
    pub hours: f64,
    /// At exit, write the ground truth here as JSON lines.
    #[arg(long)]
    pub truth: Option<PathBuf>,
    /// Seed of the world, instead of the scenario's.
    #[arg(long)]
    pub seed: Option<u64>,
}

/// The most broadcasts the world may hold (≈ 60 bytes each): a guard against `--hours` and
/// `--time-scale` large enough to exhaust memory at start-up.
const MAX_BROADCASTS: f64 = 10_000_000.0;

/// How long a stop waits for requests in flight, seconds.
const SHUTDOWN_GRACE_SECS: u64 = 1;

/// What the request handlers share.
struct State {
    world: Mutex<World>,
    /// The channel's `<title>`.
    title: String,
    /// The channel's `<link>`.
    link: String,
}

/// `ferret sim-listing`: serves the listing until SIGINT or SIGTERM, then writes the truth.
pub fn run(args: &SimListingArgs) -> anyhow::Result<()> {
    let scenario = scenario(args)?;
    let span = (args.hours * HOUR as f64) as Millis;
    let listener = TcpListener::bind(args.listen.as_str())
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener.local_addr()?;
    let truth = args.truth.as_deref().map(TruthFile::create).transpose()?;

    actix_rt::System::new().block_on(async move {
        // Taken before the world is generated, so that an early signal is queued, not fatal.
        let signals = [
            signal(SignalKind::interrupt()).context("listening for SIGINT")?,
            signal(SignalKind::terminate()).context("listening for SIGTERM")?,
        ];
        let link_base = format!("http://{addr}/watch/");
        let t0 = unix_millis();
        let world = World::new(&scenario, t0, span).with_link_base(&link_base);
        let state = web::Data::new(State {
            world: Mutex::new(world),
            title: format!("ferret sim-listing: {} ×{}", scenario.name, args.time_scale),
            link: format!("http://{addr}/recent/rss"),
        });
        let shared = state.clone();
        let server = HttpServer::new(move || {
            App::new()
                .app_data(shared.clone())
                .route("/recent/rss", web::get().to(recent))
                .route("/healthz", web::get().to(healthz))
        })
        .workers(2)
        .shutdown_timeout(SHUTDOWN_GRACE_SECS)
        .disable_signals()
        .listen(listener)?
        .run();
        let handle = server.handle();
        for mut stream in signals {
            let handle = handle.clone();
            actix_rt::spawn(async move {
                if stream.recv().await.is_some() {
                    handle.stop(true).await;
                }
            });
        }
        announce(&scenario.name, args.time_scale, addr)?;
        server.await.context("the HTTP server failed")?;

        if let Some(truth) = truth {
            let exit = unix_millis();
            let world = state.world.lock().unwrap_or_else(|err| err.into_inner());
            truth.commit(&world, t0, exit)?;
        }
        anyhow::Ok(())
    })
}

/// The scenario as asked for: loaded, reseeded, compressed and checked.
fn scenario(args: &SimListingArgs) -> anyhow::Result<Scenario> {
    let mut scenario = load_scenario(&args.scenario)?;
    if let Some(seed) = args.seed {
        scenario.seed = seed;
    }
    let scenario = scenario.compressed(args.time_scale);
    scenario.validate().map_err(|err| {
        anyhow::anyhow!(
            "scenario {} at --time-scale {}: {err}",
            scenario.name,
            args.time_scale
        )
    })?;
    let most = scenario.starts.peak_per_hour * (args.hours + scenario.ends.max_hours);
    anyhow::ensure!(
        most <= MAX_BROADCASTS,
        "scenario {} at --time-scale {} for {} h would hold up to {most:.0} broadcasts \
         (at most {MAX_BROADCASTS}): lower --hours",
        scenario.name,
        args.time_scale,
        args.hours,
    );
    Ok(scenario)
}

/// Prints the start-up line tests read the address from.
fn announce(scenario: &str, time_scale: f64, addr: SocketAddr) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "sim-listing: serving {scenario} ×{time_scale} on http://{addr}/recent/rss?p={{page}}"
    )
    .and_then(|()| stdout.flush())
    .context("cannot write to standard output")
}

async fn healthz() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; charset=utf-8")
        .body("ok")
}

/// `GET /recent/rss?p=N`.
async fn recent(state: web::Data<State>, request: HttpRequest) -> HttpResponse {
    let page = match page_of(request.query_string()) {
        Ok(page) => page,
        Err(message) => return text(StatusCode::BAD_REQUEST, &message),
    };
    let world = || state.world.lock().unwrap_or_else(|err| err.into_inner());
    let latency = Duration::from_millis(world().latency().max(0) as u64);
    actix_rt::time::sleep(latency / 2).await;
    let served = world().serve(page, unix_millis());
    let hung = matches!(served, Served::Hung(_));
    let response = match served {
        Served::Page(view) => {
            let mut response = HttpResponse::Ok();
            // A cache that says how long it kept the page ([reads] cache_age).
            if view.age > 0 {
                response.insert_header(("Age", (view.age / SECOND).to_string()));
            }
            response
                .content_type("application/rss+xml; charset=utf-8")
                .body(rss(&view, &state.title, &state.link))
        }
        Served::NotFound(page) => text(
            StatusCode::NOT_FOUND,
            &format!("no page {page}: the list ends before it"),
        ),
        Served::Failed => failed_read(),
        Served::Hung(held) => {
            actix_rt::time::sleep(Duration::from_millis(held.max(0) as u64)).await;
            failed_read()
        }
    };
    if !hung {
        actix_rt::time::sleep(latency - latency / 2).await;
    }
    response
}

/// A simulated failed read.
fn failed_read() -> HttpResponse {
    HttpResponse::ServiceUnavailable()
        .insert_header(("Retry-After", "1"))
        .content_type("text/plain; charset=utf-8")
        .body("simulated read failure\n")
}

/// The page number in a query string: `p`, 1 when absent.
fn page_of(query: &str) -> Result<u32, String> {
    let pairs: Vec<(String, String)> = query_pairs(query)?;
    let Some((_, value)) = pairs.iter().find(|(key, _)| key == "p") else {
        return Ok(1);
    };
    match value.parse::<u32>() {
        Ok(page) if page >= 1 => Ok(page),
        _ => Err(format!(
            "bad page number p={value:?}: need a whole number ≥ 1"
        )),
    }
}

/// The query string's `key=value` pairs, percent-decoded.
fn query_pairs(query: &str) -> Result<Vec<(String, String)>, String> {
    web::Query::<Vec<(String, String)>>::from_query(query)
        .map(web::Query::into_inner)
        .map_err(|err| format!("bad query string: {err}"))
}

fn text(status: StatusCode, message: &str) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/plain; charset=utf-8")
        .body(format!("{message}\n"))
}

/// A page as Niconico Live's RSS shows it.
fn rss(view: &PageView, title: &str, link: &str) -> String {
    let mut xml = String::with_capacity(400 + 250 * view.items.len());
    xml.push_str(concat!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n",
        "<rss version=\"2.0\" xmlns:nicolive=\"http://live.nicovideo.jp/\">\n",
        "<channel>\n",
    ));
    element(&mut xml, "title", title);
    element(&mut xml, "link", link);
    element(
        &mut xml,
        "description",
        "Simulated live listing: every broadcast on air, newest reservation first.",
    );
    if let Some(total) = view.total {
        element(&mut xml, "nicolive:total_count", &total.to_string());
    }
    for item in &view.items {
        xml.push_str("<item>\n");
        element(&mut xml, "title", &item.title);
        element(&mut xml, "link", &item.link);
        let _ = writeln!(
            xml,
            "<guid isPermaLink=\"false\">{}</guid>",
            escape(&*item.id)
        );
        if let Some(date) = DateTime::from_timestamp_millis(item.key) {
            element(&mut xml, "pubDate", &date.to_rfc2822());
        }
        xml.push_str("</item>\n");
    }
    xml.push_str("</channel>\n</rss>\n");
    xml
}

/// Appends `<name>text</name>` and a newline, the text escaped.
fn element(xml: &mut String, name: &str, text: &str) {
    let _ = writeln!(xml, "<{name}>{}</{name}>", escape(text));
}

/// One line of the `--truth` file: a broadcast as it really was.
#[derive(Debug, Serialize)]
pub struct TruthLine {
    /// Its listing id, `lvNNN`.
    pub id: String,
    /// Its item title.
    pub title: String,
    /// Its item link.
    pub link: String,
    /// The reservation (the item's `pubDate`, the sort key), RFC 3339.
    pub reserved_at: String,
    /// When it appeared in the listing.
    pub started_at: String,
    /// When it left the listing; `None` when still on air at exit.
    pub ended_at: Option<String>,
    /// `frame`, `early` or `extended`.
    pub ending: &'static str,
    /// Frames it was extended by.
    pub extensions: u32,
}

impl TruthLine {
    /// The line of `broadcast` at `exit`.
    fn new(world: &World, broadcast: &Broadcast, exit: Millis) -> TruthLine {
        let item = world.item(broadcast);
        let (ending, extensions) = match broadcast.ending {
            Ending::Frame => ("frame", 0),
            Ending::Early => ("early", 0),
            Ending::Extended(n) => ("extended", n),
        };
        TruthLine {
            title: item.title.to_string(),
            link: item.link.to_string(),
            id: item.id.to_string(),
            reserved_at: rfc3339(broadcast.reserved),
            started_at: rfc3339(broadcast.start),
            ended_at: (broadcast.end <= exit).then(|| rfc3339(broadcast.end)),
            ending,
            extensions,
        }
    }
}

fn rfc3339(t: Millis) -> String {
    DateTime::<Utc>::from_timestamp_millis(t)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The `--truth` file: a temporary sibling, created at start-up (so that an unwritable place
/// fails before anything is served), filled and renamed over the target at exit; removed if
/// the run ends any other way.
struct TruthFile {
    path: PathBuf,
    temp: PathBuf,
    file: Option<File>,
}

impl TruthFile {
    fn create(path: &Path) -> anyhow::Result<TruthFile> {
        let shown = path.display();
        let trailing_slash = path.as_os_str().as_encoded_bytes().ends_with(b"/");
        let name = path
            .file_name()
            .filter(|_| !trailing_slash && !path.is_dir())
            .with_context(|| format!("--truth {shown}: need a file, not a directory"))?;
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".{}.tmp", std::process::id()));
        let temp = path.with_file_name(temp_name);
        let file = File::create(&temp)
            .with_context(|| format!("--truth {shown}: cannot create a file beside it"))?;
        Ok(TruthFile {
            path: path.to_path_buf(),
            temp,
            file: Some(file),
        })
    }

    /// Writes every broadcast on air at some time in `[t0, exit]` and moves the file into
    /// place.
    fn commit(mut self, world: &World, t0: Millis, exit: Millis) -> anyhow::Result<()> {
        let file = self
            .file
            .take()
            .context("the truth file was already written")?;
        let mut out = BufWriter::new(file);
        // On air at t: start ≤ t < end (a broadcast with start = end never is).
        let seen = world
            .broadcasts()
            .iter()
            .filter(|b| b.start < b.end && b.start <= exit && b.end > t0);
        for broadcast in seen {
            serde_json::to_writer(&mut out, &TruthLine::new(world, broadcast, exit))?;
            out.write_all(b"\n")?;
        }
        out.into_inner()
            .map_err(|err| err.into_error())
            .and_then(|file| file.sync_all())
            .and_then(|()| std::fs::rename(&self.temp, &self.path))
            .with_context(|| format!("cannot write {}", self.path.display()))
    }
}

impl Drop for TruthFile {
    fn drop(&mut self) {
        // Not committed (or the commit failed): leave no partial file behind.
        let _ = std::fs::remove_file(&self.temp);
    }
}
