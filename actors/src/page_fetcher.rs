//! The crawler's HTTP client: HTML pages and robots.txt files.
//!
//! Built like [`http_client`](crate::http_client) (rustls, gzip/brotli/deflate, connect and
//! total timeouts, a real User-Agent, a body limit enforced while the body streams in) with
//! what crawling outside input needs on top:
//!
//! - **Only HTML**: a 2xx whose `Content-Type` is not HTML is refused before its body is read.
//! - **Redirects by hand**, up to a limit: every hop is normalised
//!   ([`ferret::discovery::url::normalize`]) and must be http(s).
//! - **An [`AddressPolicy`]** on every hop: IP-literal hosts are checked before the request;
//!   names are resolved (tokio's `lookup_host`) by the client's own resolver, which refuses a
//!   name if *any* of its addresses is refused, so the address checked is the address
//!   connected to (no DNS-rebinding window). A policy that permits everything skips this. No
//!   proxy is used, so none can bypass the policy.
//! - A connection pool sized for many concurrent requests to one host.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::http_client::chain;
use ferret::config::FetchSettings;
use ferret::discovery::page::is_html;
use ferret::discovery::robots::{RobotsOutcome, MAX_ROBOTS_BYTES};
use ferret::discovery::url::{host_key, normalize, AddressPolicy};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::header::{CONTENT_TYPE, LOCATION, RETRY_AFTER};
use reqwest::redirect::Policy;
use reqwest::Url;

/// The page client's settings.
#[derive(Debug, Clone)]
pub struct PageFetcherConfig {
    /// The `User-Agent` header; its product token (before `/`) is the robots.txt agent.
    pub user_agent: String,
    /// Each request (each redirect hop), body included, must finish within this.
    pub timeout: Duration,
    /// Connecting must finish within this.
    pub connect_timeout: Duration,
    /// A page body larger than this fails the fetch.
    pub max_body_bytes: usize,
    /// Redirects followed before the fetch fails.
    pub max_redirects: usize,
    /// Which addresses may be connected to.
    pub policy: AddressPolicy,
    /// Idle connections kept per host (as many as requests run at once to one host).
    pub pool_per_host: usize,
}

impl PageFetcherConfig {
    /// From `[fetch]`, with `policy`.
    pub fn from_settings(settings: &FetchSettings, policy: AddressPolicy) -> PageFetcherConfig {
        PageFetcherConfig {
            user_agent: settings.user_agent.clone(),
            timeout: settings.timeout,
            connect_timeout: settings.connect_timeout,
            max_body_bytes: settings.max_body_bytes,
            max_redirects: settings.max_redirects,
            policy,
            pool_per_host: settings.per_host_concurrency.max(64),
        }
    }
}

impl Default for PageFetcherConfig {
    fn default() -> PageFetcherConfig {
        PageFetcherConfig {
            user_agent: concat!("ferret/", env!("CARGO_PKG_VERSION")).to_string(),
            timeout: Duration::from_secs(20),
            connect_timeout: Duration::from_secs(5),
            max_body_bytes: 5 * 1024 * 1024,
            max_redirects: 5,
            policy: AddressPolicy::default(),
            pool_per_host: 64,
        }
    }
}

/// A page fetched.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The URL asked for.
    pub requested: Url,
    /// The URL that answered, after redirects (normalised).
    pub url: Url,
    /// The status (2xx).
    pub status: u16,
    /// The `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// The body, decompressed, at most the limit.
    pub body: Vec<u8>,
    /// Redirects followed.
    pub redirects: usize,
}

