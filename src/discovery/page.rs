//! What a fetched HTML page says: title, visible text, language, links, image count, size.
//!
//! Pages are tokenized with html5gum (a WHATWG tokenizer: whatever the bytes, it never fails)
//! through an emitter of our own that keeps only what is needed, so that no token is
//! allocated: a tag's name and the few attributes that matter (`href`, `lang`, `rel`, `alt`),
//! and text only where it is visible. Script, style, iframe and the like switch the tokenizer
//! to raw text as a browser would (html5gum's `naive_next_state`), so a `<a href>` inside a
//! script is not a link.
//!
//! Two entry points:
//!
//! - [`parse_page`] decodes the bytes first (BOM, then the `charset` of the `Content-Type`,
//!   then a `<meta charset>` or `<meta http-equiv=content-type>` in the first 1024 bytes, as
//!   the WHATWG prescan does, else UTF-8 with invalid bytes replaced) and builds a [`PageDoc`].
//! - [`extract_links`] is the breadth-first fast path: no decoding (links are ASCII in
//!   practice; non-ASCII bytes in a legacy encoding are replaced), no text, only `href`s.

use std::borrow::Cow;
use std::convert::Infallible;

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8};
use html5gum::{naive_next_state, Emitter, Error, State, Tokenizer};
use rustc_hash::FxHashSet;
use url::Url;

use super::url::{canonical, normalize};

/// A link on a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// Absolute, normalised (see [`super::url::normalize`]), http or https.
    pub url: Url,
    /// The anchor text, whitespace collapsed (with the `alt` of images inside it); an
    /// `<area>`'s `alt`.
    pub text: String,
}

/// What a page says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageDoc {
    /// The URL the page was fetched from, without its fragment.
    pub url: Url,
    /// `<link rel=canonical href>`, resolved and normalised, if there is one.
    pub canonical: Option<Url>,
    /// The first `<title>`, whitespace collapsed; empty without one.
    pub title: String,
    /// The visible text, whitespace collapsed (no script, style, noscript, template, iframe
    /// fallback or title); block elements separate words.
    pub text: String,
    /// The primary subtag of `<html lang>`, lower-cased (`en` for `en-US`).
    pub lang: Option<String>,
    /// Links in document order: `<a href>` and `<area href>`, resolved against `<base href>`
    /// (else the page URL), normalised, http(s) only, without duplicates (the first is kept)
    /// and without the page itself.
    pub links: Vec<Link>,
    /// The number of `<img>` elements.
    pub images: u32,
    /// The size of the body in bytes.
    pub size: usize,
}

/// Whether a `Content-Type` is HTML: `text/html` or `application/xhtml+xml`, any parameters.
/// A missing header counts as HTML (browsers sniff; a crawler loses little by trying).
pub fn is_html(content_type: Option<&str>) -> bool {
    let Some(value) = content_type else {
        return true;
    };
    let essence = value.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("text/html")
        || essence.eq_ignore_ascii_case("application/xhtml+xml")
}

/// Parses a fetched page. `url` is where it came from, `content_type` the HTTP header. Never
/// fails: any bytes give a (possibly empty) document.
pub fn parse_page(url: &Url, body: &[u8], content_type: Option<&str>) -> PageDoc {
    let text = decode(body, content_type);
    let mut scan = Scan::new(true);
    tokenize(text.as_bytes(), &mut scan);
    let page_url = canonical(url.clone()).unwrap_or_else(|| url.clone());
    let base = scan.base_url(&page_url);
    let canonical = scan
        .canonical
        .as_deref()
        .and_then(|href| normalize(&base, &lossy(href)));
    let mut seen = FxHashSet::default();
    seen.insert(page_url.as_str().to_string());
    let mut links = Vec::with_capacity(scan.links.len());
    for raw in &scan.links {
        let Some(link) = normalize(&base, &lossy(&raw.href)) else {
            continue;
        };
        if seen.insert(link.as_str().to_string()) {
            links.push(Link {
                url: link,
                text: into_string(trim_end(&raw.text).to_vec()),
            });
        }
    }
    PageDoc {
        canonical,
        title: into_string(trim_end(&scan.title).to_vec()),
        lang: scan.lang.as_deref().and_then(primary_subtag),
        images: scan.images,
        size: body.len(),
        text: into_string(std::mem::take(&mut scan.text)),
        links,
        url: page_url,
    }
}

