//! The HTTP API (actix-web): health, metrics, the actor table and operator tools.
//!
//! | route | what |
//! |---|---|
//! | `GET /healthz` | `{"status":"ok"}` while the runtime runs |
//! | `GET /metrics` | per-role counters in the OpenMetrics text format |
//! | `GET /api/feeds` | every `[[feeds]]` source: reads, outcomes, last status and error ([`FeedStatus`](crate::messages::FeedStatus)) |
//! | `GET /api/listings` | every `[[listings]]` entry: reads, events, what it has on air and its detector's sweep share |
//! | `GET /api/listings/{name}/onair` | the broadcasts the listing has on air now, newest first |
//! | `GET /api/stories?limit=N` | the stories, ranked, each with its events and items (default 50) |
//! | `POST /api/feedback` | `{"url", "kind": "visit"\|"dwell"\|"like"\|"dislike", "seconds"?, "at"?}` (`seconds` for a dwell only; `at` RFC 3339, default now) → 202 with the stored event, or 400 `{"error"}` |
//! | `GET /api/pages?sort=hittage&limit=N` | pages by hittage in the latest computation, highest first ([`PageHittage`](crate::storage::PageHittage); default 50) |
//! | `GET /api/recommendations?limit=N` | accepted pages you have given no feedback on, highest hittage first, then newest (default 50) |
//! | `GET /api/cache?limit=N&approved=true` | the pages the Ferrets fetched, latest first (default 50), each with its verdicts: `{"url","approved","fingerprint","fetched_at_ms","accepted"}`; `approved=true` lists only those a ferret fingerprint approved; `{"size", "pages"}` |
//! | `GET /api/fingerprints` | the discovery loop's ferret fingerprints (kind, representative, threshold, fetched/approved/accepted), filter fingerprints (vector, thresholds, reliability) and counts |
//! | `GET /api/lighthouses` | the latest lighthouses: `{"computation", "lighthouses": [[url, hittage], …]}`, or `null` before the first computation |
//! | `GET /api/events` | server-sent events: one `data:` line per On Air / Off Air, as in the events file |
//! | `GET /api/actors` | `[{"role","instance","restarts","handled"}, …]`, every running instance |
//! | `POST /api/actors/{role}/{instance}/ping` | the instance's [`InstanceInfo`](crate::messages::InstanceInfo) |
//! | `POST /api/actors/{role}/{instance}/panic` | only with `[debug] fault_injection = true`: the instance's next handler panics |

use std::net::{SocketAddr, TcpListener};

use actix_web::dev::Server;
use actix_web::http::StatusCode;
use actix_web::{web, App, HttpResponse, HttpServer};
use prometheus_client::registry::Registry;
use serde_json::json;

use ferret::discovery::intake::feedback_from_json;

use crate::daemon::Boards;
use crate::messages::{Envelope, GeneralizeNow, PagesByHittage, Recommendations, RecordFeedback};
use crate::supervisor::Runtime;

struct ApiState {
    runtime: Runtime,
    registry: Registry,
    boards: Boards,
}

/// Starts the server on an already-bound listener (tests bind `127.0.0.1:0` and pass it, so
/// there is no race for the port). Returns the server future, to be spawned or awaited.
/// A graceful stop waits at most `grace` for requests in flight.
pub fn serve(
    listener: TcpListener,
    workers: usize,
    grace: std::time::Duration,
    fault_injection: bool,
    runtime: Runtime,
    boards: Boards,
) -> std::io::Result<Server> {
    let state = web::Data::new(ApiState {
        registry: crate::telemetry::registry(runtime.clone(), boards.clone()),
        runtime,
        boards,
    });
    let server = HttpServer::new(move || {
        let mut app = App::new()
            .app_data(state.clone())
            .route("/healthz", web::get().to(healthz))
            .route("/metrics", web::get().to(metrics))
            .route("/api/actors", web::get().to(actors))
            .route("/api/feeds", web::get().to(feed_list))
            .route("/api/listings", web::get().to(listing_list))
            .route("/api/listings/{name}/onair", web::get().to(on_air))
            .route("/api/events", web::get().to(events))
            .route("/api/stories", web::get().to(stories))
            .route("/api/feedback", web::post().to(feedback))
            .route("/api/pages", web::get().to(pages))
            .route("/api/lighthouses", web::get().to(lighthouses))
            .route("/api/recommendations", web::get().to(recommendations))
            .route("/api/fingerprints", web::get().to(fingerprints))
            .route("/api/cache", web::get().to(cache))
            .route("/api/actors/{role}/{instance}/ping", web::post().to(ping));
        if fault_injection {
            app = app.route("/api/actors/{role}/{instance}/panic", web::post().to(panic));
        }
        app
    })
    .workers(workers)
    .shutdown_timeout(grace.as_secs())
    // Signals are the daemon's to handle: it stops intake, drains and flushes in order.
    .disable_signals()
    .listen(listener)?
    .run();
    Ok(server)
}

