//! The embedded store: SQLite through rusqlite, in WAL mode, with versioned migrations.
//!
//! Inside the daemon only the PageDb actor opens it (one writer; other roles go through
//! messages). The feedback commands (`ferret like`, `ferret feedback`, `ferret import-likes`)
//! open it too, with or without a daemon running: WAL lets them write beside it, and the busy
//! timeout makes a writer wait for the other's transaction. The schema grows by appending migrations to [`MIGRATIONS`]; the applied version lives in
//! SQLite's `user_version`, so an older binary refuses a newer database instead of corrupting
//! it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use std::sync::Arc;

use ferret::listing::{
    BookEntry, Event, EventKind, Listed, Memory, OnTheSecond, PageCache, TieOrder, UnseenSerials,
};
use ferret::stories::{NewsItem, Placement};
use rusqlite::{params, Connection, OptionalExtension};
use rusqlite_migration::{Migrations, M};

mod discovery;

pub use discovery::{
    DiscoveryState, FingerprintPool, FingerprintState, HittageComputation, PageHittage, PageRecord,
    Representative, StoredFeedback, StoredFingerprint,
};

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The database's directory could not be created.
    #[error("cannot create the directory of {path}: {source}")]
    CreateDir {
        /// The database file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The database could not be opened or configured.
    #[error("cannot open {path}: {source}")]
    Open {
        /// The database file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The schema could not be brought up to date (or the file is from a newer ferret).
    #[error("cannot migrate {path}: {source}")]
    Migrate {
        /// The database file.
        path: PathBuf,
        /// The migration error.
        source: rusqlite_migration::Error,
    },
    /// A query failed.
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
}

/// The schema, one migration per version. Append; never edit a released one.
const MIGRATIONS: &[M<'static>] = &[
    // 1: the daemon's own records.
    M::up(
        "CREATE TABLE runs (
            id          INTEGER PRIMARY KEY,
            version     TEXT    NOT NULL,
            started_ms  INTEGER NOT NULL,
            -- NULL until a clean shutdown: a run left NULL crashed, was killed or escalated.
            stopped_ms  INTEGER
        );
        CREATE TABLE restarts (
            id        INTEGER PRIMARY KEY,
            at_ms     INTEGER NOT NULL,
            role      TEXT    NOT NULL,
            instance  INTEGER NOT NULL,
            cause     TEXT    NOT NULL
        );
        CREATE INDEX restarts_by_role ON restarts (role, at_ms);",
    ),
    // 2: live listings: the broadcasts believed on air, those reported gone, and the journal
    // of events (until 16 every event, an emitted one marked; since, the events not yet in
    // the events file and on stdout, and the `emitted` column is gone).
    M::up(
        "CREATE TABLE listing_onair (
            listing  TEXT    NOT NULL,
            id       TEXT    NOT NULL,
            key_ms   INTEGER NOT NULL,
            title    TEXT    NOT NULL,
            link     TEXT    NOT NULL,
            seen_ms  INTEGER NOT NULL,
            PRIMARY KEY (listing, id)
        ) WITHOUT ROWID;
        CREATE TABLE listing_gone (
            listing  TEXT    NOT NULL,
            id       TEXT    NOT NULL,
            at_ms    INTEGER NOT NULL,
            PRIMARY KEY (listing, id)
        ) WITHOUT ROWID;
        CREATE TABLE listing_events (
            seq      INTEGER PRIMARY KEY,
            listing  TEXT    NOT NULL,
            line     TEXT    NOT NULL,
            emitted  INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX listing_events_pending ON listing_events (listing) WHERE emitted = 0;",
    ),
    // 3: news items filed into stories, in arrival order (the clusterer is rebuilt from them).
    M::up(
        "CREATE TABLE news_items (
            seq           INTEGER PRIMARY KEY,
            source        TEXT    NOT NULL,
            id            TEXT    NOT NULL,
            title         TEXT    NOT NULL,
            link          TEXT    NOT NULL,
            published_ms  INTEGER NOT NULL,
            text          TEXT    NOT NULL,
            UNIQUE (source, id)
        );
        CREATE INDEX news_items_by_time ON news_items (published_ms);",
    ),
    // 4: discovery: the page map (pages and links, placeholders for link targets not yet
    // fetched), the user's feedback, the Generalizer's hittage computations (the last few),
    // the fingerprint pools and the representatives' history.
    M::up(
        "CREATE TABLE pages (
            id                  INTEGER PRIMARY KEY,
            url                 TEXT    NOT NULL UNIQUE,
            canonical_url       TEXT,
            title               TEXT,
            lang                TEXT,
            size                INTEGER,
            -- NULL for a placeholder: a link target not fetched yet.
            fetched_at_ms       INTEGER,
            attributes          TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(attributes)),
            accepted            INTEGER NOT NULL DEFAULT 0,
            approved_by_filter  TEXT
        );
        CREATE INDEX pages_by_fetch ON pages (fetched_at_ms) WHERE fetched_at_ms IS NOT NULL;
        CREATE TABLE links (
            from_id  INTEGER NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
            to_id    INTEGER NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
            PRIMARY KEY (from_id, to_id)
        ) WITHOUT ROWID;
        CREATE INDEX links_by_target ON links (to_id);
        CREATE TABLE feedback (
            id       INTEGER PRIMARY KEY,
            url      TEXT    NOT NULL,
            kind     TEXT    NOT NULL CHECK (kind IN ('visit', 'dwell', 'like', 'dislike')),
            seconds  REAL,
            at_ms    INTEGER NOT NULL
        );
        CREATE INDEX feedback_by_url ON feedback (url);
        CREATE TABLE hittage_computations (
            computation  INTEGER PRIMARY KEY,
            at_ms        INTEGER NOT NULL
        );
        CREATE TABLE hittage (
            computation  INTEGER NOT NULL
                         REFERENCES hittage_computations (computation) ON DELETE CASCADE,
            url          TEXT    NOT NULL,
            value        REAL    NOT NULL,
            lighthouse   INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (computation, url)
        ) WITHOUT ROWID;
        CREATE TABLE fingerprints (
            id             INTEGER PRIMARY KEY,
            pool           TEXT    NOT NULL CHECK (pool IN ('ferret', 'filter')),
            body           TEXT    NOT NULL CHECK (json_valid(body)),
            created_at_ms  INTEGER NOT NULL,
            fetched        INTEGER NOT NULL DEFAULT 0,
            approved       INTEGER NOT NULL DEFAULT 0,
            reliability    REAL    NOT NULL DEFAULT 1.0,
            flushed_at_ms  INTEGER
        );
        CREATE INDEX fingerprints_live ON fingerprints (pool) WHERE flushed_at_ms IS NULL;
        CREATE TABLE representatives (
            url           TEXT    PRIMARY KEY,
            times_chosen  INTEGER NOT NULL,
            last_at_ms    INTEGER NOT NULL
        ) WITHOUT ROWID;",
    ),
    // 5: a representative's history counts the pages its fingerprints fetched and those the
    // filters accepted, so that a restarted loop ranks representatives as before.
    M::up(
        "ALTER TABLE representatives ADD COLUMN fetched INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE representatives ADD COLUMN accepted INTEGER NOT NULL DEFAULT 0;",
    ),
    // 6: where each news item sits: its event and story (as GET /api/stories names them),
    // and the item it is a near-copy of.
    M::up(
        "ALTER TABLE news_items ADD COLUMN event TEXT;
        ALTER TABLE news_items ADD COLUMN story TEXT;
        ALTER TABLE news_items ADD COLUMN duplicate_of TEXT;
        CREATE INDEX news_items_by_story ON news_items (story, event);",
    ),
    // 7: a fetched page keeps the ferret fingerprints' verdict, approved or not (the seed's
    // cache of every fetched page); a page a filter passed was approved first.
    M::up(
        "ALTER TABLE pages ADD COLUMN approved INTEGER NOT NULL DEFAULT 0;
        UPDATE pages SET approved = 1 WHERE approved_by_filter IS NOT NULL;",
    ),
    // 8: which ferret fingerprint approved a page first, so that a page the vote discarded
    // can be voted on again by the filters of a resumed loop.
    M::up("ALTER TABLE pages ADD COLUMN approved_by_fingerprint TEXT;"),
    // 9: a news item's language as its feed declared it, so that a replay stems it as the
    // first filing did.
    M::up("ALTER TABLE news_items ADD COLUMN language TEXT;"),
    // 10: when a listing's latest reads started, so that a restarted detector counts them
    // against its budget (an hour of the listing's clock of them; older ones are deleted).
    M::up(
        "CREATE TABLE listing_reads (
            listing  TEXT    NOT NULL,
            at_ms    INTEGER NOT NULL
        );
        CREATE INDEX listing_reads_by_time ON listing_reads (listing, at_ms);",
    ),
    // 11: what a listing's detector had learnt beyond its book as of its latest read
    // (ferret's sweep: its latest round, share and saved tokens), so that a restarted
    // detector goes on where it stopped.
    M::up(
        "CREATE TABLE listing_memory (
            listing         TEXT    PRIMARY KEY,
            round_at_ms     INTEGER,
            sweep_share     REAL    NOT NULL,
            sweep_empty_ms  INTEGER
        );",
    ),
    // 12: where a listing without a total ended, as its detector last saw it, so that a
    // restarted detector knows how far its list reaches.
    M::up("ALTER TABLE listing_memory ADD COLUMN end_offset INTEGER;"),
    // 13: how late after their boundaries a listing was seen to end frames, so that a
    // restarted detector does not take late ends for extensions until it sees one again.
    M::up("ALTER TABLE listing_memory ADD COLUMN frame_lateness_ms INTEGER NOT NULL DEFAULT 0;"),
    // 14: what a listing's pages showed of its order among equal keys, so that a restarted
    // detector does not hold back the Off Airs that order proves until it is shown again.
    M::up(
        "CREATE TABLE listing_ties (
            listing        TEXT    PRIMARY KEY,
            larger_first   INTEGER NOT NULL,
            smaller_first  INTEGER NOT NULL
        );",
    ),
    // 15: what a listing's pages showed of whether it ends frames on the second its keys give,
    // so that a restarted detector does not learn it anew.
    M::up(
        "ALTER TABLE listing_memory ADD COLUMN frame_outlived INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE listing_memory ADD COLUMN frame_broken INTEGER NOT NULL DEFAULT 0;",
    ),
    // 16: the journal of events keeps only the events not yet emitted (the events file has
    // the others); until this version it kept every event ever reported, marked.
    M::up(
        "DELETE FROM listing_events WHERE emitted = 1;
        DROP INDEX listing_events_pending;
        ALTER TABLE listing_events DROP COLUMN emitted;
        CREATE INDEX listing_events_by_listing ON listing_events (listing);",
    ),
    // 17: the tokens of a listing detector's main bucket, so that a restarted detector does
    // not start it full and spend its burst on top of the budget.
    M::up("ALTER TABLE listing_memory ADD COLUMN budget_empty_ms INTEGER;"),
    // 18: how many of a listing's serials its detector counted and how many of them went
    // unseen, so that a restarted detector on a listing whose numbers have holes does not
    // aim its rounds at them until it has counted again.
    M::up(
        "ALTER TABLE listing_memory ADD COLUMN serials_counted INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE listing_memory ADD COLUMN serials_unseen INTEGER NOT NULL DEFAULT 0;",
    ),
    // 19: what a listing's page 1 showed of a cache, so that a restarted detector behind one
    // does not take the pages the cache kept from before the restart as rendered at its reads.
    M::up(
        "ALTER TABLE listing_memory ADD COLUMN cache_repeats INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE listing_memory ADD COLUMN cache_unchanged_ms INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE listing_memory ADD COLUMN cache_changed_ms INTEGER NOT NULL
            DEFAULT 9223372036854775807;",
    ),
    // 20: what else pages 1 and 2 showed of a cache (its busy repeats, and whether it gives
    // its answers' age), so that a restarted detector behind a cache other readers fill does not
    // take that cache's copies as rendered at its reads until page 1 shows it again.
    M::up(
        "ALTER TABLE listing_memory ADD COLUMN cache_busy_repeats INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE listing_memory ADD COLUMN cache_busy_unchanged_ms INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE listing_memory ADD COLUMN cache_aged INTEGER NOT NULL DEFAULT 0;",
    ),
];