/// The visible text of an HTML document or fragment, as [`PageDoc::text`] has it: character
/// references decoded, no tags, nothing from script, style and the like, block elements
/// separating words and inline ones not, whitespace collapsed. A `<` that opens no tag (`x <
/// y`) is text, as in a browser.
pub fn visible_text(html: &str) -> String {
    let mut scan = Scan::new(true);
    tokenize(html.as_bytes(), &mut scan);
    into_string(scan.text)
}

/// The breadth-first fast path: the page's links (as [`PageDoc::links`] has them, without
/// their text), from the raw bytes.
pub fn extract_links(url: &Url, body: &[u8]) -> Vec<Url> {
    let mut scan = Scan::new(false);
    tokenize(body, &mut scan);
    let page_url = canonical(url.clone()).unwrap_or_else(|| url.clone());
    let base = scan.base_url(&page_url);
    let mut seen = FxHashSet::default();
    seen.insert(page_url.as_str().to_string());
    let mut links = Vec::with_capacity(scan.links.len());
    for raw in &scan.links {
        if let Some(link) = normalize(&base, &lossy(&raw.href)) {
            if seen.insert(link.as_str().to_string()) {
                links.push(link);
            }
        }
    }
    links
}

fn tokenize(bytes: &[u8], scan: &mut Scan) {
    // The emitter keeps what it needs and yields nothing; reading bytes cannot fail.
    Tokenizer::new_with_emitter(bytes, Emit(scan)).for_each(drop);
}

fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

fn into_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
}

fn trim_end(bytes: &[u8]) -> &[u8] {
    bytes.strip_suffix(b" ").unwrap_or(bytes)
}

fn primary_subtag(lang: &[u8]) -> Option<String> {
    let lang = lossy(lang);
    let primary = lang.trim().split(['-', '_']).next()?;
    (!primary.is_empty() && primary.len() <= 8 && primary.chars().all(|c| c.is_ascii_alphabetic()))
        .then(|| primary.to_ascii_lowercase())
}

// ---------------------------------------------------------------------------------------------
// Decoding

/// The page as text: BOM, HTTP charset, `<meta>` prescan, else UTF-8 (lossy).
fn decode<'b>(body: &'b [u8], content_type: Option<&str>) -> Cow<'b, str> {
    if let Some((encoding, bom_len)) = Encoding::for_bom(body) {
        return encoding.decode_without_bom_handling(&body[bom_len..]).0;
    }
    let encoding = content_type
        .and_then(charset_param)
        .and_then(|label| usable(label.as_bytes(), false))
        .or_else(|| meta_charset(body))
        .unwrap_or(UTF_8);
    if encoding == UTF_8 {
        String::from_utf8_lossy(body)
    } else {
        encoding.decode_without_bom_handling(body).0
    }
}

/// The `charset` parameter of a `Content-Type` value.
fn charset_param(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches(|c| c == '"' || c == '\''))
    })
}

/// An encoding for `label`, or `None` if there is none or it would destroy the text. A
/// `<meta>` cannot declare UTF-16 (the bytes were read as ASCII to find it): that means
/// UTF-8, as WHATWG says.
fn usable(label: &[u8], from_meta: bool) -> Option<&'static Encoding> {
    let encoding = Encoding::for_label(label)?;
    if encoding == encoding_rs::REPLACEMENT {
        return None;
    }
    if encoding == UTF_16LE || encoding == UTF_16BE {
        return from_meta.then_some(UTF_8);
    }
    if encoding == encoding_rs::X_USER_DEFINED && from_meta {
        return Some(encoding_rs::WINDOWS_1252);
    }
    Some(encoding)
}

/// A simplified WHATWG prescan: the first `charset=` inside a `<meta` tag within the first
/// 1024 bytes (`<meta charset=x>` and `content="text/html; charset=x"` alike).
fn meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    let head = &body[..body.len().min(1024)];
    let mut at = 0;
    while let Some(found) = memchr::memchr(b'<', &head[at..]) {
        let start = at + found;
        at = start + 1;
        let Some(tag) = head.get(start + 1..start + 5) else {
            break;
        };
        if !tag.eq_ignore_ascii_case(b"meta") {
            continue;
        }
        let end = memchr::memchr(b'>', &head[start..]).map_or(head.len(), |e| start + e);
        let tag = &head[start + 5..end];
        let Some(pos) = find_ignore_case(tag, b"charset") else {
            continue;
        };
        let rest = trim_ascii_start(&tag[pos + 7..]);
        let Some(rest) = rest.strip_prefix(b"=") else {
            continue;
        };
        let rest = trim_ascii_start(rest);
        let rest = rest
            .strip_prefix(b"\"")
            .or_else(|| rest.strip_prefix(b"'"))
            .unwrap_or(rest);
        let len = rest
            .iter()
            .position(|&b| {
                matches!(b, b'"' | b'\'' | b';' | b'/' | b'>') || b.is_ascii_whitespace()
            })
            .unwrap_or(rest.len());
        if let Some(encoding) = usable(&rest[..len], true) {
            return Some(encoding);
        }
    }
    None
}

