//! Page features: what the advisors compare pages by.
//!
//! Every feature can be computed for any page, and two features of one kind compare to a
//! similarity in [0, 1] (SPEC §2). The kinds and their similarities:
//!
//! | kind | value | similarity |
//! |---|---|---|
//! | title words | the title's stems, a set | Jaccard |
//! | body terms | the text's stems with `tf = ½ + ½·f/max f`, the strongest [`BODY_TERMS_KEPT`] | cosine of tf·idf, `idf = ln(1 + N/df)` over the pages seen |
//! | URL tokens | the path's words (split on anything not a letter or digit), stemmed, a set | Jaccard, without the tokens on most of the site's addresses ([`AddressStats`]) |
//! | host | the URL's host | 1 when equal, ½ when the registrable part (last two labels) is, else 0 |
//! | language | `<html lang>`, else detected from the text | 1 when equal, else 0 |
//! | images, links, size | counts | `min/max` (1 when both are 0) |
//! | outlink hosts | the hosts the page links to, a set | Jaccard |
//!
//! A page's features are computed lazily, kind by kind ([`Features::ensure`]): a Ferret needs
//! one feature, a Filter a few, and the Mapmaker completes the rest; computed features travel
//! with the page.

use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

use super::page::{Link, PageDoc};
use crate::stories::text::{Analyzer, Lang};

/// Body terms a page keeps (its strongest by tf): enough to compare topics, small enough to
/// store with every page.
pub const BODY_TERMS_KEPT: usize = 64;

/// The kinds of feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FeatureKind {
    /// The title's stems.
    TitleWords,
    /// The text's strongest terms, tf·idf.
    BodyTerms,
    /// The URL path's words.
    UrlTokens,
    /// The URL's host.
    Host,
    /// The page's language.
    Language,
    /// How many images the page shows.
    Images,
    /// How many links the page has.
    Links,
    /// The page's size in bytes.
    Size,
    /// The hosts the page links to.
    OutlinkHosts,
}

impl FeatureKind {
    /// Every kind, in a fixed order.
    pub const ALL: [FeatureKind; 9] = [
        FeatureKind::TitleWords,
        FeatureKind::BodyTerms,
        FeatureKind::UrlTokens,
        FeatureKind::Host,
        FeatureKind::Language,
        FeatureKind::Images,
        FeatureKind::Links,
        FeatureKind::Size,
        FeatureKind::OutlinkHosts,
    ];

    /// The kinds a bare link (its URL and anchor text) already shows, before its page is
    /// fetched.
    pub const OF_LINK: [FeatureKind; 3] = [
        FeatureKind::UrlTokens,
        FeatureKind::TitleWords,
        FeatureKind::Host,
    ];

    /// The kind's name in config, JSON and logs.
    pub fn name(self) -> &'static str {
        match self {
            FeatureKind::TitleWords => "title_words",
            FeatureKind::BodyTerms => "body_terms",
            FeatureKind::UrlTokens => "url_tokens",
            FeatureKind::Host => "host",
            FeatureKind::Language => "language",
            FeatureKind::Images => "images",
            FeatureKind::Links => "links",
            FeatureKind::Size => "size",
            FeatureKind::OutlinkHosts => "outlink_hosts",
        }
    }
}

/// A page's features, each computed once, when first needed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Features {
    /// The title's stems, sorted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title_words: Option<Vec<String>>,
    /// The strongest terms with their tf, sorted by term.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_terms: Option<Vec<(String, f32)>>,
    /// The URL path's words, sorted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_tokens: Option<Vec<String>>,
    /// The host, with the port when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// `Some(None)`: computed, and no language could be told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<Option<String>>,
    /// Images shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<u32>,
    /// Links out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<u32>,
    /// Size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u32>,
    /// Hosts linked to, sorted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outlink_hosts: Option<Vec<String>>,
}

impl Features {
    /// Whether the feature of `kind` has been computed.
    pub fn has(&self, kind: FeatureKind) -> bool {
        match kind {
            FeatureKind::TitleWords => self.title_words.is_some(),
            FeatureKind::BodyTerms => self.body_terms.is_some(),
            FeatureKind::UrlTokens => self.url_tokens.is_some(),
            FeatureKind::Host => self.host.is_some(),
            FeatureKind::Language => self.language.is_some(),
            FeatureKind::Images => self.images.is_some(),
            FeatureKind::Links => self.links.is_some(),
            FeatureKind::Size => self.size.is_some(),
            FeatureKind::OutlinkHosts => self.outlink_hosts.is_some(),
        }
    }

