//! The discovery part of the store (migration 4): pages and links, feedback, hittage
//! computations, fingerprints and representatives.
//!
//! Pages are keyed by URL; a link to a page not stored yet creates a placeholder row (no
//! fetch time), so the link graph covers pages the crawler has not reached. Fingerprint bodies
//! and page attributes are JSON text the store keeps without reading (SQLite checks only that
//! it is JSON).

use std::collections::{HashMap, HashSet};

use ferret::discovery::advisor::RepresentativeHistory;
use ferret::discovery::hittage::{Feedback, FeedbackKind};
use rusqlite::{params, OptionalExtension as _, Transaction};
use serde::{Deserialize, Serialize};

use super::{Store, StoreError};

/// A page to store, with the URLs it links to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageRecord {
    /// The page's URL (its key).
    pub url: String,
    /// The URL it names as canonical, if any.
    pub canonical_url: Option<String>,
    /// Its title.
    pub title: Option<String>,
    /// Its language code.
    pub lang: Option<String>,
    /// Its size in bytes.
    pub size: Option<u64>,
    /// When it was fetched (Unix ms); `None` for a page known only as a link target.
    pub fetched_at_ms: Option<i64>,
    /// Its attributes, a JSON document (`{}` if none).
    pub attributes: String,
    /// Whether the filters accepted it into the map.
    pub accepted: bool,
    /// Whether a ferret fingerprint approved it. A verdict once stored stays: writing the
    /// page again with `false` does not clear it.
    pub approved: bool,
    /// The ferret fingerprint that approved it first, if known. Like `approved`, it stays
    /// once stored.
    pub approved_by_fingerprint: Option<String>,
    /// The filter that approved it, if any, so that feedback can be traced back to it.
    pub approved_by_filter: Option<String>,
    /// The URLs it links to (self-links and repeats are ignored).
    pub links: Vec<String>,
}

impl PageRecord {
    /// A page with only its URL: every other field empty.
    pub fn new(url: impl Into<String>) -> PageRecord {
        PageRecord {
            url: url.into(),
            canonical_url: None,
            title: None,
            lang: None,
            size: None,
            fetched_at_ms: None,
            attributes: "{}".to_string(),
            accepted: false,
            approved: false,
            approved_by_fingerprint: None,
            approved_by_filter: None,
            links: Vec::new(),
        }
    }
}

/// A feedback event as stored, with its id.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredFeedback {
    /// The event's id in the store.
    pub id: i64,
    /// The event.
    #[serde(flatten)]
    pub feedback: Feedback,
}

/// One computation of the Generalizer as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct HittageComputation {
    /// Its number (increasing).
    pub computation: u64,
    /// When it ran (Unix ms).
    pub at_ms: i64,
    /// Each page's hittage.
    pub hittage: HashMap<String, f64>,
    /// The lighthouses, highest hittage first, then by URL.
    pub lighthouses: Vec<(String, f64)>,
}

/// A row of the page list ([`Store::pages_by_hittage`], `GET /api/pages`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PageHittage {
    /// The page's URL.
    pub url: String,
    /// Its title, once fetched.
    pub title: Option<String>,
    /// Its hittage in the latest computation (0 if it had none).
    pub hittage: f64,
    /// Whether it is a lighthouse in the latest computation.
    pub lighthouse: bool,
    /// Whether the filters accepted it into the map.
    pub accepted: bool,
    /// Whether a ferret fingerprint approved it.
    pub approved: bool,
    /// When it was fetched (Unix ms); `None` if never.
    pub fetched_at_ms: Option<i64>,
}

/// The two fingerprint pools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FingerprintPool {
    /// Ferret fingerprints (one feature, a representative, a threshold).
    Ferret,
    /// Filter fingerprints (a vector of features and thresholds).
    Filter,
}

impl FingerprintPool {
    /// `ferret` or `filter`.
    pub const fn name(self) -> &'static str {
        match self {
            FingerprintPool::Ferret => "ferret",
            FingerprintPool::Filter => "filter",
        }
    }
}