fn find_ignore_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

fn trim_ascii_start(bytes: &[u8]) -> &[u8] {
    let n = bytes.iter().take_while(|b| b.is_ascii_whitespace()).count();
    &bytes[n..]
}

// ---------------------------------------------------------------------------------------------
// Scanning

/// A link as written: the `href` bytes and the text seen inside it.
struct RawLink {
    href: Vec<u8>,
    text: Vec<u8>,
}

/// Which attribute the current one is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attr {
    /// Not known yet: its name is still arriving.
    Pending,
    Ignored,
    Href,
    Lang,
    Rel,
    Alt,
}

/// What the scan keeps. One per page.
struct Scan {
    /// Collect text, title and link text (false: links only).
    full: bool,

    // The current tag.
    is_end: bool,
    name: Vec<u8>,
    /// Whether the current tag is one whose attributes matter (decided when the first
    /// attribute starts: the name is complete by then).
    wanted: Option<bool>,
    attr_name: Vec<u8>,
    attr: Attr,
    href: Option<Vec<u8>>,
    lang_attr: Option<Vec<u8>>,
    rel: Option<Vec<u8>>,
    alt: Option<Vec<u8>>,
    last_start_tag: Vec<u8>,

    // The document.
    base: Option<Vec<u8>>,
    canonical: Option<Vec<u8>>,
    lang: Option<Vec<u8>>,
    title: Vec<u8>,
    title_state: TitleState,
    title_space: bool,
    text: Vec<u8>,
    text_space: bool,
    /// Depth inside elements whose content is not visible.
    hidden: u32,
    links: Vec<RawLink>,
    /// The link whose text is being read.
    anchor: Option<usize>,
    anchor_space: bool,
    images: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TitleState {
    Before,
    In,
    Done,
}

impl Scan {
    fn new(full: bool) -> Scan {
        Scan {
            full,
            is_end: false,
            name: Vec::with_capacity(16),
            wanted: None,
            attr_name: Vec::with_capacity(16),
            attr: Attr::Pending,
            href: None,
            lang_attr: None,
            rel: None,
            alt: None,
            last_start_tag: Vec::with_capacity(16),
            base: None,
            canonical: None,
            lang: None,
            title: Vec::new(),
            title_state: TitleState::Before,
            title_space: false,
            text: Vec::new(),
            text_space: false,
            hidden: 0,
            links: Vec::new(),
            anchor: None,
            anchor_space: false,
            images: 0,
        }
    }

    /// The document's base URL: the first `<base href>` resolved against the page URL, else
    /// the page URL.
    fn base_url(&self, page: &Url) -> Url {
        self.base
            .as_deref()
            .and_then(|href| page.join(&lossy(href)).ok())
            .unwrap_or_else(|| page.clone())
    }

    fn start_tag(&mut self) {
        let wanted = self.wanted == Some(true);
        match self.name.as_slice() {
            b"a" | b"area" => {
                self.anchor = None;
                if let Some(href) = self.href.take() {
                    let mut text = Vec::new();
                    let is_area = self.name == b"area";
                    if is_area && self.full {
                        if let Some(alt) = &self.alt {
                            let mut space = false;
                            push_collapsed(&mut text, alt, &mut space);
                        }
                    }
                    self.links.push(RawLink { href, text });
                    if !is_area && self.full {
                        self.anchor = Some(self.links.len() - 1);
                        self.anchor_space = false;
                    }
                }
            }
            b"base" if wanted && self.base.is_none() => self.base = self.href.take(),
            b"link" if wanted && self.canonical.is_none() => {
                let canonical = self.rel.as_deref().is_some_and(|rel| {
                    rel.split(|b| b.is_ascii_whitespace())
                        .any(|t| t.eq_ignore_ascii_case(b"canonical"))
                });
                if canonical {
                    self.canonical = self.href.take();
                }
            }
            b"html" if self.lang.is_none() => self.lang = self.lang_attr.take(),
            b"img" => {
                self.images = self.images.saturating_add(1);
                if let (Some(index), Some(alt)) = (self.anchor, &self.alt) {
                    if let Some(link) = self.links.get_mut(index) {
                        push_collapsed(&mut link.text, alt, &mut self.anchor_space);
                    }
                }
            }
            b"title" if self.title_state == TitleState::Before => self.title_state = TitleState::In,
            b"script" | b"style" | b"noscript" | b"template" | b"iframe" | b"noembed"
            | b"noframes" => self.hidden = self.hidden.saturating_add(1),
            _ => self.boundary(),
        }
    }

