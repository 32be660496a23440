//! The streaming reader: quick-xml events → [`Feed`].
//!
//! One pass over the decoded text with a stack of frames, one per open element. A frame knows
//! what its element means in the model (a field of the feed or of an item, a person, an
//! extension, something to skip), its `xml:base` and `xml:lang`, and where its content began
//! in the text, so that an element holding markup (Atom `type="xhtml"`, or HTML someone forgot
//! to escape) is kept as the markup it was. Namespaces are tracked here rather than by
//! quick-xml's `NsReader`, because recovering from mismatched end tags means popping frames
//! the reader knows nothing about.

use std::borrow::Cow;
use std::sync::Arc;

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
use rustc_hash::FxHashSet;
use url::Url;

use super::decode::Decoded;
use super::model::{Enclosure, Feed, Format, Item, Person, Warning};
use super::{date, derived_id, html, ParseError, ParseOptions};

const ATOM_10: &str = "http://www.w3.org/2005/Atom";
const ATOM_03: &str = "http://purl.org/atom/ns#";
const RSS_10: &str = "http://purl.org/rss/1.0/";
const RSS_090: &str = "http://my.netscape.com/rdf/simple/0.9/";
const RDF: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";
const DC: &str = "http://purl.org/dc/elements/1.1/";
const DCTERMS: &str = "http://purl.org/dc/terms/";
const CONTENT: &str = "http://purl.org/rss/1.0/modules/content/";
const MEDIA: &str = "http://search.yahoo.com/mrss/";
const XHTML: &str = "http://www.w3.org/1999/xhtml";
const XML: &str = "http://www.w3.org/XML/1998/namespace";

/// Warnings kept per document; the rest are counted in one last warning.
const MAX_WARNINGS: usize = 100;
/// XML errors recovered from before reading stops.
const MAX_ERRORS: usize = 1_000;

/// The namespaces the model knows, by URI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ns {
    /// No namespace.
    None,
    /// RSS 1.0 or 0.90: the same vocabulary as plain RSS.
    Rss,
    Atom,
    Rdf,
    Dc,
    DcTerms,
    Content,
    Media,
    Xhtml,
    Other,
}

impl Ns {
    fn of(uri: &str) -> Ns {
        match uri {
            "" => Ns::None,
            RSS_10 | RSS_090 => Ns::Rss,
            ATOM_10 | ATOM_03 => Ns::Atom,
            RDF => Ns::Rdf,
            DC => Ns::Dc,
            DCTERMS => Ns::DcTerms,
            CONTENT => Ns::Content,
            MEDIA => Ns::Media,
            XHTML => Ns::Xhtml,
            // Some feeds write the Atom namespace with a trailing `#` or the wrong case.
            _ if uri.eq_ignore_ascii_case(ATOM_10) => Ns::Atom,
            _ => Ns::Other,
        }
    }
}

/// How an element's content is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Body {
    /// Plain text.
    Text,
    /// HTML, escaped or in CDATA (RSS descriptions, Atom `type="html"`).
    Html,
    /// Inline XHTML markup; `wrapped` when it sits in Atom 1.0's `div` wrapper, which is not
    /// part of the content.
    Xhtml { wrapped: bool },
    /// Base64 (Atom 0.3 `mode="base64"`, Atom 1.0 media types that are not text); `html` when
    /// the decoded bytes are HTML.
    Base64 { html: bool },
}

impl Body {
    /// The body of an Atom text construct or content element, from its `type` and `mode`.
    fn of_atom(kind: Option<&str>, mode: Option<&str>, atom10: bool) -> Body {
        let kind = kind
            .map(str::trim)
            .filter(|kind| !kind.is_empty())
            .unwrap_or("text")
            .to_ascii_lowercase();
        let html = matches!(kind.as_str(), "html" | "text/html");
        match (mode.map(str::trim), kind.as_str()) {
            (Some("base64"), _) => Body::Base64 { html },
            (Some("xml"), _) => Body::Xhtml { wrapped: atom10 },
            (_, "xhtml") => Body::Xhtml { wrapped: true },
            // Atom 1.0 wraps XHTML in a `div` whatever the type is called; 0.3 did not.
            (_, "application/xhtml+xml") => Body::Xhtml { wrapped: atom10 },
            _ if html => Body::Html,
            (_, kind) if kind == "text" || kind.starts_with("text/") => Body::Text,
            (_, kind) if kind.ends_with("+xml") || kind.ends_with("/xml") => Body::Text,
            (Some("escaped"), _) => Body::Text,
            _ => Body::Base64 { html: false },
        }
    }

    /// Whether the value is markup whose links should be resolved.
    fn is_markup(self) -> bool {
        !matches!(self, Body::Text | Body::Base64 { html: false })
    }
}

/// Whose field an element fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    Feed,
    Item,
}

impl Field {
    fn holds_markup(self) -> bool {
        matches!(
            self,
            Field::Title
                | Field::Description
                | Field::Summary
                | Field::RssSummary
                | Field::Content
                | Field::MediaTitle
                | Field::MediaDescription
        )
    }
}

/// The model fields an element can fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Title,
    /// RSS `link`: the text is the URL.
    Link,
    Description,
    Language,
    /// A date for `updated`; `strong` ones (`lastBuildDate`, Atom `updated`) replace weaker
    /// ones (`pubDate` on a channel).
    Updated {
        strong: bool,
    },
    Published,
    /// RSS `guid`; a permalink guid also serves as the link.
    Guid {
        permalink: bool,
    },
    /// Atom `id`.
    Id,
    /// `dc:identifier`: the id when there is no other.
    Identifier,
    Summary,
    Content,
    Category,
    /// RSS `author` / `managingEditor`: `email (Name)` or `Name <email>`.
    AuthorText,
    /// Atom person constructs.
    PersonName,
    PersonEmail,
    PersonUri,
    /// A `summary` element in RSS.
    RssSummary,
    /// A comma-separated list of categories.
    Tags,
    /// Media RSS fallbacks for an item's title and summary.
    MediaTitle,
    MediaDescription,
}

#[derive(Debug)]
enum Kind<'a> {
    /// `rss` or `rdf:RDF`: holds the channel (and, in RDF, the items).
    Root,
    /// RSS `channel`, Atom `feed`.
    Channel,
    Item,
    /// An Atom `author` (or a feed's): its name, email and uri fill the last person pushed.
    Person(Owner),
    Field {
        owner: Owner,
        field: Field,
        body: Body,
        /// A child element appeared: the content is taken as markup from the text.
        markup: bool,
    },
    /// An element the model has no field for, kept in `extensions` under `prefix`, by `path`.
    Extension {
        owner: Owner,
        prefix: &'a str,
        path: Cow<'a, str>,
        has_children: bool,
    },
    /// Read from its attributes at the start tag (Atom `link` and `category`, `enclosure`);
    /// its content is ignored.
    Attributes,
    /// Ignored, with everything inside it.
    Skip,
}

/// A namespace declaration in scope.
#[derive(Debug)]
struct Declaration<'a> {
    prefix: &'a str,
    uri: Cow<'a, str>,
    /// What the URI means to the model, worked out once.
    ns: Ns,
}

#[derive(Debug)]
struct Frame<'a> {
    kind: Kind<'a>,
    /// The element's qualified name, to match its end tag.
    name: &'a [u8],
    /// Length of the namespace stack before this element's declarations.
    ns_len: usize,
    /// Index into `Parser::bases` of the `xml:base` in force, if any.
    base: Option<usize>,
    /// Index into `Parser::langs` of the `xml:lang` in force, if any.
    lang: Option<usize>,
    /// Offset in the text just after the start tag.
    content_start: usize,
    /// Length of `Parser::buffer` when the element started: its own text comes after.
    text_start: usize,
    /// What the default namespace in force inside the element means.
    default_ns: Ns,
}