/// A stored fingerprint and its record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredFingerprint {
    /// Its id in the store.
    pub id: i64,
    /// Its pool.
    pub pool: FingerprintPool,
    /// Its body: JSON the advisors wrote.
    pub body: String,
    /// When it was made (Unix ms).
    pub created_at_ms: i64,
    /// Pages fetched with it.
    pub fetched: u64,
    /// Of those, pages it approved: a ferret fingerprint's own verdict (exhaustion counts
    /// the pages finally approved, accepted by a filter, in its body), a filter's passes.
    pub approved: u64,
    /// Its reliability (filters), 1.0 when made.
    pub reliability: f64,
    /// When it was flushed (Unix ms); `None` while in use.
    pub flushed_at_ms: Option<i64>,
}

/// A fingerprint of the loop as the store keeps it (see [`Store::save_discovery_state`]).
#[derive(Debug, Clone, PartialEq)]
pub struct FingerprintState {
    /// The loop's id of it (the `id` of its body), unique in its pool while in use.
    pub ident: u64,
    /// Its body: JSON the loop reads back.
    pub body: String,
    /// When it was made (Unix ms).
    pub created_at_ms: i64,
    /// Pages fetched with it (ferret), or pages it passed (filter).
    pub fetched: u64,
    /// Pages it approved (ferret), or pages it passed (filter).
    pub approved: u64,
    /// Its reliability (filter); 1.0 for a ferret fingerprint.
    pub reliability: f64,
}

/// The discovery loop's fingerprints and representatives, as stored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiscoveryState {
    /// The ferret fingerprints in use.
    pub ferret: Vec<FingerprintState>,
    /// The filter fingerprints in use.
    pub filters: Vec<FingerprintState>,
    /// Each representative's history, by URL.
    pub representatives: Vec<(String, RepresentativeHistory)>,
}

/// A page's record as a representative.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Representative {
    /// How many times it was chosen.
    pub times_chosen: u64,
    /// Pages its fingerprints fetched.
    pub fetched: u64,
    /// Of those, pages the filters accepted.
    pub accepted: u64,
    /// When it was last chosen (Unix ms).
    pub last_at_ms: i64,
}

/// The id of the page at `url`, created as a placeholder if it is not stored.
fn page_id(tx: &Transaction<'_>, url: &str) -> Result<i64, rusqlite::Error> {
    // Statements cached: a page's links make a hundred of these calls.
    let known = tx
        .prepare_cached("SELECT id FROM pages WHERE url = ?1")?
        .query_row([url], |row| row.get(0))
        .optional()?;
    match known {
        Some(id) => Ok(id),
        None => tx
            .prepare_cached("INSERT INTO pages (url) VALUES (?1) RETURNING id")?
            .query_row([url], |row| row.get(0)),
    }
}

/// A row of `(url, title, hittage, lighthouse, accepted, fetched_at_ms, approved)`.
fn page_hittage(row: &rusqlite::Row<'_>) -> rusqlite::Result<PageHittage> {
    Ok(PageHittage {
        url: row.get(0)?,
        title: row.get(1)?,
        hittage: row.get(2)?,
        lighthouse: row.get(3)?,
        accepted: row.get(4)?,
        fetched_at_ms: row.get(5)?,
        approved: row.get(6)?,
    })
}