/// Why a page could not be had. Each says which URL failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageFetchError {
    /// The host is, or resolves to, an address the policy refuses.
    #[error("{url}: the address policy refuses {cause}")]
    AddressRefused {
        /// The URL.
        url: Url,
        /// Which address, or the resolver's message.
        cause: String,
    },
    /// A 2xx whose `Content-Type` is not HTML; its body was not read.
    #[error("{url}: not HTML (Content-Type: {content_type}); body not read")]
    NotHtml {
        /// The URL.
        url: Url,
        /// The header.
        content_type: String,
    },
    /// The body is larger than the limit; reading stopped there.
    #[error("{url}: the body is larger than the limit of {limit} bytes ({detail})")]
    TooLarge {
        /// The URL.
        url: Url,
        /// The limit.
        limit: usize,
        /// How it was noticed.
        detail: String,
    },
    /// The server answered with a status that is not 2xx (3xx without a usable `Location`
    /// included).
    #[error("{url}: HTTP {status}")]
    Status {
        /// The URL.
        url: Url,
        /// The status.
        status: u16,
        /// `Retry-After` in seconds, if given as seconds.
        retry_after_secs: Option<u64>,
    },
    /// More redirects than the limit.
    #[error("{url}: more than {max} redirects")]
    TooManyRedirects {
        /// The last URL.
        url: Url,
        /// The limit.
        max: usize,
    },
    /// A redirect back to a URL already requested.
    #[error("{url}: redirect loop")]
    RedirectLoop {
        /// The URL redirected to a second time.
        url: Url,
    },
    /// A redirect to something that is not an http(s) URL.
    #[error("{url}: redirect to `{location}`, which is not an http(s) URL")]
    BadRedirect {
        /// The URL that redirected.
        url: Url,
        /// Its `Location`.
        location: String,
    },
    /// No answer in time.
    #[error("{url}: timed out")]
    Timeout {
        /// The URL.
        url: Url,
    },
    /// Any other failure (connection refused, reset, TLS, bad body encoding).
    #[error("{url}: {cause}")]
    Request {
        /// The URL.
        url: Url,
        /// The error chain in one line.
        cause: String,
    },
}

impl PageFetchError {
    /// Whether the server asked to slow down (429, or 503 with a `Retry-After`), and for how
    /// long in seconds if it said.
    pub fn throttled(&self) -> Option<Option<u64>> {
        match self {
            PageFetchError::Status {
                status: 429,
                retry_after_secs,
                ..
            } => Some(*retry_after_secs),
            PageFetchError::Status {
                status: 503,
                retry_after_secs: Some(secs),
                ..
            } => Some(Some(*secs)),
            _ => None,
        }
    }
}

/// The client. Clones share the connection pool.
#[derive(Clone)]
pub struct PageFetcher {
    client: reqwest::Client,
    config: Arc<PageFetcherConfig>,
    agent: Arc<str>,
}

impl fmt::Debug for PageFetcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PageFetcher")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The resolver that applies the policy to every address of a name.
struct PolicyResolver(AddressPolicy);

/// Set by [`PolicyResolver`]: the name resolves to a refused address.
#[derive(Debug)]
struct Refused(String);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