pub(super) fn parse(decoded: Decoded, options: &ParseOptions<'_>) -> Result<Feed, ParseError> {
    let text = decoded.text.as_ref();
    let mut parser = Parser::new(text, options);
    parser.feed.encoding = decoded.encoding.to_string();
    for message in decoded.warnings {
        parser.feed.well_formed = false;
        parser.warn_at(0, message);
    }
    parser.run()?;
    Ok(parser.finish())
}

struct Parser<'a, 'o> {
    text: &'a str,
    reader: Reader<&'a [u8]>,
    options: &'o ParseOptions<'o>,
    feed: Feed,
    /// The item being read.
    item: Option<Item>,
    /// The item has an RSS `summary`: a description beside it is the content.
    rss_summary: bool,
    /// Items beyond the limit, skipped.
    items_skipped: usize,
    /// Open elements beyond the depth limit, counted instead of read.
    too_deep: usize,
    stack: Vec<Frame<'a>>,
    /// In-scope namespace declarations, innermost last.
    namespaces: Vec<Declaration<'a>>,
    /// The attributes of the start tag being read (kept to reuse the allocation).
    attributes: Vec<(&'a [u8], Cow<'a, str>)>,
    bases: Vec<Url>,
    langs: Vec<String>,
    /// The base given by the caller (the feed's URL), when it parses.
    document_base: Option<Url>,
    /// Text of the element being read, since its start tag or last child.
    buffer: String,
    is_atom: bool,
    /// The root element's namespace: elements in it are the format's own, whatever the URI
    /// (feeds written against draft or vendor namespaces).
    root_ns: Option<String>,
    /// Extension prefixes and names seen so far (see `intern`).
    interned: FxHashSet<Arc<str>>,
    /// Namespace prefixes used without a declaration (each reported once).
    undeclared: Vec<String>,
    /// Entities declared in the document's internal DTD subset, name → replacement text.
    declared: Vec<(String, String)>,
    locator: Locator,
    warnings_dropped: usize,
}

impl<'a, 'o> Parser<'a, 'o> {
    fn new(text: &'a str, options: &'o ParseOptions<'o>) -> Self {
        let mut reader = Reader::from_str(text);
        let config = reader.config_mut();
        config.allow_dangling_amp = true;
        config.allow_unmatched_ends = true;
        config.check_end_names = false;
        config.check_comments = false;
        config.expand_empty_elements = false;
        config.trim_text(false);
        let document_base = options.base_url.and_then(|base| Url::parse(base).ok());
        Parser {
            text,
            reader,
            options,
            feed: Feed {
                well_formed: true,
                ..Feed::default()
            },
            item: None,
            rss_summary: false,
            items_skipped: 0,
            too_deep: 0,
            stack: Vec::with_capacity(16),
            namespaces: Vec::new(),
            attributes: Vec::new(),
            bases: Vec::new(),
            langs: Vec::new(),
            document_base,
            buffer: String::new(),
            is_atom: false,
            root_ns: None,
            undeclared: Vec::new(),
            interned: FxHashSet::default(),
            declared: Vec::new(),
            locator: Locator::default(),
            warnings_dropped: 0,
        }
    }

    fn run(&mut self) -> Result<(), ParseError> {
        let mut seen_root = false;
        // The first root that was not a feed's: a feed may still be found inside it (Atom
        // embedded in an XHTML page); if none is, this is the error.
        let mut wrapper: Option<ParseError> = None;
        let mut last_error_at = None;
        let mut errors = 0;
        loop {
            let before = self.position();
            match self.reader.read_event() {
                Ok(Event::Start(start)) => {
                    seen_root = seen_root || self.find_root(&start, before, &mut wrapper);
                    if seen_root {
                        self.start(&start, before, false);
                    }
                }
                Ok(Event::Empty(start)) => {
                    seen_root = seen_root || self.find_root(&start, before, &mut wrapper);
                    if seen_root {
                        self.start(&start, before, true);
                    }
                }
                Ok(Event::End(_)) if !seen_root => {}
                Ok(Event::End(end)) => self.end(end.name().into_inner(), before),
                Ok(Event::Text(text)) => {
                    let raw = text.into_inner();
                    // The reader ends text at every `&`: a bare one starts a text event.
                    if raw.first() == Some(&b'&') {
                        self.ill_formed(before, "bare `&` kept as text".to_string());
                    }
                    if self.wants_text() {
                        let raw = self.text_of(&raw);
                        self.buffer.push_str(&raw);
                    }
                }
                Ok(Event::CData(cdata)) => {
                    if self.wants_text() {
                        let raw = self.text_of(&cdata.into_inner());
                        self.buffer.push_str(&raw);
                    }
                }
                Ok(Event::GeneralRef(reference)) => {
                    let name = self.text_of(&reference);
                    let wanted = self.wants_text();
                    self.reference(&name, before, wanted);
                }
                Ok(Event::Eof) => break,
                Ok(Event::DocType(doctype)) => {
                    let doctype = doctype.into_inner();
                    self.declare_entities(&String::from_utf8_lossy(&doctype));
                }
                Ok(Event::Decl(_) | Event::PI(_) | Event::Comment(_)) => {}
                Err(error) => {
                    let at = self.reader.error_position() as usize;
                    if !seen_root {
                        if let Some(wrapper) = wrapper {
                            return Err(wrapper);
                        }
                        let (line, column) = self.locator.locate(self.text, at);
                        return Err(ParseError::NoRoot {
                            line,
                            column,
                            detail: Some(error.to_string()),
                        });
                    }
                    // An error that does not move the reader on would repeat forever.
                    let stuck = last_error_at == Some(self.position());
                    last_error_at = Some(self.position());
                    errors += 1;
                    if stuck || errors > MAX_ERRORS {
                        self.ill_formed(at, format!("{error}; reading stopped here"));
                        break;
                    }
                    self.ill_formed(at, format!("{error}; skipped"));
                }
            }
        }
        if !seen_root {
            if let Some(wrapper) = wrapper {
                return Err(wrapper);
            }
            let (line, column) = self.locator.locate(self.text, self.text.len());
            return Err(ParseError::NoRoot {
                line,
                column,
                detail: None,
            });
        }
        self.close_open_frames();
        Ok(())
    }

    fn position(&self) -> usize {
        self.reader.buffer_position() as usize
    }

    /// Whether `start` is the feed's root; the first element that is not is kept in `wrapper`.
    fn find_root(
        &mut self,
        start: &BytesStart<'_>,
        at: usize,
        wrapper: &mut Option<ParseError>,
    ) -> bool {
        match self.root(start, at) {
            Ok(()) => {
                if let Some(ParseError::NotAFeed { root, .. }) = wrapper {
                    let message = format!("the feed is inside a <{root}> element");
                    self.ill_formed(at, message);
                }
                true
            }
            Err(error) => {
                wrapper.get_or_insert(error);
                false
            }
        }
    }

