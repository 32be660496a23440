//! The embedded store: SQLite through rusqlite, in WAL mode, with versioned migrations.
//!
//! Only the PageDb actor opens it for writing (one writer; others go through messages). The
//! schema grows by appending migrations to [`MIGRATIONS`]; the applied version lives in
//! SQLite's `user_version`, so an older binary refuses a newer database instead of corrupting
//! it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection};
use rusqlite_migration::{Migrations, M};

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
];

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

    /// Moves the write-ahead log into the database file and truncates it: the flush at
    /// shutdown, so that the database file alone is complete.
    pub fn checkpoint(&self) -> Result<(), StoreError> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
    }
}