    /// Whether every kind has been computed.
    pub fn complete(&self) -> bool {
        FeatureKind::ALL.iter().all(|&kind| self.has(kind))
    }

    /// Computes the feature of `kind` from `page` unless it is there already. Returns whether
    /// it computed anything.
    pub fn ensure(&mut self, kind: FeatureKind, page: &PageDoc, analyzer: &Analyzer) -> bool {
        if self.has(kind) {
            return false;
        }
        match kind {
            FeatureKind::TitleWords => {
                self.title_words = Some(word_set(analyzer, &page.title, text_lang(analyzer, page)))
            }
            FeatureKind::BodyTerms => self.body_terms = Some(body_terms(analyzer, page)),
            FeatureKind::UrlTokens => self.url_tokens = Some(url_tokens(analyzer, &page.url)),
            FeatureKind::Host => self.host = Some(host_of(&page.url)),
            FeatureKind::Language => self.language = Some(language_of(analyzer, page)),
            FeatureKind::Images => self.images = Some(page.images),
            FeatureKind::Links => self.links = Some(saturating_u32(page.links.len())),
            FeatureKind::Size => self.size = Some(saturating_u32(page.size)),
            FeatureKind::OutlinkHosts => {
                let mut hosts: Vec<String> = page.links.iter().map(|l| host_of(&l.url)).collect();
                hosts.sort_unstable();
                hosts.dedup();
                self.outlink_hosts = Some(hosts);
            }
        }
        true
    }

    /// Every feature of `page`.
    pub fn computed(page: &PageDoc, analyzer: &Analyzer) -> Features {
        let mut features = Features::default();
        features.complete_from(page, analyzer);
        features
    }

    /// Computes every kind not computed yet (the Mapmaker's job).
    pub fn complete_from(&mut self, page: &PageDoc, analyzer: &Analyzer) -> usize {
        FeatureKind::ALL
            .iter()
            .filter(|&&kind| self.ensure(kind, page, analyzer))
            .count()
    }

    /// The features a URL alone shows: its path's tokens and its host.
    pub fn of_address(url: &url::Url, analyzer: &Analyzer) -> Features {
        Features {
            url_tokens: Some(url_tokens(analyzer, url)),
            host: Some(host_of(url)),
            ..Features::default()
        }
    }

    /// The features a link shows before its page is fetched: its URL's tokens and host, and
    /// its anchor text standing in for the title.
    pub fn of_link(link: &Link, analyzer: &Analyzer) -> Features {
        Features {
            title_words: Some(word_set(analyzer, &link.text, Lang::English)),
            ..Features::of_address(&link.url, analyzer)
        }
    }
}

/// Document frequencies of body terms over the pages seen, for idf; and the URL tokens on
/// most of the site's addresses, which the URL similarity leaves out.
#[derive(Debug, Clone, Default)]
pub struct TermStats {
    docs: u32,
    df: FxHashMap<String, u32>,
    /// URL tokens on more than [`COMMON_URL_SHARE`] of the addresses seen: `library` in
    /// Python's documentation, where `library/email.charset` and `library/codecs` would
    /// otherwise be a third alike by their URLs. Such a token tells no page's topic, as a stop
    /// word does not.
    common_url_tokens: FxHashSet<String>,
    /// [`TermStats::idf`] by document frequency (0 read as 1), up to the highest one: a
    /// cosine looks up thousands of idfs a page and the logarithm was a tenth of the loop's
    /// time, while a page counted changes only as many as the highest frequency.
    idf_by_df: Vec<f64>,
}

impl TermStats {
    /// Counts a page's body terms (once per page).
    pub fn add(&mut self, features: &Features) {
        let Some(terms) = &features.body_terms else {
            return;
        };
        self.docs += 1;
        let mut highest = self.idf_by_df.len().saturating_sub(1);
        for (term, _) in terms {
            let df = self.df.entry(term.clone()).or_default();
            *df += 1;
            highest = highest.max(*df as usize);
        }
        let docs = f64::from(self.docs);
        self.idf_by_df = (0..=highest)
            .map(|df| (1.0 + docs / df.max(1) as f64).ln())
            .collect();
    }

    /// Sets the URL tokens the URL similarity leaves out ([`AddressStats::common`]).
    pub fn set_common_url_tokens(&mut self, tokens: FxHashSet<String>) {
        self.common_url_tokens = tokens;
    }

    /// Pages counted.
    pub fn docs(&self) -> u32 {
        self.docs
    }

