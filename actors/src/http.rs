//! The HTTP API (actix-web): health, metrics, the actor table and operator tools.
//!
//! | route | what |
//! |---|---|
//! | `GET /healthz` | `{"status":"ok"}` while the runtime runs |
//! | `GET /metrics` | per-role counters in the OpenMetrics text format |
//! | `GET /api/feeds` | every `[[feeds]]` source: reads, outcomes, last status and error ([`FeedStatus`](crate::messages::FeedStatus)) |
//! | `GET /api/actors` | `[{"role","instance","restarts","handled"}, …]`, every running instance |
//! | `POST /api/actors/{role}/{instance}/ping` | the instance's [`InstanceInfo`](crate::messages::InstanceInfo) |
//! | `POST /api/actors/{role}/{instance}/panic` | only with `[debug] fault_injection = true`: the instance's next handler panics |

use std::net::{SocketAddr, TcpListener};

use actix_web::dev::Server;
use actix_web::http::StatusCode;
use actix_web::{web, App, HttpResponse, HttpServer};
use prometheus_client::registry::Registry;
use serde_json::json;

use crate::feed_fetcher::FeedBook;
use crate::supervisor::Runtime;

struct ApiState {
    runtime: Runtime,
    registry: Registry,
    feeds: FeedBook,
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
    feeds: FeedBook,
) -> std::io::Result<Server> {
    let state = web::Data::new(ApiState {
        registry: crate::telemetry::registry(runtime.clone(), feeds.clone()),
        runtime,
        feeds,
    });
    let server = HttpServer::new(move || {
        let mut app = App::new()
            .app_data(state.clone())
            .route("/healthz", web::get().to(healthz))
            .route("/metrics", web::get().to(metrics))
            .route("/api/actors", web::get().to(actors))
            .route("/api/feeds", web::get().to(feed_list))
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
    HttpResponse::Ok().json(state.feeds.statuses())
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