impl Resolve for PolicyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.0;
        Box::pin(async move {
            let host = name.as_str().to_string();
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if let Some(bad) = addrs.iter().find(|a| !policy.permits(a.ip())) {
                return Err(
                    Box::new(Refused(format!("{} (an address of {host})", bad.ip())))
                        as Box<dyn std::error::Error + Send + Sync>,
                );
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

impl PageFetcher {
    /// Builds the client.
    pub fn new(config: PageFetcherConfig) -> reqwest::Result<PageFetcher> {
        let mut builder = reqwest::Client::builder()
            .user_agent(config.user_agent.clone())
            .timeout(config.timeout)
            .connect_timeout(config.connect_timeout)
            .redirect(Policy::none())
            .gzip(true)
            .brotli(true)
            .deflate(true)
            .use_rustls_tls()
            .no_proxy()
            .tcp_nodelay(true)
            .pool_max_idle_per_host(config.pool_per_host)
            .pool_idle_timeout(Duration::from_secs(90));
        if !config.policy.permits_all() {
            builder = builder.dns_resolver(Arc::new(PolicyResolver(config.policy)));
        }
        let agent = config
            .user_agent
            .split('/')
            .next()
            .unwrap_or("ferret")
            .trim()
            .to_string();
        Ok(PageFetcher {
            client: builder.build()?,
            agent: agent.into(),
            config: Arc::new(config),
        })
    }

    /// The settings.
    pub fn config(&self) -> &PageFetcherConfig {
        &self.config
    }

    /// Fetches an HTML page, following redirects. Only a 2xx HTML answer is `Ok`.
    pub async fn fetch(&self, url: &Url) -> Result<Fetched, PageFetchError> {
        let (mut response, final_url, redirects) =
            self.follow(url, self.config.max_redirects).await?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(PageFetchError::Status {
                retry_after_secs: header(&response, RETRY_AFTER)
                    .and_then(|v| v.trim().parse().ok()),
                url: final_url,
                status,
            });
        }
        let content_type = header(&response, CONTENT_TYPE);
        if !is_html(content_type.as_deref()) {
            return Err(PageFetchError::NotHtml {
                url: final_url,
                content_type: content_type.unwrap_or_default(),
            });
        }
        let limit = self.config.max_body_bytes;
        if let Some(length) = response.content_length() {
            if length > limit as u64 {
                return Err(PageFetchError::TooLarge {
                    url: final_url,
                    limit,
                    detail: format!("Content-Length is {length}"),
                });
            }
        }
        let mut body = Vec::with_capacity(response.content_length().unwrap_or(0) as usize);
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|err| request_error(&err, &final_url))?
        {
            if body.len() + chunk.len() > limit {
                return Err(PageFetchError::TooLarge {
                    url: final_url,
                    limit,
                    detail: format!("more than {limit} bytes arrived; stopped reading"),
                });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Fetched {
            requested: url.clone(),
            url: final_url,
            status,
            content_type,
            body,
            redirects,
        })
    }

    /// Fetches a robots.txt (the URL of a
    /// [`FetchOrder::Robots`](ferret::discovery::frontier::FetchOrder)) and says what it means
    /// (RFC 9309): rules for our agent, unavailable (4xx), unreachable (5xx, failure), or
    /// refused (the address policy refuses the host).
    /// Bodies past 500 KiB are cut there, not refused.
    pub async fn fetch_robots(&self, robots_url: &Url) -> RobotsOutcome {
        let mut response = match self
            .follow(robots_url, self.config.max_redirects.max(5))
            .await
        {
            Ok((response, _, _)) => response,
            // The host itself is refused by the address policy: for good, not "try later".
            // (A redirect to a refused host elsewhere is only this answer's failure.)
            Err(PageFetchError::AddressRefused { url, .. })
                if host_key(&url) == host_key(robots_url) =>
            {
                return RobotsOutcome::Refused;
            }
            Err(_) => return RobotsOutcome::Unreachable,
        };
        let status = response.status().as_u16();
        let mut body = Vec::new();
        if (200..300).contains(&status) {
            loop {
                match response.chunk().await {
                    Ok(Some(chunk)) => {
                        body.extend_from_slice(&chunk);
                        if body.len() >= MAX_ROBOTS_BYTES {
                            body.truncate(MAX_ROBOTS_BYTES);
                            break;
                        }
                    }
                    Ok(None) => break,
                    Err(_) => return RobotsOutcome::Unreachable,
                }
            }
        }
        RobotsOutcome::from_status(&self.agent, status, &body)
    }

    /// GETs `url`, following up to `max` redirects, each hop checked. Gives the final
    /// response (any status but a followed 3xx), its URL and the number of redirects.
    async fn follow(
        &self,
        url: &Url,
        max: usize,
    ) -> Result<(reqwest::Response, Url, usize), PageFetchError> {
        let mut current = url.clone();
        let mut seen = vec![current.clone()];
        loop {
            if self.config.policy.permits_host(&current) == Some(false) {
                return Err(PageFetchError::AddressRefused {
                    cause: current.host_str().unwrap_or("").to_string(),
                    url: current,
                });
            }
            let response = self
                .client
                .get(current.clone())
                .send()
                .await
                .map_err(|err| request_error(&err, &current))?;
            let status = response.status();
            if !status.is_redirection() {
                return Ok((response, current, seen.len() - 1));
            }
            let Some(location) = header(&response, LOCATION) else {
                return Ok((response, current, seen.len() - 1));
            };
            let Some(next) = normalize(&current, &location) else {
                return Err(PageFetchError::BadRedirect {
                    url: current,
                    location,
                });
            };
            if seen.contains(&next) {
                return Err(PageFetchError::RedirectLoop { url: next });
            }
            if seen.len() > max {
                return Err(PageFetchError::TooManyRedirects { url: next, max });
            }
            seen.push(next.clone());
            current = next;
        }
    }
}

fn header(response: &reqwest::Response, name: reqwest::header::HeaderName) -> Option<String> {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

fn request_error(err: &reqwest::Error, url: &Url) -> PageFetchError {
    let mut source = std::error::Error::source(err);
    while let Some(inner) = source {
        if let Some(refused) = inner.downcast_ref::<Refused>() {
            return PageFetchError::AddressRefused {
                url: url.clone(),
                cause: refused.0.clone(),
            };
        }
        source = inner.source();
    }
    if err.is_timeout() {
        return PageFetchError::Timeout { url: url.clone() };
    }
    PageFetchError::Request {
        url: url.clone(),
        cause: chain(err),
    }
}