    /// Recognises the format from the root element, or refuses the document.
    fn root(&mut self, start: &BytesStart<'_>, at: usize) -> Result<(), ParseError> {
        // The root's own declarations are not on the stack yet: read them here.
        let mut default_ns = None;
        let mut own_ns = None;
        let mut version = None;
        let name = start.name().into_inner();
        let (prefix, local) = split_name(name);
        for attribute in start.attributes().with_checks(false).flatten() {
            let key = attribute.key.into_inner();
            let value = || String::from_utf8_lossy(&attribute.value).into_owned();
            if key == b"version" {
                version = Some(value().trim().to_string());
            } else if key == b"xmlns" {
                default_ns = Some(value());
            } else if prefix.is_some() && key.strip_prefix(b"xmlns:") == prefix {
                own_ns = Some(value());
            }
        }
        // The namespace of the root element itself.
        self.root_ns = if prefix.is_some() {
            own_ns
        } else {
            default_ns.clone()
        };
        self.feed.format = match local {
            b"rss" => match version.as_deref() {
                Some("0.91") => Format::Rss091,
                Some("0.92") => Format::Rss092,
                Some("0.93") => Format::Rss093,
                Some("0.94") => Format::Rss094,
                Some(_) => Format::Rss20,
                None => Format::Rss,
            },
            // RSS 1.0 and 0.90 are told apart by their namespace.
            b"RDF" => match default_ns.as_deref() {
                Some(RSS_10) => Format::Rss10,
                Some(RSS_090) => Format::Rss090,
                _ => Format::Unknown,
            },
            b"feed" => {
                self.is_atom = true;
                if self.root_ns.as_deref() == Some(ATOM_03) || version.as_deref() == Some("0.3") {
                    Format::Atom03
                } else {
                    Format::Atom10
                }
            }
            _ => {
                let (line, column) = self.locator.locate(self.text, at);
                return Err(ParseError::NotAFeed {
                    line,
                    column,
                    root: String::from_utf8_lossy(name).into_owned(),
                });
            }
        };
        Ok(())
    }

