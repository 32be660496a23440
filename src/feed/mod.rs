//! Feeds: a fast, forgiving RSS/Atom parser producing one format-neutral [`Feed`].
//!
//! [`parse`] takes the bytes of a document (plus the HTTP charset when there is one) and reads
//! RSS 0.90–0.94 and 2.0, RSS 1.0 (RDF), Atom 0.3 and 1.0, and JSON Feed 1.0 and 1.1 into the
//! same model. It is
//! built on quick-xml's streaming reader and is forgiving the way feed readers have to be:
//! bare `&`, HTML entities, stray or missing end tags and documents cut off mid-way are
//! recovered, and each thing that was wrong is listed in [`Feed::warnings`] with its line and
//! column. Only input that is not a feed at all, or breaks a hard [`Limits`] bound, is an
//! error.
//!
//! # What is not done here
//!
//! Content is kept as the document gave it: HTML in `summary` and `content` is neither
//! sanitised nor reformatted; only its relative links are resolved. Sanitising belongs where
//! the HTML is rendered, with that renderer's rules; doing it here would lose data that
//! clustering and discovery want (the text), and a feed parser's sanitiser is never the last
//! line of defence anyway. The document's links (`link`, enclosures, author pages) are
//! resolved against `xml:base` and the feed's own URL.
//!
//! An entity declared in the document's internal DTD subset is replaced by its text as
//! written, once: references inside that text are not expanded again, so there is no
//! entity-expansion blow-up, and external entities are never read. An entity the parser does
//! not know is kept literally, with a warning.

mod date;
mod decode;
mod html;
mod json;
mod model;
mod parser;

pub use date::{parse as parse_date, to_rfc3339};
pub use model::{Enclosure, Extension, Extensions, Feed, Format, Item, Person, Values, Warning};

/// How to parse.
#[derive(Debug, Clone, Default)]
pub struct ParseOptions<'a> {
    /// The `charset` parameter of the HTTP `Content-Type`, when the document came over HTTP.
    pub http_charset: Option<&'a str>,
    /// The URL the document was fetched from; relative links are resolved against it.
    pub base_url: Option<&'a str>,
    /// Lean mode, for large listings: keep the channel in full but read only each item's `id`,
    /// `link`, `title`, `published` and `updated`, skipping everything else.
    pub lean: bool,
    /// Hard bounds on the input.
    pub limits: Limits,
}

/// Hard bounds on what a document may cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest document accepted, in bytes; a larger one is an error.
    pub max_bytes: usize,
    /// Deepest element nesting read; deeper subtrees are skipped with a warning.
    pub max_depth: usize,
    /// Most items read; later ones are skipped with a warning.
    pub max_items: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 32 * 1024 * 1024,
            max_depth: 128,
            max_items: 50_000,
        }
    }
}

/// Why a document could not be read as a feed at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The document is larger than [`Limits::max_bytes`].
    #[error("document is {size} bytes, over the limit of {limit}")]
    TooLarge {
        /// Its size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// There is no element in the document.
    #[error("{line}:{column}: no XML element found{}", detail.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    NoRoot {
        /// Where reading stopped.
        line: usize,
        /// Column, in characters, from 1.
        column: usize,
        /// What the XML reader said, when it stopped on an error.
        detail: Option<String>,
    },
    /// The document looks like JSON but is not a JSON Feed one can read.
    #[error("{line}:{column}: not a JSON Feed: {message}")]
    Json {
        /// Line of the problem.
        line: usize,
        /// Column of the problem.
        column: usize,
        /// What serde_json said.
        message: String,
    },
    /// The root element is not one of a feed.
    #[error(
        "{line}:{column}: not a feed: the root element is <{root}>, not <rss>, <rdf:RDF> or <feed>"
    )]
    NotAFeed {
        /// Line of the root element.
        line: usize,
        /// Column of the root element.
        column: usize,
        /// Its name.
        root: String,
    },
}

/// Parses a feed document.
///
/// Never panics. Recoverable problems become [`Feed::warnings`]; see [`ParseError`] for the
/// rest.
pub fn parse(bytes: &[u8], options: &ParseOptions<'_>) -> Result<Feed, ParseError> {
    if bytes.len() > options.limits.max_bytes {
        return Err(ParseError::TooLarge {
            size: bytes.len(),
            limit: options.limits.max_bytes,
        });
    }
    let decoded = decode::decode(bytes, options.http_charset);
    if decoded.text.trim_start().starts_with('{') {
        let mut feed = json::parse(&decoded.text, decoded.encoding, options)?;
        if !decoded.warnings.is_empty() {
            feed.well_formed = false;
            let warnings = decoded.warnings.into_iter().map(|message| Warning {
                line: 1,
                column: 1,
                message,
            });
            feed.warnings.splice(0..0, warnings);
        }
        return Ok(feed);
    }
    parser::parse(decoded, options)
}

/// The id given to an item that has none: a stable hash of its link and title, so that the same
/// item read twice gets the same id. The format is `urn:ferret:` followed by 16 hex digits.
pub fn derived_id(link: Option<&str>, title: Option<&str>) -> String {
    // FNV-1a, 64 bits: tiny, and fixed forever (std's hashers make no such promise).
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in [link.unwrap_or(""), "\u{0}", title.unwrap_or("")] {
        for byte in part.bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    let mut id = String::with_capacity(27);
    id.push_str("urn:ferret:");
    for shift in (0..16).rev() {
        let nibble = (hash >> (shift * 4)) & 0xf;
        id.push(char::from_digit(nibble as u32, 16).unwrap_or('0'));
    }
    id
}