/// A feedback event from the columns `url, kind, seconds, at_ms` starting at `first`.
fn feedback_row(row: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<Feedback> {
    let kind: String = row.get(first + 1)?;
    Ok(Feedback {
        url: row.get(first)?,
        kind: kind.parse::<FeedbackKind>().map_err(|err| {
            rusqlite::Error::FromSqlConversionFailure(
                first + 1,
                rusqlite::types::Type::Text,
                Box::new(err),
            )
        })?,
        seconds: row.get(first + 2)?,
        at_ms: row.get(first + 3)?,
    })
}

/// Makes the fingerprints of `pool` in use those of `current`, at `at_ms`: one the store
/// has (by the loop's id) gets its body and counts replaced, a new one is added, and one in
/// use that is not in `current` any more is flushed at `at_ms` (kept, for the record).
fn sync_fingerprints(
    tx: &Transaction<'_>,
    pool: FingerprintPool,
    current: &[FingerprintState],
    at_ms: i64,
) -> Result<(), rusqlite::Error> {
    let stored: HashMap<i64, i64> = {
        let mut query = tx.prepare(
            "SELECT json_extract(body, '$.id'), id FROM fingerprints
             WHERE pool = ?1 AND flushed_at_ms IS NULL",
        )?;
        let rows = query.query_map([pool.name()], |row| {
            Ok((row.get::<_, Option<i64>>(0)?, row.get::<_, i64>(1)?))
        })?;
        rows.filter_map(|row| match row {
            Ok((Some(ident), id)) => Some(Ok((ident, id))),
            Ok((None, _)) => None,
            Err(err) => Some(Err(err)),
        })
        .collect::<Result<_, _>>()?
    };
    let mut kept = HashSet::new();
    for fp in current {
        let ident = i64::try_from(fp.ident).unwrap_or(i64::MAX);
        let (fetched, approved) = (
            i64::try_from(fp.fetched).unwrap_or(i64::MAX),
            i64::try_from(fp.approved).unwrap_or(i64::MAX),
        );
        if let Some(&id) = stored.get(&ident) {
            kept.insert(id);
            tx.execute(
                "UPDATE fingerprints SET body = ?1, fetched = ?2, approved = ?3,
                    reliability = ?4 WHERE id = ?5",
                params![fp.body, fetched, approved, fp.reliability, id],
            )?;
        } else {
            tx.execute(
                "INSERT INTO fingerprints
                    (pool, body, created_at_ms, fetched, approved, reliability)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    pool.name(),
                    fp.body,
                    fp.created_at_ms,
                    fetched,
                    approved,
                    fp.reliability
                ],
            )?;
        }
    }
    for id in stored.values().filter(|id| !kept.contains(*id)) {
        tx.execute(
            "UPDATE fingerprints SET flushed_at_ms = ?1 WHERE id = ?2",
            params![at_ms, id],
        )?;
    }
    Ok(())
}

/// Records each representative's history as it is now; `last_at_ms` moves to `at_ms`
/// for those chosen again since.
fn save_representatives(
    tx: &Transaction<'_>,
    history: &[(String, RepresentativeHistory)],
    at_ms: i64,
) -> Result<(), rusqlite::Error> {
    for (url, h) in history {
        tx.execute(
            "INSERT INTO representatives (url, times_chosen, fetched, accepted, last_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (url) DO UPDATE SET
                last_at_ms = CASE WHEN times_chosen <> excluded.times_chosen
                             THEN excluded.last_at_ms ELSE last_at_ms END,
                times_chosen = excluded.times_chosen,
                fetched = excluded.fetched,
                accepted = excluded.accepted",
            params![url, h.times, h.fetched, h.accepted, at_ms],
        )?;
    }
    Ok(())
}

impl Store {
    /// Stores pages (inserting new ones, replacing every field of known ones, placeholders
    /// included, but for a stored approval, which stays) and replaces each one's outgoing
    /// links, in one transaction. Link targets not stored yet become placeholders. Returns the
    /// pages' ids, in order.
    pub fn upsert_pages(&mut self, pages: &[PageRecord]) -> Result<Vec<i64>, StoreError> {
        self.write_map(pages, &[])
    }

