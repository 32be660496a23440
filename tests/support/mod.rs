//! Helpers shared by the actor and end-to-end tiers.
#![allow(dead_code)] // each tier uses its own subset

use std::future::Future;
use std::time::{Duration, Instant};

/// Polls `check` until it returns `Some`, or panics with `what` after `timeout`.
pub async fn eventually<T, F, Fut>(timeout: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        actix_rt::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The blocking twin of [`eventually`], for tests that drive a child process.
pub fn eventually_blocking<T>(
    timeout: Duration,
    what: &str,
    mut check: impl FnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A config for tests: random port, store in `dir`, fast liveness sweep, plus `extra` TOML
/// appended (later tables may not repeat earlier ones, so `extra` holds only new tables).
pub fn test_config(
    dir: &std::path::Path,
    fault_injection: bool,
    actors: &str,
    supervisor: &str,
) -> String {
    format!(
        r#"
[runtime]
arbiters = 2
shutdown_grace_secs = 5

[server]
port = 0

[storage]
path = "{store}"

[supervisor]
liveness_interval_ms = 50
{supervisor}

[actors]
{actors}

[debug]
fault_injection = {fault_injection}
"#,
        store = dir.join("ferret.db").display(),
    )
}

/// A tiny HTTP/1.1 server on 127.0.0.1:0 for the fetcher's tests: one thread per connection,
/// one request per connection, answers from a closure, and a log of every request.
pub mod http {
    use std::io::{Read, Write};
    use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    /// One request as the server saw it.
    #[derive(Debug, Clone)]
    pub struct Request {
        pub method: String,
        /// Path and query.
        pub path: String,
        /// Header names lower-cased.
        pub headers: Vec<(String, String)>,
        /// When its head arrived.
        pub at: Instant,
    }

    impl Request {
        pub fn header(&self, name: &str) -> Option<&str> {
            self.headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        }
    }

    /// What to answer.
    #[derive(Debug, Clone)]
    pub struct Response {
        pub status: u16,
        pub headers: Vec<(String, String)>,
        pub body: Vec<u8>,
        /// Wait this long before answering.
        pub delay: Duration,
        /// Send the body chunked, without a Content-Length.
        pub chunked: bool,
    }

    impl Response {
        pub fn status(status: u16) -> Response {
            Response {
                status,
                headers: Vec::new(),
                body: Vec::new(),
                delay: Duration::ZERO,
                chunked: false,
            }
        }

        pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Response {
            Response::status(200)
                .header("Content-Type", content_type)
                .body(body)
        }

        pub fn header(mut self, name: &str, value: &str) -> Response {
            self.headers.push((name.to_string(), value.to_string()));
            self
        }

        pub fn body(mut self, body: impl Into<Vec<u8>>) -> Response {
            self.body = body.into();
            self
        }

        pub fn delay(mut self, delay: Duration) -> Response {
            self.delay = delay;
            self
        }

        pub fn chunked(mut self) -> Response {
            self.chunked = true;
            self
        }
    }

    type Handler = dyn Fn(&Request, usize) -> Response + Send + Sync;

    struct Shared {
        handler: Box<Handler>,
        requests: Mutex<Vec<Request>>,
        in_flight: AtomicUsize,
        max_in_flight: AtomicUsize,
        stop: AtomicBool,
    }

    /// The server; stops accepting when dropped.
    pub struct TestServer {
        addr: SocketAddr,
        shared: Arc<Shared>,
    }

    impl TestServer {
        /// Serves `handler(request, n)`, where `n` counts earlier requests to the same path.
        pub fn start(
            handler: impl Fn(&Request, usize) -> Response + Send + Sync + 'static,
        ) -> Self {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let addr = listener.local_addr().unwrap();
            let shared = Arc::new(Shared {
                handler: Box::new(handler),
                requests: Mutex::default(),
                in_flight: AtomicUsize::new(0),
                max_in_flight: AtomicUsize::new(0),
                stop: AtomicBool::new(false),
            });
            let accepting = Arc::clone(&shared);
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if accepting.stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(stream) = stream else { continue };
                    let shared = Arc::clone(&accepting);
                    std::thread::spawn(move || serve(stream, &shared));
                }
            });
            TestServer { addr, shared }
        }

        pub fn url(&self, path: &str) -> String {
            format!("http://{}{path}", self.addr)
        }

        pub fn requests(&self) -> Vec<Request> {
            self.shared.requests.lock().unwrap().clone()
        }

        pub fn requests_to(&self, path: &str) -> Vec<Request> {
            self.requests()
                .into_iter()
                .filter(|r| r.path == path)
                .collect()
        }

        /// The most requests that were being answered at once.
        pub fn max_in_flight(&self) -> usize {
            self.shared.max_in_flight.load(Ordering::SeqCst)
        }
    }

    impl Drop for TestServer {
        fn drop(&mut self) {
            self.shared.stop.store(true, Ordering::SeqCst);
            // Wakes the accept loop so that it sees the flag.
            let _ = TcpStream::connect(self.addr);
        }
    }

    fn serve(mut stream: TcpStream, shared: &Shared) {
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let mut head = Vec::new();
        let mut byte = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut byte) {
                Ok(0) | Err(_) => return,
                Ok(n) => head.extend_from_slice(&byte[..n]),
            }
            if head.len() > 64 * 1024 {
                return;
            }
        }
        let text = String::from_utf8_lossy(&head).into_owned();
        let mut lines = text.split("\r\n");
        let mut first = lines.next().unwrap_or("").split(' ');
        let request = Request {
            method: first.next().unwrap_or("").to_string(),
            path: first.next().unwrap_or("").to_string(),
            headers: lines
                .take_while(|l| !l.is_empty())
                .filter_map(|l| l.split_once(':'))
                .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
                .collect(),
            at: Instant::now(),
        };
        let now = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        shared.max_in_flight.fetch_max(now, Ordering::SeqCst);
        let earlier = {
            let mut requests = shared.requests.lock().unwrap();
            let n = requests.iter().filter(|r| r.path == request.path).count();
            requests.push(request.clone());
            n
        };
        let response = (shared.handler)(&request, earlier);
        std::thread::sleep(response.delay);
        let mut out = format!("HTTP/1.1 {} X\r\nConnection: close\r\n", response.status);
        for (name, value) in &response.headers {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
        let mut bytes;
        if response.chunked {
            out.push_str("Transfer-Encoding: chunked\r\n\r\n");
            bytes = out.into_bytes();
            for chunk in response.body.chunks(1024) {
                bytes.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                bytes.extend_from_slice(chunk);
                bytes.extend_from_slice(b"\r\n");
            }
            bytes.extend_from_slice(b"0\r\n\r\n");
        } else {
            out.push_str(&format!("Content-Length: {}\r\n\r\n", response.body.len()));
            bytes = out.into_bytes();
            bytes.extend_from_slice(&response.body);
        }
        // Out of flight before the answer goes: once the client has read it, it may send its
        // next request before this thread runs again, and counting this one still would count
        // one request more than the client ever had in flight: the likely cause of the one
        // failure of `requests_to_one_host_never_exceed_its_concurrency_limit`, on a busy
        // machine, whose message was not kept.
        shared.in_flight.fetch_sub(1, Ordering::SeqCst);
        // The client may have given up (a timeout, a body too large): that is the test.
        let _ = stream.write_all(&bytes);
        let _ = stream.flush();
        let _ = stream.shutdown(Shutdown::Both);
    }

    /// A gzip stream holding `data` in stored (uncompressed) deflate blocks: enough to show
    /// that the client negotiates and decodes gzip without a compression library.
    pub fn gzip_stored(data: &[u8]) -> Vec<u8> {
        let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
        let mut blocks = data.chunks(65_535).peekable();
        if blocks.peek().is_none() {
            out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
        }
        while let Some(block) = blocks.next() {
            out.push(u8::from(blocks.peek().is_none()));
            let len = block.len() as u16;
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&(!len).to_le_bytes());
            out.extend_from_slice(block);
        }
        out.extend_from_slice(&crc32(data).to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out
    }

    fn crc32(data: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &byte in data {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = (crc >> 1) ^ (0xEDB8_8320 & (crc & 1).wrapping_neg());
            }
        }
        !crc
    }
}
