//! The feed parser through its public API: formats, encodings, namespaces, forgiveness, limits,
//! lean mode, and the whole test corpus without a panic.

use std::path::{Path, PathBuf};

use ferret::feed::{derived_id, parse, Feed, Format, Limits, ParseError, ParseOptions};

fn parse_str(text: &str) -> Feed {
    parse(text.as_bytes(), &ParseOptions::default()).expect("parses")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/feeds")
        .join(name)
}

#[test]
fn a_live_listing_page_matches_its_json_twin() {
    let bytes = std::fs::read(fixture("nicolive-recent.xml")).unwrap();
    let options = ParseOptions {
        base_url: Some("http://live.nicovideo.jp/recent/rss?p=1"),
        ..ParseOptions::default()
    };
    let feed = parse(&bytes, &options).unwrap();
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("nicolive-recent.json")).unwrap())
            .unwrap();
    assert_eq!(serde_json::to_value(&feed).unwrap(), expected);
    // What the live-listing detector reads.
    assert_eq!(
        feed.extensions.first("nicolive", "total_count"),
        Some("1187")
    );
    assert_eq!(
        feed.items[1].extensions.first("nicolive", "member_only"),
        Some("true")
    );
}

#[test]
fn rss2_with_the_common_namespaces() {
    let feed = parse_str(
        r#"<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"
              xmlns:content="http://purl.org/rss/1.0/modules/content/"
              xmlns:media="http://search.yahoo.com/mrss/" xmlns:x="urn:example">
          <channel><title>T</title><link>http://example.com/</link>
            <lastBuildDate>Tue, 10 Jun 2003 04:00:00 GMT</lastBuildDate>
            <dc:language>en-gb</dc:language><managingEditor>ed@example.com (Ed)</managingEditor>
            <x:thing a="1">v</x:thing>
            <item><title>One</title><description>short</description>
              <content:encoded><![CDATA[<p>long</p>]]></content:encoded>
              <dc:creator>Ann</dc:creator><dc:date>2003-06-03T09:39:21-05:00</dc:date>
              <category>a</category><dc:subject>b</dc:subject>
              <enclosure url="http://example.com/a.mp3" length="123" type="audio/mpeg"/>
              <media:thumbnail url="http://example.com/t.jpg"/>
              <guid>http://example.com/1</guid>
              <x:thing>one</x:thing><x:thing>two</x:thing>
            </item></channel></rss>"#,
    );
    assert_eq!(feed.format, Format::Rss20);
    assert_eq!(feed.title.as_deref(), Some("T"));
    assert_eq!(feed.language.as_deref(), Some("en-gb"));
    assert_eq!(feed.updated.as_deref(), Some("2003-06-10T04:00:00Z"));
    assert_eq!(feed.authors[0].email.as_deref(), Some("ed@example.com"));
    assert_eq!(feed.authors[0].name.as_deref(), Some("Ed"));
    assert_eq!(feed.extensions.first("x", "thing"), Some("v"));
    assert_eq!(feed.extensions.first("x", "thing@a"), Some("1"));
    let item = &feed.items[0];
    assert_eq!(item.id, "http://example.com/1");
    assert_eq!(
        item.link.as_deref(),
        Some("http://example.com/1"),
        "a permalink guid is the link"
    );
    assert_eq!(item.summary.as_deref(), Some("short"));
    assert_eq!(item.content.as_deref(), Some("<p>long</p>"));
    assert_eq!(item.authors[0].name.as_deref(), Some("Ann"));
    assert_eq!(item.published.as_deref(), Some("2003-06-03T14:39:21Z"));
    assert_eq!(item.categories, ["a", "b"]);
    assert_eq!(item.enclosures[0].url, "http://example.com/a.mp3");
    assert_eq!(item.enclosures[0].length, Some(123));
    assert_eq!(
        item.extensions.first("media", "thumbnail@url"),
        Some("http://example.com/t.jpg")
    );
    assert_eq!(
        item.extensions.get("x", "thing").unwrap().as_slice(),
        ["one", "two"]
    );
}