    /// `ln(1 + N/df)`: positive even for a term on every page, so that a topic's common
    /// words still count early in a crawl when N is small.
    pub fn idf(&self, term: &str) -> f64 {
        let df = self.df.get(term).copied().unwrap_or(0) as usize;
        match self.idf_by_df.get(df) {
            Some(&idf) => idf,
            // Nothing counted yet (N read as 1).
            None => 2f64.ln(),
        }
    }
}

/// The similarity in [0, 1] of two pages' features of `kind`; 0 when either lacks it.
pub fn similarity(kind: FeatureKind, a: &Features, b: &Features, stats: &TermStats) -> f64 {
    match kind {
        FeatureKind::TitleWords => both(&a.title_words, &b.title_words, |x, y| jaccard(x, y)),
        FeatureKind::BodyTerms => both(&a.body_terms, &b.body_terms, |x, y| cosine(x, y, stats)),
        FeatureKind::UrlTokens => both(&a.url_tokens, &b.url_tokens, |x, y| {
            jaccard_without(x, y, &stats.common_url_tokens)
        }),
        FeatureKind::Host => both(&a.host, &b.host, |x, y| host_similarity(x, y)),
        FeatureKind::Language => both(&a.language, &b.language, |x, y| match (x, y) {
            (Some(x), Some(y)) if x == y => 1.0,
            _ => 0.0,
        }),
        FeatureKind::Images => both(&a.images, &b.images, |x, y| ratio(*x, *y)),
        FeatureKind::Links => both(&a.links, &b.links, |x, y| ratio(*x, *y)),
        FeatureKind::Size => both(&a.size, &b.size, |x, y| ratio(*x, *y)),
        FeatureKind::OutlinkHosts => both(&a.outlink_hosts, &b.outlink_hosts, |x, y| jaccard(x, y)),
    }
}

fn both<T>(a: &Option<T>, b: &Option<T>, f: impl FnOnce(&T, &T) -> f64) -> f64 {
    match (a, b) {
        (Some(a), Some(b)) => f(a, b),
        _ => 0.0,
    }
}

/// Jaccard of two sorted, deduplicated sets; two empty sets are alike.
fn jaccard(a: &[String], b: &[String]) -> f64 {
    jaccard_without(a, b, &FxHashSet::default())
}

/// [`jaccard`] of the sets without the elements of `skip`.
fn jaccard_without(a: &[String], b: &[String], skip: &FxHashSet<String>) -> f64 {
    let kept = |set: &[String]| set.iter().filter(|t| !skip.contains(*t)).count();
    let (len_a, len_b) = if skip.is_empty() {
        (a.len(), b.len())
    } else {
        (kept(a), kept(b))
    };
    if len_a == 0 && len_b == 0 {
        return 1.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += usize::from(!skip.contains(&a[i]));
                i += 1;
                j += 1;
            }
        }
    }
    common as f64 / (len_a + len_b - common) as f64
}

/// The share of the addresses seen a URL token must be on to be common (see
/// [`TermStats`]): most of them. At half, PostgreSQL's `sql` became common while a crawl
/// read the SQL commands' chapter, and the chapter's pages stopped looking alike.
pub const COMMON_URL_SHARE: f64 = 0.6;

/// The distinct addresses the loop has seen (every link of every fetched page) and how many
/// carry each URL token: what tells a URL token common to a site from one that marks a part
/// of it.
#[derive(Debug, Clone, Default)]
pub struct AddressStats {
    /// Hashes of the addresses counted (at most [`AddressStats::MAX`]).
    seen: FxHashSet<u64>,
    df: FxHashMap<String, u32>,
}

impl AddressStats {
    /// Addresses counted at most: enough for a site's shares to settle, bounded on an
    /// endless crawl.
    pub const MAX: usize = 65_536;
    /// Addresses needed before any token is called common.
    pub const MIN: usize = 50;

    /// Counts the address `url` and its URL tokens, once.
    pub fn add(&mut self, url: &url::Url, analyzer: &Analyzer) {
        use std::hash::{Hash, Hasher};
        if self.seen.len() >= Self::MAX {
            return;
        }
        let mut hasher = rustc_hash::FxHasher::default();
        url.as_str().hash(&mut hasher);
        if self.seen.insert(hasher.finish()) {
            for token in url_tokens(analyzer, url) {
                *self.df.entry(token).or_default() += 1;
            }
        }
    }