    fn end_tag(&mut self) {
        match self.name.as_slice() {
            b"a" => self.anchor = None,
            b"title" if self.title_state == TitleState::In => self.title_state = TitleState::Done,
            b"script" | b"style" | b"noscript" | b"template" | b"iframe" | b"noembed"
            | b"noframes" => self.hidden = self.hidden.saturating_sub(1),
            _ => self.boundary(),
        }
    }

    /// Block elements separate words; inline ones do not.
    fn boundary(&mut self) {
        let inline = matches!(
            self.name.as_slice(),
            b"b" | b"i"
                | b"u"
                | b"s"
                | b"q"
                | b"em"
                | b"span"
                | b"strong"
                | b"code"
                | b"small"
                | b"sub"
                | b"sup"
                | b"abbr"
                | b"cite"
                | b"dfn"
                | b"kbd"
                | b"mark"
                | b"samp"
                | b"var"
                | b"time"
                | b"data"
                | b"font"
                | b"wbr"
                | b"bdi"
                | b"bdo"
                | b"ruby"
                | b"rt"
                | b"rp"
                | b"tt"
                | b"big"
                | b"label"
                | b"acronym"
        );
        if !inline {
            self.text_space = !self.text.is_empty();
            if self.anchor.is_some() {
                self.anchor_space = true;
            }
        }
    }

    fn text(&mut self, s: &[u8]) {
        if !self.full || self.hidden > 0 {
            return;
        }
        if self.title_state == TitleState::In {
            push_collapsed(&mut self.title, s, &mut self.title_space);
            return;
        }
        push_collapsed(&mut self.text, s, &mut self.text_space);
        if let Some(link) = self.anchor.and_then(|i| self.links.get_mut(i)) {
            push_collapsed(&mut link.text, s, &mut self.anchor_space);
        }
    }

    /// Ends the current attribute. A valueless `href` (or `href=""`) is an empty one, which
    /// points at the base URL, as in a browser.
    fn flush_attr(&mut self) {
        if self.wanted == Some(true)
            && self.attr == Attr::Pending
            && self.attr_name == b"href"
            && self.href.is_none()
        {
            self.href = Some(Vec::new());
        }
        self.finish_attr();
    }

    fn finish_attr(&mut self) {
        self.attr_name.clear();
        self.attr = Attr::Pending;
    }
}

/// Appends `s` to `out` with runs of whitespace (ASCII and no-break space) as one space; no
/// leading space, and a trailing one only as `space` (pending) for the next piece.
fn push_collapsed(out: &mut Vec<u8>, s: &[u8], space: &mut bool) {
    out.reserve(s.len());
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        let ws = match b {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0c => 1,
            0xc2 if s.get(i + 1) == Some(&0xa0) => 2,
            _ => 0,
        };
        if ws > 0 {
            *space = !out.is_empty();
            i += ws;
            continue;
        }
        if *space {
            out.push(b' ');
            *space = false;
        }
        out.push(b);
        i += 1;
    }
}

/// The html5gum emitter over a [`Scan`].
struct Emit<'s>(&'s mut Scan);