#[test]
fn atom_with_xml_base_xhtml_and_people() {
    let feed = parse_str(
        r#"<?xml version="1.0"?>
        <feed xmlns="http://www.w3.org/2005/Atom" xml:base="http://example.org/blog/" xml:lang="fr">
          <title type="html">A &lt;b&gt;bold&lt;/b&gt; title</title>
          <subtitle>Sub</subtitle><updated>2005-07-31T12:29:29Z</updated>
          <link rel="alternate" href="./"/><link rel="self" href="feed.atom"/>
          <author><name>Mark</name><uri>/mark</uri><email>m@example.org</email></author>
          <entry xml:base="2005/">
            <id>tag:example.org,2005:1</id><title>Entry</title>
            <link href="post.html"/><link rel="enclosure" href="a.ogg" length="9" type="audio/ogg"/>
            <published>2005-07-30T10:00:00+02:00</published><updated>2005-07-31T12:29:29Z</updated>
            <category term="tech"/>
            <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">Hi <b>there</b></div></content>
          </entry>
        </feed>"#,
    );
    assert_eq!(feed.format, Format::Atom10);
    assert_eq!(feed.title.as_deref(), Some("A <b>bold</b> title"));
    assert_eq!(feed.description.as_deref(), Some("Sub"));
    assert_eq!(feed.link.as_deref(), Some("http://example.org/blog/"));
    assert_eq!(feed.language.as_deref(), Some("fr"));
    assert_eq!(
        feed.authors[0].uri.as_deref(),
        Some("http://example.org/mark")
    );
    assert_eq!(
        feed.extensions.first("", "link@self"),
        Some("http://example.org/blog/feed.atom")
    );
    let entry = &feed.items[0];
    assert_eq!(entry.id, "tag:example.org,2005:1");
    assert_eq!(
        entry.link.as_deref(),
        Some("http://example.org/blog/2005/post.html")
    );
    assert_eq!(
        entry.enclosures[0].url,
        "http://example.org/blog/2005/a.ogg"
    );
    assert_eq!(entry.published.as_deref(), Some("2005-07-30T08:00:00Z"));
    assert_eq!(entry.categories, ["tech"]);
    assert_eq!(entry.content.as_deref(), Some("Hi <b>there</b>"));
    assert!(feed.well_formed, "{:?}", feed.warnings);
}

#[test]
fn rss1_and_rss090_are_told_apart() {
    let rdf = |ns: &str| {
        format!(
            r#"<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="{ns}">
              <channel rdf:about="http://example.com/"><title>R</title></channel>
              <item rdf:about="http://example.com/1"><title>I</title><link>http://example.com/1</link></item>
            </rdf:RDF>"#
        )
    };
    let feed = parse_str(&rdf("http://purl.org/rss/1.0/"));
    assert_eq!(feed.format, Format::Rss10);
    assert_eq!(
        feed.items[0].id, "http://example.com/1",
        "rdf:about is the id"
    );
    let feed = parse_str(&rdf("http://my.netscape.com/rdf/simple/0.9/"));
    assert_eq!(feed.format, Format::Rss090);
    assert_eq!(feed.title.as_deref(), Some("R"));
}