/// Binds `addr` for [`serve`].
pub fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    TcpListener::bind(addr)
}

async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({ "status": "ok" }))
}

async fn metrics(state: web::Data<ApiState>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/openmetrics-text; version=1.0.0; charset=utf-8")
        .body(crate::telemetry::render(&state.registry))
}

async fn actors(state: web::Data<ApiState>) -> HttpResponse {
    HttpResponse::Ok().json(state.runtime.instances())
}

async fn feed_list(state: web::Data<ApiState>) -> HttpResponse {
    HttpResponse::Ok().json(state.boards.feeds.statuses())
}

async fn listing_list(state: web::Data<ApiState>) -> HttpResponse {
    HttpResponse::Ok().json(state.boards.listings.statuses())
}

async fn on_air(state: web::Data<ApiState>, name: web::Path<String>) -> HttpResponse {
    match state.boards.listings.on_air(&name) {
        Some(items) => HttpResponse::Ok().json(items),
        None => error(
            StatusCode::NOT_FOUND,
            format!("no listing named `{name}` in [[listings]]"),
        ),
    }
}

#[derive(serde::Deserialize)]
struct StoriesQuery {
    limit: Option<usize>,
}

async fn stories(state: web::Data<ApiState>, query: web::Query<StoriesQuery>) -> HttpResponse {
    let limit = query.limit.unwrap_or(50).min(1_000);
    let now = crate::supervisor::unix_millis();
    let book = state
        .boards
        .stories
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let ranked = book.ranked(now, &state.boards.rank, &ferret::stories::NoInterest, limit);
    HttpResponse::Ok().json(ranked)
}

async fn feedback(state: web::Data<ApiState>, body: web::Bytes) -> HttpResponse {
    let routes = &state.boards.discovery;
    let event = match feedback_from_json(&body, crate::supervisor::unix_millis()) {
        Ok(event) => event,
        Err(err) => return error(StatusCode::BAD_REQUEST, err.to_string()),
    };
    let record = RecordFeedback {
        events: vec![event],
    };
    match routes.feedback.send(Envelope::new(record)).await {
        Ok(Ok(mut stored)) => {
            // Instance 0 computes; a nudge that finds it busy makes one more computation.
            let _ = routes
                .generalize
                .do_send_to(0, Envelope::new(GeneralizeNow));
            HttpResponse::Accepted().json(stored.pop())
        }
        Ok(Err(err)) => error(StatusCode::INTERNAL_SERVER_ERROR, err.to_string()),
        Err(err) => error(StatusCode::SERVICE_UNAVAILABLE, err.to_string()),
    }
}

#[derive(serde::Deserialize)]
struct PagesQuery {
    sort: Option<String>,
    limit: Option<usize>,
}

async fn recommendations(
    state: web::Data<ApiState>,
    query: web::Query<PagesQuery>,
) -> HttpResponse {
    let limit = query.limit.unwrap_or(50).min(1_000);
    let ask = Envelope::new(Recommendations { limit });
    match state.boards.discovery.recommendations.send(ask).await {
        Ok(Ok(pages)) => HttpResponse::Ok().json(pages),
        Ok(Err(err)) => error(StatusCode::INTERNAL_SERVER_ERROR, err.to_string()),
        Err(err) => error(StatusCode::SERVICE_UNAVAILABLE, err.to_string()),
    }
}