    /// `part` (bytes the reader handed out) as text, borrowed from the document.
    fn text_of(&self, part: &[u8]) -> Cow<'a, str> {
        if part.is_empty() {
            return Cow::Borrowed("");
        }
        match within(self.text, part) {
            Some(text) => Cow::Borrowed(text),
            None => String::from_utf8_lossy(part).into_owned().into(),
        }
    }

    /// Reads `<!ENTITY name "text">` declarations from the internal DTD subset. Replacement
    /// texts are kept as written, never expanded further, and bounded in number and size.
    fn declare_entities(&mut self, doctype: &str) {
        const MAX_ENTITIES: usize = 256;
        const MAX_TEXT: usize = 4096;
        for declaration in doctype.split("<!ENTITY").skip(1) {
            let declaration = declaration.trim_start();
            if declaration.starts_with('%') || self.declared.len() >= MAX_ENTITIES {
                continue;
            }
            let name_len = declaration
                .find(|c: char| c.is_whitespace())
                .unwrap_or(declaration.len());
            let (name, rest) = declaration.split_at(name_len);
            let rest = rest.trim_start();
            let Some(quote) = rest.chars().next().filter(|&c| c == '"' || c == '\'') else {
                continue; // SYSTEM or PUBLIC: external entities are never fetched.
            };
            let Some(text) = rest[1..].split(quote).next() else {
                continue;
            };
            if text.len() <= MAX_TEXT && !name.is_empty() {
                self.declared.push((name.to_string(), text.to_string()));
            }
        }
    }

    /// Whether text at this point belongs to something the model keeps.
    fn wants_text(&self) -> bool {
        self.too_deep == 0
            && matches!(
                self.stack.last(),
                Some(Frame {
                    kind: Kind::Field { markup: false, .. } | Kind::Extension { .. },
                    ..
                })
            )
    }

    fn start(&mut self, start: &BytesStart<'a>, at: usize, empty: bool) {
        // Beyond the depth limit elements are only counted, so that a deep document costs no
        // memory; every end tag closes one of them.
        if self.too_deep > 0 || self.stack.len() >= self.options.limits.max_depth {
            if self.too_deep == 0 {
                let limit = self.options.limits.max_depth;
                self.warn_at(
                    at,
                    format!("nesting deeper than {limit} levels; subtree skipped"),
                );
            }
            if !empty {
                self.too_deep += 1;
            }
            return;
        }
        let qualified = start.name().into_inner();
        let name = within(self.text, qualified).map_or(&b""[..], str::as_bytes);
        let content_start = self.position();

        // Children of markup, and everything inside skipped subtrees, cost nothing more.
        if let Some(parent) = self.stack.last_mut() {
            let skip = match &mut parent.kind {
                Kind::Field { markup, field, .. } => {
                    // In text and HTML fields a child element means markup: the field is taken
                    // as written. Elsewhere (a category, a date) children are ignored.
                    if field.holds_markup() {
                        *markup = true;
                    }
                    true
                }
                Kind::Skip => true,
                Kind::Extension { has_children, .. } => {
                    *has_children = true;
                    false
                }
                _ => false,
            };
            if skip {
                if !empty {
                    let frame = self.child_frame(Kind::Skip, name, content_start);
                    self.stack.push(frame);
                }
                return;
            }
        }
        let ns_len = self.namespaces.len();
        let mut base = self.stack.last().and_then(|frame| frame.base);
        let mut lang = self.stack.last().and_then(|frame| frame.lang);
        let mut default_ns = self.stack.last().map_or(Ns::None, |frame| frame.default_ns);

        // Declarations, xml:base and xml:lang; the other attributes are kept for the element.
        let mut attributes = std::mem::take(&mut self.attributes);
        attributes.clear();
        for attribute in start.attributes().with_checks(false) {
            let attribute = match attribute {
                Ok(attribute) => attribute,
                Err(error) => {
                    self.ill_formed(at, format!("bad attribute: {error}"));
                    continue;
                }
            };
            let key = self.text_of(attribute.key.into_inner());
            let key: &'a [u8] = match key {
                Cow::Borrowed(key) => key.as_bytes(),
                Cow::Owned(_) => continue,
            };
            let value = match self.text_of(&attribute.value) {
                Cow::Borrowed(raw) => self.unescape(raw, at),
                Cow::Owned(raw) => Cow::Owned(self.unescape(&raw, at).into_owned()),
            };
            if key == b"xmlns" || key.starts_with(b"xmlns:") {
                let prefix = match key.get(6..) {
                    None => "",
                    Some(prefix) => match self.text_of(prefix) {
                        Cow::Borrowed(prefix) => prefix,
                        Cow::Owned(_) => continue,
                    },
                };
                let uri = value;
                if !self.feed.namespaces.contains_key(prefix) {
                    self.feed
                        .namespaces
                        .insert(prefix.to_string(), uri.to_string());
                }
                // Feeds often repeat a declaration on every element: reuse the last answer.
                let ns = match self.namespaces.last() {
                    Some(last) if last.uri == uri => last.ns,
                    _ => self.kind_of_uri(&uri),
                };
                if prefix.is_empty() {
                    default_ns = ns;
                }
                self.namespaces.push(Declaration { prefix, uri, ns });
            } else if key == b"xml:base" {
                let resolved = match self.base_url(base) {
                    Some(outer) => outer.join(value.trim()).ok(),
                    None => Url::parse(value.trim()).ok(),
                };
                if let Some(url) = resolved {
                    self.bases.push(url);
                    base = Some(self.bases.len() - 1);
                }
            } else if key == b"xml:lang" {
                self.langs.push(value.trim().to_string());
                lang = Some(self.langs.len() - 1);
            } else {
                attributes.push((key, value));
            }
        }

        let (prefix, local) = split_name(name);
        let ns = match prefix {
            None => default_ns,
            Some(b"xml") => Ns::Other,
            Some(declared) => match self.declaration(prefix) {
                Some(declaration) => declaration.ns,
                None => self.undeclared_prefix(declared, at),
            },
        };
        let kind = self.classify(ns, prefix, local, &attributes, at);
        let attribute = |wanted: &[u8]| {
            attributes
                .iter()
                .find(|(key, _)| split_name(key).1 == wanted)
                .map(|(_, value)| value.as_ref())
        };

        // What the start tag itself carries.
        match &kind {
            Kind::Channel if self.feed.language.is_none() => {
                self.feed.language = lang.map(|index| self.langs[index].replace('_', "-"));
            }
            Kind::Item => {
                let about = attribute(b"about").filter(|_| ns == Ns::Rss);
                self.rss_summary = false;
                self.item = Some(Item {
                    id: about.unwrap_or_default().to_string(),
                    ..Item::default()
                });
            }
            Kind::Person(owner) => self.persons(*owner).push(Person::default()),
            Kind::Extension {
                owner,
                prefix,
                path,
                ..
            } => {
                let mut name = String::new();
                for (key, value) in &attributes {
                    name.clear();
                    name.push_str(path);
                    name.push('@');
                    name.push_str(&String::from_utf8_lossy(split_name(key).1));
                    self.extend(*owner, prefix, Cow::Borrowed(&name), value.to_string());
                }
            }
            _ => {}
        }
        self.start_tag_fields(&kind, ns, prefix, local, &attributes, base);
        self.attributes = attributes;

        let frame = Frame {
            ns_len,
            base,
            lang,
            default_ns,
            ..self.child_frame(kind, name, content_start)
        };
        self.stack.push(frame);
        if empty {
            self.end_frame(content_start);
        }
    }

    /// A frame for a child of the innermost element, inheriting its scope.
    fn child_frame(&self, kind: Kind<'a>, name: &'a [u8], content_start: usize) -> Frame<'a> {
        let parent = self.stack.last();
        Frame {
            kind,
            name,
            ns_len: self.namespaces.len(),
            base: parent.and_then(|frame| frame.base),
            lang: parent.and_then(|frame| frame.lang),
            content_start,
            text_start: self.buffer.len(),
            default_ns: parent.map_or(Ns::None, |frame| frame.default_ns),
        }
    }

    /// Decides what an element means from its namespace, name and parent.
    fn classify(
        &mut self,
        ns: Ns,
        prefix: Option<&'a [u8]>,
        local: &'a [u8],
        attributes: &[(&[u8], Cow<'_, str>)],
        at: usize,
    ) -> Kind<'a> {
        let Some(parent) = self.stack.last() else {
            return if self.is_atom {
                Kind::Channel
            } else {
                Kind::Root
            };
        };
        let core = matches!(ns, Ns::None | Ns::Rss);
        let atom = ns == Ns::Atom || (self.is_atom && ns == Ns::None);
        let attribute = |wanted: &[u8]| {
            attributes
                .iter()
                .find(|(key, _)| *key == wanted)
                .map(|(_, value)| value.as_ref())
        };
        let body = |owner, field, body| Kind::Field {
            owner,
            field,
            body,
            markup: false,
        };
        let field = |owner, field| body(owner, field, Body::Text);
        let html = |owner, field| body(owner, field, Body::Html);
        let text_construct = |owner, field| {
            body(
                owner,
                field,
                Body::of_atom(
                    attribute(b"type"),
                    attribute(b"mode"),
                    self.feed.format == Format::Atom10,
                ),
            )
        };
        // An Atom link without `href` but with the URL as its text, as some feeds write it.
        let text_link = attribute(b"href").is_none()
            && attribute(b"rel").is_none_or(|rel| rel.trim() == "alternate");
        let lean = self.options.lean;
        match (&parent.kind, local) {
            (Kind::Root, b"channel") if core => {
                if self.feed.format == Format::Unknown {
                    self.feed.format = self.rdf_format(prefix);
                }
                Kind::Channel
            }
            (Kind::Root | Kind::Channel, b"item") if core => {
                if self.feed.format == Format::Unknown {
                    self.feed.format = self.rdf_format(prefix);
                }
                self.item_or_skip(at)
            }
            (Kind::Channel, b"entry") if atom => self.item_or_skip(at),
            (_, b"link")
                if atom && text_link && matches!(parent.kind, Kind::Channel | Kind::Item) =>
            {
                let owner = if matches!(parent.kind, Kind::Item) {
                    Owner::Item
                } else {
                    Owner::Feed
                };
                field(owner, Field::Link)
            }
            (Kind::Channel, _) => {
                self.channel_child(ns, core, atom, prefix, local, field, html, text_construct)
            }
            (Kind::Item, _) => {
                let kind = self.item_child(
                    ns,
                    core,
                    atom,
                    prefix,
                    local,
                    attributes,
                    field,
                    html,
                    text_construct,
                );
                let lean_keeps = match &kind {
                    Kind::Field { field, .. } => matches!(
                        field,
                        Field::Title
                            | Field::MediaTitle
                            | Field::Link
                            | Field::Guid { .. }
                            | Field::Id
                            | Field::Identifier
                            | Field::Published
                            | Field::Updated { .. }
                    ),
                    Kind::Attributes => local == b"link",
                    _ => false,
                };
                if lean && !lean_keeps {
                    Kind::Skip
                } else {
                    kind
                }
            }
            (Kind::Person(owner), _) => {
                let owner = *owner;
                match local {
                    b"name" => field(owner, Field::PersonName),
                    b"email" => field(owner, Field::PersonEmail),
                    b"uri" | b"url" | b"homepage" => field(owner, Field::PersonUri),
                    _ => Kind::Skip,
                }
            }
            (
                Kind::Extension {
                    owner,
                    prefix,
                    path,
                    ..
                },
                _,
            ) => Kind::Extension {
                owner: *owner,
                prefix,
                path: format!("{path}/{}", String::from_utf8_lossy(local)).into(),
                has_children: false,
            },
            // Anything else under an RDF root (image, textinput) or in unknown places.
            (Kind::Root, _) => self.extension(Owner::Feed, prefix, local),
            _ => Kind::Skip,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn channel_child(
        &self,
        ns: Ns,
        core: bool,
        atom: bool,
        prefix: Option<&'a [u8]>,
        local: &'a [u8],
        field: impl Fn(Owner, Field) -> Kind<'a>,
        html: impl Fn(Owner, Field) -> Kind<'a>,
        text_construct: impl Fn(Owner, Field) -> Kind<'a>,
    ) -> Kind<'a> {
        let feed = Owner::Feed;
        // Vocabularies the model does not map (iTunes, nicolive, …) are extensions: skip the
        // name comparisons below, which could only fail.
        if ns == Ns::Other {
            return self.extension(feed, prefix, local);
        }
        match (ns, local) {
            (_, b"title") if atom => text_construct(feed, Field::Title),
            (_, b"subtitle" | b"tagline") if atom => text_construct(feed, Field::Description),
            (_, b"updated" | b"modified") if atom => field(feed, Field::Updated { strong: true }),
            (_, b"author") if atom => Kind::Person(feed),
            (_, b"title") if core => field(feed, Field::Title),
            (_, b"link") if core => field(feed, Field::Link),
            (_, b"description") if core => html(feed, Field::Description),
            (_, b"language") if core => field(feed, Field::Language),
            (_, b"lastBuildDate") if core => field(feed, Field::Updated { strong: true }),
            (_, b"pubDate") if core => field(feed, Field::Updated { strong: false }),
            (_, b"managingEditor" | b"author") if core => field(feed, Field::AuthorText),
            (Ns::Dc, b"title") => field(feed, Field::Title),
            (Ns::Dc, b"description") => field(feed, Field::Description),
            (Ns::Dc, b"language") => field(feed, Field::Language),
            (Ns::Dc, b"date") => field(feed, Field::Updated { strong: false }),
            (Ns::Dc, b"creator" | b"author") => field(feed, Field::AuthorText),
            (Ns::DcTerms, b"modified") => field(feed, Field::Updated { strong: true }),
            // Atom `link` is read from its attributes at the start tag.
            (_, b"link") if atom => Kind::Attributes,
            _ => self.extension(feed, prefix, local),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn item_child(
        &self,
        ns: Ns,
        core: bool,
        atom: bool,
        prefix: Option<&'a [u8]>,
        local: &'a [u8],
        attributes: &[(&[u8], Cow<'_, str>)],
        field: impl Fn(Owner, Field) -> Kind<'a>,
        html: impl Fn(Owner, Field) -> Kind<'a>,
        text_construct: impl Fn(Owner, Field) -> Kind<'a>,
    ) -> Kind<'a> {
        let item = Owner::Item;
        if ns == Ns::Other {
            return self.extension(item, prefix, local);
        }
        match (ns, local) {
            (_, b"title") if atom => text_construct(item, Field::Title),
            (_, b"id") if atom => field(item, Field::Id),
            (_, b"summary") if atom => text_construct(item, Field::Summary),
            (_, b"content") if atom => text_construct(item, Field::Content),
            (_, b"published" | b"issued") if atom => field(item, Field::Published),
            (_, b"updated" | b"modified") if atom => field(item, Field::Updated { strong: true }),
            (_, b"author") if atom => Kind::Person(item),
            (_, b"category" | b"link") if atom => Kind::Attributes,
            (_, b"title") if core => field(item, Field::Title),
            (_, b"link") if core => field(item, Field::Link),
            (_, b"guid") if core => {
                let permalink = !attributes.iter().any(|(key, value)| {
                    *key == b"isPermaLink" && value.trim().eq_ignore_ascii_case("false")
                });
                field(item, Field::Guid { permalink })
            }
            (_, b"description") if core => html(item, Field::Summary),
            // Not RSS, but written: with a description beside it, the description is the
            // content and this the summary.
            (_, b"summary") if core => html(item, Field::RssSummary),
            (_, b"tags") if core => field(item, Field::Tags),
            // An early RSS extension some feeds still use for the full text.
            (_, b"fullitem") if core => html(item, Field::Content),
            (_, b"pubDate") if core => field(item, Field::Published),
            (_, b"author") if core => field(item, Field::AuthorText),
            (_, b"category") if core => field(item, Field::Category),
            (_, b"enclosure") if core => Kind::Attributes,
            (Ns::Dc, b"title") => field(item, Field::Title),
            (Ns::Dc, b"description") => html(item, Field::Summary),
            (Ns::Dc, b"date") => field(item, Field::Published),
            (Ns::Dc, b"creator" | b"author" | b"contributor") => field(item, Field::AuthorText),
            (Ns::Dc, b"subject") => field(item, Field::Category),
            (Ns::Dc, b"identifier") => field(item, Field::Identifier),
            (Ns::DcTerms, b"modified") => field(item, Field::Updated { strong: true }),
            (Ns::DcTerms, b"issued" | b"created") => field(item, Field::Published),
            (Ns::Content, b"encoded") => html(item, Field::Content),
            (Ns::Xhtml, b"body") | (Ns::None, b"body") => Kind::Field {
                owner: item,
                field: Field::Content,
                body: Body::Xhtml { wrapped: false },
                markup: true,
            },
            (Ns::Media, b"title") => field(item, Field::MediaTitle),
            (Ns::Media, b"description") => field(item, Field::MediaDescription),
            _ => self.extension(item, prefix, local),
        }
    }

    fn extension(&self, owner: Owner, prefix: Option<&'a [u8]>, local: &'a [u8]) -> Kind<'a> {
        Kind::Extension {
            owner,
            prefix: match prefix.map(|p| self.text_of(p)) {
                Some(Cow::Borrowed(prefix)) => prefix,
                _ => "",
            },
            path: self.text_of(local),
            has_children: false,
        }
    }

    fn rdf_format(&self, prefix: Option<&[u8]>) -> Format {
        match self.namespace_uri(prefix) {
            Some(RSS_090) => Format::Rss090,
            Some(RSS_10) => Format::Rss10,
            _ if self.feed.format == Format::Unknown => Format::Unknown,
            _ => self.feed.format,
        }
    }

    fn item_or_skip(&mut self, at: usize) -> Kind<'a> {
        if self.feed.items.len() >= self.options.limits.max_items {
            if self.items_skipped == 0 {
                self.warn_at(
                    at,
                    format!(
                        "more than {} items; the rest are skipped",
                        self.options.limits.max_items
                    ),
                );
            }
            self.items_skipped += 1;
            return Kind::Skip;
        }
        Kind::Item
    }

    /// Fields filled from the start tag's attributes: Atom links and categories, enclosures,
    /// media content.
    fn start_tag_fields(
        &mut self,
        kind: &Kind<'_>,
        ns: Ns,
        prefix: Option<&[u8]>,
        local: &[u8],
        attributes: &[(&[u8], Cow<'_, str>)],
        base: Option<usize>,
    ) {
        let Kind::Attributes = kind else { return };
        let Some(parent) = self.stack.last() else {
            return;
        };
        let owner = match parent.kind {
            Kind::Channel => Owner::Feed,
            Kind::Item => Owner::Item,
            _ => return,
        };
        let attribute = |wanted: &[u8]| {
            attributes
                .iter()
                .find(|(key, _)| split_name(key).1 == wanted)
                .map(|(_, value)| value.trim())
        };
        let atom = ns == Ns::Atom || (self.is_atom && ns == Ns::None);
        match local {
            b"link" if atom || ns == Ns::Atom => {
                let Some(href) = attribute(b"href") else {
                    return;
                };
                let href = self.resolve(href, base);
                let rel = attribute(b"rel").unwrap_or("alternate");
                match (owner, rel) {
                    (Owner::Feed, "alternate") => {
                        if self.feed.link.is_none() {
                            self.feed.link = Some(href);
                        }
                    }
                    (Owner::Item, "alternate") => {
                        if let Some(item) = self.item.as_mut() {
                            if item.link.is_none() {
                                item.link = Some(href);
                            }
                        }
                    }
                    (Owner::Item, "enclosure") => {
                        let enclosure = Enclosure {
                            url: href,
                            length: attribute(b"length").and_then(|l| l.parse().ok()),
                            mime_type: attribute(b"type").map(str::to_string),
                        };
                        if let Some(item) = self.item.as_mut() {
                            item.enclosures.push(enclosure);
                        }
                    }
                    (_, rel) => {
                        let prefix = String::from_utf8_lossy(prefix.unwrap_or_default());
                        self.extend(owner, &prefix, format!("link@{rel}").into(), href);
                    }
                }
            }
            b"category" if atom && owner == Owner::Item => {
                if let (Some(term), Some(item)) = (attribute(b"term"), self.item.as_mut()) {
                    item.categories.push(term.to_string());
                }
            }
            b"enclosure" if owner == Owner::Item => {
                if let Some(url) = attribute(b"url") {
                    let enclosure = Enclosure {
                        url: self.resolve(url, base),
                        length: attribute(b"length").and_then(|l| l.parse().ok()),
                        mime_type: attribute(b"type").map(str::to_string),
                    };
                    if let Some(item) = self.item.as_mut() {
                        item.enclosures.push(enclosure);
                    }
                }
            }
            _ => {}
        }
    }

    fn end(&mut self, name: &[u8], at: usize) {
        if self.too_deep > 0 {
            self.too_deep -= 1;
            return;
        }
        // The innermost open element of that name; an end tag matching none is stray.
        let Some(depth) = self.stack.iter().rposition(|frame| frame.name == name) else {
            self.ill_formed(
                at,
                format!(
                    "end tag </{}> matches no open element; ignored",
                    String::from_utf8_lossy(name)
                ),
            );
            return;
        };
        while self.stack.len() > depth + 1 {
            let inner = self
                .stack
                .last()
                .map(|frame| frame.name)
                .unwrap_or_default();
            self.ill_formed(
                at,
                format!(
                    "<{}> not closed before </{}>; closed there",
                    String::from_utf8_lossy(inner),
                    String::from_utf8_lossy(name)
                ),
            );
            self.end_frame(at);
        }
        self.end_frame(at);
    }

    /// Closes the innermost frame, its content ending at `content_end`.
    fn end_frame(&mut self, content_end: usize) {
        let Some(frame) = self.stack.pop() else {
            return;
        };
        self.namespaces.truncate(frame.ns_len);
        match frame.kind {
            Kind::Field {
                owner,
                field,
                body,
                markup,
            } => {
                let text = self.buffer.split_off(frame.text_start);
                let mut value = if markup {
                    let raw = self
                        .text
                        .get(frame.content_start..content_end)
                        .unwrap_or_default()
                        .trim();
                    match body {
                        Body::Xhtml { wrapped: true } => normalize_markup(strip_div(raw)),
                        // HTML given as the text of an XHTML `div`: the div's text is the HTML.
                        Body::Html if xhtml_div(raw) => {
                            let inner = strip_div(raw);
                            self.unescape(inner, frame.content_start).into_owned()
                        }
                        _ => normalize_markup(raw),
                    }
                } else if let Body::Base64 { .. } = body {
                    match base64_text(&text) {
                        Some(decoded) => decoded,
                        None => {
                            let message =
                                "content is not valid base64; kept as written".to_string();
                            self.warn_at(frame.content_start, message);
                            text
                        }
                    }
                } else if body == Body::Html {
                    without_c1_references(text)
                } else {
                    text
                };
                if markup || body.is_markup() {
                    if let Some(base) = self.base_url(frame.base).filter(|_| value.contains('<')) {
                        if let Cow::Owned(resolved) = html::resolve_links(&value, base) {
                            value = resolved;
                        }
                    }
                }
                self.set_field(owner, field, value, frame.base, frame.content_start);
            }
            Kind::Extension {
                owner,
                prefix,
                path,
                has_children,
            } => {
                let text = self.buffer.split_off(frame.text_start);
                if !has_children {
                    self.extend(owner, prefix, path, into_trimmed(text));
                }
            }
            Kind::Item => {
                if let Some(mut item) = self.item.take() {
                    if item.id.is_empty() {
                        item.id = derived_id(item.link.as_deref(), item.title.as_deref());
                    }
                    self.feed.items.push(item);
                }
            }
            Kind::Channel | Kind::Root | Kind::Person(_) | Kind::Attributes | Kind::Skip => {
                self.buffer.truncate(frame.text_start);
            }
        }
    }

    fn close_open_frames(&mut self) {
        if let Some(frame) = self.stack.last() {
            let name = String::from_utf8_lossy(frame.name).into_owned();
            let at = self.text.len();
            self.feed.cut_off = true;
            self.ill_formed(
                at,
                format!("document ends inside <{name}> (cut off?); what was read is kept"),
            );
        }
        while !self.stack.is_empty() {
            self.end_frame(self.text.len());
        }
    }

    fn set_field(
        &mut self,
        owner: Owner,
        field: Field,
        value: String,
        base: Option<usize>,
        at: usize,
    ) {
        let text_field = matches!(
            field,
            Field::Title | Field::Description | Field::Summary | Field::RssSummary | Field::Content
        );
        let value = into_trimmed(if text_field {
            without_c1_controls(value)
        } else {
            value
        });
        let trimmed = value.as_str();
        if trimmed.is_empty() && !text_field {
            return;
        }
        match field {
            Field::Updated { .. } | Field::Published => {
                let Some(parsed) = date::parse(trimmed) else {
                    self.warn_at(
                        at,
                        format!("unreadable date `{}`; left empty", truncate(trimmed, 60)),
                    );
                    return;
                };
                let formatted = date::to_rfc3339(parsed);
                match (owner, field) {
                    (Owner::Feed, Field::Updated { strong }) => {
                        if strong || self.feed.updated.is_none() {
                            self.feed.updated = Some(formatted);
                        }
                    }
                    (Owner::Feed, _) => {
                        self.feed.updated.get_or_insert(formatted);
                    }
                    (Owner::Item, Field::Published) => {
                        if let Some(item) = self.item.as_mut() {
                            item.published = Some(formatted);
                        }
                    }
                    (Owner::Item, _) => {
                        if let Some(item) = self.item.as_mut() {
                            item.updated = Some(formatted);
                        }
                    }
                }
                return;
            }
            Field::PersonName | Field::PersonEmail | Field::PersonUri => {
                let value = if field == Field::PersonUri {
                    self.resolve(trimmed, base)
                } else {
                    trimmed.to_string()
                };
                if let Some(person) = self.persons(owner).last_mut() {
                    match field {
                        Field::PersonName => person.name = Some(value),
                        Field::PersonEmail => person.email = Some(value),
                        _ => person.uri = Some(value),
                    }
                }
                return;
            }
            Field::AuthorText => {
                let person = person_from_text(trimmed);
                self.persons(owner).push(person);
                return;
            }
            _ => {}
        }
        let link = match field {
            Field::Link => Some(self.resolve(trimmed, base)),
            // A permalink guid is the link when there is no other.
            Field::Guid { permalink: true }
                if trimmed.starts_with("http://") || trimmed.starts_with("https://") =>
            {
                Some(self.resolve(trimmed, base))
            }
            // An Atom id must be an absolute IRI; a relative one is read against the base.
            Field::Id if Url::parse(trimmed).is_err() => Some(self.resolve(trimmed, base)),
            _ => None,
        };
        if owner == Owner::Feed {
            let feed = &mut self.feed;
            match field {
                Field::Title => set_once(&mut feed.title, value),
                Field::Link if feed.link.is_none() => feed.link = link,
                Field::Description => set_once(&mut feed.description, value),
                Field::Language => set_once(&mut feed.language, value.replace('_', "-")),
                _ => {}
            }
            return;
        }
        let Some(item) = self.item.as_mut() else {
            return;
        };
        match field {
            Field::Title | Field::MediaTitle => set_once(&mut item.title, value),
            Field::Link if item.link.is_none() => item.link = link,
            Field::Id => item.id = link.unwrap_or(value),
            Field::Guid { .. } => {
                item.id = value;
                if item.link.is_none() {
                    item.link = link;
                }
            }
            Field::Identifier if item.id.is_empty() => item.id = value,
            Field::Summary if self.rss_summary && item.summary.is_some() => {
                // An RSS `summary` came first: this description is the content.
                set_once(&mut item.content, value);
            }
            Field::Summary | Field::MediaDescription => set_once(&mut item.summary, value),
            Field::Content => set_once(&mut item.content, value),
            Field::Category => item.categories.push(value),
            Field::Tags => item.categories.extend(
                trimmed
                    .split(',')
                    .map(str::trim)
                    .filter(|tag| !tag.is_empty())
                    .map(str::to_string),
            ),
            Field::RssSummary => {
                self.rss_summary = true;
                if let Some(description) = item.summary.replace(value) {
                    item.content.get_or_insert(description);
                }
            }
            _ => {}
        }
    }

    fn persons(&mut self, owner: Owner) -> &mut Vec<Person> {
        match (owner, self.item.as_mut()) {
            (Owner::Item, Some(item)) => &mut item.authors,
            _ => &mut self.feed.authors,
        }
    }

    /// Adds a value to `extensions`.
    fn extend(&mut self, owner: Owner, prefix: &str, name: Cow<'_, str>, value: String) {
        let prefix = self.intern(prefix);
        let name = self.intern(&name);
        let extensions = match (owner, self.item.as_mut()) {
            (Owner::Item, Some(item)) => &mut item.extensions,
            _ => &mut self.feed.extensions,
        };
        extensions.push(&prefix, &name, value);
    }

    /// One shared copy of each extension prefix and name per document.
    fn intern(&mut self, text: &str) -> Arc<str> {
        if let Some(interned) = self.interned.get(text) {
            return Arc::clone(interned);
        }
        let interned: Arc<str> = Arc::from(text);
        self.interned.insert(Arc::clone(&interned));
        interned
    }

    fn declaration(&self, prefix: Option<&[u8]>) -> Option<&Declaration<'a>> {
        let prefix = prefix.unwrap_or(b"");
        self.namespaces
            .iter()
            .rev()
            .find(|declaration| declaration.prefix.as_bytes() == prefix)
    }

    fn namespace_uri(&self, prefix: Option<&[u8]>) -> Option<&str> {
        if prefix == Some(b"xml") {
            return Some(XML);
        }
        self.declaration(prefix)
            .map(|declaration| declaration.uri.as_ref())
    }

    /// What a namespace URI means here: elements in the root's own namespace are the
    /// format's, whatever the URI.
    fn kind_of_uri(&self, uri: &str) -> Ns {
        match Ns::of(uri) {
            Ns::Other if self.root_ns.as_deref() == Some(uri) => {
                if self.is_atom {
                    Ns::Atom
                } else {
                    Ns::Rss
                }
            }
            ns => ns,
        }
    }

    /// A prefix used without a declaration is ill-formed (reported once per prefix); the
    /// common ones are still known by their usual names.
    fn undeclared_prefix(&mut self, prefix: &[u8], at: usize) -> Ns {
        let name = String::from_utf8_lossy(prefix).into_owned();
        if !self.undeclared.contains(&name) {
            let message = format!("namespace prefix `{name}` is not declared");
            self.ill_formed(at, message);
            self.undeclared.push(name);
        }
        match prefix {
            b"dc" => Ns::Dc,
            b"dcterms" => Ns::DcTerms,
            b"content" => Ns::Content,
            b"media" => Ns::Media,
            b"atom" => Ns::Atom,
            b"rdf" => Ns::Rdf,
            _ => Ns::Other,
        }
    }

    fn base_url(&self, base: Option<usize>) -> Option<&Url> {
        base.map(|index| &self.bases[index])
            .or(self.document_base.as_ref())
    }

    /// Resolves a link against the `xml:base` in force and the document's URL.
    fn resolve(&self, link: &str, base: Option<usize>) -> String {
        let link = link.trim();
        match self.base_url(base) {
            Some(base) => base
                .join(link)
                .map(String::from)
                .unwrap_or_else(|_| link.to_string()),
            None => link.to_string(),
        }
    }

    /// A reference in text: resolved into the buffer when the text is `wanted`, and checked
    /// (for the warnings) either way.
    fn reference(&mut self, name: &str, at: usize, wanted: bool) {
        let mut buffer = std::mem::take(&mut self.buffer);
        if wanted {
            self.resolve_reference(name, at, &mut buffer);
        } else if !name.starts_with('#') && quick_xml::escape::resolve_xml_entity(name).is_none() {
            self.resolve_reference(name, at, &mut String::new());
        }
        self.buffer = buffer;
    }

    /// Resolves `&name;` onto `out`: character references, XML's five, the document's own
    /// declarations, HTML's named entities (with a warning: they are not XML), and anything
    /// else kept as written.
    fn resolve_reference(&mut self, name: &str, at: usize, out: &mut String) {
        if let Some((_, text)) = self.declared.iter().find(|(declared, _)| declared == name) {
            out.push_str(text);
            return;
        }
        match resolve_entity(name) {
            Resolved::Char(c) => out.push(c),
            Resolved::Text(text) => out.push_str(text),
            Resolved::Html(text) => {
                self.ill_formed(at, format!("HTML entity `&{name};` is not XML; resolved"));
                out.push_str(text);
            }
            Resolved::Unknown => {
                self.ill_formed(at, format!("unknown entity `&{name};` kept as written"));
                out.push('&');
                out.push_str(name);
                out.push(';');
            }
        }
    }

    /// Unescapes an attribute value with the same rules as text.
    fn unescape<'v>(&mut self, raw: &'v str, at: usize) -> Cow<'v, str> {
        // Attribute values are short: a plain loop beats a call to memchr.
        if !raw.bytes().any(|b| b == b'&') {
            return Cow::Borrowed(raw);
        }
        let mut out = String::with_capacity(raw.len());
        let mut rest = raw;
        while let Some(amp) = rest.find('&') {
            out.push_str(&rest[..amp]);
            let after = &rest[amp + 1..];
            let name_len = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '#'))
                .unwrap_or(after.len());
            if after[name_len..].starts_with(';') && name_len > 0 {
                self.resolve_reference(&after[..name_len], at, &mut out);
                rest = &after[name_len + 1..];
            } else {
                self.ill_formed(at, "bare `&` in an attribute kept as text".to_string());
                out.push('&');
                rest = after;
            }
        }
        out.push_str(rest);
        Cow::Owned(out)
    }

    /// A well-formedness problem: recovered, but the document is not what it should be.
    fn ill_formed(&mut self, at: usize, message: String) {
        self.feed.well_formed = false;
        self.warn_at(at, message);
    }

    fn warn_at(&mut self, at: usize, message: String) {
        if self.feed.warnings.len() >= MAX_WARNINGS {
            self.warnings_dropped += 1;
            return;
        }
        let (line, column) = self.locator.locate(self.text, at);
        self.feed.warnings.push(Warning {
            line,
            column,
            message,
        });
    }

    fn finish(mut self) -> Feed {
        if self.items_skipped > 0 {
            let at = self.text.len();
            self.warn_at(
                at,
                format!("{} items beyond the limit were skipped", self.items_skipped),
            );
        }
        if self.warnings_dropped > 0 {
            let (line, column) = self.locator.locate(self.text, self.text.len());
            self.feed.warnings.push(Warning {
                line,
                column,
                message: format!("{} more warnings not listed", self.warnings_dropped),
            });
        }
        self.feed
    }
}