#[test]
fn legacy_encodings_from_the_declaration_and_from_http() {
    let cases: [(&str, &str); 5] = [
        ("Shift_JIS", "日本語のフィード"),
        ("EUC-JP", "日本語のフィード"),
        ("windows-1251", "Новости дня"),
        ("KOI8-R", "Новости дня"),
        ("GB2312", "中文新闻"),
    ];
    for (label, title) in cases {
        let encoding = encoding_rs::Encoding::for_label(label.as_bytes()).unwrap();
        let body = format!("<rss version=\"2.0\"><channel><title>{title}</title></channel></rss>");
        let declared = format!("<?xml version=\"1.0\" encoding=\"{label}\"?>{body}");
        let (bytes, _, _) = encoding.encode(&declared);
        let feed = parse(&bytes, &ParseOptions::default()).unwrap();
        assert_eq!(feed.title.as_deref(), Some(title), "{label} declared");
        assert_eq!(feed.encoding, encoding.name());

        // The HTTP charset wins over a wrong declaration.
        let mislabelled = format!("<?xml version=\"1.0\" encoding=\"iso-8859-1\"?>{body}");
        let (bytes, _, _) = encoding.encode(&mislabelled);
        let options = ParseOptions {
            http_charset: Some(label),
            ..ParseOptions::default()
        };
        let feed = parse(&bytes, &options).unwrap();
        assert_eq!(feed.title.as_deref(), Some(title), "{label} from HTTP");
    }
}

#[test]
fn dates_are_utc_and_a_bad_one_is_a_warning_not_a_lost_item() {
    let feed = parse_str(
        "<rss><channel>\
           <item><title>a</title><pubDate>Sun, 5 Mar 06 8:02 JST</pubDate></item>\
           <item><title>b</title><pubDate>the day after tomorrow</pubDate></item>\
         </channel></rss>",
    );
    assert_eq!(
        feed.items[0].published.as_deref(),
        Some("2006-03-04T23:02:00Z")
    );
    assert_eq!(feed.items[1].title.as_deref(), Some("b"));
    assert_eq!(feed.items[1].published, None);
    assert!(feed
        .warnings
        .iter()
        .any(|w| w.message.contains("the day after tomorrow")));
    assert!(feed.well_formed, "a bad date is not bad XML");
}

#[test]
fn malformed_input_is_recovered_and_reported() {
    let feed = parse_str(
        "  \n<?xml version=\"1.0\"?>\n<rss version=\"2.0\"><channel>\
         <title>AT&T &eacute;t&eacute; &nosuch; &#233;</title>\
         <item><title>kept</title><description><![CDATA[<b>x</b>]]></description></item>\
         <item><title>cut off</title><link>http://example.com/2",
    );
    assert_eq!(feed.title.as_deref(), Some("AT&T été &nosuch; é"));
    assert_eq!(feed.items.len(), 2);
    assert_eq!(feed.items[0].summary.as_deref(), Some("<b>x</b>"));
    assert_eq!(feed.items[1].title.as_deref(), Some("cut off"));
    assert_eq!(feed.items[1].link.as_deref(), Some("http://example.com/2"));
    assert!(!feed.well_formed);
    assert!(feed.cut_off);
    let messages: Vec<&str> = feed.warnings.iter().map(|w| w.message.as_str()).collect();
    for expected in ["bare `&`", "`&eacute;`", "`&nosuch;`", "ends inside <link>"] {
        assert!(
            messages.iter().any(|m| m.contains(expected)),
            "{expected} in {messages:?}"
        );
    }
    assert!(feed.warnings.iter().all(|w| w.line >= 1 && w.column >= 1));
}

#[test]
fn mismatched_and_stray_end_tags_are_closed_where_they_belong() {
    let feed = parse_str(
        "<rss><channel><item><title>a</title><description>x <br> y</description></item>\
         </bogus><item><title>b</title></item></channel></rss>",
    );
    assert_eq!(feed.items.len(), 2);
    assert_eq!(feed.items[0].summary.as_deref(), Some("x <br> y"));
    assert_eq!(feed.items[1].title.as_deref(), Some("b"));
    assert!(!feed.well_formed);
    assert!(!feed.cut_off, "ill-formed, but read to its end");
}