/// What the store keeps of one listing: enough to resume its detector after any stop.
#[derive(Debug, Clone, Default)]
pub struct ListingState {
    /// The broadcasts believed on air, each with the start of the latest read that showed it.
    pub on_air: Vec<BookEntry>,
    /// The ids reported Off Air, with the time of the report.
    pub gone: Vec<(Arc<str>, i64)>,
    /// Events recorded but not known to be emitted: `(seq, line)`, oldest first.
    pub pending: Vec<(i64, String)>,
    /// When the latest reads started (Unix ms, oldest first): the budget counts them.
    pub reads: Vec<i64>,
    /// What the detector had learnt beyond its book as of its latest read.
    pub memory: Option<Memory>,
    /// What the listing's pages had shown of its order among equal keys as of its latest read.
    pub ties: TieOrder,
}

/// One detection to record: the event and its JSON line.
#[derive(Debug, Clone)]
pub struct Detection {
    /// The event.
    pub event: Event,
    /// Its JSON line, as it will be emitted.
    pub line: String,
}

/// The migrations, for tests that check them.
pub fn migrations() -> Migrations<'static> {
    Migrations::from_slice(MIGRATIONS)
}

/// An open store.
pub struct Store {
    conn: Connection,
}

impl Store {
    /// Opens (creating if needed) the database at `path`, switches it to WAL and applies any
    /// pending migrations.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                path: path.to_path_buf(),
                source,
            })?;
        }
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        let mut conn = Connection::open(path).map_err(open_err)?;
        conn.busy_timeout(Duration::from_secs(5))
            .map_err(open_err)?;
        // WAL: readers never block the writer, and a commit is one sequential append.
        // synchronous=NORMAL is durable against process crashes (kill -9) in WAL mode.
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(open_err)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(open_err)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(open_err)?;
        migrations()
            .to_latest(&mut conn)
            .map_err(|source| StoreError::Migrate {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Store { conn })
    }

    /// The schema version (number of migrations applied).
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        Ok(self
            .conn
            .pragma_query_value(None, "user_version", |row| row.get(0))?)
    }

    /// The journal mode SQLite reports (`wal` once open).
    pub fn journal_mode(&self) -> Result<String, StoreError> {
        Ok(self
            .conn
            .pragma_query_value(None, "journal_mode", |row| row.get(0))?)
    }

    /// Records a run's start; returns its id.
    pub fn record_run_started(&self, version: &str, at_ms: i64) -> Result<i64, StoreError> {
        self.conn.execute(
            "INSERT INTO runs (version, started_ms) VALUES (?1, ?2)",
            params![version, at_ms],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Records a run's clean end.
    pub fn record_run_stopped(&self, run_id: i64, at_ms: i64) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE runs SET stopped_ms = ?2 WHERE id = ?1",
            params![run_id, at_ms],
        )?;
        Ok(())
    }

    /// Records one restart.
    pub fn record_restart(
        &self,
        role: &str,
        instance: usize,
        cause: &str,
        at_ms: i64,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO restarts (at_ms, role, instance, cause) VALUES (?1, ?2, ?3, ?4)",
            params![at_ms, role, instance as i64, cause],
        )?;
        Ok(())
    }

    /// Restarts recorded over all runs.
    pub fn count_restarts(&self) -> Result<u64, StoreError> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM restarts", [], |row| row.get(0))?;
        Ok(n as u64)
    }

    /// Runs recorded, and how many of them ended cleanly.
    pub fn count_runs(&self) -> Result<(u64, u64), StoreError> {
        let (all, clean): (i64, i64) =
            self.conn
                .query_row("SELECT count(*), count(stopped_ms) FROM runs", [], |row| {
                    Ok((row.get(0)?, row.get(1)?))
                })?;
        Ok((all as u64, clean as u64))
    }

    /// Everything kept of `listing`.
    pub fn load_listing(&self, listing: &str) -> Result<ListingState, StoreError> {
        let mut state = ListingState::default();
        let mut on_air = self.conn.prepare(
            "SELECT id, key_ms, title, link, seen_ms FROM listing_onair WHERE listing = ?1",
        )?;
        for row in on_air.query_map([listing], |row| {
            let item = Listed {
                id: Arc::from(row.get::<_, String>(0)?),
                key: row.get(1)?,
                title: Arc::from(row.get::<_, String>(2)?),
                link: Arc::from(row.get::<_, String>(3)?),
            };
            Ok(BookEntry::restored(item, row.get(4)?))
        })? {
            state.on_air.push(row?);
        }
        let mut gone = self
            .conn
            .prepare("SELECT id, at_ms FROM listing_gone WHERE listing = ?1")?;
        for row in gone.query_map([listing], |row| {
            Ok((Arc::from(row.get::<_, String>(0)?), row.get(1)?))
        })? {
            state.gone.push(row?);
        }
        let mut pending = self
            .conn
            .prepare("SELECT seq, line FROM listing_events WHERE listing = ?1 ORDER BY seq")?;
        for row in pending.query_map([listing], |row| Ok((row.get(0)?, row.get(1)?)))? {
            state.pending.push(row?);
        }
        let mut reads = self
            .conn
            .prepare("SELECT at_ms FROM listing_reads WHERE listing = ?1 ORDER BY at_ms")?;
        for row in reads.query_map([listing], |row| row.get(0))? {
            state.reads.push(row?);
        }
        state.memory = self
            .conn
            .query_row(
                "SELECT round_at_ms, sweep_share, sweep_empty_ms, end_offset, frame_lateness_ms,
                    frame_outlived, frame_broken, budget_empty_ms, serials_counted, serials_unseen,
                    cache_repeats, cache_unchanged_ms, cache_changed_ms, cache_busy_repeats,
                    cache_busy_unchanged_ms, cache_aged
                FROM listing_memory
                WHERE listing = ?1",
                [listing],
                |row| {
                    Ok(Memory {
                        round_at: row.get(0)?,
                        sweep_share: row.get(1)?,
                        sweep_empty_at: row.get(2)?,
                        end_offset: row.get(3)?,
                        frame_lateness: row.get(4)?,
                        frame_ends: OnTheSecond {
                            outlived: row.get(5)?,
                            broken: row.get(6)?,
                        },
                        budget_empty_at: row.get(7)?,
                        unseen_serials: UnseenSerials {
                            counted: row.get(8)?,
                            unseen: row.get(9)?,
                        },
                        page_cache: PageCache {
                            repeats: row.get(10)?,
                            unchanged: row.get(11)?,
                            changed: row.get(12)?,
                            busy_repeats: row.get(13)?,
                            busy_unchanged: row.get(14)?,
                            aged: row.get(15)?,
                        },
                    })
                },
            )
            .optional()?;
        state.ties = self
            .conn
            .query_row(
                "SELECT larger_first, smaller_first FROM listing_ties WHERE listing = ?1",
                [listing],
                |row| {
                    Ok(TieOrder {
                        larger_first: row.get(0)?,
                        smaller_first: row.get(1)?,
                    })
                },
            )
            .optional()?
            .unwrap_or_default();
        Ok(state)
    }

    /// Records that a read of `listing` started at `at` (Unix ms) and showed the broadcasts
    /// `seen` (those on air are proven so since `at`), what the detector had learnt beyond
    /// its book once it took the read (`None` forgets what was kept) and what the pages had
    /// shown of the order among equal keys; reads that started before `forget_before` are
    /// deleted.
    pub fn record_listing_read(
        &mut self,
        listing: &str,
        at: i64,
        seen: &[Arc<str>],
        memory: Option<Memory>,
        ties: TieOrder,
        forget_before: i64,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO listing_reads (listing, at_ms) VALUES (?1, ?2)",
            params![listing, at],
        )?;
        match memory {
            Some(memory) => tx.execute(
                "INSERT OR REPLACE INTO listing_memory
                (listing, round_at_ms, sweep_share, sweep_empty_ms, end_offset, frame_lateness_ms,
                    frame_outlived, frame_broken, budget_empty_ms, serials_counted, serials_unseen,
                    cache_repeats, cache_unchanged_ms, cache_changed_ms, cache_busy_repeats,
                    cache_busy_unchanged_ms, cache_aged)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                    ?17)",
                params![
                    listing,
                    memory.round_at,
                    memory.sweep_share,
                    memory.sweep_empty_at,
                    memory.end_offset,
                    memory.frame_lateness,
                    memory.frame_ends.outlived,
                    memory.frame_ends.broken,
                    memory.budget_empty_at,
                    memory.unseen_serials.counted,
                    memory.unseen_serials.unseen,
                    memory.page_cache.repeats,
                    memory.page_cache.unchanged,
                    memory.page_cache.changed,
                    memory.page_cache.busy_repeats,
                    memory.page_cache.busy_unchanged,
                    memory.page_cache.aged
                ],
            )?,
            None => tx.execute("DELETE FROM listing_memory WHERE listing = ?1", [listing])?,
        };
        tx.execute(
            "INSERT OR REPLACE INTO listing_ties (listing, larger_first, smaller_first)
            VALUES (?1, ?2, ?3)",
            params![listing, ties.larger_first, ties.smaller_first],
        )?;
        let mut sighting = tx.prepare_cached(
            "UPDATE listing_onair SET seen_ms = max(seen_ms, ?3) WHERE listing = ?1 AND id = ?2",
        )?;
        for id in seen {
            sighting.execute(params![listing, &**id, at])?;
        }
        drop(sighting);
        tx.execute(
            "DELETE FROM listing_reads WHERE listing = ?1 AND at_ms < ?2",
            params![listing, forget_before],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Records detections of `listing` in one transaction: the book changes and the event
    /// lines, not yet emitted. Gone ids older than `forget_before` are dropped. Returns the
    /// events' sequence numbers.
    pub fn record_detections(
        &mut self,
        listing: &str,
        detections: &[Detection],
        forget_before: i64,
    ) -> Result<Vec<i64>, StoreError> {
        let tx = self.conn.transaction()?;
        let mut seqs = Vec::with_capacity(detections.len());
        for Detection { event, line } in detections {
            let item = &event.item;
            match event.kind {
                EventKind::OnAir => tx.execute(
                    "INSERT OR REPLACE INTO listing_onair (listing, id, key_ms, title, link, seen_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![listing, &*item.id, item.key, &*item.title, &*item.link, event.at],
                )?,
                EventKind::OffAir => {
                    tx.execute(
                        "DELETE FROM listing_onair WHERE listing = ?1 AND id = ?2",
                        params![listing, &*item.id],
                    )?;
                    tx.execute(
                        "INSERT OR REPLACE INTO listing_gone (listing, id, at_ms) VALUES (?1, ?2, ?3)",
                        params![listing, &*item.id, event.at],
                    )?
                }
            };
            tx.execute(
                "INSERT INTO listing_events (listing, line) VALUES (?1, ?2)",
                params![listing, line],
            )?;
            seqs.push(tx.last_insert_rowid());
        }
        tx.execute(
            "DELETE FROM listing_gone WHERE listing = ?1 AND at_ms < ?2",
            params![listing, forget_before],
        )?;
        tx.commit()?;
        Ok(seqs)
    }

    /// Marks events as emitted: they leave the journal (the events file has them), so that
    /// it holds what a restart must write again and no more, however long the daemon runs.
    pub fn mark_emitted(&mut self, seqs: &[i64]) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        for seq in seqs {
            tx.execute("DELETE FROM listing_events WHERE seq = ?1", [seq])?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Records news items filed into stories, in order; items filed before are ignored.
    /// Items published before `forget_before` are deleted, but for the last `keep_last`
    /// filed (the clusterer's statistics count them: see `StoryBook::kept_for_replay`).
    pub fn record_news_items(
        &mut self,
        items: &[NewsItem],
        placements: &[Placement],
        forget_before: i64,
        keep_last: usize,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        for item in items {
            tx.execute(
                "INSERT OR IGNORE INTO news_items
                     (source, id, title, link, published_ms, text, language)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    item.source,
                    item.id,
                    item.title,
                    item.link,
                    item.published,
                    item.text,
                    item.language
                ],
            )?;
        }
        for placed in placements {
            tx.execute(
                "UPDATE news_items SET event = ?3, story = ?4, duplicate_of = ?5
                 WHERE source = ?1 AND id = ?2",
                params![
                    placed.source,
                    placed.id,
                    placed.event,
                    placed.story,
                    placed.duplicate_of
                ],
            )?;
        }
        // With fewer than `keep_last + 1` items the subquery is NULL, and nothing goes.
        tx.execute(
            "DELETE FROM news_items WHERE published_ms < ?1 AND seq <= (
                 SELECT seq FROM news_items ORDER BY seq DESC LIMIT 1 OFFSET ?2)",
            params![forget_before, keep_last as i64],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Where the kept news items sit (those placed), in filing order.
    pub fn load_placements(&self) -> Result<Vec<Placement>, StoreError> {
        let mut query = self.conn.prepare(
            "SELECT source, id, event, story, duplicate_of FROM news_items
             WHERE event IS NOT NULL AND story IS NOT NULL ORDER BY seq",
        )?;
        let placements = query
            .query_map([], |row| {
                Ok(Placement {
                    source: row.get(0)?,
                    id: row.get(1)?,
                    event: row.get(2)?,
                    story: row.get(3)?,
                    duplicate_of: row.get(4)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(placements)
    }

    /// The news items kept, in the order they were filed.
    pub fn load_news_items(&self) -> Result<Vec<NewsItem>, StoreError> {
        let mut query = self.conn.prepare(
            "SELECT source, id, title, link, published_ms, text, language FROM news_items
             ORDER BY seq",
        )?;
        let items = query
            .query_map([], |row| {
                Ok(NewsItem {
                    source: row.get(0)?,
                    id: row.get(1)?,
                    title: row.get(2)?,
                    link: row.get(3)?,
                    published: row.get(4)?,
                    text: row.get(5)?,
                    language: row.get(6)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(items)
    }

    /// Moves the write-ahead log into the database file and truncates it: the flush at
    /// shutdown, so that the database file alone is complete.
    pub fn checkpoint(&self) -> Result<(), StoreError> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
    }
}