    /// The tokens on more than [`COMMON_URL_SHARE`] of the addresses counted; none before
    /// [`AddressStats::MIN`] addresses.
    pub fn common(&self) -> FxHashSet<String> {
        let seen = self.seen.len();
        if seen < Self::MIN {
            return FxHashSet::default();
        }
        let floor = COMMON_URL_SHARE * seen as f64;
        self.df
            .iter()
            .filter(|&(_, &df)| f64::from(df) > floor)
            .map(|(token, _)| token.clone())
            .collect()
    }
}

/// Cosine of two term vectors sorted by term, weighted by idf: one pass over both, each term's
/// idf looked up once (a shared term's once for the two).
fn cosine(a: &[(String, f32)], b: &[(String, f32)], stats: &TermStats) -> f64 {
    let (mut i, mut j) = (0, 0);
    let (mut na, mut nb, mut dot) = (0.0f64, 0.0f64, 0.0f64);
    while i < a.len() || j < b.len() {
        let order = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.0.cmp(&y.0),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        match order {
            std::cmp::Ordering::Less => {
                na += (f64::from(a[i].1) * stats.idf(&a[i].0)).powi(2);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                nb += (f64::from(b[j].1) * stats.idf(&b[j].0)).powi(2);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                let idf = stats.idf(&a[i].0);
                let (x, y) = (f64::from(a[i].1) * idf, f64::from(b[j].1) * idf);
                na += x.powi(2);
                nb += y.powi(2);
                dot += x * y;
                i += 1;
                j += 1;
            }
        }
    }
    let (na, nb) = (na.sqrt(), nb.sqrt());
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    (dot / (na * nb)).clamp(0.0, 1.0)
}

fn ratio(a: u32, b: u32) -> f64 {
    let (lo, hi) = (a.min(b), a.max(b));
    if hi == 0 {
        1.0
    } else {
        f64::from(lo) / f64::from(hi)
    }
}

fn host_similarity(a: &str, b: &str) -> f64 {
    if a == b {
        return 1.0;
    }
    let registrable = |h: &str| {
        let labels: Vec<&str> = h.rsplitn(3, '.').collect();
        labels[..labels.len().min(2)].join(".")
    };
    if !a.contains(':') && registrable(a) == registrable(b) {
        0.5
    } else {
        0.0
    }
}

fn saturating_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The URL's host, with the port when there is one.
fn host_of(url: &url::Url) -> String {
    match (url.host_str(), url.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_string(),
        (None, _) => String::new(),
    }
}

/// The path's words (split on anything not a letter or digit), stemmed as English, without
/// the usual file extensions: `catalogs.html` and `catalog-pg-class` share `catalog`.
fn url_tokens(analyzer: &Analyzer, url: &url::Url) -> Vec<String> {
    let words: Vec<String> = url
        .path()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty() && !matches!(*t, "html" | "htm" | "php" | "asp" | "aspx"))
        .map(str::to_lowercase)
        .collect();
    let mut tokens = analyzer.terms_of_words(&words, Lang::English);
    tokens.sort_unstable();
    tokens.dedup();
    tokens
}

/// The page's language: as its `lang` attribute names it, else detected.
fn text_lang(analyzer: &Analyzer, page: &PageDoc) -> Lang {
    match page.lang.as_deref() {
        Some(tag) => Lang::from_tag(tag).unwrap_or(Lang::Other),
        None => analyzer.detect(&page.text),
    }
}

fn language_of(analyzer: &Analyzer, page: &PageDoc) -> Option<String> {
    if let Some(lang) = &page.lang {
        return Some(lang.clone());
    }
    analyzer.detect(&page.text).code().map(String::from)
}

fn word_set(analyzer: &Analyzer, text: &str, lang: Lang) -> Vec<String> {
    let mut words = analyzer.terms(text, lang);
    words.sort_unstable();
    words.dedup();
    words
}

fn body_terms(analyzer: &Analyzer, page: &PageDoc) -> Vec<(String, f32)> {
    let lang = text_lang(analyzer, page);
    let mut counts: FxHashMap<String, u32> = FxHashMap::default();
    analyzer.for_each_term(&page.text, lang, |term| match counts.get_mut(term) {
        Some(count) => *count += 1,
        None => {
            counts.insert(term.to_string(), 1);
        }
    });
    let max = counts.values().copied().max().unwrap_or(1) as f32;
    let mut terms: Vec<(String, u32)> = counts.into_iter().collect();
    // The strongest first, ties by term so that the cut is deterministic.
    terms.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    terms.truncate(BODY_TERMS_KEPT);
    let mut kept: Vec<(String, f32)> = terms
        .into_iter()
        .map(|(term, f)| (term, 0.5 + 0.5 * f as f32 / max))
        .collect();
    kept.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    kept
}