#[derive(serde::Deserialize)]
struct CacheQuery {
    limit: Option<usize>,
    approved: Option<bool>,
}

async fn cache(state: web::Data<ApiState>, query: web::Query<CacheQuery>) -> HttpResponse {
    let limit = query.limit.unwrap_or(50).min(1_000);
    let cache = &state.boards.discovery.cache;
    HttpResponse::Ok().json(json!({
        "size": cache.len(),
        "pages": cache.latest(limit, query.approved.unwrap_or(false)),
    }))
}

async fn fingerprints(state: web::Data<ApiState>) -> HttpResponse {
    HttpResponse::Ok().json(state.boards.discovery.board.snapshot())
}

async fn pages(state: web::Data<ApiState>, query: web::Query<PagesQuery>) -> HttpResponse {
    if let Some(sort) = query.sort.as_deref().filter(|&sort| sort != "hittage") {
        return error(
            StatusCode::BAD_REQUEST,
            format!("unknown sort `{sort}`; expected hittage"),
        );
    }
    let limit = query.limit.unwrap_or(50).min(1_000);
    let ask = Envelope::new(PagesByHittage { limit });
    match state.boards.discovery.pages.send(ask).await {
        Ok(Ok(pages)) => HttpResponse::Ok().json(pages),
        Ok(Err(err)) => error(StatusCode::INTERNAL_SERVER_ERROR, err.to_string()),
        Err(err) => error(StatusCode::SERVICE_UNAVAILABLE, err.to_string()),
    }
}

async fn lighthouses(state: web::Data<ApiState>) -> HttpResponse {
    let latest = state.boards.discovery.lighthouses.latest();
    HttpResponse::Ok().json(latest.map(
        |latest| json!({ "computation": latest.computation, "lighthouses": latest.lighthouses }),
    ))
}

/// Server-sent events from now on. A reader too slow for the backlog is told how many it
/// missed in an `event: lagged` message, and the stream goes on.
async fn events(state: web::Data<ApiState>) -> HttpResponse {
    use tokio::sync::broadcast::error::RecvError;
    let receiver = state.boards.listings.subscribe();
    let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
        let chunk = match receiver.recv().await {
            Ok(line) => format!("event: {}\ndata: {line}\n\n", event_name(&line)),
            Err(RecvError::Lagged(missed)) => format!("event: lagged\ndata: {missed}\n\n"),
            Err(RecvError::Closed) => return None,
        };
        Some((
            Ok::<_, std::convert::Infallible>(web::Bytes::from(chunk)),
            receiver,
        ))
    });
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-cache"))
        .streaming(stream)
}

/// `on_air` or `off_air`, from an event line.
fn event_name(line: &str) -> &'static str {
    if line.contains("\"event\":\"off_air\"") {
        "off_air"
    } else {
        "on_air"
    }
}

fn no_such_instance(role: &str, instance: usize) -> HttpResponse {
    error(
        StatusCode::NOT_FOUND,
        format!("no instance {instance} of role `{role}`"),
    )
}

fn error(status: StatusCode, message: String) -> HttpResponse {
    HttpResponse::build(status).json(json!({ "error": message }))
}

async fn ping(state: web::Data<ApiState>, path: web::Path<(String, usize)>) -> HttpResponse {
    let (role, instance) = path.into_inner();
    match state.runtime.ping(&role, instance).await {
        None => no_such_instance(&role, instance),
        Some(Ok(info)) => HttpResponse::Ok().json(info),
        Some(Err(err)) => error(StatusCode::SERVICE_UNAVAILABLE, err.to_string()),
    }
}

async fn panic(state: web::Data<ApiState>, path: web::Path<(String, usize)>) -> HttpResponse {
    let (role, instance) = path.into_inner();
    if state.runtime.inject_panic(&role, instance) {
        HttpResponse::Accepted().json(json!({
            "role": role,
            "instance": instance,
            "status": "armed: the instance's next handler panics",
        }))
    } else {
        no_such_instance(&role, instance)
    }
}
