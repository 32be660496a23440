//! The format-neutral feed model, shared by RSS 0.9x/2.0, RSS 1.0 (RDF) and Atom 0.3/1.0.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Serialize, Serializer};

/// A parsed feed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Feed {
    /// Which format and version the document is.
    pub format: Format,
    /// The encoding the bytes were decoded from (an encoding_rs name, e.g. `Shift_JIS`).
    pub encoding: String,
    /// RSS `title`, Atom `title`.
    pub title: Option<String>,
    /// RSS `link`, Atom `link` (`rel="alternate"` or no `rel`), resolved to an absolute URL when
    /// a base is known.
    pub link: Option<String>,
    /// RSS `description`, Atom `subtitle` (0.3: `tagline`).
    pub description: Option<String>,
    /// RSS `language`, `dc:language`, or `xml:lang` on the root or channel.
    pub language: Option<String>,
    /// RSS `lastBuildDate`/`pubDate`, Atom `updated` (0.3: `modified`), `dc:date`; RFC 3339 UTC.
    pub updated: Option<String>,
    /// RSS `managingEditor`, `dc:creator`, Atom `author`.
    pub authors: Vec<Person>,
    /// Every element the model has no field for, by the prefix the document gave it (`""` for
    /// none, e.g. RSS `ttl` or Atom `id` under a default namespace), then by name. Names are
    /// local names; an element inside another unmapped one is named by its path
    /// (`group/content`); attributes are kept as `name@attribute`. Atom links other than
    /// `alternate` and `enclosure` are kept as `link@REL` → the resolved `href`.
    pub extensions: Extensions,
    /// The namespaces the document declares, prefix → URI (the default namespace as `""`).
    pub namespaces: BTreeMap<String, String>,
    /// RSS `item`, Atom `entry`, in document order.
    pub items: Vec<Item>,
    /// Whether the document was well-formed XML in the encoding it declared. When it was not,
    /// `warnings` says what was recovered (feedparser calls this `bozo`). A warning about a
    /// field's value, such as an unreadable date, does not make a document ill-formed.
    pub well_formed: bool,
    /// Whether the document ended inside an open element: a body cut short in transit, or a
    /// server that stopped writing. What was read is kept (and `well_formed` is false), but
    /// whatever followed the cut is missing, and the last value read may be cut too.
    pub cut_off: bool,
    /// What was wrong with the document and how it was recovered.
    pub warnings: Vec<Warning>,
}

/// One entry of a feed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Item {
    /// RSS `guid`, RSS 1.0 `rdf:about`, Atom `id`; when absent, a stable id derived from link
    /// and title (see [`derived_id`](super::derived_id)).
    pub id: String,
    /// RSS/Atom `title`.
    pub title: Option<String>,
    /// RSS `link` (else a permalink `guid`), Atom `link` (`rel="alternate"` or no `rel`).
    pub link: Option<String>,
    /// RSS `pubDate`, `dc:date`, Atom `published` (0.3: `issued`); RFC 3339 UTC.
    pub published: Option<String>,
    /// Atom `updated` (0.3: `modified`), `dcterms:modified`; RFC 3339 UTC.
    pub updated: Option<String>,
    /// RSS `description`, Atom `summary`.
    pub summary: Option<String>,
    /// `content:encoded`, Atom `content`, `xhtml:body`.
    pub content: Option<String>,
    /// RSS `author`, `dc:creator`, Atom `author`.
    pub authors: Vec<Person>,
    /// RSS `category`, `dc:subject`, Atom `category` (`term`).
    pub categories: Vec<String>,
    /// RSS `enclosure`, Atom `link rel="enclosure"`.
    pub enclosures: Vec<Enclosure>,
    /// As [`Feed::extensions`], for this item.
    pub extensions: Extensions,
}

impl Item {
    /// The item's date in milliseconds since the Unix epoch: `published`, else `updated`;
    /// `None` when it has neither (the parser has already written both as RFC 3339).
    pub fn date_millis(&self) -> Option<i64> {
        let date = self.published.as_deref().or(self.updated.as_deref())?;
        chrono::DateTime::parse_from_rfc3339(date)
            .ok()
            .map(|date| date.timestamp_millis())
    }
}

/// An author or contributor.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Person {
    /// The name, when given.
    pub name: Option<String>,
    /// The e-mail address, when given.
    pub email: Option<String>,
    /// A web page, when given.
    pub uri: Option<String>,
}

/// A file attached to an item.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Enclosure {
    /// Where the file is.
    pub url: String,
    /// Its size in bytes, when given and numeric.
    pub length: Option<u64>,
    /// Its media type, when given.
    #[serde(rename = "type")]
    pub mime_type: Option<String>,
}

/// Something wrong in the document, and where (both from 1, in the decoded text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// Line of the problem.
    pub line: usize,
    /// Column of the problem, in characters.
    pub column: usize,
    /// What was wrong and what was done about it.
    pub message: String,
}

