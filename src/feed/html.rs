//! Relative links inside HTML content, resolved against the content's base.
//!
//! A feed's HTML is shown away from the feed, so `<a href="/post">` must become absolute or it
//! breaks. Only the attributes that hold a URI are touched (the list feedparser uses, after
//! HTML 4's `%URI` attributes and HTML5's media elements); everything else in the markup is
//! kept byte for byte. The scanner is deliberately small: it finds start tags, reads their
//! attributes with HTML's quoting rules, and rewrites a value only when resolving changes it.

use std::borrow::Cow;

use url::Url;

/// Attributes whose value is a URI, whatever the element.
const URI_ATTRIBUTES: [&str; 11] = [
    "action",
    "background",
    "cite",
    "classid",
    "codebase",
    "data",
    "href",
    "longdesc",
    "poster",
    "src",
    "usemap",
];

/// `html` with every relative URI attribute resolved against `base`.
pub fn resolve_links<'h>(html: &'h str, base: &Url) -> Cow<'h, str> {
    let mut out = String::new();
    // Up to where `html` has been copied to `out`.
    let mut copied = 0;
    let mut at = 0;
    while let Some(open) = html[at..].find('<').map(|i| at + i) {
        let tag_start = open + 1;
        let name_len = html[tag_start..]
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(html.len() - tag_start);
        if name_len == 0 {
            at = tag_start;
            continue;
        }
        let mut pos = tag_start + name_len;
        // Attributes, until `>` or the end.
        loop {
            pos += leading_space(&html[pos..]);
            let rest = &html[pos..];
            if rest.is_empty() || rest.starts_with('>') || rest.starts_with("/>") {
                break;
            }
            let key_len = rest
                .find(|c: char| c.is_ascii_whitespace() || matches!(c, '=' | '>' | '/'))
                .unwrap_or(rest.len())
                .max(1);
            let key = &rest[..key_len.min(rest.len())];
            pos += key.len();
            let after_key = leading_space(&html[pos..]);
            if !html[pos + after_key..].starts_with('=') {
                continue;
            }
            pos += after_key + 1;
            pos += leading_space(&html[pos..]);
            let (value_start, value_end, next) = attribute_value(html, pos);
            pos = next;
            if !URI_ATTRIBUTES
                .iter()
                .any(|name| key.eq_ignore_ascii_case(name))
            {
                continue;
            }
            let value = &html[value_start..value_end];
            if let Some(resolved) = resolve(value, base) {
                out.push_str(&html[copied..value_start]);
                out.push_str(&resolved);
                copied = value_end;
            }
        }
        at = pos.max(tag_start);
    }
    if copied == 0 {
        return Cow::Borrowed(html);
    }
    out.push_str(&html[copied..]);
    Cow::Owned(out)
}

/// The value starting at `pos`: (start, end, position after it), quotes excluded.
fn attribute_value(html: &str, pos: usize) -> (usize, usize, usize) {
    let rest = &html[pos..];
    match rest.chars().next() {
        Some(quote @ ('"' | '\'')) => {
            let start = pos + 1;
            match html[start..].find(quote) {
                Some(len) => (start, start + len, start + len + 1),
                None => (start, html.len(), html.len()),
            }
        }
        _ => {
            let len = rest
                .find(|c: char| c.is_ascii_whitespace() || c == '>')
                .unwrap_or(rest.len());
            (pos, pos + len, pos + len)
        }
    }
}

fn leading_space(text: &str) -> usize {
    text.len()
        - text
            .trim_start_matches(|c: char| c.is_ascii_whitespace())
            .len()
}

/// The resolved value, escaped for an attribute, when it differs from `value`.
fn resolve(value: &str, base: &Url) -> Option<String> {
    let raw = value.trim();
    if raw.is_empty() || has_scheme(raw) {
        return None;
    }
    let unescaped = raw.replace("&amp;", "&");
    let resolved = base.join(&unescaped).ok()?;
    let escaped = resolved
        .as_str()
        .replace('&', "&amp;")
        .replace('"', "%22")
        .replace('\'', "%27");
    (escaped != value).then_some(escaped)
}

/// Whether `uri` starts with a scheme (`http:`, `mailto:`, `data:`…), so is absolute: RFC
/// 3986's `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"`.
fn has_scheme(uri: &str) -> bool {
    let Some((scheme, _)) = uri.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Url {
        Url::parse("http://example.com/blog/post/").unwrap()
    }

    #[test]
    fn relative_uri_attributes_are_resolved_and_the_rest_is_kept() {
        let html = r#"<p class=x>See <a href="/about" title="/not-a-uri">this</a> and <img src='pic.png' alt=""></p>"#;
        assert_eq!(
            resolve_links(html, &base()),
            r#"<p class=x>See <a href="http://example.com/about" title="/not-a-uri">this</a> and <img src='http://example.com/blog/post/pic.png' alt=""></p>"#
        );
    }

    #[test]
    fn absolute_unquoted_and_escaped_values() {
        let html = "<a href=http://other.org/x>a</a><a HREF = ../up?a=1&amp;b=2>b</a>";
        assert_eq!(
            resolve_links(html, &base()),
            "<a href=http://other.org/x>a</a><a HREF = http://example.com/blog/up?a=1&amp;b=2>b</a>"
        );
        assert!(matches!(
            resolve_links("no markup", &base()),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn schemes_mark_absolute_uris() {
        for absolute in [
            "http://a/b",
            "mailto:x@y",
            "data:image/png;base64,AA",
            "svn+ssh://h",
        ] {
            assert!(has_scheme(absolute), "{absolute}");
        }
        for relative in ["/a:b", "a/b:c", "../x", "#frag", "?q=a:b", "1http://x", ""] {
            assert!(!has_scheme(relative), "{relative}");
        }
    }

    #[test]
    fn broken_markup_never_panics() {
        for html in [
            "<",
            "<a",
            "<a href",
            "<a href=",
            "<a href=\"",
            "<a href='x",
            "<<>>",
            "<a href=é>",
            "<a é=\"x\" href=\"y\">",
            "</a href=\"x\">",
            "<a =\"x\">",
            "<a/href=x>",
        ] {
            let _ = resolve_links(html, &base());
        }
    }
}
