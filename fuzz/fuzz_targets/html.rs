//! Pages and robots.txt files are outside input: whatever the bytes (and Content-Type), page
//! parsing gives a document and robots parsing gives rules, never a panic. The fast link path
//! finds exactly the links the full parse does, and every link is a normalised http(s) URL.
#![no_main]

use ferret::discovery::page::{extract_links, parse_page};
use ferret::discovery::robots::Robots;
use libfuzzer_sys::fuzz_target;
use url::Url;

const CONTENT_TYPES: [Option<&str>; 5] = [
    None,
    Some("text/html"),
    Some("text/html; charset=utf-8"),
    Some("text/html; charset=Shift_JIS"),
    Some("text/html; charset=koi8-r"),
];

fuzz_target!(|data: &[u8]| {
    let (selector, bytes) = data.split_first().map_or((0, data), |(&s, rest)| (s, rest));
    let base = if selector & 0x80 != 0 {
        "https://example.com/a/b/page.html?q=1"
    } else {
        "http://127.0.0.1:8088/index.html"
    };
    let url = Url::parse(base).unwrap();
    let content_type = CONTENT_TYPES[usize::from(selector & 0x7f) % CONTENT_TYPES.len()];
    let doc = parse_page(&url, bytes, content_type);
    assert_eq!(doc.size, bytes.len());
    for link in &doc.links {
        assert!(matches!(link.url.scheme(), "http" | "https"));
        assert!(link.url.fragment().is_none());
        assert_ne!(link.url, doc.url, "the page itself is not a link");
    }
    let fast = extract_links(&url, bytes);
    // The fast path reads the raw bytes; the full parse decodes them first. They agree when
    // decoding changes nothing.
    if content_type.is_none_or(|ct| ct.ends_with("utf-8") || ct == "text/html")
        && std::str::from_utf8(bytes).is_ok()
        && !bytes.starts_with(b"\xef\xbb\xbf")
        && !has_meta(bytes)
    {
        let full: Vec<&Url> = doc.links.iter().map(|l| &l.url).collect();
        assert_eq!(fast.iter().collect::<Vec<_>>(), full);
    }
    let robots = Robots::parse("ferret", bytes);
    let _ = robots.allowed(&url);
    let _ = robots.crawl_delay_ms();
});

fn has_meta(bytes: &[u8]) -> bool {
    bytes.windows(5).any(|w| w.eq_ignore_ascii_case(b"<meta"))
}