/// The elements the model has no field for, in the order they first appear. Each is named by
/// the prefix the document gave it and its name, and holds one value per occurrence.
///
/// Serialized as prefix → name → value (or array of values). Prefixes and names are shared
/// (`Arc<str>`) between the items of a feed: a listing repeats the same few on every item.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extensions(Vec<Extension>);

/// One kind of extension element and its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extension {
    /// The namespace prefix the document used (`""` for none).
    pub prefix: Arc<str>,
    /// The local name, `name@attribute` for an attribute, `outer/inner` when nested.
    pub name: Arc<str>,
    /// One value per occurrence, in document order.
    pub values: Values,
}

impl Extensions {
    /// The values of `prefix:name`, if the element occurred.
    pub fn get(&self, prefix: &str, name: &str) -> Option<&Values> {
        self.0
            .iter()
            .find(|extension| &*extension.prefix == prefix && &*extension.name == name)
            .map(|extension| &extension.values)
    }

    /// The first value of `prefix:name`, if the element occurred.
    pub fn first(&self, prefix: &str, name: &str) -> Option<&str> {
        self.get(prefix, name).and_then(Values::first)
    }

    /// Every extension, in the order they first appear.
    pub fn iter(&self) -> impl Iterator<Item = &Extension> {
        self.0.iter()
    }

    /// How many different elements there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds a value of `prefix:name`. The parser hands out one `Arc` per name, so a pointer
    /// comparison finds the entry.
    pub(crate) fn push(&mut self, prefix: &Arc<str>, name: &Arc<str>, value: String) {
        let same = |extension: &&mut Extension| {
            Arc::ptr_eq(&extension.name, name) && Arc::ptr_eq(&extension.prefix, prefix)
        };
        match self.0.iter_mut().find(same) {
            Some(extension) => extension.values.push(value),
            None => self.0.push(Extension {
                prefix: Arc::clone(prefix),
                name: Arc::clone(name),
                values: Values(Repr::One(value)),
            }),
        }
    }
}

impl Serialize for Extensions {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut prefixes: Vec<&Arc<str>> = Vec::new();
        for extension in &self.0 {
            if !prefixes.contains(&&extension.prefix) {
                prefixes.push(&extension.prefix);
            }
        }
        let mut map = serializer.serialize_map(Some(prefixes.len()))?;
        for prefix in prefixes {
            map.serialize_entry(
                &**prefix,
                &Names {
                    extensions: self,
                    prefix,
                },
            )?;
        }
        map.end()
    }
}

/// The names under one prefix, for serializing.
struct Names<'e> {
    extensions: &'e Extensions,
    prefix: &'e str,
}

impl Serialize for Names<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        for extension in self.extensions.iter() {
            if &*extension.prefix == self.prefix {
                map.serialize_entry(&*extension.name, &extension.values)?;
            }
        }
        map.end()
    }
}

/// The values of one extension element, one per occurrence: a single value serializes as a
/// string, several as an array. Most elements occur once, so one value is kept without a
/// vector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Values(Repr);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Repr {
    One(String),
    Many(Vec<String>),
}

impl Values {
    /// The first value.
    pub fn first(&self) -> Option<&str> {
        self.as_slice().first().map(String::as_str)
    }

    /// Every value, in document order.
    pub fn as_slice(&self) -> &[String] {
        match &self.0 {
            Repr::One(value) => std::slice::from_ref(value),
            Repr::Many(values) => values,
        }
    }

    fn push(&mut self, value: String) {
        match &mut self.0 {
            Repr::One(first) => {
                let first = std::mem::take(first);
                self.0 = Repr::Many(vec![first, value]);
            }
            Repr::Many(values) => values.push(value),
        }
    }
}

impl Serialize for Values {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.as_slice() {
            [one] => serializer.serialize_str(one),
            many => many.serialize(serializer),
        }
    }
}

/// The format and version of a feed, named as feedparser names them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// RSS 0.90 (RDF with the Netscape namespace).
    Rss090,
    /// RSS 0.91.
    Rss091,
    /// RSS 0.92.
    Rss092,
    /// RSS 0.93.
    Rss093,
    /// RSS 0.94.
    Rss094,
    /// RSS 2.0.
    Rss20,
    /// An `rss` root without a `version`.
    Rss,
    /// RSS 1.0 (RDF).
    Rss10,
    /// Atom 0.3.
    Atom03,
    /// Atom 1.0.
    Atom10,
    /// JSON Feed 1.0.
    #[serde(rename = "json1")]
    Json10,
    /// JSON Feed 1.1.
    #[serde(rename = "json11")]
    Json11,
    /// Not recognised; fields are still read where their names are known.
    #[default]
    Unknown,
}