#[test]
fn declared_entities_are_replaced_once_and_never_expanded_further() {
    let laughs = r#"<?xml version="1.0"?>
        <!DOCTYPE rss [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
                      <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>
        <rss><channel><title>&d;&d;&d;</title></channel></rss>"#;
    let feed = parse_str(laughs);
    // One level: `&d;` is its declared text, whose own references stay as written.
    assert_eq!(feed.title, Some("&c;".repeat(30)));

    let external = r#"<!DOCTYPE rss [<!ENTITY x SYSTEM "file:///etc/passwd"><!ENTITY id "tag:a,">]>
        <rss><channel><title>&x;&id;</title></channel></rss>"#;
    let feed = parse_str(external);
    assert_eq!(
        feed.title.as_deref(),
        Some("&x;tag:a,"),
        "external entities are never read"
    );
}

#[test]
fn limits_bound_size_depth_and_items() {
    let limits = Limits {
        max_bytes: 100,
        ..Limits::default()
    };
    let big = format!(
        "<rss><channel><title>{}</title></channel></rss>",
        "x".repeat(200)
    );
    let err = parse(
        big.as_bytes(),
        &ParseOptions {
            limits,
            ..ParseOptions::default()
        },
    )
    .unwrap_err();
    assert!(
        matches!(err, ParseError::TooLarge { limit: 100, .. }),
        "{err}"
    );

    // Deeper than the limit, elements are counted, not kept: the document goes on after them,
    // the same in both modes.
    let deep = format!(
        "<rss><channel><x:a xmlns:x=\"urn:x\">{}{}</x:a><item><title>after</title></item></channel></rss>",
        "<x:a>".repeat(10_000),
        "</x:a>".repeat(10_000)
    );
    for lean in [false, true] {
        let feed = parse(
            deep.as_bytes(),
            &ParseOptions {
                lean,
                ..ParseOptions::default()
            },
        )
        .unwrap();
        assert!(feed
            .warnings
            .iter()
            .any(|w| w.message.contains("nesting deeper")));
        assert_eq!(feed.items.len(), 1, "lean: {lean}");
        assert_eq!(feed.items[0].title.as_deref(), Some("after"));
    }

    let items = format!(
        "<rss><channel>{}</channel></rss>",
        "<item><title>i</title></item>".repeat(30)
    );
    let limits = Limits {
        max_items: 10,
        ..Limits::default()
    };
    let feed = parse(
        items.as_bytes(),
        &ParseOptions {
            limits,
            ..ParseOptions::default()
        },
    )
    .unwrap();
    assert_eq!(feed.items.len(), 10);
    assert!(feed
        .warnings
        .iter()
        .any(|w| w.message.contains("20 items beyond the limit")));
}

#[test]
fn not_a_feed_and_empty_input_are_errors_with_a_position() {
    let err = parse(b"\n<html><body>hi</body></html>", &ParseOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "2:1: not a feed: the root element is <html>, not <rss>, <rdf:RDF> or <feed>"
    );
    let err = parse(b"", &ParseOptions::default()).unwrap_err();
    assert!(
        matches!(
            err,
            ParseError::NoRoot {
                line: 1,
                column: 1,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_missing_id_is_derived_stably_from_link_and_title() {
    let feed = parse_str(
        "<rss><channel><item><title>t</title><link>http://e.com/1</link></item></channel></rss>",
    );
    assert_eq!(
        feed.items[0].id,
        derived_id(Some("http://e.com/1"), Some("t"))
    );
    assert_eq!(
        derived_id(Some("http://e.com/1"), Some("t")),
        "urn:ferret:a007f11ea25ddfc5"
    );
    assert_ne!(
        derived_id(Some("http://e.com/1"), None),
        derived_id(None, Some("http://e.com/1"))
    );
}

#[test]
fn lean_mode_keeps_the_channel_and_what_pagers_need() {
    let bytes = std::fs::read(fixture("nicolive-recent.xml")).unwrap();
    let full = parse(&bytes, &ParseOptions::default()).unwrap();
    let lean = parse(
        &bytes,
        &ParseOptions {
            lean: true,
            ..ParseOptions::default()
        },
    )
    .unwrap();
    assert_eq!(lean.extensions, full.extensions);
    assert_eq!(lean.items.len(), full.items.len());
    for (lean, full) in lean.items.iter().zip(&full.items) {
        assert_eq!(
            (&lean.id, &lean.title, &lean.link),
            (&full.id, &full.title, &full.link)
        );
        assert_eq!(
            (&lean.published, &lean.updated),
            (&full.published, &full.updated)
        );
        assert_eq!(
            (&lean.summary, lean.categories.len(), lean.extensions.len()),
            (&None, 0, 0)
        );
    }
}

/// Every file of both corpora, in both modes: no panic, and lean mode finds the items full
/// mode finds. A handful of files are not feeds (CDF, an empty document); they must be errors.
#[test]
fn the_whole_corpus_parses_without_a_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/feed-corpus");
    assert!(
        root.is_dir(),
        "the corpus is expected at {}",
        root.display()
    );
    let mut files = Vec::new();
    collect_xml(&root, &mut files);
    assert!(files.len() > 2_200, "found only {} files", files.len());
    let mut errors = Vec::new();
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let full = parse(&bytes, &ParseOptions::default());
        let lean = parse(
            &bytes,
            &ParseOptions {
                lean: true,
                ..ParseOptions::default()
            },
        );
        match (full, lean) {
            (Ok(full), Ok(lean)) => {
                let ids = |feed: &Feed| feed.items.iter().map(|i| i.id.clone()).collect::<Vec<_>>();
                assert_eq!(ids(&full), ids(&lean), "{}", path.display());
            }
            (Err(full), Err(lean)) => {
                assert_eq!(full, lean);
                errors.push(format!("{}: {full}", path.display()));
            }
            (full, lean) => panic!("{}: modes disagree: {full:?} / {lean:?}", path.display()),
        }
    }
    // CDF (14 + 1 files) is not a feed format we read; the empty document has no root.
    let expected_errors = errors
        .iter()
        .filter(|e| e.contains("<CHANNEL>") || e.contains("empty_document"))
        .count();
    assert_eq!(
        expected_errors,
        errors.len(),
        "unexpected errors:\n{}",
        errors.join("\n")
    );
}

fn collect_xml(dir: &Path, files: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_xml(&path, files);
        } else if path
            .extension()
            .is_some_and(|ext| ext == "xml" || ext == "rss" || ext == "atom")
        {
            files.push(path);
        }
    }
}

#[test]
fn links_inside_html_content_are_resolved_against_the_base() {
    let options = ParseOptions {
        base_url: Some("http://example.com/feed.xml"),
        ..ParseOptions::default()
    };
    let feed = parse(
        br#"<rss><channel><item>
              <description>&lt;a href="/post/1"&gt;one&lt;/a&gt; &lt;img src="i.png"&gt;</description>
              <content:encoded xmlns:content="http://purl.org/rss/1.0/modules/content/"><![CDATA[<a href="http://other.org/">abs</a>]]></content:encoded>
            </item></channel></rss>"#,
        &options,
    )
    .unwrap();
    let item = &feed.items[0];
    assert_eq!(
        item.summary.as_deref(),
        Some(r#"<a href="http://example.com/post/1">one</a> <img src="http://example.com/i.png">"#)
    );
    assert_eq!(
        item.content.as_deref(),
        Some(r#"<a href="http://other.org/">abs</a>"#)
    );
}

#[test]
fn atom_base64_content_and_text_links_and_vendor_namespaces() {
    let feed = parse_str(
        r#"<feed version="0.3" xmlns="http://example.com/newformat#">
             <title>Vendor namespace</title>
             <entry>
               <link rel="alternate">http://example.com/a</link>
               <content type="text/html" mode="base64">PGI+aGk8L2I+</content>
               <author><name>A</name><homepage>http://example.com/~a</homepage></author>
             </entry>
           </feed>"#,
    );
    assert_eq!(feed.format, Format::Atom03);
    assert_eq!(feed.title.as_deref(), Some("Vendor namespace"));
    let entry = &feed.items[0];
    assert_eq!(entry.link.as_deref(), Some("http://example.com/a"));
    assert_eq!(entry.content.as_deref(), Some("<b>hi</b>"));
    assert_eq!(
        entry.authors[0].uri.as_deref(),
        Some("http://example.com/~a")
    );
}

#[test]
fn rss_authors_are_split_into_name_and_email() {
    let feed = parse_str(
        "<rss><channel><item>\
           <author>me@example.com (Me Myself)</author>\
           <dc:creator xmlns:dc=\"http://purl.org/dc/elements/1.1/\">Ann &lt;ann@example.org&gt;</dc:creator>\
           <author>Just A Name</author>\
         </item></channel></rss>",
    );
    let people: Vec<_> = feed.items[0]
        .authors
        .iter()
        .map(|p| (p.name.as_deref(), p.email.as_deref()))
        .collect();
    assert_eq!(
        people,
        [
            (Some("Me Myself"), Some("me@example.com")),
            (Some("Ann"), Some("ann@example.org")),
            (Some("Just A Name"), None)
        ]
    );
}

#[test]
fn windows_1252_punctuation_mis_decoded_as_c1_controls_is_repaired() {
    let feed = parse_str(
        "<rss><channel><item><title>don\u{92}t \u{93}quote\u{94}</title></item></channel></rss>",
    );
    assert_eq!(feed.items[0].title.as_deref(), Some("don’t “quote”"));
}

#[test]
fn c1_references_inside_html_mean_windows_1252() {
    let feed = parse_str(
        "<rss><channel><item><description>don&amp;#146;t &amp;#8217; &amp;#x93;x</description></item></channel></rss>",
    );
    assert_eq!(
        feed.items[0].summary.as_deref(),
        Some("don&#x2019;t &#8217; &#x201c;x")
    );
}

#[test]
fn json_feed_reads_into_the_same_model() {
    let feed = parse(
        br#"{
          "version": "https://jsonfeed.org/version/1.1",
          "title": "JSON", "home_page_url": "https://example.org/", "language": "en",
          "authors": [{"name": "Ann", "url": "https://example.org/ann"}],
          "_live": {"total_count": 42},
          "items": [
            {"id": 7, "url": "/posts/7", "title": "Seven", "content_html": "<p>7</p>",
             "summary": "s", "date_published": "2024-01-02T03:04:05+09:00", "tags": ["a"],
             "attachments": [{"url": "https://example.org/7.mp3", "mime_type": "audio/mpeg", "size_in_bytes": 9}]},
            {"title": "no id", "url": "https://example.org/x", "date_modified": "yesterday"},
            "not an item"
          ]
        }"#,
        &ParseOptions { base_url: Some("https://example.org/feed.json"), ..ParseOptions::default() },
    )
    .unwrap();
    assert_eq!(feed.format, Format::Json11);
    assert_eq!(feed.title.as_deref(), Some("JSON"));
    assert_eq!(feed.authors[0].name.as_deref(), Some("Ann"));
    assert_eq!(feed.extensions.first("_live", "total_count"), Some("42"));
    assert_eq!(feed.items.len(), 2);
    let seven = &feed.items[0];
    assert_eq!(seven.id, "7");
    assert_eq!(seven.link.as_deref(), Some("https://example.org/posts/7"));
    assert_eq!(seven.published.as_deref(), Some("2024-01-01T18:04:05Z"));
    assert_eq!(seven.content.as_deref(), Some("<p>7</p>"));
    assert_eq!(seven.enclosures[0].length, Some(9));
    assert_eq!(
        feed.items[1].id,
        derived_id(Some("https://example.org/x"), Some("no id"))
    );
    let messages: Vec<&str> = feed.warnings.iter().map(|w| w.message.as_str()).collect();
    assert!(
        messages.iter().any(|m| m.contains("yesterday")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("items[2]")),
        "{messages:?}"
    );

    let err = parse(b"{\"items\": [", &ParseOptions::default()).unwrap_err();
    assert!(matches!(err, ParseError::Json { line: 1, .. }), "{err}");
}
