//! The one HTTP client feeds are fetched through (DESIGN.md §4): rustls, gzip/brotli/deflate,
//! connect and total timeouts, a redirect limit that tells a loop from a long chain, a real
//! User-Agent, conditional GET, and a maximum body size enforced while the body streams in.

use std::fmt;
use std::time::Duration;

use ferret::config::FetchSettings;
use ferret::fetch::{FetchError, Validators};
use reqwest::header::{
    HeaderMap, AGE, CONTENT_TYPE, ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED,
    RETRY_AFTER,
};
use reqwest::redirect::Policy;

/// A response the server gave. The body is read only for 2xx answers.
#[derive(Debug)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The URL that answered, after redirects.
    pub url: String,
    /// The `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// `ETag` and `Last-Modified`, for the next conditional GET.
    pub validators: Validators,
    /// The `Retry-After` header, if any.
    pub retry_after: Option<String>,
    /// The `Age` header, if any: how long a cache had kept the response.
    pub age: Option<String>,
    /// The body of a 2xx answer (decompressed), at most the configured maximum; empty otherwise.
    pub body: Vec<u8>,
}

/// A request that brought no usable response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What went wrong.
    pub error: FetchError,
    /// The URL that failed: the last one requested, after any redirects.
    pub url: String,
    /// The status, if a response came (a body too large comes with one).
    pub status: Option<u16>,
    /// The underlying error chain, in one line.
    pub cause: String,
}

/// The shared client. Clones share the connection pool.
#[derive(Clone)]
pub struct HttpClient {
    client: reqwest::Client,
    max_body_bytes: usize,
    max_redirects: usize,
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClient")
            .field("max_body_bytes", &self.max_body_bytes)
            .field("max_redirects", &self.max_redirects)
            .finish_non_exhaustive()
    }
}

/// Set by the redirect policy: the chain came back to a URL it had requested.
#[derive(Debug)]
struct RedirectLoop;

/// Set by the redirect policy: the chain is longer than the limit.
#[derive(Debug)]
struct TooManyRedirects;

impl fmt::Display for RedirectLoop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("redirect loop")
    }
}

impl fmt::Display for TooManyRedirects {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("too many redirects")
    }
}

impl std::error::Error for RedirectLoop {}
impl std::error::Error for TooManyRedirects {}

impl HttpClient {
    /// Builds the client from `[fetch]`.
    pub fn new(settings: &FetchSettings) -> reqwest::Result<HttpClient> {
        let max_redirects = settings.max_redirects;
        let redirects = Policy::custom(move |attempt| {
            if attempt.previous().contains(attempt.url()) {
                attempt.error(RedirectLoop)
            } else if attempt.previous().len() > max_redirects {
                attempt.error(TooManyRedirects)
            } else {
                attempt.follow()
            }
        });
        let client = reqwest::Client::builder()
            .user_agent(settings.user_agent.clone())
            .timeout(settings.timeout)
            .connect_timeout(settings.connect_timeout)
            .redirect(redirects)
            .gzip(true)
            .brotli(true)
            .deflate(true)
            .use_rustls_tls()
            .pool_idle_timeout(Duration::from_secs(90))
            .build()?;
        Ok(HttpClient {
            client,
            max_body_bytes: settings.max_body_bytes,
            max_redirects,
        })
    }

    /// GETs `url`, conditionally when `validators` hold an ETag or a Last-Modified. Any
    /// status is a [`Reply`]; only a request that brought no usable response is a [`Failure`].
    pub async fn get(&self, url: &str, validators: &Validators) -> Result<Reply, Failure> {
        let mut request = self.client.get(url);
        if let Some(etag) = &validators.etag {
            request = request.header(IF_NONE_MATCH, etag);
        }
        if let Some(date) = &validators.last_modified {
            request = request.header(IF_MODIFIED_SINCE, date);
        }
        let mut response = request
            .send()
            .await
            .map_err(|err| self.failure(&err, url, None))?;
        let status = response.status().as_u16();
        let final_url = response.url().to_string();
        let headers = response.headers();
        let mut reply = Reply {
            status,
            content_type: header(headers, CONTENT_TYPE),
            validators: Validators {
                etag: header(headers, ETAG),
                last_modified: header(headers, LAST_MODIFIED),
            },
            retry_after: header(headers, RETRY_AFTER),
            age: header(headers, AGE),
            url: final_url,
            body: Vec::new(),
        };
        if !(200..300).contains(&status) {
            return Ok(reply);
        }
        let limit = self.max_body_bytes;
        let too_large = |reply: &Reply, cause: String| Failure {
            error: FetchError::TooLarge { limit },
            url: reply.url.clone(),
            status: Some(status),
            cause,
        };
        // Compressed bodies carry no usable length; their decompressed size is checked below.
        if let Some(length) = response.content_length() {
            if length > limit as u64 {
                return Err(too_large(
                    &reply,
                    format!("Content-Length is {length} bytes"),
                ));
            }
        }
        let mut body = Vec::with_capacity(response.content_length().unwrap_or(0) as usize);
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|err| self.failure(&err, &reply.url, Some(status)))?
        {
            if body.len() + chunk.len() > limit {
                return Err(too_large(
                    &reply,
                    format!("more than {limit} bytes arrived; stopped reading"),
                ));
            }
            body.extend_from_slice(&chunk);
        }
        reply.body = body;
        Ok(reply)
    }

    fn failure(&self, err: &reqwest::Error, url: &str, status: Option<u16>) -> Failure {
        let error = if has_source::<RedirectLoop>(err) {
            FetchError::RedirectLoop
        } else if has_source::<TooManyRedirects>(err) {
            FetchError::TooManyRedirects {
                max: self.max_redirects,
            }
        } else if err.is_timeout() {
            FetchError::Timeout
        } else if err.is_connect() {
            FetchError::Connect
        } else if err.is_body() || err.is_decode() {
            FetchError::Body
        } else {
            FetchError::Request
        };
        Failure {
            error,
            url: err.url().map_or_else(|| url.to_string(), |u| u.to_string()),
            status: status.or_else(|| err.status().map(|s| s.as_u16())),
            cause: chain(err),
        }
    }
}

fn header(headers: &HeaderMap, name: reqwest::header::HeaderName) -> Option<String> {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string)
}

fn has_source<E: std::error::Error + 'static>(err: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(err);
    while let Some(err) = source {
        if err.is::<E>() {
            return true;
        }
        source = err.source();
    }
    false
}

/// `outer: inner: innermost`, the way `anyhow` prints `{:#}`.
pub(crate) fn chain(err: &reqwest::Error) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(err) = source {
        let next = err.to_string();
        if !text.ends_with(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = err.source();
    }
    text
}