/// What an entity reference stands for.
enum Resolved {
    Char(char),
    Text(&'static str),
    Html(&'static str),
    Unknown,
}

fn resolve_entity(name: &str) -> Resolved {
    if let Some(number) = name.strip_prefix('#') {
        let code = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok(),
            None => number.parse().ok(),
        };
        // Windows-1252 code points written as numbers, as feeds often do.
        let code = code.map(|code| match code {
            0x80..=0x9f => windows_1252(code),
            code => code,
        });
        return match code.and_then(char::from_u32).filter(|&c| c != '\0') {
            Some(c) => Resolved::Char(c),
            None => Resolved::Unknown,
        };
    }
    if let Some(text) = quick_xml::escape::resolve_xml_entity(name) {
        return Resolved::Text(text);
    }
    // html-escape's table is sorted by name (quick-xml's own HTML table has wrong values).
    let table = &html_escape::NAMED_ENTITIES;
    match table.binary_search_by(|(entry, _)| (*entry).cmp(name.as_bytes())) {
        Ok(index) => Resolved::Html(table[index].1),
        Err(_) => Resolved::Unknown,
    }
}

/// C1 control characters (U+0080–U+009F) never mean themselves in a feed: they are
/// Windows-1252 punctuation (’ “ ” – …) that went through a Latin-1 decoder somewhere. They
/// are replaced by what they were, as HTML does for the same code points in references.
fn without_c1_controls(text: String) -> String {
    // In UTF-8 they are 0xC2 followed by 0x80–0x9F.
    let bytes = text.as_bytes();
    let has_c1 =
        memchr::memchr_iter(0xC2, bytes).any(|at| matches!(bytes.get(at + 1), Some(0x80..=0x9f)));
    if !has_c1 {
        return text;
    }
    text.chars()
        .map(|c| match u32::from(c) {
            code @ 0x80..=0x9f => char::from_u32(windows_1252(code)).unwrap_or(c),
            _ => c,
        })
        .collect()
}

/// Inside HTML, a numeric reference to a C1 control (`&#146;`) means the Windows-1252
/// character, as HTML parsers read it; it is rewritten as a reference to that character
/// (`&#x2019;`) so that readers of the HTML that are not browsers get it right too.
fn without_c1_references(html: String) -> String {
    let c1_at = |at: usize| c1_reference(&html[at + 2..]).map(|(code, len)| (at, code, len));
    let mut found = memchr::memmem::find_iter(html.as_bytes(), b"&#").filter_map(c1_at);
    let Some(first) = found.next() else {
        return html;
    };
    let mut out = String::with_capacity(html.len());
    let mut copied = 0;
    for (at, code, len) in std::iter::once(first).chain(found) {
        out.push_str(&html[copied..at]);
        out.push_str(&format!("&#x{:x};", windows_1252(code)));
        copied = at + 2 + len;
    }
    out.push_str(&html[copied..]);
    out
}

/// The code of a numeric reference in the C1 range at the start of `text` (just after `&#`),
/// and the length of what follows the `&#`, `;` included.
fn c1_reference(text: &str) -> Option<(u32, usize)> {
    // The longest C1 reference is `x9f;` or `159;`: look no further.
    let end = text.bytes().take(5).position(|b| b == b';')?;
    let digits = &text[..end];
    let code = match digits.strip_prefix(['x', 'X']) {
        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
        None => digits.parse().ok()?,
    };
    (0x80..=0x9f).contains(&code).then_some((code, end + 1))
}

fn windows_1252(code: u32) -> u32 {
    let byte = [code as u8];
    let (text, _) = encoding_rs::WINDOWS_1252.decode_without_bom_handling(&byte);
    text.chars().next().map_or(code, u32::from)
}

/// `part`, a slice the reader handed out, as the piece of `text` it is, if it is one: the
/// reader reads from the text, so every event's bytes are a slice of it, and their offset gives
/// them the text's lifetime without copying or validating them again.
fn within<'a>(text: &'a str, part: &[u8]) -> Option<&'a str> {
    let offset = (part.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
    text.get(offset..offset.checked_add(part.len())?)
}

