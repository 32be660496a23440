//! The crawler's shell against local HTTP servers: the page client (HTML only, body limit,
//! checked redirects, address policy, robots.txt) and the breadth-first crawler.

use std::time::Duration;

use ferret::discovery::robots::RobotsOutcome;
use ferret::discovery::url::AddressPolicy;
use ferret_actors::bfs::{bfs_crawl, Scope};
use ferret_actors::page_fetcher::{PageFetchError, PageFetcher, PageFetcherConfig};
use reqwest::Url;

use crate::support::http::{Response, TestServer};

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

fn client(policy: AddressPolicy) -> PageFetcher {
    PageFetcher::new(PageFetcherConfig {
        user_agent: "ferret-test/1.0".to_string(),
        timeout: Duration::from_secs(5),
        max_body_bytes: 4096,
        max_redirects: 3,
        policy,
        ..PageFetcherConfig::default()
    })
    .unwrap()
}

fn local() -> PageFetcher {
    client(AddressPolicy {
        allow_loopback: true,
        ..AddressPolicy::default()
    })
}

fn html(body: &str) -> Response {
    Response::ok("text/html; charset=utf-8", body)
}

fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

fn site() -> TestServer {
    TestServer::start(|request, _| match request.path.as_str() {
        "/robots.txt" => Response::ok("text/plain", "User-agent: *\nDisallow: /secret\n"),
        "/" => html(
            r#"<a href="/a">a</a> <a href="/b#x">b</a> <a href="/secret">s</a>
               <a href="/img.png">img</a> <a href="http://127.0.0.2:1/elsewhere">out</a>"#,
        ),
        "/a" => html(r#"<a href="/c">c</a> <a href="/">home</a> <a href="/moved">m</a>"#),
        "/b" => html(r#"<a href="/d">d</a> <a href="/big">big</a>"#),
        "/c" | "/d" | "/e" => html("<p>leaf</p>"),
        "/moved" => Response::status(301).header("Location", "/e#frag"),
        "/big" => html(&"x".repeat(10_000)).chunked(),
        "/img.png" => Response::ok("image/png", vec![0u8; 100]),
        "/secret" => html("should never be fetched"),
        _ => Response::status(404),
    })
}

#[test]
fn fetch_reads_html_only_within_the_limit() {
    let server = site();
    let c = local();
    let page = block_on(c.fetch(&url(&server.url("/a")))).unwrap();
    assert_eq!(page.status, 200);
    assert!(String::from_utf8_lossy(&page.body).contains("/moved"));
    assert_eq!(
        page.content_type.as_deref(),
        Some("text/html; charset=utf-8")
    );

    let err = block_on(c.fetch(&url(&server.url("/img.png")))).unwrap_err();
    assert!(
        matches!(err, PageFetchError::NotHtml { ref content_type, .. } if content_type == "image/png"),
        "{err}"
    );

    let err = block_on(c.fetch(&url(&server.url("/big")))).unwrap_err();
    assert!(
        matches!(err, PageFetchError::TooLarge { limit: 4096, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("stopped reading"), "{err}");

    let err = block_on(c.fetch(&url(&server.url("/nothing")))).unwrap_err();
    assert!(
        matches!(err, PageFetchError::Status { status: 404, .. }),
        "{err}"
    );
}

#[test]
fn redirects_are_followed_by_hand_and_checked() {
    let server = TestServer::start(|request, _| {
        let path = request.path.as_str();
        match path {
            "/r1" => Response::status(302).header("Location", "./r2?#x"),
            "/r2" => Response::status(301).header("Location", "/ok"),
            "/ok" => html("<title>ok</title>"),
            "/loop" => Response::status(302).header("Location", "/loop2"),
            "/loop2" => Response::status(302).header("Location", "/loop"),
            "/mail" => Response::status(302).header("Location", "mailto:a@b.c"),
            "/throttle" => Response::status(429).header("Retry-After", "7"),
            p if p.starts_with("/chain") => {
                let n: u32 = p[6..].parse().unwrap_or(0);
                Response::status(302).header("Location", &format!("/chain{}", n + 1))
            }
            _ => Response::status(404),
        }
    });
    let c = local();
    let page = block_on(c.fetch(&url(&server.url("/r1")))).unwrap();
    assert_eq!(page.url.as_str(), server.url("/ok"));
    assert_eq!(page.redirects, 2);
    assert_eq!(
        server.requests_to("/r2").len(),
        1,
        "the hop was normalised: no `?`, no fragment"
    );

    let err = block_on(c.fetch(&url(&server.url("/loop")))).unwrap_err();
    assert!(matches!(err, PageFetchError::RedirectLoop { .. }), "{err}");
    let err = block_on(c.fetch(&url(&server.url("/chain0")))).unwrap_err();
    assert!(
        matches!(err, PageFetchError::TooManyRedirects { max: 3, .. }),
        "{err}"
    );
    assert_eq!(
        server
            .requests()
            .iter()
            .filter(|r| r.path.starts_with("/chain"))
            .count(),
        4
    );
    let err = block_on(c.fetch(&url(&server.url("/mail")))).unwrap_err();
    assert!(matches!(err, PageFetchError::BadRedirect { .. }), "{err}");
    let err = block_on(c.fetch(&url(&server.url("/throttle")))).unwrap_err();
    assert_eq!(err.throttled(), Some(Some(7)));
}

#[test]
fn the_address_policy_holds_for_literals_names_and_hops() {
    let server = site();
    let strict = client(AddressPolicy::default());
    let err = block_on(strict.fetch(&url(&server.url("/a")))).unwrap_err();
    assert!(
        matches!(err, PageFetchError::AddressRefused { .. }),
        "{err}"
    );

    let port = url(&server.url("/")).port().unwrap();
    let by_name = url(&format!("http://localhost:{port}/a"));
    let err = block_on(strict.fetch(&by_name)).unwrap_err();
    assert!(
        matches!(err, PageFetchError::AddressRefused { .. }),
        "{err}"
    );
    assert!(server.requests().is_empty(), "nothing reached the server");

    // A permitted host that redirects to a refused one: the hop is refused.
    let hop = TestServer::start(move |_, _| {
        Response::status(302).header("Location", &format!("http://10.0.0.1:{port}/a"))
    });
    let err = block_on(local().fetch(&url(&hop.url("/")))).unwrap_err();
    assert!(
        matches!(err, PageFetchError::AddressRefused { ref url, .. } if url.host_str() == Some("10.0.0.1")),
        "{err}"
    );
}

#[test]
fn robots_fetches_say_what_rfc_9309_says() {
    let server = TestServer::start(|request, _| match request.path.as_str() {
        "/found/robots.txt" | "/robots.txt" => {
            Response::ok("text/plain", "User-agent: ferret-test\nDisallow: /x\n")
        }
        "/err/robots.txt" => Response::status(503),
        _ => Response::status(404),
    });
    let c = local();
    match block_on(c.fetch_robots(&url(&server.url("/robots.txt")))) {
        RobotsOutcome::Found(robots) => {
            assert!(
                !robots.allowed(&url(&server.url("/x/1"))),
                "our agent's group"
            );
            assert!(robots.allowed(&url(&server.url("/y"))));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        block_on(c.fetch_robots(&url(&server.url("/none/robots.txt")))),
        RobotsOutcome::Unavailable
    ));
    assert!(matches!(
        block_on(c.fetch_robots(&url(&server.url("/err/robots.txt")))),
        RobotsOutcome::Unreachable
    ));
    // Nothing listening.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    assert!(matches!(
        block_on(c.fetch_robots(&url(&format!("http://127.0.0.1:{closed}/robots.txt")))),
        RobotsOutcome::Unreachable
    ));
    // A host the address policy refuses is refused for good, not "unreachable for now".
    let strict = client(AddressPolicy::default());
    for host in [
        server.url("/robots.txt"),
        "http://localhost/robots.txt".into(),
    ] {
        assert!(matches!(
            block_on(strict.fetch_robots(&url(&host))),
            RobotsOutcome::Refused
        ));
    }
}

#[test]
fn bfs_crawls_breadth_first_within_robots_and_scope() {
    let server = site();
    let c = local();
    let root = url(&server.url("/"));
    let report = block_on(bfs_crawl(
        &c,
        std::slice::from_ref(&root),
        100,
        1,
        Scope::SameHost,
    ));
    let paths: Vec<&str> = report.order.iter().map(Url::path).collect();
    assert_eq!(
        paths,
        ["/", "/a", "/b", "/img.png", "/c", "/moved", "/d", "/big"]
    );
    assert_eq!(report.fetched, 6, "{report:?}");
    assert_eq!(report.failed, 2, "the image and the big page");
    assert!(
        server.requests_to("/secret").is_empty(),
        "robots.txt is obeyed"
    );
    assert_eq!(server.requests_to("/robots.txt").len(), 1);
    assert!(report.pages_per_sec > 0.0);

    // A budget stops it; more concurrency gives the same pages.
    let report = block_on(bfs_crawl(
        &c,
        std::slice::from_ref(&root),
        3,
        4,
        Scope::SameHost,
    ));
    assert_eq!(report.order.len(), 3);
    let report = block_on(bfs_crawl(&c, &[root], 100, 8, Scope::SameHost));
    assert_eq!(report.fetched, 6);
}