    /// [`Store::upsert_pages`], then marks the stored pages at `approved` as approved by a
    /// ferret fingerprint (a URL not stored is left out), in the same transaction.
    pub fn write_map(
        &mut self,
        pages: &[PageRecord],
        approved: &[(String, u64)],
    ) -> Result<Vec<i64>, StoreError> {
        let tx = self.conn.transaction()?;
        let mut ids = Vec::with_capacity(pages.len());
        for page in pages {
            let id: i64 = tx
                .prepare_cached(
                    "INSERT INTO pages (url, canonical_url, title, lang, size, fetched_at_ms,
                                    attributes, accepted, approved_by_filter, approved,
                                    approved_by_fingerprint)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                 ON CONFLICT (url) DO UPDATE SET
                    canonical_url = excluded.canonical_url,
                    title = excluded.title,
                    lang = excluded.lang,
                    size = excluded.size,
                    fetched_at_ms = excluded.fetched_at_ms,
                    attributes = excluded.attributes,
                    accepted = excluded.accepted,
                    approved_by_filter = excluded.approved_by_filter,
                    approved = max(approved, excluded.approved),
                    approved_by_fingerprint =
                        coalesce(approved_by_fingerprint, excluded.approved_by_fingerprint)
                 RETURNING id",
                )?
                .query_row(
                    params![
                        page.url,
                        page.canonical_url,
                        page.title,
                        page.lang,
                        page.size.map(|s| s as i64),
                        page.fetched_at_ms,
                        if page.attributes.trim().is_empty() {
                            "{}"
                        } else {
                            &page.attributes
                        },
                        page.accepted,
                        page.approved_by_filter,
                        page.approved,
                        page.approved_by_fingerprint,
                    ],
                    |row| row.get(0),
                )?;
            tx.prepare_cached("DELETE FROM links WHERE from_id = ?1")?
                .execute([id])?;
            for target in &page.links {
                if *target == page.url {
                    continue;
                }
                let to = page_id(&tx, target)?;
                tx.prepare_cached("INSERT OR IGNORE INTO links (from_id, to_id) VALUES (?1, ?2)")?
                    .execute([id, to])?;
            }
            ids.push(id);
        }
        for (url, fingerprint) in approved {
            tx.prepare_cached(
                "UPDATE pages SET approved = 1,
                    approved_by_fingerprint = coalesce(approved_by_fingerprint, ?2)
                 WHERE url = ?1",
            )?
            .execute(params![url, fingerprint.to_string()])?;
        }
        tx.commit()?;
        Ok(ids)
    }

    /// The stored page at `url` with its links (sorted), or `None`.
    pub fn load_page(&self, url: &str) -> Result<Option<PageRecord>, StoreError> {
        let page = self
            .conn
            .query_row(
                "SELECT id, url, canonical_url, title, lang, size, fetched_at_ms, attributes,
                        accepted, approved_by_filter, approved, approved_by_fingerprint
                 FROM pages WHERE url = ?1",
                [url],
                |row| {
                    Ok((
                        row.get::<_, i64>(0)?,
                        PageRecord {
                            url: row.get(1)?,
                            canonical_url: row.get(2)?,
                            title: row.get(3)?,
                            lang: row.get(4)?,
                            size: row.get::<_, Option<i64>>(5)?.map(|s| s as u64),
                            fetched_at_ms: row.get(6)?,
                            attributes: row.get(7)?,
                            accepted: row.get(8)?,
                            approved_by_filter: row.get(9)?,
                            approved: row.get(10)?,
                            approved_by_fingerprint: row.get(11)?,
                            links: Vec::new(),
                        },
                    ))
                },
            )
            .optional()?;
        let Some((id, mut page)) = page else {
            return Ok(None);
        };
        let mut query = self.conn.prepare(
            "SELECT p.url FROM links l JOIN pages p ON p.id = l.to_id
             WHERE l.from_id = ?1 ORDER BY p.url",
        )?;
        page.links = query
            .query_map([id], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        Ok(Some(page))
    }

    /// The map: every accepted page with its links, by URL.
    pub fn load_accepted(&self) -> Result<Vec<PageRecord>, StoreError> {
        self.load_where("accepted")
    }

    /// The pages fetched but not accepted whose attributes were kept, with their links, by
    /// URL.
    pub fn load_fetched(&self) -> Result<Vec<PageRecord>, StoreError> {
        self.load_where("NOT accepted AND attributes <> '{}' AND fetched_at_ms IS NOT NULL")
    }

    fn load_where(&self, condition: &str) -> Result<Vec<PageRecord>, StoreError> {
        let mut query = self.conn.prepare(&format!(
            "SELECT url FROM pages WHERE {condition} ORDER BY url"
        ))?;
        let urls: Vec<String> = query
            .query_map([], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        let mut pages = Vec::with_capacity(urls.len());
        for url in urls {
            pages.extend(self.load_page(&url)?);
        }
        Ok(pages)
    }

    /// The URLs of pages fetched at or after `at_ms`, oldest fetch first: what a restarted
    /// crawler need not fetch again.
    pub fn fetched_since(&self, at_ms: i64) -> Result<Vec<String>, StoreError> {
        let mut query = self.conn.prepare(
            "SELECT url FROM pages WHERE fetched_at_ms >= ?1 ORDER BY fetched_at_ms, url",
        )?;
        let urls = query
            .query_map([at_ms], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        Ok(urls)
    }

    /// The link graph as `(from, to)` URL pairs, sorted.
    pub fn load_links(&self) -> Result<Vec<(String, String)>, StoreError> {
        let mut query = self.conn.prepare(
            "SELECT f.url, t.url FROM links l
             JOIN pages f ON f.id = l.from_id JOIN pages t ON t.id = l.to_id
             ORDER BY f.url, t.url",
        )?;
        let links = query
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<Result<_, _>>()?;
        Ok(links)
    }

    /// Records feedback events (already validated) in one transaction; returns them with
    /// their ids.
    pub fn record_feedback(
        &mut self,
        events: &[Feedback],
    ) -> Result<Vec<StoredFeedback>, StoreError> {
        let tx = self.conn.transaction()?;
        let mut stored = Vec::with_capacity(events.len());
        for event in events {
            tx.execute(
                "INSERT INTO feedback (url, kind, seconds, at_ms) VALUES (?1, ?2, ?3, ?4)",
                params![event.url, event.kind.name(), event.seconds, event.at_ms],
            )?;
            stored.push(StoredFeedback {
                id: tx.last_insert_rowid(),
                feedback: event.clone(),
            });
        }
        tx.commit()?;
        Ok(stored)
    }

    /// Every feedback event, oldest first (ties in recording order).
    pub fn load_feedback(&self) -> Result<Vec<Feedback>, StoreError> {
        let mut query = self
            .conn
            .prepare("SELECT url, kind, seconds, at_ms FROM feedback ORDER BY at_ms, id")?;
        let events = query
            .query_map([], |row| feedback_row(row, 0))?
            .collect::<Result<_, _>>()?;
        Ok(events)
    }

    /// The feedback events recorded after the one with id `after_id` (0: every event), in
    /// recording order (by id), whatever their `at_ms`: a reader that remembers the last id
    /// it saw gets each event once, one posted with an earlier `at` included.
    pub fn feedback_after(&self, after_id: i64) -> Result<Vec<StoredFeedback>, StoreError> {
        let mut query = self.conn.prepare(
            "SELECT id, url, kind, seconds, at_ms FROM feedback WHERE id > ?1 ORDER BY id",
        )?;
        let events = query
            .query_map([after_id], |row| {
                Ok(StoredFeedback {
                    id: row.get(0)?,
                    feedback: feedback_row(row, 1)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(events)
    }

    /// Records computation number `computation` of the Generalizer (replacing one of the same
    /// number), then keeps only the `keep` latest computations (at least this one).
    pub fn record_hittage(
        &mut self,
        computation: u64,
        at_ms: i64,
        hittage: &HashMap<String, f64>,
        lighthouses: &[(String, f64)],
        keep: usize,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        let number = computation as i64;
        tx.execute(
            "DELETE FROM hittage_computations WHERE computation = ?1",
            [number],
        )?;
        tx.execute(
            "INSERT INTO hittage_computations (computation, at_ms) VALUES (?1, ?2)",
            [number, at_ms],
        )?;
        {
            let mut insert = tx.prepare(
                "INSERT INTO hittage (computation, url, value, lighthouse)
                 VALUES (?1, ?2, ?3, ?4)",
            )?;
            let lit: HashSet<&str> = lighthouses.iter().map(|(url, _)| url.as_str()).collect();
            let mut rows: Vec<(&String, &f64)> = hittage.iter().collect();
            rows.sort_by(|a, b| a.0.cmp(b.0));
            for (url, value) in rows {
                let lighthouse = lit.contains(url.as_str());
                insert.execute(params![number, url, value, lighthouse])?;
            }
        }
        tx.execute(
            "DELETE FROM hittage_computations WHERE computation NOT IN
                (SELECT computation FROM hittage_computations
                 ORDER BY computation DESC LIMIT ?1)",
            [keep.max(1) as i64],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// The `last` latest computations of the Generalizer, oldest first.
    pub fn hittage_history(&self, last: usize) -> Result<Vec<HittageComputation>, StoreError> {
        let mut computations = self.conn.prepare(
            "SELECT computation, at_ms FROM hittage_computations
             ORDER BY computation DESC LIMIT ?1",
        )?;
        let heads: Vec<(i64, i64)> = computations
            .query_map([last as i64], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let mut rows = self.conn.prepare(
            "SELECT url, value, lighthouse FROM hittage WHERE computation = ?1 ORDER BY url",
        )?;
        let mut out = Vec::with_capacity(heads.len());
        for (computation, at_ms) in heads.into_iter().rev() {
            let mut hittage = HashMap::new();
            let mut lighthouses = Vec::new();
            for row in rows.query_map([computation], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, f64>(1)?,
                    row.get::<_, bool>(2)?,
                ))
            })? {
                let (url, value, lighthouse) = row?;
                if lighthouse {
                    lighthouses.push((url.clone(), value));
                }
                hittage.insert(url, value);
            }
            ferret::discovery::hittage::sort_by_hittage(&mut lighthouses);
            out.push(HittageComputation {
                computation: computation as u64,
                at_ms,
                hittage,
                lighthouses,
            });
        }
        Ok(out)
    }

    /// The latest computation of the Generalizer, if any.
    pub fn latest_hittage(&self) -> Result<Option<HittageComputation>, StoreError> {
        Ok(self.hittage_history(1)?.pop())
    }

    /// Up to `limit` pages, stored or with hittage in the latest computation, highest hittage
    /// first (pages without any count 0), then by URL.
    pub fn pages_by_hittage(&self, limit: usize) -> Result<Vec<PageHittage>, StoreError> {
        let mut query = self.conn.prepare(
            "WITH latest AS (SELECT max(computation) AS c FROM hittage_computations),
                  h AS (SELECT url, value, lighthouse FROM hittage, latest
                        WHERE computation = latest.c),
                  u AS (SELECT url FROM pages UNION SELECT url FROM h)
             SELECT u.url, p.title, coalesce(h.value, 0.0), coalesce(h.lighthouse, 0),
                    coalesce(p.accepted, 0), p.fetched_at_ms, coalesce(p.approved, 0)
             FROM u LEFT JOIN pages p ON p.url = u.url LEFT JOIN h ON h.url = u.url
             ORDER BY 3 DESC, u.url
             LIMIT ?1",
        )?;
        let pages = query
            .query_map([limit.min(i64::MAX as usize) as i64], page_hittage)?
            .collect::<Result<_, _>>()?;
        Ok(pages)
    }

    /// Recommendations: accepted pages the user has given no feedback on, highest hittage
    /// in the latest computation first, then the most recently fetched.
    pub fn recommendations(&self, limit: usize) -> Result<Vec<PageHittage>, StoreError> {
        let mut query = self.conn.prepare(
            "WITH latest AS (SELECT max(computation) AS c FROM hittage_computations),
                  h AS (SELECT url, value, lighthouse FROM hittage, latest
                        WHERE computation = latest.c)
             SELECT p.url, p.title, coalesce(h.value, 0.0), coalesce(h.lighthouse, 0),
                    p.accepted, p.fetched_at_ms, p.approved
             FROM pages p LEFT JOIN h ON h.url = p.url
             WHERE p.accepted AND p.url NOT IN (SELECT url FROM feedback)
             ORDER BY 3 DESC, p.fetched_at_ms DESC, p.url
             LIMIT ?1",
        )?;
        let pages = query
            .query_map([limit.min(i64::MAX as usize) as i64], page_hittage)?
            .collect::<Result<_, _>>()?;
        Ok(pages)
    }

    /// Saves the loop's state: both pools synced (`sync_fingerprints`) and the
    /// representatives' history (`save_representatives`), in one transaction.
    pub fn save_discovery_state(
        &mut self,
        state: &DiscoveryState,
        at_ms: i64,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        sync_fingerprints(&tx, FingerprintPool::Ferret, &state.ferret, at_ms)?;
        sync_fingerprints(&tx, FingerprintPool::Filter, &state.filters, at_ms)?;
        save_representatives(&tx, &state.representatives, at_ms)?;
        tx.commit()?;
        Ok(())
    }

    /// The loop's state in use: both pools (their bodies, counts and creation times) and
    /// every representative's history.
    pub fn load_discovery_state(&self) -> Result<DiscoveryState, StoreError> {
        let pool = |pool| -> Result<Vec<FingerprintState>, StoreError> {
            let mut query = self.conn.prepare(
                "SELECT json_extract(body, '$.id'), body, created_at_ms, fetched, approved,
                        reliability
                 FROM fingerprints WHERE pool = ?1 AND flushed_at_ms IS NULL ORDER BY id",
            )?;
            let rows = query
                .query_map([FingerprintPool::name(pool)], |row| {
                    Ok(FingerprintState {
                        ident: row.get::<_, Option<i64>>(0)?.unwrap_or(0) as u64,
                        body: row.get(1)?,
                        created_at_ms: row.get(2)?,
                        fetched: row.get::<_, i64>(3)? as u64,
                        approved: row.get::<_, i64>(4)? as u64,
                        reliability: row.get(5)?,
                    })
                })?
                .collect::<Result<_, _>>()?;
            Ok(rows)
        };
        Ok(DiscoveryState {
            ferret: pool(FingerprintPool::Ferret)?,
            filters: pool(FingerprintPool::Filter)?,
            representatives: self
                .load_representatives()?
                .into_iter()
                .map(|(url, r)| {
                    let count = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
                    (
                        url,
                        RepresentativeHistory {
                            times: count(r.times_chosen),
                            fetched: count(r.fetched),
                            accepted: count(r.accepted),
                        },
                    )
                })
                .collect(),
        })
    }

    /// The fingerprints of `pool` in id order: those in use, or all of them.
    pub fn load_fingerprints(
        &self,
        pool: FingerprintPool,
        include_flushed: bool,
    ) -> Result<Vec<StoredFingerprint>, StoreError> {
        let mut query = self.conn.prepare(
            "SELECT id, body, created_at_ms, fetched, approved, reliability, flushed_at_ms
             FROM fingerprints WHERE pool = ?1 AND (?2 OR flushed_at_ms IS NULL)
             ORDER BY id",
        )?;
        let fingerprints = query
            .query_map(params![pool.name(), include_flushed], |row| {
                Ok(StoredFingerprint {
                    id: row.get(0)?,
                    pool,
                    body: row.get(1)?,
                    created_at_ms: row.get(2)?,
                    fetched: row.get::<_, i64>(3)? as u64,
                    approved: row.get::<_, i64>(4)? as u64,
                    reliability: row.get(5)?,
                    flushed_at_ms: row.get(6)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(fingerprints)
    }

    /// Every page ever chosen as a representative, by URL.
    pub fn load_representatives(&self) -> Result<Vec<(String, Representative)>, StoreError> {
        let mut query = self.conn.prepare(
            "SELECT url, times_chosen, fetched, accepted, last_at_ms FROM representatives
             ORDER BY url",
        )?;
        let representatives = query
            .query_map([], |row| {
                Ok((
                    row.get(0)?,
                    Representative {
                        times_chosen: row.get::<_, i64>(1)? as u64,
                        fetched: row.get::<_, i64>(2)? as u64,
                        accepted: row.get::<_, i64>(3)? as u64,
                        last_at_ms: row.get(4)?,
                    },
                ))
            })?
            .collect::<Result<_, _>>()?;
        Ok(representatives)
    }
}