/// `prefix:local` → (prefix, local).
fn split_name(name: &[u8]) -> (Option<&[u8]>, &[u8]) {
    match name.iter().position(|&b| b == b':') {
        Some(colon) => (Some(&name[..colon]), &name[colon + 1..]),
        None => (None, name),
    }
}

/// Whether `raw` opens with a `div` declaring the XHTML namespace.
fn xhtml_div(raw: &str) -> bool {
    let first_tag = raw.split_inclusive('>').next().unwrap_or_default();
    first_tag.contains(XHTML) && strip_div(raw).len() < raw.len()
}

/// The markup inside an Atom XHTML `div` wrapper.
fn strip_div(raw: &str) -> &str {
    let Some(rest) = raw.strip_prefix('<') else {
        return raw;
    };
    let name_end = rest
        .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
        .unwrap_or(rest.len());
    let name = &rest[..name_end];
    if split_name(name.as_bytes()).1 != b"div" {
        return raw;
    }
    let Some(open_end) = rest.find('>') else {
        return raw;
    };
    let closing = format!("</{name}>");
    match rest[open_end + 1..]
        .trim_end()
        .strip_suffix(closing.as_str())
    {
        Some(inner) => inner.trim(),
        None => raw,
    }
}

/// Inline markup as HTML wants it: without the XHTML namespace declaration (in a feed it only
/// says that the markup is XHTML), and with numeric character references written as the
/// characters they stand for (or as `&amp;`-style references where the character is markup).
fn normalize_markup(raw: &str) -> String {
    let markup = if raw.contains("xmlns") {
        raw.replace(" xmlns=\"http://www.w3.org/1999/xhtml\"", "")
            .replace(" xmlns='http://www.w3.org/1999/xhtml'", "")
    } else {
        raw.to_string()
    };
    if !markup.contains("&#") {
        return markup;
    }
    let mut out = String::with_capacity(markup.len());
    let mut rest = markup.as_str();
    while let Some(at) = rest.find("&#") {
        out.push_str(&rest[..at]);
        let reference = &rest[at + 1..];
        let resolved = reference.find(';').and_then(|end| {
            let Resolved::Char(c) = resolve_entity(&reference[..end]) else {
                return None;
            };
            Some((c, end))
        });
        match resolved {
            Some((c, end)) => {
                match c {
                    '&' => out.push_str("&amp;"),
                    '<' => out.push_str("&lt;"),
                    '>' => out.push_str("&gt;"),
                    '"' => out.push_str("&quot;"),
                    '\'' => out.push_str("&#39;"),
                    c => out.push(c),
                }
                rest = &reference[end + 1..];
            }
            None => {
                out.push('&');
                rest = reference;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Base64 text (whitespace allowed) decoded to text; invalid UTF-8 is replaced.
fn base64_text(text: &str) -> Option<String> {
    use base64::Engine as _;
    let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(compact)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// RSS authors: `me@example.com (Me)`, `Me <me@example.com>`, `Me (me@example.com)`, or either
/// part alone. The e-mail address is the word with an `@` and a dot after it; the name is what
/// is left, without its brackets.
fn person_from_text(text: &str) -> Person {
    let text = text.trim();
    let email = text
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | '<' | '>'))
        .map(|word| word.trim_start_matches("mailto:"))
        .find(|word| {
            word.split_once('@')
                .is_some_and(|(user, host)| !user.is_empty() && host.contains('.'))
        });
    let name = match email {
        Some(email) => text
            .replacen(email, "", 1)
            .replace("mailto:", "")
            .replace("()", "")
            .replace("<>", ""),
        None => text.to_string(),
    };
    let name = name.trim();
    let name = name
        .strip_prefix('(')
        .and_then(|inner| inner.strip_suffix(')'))
        .unwrap_or(name)
        .trim();
    Person {
        name: (!name.is_empty()).then(|| name.to_string()),
        email: email.map(str::to_string),
        uri: None,
    }
}

fn set_once(slot: &mut Option<String>, value: String) {
    if slot.is_none() {
        *slot = Some(value);
    }
}

/// `value` without surrounding whitespace, reusing its allocation when it has none.
fn into_trimmed(value: String) -> String {
    if value.trim().len() == value.len() {
        value
    } else {
        value.trim().to_string()
    }
}

fn truncate(text: &str, max_chars: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => Cow::Owned(format!("{}…", &text[..cut])),
        None => Cow::Borrowed(text),
    }
}

/// Byte offset → (line, column), both from 1, columns in characters. Warnings come in
/// document order, so it walks forward from the last answer.
#[derive(Debug, Default)]
struct Locator {
    offset: usize,
    line: usize,
    column: usize,
}

impl Locator {
    fn locate(&mut self, text: &str, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        if offset < self.offset || self.line == 0 {
            *self = Locator {
                offset: 0,
                line: 1,
                column: 1,
            };
        }
        for c in text[self.offset..offset].chars() {
            if c == '\n' {
                self.line += 1;
                self.column = 1;
            } else {
                self.column += 1;
            }
        }
        self.offset = offset;
        (self.line, self.column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_entities_are_looked_up_in_a_sorted_table() {
        let table = &html_escape::NAMED_ENTITIES;
        assert!(table.windows(2).all(|pair| pair[0].0 < pair[1].0));
        for (name, text) in [
            ("alpha", "α"),
            ("nbsp", "\u{a0}"),
            ("hellip", "…"),
            ("fnof", "ƒ"),
        ] {
            assert!(
                matches!(resolve_entity(name), Resolved::Html(t) if t == text),
                "{name}"
            );
        }
        assert!(matches!(resolve_entity("#8217"), Resolved::Char('’')));
        assert!(
            matches!(resolve_entity("#x92"), Resolved::Char('’')),
            "cp1252"
        );
        assert!(matches!(resolve_entity("nosuch"), Resolved::Unknown));
        assert!(matches!(resolve_entity("#0"), Resolved::Unknown));
    }
}