impl Emitter for Emit<'_> {
    type Token = Infallible;

    fn set_last_start_tag(&mut self, last_start_tag: Option<&[u8]>) {
        self.0.last_start_tag.clear();
        self.0
            .last_start_tag
            .extend_from_slice(last_start_tag.unwrap_or_default());
    }

    fn emit_eof(&mut self) {}

    fn emit_error(&mut self, _: Error) {}

    #[inline]
    fn should_emit_errors(&mut self) -> bool {
        false
    }

    fn pop_token(&mut self) -> Option<Infallible> {
        None
    }

    fn emit_string(&mut self, c: &[u8]) {
        self.0.text(c);
    }

    fn init_start_tag(&mut self) {
        let s = &mut *self.0;
        s.is_end = false;
        s.name.clear();
        s.wanted = None;
        s.href = None;
        s.lang_attr = None;
        s.rel = None;
        s.alt = None;
        s.finish_attr();
    }

    fn init_end_tag(&mut self) {
        self.init_start_tag();
        self.0.is_end = true;
    }

    fn init_comment(&mut self) {}

    fn emit_current_tag(&mut self) -> Option<State> {
        let s = &mut *self.0;
        s.flush_attr();
        if s.is_end {
            s.end_tag();
            s.last_start_tag.clear();
            None
        } else {
            if s.wanted.is_none() {
                s.wanted = Some(false);
            }
            s.start_tag();
            s.last_start_tag.clear();
            s.last_start_tag.extend_from_slice(&s.name);
            naive_next_state(&s.name)
        }
    }

    fn emit_current_comment(&mut self) {}

    fn emit_current_doctype(&mut self) {}

    fn set_self_closing(&mut self) {}

    fn set_force_quirks(&mut self) {}

    fn push_tag_name(&mut self, s: &[u8]) {
        self.0.name.extend_from_slice(s);
    }

    fn push_comment(&mut self, _: &[u8]) {}

    fn push_doctype_name(&mut self, _: &[u8]) {}

    fn init_doctype(&mut self) {}

    fn init_attribute(&mut self) {
        let s = &mut *self.0;
        if s.wanted.is_none() {
            s.wanted = Some(
                !s.is_end
                    && matches!(
                        s.name.as_slice(),
                        b"a" | b"area" | b"base" | b"link" | b"html" | b"img"
                    ),
            );
        }
        s.flush_attr();
    }

    fn push_attribute_name(&mut self, s: &[u8]) {
        if self.0.wanted == Some(true) {
            self.0.attr_name.extend_from_slice(s);
        }
    }

    fn push_attribute_value(&mut self, v: &[u8]) {
        let s = &mut *self.0;
        if s.wanted != Some(true) {
            return;
        }
        if s.attr == Attr::Pending {
            // The first attribute of a name wins; later duplicates are ignored (WHATWG).
            s.attr = match s.attr_name.as_slice() {
                b"href" if s.href.is_none() => Attr::Href,
                b"lang" if s.lang_attr.is_none() => Attr::Lang,
                b"rel" if s.rel.is_none() => Attr::Rel,
                b"alt" if s.alt.is_none() && s.full => Attr::Alt,
                _ => Attr::Ignored,
            };
        }
        let slot = match s.attr {
            Attr::Href => &mut s.href,
            Attr::Lang => &mut s.lang_attr,
            Attr::Rel => &mut s.rel,
            Attr::Alt => &mut s.alt,
            Attr::Pending | Attr::Ignored => return,
        };
        slot.get_or_insert_with(Vec::new).extend_from_slice(v);
    }

    fn set_doctype_public_identifier(&mut self, _: &[u8]) {}

    fn set_doctype_system_identifier(&mut self, _: &[u8]) {}

    fn push_doctype_public_identifier(&mut self, _: &[u8]) {}

    fn push_doctype_system_identifier(&mut self, _: &[u8]) {}

    fn current_is_appropriate_end_tag_token(&mut self) -> bool {
        let s = &*self.0;
        s.is_end && !s.last_start_tag.is_empty() && s.last_start_tag == s.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charset_sources_in_order() {
        assert_eq!(
            charset_param("text/html; Charset=\"KOI8-R\""),
            Some("KOI8-R")
        );
        let page =
            b"<html><head><meta http-equiv=Content-Type content='text/html; charset=windows-1251'>";
        assert_eq!(meta_charset(page), Some(encoding_rs::WINDOWS_1251));
        assert_eq!(meta_charset(b"<meta charset=\"utf-16\">"), Some(UTF_8));
        assert_eq!(meta_charset(b"<metax><p>charset=koi8-r"), None);
        let body = b"<meta charset=koi8-r><title>\xf0\xd2\xc9\xd7\xc5\xd4</title>";
        let url = Url::parse("http://example.com/").unwrap();
        assert_eq!(parse_page(&url, body, None).title, "Привет");
        assert_eq!(
            parse_page(&url, body, Some("text/html; charset=utf-8")).title,
            "\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}"
        );
    }

    #[test]
    fn collapsing_keeps_no_edges() {
        let mut out = Vec::new();
        let mut space = false;
        push_collapsed(&mut out, b"  a \n b\xc2\xa0", &mut space);
        push_collapsed(&mut out, b"c", &mut space);
        assert_eq!(out, b"a b c");
    }
}
