//! Reading the pages a user likes from a file: a browser's bookmarks export (the Netscape
//! bookmark file every browser writes) or a plain list of URLs, one a line.
//!
//! [`read_likes`] tells the two apart by content: a file whose first non-blank text starts
//! with `<` (the `<!DOCTYPE NETSCAPE-Bookmark-file-1>` line, or any HTML) is bookmarks;
//! anything else is a list. In a list, blank lines and lines starting with `#` are skipped.
//! Every URL is checked and normalised as a [`Feedback`](super::hittage::Feedback) URL is;
//! a bad one is reported (with its line number in a list) and the good ones are kept.

use std::collections::BTreeSet;

use html5gum::{Token, Tokenizer};

use super::hittage::normal_url;

/// One bookmark of a Netscape bookmark file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bookmark {
    /// The `HREF`, as written.
    pub href: String,
    /// The link text.
    pub title: String,
    /// `ADD_DATE` (seconds since the Unix epoch in the file), in milliseconds.
    pub added_ms: Option<i64>,
    /// The folders it sits in, outermost first.
    pub folders: Vec<String>,
}

/// Whether `text` looks like HTML (a bookmarks export) rather than a list of URLs.
pub fn is_html(text: &str) -> bool {
    text.trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('<')
}

/// Every `<A HREF>` of a Netscape bookmark file, in file order, with the folders (`<H3>`
/// headings opening a `<DL>`) it sits in. Never fails: HTML is tokenized as a browser would.
pub fn parse_bookmarks(html: &str) -> Vec<Bookmark> {
    let mut out = Vec::new();
    // Folders: the last <H3> text seen, pushed when its <DL> opens.
    let mut folders: Vec<String> = Vec::new();
    let mut heading: Option<String> = None;
    let mut in_heading = false;
    let mut open_lists = 0usize;
    // The <A> being read: (href, added, text).
    let mut anchor: Option<(String, Option<i64>, String)> = None;
    for token in Tokenizer::new(html).flatten() {
        match token {
            Token::StartTag(tag) => match tag.name.as_slice() {
                b"a" => {
                    let attr = |name: &[u8]| {
                        tag.attributes
                            .get(name)
                            .map(|v| String::from_utf8_lossy(v).into_owned())
                    };
                    anchor = attr(b"href").map(|href| {
                        let added = attr(b"add_date")
                            .and_then(|s| s.trim().parse::<i64>().ok())
                            .map(|secs| secs.saturating_mul(1000));
                        (href, added, String::new())
                    });
                }
                b"h3" => {
                    in_heading = true;
                    heading = Some(String::new());
                }
                b"dl" => {
                    open_lists += 1;
                    // The outermost <DL> is the file itself; the others are folders.
                    if open_lists > 1 {
                        folders.push(heading.take().unwrap_or_default());
                    }
                }
                _ => {}
            },
            Token::EndTag(tag) => match tag.name.as_slice() {
                b"a" => {
                    if let Some((href, added_ms, text)) = anchor.take() {
                        out.push(Bookmark {
                            href: href.trim().to_string(),
                            title: collapse(&text),
                            added_ms,
                            folders: folders.clone(),
                        });
                    }
                }
                b"h3" => {
                    in_heading = false;
                    heading = heading.map(|h| collapse(&h));
                }
                b"dl" => {
                    if open_lists > 1 {
                        folders.pop();
                    }
                    open_lists = open_lists.saturating_sub(1);
                }
                _ => {}
            },
            Token::String(text) => {
                let text = String::from_utf8_lossy(&text);
                if let Some((_, _, anchor_text)) = anchor.as_mut() {
                    anchor_text.push_str(&text);
                } else if in_heading {
                    if let Some(h) = heading.as_mut() {
                        h.push_str(&text);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Whitespace runs as one space, trimmed.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The URLs read from a likes file, and what was wrong with the rest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Likes {
    /// Normal-form URLs, in file order, each once.
    pub urls: Vec<String>,
    /// One line per entry skipped, saying where (`line 3` or `bookmark "title"`) and why.
    pub problems: Vec<String>,
    /// Whether the file was read as bookmarks (else as a list of URLs).
    pub bookmarks: bool,
}

/// Reads a likes file, telling a bookmarks export from a list of URLs by content (see the
/// module documentation).
pub fn read_likes(text: &str) -> Likes {
    let text = crate::strip_bom(text);
    let mut likes = Likes {
        bookmarks: is_html(text),
        ..Likes::default()
    };
    let mut seen = BTreeSet::new();
    let mut keep = |url: String, likes: &mut Likes| {
        if seen.insert(url.clone()) {
            likes.urls.push(url);
        }
    };
    if likes.bookmarks {
        for bookmark in parse_bookmarks(text) {
            match normal_url(&bookmark.href) {
                Ok(url) => keep(url, &mut likes),
                // Browsers export their own places (`place:`, `javascript:`); say so, go on.
                Err(err) => likes
                    .problems
                    .push(format!("bookmark \"{}\": {err}", bookmark.title)),
            }
        }
    } else {
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            match normal_url(line) {
                Ok(url) => keep(url, &mut likes),
                Err(err) => likes.problems.push(format!("line {}: {err}", i + 1)),
            }
        }
    }
    likes
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXPORT: &str = r#"<!DOCTYPE NETSCAPE-Bookmark-file-1>
<!-- This is an automatically generated file. -->
<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">
<TITLE>Bookmarks</TITLE>
<H1>Bookmarks</H1>
<DL><p>
    <DT><H3 ADD_DATE="1700000000" PERSONAL_TOOLBAR_FOLDER="true">Bookmarks bar</H3>
    <DL><p>
        <DT><A HREF="https://www.rust-lang.org/" ADD_DATE="1700000001" ICON="data:image/png;base64,AA">Rust
            Programming Language</A>
        <DT><H3>Reading &amp; more</H3>
        <DL><p>
            <DT><A HREF="http://example.com/a#top" ADD_DATE="1700000002">A &amp; B</A>
        </DL><p>
    </DL><p>
    <DT><A HREF="place:sort=8&maxResults=10">Recent</A>
    <DT><A HREF="https://www.rust-lang.org/">Rust again</A>
</DL><p>
"#;

    #[test]
    fn reads_a_netscape_export_with_folders() {
        let bookmarks = parse_bookmarks(EXPORT);
        assert_eq!(bookmarks.len(), 4, "{bookmarks:#?}");
        assert_eq!(
            bookmarks[0],
            Bookmark {
                href: "https://www.rust-lang.org/".into(),
                title: "Rust Programming Language".into(),
                added_ms: Some(1_700_000_001_000),
                folders: vec!["Bookmarks bar".into()],
            }
        );
        assert_eq!(bookmarks[1].title, "A & B");
        assert_eq!(bookmarks[1].folders, ["Bookmarks bar", "Reading & more"]);
        assert!(bookmarks[2].folders.is_empty());
        assert_eq!(bookmarks[3].added_ms, None);
    }

    #[test]
    fn likes_from_bookmarks_skip_places_and_repeats() {
        let likes = read_likes(EXPORT);
        assert!(likes.bookmarks);
        assert_eq!(
            likes.urls,
            ["https://www.rust-lang.org/", "http://example.com/a"]
        );
        assert_eq!(likes.problems.len(), 1, "{:?}", likes.problems);
        assert!(likes.problems[0].starts_with("bookmark \"Recent\": "));
    }

    #[test]
    fn likes_from_a_list_report_bad_lines_by_number() {
        let text = "# my likes\n\nhttps://a.example/x\n  http://b.example  \nnot a url\nftp://c.example/\nhttps://a.example/x#again\n";
        let likes = read_likes(text);
        assert!(!likes.bookmarks);
        assert_eq!(likes.urls, ["https://a.example/x", "http://b.example/"]);
        assert_eq!(likes.problems.len(), 2);
        assert!(
            likes.problems[0].starts_with("line 5: "),
            "{:?}",
            likes.problems
        );
        assert!(
            likes.problems[1].starts_with("line 6: "),
            "{:?}",
            likes.problems
        );
    }

    /// A list saved as "UTF-8 with BOM", with Windows line ends: the mark is no part of the
    /// first URL.
    #[test]
    fn likes_saved_with_a_byte_order_mark() {
        let likes = read_likes("\u{feff}https://a.example/x\r\nhttps://b.example/\r\n");
        assert_eq!(likes.urls, ["https://a.example/x", "https://b.example/"]);
        assert!(likes.problems.is_empty(), "{:?}", likes.problems);
    }

    #[test]
    fn never_panics_on_junk() {
        for junk in [
            "<",
            "<a href",
            "<dl></dl></dl><a>",
            "\u{feff}<A HREF=x>y",
            "",
        ] {
            let _ = read_likes(junk);
        }
    }
}
