//! JSON Feed 1.0 and 1.1 (<https://www.jsonfeed.org/version/1.1/>) into the same model.
//!
//! The document is read with serde_json; a value of the wrong type is a warning and the field
//! stays empty, as in the XML formats. Objects whose key starts with `_` are the format's
//! extensions: each of their members is kept under the key (`_itunes` → `about`), strings as
//! they are and other values as JSON text.

use std::sync::Arc;

use serde_json::{Map, Value};
use url::Url;

use super::model::{Enclosure, Extensions, Feed, Format, Item, Person, Warning};
use super::{date, derived_id, ParseError, ParseOptions};

pub(super) fn parse(
    text: &str,
    encoding: &str,
    options: &ParseOptions<'_>,
) -> Result<Feed, ParseError> {
    let document: Value = serde_json::from_str(text).map_err(|error| ParseError::Json {
        line: error.line(),
        column: error.column(),
        message: error.to_string(),
    })?;
    let Value::Object(top) = document else {
        return Err(ParseError::Json {
            line: 1,
            column: 1,
            message: "a JSON Feed is an object".to_string(),
        });
    };
    let mut reader = Reader {
        base: options.base_url.and_then(|base| Url::parse(base).ok()),
        warnings: Vec::new(),
    };
    let format = match top.get("version").and_then(Value::as_str) {
        Some(version) if version.starts_with("https://jsonfeed.org/version/1.1") => Format::Json11,
        Some(version) if version.starts_with("https://jsonfeed.org/version/1") => Format::Json10,
        _ => {
            reader.warn("no JSON Feed `version`; read as JSON Feed 1.1".to_string());
            Format::Json11
        }
    };
    let mut feed = Feed {
        format,
        encoding: encoding.to_string(),
        title: reader.string(&top, "title"),
        link: reader.link(&top, "home_page_url"),
        description: reader.string(&top, "description"),
        language: reader.string(&top, "language"),
        authors: reader.authors(&top),
        extensions: extensions(&top),
        well_formed: true,
        ..Feed::default()
    };
    match top.get("items") {
        Some(Value::Array(items)) => {
            for (index, item) in items.iter().enumerate() {
                if feed.items.len() >= options.limits.max_items {
                    let skipped = items.len() - index;
                    reader.warn(format!("{skipped} items beyond the limit were skipped"));
                    break;
                }
                match item {
                    Value::Object(item) => feed.items.push(reader.item(item, options.lean)),
                    _ => reader.warn(format!("items[{index}] is not an object; skipped")),
                }
            }
        }
        Some(_) => reader.warn("`items` is not an array".to_string()),
        None => reader.warn("no `items`".to_string()),
    }
    feed.warnings = reader.warnings;
    Ok(feed)
}

struct Reader {
    base: Option<Url>,
    warnings: Vec<Warning>,
}

impl Reader {
    /// JSON has no useful position once parsed: warnings point at the document's start.
    fn warn(&mut self, message: String) {
        self.warnings.push(Warning {
            line: 1,
            column: 1,
            message,
        });
    }

    fn string(&mut self, object: &Map<String, Value>, key: &str) -> Option<String> {
        match object.get(key)? {
            Value::String(text) => Some(text.clone()),
            Value::Null => None,
            other => {
                self.warn(format!("`{key}` should be a string, not {other}; ignored"));
                None
            }
        }
    }

    fn link(&mut self, object: &Map<String, Value>, key: &str) -> Option<String> {
        let link = self.string(object, key)?;
        Some(match &self.base {
            Some(base) => base.join(link.trim()).map_or(link, String::from),
            None => link,
        })
    }

    fn date(&mut self, object: &Map<String, Value>, key: &str) -> Option<String> {
        let text = self.string(object, key)?;
        match date::parse(&text) {
            Some(at) => Some(date::to_rfc3339(at)),
            None => {
                self.warn(format!("unreadable date `{text}` in `{key}`; left empty"));
                None
            }
        }
    }

    /// `authors` (1.1) or `author` (1.0).
    fn authors(&mut self, object: &Map<String, Value>) -> Vec<Person> {
        let people: Vec<&Value> = match (object.get("authors"), object.get("author")) {
            (Some(Value::Array(authors)), _) => authors.iter().collect(),
            (_, Some(author)) => vec![author],
            _ => Vec::new(),
        };
        let mut authors = Vec::new();
        for person in people {
            match person {
                Value::Object(person) => authors.push(Person {
                    name: self.string(person, "name"),
                    email: None,
                    uri: self.link(person, "url"),
                }),
                other => self.warn(format!("an author should be an object, not {other}")),
            }
        }
        authors
    }

    fn item(&mut self, object: &Map<String, Value>, lean: bool) -> Item {
        let id = match object.get("id") {
            Some(Value::String(id)) => Some(id.clone()),
            // 1.0 allowed numbers; the spec asks readers to take them as strings.
            Some(Value::Number(id)) => Some(id.to_string()),
            _ => None,
        };
        let mut item = Item {
            title: self.string(object, "title"),
            link: self
                .link(object, "url")
                .or_else(|| self.link(object, "external_url")),
            published: self.date(object, "date_published"),
            updated: self.date(object, "date_modified"),
            ..Item::default()
        };
        item.id = id.unwrap_or_else(|| derived_id(item.link.as_deref(), item.title.as_deref()));
        if lean {
            return item;
        }
        item.summary = self.string(object, "summary");
        item.content = self
            .string(object, "content_html")
            .or_else(|| self.string(object, "content_text"));
        item.authors = self.authors(object);
        if let Some(Value::Array(tags)) = object.get("tags") {
            item.categories = tags
                .iter()
                .filter_map(|tag| tag.as_str().map(str::to_string))
                .collect();
        }
        if let Some(Value::Array(attachments)) = object.get("attachments") {
            for attachment in attachments {
                let Value::Object(attachment) = attachment else {
                    continue;
                };
                if let Some(url) = self.link(attachment, "url") {
                    item.enclosures.push(Enclosure {
                        url,
                        length: attachment.get("size_in_bytes").and_then(Value::as_u64),
                        mime_type: self.string(attachment, "mime_type"),
                    });
                }
            }
        }
        item.extensions = extensions(object);
        item
    }
}

/// The members of `_`-prefixed objects.
fn extensions(object: &Map<String, Value>) -> Extensions {
    let mut extensions = Extensions::default();
    for (key, value) in object.iter().filter(|(key, _)| key.starts_with('_')) {
        let prefix: Arc<str> = Arc::from(key.as_str());
        let members: Vec<(&str, &Value)> = match value {
            Value::Object(members) => members.iter().map(|(k, v)| (k.as_str(), v)).collect(),
            other => vec![("", other)],
        };
        for (name, value) in members {
            let text = match value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            extensions.push(&prefix, &Arc::from(name), text);
        }
    }
    extensions
}
