//! The format-neutral feed model, shared by RSS 0.9x/2.0, RSS 1.0 (RDF) and Atom 0.3/1.0.

use std::collections::BTreeMap;

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

/// Namespace prefix → local name → values (one per occurrence, in document order).
pub type Extensions = BTreeMap<String, BTreeMap<String, Values>>;

/// The values of one extension element: a single value serializes as a string, several as an
/// array.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Values(pub Vec<String>);

impl Values {
    /// The first value.
    pub fn first(&self) -> Option<&str> {
        self.0.first().map(String::as_str)
    }
}

impl Serialize for Values {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0.as_slice() {
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
    /// Not recognised; fields are still read where their names are known.
    #[default]
    Unknown,
}
